"""A stand-in for the few parts of torch that python/tl uses, over NumPy
arrays posing as device memory (the stand-in CUDA driver's): tensors
with data_ptr, device (and get_device), dtype, contiguity, strides, shape
and size, and a current stream with a handle. Only tests under
test/python import it."""
import numpy as np


class device:
    def __init__(self, type, index=None):
        self.type, self.index = type, index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


class dtype:
    def __init__(self, name, np_type):
        self.name, self.np_type = name, np_type

    def __str__(self):
        return "torch." + self.name


float16 = dtype("float16", np.float16)
float32 = dtype("float32", np.float32)
uint8 = dtype("uint8", np.uint8)
bool = dtype("bool", np.bool_)


class Tensor:
    def __init__(self, array, dt, dev):
        self.array, self.dtype, self.device = array, dt, dev
        self._ptr = array.ctypes.data  # (NumPy's .ctypes is slow to make)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def data_ptr(self):
        return self._ptr

    def is_contiguous(self):
        return self.array.flags.c_contiguous

    def stride(self):
        return tuple(x // self.array.itemsize for x in self.array.strides)

    @property
    def shape(self):
        return self.array.shape

    def numel(self):
        return self.array.size

    def element_size(self):
        return self.array.itemsize

    @property
    def nbytes(self):
        return self.array.nbytes

    def get_device(self):
        return self.device.index if self.device.type == "cuda" else -1

    def numpy(self):
        return self.array

    def t(self):
        return Tensor(self.array.T, self.dtype, self.device)


def zeros(*shape, dtype=float32, device="cpu"):
    kind, _, index = device.partition(":")
    dev = globals()["device"](kind, int(index) if index else (0 if kind == "cuda" else None))
    return Tensor(np.zeros(shape, dtype.np_type), dtype, dev)


class _Stream:
    def __init__(self, handle):
        self.cuda_stream = handle


class cuda:
    @staticmethod
    def current_stream():
        return _Stream(0xc0ffee)

    @staticmethod
    def is_available():
        return False
