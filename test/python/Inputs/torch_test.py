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

# CPU tensors on the VM.
xc = torch.zeros(300)
xc.numpy()[:] = np.arange(300)
zc = torch.zeros(300)
k.run_vm(xc, xc, zc, 300)
assert np.array_equal(zc.numpy(), 2 * np.arange(300, dtype=np.float32))
raises(TypeError, k.run_vm, x, x, zc, 300, want="run_vm takes host memory; this tensor is on cuda:0")
print("torch_test: ok")
