#!/usr/bin/env bash
# The nine EmbedPlan domains as datasets: every ACPBench problem of the domain
# (../shared/benchmarks/acpbench) plus generated problems sized for large
# optimal-plan DAGs, with every applicable transition of the DAG states
# (--successors, as the paper counts transitions).  One dataset per domain under OUT (default
# results/suite), built two domains at a time, the largest first.
#   experiments/suite_embedplan9.sh [OUT]
#   env: SUITE_SCALE  small (default: SUITE_SEEDS generated problems per domain, ~0.3 M transitions)
#                     or paper (the paper's scale, ~3 M transitions over the nine domains: per domain
#                     its own generator sizes and number of seeds, most of it satellite as in the paper)
#        SUITE_SEEDS  (small scale: generated problems per domain, default 4), SUITE_TIME (per problem, 10 s)
set -u
OUT=${1:-results/suite}
SCALE=${SUITE_SCALE:-small}
SEEDS=${SUITE_SEEDS:-4}
TL=${SUITE_TIME:-10}
. "$(dirname "$0")/lib.sh"
mkdir -p "$OUT"
# shipped domain | ACPBench folder | generator options (small) | options and seeds at the paper's scale
# (sizes by their optimal-plan DAGs only; the order is the paper scale's build order, largest first)
suite="satellite|satellite|--observations 6|--observations 8|12
ferry|ferry|--cars 9 --locations 2|--cars 12 --locations 2|8
floortile|floor-tile||--rows 3 --columns 3|30
logistics|logistics-strips|--packages 5 --cities 3|--packages 5 --cities 2 --size 3|30
rovers|rover|--objectives 4|--objectives 4 --goals 6|12
depot|depots|--crates 4|--crates 5|8
blocksworld|blocksworld-4ops|--blocks 8|--blocks 9|12
goldminer|gold-miner-typed|--rows 4 --cols 5|--rows 4 --cols 5|4
grid|grid||--x 5 --y 5 --keys 2|12"
case $SCALE in
small | paper) ;;
*) echo "suite_embedplan9: SUITE_SCALE is small or paper, not '$SCALE'" >&2; exit 2 ;;
esac
build_one() { # shipped acp opts paper-opts paper-seeds
    local d=$1 acp=$2 opts=$3 n=$SEEDS dir="$OUT/$1"
    [ "$SCALE" = paper ] && opts=$4 n=$5
    mkdir -p "$dir/problems"
    if [ -d "$BENCH/acpbench/$acp" ]; then
        for p in "$BENCH/acpbench/$acp"/*.pddl; do
            [ "$(basename "$p")" = domain.pddl ] || cp "$p" "$dir/problems/acp-$(basename "$p")"
        done
    fi
    for s in $(seq 1 "$n"); do
        # shellcheck disable=SC2086
        "$NS" gen "$d" --seed "$s" $opts -o "$dir/problems/gen-$d-s$s.pddl" || return 1
    done
    "$NS" data build "$NS_ROOT/domains/$d/domain.pddl" "$dir/problems" -o "$dir/data" --time-limit "$TL" --successors --quiet 2>"$dir/build.log"
}
export -f build_one; export NS BENCH OUT SEEDS TL SCALE
echo "$suite" | xargs -P 2 -d '\n' -I{} bash -c 'IFS="|" read -r d a o po pn <<<"{}"; build_one "$d" "$a" "$o" "$po" "$pn" || echo "FAILED $d"'
