# shellcheck shell=bash
# Shared shell code of every experiment script: where the binary and the
# benchmarks are (absolute paths, so a script may cd anywhere), the nine
# EmbedPlan domains and their ACPBench datasets, feature building per encoder,
# one train + eval cell, JSON number extraction.
# Sourced, not run:   . "$(dirname "$0")/lib.sh"
#
# env read here:
#   BUILD (build), NS_BIN (NS_ROOT/BUILD/nextstate, built when missing), NEXTSTATE_BENCHMARKS
#   (NS_ROOT/../shared/benchmarks), PYTHON (/usr/bin/python3), OPENBLAS_NUM_THREADS (1: one cell
#   at a time uses one BLAS thread), SEED (1), LR (1e-3), PATIENCE (5), TL (10 s per problem),
#   EPOCHS, TRAIN_OPTS (extra `nextstate train` options)
#   and, for the EmbedPlan protocol scripts (ns_data, ns_embed, ns_features, ns_cell):
#   DATA       acp   — the ACPBench problems of each domain (BENCH/acpbench/<folder>),
#                      optimal-plan DAGs built once with `data build --time-limit $TL` into ACP_DATA
#              suite — experiments/suite_embedplan9.sh's datasets (ACPBench + generated problems,
#                      --successors) under SUITE, read only; commands that re-ground problems
#                      (`encode`) run from SUITE_CWD because their manifests hold relative paths
#   ACP_DATA (results/acp), SUITE (results/suite, built by experiments/suite_embedplan9.sh),
#   SUITE_CWD (the directory SUITE's manifests are relative to: SUITE/../..),
#   MODEL (all-MiniLM-L6-v2), MINILM_MAX_STATES (3000: text embedding runs ~11 prompts/s on one
#   core, so larger datasets get no MiniLM cell), EMB_ROOT (results/emb_$DATA: MiniLM embeddings
#   per domain).
set -u
NS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-build}
NS=$(realpath -m "${NS_BIN:-$NS_ROOT/$BUILD/nextstate}")
BENCH=$(realpath -m "${NEXTSTATE_BENCHMARKS:-$NS_ROOT/../shared/benchmarks}")
DATA=${DATA:-acp}
ACP_DATA=$(realpath -m "${ACP_DATA:-results/acp}")
if [ -z "${SUITE:-}" ]; then
    SUITE=results/suite
fi
SUITE=$(realpath -m "$SUITE")
SUITE_CWD=${SUITE_CWD:-$(realpath -m "$SUITE/../..")}
TL=${TL:-10}
MODEL=${MODEL:-all-MiniLM-L6-v2}
MINILM_MAX_STATES=${MINILM_MAX_STATES:-3000}
# numpy lives in the venv deps.sh makes (Debian's python3 may lack it)
if [ -z "${PYTHON:-}" ]; then
    PYTHON=/usr/bin/python3
    [ -x "$NS_ROOT/build/venv/bin/python" ] && PYTHON=$NS_ROOT/build/venv/bin/python
fi
SEED=${SEED:-1}
LR=${LR:-1e-3}
PATIENCE=${PATIENCE:-5}
TRAIN_OPTS=${TRAIN_OPTS:-}
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
[ -x "$NS" ] || make -s -C "$NS_ROOT" "${NS#"$NS_ROOT"/}" || exit 1
export NS_ROOT NS BENCH DATA ACP_DATA SUITE SUITE_CWD TL MODEL MINILM_MAX_STATES PYTHON SEED LR PATIENCE TRAIN_OPTS

# short name | ACPBench folder | suite folder
NS_DOMAIN_TABLE="blocksworld|blocksworld-4ops|blocksworld
depots|depots|depot
ferry|ferry|ferry
floortile|floor-tile|floortile
goldminer|gold-miner-typed|goldminer
grid|grid|grid
logistics|logistics-strips|logistics
rovers|rover|rovers
satellite|satellite|satellite"
NS_ALL_DOMAINS="blocksworld depots ferry floortile goldminer grid logistics rovers satellite"
export NS_DOMAIN_TABLE NS_ALL_DOMAINS

