#!/usr/bin/env python3
"""Candidate seed inputs for the fuzz targets, from the kernel library and
the test inputs; scripts/fuzz.sh --reseed merges them into fuzz/corpus/.

  fuzz/seed.py OUT TARGET...

writes OUT/<target>/<name> for each target it knows:
  parser  every kernels/*.tl, and every case of every test/**/*.tl (the
          text between '// -----' lines) that expects no diagnostic,
          comment lines dropped;
  expr    every grid, threads and requires expression and every template
          expression ('{...}' in a type) of kernels/*.tl and test/**/*.tl,
          each as a mode byte then the text (fuzz/expr_fuzz.c): '0'/'2'
          for grid and threads expressions (names constant / some at
          runtime), '1'/'3' for conditions;
  vm      each kernel that a test runs on the block VM (tl-run --vm), alone
          with its module's aliases, its template defaults set to the
          run's -D values and the run's integer arguments after a NUL
          (fuzz/vm_fuzz.c); the checked-in corpus adds small kernels
          written for the target.
Standard library only."""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def strip_comments(text):
    """Drops the lines that are only a comment (RUN, CHECK, prose)."""
    lines = [l for l in text.splitlines() if not l.lstrip().startswith("//")]
    return "\n".join(lines).strip() + "\n"


def cases(text):
    """The cases of a --split-input-file test."""
    return re.split(r"^// -----.*$", text, flags=re.M)


def test_files(under="test"):
    for d, _, files in sorted(os.walk(os.path.join(ROOT, under))):
        for f in sorted(files):
            if f.endswith(".tl"):
                yield os.path.join(d, f)


def kernel_files():
    d = os.path.join(ROOT, "kernels")
    return [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".tl")]


def label(path):
    rel = os.path.relpath(path, ROOT)
    return re.sub(r"[^A-Za-z0-9_.-]", "-", rel[:-3] if rel.endswith(".tl") else rel)


def parser_seeds():
    for p in kernel_files():
        yield label(p) + ".tl", strip_comments(read(p))
    for p in test_files():
        for i, c in enumerate(cases(read(p))):
            # Cases that expect a diagnostic each reach one verifier rule
            # near the surface, where mutations of valid cases go too;
            # with them the corpus would be four times the size.
            if "expected-" in c:
                continue
            c = strip_comments(c)
            if c.strip():
                yield "%s-%d.tl" % (label(p), i), c


def balanced(text, i, open_, close):
    """The text after text[i] == open_ up to its matching close, or None."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == open_:
            depth += 1
        elif text[j] == close:
            depth -= 1
            if depth == 0:
                return text[i + 1:j]
        elif text[j] == "\n" and open_ == "{":
            return None
    return None


def split_top(text):
    """Splits at commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for j, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(text[start:j])
            start = j + 1
    parts.append(text[start:])
    return [" ".join(p.split()) for p in parts if p.strip()]


EXPR_CHARS = re.compile(r"^[A-Za-z0-9_ ()+\-*/%<>=!&|,]+$")


def expressions(text):
    """(is_condition, expression) pairs found in a kernel's text."""
    text = strip_comments(text)
    for m in re.finditer(r"\b(requires|grid|threads)\(", text):
        inner = balanced(text, m.end() - 1, "(", ")")
        if inner is None:
            continue
        for e in split_top(inner):
            yield m.group(1) == "requires", e
    for m in re.finditer(r"\{", text):
        inner = balanced(text, m.start(), "{", "}")
        # A template expression, not a region, attribute dictionary or
        # diagnostic: one line of the language's characters, no SSA names
        # (%x) and no '=' that is not part of a comparison.
        if (inner and EXPR_CHARS.match(inner) and not re.search(r"%\w", inner)
                and not re.search(r"(^|[^=!<>])=($|[^=])", inner)):
            yield True, " ".join(inner.split())


def expr_seeds():
    seen = set()
    for p in kernel_files() + list(test_files()):
        for cond, e in expressions(read(p)):
            for runtime in (0, 2):
                mode = str((1 if cond else 0) + runtime)
                if (mode, e) in seen:
                    continue
                seen.add((mode, e))
                yield "%s-%d.txt" % (label(p), len(seen)), mode + e


