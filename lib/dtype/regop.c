/* A bit-exact emulator of the 32-bit register operations that cast recipes
 * are written in (lop3, prmt, shifts, integer add, f16x2/bf16x2/f32
 * arithmetic, cvt).
 *
 * Float arithmetic is exact by construction: operands are decoded to
 * doubles (exact: at most 24 significant bits), a product of two of them
 * is exact in a double (at most 48 bits), and a sum is carried as an
 * unevaluated pair hi + lo from Knuth's TwoSum (exact for any two
 * doubles). tl_float_round_pair then rounds hi + lo to the destination
 * format once, resolving the only case where hi alone would mislead (hi
 * exactly on a midpoint of the destination). So add, mul and fma each
 * round once, as PTX's .rn forms do. NaN results become the canonical NaN
 * PTX produces. */
#include "dtype_internal.h"

#include <math.h>

static const TlFloatFmt fmt_f16 = {5, 10, 15, TL_FLOAT_IEEE};
static const TlFloatFmt fmt_bf16 = {8, 7, 127, TL_FLOAT_IEEE};
static const TlFloatFmt fmt_f32 = {8, 23, 127, TL_FLOAT_IEEE};

/* Knuth's TwoSum: s + e == a + b exactly, s = fl(a + b). */
static void two_sum(double a, double b, double *s, double *e) {
  *s = a + b;
  if (!isfinite(*s)) {
    *e = 0.0;
    return;
  }
  double bb = *s - a;
  *e = (a - (*s - bb)) + (b - bb);
}

static uint32_t round_to(const TlFloatFmt *f, double hi, double lo,
                         uint32_t canon_nan) {
  if (isnan(hi))
    return canon_nan;
  return (uint32_t)tl_float_round_pair(f, hi, lo);
}

static double dec(const TlFloatFmt *f, uint32_t code) {
  return tl_float_decode_fmt(f, code);
}

static uint32_t f_add(const TlFloatFmt *f, uint32_t a, uint32_t b,
                      uint32_t nan) {
  double s, e;
  two_sum(dec(f, a), dec(f, b), &s, &e);
  return round_to(f, s, e, nan);
}

static uint32_t f_mul(const TlFloatFmt *f, uint32_t a, uint32_t b,
                      uint32_t nan) {
  return round_to(f, dec(f, a) * dec(f, b), 0.0, nan); /* exact product */
}

static uint32_t f_fma(const TlFloatFmt *f, uint32_t a, uint32_t b, uint32_t c,
                      uint32_t nan) {
  double p = dec(f, a) * dec(f, b), s, e; /* exact product */
  two_sum(p, dec(f, c), &s, &e);
  return round_to(f, s, e, nan);
}

/* max/min as PTX max.f16x2 etc.: a NaN operand yields the other operand;
 * -0 orders below +0. */
static uint32_t f_maxmin(const TlFloatFmt *f, uint32_t a, uint32_t b,
                         bool is_max, uint32_t nan) {
  double x = dec(f, a), y = dec(f, b);
  if (isnan(x) && isnan(y))
    return nan;
  if (isnan(x))
    return b;
  if (isnan(y))
    return a;
  if (x == y) { /* only +-0 can differ here */
    bool xneg = signbit(x) != 0;
    return (is_max ? !xneg : xneg) ? a : b;
  }
  return (is_max ? x > y : x < y) ? a : b;
}

