# Edited dataset manifests and arrays (issue #14 D11, D12, fuzz finding
# fuzz_manifest crash-df5e38…): a shorter "object_types" or "objects" list
# was a heap overflow / leak on the error path; a state with a bit beyond
# its problem's atoms was accepted.  Each is exit 31 naming the file.
. "$(dirname "$0")/lib.bash"
D=domains/ferry/domain.pddl
mkdir -p "$TMP/p"
expect_exit 0 "$NS" gen ferry --seed 1 --cars 3 --locations 3 -o "$TMP/p/f1.pddl"
expect_exit 0 "$NS" data build "$D" "$TMP/p" -o "$TMP/ds" --quiet
for key in objects object_types; do
    rm -rf "$TMP/e" && cp -r "$TMP/ds" "$TMP/e"
    python3 - "$TMP/e/manifest.json" "$key" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["problems"][0][sys.argv[2]].pop()
json.dump(m, open(sys.argv[1], "w"))
PY
    expect_exit 31 "$NS" data info "$TMP/e"
    grep -q "manifest.json" "$TMP/err" || fail "$key: $(cat "$TMP/err")"
done
# the fuzzer's finding: object_types shorter than objects, with odd strings
rm -rf "$TMP/e" && cp -r "$TMP/ds" "$TMP/e"
python3 - "$TMP/e/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["problems"][0]["object_types"] = ["carl0)", "(at c1 l2)", "(at c2 l1)"]
json.dump(m, open(sys.argv[1], "w"))
PY
expect_exit 31 "$NS" data info "$TMP/e"
grep -q "object_types length differs" "$TMP/err" || fail "finding: $(cat "$TMP/err")"
# a bit beyond the atom count in states.npy (CRC in the manifest fixed up to match)
rm -rf "$TMP/e" && cp -r "$TMP/ds" "$TMP/e"
python3 - "$TMP/e" <<'PY'
import json, sys, zlib
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
na = m["problems"][0]["atoms"].__len__()
b = bytearray(open(d + "/states.npy", "rb").read())
hl = int.from_bytes(b[8:10], "little"); off = 10 + hl
if na % 64 == 0: sys.exit(3)
b[off + 7] |= 0x80  # bit 63 of the first state's first word
open(d + "/states.npy", "wb").write(b)
m["files"]["states.npy"]["crc32"] = zlib.crc32(bytes(b))
m["files"]["states.npy"]["bytes"] = len(b)
json.dump(m, open(d + "/manifest.json", "w"))
PY
expect_exit 31 "$NS" data info "$TMP/e"
grep -q "states.npy.*beyond its problem's atoms" "$TMP/err" || fail "bits: $(cat "$TMP/err")"
exit 0
