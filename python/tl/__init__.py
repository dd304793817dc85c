"""TL kernels from Python: compile a kernel written in the tl dialect with
its template values, launch it on a CUDA stream over PyTorch tensors (or
any object with __cuda_array_interface__), or run it on the CPU virtual
machine over NumPy arrays.

    import tl
    k = tl.compile("kernels/vector_add.tl", BLOCK=256)
    k(x, y, z, n)                 # torch tensors on the GPU, current stream
    k.run_vm(xa, ya, za, n)       # NumPy arrays, za written in place

This package is pure Python over the shared library libtl (ctypes); see
docs/runtime.md. torch is imported only when a torch tensor is passed."""

import builtins
import ctypes
import os
import re
import threading

from . import _check, _lib
from ._check import dtype_name as _dtype_name, is_torch as _is_torch
from ._lib import ARG_BUFFER, ARG_FLOAT, ARG_INT, ARG_TENSOR_MAP, PTX_ORIGINS

__all__ = ["TLError", "TLArgumentError", "Session", "Kernel", "Param", "compile", "default_session", "ops",
           "synchronize", "autotune"]


class TLError(RuntimeError):
    """A failure of libtl: the message holds its diagnostics (located
    errors with the source line and a caret)."""


class TLArgumentError(TLError, ValueError):
    """libtl refused a launch's argument before the launch (a buffer
    smaller than a view of it: "argument 1 (kc) of @decode_attn: the view
    ... needs N bytes, the buffer has M"): a ValueError naming the
    argument, as python/tl's own checks raise, and a TLError."""


_ARGUMENT_REFUSAL = re.compile(r"(?:error: )?argument \d+ \(\w+\) of @[\w.$-]+: the view ")


def _launch_error(msg):
    """The exception for libtl's message msg of a failed call."""
    return (TLArgumentError if _ARGUMENT_REFUSAL.match(msg) else TLError)(msg)


class Param:
    """A kernel parameter: its name, kind ('buffer', 'int', 'float' or
    'tensormap', which takes the tensor the map is made over: a NumPy
    array for run_vm, a CUDA tensor for a launch, usually the one passed
    to the kernel's pointer parameter too; docs/runtime.md), the element
    type of a buffer or a tensor map or the type of a scalar ('f16', 'u4',
    'i32'), the width of one element in bits, and whether a buffer is
    packed (its elements are not whole bytes NumPy holds one by one: pass
    its bytes as a uint8 array)."""

    def __init__(self, info):
        self.name = info.name.decode()
        self.kind = ("int", "float", "buffer", "tensormap")[info.kind]
        self.dtype = info.dtype.decode()
        self.bits = info.bits
        self.packed = bool(info.packed)

    def __repr__(self):
        return f"Param({self.name!r}, {self.kind!r}, {self.dtype!r})"


_BOOL_NOTE = ("bool arrays hold a byte per element, and TL's bool buffers a "
              "bit: pass the packed bits as uint8 (numpy.packbits(..., "
              "bitorder='little'))")


def _define_text(name, value):
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        return f"{name}={value}"
    if isinstance(value, str):
        return f"{name}={value}"
    try:  # a NumPy dtype or scalar type: its TL name
        import numpy
        t = _check.dtype_name("numpy", numpy.dtype(value).name)
        if t:
            return f"{name}={t}"
    except (ImportError, TypeError):
        pass
    raise TypeError(f"define {name}: expected an integer or a type name, not {value!r}")


def _scalar_arg(p, value, where):
    a = _lib.TlArg()
    try:
        import numpy
        if isinstance(value, numpy.generic):
            value = value.item()
    except ImportError:
        pass
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int) and p.kind == "float":
        a.kind, a.f = ARG_FLOAT, float(value)
    elif isinstance(value, int):
        lo, hi = _int_range(p)
        if not lo <= value <= hi:
            raise ValueError(f"{where}: {value} does not fit {p.dtype}")
        a.kind, a.i = ARG_INT, value
    elif isinstance(value, float):
        if p.kind != "float":
            raise TypeError(f"{where}: expected an integer ({p.dtype}), got the float {value!r}")
        a.kind, a.f = ARG_FLOAT, value
    else:
        raise TypeError(f"{where}: expected a scalar ({p.dtype}), got {type(value).__name__}")
    return a


