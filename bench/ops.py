#!/usr/bin/env python3
"""The quantised matmul on the user's path: tl.ops.quant_matmul on torch
CUDA tensors with the defaults a user gets (the heuristic's instance, no
tune cache), then after tl.ops.tune_matmul (the tune cache's choice), with
the peers timed in the same run the way tl-run --bench times (the median of
50 event-timed runs, the L2 cache flushed before each).

  python3 bench/ops.py [--m 1,16] [--types u1,u2,...] [--no-tune] [--no-layer]
                       [--marlin DIR] [--tune-types]

The Llama-3.3-70B layer (u4 g128: gate_up 57344 x 8192, down 8192 x
28672, qkv 10240 x 8192, o 8192 x 8192, their sum) at each m, and every
listed weight type at m on gate_up's shape, each against its own roofline:
the bytes that must move (the codes, the f16 scales, x and the output)
over the copy bandwidth measured in the same run. Peers: cuBLAS f16
(torch.matmul), tinygemm int4 (torch._weight_int4pack_mm) and, with
--marlin DIR (a directory holding the built marlin_cuda extension), Marlin.
The weights are random packed bytes (random codes time the same as real
ones); tl.ops's correctness is tested elsewhere (test/python, test/gpu).
"""
import argparse
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import tl  # noqa: E402
from peers import copy_bandwidth, timed, w4_peers  # noqa: E402

G = 128
LAYER = [("gate_up", 57344, 8192), ("down", 8192, 28672), ("qkv", 10240, 8192), ("o", 8192, 8192)]
TYPES = ["u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "i2", "i3", "i4", "i5", "i6", "i7", "i8",
         "f3e1m1", "f4e2m1", "f5e2m2", "f6e3m2", "f6e2m3", "f7e3m3", "f8e4m3", "f8e5m2"]


