/* The cast-recipe emitter: turns a TlCastRecipe (lib/dtype's register-op
 * program, verified bit for bit against the host codec) into simt and
 * arith ops over u32 words, one group of r->n_values values at a time, and
 * undoes the recipe's output permutation so that results come out in the
 * order of the inputs. cast_recipe.h states the contract, the op mapping
 * and the cost.
 *
 * Every register op maps to ops whose semantics match lib/dtype's emulator
 * bit for bit (the simt VM computes them with the same helpers): lop3 and
 * prmt are the same functions, the packed half ops and simt.fma round once
 * to nearest even and return the canonical NaN, cvt.f32.f16 is exact, and
 * cvt_pack rounds once. The shift ops are exact integer operations. The
 * f32 add/sub/mul of arith round once as well; their NaN results may carry
 * another payload than the emulator's, which no cast recipe produces (their
 * f32 arithmetic only ever sees finite magic-number operands).
 *
 * Within one group, each recipe register holds one SSA value, created
 * lazily in the views it is used in (u32, f32, 2xf16, 2xbf16): a float op
 * reads its operands through bitcasts and leaves its result in its own
 * view, so a chain of float ops never goes through u32. */
#include "cast_recipe.h"
#include "emit.h"
#include "tl/dialects.h"
#include "tl/simt.h"

#include <string.h>

typedef enum View { V_U32, V_F32, V_H2, V_B2, V_COUNT } View;

/* One recipe register: its value in each view made so far. */
typedef struct Reg {
  TlValue *v[V_COUNT];
} Reg;

#define MAX_CONSTS 512

typedef struct Em {
  TlBuilder at; /* the caller's insertion point, at the cast's location */
  TlBuilder *b; /* &at */
  TlLoc loc;
  TlContext *ctx;
  TlType *t[V_COUNT]; /* the type of each view */
  TlType *i32, *i64, *f16;
  struct {
    uint32_t v;
    TlValue *val;
  } consts[MAX_CONSTS];
  unsigned n_consts;
} Em;

/*===--- Helpers ---------------------------------------------------------===*/

static TlValue *make(Em *e, TlOpId id, unsigned n, TlValue *const *ops,
                     TlType *rt, const char *attr, TlAttr *val) {
  return tl_emit_op(e->b, id, n, ops, rt, attr, val);
}

static TlValue *op2(Em *e, TlOpId id, TlValue *a, TlValue *b) {
  TlValue *ops[2] = {a, b};
  return make(e, id, 2, ops, tl_value_type(a), NULL, NULL);
}

/* A u32 constant, one op per value per call. */
static TlValue *konst(Em *e, uint32_t v) {
  for (unsigned i = 0; i < e->n_consts; i++)
    if (e->consts[i].v == v)
      return e->consts[i].val;
  TlValue *c =
      tl_arith_constant(e->b, tl_attr_int(e->ctx, e->t[V_U32], v), e->loc);
  if (e->n_consts < MAX_CONSTS) {
    e->consts[e->n_consts].v = v;
    e->consts[e->n_consts++].val = c;
  }
  return c;
}

static TlValue *bitcast(Em *e, TlValue *x, TlType *to) {
  TlType *from = tl_value_type(x);
  bool vec = tl_simt_is_vec(from) || tl_simt_is_vec(to);
  return make(e, vec ? TL_OP_SIMT_BITCAST : TL_OP_ARITH_BITCAST, 1, &x, to, NULL, NULL);
}

/* The register in view k: bitcast from its u32 value, which is itself made
 * from whichever view exists. */
static TlValue *as(Em *e, Reg *r, View k) {
  if (r->v[k])
    return r->v[k];
  if (!r->v[V_U32]) {
    View have = V_COUNT;
    for (unsigned j = 0; j < V_COUNT && have == V_COUNT; j++)
      if (r->v[j])
        have = (View)j;
    tl_assert(have != V_COUNT); /* registers are written before read */
    r->v[V_U32] = bitcast(e, r->v[have], e->t[V_U32]);
  }
  if (k != V_U32)
    r->v[k] = bitcast(e, r->v[V_U32], e->t[k]);
  return r->v[k];
}

static TlValue *u32(Em *e, Reg *r) { return as(e, r, V_U32); }

/*===--- Register ops ----------------------------------------------------===*/

