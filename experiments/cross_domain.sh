#!/usr/bin/env bash
# Cross-Domain transfer, EmbedPlan Table 16: train the world model on every
# transition of one domain (`nextstate split cross-domain SRC TGT`: the source's
# transitions, 10 % of them held out as dev for epoch selection) and test it on
# every transition of each other domain, 128-state pools of the target domain.
# 9 × 9 matrix of Hit@5 (diagonal empty), row and column means, chance, and the
# untrained model (`--epochs 0`: the initialised heads, the paper's 4.2 % row).
#
# Encoders must be domain-agnostic, i.e. give a target state columns that mean
# the same as the source's:
#   tfidf  TF-IDF word 1–2-grams of the prompt, fitted on the source's training transitions, applied to
#          the target with the source's vocabulary (`featurize --vocab`); actions likewise
#   char   TF-IDF character 3–5-grams, the same way
#   minilm frozen all-MiniLM-L6-v2 prompt embeddings (when the weights are present and every dataset has
#          at most MINILM_MAX_STATES states)
# The built-in literal encoder is left out: its vocabulary is the source's ground atoms, which no
# target state contains, so every target state would be the zero vector (and WL colours are
# likewise domain-specific).  One model per source is trained once and evaluated on the eight
# targets (`eval --state-features SRC,TGT`).
#
#   experiments/cross_domain.sh [OUT]      (default results/cross_domain_$DATA)
# env: DATA (acp, default: every target transition is a test query, so even acp's small domains
#      give 20–4574 queries, and sources train in seconds; suite: the large datasets, hours), ENCODERS
#      ("tfidf char minilm"), EPOCHS (40), LR (1e-3; the paper's 4e-5 × 250 epochs is a GPU budget),
#      PATIENCE (5), SEED (1), JOBS (2: sources in parallel), DOMAINS (the nine), TRAIN_OPTS,
#      TABLES_ONLY=1, and lib.sh's.  Resumable (cells whose eval JSON exists are skipped).
# Writes OUT/results.json, OUT/results.md, OUT/matrix.png; per source OUT/SRC/ (splits, features,
# models, train-ENC.json, eval-ENC-TGT.json, eval-untrained-ENC-TGT.json).
set -u
DATA=${DATA:-acp}
# shellcheck source=experiments/lib.sh
. "$(dirname "$0")/lib.sh"
OUT=$(realpath -m "${1:-results/cross_domain_$DATA}")
ENCODERS=${ENCODERS:-tfidf char minilm}
EPOCHS=${EPOCHS:-40}
JOBS=${JOBS:-2}
DOMAINS=${DOMAINS:-$NS_ALL_DOMAINS}
mkdir -p "$OUT"
if [[ " $ENCODERS " == *" minilm "* ]]; then
    why=""
    ns_have_model "$MODEL" || why="no $MODEL weights (scripts/fetch_models.sh)"
    if [ -z "$why" ] && [ "${TABLES_ONLY:-0}" != 1 ]; then
        for d in $DOMAINS; do
            data=$(ns_data "$d") || exit 1
            n=$(ns_nstates "$data")
            [ "$n" -le "$MINILM_MAX_STATES" ] || { why="$d has $n states > MINILM_MAX_STATES=$MINILM_MAX_STATES"; break; }
        done
    fi
    if [ -n "$why" ]; then
        echo "minilm column skipped: $why"
        ENCODERS=$(echo " $ENCODERS " | sed 's/ minilm / /' | xargs)
    fi
fi
export OUT ENCODERS EPOCHS DOMAINS

# Embeddings first, one domain per job (every source needs every target's).
if [[ " $ENCODERS " == *" minilm "* ]] && [ "${TABLES_ONLY:-0}" != 1 ]; then
    # shellcheck disable=SC2016
    for d in $DOMAINS; do echo "$d"; done |
        xargs -P "$JOBS" -I{} bash -c 'ns_embed "$(ns_data {})" "$(ns_emb_dir {})" "$OUT/embed.log" >/dev/null || echo "FAILED embed {}"'
fi

