"""The kernel library as ops: quantised weights packed once, then
C = A x dequant(W) for any m, on torch CUDA tensors (the GPU) or NumPy
arrays (the CPU VM, for tests and small shapes).

    packed = tl.ops.pack_weights(codes, scales, zeros=None, wtype="u4", group=128)
    y = tl.ops.quant_matmul(x, packed)

codes are the weight codes [K, N], one per element (their bit patterns:
0 .. 2^bits - 1, two's complement for the signed types), scales the
scale per group of `group` consecutive k and column ([K / group, N]) or,
with group=None, per column ([N]); zeros the zero points in code units,
the same shape (integer types only). dequant(W) = (value(code) - zero) *
scale rounded to the activations' type (docs/kernels.md, qmatmul.tl).

Arguments are checked before anything runs (python/tl/_check.py): an
array's kind and element type (TypeError), its shape (ValueError), and an
`out` must be C-contiguous and writable (TypeError); an input that is not
C-contiguous is copied.

The kernels' sources are read from $TL_KERNELS, else from the kernels/
directory of the source checkout this package sits in."""

import math
import os
import re

from . import _check
from ._check import is_torch as _is_torch
from . import compile as _compile
from . import _current_torch_stream

__all__ = ["PackedWeights", "pack_weights", "quant_matmul", "tune_matmul", "explain_matmul", "KVCache", "kv_cache", "KVPages", "kv_pages", "kv_slots", "kv_append",
           "decode_attention", "PackedWQ", "pack_wqap", "wqap_matmul", "kernels_dir"]

_BN = 64  # the packing's block width: a warp's columns in every kernel


def kernels_dir():
    """The directory holding the kernel sources (see the module's text)."""
    env = os.environ.get("TL_KERNELS")
    cands = [env] if env else []
    here = os.path.dirname(os.path.abspath(__file__))
    cands.append(os.path.join(os.path.dirname(os.path.dirname(here)), "kernels"))
    for d in cands:
        if d and os.path.exists(os.path.join(d, "qmatmul.tl")):
            return d
    raise FileNotFoundError("cannot find TL's kernels (kernels/qmatmul.tl): set TL_KERNELS "
                            "to the kernels directory of a TL checkout; tried: " + ", ".join(cands))


_cache = {}


def _kernel(name, kernel=None, **defines):
    key = (name, kernel, tuple(sorted(defines.items())))
    k = _cache.get(key)
    if k is None:
        k = _compile(os.path.join(kernels_dir(), name), kernel=kernel, **defines)
        _cache[key] = k
    return k


def _bits(wtype, name="wtype"):
    """The width of a weight type: u1..u8, i2..i8, or a small float fNeXmY
    (N = 1 + X + Y bits, at most 8)."""
    _check.text(name, wtype)
    m = re.fullmatch(r"([ui])([1-8])|f([3-8])e([1-6])m([0-6])", wtype)
    if m and m.group(1) and not (m.group(1) == "i" and m.group(2) == "1"):
        return int(m.group(2))
    if m and m.group(3) and int(m.group(3)) == 1 + int(m.group(4)) + int(m.group(5)):
        return int(m.group(3))
    raise ValueError(f"{name}: expected u1..u8, i2..i8 or a small float fNeXmY (N = 1 + X + Y "
                     f"<= 8 bits), got {wtype!r}")




class PackedWeights:
    """Weights packed for kernels/qmatmul.tl and qmatmul_m8.tl: `b` the
    packed codes (u8 [N / 64, K / group, CH, 32, 16]), `s` the scales and
    zero points (AT [K / group or 1, 1 + ZP, N]), and their description."""

    def __init__(self, b, s, K, N, wtype, group, zp, per_column, at, perm=None):
        self.b, self.s = b, s
        self.K, self.N, self.wtype, self.group = K, N, wtype, group
        self.zp, self.per_column, self.at = zp, per_column, at
        self.perm = perm  # None, or the order of k the codes are in (tl.formats)

    def __repr__(self):
        g = "per column" if self.per_column else f"g{self.group}"
        return (f"<tl.ops.PackedWeights {self.wtype} {g}{' zp' if self.zp else ''}"
                f"{' act-order' if self.perm is not None else ''} K={self.K} N={self.N} {self.at}>")


