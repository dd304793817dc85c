/* Register tiles element by element: tl.alloc_register, the ops that only
 * change a tile's type (tl.view, tl.reshape, tl.permute, tl.slice), tl.cast,
 * and the elementwise arithmetic, math functions, comparisons and
 * tl.where. Each element is decoded to a compute type (lw_decode),
 * computed on and encoded back; types of at most 8 bits go through the
 * dtype library's register recipes. */
#include "../cast_recipe.h"
#include "../small_float.h"
#include "lower.h"
#include "tl/predicates.h"
#include "tl/dtype.h"

#include <stdio.h>

/* tl.alloc_register: every word a constant, the words of the initial
 * value's code repeated in each element (zeros without one). */
bool lw_lower_alloc_register(Lower *L, TlOp *op) {
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  TlAttr *init = tl_op_attr(op, "init");
  Tile *t = lw_zero_tile(L, rt);
  if (init) {
    unsigned b = lw_elem_bits(rt);
    uint64_t code;
    if (tl_attr_kind(init) == TL_ATTR_INT) {
      code = tl_attr_uint_value(init);
    } else {
      /* The element's bit pattern, from the dtype library's encoder. */
      TlStr name = {0};
      tl_type_print(tl_tensor_elem(rt), &name);
      TlDType dt;
      bool known = tl_dtype_parse(name.data, name.len, &dt);
      tl_str_free(&name);
      if (!known)
        return lw_fail(L, op, "this initial value");
      code = tl_dtype_encode(dt, tl_attr_float_value(init));
    }
    /* Build the per-thread words from the repeated code. */
    uint64_t n = (uint64_t)tl_layout_local_size(tl_reg_layout(rt));
    uint32_t *w = tl_xcalloc(t->nwords ? t->nwords : 1, 4);
    for (uint64_t i = 0; i < n; i++) {
      uint64_t p = i * b;
      for (unsigned k = 0; k < b; k++, p++)
        if ((code >> k) & 1)
          w[p / 32] |= 1u << (p % 32);
    }
    for (unsigned i = 0; i < t->nwords; i++)
      t->words[i] = lw_cst(L, lw_u32(L), w[i]);
    tl_free(w);
  }
  lw_put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/* tl.slice of a register tile: result element j is the operand's local
 * element the layout library names (no data moves between threads). */
static bool lower_reg_slice(Lower *L, TlOp *op, Tile *src) {
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  int64_t offs[TL_LAYOUT_MAX_RANK], sizes[TL_LAYOUT_MAX_RANK];
  int rank = (int)tl_tensor_rank(rt);
  for (int d = 0; d < rank; d++)
    sizes[d] = tl_tensor_dim(rt, (unsigned)d);
  TlLayout out;
  int64_t n = tl_layout_local_size(tl_reg_layout(rt));
  int64_t *map = tl_xmalloc(sizeof *map * (size_t)(n + 1));
  bool ok =
      tl_slice_offsets(op, offs) &&
      tl_layout_slice(&out, tl_reg_layout(src->type), offs, sizes, map, NULL);
  if (ok) {
    Tile *t = lw_zero_tile(L, rt);
    for (int64_t j = 0; j < n; j++)
      lw_copy_elem(L, t, (unsigned)j, src, (unsigned)map[j]);
    lw_put_tile(L, tl_op_result(op, 0), t);
  }
  tl_free(map);
  return ok ||
         lw_fail(L, op, "a register slice the layout library does not derive");
}

/* tl.view, tl.reshape, tl.permute and tl.slice. Of a shared tile: a view
 * of its bytes (lw_lower_shared_view). Of a register tile: a slice picks
 * the operand's elements; the others keep every thread's bits, only the
 * type changes. */
bool lw_lower_reinterpret(Lower *L, TlOp *op) {
  Smem *sm = lw_smem_of(L, tl_op_operand(op, 0));
  if (sm)
    return lw_lower_shared_view(L, op, sm);
  Tile *src = lw_tile_of(L, tl_op_operand(op, 0));
  if (tl_op_id(op) == TL_OP_TL_SLICE)
    return lower_reg_slice(L, op, src);
  Tile *t = lw_new_tile(L, tl_value_type(tl_op_result(op, 0)));
  if (t->nwords != src->nwords)
    return lw_fail(L, op, "a view changing the number of words");
  memcpy(t->words, src->words, sizeof *t->words * t->nwords);
  lw_put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/*===--- Casts -----------------------------------------------------------===*/

/* A cast to a float of at most 8 bits (dd) from sd, whose values f32
 * holds exactly: decoded to f32 words, then encoded with one rounding. */
static bool cast_to_small_float(Lower *L, TlOp *op, Tile *src, TlType *rt,
                                TlDType sd, TlDType dd, int64_t n) {
  TlErr err;
  if (!tl_small_float_cast_supported(sd, dd, &err))
    return lw_fail(L, op, err.msg);
  TlType *f32 = tl_type_f32(L->ctx);
  TlValue **xs = TL_ARENA_NEWN(&L->arena, TlValue *, (size_t)n);
  TlValue **codes = TL_ARENA_NEWN(&L->arena, TlValue *, (size_t)n);
  if (sd.bits <= 8) {
    const TlCastRecipe *r32 = tl_cast_recipe_find(sd, tl_dtype_f32());
    if (!r32 || !tl_emit_cast_recipe(&L->b, L->b.loc, r32, src->words,
                                     (unsigned)n, xs, &err))
      return lw_fail(L, op,
                     r32 ? err.msg : "a source type without a recipe to f32");
    for (int64_t i = 0; i < n; i++)
      xs[i] = tl_arith_bitcast(&L->b, xs[i], f32);
  } else {
    for (int64_t i = 0; i < n; i++) {
      TlType *ct;
      TlValue *x = lw_decode(L, src, (unsigned)i, &ct);
      if (!x)
        return lw_fail(L, op, "casts from this element type");
      xs[i] = tl_type_is_int(ct) ? tl_arith_itofp(&L->b, x, f32)
              : ct == f32        ? x
                                 : tl_arith_extf(&L->b, x, f32);
    }
  }
  if (!tl_emit_to_small_float_n(&L->b, L->b.loc, dd, (unsigned)n, xs, codes,
                                &err))
    return lw_fail(L, op, err.msg);
  Tile *t = lw_zero_tile(L, rt);
  for (int64_t i = 0; i < n; i++)
    lw_set_elem(L, t, (unsigned)i, codes[i]);
  lw_put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/* The order of a cast between two layouts that give every thread the same
 * elements: perm[i] is the source's local index of the result's local
 * element i, the same in every thread (tl_layout_reorder); NULL when it
 * differs between threads. The caller frees it. */
static unsigned *cast_order(const TlLayout *ls, const TlLayout *lr) {
  int64_t n = tl_layout_local_size(lr);
  int64_t *order = tl_xcalloc((size_t)n + 1, sizeof *order);
  unsigned *perm = NULL;
  if (tl_layout_reorder(ls, lr, order) == 1) {
    perm = tl_xcalloc((size_t)n + 1, sizeof *perm);
    for (int64_t i = 0; i < n; i++)
      perm[i] = (unsigned)order[i];
  }
  tl_free(order);
  return perm;
}

/* src's elements in the order perm (result local i = source local
 * perm[i]) for 8 and 16-bit elements filling whole words: each result
 * word is a source word (no op) or one simt.prmt of the two source words
 * its bytes come from. NULL when some word needs more than two. */
static Tile *reorder_bytes(Lower *L, Tile *src, const unsigned *perm,
                           int64_t n) {
  unsigned eb = lw_elem_bits(src->type);
  if ((eb != 8 && eb != 16) || (n * eb) % 32)
    return NULL;
  unsigned nw = (unsigned)(n * eb / 32);
  unsigned *wa = tl_xcalloc(2 * (size_t)nw + 1, sizeof *wa);
  uint32_t *sel = tl_xcalloc((size_t)nw + 1, sizeof *sel);
  for (unsigned w = 0; w < nw; w++) {
    unsigned used = 0;
    for (unsigned k = 0; k < 4; k++) {
      unsigned i = (32 * w + 8 * k) / eb, inb = (8 * k % eb) / 8;
      unsigned pos = perm[i] * eb + 8 * inb, sw = pos / 32, sb = pos % 32 / 8;
      unsigned slot = 0;
      while (slot < used && wa[2 * w + slot] != sw)
        slot++;
      if (slot == used) {
        if (used == 2) {
          tl_free(wa);
          tl_free(sel);
          return NULL;
        }
        wa[2 * w + used++] = sw;
      }
      sel[w] |= (uint32_t)(4 * slot + sb) << (4 * k);
    }
    if (used == 1)
      wa[2 * w + 1] = wa[2 * w];
  }
  Tile *p = lw_new_tile(L, src->type);
  TlType *u32 = lw_u32(L);
  for (unsigned w = 0; w < nw; w++) {
    if (sel[w] == 0x3210) {
      p->words[w] = src->words[wa[2 * w]];
      continue;
    }
    TlValue *ops[3] = {src->words[wa[2 * w]], src->words[wa[2 * w + 1]],
                       lw_cst(L, u32, sel[w])};
    p->words[w] =
        tl_op_result(tl_build(&L->b, TL_OP_SIMT_PRMT, 3, ops, 1, &u32), 0);
  }
  tl_free(wa);
  tl_free(sel);
  return p;
}

/* x (a float of compute type ct: f16, f32 or f64) rounded to an integral
 * value of ct by mode: one simt.cvt {rounding = "rni"/"rmi"/"rpi"}
 * (cvt.rni.f32.f32 ...), exact. bf16 has no such cvt on sm_80: it is
 * widened to f32 first (exactly), and *ct becomes f32. */
static TlValue *round_integral(Lower *L, TlValue *x, TlType **ct,
                               TlRounding mode) {
  if (mode == TL_ROUND_RZ)
    return x; /* arith.fptoi rounds toward zero itself */
  if (lw_is_f(*ct, 8, 7)) {
    *ct = tl_type_f32(L->ctx);
    x = tl_arith_extf(&L->b, x, *ct);
  }
  TlOp *cvt = tl_build(&L->b, TL_OP_SIMT_CVT, 1, &x, 1, ct);
  tl_op_set_attr(cvt, "rounding",
                 lw_str(L, mode == TL_ROUND_RN   ? "rni"
                           : mode == TL_ROUND_RM ? "rmi"
                                                 : "rpi"));
  return tl_op_result(cvt, 0);
}

/* A NaN of each f16/bf16 half (two per word) or f32 word replaced by 0,
 * every other value kept: max(x, 0) + min(x, 0) with PTX's max/min (a NaN
 * operand yields the other), of which one term is a zero, so the sum is x
 * exactly (+0 for -0); NaN gives 0 + 0. */
static TlValue *nan_to_zero(Lower *L, TlValue *w, TlType *e) {
  bool f32 = lw_is_f(e, 8, 23);
  TlType *t = f32 ? tl_type_f32(L->ctx) : tl_simt_vec_type(L->ctx, 2, e);
  TlValue *x =
      f32 ? tl_arith_bitcast(&L->b, w, t) : tl_simt_bitcast(&L->b, w, t);
  TlValue *z0 = lw_cst(L, lw_u32(L), 0);
  TlValue *z =
      f32 ? tl_arith_bitcast(&L->b, z0, t) : tl_simt_bitcast(&L->b, z0, t);
  TlValue *mx[2] = {x, z};
  TlValue *hi = tl_op_result(tl_build(&L->b, TL_OP_SIMT_MAX, 2, mx, 1, &t), 0);
  TlValue *lo = tl_op_result(tl_build(&L->b, TL_OP_SIMT_MIN, 2, mx, 1, &t), 0);
  TlValue *sum[2] = {hi, lo};
  TlValue *y =
      f32 ? tl_arith_addf(&L->b, hi, lo)
          : tl_op_result(tl_build(&L->b, TL_OP_SIMT_ADD2, 2, sum, 1, &t), 0);
  return f32 ? tl_arith_bitcast(&L->b, y, lw_u32(L))
             : tl_simt_bitcast(&L->b, y, lw_u32(L));
}

/* tl.cast {rounding = "rn"} from f16, bf16 or f32 to u2/u4/u8/i2/i4/i8: the
 * quantising recipe under scale 1 and zero point 0, which computes
 * clamp(rne(x)) (docs/dtypes.md, section 7). The recipe gives a NaN the
 * range's low end; the cast gives it 0, the low end of uN, and for iN the
 * NaNs are first replaced by 0 (nan_to_zero). */
static bool cast_quant(Lower *L, TlOp *op, Tile *src, TlType *rt,
                       const TlCastRecipe *r, int64_t n, const unsigned *perm) {
  TlType *se = tl_tensor_elem(src->type);
  unsigned nin = tl_cast_recipe_words(r->src.bits, (unsigned)n);
  TlValue **in = src->words;
  if (r->dst.kind == TL_DTYPE_INT) {
    in = TL_ARENA_NEWN(&L->arena, TlValue *, nin);
    for (unsigned k = 0; k < nin; k++)
      in[k] = nan_to_zero(L, src->words[k], se);
  }
  uint32_t pw[2];
  TlErr err;
  if (!tl_kv_quant_params(r, (uint32_t)tl_dtype_encode(r->src, 1.0), 0, pw,
                          &err))
    return lw_fail(L, op, err.msg);
  TlValue *params[2] = {lw_cst(L, lw_u32(L), pw[0]),
                        lw_cst(L, lw_u32(L), pw[1])};
  Tile *t = lw_new_tile(L, rt);
  if (!tl_emit_quant_recipe(&L->b, L->b.loc, r, in, (unsigned)n, perm, params,
                            t->words, &err))
    return lw_fail(L, op, err.msg);
  lw_put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/* tl.cast, each element in place (the shape and layout stay): by the
 * first of the ways below that serves the two element types. */
bool lw_lower_cast(Lower *L, TlOp *op) {
  Tile *src = lw_tile_of(L, tl_op_operand(op, 0));
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  TlType *se = tl_tensor_elem(src->type), *de = tl_tensor_elem(rt);
  int64_t n = tl_layout_local_size(tl_reg_layout(rt));
  /* Layouts that order a thread's elements differently: result local i
   * is the source's local perm[i] (the verifier checked that every thread
   * holds the same elements; the order must be the same in every
   * thread). */
  unsigned *perm = NULL;
  if (!tl_layout_equal(tl_reg_layout(src->type), tl_reg_layout(rt))) {
    perm = cast_order(tl_reg_layout(src->type), tl_reg_layout(rt));
    if (!perm)
      return lw_fail(L, op,
                     "a cast whose layouts order the elements differently "
                     "in different threads");
  }
  /* Types of at most 8 bits to f16, bf16 and f32: the dtype library's
   * exhaustively checked register recipes (docs/dtypes.md), over the
   * tile's words as they are; a reordering within the recipe's groups
   * of values selects its outputs in the result's order. */
  TlDType sd, dd;
  TlRounding mode;
  tl_cast_rounding(op, &mode); /* verified */
  const TlCastRecipe *r =
      n > 0 && tl_type_to_dtype(se, &sd) && tl_type_to_dtype(de, &dd)
          ? tl_cast_recipe_find(sd, dd)
          : NULL;
  /* Rounding to nearest even into 2, 4 and 8-bit integers: the
   * quantising recipes, which take the elements in any order within
   * their groups. */
  if (r && r->kind == TL_RECIPE_QUANT && mode == TL_ROUND_RN &&
      (!perm || tl_cast_recipe_perm_ok(r, (unsigned)n, perm))) {
    bool ok = cast_quant(L, op, src, rt, r, n, perm);
    tl_free(perm);
    return ok;
  }
  if (r && tl_cast_recipe_emittable(r, NULL) &&
      (!perm || tl_cast_recipe_perm_ok(r, (unsigned)n, perm))) {
    Tile *t = lw_new_tile(L, rt);
    TlErr err;
    bool ok = tl_emit_cast_recipe_perm(&L->b, L->b.loc, r, src->words,
                                       (unsigned)n, perm, t->words, &err);
    tl_free(perm);
    if (!ok)
      return lw_fail(L, op, err.msg);
    lw_put_tile(L, tl_op_result(op, 0), t);
    return true;
  }
  /* Otherwise the source's elements are moved into the result's order
   * first: whole words of 8 and 16-bit elements by one prmt each (or none)
   * when each takes its bytes from at most two source words, else shifts
   * and masks within the thread's words. */
  if (perm) {
    Tile *p = reorder_bytes(L, src, perm, n);
    if (!p) {
      p = lw_zero_tile(L, src->type);
      for (unsigned i = 0; i < (unsigned)n; i++)
        lw_set_elem(L, p, i, lw_get_elem(L, src, perm[i]));
    }
    tl_free(perm);
    src = p;
  }
  /* To floats of at most 8 bits: the value exactly in f32 (a recipe for
   * sources of at most 8 bits), then one rounding to the format
   * (passes/small_float.h). */
  if (n > 0 && se != de && tl_type_to_dtype(se, &sd) &&
      tl_type_to_dtype(de, &dd) && tl_small_float_dst_ok(dd, NULL))
    return cast_to_small_float(L, op, src, rt, sd, dd, n);
  Tile *t = lw_zero_tile(L, rt);
  /* f32 pairs to f16x2/bf16x2: one cvt.rn per word. */
  if (lw_is_f(se, 8, 23) && (lw_is_f(de, 5, 10) || lw_is_f(de, 8, 7)) &&
      n % 2 == 0) {
    TlType *v2 = tl_simt_vec_type(L->ctx, 2, de);
    for (int64_t w = 0; w < n / 2; w++) {
      TlValue *a =
          tl_arith_bitcast(&L->b, src->words[2 * w], tl_type_f32(L->ctx));
      TlValue *bv =
          tl_arith_bitcast(&L->b, src->words[2 * w + 1], tl_type_f32(L->ctx));
      TlValue *ops[2] = {a, bv};
      TlOp *cvt = tl_build(&L->b, TL_OP_SIMT_CVT_PACK, 2, ops, 1, &v2);
      tl_op_set_attr(cvt, "rounding", lw_str(L, "rn"));
      t->words[w] = tl_simt_bitcast(&L->b, tl_op_result(cvt, 0), lw_u32(L));
    }
    lw_put_tile(L, tl_op_result(op, 0), t);
    return true;
  }
  if (se == de) {
    memcpy(t->words, src->words, sizeof *t->words * t->nwords);
    lw_put_tile(L, tl_op_result(op, 0), t);
    return true;
  }
  bool dst_ok = tl_type_is_int(de) || lw_is_f(de, 8, 23) ||
                lw_is_f(de, 5, 10) || lw_is_f(de, 8, 7);
  dst_ok |= lw_is_f(de, 11, 52);
  if (!dst_ok || tl_type_bitwidth(de) > 64 || tl_type_bitwidth(se) > 64)
    return lw_fail(L, op, "casts from or to this element type");
  /* Small-float sources: their exact f32 values by the recipe, then as
   * f32 (one word per element). */
  if (tl_type_is_float(se) && tl_type_bitwidth(se) <= 8) {
    const TlCastRecipe *r32 = n > 0 && tl_type_to_dtype(se, &sd)
                                  ? tl_cast_recipe_find(sd, tl_dtype_f32())
                                  : NULL;
    TlErr err;
    int64_t dims[TL_LAYOUT_MAX_RANK];
    for (unsigned d = 0; d < tl_tensor_rank(rt); d++)
      dims[d] = tl_tensor_dim(rt, d);
    Tile *wide =
        lw_new_tile(L, tl_reg_type_get(L->ctx, tl_tensor_rank(rt), dims,
                                       tl_type_f32(L->ctx), tl_reg_layout(rt)));
    if (!r32 || !tl_emit_cast_recipe(&L->b, L->b.loc, r32, src->words,
                                     (unsigned)n, wide->words, &err))
      return lw_fail(L, op, "casts from this element type");
    src = wide;
  }
  for (int64_t i = 0; i < n; i++) {
    TlType *ct;
    TlValue *x = lw_decode(L, src, (unsigned)i, &ct);
    if (!x)
      return lw_fail(L, op, "casts from this element type");
    TlValue *y;
    if (tl_type_is_bool(de)) {
      /* Nonzero is true; so is NaN (an unordered compare). */
      TlValue *c =
          tl_type_is_float(ct)
              ? tl_arith_cmpf(&L->b, "une", x,
                              tl_arith_constant(&L->b,
                                                tl_attr_float(L->ctx, ct, 0.0),
                                                L->b.loc))
              : tl_arith_cmpi(&L->b, "ne", x, lw_cst(L, ct, 0));
      lw_encode(L, t, (unsigned)i, tl_arith_exti(&L->b, c, lw_u32(L)));
      continue;
    }
    if (tl_type_is_float(de)) {
      if (tl_type_is_int(ct))
        y = tl_arith_itofp(&L->b, x, de);
      else if (ct == de)
        y = x;
      else if (tl_type_bitwidth(ct) < tl_type_bitwidth(de))
        y = tl_arith_extf(&L->b, x, de);
      else if (tl_type_bitwidth(ct) == tl_type_bitwidth(de)) /* f16 <-> bf16 */
        y = tl_arith_truncf(&L->b, tl_arith_extf(&L->b, x, tl_type_f32(L->ctx)),
                            de);
      else
        y = tl_arith_truncf(&L->b, x, de);
    } else {
      /* To an integer: floats round (toward zero, or to an integral
       * value by the cast's rounding first) and saturate (NaN -> 0);
       * integers saturate to the destination's range. */
      unsigned db = tl_type_bitwidth(de);
      bool ds = tl_type_int_signed(de);
      TlType *wide = db == 64 ? tl_type_int(L->ctx, 64, ds)
                     : ds     ? lw_i32(L)
                              : lw_u32(L);
      if (tl_type_is_float(ct)) {
        x = round_integral(L, x, &ct, mode);
        y = tl_arith_fptoi(&L->b, x, tl_type_int(L->ctx, db, ds));
        y = db < 32 ? tl_arith_exti(&L->b, y, wide) : y;
      } else if (tl_type_int_signed(ct)) {
        /* A signed value is exact in i64: clamp there, then narrow. */
        TlValue *w64 = tl_type_int_width(ct) == 64
                           ? x
                           : tl_arith_exti(&L->b, x, lw_i64(L));
        if (db < 64 || !ds)
          w64 = tl_arith_maxi(
              &L->b, w64,
              lw_cst(L, lw_i64(L), ds ? -(INT64_C(1) << (db - 1)) : 0));
        if (db < 64)
          w64 = tl_arith_mini(&L->b, w64,
                              lw_cst(L, lw_i64(L),
                                     ds ? (INT64_C(1) << (db - 1)) - 1
                                        : (int64_t)((UINT64_C(1) << db) - 1)));
        y = tl_value_type(w64) == wide ? w64
            : db == 64                 ? tl_arith_bitcast(&L->b, w64, wide)
                                       : tl_arith_trunci(&L->b, w64, wide);
      } else {
        /* An unsigned value is exact in u64: only the top can overflow. */
        TlType *u64 = tl_type_int(L->ctx, 64, false);
        TlValue *w64 =
            tl_type_int_width(ct) == 64 ? x : tl_arith_exti(&L->b, x, u64);
        if (db < 64 || ds)
          w64 =
              tl_arith_mini(&L->b, w64,
                            lw_cst(L, u64,
                                   (int64_t)(ds ? (UINT64_C(1) << (db - 1)) - 1
                                                : (UINT64_C(1) << db) - 1)));
        y = tl_value_type(w64) == wide ? w64
            : db == 64                 ? tl_arith_bitcast(&L->b, w64, wide)
                                       : tl_arith_trunci(&L->b, w64, wide);
      }
      lw_encode(L, t, (unsigned)i, y);
      continue;
    }
    lw_encode(L, t, (unsigned)i, y);
  }
  lw_put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/*===--- Arithmetic ------------------------------------------------------===*/

/* fmod(a, b) on f32 values, exactly (C's fmod, which tl.mod on floats
 * is): |a| = ma 2^(ea - 150) and |b| = mb 2^(eb - 150) with integer
 * significands ma, mb < 2^24, so the remainder is ((ma 2^(ea - eb)) mod
 * mb) 2^(eb - 150); 2^(ea - eb) mod mb comes by square-and-multiply over
 * the nine bits of ea - eb < 512, in u64 (products below 2^48). Straight
 * line, no loop. |a| < |b| and an infinite b give a; an infinite or NaN a,
 * a NaN b or a zero b give NaN; the sign is a's. */
static TlValue *fmod32(Lower *L, TlValue *a, TlValue *b) {
  TlType *f32 = tl_type_f32(L->ctx), *u64 = tl_type_int(L->ctx, 64, false),
         *f64 = tl_type_f64(L->ctx), *u = lw_u32(L);
  TlValue *ba = tl_arith_bitcast(&L->b, a, u),
          *bb = tl_arith_bitcast(&L->b, b, u);
  TlValue *mask = lw_cst(L, u, 0x7fffffff);
  TlValue *ua = tl_arith_andi(&L->b, ba, mask),
          *ub = tl_arith_andi(&L->b, bb, mask);
  /* Exponent fields (subnormals as 1) and integer significands. */
  TlValue *ea = tl_arith_shri(&L->b, ua, lw_cst(L, u, 23)),
          *eb = tl_arith_shri(&L->b, ub, lw_cst(L, u, 23));
  TlValue *fa = tl_arith_andi(&L->b, ua, lw_cst(L, u, 0x7fffff)),
          *fb = tl_arith_andi(&L->b, ub, lw_cst(L, u, 0x7fffff));
  TlValue *za = tl_arith_cmpi(&L->b, "eq", ea, lw_cst(L, u, 0)),
          *zb = tl_arith_cmpi(&L->b, "eq", eb, lw_cst(L, u, 0));
  TlValue *ma = tl_arith_select(
      &L->b, za, fa, tl_arith_ori(&L->b, fa, lw_cst(L, u, 0x800000)));
  TlValue *mb = tl_arith_select(
      &L->b, zb, fb, tl_arith_ori(&L->b, fb, lw_cst(L, u, 0x800000)));
  ea = tl_arith_select(&L->b, za, lw_cst(L, u, 1), ea);
  eb = tl_arith_select(&L->b, zb, lw_cst(L, u, 1), eb);
  /* k = ea - eb, meaningful when |a| >= |b| (then ea >= eb); clamp the
   * other case to 0 (its result is a). */
  TlValue *big = tl_arith_cmpi(&L->b, "ge", ua, ub);
  TlValue *k = tl_arith_select(&L->b, big, tl_arith_subi(&L->b, ea, eb),
                               lw_cst(L, u, 0));
  TlValue *m = tl_arith_exti(
      &L->b,
      tl_arith_select(&L->b, tl_arith_cmpi(&L->b, "eq", mb, lw_cst(L, u, 0)),
                      lw_cst(L, u, 1), mb),
      u64);
  TlValue *base = tl_arith_remi(&L->b, lw_cst(L, u64, 2), m);
  TlValue *acc = tl_arith_remi(&L->b, lw_cst(L, u64, 1), m);
  for (int j = 0; j < 9; j++) {
    TlValue *bit = tl_arith_andi(
        &L->b, tl_arith_shri(&L->b, k, lw_cst(L, u, j)), lw_cst(L, u, 1));
    TlValue *times = tl_arith_remi(&L->b, tl_arith_muli(&L->b, acc, base), m);
    acc = tl_arith_select(
        &L->b, tl_arith_cmpi(&L->b, "ne", bit, lw_cst(L, u, 0)), times, acc);
    if (j < 8)
      base = tl_arith_remi(&L->b, tl_arith_muli(&L->b, base, base), m);
  }
  TlValue *rs = tl_arith_remi(
      &L->b, tl_arith_muli(&L->b, tl_arith_exti(&L->b, ma, u64), acc), m);
  /* rs 2^(eb - 150), exact in f64 and then in f32 (a multiple of b's
   * ulp below |b|). */
  TlValue *scale_bits = tl_arith_shli(
      &L->b,
      tl_arith_exti(&L->b, tl_arith_addi(&L->b, eb, lw_cst(L, u, 1023 - 150)),
                    u64),
      lw_cst(L, u64, 52));
  TlValue *mag = tl_arith_mulf(&L->b, tl_arith_itofp(&L->b, rs, f64),
                               tl_arith_bitcast(&L->b, scale_bits, f64));
  TlValue *r = tl_arith_bitcast(&L->b, tl_arith_truncf(&L->b, mag, f32), u);
  r = tl_arith_ori(&L->b, r,
                   tl_arith_andi(&L->b, ba, lw_cst(L, u, 0x80000000u)));
  /* The special cases. */
  TlValue *inf = lw_cst(L, u, 0x7f800000);
  r = tl_arith_select(&L->b, big, r, ba);
  r = tl_arith_select(&L->b, tl_arith_cmpi(&L->b, "eq", ub, inf), ba, r);
  TlValue *nan = tl_arith_ori(&L->b, tl_arith_cmpi(&L->b, "ge", ua, inf),
                              tl_arith_cmpi(&L->b, "gt", ub, inf));
  nan =
      tl_arith_ori(&L->b, nan, tl_arith_cmpi(&L->b, "eq", ub, lw_cst(L, u, 0)));
  r = tl_arith_select(&L->b, nan, lw_cst(L, u, 0x7fc00000), r);
  return tl_arith_bitcast(&L->b, r, f32);
}

/* A float type of at most 8 bits. */
static bool is_small_float(const TlType *t) {
  return tl_type_is_float(t) && tl_type_bitwidth(t) <= 8;
}

/* A tile of small floats as an f32 tile of the same layout, their exact
 * values by the dtype library's recipe; other tiles as they are. NULL
 * when no recipe serves the type. */
static Tile *widen_small(Lower *L, Tile *x) {
  TlType *e = tl_tensor_elem(x->type);
  if (!is_small_float(e))
    return x;
  TlDType sd;
  const TlCastRecipe *r =
      tl_type_to_dtype(e, &sd) ? tl_cast_recipe_find(sd, tl_dtype_f32()) : NULL;
  int64_t dims[TL_LAYOUT_MAX_RANK],
      n = tl_layout_local_size(tl_reg_layout(x->type));
  for (unsigned d = 0; d < tl_tensor_rank(x->type); d++)
    dims[d] = tl_tensor_dim(x->type, d);
  Tile *w = lw_new_tile(L, tl_reg_type_get(L->ctx, tl_tensor_rank(x->type),
                                           dims, tl_type_f32(L->ctx),
                                           tl_reg_layout(x->type)));
  TlErr err;
  if (!r || n == 0 ||
      !tl_emit_cast_recipe(&L->b, L->b.loc, r, x->words, (unsigned)n, w->words,
                           &err))
    return NULL;
  return w;
}

/* The f32 tile f rounded once into t's small-float elements (f32 keeps
 * +, -, * and / of values of at most 8 bits to within a rounding that a
 * second one to the small format cannot disturb: 24 >= 2p + 2). */
static bool narrow_small(Lower *L, Tile *f, Tile *t) {
  TlDType dd;
  int64_t n = tl_layout_local_size(tl_reg_layout(t->type));
  TlValue **xs = TL_ARENA_NEWN(&L->arena, TlValue *, (size_t)n + 1);
  TlValue **codes = TL_ARENA_NEWN(&L->arena, TlValue *, (size_t)n + 1);
  for (int64_t i = 0; i < n; i++)
    xs[i] = tl_arith_bitcast(&L->b, f->words[i], tl_type_f32(L->ctx));
  TlErr err;
  if (!tl_type_to_dtype(tl_tensor_elem(t->type), &dd) ||
      !tl_emit_to_small_float_n(&L->b, L->b.loc, dd, (unsigned)n, xs, codes,
                                &err))
    return false;
  for (int64_t i = 0; i < n; i++)
    lw_set_elem(L, t, (unsigned)i, codes[i]);
  return true;
}

/* tl.add, tl.sub and tl.mul of f16 or bf16 tiles: one simt.add2 / sub2 /
 * mul2 per word, two elements at a time. Each lane rounds once to nearest
 * even, as the per-element op does; the zero high half of an odd count's
 * last word stays a zero (0 + 0, 0 - 0, 0 * 0). */
static bool packed_half(Lower *L, TlOp *op, Tile *x, Tile *y, TlType *rt) {
  TlType *e = tl_tensor_elem(rt);
  TlOpId id = tl_op_id(op);
  if ((e != tl_type_f16(L->ctx) && e != tl_type_bf16(L->ctx)) ||
      (id != TL_OP_TL_ADD && id != TL_OP_TL_SUB && id != TL_OP_TL_MUL))
    return false;
  TlType *v2 = tl_simt_vec_type(L->ctx, 2, e), *u32 = lw_u32(L);
  Tile *t = lw_new_tile(L, rt);
  for (unsigned w = 0; w < t->nwords; w++) {
    TlValue *a = tl_simt_bitcast(&L->b, x->words[w], v2),
            *b = tl_simt_bitcast(&L->b, y->words[w], v2);
    TlValue *r = id == TL_OP_TL_ADD   ? tl_simt_add2(&L->b, a, b)
                 : id == TL_OP_TL_SUB ? tl_simt_sub2(&L->b, a, b)
                                      : tl_simt_mul2(&L->b, a, b);
    t->words[w] = tl_simt_bitcast(&L->b, r, u32);
  }
  lw_put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/* tl.fma: f32 one simt.fma an element; f16 and bf16 one simt.fma2 a word,
 * two elements at a time (an odd count's zero high half stays 0 * 0 + 0). */
bool lw_lower_fma(Lower *L, TlOp *op) {
  TlType *rt = tl_value_type(tl_op_result(op, 0)), *e = tl_tensor_elem(rt);
  Tile *x[3];
  for (unsigned i = 0; i < 3; i++)
    x[i] = lw_tile_of(L, tl_op_operand(op, i));
  Tile *t = lw_new_tile(L, rt);
  bool pair = e != tl_type_f32(L->ctx);
  TlType *v2 = pair ? tl_simt_vec_type(L->ctx, 2, e) : e, *u32 = lw_u32(L);
  for (unsigned w = 0; w < t->nwords; w++) {
    TlValue *v[3];
    for (unsigned i = 0; i < 3; i++)
      v[i] = pair ? tl_simt_bitcast(&L->b, x[i]->words[w], v2)
                  : tl_arith_bitcast(&L->b, x[i]->words[w], e);
    TlValue *r = pair ? tl_simt_fma2(&L->b, v[0], v[1], v[2])
                      : tl_simt_fma(&L->b, v[0], v[1], v[2]);
    t->words[w] = pair ? tl_simt_bitcast(&L->b, r, u32) : tl_arith_bitcast(&L->b, r, u32);
  }
  lw_put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/* The binary elementwise ops: per element in its compute type by the
 * float or integer arith op; tl.mod of f16, bf16 or f32 is C's fmod
 * (fmod32); small floats compute in f32 and round once back. */
bool lw_lower_elementwise(Lower *L, TlOp *op) {
  /* The tl op, its arith op on floats (none for bitwise ops and tl.mod)
   * and on integers. */
  static const struct {
    TlOpId tl, fop, iop;
  } tab[] = {{TL_OP_TL_ADD, TL_OP_ARITH_ADDF, TL_OP_ARITH_ADDI},
             {TL_OP_TL_SUB, TL_OP_ARITH_SUBF, TL_OP_ARITH_SUBI},
             {TL_OP_TL_MUL, TL_OP_ARITH_MULF, TL_OP_ARITH_MULI},
             {TL_OP_TL_DIV, TL_OP_ARITH_DIVF, TL_OP_ARITH_DIVI},
             {TL_OP_TL_MAX, TL_OP_ARITH_MAXF, TL_OP_ARITH_MAXI},
             {TL_OP_TL_MIN, TL_OP_ARITH_MINF, TL_OP_ARITH_MINI},
             {TL_OP_TL_AND, TL_OP_NONE, TL_OP_ARITH_ANDI},
             {TL_OP_TL_OR, TL_OP_NONE, TL_OP_ARITH_ORI},
             {TL_OP_TL_XOR, TL_OP_NONE, TL_OP_ARITH_XORI},
             {TL_OP_TL_MOD, TL_OP_NONE, TL_OP_ARITH_REMI},
             {TL_OP_TL_SHL, TL_OP_NONE, TL_OP_ARITH_SHLI},
             {TL_OP_TL_SHR, TL_OP_NONE, TL_OP_ARITH_SHRI}};
  TlOpId id = tl_op_id(op), fop = TL_OP_NONE, iop = TL_OP_NONE;
  for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
    if (tab[i].tl == id) {
      fop = tab[i].fop;
      iop = tab[i].iop;
    }
  if (iop == TL_OP_NONE)
    return lw_fail(L, op, "this elementwise op");
  Tile *x = lw_tile_of(L, tl_op_operand(op, 0)),
       *y = lw_tile_of(L, tl_op_operand(op, 1));
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  if (packed_half(L, op, x, y, rt))
    return true;
  Tile *t = lw_zero_tile(L, rt), *out = t;
  int64_t count = tl_layout_local_size(tl_reg_layout(rt));
  /* Small floats compute in f32 and round once back. */
  bool small = is_small_float(tl_tensor_elem(rt));
  if (small) {
    x = widen_small(L, x);
    y = widen_small(L, y);
    if (!x || !y)
      return lw_fail(
          L, op, "elementwise arithmetic on this element type (cast it first)");
    out = lw_zero_tile(L, x->type);
  }
  for (int64_t i = 0; i < count; i++) {
    TlType *ct;
    TlValue *a = lw_decode(L, x, (unsigned)i, &ct),
            *b = lw_decode(L, y, (unsigned)i, &ct);
    if (!a)
      return lw_fail(
          L, op, "elementwise arithmetic on this element type (cast it first)");
    bool fl = tl_type_is_float(ct);
    if (fl && id == TL_OP_TL_MOD && tl_type_bitwidth(ct) <= 32) {
      /* In f32 (f16 and bf16 values and their remainders are exact there). */
      TlType *f32 = tl_type_f32(L->ctx);
      TlValue *r = fmod32(L, ct == f32 ? a : tl_arith_extf(&L->b, a, f32),
                          ct == f32 ? b : tl_arith_extf(&L->b, b, f32));
      lw_encode(L, out, (unsigned)i,
                ct == f32 ? r : tl_arith_truncf(&L->b, r, ct));
      continue;
    }
    if (fl && fop == TL_OP_NONE)
      return lw_fail(L, op,
                     id == TL_OP_TL_MOD ? "f64 remainders"
                                        : "bitwise ops on floats");
    TlValue *r = lw_binary(L, fl ? fop : iop, a, b);
    lw_encode(L, out, (unsigned)i, r);
  }
  if (small && !narrow_small(L, out, t))
    return lw_fail(
        L, op, "elementwise arithmetic on this element type (cast it first)");
  lw_put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/* tl.neg, tl.abs, tl.not: per element in its compute type; integer
 * results wrap to the element's width (lw_set_elem keeps its bits). */
bool lw_lower_unary(Lower *L, TlOp *op) {
  TlOpId id = tl_op_id(op);
  Tile *x = lw_tile_of(L, tl_op_operand(op, 0));
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  Tile *t = lw_zero_tile(L, rt);
  int64_t count = tl_layout_local_size(tl_reg_layout(rt));
  for (int64_t i = 0; i < count; i++) {
    TlType *ct;
    if (is_small_float(tl_tensor_elem(rt)) && id != TL_OP_TL_NOT) {
      /* The sign bit flipped or cleared, as for every float. */
      unsigned b = lw_elem_bits(rt);
      TlValue *c = lw_get_elem(L, x, (unsigned)i),
              *sign = lw_cst(L, lw_u32(L), 1u << (b - 1));
      lw_set_elem(
          L, t, (unsigned)i,
          id == TL_OP_TL_NEG
              ? tl_arith_xori(&L->b, c, sign)
              : tl_arith_andi(&L->b, c,
                              lw_cst(L, lw_u32(L), (1u << (b - 1)) - 1)));
      continue;
    }
    TlValue *a = lw_decode(L, x, (unsigned)i, &ct), *r;
    if (!a)
      return lw_fail(
          L, op, "elementwise arithmetic on this element type (cast it first)");
    bool fl = tl_type_is_float(ct);
    if (id == TL_OP_TL_NOT) {
      if (fl)
        return lw_fail(L, op, "bitwise ops on floats");
      r = tl_arith_xori(&L->b, a, lw_cst(L, ct, -1));
    } else if (fl) {
      r = id == TL_OP_TL_NEG ? tl_arith_negf(&L->b, a)
                             : tl_arith_absf(&L->b, a);
    } else {
      TlValue *neg = tl_arith_subi(&L->b, lw_cst(L, ct, 0), a);
      if (id == TL_OP_TL_NEG || !tl_type_int_signed(ct)) {
        r = id == TL_OP_TL_NEG ? neg : a;
      } else {
        TlValue *below = tl_arith_cmpi(&L->b, "lt", a, lw_cst(L, ct, 0));
        r = tl_arith_select(&L->b, below, neg, a);
      }
    }
    lw_encode(L, t, (unsigned)i, r);
  }
  lw_put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/*===--- Math functions --------------------------------------------------===*/

/* The f32 constant v. */
static TlValue *fcst(Lower *L, double v) {
  return tl_arith_constant(&L->b, tl_attr_float(L->ctx, tl_type_f32(L->ctx), v),
                           L->b.loc);
}

/* The special function fn ("ex2.approx", "sqrt.rn", ...) of the f32 x. */
static TlValue *math(Lower *L, const char *fn, TlValue *x) {
  TlType *f32 = tl_type_f32(L->ctx);
  TlOp *op = tl_build(&L->b, TL_OP_SIMT_MATH, 1, &x, 1, &f32);
  tl_op_set_attr(op, "fn", lw_str(L, fn));
  return tl_op_result(op, 0);
}

/* e^x as 2^t (1 + c ln 2) with t = x * log2(e) rounded and c the rest of
 * x * log2(e): the product's rounding error (an fma) plus x times the
 * low part of log2(e); c is 0 once |t| >= 128, where 2^t is 0 or
 * infinite. The error is ex2.approx's, not a multiple of |x| as for
 * ex2(x * log2(e)). */
static TlValue *exp32(Lower *L, TlValue *x) {
  TlBuilder *b = &L->b;
  TlValue *hi = fcst(L, 1.44269502162933349609375); /* log2(e) in f32 */
  TlValue *lo = fcst(L, 1.925963033500011e-08);     /* log2(e) - hi */
  TlValue *t = tl_arith_mulf(b, x, hi);
  TlValue *c =
      tl_simt_fma(b, x, lo, tl_simt_fma(b, x, hi, tl_arith_negf(b, t)));
  TlValue *abs_t = tl_arith_absf(b, t);
  TlValue *small = tl_arith_cmpf(b, "olt", abs_t, fcst(L, 128.0));
  c = tl_arith_select(b, small, c, fcst(L, 0.0));
  TlValue *r = math(L, "ex2.approx", t);
  return tl_simt_fma(b, r,
                     tl_arith_mulf(b, c, fcst(L, 0.693147182464599609375)), r);
}

/* tl.exp, tl.exp2, tl.log2, tl.sqrt, tl.rsqrt on f16, bf16 and f32: in f32
 * by the special-function unit (sqrt correctly rounded), then rounded to
 * the element type. Within the approximations' error of the VM's exactly
 * rounded values (docs/lowering.md). */
bool lw_lower_math(Lower *L, TlOp *op) {
  TlOpId id = tl_op_id(op);
  Tile *x = lw_tile_of(L, tl_op_operand(op, 0));
  TlType *rt = tl_value_type(tl_op_result(op, 0)), *f32 = tl_type_f32(L->ctx);
  TlType *e = tl_tensor_elem(rt);
  if (!lw_is_f(e, 8, 23) && !lw_is_f(e, 5, 10) && !lw_is_f(e, 8, 7))
    return lw_fail(L, op,
                   "math functions on types other than f16, bf16 and f32");
  Tile *t = lw_zero_tile(L, rt);
  int64_t count = tl_layout_local_size(tl_reg_layout(rt));
  for (int64_t i = 0; i < count; i++) {
    TlType *ct;
    TlValue *a = lw_decode(L, x, (unsigned)i, &ct), *r;
    if (ct != f32)
      a = tl_arith_extf(&L->b, a, f32);
    if (id == TL_OP_TL_EXP)
      r = exp32(L, a);
    else
      r = math(L,
               id == TL_OP_TL_EXP2   ? "ex2.approx"
               : id == TL_OP_TL_LOG2 ? "lg2.approx"
               : id == TL_OP_TL_SQRT ? "sqrt.rn"
                                     : "rsqrt.approx",
               a);
    if (ct != f32)
      r = tl_arith_truncf(&L->b, r, ct);
    lw_encode(L, t, (unsigned)i, r);
  }
  lw_put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/*===--- Comparisons and choices -----------------------------------------===*/

/* tl.cmp: arith.cmpi by the compute type's signedness, or arith.cmpf with
 * the ordered predicate (false on NaN) except `ne`, which is unordered
 * (true on NaN); each i1 result becomes one bit of the tile. */
bool lw_lower_cmp(Lower *L, TlOp *op) {
  TlCmpiPredicate pred = tl_cmpi_predicate_of(op);
  const char *ipred = tl_cmpi_predicate_name(pred),
             *fpred = tl_cmpf_predicate_name(tl_cmpi_predicate_on_floats(pred));
  Tile *x = lw_tile_of(L, tl_op_operand(op, 0)),
       *y = lw_tile_of(L, tl_op_operand(op, 1));
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  Tile *t = lw_zero_tile(L, rt);
  TlType *w = lw_u32(L);
  TlValue *one = lw_cst(L, w, 1), *zero = lw_cst(L, w, 0);
  x = widen_small(L, x); /* small floats compare by their exact values */
  y = widen_small(L, y);
  if (!x || !y)
    return lw_fail(L, op, "comparisons of this element type (cast it first)");
  int64_t count = tl_layout_local_size(tl_reg_layout(rt));
  for (int64_t i = 0; i < count; i++) {
    TlType *ct;
    TlValue *a = lw_decode(L, x, (unsigned)i, &ct),
            *b = lw_decode(L, y, (unsigned)i, &ct);
    if (!a)
      return lw_fail(L, op, "comparisons of this element type (cast it first)");
    bool fl = tl_type_is_float(ct);
    TlValue *c = fl ? tl_arith_cmpf(&L->b, fpred, a, b)
                    : tl_arith_cmpi(&L->b, ipred, a, b);
    lw_set_elem(L, t, (unsigned)i, tl_arith_select(&L->b, c, one, zero));
  }
  lw_put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/* tl.where: each element's bits from %a or %b by its condition bit. */
bool lw_lower_where(Lower *L, TlOp *op) {
  Tile *c = lw_tile_of(L, tl_op_operand(op, 0));
  Tile *a = lw_tile_of(L, tl_op_operand(op, 1)),
       *b = lw_tile_of(L, tl_op_operand(op, 2));
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  Tile *t = lw_zero_tile(L, rt);
  TlValue *zero = lw_cst(L, lw_u32(L), 0);
  int64_t count = tl_layout_local_size(tl_reg_layout(rt));
  bool wide = lw_elem_bits(rt) == 64;
  for (int64_t i = 0; i < count; i++) {
    TlValue *bit =
        tl_arith_cmpi(&L->b, "ne", lw_get_elem(L, c, (unsigned)i), zero);
    if (wide) {
      for (int64_t k = 2 * i; k < 2 * i + 2; k++)
        t->words[k] = tl_arith_select(&L->b, bit, a->words[k], b->words[k]);
      continue;
    }
    TlValue *x = lw_get_elem(L, a, (unsigned)i);
    TlValue *y = lw_get_elem(L, b, (unsigned)i);
    lw_set_elem(L, t, (unsigned)i, tl_arith_select(&L->b, bit, x, y));
  }
  lw_put_tile(L, tl_op_result(op, 0), t);
  return true;
}
