/* Device cast recipes: register-op programs that convert packed words of a
 * 1..8-bit type to f16x2, bf16x2 or f32, and (quantising recipes) f16,
 * bf16 or f32 back to 2/4/8-bit integers with a scale and zero point.
 *
 * Recipes are generated, not hand-listed: a handful of techniques, each
 * parameterised by the source format, produce the op tables once (under
 * call_once) into static storage. Where several techniques or pairings
 * apply, every candidate is built and the one with the fewest non-constant
 * ops is kept, so the cost table in docs/dtypes.md is what the generator
 * actually achieves. Every recipe is checked bit for bit against the host
 * codec by tl_cast_recipe_verify (recipe_check.c).
 *
 * The techniques and their algebra:
 *
 * MAGIC (integers). A float whose exponent makes the mantissa's last bit
 * worth 1 turns an OR into an add: f16 0x6400 is 1024.0 with ulp 1, so
 * OR-ing v < 1024 into the mantissa gives exactly 1024 + v. Placing v at
 * bit p of the mantissa instead gives 1024 + v*2^p, and one fma by
 * (2^-p, -(1024*2^-p) - off) recovers v - off exactly: the product is a
 * power-of-two scaling of a normal number and the sum v - off is
 * representable, so the single rounding is exact. Signed iN values are
 * made offset-binary by flipping their sign bit (v ^ 2^(w-1) == v +
 * 2^(w-1) mod 2^w), which the lop3 does for free: ((x & mask) ^ C) where C
 * holds the magic exponent and the sign-bit flips, and off = 2^(w-1).
 * The same for bf16 with 0x4300 (128.0, 7 mantissa bits, so w <= 7) and
 * for f32 with 0x4b000000 (2^23, 23 mantissa bits). A value may sit at any
 * p with p + w <= mantissa bits, so one shifted copy of the input serves
 * several outputs (a "window"); the generator covers the values with as
 * few windows as it can.
 *
 * REBIAS (floats). A small float with X exponent bits (X <= 4 for f16,
 * any X for bf16 and f32) and Y mantissa bits is copied field by field
 * into the wider float: sign to the sign bit,
 * E:M to the bits just below the exponent field's top so the mantissa is
 * top-aligned. Read as the wide format (bias Bd) it is 2^(E-Bd)(1.M), and
 * for E = 0 the wide subnormal 2^(1-Bd)(0.M); one multiply by 2^(Bd-b)
 * gives 2^(E-b)(1.M) or 2^(1-b)(0.M) -- the source value, subnormals
 * included, and -0 stays -0. Exact because the result is representable.
 *
 * BYTES. f8e5m2 has f16's exponent width and bias: f16 = byte << 8.
 *
 * LUT. 4-bit floats whose 8 magnitudes are f16s with a zero low byte: prmt
 * with the input as selector is an 8-entry byte table (gen_lut4).
 *
 * CHAIN. A recipe to one destination followed by exact cvt ops (f16 ->
 * f32, f32 -> bf16x2 of values bf16 holds exactly, or the rounding
 * cvt.rn.f16x2.f32 where the reference itself rounds, e.g. f7e5m1 above
 * 65504 to inf).
 *
 * QUANT. The inverse direction, f16/bf16/f32 to 2/4/8-bit integers: an fma
 * with a magic addend rounds to an integer, min/max clamp, prmt/shift/lop3
 * pack (build_quant). */
#include "dtype_internal.h"

#include <limits.h>
#include <math.h>
#include <string.h>
#include <threads.h>

/* lop3 truth tables, from a = 0xf0, b = 0xcc, c = 0xaa. */
enum {
  LUT_AND = 0xc0,     /* a & b */
  LUT_XOR = 0x3c,     /* a ^ b */
  LUT_AND_XOR = 0x6a, /* (a & b) ^ c */
  LUT_AND_OR = 0xea,  /* (a & b) | c */
  LUT_OR_AND = 0xf8,  /* a | (b & c) */
  LUT_OR3 = 0xfe,     /* a | b | c */
  LUT_OR_XOR = 0x56,  /* (a | b) ^ c */
};

typedef struct Builder {
  TlCastRecipe *r;
  unsigned next_reg;
  unsigned w;    /* bits per input value */
  unsigned n_in; /* input words */
  struct {
    uint32_t v;
    uint8_t reg;
  } consts[128];
  unsigned n_consts;
  struct {
    int d;
    uint8_t reg;
  } shifts[128];
  unsigned n_shifts;
  uint8_t alt;   /* an alternative one-word source (see Field.alt) */
  bool overflow; /* too many ops or registers: candidate rejected */
} Builder;

static void builder_init(Builder *b, TlCastRecipe *r, TlDType src, TlDType dst,
                         unsigned n_in, unsigned n_params) {
  memset(r, 0, sizeof *r);
  memset(b, 0, sizeof *b);
  r->src = src;
  r->dst = dst;
  r->n_in_words = n_in;
  r->n_params = n_params;
  b->r = r;
  b->w = src.bits;
  b->n_in = n_in;
  b->next_reg = n_in + n_params;
}

static uint8_t emit(Builder *b, TlRegOpcode op, uint8_t x, uint8_t y, uint8_t z,
                    uint32_t imm) {
  TlCastRecipe *r = b->r;
  if (r->n_ops >= TL_RECIPE_MAX_OPS || b->next_reg >= 255) {
    b->overflow = true;
    return 0;
  }
  TlRegOp *o = &r->ops[r->n_ops++];
  o->op = (uint8_t)op;
  o->dst = (uint8_t)b->next_reg++;
  o->a = x;
  o->b = y;
  o->c = z;
  o->imm = imm;
  r->n_regs = b->next_reg;
  return o->dst;
}

static uint8_t konst(Builder *b, uint32_t v) {
  for (unsigned i = 0; i < b->n_consts; i++)
    if (b->consts[i].v == v)
      return b->consts[i].reg;
  uint8_t reg = emit(b, TL_ROP_MOV, 0, 0, 0, v);
  b->r->n_const_ops++;
  if (b->n_consts < 128) {
    b->consts[b->n_consts].v = v;
    b->consts[b->n_consts++].reg = reg;
  }
  return reg;
}

/* A register holding bits [d, d+32) of the input words concatenated
 * little-endian (zeros outside), for -32 < d < 32 * n_in. */
