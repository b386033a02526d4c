#!/usr/bin/env bash
# The EmbedPlan reference-method table (paper: Appendix L, Tables 32/33, and
# the three-domain means of Table 7) under the Extrapolation protocol, for
# ferry, logistics and goldminer, 3 seeds.  Every seed has its own problems
# (generator seeds 1000·seed + i, sizes varied so that held-out problems bring
# objects no training problem has, as ACPBench's do) and its own split seed,
# so both the data and the held-out problems differ between seeds.
#
# Methods, each scored on the same test transitions and 128-state same-problem
# pools (worst-case tie-breaking as in the paper's Appendix L.2; random ties
# in the JSON and a second table):
#   non-learned floors (`nextstate reference`): identity, offset per ground
#     action, offset per schema, in the built-in literal space and in a TF-IDF
#     space of the EmbedPlan prompts (a text space, as the paper's are);
#   oracle (`nextstate reference --method strips`): lifted STRIPS induction;
#   learned (`nextstate train` + `eval`, the identical head): the world model on
#     built-in literal features, tabular one-hot (one row per training prompt),
#     and the null controls context-only (TF-IDF of the prompt without its
#     CURRENT STATE block) and random (a fixed 512-d Gaussian per prompt).
#
#   experiments/reference_table.sh [OUT]        (default results/reference_table)
# env: DOMAINS ("ferry logistics goldminer"), SEEDS ("1 2 3"), EPOCHS (15),
#      LR (1e-3; the paper's 4e-5 over 200 epochs is a GPU budget), PATIENCE (5),
#      JOBS (2: domain × seed cells run in parallel, one BLAS thread each),
#      PLANS (16), BUILD (build), PYTHON (/usr/bin/python3, for the tables and
#      the plot; the plot is skipped without matplotlib).
# Writes OUT/results.json, OUT/results.md, OUT/hit5.png, and per cell
# OUT/DOMAIN/sSEED/ (problems, dataset, split, features, models, JSON).
set -u
OUT=${1:-results/reference_table}
DOMAINS=${DOMAINS:-ferry logistics goldminer}
SEEDS=${SEEDS:-1 2 3}
EPOCHS=${EPOCHS:-15}
LR=${LR:-1e-3}
PATIENCE=${PATIENCE:-5}
JOBS=${JOBS:-2}
PLANS=${PLANS:-16}
. "$(dirname "$0")/lib.sh"
mkdir -p "$OUT"

# Problem sizes, one generated problem per entry (10 per domain and seed), spread
# so that a held-out problem can be larger than every training one (new objects).
sizes() {
    case $1 in
    ferry) echo "--cars 3 --locations 2|--cars 4 --locations 3|--cars 5 --locations 2|--cars 5 --locations 4|--cars 6 --locations 3|--cars 7 --locations 2|--cars 4 --locations 5|--cars 8 --locations 2|--cars 6 --locations 4|--cars 7 --locations 3" ;;
    logistics) echo "--packages 3 --cities 2|--packages 4 --cities 2|--packages 3 --cities 3|--packages 2 --cities 4|--packages 3 --cities 2 --size 3|--packages 4 --cities 3|--packages 2 --cities 3 --size 3|--packages 5 --cities 2|--packages 3 --cities 2 --airplanes 2|--packages 2 --cities 4 --airplanes 2" ;;
    goldminer) echo "--rows 3 --cols 3|--rows 3 --cols 4|--rows 4 --cols 4|--rows 3 --cols 5|--rows 4 --cols 5|--rows 5 --cols 4|--rows 3 --cols 6|--rows 5 --cols 5|--rows 3 --cols 7|--rows 4 --cols 6" ;;
    *) echo "unknown domain $1" >&2; return 1 ;;
    esac
}

