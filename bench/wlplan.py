#!/usr/bin/env python3
"""WL feature extraction throughput: nextstate's Python package against
WLPlan (PyPI `wlplan`), side by side in one run, on the first paper's
seed-A problems (../shared/benchmarks/seedA, found as python/tests/seeda.py
finds it; the run is skipped, exit 0, when they or wlplan are absent).

Per domain: nextstate fits the WL vocabulary (2 iterations, ILG, multiset
hashing, static atoms as state atoms) on the states along the training
plans and writes it in WLPlan's JSON; WLPlan loads that file.  Both then
embed the same states — every state along every plan of the chosen splits
(all four by default) — from their own representation (nextstate: packed
states, one `transform` per problem; WLPlan: `State` objects, one `embed`
call over a `DomainDataset`; building those representations is not timed).
Times are CPU seconds (time.process_time, all threads of the process), the
best of --repeat runs.  Every feature of every state is compared: the
mismatch count is the number of differing entries (it must be 0).

    build/venv/bin/python bench/wlplan.py [--domains blocks,gripper] [--splits train] [--repeat 3] [--json]

Prints a Markdown table (or one JSON object with --json): states, CPU
seconds and states/s of each side, and the ratio WLPlan CPU / nextstate CPU
(> 1: nextstate is faster)."""
import argparse
import contextlib
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# this file's name is the package's: its folder must not shadow `import wlplan`
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
sys.path.insert(0, os.path.join(HERE, "..", "python", "tests"))

import nextstate as ns  # noqa: E402
import seeda  # noqa: E402


@contextlib.contextmanager
def quiet_stdout():
    """File descriptor 1 to /dev/null (WLPlan's C++ side prints what it loads)."""
    sys.stdout.flush()
    saved = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(null)
        os.close(saved)


def best_cpu(fn, repeat):
    """(result of the last call, least CPU seconds over repeat calls)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return out, best


def bench_domain(seed, dom, splits, repeat, tmp):
    from wlplan.data import DomainDataset, ProblemDataset
    from wlplan.feature_generator import load_feature_generator

    fg = ns.WLFeatureGenerator(iterations=2).fit(seeda.trajectories(seed, dom, "train"))
    vocab = os.path.join(tmp, f"{dom}.json")
    fg.save(vocab)
    with quiet_stdout():
        wfg = load_feature_generator(vocab)
    groups = []
    for split in splits:
        groups += seeda.trajectories(seed, dom, split)
    packed = [(t, ns.states_array(t, s)) for t, s in groups]
    wd, wg = seeda.wlplan_groups(groups)
    dataset = DomainDataset(domain=wd, data=[ProblemDataset(problem=p, states=s) for p, s in wg])
    n = sum(a.shape[0] for _, a in packed)

    X, ns_cpu = best_cpu(lambda: [fg.transform(t, a) for t, a in packed], repeat)
    Y, wl_cpu = best_cpu(lambda: wfg.embed(dataset), repeat)
    X = np.vstack(X)
    Y = np.asarray(Y, dtype=np.float64)
    mismatches = int((X != Y).sum()) if X.shape == Y.shape else int(max(X.size, Y.size))
    return {"domain": dom, "problems": len(groups), "states": n, "features": fg.n_features,
            "nextstate_cpu_s": ns_cpu, "wlplan_cpu_s": wl_cpu,
            "nextstate_states_per_s": n / ns_cpu if ns_cpu > 0 else float("inf"),
            "wlplan_states_per_s": n / wl_cpu if wl_cpu > 0 else float("inf"),
            "ratio": wl_cpu / ns_cpu if ns_cpu > 0 else float("inf"), "mismatches": mismatches}


def table(rows):
    out = ["| domain | states | D | nextstate CPU s | nextstate states/s | WLPlan CPU s | WLPlan states/s "
           "| ratio (WLPlan / nextstate) | mismatches |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r['domain']} | {r['states']:,} | {r.get('features', '')} | {r['nextstate_cpu_s']:.3f} "
                   f"| {r['nextstate_states_per_s']:,.0f} | {r['wlplan_cpu_s']:.3f} | {r['wlplan_states_per_s']:,.0f} "
                   f"| {r['ratio']:.2f}× | {r['mismatches']} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--domains", default=",".join(seeda.DOMAINS), help="comma-separated (default: all four)")
    ap.add_argument("--splits", default=",".join(seeda.SPLITS), help="comma-separated (default: all four)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per side; the least CPU time counts (3)")
    ap.add_argument("--json", action="store_true", help="one JSON object instead of a Markdown table")
    a = ap.parse_args(argv)
    seed = seeda.seed_dir()
    try:
        import wlplan
    except ImportError:
        print("bench/wlplan.py: skipped (wlplan is not installed: pip install wlplan)")
        return 0
    if seed is None:
        print("bench/wlplan.py: skipped (seed-A benchmarks ../shared/benchmarks/seedA not found; "
              "NEXTSTATE_BENCHMARKS names their parent)")
        return 0
    import tempfile
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for dom in a.domains.split(","):
            if dom not in seeda.DOMAINS:
                ap.error(f"unknown domain {dom!r} (one of {', '.join(seeda.DOMAINS)})")
            rows.append(bench_domain(seed, dom, a.splits.split(","), max(1, a.repeat), tmp))
    n = sum(r["states"] for r in rows)
    nc, wc = sum(r["nextstate_cpu_s"] for r in rows), sum(r["wlplan_cpu_s"] for r in rows)
    total = {"domain": "all", "problems": sum(r["problems"] for r in rows), "states": n, "features": "",
             "nextstate_cpu_s": nc, "wlplan_cpu_s": wc, "nextstate_states_per_s": n / nc if nc > 0 else float("inf"),
             "wlplan_states_per_s": n / wc if wc > 0 else float("inf"), "ratio": wc / nc if nc > 0 else float("inf"),
             "mismatches": sum(r["mismatches"] for r in rows)}
    import resource
    info = {"nextstate": ns.__version__, "wlplan": getattr(wlplan, "__version__", "?"),
            "splits": a.splits.split(","), "repeat": a.repeat, "domains": rows, "total": total,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if a.json:
        print(json.dumps(info))
    else:
        print(f"WL features (2 iterations, ILG), nextstate {info['nextstate']} vs WLPlan {info['wlplan']}; "
              f"splits {', '.join(info['splits'])}; CPU seconds, best of {a.repeat}; "
              f"peak RSS {info['peak_rss_mb']:,.0f} MB (both sides, all states held)\n")
        print(table(rows + [total]))
    return 1 if total["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
