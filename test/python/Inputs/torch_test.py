"""python/tl with torch tensors, through a stand-in torch (Inputs/faketorch,
tensors over NumPy arrays) and the stand-in CUDA driver: the launch uses
torch's current stream, the first launch opens the tensors' device, and
device, dtype and contiguity are checked; run_vm takes CPU tensors.

    torch_test.py SOURCE-ROOT FAKE-LIBCUDA LOG"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "faketorch"))
import numpy as np  # noqa: E402
import torch  # noqa: E402

import tl  # noqa: E402

root, driver, log = sys.argv[1], sys.argv[2], sys.argv[3]
path = os.path.join(root, "kernels", "vector_add.tl")


def raises(exc, fn, *args, want, **kw):
    try:
        fn(*args, **kw)
    except exc as e:
        assert want in str(e), f"expected {want!r} in:\n{e}"
        return
    raise AssertionError(f"expected {exc.__name__} with {want!r}")


s = tl.Session(cache_dir="", driver=driver)
k = s.compile(path, BLOCK=256)
x, y, z = (torch.zeros(1000, device="cuda") for _ in range(3))
raises(TypeError, k, x, torch.zeros(1000), z, 1000,
       want="argument 1 (y) of @vector_add: expected a CUDA tensor, got one on cpu")
assert s.device_ordinal() == -1
k(x, y, z, 1000)
assert s.device_ordinal() == 0
k(x, y, z, 600, stream=0x5eed)
raises(TypeError, k, x, torch.zeros(1000, device="cuda:1"), z, 1000,
       want="argument 1 (y) of @vector_add: the tensor is on cuda:1, the session's device is cuda:0")
raises(TypeError, k, x, torch.zeros(1000, dtype=torch.float16, device="cuda"), z, 1000,
       want="expected a buffer of f32, got f16")
raises(TypeError, k, x, torch.zeros(2, 500, device="cuda").t(), z, 1000,
       want="the tensor is not contiguous (call .contiguous())")
raises(TypeError, k, x, torch.zeros(1000, dtype=torch.bool, device="cuda"), z, 1000,
       want="packbits")
with open(log) as f:
    lines = f.read().splitlines()
assert lines == [
    "launch grid=4,1,1 block=64,1,1 smem=0 stream=0xc0ffee",
    "launch grid=3,1,1 block=64,1,1 smem=0 stream=0x5eed",
], lines

# The common call takes the launcher (a launch of learned dtypes, no
# argument structs); whatever it does not take falls back to the checks
# above, with their messages, and launches nothing.
assert k._launch((x, y, z, 1000), None, 0) is True
assert k._launch((x, y, z, 1000.0), None, 0) is False
raises(TypeError, k, x, y, z, 1000.0, want="expected an integer (i32), got the float 1000.0")
raises(ValueError, k, x, y, z, 1 << 40, want="argument 3 (n) of @vector_add: 1099511627776 does not fit i32")
raises(TypeError, k, x, y, z, want="@vector_add takes 4 arguments (x, y, z, n), not 3")
raises(TypeError, k, x, y, z, x, want="expected a scalar (i32), got a tensor")
raises(TypeError, k, x, torch.zeros(1000, dtype=torch.float16, device="cuda"), z, 1000,
       want="expected a buffer of f32, got f16")
raises(TypeError, k, x, torch.zeros(2, 500, device="cuda").t(), z, 1000,
       want="the tensor is not contiguous (call .contiguous())")
raises(TypeError, k, x, torch.zeros(1000, device="cuda:1"), z, 1000,
       want="the tensor is on cuda:1, the session's device is cuda:0")
raises(TypeError, k, x, torch.zeros(1000), z, 1000, want="expected a CUDA tensor, got one on cpu")
raises(TypeError, k, x, y, z, 1000, stream="s", want="stream: expected a CUstream handle")
x2k = torch.zeros(2000, device="cuda")  # n = 2000 needs 8000-byte buffers
k(x2k, x2k, x2k, 2000, stream=0x5eed)
k(x, y, z, 300)
# A packed u4 buffer as uint8 bytes and a float scalar, through the
# launcher once their dtypes are learned.
scale = s.compile(os.path.join(os.path.dirname(os.path.abspath(__file__)), "scale.tl"))
xs, qs = torch.zeros(128, device="cuda"), torch.zeros(64, dtype=torch.uint8, device="cuda")
assert scale._launch((xs, qs, 0.5), None, 0) is False  # uint8 not yet learned
scale(xs, qs, 0.5)
assert scale._launch((xs, qs, 0.5), None, 0) is True
assert scale._launch((xs, qs, 2), None, 0) is True  # an int for a float
raises(TypeError, scale, xs, qs, "0.5", want="expected a scalar (f32), got str")
with open(log) as f:
    lines = f.read().splitlines()
assert lines[2:] == [
    "launch grid=4,1,1 block=64,1,1 smem=0 stream=0xc0ffee",
    "launch grid=8,1,1 block=64,1,1 smem=0 stream=0x5eed",
    "launch grid=2,1,1 block=64,1,1 smem=0 stream=0xc0ffee",
    "launch grid=1,1,1 block=32,1,1 smem=0 stream=0xc0ffee",
    "launch grid=1,1,1 block=32,1,1 smem=0 stream=0xc0ffee",
    "launch grid=1,1,1 block=32,1,1 smem=0 stream=0xc0ffee",
], lines

# Threads sharing a kernel: each launch keeps its own arguments and
# stream (the launcher's arrays are filled under the session's lock).
import threading  # noqa: E402
open(log, "w").close()
x2 = torch.zeros(2000, device="cuda")


def launches(n, stream):
    for _ in range(300):
        k(x2, x2, x2, n, stream=stream)


sys.setswitchinterval(1e-6)  # switch threads often
threads = [threading.Thread(target=launches, args=(1000, 0x1)),
           threading.Thread(target=launches, args=(2000, 0x2))]
for t in threads:
    t.start()
for t in threads:
    t.join()
with open(log) as f:
    lines = f.read().splitlines()
assert sorted(set(lines)) == ["launch grid=4,1,1 block=64,1,1 smem=0 stream=0x1",
                              "launch grid=8,1,1 block=64,1,1 smem=0 stream=0x2"], set(lines)
assert len(lines) == 600, len(lines)

# The kernel's `assume` holds for every launch, the launcher's included:
# an integer argument and a buffer's address.
rows = s.compile("""
tl.kernel @rows(%x: !tl.ptr<f32>, %n: i32) grid(1) threads(4) attributes {assume = {n = 4, x = 16}} {
  %c0 = arith.constant 0 : i32
  %gx = tl.view_global %x[%n, 4] : !tl.global<?x4xf32>
  %t = tl.load_global %gx[%c0, %c0] : !tl.global<?x4xf32> -> !tl.reg<4x4xf32, #tl.layout<spatial(4, 1).local(1, 4)>>
  tl.store_global %t, %gx[%c0, %c0] : !tl.reg<4x4xf32, #tl.layout<spatial(4, 1).local(1, 4)>>, !tl.global<?x4xf32>
}
""")
xr = torch.zeros(64, device="cuda")
assert xr.data_ptr() % 16 == 0
rows(xr, 8)
assert rows._launch((xr, 8), None, 0) is True
raises(tl.TLError, rows, xr, 6, want="argument 'n' = 6 breaks 'assume': it is not a multiple of 4")
odd = torch.Tensor(xr.numpy()[1:], torch.float32, xr.device)
raises(tl.TLError, rows, odd, 8, want="breaks 'assume': it is not 16-byte aligned")
rows(xr, 12)

# CPU tensors on the VM.
xc = torch.zeros(300)
xc.numpy()[:] = np.arange(300)
zc = torch.zeros(300)
k.run_vm(xc, xc, zc, 300)
assert np.array_equal(zc.numpy(), 2 * np.arange(300, dtype=np.float32))
raises(TypeError, k.run_vm, x, x, zc, 300, want="run_vm takes host memory; this tensor is on cuda:0")
print("torch_test: ok")
