/* The data-type family: constructors, properties, names and parsing.
 *
 * A TlDType is a 4-byte value, so types are compared structurally and never
 * allocated. The set of valid types is small and closed (bool, u1..u8,
 * u16/32/64, i2..i8, i16/32/64, f16, bf16, f32, f64 and the 28 small
 * floats fNeXmY with X >= 1, Y >= 0, 2 <= N <= 8); parsing and printing
 * agree on it through the canonical-name table below. */
#include "dtype_internal.h"

#include <math.h>
#include <string.h>

static TlDType make(TlDTypeKind k, unsigned bits, unsigned e, unsigned m) {
  TlDType t = {(uint8_t)k, (uint8_t)bits, (uint8_t)e, (uint8_t)m};
  return t;
}

static const TlDType invalid_type = {0, 0, 0, 0};

TlDType tl_dtype_bool(void) { return make(TL_DTYPE_BOOL, 1, 0, 0); }
TlDType tl_dtype_f16(void) { return make(TL_DTYPE_FLOAT, 16, 5, 10); }
TlDType tl_dtype_bf16(void) { return make(TL_DTYPE_FLOAT, 16, 8, 7); }
TlDType tl_dtype_f32(void) { return make(TL_DTYPE_FLOAT, 32, 8, 23); }
TlDType tl_dtype_f64(void) { return make(TL_DTYPE_FLOAT, 64, 11, 52); }

static bool wide_width(unsigned bits) {
  return bits == 16 || bits == 32 || bits == 64;
}

TlDType tl_dtype_uint(unsigned bits) {
  if ((bits >= 1 && bits <= 8) || wide_width(bits))
    return make(TL_DTYPE_UINT, bits, 0, 0);
  return invalid_type;
}

TlDType tl_dtype_int(unsigned bits) {
  /* i1 would be {-1, 0}; the IR spells bool "i1", so the signed family
   * starts at 2 bits and "i1" parses as bool. */
  if ((bits >= 2 && bits <= 8) || wide_width(bits))
    return make(TL_DTYPE_INT, bits, 0, 0);
  return invalid_type;
}

TlDType tl_dtype_small_float(unsigned e, unsigned m) {
  /* Y = 0 is allowed: fNeX m0 formats are powers of two times a sign
   * (f2e1m0 = {0, 2}), the same family rule with no mantissa. X = 0 is
   * not a float (it would be fixed point). */
  unsigned bits = 1 + e + m;
  if (e >= 1 && e <= 7 && m <= 6 && bits <= 8)
    return make(TL_DTYPE_FLOAT, bits, e, m);
  return invalid_type;
}

bool tl_dtype_is_valid(TlDType t) {
  switch (t.kind) {
  case TL_DTYPE_BOOL:
    return t.bits == 1 && !t.exp_bits && !t.man_bits;
  case TL_DTYPE_UINT:
    return tl_dtype_eq(t, tl_dtype_uint(t.bits));
  case TL_DTYPE_INT:
    return tl_dtype_eq(t, tl_dtype_int(t.bits));
  case TL_DTYPE_FLOAT:
    if (t.bits <= 8)
      return t.bits == 1 + t.exp_bits + t.man_bits && t.exp_bits >= 1 &&
             t.bits >= 2;
    return tl_dtype_eq(t, tl_dtype_f16()) || tl_dtype_eq(t, tl_dtype_bf16()) ||
           tl_dtype_eq(t, tl_dtype_f32()) || tl_dtype_eq(t, tl_dtype_f64());
  default:
    return false;
  }
}

bool tl_dtype_eq(TlDType a, TlDType b) {
  return a.kind == b.kind && a.bits == b.bits && a.exp_bits == b.exp_bits &&
         a.man_bits == b.man_bits;
}

unsigned tl_dtype_bits(TlDType t) { return t.bits; }
bool tl_dtype_is_float(TlDType t) { return t.kind == TL_DTYPE_FLOAT; }
bool tl_dtype_is_integer(TlDType t) {
  return t.kind == TL_DTYPE_BOOL || t.kind == TL_DTYPE_UINT ||
         t.kind == TL_DTYPE_INT;
}
bool tl_dtype_is_signed(TlDType t) {
  return t.kind == TL_DTYPE_INT || t.kind == TL_DTYPE_FLOAT;
}

TlFloatSpecials tl_dtype_specials(TlDType t) {
  if (t.kind != TL_DTYPE_FLOAT)
    return TL_FLOAT_FINITE;
  if (t.bits > 8 || (t.exp_bits == 5 && t.man_bits == 2))
    return TL_FLOAT_IEEE;
  if (t.exp_bits == 4 && t.man_bits == 3)
    return TL_FLOAT_FN;
  return TL_FLOAT_FINITE;
}

int tl_dtype_bias(TlDType t) {
  if (t.kind != TL_DTYPE_FLOAT)
    return 0;
  return (1 << (t.exp_bits - 1)) - 1;
}

TlFloatFmt tl_float_fmt_of(TlDType t) {
  TlFloatFmt f = {t.exp_bits, t.man_bits, tl_dtype_bias(t),
                  tl_dtype_specials(t)};
  return f;
}

