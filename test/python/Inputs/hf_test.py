"""tl.hf with torch and transformers: TL's KV cache (QuantizedKVCache,
the attention "tl") in a small Llama against the f16 model over the whole
sequence: a prefill and a decode step for f16, u8 and u4 codes, padded
batches refused, generate's greedy tokens (its decode step compiled from
the first call), three draft tokens after the cache, three decode steps compiled by
torch.compile(fullgraph=True) (TL's appends and attention are torch
custom ops) against the eager steps, the cache reset and decoding again
without a new graph, and on a GPU a decode step captured in a CUDA graph
and replayed. On the CPU the kernels run on the VM; `hf_test.py cuda`
runs the same on a GPU.

    hf_test.py [cpu|cuda]"""
import copy
import sys
import torch
import transformers
import tl
import tl.hf

dev = sys.argv[1] if len(sys.argv) > 1 else "cpu"
torch.manual_seed(5)

# TL's KV cache behind transformers' Cache: a prefill (SDPA over the
# prompt) and a decode step (tl.ops.decode_attention over the cache)
# against the f16 model over the whole sequence.
cfg = transformers.LlamaConfig(vocab_size=256, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                               num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
with torch.device(dev):
    ref = transformers.LlamaForCausalLM(cfg).to(torch.float16).eval()
m2 = tl.hf.use_tl_attention(copy.deepcopy(ref))
ids = torch.randint(0, 256, (2, 12), device=dev)
for kt, bound in (("f16", 2e-3), ("u8", 3e-2), ("u4", 0.2)):
    cache = tl.hf.QuantizedKVCache(32, kt=kt)
    with torch.no_grad():
        l1 = m2(ids, past_key_values=cache).logits
        nxt = l1[:, -1:].argmax(-1)
        l2 = m2(nxt, past_key_values=cache).logits[:, -1].float()
        lr = ref(torch.cat([ids, nxt], 1)).logits[:, -1].float()
    rel = ((l2 - lr).norm() / lr.norm()).item()
    assert cache.get_seq_length() == 13 and rel < bound, (kt, rel, cache.get_seq_length())
    print(f"QuantizedKVCache {kt}: prefill and a decode step, logits within {rel:.4f} of f16")
# A padded batch (the first sequence's first three tokens masked) is
# refused, at its prefill and at a decode step after an unpadded one;
# generate (greedy, its own attention mask) over TL's f16 cache gives the
# f16 model's tokens.
pad = torch.ones(2, 12, dtype=torch.long, device=dev)
pad[0, :3] = 0
for steps in ((pad,), (torch.ones_like(pad), torch.cat([pad, torch.ones(2, 1, dtype=torch.long, device=dev)], 1))):
    cache = tl.hf.QuantizedKVCache(32, kt="u8")
    try:
        with torch.no_grad():
            for i, mask in enumerate(steps):
                m2(ids if i == 0 else ids[:, :1], attention_mask=mask, past_key_values=cache)
        raise AssertionError("a padded batch was not refused")
    except NotImplementedError as e:
        assert "padded batches" in str(e), e
print(f"QuantizedKVCache: padded batches refused at the prefill and at a decode step")
# generate compiles its decode step from its first call with a fresh
# cache (CUDA: its own default, inductor and CUDA graphs; CPU: aot_eager,
# which transformers is told to compile for).
from torch._dynamo.utils import counters
torch._dynamo.reset()
counters.clear()
cc = transformers.CompileConfig(fullgraph=True)
if dev == "cpu":
    cc = transformers.CompileConfig(fullgraph=True, backend="aot_eager", mode=None)
    cc._compile_all_devices = True
with torch.no_grad():
    one = torch.ones_like(ids)
    gr = ref.generate(ids, attention_mask=one, max_new_tokens=4, do_sample=False,
                      min_new_tokens=4, pad_token_id=0)
    gt = m2.generate(ids, attention_mask=one, max_new_tokens=4, do_sample=False,
                     min_new_tokens=4, pad_token_id=0, compile_config=cc,
                     past_key_values=tl.hf.QuantizedKVCache(32, kt="f16"))
same = (gr == gt).float().mean().item()
frames = counters["stats"]["unique_graphs"]
# (on a GPU inductor's fused elementwise ops round differently from the
# eager f16 model's: a token may flip)
assert gt.shape == (2, 16) and frames >= 1 and same >= (1.0 if dev == "cpu" else 0.75), \
    (gt.shape, frames, same)
for name in ("_compiled_call", "_last_compile_config"):   # the later tests compile their own
    m2.__dict__.pop(name, None)
print(f"QuantizedKVCache f16: generate compiled its first call's decode step, greedy tokens "
      f"{same:.0%} the f16 model's ({gt.shape[1] - 12} a sequence)")
# Three tokens after the cache's (speculative decoding's drafts):
# causal among them, against the f16 model over the whole sequence.
cache = tl.hf.QuantizedKVCache(32, kt="f16")
drafts = torch.randint(0, 256, (2, 3), device=dev)
with torch.no_grad():
    m2(ids, past_key_values=cache)
    l3 = m2(drafts, past_key_values=cache).logits[:, -3:].float()
    lr3 = ref(torch.cat([ids, drafts], 1)).logits[:, -3:].float()
rel = ((l3 - lr3).norm() / lr3.norm()).item()
assert cache.get_seq_length() == 15 and rel < 2e-3, (rel, cache.get_seq_length())
print(f"QuantizedKVCache f16: 3 draft tokens after the cache, logits within {rel:.4f} of f16")
# Three decode steps of the model compiled by torch.compile
# (fullgraph: TL's appends and attention are custom ops, the cache's
# state on the device) against the same steps run eagerly on a
# second cache; then a reset cache (its buffers kept) decoding
# again without a recompilation.
steps = torch.randint(0, 256, (3, 2, 1), device=dev)
eager = tl.hf.QuantizedKVCache(32, kt="u8")
comp = tl.hf.QuantizedKVCache(32, kt="u8")
torch._dynamo.reset()
from torch._dynamo.utils import counters
counters.clear()
cm = torch.compile(m2, fullgraph=True, backend="aot_eager" if dev == "cpu" else "inductor")
with torch.no_grad():
    m2(ids, past_key_values=eager)
    le = [m2(steps[i], past_key_values=eager).logits[:, -1].float() for i in range(3)]
    lcs = []
    for _ in range(2):
        comp.reset()
        m2(ids, past_key_values=comp)
        lcs.append([cm(steps[i], past_key_values=comp).logits[:, -1].float() for i in range(3)])
lens = comp.layers[0].lens.tolist()
diff = max(((a - b).norm() / b.norm()).item() for lc in lcs for a, b in zip(lc, le))
frames = counters["stats"]["unique_graphs"]
# (on the CPU aot_eager runs the same ops: equal; on a GPU inductor fuses
# the model's elementwise ops, which round differently)
bound = 0.0 if dev == "cpu" else 1e-2
assert lens == [15, 15] and diff <= bound and frames == 1, (lens, diff, frames)
print(f"QuantizedKVCache u8: 3 decode steps compiled (fullgraph, {frames} graph, reset and "
      f"run again): lengths {lens}, logits within {diff:.1e} of the eager steps")
if dev == "cuda":
    # A decode step captured in a CUDA graph and replayed three times
    # (each replay appends its token at the next position: the lengths
    # and the count of tokens seen, from which the model makes the
    # positions, live on the device) against the same three steps run
    # eagerly on a second cache.
    steps = torch.randint(0, 256, (3, 2, 1), device=dev)
    eager = tl.hf.QuantizedKVCache(32, kt="u4")
    with torch.no_grad():
        m2(ids, past_key_values=eager)
        le = [m2(steps[i], past_key_values=eager).logits[:, -1].float() for i in range(3)]
        graphed = tl.hf.QuantizedKVCache(32, kt="u4")
        m2(ids, past_key_values=graphed)
        tok = steps[0].clone()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = m2(tok, past_key_values=graphed).logits
        lg = []
        for i in range(3):
            tok.copy_(steps[i])
            g.replay()
            lg.append(out[:, -1].float().clone())
    torch.cuda.synchronize()
    lens = graphed.layers[0].lens.tolist()
    diff = max(((a - b).norm() / b.norm()).item() for a, b in zip(lg, le))
    assert lens == [15, 15] and diff < 1e-3, (lens, diff)
    print(f"QuantizedKVCache u4: a decode step in a CUDA graph, replayed 3 times: lengths {lens}, "
          f"logits within {diff:.1e} of the eager steps")
print("hf: ok")
