"""NumPy references of kernels/vector_add.tl and kernels/softmax.tl.

  ref.py add X.npy Y.npy OUT.npy     OUT = X + Y in float32 (exact: one
                                     rounding per element, as the kernel)
  ref.py softmax X.npy N OUT.npy     OUT = the row softmax of X viewed as
                                     [-1, N]: d = X - rowmax in float32 (as
                                     the kernel), exp, sum and quotient in
                                     float64
"""
import sys

import numpy as np

if sys.argv[1] == "add":
    x, y = np.load(sys.argv[2]), np.load(sys.argv[3])
    np.save(sys.argv[4], (x + y).astype(np.float32))
else:
    x = np.load(sys.argv[2]).reshape(-1, int(sys.argv[3]))
    d = (x - x.max(axis=1, keepdims=True)).astype(np.float32)
    e = np.exp(d.astype(np.float64))
    np.save(sys.argv[4], e / e.sum(axis=1, keepdims=True))
