"""Inputs, packing and references of the pipelined quantised matmul
(kernels/qmatmul.tl) for every weight type WT of 1..8 bits and A/C/scale
type AT (f16 or bf16).

  qmatmul.py gen PREFIX M K N G BN SEED [ZP] [--wt WT] [--at AT] [--pc]
      writes PREFIX.a.npy (AT [M, K]), PREFIX.w.npy (the codes, one per
      uint8, [K, N]), PREFIX.s.npy (AT [K / G, 1 + ZP, N]: each group's
      scales and, with ZP = 1, zero points, integers in the code range;
      with --pc one scale (and zero point) per column, [1, 1 + ZP, N]),
      PREFIX.b.npy (the codes packed for block width BN: u8 [N / BN, K / G,
      CH, 32, 16], CH = G * BN * bits / 4096) and PREFIX.wq.npy (the codes
      as a WT buffer's bytes, the input of kernels/qpack.tl: element i at
      bits [i * bits, (i + 1) * bits)), and PREFIX.meta.json (the sizes and
      types, for check). AT arrays that NumPy lacks (bf16) are stored as
      their bytes (uint8), as tl-run exchanges them.
  qmatmul.py check PREFIX W [--exact] [--ks KS] [--sa] [--stream PB,BN,BM]
      compares PREFIX.c.npy (AT [M, N]) with the reference. --exact: bit
      for bit with the block VM's order of sums (each of the W warps sums
      its groups in k order in f32, then the W partial sums are added in
      warp order; with the k range split over KS blocks, per part, and the
      parts added in order; --stream: qmatmul_wg.tl's tiles of BN x BM
      over PB blocks, each tile's parts as its schedule splits it, summed
      in k order from +0 and added in order from +0); otherwise the
      norm-wise error against the float64
      product of A and the dequantised weights:
          max_i |c_i - ref_i| / (sum_k |a_ik| |w_kj|)  <=  2^-10 (f16),
                                                         2^-7 (bf16)
      i.e. every element within a rounding of the output plus f32
      accumulation error, measured against the size of its own sum.
      --sa: the kernel applied the scales to each group's f32 sum
      (qmatmul_m8.tl -D SA=1): the exact order is that one, and the float64
      reference uses the unrounded products (value - zero) * scale.

Dequantisation: w = (value(code) - zero) * scale rounded to AT (zero = 0
without zero points); value(code) and value - zero are exact in AT, and
the product of two AT values is exact in float64, so the rounding happens
once, as in the kernel's tl.mul. value(code) follows docs/dtypes.md: uN
unsigned, iN two's complement, fNeXmY with bias 2^(X-1) - 1 and
subnormals, f8e4m3's S.1111.111 NaN and f8e5m2's all-ones exponent
(inf/NaN) never drawn.

The packed order is the kernel's #arr layout, restated: lane t = r + 4 c
holds the codes of its mma B fragments, k = 16 ks + 8 i1 + 2 r + i0,
n = 16 nh + 8 nl + c, in the order (ks, nh, nl, i1, i0), except that the
cast recipe's interleave d (the recipe WT -> AT puts the values at input
positions p and p + d of each block of 2d into one output word; printed by
`tl-dtype --recipe WT AT` as value_of) moves i0 ahead of the d codes it
pairs with: d = 2: (ks, nh, nl, i0, i1); d = 4: (ks, nh, i0, nl, i1);
d = 8, 16: nh split into (nh / P, nh % P), P = d / 4, and (ks, nh / P, i0,
nh % P, nl, i1).
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np


def dtype_info(name):
    """(kind, bits, exp, man) of a TL type name: kind 'u', 'i' or 'f'."""
    if name[0] in "ui" and name[1:].isdigit():
        return name[0], int(name[1:]), 0, 0
    if name == "f16":
        return "f", 16, 5, 10
    if name == "bf16":
        return "f", 16, 8, 7
    body = name[1:]
    bits, rest = body.split("e")
    e, m = rest.split("m")
    return "f", int(bits), int(e), int(m)


def valid_codes(wt):
    """Every code of wt that is a finite number."""
    kind, bits, e, m = dtype_info(wt)
    codes = np.arange(1 << bits)
    if wt == "f8e4m3":
        codes = codes[(codes & 0x7F) != 0x7F]
    elif wt == "f8e5m2":
        codes = codes[((codes >> 2) & 0x1F) != 0x1F]
    return codes


def decode(wt, codes):
    """The values of wt's codes (any integer array), as float64."""
    kind, bits, e, m = dtype_info(wt)
    c = codes.astype(np.int64)
    if kind == "u":
        return c.astype(np.float64)
    if kind == "i":
        return np.where(c >= 1 << (bits - 1), c - (1 << bits), c).astype(np.float64)
    sign = np.where((c >> (bits - 1)) & 1, -1.0, 1.0)
    ex = (c >> m) & ((1 << e) - 1)
    man = (c & ((1 << m) - 1)).astype(np.float64)
    bias = (1 << (e - 1)) - 1
    normal = (1.0 + man / (1 << m)) * np.exp2(ex - bias)
    sub = (man / (1 << m)) * np.exp2(1 - bias)
    return sign * np.where(ex == 0, sub, normal)


