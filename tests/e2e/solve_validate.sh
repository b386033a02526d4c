# Generate, solve with every search, validate; a broken plan is rejected.
. "$(dirname "$0")/lib.bash"
D=domains/blocksworld/domain.pddl
expect_exit 0 "$NS" gen blocksworld --seed 7 --blocks 5 -o "$TMP/p.pddl"
lens=()
for s in "bfs" "astar --heuristic lmcut" "astar --heuristic hmax" "gbfs --heuristic ff"; do
    expect_exit 0 "$NS" solve "$D" "$TMP/p.pddl" --search $s --plan-file "$TMP/plan" --json
    grep -q '"solved": true' "$TMP/out" || fail "json: $(cat "$TMP/out")"
    expect_exit 0 "$NS" validate "$D" "$TMP/p.pddl" "$TMP/plan"
    lens+=("$(grep -c '^(' "$TMP/plan")")
done
[ "${lens[0]}" = "${lens[1]}" ] && [ "${lens[0]}" = "${lens[2]}" ] || fail "optimal lengths differ: ${lens[*]}"
# drop the first step: the plan must fail at step 1 or at the goal, exit 12
"$NS" solve "$D" "$TMP/p.pddl" --search bfs --plan-file "$TMP/plan" 2>/dev/null
tail -n +2 "$TMP/plan" >"$TMP/bad"
expect_exit 12 "$NS" validate "$D" "$TMP/p.pddl" "$TMP/bad"
grep -qE "is not applicable: unmet precondition|does not hold" "$TMP/out" || fail "no reason: $(cat "$TMP/out")"
# same seed, same bytes; plan output deterministic
"$NS" gen blocksworld --seed 7 --blocks 5 >"$TMP/q.pddl"
cmp -s "$TMP/p.pddl" "$TMP/q.pddl" || fail "gen not deterministic"
"$NS" solve "$D" "$TMP/p.pddl" --search gbfs >"$TMP/a" 2>/dev/null
"$NS" solve "$D" "$TMP/p.pddl" --search gbfs >"$TMP/b" 2>/dev/null
cmp -s "$TMP/a" "$TMP/b" || fail "solve not deterministic"
exit 0
