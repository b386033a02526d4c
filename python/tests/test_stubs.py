"""The type stubs (python/nextstate/_core.pyi) cover the extension: every
name _core exports and every method of its classes has a stub entry and
every entry exists; the installed package ships the stubs and py.typed;
with mypy installed, stubtest and mypy agree."""
import ast
import os
import subprocess
import sys

import pytest

import nextstate
from nextstate import _core
from conftest import REPO, have

PKG = os.path.dirname(nextstate.__file__)


def stub_names(path):
    """{name: set of member names (classes) or None (functions, variables)}."""
    tree = ast.parse(open(path).read())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)} | \
                             {n.target.id for n in node.body if isinstance(n, ast.AnnAssign)}
        elif isinstance(node, ast.FunctionDef):
            out[node.name] = None
    return out


def runtime_names():
    out = {}
    for name in dir(_core):
        if name.startswith("__"):
            continue
        obj = getattr(_core, name)
        if isinstance(obj, type):
            if issubclass(obj, BaseException):
                out[name] = set()
            else:
                out[name] = {m for m in vars(obj) if not m.startswith("__")}
        else:
            out[name] = None
    return out


@pytest.mark.parametrize("where", ["source", "installed"])
def test_every_export_has_a_stub(where):
    path = os.path.join(REPO, "python", "nextstate", "_core.pyi") if where == "source" else \
        os.path.join(PKG, "_core.pyi")
    assert os.path.isfile(path), f"{path} is missing (package data)"
    stubs, rt = stub_names(path), runtime_names()
    assert sorted(set(rt) - set(stubs)) == [], "exported by _core without a stub"
    assert sorted(set(stubs) - set(rt)) == [], "stubbed but not exported by _core"
    for name, members in rt.items():
        if members is not None:
            assert sorted(members - stubs[name]) == [], f"{name}: methods without a stub"
            if not issubclass(getattr(_core, name), BaseException):  # (the error's attributes are per instance)
                assert [m for m in stubs[name] if not hasattr(getattr(_core, name), m)] == [], \
                    f"{name}: stubbed members the class lacks"


def test_py_typed_installed():
    assert os.path.isfile(os.path.join(PKG, "py.typed"))


@pytest.mark.skipif(not have("mypy"), reason="mypy is not installed")
def test_stubtest_and_mypy(tmp_path):
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "nextstate._core", "--mypy-config-file",
                        os.path.join(REPO, "pyproject.toml")], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")], capture_output=True,
                       text=True, cwd=REPO)
    assert r.returncode == 0, r.stdout + r.stderr
