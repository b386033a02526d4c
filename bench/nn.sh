#!/usr/bin/env bash
# Layer throughput, nextstate's numerics core vs PyTorch CPU, one thread each
# (OPENBLAS_NUM_THREADS=1, torch.set_num_threads(1)), forward + backward per
# iteration at the papers' sizes; prints milliseconds and the ratio
# nextstate / torch (< 1: nextstate faster).
#   bench/nn.sh              needs the library (make) and python3-torch
#   BENCH_ITERS=50 bench/nn.sh
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PY=${TORCH_PYTHON:-/usr/bin/python3}
ITERS=${BENCH_ITERS:-20}
[ -f "$BUILD/libnextstate.a" ] || make "$BUILD/libnextstate.a" >/dev/null
if ! "$PY" -c 'import torch' 2>/dev/null; then
    echo "bench/nn.sh: PyTorch missing for $PY (apt-get install python3-torch)" >&2
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/nn_bench.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nextstate/learn/nn.h"
#include "nextstate/learn/loss.h"
#include "nextstate/learn/lstm.h"
#include "nextstate/util/util.h"

static float *rnd(size_t n, uint64_t seed)
{
    ns_rng r;
    ns_rng_seed(&r, seed);
    float *x = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) x[i] = (float)(ns_rng_double(&r) * 2 - 1) * 0.1f;
    return x;
}
static float *zero(size_t n) { return calloc(n, sizeof(float)); }

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 20;
    double t;
    { /* linear 1024 -> 128, B = 128 (projection head input layer) */
        int B = 128, C = 1024, O = 128;
        float *x = rnd(B * C, 1), *w = rnd(O * C, 2), *b = rnd(O, 3), *y = zero(B * O), *dy = rnd(B * O, 4);
        float *dx = zero(B * C), *dw = zero(O * C), *db = zero(O);
        t = ns_now();
        for (int i = 0; i < iters; i++) {
            ns_linear_forward(y, x, w, b, B, C, O);
            ns_linear_backward(dx, dw, db, dy, x, w, B, C, O);
        }
        printf("linear %.4f\n", (ns_now() - t) / iters * 1e3);
    }
    { /* sparse input 20000 -> 128, 50 non-zeros a row, B = 128 */
        int B = 128, C = 20000, O = 128, K = 50;
        int64_t *ip = malloc((B + 1) * sizeof(int64_t));
        int32_t *ix = malloc(B * K * sizeof(int32_t));
        float *v = rnd(B * K, 5), *w = rnd((size_t)O * C, 6), *b = rnd(O, 7), *y = zero(B * O), *dy = rnd(B * O, 8);
        float *dw = zero((size_t)O * C), *db = zero(O);
        ns_rng r;
        ns_rng_seed(&r, 9);
        for (int i = 0; i <= B; i++) ip[i] = (int64_t)i * K;
        for (int i = 0; i < B * K; i++) ix[i] = (int32_t)ns_rng_below(&r, C);
        t = ns_now();
        for (int i = 0; i < iters; i++) {
            ns_sparse_linear_forward(y, ip, ix, v, w, b, B, C, O);
            ns_sparse_linear_backward(dw, db, dy, ip, ix, v, B, C, O);
        }
        printf("sparse_linear %.4f\n", (ns_now() - t) / iters * 1e3);
    }
    { /* residual MLP block, B = 128, 128+128 -> 128 -> 128 */
        int B = 128;
        ns_resmlp_dims d = {128, 128, 128, 128};
        ns_resmlp_w w = {rnd(128 * 256, 10), rnd(128, 11), rnd(128 * 128, 12), rnd(128, 13), rnd(128 * 128, 14),
                         rnd(128, 15), rnd(128, 16)};
        ns_resmlp_w g = {zero(128 * 256), zero(128), zero(128 * 128), zero(128), zero(128 * 128), zero(128),
                         zero(128)};
        float *hs = rnd(B * 128, 17), *ha = rnd(B * 128, 18), *y = zero(B * 128), *dy = rnd(B * 128, 19);
        float *dhs = zero(B * 128), *dha = zero(B * 128), *s = zero(ns_resmlp_scratch(B, d));
        t = ns_now();
        for (int i = 0; i < iters; i++) {
            ns_resmlp_forward(y, s, hs, ha, &w, B, d);
            ns_resmlp_backward(dhs, dha, &g, dy, s, hs, &w, B, d);
        }
        printf("resmlp %.4f\n", (ns_now() - t) / iters * 1e3);
    }
    { /* InfoNCE, B = 128, D = 128 */
        int B = 128, D = 128;
        float *p = rnd(B * D, 20), *q = rnd(B * D, 21), *dp = zero(B * D), *dq = zero(B * D);
        float *s = zero(ns_infonce_scratch(B, D));
        t = ns_now();
        for (int i = 0; i < iters; i++) {
            ns_infonce_forward(s, p, q, B, D, 0.07f);
            ns_infonce_backward(dp, dq, 1.0f, s, B, D, 0.07f);
        }
        printf("infonce %.4f\n", (ns_now() - t) / iters * 1e3);
    }
    { /* LSTM: 2 layers, hidden 256, input 128, T = 20, B = 32 */
        ns_lstm_dims d = {2, 128, 256};
        int T = 20, B = 32, H4 = 1024;
        ns_lstm_w w, g;
        for (int k = 0; k < 2; k++) {
            int in = k ? 256 : 128;
            w.w_ih[k] = rnd(H4 * in, 30 + k), w.w_hh[k] = rnd(H4 * 256, 32 + k);
            w.b_ih[k] = rnd(H4, 34 + k), w.b_hh[k] = rnd(H4, 36 + k);
            g.w_ih[k] = zero(H4 * in), g.w_hh[k] = zero(H4 * 256), g.b_ih[k] = zero(H4), g.b_hh[k] = zero(H4);
        }
        float *x = rnd(T * B * 128, 40), *y = zero(T * B * 256), *dy = rnd(T * B * 256, 41);
        float *dx = zero(T * B * 128), *s = zero(ns_lstm_scratch(d, T, B));
        t = ns_now();
        for (int i = 0; i < iters; i++) {
            ns_lstm_forward(y, NULL, NULL, s, x, NULL, NULL, &w, d, T, B);
            ns_lstm_backward(dx, NULL, NULL, &g, dy, NULL, NULL, s, x, NULL, NULL, &w, d, T, B);
        }
        printf("lstm %.4f\n", (ns_now() - t) / iters * 1e3);
    }
    return 0;
}
EOF
cat >"$tmp/nn_bench.py" <<'EOF'
import sys, time
import torch
import torch.nn.functional as F
torch.set_num_threads(1)
iters = int(sys.argv[1])

