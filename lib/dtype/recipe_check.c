/* The checker of cast recipes: runs a recipe through the register-op
 * emulator and compares every output value with the host codec
 * (tl_dtype_decode/encode) or the quantisation reference
 * (tl_kv_quant_ref), bit for bit.
 *
 * Inputs are built with tl_dtype_pack, independent of how the recipe's
 * generator reasons about bit positions, so a wrong layout claim
 * (value_of) fails here as surely as a wrong constant. */
#include "dtype_internal.h"

#include <math.h>
#include <string.h>

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint32_t element(const TlCastRecipe *r, const uint32_t *out,
                        unsigned e) {
  if (r->dst.bits == 32)
    return out[e];
  return (out[e / 2] >> (16 * (e % 2))) & 0xffff;
}

static bool same(TlDType t, uint64_t expect, uint64_t got) {
  if (tl_dtype_code_is_nan(t, expect))
    return tl_dtype_code_is_nan(t, got);
  return expect == got;
}

static bool check_cast_once(const TlCastRecipe *r, const uint64_t *codes,
                            uint64_t *count, TlErr *err) {
  uint8_t bytes[4 * TL_RECIPE_MAX_WORDS] = {0};
  uint32_t in[TL_RECIPE_MAX_WORDS] = {0}, out[TL_RECIPE_MAX_WORDS];
  unsigned nv = r->n_values;
  tl_dtype_pack(r->src, codes, nv, bytes, 0);
  for (unsigned k = 0; k < r->n_in_words; k++)
    in[k] = (uint32_t)bytes[4 * k] | (uint32_t)bytes[4 * k + 1] << 8 |
            (uint32_t)bytes[4 * k + 2] << 16 | (uint32_t)bytes[4 * k + 3] << 24;
  if (!tl_cast_recipe_run(r, in, NULL, out, err))
    return false;
  for (unsigned e = 0; e < nv; e++) {
    uint64_t c = codes[r->value_of[e]];
    uint64_t expect = tl_dtype_encode(r->dst, tl_dtype_decode(r->src, c));
    uint32_t got = element(r, out, e);
    if (!same(r->dst, expect, got))
      return tl_err(err,
                    "%s -> %s: element %u (input value %u, code 0x%llx): "
                    "got 0x%x, expected 0x%llx",
                    tl_dtype_name(r->src), tl_dtype_name(r->dst), e,
                    r->value_of[e], (unsigned long long)c, got,
                    (unsigned long long)expect);
  }
  *count += nv;
  return true;
}

static bool check_layout(const TlCastRecipe *r, unsigned nv, TlErr *err) {
  bool seen[TL_RECIPE_MAX_VALUES] = {0};
  if (nv == 0 || nv > TL_RECIPE_MAX_VALUES)
    return tl_err(err, "%s -> %s: bad value count %u", tl_dtype_name(r->src),
                  tl_dtype_name(r->dst), nv);
  for (unsigned e = 0; e < nv; e++) {
    if (r->value_of[e] >= nv || seen[r->value_of[e]])
      return tl_err(err, "%s -> %s: value_of is not a permutation",
                    tl_dtype_name(r->src), tl_dtype_name(r->dst));
    seen[r->value_of[e]] = true;
  }
  return true;
}

static bool verify_cast(const TlCastRecipe *r, uint64_t *count, TlErr *err) {
  unsigned w = r->src.bits, nv = r->n_values;
  uint64_t codes[TL_RECIPE_MAX_VALUES], ncodes = (uint64_t)1 << w, seed = 1;
  if (nv * w != 32 * r->n_in_words)
    return tl_err(err, "%s -> %s: %u values of %u bits in %u words",
                  tl_dtype_name(r->src), tl_dtype_name(r->dst), nv, w,
                  r->n_in_words);
  if (!check_layout(r, nv, err))
    return false;
  /* every code in every position, with neighbours varying by step */
  static const unsigned steps[2] = {0, 3};
  for (unsigned s = 0; s < 2; s++)
    for (uint64_t c = 0; c < ncodes; c++) {
      for (unsigned i = 0; i < nv; i++)
        codes[i] = (c + (uint64_t)i * steps[s]) % ncodes;
      if (!check_cast_once(r, codes, count, err))
        return false;
    }
  for (unsigned t = 0; t < 128; t++) {
    for (unsigned i = 0; i < nv; i++)
      codes[i] = splitmix(&seed) % ncodes;
    if (!check_cast_once(r, codes, count, err))
      return false;
  }
  return true;
}

