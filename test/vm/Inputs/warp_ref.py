# Expected outputs of test/vm/warp.tl, computed with NumPy from the saved
# inputs: python warp_ref.py KERNEL DIR (the .npy files of tl-run --save).
import sys

import numpy as np

kernel, d = sys.argv[1], sys.argv[2]


def load(name):
    return np.load(f"{d}/{name}.npy")


def fail(what):
    sys.exit(f"{kernel}: {what} differs from the reference")


if kernel == "roles":
    x, y, z, q = load("x"), load("y"), load("z"), load("q")
    if x.std() == 0:
        fail("x (constant input)")
    odd = (np.arange(4) % 2 == 1)[:, None]
    if not (y == np.where(odd, x + x, x * x)).all():
        fail("y")
    ez = np.zeros((4, 32), np.int32)
    for r in range(1, 4):
        ez[r] = r * (r + 1) // 2
    if not (z == ez).all():
        fail("z")
    if not (q == np.maximum(x[2], 0)).all():
        fail("q")
elif kernel == "warp_dot":
    a, b = load("a").astype(np.float64), load("b").astype(np.float64)
    dd, m = load("d"), load("m")
    # Warp 1 alone: rows 16..31 (f16 products are exact in f32; the sums
    # of 16 terms round, within a few f32 ulps of the f64 product).
    e = a @ b
    if (dd[:16] != 0).any() or (m[:16] != 0).any():
        fail("the rows of warp 0")
    if not np.allclose(dd[16:], e[16:], rtol=1e-5, atol=1e-5):
        fail("d")
    if not (m[16:, 0] == dd[16:].max(axis=1)).all():
        fail("m")
    ee = load("e")
    if (ee[:16] != 0).any() or not (ee[16:] == dd[16:] - m[16:]).all():
        fail("e")
elif kernel == "handoff":
    x, y = load("x").astype(np.int64), load("y")
    if not (y == ((x * x + 1) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)).all():
        fail("y")
else:
    sys.exit(f"unknown kernel {kernel}")
print(f"{kernel}: ok")
