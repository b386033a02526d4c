# `embed` saves its cache while it grows (--save-every): killed midway (SIGKILL just after a write point,
# tests/faults/killat.c), the cache it leaves loads, holds part of the texts, and the next run computes
# only the rest and writes the same rows as a run that was never killed.
. "$(dirname "$0")/lib.bash"
SHIM=$(dirname "$NS")/tests/libkillat.so
[ -f "$SHIM" ] || { echo "no $SHIM (make all builds it)"; exit 77; }
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 OPENBLAS_NUM_THREADS=1
( NS_KILL_AT=1 LD_PRELOAD=$SHIM "$NS" gen ferry --seed 1 -o "$TMP/probe.pddl" >/dev/null 2>&1; exit $? ) 2>/dev/null
[ $? -eq 137 ] || { echo "the shim cannot interpose on $NS (a sanitised build?)"; exit 77; }
MODEL=tests/fixtures/bert/tiny-bert
mkdir -p "$TMP/p"
for s in 1 2 3; do expect_exit 0 "$NS" gen ferry --seed $s --cars 3 --locations 3 -o "$TMP/p/f$s.pddl"; done
expect_exit 0 "$NS" data build domains/ferry/domain.pddl "$TMP/p" -o "$TMP/ds" --quiet
computed() { grep -oE '"computed": [0-9]+' "$1" | grep -oE '[0-9]+$'; }
# one text per forward pass, one thread: a text's row does not depend on which run computes it
opts=(--model "$MODEL" --batch 1 --threads 1)
expect_exit 0 "$NS" embed "$TMP/ds" "${opts[@]}" --cache "$TMP/ref" --states-out "$TMP/ref.npy" --json
total=$(computed "$TMP/out")
[ "$total" -gt 20 ] || fail "too few texts: $(cat "$TMP/out")"
( NS_KILL_AT=20 NS_KILL_AFTER=1 LD_PRELOAD=$SHIM "$NS" embed "$TMP/ds" "${opts[@]}" --cache "$TMP/c" \
    --save-every 0.000001 --quiet >/dev/null 2>&1; exit $? ) 2>/dev/null
[ $? -eq 137 ] || fail "the run was not killed"
expect_exit 0 "$NS" embed "$TMP/ds" "${opts[@]}" --cache "$TMP/c" --states-out "$TMP/s.npy" --json
again=$(computed "$TMP/out")
[ "$again" -gt 0 ] && [ "$again" -lt "$total" ] || fail "resumed run computed $again of $total texts"
cmp -s "$TMP/ref.npy" "$TMP/s.npy" || fail "the resumed rows differ from a run never killed"
expect_exit 30 "$NS" embed "$TMP/ds" "${opts[@]}" --save-every 0
echo "ok ($again of $total texts computed after the kill)"
