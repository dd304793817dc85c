"""Kernels, inputs and NumPy references of test/vm/simt/wgmma.test: one
warpgroup runs one simt.wgmma (m64nNkK) whose operands sit in shared
memory in one of the PTX ISA's canonical layouts.

  wgmma_ref.py gen DIR CASE     writes DIR/CASE.tl (the simt kernel),
                                DIR/CASE.img.npy (the shared memory image,
                                u8), DIR/CASE.a.npy (A, row major, for a
                                register A), DIR/CASE.c.npy (C) and
                                DIR/CASE.ref.npy (D)
  wgmma_ref.py gen-all DIR [BIN]
                                every case, and DIR/cases.txt: one line
                                per case, "name smem out_bytes flag", for
                                test/gpu/gpu_test.c's --wgmma DIR
  wgmma_ref.py run BIN DIR [ARG...]
                                generates and runs every case with
                                BIN/tl-run --simt (extra ARGs passed on)
  wgmma_ref.py cases            prints the case names

The image is laid out here from the canonical layouts as the PTX ISA
writes them (CuTe shapes and strides, "Canonical Layouts" of the wgmma
section), evaluated by a small layout evaluator, not from the VM's
address formula. The kernel copies the image into shared memory 16 bytes
a thread at a time, makes the writes visible to wgmma's async proxy
(simt.fence_proxy_async, as the GPU requires), makes the descriptors, loads C (and a register A)
with the mma.sync m16n8 fragment formulas of the PTX ISA, runs the
wgmma and stores D. Inputs are small multiples of 1/2 (integers for
s8/u8), so every sum is exact and D must match bit for bit."""
import os
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # only bf16 cases need it
    ml_dtypes = None

# name: (type, N, A source, a_major, b_major, A swizzle, B swizzle,
#        A's K slice in its tile or "loop" (every slice, in a chain),
#        scale_d)
CASES = {
    "f16_n8_none_k": ("f16", 8, "desc", "k", "k", "none", "none", 0, 1),
    "f16_n16_128b_k": ("f16", 16, "desc", "k", "k", "128B", "128B", 0, 1),
    "f16_n32_128b_k_slice3": ("f16", 32, "desc", "k", "k", "128B", "64B", 3, 1),
    "f16_n64_64b_mn": ("f16", 64, "desc", "mn", "mn", "64B", "128B", 0, 1),
    "f16_n24_32b_mn_k": ("f16", 24, "desc", "mn", "k", "32B", "32B", 0, 0),
    "f16_n16_none_mn": ("f16", 16, "desc", "mn", "mn", "none", "none", 0, "pred"),
    "f16_n128_regs_128b_mn": ("f16", 128, "regs", "k", "mn", None, "128B", 0, 1),
    "bf16_n40_32b_k": ("bf16", 40, "desc", "k", "mn", "32B", "32B", 0, 1),
    "s8_n32_128b_k": ("s8", 32, "desc", "k", "k", "128B", "128B", 1, 1),
    "u8s8_n48_none_k": ("u8s8", 48, "desc", "k", "k", "none", "64B", 0, 1),
    "s8_n16_regs": ("s8", 16, "regs", "k", "k", None, "none", 0, 0),
    # A K loop: 64 x 64 A and 64 x N B in 128B swizzled rows, one chain of
    # wgmma ops stepping both descriptors by 32 bytes (2 in the address
    # field) through the rows.
    "f16_n32_128b_kloop": ("f16", 32, "desc", "k", "k", "128B", "128B", "loop", 1),
    "s8_n48_64b_kloop": ("s8", 48, "desc", "k", "k", "64B", "64B", "loop", 1),
}

CHUNKS = {"none": 1, "32B": 2, "64B": 4, "128B": 8}


def evaluate(shape, stride, i):
    """Offset of index i in a CuTe mode (shape, stride): colexicographic
    coordinates, the last extent unbounded."""
    off = 0
    for n, (s, d) in enumerate(zip(shape, stride)):
        c = i % s if n + 1 < len(shape) else i
        off += c * d
        i //= s
    return off


