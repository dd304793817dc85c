#!/usr/bin/env python3
"""Checks that every op of the op tables (include/tl/ops/*.def) has an
entry in its dialect's reference: docs/simt.md for simt, docs/langref.md
for the others. An entry is a heading or a table row naming the op in
backquotes (`arith.addi`; builtin ops print without their prefix, so
`func` names builtin.func). Prints one line per missing entry and exits 1
if there is any; --root points at another tree (for the test of the
check itself)."""
import argparse
import glob
import os
import re
import sys


def table_ops(root):
    ops = []
    for path in sorted(glob.glob(os.path.join(root, "include/tl/ops/*.def"))):
        text = open(path).read()
        for m in re.finditer(r'^TL_OP\(\s*\w+,\s*\w+,\s*"([\w.]+)"', text, re.M):
            ops.append((m.group(1), os.path.relpath(path, root)))
    return ops


def entries(doc):
    """The backquoted names on the doc's headings and table rows."""
    names = set()
    for line in open(doc):
        if line.startswith("#") or line.startswith("|"):
            names.update(re.findall(r"`([\w.]+)`", line))
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    args = ap.parse_args()
    docs = {}
    missing = 0
    ops = table_ops(args.root)
    for name, where in ops:
        dialect, short = name.split(".", 1)
        doc = "docs/simt.md" if dialect == "simt" else "docs/langref.md"
        if doc not in docs:
            docs[doc] = entries(os.path.join(args.root, doc))
        if name in docs[doc] or (dialect == "builtin" and short in docs[doc]):
            continue
        print(f"check-op-docs: error: {name} ({where}) has no entry in {doc}")
        missing += 1
    print(f"{len(ops)} ops checked, {missing} without an entry")
    return 1 if missing or not ops else 0


if __name__ == "__main__":
    sys.exit(main())
