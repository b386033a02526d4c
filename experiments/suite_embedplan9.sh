#!/usr/bin/env bash
# The nine EmbedPlan domains as datasets: every ACPBench problem of the domain
# (../shared/benchmarks/acpbench) plus generated problems sized for large
# optimal-plan DAGs, with every applicable transition of the DAG states
# (--successors, as the paper counts transitions).  One dataset per domain under OUT (default
# results/suite), built two domains at a time.
#   experiments/suite_embedplan9.sh [OUT]      env: SUITE_SEEDS (default 4), SUITE_TIME (per problem, 10 s)
set -u
OUT=${1:-results/suite}
SEEDS=${SUITE_SEEDS:-4}
TL=${SUITE_TIME:-10}
. "$(dirname "$0")/lib.sh"
mkdir -p "$OUT"
# shipped domain | ACPBench folder | generator options
suite="blocksworld|blocksworld-4ops|--blocks 8
depot|depots|--crates 4
ferry|ferry|--cars 9 --locations 2
floortile|floor-tile|
goldminer|gold-miner-typed|--rows 4 --cols 5
grid|grid|
logistics|logistics-strips|--packages 5 --cities 3
rovers|rover|--objectives 4
satellite|satellite|--observations 6"
build_one() { # shipped acp opts
    local d=$1 acp=$2 opts=$3 dir="$OUT/$1"
    mkdir -p "$dir/problems"
    if [ -d "$BENCH/acpbench/$acp" ]; then
        for p in "$BENCH/acpbench/$acp"/*.pddl; do
            [ "$(basename "$p")" = domain.pddl ] || cp "$p" "$dir/problems/acp-$(basename "$p")"
        done
    fi
    for s in $(seq 1 "$SEEDS"); do
        # shellcheck disable=SC2086
        "$NS" gen "$d" --seed "$s" $opts -o "$dir/problems/gen-$d-s$s.pddl" || return 1
    done
    "$NS" data build "$NS_ROOT/domains/$d/domain.pddl" "$dir/problems" -o "$dir/data" --time-limit "$TL" --successors --quiet 2>"$dir/build.log"
}
export -f build_one; export NS BENCH OUT SEEDS TL
echo "$suite" | xargs -P 2 -d '\n' -I{} bash -c 'IFS="|" read -r d a o <<<"{}"; build_one "$d" "$a" "$o" || echo "FAILED $d"'
