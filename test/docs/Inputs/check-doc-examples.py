#!/usr/bin/env python3
"""Checks the IR examples of the docs: every fenced block marked ```tl in
docs/*.md must parse and verify with tl-opt. A block that contains
`expected-error` (or -warning, -note, -remark) comments is meant to fail
and is run with --verify-diagnostics instead, so the error it shows is
checked too.

    check-doc-examples.py DOCS_DIR TL_OPT

Prints one line per failing block and exits 1 if any failed."""
import os
import re
import subprocess
import sys


def blocks(path):
    text = open(path, encoding="utf-8").read()
    for m in re.finditer(r"^```tl\n(.*?)^```", text, re.S | re.M):
        line = text.count("\n", 0, m.start()) + 2
        yield line, m.group(1)


def main():
    docs, tl_opt = sys.argv[1], sys.argv[2]
    failed = checked = 0
    for name in sorted(os.listdir(docs)):
        if not name.endswith(".md"):
            continue
        path = os.path.join(docs, name)
        for line, body in blocks(path):
            checked += 1
            cmd = [tl_opt]
            if re.search(r"expected-(error|warning|note|remark)", body):
                cmd.append("--verify-diagnostics")
            r = subprocess.run(cmd, input=body.encode(), capture_output=True)
            if r.returncode != 0:
                failed += 1
                print("%s:%d: example fails:\n%s" %
                      (name, line, r.stderr.decode(errors="replace")))
    print("%d examples checked, %d failed" % (checked, failed))
    return 1 if failed or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
