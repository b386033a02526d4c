#!/usr/bin/env python3
"""Validation for choosing the IPC 2023 Learning Track defaults without the
testing problems: the models experiments/ipc23.py learns from training/easy
(same OUT, so they are shared), planned on problems *generated* here, larger
than any training problem, for the IPC domains whose files nextstate's
generators match (blocksworld, ferry, rovers, satellite, floortile: the
generated problem gets the IPC domain's name and, where they differ, its
predicate names; spanner, miconic, childsnack, transport, sokoban: generated
for the IPC files as they are).  Run through experiments/ipc23_validate.sh.

Environment: ipc23.py's (PLANNERS, TIME_LIMIT, SOLVE_LIMIT, TRAIN_EVERY, OUT,
IPC) and VAL_SEEDS ("1 2 3": generator seeds per size).  Writes
OUT/validate/ipc23.md, .json, .csv: coverage per domain and size, and the
quality score against the best plan any planner of the run found.
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ipc23  # noqa: E402

# Sizes two to four times the largest training problem (35-43 objects; spanner 26, miconic 30, childsnack 55,
# transport 45; sokoban 13 x 13 with 4 boxes) and beyond.
SIZES = {
    "blocksworld": {"m": ["--blocks", "40"], "l": ["--blocks", "70"]},
    "ferry": {"m": ["--locations", "40", "--cars", "150"], "l": ["--locations", "60", "--cars", "250"]},
    "rovers": {"m": ["--rovers", "8", "--waypoints", "40", "--objectives", "12", "--cameras", "10", "--goals", "40"],
               "l": ["--rovers", "14", "--waypoints", "80", "--objectives", "20", "--cameras", "16", "--goals", "80"]},
    "satellite": {"m": ["--satellites", "10", "--instruments", "3", "--modes", "5", "--targets", "25",
                        "--observations", "80"],
                  "l": ["--satellites", "20", "--instruments", "3", "--modes", "5", "--targets", "50",
                        "--observations", "200"]},
    "floortile": {"m": ["--rows", "4", "--columns", "4", "--robots", "2"],
                  "l": ["--rows", "5", "--columns", "5", "--robots", "2"]},
    "spanner": {"m": ["--spanners", "25", "--nuts", "20", "--locations", "25"],
                "l": ["--spanners", "50", "--nuts", "40", "--locations", "50"]},
    "miconic": {"m": ["--passengers", "30", "--floors", "40"], "l": ["--passengers", "60", "--floors", "80"]},
    "childsnack": {"m": ["--children", "25", "--allergic", "15", "--trays", "4", "--tables", "4", "--sandwiches", "35"],
                   "l": ["--children", "50", "--allergic", "30", "--trays", "6", "--tables", "6", "--sandwiches", "70"]},
    "transport": {"m": ["--vehicles", "14", "--packages", "35", "--locations", "35", "--capacity", "3", "--roads", "150"],
                  "l": ["--vehicles", "20", "--packages", "60", "--locations", "60", "--capacity", "4", "--roads", "300"]},
    "sokoban": {"m": ["--size", "16", "--boxes", "6", "--steps", "150", "--walls", "25"],
                "l": ["--size", "20", "--boxes", "10", "--steps", "300", "--walls", "25"]},
}
SEEDS = os.environ.get("VAL_SEEDS", "1 2 3").split()
# the generator's predicate names -> the IPC file's, where they differ
RENAME = {"blocksworld": {"ontable": "on-table", "handempty": "arm-empty"}}


def generate(dom, out):
    """The validation problems of dom (generated once), by size label."""
    dtext = open(os.path.join(ipc23.IPC, dom, "domain.pddl")).read().lower()
    name = re.search(r"\(domain\s+([^\s)]+)", dtext)[1]
    preds = set(re.findall(r"\(\s*([^\s()?]+)\s+\?", dtext[dtext.index(":predicates"):]))
    probs = {}
    for size, opts in SIZES[dom].items():
        d = os.path.join(out, size)
        os.makedirs(d, exist_ok=True)
        for seed in SEEDS:
            p = os.path.join(d, f"s{seed}.pddl")
            if not os.path.exists(p):
                text = subprocess.run([ipc23.NS, "gen", dom, "--seed", seed, *opts, "--problem-name", f"val-{size}-{seed}"],
                                      check=True, stdout=subprocess.PIPE, text=True).stdout
                text = re.sub(r"\(:domain\s+[^\s)]+\)", f"(:domain {name})", text, count=1)
                for a, b in RENAME.get(dom, {}).items():
                    text = re.sub(rf"\({a}([\s)])", rf"({b}\1", text)
                # static atoms of predicates the IPC file does not declare (e.g. not-eq) go: planners that
                # refuse undeclared predicates (Fast Downward) read the same problem
                text = re.sub(r"\(([a-z][a-z0-9_-]*)(\s[^()]*)\)",
                              lambda m: m[0] if m[1] in preds or m[1] in ("define", "problem", "domain") else "",
                              text)
                with open(p, "w") as f:
                    f.write(text)
            probs.setdefault(size, []).append(p)
    return probs


def main():
    doms = [d for d in ipc23.DOMAINS if d in SIZES]
    ipc23.LEVELS = list(next(iter(SIZES.values())))
    val_out = os.path.join(ipc23.OUT, "validate")
    rows = []
    for dom in doms:
        models = {k: ipc23.learn(dom, os.path.join(ipc23.OUT, dom), k) for k in ipc23.model_kinds()}
        out = os.path.join(val_out, dom)
        probs = generate(dom, os.path.join(out, "problems"))
        rows += ipc23.run_all(dom, [(size, p) for size, plist in probs.items() for p in plist], models, out, val_out)
    best = {}
    for r in rows:
        if r.get("solved"):
            best[r["problem"]] = min(best.get(r["problem"], r["cost"]), r["cost"])
    for r in rows:
        r["quality"] = ipc23.quality(r, best.get(r["problem"]))
        r["agile"] = ipc23.agile(r)
    ipc23.OUT = val_out
    ipc23.table(rows)


if __name__ == "__main__":
    main()
