"""Every public function of python/tl with bad arguments (docs/runtime.md,
"Errors"): each call of the table must raise the exception it names
(TypeError for the wrong kind of thing, ValueError for a wrong value of
the right kind) with the argument's name in its message, and nothing
else. Then what the checks protect: an `out` of the right shape is
written in place, a read-only array a kernel writes is refused after the
run (its result would be lost), and scales of the right size but the
wrong shape are refused.

    bad_calls_test.py SOURCE-ROOT [faketorch|torch]

faketorch: the torch branches of the checks, through the stand-in torch
(Inputs/faketorch), which only the checks touch. torch: the same with
PyTorch, CPU tensors (and CUDA ones where a device is present); prints a
skip line where torch is not installed."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = sys.argv[1]
mode = sys.argv[2] if len(sys.argv) > 2 else None
if mode == "faketorch":
    sys.path.insert(0, os.path.join(here, "faketorch"))
elif mode == "torch":
    import importlib.util
    if importlib.util.find_spec("torch") is None:
        print("bad_calls_test: skipped: torch is not installed")
        sys.exit(0)

import numpy as np  # noqa: E402

import tl  # noqa: E402
from tl import ops  # noqa: E402

failures = []


def check(label, exc, name, fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the type is what is checked)
        if os.environ.get("BAD_CALLS_VERBOSE"):
            print(f"{label}: {type(e).__name__}: {e}")
        if type(e) is not exc or name not in str(e):
            failures.append(f"{label}: expected {exc.__name__} naming {name!r}, got "
                            f"{type(e).__name__}: {e}")
        return
    failures.append(f"{label}: expected {exc.__name__} naming {name!r}, got no error")


def run(table):
    for row in table:
        check(*row)


f16 = np.float16
vector_add = os.path.join(root, "kernels", "vector_add.tl")
k = tl.compile(vector_add, BLOCK=256)
n = 300
xs, ys = np.arange(n, dtype=np.float32), np.ones(n, np.float32)

# Weights for the ops: K = 256, N = 64, u4 in groups of 128 (2 x 64 scales).
rng = np.random.default_rng(37)
K, N = 256, 64
codes = rng.integers(0, 16, size=(K, N))
scales = rng.uniform(0.01, 0.1, size=(2, N)).astype(f16)
zeros = rng.integers(0, 16, size=(2, N)).astype(f16)
p = ops.pack_weights(codes, scales, zeros, wtype="u4", group=128)
x4 = rng.uniform(-1, 1, size=(4, K)).astype(f16)
ro = np.zeros((4, N), f16)
ro.flags.writeable = False
cache = ops.kv_cache(1, 2, 64, 16, kt="u4")
kk = np.zeros((1, 2, 3, 64), f16)
empty = ops.kv_cache(1, 2, 64, 16, kt="u4")
pool = ops.kv_pages(4, 2, 64, page_size=16, kt="u4")
wq = ops.pack_wqap(rng.integers(0, 4, size=(256, 32)), np.ones(32), np.zeros(32, np.int32), 2)
xq = rng.uniform(-1, 1, size=(3, 256)).astype(f16)

if mode is None:
    run([
        # (label, exception, the argument's name, the call)
        ("quant_matmul out [4, 128]", ValueError, "out",
         lambda: ops.quant_matmul(x4, p, out=np.zeros((4, 128), f16))),
        ("quant_matmul out [64, 4]", ValueError, "out",
         lambda: ops.quant_matmul(x4, p, out=np.zeros((64, 4), f16))),
        ("quant_matmul out [256]", ValueError, "out",
         lambda: ops.quant_matmul(x4, p, out=np.zeros(256, f16))),
        ("quant_matmul out f64", TypeError, "out",
         lambda: ops.quant_matmul(x4, p, out=np.zeros((4, N)))),
        ("quant_matmul out read-only", TypeError, "out", lambda: ops.quant_matmul(x4, p, out=ro)),
        ("quant_matmul out strided", TypeError, "out",
         lambda: ops.quant_matmul(x4, p, out=np.zeros((4, 2 * N), f16)[:, ::2])),
        ("quant_matmul out a list", TypeError, "out",
         lambda: ops.quant_matmul(x4, p, out=[[0.0] * N] * 4)),
        ("quant_matmul packed None", TypeError, "packed", lambda: ops.quant_matmul(x4, None)),
        ("quant_matmul x None", TypeError, "x", lambda: ops.quant_matmul(None, p)),
        ("quant_matmul x f32", TypeError, "x", lambda: ops.quant_matmul(x4.astype(np.float32), p)),
        ("quant_matmul x [4, 100]", ValueError, "x", lambda: ops.quant_matmul(x4[:, :100], p)),
        ("quant_matmul x 3-D", ValueError, "x", lambda: ops.quant_matmul(x4[None], p)),
        ("quant_matmul x m = 0", ValueError, "x", lambda: ops.quant_matmul(x4[:0], p)),
        ("quant_matmul sm 'x'", TypeError, "sm", lambda: ops.quant_matmul(x4, p, sm="x")),
        ("quant_matmul sm 0", ValueError, "sm", lambda: ops.quant_matmul(x4, p, sm=0)),
        ("explain_matmul sm 90.0", TypeError, "sm", lambda: ops.explain_matmul(x4, p, sm=90.0)),
        ("explain_matmul packed", TypeError, "packed", lambda: ops.explain_matmul(x4, wq)),
        ("tune_matmul NumPy x", TypeError, "x", lambda: ops.tune_matmul(x4, p)),
        ("tune_matmul packed", TypeError, "packed", lambda: ops.tune_matmul(x4, "p")),
        ("pack_weights codes 2.7", TypeError, "codes",
         lambda: ops.pack_weights(np.full((K, N), 2.7), scales, group=128)),
        ("pack_weights codes None", TypeError, "codes", lambda: ops.pack_weights(None, scales)),
        ("pack_weights codes 1-D", ValueError, "codes",
         lambda: ops.pack_weights(codes.reshape(-1), scales)),
        ("pack_weights codes 16", ValueError, "codes",
         lambda: ops.pack_weights(np.full((K, N), 16), scales)),
        ("pack_weights scales transposed", ValueError, "scales",
         lambda: ops.pack_weights(codes, np.ascontiguousarray(scales.T), group=128)),
        ("pack_weights scales flat", ValueError, "scales",
         lambda: ops.pack_weights(codes, scales.reshape(-1), group=128)),
        ("pack_weights scales [N] per group", ValueError, "scales",
         lambda: ops.pack_weights(codes, scales[0], group=128)),
        ("pack_weights scales [2, N] per column", ValueError, "scales",
         lambda: ops.pack_weights(codes, scales, group=None)),
        ("pack_weights scales None", TypeError, "scales", lambda: ops.pack_weights(codes, None)),
        ("pack_weights scales strings", TypeError, "scales",
         lambda: ops.pack_weights(codes, np.full((2, N), "a"))),
        ("pack_weights zeros transposed", ValueError, "zeros",
         lambda: ops.pack_weights(codes, scales, np.ascontiguousarray(zeros.T))),
        ("pack_weights zeros of floats", ValueError, "zeros",
         lambda: ops.pack_weights(codes, scales, zeros, wtype="f4e2m1")),
        ("pack_weights wtype ''", ValueError, "wtype", lambda: ops.pack_weights(codes, scales, wtype="")),
        ("pack_weights wtype u9", ValueError, "wtype",
         lambda: ops.pack_weights(codes, scales, wtype="u9")),
        ("pack_weights wtype i1", ValueError, "wtype",
         lambda: ops.pack_weights(codes, scales, wtype="i1")),
        ("pack_weights wtype f4e3m3", ValueError, "wtype",
         lambda: ops.pack_weights(codes, scales, wtype="f4e3m3")),
        ("pack_weights wtype 4", TypeError, "wtype", lambda: ops.pack_weights(codes, scales, wtype=4)),
        ("pack_weights group '128'", TypeError, "group",
         lambda: ops.pack_weights(codes, scales, group="128")),
        ("pack_weights group 100", ValueError, "group",
         lambda: ops.pack_weights(codes, scales, group=100)),
        ("pack_weights at f32", ValueError, "at", lambda: ops.pack_weights(codes, scales, at="f32")),
        ("pack_weights at bf16 on NumPy", ValueError, "at",
         lambda: ops.pack_weights(codes, scales, at="bf16")),
        ("pack_weights at None", TypeError, "at", lambda: ops.pack_weights(codes, scales, at=None)),
        ("kv_cache batch 0", ValueError, "batch", lambda: ops.kv_cache(0, 2, 64, 16)),
        ("kv_cache batch 1.5", TypeError, "batch", lambda: ops.kv_cache(1.5, 2, 64, 16)),
        ("kv_cache kv_heads '2'", TypeError, "kv_heads", lambda: ops.kv_cache(1, "2", 64, 16)),
        ("kv_cache head_dim 65", ValueError, "head_dim", lambda: ops.kv_cache(1, 2, 65, 16)),
        ("kv_cache capacity 0", ValueError, "capacity", lambda: ops.kv_cache(1, 2, 64, 0)),
        ("kv_cache kt u3", ValueError, "kt", lambda: ops.kv_cache(1, 2, 64, 16, kt="u3")),
        ("kv_cache kt None", TypeError, "kt", lambda: ops.kv_cache(1, 2, 64, 16, kt=None)),
        ("kv_cache kc 16", ValueError, "kc", lambda: ops.kv_cache(1, 2, 64, 16, kc=16)),
        ("kv_cache kc '32'", TypeError, "kc", lambda: ops.kv_cache(1, 2, 64, 16, kc="32")),
        ("kv_append k 3-D", ValueError, "k", lambda: ops.kv_append(cache, kk[0], kk[0])),
        ("kv_append k of f32", TypeError, "k",
         lambda: ops.kv_append(cache, kk.astype(np.float32), kk)),
        ("kv_append k other heads", ValueError, "k",
         lambda: ops.kv_append(cache, np.zeros((1, 3, 3, 64), f16), kk)),
        ("kv_append v other tokens", ValueError, "v", lambda: ops.kv_append(cache, kk, kk[:, :, :2])),
        ("kv_append v None", TypeError, "v", lambda: ops.kv_append(cache, kk, None)),
        ("kv_append cache None", TypeError, "cache", lambda: ops.kv_append(None, kk, kk)),
        ("kv_append too many tokens", ValueError, "k",
         lambda: ops.kv_append(cache, np.zeros((1, 2, 65, 64), f16), np.zeros((1, 2, 65, 64), f16))),
        ("kv_append slots to a KVCache", TypeError, "slots",
         lambda: ops.kv_append(cache, kk, kk, slots=np.zeros((1, 3), np.int32))),
        ("kv_pages pages 0", ValueError, "pages", lambda: ops.kv_pages(0, 2, 64)),
        ("kv_pages page_size 12", ValueError, "page_size", lambda: ops.kv_pages(4, 2, 64, page_size=12)),
        ("kv_pages kt u3", ValueError, "kt", lambda: ops.kv_pages(4, 2, 64, kt="u3")),
        ("kv_append pool without slots", TypeError, "slots", lambda: ops.kv_append(pool, kk, kk)),
        ("kv_append pool slots [1, 2]", ValueError, "slots",
         lambda: ops.kv_append(pool, kk, kk, slots=np.zeros((1, 2), np.int32))),
        ("kv_append pool slots i64", TypeError, "slots",
         lambda: ops.kv_append(pool, kk, kk, slots=np.zeros((1, 3), np.int64))),
        ("kv_slots lens [2]", ValueError, "lens",
         lambda: ops.kv_slots(np.zeros((1, 2), np.int32), np.zeros(2, np.int32), 3, 16)),
        ("kv_slots table f32", TypeError, "block_table",
         lambda: ops.kv_slots(np.zeros((1, 2), np.float32), np.zeros(1, np.int32), 3, 16)),
        ("decode_attention pool without table", TypeError, "block_table",
         lambda: ops.decode_attention(np.zeros((1, 4, 64), f16), pool)),
        ("decode_attention pool table [2, 2]", ValueError, "block_table",
         lambda: ops.decode_attention(np.zeros((1, 4, 64), f16), pool, block_table=np.zeros((2, 2), np.int32),
                                      lens=np.zeros(1, np.int32))),
        ("decode_attention pool page 4 of 4", ValueError, "block_table",
         lambda: ops.decode_attention(np.zeros((1, 4, 64), f16), pool, block_table=np.array([[0, 4]], np.int32),
                                      lens=np.ones(1, np.int32))),
        ("decode_attention pool lens 33", ValueError, "lens",
         lambda: ops.decode_attention(np.zeros((1, 4, 64), f16), pool, block_table=np.array([[0, 1]], np.int32),
                                      lens=np.array([33], np.int32))),
        ("decode_attention pool lens -1", ValueError, "lens",
         lambda: ops.decode_attention(np.zeros((1, 4, 64), f16), pool, block_table=np.array([[0, 1]], np.int32),
                                      lens=np.array([-1], np.int32))),
        ("decode_attention KVCache with lens", TypeError, "lens",
         lambda: ops.decode_attention(np.zeros((1, 4, 64), f16), cache, lens=np.ones(1, np.int32))),
        ("decode_attention q [1, 4, 128]", ValueError, "q",
         lambda: ops.decode_attention(np.zeros((1, 4, 128), f16), cache)),
        ("decode_attention q Hq 3", ValueError, "q",
         lambda: ops.decode_attention(np.zeros((1, 3, 64), f16), cache)),
        ("decode_attention q f32", TypeError, "q",
         lambda: ops.decode_attention(np.zeros((1, 4, 64), np.float32), cache)),
        ("decode_attention empty cache", ValueError, "cache",
         lambda: ops.decode_attention(np.zeros((1, 4, 64), f16), empty)),
        ("decode_attention cache", TypeError, "cache",
         lambda: ops.decode_attention(np.zeros((1, 4, 64), f16), p)),
        ("decode_attention scale '1'", TypeError, "scale",
         lambda: ops.decode_attention(np.zeros((1, 4, 64), f16), cache, scale="1")),
        ("decode_attention scale nan", ValueError, "scale",
         lambda: ops.decode_attention(np.zeros((1, 4, 64), f16), cache, scale=float("nan"))),
        ("decode_attention splits 0", ValueError, "splits",
         lambda: ops.decode_attention(np.zeros((1, 4, 64), f16), cache, splits=0)),
        ("pack_wqap q 0", ValueError, "q", lambda: ops.pack_wqap(codes, np.ones(N), np.zeros(N, int), 0)),
        ("pack_wqap q None", TypeError, "q",
         lambda: ops.pack_wqap(codes, np.ones(N), np.zeros(N, int), None)),
        ("pack_wqap codes floats", TypeError, "codes",
         lambda: ops.pack_wqap(codes + 0.5, np.ones(N), np.zeros(N, int), 4)),
        ("pack_wqap codes 1-D", ValueError, "codes",
         lambda: ops.pack_wqap(codes[0], np.ones(N), np.zeros(N, int), 4)),
        ("pack_wqap scales [2, 32]", ValueError, "scales",
         lambda: ops.pack_wqap(codes, np.ones((2, N // 2)), np.zeros(N, int), 4)),
        ("pack_wqap zeros floats", TypeError, "zeros",
         lambda: ops.pack_wqap(codes, np.ones(N), np.full(N, 2.7), 4)),
        ("pack_wqap zeros None", TypeError, "zeros",
         lambda: ops.pack_wqap(codes, np.ones(N), None, 4)),
        ("wqap_matmul m = 0", ValueError, "x", lambda: ops.wqap_matmul(xq[:0], wq)),
        ("wqap_matmul out_dtype bf16", ValueError, "out_dtype",
         lambda: ops.wqap_matmul(xq, wq, out_dtype="bf16")),
        ("wqap_matmul out_dtype None", TypeError, "out_dtype",
         lambda: ops.wqap_matmul(xq, wq, out_dtype=None)),
        ("wqap_matmul p 9", ValueError, "p", lambda: ops.wqap_matmul(xq, wq, p=9)),
        ("wqap_matmul p 2.0", TypeError, "p", lambda: ops.wqap_matmul(xq, wq, p=2.0)),
        ("wqap_matmul packed None", TypeError, "packed", lambda: ops.wqap_matmul(xq, None)),
        ("wqap_matmul x [3, 100]", ValueError, "x", lambda: ops.wqap_matmul(xq[:, :100], wq)),
        ("wqap_matmul x f32", TypeError, "x", lambda: ops.wqap_matmul(xq.astype(np.float32), wq)),
        # The package's core.
        ("compile source None", TypeError, "source", lambda: tl.compile(None)),
        ("compile kernel 3", TypeError, "kernel", lambda: tl.compile(vector_add, kernel=3)),
        ("compile define 1.5", TypeError, "BLOCK", lambda: tl.compile(vector_add, BLOCK=1.5)),
        ("Session cache_dir 3", TypeError, "cache_dir", lambda: tl.Session(cache_dir=3)),
        ("Session driver 3", TypeError, "driver", lambda: tl.Session(driver=3)),
        ("open_device '0'", TypeError, "ordinal", lambda: tl.Session(driver="").open_device("0")),
        ("open_device -1", ValueError, "ordinal", lambda: tl.Session(driver="").open_device(-1)),
        ("ptx sm 'x'", TypeError, "sm", lambda: k.ptx(sm="x")),
        ("ptx sm -1", ValueError, "sm", lambda: k.ptx(sm=-1)),
        ("ptx_info sm 1.5", TypeError, "sm", lambda: k.ptx_info(sm=1.5)),
        ("launch_dims sm 'x'", TypeError, "sm", lambda: k.launch_dims(xs, ys, ys, n, sm="x")),
        ("time iters -1", ValueError, "iters", lambda: k.time(xs, ys, ys, n, iters=-1)),
        ("time warmup 'a'", TypeError, "warmup", lambda: k.time(xs, ys, ys, n, warmup="a")),
        ("template_value 3", TypeError, "name", lambda: k.template_value(3)),
        ("run_vm n '5'", TypeError, "(n)", lambda: k.run_vm(xs, ys, np.zeros(n, np.float32), "5")),
        ("run_vm n 2^40", ValueError, "(n)",
         lambda: k.run_vm(xs, ys, np.zeros(n, np.float32), 1 << 40)),
        ("run_vm y f16", TypeError, "(y)",
         lambda: k.run_vm(xs, ys.astype(f16), np.zeros(n, np.float32), n)),
        ("run_vm z read-only", TypeError, "(z)",
         lambda: k.run_vm(xs, ys, np.broadcast_to(np.float32(0), (n,)), n)),
        ("call stream 's'", TypeError, "stream", lambda: k(xs, ys, ys, n, stream="s")),
        ("autotune space a list", TypeError, "space", lambda: tl.autotune(vector_add, [128])),
        ("autotune space '128'", TypeError, "space",
         lambda: tl.autotune(vector_add, {"BLOCK": "128"})),
        ("autotune space 1.5", TypeError, "space", lambda: tl.autotune(vector_add, {"BLOCK": [1.5]})),
        ("autotune space empty", ValueError, "space", lambda: tl.autotune(vector_add, {"BLOCK": []})),
        ("autotune space and define", ValueError, "space",
         lambda: tl.autotune(vector_add, {"BLOCK": [128]}, BLOCK=128)),
        ("autotune rounds 0", ValueError, "rounds",
         lambda: tl.autotune(vector_add, {"BLOCK": [128]}, rounds=0)),
        ("autotune session 's'", TypeError, "session",
         lambda: tl.autotune(vector_add, {"BLOCK": [128]}, session="s")),
        ("autotune log 'x'", TypeError, "log", lambda: tl.autotune(vector_add, {"BLOCK": [128]}, log="x")),
        ("autotune timed 1", TypeError, "timed",
         lambda: tl.autotune(vector_add, {"BLOCK": [128]}, timed=1)),
        ("autotune cached_only without args", ValueError, "args",
         lambda: tl.autotune(vector_add, {"BLOCK": [128]}, cached_only=True)),
    ])

    # What the checks protect. An out of the right shape is written in
    # place and returned; the same numbers as without it.
    want = ops.quant_matmul(x4, p)
    out = np.full((4, N), np.nan, f16)
    assert ops.quant_matmul(x4, p, out=out) is out
    assert np.array_equal(out, want), (out, want)
    # A read-only buffer the kernel does not write is read (vector_add's
    # x and y), one it writes is refused after the run, and the array is
    # left as it was.
    xr, yr = xs.copy(), ys.copy()
    xr.flags.writeable = yr.flags.writeable = False
    z = np.zeros(n, np.float32)
    k.run_vm(xr, yr, z, n)
    assert np.array_equal(z, xs + ys)
    zr = np.zeros(n, np.float32)
    zr.flags.writeable = False
    check("run_vm z read-only", TypeError, "(z)", lambda: k.run_vm(xs, ys, zr, n))
    assert not zr.any()
    # Per-column scales [N] or [1, N]; per-group [K / group, N] only.
    for s in (scales[0], scales[:1]):
        pc = ops.pack_weights(codes, s, group=None)
        assert pc.per_column and pc.s.shape == (1, 1, N), pc.s.shape
    # Codes as integers of any width, and as bools for u1.
    ops.pack_weights(codes.astype(np.uint8), scales, group=128)
    if not failures:
        print("bad_calls_test: table ok")
else:
    import torch
    if mode == "faketorch":
        cuda = lambda *s, dt=torch.float16: torch.zeros(*s, dtype=dt, device="cuda")  # noqa: E731
        cpu = lambda *s, dt=torch.float16: torch.zeros(*s, dtype=dt)  # noqa: E731
    else:
        cuda = None
        cpu = lambda *s, dt=torch.float16: torch.zeros(*s, dtype=dt)  # noqa: E731
    rows = [
        ("quant_matmul x CPU tensor", TypeError, "x", lambda: ops.quant_matmul(cpu(4, K), p)),
        ("decode_attention q CPU tensor", TypeError, "q",
         lambda: ops.decode_attention(cpu(1, 4, 64), cache)),
        ("kv_append k CPU tensor", TypeError, "k", lambda: ops.kv_append(cache, cpu(1, 2, 3, 64), kk)),
        ("wqap_matmul x CPU tensor", TypeError, "x", lambda: ops.wqap_matmul(cpu(3, 256), wq)),
    ]
    if cuda is not None:
        rows += [
            # NumPy weights (the VM's) with a CUDA x, and the reverse.
            ("quant_matmul CUDA x, NumPy weights", TypeError, "x",
             lambda: ops.quant_matmul(cuda(4, K), p)),
            ("quant_matmul NumPy x, CUDA out", TypeError, "out",
             lambda: ops.quant_matmul(x4, p, out=cuda(4, N))),
            ("kv_append CUDA k, NumPy cache", TypeError, "k",
             lambda: ops.kv_append(cache, cuda(1, 2, 3, 64), kk)),
            ("wqap_matmul CUDA x, NumPy weights", TypeError, "x",
             lambda: ops.wqap_matmul(cuda(3, 256), wq)),
            ("tune_matmul x f32", TypeError, "x",
             lambda: ops.tune_matmul(cuda(4, K, dt=torch.float32), p)),
        ]
    run(rows)
    if not failures:
        print(f"bad_calls_test {mode}: table ok")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
