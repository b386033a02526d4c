#!/usr/bin/env bash
# EmbedPlan pool-size sweep (paper: Table 2, Appendix B.4 / Table 10): the
# world model trained once per (domain, seed) under Interpolation, then its
# test transitions ranked in fresh pools of 128, 512 and 1000 states and in
# the full pool — every observed state of the domain's dataset, no sampling
# (`nextstate eval --pool-sweep`).  Hit@1/5/10 (random ties; worst-case in
# the JSON), mean ± SE over seeds, and the inflation = 128-way value ÷
# full-pool value.
#
#   experiments/pool_sweep.sh [OUT]            (default results/pool_sweep)
# env: DOMAINS   ("ferry logistics blocksworld")
#      SEEDS     ("1 2 3"; split, training and pool seeds)
#      POOLS     ("128,512,1000,full"; the first must be 128 for the inflation column)
#      DATA_ROOT (empty: build each domain's dataset from its ACPBench problems under OUT/DOMAIN/data,
#                `data build --time-limit $TL`; else read DATA_ROOT/DOMAIN/data, e.g. the suite datasets of
#                experiments/suite_embedplan9.sh — results/suite — which are larger, as the paper's are)
#      ENCODER   (builtin: the built-in literal encoder; else a state-features spec, "{domain}" and
#                "{seed}" replaced, e.g. "results/f/{domain}/states.npy")
#      ACTION_ENCODER (builtin; same substitutions)
#      EPOCHS (30), LR (1e-3; the paper's 4e-5 × 200 epochs is a GPU budget), PATIENCE (5), TL (10 s),
#      TABLES_ONLY=1 (only rewrite the tables from OUT), BUILD (build), NS_BIN,
#      PYTHON (/usr/bin/python3; the plot is skipped without matplotlib)
# Writes OUT/results.json, OUT/results.md, OUT/pool_sweep.png and per cell
# OUT/DOMAIN/sSEED/ (split, model.ckpt, train.json, eval.json, log.txt).
# Resumable: a step whose output exists is skipped (delete it to redo).
# One cell at a time (the machine is small); each uses one BLAS thread.
set -u
. "$(dirname "$0")/lib.sh"
OUT=${1:-results/pool_sweep}
DOMAINS=${DOMAINS:-ferry logistics blocksworld}
SEEDS=${SEEDS:-1 2 3}
POOLS=${POOLS:-128,512,1000,full}
DATA_ROOT=${DATA_ROOT:-}
ENCODER=${ENCODER:-builtin}
ACTION_ENCODER=${ACTION_ENCODER:-builtin}
EPOCHS=${EPOCHS:-30}
mkdir -p "$OUT"

