"""Fixtures shared by the nextstate Python tests (run by `make test`)."""
import os
import shutil
import subprocess

import pytest

import nextstate as ns

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def domain_file(dom):
    return os.path.join(REPO, "domains", dom, "domain.pddl")


@pytest.fixture(scope="session")
def nsbin():
    """The CLI binary (NS_BIN, or build/nextstate); tests needing it skip without it."""
    b = os.environ.get("NS_BIN") or os.path.join(REPO, "build", "nextstate")
    if not (os.path.isfile(b) and os.access(b, os.X_OK)):
        pytest.skip("the nextstate binary is not built")
    return b


@pytest.fixture(scope="session")
def gen_problem(tmp_path_factory):
    """gen_problem(domain, seed, **options) -> (domain path, problem path)."""
    d = tmp_path_factory.mktemp("gen")

    def make(dom, seed=1, **opts):
        p = d / f"{dom}-{seed}-{'-'.join(f'{k}{v}' for k, v in sorted(opts.items()))}.pddl"
        if not p.exists():
            p.write_text(ns.generate(dom, opts, seed=seed, name=f"{dom}-{seed}"))
        return domain_file(dom), str(p)

    return make


@pytest.fixture
def gripper(gen_problem):
    return ns.load(*gen_problem("gripper", 3))


#: Learned models in the tests: the generator options of the five small
#: training problems (i = 0..4) and of the larger problems planned with them.
LEARN_SIZES = {
    "blocksworld": (lambda i: {"blocks": 2 + i}, {"blocks": 30}),
    "gripper": (lambda i: {"balls": 2 + i}, {"balls": 40}),
    "ferry": (lambda i: {"cars": 2 + i}, {"cars": 30, "locations": 10}),
    "logistics": (lambda i: {"packages": 1 + i}, {"packages": 20, "cities": 5}),
    "satellite": (lambda i: {"targets": 2 + i, "observations": 1 + i},
                  {"targets": 15, "observations": 15, "satellites": 4}),
    "goldminer": (lambda i: {"rows": 2 + i // 2, "cols": 3 + (i + 1) // 2}, {"rows": 8, "cols": 8}),
    "grid": (lambda i: {"x": 3 + i // 2, "y": 3 + (i + 1) // 2}, {"x": 8, "y": 8}),
}


@pytest.fixture(scope="session")
def train_problems(tmp_path_factory):
    """train_problems(domain) -> a folder of five small generated problems
    (LEARN_SIZES; no plans: learn solves them)."""
    made = {}

    def make(dom):
        if dom not in made:
            d = tmp_path_factory.mktemp(f"{dom}-train")
            small = LEARN_SIZES[dom][0]
            for i in range(5):
                (d / f"p{i}.pddl").write_text(ns.generate(dom, small(i), seed=i + 1, name=f"p{i}"))
            made[dom] = d
        return made[dom]

    return make


@pytest.fixture(scope="session")
def learned(train_problems, tmp_path_factory):
    """learned(domain) -> (the learned WL heuristic of train_problems(domain),
    the path of its saved model file); learned once per session."""
    made = {}

    def get(dom):
        if dom not in made:
            m = ns.learn(domain_file(dom), train_problems(dom), model="hwl")
            path = tmp_path_factory.mktemp("models") / f"{dom}.hwl"
            m.save(path)
            made[dom] = (m, str(path))
        return made[dom]

    return get


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def have(module):
    try:
        __import__(module)
        return True
    except Exception:
        return False


__all__ = ["REPO", "LEARN_SIZES", "domain_file", "run", "have", "shutil"]
