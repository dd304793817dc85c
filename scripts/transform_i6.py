"""Helpers for the weight transform kernel (kernels/transform_i6.tl).

  transform_i6.py codes W.npy OUT.npy
      packs the int6 weights of W.npy (int8 [1024, 1024], values -32..31, as
      matmul_i6.py gen writes them) compactly as TL stores i6 (element e at
      bits 6e .. 6e + 5, little-endian) into OUT.npy, a u1 array of bytes:
      the form tl-run takes for a !tl.ptr<i6> argument
  transform_i6.py check RAW.npy OUT.npy
      decodes RAW.npy (compact i6 bytes, as tl-run --save writes a
      !tl.ptr<i6> buffer), packs it with matmul_i6.py's Fig. 9 packer and
      compares with OUT.npy (the kernel's u8 [64, 128, 96]), byte for byte
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matmul_i6  # noqa: E402


def codes(w):
    bits = ((w.astype(np.int64).reshape(-1, 1) & 63) >> np.arange(6)) & 1
    return np.packbits(bits.astype(np.uint8).reshape(-1), bitorder="little")


def decode(raw):
    bits = np.unpackbits(raw.reshape(-1), bitorder="little").reshape(-1, 6)
    c = (bits.astype(np.int64) << np.arange(6)).sum(axis=1)
    return np.where(c >= 32, c - 64, c).astype(np.int8).reshape(1024, 1024)


if __name__ == "__main__":
    if sys.argv[1] == "codes":
        np.save(sys.argv[3], codes(np.load(sys.argv[2])))
    else:
        want = matmul_i6.pack(decode(np.load(sys.argv[2])))
        got = np.load(sys.argv[3]).reshape(want.shape)
        bad = np.argwhere(got != want)
        if len(bad):
            sys.exit("%d bytes differ; first %s: got %d, expected %d"
                     % (len(bad), tuple(bad[0]), got[tuple(bad[0])],
                        want[tuple(bad[0])]))
        print("ok: %d bytes equal" % want.size)
