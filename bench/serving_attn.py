#!/usr/bin/env python3
"""Decode attention the way a serving system calls it, through tl.ops with
the defaults a user gets, on the GPU machine, with torch's SDPA (each
backend) timed in the same run (the median of 50 event-timed runs, the L2
cache flushed before each: bench/peers.py's timed).

  python3 bench/serving_attn.py [--quick] [--types f16,u8,u4,u2]

Hq = 32 query heads on Hkv = 8 KV heads, D = 128, one new token a
sequence. For each cache type:
  contiguous  tl.ops.kv_cache + decode_attention (every sequence L tokens)
  paged P     tl.ops.kv_pages with pages of P = 16, 64 and 256 tokens dealt
              in a shuffled order, decode_attention through the block table
              and the device's lengths (all L), max_len = L
  ragged      B = 32 sequences of lengths drawn from 1K .. 32K (seed 0),
              pages of 64, max_len = 32K
  q_len 4     four query tokens a sequence (speculative decoding's
              drafts, causal among them) at B = 8, L = 32K, pages of 64,
              against one token's time and SDPA on f16 K and V with the
              4 queries (its causal mask would hide nothing it can read)
at B = 8, L = 32K (and B = 1, L = 128K; B = 32, L = 8K without --quick).
The roofline is the bytes the kernel must read (q, the codes and the
per-token scales and zero points of the tokens each sequence holds, o)
over the copy bandwidth measured in the same run. SDPA runs on f16 K and V
of the same shape (enable_gqa), once per backend that accepts it (flash,
efficient, cuDNN, math); the ragged case has no SDPA peer (it would pad
every sequence to the longest) and is compared with its roofline only.

Before timing, each type's paged ragged output at small sizes is checked
against scripts/decode_attn.py's float64 reference (its bound, 2^-9 of
sum P|V|) from a cache written by tl.ops.kv_append through kv_slots.
"""
import importlib.util
import os
import sys
import warnings

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "python"))
import tl  # noqa: E402
from peers import copy_bandwidth, timed  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "decode_attn_ref", os.path.join(ROOT, "scripts", "decode_attn.py"))
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)

HQ, HKV, D = 32, 8, 128
BITS = {"f16": 16, "u8": 8, "u4": 4, "u2": 2}


def graphed(fn):
    """fn captured in a CUDA graph (after one eager call): its replay times
    the GPU's work without the host's"""
    fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g.replay


def both(fn):
    """(eager ms: the user's call with its host work, graph ms: the GPU's)"""
    return timed(fn), timed(graphed(fn))


