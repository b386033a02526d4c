#!/usr/bin/env python3
"""The IPC 2023 Learning Track with nextstate: learn per domain from
training/easy only, plan the testing problems, score as the competition does.

Run through experiments/ipc23.sh (which sets NS, BENCH and OUT). Per domain:

  learn   `nextstate learn` for each model kind the planners need (LEARN_KINDS), on the
          training problems (TRAIN_EVERY-th of training/easy, A*-LM-cut within
          learn's work budget, SOLVE_LIMIT s a safety cap, else GBFS-h^FF's plan,
          else skipped; LEARN_LIMIT s wall at most) -> OUT/DOMAIN/KIND.model; the first kind keeps its training plans
          (OUT/DOMAIN/train-plans), the others read them; no testing problem is read.
          xgb learns from every 10th training problem and stops early on another
          10 (LEARN_SAMPLE): the first paper's sample-efficient setting.
  run     every planner of PLANNERS on the chosen testing problems (LEVELS,
          PROBLEMS), TIME_LIMIT s CPU and MEMORY_LIMIT MiB each, CPU time measured
          on the child (PLANNER_TABLE):
            hwl       nextstate plan --model hwl.model (the default learned planner)
            hwl-gbfs  ... --algo guided (GBFS on the learned h, h^FF's helpful actions preferred)
            hwl-lama  ... --algo lama (the learned h in LAMA-first's search beside h^FF and h^LM)
            hwl-lamah ... --algo lama-h (the learned h in h^FF's place beside h^LM)
            hwl-search ... --algo search (GBFS on the learned h alone, as WL-GOOSE)
            hwl4-gbfs, hwl4-lama  the same with 4 WL iterations (model kind hwl4)
            xgb       the first paper's WL-XGBoost (delta) model, --algo guided
            hwl-xgb   GBFS on the learned h, the XGBoost model's choice of h^FF's
                      helpful actions preferred (plan --prefer xgb.model)
            gbfs      nextstate solve --search gbfs (h^FF, preferred operators)
            nslama    nextstate solve --search lama (our LAMA-first: lazy GBFS, h^FF + h^LM)
            lama      Fast Downward --alias lama-first (FD_DRIVER, else up-fast-downward's)
            NAME=OPT,OPT…  nextstate solve OPT OPT…
          every plan checked by `nextstate validate`; results cached in
          OUT/DOMAIN/runs.jsonl (resumable).
  table   OUT/ipc23.md, .json, .csv: coverage and IPC quality score (sum over
          problems of C_best / C, C_best the best known cost of upper_bounds.json)
          and IPC 2023 agile score per domain and level; OUT/ipc23.png (coverage per domain) with
          matplotlib.
"""
import glob
import importlib.util
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

NS = os.environ["NS"]
IPC = os.environ.get("IPC") or os.path.join(os.environ["BENCH"], "ipc2023-learning")
OUT = os.environ.get("OUT", "results/ipc23")
LEVELS = os.environ.get("LEVELS", "easy medium hard").split()
PROBLEMS = os.environ.get("PROBLEMS", "").split()  # e.g. "01 04 07"; empty: all
TIME_LIMIT = float(os.environ.get("TIME_LIMIT", "60"))
SOLVE_LIMIT = float(os.environ.get("SOLVE_LIMIT", "20"))  # a safety cap: learn's work budget binds
TRAIN_EVERY = int(os.environ.get("TRAIN_EVERY", "1"))
MEMORY_LIMIT = int(os.environ.get("MEMORY_LIMIT", "8192"))  # MiB
LEARN_LIMIT = float(os.environ.get("LEARN_LIMIT", "3600"))  # wall seconds per model
PLANNERS = os.environ.get("PLANNERS", "hwl gbfs lama").split()
NAMES = [p.partition("=")[0] for p in PLANNERS]  # the planners' names in tables
DOMAINS = sys.argv[1:] or sorted(d for d in os.listdir(IPC) if os.path.isdir(os.path.join(IPC, d)))


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd, limit, cwd=None):
    """Runs cmd; returns (exit code, CPU seconds of the child, stdout, wall seconds)."""
    c0, w0 = child_cpu(), time.time()
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                           timeout=4 * limit + 60)  # a guard against hangs: the limit itself is CPU time
        rc, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired:
        rc, out = 124, ""
    cpu = child_cpu() - c0
    return rc, cpu, out, time.time() - w0


