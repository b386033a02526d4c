#!/usr/bin/env bash
# Validation for the IPC 2023 Learning Track defaults, without its testing
# problems: experiments/ipc23.py's models (learned from training/easy) and
# planners on problems generated larger than any training problem, for the IPC
# domains nextstate's generators match (experiments/ipc23_validate.py).
#
#   experiments/ipc23_validate.sh [DOMAIN…]    (default: the ten)
#
# Environment: PLANNERS ("hwl-gbfs hwl-lama nslama lama"), TIME_LIMIT (30 s CPU),
# VAL_SEEDS ("1 2 3"), and experiments/ipc23.sh's (OUT results/ipc23, SOLVE_LIMIT,
# TRAIN_EVERY, IPC).  Writes OUT/validate/ipc23.md, .json, .csv.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/venv/bin/python ] && [ -z "${PYTHON:-}" ] && PYTHON=$PWD/build/venv/bin/python  # up-fast-downward's
. experiments/lib.sh
export IPC=${IPC:-$BENCH/ipc2023-learning}
export OUT=${OUT:-results/ipc23} PLANNERS=${PLANNERS:-hwl-gbfs hwl-lama nslama lama} TIME_LIMIT=${TIME_LIMIT:-30}
if [ ! -f "$IPC/upper_bounds.json" ]; then
    echo "ipc23_validate: $IPC not found; nothing to do" >&2
    exit 0
fi
[ $# -gt 0 ] || set -- blocksworld ferry rovers satellite floortile spanner miconic childsnack transport sokoban
exec "$PYTHON" experiments/ipc23_validate.py "$@"
