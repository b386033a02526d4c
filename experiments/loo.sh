#!/usr/bin/env bash
# The two many-domain protocols of EmbedPlan, one model over several domains:
#   PROTOCOL=leave-one-out  (Table 17): for each domain H, train on the other eight (`nextstate split
#       leave-one-out D1 … D8 H`: all their transitions, 10 % dev) and test on every transition of H
#       against 128 of H's states; the untrained heads (`--epochs 0`) alongside, as the paper's 4.2 %.
#   PROTOCOL=multi-domain   (Table 18, experiments/multi_domain.sh): one model on the pooled
#       Extrapolation splits of all nine (`split multi-domain`), Hit@5 per domain on its held-out
#       problems — scored by evaluating the model on copies of the split whose test list and pools keep
#       one domain's rows (train and dev lists untouched, so the same checkpoint applies).
# Encoders: text kinds fitted on the split's pooled training transitions (one vocabulary over every
# training domain, applied to all nine datasets with `featurize --vocab`):
#   tfidf, char (TF-IDF word 1–2-grams / character 3–5-grams of the prompt; actions likewise),
#   minilm (frozen all-MiniLM-L6-v2; when the weights are present and each dataset has at most
#   MINILM_MAX_STATES states), builtin (literals; multi-domain only — under leave-one-out the held-out
#   domain's atoms have no column, so every test state is the zero vector).
#
#   experiments/loo.sh [OUT]     (default results/loo_$DATA or results/multi_domain_$DATA)
# env: PROTOCOL (leave-one-out), DATA (acp, default: a laptop run — the suite's pooled 286k transitions
#      take hours per encoder on two cores; acp's Multi-Domain test lists are small, see the n column),
#      ENCODERS ("tfidf char minilm", plus builtin for multi-domain), EPOCHS (40), LR (1e-3; the paper's
#      4e-5 × 100 epochs is a GPU budget), PATIENCE (5), SEED (1), JOBS (2: held-out domains in parallel;
#      multi-domain trains one model per encoder, encoders in parallel), DOMAINS (the nine), TRAIN_OPTS,
#      TABLES_ONLY=1, and lib.sh's.  Resumable: cells whose eval JSON exists are skipped.
# Writes OUT/results.json, OUT/results.md, OUT/hit5.png; per cell OUT/HELDOUT/ (leave-one-out) or
# OUT/ (multi-domain): split, features f-ENC/DOMAIN, models, train-ENC.json, eval-ENC[-DOMAIN].json.
set -u
DATA=${DATA:-acp}
PROTOCOL=${PROTOCOL:-leave-one-out}
# shellcheck source=experiments/lib.sh
. "$(dirname "$0")/lib.sh"
case $PROTOCOL in
leave-one-out) def_out=results/loo_$DATA def_enc="tfidf char minilm" ;;
multi-domain) def_out=results/multi_domain_$DATA def_enc="builtin tfidf char minilm" ;;
*) echo "PROTOCOL must be leave-one-out or multi-domain" >&2; exit 30 ;;
esac
OUT=$(realpath -m "${1:-$def_out}")
ENCODERS=${ENCODERS:-$def_enc}
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
export OUT ENCODERS EPOCHS DOMAINS PROTOCOL
if [[ " $ENCODERS " == *" minilm "* ]] && [ "${TABLES_ONLY:-0}" != 1 ]; then
    # shellcheck disable=SC2016
    for d in $DOMAINS; do echo "$d"; done |
        xargs -P "$JOBS" -I{} bash -c 'ns_embed "$(ns_data {})" "$(ns_emb_dir {})" "$OUT/embed.log" >/dev/null || echo "FAILED embed {}"'
fi