static uint8_t shifted(Builder *b, int d) {
  for (unsigned i = 0; i < b->n_shifts; i++)
    if (b->shifts[i].d == d)
      return b->shifts[i].reg;
  int j = d >= 0 ? d / 32 : -1;
  unsigned s = (unsigned)(d - 32 * j);
  uint8_t reg;
  if (s == 0 && j >= 0 && (unsigned)j < b->n_in)
    return (uint8_t)j; /* an input word as is: no op */
  if (j < 0)
    reg = emit(b, TL_ROP_SHL, 0, 0, 0, 32 - s);
  else if ((unsigned)j + 1 < b->n_in)
    reg = emit(b, TL_ROP_SHF_R, (uint8_t)j, (uint8_t)(j + 1), 0, s);
  else
    reg = emit(b, TL_ROP_SHR, (uint8_t)j, 0, 0, s);
  if (b->n_shifts < 128) {
    b->shifts[b->n_shifts].d = d;
    b->shifts[b->n_shifts++].reg = reg;
  }
  return reg;
}

/* Bits [d, d+32) of the one-word alternative source b->alt; cached with
 * keys offset by 4096 so they never meet the input's shifts. */
static uint8_t shifted_alt(Builder *b, int d) {
  int key = d + 4096;
  for (unsigned i = 0; i < b->n_shifts; i++)
    if (b->shifts[i].d == key)
      return b->shifts[i].reg;
  if (d == 0)
    return b->alt;
  uint8_t reg = d > 0 ? emit(b, TL_ROP_SHR, b->alt, 0, 0, (uint32_t)d)
                      : emit(b, TL_ROP_SHL, b->alt, 0, 0, (uint32_t)-d);
  if (b->n_shifts < 128) {
    b->shifts[b->n_shifts].d = key;
    b->shifts[b->n_shifts++].reg = reg;
  }
  return reg;
}

static void add_out(Builder *b, uint8_t reg) {
  TlCastRecipe *r = b->r;
  if (r->n_out_words >= TL_RECIPE_MAX_WORDS) {
    b->overflow = true;
    return;
  }
  r->out_regs[r->n_out_words++] = reg;
}

/* Number of values in the input words: 32/w per word when w divides 32,
 * else 32 values in w words. */
static unsigned input_values(unsigned w) { return 32 % w == 0 ? 32 / w : 32; }
static unsigned input_words(unsigned w) { return 32 % w == 0 ? 1 : w; }

static uint32_t enc32(TlDType t, double x) {
  uint64_t c = tl_dtype_encode(t, x);
  tl_assert(tl_dtype_decode(t, c) == x); /* every constant is exact */
  return (uint32_t)c;
}

/* A field: w_f bits of input taken from register shift d, landing at the
 * bits of mask. Fields of one output word are grouped by d into lop3s. */
typedef struct Field {
  int d;
  uint32_t mask;
  bool alt; /* read from b->alt instead of the input words */
} Field;

/* Emits acc = OR of (shifted(d) & mask) over the fields, the first lop3
 * combining with init (XOR, so sign flips in init apply), or a plain AND
 * when init is NULL. */
static uint8_t gather_fields(Builder *b, const Field *f, unsigned n,
                             const uint32_t *init) {
  bool done[8] = {0};
  uint8_t acc = 0;
  bool have = false;
  for (unsigned i = 0; i < n; i++) {
    if (done[i])
      continue;
    uint32_t mask = 0;
    for (unsigned k = i; k < n; k++)
      if (!done[k] && f[k].d == f[i].d && f[k].alt == f[i].alt) {
        mask |= f[k].mask;
        done[k] = true;
      }
    uint8_t src = f[i].alt ? shifted_alt(b, f[i].d) : shifted(b, f[i].d);
    uint8_t m = konst(b, mask);
    if (!have && init)
      acc = emit(b, TL_ROP_LOP3, src, m, konst(b, *init), LUT_AND_XOR);
    else if (!have)
      acc = emit(b, TL_ROP_LOP3, src, m, m, LUT_AND);
    else /* XOR, not OR: acc may hold sign flips at these bits */
      acc = emit(b, TL_ROP_LOP3, src, m, acc, LUT_AND_XOR);
    have = true;
  }
  return acc;
}

/*---- MAGIC: integers ---------------------------------------------------*/

typedef struct Dst {
  TlDType t;
  unsigned elem_bits; /* 16 or 32 */
  unsigned man_bits;  /* 10, 7, 23 */
  uint32_t magic;     /* bits of 2^man_bits */
  TlRegOpcode fma, sub, mul;
} Dst;

static Dst dst_of(TlDType t) {
  Dst d;
  d.t = t;
  if (t.bits == 32) {
    d.elem_bits = 32, d.man_bits = 23, d.magic = 0x4b000000u; /* 2^23 */
    d.fma = TL_ROP_FFMA, d.sub = TL_ROP_FSUB, d.mul = TL_ROP_FMUL;
  } else if (t.exp_bits == 5) {
    d.elem_bits = 16, d.man_bits = 10, d.magic = 0x6400u; /* 1024 */
    d.fma = TL_ROP_HFMA2, d.sub = TL_ROP_HSUB2, d.mul = TL_ROP_HMUL2;
  } else {
    d.elem_bits = 16, d.man_bits = 7, d.magic = 0x4300u; /* 128 */
    d.fma = TL_ROP_BFMA2, d.sub = TL_ROP_BSUB2, d.mul = TL_ROP_BMUL2;
  }
  return d;
}

/* One element slot of an output word: input value, its bit position p in
 * the mantissa and the register shift it is read from. */
typedef struct Slot {
  int value;
  unsigned p;
  int d;
} Slot;

/* Emits the lop3(s) and the fix-up fma for one output word whose elements
 * are slots[0..per-1]. */
static void magic_word(Builder *b, const Dst *dd, const Slot *s, unsigned per,
                       bool is_signed) {
  unsigned w = b->w, eb = dd->elem_bits;
  uint32_t vmask = (1u << w) - 1, init = 0;
  Field f[2];
  bool any_p = false;
  for (unsigned h = 0; h < per; h++) {
    unsigned base = h * eb;
    f[h].d = s[h].d;
    f[h].alt = false;
    f[h].mask = vmask << (s[h].p + base);
    init |= dd->magic << base;
    if (is_signed) /* flip the value's sign bit: offset binary */
      init |= 1u << (s[h].p + w - 1 + base);
    if (s[h].p)
      any_p = true;
  }
  uint8_t y = gather_fields(b, f, per, &init);
  double off = is_signed ? ldexp(1.0, (int)w - 1) : 0.0;
  uint32_t scale = 0, bias = 0;
  for (unsigned h = 0; h < per; h++) {
    double k = ldexp(1.0, -(int)s[h].p);
    /* (2^M + v 2^p) * 2^-p - (2^M 2^-p + off) = v - off */
    scale |= enc32(dd->t, k) << (h * eb);
    bias |= enc32(dd->t, -(ldexp(1.0, (int)dd->man_bits) * k + off))
            << (h * eb);
  }
  uint8_t out;
  if (!any_p) /* y + -(2^M + off): no scale constant needed */
    out = emit(b,
               dd->fma == TL_ROP_FFMA    ? TL_ROP_FADD
               : dd->fma == TL_ROP_HFMA2 ? TL_ROP_HADD2
                                         : TL_ROP_BADD2,
               y, konst(b, bias), 0, 0);
  else
    out = emit(b, dd->fma, y, konst(b, scale), konst(b, bias), 0);
  add_out(b, out);
}

