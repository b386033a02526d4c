#!/usr/bin/env bash
# Every experiment script parses and takes its paths, binary and domain table
# from experiments/lib.sh (or hands over to a script that does); two of them
# run end to end at a tiny size from another working directory (the IPC
# runners: tests/e2e/ipc23.sh).
. "$(dirname "$0")/lib.bash"
cd "$(dirname "$0")/../.."
for s in experiments/*.sh; do
    bash -n "$s" || fail "$s does not parse"
    [ "$s" = experiments/lib.sh ] && continue
    grep -qE '^\. (experiments/lib\.sh|"\$\(dirname "\$0"\)/lib\.sh")$' "$s" ||
        grep -qE '^([A-Z_]+=[^ ]+ )*exec bash "\$\(dirname "\$0"\)/[a-z_]+\.sh"' "$s" ||
        fail "$s does not source experiments/lib.sh"
done
# the domain table: short names and suite folders map to ACPBench folders, other names pass through
got=$(bash -c '. experiments/lib.sh; echo $(ns_acp_name blocksworld) $(ns_acp_name depot) $(ns_acp_name rovers) $(ns_acp_name foo)')
[ "$got" = "blocksworld-4ops depots rover foo" ] || fail "ns_acp_name: $got"
root=$PWD
nsbin=$(realpath -m "$NS")
venvpath=$PATH
[ -x build/venv/bin/python3 ] && venvpath=$root/build/venv/bin:$PATH
(cd "$TMP" && PATH="$venvpath" EPOCHS=2 SEEDS="1 2 3" GEN_OPTS="--cars 3" PLANS=4 NS_BIN="$nsbin" \
    bash "$root/experiments/embedplan_interp.sh" ferry "$TMP/interp" >"$TMP/interp.log" 2>&1) ||
    { cat "$TMP/interp.log"; fail "embedplan_interp.sh"; }
grep -q '^| extrapolation | [0-9]' "$TMP/interp/results.md" || fail "embedplan_interp.sh: no extrapolation row"
# its plots, with the venv's matplotlib when there is one (else the script says it made none)
if (PATH="$venvpath" python3 -c 'import matplotlib') 2>/dev/null; then
    for f in hitk curves; do [ -s "$TMP/interp/$f.png" ] || fail "embedplan_interp.sh: no $f.png"; done
else
    grep -q 'matplotlib not installed: no plot' "$TMP/interp.log" || fail "embedplan_interp.sh: no plot note"
fi
DOMAINS=ferry SEEDS=1 EPOCHS=2 JOBS=1 NS_BIN="$nsbin" bash experiments/reference_table.sh "$TMP/ref" >"$TMP/ref.log" 2>&1 ||
    { cat "$TMP/ref.log"; fail "reference_table.sh"; }
grep -q 'left out for this subset' "$TMP/ref/results.md" || fail "reference_table.sh: subset notes"
grep -qi 'traceback' "$TMP/ref.log" && { cat "$TMP/ref.log"; fail "reference_table.sh: python error"; }
echo ok
