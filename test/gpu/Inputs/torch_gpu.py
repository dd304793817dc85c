"""python/tl on a GPU with PyTorch: a kernel on torch tensors on the
current stream and on a side stream, captured in a CUDA graph and
replayed, the quantised matmul against its float64 reference, the PTX
cache hit of a second compile, tl.autotune's cache hit, and the cost of a
launch through Python.
Usage: torch_gpu.py SRCROOT TMPDIR"""
import os
import sys
import time

import numpy as np
import torch

import tl

root, tmp = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(root, "scripts"))
import qmatmul  # noqa: E402

session = tl.Session(cache_dir=os.path.join(tmp, "cache"))

# vector_add on torch tensors: the current stream, a side stream, a graph.
k = session.compile(os.path.join(root, "kernels", "vector_add.tl"))
n = 100003
x = torch.randn(n, device="cuda")
y = torch.randn(n, device="cuda")
z = torch.zeros_like(x)
k(x, y, z, n)
torch.cuda.synchronize()
assert torch.equal(z, x + y), "vector_add on the current stream"
side = torch.cuda.Stream()
z2 = torch.zeros_like(x)
with torch.cuda.stream(side):
    k(x, y, z2, n)
side.synchronize()
assert torch.equal(z2, x + y), "vector_add on a side stream"
z3 = torch.zeros_like(x)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    k(x, y, z3, n)
assert not torch.equal(z3, x + y), "capture must not run the kernel"
graph.replay()
torch.cuda.synchronize()
assert torch.equal(z3, x + y), "vector_add replayed from a CUDA graph"
print("vector_add: current stream, side stream, graph: ok")
# What the driver compiled (registers, local memory, blocks an SM): a
# 128-thread block of a kernel this small fits the SM's 64 warps' limit
# (16 blocks) and spills nothing.
r = k.resources(x, y, z, n)
assert 0 < r["registers"] <= 64 and r["local_bytes"] == 0 and r["blocks_per_sm"] == 16, r
print("vector_add resources: %d registers, %d blocks an SM" % (r["registers"], r["blocks_per_sm"]))

# Wrong inputs are refused with a message, never launched.
for bad, what in ((lambda: k(x.cpu(), y, z, n), "a host tensor"),
                  (lambda: k(x.half(), y, z, n), "an f16 tensor for f32"),
                  (lambda: k(x[::2], y, z, n), "a strided tensor"),
                  (lambda: k(x, y, z), "a missing argument")):
    try:
        bad()
    except (TypeError, ValueError, tl.TLError) as e:
        print("refused %s: %s" % (what, str(e).splitlines()[0]))
    else:
        raise AssertionError("accepted " + what)

# The quantised matmul at a real K, against the float64 reference.
m, kk, nn = 5, 8192, 4096
p = os.path.join(tmp, "q")
qmatmul.gen(p, m, kk, nn, 128, 64, 7, 0, wt="u4", at="f16")
q = session.compile(os.path.join(root, "kernels", "qmatmul_m8.tl"), kernel="qmatmul_m8",
                    K=kk, N=nn, WT="u4", SA=1)
a = torch.from_numpy(np.load(p + ".a.npy")).cuda()
b = torch.from_numpy(np.load(p + ".b.npy")).cuda()
s = torch.from_numpy(np.load(p + ".s.npy")).cuda()
c = torch.zeros(m, nn, dtype=torch.float16, device="cuda")
ws = torch.zeros(4, dtype=torch.float32, device="cuda")
locks = torch.zeros(1, dtype=torch.int32, device="cuda").view(torch.uint32)
q(a, b, s, c, m, ws, locks)
torch.cuda.synchronize()
np.save(p + ".c.npy", c.cpu().numpy())
qmatmul.check(p, 4, False, sa=True)

# tl.ops on the GPU: a u4 KV cache filled in two appends and the decode
# attention over it, against scripts/decode_attn.py (the cache bit for
# bit, the attention within its 2^-9 bound).
import importlib.util  # noqa: E402
spec = importlib.util.spec_from_file_location("decode_attn_ref",
                                              os.path.join(root, "scripts", "decode_attn.py"))
ref_attn = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref_attn)
rng = np.random.default_rng(5)
b, hq, hkv, d, l = 2, 32, 8, 128, 4099
kk = rng.standard_normal((b, hkv, l, d)).astype(np.float16)
vv = rng.standard_normal((b, hkv, l, d)).astype(np.float16)
qq = rng.standard_normal((b, hq, d)).astype(np.float16)
cache = tl.ops.kv_cache(b, hkv, d, l, kt="u4", device="cuda")
tl.ops.kv_append(cache, torch.from_numpy(kk[:, :, :3000]).cuda(), torch.from_numpy(vv[:, :, :3000]).cuda())
tl.ops.kv_append(cache, torch.from_numpy(kk[:, :, 3000:]).cuda(), torch.from_numpy(vv[:, :, 3000:]).cuda())
o = tl.ops.decode_attention(torch.from_numpy(qq).cuda(), cache).cpu().numpy()
kc, ks, kd = ref_attn.cache(kk, "u4", cache.capacity)
_, _, vd = ref_attn.cache(vv, "u4", cache.capacity)
assert (cache.kc.cpu().numpy().reshape(-1) == kc.reshape(-1)).all(), "the K codes"
assert (cache.ks.cpu().numpy() == ks).all(), "the K scales"
want, mag = ref_attn.reference(qq, kd, vd, d ** -0.5)
worst = (np.abs(o.astype(np.float64) - want) / mag).max()
assert worst <= 2 ** -9, worst
print("kv cache u4 and decode attention (B = 2, L = 4099): ok, worst %.2g of sum P|V|" % worst)
# The same with a KC cache (K per channel over blocks of 64 tokens, the
# newest 4099 % 64 = 3 tokens in the f16 residual): three appends that
# fill blocks across calls; the cache bit for bit, the attention within
# the script's KC bound.
cache = tl.ops.kv_cache(b, hkv, d, l, kt="u4", device="cuda", kc=64)
for s0, s1 in ((0, 100), (100, 3000), (3000, l)):
    tl.ops.kv_append(cache, torch.from_numpy(kk[:, :, s0:s1]).cuda(), torch.from_numpy(vv[:, :, s0:s1]).cuda())