# One (domain, seed) cell: data, split, features, every method.  Idempotent:
# a step whose JSON exists is skipped (delete the cell directory to redo it).
cell() {
    local d=$1 k=$2 dir="$OUT/$1/s$2"
    mkdir -p "$dir/problems"
    local log="$dir/log.txt"
    if [ ! -f "$dir/dataset/manifest.json" ]; then
        local i=0 o
        IFS='|' read -ra A <<<"$(sizes "$d")"
        for o in "${A[@]}"; do
            i=$((i + 1))
            # shellcheck disable=SC2086
            "$NS" gen "$d" --seed $((1000 * k + i)) $o -o "$dir/problems/p$(printf %02d $i).pddl" || return 1
        done
        "$NS" data build "$NS_ROOT/domains/$d/domain.pddl" "$dir/problems" -o "$dir/dataset" --plans "$PLANS" \
            --successors --time-limit 60 --quiet >>"$log" 2>&1 || return 1
    fi
    [ -f "$dir/split/split.json" ] ||
        "$NS" split extrapolation "$dir/dataset" -o "$dir/split" --pool-size 128 --seed "$k" >>"$log" 2>&1 || return 1
    local f
    for f in tfidf onehot context random; do
        [ -f "$dir/f-$f/features.json" ] && continue
        local extra=""
        [ "$f" = onehot ] && extra="--source prompt"
        # shellcheck disable=SC2086
        "$NS" featurize "$dir/dataset" --kind "$f" $extra --fit-on "$dir/split" --seed "$k" -o "$dir/f-$f" --quiet \
            >>"$log" 2>&1 || return 1
    done
    local m
    for m in identity offset-action offset-schema strips; do
        [ -s "$dir/ref-$m.json" ] || "$NS" reference "$dir/split" --method "$m" --seed 1 --json >"$dir/ref-$m.json" 2>>"$log" || return 1
    done
    for m in identity offset-action offset-schema; do
        [ -s "$dir/ref-$m-tfidf.json" ] || "$NS" reference "$dir/split" --method "$m" --state-features "$dir/f-tfidf/states" \
            --seed 1 --json >"$dir/ref-$m-tfidf.json" 2>>"$log" || return 1
    done
    local name spec
    for name in world onehot context random; do
        case $name in
        world) spec=builtin ;;
        random) spec="$dir/f-random/states.npy" ;;
        *) spec="$dir/f-$name/states" ;;
        esac
        [ -s "$dir/eval-$name.json" ] && continue
        "$NS" train "$dir/split" -o "$dir/model-$name.ckpt" --state-features "$spec" --epochs "$EPOCHS" --lr "$LR" \
            --patience "$PATIENCE" --seed "$k" --json --quiet >"$dir/train-$name.json" 2>>"$log" || return 1
        "$NS" eval "$dir/split" "$dir/model-$name.ckpt" --seed 1 --no-acc --latency 0 --json --quiet \
            >"$dir/eval-$name.json" 2>>"$log" || return 1
    done
    echo "done $d seed $k ($(tail -n 1 "$log" 2>/dev/null))"
}
export -f cell sizes
export NS OUT EPOCHS LR PATIENCE PLANS

t0=$(date +%s)
for d in $DOMAINS; do for k in $SEEDS; do echo "$d $k"; done; done |
    # shellcheck disable=SC2016
    xargs -P "$JOBS" -L 1 bash -c 'nice -n 10 bash -c "cell $0 $1" || echo "FAILED $0 seed $1 (see $OUT/$0/s$1/log.txt)"'
echo "cells finished in $(($(date +%s) - t0)) s"

PYTHONPATH="$(dirname "$0")" "$PYTHON" - "$OUT" "$DOMAINS" "$SEEDS" "$EPOCHS" "$LR" "$PATIENCE" <<'EOF'
import json, math, os, sys
from tables_lib import load  # experiments/tables_lib.py
out, domains, seeds = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
epochs, lr, patience = sys.argv[4], sys.argv[5], sys.argv[6]
try:
    import numpy as np
except ImportError:
    np = None

