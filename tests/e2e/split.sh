# Splits and candidate pools through the CLI: every protocol, determinism,
# clear errors with the documented exit codes, and the first paper's size splits.
. "$(dirname "$0")/lib.bash"
mkdir -p "$TMP/fp" "$TMP/bp"
for s in 1 2 3 4 5; do
    expect_exit 0 "$NS" gen ferry --seed $s --cars 3 -o "$TMP/fp/p$s.pddl"
done
for s in 1 2 3; do
    expect_exit 0 "$NS" gen blocksworld --seed $s --blocks 4 -o "$TMP/bp/p$s.pddl"
done
expect_exit 0 "$NS" data build domains/ferry/domain.pddl "$TMP/fp" -o "$TMP/ferry" --plans 8 --quiet
expect_exit 0 "$NS" data build domains/blocksworld/domain.pddl "$TMP/bp" -o "$TMP/blocks" --plans 8 --quiet
expect_exit 0 "$NS" data build domains/ferry/domain.pddl "$TMP/fp/p1.pddl" -o "$TMP/noplans" --plans 0 --quiet

# every protocol; the summary names the counts and the pool size
for p in interpolation plan-variant extrapolation; do
    expect_exit 0 "$NS" split $p "$TMP/ferry" -o "$TMP/s-$p" --seed 4
    grep -qE "^$TMP/s-$p: $p over 1 dataset: [0-9]+ train, [0-9]+ dev, [0-9]+ test transitions; pools of 128" "$TMP/err" ||
        fail "summary: $(cat "$TMP/err")"
    for f in split.json train.npy dev.npy test.npy pools.npy; do
        [ -s "$TMP/s-$p/$f" ] || fail "$p: $f missing"
    done
    grep -q '"format": "nextstate-split"' "$TMP/s-$p/split.json" || fail "$p: split.json format"
    grep -q "\"protocol\": \"$p\"" "$TMP/s-$p/split.json" || fail "$p: split.json protocol"
done
for p in multi-domain cross-domain leave-one-out; do
    expect_exit 0 "$NS" split $p "$TMP/ferry" "$TMP/blocks" -o "$TMP/s-$p" --pool-size 16 --seed 4
    grep -q "over 2 datasets" "$TMP/err" || fail "summary: $(cat "$TMP/err")"
done
# cross-domain tests on every transition of the second dataset
ntr=$("$NS" data info "$TMP/blocks" --json | grep -oE '"transitions": [0-9]+' | head -n 1 | grep -oE '[0-9]+')
grep -qE "\"test\": $ntr," "$TMP/s-cross-domain/split.json" || fail "cross-domain test count, want $ntr"

# same seed, same bytes; another seed, other pools
expect_exit 0 "$NS" split interpolation "$TMP/ferry" -o "$TMP/again" --seed 4
for f in split.json train.npy dev.npy test.npy pools.npy; do
    cmp -s "$TMP/s-interpolation/$f" "$TMP/again/$f" || fail "$f differs between two runs"
done
expect_exit 0 "$NS" split interpolation "$TMP/ferry" -o "$TMP/other" --seed 5
cmp -s "$TMP/s-interpolation/pools.npy" "$TMP/other/pools.npy" && fail "seed 5 gave the same pools"

# options
expect_exit 0 "$NS" split interpolation "$TMP/ferry" -o "$TMP/nopool" --pool-size 0 --dev-frac 0 --test-frac 0.5
grep -q " 0 dev, .*no pools" "$TMP/err" || fail "summary: $(cat "$TMP/err")"
expect_exit 0 "$NS" split interp "$TMP/ferry" -o "$TMP/repl" --with-replacement --pool-size 300
grep -q "pools of 300 with replacement (0 short)" "$TMP/err" || fail "summary: $(cat "$TMP/err")"

# errors: usage 30, input 31, missing files 32
expect_exit 30 "$NS" split
expect_exit 30 "$NS" split nosuchprotocol "$TMP/ferry" -o "$TMP/x"
expect_exit 30 "$NS" split interpolation "$TMP/ferry"
expect_exit 30 "$NS" split interpolation "$TMP/ferry" -o "$TMP/x" --test-frac 1.5
expect_exit 30 "$NS" split interpolation "$TMP/ferry" -o "$TMP/x" --pool-size -3
expect_exit 30 "$NS" split interpolation "$TMP/ferry" "$TMP/blocks" -o "$TMP/x"
expect_exit 30 "$NS" split leave-one-out "$TMP/ferry" -o "$TMP/x"
expect_exit 30 "$NS" split plan-variant "$TMP/ferry" -o "$TMP/x" --with-replacement
expect_exit 31 "$NS" split plan-variant "$TMP/noplans" -o "$TMP/x"
grep -q "noplans: plan-variant needs a problem with two distinct" "$TMP/err" || fail "message: $(cat "$TMP/err")"
expect_exit 31 "$NS" split extrapolation "$TMP/noplans" -o "$TMP/x"
expect_exit 32 "$NS" split interpolation "$TMP/missing" -o "$TMP/x"
grep -q "missing/manifest.json" "$TMP/err" || fail "message: $(cat "$TMP/err")"
# a corrupted dataset is named
cp -r "$TMP/ferry" "$TMP/broken"
printf 'x' | dd of="$TMP/broken/transitions.npy" bs=1 seek=200 conv=notrunc 2>/dev/null
expect_exit 31 "$NS" split interpolation "$TMP/broken" -o "$TMP/x"
grep -q "transitions.npy" "$TMP/err" || fail "message: $(cat "$TMP/err")"
[ -e "$TMP/x" ] && fail "a failed split left output behind"

# the first paper's size splits
expect_exit 32 "$NS" split sizes "$TMP/missing"
if [ -d "$BENCH/seedA/pddl/blocks" ]; then
    expect_exit 0 "$NS" split sizes "$BENCH/seedA/pddl/blocks"
    for want in train:9 validation:3 test-interpolation:3 test-extrapolation:20; do
        n=$(grep -c "^${want%%:*}	" "$TMP/out")
        [ "$n" = "${want##*:}" ] || fail "sizes: ${want%%:*} has $n problems, expected ${want##*:}"
    done
    grep -q "9 train, 3 validation, 3 test-interpolation, 20 test-extrapolation" "$TMP/err" || fail "sizes summary"
    expect_exit 0 "$NS" split sizes "$BENCH/seedA/pddl/blocks" --json
    grep -q '"counts": {"train": 9, "validation": 3, "test-interpolation": 3, "test-extrapolation": 20}' "$TMP/out" ||
        fail "sizes json: $(cat "$TMP/out")"
fi
exit 0
