#!/usr/bin/env python3
"""The quantised matmul benchmark (kernels/qmatmul.tl) on the GPU
machine, with its peers timed in the same run, the way tl-run --bench times
TL's kernels (the median of 50 event-timed runs, the L2 cache flushed before
each).

  python3 bench/qmatmul.py [--bin DIR] [--quick] [--m 1,16] [--models 70B,8B] [--zp]
                           [--wt TYPE] [--types T1,T2,...] [--sa]
                           [--only m8|t|base|wg] [--wg-configs BNxBMxS[xPB[xMB]],...] [--no-checks]

--only times one family of candidates (the m <= 8 kernel, the tall
blocks, the 16-row ones, or qmatmul_wg.tl's warpgroup-mma ones, sm_90a); --no-checks skips the float64 checks (for a
rerun of timings already checked). --wg-configs replaces the candidates of
qmatmul_wg.tl. --sa runs the m <= 8 kernel with the scales applied to each group's f32
sum (qmatmul_m8.tl -D SA=1). --wt picks the weight type of the model runs (default i4: u4 codes with
the implicit zero 8; with --zp, u4 with zero points). --types adds a run of
every listed weight type at M = 1 on (N, K) = (8192, 8192), each against
its own roofline (its codes' bytes).

For each shape (N, K) of a Llama-3.3-70B layer (and Llama-3-8B), at M = 1
and 16 (--m for others): TL's kernel for each candidate configuration
(BN, W, S[, KS]; m8 ones for m <= 16, with two 8-row tiles a block past 8,
tall ones, t, for m > 8, and qmatmul_wg.tl's (BN, BM, S[, PB]), wg, for m >
16 on an sm_90 device), the best one kept; cuBLAS f16 (torch.matmul, f16 [M, K] x [K, N]); tinygemm int4 g128
(torch._weight_int4pack_mm, bf16). The roofline is the bytes that must move
(u4 codes, f16 scales, A and C) over the copy bandwidth measured in the same
run (a device-to-device copy of 1 GiB, read plus written). Before timing,
the kernel's output at two real shapes is checked against a float64
reference with the norm-wise bound of scripts/qmatmul.py.
"""
import os
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))  # before bench/: qmatmul is the reference
sys.path.append(os.path.join(ROOT, "bench"))
import qmatmul  # noqa: E402
from tlrun import median_of, sass_of, summary, tl_run  # noqa: E402

KERNEL = os.path.join(ROOT, "kernels", "qmatmul.tl")
KERNEL_M8 = os.path.join(ROOT, "kernels", "qmatmul_m8.tl")
KERNEL_WG = os.path.join(ROOT, "kernels", "qmatmul_wg.tl")
PACKER = os.path.join(ROOT, "kernels", "qpack.tl")
G = 128
SHAPES_70B = [("gate_up", 57344, 8192), ("down", 8192, 28672),
              ("qkv", 10240, 8192), ("o", 8192, 8192)]
SHAPES_8B = [("gate_up", 28672, 4096), ("down", 4096, 14336),
             ("qkv", 6144, 4096), ("o", 4096, 4096)]
# (BN, W, S[, KS]): KS > 1 splits k over KS blocks (shapes under a wave).
CONFIGS = [(64, 8, 3), (32, 8, 3), (32, 16, 2), (64, 4, 4), (128, 4, 3),
           (64, 4, 6), (64, 4, 3), (64, 2, 6), (64, 4, 4, 2), (64, 4, 4, 4),
           (64, 8, 3, 2), (128, 4, 3, 2)]
# kernels/qmatmul_m8.tl, for m <= 8: ("m8", BN, W, S, KS).
CONFIGS_M8 = [("m8", 64, 4, 4, 1), ("m8", 64, 4, 3, 1), ("m8", 64, 2, 4, 1),
              ("m8", 128, 4, 2, 1), ("m8", 64, 4, 4, 2), ("m8", 64, 4, 3, 2),
              ("m8", 32, 8, 3, 1), ("m8", 64, 2, 3, 1), ("m8", 128, 2, 3, 1),
              ("m8", 64, 1, 4, 1), ("m8", 64, 1, 6, 1), ("m8", 128, 1, 4, 1),
              ("m8", 32, 8, 3, 2), ("m8", 32, 4, 4, 1), ("m8", 32, 4, 4, 2)]
