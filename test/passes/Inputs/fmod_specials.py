"""Writes x and y (f32, 4x32) pairing special and ordinary values for the
float remainder test: zeros of both signs, infinities, a NaN, the
smallest subnormal, the largest finite value, and ordinary numbers."""
import sys

import numpy as np

v = [0.0, -0.0, 1.0, -1.0, 3.5, -3.5, np.inf, -np.inf, np.nan, 1e-45, -1e-45,
     1.17549435e-38, 3.4028235e38, -3.4028235e38, 7.0, 0.1, 1e30, -1e-30, 2.0, 5.0]
x = np.array([a for _ in v for a in v], dtype=np.float32)[:128].reshape(4, 32)
y = np.array([b for b in v for _ in v], dtype=np.float32)[:128].reshape(4, 32)
np.save(sys.argv[1], x)
np.save(sys.argv[2], y)
