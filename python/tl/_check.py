"""The argument checks of python/tl, shared by every public function so
that a bad argument raises the same exception, with the same kind of
message, wherever it is passed (docs/runtime.md, "Errors"):

- TypeError when the argument is the wrong kind of thing: its Python
  type (None, a string where a number belongs, a float where an integer
  does, a list where an array does), its element type, where its memory is
  (NumPy or a CPU tensor against a CUDA tensor, another device), its
  layout (strides, not C-contiguous where it is written in place) or an
  array that cannot be written where the call writes it;
- ValueError when it is the right kind of thing with a value the call
  cannot take: a shape, a size, a number out of range, a name that is not
  among the choices.

Every message starts with the argument's name (`out: ...`, `argument 3
(n) of @vector_add: ...`). Failures of libtl itself (a kernel that does
not compile, no device) stay TLError."""

import operator

# Element types by NumPy's dtype name, torch's dtype name, and the array
# interface's typestr (without its byte-order character).
NUMPY_DTYPES = {
    "float16": "f16", "float32": "f32", "float64": "f64",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "bfloat16": "bf16", "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2",
}
TORCH_DTYPES = {"torch." + k: v for k, v in NUMPY_DTYPES.items()}
TYPESTRS = {
    "f2": "f16", "f4": "f32", "f8": "f64",
    "i1": "i8", "i2": "i16", "i4": "i32", "i8": "i64",
    "u1": "u8", "u2": "u16", "u4": "u32", "u8": "u64",
}


def dtype_name(kind, name):
    """TL's name of a NumPy or torch dtype name, or of a typestr ('bool'
    for booleans); None when it has none."""
    if name in ("bool", "torch.bool", "b1"):
        return "bool"
    table = {"numpy": NUMPY_DTYPES, "torch": TORCH_DTYPES, "typestr": TYPESTRS}[kind]
    return table.get(name)


def is_torch(v):
    return type(v).__module__.split(".")[0] == "torch" and hasattr(v, "data_ptr")


def _type(v):
    return "None" if v is None else type(v).__name__


def _value(v):
    """v for a message: its type and, for a scalar or a string, its value."""
    if v is None:
        return "None"
    if isinstance(v, (int, float, str, bytes)):
        return f"{type(v).__name__} {v!r}"
    return type(v).__name__


def integer(name, v, lo=None, hi=None):
    """v as an int: a Python or NumPy integer (not a bool), lo <= v <= hi
    where given."""
    if isinstance(v, bool) or v is None:
        raise TypeError(f"{name}: expected an integer, got {_value(v)}")
    try:
        v = operator.index(v)
    except TypeError:
        raise TypeError(f"{name}: expected an integer, got {_value(v)}") from None
    if lo is not None and v < lo or hi is not None and v > hi:
        if hi is None:
            raise ValueError(f"{name}: expected an integer of at least {lo}, got {v}")
        raise ValueError(f"{name}: expected an integer in {lo}..{hi}, got {v}")
    return v


def optional_integer(name, v, lo=None, hi=None):
    return None if v is None else integer(name, v, lo, hi)


def real(name, v, positive=False):
    """v as a finite float: a Python or NumPy integer or float (not a
    bool); > 0 when positive."""
    import math
    if isinstance(v, bool) or v is None or isinstance(v, (str, bytes)):
        raise TypeError(f"{name}: expected a number, got {_value(v)}")
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a number, got {_type(v)}") from None
    if hasattr(v, "shape") and getattr(v, "shape", ()) != ():
        raise TypeError(f"{name}: expected a number, got an array")
    if not math.isfinite(f) or positive and not f > 0:
        raise ValueError(f"{name}: expected a {'positive' if positive else 'finite'} number, "
                         f"got {f!r}")
    return f


def boolean(name, v):
    if not isinstance(v, bool):
        raise TypeError(f"{name}: expected True or False, got {_value(v)}")
    return v


def choice(name, v, options):
    """v, a string among options."""
    if not isinstance(v, str):
        raise TypeError(f"{name}: expected a string (one of {', '.join(map(repr, options))}), "
                        f"got {_value(v)}")
    if v not in options:
        raise ValueError(f"{name}: expected one of {', '.join(map(repr, options))}, got {v!r}")
    return v


def text(name, v, optional=False):
    """v, a string (or None when optional)."""
    if v is None and optional:
        return v
    if not isinstance(v, str):
        raise TypeError(f"{name}: expected a string, got {_value(v)}")
    return v


