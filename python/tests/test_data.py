"""Datasets and splits written by the C side, read as NumPy arrays."""
import numpy as np

import nextstate as ns
from conftest import run


def test_dataset_and_split(tmp_path, gen_problem, nsbin):
    probs = tmp_path / "problems"
    probs.mkdir()
    for seed in (1, 2, 3):
        (probs / f"p{seed}.pddl").write_text(ns.generate("ferry", {}, seed=seed, name=f"p{seed}"))
    d = tmp_path / "ds"
    c = run([nsbin, "data", "build", gen_problem("ferry", 1)[0], str(probs), "-o", str(d), "--quiet"])
    assert c.returncode == 0, c.stderr
    ds = ns.data.Dataset(d)
    assert ds.domain == "ferry" and len(ds.problems) == 3
    assert isinstance(ds.states, np.memmap) and ds.states.dtype == np.uint64 and ds.states.shape[1] == ds.words
    assert ds.transitions.shape[1] == 4 and ds.states.shape[0] == len(ds)
    # the stored states are the task's states: re-ground problem 0 and check γ on its transitions
    p0 = ds.problems[0]
    t = ns.load(ds.manifest["domain_file"], p0["file"])
    assert t.atom_names() == p0["atoms"] and t.op_names() == p0["operators"]
    S = ds.problem_states(0)
    assert S[0].tobytes() == t.initial_state()
    rows = ds.transitions[ds.transitions[:, 0] == 0]  # (problem, state, operator, next state)
    assert len(rows) > 0
    for _, src, op, dst in rows[:50]:
        assert t.apply(ds.states[src].tobytes(), int(op)) == ds.states[dst].tobytes()
    sp_dir = tmp_path / "split"
    c = run([nsbin, "split", "interpolation", str(d), "-o", str(sp_dir), "--pool-size", "8"])
    assert c.returncode == 0, c.stderr
    sp = ns.data.Split(sp_dir)
    n = sp.counts()
    assert sp.protocol == "interpolation" and n["train"] > 0 and n["test"] > 0
    assert sp.train.shape[1] == 2 and sp.pools.shape[0] == n["test"]
    # WL features of the dataset's states, straight from the memory map
    X = ns.WLFeatureGenerator(1).fit([(t, S)]).transform(t, S)
    assert X.shape[0] == S.shape[0]