# Comma-joined state and action specs of ENC for the split's datasets (in ORDER), fitted on the split.
#   pooled_specs ENC SPLIT FEATDIR LOG ORDER…   → prints "STATE_SPECS ACTION_SPECS"
pooled_specs() {
    local enc=$1 split=$2 fd=$3 log=$4 first="" d s a S="" A=""
    shift 4
    for d in "$@"; do
        if [ "$enc" = minilm ]; then
            read -r s a <<<"$(ns_embed "$(ns_data "$d")" "$(ns_emb_dir "$d")" "$log")" || return 1
        else
            read -r s a <<<"$(ns_features "$enc" "$(ns_data "$d")" "$split" "$fd/$d" "$log" ${first:+"$fd/$first"})" || return 1
            [ -n "$first" ] || first=$d
        fi
        [ "$enc" = builtin ] && { echo "builtin builtin"; return 0; }
        S=${S:+$S,}$s A=${A:+$A,}$a
    done
    echo "$S $A"
}

loo_heldout() { # HELDOUT
    local h=$1 t0 dir="$OUT/$1" enc train=() d data=()
    t0=$(date +%s)
    mkdir -p "$dir"
    for d in $DOMAINS; do [ "$d" = "$h" ] || train+=("$d"); done
    for d in "${train[@]}" "$h"; do data+=("$(ns_data "$d")") || return 1; done
    [ -f "$dir/split/split.json" ] ||
        "$NS" split leave-one-out "${data[@]}" -o "$dir/split" --pool-size 128 --seed "$SEED" >>"$dir/log" 2>&1 || return 1
    for enc in $ENCODERS; do
        local specs
        # the first training domain fits the vocabulary on the pooled training transitions
        specs=$(pooled_specs "$enc" "$dir/split" "$dir/f-$enc" "$dir/log" "${train[@]}" "$h") || { echo "FAILED features $h $enc"; continue; }
        # shellcheck disable=SC2086
        ns_cell "$dir/split" "$dir" "$enc" $specs || echo "FAILED $h $enc (see $dir/log)"
        # shellcheck disable=SC2086
        EPOCHS=0 ns_cell "$dir/split" "$dir" "untrained-$enc" $specs || echo "FAILED $h untrained-$enc (see $dir/log)"
    done
    echo $(($(date +%s) - t0)) >"$dir/seconds"
    echo "done held-out $h in $(cat "$dir/seconds") s"
}

# Copies of SPLIT whose test list and pools keep dataset I's rows only, OUT/split-DOMAIN.
filter_splits() {
    "$PYTHON" - "$OUT/split" "$OUT" "$DOMAINS" <<'EOF'
import json, os, shutil, sys, zlib
import numpy as np
src, out, domains = sys.argv[1], sys.argv[2], sys.argv[3].split()
meta = json.load(open(os.path.join(src, "split.json")))
test, pools = np.load(os.path.join(src, "test.npy")), np.load(os.path.join(src, "pools.npy"))
for i, d in enumerate(domains):
    dst = os.path.join(out, "split-" + d)
    if os.path.exists(os.path.join(dst, "split.json")):
        continue
    os.makedirs(dst, exist_ok=True)
    keep = test[:, 0] == i
    for f in ("train.npy", "dev.npy"):
        shutil.copyfile(os.path.join(src, f), os.path.join(dst, f))
    np.save(os.path.join(dst, "test.npy"), np.ascontiguousarray(test[keep]))
    np.save(os.path.join(dst, "pools.npy"), np.ascontiguousarray(pools[keep]))
    m = json.loads(json.dumps(meta))
    m["counts"]["test"] = int(keep.sum())
    m["counts"]["short_pools"] = int(((pools[keep] >= 0).sum(axis=1) < meta["options"]["pool_size"]).sum())
    m["filtered_test"] = {"dataset": i, "domain": d, "from": src}
    for f in m["files"]:
        b = open(os.path.join(dst, f), "rb").read()
        m["files"][f] = {"bytes": len(b), "crc32": zlib.crc32(b) & 0xffffffff}
    json.dump(m, open(os.path.join(dst, "split.json"), "w"), indent=2)
EOF
}