uint16_t tl_f16_add(uint16_t a, uint16_t b) {
  return (uint16_t)f_add(&fmt_f16, a, b, TL_F16_CANON_NAN);
}
uint16_t tl_f16_mul(uint16_t a, uint16_t b) {
  return (uint16_t)f_mul(&fmt_f16, a, b, TL_F16_CANON_NAN);
}
uint16_t tl_f16_fma(uint16_t a, uint16_t b, uint16_t c) {
  return (uint16_t)f_fma(&fmt_f16, a, b, c, TL_F16_CANON_NAN);
}
uint16_t tl_bf16_add(uint16_t a, uint16_t b) {
  return (uint16_t)f_add(&fmt_bf16, a, b, TL_BF16_CANON_NAN);
}
uint16_t tl_bf16_mul(uint16_t a, uint16_t b) {
  return (uint16_t)f_mul(&fmt_bf16, a, b, TL_BF16_CANON_NAN);
}
uint16_t tl_bf16_fma(uint16_t a, uint16_t b, uint16_t c) {
  return (uint16_t)f_fma(&fmt_bf16, a, b, c, TL_BF16_CANON_NAN);
}
uint32_t tl_f32_fma(uint32_t a, uint32_t b, uint32_t c) {
  return f_fma(&fmt_f32, a, b, c, TL_F32_CANON_NAN);
}
uint16_t tl_f16_max(uint16_t a, uint16_t b) {
  return (uint16_t)f_maxmin(&fmt_f16, a, b, true, TL_F16_CANON_NAN);
}
uint16_t tl_f16_min(uint16_t a, uint16_t b) {
  return (uint16_t)f_maxmin(&fmt_f16, a, b, false, TL_F16_CANON_NAN);
}
uint16_t tl_bf16_max(uint16_t a, uint16_t b) {
  return (uint16_t)f_maxmin(&fmt_bf16, a, b, true, TL_BF16_CANON_NAN);
}
uint16_t tl_bf16_min(uint16_t a, uint16_t b) {
  return (uint16_t)f_maxmin(&fmt_bf16, a, b, false, TL_BF16_CANON_NAN);
}
uint32_t tl_f32_max(uint32_t a, uint32_t b) {
  return f_maxmin(&fmt_f32, a, b, true, TL_F32_CANON_NAN);
}
uint32_t tl_f32_min(uint32_t a, uint32_t b) {
  return f_maxmin(&fmt_f32, a, b, false, TL_F32_CANON_NAN);
}

/* PTX lop3: bit i of the result is bit (a_i*4 + b_i*2 + c_i) of the truth
 * table, i.e. the table is f(0xf0, 0xcc, 0xaa). */
static uint32_t lop3(uint32_t a, uint32_t b, uint32_t c, uint8_t lut) {
  uint32_t r = 0;
  for (unsigned k = 0; k < 8; k++) {
    if (!((lut >> k) & 1))
      continue;
    uint32_t ta = (k & 4) ? a : ~a, tb = (k & 2) ? b : ~b,
             tc = (k & 1) ? c : ~c;
    r |= ta & tb & tc;
  }
  return r;
}

/* PTX prmt default mode: the 8 bytes {b, a} are numbered 0-3 (a) and 4-7
 * (b); selector nibble k picks result byte k; its bit 3 replaces the byte
 * by its sign bit replicated. */
static uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel) {
  uint64_t src = ((uint64_t)b << 32) | a;
  uint32_t r = 0;
  for (unsigned k = 0; k < 4; k++) {
    unsigned s = (sel >> (4 * k)) & 0xf;
    uint32_t byte = (uint32_t)(src >> (8 * (s & 7))) & 0xff;
    if (s & 8)
      byte = (byte & 0x80) ? 0xff : 0;
    r |= byte << (8 * k);
  }
  return r;
}

static uint32_t half2(const TlFloatFmt *f, uint32_t nan, int which, uint32_t a,
                      uint32_t b, uint32_t c) {
  uint32_t r = 0;
  for (unsigned h = 0; h < 2; h++) {
    uint32_t x = (a >> (16 * h)) & 0xffff, y = (b >> (16 * h)) & 0xffff;
    uint32_t z = (c >> (16 * h)) & 0xffff, o;
    switch (which) {
    case 0:
      o = f_add(f, x, y, nan);
      break;
    case 1:
      o = f_add(f, x, y ^ 0x8000, nan);
      break; /* a - b = a + (-b) */
    case 2:
      o = f_mul(f, x, y, nan);
      break;
    case 3:
      o = f_fma(f, x, y, z, nan);
      break;
    case 4:
      o = f_maxmin(f, x, y, true, nan);
      break;
    default:
      o = f_maxmin(f, x, y, false, nan);
      break;
    }
    r |= (o & 0xffff) << (16 * h);
  }
  return r;
}

static uint32_t cvt_pack(const TlFloatFmt *to, uint32_t a, uint32_t b,
                         uint32_t nan) {
  uint32_t lo = round_to(to, dec(&fmt_f32, a), 0.0, nan);
  uint32_t hi = round_to(to, dec(&fmt_f32, b), 0.0, nan);
  return (lo & 0xffff) | (hi << 16);
}