# The ACPBench folder of a domain (short name, or its suite folder name); other names pass through.
ns_acp_name() {
    local row
    row=$(grep -E "^$1[|]|[|]$1\$" <<<"$NS_DOMAIN_TABLE" | head -n 1)
    if [ -z "$row" ]; then echo "$1"; return 0; fi
    IFS='|' read -r _ row _ <<<"$row"
    echo "$row"
}

# The optimal-plan dataset of a domain's ACPBench problems in DIR, built when missing (log to LOG).
#   ns_acp_dataset DOMAIN DIR LOG
ns_acp_dataset() {
    local acp
    acp=$(ns_acp_name "$1")
    if [ ! -f "$2/manifest.json" ]; then
        mkdir -p "$(dirname "$2")"
        "$NS" data build "$BENCH/acpbench/$acp/domain.pddl" "$BENCH/acpbench/$acp" -o "$2" --time-limit "$TL" \
            --quiet 2>>"$3" >&2 || return 1
    fi
    echo "$2"
}

# The dataset folder of a domain (short name) under DATA; an ACPBench dataset is built when missing.
ns_data() {
    local row acp suite
    [ "$DATA" = acp ] || [ "$DATA" = suite ] || { echo "DATA must be acp or suite" >&2; return 30; }
    row=$(grep "^$1|" <<<"$NS_DOMAIN_TABLE") || { echo "unknown domain $1" >&2; return 1; }
    IFS='|' read -r _ acp suite <<<"$row"
    if [ "$DATA" = suite ]; then
        [ -f "$SUITE/$suite/data/manifest.json" ] || { echo "no suite dataset $SUITE/$suite/data (experiments/suite_embedplan9.sh builds it)" >&2; return 1; }
        echo "$SUITE/$suite/data"
        return 0
    fi
    ns_acp_dataset "$1" "$ACP_DATA/$acp/data" "$ACP_DATA/$acp/build.log"
}

