#!/usr/bin/env python3
"""The learned planner against GBFS-h^FF alone, and before against after.

On the seed-A extrapolation problems (NEXTSTATE_BENCHMARKS/seedA/pddl/D/test-extrapolation),
per domain D: a WL + XGBoost delta model is learned as experiments/coverage.sh does
(seed 13; LEARNED_MODEL=hwl: learn's default WL linear heuristic instead) by each binary (each writes its own
model file version: 1 holds XGBoost's JSON, 2 a params checkpoint holding the flat forest, 3 its own container
whose compact forest is used in place from the mapped file), then for each of the first
LEARNED_PROBLEMS problems, one after the other (interleaved, same load):
  new guided   `NEW plan --model NEW-model --algo guided`
  base guided  `BASE plan --model BASE-model --algo guided`          (when BASE is set)
  new gbfs     `NEW solve --search gbfs` (h^FF with helpful actions, as coverage.sh's ablation)
  base gbfs    `BASE solve --search gbfs`                                     (when BASE is set)
CPU seconds of every process (rusage of the child, user + system) and whether the
guided plans are identical.  The two searches expand different states (the model's choice narrows the
preferred operators), so each row also gives both expansion counts and guided's extra CPU over GBFS beside the part spent
inside the model and its encoder (`plan --json`'s model_seconds; XGBoost only: the learned
heuristic's evaluations are not timed apart); the rest is the other search, model
loading and the encoder's set-up.  The summary adds the expansion and plan-length ratios.  Ratios: guided/gbfs of each binary (the issue's ≤ 1.2× goal; each against
its own gbfs, as process start-up is common to both) and new/base.
Model loading: bench/model_load (median CPU ms per ns_predictor_load of each file).

Environment: BUILD (build), BASE (a second nextstate binary, e.g. /work/main/build/nextstate),
NEXTSTATE_BENCHMARKS (../shared/benchmarks), LEARNED_DOMAINS (blocks gripper logistics
visitall-from-everywhere), LEARNED_PROBLEMS (5), LEARNED_TIME_LIMIT (10),
LEARNED_MODEL (xgb, or hwl), OUT (results/bench_learned: .json and the models)."""
import json
import math
import os
import resource
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
env = os.environ.get
NEW = os.path.join(ROOT, env("BUILD", "build"), "nextstate")
LOADER = os.path.join(ROOT, env("BUILD", "build"), "bench", "model_load")
BASE = os.path.abspath(env("BASE")) if env("BASE") else None
BENCH = os.path.abspath(env("NEXTSTATE_BENCHMARKS") or os.path.join(ROOT, "..", "shared", "benchmarks"))
SEEDA = os.path.join(BENCH, "seedA")
DOMAINS = env("LEARNED_DOMAINS", "blocks gripper logistics visitall-from-everywhere").split()
NPROB = int(env("LEARNED_PROBLEMS", "5"))
LIMIT = env("LEARNED_TIME_LIMIT", "10")
MODEL = env("LEARNED_MODEL", "xgb")
OUT = os.path.abspath(env("OUT", os.path.join(ROOT, "results", "bench_learned")))


def run(cmd):
    """(exit code, stdout, CPU seconds of the child and its waited-for descendants)."""
    u0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True)
    u1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (u1.ru_utime - u0.ru_utime) + (u1.ru_stime - u0.ru_stime)
    return p.returncode, p.stdout, cpu, p.stderr


def last_json(out):
    try:
        return json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {}


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def learn(ns, d, model):
    if os.path.isfile(model):
        return
    P = os.path.join(SEEDA, "pddl", d)
    code, _, _, err = run([ns, "learn", f"{P}/domain.pddl", f"{P}/train", "--plans", f"{SEEDA}/plans/{d}/train",
                           "--val", f"{P}/validation", "--val-plans", f"{SEEDA}/plans/{d}/validation",
                           "--encoder", "wl", "--model", MODEL, *(["--mode", "delta"] if MODEL == "xgb" else []),
                           "--seed", "13",
                           "-o", model, "--quiet"])
    if code != 0:
        sys.exit(f"bench: learning {model} failed: {err.strip()}")


