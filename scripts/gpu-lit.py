#!/usr/bin/env python3
"""Runs lit tests on a machine without LLVM's lit and FileCheck (the GPU
machines): the RUN lines of each file, with the FileCheck directives the
GPU tests use checked here.

  scripts/gpu-lit.py --bin BUILD/bin [--wrap 'compute-sanitizer --tool memcheck']
                     [--filter TEXT] [--timeout S] [--shard K/N] FILE.test...

Substitutions: %srcroot (the repository), %s, %S, %t, %python; tools come
from --bin. `not CMD` inverts the status. `REQUIRES:` lines are ignored
(these tests require the GPU this is run on). --wrap prefixes every tl-run,
gpu_test and Python command that is not under `not` (sanitizers: give
compute-sanitizer `--target-processes all` to follow a script's tl-runs). FileCheck directives: P:,
P-NEXT:, P-SAME:, P-NOT:, P-DAG: (in any order until the next P: match),
P-LABEL: (as P:), P-COUNT-n:, with {{regex}} and [[#]] (an integer).
Prints PASS/FAIL per RUN line and ends with "N passed, N failed"; exit 1
on any failure.
"""
import argparse
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pattern(text):
    """A FileCheck pattern as a Python regex."""
    out, i = [], 0
    while i < len(text):
        if text.startswith("{{", i):
            j = text.index("}}", i + 2)
            out.append("(?:" + text[i + 2:j] + ")")
            i = j + 2
        elif text.startswith("[[#]]", i):
            out.append(r"-?\d+")
            i += 5
        elif text[i] in " \t":
            j = i
            while j < len(text) and text[j] in " \t":
                j += 1
            out.append(r"[ \t]+")
            i = j
        else:
            out.append(re.escape(text[i]))
            i += 1
    return re.compile("".join(out))


def directives(lines, prefix):
    """(kind, count, regex) for each directive of prefix, in order."""
    kinds = r"(?:-(NEXT|SAME|NOT|DAG|LABEL|COUNT-(\d+)))?"
    rx = re.compile(r"(?:^|[^A-Za-z0-9_-])" + re.escape(prefix) + kinds + r":(.*)$")
    out = []
    for line in lines:
        m = rx.search(line)
        if not m:
            continue
        kind = m.group(1) or "PLAIN"
        count = 1
        if kind.startswith("COUNT"):
            kind, count = "PLAIN", int(m.group(2))
        if kind == "LABEL":
            kind = "PLAIN"
        out.append((kind, count, pattern(m.group(3).strip())))
    return out


def filecheck(checks, text):
    """None when text satisfies checks, else a message."""
    lines = text.splitlines()
    pos = 0  # next line to search
    last = -1  # line of the last match
    nots, dags = [], []
    for kind, count, rx in checks:
        if kind == "NOT":
            nots.append(rx)
            continue
        if kind == "DAG":
            dags.append(rx)
            continue
        for _ in range(count):
            if kind == "NEXT":
                hit = last + 1 if last + 1 < len(lines) and rx.search(lines[last + 1]) else -1
            elif kind == "SAME":
                hit = last if last >= 0 and rx.search(lines[last]) else -1
            else:
                hit = next((k for k in range(pos, len(lines)) if rx.search(lines[k])), -1)
            if hit < 0:
                return "no match for %r after line %d" % (rx.pattern, last + 1)
            for d in dags:
                if not any(d.search(l) for l in lines[pos:hit]):
                    return "no match for DAG %r before line %d" % (d.pattern, hit + 1)
            dags = []
            for n in nots:
                for l in lines[pos:hit]:
                    if n.search(l):
                        return "NOT pattern %r matched %r" % (n.pattern, l)
            nots = []
            last, pos = hit, hit + 1
    for d in dags:
        if not any(d.search(l) for l in lines[pos:]):
            return "no match for DAG %r" % d.pattern
    for n in nots:
        for l in lines[pos:]:
            if n.search(l):
                return "NOT pattern %r matched %r" % (n.pattern, l)
    return None


def run(cmd, env, timeout):
    """cmd under bash -o pipefail; past timeout seconds (0: none) its whole
    process group is killed and returncode is None."""
    p = subprocess.Popen(["bash", "-o", "pipefail", "-c", cmd], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout or None)
        return subprocess.CompletedProcess(cmd, p.returncode, out, err)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return subprocess.CompletedProcess(cmd, None, out, err)