def canonical(major, swizzle, es, lbo, sbo):
    """The (mn, k) -> byte offset function of a canonical layout: the
    table's ((MN modes), (K modes)) : ((strides), (strides)) in units of
    elements (T = 16 / es of them a 16-byte chunk), LBO and SBO in bytes."""
    T = 16 // es
    s = CHUNKS[swizzle]
    L, S = lbo // es, sbo // es
    if major == "mn" and s == 1:
        mn, k = ((T, 1, 1 << 30), (1, T, S)), ((8, 1 << 30), (T, L))
    elif major == "mn":
        mn, k = ((T, s, 1 << 30), (1, T, L)), ((8, 1 << 30), (s * T, S))
    elif s == 1:
        mn, k = ((8, 1 << 30), (T, S)), ((T, 1 << 30), (1, L))
    else:
        mn, k = ((8, 1 << 30), (s * T, S)), ((T, 1 << 30), (1, T))
    return lambda i, j: es * (evaluate(*mn, i) + evaluate(*k, j))


def swizzle_addr(a, swizzle):
    """CuTe's Swizzle<B,4,3> on a byte address: bits [4, 4+B) ^= bits
    [7, 7+B), B = log2 of the 16-byte chunks of a row."""
    b = CHUNKS[swizzle].bit_length() - 1
    return a ^ (((a >> 7) & ((1 << b) - 1)) << 4)


