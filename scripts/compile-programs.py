#!/usr/bin/env python3
"""Compiles every tl program of the repository to PTX for each target and,
where ptxas is given, assembles it: the kernels library, the lowering's
and the VM's test programs.

  scripts/compile-programs.py --bin BUILD/bin [--ptxas PATH] [--mcpu sm_80,sm_90a]

The targets are by default every target of the target table
(include/tl/targets.def). A program is a .tl file under kernels/ or test/
that defines a tl.kernel, except the files listed in SKIP below (syntax
and diagnostics tests, whose kernels are meant to be refused), each with
its reason; the files in FEATURE are compiled only for the targets with
that feature; the files in SMEM below are not compiled for the targets
whose blocks have less shared memory than they use. Files split into
cases by `// -----` lines are compiled case by case, skipping the cases
that expect a diagnostic (`expected-error`). Prints one line
per failure and ends with "N programs, M compiled, F failed"; exit 1 on any
failure.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hwtables  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Files with tl.kernel ops that are not programs to compile, and why.
SKIP = {
    "test/dialect/tl/ops.tl": "syntax round trip of every op, not a program",
    "test/dialect/tl/canonicalize.tl": "canonicalization patterns, not a program",
    "test/dialect/tl/invalid.tl": "verifier diagnostics",
    "test/passes/lower-tl-to-simt-invalid.tl": "what the lowering refuses",
    "test/passes/lower-tl-to-simt-warp-invalid.tl": "what the lowering refuses in a warp branch",
    "test/passes/plan-shared-memory-target.tl": "kernels over some targets' shared memory",
    "test/passes/Inputs/set-max-registers-block.tl": "what the lowering refuses (a block not of warpgroups)",
    "test/target/Inputs/tl-unlowerable.tl": "what the lowering refuses",
    "test/target/Inputs/bigtile.tl": "what the lowering refuses (a register tile too big to unroll)",
    "test/vm/tl-run-errors.tl": "tl-run's argument diagnostics",
    "test/vm/slice-errors.tl": "the VM's slice errors",
    "test/vm/global-races.tl": "the VM's race reports",
    "test/vm/shared-bytes.tl": "the VM's byte race report (a store the lowering refuses)",
    "test/vm/op-budget.tl": "the VM's op budget (a loop that does not end)",
    "test/vm/memory-limit.tl": "the VM's memory limit (tiles of 2^30 elements and more)",
    "test/vm/unexecuted-ops.tl": "ops the VMs refuse (a simt op in a tl.kernel)",
    "test/vm/dot-async.tl": "the block VM's tl.dot_async checks, on shared tiles of no wgmma layout",
    "test/vm/ring-errors.tl": "the block VM's ring checks (a tl.dot_async on shared tiles of no wgmma layout)",
}

# Files with a kernel of more dynamic shared memory than some targets give
# a block: the bytes it uses. They are compiled for the other targets only
# (tl-llc refuses them on these, as test/target/target-checks.test checks).
SMEM = {
    "test/passes/plan-shared-memory.tl": 131072,
    "test/target/Inputs/smem-big.tl": 131072,
    "kernels/qmatmul.tl": 149504,
    "kernels/qmatmul_m8.tl": 108544,
}

# Files whose kernels need a target feature (include/tl/targets.def): they
# are compiled for the targets that have it only.
FEATURE = {
    "kernels/gemm.tl": "WGMMA",
    "kernels/gemm_tma.tl": "WGMMA",
    "kernels/gemm_ring.tl": "WGMMA",
    "kernels/gemm_ws.tl": "WGMMA",
    "kernels/qmatmul_wg.tl": "WGMMA",
    "test/vm/dot-async-regs.tl": "WGMMA",
    "test/vm/warp-tiles-wgmma.tl": "WGMMA",
    "test/passes/lower-tl-to-simt-setmaxnreg.tl": "SETMAXNREG",
    "test/dialect/tl/tma.tl": "TMA",
    "test/passes/lower-tl-to-simt-tma.tl": "TMA",
    "test/vm/Inputs/tma_errors.tl": "TMA",
    "test/vm/Inputs/tma_mixed.tl": "TMA",
    "test/vm/Inputs/tma_rank.tl": "TMA",
    "test/vm/Inputs/tma_ring.tl": "TMA",
    "test/vm/Inputs/ring_stream.tl": "TMA",
}


def programs():
    files = sorted(set(glob.glob(os.path.join(ROOT, "kernels", "**", "*.tl"), recursive=True) +
                       glob.glob(os.path.join(ROOT, "test", "**", "*.tl"), recursive=True)))
    for f in files:
        rel = os.path.relpath(f, ROOT)
        if rel in SKIP:
            continue
        with open(f) as h:
            if "tl.kernel @" not in h.read():
                continue
        yield rel


def cases():
    """(file, case number or None, text) of every program to compile."""
    for rel in programs():
        with open(os.path.join(ROOT, rel)) as h:
            text = h.read()
        parts = text.split("\n// -----\n")
        if len(parts) == 1:
            yield rel, None, text
            continue
        for n, part in enumerate(parts, 1):
            if "tl.kernel @" in part and "expected-error" not in part:
                yield rel, n, part


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--ptxas", default="")
    ap.add_argument("--mcpu", default="",
                    help="comma-separated targets (default: every target of the table)")
    args = ap.parse_args()
    llc = os.path.join(os.path.abspath(args.bin), "tl-llc")
    table = {t["name"]: t for t in hwtables.targets(ROOT)}
    targets = args.mcpu.split(",") if args.mcpu else list(table)
    for cpu in targets:
        if cpu not in table:
            ap.error("unknown target '%s' (the targets are %s)" % (cpu, ", ".join(table)))
    total = ok = 0
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for rel, n, text in cases():
            total += 1
            good = True
            name = rel if n is None else "%s (case %d)" % (rel, n)
            src = os.path.join(tmp, "in.tl")
            with open(src, "w") as h:
                h.write(text)
            for cpu in targets:
                if SMEM.get(rel, 0) > table[cpu]["smem"]:
                    continue
                if rel in FEATURE and FEATURE[rel] not in table[cpu]["features"]:
                    continue
                ptx = os.path.join(tmp, "out.ptx")
                p = subprocess.run([llc, "-mcpu=" + cpu, src, "-o", ptx],
                                   capture_output=True, text=True)
                if p.returncode:
                    failed.append("%s (%s): tl-llc: %s" % (name, cpu, p.stderr.strip().splitlines()[0]
                                                            if p.stderr.strip() else p.returncode))
                    good = False
                    continue
                if args.ptxas:
                    q = subprocess.run([args.ptxas, "-arch=" + cpu, ptx, "-o",
                                        os.path.join(tmp, "out.cubin")],
                                       capture_output=True, text=True)
                    if q.returncode:
                        failed.append("%s (%s): ptxas: %s" % (name, cpu, q.stderr.strip()))
                        good = False
            ok += good
    for f in failed:
        print("FAIL: " + f)
    print("%d programs, %d compiled, %d failed" % (total, ok, total - ok))
    sys.exit(1 if failed or total == 0 else 0)


if __name__ == "__main__":
    main()
