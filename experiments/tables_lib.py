"""Shared helpers of the experiment scripts' table step (protocol_ladder.sh, cross_domain.sh, loo.sh, the
embedplan_* scripts, generalize.sh): JSON loading, mean ± SE, chance from a split's pools, percentage
formatting, and PNG plots (bar, line, scatter; each skipped without matplotlib).

Also a command line for the shell scripts' plots:
  python3 tables_lib.py runs RESULTS.json PREFIX     Hit@5 per domain (one bar plot per protocol, a bar per
                                                     encoder), or Hit@1/5/10 per protocol when the runs have
                                                     no domain: PREFIX-PROTOCOL.png / PREFIX.png
  python3 tables_lib.py curves OUT.png LOG...        training curves (dev Hit@5 and loss by epoch) of
                                                     `nextstate train --log` files
  python3 tables_lib.py lengths OUT.png RESULTS.csv  generalize.sh: plan length of each planner against
                                                     GBFS-hFF's on the same problem, and coverage per domain"""
import csv
import json
import math
import os
import re
import sys

try:
    import numpy as np
except ImportError:  # the tables still work; chance from pools needs numpy
    np = None


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def mean_se(xs):
    """(mean, standard error, n) of the non-None values; SE 0 for one value, None for none."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, None, 0
    m = sum(xs) / len(xs)
    se = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs)) if len(xs) > 1 else 0.0
    return m, se, len(xs)


def chance(split_dir, k=5, dataset=None):
    """Expected Hit@k of a random ranking of each test transition's pool (short pools count)."""
    if np is None:
        return None
    try:
        pools = np.load(os.path.join(split_dir, "pools.npy"))
        if dataset is not None:
            test = np.load(os.path.join(split_dir, "test.npy"))
            pools = pools[test[:, 0] == dataset]
    except (OSError, ValueError):
        return None
    if len(pools) == 0:
        return None
    n = (pools >= 0).sum(axis=1).astype(float)
    return float(np.mean(np.minimum(k, n) / n))


def pct(x, nd=1):
    return "—" if x is None else f"{100 * x:.{nd}f}"


def pm(m, se, n=None, nd=1):
    if m is None:
        return "—"
    s = f"{100 * m:.{nd}f} ± {100 * se:.{nd}f}"
    return s + (f" (n={n})" if n is not None else "")


def run_record(cell, name):
    """The numbers of one train + eval pair of a cell folder (None when the eval is missing)."""
    ev = load(os.path.join(cell, f"eval-{name}.json"))
    if not ev:
        return None
    m = ev.get("metrics", ev)
    tr = load(os.path.join(cell, f"train-{name}.json")) or {}
    r = {k: m.get(k) for k in ("n", "mean_pool", "hit@1", "hit@5", "hit@10", "hit@1_worst", "hit@5_worst", "mrr",
                               "hit@5_ceiling", "hit@5_worst_ceiling", "twin_queries")}
    r.update({k: tr.get(k) for k in ("epochs", "epochs_run", "best_epoch", "best_dev_hit@5", "seconds", "train", "dev")})
    return r