# (key, label, file in the cell directory, group)
METHODS = [
    ("chance", "chance (random ranking of the pool)", None, "floor"),
    ("identity", "Identity (literals)", "ref-identity.json", "non-learned"),
    ("offset-action", "Offset, ground action (literals)", "ref-offset-action.json", "non-learned"),
    ("offset-schema", "Offset, schema (literals)", "ref-offset-schema.json", "non-learned"),
    ("identity-tfidf", "Identity (TF-IDF prompt)", "ref-identity-tfidf.json", "non-learned"),
    ("offset-action-tfidf", "Offset, ground action (TF-IDF prompt)", "ref-offset-action-tfidf.json", "non-learned"),
    ("offset-schema-tfidf", "Offset, schema (TF-IDF prompt)", "ref-offset-schema-tfidf.json", "non-learned"),
    ("world", "World model, built-in literals (learned)", "eval-world.json", "learned"),
    ("onehot", "Tabular one-hot (learned)", "eval-onehot.json", "learned"),
    ("strips", "Lifted STRIPS induction (oracle)", "ref-strips.json", "oracle"),
    ("context", "Null: context-only (learned)", "eval-context.json", "null"),
    ("random", "Null: random vectors (learned)", "eval-random.json", "null"),
]
# Paper values (three-domain means over ferry, logistics, goldminer,
# Extrapolation, 3 seeds).  The text file ../shared/papers/001_2d0c90280ff9a76f.txt
# carries only the captions of Tables 7, 32 and 33 (their cells were images), so
# these come from the prose that quotes those tables; "≈" marks values derived
# from a stated difference.
PAPER = {
    "identity": ("≈36.8", "3.3", "H@1 3.3 (§4.2: '21.4% against 3.3% for Identity on the three reference domains of Table 7'); "
                 "H@5 = 56.8 − 20 (§4.3: 'improves on Identity by 20 pp Hit@5 (18 pp Hit@1)')"),
    "offset-action": ("≈46.0", "—", "schema-keyed offset minus the mean of App. L.4's differences: 'Keying the offset reference on "
                      "schemas rather than ground actions gains 5.7 points on Ferry and 3.3 on Logistics, while costing 6.6 on Goldminer' "
                      "(mean +0.8, so schema keying is the 'best Offset')"),
    "offset-schema": ("≈46.8", "≈7.4", "the best Offset: §4.3 'improves ... on the best Offset by 10 pp (14 pp)' below EmbedPlan's "
                      "56.8 (21.4)"),
    "world": ("56.8", "21.4", "EmbedPlan, Llama-3.3-70B embeddings (§4.3 / Table 7: '56.8% (21.4%) with Llama-3.3-70B embeddings'); "
              "ferry alone H@1 12.0 (Table 15)"),
    "onehot": ("—", "0.2 (logistics)", "App. L.1: 'on held-out problems 0.2%, below the 0.8% chance level' (logistics)"),
    "strips": ("99.8", "—", "§4.3 / Table 7: 'lifted STRIPS induction recovers the dynamics ... exactly (99.8%)'; "
               "App. L.1: disagreements 0 (ferry), 0 (logistics), 52 (goldminer)"),
    "context": ("0.0 (ferry)", "—", "App. L.2: worst-case ties give 0.0% Hit@5 (100.0% under best-case) on ferry"),
    "random": ("≈3.9 (chance)", "≈0.8 (chance)", "App. L.2: 'scores near chance under both' tie rules; chance 3.9% Hit@5, 0.8% Hit@1 (§3)"),
    "chance": ("3.9", "0.8", "§3: 5/128 and 1/128"),
}

def chance(cell):
    if np is None:
        return None
    p = os.path.join(cell, "split", "pools.npy")
    if not os.path.exists(p):
        return None
    pools = np.load(p)
    n = (pools >= 0).sum(axis=1).astype(float)
    return {"hit@1": float(np.mean(np.minimum(1, n) / n)), "hit@5": float(np.mean(np.minimum(5, n) / n)),
            "hit@10": float(np.mean(np.minimum(10, n) / n)), "mean_pool": float(n.mean())}

