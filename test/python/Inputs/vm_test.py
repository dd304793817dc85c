"""python/tl on the CPU VM: kernels/vector_add.tl against NumPy, a kernel
from text with a float scalar and a packed u4 buffer, arrays that are not
contiguous, and every error the package or libtl reports.

    vm_test.py SOURCE-ROOT"""
import os
import sys

import numpy as np

import tl

root = sys.argv[1]
vector_add = os.path.join(root, "kernels", "vector_add.tl")


def raises(exc, fn, *args, want, **kw):
    try:
        fn(*args, **kw)
    except exc as e:
        assert want in str(e), f"expected {want!r} in:\n{e}"
        return str(e)
    raise AssertionError(f"expected {exc.__name__} with {want!r}")


k = tl.compile(vector_add, BLOCK=256)
assert k.name == "vector_add", k.name
assert [p.name for p in k.params] == ["x", "y", "z", "n"]
assert [p.kind for p in k.params] == ["buffer", "buffer", "buffer", "int"]
assert [p.dtype for p in k.params] == ["f32", "f32", "f32", "i32"]
assert k.template_value("BLOCK") == 256
assert k.template_value("NOPE") is None

# n = 1000 over blocks of 256 (the last one ragged); the element after n
# stays as it was. NumPy's float32 sum is the same correctly rounded sum.
rng = np.random.default_rng(7)
n = 1000
x = rng.uniform(-1, 1, n).astype(np.float32)
y = rng.uniform(-1, 1, n).astype(np.float32)
z = np.full(n + 1, 7, np.float32)
k.run_vm(x, y, z, n)
assert np.array_equal(z[:n], x + y), np.flatnonzero(z[:n] != x + y)[:5]
assert z[n] == 7
# NumPy integer scalars count as integers.
z[:] = 0
k.run_vm(x, y, z, np.int32(500))
assert np.array_equal(z[:500], (x + y)[:500]) and not z[500:].any()

# A strided output is computed in a copy and written back.
zz = np.zeros((n, 2), np.float32)
k.run_vm(x, y, zz[:, 1], n)
assert np.array_equal(zz[:, 1], x + y) and not zz[:, 0].any()

# The default instance (BLOCK = 512) from the kernel's text.
with open(vector_add) as f:
    text = f.read()
k512 = tl.compile(text)
assert k512.template_value("BLOCK") == 512
z2 = np.zeros(n, np.float32)
k512.run_vm(x, y, z2, n)
assert np.array_equal(z2, x + y)

# Arguments that do not fit.
raises(TypeError, k.run_vm, x, y, z, want="@vector_add takes 4 arguments (x, y, z, n), not 3")
raises(TypeError, k.run_vm, x, y.astype(np.float16), z, n,
       want="argument 1 (y) of @vector_add: expected a buffer of f32, got f16")
raises(TypeError, k.run_vm, x, y, z, 1000.0,
       want="argument 3 (n) of @vector_add: expected an integer (i32), got the float 1000.0")
raises(TypeError, k.run_vm, x, y, z, z, want="expected a scalar (i32), got an array")
raises(TypeError, k.run_vm, x, [1.0], z, n, want="expected a NumPy array of f32, got list")
raises(ValueError, k.run_vm, x, y, z, 1 << 40, want="1099511627776 does not fit i32")
raises(TypeError, k.run_vm, x, np.zeros(n, np.complex64), z, n,
       want="the element type complex64 has no TL type")
# Out of the buffer's bounds: the VM's located error.
e = raises(tl.TLError, k.run_vm, x, y, z[:100], n, want="vector_add.tl:")
assert "error:" in e, e

# Errors of the source and the defines, with the line and caret.
raises(tl.TLError, tl.compile, vector_add, BLOCK=6, want="BLOCK")
raises(tl.TLError, tl.compile, vector_add, BLOK=256,
       want="define 'BLOK' matches no template parameter")
raises(TypeError, tl.compile, vector_add, BLOCK=1.5, want="define BLOCK: expected an integer")
raises(tl.TLError, tl.compile, "/nonexistent/k.tl", want="cannot open '/nonexistent/k.tl'")
e = raises(tl.TLError, tl.compile, "tl.kernel @k() grid(1) threads(32) {\n  %x = nope\n}\n",
           want="<text>:2:")
assert "^" in e, e
raises(tl.TLError, tl.compile, vector_add, kernel="vector_sub", want="vector_sub")

# A float scalar and a packed u4 buffer (its bytes as uint8); a bool
# array is refused with the way to pass one.
scale = tl.compile(os.path.join(os.path.dirname(os.path.abspath(__file__)), "scale.tl"))
assert scale.params[1].dtype == "u4" and scale.params[1].packed
assert scale.params[2].kind == "float"
v = np.arange(128, dtype=np.float32) - 64
codes = rng.integers(0, 16, 128)
q = (codes[0::2] | (codes[1::2] << 4)).astype(np.uint8)  # element i at bit 4i
scale.run_vm(v, q, 0.5)
want = (np.arange(128, dtype=np.float32) - 64) * 0.5 + codes
assert np.array_equal(v, want.astype(np.float32)), (v[:8], want[:8])
raises(TypeError, scale.run_vm, v, q.astype(np.int8), 0.5,
       want="expected a buffer of u4 (or its packed bytes as uint8), got i8")
raises(TypeError, scale.run_vm, v, np.zeros(128, bool), 0.5, want="packbits")
print("vm_test: ok")
