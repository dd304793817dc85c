"""TL's low-bit KV cache behind transformers' Cache interface (needs torch
and transformers 5).

    import tl.hf
    tl.hf.use_tl_attention(model)                    # once: attention "tl"
    cache = tl.hf.QuantizedKVCache(capacity=4096, kt="u4")
    out = model.generate(ids, past_key_values=cache, max_new_tokens=64)

Each layer's keys and values go into a tl.ops.KVPages pool of one page of
`capacity` tokens a sequence (kernels/kv_quant.tl quantises the new tokens
per token to kt: u8, u4, u2, or f16 as they are) as the model's attention
hands them to the cache, at the sequences' lengths, which the layer keeps
on the device. The attention "tl" (registered with transformers'
AttentionInterface) then computes a decode step (one new token a
sequence) by tl.ops.decode_attention over the quantised cache, reading
the lengths on the device: nothing in a decode step depends on the host,
so a step can be captured in a CUDA graph and replayed (each replay
appends its token). The appends and the attention are the torch custom
ops tl::kv_append and tl::decode_attention (tl.nn), so torch.compile
traces a decode step whole (fullgraph) and the cache is compileable, as
transformers' static cache is: on a GPU, generate compiles its decode
step and replays it through CUDA graphs. reset() keeps the buffers (and
their addresses, which the compiled step's graphs hold) and zeroes the
lengths, so one cache serves generate after generate. A prefill into an
empty cache runs PyTorch's SDPA over the prompt's own f16 keys and values
(causal), so that the prompt is quantised once and never read back. Up to 8 tokens after the cache's
(speculative decoding's drafts; at most 16 query rows a KV head) attend
the cache causally among themselves, by the same kernel. Attention
without this cache (a plain forward) falls back to SDPA. What it does not
take: a longer prefill into a cache that already holds tokens (chunked
prefill), padded batches (an attention mask with masked tokens), beam
search, and more tokens than `capacity`; each is refused with a message
in eager calls. A compiled or captured step reads nothing back, so it
checks neither the padding nor the capacity: its tokens past the capacity
are not written (the kernels never write or read outside the pool) and
attention reads the capacity's tokens."""

import torch
from torch.nn import functional as F
from transformers.cache_utils import Cache, CacheLayerMixin
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask
from transformers.modeling_utils import AttentionInterface

from . import nn as _nn
from . import ops as _ops

__all__ = ["QuantizedKVCache", "use_tl_attention"]

_active = [None]   # the QuantizedKVCache whose update ran last
_unpadded = [None]  # the last attention mask found to mask nothing


