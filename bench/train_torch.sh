#!/usr/bin/env bash
# Training speed of the EmbedPlan head, nextstate vs PyTorch (CPU), side by
# side on the same data: a generated ferry dataset (embedplan_interp.sh's
# default: 8 problems, --cars 5, 16 plans each), its Extrapolation split, and
# the built-in literal features `nextstate train` uses (exported by
# bench/train_export.c, so both sides read identical CSR rows and nextstate's
# own dev pools).  Same architecture (resmlp, L = 2, hidden 512, out 128),
# loss (InfoNCE + 2 × action loss, K = 50), AdamW, warm-up, batch 128,
# epochs, dev-selected epoch — world.c's defaults (lr 4e-5, 200 epochs).
# For each thread count (2 and 1: OPENBLAS_NUM_THREADS for nextstate,
# torch.set_num_threads for PyTorch) it reports samples/s over the training
# steps, the ratio nextstate / torch (goal ≥ 2), the wall time of the whole
# training run (one domain; goal ≤ 60 s on 2 cores), and final dev and test
# Hit@1/Hit@5 of both.  Writes OUT/results.json and OUT/results.md.
#   bench/train_torch.sh [OUT]          (default results/bench_train_torch)
# env: EPOCHS (200), LR (4e-5), THREADS ("2 1"), GEN_OPTS ("--cars 5"),
#      SEEDS (problem seeds, "1 2 3 4 5 6 7 8"), PROTOCOL (extrapolation),
#      TORCH_PYTHON (/usr/bin/python3), BUILD (build), TORCH_OMP_WAIT_POLICY
#      (PASSIVE: on a shared, loaded 2-core machine libgomp's default
#      spin-waiting makes 2-thread PyTorch 30–40× slower than 1 thread; a
#      short probe with the default policy is reported beside), PROBE_EPOCHS (3),
#      ACC_SEEDS (further training seeds, 1 thread, both sides: "2 3"; the
#      spread of test Hit@k across seeds is the noise the two are compared to),
#      PROFILE (1: when the 1-thread ratio is below 2 and perf is installed,
#      profile `nextstate train` for PROFILE_EPOCHS (40) epochs at 1 thread and
#      add the time per function group to results.md; OUT/profile.txt keeps
#      perf's flat report).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
NS="$PWD/$BUILD/nextstate"
PY=${TORCH_PYTHON:-/usr/bin/python3}
OUT=${1:-results/bench_train_torch}
EPOCHS=${EPOCHS:-200}
LR=${LR:-4e-5}
THREADS=${THREADS:-2 1}
GEN_OPTS=${GEN_OPTS:---cars 5}
SEEDS=${SEEDS:-1 2 3 4 5 6 7 8}
PROTOCOL=${PROTOCOL:-extrapolation}
if ! "$PY" -c 'import torch' 2>/dev/null; then
    echo "bench/train_torch.sh: PyTorch missing for $PY (apt-get install python3-torch)" >&2
    exit 77
fi
if [ ! -x "$NS" ] || [ ! -f "$BUILD/libnextstate.a" ]; then make -s; fi
WAIT=${TORCH_OMP_WAIT_POLICY:-PASSIVE}
PROBE=${PROBE_EPOCHS:-3}
ACC_SEEDS=${ACC_SEEDS-2 3}
PROFILE=${PROFILE:-1}
PROFILE_EPOCHS=${PROFILE_EPOCHS:-40}
mkdir -p "$OUT/problems"
for s in $SEEDS; do
    # shellcheck disable=SC2086
    "$NS" gen ferry --seed "$s" $GEN_OPTS -o "$OUT/problems/p$s.pddl"
done
rm -rf "$OUT/dataset" "$OUT/split" "$OUT/feat"
"$NS" data build domains/ferry/domain.pddl "$OUT/problems" -o "$OUT/dataset" --plans 16 --quiet
"$NS" split "$PROTOCOL" "$OUT/dataset" -o "$OUT/split" --pool-size 128 --seed 1
# train_export is built by `make` (every bench/*.c is), so it cannot rot unseen.
"$BUILD/bench/train_export" "$OUT/split" "$OUT/feat" 1

