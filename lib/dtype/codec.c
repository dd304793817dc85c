/* The host reference codec: exact decode of every code point to double and
 * encode from double with one round-to-nearest-even.
 *
 * This is the one definition of what a code point means; the VM, the
 * tests, the weight packers and the recipe checker all call it. Floats are
 * handled by one generic routine parameterised by (exp_bits, man_bits,
 * bias, special-value rule) so that f16 and f4e2m1 share their rounding
 * code and their tests. Everything is exact because every format here has
 * at most 24 significant bits (f64 is handled by bit copy), so every value
 * and every rounding midpoint is a double. */
#include "dtype_internal.h"

#include <math.h>
#include <string.h>

static uint64_t low_mask(unsigned bits) {
  return bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
}

/* 2^k as a double, built from its bits; k in the normal range. */
static double pow2(int k) {
  uint64_t bits = (uint64_t)(k + 1023) << 52;
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

double tl_float_decode_fmt(const TlFloatFmt *f, uint64_t code) {
  unsigned e = f->exp_bits, m = f->man_bits;
  uint64_t top = low_mask(e);
  uint64_t sign = (code >> (e + m)) & 1;
  uint64_t ef = (code >> m) & top, mf = code & low_mask(m);
  double v;
  if (f->specials == TL_FLOAT_IEEE && ef == top)
    v = mf ? NAN : INFINITY;
  else if (f->specials == TL_FLOAT_FN && ef == top && mf == low_mask(m))
    v = NAN;
  else if (ef == 0) /* subnormal: 0.M * 2^(1-bias); the product is exact */
    v = (double)mf * pow2(1 - f->bias - (int)m);
  else { /* normal 1.M * 2^(E-bias): assemble the double's fields */
    uint64_t bits =
        ((uint64_t)((int)ef - f->bias + 1023) << 52) | (mf << (52 - m));
    memcpy(&v, &bits, sizeof v);
  }
  if (isnan(v))
    return v; /* NaN sign is not part of the value */
  return sign ? -v : v;
}

/* Code magnitude (exponent and mantissa fields) of the largest finite
 * value, and of infinity for IEEE formats. */
static uint64_t max_mag(const TlFloatFmt *f) {
  uint64_t top = low_mask(f->exp_bits), m1 = low_mask(f->man_bits);
  switch (f->specials) {
  case TL_FLOAT_IEEE:
    return ((top - 1) << f->man_bits) | m1;
  case TL_FLOAT_FN:
    return (top << f->man_bits) | (m1 - 1);
  default:
    return (top << f->man_bits) | m1;
  }
}

static uint64_t canonical_nan(const TlFloatFmt *f) {
  uint64_t top = low_mask(f->exp_bits);
  switch (f->specials) {
  case TL_FLOAT_IEEE: /* quiet bit = top mantissa bit */
    return (top << f->man_bits) | ((uint64_t)1 << (f->man_bits - 1));
  case TL_FLOAT_FN:
    return (top << f->man_bits) | low_mask(f->man_bits);
  default:
    return 0; /* no NaN: documented choice, NaN -> +0 */
  }
}

/* Overflowed magnitude: inf where the format has it, else saturate. */
static uint64_t overflow_mag(const TlFloatFmt *f) {
  if (f->specials == TL_FLOAT_IEEE)
    return low_mask(f->exp_bits) << f->man_bits;
  return max_mag(f);
}

uint64_t tl_float_round_pair(const TlFloatFmt *f, double hi, double lo) {
  unsigned e = f->exp_bits, m = f->man_bits;
  if (m == 52) { /* f64: hi is the value */
    uint64_t bits;
    if (isnan(hi))
      return 0x7ff8000000000000ull;
    memcpy(&bits, &hi, sizeof bits);
    return bits;
  }
  if (isnan(hi))
    return canonical_nan(f);
  uint64_t sign = signbit(hi) ? (uint64_t)1 << (e + m) : 0;
  double a = fabs(hi);
  /* lo measured in the direction of growing magnitude */
  double l = signbit(hi) ? -lo : lo;
  if (isinf(a))
    return sign | overflow_mag(f);
  if (a == 0.0)
    return sign;
  /* Integer rounding on the double's significand: a = sig * 2^(ea-52)
   * with sig in [2^52, 2^53). The target quantum is 2^(max(ea, emin) - m);
   * drop sh = that exponent - (ea - 52) low bits and round on them. (A
   * subnormal double, whose sig is misread here, lies far below every
   * format's smallest quantum, so sh > 54 and it rounds to 0 as it
   * should.) */
  uint64_t abits;
  memcpy(&abits, &a, sizeof abits);
  int ea = (int)(abits >> 52) - 1023, emin = 1 - f->bias;
  uint64_t sig = (abits & low_mask(52)) | ((uint64_t)1 << 52);
  int eu = ea < emin ? emin : ea;
  if (eu > f->bias + (1 << e)) /* far beyond any finite value */
    return sign | overflow_mag(f);
  int sh = (eu - (int)m) - (ea - 52);
  uint64_t n;
  if (sh <= 0) /* the quantum is at or below the double's: exact */
    n = sig << -sh;
  else if (sh > 54) /* a < quantum / 4: rounds to zero */
    n = 0;
  else {
    uint64_t rem = sig & low_mask((unsigned)sh);
    uint64_t half = (uint64_t)1 << (sh - 1);
    n = sig >> sh;
    bool up;
    if (rem > half)
      up = true;
    else if (rem < half)
      up = false;
    else if (l != 0.0) /* hi is a midpoint but the exact value is not */
      up = l > 0.0;
    else /* a true tie: to even */
      up = n & 1;
    n += up;
  }
  uint64_t mag;
  if (ea < emin) /* subnormal range; n == 2^m is the smallest normal */
    mag = n;
  else /* n in [2^m, 2^(m+1)]: a carry out of the mantissa bumps E */
    mag = ((uint64_t)(eu + f->bias) << m) + (n - ((uint64_t)1 << m));
  if (mag > max_mag(f))
    return sign | overflow_mag(f);
  return sign | mag;
}

double tl_dtype_decode(TlDType t, uint64_t code) {
  code &= low_mask(t.bits);
  switch (t.kind) {
  case TL_DTYPE_BOOL:
  case TL_DTYPE_UINT:
    return (double)code;
  case TL_DTYPE_INT:
    if (t.bits < 64 && (code >> (t.bits - 1)) & 1)
      code |= ~low_mask(t.bits); /* sign-extend */
    return (double)(int64_t)code;
  case TL_DTYPE_FLOAT: {
    if (t.bits == 64) {
      double d;
      memcpy(&d, &code, sizeof d);
      return d;
    }
    TlFloatFmt f = tl_float_fmt_of(t);
    return tl_float_decode_fmt(&f, code);
  }
  default:
    return NAN;
  }
}

/* Nearest integer, ties to even. floor and x - floor(x) are exact. */
static double rne_int(double x) {
  double fl = floor(x), frac = x - fl;
  if (frac > 0.5 || (frac == 0.5 && fmod(fl, 2.0) != 0.0))
    return fl + 1.0;
  return fl;
}

uint64_t tl_dtype_encode(TlDType t, double x) {
  switch (t.kind) {
  case TL_DTYPE_BOOL:
    return x != 0.0 || isnan(x); /* C's conversion to _Bool */
  case TL_DTYPE_UINT: {
    if (isnan(x))
      return 0;
    double r = rne_int(x);
    if (r <= 0.0)
      return 0;
    if (r >= ldexp(1.0, t.bits)) /* 2^bits is exact; max = 2^bits - 1 */
      return low_mask(t.bits);
    return (uint64_t)r;
  }
  case TL_DTYPE_INT: {
    if (isnan(x))
      return 0;
    double r = rne_int(x), lim = ldexp(1.0, t.bits - 1);
    int64_t v;
    if (r >= lim)
      v = (int64_t)(low_mask(t.bits - 1)); /* 2^(N-1) - 1 */
    else if (r <= -lim)
      v = t.bits == 64 ? INT64_MIN : -(int64_t)((uint64_t)1 << (t.bits - 1));
    else
      v = (int64_t)r;
    return (uint64_t)v & low_mask(t.bits);
  }
  case TL_DTYPE_FLOAT: {
    TlFloatFmt f = tl_float_fmt_of(t);
    return tl_float_round_pair(&f, x, 0.0);
  }
  default:
    return 0;
  }
}

uint64_t tl_dtype_encode_f32(TlDType t, float x) {
  return tl_dtype_encode(t, (double)x);
}

bool tl_dtype_nan_code(TlDType t, uint64_t *code) {
  if (t.kind != TL_DTYPE_FLOAT || tl_dtype_specials(t) == TL_FLOAT_FINITE)
    return false;
  if (t.bits == 64)
    *code = 0x7ff8000000000000ull;
  else {
    TlFloatFmt f = tl_float_fmt_of(t);
    *code = canonical_nan(&f);
  }
  return true;
}

bool tl_dtype_code_is_nan(TlDType t, uint64_t code) {
  return t.kind == TL_DTYPE_FLOAT && isnan(tl_dtype_decode(t, code));
}