# The same kernel for 8 < m <= 16: ("m8", BN, W, S, KS, R), R = 2 tiles of 8
# rows a block, each dequantised weight fragment feeding two mma.
CONFIGS_M16 = [("m8", 64, 4, 3, 1, 2), ("m8", 32, 8, 3, 1, 2), ("m8", 64, 4, 4, 1, 2),
               ("m8", 64, 2, 4, 1, 2), ("m8", 64, 1, 4, 1, 2), ("m8", 128, 1, 4, 1, 2),
               ("m8", 64, 4, 3, 2, 2), ("m8", 32, 4, 4, 1, 2)]
# --sa: the m8 candidates with the scales applied to each group's f32 sum.
SA = 0
# Tall blocks of qmatmul.tl for larger m: ("t", BN, W, S, WN, MT[, KS]): WN
# warps side by side over the BN columns (BN / WN each, the packing's
# block width), each with MT mma rows (16 MT rows a block), W warps over k.
CONFIGS_TALL = [("t", 256, 1, 3, 4, 4), ("t", 256, 1, 4, 4, 4), ("t", 128, 1, 4, 2, 4),
                ("t", 128, 1, 4, 4, 4), ("t", 128, 1, 3, 4, 8), ("t", 256, 1, 4, 4, 2),
                ("t", 128, 2, 3, 2, 4), ("t", 128, 1, 4, 2, 4, 2), ("t", 256, 1, 3, 4, 4, 2),
                ("t", 128, 1, 4, 4, 4, 4)]
CONFIGS_TALL16 = [("t", 256, 1, 4, 4, 1), ("t", 128, 2, 4, 2, 1), ("t", 256, 2, 3, 4, 1)]
# kernels/qmatmul_wg.tl (sm_90a warpgroup mma) for larger m: ("wg", BN, BM, S[, PB[, MB]]),
# BN / 64 warpgroups over BN columns, BM rows a tile, S slots, MB blocks an SM, PB persistent
# blocks sharing the tiles' steps (without PB: each of SMS and SMS rounded down to a
# multiple of 16, tl.ops's choice; PB None: twice the latter, for MB = 2).
CONFIGS_WG = [("wg", 128, 256, 4), ("wg", 128, 256, 3), ("wg", 128, 128, 5), ("wg", 128, 128, 5, None, 2),
              ("wg", 64, 128, 6), ("wg", 128, 64, 6), ("wg", 64, 64, 8), ("wg", 128, 64, 8, None, 2),
              ("wg", 128, 32, 8, None, 2), ("wg", 128, 96, 6, None, 2), ("wg", 128, 160, 5),
              ("wg", 128, 192, 4)]
SMS = 132  # the device's SMs (main() asks torch)


def parse_cfg(cfg):
    """A candidate's parameters: m8, tall, BN, W, S, KS, WN, MT."""
    c = dict(m8=cfg[0] == "m8", tall=cfg[0] == "t", wg=cfg[0] == "wg", wn=1, mt=1, ks=1, r=1)
    v = cfg[1:] if isinstance(cfg[0], str) else cfg
    if c["wg"]:
        c.update(bn=v[0], bm=v[1], s=v[2], w=1, pbn=64, rows=v[1], pb=v[3] if len(v) > 3 else SMS,
                 mb=v[4] if len(v) > 4 else 1)
        return c
    c.update(bn=v[0], w=v[1], s=v[2])
    if c["tall"]:
        c.update(wn=v[3], mt=v[4], ks=v[5] if len(v) > 5 else 1)
    elif len(v) > 3:
        c["ks"] = v[3]
        if c["m8"] and len(v) > 4:
            c["r"] = v[4]
    c["pbn"] = c["bn"] // c["wn"]  # the packing's block width
    c["rows"] = 8 * c["r"] if c["m8"] else 16 * c["mt"]
    return c


ONLY = None  # --only m8|t|base|wg: one family of candidates


def configs(m):
    if ONLY:
        fam = {"m8": CONFIGS_M8 if m <= 8 else CONFIGS_M16 if m <= 16 else [], "t": CONFIGS_TALL16 + CONFIGS_TALL,
               "base": CONFIGS, "wg": CONFIGS_WG}[ONLY]
        return fam
    if m <= 8:
        return CONFIGS + CONFIGS_M8
    if m <= 16:
        return CONFIGS + CONFIGS_TALL16 + CONFIGS_M16
    return CONFIGS[3:4] + CONFIGS_TALL16 + CONFIGS_TALL + CONFIGS_WG


