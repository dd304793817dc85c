"""NumPy reference and driver of the decode attention (kernels/decode_attn.tl)
and its KV-cache writers (kernels/kv_quant.tl, kernels/kc_quant.tl).

  decode_attn.py gen PREFIX B HQ HKV D L CAP KT SEED [--kc NR] [--page P]
                     [--lens L0,L1,...] [--qlen QL]
      writes PREFIX.q.npy (f16 [B, HQ, D]), PREFIX.k.npy, PREFIX.v.npy (f16
      [B, HKV, L, D], the tokens), and the cache the kernel reads:
      PREFIX.kc.npy, PREFIX.vc.npy (KT codes [B HKV, CAP, D], tokens past L
      zero; for KT = f16 the tokens themselves), as the kernel reads them:
      their bytes, a u1 array, and PREFIX.ks.npy,
      PREFIX.vs.npy (f16 [B HKV, 2, CAP]: per token the scale and the zero
      point; scale 1 and zero 0 for f16). KT is u8, u4, u2 or f16. The
      lengths PREFIX.lens.npy (i32 [B], L each) and the block table
      PREFIX.table.npy (i32 [B, 1], sequence b in page b): the cache is
      the pool of B pages of CAP tokens, [B, HKV, CAP, D] being [B HKV,
      CAP, D].
      --lens L0,L1,... (each at most L): sequence b has Lb tokens (the
      first Lb of its L), written to PREFIX.lens.npy.
      --page P (CAP a multiple of P): the cache as a pool of pages of P
      tokens, codes [NPG, HKV, P, D] and scales [NPG, HKV, 2, P], NPG = B
      CAP / P + 2; sequence b's token t in page table[b, t / P] at t % P,
      the pages dealt to the sequences in a shuffled order
      (PREFIX.table.npy i32 [B, CAP / P]). Every byte the kernel must not
      read (a token past its sequence's length, the two spare pages) is
      random, NaN and infinities among the f16 values.
      --qlen QL: QL query tokens a sequence, PREFIX.q.npy f16 [B, HQ, QL,
      D]: the sequence's last QL tokens (speculative decoding's drafts, a
      chunk of a prompt), query token i seeing the tokens before len -
      (QL - 1 - i).
      --kc NR (KT u8, u4 or u2; CAP a multiple of NR): the cache of
      decode_attn.tl's KQ = 1 with an f16 residual. The first LQ = L - L %
      NR tokens are quantised, K per channel over blocks of NR tokens
      (PREFIX.ks.npy f16 [B HKV, 2, CAP / NR, D]: per block and channel the
      scale and the zero point), V per token as above; the last L % NR
      tokens are the residual PREFIX.rk.npy, PREFIX.rv.npy (f16 [B HKV, NR,
      D] as bytes, tokens past L % NR zero). K then also has per-channel
      spreads and offsets and a channel constant over block 0.
  decode_attn.py slots OUT.npy B T POS CAP [--skip B:I,...]
      writes the slots (i32 [B, T]) of kernels/kv_quant.tl for T tokens a
      sequence appended at position POS of a contiguous cache of CAP tokens
      a sequence (the pool of B pages of CAP tokens): b CAP + POS + i, -1
      (not written) for each token I of sequence B named by --skip.
  decode_attn.py check PREFIX O.npy B HQ HKV D L KT [--kc NR] [--scale S] [--tol T]
      compares the kernel's output O.npy (f16 [B, HQ, D]) with attention
      computed in float64 from the dequantised cache (scale * code + zero,
      exact; with --kc the quantised LQ tokens and the f16 residual) with
      softmax scale S (default 1 / sqrt(D)); prints the error and exits 1
      when it is above the bound. With --lens L0,L1,... (as given to gen)
      sequence b attends its first Lb tokens; one of no tokens must give
      0 exactly. With --qlen QL (as given to gen) O.npy is [B, HQ, QL, D]
      and query token i of a sequence of len tokens attends the first len
      - (QL - 1 - i).

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

Channel-wise K (--kc; the same quantiser per channel over a block of NR
tokens instead of per token, codes and f16 scales and zero points bit for
bit kernels/kc_quant.tl's). The kernel folds the block's channel scales
into q: its scores are (q s) . c_j + sum_c q_c z_c with q_c s_c rounded to
f16, where the exact score is sum_c q_c (s_c c_jc + z_c). The rounding
errors e_c = f16(q_c s_c) - q_c s_c (|e_c| <= 2^-11 |q_c s_c|; the product
of two f16 is exact in float64 and NumPy rounds it as the GPU does, so e
is computed, not bounded) change the score j of a head by
  delta_j = scale |sum_c e_c c_jc| + scale 2 D 2^-24 (sum_c |q_c s_c| c_jc
            + sum_c |q_c z_c|)
(the second term bounds the f32 sums of the 2 D products, q z by one mma
and (q s) c_j added to it by the next). With every
score moved by at most delta = max_j delta_j, each softmax weight moves by
a factor within [e^-2delta, e^2delta] (the numerator by e^+-delta, the
normaliser by the same), so the output moves by at most (e^(2 delta) - 1)
sum_j P_j |V_j|. The check for --kc therefore requires, per head,
  |o - ref| <= (2^-9 + e^(2 delta) - 1) sum_j P_j |V_j|  element by element
and norm-wise ||o - ref||_2 <= 2^-9 ||ref||_2 + ||(e^(2 delta) - 1)
sum_j P_j |V_j|||_2; the residual tokens (f16, read as the f16 cache is)
and V add nothing beyond the 2^-9 above. At D = 64 and 128 with the
generated data e^(2 delta) - 1 is 2^-7 to 2^-5.5 (printed); the channel
scales of a wrong block, two channels' scales swapped or a lost residual
token are off by more (test/kernels/decode_attn-kc.test).
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


def quantise_kc(x, kt, nr):
    """x f16 [..., T, D] (T a multiple of nr) -> codes (int64) [..., T, D],
    scale f16, zero f16 [..., T / nr, D]: per channel over each block of nr
    tokens, with quantise_kt's arithmetic"""
    qmax = QMAX[kt]
    *lead, t, d = x.shape
    xb = x.reshape(*lead, t // nr, nr, d)
    mx = xb.max(axis=-2)
    mn = xb.min(axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = ((mx.astype(np.float32) - mn.astype(np.float32))
                 / np.float32(qmax)).astype(np.float16)
        y = ((xb.astype(np.float32) - mn.astype(np.float32)[..., None, :])
             / scale.astype(np.float32)[..., None, :])
        q = np.clip(np.nan_to_num(np.rint(y), nan=0.0, posinf=qmax,
                                  neginf=0.0), 0, qmax).astype(np.int64)
    return q.reshape(x.shape), scale, mn


def cache_kc(x, kt, cap, nr):
    """x f16 [B, HKV, LQ, D] (LQ a multiple of nr) -> (codes, scales [B
    HKV, 2, CAP / nr, D] f16, values float64 [B, HKV, LQ, D], codes and
    scales and zero points per token, int64, f16, f16 [B, HKV, LQ, D])"""
    b, hkv, l, d = x.shape
    q, scale, zero = quantise_kc(x, kt, nr)
    codes = np.zeros((b * hkv, cap, d), np.int64)
    codes[:, :l] = q.reshape(b * hkv, l, d)
    sz = np.zeros((b * hkv, 2, cap // nr, d), np.float16)
    sz[:, 0, :l // nr] = scale.reshape(b * hkv, l // nr, d)
    sz[:, 1, :l // nr] = zero.reshape(b * hkv, l // nr, d)
    st = np.repeat(scale, nr, axis=-2)
    zt = np.repeat(zero, nr, axis=-2)
    vals = st.astype(np.float64) * q + zt.astype(np.float64)
    return pack(codes, int(kt[1:])), sz, vals, q, st, zt


def residual(x, lq, nr):
    """the residual buffer of x f16 [B, HKV, L, D]: its tokens lq .. L - 1
    (fewer than nr) in f16, zero-padded to [B HKV, nr, D], as bytes"""
    b, hkv, l, d = x.shape
    r = np.zeros((b * hkv, nr, d), np.float16)
    r[:, :l - lq] = x[:, :, lq:].reshape(b * hkv, l - lq, d)
    return r.view(np.uint8).reshape(-1)


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


def paged(prefix, codes, sz, b, hkv, cap, lens, page, rng, table=None):
    """the contiguous cache (codes: bytes of [B HKV, CAP, row]; sz f16 [B
    HKV, 2, CAP]) as a pool of pages of `page` tokens dealt by `table` (a
    shuffled one when None), every unread byte random; returns the table"""
    row = codes.size // (b * hkv * cap)
    c = codes.reshape(b, hkv, cap // page, page, row)
    z = sz.reshape(b, hkv, 2, cap // page, page)
    npg = b * (cap // page) + 2
    if table is None:
        table = rng.permutation(npg)[:b * (cap // page)].reshape(b, cap // page)
    pc = rng.integers(0, 256, (npg, hkv, page, row), dtype=np.uint8)
    pz = rng.integers(0, 1 << 16, (npg, hkv, 2, page), dtype=np.uint16).view(np.float16)
    pz.reshape(-1)[:4] = [np.inf, -np.inf, np.nan, np.nan]
    for i in range(b):
        for j in range(cap // page):
            n = min(max(lens[i] - j * page, 0), page)
            pc[table[i, j], :, :n] = c[i, :, j, :n]
            pz[table[i, j], :, :, :n] = z[i, :, :, j, :n]
    np.save(prefix, pc.reshape(-1))
    return table.astype(np.int32), pz


def gen(prefix, b, hq, hkv, d, l, cap, kt, seed, nr=None, page=None, lens=None, ql=None):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, hq, d) if ql is None else (b, hq, ql, d)).astype(np.float16)
    k = rng.standard_normal((b, hkv, l, d))
    v = rng.standard_normal((b, hkv, l, d))
    # per-token offsets and spreads, as real caches have, and a constant
    # token (scale 0)
    k = k * np.exp2(rng.uniform(-2, 1, (b, hkv, l, 1))) + rng.uniform(
        -1, 1, (b, hkv, l, 1))
    v = v * np.exp2(rng.uniform(-2, 1, (b, hkv, l, 1)))
    k[0, 0, l // 2] = 0.75
    if nr:
        # channel-wise: per-channel spreads and offsets (the outlier
        # channels that KC quantisation is for) and a channel constant
        # over the first block (scale 0)
        k = k * np.exp2(rng.uniform(-1, 2, (b, hkv, 1, d))) + rng.uniform(
            -2, 2, (b, hkv, 1, d))
        k[0, 0, :nr, 3] = -1.25
    k, v = k.astype(np.float16), v.astype(np.float16)
    np.save(prefix + ".q.npy", q)
    np.save(prefix + ".k.npy", k)
    np.save(prefix + ".v.npy", v)
    lens = np.full(b, l, np.int32) if lens is None else np.asarray(lens, np.int32)
    if nr:
        lq = l - l % nr
        np.save(prefix + ".lens.npy", np.full(b, lq, np.int32))
        np.save(prefix + ".rlens.npy", np.full(b, l - lq, np.int32))
        np.save(prefix + ".table.npy", np.arange(b, dtype=np.int32).reshape(b, 1))
        codes, sz, _, _, _, _ = cache_kc(k[:, :, :lq], kt, cap, nr)
        np.save(prefix + ".kc.npy", codes)
        np.save(prefix + ".ks.npy", sz)
        codes, sz, _ = cache(v[:, :, :lq], kt, cap)
        np.save(prefix + ".vc.npy", codes)
        np.save(prefix + ".vs.npy", sz)
        np.save(prefix + ".rk.npy", residual(k, lq, nr))
        np.save(prefix + ".rv.npy", residual(v, lq, nr))
        return
    np.save(prefix + ".lens.npy", lens)
    table = np.arange(b, dtype=np.int32).reshape(b, 1)
    for name, x in (("k", k), ("v", v)):
        codes, sz, _ = cache(x, kt, cap)
        if page:
            table, sz = paged(prefix + ".%sc.npy" % name, codes, sz, b, hkv, cap, lens,
                              page, rng, None if name == "k" else table)
        else:
            np.save(prefix + ".%sc.npy" % name, codes)
        np.save(prefix + ".%ss.npy" % name, sz)
    np.save(prefix + ".table.npy", table)


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


def kc_rounding(q, codes, st, zt, scale):
    """delta [B, HQ]: the largest change of a score (times scale) by the
    kernel's arithmetic of KC: the rounding of q_c s_c to f16, e_c =
    f16(q_c s_c) - q_c s_c (the product of two f16 is exact in float64 and
    NumPy rounds it to f16 as the GPU does), gives sum_c e_c code_jc; the
    f32 sums (2 D products: sum(q z), then (q s) . c_j added to it) add at
    most 2 D 2^-24 of the sums of the terms' magnitudes"""
    b, hq, d = q.shape
    hkv = codes.shape[1]
    g = hq // hkv
    out = np.zeros((b, hkv, g))
    for i in range(b):  # one KV head at a time: [G, LQ, D] products
        for h in range(hkv):
            qf = q[i, h * g:(h + 1) * g].astype(np.float64)[:, None]
            qs = qf * st[i, h].astype(np.float64)
            e = qs.astype(np.float16).astype(np.float64) - qs
            c = codes[i, h].astype(np.float64)
            dl = np.abs(np.sum(e * c, axis=-1))
            dl += 2 * d * 2.0 ** -24 * (np.sum(np.abs(qs) * c, axis=-1) + np.sum(
                np.abs(qf * zt[i, h].astype(np.float64)), axis=-1))
            out[i, h] = dl.max(axis=-1)
    return scale * out.reshape(b, hq)


def check(prefix, out, b, hq, hkv, d, l, kt, scale, tol, nr=None, lens=None, ql=None):
    q = np.load(prefix + ".q.npy")
    k = np.load(prefix + ".k.npy")
    v = np.load(prefix + ".v.npy")
    extra = np.zeros((b, hq))
    if nr:
        lq = l - l % nr
        _, _, kq, codes, st, zt = cache_kc(k[:, :, :lq], kt, lq, nr)
        _, _, vq = cache(v[:, :, :lq], kt, lq)
        kv = np.concatenate([kq, k[:, :, lq:].astype(np.float64)], axis=2)
        vv = np.concatenate([vq, v[:, :, lq:].astype(np.float64)], axis=2)
        if lq:
            extra = np.expm1(2 * kc_rounding(q, codes, st, zt, scale))
    else:
        _, _, kv = cache(k, kt, l)
        _, _, vv = cache(v, kt, l)
    if ql is not None:  # query token t of sequence i: its first len - (ql - 1 - t) tokens
        ref, mag = np.zeros((b, hq, ql, d)), np.zeros((b, hq, ql, d))
        for i in range(b):
            n = l if lens is None else lens[i]
            for t in range(ql):
                m = n - (ql - 1 - t)
                if m > 0:
                    ref[i:i + 1, :, t], mag[i:i + 1, :, t] = reference(
                        q[i:i + 1, :, t], kv[i:i + 1, :, :m], vv[i:i + 1, :, :m], scale)
    elif lens is None:
        ref, mag = reference(q, kv, vv, scale)
    else:
        ref, mag = np.zeros((b, hq, d)), np.zeros((b, hq, d))
        for i, n in enumerate(lens):
            if n:
                ref[i:i + 1], mag[i:i + 1] = reference(q[i:i + 1], kv[i:i + 1, :, :n],
                                                       vv[i:i + 1, :, :n], scale)
    o = np.load(out).astype(np.float64).reshape(ref.shape)
    err = np.abs(o - ref)
    ex = extra[..., None] if ql is None else extra[..., None, None]
    bound = (tol + ex) * mag
    norm = np.linalg.norm(o - ref) / np.linalg.norm(ref)
    nbound = tol + np.linalg.norm(ex * mag) / np.linalg.norm(ref)
    with np.errstate(invalid="ignore", divide="ignore"):
        worst = np.nanmax(np.where(mag > 0, err / np.where(mag > 0, mag, 1), 0))
    ok = bool(np.all(err <= bound)) and norm <= nbound
    what = kt if not nr else "%s KC NR = %d, %d in f16" % (kt, nr, l % nr)
    if lens is not None:
        what += ", lengths " + ",".join(map(str, lens))
    if ql is not None:
        what += ", %d query tokens" % ql
    print("%s: %d x %d x %d, L = %d, %s: norm-wise error %.3g (2^%.1f), "
          "worst element %.3g of sum P|V| (bound 2^%d%s)" %
          ("ok" if ok else "FAIL", b, hq, d, l, what, norm,
           np.log2(max(norm, 1e-300)), worst, int(round(np.log2(tol))),
           " + at most 2^%.1f" % np.log2(extra.max()) if extra.max() else ""))
    return 0 if ok else 1


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    if argv[1] == "gen":
        rest, nr, page, lens, ql = argv[11:], None, None, None, None
        while rest:
            if rest[0] == "--qlen":
                ql = int(rest[1])
            elif rest[0] == "--kc":
                nr = int(rest[1])
            elif rest[0] == "--page":
                page = int(rest[1])
            elif rest[0] == "--lens":
                lens = [int(x) for x in rest[1].split(",")]
            else:
                raise SystemExit("unknown option " + rest[0])
            rest = rest[2:]
        b, hq, hkv, d, l, cap = map(int, argv[3:9])
        if nr and (argv[9] not in QMAX or cap % nr or l > cap + nr - 1):
            raise SystemExit("gen --kc %d: codes u8, u4 or u2, CAP a multiple "
                             "of NR, L - L %% NR at most CAP" % nr)
        if nr and (page or lens):
            raise SystemExit("gen --kc: a contiguous cache of one length")
        if page and cap % page:
            raise SystemExit("gen --page %d: CAP a multiple of P" % page)
        if lens and (len(lens) != b or min(lens) < 0 or max(lens) > l):
            raise SystemExit("gen --lens: B lengths of 0 .. L")
        if ql is not None and (nr or not 1 <= ql <= 8):
            raise SystemExit("gen --qlen: 1 .. 8 query tokens, a token-wise cache")
        gen(argv[2], b, hq, hkv, d, l, cap, argv[9], int(argv[10]), nr, page, lens, ql)
        return 0
    if argv[1] == "slots":
        b, t, pos, cap = map(int, argv[3:7])
        sl = (np.arange(b)[:, None] * cap + pos + np.arange(t)).astype(np.int32)
        if argv[7:8] == ["--skip"]:
            for bi in argv[8].split(","):
                i, j = map(int, bi.split(":"))
                sl[i, j] = -1
        np.save(argv[2], sl)
        return 0
    if argv[1] == "check":
        prefix, out = argv[2], argv[3]
        b, hq, hkv, d, l = map(int, argv[4:9])
        kt = argv[9]
        scale, tol, nr, lens, ql = 1 / np.sqrt(d), 2.0 ** -9, None, None, None
        rest = argv[10:]
        while rest:
            if rest[0] == "--scale":
                scale = float(rest[1])
            elif rest[0] == "--tol":
                tol = float(rest[1])
            elif rest[0] == "--kc":
                nr = int(rest[1])
            elif rest[0] == "--lens":
                lens = [int(x) for x in rest[1].split(",")]
            elif rest[0] == "--qlen":
                ql = int(rest[1])
            else:
                raise SystemExit("unknown option " + rest[0])
            rest = rest[2:]
        if nr and kt not in QMAX:
            raise SystemExit("check --kc %d: codes u8, u4 or u2, not %s" % (nr, kt))
        return check(prefix, out, b, hq, hkv, d, l, kt, scale, tol, nr, lens, ql)
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
