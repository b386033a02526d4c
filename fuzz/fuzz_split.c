/* fuzz_split.c — libFuzzer target: a split folder whose split.json is the
 * input; its arrays are copied once from $NS_FUZZ_SPLIT (a real split of
 * the dataset $NS_FUZZ_DATASET, built by fuzz/run.sh), and the split is
 * opened with its datasets and checked against them (ns_split_open).  As in
 * fuzz_manifest, each input is tried as it is and sealed, so mutations reach
 * the cross-checks behind the checksum. */
#include <stdint.h>
#include <sys/stat.h>
#include "fuzz_file.h"
#include "nextstate/data/split.h"
#include "nextstate/util/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char dir[512];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s", fuzz_path("sp"));
        mkdir(dir, 0755);
        fuzz_copy_arrays("NS_FUZZ_SPLIT", dir);
    }
    char path[600];
    snprintf(path, sizeof path, "%s/split.json", dir);
    ns_buf b;
    ns_buf_init(&b);
    ns_buf_put(&b, data, size);
    ns_json_seal(&b);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0 ? fuzz_write(path, data, size, 0) : fuzz_write(path, (const uint8_t *)b.data, b.len, 0)) break;
        ns_split_data sd;
        ns_error e;
        if (ns_split_open(&sd, dir, &e) == NS_OK) ns_split_data_free(&sd);
    }
    ns_buf_free(&b);
    return 0;
}