def _int_range(p):
    """The values an integer parameter takes: its signed and unsigned
    ranges together (two's complement, as C's conversion)."""
    b = p.bits
    return (-(1 << (b - 1)) if b > 1 else 0), (1 << b) - 1


def _check_dtype(p, got, where, native):
    if got is None:
        raise TypeError(f"{where}: the element type {native} has no TL type")
    if got == "bool" and p.kind == "buffer":
        raise TypeError(f"{where}: {_BOOL_NOTE}")
    if p.kind == "tensormap" and got != p.dtype:
        raise TypeError(f"{where}: expected a tensor of {p.dtype} (the tensor map's "
                        f"elements), got {got}")
    if got != p.dtype and not (p.packed and got == "u8"):
        also = " (or its packed bytes as uint8)" if p.packed else ""
        raise TypeError(f"{where}: expected a buffer of {p.dtype}{also}, got {got}")


def _map_arg(c, where, shape, strides, item):
    """Fills TlArg c's tensor-map fields from the tensor's shape and its
    strides in bytes (None: C-contiguous): the shape, the strides in
    elements and `bytes`, the span from its first element to the end of its
    last. TypeError for a tensor no map can be made over: more than three
    dimensions, elements not consecutive along the last, or other strides
    that are not positive multiples of 16 bytes (TMA's rule). A tensor with
    no elements is left to libtl, which names the empty dimension."""
    shape = tuple(int(n) for n in shape)
    if not 1 <= len(shape) <= _lib.MAP_MAX_RANK:
        raise TypeError(f"{where}: a tensor map is made over a tensor of 1 to "
                        f"{_lib.MAP_MAX_RANK} dimensions, not {len(shape)}")
    if strides is None:
        strides, step = [], item
        for n in reversed(shape):
            strides.insert(0, step)
            step *= n
    strides = tuple(int(x) for x in strides)
    if 0 not in shape:
        if strides[-1] != item:
            raise TypeError(f"{where}: the tensor's innermost stride is {strides[-1]} "
                            f"bytes; a tensor map reads consecutive elements ({item} "
                            f"bytes apart) along the last dimension")
        for d, x in enumerate(strides[:-1]):
            if x <= 0 or x % 16:
                raise TypeError(f"{where}: the tensor's stride of dimension {d} is {x} "
                                f"bytes; a tensor map's strides are positive multiples "
                                f"of 16 bytes (strides {strides})")
    c.kind, c.rank = ARG_TENSOR_MAP, len(shape)
    c.bytes = (item + sum((n - 1) * x for n, x in zip(shape, strides))) if 0 not in shape else 0
    for d, (n, x) in enumerate(zip(shape, strides)):
        c.shape[d], c.strides[d] = n, x // item