/* Window greedy: repeatedly open a window (one shifted copy of the input)
 * near the lowest unplaced value and fill every output slot it can serve;
 * leftovers (values with no partner in the same window) are paired
 * afterwards, each read from its own window. */
static void gen_magic(Builder *b, const Dst *dd, bool is_signed) {
  unsigned w = b->w, n = input_values(w), total = 32 * b->n_in;
  unsigned per = 32 / dd->elem_bits, pmax = dd->man_bits - w;
  bool placed[64] = {0};
  int left[64];
  unsigned n_left = 0;
  TlCastRecipe *r = b->r;
  for (;;) {
    int i0 = -1;
    for (unsigned i = 0; i < n; i++)
      if (!placed[i]) {
        i0 = (int)i;
        break;
      }
    if (i0 < 0)
      break;
    int t = i0 * (int)w, t0 = t; /* window start: lowest unplaced value */
    if (per == 1) {
      for (unsigned i = 0; i < n; i++) {
        int p = (int)(i * w) - t;
        if (placed[i] || p < 0 || p > (int)pmax)
          continue;
        Slot s = {(int)i, (unsigned)p, t};
        placed[i] = true;
        r->value_of[r->n_out_words] = (uint8_t)i;
        magic_word(b, dd, &s, 1, is_signed);
      }
      continue;
    }
    /* The window may start up to pmax bits below the lowest unplaced
     * value (it then sits at p = delta): pick the start that pairs the
     * most values, e.g. 7-bit values two apart (14 bits) pair with
     * p = 2 in the low half and p = 0 in the high half. */
    int lows[32], highs[32];
    unsigned np = 0;
    for (int delta = 0; delta <= (int)pmax && t - delta > -32; delta++) {
      int lw[32], hg[32];
      unsigned a = 0, c = 0;
      for (unsigned i = 0; i < n; i++) {
        int p = (int)(i * w) - (t - delta);
        if (placed[i] || i * w + w > total)
          continue;
        if (p >= 0 && p <= (int)pmax)
          lw[a++] = (int)i;
        else if (p - 16 >= 0 && p - 16 <= (int)pmax)
          hg[c++] = (int)i;
      }
      unsigned pairs = a < c ? a : c;
      if (pairs > np) {
        np = pairs;
        memcpy(lows, lw, sizeof lw);
        memcpy(highs, hg, sizeof hg);
        t0 = t - delta;
      }
    }
    if (np == 0) { /* no partner in this window */
      placed[i0] = true;
      left[n_left++] = i0;
      continue;
    }
    for (unsigned k = 0; k < np; k++) {
      Slot s[2] = {{lows[k], (unsigned)(lows[k] * (int)w - t0), t0},
                   {highs[k], (unsigned)(highs[k] * (int)w - t0 - 16), t0}};
      placed[lows[k]] = placed[highs[k]] = true;
      r->value_of[2 * r->n_out_words] = (uint8_t)lows[k];
      r->value_of[2 * r->n_out_words + 1] = (uint8_t)highs[k];
      magic_word(b, dd, s, 2, is_signed);
    }
  }
  /* Leftovers in pairs: each read at p = 0 from its own window. */
  for (unsigned k = 0; k + 1 < n_left; k += 2) {
    Slot s[2] = {{left[k], 0, left[k] * (int)w},
                 {left[k + 1], 0, left[k + 1] * (int)w - 16}};
    r->value_of[2 * r->n_out_words] = (uint8_t)left[k];
    r->value_of[2 * r->n_out_words + 1] = (uint8_t)left[k + 1];
    magic_word(b, dd, s, 2, is_signed);
  }
  if (n_left % 2)
    b->overflow = true; /* cannot happen: n is even */
}

/* Whether a window of shift d costs no op: cached, or an input word. */
static bool free_window(const Builder *b, int d) {
  if (d >= 0 && d % 32 == 0 && (unsigned)(d / 32) < b->n_in)
    return true;
  for (unsigned i = 0; i < b->n_shifts; i++)
    if (b->shifts[i].d == d)
      return true;
  return false;
}

/* The window start in [lo, hi] (clamped to the input) that costs no op,
 * else the highest one; INT_MIN when the range is empty. */
static int pick_window(const Builder *b, int lo, int hi) {
  if (lo <= -32)
    lo = -31;
  if (hi >= 32 * (int)b->n_in)
    hi = 32 * (int)b->n_in - 1;
  if (lo > hi)
    return INT_MIN;
  for (int t = hi; t >= lo; t--)
    if (free_window(b, t))
      return t;
  return hi;
}

/* The magic recipe in the interleaved order of distance d (docs/dtypes.md,
 * "Interleave"): output word j holds values p = j / d * 2d + j % d and
 * p + d, which a kernel lays out in its weights with no reordering. Each
 * pair is read from one window where one serves both (the low value at
 * bit p <= pmax of the low half, the high one of the high half), else
 * each from its own; windows are shared where they can be. */
static void gen_magic_interleaved(Builder *b, const Dst *dd, bool is_signed,
                                  unsigned d) {
  unsigned w = b->w, n = input_values(w);
  int pmax = (int)dd->man_bits - (int)w;
  TlCastRecipe *r = b->r;
  if (dd->elem_bits != 16 || n % (2 * d) || pmax < 0) {
    b->overflow = true;
    return;
  }
  for (unsigned j = 0; 2 * j < n && !b->overflow; j++) {
    int lo = (int)(j / d * 2 * d + j % d), hi = lo + (int)d;
    int lb = lo * (int)w, hb = hi * (int)w - 16;
    int t = pick_window(b, lb - pmax > hb - pmax ? lb - pmax : hb - pmax,
                        lb < hb ? lb : hb);
    int tl = t, th = t;
    if (t == INT_MIN) {
      tl = pick_window(b, lb - pmax, lb);
      th = pick_window(b, hb - pmax, hb);
      if (tl == INT_MIN || th == INT_MIN) {
        b->overflow = true;
        return;
      }
    }
    Slot s[2] = {{lo, (unsigned)(lb - tl), tl}, {hi, (unsigned)(hb - th), th}};
    r->value_of[2 * r->n_out_words] = (uint8_t)lo;
    r->value_of[2 * r->n_out_words + 1] = (uint8_t)hi;
    magic_word(b, dd, s, 2, is_signed);
  }
}

