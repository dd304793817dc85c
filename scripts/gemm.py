"""Check of kernels/gemm.tl: C = A W^T in f16 with f32 accumulation.

  gemm.py check A.npy W.npy C.npy
      A f16 [m, k], W f16 [n, k], C f16 [m, n]; exits 1 when an element is
      off by more than the bound.

The bound. The products of f16 values are exact in f32; k f32 additions
in any order err by at most k 2^-24 sum_i |a_i w_i| (to first order), and
the result is rounded to f16 once (2^-11 |c| for normal results, 2^-25
absolute below the normal range). Every element must satisfy

  |c - ref| <= 2^-11 |ref| + (k + 1) 2^-24 sum_i |a_i w_i| + 2^-24

with ref the float64 product. A transposed W, a lost k step or a
misplaced tile is off by far more.
"""
import sys

import numpy as np


def check(a, w, c):
    a = a.astype(np.float64)
    w = w.astype(np.float64)
    ref = a @ w.T
    mag = np.abs(a) @ np.abs(w).T
    k = a.shape[1]
    bound = 2.0**-11 * np.abs(ref) + (k + 1) * 2.0**-24 * mag + 2.0**-24
    err = np.abs(c.astype(np.float64) - ref)
    worst = float((err / bound).max()) if err.size else 0.0
    print(f"max error {float(err.max()):.3e}, {worst:.3f} of the bound")
    return bool((err <= bound).all())


def main(argv):
    if len(argv) != 5 or argv[1] != "check":
        sys.exit(__doc__)
    a, w, c = (np.load(p) for p in argv[2:5])
    sys.exit(0 if check(a, w, c) else 1)


if __name__ == "__main__":
    main(sys.argv)
