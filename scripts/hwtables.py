"""Reads the hardware tables, include/tl/forms.def and include/tl/targets.def,
for the scripts that check the docs against them and compile every form
and program for every target. The .def files are the source of truth
(include/tl/arch.h expands them for C); this reads their rows the same
way: each TL_<KIND>(...) call outside #define lines is one row, its
arguments named by the macro's parameter list in the #define that gives
its default."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _strip(text):
    """The text without comments and preprocessor lines (with their
    continuations), which hold the parameter lists, not rows."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    out, cont = [], False
    for line in text.split("\n"):
        if cont or line.lstrip().startswith("#"):
            cont = line.rstrip().endswith("\\")
            continue
        out.append(line)
    return "\n".join(out)


def _split_args(s):
    """Top-level comma-separated arguments of a macro call's text."""
    args, depth, cur, quoted = [], 0, "", False
    for ch in s:
        if ch == '"':
            quoted = not quoted
        if not quoted and ch in "(":
            depth += 1
        if not quoted and ch in ")":
            depth -= 1
        if not quoted and ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    args.append(cur.strip())
    return args


def _value(a):
    if a.startswith('"') and a.endswith('"'):
        return a[1:-1]
    if re.fullmatch(r"-?\d+", a):
        return int(a)
    return a


def _params(text, macro):
    m = re.search(r"#\s*define\s+%s\(([^)]*)\)" % macro, text)
    if not m:
        raise ValueError("no #define %s(...) with its parameters" % macro)
    return [p.strip() for p in m.group(1).replace("\\", " ").split(",")]


def rows(path, macro):
    """The rows of one macro in a .def file, as dicts by parameter name."""
    with open(path) as f:
        text = f.read()
    params = _params(text, macro)
    body = _strip(text)
    result = []
    for m in re.finditer(r"\b%s\(" % macro, body):
        depth, i = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(body[i], 0)
            i += 1
        args = _split_args(body[m.end():i - 1])
        if len(args) != len(params):
            raise ValueError("%s: a %s row has %d columns, not %d" %
                             (path, macro, len(args), len(params)))
        result.append({p: _value(a) for p, a in zip(params, args)})
    return result


def forms(root=ROOT):
    path = os.path.join(root, "include", "tl", "forms.def")
    return {"mma": rows(path, "TL_MMA_FORM"),
            "ldmatrix": rows(path, "TL_LDMATRIX_FORM"),
            "cp_async": rows(path, "TL_CP_ASYNC_FORM"),
            "wgmma": rows(path, "TL_WGMMA_FORM")}


def targets(root=ROOT):
    """The targets in table order, each with the set of its feature names."""
    path = os.path.join(root, "include", "tl", "targets.def")
    with open(path) as f:
        text = f.read()
    # Named feature sets (#define NAME_ (TL_FEATURE_A | ...)) used by rows.
    sets = {}
    for m in re.finditer(r"#\s*define\s+(\w+)\s*((?:[^\n]*\\\n)*[^\n]*)", text):
        names = re.findall(r"TL_FEATURE_(\w+)", m.group(2))
        if names and "(" not in m.group(1):
            sets[m.group(1)] = set(names)
    result = rows(path, "TL_TARGET")
    for t in result:
        feats = set()
        for word in re.findall(r"\w+", str(t["features"])):
            if word.startswith("TL_FEATURE_"):
                feats.add(word[len("TL_FEATURE_"):])
            elif word in sets:
                feats |= sets[word]
        t["features"] = feats
    return result


def feature_names(root=ROOT):
    path = os.path.join(root, "include", "tl", "targets.def")
    return {r["NAME"]: r["what"] for r in rows(path, "TL_FEATURE")}
