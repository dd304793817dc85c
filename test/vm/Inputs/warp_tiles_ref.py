# Expected outputs of test/vm/warp-tiles.tl (@first_warps) and
# test/vm/warp-tiles-wgmma.tl (@wg0), computed with NumPy in f32 from the
# saved inputs: python warp_tiles_ref.py DIR [wgmma] (the .npy files of
# tl-run --save).
import sys

import numpy as np

d = sys.argv[1]
case = sys.argv[2] if len(sys.argv) > 2 else "first_warps"


def load(name):
    return np.load(f"{d}/{name}.npy")


def fail(what):
    sys.exit(f"{case}: {what} differs from the reference")


if case == "wgmma":
    a, b, c = load("a"), load("b"), load("c")
    if a.dtype != np.float16 or a.std() == 0 or b.std() == 0:
        fail("a or b (not random f16)")
    # tl.dot sums in k order, rounding each step to f32; the products of
    # f16 values are exact in f32.
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    acc = np.zeros((64, 32), np.float32)
    for k in range(64):
        acc = acc + a32[:, k : k + 1] * b32[k : k + 1, :]
    if not (c == acc).all():
        fail("c")
    print("wgmma: ok")
    sys.exit(0)

x, y, m, z = load("x"), load("y"), load("m"), load("z")
if x.dtype != np.float32 or x.std() == 0:
    fail("x (not random f32)")
# Warps 0 and 1: x * x + x + x, in that order, each step rounded to f32;
# the row maxima and the rows less them (exact in f32 as on the device).
acc = x * x
for _ in range(2):
    acc = acc + x
mx = acc.max(axis=1, keepdims=True)
if not (m == mx).all():
    fail("m")
if not (y == acc - mx).all():
    fail("y")
# Warp 2: its index over its threads' elements of z; warps 0 and 1 never
# write z.
ez = np.zeros(96, np.int32)
ez[64:] = 2
if not (z == ez).all():
    fail("z")
print("first_warps: ok")
