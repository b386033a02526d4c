"""The Unified Planning engine "nextstate" with a learned model
(``params={"model": path}``) and with the lazy and LAMA-first searches: a WL
heuristic learned (ns.learn) on five small generated problems of a domain
plans larger ones given as UP problems; every plan is checked by UP's
validator and by `nextstate validate`, and side by side with up-fast-downward
(lama-first) on the same problems when it is installed."""
import os

import pytest

import nextstate as ns
from conftest import LEARN_SIZES, domain_file, have, run

up = pytest.importorskip("unified_planning")
from unified_planning.engines import PlanGenerationResultStatus as S  # noqa: E402
from unified_planning.exceptions import UPUsageError  # noqa: E402
from unified_planning.io import PDDLReader, PDDLWriter  # noqa: E402
from unified_planning.shortcuts import OneshotPlanner, PlanValidator, get_environment  # noqa: E402

import up_nextstate  # noqa: E402,F401  (registers the engine)
from up_nextstate.engine import _write_pddl  # noqa: E402

env = get_environment()
env.credits_stream = None
env.error_used_name = False  # floortile's actions up/down share names with its predicates

# make test: four domains (NS_PY_FULL=1: every domain of LEARN_SIZES)
MODEL_DOMS = list(LEARN_SIZES) if os.environ.get("NS_PY_FULL") else ["blocksworld", "gripper", "ferry", "logistics"]
HAVE_FD = have("up_fast_downward")


def big_problem(dom, seed, tmp_path, opts=None):
    """A generated problem of dom (by default of LEARN_SIZES' larger size) as
    a UP problem, and its PDDL file."""
    p = tmp_path / f"{dom}-big-{seed}.pddl"
    p.write_text(ns.generate(dom, opts or LEARN_SIZES[dom][1], seed=seed, name=f"{dom}-big-{seed}"))
    return PDDLReader().parse_problem(domain_file(dom), str(p)), str(p)


def check_plan(problem, plan, dom, ppath, nsbin, tmp_path):
    """The plan is valid for UP's validator and for `nextstate validate`."""
    with PlanValidator(problem_kind=problem.kind) as v:
        assert v.validate(problem, plan).status.name == "VALID"
    f = tmp_path / "up.plan"
    f.write_text("".join(f"({a.action.name} {' '.join(str(p) for p in a.actual_parameters)})\n"
                         for a in plan.actions))
    c = run([nsbin, "validate", domain_file(dom), ppath, str(f)])
    assert c.returncode == 0, c.stdout + c.stderr


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("dom", MODEL_DOMS)
def test_engine_plans_with_a_learned_model(dom, learned, train_problems, tmp_path, nsbin):
    model, path = learned(dom)
    assert model.train_info["train_problems"] == 5 and model.train_info["unsolved"] == 0
    small = max(ns.load(domain_file(dom), p).info()["nobjects"] for p in train_problems(dom).glob("*.pddl"))
    for seed in (1, 2):
        problem, ppath = big_problem(dom, seed, tmp_path)
        task = ns.load(domain_file(dom), ppath)
        assert task.info()["nobjects"] >= 2 * small  # twice the objects of the largest training problem
        # eager GBFS on h: the default lazy LAMA search does not solve blocksworld's 30 blocks from 2-6 in 60 s
        with OneshotPlanner(name="nextstate", params={"model": path, "algo": "guided"}) as planner:
            r = planner.solve(problem, timeout=60)
        assert r.status == S.SOLVED_SATISFICING and r.plan is not None, r
        # the model planned (not a classical search): its GBFS on h, h evaluated
        assert r.metrics["model"] == "hwl" and r.metrics["algo"] == "hwl+ff-preferred"
        assert int(r.metrics["predictions"]) > 0
        check_plan(problem, r.plan, dom, ppath, nsbin, tmp_path)
        if HAVE_FD:  # side by side: lama-first solves the same problem
            with OneshotPlanner(name="fast-downward") as fd:
                f = fd.solve(problem, timeout=60)
            assert f.status in (S.SOLVED_SATISFICING, S.SOLVED_OPTIMALLY), f
            check_plan(problem, f.plan, dom, ppath, nsbin, tmp_path)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("search", ["lazy", "lama"])
@pytest.mark.parametrize("dom,opts", [("logistics", {"packages": 15, "cities": 4}), ("depot", {"crates": 10}),
                                      ("satellite", {"targets": 15, "observations": 15, "satellites": 4})])
