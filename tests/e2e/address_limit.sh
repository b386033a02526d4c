#!/usr/bin/env bash
# Planning commands under an address-space limit (Lab's memory limit is one,
# ulimit -v another) finish: OpenBLAS's pthreads build would start a worker per
# core at load, each reserving buffers, and with too little address space those
# workers looped in mmap for good (a hang; on a many-core host even under Lab's
# 8 GiB).  The commands that plan run it on one thread (src/cli/cli.c).
. "$(dirname "$0")/lib.bash"
cd "$(dirname "$0")/../.."
grep -qa __asan_init "$NS" && { echo "sanitizer build: ASan reserves more address space than any limit"; exit 77; }
"$NS" gen blocksworld --seed 1 --blocks 8 -o "$TMP/p.pddl" || fail gen
lim() { (ulimit -v 120000; timeout 20 "$NS" "$@"); }
lim solve domains/blocksworld/domain.pddl "$TMP/p.pddl" --search gbfs --plan-file "$TMP/plan" >"$TMP/out" 2>&1 ||
    { cat "$TMP/out"; fail "solve under ulimit -v 120000"; }
lim validate domains/blocksworld/domain.pddl "$TMP/p.pddl" "$TMP/plan" >"$TMP/out" 2>&1 ||
    { cat "$TMP/out"; fail "validate under ulimit -v 120000"; }
lim gen blocksworld --seed 2 --blocks 5 -o "$TMP/q.pddl" >"$TMP/out" 2>&1 || { cat "$TMP/out"; fail "gen under ulimit -v"; }
# the caller's own thread count is kept (and then nothing runs twice)
OPENBLAS_NUM_THREADS=1 lim solve domains/blocksworld/domain.pddl "$TMP/q.pddl" >/dev/null 2>&1 || fail "solve with OPENBLAS_NUM_THREADS set"
echo ok
