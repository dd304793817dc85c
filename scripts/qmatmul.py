"""Inputs, packing and references of the pipelined quantised matmul
(kernels/qmatmul_u4.tl).

  qmatmul.py gen PREFIX M K N G BN SEED [ZP]
      writes PREFIX.a.npy (f16 [M, K]), PREFIX.w.npy (u4 codes 0..15 as
      uint8 [K, N]), PREFIX.s.npy (f16 scales [K / G, N]; with ZP = 1, f16
      [K / G, 2, N]: the scale, then the zero point minus 8, of each group
      and column, the zero points integers 0..15) and PREFIX.b.npy
      (the codes packed for block width BN: u8 [N / BN, K / G, G * BN / 1024,
      32, 16]) and PREFIX.wu4.npy (the codes as a u4 buffer's bytes, the
      input of kernels/qpack_u4.tl: element i at bits 4i)
  qmatmul.py check PREFIX W [--exact]
      compares PREFIX.c.npy (f16 [M, N]) with the reference. --exact: bit
      for bit with the block VM's order of sums (each of the W warps sums
      its groups in k order in f32, then the W partial sums are added in
      warp order); otherwise the norm-wise error against the float64
      product of A and the dequantised weights:
          max_i |c_i - ref_i| / (sum_k |a_ik| |w_kj|)  <=  2^-10
      i.e. every element within an f16 rounding of the output plus f32
      accumulation error, measured against the size of its own sum.

Dequantisation: w = (code - zero) * scale rounded to f16, zero = 8
without zero points (the kernel's f16 tl.sub and tl.mul; code - zero is
exact in f16).
"""
import sys

import numpy as np


def lane_order(g, bn):
    """(k, n) of lane t's local element j of the weight tile as the kernel
    views it, the layout (tile [G/16, 2, 4, 2, BN/16, 2, 8] of k = 16 ks +
    8 i1 + 2 r + i0, n = 16 nh + 8 nl + c)
        local(G/16, BN/16).local(i0).local(nl).local(i1)
        .column_spatial(r = 4, c = 8):
    j = (((ks * BN/16 + nh) * 2 + i0) * 2 + nl) * 2 + i1, lane t = r + 4 c.
    Within each group of eight codes the order is (i0, nl, i1), so the
    i4 -> f16 cast recipe, which pairs code i with code i + 4 of a word,
    leaves k and k + 1 of one column in one f16x2 word: the order of the
    mma B fragment, with no reordering."""
    t = np.arange(32)[:, None]
    j = np.arange(g * bn // 32)[None, :]
    i1, nl, i0 = j % 2, (j // 2) % 2, (j // 4) % 2
    nh, ks = (j // 8) % (bn // 16), j // (8 * (bn // 16))
    k = 16 * ks + 8 * i1 + 2 * (t % 4) + i0
    n = 16 * nh + 8 * nl + t // 4
    return k, n  # [32, G * BN / 32] each


def pack(codes, g, bn):
    """u4 codes [K, N] -> u8 [N / BN, K / G, G * BN / 1024, 32, 16], each
    code stored as the i4 code - 8 (4-bit two's complement)."""
    kk, nn = codes.shape
    c = ((codes.astype(np.uint8) - 8) & 15).reshape(kk // g, g, nn // bn, bn)
    k, n = lane_order(g, bn)
    v = c[:, k, :, n]  # [32, G*BN/32, K/G, N/BN]
    v = v.transpose(3, 2, 0, 1)  # [N/BN, K/G, 32, G*BN/32]
    byte = v[..., 0::2] | (v[..., 1::2] << 4)  # [N/BN, K/G, 32, G*BN/64]
    nb, kg = byte.shape[0], byte.shape[1]
    byte = byte.reshape(nb, kg, 32, g * bn // 1024, 16).transpose(0, 1, 3, 2, 4)
    return np.ascontiguousarray(byte)


def dequant(codes, scales):
    """scales: f16 [K / G, N], or [K / G, 2, N] with zero points - 8."""
    zeros = 8.0
    if scales.ndim == 3:
        zeros = scales[:, 1, :].astype(np.float32) + 8
        scales = scales[:, 0, :]
    g = codes.shape[0] // scales.shape[0]
    s = np.repeat(scales.astype(np.float32), g, axis=0)
    z = np.repeat(np.broadcast_to(zeros, scales.shape), g, axis=0)
    # code - zero is a small integer and times an f16 scale exact in f32,
    # so the cast to f16 rounds once, as the kernel's tl.mul does.
    return ((codes.astype(np.float32) - z) * s).astype(np.float16)


def gen(prefix, m, k, n, g, bn, seed, zp=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, size=(m, k)).astype(np.float16)
    w = rng.integers(0, 16, size=(k, n)).astype(np.uint8)
    s = rng.uniform(-0.125, 0.125, size=(k // g, n)).astype(np.float16)
    if zp:
        z = rng.integers(0, 16, size=(k // g, n)).astype(np.float16) - 8
        s = np.stack([s, z], axis=1)
    np.save(prefix + ".a.npy", a)
    np.save(prefix + ".w.npy", w)
    np.save(prefix + ".s.npy", s)
    np.save(prefix + ".b.npy", pack(w, g, bn))
    flat = w.reshape(-1)
    np.save(prefix + ".wu4.npy", (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8))


def reference_exact(a, wd, g, warps):
    """The block VM's order: warp w sums the groups w, w + W, ... in k
    order (f16 x f16 products are exact in f32, each addition rounds once),
    then the partial sums are added in warp order."""
    m, k = a.shape
    a32, w32 = a.astype(np.float32), wd.astype(np.float32)
    part = [np.zeros((m, wd.shape[1]), np.float32) for _ in range(warps)]
    for grp in range(k // g):
        p = part[grp % warps]
        for kk in range(grp * g, grp * g + g):
            p += np.outer(a32[:, kk], w32[kk])
    total = part[0]
    for p in part[1:]:
        total = total + p
    return total.astype(np.float16)


def check(prefix, warps, exact):
    a = np.load(prefix + ".a.npy")
    s = np.load(prefix + ".s.npy")
    w = np.load(prefix + ".w.npy")
    c = np.load(prefix + ".c.npy")
    g = w.shape[0] // s.shape[0]
    wd = dequant(w, s)
    m, n = a.shape[0], w.shape[1]
    assert c.dtype == np.float16 and c.shape == (m, n), (c.dtype, c.shape)
    if exact:
        ref = reference_exact(a, wd, g, warps)
        bad = np.argwhere(ref.view(np.uint16) != c.view(np.uint16))
        if len(bad):
            i, j = bad[0]
            sys.exit("%d elements differ; first [%d, %d]: got %r, expected %r"
                     % (len(bad), i, j, c[i, j], ref[i, j]))
        print("ok: %d x %d bit-exact" % (m, n))
        return
    a64, w64 = a.astype(np.float64), wd.astype(np.float64)
    ref = a64 @ w64
    scale = np.abs(a64) @ np.abs(w64)
    err = np.abs(c.astype(np.float64) - ref) / np.maximum(scale, 1e-30)
    worst = np.unravel_index(np.argmax(err), err.shape)
    if not np.all(np.isfinite(c)) or err[worst] > 2.0 ** -10:
        sys.exit("error %.3g at %s: got %r, expected %r (bound 2^-10)"
                 % (err[worst], worst, c[worst], ref[worst]))
    print("ok: %d x %d, worst norm-wise error %.3g" % (m, n, err[worst]))


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], *(int(v) for v in sys.argv[3:]))
    else:
        check(sys.argv[2], int(sys.argv[3]), "--exact" in sys.argv)
