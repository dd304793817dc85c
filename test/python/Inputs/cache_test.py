"""The PTX cache across processes: compiles kernels/vector_add.tl for sm_90
in a session whose cache is DIR and prints where its PTX came from and the
launch's sizes; with a mode it first spoils the entry, which must be
rebuilt: `corrupt` (garbage), `truncate` (half of it), `foreign` (the
entry of another instance), `ptx` (an ld.global made ld.shared), `smem`
and `workspace` (their 0 made 1: edits that keep the entry's length and
form), `fifo` (a FIFO in its place, which must not block the read).

    cache_test.py SOURCE-ROOT DIR [MODE]"""
import glob
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
import cache_entry  # noqa: E402

import tl  # noqa: E402

root, cache = sys.argv[1], sys.argv[2]
mode = sys.argv[3] if len(sys.argv) > 3 else None
path = os.path.join(root, "kernels", "vector_add.tl")


def entries():
    return sorted(glob.glob(os.path.join(cache, "ptx", "*.txt")))


if mode:
    (entry,) = entries()
    with open(entry, "rb") as f:
        text = f.read()
    edits = {"ptx": b"ld.global.b32", "smem": b"smem: 0\n", "workspace": b"workspace: 0\n"}
    if mode in edits:
        old = edits[mode]
        assert old in text, (mode, text)
        new = old.replace(b"global", b"shared").replace(b"0", b"1")
        assert len(new) == len(old)
        text = text.replace(old, new, 1)
    elif mode == "fifo":
        cache_entry.main([entry, "--fifo"])
    elif mode == "corrupt":
        text = b"\x00garbage\n"
    elif mode == "truncate":
        text = text[: len(text) // 2]
    else:
        # Another instance's entry, made in a cache of its own.
        other = tl.Session(cache_dir=cache + ".other")
        other.compile(path, BLOCK=128).ptx(90)
        with open(glob.glob(os.path.join(cache + ".other", "ptx", "*.txt"))[0], "rb") as f:
            text = f.read()
    if mode != "fifo":
        with open(entry, "wb") as f:
            f.write(text)

s = tl.Session(cache_dir=cache)
info = s.compile(path, BLOCK=256).ptx_info(90)
assert ".entry vector_add" in info["ptx"]
assert info["target"] == "sm_90a", info["target"]
print(f"origin: {info['origin']}")
if info["why"]:
    print(f"why: {info['why']}")
print(f"entries: {len(entries())}")
print(f"sizes: smem={info['smem_bytes']} workspace={info['workspace_bytes']}")
