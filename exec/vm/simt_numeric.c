/* The arithmetic of the thread-level VM that PTX defines and arith does
 * not: rounding in each of PTX's four directions to f16, bf16, f32 and
 * f64, cvt between floats and integers with every rounding modifier and
 * .sat, and the byte-permute modes of prmt. Everything works on codes
 * (bit patterns) and exact values; nothing depends on the host's rounding
 * mode. The default prmt and lop3 go through lib/dtype's register-op
 * emulator, which was checked bit for bit against the GPU. */
#include "simt_vm_internal.h"

SvRound sv_round_parse(const char *s) {
  static const char *const names[] = {"rn",  "rz",  "rm",  "rp",
                                      "rni", "rzi", "rmi", "rpi"};
  if (!s)
    return SV_NONE;
  for (int i = 0; i < 8; i++)
    if (!strcmp(s, names[i]))
      return (SvRound)(SV_RN + i);
  return SV_NONE;
}

static int msb64(uint64_t x) {
  int p = 0;
  while (x >> 1) {
    x >>= 1;
    p++;
  }
  return p;
}

/* value = mant * 2^exp lies in [2^e, 2^(e+1)) with e = msb + exp. The
 * result keeps the bits from 2^q up, q = max(e, emin) - mbits (the
 * subnormal quantum below emin); the dropped bits decide the rounding:
 * `half` is the first of them, `rest` whether any later one is set. */
uint64_t sv_round_ieee(bool neg, uint64_t mant, int exp, unsigned ebits,
                       unsigned mbits, SvRound r) {
  uint64_t sign = neg ? 1ull << (ebits + mbits) : 0;
  if (!mant)
    return sign;
  int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias, emax = bias;
  int e = msb64(mant) + exp;
  int q = (e >= emin ? e : emin) - (int)mbits;
  int shift = q - exp;
  uint64_t n;
  bool half = false, rest = false;
  if (shift <= 0) {
    n = mant << -shift; /* at most mbits + 1 bits: exact */
  } else if (shift > 64) {
    n = 0;
    rest = true;
  } else if (shift == 64) {
    n = 0;
    half = mant >> 63;
    rest = (mant << 1) != 0;
  } else {
    n = mant >> shift;
    uint64_t low = mant & ((1ull << shift) - 1);
    half = (low >> (shift - 1)) & 1;
    rest = (low & ((1ull << (shift - 1)) - 1)) != 0;
  }
  bool inexact = half || rest, up = false;
  switch (r) {
  case SV_RN:
    up = half && (rest || (n & 1));
    break;
  case SV_RM:
    up = neg && inexact;
    break;
  case SV_RP:
    up = !neg && inexact;
    break;
  default:
    break;
  }
  n += up;
  if (n >> (mbits + 1)) { /* rounded up to 2^(mbits+1): one bit more */
    n >>= 1;
    q++;
  }
  if (n < (1ull << mbits)) /* subnormal (q is the subnormal quantum) */
    return sign | n;
  int top = q + (int)mbits;
  if (top > emax) {
    bool to_inf = r == SV_RN || (r == SV_RP && !neg) || (r == SV_RM && neg);
    uint64_t inf = (((1ull << ebits) - 1) << mbits);
    return sign | (to_inf ? inf : inf - 1);
  }
  return sign | ((uint64_t)(top + bias) << mbits) | (n - (1ull << mbits));
}

uint64_t sv_nan(const EType *e) { return e->mask >> 1; }

/* ebits/mbits of the cvt float types. */
static void fmt_of(const EType *e, unsigned *eb, unsigned *mb) {
  *eb = e->dt.exp_bits;
  *mb = e->dt.man_bits;
}

/* A finite double rounded to float type d in direction r. */
static uint64_t round_double(double x, const EType *d, SvRound r) {
  unsigned eb, mb;
  fmt_of(d, &eb, &mb);
  bool neg = signbit(x);
  if (x == 0)
    return neg ? 1ull << (eb + mb) : 0;
  int ex;
  double m = frexp(fabs(x), &ex); /* m in [0.5, 1): 53 bits as an integer */
  uint64_t mant = (uint64_t)ldexp(m, 53);
  return sv_round_ieee(neg, mant, ex - 53, eb, mb, r);
}

/* x rounded to an integral value in direction r (an integer rounding);
 * the sign of a zero result is x's. */
static double round_integral(double x, SvRound r) {
  double y;
  switch (r) {
  case SV_RZI:
    y = trunc(x);
    break;
  case SV_RMI:
    y = floor(x);
    break;
  case SV_RPI:
    y = ceil(x);
    break;
  default: { /* nearest, ties to even: x - floor(x) is exact */
    y = floor(x);
    double d = x - y;
    if (d > 0.5 || (d == 0.5 && fmod(y, 2.0) != 0))
      y += 1;
    break;
  }
  }
  return y == 0 ? copysign(0.0, x) : y;
}

