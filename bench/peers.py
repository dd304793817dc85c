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
