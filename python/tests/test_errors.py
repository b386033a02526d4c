"""Bad input through Python raises a clear exception; nothing crashes."""
import numpy as np
import pytest

import nextstate as ns
from conftest import domain_file


def test_missing_file():
    with pytest.raises(ns.NextstateError) as e:
        ns.load("/nonexistent/domain.pddl", "/nonexistent/p.pddl")
    assert "/nonexistent/domain.pddl" in str(e.value) and e.value.status == "I/O error"


def test_malformed_pddl_has_location(tmp_path, gen_problem):
    d = tmp_path / "d.pddl"
    d.write_text("(define (domain x)\n  (:predicates (p ?x))\n  (:action a :parameters (?x)\n    :precondition (q ?x)))\n")
    with pytest.raises(ns.NextstateError) as e:
        ns.load(str(d), gen_problem("gripper", 1)[1])
    err = e.value
    assert str(err).startswith(f"{d}:4:") and "q" in err.msg and err.line == 4 and err.col > 0
    with pytest.raises(ns.NextstateError):
        ns.Task.from_text("(define (domain", "(define)")
    with pytest.raises(ns.NextstateError):  # problem of another domain
        ns.load(domain_file("blocksworld"), gen_problem("gripper", 1)[1])


def test_bad_plans(gripper, tmp_path):
    with pytest.raises(ns.NextstateError) as e:
        gripper.validate("(pick robot1 nosuchball room1 left1)\n")
    assert str(e.value).startswith("<plan>:1:")
    with pytest.raises(ns.NextstateError):
        gripper.validate(str(tmp_path / "missing.plan"))
    with pytest.raises(IndexError):
        gripper.validate([gripper.nops])


def test_bad_states_and_ops(gripper):
    t = gripper
    s = t.initial_state()
    with pytest.raises(ValueError):
        t.applicable(b"\0" * (8 * t.nwords + 1))
    with pytest.raises(TypeError):
        t.applicable("not a state")
    with pytest.raises(IndexError):
        t.apply(s, -1)
    with pytest.raises(ValueError):
        t.apply(s, next(op for op in range(t.nops) if op not in t.applicable(s)))
    with pytest.raises(ValueError):
        t.solve("dfs")
    with pytest.raises(ValueError):
        t.solve("astar", "hgoal")
    with pytest.raises(ValueError):
        t.state_from_atoms(["(at ball1 nowhere)"])
    with pytest.raises(ns.NextstateError):
        ns.generate("nosuchdomain")
    with pytest.raises(ns.NextstateError):
        ns.generate("blocksworld", {"blocks": -3})


def test_bad_feature_input(gripper, gen_problem):
    t = gripper
    fg = ns.WLFeatureGenerator(1)
    with pytest.raises(RuntimeError):
        fg.transform(t, [t.initial_state()])  # not fitted
    fg.fit([(t, [t.initial_state()])])
    with pytest.raises(ValueError):
        fg.transform(t, np.zeros((2, t.nwords + 1), np.uint64))
    with pytest.raises(ValueError):
        fg.transform(t, np.zeros((2, t.nwords), np.float32))
    with pytest.raises(ValueError):
        ns.bag_of_literals(t, [b"\0\0"])
    with pytest.raises(ns.NextstateError):  # a task of another domain than the vocabulary
        fg.transform(ns.load(*gen_problem("blocksworld", 1)), [ns.load(*gen_problem("blocksworld", 1)).initial_state()])
    with pytest.raises(ValueError):
        fg.fit([(t, [t.initial_state()]), (ns.load(*gen_problem("ferry", 1)), [])])
    with pytest.raises(ns.NextstateError):
        ns.WLFeatureGenerator.load("/nonexistent.json")
    with pytest.raises(ns.NextstateError):
        ns.data.Dataset("/nonexistent")
