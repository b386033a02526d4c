#!/usr/bin/env bash
# The first paper's LSTM next-state model trained by nextstate (`nextstate
# learn --model lstm`) and by PyTorch (bench/lstm_torch.py, CPU) side by side
# on the same WL inputs: the seedA blocks, gripper, logistics and
# visitall-from-everywhere train splits with their expert plans, validation
# on each domain's validation split, state and delta modes (2 × 256 LSTM,
# Adam 1e-2, batch 32 trajectories padded and masked, validation loss every
# epoch, best epoch kept).
#
# Inputs: `nextstate encode --plans … --encoder wl --fit` exports per-problem
# [T+1, D] arrays and _goal arrays of the train split with the vocabulary
# fitted exactly as `nextstate learn` fits it (training states only, in
# problem-name order, 2 iterations, multiset, statics in); the validation
# split is encoded with that vocabulary.  Two checks per domain and mode: the
# vocabulary inside nextstate's model file equals the exported one, and
# PyTorch's validation loss of nextstate's trained model (loaded into the
# PyTorch module) equals nextstate's best_val.
#
# For each thread count (THREADS, default "2 1": OPENBLAS_NUM_THREADS for
# nextstate, torch.set_num_threads for PyTorch, OMP_WAIT_POLICY=PASSIVE as
# bench/train_torch.sh explains) it reports transitions/s = training rows ×
# epochs / training seconds (the whole epoch loop, training steps and
# per-epoch validation, on both sides: nextstate's `seconds`), the ratio
# nextstate / PyTorch, best and final validation losses, the wall time of each
# process, and the training time of the full 500 epochs — measured when
# EPOCHS=500, else estimated from the measured rate (marked "est.").
# Writes OUT/results.json and OUT/results.md.
#   bench/lstm_torch.sh [OUT]           (default results/bench_lstm_torch)
# env: EPOCHS (30), FULL_EPOCHS (500), THREADS ("2 1"), MODES ("state delta"),
#      DOMAINS ("blocks gripper logistics visitall-from-everywhere"), SEED (13),
#      SEEDA (../shared/benchmarks/seedA), TORCH_PYTHON (/usr/bin/python3),
#      BUILD (build), TORCH_OMP_WAIT_POLICY (PASSIVE).
# A domain whose train split or plans are absent is skipped (listed in the
# results); exit 77 when PyTorch or every domain is missing.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
NS="$PWD/$BUILD/nextstate"
PY=${TORCH_PYTHON:-/usr/bin/python3}
OUT=${1:-results/bench_lstm_torch}
EPOCHS=${EPOCHS:-30}
FULL_EPOCHS=${FULL_EPOCHS:-500}
THREADS=${THREADS:-2 1}
MODES=${MODES:-state delta}
DOMAINS=${DOMAINS:-blocks gripper logistics visitall-from-everywhere}
SEED=${SEED:-13}
SEEDA=${SEEDA:-../shared/benchmarks/seedA}
WAIT=${TORCH_OMP_WAIT_POLICY:-PASSIVE}
if ! "$PY" -c 'import torch' 2>/dev/null; then
    echo "bench/lstm_torch.sh: PyTorch missing for $PY (apt-get install python3-torch)" >&2
    exit 77
