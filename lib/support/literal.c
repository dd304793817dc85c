/* Integer literals: the one reading of an integer's text that the IR
 * parser, template values, -D definitions and the tools' flags share.
 * Decimal digits are decimal whatever they start with (0100 is one
 * hundred: there are no octal literals); 0x or 0X and hex digits is
 * hexadecimal. The C library's strtol family is not used: with base 0 it
 * reads 0100 as octal, and every base accepts leading blanks and '+'. */
#include "tl/support.h"

#include <ctype.h>

TlIntStatus tl_int_literal(const char *s, size_t n, TlIntLit *out) {
  TlIntLit lit = {0, false, false};
  size_t i = 0;
  if (i < n && s[i] == '-') {
    lit.neg = true;
    i++;
  }
  unsigned base = 10;
  if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
    lit.hex = true;
    base = 16;
    i += 2;
  }
  if (i == n)
    return TL_INT_MALFORMED;
  bool big = false;
  for (; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    unsigned d;
    if (isdigit(c))
      d = (unsigned)(c - '0');
    else if (base == 16 && isxdigit(c))
      d = (unsigned)(tolower(c) - 'a' + 10);
    else
      return TL_INT_MALFORMED;
    /* Keep reading after an overflow: malformed text wins over size. */
    big = big || __builtin_mul_overflow(lit.mag, base, &lit.mag) ||
          __builtin_add_overflow(lit.mag, d, &lit.mag);
  }
  if (big)
    return TL_INT_TOO_LARGE;
  if (out)
    *out = lit;
  return TL_INT_OK;
}

TlIntStatus tl_int64_literal(const char *s, size_t n, int64_t *out) {
  TlIntLit lit;
  TlIntStatus st = tl_int_literal(s, n, &lit);
  if (st != TL_INT_OK)
    return st;
  if (lit.mag > (lit.neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
    return TL_INT_TOO_LARGE;
  if (out)
    *out = lit.neg ? (int64_t)(0 - lit.mag) : (int64_t)lit.mag;
  return TL_INT_OK;
}
