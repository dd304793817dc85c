"""NumPy reference and driver of the arbitrary-precision WqAp kernels
(kernels/abq_pack.tl, kernels/abq_quant.tl, kernels/abq_matmul.tl).

  abq.py gen PREFIX M K N P Q SEED [MB]
      writes the inputs and the reference intermediates, for M activation
      rows in tiles of MB (the kernels' template M, default min(M, 8)):
        PREFIX.x.npy       f16 [M, K] activations (rows at scales 2^-4..2^4;
                           row 1 all zeros and row 2 nonnegative when M > 2)
        PREFIX.w.npy       u8 [K, N] weight codes, 0 .. 2^Q - 1
        PREFIX.sw.npy      f32 [1, N] weight scales
        PREFIX.zw.npy      i32 [1, N] weight zero points, 0 .. 2^Q - 1
        PREFIX.planes.npy  the packer's planes u1 [Q, N, K] (packed bytes)
        PREFIX.colsum.npy  i32 [1, N], sum_k W[k, n]
        PREFIX.ap.npy      the quantiser's planes u1 [T R, K] (bytes), T =
                           ceildiv(M, MB) tiles of R = 16 ceildiv(P MB, 16)
        PREFIX.sa.npy      f32 [M, 1] activation scales
        PREFIX.za.npy      i32 [M, 1] activation zero points
        PREFIX.ra.npy      i32 [M, 1] activation code row sums
        PREFIX.wpw.npy, PREFIX.apw.npy   the planes' bytes as u32 words,
                           the matmul's operands (its plane pointers are
                           u32: it loads whole fragment words)
  abq.py check PREFIX P Q [--exact]
      compares PREFIX.c.npy (the kernel's C, f16 or f32 [M, N]) with the
      reference: within the written tolerance of the exact product, and
      with --exact bit for bit against the kernel's epilogue arithmetic;
      for an f32 C also recovers the integer sums T from C and checks them
  abq.py pack W.npy Q PLANES.npy COLSUM.npy     (the packer alone)
  abq.py quant X.npy P MB AP.npy SA.npy ZA.npy RA.npy   (the quantiser alone)

The quantiser (per row m, in the kernel's precision, so codes are exact):
  lo = min(f32(min_k x[m, k]), 0), hi = max(f32(max_k x[m, k]), 0)
  sa = (hi - lo) / f32(2^P - 1)                      one f32 rounding
  za = clamp(rint(-lo / sa), 0, 2^P - 1)             NaN (a zero row) -> 0
  qa = clamp(rint(f32(x) / sa) + za, 0, 2^P - 1)     rint: ties to even
  ra = sum_k qa;  plane i of the activations: (qa >> i) & 1
The product, with dequant(a) = sa (qa - za), dequant(w) = sw (qw - zw):
  C[m, n] = sa_m sw_n T[m, n],  T = sum_k (qa - za)(qw - zw)
          = S - za_m colsum_n - zw_n ra_m + K za_m zw_n,
  S = sum_k qa qw = sum_{i < P, j < Q} 2^(i + j) popc(a_i[m, :] & w_j[:, n])
T is an exact integer (|T| <= K (2^P - 1)(2^Q - 1) < 2^31); the kernel
forms it in wrapping i32 arithmetic, then C = OT((f32(T) * sa) * sw).
Tolerance against the exact value sa sw T (float64): three f32 roundings
and one to OT, |C - sa sw T| <= (2^-22 + u) |sa sw T| + tiny, u = 2^-11
for f16 (tiny = 2^-24, its subnormal spacing), 2^-24 for f32.
"""
import sys

import numpy as np


def pack_bits(bits):
    """u1 tensor (0/1 values, any shape) -> its bytes as tl-run stores it."""
    return np.packbits(bits.astype(np.uint8).reshape(-1), bitorder="little")


def pack(w, q):
    planes = np.stack([(w.T.astype(np.int64) >> j) & 1 for j in range(q)])
    colsum = w.astype(np.int64).sum(axis=0, dtype=np.int64)
    return pack_bits(planes), colsum.astype(np.int32).reshape(1, -1)


def quantise(x, p):
    qmax = (1 << p) - 1
    x32 = x.astype(np.float32)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        lo = np.minimum(x.min(axis=1).astype(np.float32), np.float32(0))
        hi = np.maximum(x.max(axis=1).astype(np.float32), np.float32(0))
        sa = ((hi - lo) / np.float32(qmax)).astype(np.float32)
        za = np.nan_to_num(np.rint(-lo / sa), nan=0.0)
        za = np.clip(za, 0, qmax).astype(np.int64)
        y = np.nan_to_num(np.rint(x32 / sa[:, None]), nan=0.0,
                          posinf=2 ** 31 - 1, neginf=-2 ** 31)
        y = np.clip(y, -2 ** 31, 2 ** 31 - 1).astype(np.int64)
    qa = np.clip(y + za[:, None], 0, qmax)
    return qa, sa, za


