/* fuzz_world.c — libFuzzer target: world-model checkpoints (CRC fixed up). */
#include <stdint.h>
#include "fuzz_file.h"
#include "nextstate/learn/world.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path("w.ckpt");
    if (fuzz_write(path, data, size, 1)) return 0;
    ns_world w;
    ns_error e;
    char *meta = NULL;
    if (ns_world_load(&w, path, &meta, &e) == NS_OK) ns_world_free(&w);
    free(meta);
    unlink(path);
    return 0;
}