def kernels_of(text):
    """A module's aliases (#name = ... and !name = ... lines) and its tl.kernels, each by
    name: from its 'tl.kernel @' line to the next line that is '}'."""
    lines = text.splitlines()
    aliases = [l for l in lines if l[:1] in ("#", "!")]
    out, i = {}, 0
    while i < len(lines):
        m = re.match(r"tl\.kernel @(\w+)", lines[i])
        if m:
            j = i
            while j < len(lines) and lines[j] != "}":
                j += 1
            out[m.group(1)] = "\n".join(lines[i:j + 1]) + "\n"
            i = j
        i += 1
    return aliases, out


def params_of(kernel):
    """A kernel's parameter names, in order."""
    m = re.match(r"tl\.kernel @\w+\((.*?)\)\s*(template|requires|grid|"
                 r"threads|attributes|\{)", kernel, re.S)
    return re.findall(r"%(\w+)\s*:", m.group(1)) if m else []


def with_defines(kernel, defines):
    """The kernel with its template defaults replaced by -D values."""
    m = re.search(r"template\(", kernel)
    if not m or not defines:
        return kernel
    inner = balanced(kernel, m.end() - 1, "(", ")")
    if inner is None:
        return kernel
    new = inner
    for k, v in defines.items():
        new = re.sub(r"\b%s\s*=\s*[\w.]+" % re.escape(k), "%s = %s" % (k, v), new)
    return kernel[:m.end()] + new + kernel[m.end() + len(inner):]


def tail(params, args):
    """fuzz/vm_fuzz.c's argument bytes: 16 bits a parameter, 64 for those
    the run line leaves out (buffers: ignored)."""
    vals = []
    for p in params:
        v = args.get(p, 64)
        vals.append(v if -32768 <= v < 32767 else 0x7fff)
    while vals and vals[-1] == 64:
        vals.pop()
    return b"".join((v & 0xffff).to_bytes(2, "little") for v in vals)


def run_lines(path):
    """The tl-run --vm command lines of a test file, continuations joined."""
    text = read(path).replace("\\\n", " ")
    for m in re.finditer(r"RUN:(.*)", text):
        line = m.group(1).replace("// RUN:", " ")
        if re.search(r"tl-run\b.*--vm\b", line):
            yield line.split("|")[0]


def vm_seeds():
    """A seed for each (kernel, run line) of the tests that run a kernel
    on the block VM, with the run's -D values and integer arguments."""
    seen = set()
    tests = [p for p in test_files() if p.endswith(".tl")]
    for d, _, files in sorted(os.walk(os.path.join(ROOT, "test"))):
        tests += [os.path.join(d, f) for f in sorted(files) if f.endswith(".test")]
    for t in tests:
        for line in run_lines(t):
            words = line.split()
            src = None
            for w in words:
                if w.endswith(".tl"):
                    src = (w.replace("%srcroot", ROOT).replace("%S", os.path.dirname(t))
                           .replace("%s", t))
                    break
            if not src or not os.path.isfile(src):
                continue
            aliases, kernels = kernels_of(strip_comments(read(src)))
            m = re.search(r"--kernel[ =](\w+)", line)
            name = m.group(1) if m else (next(iter(kernels)) if len(kernels) == 1 else None)
            if name not in kernels:
                continue
            defines = dict(re.findall(r"-D\s*(\w+)=([\w.]+)", line))
            args = {k: int(v) for k, v in re.findall(r"--arg[ =](\w+)=(-?\d+)(?=\s|$)", line)}
            kernel = with_defines(kernels[name], defines)
            text = "\n".join(aliases) + "\n" + kernel
            key = (text, tail(params_of(kernel), args))
            if key in seen:
                continue
            seen.add(key)
            data = text.encode() + (b"\0" + key[1] if key[1] else b"")
            yield "%s-%s-%d.tl" % (label(src), name, len(seen)), data


TARGETS = {"parser": parser_seeds, "expr": expr_seeds, "vm": vm_seeds}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    for t in sys.argv[2:]:
        if t not in TARGETS:
            continue
        os.makedirs(os.path.join(out, t), exist_ok=True)
        n = 0
        for name, text in TARGETS[t]():
            if isinstance(text, str):
                text = text.encode()
            with open(os.path.join(out, t, name), "wb") as f:
                f.write(text)
            n += 1
        print("seed: %s: %d candidates" % (t, n))


if __name__ == "__main__":
    main()
