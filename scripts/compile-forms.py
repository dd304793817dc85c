#!/usr/bin/env python3
"""Compiles every warp-level form of the form table (include/tl/forms.def)
for every target of the target table (include/tl/targets.def) that has
its feature, and where ptxas is given assembles the PTX:

  scripts/compile-forms.py --bin BUILD/bin [--ptxas PATH]

For each target, one module holds one simt kernel per form the target
has: each mma form (and its .satfinite variant where it takes one), each
ldmatrix form, each cp.async form with and without a source size, each
wgmma form with A from a descriptor and from registers at N = 8 and 256
(wgmma has one asm instruction per kernel too). tl-llc
compiles it without -mptx (so at the first PTX ISA that has all its
forms); the PTX must hold one instruction of each kind per kernel. Prints
one line per target and ends with "N kernels on T targets, F failed";
exit 1 on any failure."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hwtables  # noqa: E402


def vec(n, t):
    return "!simt.vec<%dx%s>" % (n, t)


def build(name, n, t, var):
    return "  %%%s = simt.build %s : %s -> %s\n" % (
        name, ", ".join([var] * n), ", ".join([t] * n), vec(n, t))


def mma_kernel(k, f, sat):
    cd = f["cd_reg"]
    attrs = 'shape = "%s", a_type = "%s", b_type = "%s", acc_type = "%s"' % (
        f["shape"], f["a_type"], f["b_type"], f["acc_type"])
    if f["b1_op"]:
        attrs += ', b1_op = "%s"' % f["b1_op"]
    if sat:
        attrs += ", satfinite"
    ta, tb, tc = vec(f["a_regs"], "i32"), vec(f["b_regs"], "i32"), vec(f["cd_regs"], cd)
    return ("func @k%d(%%p: !simt.ptr<global>, %%x: i32, %%y: f32) attributes {kernel, threads = 32} {\n"
            % k + build("a", f["a_regs"], "i32", "%x") + build("b", f["b_regs"], "i32", "%x")
            + build("c", f["cd_regs"], cd, "%y" if cd == "f32" else "%x")
            + "  %%d = simt.mma %%a, %%b, %%c {%s} : %s, %s, %s -> %s\n" % (attrs, ta, tb, tc, tc)
            + "  simt.store %%d, %%p : %s, !simt.ptr<global>\n  return\n}\n" % tc)


def ldmatrix_kernel(k, f):
    t = vec(f["num"], "i32")
    return ("func @k%d(%%p: !simt.ptr<global>, %%x: i32, %%y: f32) attributes {kernel, threads = 32} {\n"
            "  %%s = simt.smem_base : -> !simt.ptr<shared>\n"
            "  %%r = simt.ldmatrix %%s {num = %d%s} : !simt.ptr<shared> -> %s\n"
            "  simt.store %%r, %%p : %s, !simt.ptr<global>\n  return\n}\n"
            % (k, f["num"], ", trans" if f["trans"] else "", t, t))


def cp_async_kernel(k, f, zfill):
    return ("func @k%d(%%p: !simt.ptr<global>, %%x: i32, %%y: f32) attributes {kernel, threads = 32} {\n"
            "  %%s = simt.smem_base : -> !simt.ptr<shared>\n"
            "  simt.cp_async %%s, %%p%s {size = %d, cache = \"%s\"} : !simt.ptr<shared>, !simt.ptr<global>%s\n"
            "  simt.cp_async_commit\n  simt.cp_async_wait {pending = 0}\n  return\n}\n"
            % (k, ", %x" if zfill else "", f["bytes"], f["cache"], ", i32" if zfill else ""))


def wgmma_kernel(k, f, a_regs, n):
    acc = "f32" if f["acc_type"] == "f32" else "i32"
    tile = vec(4, acc)
    tiles = n // 8
    ops = ", ".join(["%c"] * tiles)
    res = ", ".join("%%d%d" % i for i in range(tiles))
    a, ta = ("%a", vec(4, "i32")) if a_regs else ("%m", "i64")
    attrs = 'shape = "m64n%dk%d", a_type = "%s", b_type = "%s", acc_type = "%s"' % (
        n, f["k"], f["a_type"], f["b_type"], f["acc_type"])
    return ("func @k%d(%%p: !simt.ptr<global>, %%x: i32, %%y: f32) attributes {kernel, threads = 128} {\n"
            "  %%s = simt.smem_base : -> !simt.ptr<shared>\n"
            "  %%m = simt.wgmma_desc %%s {swizzle = \"128B\", sbo = 1024} : !simt.ptr<shared> -> i64\n"
            % k + build("a", 4, "i32", "%x") + build("c", 4, acc, "%y" if acc == "f32" else "%x")
            + "  simt.wgmma_fence\n"
            + "  %s = simt.wgmma %s, %%m, %s {%s} : %s, i64, %s -> %s\n" % (
                res, a, ops, attrs, ta, ", ".join([tile] * tiles), ", ".join([tile] * tiles))
            + "  simt.wgmma_commit\n  simt.wgmma_wait {n = 0}\n"
            + "".join("  simt.store %%d%d, %%p : %s, !simt.ptr<global>\n" % (i, tile)
                      for i in range(tiles))
            + "  return\n}\n")


def module(target, tables):
    """The module of every form the target has, and the count of each
    instruction kind its PTX must hold."""
    text, k = "", 0
    want = {"mma.sync.aligned": 0, "ldmatrix.sync.aligned": 0, "cp.async.ca/cg": 0}
    for f in tables["mma"]:
        if f["feature"] in target["features"]:
            for sat in ([False, True] if f["satfinite"] else [False]):
                text += mma_kernel(k, f, sat)
                k += 1
                want["mma.sync.aligned"] += 1
    for f in tables["ldmatrix"]:
        if f["feature"] in target["features"]:
            text += ldmatrix_kernel(k, f)
            k += 1
            want["ldmatrix.sync.aligned"] += 1
    for f in tables["cp_async"]:
        if f["feature"] in target["features"]:
            for zfill in (False, True):
                text += cp_async_kernel(k, f, zfill)
                k += 1
                want["cp.async.ca/cg"] += 1
    for f in tables["wgmma"]:
        if f["feature"] in target["features"]:
            want.setdefault("wgmma.mma_async.sync.aligned", 0)
            for a_regs in (False, True):
                for n in (8, 256):
                    text += wgmma_kernel(k, f, a_regs, n)
                    k += 1
                    want["wgmma.mma_async.sync.aligned"] += 1
    return text, k, want


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--ptxas", default="")
    ap.add_argument("--root", default=hwtables.ROOT)
    args = ap.parse_args()
    llc = os.path.join(os.path.abspath(args.bin), "tl-llc")
    tables = hwtables.forms(args.root)
    targets = hwtables.targets(args.root)
    total = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for t in targets:
            text, n, want = module(t, tables)
            total += n
            src, ptx = os.path.join(tmp, "forms.tl"), os.path.join(tmp, "forms.ptx")
            with open(src, "w") as h:
                h.write(text)
            problem = None
            p = subprocess.run([llc, "-mcpu=" + t["name"], src, "-o", ptx],
                               capture_output=True, text=True)
            if p.returncode:
                problem = "tl-llc: " + (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[0]
            else:
                out = open(ptx).read()
                for instr, count in want.items():
                    pattern = re.escape(instr).replace("ca/cg", "c[ag]")
                    got = len(re.findall(r"^\s*" + pattern + r"\.", out, re.M))
                    if got != count:
                        problem = "%d %s instructions, not %d" % (got, instr, count)
                if not problem and args.ptxas:
                    q = subprocess.run([args.ptxas, "-arch=" + t["name"], ptx, "-o",
                                        os.path.join(tmp, "forms.cubin")],
                                       capture_output=True, text=True)
                    if q.returncode:
                        problem = "ptxas: " + q.stderr.strip()
            if problem:
                failed += n
                print("FAIL: %s: %s" % (t["name"], problem))
            else:
                print("%s: %d kernels (%s)%s" % (
                    t["name"], n, ", ".join("%d %s" % (c, i) for i, c in want.items()),
                    ", assembled" if args.ptxas else ""))
    print("%d kernels on %d targets, %d failed" % (total, len(targets), failed))
    sys.exit(1 if failed or not total else 0)


if __name__ == "__main__":
    main()
