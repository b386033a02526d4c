#!/usr/bin/env bash
# EmbedPlan's per-domain tables (paper Tables 6, 13, 14, 21) on test sets large enough for their digits:
# for each of the nine domains a dataset of ACPBench + generated problems chosen *by size only* so that
#   - every problem has at least POOL states (full 128-state Extrapolation and Plan-Variant pools),
#   - any Extrapolation split (20 % of the problems held out, whichever the seed picks) has
#     >= MIN_TEST test transitions and >= MIN_TRAIN training transitions,
#   - Interpolation's training share (72 % of the transitions) is >= MIN_TRAIN;
# then, per protocol (Interpolation, Plan-Variant, Extrapolation), encoder and seed (the seed picks the
# split, the pools and the training run), `train --steps STEPS` (the epoch with the best dev Hit@5 kept;
# 4-layer heads for Plan-Variant, as the paper's code) and `eval`.  The tables give Hit@1 / Hit@5 mean ± SE
# over the seeds with chance@5 (k / pool size, over the actual pools) and the feature ceiling@5 beside
# them, the test and training sizes, and the plan-level numbers (Table 21).
#   experiments/embedplan_tables.sh [OUT]          (default results/embedplan_tables)
# Every step is cached in OUT (datasets, splits, features, one eval JSON per cell): a killed run resumes
# where it stopped, and a run with other ENCODERS/PROTOCOLS/SEEDS adds cells to the same tables.
# env: DOMAINS    (the nine: blocksworld depots ferry floortile goldminer grid logistics rovers satellite)
#      PROTOCOLS  ("interpolation plan-variant extrapolation")
#      ENCODERS   ("builtin wl bow tfidf char random context"; also minilm, mpnet: frozen text encoders,
#                 run only on datasets of at most TEXT_MAX_STATES states, 25000 (all nine domains) — the
#                 C encoder embeds ~20–30 MiniLM prompts/s per core on AMX tiles, ~3–5 without — and
#                 the tables say which)
#      import-NAME: embeddings computed by any other tool, read from IMPORT_DIR/NAME/DOMAIN (embeddings.npy
#                 with the rows of the texts `nextstate embed OUT/data/DOMAIN/data --texts-out T.jsonl` lists,
#                 T.jsonl beside it as index.jsonl); a domain without such a folder is skipped
#      SEEDS ("1 2 3"), STEPS (5000 AdamW steps, batch 128), LR (1e-3), POOL (128),
#      MIN_TRAIN (10000), MIN_TEST (1000), MAX_PT (5000: largest problem kept, in transitions),
#      MIN_PROBLEMS (10), MAX_CANDIDATES (300 generated problems tried per domain), DATA_BUDGET (600 s of
#      candidate builds per domain; a domain that falls short is marked so), TL (10 s per problem)
#      PLANS (64 optimal plans drawn per problem: Plan-Variant's held-out plans), EVALS (25 dev evaluations
#      per run), NO_ACP=1 (generated problems only), TABLES_ONLY=1 (only rewrite the tables from OUT)
#      Cells run in the nesting encoder > protocol > seed > domain: the first encoders finish everywhere first.
#      QUICK=1    the e2e test's size: ferry, generated problems only, small thresholds, pools of 16, 20 steps, literals and the random control
set -u
OUT=${1:-results/embedplan_tables}
if [ "${QUICK:-0}" = 1 ]; then
    DOMAINS=${DOMAINS:-ferry}
    ENCODERS=${ENCODERS:-builtin random}
    SEEDS=${SEEDS:-1 2}
    STEPS=${STEPS:-20}
    EVALS=${EVALS:-5}
    POOL=${POOL:-16}
    MIN_TRAIN=${MIN_TRAIN:-300}
    MIN_TEST=${MIN_TEST:-40}
    MAX_PT=${MAX_PT:-300}
    MIN_PROBLEMS=${MIN_PROBLEMS:-5}
    MAX_CANDIDATES=${MAX_CANDIDATES:-30}
    PLANS=${PLANS:-16}
    NO_ACP=${NO_ACP:-1}
    QUIET=${QUIET:-1}
    QUICK_OPTS="blocksworld|--blocks 5;--blocks 6
