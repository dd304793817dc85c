"""NumPy reference of the row quantiser (kernels/quant_rows.tl).

  quant_rows.py gen X.npy M K QMAX SEED
      writes f16 [M, K] inputs: random rows at scales from 2^-8 to 2^8,
      a row of zeros, a row holding a NaN, a row holding an infinity, a
      row of half-integers up to QMAX (its scale is exactly 1, so every
      quotient is exact and the .5 ones are rounding ties), and for
      unsigned codes a nonnegative row
  quant_rows.py ref X.npy QTYPE QMAX Q.npy S.npy
      quantises X.npy as the kernel does into codes of QTYPE (i8, i4, i2,
      u8, u4, u2, ...) packed as tl-run stores them (code e at bits
      b e .. b e + b - 1 of a little-endian byte string, u1 array) in Q.npy
      and the scales (f32 [M, 1]) in S.npy

The arithmetic is the kernel's, operation for operation and in the same
precision, so the comparison is exact:
  amax  = max_j |x[i, j]|                  in f16 (exact; NaN if the row
                                           holds one, as tl.reduce max)
  scale = float32(amax) / float32(QMAX)    one f32 rounding (IEEE division)
  y     = float32(x) / scale               one f32 rounding
  q     = clip(rint(y), lo, hi)            rint: to nearest, ties to even;
                                           NaN gives 0 (0 / 0 for a row of
                                           zeros, x / NaN, inf / inf)
"""
import sys

import numpy as np


def gen(path, m, k, qmax, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((m, k)) * np.exp2(rng.integers(-8, 9, (m, 1)))
    special = [np.zeros(k), rng.standard_normal(k), rng.standard_normal(k),
               rng.integers(-2 * qmax, 2 * qmax + 1, k) / 2.0,
               np.abs(rng.standard_normal(k))]
    special[1][k // 3] = np.nan
    special[2][k // 5] = -np.inf
    special[3][:2] = [qmax, -qmax]
    for r, row in enumerate(special[:m]):
        x[r] = row
    np.save(path, x.astype(np.float16))


def quantise(x, bits, signed, qmax):
    lo = -(1 << (bits - 1)) if signed else 0
    hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        amax = np.max(np.abs(x), axis=1, keepdims=True)
        scale = amax.astype(np.float32) / np.float32(qmax)
        y = x.astype(np.float32) / scale
        q = np.clip(np.nan_to_num(np.rint(y), nan=0.0, posinf=hi, neginf=lo),
                    lo, hi).astype(np.int64)
    return q, scale.astype(np.float32)


def pack(q, bits):
    b = ((q.reshape(-1, 1) & ((1 << bits) - 1)) >> np.arange(bits)) & 1
    return np.packbits(b.astype(np.uint8).reshape(-1), bitorder="little")


def main(argv):
    if argv[1] == "gen":
        gen(argv[2], int(argv[3]), int(argv[4]), int(argv[5]), int(argv[6]))
        return 0
    x = np.load(argv[2])
    qtype, qmax = argv[3], int(argv[4])
    bits, signed = int(qtype[1:]), qtype[0] == "i"
    q, scale = quantise(x, bits, signed, qmax)
    if bits < 8:
        np.save(argv[5], pack(q, bits))
    else:
        np.save(argv[5], q.astype({8: np.int8, 16: np.int16}[bits] if signed
                                  else {8: np.uint8, 16: np.uint16}[bits]))
    np.save(argv[6], scale)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