multi_encoder() { # ENC
    local enc=$1 specs d data=()
    for d in $DOMAINS; do data+=("$(ns_data "$d")"); done
    # shellcheck disable=SC2086
    specs=$(pooled_specs "$enc" "$OUT/split" "$OUT/f-$enc" "$OUT/log-$enc" $DOMAINS) || return 1
    read -r S A <<<"$specs"
    ns_cell "$OUT/split" "$OUT" "$enc" "$S" "$A" || return 1
    for d in $DOMAINS; do
        [ -s "$OUT/eval-$enc-$d.json" ] ||
            "$NS" eval "$OUT/split-$d" "$OUT/model-$enc" --seed "$SEED" --no-acc --latency 0 --json --quiet \
                >"$OUT/eval-$enc-$d.json" 2>>"$OUT/log" || { echo "FAILED eval $enc $d"; rm -f "$OUT/eval-$enc-$d.json"; }
    done
    echo "done $enc"
}
export -f pooled_specs loo_heldout multi_encoder

start=$(date +%s)
if [ "${TABLES_ONLY:-0}" != 1 ]; then
    if [ "$PROTOCOL" = leave-one-out ]; then
        # shellcheck disable=SC2016
        for d in $DOMAINS; do echo "$d"; done |
            xargs -P "$JOBS" -I{} bash -c 'nice -n 10 bash -c "loo_heldout {}" || echo "FAILED held-out {} (see $OUT/{}/log)"'
    else
        data=()
        for d in $DOMAINS; do data+=("$(ns_data "$d")") || exit 1; done
        [ -f "$OUT/split/split.json" ] ||
            "$NS" split multi-domain "${data[@]}" -o "$OUT/split" --pool-size 128 --seed "$SEED" >>"$OUT/log" 2>&1 || exit 1
        filter_splits || exit 1
        # shellcheck disable=SC2016
        for e in $ENCODERS; do echo "$e"; done |
            xargs -P "$JOBS" -I{} bash -c 'nice -n 10 bash -c "multi_encoder {}" || echo "FAILED encoder {} (see $OUT/log-{})"'
    fi
    echo $(($(date +%s) - start)) >"$OUT/wall_seconds"
fi

"$PYTHON" - "$OUT" "$DATA" "$PROTOCOL" "$DOMAINS" "$ENCODERS" "$EPOCHS" "$LR" "$PATIENCE" "$SEED" "$JOBS" <<'EOF'
import json, os, sys
sys.path.insert(0, os.path.join(os.getcwd(), "experiments"))
from tables_lib import load, mean_se, chance, pct, pm, run_record, bar_plot
out, data, protocol, domains, encoders = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(), sys.argv[5].split()
epochs, lr, patience, seed, jobs = sys.argv[6:11]
# Paper, Llama-3.3-70B: Table 18 (multi-domain, per domain ± SE over seeds) is in the text; Table 17's cells are not.
PAPER_MD = {"floortile": "52.0 ± 10", "rovers": "51.9 ± 5", "goldminer": "46.0 ± 8", "ferry": "37.7 ± 14",
            "depots": "18.9 ± 12", "blocksworld": "36.9 ± 13", "satellite": "34.3 ± 7", "grid": "32.6 ± 1",
            "logistics": "24.8 ± 10", "mean": "37.2 ± 3.8 (single-domain 54.6)"}
