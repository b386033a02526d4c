#!/usr/bin/env bash
# Generalized planning from a handful of small solved problems, on generated
# data only: for each domain, generate small training and validation problems,
# solve them optimally (A*-LM-cut), learn a next-state model (default WL-XGB-
# delta, the first paper's best), then plan on problems several times larger
# with the paper's beam decoder and with nextstate's regret search, validate
# every plan, and compare plan lengths with GBFS-h^FF.
#
#   experiments/generalize.sh [DOMAIN…] (default: blocksworld gripper visitall logistics)
# With HWL=1 (the default) a learned WL heuristic (`learn --model hwl`, ridge
# regression of h*) is fitted on the same problems and planned with as well
# (GBFS on it, h^FF's helpful actions preferred): column hwl.
# Environment: OUT (results/generalize), CONFIG (wl-xgb-delta), TIME_LIMIT (10),
#   ALGOS ("beam search guided"), HWL (1), BUILD (build).  Writes OUT/results.md, OUT/lengths.png,
#   OUT/results.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-results/generalize}
CONFIG=${CONFIG:-wl-xgb-delta}
TL=${TIME_LIMIT:-10}
ALGOS=${ALGOS:-beam search guided}
HWL=${HWL:-1}
COLUMNS=$ALGOS
[ "$HWL" = 0 ] || COLUMNS="$COLUMNS hwl"
IFS=- read -r ENC MODEL MODE <<<"$CONFIG"
DOMAINS=("$@")
[ ${#DOMAINS[@]} -gt 0 ] || DOMAINS=(blocksworld gripper visitall logistics)
. experiments/lib.sh
rm -rf "$OUT"
mkdir -p "$OUT"

# gen options per domain: training sizes (one problem per entry), validation, test
sizes() {
    case $1 in
    blocksworld) TRAIN="--blocks=3 --blocks=3 --blocks=4 --blocks=4 --blocks=4 --blocks=5 --blocks=5 --blocks=5"
        VAL="--blocks=6 --blocks=6"; TEST="--blocks=10 --blocks=15 --blocks=20 --blocks=30" ;;
    gripper) TRAIN="--balls=2 --balls=3 --balls=4 --balls=5"; VAL="--balls=6 --balls=7"
        TEST="--balls=10 --balls=20 --balls=40 --balls=60" ;;
    visitall) TRAIN="--x=2,--y=3 --x=3,--y=3 --x=3,--y=4 --x=4,--y=4 --x=2,--y=5 --x=4,--y=3"
        VAL="--x=5,--y=5 --x=4,--y=6"; TEST="--x=8,--y=8 --x=10,--y=10 --x=12,--y=12 --x=16,--y=16" ;;
    logistics) TRAIN="--packages=1 --packages=2 --packages=2 --packages=3 --packages=3 --packages=4 --packages=4 --packages=5"
        VAL="--packages=5 --packages=6"
        TEST="--cities=3,--packages=8 --cities=4,--packages=12 --cities=5,--size=3,--packages=16 --cities=6,--size=3,--packages=24" ;;
    *) echo "generalize: no sizes for $1" >&2; exit 30 ;;
    esac
}

