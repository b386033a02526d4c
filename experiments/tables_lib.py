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
                                                     GBFS-hFF's on the same problem, and coverage per domain
  python3 tables_lib.py paper-tables OUT DOMAINS PROTOCOLS ENCODERS SEEDS CONFIG_JSON
                                                     embedplan_tables.sh: per-domain Hit@1/5 mean ± SE with
                                                     chance@5 and ceiling@5, OUT/results.{json,csv,md}, hit5.png
analyses_tables() is embedplan_analyses.sh's table step (PCA, fact order, cost-to-go, misses)."""
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



# ---- embedplan_analyses.sh ---------------------------------------------------------------------------------


def _cos_dist(a, b):
    """1 − cos between matching rows of a and b."""
    na = np.linalg.norm(a, axis=1)
    nb = np.linalg.norm(b, axis=1)
    den = np.where(na * nb > 0, na * nb, 1.0)
    return 1.0 - (a * b).sum(axis=1) / den


def fact_order(dataset, emb, shuffles):
    """Paper appendix N: d_order = 1 − cos(s, σ(s)) over every state and reordering against d_action =
    1 − cos(s, s′) over the dataset's transitions, from canonical (emb/states.npy) and shuffled
    (emb/states-shufK.npy) embeddings.  None when they are missing or numpy is not installed."""
    if np is None:
        return None
    try:
        s = np.load(os.path.join(emb, "states.npy")).astype(np.float64)
        tr = np.load(os.path.join(dataset, "transitions.npy"))
        shuf = [np.load(os.path.join(emb, f"states-shuf{k}.npy")).astype(np.float64) for k in range(1, shuffles + 1)
                if os.path.exists(os.path.join(emb, f"states-shuf{k}.npy"))]
    except (OSError, ValueError):
        return None
    if not shuf or len(tr) == 0:
        return None
    d_act = _cos_dist(s[tr[:, 1]], s[tr[:, 3]])
    d_ord = np.concatenate([_cos_dist(s, x) for x in shuf])
    med_act = float(np.median(d_act))
    return {"states": int(len(s)), "reorderings": len(shuf), "transitions": int(len(tr)),
            "d_order_mean": float(d_ord.mean()), "d_order_median": float(np.median(d_ord)),
            "d_order_max": float(d_ord.max()), "d_action_mean": float(d_act.mean()),
            "d_action_median": med_act, "ratio_mean": float(d_ord.mean() / d_act.mean()) if d_act.mean() > 0 else None,
            "order_above_action_median": float((d_ord > med_act).mean()),
            "unchanged": float((d_ord == 0).mean())}


HDR_STATE, HDR_GOAL = "\n\n### CURRENT STATE ###\n", "\n\n### GOAL DESCRIPTION ###\n"


def lda_prompts(lines, dataset, lda_dir):
    """Latent distance alignment, text inputs: from `data export --text` lines (every transition's two state
    prompts) writes lda_dir/state-chars.npy (characters of each state's prompt, -1 for a state in no
    transition) and lda_dir/goal-prompts.jsonl, one goal prompt per problem (rows: goal-problems.json): a
    state prompt of that problem with the CURRENT STATE block's clauses replaced by the GOAL DESCRIPTION's."""
    prob = np.load(os.path.join(dataset, "state_problem.npy"))  # by index: problem names need not be unique
    chars = np.full(len(prob), -1, dtype=np.int64)
    one = {}
    for line in lines:
        r = json.loads(line)
        for k, t in (("state", "state_text"), ("next_state", "next_state_text")):
            chars[r[k]] = len(r[t])
            one.setdefault(int(prob[r[k]]), r[t])
    rows = []
    with open(os.path.join(lda_dir, "goal-prompts.jsonl"), "w") as f:
        for i in sorted(one):
            t = one[i]
            if t.count(HDR_STATE) != 1 or t.count(HDR_GOAL) != 1:
                raise SystemExit(f"lda: problem {i}: a prompt without one CURRENT STATE and one GOAL DESCRIPTION block")
            head, rest = t.split(HDR_STATE)
            goal = rest.split(HDR_GOAL)[1]
            f.write(json.dumps(head + HDR_STATE + goal + HDR_GOAL + goal) + "\n")
            rows.append(i)
    json.dump(rows, open(os.path.join(lda_dir, "goal-problems.json"), "w"))
    np.save(os.path.join(lda_dir, "state-chars.npy"), chars)


def _ranks(x):
    """Ranks 0…n−1, ties averaged (Spearman)."""
    o = np.argsort(x, kind="mergesort")
    r = np.empty(len(x))
    r[o] = np.arange(len(x))
    _, inv = np.unique(x, return_inverse=True)
    return (np.bincount(inv, r) / np.bincount(inv))[inv]


def _r(a, b):
    a, b = a - a.mean(), b - b.mean()
    den = math.sqrt((a * a).sum() * (b * b).sum())
    return float((a * b).sum() / den) if den > 0 else None