cross_source() { # SRC
    local s=$1 t0 src enc t first="" tdata
    t0=$(date +%s)
    mkdir -p "$OUT/$s"
    src=$(ns_data "$s") || return 1
    for t in $DOMAINS; do
        [ "$t" = "$s" ] && continue
        tdata=$(ns_data "$t") || return 1
        [ -f "$OUT/$s/split-$t/split.json" ] ||
            "$NS" split cross-domain "$src" "$tdata" -o "$OUT/$s/split-$t" --pool-size 128 --seed "$SEED" >>"$OUT/$s/log" 2>&1 || return 1
        [ -n "$first" ] || first=$t
    done
    for enc in $ENCODERS; do
        local ss sa ts ta
        if [ "$enc" = minilm ]; then
            read -r ss sa <<<"$(ns_embed "$src" "$(ns_emb_dir "$s")" "$OUT/$s/log")" || return 1
        else
            read -r ss sa <<<"$(ns_features "$enc" "$src" "$OUT/$s/split-$first" "$OUT/$s/f-$enc/$s" "$OUT/$s/log")" || return 1
        fi
        for t in $DOMAINS; do
            [ "$t" = "$s" ] && continue
            if [ "$enc" = minilm ]; then
                read -r ts ta <<<"$(ns_embed "$(ns_data "$t")" "$(ns_emb_dir "$t")" "$OUT/$s/log")" || return 1
            else
                read -r ts ta <<<"$(ns_features "$enc" "$(ns_data "$t")" "$OUT/$s/split-$t" "$OUT/$s/f-$enc/$t" "$OUT/$s/log" \
                    "$OUT/$s/f-$enc/$s")" || return 1
            fi
            [ "$t" = "$first" ] && { local fts=$ts fta=$ta; }
            for m in trained untrained; do
                local name=$enc ep=$EPOCHS
                [ $m = untrained ] && { name=untrained-$enc; ep=0; }
                if [ ! -s "$OUT/$s/train-$name.json" ]; then
                    EPOCHS=$ep ns_cell "$OUT/$s/split-$first" "$OUT/$s" "$name" "$ss,${fts:-$ts}" "$sa,${fta:-$ta}" || return 1
                    mv "$OUT/$s/eval-$name.json" "$OUT/$s/eval-$name-$first.json"
                fi
                [ -s "$OUT/$s/eval-$name-$t.json" ] ||
                    "$NS" eval "$OUT/$s/split-$t" "$OUT/$s/model-$name" --state-features "$ss,$ts" --action-features "$sa,$ta" \
                        --seed "$SEED" --no-acc --latency 0 --json --quiet >"$OUT/$s/eval-$name-$t.json" 2>>"$OUT/$s/log" || return 1
            done
        done
    done
    echo $(($(date +%s) - t0)) >"$OUT/$s/seconds"
    echo "done source $s in $(cat "$OUT/$s/seconds") s"
}
export -f cross_source

start=$(date +%s)
# shellcheck disable=SC2016
if [ "${TABLES_ONLY:-0}" != 1 ]; then
    for d in $DOMAINS; do echo "$d"; done |
        xargs -P "$JOBS" -I{} bash -c 'nice -n 10 bash -c "cross_source {}" || echo "FAILED source {} (see $OUT/{}/log)"'
    echo $(($(date +%s) - start)) >"$OUT/wall_seconds"
fi

"$PYTHON" - "$OUT" "$DATA" "$DOMAINS" "$ENCODERS" "$EPOCHS" "$LR" "$PATIENCE" "$SEED" "$JOBS" <<'EOF'
import json, os, sys
sys.path.insert(0, os.path.join(os.getcwd(), "experiments"))
from tables_lib import load, mean_se, chance, pct, pm, bar_plot
out, data, domains, encoders = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
epochs, lr, patience, seed, jobs = sys.argv[5:10]
def h5(s, name, t, k="hit@5"):
    j = load(os.path.join(out, s, f"eval-{name}-{t}.json"))
    return None if not j else j["metrics"].get(k)
ch = {t: chance(os.path.join(out, next(s for s in domains if s != t), f"split-{t}"), 5, dataset=1) for t in domains}
res = {"data": data, "domains": domains, "encoders": encoders, "epochs": int(epochs), "lr": float(lr),
       "patience": int(patience), "seed": int(seed), "wall_seconds": load(os.path.join(out, "wall_seconds")),
       "chance": ch, "matrix": {}, "summary": {},
       "paper": {"mean": 6.6, "untrained": 4.2, "chance": 3.9, "ferry->logistics": 22.3,
                 "source": "§4.2 / App. D.3 (Llama-3.3-70B); other cells of Table 16 are not in text"}}
