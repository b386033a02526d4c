# Grounding honours --time-limit and --memory-limit (issue #14 D4): a
# 3,000-block problem (9 M reachable atoms unlimited: 40 s CPU, 4.6 GB) stops
# at the limit with the limit's exit code and a message naming the problem;
# `data build` leaves it out and keeps the others; `plan` counts it unsolved
# (out of time) and plans the others.
. "$(dirname "$0")/lib.bash"
D=domains/blocksworld/domain.pddl
mkdir -p "$TMP/p"
{
    printf '(define (problem bw3000) (:domain blocksworld-4ops) (:objects'
    for i in $(seq 0 2999); do printf ' b%d' "$i"; done
    printf ') (:init (handempty)'
    for i in $(seq 0 2999); do printf ' (clear b%d) (ontable b%d)' "$i" "$i"; done
    printf ') (:goal (and (on b0 b1))))\n'
} >"$TMP/p/big.pddl"
expect_exit 22 "$NS" solve "$D" "$TMP/p/big.pddl" --memory-limit 50
grep -q "big.pddl: grounding reached the memory limit (50 MiB)" "$TMP/err" || fail "memory message: $(cat "$TMP/err")"
expect_exit 23 "$NS" solve "$D" "$TMP/p/big.pddl" --time-limit 0.3
grep -q "grounding reached the time limit" "$TMP/err" || fail "time message: $(cat "$TMP/err")"
# a limit the grounding fits in leaves the rest to the search
expect_exit 0 "$NS" gen blocksworld --seed 1 --blocks 4 -o "$TMP/p/small.pddl"
expect_exit 0 "$NS" solve "$D" "$TMP/p/small.pddl" --time-limit 30 --memory-limit 500
expect_exit 0 "$NS" data build "$D" "$TMP/p" -o "$TMP/ds" --time-limit 0.3
grep -q "big.pddl left out: grounding reached the time limit" "$TMP/err" || fail "data build: $(cat "$TMP/err")"
grep -q "1 problems" "$TMP/err" || fail "data build kept: $(cat "$TMP/err")"
mkdir -p "$TMP/train"
for s in 2 3 4; do expect_exit 0 "$NS" gen blocksworld --seed $s --blocks 4 -o "$TMP/train/t$s.pddl"; done
expect_exit 0 "$NS" learn "$D" "$TMP/train" --model xgb --rounds 10 -o "$TMP/x.model" --quiet
expect_exit 23 "$NS" plan --model "$TMP/x.model" "$D" "$TMP/p/big.pddl" --time-limit 0.3
grep -q "big.pddl: grounding reached the time limit" "$TMP/err" || fail "plan: $(cat "$TMP/err")"
expect_exit 0 "$NS" plan --model "$TMP/x.model" "$D" "$TMP/p" --time-limit 0.3 --json
grep -q 'big.pddl", .*"status": "out of time"' "$TMP/out" || fail "plan, two problems: $(cat "$TMP/out")"
grep -q 'small.pddl", .*"solved": true' "$TMP/out" || fail "plan, two problems: $(cat "$TMP/out")"
# a limit the process has spent before any search (0.1 ms: starting up takes more): out of time, no plan
expect_exit 23 "$NS" solve "$D" "$TMP/p/small.pddl" --search gbfs --time-limit 0.0001
grep -Eq "out of time|reached the time limit" "$TMP/err" && [ ! -s "$TMP/out" ] || fail "solve, spent: $(cat "$TMP/err")"
expect_exit 23 "$NS" plan --model "$TMP/x.model" "$D" "$TMP/p/small.pddl" --time-limit 0.0001
grep -Eq "out of time|reached the time limit" "$TMP/err" || fail "plan, spent: $(cat "$TMP/err")"
exit 0
