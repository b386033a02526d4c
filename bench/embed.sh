#!/usr/bin/env bash
# Side-by-side benchmark of `nextstate embed` against sentence-transformers
# (PyTorch, CPU) on the same machine, same texts, batch size and sequence
# length: 200 rendered state prompts of the nine EmbedPlan domains
# (../shared/benchmarks/acpbench), truncated at the model's max_seq_length.
# Prints the cosine similarity of every prompt's embedding to the reference
# (min / mean) and the throughput ratio (texts/s of nextstate over texts/s of
# sentence-transformers) for each thread setting.
#
# usage: bench/embed.sh [--model all-MiniLM-L6-v2|all-mpnet-base-v2] [--n 200] [--batch 32] [--quick]
#   --quick: 40 prompts, one thread setting each side.
# env: BUILD (default build), WORK (scratch folder, default /tmp/nextstate-bench-embed),
#      NEXTSTATE_MODELS (model cache), PYREF (sentence-transformers install, default ~/.cache/nextstate/pyref)
#
# Needs: the weights (scripts/fetch_models.sh), Debian's python3-torch and
# sentence-transformers installed without dependencies into $PYREF — both set
# up here on first use (apt-get + pip; nothing is fetched at run time).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
WORK=${WORK:-/tmp/nextstate-bench-embed}
PYREF=${PYREF:-${XDG_CACHE_HOME:-$HOME/.cache}/nextstate/pyref}
BENCH=${NEXTSTATE_BENCHMARKS:-../shared/benchmarks}/acpbench
MODEL=all-MiniLM-L6-v2
N=200
BATCH=32
QUICK=0
while [ $# -gt 0 ]; do
    case $1 in
        --model) MODEL=$2; shift ;;
        --n) N=$2; shift ;;
        --batch) BATCH=$2; shift ;;
        --quick) QUICK=1; N=40 ;;
        *) echo "bench/embed.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
[ -d "$BENCH" ] || { echo "bench/embed.sh: $BENCH not found" >&2; exit 77; }
BIN=$BUILD/nextstate
[ -x "$BIN" ] || make -s
models=${NEXTSTATE_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/nextstate/models}
[ "$MODEL" = all-mpnet-base-v2 ] && scripts/fetch_models.sh all-mpnet-base-v2 || scripts/fetch_models.sh all-MiniLM-L6-v2

# --- the reference side: Debian's torch + sentence-transformers (no deps)
PY=/usr/bin/python3
if ! $PY -c 'import torch, numpy, sklearn, scipy' 2>/dev/null; then
    echo "bench/embed.sh: installing python3-torch and friends (apt)" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        python3-torch python3-numpy python3-sklearn python3-scipy python3-tqdm python3-pip >/dev/null
fi
if ! PYTHONPATH=$PYREF $PY -c 'import sentence_transformers' 2>/dev/null; then
    echo "bench/embed.sh: installing sentence-transformers into $PYREF (pip, no deps)" >&2
    $PY -m pip install -q --no-deps --target "$PYREF" sentence-transformers==2.7.0 transformers==4.40.2 \
        tokenizers==0.19.1 huggingface_hub==0.23.4 safetensors==0.4.3 regex filelock fsspec packaging pyyaml \
        requests typing_extensions urllib3 idna certifi charset-normalizer
fi
export PYTHONPATH=$PYREF HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

# --- the prompts: datasets of the nine domains, rendered, N spread evenly
mkdir -p "$WORK"
exports=()
for d in blocksworld-4ops depots ferry floor-tile gold-miner-typed grid logistics-strips rover satellite; do
    if [ ! -s "$WORK/$d.jsonl" ]; then
        "$BIN" data build "$BENCH/$d/domain.pddl" "$BENCH/$d" -o "$WORK/ds-$d" --time-limit 10 --quiet
        "$BIN" data export "$WORK/ds-$d" --text -o "$WORK/$d.jsonl"
    fi
    exports+=("$WORK/$d.jsonl")
done
P=$WORK/prompts-$N.jsonl
$PY dev/bert_reference.py prompts "$P" "${exports[@]}" -n "$N" >/dev/null

