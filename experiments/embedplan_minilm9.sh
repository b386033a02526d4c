#!/usr/bin/env bash
# The EmbedPlan world model on the nine ACPBench domains with a frozen text
# encoder run in C (all-MiniLM-L6-v2 by default; scripts/fetch_models.sh
# fetches it) next to the built-in bag-of-literals encoder: Interpolation and
# Extrapolation Hit@5 per domain.  Writes OUT/results.json, OUT/results.md, OUT/hit5-PROTOCOL.png
# (and OUT/tokens.md: word pieces per state prompt, `nextstate embed stats`).
#   experiments/embedplan_minilm9.sh [OUT]
# env: MODEL (all-MiniLM-L6-v2; all-mpnet-base-v2), SEED (1), JOBS (2), TL (10 s per problem),
#      DOMAINS (ACPBench folders, default all nine)
#      VARIANTS  how prompts reach the encoder, any of
#                  paper        the exact EmbedPlan prompt with `embed`'s defaults: chunked (below) when a
#                               prompt exceeds max_seq_length, as `embed` says on stderr (default)
#                  truncate     the same prompt cut at max_seq_length (`embed --truncate`; the paper's code)
#                  state-first  the same blocks with CURRENT STATE first (`embed --layout state-first`)
#                  chunks       the paper prompt in windows of max_seq_length − 2 pieces, mean of their
#                               embeddings (`embed --chunks`)
#                trained with `train`'s default standardisation (auto: dense embeddings z-scored per
#                column on the training transitions); with "-z" (paper-z, …) `--standardize both`
#                forced, with "-raw" (paper-raw, …) `--standardize none` (the embeddings as they are)
#      SETTINGS  training settings "LR:EPOCHS …" (default "1e-3:60"; the paper's is 4e-5:200); with
#                several, each run's dev Hit@5 picks one per domain, protocol and encoder
#      TRAIN_OPTS  extra `nextstate train` options (e.g. --patience N for long settings)
#      BASELINE  builtin (default: the built-in literal encoder trained alongside) or none
#      TABLES_ONLY=1  only rewrite the tables from the runs in OUT (e.g. with the union of the
#                SETTINGS and VARIANTS of several invocations)
set -u
OUT=${1:-results/embedplan_minilm9}
MODEL=${MODEL:-all-MiniLM-L6-v2}
VARIANTS=${VARIANTS:-paper}
SETTINGS=${SETTINGS:-1e-3:60}
SEED=${SEED:-1}
TRAIN_OPTS=${TRAIN_OPTS:-}
BASELINE=${BASELINE:-builtin}
[ "$BASELINE" = none ] && BASELINE=""
JOBS=${JOBS:-2}
. "$(dirname "$0")/lib.sh"
mkdir -p "$OUT"
domains=${DOMAINS:-blocksworld-4ops depots ferry floor-tile gold-miner-typed grid logistics-strips rover satellite}
tag() { echo "lr$1-e$2"; } # LR EPOCHS
one_domain() { # ACPBench folder
    local d=$1 dir="$OUT/$1" v
    mkdir -p "$dir"
    ns_acp_dataset "$d" "$dir/data" "$dir/log" >/dev/null || return 1
    for v in $(for x in $VARIANTS; do x=${x%-z}; echo "${x%-raw}"; done | sort -u); do
        local flags=""
        case $v in
            paper) ;;
            truncate) flags="--truncate" ;;
            state-first) flags="--layout state-first" ;;
            chunks) flags="--chunks" ;;
            *) echo "unknown variant $v" >>"$dir/log"; return 1 ;;
        esac
        local t0 t1
        t0=$(date +%s.%N)
        # shellcheck disable=SC2086
        "$NS" embed "$dir/data" --model "$MODEL" $flags --states-out "$dir/states-$v.npy" --actions-out "$dir/actions.npy" --quiet >>"$dir/log" 2>&1 || return 1
        t1=$(date +%s.%N)
        awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }' >"$dir/embed-$v.seconds"
    done
    for proto in interpolation extrapolation; do
        "$NS" split "$proto" "$dir/data" -o "$dir/split-$proto" --pool-size 128 --seed "$SEED" 2>>"$dir/log" || return 1
        for setting in $SETTINGS; do
            local lr=${setting%%:*} ep=${setting#*:} t
            t=$(tag "$lr" "$ep")
            for enc in $BASELINE $VARIANTS; do
                local sf=builtin af=builtin z=none
                local base=${enc%-z}
                base=${base%-raw}
                [ "$enc" = builtin ] || { sf="$dir/states-$base.npy"; af="$dir/actions.npy"; z=auto; }
                [ "$enc" = "${enc%-z}" ] || z=both
                [ "$enc" = "${enc%-raw}" ] || z=none
                # shellcheck disable=SC2086
                "$NS" train "$dir/split-$proto" -o "$dir/model-$proto-$enc-$t" --state-features "$sf" --action-features "$af" \
                    --standardize "$z" --lr "$lr" --epochs "$ep" --seed "$SEED" $TRAIN_OPTS --json --quiet \
                    >"$dir/train-$proto-$enc-$t.json" 2>>"$dir/log" || return 1
                "$NS" eval "$dir/split-$proto" "$dir/model-$proto-$enc-$t" --seed "$SEED" --latency 0 --json --quiet \
                    >"$dir/eval-$proto-$enc-$t.json" 2>>"$dir/log" || return 1
            done
        done
    done
}
export -f one_domain tag; export NS BENCH OUT MODEL VARIANTS SETTINGS SEED TL BASELINE TRAIN_OPTS
start=$(date +%s)
[ "${TABLES_ONLY:-0}" = 1 ] ||
    echo $domains | tr ' ' '\n' | xargs -P "$JOBS" -I{} bash -c 'one_domain {} || echo "FAILED {} (see '"$OUT"'/{}/log)"'
