/* fuzz_manifest.c — libFuzzer target: a dataset folder whose manifest.json
 * is the input; its arrays are copied once from $NS_FUZZ_DATASET (a real
 * dataset built by fuzz/run.sh), so mutations of the manifest meet real
 * arrays.  The input is loaded as it is (mostly a checksum mismatch) and
 * then sealed (ns_json_seal), so the mutations also reach the parser and
 * the cross-checks behind the seal. */
#include <stdint.h>
#include <sys/stat.h>
#include "fuzz_file.h"
#include "nextstate/data/dataset.h"
#include "nextstate/util/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char dir[512];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s", fuzz_path("ds"));
        mkdir(dir, 0755);
        fuzz_copy_arrays("NS_FUZZ_DATASET", dir);
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