# --- runs (interleaved, each setting ROUNDS times, best wall-clock kept; the
# CPU seconds of that run are printed too: on a machine shared with other jobs
# texts per CPU-second is the steadier measure)
M=$models/$MODEL
ROUNDS=${ROUNDS:-2}
declare -A ref_rate ref_cpu ours_rate ours_cpu
run_ref() { # THREADS OPENBLAS_THREADS
    local out line rate cpu
    out=$(OPENBLAS_NUM_THREADS=$2 $PY dev/bert_reference.py embed "$M" "$P" "$WORK/ref-$MODEL.npy" \
          --batch "$BATCH" --threads "$1" 2>/dev/null)
    line=$(grep '^reference:' <<<"$out")
    rate=$(sed -E 's/.*\(([0-9.]+) texts\/s.*/\1/' <<<"$line")
    cpu=$(sed -E 's/.*, ([0-9.]+) CPU s\).*/\1/' <<<"$line")
    echo "  sentence-transformers, torch threads $1, OpenBLAS threads $2: $rate texts/s, $cpu CPU s"
    if [ -z "${ref_rate[$1/$2]:-}" ] || $PY -c "import sys; sys.exit(not $rate > ${ref_rate[$1/$2]})"; then
        ref_rate[$1/$2]=$rate; ref_cpu[$1/$2]=$cpu
    fi
}
run_ours() { # OPENBLAS_THREADS
    local out rate cpu
    # --truncate: sentence-transformers cuts at max_seq_length; `embed`'s default would chunk (more work, other vectors)
    out=$(OPENBLAS_NUM_THREADS=$1 "$BIN" embed texts "$P" --model "$M" -o "$WORK/ours-$MODEL.npy" \
          --truncate --batch "$BATCH" --quiet --json)
    rate=$($PY -c 'import json,sys; print(json.loads(sys.stdin.read())["texts_per_second"])' <<<"$out")
    cpu=$($PY -c 'import json,sys; print(json.loads(sys.stdin.read())["cpu_seconds"])' <<<"$out")
    echo "  nextstate embed, OpenBLAS threads $1: $rate texts/s, $cpu CPU s"
    if [ -z "${ours_rate[$1]:-}" ] || $PY -c "import sys; sys.exit(not $rate > ${ours_rate[$1]})"; then
        ours_rate[$1]=$rate; ours_cpu[$1]=$cpu
    fi
}
echo "embed benchmark: $MODEL, $(wc -l <"$P") prompts, batch $BATCH, $(nproc) CPUs, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
[ $QUICK = 1 ] && ROUNDS=1
for r in $(seq "$ROUNDS"); do
    run_ref 2 2
    run_ours 1
    if [ $QUICK = 0 ]; then
        run_ref 1 1
        run_ours 2
    fi
done
$PY dev/bert_reference.py compare "$WORK/ref-$MODEL.npy" "$WORK/ours-$MODEL.npy" --min 0.9999 | sed 's/^/  /'
n=$(wc -l <"$P")
echo "  best of $ROUNDS, texts/s (wall) and texts per CPU-second:"
for k in "${!ref_rate[@]}"; do
    echo "    sentence-transformers $k (torch/OpenBLAS threads): ${ref_rate[$k]} /s, $($PY -c "print('%.2f' % ($n / ${ref_cpu[$k]}))") per CPU-s"
done
for k in "${!ours_rate[@]}"; do
    echo "    nextstate (OpenBLAS threads $k): ${ours_rate[$k]} /s, $($PY -c "print('%.2f' % ($n / ${ours_cpu[$k]}))") per CPU-s"
done
best() { local m=0 v; for v in "$@"; do m=$($PY -c "print(max($m, $v))"); done; echo "$m"; }
br=$(best "${ref_rate[@]}"); bo=$(best "${ours_rate[@]}")
echo "  throughput ratio, best nextstate / best sentence-transformers (wall): $($PY -c "print('%.2fx' % ($bo / $br))")"
echo "  ratio at torch.set_num_threads(2) vs nextstate with 1 BLAS thread (wall): $($PY -c "print('%.2fx' % (${ours_rate[1]} / ${ref_rate[2/2]}))")"
echo "  ratio per CPU-second, same settings: $($PY -c "print('%.2fx' % (${ref_cpu[2/2]} / ${ours_cpu[1]}))")"