/* 8-bit integers: prmt places each byte under a magic exponent byte in one
 * op (no mask, no shift). f16: [v, 0x64] per half = 1024 + v; f32: [v, 0,
 * 0, 0x4b] = 2^23 + v. iN flips all four sign bits with one xor first. */
static void gen_prmt8(Builder *b, const Dst *dd, bool is_signed) {
  TlCastRecipe *r = b->r;
  uint8_t x = 0;
  if (is_signed)
    x = emit(b, TL_ROP_LOP3, 0, konst(b, 0x80808080u), 0, LUT_XOR);
  double off = is_signed ? 128.0 : 0.0;
  if (dd->elem_bits == 16) {
    uint8_t mb = konst(b, dd->magic >> 8); /* byte 4 of {b, a} = 0x64 */
    uint32_t bias = enc32(dd->t, ldexp(1.0, (int)dd->man_bits) + off);
    for (unsigned k = 0; k < 2; k++) {
      /* result bytes: [a.b(2k), b.b0, a.b(2k+1), b.b0] */
      uint32_t sel = (2 * k) | (4u << 4) | ((2 * k + 1) << 8) | (4u << 12);
      uint8_t y = emit(b, TL_ROP_PRMT, x, mb, 0, sel);
      r->value_of[2 * k] = (uint8_t)(2 * k);
      r->value_of[2 * k + 1] = (uint8_t)(2 * k + 1);
      add_out(b, emit(b, dd->sub, y, konst(b, bias | bias << 16), 0, 0));
    }
  } else {
    uint8_t mb = konst(b, dd->magic); /* bytes 4..7 = 00 00 00 4b */
    uint32_t bias = enc32(dd->t, ldexp(1.0, (int)dd->man_bits) + off);
    for (unsigned k = 0; k < 4; k++) {
      uint32_t sel = k | (5u << 4) | (6u << 8) | (7u << 12);
      uint8_t y = emit(b, TL_ROP_PRMT, x, mb, 0, sel);
      r->value_of[k] = (uint8_t)k;
      add_out(b, emit(b, dd->sub, y, konst(b, bias), 0, 0));
    }
  }
}

/*---- REBIAS: small floats ----------------------------------------------*/

/* f16/bf16 destinations: pairs (a, b) of values, each copied as two fields
 * (E:M to bits [M-Y, M+X), sign to bit 15) into its half, then one
 * multiply by 2^(Bd - b) in both halves. pair_dist chooses the pairing:
 * value i goes with the next free value at least pair_dist later. */
static void gen_rebias16(Builder *b, const Dst *dd, unsigned pair_dist) {
  TlCastRecipe *r = b->r;
  TlDType s = r->src;
  unsigned w = b->w, n = input_values(w), Y = s.man_bits;
  unsigned L = dd->man_bits - Y;
  int bd = dd->t.exp_bits == 5 ? 15 : 127;
  uint32_t k = enc32(dd->t, ldexp(1.0, bd - tl_dtype_bias(s)));
  bool used[64] = {0};
  uint32_t emmask = ((1u << (w - 1)) - 1) << L;
  bool fn = tl_dtype_specials(s) == TL_FLOAT_FN;
  if (fn) {
    tl_assert(dd->man_bits == 10); /* the flag must land on bit 14 */
    /* f8e4m3's NaN is S.1111.111, which would re-bias to +-480. Replace
     * each byte's sign bit by a NaN flag: (b & 0x7f) + 1 has bit 7 set
     * exactly when the low seven bits are all ones (0x7f + 1 = 0x80, no
     * carry leaves the byte). The magnitude fields are then read from
     * this word with their mask one bit wider, so the flag lands on f16
     * bit 14, the exponent's top bit: with E = 1111 below it the
     * exponent is 11111 and the mantissa 111 nonzero, an f16 NaN, and
     * NaN times 2^8 stays NaN. Signs still come from the input. */
    uint8_t xm = emit(b, TL_ROP_LOP3, 0, konst(b, 0x7f7f7f7fu), 0, LUT_AND);
    uint8_t fl = emit(b, TL_ROP_IADD, xm, konst(b, 0x01010101u), 0, 0);
    b->alt = emit(b, TL_ROP_LOP3, fl, konst(b, 0x80808080u), xm, LUT_AND_OR);
    emmask |= 1u << (L + w - 1);
  }
  for (unsigned i = 0; i < n; i++) {
    if (used[i])
      continue;
    unsigned j = i + pair_dist;
    while (j < n && used[j])
      j++;
    if (j >= n) {
      j = i + 1;
      while (j < n && used[j])
        j++;
    }
    if (j >= n) {
      b->overflow = true;
      return;
    }
    used[i] = used[j] = true;
    int si = (int)(i * w), sj = (int)(j * w);
    Field f[4] = {
        {si - (int)L, emmask, fn},
        {si + (int)w - 1 - 15, 0x8000u, false},
        {sj - (int)L - 16, emmask << 16, fn},
        {sj + (int)w - 1 - 31, 0x80000000u, false},
    };
    uint8_t y = gather_fields(b, f, 4, NULL);
    r->value_of[2 * r->n_out_words] = (uint8_t)i;
    r->value_of[2 * r->n_out_words + 1] = (uint8_t)j;
    add_out(b, emit(b, dd->mul, y, konst(b, k | k << 16), 0, 0));
  }
}

/* f32 destination: top-align the value (sign at bit 31), shift right
 * arithmetically by 8 - X so E lands in the low X bits of f32's exponent
 * field while the sign fills the bits above, clear those copies and the
 * lower neighbours with one AND, multiply by 2^(127 - b). */
static void gen_rebias32(Builder *b) {
  TlCastRecipe *r = b->r;
  TlDType s = r->src;
  unsigned w = b->w, n = input_values(w), X = s.exp_bits, Y = s.man_bits;
  uint32_t keep = 0x80000000u | (((1u << (w - 1)) - 1) << (23 - Y));
  uint32_t k = enc32(tl_dtype_f32(), ldexp(1.0, 127 - tl_dtype_bias(s)));
  for (unsigned i = 0; i < n; i++) {
    uint8_t top = shifted(b, (int)(i * w + w) - 32);
    uint8_t y = emit(b, TL_ROP_SAR, top, 0, 0, 8 - X);
    y = emit(b, TL_ROP_LOP3, y, konst(b, keep), 0, LUT_AND);
    r->value_of[r->n_out_words] = (uint8_t)i;
    add_out(b, emit(b, TL_ROP_FMUL, y, konst(b, k), 0, 0));
  }
}

/* f8e5m2 -> f16: the byte is the f16's high byte (same exponent width and
 * bias 15, inf and NaN included). */