o = tl.ops.decode_attention(torch.from_numpy(qq).cuda(), cache).cpu().numpy()
lq = l - l % 64
kc, ks, kd, codes, st, zt = ref_attn.cache_kc(kk[:, :, :lq], "u4", cache.capacity, 64)
vc, vs, vd = ref_attn.cache(vv[:, :, :lq], "u4", cache.capacity)
assert (cache.kc.cpu().numpy().reshape(-1) == kc).all(), "the KC codes"
assert (cache.ks.cpu().numpy() == ks).all(), "the KC scales"
assert (cache.vc.cpu().numpy().reshape(-1) == vc).all(), "the V codes"
assert (cache.rk.cpu().numpy().reshape(-1) == ref_attn.residual(kk, lq, 64)).all(), "the residual"
want, mag = ref_attn.reference(qq, np.concatenate([kd, kk[:, :, lq:].astype(np.float64)], 2),
                               np.concatenate([vd, vv[:, :, lq:].astype(np.float64)], 2), d ** -0.5)
extra = np.expm1(2 * ref_attn.kc_rounding(qq, codes, st, zt, d ** -0.5))
err = np.abs(o.astype(np.float64) - want)
assert (err <= (2 ** -9 + extra[..., None]) * mag).all(), (err / mag).max()
print("kv cache u4 KC and decode attention (B = 2, L = 4099): ok, worst %.2g of sum P|V|" % (err / mag).max())

# tl.ops.wqap_matmul on the GPU: W2A8 and W4A4 at K = N = 4096, m = 1 and
# 8, bit for bit against scripts/abq.py's quantiser and f32 epilogue.
spec = importlib.util.spec_from_file_location("abq_ref", os.path.join(root, "scripts", "abq.py"))
abq = importlib.util.module_from_spec(spec)
spec.loader.exec_module(abq)
for (m, pb, qb) in ((1, 8, 2), (8, 4, 4)):
    K = N = 4096
    w = rng.integers(0, 1 << qb, size=(K, N)).astype(np.uint8)
    sw = (rng.uniform(0.5, 2.0, N) / 64).astype(np.float32)
    zw = rng.integers(0, 1 << qb, size=N).astype(np.int32)
    x = rng.standard_normal((m, K)).astype(np.float16)
    pw = tl.ops.pack_wqap(torch.from_numpy(w).cuda(), sw, zw, qb)
    got = tl.ops.wqap_matmul(torch.from_numpy(x).cuda(), pw, p=pb).cpu().numpy()
    qa, sa, za = abq.quantise(x, pb)
    t = (qa - za[:, None]) @ (w.astype(np.int64) - zw[None, :].astype(np.int64))
    want = ((t.astype(np.float32) * sa[:, None]) * sw[None, :]).astype(np.float16)
    assert (got.view(np.uint16) == want.view(np.uint16)).all(), (m, pb, qb)
    print("wqap W%dA%d m=%d K=N=4096: bit for bit" % (qb, pb, m))

# A second compile of the same instance reads the PTX cache.
t0 = time.perf_counter()
k2 = session.compile(os.path.join(root, "kernels", "vector_add.tl"))
k2.ptx()
print("second compile and PTX: %.1f ms" % ((time.perf_counter() - t0) * 1e3))

# tl.autotune on the GPU: the first call times the candidates and keeps
# the choice in the session's tune cache; the second takes it from there,
# timing nothing.
big = [torch.zeros(1 << 20, device="cuda") for _ in range(3)]
vadd = os.path.join(root, "kernels", "vector_add.tl")
log1, log2 = [], []
_, c1 = tl.autotune(vadd, {"BLOCK": [256, 512, 1024]}, args=(*big, 1 << 20),
                    session=session, log=log1)
_, c2 = tl.autotune(vadd, {"BLOCK": [256, 512, 1024]}, args=(*big, 1 << 20),
                    session=session, log=log2)
assert log1[-1].startswith("best: ") and c1 == c2, (log1, log2)
assert len(log2) == 1 and log2[0].startswith("cached "), log2
print("autotune: timed %s, then %s" % (log1[-1], log2[0].split(" (")[0]))

# Launch cost through Python: wall time of many launches of a tiny
# kernel, the GPU kept busy so that the host is what is measured.
small = torch.zeros(256, device="cuda")
for _ in range(10):
    k(small, small, small, 256)
torch.cuda.synchronize()
reps = 2000
t0 = time.perf_counter()
for _ in range(reps):
    k(small, small, small, 256)
host = (time.perf_counter() - t0) / reps * 1e6
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(reps):
    torch.add(small, small, out=small)
ref = (time.perf_counter() - t0) / reps * 1e6
torch.cuda.synchronize()
print("launch through python: %.1f us a launch (torch.add: %.1f us)" % (host, ref))
print("torch_gpu: ok")
