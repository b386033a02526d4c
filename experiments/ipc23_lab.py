#!/usr/bin/env python3
"""The IPC 2023 Learning Track as a Downward Lab experiment (PyPI `lab`): the
runs of experiments/ipc23.py defined once, run on this machine or on a Slurm
cluster unchanged.  Run through experiments/ipc23_lab.sh, which sets NS, BENCH
and the Python that has `lab`:

  experiments/ipc23_lab.sh [STEP…]        (no step: the list; --all: every step)

Steps, in order:
  learn    `nextstate learn` per domain and model kind the planners need, on
           training/easy only (experiments/ipc23.py's learn: TRAIN_EVERY, SOLVE_LIMIT),
           models in MODELS/DOMAIN/KIND.model (default OUT/models); run where this
           script runs, before the runs are built, so the cluster only plans
  build    (replacing OUT/ipc23-lab) one Lab run per domain × level × problem × planner
           of PLANNERS, each the command of experiments/ipc23.py's PLANNER_TABLE (hwl,
           hwl-gbfs, hwl-lama, xgb, gbfs, nslama, lama = Fast Downward's lama-first;
           PLANNER=OPT,OPT… adds `nextstate solve OPT OPT…`, e.g. "nslazy=--search,lazy"),
           each under Lab's limits: TIME_LIMIT s CPU (default 300), MEMORY_LIMIT MiB (8192)
  start    the runs: LocalEnvironment on NS_LAB_JOBS cores (default: all), or with
           NS_LAB_ENV=slurm a SlurmEnvironment (NS_SLURM_PARTITION, NS_SLURM_QOS,
           NS_SLURM_MEMORY_PER_CPU, NS_SLURM_SETUP: shell lines run before each job)
  parse    every plan checked by `nextstate validate`: solved, cost, cpu, quality
  fetch    the runs' properties into OUT/ipc23-lab-eval
  report   OUT/ipc23-lab-eval/ipc23.md, .json, .csv, .png (experiments/ipc23.py's
           tables: coverage, quality and agile score per domain and level) and,
           with matplotlib, quality.png (each planner's quality against
           lama-first's per problem) and cpu_cdf.png (solved problems by CPU time)

The selection (LEVELS, PROBLEMS, IPC) is experiments/ipc23.py's.  The testing
problems are only planned, never read by learning.
"""
import json
import os
import resource
import shutil
import subprocess
import sys

if len(sys.argv) > 2 and sys.argv[1] == "--cpu":  # a run's command wrapper: CPU time of the planner
    p = subprocess.run(sys.argv[2:], stderr=subprocess.STDOUT)  # into run.log: Lab counts run.err as errors
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open("cpu_time", "w") as f:
        f.write(f"{r.ru_utime + r.ru_stime:.3f}\n")
    sys.exit(p.returncode)

from lab.environments import LocalEnvironment, SlurmEnvironment  # noqa: E402
from lab.experiment import Experiment  # noqa: E402
from lab.parser import Parser  # noqa: E402

os.environ.setdefault("PLANNERS", "hwl nslama gbfs lama")
os.environ.setdefault("TIME_LIMIT", "300")
sys.argv, steps = sys.argv[:1], sys.argv[1:]  # experiments/ipc23.py reads DOMAINS from argv
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ipc23  # noqa: E402

HERE = os.path.abspath(__file__)
OUT = os.path.abspath(os.environ.get("OUT", "results/ipc23-lab"))
MODELS = os.path.abspath(os.environ.get("MODELS", os.path.join(OUT, "models")))
MEMORY_LIMIT = ipc23.MEMORY_LIMIT
PLANNERS = ipc23.PLANNERS
ipc23.OUT = os.path.join(OUT, "ipc23-lab-eval")


class NextstateSlurm(SlurmEnvironment):
    """A Slurm cluster named by the environment (Lab ships environments for named clusters only)."""

    DEFAULT_PARTITION = os.environ.get("NS_SLURM_PARTITION", "")
    DEFAULT_QOS = os.environ.get("NS_SLURM_QOS", "normal")
    DEFAULT_MEMORY_PER_CPU = os.environ.get("NS_SLURM_MEMORY_PER_CPU", f"{MEMORY_LIMIT + 1024}M")
    DEFAULT_SETUP = os.environ.get("NS_SLURM_SETUP", "")

    @classmethod
    def is_present(cls):
        return True


def environment():
    if os.environ.get("NS_LAB_ENV", "local") == "slurm":
        return NextstateSlurm()
    jobs = os.environ.get("NS_LAB_JOBS")
    return LocalEnvironment(processes=int(jobs) if jobs else None)


