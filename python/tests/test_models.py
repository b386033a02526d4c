"""Learned models from Python: the learned WL heuristic (learn, plan, h),
the next-state predictors, the world model (train / evaluate), their files,
and clear errors on bad input."""
import os

import numpy as np
import pytest

import nextstate as ns
from conftest import domain_file, run

BW = domain_file("blocksworld")


@pytest.fixture(scope="module")
def train_dir(train_problems):
    """Five blocksworld problems of 2–6 blocks (no plans: learn solves them)."""
    return train_problems("blocksworld")


@pytest.fixture(scope="module")
def hwl(learned):
    return learned("blocksworld")[0]


def bw_task(tmp_path, blocks, seed):
    p = tmp_path / f"bw{blocks}-{seed}.pddl"
    p.write_text(ns.generate("blocksworld", {"blocks": blocks}, seed=seed, name=f"bw{blocks}"))
    return ns.load(BW, p)


def test_learn_hwl_record(hwl):
    i = hwl.train_info
    assert i["model"] == "hwl" and i["train_problems"] == 5 and i["unsolved"] == 0
    assert i["time_capped"] == 0 and i["choice_time_capped"] == 0  # the budgets, not the clock, stopped the searches
    assert i["train_rows"] > 5 + 5  # the states along five plans
    assert i["dim"] == hwl.info()["dim"] > 0 and i["train_rmse"] < 1
    assert hwl.kind == "hwl" and hwl.info()["domain_name"].startswith("blocksworld")


def test_plan_larger_problem(hwl, tmp_path):
    t = bw_task(tmp_path, 40, 103)
    r = hwl.plan(t, algo="guided", time_limit=30)  # 40 blocks from 2-6: eager GBFS on h solves it, LAMA's lazy search not in 30 s
    assert r["status"] == "solved" and r["solved"] and r["algo"] == "hwl+ff-preferred"
    assert r["classical"] is False  # the learned search's plan, not the classical fallback's
    assert r["work"] > r["predictions"]  # counted: every evaluation costs steps
    assert r["plan_length"] == len(r["plan"]) > 40 and r["expanded"] > 0 and r["predictions"] > 0
    v = t.validate(r["plan"])
    assert v["valid"] and v["length"] == len(r["plan"])
    assert t.validate(t.plan_text(r["plan"]))["valid"]
    assert r["plan_names"][0] == t.op_name(r["plan"][0])
    # the search's own plan: the same search, its redundant steps kept (what the default dropped)
    raw = hwl.plan(t, algo="guided", time_limit=30, raw_plan=True)
    assert raw["eliminated"] == 0 and t.validate(raw["plan"])["valid"]
    assert raw["plan_length"] - r["plan_length"] == r["eliminated"] >= 0
    # GBFS on h alone (WL-GOOSE's search), the LAMA searches (h beside h^FF and h^LM, or in h^FF's place) and
    # the default (the model's own choice, made by learn) on a problem of the training size
    small = bw_task(tmp_path, 6, 9)
    names = {"search": "hwl", "guided": "hwl+ff-preferred", "lama": "hwl+lama", "lama-h": "hwl-in-lama"}
    assert hwl.info()["algo"] in names
    for algo, name in (("search", "hwl"), (None, names[hwl.info()["algo"]]), ("lama-h", "hwl-in-lama"),
                       ("lama", "hwl+lama")):
        r = hwl.plan(small, algo=algo, time_limit=30)
        assert r["solved"] and r["algo"] == name and small.validate(r["plan"])["valid"]
    with pytest.raises(ValueError):
        hwl.plan(small, algo="restart")
    with pytest.raises(ValueError):
        hwl.plan(small, fallback=1.0)  # a share of the time limit, below 1
    for limits in ({"solve_time_limit": 0}, {"solve_memory_limit": -1}, {"solve_work": -1}):
        with pytest.raises(ValueError):
            ns.learn(domain_file("blocksworld"), tmp_path, **limits)