spec() { local s=${1//\{domain\}/$2}; echo "${s//\{seed\}/$3}"; } # SPEC DOMAIN SEED

data_of() { # DOMAIN → its dataset directory (built from ACPBench when DATA_ROOT is empty)
    if [ -n "$DATA_ROOT" ]; then
        echo "$DATA_ROOT/$1/data"
        return
    fi
    ns_acp_dataset "$1" "$OUT/$1/data" "$OUT/$1/data.log"
}

cell() { # DOMAIN SEED
    local d=$1 k=$2 dir="$OUT/$1/s$2" data
    mkdir -p "$dir"
    local log="$dir/log.txt"
    data=$(data_of "$d") || return 1
    [ -f "$data/manifest.json" ] || { echo "no dataset at $data" >>"$log"; return 1; }
    [ -f "$dir/split/split.json" ] ||
        "$NS" split interpolation "$data" -o "$dir/split" --pool-size 128 --seed "$k" >>"$log" 2>&1 || return 1
    local sf af
    sf=$(spec "$ENCODER" "$d" "$k")
    af=$(spec "$ACTION_ENCODER" "$d" "$k")
    if [ ! -s "$dir/train.json" ]; then
        "$NS" train "$dir/split" -o "$dir/model.ckpt" --state-features "$sf" --action-features "$af" --epochs "$EPOCHS" \
            --lr "$LR" --patience "$PATIENCE" --seed "$k" --json --quiet >"$dir/train.json.tmp" 2>>"$log" || return 1
        mv "$dir/train.json.tmp" "$dir/train.json"
    fi
    if [ ! -s "$dir/eval.json" ]; then
        "$NS" eval "$dir/split" "$dir/model.ckpt" --seed "$k" --no-acc --latency 0 --pool-sweep "$POOLS" --json --quiet \
            >"$dir/eval.json.tmp" 2>>"$log" || return 1
        mv "$dir/eval.json.tmp" "$dir/eval.json"
    fi
    echo "done $d seed $k"
}

if [ -z "${TABLES_ONLY:-}" ]; then
    t0=$(date +%s)
    for d in $DOMAINS; do
        for k in $SEEDS; do
            nice -n 10 bash -c "$(declare -f spec data_of cell); $(declare -p NS BENCH OUT DATA_ROOT ENCODER \
                ACTION_ENCODER EPOCHS LR PATIENCE TL POOLS); cell $d $k" || echo "FAILED $d seed $k (see $OUT/$d/s$k/log.txt)"
        done
    done
    echo "cells finished in $(($(date +%s) - t0)) s"
fi

PYTHONPATH="$(dirname "$0")" "$PYTHON" - "$OUT" "$DOMAINS" "$SEEDS" "$EPOCHS" "$LR" "$ENCODER" "${DATA_ROOT:-acpbench}" <<'EOF'
import json, math, os, sys
out, domains, seeds = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
epochs, lr, encoder, data = sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7]

from tables_lib import load, mean_se as mse  # experiments/tables_lib.py

# Paper values quoted in the text (Table 10's cells are images): full-pool Hit@5 / Hit@10 and
# the inflation 128-way ÷ full, Interpolation, Llama-3.3-70B, 3 seeds; the 128-way Hit@1 from §4.1.
PAPER = {
    "ferry": {"states": 46205, "hit@1_128": 99.0, "hit@5_full": 86.9, "hit@10_full": 95.0,
              "infl@1": 2.8, "infl@5": 1.15, "infl@10": 1.05},
    "logistics": {"states": 13373, "hit@1_128": 96.3, "hit@5_full": 74.9, "hit@10_full": 88.0,
                  "infl@1": 3.0, "infl@5": 1.33, "infl@10": 1.14},
}
raw, cells = {}, {}
for d in domains:
    for s in seeds:
        cdir = os.path.join(out, d, "s" + s)
        e = load(os.path.join(cdir, "eval.json"))
        t = load(os.path.join(cdir, "train.json")) or {}
        sp = load(os.path.join(cdir, "split", "split.json")) or {}
        if not e or "pool_sweep" not in e:
            continue
        cells[f"{d}/s{s}"] = {"test": e["metrics"]["n"], "datasets": sp.get("datasets"),
                             "best_epoch": t.get("best_epoch"), "epochs_run": t.get("epochs_run"),
                             "train_seconds": t.get("seconds"), "split_pool_hit": e["metrics"]["hit@5"]}
        for row in e["pool_sweep"]:
            raw.setdefault(d, {}).setdefault(str(row["pool"]), {})[s] = row
pools = []
for d in raw:
    for p in raw[d]:
        if p not in pools:
            pools.append(p)
pools.sort(key=lambda p: float("inf") if p == "full" else int(p))
summary = {}
for d in raw:
    for p in pools:
        rows = raw[d].get(p, {})
        entry = {"mean_pool": mse([r["mean_pool"] for r in rows.values()])[0]}
        for k, name in enumerate(("hit@1", "hit@5", "hit@10")):
            m, se, n = mse([r["hit"][k] for r in rows.values()])
            entry[name] = {"mean": m, "se": se, "n": n}
            m, se, n = mse([r["hit_worst"][k] for r in rows.values()])
            entry[name + "_worst"] = {"mean": m, "se": se, "n": n}
        summary.setdefault(d, {})[p] = entry
    # inflation per seed (128 ÷ full), then mean ± SE
    if "128" in raw[d] and "full" in raw[d]:
        for k, name in enumerate(("infl@1", "infl@5", "infl@10")):
            xs = [raw[d]["128"][s]["hit"][k] / raw[d]["full"][s]["hit"][k]
                  for s in raw[d]["128"] if s in raw[d]["full"] and raw[d]["full"][s]["hit"][k] > 0]
            m, se, n = mse(xs)
            summary[d][name] = {"mean": m, "se": se, "n": n}

def pct(v):
    if not v or v["mean"] is None:
        return "—"
    return f"{100 * v['mean']:.1f} ± {100 * v['se']:.1f}" if v["n"] > 1 else f"{100 * v['mean']:.1f}"

def ratio(v):
    if not v or v["mean"] is None:
        return "—"
    return f"{v['mean']:.2f}× ± {v['se']:.2f}" if v["n"] > 1 else f"{v['mean']:.2f}×"

L = []
P = L.append
P(f"# Pool-size sweep under Interpolation (paper Table 2 / Table 10)")
P("")
P(f"Data: {data}; encoder: {encoder}; seeds {', '.join(seeds)} (split, training and pool seed each). "
  f"Model: `nextstate train` (resmlp head, lr {lr}, ≤ {epochs} epochs, dev-selected). Each test transition is "
  f"ranked against fresh pools of N states drawn uniformly from the dataset (`eval --pool-sweep`), and against "
  f"every state of the dataset (full). Hit@k in %, random tie-breaking, mean ± SE over seeds (no ± with one seed). "
  f"Inflation = 128-way ÷ full, per seed, then averaged.")
P("")
P("| domain | pool | mean pool | Hit@1 | Hit@5 | Hit@10 |")
P("|---|---|---|---|---|---|")
for d in domains:
    for p in pools:
        e = summary.get(d, {}).get(p)
        if not e:
            continue
        P(f"| {d} | {p} | {e['mean_pool']:.0f} | {pct(e['hit@1'])} | {pct(e['hit@5'])} | {pct(e['hit@10'])} |")
P("")
P("| domain | states | inflation Hit@1 | inflation Hit@5 | inflation Hit@10 | paper (Hit@1 / @5 / @10) |")
P("|---|---|---|---|---|---|")
for d in domains:
    s = summary.get(d, {})
    full = s.get("full", {}).get("mean_pool")
    pp = PAPER.get(d)
    pcol = f"{pp['infl@1']}× / {pp['infl@5']}× / {pp['infl@10']}× ({pp['states']} states)" if pp else "—"
    P(f"| {d} | {full:.0f} | {ratio(s.get('infl@1'))} | {ratio(s.get('infl@5'))} | {ratio(s.get('infl@10'))} | {pcol} |"
      if full else f"| {d} | — | — | — | — | {pcol} |")
P("")
P("Paper (Llama-3.3-70B, 3 seeds): full-pool Hit@5 86.9 % (ferry) and 74.9 % (logistics), Hit@10 95.0 % and "
  "88.0 %; 128-way Hit@1 99.0 % and 96.3 %.")
P("")
P("| cell | test transitions | best epoch / run | training s |")
P("|---|---|---|---|")
for c, v in cells.items():
    ts = v.get("train_seconds")
    P(f"| {c} | {v['test']} | {v.get('best_epoch')} / {v.get('epochs_run')} | {ts:.0f} |" if ts else
      f"| {c} | {v['test']} | {v.get('best_epoch')} / {v.get('epochs_run')} | — |")
P("")
with open(os.path.join(out, "results.json"), "w") as f:
    json.dump({"domains": domains, "seeds": seeds, "encoder": encoder, "data": data, "epochs": epochs, "lr": lr,
               "pools": pools, "summary": summary, "cells": cells, "per_seed": raw, "paper": PAPER}, f, indent=1)
with open(os.path.join(out, "results.md"), "w") as f:
    f.write("\n".join(L) + "\n")
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, (k, name) in zip(axes, ((0, "Hit@1"), (1, "Hit@5"))):
        for d in domains:
            xs, ys, es = [], [], []
            for p in pools:
                e = summary.get(d, {}).get(p)
                if not e or e[name.lower()]["mean"] is None:
                    continue
                xs.append(e["mean_pool"])
                ys.append(100 * e[name.lower()]["mean"])
                es.append(100 * (e[name.lower()]["se"] or 0))
            if xs:
                ax.errorbar(xs, ys, yerr=es, marker="o", capsize=2, label=d)
        ax.set_xscale("log")
        ax.set_xlabel("candidates per query (last point: full pool)")
        ax.set_ylabel(name + " (%)")
        ax.set_title(name + " vs pool size, Interpolation")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "pool_sweep.png"), dpi=110)
    print("wrote", os.path.join(out, "pool_sweep.png"))
except ImportError:
    print("matplotlib not installed: no plot")
print("\n".join(L))
EOF
echo "wrote $OUT/results.json and $OUT/results.md"
