# lib.sh — helpers for end-to-end tests (sourced).  Each test script exits 0
# on success, 1 on failure, 77 when it must be skipped.
set -u
NS=${NS_BIN:-build/nextstate}
BENCH=${NEXTSTATE_BENCHMARKS:-../shared/benchmarks}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# The Python the experiment scripts use (experiments/lib.sh): $PYTHON, else the venv deps.sh makes
# (numpy, matplotlib), else Debian's
EXP_PY=${PYTHON:-}
if [ -z "$EXP_PY" ]; then
    EXP_PY=/usr/bin/python3
    _venv=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/venv/bin/python
    [ -x "$_venv" ] && EXP_PY=$_venv
fi
fail() { echo "FAIL: $*"; exit 1; }
# expect_exit CODE CMD… : runs CMD, checks its exit code
expect_exit() {
    local want=$1; shift
    "$@" >"$TMP/out" 2>"$TMP/err"; local got=$?
    [ "$got" -eq "$want" ] || { cat "$TMP/out" "$TMP/err"; fail "exit $got, expected $want: $*"; }
}
need_bench() { [ -d "$BENCH" ] || { echo "benchmarks absent"; exit 77; }; }
