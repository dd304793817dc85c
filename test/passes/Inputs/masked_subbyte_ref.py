"""The reference for Inputs/masked-subbyte.tl: each (x, y, bits, m, k, r, c)
group is an i8 input tile saved by tl-run, the packed output view of m x k
elements of `bits` bits, and the store's offsets; element (i, j) of the
tile, saturated to the unsigned type, lands at (r + i, c + j) where that
lies inside the view, and every other element stays 0."""
import sys

import numpy as np


def unpack(a, bits, count):
    b = np.unpackbits(a, bitorder="little")[: count * bits].reshape(count, bits)
    return (b * (1 << np.arange(bits))).sum(1)


args = sys.argv[1:]
for g in range(0, len(args), 7):
    xf, yf, bits, m, k, r, c = args[g : g + 7]
    bits, m, k, r, c = int(bits), int(m), int(k), int(r), int(c)
    x = np.load(xf).astype(int)
    y = unpack(np.load(yf), bits, m * k).reshape(m, k)
    ref = np.zeros((m, k), int)
    rows, cols = x.shape
    for i in range(rows):
        for j in range(cols):
            if 0 <= r + i < m and 0 <= c + j < k:
                ref[r + i, c + j] = min(max(x[i, j], 0), (1 << bits) - 1)
    if not (ref == y).all() or not y.any():
        sys.exit("u%d: the stored view differs from the reference" % bits)
