#!/usr/bin/env python3
"""Writes tests/fixtures/featurize/*.json with scikit-learn's TfidfVectorizer,
CountVectorizer and TruncatedSVD, for tests/unit/test_featurize.c.

The settings are the EmbedPlan reference methods (see featurize.h):
  tfidf: TfidfVectorizer(token_pattern=r"[a-z0-9_-]+", ngram_range=(1, 2),
         min_df=2 or 1, sublinear_tf=True)      (lowercase, smooth idf, L2: defaults)
  char:  TfidfVectorizer(analyzer="char", ngram_range=(3, 5), min_df=2 or 1,
         sublinear_tf=True)
  bow:   CountVectorizer(token_pattern=r"[a-z0-9_-]+")
  svd:   TruncatedSVD on the tfidf rows of a small ferry-like corpus, with the
         exact singular values (numpy.linalg.svd) for reference.

Each fixture: {"train": [texts], "test": [texts], "configs": {name: {"terms":
[...column order...], "idf": [...] or null, "train": rows, "test": rows}}}
where a row is [[column, value], ...] (non-zeros, ascending columns; ferry.json keeps no
training rows, to stay small).  The C
test fits on "train" and compares both transforms to 1e-6.

Run from the repository root:  python3 dev/featurize_reference.py
(needs numpy and scikit-learn: pip install scikit-learn; the tests do not).

Cross-check of the command-line tool on a real dataset:
  python3 dev/featurize_reference.py check DATASET_DIR SPLIT_DIR OUTDIR [tfidf|char|bow|context]
fits scikit-learn on the prompts of the split's training states (texts from
`nextstate data export --text`, so it needs build/nextstate) and compares
every row of OUTDIR (made by `nextstate featurize DATASET_DIR --kind K
--fit-on SPLIT_DIR --svd-dim 0 -o OUTDIR`) with its transform.
"""
import json
import os
import random
import subprocess
import sys

import numpy as np
import sklearn
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "featurize")
PATTERN = r"[a-z0-9_-]+"


def round9(v):
    """Nine significant digits: far below the 1e-6 tolerance, and compact."""
    return float("%.9g" % v)


def rows(X):
    X = X.tocsr()
    X.sort_indices()
    out = []
    for i in range(X.shape[0]):
        a, b = X.indptr[i], X.indptr[i + 1]
        out.append([[int(j), round9(v)] for j, v in zip(X.indices[a:b], X.data[a:b])])
    return out


def config(vec, train, test, keep_train=True):
    Xtr = vec.fit_transform(train)
    Xte = vec.transform(test)
    idf = getattr(vec, "idf_", None)
    return {
        "params": {k: (list(v) if isinstance(v, tuple) else v) for k, v in vec.get_params().items()
                   if k in ("analyzer", "ngram_range", "min_df", "sublinear_tf", "token_pattern")},
        "terms": [str(t) for t in vec.get_feature_names_out()],
        "idf": None if idf is None else [round9(x) for x in idf],
        "train": rows(Xtr) if keep_train else None,
        "test": rows(Xte),
    }


# Edge cases: case, punctuation, '-' and '_' inside tokens, repeated tokens
# (sublinear tf), whitespace runs (the char analyzer turns runs of 2+
# whitespace characters into one space, keeps a single one), tabs, U+00A0,
# non-ASCII lowercase letters, an empty text, one-letter tokens.
BASIC_TRAIN = [
    "Car c0 is at location l0, Car c1 is at location l1, and The ferry is empty",
    "car C0 is ON the ferry; the ferry is at l1.\n\nGoal: car c0 at l0",
    "The ferry is at l0, and Car c1 is at location l0 -- at-ferry l0 (empty-ferry)",
    "a b a b a b c  c\tc\n\nd_e d-e d_e x",
    "caf\u00e9 na\u00efve caf\u00e9\u00a0\u00a0au lait  \u2003 end",
    "",
    "### PROBLEM ###\nThere are 2 cars and 2 locations.\n\n### CURRENT STATE ###\nCar c0 is at location l0",
    "Robot r1 is in room-a; ball_2 is in room-a; ROBOT r1 carries ball_1 with its left gripper",
]
BASIC_TEST = [
    "Car c9 is at location l7, and The ferry is at l0 -- unseen zebra tokens",
    "car c0 is on the ferry",
    "",
    "caf\u00e9  au   lait",
]