fi
if [ ! -x "$NS" ]; then make -s "$BUILD/nextstate"; fi
mkdir -p "$OUT"
now() { date +%s.%N; }
ran="" skipped=""
cut -d' ' -f1-3 /proc/loadavg >"$OUT/loadavg-before.txt"
for d in $DOMAINS; do
    P="$SEEDA/pddl/$d" L="$SEEDA/plans/$d"
    if [ ! -f "$P/domain.pddl" ] || [ ! -d "$P/train" ] || [ ! -d "$L/train" ]; then
        echo "== $d: no train split or plans under $SEEDA, skipped" >&2
        skipped="$skipped $d"
        continue
    fi
    E="$OUT/$d"
    rm -rf "$E"
    mkdir -p "$E"
    "$NS" encode --plans "$P/domain.pddl" "$P/train" "$L/train" --encoder wl --fit --iterations 2 --statics in \
        -o "$E/enc-train" --vocab-out "$E/vocab.json" --quiet
    VAL=() TVAL=()
    if [ -d "$P/validation" ] && [ -d "$L/validation" ]; then
        "$NS" encode --plans "$P/domain.pddl" "$P/validation" "$L/validation" --encoder wl --vocab "$E/vocab.json" --iterations 2 \
            --statics in -o "$E/enc-val" --quiet
        VAL=(--val "$P/validation" --val-plans "$L/validation")
        TVAL=(--val "$E/enc-val")
    fi
    ran="$ran $d"
    for m in $MODES; do
        for t in $THREADS; do
            echo "== $d $m, $t thread(s), $EPOCHS epochs: nextstate" >&2
            t0=$(now)
            OPENBLAS_NUM_THREADS=$t "$NS" learn "$P/domain.pddl" "$P/train" --plans "$L/train" "${VAL[@]}" \
                --model lstm --mode "$m" --epochs "$EPOCHS" --seed "$SEED" --json --quiet -o "$E/$m-t$t.model" \
                >"$E/ns-$m-t$t.json"
            t1=$(now)
            echo "{\"wall_seconds\": $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')}" >"$E/ns-wall-$m-t$t.json"
            echo "== $d $m, $t thread(s), $EPOCHS epochs: torch" >&2
            t0=$(now)
            OMP_WAIT_POLICY=$WAIT OMP_NUM_THREADS=$t "$PY" bench/lstm_torch.py "$E/enc-train" "${TVAL[@]}" \
                --mode "$m" --threads "$t" --epochs "$EPOCHS" --seed "$SEED" >"$E/torch-$m-t$t.json"
            t1=$(now)
            echo "{\"wall_seconds\": $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')}" >"$E/torch-wall-$m-t$t.json"
        done
        # the same inputs, model and loss on both sides: PyTorch's validation
        # loss of nextstate's trained model
        t=${THREADS##* }
        OMP_NUM_THREADS=1 "$PY" bench/lstm_torch.py "$E/enc-train" "${TVAL[@]}" --mode "$m" \
            --check-model "$E/$m-t$t.model" >"$E/check-$m.json"
    done
done
cut -d' ' -f1-3 /proc/loadavg >"$OUT/loadavg-after.txt"
if [ -z "$ran" ]; then
    echo "bench/lstm_torch.sh: no domain found under $SEEDA" >&2
    exit 77
fi

"$PY" - "$OUT" "$ran" "$skipped" "$MODES" "$THREADS" "$EPOCHS" "$FULL_EPOCHS" "$WAIT" "$SEED" <<'EOF'
import json, os, sys
out, ran, skipped, modes, threads = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4].split(), sys.argv[5].split()
epochs, full, wait, seed = int(sys.argv[6]), int(sys.argv[7]), sys.argv[8], int(sys.argv[9])
J = lambda *p: json.load(open(os.path.join(out, *p)))
load = [open(os.path.join(out, f"loadavg-{w}.txt")).read().split() for w in ("before", "after")]


def model_meta(path):
    b = open(path, "rb").read()
    mlen = int.from_bytes(b[20:24], "little")
    return json.loads(b[40:40 + mlen].decode())


res = {"epochs": epochs, "full_epochs": full, "full_measured": epochs == full, "seed": seed,
       "torch_omp_wait_policy": wait, "loadavg_before": load[0], "loadavg_after": load[1],
       "skipped": skipped, "runs": []}
