#!/usr/bin/env bash
# EmbedPlan world model on one domain: generate problems, build the dataset,
# make an Interpolation and an Extrapolation split, train (dev-selected) and
# evaluate on the test lists.  Writes OUT/results.json, OUT/results.md, OUT/hitk.png and OUT/curves.png.
#   experiments/embedplan_interp.sh [DOMAIN] [OUT]
# env: SEEDS (problem seeds, default "1 2 3 4 5 6 7 8"), GEN_OPTS (generator
#      options, default for ferry "--cars 5"), PLANS (16), EPOCHS (200),
#      LR (4e-5, the paper's; a larger one such as 1e-3 trains faster on CPU),
#      TRAIN_OPTS (extra `nextstate train` options), STATE_FEATURES /
#      ACTION_FEATURES (default builtin), PROTOCOLS ("interpolation extrapolation").
set -eu
DOMAIN=${1:-ferry}
OUT=${2:-results/embedplan_$DOMAIN}
SEEDS=${SEEDS:-1 2 3 4 5 6 7 8}
case $DOMAIN in
    ferry) DEF_OPTS="--cars 5" ;;
    blocksworld) DEF_OPTS="--blocks 5" ;;
    gripper) DEF_OPTS="--balls 4" ;;
    logistics) DEF_OPTS="--packages 3" ;;
    *) DEF_OPTS="" ;;
esac
GEN_OPTS=${GEN_OPTS:-$DEF_OPTS}
PLANS=${PLANS:-16}
EPOCHS=${EPOCHS:-200}
LR=${LR:-4e-5}
TRAIN_OPTS=${TRAIN_OPTS:-}
SF=${STATE_FEATURES:-builtin}
AF=${ACTION_FEATURES:-builtin}
PROTOCOLS=${PROTOCOLS:-interpolation extrapolation}
. "$(dirname "$0")/lib.sh"
mkdir -p "$OUT/problems"
for s in $SEEDS; do
    # shellcheck disable=SC2086
    "$NS" gen "$DOMAIN" --seed "$s" $GEN_OPTS -o "$OUT/problems/p$s.pddl"
done
"$NS" data build "$NS_ROOT/domains/$DOMAIN/domain.pddl" "$OUT/problems" -o "$OUT/dataset" --plans "$PLANS" --quiet
"$NS" data info "$OUT/dataset" | head -n 2
json="$OUT/results.json"
md="$OUT/results.md"
echo "{\"domain\": \"$DOMAIN\", \"gen_opts\": \"$GEN_OPTS\", \"plans\": $PLANS, \"epochs\": $EPOCHS, \"lr\": $LR, \"runs\": [" >"$json"
{
    echo "# EmbedPlan world model — $DOMAIN ($GEN_OPTS, $(echo $SEEDS | wc -w) problems, $PLANS plans each)"
    echo
    echo "State features: $SF; action features: $AF; lr $LR; $EPOCHS epochs; model selected on dev Hit@5."
    echo
    echo "| protocol | train | test | Hit@1 | Hit@5 | Hit@10 | Hit@5 (worst ties) | Acc@1 | Acc@5 | best epoch | train s | samples/s | lat. (a) µs | lat. (b) µs |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$md"
first=1
for p in $PROTOCOLS; do
    "$NS" split "$p" "$OUT/dataset" -o "$OUT/split-$p" --pool-size 128 --seed 1
    # shellcheck disable=SC2086
    "$NS" train "$OUT/split-$p" -o "$OUT/model-$p.ckpt" --epochs "$EPOCHS" --lr "$LR" --seed 1 \
        --state-features "$SF" --action-features "$AF" --log "$OUT/train-$p.log" --json --quiet $TRAIN_OPTS >"$OUT/train-$p.json"
    "$NS" eval "$OUT/split-$p" "$OUT/model-$p.ckpt" --json --quiet --seed 1 >"$OUT/eval-$p.json"
    "$NS" eval "$OUT/split-$p" "$OUT/model-$p.ckpt" --quiet --seed 1
    [ $first -eq 1 ] || echo "," >>"$json"
    first=0
    printf '{"protocol": "%s", "train": %s, "eval": %s}' "$p" "$(cat "$OUT/train-$p.json")" "$(cat "$OUT/eval-$p.json")" >>"$json"
    get() { grep -oE "\"$1\": [-0-9.e+]+" "$2" | head -n 1 | sed -E 's/.*: //'; }
    pct() { awk -v x="$1" 'BEGIN { printf "%.1f", 100 * x }'; }
    ev="$OUT/eval-$p.json" tr="$OUT/train-$p.json"
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %.0f | %.1f | %.1f |\n' "$p" \
        "$(get train "$tr")" "$(get n "$ev")" "$(pct "$(get 'hit@1' "$ev")")" "$(pct "$(get 'hit@5' "$ev")")" \
        "$(pct "$(get 'hit@10' "$ev")")" "$(pct "$(get 'hit@5_worst' "$ev")")" "$(pct "$(get 'acc@1' "$ev")")" \
        "$(pct "$(get 'acc@5' "$ev")")" "$(get best_epoch "$tr")" "$(get seconds "$tr")" "$(get samples_per_s "$tr")" \
        "$(get latency_full_us "$ev")" "$(get latency_transition_us "$ev")" >>"$md"
done
echo "]}" >>"$json"
cat "$md"
echo "wrote $json and $md"
python3 "$(dirname "$0")/tables_lib.py" runs "$json" "$OUT/hitk" || true
python3 "$(dirname "$0")/tables_lib.py" curves "$OUT/curves.png" "$OUT"/train-*.log || true
