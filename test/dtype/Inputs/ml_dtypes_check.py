"""Cross-checks tl-dtype's host codec against ml_dtypes / numpy, an
independent implementation of the same formats.

Compared: the decode table of every code point (value, sign of zero,
NaN-ness) and encode of random in-range doubles (including exact
midpoints between neighbouring values, where ties-to-even decides).
Out-of-range encodes are not compared: TL saturates f8e4m3 where ml_dtypes
produces NaN, and maps NaN to +0 in formats without NaN where ml_dtypes
gives -0; docs/dtypes.md records both choices.

usage: ml_dtypes_check.py path/to/tl-dtype
"""
import math
import subprocess
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:
    sys.exit("ml_dtypes_check: the ml_dtypes module is required")

TOOL = sys.argv[1]

FLOATS = {
    "f8e4m3": ml_dtypes.float8_e4m3fn,
    "f8e5m2": ml_dtypes.float8_e5m2,
    "f6e3m2": ml_dtypes.float6_e3m2fn,
    "f6e2m3": ml_dtypes.float6_e2m3fn,
    "f4e2m1": ml_dtypes.float4_e2m1fn,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
}
INTS = {"i4": ml_dtypes.int4, "u4": ml_dtypes.uint4,
        "i2": ml_dtypes.int2, "u2": ml_dtypes.uint2, "i8": np.int8,
        "u8": np.uint8}
BITS = {"f8e4m3": 8, "f8e5m2": 8, "f6e3m2": 6, "f6e2m3": 6, "f4e2m1": 4,
        "f16": 16, "bf16": 16}


def run(args, stdin=None):
    return subprocess.run([TOOL] + args, input=stdin, capture_output=True,
                          text=True, check=True).stdout


def table(name):
    out = {}
    for line in run(["--table", name]).splitlines():
        code, value = line.split()
        out[int(code, 16)] = float(value)
    return out


def same(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


failures = 0


def fail(msg):
    global failures
    failures += 1
    if failures < 20:
        print("FAIL", msg)


def codes_of(mltype, bits, n):
    container = np.uint16 if bits == 16 else np.uint8
    with np.errstate(invalid="ignore"):
        return np.arange(n, dtype=container).view(mltype).astype(np.float64)


for name, mltype in FLOATS.items():
    bits = BITS[name]
    ours = table(name)
    ref = codes_of(mltype, bits, 1 << bits)
    for code in range(1 << bits):
        if not same(ours[code], float(ref[code])):
            fail(f"{name} decode 0x{code:x}: tl {ours[code]} "
                 f"ml_dtypes {ref[code]}")
    # encode: random values in range and midpoints of neighbours
    rng = np.random.default_rng(1234)
    finite = sorted({v for v in ours.values() if math.isfinite(v)})
    top = max(finite)
    xs = list(rng.uniform(-top, top, 3000))
    for a, b in zip(finite, finite[1:]):
        xs.append((a + b) / 2)
    xs += [x * 2.0 ** -k for x in xs[:200] for k in (3, 9)]
    xs = [x for x in xs if abs(x) <= top]
    got = [int(line, 16) for line in
           run(["--encode", name], " ".join(repr(float(x)) for x in xs)).split()]
    container = np.uint16 if bits == 16 else np.uint8
    want = np.array(xs, dtype=np.float64).astype(mltype).view(container)
    mask = (1 << bits) - 1
    for x, g, w in zip(xs, got, want):
        if g != (int(w) & mask):
            fail(f"{name} encode {x!r}: tl 0x{g:x} ml_dtypes 0x{int(w):x}")
    print(f"{name}: {1 << bits} codes, {len(xs)} encodes")

for name, mltype in INTS.items():
    ours = table(name)
    info = ml_dtypes.iinfo(mltype) if "int" in mltype.__name__ and \
        mltype not in (np.int8, np.uint8) else np.iinfo(mltype)
    values = sorted(ours.values())
    if values != [float(v) for v in range(int(info.min), int(info.max) + 1)]:
        fail(f"{name}: range {values[0]}..{values[-1]} vs "
             f"{info.min}..{info.max}")
    bits = int(name[1:])
    ref = codes_of(mltype, 8, 1 << bits)
    for code in range(1 << bits):
        if not same(ours[code], float(ref[code])):
            fail(f"{name} decode 0x{code:x}: tl {ours[code]} ml {ref[code]}")
    print(f"{name}: {1 << bits} codes")

print("failures:", failures)
sys.exit(1 if failures else 0)
