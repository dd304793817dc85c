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

import os
import re

from . import _check
from ._check import is_torch as _is_torch
from . import compile as _compile

__all__ = ["PackedWeights", "pack_weights", "quant_matmul", "tune_matmul", "explain_matmul", "KVCache", "kv_cache", "kv_append",
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


class KVCache:
    """A KV cache in decode_attn.tl's layout: codes kc, vc (bytes [B Hkv,
    cap, D bits / 8]), per-token scales and zero points ks, vs (f16 [B Hkv,
    2, cap]; unused for f16), and `length`, the tokens written so far.
    With `nr` (KC): ks is f16 [B Hkv, 2, cap / nr, D], K's scales and zero
    points per channel and block of nr tokens, and the newest `rlen` < nr
    tokens are in f16 in the residual buffers rk, rv (bytes [B Hkv, nr, 2
    D]), not yet quantised; length counts them."""

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


def kv_cache(batch, kv_heads, head_dim, capacity, kt="u4", device=None, kc=None):
    """An empty cache for `capacity` tokens (rounded up to a multiple of
    8, and of kc) of `kv_heads` heads of `head_dim` (64 or 128) channels,
    codes of type kt (f16, u8, u4, u2). device: a torch device for a cache
    on the GPU; None for NumPy arrays (the CPU VM). kc: K quantised per
    channel over blocks of kc tokens (32, 64 or 128; integer kt), the
    newest tokens kept in f16 until their block fills (BitDecoding's KC
    with its residual block); None: per token."""
    import numpy as np
    batch = _check.integer("batch", batch, 1)
    kv_heads = _check.integer("kv_heads", kv_heads, 1)
    capacity = _check.integer("capacity", capacity, 1)
    kt = _check.choice("kt", kt, tuple(_KV_BITS))
    if _check.integer("head_dim", head_dim) not in (64, 128):
        raise ValueError(f"head_dim: expected 64 or 128, got {head_dim}")
    if kc is not None and (_check.integer("kc", kc) not in (32, 64, 128) or kt == "f16"):
        raise ValueError(f"kc: expected 32, 64 or 128 with kt u8, u4 or u2, got {kc!r}")
    cap = -(-capacity // (kc or 8)) * (kc or 8)
    nbh, row = batch * kv_heads, head_dim * _KV_BITS[kt] // 8
    kss = (nbh, 2, cap // kc, head_dim) if kc else (nbh, 2, cap)
    if device is not None:
        import torch
        z = lambda *s, dt: torch.zeros(*s, dtype=dt, device=device)  # noqa: E731
        mk = (lambda r=row, n=cap: z(nbh, n, r, dt=torch.uint8)), (lambda s=(nbh, 2, cap): z(*s, dt=torch.float16))
    else:
        mk = (lambda r=row, n=cap: np.zeros((nbh, n, r), np.uint8)), (lambda s=(nbh, 2, cap): np.zeros(s, np.float16))
    rk, rv = (mk[0](2 * head_dim, kc), mk[0](2 * head_dim, kc)) if kc else (None, None)
    return KVCache(mk[0](), mk[0](), mk[1](kss), mk[1](), batch, kv_heads, head_dim, cap, kt,
                   kc, rk, rv)


def _cache_arg(c):
    return _check.instance("cache", c, KVCache, "a tl.ops.KVCache (kv_cache's)")


def kv_append(cache, k, v):
    """Appends t tokens, k and v f16 [B, Hkv, t, D], to the cache:
    quantised token-wise (kernels/kv_quant.tl) or, for f16, copied."""
    import numpy as np
    c = _cache_arg(cache)
    dev = _check.where(c.kc)
    k = _check.array("k", k, shape=(c.batch, c.kv_heads, "t", c.head_dim), dtype="f16",
                     device=dev, peer="the cache's buffers")
    v = _check.array("v", v, shape=tuple(int(n) for n in k.shape), dtype="f16", device=dev,
                     peer="the cache's buffers")
    t = int(k.shape[2])
    if c.length + t > c.capacity:
        raise ValueError(f"k, v: the cache holds {c.length} of {c.capacity} tokens: {t} more "
                         f"do not fit")
    if c.nr:
        return _kc_append(c, k, v, t)
    nbh, d, pos = c.batch * c.kv_heads, c.head_dim, c.length
    on_gpu = _is_torch(k)
    for x, codes, sz in ((k, c.kc, c.ks), (v, c.vc, c.vs)):
        x = x.reshape(nbh, t, d)
        if c.kt == "f16":
            if on_gpu:
                codes.view(x.dtype)[:, pos:pos + t, :] = x
            else:
                codes.view(np.float16)[:, pos:pos + t, :] = x
            continue
        q = _kernel("kv_quant.tl", D=d, KT=c.kt)
        for s in range(0, t, 65535):  # the grid's y limit
            n = min(65535, t - s)
            xs = x[:, s:s + n, :]
            xs = xs.contiguous() if on_gpu else np.ascontiguousarray(xs)
            args = (xs, codes, sz, nbh, n, pos + s, c.capacity)
            q(*args) if on_gpu else q.run_vm(*args)
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
    kq, vq = _kernel("kc_quant.tl", D=d, KT=c.kt, NR=nr), _kernel("kv_quant.tl", D=d, KT=c.kt)
    for x, res, codes, sz in ((k, c.rk, c.kc, c.ks), (v, c.rv, c.vc, c.vs)):
        r = f16(res)
        xs = cat(r[:, :c.rlen], x.reshape(nbh, t, d))
        xs = xs.contiguous() if on_gpu else np.ascontiguousarray(xs)
        if x is k and nb:
            xk = xs[:, :nb * nr]
            xk = xk.contiguous() if on_gpu else np.ascontiguousarray(xk)
            args = (xk, codes, sz, nbh, nb, pos, c.capacity)
            kq(*args) if on_gpu else kq.run_vm(*args)
        elif x is v:
            for s in range(0, nb * nr, 65535):  # the grid's y limit
                m = min(65535, nb * nr - s)
                xv = xs[:, s:s + m, :]
                xv = xv.contiguous() if on_gpu else np.ascontiguousarray(xv)
                args = (xv, codes, sz, nbh, m, pos + s, c.capacity)
                vq(*args) if on_gpu else vq.run_vm(*args)
        r[:, :n - nb * nr] = xs[:, nb * nr:]
        r[:, n - nb * nr:] = 0
    c.rlen = n - nb * nr
    c.length += t
    return c


def decode_attention(q, cache, scale=None, splits=None):
    """o [B, Hq, D] = softmax(q K^T scale) V over the cache's `length`
    tokens, for one new token a sequence (q f16 [B, Hq, D]; Hq a multiple
    of the cache's Hkv, at most 16 times it). scale: 1 / sqrt(D) by
    default. splits: the blocks the length is split over (default: about
    two waves of 132 SMs, at least 256 tokens a split). Caches of 16K
    tokens and more take 32 tokens a warp and step in two stages, the
    bench's best there (docs/performance.md). A KC cache's quantised
    tokens are one launch (KQ = 1) and its f16 residual a second that
    takes the last slot of the split and combines (decode_attn.tl's
    header)."""
    import numpy as np
    c = _cache_arg(cache)
    q = _check.array("q", q, shape=(c.batch, "Hq", c.head_dim), dtype="f16",
                     device=_check.where(c.kc), peer="the cache's buffers")
    scale = None if scale is None else _check.real("scale", scale)
    splits = _check.optional_integer("splits", splits, 1)
    b, hq, d = (int(s) for s in q.shape)
    if b != c.batch or d != c.head_dim or hq % c.kv_heads or not 1 <= hq // c.kv_heads <= 16:
        raise ValueError(f"q: expected [{c.batch}, Hq, {c.head_dim}] with Hq a multiple of "
                         f"{c.kv_heads} (at most 16 times), got {tuple(q.shape)}")
    if c.length < 1:
        raise ValueError("cache: it is empty (kv_append its tokens first)")
    nbh, g = b * c.kv_heads, hq // c.kv_heads
    scale = d ** -0.5 if scale is None else scale
    if c.nr:
        return _kc_attention(q, c, float(scale), splits, nbh, g)
    ns = splits or max(1, min(c.length // 256, -(-264 // nbh)))
    long = c.length >= 16384
    k = _kernel("decode_attn.tl", D=d, G=g, KT=c.kt, BT=32 if long else 16, S=2 if long else 3)
    on_gpu = _is_torch(q)
    nwo, nwml = (nbh * ns * 16 * d, nbh * ns * 32) if ns > 1 else (4, 4)
    if on_gpu:
        import torch
        o = torch.empty(b, hq, d, dtype=torch.float16, device=q.device)
        wo = torch.empty(nwo, dtype=torch.float32, device=q.device)
        wml = torch.empty(nwml, dtype=torch.float32, device=q.device)
        locks = torch.zeros(nbh, dtype=torch.int32, device=q.device).view(torch.uint32)
        k(q.contiguous(), c.kc, c.vc, c.ks, c.vs, o, nbh, c.length, c.capacity, ns,
          float(scale), wo, wml, locks, ns, 0)
    else:
        o = np.zeros((b, hq, d), np.float16)
        k.run_vm(np.ascontiguousarray(q), c.kc, c.vc, c.ks, c.vs, o, nbh, c.length,
                 c.capacity, ns, float(scale), np.zeros(nwo, np.float32),
                 np.zeros(nwml, np.float32), np.zeros(nbh, np.uint32), ns, 0)
    return o


def _kc_attention(q, c, scale, splits, nbh, g):
    import numpy as np
    b, hq, d = (int(s) for s in q.shape)
    lq = c.length - c.rlen
    ns = (splits or max(1, min(lq // 256, -(-264 // nbh)))) if lq else 0
    nt = ns + (c.rlen > 0)
    w = 4 if c.nr % 64 == 0 else 2
    bt = 32 if lq >= 16384 and c.nr % (32 * w) == 0 else 16
    nwo, nwml = (nbh * nt * 16 * d, nbh * nt * 32) if nt > 1 else (4, 4)
    on_gpu = _is_torch(q)
    if on_gpu:
        import torch
        o = torch.empty(b, hq, d, dtype=torch.float16, device=q.device)
        wo = torch.empty(nwo, dtype=torch.float32, device=q.device)
        wml = torch.empty(nwml, dtype=torch.float32, device=q.device)
        locks = torch.zeros(nbh, dtype=torch.int32, device=q.device).view(torch.uint32)
        q = q.contiguous()
    else:
        o = np.zeros((b, hq, d), np.float16)
        wo, wml = np.zeros(nwo, np.float32), np.zeros(nwml, np.float32)
        locks = np.zeros(nbh, np.uint32)
        q = np.ascontiguousarray(q)
    if lq:
        k = _kernel("decode_attn.tl", D=d, G=g, KT=c.kt, KQ=1, NR=c.nr, W=w, BT=bt,
                    S=2 if bt == 32 else 3)
        args = (q, c.kc, c.vc, c.ks, c.vs, o, nbh, lq, c.capacity, nt, scale, wo, wml, locks, ns, 0)
        k(*args) if on_gpu else k.run_vm(*args)
    if c.rlen:
        k = _kernel("decode_attn.tl", D=d, G=g, KT="f16", W=w)
        args = (q, c.rk, c.rv, c.vs, c.vs, o, nbh, c.rlen, c.nr, nt, scale, wo, wml, locks, 1, nt - 1)
        k(*args) if on_gpu else k.run_vm(*args)
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
