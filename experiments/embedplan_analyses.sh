#!/usr/bin/env bash
# The EmbedPlan paper's analyses that need only what nextstate has (appendices F, H, J, N), on a few
# domains, per encoder: the built-in bag of literals and WL (fast), and a frozen text encoder (MiniLM in C,
# slow: only on datasets of at most TEXT_MAX_STATES states).
#   1. PCA of state embeddings by domain (F.1): `featurize pca` of every domain's text embeddings in one
#      space; and, per domain, of its WL features coloured by h* (a shared space needs one vocabulary,
#      which the literal and WL encoders do not have across domains).
#   2. Fact-order sensitivity of the text path (N): each state re-rendered with its facts shuffled
#      (`embed --shuffle-facts K`, K = 1 … SHUFFLES): d_order = 1 − cos(s, σ(s)) against d_action =
#      1 − cos(s, s′) of the dataset's transitions, and Hit@k when the test queries' states are shuffled
#      (`eval --query-features`; candidates canonical).  The literal and WL encoders read the fact set and
#      are order-invariant by construction.
#   3. Hit@1/5 by the query state's cost-to-go h* (H's question, asked of the trained model).
#   4. Misses (J): how many facts the top-1 state differs by from the true next state.
#   5. Latent distance alignment (H.1): every state s with h* >= 0 against its problem's goal g, d = 1 − cos(e_s,
#      e_g) vs h* = cost(s, g): Pearson, Spearman, and partial r with the length residualised out of both.
#      text: e_s = states.npy; e_g = `embed texts` of the goal prompt = a state prompt of the problem (from
#      `data export --text`) with its CURRENT STATE clauses replaced by the GOAL DESCRIPTION's (same template,
#      header, problem and goal blocks; chunked like the states when beyond the window); length = characters of
#      the state prompt (per-state word-piece counts are not exposed by the CLI: `embed tokenize` stops at
#      max_seq_length).  literals: 0/1 over the problem's fluent atoms, the goal's positive atoms as e_g.  WL:
#      `encode --fit --fit-goals --goals` (2 iterations, statics in; one vocabulary of all the dataset's state
#      and goal graphs), whose goal row is the paper's (a state holding exactly the positive goal atoms, no
#      statics); length = true atoms of s.  Inputs in OUT/DOMAIN/lda/,
#      pairs (state id, d, h*, length) in OUT/DOMAIN/lda/pairs-ENC.npy, the numbers computed with the tables.
# Writes OUT/results.json, OUT/results.md, OUT/pca-text.png, OUT/pca-wl.png, OUT/cost_to_go.png,
# OUT/misses.png, OUT/lda.png and per domain OUT/DOMAIN/ (splits, features, cells: train-ENC.json, eval-ENC.json).
#   experiments/embedplan_analyses.sh [OUT]          (default results/analyses)
# env: DOMAINS ("ferry blocksworld logistics"), PROTOCOLS ("interpolation extrapolation"),
#      ENCODERS ("builtin wl text"), MODEL (all-MiniLM-L6-v2; a folder works, e.g. the tests' tiny-bert),
#      TEXT_MAX_STATES (MINILM_MAX_STATES, 3000), SHUFFLES (4, the paper's reorderings), POOL (128),
#      EPOCHS (30), LR (1e-3), SEED (1), DATA_ROOT (empty: each domain's ACPBench problems, built with
#      `data build --time-limit $TL` into ACP_DATA = OUT/acp; else DATA_ROOT/DOMAIN/data),
#      PYTHON (/usr/bin/python3, needs numpy; plots need matplotlib), TABLES_ONLY=1 (only the tables).
# Resumable: a step whose output exists is skipped.  One command at a time.
set -u
OUT=$(realpath -m "${1:-results/analyses}")
export ACP_DATA=${ACP_DATA:-$OUT/acp}
. "$(dirname "$0")/lib.sh"
DOMAINS=${DOMAINS:-ferry blocksworld logistics}
PROTOCOLS=${PROTOCOLS:-interpolation extrapolation}
ENCODERS=${ENCODERS:-builtin wl text}
TEXT_MAX_STATES=${TEXT_MAX_STATES:-$MINILM_MAX_STATES}
SHUFFLES=${SHUFFLES:-4}
POOL=${POOL:-128}
EPOCHS=${EPOCHS:-30}
DATA_ROOT=${DATA_ROOT:-}
export EPOCHS
mkdir -p "$OUT"
if [ -z "$DATA_ROOT" ] && [ ! -d "$BENCH/acpbench" ]; then
    echo "benchmarks absent ($BENCH/acpbench): nothing to analyse (set DATA_ROOT to use other datasets)"
    exit 0
