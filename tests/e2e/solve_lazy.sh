# Lazy GBFS (deferred evaluation, preferred operators in a boosted queue)
# and LAMA-first (--search lama): plans validate; unknown --search is a usage error; --time-limit is honoured
# on a task where one LM-cut evaluation takes tens of ms (issue #14 D3).
. "$(dirname "$0")/lib.bash"
D=domains/blocksworld/domain.pddl
expect_exit 0 "$NS" gen blocksworld --seed 3 --blocks 15 -o "$TMP/p.pddl"
for s in "lazy" "lazy --no-preferred" "lazy --heuristic hadd"; do
    expect_exit 0 "$NS" solve "$D" "$TMP/p.pddl" --search $s --plan-file "$TMP/plan" --json
    grep -q '"search": "lazy"' "$TMP/out" || fail "json: $(cat "$TMP/out")"
    grep -q '"solved": true' "$TMP/out" || fail "json: $(cat "$TMP/out")"
    expect_exit 0 "$NS" validate "$D" "$TMP/p.pddl" "$TMP/plan"
done
# LAMA-first (h^FF + landmark count, four open lists) on several generator domains
for dom in blocksworld logistics gripper visitall ferry; do
    expect_exit 0 "$NS" gen $dom --seed 5 -o "$TMP/l.pddl"
    expect_exit 0 "$NS" solve domains/$dom/domain.pddl "$TMP/l.pddl" --search lama --plan-file "$TMP/plan" --json
    grep -q '"search": "lama", "heuristic": "ff+lmcount", "solved": true' "$TMP/out" || fail "json: $(cat "$TMP/out")"
    expect_exit 0 "$NS" validate domains/$dom/domain.pddl "$TMP/l.pddl" "$TMP/plan"
done
expect_exit 0 "$NS" solve "$D" "$TMP/p.pddl" --search lama --plan-file "$TMP/plan"
expect_exit 0 "$NS" validate "$D" "$TMP/p.pddl" "$TMP/plan"
expect_exit 30 "$NS" solve "$D" "$TMP/p.pddl" --search lama2
expect_exit 0 "$NS" gen blocksworld --seed 1 --blocks 100 -o "$TMP/big.pddl"
t0=$(date +%s%N)
expect_exit 23 "$NS" solve "$D" "$TMP/big.pddl" --search astar --heuristic lmcut --time-limit 1
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
[ "$ms" -lt 8000 ] || fail "time limit 1 s took ${ms} ms wall"
exit 0