class Kernel:
    """One instance of one kernel (its source and defines), parsed and
    verified. Made by compile(); PTX is compiled on first launch (and
    cached on disk)."""

    def __init__(self, session, source, defines, kernel=None):
        self.session = session
        self._lib = L = _lib.lib()
        _check.path("source", source)
        _check.text("kernel", kernel, optional=True)
        defs = [_define_text(k, v).encode() for k, v in defines.items()]
        arr = (ctypes.c_char_p * max(len(defs), 1))(*defs)
        d = _lib.TlProgramDesc()
        if isinstance(source, bytes):
            source = source.decode()
        if not isinstance(source, str):
            source = os.fspath(source)
        if "\n" in source or "tl.kernel" in source:
            text = source.encode()
            d.path, d.text, d.len = b"<text>", text, len(text)
        else:
            d.path = source.encode()
        d.defines, d.num_defines = arr, len(defs)
        d.kernel = kernel.encode() if kernel else None
        with session._lock:
            self._h = L.tl_program_create(session._h, ctypes.byref(d))
            if not self._h:
                raise TLError(session._error())
        self.name = L.tl_program_name(self._h).decode()
        self.params = []
        for i in range(L.tl_program_num_params(self._h)):
            info = _lib.TlParamInfo()
            L.tl_program_param(self._h, i, ctypes.byref(info))
            self.params.append(Param(info))
        # The torch dtypes each buffer parameter has accepted (learned by
        # _device_args), which the launcher takes without a message, each
        # with its element size (a buffer's bytes: numel times it).
        self._ok = [{} for _ in self.params]
        self._launch = _make_launcher(self)

    def __del__(self):
        h = getattr(self, "_h", None)
        if h:
            with self.session._lock:
                self._lib.tl_program_destroy(h)
            self._h = None

    def __repr__(self):
        return f"<tl.Kernel @{self.name}({', '.join(p.name for p in self.params)})>"

    def template_value(self, name):
        """The instance's value of integer template parameter `name`, or
        None when the kernel has none of that name."""
        _check.text("name", name)
        v = ctypes.c_int64()
        if self._lib.tl_program_template_value(self._h, name.encode(), ctypes.byref(v)):
            return v.value
        return None

    def _count(self, args):
        if len(args) != len(self.params):
            names = ", ".join(p.name for p in self.params)
            raise TypeError(f"@{self.name} takes {len(self.params)} arguments "
                            f"({names}), not {len(args)}")

    # --- The VM ---------------------------------------------------------

    def run_vm(self, *args):
        """Runs the kernel on the CPU block VM. Buffers are NumPy arrays
        (or CPU torch tensors), read and written in place: a
        non-contiguous array is copied in and its result copied back. A
        read-only array is read from a copy; a kernel that writes that
        copy is a TypeError after the run (its result has nowhere to go).
        A tensor map takes the array it is made over, in place (any
        strides TMA can follow: see _map_arg), usually the one the
        kernel's pointer parameter is given too."""
        import numpy
        self._count(args)
        cargs = (_lib.TlArg * max(len(args), 1))()
        keep, back, readonly = [], [], []
        for i, (p, v) in enumerate(zip(self.params, args)):
            where = f"argument {i} ({p.name}) of @{self.name}"
            if p.kind not in ("buffer", "tensormap"):
                if isinstance(v, numpy.ndarray) or _is_torch(v):
                    raise TypeError(f"{where}: expected a scalar ({p.dtype}), got an array")
                cargs[i] = _scalar_arg(p, v, where)
                continue
            if _is_torch(v):
                if v.device.type != "cpu":
                    raise TypeError(f"{where}: run_vm takes host memory; this tensor is on {v.device}")
                v = v.numpy()
            if not isinstance(v, numpy.ndarray):
                what = " (the tensor a tensor map is made over)" if p.kind == "tensormap" else ""
                raise TypeError(f"{where}: expected a NumPy array of {p.dtype}{what}, "
                                f"got {type(v).__name__}")
            _check_dtype(p, _dtype_name("numpy", v.dtype.name), where, v.dtype.name)
            if p.kind == "tensormap":
                # The map reads the array where it is: the memory the
                # pointer parameter is given when it is the same array.
                c = cargs[i]
                _map_arg(c, where, v.shape, v.strides, v.itemsize)
                c.host = v.ctypes.data
                c.dtype = p.dtype.encode()
                keep.append(v)
                continue
            a = v
            if not (v.flags.c_contiguous and v.flags.writeable):
                a = numpy.ascontiguousarray(v).copy()
                (back if v.flags.writeable else readonly).append((where, v, a))
            keep.append(a)
            c = cargs[i]
            c.kind, c.host, c.bytes = ARG_BUFFER, a.ctypes.data, a.nbytes
            c.dtype = _dtype_name("numpy", a.dtype.name).encode()
        self.session._call(self._lib.tl_program_run_vm, self._h, cargs, len(args))
        for _, v, a in back:
            numpy.copyto(v, a)
        for where, v, a in readonly:
            # The kernel's writes to a read-only array went to the copy:
            # a changed copy is a result that would be lost.
            if numpy.ascontiguousarray(v).tobytes() != a.tobytes():
                raise TypeError(f"{where}: the kernel writes this buffer, but the array is "
                                f"read-only: pass a writable array for its result")

    # --- The GPU --------------------------------------------------------

    def ptx(self, sm=None):
        """The kernel's PTX for the target of SM `sm` (90), or of the open
        device when sm is None."""
        return self.ptx_info(sm)["ptx"]

    def ptx_info(self, sm=None):
        """The PTX and what came with it: a dict with ptx, target,
        smem_bytes, workspace_bytes, origin ('compiled', 'cached' or
        'rebuilt') and why (the reason an entry was rebuilt)."""
        sm = _check.optional_integer("sm", sm, 1, 0xffffffff)
        info = _lib.TlPtxInfo()
        self.session._call(self._lib.tl_program_ptx, self._h, sm or 0, ctypes.byref(info))
        return {
            "ptx": ctypes.string_at(info.ptx, info.len).decode(),
            "target": info.target.decode(),
            "smem_bytes": info.smem_bytes,
            "workspace_bytes": info.workspace_bytes,
            "origin": PTX_ORIGINS[info.origin],
            "why": info.why.msg.decode(),
        }

    def _device_args(self, args):
        self._count(args)
        cargs = (_lib.TlArg * max(len(args), 1))()
        torch_seen = False
        on = []  # (where, device) of each torch tensor
        for i, (p, v) in enumerate(zip(self.params, args)):
            where = f"argument {i} ({p.name}) of @{self.name}"
            if p.kind not in ("buffer", "tensormap"):
                if _is_torch(v) or hasattr(v, "__cuda_array_interface__"):
                    raise TypeError(f"{where}: expected a scalar ({p.dtype}), got a tensor")
                cargs[i] = _scalar_arg(p, v, where)
                continue
            c = cargs[i]
            c.kind = ARG_BUFFER
            is_map = p.kind == "tensormap"
            if _is_torch(v):
                torch_seen = True
                if not v.is_cuda:
                    raise TypeError(f"{where}: expected a CUDA tensor, got one on {v.device}")
                on.append((where, v.device))
                got = _dtype_name("torch", str(v.dtype))
                if is_map:
                    # Any strides TMA can follow (_map_arg), in bytes.
                    _check_dtype(p, got, where, str(v.dtype))
                    item = v.element_size()
                    _map_arg(c, where, v.shape, [x * item for x in v.stride()], item)
                    c.device = v.data_ptr()
                    c.dtype = got.encode()
                    continue
                if not v.is_contiguous():
                    raise TypeError(f"{where}: the tensor is not contiguous (call .contiguous())")
                _check_dtype(p, got, where, str(v.dtype))
                self._ok[i][v.dtype] = v.element_size()
                c.device, c.bytes = v.data_ptr(), v.numel() * v.element_size()
            elif hasattr(v, "__cuda_array_interface__"):
                cai = v.__cuda_array_interface__
                shape, typestr = tuple(cai["shape"]), cai["typestr"]
                got = _dtype_name("typestr", typestr[1:])
                if typestr[0] == ">":
                    raise TypeError(f"{where}: big-endian data ({typestr})")
                _check_dtype(p, got, where, typestr)
                item = int(typestr[2:])
                strides = cai.get("strides")
                if is_map:
                    _map_arg(c, where, shape, strides, item)
                    c.device = cai["data"][0] or 0
                    c.dtype = got.encode()
                    continue
                if strides is not None:
                    want, step = [], item
                    for n in reversed(shape):
                        want.append(step)
                        step *= n
                    if tuple(reversed(want)) != tuple(strides) and 0 not in shape:
                        raise TypeError(f"{where}: the array is not C-contiguous "
                                        f"(strides {tuple(strides)})")
                count = 1
                for n in shape:
                    count *= n
                c.device, c.bytes = cai["data"][0] or 0, count * item
            else:
                what = " (the tensor a tensor map is made over)" if is_map else ""
                raise TypeError(f"{where}: expected a CUDA tensor or an object with "
                                f"__cuda_array_interface__{what}, got {type(v).__name__}")
            c.dtype = got.encode()
        if on and self.session.device_ordinal() < 0:
            # The first launch opens the tensors' device.
            self.session.open_device(on[0][1].index or 0)
        dev = self.session.device_ordinal()
        for where, d in on:
            if (d.index or 0) != dev:
                raise TypeError(f"{where}: the tensor is on {d}, the session's "
                                f"device is cuda:{dev}")
        return cargs, torch_seen

    def _tune_desc(self, space, args):
        """The libtl description of tuning over space ({NAME: [values]})
        on these launch arguments, and what it holds alive."""
        cargs, _ = self._device_args(args)
        specs = [f"{n}={','.join(str(int(v)) for v in vals)}".encode()
                 for n, vals in space.items()]
        shapes = (_lib.TlShape * max(len(args), 1))()
        for i, (p, v) in enumerate(zip(self.params, args)):
            shape = _buffer_shape(p, v) if p.kind == "buffer" else None
            if shape is not None and 0 < len(shape) <= _lib.MAX_RANK:
                shapes[i].rank = len(shape)
                for d, n in enumerate(shape):
                    shapes[i].dims[d] = n
        d = _lib.TlTuneDesc()
        d.space = (ctypes.c_char_p * max(len(specs), 1))(*specs)
        d.num_space, d.args, d.shapes, d.nargs = len(specs), cargs, shapes, len(args)
        return d, (cargs, shapes, specs)

    def _tune_lookup(self, space, args):
        """The tune cache's entry for tuning over space on these arguments
        (tl_program_tune_lookup): (status, choice, ms, why, path), choice a
        dict on a hit."""
        d, keep = self._tune_desc(space, args)
        values = (ctypes.c_int64 * max(len(space), 1))()
        e = _lib.TlTuneEntry()
        self.session._call(self._lib.tl_program_tune_lookup, self._h, ctypes.byref(d),
                           values, ctypes.byref(e))
        choice = dict(zip(space, values)) if e.status == _lib.TUNE_HIT else None
        return e.status, choice, e.ms, e.why.msg.decode(errors="replace"), _text(e.path)

    def _tune_store(self, space, args, choice, ms):
        """Writes choice as the tune cache's entry (tl_program_tune_store);
        its path, or None with no cache directory."""
        d, keep = self._tune_desc(space, args)
        values = (ctypes.c_int64 * max(len(space), 1))(*(choice[n] for n in space))
        e = _lib.TlTuneEntry()
        self.session._call(self._lib.tl_program_tune_store, self._h, ctypes.byref(d),
                           values, ms, ctypes.byref(e))
        return _text(e.path)

    def launch_dims(self, *args, sm=None):
        """(grid, threads, smem_bytes) of a launch over these arguments
        (buffers as for a launch; only the scalars matter)."""
        sm = _check.optional_integer("sm", sm, 1, 0xffffffff)
        cargs, _ = self._device_args(args)
        dims = _lib.TlLaunchDims()
        self.session._call(self._lib.tl_program_launch_dims, self._h, cargs, len(args),
                           sm or 0, ctypes.byref(dims))
        return tuple(dims.grid), dims.threads, dims.smem_bytes

    def resources(self, *args):
        """What the driver's compilation of the kernel uses for a launch
        over these arguments, as tl-run --bench prints it: a dict of
        registers and local_bytes (spills, stack) a thread, static_smem
        and smem_bytes (dynamic) a block, max_threads a block, and
        blocks_per_sm, how many blocks of this launch an SM holds at once.
        Launches nothing."""
        cargs, _ = self._device_args(args)
        r = _lib.TlKernelResources()
        self.session._call(self._lib.tl_program_resources, self._h, cargs, len(args),
                           ctypes.byref(r))
        _, _, smem = self.launch_dims(*args)
        return dict(registers=r.registers, local_bytes=r.local_bytes, static_smem=r.static_smem,
                    smem_bytes=smem, max_threads=r.max_threads, blocks_per_sm=r.blocks_per_sm)

    def time(self, *args, warmup=5, iters=50):
        """The median time in ms of `iters` launches over these arguments
        after `warmup`, each from a cold L2 cache, as tl-run --bench
        times; on the default stream, and waits."""
        warmup = _check.integer("warmup", warmup, 0, 0xffffffff)
        iters = _check.integer("iters", iters, 1, 0xffffffff)
        cargs, _ = self._device_args(args)
        ms = ctypes.c_double()
        self.session._call(self._lib.tl_program_time, self._h, cargs, len(args), warmup,
                           iters, ctypes.byref(ms))
        return ms.value

    def __call__(self, *args, stream=None):
        """Launches the kernel on the GPU and returns without waiting.
        stream: a CUstream handle (an int), an object with .cuda_stream
        (torch.cuda.Stream) or __cuda_stream__; None is torch's current
        stream when a torch tensor is passed, else the default stream."""
        if self._launch(args, stream, self.session._open):
            return
        # Anything the launcher does not take: checked argument by
        # argument, with messages, then launched.
        handle = _stream_handle(stream)  # checked before the arguments
        cargs, torch_seen = self._device_args(args)
        session = self.session
        if stream is None and torch_seen:
            handle = _stream_handle(_current_torch_stream(session.device_ordinal()))
        session._call(self._lib.tl_program_launch, self._h, cargs, len(args), handle)
        session._open = session.device_ordinal()


