# Edited dataset manifests and arrays (issue #14 D11, D12, fuzz finding
# fuzz_manifest crash-df5e38…): manifest.json and split.json are sealed
# (a CRC-32 of their text), so any edit is refused; behind the seal (edits
# re-sealed below, as a forger would), a shorter "object_types" or
# "objects" list was a heap overflow / leak on the error path and a state
# with a bit beyond its problem's atoms was accepted.  Each is exit 31
# naming the file.
. "$(dirname "$0")/lib.bash"
# json.dump of an edited manifest, re-sealed (the seal: json.h)
SEAL='
def dump_sealed(m, path):
    import json, zlib
    body = json.dumps(m)[:-1].rstrip()
    open(path, "w").write(body + ", \"crc32\": \"%08x\"}\n" % zlib.crc32(body.encode()))
'

D=domains/ferry/domain.pddl
mkdir -p "$TMP/p"
expect_exit 0 "$NS" gen ferry --seed 1 --cars 3 --locations 3 -o "$TMP/p/f1.pddl"
expect_exit 0 "$NS" data build "$D" "$TMP/p" -o "$TMP/ds" --quiet
expect_exit 0 "$NS" split interpolation "$TMP/ds" -o "$TMP/sp" --seed 1
# D12: an edit that keeps the JSON valid, without re-sealing: refused
for f in ds/manifest.json sp/split.json; do
    rm -rf "$TMP/e" && cp -r "$TMP/$(dirname $f)" "$TMP/e"
    sed -i -E '0,/"seed": [0-9]+/s//"seed": 12345/' "$TMP/e/$(basename $f)"
    cmp -s "$TMP/e/$(basename $f)" "$TMP/$f" && fail "$f: the edit did not apply"
    if [ "$f" = ds/manifest.json ]; then expect_exit 31 "$NS" data info "$TMP/e"
    else expect_exit 31 "$NS" train "$TMP/e" -o "$TMP/x.ckpt" --epochs 0; fi
    grep -q "$(basename $f): checksum mismatch" "$TMP/err" || fail "$f edit: $(cat "$TMP/err")"
    # the seal removed (JSON re-written, version kept): refused too
    python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); m.pop("crc32"); json.dump(m, open(sys.argv[1], "w"))' "$TMP/e/$(basename $f)"
    if [ "$f" = ds/manifest.json ]; then expect_exit 31 "$NS" data info "$TMP/e"
    else expect_exit 31 "$NS" train "$TMP/e" -o "$TMP/x.ckpt" --epochs 0; fi
    grep -q "without its checksum" "$TMP/err" || fail "$f unsealed: $(cat "$TMP/err")"
done
# a version-1 manifest (written before seals) still loads
rm -rf "$TMP/e" && cp -r "$TMP/ds" "$TMP/e"
python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); m.pop("crc32"); m["version"] = 1; json.dump(m, open(sys.argv[1], "w"))' "$TMP/e/manifest.json"
expect_exit 0 "$NS" data info "$TMP/e"
for key in objects object_types; do
    rm -rf "$TMP/e" && cp -r "$TMP/ds" "$TMP/e"
    python3 -c "$SEAL"'
import json, sys
m = json.load(open(sys.argv[1]))
m["problems"][0][sys.argv[2]].pop()
dump_sealed(m, sys.argv[1])' "$TMP/e/manifest.json" "$key"
    expect_exit 31 "$NS" data info "$TMP/e"
    grep -q "manifest.json" "$TMP/err" || fail "$key: $(cat "$TMP/err")"
done
# the fuzzer's finding: object_types shorter than objects, with odd strings
rm -rf "$TMP/e" && cp -r "$TMP/ds" "$TMP/e"
python3 -c "$SEAL"'
import json, sys
m = json.load(open(sys.argv[1]))
m["problems"][0]["object_types"] = ["carl0)", "(at c1 l2)", "(at c2 l1)"]
dump_sealed(m, sys.argv[1])' "$TMP/e/manifest.json"
expect_exit 31 "$NS" data info "$TMP/e"
grep -q "object_types length differs" "$TMP/err" || fail "finding: $(cat "$TMP/err")"
# a bit beyond the atom count in states.npy (CRC in the manifest fixed up to match)
rm -rf "$TMP/e" && cp -r "$TMP/ds" "$TMP/e"
python3 -c "$SEAL"'
import json, sys, zlib
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
na = m["problems"][0]["atoms"].__len__()
b = bytearray(open(d + "/states.npy", "rb").read())
hl = int.from_bytes(b[8:10], "little"); off = 10 + hl
if na % 64 == 0: sys.exit(3)
b[off + 7] |= 0x80  # bit 63 of the first word of the first state
open(d + "/states.npy", "wb").write(b)
m["files"]["states.npy"]["crc32"] = zlib.crc32(bytes(b))
m["files"]["states.npy"]["bytes"] = len(b)
dump_sealed(m, d + "/manifest.json")' "$TMP/e"
expect_exit 31 "$NS" data info "$TMP/e"
grep -q "states.npy.*beyond its problem's atoms" "$TMP/err" || fail "bits: $(cat "$TMP/err")"
exit 0
