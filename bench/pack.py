"""Packing on the GPU: the 70B layer's four u4 g128 matrices from GPTQ
tensors (random words) through tl.formats.from_gptq and pack(), every step
on the device; the time of each (first call, with qpack.tl's compile,
and the best of three after) and the codes a second.

    python3 bench/pack.py [--bits 4] [--group 128]"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

SHAPES = (("gate_up", 8192, 57344), ("down", 28672, 8192), ("qkv", 8192, 10240), ("o", 8192, 8192))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bits", type=int, default=4, choices=(2, 3, 4, 8))
    ap.add_argument("--group", type=int, default=128)
    a = ap.parse_args()
    import torch
    import tl.formats
    dev = "cuda"
    total, codes = 0.0, 0
    for name, K, N in SHAPES:
        g = torch.Generator(device=dev).manual_seed(1)
        qw = torch.randint(-2 ** 31, 2 ** 31 - 1, (K * a.bits // 32, N), dtype=torch.int32, device=dev, generator=g)
        qz = torch.randint(-2 ** 31, 2 ** 31 - 1, (K // a.group, N * a.bits // 32), dtype=torch.int32, device=dev,
                           generator=g)
        sc = (torch.rand(K // a.group, N, device=dev, generator=g) / 16).to(torch.float16)
        times = []
        for _ in range(4):
            torch.cuda.synchronize()
            t = time.perf_counter()
            p = tl.formats.from_gptq(qw, qz, sc, bits=a.bits).pack()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t)
            del p
        best = min(times[1:])
        total += best
        codes += K * N
        print(f"pack {name} [{K}, {N}] u{a.bits} g{a.group} from GPTQ: first {times[0] * 1e3:.1f} ms, "
              f"then {best * 1e3:.1f} ms ({K * N / best / 1e9:.1f} G codes/s)", flush=True)
    print(f"pack: the layer's four matrices {total * 1e3:.1f} ms ({codes / total / 1e9:.1f} G codes/s)")


if __name__ == "__main__":
    main()