def fd_driver():
    if os.environ.get("FD_DRIVER"):
        return os.environ["FD_DRIVER"]
    spec = importlib.util.find_spec("up_fast_downward")
    if not spec:
        return None
    return os.path.join(list(spec.submodule_search_locations)[0], "downward", "fast-downward.py")


def learn(dom, out, kind="hwl"):
    """`nextstate learn --model KIND` on the domain's training problems -> OUT/DOMAIN/KIND.model (None on failure)."""
    model = os.path.join(out, f"{kind}.model")
    if os.path.exists(model):
        return model
    probs = sorted(glob.glob(os.path.join(IPC, dom, "training", "easy", "*.pddl")))
    every, t_off, v_off = LEARN_SAMPLE.get(kind, (TRAIN_EVERY, 0, None))
    if v_off is not None and not probs[v_off::every]:
        v_off = None  # too few problems for a validation sample
    sample = "" if kind not in LEARN_SAMPLE else "-" + kind
    train, val = os.path.join(out, "train" + sample), os.path.join(out, "val" + sample)
    for folder, picked in [(train, probs[t_off::every])] + ([(val, probs[v_off::every])] if v_off is not None else []):
        os.makedirs(folder, exist_ok=True)
        for p in picked:
            link = os.path.join(folder, os.path.basename(p))
            if not os.path.exists(link):
                os.symlink(p, link)
    c0 = child_cpu()
    # the first model solves the training problems and keeps the plans; later kinds read them
    plans = os.path.join(out, "train-plans")
    solved = os.path.exists(os.path.join(plans, ".complete"))
    opts = LEARN_KINDS[kind] + (["--plans", plans] if solved else [] if sample else ["--save-plans", plans])
    if v_off is not None:
        opts += ["--val", val] + (["--val-plans", plans] if solved else [])
    with open(os.path.join(out, f"learn-{kind}.log"), "w") as log:
        try:
            rc = subprocess.run([NS, "learn", os.path.join(IPC, dom, "domain.pddl"), train, *opts,
                                 "--solve-time-limit", str(SOLVE_LIMIT), "-o", model], stderr=log,
                                timeout=LEARN_LIMIT).returncode
        except subprocess.TimeoutExpired:
            rc = 124
            print(f"learning stopped after {LEARN_LIMIT:g} s", file=log)
    with open(os.path.join(out, f"learn-{kind}.json"), "w") as f:
        json.dump({"rc": rc, "cpu": child_cpu() - c0, "problems": len(probs[t_off::every]),
                   "solved_here": not solved}, f)
    if rc == 0 and not solved and not sample:
        open(os.path.join(plans, ".complete"), "w").close()
    return model if rc == 0 else None


# The planners: a name of PLANNERS -> (model kind it needs or None, command builder).  Each command
# writes its plan to `plan` and takes TIME_LIMIT s CPU (and MEMORY_LIMIT MiB where the planner has one).
def _ns_plan(*opts):
    return lambda dfile, prob, model, plan: [NS, "plan", "--model", model, *opts, dfile, prob,
                                             "--time-limit", f"{TIME_LIMIT:g}", "--memory-limit", str(MEMORY_LIMIT),
                                             "--plan-file", plan]


def _ns_solve(*opts):
    return lambda dfile, prob, model, plan: [NS, "solve", *opts, dfile, prob, "--time-limit", f"{TIME_LIMIT:g}",
                                             "--memory-limit", str(MEMORY_LIMIT), "--plan-file", plan]


def _ns_prefer(kind):
    """plan --model hwl.model --prefer KIND.model (beside it): GBFS on h, the preferred queue holding the next-state
    model's choice among h^FF's helpful actions; None without that model."""
    def build(dfile, prob, model, plan):
        prefer = os.path.join(os.path.dirname(model), f"{kind}.model")
        return os.path.exists(prefer) and _ns_plan("--prefer", prefer)(dfile, prob, model, plan)
    return build


def _fd_lama(dfile, prob, model, plan):
    driver = fd_driver()
    return driver and [sys.executable, driver, "--overall-time-limit", f"{TIME_LIMIT:g}s", "--overall-memory-limit",
                       f"{MEMORY_LIMIT}M", "--alias", "lama-first", "--plan-file", plan, dfile, prob]


