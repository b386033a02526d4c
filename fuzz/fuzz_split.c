/* fuzz_split.c — libFuzzer target: a split folder whose split.json is the
 * input, beside the arrays of a real split ($NS_FUZZ_SPLIT, of the dataset
 * $NS_FUZZ_DATASET, built by fuzz/run.sh), opened with its datasets and
 * checked against them (ns_split_open), as it is and sealed
 * (fuzz_json_folder). */
#include "fuzz_file.h"
#include "nextstate/data/split.h"

static void load(const char *dir)
{
    ns_split_data sd;
    ns_error e;
    if (ns_split_open(&sd, dir, &e) == NS_OK) ns_split_data_free(&sd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_json_folder(data, size, "sp", "NS_FUZZ_SPLIT", "split.json", load);
    return 0;
}
