#!/usr/bin/env python3
"""The decode attention benchmark (kernels/decode_attn.tl) on the GPU
machine, with PyTorch's f16 attention timed in the same run, the way tl-run
--bench times TL's kernels (the median of 50 event-timed runs, the L2
cache flushed before each).

  python3 bench/decode_attn.py [--bin DIR] [--quick] [--types f16,u8,u4,u2] [--shapes B:L,...] [--kc NR,...]
                               [--writers-only] [--tune NAME=V,V,...]... [--hq N]

Shapes: Hq = 32 query heads (--hq: 64 for Llama-3-70B's G = 8) on Hkv = 8
KV heads, D = 128, one new token a sequence; B = 1 with L = 4K, 16K, 64K, 128K and B = 8 with L = 32K (--quick:
B = 1, L = 4K and 64K). For each cache type (f16, u8, u4 codes with a
per-token f16 scale and zero point) and up to three split counts ns (B Hkv
ns blocks about one, two and four waves of the SMs, each split at least
256 tokens), tl-run --tune times the
kernel's instances over W (warps a block), BT (tokens a warp and step), S
(pipeline stages) and MW (warps an SM asked of ptxas: 0 or 16), and the
fastest is kept; --tune NAME=V,... replaces one axis's values. The peers, on the f16 cache:
torch.nn.functional.scaled_dot_product_attention (enable_gqa, else the KV
heads repeated, which it then reads G times: noted in the line), and
flash-attn's flash_attn_with_kvcache where the package is installed. The
roofline is the bytes that must move (q, the codes, the scales and zero
points, o) over the copy bandwidth measured in the same run (a
device-to-device copy of 1 GiB, read plus written). Before timing, the
kernel's output at B = 1, L = 4099 is checked for each type against
scripts/decode_attn.py's float64 reference and bound.

--kc NR,...: also the KC instances (KQ = 1: K per channel over blocks of
NR tokens, V per token) of each integer type, tuned the same way (the
instances with NR no multiple of W BT are refused by the kernel and
skipped), each with the f16 residual's launch of NR - 1 tokens timed on
its own (one block a KV head; timed writing o directly, as the last slot's
combine is timed in the quantised launch) and added; the roofline counts
the channel scales, 2 D f16 a block, instead of K's per-token ones. Before
timing, KC at B = 1, L = 4099 (the last 4099 % NR tokens in the residual)
is checked against the script's reference with its KC bound.

Last, the KV writer's cost for each integer type at B = 1 (8 KV heads):
kernels/kv_quant.tl appending one token and writing a 4096-token prompt,
and with --kc kernels/kc_quant.tl flushing one residual block and writing
the prompt's blocks, in ms and ns a token and KV head (--writers-only:
these alone).
"""
import importlib.util
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from tlrun import median_of, summary, tl_run  # noqa: E402
# scripts/decode_attn.py (this file has its name)
_spec = importlib.util.spec_from_file_location(
    "decode_attn_ref", os.path.join(ROOT, "scripts", "decode_attn.py"))
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)

KERNEL = os.path.join(ROOT, "kernels", "decode_attn.tl")
HQ, HKV, D = 32, 8, 128
BITS = {"f16": 16, "u8": 8, "u4": 4, "u2": 2}
# The template values tl-run --tune tries (W warps a block, BT tokens a warp
# and step, S pipeline stages, MW warps an SM: 16 caps a thread at 128
# registers); instances over a block's shared memory are skipped by tl-run.
# The split counts are tried one run each.
TUNE = dict(W=[4, 8], BT=[16, 32, 64], S=[3, 2, 4], MW=[0, 16])
# blocks wanted (B Hkv ns): one, two and four waves of the 132 SMs of an
# H100, each split at least MIN_SPLIT tokens (four steps of W = 4 warps of
# BT = 16 tokens), so that short caches take few splits and a cheap combine
SMS = 132
WAVES = (1, 2, 4)
MIN_SPLIT = 256


_TMP = tempfile.TemporaryDirectory()


