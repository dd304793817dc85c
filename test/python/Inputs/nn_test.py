"""tl.nn with torch: QuantLinear from an nn.Linear by round to nearest
(u4, i4, u2, u8; scales per group and per column) against a float64
product of the dequantised weights (norm-wise bound 2^-10, as
ops_test.py's) and the weights within half a step of the f16 ones; an
act-order layer through its perm; state_dict saved and loaded bit for
bit; torch.compile(fullgraph=True) tracing the custom op without a graph
break; tl.nn.quantize over a small transformers Llama (where transformers
is installed). On the CPU the layers run on the VM; `nn_test.py cuda`
runs them on the GPU.

    nn_test.py [cpu|cuda]"""
import sys
import numpy as np
import torch
import tl
import tl.nn
import tl.formats

dev = sys.argv[1] if len(sys.argv) > 1 else "cpu"
torch.manual_seed(5)


def value(codes, wtype):
    bits = int(wtype[1:])
    v = codes.to(torch.float64)
    if wtype[0] == "i":
        v = torch.where(v >= 1 << (bits - 1), v - (1 << bits), v)
    return v


def check(y, x, w, bias, label):
    """y against x @ w (+ bias) in float64, norm-wise."""
    xd, wd = x.to(torch.float64).cpu(), w.to(torch.float64).cpu()
    r = xd @ wd + (0 if bias is None else bias.to(torch.float64).cpu())
    sc = xd.abs() @ wd.abs() + (0 if bias is None else bias.to(torch.float64).abs().cpu())
    err = ((y.to(torch.float64).cpu() - r).abs() / sc.clamp(min=1e-30)).max().item()
    assert err <= 2 ** -10, (label, err)
    return err


K, N = 256, 128
lin = torch.nn.Linear(K, N, bias=True).to(torch.float16).to(dev)
for wt, group in (("u4", 64), ("i4", 128), ("u2", 64), ("u8", None)):
    q = tl.nn.QuantLinear.from_linear(lin, wtype=wt, group=group)
    codes, scale, zero = tl.nn.rtn_quantize(lin.weight, wt, group)
    g = K if group is None else group
    rep = lambda t: t.to(torch.float64).repeat_interleave(g, dim=0)
    wq = (value(codes, wt) - (0 if zero is None else rep(zero))) * rep(scale)
    step = rep(scale)
    assert ((wq - lin.weight.t().to(torch.float64)).abs() <= step / 2 + 1e-6).all(), wt
    x = torch.randn(3, 5, K, dtype=torch.float16, device=dev)
    y = q(x)
    assert y.shape == (3, 5, N) and y.dtype == torch.float16
    # The layer's product uses the weights rounded to f16 (docs/kernels.md).
    w16 = (value(codes, wt) - (0 if zero is None else rep(zero.to(torch.float16)))) * rep(scale.to(torch.float16))
    assert torch.equal(tl.nn.rtn_dequantize(lin.weight, wt, group).t(), w16.to(torch.float32)), wt
    err = check(y.reshape(15, N), x.reshape(15, K), w16.to(torch.float16), lin.bias.detach(), wt)
    print(f"QuantLinear {wt} group={group} {q.extra_repr()}: ok (weights within half a step; "
          f"norm-wise error {err:.2g})")

# state_dict: a fresh layer of the same description computes the same bits.
sd = q.state_dict()
assert sorted(sd) == ["bias", "qweight", "scales"], sorted(sd)
q2 = tl.nn.QuantLinear(K, N, bias=True, wtype="u8", group=None).to(dev)
q2.load_state_dict(sd)
x = torch.randn(4, K, dtype=torch.float16, device=dev)
assert torch.equal(q(x).view(torch.int16), q2(x).view(torch.int16))
print("state_dict: qweight, scales, bias; loaded bit for bit")

