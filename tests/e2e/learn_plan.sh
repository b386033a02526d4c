# Learned planning through the CLI: learn next-state models (XGBoost and a
# small LSTM) on generated blocksworld problems, plan on larger ones with every
# algorithm, validate the plans, and give clear errors for bad model files.
. "$(dirname "$0")/lib.bash"
export OPENBLAS_NUM_THREADS=1
D=domains/blocksworld/domain.pddl
mkdir -p "$TMP/train" "$TMP/val" "$TMP/test"
for s in 1 2 3 4 5 6; do expect_exit 0 "$NS" gen blocksworld --seed $s --blocks $((3 + s % 3)) -o "$TMP/train/p$s.pddl"; done
for s in 7 8; do expect_exit 0 "$NS" gen blocksworld --seed $s --blocks 6 -o "$TMP/val/p$s.pddl"; done
for s in 9 10; do expect_exit 0 "$NS" gen blocksworld --seed $s --blocks 12 -o "$TMP/test/p$s.pddl"; done

expect_exit 0 "$NS" learn "$D" "$TMP/train" --val "$TMP/val" --model xgb --mode delta -o "$TMP/x.model" --json
grep -q '"model": "xgb", "mode": "delta", "encoder": "wl"' "$TMP/out" || fail "learn --json: $(cat "$TMP/out")"
expect_exit 0 "$NS" learn "$D" "$TMP/train" --val "$TMP/val" --model lstm --hidden 16 --epochs 20 -o "$TMP/l.model" --quiet
[ -s "$TMP/l.model" ] || fail "no LSTM model written"

for algo in search guided; do
    expect_exit 0 "$NS" plan --model "$TMP/x.model" "$D" "$TMP/test/p9.pddl" --algo $algo --time-limit 20 \
        --plan-file "$TMP/p9.$algo.plan"
    expect_exit 0 "$NS" validate "$D" "$TMP/test/p9.pddl" "$TMP/p9.$algo.plan"
done
# several problems: JSON lines, plans into a folder, each one valid
expect_exit 0 "$NS" plan --model "$TMP/x.model" "$D" "$TMP/test" --algo search --plan-dir "$TMP/plans" --json
[ "$(grep -c '"solved": true' "$TMP/out")" -eq 2 ] || fail "plan --json: $(cat "$TMP/out")"
for s in 9 10; do expect_exit 0 "$NS" validate "$D" "$TMP/test/p$s.pddl" "$TMP/plans/p$s.plan"; done
# the paper's beam decoder with the LSTM: solved (0) or gave up (11), never anything else
"$NS" plan --model "$TMP/l.model" "$D" "$TMP/test/p9.pddl" --plan-file "$TMP/b.plan" >/dev/null 2>&1
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 11 ] || fail "beam with the LSTM exited $rc"
[ $rc -ne 0 ] || expect_exit 0 "$NS" validate "$D" "$TMP/test/p9.pddl" "$TMP/b.plan"
expect_exit 33 "$NS" plan --model "$TMP/l.model" "$D" "$TMP/test/p9.pddl" --algo guided
grep -q "LSTM" "$TMP/err" || fail "guided with an LSTM: $(cat "$TMP/err")"

# the learned WL heuristic: learn, plan with both searches, validate; a
# heuristic file is told apart from a predictor by its own description
expect_exit 0 "$NS" learn "$D" "$TMP/train" --model hwl --lambda 0.5 -o "$TMP/h.model" --json --save-plans "$TMP/tp"
grep -q '"model": "hwl"' "$TMP/out" || fail "learn hwl --json: $(cat "$TMP/out")"
# the training searches stopped by their work budget, not the clock (none here: all solved optimally)
grep -q '"unsolved": 0, "satisficing": 0, "time_capped": 0,' "$TMP/out" || fail "learn hwl --json counts: $(cat "$TMP/out")"
grep -q '"choice_time_capped": 0,' "$TMP/out" || fail "learn hwl --json choice: $(cat "$TMP/out")"
# a budget of one step of work: every A*-LM-cut and GBFS search stops at once, none is a plan
expect_exit 31 "$NS" learn "$D" "$TMP/train" --solve-work 1 -o "$TMP/h0.model"
grep -q "no problem with a plan" "$TMP/err" || fail "learn --solve-work 1: $(cat "$TMP/err")"
expect_exit 30 "$NS" learn "$D" "$TMP/train" --solve-work -1 -o "$TMP/h0.model"
# the saved training plans, read back, give the same model without solving
[ "$(ls "$TMP/tp" | wc -l)" -eq "$(ls "$TMP/train"/*.pddl | wc -l)" ] || fail "--save-plans: $(ls "$TMP/tp")"
expect_exit 0 "$NS" learn "$D" "$TMP/train" --model hwl --lambda 0.5 -o "$TMP/h-again.model" --plans "$TMP/tp" --quiet
cmp -s "$TMP/h.model" "$TMP/h-again.model" || fail "learn --plans of --save-plans: another model"
for algo in search guided lama; do
    expect_exit 0 "$NS" plan --model "$TMP/h.model" "$D" "$TMP/test/p9.pddl" --algo $algo --time-limit 20 \
        --plan-file "$TMP/p9.h$algo.plan"
    expect_exit 0 "$NS" validate "$D" "$TMP/test/p9.pddl" "$TMP/p9.h$algo.plan"