def _resid(y, x):
    """y minus its least-squares line in x (with intercept)."""
    A = np.stack([np.ones(len(x)), x], axis=1)
    return y - A @ np.linalg.lstsq(A, y, rcond=None)[0]


def _centred(x, g):
    """x minus the mean of its group g."""
    _, inv = np.unique(g, return_inverse=True)
    return x - (np.bincount(inv, x) / np.bincount(inv))[inv]


def lda_stats(d, h, n_len, prob, seed=0):
    """Pearson and Spearman r(d, h*), their partial forms with prompt length residualised out of both, the
    confound's own correlations, r within problems (d and h* centred per problem: problem size, and with it
    most of the length, held fixed), and r(d, h*) with h* permuted (a control: ≈ 0 when the pairs are real)."""
    d, h, n_len = (np.asarray(v, dtype=np.float64) for v in (d, h, n_len))
    st = {"n": int(len(d))}
    if len(d) < 3:
        return st
    rd, rh, rl = _ranks(d), _ranks(h), _ranks(n_len)
    st.update(pearson=_r(d, h), spearman=_r(rd, rh), r_len_h=_r(n_len, h), r_len_d=_r(n_len, d),
              partial_pearson=_r(_resid(d, n_len), _resid(h, n_len)),
              partial_spearman=_r(_resid(rd, rl), _resid(rh, rl)),
              within_problem=_r(_centred(d, prob), _centred(h, prob)),
              pearson_shuffled=_r(d, np.random.default_rng(seed).permutation(h)))
    return st


