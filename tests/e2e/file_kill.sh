# Single-file outputs are written beside and renamed into place (issue #14,
# must-show 3): `train -o CKPT` and `learn -o MODEL` killed with SIGKILL at
# random points of a rewrite, or stopped by a write error, leave a file that
# loads every time: the previous one byte for byte, or the new one whole.
. "$(dirname "$0")/lib.bash"
D=domains/ferry/domain.pddl
mkdir -p "$TMP/p"
for s in 1 2 3; do expect_exit 0 "$NS" gen ferry --seed $s --cars 3 --locations 3 -o "$TMP/p/f$s.pddl"; done
expect_exit 0 "$NS" data build "$D" "$TMP/p" -o "$TMP/ds" --seed 1 --plans 4 --quiet
expect_exit 0 "$NS" split interpolation "$TMP/ds" -o "$TMP/sp" --seed 1
gen_kills() { # SPAN_US: prints 10 kill delays in microseconds within the span
    local i
    for i in $(seq 1 10); do echo $(( (RANDOM * 32768 + RANDOM) % $1 )); done
}
# kill_loop NAME OUTPUT CHECK_CMD… -- WRITE_CMD…: rewrites OUTPUT with WRITE_CMD, killed at random points
kill_loop() {
    local name=$1 out=$2
    shift 2
    local check=() write=()
    while [ "$1" != -- ]; do check+=("$1"); shift; done
    shift
    write=("$@")
    cp "$out" "$TMP/$name.old"
    # a write error part way through: the old file survives, byte for byte
    ( trap '' XFSZ; ulimit -f 4; "${write[@]}" ) >/dev/null 2>&1 && fail "$name: ulimit -f 4 rewrite succeeded"
    cmp -s "$out" "$TMP/$name.old" || fail "$name: changed after a failed write"
    local t0 t1 span us k=0
    t0=$(date +%s%N)
    "${write[@]}" >/dev/null 2>&1 || fail "$name: rewrite"
    t1=$(date +%s%N)
    cp "$TMP/$name.old" "$out"
    span=$(( (t1 - t0) / 1000 ))
    [ $span -gt 0 ] || span=1000
    for us in $(gen_kills $span); do
        k=$((k + 1))
        "${write[@]}" >/dev/null 2>&1 &
        local pid=$!
        sleep "$(printf '%d.%06d' $((us / 1000000)) $((us % 1000000)))"
        kill -9 $pid 2>/dev/null
        wait $pid 2>/dev/null
        "${check[@]}" >"$TMP/check.out" 2>&1 || { cat "$TMP/check.out"; fail "$name: kill $k after ${us}us: the output does not load"; }
        cmp -s "$out" "$TMP/$name.old" || cp "$TMP/$name.old" "$out" # the new one landed whole: back to the old
    done
    echo "$name: $k kills within ${span}us, output loaded every time"
}
RANDOM=14
expect_exit 0 "$NS" train "$TMP/sp" -o "$TMP/m.ckpt" --epochs 2 --hidden 32 --quiet
kill_loop train "$TMP/m.ckpt" "$NS" eval "$TMP/sp" "$TMP/m.ckpt" --latency 0 --no-acc --quiet -- \
    "$NS" train "$TMP/sp" -o "$TMP/m.ckpt" --epochs 6 --hidden 64 --seed 2 --quiet
expect_exit 0 "$NS" learn "$D" "$TMP/p" --model xgb --rounds 5 -o "$TMP/x.model" --quiet
expect_exit 0 "$NS" gen ferry --seed 9 --cars 4 --locations 3 -o "$TMP/big.pddl"
kill_loop learn "$TMP/x.model" "$NS" plan --model "$TMP/x.model" "$D" "$TMP/big.pddl" --algo guided --time-limit 20 -- \
    "$NS" learn "$D" "$TMP/p" --model xgb --rounds 40 --seed 2 -o "$TMP/x.model" --quiet
exit 0
