/* fuzz_manifest.c — libFuzzer target: a dataset folder whose manifest.json
 * is the input; its arrays are copied once from $NS_FUZZ_DATASET (a real
 * dataset built by fuzz/run.sh), so mutations of the manifest meet real
 * arrays.  The input is loaded as it is (mostly a checksum mismatch) and
 * then sealed (ns_json_seal), so the mutations also reach the parser and
 * the cross-checks behind the seal. */
#include <stdint.h>
#include <dirent.h>
#include <sys/stat.h>
#include "fuzz_file.h"
#include "nextstate/data/dataset.h"
#include "nextstate/util/json.h"
#include "nextstate/util/util.h"

static void copy_arrays(const char *dir)
{
    const char *src = getenv("NS_FUZZ_DATASET");
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char dir[512];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s", fuzz_path("ds"));
        mkdir(dir, 0755);
        copy_arrays(dir);
    }
    char path[600];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_put(&b, data, size);
    ns_json_seal(&b);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0 ? fuzz_write(path, data, size, 0) : fuzz_write(path, (const uint8_t *)b.data, b.len, 0)) break;
        ns_dataset ds;
        ns_error e;
        if (ns_dataset_load(&ds, dir, &e) == NS_OK) ns_dataset_free(&ds);
    }
    ns_buf_free(&b);
    return 0;
}
