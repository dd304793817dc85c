"""Inputs and NumPy references of test/vm/atomics.tl's @accumulate: four
blocks apply their 64-element slices of each input, in block order, to
64-element outputs with tl.atomic_rmw.

  atomics_ref.py inputs DIR     writes xi, xu, xf, xh (256 elements: ints
                                of every sign, f32 with subnormals, f16
                                with subnormals) and the starting values
                                ym (INT32_MIN) and yu (UINT32_MAX)
  atomics_ref.py refs DIR       writes the expected yi (wrapping sum), ym
                                (max), yu (min), yf (f32 sums rounded once
                                each, subnormal inputs and results flushed
                                to zero as PTX's atom.add.f32), yh (f16
                                sums rounded once each, subnormals kept)
"""
import os
import sys

import numpy as np

d = sys.argv[2]
p = lambda n: os.path.join(d, n + ".npy")

if sys.argv[1] == "inputs":
    rng = np.random.default_rng(7)
    xi = rng.integers(-2**31, 2**31, 256, dtype=np.int64).astype(np.int32)
    xu = rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    xf = rng.standard_normal(256).astype(np.float32)
    # Subnormal inputs (flushed), and pairs whose sum is subnormal.
    xf[0:64:7] = np.float32(3e-39)
    xf[2::64] = np.float32(3e-39)  # every block: 0 flushed, 1.2e-38 kept
    xf[1::64] = np.float32(0)
    xf[1] = np.float32(-1.4e-38)  # + 1.5e-38: a subnormal sum, flushed
    xf[64 + 1] = np.float32(1.5e-38)
    xh = rng.standard_normal(256).astype(np.float16)
    xh[0:256:5] = np.float16(3e-6)  # f16 subnormals stay
    np.save(p("xi"), xi)
    np.save(p("xu"), xu)
    np.save(p("xf"), xf)
    np.save(p("xh"), xh)
    np.save(p("ym"), np.full(64, -2**31, np.int32))
    np.save(p("yu"), np.full(64, 2**32 - 1, np.uint32))
    sys.exit(0)


def ftz(a):
    a = a.astype(np.float32).copy()
    a[np.abs(a) < np.finfo(np.float32).tiny] = np.float32(0) * np.sign(a[np.abs(a) < np.finfo(np.float32).tiny])
    return a


xi = np.load(p("xi")).astype(np.int64).reshape(4, 64)
xu = np.load(p("xu")).reshape(4, 64)
xf = np.load(p("xf")).reshape(4, 64)
xh = np.load(p("xh")).reshape(4, 64)
yi = np.zeros(64, np.int64)
yf = np.zeros(64, np.float32)
yh = np.zeros(64, np.float16)
for b in range(4):
    yi = (yi + xi[b]) & 0xFFFFFFFF
    # Two f32 values sum exactly enough in f64 (53 >= 2 * 24 + 2) that
    # rounding to f32 afterwards is the one rounding of the GPU.
    yf = ftz((ftz(yf).astype(np.float64) + ftz(xf[b]).astype(np.float64)).astype(np.float32))
    # Two f16 values sum exactly in f64.
    yh = (yh.astype(np.float64) + xh[b].astype(np.float64)).astype(np.float16)
np.save(p("ref_yi"), yi.astype(np.uint32).view(np.int32))
np.save(p("ref_ym"), np.maximum.reduce(list(xi.astype(np.int32))).astype(np.int32))
np.save(p("ref_yu"), np.minimum.reduce(list(xu)).astype(np.uint32))
np.save(p("ref_yf"), yf)
np.save(p("ref_yh"), yh)
