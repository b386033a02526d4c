# Hostile PDDL and plan files (issue #14 D1, D6–D10, D16): each reproducer
# gets a located message and exit 31, never a crash or a silent success.
. "$(dirname "$0")/lib.bash"
D=domains/blocksworld/domain.pddl
P=$TMP/p.pddl
printf '(define (problem p) (:domain blocksworld-4ops) (:objects a b)\n (:init (clear a) (ontable a) (clear b) (ontable b) (handempty))\n (:goal (on a b)))\n' >"$P"
# D1: a predicate argument without '?' (was a use-after-free, SIGSEGV)
printf '(define (domain d) (:predicates (p x)))' >"$TMP/d1.pddl"
printf '(define (problem p) (:domain d) (:objects a) (:init) (:goal (and)))' >"$TMP/p1.pddl"
expect_exit 31 "$NS" ground "$TMP/d1.pddl" "$TMP/p1.pddl"
grep -q "d1.pddl:1:36: predicate arguments must be variables (?x), found 'x'" "$TMP/err" || fail "D1: $(cat "$TMP/err")"
# D9: an empty first list (memcpy with NULL under UBSan)
printf '()' >"$TMP/e.pddl"
expect_exit 31 "$NS" ground "$TMP/e.pddl" "$P"
# D7: a NUL byte ends nothing silently: in a plan, a domain and a problem
"$NS" solve "$D" "$P" --plan-file "$TMP/plan" >/dev/null 2>&1 || fail "solve"
expect_exit 0 "$NS" validate "$D" "$P" "$TMP/plan"
{ cat "$TMP/plan"; printf '\0(junk((('; } >"$TMP/plan-nul"
expect_exit 31 "$NS" validate "$D" "$P" "$TMP/plan-nul"
grep -q "plan-nul:3:1: NUL byte" "$TMP/err" || grep -q "plan-nul:[0-9]*:[0-9]*: NUL byte" "$TMP/err" || fail "D7: $(cat "$TMP/err")"
{ cat "$D"; printf '\0'; } >"$TMP/d-nul.pddl"
expect_exit 31 "$NS" ground "$TMP/d-nul.pddl" "$P"
grep -q "NUL byte" "$TMP/err" || fail "D7 domain: $(cat "$TMP/err")"
# D8: a UTF-8 byte-order mark is skipped
{ printf '\357\273\277'; cat "$D"; } >"$TMP/d-bom.pddl"
{ printf '\357\273\277'; cat "$P"; } >"$TMP/p-bom.pddl"
expect_exit 0 "$NS" ground "$TMP/d-bom.pddl" "$TMP/p-bom.pddl"
# D10: a second (:domain …) section
printf '(define (problem p) (:domain blocksworld-4ops) (:domain blocksworld-4ops) (:objects a)\n (:init (clear a) (ontable a) (handempty)) (:goal (clear a)))\n' >"$TMP/p2dom.pddl"
expect_exit 31 "$NS" ground "$D" "$TMP/p2dom.pddl"
grep -q "p2dom.pddl:1:48: a second (:domain" "$TMP/err" || fail "D10: $(cat "$TMP/err")"
# D16: a problem for another domain, or for none
sed 's/(:domain blocksworld-4ops)/(:domain other)/' "$P" >"$TMP/pother.pddl"
expect_exit 31 "$NS" solve "$D" "$TMP/pother.pddl"
grep -q "'other'.*'blocksworld-4ops'" "$TMP/err" || fail "D16: $(cat "$TMP/err")"
sed 's/(:domain blocksworld-4ops)//' "$P" >"$TMP/pnone.pddl"
expect_exit 31 "$NS" solve "$D" "$TMP/pnone.pddl"
grep -q "no (:domain NAME)" "$TMP/err" || fail "D16 none: $(cat "$TMP/err")"
# D6: Latin-1 bytes in a name
printf '(define (problem p) (:domain blocksworld-4ops) (:objects a \351b)\n (:init (clear a) (ontable a) (handempty)) (:goal (clear a)))\n' >"$TMP/plat.pddl"
expect_exit 31 "$NS" ground "$D" "$TMP/plat.pddl"
grep -q "plat.pddl:1:60: name is not valid UTF-8" "$TMP/err" || fail "D6: $(cat "$TMP/err")"
# valid UTF-8 names still pass
printf '(define (problem p) (:domain blocksworld-4ops) (:objects a \303\251b)\n (:init (clear a) (ontable a) (handempty)) (:goal (clear a)))\n' >"$TMP/putf.pddl"
expect_exit 0 "$NS" ground "$D" "$TMP/putf.pddl"
exit 0
