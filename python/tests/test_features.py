"""WL and bag-of-literals features as NumPy arrays."""
import json

import numpy as np

import nextstate as ns


def test_bag_of_literals_matches_atoms(gripper):
    t = gripper
    states = t.plan_states(t.solve()["plan"])
    X = ns.bag_of_literals(t, states)
    assert X.shape == (len(states), t.natoms) and X.dtype == np.uint8
    names = t.atom_names()
    for row, s in zip(X, states):
        assert sorted(names[i] for i in np.flatnonzero(row)) == sorted(t.atoms(s))


def test_wl_fit_transform_save_load(gripper, gen_problem, tmp_path):
    t = gripper
    states = t.plan_states(t.solve()["plan"])
    fg = ns.WLFeatureGenerator(iterations=2).fit([(t, states)])
    X = fg.transform(t, states)
    assert X.shape == (len(states), fg.n_features) and X.dtype == np.float64
    # every node gets one colour per layer (all seen: fitted on these states)
    nodes = X.sum(axis=1) / 3
    assert np.all(X >= 0) and np.all(X == np.round(X)) and np.all(nodes >= t.info()["nobjects"])
    # new states of a bigger problem: same dimension, unseen colours dropped
    big = ns.load(*gen_problem("gripper", 9, balls=8))
    Y = fg.transform(big, [big.initial_state()])
    assert Y.shape == (1, fg.n_features)
    p = tmp_path / "v.json"
    fg.save(p)
    assert json.load(open(p))["feature_name"] == "wl"
    fg2 = ns.WLFeatureGenerator.load(p)
    assert fg2.n_features == fg.n_features and np.array_equal(fg2.transform(t, states), X)
    fg.save(tmp_path / "flat.json", key_format="flat")
    assert np.array_equal(ns.WLFeatureGenerator.load(tmp_path / "flat.json").transform(t, states), X)
    assert np.array_equal(fg.embed([(t, states), (t, states[:2])]), np.vstack([X, X[:2]]))
    # fewer iterations select a prefix of the layers: never more nonzeros
    X1 = fg.transform(t, states, iterations=1)
    assert X1.shape == X.shape and np.count_nonzero(X1) <= np.count_nonzero(X)


def test_wl_distinguishes_states(gripper):
    t = gripper
    states = t.plan_states(t.solve()["plan"])
    X = ns.WLFeatureGenerator(2).fit_transform(t, states)
    assert len({r.tobytes() for r in X}) > len(states) // 2
