#!/usr/bin/env python3
"""Tables of experiments/coverage.sh: coverage of every configuration, seed and
algorithm, every plan checked by `nextstate validate`, next to the first
paper's Table 1; plan lengths against the reference plans of the benchmark
(seedA/plans, optimal plans from Fast Downward) and, when bench/fd.py ran, Fast
Downward's lama-first.

usage: coverage_table.py OUT ROOT NEXTSTATE DOMAIN...
Writes OUT/coverage.md, OUT/coverage.json and OUT/coverage.png (matplotlib).
Standard library only (matplotlib optional).
"""
import glob
import json
import os
import re
import statistics
import subprocess
import sys

SPLITS = ["validation", "test-interpolation", "test-extrapolation"]
SHORT = {"validation": "Val.", "test-interpolation": "Interp.", "test-extrapolation": "Extrap."}
CONFIGS = ["wl-lstm-state", "wl-lstm-delta", "wl-xgb-state", "wl-xgb-delta",
           "fsf-lstm-state", "fsf-lstm-delta", "fsf-xgb-state", "fsf-xgb-delta"]
# The first paper's Table 1 (mean coverage over 3 seeds) as its text gives it;
# rows the text omits come from ../shared/PAPER-NOTES.md (best configuration only).
PAPER = {
    ("blocks", "validation"): [.44, .67, 1.0, .67, 0, 0, 0, 0],
    ("blocks", "test-interpolation"): [.67, .89, 1.0, 1.0, .11, 0, 0, 0],
    ("blocks", "test-extrapolation"): [.10, .15, .25, .50, 0, 0, 0, 0],
    ("gripper", "validation"): [1.0, .67, 0, 0, .17, .50, 0, 0],
    ("gripper", "test-interpolation"): [1.0, .67, 0, 0, .44, .22, .67, 0],
}
PAPER_BEST = {
    ("gripper", "test-extrapolation"): ("wl-lstm-state", .42),
    ("logistics", "test-interpolation"): ("wl-lstm-state", .85),
    ("logistics", "test-extrapolation"): ("every method", 0.0),
    ("visitall-from-everywhere", "test-interpolation"): ("wl-xgb-delta", 1.0),
    ("visitall-from-everywhere", "test-extrapolation"): ("wl-xgb-delta", 1.0),
}
PAPER_FD = {"blocks": "12/20", "gripper": "2/16", "logistics": "9/18", "visitall-from-everywhere": "57/219"}


def plan_len(path):
    n = 0
    for line in open(path):
        line = line.split(";", 1)[0].strip()
        if line.startswith("("):
            n += 1
    return n


