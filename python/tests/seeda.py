"""Shared by test_wlplan.py and bench/wlplan.py: the first paper's seed-A
problems (../shared/benchmarks/seedA, never copied into the repo) as
nextstate tasks and the states along their plans, and the same states as
WLPlan objects."""
import glob
import os

import nextstate as ns

DOMAINS = ("blocks", "gripper", "logistics", "visitall-from-everywhere")
SPLITS = ("train", "validation", "test-interpolation", "test-extrapolation")


def seed_dir():
    root = os.environ.get("NEXTSTATE_BENCHMARKS") or os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "shared", "benchmarks")
    d = os.path.join(root, "seedA")
    if not os.path.isdir(d):  # a worktree lives one level deeper than /work/main
        d = "/work/shared/benchmarks/seedA"
    return d if os.path.isdir(d) else None


def trajectories(seed, dom, split, stride=1):
    """[(task, states)] for every problem of a split, the states along its
    plan (every stride-th one, the last always kept)."""
    out = []
    dpath = os.path.join(seed, "pddl", dom, "domain.pddl")
    for prob in sorted(glob.glob(os.path.join(seed, "pddl", dom, split, "*.pddl"))):
        plan = os.path.join(seed, "plans", dom, split, os.path.basename(prob)[:-5] + ".plan")
        if not os.path.exists(plan):
            continue
        t = ns.load(dpath, prob)
        with open(plan) as f:
            ops = t.parse_plan(f.read(), plan)
        states = t.plan_states(ops)
        if stride > 1:
            states = states[::stride] + ([states[-1]] if (len(states) - 1) % stride else [])
        out.append((t, states))
    return out


def wlplan_groups(groups, sort_atoms=False):
    """The same states as WLPlan (domain, [(problem, [State])])."""
    from wlplan.planning import Atom, State, parse_domain, parse_problem
    dpath = groups[0][0].domain_path
    domain = parse_domain(dpath)
    preds = {p.name: p for p in domain.predicates}
    out = []
    for t, states in groups:
        problem = parse_problem(dpath, t.problem_path)
        ws = []
        for s in states:
            atoms = t.atoms(s, statics=True)
            if sort_atoms:
                atoms = sorted(atoms)
            ws.append(State([Atom(preds[a.strip("()").split()[0]], a.strip("()").split()[1:]) for a in atoms]))
        out.append((problem, ws))
    return domain, out
