#!/usr/bin/env bash
# Builds the nine-domain EmbedPlan suite (experiments/suite_embedplan9.sh) and
# reports transitions, unique states, wall time and peak memory.
# Goal (issues #3, #15): the paper's scale (~3 M transitions: SUITE_SCALE=paper) in <= 2 min,
# <= 4 GiB on 2 cores.  usage: [SUITE_SCALE=small|paper] bench/data_suite.sh
set -u
BUILD=${BUILD:-build}
OUT=${OUT:-results/suite}
rm -rf "$OUT"
/usr/bin/time -f "%e %M %U %S" -o /tmp/ns_suite_time bash experiments/suite_embedplan9.sh "$OUT"
read -r wall kb ucpu scpu </tmp/ns_suite_time
printf '%-12s %9s %12s %12s %8s\n' domain problems states transitions skipped
tot_s=0; tot_t=0
for d in "$OUT"/*/; do
    [ -f "$d/data/manifest.json" ] || { echo "$(basename "$d"): no dataset"; continue; }
    j=$("$BUILD/nextstate" data info "$d/data" --json)
    get() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1" <<<"$j"; } # the totals, not a problem's
    sk=$(grep -c 'left out' "$d/build.log" || true)
    printf '%-12s %9s %12s %12s %8s\n' "$(basename "$d")" "$(get problems)" "$(get states)" "$(get transitions)" "$sk"
    tot_s=$((tot_s + $(get states))); tot_t=$((tot_t + $(get transitions)))
done
printf '%-12s %9s %12s %12s\n' total "" "$tot_s" "$tot_t"
echo "scale ${SUITE_SCALE:-small}: wall ${wall} s, CPU $(echo "$ucpu + $scpu" | bc) s, peak memory of one build $((kb / 1024)) MiB (2 builds run at a time)"
