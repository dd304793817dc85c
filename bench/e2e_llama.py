"""A Llama-architecture model from a transformers config (random weights:
nothing is downloaded), decoded greedily in f16 and again with TL's
quantised linears (tl.nn.quantize), with the tokens a second of each and
the agreement of their logits on the same tokens.

    python3 bench/e2e_llama.py [--size 8b|1b|tiny] [--tokens N] [--prompt L]
        [--batch B] [--wtype u4] [--group 128] [--cache static|dynamic] [--kv u4|u8|u2|f16|none]

--size 8b is Llama-3-8B's shapes (on a GPU), tiny a two-layer model
that runs on the CPU VM (slowly: every matmul is interpreted). --cache
static is transformers' static cache, under which generate compiles the
model's forward with torch.compile and replays it through CUDA graphs (on
both sides); dynamic runs eagerly. --kv: a third run, TL's linears with
TL's low-bit KV cache (tl.hf.QuantizedKVCache and the attention "tl"),
generated (on a GPU generate compiles its decode step, as with the static
cache) and its decode step also timed in a CUDA graph (the cache's
lengths live on the device).
One progress line a stage: build,
reference, quantise (RTN, round to nearest, from the f16 weights), compile
(TL's first call of each instance), generate, compare."""

import argparse
import copy
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

SIZES = {
    "8b": dict(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
               num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=8192,
               rope_theta=500000.0),
    "1b": dict(vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
               num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=8192,
               rope_theta=500000.0),
    "tiny": dict(vocab_size=512, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512),
}


