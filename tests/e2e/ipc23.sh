#!/usr/bin/env bash
# The IPC 2023 Learning Track runners end to end at a tiny size: experiments/
# ipc23.sh on a folder of the competition's shape (generated blocksworld), and
# the same as a Downward Lab experiment when the venv has lab.
. "$(dirname "$0")/lib.bash"
cd "$(dirname "$0")/../.."
nsbin=$(realpath -m "$NS")
# the IPC Learning Track runner on a folder of the competition's shape (generated blocksworld)
ipc="$TMP/ipc/blocksworld"
mkdir -p "$ipc/training/easy" "$ipc/testing/easy"
cp domains/blocksworld/domain.pddl "$ipc/"
for s in 1 2 3 4; do "$NS" gen blocksworld --seed $s --blocks $((3 + s)) -o "$ipc/training/easy/p0$s.pddl" || fail gen; done
for s in 1 2; do "$NS" gen blocksworld --seed $((10 + s)) --blocks 12 -o "$ipc/testing/easy/p0$s.pddl" || fail gen; done
printf '{"blocksworld/testing/easy/p01.pddl": 12}\n' >"$TMP/ipc/upper_bounds.json"
IPC="$TMP/ipc" OUT="$TMP/ipcout" LEVELS=easy PLANNERS="hwl gbfs hwl-xgb" TIME_LIMIT=20 SOLVE_LIMIT=10 NS_BIN="$nsbin" \
    bash experiments/ipc23.sh >"$TMP/ipc.log" 2>&1 || { cat "$TMP/ipc.log"; fail "ipc23.sh"; }
grep -q '^| blocksworld | easy | 2 |\( 2 | [0-9.]* | [0-9.]* |\)\{3\}$' "$TMP/ipcout/ipc23.md" || { cat "$TMP/ipc.log"; fail "ipc23.sh: table"; }
[ "$(grep -c '"solved": true' "$TMP/ipcout/blocksworld/runs.jsonl")" -eq 6 ] || fail "ipc23.sh: runs"
# XGBoost learned from its sample (every 10th training problem: p01 alone) beside hwl from all four
grep -q '"problems": 1,' "$TMP/ipcout/blocksworld/learn-xgb.json" || fail "ipc23.sh: xgb's sample"
[ "$(ls "$TMP/ipcout/blocksworld/train-xgb")" = p01.pddl ] || fail "ipc23.sh: xgb's sample folder"
head -1 "$TMP/ipcout/ipc23.csv" | grep -q '^domain,level,problem,planner,solved,cost,quality,agile,cpu$' || fail "ipc23.sh: csv"
# the same as a Downward Lab experiment (learn, build, start, parse, fetch, report), when the venv has lab
# and the binary is not sanitised (Lab's memory limit is an address-space limit, which ASan's shadow exceeds)
if grep -qa __asan_init "$nsbin"; then
    echo "ipc23_lab.sh not run: an ASan build cannot run under Lab's address-space limit"
elif [ -x build/venv/bin/python ] && build/venv/bin/python -c 'import lab' 2>/dev/null; then
    IPC="$TMP/ipc" OUT="$TMP/labout" LEVELS=easy PLANNERS="hwl gbfs nslama nslazy=--search,lazy" TIME_LIMIT=20 SOLVE_LIMIT=10 \
        NS_LAB_JOBS=1 NS_BIN="$nsbin" bash experiments/ipc23_lab.sh --all >"$TMP/lab.log" 2>&1 ||
        { cat "$TMP/lab.log"; fail "ipc23_lab.sh"; }
    grep -q '^| blocksworld | easy | 2 |\( 2 | [0-9.]* | [0-9.]* |\)\{4\}$' "$TMP/labout/ipc23-lab-eval/ipc23.md" ||
        { cat "$TMP/lab.log"; fail "ipc23_lab.sh: table"; }
    grep -qE ' [1-9][0-9]* runs with unexplained errors' "$TMP/lab.log" && { cat "$TMP/lab.log"; fail "ipc23_lab.sh: Lab saw errors"; }
fi
echo ok