def _pyplot():
    """matplotlib.pyplot on the Agg backend, or None (and a note) when matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot")
        return None
    return plt


def _save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print("wrote", path)
    return True


def bar_plot(path, groups, series, ylabel, title, hline=None):
    """groups: x labels; series: {label: [value or None per group]} in [0, 1]. Skipped without matplotlib."""
    plt = _pyplot()
    if plt is None:
        return False
    fig, ax = plt.subplots(figsize=(max(7, 0.9 * len(groups) * max(1, len(series)) / 3), 4.5))
    w = 0.8 / max(1, len(series))
    for i, (lab, ys) in enumerate(series.items()):
        ax.bar([x + i * w for x in range(len(groups))], [100 * (y or 0) for y in ys], w, label=lab)
    ax.set_xticks([x + 0.4 - w / 2 for x in range(len(groups))])
    ax.set_xticklabels(groups, rotation=30, ha="right")
    if hline is not None:
        ax.axhline(100 * hline, color="k", ls="--", lw=0.8, label="chance")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2)
    return _save(fig, path)


def runs_plot(results_json, prefix):
    """The bar plots of a results.json whose "runs" carry protocol, eval metrics and optionally domain,
    encoder and setting (embedplan_interp.sh, embedplan_minilm9.sh, embedplan_wl9.sh)."""
    runs = (load(results_json) or {}).get("runs") or []
    if not runs:
        print(f"{results_json}: no runs to plot")
        return False
    if not any("domain" in r for r in runs):
        protos = [r["protocol"] for r in runs]
        series = {f"Hit@{k}": [r["eval"].get(f"hit@{k}") for r in runs] for k in (1, 5, 10)}
        return bar_plot(prefix + ".png", protos, series, "%", "Hit@k by protocol")
    ok = True
    for proto in dict.fromkeys(r["protocol"] for r in runs):
        sel = [r for r in runs if r["protocol"] == proto]
        domains = list(dict.fromkeys(r["domain"] for r in sel))
        labels = list(dict.fromkeys(_run_label(r) for r in sel))
        cell = {(r["domain"], _run_label(r)): r["eval"].get("hit@5") for r in sel}
        series = {lab: [cell.get((d, lab)) for d in domains] for lab in labels}
        ok = bar_plot(f"{prefix}-{proto}.png", domains, series, "Hit@5 (%)", f"{proto}: Hit@5 by encoder") and ok
    return ok


def _run_label(r):
    return r.get("encoder", "?") + (f" {r['setting']}" if r.get("setting") else "")


EPOCH_LINE = re.compile(r"epoch (\d+) loss ([-0-9.e+naif]+) dev_hit@5 ([-0-9.e+naif]+)")


def curves_plot(path, logs):
    """Dev Hit@5 and training loss by epoch, one line per `nextstate train --log` file."""
    data = {}
    for log in logs:
        try:
            rows = [EPOCH_LINE.search(line) for line in open(log)]
        except OSError:
            continue
        rows = [(int(m[1]), float(m[2]), float(m[3])) for m in rows if m]
        if rows:
            data[os.path.splitext(os.path.basename(log))[0]] = rows
    if not data:
        print("no training logs to plot")
        return False
    plt = _pyplot()
    if plt is None:
        return False
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    for lab, rows in data.items():
        e = [r[0] for r in rows]
        a1.plot(e, [r[1] for r in rows], label=lab)
        a2.plot(e, [100 * r[2] for r in rows], label=lab)
    a1.set(xlabel="epoch", ylabel="training loss", title="loss")
    a2.set(xlabel="epoch", ylabel="dev Hit@5 (%)", title="dev Hit@5")
    a2.legend(fontsize=7)
    return _save(fig, path)


def lengths_plot(path, results_csv):
    """generalize.sh: each planner's plan length against GBFS-hFF's (valid plans only), and coverage by domain."""
    try:
        rows = list(csv.DictReader(open(results_csv)))
    except OSError:
        rows = []
    if not rows:
        print(f"{results_csv}: nothing to plot")
        return False
    plt = _pyplot()
    if plt is None:
        return False
    algos = list(dict.fromkeys(r["algo"] for r in rows))
    domains = list(dict.fromkeys(r["domain"] for r in rows))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.5))
    top = 1
    for a in algos:
        pts = [(int(r["gbfs_length"]), int(r["plan_length"])) for r in rows
               if r["algo"] == a and r["valid"] == "yes" and int(r["gbfs_length"]) >= 0]
        if pts:
            a1.scatter([p[0] for p in pts], [p[1] for p in pts], s=14, label=a)
            top = max(top, *[max(p) for p in pts])
    a1.plot([0, top], [0, top], "k--", lw=0.8)
    a1.set(xlabel="GBFS-hFF plan length", ylabel="learned planner's plan length", title="plan length")
    a1.legend(fontsize=7)
    w = 0.8 / len(algos)
    for i, a in enumerate(algos):
        cov = [sum(r["valid"] == "yes" for r in rows if r["algo"] == a and r["domain"] == d) for d in domains]
        a2.bar([x + i * w for x in range(len(domains))], cov, w, label=a)
    a2.set_xticks([x + 0.4 - w / 2 for x in range(len(domains))])
    a2.set_xticklabels(domains, rotation=30, ha="right")
    a2.set(ylabel="problems solved (valid plan)", title="coverage")
    a2.legend(fontsize=7)
    return _save(fig, path)


def main(argv):
    cmds = {"runs": lambda a: runs_plot(a[0], a[1]), "curves": lambda a: curves_plot(a[0], a[1:]),
            "lengths": lambda a: lengths_plot(a[0], a[1])}
    if len(argv) < 3 or argv[0] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    cmds[argv[0]](argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