# Where the dataset's problem paths resolve (for commands that re-ground problems).
ns_data_cwd() { case $1 in "$SUITE"/*) echo "$SUITE_CWD" ;; *) pwd ;; esac; }

# Number of states of a dataset.
ns_nstates() { "$NS" data info "$1" --json | grep -oE '"states": [0-9]+' | head -n 1 | sed 's/.*: //'; }

# The first number after "KEY": in a JSON file (empty when absent).
ns_num() { grep -oE "\"$1\": [-0-9.e+]+" "$2" 2>/dev/null | head -n 1 | sed -E 's/.*: //'; }

# Is the frozen text encoder's weight folder present?
ns_have_model() {
    [ -d "$1" ] || [ -d "${NEXTSTATE_MODELS:-/nonexistent}/$1" ] || [ -d "$HOME/.cache/nextstate/models/$1" ]
}

# The feature spec (CSR prefix or dense .npy) a featurize/encode output folder holds for WHAT (states|actions).
ns_spec() { if [ -f "$1/$2.npy" ]; then echo "$1/$2.npy"; else echo "$1/$2"; fi; }

# Where a domain's frozen text embeddings live (shared by every script and split of DATA).
ns_emb_dir() { echo "$(realpath -m "${EMB_ROOT:-results/emb_$DATA}")/$1/$MODEL"; }

# Frozen text embeddings of one dataset, shared by every split of it: prints "STATES.npy ACTIONS.npy".
# DIR holds the cache (never the dataset folder, which may be read-only).
ns_embed() { # DATASET DIR LOG
    local data=$1 dir=$2
    mkdir -p "$dir"
    if [ ! -f "$dir/states.npy" ] || [ ! -f "$dir/actions.npy" ]; then
        "$NS" embed "$data" --model "$MODEL" --cache "$dir/cache" --states-out "$dir/states.tmp.npy" \
            --actions-out "$dir/actions.tmp.npy" --quiet >>"$3" 2>&1 || return 1
        mv "$dir/states.tmp.npy" "$dir/states.npy" && mv "$dir/actions.tmp.npy" "$dir/actions.npy"
    fi
    echo "$dir/states.npy $dir/actions.npy"
}

# Features of one encoder for one dataset: prints "STATE_SPEC ACTION_SPEC" (builds them when missing).
#   ns_features KIND DATASET SPLIT DIR LOG [FITTED]
# KIND: builtin | bow | tfidf | char | random | context | wl.  Text kinds fit on SPLIT's training
# transitions (every dataset the split names: a pooled vocabulary) unless FITTED names the DIR of the same
# kind built for another dataset, whose featurizers are then reused (--vocab): how a target domain gets the
# source domain's columns.  Actions: the same text kind of the grounded action "(board c1 l1)" (context:
# TF-IDF actions; random: a random vector per action; wl: lifted WL actions; builtin: schema + argument
# one-hots).  MiniLM is not a kind here: ns_embed gives its per-dataset embeddings.
ns_features() {
    local kind=$1 data=$2 split=$3 dir=$4 log=$5 fitted=${6:-}
    case $kind in
    builtin) echo "builtin builtin"; return 0 ;;
    wl)
        mkdir -p "$dir"
        if [ ! -f "$dir/done" ]; then
            (cd "$(ns_data_cwd "$data")" && "$NS" encode "$data" --encoder wl --iterations 2 --statics in \
                --fit-on "$split" -o "$dir/states" --actions "$dir/actions") >>"$log" 2>&1 || return 1
            touch "$dir/done"
        fi
        echo "$dir/states $dir/actions"; return 0 ;;
    bow | tfidf | char | random | context) ;;
    *) echo "unknown encoder $kind" >&2; return 1 ;;
    esac
    local akind=$kind
    [ "$kind" = context ] && akind=tfidf
    local w sub k
    for w in states actions; do
        sub="$dir/$w" k=$kind
        [ $w = actions ] && k=$akind
        [ -f "$sub/features.json" ] && continue
        if [ "$k" = random ]; then
            "$NS" featurize "$data" --kind random --what "$w" --seed "$SEED" -o "$sub" --quiet >>"$log" 2>&1 || return 1
        elif [ -n "$fitted" ]; then
            "$NS" featurize "$data" --kind "$k" --vocab "$fitted/$w/featurizer.json" --what "$w" -o "$sub" --quiet >>"$log" 2>&1 || return 1
        else
            "$NS" featurize "$data" --kind "$k" --fit-on "$split" --what "$w" -o "$sub" --quiet >>"$log" 2>&1 || return 1
        fi
    done
    echo "$(ns_spec "$dir/states" states) $(ns_spec "$dir/actions" actions)"
}

# One train + eval cell: CELL/train-NAME.json, CELL/eval-NAME.json (skipped when the eval JSON exists).
#   ns_cell SPLIT CELL NAME STATE_SPEC ACTION_SPEC [extra train options…]
ns_cell() {
    local split=$1 cell=$2 name=$3 sf=$4 af=$5
    shift 5
    [ -s "$cell/eval-$name.json" ] && return 0
    mkdir -p "$cell"
    # shellcheck disable=SC2086
    "$NS" train "$split" -o "$cell/model-$name" --state-features "$sf" --action-features "$af" --lr "$LR" \
        --epochs "$EPOCHS" --patience "$PATIENCE" --seed "$SEED" $TRAIN_OPTS "$@" --json --quiet \
        >"$cell/train-$name.json" 2>>"$cell/log" || { rm -f "$cell/train-$name.json"; return 1; }
    "$NS" eval "$split" "$cell/model-$name" --seed "$SEED" --no-acc --latency 0 --json --quiet \
        >"$cell/eval-$name.tmp.json" 2>>"$cell/log" || return 1
    mv "$cell/eval-$name.tmp.json" "$cell/eval-$name.json"
}
export -f ns_emb_dir ns_acp_name ns_acp_dataset ns_data ns_data_cwd ns_nstates ns_num ns_have_model ns_spec ns_embed ns_features ns_cell