def lda(dataset, ddir, model):
    """Paper appendix H.1, latent distance alignment: for every state s of the dataset with h* ≥ 0 and its
    problem's goal g, d = 1 − cos(e_s, e_g) against h* = cost(s, g), per encoder; length = characters of the
    state prompt (text) or true atoms of s (literals, WL).  Writes ddir/lda/pairs-ENC.npy (rows: state id, d,
    h*, length) and returns {encoder: stats}; {} without numpy or inputs."""
    if np is None:
        return {}
    L = os.path.join(ddir, "lda")
    try:
        man = json.load(open(os.path.join(dataset, "manifest.json")))
        h = np.load(os.path.join(dataset, "state_hstar.npy")).astype(np.int64)
        prob = np.load(os.path.join(dataset, "state_problem.npy")).astype(np.int64)
        bits = np.load(os.path.join(dataset, "states.npy"))
    except (OSError, ValueError):
        return {}
    N = len(h)
    # literals: 0/1 over each problem's fluent atoms; goal atoms by name (a static goal atom is not a column)
    X = np.zeros((N, max(len(p["atoms"]) for p in man["problems"])), dtype=np.float64)
    G = np.zeros((len(man["problems"]), X.shape[1]))
    for j in range(X.shape[1]):
        X[:, j] = (bits[:, j // 64] >> np.uint64(j % 64)) & np.uint64(1)
    for i, p in enumerate(man["problems"]):
        X[prob == i, len(p["atoms"]):] = 0
        idx = {a: k for k, a in enumerate(p["atoms"])}
        for a in p["goal"]:
            if a in idx:
                G[i, idx[a]] = 1
    natoms = X.sum(axis=1)
    inputs = {"builtin": (X, G, np.arange(len(G)), natoms)}
    try:
        inputs["wl"] = (np.load(os.path.join(L, "wl-states.npy")), np.load(os.path.join(L, "wl-goals.npy")),
                        np.arange(len(G)), natoms)
    except (OSError, ValueError):
        pass
    try:
        inputs["text"] = (np.load(os.path.join(ddir, "emb-" + model, "states.npy")),
                          np.load(os.path.join(L, "goals-" + model + ".npy")),
                          np.array(json.load(open(os.path.join(L, "goal-problems.json"))), dtype=np.int64),
                          np.load(os.path.join(L, "state-chars.npy")).astype(np.float64))
    except (OSError, ValueError):
        pass
    res = {}
    for enc, (S, Gm, rows, length) in inputs.items():
        S, Gm = S.astype(np.float64), Gm.astype(np.float64)
        grow = np.full(len(man["problems"]), -1)
        grow[rows] = np.arange(len(rows))
        gi = grow[prob]
        keep = (h >= 0) & (gi >= 0) & (length >= 0)
        keep &= np.linalg.norm(S, axis=1) > 0
        keep &= np.linalg.norm(Gm, axis=1)[np.maximum(gi, 0)] > 0
        ids = np.flatnonzero(keep)
        d = _cos_dist(S[ids], Gm[gi[ids]])
        st = lda_stats(d, h[ids], length[ids], prob[ids])
        st.update(problems=int(len(np.unique(prob[ids]))), dropped=int(N - len(ids)),
                  length="prompt characters" if enc == "text" else "true atoms")
        np.save(os.path.join(L, f"pairs-{enc}.npy"), np.stack([ids, d, h[ids], length[ids]], axis=1))
        res[enc] = st
    return res


def _metrics(ev):
    m = ev.get("metrics", {})
    return {k: m.get(k) for k in ("n", "hit@1", "hit@5", "chance@5", "hit@5_ceiling")}


def _ctg_label(b):
    if b["h"] is None:
        return "?"
    return str(b["h"]) if b["h_max"] is not None else f"≥{b['h']}"


def _hist_cols(hist):
    """0, 1, 2, 3, 4, 5–9, ≥10 from the 11 bins of a miss histogram."""
    n = [b["n"] for b in hist]
    return n[:5] + [sum(n[5:10]), n[10]]


def analyses_tables(out, domains, protocols, encoders, cfg):
    runs, order, pca, align = [], {}, {}, {}
    for d in domains:
        ddir = os.path.join(out, d)
        try:
            dataset = open(os.path.join(ddir, "dataset.path")).read().strip()
        except OSError:
            dataset = None
        for p in protocols:
            for e in encoders:
                ev = load(os.path.join(ddir, p, f"eval-{e}.json"))
                if not ev:
                    continue
                r = {"domain": d, "protocol": p, "encoder": e, "metrics": _metrics(ev),
                     "cost_to_go": ev.get("cost_to_go"), "misses": ev.get("misses")}
                shuf = [load(os.path.join(ddir, p, f"eval-{e}-shuf{k}.json")) for k in range(1, cfg["shuffles"] + 1)]
                shuf = [x for x in shuf if x]
                if shuf:
                    r["shuffled_queries"] = {"reorderings": len(shuf),
                                             "hit@1": [x["metrics"]["hit@1"] for x in shuf],
                                             "hit@5": [x["metrics"]["hit@5"] for x in shuf],
                                             "hit@1_mean": mean_se([x["metrics"]["hit@1"] for x in shuf])[0],
                                             "hit@5_mean": mean_se([x["metrics"]["hit@5"] for x in shuf])[0]}
                runs.append(r)
        if dataset:
            fo = fact_order(dataset, os.path.join(ddir, "emb-" + cfg["model"]), cfg["shuffles"])
            if fo:
                order[d] = fo
        if dataset and os.path.isdir(os.path.join(ddir, "lda")):
            la = lda(dataset, ddir, cfg["model"])
            if la:
                align[d] = {e: la[e] for e in encoders if e in la}
        pw = load(os.path.join(ddir, "pca-wl.json"))
        if pw:
            pca.setdefault("wl", {})[d] = {"variance_ratio": pw["variance_ratio"], "rows": pw["rows"],
                                          "dim": pw["dim"]}
    pt = load(os.path.join(out, "pca-text.json"))
    if pt:
        names = [os.path.basename(os.path.dirname(os.path.dirname(s["spec"]))) for s in pt["specs"]]
        pca["text"] = {"model": cfg["model"], "variance_ratio": pt["variance_ratio"], "dim": pt["dim"],
                       "domains": [{"domain": n, "rows": s["rows"]} for n, s in zip(names, pt["specs"])]}
    res = dict(cfg, domains=domains, protocols=protocols, encoders=encoders, runs=runs, fact_order=order, pca=pca, lda=align)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    L = []
    P = L.append
    P("# EmbedPlan's analyses (paper appendices F, H, J, N)")
    P("")
    P(f"Pools of {cfg['pool']}, seed {cfg['seed']}, {cfg['epochs']} epochs at lr {cfg['lr']} (dev-selected), "
      f"random tie-breaking.  Encoders: {', '.join(encoders)} (text = {cfg['model']})." +
      (f"  Wall time {cfg['wall_seconds']} s." if cfg["wall_seconds"] > 0 else ""))
    P("")
    P("## Hit@k")
    P("")
    P("| domain | protocol | encoder | test | Hit@1 | Hit@5 | chance@5 | ceiling@5 |")
    P("|---|---|---|---|---|---|---|---|")
    for r in runs:
        m = r["metrics"]
        P(f"| {r['domain']} | {r['protocol']} | {r['encoder']} | {m['n']} | {pct(m['hit@1'])} | {pct(m['hit@5'])} | "
          f"{pct(m['chance@5'])} | {pct(m['hit@5_ceiling'])} |")
    P("")
    P("## Hit@5 by the query state's cost to go h* (appendix H's question, asked of the trained model)")
    P("")
    P("Cells: Hit@5 % (queries).  h* is the optimal plan length from the query state s of (s, a, s′).")
    for p in protocols:
        sel = [r for r in runs if r["protocol"] == p and r["cost_to_go"]]
        if not sel:
            continue
        cols = []
        for r in sel:
            for b in r["cost_to_go"]:
                if _ctg_label(b) not in cols:
                    cols.append(_ctg_label(b))
        key = lambda c: (2, 0) if c == "?" else (1, int(c[1:])) if c.startswith("≥") else (0, int(c))
        cols.sort(key=key)
        P("")
        P(f"### {p}")
        P("")
        P("| domain | encoder | " + " | ".join(f"h*{c}" if c.startswith("≥") else f"h*={c}" for c in cols) + " |")
        P("|---|---|" + "---|" * len(cols))
        for r in sel:
            cell = {_ctg_label(b): f"{pct(b['hit@5'])} ({b['n']})" for b in r["cost_to_go"]}
            P(f"| {r['domain']} | {r['encoder']} | " + " | ".join(cell.get(c, "") for c in cols) + " |")
    P("")
    P("## Misses: facts the top-1 state differs by from the true next state (appendix J)")
    P("")
    P("|L(ŝ) Δ L(s′)| of the top-1 candidate ŝ of each query whose truth is not top-1; the paper (Hit@5 misses "
      "under Extrapolation, 50 sampled per domain) reports median 2, IQR 1–3.  \"other\": ŝ from another problem.")
    P("")
    P("| domain | protocol | encoder | top-1 misses | other | median (IQR) | mean | 0 | 1 | 2 | 3 | 4 | 5–9 | ≥10 | "
      "Hit@5 misses | median (IQR) |")
    P("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        ms = r["misses"]
        if not ms:
            continue
        t1, t5 = ms["top1"], ms["top5"]
        iqr = lambda m: "—" if not m["n"] else f"{m['median']:g} ({m['q1']:g}–{m['q3']:g})"
        P(f"| {r['domain']} | {r['protocol']} | {r['encoder']} | {t1['n']} | {t1['other_problem']} | {iqr(t1)} | "
          f"{'—' if not t1['n'] else format(t1['mean'], '.2f')} | " + " | ".join(str(x) for x in _hist_cols(t1['hist']))
          + f" | {t5['n']} | {iqr(t5)} |")
    P("")
    P("## Fact-order sensitivity of the text path (appendix N)")
    P("")
    if order:
        P(f"{cfg['model']}: every state re-rendered with its CURRENT STATE clauses shuffled (`embed --shuffle-facts K`), "
          "d_order = 1 − cos(s, σ(s)) over states × reorderings, d_action = 1 − cos(s, s′) over the dataset's "
          "transitions (paper, BGE-M3: reordering moves the embedding slightly further than an action).  The literal "
          "and WL encoders read the fact set: d_order = 0 by construction.")
        P("")
        P("| domain | states × orders | d_order mean (median) | d_action mean (median) | d_order ÷ d_action | "
          "d_order > median d_action |")
        P("|---|---|---|---|---|---|")
        for d, fo in order.items():
            P(f"| {d} | {fo['states']} × {fo['reorderings']} | {fo['d_order_mean']:.2e} ({fo['d_order_median']:.2e}) | "
              f"{fo['d_action_mean']:.2e} ({fo['d_action_median']:.2e}) | "
              f"{'—' if fo['ratio_mean'] is None else format(fo['ratio_mean'], '.2f')} | "
              f"{100 * fo['order_above_action_median']:.1f}% |")
        sh = [r for r in runs if r.get("shuffled_queries")]
        if sh:
            P("")
            P("Hit@k of the model trained on canonical renderings when the test queries' states are rendered "
              "shuffled (`eval --query-features`, candidates canonical; mean over reorderings):")
            P("")
            P("| domain | protocol | Hit@1 canonical | Hit@1 shuffled | Hit@5 canonical | Hit@5 shuffled |")
            P("|---|---|---|---|---|---|")
            for r in sh:
                s_ = r["shuffled_queries"]
                P(f"| {r['domain']} | {r['protocol']} | {pct(r['metrics']['hit@1'])} | {pct(s_['hit@1_mean'])} | "
                  f"{pct(r['metrics']['hit@5'])} | {pct(s_['hit@5_mean'])} |")
    else:
        P("No text embeddings (no model, or every dataset above TEXT_MAX_STATES).")
    P("")
    P("## PCA of state embeddings (appendix F.1)")
    P("")
    if "text" in pca:
        t = pca["text"]
        P(f"{t['model']} ({t['dim']} dims), one PCA over " +
          ", ".join(f"{x['domain']} ({x['rows']} states)" for x in t["domains"]) +
          ": the first two components explain " + " + ".join(f"{100 * v:.1f}%" for v in t["variance_ratio"]) +
          " of the variance (pca-text.png, coloured by domain).")
    for d, w in pca.get("wl", {}).items():
        P(f"- WL features of {d} ({w['rows']} states × {w['dim']} columns): " +
          " + ".join(f"{100 * v:.1f}%" for v in w["variance_ratio"]) + " (pca-wl.png, coloured by h*)")
    P("")
    P("## Latent distance alignment (appendix H.1)")
    P("")
    if align:
        fmt = lambda v: "—" if v is None else f"{v:+.3f}"
        P("Every state s with h* ≥ 0 paired with its problem's goal g: d = 1 − cos(e_s, e_g) against h* = cost(s, g); "
          "partial: both residualised on the length (text: characters of the state prompt; literals, WL: true atoms "
          "of s).  Goals: text = the state prompt's template with the goal clauses in the CURRENT STATE block; "
          "literals = the goal atoms' 0/1 vector; WL = `encode --fit --fit-goals --goals` (a state holding the "
          "goal atoms, one vocabulary of the dataset's state and goal graphs).  "
          "Within problems: Pearson r of d and h* centred per problem.  Shuffled: r with h* permuted (a control).  The paper (four encoders, nine domains): ≈ 0 after the control.")
        P("")
        P("| domain | encoder | pairs | problems | Pearson r(d, h*) | Spearman ρ | r(len, h*) | r(len, d) | "
          "partial r | partial ρ | r within problems | shuffled r |")
        P("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for d, per in align.items():
            for e, st in per.items():
                P(f"| {d} | {ENCODER_NAMES.get(e, e)} | {st['n']} | {st['problems']} | {fmt(st.get('pearson'))} | "
                  f"{fmt(st.get('spearman'))} | {fmt(st.get('r_len_h'))} | {fmt(st.get('r_len_d'))} | "
                  f"{fmt(st.get('partial_pearson'))} | {fmt(st.get('partial_spearman'))} | {fmt(st.get('within_problem'))} | "
                  f"{fmt(st.get('pearson_shuffled'))} |")
    else:
        P("No inputs (step 5 did not run).")
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(L) + "\n")
    print("\n".join(L))
    _analyses_plots(out, runs, protocols, pca)
    _lda_plot(out, align)
    return 0


def _lda_plot(out, align):
    """d(e_s, e_g) against h*, one panel per encoder, coloured by domain (lda.png)."""
    plt = _pyplot()
    encs = sorted({e for per in align.values() for e in per})
    if plt is None or np is None or not encs:
        return
    fig, axs = plt.subplots(1, len(encs), figsize=(4.5 * len(encs), 4), squeeze=False)
    for ax, e in zip(axs[0], encs):
        for d, per in align.items():
            if e not in per:
                continue
            x = np.load(os.path.join(out, d, "lda", f"pairs-{e}.npy"))
            st = per[e]
            lab = f"{d} r={st.get('pearson') or 0:+.2f}, partial {st.get('partial_pearson') or 0:+.2f}"
            ax.scatter(x[:, 2] + np.random.default_rng(0).uniform(-0.2, 0.2, len(x)), x[:, 1], s=4, alpha=0.5,
                       label=lab)
        ax.set(xlabel="h* (jittered)", ylabel="1 − cos(e_s, e_g)", title=ENCODER_NAMES.get(e, e))
        ax.legend(fontsize=6, markerscale=2)
    _save(fig, os.path.join(out, "lda.png"))
    plt.close(fig)


def _analyses_plots(out, runs, protocols, pca):
    plt = _pyplot()
    if plt is None or np is None:
        return
    if "text" in pca:
        xy = np.load(os.path.join(out, "pca-text.npy"))
        fig, ax = plt.subplots(figsize=(6, 5))
        r0 = 0
        for x in pca["text"]["domains"]:
            ax.scatter(xy[r0:r0 + x["rows"], 0], xy[r0:r0 + x["rows"], 1], s=6, alpha=0.6, label=x["domain"])
            r0 += x["rows"]
        v = pca["text"]["variance_ratio"]
        ax.set(xlabel=f"PC1 ({100 * v[0]:.1f}%)", ylabel=f"PC2 ({100 * v[1]:.1f}%)",
               title=f"PCA of {pca['text']['model']} state embeddings")
        ax.legend(fontsize=7, markerscale=2)
        _save(fig, os.path.join(out, "pca-text.png"))
        plt.close(fig)
    wl = pca.get("wl", {})
    if wl:
        fig, axs = plt.subplots(1, len(wl), figsize=(4.5 * len(wl), 4), squeeze=False)
        for ax, d in zip(axs[0], wl):
            xy = np.load(os.path.join(out, d, "pca-wl.npy"))
            try:
                h = np.load(os.path.join(open(os.path.join(out, d, "dataset.path")).read().strip(), "state_hstar.npy"))
            except (OSError, ValueError):
                h = np.zeros(len(xy))
            sc = ax.scatter(xy[:, 0], xy[:, 1], c=np.where(h < 0, np.nan, h), s=6, cmap="viridis")
            fig.colorbar(sc, ax=ax, label="h*")
            ax.set(title=f"{d}: WL features", xlabel="PC1", ylabel="PC2")
        _save(fig, os.path.join(out, "pca-wl.png"))
        plt.close(fig)
    sel = [r for r in runs if r["cost_to_go"]]
    if sel:
        fig, axs = plt.subplots(1, len(protocols), figsize=(5.5 * len(protocols), 4), squeeze=False)
        for ax, p in zip(axs[0], protocols):
            for r in (r for r in sel if r["protocol"] == p):
                pts = [(b["h"], b["hit@5"]) for b in r["cost_to_go"] if b["h"] is not None]
                ax.plot([q[0] for q in pts], [100 * q[1] for q in pts], marker="o", ms=3,
                        label=f"{r['domain']} {r['encoder']}")
            ax.set(xlabel="h* of the query state (last point: ≥ 16)", ylabel="Hit@5 (%)", title=p, ylim=(-2, 102))
            ax.legend(fontsize=6)
        _save(fig, os.path.join(out, "cost_to_go.png"))
        plt.close(fig)
    sel = [r for r in runs if r["misses"] and r["misses"]["top1"]["n"]]
    if sel:
        fig, axs = plt.subplots(1, len(protocols), figsize=(5.5 * len(protocols), 4), squeeze=False)
        labels = ["0", "1", "2", "3", "4", "5–9", "≥10"]
        for ax, p in zip(axs[0], protocols):
            rs = [r for r in sel if r["protocol"] == p]
            w = 0.8 / max(1, len(rs))
            for i, r in enumerate(rs):
                t1 = r["misses"]["top1"]
                ys = [100 * c / t1["n"] for c in _hist_cols(t1["hist"])]
                ax.bar([x + i * w for x in range(len(labels))], ys, w, label=f"{r['domain']} {r['encoder']}")
            ax.set_xticks([x + 0.4 - w / 2 for x in range(len(labels))])
            ax.set_xticklabels(labels)
            ax.set(xlabel="facts the top-1 state differs by", ylabel="% of top-1 misses", title=p)
            ax.legend(fontsize=6)
        _save(fig, os.path.join(out, "misses.png"))
        plt.close(fig)


# ---- embedplan_tables.sh ------------------------------------------------------------------------------------

# What the paper's text states of its Tables 6, 13, 14 and 21 (its own data: ~3 M transitions, 67 ACPBench
# problems, frozen LLM / sentence encoders; the table bodies are not in the text we have).
PAPER_NOTES = {
    "interpolation": "paper: Hit@5 ≥ 99.5 for every encoder but MPNet (Llama-3.3-70B 99.7, mean Hit@1 92.1; "
                     "Tables 6, 14)",
    "plan-variant": "paper (Table 21, per-step Hit@5 along held-out plans): Llama-3.3-70B 51.2, BGE-M3 ≈ 51–53, "
                    "MPNet 24.3; exact trajectory 22.6 (Llama)",
    "extrapolation": "paper (Tables 6, 13): Hit@5 Llama-3.3-70B 54.6 ± SE over nine domains (26–76 by domain), "
                     "BGE-M3 36.3, MPNet 26.8; character 3–5-grams 79.4 on ferry, logistics, goldminer (Table 7); "
                     "per-step plan Hit@5 10.1, exact 3.3 (Table 21)",
}
ENCODER_NAMES = {"builtin": "literals", "wl": "WL", "bow": "bag of words", "tfidf": "TF-IDF", "char": "char 3–5",
                 "random": "random (control)", "context": "context (control)", "minilm": "MiniLM", "mpnet": "MPNet"}
CELL_KEYS = ("n", "mean_pool", "hit@1", "hit@5", "hit@10", "hit@1_worst", "hit@5_worst", "chance@5",
             "hit@5_ceiling", "twin_queries")


def _split_counts(split_dir):
    try:
        txt = open(os.path.join(split_dir, "split.json")).read()
    except OSError:
        return {}
    m = re.search(r'"counts": \{"train": (\d+), "dev": (\d+), "test": (\d+), "short_pools": (\d+)\}', txt)
    return dict(zip(("train", "dev", "test", "short_pools"), map(int, m.groups()))) if m else {}


def _dataset_info(ddir):
    """Problems (ACPBench / generated), states and transitions of a domain's dataset folder."""
    info = {"problems": 0, "acp": 0, "generated": 0, "states": None, "transitions": None,
            "short": os.path.exists(os.path.join(ddir, "short"))}
    try:
        names = [f for f in os.listdir(os.path.join(ddir, "problems")) if f.endswith(".pddl")]
    except OSError:
        names = []
    info["problems"] = len(names)
    info["acp"] = sum(n.startswith("acp-") for n in names)
    info["generated"] = info["problems"] - info["acp"]
    m = load(os.path.join(ddir, "data", "manifest.json"))
    if m is None and np is not None and os.path.exists(os.path.join(ddir, "data", "state_problem.npy")):
        m = {}
    if np is not None:
        try:
            info["states"] = int(len(np.load(os.path.join(ddir, "data", "state_problem.npy"))))
            info["transitions"] = int(len(np.load(os.path.join(ddir, "data", "transitions.npy"))))
        except (OSError, ValueError):
            pass
    return info


def paper_tables(out, domains, protocols, encoders, seeds, cfg):
    """embedplan_tables.sh's table step: OUT/results.{json,csv,md} and OUT/hit5.png from OUT/runs."""
    cells, summary = [], []
    for d in domains:
        for p in protocols:
            for e in encoders:
                per_seed = []
                for s in seeds:
                    c = os.path.join(out, "runs", d, f"{p}-s{s}")
                    ev = load(os.path.join(c, f"eval-{e}.json"))
                    if not ev:
                        continue
                    m = ev.get("metrics", {})
                    r = {"domain": d, "protocol": p, "encoder": e, "seed": int(s)}
                    r.update({k: m.get(k) for k in CELL_KEYS})
                    r.update(_split_counts(os.path.join(c, "split")))
                    tr = load(os.path.join(c, f"train-{e}.json")) or {}
                    r.update({f"train_{k}": tr.get(k) for k in ("steps", "epochs_run", "best_epoch", "best_dev_hit@5",
                                                                  "seconds")})
                    pl = ev.get("plans") or {}
                    r["plan_steps"] = pl.get("steps")
                    r["plan_mean_hit@5"] = pl.get("plan_mean_hit@5")
                    r["plan_exact_hit@5"] = pl.get("exact_hit@5")
                    cells.append(r)
                    per_seed.append(r)
                if not per_seed:
                    continue
                row = {"domain": d, "protocol": p, "encoder": e, "seeds": len(per_seed)}
                for k in ("hit@1", "hit@5", "hit@5_worst", "plan_mean_hit@5", "plan_exact_hit@5"):
                    mu, se, _ = mean_se([r[k] for r in per_seed])
                    row[k], row[k + "_se"] = mu, se
                for k in ("chance@5", "hit@5_ceiling", "mean_pool"):
                    row[k] = mean_se([r[k] for r in per_seed])[0]
                for k in ("n", "train", "short_pools"):
                    xs = [r.get(k) for r in per_seed if r.get(k) is not None]
                    row[k + "_min"] = min(xs) if xs else None
                    row[k + "_mean"] = sum(xs) / len(xs) if xs else None
                row["twin_queries_mean"] = mean_se([r["twin_queries"] for r in per_seed])[0]
                summary.append(row)
    data = {d: _dataset_info(os.path.join(out, "data", d)) for d in domains}
    res = dict(cfg, domains=domains, protocols=protocols, encoders=encoders, seeds=[int(s) for s in seeds],
               datasets=data, summary=summary, cells=cells)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    cols = ["domain", "protocol", "encoder", "seeds", "hit@1", "hit@1_se", "hit@5", "hit@5_se", "chance@5",
            "hit@5_ceiling", "hit@5_worst", "plan_mean_hit@5", "plan_exact_hit@5", "n_min", "n_mean", "train_min",
            "train_mean", "short_pools_min", "mean_pool", "twin_queries_mean"]
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in summary:
            w.writerow(r)
    key = {(r["domain"], r["protocol"], r["encoder"]): r for r in summary}
    L = []
    P = L.append
    P("# EmbedPlan world model: per-domain tables at test-set sizes that carry their digits")
    P("")
    P(f"Each cell: mean ± SE over the seeds run ({', '.join(map(str, seeds))}; the seed draws the split, the pools "
      f"and the training run), `train --steps {cfg['steps']}` (batch 128, lr {cfg['lr']}, the epoch with the best "
      f"dev Hit@5 kept; 4-layer heads for Plan-Variant), pools of {cfg['pool']}, random tie-breaking.  "
      "chance@5 = mean over test queries of min(1, 5 / pool size) for the actual pools; ceiling@5 = the Hit@5 a "
      "perfect model reaches given the encoder's feature twins (identical rows).  Encoders: " +
      ", ".join(f"{e} = {ENCODER_NAMES.get(e, e)}" for e in encoders) + ".  Text encoders (MiniLM, MPNet) run only "
      f"on datasets of ≤ {cfg['text_max_states']} states: " +
      (", ".join(sorted({r['domain'] for r in summary if r['encoder'] in ('minilm', 'mpnet')})) or "none here") + ".")
    P("")
    P("## Data (ACPBench + generated problems, chosen by size only)")
    P("")
    P(f"Every problem kept has ≥ {cfg['pool']} states and ≤ {cfg['max_pt']} transitions; problems are added until "
      f"every Extrapolation split has ≥ {cfg['min_test']} test and ≥ {cfg['min_train']} training transitions "
      "whichever 20 % of the problems it holds out.  Test / train: min over seeds (builtin runs, else the first "
      "encoder).")
    P("")
    hdr = "| domain | problems (ACP + gen) | states | transitions |"
    sep = "|---|---|---|---|"
    for p in protocols:
        hdr += f" {p} test / train |"
        sep += "---|"
    P(hdr)
    P(sep)
    for d in domains:
        i = data[d]
        row = f"| {d}{' (short)' if i['short'] else ''} | {i['problems']} ({i['acp']} + {i['generated']}) | " \
              f"{i['states'] if i['states'] is not None else '—'} | {i['transitions'] if i['transitions'] is not None else '—'} |"
        for p in protocols:
            r = next((key[(d, p, e)] for e in encoders if (d, p, e) in key), None)
            row += f" {r['n_min']} / {r['train_min']} |" if r else " — |"
        P(row)
    for p in protocols:
        P("")
        P(f"## {p}: Hit@1 and Hit@5 (%) per domain")
        P("")
        P(PAPER_NOTES.get(p, ""))
        P("")
        P("| domain | encoder | seeds | test n | Hit@1 | Hit@5 | chance@5 | ceiling@5 | plan step Hit@5 | exact plan Hit@5 |")
        P("|---|---|---|---|---|---|---|---|---|---|")
        for d in domains:
            for e in encoders:
                r = key.get((d, p, e))
                if not r:
                    continue
                P(f"| {d} | {e} | {r['seeds']} | {r['n_min']} | {pm(r['hit@1'], r['hit@1_se'])} | "
                  f"{pm(r['hit@5'], r['hit@5_se'])} | {pct(r['chance@5'])} | {pct(r['hit@5_ceiling'])} | "
                  f"{pm(r['plan_mean_hit@5'], r['plan_mean_hit@5_se'])} | {pm(r['plan_exact_hit@5'], r['plan_exact_hit@5_se'])} |")
    # Table 6 / 13 layout: Hit@5 per domain × encoder, and the mean ± SE across domains
    P("")
    P("## Hit@5 (%) by domain and encoder (Table 13 layout) and the mean ± SE across domains (Table 6 layout)")
    for p in protocols:
        enc = [e for e in encoders if any((d, p, e) in key for d in domains)]
        if not enc:
            continue
        P("")
        P(f"### {p}")
        P("")
        P("| domain | chance@5 | " + " | ".join(enc) + " |")
        P("|---|---|" + "---|" * len(enc))
        for d in domains:
            ch = next((key[(d, p, e)]["chance@5"] for e in enc if (d, p, e) in key), None)
            P(f"| {d} | {pct(ch)} | " + " | ".join(
                pm(key[(d, p, e)]["hit@5"], key[(d, p, e)]["hit@5_se"]) if (d, p, e) in key else "—" for e in enc) + " |")
        means = []
        for e in enc:
            vals = [key[(d, p, e)]["hit@5"] for d in domains if (d, p, e) in key]
            mu, se, n = mean_se(vals)
            means.append(f"{pm(mu, se)}" + (f" ({n} dom.)" if n < len(domains) else ""))
        P("| **mean ± SE over domains** | | " + " | ".join(means) + " |")
    P("")
    P(f"Wall time of this invocation {cfg['wall_seconds']} s.")
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(L) + "\n")
    print("\n".join(L))
    print("wrote", os.path.join(out, "results.json"), os.path.join(out, "results.csv"), os.path.join(out, "results.md"))
    _paper_plot(os.path.join(out, "hit5.png"), summary, domains, protocols, encoders)
    return 0


def _paper_plot(path, summary, domains, protocols, encoders):
    """Hit@5 by protocol × encoder: mean over domains, error bar = SE across domains, chance dashed."""
    plt = _pyplot()
    if plt is None or not summary:
        return False
    fig, ax = plt.subplots(figsize=(8, 4.5))
    enc = [e for e in encoders if any(r["encoder"] == e for r in summary)]
    w = 0.8 / max(1, len(enc))
    for i, e in enumerate(enc):
        ys, es = [], []
        for p in protocols:
            mu, se, _ = mean_se([r["hit@5"] for r in summary if r["protocol"] == p and r["encoder"] == e])
            ys.append(100 * (mu or 0))
            es.append(100 * (se or 0))
        ax.bar([x + i * w for x in range(len(protocols))], ys, w, yerr=es, capsize=2, label=ENCODER_NAMES.get(e, e))
    ch = [mean_se([r["chance@5"] for r in summary if r["protocol"] == p])[0] for p in protocols]
    for x, c in enumerate(ch):
        if c is not None:
            ax.hlines(100 * c, x - w / 2, x + 0.8 - w / 2, colors="k", linestyles="--", lw=0.8,
                      label="chance@5" if x == 0 else None)
    ax.set_xticks([x + 0.4 - w / 2 for x in range(len(protocols))])
    ax.set_xticklabels(protocols)
    ax.set_ylabel("Hit@5 (%), mean over domains ± SE")
    ax.set_ylim(0, 105)
    ax.set_title(f"Hit@5 by protocol and encoder ({len(domains)} domains)")
    ax.legend(fontsize=7, ncol=3)
    return _save(fig, path)


def main(argv):
    cmds = {"runs": lambda a: runs_plot(a[0], a[1]), "curves": lambda a: curves_plot(a[0], a[1:]),
            "lengths": lambda a: lengths_plot(a[0], a[1]),
            "paper-tables": lambda a: paper_tables(a[0], a[1].split(), a[2].split(), a[3].split(), a[4].split(),
                                                   json.loads(a[5]))}
    if len(argv) < 3 or argv[0] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    cmds[argv[0]](argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