wall=$(($(date +%s) - start))

# ---- tables ----
num() { ns_num "$@"; }
pct() { [ -n "$1" ] && awk -v x="$1" 'BEGIN { printf "%.1f", 100 * x }' || printf -- "–"; }
# the dev-picked setting of (domain, protocol, encoder): best dev Hit@5, the first on ties
pick() {
    local best="" bv=-1 s lr ep t v
    for s in $SETTINGS; do
        lr=${s%%:*} ep=${s#*:} t=$(tag "$lr" "$ep")
        v=$(num 'best_dev_hit@5' "$OUT/$1/train-$2-$3-$t.json")
        [ -n "$v" ] && awk -v a="$v" -v b="$bv" 'BEGIN { exit !(a > b) }' && { best=$t; bv=$v; }
    done
    echo "$best"
}
variants_all="builtin $VARIANTS"  # the tables always show the built-in column (– when not run)
{
    echo "# Word pieces per state prompt ($MODEL)"
    echo
    for v in $(for x in $VARIANTS; do x=${x%-z}; x=${x%-raw}; [ "$x" = truncate ] && x=paper; echo "$x"; done | sort -u); do
        [ "$v" = chunks ] && continue
        echo '```'
        "$NS" embed stats $(for d in $domains; do echo "$OUT/$d/data"; done) --model "$MODEL" --layout "$v"
        echo '```'
    done
} >"$OUT/tokens.md" 2>&1
json="$OUT/results.json"
{
    printf '{"model": "%s", "variants": "%s", "settings": "%s", "seed": %s, "wall_seconds": %s, "runs": [' "$MODEL" "$VARIANTS" "$SETTINGS" "$SEED" "$wall"
    first=1
    for d in $domains; do
        for proto in interpolation extrapolation; do
            for s in $SETTINGS; do
                t=$(tag "${s%%:*}" "${s#*:}")
                for enc in $variants_all; do
                    tr="$OUT/$d/train-$proto-$enc-$t.json" ev="$OUT/$d/eval-$proto-$enc-$t.json"
                    [ -s "$tr" ] && [ -s "$ev" ] || continue
                    [ $first -eq 1 ] || printf ','
                    first=0
                    printf '\n {"domain": "%s", "protocol": "%s", "encoder": "%s", "setting": "%s", "train": %s, "eval": %s}' \
                        "$d" "$proto" "$enc" "$t" "$(cat "$tr")" "$(tr -d '\n' <"$ev")"
                done
            done
        done
    done
    printf '\n]}\n'
} >"$json"
table() { # SETTING-TAG or "dev"
    local hdr="| domain |" sep="|---|" d proto enc t row
    for proto in interp extrap; do for enc in $variants_all; do hdr="$hdr $proto. $enc |"; sep="$sep---|"; done; done
    echo "$hdr"
    echo "$sep"
    for d in $domains; do
        row="| $d |"
        for proto in interpolation extrapolation; do
            for enc in $variants_all; do
                t=$1
                [ "$t" = dev ] && t=$(pick "$d" "$proto" "$enc")
                row="$row $(pct "$(num 'hit@5' "$OUT/$d/eval-$proto-$enc-$t.json")") |"
            done
        done
        echo "$row"
    done
    row="| mean |"
    for proto in interpolation extrapolation; do
        for enc in $variants_all; do
            vals=""
            for d in $domains; do
                t=$1
                [ "$t" = dev ] && t=$(pick "$d" "$proto" "$enc")
                vals="$vals $(num 'hit@5' "$OUT/$d/eval-$proto-$enc-$t.json")"
            done
            row="$row $(echo "$vals" | awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; if (NF) printf "%.1f", 100 * s / NF; else printf "–" }') |"
        done
    done
    echo "$row"
}
{
    echo "# EmbedPlan world model on the nine ACPBench domains: $MODEL vs built-in literals"
    echo
    echo "Hit@5 (%, random tie-breaking), pools of 128, seed $SEED, dev-selected epoch.  Variants: $VARIANTS"
    echo "(paper: the exact prompt, chunked when longer than the model's max_seq_length; truncate: cut there; state-first: CURRENT STATE block first;"
    echo "chunks: mean of the embeddings of consecutive max_seq_length − 2 word-piece windows)."
    for s in $SETTINGS; do
        echo
        echo "## lr ${s%%:*}, ${s#*:} epochs"
        echo
        table "$(tag "${s%%:*}" "${s#*:}")"
    done
    if [ "$(echo $SETTINGS | wc -w)" -gt 1 ]; then
        echo
        echo "## setting picked by dev Hit@5 (per domain, protocol, encoder)"
        echo
        table dev
    fi
    echo
    echo "Wall time $wall s (JOBS=$JOBS).  Paper (MPNet, Table 13): see ../shared/papers/001_2d0c90280ff9a76f.txt."
} >"$OUT/results.md"
cat "$OUT/results.md"
python3 "$(dirname "$0")/tables_lib.py" runs "$OUT/results.json" "$OUT/hit5" || true
