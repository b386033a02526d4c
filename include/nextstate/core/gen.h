/* gen.h — random solvable problem generators for the shipped domains, in the
 * style of the standard IPC generators.  Every choice comes from the seed; the
 * same (domain, options, seed) gives the same bytes.
 *
 * Each domain documents its integer size options (name, default, minimum,
 * meaning), e.g. blocksworld: blocks; logistics: cities, size, airplanes,
 * packages; visitall: x, y.  The CLI maps `--NAME VALUE` onto them. */
#ifndef NEXTSTATE_GEN_H
#define NEXTSTATE_GEN_H

#include <stdint.h>
#include "nextstate/util/error.h"
#include "nextstate/util/util.h"

typedef struct ns_gen_option {
    const char *name;
    int def; /* default value */
    int min; /* smallest accepted value */
    const char *help;
} ns_gen_option;

typedef struct ns_gen_arg { /* one option given by the caller */
    const char *name;
    int value;
} ns_gen_arg;

/* Names of the generator domains, NULL-terminated, in a fixed order. */
const char *const *ns_gen_domains(void);
/* The domain's options (terminated by an entry with name NULL); NULL if the
 * domain is unknown. */
const ns_gen_option *ns_gen_options(const char *domain);
/* Writes a PDDL problem named `name` for `domain` into out.  Unknown option
 * names or values below their minimum -> NS_ERR_USAGE. */
ns_status ns_gen_problem(const char *domain, const ns_gen_arg *args, int nargs,
                         uint64_t seed, const char *name, ns_buf *out, ns_error *err);

#endif
