# A proven dead end exits 10 with every complete search.
. "$(dirname "$0")/lib.bash"
need_bench
D="$BENCH/acpbench/floor-tile/domain.pddl"
P="$BENCH/acpbench/floor-tile/floortile-2-3-2-107622ff.pddl"
for s in bfs "astar --heuristic lmcut" gbfs; do
    expect_exit 10 "$NS" solve "$D" "$P" --search $s --json
    grep -q '"status": "unsolvable"' "$TMP/out" || fail "json: $(cat "$TMP/out")"
done
exit 0
