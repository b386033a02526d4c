#!/usr/bin/env bash
# Builds the fuzzers (make fuzz), makes seed corpora at run time from
# domains/, the shared benchmarks and small outputs of nextstate itself (no
# benchmark file is committed), then runs each target for FUZZ_SECONDS
# (default 20) with one job, FUZZ_JOBS (the number of cores) targets at a
# time; any crash, leak or UB finding fails the run.
#   fuzz/run.sh [TARGET…]     FUZZ_SECONDS=300 fuzz/run.sh fuzz_pddl
# FUZZ_CORPUS=DIR keeps the corpora in DIR/<target> between runs (long
# campaigns resume where they stopped); by default they live in a temp dir.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${FUZZ_SECONDS:-20}
BENCH=${NEXTSTATE_BENCHMARKS:-../shared/benchmarks}
make -s fuzz >/dev/null
NS=build/nextstate
[ -x "$NS" ] || make -s "$NS"
# scratch in memory where there is /dev/shm (the file targets write every input)
SHM=/dev/shm; [ -d $SHM ] && [ -w $SHM ] || SHM=${TMPDIR:-/tmp}
W=$(mktemp -d -p "$SHM"); trap 'rm -rf "$W"' EXIT
export TMPDIR=$W OPENBLAS_NUM_THREADS=1
CORPUS=${FUZZ_CORPUS:-$W/corpus}
c() { mkdir -p "$CORPUS/$1"; echo "$CORPUS/$1"; }
# PDDL: domain NUL problem, from every shipped domain and a few benchmarks
i=0
for d in domains/*/domain.pddl $(ls "$BENCH"/*/*/domain.pddl 2>/dev/null | head -20); do
    # small problems only: a 20 kB problem grounds thousands of operators per run
    for p in $(find "$(dirname "$d")" -maxdepth 1 -name '*.pddl' ! -name 'domain*' -size -6k | sort | head -2); do
        { cat "$d"; printf '\0'; cat "$p"; } >"$(c fuzz_pddl)/s$i"; i=$((i + 1))
    done
done
mkdir -p "$W/p"
for s in 1 2 3; do "$NS" gen blocksworld --seed $s --blocks 4 -o "$W/p/b$s.pddl" >/dev/null 2>&1; done
for s in 1 2; do "$NS" gen ferry --seed $s --cars 3 -o "$W/p/f$s.pddl" >/dev/null 2>&1; done
for s in 1 2 3; do
    { cat domains/blocksworld/domain.pddl; printf '\0'; cat "$W/p/b$s.pddl"; } >"$(c fuzz_pddl)/g$s"
done
# plans for the fuzzer's fixed 3-block task
printf '(pick-up b)\n(stack b c)\n(pick-up a)\n(stack a b)\n; cost = 4 (unit cost)\n' >"$(c fuzz_plan)/ok"
printf '(pick-up a)\n(stack a b)\n' >"$(c fuzz_plan)/bad"
printf '(unstack a b)\n(put-down a)\n' >"$(c fuzz_plan)/inapp"
# a dataset, a split, a world checkpoint, progress models and a learned heuristic
"$NS" data build domains/ferry/domain.pddl "$W/p/f1.pddl" "$W/p/f2.pddl" -o "$W/ds" --plans 4 --quiet
"$NS" split interpolation "$W/ds" -o "$W/sp" --pool-size 8 --seed 1 >/dev/null 2>&1 || true
"$NS" train "$W/sp" --epochs 1 --batch 16 --hidden 16 --quiet -o "$W/w.ckpt" >/dev/null 2>&1 || true
"$NS" learn domains/blocksworld/domain.pddl "$W/p" --model lstm --hidden 8 --epochs 1 -o "$W/l.model" --quiet >/dev/null 2>&1 || true
"$NS" learn domains/blocksworld/domain.pddl "$W/p" --model xgb -o "$W/x.model" --quiet >/dev/null 2>&1 || true
"$NS" learn domains/blocksworld/domain.pddl "$W/p" --model hwl -o "$W/h.model" --quiet >/dev/null 2>&1 || true
for f in "$W"/ds/*.npy "$W"/sp/*.npy; do [ -f "$f" ] && cp "$f" "$(c fuzz_npy)/"; done
for f in "$W/ds/manifest.json" "$W/sp/split.json"; do [ -f "$f" ] && cp "$f" "$(c fuzz_json)/"; done
cp "$W/ds/manifest.json" "$(c fuzz_manifest)/"
[ -f "$W/sp/split.json" ] && cp "$W/sp/split.json" "$(c fuzz_split)/"
[ -f "$W/w.ckpt" ] && cp "$W/w.ckpt" "$(c fuzz_world)/"
for f in "$W/l.model" "$W/x.model" "$W/h.model"; do [ -f "$f" ] && cp "$f" "$(c fuzz_predictor)/"; done
c fuzz_world >/dev/null; c fuzz_predictor >/dev/null; c fuzz_split >/dev/null
h='{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[2,1],"data_offsets":[8,12]}}'
{ printf "\\x$(printf %02x ${#h})\\0\\0\\0\\0\\0\\0\\0"; printf '%s' "$h"; head -c 12 /dev/zero; } >"$(c fuzz_safetensors)/s"
export NS_FUZZ_DATASET=$W/ds NS_FUZZ_SPLIT=$W/sp
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_pddl fuzz_plan fuzz_npy fuzz_json fuzz_safetensors fuzz_world fuzz_predictor fuzz_manifest fuzz_split)
# each target on one core, FUZZ_JOBS (default: the number of cores) at a time
fuzz_one() {
    local t=$1 len=65536 rc=0
    mkdir -p "$W/art/$t"
    if [ "$t" = fuzz_pddl ]; then len=16384; fi
    build-fuzz/fuzz/$t -max_total_time="$SECS" -max_len=$len -rss_limit_mb=2048 \
        -artifact_prefix="$W/art/$t/" "$CORPUS/$t" >"$W/$t.log" 2>&1 || rc=$?
    echo $rc >"$W/$t.rc"
}
JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
for t in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    fuzz_one "$t" &
done
wait
status=0
for t in "${targets[@]}"; do
    if [ "$(cat "$W/$t.rc")" = 0 ]; then
        echo "$t: ok, $(grep -Eo 'Done [0-9]+ runs' "$W/$t.log" | tail -1 | grep -Eo '[0-9]+') executions in ${SECS}s"
    else
        status=1
        echo "$t: FINDING"; tail -n 40 "$W/$t.log"
        mkdir -p build-fuzz/findings && cp "$W/art/$t"/* build-fuzz/findings/ 2>/dev/null || true
    fi
done
exit $status
