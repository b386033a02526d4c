/* fuzz_json.c — libFuzzer target: JSON parsing (and re-encoding strings). */
#include <stdint.h>
#include "nextstate/util/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_json j;
    ns_error e;
    if (ns_json_parse(&j, (const char *)data, size, "x.json", &e) == NS_OK) ns_json_free(&j);
    return 0;
}