PAPER_LOO = {"mean": "9.2 (untrained 4.2, chance 3.9)"}
multi = protocol == "multi-domain"
names = encoders if multi else encoders + [f"untrained-{e}" for e in encoders]
runs, table, ch, ns = [], {}, {}, {}
for d in domains:
    if multi:
        sp, cell = os.path.join(out, f"split-{d}"), out
        ch[d] = chance(sp, 5)
        for e in names:
            ev = load(os.path.join(out, f"eval-{e}-{d}.json"))
            r = None
            if ev:
                m = ev["metrics"]
                r = {k: m.get(k) for k in ("n", "mean_pool", "hit@1", "hit@5", "hit@5_worst")}
                tr = load(os.path.join(out, f"train-{e}.json")) or {}
                r.update({k: tr.get(k) for k in ("epochs_run", "best_epoch", "best_dev_hit@5", "seconds")})
            table[(d, e)] = r
    else:
        cell = os.path.join(out, d)
        ch[d] = chance(os.path.join(cell, "split"), 5)
        for e in names:
            table[(d, e)] = run_record(cell, e)
    for e in names:
        r = table[(d, e)]
        if r:
            ns[d] = r.get("n")
            runs.append(dict(r, domain=d, encoder=e))
summary = {e: dict(zip(("mean", "se", "n"), mean_se([(table[(d, e)] or {}).get("hit@5") for d in domains]))) for e in names}
summary["chance"] = dict(zip(("mean", "se", "n"), mean_se([ch[d] for d in domains])))
L = []
P = L.append
title = "Multi-Domain unified model (Table 18)" if multi else "Leave-One-Out (Table 17)"
P(f"# {title} — {data} datasets")
P("")
if multi:
    P(f"One model per encoder on the pooled Extrapolation splits of the nine domains (held-out problems per domain), "
      f"Hit@5 (%) per domain on its held-out problems, pools of up to 128 states of the same problem (short where a "
      f"problem has fewer states: see chance), random ties. ± = SE across domains.")
else:
    P(f"Train on the eight other domains (all their transitions, 10 % dev for epoch selection), test on every "
      f"transition of the held-out domain against 128 of its states, Hit@5 (%), random ties; untrained = the same "
      f"heads after `--epochs 0`. ± = SE across held-out domains.")
P(f"lr {lr}, ≤ {epochs} epochs, patience {patience}, seed {seed}, one run (the paper: lr 4e-5 × 100 epochs, 3 seeds, "
  f"Llama-3.3-70B).")
P("")
P("| domain | test n | " + " | ".join(names) + " | chance | paper (Llama-3.3-70B) |")
P("|---|---|" + "---|" * (len(names) + 2))
for d in domains:
    paper = PAPER_MD.get(d, "—") if multi else "not in text"
    P(f"| {d} | {ns.get(d, '—')} | " + " | ".join(pct((table[(d, e)] or {}).get("hit@5")) for e in names) +
      f" | {pct(ch[d])} | {paper} |")
P("| mean ± SE | | " + " | ".join(pm(summary[e]["mean"], summary[e]["se"]) for e in names) +
  f" | {pct(summary['chance']['mean'])} | {(PAPER_MD if multi else PAPER_LOO)['mean']} |")
wall = load(os.path.join(out, "wall_seconds"))
P("")
P(f"Wall time {wall} s (JOBS={jobs}); training seconds summed {sum(r.get('seconds') or 0 for r in runs if not multi) if not multi else sum((load(os.path.join(out, f'train-{e}.json')) or {}).get('seconds') or 0 for e in encoders):.0f}.")
with open(os.path.join(out, "results.json"), "w") as f:
    json.dump({"protocol": protocol, "data": data, "domains": domains, "encoders": encoders, "epochs": int(epochs),
               "lr": float(lr), "patience": int(patience), "seed": int(seed), "wall_seconds": wall, "chance": ch,
               "summary": summary, "runs": runs, "paper": PAPER_MD if multi else PAPER_LOO}, f, indent=1)
with open(os.path.join(out, "results.md"), "w") as f:
    f.write("\n".join(L) + "\n")
bar_plot(os.path.join(out, "hit5.png"), domains + ["mean"],
         {e: [(table[(d, e)] or {}).get("hit@5") for d in domains] + [summary[e]["mean"]] for e in names},
         "Hit@5 (%)", f"{title} ({data})", hline=summary["chance"]["mean"])
print("\n".join(L))
EOF
echo "wrote $OUT/results.json and $OUT/results.md"
