#!/usr/bin/env bash
# Golden-vector check through the CLI (independent of tests/unit/test_wl.c):
# `nextstate encode --plans` rebuilds every seedA trajectory, encodes it with
# the paper's shipped vocabulary / FSF config, and NumPy compares each file
# with ../shared/benchmarks/seedA/encodings/{graphs,fsf}.  WL runs twice,
# statics in (the setting that reproduces the files) and statics out (the
# paper's inference setting, for the record).
#   dev/wl_golden.sh            prints one line per domain/split/setting
set -eu
cd "$(dirname "$0")/.."
BIN=${BUILD:-build}/nextstate
PY=${PYTHON:-python3}
SEED=${NEXTSTATE_BENCHMARKS:-../shared/benchmarks}/seedA
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for dom in blocks gripper logistics visitall-from-everywhere; do
    for split in train validation test-interpolation test-extrapolation; do
        [ -d "$SEED/encodings/graphs/$dom/$split" ] || continue
        args=("$SEED/pddl/$dom/domain.pddl" "$SEED/pddl/$dom/$split" "$SEED/plans/$dom/$split")
        for statics in in out; do
            "$BIN" encode --plans "${args[@]}" --encoder wl --vocab "$SEED/encodings/models/${dom}_wl.json" \
                --statics $statics -o "$TMP/wl-$statics" --quiet
        done
        "$BIN" encode --plans "${args[@]}" --encoder fsf --fsf-config "$SEED/encodings/models/${dom}_fsf_config.json" \
            -o "$TMP/fsf" --quiet
        "$PY" - "$SEED" "$dom" "$split" "$TMP" <<'EOF'
import glob, os, sys
import numpy as np
seed, dom, split, tmp = sys.argv[1:]
for kind, gold_dir, ours_dir in (("wl statics in ", "graphs", "wl-in"), ("wl statics out", "graphs", "wl-out"),
                                 ("fsf           ", "fsf", "fsf")):
    rows = bad_rows = bad_goals = files = 0
    for g in sorted(glob.glob(f"{seed}/encodings/{gold_dir}/{dom}/{split}/*.npy")):
        o = os.path.join(tmp, ours_dir, os.path.basename(g))
        a, b = np.load(g), np.load(o)
        files += 1
        if g.endswith("_goal.npy"):
            bad_goals += a.shape != b.shape or bool((a != b).any())
        else:
            rows += len(a)
            bad_rows += len(a) if a.shape != b.shape else int((a != b).any(axis=1).sum())
    print(f"{dom:26s} {split:19s} {kind}: {rows:5d} vectors, {bad_rows} mismatching, goal {bad_goals}")
EOF
        rm -rf "$TMP"/wl-in "$TMP"/wl-out "$TMP"/fsf
    done
done