def unseen_actions(cell):
    """Share of test transitions whose ground action text occurs in no training transition (App. L.4)."""
    if np is None:
        return None
    try:
        man = load(os.path.join(cell, "dataset", "manifest.json"))
        T = np.load(os.path.join(cell, "dataset", "transitions.npy"))
        tr = np.load(os.path.join(cell, "split", "train.npy"))
        te = np.load(os.path.join(cell, "split", "test.npy"))
    except (OSError, ValueError, TypeError):
        return None
    ops = [p["operators"] for p in man["problems"]]
    text = lambda t: ops[T[t][0]][T[t][2]]
    seen = {text(t) for t in tr[:, 1]}
    return float(np.mean([text(t) not in seen for t in te[:, 1]])) if len(te) else None

raw = {}
cells = {}
for d in domains:
    for s in seeds:
        cell = os.path.join(out, d, "s" + s)
        info = load(os.path.join(cell, "ref-identity.json"))
        sp = load(os.path.join(cell, "split", "split.json")) or {}
        cells[f"{d}/s{s}"] = {"split": {k: sp.get(k) for k in ("protocol", "seed", "pool_size")},
                             "n_test": (info or {}).get("metrics", {}).get("n"),
                             "mean_pool": (info or {}).get("metrics", {}).get("mean_pool")}
        cells[f"{d}/s{s}"]["unseen_ground_action"] = unseen_actions(cell)
        tr = load(os.path.join(cell, "train-world.json"))
        if tr:
            cells[f"{d}/s{s}"].update({"train": tr.get("train"), "dev": tr.get("dev")})
        for key, _, fname, _ in METHODS:
            if fname is None:
                m = chance(cell)
                extra = {}
            else:
                j = load(os.path.join(cell, fname))
                if not j:
                    continue
                m = j["metrics"]
                extra = {k: j[k] for k in ("schemas", "disagreements") if k in j}
                t = load(os.path.join(cell, fname.replace("eval-", "train-"))) if fname.startswith("eval-") else None
                if t:
                    extra.update({"best_epoch": t.get("best_epoch"), "epochs_run": t.get("epochs_run"),
                                  "train_seconds": t.get("seconds")})
            if m is None:
                continue
            r = {k: m.get(k) for k in ("n", "mean_pool", "hit@1", "hit@5", "hit@10", "hit@1_worst", "hit@5_worst",
                                       "hit@10_worst", "mrr") if m.get(k) is not None}
            if fname is None:  # chance: both tie rules alike
                for k in ("hit@1", "hit@5", "hit@10"):
                    r[k + "_worst"] = r[k]
            r.update(extra)
            raw.setdefault(key, {}).setdefault(d, {})[s] = r

def mse(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, None, 0
    m = sum(xs) / len(xs)
    se = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs)) if len(xs) > 1 else 0.0
    return m, se, len(xs)

summary = {}
for key, _, _, _ in METHODS:
    for metric in ("hit@1_worst", "hit@5_worst", "hit@1", "hit@5"):
        per_seed_mean = []
        for s in seeds:
            v = [raw.get(key, {}).get(d, {}).get(s, {}).get(metric) for d in domains]
            per_seed_mean.append(sum(v) / len(v) if all(x is not None for x in v) else None)
        for d in domains:
            m, se, n = mse([raw.get(key, {}).get(d, {}).get(s, {}).get(metric) for s in seeds])
            summary.setdefault(key, {}).setdefault(d, {})[metric] = {"mean": m, "se": se, "n": n}
        m, se, n = mse(per_seed_mean)
        summary.setdefault(key, {}).setdefault("mean", {})[metric] = {"mean": m, "se": se, "n": n}

def cellstr(key, d, metric):
    v = summary.get(key, {}).get(d, {}).get(metric)
    if not v or v["mean"] is None:
        return "—"
    if v["n"] < len(seeds):
        return f"{100 * v['mean']:.1f} ± {100 * v['se']:.1f} (n={v['n']})"
    return f"{100 * v['mean']:.1f} ± {100 * v['se']:.1f}"

