#!/usr/bin/env bash
# experiments/embedplan_analyses.sh end to end at a tiny size: two generated domains (ferry, blocksworld,
# DATA_ROOT), the built-in, WL and text encoders (the tests' tiny BERT stands in for MiniLM), two
# reorderings; results.json and results.md carry every analysis — PCA (text by domain, WL per domain),
# fact order (d_order, d_action, shuffled-query Hit@k), Hit@k by cost-to-go, the misses' fact histograms —
# with numbers that add up; the plots when matplotlib is there; and the CLI pieces' errors.
. "$(dirname "$0")/lib.bash"
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3
"$PY" -c 'import numpy' 2>/dev/null || { echo "skip: no numpy for $PY"; exit 77; }
for d in ferry blocksworld; do
    mkdir -p "$TMP/root/$d/p"
    case $d in ferry) o="--cars 2" ;; blocksworld) o="--blocks 3" ;; esac
    # shellcheck disable=SC2086
    for s in 1 2 3 4; do expect_exit 0 "$NS" gen $d --seed $s $o -o "$TMP/root/$d/p/p$s.pddl"; done
    expect_exit 0 "$NS" data build domains/$d/domain.pddl "$TMP/root/$d/p" -o "$TMP/root/$d/data" --quiet
done
run() {
    DATA_ROOT="$TMP/root" DOMAINS="ferry blocksworld" MODEL=tests/fixtures/bert/tiny-bert EPOCHS=2 SHUFFLES=2 \
        POOL=16 PYTHON="$PY" NS_BIN="$(realpath -m "$NS")" bash experiments/embedplan_analyses.sh "$TMP/res" \
        >"$TMP/run.log" 2>&1 || { cat "$TMP/run.log"; fail "embedplan_analyses.sh"; }
    ! grep -qiE 'traceback|FAILED' "$TMP/run.log" || { cat "$TMP/run.log"; fail "embedplan_analyses.sh: errors"; }
}
run
"$PY" - "$TMP/res" <<'PYEOF' || fail "results.json"
import json, sys
out = sys.argv[1]
r = json.load(open(out + "/results.json"))
def need(c, msg):
    if not c:
        print("FAIL:", msg)
        sys.exit(1)
runs = r["runs"]
need(len(runs) == 2 * 2 * 3, f"{len(runs)} runs, expected 12 (2 domains x 2 protocols x 3 encoders)")
for x in runs:
    m, ctg, ms = x["metrics"], x["cost_to_go"], x["misses"]
    n = m["n"]
    need(n > 0 and sum(b["n"] for b in ctg) == n, f"{x['domain']} {x['protocol']} {x['encoder']}: cost-to-go counts")
    need(abs(sum(b["n"] * b["hit@1"] for b in ctg) - n * m["hit@1"]) < 1e-6, "cost-to-go Hit@1 does not add up")
    need(abs(sum(b["n"] * b["hit@5"] for b in ctg) - n * m["hit@5"]) < 1e-6, "cost-to-go Hit@5 does not add up")
    need(all(b["h"] is None or b["h"] >= 0 for b in ctg), "negative h bucket")
    t1, t5 = ms["top1"], ms["top5"]
    need(t1["n"] == round(n * (1 - m["hit@1"])), "top-1 misses != (1 - Hit@1) n")
    need(t5["n"] == round(n * (1 - m["hit@5"])), "Hit@5 misses != (1 - Hit@5) n")
    for t in (t1, t5):
        need(sum(b["n"] for b in t["hist"]) == t["n"] and len(t["hist"]) == 11, "miss histogram")
        need(t["n"] == 0 or t["q1"] <= t["median"] <= t["q3"], "quartiles")
    if x["protocol"] == "extrapolation":
        need(t1["other_problem"] == 0, "extrapolation pools are one problem's")
    if x["encoder"] == "text":
        s = x.get("shuffled_queries")
        need(s and s["reorderings"] == 2 and len(s["hit@5"]) == 2, "text: shuffled-query Hit@k")