/* The view a packed half op works in, V_COUNT when op is not one. */
static View half_view(TlRegOpcode op, TlOpId *id) {
  switch (op) {
  case TL_ROP_HADD2:
  case TL_ROP_BADD2:
    *id = TL_OP_SIMT_ADD2;
    break;
  case TL_ROP_HSUB2:
  case TL_ROP_BSUB2:
    *id = TL_OP_SIMT_SUB2;
    break;
  case TL_ROP_HMUL2:
  case TL_ROP_BMUL2:
    *id = TL_OP_SIMT_MUL2;
    break;
  case TL_ROP_HFMA2:
  case TL_ROP_BFMA2:
    *id = TL_OP_SIMT_FMA2;
    break;
  default:
    return V_COUNT;
  }
  return op <= TL_ROP_HMIN2 ? V_H2 : V_B2;
}

/* The view a max/min op works in (simt.max/min keep PTX's rule that a
 * NaN operand yields the other), V_COUNT when op is not one. */
static View maxmin_view(TlRegOpcode op, TlOpId *id) {
  switch (op) {
  case TL_ROP_HMAX2:
  case TL_ROP_HMIN2:
  case TL_ROP_BMAX2:
  case TL_ROP_BMIN2:
  case TL_ROP_FMAX:
  case TL_ROP_FMIN:
    break;
  default:
    return V_COUNT;
  }
  *id = op == TL_ROP_HMAX2 || op == TL_ROP_BMAX2 || op == TL_ROP_FMAX
            ? TL_OP_SIMT_MAX
            : TL_OP_SIMT_MIN;
  return op == TL_ROP_FMAX || op == TL_ROP_FMIN ? V_F32
         : op <= TL_ROP_HMIN2                   ? V_H2
                                                : V_B2;
}

/* Every register op has a simt form; a recipe may still be malformed. */
static bool well_formed(const TlCastRecipe *r, TlErr *err) {
  for (unsigned i = 0; i < r->n_ops; i++)
    if ((unsigned)r->ops[i].op >= TL_ROP_COUNT_)
      return tl_err(err, "%s -> %s: unknown register op %u",
                    tl_dtype_name(r->src), tl_dtype_name(r->dst),
                    (unsigned)r->ops[i].op);
  if (r->n_values == 0 || r->n_values > TL_RECIPE_MAX_VALUES ||
      r->n_regs > 256 || r->n_in_words == 0 ||
      r->n_in_words + r->n_params > r->n_regs)
    return tl_err(err, "%s -> %s: malformed recipe", tl_dtype_name(r->src),
                  tl_dtype_name(r->dst));
  return true;
}

bool tl_cast_recipe_emittable(const TlCastRecipe *r, TlErr *err) {
  if (r->kind == TL_RECIPE_QUANT)
    return tl_err(err,
                  "%s -> %s: a quantising recipe takes a scale and a zero "
                  "point (tl_emit_quant_recipe emits it)",
                  tl_dtype_name(r->src), tl_dtype_name(r->dst));
  return well_formed(r, err);
}

