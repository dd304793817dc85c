"""Inputs and reference of the f16 x u4 matmul (kernels/matmul_f16_u4.tl).

  matmul_u4.py gen PREFIX M K N G SEED
      writes PREFIX.a.npy (f16 [M, K]), PREFIX.w.npy (the u4 codes 0..15 as
      uint8 [K, N]), PREFIX.s.npy (the scales, f16 [K / G, N]) and
      PREFIX.b.npy (the codes packed: u8 [K / 16, N / 8, 64])
  matmul_u4.py check PREFIX
      compares PREFIX.c.npy (f16 [M, N]) with the reference, bit for bit
      (G is K over the rows of PREFIX.s.npy)

Dequantization: w = (code - 8) * scale, rounded to f16 (the kernel's f16
tl.mul), the scale of k's group of G consecutive k and of the column.

The packing is Tilus Fig. 9 for 4-bit codes: tile (kb, nb) of 16 x 8 codes is
held by 32 threads in the mma B layout local(2, 1).column_spatial(4, 8)
.local(2, 1), where thread t's local element i is row 8*(i//2) + 2*(t%4) +
i%2, column t//4; thread t's four codes, little-endian in local order, are
the 16 bits of its two bytes in the u8 layout spatial(32).local(2): bytes 2t
and 2t + 1 of the tile's 64 bytes.
"""
import sys

import numpy as np


def pack(codes):
    k, n = codes.shape
    c = (codes.astype(np.int64) & 15).reshape(k // 16, 16, n // 8, 8)
    t = np.arange(32)[:, None]
    i = np.arange(4)[None, :]
    rows, cols = 8 * (i // 2) + 2 * (t % 4) + i % 2, t // 4 + 0 * i
    tiles = c[:, rows, :, cols]  # [32, 4, K/16, N/8]
    bits = (tiles << (4 * i)[..., None, None]).sum(axis=1)  # [32, K/16, N/8]
    out = np.zeros((k // 16, n // 8, 32, 2), dtype=np.uint8)
    for j in range(2):
        out[:, :, :, j] = ((bits >> (8 * j)) & 255).transpose(1, 2, 0)
    return out.reshape(k // 16, n // 8, 64)


def dequant(codes, scales, g):
    s = np.repeat(scales.astype(np.float32), g, axis=0)
    # (code - 8) * scale has at most 4 + 11 significant bits: exact in f32,
    # so the cast to f16 rounds once, as the kernel does.
    return ((codes.astype(np.float32) - 8) * s).astype(np.float16)


def gen(prefix, m, k, n, g, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, size=(m, k)).astype(np.float16)
    w = rng.integers(0, 16, size=(k, n)).astype(np.uint8)
    s = rng.uniform(-0.125, 0.125, size=(k // g, n)).astype(np.float16)
    np.save(prefix + ".a.npy", a)
    np.save(prefix + ".w.npy", w)
    np.save(prefix + ".s.npy", s)
    np.save(prefix + ".b.npy", pack(w))


def check(prefix):
    a = np.load(prefix + ".a.npy").astype(np.float32)
    s = np.load(prefix + ".s.npy")
    w = dequant(np.load(prefix + ".w.npy"), s, a.shape[1] // s.shape[0])
    w = w.astype(np.float32)
    c = np.load(prefix + ".c.npy")
    m, n = a.shape[0], w.shape[1]
    assert c.dtype == np.float16 and c.shape == (m, n), (c.dtype, c.shape)
    # f16 x f16 products have at most 22 significant bits: exact in f32;
    # each float32 addition rounds once, in k order, as tl.dot does.
    acc = np.zeros((m, n), dtype=np.float32)
    for k in range(a.shape[1]):
        acc = acc + np.outer(a[:, k], w[k])
    ref = acc.astype(np.float16)
    bad = np.argwhere(ref.view(np.uint16) != c.view(np.uint16))
    if len(bad):
        i, j = bad[0]
        sys.exit("%d elements differ; first [%d, %d]: got %r, expected %r"
                 % (len(bad), i, j, c[i, j], ref[i, j]))
    print("ok: %d x %d bit-exact" % (m, n))


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], *(int(v) for v in sys.argv[3:8]))
    else:
        check(sys.argv[2])
