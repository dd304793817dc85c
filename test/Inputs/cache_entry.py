"""Edits entries of the tune or PTX cache in place, for tests of what a
reader makes of them (docs/tools.md, "The tune cache"; docs/runtime.md,
"The PTX cache").

    cache_entry.py FILE... [--if TEXT]... [--replace FROM TO]... [--reseal] [--fifo]

A FILE with a '*' is a glob pattern. --if keeps the files that hold TEXT
(every --if's); at least one file must be left. --replace edits the text
(FROM must occur); --reseal then writes the checksum the edited text has
(an edit the checksum does not catch, to reach the checks behind it);
--fifo replaces each file by a FIFO of its name. The checksum is computed
here from its definition, not by TL's code: FNV-1a 64 over the entry's
bytes but its second line, "checksum: fnv1a 0x<16 hex digits>"."""
import glob
import os
import sys

FIELD = b"checksum: fnv1a 0x"


def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


def reseal(text):
    """text (bytes) with its checksum line made to match the rest."""
    first, _, rest = text.partition(b"\n")
    line, _, rest = rest.partition(b"\n")
    assert line.startswith(FIELD), line
    return first + b"\n" + FIELD + b"%016x\n" % fnv1a(first + b"\n" + rest) + rest


def main(argv):
    files, needs, edits, seal, fifo = [], [], [], False, False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--if", "--replace"):
            n = 1 if a == "--if" else 2
            args = [x.encode() for x in argv[i + 1:i + 1 + n]]
            (needs.append(args[0]) if a == "--if" else edits.append(tuple(args)))
            i += 1 + n
            continue
        if a == "--reseal":
            seal = True
        elif a == "--fifo":
            fifo = True
        else:
            files += sorted(glob.glob(a)) if "*" in a else [a]
        i += 1
    texts = {}
    for f in files:
        with open(f, "rb") as fh:
            texts[f] = fh.read()
    files = [f for f in files if all(n in texts[f] for n in needs)]
    assert files, "no entry left to edit"
    for f in files:
        if fifo:
            os.remove(f)
            os.mkfifo(f)
            continue
        text = texts[f]
        for old, new in edits:
            assert old in text, (f, old)
            text = text.replace(old, new, 1)
        if seal:
            text = reseal(text)
        with open(f, "wb") as fh:
            fh.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
