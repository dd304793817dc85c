"""torch modules over tl.ops (needs torch; the layers run on CUDA tensors).

    import tl.nn
    tl.nn.quantize(model, wtype="u4", group=128)      # nn.Linear -> QuantLinear
    layer = tl.nn.QuantLinear.from_linear(linear, wtype="u4", group=128)

QuantLinear holds its packed weights as buffers (so state_dict saves and
load_state_dict restores them), a bias, and for act-order checkpoints the
order of k. Its matmul is the torch op `torch.ops.tl.quant_matmul`, a
torch.library custom op with a fake (meta) implementation, so that
torch.compile traces a model of QuantLinears without graph breaks and
CUDA graphs capture it. Round-to-nearest quantisation (from_linear,
quantize) takes the integer types: uB with a zero point a group (scale =
(max - min) / (2^B - 1)), iB symmetric (scale = max |w| / (2^(B-1) - 1)).
Weights from a checkpoint come through tl.formats (from_imported, or
quantize's `weights`)."""

import torch

from . import ops as _ops

__all__ = ["QuantLinear", "quantize", "rtn_quantize", "rtn_dequantize", "kv_workspace"]


@torch.library.custom_op("tl::quant_matmul", mutates_args=())
def _quant_matmul(x: torch.Tensor, b: torch.Tensor, s: torch.Tensor, K: int, N: int, wtype: str,
                  group: int, zp: int, per_column: bool, at: str) -> torch.Tensor:
    if x.is_cuda:
        return _ops.quant_matmul(x, _ops.PackedWeights(b, s, K, N, wtype, group, zp, per_column, at))
    # On the CPU: the VM, over NumPy views of the tensors (f16 only).
    if at != "f16":
        raise TypeError("x: bf16 layers run on CUDA tensors only (the CPU VM takes f16)")
    p = _ops.PackedWeights(b.numpy(), s.numpy(), K, N, wtype, group, zp, per_column, at)
    return torch.from_numpy(_ops.quant_matmul(x.numpy(), p))


@_quant_matmul.register_fake
def _(x, b, s, K, N, wtype, group, zp, per_column, at):
    return x.new_empty((x.shape[0], N))


_AT = {torch.float16: "f16", torch.bfloat16: "bf16"}


# A tl.ops.KVPages pool as torch ops (tl.hf's cache calls them): the pool's
# tensors and settings are arguments, so that torch.compile traces a model
# over the pool without a graph break and CUDA graphs capture the launches.
# CPU tensors run on the VM over NumPy views of the same memory.

def _pool(kc, vc, ks, vs, head_dim, page_size, kt):
    """the KVPages over the tensors, and the view of a tensor its ops take
    (itself on the GPU, its NumPy array on the CPU)"""
    t = (lambda a: a) if kc.is_cuda else (lambda a: a.numpy())  # noqa: E731
    pool = _ops.KVPages(t(kc), t(vc), t(ks), t(vs), int(kc.shape[0]), int(kc.shape[1]),
                        head_dim, page_size, kt)
    return pool, t


@torch.library.custom_op("tl::kv_append", mutates_args=("kc", "vc", "ks", "vs"))
def _kv_append(k: torch.Tensor, v: torch.Tensor, kc: torch.Tensor, vc: torch.Tensor,
               ks: torch.Tensor, vs: torch.Tensor, block_table: torch.Tensor, lens: torch.Tensor,
               page_size: int, kt: str) -> None:
    """tl.ops.kv_append(pool, k, v, block_table=, lens=) over the pool
    (kc, vc, ks, vs, page_size, kt); the caller adds t to lens"""
    pool, t = _pool(kc, vc, ks, vs, int(k.shape[-1]), page_size, kt)
    _ops.kv_append(pool, t(k), t(v), block_table=t(block_table), lens=t(lens))


@_kv_append.register_fake
def _(k, v, kc, vc, ks, vs, block_table, lens, page_size, kt):
    return None


