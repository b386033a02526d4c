# Kill -9 at every write point (issue #14, must-show 3): `data build`,
# `split`, `train`, `learn` (XGBoost and LSTM) and `embed --cache` rewrite an
# output under the LD_PRELOAD shim tests/faults/killat.c, which kills the
# process just before, then just after, its Nth write point (a file opened
# for writing, a rename, a mkdtemp) for N = 1, 2, … until a run gets through.
# After every kill the output must load and be byte for byte either the
# previous one or the new one (same seed, same bytes: a complete run of the
# rewrite is the reference).
. "$(dirname "$0")/lib.bash"
SHIM=$(dirname "$NS")/tests/libkillat.so
[ -f "$SHIM" ] || { echo "no $SHIM (make all builds it)"; exit 77; }
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 OPENBLAS_NUM_THREADS=1
D=domains/ferry/domain.pddl
# a sanitised binary resolves its own interceptors first: the shim never runs
( NS_KILL_AT=1 LD_PRELOAD=$SHIM "$NS" gen ferry --seed 1 -o "$TMP/probe.pddl" >/dev/null 2>&1; exit $? ) 2>/dev/null
[ $? -eq 137 ] || { echo "the shim cannot interpose on $NS (a sanitised build?)"; exit 77; }
MODEL=tests/fixtures/bert/tiny-bert
mkdir -p "$TMP/p" "$TMP/q"
for s in 1 2; do expect_exit 0 "$NS" gen ferry --seed $s --cars 3 --locations 3 -o "$TMP/p/f$s.pddl"; done
for s in 3 4 5; do expect_exit 0 "$NS" gen ferry --seed $s --cars 4 --locations 3 -o "$TMP/q/f$s.pddl"; done
same() { if [ -d "$1" ]; then diff -r "$1" "$2" >/dev/null 2>&1; else cmp -s "$1" "$2"; fi; }
# points NAME OUT OLD NEW CHECK_CMD… -- WRITE_CMD…: OUT starts as a copy of
# OLD; WRITE_CMD rewrites it (NEW is what a complete rewrite leaves)
points() {
    local name=$1 out=$2 old=$3 new=$4
    shift 4
    local check=() write=() n after killed=0 rc
    while [ "$1" != -- ]; do check+=("$1"); shift; done
    shift
    write=("$@")
    for after in 0 1; do
        for n in $(seq 1 200); do
            rm -rf "$out" && cp -r "$old" "$out"
            # (in a subshell: its "Killed" notice goes to /dev/null)
            ( NS_KILL_AT=$n NS_KILL_AFTER=$after LD_PRELOAD=$SHIM "${write[@]}" >"$TMP/w.out" 2>&1; exit $? ) 2>/dev/null
            rc=$?
            [ $rc -eq 0 ] && break
            [ $rc -eq 137 ] || { cat "$TMP/w.out"; fail "$name: point $n: exit $rc, expected a kill (137)"; }
            killed=$((killed + 1))
            "${check[@]}" >"$TMP/c.out" 2>&1 || { cat "$TMP/c.out"; fail "$name: killed at point $n (after=$after): the output does not load"; }
            same "$out" "$old" || same "$out" "$new" ||
                fail "$name: killed at point $n (after=$after): neither the previous output nor the new one"
        done
        [ $rc -eq 0 ] || fail "$name: more than 200 write points?"
        same "$out" "$new" || fail "$name: a run under the shim did not write the reference output"
    done
    echo "$name: killed at each of its $((killed / 2)) write points (before and after), the output loaded every time"
}
plans_with() { # MODEL: the model loads and plans (solved, exhausted or gave up; 31 is a bad model file)
    "$NS" plan --model "$1" "$D" "$TMP/big.pddl" --time-limit 20
    case $? in 0 | 10 | 11) return 0 ;; *) return 1 ;; esac
}
rm_stale() { rm -rf "$TMP"/*.tmp.* "$TMP"/*.old.*; }
# data build
expect_exit 0 "$NS" data build "$D" "$TMP/p" -o "$TMP/ds.old" --seed 1 --plans 4 --quiet
expect_exit 0 "$NS" data build "$D" "$TMP/q" -o "$TMP/ds.new" --seed 1 --plans 4 --quiet
points "data build" "$TMP/ds" "$TMP/ds.old" "$TMP/ds.new" "$NS" data info "$TMP/ds" -- \
    "$NS" data build "$D" "$TMP/q" -o "$TMP/ds" --seed 1 --plans 4 --quiet
rm_stale
# split
expect_exit 0 "$NS" split interpolation "$TMP/ds.old" -o "$TMP/sp.old" --seed 4 --pool-size 8
expect_exit 0 "$NS" split interpolation "$TMP/ds.new" -o "$TMP/sp.new" --seed 4 --pool-size 8
points split "$TMP/sp" "$TMP/sp.old" "$TMP/sp.new" "$NS" reference "$TMP/sp" --method identity -- \
    "$NS" split interpolation "$TMP/ds.new" -o "$TMP/sp" --seed 4 --pool-size 8
rm_stale
# train
T=(--epochs 2 --batch 16 --hidden 16 --quiet)
expect_exit 0 "$NS" train "$TMP/sp.new" -o "$TMP/w.old" --seed 1 "${T[@]}"
expect_exit 0 "$NS" train "$TMP/sp.new" -o "$TMP/w.new" --seed 2 "${T[@]}"
points train "$TMP/w" "$TMP/w.old" "$TMP/w.new" "$NS" eval "$TMP/sp.new" "$TMP/w" --latency 0 --no-acc --quiet -- \
    "$NS" train "$TMP/sp.new" -o "$TMP/w" --seed 2 "${T[@]}"
rm_stale
# learn (XGBoost, LSTM)
expect_exit 0 "$NS" gen ferry --seed 9 --cars 3 --locations 3 -o "$TMP/big.pddl"
for m in xgb lstm hwl; do
    L=(--model $m --rounds 5 --epochs 1 --hidden 8 --quiet)
    expect_exit 0 "$NS" learn "$D" "$TMP/p" -o "$TMP/$m.old" --seed 1 "${L[@]}"
    expect_exit 0 "$NS" learn "$D" "$TMP/q" -o "$TMP/$m.new" --seed 2 "${L[@]}"
    points "learn --model $m" "$TMP/$m" "$TMP/$m.old" "$TMP/$m.new" \
        plans_with "$TMP/$m" -- \
        "$NS" learn "$D" "$TMP/q" -o "$TMP/$m" --seed 2 "${L[@]}"
    rm_stale
done
# embed --cache (a cache of ds.old's texts, grown by ds.new's)
expect_exit 0 "$NS" embed "$TMP/ds.old" --model "$MODEL" --cache "$TMP/c.old" --quiet
cp -r "$TMP/c.old" "$TMP/c.new"
expect_exit 0 "$NS" embed "$TMP/ds.new" --model "$MODEL" --cache "$TMP/c.new" --quiet
cached() { # the cache loads and holds every text of ds.old (nothing computed)
    "$NS" embed "$TMP/ds.old" --model "$MODEL" --cache "$TMP/c" --json | grep '"computed": 0,'
}
points embed "$TMP/c" "$TMP/c.old" "$TMP/c.new" cached -- \
    "$NS" embed "$TMP/ds.new" --model "$MODEL" --cache "$TMP/c" --quiet
exit 0
