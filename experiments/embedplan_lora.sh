#!/usr/bin/env bash
# Encoder adaptation (EmbedPlan App. M, issue #15) on one generated domain:
# Extrapolation Hit@1 of the world model on frozen text embeddings against the
# same model on embeddings of the LoRA-adapted encoder, warm and cold start,
# each arm trained and evaluated on the same split with the same seeds; the
# adapted arms refit a fresh model with the frozen arm's budget (the paper's
# protocol).  Writes OUT/results.md and OUT/results.json; a run whose results
# are in OUT is not run again (add seeds or arms by running it again).
#   experiments/embedplan_lora.sh [DOMAIN] [OUT]
# env: SEEDS (problem seeds, default "1 2 3 4 5 6"), GEN_OPTS (ferry: "--cars 3"; blocksworld:
#      "--blocks 4"), PLANS (8), TRAIN_SEEDS ("1"), MODEL (all-MiniLM-L6-v2), EPOCHS (200), LR (1e-3),
#      RANK (8), LORA_OPTS (extra `train` options of the adapted arms, e.g. "--lora-epochs 4 --lora-lr 3e-4"),
#      ARMS ("frozen warm cold").
set -eu
DOMAIN=${1:-ferry}
OUT=${2:-results/embedplan_lora_$DOMAIN}
. "$(dirname "$0")/lib.sh"
SEEDS=${SEEDS:-1 2 3 4 5 6}
case $DOMAIN in
    ferry) DEF_OPTS="--cars 3" ;;
    blocksworld) DEF_OPTS="--blocks 4" ;;
    *) DEF_OPTS="" ;;
esac
GEN_OPTS=${GEN_OPTS:-$DEF_OPTS}
PLANS=${PLANS:-8}
TRAIN_SEEDS=${TRAIN_SEEDS:-1}
EPOCHS=${EPOCHS:-200}
RANK=${RANK:-8}
LORA_OPTS=${LORA_OPTS:-}
ARMS=${ARMS:-frozen warm cold}
mkdir -p "$OUT/problems"
for s in $SEEDS; do
    # shellcheck disable=SC2086
    "$NS" gen "$DOMAIN" --seed "$s" $GEN_OPTS -o "$OUT/problems/p$s.pddl"
done
[ -f "$OUT/dataset/manifest.json" ] ||
    "$NS" data build "$NS_ROOT/domains/$DOMAIN/domain.pddl" "$OUT/problems" -o "$OUT/dataset" --plans "$PLANS" --quiet
"$NS" data info "$OUT/dataset" | head -n 2
"$NS" embed stats "$OUT/dataset" --model "$MODEL" | head -n 2
"$NS" split extrapolation "$OUT/dataset" -o "$OUT/split" --pool-size 128 --seed "$SEED"
num() { grep -oE "\"$1\": [-0-9.e+]+" "$2" | head -n 1 | sed -E 's/.*: //'; }
pct() { awk -v x="$1" 'BEGIN { printf "%.1f", 100 * x }'; }
# one run per arm and training seed (skipped when its results exist: rerun with more seeds or arms)
for ts in $TRAIN_SEEDS; do
    for arm in $ARMS; do
        extra=""
        case $arm in
            frozen) ;;
            warm) extra="--lora $RANK $LORA_OPTS" ;;
            cold) extra="--lora $RANK --lora-start cold $LORA_OPTS" ;;
            *) echo "unknown arm $arm" >&2; exit 2 ;;
        esac
        tag="$arm-s$ts"
        [ -s "$OUT/eval-$tag.json" ] && [ -s "$OUT/wall-$tag.txt" ] && continue
        t0=$(date +%s.%N)
        # shellcheck disable=SC2086
        "$NS" train "$OUT/split" -o "$OUT/model-$tag" --text-encoder "$MODEL" --lr "$LR" --epochs "$EPOCHS" \
            --seed "$ts" --json --quiet $TRAIN_OPTS $extra >"$OUT/train-$tag.json"
        awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f\n", b - a }' >"$OUT/wall-$tag.txt"
        "$NS" eval "$OUT/split" "$OUT/model-$tag" --seed "$ts" --latency 0 --json --quiet >"$OUT/eval-$tag.json"
        echo "$tag: Hit@1 $(pct "$(num 'hit@1' "$OUT/eval-$tag.json")") %, $(cat "$OUT/wall-$tag.txt") s"
    done
done
md="$OUT/results.md" json="$OUT/results.json"
{
    echo "# Encoder adaptation — $DOMAIN ($GEN_OPTS, problems $SEEDS; Extrapolation, seed $SEED)"
    echo
    echo "$MODEL; model: lr $LR, $EPOCHS epochs, dev-selected; adapter: rank $RANK, \`$LORA_OPTS\` (defaults:"
    echo "query+value, alpha 2r, 2 epochs of batch 16, lr 1e-4); adapted arms refit a fresh model on the adapted embeddings."
    echo
    echo "| arm | train seed | Hit@1 | Hit@5 | MRR | joint loss first → last epoch | wall s (joint stage s) |"
    echo "|---|---|---|---|---|---|---|"
} >"$md"
echo "[" >"$json"
first=1
for ts in $TRAIN_SEEDS; do
    for arm in $ARMS; do
        tag="$arm-s$ts" ev="$OUT/eval-$arm-s$ts.json" tr="$OUT/train-$arm-s$ts.json"
        [ -s "$ev" ] || continue
        joint="-" loss="-"
        if [ "$arm" != frozen ]; then
            sed -E 's/.*"adapt": \{//' "$tr" >"$OUT/adapt-$tag.tmp"
            joint=$(grep -oE '"adapt": [0-9.]+' "$tr" | tail -n 1 | sed -E 's/.*: //')
            loss=$(awk -v a="$(num first_loss "$OUT/adapt-$tag.tmp")" -v b="$(num last_loss "$OUT/adapt-$tag.tmp")" \
                'BEGIN { printf "%.3f → %.3f", a, b }')
            rm -f "$OUT/adapt-$tag.tmp"
        fi
        printf '| %s | %s | %s | %s | %.3f | %s | %s (%s) |\n' "$arm" "$ts" "$(pct "$(num 'hit@1' "$ev")")" \
            "$(pct "$(num 'hit@5' "$ev")")" "$(num mrr "$ev")" "$loss" "$(cat "$OUT/wall-$tag.txt")" "${joint%.*}" >>"$md"
        [ $first -eq 1 ] || echo "," >>"$json"
        first=0
        printf '{"arm": "%s", "train_seed": %s, "wall_s": %s, "train": %s, "eval": %s}\n' "$arm" "$ts" \
            "$(cat "$OUT/wall-$tag.txt")" "$(cat "$tr")" "$(cat "$ev")" >>"$json"
    done
done
echo "]" >>"$json"
cat "$md"
echo "wrote $md and $json"