PLANNER_TABLE = {
    "hwl": ("hwl", _ns_plan()),                       # plan's default for a learned heuristic
    "hwl-gbfs": ("hwl", _ns_plan("--algo", "guided")),  # GBFS on h, h^FF's helpful actions preferred
    "hwl-lama": ("hwl", _ns_plan("--algo", "lama")),  # h in LAMA-first's search beside h^FF and h^LM
    "hwl-lamah": ("hwl", _ns_plan("--algo", "lama-h")),  # h in LAMA-first's search in h^FF's place
    "hwl-search": ("hwl", _ns_plan("--algo", "search")),  # GBFS on h alone (WL-GOOSE's search)
    "hwl4-gbfs": ("hwl4", _ns_plan("--algo", "guided")),  # the same with 4 WL iterations
    "hwl4-lama": ("hwl4", _ns_plan("--algo", "lama")),
    "xgb": ("xgb", _ns_plan("--algo", "guided")),     # the first paper's WL-XGBoost, model-guided GBFS-h^FF
    "hwl-xgb": ("hwl", _ns_prefer("xgb")),            # GBFS on h, the XGBoost model's choice of h^FF's helpful actions
    "gbfs": (None, _ns_solve("--search", "gbfs")),    # GBFS-h^FF, preferred operators
    "nslama": (None, _ns_solve("--search", "lama")),  # nextstate's LAMA-first
    "lama": (None, _fd_lama),                         # Fast Downward's lama-first
}
PREFERS = {"hwl-xgb": ["xgb"]}  # planners that need a second model kind beside their own
LEARN_KINDS = {"hwl": ["--model", "hwl"], "hwl4": ["--model", "hwl", "--iterations", "4"],
               "xgb": ["--model", "xgb", "--mode", "delta"]}  # model kind -> learn's options
# Kinds that learn from a sample of the training problems, as the first paper does (it is about sample
# efficiency, and XGBoost grows one tree per WL feature per round): kind -> (every, train offset, validation
# offset), e.g. problems 1, 11, 21, … for training and 6, 16, 26, … for early stopping.
LEARN_SAMPLE = {"xgb": (10, 0, 5)}


def planner_command(planner, dfile, prob, model, plan):
    """The command line of a planner of PLANNERS (NAME=OPT,OPT… adds `nextstate solve OPT OPT…`), or None
    when it cannot run (no model, no Fast Downward)."""
    name, _, extra = planner.partition("=")
    if extra:
        return _ns_solve(*extra.split(","))(dfile, prob, model, plan)
    if name not in PLANNER_TABLE:
        raise SystemExit(f"ipc23: unknown planner {planner} ({', '.join(PLANNER_TABLE)}, or NAME=OPT,OPT…)")
    kind, build = PLANNER_TABLE[name]
    if kind and not model:
        return None
    return build(dfile, prob, model, plan)


def model_kinds():
    """The model kinds PLANNERS need."""
    kinds = {PLANNER_TABLE[p][0] for p in PLANNERS if "=" not in p and PLANNER_TABLE.get(p, (None,))[0]}
    return sorted(kinds | {k for p in PLANNERS for k in PREFERS.get(p, [])})


def run_one(planner, dom, prob, models, out, dfile=None):
    dfile = dfile or os.path.join(IPC, dom, "domain.pddl")
    plan = os.path.join(out, planner.partition("=")[0], os.path.basename(os.path.dirname(prob)) + "-"
                        + os.path.basename(prob)[:-5] + ".plan")
    os.makedirs(os.path.dirname(plan), exist_ok=True)
    if os.path.exists(plan):
        os.remove(plan)
    kind = PLANNER_TABLE.get(planner, (None,))[0]
    cmd = planner_command(planner, dfile, prob, models.get(kind), plan)
    if not cmd:
        return {"status": "no model" if kind else "no fd"}
    with tempfile.TemporaryDirectory() as tmp:  # Fast Downward writes output.sas where it runs
        rc, cpu, _, wall = timed(cmd, TIME_LIMIT, cwd=tmp)
    r = {"rc": rc, "cpu": round(cpu, 3), "wall": round(wall, 3), "solved": False}
    cost = validate(dfile, prob, plan)
    if cost is not None and cpu > TIME_LIMIT:  # found after the limit: the competition would have stopped it
        r["over_time"] = True
    elif cost is not None:
        r["solved"], r["cost"] = True, cost
    elif os.path.exists(plan):
        r["invalid"] = True
    return r