def timeit(name, fn):
    fn()
    t = time.perf_counter()
    for _ in range(iters):
        fn()
    print(name, "%.4f" % ((time.perf_counter() - t) / iters * 1e3))

r = lambda *s: (torch.rand(*s) * 2 - 1) * 0.1
x = r(128, 1024).requires_grad_(); lin = torch.nn.Linear(1024, 128); dy = r(128, 128)
timeit("linear", lambda: torch.autograd.backward(lin(x), dy))

K, C = 50, 20000
rows = torch.arange(128).repeat_interleave(K)
cols = torch.randint(0, C, (128 * K,))
sp = torch.sparse_coo_tensor(torch.stack([rows, cols]), r(128 * K), (128, C)).coalesce()
W = r(128, C).requires_grad_(); b = r(128).requires_grad_()
timeit("sparse_linear", lambda: torch.autograd.backward(torch.sparse.mm(sp, W.t()) + b, dy))

class ResMLP(torch.nn.Module):
    def __init__(s):
        super().__init__()
        s.l1, s.l2 = torch.nn.Linear(256, 128), torch.nn.Linear(128, 128)
        s.res, s.ln = torch.nn.Linear(128, 128, bias=False), torch.nn.LayerNorm(128)
    def forward(s, hs, ha):
        return s.ln(s.l2(F.gelu(s.l1(torch.cat([hs, ha], 1)))) + s.res(hs))
m = ResMLP(); hs = r(128, 128).requires_grad_(); ha = r(128, 128).requires_grad_()
timeit("resmlp", lambda: torch.autograd.backward(m(hs, ha), dy))

p = r(128, 128).requires_grad_(); q = r(128, 128).requires_grad_(); lab = torch.arange(128)
timeit("infonce", lambda: F.cross_entropy(F.normalize(p, dim=-1) @ F.normalize(q, dim=-1).t() / 0.07, lab).backward())

lstm = torch.nn.LSTM(128, 256, num_layers=2); xs = r(20, 32, 128).requires_grad_(); dys = r(20, 32, 256)
timeit("lstm", lambda: torch.autograd.backward(lstm(xs)[0], dys))
EOF
BLAS_CFLAGS=$(pkg-config --cflags openblas 2>/dev/null || echo -I/usr/include/x86_64-linux-gnu/openblas-pthread)
LIBS="-lm"
if nm "$BUILD/libnextstate.a" 2>/dev/null | grep -q cblas_sgemm; then LIBS="-lopenblas -lm"; fi
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude $BLAS_CFLAGS -o "$tmp/nn_bench" "$tmp/nn_bench.c" \
    "$BUILD/libnextstate.a" $LIBS
OPENBLAS_NUM_THREADS=1 "$tmp/nn_bench" "$ITERS" >"$tmp/c.txt"
OMP_NUM_THREADS=1 "$PY" "$tmp/nn_bench.py" "$ITERS" >"$tmp/t.txt"
echo "forward + backward, ms per iteration, one thread ($ITERS iterations)"
printf '%-14s %12s %12s %8s\n' layer nextstate torch ratio
join <(sort "$tmp/c.txt") <(sort "$tmp/t.txt") | while read -r name c t; do
    printf '%-14s %12.3f %12.3f %8.2f\n' "$name" "$c" "$t" "$(echo "$c / $t" | bc -l)"
done