# An act-order layer: the codes in another order of k, the layer's perm.
codes = torch.randint(0, 16, (K, N), device=dev)
scales = (torch.rand(K // 64, N, device=dev) / 16 + 0.01).to(torch.float16)
zeros = torch.randint(0, 16, (K // 64, N), device=dev).to(torch.float16)
perm = torch.randperm(K, device=dev)
imp = tl.formats.Imported(codes, scales, zeros, "u4", 64, perm)
qa = tl.nn.QuantLinear.from_packed(imp.pack(), bias=None)
assert qa.perm is not None and "act-order" in qa.extra_repr()
x = torch.randn(2, K, dtype=torch.float16, device=dev)
err = check(qa(x), x, imp.dequantize().to(torch.float16), None, "act-order")
sd = qa.state_dict()
qb = tl.nn.QuantLinear(K, N, bias=False, wtype="u4", group=64).to(dev)
qb.load_state_dict(sd)
assert torch.equal(qa(x).view(torch.int16), qb(x).view(torch.int16))
print(f"QuantLinear act-order: ok (norm-wise error {err:.2g}); state_dict with perm loaded bit for bit")

# quantize with weights and biases from a checkpoint (tl.formats'
# from_state_dict gives both): the named layer takes them.
seq = torch.nn.Sequential(torch.nn.Linear(K, N), torch.nn.ReLU()).to(torch.float16).to(dev)
tl.nn.quantize(seq, weights={"0": imp}, biases={"0": torch.full((N,), 0.5, dtype=torch.float16)})
assert isinstance(seq[0], tl.nn.QuantLinear) and seq[0].perm is not None
x = torch.randn(3, K, dtype=torch.float16, device=dev)
err = check(seq[0](x), x, imp.dequantize().to(torch.float16), torch.full((N,), 0.5), "checkpoint")
print(f"quantize(weights=, biases=): the checkpoint's layer and bias (norm-wise error {err:.2g})")

# torch.compile traces the custom op: no graph break, the same result.
torch._dynamo.reset()
cq = torch.compile(q, fullgraph=True, backend="eager" if dev == "cpu" else "inductor")
x = torch.randn(2, K, dtype=torch.float16, device=dev)
assert torch.equal(cq(x).view(torch.int16), q(x).view(torch.int16))
print("torch.compile(fullgraph=True): traced, bit for bit")

for f, exc, word in ((lambda: q(torch.randn(2, 100, dtype=torch.float16, device=dev)), ValueError, "x: expected [..., 256]"),
                     (lambda: q(torch.randn(2, K, dtype=torch.float32, device=dev)), TypeError, "x: expected"),
                     (lambda: tl.nn.QuantLinear(100, 128), ValueError, "in_features 100"),
                     (lambda: tl.nn.QuantLinear(256, 100), ValueError, "out_features 100"),
                     (lambda: tl.nn.QuantLinear(256, 128, group=48), ValueError, "group 48"),
                     (lambda: tl.nn.QuantLinear.from_linear(torch.nn.Conv1d(2, 2, 1)), TypeError, "linear"),
                     (lambda: tl.nn.rtn_quantize(lin.weight, "f4e2m1"), ValueError, "wtype"),
                     (lambda: tl.nn.quantize(3), TypeError, "model")):
    try:
        f()
    except exc as e:
        assert word in str(e), (str(e), word)
        print("refused:", e)
    else:
        raise AssertionError(word)

try:
    import transformers
except ImportError:
    print("transformers: not installed here")
else:
    cfg = transformers.LlamaConfig(vocab_size=256, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    with torch.device(dev):
        ref = transformers.LlamaForCausalLM(cfg).to(torch.float16).eval()
    import copy
    qm = tl.nn.quantize(copy.deepcopy(ref), wtype="u8", group=64)
    kinds = {n: type(m).__name__ for n, m in qm.named_modules() if n.endswith(("proj", "lm_head"))}
    assert kinds["lm_head"] == "Linear" and all(v == "QuantLinear" for n, v in kinds.items() if n != "lm_head")
    ids = torch.randint(0, 256, (1, 8), device=dev)
    with torch.no_grad():
        lr, lq = ref(ids).logits.float(), qm(ids).logits.float()
    rel = ((lq - lr).norm() / lr.norm()).item()
    assert rel < 0.05, rel
    print(f"quantize: {sum(v == 'QuantLinear' for v in kinds.values())} QuantLinear, lm_head kept; "
          f"u8 g64 logits within {rel:.3f} of f16")
print("nn: ok")