def ferry_corpus(n, seed):
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        ncars, nlocs = rnd.randint(2, 4), rnd.randint(2, 3)
        clauses = []
        on = rnd.randrange(-1, ncars)
        for c in range(ncars):
            if c == on:
                clauses.append(f"Car c{c} is on the ferry")
            else:
                clauses.append(f"Car c{c} is at location l{rnd.randrange(nlocs)}")
        clauses.append(f"The ferry is at l{rnd.randrange(nlocs)}")
        if on < 0:
            clauses.append("The ferry is empty")
        state = ", ".join(clauses[:-1]) + ", and " + clauses[-1]
        goal = ", and ".join(f"Car c{c} is at location l{rnd.randrange(nlocs)}" for c in range(ncars))
        out.append(
            "### PROBLEM DESCRIPTION ###\nThis is a ferry domain. There are %d cars and %d locations.\n\n"
            "### CURRENT STATE ###\n%s\n\n### GOAL DESCRIPTION ###\n%s" % (ncars, nlocs, state, goal)
        )
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    basic = {"sklearn": sklearn.__version__, "train": BASIC_TRAIN, "test": BASIC_TEST, "configs": {}}
    for df in (1, 2):
        basic["configs"][f"tfidf_df{df}"] = config(
            TfidfVectorizer(token_pattern=PATTERN, ngram_range=(1, 2), min_df=df, sublinear_tf=True), BASIC_TRAIN,
            BASIC_TEST)
        basic["configs"][f"char_df{df}"] = config(
            TfidfVectorizer(analyzer="char", ngram_range=(3, 5), min_df=df, sublinear_tf=True), BASIC_TRAIN, BASIC_TEST)
    bow = config(CountVectorizer(token_pattern=PATTERN), BASIC_TRAIN, BASIC_TEST)
    basic["configs"]["bow"] = bow
    with open(os.path.join(OUT, "basic.json"), "w") as f:
        json.dump(basic, f, separators=(",", ":"), ensure_ascii=True)
        f.write("\n")

    train, test = ferry_corpus(40, 1), ferry_corpus(5, 2)
    vec = TfidfVectorizer(token_pattern=PATTERN, ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    ferry = {"sklearn": sklearn.__version__, "train": train, "test": test,
             "configs": {"tfidf_df2": config(vec, train, test, keep_train=False)}}
    X = vec.transform(train).toarray()
    k = 8
    s = np.linalg.svd(X, compute_uv=False)
    svd = TruncatedSVD(n_components=k, n_iter=5, random_state=0).fit(vec.transform(train))
    total_var = X.var(axis=0).sum()
    ferry["svd"] = {
        "k": k,
        "exact_singular_values": [float(x) for x in s],
        "sklearn_singular_values": [float(x) for x in svd.singular_values_],
        "sklearn_explained_variance_ratio": [float(x) for x in svd.explained_variance_ratio_],
        "optimal_residual": float(np.sum(s[k:] ** 2)),
        "total_variance": float(total_var),
    }
    with open(os.path.join(OUT, "ferry.json"), "w") as f:
        json.dump(ferry, f, separators=(",", ":"), ensure_ascii=True)
        f.write("\n")
    for name in ("basic.json", "ferry.json"):
        print(name, os.path.getsize(os.path.join(OUT, name)), "bytes")


def check(dataset, split, outdir, kind="tfidf"):
    """Compares a `nextstate featurize` CSR output with scikit-learn."""
    import scipy.sparse as sp
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "nextstate")
    lines = subprocess.run([exe, "data", "export", dataset, "--text"], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    text = {}
    for line in lines:
        r = json.loads(line)
        text[r["state"]] = r["state_text"]
        text[r["next_state"]] = r["next_state_text"]
    n = max(text) + 1
    if kind == "context":  # the CURRENT STATE block emptied
        for s_, t in text.items():
            a = t.index("### CURRENT STATE ###\n") + len("### CURRENT STATE ###\n")
            b = t.index("\n\n### GOAL DESCRIPTION ###")
            text[s_] = t[:a] + t[b:]
    tr = np.load(os.path.join(dataset, "transitions.npy"))
    train = np.load(os.path.join(split, "train.npy"))
    ids = sorted(set(int(tr[t, 1]) for d, t in train if d == 0) | set(int(tr[t, 3]) for d, t in train if d == 0))
    if kind in ("tfidf", "context"):
        vec = TfidfVectorizer(token_pattern=PATTERN, ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    elif kind == "char":
        vec = TfidfVectorizer(analyzer="char", ngram_range=(3, 5), min_df=2, sublinear_tf=True)
    else:
        vec = CountVectorizer(token_pattern=PATTERN)
    vec.fit([text[i] for i in ids])
    ref = vec.transform([text[i] for i in range(n)]).tocsr()
    shape = np.load(os.path.join(outdir, "states_shape.npy"))
    ours = sp.csr_array((np.load(os.path.join(outdir, "states_values.npy")),
                         np.load(os.path.join(outdir, "states_indices.npy")),
                         np.load(os.path.join(outdir, "states_indptr.npy"))), shape=tuple(shape))
    terms = json.load(open(os.path.join(outdir, "featurizer.json")))["terms"]
    same_terms = list(vec.get_feature_names_out()) == terms
    diff = abs(ours - ref).max() if ours.shape == ref.shape else float("inf")
    print(f"{outdir}: {n} states, {len(terms)} terms (same order as scikit-learn: {same_terms}), "
          f"{len(ids)} training states; max |difference| {diff:.3g}")
    return 0 if same_terms and diff <= 1e-6 else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "check":
        sys.exit(check(*sys.argv[2:]))
    main()