def path(name, v, optional=False):
    """v, a str, bytes or os.PathLike (or None when optional)."""
    import os
    if v is None and optional:
        return v
    if not isinstance(v, (str, bytes, os.PathLike)):
        raise TypeError(f"{name}: expected a path, got {_type(v)}")
    return v


def instance(name, v, cls, what):
    if not isinstance(v, cls):
        raise TypeError(f"{name}: expected {what}, got {_type(v)}")
    return v


def element_type(v):
    """TL's name of the element type of a NumPy array or torch tensor
    (None when it has none); its dtype's own name."""
    if is_torch(v):
        return dtype_name("torch", str(v.dtype)), str(v.dtype)
    return dtype_name("numpy", v.dtype.name), v.dtype.name


def _shape_text(shape):
    return "[" + ", ".join("*" if n is None else str(n) for n in shape) + "]"


def _matches(spec, shape):
    return len(spec) == len(shape) and all(
        a is None or isinstance(a, str) or a == b for a, b in zip(spec, shape))


def array(name, v, shape=None, dtype=None, kinds=None, device=None, out=False,
          peer="the call's other arrays"):
    """Checks an array argument and returns it (a NumPy array or a CUDA
    torch tensor; NumPy arrays are also made from lists and scalars unless
    `out`). shape: a tuple of ints and, for a dimension of any size, None
    or its name ('m'), or a list of such tuples (any of them). dtype: a TL element type name or
    a tuple of them ('f16'); kinds: NumPy dtype kinds instead ('iu' for
    integers, 'iuf' for real numbers). device: 'host' (NumPy), 'cuda', or
    a torch device (the tensor must be there); None takes either; peer
    names what sets it, for the message. out: the call writes v in place:
    it must be an array already, C-contiguous and writable."""
    import numpy as np
    torch = is_torch(v)
    if torch:
        if v.device.type != "cuda":
            raise TypeError(f"{name}: a torch tensor on {v.device}: tl.ops takes CUDA tensors "
                            f"(the GPU) or NumPy arrays (the CPU VM)")
        if device == "host":
            raise TypeError(f"{name}: expected a NumPy array to go with {peer}, got a CUDA "
                            f"tensor")
        if device not in (None, "cuda") and str(v.device) != str(device):
            raise TypeError(f"{name}: the tensor is on {v.device}, {peer} on {device}")
    elif isinstance(v, np.ndarray) or not out and v is not None and not hasattr(v, "__cuda_array_interface__"):
        if device not in (None, "host"):
            raise TypeError(f"{name}: expected a CUDA tensor to go with {peer}, got "
                            f"{_type(v)}")
        if not isinstance(v, np.ndarray):
            try:
                v = np.asarray(v)
            except (TypeError, ValueError):
                raise TypeError(f"{name}: expected a NumPy array, got {_type(v)}") from None
    else:
        raise TypeError(f"{name}: expected a NumPy array or a torch CUDA tensor, got {_type(v)}")
    got, native = element_type(v)
    if dtype is not None:
        want = (dtype,) if isinstance(dtype, str) else tuple(dtype)
        if got not in want:
            raise TypeError(f"{name}: expected elements of {' or '.join(want)}, got {native}")
    if kinds is not None:
        kind = ("f" if v.dtype.is_floating_point else "c" if v.dtype.is_complex else
                "b" if str(v.dtype) == "torch.bool" else
                "u" if str(v.dtype) == "torch.uint8" else "i") if torch else v.dtype.kind
        if kind not in kinds:
            what = {"iu": "integers", "iub": "integers", "iuf": "real numbers"}.get(kinds, kinds)
            raise TypeError(f"{name}: expected {what}, got {native}")
    got_shape = tuple(int(n) for n in v.shape)
    if shape is not None:
        shapes = shape if isinstance(shape, list) else [shape]
        if not any(_matches(s, got_shape) for s in shapes):
            want = " or ".join(_shape_text(s) for s in shapes)
            raise ValueError(f"{name}: expected shape {want}, got {list(got_shape)}")
    if out:
        if torch:
            if not v.is_contiguous():
                raise TypeError(f"{name}: the tensor is not contiguous; the call writes it "
                                f"in place")
        else:
            if not v.flags.c_contiguous:
                raise TypeError(f"{name}: the array is not C-contiguous (strides "
                                f"{v.strides}); the call writes it in place")
            if not v.flags.writeable:
                raise TypeError(f"{name}: the array is read-only; the call writes it")
    return v


def where(v):
    """'host' for a NumPy array, the device of a torch tensor."""
    return v.device if is_torch(v) else "host"