ferry|--cars 4 --locations 3;--cars 3 --locations 3"
fi
DOMAINS=${DOMAINS:-blocksworld depots ferry floortile goldminer grid logistics rovers satellite}
PROTOCOLS=${PROTOCOLS:-interpolation plan-variant extrapolation}
ENCODERS=${ENCODERS:-builtin wl bow tfidf char random context}
SEEDS=${SEEDS:-1 2 3}
STEPS=${STEPS:-5000}
LR=${LR:-1e-3}
POOL=${POOL:-128}
MIN_TRAIN=${MIN_TRAIN:-10000}
MIN_TEST=${MIN_TEST:-1000}
MAX_PT=${MAX_PT:-5000}
MIN_PROBLEMS=${MIN_PROBLEMS:-10}
MAX_CANDIDATES=${MAX_CANDIDATES:-300}
DATA_BUDGET=${DATA_BUDGET:-600}
TEXT_MAX_STATES=${TEXT_MAX_STATES:-25000}
NO_ACP=${NO_ACP:-0}
PLANS=${PLANS:-64}
EVALS=${EVALS:-25}
TL=${TL:-10}
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
LOG="$OUT/log"

# short name | shipped domain | ACPBench folder | generator options, tried in turn for seeds 1, 2, …
# (sizes whose optimal-plan DAGs have a few hundred to a few thousand transitions)
table="blocksworld|blocksworld|blocksworld-4ops|--blocks 9;--blocks 8
depots|depot|depots|--crates 5;--crates 4
ferry|ferry|ferry|--cars 7 --locations 2;--cars 6 --locations 3
floortile|floortile|floor-tile|--rows 3 --columns 2
goldminer|goldminer|gold-miner-typed|--rows 4 --cols 5;--rows 6 --cols 4
grid|grid|grid|--x 5 --y 5 --keys 3 --locks 1;--x 5 --y 5 --keys 3 --locks 2
logistics|logistics|logistics-strips|--packages 4 --cities 3
rovers|rovers|rover|--objectives 4;--objectives 3
satellite|satellite|satellite|--observations 4;--observations 5"

# numbers of a one-problem dataset: "STATES TRANSITIONS" (empty when the build failed)
sizes() { "$NS" data info "$1" --json 2>/dev/null | grep -oE '"(states|transitions)": [0-9]+' | head -n 2 | sed 's/.*: //' | tr '\n' ' '; }

# Is the list of accepted sizes (one transitions count per line in FILE) enough?  Every Extrapolation
# split holds out ntest = round(0.2 E) problems (split.c's frac_count) and ndev = round(0.1 (E - ntest));
# the worst case for the test set is the ntest smallest problems, for training the ntest + ndev largest.
enough() {
    sort -n "$1" | awk -v mp="$MIN_PROBLEMS" -v mtr="$MIN_TRAIN" -v mte="$MIN_TEST" '
        function fc(f, n,  k) { if (n < 2) return 0; k = int(f * n + 0.5); if (k < 1) k = 1; if (k > n - 1) k = n - 1; return k }
        { t[NR] = $1; tot += $1 }
        END {
            E = NR; if (E < mp) exit 1
            nt = fc(0.2, E); nd = E - nt >= 3 ? fc(0.1, E - nt) : 0
            small = 0; for (i = 1; i <= nt; i++) small += t[i]
            big = 0; for (i = E; i > E - nt - nd; i--) big += t[i]
            exit !(small >= mte && tot - big >= mtr && 0.72 * tot >= mtr)
        }'
}