@torch.library.custom_op("tl::decode_attention", mutates_args=("wo", "wml", "locks"))
def _decode_attention(q: torch.Tensor, kc: torch.Tensor, vc: torch.Tensor, ks: torch.Tensor,
                      vs: torch.Tensor, block_table: torch.Tensor, lens: torch.Tensor,
                      wo: torch.Tensor, wml: torch.Tensor, locks: torch.Tensor, page_size: int,
                      kt: str, scale: float, max_len: int, splits: int) -> torch.Tensor:
    """tl.ops.decode_attention over the pool, in the workspace wo, wml
    (f32) and locks (i32 [B Hkv], zero, left zero) that `splits` splits
    need (kv_workspace's)"""
    pool, t = _pool(kc, vc, ks, vs, int(q.shape[-1]), page_size, kt)
    o = _ops._decode(t(q), pool, scale, splits, t(block_table), t(lens), max_len,
                     (t(wo), t(wml), t(locks.view(torch.uint32))))
    return o if q.is_cuda else torch.from_numpy(o)


@_decode_attention.register_fake
def _(q, kc, vc, ks, vs, block_table, lens, wo, wml, locks, page_size, kt, scale, max_len, splits):
    return torch.empty_like(q)


def kv_workspace(pool, batch, max_len, device):
    """(splits, wo, wml, locks): the split count tl.ops.decode_attention
    picks for `batch` sequences of up to max_len tokens over `pool`, and
    the workspace torch.ops.tl.decode_attention takes for it"""
    nbh = batch * pool.kv_heads
    device = torch.device(device)
    sms = _ops._sm_count(torch.empty(0, device=device)) if device.type == "cuda" else 132
    ns = _ops._attn_instance(pool.kt, pool.page_size, max_len, nbh, sms)[4]
    nwo, nwml = _ops._work_sizes(nbh, ns, pool.head_dim)
    f32 = dict(dtype=torch.float32, device=device)
    return (ns, torch.empty(nwo, **f32), torch.empty(nwml, **f32),
            torch.zeros(nbh, dtype=torch.int32, device=device))


