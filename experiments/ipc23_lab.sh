#!/usr/bin/env bash
# The IPC 2023 Learning Track as a Downward Lab experiment (experiments/ipc23_lab.py:
# learn, build, start, parse, fetch, report — locally or, with NS_LAB_ENV=slurm, on a
# Slurm cluster; the same runs and limits as experiments/ipc23.sh).
#
#   experiments/ipc23_lab.sh [STEP…]       (--all: every step; none: the list)
#
# Environment: experiments/ipc23.py's (LEVELS, PROBLEMS, TRAIN_EVERY, SOLVE_LIMIT,
# PLANNERS "hwl gbfs lama", IPC) and TIME_LIMIT (300 s CPU), MEMORY_LIMIT (8192 MiB),
# OUT (results/ipc23-lab), MODELS (OUT/models), NS_LAB_JOBS, NS_LAB_ENV (local|slurm),
# NS_SLURM_PARTITION, NS_SLURM_QOS, NS_SLURM_MEMORY_PER_CPU, NS_SLURM_SETUP.
# Needs `pip install lab` (make deps puts it in build/venv) and, for lama,
# up-fast-downward.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/venv/bin/python ] && [ -z "${PYTHON:-}" ] && PYTHON=$PWD/build/venv/bin/python
. experiments/lib.sh
export IPC=${IPC:-$BENCH/ipc2023-learning}
if [ ! -f "$IPC/upper_bounds.json" ]; then
    echo "ipc23_lab: $IPC not found; nothing to do" >&2
    exit 0
fi
"$PYTHON" -c 'import lab' 2>/dev/null || { echo "ipc23_lab: $PYTHON has no lab (pip install lab)" >&2; exit 1; }
exec "$PYTHON" experiments/ipc23_lab.py "$@"