now() { date +%s.%N; }
cut -d' ' -f1-3 /proc/loadavg >"$OUT/loadavg-before.txt"
for t in $THREADS; do
    echo "== $t thread(s): nextstate" >&2
    t0=$(now)
    OPENBLAS_NUM_THREADS=$t "$NS" train "$OUT/split" -o "$OUT/model-t$t.ckpt" --state-features "$OUT/feat/states" \
        --action-features "$OUT/feat/actions" --epochs "$EPOCHS" --lr "$LR" --seed 1 --json --quiet >"$OUT/ns-train-t$t.json"
    t1=$(now)
    echo "{\"wall_seconds\": $(echo "$t1 - $t0" | bc -l)}" >"$OUT/ns-wall-t$t.json"
    OPENBLAS_NUM_THREADS=$t "$NS" eval "$OUT/split" "$OUT/model-t$t.ckpt" --seed 1 --no-acc --latency 0 --json --quiet \
        >"$OUT/ns-eval-t$t.json"
    OPENBLAS_NUM_THREADS=$t "$NS" eval "$OUT/split" "$OUT/model-t$t.ckpt" --on dev --seed 1 --no-acc --latency 0 --json \
        --quiet >"$OUT/ns-evaldev-t$t.json"
    echo "== $t thread(s): torch" >&2
    OMP_WAIT_POLICY=$WAIT OMP_NUM_THREADS=$t "$PY" bench/train_torch.py "$OUT/split" "$OUT/feat" --threads "$t" \
        --epochs "$EPOCHS" --lr "$LR" --seed 1 >"$OUT/torch-t$t.json"
    if [ "$t" -gt 1 ] && [ "$PROBE" -gt 0 ]; then
        echo "== $t thread(s): torch, default OpenMP wait policy, $PROBE-epoch probe" >&2
        OMP_NUM_THREADS=$t "$PY" bench/train_torch.py "$OUT/split" "$OUT/feat" --threads "$t" --epochs "$PROBE" \
            --lr "$LR" --seed 1 >"$OUT/torch-default-t$t.json"
    fi
done
for k in $ACC_SEEDS; do
    echo "== seed $k, 1 thread: nextstate and torch (accuracy spread)" >&2
    OPENBLAS_NUM_THREADS=1 "$NS" train "$OUT/split" -o "$OUT/model-s$k.ckpt" --state-features "$OUT/feat/states" \
        --action-features "$OUT/feat/actions" --epochs "$EPOCHS" --lr "$LR" --seed "$k" --json --quiet >"$OUT/ns-train-s$k.json"
    OPENBLAS_NUM_THREADS=1 "$NS" eval "$OUT/split" "$OUT/model-s$k.ckpt" --seed 1 --no-acc --latency 0 --json --quiet \
        >"$OUT/ns-eval-s$k.json"
    OMP_WAIT_POLICY=$WAIT OMP_NUM_THREADS=1 "$PY" bench/train_torch.py "$OUT/split" "$OUT/feat" --threads 1 \
        --epochs "$EPOCHS" --lr "$LR" --seed "$k" >"$OUT/torch-s$k.json"
done
cut -d' ' -f1-3 /proc/loadavg >"$OUT/loadavg-after.txt"

"$PY" - "$OUT" "$THREADS" "$EPOCHS" "$LR" "$GEN_OPTS" "$PROTOCOL" "$WAIT" "1 $ACC_SEEDS" <<'EOF'
import json, math, os, sys
seeds = sys.argv[8].split()
out, threads, epochs, lr, gen, proto, wait = sys.argv[1], sys.argv[2].split(), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7]
J = lambda f: json.load(open(os.path.join(out, f)))
load = [open(os.path.join(out, f"loadavg-{w}.txt")).read().split() for w in ("before", "after")]
res = {"epochs": int(epochs), "lr": float(lr), "gen_opts": gen, "protocol": proto, "torch_omp_wait_policy": wait,
       "loadavg_before": load[0], "loadavg_after": load[1], "runs": []}
