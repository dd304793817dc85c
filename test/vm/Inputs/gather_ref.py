"""Checks the buffers test/passes/Inputs/gather.tl wrote (saved by
test/vm/gather.test into DIR.*.npy) against NumPy indexing: y's rows are
x's rows at the u8 indices of each block, z those at index + 200 with 0
for rows past x's 256, v's elements w at the indices, and out the table
entry of each block and the flag."""
import sys

import numpy as np

d = sys.argv[1]
ld = lambda n: np.load(d + "." + n + ".npy")
x, ix, w = ld("x"), ld("i").reshape(2, 16).astype(np.int64), ld("w")
bits = lambda a: a.view(np.uint16)
ok = True


def check(name, cond, extra=""):
    global ok
    print("%s %s%s" % (name, "ok" if cond else "differs", extra))
    ok = ok and bool(cond)


check("rows", (bits(ld("y").reshape(2, 16, 32)) == bits(x[ix])).all())
far = ix + 200
ref = np.where((far < 256)[..., None], x[np.minimum(far, 255)], np.float16(0))
check("masked", (bits(ld("z").reshape(2, 16, 32)) == bits(ref)).all(),
      " (%d rows outside)" % (far >= 256).sum())
check("elements", (ld("v")[:32].reshape(2, 16) == w[ix]).all())
t, f, out = ld("t"), ld("f"), ld("o")
check("scalars", (out[:, 0] == t[:2]).all() and (out[:, 1] == f[0].astype(np.int32)).all())
sys.exit(0 if ok else 1)
