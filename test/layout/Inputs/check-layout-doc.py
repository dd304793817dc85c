"""Runs every `$ tl-layout ...` example of docs/layouts.md and compares its
output (stdout then stderr) with the lines that follow it in the block.

usage: check-layout-doc.py DOC TOOL
Prints one line per failing example and a summary line."""
import re
import shlex
import subprocess
import sys


def examples(text):
    for block in re.findall(r"```text\n(.*?)```", text, re.S):
        lines = block.rstrip("\n").split("\n")
        if lines and lines[0].startswith("$ tl-layout "):
            yield lines[0][2:], lines[1:]


def main():
    doc, tool = sys.argv[1], sys.argv[2]
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    checked = failed = 0
    for command, want in examples(text):
        argv = shlex.split(command)
        argv[0] = tool
        run = subprocess.run(argv, capture_output=True, text=True)
        got = (run.stdout + run.stderr).rstrip("\n").split("\n")
        got = [line.rstrip() for line in got]
        want = [line.rstrip() for line in want]
        checked += 1
        if got != want:
            failed += 1
            print("FAILED: %s" % command)
            for line in got:
                print("  got: %s" % line)
    print("%d examples checked, %d failed" % (checked, failed))


main()
