#!/usr/bin/env bash
# Checks that every layer includes only itself and the layers below it:
#   util < core < data < encode < learn < eval, planner < cli
# (eval and planner are side by side: neither includes the other).
# Prints each offending include and exits 1 if there is one.
set -u
cd "$(dirname "$0")/.."
rank() { case $1 in util) echo 0;; core) echo 1;; data) echo 2;; encode) echo 3;; learn) echo 4;; eval|planner) echo 5;; cli) echo 6;; *) echo -1;; esac; }
bad=0
for f in src/*/*.c src/*/*.h include/nextstate/*/*.h; do
    layer=$(basename "$(dirname "$f")")
    r=$(rank "$layer")
    [ "$r" -ge 0 ] || continue
    while read -r inc; do
        l2=${inc%%/*}
        r2=$(rank "$l2")
        if [ "$r2" -gt "$r" ] || { [ "$r2" -eq "$r" ] && [ "$l2" != "$layer" ]; }; then
            echo "$f: includes nextstate/$inc (layer $l2 is not below $layer)"; bad=1
        fi
    done < <(sed -n 's/^#include "nextstate\/\([a-z]*\/[a-z_]*\.h\)".*/\1/p' "$f")
done
[ $bad -eq 0 ] && echo "layers: no include points up"
exit $bad