/* Emits one register op; returns its result, in view *k. */
static TlValue *emit_op(Em *e, const TlRegOp *o, Reg *regs, View *k) {
  Reg *a = &regs[o->a], *b = &regs[o->b], *c = &regs[o->c];
  TlRegOpcode op = (TlRegOpcode)o->op;
  uint32_t im = o->imm;
  TlOpId id = TL_OP_NONE;
  View mv = maxmin_view(op, &id);
  if (mv != V_COUNT) {
    *k = mv;
    return op2(e, id, as(e, a, mv), as(e, b, mv));
  }
  View hv = half_view(op, &id);
  *k = V_U32;
  if (hv != V_COUNT) {
    TlValue *ops[3] = {as(e, a, hv), as(e, b, hv),
                       op == TL_ROP_HFMA2 || op == TL_ROP_BFMA2 ? as(e, c, hv)
                                                                : NULL};
    *k = hv;
    return make(e, id, ops[2] ? 3 : 2, ops, e->t[hv], NULL, NULL);
  }
  switch (op) {
  case TL_ROP_MOV:
    return konst(e, im);
  case TL_ROP_LOP3: {
    TlValue *ops[3] = {u32(e, a), u32(e, b), u32(e, c)};
    return make(e, TL_OP_SIMT_LOP3, 3, ops, e->t[V_U32], "lut",
                tl_attr_int(e->ctx, e->i64, im & 0xff));
  }
  case TL_ROP_PRMT:
  case TL_ROP_PRMT_R: {
    /* prmt reads 16 selector bits in the default mode, as the emulator */
    TlValue *ops[3] = {u32(e, a), u32(e, b),
                       op == TL_ROP_PRMT ? konst(e, im & 0xffff) : u32(e, c)};
    return make(e, TL_OP_SIMT_PRMT, 3, ops, e->t[V_U32], NULL, NULL);
  }
  case TL_ROP_SHL:
  case TL_ROP_SHR:
    return im >= 32 ? konst(e, 0)
                    : op2(e, op == TL_ROP_SHL ? TL_OP_ARITH_SHLI : TL_OP_ARITH_SHRI,
                          u32(e, a), konst(e, im));
  case TL_ROP_SAR: {
    /* arith.shri shifts by the operand type's signedness: go through i32.
     * A shift by 31 already fills every bit with the sign. */
    TlValue *s = bitcast(e, u32(e, a), e->i32);
    TlValue *n = tl_arith_constant(
        e->b, tl_attr_int(e->ctx, e->i32, im >= 32 ? 31 : im), e->loc);
    return bitcast(e, op2(e, TL_OP_ARITH_SHRI, s, n), e->t[V_U32]);
  }
  case TL_ROP_SHF_R:
    /* low 32 bits of (b:a) >> s, clamped at 32: (a >> s) | (b << (32 - s))
     * for 0 < s < 32, a for s = 0, b from 32 on */
    if (im == 0)
      return u32(e, a);
    if (im >= 32)
      return u32(e, b);
    return op2(e, TL_OP_ARITH_ORI, op2(e, TL_OP_ARITH_SHRI, u32(e, a), konst(e, im)),
               op2(e, TL_OP_ARITH_SHLI, u32(e, b), konst(e, 32 - im)));
  case TL_ROP_IADD:
  case TL_ROP_ISUB:
    return op2(e, op == TL_ROP_IADD ? TL_OP_ARITH_ADDI : TL_OP_ARITH_SUBI, u32(e, a),
               u32(e, b));
  case TL_ROP_FADD:
  case TL_ROP_FSUB:
  case TL_ROP_FMUL:
    *k = V_F32;
    return op2(e,
               op == TL_ROP_FADD   ? TL_OP_ARITH_ADDF
               : op == TL_ROP_FSUB ? TL_OP_ARITH_SUBF
                                   : TL_OP_ARITH_MULF,
               as(e, a, V_F32), as(e, b, V_F32));
  case TL_ROP_FFMA: {
    TlValue *ops[3] = {as(e, a, V_F32), as(e, b, V_F32), as(e, c, V_F32)};
    *k = V_F32;
    return make(e, TL_OP_SIMT_FMA, 3, ops, e->t[V_F32], NULL, NULL);
  }
  case TL_ROP_CVT_F32_F16LO:
  case TL_ROP_CVT_F32_F16HI: {
    TlValue *h = make(
        e, TL_OP_SIMT_EXTRACT, 1, (TlValue *[]){as(e, a, V_H2)}, e->f16, "index",
        tl_attr_int(e->ctx, e->i64, op == TL_ROP_CVT_F32_F16HI ? 1 : 0));
    *k = V_F32;
    return make(e, TL_OP_SIMT_CVT, 1, &h, e->t[V_F32], NULL, NULL);
  }
  case TL_ROP_CVT_F16X2_E4M3X2: {
    TlValue *w = u32(e, a);
    *k = V_H2;
    return make(e, TL_OP_SIMT_CVT_E4M3X2, 1, &w, e->t[V_H2], "half",
                tl_attr_int(e->ctx, e->i64, im ? 1 : 0));
  }
  case TL_ROP_CVT_F16X2_F32:
  case TL_ROP_CVT_BF16X2_F32: {
    *k = op == TL_ROP_CVT_F16X2_F32 ? V_H2 : V_B2;
    TlValue *ops[2] = {as(e, a, V_F32), as(e, b, V_F32)};
    return make(e, TL_OP_SIMT_CVT_PACK, 2, ops, e->t[*k], "rounding",
                tl_attr_string(e->ctx, "rn", 2));
  }
  default:
    TL_UNREACHABLE("checked by tl_cast_recipe_emittable");
  }
}