def main():
    if not os.path.isdir(SEEDA):
        sys.exit(f"bench: {SEEDA} not found")
    os.makedirs(OUT, exist_ok=True)
    print(f"model {MODEL}\nnew {NEW}\nbase {BASE}\nload average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; "
          f"time limit {LIMIT} s; first {NPROB} extrapolation problems per domain\n")
    rows, loads = [], []
    for d in DOMAINS:
        P = os.path.join(SEEDA, "pddl", d)
        if MODEL not in ("xgb", "hwl"):
            sys.exit(f"bench: LEARNED_MODEL={MODEL}: xgb or hwl")
        new_model = os.path.join(OUT, f"{d}-{MODEL}-new.model")
        learn(NEW, d, new_model)
        models = [new_model]
        if BASE:
            base_model = os.path.join(OUT, f"{d}-{MODEL}-base.model")
            learn(BASE, d, base_model)
            models.append(base_model)
        code, out, _, err = run([LOADER, "5", *models])
        if code != 0:
            sys.exit(f"bench: model_load failed: {err.strip()}")
        for line in out.splitlines():
            j = json.loads(line)
            j["domain"] = d
            loads.append(j)
            extra = (f", of which libxgboost's JSON reader {j['libxgboost_json_load_cpu_ms']:.1f} ms"
                     if "libxgboost_json_load_cpu_ms" in j else "")
            print(f"load {d:26} v{j['version']} {j['bytes'] / 1e6:6.2f} MB {j['trees']:6d} trees: "
                  f"{j['load_cpu_ms']:8.2f} ms CPU{extra}")
        probs = sorted(f for f in os.listdir(os.path.join(P, "test-extrapolation")) if f.endswith(".pddl"))[:NPROB]
        for f in probs:
            prob = os.path.join(P, "test-extrapolation", f)
            row = {"domain": d, "problem": f}
            plans = {}
            for who, ns, model in (("new", NEW, new_model), ("base", BASE, BASE and models[-1])):
                if not ns:
                    continue
                pf = os.path.join(OUT, f"{d}-{f}.{MODEL}.{who}.plan")
                if os.path.exists(pf):
                    os.remove(pf)
                code, out, cpu, _ = run([ns, "plan", "--model", model, f"{P}/domain.pddl", prob, "--algo", "guided",
                                         "--time-limit", LIMIT, "--json", "--plan-file", pf])
                j = last_json(out)
                row[f"{who}_guided"] = {"cpu": cpu, "solved": j.get("solved"), "plan_length": j.get("plan_length"),
                                        "expanded": j.get("expanded"), "model_seconds": j.get("model_seconds"),
                                        "search_seconds": j.get("seconds")}
                plans[who] = open(pf).read() if os.path.exists(pf) else None
            for who, ns in (("new", NEW), ("base", BASE)):
                if not ns:
                    continue
                code, out, cpu, _ = run([ns, "solve", f"{P}/domain.pddl", prob, "--search", "gbfs", "--time-limit",
                                         LIMIT, "--json"])
                j = last_json(out)
                row[f"{who}_gbfs"] = {"cpu": cpu, "solved": j.get("solved"), "plan_length": j.get("plan_length"),
                                      "expanded": j.get("expanded"), "search_seconds": j.get("seconds")}
            if BASE:
                row["same_plan"] = plans.get("new") is not None and plans.get("new") == plans.get("base")
            ng, g = row["new_guided"], row["new_gbfs"]
            row["guided_over_gbfs"] = ng["cpu"] / g["cpu"] if ng["solved"] and g["solved"] and g["cpu"] > 0 else None
            row["extra_cpu_ms"] = 1e3 * (ng["cpu"] - g["cpu"])  # guided's CPU beyond GBFS's, of which
            row["model_ms"] = 1e3 * (ng["model_seconds"] or 0)     # inside the model and its encoder
            if BASE:
                bg, bb = row["base_guided"], row["base_gbfs"]
                row["new_over_base"] = ng["cpu"] / bg["cpu"] if ng["solved"] and bg["solved"] and bg["cpu"] > 0 else None
                row["base_guided_over_base_gbfs"] = (bg["cpu"] / bb["cpu"] if bg["solved"] and bb["solved"] and
                                                     bb["cpu"] > 0 else None)
            rows.append(row)
            base_cols = (f" | base guided {row['base_guided']['cpu']:6.3f} s gbfs {row['base_gbfs']['cpu']:6.3f} s "
                         f"guided/gbfs {row['base_guided_over_base_gbfs'] or float('nan'):5.2f}  new/base "
                         f"{row['new_over_base'] or float('nan'):5.2f}  same plan {row['same_plan']}") if BASE else ""
            print(f"{d:26} {f:28} | new guided {ng['cpu']:6.3f} s (len {ng['plan_length']}, {ng['expanded']} exp) "
                  f"gbfs {g['cpu']:6.3f} s (len {g['plan_length']}, {g['expanded']} exp) "
                  f"guided/gbfs {row['guided_over_gbfs'] or float('nan'):5.2f} (+{row['extra_cpu_ms']:.1f} ms, model "
                  f"{row['model_ms']:.1f} ms){base_cols}",
                  flush=True)
    s = {"guided_over_gbfs_geomean": geomean([r["guided_over_gbfs"] for r in rows]),
         "guided_over_gbfs_geomean_per_domain": {d: geomean([r["guided_over_gbfs"] for r in rows if r["domain"] == d])
                                                 for d in DOMAINS},
         "extra_cpu_ms_sum": sum(r["extra_cpu_ms"] for r in rows),
         "model_ms_sum": sum(r["model_ms"] for r in rows),
         "expanded_guided_over_gbfs_geomean": geomean(
             [r["new_guided"]["expanded"] / r["new_gbfs"]["expanded"] for r in rows
              if r["new_guided"].get("expanded") and r["new_gbfs"].get("expanded")]),
         "plan_length_guided_over_gbfs_geomean": geomean(
             [r["new_guided"]["plan_length"] / r["new_gbfs"]["plan_length"] for r in rows
              if r["new_guided"]["solved"] and r["new_gbfs"]["solved"] and r["new_gbfs"]["plan_length"]]),
         "problems": len(rows),
         "new_guided_cpu_sum": sum(r["new_guided"]["cpu"] for r in rows),
         "new_gbfs_cpu_sum": sum(r["new_gbfs"]["cpu"] for r in rows)}
    if BASE:
        s["new_over_base_geomean"] = geomean([r["new_over_base"] for r in rows])
        s["base_guided_over_base_gbfs_geomean"] = geomean([r["base_guided_over_base_gbfs"] for r in rows])
        s["base_guided_over_base_gbfs_geomean_per_domain"] = {
            d: geomean([r["base_guided_over_base_gbfs"] for r in rows if r["domain"] == d]) for d in DOMAINS}
        s["new_gbfs_over_base_gbfs_geomean"] = geomean(
            [r["new_gbfs"]["cpu"] / r["base_gbfs"]["cpu"] for r in rows if r["base_gbfs"]["cpu"] > 0])
        s["base_guided_cpu_sum"] = sum(r["base_guided"]["cpu"] for r in rows)
        s["base_gbfs_cpu_sum"] = sum(r["base_gbfs"]["cpu"] for r in rows)
        s["same_plans"] = sum(bool(r.get("same_plan")) for r in rows)
    print("\n" + json.dumps(s, indent=1))
    with open(os.path.join(OUT, f"bench_learned-{MODEL}.json"), "w") as fh:
        json.dump({"summary": s, "loads": loads, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
