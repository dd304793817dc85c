#!/usr/bin/env python3
"""Writes the pass reference of docs/passes.md from passes/passes.def.

The reference lies between the lines `<!-- BEGIN GENERATED -->` and
`<!-- END GENERATED -->` of docs/passes.md; everything outside the markers is
hand-written and kept as it is. For each TL_PASS(c_name, "flag", "summary")
entry of passes/passes.def, in registry order, the section lists the flag,
the summary, the source file and the options read from the table
`tl_pass_<c_name>_options[]` in the pass's source: passes/<c_name>.c, or
passes/<c_name>/driver.c for a pass split into a folder.

    scripts/gen-passes-doc.py            rewrite docs/passes.md in place
    scripts/gen-passes-doc.py --check    exit 1 if docs/passes.md is stale
    --root DIR                           the repository (default: this
                                         script's parent folder)

Exit status: 0 on success (or up to date), 1 when the file is out of date
(--check) or an input cannot be read or understood.
"""
import argparse
import os
import re
import sys

BEGIN = "<!-- BEGIN GENERATED -->"
END = "<!-- END GENERATED -->"

KINDS = {
    "TL_PASS_OPT_INT": "int",
    "TL_PASS_OPT_BOOL": "bool",
    "TL_PASS_OPT_STRING": "string",
}


class GenError(Exception):
    pass


def strip_comments(text):
    """Removes C comments, leaving string literals intact."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise GenError("unterminated comment")
            out.append(" ")
            i = j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return "".join(out)


TOKEN = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|([A-Za-z_][A-Za-z0-9_]*)|(.))',
                   re.S)


def unescape(s):
    return re.sub(r'\\(.)', lambda m: {"n": "\n", "t": "\t"}.get(
        m.group(1), m.group(1)), s)


def tokens(text):
    """C tokens: ("str", value) with adjacent literals joined, ("id", name)
    or ("punct", char)."""
    out = []
    pos = 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            break
        pos = m.end()
        if m.group(1) is not None:
            s = unescape(m.group(1))
            if out and out[-1][0] == "str":
                out[-1] = ("str", out[-1][1] + s)
            else:
                out.append(("str", s))
        elif m.group(2) is not None:
            out.append(("id", m.group(2)))
        elif m.group(3) is not None and not m.group(3).isspace():
            out.append(("punct", m.group(3)))
    return out


def split_args(toks):
    """Splits a token list at top-level commas."""
    args, cur, depth = [], [], 0
    for t in toks:
        if t[0] == "punct" and t[1] in "({":
            depth += 1
        elif t[0] == "punct" and t[1] in ")}":
            depth -= 1
        if t[0] == "punct" and t[1] == "," and depth == 0:
            args.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        args.append(cur)
    return args


def read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise GenError("cannot read %s: %s" % (path, e.strerror))


def parse_registry(root):
    path = os.path.join(root, "passes", "passes.def")
    toks = tokens(strip_comments(read(path)))
    passes = []
    i = 0
    while i < len(toks):
        if toks[i] == ("id", "TL_PASS"):
            if i + 1 >= len(toks) or toks[i + 1] != ("punct", "("):
                raise GenError("%s: TL_PASS without '('" % path)
            depth, j = 0, i + 1
            while j < len(toks):
                if toks[j] == ("punct", "("):
                    depth += 1
                elif toks[j] == ("punct", ")"):
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            args = split_args(toks[i + 2:j])
            if (len(args) != 3 or len(args[0]) != 1 or args[0][0][0] != "id"
                    or len(args[1]) != 1 or args[1][0][0] != "str"
                    or len(args[2]) != 1 or args[2][0][0] != "str"):
                raise GenError("%s: expected TL_PASS(c_name, \"flag\", "
                               "\"summary\")" % path)
            passes.append({"c": args[0][0][1], "flag": args[1][0][1],
                           "summary": args[2][0][1]})
            i = j + 1
        else:
            i += 1
    if not passes:
        raise GenError("%s: no TL_PASS entries" % path)
    return passes


def source(root, c_name):
    """The file holding a pass's entry and option table, relative to root:
    passes/<c_name>.c, else passes/<c_name>/driver.c."""
    rel = os.path.join("passes", c_name + ".c")
    if os.path.exists(os.path.join(root, rel)):
        return rel
    folder = os.path.join("passes", c_name, "driver.c")
    if os.path.exists(os.path.join(root, folder)):
        return folder
    return rel  # read() reports it missing


def parse_options(root, c_name):
    """The option table tl_pass_<c_name>_options[] of the pass's source."""
    rel = source(root, c_name)
    text = strip_comments(read(os.path.join(root, rel)))
    m = re.search(r"tl_pass_%s_options\s*\[\s*\]\s*=\s*\{" % re.escape(c_name),
                  text)
    if not m:
        raise GenError("%s: no table tl_pass_%s_options[]" % (rel, c_name))
    depth, j = 1, m.end()
    while j < len(text) and depth:
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
        j += 1
    body = tokens(text[m.end():j - 1])
    options = []
    for entry in split_args(body):
        if not entry:
            continue
        if entry[0] != ("punct", "{") or entry[-1] != ("punct", "}"):
            raise GenError("%s: malformed entry in tl_pass_%s_options" %
                           (rel, c_name))
        fields = split_args(entry[1:-1])
        if fields and fields[0] and fields[0][0] in (("id", "NULL"),
                                                     ("punct", "0")):
            break  # the terminator
        if (len(fields) != 4 or any(len(f) != 1 for f in fields)
                or fields[0][0][0] != "str" or fields[1][0][0] != "id"
                or fields[1][0][1] not in KINDS or fields[2][0][0] != "str"
                or fields[3][0][0] != "str"):
            raise GenError("%s: expected {\"name\", TL_PASS_OPT_..., "
                           "\"default\", \"help\"} in tl_pass_%s_options" %
                           (rel, c_name))
        options.append({"name": fields[0][0][1],
                        "kind": KINDS[fields[1][0][1]],
                        "default": fields[2][0][1],
                        "help": fields[3][0][1]})
    return options


