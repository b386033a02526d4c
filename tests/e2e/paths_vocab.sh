# A dataset's manifest names its domain and problems by absolute paths, so
# commands that re-ground them (`encode`) work from any working directory;
# `featurize --vocab F` takes the kind from the fitted featurizer (the same
# rows as the fit), and a --kind that contradicts it is a usage error.
. "$(dirname "$0")/lib.bash"
NSA=$(realpath "$NS")
mkdir -p "$TMP/p"
for s in 1 2 3; do
    expect_exit 0 "$NS" gen ferry --seed $s --cars 2 -o "$TMP/p/p$s.pddl"
done
# relative paths on the command line
cp -r domains/ferry "$TMP/dom"
( cd "$TMP" && expect_exit 0 "$NSA" data build dom/domain.pddl p -o ds --plans 2 --quiet ) || exit 1
grep -q "\"domain_file\": \"/" "$TMP/ds/manifest.json" || fail "relative domain path in the manifest"
grep -q "\"file\": \"/" "$TMP/ds/manifest.json" || fail "relative problem path in the manifest"
( cd / && expect_exit 0 "$NSA" encode "$TMP/ds" --encoder wl --fit -o "$TMP/wl.npy" ) || exit 1
[ -s "$TMP/wl.npy" ] || fail "encode from another directory wrote nothing"
# featurize: fit, then reuse the vocabulary without --kind
expect_exit 0 "$NS" split interpolation "$TMP/ds" -o "$TMP/sp" --seed 1
expect_exit 0 "$NS" featurize "$TMP/ds" --kind tfidf --fit-on "$TMP/sp" -o "$TMP/f1" --quiet
expect_exit 0 "$NS" featurize "$TMP/ds" --vocab "$TMP/f1/featurizer.json" -o "$TMP/f2" --quiet
for x in indptr indices values shape; do
    cmp -s "$TMP/f1/states_$x.npy" "$TMP/f2/states_$x.npy" || fail "--vocab rows differ from the fit ($x)"
done
expect_exit 30 "$NS" featurize "$TMP/ds" --vocab "$TMP/f1/featurizer.json" --kind char -o "$TMP/f3"
grep -q "holds a tfidf featurizer" "$TMP/err" || fail "kind mismatch message: $(cat "$TMP/err")"
expect_exit 30 "$NS" featurize "$TMP/ds" -o "$TMP/f4"
grep -q "expects DATASET_DIR --kind" "$TMP/err" || fail "missing --kind message: $(cat "$TMP/err")"
echo ok