def test_engine_lazy_and_lama(dom, opts, search, tmp_path, nsbin):
    problem, ppath = big_problem(dom, 3, tmp_path, opts)
    with OneshotPlanner(name="nextstate", params={"search": search}) as planner:
        r = planner.solve(problem, timeout=60)
    assert r.status == S.SOLVED_SATISFICING and r.metrics["search"] == search
    assert r.metrics["heuristic"] == ("ff+lmcount" if search == "lama" else "ff")
    check_plan(problem, r.plan, dom, ppath, nsbin, tmp_path)
    if HAVE_FD and search == "lama":
        with OneshotPlanner(name="fast-downward") as fd:  # lama-first
            f = fd.solve(problem, timeout=60)
        assert f.status in (S.SOLVED_SATISFICING, S.SOLVED_OPTIMALLY), f
        check_plan(problem, f.plan, dom, ppath, nsbin, tmp_path)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_model_of_another_domain_and_bad_parameters(learned, tmp_path):
    _, bw = learned("blocksworld")
    problem, _ = big_problem("gripper", 1, tmp_path)
    with OneshotPlanner(name="nextstate", params={"model": bw}) as planner:
        with pytest.raises(UPUsageError) as e:
            planner.solve(problem)
    msg = str(e.value)
    assert bw in msg and "blocksworld" in msg and "gripper-big-1" in msg and "learned on domain" in msg
    with pytest.raises(UPUsageError) as e:  # a missing model file
        OneshotPlanner(name="nextstate", params={"model": str(tmp_path / "none.hwl")})
    assert "none.hwl" in str(e.value)
    bad = tmp_path / "bad.hwl"
    bad.write_bytes(open(bw, "rb").read()[:100])
    with pytest.raises(UPUsageError):  # truncated
        OneshotPlanner(name="nextstate", params={"model": str(bad)})
    for params in ({"model": bw, "search": "gbfs"}, {"model": bw, "algo": "beam"}, {"algo": "guided"},
                   {"search": "lama", "heuristic": "ff"}, {"search": "bfs", "heuristic": "ff"},
                   {"search": "eager"}):
        with pytest.raises(UPUsageError):
            OneshotPlanner(name="nextstate", params=params)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_engine_takes_a_model_object_and_algo(learned, train_problems, tmp_path, nsbin):
    """A loaded Model (not a path), the learned heuristic's plain GBFS
    ("search"), and a next-state predictor (xgb) through the engine."""
    hwl, _ = learned("blocksworld")
    problem, ppath = big_problem("blocksworld", 4, tmp_path)
    with OneshotPlanner(name="nextstate", params={"model": hwl, "algo": "search"}) as planner:
        r = planner.solve(problem, timeout=60)
    assert r.status == S.SOLVED_SATISFICING and r.metrics["algo"] == "hwl"
    check_plan(problem, r.plan, "blocksworld", ppath, nsbin, tmp_path)
    xgb = ns.learn(domain_file("blocksworld"), train_problems("blocksworld"), model="xgb", rounds=20)
    p = tmp_path / "bw6.pddl"
    p.write_text(ns.generate("blocksworld", {"blocks": 6}, seed=9, name="bw6"))
    small = PDDLReader().parse_problem(domain_file("blocksworld"), str(p))
    with OneshotPlanner(name="nextstate", params={"model": xgb, "algo": "search"}) as planner:
        r = planner.solve(small, timeout=60)
    assert r.status == S.SOLVED_SATISFICING and r.metrics["model"] == "xgb"
    check_plan(small, r.plan, "blocksworld", str(p), nsbin, tmp_path)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("dom", ns.gen_domains())
def test_written_pddl_keeps_the_domains_names(dom, tmp_path):
    """What the engine hands the library for a shipped domain's problem is
    the original task: the same atoms, static atoms and operators by name
    (a WL model knows predicates by name, a next-state model schemata), also
    for floortile, whose actions UP's writer renames (up_0, …)."""
    p = tmp_path / "p.pddl"
    p.write_text(ns.generate(dom, None, seed=2, name=f"{dom}-2"))
    problem = PDDLReader().parse_problem(domain_file(dom), str(p))
    d, q, actions = _write_pddl(PDDLWriter(problem), problem)
    t, orig = ns.Task.from_text(d, q), ns.load(domain_file(dom), p)
    assert sorted(t.atom_names()) == sorted(orig.atom_names())
    assert sorted(t.static_names()) == sorted(orig.static_names())
    assert sorted(t.op_names()) == sorted(orig.op_names())
    assert sorted(actions) == sorted(a.name for a in problem.actions)
