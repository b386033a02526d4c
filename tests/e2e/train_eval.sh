# World model through the CLI: train on an interpolation split, evaluate
# (table and --json), determinism of training, features from files (dense
# .npy), and clear errors with the documented exit codes.
. "$(dirname "$0")/lib.bash"
export OPENBLAS_NUM_THREADS=1
mkdir -p "$TMP/fp"
for s in 1 2 3 4 5 6; do
    expect_exit 0 "$NS" gen ferry --seed $s --cars 3 -o "$TMP/fp/p$s.pddl"
done
expect_exit 0 "$NS" data build domains/ferry/domain.pddl "$TMP/fp" -o "$TMP/ferry" --plans 8 --quiet
expect_exit 0 "$NS" split interpolation "$TMP/ferry" -o "$TMP/si" --pool-size 128 --seed 1
expect_exit 0 "$NS" split extrapolation "$TMP/ferry" -o "$TMP/se" --pool-size 128 --seed 1

train() { expect_exit 0 "$NS" train "$TMP/si" --epochs 25 --lr 2e-3 --warmup 2 --batch 64 --hidden 128 --quiet "$@"; }
train -o "$TMP/m.ckpt" --json --log "$TMP/log.txt"
grep -q '"best_epoch": [1-9]' "$TMP/out" || fail "train --json: $(cat "$TMP/out")"
grep -q '"samples_per_s"' "$TMP/out" || fail "train --json lacks samples_per_s"
[ "$(wc -l <"$TMP/log.txt")" -eq 25 ] || fail "log should have 25 epoch lines"
grep -qE '"best_dev_hit@5": [01]' "$TMP/out" || fail "best dev Hit@5 not a number: $(cat "$TMP/out")"
# no epoch, no dev check: null, not -1
train -o "$TMP/m0.ckpt" --json --epochs 0
grep -q '"best_dev_hit@5": null' "$TMP/out" || fail "0 epochs: $(cat "$TMP/out")"
# same seed, same weights: the checkpoints differ only in their meta's timings, so compare predictions
train -o "$TMP/m2.ckpt"
strip() { sed -e 's/"seconds": [0-9.e-]*//' -e 's/"model": "[^"]*"//'; }
expect_exit 0 "$NS" eval "$TMP/si" "$TMP/m.ckpt" --json --latency 0 --no-acc
strip <"$TMP/out" >"$TMP/d1"
expect_exit 0 "$NS" eval "$TMP/si" "$TMP/m2.ckpt" --json --latency 0 --no-acc
strip <"$TMP/out" >"$TMP/d2"
cmp -s "$TMP/d1" "$TMP/d2" || fail "two trainings with one seed differ: $(cat "$TMP/d1" "$TMP/d2")"

expect_exit 0 "$NS" eval "$TMP/si" "$TMP/m.ckpt" --latency 20
grep -q "Hit (random ties)" "$TMP/out" || fail "eval table: $(cat "$TMP/out")"
grep -q "latency" "$TMP/out" || fail "eval table lacks latency"
expect_exit 0 "$NS" eval "$TMP/si" "$TMP/m.ckpt" --json --latency 0
h5=$(grep -oE '"hit@5": [0-9.e-]+' "$TMP/out" | grep -oE '[0-9.e-]+$')
awk -v h="$h5" 'BEGIN { exit !(h >= 0.95) }' || fail "interpolation Hit@5 $h5 < 0.95"
grep -q '"acc@1"' "$TMP/out" || fail "eval --json lacks acc@1"
expect_exit 0 "$NS" eval "$TMP/si" "$TMP/m.ckpt" --on dev --json --latency 0
# evaluation is deterministic
expect_exit 0 "$NS" eval "$TMP/si" "$TMP/m.ckpt" --json --latency 0 --seed 3
cp "$TMP/out" "$TMP/e1"
expect_exit 0 "$NS" eval "$TMP/si" "$TMP/m.ckpt" --json --latency 0 --seed 3
strip <"$TMP/e1" >"$TMP/e1s"; strip <"$TMP/out" >"$TMP/e2s"
cmp -s "$TMP/e1s" "$TMP/e2s" || fail "eval differs between two runs"