def main():
    out, root, ns, domains = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    runs = {}  # (domain, cfg, seed, algo, split) -> list of per-problem dicts
    for path in sorted(glob.glob(os.path.join(out, "runs", "*.jsonl"))):
        base = os.path.basename(path)[:-6]
        m = re.match(r"(.+)-((?:wl|fsf)-(?:lstm|xgb)-(?:state|delta))-(\d+)-(beam|restart|search|guided)-(" +
                     "|".join(SPLITS) + r")$", base)
        if not m or m.group(1) not in domains:
            continue
        d, cfg, seed, algo, split = m.groups()
        rows = [json.loads(l) for l in open(path) if l.strip()]
        plandir = os.path.join(out, "plans", f"{d}-{cfg}-{seed}-{algo}-{split}")
        for r in rows:
            stem = os.path.basename(r["problem"])[:-5]
            r["valid"] = False
            pf = os.path.join(plandir, stem + ".plan")
            if r["solved"] and os.path.isfile(pf):
                dom = os.path.join(root, "pddl", d, "domain.pddl")
                code = subprocess.run([ns, "validate", dom, r["problem"], pf], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL).returncode
                r["valid"] = code == 0
            ref = os.path.join(root, "plans", d, split, stem + ".plan")
            r["reference_length"] = plan_len(ref) if os.path.isfile(ref) else None
        runs[(d, cfg, seed, algo, split)] = rows

    algos = sorted({k[3] for k in runs}, key=lambda a: ["beam", "restart", "search", "guided"].index(a))
    summary = []
    for (d, cfg, seed, algo, split), rows in runs.items():
        summary.append({"domain": d, "config": cfg, "seed": int(seed), "algo": algo, "split": split,
                        "problems": len(rows), "solved_valid": sum(r["valid"] for r in rows),
                        "invalid": sum(r["solved"] and not r["valid"] for r in rows),
                        "coverage": (sum(r["valid"] for r in rows) / len(rows)) if rows else None,
                        "seconds": [r["seconds"] for r in rows],
                        "plan_length": [r["plan_length"] if r["valid"] else None for r in rows],
                        "reference_length": [r["reference_length"] for r in rows],
                        "problem": [os.path.basename(r["problem"]) for r in rows]})

    def cell(d, cfg, algo, split):
        covs = [s["coverage"] for s in summary if (s["domain"], s["config"], s["algo"], s["split"]) ==
                (d, cfg, algo, split) and s["coverage"] is not None]
        if not covs:
            return None, None, 0
        sd = statistics.pstdev(covs) if len(covs) > 1 else 0.0
        return statistics.mean(covs), sd, len(covs)

    md = ["# Coverage of learned next-state models (first paper, Table 1)", ""]
    md.append("Coverage = plans accepted by `nextstate validate` ÷ problems; mean ± std over seeds "
              "(XGBoost is deterministic: one seed). `beam` is the paper's decoder (width 3, cost summed "
              "along the path, no revisits on a path, step cap max(100, 10 × objects)); `search` is "
              "nextstate's regret best-first search over the same valid successors with the same model; "
              "`guided` is GBFS-hFF taking the model's choice among FF's helpful actions as preferred successors. "
              "Paper: its Table 1 (mean over 3 seeds); '—' where its text gives no number. "
              "Time limit: 10 s CPU per problem unless TIME_LIMIT said otherwise.")
    md.append("")
    for d in domains:
        md.append(f"## {d}")
        md.append("")
        head = "| split | config | paper | " + " | ".join(algos) + " |"
        md.append(head)
        md.append("|" + "---|" * (3 + len(algos)))
        for split in SPLITS:
            for ci, cfg in enumerate(CONFIGS):
                vals = []
                any_run = False
                for algo in algos:
                    mu, sd, n = cell(d, cfg, algo, split)
                    if mu is None:
                        vals.append("—")
                    else:
                        any_run = True
                        vals.append(f"{mu:.2f} ± {sd:.2f}" + (f" (n={n})" if n not in (1, 3) else ""))
                if not any_run:
                    continue
                p = PAPER.get((d, split))
                paper = f"{p[ci]:.2f}" if p else "—"
                best = PAPER_BEST.get((d, split))
                if not p and best and best[0] == cfg:
                    paper = f"{best[1]:.2f}"
                if not p and best and best[0] == "every method":
                    paper = f"{best[1]:.2f}"
                md.append(f"| {SHORT[split]} | {cfg} | {paper} | " + " | ".join(vals) + " |")
        md.append("")
        md.append(f"Paper, Fast Downward A*+LM-cut (60 s) on extrapolation: {PAPER_FD.get(d, '—')}.")
        md.append("")

    # plan quality on extrapolation: best configuration per algorithm, against the reference plans
    md.append("## Plan length on test-extrapolation (problems solved; sum of lengths against the benchmark's own plans)")
    md.append("")
    md.append("| domain | config | algo | seed | solved | length sum | benchmark plans' sum (same problems) | ratio | max s |")
    md.append("|---|---|---|---|---|---|---|---|---|")
    for d in domains:
        for algo in algos:
            cands = [s for s in summary if s["domain"] == d and s["algo"] == algo and s["split"] == "test-extrapolation"]
            if not cands:
                continue
            best = max(cands, key=lambda s: (s["solved_valid"], -sum(x or 0 for x in s["plan_length"])))
            pairs = [(a, b) for a, b in zip(best["plan_length"], best["reference_length"]) if a is not None and b]
            la, lb = sum(a for a, _ in pairs), sum(b for _, b in pairs)
            md.append(f"| {d} | {best['config']} | {algo} | {best['seed']} | {best['solved_valid']}/{best['problems']} | "
                      f"{la} | {lb} | {la / lb if lb else float('nan'):.2f} | {max(best['seconds']):.2f} |")
    md.append("")

    # The learned planner against the classical ones on the extrapolation problems:
    # GBFS-hFF alone (the guided search without the model) and, when bench/fd.py ran,
    # Fast Downward's lama-first; plan lengths on the problems both solve.
    import csv
    fd = {}
    fd_csv = os.path.join(out, "fd.csv")
    if os.path.isfile(fd_csv):
        for r in csv.DictReader(open(fd_csv)):
            fd[os.path.basename(r["problem_file"])] = r
    md.append("## The learned planner against classical planners on test-extrapolation")
    md.append("")
    md.append("guided = GBFS-hFF whose preferred successors are the model's choice among FF's helpful actions; "
              "GBFS-hFF = the same search with every helpful action preferred (no model); FD = Fast Downward "
              "lama-first (bench/fd.py), same time limit. Lengths summed over the problems both planners solve.")
    md.append("")
    md.append("| domain | model | guided solved | max s | GBFS-hFF solved | expansions guided / GBFS | length guided / GBFS "
              "| FD solved | length guided / FD | with a benchmark plan* |")
    md.append("|---|---|---|---|---|---|---|---|---|---|")
    for d in domains:
        gpath = os.path.join(out, "runs", f"{d}-gbfs-hff.jsonl")
        gb = {}
        if os.path.isfile(gpath):
            for l in open(gpath):
                if l.strip():
                    j = json.loads(l)
                    gb[os.path.basename(j["problem"])] = j
        cands = [s for s in summary if s["domain"] == d and s["algo"] == "guided" and s["split"] == "test-extrapolation"]
        if not cands:
            continue
        best = max(cands, key=lambda s: (s["solved_valid"], -sum(x or 0 for x in s["plan_length"])))
        rows = list(zip(best["problem"], best["plan_length"], best["seconds"]))
        gsol = sum(1 for p in best["problem"] if gb.get(p, {}).get("solved"))
        both = [(l, gb[p]["plan_length"]) for p, l, _ in rows if l is not None and gb.get(p, {}).get("solved")]
        exp_g = sum(r.get("expanded", 0) for r in runs[(d, best["config"], str(best["seed"]), "guided",
                                                        "test-extrapolation")])
        exp_b = sum(j.get("expanded", 0) for j in gb.values())
        fsol = sum(1 for p in best["problem"] if fd.get(p, {}).get("sat_fd_solved") == "True")
        bf = [(l, int(fd[p]["sat_fd_plan_length"])) for p, l, _ in rows
              if l is not None and fd.get(p, {}).get("sat_fd_solved") == "True"]
        refs = sum(1 for x in best["reference_length"] if x)
        gcells = (f"{gsol}/{best['problems']} | {exp_g} / {exp_b} | {sum(a for a, _ in both)} / {sum(b for _, b in both)}"
                  if gb else "— | — | —")
        md.append(f"| {d} | {best['config']} | {best['solved_valid']}/{best['problems']} | {max(best['seconds']):.2f} | "
                  f"{gcells} | "
                  + (f"{fsol}/{best['problems']} | {sum(a for a, _ in bf)} / {sum(b for _, b in bf)}" if fd else "— | —")
                  + f" | {refs}/{best['problems']} |")
    md.append("")
    md.append("*Problems of the split that come with a plan in the benchmark (seedA/plans, made with Fast Downward).")
    md.append("")

    invalid = sum(s["invalid"] for s in summary)
    md.append(f"Plans returned but rejected by `nextstate validate`: {invalid}.")
    md.append("")
    models = []
    for path in sorted(glob.glob(os.path.join(out, "models", "*.json"))):
        try:
            j = json.load(open(path))
        except (ValueError, OSError):
            continue
        j["file"] = os.path.basename(path)
        models.append(j)
    if models:
        md.append("## Training")
        md.append("")
        md.append("| model file | D | size | kept epoch/rounds | validation loss | seconds |")
        md.append("|---|---|---|---|---|---|")
        for j in models:
            md.append(f"| {j['file'][:-5]} | {j['dim']} | {j['size']} | {j['best_epoch']} | "
                      f"{j['best_val'] if j['best_val'] is not None else float('nan'):.4g} | {j['seconds']:.1f} |")
        md.append("")

    with open(os.path.join(out, "coverage.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(out, "coverage.json"), "w") as f:
        json.dump({"runs": summary, "models": models}, f, indent=1)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, len(domains), figsize=(4.5 * len(domains), 4), squeeze=False)
        for ax, d in zip(axes[0], domains):
            for algo in algos:
                ys = [cell(d, cfg, algo, "test-extrapolation")[0] for cfg in CONFIGS]
                ax.bar([i + (0.4 if algo == "search" else 0) for i in range(len(CONFIGS))],
                       [y or 0 for y in ys], width=0.4, label=algo)
            ax.set_xticks([i + 0.2 for i in range(len(CONFIGS))])
            ax.set_xticklabels(CONFIGS, rotation=60, ha="right", fontsize=7)
            ax.set_ylim(0, 1.05)
            ax.set_title(f"{d}: extrapolation coverage")
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "coverage.png"), dpi=110)
    except ImportError:
        pass
    print("\n".join(md))


if __name__ == "__main__":
    main()
