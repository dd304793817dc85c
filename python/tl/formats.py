"""Quantised checkpoints in TL's terms, and TL's packed weights in files.

The importers read the tensors a checkpoint stores for one linear layer
and return an `Imported`: codes [K, N] (one integer a code, k along the
layer's input), scales and zero points [K / group, N], the weight type and
group, and, for checkpoints whose groups are not runs of consecutive k
(GPTQ's act-order), the order of k the codes were put in. `pack()` turns
it into tl.ops.PackedWeights. Each importer accepts NumPy arrays (the CPU
VM) or torch tensors, and on torch CUDA tensors runs on the GPU.

    imp = tl.formats.from_gptq(qweight, qzeros, scales, g_idx, bits=4)
    packed = imp.pack()                     # tl.ops.PackedWeights, .perm set
    y = tl.ops.quant_matmul(x, packed)

Where each format is defined (docs/formats.md): GPTQ as AutoGPTQ and
GPTQModel store it, AWQ as AutoAWQ's GEMM layers store it, HQQ as its
quantiser computes it. save_packed and load_packed keep TL's own packed
form in a safetensors file (the format's header, JSON, then the tensors'
bytes), so that a model is packed once."""

import json
import os

from ._check import is_torch as _is_torch

__all__ = ["Imported", "from_gptq", "from_awq", "from_hqq", "from_mxfp4", "from_state_dict", "shard", "save_packed", "load_packed",
           "read_safetensors", "write_safetensors", "PACKED_FORMAT", "PACKED_VERSION"]

PACKED_FORMAT = "tl.packed"
PACKED_VERSION = 1




def _np():
    import numpy as np
    return np


def _shape(x):
    return tuple(int(d) for d in x.shape)


def _need(x, what, ndim, kinds):
    """x as an array of `ndim` dimensions whose dtype is of `kinds` ("i":
    integers, "f": floats); TypeError or ValueError naming `what`."""
    if x is None or not hasattr(x, "shape") or not hasattr(x, "dtype"):
        raise TypeError(f"{what}: expected a NumPy array or torch tensor, got {type(x).__name__}")
    if len(x.shape) != ndim:
        raise ValueError(f"{what}: expected {ndim} dimensions, got shape {list(_shape(x))}")
    if _is_torch(x):
        kind = "f" if x.dtype.is_floating_point else "c" if x.dtype.is_complex else \
            "b" if str(x.dtype) == "torch.bool" else "i"
    else:
        kind = {"u": "i", "i": "i", "f": "f"}.get(x.dtype.kind, x.dtype.kind)
    if kind not in kinds:
        want = {"i": "an integer", "f": "a floating-point"}[kinds[0]]
        raise TypeError(f"{what}: expected {want} dtype, got {x.dtype}")
    return x


def _arange(like, n):
    if _is_torch(like):
        import torch
        return torch.arange(n, device=like.device, dtype=torch.int64)
    return _np().arange(n, dtype=_np().int64)


def _i64(x):
    return x.to(dtype=__import__("torch").int64) if _is_torch(x) else x.astype(_np().int64)


def _u8(x):
    return x.to(dtype=__import__("torch").uint8) if _is_torch(x) else x.astype(_np().uint8)


def _bitfields(words, bits, count):
    """Codes of `bits` bits read from 32-bit words [R, N] along axis 0 as
    one little-endian bit stream a column: code i of column n at bits
    [bits i, bits (i + 1)) of words[:, n] (a code may span two words).
    Returns int64 [count, N]."""
    w = _i64(words) & 0xFFFFFFFF
    r = w.shape[0]
    o = _arange(w, count) * bits
    idx, sh = o >> 5, o & 31
    lo = w[idx] >> sh[:, None]
    over = sh + bits > 32
    if bool(over.any()):
        nxt = idx + 1
        nxt = nxt.clamp(max=r - 1) if _is_torch(nxt) else _np().minimum(nxt, r - 1)
        hi = (w[nxt] << (32 - sh)[:, None]) & 0xFFFFFFFF
        lo = lo | (hi * over[:, None])
    return lo & ((1 << bits) - 1)