def cell(s):
    return s.replace("|", "\\|").replace("\n", " ")


def generate(root):
    passes = parse_registry(root)
    lines = [
        BEGIN,
        "<!-- Written by scripts/gen-passes-doc.py from passes/passes.def "
        "and the",
        "     option tables in passes/<name>.c (or passes/<name>/driver.c). "
        "Edit",
        "     those files, then run the script. -->",
        "",
        "| Pass | Summary |",
        "|---|---|",
    ]
    for p in passes:
        lines.append("| [`%s`](#%s) | %s |" %
                     (p["flag"], p["flag"], cell(p["summary"])))
    lines += ["",
              "Legend: *Pass* is the name used in `--pass-pipeline` and, "
              "with `--` in front, as a flag of tl-opt; *Summary* is the "
              "pass's one-line description from passes/passes.def (also "
              "shown by `tl-opt --help`).",
              ""]
    for p in passes:
        opts = parse_options(root, p["c"])
        lines += ["### %s" % p["flag"], "",
                  cell(p["summary"]) + ".", "",
                  "- Pipeline name: `%s`; flag: `--%s`" %
                  (p["flag"], p["flag"]),
                  "- Implementation: `%s`, entry point "
                  "`tl_pass_%s`" % (source(root, p["c"]), p["c"]),
                  ""]
        if not opts:
            lines += ["Options: none.", ""]
            continue
        lines += ["| Option | Type | Default | Meaning |", "|---|---|---|---|"]
        for o in opts:
            lines.append("| `%s` | %s | `%s` | %s |" %
                         (o["name"], o["kind"], o["default"],
                          cell(o["help"])))
        lines += ["",
                  "Legend: *Option* is written `%s{name=value}` in a "
                  "pipeline; *Type* is int (decimal, 0 to 1000000000), bool "
                  "(`true`, `false`, `1`, `0`) or string; *Default* is the "
                  "value used when the option is not given; *Meaning* is "
                  "the option's help text." % p["flag"],
                  ""]
    lines.append(END)
    return "\n".join(lines)


def splice(doc, generated, path):
    b = doc.find(BEGIN)
    e = doc.find(END)
    if b < 0 or e < 0 or e < b:
        raise GenError("%s: missing the markers %s and %s" % (path, BEGIN, END))
    return doc[:b] + generated + doc[e + len(END):]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="fail if docs/passes.md is out of date")
    ap.add_argument("--root", default=os.path.dirname(
        os.path.dirname(os.path.abspath(__file__))),
        help="the repository root")
    args = ap.parse_args()
    path = os.path.join(args.root, "docs", "passes.md")
    try:
        doc = read(path)
        new = splice(doc, generate(args.root), path)
    except GenError as e:
        print("gen-passes-doc: error: %s" % e, file=sys.stderr)
        return 1
    if args.check:
        if new != doc:
            print("gen-passes-doc: error: docs/passes.md is out of date with "
                  "passes/passes.def; run scripts/gen-passes-doc.py",
                  file=sys.stderr)
            return 1
        return 0
    if new != doc:
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
