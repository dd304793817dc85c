#!/usr/bin/env python3
"""Peer timings for docs/performance.md, measured the way tl-run --bench
measures TL's kernels: the median of 50 event-timed runs, the L2 cache
flushed (a 256 MiB buffer written) before each.

  python3 bench/peers.py           (needs PyTorch with CUDA)

Prints one line per case: name, shape, median milliseconds.
"""
import statistics

import torch


def timed(fn, runs=50):
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for _ in range(5):
        fn()
    times = []
    for _ in range(runs):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def copy_bandwidth():
    """The device's copy bandwidth in bytes a second, the denominator of
    every roofline the benches print: a device-to-device copy of 1 GiB,
    read plus written, timed as above; the line is printed."""
    x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    ms = timed(lambda: y.copy_(x), runs=20)
    del x, y
    bw = 2 * (1 << 30) / (ms * 1e-3)
    print("copy bandwidth: %.0f GB/s (1 GiB read + written, %.3f ms)" % (bw / 1e9, ms))
    return bw


def w4_peers(m, n, k, g=128, marlin=None):
    """The quantised matmul's peers at [m, k] x [k, n], timed as above:
    cuBLAS f16 (`cublas_f16`), tinygemm int4 with groups of g
    (`tinygemm_int4`, where this torch has it) and, given the built
    marlin_cuda module, Marlin (`marlin`; random codes time the same)."""
    out = {}
    a = torch.randn(m, k, dtype=torch.float16, device="cuda")
    b = torch.randn(k, n, dtype=torch.float16, device="cuda")
    out["cublas_f16"] = timed(lambda: a @ b)
    del b
    try:
        w = torch.randint(0, 256, (n, k // 2), dtype=torch.uint8, device="cuda")
        wp = torch.ops.aten._convert_weight_to_int4pack(w, 8)
        sz = torch.randn(k // g, n, 2, dtype=torch.bfloat16, device="cuda")
        ab = a.to(torch.bfloat16)
        out["tinygemm_int4"] = timed(lambda: torch.ops.aten._weight_int4pack_mm(ab, wp, g, sz))
    except Exception as e:  # an API that moved between torch versions
        print("  tinygemm unavailable: %s" % str(e).splitlines()[0])
    if marlin:
        bm = torch.randint(-2 ** 31, 2 ** 31 - 1, (k // 16, n * 16 // 8), dtype=torch.int32, device="cuda")
        c = torch.empty(m, n, dtype=torch.float16, device="cuda")
        s = torch.randn(k // g, n, dtype=torch.float16, device="cuda") / 64
        ws = torch.zeros(n // 128 * 16, dtype=torch.int32, device="cuda")
        out["marlin"] = timed(lambda: marlin.mul(a, bm, c, s, ws, -1, -1, -1, 16))
    return out


def main():
    torch.manual_seed(0)
    print("device:", torch.cuda.get_device_name(), "torch", torch.__version__)
    for m in (16, 64, 256, 4096):
        a = torch.randn(m, 1024, dtype=torch.float16, device="cuda")
        b = torch.randn(1024, 1024, dtype=torch.float16, device="cuda")
        t = timed(lambda: a @ b)
        print("peer cublas_f16_matmul m=%d n=k=1024 %.4f ms %.1f TFLOP/s" %
              (m, t, 2 * m * 1024 * 1024 / t / 1e9))
    n = 1 << 24
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    t = timed(lambda: x + y)
    print("peer torch_add_f32 n=%d %.4f ms %.0f GB/s" % (n, t, 12 * n / t / 1e6))
    x = torch.randn(4096, 1024, device="cuda")
    t = timed(lambda: torch.softmax(x, dim=1))
    print("peer torch_softmax_f32 4096x1024 %.4f ms %.0f GB/s" % (t, 8 * 4096 * 1024 / t / 1e6))


if __name__ == "__main__":
    main()