static const char *const names[TL_ROP_COUNT_] = {
    [TL_ROP_MOV] = "mov",
    [TL_ROP_LOP3] = "lop3",
    [TL_ROP_PRMT] = "prmt",
    [TL_ROP_PRMT_R] = "prmt.r",
    [TL_ROP_SHL] = "shl",
    [TL_ROP_SHR] = "shr",
    [TL_ROP_SAR] = "sar",
    [TL_ROP_SHF_R] = "shf.r",
    [TL_ROP_IADD] = "iadd",
    [TL_ROP_ISUB] = "isub",
    [TL_ROP_HADD2] = "hadd2",
    [TL_ROP_HSUB2] = "hsub2",
    [TL_ROP_HMUL2] = "hmul2",
    [TL_ROP_HFMA2] = "hfma2",
    [TL_ROP_HMAX2] = "hmax2",
    [TL_ROP_HMIN2] = "hmin2",
    [TL_ROP_BADD2] = "badd2",
    [TL_ROP_BSUB2] = "bsub2",
    [TL_ROP_BMUL2] = "bmul2",
    [TL_ROP_BFMA2] = "bfma2",
    [TL_ROP_BMAX2] = "bmax2",
    [TL_ROP_BMIN2] = "bmin2",
    [TL_ROP_FADD] = "fadd",
    [TL_ROP_FSUB] = "fsub",
    [TL_ROP_FMUL] = "fmul",
    [TL_ROP_FFMA] = "ffma",
    [TL_ROP_FMAX] = "fmax",
    [TL_ROP_FMIN] = "fmin",
    [TL_ROP_CVT_F32_F16LO] = "cvt.f32.f16lo",
    [TL_ROP_CVT_F32_F16HI] = "cvt.f32.f16hi",
    [TL_ROP_CVT_F16X2_F32] = "cvt.f16x2.f32",
    [TL_ROP_CVT_BF16X2_F32] = "cvt.bf16x2.f32",
    [TL_ROP_CVT_F16X2_E4M3X2] = "cvt.f16x2.e4m3x2",
};

const char *tl_regop_name(TlRegOpcode op) {
  if ((unsigned)op >= TL_ROP_COUNT_ || !names[op])
    return "?";
  return names[op];
}

unsigned tl_regop_num_operands(TlRegOpcode op) {
  switch (op) {
  case TL_ROP_MOV:
    return 0;
  case TL_ROP_SHL:
  case TL_ROP_SHR:
  case TL_ROP_SAR:
  case TL_ROP_CVT_F32_F16LO:
  case TL_ROP_CVT_F32_F16HI:
  case TL_ROP_CVT_F16X2_E4M3X2:
    return 1;
  case TL_ROP_LOP3:
  case TL_ROP_PRMT_R:
  case TL_ROP_HFMA2:
  case TL_ROP_BFMA2:
  case TL_ROP_FFMA:
    return 3;
  default:
    return (unsigned)op < TL_ROP_COUNT_ ? 2 : 0;
  }
}

bool tl_regop_has_imm(TlRegOpcode op) {
  switch (op) {
  case TL_ROP_MOV:
  case TL_ROP_LOP3:
  case TL_ROP_PRMT:
  case TL_ROP_SHL:
  case TL_ROP_SHR:
  case TL_ROP_SAR:
  case TL_ROP_SHF_R:
  case TL_ROP_CVT_F16X2_E4M3X2:
    return true;
  default:
    return false;
  }
}

