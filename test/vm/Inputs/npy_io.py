"""Inputs and checks of npy.tl.

  npy_io.py gen PREFIX     writes the inputs
  npy_io.py check PREFIX   checks what tl-run saved
"""
import sys

import ml_dtypes
import numpy as np


def pack(codes, bits):
    """Compact little-endian packing: value i at stream bits [i*bits, ...)."""
    out = bytearray((len(codes) * bits + 7) // 8)
    for i, c in enumerate(codes):
        for b in range(bits):
            if (int(c) >> b) & 1:
                k = i * bits + b
                out[k // 8] |= 1 << (k % 8)
    return np.frombuffer(bytes(out), dtype=np.uint8)


def unpack(data, bits, n):
    v = int.from_bytes(data.tobytes(), "little")
    return [(v >> (i * bits)) & ((1 << bits) - 1) for i in range(n)]


def gen(p):
    rng = np.random.default_rng(1)
    i6 = rng.integers(-32, 32, size=32)
    np.save(p + ".i6.npy", pack(i6 & 63, 6))
    np.save(p + ".i6.codes.npy", i6)
    np.save(p + ".b.npy", rng.integers(0, 2, size=(4, 8)).astype(np.bool_))
    # format version 2.0
    with open(p + ".i16.npy", "wb") as f:
        np.lib.format.write_array(f, rng.integers(-30000, 30000, size=(4, 8)).astype(np.int16), version=(2, 0))
    bf = rng.uniform(-4, 4, size=32).astype(ml_dtypes.bfloat16)
    np.save(p + ".bf16.npy", bf.view(np.uint8))
    np.save(p + ".bf16.values.npy", bf.astype(np.float32))


def check(p):
    y = np.load(p + ".i6.out.npy")
    assert y.dtype == np.uint8 and y.shape == (24,), (y.dtype, y.shape)
    codes = np.load(p + ".i6.codes.npy")
    assert unpack(y, 6, 32) == list(codes & 63)
    b = np.load(p + ".b.npy")
    bo = np.load(p + ".b.out.npy")
    assert bo.dtype == np.bool_ and bo.shape == (4, 8) and (bo == ~b).all()
    i16 = np.load(p + ".i16.npy")
    o16 = np.load(p + ".i16.out.npy")
    assert o16.dtype == np.int16 and o16.shape == (4, 8) and (o16 == -i16).all()
    bf = np.load(p + ".bf16.out.npy")
    assert bf.dtype == np.uint8 and bf.shape == (64,)
    vals = bf.view(ml_dtypes.bfloat16).astype(np.float32)
    assert (vals == 2 * np.load(p + ".bf16.values.npy")).all()
    r = np.load(p + ".i6.rand.npy")
    ro = np.load(p + ".i6.rand.out.npy")
    assert r.dtype == np.uint8 and r.shape == (24,) and (r == ro).all()
    # rand: integer codes cover the type: both signs appear
    rc = unpack(r, 6, 32)
    assert any(c >= 32 for c in rc) and any(c < 32 for c in rc)
    print("ok")


if __name__ == "__main__":
    (gen if sys.argv[1] == "gen" else check)(sys.argv[2])
