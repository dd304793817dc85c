"""Prints the recipe cost table of docs/dtypes.md from `tl-dtype`, or with
--check DOC verifies that DOC's table (between the recipe-table markers)
is current, or with --write DOC rewrites it.

usage: recipe_table.py TL_DTYPE [--check DOC | --write DOC]
"""
import subprocess
import sys

BEGIN = "<!-- recipe-table begin -->"
END = "<!-- recipe-table end -->"


def table(tool):
    rows = ["| src | dst | technique | in words | values | ops | ops/value "
            "| consts | output order (value_of) |",
            "|---|---|---|---|---|---|---|---|---|"]
    out = subprocess.run([tool, "--recipes"], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        p = line.split()
        d = dict(x.split("=", 1) for x in p[3:])
        vo = d["order"].split(",")
        order = ("natural" if vo == [str(i) for i in range(len(vo))]
                 else " ".join(vo))
        rows.append(f"| {p[0]} | {p[1]} | {p[2]} | {d['in']} | "
                    f"{d['values']} | {d['ops']} | {d['per_value']} | "
                    f"{d['const']} | {order} |")
    return "\n".join(rows) + "\n"


def main():
    tool = sys.argv[1]
    t = table(tool)
    if len(sys.argv) == 2:
        sys.stdout.write(t)
        return 0
    mode, doc = sys.argv[2], sys.argv[3]
    text = open(doc).read()
    head, rest = text.split(BEGIN + "\n", 1)
    old, tail = rest.split(END, 1)
    if mode == "--check":
        if old != t:
            print("recipe_table: error: the recipe table in docs/dtypes.md "
                  "is out of date (rewrite it with --write)")
            return 1
        print("recipe table up to date")
        return 0
    open(doc, "w").write(head + BEGIN + "\n" + t + END + tail)
    return 0


sys.exit(main())