static bool check_quant_once(const TlCastRecipe *r, const uint32_t *elems,
                             uint32_t scale_code, int zero, uint64_t *count,
                             TlErr *err) {
  uint32_t in[TL_RECIPE_MAX_WORDS] = {0}, out[1], params[2];
  unsigned ne = r->n_values, w = r->dst.bits;
  if (!tl_kv_quant_params(r, scale_code, zero, params, err))
    return false;
  for (unsigned e = 0; e < ne; e++) {
    if (r->src.bits == 32)
      in[e] = elems[e];
    else
      in[e / 2] |= elems[e] << (16 * (e % 2));
  }
  if (!tl_cast_recipe_run(r, in, params, out, err))
    return false;
  double scale = tl_dtype_decode(r->src, scale_code);
  for (unsigned i = 0; i < ne; i++) {
    uint32_t x = elems[r->value_of[i]];
    uint64_t expect =
        tl_kv_quant_ref(r->dst, tl_dtype_decode(r->src, x), scale, zero);
    uint64_t got = (out[0] >> (i * w)) & ((1u << w) - 1);
    if (got != expect)
      return tl_err(err,
                    "%s -> %s: value %u (input 0x%x, scale 0x%x, zero %d): "
                    "got 0x%llx, expected 0x%llx",
                    tl_dtype_name(r->src), tl_dtype_name(r->dst), i, x,
                    scale_code, zero, (unsigned long long)got,
                    (unsigned long long)expect);
  }
  *count += ne;
  return true;
}

static bool verify_quant(const TlCastRecipe *r, uint64_t *count, TlErr *err) {
  unsigned w = r->dst.bits, ne = r->n_values;
  if (ne * w != 32 || !check_layout(r, ne, err))
    return tl_err(err, "%s -> %s: bad quantising layout", tl_dtype_name(r->src),
                  tl_dtype_name(r->dst));
  /* scales: exact 1, inexact ones near 1/7 and 3.7, a large and a tiny */
  static const double scales[4] = {1.0, 1.0 / 7.0, 3.7, 300.0};
  int off = r->dst.kind == TL_DTYPE_INT ? 1 << (w - 1) : 0;
  int zeros[3] = {0, (1 << (w - 1)) - off, (1 << w) - 1 - off};
  uint32_t elems[TL_RECIPE_MAX_VALUES];
  uint64_t seed = 7;
  for (unsigned si = 0; si < 4; si++) {
    uint32_t sc = (uint32_t)tl_dtype_encode(r->src, scales[si]);
    for (unsigned zi = 0; zi < 3; zi++) {
      if (r->src.bits == 16) {
        /* every input code under one inexact (scale, zero) pair, every
         * 29th stretch of codes under the others: keeps the check to a
         * fraction of a second per recipe, sanitizers included */
        bool full = si == 1 && zi == 1;
        for (uint32_t base = 0; base < 65536; base += full ? ne : 29 * ne) {
          for (unsigned e = 0; e < ne; e++)
            elems[e] = (base + e * 4099u) & 0xffff; /* spread neighbours */
          if (!check_quant_once(r, elems, sc, zeros[zi], count, err))
            return false;
        }
      } else { /* f32: random codes, and values at rounding ties */
        double s = tl_dtype_decode(r->src, sc);
        for (unsigned t = 0; t < 256; t++) {
          for (unsigned e = 0; e < ne; e++) {
            uint64_t z = splitmix(&seed);
            if (z & 1)
              elems[e] = (uint32_t)(z >> 32);
            else {
              double k =
                  (double)((int)((z >> 8) % 64) - 32) + 0.5 * ((z >> 20) & 1);
              elems[e] = (uint32_t)tl_dtype_encode(r->src, k / s);
            }
          }
          if (!check_quant_once(r, elems, sc, zeros[zi], count, err))
            return false;
        }
      }
    }
  }
  return true;
}

void tl_cast_recipe_arrange(const TlCastRecipe *r, const uint64_t *codes,
                            uint32_t *words) {
  uint64_t at[TL_RECIPE_MAX_VALUES];
  uint8_t bytes[4 * TL_RECIPE_MAX_WORDS] = {0};
  tl_assert(r->kind != TL_RECIPE_QUANT && r->n_values <= TL_RECIPE_MAX_VALUES);
  for (unsigned e = 0; e < r->n_values; e++)
    at[r->value_of[e]] = codes[e];
  tl_dtype_pack(r->src, at, r->n_values, bytes, 0);
  for (unsigned k = 0; k < r->n_in_words; k++)
    words[k] = (uint32_t)bytes[4 * k] | (uint32_t)bytes[4 * k + 1] << 8 |
               (uint32_t)bytes[4 * k + 2] << 16 |
               (uint32_t)bytes[4 * k + 3] << 24;
}

unsigned tl_cast_recipe_interleave(const TlCastRecipe *r) {
  if (r->kind == TL_RECIPE_QUANT || r->dst.bits != 16)
    return 0;
  for (unsigned d = 1; 2 * d <= r->n_values; d *= 2) {
    if (r->n_values % (2 * d))
      continue;
    bool ok = true;
    for (unsigned j = 0; ok && 2 * j < r->n_values; j++) {
      unsigned first = j / d * 2 * d + j % d;
      ok = r->value_of[2 * j] == first && r->value_of[2 * j + 1] == first + d;
    }
    if (ok)
      return d;
  }
  return 0;
}

bool tl_cast_recipe_verify(const TlCastRecipe *r, uint64_t *n_checked,
                           TlErr *err) {
  uint64_t count = 0;
  bool ok = r->kind == TL_RECIPE_QUANT ? verify_quant(r, &count, err)
                                       : verify_cast(r, &count, err);
  if (n_checked)
    *n_checked = count;
  return ok;
}
