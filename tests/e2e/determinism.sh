# Same inputs, same seed, same bytes (issue #14, must-show 4): two runs of
# data build, split, train, learn (LSTM and XGBoost) and embed write files
# that `cmp` finds identical. Timings live only in --json output, never in
# a stored file.
. "$(dirname "$0")/lib.bash"
export OPENBLAS_NUM_THREADS=1
D=domains/ferry/domain.pddl
mkdir -p "$TMP/p"
for s in 1 2 3; do expect_exit 0 "$NS" gen ferry --seed $s --cars 3 --locations 3 -o "$TMP/p/f$s.pddl"; done
same() { # same WHAT A B: files (or every file of two folders) byte for byte
    local what=$1 a=$2 b=$3 f
    if [ -d "$a" ]; then
        [ "$(cd "$a" && find . -type f | sort)" = "$(cd "$b" && find . -type f | sort)" ] ||
            fail "$what: the two folders hold different files"
        for f in $(cd "$a" && find . -type f | sort); do
            cmp "$a/$f" "$b/$f" || fail "$what: $f differs between two runs with one seed"
        done
    else
        cmp "$a" "$b" || fail "$what differs between two runs with one seed"
    fi
}
for r in 1 2; do
    expect_exit 0 "$NS" data build "$D" "$TMP/p" -o "$TMP/ds$r" --seed 3 --plans 4 --quiet
done
same "data build" "$TMP/ds1" "$TMP/ds2"
for r in 1 2; do
    expect_exit 0 "$NS" split interpolation "$TMP/ds1" -o "$TMP/sp$r" --seed 5 --pool-size 16
done
same split "$TMP/sp1" "$TMP/sp2"
for r in 1 2; do
    expect_exit 0 "$NS" train "$TMP/sp1" -o "$TMP/w$r.ckpt" --seed 7 --epochs 3 --batch 16 --hidden 32 --quiet
done
same "train checkpoint" "$TMP/w1.ckpt" "$TMP/w2.ckpt"
for m in lstm xgb hwl; do
    x=(); [ $m = xgb ] && x=(--rounds 30)  # 30 rounds of 249 trees: 1000 take half a minute
    for r in 1 2; do
        expect_exit 0 "$NS" learn "$D" "$TMP/p" --model $m --seed 11 --epochs 2 --hidden 8 "${x[@]}" -o "$TMP/$m$r.model" --quiet
    done
    same "learn --model $m" "$TMP/${m}1.model" "$TMP/${m}2.model"
done
MODEL=tests/fixtures/bert/tiny-bert
for r in 1 2; do
    expect_exit 0 "$NS" embed "$TMP/ds1" --model "$MODEL" --cache "$TMP/cache$r" --states-out "$TMP/s$r.npy" --quiet
done
same "embed cache" "$TMP/cache1" "$TMP/cache2"
same "embed --states-out" "$TMP/s1.npy" "$TMP/s2.npy"
echo ok