def packed(n, k, wtype):
    """Random packed weights of the layout tl.ops.pack_weights writes."""
    bits = tl.ops._bits(wtype)
    ch = G * 64 * bits // 4096
    b = torch.randint(0, 256, (n // 64, k // G, ch, 32, 16), dtype=torch.uint8, device="cuda")
    s = (torch.rand(k // G, 1, n, device="cuda") * 2 - 1).half() / (1 << (bits - 1))
    return tl.ops.PackedWeights(b, s, k, n, wtype, G, 0, False, "f16")


def roofline_ms(bw, m, n, k, bits):
    return (n * k * bits / 8 + (k // G) * n * 2 + m * k * 2 + m * n * 2) / bw * 1e3


def time_tl(x, p, tune):
    out = torch.empty(x.shape[0], p.N, dtype=torch.float16, device="cuda")
    choice = None
    if tune:
        choice = tl.ops.tune_matmul(x, p)
    ms = timed(lambda: tl.ops.quant_matmul(x, p, out=out))
    e = tl.ops.explain_matmul(x, p)
    print("  %s %s: %d registers, %d bytes local, %d blocks an SM%s" % (
        e["kernel"], e["source"], e["registers"], e["local_bytes"], e["blocks_per_sm"],
        ", %d KB of weights in flight an SM (%d B a step)" % (e["bytes_in_flight_per_sm"] // 1024, e["step_bytes"])
        if "step_bytes" in e else ""), flush=True)
    return ms, choice


def check(types, ms):
    """Every instance of the tuning space (tl.ops._m8_space) against a
    float64 reference of the dequantised product on real packed codes
    (tl.ops.pack_weights), norm-wise within 2^-10 as test/python's; then
    the default choice through quant_matmul."""
    import numpy as np
    rng = np.random.default_rng(7)
    k, n = 8192, 4096
    bad = 0
    for wt in types:
        bits = tl.ops._bits(wt)
        codes = rng.integers(0, 1 << bits, size=(k, n))
        sc = (rng.uniform(-1, 1, size=(k // G, n)) / (1 << max(bits - 1, 0))).astype(np.float16)
        p = tl.ops.pack_weights(torch.from_numpy(codes).cuda(), torch.from_numpy(sc).cuda(), wtype=wt, group=G)
        v = torch.from_numpy(codes).cuda().double()
        if wt[0] == "i":
            v = torch.where(v >= 1 << (bits - 1), v - (1 << bits), v)
        s64 = torch.from_numpy(sc).cuda().double().repeat_interleave(G, 0)
        wd = (v * s64).half().double()
        for m in ms:
            x = torch.randn(m, k, dtype=torch.float16, device="cuda")
            ref = x.double() @ wd
            mag = x.double().abs() @ wd.abs()
            sp = tl.ops._m8_space(p)
            for w in sp["W"]:
                for st in sp["S"]:
                    for ks in sp["KS"]:
                        d = dict(K=k, N=n, G=G, WT=wt, AT="f16", ZP=0, PC=0, BN=64, W=w, S=st, KS=ks, SA=1)
                        if m > 8:
                            d["R"] = 2
                        kern = tl.ops._kernel("qmatmul_m8.tl", kernel="qmatmul_m8", **d)
                        out = torch.empty(m, n, dtype=torch.float16, device="cuda")
                        kern(*tl.ops._m8_args(x, p, m, out, True))
                        torch.cuda.synchronize()
                        err = ((out.double() - ref).abs() / mag.clamp_min(1e-30)).max().item()
                        ok = err <= 2 ** -10
                        bad += not ok
                        print("check %s m=%d W=%d S=%d KS=%d: %s (norm-wise error %.2g)" % (
                            wt, m, w, st, ks, "ok" if ok else "FAIL", err), flush=True)
            out = tl.ops.quant_matmul(x, p)
            err = ((out.double() - ref).abs() / mag.clamp_min(1e-30)).max().item()
            bad += not err <= 2 ** -10
            print("check %s m=%d quant_matmul: %s (%.2g)" % (wt, m, "ok" if err <= 2 ** -10 else "FAIL", err))
    print("checks: %d failed" % bad, flush=True)
    return bad


def fmt(choice):
    if not choice:
        return "-"
    return ",".join("%s%d" % (k, v) for k, v in choice.items())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", default="1,16")
    ap.add_argument("--types", default=",".join(TYPES))
    ap.add_argument("--no-tune", action="store_true")
    ap.add_argument("--no-layer", action="store_true")
    ap.add_argument("--tune-types", action="store_true", help="tune every type too (slower)")
    ap.add_argument("--marlin", default=None)
    ap.add_argument("--check", action="store_true", help="only check every instance against float64")
    o = ap.parse_args()
    if o.check:
        sys.exit(1 if check(["i4", "u2", "u1"], [1, 16]) else 0)
    marlin = None
    if o.marlin:
        sys.path.insert(0, o.marlin)
        try:
            import marlin_cuda as marlin
        except ImportError as e:
            print("marlin unavailable:", e)
    torch.manual_seed(0)
    print("device:", torch.cuda.get_device_name(), "torch", torch.__version__)
    bw = copy_bandwidth()
    ms_list = [int(v) for v in o.m.split(",")]
    if not o.no_layer:
        for m in ms_list:
            tot = dict(dflt=0.0, tuned=0.0, roof=0.0, cublas=0.0, tinygemm=0.0, marlin=0.0)
            for name, n, k in LAYER:
                p = packed(n, k, "i4")
                x = torch.randn(m, k, dtype=torch.float16, device="cuda")
                d, _ = time_tl(x, p, False)
                t, ch = (d, None) if o.no_tune else time_tl(x, p, True)
                r = roofline_ms(bw, m, n, k, 4)
                pe = {{"cublas_f16": "cublas", "tinygemm_int4": "tinygemm"}.get(key, key): v
                      for key, v in w4_peers(m, n, k, G, marlin).items()}
                print("70B %-7s m=%-2d default %.4f tuned %.4f (%s) roofline %.4f | %s" % (
                    name, m, d, t, fmt(ch), r, " ".join("%s %.4f" % kv for kv in pe.items())), flush=True)
                for key, v in (("dflt", d), ("tuned", t), ("roof", r)):
                    tot[key] += v
                for key, v in pe.items():
                    tot[key] += v
            print("70B layer m=%d: default %.4f ms (%.0f%% of %.4f), tuned %.4f ms (%.0f%%) | cuBLAS f16 %.4f, "
                  "tinygemm %.4f, Marlin %s" % (
                      m, tot["dflt"], 100 * tot["roof"] / tot["dflt"], tot["roof"], tot["tuned"],
                      100 * tot["roof"] / tot["tuned"], tot["cublas"], tot["tinygemm"],
                      "%.4f" % tot["marlin"] if marlin else "-"), flush=True)
    name, n, k = LAYER[0]
    for m in ms_list:
        for wt in o.types.split(","):
            p = packed(n, k, wt)
            x = torch.randn(m, k, dtype=torch.float16, device="cuda")
            d, _ = time_tl(x, p, False)
            tune = o.tune_types and not o.no_tune
            t, ch = time_tl(x, p, True) if tune else (d, None)
            r = roofline_ms(bw, m, n, k, tl.ops._bits(wt))
            print("type %-7s m=%-2d %s: default %.4f ms (%.0f%%) tuned %.4f ms (%.0f%%, %s) roofline %.4f" % (
                wt, m, name, d, 100 * r / d, t, 100 * r / t, fmt(ch), r), flush=True)
            del p


if __name__ == "__main__":
    main()
