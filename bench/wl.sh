#!/usr/bin/env bash
# WL features: nextstate against WLPlan (PyPI `wlplan` 2.1.0) on the same states.
#
# For each first-paper domain (../shared/benchmarks/seedA) it rebuilds the
# plan trajectories of every split, fits the vocabulary on the training
# trajectories (this reproduces the paper's *_wl.json exactly; written in
# WLPlan's key spelling so the PyPI wheel can load it — the wheel cannot read
# the paper's own spelling), then encodes all states with nextstate (best of
# BENCH_REPEAT passes, WL only: graph building + refinement, no file I/O) and
# with WLPlan (bench/wl_ref.py: the same states, the same vocabulary), and
# compares every feature.  Statics are in, as in the paper's training data.
# Prints a table and writes results/bench_wl.{tsv,json}.
#   BENCH_REPEAT=5 bench/wl.sh       (default 3; WLPlan stops repeating after 20 s)
#   BENCH_QUICK=1 bench/wl.sh        train and validation splits only (~3 minutes; the full
#                                    run takes ~10 minutes, mostly WLPlan on VisitAll's
#                                    35k extrapolation states)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BIN=$BUILD/nextstate
PY=${PYTHON:-python3}
REPEAT=${BENCH_REPEAT:-3}
SEED=${NEXTSTATE_BENCHMARKS:-../shared/benchmarks}/seedA
[ -d "$SEED" ] || { echo "bench/wl.sh: $SEED not found" >&2; exit 1; }
[ -x "$BIN" ] || make -s "$BIN"
if ! "$PY" -c 'import wlplan' 2>/dev/null; then
    echo "bench/wl.sh: installing wlplan with pip" >&2
    "$PY" -m pip install -q wlplan==2.1.0 || "$PY" -m pip install -q --user --break-system-packages wlplan==2.1.0
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p results
TSV=results/bench_wl.tsv
JSON=results/bench_wl.json
printf 'domain\tstates\tfeatures\tnextstate_s\tnextstate_states_per_s\twlplan_s\twlplan_states_per_s\tratio\tequal\tfit_identical\n' >"$TSV"
echo "[" >"$JSON"
first=1
printf '%-26s %7s %5s %14s %14s %7s %6s %s\n' domain states D "nextstate st/s" "wlplan st/s" ratio equal "fit identical"
for dom in blocks gripper logistics visitall-from-everywhere; do
    D=$SEED/pddl/$dom/domain.pddl
    V=$TMP/$dom.vocab.json
    "$BIN" encode --plans "$D" "$SEED/pddl/$dom/train" "$SEED/plans/$dom/train" --encoder wl --fit \
        --key-format triples --vocab-out "$V" --states-out "$TMP/$dom.fit.jsonl" -o "$TMP/$dom.fit" --quiet
    states=() outs=()
    ours_n=0 ours_s=0
    splits="train validation test-interpolation test-extrapolation"
    [ -z "${BENCH_QUICK:-}" ] || splits="train validation"
    for split in $splits; do
        [ -d "$SEED/plans/$dom/$split" ] || continue
        out=$TMP/$dom.$split
        "$BIN" encode --plans "$D" "$SEED/pddl/$dom/$split" "$SEED/plans/$dom/$split" --encoder wl --vocab "$V" \
            --repeat "$REPEAT" --states-out "$out.jsonl" -o "$out" 2>"$out.log"
        # "... N states of K plans, D features (wl) in S s: R states/s; wrote ..."
        line=$(grep 'states/s' "$out.log")
        n=$(echo "$line" | sed -E 's/.*: ([0-9]+) states of.*/\1/')
        s=$(echo "$line" | sed -E 's/.* in ([0-9.e+-]+) s:.*/\1/')
        ours_n=$((ours_n + n))
        ours_s=$(awk -v a="$ours_s" -v b="$s" 'BEGIN { printf "%.9f", a + b }')
        states+=("$out.jsonl")
        outs+=("$out")
    done
    ref=$("$PY" bench/wl_ref.py --vocab "$V" --states "${states[@]}" --ours "${outs[@]}" --repeat "$REPEAT" \
        --fit-states "$TMP/$dom.fit.jsonl" --fit-vocab "$V")
    read -r nfeat wl_s wl_rate equal fit_id < <(echo "$ref" | "$PY" -c '
import json, sys
r = json.load(sys.stdin)
print(r["features"], min(r["wlplan_per_state_s"], r["wlplan_batch_s"]), r["wlplan_states_per_s"], r["equal"], r.get("fit_identical"))')
    ours_rate=$(awk -v n="$ours_n" -v s="$ours_s" 'BEGIN { printf "%.0f", n / s }')
    ratio=$(awk -v a="$ours_rate" -v b="$wl_rate" 'BEGIN { printf "%.1f", a / b }')
    printf '%-26s %7d %5d %14s %14.0f %6sx %6s %s\n' "$dom" "$ours_n" "$nfeat" "$ours_rate" "$wl_rate" "$ratio" "$equal" "$fit_id"
    printf '%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$dom" "$ours_n" "$nfeat" "$ours_s" "$ours_rate" "$wl_s" "$wl_rate" \
        "$ratio" "$equal" "$fit_id" >>"$TSV"
    [ $first = 1 ] || echo "," >>"$JSON"
    first=0
    echo "{\"domain\": \"$dom\", \"nextstate_states\": $ours_n, \"nextstate_s\": $ours_s, \"nextstate_states_per_s\": $ours_rate, \"ratio\": $ratio, \"wlplan\": $ref}" >>"$JSON"
done
echo "]" >>"$JSON"
echo "wrote $TSV and $JSON"
