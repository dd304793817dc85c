"""NumPy reference of the split reduction (kernels/split_sum.tl).

  split_sum.py ref X.npy S BK OUT.npy
      the row sums of X (f32 [M, K]) as the kernel adds them, in f32 with
      one rounding per addition: split s of a row covers columns
      s K/S .. (s + 1) K/S, its partial sum the running sum, chunk by
      chunk of BK columns, of each chunk's sum in column order (the first
      element, then each next one added); y is the S partials added in
      split order, starting from split 0. Written [M, 1].
  split_sum.py check Y.npy X.npy
      compares Y with the float64 row sums of X and prints the largest
      error relative to the sum of |x| over the row (a sanity bound on
      the f32 order of the kernel, not its bits)
"""
import sys

import numpy as np


def ref(x, s, bk):
    m, k = x.shape
    span = k // s
    parts = []
    for si in range(s):
        acc = np.zeros(m, np.float32)
        for c in range(si * span, (si + 1) * span, bk):
            chunk = x[:, c:c + bk]
            r = chunk[:, 0].copy()
            for j in range(1, bk):
                r = (r + chunk[:, j]).astype(np.float32)
            acc = (acc + r).astype(np.float32)
        parts.append(acc)
    y = parts[0]
    for p in parts[1:]:
        y = (y + p).astype(np.float32)
    return y.reshape(m, 1)


def main():
    if sys.argv[1] == "ref":
        x = np.load(sys.argv[2])
        assert x.dtype == np.float32 and x.ndim == 2
        np.save(sys.argv[5], ref(x, int(sys.argv[3]), int(sys.argv[4])))
        return 0
    y = np.load(sys.argv[2]).astype(np.float64).reshape(-1)
    x = np.load(sys.argv[3]).astype(np.float64)
    err = np.abs(y - x.sum(axis=1)) / np.abs(x).sum(axis=1)
    print("max relative error %.3g" % err.max())
    return 0


if __name__ == "__main__":
    sys.exit(main())