lines = []
P = lines.append
P(f"# Reference methods under Extrapolation — {', '.join(domains)} ({len(seeds)} seeds)")
P("")
P(f"Hit@k in %, mean ± SE over seeds {', '.join(seeds)} (each seed: its own generated problems and its own split seed). "
  f"Pools: the true successor and up to 127 other states of the same held-out problem; **worst-case tie-breaking** "
  f"(a candidate scoring exactly as the truth counts against it), the paper's convention for this table (App. L.2). "
  f"Learned rows: the identical EmbedPlan head (resmlp, 2 layers, out 128, AdamW, batch 128, τ 0.07, action loss "
  f"weight 2), lr {lr}, at most {epochs} epochs, early stop after {patience} epochs without dev gain, the epoch with "
  f"the best dev Hit@5 kept (dev = held-out training problems, never the test list). "
  f"\"mean\" = mean over the three domains per seed, then mean ± SE over seeds.")
P("")
for title, suffix in (("Hit@5 (worst-case ties)", "hit@5_worst"), ("Hit@1 (worst-case ties)", "hit@1_worst")):
    P(f"## {title}")
    P("")
    P("| method | " + " | ".join(domains) + " | mean | paper mean (Table 7/32/33) |")
    P("|---|" + "---|" * (len(domains) + 2))
    for key, label, _, _ in METHODS:
        pv = PAPER.get(key)
        pcol = "—" if not pv else (pv[0] if "hit@5" in suffix else pv[1])
        P(f"| {label} | " + " | ".join(cellstr(key, d, suffix) for d in domains) + f" | {cellstr(key, 'mean', suffix)} | {pcol} |")
    P("")
P("## Random tie-breaking (Hit@5 / Hit@1)")
P("")
P("| method | " + " | ".join(domains) + " | mean |")
P("|---|" + "---|" * (len(domains) + 1))
for key, label, _, _ in METHODS:
    P(f"| {label} | " + " | ".join(cellstr(key, d, "hit@5") + " / " + cellstr(key, d, "hit@1") for d in domains)
      + f" | {cellstr(key, 'mean', 'hit@5')} / {cellstr(key, 'mean', 'hit@1')} |")
P("")
P("## Data per cell")
P("")
P("| cell | train | dev | test | mean pool | test transitions with an unseen ground action | STRIPS schemas | STRIPS disagreements |")
P("|---|---|---|---|---|---|---|---|")
for c, v in cells.items():
    d, s = c.split("/s")
    st = raw.get("strips", {}).get(d, {}).get(s, {})
    mp, ua = v.get("mean_pool"), v.get("unseen_ground_action")
    mp = "—" if mp is None else f"{mp:.1f}"
    ua = "—" if ua is None else f"{100 * ua:.1f} %"
    P(f"| {c} | {v.get('train', '—')} | {v.get('dev', '—')} | {v.get('n_test', '—')} | "
      f"{mp} | {ua} | {st.get('schemas', '—')} | {st.get('disagreements', '—')} |")
P("")
P("## Paper values used")
P("")
P("From ../shared/papers/001_2d0c90280ff9a76f.txt (EmbedPlan).  That text keeps only the captions of Table 7, "
  "Table 32 (Extrapolation Hit@5, mean ± SE over 3 seeds) and Table 33 (Hit@1): their cells are not in it, so "
  "per-domain paper values are unavailable and the means below are the ones the prose quotes:")
P("")
for key, label, _, _ in METHODS:
    if key in PAPER:
        P(f"- {label}: Hit@5 {PAPER[key][0]}, Hit@1 {PAPER[key][1]} — {PAPER[key][2]}.")
P("- Char 3–5-gram features through the same head (not run here): 79.4 Hit@5, 41.9 Hit@1 (§4.3).")
P("")

def v(key, d, metric="hit@5_worst"):
    x = summary.get(key, {}).get(d, {}).get(metric, {}).get("mean")
    return float("nan") if x is None else 100 * x

def rng(vals):
    vals = [x for x in vals if x is not None]
    return "—" if not vals else f"{100 * min(vals):.0f}–{100 * max(vals):.0f} %"

