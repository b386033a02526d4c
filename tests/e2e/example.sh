# example.c (the library's lifecycle in one file) builds, runs and prints its
# steps: task, successors, dataset and encoding, split, training, query.
. "$(dirname "$0")/lib.bash"
export OPENBLAS_NUM_THREADS=1
EX=${NS_EXAMPLE:-$(dirname "$NS")/example}
[ -x "$EX" ] || fail "no $EX (make builds it)"
expect_exit 0 "$EX" domains/ferry/domain.pddl "$TMP/w"
out=$(cat "$TMP/out")
grep -qE '^task .*p1.pddl: [1-9][0-9]* atoms, [1-9][0-9]* operators; [1-9][0-9]* applicable' <<<"$out" || fail "task line: $out"
[ "$(grep -c -- ' -> a state with [1-9][0-9]* true atoms' <<<"$out")" -eq 2 ] || fail "successor lines: $out"
grep -qE '^dataset: [1-9][0-9]* states, [1-9][0-9]* transitions; bag-of-literals features [1-9][0-9]* x [1-9]' <<<"$out" || fail "dataset line: $out"
grep -qE '^split: [1-9][0-9]* train, [0-9]+ dev, [1-9][0-9]* test' <<<"$out" || fail "split line: $out"
grep -qE '^trained: 20 epochs, best epoch [1-9]' <<<"$out" || fail "trained line: $out"
h5=$(grep -oE 'Hit@5 [0-9.]+' <<<"$out" | grep -oE '[0-9.]+$')
[ -n "$h5" ] || fail "query line: $out"
# the files the example wrote are the CLI's formats: the CLI evaluates its model alike
[ -f "$TMP/w/model.ckpt" ] && [ -f "$TMP/w/split/split.json" ] || fail "example left no checkpoint / split"
expect_exit 0 "$NS" eval "$TMP/w/split" "$TMP/w/model.ckpt" --json --latency 0
cli5=$(grep -oE '"hit@5": [0-9.e-]+' "$TMP/out" | head -1 | grep -oE '[0-9.e-]+$')
awk -v a="$h5" -v b="$cli5" 'BEGIN { exit !((a - b) < 0.006 && (b - a) < 0.006) }' || fail "example Hit@5 $h5, CLI $cli5"
# a missing domain: a clear error, non-zero exit
expect_exit 1 "$EX" /nonexistent/domain.pddl "$TMP/w2"
grep -q "example: /nonexistent/domain.pddl" "$TMP/err" || fail "error: $(cat "$TMP/err")"