def _make_launcher(kernel):
    """The kernel's launcher, launch(args, stream, device): the common
    call (contiguous CUDA torch tensors of dtypes the parameters have
    accepted before, on the session's open device `device`, Python ints in
    range and Python floats) packed into arrays made once and launched
    with tl_program_launch_values; False, before anything is launched, for
    anything else, and always for a kernel with a tensor map. The checks are written out parameter by parameter
    (compiled once per kernel), so a launch makes no message, no argument
    structs and no loop."""
    params, n = kernel.params, len(kernel.params)
    if any(p.kind == "tensormap" for p in params):
        # A word cannot carry a tensor map (tl_program_launch_values
        # refuses one): every launch takes the general path.
        return lambda args, stream, device: False
    names = [f"a{i}" for i in range(n)]
    has_buffer = any(p.kind == "buffer" for p in params)
    head = ["if device < 0 or len(args) != %d:" % n,
            "    return False"]
    # Under the session's lock: the arrays (and the stream's ctypes
    # object) are the kernel's, shared by the threads that launch it.
    body = ["%s, = args" % ", ".join(names)] if n else []
    for i, (p, a) in enumerate(zip(params, names)):
        if p.kind == "buffer":
            # The bytes libtl checks the kernel's views of it against.
            body += [f"if ({a}.dtype not in ok{i} or {a}.get_device() != device"
                     f" or not {a}.is_contiguous()):",
                     "    return False",
                     f"words[{i}] = {a}.data_ptr()",
                     f"sizes[{i}] = {a}.numel() * ok{i}[{a}.dtype]"]
        elif p.kind == "int":
            lo, hi = _int_range(p)
            body += [f"if type({a}) is not int or not {lo} <= {a} <= {hi}:",
                     "    return False",
                     f"words[{i}] = {a}"]
        else:
            body += [f"if type({a}) is not float and type({a}) is not int:",
                     "    return False",
                     f"reals[{i}] = {a}"]
    body += ["if stream is None:",
             "    stream = current_stream(device) if %s else 0" % has_buffer,
             "elif type(stream) is not int:",
             "    stream = stream_handle(stream) or 0",
             "if stream != last[0]:",
             "    last[0], last[1] = stream, ctypes.c_void_p(stream or None)",
             "if launch_values(h, words, reals, sizes, %d, last[1]):" % n,
             "    raise launch_error(error())",
             "return True"]
    src = ("def launch(args, stream, device):\n"
           "    try:\n" + "".join(f"        {line}\n" for line in head) +
           "        with lock:\n" + "".join(f"            {line}\n" for line in body) +
           "    except (AttributeError, TypeError, ValueError):\n"
           "        return False\n")
    # The C function is called without ctypes' argument conversions: the
    # handle, the arrays and the stream are ctypes objects already (the
    # stream's made again only when it changes), the count an int.
    scope = {
        "ctypes": ctypes,
        "words": (ctypes.c_int64 * max(n, 1))(),
        "reals": (ctypes.c_double * max(n, 1))(),
        "sizes": (ctypes.c_int64 * max(n, 1))(),
        "launch_values": kernel._lib["tl_program_launch_values"],
        "h": ctypes.c_void_p(kernel._h),
        "last": [0, None],
        "lock": kernel.session._lock,
        "error": kernel.session._error,
        "current_stream": _current_torch_stream,
        "stream_handle": _stream_handle,
        "launch_error": _launch_error,
    }
    scope.update({f"ok{i}": kernel._ok[i] for i in range(n)})
    exec(builtins.compile(src, f"<tl launcher @{kernel.name}>", "exec"), scope)
    return scope["launch"]


