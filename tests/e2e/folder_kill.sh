# Folder outputs are replaced as a unit (issue #14 D5): `data build -o DIR`,
# `split -o DIR` and `embed --cache DIR` killed with SIGKILL at random
# points, or stopped by a write error, leave the previous output loadable
# every time.
. "$(dirname "$0")/lib.bash"
D=domains/ferry/domain.pddl
mkdir -p "$TMP/p" "$TMP/q"
for s in 1 2; do expect_exit 0 "$NS" gen ferry --seed $s --cars 3 --locations 3 -o "$TMP/p/f$s.pddl"; done
for s in 3 4 5 6; do expect_exit 0 "$NS" gen ferry --seed $s --cars 4 --locations 4 -o "$TMP/q/f$s.pddl"; done
expect_exit 0 "$NS" data build "$D" "$TMP/p" -o "$TMP/ds" --seed 1
expect_exit 0 "$NS" data info "$TMP/ds" --json
cp "$TMP/out" "$TMP/info0"
# a write error (file size limit) part way through: the old dataset survives
( trap '' XFSZ; ulimit -f 1; "$NS" data build "$D" "$TMP/q" -o "$TMP/ds" --seed 1 ) >/dev/null 2>&1 && fail "ulimit -f 1 build succeeded"
expect_exit 0 "$NS" data info "$TMP/ds" --json
cmp -s "$TMP/out" "$TMP/info0" || fail "dataset changed after a failed write"
# time a full build, then kill rebuilds at random points within it
t0=$(date +%s%N)
"$NS" data build "$D" "$TMP/q" -o "$TMP/ds2" --seed 1 >/dev/null 2>&1 || fail "build q"
t1=$(date +%s%N)
span=$(( (t1 - t0) / 1000 ))   # microseconds
[ $span -gt 0 ] || span=1000
RANDOM=14
for i in $(seq 1 12); do
    "$NS" data build "$D" "$TMP/q" -o "$TMP/ds" --seed 1 >/dev/null 2>&1 &
    pid=$!
    us=$(( (RANDOM * 32768 + RANDOM) % span ))
    sleep "$(printf '0.%06d' "$us")"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    # the folder loads: the previous one, or (when the kill came too late) the new one whole
    expect_exit 0 "$NS" data info "$TMP/ds" --json
    if ! cmp -s "$TMP/out" "$TMP/info0"; then
        "$NS" data info "$TMP/ds2" --json >"$TMP/info2" 2>/dev/null
        cmp -s "$TMP/out" "$TMP/info2" || fail "kill $i after ${us}us: neither the old nor the new dataset"
        # the new one is now the previous one: rebuild the old for the next round
        expect_exit 0 "$NS" data build "$D" "$TMP/p" -o "$TMP/ds" --seed 1
    fi
done
rm -rf "$TMP"/ds.tmp.* "$TMP"/ds.old.*
# split -o DIR: same
expect_exit 0 "$NS" split interpolation "$TMP/ds" -o "$TMP/sp" --seed 4
cp "$TMP/sp/split.json" "$TMP/split0"
( trap '' XFSZ; ulimit -f 1; "$NS" split interpolation "$TMP/ds2" -o "$TMP/sp" --seed 4 ) >/dev/null 2>&1 && fail "ulimit -f 1 split succeeded"
cmp -s "$TMP/sp/split.json" "$TMP/split0" || fail "split changed after a failed write"
for i in $(seq 1 6); do
    "$NS" split interpolation "$TMP/ds2" -o "$TMP/sp" --seed 4 >/dev/null 2>&1 &
    pid=$!
    sleep "0.00$((RANDOM % 10))"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    [ -f "$TMP/sp/split.json" ] || fail "split kill $i: no split.json"
    for f in train.npy dev.npy test.npy pools.npy; do [ -f "$TMP/sp/$f" ] || fail "split kill $i: $f missing"; done
done
# embed --cache DIR: a cache of ds's texts, grown with ds2's; whichever
# survives a kill loads and holds every text of ds (nothing computed)
MODEL=tests/fixtures/bert/tiny-bert
cached() { # the cache loads and already holds ds's texts
    "$NS" embed "$TMP/ds" --model "$MODEL" --cache "$TMP/cache" --json >"$TMP/emb.out" 2>&1 &&
        grep -q '"computed": 0,' "$TMP/emb.out"
}
expect_exit 0 "$NS" embed "$TMP/ds" --model "$MODEL" --cache "$TMP/cache" --quiet
cached || { cat "$TMP/emb.out"; fail "embed: a second run computed texts again"; }
cp -r "$TMP/cache" "$TMP/cache0"
( trap '' XFSZ; ulimit -f 1; "$NS" embed "$TMP/ds2" --model "$MODEL" --cache "$TMP/cache" --quiet ) >/dev/null 2>&1 &&
    fail "ulimit -f 1 embed succeeded"
diff -r "$TMP/cache" "$TMP/cache0" >/dev/null || fail "embed cache changed after a failed write"
t0=$(date +%s%N)
"$NS" embed "$TMP/ds2" --model "$MODEL" --cache "$TMP/cache" --quiet >/dev/null 2>&1 || fail "embed ds2"
t1=$(date +%s%N)
span=$(( (t1 - t0) / 1000 ))
[ $span -gt 0 ] || span=1000
for i in $(seq 1 12); do
    rm -rf "$TMP/cache" && cp -r "$TMP/cache0" "$TMP/cache"
    "$NS" embed "$TMP/ds2" --model "$MODEL" --cache "$TMP/cache" --quiet >/dev/null 2>&1 &
    pid=$!
    us=$(( (RANDOM * 32768 + RANDOM) % span ))
    sleep "$(printf '%d.%06d' $((us / 1000000)) $((us % 1000000)))"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    cached || { cat "$TMP/emb.out"; fail "embed kill $i after ${us}us: the cache does not load"; }
done
echo "embed: 12 kills within ${span}us, the cache loaded every time"
exit 0
