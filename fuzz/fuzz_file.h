/* fuzz_file.h — for targets whose loader takes a path: the input is written
 * to a per-process file under $TMPDIR (or /tmp). */
#ifndef NS_FUZZ_FILE_H
#define NS_FUZZ_FILE_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>
#include "nextstate/util/npy.h"
#include "nextstate/util/json.h"
#include "nextstate/util/util.h"

static inline const char *fuzz_path(const char *name)
{
    static char path[512];
    if (!path[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/nsfuzz-%ld-%s", t && *t ? t : "/tmp", (long)getpid(), name);
    }
    return path;
}

/* Writes data to path; with fix_crc, the last 4 bytes become the CRC-32 of
 * the rest (as nextstate's checkpoints end; CRC-32C for XGB predictor files,
 * magic "NSPREDXG"), so mutations reach the parser behind the checksum. */
static inline int fuzz_write(const char *path, const uint8_t *data, size_t size, int fix_crc)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    if (fix_crc && size >= 4) {
        uint32_t c = size >= 8 && !memcmp(data, "NSPREDXG", 8) ? ns_crc32c(0, data, size - 4)
                                                               : ns_crc32(0, data, size - 4);
        uint8_t tail[4] = {(uint8_t)c, (uint8_t)(c >> 8), (uint8_t)(c >> 16), (uint8_t)(c >> 24)};
        fwrite(data, 1, size - 4, f);
        fwrite(tail, 1, 4, f);
    } else {
        fwrite(data, 1, size, f);
    }
    fclose(f);
    return 0;
}
/* Copies the .npy files of the folder named by environment variable env
 * into dir (once per process, before the first input). */
static inline void fuzz_copy_arrays(const char *env, const char *dir)
{
    const char *src = getenv(env);
    DIR *d = src ? opendir(src) : NULL;
    if (!d) return;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        size_t n = strlen(ent->d_name);
        if (n < 5 || strcmp(ent->d_name + n - 4, ".npy") != 0) continue;
        char a[1024], b[1024];
        snprintf(a, sizeof a, "%s/%s", src, ent->d_name);
        snprintf(b, sizeof b, "%s/%s", dir, ent->d_name);
        char *buf;
        size_t len;
        ns_error e;
        if (ns_read_file(a, &buf, &len, &e) != NS_OK) continue;
        (void)ns_write_file_atomic(b, buf, len, &e);
        free(buf);
    }
    closedir(d);
}
/* For a folder loader whose JSON metadata file is the input: the first call
 * makes folder `dir` and copies the arrays of $env into it; then the input
 * is written as `file` inside it and load(folder) runs, once as it is
 * (mostly a checksum mismatch) and once sealed (ns_json_seal), so the
 * mutations also reach the parser and the cross-checks behind the seal. */
static inline void fuzz_json_folder(const uint8_t *data, size_t size, const char *dir, const char *env,
                                    const char *file, void (*load)(const char *folder))
{
    static char folder[512];
    if (!folder[0]) {
        snprintf(folder, sizeof folder, "%s", fuzz_path(dir));
        mkdir(folder, 0755);
        fuzz_copy_arrays(env, folder);
    }
    char path[600];
    snprintf(path, sizeof path, "%s/%s", folder, file);
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_put(&b, data, size);
    ns_json_seal(&b);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0 ? fuzz_write(path, data, size, 0) : fuzz_write(path, (const uint8_t *)b.data, b.len, 0)) break;
        load(folder);
    }
    ns_buf_free(&b);
}
#endif
