/* fuzz_predictor.c — libFuzzer target: the model files of `plan --model`
 * (CRC fixed up): each input is offered to both loaders, the progress
 * model's (predictor) and the learned heuristic's (hwl), as `plan` may
 * take either. */
#include <stdint.h>
#include "fuzz_file.h"
#include "nextstate/learn/hwl.h"
#include "nextstate/learn/predictor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path("m.model");
    if (fuzz_write(path, data, size, 1)) return 0;
    ns_predictor m;
    ns_error e;
    if (ns_predictor_load(&m, path, &e) == NS_OK) ns_predictor_free(&m);
    ns_hwl h;
    if (ns_hwl_load(&h, path, &e) == NS_OK) ns_hwl_free(&h);
    (void)ns_hwl_sniff(path);
    unlink(path);
    return 0;
}
