"""tl.ops on the CPU VM: pack_weights and quant_matmul for the kernel
instances quant_matmul picks (m <= 8, m <= 16, tall blocks beyond, and
for an sm_90 device the warpgroup-mma kernel past 16 rows),
group and per-column scales, with and without zero points, against a
float64 reference of the dequantised product (norm-wise bound 2^-10, as
scripts/qmatmul.py's); bad shapes and codes refused."""
import sys
import numpy as np
import tl
rng = np.random.default_rng(3)
def ref(a, codes, scales, zeros, wtype, g):
    K, N = codes.shape
    v = codes.astype(np.float64)
    if wtype[0] == "i":
        b = int(wtype[1:]); v = np.where(v >= 1 << (b - 1), v - (1 << b), v)
    gs = 1 if g is None else K // (g)
    rep = K // gs
    s = np.repeat(np.asarray(scales, np.float64).reshape(gs, N), rep, axis=0)
    z = 0 if zeros is None else np.repeat(np.asarray(zeros, np.float64).reshape(gs, N), rep, axis=0)
    wd = ((v - z) * s).astype(np.float16).astype(np.float64)
    return a.astype(np.float64) @ wd, np.abs(a.astype(np.float64)) @ np.abs(wd)
# sm=90: the choice made for an sm_90 device (qmatmul_wg.tl past 16 rows,
# k split over the blocks at these sizes), run on the VM.
for (m, K, N, wtype, g, zp, sm) in [(130, 256, 256, "u4", 128, True, 90), (128, 512, 128, "i4", 64, False, 90),
                                     (40, 512, 256, "u4", 128, False, 90), (20, 256, 128, "i4", 64, True, 90),
                                     (70, 256, 128, "u4", 128, False, 90),
                                     (3, 512, 128, "u4", 128, True, None), (12, 256, 128, "i4", 128, False, None),
                                     (37, 256, 256, "u2", 64, False, None), (5, 256, 128, "u8", None, True, None)]:
    bits = int(wtype[1:])
    codes = rng.integers(0, 1 << bits, size=(K, N))
    gs = 1 if g is None else K // g
    scales = rng.uniform(-1, 1, size=(gs, N)).astype(np.float16) / (1 << (bits - 1))
    zeros = rng.integers(0, 1 << bits, size=(gs, N)).astype(np.float16) if zp else None
    p = tl.ops.pack_weights(codes, scales, zeros, wtype=wtype, group=g)
    a = rng.uniform(-1, 1, size=(m, K)).astype(np.float16)
    c = tl.ops.quant_matmul(a, p, sm=sm)
    r, sc = ref(a, codes, scales, zeros, wtype, g)
    err = (np.abs(c.astype(np.float64) - r) / np.maximum(sc, 1e-30)).max()
    assert err <= 2 ** -10, (m, K, N, wtype, err)
    print("m=%d K=%d N=%d %s g=%s zp=%d%s: ok (norm-wise error %.2g)" % (
        m, K, N, wtype, g, zp, " sm=%d" % sm if sm else "", err))
# The instances an H100 (132 SMs) gets for the 70B layer's gate_up (the
# tile rows m rounded up to a multiple of 32 up to 256, past that the tile
# of 160 to 256 rows that pads m least; two blocks an SM up to 96 rows, and
# for 128 where each block gets 64 steps).
p70 = tl.ops.PackedWeights(None, None, 8192, 57344, "i4", 128, 0, False, "f16")
for m, want in ((16, ("qmatmul_m8.tl", None)), (17, ("qmatmul_wg.tl", 32, 8, 256, 2)), (64, ("qmatmul_wg.tl", 64, 8, 256, 2)),
                (65, ("qmatmul_wg.tl", 96, 6, 256, 2)), (97, ("qmatmul_wg.tl", 128, 5, 256, 2)),
                (129, ("qmatmul_wg.tl", 160, 5, 128, 1)), (170, ("qmatmul_wg.tl", 192, 4, 128, 1)),
                (256, ("qmatmul_wg.tl", 256, 4, 128, 1)), (300, ("qmatmul_wg.tl", 160, 5, 128, 1)),
                (384, ("qmatmul_wg.tl", 192, 4, 128, 1)), (512, ("qmatmul_wg.tl", 256, 4, 128, 1))):
    name, _, d = tl.ops._instance(m, p70, 90, 132)
    got = (name, None) if name != "qmatmul_wg.tl" else (name, d["BM"], d["S"], d["PB"], d["MB"])
    assert got == want, (m, got, want)
    print("sm_90 instance m=%d: %s" % (m, " ".join(map(str, got))))
