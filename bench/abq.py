#!/usr/bin/env python3
"""The arbitrary-precision WqAp benchmark (kernels/abq_matmul.tl, the bit
planes of P-bit activations and Q-bit weights on the b1 tensor cores) on
the GPU machine, with its peers timed in the same run the way tl-run
--bench times TL's kernels (the median of 50 event-timed runs, the L2
cache flushed before each; bench/peers.py's helper).

  python3 bench/abq.py [--bin DIR] [--quick] [--m 1,4,8] [--types W2A8,W4A4]
                       [--shapes 4096x4096,11008x4096] [--no-checks]

For each shape (K, N) (default (4096, 4096), (1024, 8192), (11008, 4096),
(5120, 5120), (4096, 11008)), each M (1, 4, 8) and each type WqAp (W2A8,
W3A8, W4A4, W4A8, W8A8, W2A2): TL's matmul (M > 8 in row blocks of 8), the best of its candidate
tilings (BN, W, KT, S); the activation quantiser (kernels/abq_quant.tl,
which the matmul needs once per activation) timed alone; the roofline
of the matmul (its bytes: Q K N / 8 of weight planes, 16 ceildiv(P M,
16) K / 8 of activation planes, the per-column and per-row vectors and
C, over the copy bandwidth measured in the same run). Peers per (M, K, N):
cuBLAS int8 (torch._int_mm, int8 [M', K] x [K, N] -> int32, M' = M padded
to 32, the smallest it takes everywhere) and cuBLAS f16 (torch.matmul).
Prints one line per shape. Before timing, each type's matmul at (4096,
4096), M = 1 (registers) and 8 (cp.async), is checked bit for bit
against scripts/abq.py (--no-checks skips it).
"""
import importlib.util
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from tlrun import median_of, summary, tl_run  # noqa: E402
# scripts/abq.py (the reference) under another name than this file's.
_spec = importlib.util.spec_from_file_location("abq_ref", os.path.join(ROOT, "scripts", "abq.py"))
abq = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(abq)

KERNEL = os.path.join(ROOT, "kernels", "abq_matmul.tl")
QUANT = os.path.join(ROOT, "kernels", "abq_quant.tl")
SHAPES = [(4096, 4096), (1024, 8192), (11008, 4096), (5120, 5120), (4096, 11008)]
TYPES = ["W2A8", "W3A8", "W4A4", "W4A8", "W8A8", "W2A2"]
# (BN, W, KT, S): BN columns a block, W warps over k, KT mma k-blocks a
# step, S stages of cp.async through shared memory (1: straight into
# registers, double-buffered).
CONFIGS = [(64, 4, 1, 1), (64, 4, 1, 4), (32, 4, 1, 4), (32, 8, 1, 3), (32, 8, 1, 1),
           (64, 8, 1, 3), (128, 4, 1, 3), (64, 2, 2, 4), (32, 4, 2, 4), (32, 8, 2, 3),
           (64, 8, 2, 1), (32, 16, 1, 2), (32, 4, 4, 3), (128, 2, 1, 4)]
# (BN, W, KT, S, KS): k split over KS blocks (the i32 sums added in ws),
# for the shapes with fewer column blocks than SMs.
CONFIGS_KS = [(64, 4, 1, 4, 4), (32, 4, 1, 4, 4), (64, 4, 1, 4, 2), (64, 4, 2, 4, 4),
              (32, 4, 1, 4, 8), (64, 4, 1, 3, 8)]


def parse_type(t):
    q, p = t[1:].split("A")
    return int(p), int(q)