def rtn_quantize(weight, wtype="u4", group=128):
    """Round-to-nearest codes of weight [N, K] (nn.Linear's [out, in]):
    (codes [K, N] uint8 bit patterns, scales [K / group, N] float32, zeros
    [K / group, N] float32 or None), group None: one group a column."""
    if not isinstance(weight, torch.Tensor) or weight.ndim != 2:
        raise TypeError("weight: expected a 2-D torch tensor [out_features, in_features]")
    bits = _ops._bits(wtype)
    if wtype[0] not in "ui":
        raise ValueError(f"wtype {wtype!r}: round-to-nearest quantisation takes uB or iB "
                         "(small floats come through tl.formats)")
    N, K = weight.shape
    g = K if group is None else group
    if g <= 0 or K % g:
        raise ValueError(f"group {group!r}: must divide in_features = {K}")
    w = weight.detach().to(torch.float32).t().reshape(K // g, g, N)
    if wtype[0] == "u":
        lo, hi = w.amin(dim=1), w.amax(dim=1)
        scale = (hi - lo) / ((1 << bits) - 1)
        scale = torch.where(scale > 0, scale, torch.ones_like(scale))
        zero = torch.round(-lo / scale).clamp(0, (1 << bits) - 1)
        q = torch.round(w / scale[:, None]) + zero[:, None]
        q = q.clamp(0, (1 << bits) - 1)
    else:
        qmax = (1 << (bits - 1)) - 1
        scale = w.abs().amax(dim=1) / qmax
        scale = torch.where(scale > 0, scale, torch.ones_like(scale))
        zero = None
        q = torch.round(w / scale[:, None]).clamp(-qmax - 1, qmax)
        q = torch.remainder(q, 1 << bits)      # two's complement bit patterns
    codes = q.reshape(K, N).to(torch.uint8)
    return codes, scale, zero


def rtn_dequantize(weight, wtype="u4", group=128):
    """The weights [N, K] that QuantLinear.from_linear(weight's layer)
    multiplies by, in float32: rtn_quantize's (value(code) - zero) *
    scale with the scales and zero points rounded to weight's dtype (f16
    or bf16) as the layer stores them. weight - rtn_dequantize(weight) is
    the quantisation's error alone, apart from the kernels'."""
    codes, scale, zero = rtn_quantize(weight, wtype, group)
    dt = weight.dtype if weight.dtype in _AT else torch.float16
    bits = _ops._bits(wtype)
    v = codes.to(torch.float32)
    if wtype[0] == "i":
        v = torch.where(v >= 1 << (bits - 1), v - (1 << bits), v)
    K = codes.shape[0]
    g = K if group is None else group
    s = scale.to(dt).to(torch.float32).repeat_interleave(g, dim=0)
    z = 0 if zero is None else zero.to(dt).to(torch.float32).repeat_interleave(g, dim=0)
    return ((v - z) * s).t().contiguous()


class QuantLinear(torch.nn.Module):
    """y = x W^T + bias with W packed for tl.ops.quant_matmul: in_features
    K, out_features N (K a multiple of the group, N of 64). Buffers:
    qweight (the packed codes), scales (scales and zero points), perm (the
    order of k, act-order layers only); bias a parameter or None."""

    def __init__(self, in_features, out_features, bias=True, wtype="u4", group=128, zp=None,
                 dtype=torch.float16, device=None):
        super().__init__()
        if dtype not in _AT:
            raise ValueError(f"dtype {dtype}: expected torch.float16 or torch.bfloat16")
        bits = _ops._bits(wtype)
        zp = int(wtype[0] == "u") if zp is None else int(bool(zp))
        g = 128 if group is None else group
        if g not in (32, 64, 128, 256):
            raise ValueError(f"group {group!r}: expected 32, 64, 128, 256 or None (per column)")
        if in_features % g or out_features % _ops._BN:
            raise ValueError(f"in_features {in_features} must be a multiple of {g} and "
                             f"out_features {out_features} of {_ops._BN}")
        self.in_features, self.out_features = in_features, out_features
        self.wtype, self.group, self.zp, self.at = wtype, group, zp, _AT[dtype]
        ch = g * _ops._BN * bits // 4096
        groups = 1 if group is None else in_features // g
        self.register_buffer("qweight", torch.zeros(out_features // _ops._BN, in_features // g, ch, 32, 16,
                                                    dtype=torch.uint8, device=device))
        self.register_buffer("scales", torch.zeros(groups, 1 + zp, out_features, dtype=dtype, device=device))
        self.register_buffer("perm", None)
        self.bias = torch.nn.Parameter(torch.zeros(out_features, dtype=dtype, device=device),
                                       requires_grad=False) if bias else None

    def _load_from_state_dict(self, state_dict, prefix, *args, **kw):
        key = prefix + "perm"
        if key in state_dict and self.perm is None:   # an act-order layer's order of k
            self.perm = torch.empty_like(state_dict[key], device=self.qweight.device)
        super()._load_from_state_dict(state_dict, prefix, *args, **kw)

    def extra_repr(self):
        g = "per column" if self.group is None else f"group={self.group}"
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"wtype={self.wtype}, {g}, zp={self.zp}, bias={self.bias is not None}"
                f"{', act-order' if self.perm is not None else ''}")

    def packed(self):
        """The layer's weights as tl.ops.PackedWeights (views, no copy)."""
        g = 128 if self.group is None else self.group
        p = _ops.PackedWeights(self.qweight, self.scales, self.in_features, self.out_features,
                               self.wtype, g, self.zp, self.group is None, self.at)
        p.perm = self.perm
        return p

    def set_packed(self, p, bias=None):
        """Takes tl.ops.PackedWeights (from pack_weights, tl.formats or
        load_packed) of this layer's shape and type, and a bias [N]."""
        g = 128 if self.group is None else self.group
        if (p.K, p.N, p.wtype, p.group, p.zp, bool(p.per_column), p.at) != \
                (self.in_features, self.out_features, self.wtype, g, self.zp, self.group is None, self.at):
            raise ValueError(f"packed weights {p!r} do not match {self.extra_repr()}")
        with torch.no_grad():
            self.qweight.copy_(torch.as_tensor(p.b))
            self.scales.copy_(torch.as_tensor(p.s).reshape(self.scales.shape))
            perm = getattr(p, "perm", None)
            self.perm = None if perm is None else torch.as_tensor(perm, device=self.qweight.device).to(torch.int64)
            if bias is not None:
                if self.bias is None:
                    raise ValueError("bias: this layer was made without one")
                self.bias.copy_(bias)
        return self

    @classmethod
    def from_linear(cls, linear, wtype="u4", group=128):
        """The round-to-nearest quantisation of nn.Linear `linear` (on a
        CUDA device, in f16 or bf16), packed on its device."""
        if not isinstance(linear, torch.nn.Linear):
            raise TypeError(f"linear: expected torch.nn.Linear, got {type(linear).__name__}")
        w = linear.weight
        dtype = w.dtype if w.dtype in _AT else torch.float16
        codes, scale, zero = rtn_quantize(w, wtype, group)
        q = cls(linear.in_features, linear.out_features, linear.bias is not None, wtype, group,
                zp=zero is not None, dtype=dtype, device=w.device)
        p = _ops.pack_weights(codes, scale.to(dtype), None if zero is None else zero.to(dtype),
                              wtype=wtype, group=group, at=_AT[dtype])
        return q.set_packed(p, None if linear.bias is None else linear.bias.detach().to(dtype))

    @classmethod
    def from_packed(cls, p, bias=None):
        """A layer over tl.ops.PackedWeights `p` (on a CUDA device)."""
        dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[p.at]
        dev = p.b.device if isinstance(p.b, torch.Tensor) else None
        q = cls(p.K, p.N, bias is not None, p.wtype, None if p.per_column else p.group, zp=p.zp,
                dtype=dtype, device=dev)
        return q.set_packed(p, bias)

    def forward(self, x):
        if x.shape[-1] != self.in_features:
            raise ValueError(f"x: expected [..., {self.in_features}], got shape {list(x.shape)}")
        if _AT.get(x.dtype) != self.at:
            raise TypeError(f"x: expected {self.scales.dtype}, got {x.dtype}")
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features)
        if self.perm is not None:
            x2 = x2.index_select(1, self.perm)
        g = 128 if self.group is None else self.group
        y = torch.ops.tl.quant_matmul(x2.contiguous(), self.qweight, self.scales, self.in_features,
                                      self.out_features, self.wtype, g, self.zp, self.group is None,
                                      self.at)
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(*lead, self.out_features)


