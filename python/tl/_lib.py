"""The ctypes declarations of libtl's runtime API (include/tl/program.h)
and the search for the library.

libtl is looked for, in order, at $TL_LIBRARY (the path of libtl.so), in
the build trees of a source checkout this package sits in (build/lib and
build-*/lib beside python/), and by the dynamic loader's own search
(LD_LIBRARY_PATH, the system's library directories)."""

import ctypes
import glob
import os

# Mirrors of the C structs, field for field.

MAP_MAX_RANK = 3  # TL_TENSOR_MAP_MAX_RANK


class TlProgramDesc(ctypes.Structure):
    _fields_ = [
        ("path", ctypes.c_char_p),
        ("text", ctypes.c_char_p),
        ("len", ctypes.c_size_t),
        ("defines", ctypes.POINTER(ctypes.c_char_p)),
        ("num_defines", ctypes.c_uint),
        ("kernel", ctypes.c_char_p),
    ]


class TlParamInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("kind", ctypes.c_int),
        ("dtype", ctypes.c_char_p),
        ("bits", ctypes.c_uint),
        ("packed", ctypes.c_bool),
    ]


class TlArg(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int),
        ("i", ctypes.c_int64),
        ("f", ctypes.c_double),
        ("host", ctypes.c_void_p),
        ("device", ctypes.c_uint64),
        ("bytes", ctypes.c_size_t),
        ("dtype", ctypes.c_char_p),
        # A tensor map's tensor: elements, outermost first.
        ("rank", ctypes.c_uint),
        ("shape", ctypes.c_int64 * MAP_MAX_RANK),
        ("strides", ctypes.c_int64 * MAP_MAX_RANK),
    ]


class TlErr(ctypes.Structure):
    _fields_ = [("msg", ctypes.c_char * 256)]


class TlPtxInfo(ctypes.Structure):
    _fields_ = [
        ("ptx", ctypes.c_void_p),
        ("len", ctypes.c_size_t),
        ("target", ctypes.c_char_p),
        ("smem_bytes", ctypes.c_uint),
        ("workspace_bytes", ctypes.c_size_t),
        ("origin", ctypes.c_int),
        ("why", TlErr),
    ]


class TlKernelResources(ctypes.Structure):
    _fields_ = [
        ("registers", ctypes.c_int),
        ("local_bytes", ctypes.c_int),
        ("static_smem", ctypes.c_int),
        ("max_threads", ctypes.c_int),
        ("blocks_per_sm", ctypes.c_int),
    ]


class TlLaunchDims(ctypes.Structure):
    _fields_ = [
        ("grid", ctypes.c_uint * 3),
        ("threads", ctypes.c_uint),
        ("smem_bytes", ctypes.c_uint),
    ]


MAX_RANK = 8


class TlShape(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_uint), ("dims", ctypes.c_int64 * MAX_RANK)]


class TlTuneDesc(ctypes.Structure):
    _fields_ = [
        ("space", ctypes.POINTER(ctypes.c_char_p)),
        ("num_space", ctypes.c_uint),
        ("args", ctypes.POINTER(TlArg)),
        ("shapes", ctypes.POINTER(TlShape)),
        ("nargs", ctypes.c_uint),
    ]


class TlTuneEntry(ctypes.Structure):
    _fields_ = [
        ("status", ctypes.c_int),
        ("ms", ctypes.c_double),
        ("why", TlErr),
        ("path", ctypes.c_char_p),
    ]


ARG_INT, ARG_FLOAT, ARG_BUFFER, ARG_TENSOR_MAP = 0, 1, 2, 3
TUNE_MISS, TUNE_HIT, TUNE_INVALID = 0, 1, 2
PTX_ORIGINS = ("compiled", "cached", "rebuilt")