/*===--- Groups ----------------------------------------------------------===*/

/* Marks the registers that the needed output words depend on. A recipe is
 * single-assignment, so one backward pass over the ops suffices. */
static void mark_live(const TlCastRecipe *r, const bool *need_word,
                      bool *live) {
  memset(live, 0, 256 * sizeof *live);
  for (unsigned j = 0; j < r->n_out_words; j++)
    if (need_word[j])
      live[r->out_regs[j]] = true;
  for (unsigned i = r->n_ops; i-- > 0;) {
    const TlRegOp *o = &r->ops[i];
    if (!live[o->dst])
      continue;
    unsigned n = tl_regop_num_operands((TlRegOpcode)o->op);
    uint8_t src[3] = {o->a, o->b, o->c};
    for (unsigned k = 0; k < n; k++)
      live[src[k]] = true;
  }
}

/* One group: n (1..r->n_values) values from in[0..n_in), which may be fewer
 * than r->n_in_words words; result i into out is the cast of value pg[i]
 * (i when pg is NULL). */
static void emit_group(Em *e, const TlCastRecipe *r, TlValue *const *in,
                       unsigned n_in, unsigned n, const unsigned *pg,
                       TlValue **out) {
  Reg regs[256];
  bool live[256], need[TL_RECIPE_MAX_WORDS] = {false};
  unsigned per = r->dst.bits == 32 ? 1 : 2;
  int elem_of[TL_RECIPE_MAX_VALUES]; /* recipe element holding value i */
  for (unsigned k = 0; k < r->n_values; k++)
    elem_of[r->value_of[k]] = (int)k;
  int want[TL_RECIPE_MAX_VALUES]; /* recipe element of result i */
  for (unsigned i = 0; i < n; i++)
    want[i] = elem_of[pg ? pg[i] : i];
  for (unsigned i = 0; i < n; i++)
    need[want[i] / per] = true;
  mark_live(r, need, live);
  memset(regs, 0, sizeof regs);
  for (unsigned k = 0; k < r->n_in_words; k++)
    if (live[k])
      regs[k].v[V_U32] = k < n_in ? in[k] : konst(e, 0);
  for (unsigned i = 0; i < r->n_ops; i++) {
    if (!live[r->ops[i].dst])
      continue;
    View k;
    /* computed before the store: recipes never write an operand, but the
     * order keeps that assumption out of the way */
    TlValue *v = emit_op(e, &r->ops[i], regs, &k);
    memset(&regs[r->ops[i].dst], 0, sizeof(Reg));
    regs[r->ops[i].dst].v[k] = v;
  }
  if (per == 1) { /* one word per element: reordering is free */
    for (unsigned i = 0; i < n; i++)
      out[i] = u32(e, &regs[r->out_regs[want[i]]]);
    return;
  }
  /* Output word k holds results 2k (low half) and 2k + 1 (high half). Free
   * when they are one recipe word's halves in order; otherwise one prmt
   * picks the two halves' bytes from {b, a} (bytes 0-3 of a, 4-7 of b),
   * with b a zero word when only the low half is wanted. */
  for (unsigned k = 0; 2 * k < n; k++) {
    int lo = want[2 * k], hi = 2 * k + 1 < n ? want[2 * k + 1] : -1;
    TlValue *wa = u32(e, &regs[r->out_regs[lo / 2]]);
    if (hi == lo + 1 && lo % 2 == 0) {
      out[k] = wa;
      continue;
    }
    unsigned la = 2 * (unsigned)(lo % 2), hb;
    TlValue *wb;
    if (hi < 0) {
      wb = konst(e, 0);
      hb = 4;
    } else if (hi / 2 == lo / 2) {
      wb = wa;
      hb = 2 * (unsigned)(hi % 2);
    } else {
      wb = u32(e, &regs[r->out_regs[hi / 2]]);
      hb = 4 + 2 * (unsigned)(hi % 2);
    }
    uint32_t sel = la | (la + 1) << 4 | hb << 8 | (hb + 1) << 12;
    TlValue *ops[3] = {wa, wb, konst(e, sel)};
    out[k] = make(e, TL_OP_SIMT_PRMT, 3, ops, e->t[V_U32], NULL, NULL);
  }
}

