/* fuzz_npy.c — libFuzzer target: .npy decoding. */
#include <stdint.h>
#include "nextstate/util/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_array a;
    ns_error e;
    if (ns_npy_decode(&a, data, size, "x.npy", &e) == NS_OK) {
        ns_buf b;
        ns_buf_init(&b);
        ns_npy_encode(&a, &b);
        ns_buf_free(&b);
        ns_array_free(&a);
    }
    return 0;
}