def rows(p, m):
    """The activation planes' rows: ceildiv(m, MB) tiles of 16 ceildiv(P MB,
    16), MB = min(m, 8) rows a block."""
    mb = min(m, 8)
    return -(-m // mb) * 16 * (-(-p * mb // 16))


def mm_args(m, k, n, p, q, prefix=None, cfg=None):
    if prefix:
        a = dict(ap=prefix + ".apw.npy", wp=prefix + ".wpw.npy", sa=prefix + ".sa.npy",
                 za=prefix + ".za.npy", ra=prefix + ".ra.npy", sw=prefix + ".sw.npy",
                 zw=prefix + ".zw.npy", cw=prefix + ".colsum.npy")
    else:
        a = dict(ap="rand:u32:%d" % (rows(p, m) * k // 32), wp="rand:u32:%d" % (q * n * k // 32),
                 sa="rand:f32:%dx1" % m, za="zeros:i32:%dx1" % m, ra="zeros:i32:%dx1" % m,
                 sw="rand:f32:1x%d" % n, zw="zeros:i32:1x%d" % n, cw="zeros:i32:1x%d" % n)
    a["c"] = "zeros:f16:%dx%d" % (m, n)
    a["m"] = str(m)
    # The k split's i32 sums [T M, N] and tile counters [T, N / BN].
    t, mb = -(-m // min(m, 8)), min(m, 8)
    split = cfg is not None and ks_of(cfg) > 1
    a["ws"] = "zeros:i32:%d" % (t * mb * n if split else 4)
    a["locks"] = "zeros:u32:%d" % (t * n // cfg[0] if split else 1)
    return a


def defines(m, k, n, p, q, cfg):
    bn, w, kt, st = cfg[:4]
    return dict(K=k, N=n, M=min(m, 8), P=p, Q=q, BN=bn, W=w, KT=kt, S=st, KS=ks_of(cfg))


def ks_of(cfg):
    return cfg[4] if len(cfg) > 4 else 1


def fits(k, n, cfg):
    bn, w, kt, st = cfg[:4]
    return n % bn == 0 and k % (256 * kt) == 0


def bench_tl(tlbin, m, k, n, p, q, cfg):
    if not fits(k, n, cfg):
        return None
    rc, out = tl_run(tlbin, KERNEL, defines(m, k, n, p, q, cfg), mm_args(m, k, n, p, q, cfg=cfg),
                     ["--seed", "1", "--json", "--no-vm-check"])
    t = median_of(out)
    if t is None and "shared memory" not in out:
        print("  tl-run failed (%s): %s" % (cfg, out.strip()[-300:]))
    return t


def bench_quant(tlbin, m, k, p):
    """The quantiser's best time over its warps a row."""
    args = dict(x="rand:f16:%dx%d" % (m, k), ap="zeros:u1:%dx%d" % (rows(p, m), k),
                sa="zeros:f32:%dx1" % m, za="zeros:i32:%dx1" % m, ra="zeros:i32:%dx1" % m, m=str(m))
    best = None
    for w in (16, 8, 4):
        if w > k // 256:
            continue
        rc, out = tl_run(tlbin, QUANT, dict(K=k, M=min(m, 8), P=p, W=w), args,
                         ["--seed", "1", "--json", "--no-vm-check"])
        t = median_of(out)
        if t is not None and (best is None or t < best):
            best = t
    return best


def check(tlbin, m, k, n, p, q, cfg, seed):
    with tempfile.TemporaryDirectory() as d:
        pre = os.path.join(d, "t")
        abq.gen(pre, m, k, n, p, q, seed, min(m, 8))
        rc, out = tl_run(tlbin, KERNEL, defines(m, k, n, p, q, cfg), mm_args(m, k, n, p, q, pre, cfg),
                         ["--no-vm-check", "--save", "c=%s.c.npy" % pre])
        if rc:
            print("  check: tl-run failed: %s" % out.strip()[-300:])
            return False
        return abq.check(pre, p, q, True) == 0


def peers(torch, m, k, n):
    out = {}
    a = torch.randn(m, k, dtype=torch.float16, device="cuda")
    b = torch.randn(k, n, dtype=torch.float16, device="cuda")
    out["cublas_f16"] = timed(lambda: a @ b)
    del a, b
    try:
        mp = max(32, -(-m // 8) * 8)
        a8 = torch.randint(-128, 128, (mp, k), dtype=torch.int8, device="cuda")
        b8 = torch.randint(-128, 128, (n, k), dtype=torch.int8, device="cuda").t()
        out["cublas_int8"] = timed(lambda: torch._int_mm(a8, b8))
    except Exception as e:  # an API that moved between torch versions
        print("  torch._int_mm unavailable: %s" % str(e).splitlines()[0])
    return out


def main():
    argv = sys.argv
    tlbin = argv[argv.index("--bin") + 1] if "--bin" in argv else "build-dev/bin"
    ms = (1, 4, 8)
    if "--m" in argv:
        ms = tuple(int(v) for v in argv[argv.index("--m") + 1].split(","))
    types = TYPES
    if "--types" in argv:
        types = argv[argv.index("--types") + 1].split(",")
    shapes = SHAPES
    if "--shapes" in argv:
        shapes = [tuple(int(x) for x in s.split("x")) for s in argv[argv.index("--shapes") + 1].split(",")]
    configs = CONFIGS[:3] + CONFIGS_KS[:3] if "--quick" in argv else CONFIGS + CONFIGS_KS
    os.environ["TL_BIN"] = tlbin
    import torch
    global timed
    from peers import copy_bandwidth, timed  # the same flush and median as peers.py
    print("device:", torch.cuda.get_device_name(), "torch", torch.__version__)
    bw = copy_bandwidth()

    ok = True
    if "--no-checks" not in argv:
        for t in types:
            p, q = parse_type(t)
            for m, cfg in ((1, CONFIGS[0]), (8, CONFIGS[1]), (1, CONFIGS_KS[0]), (8, CONFIGS_KS[3])):
                good = check(tlbin, m, 4096, 4096, p, q, cfg, seed=10 * p + q + m)
                ok = ok and good
                print("check %s m=%d (K, N) = (4096, 4096) %s: %s" % (t, m, cfg, "ok" if good else "FAILED"))

    lines = []
    for (k, n) in shapes:
        for m in ms:
            pr = peers(torch, m, k, n)
            pl = " | ".join("%s %.4f ms" % kv for kv in pr.items())
            for t in types:
                p, q = parse_type(t)
                best = None
                for cfg in configs:
                    tm = bench_tl(tlbin, m, k, n, p, q, cfg)
                    if tm is not None and (best is None or tm < best[0]):
                        best = (tm, cfg)
                if best is None:
                    lines.append("%s K=%-6d N=%-6d m=%d: no instance ran" % (t, k, n, m))
                    print(lines[-1])
                    continue
                qt = bench_quant(tlbin, m, k, p)
                must = q * k * n // 8 + rows(p, m) * k // 8 + 12 * n + 12 * m + 2 * m * n
                roof = must / bw * 1e3
                line = ("%-5s K=%-6d N=%-6d m=%d: TL %.4f ms %s (%.0f%% of roofline %.4f ms), "
                        "quantiser %s | %s" % (t, k, n, m, best[0], best[1], 100 * roof / best[0], roof,
                                               "%.4f ms" % qt if qt is not None else "failed", pl))
                print(line)
                lines.append(line)
    summary(bw, "skipped" if "--no-checks" in argv else "passed" if ok else "FAILED", lines)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
