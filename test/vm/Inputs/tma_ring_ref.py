"""What test/vm/Inputs/tma_ring.tl writes, computed with NumPy and compared
exactly with the kernel's output (test/vm/tma.test).

  tma_ring_ref.py TENSOR.npy OUT.npy --box BMxBN --at Y0,X0 --tiles N
                  [--copies K]

Tile t is the tensor's box of BM x BN elements at rows Y0 + t * BM,
columns X0 (outermost first), elements outside the tensor 0; OUT holds
the N tiles one below the other; with --copies K (Inputs/tma_mixed.tl),
K times side by side. Prints "tma ring: ok (E elements)" or
the first element that differs."""
import argparse
import sys

import numpy as np

p = argparse.ArgumentParser()
p.add_argument("tensor")
p.add_argument("out")
p.add_argument("--box", required=True)
p.add_argument("--at", required=True)
p.add_argument("--tiles", type=int, required=True)
p.add_argument("--copies", type=int, default=1)
a = p.parse_args()

t = np.load(a.tensor)
out = np.load(a.out)
bm, bn = (int(v) for v in a.box.split("x"))
y0, x0 = (int(v) for v in a.at.split(","))
want = np.zeros((a.tiles * bm, bn), dtype=t.dtype)
for i in range(a.tiles * bm):
    for j in range(bn):
        y, x = y0 + i, x0 + j
        if 0 <= y < t.shape[0] and 0 <= x < t.shape[1]:
            want[i, j] = t[y, x]
want = np.concatenate([want] * a.copies, axis=1)
got = out.reshape(want.shape)
# Compare the bits (a float tile holds NaN codes as they are).
gb, wb = got.view(np.uint8).reshape(-1), want.view(np.uint8).reshape(-1)
bad = np.nonzero(gb != wb)[0]
if len(bad):
    k = int(bad[0]) // t.itemsize
    print("tma ring: element %s differs: got %r, expected %r"
          % (np.unravel_index(k, want.shape), got.reshape(-1)[k],
             want.reshape(-1)[k]))
    sys.exit(1)
print("tma ring: ok (%d elements)" % want.size)