# qmatmul_m8.tl's heuristic instance (no tune cache) for the 70B layer's
# shapes on an H100 or H200 (132 SMs), m = 1 and 16 (docs/performance.md,
# "The user's path").
for (n, k, wt), want1, want16 in (((57344, 8192, "i4"), (2, 4, 1), (1, 3, 1)), ((57344, 8192, "u2"), (4, 4, 1), (1, 3, 1)),
                                  ((57344, 8192, "u8"), (1, 3, 1), (1, 4, 1)), ((57344, 8192, "u6"), (1, 3, 1), (1, 3, 1)),
                                  ((57344, 8192, "u1"), (4, 2, 1), (1, 3, 1)),
                                  ((8192, 28672, "i4"), (4, 4, 2), (2, 4, 2)),
                                  ((10240, 8192, "i4"), (4, 4, 1), (2, 4, 2)), ((8192, 8192, "i4"), (4, 4, 1), (2, 4, 2))):
    pw = tl.ops.PackedWeights(None, None, k, n, wt, 128, 0, False, "f16")
    for m, want in ((1, want1), (16, want16)):
        name, _, d = tl.ops._instance(m, pw, 90, 132)
        got = (d["W"], d["S"], d["KS"])
        assert name == "qmatmul_m8.tl" and d["SA"] == 1 and got == want, (n, k, wt, m, d, want)
        print("m8 instance %dx%d %s m=%d: W=%d S=%d KS=%d" % ((n, k, wt, m) + got))
# explain_matmul on the VM: the file, the values and their source.
e = tl.ops.explain_matmul(np.zeros((3, 256), np.float16), p)
assert e["kernel"] == "qmatmul_m8.tl" and e["source"] == "heuristic" and e["defines"]["SA"] == 1, e
print("explain m=3: %s W=%d S=%d KS=%d (%s)" % (e["kernel"], e["defines"]["W"], e["defines"]["S"],
                                                 e["defines"]["KS"], e["source"]))
# bad inputs


def refuses(fn, want):
    try:
        fn()
    except ValueError as e:
        assert want in str(e), e
        print("refused:", str(e).splitlines()[0])
    else:
        raise AssertionError(want)


for fn, want in ((lambda: tl.ops.pack_weights(np.zeros((100, 64), np.int64), np.zeros((1, 64))), "K must be a multiple"),
                 (lambda: tl.ops.pack_weights(np.full((128, 64), 16), np.zeros((1, 64))), "bit patterns"),
                 (lambda: tl.ops.quant_matmul(np.zeros((2, 100), np.float16), p), "expected shape [m, 256]")):
    refuses(fn, want)

# The KV cache and decode attention: two appends (20 + 17 tokens, a split
# count that leaves some splits short), against scripts/decode_attn.py's
# quantiser (the cache bit for bit) and float64 attention (its bound).
import importlib.util, os  # noqa: E401,E402
spec = importlib.util.spec_from_file_location(
    "decode_attn_ref", os.path.join(os.environ["TL_KERNELS"], "..", "scripts", "decode_attn.py"))