unseen = {d: rng([cells.get(f"{d}/s{s}", {}).get("unseen_ground_action") for s in seeds]) for d in domains}
dis = {d: [raw.get("strips", {}).get(d, {}).get(s, {}).get("disagreements") for s in seeds] for d in domains}
sch = ", ".join(f"{d} {v('offset-schema', d) - v('offset-action', d):+.1f}" for d in domains)
def notes():  # written for the default domains (ferry, logistics, goldminer)
    P("## Notes: why the numbers differ from the paper's")
    P("")
    P(f"- **Lifted STRIPS induction** reaches {v('strips', 'mean'):.1f} % Hit@5 on the three-domain mean (paper 99.8 %). "
      f"It is exact on ferry and logistics, with 0 disagreeing observations as in the paper. In goldminer, fire-laser and "
      f"detonate-bomb have effects that depend on the target cell: a shot at a clear cell adds nothing, and a shot at "
      f"soft rock deletes different atoms from a shot at hard rock. Observed add and delete sets therefore change from "
      f"cell to cell, and the first-observation schema gets some of them wrong. Disagreements per seed: "
      + ", ".join(f"{d} {dis[d]}" for d in domains) + " (paper: 52 on goldminer). We have more of them because "
      f"`--successors` keeps every applicable transition of the DAG states, not only on-plan steps. Worst-case Hit@1 is "
      f"{v('strips', 'goldminer', 'hit@1_worst'):.1f} % on goldminer.")
    P("- **Null controls.** *Context-only* gives every state of a problem the same vector, so each candidate in a "
      "same-problem pool ties the truth. Worst-case ties then score exactly 0.0 (paper App. L.2: 0.0 on ferry; it "
      "gets 100 % under best-case ties). Random ties put it at chance (the random-ties table). *Random vectors* carry no "
      "state information but give each state a distinct vector, so they land at chance under both rules "
      f"({v('random', 'mean'):.1f} % Hit@5 and {v('random', 'mean', 'hit@1_worst'):.1f} % Hit@1, against chance "
      f"{v('chance', 'mean'):.1f} / {v('chance', 'mean', 'hit@1_worst'):.1f}). The chance row is computed from the actual pools: "
      "a held-out problem with fewer than 128 states gives shorter pools, so chance sits above 5/128. *Tabular one-hot* "
      "keys a row on the full prompt, so every held-out state is unseen. `featurize` gives unseen states an all-zero "
      "row, which is one vector shared by every candidate: 0.0 under worst-case ties and chance under random ties. The "
      "paper's 0.2 % Hit@1 (logistics) comes from distinct untrained random rows, which land near chance rather than "
      "tying exactly.")
    P(f"- **Identity and offsets sit far above the paper's floors in the literal space** (identity "
      f"{v('identity', 'mean'):.1f} vs ≈36.8; best offset {max(v('offset-action', 'mean'), v('offset-schema', 'mean')):.1f} "
      "vs ≈46.8). The paper's floors work in the Llama-3.3-70B embedding space, where an action does not move a state "
      "by a constant vector. In the built-in bag of literals, a STRIPS action moves every state by exactly add − del. "
      "The per-ground-action offset is then a grounded STRIPS model, exact for every ground action seen in training. It "
      "falls back to the global mean only for unseen ground actions, and it fails on goldminer's cell-dependent effects. "
      "Generated problems name objects the way ACPBench does (c0…, l0…, f0-0f…), so a held-out problem shares most "
      "objects with the training problems. Test transitions with a ground action never seen in training: "
      + ", ".join(f"{d} {unseen[d]}" for d in domains) + " (paper: 57.6 % ferry, 65.5 % logistics, 11.7 % goldminer). "
      f"Keying on the schema instead changes Hit@5 by {sch} points (paper: +5.7, +3.3, −6.6). In literal space, "
      "averaging the displacements of one schema over its groundings mixes object-specific effects. The paper's gain "
      "from schema keying on ferry and logistics comes from its many unseen groundings, which a ground-action key can "
      "only send to the global mean.")
    P("- **Identity and offsets in a text space (TF-IDF of the prompt)** come closer to the paper's floors (mean "
      f"identity {v('identity-tfidf', 'mean'):.1f}, offsets {v('offset-action-tfidf', 'mean'):.1f} / "
      f"{v('offset-schema-tfidf', 'mean'):.1f}). Ferry identity is near 0 because word 1–2-grams do not tie a car to its "
      "location: \"Car c0 is at location l0\" gives \"car c0\" and \"location l0\". Many states of a problem therefore "
      "share one vector with s, and s itself (in the pool) and its twins outrank s′.")
    P(f"- **The world model on built-in literals** ({v('world', 'mean'):.1f} % Hit@5, "
      f"{v('world', 'mean', 'hit@1_worst'):.1f} % Hit@1) is far above the paper's EmbedPlan row (56.8 / 21.4, "
      "Llama-3.3-70B embeddings). The paper's ordering on its own representations (Table 7) puts literals and sparse "
      "text features above LLM embeddings for the same reason as above: an action edits a few literals, which is a "
      "near-linear change in this space. On ferry and logistics it matches the exact per-ground-action offset. Goldminer "
      f"({v('world', 'goldminer'):.1f} ± {100 * (summary['world']['goldminer']['hit@5_worst']['se'] or 0):.1f}) is lower. "
      "Larger held-out grids bring cells whose atoms have no column in the training vocabulary, so those atoms are "
      "invisible to the head, while lifted STRIPS abstracts objects away. Per seed: "
      + ", ".join(f"{100 * raw['world']['goldminer'][s_]['hit@5_worst']:.1f}" for s_ in seeds
                  if s_ in raw.get('world', {}).get('goldminer', {}))
      + " %, lowest where more test transitions use unseen groundings.")
    small = min(cells, key=lambda c: cells[c].get("mean_pool") or 1e9)
    P("- **Seeds.** Each seed generates its own ten problems and draws its own problem split, so the SE mixes data, "
      "split and training noise. The paper (App. L.5) notes that its three seeds shared held-out problems in two of "
      f"three cases. The held-out problems differ in size: in {small} they are small, giving "
      f"{cells[small].get('n_test')} test transitions and pools of {cells[small].get('mean_pool') or 0:.0f} candidates "
      "on average. Learned rows use a CPU budget (lr "
      f"{lr}, ≤ {epochs} epochs, patience {patience}) instead of the paper's 4e-5 × 200 epochs. The null and one-hot "
      "controls stop after the patience window because dev Hit@5 never rises above chance.")
