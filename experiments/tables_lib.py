"""Shared helpers of the protocol scripts' table step (protocol_ladder.sh, cross_domain.sh, loo.sh):
JSON loading, mean ± SE, chance from a split's pools, percentage formatting, an optional bar plot."""
import json
import math
import os

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


def bar_plot(path, groups, series, ylabel, title, hline=None):
    """groups: x labels; series: {label: [value or None per group]} in [0, 1]. Skipped without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot")
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
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print("wrote", path)
    return True
