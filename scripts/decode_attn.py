"""NumPy reference and driver of the decode attention (kernels/decode_attn.tl)
and its KV-cache writer (kernels/kv_quant.tl).

  decode_attn.py gen PREFIX B HQ HKV D L CAP KT SEED
      writes PREFIX.q.npy (f16 [B, HQ, D]), PREFIX.k.npy, PREFIX.v.npy (f16
      [B, HKV, L, D], the tokens), and the cache the kernel reads:
      PREFIX.kc.npy, PREFIX.vc.npy (KT codes [B HKV, CAP, D], tokens past L
      zero; for KT = f16 the tokens themselves), as the kernel reads them:
      their bytes, a u1 array, and PREFIX.ks.npy,
      PREFIX.vs.npy (f16 [B HKV, 2, CAP]: per token the scale and the zero
      point; scale 1 and zero 0 for f16). KT is u8, u4, u2 or f16.
  decode_attn.py check PREFIX O.npy B HQ HKV D L KT [--scale S] [--tol T]
      compares the kernel's output O.npy (f16 [B, HQ, D]) with attention
      computed in float64 from the dequantised cache (scale * code + zero,
      exact) with softmax scale S (default 1 / sqrt(D)); prints the error
      and exits 1 when it is above the bound.

Quantisation (the writer's arithmetic, operation for operation, so the
codes and the f16 scales and zero points match bit for bit):
  zero  = min_c x[c]                          exact in f16
  scale = f16(f32(max_c x[c] - zero) / QMAX)  f32 difference of f16 values
                                              and f32 quotient (each one
                                              rounding), rounded to f16
  code  = clip(rint((f32(x) - f32(zero)) / f32(scale)), 0, QMAX)
                                              f32 difference and quotient,
                                              ties to even; NaN (0 / 0, a
                                              constant token) gives 0

The bound. Let P be the exact softmax weights and V the dequantised values.
The kernel's scores are f32 sums of exact products (|error| about D 2^-24
of sum |q k| scale, a relative change of P far below 2^-16 at these
sizes); P (with the zero point folded, P * scale) is rounded to f16 before
the P V mma (relative 2^-11 a term), the f32 sums add a few 2^-24, and the
output is rounded to f16 (2^-11 of |o|). Every output element therefore
satisfies |o - ref| <= (2^-11 + 2^-11 + small) sum_j P_j |V_j| <= 2^-10
sum_j P_j |V_j|, which for values without a common offset is of the order
of 2^-10 |o| in the norm. The check requires both
  |o - ref| <= 2^-9 * sum_j P_j |V_j|   element by element (the bound with
                                        a factor 2 of margin), and
  ||o - ref||_2 <= 2^-9 ||ref||_2       norm-wise
(--tol changes 2^-9). A wrong head mapping, a lost token or a wrong scale
is off by far more (see test/kernels/decode_attn-ref.test).
"""
import sys

import numpy as np

QMAX = {"u8": 255, "u4": 15, "u2": 3}


