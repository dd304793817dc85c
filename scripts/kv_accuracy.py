"""The accuracy of decode attention over a quantised KV cache, by code type
and arrangement of the scales: the relative error of the output, ||o -
o_ref|| / ||o_ref||, against attention in float64 over the f16 keys and
values, the quantised cache dequantised exactly (the kernel's output is
within 2^-9 of sum P|V| of that, scripts/decode_attn.py).

  python3 scripts/kv_accuracy.py [--seed S] [--tokens L]

Two kinds of data, B = 1, Hq = 32 query heads on Hkv = 8, D = 128, L =
2048 tokens (the mean over 3 seeds): "gaussian" (q, K, V standard normal)
and "outliers" (K with a few channels 8 to 16 times wider and offset, the
outlier channels real K caches have, and per-token offsets; V with
per-token spreads). The arrangements (K's scales, V's scales):

  token D       K and V per token over all D channels (decode_attn.tl's
                token-wise cache)
  token g64/g32 per token in groups of 64 or 32 channels
  KC NR         K per channel over blocks of NR tokens, V per token
                (decode_attn.tl's KQ = 1)
  KIVI          K per channel over 32 tokens, V per token in groups of 32
                (KIVI's 2-bit arrangement)

Each quantiser is scripts/decode_attn.py's (asymmetric: zero the minimum,
scale (max - min) / QMAX rounded to f16, codes the nearest integer).
Prints a Markdown table.
"""
import importlib.util
import os
import sys

import numpy as np

_spec = importlib.util.spec_from_file_location(
    "decode_attn_ref", os.path.join(os.path.dirname(os.path.abspath(__file__)), "decode_attn.py"))
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)


def token_groups(x, kt, g):
    """x f16 [..., T, D] quantised per token in groups of g channels, as
    float64 values"""
    *lead, t, d = x.shape
    xg = x.reshape(*lead, t, d // g, g)
    q, s, z = ref.quantise_kt(xg, kt)
    return (s.astype(np.float64)[..., None] * q + z.astype(np.float64)[..., None]).reshape(x.shape)


def channel_blocks(x, kt, nr):
    """x f16 [..., T, D] (T a multiple of nr) quantised per channel over
    blocks of nr tokens, as float64 values"""
    q, s, z = ref.quantise_kc(x, kt, nr)
    st = np.repeat(s, nr, axis=-2).astype(np.float64)
    zt = np.repeat(z, nr, axis=-2).astype(np.float64)
    return st * q + zt


ARRANGEMENTS = [
    ("token D", lambda k, kt: token_groups(k, kt, k.shape[-1]), lambda v, kt: token_groups(v, kt, v.shape[-1])),
    ("token g64", lambda k, kt: token_groups(k, kt, 64), lambda v, kt: token_groups(v, kt, 64)),
    ("token g32", lambda k, kt: token_groups(k, kt, 32), lambda v, kt: token_groups(v, kt, 32)),
    ("KC 128", lambda k, kt: channel_blocks(k, kt, 128), lambda v, kt: token_groups(v, kt, v.shape[-1])),
    ("KC 64", lambda k, kt: channel_blocks(k, kt, 64), lambda v, kt: token_groups(v, kt, v.shape[-1])),
    ("KC 32", lambda k, kt: channel_blocks(k, kt, 32), lambda v, kt: token_groups(v, kt, v.shape[-1])),
    ("KIVI (K per channel over 32, V g32)", lambda k, kt: channel_blocks(k, kt, 32),
     lambda v, kt: token_groups(v, kt, 32)),
]
IN_KERNEL = {"token D", "KC 128", "KC 64", "KC 32"}


def data(kind, rng, hq=32, hkv=8, d=128, l=2048):
    q = rng.standard_normal((1, hq, d)).astype(np.float16)
    k = rng.standard_normal((1, hkv, l, d))
    v = rng.standard_normal((1, hkv, l, d))
    if kind == "outliers":
        wide = np.ones((1, hkv, 1, d))
        cols = rng.choice(d, 6, replace=False)
        wide[..., cols] = rng.uniform(8, 16, 6)
        k = k * wide + rng.uniform(-1, 1, (1, hkv, l, 1)) + (wide > 1) * rng.uniform(-4, 4, (1, hkv, 1, d))
        v = v * np.exp2(rng.uniform(-2, 1, (1, hkv, l, 1)))
    return q, k.astype(np.float16), v.astype(np.float16)


def main(argv):
    seed, l = 0, 2048
    if "--seed" in argv:
        seed = int(argv[argv.index("--seed") + 1])
    if "--tokens" in argv:
        l = int(argv[argv.index("--tokens") + 1])
    d = 128
    kinds = ("gaussian", "outliers")
    errs = {}
    for kind in kinds:
        for s in range(3):
            q, k, v = data(kind, np.random.default_rng(seed + s), l=l)
            want, _ = ref.reference(q, k.astype(np.float64), v.astype(np.float64), d ** -0.5)
            for name, fk, fv in ARRANGEMENTS:
                for kt in ("u8", "u4", "u2"):
                    o, _ = ref.reference(q, fk(k, kt), fv(v, kt), d ** -0.5)
                    e = np.linalg.norm(o - want) / np.linalg.norm(want)
                    errs.setdefault((kind, name, kt), []).append(e)
    print("| arrangement (K, V) | in decode_attn.tl | " +
          " | ".join("%s %s" % (kind, kt) for kind in kinds for kt in ("u8", "u4", "u2")) + " |")
    print("|---|---|" + "---|" * 6)
    for name, _, _ in ARRANGEMENTS:
        print("| %s | %s | " % (name, "yes" if name in IN_KERNEL else "not yet") +
              " | ".join("%.4f" % np.mean(errs[(kind, name, kt)]) for kind in kinds
                         for kt in ("u8", "u4", "u2")) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