def strides(major, swizzle, es, mn_extent, k_extent):
    """LBO and SBO (bytes) for a tile of mn_extent x k_extent, chosen so
    that both offsets are used where the layout has them."""
    s = CHUNKS[swizzle]
    T = 16 // es
    if major == "k" and s == 1:
        # K core matrices outermost: LBO past all the MN groups.
        return (mn_extent // 8) * 128, 128
    if major == "k":
        return 16, 8 * 16 * s
    if s == 1:
        # MN groups of T innermost (SBO), K groups of 8 (LBO) outside.
        return (mn_extent // T) * 128, 128
    # Atoms of s*T MN x 8 K: K groups (SBO) inside, MN atoms (LBO) outside.
    return (k_extent // 8) * 8 * 16 * s, 8 * 16 * s


def place(img, base, mat, major, swizzle, es, lbo, sbo):
    f = canonical(major, swizzle, es, lbo, sbo)
    raw = mat.view(np.uint8).reshape(mat.shape[0], mat.shape[1], es)
    for i in range(mat.shape[0]):
        for j in range(mat.shape[1]):
            a = swizzle_addr(base + f(i, j), swizzle)
            img[a:a + es] = raw[i, j]


def extent(major, swizzle, es, mn_extent, k_extent, lbo, sbo):
    f = canonical(major, swizzle, es, lbo, sbo)
    hi = max(f(i, j) for i in (0, mn_extent - 1) for j in (0, k_extent - 1))
    return (hi + es + 1023) // 1024 * 1024 + 1024


def gen(d, name):
    ty, N, asrc, am, bm, asw, bsw, slice_, scale_d = CASES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    if ty in ("f16", "bf16"):
        K, es = 16, 2
        npt = np.float16 if ty == "f16" else ml_dtypes.bfloat16
        at = bt = ty
        acc, cty, ety = "f32", np.float32, "f32"
        rand = lambda *s: (rng.integers(-6, 7, s) / 2).astype(npt)
    else:
        K, es = 32, 1
        at, bt = ("u8", "s8") if ty == "u8s8" else ("s8", "s8")
        acc, cty, ety = "s32", np.int32, "i32"
        rand8 = lambda t, *s: (rng.integers(0, 256, s).astype(np.uint8) if t == "u8"
                               else rng.integers(-128, 128, s).astype(np.int8))
    # A's tile is K wide, or a whole swizzle row for a K-major swizzled A,
    # of which the wgmma reads K elements from column slice_ * K.
    ka = K
    if asrc == "desc" and am == "k" and asw != "none":
        ka = 16 * CHUNKS[asw] // es
    loop = slice_ == "loop"
    kb = ka if loop else K  # B's K extent
    steps = ka // K if loop else 1
    if ty in ("f16", "bf16"):
        atile, b, c = rand(64, ka), rand(kb, N), rand(64, N).astype(cty)
    else:
        atile, b = rand8(at, 64, ka), rand8(bt, kb, N)
        c = rng.integers(-1000, 1000, (64, N)).astype(cty)
    a = atile if loop else atile[:, slice_ * K:(slice_ + 1) * K]
    img_size, a_base, b_base = 0, 0, 0
    parts = []
    if asrc == "desc":
        alb, asb = strides(am, asw, es, 64, ka)
        amat = atile  # indexed [mn, k] whatever the major order
        size = extent(am, asw, es, *amat.shape, alb, asb)
        parts.append((0, amat, am, asw, alb, asb))
        b_base = size
    blb, bsb = strides(bm, bsw, es, N, kb)
    bmat = np.ascontiguousarray(b.T)
    parts.append((b_base, bmat, bm, bsw, blb, bsb))
    img_size = b_base + extent(bm, bsw, es, *bmat.shape, blb, bsb)
    img = np.zeros(img_size, np.uint8)
    for base, mat, mj, sw, lb, sb in parts:
        place(img, base, mat, mj, sw, es, lb, sb)
    sd = 0 if scale_d == 0 else 1
    ref = a.astype(np.float64) @ b.astype(np.float64) + sd * c.astype(np.float64)
    ref = ref.astype(cty)
    p = lambda s: os.path.join(d, "%s.%s.npy" % (name, s))
    np.save(p("img"), img)
    np.save(p("a"), np.ascontiguousarray(a).view(np.uint8))
    np.save(p("c"), c)
    np.save(p("ref"), ref)
    # The kernel.
    tiles = N // 8
    L = []
    e = L.append
    e("func @wg(%img: !simt.ptr<global>, %a: !simt.ptr<global>, %c: !simt.ptr<global>, "
      "%out: !simt.ptr<global>, %flag: i32) attributes {kernel, threads = 128} {")
    e("  %tid = simt.thread_id {dim = \"x\"} : -> i32")
    for v in (0, 1, 2, 4, 8, 16, 32, 128):
        e("  %%k%d = arith.constant %d : i32" % (v, v))
    e("  %%nchunk = arith.constant %d : i32" % (img_size // 16))
    e("  %s = simt.smem_base : -> !simt.ptr<shared>")
    e("  scf.for %i = %tid to %nchunk step %k128 : i32 {")
    e("    %off = arith.muli %i, %k16 : i32")
    e("    %src = simt.ptr_add %img, %off : !simt.ptr<global>, i32 -> !simt.ptr<global>")
    e("    %dst = simt.ptr_add %s, %off : !simt.ptr<shared>, i32 -> !simt.ptr<shared>")
    e("    %v = simt.load %src : !simt.ptr<global> -> !simt.vec<4xi32>")
    e("    simt.store %v, %dst : !simt.vec<4xi32>, !simt.ptr<shared>")
    e("    scf.yield")
    e("  }")
    e("  simt.fence_proxy_async")
    e("  simt.barrier")
    if asrc == "desc":
        e("  %%aoff = arith.constant %d : i32" % (0 if loop else slice_ * K * es))
        e("  %as = simt.ptr_add %s, %aoff : !simt.ptr<shared>, i32 -> !simt.ptr<shared>")
        e("  %%da = simt.wgmma_desc %%as {swizzle = \"%s\", lbo = %d, sbo = %d} : "
          "!simt.ptr<shared> -> i64" % (asw, parts[0][4], parts[0][5]))
    e("  %%boff = arith.constant %d : i32" % b_base)
    e("  %bs = simt.ptr_add %s, %boff : !simt.ptr<shared>, i32 -> !simt.ptr<shared>")
    e("  %%db = simt.wgmma_desc %%bs {swizzle = \"%s\", lbo = %d, sbo = %d} : "
      "!simt.ptr<shared> -> i64" % (bsw, blb, bsb))
    # Fragment coordinates (mma.sync m16n8 C and A): lane l, group l / 4,
    # quad l % 4; warp w owns rows 16w..16w+15.
    e("  %lane = arith.remi %tid, %k32 : i32")
    e("  %warp = arith.divi %tid, %k32 : i32")
    e("  %grp = arith.divi %lane, %k4 : i32")
    e("  %quad = arith.remi %lane, %k4 : i32")
    e("  %w16 = arith.muli %warp, %k16 : i32")
    e("  %r0 = arith.addi %w16, %grp : i32")
    e("  %r1 = arith.addi %r0, %k8 : i32")
    e("  %q2 = arith.muli %quad, %k2 : i32")
    e("  %%nn = arith.constant %d : i32" % N)
    e("  %k4b = arith.constant 4 : i32")

    def at_(r, col, width, tag):
        # byte offset of element (r, col) of a row-major matrix of width
        e("  %%%s_w = arith.constant %d : i32" % (tag, width))
        e("  %%%s_m = arith.muli %s, %%%s_w : i32" % (tag, r, tag))
        e("  %%%s_e = arith.addi %%%s_m, %s : i32" % (tag, tag, col))
        e("  %%%s = arith.muli %%%s_e, %%k4b : i32" % (tag, tag))

    cvals = []
    for i in range(tiles):
        e("  %%col%d = arith.constant %d : i32" % (i, 8 * i))
        e("  %%c%d0 = arith.addi %%col%d, %%q2 : i32" % (i, i))
        e("  %%c%d1 = arith.addi %%c%d0, %%k1 : i32" % (i, i))
        elems = []
        for j, (r, cc) in enumerate((("%r0", "%%c%d0" % i), ("%r0", "%%c%d1" % i),
                                     ("%r1", "%%c%d0" % i), ("%r1", "%%c%d1" % i))):
            tag = "o%d_%d" % (i, j)
            at_(r, cc, N, tag)
            e("  %%p%s = simt.ptr_add %%c, %%%s : !simt.ptr<global>, i32 -> !simt.ptr<global>"
              % (tag, tag))
            e("  %%x%s = simt.load %%p%s : !simt.ptr<global> -> %s" % (tag, tag, ety))
            elems.append("%%x%s" % tag)
        e("  %%acc%d = simt.build %s : %s -> !simt.vec<4x%s>"
          % (i, ", ".join(elems), ", ".join([ety] * 4), ety))
        cvals.append("%%acc%d" % i)
    if asrc == "regs":
        # A fragment register j: rows g + 8 (j % 2), columns
        # 2q (16-bit) or 4q (8-bit) + (K / 2) (j / 2), 4 bytes each.
        words = []
        for j in range(4):
            r = "%r0" if j % 2 == 0 else "%r1"
            tag = "ar%d" % j
            per = 4 // es
            e("  %%%s_q = arith.muli %%quad, %%k%d : i32" % (tag, per))
            e("  %%%s_c = arith.constant %d : i32" % (tag, (K // 2) * (j // 2)))
            e("  %%%s_col = arith.addi %%%s_q, %%%s_c : i32" % (tag, tag, tag))
            e("  %%%s_w = arith.constant %d : i32" % (tag, K))
            e("  %%%s_m = arith.muli %s, %%%s_w : i32" % (tag, r, tag))
            e("  %%%s_e = arith.addi %%%s_m, %%%s_col : i32" % (tag, tag, tag))
            e("  %%%s_es = arith.constant %d : i32" % (tag, es))
            e("  %%%s_b = arith.muli %%%s_e, %%%s_es : i32" % (tag, tag, tag))
            e("  %%%s_p = simt.ptr_add %%a, %%%s_b : !simt.ptr<global>, i32 -> !simt.ptr<global>"
              % (tag, tag))
            e("  %%%s = simt.load %%%s_p : !simt.ptr<global> -> i32" % (tag, tag))
            words.append("%%%s" % tag)
        e("  %%areg = simt.build %s : i32, i32, i32, i32 -> !simt.vec<4xi32>" % ", ".join(words))
    aval, aty = ("%areg", "!simt.vec<4xi32>") if asrc == "regs" else ("%da", "i64")
    attrs = 'shape = "m64n%dk%d", a_type = "%s", b_type = "%s", acc_type = "%s"' % (
        N, K, at, bt, acc)
    if asrc == "desc" and am != "k":
        attrs += ', a_major = "%s"' % am
    if bm != "k":
        attrs += ', b_major = "%s"' % bm
    ops = [aval, "%db"] + cvals
    tys = [aty, "i64"] + ["!simt.vec<4x%s>" % ety] * tiles
    if scale_d == "pred":
        e("  %pd = arith.cmpi ne, %flag, %k0 : i32")
        ops.append("%pd")
        tys.append("i1")
    elif scale_d == 0:
        attrs += ", scale_d = 0"
    e("  simt.wgmma_fence")
    for st in range(steps):
        res = ["%%d%d" % i for i in range(tiles)]
        if steps > 1:
            # Step k: both descriptors advance k * K * es bytes, the
            # address field k * K * es / 16; each step accumulates on the
            # last one's tiles.
            res = ["%%s%d_%d" % (st, i) for i in range(tiles)]
            if st == steps - 1:
                res = ["%%d%d" % i for i in range(tiles)]
            e("  %%step%d = arith.constant %d : i64" % (st, st * K * es // 16))
            e("  %%da%d = arith.addi %%da, %%step%d : i64" % (st, st))
            e("  %%db%d = arith.addi %%db, %%step%d : i64" % (st, st))
            ops[0], ops[1] = "%%da%d" % st, "%%db%d" % st
        e("  %s = simt.wgmma %s {%s} : %s -> %s" % (
            ", ".join(res), ", ".join(ops), attrs, ", ".join(tys),
            ", ".join(["!simt.vec<4x%s>" % ety] * tiles)))
        ops[2:2 + tiles] = res
    e("  simt.wgmma_commit")
    e("  simt.wgmma_wait {n = 0}")
    for i in range(tiles):
        for j in range(4):
            tag = "o%d_%d" % (i, j)
            e("  %%y%s = simt.extract %%d%d {index = %d} : !simt.vec<4x%s> -> %s"
              % (tag, i, j, ety, ety))
            e("  %%q%s = simt.ptr_add %%out, %%%s : !simt.ptr<global>, i32 -> !simt.ptr<global>"
              % (tag, tag))
            e("  simt.store %%y%s, %%q%s : %s, !simt.ptr<global>" % (tag, tag, ety))
    e("  return")
    e("}")
    with open(os.path.join(d, name + ".tl"), "w") as f:
        f.write("\n".join(L) + "\n")
    with open(os.path.join(d, "cases.txt"), "a") as f:
        f.write("%s %d %d %d\n" % (name, img_size, 64 * N * 4, 1 if scale_d == "pred" else 0))
    with open(os.path.join(d, name + ".args"), "w") as f:
        f.write("--smem %d --arg img=%s --arg a=%s --arg c=%s --arg out=zeros:%s:64x%d "
                "--arg flag=%d --check out=%s\n"
                % (img_size, p("img"), p("a"), p("c"), "f32" if acc == "f32" else "i32",
                   N, 1 if scale_d == "pred" else 0, p("ref")))


def run(bindir, d, extra):
    """Generates and runs every case on the thread-level VM (tl-run
    --simt, checking D exactly); one line per case."""
    import shlex
    import subprocess
    bad = 0
    for name in CASES:
        gen(d, name)
        with open(os.path.join(d, name + ".args")) as f:
            args = shlex.split(f.read())
        cmd = [os.path.join(bindir, "tl-run"), "--simt", os.path.join(d, name + ".tl"),
               "--block", "128"] + args + extra
        r = subprocess.run(cmd, capture_output=True, text=True)
        ok = r.returncode == 0
        bad += not ok
        print("%s: %s" % (name, "ok" if ok else "FAIL"))
        if not ok:
            print(r.stdout + r.stderr)
    print("%d cases, %d failed" % (len(CASES), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "cases":
        print(" ".join(CASES))
    elif sys.argv[1] == "gen-all":
        open(os.path.join(sys.argv[2], "cases.txt"), "w").close()
        for name in CASES:
            gen(sys.argv[2], name)
    elif sys.argv[1] == "run":
        sys.exit(run(sys.argv[2], sys.argv[3], sys.argv[4:]))
    else:
        gen(sys.argv[2], sys.argv[3])
