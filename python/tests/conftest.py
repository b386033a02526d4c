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


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def have(module):
    try:
        __import__(module)
        return True
    except Exception:
        return False


__all__ = ["REPO", "domain_file", "run", "have", "shutil"]
