/* Warpgroup mma (wgmma) operands in shared memory: the canonical layouts
 * a matrix descriptor describes, and the match of a TL shared layout
 * against them (docs/layouts.md, "wgmma operands").
 *
 * A descriptor gives a start address, two byte strides (LBO and SBO) and
 * one of four swizzles; the hardware finds element (mn, k) of an operand
 * slice at the byte address swizzle(start + offset(mn, k)), the swizzle
 * acting on absolute shared addresses. With e bytes an element, T = 16 / e
 * elements a 16-byte chunk and W the swizzle's row bytes (32, 64 or 128):
 *
 *   K-major, no swizzle   (mn % 8) 16 + (mn / 8) SBO + (k % T) e + (k / T) LBO
 *   K-major, W swizzle    (mn % 8) W + (mn / 8) SBO + k e
 *   MN-major, no swizzle  (mn % T) e + (mn / T) SBO + (k % 8) 16 + (k / 8) LBO
 *   MN-major, W swizzle   (mn % (W / e)) e + (mn / (W / e)) LBO
 *                         + (k % 8) W + (k / 8) SBO
 *
 * and the W swizzle XORs address bits [7, 7 + log2(W / 16)) into bits [4,
 * 4 + log2(W / 16)): CuTe's Swizzle<log2(W / 16), 4, 3> on bytes. */
#include "tl/layout.h"

#include <string.h>

int64_t tl_wgmma_offset(const TlWgmmaDesc *d, unsigned elem_bytes, int64_t mn,
                        int64_t k) {
  int64_t e = elem_bytes, t = 16 / e, w = d->swizzle;
  if (!d->mn_major)
    return w ? (mn % 8) * w + (mn / 8) * d->sbo + k * e
             : (mn % 8) * 16 + (mn / 8) * d->sbo + (k % t) * e +
                   (k / t) * d->lbo;
  return w ? (mn % (w / e)) * e + (mn / (w / e)) * d->lbo + (k % 8) * w +
                 (k / 8) * d->sbo
           : (mn % t) * e + (mn / t) * d->sbo + (k % 8) * 16 + (k / 8) * d->lbo;
}

static int log2i(int64_t x) {
  int n = 0;
  while (x > 1)
    x >>= 1, n++;
  return n;
}

/* The element offset, before the swizzle, of (mn, k). */
static bool lin_at(const TlSharedLayout *u, int mn_dim, int64_t mn, int64_t k,
                   int64_t *off) {
  int64_t idx[2];
  idx[mn_dim] = mn;
  idx[1 - mn_dim] = k;
  return tl_shared_layout_offset(u, idx, off, NULL);
}

/* A stride probe: the byte distance from the slice's origin to (mn, k), or
 * `dflt` when (mn, k) lies outside the slice (the field is then unused). */
static int64_t probe(const int64_t *bytes, int64_t mns, int64_t ks, int64_t mn,
                     int64_t k, int64_t dflt) {
  return mn < mns && k < ks ? bytes[mn * ks + k] : dflt;
}

static bool fits(const TlWgmmaDesc *d, const int64_t *bytes, int64_t mns,
                 int64_t ks, unsigned e) {
  /* The strides are fields of 14 bits in units of 16 bytes. */
  if (d->lbo < 0 || d->sbo < 0 || d->lbo % 16 || d->sbo % 16 ||
      d->lbo >= (INT64_C(16) << 14) || d->sbo >= (INT64_C(16) << 14))
    return false;
  for (int64_t mn = 0; mn < mns; mn++)
    for (int64_t k = 0; k < ks; k++)
      if (bytes[mn * ks + k] != tl_wgmma_offset(d, e, mn, k))
        return false;
  return true;
}

bool tl_shared_layout_wgmma(const TlSharedLayout *l, unsigned elem_bits,
                            int mn_dim, int64_t mn0, int64_t mns, int64_t k0,
                            int64_t ks, bool allow_mn_major, TlWgmmaDesc *d,
                            TlErr *err) {
  if (l->rank != 2 || (mn_dim != 0 && mn_dim != 1))
    return tl_err(err, "a wgmma operand is a 2-D shared tile");
  if (elem_bits != 8 && elem_bits != 16 && elem_bits != 32)
    return tl_err(err, "wgmma reads 8-, 16- or 32-bit elements, not %u-bit",
                  elem_bits);
  unsigned e = elem_bits / 8;
  memset(d, 0, sizeof *d);
  int b = l->swizzle_bits;
  if (b) {
    if (b > 3 || l->swizzle_base + log2i(e) != 4 || l->swizzle_shift != 3)
      return tl_err(err,
                    "swizzle<%d, %d, %d> of %u-bit elements is not a wgmma "
                    "swizzle (swizzle<B, %d, 3> with B = 1, 2 or 3: 32-, 64- "
                    "or 128-byte rows)",
                    b, l->swizzle_base, l->swizzle_shift, elem_bits,
                    4 - log2i(e));
    d->swizzle = 16 << b;
  }
  TlSharedLayout u = *l;
  u.swizzle_bits = u.swizzle_base = u.swizzle_shift = 0;
  int64_t origin, last;
  if (mns <= 0 || ks <= 0 || !lin_at(&u, mn_dim, mn0, k0, &origin) ||
      !lin_at(&u, mn_dim, mn0 + mns - 1, k0 + ks - 1, &last))
    return tl_err(err, "the operand slice lies outside the shared tile");
  int64_t *bytes = tl_xmalloc(sizeof *bytes * (size_t)(mns * ks));
  for (int64_t mn = 0; mn < mns; mn++)
    for (int64_t k = 0; k < ks; k++) {
      int64_t o;
      lin_at(&u, mn_dim, mn0 + mn, k0 + k, &o);
      bytes[mn * ks + k] = (o - origin) * (int64_t)e;
    }
  int64_t t = 16 / e, w = d->swizzle;
  bool ok = false;
  /* K-major first: the only order 8-bit operands have. */
  d->mn_major = false;
  if (w) {
    d->lbo = 16; /* unused: a slice's k extent fits in one swizzled row */
    d->sbo = probe(bytes, mns, ks, 8, 0, 8 * w);
  } else {
    d->lbo = probe(bytes, mns, ks, 0, t, 16);
    d->sbo = probe(bytes, mns, ks, 8, 0, 128);
  }
  ok = fits(d, bytes, mns, ks, e);
  if (!ok && allow_mn_major) {
    d->mn_major = true;
    if (w) {
      d->lbo = probe(bytes, mns, ks, w / e, 0, 8 * w);
      d->sbo = probe(bytes, mns, ks, 0, 8, 8 * w);
    } else {
      d->sbo = probe(bytes, mns, ks, t, 0, 128);
      d->lbo = probe(bytes, mns, ks, 0, 8, 16);
    }
    ok = fits(d, bytes, mns, ks, e);
  }
  tl_free(bytes);
  if (!ok)
    return tl_err(err,
                  "its %lldx%lld slices are not a wgmma layout (%s: "
                  "%s)",
                  (long long)mns, (long long)ks,
                  allow_mn_major ? "K- or MN-major" : "K-major",
                  w ? "rows of the swizzle's width, groups of 8 rows at one "
                      "stride"
                    : "8 x 16-byte core matrices at two strides");
  d->start = origin;
  return true;
}
