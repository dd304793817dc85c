"""One TMA box computed with NumPy and compared exactly with a kernel's
output (test/vm/tma.test, Inputs/tma_rank.tl).

  tma_box_ref.py TENSOR.npy OUT.npy --box D0xD1x... --at C0,C1,...

The box (outermost first) of the tensor at the coordinates (outermost
first), elements outside the tensor 0. Prints "tma box: ok (E elements)"
or the first element that differs."""
import argparse
import itertools
import sys

import numpy as np

p = argparse.ArgumentParser()
p.add_argument("tensor")
p.add_argument("out")
p.add_argument("--box", required=True)
p.add_argument("--at", required=True)
a = p.parse_args()

t = np.load(a.tensor)
box = [int(v) for v in a.box.split("x")]
at = [int(v) for v in a.at.split(",")]
want = np.zeros(box, dtype=t.dtype)
for j in itertools.product(*(range(b) for b in box)):
    i = tuple(c + k for c, k in zip(at, j))
    if all(0 <= v < n for v, n in zip(i, t.shape)):
        want[j] = t[i]
got = np.load(a.out).reshape(want.shape)
bad = np.argwhere(got != want)
if len(bad):
    k = tuple(bad[0])
    print("tma box: element %s differs: got %r, expected %r"
          % (k, got[k], want[k]))
    sys.exit(1)
print("tma box: ok (%d elements)" % want.size)
