#!/usr/bin/env bash
# The demo on built-in data, the whole story in about two minutes:
#  1. generalized planning: for blocksworld, gripper, visitall and logistics,
#     generate 4–8 small problems, solve them optimally, learn a next-state
#     model (WL features, XGBoost, delta mode — the first paper's best), and
#     plan on generated problems up to ten times larger with the paper's beam
#     decoder and with nextstate's guided search; every plan validated
#     (experiments/generalize.sh → results/demo_generalize/);
#  2. the EmbedPlan world model on generated ferry problems: Hit@k / Acc@k
#     under Interpolation and Extrapolation (results/demo_embedplan/);
#  3. with DEMO_FULL=1, also the classical planners on every shipped domain
#     (GBFS-h^FF and A*-LM-cut, plans validated; results/demo.csv).
set -u
BUILD=${BUILD:-build}
NS="$BUILD/nextstate"
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
mkdir -p results
echo "== Generalized planning from a handful of small problems (results/demo_generalize/results.md) =="
OUT=results/demo_generalize ALGOS="beam guided" BUILD="$BUILD" experiments/generalize.sh >/dev/null \
    2>results/demo_generalize.log || { cat results/demo_generalize.log; exit 1; }
cat results/demo_generalize/results.md
echo

# Part 2: the learned transition model on built-in data — generate ferry
# problems, build the optimal-plan dataset, split (interpolation,
# extrapolation), train the EmbedPlan world model (dev-selected) and rank
# 128-state candidate pools.
echo "== EmbedPlan world model on generated ferry problems (results/demo_embedplan/results.md) =="
rm -rf results/demo_embedplan
LR=1e-3 EPOCHS=${DEMO_EPOCHS:-30} BUILD="$BUILD" bash experiments/embedplan_interp.sh ferry results/demo_embedplan >/dev/null 2>results/demo_embedplan.log ||
    { cat results/demo_embedplan.log; exit 1; }
cat results/demo_embedplan/results.md
[ "${DEMO_FULL:-0}" = 1 ] || exit 0

echo
echo "== Classical planning on every shipped domain (results/demo.csv) =="
N=${DEMO_PROBLEMS:-3}
out=results; mkdir -p "$out"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
csv="$out/demo.csv"
echo "domain,problem,search,status,plan_length,expanded,seconds,valid" >"$csv.tmp"
printf '%-12s %8s | %-22s | %-22s\n' domain problems "GBFS-hFF solved/len" "A*-LM-cut solved/len"
printf '%s\n' "-------------------------------------------------------------------------"
for d in $("$NS" gen --list | grep -v '^ '); do
    declare -A solved=() len=()
    for s in $(seq 1 "$N"); do
        p="$tmp/$d-$s.pddl"
        "$NS" gen "$d" --seed "$s" -o "$p" || exit 1
        for search in gbfs astar; do
            "$NS" solve "domains/$d/domain.pddl" "$p" --search "$search" --time-limit 20 \
                --plan-file "$tmp/plan" --json >"$tmp/json" 2>/dev/null
            rc=$?
            valid=no
            if [ $rc -eq 0 ] && "$NS" validate "domains/$d/domain.pddl" "$p" "$tmp/plan" >/dev/null; then valid=yes; fi
            j=$(cat "$tmp/json")
            get() { sed -E "s/.*\"$1\": \"?([^,\"}]*).*/\1/" <<<"$j"; }
            echo "$d,$d-$s,$search,$(get status),$(get plan_length),$(get expanded),$(get seconds),$valid" >>"$csv.tmp"
            if [ "$valid" = yes ]; then
                solved[$search]=$(( ${solved[$search]:-0} + 1 ))
                len[$search]=$(( ${len[$search]:-0} + $(get plan_length) ))
            fi
        done
    done
    fmt() { local k=$1; local n=${solved[$k]:-0}; if [ "$n" -gt 0 ]; then printf '%d/%d, mean %.1f' "$n" "$N" "$(echo "${len[$k]} / $n" | bc -l)"; else printf '0/%d' "$N"; fi; }
    printf '%-12s %8d | %-22s | %-22s\n' "$d" "$N" "$(fmt gbfs)" "$(fmt astar)"
    unset solved len
done
mv "$csv.tmp" "$csv"
echo "per-problem results: $csv"