bool tl_emit_cast_recipe(TlBuilder *b, TlLoc loc, const TlCastRecipe *r,
                         TlValue *const *in, unsigned n_elems, TlValue **out,
                         TlErr *err) {
  return tl_emit_cast_recipe_perm(b, loc, r, in, n_elems, NULL, out, err);
}

bool tl_cast_recipe_perm_ok(const TlCastRecipe *r, unsigned n_elems,
                            const unsigned *perm) {
  unsigned nv = r->n_values;
  bool seen[TL_RECIPE_MAX_VALUES];
  for (unsigned g = 0; g * nv < n_elems; g++) {
    unsigned n = n_elems - g * nv < nv ? n_elems - g * nv : nv;
    memset(seen, 0, sizeof seen);
    for (unsigned i = 0; i < n; i++) {
      unsigned p = perm[g * nv + i];
      if (p < g * nv || p >= g * nv + n || seen[p - g * nv])
        return false;
      seen[p - g * nv] = true;
    }
  }
  return true;
}

/* An emitter building at b's insertion point, every op located at loc
 * (freed by the caller). */
static Em *em_create(TlBuilder *b, TlLoc loc) {
  Em *e = tl_xcalloc(1, sizeof *e);
  e->at = *b;
  e->at.loc = loc;
  e->b = &e->at;
  e->loc = loc;
  e->ctx = tl_module_context(b->module);
  e->t[V_U32] = tl_type_int(e->ctx, 32, false);
  e->t[V_F32] = tl_type_f32(e->ctx);
  e->f16 = tl_type_f16(e->ctx);
  e->t[V_H2] = tl_simt_vec_type(e->ctx, 2, e->f16);
  e->t[V_B2] = tl_simt_vec_type(e->ctx, 2, tl_type_bf16(e->ctx));
  e->i32 = tl_type_int(e->ctx, 32, true);
  e->i64 = tl_type_int(e->ctx, 64, true);
  return e;
}

/* The checks both emitters make of the values asked for: some, and an
 * order of the results that keeps every value in its recipe group. */
static bool check_order(const TlCastRecipe *r, unsigned n_elems,
                        const unsigned *perm, TlErr *err) {
  if (n_elems == 0)
    return tl_err(err, "no values to cast");
  if (perm && !tl_cast_recipe_perm_ok(r, n_elems, perm))
    return tl_err(err, "the order of the results is not a permutation "
                       "within the recipe's groups of values");
  return true;
}

bool tl_emit_cast_recipe_perm(TlBuilder *b, TlLoc loc, const TlCastRecipe *r,
                              TlValue *const *in, unsigned n_elems,
                              const unsigned *perm, TlValue **out,
                              TlErr *err) {
  if (!tl_cast_recipe_emittable(r, err))
    return false;
  if (!check_order(r, n_elems, perm, err))
    return false;
  Em *e = em_create(b, loc);
  unsigned nv = r->n_values,
           total_in = tl_cast_recipe_words(r->src.bits, n_elems);
  unsigned per_out = nv * r->dst.bits / 32; /* output words per group */
  for (unsigned k = 0; k < total_in; k++)
    tl_assert(tl_value_type(in[k]) == e->t[V_U32]);
  for (unsigned g = 0; g * nv < n_elems; g++) {
    unsigned first = g * r->n_in_words;
    unsigned n = n_elems - g * nv < nv ? n_elems - g * nv : nv;
    unsigned avail =
        total_in - first < r->n_in_words ? total_in - first : r->n_in_words;
    unsigned pg[TL_RECIPE_MAX_VALUES];
    for (unsigned i = 0; perm && i < n; i++)
      pg[i] = perm[g * nv + i] - g * nv;
    emit_group(e, r, in + first, avail, n, perm ? pg : NULL,
               out + g * per_out);
  }
  tl_free(e);
  return true;
}

/*===--- Quantising recipes ----------------------------------------------===*/

/* Input word k of a quantising recipe's group: recipe elements 2k and
 * 2k + 1 (16-bit sources) or element k (f32), each the source value src[j]
 * (-1: none, a zero). Source value v is in word v / 2 (16 bits: half v % 2)
 * or word v. Free when the two halves are one source word's in order;
 * otherwise one prmt takes each half from its word (or from a zero word). */