def pack_weights(codes, scales, zeros=None, wtype="u4", group=128, at="f16"):
    """Packs weight codes [K, N] with their scales (and zero points) for
    quant_matmul. torch CUDA tensors are packed on their GPU, every step
    (the result is there), NumPy arrays (and CPU tensors) on the CPU VM.
    at: the activations' type, f16 or bf16 (the scales are stored in it;
    bf16 needs torch)."""
    import numpy as np
    from .formats import _bitstream
    bits = _bits(wtype)
    at = _check.choice("at", at, ("f16", "bf16"))
    group = _check.optional_integer("group", group)
    on_gpu = _is_torch(codes) and codes.device.type == "cuda"
    if _is_torch(codes) and not on_gpu:
        codes = codes.numpy()
    if not on_gpu and not isinstance(codes, np.ndarray):
        codes = _check.array("codes", codes)
    c = _check.array("codes", codes, shape=("K", "N"))
    if (c.dtype.is_floating_point or c.dtype.is_complex) if on_gpu else c.dtype.kind not in "iub":
        raise TypeError(f"codes: expected an integer dtype (the codes' bit patterns), got {c.dtype}")
    K, N = (int(d) for d in c.shape)
    per_column = group is None
    g = 128 if per_column else group
    if g not in (32, 64, 128, 256):
        raise ValueError(f"group: expected 32, 64, 128, 256 or None (per column), got {group}")
    if K % g or N % _BN:
        raise ValueError(f"codes [{K}, {N}]: K must be a multiple of {g} and N of {_BN}")
    if c.size if not on_gpu else c.numel():
        lo, hi = (int(c.min()), int(c.max()))
        if lo < 0 or hi >= 1 << bits:
            raise ValueError(f"codes: expected {wtype} bit patterns in 0..{(1 << bits) - 1}")
    if zeros is not None and wtype.startswith("f"):
        raise ValueError(f"zeros: zero points are for integer weight types, not {wtype}")
    # The codes as a WT buffer: element i at bits [i bits, (i + 1) bits).
    wq = _bitstream(c.reshape(-1), bits)
    groups = 1 if per_column else K // g
    # Per column: [N] (or [1, N]); per group: [K / group, N], nothing else
    # of that size (a transposed [N, K / group] would be read as rows).
    want = [(N,), (1, N)] if per_column else (groups, N)

    def rows(v, what):
        if _is_torch(v) and v.device.type != "cuda":
            v = v.detach().float().numpy()  # (bf16 has no NumPy dtype)
        v = _check.array(what, v, shape=want, kinds="iuf")
        if on_gpu:
            import torch
            v = torch.as_tensor(v, device=c.device)
            return v.reshape(groups, N).to(torch.float32)
        v = v.detach().float().cpu().numpy() if _is_torch(v) else np.asarray(v, np.float64)
        return v.reshape(groups, N)
    sz = [rows(scales, "scales")] + ([rows(zeros, "zeros")] if zeros is not None else [])
    zp = int(zeros is not None)
    defs = dict(K=K, N=N, G=g, BN=_BN, WT=wtype, AT=at)
    ch = g * _BN * bits // 4096
    if ch == 0 or g * _BN * bits % 4096:
        raise ValueError(f"wtype: {wtype} with group {g}: a warp's codes are not whole 16-byte chunks")
    pack = _kernel("qpack.tl", **defs)
    shape = (N // _BN, K // g, ch, 32, 16)
    if on_gpu:
        import torch
        out = torch.empty(shape, dtype=torch.uint8, device=c.device)
        pack(wq, out)
        st = torch.stack(sz, dim=1).to({"f16": torch.float16, "bf16": torch.bfloat16}[at])
        return PackedWeights(out, st.contiguous(), K, N, wtype, g, zp, per_column, at)
    if at != "f16":
        raise ValueError("at: NumPy weights take at='f16' (NumPy has no bf16)")
    s = np.stack(sz, axis=1)  # [groups, 1 + ZP, N]
    out = np.zeros(shape, np.uint8)
    pack.run_vm(wq, out)
    return PackedWeights(out, s.astype(np.float16), K, N, wtype, g, zp, per_column, at)


_ws = {}


def _workspace(x, on_gpu, dtype="f32"):
    """The split reduction's ws (f32 or i32) and locks (unused: KS = 1)."""
    import numpy as np
    if not on_gpu:
        return np.zeros(4, {"f32": np.float32, "i32": np.int32}[dtype]), np.zeros(1, np.uint32)
    key = str(x.device)
    if key not in _ws:
        import torch
        _ws[key] = (torch.zeros(4, dtype=torch.float32, device=x.device),
                    torch.zeros(4, dtype=torch.int32, device=x.device),
                    torch.zeros(1, dtype=torch.int32, device=x.device).view(torch.uint32))
    f32, i32, locks = _ws[key]
    return (f32 if dtype == "f32" else i32), locks


def _split_ws(x, on_gpu, floats, locks):
    """qmatmul_wg.tl's stream reduction buffers: f32 ws of at least `floats`
    and u32 locks of at least `locks` elements, zero (every launch leaves
    the locks zero), kept per device and grown when too small."""
    import numpy as np
    if not on_gpu:
        return np.zeros(max(floats, 4), np.float32), np.zeros(max(locks, 1), np.uint32)
    import torch
    key = ("split", str(x.device))
    ws, lk = _ws.get(key, (None, None))
    if ws is None or ws.numel() < floats:
        ws = torch.empty(max(floats, 4), dtype=torch.float32, device=x.device)
    if lk is None or lk.numel() < locks:
        lk = torch.zeros(max(locks, 1), dtype=torch.int32, device=x.device).view(torch.uint32)
    _ws[key] = (ws, lk)
    return ws, lk


def _wg_tiles(m, p, bm, bn=128):
    """qmatmul_wg.tl's output tiles for m rows: row tiles of bm times
    column tiles of bn."""
    return -(-m // bm) * (p.N // bn)


def _instance(m, p, sm=None, sms=8):
    """The kernel and template values for m rows on a device of SM `sm`
    (None: the CPU VM) with `sms` SMs (docs/performance.md: the weights as
    the mma A operand for m <= 16, in 8-row tiles, two a block past 8; 64
    x 256 tiles beyond; on sm_90, past 16 rows, warpgroup mma with 4-bit
    weights on persistent blocks, the SMs rounded down to a multiple of 16:
    the layers' tile counts are multiples of 16, so the split tiles fall
    into runs that start at the same steps of their tiles; tiles of m rows
    rounded up to a multiple of 32 up to 256 rows, past that the tile of
    160 to 256 rows that pads m least; up to 96 rows, two blocks an SM
    with 8 slots each (6 for 96 rows: the weights' bytes in flight set the
    pace); with 128-row tiles, two blocks an SM where each still gets 64
    steps)."""
    base = dict(K=p.K, N=p.N, G=p.group, WT=p.wtype, AT=p.at, ZP=p.zp, PC=int(p.per_column))
    if (sm == 90 and m > 16 and _bits(p.wtype) == 4 and not p.per_column and p.group % 64 == 0
            and p.K % 128 == 0 and p.N % 128 == 0):
        # Past 256 rows: the tile of 160 to 256 rows that pads m least
        # (the larger of equals).
        bm = (-(-m // 32) * 32 if m <= 256 else
              min((256, 224, 192, 160), key=lambda b: -(-m // b) * b))
        del base["PC"]
        pb, mb = sms // 16 * 16 or sms, 1
        if bm <= 96 or bm == 128 and _wg_tiles(m, p, bm) * (p.K // 64) >= 64 * 2 * pb:
            pb, mb = 2 * pb, 2
        s = 8 if bm <= 64 else 6 if bm == 96 else 5 if bm <= 160 else 4
        return "qmatmul_wg.tl", None, dict(base, BN=128, BM=bm, S=s, PB=pb, MB=mb)
    if m <= 16:
        return "qmatmul_m8.tl", "qmatmul_m8", dict(_m8_base(p, m), **_m8_choice(m, p, sms))
    w = next(w for w in (4, 2, 1) if p.K % (w * p.group) == 0)
    if m > 16 and p.N % 256 == 0:
        return "qmatmul.tl", None, dict(base, BN=256, W=1, S=3, WN=4, MT=4)
    return "qmatmul.tl", None, dict(base, BN=_BN, W=w, S=4)


def _m8_space(p):
    """qmatmul_m8.tl's tuning space for m <= 16 (docs/kernels.md): warps a
    block over k, ring slots, and the k split over blocks (1 or 2); the
    scales always multiply each group's f32 sum (SA = 1)."""
    return {"W": [w for w in (4, 2, 1) if p.K % (w * p.group) == 0],
            "S": [2, 3, 4] if _bits(p.wtype) == 1 else [3, 4],
            "KS": [ks for ks in (1, 2) if p.K % (ks * p.group) == 0]}


def _m8_base(p, m):
    """qmatmul_m8.tl's values for m rows of this packing but the tuned
    ones (_m8_space): the scales on each group's f32 sum, and two 8-row
    tiles a block past 8 rows."""
    d = dict(K=p.K, N=p.N, G=p.group, WT=p.wtype, AT=p.at, ZP=p.zp, PC=int(p.per_column),
             BN=_BN, SA=1)
    if m > 8:
        d["R"] = 2
    return d


def _m8_choice(m, p, sms):
    """The heuristic instance of qmatmul_m8.tl for m <= 16 rows where the
    tune cache holds none (docs/performance.md, "The user's path"). Where
    the column blocks fill four blocks an SM: for m <= 8, four warps a
    block (over k) for weights of at most 3 bits (two slots for 1 bit:
    five blocks an SM), two for 4 and 5, one (and three slots) for 6 to 8; for 8 < m <= 16 (two 8-row tiles a
    block), one warp, with four slots for 8-bit weights and three for the
    others. Fewer columns: four warps, and k split
    over two blocks where the columns fill less than two blocks an SM and
    each block still runs 16 steps or more; for 8 < m <= 16 there, two
    warps and the k split where the columns fill more than one wave, or
    each block runs 16 steps or more."""
    space = _m8_space(p)
    cols, bits = p.N // _BN, _bits(p.wtype)
    w, s, ks = space["W"][0], 4, 1
    if cols >= 4 * sms and m > 8:
        w, s = 1, 4 if bits == 8 else 3
    elif cols >= 4 * sms:
        w = 4 if bits <= 3 else 2 if bits <= 5 else 1
        s = 3 if bits >= 6 else 2 if bits == 1 else 4
    elif 2 in space["KS"] and cols < 2 * sms:
        if m > 8 and 2 in space["W"] and (cols > sms or p.K // (2 * 2 * p.group) >= 16):
            w, ks = 2, 2
        elif p.K % (2 * w * p.group) == 0 and p.K // (2 * w * p.group) >= 16:
            ks = 2
    if w not in space["W"] or p.K % (ks * w * p.group):
        w, ks = space["W"][0], 1
    return dict(W=w, S=s, KS=ks)


_choices = {}  # (device, m, packing) -> qmatmul_m8.tl's tuned values, or None


def _m8_key(x, m, p):
    return (str(x.device), m, p.K, p.N, p.wtype, p.group, p.zp, p.per_column, p.at)


def _m8_args(x, p, m, out, on_gpu):
    """qmatmul_m8.tl's arguments; the split reduction's buffers are sized
    for the largest KS of the space, so that every candidate (and the tune
    cache's key) sees the same shapes."""
    import numpy as np
    rows = 8 if m <= 8 else 16
    rb = -(-m // rows)
    ks = max(_m8_space(p)["KS"])
    if on_gpu:
        import torch
        key = ("m8", str(x.device), rb * p.N * ks * rows, rb * p.N // _BN)
        if key not in _ws:
            _ws[key] = (torch.empty(key[2], dtype=torch.float32, device=x.device),
                        torch.zeros(key[3], dtype=torch.int32, device=x.device).view(torch.uint32))
        ws, locks = _ws[key]
    else:
        ws, locks = np.zeros(rb * p.N * ks * rows, np.float32), np.zeros(rb * p.N // _BN, np.uint32)
    return (x, p.b, p.s, out, m, ws, locks)


def _m8_autotune(m, p, args, session, **how):
    """tl.autotune over qmatmul_m8.tl's space for this launch (how: its
    timing options); the choice."""
    from ._tune import autotune
    _, choice = autotune(os.path.join(kernels_dir(), "qmatmul_m8.tl"), _m8_space(p), args=args,
                         kernel="qmatmul_m8", session=session, **how, **_m8_base(p, m))
    return choice


def _m8_tuned(x, m, p, args, session):
    """The tune cache's choice for this launch (looked up once per device,
    m and packing; nothing is timed), or None."""
    key = _m8_key(x, m, p)
    if key not in _choices:
        _choices[key] = _m8_autotune(m, p, args, session, cached_only=True)
    return _choices[key]


def tune_matmul(x, packed, log=None, retune=False, rounds=2):
    """Times qmatmul_m8.tl's instances (m <= 16 rows; docs/kernels.md) on
    x [m, K] (a torch CUDA tensor) and the packed weights, and keeps the
    fastest in the tune cache, where every later quant_matmul of the same
    device, m and packing finds it (also in later processes). Returns the
    choice (a dict of template values). log: a list that gets a line per
    candidate. rounds: passes over the candidates, each keeping its
    fastest (tl.autotune's). Larger m: the heuristic's kernels are not
    tuned here."""
    from . import default_session
    p = _packed(packed)
    if not _is_torch(x) or not x.is_cuda:
        raise TypeError(f"x: tune_matmul times on the GPU: expected a torch CUDA tensor, got "
                        f"{type(x).__name__}")
    x = _check.array("x", x, shape=("m", p.K), dtype=p.at, device=_check.where(p.b),
                     peer="the packed weights")
    m = int(x.shape[0])
    if not 1 <= m <= 16:
        raise ValueError(f"x: expected [m, {p.K}] with 1 <= m <= 16, got shape {tuple(x.shape)}")
    if log is not None and not isinstance(log, list):
        raise TypeError(f"log: expected a list, got {type(log).__name__}")
    _check.boolean("retune", retune)
    rounds = _check.integer("rounds", rounds, 1)
    import torch
    session = default_session()
    if session.device_ordinal() < 0:
        session.open_device(x.device.index or 0)
    out = torch.empty(m, p.N, dtype=x.dtype, device=x.device)
    args = _m8_args(x.contiguous(), p, m, out, True)
    choice = _m8_autotune(m, p, args, session, timed=True, log=log, retune=retune, rounds=rounds)
    _choices[_m8_key(x, m, p)] = choice
    return choice


def _plan(x, p, out, sm):
    """The launch quant_matmul makes: (Kernel, args, the output, file,
    template values, where the values came from: "tune cache" or
    "heuristic")."""
    import numpy as np
    p = _packed(p)
    sm = _check.optional_integer("sm", sm, 1)
    x = _check.array("x", x, shape=("m", p.K), dtype=p.at, device=_check.where(p.b),
                     peer="the packed weights")
    on_gpu = _is_torch(x)
    m = int(x.shape[0])
    if m < 1:
        raise ValueError("x: m must be at least 1")
    if out is not None:
        out = _check.array("out", out, shape=(m, p.N), dtype=p.at, device=_check.where(x),
                           out=True, peer="x")
    sms = 8  # on the VM: a stream over 8 blocks
    session = None
    if on_gpu:
        from . import default_session
        session = default_session()
        if session.device_ordinal() < 0:
            session.open_device(x.device.index or 0)
        sm = session.device_sm() if sm is None else sm
        sms = session.device_sms()
    name, kernel, defs = _instance(m, p, sm, sms)
    source = "heuristic"
    if out is None:
        if on_gpu:
            import torch
            out = torch.empty(m, p.N, dtype=x.dtype, device=x.device)
        else:
            out = np.zeros((m, p.N), x.dtype)
    perm = getattr(p, "perm", None)
    if perm is not None:   # codes in another order of k (tl.formats): x's columns to match
        x = x.index_select(1, perm.to(x.device)) if on_gpu else np.asarray(x)[:, np.asarray(perm)]
    xa = x.contiguous() if on_gpu else np.ascontiguousarray(x)
    if name == "qmatmul_wg.tl":
        # The tensor maps over x (box [BM, 64]), the codes as [N / 64, K /
        # 4, 128] bytes and the scales as [K / G, 1 + ZP, N], and the
        # pointers to them.
        # The stream's reduction buffers, used where a tile is split.
        pb = defs["PB"]
        split = _wg_tiles(m, p, defs["BM"], defs["BN"]) % pb != 0
        ws, locks = _split_ws(x, on_gpu, 2 * pb * defs["BN"] * defs["BM"] if split else 4, 2 * pb if split else 1)
        tb = p.b.reshape(p.N // 64, p.K // 4, 128)
        ts = p.s.reshape(p.K // p.group, 1 + p.zp, p.N)
        args = (xa, tb, ts, xa, p.b, p.s, out, m, ws, locks)
    elif name == "qmatmul_m8.tl":
        args = _m8_args(xa, p, m, out, on_gpu)
        choice = _m8_tuned(xa, m, p, args, session) if on_gpu else None
        if choice:
            defs, source = dict(defs, **choice), "tune cache"
    else:
        ws, locks = _workspace(x, on_gpu)
        args = (xa, p.b, p.s, out, m, ws, locks)
    return _kernel(name, kernel=kernel, **defs), args, out, name, defs, source


def _packed(p):
    return _check.instance("packed", p, PackedWeights, "tl.ops.PackedWeights (pack_weights's)")


def quant_matmul(x, packed, out=None, sm=None):
    """x [m, K] (AT) times the packed weights' dequantisation: [m, N] (AT).
    torch CUDA tensors run on the GPU (on the current stream), NumPy arrays
    on the CPU VM. out: an [m, N] result buffer of AT to fill (optional;
    where x is, C-contiguous, and for NumPy writable). sm:
    the SM whose kernel choice to make (default: the device's on the GPU,
    none on the VM; sm=90 runs the sm_90a kernel's instance on the VM)."""
    k, args, out, _, _, _ = _plan(x, packed, out, sm)
    if _is_torch(x):
        k(*args)
    else:
        k.run_vm(*args)
    return out


def explain_matmul(x, packed, sm=None):
    """What quant_matmul(x, packed) launches, without launching it: a dict
    of the kernel file, its template values and where they came from
    ("tune cache" or "heuristic"); on the GPU also what the driver's
    compilation uses (Kernel.resources: registers, spills, shared memory,
    blocks an SM) and, for qmatmul_m8.tl, the weight bytes a block's ring
    step moves and those in flight an SM (the S - 1 steps ahead of every
    resident block)."""
    k, args, _, name, defs, source = _plan(x, packed, None, sm)
    d = dict(kernel=name, defines=defs, source=source)
    if _is_torch(x):
        d.update(k.resources(*args))
        if name == "qmatmul_m8.tl":
            step = defs["W"] * defs["G"] * defs["BN"] * _bits(defs["WT"]) // 8
            d.update(step_bytes=step,
                     bytes_in_flight_per_sm=(defs["S"] - 1) * step * d["blocks_per_sm"])
    return d


# --- Decode attention over a low-bit KV cache (kernels/kv_quant.tl,
# kernels/decode_attn.tl) ------------------------------------------------

_KV_BITS = {"f16": 16, "u8": 8, "u4": 4, "u2": 2}


class KVPages:
    """A pool of `pages` pages of `page_size` tokens of `kv_heads` heads,
    in decode_attn.tl's layout: codes kc, vc (bytes [pages, Hkv,
    page_size, D bits / 8]) and per-token scales and zero points ks, vs
    (f16 [pages, Hkv, 2, page_size]; unused for f16). Sequences own pages
    through a block table (i32 [B, max_pages], vLLM's and FlashInfer's
    layout), their lengths are an i32 [B] tensor; both are the caller's."""

    def __init__(self, kc, vc, ks, vs, pages, kv_heads, head_dim, page_size, kt):
        self.kc, self.vc, self.ks, self.vs = kc, vc, ks, vs
        self.pages, self.kv_heads, self.head_dim = pages, kv_heads, head_dim
        self.page_size, self.kt = page_size, kt

    def __repr__(self):
        return (f"<tl.ops.KVPages {self.kt} {self.pages} pages of {self.page_size} tokens "
                f"Hkv={self.kv_heads} D={self.head_dim}>")


class KVCache:
    """A KV cache in decode_attn.tl's layout: codes kc, vc (bytes [B Hkv,
    cap, D bits / 8]), per-token scales and zero points ks, vs (f16 [B Hkv,
    2, cap]; unused for f16), and `length`, the tokens written so far (every
    sequence the same). It is the pool of B pages of cap tokens, sequence b
    in page b. With `nr` (KC): ks is f16 [B Hkv, 2, cap / nr, D], K's
    scales and zero points per channel and block of nr tokens, and the
    newest `rlen` < nr tokens are in f16 in the residual buffers rk, rv
    (bytes [B Hkv, nr, 2 D]), not yet quantised; length counts them."""

    def __init__(self, kc, vc, ks, vs, batch, kv_heads, head_dim, capacity, kt,
                 nr=None, rk=None, rv=None):
        self.kc, self.vc, self.ks, self.vs = kc, vc, ks, vs
        self.batch, self.kv_heads, self.head_dim = batch, kv_heads, head_dim
        self.capacity, self.kt, self.length = capacity, kt, 0
        self.nr, self.rk, self.rv, self.rlen = nr, rk, rv, 0

    def __repr__(self):
        kc = f" KC nr={self.nr} ({self.rlen} in f16)" if self.nr else ""
        return (f"<tl.ops.KVCache {self.kt}{kc} B={self.batch} Hkv={self.kv_heads} "
                f"D={self.head_dim} {self.length}/{self.capacity} tokens>")


def _kv_buffers(n, hkv, d, tokens, kt, device):
    """codes kc, vc and scales ks, vs of n pages of `tokens` tokens"""
    import numpy as np
    row = d * _KV_BITS[kt] // 8
    if device is not None:
        import torch
        z = lambda *s, dt: torch.zeros(*s, dtype=dt, device=device)  # noqa: E731
        return (z(n, hkv, tokens, row, dt=torch.uint8), z(n, hkv, tokens, row, dt=torch.uint8),
                z(n, hkv, 2, tokens, dt=torch.float16), z(n, hkv, 2, tokens, dt=torch.float16))
    return (np.zeros((n, hkv, tokens, row), np.uint8), np.zeros((n, hkv, tokens, row), np.uint8),
            np.zeros((n, hkv, 2, tokens), np.float16), np.zeros((n, hkv, 2, tokens), np.float16))


def _kv_shape(kv_heads, head_dim, kt):
    kv_heads = _check.integer("kv_heads", kv_heads, 1)
    kt = _check.choice("kt", kt, tuple(_KV_BITS))
    if _check.integer("head_dim", head_dim) not in (64, 128):
        raise ValueError(f"head_dim: expected 64 or 128, got {head_dim}")
    return kv_heads, head_dim, kt


def kv_pages(pages, kv_heads, head_dim, page_size=64, kt="u4", device=None):
    """An empty pool of `pages` pages of `page_size` tokens (8, 16, 32, 64
    or a multiple of 128: 16 to 256 are the usual sizes) of `kv_heads` heads of
    `head_dim` (64 or 128) channels, codes of type kt (f16, u8, u4, u2).
    device: a torch device for a pool on the GPU; None for NumPy arrays
    (the CPU VM)."""
    pages = _check.integer("pages", pages, 1)
    kv_heads, head_dim, kt = _kv_shape(kv_heads, head_dim, kt)
    page_size = _check.integer("page_size", page_size, 8)
    if page_size not in (8, 16, 32, 64) and page_size % 128:
        raise ValueError(f"page_size: expected 8, 16, 32, 64 or a multiple of 128 (a page "
                         f"holds whole steps of the attention, or a step whole pages), got "
                         f"{page_size}")
    kc, vc, ks, vs = _kv_buffers(pages, kv_heads, head_dim, page_size, kt, device)
    return KVPages(kc, vc, ks, vs, pages, kv_heads, head_dim, page_size, kt)


def kv_cache(batch, kv_heads, head_dim, capacity, kt="u4", device=None, kc=None):
    """An empty cache for `capacity` tokens (rounded up to a multiple of
    64, and of kc) of `kv_heads` heads of `head_dim` (64 or 128) channels,
    codes of type kt (f16, u8, u4, u2). device: a torch device for a cache
    on the GPU; None for NumPy arrays (the CPU VM). kc: K quantised per
    channel over blocks of kc tokens (32, 64 or 128; integer kt), the
    newest tokens kept in f16 until their block fills (BitDecoding's KC
    with its residual block); None: per token."""
    import numpy as np
    batch = _check.integer("batch", batch, 1)
    kv_heads, head_dim, kt = _kv_shape(kv_heads, head_dim, kt)
    capacity = _check.integer("capacity", capacity, 1)
    if kc is not None and (_check.integer("kc", kc) not in (32, 64, 128) or kt == "f16"):
        raise ValueError(f"kc: expected 32, 64 or 128 with kt u8, u4 or u2, got {kc!r}")
    unit = max(64, kc or 0)  # kc is 32, 64 or 128
    cap = -(-capacity // unit) * unit
    nbh = batch * kv_heads
    kcb, vcb, ksb, vsb = _kv_buffers(batch, kv_heads, head_dim, cap, kt, device)
    kcb, vcb, vsb = kcb.reshape(nbh, cap, -1), vcb.reshape(nbh, cap, -1), vsb.reshape(nbh, 2, cap)
    if kc:
        ksb = (np.zeros((nbh, 2, cap // kc, head_dim), np.float16) if device is None else
               __import__("torch").zeros(nbh, 2, cap // kc, head_dim, dtype=vsb.dtype,
                                         device=device))
        rk, rv = (_kv_buffers(nbh, 1, head_dim, kc, "f16", device)[i].reshape(nbh, kc, -1)
                  for i in (0, 1))
    else:
        ksb, rk, rv = ksb.reshape(nbh, 2, cap), None, None
    return KVCache(kcb, vcb, ksb, vsb, batch, kv_heads, head_dim, cap, kt, kc, rk, rv)


def _cache_arg(c, pages=False):
    if pages:
        return _check.instance("cache", c, (KVCache, KVPages),
                               "a tl.ops.KVCache (kv_cache's) or tl.ops.KVPages (kv_pages's)")
    return _check.instance("cache", c, KVCache, "a tl.ops.KVCache (kv_cache's)")


def _i32(name, v, shape, dev, peer):
    return _check.array(name, v, shape=shape, dtype="i32", device=dev, peer=peer)


def _table_arg(block_table, b, dev):
    """a block table, i32 [b, max_pages] with a page a row at least"""
    block_table = _i32("block_table", block_table, (b, "max_pages"), dev, "the cache's buffers")
    if int(block_table.shape[1]) < 1:
        raise ValueError("block_table: expected at least one page a row, got shape "
                         f"{list(block_table.shape)}")
    return block_table


def _pool_only(what, **named):
    """refuses the arguments of a KVPages pool given with a KVCache"""
    for name, v in named.items():
        if v is not None:
            raise TypeError(f"{name}: a KVCache {what}; {name} is for a KVPages pool")


def _host_values(v):
    """v's values in NumPy when it is a NumPy array, else None (a CUDA
    tensor's are not read: no transfer, no sync)"""
    return None if _is_torch(v) else v


def kv_slots(block_table, lens, t, page_size, counts=None):
    """The slots (i32 [B, t]) of kv_append for t new tokens a sequence
    after the lens[b] it holds: token i of sequence b, at position p =
    lens[b] + i, goes to page block_table[b, p / page_size] at p %
    page_size, slot page * page_size + p % page_size; -1 (not written) for
    i >= counts[b] (counts i32 [B], the tokens each sequence appends; all
    t by default) and for positions past the table's row. Computed where
    the arguments are (NumPy, or torch on the GPU without a sync)."""
    dev = _check.where(block_table)
    block_table = _i32("block_table", block_table, ("B", "max_pages"), dev, "block_table")
    b, mp = (int(n) for n in block_table.shape)
    lens = _i32("lens", lens, (b,), dev, "block_table")
    t = _check.integer("t", t, 0)
    page_size = _check.integer("page_size", page_size, 1)
    if counts is not None:
        counts = _i32("counts", counts, (b,), dev, "block_table")
    if _is_torch(block_table):
        import torch
        i = torch.arange(t, dtype=torch.int64, device=block_table.device)
        p = lens.to(torch.int64)[:, None] + i
        ok = (p >= 0) & (p < mp * page_size)
        if counts is not None:
            ok &= i < counts.to(torch.int64)[:, None]
        pc = torch.where(ok, p, torch.zeros_like(p))
        pg = torch.gather(block_table.to(torch.int64), 1, pc // page_size)
        sl = pg * page_size + pc % page_size
        return torch.where(ok & (pg >= 0), sl, torch.full_like(sl, -1)).to(torch.int32)
    import numpy as np
    i = np.arange(t, dtype=np.int64)
    p = lens.astype(np.int64)[:, None] + i
    ok = (p >= 0) & (p < mp * page_size)
    if counts is not None:
        ok &= i < counts.astype(np.int64)[:, None]
    pc = np.where(ok, p, 0)
    pg = np.take_along_axis(block_table.astype(np.int64), pc // page_size, 1)
    sl = pg * page_size + pc % page_size
    return np.where(ok & (pg >= 0), sl, -1).astype(np.int32)


def _write(pool_kc, pool_ks, x, slots, npg, hkv, psz, kt, table=None, lens=None):
    """kv_quant.tl over x f16 [B, Hkv, t, D] into the pool's slots, or
    (slots None) at the lengths through the table"""
    import numpy as np
    b, _, t, d = (int(n) for n in x.shape)
    on_gpu = _is_torch(x)
    q = _kernel("kv_quant.tl", D=d, KT=kt, POS=int(slots is None))
    if kt == "f16":  # the codes are the f16 values, the bytes viewed as them
        pool_kc = pool_kc.view(x.dtype)
    for s in range(0, t, 65535):  # the grid's y limit
        n = min(65535, t - s)
        xs = x[:, :, s:s + n]
        xs = xs.contiguous() if on_gpu else np.ascontiguousarray(xs)
        if slots is None:
            sl, ln, tab, mp = lens, lens, table, int(table.shape[1])
            if s:  # a later part of the grid: the lengths it starts at
                ln = lens + s
        else:
            sl = slots[:, s:s + n]
            sl = sl.contiguous() if on_gpu else np.ascontiguousarray(sl)
            ln, tab, mp = sl, sl, 1
        args = (xs, pool_kc, pool_ks, sl, ln, tab, b * hkv, hkv, n, npg, psz, mp)
        q(*args) if on_gpu else q.run_vm(*args)


def _contiguous_slots(like, b, cap, pos, t):
    """the slots of t tokens a sequence at pos of B pages of cap tokens"""
    import numpy as np
    if _is_torch(like):
        import torch
        return (torch.arange(b, device=like.device)[:, None] * cap + pos
                + torch.arange(t, device=like.device)).to(torch.int32)
    return (np.arange(b)[:, None] * cap + pos + np.arange(t)).astype(np.int32)


def kv_append(cache, k, v, slots=None, block_table=None, lens=None):
    """Appends t tokens a sequence, k and v f16 [B, Hkv, t, D], quantised
    token-wise (kernels/kv_quant.tl; for f16, copied). A tl.ops.KVCache
    takes them at its `length`. A tl.ops.KVPages pool writes token i of
    sequence b to slots[b, i] (i32 [B, t]: page * page_size + the token's
    place in the page, kv_slots' for a block table; -1 for none), or,
    given block_table and lens (i32 [B, max_pages] and [B], the lengths
    before the append) instead, at position lens[b] + i of sequence b
    through its table row (past the row, or in a page outside the pool:
    not written); the caller then adds t to lens. All on the device:
    nothing is read back to the host, so the call can be captured in a
    CUDA graph."""
    c = _cache_arg(cache, pages=True)
    dev = _check.where(c.kc)
    k = _check.array("k", k, shape=("B", c.kv_heads, "t", c.head_dim), dtype="f16",
                     device=dev, peer="the cache's buffers")
    v = _check.array("v", v, shape=tuple(int(n) for n in k.shape), dtype="f16", device=dev,
                     peer="the cache's buffers")
    b, t = int(k.shape[0]), int(k.shape[2])
    if isinstance(c, KVPages):
        if (slots is None) == (block_table is None or lens is None) or \
                slots is not None and (block_table is not None or lens is not None):
            raise TypeError("slots: a KVPages pool takes the tokens' slots (tl.ops.kv_slots) "
                            "or a block table and the lengths, one of the two")
        if slots is not None:
            slots = _i32("slots", slots, (b, t), dev, "the cache's buffers")
        else:
            block_table = _table_arg(block_table, b, dev)
            lens = _i32("lens", lens, (b,), dev, "the cache's buffers")
        for x, codes, sz in ((k, c.kc, c.ks), (v, c.vc, c.vs)):
            _write(codes, sz, x, slots, c.pages, c.kv_heads, c.page_size, c.kt, block_table,
                   lens)
        return c
    _pool_only("appends at its length", slots=slots, block_table=block_table, lens=lens)
    if b != c.batch:
        raise ValueError(f"k: expected [{c.batch}, {c.kv_heads}, t, {c.head_dim}], got "
                         f"{list(int(n) for n in k.shape)}")
    if c.length + t > c.capacity:
        raise ValueError(f"k, v: the cache holds {c.length} of {c.capacity} tokens: {t} more "
                         f"do not fit")
    if c.nr:
        return _kc_append(c, k, v, t)
    sl = _contiguous_slots(k, b, c.capacity, c.length, t)
    for x, codes, sz in ((k, c.kc, c.ks), (v, c.vc, c.vs)):
        _write(codes, sz, x, sl, c.batch, c.kv_heads, c.capacity, c.kt)
    c.length += t
    return c


def _kc_append(c, k, v, t):
    """kv_append for a KC cache: the residual's tokens and the new ones,
    whole blocks of them quantised (K by kernels/kc_quant.tl per channel,
    V by kernels/kv_quant.tl per token) at the end of the quantised part,
    the rest copied back to the residual"""
    import numpy as np
    nbh, d, nr = c.batch * c.kv_heads, c.head_dim, c.nr
    pos, n = c.length - c.rlen, c.rlen + t
    nb = n // nr
    on_gpu = _is_torch(k)
    cat = (lambda a, b: __import__("torch").cat([a, b], 1)) if on_gpu else \
        (lambda a, b: np.concatenate([a, b], 1))
    f16 = (lambda r: r.view(k.dtype)) if on_gpu else (lambda r: r.view(np.float16))
    kq = _kernel("kc_quant.tl", D=d, KT=c.kt, NR=nr)
    for x, res, codes, sz in ((k, c.rk, c.kc, c.ks), (v, c.rv, c.vc, c.vs)):
        r = f16(res)
        xs = cat(r[:, :c.rlen], x.reshape(nbh, t, d))
        xs = xs.contiguous() if on_gpu else np.ascontiguousarray(xs)
        if x is k and nb:
            xk = xs[:, :nb * nr]
            xk = xk.contiguous() if on_gpu else np.ascontiguousarray(xk)
            args = (xk, codes, sz, nbh, nb, pos, c.capacity)
            kq(*args) if on_gpu else kq.run_vm(*args)
        elif x is v and nb:
            xv = xs[:, :nb * nr].reshape(c.batch, c.kv_heads, nb * nr, d)
            _write(codes, sz, xv, _contiguous_slots(k, c.batch, c.capacity, pos, nb * nr),
                   c.batch, c.kv_heads, c.capacity, c.kt)
        r[:, :n - nb * nr] = xs[:, nb * nr:]
        r[:, n - nb * nr:] = 0
    c.rlen = n - nb * nr
    c.length += t
    return c


_sms = {}


def _sm_count(x):
    """the SMs of x's GPU (132, an H100's or H200's, for the VM), asked of
    torch once a device"""
    if not _is_torch(x):
        return 132
    n = _sms.get(x.device.index)
    if n is None:
        import torch
        n = _sms[x.device.index] = torch.cuda.get_device_properties(x.device).multi_processor_count
    return n


def _attn_instance(kt, psz, tokens, nbh, sms, splits=None):
    """decode_attn.tl's instance for a cache of kt codes in pages of psz
    tokens holding up to `tokens` a sequence, over nbh KV heads: (W, BT,
    S, MW, ns), as measured on an H200 (docs/performance.md, "Serving
    decode attention"). Integer caches ask ptxas for 16 warps an SM (MW =
    16: 128 registers a thread, 4 blocks of W = 4); from 16K tokens u4 and
    u2 take 32 tokens a warp and step in two stages, u8 stays at 16 (its
    wider V tiles); pages of fewer than 64 tokens take one warp a block
    (W = 1, BT = 32: a step of one or two pages, 16 blocks an SM) for
    integer codes and W = 2, BT = 16 for f16. The split count ns fills
    about one wave of the blocks an SM holds (about 8 of the f16 cache's,
    whose shared memory holds 2 blocks an SM: its tail is short with more),
    each split at least 256 tokens."""
    small = psz < 64
    if kt == "f16":
        w, bt, st, mw, per_sm = (2, 16, 3, 0, 8) if small else (4, 16, 3, 0, 8)
    elif small:
        w, bt, st, mw, per_sm = 1, 32, 2, 16, 10
    else:
        long = tokens >= 16384 and kt != "u8"
        w, bt, st, mw, per_sm = (4, 32, 2, 16, 5) if long else (4, 16, 3, 16, 4)
    ns = splits or max(1, min(tokens // 256, -(-per_sm * sms // nbh)))
    return w, bt, st, mw, ns


def _attend(q, kc, vc, ks, vs, o, lens, table, hkv, npg, psz, kt, g, scale, ns, np_, p0,
            work, w=4, bt=16, st=3, mw=0, **kq):
    """one launch of decode_attn.tl's instance (W, BT, S, MW) over a pool;
    work: (wo, wml, locks) of ns slots. A step's copies take PT = W BT
    tokens when it lies in a page, PT = psz when its chunks are pages (the
    kernel's two cases), and the common divisor for a pool of one page a
    sequence (the contiguous cache: the tokens past a page are past the
    length)."""
    stepn = w * bt
    pt = stepn if psz % stepn == 0 else psz if stepn % psz == 0 else math.gcd(stepn, psz)
    assert pt in (stepn, psz) or int(table.shape[1]) == 1, (psz, stepn)
    k = _kernel("decode_attn.tl", D=int(q.shape[-1]), G=g, KT=kt, W=w, BT=bt, S=st, MW=mw,
                PT=pt, **kq)
    args = (q, kc, vc, ks, vs, o, int(q.shape[0]) * hkv, lens, table, hkv,
            int(table.shape[1]), psz, npg, ns, scale, *work, np_, p0)
    k(*args) if _is_torch(q) else k.run_vm(*args)


def _work_sizes(nbh, ns, d):
    """the f32 elements of the split's partial outputs wo and row maxima
    and sums wml for ns splits of nbh KV heads of d channels"""
    return (nbh * ns * 16 * d, nbh * ns * 32) if ns > 1 else (4, 4)


def _work(c, q, nbh, ns):
    """the split's workspace (wo, wml) and zeroed locks for ns slots. On
    the GPU they are kept on the cache for its later calls on the same
    stream (the kernel leaves the locks zero, and launches on one stream
    run in order), except while a CUDA graph is captured, whose memory is
    the graph's."""
    import numpy as np
    nwo, nwml = _work_sizes(nbh, ns, int(q.shape[-1]))
    if not _is_torch(q):
        return np.zeros(nwo, np.float32), np.zeros(nwml, np.float32), np.zeros(nbh, np.uint32)
    import torch
    capturing = torch.cuda.is_current_stream_capturing()
    key = (nwo, nwml, nbh, _current_torch_stream(q.device.index))
    keep = c.__dict__.setdefault("_work", {})
    w = None if capturing else keep.get(key)
    if w is None:
        w = (torch.empty(nwo, dtype=torch.float32, device=q.device),
             torch.empty(nwml, dtype=torch.float32, device=q.device),
             torch.zeros(nbh, dtype=torch.int32, device=q.device).view(torch.uint32))
        if not capturing:
            keep[key] = w
    return w


def _lens_table(c, like, b, n, which):
    """lengths all n and the table of B pages (sequence b in page b) of a
    KVCache; on the GPU kept on the cache (`which` names the pair) and
    the lengths refilled when n changes, except while a CUDA graph is
    captured"""
    import numpy as np
    if not _is_torch(like):
        return np.full(b, n, np.int32), np.arange(b, dtype=np.int32).reshape(b, 1)
    import torch
    capturing = torch.cuda.is_current_stream_capturing()
    keep = c.__dict__.setdefault("_lens", {})
    got = None if capturing else keep.get(which)
    if got is None:
        got = [torch.full((b,), n, dtype=torch.int32, device=like.device),
               torch.arange(b, dtype=torch.int32, device=like.device).reshape(b, 1), n]
        if not capturing:
            keep[which] = got
    elif got[2] != n:
        got[0].fill_(n)
        got[2] = n
    return got[0], got[1]


def decode_attention(q, cache, scale=None, splits=None, block_table=None, lens=None,
                     max_len=None):
    """o [B, Hq, D] = softmax(q K^T scale) V over each sequence's tokens,
    for one new token a sequence (q f16 [B, Hq, D]; Hq a multiple of the
    cache's Hkv, at most 16 times it). q f16 [B, Hq, q_len, D] (q_len 1 ..
    8, q_len Hq / Hkv at most 16) takes the sequence's last q_len tokens
    as queries, causal among them (speculative decoding's drafts, a chunk
    of a prompt: appended to the cache first), o of q's shape: query token
    i sees the sequence's tokens before its length - (q_len - 1 - i).
    scale: 1 / sqrt(D) by default.

    A tl.ops.KVCache: every sequence's `length` tokens. A tl.ops.KVPages
    pool: block_table (i32 [B, max_pages]: sequence b's page j holds its
    tokens j P .. j P + P - 1) and lens (i32 [B], the tokens of each
    sequence, 0 giving o = 0) on the pool's device, read by the kernel: no
    transfer and no sync, so the call can be captured in a CUDA graph.
    Entries of NumPy tables and lengths are checked here; on the GPU a page
    outside the pool reads as zeros and a length past the table's row is
    cut to it (nothing outside the buffers is read). max_len: the longest
    sequence there may be (default: the table's capacity), for the
    defaults below.

    splits: the blocks each sequence's tokens are split over (default:
    about a wave of the blocks the GPU holds, at least 256 tokens a split,
    from the length or max_len). The kernel's instance follows the codes,
    the page size and the length (_attn_instance: the bench's best on an
    H200, docs/performance.md). A KC cache's quantised tokens are one launch
    (KQ = 1) and its f16 residual a second that takes the last slot of the
    split and combines (decode_attn.tl's header)."""
    return _decode(q, cache, scale, splits, block_table, lens, max_len)


def _decode(q, cache, scale, splits, block_table, lens, max_len, work=None):
    """decode_attention; work: a pool's workspace (wo, wml f32, locks u32
    [B Hkv] zero) for `splits` splits, the caller's (torch.ops.tl's
    decode_attention), instead of the one kept on the pool"""
    import numpy as np
    c = _cache_arg(cache, pages=True)
    dev = _check.where(c.kc)
    q = _check.array("q", q, shape=[("B", "Hq", c.head_dim), ("B", "Hq", "q_len", c.head_dim)],
                     dtype="f16", device=dev, peer="the cache's buffers")
    scale = None if scale is None else _check.real("scale", scale)
    splits = _check.optional_integer("splits", splits, 1)
    b, hq, d = int(q.shape[0]), int(q.shape[1]), int(q.shape[-1])
    ql = int(q.shape[2]) if len(q.shape) == 4 else 1
    if hq % c.kv_heads or not 1 <= hq // c.kv_heads <= 16:
        raise ValueError(f"q: expected [B, Hq, {c.head_dim}] with Hq a multiple of "
                         f"{c.kv_heads} (at most 16 times), got {list(q.shape)}")
    nbh, g = b * c.kv_heads, hq // c.kv_heads
    if not 1 <= ql <= 8 or g * ql > 16:
        raise ValueError(f"q: {ql} query tokens of {g} heads a KV head: expected 1 .. 8 tokens "
                         f"and at most 16 rows (q_len Hq / Hkv), got {list(q.shape)}")
    scale = float(d ** -0.5 if scale is None else scale)
    on_gpu = _is_torch(q)
    q = q.contiguous() if on_gpu else np.ascontiguousarray(q)
    if on_gpu:
        import torch
        o = torch.empty(*q.shape, dtype=torch.float16, device=q.device)
    else:
        o = np.zeros(q.shape, np.float16)
    if isinstance(c, KVPages):
        if block_table is None or lens is None:
            raise TypeError("block_table, lens: a KVPages pool needs the sequences' block "
                            "table and lengths")
        block_table = _table_arg(block_table, b, dev)
        lens = _i32("lens", lens, (b,), dev, "the cache's buffers")
        cap = int(block_table.shape[1]) * c.page_size
        tokens = cap if max_len is None else _check.integer("max_len", max_len, 1)
        bt, lv = _host_values(block_table), _host_values(lens)
        if bt is not None:
            bad = np.argwhere((bt < 0) | (bt >= c.pages))
            if bad.size:
                i, j = bad[0]
                raise ValueError(f"block_table: entry [{i}, {j}] is {bt[i, j]}, not a page of "
                                 f"the pool (0 .. {c.pages - 1})")
            bad = np.argwhere((lv < 0) | (lv > min(tokens, cap)))
            if bad.size:
                i = bad[0][0]
                why = ("max_len" if tokens < cap else
                       f"the {block_table.shape[1]} pages of {c.page_size} of a table row")
                raise ValueError(f"lens: sequence {i} has {lv[i]} tokens, outside 0 .. "
                                 f"{min(tokens, cap)} ({why})")
        w, bt, st, mw, ns = _attn_instance(c.kt, c.page_size, tokens, nbh, _sm_count(q), splits)
        if work is None:
            work = _work(c, q, nbh, ns)
        else:  # the caller's: as large as the kernel's views of it
            for name, v, n in zip(("wo", "wml", "locks"), work, _work_sizes(nbh, ns, d) + (nbh,)):
                if int(v.shape[0]) < n:
                    raise ValueError(f"{name}: {ns} splits of {nbh} KV heads need {n} "
                                     f"elements, got {int(v.shape[0])}")
        _attend(q, c.kc, c.vc, c.ks, c.vs, o, lens, block_table, c.kv_heads, c.pages,
                c.page_size, c.kt, g, scale, ns, ns, 0, work, w, bt, st, mw, QL=ql)
        return o
    _pool_only("has one length", block_table=block_table, lens=lens, max_len=max_len)
    if b != c.batch:
        raise ValueError(f"q: expected [{c.batch}, Hq, {c.head_dim}], got {list(q.shape)}")
    if c.length < ql:
        raise ValueError(f"cache: it holds {c.length} tokens, fewer than the {ql} query tokens "
                         f"(kv_append the tokens first)" if c.length else
                         "cache: it is empty (kv_append its tokens first)")
    if c.nr:
        if ql > 1:
            raise ValueError(f"q: a KC cache takes one query token a sequence, got {ql}")
        return _kc_attention(q, o, c, scale, splits, nbh, g)
    w, bt, st, mw, ns = _attn_instance(c.kt, c.capacity, c.length, nbh, _sm_count(q), splits)
    lv, tab = _lens_table(c, q, b, c.length, "all")
    _attend(q, c.kc, c.vc, c.ks, c.vs, o, lv, tab, c.kv_heads, b, c.capacity, c.kt, g,
            scale, ns, ns, 0, _work(c, q, nbh, ns), w, bt, st, mw, QL=ql)
    return o


def _kc_attention(q, o, c, scale, splits, nbh, g):
    b = int(q.shape[0])
    lq = c.length - c.rlen
    ns = (splits or max(1, min(lq // 256, -(-264 // nbh)))) if lq else 0
    nt = ns + (c.rlen > 0)
    w = 4 if c.nr % 64 == 0 else 2
    bt = 32 if lq >= 16384 and c.nr % (32 * w) == 0 else 16
    work = _work(c, q, nbh, nt)
    if lq:
        lv, tab = _lens_table(c, q, b, lq, "quantised")
        _attend(q, c.kc, c.vc, c.ks, c.vs, o, lv, tab, c.kv_heads, b, c.capacity, c.kt, g,
                scale, nt, ns, 0, work, w, bt, 2 if bt == 32 else 3, KQ=1, NR=c.nr)
    if c.rlen:
        lv, tab = _lens_table(c, q, b, c.rlen, "residual")
        _attend(q, c.rk, c.rv, c.vs, c.vs, o, lv, tab, c.kv_heads, b, c.nr, "f16", g,
                scale, nt, 1, nt - 1, work, w, 16, 3)
    return o


# --- Arbitrary-precision WqAp on binary tensor cores (kernels/abq_*.tl) ---


class PackedWQ:
    """Q-bit weights as Q bit planes for kernels/abq_matmul.tl: `planes`
    (u1 [Q, N, K], as bytes), the column sums of the codes, the scales and
    the zero points per output column."""

    def __init__(self, planes, colsum, sw, zw, K, N, q):
        self.planes, self.colsum, self.sw, self.zw = planes, colsum, sw, zw
        self.K, self.N, self.q = K, N, q

    def __repr__(self):
        return f"<tl.ops.PackedWQ W{self.q} K={self.K} N={self.N}>"


def pack_wqap(codes, scales, zeros, q):
    """Packs unsigned q-bit weight codes [K, N] (0 .. 2^q - 1) with a scale
    and a zero point per column (N values each; dequantised weight =
    scale (code - zero)) into bit planes (kernels/abq_pack.tl): on the GPU
    for torch tensors, on the CPU VM for NumPy arrays."""
    import numpy as np
    q = _check.integer("q", q, 1, 8)
    if _is_torch(codes) and codes.device.type != "cuda":
        codes = codes.numpy()
    on_gpu = _is_torch(codes)
    c = _check.array("codes", codes, shape=("K", "N"), kinds="iub")
    c = c.detach().cpu().numpy() if on_gpu else c
    K, N = (int(n) for n in c.shape)
    if K % 256 or N % 32:
        raise ValueError(f"codes [{K}, {N}]: K must be a multiple of 256 and N of 32")
    if c.min() < 0 or c.max() >= 1 << q:
        raise ValueError(f"codes: expected {q}-bit codes in 0..{(1 << q) - 1}")
    def num(v, what, kinds, t):
        v = _check.array(what, v.detach().cpu().numpy() if _is_torch(v) else v,
                         shape=[(N,), (1, N)], kinds=kinds)
        return v.astype(t).reshape(1, N)
    sw, zw = num(scales, "scales", "iuf", np.float32), num(zeros, "zeros", "iu", np.int32)
    k = _kernel("abq_pack.tl", K=K, N=N, Q=q)
    w = np.ascontiguousarray(c.astype(np.uint8))
    if on_gpu:
        import torch
        dev = codes.device
        planes = torch.zeros(q * N * K // 8, dtype=torch.uint8, device=dev)
        colsum = torch.zeros(1, N, dtype=torch.int32, device=dev)
        k(torch.from_numpy(w).to(dev), planes, colsum)
        return PackedWQ(planes, colsum, torch.from_numpy(sw).to(dev), torch.from_numpy(zw).to(dev), K, N, q)
    planes, colsum = np.zeros(q * N * K // 8, np.uint8), np.zeros((1, N), np.int32)
    k.run_vm(w, planes, colsum)
    return PackedWQ(planes, colsum, sw, zw, K, N, q)


def wqap_matmul(x, packed, p=8, out_dtype="f16"):
    """x [m, K] (f16) quantised per row to p-bit codes (kernels/abq_quant.tl)
    times the packed q-bit weights on the binary tensor cores
    (kernels/abq_matmul.tl): [m, N] in out_dtype (f16 or f32)."""
    import numpy as np
    w = _check.instance("packed", packed, PackedWQ, "tl.ops.PackedWQ (pack_wqap's)")
    p = _check.integer("p", p, 1, 8)
    out_dtype = _check.choice("out_dtype", out_dtype, ("f16", "f32"))
    x = _check.array("x", x, shape=("m", w.K), dtype="f16", device=_check.where(w.planes),
                     peer="the packed weights")
    on_gpu = _is_torch(x)
    m = int(x.shape[0])
    if m < 1:
        raise ValueError("x: m must be at least 1")
    mb = min(m, 8)
    rows = -(-m // mb) * 16 * (-(-p * mb // 16))
    qw = min(8, 1 << (w.K // 256).bit_length() - 1)  # warps a row: a power of two <= K / 256
    quant = _kernel("abq_quant.tl", K=w.K, M=mb, P=p, W=qw)
    bn = 64 if w.N % 64 == 0 else 32  # the bench's best at decode sizes (docs/performance.md)
    mm = _kernel("abq_matmul.tl", K=w.K, N=w.N, M=mb, P=p, Q=w.q, BN=bn, W=4, KT=1, S=4,
                 OT=out_dtype)
    if on_gpu:
        import torch
        dev = x.device
        ap = torch.zeros(rows * w.K // 8, dtype=torch.uint8, device=dev)
        sa = torch.empty(m, 1, dtype=torch.float32, device=dev)
        za = torch.empty(m, 1, dtype=torch.int32, device=dev)
        ra = torch.empty(m, 1, dtype=torch.int32, device=dev)
        out = torch.empty(m, w.N, dtype={"f16": torch.float16, "f32": torch.float32}[out_dtype], device=dev)
        quant(x.contiguous(), ap, sa, za, ra, m)
        ws, locks = _workspace(x, True, "i32")
        mm(ap.view(torch.uint32), w.planes.view(torch.uint32), sa, za, ra, w.sw, w.zw, w.colsum, out, m,
           ws, locks)
        return out
    ap = np.zeros(rows * w.K // 8, np.uint8)
    sa, za, ra = np.zeros((m, 1), np.float32), np.zeros((m, 1), np.int32), np.zeros((m, 1), np.int32)
    out = np.zeros((m, w.N), {"f16": np.float16, "f32": np.float32}[out_dtype])
    quant.run_vm(np.ascontiguousarray(x), ap, sa, za, ra, m)
    ws, locks = _workspace(x, False, "i32")
    mm.run_vm(ap.view(np.uint32), w.planes.view(np.uint32), sa, za, ra, w.sw, w.zw, w.colsum, out, m,
              ws, locks)
    return out
