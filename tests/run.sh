#!/usr/bin/env bash
# Runs every unit-test program, every end-to-end script and the Python
# package's pytest suite, TEST_JOBS at a time (default: the number of cores),
# then reports them in a fixed order with each one's wall time and prints one
# closing line "N passed, N failed" (and skipped) that CI reads.
set -u
BUILD=${BUILD:-build}
export NS_BIN="$PWD/$BUILD/nextstate"
JOBS=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
pass=0; fail=0; skip=0; failed=()
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# The Python package's suite (python/tests), in the venv of scripts/deps.sh.  Once per
# checkout: the package is built by `make python` from the sources with the default compiler
# and flags, so the sanitiser and clang passes (BUILD=build-san, build-clang) would only run
# the same tests again.
PY=${NS_PYTHON:-build/venv/bin/python}
pytest_state=skip
if [ "$BUILD" != build ] && [ -z "${NS_PYTHON:-}" ]; then
    pytest_state=other
elif [ -x "$PY" ] && "$PY" -c 'import nextstate, pytest' 2>/dev/null; then
    pytest_state=run
fi

# run_job KIND NAME: runs one test into $tmp/NAME.out, its exit code and seconds beside it
run_job() {
    local kind=$1 name=$2 t0 rc; t0=$(date +%s.%N)
    case $kind in
        unit) "$BUILD/tests/$name" ;;
        e2e) bash "tests/e2e/$name.sh" ;;
        pytest) "$PY" -m pytest -q -p no:cacheprovider python/tests ;;
    esac >"$tmp/$name.out" 2>&1; rc=$?
    echo $rc >"$tmp/$name.rc"
    awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }' >"$tmp/$name.sec"
}
units=(); e2es=()
for t in "$BUILD"/tests/test_*; do [ -x "$t" ] && units+=("$(basename "$t")"); done
for t in tests/e2e/*.sh; do [ -f "$t" ] && e2es+=("$(basename "$t" .sh)"); done
queue=()  # the longest first: pytest, the end-to-end scripts, then the unit tests
[ $pytest_state = run ] && queue+=("pytest pytest")
for n in "${e2es[@]}"; do queue+=("e2e $n"); done
for n in "${units[@]}"; do queue+=("unit $n"); done
for j in "${queue[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    run_job $j &
done
wait

add_counts() { # parse "X: N passed, M failed" from the last such line of $1
    local line; line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
    if [ -z "$line" ]; then return 1; fi
    local p f; p=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"$line"); f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
    pass=$((pass + p)); fail=$((fail + f))
    skip=$((skip + $(grep -c '^skip ' "$1" || true)))
}
for name in "${units[@]}"; do
    out=$tmp/$name.out; rc=$(cat "$tmp/$name.rc")
    if ! add_counts "$out" || { [ "$rc" -ne 0 ] && ! grep -q '^FAIL' "$out"; }; then
        fail=$((fail + 1)); failed+=("$name (exit $rc, no summary)")
    fi
    grep -q '^FAIL' "$out" && failed+=("$name")
    if [ "$rc" -ne 0 ] || grep -q '^FAIL' "$out"; then cat "$out"; fi
    echo "$name: $(tail -n 1 "$out") ($(cat "$tmp/$name.sec") s)"
done
for name in "${e2es[@]}"; do
    out=$tmp/$name.out; rc=$(cat "$tmp/$name.rc"); sec="($(cat "$tmp/$name.sec") s)"
    if [ "$rc" -eq 77 ]; then skip=$((skip + 1)); echo "e2e $name: skipped ($(tail -n 1 "$out")) $sec"; continue; fi
    if [ "$rc" -eq 0 ]; then pass=$((pass + 1)); echo "e2e $name: ok $sec"
    else fail=$((fail + 1)); failed+=("e2e $name"); cat "$out"; echo "e2e $name: FAILED $sec"; fi
done
case $pytest_state in
    other) echo "pytest python/tests: not run for BUILD=$BUILD (the package does not use it)" ;;
    skip) skip=$((skip + 1)); echo "pytest python/tests: skipped (no $PY with nextstate and pytest; scripts/deps.sh makes it)" ;;
    run)
        out=$tmp/pytest.out; rc=$(cat "$tmp/pytest.rc"); line=$(tail -n 1 "$out")
        p=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+' || echo 0)
        f=$(( $(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+' || echo 0) + $(grep -oE '[0-9]+ errors?' <<<"$line" | grep -oE '[0-9]+' || echo 0) ))
        s=$(grep -oE '[0-9]+ skipped' <<<"$line" | grep -oE '[0-9]+' || echo 0)
        if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
        pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
        [ "$f" -gt 0 ] && { cat "$out"; failed+=("pytest python/tests"); }
        echo "pytest python/tests: $line" ;;
esac
[ ${#failed[@]} -gt 0 ] && printf 'failed: %s\n' "${failed[@]}"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