class _Layer(CacheLayerMixin):
    is_compileable = True
    is_sliding = False

    def __init__(self, capacity, kt):
        super().__init__()
        self.capacity, self.kt = capacity, kt
        self.pool, self.length, self.filled, self.before, self.pending = None, 0, False, False, False

    def lazy_initialization(self, key_states, value_states):
        b, h, _, d = key_states.shape
        dev = key_states.device
        page = -(-self.capacity // 128) * 128
        self.pool = _ops.kv_pages(b, h, d, page_size=page, kt=self.kt, device=dev)
        self.table = torch.arange(b, dtype=torch.int32, device=dev).reshape(b, 1)
        self.lens = torch.zeros(b, dtype=torch.int32, device=dev)
        # the tokens seen, as transformers' static layers keep it: a device
        # scalar, from which the model makes the positions on the device
        self.seen = torch.zeros((), dtype=torch.int64, device=dev)
        self.splits, *self.work = _nn.kv_workspace(self.pool, b, self.capacity, dev)
        self.dtype, self.device = key_states.dtype, dev
        if not torch.compiler.is_compiling():
            # fixed addresses: a compiled step's CUDA graphs write them in place
            p = self.pool
            for t in (p.kc, p.vc, p.ks, p.vs, self.table, self.lens, self.seen, *self.work):
                torch._dynamo.mark_static_address(t)
        self.is_initialized = True

    def update(self, key_states, value_states, *args, **kwargs):
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        t = int(key_states.shape[2])
        if not torch.compiler.is_compiling():
            # The tokens appended by eager calls, on the host (a compiled or
            # captured step counts on the device only): the capacity checked,
            # the padding check's extent.
            if self.length + t > self.capacity:
                raise ValueError(f"QuantizedKVCache: {self.length} + {t} tokens exceed its "
                                 f"capacity {self.capacity}")
            self.length += t
        self.before, self.filled = self.filled, True
        p = self.pool
        torch.ops.tl.kv_append(key_states.contiguous(), value_states.contiguous(), p.kc, p.vc,
                               p.ks, p.vs, self.table, self.lens, p.page_size, p.kt)
        self.lens.add_(t)   # on the device: a replayed graph appends at the next position
        self.seen.add_(t)
        self.pending = True  # the attention of this layer reads the cache next
        return key_states, value_states

    def attend(self, query, scaling):
        """torch.ops.tl.decode_attention over the layer's pool: query f16
        [B, Hq, D] or [B, Hq, q, D]"""
        p = self.pool
        scale = float(query.shape[-1] ** -0.5 if scaling is None else scaling)
        return torch.ops.tl.decode_attention(query, p.kc, p.vc, p.ks, p.vs, self.table, self.lens,
                                             *self.work, p.page_size, p.kt, scale, self.capacity,
                                             self.splits)

    def get_seq_length(self):
        return self.seen if self.is_initialized else 0

    def get_mask_sizes(self, query_length):
        # the whole capacity, as transformers' static layers: one mask shape
        # for every step (the kernel reads the lengths, not the mask)
        return self.capacity, 0

    def get_max_length(self):
        return self.capacity

    def reset(self):
        # the pool and its addresses kept (a compiled step's graphs hold
        # them), the lengths zero: nothing of the old tokens is read again
        if self.is_initialized:
            self.lens.zero_()
            self.seen.zero_()
        self.length, self.filled, self.before, self.pending = 0, False, False, False

    def reorder_cache(self, beam_idx):
        raise NotImplementedError("QuantizedKVCache: beam search (reordering the cache) is not supported")


class QuantizedKVCache(Cache):
    """A transformers Cache whose layers are tl.ops.KVPages pools of `kt`
    codes (u8, u4, u2, f16) for up to `capacity` tokens a sequence, their
    lengths on the device; use with the attention "tl"
    (use_tl_attention)."""

    def __init__(self, capacity, kt="u4"):
        capacity = int(capacity)
        if capacity < 1:
            raise ValueError(f"capacity: expected at least 1 token, got {capacity}")
        if kt not in _ops._KV_BITS:
            raise ValueError(f"kt {kt!r}: expected one of {', '.join(_ops._KV_BITS)}")
        self.capacity, self.kt = capacity, kt
        super().__init__(layer_class_to_replicate=lambda: _Layer(capacity, kt))

    @property
    def is_compileable(self):
        # every layer is, from the first call on (transformers' Cache says no
        # while its lazily made layers do not exist yet, and generate then
        # runs eagerly once and compiles on its next call)
        return True

    def update(self, key_states, value_states, layer_idx, *args, **kwargs):
        _active[0] = self
        return super().update(key_states, value_states, layer_idx, *args, **kwargs)

    def __repr__(self):
        return f"QuantizedKVCache(capacity={self.capacity}, kt={self.kt}, layers={len(self.layers)})"


def _sdpa(query, key, value, attention_mask, scaling, causal):
    o = F.scaled_dot_product_attention(query, key, value, attn_mask=attention_mask,
                                       is_causal=causal and attention_mask is None, scale=scaling,
                                       enable_gqa=query.shape[1] != key.shape[1])
    return o.transpose(1, 2).contiguous()


def _tl_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """The attention "tl": query [B, Hq, q, D], key and value [B, Hkv, kv,
    D] as the cache returned them; the output [B, q, Hq, D]."""
    c = _active[0]
    layer = None
    if c is not None and module.layer_idx < len(c.layers) and c.layers[module.layer_idx].pending:
        layer = c.layers[module.layer_idx]
        layer.pending = False
    if layer is None:     # no TL cache in this forward
        return _sdpa(query, key, value, attention_mask, scaling, query.shape[2] > 1), None
    # Padding: the last query must see every token the cache holds. Checked
    # in eager calls (the model hands every layer of a forward the same
    # mask: it is read back once a forward); a compiled or captured step
    # reads nothing back.
    if not torch.compiler.is_compiling() and attention_mask is not None and \
            attention_mask.dtype == torch.bool and attention_mask is not _unpadded[0] and \
            not (query.is_cuda and torch.cuda.is_current_stream_capturing()):
        if not bool(attention_mask[..., -1, :layer.length].all()):
            raise NotImplementedError("QuantizedKVCache: padded batches (masked tokens) are not "
                                      "supported")
        _unpadded[0] = attention_mask
    q = int(query.shape[2])
    if q == 1:
        return layer.attend(query[:, :, 0, :].contiguous(), scaling).unsqueeze(1), None
    if layer.before:
        if q <= 8 and q * (query.shape[1] // key.shape[1]) <= 16:
            # a few tokens after the cache's (speculative decoding's drafts):
            # causal among them, over the cache they were appended to
            return layer.attend(query.contiguous(), scaling).transpose(1, 2).contiguous(), None
        raise NotImplementedError(f"QuantizedKVCache: {q} tokens into a cache that holds "
                                  f"tokens (a prefill in chunks, or more than 8 tokens or 16 "
                                  f"query rows a KV head) is not supported")
    return _sdpa(query, key, value, None, scaling, True), None


def use_tl_attention(model):
    """Registers the attention "tl" and sets `model` to use it (its
    config's attention implementation); returns the model."""
    AttentionInterface.register("tl", _tl_attention)
    # SDPA's masks for "tl": a forward with padding hands the attention a
    # boolean mask, which the eager check refuses (without a mask function
    # transformers hands an unknown attention no mask at all)
    AttentionMaskInterface.register("tl", sdpa_mask)
    model.config._attn_implementation = "tl"
    for m in model.modules():
        cfg = getattr(m, "config", None)
        if cfg is not None and cfg is not model.config and hasattr(cfg, "_attn_implementation"):
            cfg._attn_implementation = "tl"
    return model