# extrapolation with the FiLM transition and the grid action loss runs
expect_exit 0 "$NS" train "$TMP/se" -o "$TMP/mf.ckpt" --model film --action-loss grid --epochs 3 --hidden 32 --quiet
expect_exit 0 "$NS" eval "$TMP/se" "$TMP/mf.ckpt" --latency 0

# feature files: wrong dtype, missing CSR
expect_exit 31 "$NS" train "$TMP/si" -o "$TMP/x.ckpt" --state-features "$TMP/ferry/state_g.npy" --epochs 1 --quiet
grep -q "float32" "$TMP/err" || fail "wrong dtype message: $(cat "$TMP/err")"
expect_exit 32 "$NS" train "$TMP/si" -o "$TMP/x.ckpt" --state-features "$TMP/nothing" --epochs 1 --quiet

# errors
expect_exit 30 "$NS" train "$TMP/si"
expect_exit 30 "$NS" train "$TMP/si" -o "$TMP/x.ckpt" --model transformer
expect_exit 30 "$NS" train "$TMP/si" -o "$TMP/x.ckpt" --batch 0
expect_exit 30 "$NS" eval "$TMP/si"
# a step budget instead of epochs: exactly N AdamW steps (the last epoch cut short), or at least N
expect_exit 0 "$NS" train "$TMP/si" -o "$TMP/st.ckpt" --epochs 0 --json --quiet
ntr=$(grep -oE '"train": [0-9]+' "$TMP/out" | head -n 1 | grep -oE '[0-9]+')
[ "${ntr:-0}" -gt 16 ] || fail "train count: $(cat "$TMP/out")"
nb=$(((ntr + 15) / 16)) want=$((nb + nb / 2))
expect_exit 0 "$NS" train "$TMP/si" -o "$TMP/st.ckpt" --batch 16 --steps "$want" --json --quiet
grep -q "\"steps\": $want," "$TMP/out" || fail "--steps $want: $(cat "$TMP/out")"
grep -q '"epochs_run": 2,' "$TMP/out" || fail "--steps $want over $nb batches: not 2 epochs: $(cat "$TMP/out")"
expect_exit 0 "$NS" train "$TMP/si" -o "$TMP/st.ckpt" --batch 16 --epochs 1 --min-steps "$want" --json --quiet
grep -q "\"steps\": $((2 * nb))," "$TMP/out" || fail "--min-steps $want: $(cat "$TMP/out")"
expect_exit 30 "$NS" train "$TMP/si" -o "$TMP/st.ckpt" --steps 0
head -c 300 "$TMP/m.ckpt" >"$TMP/trunc.ckpt"
expect_exit 31 "$NS" eval "$TMP/si" "$TMP/trunc.ckpt"
grep -q "truncated" "$TMP/err" || fail "truncated checkpoint message: $(cat "$TMP/err")"
expect_exit 32 "$NS" eval "$TMP/si" "$TMP/missing.ckpt"
# a checkpoint trained on other features: width mismatch is named
mkdir -p "$TMP/fp2"
for s in 7 8; do expect_exit 0 "$NS" gen ferry --seed $s --cars 4 -o "$TMP/fp2/p$s.pddl"; done
expect_exit 0 "$NS" data build domains/ferry/domain.pddl "$TMP/fp2" -o "$TMP/ferry2" --plans 4 --quiet
expect_exit 0 "$NS" split interpolation "$TMP/ferry2" -o "$TMP/si2" --seed 1
expect_exit 31 "$NS" eval "$TMP/si2" "$TMP/m.ckpt" --state-features builtin --action-features "$TMP/ferry/state_g.npy"
echo ok
