"""Reference of tl-run.tl: z = x * y + x in float32 (each op rounded once,
as the VM rounds each f32 op). Usage: fma_ref.py X.npy Y.npy OUT.npy; also
writes OUT.f64.npy (as float64) and OUT.short.npy (row 0 only)."""
import sys

import numpy as np

x = np.load(sys.argv[1])
y = np.load(sys.argv[2])
assert x.dtype == np.float32 and y.dtype == np.float32
assert ((x >= -1) & (x < 1)).all(), "rand: floats lie in [-1, 1)"
z = x * y + x
np.save(sys.argv[3], z)
# the same values as float64, and a reference of the wrong size
np.save(sys.argv[3][:-len(".npy")] + ".f64.npy", z.astype(np.float64))
np.save(sys.argv[3][:-len(".npy")] + ".short.npy", z[0])