double tl_dtype_max(TlDType t) {
  switch (t.kind) {
  case TL_DTYPE_BOOL:
    return 1.0;
  case TL_DTYPE_UINT:
    return ldexp(1.0, t.bits) - 1.0; /* 2^64-1 rounds to 2^64: documented */
  case TL_DTYPE_INT:
    return ldexp(1.0, t.bits - 1) - 1.0;
  case TL_DTYPE_FLOAT: {
    int bias = tl_dtype_bias(t), m = t.man_bits;
    int top = (1 << t.exp_bits) - 1; /* all-ones exponent field */
    switch (tl_dtype_specials(t)) {
    case TL_FLOAT_IEEE: /* largest finite: exponent top-1, mantissa all ones */
      return ldexp(2.0 - ldexp(1.0, -m), top - 1 - bias);
    case TL_FLOAT_FN: /* all ones is NaN, so the mantissa stops one short */
      return ldexp(2.0 - ldexp(1.0, 1 - m), top - bias);
    case TL_FLOAT_FINITE:
      return ldexp(2.0 - ldexp(1.0, -m), top - bias);
    }
    break;
  }
  default:
    break;
  }
  return 0.0;
}

double tl_dtype_min(TlDType t) {
  switch (t.kind) {
  case TL_DTYPE_INT:
    return -ldexp(1.0, t.bits - 1);
  case TL_DTYPE_FLOAT:
    return -tl_dtype_max(t);
  default:
    return 0.0;
  }
}

/* Canonical names of the small floats, [exp_bits][man_bits]. */
static const char *const small_float_names[8][7] = {
    {0},
    {"f2e1m0", "f3e1m1", "f4e1m2", "f5e1m3", "f6e1m4", "f7e1m5", "f8e1m6"},
    {"f3e2m0", "f4e2m1", "f5e2m2", "f6e2m3", "f7e2m4", "f8e2m5", 0},
    {"f4e3m0", "f5e3m1", "f6e3m2", "f7e3m3", "f8e3m4", 0, 0},
    {"f5e4m0", "f6e4m1", "f7e4m2", "f8e4m3", 0, 0, 0},
    {"f6e5m0", "f7e5m1", "f8e5m2", 0, 0, 0, 0},
    {"f7e6m0", "f8e6m1", 0, 0, 0, 0, 0},
    {"f8e7m0", 0, 0, 0, 0, 0, 0},
};

static const char *const uint_names[9] = {0,    "u1", "u2", "u3", "u4",
                                          "u5", "u6", "u7", "u8"};
static const char *const int_names[9] = {0,    0,    "i2", "i3", "i4",
                                         "i5", "i6", "i7", "i8"};

const char *tl_dtype_name(TlDType t) {
  if (!tl_dtype_is_valid(t))
    return "<invalid>";
  switch (t.kind) {
  case TL_DTYPE_BOOL:
    return "bool";
  case TL_DTYPE_UINT:
    if (t.bits <= 8)
      return uint_names[t.bits];
    return t.bits == 16 ? "u16" : t.bits == 32 ? "u32" : "u64";
  case TL_DTYPE_INT:
    if (t.bits <= 8)
      return int_names[t.bits];
    return t.bits == 16 ? "i16" : t.bits == 32 ? "i32" : "i64";
  default:
    if (t.bits <= 8)
      return small_float_names[t.exp_bits][t.man_bits];
    if (t.bits == 16)
      return t.exp_bits == 5 ? "f16" : "bf16";
    return t.bits == 32 ? "f32" : "f64";
  }
}

/* Every valid type once, for parsing by canonical name. */
static unsigned all_types(TlDType *out) {
  static const unsigned wide[3] = {16, 32, 64};
  unsigned n = 0;
  out[n++] = tl_dtype_bool();
  for (unsigned b = 1; b <= 8; b++)
    out[n++] = tl_dtype_uint(b);
  for (unsigned i = 0; i < 3; i++)
    out[n++] = tl_dtype_uint(wide[i]);
  for (unsigned b = 2; b <= 8; b++)
    out[n++] = tl_dtype_int(b);
  for (unsigned i = 0; i < 3; i++)
    out[n++] = tl_dtype_int(wide[i]);
  out[n++] = tl_dtype_f16();
  out[n++] = tl_dtype_bf16();
  out[n++] = tl_dtype_f32();
  out[n++] = tl_dtype_f64();
  for (unsigned bits = 2; bits <= 8; bits++)
    for (unsigned e = 1; e < bits; e++)
      out[n++] = tl_dtype_small_float(e, bits - 1 - e);
  return n;
}

bool tl_dtype_parse(const char *s, size_t n, TlDType *out) {
  TlDType types[64];
  unsigned count = all_types(types);
  if (n == 2 && memcmp(s, "i1", 2) == 0) {
    *out = tl_dtype_bool();
    return true;
  }
  for (unsigned i = 0; i < count; i++) {
    const char *name = tl_dtype_name(types[i]);
    if (strlen(name) == n && memcmp(name, s, n) == 0) {
      *out = types[i];
      return true;
    }
  }
  return false;
}

unsigned tl_dtype_foreach_small(void (*fn)(TlDType t, void *user), void *user) {
  TlDType types[64];
  unsigned count = all_types(types), visited = 0;
  for (unsigned i = 0; i < count; i++) {
    if (types[i].bits > 8)
      continue;
    if (fn)
      fn(types[i], user);
    visited++;
  }
  return visited;
}