def wrap(cmd, prefix):
    """cmd with prefix before each pipeline stage that runs GPU code: tl-run,
    gpu_test or Python (after any `env NAME=VALUE` of the stage)."""
    runs = ("tl-run", "gpu_test", sys.executable)
    stages, start, quote = [], 0, None
    for i, c in enumerate(cmd + "|"):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "|":
            stages.append(cmd[start:i])
            start = i + 1
    head = re.compile(r"^(\s*(?:env(?:\s+[A-Za-z_][A-Za-z0-9_]*=\S*)*\s+)?)(\S+)")
    out = []
    for stage in stages:
        m = head.match(stage)
        if m and m.group(2) in runs:
            stage = m.group(1) + prefix + " " + stage[m.start(2):]
        out.append(stage)
    return "|".join(out)


def run_file(path, args, tmpdir):
    src = open(path).read().splitlines()
    subst = {"%srcroot": ROOT, "%S": os.path.dirname(os.path.abspath(path)),
             "%s": os.path.abspath(path), "%python": sys.executable}
    base = os.path.join(tmpdir, os.path.basename(path))
    results, index = [], -1
    for n, line in enumerate(src, 1):
        m = re.match(r"^(?://\s*)?RUN:\s*(.*)$", line)
        if not m or (args.filter and args.filter not in line):
            continue
        cmd = m.group(1)
        if "%if" in cmd:  # ptxas-style conditionals: not GPU tests
            continue
        index += 1
        if args.shard and "%t" not in cmd and index % args.shard[1] != args.shard[0]:
            continue
        cmd = cmd.replace("%t", base)
        for k in sorted(subst, key=len, reverse=True):
            cmd = cmd.replace(k, subst[k])
        check = None
        fc = re.search(r"(\|\s*|^)FileCheck\s+(\S+)((?:\s+--check-prefix=\S+)?)\s*(<\s*(\S+))?\s*$",
                       cmd)
        if fc:
            prefix = fc.group(3).split("=")[1] if fc.group(3) else "CHECK"
            check = directives(src, prefix)
            cmd = cmd[:fc.start()] if fc.group(1) else "cat " + fc.group(5)
        negate = cmd.strip().startswith("not ")
        if negate:
            cmd = cmd.strip()[4:]
        if args.wrap and not negate:
            cmd = wrap(cmd.strip(), args.wrap)
        env = dict(os.environ, PATH=args.bin + os.pathsep + os.environ.get("PATH", ""))
        p = run(cmd, env, args.timeout)
        if p.returncode is None:
            ok, why = False, "timed out after %g s" % args.timeout
        else:
            ok = (p.returncode != 0) if negate else (p.returncode == 0)
            why = "" if ok else "exit status %d" % p.returncode
        if ok and check is not None:
            msg = filecheck(check, p.stdout)
            ok, why = msg is None, msg or ""
        results.append(ok)
        print("%s: %s:%d %s" % ("PASS" if ok else "FAIL", os.path.basename(path), n,
                                why))
        if not ok:
            print("  $ " + cmd)
            for l in (p.stdout + p.stderr).splitlines()[-20:]:
                print("  | " + l)
        sys.stdout.flush()
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--wrap", default="")
    ap.add_argument("--filter", default="")
    ap.add_argument("--timeout", type=float, default=0,
                    help="seconds a RUN line may take (0: no limit)")
    ap.add_argument("--shard", default="",
                    help="K/N: only the RUN lines whose index is K modulo N, and every "
                         "line that names %%t (the files lines share)")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    if args.shard:
        m = re.match(r"^(\d+)/(\d+)$", args.shard)
        if not m or not int(m.group(1)) < int(m.group(2)):
            ap.error(f"--shard {args.shard!r}: expected K/N with 0 <= K < N")
        args.shard = (int(m.group(1)), int(m.group(2)))
    with tempfile.TemporaryDirectory() as tmp:
        res = []
        for f in args.files:
            res += run_file(f, args, tmp)
    failed = res.count(False)
    print("%d passed, %d failed" % (len(res) - failed, failed))
    sys.exit(1 if failed or not res else 0)


if __name__ == "__main__":
    main()