if {"ferry", "logistics", "goldminer"} <= set(domains):
    notes()
else:
    P("(The notes on why the numbers differ from the paper's are written for the default domains ferry, logistics "
      "and goldminer; they are left out for this subset.)")
    P("")
P("")
with open(os.path.join(out, "results.json"), "w") as f:
    json.dump({"domains": domains, "seeds": seeds, "epochs": epochs, "lr": lr, "patience": patience,
               "tie_rule_primary": "worst", "cells": cells, "summary": summary, "per_seed": raw,
               "paper": {k: {"hit@5": v[0], "hit@1": v[1], "source": v[2]} for k, v in PAPER.items()}}, f, indent=1)
with open(os.path.join(out, "results.md"), "w") as f:
    f.write("\n".join(lines) + "\n")
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    keys = [k for k, _, _, _ in METHODS if k in summary]
    fig, ax = plt.subplots(figsize=(11, 4.5))
    w = 0.8 / (len(domains) + 1)
    for i, d in enumerate(domains + ["mean"]):
        ys = [100 * (summary[k][d]["hit@5_worst"]["mean"] or 0) for k in keys]
        es = [100 * (summary[k][d]["hit@5_worst"]["se"] or 0) for k in keys]
        ax.bar([x + i * w for x in range(len(keys))], ys, w, yerr=es, label=d, capsize=2)
    ax.set_xticks([x + 0.4 - w / 2 for x in range(len(keys))])
    ax.set_xticklabels(keys, rotation=30, ha="right")
    ax.set_ylabel("Hit@5 (%), worst-case ties")
    ax.set_title("Extrapolation, mean ± SE over seeds")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "hit5.png"), dpi=110)
    print("wrote", os.path.join(out, "hit5.png"))
except ImportError:
    print("matplotlib not installed: no plot")
print("\n".join(lines))
EOF
echo "wrote $OUT/results.json and $OUT/results.md"
