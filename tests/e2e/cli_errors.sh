# Bad input through the CLI: located messages and exit codes 3x, no crash.
. "$(dirname "$0")/lib.bash"
D=domains/blocksworld/domain.pddl
printf '(define (problem p) (:domain blocksworld-4ops)\n (:objects a b)\n (:init (clear a) (ontable a) (handempty)\n (:goal (on a b)))\n' >"$TMP/unbalanced.pddl"
expect_exit 31 "$NS" solve "$D" "$TMP/unbalanced.pddl"
grep -q "unbalanced.pddl:1:1: unbalanced parentheses" "$TMP/err" || fail "no located message: $(cat "$TMP/err")"
printf '(define (problem p) (:domain blocksworld-4ops)\n (:objects a b)\n (:init (clear c))\n (:goal (on a b)))\n' >"$TMP/undef.pddl"
expect_exit 31 "$NS" solve "$D" "$TMP/undef.pddl"
grep -q "undef.pddl:3:16: undefined object 'c'" "$TMP/err" || fail "message: $(cat "$TMP/err")"
printf '(define (problem p) (:domain blocksworld-4ops)\n (:objects a b)\n (:init (clear a b))\n (:goal (on a b)))\n' >"$TMP/arity.pddl"
expect_exit 31 "$NS" solve "$D" "$TMP/arity.pddl"
grep -q "arity.pddl:3:9: predicate 'clear' takes 1 argument, given 2" "$TMP/err" || fail "message: $(cat "$TMP/err")"
head -c 300 "$D" >"$TMP/cut-domain.pddl"
expect_exit 31 "$NS" ground "$TMP/cut-domain.pddl" "$TMP/arity.pddl"
expect_exit 32 "$NS" solve "$TMP/missing.pddl" "$TMP/arity.pddl"
grep -q "missing.pddl: cannot open" "$TMP/err" || fail "message: $(cat "$TMP/err")"
expect_exit 30 "$NS" solve "$D"
expect_exit 30 "$NS" solve "$D" "$D" --search dfs
expect_exit 30 "$NS" frobnicate
expect_exit 30 "$NS" gen blocksworld
expect_exit 30 "$NS" gen nosuchdomain --seed 1
exit 0
