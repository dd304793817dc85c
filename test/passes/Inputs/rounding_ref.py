"""Inputs and an independent check of rounding.tl (tl.cast with a rounding).

  rounding_ref.py gen DIR     writes x.npy (f16), y.npy (bf16 bytes), z.npy
                              (f32): ties, NaNs, infinities, values beyond
                              every range, random values
  rounding_ref.py check DIR   checks the buffers tl-run saved as vm_*.npy

The reference decodes each input exactly (numpy, ml_dtypes), rounds it
with numpy (rint: to nearest, ties to even; floor; ceil; trunc), maps NaN
to 0 and clips to the integer type's range: what docs/langref.md states
for tl.cast. Outputs of fewer than 8 bits are unpacked from tl-run's
compact little-endian bytes.
"""
import os
import sys

import ml_dtypes
import numpy as np

# buffer: (source, bits, signed, rounding), as rounding.tl casts them
CASES = {
    "a": ("x", 4, True, "rn"), "b": ("x", 4, False, "rn"),
    "c": ("x", 2, True, "rn"), "d": ("x", 2, False, "rn"),
    "e": ("z", 8, True, "rn"), "f": ("z", 8, False, "rn"),
    "g": ("y", 4, False, "rn"), "h": ("y", 8, True, "rn"),
    "i": ("x", 4, True, "rm"), "j": ("x", 3, True, "rn"),
    "k": ("y", 16, True, "rp"), "m": ("z", 32, True, "rn"),
    "n": ("z", 16, False, "rm"), "o": ("z", 4, True, "rz"),
    "p": ("x", 1, False, "rp"),
}
ROUND = {"rn": np.rint, "rm": np.floor, "rp": np.ceil, "rz": np.trunc}


def gen(d):
    rng = np.random.default_rng(3)
    sp = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, -3.5, 7.5, -8.5, 8.5, -7.5,
          np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 65504, -65504, 1e-7,
          -1e-7, 0.49, -0.51, 255.5, 256.5, -128.5, 127.5, 1.0, -1.0, 2.0,
          -2.0, 3.0, 15.5, 16.5, -9.0, 0.75, -0.25, 1.25, 4.5]
    n = 256 - len(sp)
    r = rng.uniform(-20, 20, n) * np.where(rng.random(n) < 0.3, 16, 1)
    r = np.where(rng.random(n) < 0.4, np.round(r * 2) / 2, r)
    v = np.concatenate([np.array(sp), r])
    np.save(os.path.join(d, "x.npy"), v.astype(np.float16).reshape(8, 32))
    y = v.astype(ml_dtypes.bfloat16).view(np.uint16).view(np.uint8)
    np.save(os.path.join(d, "y.npy"), y)
    z = v.astype(np.float32)
    z[40:46] = [3e9, -3e9, 1e30, -1e30, 2147483647.0, 65535.5]
    np.save(os.path.join(d, "z.npy"), z.reshape(8, 32))


def source(d, name):
    a = np.load(os.path.join(d, name + ".npy"))
    if name == "y":
        a = a.view(np.uint16).view(ml_dtypes.bfloat16)
    return a.reshape(-1).astype(np.float64)


def unpack(data, bits, n):
    v = int.from_bytes(data.tobytes(), "little")
    return [(v >> (i * bits)) & ((1 << bits) - 1) for i in range(n)]


def check(d):
    bad = 0
    for buf, (src, bits, signed, mode) in sorted(CASES.items()):
        x = source(d, src)
        lo = -(1 << (bits - 1)) if signed else 0
        hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
        with np.errstate(invalid="ignore"):
            want = np.clip(np.nan_to_num(ROUND[mode](x), nan=0.0, posinf=hi,
                                         neginf=lo), lo, hi).astype(np.int64)
        got = np.load(os.path.join(d, "vm_" + buf + ".npy"))
        if bits < 8:
            codes = np.array(unpack(got, bits, x.size), dtype=np.int64)
            if signed:
                codes = np.where(codes >= 1 << (bits - 1), codes - (1 << bits),
                                 codes)
        else:
            codes = got.reshape(-1).astype(np.int64)
        wrong = np.nonzero(codes != want)[0]
        for i in wrong[:4]:
            print(f"{buf}: element {i} ({x[i]!r}): got {codes[i]}, "
                  f"expected {want[i]}")
        bad += len(wrong)
        print(f"{buf}: {'ok' if not len(wrong) else 'FAILED'} "
              f"({x.size} elements, {mode} to {'i' if signed else 'u'}{bits})")
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2]))
