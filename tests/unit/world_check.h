/* world_check.h — shared by the world-model tests (test_world, test_int4,
 * test_fuse): dense feature rows from a formula, and the check that
 * ns_world_predict1 gives, to the bit, what ns_world_project twice and
 * ns_world_transition give, in whatever precision the model is set to.
 * Include after test.h. */
#ifndef NS_WORLD_CHECK_H
#define NS_WORLD_CHECK_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nextstate/learn/world.h"

/* n rows of d: x_i = sin(a i) + c·cos(0.05 i), row-major, owned by f. */
static inline void world_dense(ns_features *f, int n, int d, float a, float amp, float c)
{
    memset(f, 0, sizeof *f);
    f->nrows = n, f->dim = d;
    f->dense = malloc((size_t)n * d * sizeof(float));
    for (int i = 0; i < n * d; i++) f->dense[i] = amp * sinf(a * (float)i) + c * cosf(0.05f * (float)i);
}

/* Whether predict1 of every (state row s < ns, action row a < na) equals the
 * three calls' output (the model's out wide); its outputs into got[(s·na +
 * a)·out …] when got is not NULL. */
static inline int world_predict1_same(const ns_world *w, ns_world_ws *ws, const ns_features *fs, int64_t ns,
                                      const ns_features *fa, int64_t na, float *got)
{
    int O = w->cfg.out, same = 1;
    float *b = malloc(4 * (size_t)O * sizeof(float)), *hs = b, *ha = b + O, *ref = b + 2 * O, *one = b + 3 * O;
    for (int64_t s = 0; s < ns; s++)
        for (int64_t a = 0; a < na; a++) {
            float *p = got ? got + (s * na + a) * O : one;
            ns_world_project(w, ws, fs, true, &s, 1, hs);
            ns_world_project(w, ws, fa, false, &a, 1, ha);
            ns_world_transition(w, ws, hs, ha, 1, ref);
            ns_world_predict1(w, ws, fs, s, fa, a, p);
            if (memcmp(ref, p, (size_t)O * sizeof(float))) same = 0;
        }
    free(b);
    return same;
}

#endif
