"""The PTX cache across processes: compiles kernels/vector_add.tl for sm_90
in a session whose cache is DIR and prints where its PTX came from; with
`corrupt`, `truncate` or `foreign` it first spoils the entry (garbage, half
of it, or the entry of another instance), which must be rebuilt.

    cache_test.py SOURCE-ROOT DIR [corrupt|truncate|foreign]"""
import glob
import os
import sys

import tl

root, cache = sys.argv[1], sys.argv[2]
mode = sys.argv[3] if len(sys.argv) > 3 else None
path = os.path.join(root, "kernels", "vector_add.tl")


def entries():
    return sorted(glob.glob(os.path.join(cache, "ptx", "*.txt")))


if mode:
    (entry,) = entries()
    with open(entry, "rb") as f:
        text = f.read()
    if mode == "corrupt":
        text = b"\x00garbage\n"
    elif mode == "truncate":
        text = text[: len(text) // 2]
    else:
        # Another instance's entry, made in a cache of its own.
        other = tl.Session(cache_dir=cache + ".other")
        other.compile(path, BLOCK=128).ptx(90)
        with open(glob.glob(os.path.join(cache + ".other", "ptx", "*.txt"))[0], "rb") as f:
            text = f.read()
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
