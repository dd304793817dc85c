"""python/tl on a GPU with a !tl.tensormap parameter: @ring and @ring_sw of
test/vm/Inputs/tma_ring.tl copy tiles of a [70, 104] f16 tensor through
the tensor map into `out`; each launch's tiles must equal NumPy's (and the
VM's, from run_vm over the same arrays). The map is passed the tensor
itself (the same tensor as the pointer parameter `a`), then a strided
view of it (another map, encoded again), then the whole tensor again.
Every innermost coordinate is a multiple of 16 bytes (x0 = 8, 48, 40, 0:
TMA copies whole 16-byte chunks).
Usage: tensormap_gpu.py SRCROOT"""
import os
import sys

import numpy as np
import torch

import tl

root = sys.argv[1]
path = os.path.join(root, "test", "vm", "Inputs", "tma_ring.tl")


def ring_ref(a, y0, x0, n, bm=16, bn=64):
    """Tile t: the bm x bn box of a at (y0 + bm t, x0), 0 outside a."""
    rows, cols = a.shape
    out = np.zeros((n * bm, bn), a.dtype)
    xs = np.arange(x0, x0 + bn)
    inside = (xs >= 0) & (xs < cols)
    for t in range(n):
        for r in range(bm):
            y = y0 + bm * t + r
            if 0 <= y < rows:
                out[bm * t + r, inside] = a[y, xs[inside]]
    return out


def check(k, a, y0, x0, n, what, rows=slice(None), cols=slice(None)):
    """Launches k(a, a[rows, cols], out, y0, x0, n) and compares out with
    NumPy's tiles of a[rows, cols] and with run_vm's over the same arrays
    on the host."""
    tm = a[rows, cols]
    out = torch.full((n * 16, 64), 9.0, dtype=torch.float16, device="cuda")
    k(a, tm, out, y0, x0, n)
    torch.cuda.synchronize()
    got = out.cpu().numpy()
    an = a.cpu().numpy()
    want = ring_ref(an[rows, cols], y0, x0, n)
    assert np.array_equal(got, want), (what, np.argwhere(got != want)[:5])
    vm = np.full((n * 16, 64), 9, np.float16)
    k.run_vm(an, an[rows, cols], vm, y0, x0, n)
    assert np.array_equal(vm, want), (what, "vm")
    print(f"{what}: ok")


torch.manual_seed(0)
a = torch.randn(70, 104, device="cuda").half()
ring = tl.compile(path, kernel="ring")
for y0, x0, n in ((2, 8, 4), (-7, 48, 6), (100, 0, 3)):
    check(ring, a, y0, x0, n, f"ring y0={y0} x0={x0} n={n}")
# Rows 3..62 and columns 8..103: rows 208 bytes apart, starting 640 bytes
# into a (a multiple of 16, as TMA needs).
assert a[3:63, 8:].stride() == (104, 1) and not a[3:63, 8:].is_contiguous()
check(ring, a, -5, 40, 5, "ring over a view", slice(3, 63), slice(8, None))
ring_sw = tl.compile(path, kernel="ring_sw")
check(ring_sw, a, 5, 8, 6, "ring_sw y0=5 x0=8 n=6")
print("tensormap_gpu: ok")