for t in threads:
    tr, wall, ev, evd, to = J(f"ns-train-t{t}.json"), J(f"ns-wall-t{t}.json"), J(f"ns-eval-t{t}.json"), J(f"ns-evaldev-t{t}.json"), J(f"torch-t{t}.json")
    r = {"threads": int(t),
         "nextstate": {"samples_per_s": tr["samples_per_s"], "train_seconds": tr["samples"] / tr["samples_per_s"],
                       "wall_seconds": wall["wall_seconds"], "best_epoch": tr["best_epoch"], "params": tr["params"]["total"],
                       "dev": {k: evd["metrics"][k] for k in ("hit@1", "hit@5")},
                       "test": {k: ev["metrics"][k] for k in ("hit@1", "hit@5")}},
         "torch": {"samples_per_s": to["samples_per_s"], "train_seconds": to["train_seconds"],
                   "wall_seconds": to["wall_seconds"], "best_epoch": to["best_epoch"], "params": to["params"],
                   "dev": {k: to["dev_metrics"][k] for k in ("hit@1", "hit@5")},
                   "test": {k: to["test_metrics"][k] for k in ("hit@1", "hit@5")}},
         "train": tr["train"], "dev": tr["dev"], "test": ev["metrics"]["n"], "samples": tr["samples"]}
    r["ratio_samples_per_s"] = r["nextstate"]["samples_per_s"] / r["torch"]["samples_per_s"]
    r["ratio_wall"] = r["torch"]["wall_seconds"] / r["nextstate"]["wall_seconds"]
    if os.path.exists(os.path.join(out, f"torch-default-t{t}.json")):
        p = J(f"torch-default-t{t}.json")
        r["torch_default_wait_probe"] = {"epochs": p["epochs"], "samples_per_s": p["samples_per_s"]}
    res["runs"].append(r)
json.dump(res, open(os.path.join(out, "results.json"), "w"), indent=1)
L = [f"# Training the EmbedPlan head: nextstate vs PyTorch {J('torch-t' + threads[0] + '.json')['torch']} (CPU)", "",
     f"Ferry ({gen}, 8 problems, 16 plans each), {proto} split (train {res['runs'][0]['train']}, dev {res['runs'][0]['dev']}, "
     f"test {res['runs'][0]['test']} transitions), built-in literal features (identical CSR rows on both sides), "
     f"resmlp head ({res['runs'][0]['nextstate']['params']} parameters on both sides), lr {lr}, {epochs} epochs, batch 128, "
     f"dev-selected epoch. samples/s: training steps only (no dev evaluation); wall: the whole training run "
     f"(loading, training, per-epoch dev evaluation, checkpoint). PyTorch runs with OMP_WAIT_POLICY={wait}. "
     f"Load average (1/5/15 min) before {' '.join(load[0])}, after {' '.join(load[1])} (2 cores, shared).", "",
     "| threads | nextstate samples/s | torch samples/s | ratio | nextstate wall s | torch wall s | wall ratio | "
     "best epoch ns / torch | dev Hit@5 ns / torch | test Hit@1 ns / torch | test Hit@5 ns / torch |",
     "|---|---|---|---|---|---|---|---|---|---|---|"]
for r in res["runs"]:
    n, t = r["nextstate"], r["torch"]
    L.append(f"| {r['threads']} | {n['samples_per_s']:.0f} | {t['samples_per_s']:.0f} | **{r['ratio_samples_per_s']:.2f}×** | "
             f"{n['wall_seconds']:.1f} | {t['wall_seconds']:.1f} | {r['ratio_wall']:.2f}× | {n['best_epoch']} / {t['best_epoch']} | "
             f"{100 * n['dev']['hit@5']:.1f} / {100 * t['dev']['hit@5']:.1f} | {100 * n['test']['hit@1']:.1f} / {100 * t['test']['hit@1']:.1f} | "
             f"{100 * n['test']['hit@5']:.1f} / {100 * t['test']['hit@5']:.1f} |")
for r in res["runs"]:
    if "torch_default_wait_probe" in r:
        p = r["torch_default_wait_probe"]
        L += ["", f"PyTorch at {r['threads']} threads with libgomp's default (spinning) wait policy, {p['epochs']}-epoch probe: "
              f"{p['samples_per_s']:.0f} samples/s (ratio {r['nextstate']['samples_per_s'] / p['samples_per_s']:.1f}×)."]
def ms(xs):
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return m, sd
acc = {"seeds": seeds, "nextstate": {}, "torch": {}}
t1 = threads[-1] if "1" not in threads else "1"
for side in ("nextstate", "torch"):
    for k in ("hit@1", "hit@5"):
        xs = []
        for sd_ in seeds:
            if side == "nextstate":
                f = f"ns-eval-t{t1}.json" if sd_ == "1" else f"ns-eval-s{sd_}.json"
                xs.append(J(f)["metrics"][k])
            else:
                f = f"torch-t{t1}.json" if sd_ == "1" else f"torch-s{sd_}.json"
                xs.append(J(f)["test_metrics"][k])
        acc[side][k] = {"per_seed": xs, "mean": ms(xs)[0], "sd": ms(xs)[1]}