def validate(dfile, prob, plan):
    """The cost of `plan` if `nextstate validate` accepts it, else None."""
    if not os.path.exists(plan):
        return None
    v = subprocess.run([NS, "validate", dfile, prob, plan, "--json"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    if v.returncode != 0:
        return None
    try:
        j = json.loads(v.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    return j.get("cost", j.get("plan_cost"))


def select_problems(dom, level):
    """The testing problems of a domain and level that the run plans (PROBLEMS: their numbers; empty: all)."""
    probs = sorted(glob.glob(os.path.join(IPC, dom, "testing", level, "p*.pddl")))
    return [p for p in probs if not PROBLEMS or os.path.basename(p)[1:-5] in PROBLEMS]


def quality(r, best):
    """IPC quality score of one run: C_best / C (1 for a solved zero-cost task), 0 unsolved."""
    if not r.get("solved"):
        return 0.0
    if not r["cost"]:
        return 1.0
    return min(1.0, best / r["cost"]) if best is not None else 1.0


def agile(r):
    """IPC 2023 agile score of one run: 1 when solved within 1 s CPU, 1 − log t / log T up to the limit T, else 0."""
    t = r.get("cpu")
    if not r.get("solved") or t is None:
        return 0.0
    if t <= 1.0:
        return 1.0
    return max(0.0, 1.0 - math.log(t) / math.log(TIME_LIMIT)) if TIME_LIMIT > 1 else 0.0


def run_all(dom, problems, models, out, root):
    """Every planner of PLANNERS on problems [(level, path)] of dom: the rows, run or read from
    out/runs.jsonl (resumable; a problem's key is its path relative to root)."""
    cache_file = os.path.join(out, "runs.jsonl")
    cache = {}
    if os.path.exists(cache_file):
        for line in open(cache_file):
            j = json.loads(line)
            if "rc" in j:  # a run that ran (not "no model" / "no fd")
                cache[(j["planner"], j["problem"], j["time_limit"])] = j
    rows = []
    with open(cache_file, "a") as cf:
        for level, prob in problems:
            key = os.path.relpath(prob, root)
            for planner, name in zip(PLANNERS, NAMES):
                k = (name, key, TIME_LIMIT)
                if k not in cache:
                    r = run_one(planner, dom, prob, models, out)
                    r.update({"planner": name, "problem": key, "time_limit": TIME_LIMIT, "domain": dom, "level": level})
                    cache[k] = r
                    cf.write(json.dumps(r) + "\n")
                    cf.flush()
                    if sys.stderr.isatty():
                        print(f"\r{dom} {level} {os.path.basename(prob)} {name}: "
                              f"{'solved' if r.get('solved') else 'unsolved'}   ", end="", file=sys.stderr)
                rows.append(dict(cache[k]))
    return rows


def main():
    os.makedirs(OUT, exist_ok=True)
    bounds = json.load(open(os.path.join(IPC, "upper_bounds.json")))
    rows = []
    for dom in DOMAINS:
        out = os.path.join(OUT, dom)
        os.makedirs(out, exist_ok=True)
        models = {k: learn(dom, out, k) for k in model_kinds()}
        problems = [(level, p) for level in LEVELS for p in select_problems(dom, level)]
        for r in run_all(dom, problems, models, out, IPC):
            r["quality"] = quality(r, bounds.get(r["problem"]))
            r["agile"] = agile(r)
            rows.append(r)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    table(rows)


def table(rows):
    planners = [p for p in NAMES if any(r["planner"] == p and "rc" in r for r in rows)]
    doms = sorted({r["domain"] for r in rows})
    agg = {}
    for r in rows:
        for key in ((r["domain"], r["level"], r["planner"]), (r["domain"], "all", r["planner"])):
            a = agg.setdefault(key, {"n": 0, "solved": 0, "quality": 0.0, "agile": 0.0, "cpu": 0.0})
            a["n"] += 1
            a["solved"] += bool(r.get("solved"))
            a["quality"] += r["quality"]
            a["agile"] += r["agile"]
            a["cpu"] += r.get("cpu", 0.0) if r.get("solved") else 0.0
    lines = [f"# IPC 2023 Learning Track — nextstate ({TIME_LIMIT:g} s per problem, CPU)", "",
             f"Trained on training/easy (every {TRAIN_EVERY}; A*-LM-cut within learn's work budget, at most "
             f"{SOLVE_LIMIT:g} s, else GBFS-h^FF). "
             "Coverage (solved / problems), IPC quality score (sum of C_best / C) and IPC 2023 agile score (sum of "
             f"1 − log t / log {TIME_LIMIT:g}, 1 within 1 s CPU) per domain and level.", ""]
    head = "| domain | level | problems | " + " | ".join(f"{p} cov | {p} quality | {p} agile" for p in planners) + " |"
    lines += [head, "|" + "---|" * (3 + 3 * len(planners))]
    total = {p: [0, 0.0, 0.0] for p in planners}
    n_total = 0
    for d in doms:
        for lv in LEVELS:
            cells = [agg.get((d, lv, p)) for p in planners]
            if not any(cells):
                continue
            n = max(c["n"] for c in cells if c)
            n_total += n
            row = f"| {d} | {lv} | {n} |"
            for p, c in zip(planners, cells):
                c = c or {"solved": 0, "quality": 0.0, "agile": 0.0}
                total[p][0] += c["solved"]
                total[p][1] += c["quality"]
                total[p][2] += c["agile"]
                row += f" {c['solved']} | {c['quality']:.1f} | {c['agile']:.1f} |"
            lines.append(row)
    lines.append(f"| **total** | | {n_total} |" + "".join(f" **{total[p][0]}** | **{total[p][1]:.1f}** | "
                                                        f"**{total[p][2]:.1f}** |" for p in planners))
    lines += ["", "Per domain (coverage / quality / agile):", "",
              "| domain | problems | " + " | ".join(planners) + " |", "|" + "---|" * (2 + len(planners))]
    for d in doms:
        cells = [agg.get((d, "all", p)) for p in planners]
        n = max((c["n"] for c in cells if c), default=0)
        lines.append(f"| {d} | {n} | " + " | ".join(
            f"{c['solved']} / {c['quality']:.1f} / {c['agile']:.1f}" if c else "–" for c in cells) + " |")
    learn_info = []
    for d in doms:
        for f in sorted(glob.glob(os.path.join(OUT, d, "learn-*.json"))):
            j = json.load(open(f))
            kind = os.path.basename(f)[6:-5]
            learn_info.append(f"{d} {kind} {j['cpu']:.0f} s ({j['problems']} problems" +
                              ("" if j.get("solved_here", True) else ", plans cached: solving not counted") +
                              (", failed)" if j["rc"] else ")"))
    if learn_info:
        lines += ["", "Learning (CPU; solving the training problems included unless their plans were cached): " +
                  ", ".join(learn_info) + "."]
    md = "\n".join(lines) + "\n"
    with open(os.path.join(OUT, "ipc23.md"), "w") as f:
        f.write(md)
    with open(os.path.join(OUT, "ipc23.json"), "w") as f:
        json.dump({"time_limit": TIME_LIMIT, "rows": rows}, f, indent=1)
    with open(os.path.join(OUT, "ipc23.csv"), "w") as f:
        f.write("domain,level,problem,planner,solved,cost,quality,agile,cpu\n")
        for r in rows:
            f.write(f"{r['domain']},{r['level']},{r['problem']},{r['planner']},{int(bool(r.get('solved')))},"
                    f"{r.get('cost', '')},{r['quality']:.4f},{r['agile']:.4f},{r.get('cpu', '')}\n")
    print(md, end="")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(max(6, len(doms) * 0.9), 3.5))
    w = 0.8 / max(1, len(planners))
    for i, p in enumerate(planners):
        ys = [sum(agg.get((d, lv, p), {"solved": 0})["solved"] for lv in LEVELS) for d in doms]
        ax.bar([x + i * w for x in range(len(doms))], ys, w, label=p)
    ax.set_xticks([x + 0.4 - w / 2 for x in range(len(doms))])
    ax.set_xticklabels(doms, rotation=30, ha="right")
    ax.set_ylabel("problems solved")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(OUT, "ipc23.png"), dpi=120)


if __name__ == "__main__":
    main()