bool tl_regop_run(const TlRegOp *ops, size_t n_ops, uint32_t *regs,
                  size_t n_regs, TlErr *err) {
  const TlFloatFmt *h = &fmt_f16, *bf = &fmt_bf16, *f = &fmt_f32;
  const uint32_t hn = TL_F16_CANON_NAN, bn = TL_BF16_CANON_NAN;
  const uint32_t fnan = TL_F32_CANON_NAN;
  for (size_t i = 0; i < n_ops; i++) {
    const TlRegOp *o = &ops[i];
    if (o->dst >= n_regs || o->a >= n_regs || o->b >= n_regs || o->c >= n_regs)
      return tl_err(err, "op %zu: register out of range (%zu registers)", i,
                    n_regs);
    uint32_t a = regs[o->a], b = regs[o->b], c = regs[o->c], im = o->imm, d;
    switch ((TlRegOpcode)o->op) {
    case TL_ROP_MOV:
      d = im;
      break;
    case TL_ROP_LOP3:
      d = lop3(a, b, c, (uint8_t)im);
      break;
    case TL_ROP_PRMT:
      d = prmt(a, b, im);
      break;
    case TL_ROP_PRMT_R:
      d = prmt(a, b, c & 0xffff);
      break;
    case TL_ROP_SHL:
      d = im >= 32 ? 0 : a << im;
      break;
    case TL_ROP_SHR:
      d = im >= 32 ? 0 : a >> im;
      break;
    case TL_ROP_SAR:
      /* arithmetic shift written without relying on signed >> */
      d = im >= 32 ? ((a >> 31) ? ~0u : 0u)
                   : (a >> im) | ((a >> 31) && im ? ~(~0u >> im) : 0u);
      break;
    case TL_ROP_SHF_R:
      d = im >= 32 ? b : (uint32_t)((((uint64_t)b << 32) | a) >> im);
      break;
    case TL_ROP_IADD:
      d = a + b;
      break;
    case TL_ROP_ISUB:
      d = a - b;
      break;
    case TL_ROP_HADD2:
      d = half2(h, hn, 0, a, b, c);
      break;
    case TL_ROP_HSUB2:
      d = half2(h, hn, 1, a, b, c);
      break;
    case TL_ROP_HMUL2:
      d = half2(h, hn, 2, a, b, c);
      break;
    case TL_ROP_HFMA2:
      d = half2(h, hn, 3, a, b, c);
      break;
    case TL_ROP_HMAX2:
      d = half2(h, hn, 4, a, b, c);
      break;
    case TL_ROP_HMIN2:
      d = half2(h, hn, 5, a, b, c);
      break;
    case TL_ROP_BADD2:
      d = half2(bf, bn, 0, a, b, c);
      break;
    case TL_ROP_BSUB2:
      d = half2(bf, bn, 1, a, b, c);
      break;
    case TL_ROP_BMUL2:
      d = half2(bf, bn, 2, a, b, c);
      break;
    case TL_ROP_BFMA2:
      d = half2(bf, bn, 3, a, b, c);
      break;
    case TL_ROP_BMAX2:
      d = half2(bf, bn, 4, a, b, c);
      break;
    case TL_ROP_BMIN2:
      d = half2(bf, bn, 5, a, b, c);
      break;
    case TL_ROP_FADD:
      d = f_add(f, a, b, fnan);
      break;
    case TL_ROP_FSUB:
      d = f_add(f, a, b ^ 0x80000000u, fnan);
      break;
    case TL_ROP_FMUL:
      d = f_mul(f, a, b, fnan);
      break;
    case TL_ROP_FFMA:
      d = f_fma(f, a, b, c, fnan);
      break;
    case TL_ROP_FMAX:
      d = f_maxmin(f, a, b, true, fnan);
      break;
    case TL_ROP_FMIN:
      d = f_maxmin(f, a, b, false, fnan);
      break;
    case TL_ROP_CVT_F32_F16LO:
      d = round_to(f, dec(h, a & 0xffff), 0.0, fnan);
      break;
    case TL_ROP_CVT_F32_F16HI:
      d = round_to(f, dec(h, a >> 16), 0.0, fnan);
      break;
    case TL_ROP_CVT_F16X2_F32:
      d = cvt_pack(h, a, b, hn);
      break;
    case TL_ROP_CVT_BF16X2_F32:
      d = cvt_pack(bf, a, b, bn);
      break;
    case TL_ROP_CVT_F16X2_E4M3X2: {
      /* Every e4m3 value is an f16 value: decode, round exactly. */
      TlDType e4m3 = tl_dtype_small_float(4, 3);
      uint32_t half = im ? a >> 16 : a & 0xffff;
      d = round_to(h, tl_dtype_decode(e4m3, half & 0xff), 0.0, hn) |
          round_to(h, tl_dtype_decode(e4m3, half >> 8), 0.0, hn) << 16;
      break;
    }
    default:
      return tl_err(err, "op %zu: unknown opcode %u", i, (unsigned)o->op);
    }
    regs[o->dst] = d;
  }
  return true;
}
