#!/usr/bin/env python3
"""WLPlan side of bench/wl.sh: WL features with the PyPI package `wlplan`
(2.1.0) on exactly the states nextstate encoded, side by side.

For one domain it reads the states that `nextstate encode --states-out`
exported (one JSON line per state: domain, problem, atoms), builds WLPlan
problems and states from them, loads the same vocabulary (written by
nextstate in WLPlan's key spelling, --key-format triples), times WLPlan's
embedding (per-state calls and one batch call over a DomainDataset; the
faster counts) and compares every feature with nextstate's .npy output.
With --fit-states it also lets WLPlan collect a vocabulary on the training
states (atoms in text order, as nextstate fits) and compares it key by key
with nextstate's fitted vocabulary.

Prints one JSON object (the shell script formats the table)."""
import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
from wlplan.data import DomainDataset, ProblemDataset
from wlplan.feature_generator import init_feature_generator, load_feature_generator
from wlplan.planning import Atom, State, parse_domain, parse_problem


def read_states(paths):
    """[(problem path, [atom text, ...]), ...] in file order."""
    rows = []
    for p in paths:
        with open(p) as f:
            for line in f:
                j = json.loads(line)
                rows.append((j["domain"], j["problem"], j["atoms"]))
    return rows


def to_atom(text, preds):
    toks = text.strip("()").split()
    return Atom(preds[toks[0]], toks[1:])


def build(rows, sort_atoms=False):
    """Groups rows by problem (keeping order): (domain, [(problem, [State])])."""
    domain_path = rows[0][0]
    domain = parse_domain(domain_path)
    preds = {p.name: p for p in domain.predicates}
    groups, index = [], {}
    for _, prob, atoms in rows:
        if prob not in index:
            index[prob] = len(groups)
            groups.append((prob, parse_problem(domain_path, prob), []))
        if sort_atoms:
            atoms = sorted(atoms)
        groups[index[prob]][2].append(State([to_atom(a, preds) for a in atoms]))
    return domain, groups


def embed_per_state(fg, groups):
    out = []
    for _, problem, states in groups:
        fg.set_problem(problem)
        for s in states:
            out.append(fg.embed(s))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", required=True, help="vocabulary JSON in WLPlan's key spelling")
    ap.add_argument("--states", nargs="+", required=True, help="states .jsonl files (from nextstate)")
    ap.add_argument("--ours", nargs="+", required=True, help="nextstate output dir per states file")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--budget", type=float, default=20.0, help="no further passes after this many seconds")
    ap.add_argument("--fit-states", help="training states .jsonl: compare WLPlan's fit with --fit-vocab")
    ap.add_argument("--fit-vocab", help="nextstate's fitted vocabulary (triples spelling)")
    a = ap.parse_args()

    rows = read_states(a.states)
    domain, groups = build(rows)
    fg = load_feature_generator(a.vocab, quiet=True)
    nstates = sum(len(g[2]) for g in groups)
    dataset = DomainDataset(domain=domain, data=[ProblemDataset(problem=p, states=s) for _, p, s in groups])

    best_single = best_batch = float("inf")
    X = None
    start = time.perf_counter()
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        X1 = embed_per_state(fg, groups)
        best_single = min(best_single, time.perf_counter() - t0)
        t0 = time.perf_counter()
        X2 = fg.embed(dataset)
        best_batch = min(best_batch, time.perf_counter() - t0)
        X = X1
        if time.perf_counter() - start > a.budget:  # slow passes: one is enough
            break
    X = np.asarray(X, dtype=np.float64)
    if not np.array_equal(X, np.asarray(X2, dtype=np.float64)):
        print("wl_ref: WLPlan's per-state and batch embeddings differ", file=sys.stderr)

    # nextstate's rows, in the same order (per states file: problems in order, rows s_0..s_T)
    ours = []
    for states_file, odir in zip(a.states, a.ours):
        seen = []
        with open(states_file) as f:
            for line in f:
                prob = json.loads(line)["problem"]
                if not seen or seen[-1] != prob:
                    seen.append(prob)
        for prob in seen:
            stem = os.path.basename(prob)[: -len(".pddl")]
            ours.append(np.load(os.path.join(odir, stem + ".npy")))
    Y = np.concatenate(ours, axis=0).astype(np.float64)
    equal = X.shape == Y.shape and bool(np.array_equal(X, Y))
    mismatch = int((X != Y).any(axis=1).sum()) if X.shape == Y.shape else -1

    res = {
        "states": nstates,
        "features": int(X.shape[1]),
        "wlplan_per_state_s": best_single,
        "wlplan_batch_s": best_batch,
        "wlplan_states_per_s": nstates / min(best_single, best_batch),
        "equal": equal,
        "mismatching_rows": mismatch,
        "nonzero_fraction": float((X != 0).mean()),
    }

    if a.fit_states and a.fit_vocab:
        frows = read_states([a.fit_states])
        fdomain, fgroups = build(frows, sort_atoms=True)
        with open(a.fit_vocab) as f:
            ours_v = json.load(f)
        gen = init_feature_generator(
            "wl", fdomain, "ilg", ours_v["iterations"], "none", ours_v["multiset_hash"]
        )
        fds = DomainDataset(domain=fdomain, data=[ProblemDataset(problem=p, states=s) for _, p, s in fgroups])
        devnull = os.open(os.devnull, os.O_WRONLY)
        saved = os.dup(1)
        os.dup2(devnull, 1)  # WLPlan logs its collection on stdout
        try:
            t0 = time.perf_counter()
            gen.collect(fds)
            res["wlplan_fit_s"] = time.perf_counter() - t0
            with tempfile.TemporaryDirectory() as td:
                p = os.path.join(td, "v.json")
                gen.save(p)
                with open(p) as f:
                    theirs = json.load(f)
        finally:
            os.dup2(saved, 1)
            os.close(devnull)
        res["fit_states"] = sum(len(g[2]) for g in fgroups)
        res["fit_colours_wlplan"] = sum(len(L) for L in theirs["colour_hash"])
        res["fit_colours_ours"] = sum(len(L) for L in ours_v["colour_hash"])
        res["fit_identical"] = theirs["colour_hash"] == ours_v["colour_hash"]
    print(json.dumps(res))


if __name__ == "__main__":
    main()