def quantise_kt(x, kt):
    """x f16 [..., T, D] -> codes (int64), scale f16, zero f16 [..., T]"""
    qmax = QMAX[kt]
    mx = x.max(axis=-1)
    mn = x.min(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = ((mx.astype(np.float32) - mn.astype(np.float32))
                 / np.float32(qmax)).astype(np.float16)
        y = ((x.astype(np.float32) - mn.astype(np.float32)[..., None])
             / scale.astype(np.float32)[..., None])
        q = np.clip(np.nan_to_num(np.rint(y), nan=0.0, posinf=qmax,
                                  neginf=0.0), 0, qmax).astype(np.int64)
    return q, scale, mn


def pack(q, bits):
    """codes -> the packed bytes tl-run exchanges (code e at bits b e ..)"""
    if bits == 8:
        return q.astype(np.uint8).reshape(-1)
    b = ((q.reshape(-1, 1) & ((1 << bits) - 1)) >> np.arange(bits)) & 1
    return np.packbits(b.astype(np.uint8).reshape(-1), bitorder="little")


def cache(x, kt, cap):
    """x f16 [B, HKV, L, D] -> (codes, scales [B HKV, 2, CAP] f16, values
    float64 [B, HKV, L, D] of the dequantised cache)"""
    b, hkv, l, d = x.shape
    if kt == "f16":
        codes = np.zeros((b * hkv, cap, d), np.float16)
        codes[:, :l] = x.reshape(b * hkv, l, d)
        sz = np.zeros((b * hkv, 2, cap), np.float16)
        sz[:, 0, :l] = 1
        return codes.view(np.uint8).reshape(-1), sz, x.astype(np.float64)
    q, scale, zero = quantise_kt(x, kt)
    codes = np.zeros((b * hkv, cap, d), np.int64)
    codes[:, :l] = q.reshape(b * hkv, l, d)
    sz = np.zeros((b * hkv, 2, cap), np.float16)
    sz[:, 0, :l] = scale.reshape(b * hkv, l)
    sz[:, 1, :l] = zero.reshape(b * hkv, l)
    vals = (scale.astype(np.float64)[..., None] * q
            + zero.astype(np.float64)[..., None])
    return pack(codes, int(kt[1:])), sz, vals


def gen(prefix, b, hq, hkv, d, l, cap, kt, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, hq, d)).astype(np.float16)
    k = rng.standard_normal((b, hkv, l, d))
    v = rng.standard_normal((b, hkv, l, d))
    # per-token offsets and spreads, as real caches have, and a constant
    # token (scale 0)
    k = k * np.exp2(rng.uniform(-2, 1, (b, hkv, l, 1))) + rng.uniform(
        -1, 1, (b, hkv, l, 1))
    v = v * np.exp2(rng.uniform(-2, 1, (b, hkv, l, 1)))
    k[0, 0, l // 2] = 0.75
    k, v = k.astype(np.float16), v.astype(np.float16)
    np.save(prefix + ".q.npy", q)
    np.save(prefix + ".k.npy", k)
    np.save(prefix + ".v.npy", v)
    for name, x in (("k", k), ("v", v)):
        codes, sz, _ = cache(x, kt, cap)
        np.save(prefix + ".%sc.npy" % name, codes)
        np.save(prefix + ".%ss.npy" % name, sz)


def reference(q, kv, vv, scale):
    """float64 attention: q [B, HQ, D], kv, vv [B, HKV, L, D] -> o, and
    sum_j P_j |V_j| (the bound's magnitude)"""
    b, hq, d = q.shape
    g = hq // kv.shape[1]
    kr = np.repeat(kv, g, axis=1)
    vr = np.repeat(vv, g, axis=1)
    s = np.einsum("bhd,bhld->bhl", q.astype(np.float64), kr) * scale
    s -= s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=-1, keepdims=True)
    return (np.einsum("bhl,bhld->bhd", p, vr),
            np.einsum("bhl,bhld->bhd", p, np.abs(vr)))


def check(prefix, out, b, hq, hkv, d, l, kt, scale, tol):
    q = np.load(prefix + ".q.npy")
    k = np.load(prefix + ".k.npy")
    v = np.load(prefix + ".v.npy")
    _, _, kv = cache(k, kt, l)
    _, _, vv = cache(v, kt, l)
    ref, mag = reference(q, kv, vv, scale)
    o = np.load(out).astype(np.float64).reshape(b, hq, d)
    err = np.abs(o - ref)
    norm = np.linalg.norm(o - ref) / np.linalg.norm(ref)
    worst = np.max(err / mag)
    ok = bool(np.all(err <= tol * mag)) and norm <= tol
    print("%s: %d x %d x %d, L = %d, %s: norm-wise error %.3g (2^%.1f), "
          "worst element %.3g of sum P|V| (bound 2^%d)" %
          ("ok" if ok else "FAIL", b, hq, d, l, kt, norm,
           np.log2(max(norm, 1e-300)), worst, int(round(np.log2(tol)))))
    return 0 if ok else 1


def main(argv):
    if argv[1] == "gen":
        gen(argv[2], *map(int, argv[3:9]), argv[9], int(argv[10]))
        return 0
    if argv[1] == "check":
        prefix, out = argv[2], argv[3]
        b, hq, hkv, d, l = map(int, argv[4:9])
        kt = argv[9]
        scale, tol = 1 / np.sqrt(d), 2.0 ** -9
        rest = argv[10:]
        while rest:
            if rest[0] == "--scale":
                scale = float(rest[1])
            elif rest[0] == "--tol":
                tol = float(rest[1])
            else:
                raise SystemExit("unknown option " + rest[0])
            rest = rest[2:]
        return check(prefix, out, b, hq, hkv, d, l, kt, scale, tol)
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