for d in ran:
    vocab = json.load(open(os.path.join(out, d, "vocab.json")))
    for m in modes:
        chk = J(d, f"check-{m}.json")["check_model"]
        for t in threads:
            ns, nw = J(d, f"ns-{m}-t{t}.json"), J(d, f"ns-wall-{m}-t{t}.json")
            to, tw = J(d, f"torch-{m}-t{t}.json"), J(d, f"torch-wall-{m}-t{t}.json")
            meta = model_meta(os.path.join(out, d, f"{m}-t{t}.model"))
            same_vocab = json.loads(meta["encoder"]["vocab"]) == vocab
            assert ns["train_rows"] == to["train_rows"] and ns["dim"] == to["dim"] and ns["size"] == to["size"], (d, m, t)
            assert same_vocab, f"{d}: nextstate's vocabulary differs from the exported one"
            r = {"domain": d, "mode": m, "threads": int(t), "dim": ns["dim"], "train_problems": ns["train_problems"],
                 "train_rows": ns["train_rows"], "val_rows": ns["val_rows"], "params": ns["size"],
                 "same_vocabulary": same_vocab, "check": chk,
                 "nextstate": {"seconds": ns["seconds"], "wall_seconds": nw["wall_seconds"],
                               "transitions_per_s": ns["train_rows"] * epochs / ns["seconds"],
                               "best_epoch": ns["best_epoch"], "best_val": ns["best_val"]},
                 "torch": {"seconds": to["seconds"], "step_seconds": to["step_seconds"],
                           "wall_seconds": tw["wall_seconds"], "transitions_per_s": to["transitions_per_s"],
                           "best_epoch": to["best_epoch"], "best_val": to["best_val"], "last_val": to["last_val"]}}
            r["ratio"] = r["nextstate"]["transitions_per_s"] / r["torch"]["transitions_per_s"]
            for side in ("nextstate", "torch"):
                s = r[side]
                s["full_train_seconds"] = s["seconds"] * full / epochs
                s["full_wall_seconds"] = s["full_train_seconds"] + (s["wall_seconds"] - s["seconds"])
            res["runs"].append(r)
json.dump(res, open(os.path.join(out, "results.json"), "w"), indent=1)

est = "" if res["full_measured"] else " (est.)"
tv = J(ran[0], f"torch-{modes[0]}-t{threads[0]}.json")["torch"]
L = [f"# LSTM next-state trainer: nextstate vs PyTorch {tv} (CPU)", "",
     f"seedA train splits, WL features (2 iterations, statics in, vocabulary fitted on the training states), "
     f"2 × 256 LSTM, Adam 1e-2, batch 32 trajectories, {epochs} epochs, validation loss every epoch, seed {seed}. "
     f"transitions/s = training rows × epochs / seconds of the epoch loop (training steps + per-epoch validation, "
     f"both sides). Wall: the whole process (PDDL, grounding, encoding, training, model file; PyTorch: loading the "
     f"exported arrays, training). Full {full} epochs{est}: "
     + ("measured." if res["full_measured"] else f"training seconds × {full}/{epochs} (the per-epoch cost is constant), wall adds the measured overhead.")
     + f" PyTorch runs with OMP_WAIT_POLICY={wait}. Load average (1/5/15 min) before {' '.join(load[0])}, "
     f"after {' '.join(load[1])} (2 cores, shared).", "",
     "| domain | mode | D | rows | threads | nextstate tr/s | torch tr/s | ratio | val loss ns / torch (best @epoch) | "
     f"wall s ns / torch | {full} epochs{est}: train s ns / torch |",
     "|---|---|---|---|---|---|---|---|---|---|---|"]
for r in res["runs"]:
    n, t = r["nextstate"], r["torch"]
    L.append(f"| {r['domain']} | {r['mode']} | {r['dim']} | {r['train_rows']} | {r['threads']} | "
             f"{n['transitions_per_s']:.0f} | {t['transitions_per_s']:.0f} | **{r['ratio']:.2f}×** | "
             f"{n['best_val']:.4f} @{n['best_epoch']} / {t['best_val']:.4f} @{t['best_epoch']} | "
             f"{n['wall_seconds']:.1f} / {t['wall_seconds']:.1f} | {n['full_train_seconds']:.0f} / {t['full_train_seconds']:.0f} |")
L += ["", "Same inputs, model and loss on both sides: nextstate's trained model loaded into the PyTorch module gives "
      "PyTorch's validation loss equal to nextstate's best_val:", "",
      "| domain | mode | nextstate best_val | PyTorch on nextstate's model | |diff| |", "|---|---|---|---|---|"]
seen = set()
for r in res["runs"]:
    if (r["domain"], r["mode"]) in seen:
        continue
    seen.add((r["domain"], r["mode"]))
    c = r["check"]
    L.append(f"| {r['domain']} | {r['mode']} | {c['nextstate_best_val']:.7f} | {c['torch_val_of_nextstate_model']:.7f} | "
             f"{abs(c['nextstate_best_val'] - c['torch_val_of_nextstate_model']):.1e} |")
if skipped:
    L += ["", "Skipped (no train split or plans): " + ", ".join(skipped)]
open(os.path.join(out, "results.md"), "w").write("\n".join(L) + "\n")
print("\n".join(L))
EOF
