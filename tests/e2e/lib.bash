# lib.sh — helpers for end-to-end tests (sourced).  Each test script exits 0
# on success, 1 on failure, 77 when it must be skipped.
set -u
NS=${NS_BIN:-build/nextstate}
BENCH=${NEXTSTATE_BENCHMARKS:-../shared/benchmarks}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# expect_exit CODE CMD… : runs CMD, checks its exit code
expect_exit() {
    local want=$1; shift
    "$@" >"$TMP/out" 2>"$TMP/err"; local got=$?
    [ "$got" -eq "$want" ] || { cat "$TMP/out" "$TMP/err"; fail "exit $got, expected $want: $*"; }
}
need_bench() { [ -d "$BENCH" ] || { echo "benchmarks absent"; exit 77; }; }