fi
mname=$(basename "$MODEL")
have_text=0
case " $ENCODERS " in *" text "*) ns_have_model "$MODEL" && have_text=1 ;; esac

data_of() { # DOMAIN → its dataset folder
    if [ -n "$DATA_ROOT" ]; then
        [ -f "$DATA_ROOT/$1/data/manifest.json" ] || { echo "no dataset $DATA_ROOT/$1/data" >&2; return 1; }
        echo "$DATA_ROOT/$1/data"
    else
        ns_acp_dataset "$1" "$ACP_DATA/$(ns_acp_name "$1")/data" "$OUT/$1.log"
    fi
}

eval_json() { # SPLIT MODEL OUT.json [eval options…]: eval --json into OUT.json when missing
    local split=$1 model=$2 out=$3
    shift 3
    [ -s "$out" ] && return 0
    "$NS" eval "$split" "$model" --seed "$SEED" --no-acc --latency 0 --json --quiet "$@" >"$out.tmp" &&
        mv "$out.tmp" "$out"
}

one_domain() { # DOMAIN
    local d=$1 dir="$OUT/$1" data nst proto enc feats emb k
    mkdir -p "$dir"
    local log="$dir/log"
    data=$(data_of "$d" 2>>"$log") || { echo "skip $d: no dataset (see $log)"; return 0; }
    nst=$(ns_nstates "$data") || return 1
    emb="$dir/emb-$mname"
    local text=0
    if [ $have_text = 1 ] && [ "$nst" -le "$TEXT_MAX_STATES" ]; then
        text=1
        ns_embed "$data" "$emb" "$log" >/dev/null || { echo "FAILED $d: embed (see $log)"; text=0; }
        for k in $(seq 1 "$SHUFFLES"); do
            [ $text = 1 ] && [ ! -s "$emb/states-shuf$k.npy" ] || continue
            "$NS" embed "$data" --model "$MODEL" --cache "$emb/cache" --shuffle-facts "$k" \
                --states-out "$emb/states-shuf$k.tmp.npy" --quiet >>"$log" 2>&1 &&
                mv "$emb/states-shuf$k.tmp.npy" "$emb/states-shuf$k.npy" || { echo "FAILED $d: shuffled embed"; text=0; }
        done
    elif [ $have_text = 1 ]; then
        echo "$d: $nst states > TEXT_MAX_STATES=$TEXT_MAX_STATES: no text encoder" | tee -a "$log"
    fi
    for proto in $PROTOCOLS; do
        local split="$dir/split-$proto" cell="$dir/$proto"
        [ -f "$split/split.json" ] ||
            "$NS" split "$proto" "$data" -o "$split" --pool-size "$POOL" --seed "$SEED" >>"$log" 2>&1 ||
            { echo "FAILED $d $proto: split (see $log)"; continue; }
        for enc in $ENCODERS; do
            case $enc in
            builtin) feats="builtin builtin" ;;
            wl) feats=$(ns_features wl "$data" "$split" "$dir/wl-$proto" "$log") || { echo "FAILED $d $proto wl"; continue; } ;;
            text)
                [ $text = 1 ] || continue
                feats="$emb/states.npy $emb/actions.npy" ;;
            *) echo "unknown encoder $enc" >&2; return 1 ;;
            esac
            # shellcheck disable=SC2086
            ns_cell "$split" "$cell" "$enc" $feats || { echo "FAILED $d $proto $enc (see $cell/log)"; continue; }
            if [ "$enc" = text ]; then
                for k in $(seq 1 "$SHUFFLES"); do
                    eval_json "$split" "$cell/model-text" "$cell/eval-text-shuf$k.json" \
                        --query-features "$emb/states-shuf$k.npy" 2>>"$cell/log" || echo "FAILED $d $proto shuffled eval $k"
                done
            fi
        done
        echo "done $d $proto"
    done
    # PCA of the WL features of this domain (its own space), coloured by h* in the plot
    if [ -d "$dir/wl-${PROTOCOLS%% *}" ] && [ ! -s "$dir/pca-wl.json" ]; then
        "$NS" featurize pca "$(ns_spec "$dir/wl-${PROTOCOLS%% *}" states)" -o "$dir/pca-wl.npy" --seed "$SEED" \
            --json >"$dir/pca-wl.json" 2>>"$log" || { rm -f "$dir/pca-wl.json"; echo "FAILED $d: WL PCA"; }
    fi
    lda_inputs "$d" "$data" "$text"
    echo "$data" >"$dir/dataset.path"
}

