# Reference methods through the CLI: lifted STRIPS is exact on generated
# ferry data (Hit@1 = 1, no disagreements) under interpolation and
# extrapolation, every method prints eval's table and JSON fields, runs are
# deterministic, and bad arguments exit 30.
. "$(dirname "$0")/lib.bash"
mkdir -p "$TMP/fp"
for s in 1 2 3 4 5 6; do
    expect_exit 0 "$NS" gen ferry --seed $s --cars 3 -o "$TMP/fp/p$s.pddl"
done
expect_exit 0 "$NS" data build domains/ferry/domain.pddl "$TMP/fp" -o "$TMP/ferry" --plans 8 --quiet
for p in interpolation extrapolation; do
    expect_exit 0 "$NS" split $p "$TMP/ferry" -o "$TMP/$p" --pool-size 128 --seed 1
    expect_exit 0 "$NS" reference "$TMP/$p" --method strips --json
    grep -q '"hit@1": 1[,.]' "$TMP/out" || fail "$p strips Hit@1 is not 1: $(cat "$TMP/out")"
    grep -q '"disagreements": 0' "$TMP/out" || fail "$p strips disagreements: $(cat "$TMP/out")"
    for m in identity offset-action offset-schema strips; do
        expect_exit 0 "$NS" reference "$TMP/$p" --method $m --json
        for k in '"hit@5"' '"hit@5_worst"' '"mrr"' '"pool_size"' "\"method\": \"$m\"" "\"protocol\": \"$p\""; do
            grep -q "$k" "$TMP/out" || fail "$m $p --json lacks $k: $(cat "$TMP/out")"
        done
        cp "$TMP/out" "$TMP/a"
        expect_exit 0 "$NS" reference "$TMP/$p" --method $m --json
        sed 's/"seconds": [0-9.e-]*//' "$TMP/a" >"$TMP/a1"; sed 's/"seconds": [0-9.e-]*//' "$TMP/out" >"$TMP/a2"
        cmp -s "$TMP/a1" "$TMP/a2" || fail "$m $p differs between two runs"
        expect_exit 0 "$NS" reference "$TMP/$p" --method $m
        grep -q "Hit (worst ties)" "$TMP/out" || fail "$m table: $(cat "$TMP/out")"
    done
done
expect_exit 0 "$NS" reference "$TMP/interpolation" --method offset-action --on dev
expect_exit 30 "$NS" reference "$TMP/interpolation"
expect_exit 30 "$NS" reference "$TMP/interpolation" --method magic
expect_exit 30 "$NS" reference --method identity
expect_exit 32 "$NS" reference "$TMP/missing" --method identity
exit 0
