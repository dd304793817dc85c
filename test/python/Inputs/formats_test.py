"""tl.formats on the CPU VM: GPTQ (2, 3, 4 and 8 bits, both zero-point
conventions, act-order), AWQ and HQQ tensors written here from each
format's definition (docs/formats.md), imported, and dequantised bit for
bit against a dequantisation of the same tensors written here from the
definition (per element, Python integers: independent of tl.formats'
vectorised unpacking); then packed and multiplied through tl.ops on the
VM against a float64 reference (norm-wise bound 2^-10, as ops_test.py's);
TL's packed form through a safetensors file and back, bit for bit; bad
tensors and bad files refused with the argument or the file named."""
import os
import sys
import tempfile
import numpy as np
import tl
import tl.formats as tf

rng = np.random.default_rng(11)


def stream_words(codes_1d, bits):
    """Little-endian bit stream of codes -> 32-bit words (uint32 -> int32)."""
    v = 0
    for i, c in enumerate(codes_1d):
        v |= int(c) << (bits * i)
    n = len(codes_1d) * bits // 32
    return [(v >> (32 * j)) & 0xFFFFFFFF for j in range(n)]


def to_i32(words):
    return np.array(words, dtype=np.uint64).astype(np.uint32).view(np.int32)


def gptq_tensors(K, N, bits, g, zero_offset, act_order):
    q = rng.integers(0, 1 << bits, size=(K, N))
    groups = K // g
    z = rng.integers(zero_offset, 1 << bits, size=(groups, N))  # real zero points
    s = (rng.uniform(0.5, 1.5, size=(groups, N)) / (1 << bits)).astype(np.float16)
    if act_order:
        rank = rng.permutation(K)
        g_idx = (rank // g).astype(np.int32)
    else:
        g_idx = (np.arange(K) // g).astype(np.int32)
    qweight = np.stack([to_i32(stream_words(q[:, n], bits)) for n in range(N)], axis=1)
    stored = z - zero_offset
    qzeros = np.stack([to_i32(stream_words(stored[j], bits)) for j in range(groups)], axis=0)
    return q, z, s, g_idx, qweight, qzeros


def gptq_reference(qweight, qzeros, scales, g_idx, bits, zero_offset):
    """W[k, n] = scales[g_idx[k], n] (q[k, n] - (stored zero + offset)), each
    code read from its column's (or row's) 32-bit words one bit at a time."""
    K = qweight.shape[0] * 32 // bits
    N = qweight.shape[1]
    u = qweight.view(np.uint32)
    uz = qzeros.view(np.uint32)

    def field(words, i):
        v = 0
        for t in range(bits):
            bit = bits * i + t
            v |= ((int(words[bit // 32]) >> (bit % 32)) & 1) << t
        return v
    W = np.empty((K, N), np.float32)
    for n in range(N):
        col = u[:, n]
        for k in range(K):
            gk = int(g_idx[k])
            zq = field(uz[gk], n) + zero_offset
            W[k, n] = np.float32(field(col, k) - zq) * np.float32(scales[gk, n])
    return W


def awq_tensors(K, N, g):
    order = (0, 2, 4, 6, 1, 3, 5, 7)
    q = rng.integers(0, 16, size=(K, N))
    groups = K // g
    z = rng.integers(0, 16, size=(groups, N))
    s = (rng.uniform(0.5, 1.5, size=(groups, N)) / 16).astype(np.float16)

    def pack(a):
        out = np.zeros((a.shape[0], a.shape[1] // 8), np.uint64)
        for j in range(a.shape[1] // 8):
            for i in range(8):
                out[:, j] |= a[:, 8 * j + order[i]].astype(np.uint64) << np.uint64(4 * i)
        return out.astype(np.uint32).view(np.int32)
    return q, z, s, pack(q), pack(z)


def awq_reference(qweight, qzeros, scales):
    order = (0, 2, 4, 6, 1, 3, 5, 7)
    K, C = qweight.shape
    g = K // scales.shape[0]
    u, uz = qweight.view(np.uint32), qzeros.view(np.uint32)
    W = np.empty((K, 8 * C), np.float32)
    for k in range(K):
        for j in range(C):
            for i in range(8):
                n = 8 * j + order[i]
                qv = (int(u[k, j]) >> (4 * i)) & 15
                zv = (int(uz[k // g, j]) >> (4 * i)) & 15
                W[k, n] = np.float32(qv - zv) * np.float32(scales[k // g, n])
    return W


def matmul_check(imp, m, label):
    p = imp.pack()
    x = rng.uniform(-1, 1, size=(m, imp.K)).astype(np.float16)
    y = tl.ops.quant_matmul(x, p)
    w = imp.dequantize().astype(np.float16).astype(np.float64)
    r = x.astype(np.float64) @ w
    sc = np.abs(x.astype(np.float64)) @ np.abs(w)
    err = (np.abs(y.astype(np.float64) - r) / np.maximum(sc, 1e-30)).max()
    assert err <= 2 ** -10, (label, err)
    return p, x, y, err


# GPTQ: every width GPTQ stores, both zero-point conventions, act-order.
for bits, zo, act in ((4, 1, False), (4, 1, True), (4, 0, False), (2, 1, True), (3, 1, False),
                      (3, 0, True), (8, 1, False)):
    K, N, g = 128, 64, 32
    q, z, s, g_idx, qw, qz = gptq_tensors(K, N, bits, g, zo, act)
    imp = tf.from_gptq(qw, qz, s, g_idx, bits=bits, zero_offset=zo)
    got = imp.dequantize()
    want = gptq_reference(qw, qz, s, g_idx, bits, zo)
    assert got.dtype == np.float32 and np.array_equal(got.view(np.uint32), want.view(np.uint32)), (bits, zo, act)
    assert imp.wtype == "u%d" % bits and imp.group == g and (imp.perm is not None) == act
    print("gptq u%d zero_offset=%d act_order=%d: %r bit for bit" % (bits, zo, act, imp))
# g_idx=None is k // g; a natural g_idx gives no permutation.
q, z, s, g_idx, qw, qz = gptq_tensors(256, 64, 4, 128, 1, False)
a, b = tf.from_gptq(qw, qz, s, None), tf.from_gptq(qw, qz, s, g_idx)
assert a.perm is None and b.perm is None and np.array_equal(a.codes, b.codes) and np.array_equal(a.codes, q)
print("gptq g_idx natural: no permutation")

# AWQ's interleaved nibbles.
q, z, s, qw, qz = awq_tensors(128, 64, 64)
imp = tf.from_awq(qw, qz, s)
want = awq_reference(qw, qz, s)
assert np.array_equal(imp.dequantize().view(np.uint32), want.view(np.uint32))
assert np.array_equal(imp.codes, q) and np.array_equal(imp.zeros, z.astype(np.float16))
print("awq u4: %r bit for bit" % imp)

# HQQ: [out, in] codes, flattened or 2-D meta.
N, K, g, bits = 64, 256, 64, 3
qh = rng.integers(0, 1 << bits, size=(N, K))
sh = rng.uniform(0.01, 0.1, size=(N * K // g, 1)).astype(np.float16)
zh = rng.uniform(0, 7, size=(N * K // g, 1)).astype(np.float16)
imp = tf.from_hqq(qh, sh, zh, bits, g)
want = np.empty((K, N), np.float32)
for n in range(N):
    for k in range(K):
        j = n * (K // g) + k // g
        want[k, n] = (np.float32(qh[n, k]) - np.float32(zh[j, 0])) * np.float32(sh[j, 0])
assert np.array_equal(imp.dequantize().view(np.uint32), want.view(np.uint32))
imp2 = tf.from_hqq(qh, sh.reshape(N, K // g), zh.reshape(N, K // g), bits, g)
assert np.array_equal(imp2.dequantize(), imp.dequantize())
print("hqq u3: %r bit for bit" % imp)

# MXFP4 (gpt-oss's blocks and scales), dequantised against ml_dtypes'
# e2m1 and e8m0 (an independent codec of both OCP types).
import ml_dtypes
N, K = 64, 256
blocks = rng.integers(0, 256, size=(N, K // 32, 16)).astype(np.uint8)
e8 = rng.integers(127 - 20, 127 + 6, size=(N, K // 32)).astype(np.uint8)
imp = tf.from_mxfp4(blocks, e8)
lo, hi = blocks & 15, blocks >> 4
vals = np.stack([lo, hi], axis=3).reshape(N, K).astype(np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float32)
scl = np.repeat(e8.view(ml_dtypes.float8_e8m0fnu).astype(np.float32), 32, axis=1)
want = (vals * scl).T
assert imp.wtype == "f4e2m1" and imp.group == 32
assert np.array_equal(imp.dequantize().view(np.uint32), np.ascontiguousarray(want).view(np.uint32))
assert np.array_equal(tf.from_mxfp4(blocks.reshape(N, K // 2), e8).codes, imp.codes)
print("mxfp4: %r bit for bit against ml_dtypes" % imp)
matmul_check(imp, 2, "mxfp4")
print("quant_matmul mxfp4 m=2: ok")

# Through tl.ops on the VM (act-order: x is reordered by the packing's perm).
q, z, s, g_idx, qw, qz = gptq_tensors(256, 128, 4, 128, 1, True)
p, x, y, err = matmul_check(tf.from_gptq(qw, qz, s, g_idx), 3, "gptq act-order")
print("quant_matmul gptq u4 act-order m=3: ok (norm-wise error %.2g)" % err)
q, z, s, qw, qz = awq_tensors(256, 128, 128)
matmul_check(tf.from_awq(qw, qz, s), 2, "awq")
print("quant_matmul awq u4 m=2: ok")
matmul_check(tf.from_hqq(rng.integers(0, 4, size=(128, 256)),
                         rng.uniform(0.01, 0.1, size=(128, 4)).astype(np.float16),
                         rng.integers(0, 4, size=(128, 4)).astype(np.float16), 2, 64), 1, "hqq")
print("quant_matmul hqq u2 m=1: ok")

# A checkpoint's tensors by name: every layer found, with its bias; a
# layer missing one of its tensors refused by name.
qa, za, sa, ga, qwa, qza = gptq_tensors(128, 64, 4, 32, 1, True)
sd = {"model.layers.0.mlp.up_proj.qweight": qwa, "model.layers.0.mlp.up_proj.qzeros": qza,
      "model.layers.0.mlp.up_proj.scales": sa, "model.layers.0.mlp.up_proj.g_idx": ga,
      "model.layers.0.mlp.up_proj.bias": np.ones(64, np.float16),
      "model.layers.0.input_layernorm.weight": np.ones(128, np.float16),
      "model.layers.1.self_attn.o_proj.qweight": qwa, "model.layers.1.self_attn.o_proj.qzeros": qza,
      "model.layers.1.self_attn.o_proj.scales": sa}
layers, biases = tf.from_state_dict(sd, "gptq")
assert sorted(layers) == ["model.layers.0.mlp.up_proj", "model.layers.1.self_attn.o_proj"]
assert list(biases) == ["model.layers.0.mlp.up_proj"]
assert layers["model.layers.0.mlp.up_proj"].perm is not None and layers["model.layers.1.self_attn.o_proj"].perm is None
assert np.array_equal(layers["model.layers.0.mlp.up_proj"].dequantize(), gptq_reference(qwa, qza, sa, ga, 4, 1))
mx = tf.from_state_dict({"block.0.mlp.down_proj_blocks": blocks, "block.0.mlp.down_proj_scales": e8}, "mxfp4")[0]
assert list(mx) == ["block.0.mlp.down_proj"] and mx["block.0.mlp.down_proj"].wtype == "f4e2m1"
print("from_state_dict: gptq 2 layers (act-order, bias), mxfp4 gpt-oss names")

# Shards without repacking: along n the ranks' products are y's column
# slices, along k (at group boundaries) they add up to y.
_, _, s5, g5, qw5, qz5 = gptq_tensors(512, 256, 4, 128, 1, False)
imp5 = tf.from_gptq(qw5, qz5, s5, g5)
full = imp5.pack()
xs = rng.uniform(-1, 1, size=(2, 512)).astype(np.float16)
w5 = imp5.dequantize().astype(np.float16).astype(np.float64)
r, sc = xs.astype(np.float64) @ w5, np.abs(xs.astype(np.float64)) @ np.abs(w5)
yn = np.concatenate([tl.ops.quant_matmul(xs, tf.shard(full, "n", 2, i)) for i in range(2)], axis=1)
yk = sum(tl.ops.quant_matmul(xs[:, 256 * i:256 * (i + 1)], tf.shard(full, "k", 2, i)).astype(np.float64)
         for i in range(2))
for label, yy in (("n", yn), ("k", yk)):
    err = (np.abs(yy.astype(np.float64) - r) / np.maximum(sc, 1e-30)).max()
    assert err <= 2 ** -10, (label, err)
    print("shard %s x 2: the ranks' products make y (norm-wise error %.2g)" % (label, err))
sh4 = tf.shard(full, "n", 4, 3)
assert (sh4.K, sh4.N) == (512, 64) and np.array_equal(sh4.b, full.b[3:4]) and np.array_equal(sh4.s, full.s[:, :, 192:])

# TL's packed form through a file: the same bytes, the same product.
d = tempfile.mkdtemp()
path = os.path.join(d, "layer.safetensors")
p2 = tl.ops.pack_weights(rng.integers(0, 4, size=(256, 64)), rng.uniform(-1, 1, size=(256 // 64, 64)).astype(np.float16),
                         wtype="u2", group=64)
tf.save_packed(path, {"model.layers.0.mlp.up_proj": p, "o": p2}, metadata={"model": "test"})
back = tf.load_packed(path)
for name, orig in (("model.layers.0.mlp.up_proj", p), ("o", p2)):
    got = back[name]
    assert np.array_equal(got.b, orig.b) and np.array_equal(got.s.view(np.uint16), orig.s.view(np.uint16))
    assert (got.K, got.N, got.wtype, got.group, got.zp, got.per_column, got.at) == \
        (orig.K, orig.N, orig.wtype, orig.group, orig.zp, orig.per_column, orig.at)
    assert (got.perm is None) == (getattr(orig, "perm", None) is None)
assert np.array_equal(back["model.layers.0.mlp.up_proj"].perm, p.perm)
y2 = tl.ops.quant_matmul(x, back["model.layers.0.mlp.up_proj"])
assert np.array_equal(y2.view(np.uint16), y.view(np.uint16))
tensors, meta = tf.read_safetensors(path)
assert meta["format"] == "tl.packed" and meta["version"] == "1" and meta["user.model"] == "test"
print("save_packed / load_packed: 2 layers bit for bit, product bit for bit")

# A file the safetensors package wrote reads back, and ours reads in it.
try:
    import safetensors.numpy as stn
except ImportError:
    print("safetensors package: not installed here")
else:
    arrs = {"a": rng.standard_normal((3, 5)).astype(np.float32), "b": np.arange(7, dtype=np.int64)}
    other = os.path.join(d, "other.safetensors")
    stn.save_file(arrs, other, metadata={"k": "v"})
    got, meta = tf.read_safetensors(other)
    assert all(np.array_equal(got[k], arrs[k]) for k in arrs) and meta == {"k": "v"}
    theirs = stn.load_file(path)
    assert all(np.array_equal(theirs[k], tensors[k]) for k in tensors)
    print("safetensors package: reads ours, we read its")


def refused(f, exc, *words):
    try:
        f()
    except exc as e:
        msg = str(e)
        assert all(w in msg for w in words), (msg, words)
        return msg
    raise AssertionError("accepted: %s" % (words,))


q, z, s, g_idx, qw, qz = gptq_tensors(128, 64, 4, 32, 1, False)
for f, exc, words in (
        (lambda: tf.from_gptq(qw, qz, s, bits=5), ValueError, ("bits",)),
        (lambda: tf.from_gptq(qw.astype(np.float32), qz, s), TypeError, ("qweight",)),
        (lambda: tf.from_gptq(qw, qz[:, :4], s), ValueError, ("qzeros",)),
        (lambda: tf.from_gptq(qw, qz, s[:, :32]), ValueError, ("scales",)),
        (lambda: tf.from_gptq(qw, qz, s, g_idx[:64]), ValueError, ("g_idx",)),
        (lambda: tf.from_gptq(qw, qz, s, g_idx + 7), ValueError, ("g_idx",)),
        (lambda: tf.from_gptq(qw, qz, s, np.zeros(128, np.int32)), ValueError, ("g_idx",)),
        (lambda: tf.from_gptq(None, qz, s), TypeError, ("qweight",)),
        (lambda: tf.from_gptq(qw, qz, s, zero_offset=2), ValueError, ("zero_offset",)),
        (lambda: tf.from_awq(qw, qz, s, bits=8), ValueError, ("bits",)),
        (lambda: tf.from_hqq(qh, sh, zh, 9, 64), ValueError, ("bits",)),
        (lambda: tf.from_hqq(qh, sh[:5], zh, 3, 64), ValueError, ("scales",)),
        (lambda: tf.from_hqq(qh + 8, sh, zh, 3, 64), ValueError, ("codes",)),
        (lambda: tl.ops.pack_weights(np.full((64, 64), 2.7), np.ones((1, 64)), group=64), TypeError, ("codes",)),
        (lambda: tf.from_state_dict({"a.qweight": qw, "a.scales": s}, "gptq"), ValueError, ("'a'", "a.qzeros")),
        (lambda: tf.from_state_dict({"a.weight": s}, "gptq"), ValueError, ("no gptq layers",)),
        (lambda: tf.from_state_dict({"a.qweight": qw, "a.qzeros": qz, "a.scales": s[:2]}, "gptq"), ValueError, ("layer 'a'", "qzeros")),
        (lambda: tf.from_state_dict({}, "exl2"), ValueError, ("fmt",)),
        (lambda: tf.shard(p, "m", 2, 0), ValueError, ("axis",)),
        (lambda: tf.shard(p, "n", 3, 0), ValueError, ("parts 3",)),
        (lambda: tf.shard(p, "n", 2, 2), ValueError, ("rank 2",)),
        (lambda: tf.shard(p, "k", 2, 0), ValueError, ("act-order",)),
        (lambda: tf.shard(p2, "k", 8, 0), ValueError, ("group boundaries",)),
        (lambda: tf.from_mxfp4(blocks, np.full((N, K // 32), 255, np.uint8)), ValueError, ("NaN",)),
        (lambda: tf.from_mxfp4(blocks[:, :4], e8), ValueError, ("blocks",)),
        (lambda: tf.from_mxfp4(blocks, np.full((N, K // 32), 127 + 16, np.uint8)).pack(), ValueError, ("f16",)),
        (lambda: tf.save_packed(path, {}), TypeError, ("layers",)),
        (lambda: tf.save_packed(path, {"x": 1}), TypeError, ("layers['x']",))):
    print("refused:", refused(f, exc, *words))

bad = os.path.join(d, "bad.safetensors")
with open(path, "rb") as f:
    good = f.read()
n = int.from_bytes(good[:8], "little")
cases = (("truncated", good[:len(good) - 10], "data_offsets"),
         ("short", good[:5], "not a safetensors file"),
         ("header past the end", (10 ** 6).to_bytes(8, "little") + good[8:], "header length"),
         ("not JSON", good[:8] + b"x" + good[9:], "not JSON"))
for label, data, word in cases:
    with open(bad, "wb") as f:
        f.write(data)
    print("refused %s:" % label, refused(lambda: tf.load_packed(bad), ValueError, bad, word))
tf.write_safetensors(bad, {"a": np.zeros(3, np.float32)}, {"format": "tl.packed", "version": "99"})
print("refused:", refused(lambda: tf.load_packed(bad), ValueError, "version"))
tf.write_safetensors(bad, {"a": np.zeros(3, np.float32)})
print("refused:", refused(lambda: tf.load_packed(bad), ValueError, "not TL's packed weights"))
print("refused:", refused(lambda: tf.load_packed(d), FileNotFoundError, "not a regular file"))
print("refused:", refused(lambda: tf.load_packed(os.path.join(d, "none")), FileNotFoundError, "no such file"))
print("formats: ok")
