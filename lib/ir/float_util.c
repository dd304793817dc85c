/* Float formats as the IR needs them for literals and constant folding:
 * rounding a double to any (exp, man) format with round-to-nearest-even,
 * and converting bit patterns. The f8e4m3 and f8e5m2 formats follow the OCP
 * FP8 rules (e4m3: no infinity, NaN = S.1111.111; e5m2: IEEE-like); every
 * other small float has no infinity or NaN. f16, bf16, f32 and f64 are
 * IEEE-754 binary formats (bf16: binary32 with 7 mantissa bits). */
#include "float_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_std(unsigned e, unsigned m) {
  return (e == 5 && m == 10) || (e == 8 && m == 7) || (e == 8 && m == 23) ||
         (e == 11 && m == 52);
}

bool tl_float_has_inf(unsigned e, unsigned m) {
  return is_std(e, m) || (e == 5 && m == 2);
}

bool tl_float_has_nan(unsigned e, unsigned m) {
  return is_std(e, m) || (e == 5 && m == 2) || (e == 4 && m == 3);
}

double tl_float_max(unsigned e, unsigned m) {
  int bias = (1 << (e - 1)) - 1;
  if (e == 4 && m == 3) /* OCP e4m3: S.1111.111 is NaN, so 1.110 x 2^8 */
    return 448.0;
  int emax = tl_float_has_inf(e, m) ? (1 << e) - 2 - bias : (1 << e) - 1 - bias;
  return ldexp(2.0 - ldexp(1.0, -(int)m), emax);
}

double tl_float_round(double v, unsigned e, unsigned m, bool *overflow) {
  if (overflow)
    *overflow = false;
  if (isnan(v) || v == 0 || (e == 11 && m == 52))
    return v;
  if (isinf(v)) {
    if (tl_float_has_inf(e, m))
      return v;
    if (overflow)
      *overflow = true;
    return copysign(tl_float_max(e, m), v);
  }
  int bias = (1 << (e - 1)) - 1;
  int emin = 1 - bias; /* exponent of the smallest normal */
  int ex;
  frexp(v, &ex); /* v = f * 2^ex, 0.5 <= |f| < 1 */
  int exp2 = ex - 1;
  if (exp2 < emin)
    exp2 = emin;
  /* Quantum of the format at this exponent: 2^(exp2 - m). */
  double q = ldexp(1.0, exp2 - (int)m);
  double r = nearbyint(v / q) * q; /* default rounding mode: nearest-even */
  double max = tl_float_max(e, m);
  if (fabs(r) > max) {
    if (overflow)
      *overflow = true;
    /* IEEE formats overflow to infinity when the rounded value passes the
     * largest finite number; formats without infinity saturate. */
    if (tl_float_has_inf(e, m))
      return copysign(INFINITY, v);
    return copysign(max, v);
  }
  return r;
}

uint64_t tl_float_to_bits(double v, unsigned e, unsigned m) {
  unsigned n = 1 + e + m;
  uint64_t sign = signbit(v) ? 1ull << (n - 1) : 0;
  uint64_t expmask = (1ull << e) - 1;
  if (isnan(v)) {
    if (e == 4 && m == 3)
      return sign | 0x7f;
    return (expmask << m) | (1ull << (m - 1));
  }
  if (isinf(v))
    return sign | (expmask << m);
  double a = fabs(v);
  if (a == 0)
    return sign;
  int bias = (1 << (e - 1)) - 1;
  int ex;
  frexp(a, &ex);
  int exp2 = ex - 1;
  if (exp2 < 1 - bias) /* subnormal */
    return sign | (uint64_t)ldexp(a, bias - 1 + (int)m);
  uint64_t frac = (uint64_t)(ldexp(a, (int)m - exp2)) - (1ull << m);
  return sign | ((uint64_t)(exp2 + bias) << m) | frac;
}

double tl_float_from_bits(uint64_t bits, unsigned e, unsigned m, bool *valid) {
  unsigned n = 1 + e + m;
  if (valid)
    *valid = n == 64 || bits >> n == 0;
  bool neg = (bits >> (n - 1)) & 1;
  uint64_t ex = (bits >> m) & ((1ull << e) - 1);
  uint64_t frac = bits & ((1ull << m) - 1);
  int bias = (1 << (e - 1)) - 1;
  double v;
  if (ex == (1ull << e) - 1 && tl_float_has_inf(e, m))
    v = frac ? NAN : INFINITY;
  else if (e == 4 && m == 3 && ex == 15 && frac == 7)
    v = NAN;
  else if (ex == 0)
    v = ldexp((double)frac, 1 - bias - (int)m);
  else
    v = ldexp((double)(frac | (1ull << m)), (int)ex - bias - (int)m);
  return neg ? -v : v;
}

/* Normalises a positive decimal numeral ("12.5e-3", "0.001") to its
 * significant digits (no leading or trailing zeros) and the power of ten of
 * the first digit. Returns false for zero. */
static bool decimal_digits(const char *s, char *digits, size_t cap, long *exp10) {
  size_t n = 0;
  long point = -1, pos = 0, lead = -1;
  for (; *s && *s != 'e' && *s != 'E'; s++) {
    if (*s == '.') {
      point = pos;
      continue;
    }
    if (*s != '0' && lead < 0)
      lead = pos;
    if (lead >= 0 && n + 1 < cap)
      digits[n++] = *s;
    pos++;
  }
  if (point < 0)
    point = pos;
  long e = (*s == 'e' || *s == 'E') ? strtol(s + 1, NULL, 10) : 0;
  while (n && digits[n - 1] == '0')
    n--;
  digits[n] = 0;
  if (lead < 0 || !n)
    return false;
  *exp10 = point - lead - 1 + e;
  return true;
}

/* Sign of (text - v) for a positive decimal numeral and a positive double,
 * compared exactly: glibc prints the exact decimal expansion of a double
 * (at most 767 significant digits). */
static int compare_decimal(const char *text, double v) {
  static char a[1024], b[1024], buf[1100];
  long ea, eb;
  bool za = !decimal_digits(text, a, sizeof a, &ea);
  snprintf(buf, sizeof buf, "%.800e", v);
  bool zb = !decimal_digits(buf, b, sizeof b, &eb);
  if (za || zb)
    return za == zb ? 0 : za ? -1 : 1;
  if (ea != eb)
    return ea > eb ? 1 : -1;
  for (size_t i = 0;; i++) {
    char x = a[i] ? a[i] : '0', y = b[i] ? b[i] : '0';
    if (x != y)
      return x > y ? 1 : -1;
    if (!a[i] && !b[i])
      return 0;
  }
}

/* Rounds a decimal literal to a float format exactly once. strtod rounds to
 * double first; that double-rounding can only go wrong when the double
 * lands exactly halfway between two neighbours of the format, so then the
 * literal itself decides which way to go. */
double tl_float_round_decimal(const char *text, bool neg, unsigned e,
                            unsigned m, bool *overflow) {
  double v = strtod(text, NULL);
  double r = tl_float_round(v, e, m, overflow);
  if (!isfinite(r) || r == v || (e == 11 && m == 52))
    return neg ? -r : r;
  double other = 2 * v - r;
  bool ov2;
  if (other != r && isfinite(other) &&
      tl_float_round(other, e, m, &ov2) == other && !ov2) {
    int c = compare_decimal(text, v);
    if (c != 0)
      r = (c > 0) == (other > r) ? other : r;
  }
  return neg ? -r : r;
}

