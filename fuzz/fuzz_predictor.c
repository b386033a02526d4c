/* fuzz_predictor.c — libFuzzer target: progress-model (predictor) files
 * (CRC fixed up). */
#include <stdint.h>
#include "fuzz_file.h"
#include "nextstate/learn/predictor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path("m.model");
    if (fuzz_write(path, data, size, 1)) return 0;
    ns_predictor m;
    ns_error e;
    if (ns_predictor_load(&m, path, &e) == NS_OK) ns_predictor_free(&m);
    unlink(path);
    return 0;
}