static void gen_bytes_e5m2(Builder *b) {
  TlCastRecipe *r = b->r;
  uint8_t zero = konst(b, 0);
  for (unsigned k = 0; k < 2; k++) {
    /* [0, a.b(2k), 0, a.b(2k+1)]: b's byte 4 is zero */
    uint32_t sel = 4u | ((2 * k) << 4) | (4u << 8) | ((2 * k + 1) << 12);
    r->value_of[2 * k] = (uint8_t)(2 * k);
    r->value_of[2 * k + 1] = (uint8_t)(2 * k + 1);
    add_out(b, emit(b, TL_ROP_PRMT, 0, zero, 0, sel));
  }
}

/* f8e4m3 -> f16 by the conversion instruction cvt.rn.f16x2.e4m3x2 (sm_89
 * and later; the back end expands it elsewhere): one op a 16-bit half,
 * the values in order. Exact: f16 holds every e4m3 value, and NaN maps to
 * NaN. */
static bool is_e4m3(TlDType t) {
  return t.kind == TL_DTYPE_FLOAT && t.bits == 8 && t.exp_bits == 4 &&
         tl_dtype_specials(t) == TL_FLOAT_FN;
}

static void gen_cvt_e4m3(Builder *b) {
  TlCastRecipe *r = b->r;
  for (unsigned k = 0; k < 2; k++) {
    r->value_of[2 * k] = (uint8_t)(2 * k);
    r->value_of[2 * k + 1] = (uint8_t)(2 * k + 1);
    add_out(b, emit(b, TL_ROP_CVT_F16X2_E4M3X2, 0, 0, 0, k));
  }
}

/* 4-bit floats -> f16 by table lookup. A 4-bit float has 8 magnitudes;
 * when each one's f16 has a zero low byte (at most 3 significant bits:
 * true of e2m1, e1m2, e3m0) the f16 is its high byte alone, and prmt with
 * the input as selector is an 8-entry byte table: nibble bits 0-2 pick
 * table byte 0-7, and masking each nibble with 0x7 keeps bit 3 (the sign,
 * which prmt would read as "replicate") clear. One lookup turns the four
 * nibbles of a 16-bit half of the input into four f16 high bytes. A
 * second prmt places two of them as [0, hb(k), 0, hb(k+4)] -- the zero
 * bytes are sign-replicated table bytes, all < 0x80 -- and one lop3 ORs
 * the two sign bits in from the input shifted by 12 - 4k (value k's sign
 * is bit 4k+3, value k+4's bit 4k+19; they must land on 15 and 31). */
static bool gen_lut4(Builder *b) {
  TlCastRecipe *r = b->r;
  TlDType s = r->src;
  uint32_t tab[2] = {0, 0};
  for (unsigned m = 0; m < 8; m++) {
    uint32_t h = enc32(tl_dtype_f16(), tl_dtype_decode(s, m));
    if (h & 0xff)
      return false; /* needs more than the high byte */
    tab[m / 4] |= (h >> 8) << (8 * (m % 4));
  }
  uint8_t t0 = konst(b, tab[0]), t1 = konst(b, tab[1]);
  uint8_t idx = emit(b, TL_ROP_LOP3, 0, konst(b, 0x77777777u), 0, LUT_AND);
  uint8_t lo = emit(b, TL_ROP_PRMT_R, t0, t1, idx, 0);
  uint8_t hi =
      emit(b, TL_ROP_PRMT_R, t0, t1, emit(b, TL_ROP_SHR, idx, 0, 0, 16), 0);
  uint8_t sm = konst(b, 0x80008000u);
  for (unsigned k = 0; k < 4; k++) {
    uint32_t sel = 0x8u | (k << 4) | (0x8u << 8) | ((4 + k) << 12);
    uint8_t p = emit(b, TL_ROP_PRMT, lo, hi, 0, sel);
    uint8_t sg = k < 3 ? shifted(b, -(int)(12 - 4 * k)) : 0;
    r->value_of[2 * k] = (uint8_t)k;
    r->value_of[2 * k + 1] = (uint8_t)(k + 4);
    add_out(b, emit(b, TL_ROP_LOP3, p, sg, sm, LUT_OR_AND));
  }
  return true;
}

/*---- CHAIN -------------------------------------------------------------*/

static void chain_f16_to_f32(Builder *b) {
  TlCastRecipe *r = b->r;
  unsigned nw = r->n_out_words;
  uint8_t regs[TL_RECIPE_MAX_WORDS];
  memcpy(regs, r->out_regs, nw);
  r->n_out_words = 0;
  for (unsigned j = 0; j < nw && !b->overflow; j++) {
    add_out(b, emit(b, TL_ROP_CVT_F32_F16LO, regs[j], 0, 0, 0));
    add_out(b, emit(b, TL_ROP_CVT_F32_F16HI, regs[j], 0, 0, 0));
  }
  /* element order unchanged: word 2j/2j+1 = old low/high halves */
}

static void chain_f32_to_16(Builder *b, TlDType to) {
  TlCastRecipe *r = b->r;
  unsigned nw = r->n_out_words;
  uint8_t regs[TL_RECIPE_MAX_WORDS];
  memcpy(regs, r->out_regs, nw);
  r->n_out_words = 0;
  TlRegOpcode op =
      to.exp_bits == 5 ? TL_ROP_CVT_F16X2_F32 : TL_ROP_CVT_BF16X2_F32;
  for (unsigned j = 0; j + 1 < nw && !b->overflow; j += 2)
    add_out(b, emit(b, op, regs[j], regs[j + 1], 0, 0));
}

/*---- candidates and the table -----------------------------------------*/

static unsigned cost(const TlCastRecipe *r) {
  return r->n_ops - r->n_const_ops;
}

static void keep_best(TlCastRecipe *best, bool *have, const TlCastRecipe *c,
                      const Builder *b) {
  if (b->overflow || c->n_out_words == 0)
    return;
  if (!*have || cost(c) < cost(best) ||
      (cost(c) == cost(best) && c->n_ops < best->n_ops)) {
    *best = *c;
    *have = true;
  }
}

static void finish(TlCastRecipe *r, TlRecipeKind kind, const char *summary) {
  r->kind = kind;
  r->summary = summary;
  r->n_values = r->kind == TL_RECIPE_QUANT
                    ? 0
                    : r->n_out_words * (r->dst.bits == 32 ? 1 : 2);
}

static TlCastRecipe cand;

/* How many more ops (for 32 values) a recipe in an interleaved order may
 * cost than the cheapest one and still be chosen (build_int). */
enum { INTERLEAVE_MARGIN = 12 };

