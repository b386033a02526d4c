#!/usr/bin/env bash
# experiments/embedplan_tables.sh at its quick size (QUICK=1: generated ferry problems, pools of 16,
# two seeds, the literal encoder and the random control, 20 steps): the data meet the size targets,
# the tables have one row per (domain, protocol, encoder), every rate lies in [0, 1] with Hit@1 <= Hit@5,
# chance@5 is 5 / 16 on full pools, literals beat chance and the random control on Extrapolation, and
# a second run resumes from the cache without training again; embeddings made elsewhere run as an
# encoder of their own (`embed --texts-out`, `--import`), and an import that lacks texts is refused.
. "$(dirname "$0")/lib.bash"
cd "$(dirname "$0")/../.."
nsbin=$(realpath -m "$NS")
OUT="$TMP/t"
QUICK=1 NS_BIN="$nsbin" PYTHON="$EXP_PY" bash experiments/embedplan_tables.sh "$OUT" >"$TMP/log" 2>&1 || { cat "$TMP/log"; fail "embedplan_tables.sh"; }
grep -qi traceback "$TMP/log" && { cat "$TMP/log"; fail "python error"; }
for f in results.json results.csv results.md; do [ -s "$OUT/$f" ] || fail "no $f"; done
python3 - "$OUT" <<'PY' || fail "results.json"
import json, sys
r = json.load(open(sys.argv[1] + "/results.json"))
s = r["summary"]
want = {(d, p, e) for d in r["domains"] for p in r["protocols"] for e in r["encoders"]}
got = {(x["domain"], x["protocol"], x["encoder"]) for x in s}
assert got == want, (got ^ want)
assert len(r["cells"]) == len(want) * len(r["seeds"]), len(r["cells"])
ds = r["datasets"]["ferry"]
assert ds["problems"] >= 5 and ds["transitions"] >= r["min_train"], ds
for x in s:
    assert x["seeds"] == 2, x
    for k in ("hit@1", "hit@5", "chance@5", "hit@5_ceiling", "hit@5_worst"):
        assert 0 <= x[k] <= 1, (k, x)
    assert x["hit@1"] <= x["hit@5"] + 1e-12 and x["hit@5_worst"] <= x["hit@5"] + 1e-12, x
    assert x["hit@1_se"] >= 0 and x["hit@5_se"] >= 0, x
    assert x["short_pools_min"] == 0 and abs(x["chance@5"] - 5 / 16) < 1e-9, x
    if x["protocol"] == "extrapolation":
        assert x["n_min"] >= r["min_test"] and x["train_min"] >= r["min_train"], x
ex = {x["encoder"]: x for x in s if x["protocol"] == "extrapolation"}
assert ex["builtin"]["hit@5"] > ex["builtin"]["chance@5"] + 0.3, ex["builtin"]
assert ex["builtin"]["hit@5"] > ex["random"]["hit@5"] + 0.2, ex
PY
# the Markdown: a data row, one row per (domain, encoder) in each protocol table, the Table-6 mean rows
grep -qE '^\| ferry \| [0-9]+ \(0 \+ [0-9]+\) \| [0-9]+ \| [0-9]+ \|' "$OUT/results.md" || fail "no data row"
for p in interpolation plan-variant extrapolation; do
    n=$(sed -n "/^## $p: Hit@1/,/^## /p" "$OUT/results.md" | grep -cE '^\| ferry \| (builtin|random) \| 2 \| [0-9]+ \| [0-9.]+ ± [0-9.]+ \| [0-9.]+ ± [0-9.]+ \| 31\.2 \|')
    [ "$n" -eq 2 ] || fail "$p table: $n rows"
done
[ "$(grep -c '^| \*\*mean ± SE over domains\*\*' "$OUT/results.md")" -eq 3 ] || fail "mean rows"
# the plot, or the note that there is none (asked of the interpreter the script plots with: lib.sh's)
if "${PLOT_PYTHON:-$EXP_PY}" -c 'import matplotlib' 2>/dev/null; then [ -s "$OUT/hit5.png" ] || fail "no hit5.png"
else grep -q 'matplotlib not installed: no plot' "$TMP/log" || fail "no plot note"; fi
# resumed: nothing is trained again, the tables come out the same
cp "$OUT/results.csv" "$TMP/before.csv"
QUICK=1 QUIET=0 NS_BIN="$nsbin" bash experiments/embedplan_tables.sh "$OUT" >"$TMP/log2" 2>&1 || { cat "$TMP/log2"; fail "second run"; }
grep -qE ': [0-9]+ s$' "$TMP/log2" && { cat "$TMP/log2"; fail "second run trained again"; }
grep -qE ': cached$' "$TMP/log2" || { cat "$TMP/log2"; fail "second run: no cell said cached"; }
cmp -s "$OUT/results.csv" "$TMP/before.csv" || fail "second run changed the results"
# embeddings made elsewhere (here: hashed bags of words in numpy) through `embed --texts-out` and `--import`
"$EXP_PY" -c 'import numpy' 2>/dev/null || { echo "ok (no numpy for $EXP_PY: import not tried)"; exit 0; }
imp="$TMP/imports/toy/ferry"
mkdir -p "$imp"
"$NS" embed "$OUT/data/ferry/data" --texts-out "$imp/index.jsonl" --quiet || fail "embed --texts-out"
"$EXP_PY" - "$imp" <<'PY' || fail "toy embeddings"
import json, sys, zlib, numpy as np
d = sys.argv[1]
texts = [json.loads(line) for line in open(d + "/index.jsonl")]
X = np.zeros((len(texts), 256), np.float32)
for i, t in enumerate(texts):
    for w in t.split():
        X[i, zlib.crc32(w.encode()) % 256] += 1
np.save(d + "/embeddings.npy", X)
PY
QUICK=1 ENCODERS=import-toy PROTOCOLS=extrapolation IMPORT_DIR="$TMP/imports" NS_BIN="$nsbin" PYTHON="$EXP_PY" \
    bash experiments/embedplan_tables.sh "$OUT" >"$TMP/log3" 2>&1 || { cat "$TMP/log3"; fail "import run"; }
python3 - "$OUT" <<'PY' || fail "imported encoder's results"
import json, sys
r = json.load(open(sys.argv[1] + "/results.json"))
x = [x for x in r["summary"] if x["encoder"] == "import-toy"]
assert len(x) == 1 and x[0]["seeds"] == 2, x
assert x[0]["hit@5"] > x[0]["chance@5"] + 0.1, x
PY
# an import that lacks texts is an error naming the folder, never rows of zeros
head -n 3 "$imp/index.jsonl" >"$TMP/short.jsonl" && mv "$TMP/short.jsonl" "$imp/index.jsonl"
"$EXP_PY" -c "import numpy as np; np.save('$imp/embeddings.npy', np.load('$imp/embeddings.npy')[:3])"
"$NS" embed "$OUT/data/ferry/data" --import "$imp" --states-out "$TMP/s.npy" 2>"$TMP/err" && fail "a short import was accepted"
grep -q "$imp: [0-9]* of [0-9]* texts have no embedding" "$TMP/err" || fail "short import: $(cat "$TMP/err")"
[ ! -e "$TMP/s.npy" ] || fail "a short import wrote rows"
expect_exit 30 "$NS" embed "$OUT/data/ferry/data" --texts-out "$TMP/t.jsonl" --states-out "$TMP/s.npy"
expect_exit 32 "$NS" embed "$OUT/data/ferry/data" --import "$TMP/no-such-import" --states-out "$TMP/s.npy"
echo ok
