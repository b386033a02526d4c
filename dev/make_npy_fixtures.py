#!/usr/bin/env python3
"""Writes the reference .npy files in tests/fixtures/npy/ with numpy.save.

tests/unit/test_npy.c rebuilds the same arrays (element k of the flattened
array follows the formula of its dtype below), encodes them and compares the
bytes with these files, then reads every file back.  Run from the repository
root:  python3 dev/make_npy_fixtures.py   (needs numpy; the tests do not).
"""
import os
import sys

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "npy")


def values(dtype, shape):
    """The deterministic contents test_npy.c expects, in C order."""
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    k = np.arange(n, dtype=np.int64)
    if dtype == "|u1":
        a = ((k * 37 + 3) % 256).astype(np.uint8)
    elif dtype == "<i4":
        a = ((k - 5) * 1000003).astype("<i4")
    elif dtype == "<i8":
        a = ((k - 3) * 1099511627791).astype("<i8")
    elif dtype == "<u8":
        a = np.array([(int(i) * 0x9E3779B97F4A7C15) % 2**64 for i in k], dtype="<u8")
    elif dtype == "<f4":
        a = ((k.astype(np.float64) - 2.5) * 0.375).astype("<f4")
    elif dtype == "<f8":
        a = k.astype("<f8") * 0.1 - 1.0
    else:
        raise ValueError(dtype)
    return a.reshape(shape)


# (file name, dtype, shape): arrays nextstate writes byte-for-byte like numpy.
ENCODED = [
    ("u1_5.npy", "|u1", (5,)),
    ("u1_300.npy", "|u1", (300,)),
    ("i4_3x4.npy", "<i4", (3, 4)),
    ("i8_2x3x2.npy", "<i8", (2, 3, 2)),
    ("u8_4.npy", "<u8", (4,)),
    ("f4_2x3.npy", "<f4", (2, 3)),
    ("f4_2x0.npy", "<f4", (2, 0)),
    ("f8_scalar.npy", "<f8", ()),
    ("f8_1x2x1x3.npy", "<f8", (1, 2, 1, 3)),
]


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, dtype, shape in ENCODED:
        np.save(os.path.join(OUT, name), values(dtype, shape))
    # A header whose text (with numpy's spare room) is 117 bytes, so numpy
    # pads it with a whole 64; numpy.save refuses the (empty) array itself,
    # so write numpy's header alone.
    with open(os.path.join(OUT, "i4_pad64.npy"), "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": "<i4", "fortran_order": False,
                "shape": (0, 1000000000000, 10000000000, 10000000000)})
    # Other format versions (read only).
    with open(os.path.join(OUT, "i4_3x4_v2.npy"), "wb") as f:
        np.lib.format.write_array(f, values("<i4", (3, 4)), version=(2, 0))
    with open(os.path.join(OUT, "u1_5_v3.npy"), "wb") as f:
        np.lib.format.write_array(f, values("|u1", (5,)), version=(3, 0))
    # Valid .npy files that nextstate rejects as unsupported.
    np.save(os.path.join(OUT, "unsupported_be_i4.npy"), np.array([1, 2], dtype=">i4"))
    np.save(os.path.join(OUT, "unsupported_i2.npy"), np.array([1, 2, 3], dtype="<i2"))
    np.save(os.path.join(OUT, "unsupported_fortran.npy"),
            np.asfortranarray(values("<f8", (2, 3))))
    for name in sorted(os.listdir(OUT)):
        size = os.path.getsize(os.path.join(OUT, name))
        assert size < 2048, (name, size)
        print(f"{name}: {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
