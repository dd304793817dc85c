"""python/tl with a !tl.tensormap parameter (test/vm/Inputs/tma_ring.tl,
@ring and @ring_sw: tiles of a [rows, cols] f16 tensor copied through the
map into `out`): run_vm over NumPy arrays, the map over the same array as
the pointer parameter `a` or over a strided view of it, checked against
NumPy; every tensor a map cannot be made over; then launches over stand-in
torch tensors through the stand-in driver with cuTensorMapEncodeTiled,
whose log shows each map's description and the launches that pass it.

    tensormap_test.py SOURCE-ROOT FAKE-LIBCUDA-TMA LOG"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "faketorch"))
import numpy as np  # noqa: E402
import torch  # noqa: E402

import tl  # noqa: E402

root, driver, log = sys.argv[1], sys.argv[2], sys.argv[3]
path = os.path.join(root, "test", "vm", "Inputs", "tma_ring.tl")


def raises(exc, fn, *args, want, **kw):
    try:
        fn(*args, **kw)
    except exc as e:
        assert want in str(e), f"expected {want!r} in:\n{e}"
        return str(e)
    raise AssertionError(f"expected {exc.__name__} with {want!r}")


def ring_ref(a, y0, x0, n, bm=16, bn=64):
    """Tile t: the bm x bn box of a at (y0 + bm t, x0), 0 outside a."""
    rows, cols = a.shape
    out = np.zeros((n * bm, bn), a.dtype)
    xs = np.arange(x0, x0 + bn)
    inside = (xs >= 0) & (xs < cols)
    for t in range(n):
        for r in range(bm):
            y = y0 + bm * t + r
            if 0 <= y < rows:
                out[bm * t + r, inside] = a[y, xs[inside]]
    return out


k = tl.compile(path, kernel="ring")
assert [p.kind for p in k.params] == ["buffer", "tensormap", "buffer", "int", "int", "int"]
assert k.params[1].dtype == "f16" and k.params[1].bits == 16

rng = np.random.default_rng(5)
a = rng.standard_normal((70, 104)).astype(np.float16)
# In bounds, partly outside (above, and past the last column), below.
for y0, x0, n in ((2, 8, 4), (-7, 48, 6), (100, 0, 3)):
    out = np.full((n * 16, 64), 9, np.float16)
    k.run_vm(a, a, out, y0, x0, n)
    assert np.array_equal(out, ring_ref(a, y0, x0, n)), (y0, x0, n)
# A view: rows 3.. and columns 8.. of a (rows 208 bytes apart), in place.
v = a[3:63, 8:]
assert not v.flags.c_contiguous
out = np.full((5 * 16, 64), 9, np.float16)
k.run_vm(a, v, out, -5, 40, 5)
assert np.array_equal(out, ring_ref(v, -5, 40, 5))
# The 128-byte swizzle.
ksw = tl.compile(path, kernel="ring_sw")
out = np.full((6 * 16, 64), 9, np.float16)
ksw.run_vm(a, a, out, 5, 8, 6)
assert np.array_equal(out, ring_ref(a, 5, 8, 6))

# Tensors no map is made over.
out = np.zeros((64, 64), np.float16)
raises(TypeError, k.run_vm, a, a.astype(np.float32), out, 2, 8, 4,
       want="argument 1 (tm) of @ring: expected a tensor of f16 (the tensor map's elements), "
            "got f32")
raises(TypeError, k.run_vm, a, a[:, ::2], out, 2, 8, 4,
       want="argument 1 (tm) of @ring: the tensor's innermost stride is 4 bytes; a tensor "
            "map reads consecutive elements (2 bytes apart) along the last dimension")
raises(TypeError, k.run_vm, a, a.T, out, 2, 8, 4, want="the tensor's innermost stride is 208 bytes")
raises(TypeError, k.run_vm, a, np.zeros((70, 100), np.float16), out, 2, 8, 4,
       want="argument 1 (tm) of @ring: the tensor's stride of dimension 0 is 200 bytes; a "
            "tensor map's strides are positive multiples of 16 bytes (strides (200, 2))")
raises(TypeError, k.run_vm, a, a[::-1], out, 2, 8, 4,
       want="the tensor's stride of dimension 0 is -208 bytes")
raises(TypeError, k.run_vm, a, np.zeros((1, 2, 3, 8), np.float16), out, 2, 8, 4,
       want="a tensor map is made over a tensor of 1 to 3 dimensions, not 4")
raises(TypeError, k.run_vm, a, [1.0], out, 2, 8, 4,
       want="expected a NumPy array of f16 (the tensor a tensor map is made over), got list")
raises(TypeError, k.run_vm, a, a, out, a, 8, 4, want="argument 3 (y0) of @ring: expected a scalar")
# What the package leaves to libtl: the map's rank, an empty tensor.
raises(tl.TLError, k.run_vm, a, a[0], out, 2, 8, 4,
       want="argument 1 (tm) of @ring: the tensor has 1 dimension, but the tensor map "
            "(!tl.tensormap<?x?xf16, box = [16, 64]>) has 2")
raises(tl.TLError, k.run_vm, a, a[:0], out, 2, 8, 4,
       want="dimension 0 of the tensor has 0 elements")
print("tensormap_test: vm ok")

# Launches: never through the fast launcher (it refuses kernels with
# tensor maps), through tl_program_launch, which encodes a map when its
# description changes.
s = tl.Session(cache_dir="", driver=driver)
k = s.compile(path, kernel="ring")
x = torch.zeros(70, 104, dtype=torch.float16, device="cuda")
o = torch.zeros(64, 64, dtype=torch.float16, device="cuda")
assert k._launch((x, x, o, 2, 8, 4), None, 0) is False
k(x, x, o, 2, 8, 4)
k(x, x, o, 2, 8, 4, stream=0x5eed)
v = torch.Tensor(x.numpy()[3:63, 8:], torch.float16, x.device)
assert v.stride() == (104, 1)
k(x, v, o, 2, 8, 4)


class Cai:
    """A device array by __cuda_array_interface__ (strides None: C-contiguous)."""

    def __init__(self, t, strides=None):
        self.__cuda_array_interface__ = {"shape": tuple(t.shape), "typestr": "<f2",
                                         "data": (t.data_ptr(), False), "strides": strides,
                                         "version": 3}


k(x, Cai(x), o, 2, 8, 4)
assert k.time(x, x, o, 2, 8, 4, warmup=1, iters=1) > 0
assert k.launch_dims(x, x, o, 2, 8, 4)[:2] == ((1, 1, 1), 64)
raises(TypeError, k, x, x.t(), o, 2, 8, 4, want="the tensor's innermost stride is 208 bytes")
raises(TypeError, k, x, Cai(x, (2, 208)), o, 2, 8, 4, want="innermost stride is 208 bytes")
raises(TypeError, k, x, torch.zeros(70, 104, device="cuda"), o, 2, 8, 4,
       want="expected a tensor of f16 (the tensor map's elements), got f32")
raises(TypeError, k, x, torch.zeros(70, 104, dtype=torch.float16), o, 2, 8, 4,
       want="argument 1 (tm) of @ring: expected a CUDA tensor, got one on cpu")
raises(TypeError, k, x, 3, o, 2, 8, 4,
       want="expected a CUDA tensor or an object with __cuda_array_interface__ (the tensor "
            "a tensor map is made over), got int")
big = torch.zeros(70 * 104 + 1, dtype=torch.float16, device="cuda")
odd = torch.Tensor(big.numpy()[1:].reshape(70, 104), torch.float16, x.device)  # 2 bytes in
raises(tl.TLError, k, x, odd, o, 2, 8, 4,
       want="argument 1 (tm) of @ring: the base address is not a multiple of 16 bytes")
with open(log) as f:
    lines = f.read().splitlines()
base, vbase = x.data_ptr(), v.data_ptr()
maps = [ln for ln in lines if ln.startswith("tensormap")]
assert maps == [
    f"tensormap type=1 rank=2 base={base:#x} dims=104,70 strides=208 box=64,16 swizzle=0",
    f"tensormap type=1 rank=2 base={vbase:#x} dims=96,60 strides=208 box=64,16 swizzle=0",
    f"tensormap type=1 rank=2 base={base:#x} dims=104,70 strides=208 box=64,16 swizzle=0",
], maps
launches = [ln for ln in lines if ln.startswith("launch")]
want = "launch grid=1,1,1 block=64,1,1 smem={} stream={} maps=1@{:#x}"
smem = launches[0].split("smem=")[1].split()[0]
assert launches[:4] == [want.format(smem, "0xc0ffee", base), want.format(smem, "0x5eed", base),
                        want.format(smem, "0xc0ffee", vbase),
                        want.format(smem, "0xc0ffee", base)], launches
assert all(ln.endswith(f"maps=1@{base:#x}") for ln in launches[4:]), launches
print("tensormap_test: launch ok")