gen_set() { # domain dir seed0 specs…
    local d=$1 dir=$2 seed=$3; shift 3
    mkdir -p "$dir"
    local i=0
    for spec in "$@"; do
        # shellcheck disable=SC2086
        "$NS" gen "$d" --seed $((seed + i)) ${spec//[,=]/ } -o "$dir/p$(printf %02d $i).pddl"
        i=$((i + 1))
    done
}

echo "domain,problem,objects,algo,status,plan_length,seconds,valid,gbfs_length,gbfs_seconds" >"$OUT/results.csv"
for d in "${DOMAINS[@]}"; do
    sizes "$d"
    dom=domains/$d/domain.pddl
    # shellcheck disable=SC2086
    gen_set "$d" "$OUT/$d/train" 100 $TRAIN
    # shellcheck disable=SC2086
    gen_set "$d" "$OUT/$d/val" 200 $VAL
    # shellcheck disable=SC2086
    gen_set "$d" "$OUT/$d/test" 300 $TEST
    "$NS" learn "$dom" "$OUT/$d/train" --val "$OUT/$d/val" --encoder "$ENC" --model "$MODEL" --mode "$MODE" \
        --seed 13 -o "$OUT/$d/model" --json --quiet >"$OUT/$d/learn.json"
    [ "$HWL" = 0 ] || "$NS" learn "$dom" "$OUT/$d/train" --model hwl -o "$OUT/$d/hwl.model" --json --quiet \
        >"$OUT/$d/learn_hwl.json"
    for p in "$OUT/$d/test"/*.pddl; do
        stem=$(basename "$p" .pddl)
        "$NS" solve "$dom" "$p" --search gbfs --time-limit "$TL" --plan-file "$OUT/$d/$stem.gbfs.plan" --json \
            >"$OUT/$d/$stem.gbfs.json" 2>/dev/null || true
        g=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["plan_length"], j["seconds"])' \
            "$OUT/$d/$stem.gbfs.json")
        for algo in $COLUMNS; do
            if [ "$algo" = hwl ]; then model=$OUT/$d/hwl.model; opts=(); else model=$OUT/$d/model; opts=(--algo "$algo"); fi
            "$NS" plan --model "$model" "$dom" "$p" "${opts[@]}" --time-limit "$TL" \
                --plan-file "$OUT/$d/$stem.$algo.plan" --json >"$OUT/$d/$stem.$algo.json" 2>/dev/null || true
            valid=no
            if [ -f "$OUT/$d/$stem.$algo.plan" ] &&
                "$NS" validate "$dom" "$p" "$OUT/$d/$stem.$algo.plan" >/dev/null 2>&1; then valid=yes; fi
            python3 - "$OUT/$d/$stem.$algo.json" "$d" "$stem" "$valid" $g "$algo" >>"$OUT/results.csv" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]},{sys.argv[3]},{j['objects']},{sys.argv[7]},{j['status']},{j['plan_length']},"
      f"{j['seconds']:.3f},{sys.argv[4]},{sys.argv[5]},{float(sys.argv[6]):.3f}")
EOF
        done
    done
done

python3 - "$OUT" "$CONFIG" "$TL" $COLUMNS <<'EOF' | tee "$OUT/results.md"
import csv, json, os, sys
out, config, tl, algos = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows = list(csv.DictReader(open(os.path.join(out, "results.csv"))))
desc = {"beam": "the first paper's decoder (width 3)", "search": "regret best-first search over the model's costs",
        "restart": "beams widened until solved", "guided": "GBFS-hFF taking the model's choice among helpful actions",
        "hwl": "GBFS on a learned WL heuristic (ridge regression of h*), hFF's helpful actions preferred"}
print(f"## Learned planner ({config}) on generated problems larger than any seen in training")
print()
print(f"Trained on 4–8 small problems per domain (optimal plans by A*-LM-cut); {tl} s per problem; every plan checked")
print("by `nextstate validate`; plan lengths. " + "; ".join(f"{a} = {desc[a]}" for a in algos) + "; GBFS-hFF =")
print("nextstate's classical planner alone, for comparison.")
print()
print("| domain | test problem | objects | " + " | ".join(algos) + " | GBFS-hFF |")
print("|---|---|---|" + "---|" * len(algos) + "---|")
by = {}
for r in rows:
    by.setdefault((r["domain"], r["problem"]), {})[r["algo"]] = r
tot = {a: 0 for a in algos}
n = 0
for (d, p), a in by.items():
    n += 1
    def cell(x):
        r = a.get(x)
        if not r or r["valid"] != "yes":
            return "—"
        tot[x] += 1
        return f"{r['plan_length']} ({float(r['seconds']):.2f} s)"
    cells = [cell(x) for x in algos]
    any_row = next(iter(a.values()))
    g = any_row["gbfs_length"]
    gs = f"{g} ({float(any_row['gbfs_seconds']):.2f} s)" if g != "-1" else "—"
    print(f"| {d} | {p} | {any_row['objects']} | " + " | ".join(cells) + f" | {gs} |")
print()
print("Solved: " + ", ".join(f"{x} {tot[x]}/{n}" for x in algos) + ".")
for d in sorted({k[0] for k in by}):
    j = json.load(open(os.path.join(out, d, "learn.json")))
    print(f"- {d}: {j['train_problems']} training problems ({j['train_rows']} transitions), D = {j['dim']}, "
          f"trained in {j['seconds']:.1f} s", end="")
    h = os.path.join(out, d, "learn_hwl.json")
    if os.path.exists(h):
        h = json.load(open(h))
        print(f"; hwl: D = {h['dim']}, {h['train_rows']} states, h* RMSE {h['train_rmse']:.2f}, fitted in "
              f"{h['seconds']:.2f} s", end="")
    print()
EOF
python3 experiments/tables_lib.py lengths "$OUT/lengths.png" "$OUT/results.csv" || true
