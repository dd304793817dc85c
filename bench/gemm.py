#!/usr/bin/env python3
"""The f16 matrix product benchmark (kernels/gemm.tl: C = A W^T, both
operands read from shared memory by warpgroup mma on sm_90a) on the GPU
machine, with cuBLAS (torch.matmul of A and W^T) timed in the same run the
way tl-run --bench times TL's kernels (the median of 50 event-timed runs,
the L2 cache flushed before each; bench/peers.py's helper).

  python3 bench/gemm.py [--bin DIR] [--shapes 8192x8192x8192,...]
                        [--configs 128x256x4[xPB],...]
                        [--kernels gemm,gemm_tma,gemm_ring,gemm_ws]
                        [--no-checks]

For each shape MxNxK (default 8192^3, 4096^3, 2048^3 and the 70B layer's
MLP at M = 4096: 4096x28672x8192): each TL kernel (kernels/gemm.tl,
copies by cp.async; kernels/gemm_tma.tl, copies by TMA; kernels/
gemm_ring.tl, copies by TMA handed over by a ring; kernels/gemm_ws.tl,
the same with a producer warpgroup on PB persistent blocks: without PB,
each of the SMs rounded down to a multiple of 16 and the SMs), the best
of its candidate tilings BMxBNxS[xPB], in TFLOP/s, and cuBLAS's. Before timing, each
tiling is checked on a ragged shape (1000x1000x1000) against
scripts/gemm.py's float64 product and bound (--no-checks skips it).
"""
import argparse
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from tlrun import median_of, summary, tl_run  # noqa: E402

KERNELS = {"gemm": os.path.join(ROOT, "kernels", "gemm.tl"),
           "gemm_tma": os.path.join(ROOT, "kernels", "gemm_tma.tl"),
           "gemm_ring": os.path.join(ROOT, "kernels", "gemm_ring.tl"),
           "gemm_ws": os.path.join(ROOT, "kernels", "gemm_ws.tl")}
SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (2048, 2048, 2048), (4096, 28672, 8192)]
CONFIGS = [(128, 256, 4), (128, 256, 3), (128, 128, 4), (128, 128, 6), (256, 128, 3),
           (256, 128, 4)]


SMS = 132  # the device's SMs (main() asks torch): gemm_ws.tl's PB by default


def cfg_name(cfg):
    return "BM=%d BN=%d S=%d" % cfg[:3] + (" PB=%d" % cfg[3] if len(cfg) > 3 else "")


def instance(cfg, m, n, k, kernel="gemm"):
    bm, bn, s = cfg[:3]
    args = {"a": "rand:f16:%dx%d" % (m, k), "w": "rand:f16:%dx%d" % (n, k),
            "c": "zeros:f16:%dx%d" % (m, n), "m": m, "n": n, "k": k}
    if kernel in ("gemm_tma", "gemm_ring", "gemm_ws"):  # tensor maps over a and w (boxes from the types)
        args.update(ta="tmap:a", tw="tmap:w")
    d = {"BM": bm, "BN": bn, "S": s}
    if kernel == "gemm_ws":
        d["PB"] = cfg[3] if len(cfg) > 3 else SMS
    return d, args


def check(tlbin, cfg, kernel):
    import numpy as np
    import gemm
    m = n = k = 1000
    d, a = instance(cfg, m, n, k, kernel)
    with tempfile.TemporaryDirectory() as tmp:
        saves = []
        for name in "awc":
            saves += ["--save", "%s=%s/%s.npy" % (name, tmp, name)]
        rc, out = tl_run(tlbin, KERNELS[kernel], d, a, ["--no-vm-check", "--seed", "7"] + saves)
        if rc:
            print("check %s %s: tl-run failed:\n%s" % (kernel, cfg, out))
            return False
        ok = gemm.check(*(np.load("%s/%s.npy" % (tmp, x)) for x in "awc"))
        print("check %s %s: %s" % (kernel, cfg_name(cfg), "passed" if ok else "FAILED"))
        return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--shapes", default="")
    ap.add_argument("--configs", default="")
    ap.add_argument("--kernels", default="gemm,gemm_tma")
    ap.add_argument("--no-checks", action="store_true")
    args = ap.parse_args()
    shapes = ([tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
              if args.shapes else SHAPES)
    configs = ([tuple(int(x) for x in c.split("x")) for c in args.configs.split(",")]
               if args.configs else CONFIGS)
    kernels = args.kernels.split(",")
    import torch
    from peers import copy_bandwidth, timed
    global SMS
    SMS = torch.cuda.get_device_properties(0).multi_processor_count
    pbs = sorted({SMS // 16 * 16 or SMS, SMS})

    def tilings(kn):
        """gemm_ws.tl's tilings without PB run with each of pbs; the other
        kernels' ignore PB."""
        if kn != "gemm_ws":
            return list(dict.fromkeys(c[:3] for c in configs))
        return [c + (pb,) for c in configs if len(c) == 3 for pb in pbs] + [c for c in configs if len(c) > 3]
    print("device:", torch.cuda.get_device_name(), "torch", torch.__version__)
    bw = copy_bandwidth()
    checks = "skipped"
    if not args.no_checks:
        checks = "passed" if all([check(args.bin, c, kn) for kn in kernels for c in tilings(kn)]) \
            else "FAILED"
    lines = []
    for m, n, k in shapes:
        flops = 2.0 * m * n * k
        a = torch.randn(m, k, dtype=torch.float16, device="cuda")
        w = torch.randn(n, k, dtype=torch.float16, device="cuda")
        peer = timed(lambda: torch.matmul(a, w.t()))
        del a, w
        line = "gemm f16 %dx%dx%d: cuBLAS %.4f ms (%.1f TFLOP/s)" % (m, n, k, peer, flops / peer / 1e9)
        for kn in kernels:
            best = None
            for cfg in tilings(kn):
                d, args_ = instance(cfg, m, n, k, kn)
                rc, out = tl_run(args.bin, KERNELS[kn], d, args_,
                                 ["--bench", "--json", "--no-vm-check", "--flops", str(int(flops))])
                t = median_of(out) if rc == 0 else None
                print("  %s %dx%dx%d %s: %s" % (kn, m, n, k, cfg_name(cfg),
                      "%.4f ms %.1f TFLOP/s" % (t, flops / t / 1e9) if t else
                      "failed: " + out.strip().splitlines()[-1] if out.strip() else "failed"))
                if t and (best is None or t < best[0]):
                    best = (t, cfg)
            if best:
                line += "; %s %.4f ms (%.1f TFLOP/s, %s), %.1f%% of cuBLAS" % (
                    kn, best[0], flops / best[0] / 1e9, cfg_name(best[1]), 100 * peer / best[0])
        print(line)
        lines.append(line)
    summary(bw, checks, lines)


if __name__ == "__main__":
    main()
