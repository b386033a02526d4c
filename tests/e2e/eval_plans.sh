# `nextstate eval` beyond per-transition Hit@k: pool-size sweep, plan-level
# (teacher-forced) metrics and closed-loop rollout through the CLI — JSON
# keys, tables, the regimes' agreement at depth 1, and usage errors.
. "$(dirname "$0")/lib.bash"
export OPENBLAS_NUM_THREADS=1
mkdir -p "$TMP/fp"
for s in 1 2 3 4 5 6; do
    expect_exit 0 "$NS" gen ferry --seed $s --cars 3 -o "$TMP/fp/p$s.pddl"
done
expect_exit 0 "$NS" data build domains/ferry/domain.pddl "$TMP/fp" -o "$TMP/ferry" --plans 8 --quiet
expect_exit 0 "$NS" split plan-variant "$TMP/ferry" -o "$TMP/sp" --pool-size 128 --seed 1
expect_exit 0 "$NS" split interpolation "$TMP/ferry" -o "$TMP/si" --pool-size 128 --seed 1
expect_exit 0 "$NS" train "$TMP/sp" -o "$TMP/m.ckpt" --epochs 6 --lr 2e-3 --warmup 2 --batch 64 --hidden 64 --quiet

expect_exit 0 "$NS" eval "$TMP/sp" "$TMP/m.ckpt" --json --latency 0 --pool-sweep 8,128,full --rollout --quiet
j=$(cat "$TMP/out")
grep -q '"pool_sweep": \[{"pool": 8, ' <<<"$j" || fail "no pool_sweep: $j"
grep -q '{"pool": "full", "n": ' <<<"$j" || fail "no full pool row: $j"
grep -qE '"plans": \{"n": [1-9]' <<<"$j" || fail "plan-variant should have whole test plans: $j"
grep -q '"plan_mean_hit@5": ' <<<"$j" || fail "no plan mean: $j"
grep -q '"rollout": {"pool_size": 128, ' <<<"$j" || fail "no rollout: $j"
grep -q '"metrics": {"n": ' <<<"$j" || fail "metrics changed: $j"
# depth 1: the three regimes coincide
d1=$(grep -oE '"depth": 1, "n": [0-9]+, "teacher": \[[^]]*\], "snapped": \[[^]]*\], "unsnapped": \[[^]]*\]' <<<"$j")
[ -n "$d1" ] || fail "no depth-1 row: $j"
t=$(sed -E 's/.*"teacher": (\[[^]]*\]).*/\1/' <<<"$d1")
s=$(sed -E 's/.*"snapped": (\[[^]]*\]).*/\1/' <<<"$d1")
u=$(sed -E 's/.*"unsnapped": (\[[^]]*\]).*/\1/' <<<"$d1")
[ "$t" = "$s" ] && [ "$t" = "$u" ] || fail "regimes differ at depth 1: $d1"
grep -q 'nan' <<<"$j" && fail "NaN in JSON: $j"

# fresh rollout pools; the readable tables
expect_exit 0 "$NS" eval "$TMP/sp" "$TMP/m.ckpt" --json --latency 0 --rollout-pool 50 --quiet
grep -q '"rollout": {"pool_size": 50, ' "$TMP/out" || fail "--rollout-pool: $(cat "$TMP/out")"
expect_exit 0 "$NS" eval "$TMP/si" "$TMP/m.ckpt" --latency 0 --pool-sweep 16,full --rollout --quiet
grep -q "pool-size sweep" "$TMP/out" || fail "sweep table: $(cat "$TMP/out")"
grep -q "^plans (teacher)" "$TMP/out" || fail "plans table: $(cat "$TMP/out")"
grep -qE "^  depth +n +teacher" "$TMP/out" || fail "rollout table: $(cat "$TMP/out")"
# plans are reported without being asked; an empty result is null, not NaN
expect_exit 0 "$NS" eval "$TMP/si" "$TMP/m.ckpt" --json --latency 0 --quiet
grep -q '"plans": {"n": ' "$TMP/out" || fail "plans not reported: $(cat "$TMP/out")"
if grep -q '"plans": {"n": 0,' "$TMP/out"; then grep -q '"exact_hit@5": null' "$TMP/out" || fail "n = 0 not null"; fi
grep -q '"weights": "float"' "$TMP/out" || fail "weights not float: $(cat "$TMP/out")"
grep -q '"hit@5_ceiling": ' "$TMP/out" || fail "no ceiling: $(cat "$TMP/out")"
# bfloat16 weights: said in the JSON and the table, latency measured
expect_exit 0 "$NS" eval "$TMP/si" "$TMP/m.ckpt" --json --latency 5 --bf16 --quiet
grep -q '"weights": "bfloat16"' "$TMP/out" || fail "weights not bfloat16: $(cat "$TMP/out")"
grep -qE '"latency_full_us": [0-9]' "$TMP/out" || fail "no bf16 latency: $(cat "$TMP/out")"
expect_exit 0 "$NS" eval "$TMP/si" "$TMP/m.ckpt" --latency 0 --bf16 --quiet
grep -q "bfloat16 weights" "$TMP/out" || fail "table: $(cat "$TMP/out")"
# int8 weights likewise
expect_exit 0 "$NS" eval "$TMP/si" "$TMP/m.ckpt" --json --latency 5 --int8 --quiet
grep -q '"weights": "int8"' "$TMP/out" || fail "weights not int8: $(cat "$TMP/out")"
grep -qE '"latency_full_us": [0-9]' "$TMP/out" || fail "no int8 latency: $(cat "$TMP/out")"
expect_exit 0 "$NS" eval "$TMP/si" "$TMP/m.ckpt" --latency 0 --int8 --quiet
grep -q "int8 weights" "$TMP/out" || fail "table: $(cat "$TMP/out")"
# int4 weights likewise (--hidden 64: the heads' out layers in int4, the sparse first layers float, T int8)
expect_exit 0 "$NS" eval "$TMP/si" "$TMP/m.ckpt" --json --latency 5 --int4 --quiet
grep -q '"weights": "int4"' "$TMP/out" || fail "weights not int4: $(cat "$TMP/out")"
grep -qE '"latency_full_us": [0-9]' "$TMP/out" || fail "no int4 latency: $(cat "$TMP/out")"
expect_exit 0 "$NS" eval "$TMP/si" "$TMP/m.ckpt" --latency 0 --int4 --quiet
grep -q "int4 weights" "$TMP/out" || fail "table: $(cat "$TMP/out")"

# usage errors
for bad in "--pool-sweep 0" "--pool-sweep abc" "--pool-sweep 16,,full" "--pool-sweep 1" "--rollout-pool -3" \
    "--rollout-pool x" "--rollout-pool 1" "--seed x" "--seed -1" "--latency -3"; do
    # shellcheck disable=SC2086
    expect_exit 30 "$NS" eval "$TMP/sp" "$TMP/m.ckpt" $bad
    grep -q "eval: --" "$TMP/err" || fail "$bad: message $(cat "$TMP/err")"
    [ "$(grep -c "^nextstate eval: " "$TMP/err")" = 1 ] || fail "$bad: not one message: $(cat "$TMP/err")"
done
expect_exit 30 "$NS" eval "$TMP/sp" "$TMP/m.ckpt" --pool-sweep
grep -q "expects a value" "$TMP/err" || fail "missing value: $(cat "$TMP/err")"
echo ok
