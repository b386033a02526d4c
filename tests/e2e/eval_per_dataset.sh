# `nextstate eval` on splits over several datasets reports each dataset's share
# of the list on its own ("per_dataset" in the JSON, a table otherwise): counts
# add up, worst-case Hit@5 (tie-free of chance) weighted by counts gives the
# overall one, and a dataset without test transitions (cross-domain's
# training domain) is null / "—".
. "$(dirname "$0")/lib.bash"
export OPENBLAS_NUM_THREADS=1
mkdir -p "$TMP/fp" "$TMP/bp"
for s in 1 2 3 4; do
    expect_exit 0 "$NS" gen ferry --seed $s --cars 3 -o "$TMP/fp/p$s.pddl"
    expect_exit 0 "$NS" gen blocksworld --seed $s --blocks 4 -o "$TMP/bp/p$s.pddl"
done
expect_exit 0 "$NS" data build domains/ferry/domain.pddl "$TMP/fp" -o "$TMP/ferry" --plans 4 --quiet
expect_exit 0 "$NS" data build domains/blocksworld/domain.pddl "$TMP/bp" -o "$TMP/blocks" --plans 4 --quiet
for p in multi-domain cross-domain; do
    expect_exit 0 "$NS" split $p "$TMP/ferry" "$TMP/blocks" -o "$TMP/s-$p" --pool-size 32 --seed 2
    expect_exit 0 "$NS" train "$TMP/s-$p" -o "$TMP/m-$p.ckpt" --epochs 3 --lr 2e-3 --warmup 1 --batch 64 --hidden 32 --quiet
    expect_exit 0 "$NS" eval "$TMP/s-$p" "$TMP/m-$p.ckpt" --json --latency 0 --no-acc --quiet
    /usr/bin/env python3 - "$TMP/out" "$p" <<'PY' || fail "$p: per_dataset: $(cat "$TMP/out")"
import json, sys
j = json.load(open(sys.argv[1]))
m, per = j["metrics"], j["per_dataset"]
assert len(per) == 2 and per[0]["domain"] == "ferry" and per[1]["domain"].startswith("blocksworld"), per
if sys.argv[2] == "cross-domain":
    assert per[0]["metrics"] is None and per[1]["metrics"]["n"] == m["n"], per
else:
    assert all(x["metrics"]["n"] > 0 for x in per), per
    assert sum(x["metrics"]["n"] for x in per) == m["n"]
    w = sum(x["metrics"]["hit@5_worst"] * x["metrics"]["n"] for x in per) / m["n"]
    assert abs(w - m["hit@5_worst"]) < 1e-9, (w, m["hit@5_worst"])
PY
done
expect_exit 0 "$NS" eval "$TMP/s-cross-domain" "$TMP/m-cross-domain.ckpt" --latency 0 --no-acc --quiet
grep -q "^per dataset" "$TMP/out" || fail "no per-dataset table: $(cat "$TMP/out")"
grep -qE "^  ferry +0  —" "$TMP/out" || fail "training domain not —: $(cat "$TMP/out")"
# one dataset: no breakdown
expect_exit 0 "$NS" split interpolation "$TMP/ferry" -o "$TMP/si" --pool-size 32 --seed 2
expect_exit 0 "$NS" train "$TMP/si" -o "$TMP/mi.ckpt" --epochs 1 --hidden 32 --quiet
expect_exit 0 "$NS" eval "$TMP/si" "$TMP/mi.ckpt" --json --latency 0 --quiet
grep -q '"per_dataset"' "$TMP/out" && fail "single dataset has a breakdown"
echo ok