def _bitstream(codes, bits):
    """The inverse of _bitfields over one flat run of codes (integers in
    0 .. 2^bits - 1, a multiple of 8 of them): the bytes of their
    little-endian bit stream, code i at bits [bits i, bits (i + 1)).
    uint8 [len(codes) bits / 8], on the codes' device."""
    c = _i64(codes).reshape(-1, 8)
    sh = _arange(c, 8) * bits
    v = (c << sh).sum(1) if _is_torch(c) else (c << sh).sum(axis=1, dtype=_np().int64)
    out = (v[:, None] >> (_arange(c, bits) * 8)) & 255
    return _u8(out.reshape(-1))


def _floats(x, what, shape):
    _need(x, what, len(shape), "f")
    if _shape(x) != tuple(shape):
        raise ValueError(f"{what}: expected shape {list(shape)}, got {list(_shape(x))}")
    return x


class Imported:
    """One linear layer's weights in TL's terms: codes [K, N] (integers,
    the bit patterns of wtype), scales [K / group, N], zeros [K / group,
    N] or None, group (None: one scale a column), and perm: None where
    the codes are in the layer's k order, else the int64 order of k they
    are in (row i of codes is the layer's k = perm[i]), so that y = x[:,
    perm] @ dequant(codes) (pack() records it; quant_matmul applies it)."""

    def __init__(self, codes, scales, zeros, wtype, group, perm=None, exact_scales=False):
        self.codes, self.scales, self.zeros = codes, scales, zeros
        self.wtype, self.group, self.perm = wtype, group, perm
        self.exact_scales = exact_scales  # the format's scales are exact: never round them

    @property
    def K(self):
        return int(self.codes.shape[0])

    @property
    def N(self):
        return int(self.codes.shape[1])

    def __repr__(self):
        g = "per column" if self.group is None else f"g{self.group}"
        return (f"<tl.formats.Imported {self.wtype} {g}{' zp' if self.zeros is not None else ''}"
                f"{' act-order' if self.perm is not None else ''} K={self.K} N={self.N}>")

    def dequantize(self):
        """The weights [K, N] in the layer's k order, float32: (code -
        zero) * scale, each group's scale and zero broadcast over its k."""
        g = self.K if self.group is None else self.group
        q = self.codes
        if self.wtype[0] == "f":
            if self.wtype not in _FLOAT_VALUES:
                raise ValueError(f"dequantize: {self.wtype} codes are not decoded here")
            t = _FLOAT_VALUES[self.wtype]
            if _is_torch(q):
                import torch
                q = torch.tensor(t, dtype=torch.float32, device=q.device)[q.to(torch.int64)]
            else:
                q = _np().array(t, dtype=_np().float32)[q.astype(_np().int64)]
        if _is_torch(q):
            import torch
            qf = q.to(torch.float32).reshape(self.K // g, g, self.N)
            s = self.scales.to(torch.float32).reshape(-1, 1, self.N)
            z = 0 if self.zeros is None else self.zeros.to(torch.float32).reshape(-1, 1, self.N)
            w = ((qf - z) * s).reshape(self.K, self.N)
            if self.perm is not None:
                w = torch.empty_like(w).index_copy_(0, self.perm, w)
            return w
        np = _np()
        qf = q.astype(np.float32).reshape(self.K // g, g, self.N)
        s = self.scales.astype(np.float32).reshape(-1, 1, self.N)
        z = 0 if self.zeros is None else self.zeros.astype(np.float32).reshape(-1, 1, self.N)
        w = ((qf - z) * s).reshape(self.K, self.N)
        if self.perm is not None:
            out = np.empty_like(w)
            out[self.perm] = w
            w = out
        return w

    def pack(self, at="f16"):
        """tl.ops.pack_weights of these codes, scales and zeros; the
        result's perm is this layer's. Where the format's scales are
        exact (MXFP4's powers of two), scales that `at` (f16, bf16) does
        not hold are refused, not rounded; others are rounded to `at`."""
        from . import ops
        if self.exact_scales:
            _exact_in(self.scales, at, "scales")
        p = ops.pack_weights(self.codes, self.scales, self.zeros, wtype=self.wtype,
                             group=self.group, at=at)
        p.perm = self.perm
        return p


# The values of the small-float codes the importers produce, by code
# (OCP's e2m1: sign in bit 3, two exponent bits of bias 1, one mantissa
# bit, no infinities or NaN).
_FLOAT_VALUES = {"f4e2m1": (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
                            -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)}


def _exact_in(v, at, what):
    """ValueError unless every value of v is exactly one of `at`'s."""
    if _is_torch(v):
        import torch
        dt = {"f16": torch.float16, "bf16": torch.bfloat16}.get(at)
        if dt is None or v.dtype == dt:
            return
        ok = bool((v.to(dt).to(v.dtype) == v).all())
    else:
        np = _np()
        if at != "f16" or v.dtype == np.float16:
            return
        with np.errstate(over="ignore"):
            ok = bool((v.astype(np.float16).astype(v.dtype) == v).all())
    if not ok:
        raise ValueError(f"{what}: some values are not exactly {at} values (out of its range or "
                         f"precision); pack with at='bf16' or rescale")


def _group_of(K, groups, what):
    if groups == 1:
        return None
    if groups <= 0 or K % groups:
        raise ValueError(f"{what}: {groups} groups do not divide K = {K}")
    return K // groups


def from_gptq(qweight, qzeros, scales, g_idx=None, bits=4, zero_offset=1):
    """A GPTQ layer as AutoGPTQ and GPTQModel store it: qweight int32 [K
    bits / 32, N] (each column's codes along k as one little-endian bit
    stream of 32-bit words: 2, 4 and 8 bits in whole words, 3 bits across
    them), qzeros int32 [K / g, N bits / 32] (each row's zero points along
    n, the same bit stream), scales [K / g, N], and g_idx [K], k's group
    (None: k // g). zero_offset: what the checkpoint's stored zero points
    lack: 1 for the format most checkpoints carry (AutoGPTQ's, which
    stores zero - 1), 0 for GPTQModel's v2 format. A g_idx whose groups are
    not runs of g consecutive k (act-order) is honoured by reordering k
    once here (Imported.perm). dequant: scale[g_idx[k], n] (q[k, n] -
    zero[g_idx[k], n])."""
    if bits not in (2, 3, 4, 8):
        raise ValueError(f"bits {bits!r}: GPTQ stores 2, 3, 4 or 8 bits")
    if zero_offset not in (0, 1):
        raise ValueError(f"zero_offset {zero_offset!r}: expected 1 (AutoGPTQ's format) or 0 (GPTQModel's v2)")
    _need(qweight, "qweight", 2, "i")
    _need(qzeros, "qzeros", 2, "i")
    _need(scales, "scales", 2, "f")
    rows, N = _shape(qweight)
    if rows * 32 % bits:
        raise ValueError(f"qweight: {rows} rows of 32-bit words do not hold whole {bits}-bit codes")
    K = rows * 32 // bits
    groups = _shape(scales)[0]
    _floats(scales, "scales", (groups, N))
    if N * bits % 32 or _shape(qzeros) != (groups, N * bits // 32):
        raise ValueError(f"qzeros: expected shape {[groups, N * bits // 32]} for {groups} groups "
                         f"of N = {N} {bits}-bit zero points, got {list(_shape(qzeros))}")
    g = _group_of(K, groups, "scales")
    codes = _bitfields(qweight, bits, K)
    zeros = _bitfields(qzeros.T, bits, N).T
    zeros = zeros + zero_offset
    perm = None
    if g_idx is not None:
        _need(g_idx, "g_idx", 1, "i")
        if _shape(g_idx) != (K,):
            raise ValueError(f"g_idx: expected shape [{K}], got {list(_shape(g_idx))}")
        gi = _i64(g_idx)
        if bool((gi < 0).any()) or bool((gi >= groups).any()):
            raise ValueError(f"g_idx: group indices must lie in 0..{groups - 1}")
        natural = _arange(gi, K) // (K if g is None else g)
        if not bool((gi == natural).all()):
            if _is_torch(gi):
                import torch
                perm = torch.sort(gi, stable=True).indices
                counts = torch.bincount(gi, minlength=groups)
            else:
                np = _np()
                perm = np.argsort(gi, kind="stable").astype(np.int64)
                counts = np.bincount(gi, minlength=groups)
            if bool((counts != K // groups).any()):
                raise ValueError(f"g_idx: every group must hold K / groups = {K // groups} k")
            codes = codes[perm]
    wt = f"u{bits}"
    zf = zeros.to(scales.dtype) if _is_torch(zeros) else zeros.astype(scales.dtype)
    return Imported(_u8(codes), scales, zf, wt, g, perm)


# AutoAWQ's GEMM layout: nibble i of a word holds column 8 j + _AWQ_ORDER[i].
_AWQ_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)


def _awq_columns(words, what):
    """int32 [R, C] in AWQ's interleaved nibble order -> int64 codes [R, 8 C]."""
    w = _i64(words) & 0xFFFFFFFF
    r, c = _shape(w)
    nib = [(w >> (4 * i)) & 15 for i in range(8)]   # nib[i][:, j] is column 8 j + order[i]
    inv = [_AWQ_ORDER.index(col) for col in range(8)]
    if _is_torch(w):
        import torch
        return torch.stack([nib[inv[col]] for col in range(8)], dim=2).reshape(r, 8 * c)
    return _np().stack([nib[inv[col]] for col in range(8)], axis=2).reshape(r, 8 * c)


def from_awq(qweight, qzeros, scales, bits=4):
    """An AWQ layer as AutoAWQ's GEMM layers store it: qweight int32 [K, N
    / 8] (eight 4-bit codes a word along n, nibble i holding column 8 j +
    (0, 2, 4, 6, 1, 3, 5, 7)[i]), qzeros int32 [K / g, N / 8] in the same
    order, scales [K / g, N]. dequant: scale (q - zero)."""
    if bits != 4:
        raise ValueError(f"bits {bits!r}: AWQ's GEMM layout holds 4-bit codes")
    _need(qweight, "qweight", 2, "i")
    _need(qzeros, "qzeros", 2, "i")
    _need(scales, "scales", 2, "f")
    K, c = _shape(qweight)
    N = 8 * c
    groups = _shape(scales)[0]
    _floats(scales, "scales", (groups, N))
    if _shape(qzeros) != (groups, c):
        raise ValueError(f"qzeros: expected shape {[groups, c]}, got {list(_shape(qzeros))}")
    g = _group_of(K, groups, "scales")
    codes = _awq_columns(qweight, "qweight")
    zeros = _awq_columns(qzeros, "qzeros")
    zf = zeros.to(scales.dtype) if _is_torch(zeros) else zeros.astype(scales.dtype)
    return Imported(_u8(codes), scales, zf, "u4", g)


def from_hqq(codes, scales, zeros, bits, group):
    """HQQ-style weights: codes [N, K] (the layer's [out, in], unpacked:
    one integer a code, 0 .. 2^bits - 1), and a scale and a zero point a
    row and group of `group` consecutive k, [N, K / group] or HQQ's
    flattened [N K / group, 1]. dequant: (q - zero) scale. The zero points
    may be fractional: TL keeps them in the activations' type, so q - zero
    is rounded to it (exact for zero points of 8 bits or fewer)."""
    if not isinstance(bits, int) or not 1 <= bits <= 8:
        raise ValueError(f"bits {bits!r}: expected 1..8")
    _need(codes, "codes", 2, "i")
    N, K = _shape(codes)
    if group is None or K % group:
        raise ValueError(f"group {group!r}: expected a divisor of K = {K}")
    groups = K // group

    def rows(v, what):
        _need(v, what, len(v.shape), "f")
        if _shape(v) not in ((N, groups), (N * groups, 1)):
            raise ValueError(f"{what}: expected shape {[N, groups]} or {[N * groups, 1]}, "
                             f"got {list(_shape(v))}")
        v = v.reshape(N, groups)
        return v.t().contiguous() if _is_torch(v) else _np().ascontiguousarray(v.T)
    s, z = rows(scales, "scales"), rows(zeros, "zeros")
    q = _i64(codes)
    if bool((q < 0).any()) or bool((q >= 1 << bits).any()):
        raise ValueError(f"codes: expected integers in 0..{(1 << bits) - 1}")
    q = q.t().contiguous() if _is_torch(q) else _np().ascontiguousarray(q.T)
    return Imported(_u8(q), s, z, f"u{bits}", None if groups == 1 else group)


_LAYER_TENSORS = {"gptq": ("qweight", "qzeros", "scales"), "awq": ("qweight", "qzeros", "scales"),
                  "mxfp4": ("blocks", "scales")}


def from_state_dict(state_dict, fmt, bits=4, zero_offset=1):
    """Every quantised linear layer of a checkpoint's tensors: {module
    name: Imported} (for tl.nn.quantize's `weights`), and the bias tensors
    {module name: bias} beside them. fmt: "gptq" (name.qweight, .qzeros,
    .scales and optional .g_idx; bits and zero_offset as from_gptq takes
    them, from the checkpoint's quantize_config: zero_offset 0 for
    checkpoint_format "gptq_v2"), "awq" (name.qweight, .qzeros, .scales)
    or "mxfp4" (name.blocks, .scales, or gpt-oss's name_blocks,
    name_scales). A layer with some of its tensors but not all is refused,
    naming what is missing."""
    if fmt not in _LAYER_TENSORS:
        raise ValueError(f"fmt {fmt!r}: expected one of {', '.join(sorted(_LAYER_TENSORS))}")
    if not hasattr(state_dict, "keys"):
        raise TypeError(f"state_dict: expected a mapping of tensor names, got {type(state_dict).__name__}")
    parts = _LAYER_TENSORS[fmt]
    layers = {}
    for key in state_dict.keys():
        for sep in (".", "_") if fmt == "mxfp4" else (".",):
            for part in parts:
                if key.endswith(sep + part):
                    layers.setdefault((key[:-len(sep + part)], sep), set()).add(part)
    out, biases = {}, {}
    for (name, sep), have in sorted(layers.items()):
        if fmt != "mxfp4" and "qweight" not in have:
            continue   # a module's own .scales (a norm, say) is not a layer
        if fmt == "mxfp4" and "blocks" not in have:
            continue
        missing = [p for p in parts if p not in have]
        if missing:
            raise ValueError(f"state_dict: layer {name!r} has no {', '.join(name + sep + m for m in missing)}")
        t = {p: state_dict[name + sep + p] for p in parts}
        try:
            if fmt == "gptq":
                imp = from_gptq(t["qweight"], t["qzeros"], t["scales"], state_dict.get(name + ".g_idx"),
                                bits=bits, zero_offset=zero_offset)
            elif fmt == "awq":
                imp = from_awq(t["qweight"], t["qzeros"], t["scales"], bits=bits)
            else:
                imp = from_mxfp4(t["blocks"], t["scales"])
        except (TypeError, ValueError) as e:
            raise type(e)(f"state_dict: layer {name!r}: {e}") from None
        out[name] = imp
        if name + ".bias" in state_dict:
            biases[name] = state_dict[name + ".bias"]
    if not out:
        raise ValueError(f"state_dict: no {fmt} layers (tensors named NAME.{parts[0]})")
    return out, biases


def shard(p, axis, parts, rank):
    """Part `rank` of `parts` of packed weights p, cut without repacking:
    axis "n" (column parallel: N / parts columns, a multiple of 64, each
    rank's product is its slice of y's columns) or "k" (row parallel: K /
    parts rows at group boundaries, each rank multiplies its slice of x's
    columns and the ranks' products add up to y). A contiguous copy of
    the part's codes and scales, on p's device."""
    from .ops import PackedWeights, _BN
    if not isinstance(p, PackedWeights):
        raise TypeError(f"p: expected tl.ops.PackedWeights, got {type(p).__name__}")
    if axis not in ("n", "k"):
        raise ValueError(f"axis {axis!r}: expected 'n' (columns) or 'k' (rows)")
    if not isinstance(parts, int) or parts < 1:
        raise ValueError(f"parts {parts!r}: expected a positive integer")
    if not isinstance(rank, int) or not 0 <= rank < parts:
        raise ValueError(f"rank {rank!r}: expected 0..{parts - 1}")
    perm = getattr(p, "perm", None)

    def cont(x):
        return x.contiguous() if _is_torch(x) else _np().ascontiguousarray(x)
    if axis == "n":
        if p.N % (parts * _BN):
            raise ValueError(f"parts {parts}: N = {p.N} does not split into parts of a multiple of {_BN} columns")
        w = p.N // parts
        n0 = rank * w
        b = cont(p.b[n0 // _BN:(n0 + w) // _BN])
        s = cont(p.s[:, :, n0:n0 + w])
        return PackedWeights(b, s, p.K, w, p.wtype, p.group, p.zp, p.per_column, p.at, perm)
    if perm is not None:
        raise ValueError("axis 'k': an act-order layer's rows are not in x's order; shard it along 'n'")
    if p.K % (parts * p.group):
        raise ValueError(f"parts {parts}: K = {p.K} does not split at group boundaries (group {p.group})")
    h = p.K // parts
    k0 = rank * h
    b = cont(p.b[:, k0 // p.group:(k0 + h) // p.group])
    s = p.s if p.per_column else cont(p.s[k0 // p.group:(k0 + h) // p.group])
    return PackedWeights(b, s, h, p.N, p.wtype, p.group, p.zp, p.per_column, p.at)


def from_mxfp4(blocks, scales):
    """An OCP MXFP4 layer (as gpt-oss ships its linear weights): blocks
    uint8 [N, K / 32, 16] (or [N, K / 2]), each row's e2m1 codes along k
    two a byte, element 2 i in the low nibble of byte i and 2 i + 1 in
    the high one; scales uint8 [N, K / 32], one e8m0 scale a block of 32
    (2^(e - 127); 255 is NaN and is refused). dequant: value(code) 2^(e -
    127). The codes become TL's f4e2m1 (the same bit patterns), the
    scales float32 [K / 32, N] (exact), group 32; Imported.pack(at) then
    needs at to hold them (f16: 2^-24 .. 2^15; bf16: every e8m0 value)."""
    _need(blocks, "blocks", len(blocks.shape), "i")
    _need(scales, "scales", 2, "i")
    N, nb = _shape(scales)
    if _shape(blocks) not in ((N, nb, 16), (N, nb * 16)):
        raise ValueError(f"blocks: expected shape {[N, nb, 16]} or {[N, nb * 16]} for scales "
                         f"{[N, nb]}, got {list(_shape(blocks))}")
    b = _i64(blocks).reshape(N, nb * 16)
    e = _i64(scales)
    if bool((b < 0).any()) or bool((b > 255).any()) or bool((e < 0).any()) or bool((e > 255).any()):
        raise ValueError("blocks, scales: expected bytes (0..255)")
    if bool((e == 255).any()):
        raise ValueError("scales: the e8m0 NaN code 255 is not a scale")
    if _is_torch(b):
        import torch
        codes = torch.stack([b & 15, b >> 4], dim=2).reshape(N, nb * 32).t().contiguous()
        sc = torch.ldexp(torch.ones_like(e, dtype=torch.float32), (e - 127).to(torch.int32)).t().contiguous()
    else:
        np = _np()
        codes = np.ascontiguousarray(np.stack([b & 15, b >> 4], axis=2).reshape(N, nb * 32).T)
        sc = np.ascontiguousarray(np.ldexp(np.float32(1), (e - 127).astype(np.int32)).astype(np.float32).T)
    return Imported(_u8(codes), sc, None, "f4e2m1", 32, exact_scales=True)


# --- safetensors ---------------------------------------------------------
# The format: an 8-byte little-endian header length n, n bytes of JSON
# ({name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__":
# {str: str}}), then the tensors' bytes, offsets relative to their start.

_ST_DTYPES = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "U16": "uint16", "I16": "int16",
              "F16": "float16", "BF16": "uint16", "U32": "uint32", "I32": "int32", "F32": "float32",
              "U64": "uint64", "I64": "int64", "F64": "float64"}
_MAX_HEADER = 100 << 20


def _st_name(np_dtype, torch_dtype=None):
    if torch_dtype is not None and str(torch_dtype) == "torch.bfloat16":
        return "BF16"
    for k, v in _ST_DTYPES.items():
        if k != "BF16" and _np().dtype(v) == np_dtype:
            return k
    raise TypeError(f"safetensors has no dtype for {np_dtype}")


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: array or tensor} and metadata {str: str} to `path` as
    safetensors (torch tensors are copied to the host; bf16 kept as BF16)."""
    np = _np()
    if not isinstance(tensors, dict):
        raise TypeError(f"tensors: expected a dict of name -> array, got {type(tensors).__name__}")
    meta = dict(metadata or {})
    for k, v in meta.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError("metadata: keys and values must be str")
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        if not isinstance(name, str) or name == "__metadata__":
            raise ValueError(f"tensors: bad tensor name {name!r}")
        t = tensors[name]
        tdt = None
        if _is_torch(t):
            import torch
            tdt = t.dtype
            t = t.detach().contiguous().cpu()
            t = (t.view(torch.int16) if tdt == torch.bfloat16 else t).numpy()
        a = np.ascontiguousarray(np.asarray(t))
        if a.dtype.byteorder == ">":
            a = a.astype(a.dtype.newbyteorder("<"))
        dt = _st_name(a.dtype, tdt)
        b = a.tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    if meta:
        header["__metadata__"] = meta
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(len(h).to_bytes(8, "little"))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def read_safetensors(path):
    """({name: NumPy array}, metadata) of a safetensors file; BF16 tensors
    come back as uint16 bit patterns with their names in metadata's
    "__bf16__" list. ValueError (naming the file) for a malformed file."""
    np = _np()
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such file" if not os.path.exists(path)
                                else f"{path}: not a regular file")
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path}: not a safetensors file (shorter than its header length)")
    n = int.from_bytes(data[:8], "little")
    if n > _MAX_HEADER or 8 + n > len(data):
        raise ValueError(f"{path}: not a safetensors file (header length {n} past the file's "
                         f"{len(data)} bytes)")
    try:
        header = json.loads(data[8:8 + n].decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: the safetensors header is not JSON: {e}") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path}: the safetensors header is not a JSON object")
    meta = header.pop("__metadata__", {}) or {}
    if not isinstance(meta, dict):
        raise ValueError(f"{path}: __metadata__ is not an object")
    body = memoryview(data)[8 + n:]
    out, bf16 = {}, []
    spans = []
    for name, d in header.items():
        try:
            dt, shape, (b, e) = d["dtype"], [int(x) for x in d["shape"]], d["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{path}: tensor {name!r}: expected dtype, shape and data_offsets") from None
        if dt not in _ST_DTYPES:
            raise ValueError(f"{path}: tensor {name!r}: unsupported dtype {dt!r}")
        size = int(np.prod(shape, dtype=np.int64)) * np.dtype(_ST_DTYPES[dt]).itemsize
        if not (isinstance(b, int) and isinstance(e, int)) or b < 0 or e - b != size \
                or e > len(body) or any(s < 0 for s in shape):
            raise ValueError(f"{path}: tensor {name!r}: data_offsets {[b, e]} do not hold "
                             f"{shape} {dt} within the file's {len(body)} data bytes")
        spans.append((b, e, name))
        out[name] = np.frombuffer(body[b:e], dtype=_ST_DTYPES[dt]).reshape(shape).copy()
        if dt == "BF16":
            bf16.append(name)
    spans.sort()
    for (b0, e0, n0), (b1, e1, n1) in zip(spans, spans[1:]):
        if b1 < e0:
            raise ValueError(f"{path}: tensors {n0!r} and {n1!r} overlap")
    if bf16:
        meta = dict(meta, __bf16__=bf16)
    return out, meta


def save_packed(path, layers, metadata=None):
    """Saves {name: tl.ops.PackedWeights} to `path` (safetensors): name.codes
    (u8), name.scales (the activations' type), name.perm (I64, act-order
    layers only), and each layer's description in the metadata with the
    format's name and version."""
    from .ops import PackedWeights
    if not isinstance(layers, dict) or not layers:
        raise TypeError("layers: expected a non-empty dict of name -> tl.ops.PackedWeights")
    tensors = {}
    meta = {"format": PACKED_FORMAT, "version": str(PACKED_VERSION)}
    for k, v in (metadata or {}).items():
        meta["user." + str(k)] = str(v)
    for name, p in layers.items():
        if not isinstance(p, PackedWeights):
            raise TypeError(f"layers[{name!r}]: expected tl.ops.PackedWeights, got {type(p).__name__}")
        tensors[name + ".codes"] = p.b
        tensors[name + ".scales"] = p.s
        perm = getattr(p, "perm", None)
        if perm is not None:
            tensors[name + ".perm"] = perm
        meta["layer." + name] = json.dumps(dict(K=p.K, N=p.N, wtype=p.wtype, group=p.group, zp=p.zp,
                                                per_column=bool(p.per_column), at=p.at), sort_keys=True)
    write_safetensors(path, tensors, meta)


def load_packed(path, device=None):
    """{name: tl.ops.PackedWeights} from a file save_packed wrote; with
    `device` (a torch device, e.g. "cuda") the tensors are put there,
    else they stay NumPy arrays (the CPU VM). ValueError for a file of
    another format or version, or whose tensors do not match their layer."""
    from .ops import PackedWeights, _BN, _bits
    np = _np()
    tensors, meta = read_safetensors(path)
    if meta.get("format") != PACKED_FORMAT:
        raise ValueError(f"{path}: not TL's packed weights (format {meta.get('format')!r}, "
                         f"expected {PACKED_FORMAT!r})")
    if meta.get("version") != str(PACKED_VERSION):
        raise ValueError(f"{path}: packed-weights version {meta.get('version')!r}; this TL reads "
                         f"version {PACKED_VERSION}")
    bf16 = set(meta.get("__bf16__", ()))
    out = {}
    for key, text in meta.items():
        if not key.startswith("layer."):
            continue
        name = key[len("layer."):]
        try:
            d = json.loads(text)
            K, N, wt, g, zp, pc, at = (d["K"], d["N"], d["wtype"], d["group"], d["zp"],
                                       d["per_column"], d["at"])
        except (ValueError, KeyError, TypeError):
            raise ValueError(f"{path}: layer {name!r}: malformed description {text!r}") from None
        b, s = tensors.get(name + ".codes"), tensors.get(name + ".scales")
        if b is None or s is None:
            raise ValueError(f"{path}: layer {name!r}: missing {name}.codes or {name}.scales")
        ch = g * _BN * _bits(wt) // 4096
        if b.shape != (N // _BN, K // g, ch, 32, 16) or b.dtype != np.uint8:
            raise ValueError(f"{path}: layer {name!r}: codes {list(b.shape)} {b.dtype} do not match "
                             f"K={K} N={N} {wt} g{g}")
        groups = 1 if pc else K // g
        if s.shape != (groups, 1 + zp, N):
            raise ValueError(f"{path}: layer {name!r}: scales {list(s.shape)}, expected "
                             f"{[groups, 1 + zp, N]}")
        if (at == "bf16") != (name + ".scales" in bf16):
            raise ValueError(f"{path}: layer {name!r}: scales' dtype does not match at={at}")
        perm = tensors.get(name + ".perm")
        if perm is not None and perm.shape != (K,):
            raise ValueError(f"{path}: layer {name!r}: perm {list(perm.shape)}, expected [{K}]")
        if device is not None:
            import torch
            bt = torch.from_numpy(b).to(device)
            st = torch.from_numpy(s.view(np.int16)).view(torch.bfloat16) if at == "bf16" \
                else torch.from_numpy(s)
            st = st.to(device)
            perm = None if perm is None else torch.from_numpy(perm).to(device)
            p = PackedWeights(bt, st, K, N, wt, g, zp, pc, at)
        else:
            if at != "f16":
                raise ValueError(f"{path}: layer {name!r}: bf16 scales need a torch device")
            p = PackedWeights(b, s, K, N, wt, g, zp, pc, at)
        p.perm = perm
        out[name] = p
    if not out:
        raise ValueError(f"{path}: holds no layers")
    return out
