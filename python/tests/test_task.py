"""Tasks: grounding, γ, goal test, searches, plan validation."""
import os

import numpy as np
import pytest

import nextstate as ns
from conftest import run


def test_generate_is_deterministic():
    assert ns.generate("blocksworld", {"blocks": 4}, seed=7) == ns.generate("blocksworld", {"blocks": 4}, seed=7)
    assert ns.generate("blocksworld", {"blocks": 4}, seed=7) != ns.generate("blocksworld", {"blocks": 4}, seed=8)
    assert "blocksworld" in ns.gen_domains()
    assert any(o["name"] == "blocks" for o in ns.gen_options("blocksworld"))


def test_task_sizes_and_names(gripper):
    t = gripper
    assert t.domain_name == "gripper-strips"
    assert len(t.atom_names()) == t.natoms and len(t.op_names()) == t.nops
    s = t.initial_state()
    assert isinstance(s, bytes) and len(s) == 8 * t.nwords
    assert t.state_from_atoms(t.atoms(s)) == s
    assert t.op_id(t.op_name(5)) == 5


def test_successors_are_gamma(gripper):
    t = gripper
    s = t.initial_state()
    seen = {s}
    frontier = [s]
    while frontier:  # the whole reachable space of this small task
        u = frontier.pop()
        app = t.applicable(u)
        assert app == sorted(app)
        succ = t.successors(u)
        assert [op for op, _ in succ] == app
        for op, v in succ:
            assert t.is_applicable(u, op) and t.apply(u, op) == v
            if v not in seen:
                seen.add(v)
                frontier.append(v)
        for op in set(range(t.nops)) - set(app):
            assert not t.is_applicable(u, op)
    assert len(seen) > 50
    assert any(t.is_goal(u) for u in seen) and not t.is_goal(s)
    # numpy words are accepted as states too
    assert t.applicable(np.frombuffer(s, np.uint64)) == t.applicable(s)


@pytest.mark.parametrize("search,heuristic", [("bfs", None)] + [("astar", h) for h in ns.HEURISTICS]
                         + [("gbfs", h) for h in ns.HEURISTICS])
def test_every_search_solves_and_validates(gen_problem, search, heuristic):
    t = ns.load(*gen_problem("logistics", 2))
    r = t.solve(search, heuristic)
    assert r["solved"] and r["status"] == "solved"
    v = t.validate(r["plan"])
    assert v["valid"] and v["length"] == len(r["plan"]) and v["cost"] == r["cost"]
    states = t.plan_states(r["plan"])
    assert t.is_goal(states[-1])
    if search == "bfs" or heuristic in ("blind", "hmax", "lmcut") and search == "astar":
        assert r["cost"] == t.solve("astar", "lmcut")["cost"]  # all optimal


def test_validate_text_file_and_invalid(gripper, tmp_path, nsbin):
    t = gripper
    r = t.solve()
    text = t.plan_text(r["plan"])
    assert t.parse_plan(text) == r["plan"]
    f = tmp_path / "p.plan"
    f.write_text(text)
    assert t.validate(str(f))["valid"] and t.validate(text)["valid"]
    c = run([nsbin, "validate", t.domain_path, t.problem_path, str(f)])
    assert c.returncode == 0, c.stderr
    bad = t.validate(r["plan"][1:])  # skipping the first step breaks the plan
    assert not bad["valid"] and bad["reason"]
    short = t.validate(r["plan"][:-1])
    assert not short["valid"] and short["failed_step"] == -1


def test_heuristics_on_initial_state(gen_problem):
    t = ns.load(*gen_problem("blocksworld", 1, blocks=5))
    s = t.initial_state()
    hs = {h: t.heuristic(s, h) for h in ns.HEURISTICS}
    opt = t.solve("astar", "lmcut")["cost"]
    assert hs["blind"] in (0, 1) and hs["hmax"] <= hs["lmcut"] <= opt
    assert hs["hadd"] >= hs["hmax"]


def test_from_text_and_time_limit(gen_problem):
    d, p = gen_problem("visitall", 1)
    t = ns.Task.from_text(open(d).read(), open(p).read())
    assert t.nops > 0 and t.solve("gbfs")["solved"]
    assert os.path.exists(d)


@pytest.mark.parametrize("search,heuristic", [("lazy", None), ("lazy", "hadd"), ("lama", None)])
@pytest.mark.parametrize("dom", ["logistics", "depot", "satellite"])
def test_lazy_and_lama_as_the_cli(gen_problem, dom, search, heuristic, nsbin, tmp_path):
    """solve("lazy") / solve("lama") are `nextstate solve --search lazy|lama`: the
    same search (deterministic), so the same plan and the same counts."""
    d, p = gen_problem(dom, 2)
    t = ns.load(d, p)
    r = t.solve(search, heuristic)
    assert r["solved"] and r["search"] == search
    assert r["heuristic"] == ("ff+lmcount" if search == "lama" else heuristic or "ff")
    v = t.validate(r["plan"])
    assert v["valid"] and v["cost"] == r["cost"]
    plan = tmp_path / "cli.plan"
    cmd = [nsbin, "solve", d, p, "--search", search, "--json", "--plan-file", str(plan)]
    c = run(cmd + (["--heuristic", heuristic] if heuristic else []))
    assert c.returncode == 0, c.stderr
    import json
    j = json.loads(c.stdout)
    assert (j["expanded"], j["plan_cost"], j["heuristic"]) == (r["expanded"], r["cost"], r["heuristic"])
    assert t.parse_plan(plan.read_text()) == r["plan"]