ref_attn = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref_attn)
for kt in ("u4", "u8", "f16"):
    b, hq, hkv, d, l = 1, 8, 2, 64, 37
    kk = (rng.standard_normal((b, hkv, l, d)) + rng.uniform(-1, 1, (b, hkv, l, 1))).astype(np.float16)
    vv = rng.standard_normal((b, hkv, l, d)).astype(np.float16)
    q = rng.standard_normal((b, hq, d)).astype(np.float16)
    cache = tl.ops.kv_cache(b, hkv, d, 40, kt=kt)
    tl.ops.kv_append(cache, kk[:, :, :20], vv[:, :, :20])
    tl.ops.kv_append(cache, kk[:, :, 20:], vv[:, :, 20:])
    kc, ks, kd = ref_attn.cache(kk, kt, cache.capacity)
    vc, vs, vd = ref_attn.cache(vv, kt, cache.capacity)
    assert (cache.kc.reshape(-1) == kc.reshape(-1)).all() and (cache.vc.reshape(-1) == vc.reshape(-1)).all()
    if kt != "f16":
        assert (cache.ks == ks).all() and (cache.vs == vs).all()
    o = tl.ops.decode_attention(q, cache, splits=3)
    want, mag = ref_attn.reference(q, kd, vd, d ** -0.5)
    err = np.abs(o.astype(np.float64) - want)
    assert (err <= 2 ** -9 * mag).all(), (kt, (err / mag).max())
    print("kv %s: cache bit for bit, attention within 2^-9 (worst %.2g of sum P|V|)"
          % (kt, (err / mag).max()))
try:
    tl.ops.kv_append(cache, np.concatenate([kk, kk], 2)[:, :, :30], np.concatenate([vv, vv], 2)[:, :, :30])
except ValueError as e:
    print("refused:", e)