def quantize(model, wtype="u4", group=128, skip=("lm_head",), weights=None, biases=None, log=None):
    """Replaces model's nn.Linear layers by QuantLinear in place and returns
    the model: round-to-nearest from their weights, or for the names in
    `weights` ({module name: tl.formats.Imported or tl.ops.PackedWeights})
    from those, with the biases in `biases` ({module name: tensor}, as
    tl.formats.from_state_dict returns them; else the layer's own).
    Layers whose name or last name part is in `skip`, and
    those whose shape the kernels do not take (out_features not a multiple
    of 64, in_features not of the group), stay as they are. log: a
    function taking one line of progress (e.g. print)."""
    from .formats import Imported
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    weights, biases = dict(weights or {}), dict(biases or {})
    g = 128 if group is None else group
    todo = []
    for name, mod in model.named_modules():
        for child, sub in mod.named_children():
            full = f"{name}.{child}" if name else child
            if not isinstance(sub, torch.nn.Linear):
                continue
            if full in skip or child in skip:
                continue
            if full not in weights and (sub.out_features % _ops._BN or sub.in_features % g):
                if log:
                    log(f"tl.nn.quantize: {full} [{sub.out_features}, {sub.in_features}] kept (shape)")
                continue
            todo.append((mod, child, full, sub))
    for i, (mod, child, full, sub) in enumerate(todo):
        bias = None if sub.bias is None else sub.bias.detach()
        if full in biases:
            bias = torch.as_tensor(biases[full], device=sub.weight.device)
        if full in weights:
            w = weights.pop(full)
            p = w.pack() if isinstance(w, Imported) else w
            q = QuantLinear.from_packed(p, bias)
        else:
            q = QuantLinear.from_linear(sub, wtype, group)
        setattr(mod, child, q)
        if log and (i + 1 == len(todo) or (i + 1) % 16 == 0):
            log(f"tl.nn.quantize: {i + 1} of {len(todo)} linear layers")
    if weights:
        raise ValueError(f"weights: no nn.Linear named {sorted(weights)[0]!r} in the model")
    return model