def test_heuristic_values(hwl, tmp_path):
    t = bw_task(tmp_path, 6, 2)  # of the training size (not a training problem)
    plan = t.solve("astar", "lmcut")["plan"]
    states = t.plan_states(plan)
    h = hwl.h_batch(t, states)
    assert h.shape == (len(states),) and h.dtype == np.float64
    assert abs(h[-1]) < 1  # a goal state: h* = 0
    assert h[0] > h[-1] + 3  # the initial state is far from the goal
    assert np.corrcoef(h, np.arange(len(states))[::-1])[0, 1] > 0.8  # h follows h* along the plan
    assert hwl.heuristic(t, states[0]) == pytest.approx(h[0])
    assert hwl(t, states[-1]) == pytest.approx(h[-1])
    assert np.array_equal(hwl.h_batch(t, ns.states_array(t, states)), h)


def test_save_load_round_trip(hwl, tmp_path):
    path = tmp_path / "m.hwl"
    hwl.save(path)
    m = ns.load_model(path)
    assert isinstance(m, ns.Model) and m.kind == "hwl" and m.train_info is None
    a, b = hwl.info(), m.info()
    assert a == b
    t = bw_task(tmp_path, 30, 5)
    states = [t.initial_state()] + [s for _, s in t.successors(t.initial_state())]
    assert np.array_equal(hwl.h_batch(t, states), m.h_batch(t, states))
    # the search's plan (the shortening after it is timed: under load it stops elsewhere)
    assert hwl.plan(t, time_limit=30, raw_plan=True)["plan"] == m.plan(t, time_limit=30, raw_plan=True)["plan"]
    m.save(tmp_path / "m2.hwl")
    assert (tmp_path / "m2.hwl").read_bytes() == path.read_bytes()


def test_next_state_models(train_dir, tmp_path):
    t = bw_task(tmp_path, 6, 9)
    for kind, opts in (("xgb", {"rounds": 20}), ("lstm", {"epochs": 5, "hidden": 16, "layers": 1})):
        m = ns.learn(BW, train_dir, model=kind, **opts)
        assert m.kind == kind and m.train_info["model"] == kind and m.train_info["train_problems"] == 5
        r = m.plan(t, algo="search", time_limit=30)
        assert r["solved"] and t.validate(r["plan"])["valid"] and r["algo"] == "search"
        assert m.plan(t, time_limit=30)["status"] in ("solved", "incomplete")  # the paper's beam decoder
        m.save(tmp_path / f"{kind}.model")
        m2 = ns.load_model(tmp_path / f"{kind}.model")
        assert m2.kind == kind and m2.plan(t, algo="search", time_limit=30)["plan"] == r["plan"]
        with pytest.raises(TypeError):
            m.heuristic(t, t.initial_state())
        with pytest.raises(ValueError):
            m.plan(t, algo="dfs")


