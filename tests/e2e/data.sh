# Dataset build / info / export / plans through the CLI: determinism, every
# sampled optimal plan validates, corrupted files are named, NumPy reads it.
. "$(dirname "$0")/lib.bash"
D=domains/ferry/domain.pddl
mkdir -p "$TMP/p"
for s in 1 2 3; do expect_exit 0 "$NS" gen ferry --seed $s --cars 4 --locations 3 -o "$TMP/p/f$s.pddl"; done
expect_exit 0 "$NS" data build "$D" "$TMP/p" -o "$TMP/a" --plans 10 --seed 3
expect_exit 0 "$NS" data build "$D" "$TMP/p/f1.pddl" "$TMP/p/f2.pddl" "$TMP/p/f3.pddl" -o "$TMP/b" --plans 10 --seed 3
for f in "$TMP"/a/*; do cmp -s "$f" "$TMP/b/$(basename "$f")" || fail "not deterministic: $(basename "$f")"; done
expect_exit 0 "$NS" data info "$TMP/a" --json
grep -q '"problems": 3' "$TMP/out" || fail "info: $(cat "$TMP/out")"
expect_exit 0 "$NS" data plans "$TMP/a" -o "$TMP/plans"
n=0
for plan in "$TMP"/plans/*.plan; do
    prob=$(basename "$plan" | sed -E 's/-[0-9]+\.plan$//')
    f=$(grep -l "(problem $prob)" "$TMP"/p/*.pddl)
    expect_exit 0 "$NS" validate "$D" "$f" "$plan"
    len=$(grep -c '^(' "$plan"); opt=$("$NS" solve "$D" "$f" --search bfs 2>/dev/null | grep -c '^(')
    [ "$len" -eq "$opt" ] || fail "$plan: length $len, optimal $opt"
    n=$((n + 1))
done
[ $n -ge 6 ] || fail "only $n plans"
expect_exit 0 "$NS" data export "$TMP/a" --text -o "$TMP/a.jsonl"
[ "$(wc -l <"$TMP/a.jsonl")" -gt 10 ] || fail "export too short"
grep -q '### CURRENT STATE ###' "$TMP/a.jsonl" || fail "no prompt text"
expect_exit 0 "$NS" data build "$D" "$TMP/p" -o "$TMP/full" --mode full
# corruption: truncate one array, the error names it
head -c 100 "$TMP/a/transitions.npy" >"$TMP/t" && mv "$TMP/t" "$TMP/a/transitions.npy"
expect_exit 31 "$NS" data info "$TMP/a"
grep -q "transitions.npy" "$TMP/err" || fail "error does not name the file: $(cat "$TMP/err")"
expect_exit 32 "$NS" data info "$TMP/missing"
# NumPy reads every array (when NumPy is installed for some python3)
for py in /usr/bin/python3 python3; do
    if "$py" -c 'import numpy' 2>/dev/null; then
        "$py" - "$TMP/full" <<'PY' || fail "numpy could not read the dataset"
import sys, glob, json, os, numpy as np
d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
for f in m["files"]:
    a = np.load(os.path.join(d, f))
n = m["counts"]["states"]
assert np.load(os.path.join(d, "states.npy")).shape[0] == n
assert np.load(os.path.join(d, "transitions.npy")).shape == (m["counts"]["transitions"], 4)
PY
        break
    fi
done
exit 0