/* An integral double saturated to integer type d (NaN gives 0). */
static uint64_t sat_double(double y, const EType *d) {
  if (isnan(y))
    return 0;
  double lim = ldexp(1.0, (int)d->bits - (d->kind == EK_SINT));
  if (d->kind == EK_SINT) {
    if (y < -lim)
      return (d->mask >> 1) + 1; /* the minimum's code */
    if (y >= lim)
      return d->mask >> 1;
    return (uint64_t)(int64_t)y & d->mask;
  }
  if (y <= 0)
    return 0;
  if (y >= lim)
    return d->mask;
  return (uint64_t)y;
}

/* Source integer value as sign and magnitude. */
static void int_value(const EType *s, uint64_t c, bool *neg, uint64_t *mag) {
  int64_t v = e_sval(s, c);
  *neg = s->kind == EK_SINT && v < 0;
  *mag =
      *neg ? (uint64_t)0 - (uint64_t)v : (s->kind == EK_SINT ? (uint64_t)v : c);
}

uint64_t sv_cvt(const EType *s, const EType *d, uint64_t c, SvRound r,
                bool sat) {
  bool sf = s->kind == EK_FLOAT, df = d->kind == EK_FLOAT;
  if (sf) {
    double x = e_f(s, c);
    if (df) {
      if (isnan(x))
        return sv_nan(d);
      if (isinf(x)) {
        uint64_t inf = ((1ull << d->dt.exp_bits) - 1) << d->dt.man_bits;
        return (signbit(x) ? 1ull << (d->bits - 1) : 0) | inf;
      }
      if (r >= SV_RNI) /* to an integral value in the same format */
        return round_double(round_integral(x, r), d, SV_RN);
      return round_double(x, d, r == SV_NONE ? SV_RN : r);
    }
    if (isnan(x))
      return 0;
    return sat_double(round_integral(x, r), d);
  }
  bool neg;
  uint64_t mag;
  int_value(s, c, &neg, &mag);
  if (df) {
    unsigned eb, mb;
    fmt_of(d, &eb, &mb);
    return sv_round_ieee(neg, mag, 0, eb, mb, r);
  }
  if (!sat) /* keep the low bits of the source value, extended by its sign */
    return (uint64_t)e_sval(s, c) & d->mask;
  if (d->kind == EK_SINT) {
    uint64_t maxpos = d->mask >> 1;
    if (!neg)
      return mag > maxpos ? maxpos : mag;
    if (mag > maxpos + 1)
      mag = maxpos + 1;
    return ((uint64_t)0 - mag) & d->mask;
  }
  return neg ? 0 : (mag > d->mask ? d->mask : mag);
}

/* prmt's modes pick result bytes 0..3 from the eight bytes of {b, a} by
 * the selector's low two bits (PTX ISA, prmt): rows are the modes f4e,
 * b4e, rc8, ecl, ecr, rc16; within a row, sel & 3 picks four source byte
 * numbers, listed for result bytes 0, 1, 2, 3. */
static const uint8_t prmt_modes[6][4][4] = {
    /* f4e: forward 4 extract */
    {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}},
    /* b4e: backward 4 extract */
    {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}},
    /* rc8: replicate one byte */
    {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}},
    /* ecl: edge clamp left */
    {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}},
    /* ecr: edge clamp right */
    {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}},
    /* rc16: replicate one half */
    {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}},
};

uint32_t sv_prmt(uint32_t a, uint32_t b, uint32_t sel, int mode) {
  if (!mode) {
    uint32_t regs[4] = {a, b, sel, 0};
    TlRegOp op = {TL_ROP_PRMT_R, 3, 0, 1, 2, 0};
    bool ok = tl_regop_run(&op, 1, regs, 4, NULL);
    tl_assert(ok);
    return regs[3];
  }
  uint64_t src = (uint64_t)b << 32 | a;
  uint32_t r = 0;
  for (int i = 0; i < 4; i++)
    r |= (uint32_t)((src >> (8 * prmt_modes[mode - 1][sel & 3][i])) & 0xff)
         << (8 * i);
  return r;
}

uint32_t sv_cvt_e4m3x2(uint32_t a, unsigned half) {
  uint32_t regs[2] = {a, 0};
  TlRegOp op = {TL_ROP_CVT_F16X2_E4M3X2, 1, 0, 0, 0, half ? 1 : 0};
  bool ok = tl_regop_run(&op, 1, regs, 2, NULL);
  tl_assert(ok);
  return regs[1];
}

uint32_t sv_lop3(uint32_t a, uint32_t b, uint32_t c, unsigned lut) {
  uint32_t regs[4] = {a, b, c, 0};
  TlRegOp op = {TL_ROP_LOP3, 3, 0, 1, 2, lut & 0xff};
  bool ok = tl_regop_run(&op, 1, regs, 4, NULL);
  tl_assert(ok);
  return regs[3];
}
