"""Inputs and reference of the f16 x i6 matmul (matmul_f16_i6.tl).

  matmul_i6.py gen PREFIX M SEED   writes PREFIX.a.npy (f16 [M, 1024]),
                                   PREFIX.w.npy (the int6 weights as int8
                                   [1024, 1024]) and PREFIX.b.npy (them
                                   packed: u8 [64, 128, 96])
  matmul_i6.py check PREFIX M      compares PREFIX.c.npy with the reference

The packing is Tilus Fig. 9 written out: tile (kb, nb) of 16 x 8 weights is
held by 32 threads in the mma B layout local(2, 1).column_spatial(4, 8)
.local(2, 1), where thread t's local element i is row 8*(i//2) + 2*(t%4) +
i%2, column t//4; thread t's four 6-bit codes, little-endian in local order,
are the 24 bits of its three bytes in the u8 layout local(3).spatial(32):
bytes t, 32 + t and 64 + t of the tile's 96 bytes.
"""
import sys

import numpy as np

K, N = 1024, 1024


def pack(w):
    codes = (w.astype(np.int64) & 63).reshape(K // 16, 16, N // 8, 8)
    t = np.arange(32)[:, None]
    i = np.arange(4)[None, :]
    rows, cols = 8 * (i // 2) + 2 * (t % 4) + i % 2, t // 4 + 0 * i
    # bits[kb, nb, t] = sum_i code(row, col) << 6i
    tiles = codes[:, rows, :, cols]  # [32, 4, K/16, N/8]
    bits = (tiles << (6 * i)[..., None, None]).sum(axis=1)
    out = np.zeros((K // 16, N // 8, 96), dtype=np.uint8)
    for j in range(3):
        out[:, :, 32 * j:32 * j + 32] = ((bits >> (8 * j)) & 255).transpose(1, 2, 0)
    return out


def gen(prefix, m, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, size=(m, K)).astype(np.float16)
    w = rng.integers(-32, 32, size=(K, N)).astype(np.int8)
    np.save(prefix + ".a.npy", a)
    np.save(prefix + ".w.npy", w)
    np.save(prefix + ".b.npy", pack(w))


def check(prefix, m):
    a = np.load(prefix + ".a.npy").astype(np.float32)
    w = np.load(prefix + ".w.npy").astype(np.float32)
    c = np.load(prefix + ".c.npy")
    assert c.dtype == np.float16 and c.shape == (m, N), (c.dtype, c.shape)
    # f16 x i6 products have at most 11 + 6 significant bits: exact in f32;
    # each float32 addition rounds once, as the VM's f32 accumulator does.
    acc = np.zeros((m, N), dtype=np.float32)
    for k in range(K):
        acc = acc + np.outer(a[:, k], w[k])
    ref = acc.astype(np.float16)
    bad = np.argwhere(ref.view(np.uint16) != c.view(np.uint16))
    if len(bad):
        i, j = bad[0]
        sys.exit("%d elements differ; first [%d, %d]: got %r, expected %r"
                 % (len(bad), i, j, c[i, j], ref[i, j]))
    print("ok: %d x %d bit-exact" % (m, N))


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        check(sys.argv[2], int(sys.argv[3]))
