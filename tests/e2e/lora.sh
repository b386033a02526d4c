# `train --text-encoder MODEL --lora R` (paper App. M) with the tiny test
# BERT (16-piece window: every prompt is chunked): the checkpoint records the
# encoder and holds the adapter, eval re-encodes with it; with no joint step
# (B stays 0) the adapted model evaluates exactly as the frozen one; warm and
# cold starts, the jointly trained head (--lora-head joint) and a top-layer
# adapter all train and evaluate; a model whose weights changed since
# training is refused by eval; bad options are usage errors.
. "$(dirname "$0")/lib.bash"
export NEXTSTATE_MODELS="$TMP/models" OPENBLAS_NUM_THREADS=1
mkdir -p "$TMP/fp" "$NEXTSTATE_MODELS"
cp -r tests/fixtures/bert/tiny-bert "$NEXTSTATE_MODELS/"
for s in 1 2 3 4; do expect_exit 0 "$NS" gen ferry --seed $s --cars 2 -o "$TMP/fp/p$s.pddl"; done
expect_exit 0 "$NS" data build domains/ferry/domain.pddl "$TMP/fp" -o "$TMP/ferry" --quiet
expect_exit 0 "$NS" split extrapolation "$TMP/ferry" -o "$TMP/split" --pool-size 16 --seed 1
T=(--text-encoder tiny-bert --lr 3e-3 --epochs 8 --seed 1 --quiet)
expect_exit 0 "$NS" train "$TMP/split" -o "$TMP/frozen" "${T[@]}"
[ -f "$TMP/ferry/embeddings/tiny-bert+chunks/embeddings.npy" ] || fail "the frozen embeddings are not cached"
# eval's JSON without the run's own names and timings
metrics() { sed -E 's/"model": "[^"]*", //; s/, "seconds": [0-9.e+-]+//g' "$TMP/out"; }
expect_exit 0 "$NS" eval "$TMP/split" "$TMP/frozen" --json --quiet --latency 0
metrics >"$TMP/frozen.json"
grep -q '"state_features": "text:tiny-bert"' "$TMP/out" || grep -q 'text:tiny-bert' "$TMP/out" ||
    fail "eval does not name the text features: $(cat "$TMP/out")"
# no joint step: the adapter is zero, the refit model is the frozen arm's
expect_exit 0 "$NS" train "$TMP/split" -o "$TMP/zero" "${T[@]}" --lora 2 --lora-epochs 0
expect_exit 0 "$NS" eval "$TMP/split" "$TMP/zero" --json --quiet --latency 0
metrics >"$TMP/zero.json"
grep -q '"hit@1": ' "$TMP/zero.json" || fail "eval --json: $(cat "$TMP/zero.json")"
cmp -s "$TMP/zero.json" "$TMP/frozen.json" ||
    fail "a zero adapter evaluates unlike the frozen encoder: $(diff "$TMP/zero.json" "$TMP/frozen.json")"
grep -a -q '"encoder": {"model": "tiny-bert", "fingerprint": "[0-9a-f]\{16\}", "lora": {"rank": 2' "$TMP/zero" ||
    fail "the checkpoint lacks the encoder record"
grep -a -q 'lora.1.value.B' "$TMP/zero" || fail "the checkpoint lacks the adapter's tensors"
# warm and cold starts, the joint head, a top-layer adapter on every projection
expect_exit 0 "$NS" train "$TMP/split" -o "$TMP/warm" "${T[@]}" --lora 2 --lora-lr 1e-2 --lora-epochs 2 --json
grep -q '"adapt": {"rank": 2, "alpha": 4, "targets": "qv", "layers": 0, "start": "warm", "refit": true' "$TMP/out" ||
    fail "train --json lacks the adaptation: $(cat "$TMP/out")"
grep -qE '"steps": [1-9]' "$TMP/out" || fail "no joint step ran: $(cat "$TMP/out")"
expect_exit 0 "$NS" eval "$TMP/split" "$TMP/warm" --json --quiet --latency 0
metrics >"$TMP/warm.json"
cmp -s "$TMP/warm.json" "$TMP/frozen.json" && fail "the adapted encoder evaluates exactly as the frozen one"
expect_exit 0 "$NS" eval "$TMP/split" "$TMP/warm" --json --quiet --latency 0
metrics >"$TMP/warm2.json"
cmp -s "$TMP/warm2.json" "$TMP/warm.json" || fail "eval of an adapted model is not deterministic"
expect_exit 0 "$NS" train "$TMP/split" -o "$TMP/cold" "${T[@]}" --lora 2 --lora-start cold --lora-head joint \
    --lora-targets qkvo --lora-layers 1 --lora-alpha 3 --lora-batch 5 --lora-steps 3 --json
grep -q '"alpha": 3, "targets": "qkvo", "layers": 1, "start": "cold", "refit": false' "$TMP/out" ||
    fail "cold start options: $(cat "$TMP/out")"
grep -q '"steps": 3, ' "$TMP/out" || fail "--lora-steps 3: $(cat "$TMP/out")"
expect_exit 0 "$NS" eval "$TMP/split" "$TMP/cold" --quiet --latency 0
# usage errors
expect_exit 30 "$NS" train "$TMP/split" -o "$TMP/x" --lora 2
expect_exit 30 "$NS" train "$TMP/split" -o "$TMP/x" --text-encoder tiny-bert --lora 2 --lora-targets qz
expect_exit 30 "$NS" train "$TMP/split" -o "$TMP/x" --text-encoder tiny-bert --lora 2 --lora-start hot
expect_exit 30 "$NS" train "$TMP/split" -o "$TMP/x" --text-encoder tiny-bert --lora 99
# the model changed since training: refused, naming the fingerprints
sed -i 's/"layer_norm_eps": 1e-12/"layer_norm_eps": 1e-11/' "$NEXTSTATE_MODELS/tiny-bert/config.json"
expect_exit 31 "$NS" eval "$TMP/split" "$TMP/warm" --quiet
grep -q "fingerprint" "$TMP/err" || fail "no fingerprint message: $(cat "$TMP/err")"
echo "lora: ok"
