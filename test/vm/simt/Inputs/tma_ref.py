"""The shared-memory bytes of one TMA load, computed from the tensor with
NumPy, compared with what a kernel wrote out (test/vm/simt/tma.test).

  tma_ref.py TENSOR.npy OUT.npy --box 32x64 --at X,Y[,Z] [--swizzle N]
             [--dst 1024]

--box is outermost first (the tensor's shape order); --at gives the
coordinates innermost first (simt.tma_load's order). Elements of the box
outside the tensor are zero. The box lies in shared memory from byte
--dst, row after row, each element's byte address then swizzled: with a
span of N bytes, address bits 4.. (the 16-byte chunk, N/16 chunks) are
XORed with bits 7.. (the 128-byte row), as the PTX ISA's tensor swizzle
modes do. Prints "tma: ok (B bytes)" or the first differing byte."""
import argparse
import sys

import numpy as np

p = argparse.ArgumentParser()
p.add_argument("tensor")
p.add_argument("out")
p.add_argument("--box", required=True)
p.add_argument("--at", required=True)
p.add_argument("--swizzle", type=int, default=0)
p.add_argument("--dst", type=int, default=1024)
a = p.parse_args()

t = np.load(a.tensor)
out = np.load(a.out).view(np.uint8).reshape(-1)
box = [int(v) for v in a.box.split("x")]
at = [int(v) for v in a.at.split(",")][::-1]  # outermost first
assert len(box) == t.ndim == len(at)

tile = np.zeros(box, t.dtype)
src = []
dst = []
for d in range(t.ndim):
    lo, hi = at[d], at[d] + box[d]
    s0, s1 = max(lo, 0), min(hi, t.shape[d])
    if s0 >= s1:
        src = None
        break
    src.append(slice(s0, s1))
    dst.append(slice(s0 - lo, s1 - lo))
if src is not None:
    tile[tuple(dst)] = t[tuple(src)]
raw = tile.tobytes()
want = bytearray(len(raw))
for off, byte in enumerate(raw):
    addr = a.dst + off
    if a.swizzle:
        addr ^= ((addr >> 7) & (a.swizzle // 16 - 1)) << 4
    want[addr - a.dst] = byte
got = out.tobytes()[: len(want)]
for i, (g, w) in enumerate(zip(got, want)):
    if g != w:
        print("tma: byte %d is %d, expected %d" % (i, g, w))
        sys.exit(1)
if len(got) != len(want):
    print("tma: %d bytes out, expected %d" % (len(got), len(want)))
    sys.exit(1)
print("tma: ok (%d bytes)" % len(want))
