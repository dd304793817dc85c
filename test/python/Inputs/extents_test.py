"""Launch-time extent checks (docs/runtime.md, "Extent checks") through the
stand-in CUDA driver and the stand-in torch: a buffer smaller than a view
of it is refused with the parameter, the view and both sizes before the
driver sees a launch, a correct launch still goes through, a launch after
a refused one works (refused by the checks, or by the driver for its
resources), and Session(check_extents=False) turns the checks
off. Kernels of the library: vector_add (the launcher's path),
qmatmul_m8 and decode_attn (buffers by __cuda_array_interface__, the
general path, tl_program_launch).

    extents_test.py SOURCE-ROOT FAKE-LIBCUDA LOG"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "faketorch"))
import numpy as np  # noqa: E402
import torch  # noqa: E402

import tl  # noqa: E402

root, driver, log = sys.argv[1], sys.argv[2], sys.argv[3]
kernels = os.path.join(root, "kernels")


class DeviceArray:
    """A NumPy array posing as device memory (the stand-in driver's)."""

    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = {"shape": a.shape, "typestr": a.dtype.str,
                                         "data": (a.ctypes.data, False), "strides": None,
                                         "version": 3}


def dev(n, dtype):
    return DeviceArray(np.zeros(n, dtype))


def refused(fn, *args, want, **kw):
    try:
        fn(*args, **kw)
    except tl.TLError as e:
        assert want in str(e), f"expected {want!r} in:\n{e}"
        # A short buffer is a ValueError naming the argument, as python/tl's
        # own checks raise (tl.TLArgumentError), and still a TLError.
        assert isinstance(e, ValueError) == ("the view" in str(e)), (type(e), str(e))
        return
    raise AssertionError(f"expected a TLError with {want!r}")


def launches():
    with open(log) as f:
        return len(f.read().splitlines())


s = tl.Session(cache_dir="", driver=driver)

# vector_add over torch tensors: the launcher's path, then the general one.
k = s.compile(os.path.join(kernels, "vector_add.tl"), BLOCK=256)
x = torch.zeros(1000, device="cuda")
small = torch.zeros(999, device="cuda")
k(x, x, x, 1000)
assert k._launch((x, x, x, 1000), None, 0) is True
n = launches()
refused(k, x, small, x, 1000,
        want="argument 1 (y) of @vector_add: the view y[n] needs 4000 bytes, the buffer has 3996")
refused(k, x, x, x, 1001,
        want="argument 0 (x) of @vector_add: the view x[n] needs 4004 bytes, the buffer has 4000")
assert launches() == n, "a refused launch reached the driver"
k(x, x, x, 1000)   # after a refused launch, a good one
k(x, small, x, 999)
assert launches() == n + 2, launches()
assert k._launch((x, x, x, 1000), None, 0) is True
# A launch the driver refuses for its resources (the stand-in driver
# refuses blocks of more than TL_FAKE_CUDA_MAX_THREADS threads, as the real
# one a block whose registers exceed the SM's): a TLError with the driver's
# words, on the launcher's path and the general one; then the session
# launches again.
xa = DeviceArray(np.zeros(1000, np.float32))
n = launches()
os.environ["TL_FAKE_CUDA_MAX_THREADS"] = "32"
for args in ((x, x, x, 1000), (xa, xa, xa, 1000)):
    refused(k, *args, want="CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources requested "
                           "for launch)")
del os.environ["TL_FAKE_CUDA_MAX_THREADS"]
k(x, x, x, 1000)
k(xa, xa, xa, 1000)
s.synchronize()
assert launches() == n + 3, launches()   # the two good launches and the synchronize

# qmatmul_m8: a [m, K] f16, c [m, N] f16; b and s of fixed sizes.
K, N = 1024, 512
q = s.compile(os.path.join(kernels, "qmatmul_m8.tl"), K=K, N=N, WT="u4")
m = 3
a, b, sc, c = dev(m * K, np.float16), dev(K * N // 2, np.uint8), dev(K // 128 * N, np.float16), \
    dev(m * N, np.float16)
ws, locks = dev(4, np.float32), dev(4, np.uint32)
q(a, b, sc, c, m, ws, locks)
n = launches()
refused(q, a, b, sc, c, m + 1, ws, locks,
        want="argument 0 (a) of @qmatmul_m8: the view a[8, m, 128] needs 8192 bytes, the buffer has 6144")
refused(q, a, dev(K * N // 2 - 1, np.uint8), sc, c, m, ws, locks,
        want="argument 1 (b) of @qmatmul_m8: the view b[8, 8, 8, 32, 16] needs 262144 bytes, "
             "the buffer has 262143")
refused(q, a, b, sc, dev(m * N - 1, np.float16), m, ws, locks,
        want="argument 3 (c) of @qmatmul_m8: the view c[512, m] needs 3072 bytes, the buffer has 3070")
assert launches() == n
q(a, b, sc, c, m, ws, locks)
assert launches() == n + 1

# decode_attn: a pool of npg pages of psz tokens of hkv heads, kc, vc [npg,
# hkv, psz, D / 2] u4 codes as bytes, ks, vs [npg, hkv, 2, psz] f16; the
# lengths i32 [B] and the block table i32 [B, maxp], B = nbh / hkv; the
# split's workspace only when ns > 1.
nbh, hkv, cap, d = 2, 2, 128, 64
da = s.compile(os.path.join(kernels, "decode_attn.tl"), D=d, G=4, KT="u4")
qa, o = dev(nbh * 4 * d, np.float16), dev(nbh * 4 * d, np.float16)
kc, vc = dev(nbh * cap * d // 2, np.uint8), dev(nbh * cap * d // 2, np.uint8)
ks, vs = dev(nbh * 2 * cap, np.float16), dev(nbh * 2 * cap, np.float16)
lens, table = dev(1, np.int32), dev(1, np.int32)
wo, wml, lk = dev(4, np.float32), dev(4, np.float32), dev(nbh, np.uint32)


def attn(kc=kc, ks=ks, ns=1, wo=wo, npg=1, maxp=1, table=table):
    da(qa, kc, vc, ks, vs, o, nbh, lens, table, hkv, maxp, cap, npg, ns, 0.125, wo, wml, lk,
       ns, 0)


attn()
n = launches()
refused(attn, dev(cap * d // 2, np.uint8),
        want="argument 1 (kc) of @decode_attn: the view kc[npg * hkv, psz, 32] needs 8192 bytes, "
             "the buffer has 4096")
refused(attn, kc, dev(511, np.float16),
        want="argument 3 (ks) of @decode_attn: the view ks[npg * hkv, 2, psz] needs 1024 bytes, "
             "the buffer has 1022")
refused(attn, npg=2,  # a pool of two pages in buffers of one
        want="argument 1 (kc) of @decode_attn: the view kc[npg * hkv, psz, 32] needs 16384 bytes, "
             "the buffer has 8192")
refused(attn, maxp=2,  # table rows of two pages in a table of one
        want="argument 8 (table) of @decode_attn: the view table[nbh / hkv, maxp] needs 8 bytes, "
             "the buffer has 4")
# ns > 1: the split's workspace is viewed (and checked) too.
refused(attn, ns=2,
        want="argument 15 (wo) of @decode_attn: the view wo[nbh, ns, 16, 64] needs 16384 bytes, "
             "the buffer has 16")
assert launches() == n
refused(attn, ns=2, wo=dev(nbh * 2 * 16 * d, np.float32),
        want="argument 16 (wml) of @decode_attn: the view wml[nbh, ns, 2, 16, 1] needs 512 "
             "bytes, the buffer has 16")
attn()
assert launches() == n + 1

# Off by the session's flag: the launch goes through unchecked.
off = tl.Session(cache_dir="", driver=driver, check_extents=False)
ko = off.compile(os.path.join(kernels, "vector_add.tl"), BLOCK=256)
ko(x, small, x, 1000)
ko(x, small, x, 1000)  # the launcher's path
assert ko._launch((x, small, x, 1000), None, 0) is True
assert launches() == n + 4
try:
    tl.Session(check_extents=0)
except TypeError as e:
    assert "check_extents: expected True or False" in str(e)
else:
    raise AssertionError("check_extents=0 was taken")
print("extents_test: ok")