def lens_table(b, l):
    """files of the lengths (l each) and the block table of B pages (the
    contiguous cache: sequence b in page b)"""
    import numpy as np
    lens = os.path.join(_TMP.name, "lens_%d_%d.npy" % (b, l))
    table = os.path.join(_TMP.name, "table_%d.npy" % b)
    np.save(lens, np.full(b, l, np.int32))
    np.save(table, np.arange(b, dtype=np.int32).reshape(b, 1))
    return lens, table


def kernel_args(b, l, kt, ns, defines=None, files=None, nr=None, cap=None):
    """The -D defines and --arg args of an instance over l tokens in ns
    parts of a contiguous cache of cap tokens (default l; a multiple of
    64: the copies take PT = 64 tokens, a divisor of every W BT tuned);
    nr: KC with blocks of nr tokens (l a multiple of nr)."""
    nbh = b * HKV
    cap = cap or l
    defs = dict(D=D, G=HQ // HKV, KT=kt, PT=64 if cap % 64 == 0 else 8)
    if nr:
        defs.update(KQ=1, NR=nr)
    defs.update(defines or {})
    if files:
        args = dict(q=files + ".q.npy", kc=files + ".kc.npy", vc=files + ".vc.npy",
                    ks=files + ".ks.npy", vs=files + ".vs.npy")
    else:
        args = dict(q="rand:f16:%dx%dx%d" % (b, HQ, D),
                    kc="rand:u8:%d" % (nbh * l * D * BITS[kt] // 8),
                    vc="rand:u8:%d" % (nbh * l * D * BITS[kt] // 8),
                    ks="rand:f16:%dx2x%d" % (nbh, l), vs="rand:f16:%dx2x%d" % (nbh, l))
        if nr:
            args["ks"] = "rand:f16:%dx2x%dx%d" % (nbh, l // nr, D)
    lens, table = lens_table(b, l)
    args.update(o="zeros:f16:%dx%dx%d" % (b, HQ, D), nbh=str(nbh), lens=lens, table=table,
                hkv=str(HKV), maxp="1", psz=str(cap), npg=str(b),
                ns=str(ns), scale=repr(D ** -0.5),
                wo="zeros:f32:%d" % (nbh * ns * 16 * D if ns > 1 else 4),
                wml="zeros:f32:%d" % (nbh * ns * 32 if ns > 1 else 4),
                locks="zeros:u32:%d" % nbh, np=str(ns), p0="0")
    return defs, args


def splits(b, l):
    """The split counts: B Hkv ns blocks about one, two and four waves of
    the GPU's SMs, each split at least MIN_SPLIT tokens (at L = 4K and B
    Hkv = 8: ns = 16 only; at L = 64K: 17, 33 and 66)."""
    out = []
    for waves in WAVES:
        ns = max(1, min(l // MIN_SPLIT, -(-waves * SMS // (b * HKV))))
        if ns not in out:
            out.append(ns)
    return out


def bench_tl(tlbin, b, l, kt, ns, nr=None):
    """(median ms, the chosen template values) of the fastest instance."""
    defines, args = kernel_args(b, l, kt, ns, nr=nr)
    extra = ["--seed", "1", "--json", "--no-vm-check", "--retune"]
    for k, vals in TUNE.items():
        extra += ["--tune", "%s=%s" % (k, ",".join(map(str, vals)))]
    rc, out = tl_run(tlbin, KERNEL, defines, args, extra)
    best, ms = None, median_of(out)
    for line in out.splitlines():
        if line.startswith("tune best:"):
            best = line[len("tune best:"):].split("(")[0].strip()
    if ms is None:
        print("  tl-run failed (%s ns=%d): %s" % (kt, ns, out.strip()[-300:]))
        return None
    return ms, "%s ns=%d" % (best, ns)


def check_tl(tlbin, kt, defines, ns, b=1, l=4099):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "a")
        cap = -(-(l + 5) // 64) * 64
        ref.gen(p, b, HQ, HKV, D, l, cap, kt, 17)
        defs, args = kernel_args(b, l, kt, ns, defines, files=p, cap=cap)
        rc, out = tl_run(tlbin, KERNEL, defs, args, ["--no-vm-check", "--save", "o=%s.o.npy" % p])
        if rc:
            print("  check %s %s ns=%d: tl-run failed: %s" % (kt, defines, ns, out.strip()[-300:]))
            return False
        return ref.check(p, p + ".o.npy", b, HQ, HKV, D, l, kt, D ** -0.5, 2.0 ** -9) == 0


def bench_residual(tlbin, b, nr):
    """median ms of the f16 residual's launch over nr - 1 tokens (W = 4,
    BT = 16, one part, writing o)"""
    defines, args = kernel_args(b, nr, "f16", 1, dict(W=4, BT=16, S=2))
    args["lens"] = lens_table(b, nr - 1)[0]
    rc, out = tl_run(tlbin, KERNEL, defines, args, ["--seed", "1", "--json", "--no-vm-check"])
    return median_of(out)


KV_QUANT = os.path.join(ROOT, "kernels", "kv_quant.tl")
KC_QUANT = os.path.join(ROOT, "kernels", "kc_quant.tl")


def bench_writers(tlbin, b, kt, nrs, prompt=4096):
    """The KV writer's cost: kv_quant.tl (token-wise, K of KT caches and V)
    appending one decode step (one token a KV head) and writing a prompt
    of `prompt` tokens; kc_quant.tl (KC's K) flushing one full residual
    block of nr tokens and writing the prompt's blocks. Lines of median
    ms and ns a token and KV head (one of K or V; a decode step writes
    both)."""
    nbh, lines = b * HKV, []

    def run(kernel, defines, args):
        rc, out = tl_run(tlbin, kernel, defines, args,
                         ["--seed", "1", "--bench", "--json", "--no-vm-check"])
        return median_of(out) if rc == 0 else None

    def slots(t):
        import numpy as np
        f = os.path.join(_TMP.name, "slots_%d_%d.npy" % (b, t))
        np.save(f, (np.arange(b)[:, None] * prompt + np.arange(t)).astype(np.int32))
        return f

    def kv(t):
        return run(KV_QUANT, dict(D=D, KT=kt),
                   dict(x="rand:f16:%dx%dx%d" % (nbh, t, D),
                        c="zeros:%s:%dx%dx%d" % (kt, nbh, prompt, D),
                        s="zeros:f16:%dx2x%d" % (nbh, prompt),
                        slots=slots(t), nbh=nbh, hkv=HKV, t=t, npg=b, psz=prompt))

    one, many = kv(1), kv(prompt)
    if one and many:
        lines.append("writer KT %s B=%d: 1 token %.4f ms, %d tokens %.4f ms (%.1f ns a token "
                     "and KV head)" % (kt, b, one, prompt, many, many * 1e6 / (prompt * nbh)))
    for nr in nrs:
        def kc(nb):
            return run(KC_QUANT, dict(D=D, KT=kt, NR=nr),
                       dict(x="rand:f16:%dx%dx%d" % (nbh, nb * nr, D),
                            c="zeros:%s:%dx%dx%d" % (kt, nbh, prompt, D),
                            s="zeros:f16:%dx2x%dx%d" % (nbh, prompt // nr, D),
                            nbh=nbh, nb=nb, pos=0, cap=prompt))
        blk, all_ = kc(1), kc(prompt // nr)
        if blk and all_:
            lines.append("writer KC NR=%d %s B=%d: one block %.4f ms, %d tokens %.4f ms "
                         "(%.1f ns a token and KV head)" % (
                             nr, kt, b, blk, prompt, all_, all_ * 1e6 / (prompt * nbh)))
    return lines


def check_kc(tlbin, kt, nr, defines, ns, b=1, l=4099):
    """KC over the first l - l % nr tokens in ns parts, then the residual
    as the last slot of ns + 1, against the script's reference"""
    lq, lr = l - l % nr, l % nr
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "a")
        ref.gen(p, b, HQ, HKV, D, l, lq, kt, 17, nr)
        nbh, nt = b * HKV, ns + (lr > 0)
        defs, args = kernel_args(b, lq, kt, nt, defines, files=p, nr=nr)
        args.update(np=str(ns))
        saves = ["--save", "o=%s.o.npy" % p]
        if lr:
            saves = [x for n in ("o", "wo", "wml", "locks") for x in ("--save", "%s=%s.%s1.npy" % (n, p, n))]
        rc, out = tl_run(tlbin, KERNEL, defs, args, ["--no-vm-check"] + saves)
        if rc == 0 and lr:
            rdefs, rargs = kernel_args(b, lr, "f16", nt, dict(W=4, BT=16, S=3), files=p, cap=nr)
            rargs.update(kc=p + ".rk.npy", vc=p + ".rv.npy", ks="zeros:f16:8", vs="zeros:f16:8",
                         np="1", p0=str(ns),
                         **{n: "%s.%s1.npy" % (p, n) for n in ("o", "wo", "wml", "locks")})
            rc, out = tl_run(tlbin, KERNEL, rdefs, rargs, ["--no-vm-check", "--save", "o=%s.o.npy" % p])
        if rc:
            print("  check KC %s NR=%d %s ns=%d: tl-run failed: %s" % (
                kt, nr, defines, ns, out.strip()[-300:]))
            return False
        return ref.check(p, p + ".o.npy", b, HQ, HKV, D, l, kt, D ** -0.5, 2.0 ** -9, nr) == 0


def peer_sdpa(torch, b, l):
    import torch.nn.functional as F
    q = torch.randn(b, HQ, 1, D, dtype=torch.float16, device="cuda")
    k = torch.randn(b, HKV, l, D, dtype=torch.float16, device="cuda")
    v = torch.randn(b, HKV, l, D, dtype=torch.float16, device="cuda")
    try:
        F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        return timed(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)), "sdpa_f16_gqa"
    except (TypeError, RuntimeError):
        kr = k.repeat_interleave(HQ // HKV, dim=1)
        vr = v.repeat_interleave(HQ // HKV, dim=1)
        return timed(lambda: F.scaled_dot_product_attention(q, kr, vr)), "sdpa_f16_repeated_kv"


def peer_flash(torch, b, l):
    """flash-attn's decode kernel (flash_attn_with_kvcache, f16, GQA), when
    the package is installed; None otherwise."""
    try:
        from flash_attn import flash_attn_with_kvcache
    except ImportError:
        return None
    q = torch.randn(b, 1, HQ, D, dtype=torch.float16, device="cuda")
    k = torch.randn(b, l, HKV, D, dtype=torch.float16, device="cuda")
    v = torch.randn(b, l, HKV, D, dtype=torch.float16, device="cuda")
    lens = torch.full((b,), l, dtype=torch.int32, device="cuda")
    return timed(lambda: flash_attn_with_kvcache(q, k, v, cache_seqlens=lens))


def must_bytes(b, l, kt, nr=None):
    codes = 2 * b * HKV * l * D * BITS[kt] // 8
    scales = 0 if kt == "f16" else 2 * b * HKV * l * 2 * 2
    if nr:  # V's per token, K's per channel and block
        scales = b * HKV * l * 2 * 2 + b * HKV * (l // nr) * 2 * D * 2
    return codes + scales + 2 * b * HQ * D * 2


def main():
    tlbin = "build-dev/bin"
    if "--bin" in sys.argv:
        tlbin = sys.argv[sys.argv.index("--bin") + 1]
    quick = "--quick" in sys.argv
    types = ["f16", "u8", "u4", "u2"]
    if "--types" in sys.argv:
        types = sys.argv[sys.argv.index("--types") + 1].split(",")
    shapes = [(1, 4096), (1, 65536)] if quick else \
        [(1, 4096), (1, 16384), (1, 65536), (1, 131072), (8, 32768)]
    if "--shapes" in sys.argv:  # B:L,B:L,...
        shapes = [tuple(int(v) for v in x.split(":"))
                  for x in sys.argv[sys.argv.index("--shapes") + 1].split(",")]
    global HQ
    if "--hq" in sys.argv:
        HQ = int(sys.argv[sys.argv.index("--hq") + 1])
    for i, a in enumerate(sys.argv):
        if a == "--tune":
            name, vals = sys.argv[i + 1].split("=")
            TUNE[name] = [int(v) for v in vals.split(",")]
    kcs = []
    if "--kc" in sys.argv:
        kcs = [int(x) for x in sys.argv[sys.argv.index("--kc") + 1].split(",")]
    import torch
    global timed
    from peers import copy_bandwidth, timed  # the same flush and median as peers.py
    print("device:", torch.cuda.get_device_name(), "torch", torch.__version__)
    bw = copy_bandwidth()

    ok = True
    if "--writers-only" in sys.argv:  # the KV writers' cost alone
        shapes, rows = [], []
        types = [t for t in types if t != "f16"]
    for kt in types if shapes else ():
        for defines, ns in [(dict(W=4, BT=16, S=3), 16), (dict(W=8, BT=16, S=2), 33)]:
            good = check_tl(tlbin, kt, defines, ns)
            ok = ok and good
            print("check B=1 L=4099 %s %s ns=%d: %s" % (kt, defines, ns, "ok" if good else "FAILED"))
        for nr in kcs if kt != "f16" else ():
            good = check_kc(tlbin, kt, nr, dict(W=4 if nr % 64 == 0 else 2, BT=16, S=3), 16)
            ok = ok and good
            print("check B=1 L=4099 %s KC NR=%d ns=16: %s" % (kt, nr, "ok" if good else "FAILED"))

    rows = []
    for b, l in shapes:
        t_peer, peer = peer_sdpa(torch, b, l)
        t_flash = peer_flash(torch, b, l)
        flash = "" if t_flash is None else " | flash_attn_f16 %.4f ms (%.0f GB/s)" % (
            t_flash, must_bytes(b, l, "f16") / t_flash / 1e6)
        for kt in types:
            must = must_bytes(b, l, kt)
            roof = must / bw * 1e3
            best = None
            for ns in splits(b, l):
                r = bench_tl(tlbin, b, l, kt, ns)
                if r is not None:
                    print("  B=%d L=%d %s %s: %.4f ms" % (b, l, kt, r[1], r[0]))
                    if best is None or r[0] < best[0]:
                        best = r
            if best is None:
                rows.append("B=%d L=%-6d %-3s no instance ran" % (b, l, kt))
            else:
                rows.append(("B=%d L=%-6d %-3s TL %.4f ms (%s) %.0f GB/s (%.0f%% of roofline %.4f ms)"
                             " | %s %.4f ms (%.0f GB/s)" % (
                                 b, l, kt, best[0], best[1], must / best[0] / 1e6, 100 * roof / best[0],
                                 roof, peer, t_peer, must_bytes(b, l, "f16") / t_peer / 1e6)) + flash)
            print(rows[-1])
            for nr in kcs if kt != "f16" else ():
                must = must_bytes(b, l, kt, nr)
                roof = must / bw * 1e3
                best = None
                for ns in splits(b, l):
                    r = bench_tl(tlbin, b, l, kt, ns, nr)
                    if r is not None:
                        print("  B=%d L=%d %s KC NR=%d %s: %.4f ms" % (b, l, kt, nr, r[1], r[0]))
                        if best is None or r[0] < best[0]:
                            best = r
                res = bench_residual(tlbin, b, nr)
                if best is None or res is None:
                    rows.append("B=%d L=%-6d %-3s KC NR=%d no instance ran" % (b, l, kt, nr))
                    print(rows[-1])
                    continue
                t = best[0] + res
                line = ("B=%d L=%-6d %-3s KC NR=%d TL %.4f ms (%s, + residual %.4f ms) %.0f GB/s "
                        "(%.0f%% of roofline %.4f ms) | %s %.4f ms" % (
                            b, l, kt, nr, t, best[1], res, must / t / 1e6, 100 * roof / t,
                            roof, peer, t_peer))
                print(line)
                rows.append(line)
    for kt in types:
        if kt != "f16":
            for line in bench_writers(tlbin, 1, kt, kcs):
                print(line)
                rows.append(line)
    summary(bw, "skipped" if "--writers-only" in sys.argv else "passed" if ok else "FAILED", rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
