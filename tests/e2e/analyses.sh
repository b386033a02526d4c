#!/usr/bin/env bash
# experiments/embedplan_analyses.sh end to end at a tiny size: two generated domains (ferry, blocksworld,
# DATA_ROOT), the built-in, WL and text encoders (the tests' tiny BERT stands in for MiniLM), two
# reorderings; results.json and results.md carry every analysis — PCA (text by domain, WL per domain),
# fact order (d_order, d_action, shuffled-query Hit@k), Hit@k by cost-to-go, the misses' fact histograms —
# with numbers that add up; the plots when matplotlib is there; and the CLI pieces' errors.
. "$(dirname "$0")/lib.bash"
cd "$(dirname "$0")/../.."
PY=$EXP_PY
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
# latent distance alignment (H.1): counts, |r| <= 1, the pairs' d recomputed from the encoders' own rows, the
# correlations recomputed from the pairs (partial r by the textbook formula), and shuffled pairs must differ
import numpy as np
la = r["lda"]
need(set(la) == {"ferry", "blocksworld"}, "LDA per domain")
root = out.rsplit("/", 1)[0] + "/root"
for d, per in la.items():
    ds = f"{root}/{d}/data"
    h = np.load(ds + "/state_hstar.npy")
    prob = np.load(ds + "/state_problem.npy")
    need(set(per) == {"builtin", "wl", "text"}, f"{d}: LDA encoders {sorted(per)}")
    need(per["builtin"]["n"] == int((h >= 0).sum()), f"{d}: literal pairs != states with h* >= 0")
    for e, st in per.items():
        need(st["n"] > 2 and st["problems"] > 0, f"{d} {e}: LDA pairs")
        for k in ("pearson", "spearman", "partial_pearson", "partial_spearman", "r_len_h", "r_len_d", "pearson_shuffled",
                  "within_problem"):
            need(st[k] is not None and abs(st[k]) <= 1 + 1e-9, f"{d} {e}: {k} = {st[k]}")
        x = np.load(f"{out}/{d}/lda/pairs-{e}.npy")
        ids, dist, hh, ln = x[:, 0].astype(int), x[:, 1], x[:, 2], x[:, 3]
        need(len(x) == st["n"] and (hh == h[ids]).all() and (hh >= 0).all(), f"{d} {e}: pairs' h* misaligned")
        if e == "builtin":  # the literal sets by name: |s ∩ g| / sqrt(|s| |g|)
            man, bits = json.load(open(ds + "/manifest.json")), np.load(ds + "/states.npy")
            for i, di, li in zip(ids, dist, ln):
                pr = man["problems"][prob[i]]
                true = {a for j, a in enumerate(pr["atoms"]) if (int(bits[i, j // 64]) >> (j % 64)) & 1}
                cos = len(true & set(pr["goal"])) / np.sqrt(len(true) * len(set(pr["goal"]) & set(pr["atoms"])))
                need(abs(di - (1 - cos)) < 1e-9 and li == len(true), f"{d}: literal pair of state {i}")
        else:
            S = np.load(f"{out}/{d}/emb-tiny-bert/states.npy" if e == "text" else f"{out}/{d}/lda/wl-states.npy")
            G = np.load(f"{out}/{d}/lda/goals-tiny-bert.npy" if e == "text" else f"{out}/{d}/lda/wl-goals.npy")
            rows = json.load(open(f"{out}/{d}/lda/goal-problems.json")) if e == "text" else list(range(len(G)))
            g = G[[rows.index(p) for p in prob[ids]]]
            cos = (S[ids] * g).sum(1) / np.linalg.norm(S[ids], axis=1) / np.linalg.norm(g, axis=1)
            need(np.allclose(dist, 1 - cos, atol=1e-5), f"{d} {e}: d is not 1 - cos(e_s, e_g) of the pairs")
        c = np.corrcoef([dist, hh, ln])
        need(abs(c[0, 1] - st["pearson"]) < 1e-6, f"{d} {e}: Pearson r does not follow from the pairs")
        part = (c[0, 1] - c[0, 2] * c[1, 2]) / np.sqrt((1 - c[0, 2] ** 2) * (1 - c[1, 2] ** 2))
        need(abs(part - st["partial_pearson"]) < 1e-6, f"{d} {e}: partial r {st['partial_pearson']} != {part}")
        shuf = [np.corrcoef(dist, np.random.default_rng(s).permutation(hh))[0, 1] for s in range(5)]
        need(max(abs(v - st["pearson"]) for v in shuf) > 1e-6, f"{d} {e}: r unchanged by shuffling the pairs")
    # the goal prompt: a state prompt's template, the goal clauses in its CURRENT STATE block
    for t in map(json.loads, open(f"{out}/{d}/lda/goal-prompts.jsonl")):
        head, rest = t.split("\n\n### CURRENT STATE ###\n")
        cur, goal = rest.split("\n\n### GOAL DESCRIPTION ###\n")
        need(cur == goal and head.startswith("### PROBLEM DESCRIPTION ###"), f"{d}: goal prompt {t[:80]}")
md = open(out + "/results.md").read()
for h in ("## Hit@5 by the query state's cost to go", "## Misses", "## Fact-order sensitivity", "## PCA",
          "## Latent distance alignment"):
    need(h in md, "results.md lacks " + h)
PYEOF
"$PY" -c '
import numpy as np, json, sys
xy = np.load(sys.argv[1] + "/pca-text.npy"); j = json.load(open(sys.argv[1] + "/pca-text.json"))
assert xy.shape == (j["rows"], 2), xy.shape
assert abs(xy.mean(axis=0)).max() < 1e-3 * (1 + abs(xy).max()), "coordinates not centred"
' "$TMP/res" || fail "pca-text.npy"
if "$PY" -c 'import matplotlib' 2>/dev/null; then
    for f in pca-text pca-wl cost_to_go misses lda; do [ -s "$TMP/res/$f.png" ] || fail "no $f.png"; done
else
    grep -q 'matplotlib not installed: no plot' "$TMP/run.log" || fail "no plot note"
fi
# LDA's state prompts (`data export --text`, whose template the goal prompts take) are the prompts `embed` embedded
"$NS" data export "$TMP/root/ferry/data" --text | "$PY" -c '
import json, sys
seen = {}
for l in sys.stdin:
    r = json.loads(l)
    seen[r["state"]], seen[r["next_state"]] = r["state_text"], r["next_state_text"]
ids = sorted(seen)
json.dump(ids, open(sys.argv[1] + "/ids.json", "w"))
open(sys.argv[1] + "/st.jsonl", "w").write("".join(json.dumps(seen[i]) + "\n" for i in ids))
' "$TMP" || fail "export --text"
expect_exit 0 "$NS" embed texts "$TMP/st.jsonl" -o "$TMP/st.npy" --model tests/fixtures/bert/tiny-bert --quiet
"$PY" -c '
import json, sys, numpy as np
a, b = np.load(sys.argv[1] + "/st.npy"), np.load(sys.argv[1] + "/res/ferry/emb-tiny-bert/states.npy")
ids = json.load(open(sys.argv[1] + "/ids.json"))
assert len(ids) > 0 and np.abs(a - b[ids]).max() < 1e-5, np.abs(a - b[ids]).max()
' "$TMP" || fail "exported state prompts are not the embedded ones"
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