def must_bytes(lens, kt):
    """q, the codes and (integer kt) the scales and zero points of every
    held token, o"""
    per_token = 2 * HKV * (D * BITS[kt] // 8 + (0 if kt == "f16" else 4))
    b = len(lens)
    return int(sum(lens)) * per_token + 2 * 2 * b * HQ * D


def random_pool(pool):
    """random codes and positive scales: timing does not depend on them"""
    for x in (pool.kc, pool.vc):
        x.random_(0, 256)
    for x in (pool.ks, pool.vs):
        x.copy_(torch.rand_like(x) * 0.01)


def paged(b, tokens_per_seq, kt, page, seed=0):
    """a pool holding each sequence's tokens in shuffled pages, its table"""
    maxp = -(-max(tokens_per_seq) // page)
    pool = tl.ops.kv_pages(b * maxp, HKV, D, page_size=page, kt=kt, device="cuda")
    random_pool(pool)
    g = torch.Generator().manual_seed(seed)
    table = torch.randperm(b * maxp, generator=g).reshape(b, maxp).to(torch.int32).cuda()
    lens = torch.tensor(tokens_per_seq, dtype=torch.int32, device="cuda")
    return pool, table, lens


def check(kt):
    """ragged paged lengths through kv_append and kv_slots, against the
    script's float64 attention"""
    rng = np.random.default_rng(1)
    b, page, lens_h = 4, 16, [1000, 1, 333, 0]
    l = max(lens_h)
    kk = (rng.standard_normal((b, HKV, l, D)) + rng.uniform(-1, 1, (b, HKV, l, 1))).astype(np.float16)
    vv = rng.standard_normal((b, HKV, l, D)).astype(np.float16)
    q = rng.standard_normal((b, HQ, D)).astype(np.float16)
    maxp = -(-l // page)
    pool = tl.ops.kv_pages(b * maxp + 1, HKV, D, page_size=page, kt=kt, device="cuda")
    table = torch.from_numpy(rng.permutation(b * maxp + 1)[:b * maxp].reshape(b, maxp)
                             .astype(np.int32)).cuda()
    zero = torch.zeros(b, dtype=torch.int32, device="cuda")
    counts = torch.tensor(lens_h, dtype=torch.int32, device="cuda")
    sl = tl.ops.kv_slots(table, zero, l, page, counts=counts)
    tl.ops.kv_append(pool, torch.from_numpy(kk).cuda(), torch.from_numpy(vv).cuda(), slots=sl)
    o = tl.ops.decode_attention(torch.from_numpy(q).cuda(), pool, block_table=table,
                                lens=counts).cpu().numpy()
    kd, vd = ref.cache(kk, kt, l)[2], ref.cache(vv, kt, l)[2]
    worst = 0.0
    for i, n in enumerate(lens_h):
        if n == 0:
            if (o[i] != 0).any():
                return False, "the empty sequence is not 0"
            continue
        want, mag = ref.reference(q[i:i + 1], kd[i:i + 1, :, :n], vd[i:i + 1, :, :n], D ** -0.5)
        err = np.abs(o[i:i + 1].astype(np.float64) - want)
        worst = max(worst, float((err / mag).max()))
    return worst <= 2 ** -9, "worst %.2g of sum P|V|" % worst


def sdpa_peers(b, l, ql=1):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q = torch.randn(b, HQ, ql, D, dtype=torch.float16, device="cuda")
    k = torch.randn(b, HKV, l, D, dtype=torch.float16, device="cuda")
    v = torch.randn(b, HKV, l, D, dtype=torch.float16, device="cuda")
    out = {}
    for name, be in (("flash", SDPBackend.FLASH_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION),
                     ("cudnn", SDPBackend.CUDNN_ATTENTION), ("math", SDPBackend.MATH)):
        try:
            with sdpa_kernel([be]), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
                out[name] = timed(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True))
        except RuntimeError:
            pass
    return out


def main():
    quick = "--quick" in sys.argv
    types = ["f16", "u8", "u4", "u2"]
    if "--types" in sys.argv:
        types = sys.argv[sys.argv.index("--types") + 1].split(",")
    print("device:", torch.cuda.get_device_name(), "torch", torch.__version__)
    bw = copy_bandwidth()
    ok = True
    for kt in types:
        good, how = check(kt)
        ok = ok and good
        print("check paged ragged %s (lengths 1000, 1, 333, 0; pages of 16): %s (%s)"
              % (kt, "ok" if good else "FAILED", how))
    shapes = [(8, 32768)] if quick else [(8, 32768), (1, 131072), (32, 8192)]
    for b, l in shapes:
        peers = sdpa_peers(b, l)
        best = min(peers.values()) if peers else None
        print("B=%d L=%d SDPA f16: %s" % (b, l, ", ".join("%s %.4f ms" % kv for kv in peers.items())))
        for kt in types:
            roof = must_bytes([l] * b, kt) / bw * 1e3
            qx = torch.randn(b, HQ, D, dtype=torch.float16, device="cuda")
            cache = tl.ops.kv_cache(b, HKV, D, l, kt=kt, device="cuda")
            random_pool(cache)
            cache.length = l
            ms, mg = both(lambda: tl.ops.decode_attention(qx, cache))
            line = ["contiguous %.4f ms eager, %.4f in a graph (%.0f %% of roofline %.4f)"
                    % (ms, mg, 100 * roof / mg, roof)]
            if best:
                line[0] += " %.2fx SDPA eager, %.2fx graph" % (best / ms, best / mg)
            cache = None
            for page in (16, 64, 256):
                pool, table, lens = paged(b, [l] * b, kt, page)
                mp, pg = both(lambda: tl.ops.decode_attention(qx, pool, block_table=table,
                                                              lens=lens, max_len=l))
                line.append("P=%d %.4f eager, %.4f graph (%+.1f %%)" % (page, mp, pg,
                                                                       100 * (pg / mg - 1)))
                pool = None
            print("B=%d L=%d %s: %s" % (b, l, kt, "; ".join(line)))
    rng = np.random.default_rng(0)
    lens_r = [int(x) for x in rng.integers(1024, 32769, 32)]
    for kt in types:
        pool, table, lens = paged(32, lens_r, kt, 64)
        qx = torch.randn(32, HQ, D, dtype=torch.float16, device="cuda")
        ms, mg = both(lambda: tl.ops.decode_attention(qx, pool, block_table=table, lens=lens,
                                                      max_len=32768))
        roof = must_bytes(lens_r, kt) / bw * 1e3
        print("ragged B=32 L=1K..32K (sum %d) %s P=64: %.4f ms eager, %.4f graph (%.0f %% of "
              "roofline %.4f)" % (sum(lens_r), kt, ms, mg, 100 * roof / mg, roof))
        pool = None
    b, l = 8, 32768
    peers = sdpa_peers(b, l, ql=4)
    best = min(peers.values()) if peers else None
    for kt in types:
        pool, table, lens = paged(b, [l] * b, kt, 64)
        q1 = torch.randn(b, HQ, D, dtype=torch.float16, device="cuda")
        q4 = torch.randn(b, HQ, 4, D, dtype=torch.float16, device="cuda")
        _, m1 = both(lambda: tl.ops.decode_attention(q1, pool, block_table=table, lens=lens,
                                                     max_len=l))
        m4e, m4 = both(lambda: tl.ops.decode_attention(q4, pool, block_table=table, lens=lens,
                                                       max_len=l))
        print("q_len 4 B=%d L=%d %s P=64: %.4f ms eager, %.4f graph (one token %.4f: %.2fx the "
              "time for 4x the queries)%s" % (b, l, kt, m4e, m4, m1, m4 / m1,
                                              " %.2fx SDPA" % (best / m4) if best else ""))
        pool = None
    print("checks:", "ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