res["test_accuracy_over_seeds"] = acc
json.dump(res, open(os.path.join(out, "results.json"), "w"), indent=1)
L += ["", f"Test Hit@k over training seeds {', '.join(seeds)} (1 thread; same split, data and features), mean ± sd:", "",
      "| | Hit@1 | Hit@5 | per seed Hit@1 |", "|---|---|---|---|"]
for side in ("nextstate", "torch"):
    a = acc[side]
    L.append(f"| {side} | {100 * a['hit@1']['mean']:.1f} ± {100 * a['hit@1']['sd']:.1f} | "
             f"{100 * a['hit@5']['mean']:.1f} ± {100 * a['hit@5']['sd']:.1f} | "
             + " / ".join(f"{100 * x:.1f}" for x in a["hit@1"]["per_seed"]) + " |")
open(os.path.join(out, "results.md"), "w").write("\n".join(L) + "\n")
print("\n".join(L))
EOF

# Where nextstate's training time goes (perf, 1 thread), when it is not 2× faster.
if [ "$PROFILE" = 1 ] && command -v perf >/dev/null &&
    "$PY" -c 'import json,sys; r=[x for x in json.load(open(sys.argv[1]))["runs"] if x["threads"]==1]; sys.exit(0 if r and r[0]["ratio_samples_per_s"] < 2 else 1)' "$OUT/results.json"; then
    echo "== profiling nextstate train (1 thread, $PROFILE_EPOCHS epochs)" >&2
    if OPENBLAS_NUM_THREADS=1 perf record -q -o "$OUT/perf.data" "$NS" train "$OUT/split" -o "$OUT/model-prof.ckpt" \
        --state-features "$OUT/feat/states" --action-features "$OUT/feat/actions" --epochs "$PROFILE_EPOCHS" --lr "$LR" \
        --seed 1 --json --quiet >/dev/null 2>"$OUT/perf.log"; then
        perf report -i "$OUT/perf.data" --no-children --stdio --sort symbol -g none 2>/dev/null | grep '%' >"$OUT/profile.txt"
        "$PY" - "$OUT" "$PROFILE_EPOCHS" <<'EOF'
import os, re, sys
out, epochs = sys.argv[1], sys.argv[2]
groups = [
    ("GELU (ns_gelu_forward/backward: float, fastmath.h erf/exp, vectorised) and any libm exp", r"erf|exp|gelu"),
    ("GEMM (OpenBLAS): dense layers of the heads and T, forward and backward", r"sgemm|cblas|ns_linear_|ns_resmlp"),
    ("sparse first layer (ns_sparse_linear_*: transposed W tiles for D ≤ 512, else row blocks)", r"sparse_linear"),
    ("LayerNorm forward/backward", r"layernorm"),
    ("AdamW update over all parameters", r"adamw"),
    ("memset/memcpy (buffer zeroing, candidates padded to K+1 = 51)", r"memset|memmove|memcpy"),
    ("L2 normalisation and the two losses", r"l2norm|infonce|action_loss|softmax"),
]
tot = {g[0]: 0.0 for g in groups}
other = 0.0
for line in open(os.path.join(out, "profile.txt")):
    m = re.match(r"\s*([0-9.]+)%\s+\[.\]\s+(\S+)", line)
    if not m:
        continue
    pct, sym = float(m.group(1)), m.group(2)
    for name, rx in groups:
        if re.search(rx, sym):
            tot[name] += pct
            break
    else:
        other += pct
L = ["", f"## Where nextstate's training time goes (perf, 1 thread, {epochs} epochs; self time per function group)", "",
     "| group | % of samples |", "|---|---|"]
for name, _ in groups:
    L.append(f"| {name} | {tot[name]:.1f} |")
L.append(f"| everything else | {other:.1f} |")
with open(os.path.join(out, "results.md"), "a") as f:
    f.write("\n".join(L) + "\n")
print("\n".join(L))
EOF
    else
        echo "perf record failed (see $OUT/perf.log); no profile" >&2
    fi
fi