# The dataset of one domain: OUT/data/NAME/{cand,problems,data,selection.tsv}
build_data() { # name shipped acp opts
    local name=$1 dom=$2 acp=$3 opts=$4 dir="$OUT/data/$1"
    [ -f "$dir/data/manifest.json" ] && return 0
    mkdir -p "$dir/cand" "$dir/problems"
    rm -f "$dir/problems"/*.pddl "$dir/short"
    local dpddl="$NS_ROOT/domains/$dom/domain.pddl" list="$dir/accepted.txt" sel="$dir/selection.tsv"
    : >"$list"
    printf 'problem\tsource\tstates\ttransitions\taccepted\n' >"$sel"
    local cands=() p
    if [ "$NO_ACP" != 1 ] && [ -d "$BENCH/acpbench/$acp" ]; then
        for p in "$BENCH/acpbench/$acp"/*.pddl; do
            [ "$(basename "$p")" = domain.pddl ] || cands+=("acp|$p")
        done
    fi
    local s o i n=0
    IFS=';' read -r -a optv <<<"$opts"
    for s in $(seq 1 "$MAX_CANDIDATES"); do
        for i in "${!optv[@]}"; do cands+=("gen|$i|$s"); done
    done
    declare -A seen=()
    local t0=$SECONDS
    for c in "${cands[@]}"; do
        [ $((SECONDS - t0)) -lt "$DATA_BUDGET" ] || break
        local src file key cdir sz st tr ok=no
        IFS='|' read -r src a b <<<"$c"
        if [ "$src" = acp ]; then
            key="acp-$(basename "$a" .pddl)"
            file=$a
        else
            [ $n -ge "$MAX_CANDIDATES" ] && break
            n=$((n + 1))
            key="gen-o$a-s$b"
            file="$dir/cand/$key.pddl"
            # shellcheck disable=SC2086
            [ -f "$file" ] || "$NS" gen "$dom" --seed "$b" ${optv[$a]} -o "$file" 2>>"$LOG" || continue
        fi
        cdir="$dir/cand/$key"
        if [ ! -f "$cdir/done" ]; then
            rm -rf "$cdir"
            "$NS" data build "$dpddl" "$file" -o "$cdir/data" --time-limit "$TL" --plans "$PLANS" --successors --quiet 2>>"$cdir.log" >&2
            mkdir -p "$cdir" && touch "$cdir/done"
        fi
        sz=$(sizes "$cdir/data")
        read -r st tr <<<"$sz"
        # the same problem under another seed (generators may repeat one): its body without the name line
        local h
        h=$(grep -v '(problem\|(define' "$file" | md5sum | cut -c1-16)
        if [ -n "${st:-}" ] && [ -z "${seen[$h]:-}" ] && [ "$st" -ge "$POOL" ] && [ "$tr" -le "$MAX_PT" ]; then
            ok=yes
            seen[$h]=1
            cp "$file" "$dir/problems/$key.pddl"
            echo "$tr" >>"$list"
        fi
        printf '%s\t%s\t%s\t%s\t%s\n' "$key" "$src" "${st:--}" "${tr:--}" "$ok" >>"$sel"
        enough "$list" && break
    done
    if ! enough "$list"; then
        echo "$name: the candidates fall short of the size targets (see $sel); using what was accepted" >>"$LOG"
        echo "short" >"$dir/short"
    fi
    "$NS" data build "$dpddl" "$dir/problems" -o "$dir/data.tmp" --time-limit "$TL" --plans "$PLANS" --successors --quiet 2>>"$dir/build.log" >&2 || return 1
    rm -rf "$dir/data" && mv "$dir/data.tmp" "$dir/data"
}

# `embed DATA OPTS…` into E/{states,actions}.npy once (kept: later cells reuse them); prints "STATES ACTIONS"
embed_rows() { # e data opts…
    local e=$1 data=$2
    shift 2
    mkdir -p "$e"
    if [ ! -f "$e/states.npy" ]; then
        "$NS" embed "$data" "$@" --states-out "$e/states.tmp.npy" --actions-out "$e/actions.tmp.npy" \
            --quiet >>"$LOG" 2>&1 || return 1
        mv "$e/actions.tmp.npy" "$e/actions.npy" && mv "$e/states.tmp.npy" "$e/states.npy"
    fi
    echo "$e/states.npy $e/actions.npy"
}

# Features of ENCODER for the split SP (cached in FEAT): prints "STATE_SPEC ACTION_SPEC", or "skip"
feat() { # enc data sp feat seed
    local enc=$1 data=$2 sp=$3 f=$4 seed=$5
    case $enc in
    builtin) echo "builtin builtin" ;;
    minilm | mpnet)
        local model=all-MiniLM-L6-v2
        [ "$enc" = mpnet ] && model=all-mpnet-base-v2
        ns_have_model "$model" || { echo skip; return 0; }
        [ "$(ns_nstates "$data")" -le "$TEXT_MAX_STATES" ] || { echo skip; return 0; }
        local e="$OUT/emb/$(basename "$(dirname "$data")")/$model"
        embed_rows "$e" "$data" --model "$model" --cache "$e/cache" ;;
    import-*) # embeddings made elsewhere: IMPORT_DIR/NAME/DOMAIN/{embeddings.npy,index.jsonl}
        local dom dir
        dom=$(basename "$(dirname "$data")") dir="${IMPORT_DIR:-}/${enc#import-}/$dom"
        [ -n "${IMPORT_DIR:-}" ] && [ -f "$dir/embeddings.npy" ] || { echo skip; return 0; }
        embed_rows "$OUT/emb/$dom/$enc" "$data" --import "$dir" ;;
    *) SEED=$seed ns_features "$enc" "$data" "$sp" "$f" "$LOG" ;;
    esac
}

# One cell: OUT/runs/DOMAIN/PROTOCOL-sSEED/{split,feat-ENC,train-ENC.json,eval-ENC.json}
cell() { # name proto seed enc
    local name=$1 proto=$2 seed=$3 enc=$4 data="$OUT/data/$1/data" c="$OUT/runs/$1/$2-s$3"
    [ -s "$c/eval-$enc.json" ] || [ -f "$c/skip-$enc" ] && return 0
    [ -f "$data/manifest.json" ] || return 1
    mkdir -p "$c"
    if [ ! -f "$c/split/split.json" ]; then
        "$NS" split "$proto" "$data" -o "$c/split.tmp" --pool-size "$POOL" --seed "$seed" >>"$LOG" 2>&1 || return 1
        rm -rf "$c/split" && mv "$c/split.tmp" "$c/split"
    fi
    local fs sf af layers=2
    fs=$(feat "$enc" "$data" "$c/split" "$c/feat-$enc" "$seed") || return 1
    if [ "$fs" = skip ]; then touch "$c/skip-$enc"; return 0; fi
    read -r sf af <<<"$fs"
    [ "$proto" = plan-variant ] && layers=4
    # dev Hit@5 about EVALS times over the run, however many epochs STEPS makes on this split
    local ntrain every
    ntrain=$(grep -oE '"train": [0-9]+' "$c/split/split.json" | tail -n 1 | sed 's/.*: //')
    every=$(awk -v n="$ntrain" -v s="$STEPS" -v k="$EVALS" 'BEGIN { b = int((n + 127) / 128); if (b < 1) b = 1;
        e = int((s + b - 1) / b); v = int(e / k); print v < 1 ? 1 : v }')
    "$NS" train "$c/split" -o "$c/model-$enc" --state-features "$sf" --action-features "$af" --layers "$layers" \
        --lr "$LR" --steps "$STEPS" --eval-every "$every" --seed "$seed" --json --quiet >"$c/train-$enc.json" 2>>"$LOG" ||
        { rm -f "$c/train-$enc.json"; return 1; }
    "$NS" eval "$c/split" "$c/model-$enc" --seed "$seed" --no-acc --latency 0 --json --quiet \
        >"$c/eval-$enc.tmp.json" 2>>"$LOG" || return 1
    mv "$c/eval-$enc.tmp.json" "$c/eval-$enc.json"
    rm -f "$c/model-$enc"
}

start=$(date +%s)
if [ "${TABLES_ONLY:-0}" != 1 ]; then
    for d in $DOMAINS; do
        row=$(grep "^$d|" <<<"$table") || { echo "unknown domain $d" >&2; exit 2; }
        IFS='|' read -r name dom acp opts <<<"$row"
        q=$(grep "^$d|" <<<"${QUICK_OPTS:-}") && opts=${q#*|}
        t0=$(date +%s)
        build_data "$name" "$dom" "$acp" "$opts" || echo "FAILED data $name (see $LOG)"
        echo "data $name: $(sizes "$OUT/data/$name/data") states/transitions ($(($(date +%s) - t0)) s)"
    done
    for enc in $ENCODERS; do
        for proto in $PROTOCOLS; do
            for seed in $SEEDS; do
                for d in $DOMAINS; do
                    t0=$(date +%s) c="$OUT/runs/$d/$proto-s$seed"
                    took=cached # said as such: a whole-second clock may show a cached cell as 1 s
                    [ -s "$c/eval-$enc.json" ] || [ -f "$c/skip-$enc" ] || took=
                    cell "$d" "$proto" "$seed" "$enc" || { echo "FAILED $d $proto seed $seed $enc (see $LOG)"; continue; }
                    [ "${QUIET:-0}" = 1 ] || echo "$d $proto s$seed $enc: ${took:-$(($(date +%s) - t0)) s}"
                done
            done
        done
    done
fi
wall=$(($(date +%s) - start))
"${PLOT_PYTHON:-$PYTHON}" "$HERE/tables_lib.py" paper-tables "$OUT" "$DOMAINS" "$PROTOCOLS" "$ENCODERS" "$SEEDS" \
    "{\"steps\": $STEPS, \"lr\": $LR, \"pool\": $POOL, \"min_train\": $MIN_TRAIN, \"min_test\": $MIN_TEST, \"max_pt\": $MAX_PT, \"text_max_states\": $TEXT_MAX_STATES, \"wall_seconds\": $wall}"