_P = ctypes.c_void_p
_SIGNATURES = {
    # name: (result type, argument types)
    "tl_session_create": (_P, []),
    "tl_session_destroy": (None, [_P]),
    "tl_session_error": (ctypes.c_char_p, [_P]),
    "tl_session_set_cache_dir": (None, [_P, ctypes.c_char_p]),
    "tl_session_set_driver": (None, [_P, ctypes.c_char_p]),
    "tl_session_set_check_extents": (None, [_P, ctypes.c_bool]),
    "tl_session_open_device": (ctypes.c_int, [_P, ctypes.c_int]),
    "tl_session_synchronize": (ctypes.c_int, [_P]),
    "tl_session_device_ordinal": (ctypes.c_int, [_P]),
    "tl_session_device_name": (ctypes.c_char_p, [_P]),
    "tl_session_device_sm": (ctypes.c_uint, [_P]),
    "tl_session_device_sms": (ctypes.c_uint, [_P]),
    "tl_program_create": (_P, [_P, ctypes.POINTER(TlProgramDesc)]),
    "tl_program_destroy": (None, [_P]),
    "tl_program_name": (ctypes.c_char_p, [_P]),
    "tl_program_num_params": (ctypes.c_uint, [_P]),
    "tl_program_param": (None, [_P, ctypes.c_uint, ctypes.POINTER(TlParamInfo)]),
    "tl_program_template_value": (ctypes.c_bool, [_P, ctypes.c_char_p,
                                                  ctypes.POINTER(ctypes.c_int64)]),
    "tl_program_run_vm": (ctypes.c_int, [_P, ctypes.POINTER(TlArg), ctypes.c_uint]),
    "tl_program_ptx": (ctypes.c_int, [_P, ctypes.c_uint, ctypes.POINTER(TlPtxInfo)]),
    "tl_program_launch_dims": (ctypes.c_int, [_P, ctypes.POINTER(TlArg), ctypes.c_uint,
                                              ctypes.c_uint, ctypes.POINTER(TlLaunchDims)]),
    "tl_program_time": (ctypes.c_int, [_P, ctypes.POINTER(TlArg), ctypes.c_uint,
                                       ctypes.c_uint, ctypes.c_uint,
                                       ctypes.POINTER(ctypes.c_double)]),
    "tl_program_resources": (ctypes.c_int, [_P, ctypes.POINTER(TlArg), ctypes.c_uint,
                                            ctypes.POINTER(TlKernelResources)]),
    "tl_program_launch": (ctypes.c_int, [_P, ctypes.POINTER(TlArg), ctypes.c_uint, _P]),
    "tl_program_launch_values": (ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_int64),
                                                ctypes.POINTER(ctypes.c_double),
                                                ctypes.POINTER(ctypes.c_int64),
                                                ctypes.c_uint, _P]),
    "tl_program_tune_lookup": (ctypes.c_int, [_P, ctypes.POINTER(TlTuneDesc),
                                              ctypes.POINTER(ctypes.c_int64),
                                              ctypes.POINTER(TlTuneEntry)]),
    "tl_program_tune_store": (ctypes.c_int, [_P, ctypes.POINTER(TlTuneDesc),
                                             ctypes.POINTER(ctypes.c_int64), ctypes.c_double,
                                             ctypes.POINTER(TlTuneEntry)]),
}


def _candidates():
    env = os.environ.get("TL_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))  # python/tl -> the checkout
    found = [os.path.join(root, "build", "lib", "libtl.so")]
    found += sorted(glob.glob(os.path.join(root, "build-*", "lib", "libtl.so")))
    return [p for p in found if os.path.exists(p)] + ["libtl.so"]


_lib = None


def lib():
    """The loaded libtl, with its functions' signatures set."""
    global _lib
    if _lib is not None:
        return _lib
    tried = []
    for path in _candidates():
        try:
            handle = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path}: {e}")
            continue
        for name, (res, args) in _SIGNATURES.items():
            fn = getattr(handle, name)
            fn.restype = res
            fn.argtypes = args
        _lib = handle
        return _lib
    raise OSError("cannot load libtl (build it with `ninja -C build tl`, or set "
                  "TL_LIBRARY to the path of libtl.so); tried:\n  " + "\n  ".join(tried))
