/* Helpers shared by the files of lib/dtype: the float format description
 * used by the codec and by the register-op emulator, and the exact
 * rounding core both of them rely on. */
#ifndef TL_DTYPE_INTERNAL_H
#define TL_DTYPE_INTERNAL_H

#include "tl/dtype.h"

/* A float format reduced to what rounding needs. */
typedef struct TlFloatFmt {
  unsigned exp_bits, man_bits;
  int bias;
  TlFloatSpecials specials;
} TlFloatFmt;

TlFloatFmt tl_float_fmt_of(TlDType t);

/* Rounds the exact real hi + lo to fmt (nearest, ties to even, one
 * rounding), where hi = fl64(hi + lo) and |lo| <= ulp64(hi) / 2 as a
 * TwoSum produces them; lo = 0 rounds hi itself. Overflow, NaN and zero
 * rules are those of tl_dtype_encode. Returns the code point. */
uint64_t tl_float_round_pair(const TlFloatFmt *f, double hi, double lo);

/* Exact value of a code point of fmt. */
double tl_float_decode_fmt(const TlFloatFmt *f, uint64_t code);

/* Canonical NaN codes the emulator produces (PTX's canonical NaN). */
#define TL_F16_CANON_NAN 0x7fffu
#define TL_BF16_CANON_NAN 0x7fffu
#define TL_F32_CANON_NAN 0x7fffffffu

#endif