def to_bf16_bits(x):
    """float64 values (exact in f32) to bf16 bits, rounded to nearest even."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def round_at(x, at):
    """float64 -> AT values (as float64), one rounding to nearest even."""
    if at == "f16":
        return np.asarray(x, np.float64).astype(np.float16).astype(np.float64)
    # x is exact in f32 here (a product of two bf16 values, or a sum
    # computed in f32), so rounding through f32 is one rounding.
    return from_bf16_bits(to_bf16_bits(np.asarray(x, np.float64).astype(np.float32)))


def save_at(path, x, at):
    """Stores AT values: f16 as float16, bf16 as its little-endian bytes."""
    if at == "f16":
        np.save(path, np.asarray(x, np.float64).astype(np.float16))
    else:
        np.save(path, to_bf16_bits(x).reshape(-1).view(np.uint8))


def load_at(path, at, shape):
    x = np.load(path)
    if at == "f16":
        assert x.dtype == np.float16, x.dtype
        return x.astype(np.float64).reshape(shape)
    assert x.dtype == np.uint8, x.dtype
    return from_bf16_bits(x.view(np.uint16)).reshape(shape)


def tl_dtype_tool():
    """tl-dtype: from $TL_BIN, else next to tl-run on PATH."""
    d = os.environ.get("TL_BIN")
    if d:
        return os.path.join(d, "tl-dtype")
    return shutil.which("tl-dtype") or "tl-dtype"


def interleave(wt, at):
    """The recipe's interleave d (see above), 0 when its order is not of
    that form, from the value_of line of `tl-dtype --recipe WT AT`."""
    out = subprocess.run([tl_dtype_tool(), "--recipe", wt, at], check=True,
                         capture_output=True, text=True).stdout
    line = [l for l in out.splitlines() if l.startswith("# value_of:")][0]
    v = [int(x) for x in line.split(":")[1].split()]
    d = 1
    while 2 * d <= len(v):
        if len(v) % (2 * d) == 0 and all(
                v[2 * j] == j // d * 2 * d + j % d and v[2 * j + 1] == v[2 * j] + d
                for j in range(len(v) // 2)):
            return d
        d *= 2
    return 0


def unravel(dims, count):
    """The local index j = 0 .. count - 1 as the named digits of dims
    (outermost first), [1, count] each, and the lane index t, [32, 1]."""
    idx, rest = {}, np.arange(count)[None, :]
    for name, size in reversed(dims):
        idx[name], rest = rest % size, rest // size
    return idx, np.arange(32)[:, None]


def lane_order(g, bn, d):
    """(k, n) of lane t's local element j, [32, G * BN / 32] each."""
    d = max(d, 1)
    p = max(d // 4, 1)
    dims = [("ks", g // 16), ("nhh", bn // 16 // p)]
    if d <= 2:
        dims.append(("nl", 2))
    if d > 1:
        dims.append(("i0", 2))
    dims.append(("nhl", p))
    if d > 2:
        dims.append(("nl", 2))
    dims.append(("i1", 2))
    if d == 1:
        dims.append(("i0", 2))
    idx, t = unravel(dims, g * bn // 32)
    nh = idx["nhh"] * p + idx["nhl"]
    k = 16 * idx["ks"] + 8 * idx["i1"] + 2 * (t % 4) + idx["i0"]
    n = 16 * nh + 8 * idx["nl"] + t // 4
    return k, n


def pack_bits(codes, bits):
    """Codes [..., L] (L * bits a multiple of 8) packed little-endian into
    bytes [..., L * bits / 8]: code i at bits [i * bits, (i + 1) * bits)."""
    c = codes.astype(np.uint8)
    shape = c.shape
    bitarr = np.unpackbits(c[..., None], axis=-1, bitorder="little")[..., :bits]
    bitarr = bitarr.reshape(shape[:-1] + (shape[-1] * bits,))
    return np.packbits(bitarr, axis=-1, bitorder="little")


def pack(codes, g, bn, bits, d):
    """Codes [K, N] -> u8 [N / BN, K / G, CH, 32, 16], the weights of
    kernels/qmatmul.tl and kernels/qmatmul_m8.tl alike."""
    kk, nn = codes.shape
    c = codes.reshape(kk // g, g, nn // bn, bn)
    k, n = lane_order(g, bn, d)
    v = c[:, k, :, n]  # [32, G*BN/32, K/G, N/BN]
    v = v.transpose(3, 2, 0, 1)  # [N/BN, K/G, 32, G*BN/32]
    byte = pack_bits(v, bits)  # [N/BN, K/G, 32, G*BN*bits/256]
    nb, kg = byte.shape[0], byte.shape[1]
    ch = g * bn * bits // 4096
    byte = byte.reshape(nb, kg, 32, ch, 16).transpose(0, 1, 3, 2, 4)
    return np.ascontiguousarray(byte)


def dequant(wt, at, codes, s):
    """s: AT values [K / G, 1 + ZP, N] (float64); [1, 1 + ZP, N] for a
    scale (and zero point) per column."""
    g = codes.shape[0] // s.shape[0]
    scale = np.repeat(s[:, 0, :], g, axis=0)
    zero = np.repeat(s[:, 1, :], g, axis=0) if s.shape[1] == 2 else 0.0
    return round_at((decode(wt, codes) - zero) * scale, at)


def gen(prefix, m, k, n, g, bn, seed, zp=0, wt="i4", at="f16", pc=False):
    kind, bits, _, _ = dtype_info(wt)
    rng = np.random.default_rng(seed)
    a = round_at(rng.uniform(-1, 1, size=(m, k)), at)
    w = rng.choice(valid_codes(wt), size=(k, n)).astype(np.uint8)
    # Scales keep |w| near 1 for every type: 2^-(the code range's log2).
    span = np.abs(decode(wt, valid_codes(wt))).max()
    groups = 1 if pc else k // g
    s = round_at(rng.uniform(-1, 1, size=(groups, 1, n)) / max(span, 1), at)
    if zp:
        z = rng.integers(0, 1 << bits, size=(groups, 1, n))
        z = decode(wt, z) if kind == "i" else z.astype(np.float64)
        s = np.concatenate([s, z], axis=1)
    save_at(prefix + ".a.npy", a, at)
    np.save(prefix + ".w.npy", w)
    save_at(prefix + ".s.npy", s, at)
    np.save(prefix + ".b.npy", pack(w, g, bn, bits, interleave(wt, at)))
    wq = pack_bits(w.reshape(-1), bits)
    np.save(prefix + ".wq.npy", wq.view(np.int8) if wt == "i8" else wq)
    with open(prefix + ".meta.json", "w") as f:
        json.dump(dict(m=m, k=k, n=n, g=g, zp=zp, wt=wt, at=at, pc=int(pc)), f)


def reference_exact(a, wd, g, warps, ks=1):
    """The block VM's order: the k range is split into KS equal parts (one
    block each); in each, warp w sums the part's groups w, w + W, ... in k
    order (products of two AT values are exact in f32, each addition
    rounds once), then the warps' partial sums are added in warp order;
    the KS parts' sums are added in part order."""
    m, k = a.shape
    a32, w32 = a.astype(np.float32), wd.astype(np.float32)
    groups = k // g // ks
    total = None
    for sp in range(ks):
        part = [np.zeros((m, wd.shape[1]), np.float32) for _ in range(warps)]
        for grp in range(sp * groups, (sp + 1) * groups):
            p = part[grp % warps]
            for kk in range(grp * g, grp * g + g):
                p += np.outer(a32[:, kk], w32[kk])
        block = part[0]
        for p in part[1:]:
            block = block + p
        total = block if total is None else total + block
    return total.astype(np.float64)


def stream_parts(m, k, n, pb, bn, bm):
    """kernels/qmatmul_wg.tl's schedule over PB blocks: for each tile
    (rows, columns), its parts' k ranges in block order. Of the T tiles
    (tile t: column tile t mod (N / BN) of row tile t / (N / BN)),
    the first T mod PB are split into runs of U steps of 64 k (U the even
    ceiling of their steps over PB); the rest are whole."""
    nk, nrb = k // 64, -(-m // bm)
    tiles = nrb * (n // bn)
    tsk = tiles % pb
    u = -(-(tsk * nk) // pb)
    u += u % 2
    for t in range(tiles):
        bi, bj = t // (n // bn), t % (n // bn)
        cuts = [0, nk]
        if t < tsk:
            cuts = sorted({0, nk} | {c * u - t * nk for c in range(pb) if 0 < c * u - t * nk < nk})
        yield (slice(bi * bm, min(m, bi * bm + bm)), slice(bj * bn, bj * bn + bn),
               [(64 * lo, 64 * hi) for lo, hi in zip(cuts, cuts[1:])])


def reference_stream(a, wd, pb, bn, bm):
    """qmatmul_wg.tl's order: each part of a tile sums its k range in
    order from +0 in f32, and the parts are added in order from +0."""
    m, k = a.shape
    a32, w32 = a.astype(np.float32), wd.astype(np.float32)
    total = np.zeros((m, wd.shape[1]), np.float32)
    for rows, cols, parts in stream_parts(m, k, wd.shape[1], pb, bn, bm):
        acc = np.zeros((rows.stop - rows.start, bn), np.float32)
        for lo, hi in parts:
            p = np.zeros_like(acc)
            for kk in range(lo, hi):
                p += np.outer(a32[rows, kk], w32[kk, cols])
            acc += p
        total[rows, cols] = acc
    return total.astype(np.float64)


def fma32(x, y, z):
    """x * y + z rounded once to f32, elementwise (float32 arrays): the
    product is exact in float64, the sum rounds once there, and where that
    double lands exactly between two f32 values (the one case a second
    rounding can get wrong) the sum is redone in exact rationals."""
    from fractions import Fraction
    x, y, z = np.broadcast_arrays(*(np.asarray(v, np.float32) for v in (x, y, z)))
    d = x.astype(np.float64) * y.astype(np.float64) + z.astype(np.float64)
    r = d.astype(np.float32)
    n = np.nextafter(r, np.where(d > r, np.float32(np.inf), np.float32(-np.inf)).astype(np.float32))
    mid = np.isfinite(d) & (d != r.astype(np.float64)) & (d == (r.astype(np.float64) + n.astype(np.float64)) / 2)
    for i in zip(*np.nonzero(mid)):
        e = Fraction(float(x[i])) * Fraction(float(y[i])) + Fraction(float(z[i]))
        dr, dn = abs(e - Fraction(float(r[i]))), abs(e - Fraction(float(n[i])))
        even = (int(r[i].view(np.uint32)) & 1) == 0
        r[i] = r[i] if dr < dn or (dr == dn and even) else n[i]
    return r


def reference_exact_sa(a, wz, s, g, warps, ks=1):
    """The block VM's order with the scales applied after each group's sum
    (qmatmul_m8.tl -D SA=1): per group, the products of A and the unscaled
    (code - zero) values summed in k order from zero in f32, the sum times
    the group's f32 scale added to the warp's partial sum, rounded once
    (tl.fma); then warps and parts as reference_exact."""
    m, k = a.shape
    a32, w32 = a.astype(np.float32), wz.astype(np.float32)
    s32 = s.astype(np.float32)
    groups = k // g // ks
    total = None
    for sp in range(ks):
        part = [np.zeros((m, wz.shape[1]), np.float32) for _ in range(warps)]
        for grp in range(sp * groups, (sp + 1) * groups):
            p = np.zeros((m, wz.shape[1]), np.float32)
            for kk in range(grp * g, grp * g + g):
                p += np.outer(a32[:, kk], w32[kk])
            row = s32[grp if s32.shape[0] > 1 else 0]
            part[grp % warps] = fma32(p, row, part[grp % warps])
        block = part[0]
        for p in part[1:]:
            block = block + p
        total = block if total is None else total + block
    return total.astype(np.float64)


def check(prefix, warps, exact, ks=1, sa=False, stream=None):
    meta = json.load(open(prefix + ".meta.json"))
    m, k, n, g, zp = (meta[x] for x in ("m", "k", "n", "g", "zp"))
    wt, at = meta["wt"], meta["at"]
    w = np.load(prefix + ".w.npy")
    a = load_at(prefix + ".a.npy", at, (m, k))
    s = load_at(prefix + ".s.npy", at, (1 if meta.get("pc") else k // g, 1 + zp, n))
    c = load_at(prefix + ".c.npy", at, (m, n))
    wd = dequant(wt, at, w, s)
    if exact and sa:
        zero = np.repeat(s[:, 1, :], k // s.shape[0], axis=0) if zp else 0.0
        wz = decode(wt, w) - zero
        ref = round_at(reference_exact_sa(a, wz, s[:, 0, :], g, warps, ks), at)
    elif exact and stream:
        ref = round_at(reference_stream(a, wd, *stream), at)
    elif exact:
        ref = round_at(reference_exact(a, wd, g, warps, ks), at)
    if exact:
        bad = np.argwhere(ref != c)
        if len(bad):
            i, j = bad[0]
            sys.exit("%d elements differ; first [%d, %d]: got %r, expected %r"
                     % (len(bad), i, j, c[i, j], ref[i, j]))
        print("ok: %d x %d bit-exact" % (m, n))
        return
    if sa:  # the scales are not rounded into the weights
        zero = np.repeat(s[:, 1, :], k // s.shape[0], axis=0) if zp else 0.0
        wd = (decode(wt, w) - zero) * np.repeat(s[:, 0, :], k // s.shape[0], axis=0)
    ref = a @ wd
    scale = np.abs(a) @ np.abs(wd)
    err = np.abs(c - ref) / np.maximum(scale, 1e-30)
    worst = np.unravel_index(np.argmax(err), err.shape)
    bound = 2.0 ** -10 if at == "f16" else 2.0 ** -7
    if not np.all(np.isfinite(c)) or err[worst] > bound:
        sys.exit("error %.3g at %s: got %r, expected %r (bound %g)"
                 % (err[worst], worst, c[worst], ref[worst], bound))
    print("ok: %d x %d, worst norm-wise error %.3g" % (m, n, err[worst]))


def main(argv):
    opts = {"--wt": "i4", "--at": "f16", "--ks": "1", "--stream": ""}
    pc = "--pc" in argv
    argv = [x for x in argv if x != "--pc"]
    rest = []
    it = iter(argv)
    for x in it:
        if x in opts:
            opts[x] = next(it)
        else:
            rest.append(x)
    if rest[0] == "gen":
        gen(rest[1], *(int(v) for v in rest[2:]), wt=opts["--wt"],
            at=opts["--at"], pc=pc)
    elif rest[0] == "check":
        stream = tuple(int(v) for v in opts["--stream"].split(",")) if opts["--stream"] else None
        check(rest[1], int(rest[2]), "--exact" in rest, int(opts["--ks"]), "--sa" in rest, stream)
    else:
        sys.exit("usage: qmatmul.py gen|check ... (see the docstring)")


if __name__ == "__main__":
    main(sys.argv[1:])