def _text(b):
    return b.decode(errors="replace") if b else None


def _buffer_shape(p, v):
    """The shape a tune key records for buffer v of parameter p: its
    array shape, or None (its elements in one dimension) for the packed
    bytes of a packed parameter."""
    if _is_torch(v):
        got, shape = _dtype_name("torch", str(v.dtype)), tuple(v.shape)
    else:
        cai = v.__cuda_array_interface__
        got, shape = _dtype_name("typestr", cai["typestr"][1:]), tuple(cai["shape"])
    if got != p.dtype:
        return None
    return shape


_torch_stream = None  # torch's raw current-stream accessor, found once


def _current_torch_stream(device):
    """torch's current stream on `device` as a CUstream handle: through
    torch's raw accessor where it has one (no Stream object made)."""
    global _torch_stream
    if _torch_stream is None:
        import torch
        raw = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
        _torch_stream = raw or (lambda d: torch.cuda.current_stream().cuda_stream)
    return _torch_stream(device)


def _stream_handle(stream):
    if stream is None:
        return None
    if hasattr(stream, "__cuda_stream__"):
        stream = stream.__cuda_stream__()[1]
    elif hasattr(stream, "cuda_stream"):
        stream = stream.cuda_stream
    if not isinstance(stream, int):
        raise TypeError(f"stream: expected a CUstream handle, got {type(stream).__name__}")
    return stream or None