def stage(t0, what):
    print(f"[{time.perf_counter() - t0:7.1f} s] {what}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", choices=sorted(SIZES), default="8b")
    ap.add_argument("--tokens", type=int, default=64, help="tokens to generate (default 64)")
    ap.add_argument("--prompt", type=int, default=512, help="prompt length (default 512)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--wtype", default="u4")
    ap.add_argument("--group", type=int, default=128)
    ap.add_argument("--cache", choices=("static", "dynamic"), default="static")
    ap.add_argument("--kv", choices=("u4", "u8", "u2", "f16", "none"), default="u4")
    ap.add_argument("--graph", choices=("compiled", "eager"), default="compiled",
                    help="the decode step captured in a CUDA graph: torch.compile's forward (default) or the eager one")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if a.tokens < 2 or a.prompt < 1 or a.batch < 1:
        ap.error("--tokens must be at least 2, --prompt and --batch at least 1")
    import torch
    import transformers
    import tl.nn
    t0 = time.perf_counter()
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    if dev == "cpu" and a.size != "tiny":
        ap.error(f"--size {a.size} needs a CUDA device (the CPU VM takes --size tiny)")
    if dev == "cpu" and a.kv != "none":
        print(f"note: --kv {a.kv} needs a CUDA device (TL's KV cache on torch tensors); running --kv none")
        a.kv = "none"
    torch.manual_seed(a.seed)
    cfg = transformers.LlamaConfig(**SIZES[a.size], torch_dtype=torch.float16)
    with torch.device(dev):
        ref = transformers.LlamaForCausalLM(cfg).to(torch.float16).eval()
    n_params = sum(p.numel() for p in ref.parameters())
    stage(t0, f"build: {a.size} ({n_params / 1e9:.2f} G parameters, f16) on {dev}, "
              f"transformers {transformers.__version__}, torch {torch.__version__}")
    ids = torch.randint(0, cfg.vocab_size, (a.batch, a.prompt), device=dev)
    gen = dict(max_new_tokens=a.tokens, do_sample=False, min_new_tokens=a.tokens,
               pad_token_id=0, cache_implementation=a.cache if dev == "cuda" else "dynamic")
    if gen["cache_implementation"] == "static":
        # One cache size for every call, so that the forward compiles (and
        # its CUDA graphs record) once, in the warm-up.
        gen["max_cache_len"] = a.prompt + a.tokens

    def decode(model, label, kv=None):
        """Greedy tokens and the decode rate: generate of one token (the
        prefill) and of N, the difference over N - 1 tokens. kv: TL's KV
        cache of that type instead of transformers' cache."""
        how = dict(gen)
        if kv:
            how.pop("cache_implementation")
            how.pop("max_cache_len", None)
        # One TL cache for every call, reset before each (its buffers keep
        # their addresses, so the compiled decode step records its CUDA
        # graphs once, in the warm-up).
        cache = tl.hf.QuantizedKVCache(a.prompt + a.tokens, kt=kv) if kv else None

        def run(n):
            extra = {}
            if kv:
                cache.reset()
                extra = dict(past_key_values=cache)
            return model.generate(ids, **dict(how, max_new_tokens=n, min_new_tokens=n), **extra)
        with torch.no_grad():
            run(2)   # warm-up, compile
            sync()
            t = time.perf_counter()
            run(1)
            sync()
            t1 = time.perf_counter() - t
            t = time.perf_counter()
            out = run(a.tokens)
            sync()
            tn = time.perf_counter() - t
        rate = a.batch * (a.tokens - 1) / max(tn - t1, 1e-9)
        stage(t0, f"generate ({label}): {a.tokens} tokens x {a.batch}, prefill {t1 * 1e3:.1f} ms, "
                  f"decode {rate:.1f} tokens/s ({(tn - t1) / (a.tokens - 1) * 1e3:.2f} ms a step)")
        return out, rate

    def sync():
        if dev == "cuda":
            torch.cuda.synchronize()

    def graph_step(model, label, reps=50, kv=None):
        """One decode step (batch x 1 token at position `prompt`, over a
        static cache holding the prompt) captured in a CUDA graph and
        replayed: the GPU's time a token, without generate's host work
        (--graph compiled: the step's forward compiled by torch.compile
        first, TL's linears inside it as the custom op). kv: over TL's KV
        cache of that type instead (its attention and appends are custom
        ops too; each replay appends its token at the lengths the cache
        keeps on the device)."""
        if dev != "cuda":
            return None
        from transformers.cache_utils import StaticCache
        # (room for the warm-up's, the capture's and every replay's token:
        # both caches count their tokens on the device, so each replay
        # appends one at the next position)
        if kv:
            cache = tl.hf.QuantizedKVCache(a.prompt + reps + 8, kt=kv)
        else:
            cache = StaticCache(config=model.config, max_cache_len=a.prompt + reps + 8)
        tok = ids[:, -1:].clone()
        fwd = torch.compile(model, dynamic=False) if a.graph == "compiled" else model
        with torch.no_grad():
            model(ids, past_key_values=cache)
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    fwd(tok, past_key_values=cache)
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                fwd(tok, past_key_values=cache)
            g.replay()
            sync()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(reps):
                g.replay()
            e1.record()
            sync()
        ms = e0.elapsed_time(e1) / reps
        stage(t0, f"graph step ({label}, {a.graph}): {ms:.3f} ms a decode step in one CUDA graph "
                  f"({a.batch / ms * 1e3:.1f} tokens/s)")
        return ms

    def graph_step_or_none(model, label):
        try:
            return graph_step(model, label)
        except Exception as e:  # a model whose step cannot be captured: say so, go on
            stage(t0, f"graph step ({label}): not captured: {type(e).__name__}: {str(e).splitlines()[0]}")
            return None

    out_ref, rate_ref = decode(ref, "f16")
    g_ref = graph_step_or_none(ref, "f16")
    qm = copy.deepcopy(ref)
    # generate keeps its compiled forward on the model (a torch.compile of
    # the bound __call__): the copy's would run the f16 model's forward.
    for name in ("_compiled_call", "_last_compile_config"):
        qm.__dict__.pop(name, None)
    stage(t0, "reference model copied")
    tl.nn.quantize(qm, wtype=a.wtype, group=a.group, skip=("lm_head",), log=lambda s: stage(t0, s))
    nq = sum(isinstance(m, tl.nn.QuantLinear) for m in qm.modules())
    stage(t0, f"quantise: {nq} linear layers to {a.wtype} g{a.group} (round to nearest)")
    with torch.no_grad():
        qm(ids[:, :8])
        qm(ids[:, :1])
    sync()
    stage(t0, "compile: TL's kernels for the prefill and decode shapes")
    out_q, rate_q = decode(qm, f"TL {a.wtype}")
    g_q = graph_step_or_none(qm, f"TL {a.wtype}")
    rate_kv = g_kv = None
    if a.kv != "none":
        import tl.hf
        tl.hf.use_tl_attention(qm)
        out_kv, rate_kv = decode(qm, f"TL {a.wtype} + TL {a.kv} KV cache", kv=a.kv)
        try:
            g_kv = graph_step(qm, f"TL {a.wtype} + TL {a.kv} KV cache", kv=a.kv)
        except Exception as e:  # say so, go on
            stage(t0, f"graph step (TL KV): not captured: {type(e).__name__}: {str(e).splitlines()[0]}")
        same_kv = (out_kv[:, a.prompt:] == out_q[:, a.prompt:]).float().mean().item()
        stage(t0, f"compare: greedy tokens with TL's {a.kv} KV cache equal to those with transformers' "
                  f"f16 cache: {same_kv * 100:.1f} %")
        qm.config._attn_implementation = "sdpa"
    # The logits of both models on the same tokens (the f16 model's own
    # greedy continuation): relative error and top-1 agreement; and those
    # of the f16 model with the quantised weights dequantised (the
    # quantisation's error alone: TL against it is the kernels' error).
    with torch.no_grad():
        lr = ref(out_ref).logits.float()
        lq = qm(out_ref).logits.float()
        for mod in ref.modules():
            for child, sub in mod.named_children():
                if isinstance(sub, torch.nn.Linear) and child != "lm_head":
                    sub.weight.copy_(tl.nn.rtn_dequantize(sub.weight, a.wtype, a.group).to(sub.weight.dtype))
        ld = ref(out_ref).logits.float()
    gen_pos = slice(a.prompt - 1, out_ref.shape[1] - 1)

    def rel_err(x, y):
        return ((x - y).norm() / y.norm()).item()

    def top1(x, y):
        return (x[:, gen_pos].argmax(-1) == y[:, gen_pos].argmax(-1)).float().mean().item()
    rel, agree = rel_err(lq, lr), top1(lq, lr)
    same = (out_q[:, a.prompt:] == out_ref[:, a.prompt:]).float().mean().item()
    stage(t0, f"compare: logits relative error {rel:.4f}, top-1 agreement {agree * 100:.1f} % on the f16 "
              f"model's tokens, greedy tokens equal {same * 100:.1f} %")
    stage(t0, f"compare: the f16 model over the dequantised weights against f16: relative error "
              f"{rel_err(ld, lr):.4f}, top-1 {top1(ld, lr) * 100:.1f} %; TL against it (the kernels' "
              f"error): {rel_err(lq, ld):.5f}, top-1 {top1(lq, ld) * 100:.1f} %")
    print(f"summary: size={a.size} batch={a.batch} prompt={a.prompt} tokens={a.tokens} cache={gen['cache_implementation']} "
          f"f16 {rate_ref:.1f} tok/s, TL {a.wtype} g{a.group} {rate_q:.1f} tok/s ({rate_q / rate_ref:.2f}x), "
          f"rel {rel:.4f}, top-1 {agree * 100:.1f} %, kernels' rel {rel_err(lq, ld):.5f}"
          + (f"; with TL's {a.kv} KV cache {rate_kv:.1f} tok/s" if rate_kv else "")
          + (f"; one decode step in a CUDA graph: f16 {g_ref:.3f} ms, TL {g_q:.3f} ms ({g_ref / g_q:.2f}x)"
             if g_ref and g_q else "")
          + (f", TL + TL {a.kv} KV {g_kv:.3f} ms ({g_ref / g_kv:.2f}x)" if g_ref and g_kv else ""),
          flush=True)


if __name__ == "__main__":
    main()