def test_bad_inputs(hwl, tmp_path, gen_problem):
    gripper = ns.load(*gen_problem("gripper", 1))
    with pytest.raises(ns.NextstateError) as e:  # a model of another domain
        hwl.plan(gripper)
    assert "blocksworld" in str(e.value) and "gripper" in str(e.value) and e.value.status
    with pytest.raises(ns.NextstateError):
        hwl.heuristic(gripper, gripper.initial_state())
    path = tmp_path / "m.hwl"
    hwl.save(path)
    data = path.read_bytes()
    for cut in (len(data) // 2, len(data) - 1, 10, 0):
        bad = tmp_path / f"cut{cut}.hwl"
        bad.write_bytes(data[:cut])
        with pytest.raises(ns.NextstateError) as e:  # truncated
            ns.load_model(bad)
        assert str(e.value).startswith(str(bad))
    flipped = bytearray(data)
    flipped[-3] ^= 0xFF
    (tmp_path / "flip.hwl").write_bytes(bytes(flipped))
    with pytest.raises(ns.NextstateError):  # checksum
        ns.load_model(tmp_path / "flip.hwl")
    with pytest.raises(ns.NextstateError) as e:  # missing
        ns.load_model(tmp_path / "missing.hwl")
    assert e.value.status == "I/O error"
    with pytest.raises(ns.NextstateError):  # not a model at all
        ns.load_model(BW)
    os.makedirs(tmp_path / "empty")
    with pytest.raises(ns.NextstateError):
        ns.learn(BW, tmp_path / "empty")
    with pytest.raises(ns.NextstateError):
        ns.learn(tmp_path / "nodomain.pddl", tmp_path / "empty")
    with pytest.raises(ValueError):
        ns.learn(BW, tmp_path / "empty", model="svm")
    with pytest.raises(ValueError):
        hwl.plan(bw_task(tmp_path, 3, 1), algo="beam")
    t = bw_task(tmp_path, 3, 1)
    with pytest.raises(ValueError):
        hwl.heuristic(t, b"\0")
    with pytest.raises(TypeError):
        hwl.heuristic(t, [t.initial_state()] * 2)  # several states: h_batch
    with pytest.raises(RuntimeError):
        ns._core.Model().info()  # an empty model


@pytest.fixture(scope="module")
def split_dir(tmp_path_factory, nsbin):
    """A small ferry interpolation split (nextstate gen / data build / split)."""
    d = tmp_path_factory.mktemp("world")
    (d / "fp").mkdir()
    for s in range(1, 5):
        (d / "fp" / f"p{s}.pddl").write_text(ns.generate("ferry", {"cars": 3}, seed=s, name=f"p{s}"))
    r = run([nsbin, "data", "build", domain_file("ferry"), str(d / "fp"), "-o", str(d / "ferry"), "--plans", "4",
             "--quiet"])
    assert r.returncode == 0, r.stderr
    r = run([nsbin, "split", "interpolation", str(d / "ferry"), "-o", str(d / "si"), "--pool-size", "32", "--seed",
             "1"])
    assert r.returncode == 0, r.stderr
    return d / "si"


def test_world_model(split_dir, tmp_path, nsbin):
    ck = tmp_path / "w.ckpt"
    r = ns.train_world(split_dir, ck, epochs=5, lr=2e-3, warmup=1, batch=32, hidden=64, seed=1)
    assert r["epochs_run"] == 5 and r["protocol"] == "interpolation" and r["params"]["total"] > 0
    assert ck.exists()
    e = ns.evaluate_world(ck, split_dir, pool_sweep=[8, 0])
    m = e["metrics"]
    assert e["protocol"] == "interpolation" and m["n"] > 0 and 0 <= m["hit@5"] <= 1 and len(e["pool_sweep"]) == 2
    # the same report as the CLI's `eval --json`
    import json
    cli = run([nsbin, "eval", str(split_dir), str(ck), "--json", "--latency", "0", "--pool-sweep", "8,full"])
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["metrics"]["hit@1"] == m["hit@1"]
    assert ns.evaluate_world(ck, split_dir, on="dev")["on"] == "dev"


def test_world_model_errors(split_dir, tmp_path):
    with pytest.raises(ns.NextstateError) as e:
        ns.evaluate_world(tmp_path / "none.ckpt", split_dir)
    assert str(tmp_path / "none.ckpt") in str(e.value)
    with pytest.raises(ns.NextstateError):
        ns.train_world(tmp_path / "nosplit", tmp_path / "x.ckpt")
    with pytest.raises(ns.NextstateError):
        ns.train_world(split_dir, tmp_path / "x.ckpt", standardize="bogus", epochs=1)
    with pytest.raises(ValueError):
        ns.train_world(split_dir, tmp_path / "x.ckpt", model="cnn")
    with pytest.raises(TypeError):
        ns.train_world(split_dir, tmp_path / "x.ckpt", no_such_option=1)
    with pytest.raises(ValueError):
        ns.evaluate_world(tmp_path / "x.ckpt", split_dir, pool_sweep=[1])
    (tmp_path / "half.ckpt").write_bytes(b"NSCK")
    with pytest.raises(ns.NextstateError):
        ns.evaluate_world(tmp_path / "half.ckpt", split_dir)
