/* The small-float encoder: f32 register values to the codes of the float
 * types of at most 8 bits, as straight-line integer and fma ops, bit for
 * bit the host codec's tl_dtype_encode (the block VM's tl.cast).
 * small_float.h states the contract; docs/lowering.md ("Casts to small
 * floats") the algorithm and its cost.
 *
 * Notation: dst has E exponent and M mantissa bits, N = 1 + E + M, bias
 * B = 2^(E-1) - 1, so its quantum in the binade [2^e, 2^(e+1)) is
 * 2^(e-M), for every e >= 1 - B (the subnormals share the quantum of the
 * lowest binade). For a = |x| (f32 bits u & 0x7fffffff):
 *
 *  1. clamp: a = min(a, LIM). LIM is max for the saturating formats (every
 *     larger value, inf included, saturates; rounding then clamping equals
 *     clamping then rounding because rounding is monotone and max is
 *     representable) and 2^(emax+1) for f8e5m2, which rounds to the
 *     infinity code (values in [max, 2^(emax+1)) round as usual, to max or
 *     up to infinity). The clamp also keeps the magic below f32's range.
 *  2. the magic: e = max(exponent of a, 1 - B), as f32 bits eb =
 *     max(a & 0x7f800000, bits(2^(1-B))). Q = 2^(e + 23 - M) has f32 ulp
 *     2^(e-M), dst's quantum, and a < 2^(e+1) keeps Q + a in Q's binade,
 *     so the f32 sum Q + a rounds a to dst's quantum, to nearest even
 *     (Q's significand is even). Scaled by S = 2^(B-127): fma(a, -S, -QS)
 *     = -(S (a + Q)) rounded once; S is a power of two and QS a normal
 *     f32, so this is -S round(a + Q). -QS has the bits eb + NQ with
 *     NQ = ((23 - M + B - 127) << 23) | sign, one integer add.
 *  3. y = fma(that, -1, -QS) = S (round(a + Q) - Q) = S R, exact
 *     (Sterbenz), where R = n 2^(e-M) is a rounded to dst's grid. S maps
 *     dst's smallest normal 2^(1-B) to f32's, 2^-126, so the f32 fields of
 *     S R are dst's fields shifted left by 23 - M: a normal R = 1.m 2^e
 *     gives biased exponent e + B and mantissa m; a subnormal R = n
 *     2^(1-B-M) gives the f32 subnormal with bits n << (23 - M) (exact:
 *     its quantum 2^(-126-M) is at least 2^-149). A carry out of the
 *     mantissa (n = 2^(M+1)) yields the next binade as it should. So the
 *     magnitude code is bits(y) >> (23 - M), at most max's code by 1.
 *  4. the sign: code | ((u >> (32 - N)) & 2^(N-1)), one lop3.
 *  5. NaN (a > 0x7f800000): select the canonical NaN code (+0 for formats
 *     without NaN); the sign does not survive, as the codec's.
 *
 * The two fma keep subnormals (simt.fma is fma.rn.f32 without .ftz); an
 * f32 subnormal a lies below every format's half quantum (at least
 * 2^-63), so it rounds to 0 even where inputs are flushed. */
#include "small_float.h"
#include "emit.h"
#include "tl/dialects.h"
#include "tl/simt.h"

#include <math.h>
#include <string.h>

/* Per-format constants; see the derivation above. */
typedef struct Fmt {
  unsigned bits, sh;  /* N, and 23 - M */
  uint32_t lim;       /* f32 bits of the clamp */
  uint32_t emin_bits; /* f32 bits of 2^(1-B) */
  uint32_t nq;        /* eb + nq = f32 bits of -2^(e + 23 - M + B - 127) */
  double neg_scale;   /* -2^(B-127) */
  uint32_t nan_code;  /* the canonical NaN code, 0 without NaN */
} Fmt;

#define MAX_CONSTS 16

typedef struct Em {
  TlBuilder at; /* the caller's insertion point, at the cast's location */
  TlBuilder *b; /* &at */
  TlLoc loc;
  TlContext *ctx;
  TlType *u32, *f32, *i64;
  struct {
    uint32_t v;
    TlValue *val;
  } consts[MAX_CONSTS];
  unsigned n_consts;
} Em;

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

bool tl_small_float_dst_ok(TlDType dst, TlErr *err) {
  if (!tl_dtype_is_valid(dst) || !tl_dtype_is_float(dst) || dst.bits > 8)
    return tl_err(err,
                  "%s is not a float of at most 8 bits (casts to small "
                  "floats only)",
                  tl_dtype_name(dst));
  return true;
}

bool tl_small_float_cast_supported(TlDType src, TlDType dst, TlErr *err) {
  if (!tl_small_float_dst_ok(dst, err))
    return false;
  if (!tl_dtype_is_valid(src))
    return tl_err(err, "casts to %s from an invalid type", tl_dtype_name(dst));
  /* every type here converts to f32 exactly: at most 24 significant bits */
  if (src.bits <= 16 || tl_dtype_eq(src, tl_dtype_f32()))
    return true;
  return tl_err(err,
                "casts from %s to %s would round twice through f32 (sources "
                "of at most 16 bits and f32 only)",
                tl_dtype_name(src), tl_dtype_name(dst));
}

