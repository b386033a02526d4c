#!/usr/bin/env bash
# Per-transition latency of the EmbedPlan world model at 384-d dense inputs
# (MiniLM's width), nextstate vs PyTorch (CPU, inference mode), one thread
# each, side by side on the same checkpoint, features, test queries and
# 128-candidate pools (issue #4 item 4; the paper reports 0.168 ms per
# transition with cached state embeddings).  Five measurements (evaluate.h):
#   (a) full        heads for the query + T + scoring 128 cached candidates, batch 1
#   (a) batch 64    the same in batches of 64 queries, per transition
#   (b) T           T + scoring on cached projections, batch 1
#   (b) split T     T split into state-only / action-only parts cached with the projections, batch 1
#   (b) expansion   split T for every applicable action of the query state, scored, per transition
# and (a) again with `eval --bf16` (bfloat16 weights in the heads and T: half the bytes, so they stay in L2)
# and with `eval --int8` (int8 weights, per-row scales, exact int32 sums: a quarter of the bytes)
# and `eval --int4` (the heads' layers int4, a scale per 64 inputs of a row, exact int32 sums per group; T int8).
# Data: generated ferry problems (bench/train_torch.sh's), Interpolation split, fixed random 384-d
# features (`featurize --kind random --dim 384`); a short training run (latency does not depend on
# the weights' values; PyTorch's test Hit@5 with worst-case ties is checked against nextstate's).
# Each nextstate run also reports (a)'s fastest pass over the queries (eval's latency_full_best_us): on a
# core shared with other tenants the mean includes their time slices; the summary line gives both.
# Writes OUT/results.json and OUT/results.md.
#   bench/latency_torch.sh [OUT]        (default results/bench_latency_torch)
# env: DIM (384), EPOCHS (5), QUERIES (200), REPEAT (5: nextstate runs per mode, median reported), GEN_OPTS ("--cars 5"), SEEDS ("1 2 3 4 5 6 7 8"),
#      TORCH_PYTHON (/usr/bin/python3), BUILD (build)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
NS="$PWD/$BUILD/nextstate"
PY=${TORCH_PYTHON:-/usr/bin/python3}
OUT=${1:-results/bench_latency_torch}
DIM=${DIM:-384}
EPOCHS=${EPOCHS:-5}
QUERIES=${QUERIES:-200}
REPEAT=${REPEAT:-5}
GEN_OPTS=${GEN_OPTS:---cars 5}
SEEDS=${SEEDS:-1 2 3 4 5 6 7 8}
if ! "$PY" -c 'import torch' 2>/dev/null; then
    echo "bench/latency_torch.sh: PyTorch missing for $PY (apt-get install python3-torch)" >&2
    exit 77
fi
[ -x "$NS" ] || make -s
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
mkdir -p "$OUT/problems"
for s in $SEEDS; do
    # shellcheck disable=SC2086
    "$NS" gen ferry --seed "$s" $GEN_OPTS -o "$OUT/problems/p$s.pddl"
done
rm -rf "$OUT/dataset" "$OUT/split" "$OUT/feat-s" "$OUT/feat-a"
"$NS" data build domains/ferry/domain.pddl "$OUT/problems" -o "$OUT/dataset" --plans 16 --quiet
"$NS" split interpolation "$OUT/dataset" -o "$OUT/split" --pool-size 128 --seed 1 >/dev/null
"$NS" featurize "$OUT/dataset" --kind random --dim "$DIM" --fit-all -o "$OUT/feat-s" --quiet
"$NS" featurize "$OUT/dataset" --kind random --dim "$DIM" --fit-all --what actions -o "$OUT/feat-a" --quiet
"$NS" train "$OUT/split" -o "$OUT/model" --state-features "$OUT/feat-s/states.npy" \
    --action-features "$OUT/feat-a/actions.npy" --lr 1e-3 --epochs "$EPOCHS" --seed 1 --quiet >/dev/null
cut -d' ' -f1-3 /proc/loadavg >"$OUT/loadavg.txt"
# REPEAT runs of each nextstate mode (float, bfloat16, int8, int4), interleaved; the tables take the median
for r in $(seq 1 "$REPEAT"); do
    "$NS" eval "$OUT/split" "$OUT/model" --seed 1 --latency "$QUERIES" --json --quiet >"$OUT/nextstate-$r.json"
    "$NS" eval "$OUT/split" "$OUT/model" --seed 1 --latency "$QUERIES" --json --quiet --bf16 >"$OUT/nextstate-bf16-$r.json"
    "$NS" eval "$OUT/split" "$OUT/model" --seed 1 --latency "$QUERIES" --json --quiet --int8 >"$OUT/nextstate-int8-$r.json"
    "$NS" eval "$OUT/split" "$OUT/model" --seed 1 --latency "$QUERIES" --json --quiet --int4 >"$OUT/nextstate-int4-$r.json"
done
hw=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["metrics"]["hit@5_worst"])' "$OUT/nextstate-1.json")
"$PY" bench/latency_torch.py "$OUT/split" "$OUT/model" "$OUT/feat-s/states.npy" "$OUT/feat-a/actions.npy" \
    --queries "$QUERIES" --threads 1 --ns-hit5-worst "$hw" >"$OUT/torch.json"
