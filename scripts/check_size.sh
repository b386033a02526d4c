#!/bin/sh
# check_size.sh — the size rules of issue #13 ("thin CLI"): a file of
# src/cli/ is at most 250 lines, and a function of src/ at most 150.  A
# function runs from a line at column 0 that starts a definition (a name and
# a "(", the body's "{" coming before any ";") to the next line that is
# exactly "}".  A longer function is allowed when the line just above its
# first line is a comment containing "long function:" and why.
# Prints every offender and exits 1; silent and 0 when all is well.
# Usage: scripts/check_size.sh [ROOT]   (default: the repository root)
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
MAX_CLI=250 MAX_FN=150
status=0
for f in "$ROOT"/src/cli/*.c; do
    [ -f "$f" ] || continue
    n=$(wc -l <"$f")
    if [ "$n" -gt "$MAX_CLI" ]; then
        echo "${f#"$ROOT"/}: $n lines (a CLI file may have $MAX_CLI)"
        status=1
    fi
done
out=$(find "$ROOT/src" -name '*.c' | sort | while read -r f; do
    awk -v max="$MAX_FN" -v file="${f#"$ROOT"/}" '
        function comment(s) { return s ~ /^[ \t]*(\/\*|\*|\/\/)/ || s ~ /\*\/[ \t]*$/ }
        start == 0 && /^[A-Za-z_]/ && /\(/ && !/;[ \t]*$/ && !/=/ && !/^(typedef|struct|enum|union)[ \t]/ {
            start = NR; above = prev; name = $0; open = 0
        }
        start && !open && NR > start && /;[ \t]*$/ && !/\{/ { start = 0 }
        start && !open && /\{[ \t]*$/ { open = 1 }
        start && open && /^}$/ {
            len = NR - start + 1
            if (len > max && !(comment(above) && above ~ /long function:/)) {
                sub(/[ \t]*\{[ \t]*$/, "", name)
                printf "%s:%d: %d lines (a function may have %d): %s\n", file, start, len, max, name
            }
            start = 0
        }
        { prev = $0 }
    ' "$f"
done)
if [ -n "$out" ]; then
    echo "$out"
    status=1
fi
exit $status