/* Builds the integer (or bool) recipe to dst into *out. */
static void build_int(TlCastRecipe *out, TlDType src, TlDType dst) {
  Builder b;
  bool have = false, sgn = src.kind == TL_DTYPE_INT;
  unsigned w = src.bits, nin = input_words(w);
  Dst dd = dst_of(dst);
  const char *sum = NULL;
  if (w <= dd.man_bits) {
    builder_init(&b, &cand, src, dst, nin, 0);
    gen_magic(&b, &dd, sgn);
    finish(&cand, TL_RECIPE_MAGIC, "");
    keep_best(out, &have, &cand, &b);
  }
  /* Widths that do not divide 32: the magic recipe in an interleaved order
   * too, kept unless it costs more than INTERLEAVE_MARGIN ops over the
   * cheapest order (a kernel pays a reordering prmt for each output word
   * of an order that is not interleaved). */
  if (w <= dd.man_bits && 32 % w && dd.elem_bits == 16 &&
      !tl_cast_recipe_interleave(out)) {
    static TlCastRecipe inter;
    bool have_inter = false;
    for (unsigned d = 1; d <= 16; d *= 2) {
      builder_init(&b, &cand, src, dst, nin, 0);
      gen_magic_interleaved(&b, &dd, sgn, d);
      finish(&cand, TL_RECIPE_MAGIC, "");
      keep_best(&inter, &have_inter, &cand, &b);
    }
    if (have_inter && cost(&inter) <= cost(out) + INTERLEAVE_MARGIN)
      *out = inter;
  }
  if (w == 8 && dd.elem_bits == 16 && dd.man_bits >= 8) {
    builder_init(&b, &cand, src, dst, nin, 0);
    gen_prmt8(&b, &dd, sgn);
    finish(&cand, TL_RECIPE_MAGIC, "");
    keep_best(out, &have, &cand, &b);
  }
  if (w == 8 && dd.elem_bits == 32) {
    builder_init(&b, &cand, src, dst, nin, 0);
    gen_prmt8(&b, &dd, sgn);
    finish(&cand, TL_RECIPE_MAGIC, "");
    keep_best(out, &have, &cand, &b);
  }
  if (dst.bits == 16) { /* via f32 then cvt (needed for u8/i8 -> bf16) */
    Dst d32 = dst_of(tl_dtype_f32());
    builder_init(&b, &cand, src, dst, nin, 0);
    if (w == 8)
      gen_prmt8(&b, &d32, sgn);
    else
      gen_magic(&b, &d32, sgn);
    chain_f32_to_16(&b, dst);
    finish(&cand, TL_RECIPE_CHAIN, "");
    keep_best(out, &have, &cand, &b);
  }
  tl_assert(have);
  if (out->kind == TL_RECIPE_CHAIN)
    sum = "integer to f32 by the 0x4b000000 (2^23) magic, then an exact "
          "cvt.rn.x2.f32 pack";
  else if (dd.elem_bits == 32)
    sum = "magic 0x4b000000 (2^23): lop3/prmt the value into the mantissa, "
          "ffma by 2^-p and -(2^23 2^-p + offset)";
  else if (dd.man_bits == 10)
    sum = "magic 0x6400 (1024.0): lop3/prmt the value into the mantissa, "
          "hfma2 by 2^-p and -(1024 2^-p + offset)";
  else
    sum = "magic 0x4300 (128.0): lop3 the value into the mantissa, bfma2 by "
          "2^-p and -(128 2^-p + offset)";
  out->summary = sum;
}

static void build_float(TlCastRecipe *out, TlDType src, TlDType dst) {
  Builder b;
  bool have = false;
  unsigned w = src.bits, nin = input_words(w), X = src.exp_bits;
  TlFloatSpecials sp = tl_dtype_specials(src);
  const char *sum = "";
  bool ocp = sp != TL_FLOAT_FINITE;
  /* Stage 1 candidates: f16 (X <= 4 rebias, e5m2 bytes), bf16 (finite
   * formats), f32 (finite formats). OCP formats reach bf16/f32 through
   * f16, which keeps their NaN and inf. */
  bool f16_ok = X <= 4 || sp == TL_FLOAT_IEEE;
  if (dst.bits == 16 && dst.exp_bits == 5 && f16_ok) {
    for (unsigned pd = 1; pd < input_values(w); pd++) {
      builder_init(&b, &cand, src, dst, nin, 0);
      if (sp == TL_FLOAT_IEEE) {
        if (pd > 1)
          break;
        gen_bytes_e5m2(&b);
        finish(&cand, TL_RECIPE_BYTES, "");
      } else {
        Dst dd = dst_of(dst);
        gen_rebias16(&b, &dd, pd);
        finish(&cand, TL_RECIPE_REBIAS, "");
      }
      keep_best(out, &have, &cand, &b);
    }
  }
  if (is_e4m3(src) && (dst.bits == 32 || dst.exp_bits == 5 || dst.exp_bits == 8)) {
    builder_init(&b, &cand, src, dst, nin, 0);
    gen_cvt_e4m3(&b);
    if (dst.bits == 16 && dst.exp_bits == 5) {
      finish(&cand, TL_RECIPE_CVT, "");
    } else {
      chain_f16_to_f32(&b);
      if (dst.bits == 16)
        chain_f32_to_16(&b, dst);
      finish(&cand, TL_RECIPE_CHAIN, "");
    }
    keep_best(out, &have, &cand, &b);
  }
  if (dst.bits == 16 && dst.exp_bits == 5 && w == 4) {
    builder_init(&b, &cand, src, dst, nin, 0);
    if (gen_lut4(&b)) {
      finish(&cand, TL_RECIPE_LUT, "");
      keep_best(out, &have, &cand, &b);
    }
  }
  if (dst.bits == 32 && w == 4) {
    builder_init(&b, &cand, src, dst, nin, 0);
    if (gen_lut4(&b)) {
      chain_f16_to_f32(&b);
      finish(&cand, TL_RECIPE_CHAIN, "");
      keep_best(out, &have, &cand, &b);
    }
  }
  if (dst.bits == 16 && dst.exp_bits == 8 && !ocp) {
    Dst dd = dst_of(dst);
    for (unsigned pd = 1; pd < input_values(w); pd++) {
      builder_init(&b, &cand, src, dst, nin, 0);
      gen_rebias16(&b, &dd, pd);
      finish(&cand, TL_RECIPE_REBIAS, "");
      keep_best(out, &have, &cand, &b);
    }
  }
  if (dst.bits == 32 && !ocp) {
    builder_init(&b, &cand, src, dst, nin, 0);
    gen_rebias32(&b);
    finish(&cand, TL_RECIPE_REBIAS, "");
    keep_best(out, &have, &cand, &b);
  }
  if (dst.bits == 16 && !ocp) { /* via f32, then a rounding/exact pack */
    builder_init(&b, &cand, src, dst, nin, 0);
    gen_rebias32(&b);
    chain_f32_to_16(&b, dst);
    finish(&cand, TL_RECIPE_CHAIN, "");
    keep_best(out, &have, &cand, &b);
  }
  if (!(dst.bits == 16 && dst.exp_bits == 5) && f16_ok) {
    /* via the f16 recipe, then exact cvt f16 -> f32 (-> bf16) */
    TlCastRecipe *f16r = &cand;
    for (unsigned pd = 1; pd < input_values(w); pd++) {
      builder_init(&b, f16r, src, dst, nin, 0);
      if (sp == TL_FLOAT_IEEE) {
        if (pd > 1)
          break;
        gen_bytes_e5m2(&b);
      } else {
        Dst dd = dst_of(tl_dtype_f16());
        gen_rebias16(&b, &dd, pd);
      }
      chain_f16_to_f32(&b);
      if (dst.bits == 16)
        chain_f32_to_16(&b, dst);
      finish(f16r, TL_RECIPE_CHAIN, "");
      keep_best(out, &have, f16r, &b);
    }
  }
  tl_assert(have);
  switch (out->kind) {
  case TL_RECIPE_LUT:
    sum = "lut: prmt with the input nibbles (& 0x7) as selector looks the "
          "f16 high bytes up in an 8-byte table; prmt places them, lop3 ORs "
          "the signs";
    break;
  case TL_RECIPE_BYTES:
    sum = "prmt the byte into the f16 high byte (same exponent field and "
          "bias)";
    break;
  case TL_RECIPE_CVT:
    sum = "cvt: cvt.rn.f16x2.e4m3x2 of each 16-bit half (sm_89+; the back "
          "end expands it into exact integer and f16x2 ops elsewhere)";
    break;
  case TL_RECIPE_REBIAS:
    sum = sp == TL_FLOAT_FN
              ? "rebias: lop3 sign and E:M into place, hmul2 by 2^8; a NaN "
                "flag ((b & 0x7f) + 1) & 0x80 rides into the f16 exponent"
          : dst.bits == 32
              ? "rebias: top-align, sar by 8-X, and, fmul by 2^(127-bias)"
              : "rebias: lop3 sign and E:M into place, multiply by "
                "2^(Bdst-bias)";
    break;
  default:
    sum = "chain: a rebias/bytes/lut recipe to f16 or f32, then exact cvt "
          "(cvt.rn.f16x2.f32 rounds where the value overflows f16)";
    break;
  }
  out->summary = sum;
}