"$PY" - "$OUT" "$DIM" "$REPEAT" <<'EOF'
import json, statistics, sys
out, dim, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
def median_run(prefix):
    runs = [json.load(open(f"{out}/{prefix}-{r}.json"))["metrics"] for r in range(1, repeat + 1)]
    m = dict(runs[0])
    for k in list(m):
        if k.startswith("latency_") and k.endswith("_us"):
            m[k] = statistics.median(x[k] for x in runs)
            m[k + "_runs"] = [x[k] for x in runs]
    return m
ns, bf, th = median_run("nextstate"), median_run("nextstate-bf16"), json.load(open(f"{out}/torch.json"))
def best(m, k="latency_full_best_us"):
    return m.get(k, float("nan"))
i8 = median_run("nextstate-int8")
i4 = median_run("nextstate-int4")
# goals: issue #17 asks (a) at batch 1 for <= 5 us; batches of 64 keep issue #4's 20 us
rows = [("(a) full, batch 1", "latency_full_us", "full_us", 5),
        ("(a) full, batches of 64", "latency_full_batch_us", "full_batch_us", 20),
        ("(b) T + scoring, batch 1", "latency_transition_us", "transition_us", 5),
        ("(b) split T + scoring, batch 1", "latency_transition_split_us", "split_us", 5),
        ("(b) split T over a state's applicable actions", "latency_expand_us", "expand_us", 5)]
res = {"dim": int(dim), "load": open(f"{out}/loadavg.txt").read().split(), "rows": []}
lines = [f"# World-model latency per transition, {dim}-d inputs, 1 thread: nextstate vs PyTorch {th['torch']}", "",
         "| measurement | nextstate µs | PyTorch µs | speed-up | goal µs | paper µs |", "|---|---|---|---|---|---|"]
for name, nk, tk, goal in rows + [("(a) full, batch 1, bfloat16 (`eval --bf16`)", "latency_full_us", "full_us", 5),
                                   ("(a) full, batches of 64, bfloat16", "latency_full_batch_us", "full_batch_us", 20),
                                   ("(a) full, batch 1, int8 (`eval --int8`)", "latency_full_us", "full_us", 5),
                                   ("(a) full, batches of 64, int8", "latency_full_batch_us", "full_batch_us", 20),
                                   ("(a) full, batch 1, int4 (`eval --int4`)", "latency_full_us", "full_us", 5),
                                   ("(a) full, batches of 64, int4", "latency_full_batch_us", "full_batch_us", 20)]:
    a, b = (bf if "bfloat16" in name else i8 if "int8" in name else i4 if "int4" in name else ns)[nk], th[tk]
    res["rows"].append({"measurement": name, "nextstate_us": a, "torch_us": b, "speedup": b / a, "goal_us": goal})
    tag = " (float)" if "bfloat16" in name or "int8" in name or "int4" in name else ""
    lines.append(f"| {name} | {a:.2f} | {b:.2f}{tag} | {b / a:.1f}× | ≤ {goal} | 168 |")
lines += ["", f"Applicable actions per expanded state: {ns['latency_expand_actions']:.1f}.  "
          f"Test Hit@5 (worst-case ties) nextstate {ns['hit@5_worst']:.4f} (bfloat16 {bf['hit@5_worst']:.4f}, int8 {i8['hit@5_worst']:.4f}, int4 {i4['hit@5_worst']:.4f}), "
          f"PyTorch on the same weights {th['hit5_worst']:.4f}.  "
          f"nextstate: median of {repeat} runs per mode (each run: every regime timed in a loop of its own); "
          f"(a) batch 1 over the runs: float {min(ns['latency_full_us_runs']):.1f}–{max(ns['latency_full_us_runs']):.1f} µs, "
          f"bfloat16 {min(bf['latency_full_us_runs']):.1f}–{max(bf['latency_full_us_runs']):.1f} µs, "
          f"int8 {min(i8['latency_full_us_runs']):.1f}–{max(i8['latency_full_us_runs']):.1f} µs, "
          f"int4 {min(i4['latency_full_us_runs']):.1f}–{max(i4['latency_full_us_runs']):.1f} µs; "
          f"its fastest pass over the queries (`latency_full_best_us`, median over the runs: what a core of its own "
          f"gives where other tenants share it) float {best(ns):.2f}, bfloat16 {best(bf):.2f}, int8 {best(i8):.2f}, int4 {best(i4):.2f} µs, "
          f"in batches of 64 float {best(ns, 'latency_full_batch_best_us'):.2f}, bfloat16 {best(bf, 'latency_full_batch_best_us'):.2f}, "
          f"int8 {best(i8, 'latency_full_batch_best_us'):.2f}, int4 {best(i4, 'latency_full_batch_best_us'):.2f} µs.  "
          f"Load average before the run: {' '.join(res['load'])}."]
res["nextstate_runs"] = {m: {k: v for k, v in x.items() if k.endswith("_runs")}
                         for m, x in (("float", ns), ("bfloat16", bf), ("int8", i8), ("int4", i4))}
res["best_pass_us"] = {m: {"full": best(x), "full_batch": best(x, "latency_full_batch_best_us")}
                       for m, x in (("float", ns), ("bfloat16", bf), ("int8", i8), ("int4", i4))}
res["hit5_worst"] = {"nextstate": ns["hit@5_worst"], "nextstate_bf16": bf["hit@5_worst"],
                     "nextstate_int8": i8["hit@5_worst"],
                     "nextstate_int4": i4["hit@5_worst"], "torch": th["hit5_worst"]}
json.dump(res, open(f"{out}/results.json", "w"), indent=1)
open(f"{out}/results.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