static Fmt fmt_of(TlDType dst) {
  Fmt f;
  unsigned m = dst.man_bits;
  int bias = tl_dtype_bias(dst);
  f.bits = dst.bits;
  f.sh = 23 - m;
  double max = tl_dtype_max(dst);
  if (tl_dtype_specials(dst) == TL_FLOAT_IEEE) /* 2^(emax+1): infinity */
    max = ldexp(1.0, ilogb(max) + 1);
  f.lim = f32_bits((float)max); /* exact: at most 7 significant bits */
  f.emin_bits = (uint32_t)(128 - bias) << 23;
  f.nq = ((uint32_t)(23 - (int)m + bias - 127) << 23) + 0x80000000u;
  f.neg_scale = -ldexp(1.0, bias - 127);
  uint64_t nan = 0;
  f.nan_code = tl_dtype_nan_code(dst, &nan) ? (uint32_t)nan : 0;
  return f;
}

/*===--- Helpers ---------------------------------------------------------===*/

static TlValue *make(Em *e, TlOpId id, unsigned n, TlValue *const *ops,
                     TlType *rt, const char *attr, TlAttr *val) {
  return tl_emit_op(e->b, id, n, ops, rt, attr, val);
}

static TlValue *op2(Em *e, TlOpId id, TlValue *a, TlValue *b) {
  TlValue *ops[2] = {a, b};
  return make(e, id, 2, ops, tl_value_type(a), NULL, NULL);
}

static TlValue *bitcast(Em *e, TlValue *x, TlType *to) {
  return make(e, TL_OP_ARITH_BITCAST, 1, &x, to, NULL, NULL);
}

/* A u32 constant, one op per value per call. */
static TlValue *konst(Em *e, uint32_t v) {
  for (unsigned i = 0; i < e->n_consts; i++)
    if (e->consts[i].v == v)
      return e->consts[i].val;
  TlValue *c = tl_arith_constant(e->b, tl_attr_int(e->ctx, e->u32, v), e->loc);
  if (e->n_consts < MAX_CONSTS) {
    e->consts[e->n_consts].v = v;
    e->consts[e->n_consts++].val = c;
  }
  return c;
}

static TlValue *fma3(Em *e, TlValue *a, TlValue *b, TlValue *c) {
  TlValue *ops[3] = {a, b, c};
  return make(e, TL_OP_SIMT_FMA, 3, ops, e->f32, NULL, NULL);
}

/*===--- Encoding ---------------------------------------------------------===*/

/* One value; neg_scale and neg_one are the f32 constants -S and -1. */
static TlValue *encode_one(Em *e, const Fmt *f, TlValue *x, TlValue *neg_scale,
                           TlValue *neg_one) {
  TlValue *u = bitcast(e, x, e->u32);
  TlValue *a = op2(e, TL_OP_ARITH_ANDI, u, konst(e, 0x7fffffffu));
  TlValue *ac = op2(e, TL_OP_ARITH_MINI, a, konst(e, f->lim));
  TlValue *ex = op2(e, TL_OP_ARITH_ANDI, ac, konst(e, 0x7f800000u));
  TlValue *eb = op2(e, TL_OP_ARITH_MAXI, ex, konst(e, f->emin_bits));
  TlValue *nqs = bitcast(e, op2(e, TL_OP_ARITH_ADDI, eb, konst(e, f->nq)), e->f32);
  TlValue *ns = fma3(e, bitcast(e, ac, e->f32), neg_scale, nqs);
  TlValue *y = bitcast(e, fma3(e, ns, neg_one, nqs), e->u32);
  TlValue *mag = op2(e, TL_OP_ARITH_SHRI, y, konst(e, f->sh));
  TlValue *sg = op2(e, TL_OP_ARITH_SHRI, u, konst(e, 32 - f->bits));
  /* lop3 0xf8: a | (b & c) */
  TlValue *lops[3] = {mag, sg, konst(e, 1u << (f->bits - 1))};
  TlValue *sv = make(e, TL_OP_SIMT_LOP3, 3, lops, e->u32, "lut",
                     tl_attr_int(e->ctx, e->i64, 0xf8));
  TlValue *cmp[2] = {a, konst(e, 0x7f800000u)};
  TlValue *nan = make(e, TL_OP_ARITH_CMPI, 2, cmp, tl_type_bool(e->ctx),
                      "predicate", tl_attr_string(e->ctx, "gt", 2));
  TlValue *sel[3] = {nan, konst(e, f->nan_code), sv};
  return make(e, TL_OP_ARITH_SELECT, 3, sel, e->u32, NULL, NULL);
}

bool tl_emit_to_small_float_n(TlBuilder *b, TlLoc loc, TlDType dst, unsigned n,
                              TlValue *const *x_f32, TlValue **code,
                              TlErr *err) {
  if (!tl_small_float_dst_ok(dst, err))
    return false;
  if (n == 0)
    return tl_err(err, "no values to cast");
  Em e = {0};
  e.at = *b;
  e.at.loc = loc;
  e.b = &e.at;
  e.loc = loc;
  e.ctx = tl_module_context(b->module);
  e.u32 = tl_type_int(e.ctx, 32, false);
  e.f32 = tl_type_f32(e.ctx);
  e.i64 = tl_type_int(e.ctx, 64, true);
  for (unsigned i = 0; i < n; i++)
    tl_assert(tl_value_type(x_f32[i]) == e.f32);
  Fmt f = fmt_of(dst);
  TlValue *neg_scale =
      tl_arith_constant(b, tl_attr_float(e.ctx, e.f32, f.neg_scale), loc);
  TlValue *neg_one =
      tl_arith_constant(b, tl_attr_float(e.ctx, e.f32, -1.0), loc);
  for (unsigned i = 0; i < n; i++)
    code[i] = encode_one(&e, &f, x_f32[i], neg_scale, neg_one);
  return true;
}

bool tl_emit_to_small_float(TlBuilder *b, TlLoc loc, TlDType dst,
                            TlValue *x_f32, TlValue **code, TlErr *err) {
  return tl_emit_to_small_float_n(b, loc, dst, 1, &x_f32, code, err);
}
