#!/usr/bin/env bash
# `make bench`: nextstate against Fast Downward (PyPI up-fast-downward) side by side.
# Installs up-fast-downward with pip when missing, then runs bench/fd.py, which
# prints the tables and writes results/bench_fd.{csv,json}.
#   BENCH_QUICK=1 make bench          a handful of problems, 10 s limit (~2 minutes)
#   BENCH_TIME_LIMIT=30 make bench    the full list (bench/problems.txt), 30 s per run
# Other knobs (problem list, modes, memory): see the top of bench/fd.py.
set -eu
cd "$(dirname "$0")/.."
export BUILD=${BUILD:-build}
PY=${PYTHON:-python3}
have_fd() { "$PY" -c 'import importlib.util as u, sys; sys.exit(u.find_spec("up_fast_downward") is None)'; }
if [ -z "${FD_DRIVER:-}" ] && ! have_fd; then
    echo "bench: installing up-fast-downward with pip"
    "$PY" -m pip install -q up-fast-downward ||
        "$PY" -m pip install -q --user --break-system-packages up-fast-downward
fi
exec "$PY" bench/fd.py