/*---- QUANT: f16/bf16/f32 -> 2/4/8-bit integers --------------------------*/

/* Elements y[0..ne) hold 2^M + u (u < 2^w) in the low byte of each half
 * (or of each f32); gathers them into one output word in the order
 * documented at tl_cast_recipe_find: output value i is element
 * 4*(i % (8/w)) + i / (8/w). */
static void quant_pack(Builder *b, const uint8_t *y, bool halves,
                       bool is_signed) {
  TlCastRecipe *r = b->r;
  unsigned w = r->dst.bits, groups = 8 / w;
  uint8_t g[4] = {0, 0, 0, 0};
  for (unsigned k = 0; k < groups; k++) {
    if (halves) /* low bytes of both halves of two words */
      g[k] = emit(b, TL_ROP_PRMT, y[2 * k], y[2 * k + 1], 0, 0x6420);
    else {
      uint8_t t0 = emit(b, TL_ROP_PRMT, y[4 * k], y[4 * k + 1], 0, 0x5140);
      uint8_t t1 = emit(b, TL_ROP_PRMT, y[4 * k + 2], y[4 * k + 3], 0, 0x5140);
      g[k] = emit(b, TL_ROP_PRMT, t0, t1, 0, 0x5410);
    }
    if (k)
      g[k] = emit(b, TL_ROP_SHL, g[k], 0, 0, k * w);
  }
  /* sign flips turn offset binary back into two's complement */
  uint32_t flip = 0;
  if (is_signed)
    for (unsigned i = 0; i < 32 / w; i++)
      flip |= 1u << (i * w + w - 1);
  uint8_t acc = g[0];
  unsigned k = 1;
  while (groups - k >= 2) {
    acc = emit(b, TL_ROP_LOP3, acc, g[k], g[k + 1], LUT_OR3);
    k += 2;
  }
  if (k < groups)
    acc = emit(b, TL_ROP_LOP3, acc, g[k], konst(b, flip), LUT_OR_XOR);
  else if (is_signed)
    acc = emit(b, TL_ROP_LOP3, acc, konst(b, flip), 0, LUT_XOR);
  add_out(b, acc);
  for (unsigned i = 0; i < 32 / w; i++)
    r->value_of[i] = (uint8_t)(4 * (i % groups) + i / groups);
}

static void build_quant(TlCastRecipe *out, TlDType src, TlDType dst) {
  Builder b;
  unsigned w = dst.bits, n = 32 / w;
  bool sgn = dst.kind == TL_DTYPE_INT;
  uint32_t off = sgn ? 1u << (w - 1) : 0;
  bool use32 = src.bits == 32 || (src.exp_bits == 8 && w > 4);
  unsigned nin = src.bits == 32 ? n : n / 2;
  builder_init(&b, out, src, dst, nin, 2);
  uint8_t ps = (uint8_t)nin, pz = (uint8_t)(nin + 1), y[32];
  if (!use32) {
    Dst dd = dst_of(src);
    TlRegOpcode mx = dd.man_bits == 10 ? TL_ROP_HMAX2 : TL_ROP_BMAX2;
    TlRegOpcode mn = dd.man_bits == 10 ? TL_ROP_HMIN2 : TL_ROP_BMIN2;
    /* bias = bits of 2^M + off + z: an integer below 2^(M+1), so adding
     * to the magic's bit pattern adds to its value; prmt 0x1010 copies
     * the low half into both halves */
    uint8_t bz = emit(&b, TL_ROP_IADD, pz, konst(&b, dd.magic + off), 0, 0);
    bz = emit(&b, TL_ROP_PRMT, bz, bz, 0, 0x1010);
    uint8_t lo = konst(&b, dd.magic | dd.magic << 16);
    uint32_t top = dd.magic + (1u << w) - 1;
    uint8_t hi = konst(&b, top | top << 16);
    for (unsigned k = 0; k < nin; k++) {
      uint8_t t = emit(&b, dd.fma, (uint8_t)k, ps, bz, 0);
      t = emit(&b, mx, t, lo, 0, 0);
      y[k] = emit(&b, mn, t, hi, 0, 0);
    }
    quant_pack(&b, y, true, sgn);
  } else {
    uint8_t bz = emit(&b, TL_ROP_IADD, pz, konst(&b, 0x4b000000u + off), 0, 0);
    uint8_t lo = konst(&b, 0x4b000000u),
            hi = konst(&b, 0x4b000000u + (1u << w) - 1);
    uint8_t xs[32], sc = ps;
    unsigned ne = 0;
    if (src.bits == 32) {
      for (unsigned k = 0; k < nin; k++)
        xs[ne++] = (uint8_t)k;
    } else {
      /* bf16 -> f32 is a 16-bit shift: low half << 16, high half & mask */
      uint8_t m = konst(&b, 0xffff0000u);
      for (unsigned k = 0; k < nin; k++) {
        xs[ne++] = emit(&b, TL_ROP_SHL, (uint8_t)k, 0, 0, 16);
        xs[ne++] = emit(&b, TL_ROP_LOP3, (uint8_t)k, m, 0, LUT_AND);
      }
      sc = emit(&b, TL_ROP_SHL, ps, 0, 0, 16);
    }
    for (unsigned k = 0; k < ne; k++) {
      uint8_t t = emit(&b, TL_ROP_FFMA, xs[k], sc, bz, 0);
      t = emit(&b, TL_ROP_FMAX, t, lo, 0, 0);
      y[k] = emit(&b, TL_ROP_FMIN, t, hi, 0, 0);
    }
    quant_pack(&b, y, false, sgn);
  }
  tl_assert(!b.overflow);
  finish(out, TL_RECIPE_QUANT, "");
  out->n_values = n;
  out->summary =
      use32 ? "quantise: ffma(x, scale, 2^23 + offset + z) rounds to an "
              "integer, fmax/fmin clamp, prmt gathers the low bytes"
      : src.exp_bits == 5
          ? "quantise: hfma2(x, scale, 1024 + offset + z) rounds to an "
            "integer, hmax2/hmin2 clamp, prmt/shift/lop3 pack"
          : "quantise: bfma2(x, scale, 128 + offset + z) rounds to an "
            "integer, bmax2/bmin2 clamp, prmt/shift/lop3 pack";
}

