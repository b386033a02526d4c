/* fuzz_manifest.c — libFuzzer target: a dataset folder whose manifest.json
 * is the input, beside the arrays of a real dataset ($NS_FUZZ_DATASET,
 * built by fuzz/run.sh), loaded as it is and sealed (fuzz_json_folder). */
#include "fuzz_file.h"
#include "nextstate/data/dataset.h"

static void load(const char *dir)
{
    ns_dataset ds;
    ns_error e;
    if (ns_dataset_load(&ds, dir, &e) == NS_OK) ns_dataset_free(&ds);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_json_folder(data, size, "ds", "NS_FUZZ_DATASET", "manifest.json", load);
    return 0;
}
