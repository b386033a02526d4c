/* fuzz_safetensors.c — libFuzzer target: safetensors header and tensors. */
#include <stdint.h>
#include "fuzz_file.h"
#include "nextstate/util/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path("x.safetensors");
    if (fuzz_write(path, data, size, 0)) return 0;
    ns_safetensors st;
    ns_error e;
    if (ns_st_open(&st, path, &e) == NS_OK) {
        for (int i = 0; i < st.n; i++) {
            const ns_st_tensor *t = &st.tensors[i];
            size_t count = 1;
            for (int d = 0; d < t->ndim; d++) count *= (size_t)t->shape[d];
            if (count > (1u << 22)) continue;
            float *out = malloc(sizeof(float) * (count + 1));
            (void)ns_st_read_f32(&st, t->name, t->ndim, t->shape, out, &e);
            free(out);
        }
        ns_st_close(&st);
    }
    unlink(path);
    return 0;
}