lda_inputs() { # DOMAIN DATASET TEXT(0|1): what step 5 (latent distance alignment) needs besides the dataset
    local dir="$OUT/$1" data=$2 text=$3 lda="$OUT/$1/lda"
    local log="$dir/log"
    mkdir -p "$lda"
    if [ "$text" = 1 ] && [ ! -s "$lda/goals-$mname.npy" ]; then
        # every state's prompt from `data export --text` → the state prompts' lengths and one goal prompt per problem
        (set -o pipefail; "$NS" data export "$data" --text --domains "$NS_ROOT/domains" 2>>"$log" |
            PYTHONPATH="$(dirname "$0")" "$PYTHON" -c 'import sys, tables_lib; tables_lib.lda_prompts(sys.stdin, sys.argv[1], sys.argv[2])' \
                "$data" "$lda" 2>>"$log") &&
            "$NS" embed texts "$lda/goal-prompts.jsonl" -o "$lda/goals-$mname.tmp.npy" --model "$MODEL" --quiet \
                >>"$log" 2>&1 && mv "$lda/goals-$mname.tmp.npy" "$lda/goals-$mname.npy" || echo "FAILED $1: LDA goal prompts"
    fi
    if [[ " $ENCODERS " == *" wl "* ]] && [ ! -s "$lda/wl-goals.npy" ]; then
        # one WL vocabulary fitted on every state and goal graph of the dataset (no training here: --fit --fit-goals,
        # else most goal colours fall outside a vocabulary of states); goal rows = `encode --goals`
        (cd "$(ns_data_cwd "$data")" && "$NS" encode "$data" --encoder wl --fit --fit-goals --iterations 2 \
            --statics in -o "$lda/wl-states.npy" --goals "$lda/wl-goals.tmp.npy" --quiet) >>"$log" 2>&1 &&
            mv "$lda/wl-goals.tmp.npy" "$lda/wl-goals.npy" || echo "FAILED $1: LDA WL goal rows"
    fi
}

t0=$(date +%s)
if [ "${TABLES_ONLY:-0}" != 1 ]; then
    for d in $DOMAINS; do one_domain "$d"; done
    # PCA of every domain's text embeddings in one space
    specs=() labels=()
    for d in $DOMAINS; do
        f="$OUT/$d/emb-$mname/states.npy"
        [ -s "$f" ] && specs+=("$f") && labels+=("$d")
    done
    if [ ${#specs[@]} -ge 1 ]; then
        "$NS" featurize pca "${specs[@]}" -o "$OUT/pca-text.npy" --seed "$SEED" --json >"$OUT/pca-text.json" 2>>"$OUT/log" ||
            { rm -f "$OUT/pca-text.json"; echo "FAILED text PCA (see $OUT/log)"; }
    fi
fi
wall=$(($(date +%s) - t0))

PYTHONPATH="$(dirname "$0")" "$PYTHON" - "$OUT" "$DOMAINS" "$PROTOCOLS" "$ENCODERS" "$SHUFFLES" "$mname" "$wall" \
    "$EPOCHS" "$LR" "$SEED" "$POOL" <<'PYEOF'
import json, os, sys
from tables_lib import load, pct, analyses_tables  # experiments/tables_lib.py
out, domains, protocols, encoders = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4].split()
cfg = dict(shuffles=int(sys.argv[5]), model=sys.argv[6], wall_seconds=int(sys.argv[7]), epochs=int(sys.argv[8]),
           lr=float(sys.argv[9]), seed=int(sys.argv[10]), pool=int(sys.argv[11]))
sys.exit(analyses_tables(out, domains, protocols, encoders, cfg))
PYEOF
