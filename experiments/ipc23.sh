#!/usr/bin/env bash
# The IPC 2023 Learning Track: learn per domain from training/easy only, plan
# the testing problems with the learned heuristic, GBFS-h^FF and lama-first,
# score coverage and quality as the competition does (experiments/ipc23.py).
#
#   experiments/ipc23.sh [DOMAIN…]      (default: the ten domains)
#
# Environment: LEVELS ("easy medium hard"), PROBLEMS (testing problem numbers,
# e.g. "01 04 07"; default all 30 per level), TIME_LIMIT (60 s CPU per
# problem), SOLVE_LIMIT (20 s per training search, a safety cap behind learn's
# work budget), TRAIN_EVERY (1: every
# training problem; 3: every third), PLANNERS ("hwl gbfs lama"; lama is Fast
# Downward's lama-first and needs `pip install up-fast-downward`; nslama is
# `nextstate solve --search lama`), OUT (results/ipc23), IPC
# (NEXTSTATE_BENCHMARKS/ipc2023-learning).  Resumable: models and runs in OUT
# are reused.  Writes OUT/ipc23.md, .json, .csv and .png (with matplotlib).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/venv/bin/python ] && [ -z "${PYTHON:-}" ] && PYTHON=$PWD/build/venv/bin/python  # up-fast-downward's
. experiments/lib.sh
export IPC=${IPC:-$BENCH/ipc2023-learning}
export OUT=${OUT:-results/ipc23}
if [ ! -f "$IPC/upper_bounds.json" ]; then
    echo "ipc23: $IPC not found; nothing to do" >&2
    exit 0
fi
exec "$PYTHON" experiments/ipc23.py "$@"