def add_runs(exp):
    for dom in ipc23.DOMAINS:
        dfile = os.path.join(ipc23.IPC, dom, "domain.pddl")
        for level in ipc23.LEVELS:
            for prob in ipc23.select_problems(dom, level):
                for planner in PLANNERS:
                    kind = ipc23.PLANNER_TABLE.get(planner, (None,))[0]
                    model = kind and os.path.join(MODELS, dom, f"{kind}.model")  # made by the learn step
                    cmd = ipc23.planner_command(planner, dfile, prob, model, "sas_plan")
                    if not cmd:
                        continue
                    run = exp.add_run()
                    run.add_command("planner", [sys.executable, HERE, "--cpu", *cmd],
                                    time_limit=ipc23.TIME_LIMIT + 5, memory_limit=MEMORY_LIMIT + 512)
                    key = os.path.relpath(prob, ipc23.IPC)
                    run.set_property("id", [planner.partition("=")[0], key])
                    run.set_property("algorithm", planner.partition("=")[0])
                    run.set_property("domain", dom)
                    run.set_property("problem", key)
                    run.set_property("level", level)
                    run.set_property("domain_file", dfile)
                    run.set_property("problem_file", prob)


def parse_run(content, props):
    """Validates sas_plan with `nextstate validate` (the parser runs in the run folder)."""
    props["cpu"] = float(content) if content.strip() else None
    run = json.load(open("static-properties"))  # the run's own properties (Lab merges them at fetch)
    props["cost"] = ipc23.validate(run["domain_file"], run["problem_file"], "sas_plan")
    props["solved"] = props["cost"] is not None
    if not props["solved"] and os.path.exists("sas_plan"):
        props["invalid"] = True


def learn_step():
    for dom in ipc23.DOMAINS:
        out = os.path.join(MODELS, dom)
        os.makedirs(out, exist_ok=True)
        for kind in ipc23.model_kinds():
            print(f"{dom}: {ipc23.learn(dom, out, kind) or f'learning failed (see {out}/learn-{kind}.log)'}")


def build_step(exp):
    """Lab's build, replacing a previous experiment folder without asking (a run script may not have a terminal)."""
    shutil.rmtree(exp.path, ignore_errors=True)
    exp.build()


def report_step(exp):
    props_file = os.path.join(exp.eval_dir, "properties")
    runs = json.load(open(props_file)).values()
    bounds = json.load(open(os.path.join(ipc23.IPC, "upper_bounds.json")))
    rows = []
    for p in runs:
        r = {k: p.get(k) for k in ("domain", "level", "problem", "solved", "cost", "cpu")}
        r["planner"], r["rc"] = p["algorithm"], p.get("planner_returncode")
        r["quality"] = ipc23.quality(r, bounds.get(r["problem"]))
        r["agile"] = ipc23.agile(r)
        rows.append(r)
    rows.sort(key=lambda r: (r["domain"], r["level"], r["problem"], ipc23.NAMES.index(r["planner"])))
    ipc23.table(rows)
    plots(rows)


def plots(rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plots")
        return
    by = {(r["planner"], r["problem"]): r for r in rows}
    others = [p for p in ipc23.NAMES if p != "lama"]
    if "lama" in ipc23.NAMES and others:
        fig, ax = plt.subplots(figsize=(5, 5))
        for p in others:
            pts = [(by[("lama", r["problem"])]["quality"], r["quality"]) for r in rows
                   if r["planner"] == p and ("lama", r["problem"]) in by]
            ax.scatter([x for x, _ in pts], [y for _, y in pts], s=10, alpha=0.6, label=p)
        ax.plot([0, 1], [0, 1], "k--", lw=0.8)
        ax.set(xlabel="lama-first quality", ylabel="quality", title="IPC quality per problem")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(ipc23.OUT, "quality.png"), dpi=110)
    fig, ax = plt.subplots(figsize=(6, 4))
    for p in ipc23.NAMES:
        ts = sorted(r["cpu"] for r in rows if r["planner"] == p and r["solved"] and r["cpu"] is not None)
        ax.step(ts, range(1, len(ts) + 1), where="post", label=p)
    ax.set_xscale("log")
    ax.set(xlabel="CPU time (s)", ylabel="problems solved", title="solved within a time")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(ipc23.OUT, "cpu_cdf.png"), dpi=110)
    print("wrote quality.png and cpu_cdf.png in", ipc23.OUT)


def main():
    exp = Experiment(path=os.path.join(OUT, "ipc23-lab"), environment=environment())
    parser = Parser()
    parser.add_function(parse_run, file="cpu_time")
    exp.add_parser(parser)
    add_runs(exp)
    exp.add_step("learn", learn_step)
    exp.add_step("build", build_step, exp)
    exp.add_step("start", exp.start_runs)
    exp.add_step("parse", exp.parse)
    exp.add_fetcher(name="fetch", merge=False)
    exp.add_step("report", report_step, exp)
    sys.argv = sys.argv[:1] + steps
    exp.run_steps()


if __name__ == "__main__":
    main()