L = []
P = L.append
P(f"# Cross-Domain transfer (Table 16) — {data} datasets")
P("")
P(f"Hit@5 (%), train on the row domain (all its transitions, 10 % dev for epoch selection), test on every "
  f"transition of the column domain against 128 of its states, random ties; lr {lr}, ≤ {epochs} epochs, patience "
  f"{patience}, seed {seed}, one run. Untrained: the same heads after `--epochs 0`. Paper (Llama-3.3-70B): mean "
  f"6.6, untrained 4.2, chance 3.9, Ferry→Logistics 22.3 (the only cell its text gives).")
for name in [e for e in encoders] + [f"untrained-{e}" for e in encoders]:
    M = {s: {t: h5(s, name, t) for t in domains if t != s} for s in domains}
    res["matrix"][name] = M
    off = [v for s in domains for v in M[s].values()]
    m, se, n = mean_se(off)
    rows = {s: mean_se(list(M[s].values())) for s in domains}
    cols = {t: mean_se([M[s][t] for s in domains if s != t]) for t in domains}
    res["summary"][name] = {"mean": m, "se_cells": se, "n": n,
                            "row_mean": {s: rows[s][0] for s in domains}, "col_mean": {t: cols[t][0] for t in domains},
                            "mean_of_row_means": mean_se([rows[s][0] for s in domains])[:2]}
    P("")
    P(f"## {name}: mean {pct(m)} over {n} cells (SE across source-domain means "
      f"{pm(*res['summary'][name]['mean_of_row_means'])})")
    P("")
    P("| train ↓ test → | " + " | ".join(t[:5] for t in domains) + " | row mean |")
    P("|---|" + "---|" * (len(domains) + 1))
    for s in domains:
        P(f"| {s} | " + " | ".join("·" if t == s else pct(M[s][t]) for t in domains) + f" | {pct(rows[s][0])} |")
    P("| column mean | " + " | ".join(pct(cols[t][0]) for t in domains) + f" | {pct(m)} |")
P("")
P("| chance (target pools) | " + " | ".join(pct(ch[t]) for t in domains) + f" | {pct(mean_se(list(ch.values()))[0])} |")
P("")
P("Summary (mean over the off-diagonal cells): " + "; ".join(
    f"{k} {pct(v['mean'])}" for k, v in res["summary"].items()) + f"; chance {pct(mean_se(list(ch.values()))[0])}.")
secs = {d: load(os.path.join(out, d, "seconds")) for d in domains}
P(f"Wall time {res['wall_seconds']} s (JOBS={jobs}); per source: " + ", ".join(f"{d} {secs[d]}" for d in domains if secs[d] is not None) + " s.")
with open(os.path.join(out, "results.json"), "w") as f:
    json.dump(res, f, indent=1)
with open(os.path.join(out, "results.md"), "w") as f:
    f.write("\n".join(L) + "\n")
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = encoders + [f"untrained-{e}" for e in encoders[:1]]
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 4))
    axes = axes if len(names) > 1 else [axes]
    for ax, name in zip(axes, names):
        M = res["matrix"][name]
        Z = [[float("nan") if s == t or M[s].get(t) is None else 100 * M[s][t] for t in domains] for s in domains]
        im = ax.imshow(Z, vmin=0, vmax=max(25, max((z for r in Z for z in r if z == z), default=25)), cmap="viridis")
        ax.set_xticks(range(len(domains)))
        ax.set_xticklabels([d[:5] for d in domains], rotation=60, fontsize=7)
        ax.set_yticks(range(len(domains)))
        ax.set_yticklabels(domains, fontsize=7)
        ax.set_title(f"{name}: Hit@5 %", fontsize=9)
        fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "matrix.png"), dpi=110)
    print("wrote", os.path.join(out, "matrix.png"))
except ImportError:
    print("matplotlib not installed: no plot")
print("\n".join(L))
EOF
echo "wrote $OUT/results.json and $OUT/results.md"
