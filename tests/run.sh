#!/usr/bin/env bash
# Runs every unit-test program and every end-to-end script, then prints one
# closing line "N passed, N failed" (and skipped) that CI reads.
set -u
BUILD=${BUILD:-build}
export NS_BIN="$PWD/$BUILD/nextstate"
pass=0; fail=0; skip=0; failed=()
add_counts() { # parse "X: N passed, M failed" from the last line of $1
    local line; line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
    if [ -z "$line" ]; then return 1; fi
    local p f; p=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"$line"); f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
    pass=$((pass + p)); fail=$((fail + f))
    skip=$((skip + $(grep -c '^skip ' "$1" || true)))
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    "$t" >"$tmp/$name.out" 2>&1; rc=$?
    if ! add_counts "$tmp/$name.out" || { [ $rc -ne 0 ] && ! grep -q '^FAIL' "$tmp/$name.out"; }; then
        fail=$((fail + 1)); failed+=("$name (exit $rc, no summary)")
    fi
    grep -q '^FAIL' "$tmp/$name.out" && failed+=("$name")
    if [ $rc -ne 0 ] || grep -q '^FAIL' "$tmp/$name.out"; then cat "$tmp/$name.out"; fi
    echo "$name: $(tail -n 1 "$tmp/$name.out")"
done
for t in tests/e2e/*.sh; do
    [ -f "$t" ] || continue
    name=$(basename "$t" .sh)
    bash "$t" >"$tmp/$name.out" 2>&1; rc=$?
    if [ $rc -eq 77 ]; then skip=$((skip + 1)); echo "e2e $name: skipped ($(tail -n 1 "$tmp/$name.out"))"; continue; fi
    if [ $rc -eq 0 ]; then pass=$((pass + 1)); echo "e2e $name: ok"
    else fail=$((fail + 1)); failed+=("e2e $name"); cat "$tmp/$name.out"; echo "e2e $name: FAILED"; fi
done
# The Python package's pytest suite (python/tests), in the venv of scripts/deps.sh.
# Once per checkout: the package is built by `make python` from the sources with the default
# compiler and flags, so the sanitiser and clang passes (BUILD=build-san, build-clang) would
# only run the same tests again.
PY=${NS_PYTHON:-build/venv/bin/python}
if [ "$BUILD" != build ] && [ -z "${NS_PYTHON:-}" ]; then
    echo "pytest python/tests: not run for BUILD=$BUILD (the package does not use it)"
elif [ -x "$PY" ] && "$PY" -c 'import nextstate, pytest' 2>/dev/null; then
    "$PY" -m pytest -q -p no:cacheprovider python/tests >"$tmp/pytest.out" 2>&1; rc=$?
    line=$(tail -n 1 "$tmp/pytest.out")
    p=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+' || echo 0)
    f=$(( $(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+' || echo 0) + $(grep -oE '[0-9]+ errors?' <<<"$line" | grep -oE '[0-9]+' || echo 0) ))
    s=$(grep -oE '[0-9]+ skipped' <<<"$line" | grep -oE '[0-9]+' || echo 0)
    if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
    [ "$f" -gt 0 ] && { cat "$tmp/pytest.out"; failed+=("pytest python/tests"); }
    echo "pytest python/tests: $line"
else
    skip=$((skip + 1)); echo "pytest python/tests: skipped (no $PY with nextstate and pytest; scripts/deps.sh makes it)"
fi
[ ${#failed[@]} -gt 0 ] && printf 'failed: %s\n' "${failed[@]}"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