fo = r["fact_order"]
need(set(fo) == {"ferry", "blocksworld"}, "fact order per domain")
for d, f in fo.items():
    need(f["reorderings"] == 2 and f["d_order_mean"] > 0 and f["d_action_mean"] > 0, f"{d}: fact-order distances")
    need(f["unchanged"] < 1, f"{d}: no reordering changed an embedding")
p = r["pca"]
need([x["domain"] for x in p["text"]["domains"]] == ["ferry", "blocksworld"], "text PCA domains")
need(len(p["text"]["variance_ratio"]) == 2 and 0 < sum(p["text"]["variance_ratio"]) <= 1 + 1e-6, "variance ratios")
need(set(p["wl"]) == {"ferry", "blocksworld"}, "WL PCA per domain")
md = open(out + "/results.md").read()
for h in ("## Hit@5 by the query state's cost to go", "## Misses", "## Fact-order sensitivity", "## PCA"):
    need(h in md, "results.md lacks " + h)
PYEOF
"$PY" -c '
import numpy as np, json, sys
xy = np.load(sys.argv[1] + "/pca-text.npy"); j = json.load(open(sys.argv[1] + "/pca-text.json"))
assert xy.shape == (j["rows"], 2), xy.shape
assert abs(xy.mean(axis=0)).max() < 1e-3 * (1 + abs(xy).max()), "coordinates not centred"
' "$TMP/res" || fail "pca-text.npy"
if "$PY" -c 'import matplotlib' 2>/dev/null; then
    for f in pca-text pca-wl cost_to_go misses; do [ -s "$TMP/res/$f.png" ] || fail "no $f.png"; done
else
    grep -q 'matplotlib not installed: no plot' "$TMP/run.log" || fail "no plot note"
fi
# resumable: a second run computes nothing new and writes the same tables
cp "$TMP/res/results.md" "$TMP/first.md"
run
diff <(grep -v '^Pools of' "$TMP/first.md") <(grep -v '^Pools of' "$TMP/res/results.md") >/dev/null ||
    fail "a second run changed the tables"
# the options' errors
expect_exit 30 "$NS" embed "$TMP/root/ferry/data" --shuffle-facts -3
grep -q "shuffle-facts" "$TMP/err" || fail "embed --shuffle-facts -3: $(cat "$TMP/err")"
expect_exit 30 "$NS" embed stats "$TMP/root/ferry/data" --shuffle-facts 1
expect_exit 30 "$NS" featurize pca "$TMP/res/ferry/emb-tiny-bert/states.npy" -o "$TMP/x.npy" --components 0
expect_exit 30 "$NS" featurize pca "$TMP/res/ferry/emb-tiny-bert/states.npy"
expect_exit 32 "$NS" featurize pca "$TMP/nope.npy" -o "$TMP/x.npy"
grep -q "nope.npy" "$TMP/err" || fail "pca: missing file not named: $(cat "$TMP/err")"
expect_exit 30 "$NS" featurize pca "$TMP/res/ferry/emb-tiny-bert/states.npy" "$TMP/res/ferry/wl-interpolation/states" -o "$TMP/x.npy"
grep -q "share one space" "$TMP/err" || fail "pca: mixed widths: $(cat "$TMP/err")"
expect_exit 31 "$NS" featurize pca "$TMP/res/ferry/emb-tiny-bert/states.npy" -o "$TMP/x.npy" --components 8
expect_exit 32 "$NS" eval "$TMP/res/ferry/split-extrapolation" "$TMP/res/ferry/extrapolation/model-text" --query-features "$TMP/nope.npy"
grep -q "nope.npy" "$TMP/err" || fail "eval --query-features: missing file not named"
expect_exit 31 "$NS" eval "$TMP/res/ferry/split-extrapolation" "$TMP/res/ferry/extrapolation/model-text" \
    --query-features "$TMP/res/ferry/emb-tiny-bert/actions.npy"
echo ok
