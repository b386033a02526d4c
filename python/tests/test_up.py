"""The Unified Planning engine "nextstate" on the shipped domains' generated
problems; plans checked by UP's validator and `nextstate validate`, and side
by side with up-fast-downward's optimal planner when it is installed."""
import os

import pytest

import nextstate as ns
from conftest import domain_file, have, run

up = pytest.importorskip("unified_planning")
from unified_planning.engines import PlanGenerationResultStatus as S  # noqa: E402
from unified_planning.io import PDDLReader  # noqa: E402
from unified_planning.shortcuts import OneshotPlanner, PlanValidator, get_environment  # noqa: E402

import up_nextstate  # noqa: E402,F401  (registers the engine)

env = get_environment()
env.credits_stream = None
env.error_used_name = False  # floortile's actions up/down share names with its objects' roles


def read(dom, seed, tmp_path):
    p = tmp_path / f"{dom}.pddl"
    p.write_text(ns.generate(dom, None, seed=seed, name=f"{dom}-{seed}"))
    return PDDLReader().parse_problem(domain_file(dom), str(p)), str(p)


# make test: four domains (NS_PY_FULL=1: every generator domain)
DOMS = ns.gen_domains() if os.environ.get("NS_PY_FULL") else ["blocksworld", "gripper", "ferry", "satellite"]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("dom", DOMS)
def test_engine_solves_and_plans_validate(dom, tmp_path, nsbin):
    problem, ppath = read(dom, 2, tmp_path)
    with OneshotPlanner(name="nextstate") as planner:
        assert planner.name == "nextstate"
        r = planner.solve(problem, timeout=60)
    assert r.status == S.SOLVED_OPTIMALLY and r.plan is not None
    with PlanValidator(problem_kind=problem.kind) as v:
        assert v.validate(problem, r.plan).status.name == "VALID"
    plan = tmp_path / "plan"
    plan.write_text("".join(f"({a.action.name} {' '.join(str(p) for p in a.actual_parameters)})\n"
                            for a in r.plan.actions))
    c = run([nsbin, "validate", domain_file(dom), ppath, str(plan)])
    assert c.returncode == 0, c.stdout + c.stderr
    if have("up_fast_downward") and dom == "gripper":
        with OneshotPlanner(name="fast-downward-opt") as fd:  # A* with LM-cut too: the same length
            f = fd.solve(problem, timeout=60)
        assert f.status in (S.SOLVED_OPTIMALLY, S.SOLVED_SATISFICING) and len(f.plan.actions) == len(r.plan.actions)


def test_engine_gbfs_and_unsupported(tmp_path):
    problem, _ = read("logistics", 3, tmp_path)
    with OneshotPlanner(name="nextstate", params={"search": "gbfs", "heuristic": "ff"}) as planner:
        r = planner.solve(problem)
    assert r.status == S.SOLVED_SATISFICING
    with pytest.raises(up.exceptions.UPUsageError):
        OneshotPlanner(name="nextstate", params={"search": "dfs"})
    assert os.path.exists(domain_file("logistics"))