def act_planes(qa, p, mb):
    """u1 [T R, K] for tiles of MB rows, T = ceildiv(m, MB), R = 16
    ceildiv(P MB, 16): row t R + i MB + l holds bit i of the codes of row
    t MB + l; the other rows zero (the quantiser writes the padding rows
    of every row it has, and nothing for the rows past m)."""
    m, k = qa.shape
    rows = 16 * (-(-p * mb // 16))
    nt = -(-m // mb)
    bits = np.zeros((nt, rows, k), np.uint8)
    for r in range(m):
        t, l = divmod(r, mb)
        for i in range(p):
            bits[t, i * mb + l] = (qa[r] >> i) & 1
    return pack_bits(bits)


def gen(prefix, m, k, n, p, q, seed, mb=None):
    mb = mb or min(m, 8)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((m, k)) * np.exp2(rng.integers(-4, 5, (m, 1)))
    if m > 2:
        x[1] = 0.0
        x[2] = np.abs(x[2])
    x = x.astype(np.float16)
    qmaxw = (1 << q) - 1
    w = rng.integers(0, qmaxw + 1, (k, n)).astype(np.uint8)
    sw = (rng.uniform(0.5, 2.0, (1, n)) / 64).astype(np.float32)
    zw = rng.integers(0, qmaxw + 1, (1, n)).astype(np.int32)
    planes, colsum = pack(w, q)
    qa, sa, za = quantise(x, p)
    np.save(prefix + ".x.npy", x)
    np.save(prefix + ".w.npy", w)
    np.save(prefix + ".sw.npy", sw)
    np.save(prefix + ".zw.npy", zw)
    np.save(prefix + ".planes.npy", planes)
    np.save(prefix + ".wpw.npy", planes.view("<u4"))
    np.save(prefix + ".apw.npy", act_planes(qa, p, mb).view("<u4"))
    np.save(prefix + ".colsum.npy", colsum)
    np.save(prefix + ".ap.npy", act_planes(qa, p, mb))
    np.save(prefix + ".sa.npy", sa.reshape(-1, 1))
    np.save(prefix + ".za.npy", za.astype(np.int32).reshape(-1, 1))
    np.save(prefix + ".ra.npy", qa.sum(axis=1).astype(np.int32).reshape(-1, 1))


def check(prefix, p, q, exact):
    x = np.load(prefix + ".x.npy")
    w = np.load(prefix + ".w.npy").astype(np.int64)
    sw = np.load(prefix + ".sw.npy").reshape(-1)
    zw = np.load(prefix + ".zw.npy").reshape(-1).astype(np.int64)
    c = np.load(prefix + ".c.npy")
    m, k = x.shape
    n = w.shape[1]
    if (w >> q).any():
        print("error: weight codes need more than %d bits" % q)
        return 1
    qa, sa, za = quantise(x, p)
    t = (qa - za[:, None]) @ (w - zw[None, :])          # exact, int64
    if np.abs(t).max(initial=0) >= 2 ** 31:
        print("error: |T| reaches 2^31: K is too large for (P, Q)")
        return 1
    c = c.reshape(m, n)
    ot = c.dtype
    want = ((t.astype(np.float32) * sa[:, None]) * sw[None, :]).astype(ot)
    exact64 = t.astype(np.float64) * sa[:, None].astype(np.float64) * sw[None, :]
    u, tiny = (2.0 ** -11, 2.0 ** -24) if ot == np.float16 else (2.0 ** -24, 1e-38)
    err = np.abs(c.astype(np.float64) - exact64)
    bound = (2.0 ** -22 + u) * np.abs(exact64) + tiny
    bad = np.argwhere(~(err <= bound))
    if len(bad):
        i, j = bad[0]
        print("error: %d of %d elements outside the tolerance; first [%d, %d]: "
              "%r, want %r (T = %d)" % (len(bad), m * n, i, j, c[i, j], exact64[i, j], t[i, j]))
        return 1
    if exact:
        diff = np.argwhere(c.view(np.uint16 if ot == np.float16 else np.uint32)
                           != want.view(np.uint16 if ot == np.float16 else np.uint32))
        if len(diff):
            i, j = diff[0]
            print("error: %d elements differ from the f32 epilogue; first [%d, %d]: "
                  "%r, want %r" % (len(diff), i, j, c[i, j], want[i, j]))
            return 1
    if ot == np.float32:
        # The integer sums, recovered from C: exact where |T| < 2^20 (the
        # f32 epilogue's relative error 2^-22 is below 1 / (2 |T|)).
        scale = sa[:, None].astype(np.float64) * sw[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            that = np.rint(c.astype(np.float64) / scale)
        sel = (np.abs(t) < 2 ** 20) & (scale > 0)
        if (that[sel] != t[sel]).any():
            print("error: integer sums recovered from C differ")
            return 1
        print("ok: integer sums exact (%d of %d recovered)" % (sel.sum(), m * n))
    deq = (x.astype(np.float64) @ ((w - zw[None, :]) * sw[None, :].astype(np.float64)))
    rel = np.linalg.norm(c.astype(np.float64) - deq) / max(np.linalg.norm(deq), 1e-30)
    print("ok: %d x %d%s (P = %d, Q = %d; error against f16 activations %.3g)"
          % (m, n, " bit-exact" if exact else " within tolerance", p, q, rel))
    return 0


def main(argv):
    cmd = argv[1]
    if cmd == "gen":
        gen(argv[2], *[int(a) for a in argv[3:10]])
        return 0
    if cmd == "check":
        return check(argv[2], int(argv[3]), int(argv[4]), "--exact" in argv[5:])
    if cmd == "pack":
        planes, colsum = pack(np.load(argv[2]), int(argv[3]))
        np.save(argv[4], planes)
        np.save(argv[5], colsum)
        return 0
    if cmd == "quant":
        x = np.load(argv[2])
        p, mb = int(argv[3]), int(argv[4])
        qa, sa, za = quantise(x, p)
        np.save(argv[5], act_planes(qa, p, mb))
        np.save(argv[6], sa.reshape(-1, 1))
        np.save(argv[7], za.astype(np.int32).reshape(-1, 1))
        np.save(argv[8], qa.sum(axis=1).astype(np.int32).reshape(-1, 1))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
