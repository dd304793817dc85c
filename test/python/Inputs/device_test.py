"""python/tl's launch path through the stand-in driver of
test/gpu/fake_cuda.c (device memory is host memory; launches only log
themselves to $TL_FAKE_CUDA_LOG): objects with __cuda_array_interface__,
the stream argument's forms, the checks of dtype, contiguity and count,
and a driver that does not exist.

    device_test.py SOURCE-ROOT FAKE-LIBCUDA LOG"""
import os
import sys

import numpy as np

import tl

root, driver, log = sys.argv[1], sys.argv[2], sys.argv[3]
path = os.path.join(root, "kernels", "vector_add.tl")


class DeviceArray:
    """A NumPy array posing as device memory (the stand-in driver's)."""

    def __init__(self, a, strides=None, typestr=None):
        self.a = a
        self.__cuda_array_interface__ = {
            "shape": a.shape,
            "typestr": typestr or a.dtype.str,
            "data": (a.ctypes.data, False),
            "strides": strides,
            "version": 3,
        }


class Stream:
    def __init__(self, handle):
        self.cuda_stream = handle


def raises(exc, fn, *args, want, **kw):
    try:
        fn(*args, **kw)
    except exc as e:
        assert want in str(e), f"expected {want!r} in:\n{e}"
        return
    raise AssertionError(f"expected {exc.__name__} with {want!r}")


# No driver: the session says so when asked to launch.
nodrv = tl.Session(cache_dir="", driver="/nonexistent/libcuda.so.1")
k = nodrv.compile(path)
x, y, z = (DeviceArray(np.zeros(1000, np.float32)) for _ in range(3))
raises(tl.TLError, k, x, y, z, 1000,
       want="no CUDA driver (/nonexistent/libcuda.so.1 could not be loaded)")
raises(tl.TLError, nodrv.open_device, 0, want="no CUDA driver")

# Two devices, so that launches ask which device a buffer is on (the
# session counts the devices once, when it opens one).
os.environ["TL_FAKE_CUDA_DEVICES"] = "2"
s = tl.Session(cache_dir="", driver=driver)
k = s.compile(path, BLOCK=256)
k(x, y, z, 1000)                            # the default stream
k(x, y, z, 600, stream=0x5eed)              # a CUstream handle
k(x, y, z, 300, stream=Stream(0xbeef))      # an object with .cuda_stream
assert s.device_name() == "TL fake GPU" and s.device_sm() == 90 and s.device_sms() == 132
assert s.device_ordinal() == 0
assert k.launch_dims(x, y, z, 1000) == ((4, 1, 1), 64, 0)
assert k.launch_dims(x, y, z, 1000, sm=80) == ((4, 1, 1), 64, 0)
with open(log) as f:
    lines = f.read().splitlines()
assert lines == [
    "launch grid=4,1,1 block=64,1,1 smem=0 stream=null",
    "launch grid=3,1,1 block=64,1,1 smem=0 stream=0x5eed",
    "launch grid=2,1,1 block=64,1,1 smem=0 stream=0xbeef",
], lines  # and no synchronisation
s.synchronize()
with open(log) as f:
    assert f.read().splitlines()[3:] == ["synchronize"]
raises(tl.TLError, nodrv.synchronize, want="no CUDA device is open")

# The checks before a launch.
raises(TypeError, k, x, y, z, want="@vector_add takes 4 arguments (x, y, z, n), not 3")
raises(TypeError, k, x, DeviceArray(np.zeros(1000, np.float16)), z, 1000,
       want="argument 1 (y) of @vector_add: expected a buffer of f32, got f16")
raises(TypeError, k, x, np.zeros(1000, np.float32), z, 1000,
       want="expected a CUDA tensor or an object with __cuda_array_interface__, got ndarray")
raises(TypeError, k, x, y, z, x, want="expected a scalar (i32), got a tensor")
wide = np.zeros((1000, 2), np.float32)
raises(TypeError, k, x, DeviceArray(wide[:, 0], strides=(8,)), z, 1000,
       want="the array is not C-contiguous (strides (8,))")
k(x, DeviceArray(wide, strides=(8, 4)), z, 1000)  # C strides, written out
raises(TypeError, k, x, DeviceArray(np.zeros(4, np.complex64)), z, 4,
       want="the element type <c8 has no TL type")
raises(TypeError, k, x, y, z, 1000, stream="s", want="stream: expected a CUstream handle")
null = DeviceArray(np.zeros(0, np.float32))
null.__cuda_array_interface__["data"] = (0, False)
raises(tl.TLError, k, x, null, z, 0, want="the buffer has no device address")
raises(tl.TLError, s.open_device, 0, want="CUDA device 0 is already open")
# Memory of another device, by the driver's word.
os.environ["TL_FAKE_CUDA_POINTER_DEVICE"] = "1"
raises(tl.TLError, k, x, y, z, 1000,
       want="argument 0 (x) of @vector_add: the buffer is memory of CUDA device 1, "
            "not of device 0 (the session's)")
del os.environ["TL_FAKE_CUDA_POINTER_DEVICE"]
print("device_test: ok")

# Timing and a timed autotune, by the stand-in driver's clock: T threads
# per block over B blocks take T / 1000 + 1 / B ms. At n = 4096, BLOCK =
# 128 (32 threads, 32 blocks) is fastest: 0.0633 ms.
ms = k.time(x, y, z, 600, warmup=1, iters=3)
assert abs(ms - (0.064 + 1 / 3)) < 1e-5, ms
# What the compiled kernel uses, as the stand-in driver reports it (32
# registers; an SM holds min(2048 / threads, 32) blocks: BLOCK = 256 is 64
# threads, so 32).
r = k.resources(x, y, z, 600)
assert r == dict(registers=32, local_bytes=0, static_smem=0, smem_bytes=0, max_threads=1024,
                 blocks_per_sm=32), r
print("resources:", " ".join("%s=%d" % kv for kv in sorted(r.items())))
big = [DeviceArray(np.zeros(4096, np.float32)) for _ in range(3)]
log = []
kt, choice = tl.autotune(path, {"BLOCK": [6, 128, 512, 1024]}, args=(*big, 4096),
                         session=s, log=log)
assert choice == {"BLOCK": 128}, (choice, log)
assert log[0].startswith("BLOCK=6: skipped: "), log
assert log[1:] == ["BLOCK=128: 0.0633 ms", "BLOCK=512: 0.2530 ms",
                   "BLOCK=1024: 0.5060 ms", "best: BLOCK=128 (0.0633 ms)",
                   "no cache directory: the choice is not kept"], log
# No device: the heuristic, even with arguments.
_, choice = tl.autotune(path, {"BLOCK": [128, 512]}, args=(*big, 4096), session=nodrv)
assert choice == {"BLOCK": 512}, choice
print("device_test: timed ok")