class Session:
    """libtl's session: the CUDA device (opened on the first launch, or
    with open_device), the PTX cache's directory (None: the default,
    $TL_CACHE_DIR or ~/.cache/tl; '': no cache), the driver library
    (None: libcuda.so.1) and whether launches check each buffer against
    the kernel's views of it (check_extents; docs/runtime.md, "Extent
    checks")."""

    def __init__(self, cache_dir=None, driver=None, check_extents=True):
        _check.path("cache_dir", cache_dir, optional=True)
        _check.path("driver", driver, optional=True)
        if not isinstance(check_extents, bool):
            raise TypeError(f"check_extents: expected True or False, got "
                            f"{type(check_extents).__name__}")
        self._lib = _lib.lib()
        self._lock = threading.RLock()
        self._h = self._lib.tl_session_create()
        self._open = -1  # the open device's ordinal, kept for launches
        if cache_dir is not None:
            self._lib.tl_session_set_cache_dir(self._h, os.fsencode(cache_dir))
        if driver is not None:
            self._lib.tl_session_set_driver(self._h, os.fsencode(driver))
        if not check_extents:
            self._lib.tl_session_set_check_extents(self._h, False)

    def __del__(self):
        h = getattr(self, "_h", None)
        if h:
            self._lib.tl_session_destroy(h)
            self._h = None

    def _error(self):
        return self._lib.tl_session_error(self._h).decode(errors="replace").rstrip()

    def _call(self, fn, *args):
        """Calls a fallible libtl function under the session's lock (the
        error text is the session's) and raises TLError when it fails."""
        with self._lock:
            if fn(*args):
                raise _launch_error(self._error())

    def open_device(self, ordinal=0):
        ordinal = _check.integer("ordinal", ordinal, 0, 0x7fffffff)
        self._call(self._lib.tl_session_open_device, self._h, ordinal)
        self._open = self.device_ordinal()

    def synchronize(self):
        """Waits until the device has run all the work given to it; the
        errors of earlier launches, which return without waiting, are
        raised here."""
        self._call(self._lib.tl_session_synchronize, self._h)

    def device_ordinal(self):
        return self._lib.tl_session_device_ordinal(self._h)

    def device_name(self):
        n = self._lib.tl_session_device_name(self._h)
        return n.decode() if n else None

    def device_sm(self):
        return self._lib.tl_session_device_sm(self._h)

    def device_sms(self):
        return self._lib.tl_session_device_sms(self._h)

    def compile(self, source, kernel=None, **defines):
        """A Kernel from a path or the text of a .tl file (text has a
        newline or 'tl.kernel' in it); defines set template parameters,
        integers or type names (WT='u4')."""
        return Kernel(self, source, defines, kernel)


_default = None


def default_session():
    """The session tl.compile uses (made on first use)."""
    global _default
    if _default is None:
        _default = Session()
    return _default


def synchronize():
    """Waits for the default session's device (Session.synchronize)."""
    default_session().synchronize()


def compile(source, kernel=None, **defines):
    """tl.compile(path_or_text, BLOCK=256): a Kernel in the default
    session. kernel names the tl.kernel when the file has several."""
    return default_session().compile(source, kernel=kernel, **defines)


from ._tune import autotune  # noqa: E402  (uses compile above)
from . import ops  # noqa: E402,F401  (uses compile above)
