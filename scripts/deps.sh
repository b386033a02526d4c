#!/usr/bin/env bash
# Installs the Debian packages the build, tests and demo need, when missing.
set -eu
need=(gcc make bc pkg-config libopenblas-dev libxgboost-dev clang libclang-rt-14-dev)
missing=()
for p in "${need[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "deps: installing ${missing[*]}"
    SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# The Python package's venv (build/venv, on Debian's /usr/bin/python3) with
# numpy and pytest, and the optional side-by-side packages (wlplan, Unified
# Planning, up-fast-downward, matplotlib, Downward Lab; mypy checks the type stubs): made once; pip is not asked again
# while the imports work, so `make test` does not wait on PyPI.  Failures
# here are notes, not errors (the pytest suite is then skipped).
VENV=build/venv
PYBASE=/usr/bin/python3
[ -x "$PYBASE" ] || PYBASE=python3
if [ ! -x "$VENV/bin/python" ]; then
    "$PYBASE" -m venv "$VENV" 2>/dev/null || echo "deps: cannot make $VENV (python3-venv missing?); Python tests will be skipped"
fi
if [ -x "$VENV/bin/python" ]; then
    PIP=("$VENV/bin/pip" install -q --disable-pip-version-check --timeout 30 --retries 1)
    "$VENV/bin/python" -c 'import numpy, pytest, setuptools' 2>/dev/null ||
        "${PIP[@]}" numpy pytest setuptools wheel || echo "deps: pip could not install numpy/pytest"
    "$VENV/bin/python" -c 'import wlplan, unified_planning, up_fast_downward, matplotlib, mypy, lab' 2>/dev/null ||
        "${PIP[@]}" wlplan==2.1.0 unified-planning up-fast-downward matplotlib mypy lab ||
        echo "deps: optional Python packages not installed (their tests skip)"
fi
