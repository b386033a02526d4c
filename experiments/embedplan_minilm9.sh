#!/usr/bin/env bash
# The EmbedPlan world model on the nine ACPBench domains with a frozen text
# encoder run in C (all-MiniLM-L6-v2 by default; scripts/fetch_models.sh
# fetches it) next to the built-in bag-of-literals encoder: Interpolation and
# Extrapolation Hit@5 per domain.  Writes OUT/results.json and OUT/results.md.
#   experiments/embedplan_minilm9.sh [OUT]
# env: MODEL (all-MiniLM-L6-v2), EPOCHS (60), LR (1e-3), SEED (1), JOBS (2), TL (10 s per problem)
set -u
BUILD=${BUILD:-build}
NS=${NS_BIN:-$PWD/$BUILD/nextstate}
BENCH=${NEXTSTATE_BENCHMARKS:-../shared/benchmarks}
OUT=${1:-results/embedplan_minilm9}
MODEL=${MODEL:-all-MiniLM-L6-v2}
EPOCHS=${EPOCHS:-60}
LR=${LR:-1e-3}
SEED=${SEED:-1}
JOBS=${JOBS:-2}
TL=${TL:-10}
export OPENBLAS_NUM_THREADS=1
mkdir -p "$OUT"
domains="blocksworld-4ops depots ferry floor-tile gold-miner-typed grid logistics-strips rover satellite"
one_domain() { # ACPBench folder
    local d=$1 dir="$OUT/$1"
    mkdir -p "$dir"
    "$NS" data build "$BENCH/acpbench/$d/domain.pddl" "$BENCH/acpbench/$d" -o "$dir/data" --time-limit "$TL" --quiet 2>"$dir/log" || return 1
    "$NS" embed "$dir/data" --model "$MODEL" --states-out "$dir/states.npy" --actions-out "$dir/actions.npy" --quiet >>"$dir/log" 2>&1 || return 1
    for proto in interpolation extrapolation; do
        "$NS" split "$proto" "$dir/data" -o "$dir/split-$proto" --pool-size 128 --seed "$SEED" 2>>"$dir/log" || return 1
        for enc in builtin text; do
            local sf=builtin af=builtin
            [ "$enc" = text ] && { sf="$dir/states.npy"; af="$dir/actions.npy"; }
            "$NS" train "$dir/split-$proto" -o "$dir/model-$proto-$enc" --state-features "$sf" --action-features "$af" \
                --lr "$LR" --epochs "$EPOCHS" --seed "$SEED" --quiet 2>>"$dir/log" || return 1
            "$NS" eval "$dir/split-$proto" "$dir/model-$proto-$enc" --seed "$SEED" --json --quiet >"$dir/eval-$proto-$enc.json" 2>>"$dir/log" || return 1
        done
    done
}
export -f one_domain; export NS BENCH OUT MODEL EPOCHS LR SEED TL
echo $domains | tr ' ' '\n' | xargs -P "$JOBS" -I{} bash -c 'one_domain {} || echo "FAILED {} (see '"$OUT"'/{}/log)"'
# table
hit5() { sed -E 's/.*"hit@5": ([0-9.]+).*/\1/' "$1" 2>/dev/null | head -c 5; }
{
    echo "# EmbedPlan world model on the nine ACPBench domains ($MODEL vs built-in literals; lr $LR, $EPOCHS epochs, seed $SEED, pools of 128)"
    echo
    echo "| domain | interp. literals | interp. $MODEL | extrap. literals | extrap. $MODEL |"
    echo "|---|---|---|---|---|"
    for d in $domains; do
        echo "| $d | $(hit5 "$OUT/$d/eval-interpolation-builtin.json") | $(hit5 "$OUT/$d/eval-interpolation-text.json") | $(hit5 "$OUT/$d/eval-extrapolation-builtin.json") | $(hit5 "$OUT/$d/eval-extrapolation-text.json") |"
    done
    echo
    echo "Hit@5 (fraction, random tie-breaking). Paper (MPNet, Table 13): see ../shared/papers/001_2d0c90280ff9a76f.txt."
} >"$OUT/results.md"
cat "$OUT/results.md"