def cfg_defines(c, k, n, wt):
    if c["wg"]:
        return dict(K=k, N=n, G=G, BN=c["bn"], BM=c["bm"], S=c["s"], ZP=ZP, WT=wt, PB=c["pb"], MB=c["mb"])
    d = dict(K=k, N=n, G=G, BN=c["bn"], W=c["w"], S=c["s"], ZP=ZP, WT=wt, KS=c["ks"])
    if c["tall"]:
        d.update(WN=c["wn"], MT=c["mt"])
    if c["m8"] and SA:
        d["SA"] = 1
    if c["r"] > 1:
        d["R"] = c["r"]
    return d


def run_instance(tlbin, defines, args, extra=(), m8=False, wg=False):
    """tl-run on qmatmul.tl, on qmatmul_m8.tl's kernel with m8, or on
    qmatmul_wg.tl with wg (and its tensor map over a)."""
    if wg:
        return tl_run(tlbin, KERNEL_WG, defines, wg_args(args, defines), extra)
    if m8:
        return tl_run(tlbin, KERNEL_M8, defines, args, ["--kernel", "qmatmul_m8"] + list(extra))
    return tl_run(tlbin, KERNEL, defines, args, extra)


def wg_args(args, d):
    """qmatmul_wg.tl's arguments: its tensor maps over a, b and s, with b
    as [N / 64, K / 4, 128] bytes (16 rows of 128 a step of 64 k, a column
    tile's box) and s as [K / G, 1 + ZP, N] (.npy files are reshaped into
    copies next to them)."""
    n, k, g, zp = d["N"], d["K"], d["G"], d["ZP"]
    shapes = {"b": (n // 64, k // 4, 128), "s": (k // g, 1 + zp, n)}
    out = dict(args, ta="tmap:a", tb="tmap:b", ts="tmap:s")
    for name, shape in shapes.items():
        v = args[name]
        if v.endswith(".npy"):
            import numpy as np
            path = v[:-4] + ".3d.npy"
            np.save(path, np.load(v).reshape(shape))
            out[name] = path
        else:
            kind, dt, _ = v.split(":")
            out[name] = "%s:%s:%s" % (kind, dt, "x".join(str(x) for x in shape))
    return out


ZP = 0  # --zp: zero points per group (the scales buffer [K / G, 2, N])
WT = "i4"


def bits_of(wt):
    return qmatmul.dtype_info(wt)[1]


def ws_args(m, n, bn, ks, rows, pb=None):
    """The split reduction's workspace and locks (unused when KS = 1);
    with pb, qmatmul_wg.tl's stream reduction's."""
    rb = (m + rows - 1) // rows
    if pb:
        return dict(ws="zeros:f32:%d" % (2 * pb * bn * rows), locks="zeros:u32:%d" % (2 * pb))
    if ks == 1:
        return dict(ws="zeros:f32:4", locks="zeros:u32:1")
    return dict(ws="zeros:f32:%d" % (rb * n * ks * rows), locks="zeros:u32:%d" % (rb * n // bn))


def bench_tl(tlbin, m, n, k, cfg, wt=None):
    c = parse_cfg(cfg)
    wt = wt or WT
    bn, pbn, ks = c["bn"], c["pbn"], c["ks"]
    if (n % bn or k % (c["w"] * G * ks) or G * pbn * bits_of(wt) % 4096
            or (c["wg"] and (bits_of(wt) != 4 or k % 128))):
        return None
    args = dict(a="rand:f16:%dx%d" % (m, k),
                b="rand:u8:%dx%dx%dx32x16" % (n // pbn, k // G, G * pbn * bits_of(wt) // 4096),
                s="rand:f16:%dx%d" % (k // G * (1 + ZP), n), c="zeros:f16:%dx%d" % (m, n),
                m=str(m), **ws_args(m, n, bn, ks, c["rows"], c.get("pb")))
    extra = ["--seed", "1", "--json", "--no-vm-check"]
    if c["m8"]:  # the ring step's weight bytes, for the SASS line's per-byte figure
        extra += ["--loop-bytes", str(c["w"] * G * bn * bits_of(wt) // 8)]
    rc, out = run_instance(tlbin, cfg_defines(c, k, n, wt), args, extra, c["m8"], c["wg"])
    ms = median_of(out)
    sass = sass_of(out)
    if sass and sass["per_byte"] is not None:
        print("  %s %s: hot loop %d instructions a warp step, %.3f a weight byte (%s)" % (
            wt, cfg, sass["instructions"], sass["per_byte"],
            ", ".join("%s %d" % kv for kv in sass["mix"].items())))
    if ms is not None:
        return ms
    if "does not hold" not in out and "shared memory" not in out:
        print("  tl-run failed (%s): %s" % (cfg, out.strip()[-300:]))
    return None


def check_tl(tlbin, m, n, k, cfg, seed):
    c = parse_cfg(cfg)
    bn, w, ks, m8 = c["pbn"], c["w"], c["ks"], c["m8"]
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "q")
        qmatmul.gen(p, m, k, n, G, bn, seed, ZP, wt=WT)
        args = dict(a=p + ".a.npy", b=p + ".b.npy", s=p + ".s.npy",
                    c="zeros:f16:%dx%d" % (m, n), m=str(m), **ws_args(m, n, c["bn"], ks, c["rows"], c.get("pb")))
        rc, out = run_instance(tlbin, cfg_defines(c, k, n, WT), args,
                               ["--no-vm-check", "--save", "c=%s.c.npy" % p], m8, c["wg"])
        if rc == 0 and cfg == CONFIGS[0]:
            # The packer in tl, on the GPU, against the NumPy packer's bytes.
            prc, pout = tl_run(
                tlbin, PACKER, dict(K=k, N=n, G=G, BN=bn, WT=WT),
                dict(w="%s.wq.npy" % p,
                     out="zeros:u8:%dx%dx%dx32x16" % (n // bn, k // G, G * bn * bits_of(WT) // 4096)),
                ["--no-vm-check", "--check", "out=%s.b.npy" % p])
            print("  packer (tl, GPU) k=%d n=%d: %s" % (k, n, pout.strip()[-200:]))
            if prc:
                return False
        if rc and "bytes of shared memory" in out:
            print("  check m=%d n=%d k=%d %s: skipped, the instance does not fit "
                  "shared memory" % (m, n, k, cfg))
            return True
        if rc:
            print("  check m=%d n=%d k=%d %s: tl-run failed: %s" % (m, n, k, cfg, out.strip()[-300:]))
            return False
        try:
            qmatmul.check(p, w, False, sa=bool(m8 and SA))
        except SystemExit as e:
            print("  check m=%d n=%d k=%d %s: FAILED %s" % (m, n, k, cfg, e))
            return False
        return True


def main():
    tlbin = "build-dev/bin"
    if "--bin" in sys.argv:
        tlbin = sys.argv[sys.argv.index("--bin") + 1]
    quick = "--quick" in sys.argv
    global ZP, WT, SA, ONLY
    if "--only" in sys.argv:
        ONLY = sys.argv[sys.argv.index("--only") + 1]
    if "--wg-configs" in sys.argv:  # BNxBMxS[xPB[xMB]],...: replaces CONFIGS_WG
        spec = sys.argv[sys.argv.index("--wg-configs") + 1]
        CONFIGS_WG[:] = [("wg",) + tuple(int(x) for x in c.split("x")) for c in spec.split(",")]
    ZP = 1 if "--zp" in sys.argv else 0
    SA = 1 if "--sa" in sys.argv else 0
    WT = "u4" if ZP else "i4"
    if "--wt" in sys.argv:
        WT = sys.argv[sys.argv.index("--wt") + 1]
    types = []
    if "--types" in sys.argv:
        types = sys.argv[sys.argv.index("--types") + 1].split(",")
    os.environ["TL_BIN"] = tlbin  # scripts/qmatmul.py's tl-dtype
    ms = (1,) if quick else (1, 16)
    if "--m" in sys.argv:
        ms = tuple(int(v) for v in sys.argv[sys.argv.index("--m") + 1].split(","))
    models = ("70B", "8B")
    if "--models" in sys.argv:
        models = tuple(sys.argv[sys.argv.index("--models") + 1].split(","))
    import torch
    global SMS
    SMS = torch.cuda.get_device_properties(0).multi_processor_count
    pbs = sorted({SMS // 16 * 16 or SMS, SMS})
    def wg_pbs(c):
        """The candidate with its PB: each of pbs without one, twice the
        SMs rounded down to 16 for None."""
        if len(c) == 4:
            return [c + (pb,) for pb in pbs]
        return [c[:4] + (2 * pbs[0],) + c[5:]] if c[4] is None else [c]
    CONFIGS_WG[:] = [x for c in CONFIGS_WG for x in wg_pbs(c)]
    from peers import copy_bandwidth, w4_peers  # the same flush and median as peers.py
    print("device:", torch.cuda.get_device_name(), "torch", torch.__version__,
          "weights", WT, "zero points" if ZP else "", "m8 scales after the sum" if SA else "")
    bw = copy_bandwidth()

    ok = True
    checks = [(1, 8192, 8192), (16, 8192, 28672), (5, 10240, 8192), (100, 8192, 8192)]
    if ONLY == "wg":
        checks = checks[3:]
    for (m, n, k) in [] if "--no-checks" in sys.argv else checks:
        cands = CONFIGS[:3] + [(64, 4, 4, 4)] + ([CONFIGS_M8[0], CONFIGS_M8[4]] if m <= 8 else
                                                 [CONFIGS_M16[0]] if m <= 16 else [])
        if m > 16:
            cands = [CONFIGS_TALL[0], CONFIGS_TALL[4], CONFIGS_TALL[6], CONFIGS_TALL[8], CONFIGS_TALL16[0]]
            if ONLY == "wg":
                cands = []
            cands += [CONFIGS_WG[i] for i in sorted({0, len(CONFIGS_WG) // 2, len(CONFIGS_WG) - 1})]
        for cfg in cands:
            good = check_tl(tlbin, m, n, k, cfg, seed=m * 7 + k)
            ok = ok and good
            print("check m=%d n=%d k=%d BN,W,S=%s: %s" % (m, n, k, cfg, "ok" if good else "FAILED"))

    rows = []
    for model, shapes in (("70B", SHAPES_70B), ("8B", SHAPES_8B)):
        if model not in models:
            continue
        for m in ms:
            tot = {"tl": 0.0, "cublas_f16": 0.0, "tinygemm_int4": 0.0, "roof": 0.0}
            for name, n, k in shapes:
                must = k * n * bits_of(WT) // 8 + (k // G) * n * 2 * (1 + ZP) + m * k * 2 + m * n * 2
                roof = must / bw * 1e3
                best = None
                for cfg in configs(m):
                    t = bench_tl(tlbin, m, n, k, cfg)
                    if t is not None:
                        print("  %s %s m=%d %s: %.4f ms" % (model, name, m, cfg, t))
                        if best is None or t < best[0]:
                            best = (t, cfg)
                p = w4_peers(m, n, k, G)
                line = "%s %-8s m=%-3d N=%-6d K=%-6d TL %.4f ms %s (%.0f%% of roofline %.4f ms)" % (
                    model, name, m, n, k, best[0], best[1], 100 * roof / best[0], roof)
                for kk, v in p.items():
                    line += " | %s %.4f ms" % (kk, v)
                    tot[kk] += v
                tot["tl"] += best[0]
                tot["roof"] += roof
                print(line)
                rows.append(line)
            summ = "%s m=%d sum of 4: TL %.4f ms, roofline %.4f ms (%.0f%%), cuBLAS f16 %.4f ms, tinygemm %.4f ms" % (
                model, m, tot["tl"], tot["roof"], 100 * tot["roof"] / tot["tl"], tot["cublas_f16"], tot["tinygemm_int4"])
            print(summ)
            rows.append(summ)
    if types:
        n = k = 8192
        p = w4_peers(1, n, k, G)
        rows.append("peers m=1 N=K=8192: " + ", ".join("%s %.4f ms" % kv for kv in p.items()))
        print(rows[-1])
    for wt in types:
        must = k * n * bits_of(wt) // 8 + (k // G) * n * 2 + k * 2 + n * 2
        roof = must / bw * 1e3
        best = None
        for cfg in configs(1) + [(64, 8, 2), (128, 4, 2)]:
            t = bench_tl(tlbin, 1, n, k, cfg, wt)
            if t is not None and (best is None or t < best[0]):
                best = (t, cfg)
        if best is None:
            rows.append("type %-7s no instance ran" % wt)
            print(rows[-1])
            continue
        line = "type %-7s m=1 N=K=8192: TL %.4f ms %s, %.0f GB/s, %.0f%% of its roofline %.4f ms" % (
            wt, best[0], best[1], must / best[0] / 1e6, 100 * roof / best[0], roof)
        print(line)
        rows.append(line)
    summary(bw, "skipped" if "--no-checks" in sys.argv else "passed" if ok else "FAILED", rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