/*---- the table ----------------------------------------------------------*/

#define MAX_RECIPES 160
static TlCastRecipe table[MAX_RECIPES];
static size_t n_table;
static once_flag table_once = ONCE_FLAG_INIT;

typedef struct Collect {
  TlDType list[64];
  unsigned n;
} Collect;

static void collect(TlDType t, void *user) {
  Collect *c = user;
  c->list[c->n++] = t;
}

static void build_table(void) {
  Collect c = {.n = 0};
  tl_dtype_foreach_small(collect, &c);
  TlDType dsts[3] = {tl_dtype_f16(), tl_dtype_bf16(), tl_dtype_f32()};
  for (unsigned i = 0; i < c.n; i++)
    for (unsigned d = 0; d < 3; d++) {
      TlCastRecipe *r = &table[n_table++];
      memset(r, 0, sizeof *r);
      if (tl_dtype_is_float(c.list[i]))
        build_float(r, c.list[i], dsts[d]);
      else
        build_int(r, c.list[i], dsts[d]);
    }
  TlDType qs[6] = {tl_dtype_uint(2), tl_dtype_uint(4), tl_dtype_uint(8),
                   tl_dtype_int(2),  tl_dtype_int(4),  tl_dtype_int(8)};
  for (unsigned s = 0; s < 3; s++)
    for (unsigned q = 0; q < 6; q++)
      build_quant(&table[n_table++], dsts[s], qs[q]);
  tl_assert(n_table <= MAX_RECIPES);
}

const TlCastRecipe *tl_cast_recipe_all(size_t *n) {
  call_once(&table_once, build_table);
  *n = n_table;
  return table;
}

const TlCastRecipe *tl_cast_recipe_find(TlDType src, TlDType dst) {
  size_t n;
  const TlCastRecipe *all = tl_cast_recipe_all(&n);
  for (size_t i = 0; i < n; i++)
    if (tl_dtype_eq(all[i].src, src) && tl_dtype_eq(all[i].dst, dst))
      return &all[i];
  return NULL;
}

bool tl_cast_recipe_run(const TlCastRecipe *r, const uint32_t *in,
                        const uint32_t *params, uint32_t *out, TlErr *err) {
  uint32_t regs[256] = {0};
  if (r->n_regs > 256 || r->n_in_words + r->n_params > 256)
    return tl_err(err, "recipe uses %u registers", r->n_regs);
  memcpy(regs, in, r->n_in_words * sizeof *in);
  if (r->n_params)
    memcpy(regs + r->n_in_words, params, r->n_params * sizeof *params);
  if (!tl_regop_run(r->ops, r->n_ops, regs, 256, err))
    return false;
  for (unsigned j = 0; j < r->n_out_words; j++)
    out[j] = regs[r->out_regs[j]];
  return true;
}

/*---- the quantisation reference ----------------------------------------*/

uint64_t tl_kv_quant_ref(TlDType q, double x, double scale, int zero) {
  unsigned w = q.bits;
  double off = q.kind == TL_DTYPE_INT ? ldexp(1.0, (int)w - 1) : 0.0;
  double top = ldexp(1.0, (int)w) - 1.0, u;
  /* x and scale have at most 24 significant bits: p is exact */
  double p = x * scale;
  if (isnan(p))
    u = 0.0;
  else if (p > 1e9)
    u = top;
  else if (p < -1e9)
    u = 0.0;
  else {
    /* rne(p + zero) without forming p + zero, which might round: p's
     * integer part plus zero is exact, and its fraction decides */
    double fl = floor(p), frac = p - fl, base = fl + zero;
    if (frac > 0.5 || (frac == 0.5 && fmod(base, 2.0) != 0.0))
      base += 1.0;
    u = base + off;
    if (u < 0.0)
      u = 0.0;
    if (u > top)
      u = top;
  }
  uint64_t uc = (uint64_t)u;
  if (q.kind == TL_DTYPE_INT) /* offset binary -> two's complement */
    uc ^= (uint64_t)1 << (w - 1);
  return uc;
}

bool tl_kv_quant_params(const TlCastRecipe *r, uint32_t scale_code, int zero,
                        uint32_t params[2], TlErr *err) {
  if (r->kind != TL_RECIPE_QUANT)
    return tl_err(err, "not a quantising recipe");
  unsigned w = r->dst.bits;
  int off = r->dst.kind == TL_DTYPE_INT ? 1 << (w - 1) : 0;
  if (zero + off < 0 || zero + off >= (1 << w))
    return tl_err(err, "zero point %d out of range for %s", zero,
                  tl_dtype_name(r->dst));
  params[0] = r->src.bits == 32
                  ? scale_code
                  : (scale_code & 0xffff) | (scale_code & 0xffff) << 16;
  params[1] = (uint32_t)zero;
  return true;
}