static TlValue *quant_input(Em *e, TlValue *const *in, bool halves,
                            const int *src, unsigned k) {
  if (!halves)
    return src[k] < 0 ? konst(e, 0) : in[src[k]];
  int lo = src[2 * k], hi = src[2 * k + 1];
  if (lo < 0 && hi < 0)
    return konst(e, 0);
  if (lo >= 0 && lo % 2 == 0 && hi == lo + 1)
    return in[lo / 2];
  TlValue *wa = lo >= 0 ? in[lo / 2] : konst(e, 0);
  unsigned la = lo >= 0 ? 2 * (unsigned)(lo % 2) : 0, hb;
  TlValue *wb;
  if (hi < 0) {
    wb = konst(e, 0);
    hb = 4;
  } else if (lo >= 0 && hi / 2 == lo / 2) {
    wb = wa;
    hb = 2 * (unsigned)(hi % 2);
  } else {
    wb = in[hi / 2];
    hb = 4 + 2 * (unsigned)(hi % 2);
  }
  uint32_t sel = la | (la + 1) << 4 | hb << 8 | (hb + 1) << 12;
  TlValue *ops[3] = {wa, wb, konst(e, sel)};
  return make(e, TL_OP_SIMT_PRMT, 3, ops, e->t[V_U32], NULL, NULL);
}

bool tl_emit_quant_recipe(TlBuilder *b, TlLoc loc, const TlCastRecipe *r,
                          TlValue *const *in, unsigned n_elems,
                          const unsigned *perm, TlValue *const *params,
                          TlValue **out, TlErr *err) {
  if (r->kind != TL_RECIPE_QUANT)
    return tl_err(err, "%s -> %s: not a quantising recipe",
                  tl_dtype_name(r->src), tl_dtype_name(r->dst));
  if (!well_formed(r, err))
    return false;
  unsigned nv = r->n_values, w = r->dst.bits;
  bool halves = r->src.bits == 16;
  if (nv * w != 32 || r->n_out_words != 1 ||
      r->n_in_words != (halves ? nv / 2 : nv))
    return tl_err(err, "%s -> %s: malformed recipe", tl_dtype_name(r->src),
                  tl_dtype_name(r->dst));
  if (!check_order(r, n_elems, perm, err))
    return false;
  Em *e = em_create(b, loc);
  for (unsigned k = 0; k < tl_cast_recipe_words(r->src.bits, n_elems); k++)
    tl_assert(tl_value_type(in[k]) == e->t[V_U32]);
  for (unsigned k = 0; k < r->n_params; k++)
    tl_assert(tl_value_type(params[k]) == e->t[V_U32]);
  for (unsigned g = 0; g * nv < n_elems; g++) {
    unsigned n = n_elems - g * nv < nv ? n_elems - g * nv : nv;
    /* recipe element value_of[i] becomes output value i: give it source
     * value perm[g nv + i]; elements of missing values are zero */
    int src[TL_RECIPE_MAX_VALUES];
    for (unsigned j = 0; j < nv; j++)
      src[j] = -1;
    for (unsigned i = 0; i < n; i++)
      src[r->value_of[i]] = (int)(perm ? perm[g * nv + i] : g * nv + i);
    Reg regs[256];
    memset(regs, 0, sizeof regs);
    for (unsigned k = 0; k < r->n_in_words; k++)
      regs[k].v[V_U32] = quant_input(e, in, halves, src, k);
    for (unsigned k = 0; k < r->n_params; k++)
      regs[r->n_in_words + k].v[V_U32] = params[k];
    for (unsigned i = 0; i < r->n_ops; i++) {
      View k;
      TlValue *v = emit_op(e, &r->ops[i], regs, &k);
      memset(&regs[r->ops[i].dst], 0, sizeof(Reg));
      regs[r->ops[i].dst].v[k] = v;
    }
    TlValue *o = u32(e, &regs[r->out_regs[0]]);
    /* a partial group's missing values would hold the code of zero under
     * the zero point: clear their bits */
    if (n < nv)
      o = op2(e, TL_OP_ARITH_ANDI, o, konst(e, (1u << (n * w)) - 1));
    out[g] = o;
  }
  tl_free(e);
  return true;
}