# Paged pools (kv_pages): 3 sequences of 70, 0 and 33 tokens in pages dealt
# from a shuffled pool, written in two appends of different counts a
# sequence (kv_slots with counts; -1 slots skip), attended through the
# table (u2's second append at the lengths through the table, the kernel
# computing the slots); every token's codes and scales bit for bit the script's
# quantiser's in its page, the attention within 2^-9 a sequence, and the
# empty sequence 0 exactly.
for kt, page in (("u4", 16), ("f16", 32), ("u2", 64)):
    b, hq, hkv, d, l = 3, 8, 2, 64, 70
    want_lens, first = np.array([70, 0, 33], np.int32), np.array([40, 0, 33], np.int32)
    kk = (rng.standard_normal((b, hkv, l, d)) + rng.uniform(-1, 1, (b, hkv, l, 1))).astype(np.float16)
    vv = rng.standard_normal((b, hkv, l, d)).astype(np.float16)
    q = rng.standard_normal((b, hq, d)).astype(np.float16)
    maxp = -(-80 // page)
    pool = tl.ops.kv_pages(b * maxp + 3, hkv, d, page_size=page, kt=kt)
    table = rng.permutation(pool.pages)[:b * maxp].reshape(b, maxp).astype(np.int32)
    lens = np.zeros(b, np.int32)
    sl = tl.ops.kv_slots(table, lens, 40, page, counts=first)
    tl.ops.kv_append(pool, kk[:, :, :40], vv[:, :, :40], slots=sl)
    lens += first
    more = want_lens - first
    k2 = np.zeros((b, hkv, 30, d), np.float16)
    v2 = np.zeros((b, hkv, 30, d), np.float16)
    for i in range(b):
        k2[i, :, :more[i]] = kk[i, :, lens[i]:lens[i] + more[i]]
        v2[i, :, :more[i]] = vv[i, :, lens[i]:lens[i] + more[i]]
    if kt == "u2":  # at the lengths through the table, 30 tokens each (past a length: unread)
        tl.ops.kv_append(pool, k2, v2, block_table=table, lens=lens)
    else:
        tl.ops.kv_append(pool, k2, v2, slots=tl.ops.kv_slots(table, lens, 30, page, counts=more))
    lens += more
    assert (lens == want_lens).all()
    o = tl.ops.decode_attention(q, pool, block_table=table, lens=lens, splits=2)
    for x, pc, ps in ((kk, pool.kc, pool.ks), (vv, pool.vc, pool.vs)):
        codes, sz, _ = ref_attn.cache(x, kt, l)
        codes = codes.reshape(b, hkv, l, -1)
        sz = sz.reshape(b, hkv, 2, l)
        for i in range(b):
            for t in range(lens[i]):
                pg, at = table[i, t // page], t % page
                assert (pc[pg, :, at] == codes[i, :, t]).all(), (kt, i, t)
                if kt != "f16":
                    assert (ps[pg, :, :, at] == sz[i, :, :, t]).all(), (kt, i, t)
    kd, vd = ref_attn.cache(kk, kt, l)[2], ref_attn.cache(vv, kt, l)[2]
    worst = 0.0
    for i in range(b):
        if lens[i] == 0:
            assert (o[i] == 0).all(), o[i]
            continue
        want, mag = ref_attn.reference(q[i:i + 1], kd[i:i + 1, :, :lens[i]], vd[i:i + 1, :, :lens[i]], d ** -0.5)
        err = np.abs(o[i:i + 1].astype(np.float64) - want)
        assert (err <= 2 ** -9 * mag).all(), (kt, i, (err / mag).max())
        worst = max(worst, (err / mag).max())
    print("kv pages %s P=%d, lengths 70, 0, 33: pages bit for bit, attention within 2^-9 "
          "(worst %.2g of sum P|V|), the empty sequence 0" % (kt, page, worst))


# Four query tokens a sequence (speculative decoding's drafts) over the
# last pool (u2, pages of 64): o [B, Hq, 4, D], query token i of a
# sequence of n tokens seeing its first n - 3 + i.
q4 = rng.standard_normal((b, hq, 4, d)).astype(np.float16)
lens4 = np.array([70, 4, 33], np.int32)
o4 = tl.ops.decode_attention(q4, pool, block_table=table, lens=lens4)
assert o4.shape == (b, hq, 4, d)
kd, vd = ref_attn.cache(kk, "u2", l)[2], ref_attn.cache(vv, "u2", l)[2]
worst = 0.0
assert (o4[1] == 0).all()  # sequence 1's tokens: the zeros its second append wrote
for i in (0, 2):
    for t in range(4):
        m = lens4[i] - 3 + t
        kr, vr = kd[i:i + 1, :, :m], vd[i:i + 1, :, :m]
        want, mag = ref_attn.reference(q4[i:i + 1, :, t], kr, vr, d ** -0.5)
        err = np.abs(o4[i:i + 1, :, t].astype(np.float64) - want)
        assert (err <= 2 ** -9 * mag).all(), (i, t, (err / mag).max())
        worst = max(worst, (err / mag).max())
print("kv pages u2, 4 query tokens a sequence: causal among them, within 2^-9 (worst %.2g)" % worst)
bad = table.copy()
bad[2, 0] = pool.pages
refuses(lambda: tl.ops.decode_attention(q, pool, block_table=bad, lens=lens),
        "block_table: entry [2, 0] is %d, not a page of the pool" % pool.pages)
refuses(lambda: tl.ops.decode_attention(q, pool, block_table=table, lens=np.array([70, 0, maxp * page + 1], np.int32)),
        "lens: sequence 2 has %d tokens, outside 0 .. %d" % (maxp * page + 1, maxp * page))
refuses(lambda: tl.ops.decode_attention(q, pool, block_table=table[:2], lens=lens),
        "block_table: expected shape [3, max_pages], got [2, 2]")
try:
    tl.ops.kv_append(pool, kk[:, :, :1], vv[:, :, :1])
except TypeError as e:
    print("refused:", e)
else:
    raise AssertionError("kv_append without slots")
try:
    tl.ops.decode_attention(q, pool, block_table=table, lens=lens.astype(np.int64))
except TypeError as e:
    print("refused:", e)
else:
    raise AssertionError("int64 lens")
# A cache of 16400 tokens: the long-cache instance (32 tokens a warp and
# step, two stages) in the default 64 splits.
b, hq, hkv, d, l = 1, 4, 1, 64, 16400
kk = rng.standard_normal((b, hkv, l, d)).astype(np.float16)
vv = rng.standard_normal((b, hkv, l, d)).astype(np.float16)
q = rng.standard_normal((b, hq, d)).astype(np.float16)
cache = tl.ops.kv_cache(b, hkv, d, l, kt="u4")
tl.ops.kv_append(cache, kk, vv)
o = tl.ops.decode_attention(q, cache)
kd = ref_attn.cache(kk, "u4", cache.capacity)[2]
vd = ref_attn.cache(vv, "u4", cache.capacity)[2]
want, mag = ref_attn.reference(q, kd, vd, d ** -0.5)
err = np.abs(o.astype(np.float64) - want)
assert (err <= 2 ** -9 * mag).all(), (err / mag).max()
print("kv u4, L = %d: attention within 2^-9" % l)
# KC caches (kv_cache(kc=NR)): K per channel over blocks of NR tokens, the
# newest tokens in the f16 residual; appends that fill blocks across
# calls, leave a residual, fill exactly, or stay within the residual.
# The cache bit for bit the script's, the attention within its KC bound.
for kt, nr, d, parts in (("u4", 32, 64, (20, 50)), ("u8", 64, 128, (5, 58, 1)), ("u2", 32, 64, (10,))):
    b, hq, hkv = 1, 8, 2
    l = sum(parts)
    kk = (rng.standard_normal((b, hkv, l, d)) * np.exp2(rng.uniform(-1, 2, (b, hkv, 1, d)))).astype(np.float16)
    vv = rng.standard_normal((b, hkv, l, d)).astype(np.float16)
    q = rng.standard_normal((b, hq, d)).astype(np.float16)
    cache = tl.ops.kv_cache(b, hkv, d, 100, kt=kt, kc=nr)
    s0 = 0
    for t in parts:
        tl.ops.kv_append(cache, kk[:, :, s0:s0 + t], vv[:, :, s0:s0 + t])
        s0 += t
    lq = l - l % nr
    kc, ks, kd, codes, st, zt = ref_attn.cache_kc(kk[:, :, :lq], kt, cache.capacity, nr)
    vc, vs, vd = ref_attn.cache(vv[:, :, :lq], kt, cache.capacity)
    assert (cache.kc.reshape(-1) == kc).all() and (cache.ks == ks).all()
    assert (cache.vc.reshape(-1) == vc).all() and (cache.vs == vs).all()
    assert (cache.rk.reshape(-1) == ref_attn.residual(kk, lq, nr)).all()
    assert (cache.rv.reshape(-1) == ref_attn.residual(vv, lq, nr)).all()
    o = tl.ops.decode_attention(q, cache, splits=2)
    want, mag = ref_attn.reference(q, np.concatenate([kd, kk[:, :, lq:].astype(np.float64)], 2),
                                   np.concatenate([vd, vv[:, :, lq:].astype(np.float64)], 2), d ** -0.5)
    extra = np.expm1(2 * ref_attn.kc_rounding(q, codes, st, zt, d ** -0.5)) if lq else np.zeros((b, hq))
    err = np.abs(o.astype(np.float64) - want)
    assert (err <= (2 ** -9 + extra[..., None]) * mag).all(), (kt, (err / mag).max())
    print("kv %s KC nr=%d, %d + %d in f16: cache bit for bit, attention within the bound" % (kt, nr, lq, l - lq))
try:
    tl.ops.kv_cache(1, 1, 64, 64, kt="f16", kc=32)
except ValueError as e:
    print("refused:", e)

# WqAp on the binary tensor cores: q-bit weights as bit planes, x
# quantised per row to p bits, bit for bit against scripts/abq.py's
# quantiser, exact integer sums and f32 epilogue.
spec = importlib.util.spec_from_file_location(
    "abq_ref", os.path.join(os.environ["TL_KERNELS"], "..", "scripts", "abq.py"))
abq = importlib.util.module_from_spec(spec)
spec.loader.exec_module(abq)
for (m, K, N, pb, qb) in [(1, 512, 64, 8, 2), (5, 256, 64, 4, 4), (11, 256, 32, 3, 3)]:
    w = rng.integers(0, 1 << qb, size=(K, N)).astype(np.uint8)
    sw = (rng.uniform(0.5, 2.0, N) / 64).astype(np.float32)
    zw = rng.integers(0, 1 << qb, size=N).astype(np.int32)
    x = (rng.standard_normal((m, K)) * 2).astype(np.float16)
    pw = tl.ops.pack_wqap(w, sw, zw, qb)
    c = tl.ops.wqap_matmul(x, pw, p=pb)
    qa, sa, za = abq.quantise(x, pb)
    t = (qa - za[:, None]) @ (w.astype(np.int64) - zw[None, :].astype(np.int64))
    want = ((t.astype(np.float32) * sa[:, None]) * sw[None, :]).astype(np.float16)
    assert (c.view(np.uint16) == want.view(np.uint16)).all(), (m, K, N, pb, qb)
    print("W%dA%d m=%d K=%d N=%d: bit for bit" % (qb, pb, m, K, N))
print("ops_test: ok")