done
expect_exit 0 "$NS" plan --model "$TMP/h.model" "$D" "$TMP/test" --json
[ "$(grep -c '"solved": true' "$TMP/out")" -eq 2 ] || fail "plan hwl --json: $(cat "$TMP/out")"
[ "$(grep -c '"classical": false' "$TMP/out")" -eq 2 ] || fail "plan hwl: the fallback's plans: $(cat "$TMP/out")"
for f in "--fallback 1" "--fallback -0.1" "--fallback x" "--memory-limit 0"; do
    expect_exit 30 "$NS" plan --model "$TMP/h.model" "$D" "$TMP/test/p9.pddl" $f
    grep -q -- "${f% *} expects a number" "$TMP/err" || fail "plan $f: $(cat "$TMP/err")"
done
# the XGBoost model's choice among the helpful actions of a search on h (--prefer)
expect_exit 0 "$NS" plan --model "$TMP/h.model" --prefer "$TMP/x.model" "$D" "$TMP/test/p9.pddl" --time-limit 20 \
    --plan-file "$TMP/p9.hx.plan" --json
grep -q '"algo": "hwl+model-preferred", "solved": true' "$TMP/out" || fail "plan --prefer: $(cat "$TMP/out")"
expect_exit 0 "$NS" validate "$D" "$TMP/test/p9.pddl" "$TMP/p9.hx.plan"
expect_exit 30 "$NS" plan --model "$TMP/x.model" --prefer "$TMP/x.model" "$D" "$TMP/test/p9.pddl"
grep -q "learned heuristic" "$TMP/err" || fail "plan --prefer without hwl: $(cat "$TMP/err")"
expect_exit 30 "$NS" plan --model "$TMP/h.model" --prefer "$TMP/x.model" --algo lama "$D" "$TMP/test/p9.pddl"
expect_exit 31 "$NS" plan --model "$TMP/h.model" --prefer "$TMP/h.model" "$D" "$TMP/test/p9.pddl"
head -c 200 "$TMP/h.model" >"$TMP/htrunc.model"
expect_exit 31 "$NS" plan --model "$TMP/htrunc.model" "$D" "$TMP/test/p9.pddl"
expect_exit 30 "$NS" learn "$D" "$TMP/train" --model hwl --lambda -1 -o "$TMP/h2.model"
for f in "--solve-time-limit 0" "--solve-memory-limit -5"; do  # (a negative one was no limit, or undefined)
    expect_exit 30 "$NS" learn "$D" "$TMP/train" $f -o "$TMP/h2.model"
    grep -q -- "${f% *} expects a number > 0" "$TMP/err" || fail "learn $f: $(cat "$TMP/err")"
done

# bad model files: truncated, corrupted, missing, another domain's
head -c 300 "$TMP/x.model" >"$TMP/trunc.model"
expect_exit 31 "$NS" plan --model "$TMP/trunc.model" "$D" "$TMP/test/p9.pddl"
grep -q "trunc.model" "$TMP/err" || fail "truncated model: $(cat "$TMP/err")"
cp "$TMP/l.model" "$TMP/bad.model"
printf 'XXXX' | dd of="$TMP/bad.model" bs=1 seek=2000 conv=notrunc 2>/dev/null
expect_exit 31 "$NS" plan --model "$TMP/bad.model" "$D" "$TMP/test/p9.pddl"
expect_exit 32 "$NS" plan --model "$TMP/none.model" "$D" "$TMP/test/p9.pddl"
G=domains/gripper/domain.pddl
mkdir -p "$TMP/g"
for s in 1 2 3; do expect_exit 0 "$NS" gen gripper --seed $s --balls 2 -o "$TMP/g/p$s.pddl"; done
expect_exit 0 "$NS" learn "$G" "$TMP/g" --model xgb -o "$TMP/g.model" --quiet
expect_exit 31 "$NS" plan --model "$TMP/g.model" "$D" "$TMP/test/p9.pddl"
grep -q "learned on domain 'gripper-strips', not 'blocksworld-4ops'" "$TMP/err" || fail "mismatched model: $(cat "$TMP/err")"
# usage errors
expect_exit 30 "$NS" plan "$D" "$TMP/test/p9.pddl"
expect_exit 30 "$NS" learn "$D" "$TMP/train"
expect_exit 30 "$NS" plan --model "$TMP/x.model" "$D" "$TMP/test/p9.pddl" --algo nope
echo ok
