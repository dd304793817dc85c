#!/usr/bin/env python3
"""Checks the docs' copies of the hardware tables against the tables:
the mma table of docs/simt.md (`simt.mma`) against the TL_MMA_FORM rows of
include/tl/forms.def, its wgmma table (`simt.wgmma`) against the
TL_WGMMA_FORM rows, and the target table of docs/target.md ("Targets")
against the TL_TARGET rows of include/tl/targets.def. Every row must be
in both, with the same columns. Prints one line per difference and exits
1 if there is any; --root points at another tree (for the test of the
check itself).

A doc row may stand for several forms: "`s8` or `u8`, each" is every pair
of the two types; in the wgmma table "`s8` or `u8`, the same" is s8 x s8
and u8 x u8, "`s8` with `u8`, either order" s8 x u8 and u8 x s8."""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hwtables  # noqa: E402


def table_rows(path, heading, first_cell):
    """The cells of the table rows after `heading` whose first cell
    matches first_cell, up to the next heading."""
    rows, inside = [], False
    for line in open(path):
        if line.startswith("#"):
            inside = line.strip() == heading
            continue
        if inside and line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if re.fullmatch(first_cell, cells[0]):
                rows.append(cells)
    return rows


def ticks(cell):
    return re.findall(r"`([^`]*)`", cell)


def doc_forms(path):
    """(shape, a, b, acc, A, B, C/D, first SM, PTX, b1_op, satfinite) of
    every form docs/simt.md's mma table lists."""
    out = []
    for c in table_rows(path, "## `simt.mma`", r"`m\d+n\d+k\d+`"):
        shape, types, acc = ticks(c[0])[0], c[1], ticks(c[2])[0]
        names = ticks(types)
        pairs = ([(a, b) for a in names for b in names] if "each" in types
                 else [(names[0], names[1])])
        other = c[8]
        b1 = re.search(r'b1_op = "([^"]*)"', other)
        for a, b in pairs:
            out.append((shape, a, b, acc, ticks(c[3])[0], ticks(c[4])[0], ticks(c[5])[0],
                        c[6], c[7], b1.group(1) if b1 else "", "satfinite" in other))
    return out


def table_forms(root):
    out = []
    for f in hwtables.forms(root)["mma"]:
        out.append((f["shape"], f["a_type"], f["b_type"], f["acc_type"],
                    "%dxi32" % f["a_regs"], "%dxi32" % f["b_regs"],
                    "%dx%s" % (f["cd_regs"], f["cd_reg"]), "sm_%d" % f["min_sm"],
                    "%d.%d" % (f["min_ptx"] // 10, f["min_ptx"] % 10), f["b1_op"],
                    bool(f["satfinite"])))
    return out


WGMMA_HEADING = ("## Warpgroup mma: `simt.wgmma`, `simt.wgmma_fence`, "
                 "`simt.wgmma_commit`, `simt.wgmma_wait`, `simt.wgmma_desc`")


def wgmma_ns(n8_max):
    """The doc's N cell of a form: multiples of 8 up to n8_max, then of 16."""
    if n8_max >= 256:
        return "8, 16, ..., 256"
    small = list(range(8, n8_max + 1, 8))
    return ", ".join(str(n) for n in small + [n8_max + 16, n8_max + 32]) + ", ..., 256"


def doc_wgmma(path):
    """(a, b, acc, K, N, A registers, majors, PTX) of every form of
    docs/simt.md's wgmma table; "as above" repeats the previous N."""
    out, last_n = [], ""
    for c in table_rows(path, WGMMA_HEADING, r"`(?!a_type)\w+`.*"):
        names, types = ticks(c[0]), c[0]
        if "the same" in types:
            pairs = [(t, t) for t in names]
        elif "either order" in types:
            pairs = [(names[0], names[1]), (names[1], names[0])]
        else:
            pairs = [(names[0], names[1])]
        n = last_n if c[3] == "as above" else c[3]
        last_n = n
        for a, b in pairs:
            out.append((a, b, ticks(c[1])[0], c[2], n, ticks(c[4])[0],
                        "mn" in ticks(c[5]), c[6]))
    return out


def table_wgmma(root):
    return [(f["a_type"], f["b_type"], f["acc_type"], str(f["k"]), wgmma_ns(f["n8_max"]),
             "%dxi32" % f["a_regs"], bool(f["trans"]),
             "%d.%d" % (f["min_ptx"] // 10, f["min_ptx"] % 10))
            for f in hwtables.forms(root)["wgmma"]]


def doc_targets(path):
    """(name, sm, shared memory, lowest PTX, default PTX) of every row of
    docs/target.md's target table."""
    out = []
    for c in table_rows(path, "## Targets", r"sm_\w+( \(default\))?"):
        out.append((c[0].split()[0], c[1], c[2].split()[0], c[3], c[4]))
    return out


def table_targets(root):
    ptx = lambda v: "%d.%d" % (v // 10, v % 10)  # noqa: E731
    return [(t["name"], str(t["sm"]), str(t["smem"]), ptx(t["min_ptx"]), ptx(t["default_ptx"]))
            for t in hwtables.targets(root)]


def compare(what, doc, table, doc_name, table_name):
    bad = 0
    for row in table:
        if row not in doc:
            print("check-hw-docs: error: %s %s of %s is not in %s" % (what, row, table_name, doc_name))
            bad += 1
    for row in doc:
        if row not in table:
            print("check-hw-docs: error: %s %s of %s is not in %s" % (what, row, doc_name, table_name))
            bad += 1
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=hwtables.ROOT)
    args = ap.parse_args()
    r = args.root
    forms, targets = table_forms(r), table_targets(r)
    bad = compare("mma form", doc_forms(os.path.join(r, "docs/simt.md")), forms,
                  "docs/simt.md", "include/tl/forms.def")
    wgmma = table_wgmma(r)
    bad += compare("wgmma form", doc_wgmma(os.path.join(r, "docs/simt.md")), wgmma,
                   "docs/simt.md", "include/tl/forms.def")
    bad += compare("target", doc_targets(os.path.join(r, "docs/target.md")), targets,
                   "docs/target.md", "include/tl/targets.def")
    print("%d mma forms, %d wgmma forms and %d targets checked, %d differences"
          % (len(forms), len(wgmma), len(targets), bad))
    return 1 if bad or not forms or not wgmma or not targets else 0


if __name__ == "__main__":
    sys.exit(main())
