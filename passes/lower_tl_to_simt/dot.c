/* tl.dot: mma.sync when the operand layouts tile the fragments of an mma
 * form, else a SIMT dot where every thread holds the A and B elements of
 * its own C elements. */
#include "lower.h"

#include <stdio.h>

/* Finds the quotient q with layout = q . atom; false if it is not one. */
static bool tiling(const TlLayout *l, const char *atom, TlLayout *q) {
  TlLayout a;
  return tl_layout_atom(&a, atom, NULL) && tl_layout_match_atom(l, &a, q, NULL);
}

/* The atom block (row, col) that quotient local index ql holds in warp w. */
static void block_of(const TlLayout *q, int64_t w, int64_t ql, int64_t *rc) {
  tl_layout_map(q, w, ql, rc, NULL);
}

/* The PTX name of an mma operand element type (include/tl/forms.def's
 * a_type, b_type), NULL if no form takes it: u1 and bool are b1 (products
 * are ANDs, sums popcounts). */
static const char *mma_elem(const TlType *t) {
  if (lw_is_f(t, 5, 10))
    return "f16";
  if (lw_is_f(t, 8, 7))
    return "bf16";
  if (tl_type_is_int(t) && tl_type_int_width(t) == 8)
    return tl_type_int_signed(t) ? "s8" : "u8";
  if (tl_type_bitwidth(t) == 1)
    return "b1";
  return NULL;
}

/* The PTX name of an accumulator type, NULL if no form has it. */
static const char *mma_acc(const TlType *t) {
  if (lw_is_f(t, 8, 23))
    return "f32";
  if (lw_is_f(t, 5, 10))
    return "f16";
  if (tl_type_is_int(t) && tl_type_int_width(t) == 32)
    return "s32";
  return NULL;
}

/* Whether the dot's layouts are tilings of form f's fragments whose warps
 * hold matching blocks: for every C block a thread holds and every k, the
 * A and B blocks at the same local positions in every warp (pair_a and
 * pair_b, nqc * K entries each, get those positions). */
static bool dot_pairs(const TlMmaForm *f, Tile *a, Tile *b, Tile *c, TlLayout *qc,
                      int64_t *K, int64_t **pair_a, int64_t **pair_b) {
  TlLayout qa, qb;
  if (!tiling(tl_reg_layout(a->type), f->a_atom, &qa) ||
      !tiling(tl_reg_layout(b->type), f->b_atom, &qb) ||
      !tiling(tl_reg_layout(c->type), f->c_atom, qc))
    return false;
  int64_t warps = tl_layout_num_threads(qc);
  if (tl_layout_num_threads(&qa) != warps ||
      tl_layout_num_threads(&qb) != warps)
    return false;
  unsigned rank = tl_tensor_rank(a->type), bd = rank - 2; /* batch dims first */
  *K = tl_tensor_dim(a->type, rank - 1) / f->k;
  int64_t nqc = tl_layout_local_size(qc), nqa = tl_layout_local_size(&qa),
          nqb = tl_layout_local_size(&qb);
  int64_t *pa = tl_xcalloc((size_t)(nqc * *K + 1), sizeof(int64_t));
  int64_t *pb = tl_xcalloc((size_t)(nqc * *K + 1), sizeof(int64_t));
  bool ok = true;
  for (int64_t w = 0; w < warps && ok; w++)
    for (int64_t qlc = 0; qlc < nqc && ok; qlc++) {
      int64_t mn[TL_LAYOUT_MAX_RANK];
      block_of(qc, w, qlc, mn);
      for (int64_t k = 0; k < *K && ok; k++) {
        int64_t found_a = -1, found_b = -1, rc[TL_LAYOUT_MAX_RANK];
        for (int64_t i = 0; i < nqa; i++) {
          block_of(&qa, w, i, rc);
          bool same = rc[bd] == mn[bd] && rc[bd + 1] == k;
          for (unsigned d = 0; d < bd; d++)
            same &= rc[d] == mn[d];
          if (same)
            found_a = i;
        }
        for (int64_t i = 0; i < nqb; i++) {
          block_of(&qb, w, i, rc);
          bool same = rc[bd] == k && rc[bd + 1] == mn[bd + 1];
          for (unsigned d = 0; d < bd; d++)
            same &= rc[d] == mn[d];
          if (same)
            found_b = i;
        }
        if (found_a < 0 || found_b < 0 ||
            (w > 0 &&
             (pa[qlc * *K + k] != found_a || pb[qlc * *K + k] != found_b)))
          ok = false;
        pa[qlc * *K + k] = found_a;
        pb[qlc * *K + k] = found_b;
      }
    }
  if (!ok) {
    tl_free(pa);
    tl_free(pb);
    return false;
  }
  *pair_a = pa;
  *pair_b = pb;
  return true;
}

/* The local index at which thread t (below l's count) holds element idx
 * of layout l, or -1 when it does not hold it. holders is room for 1024
 * thread indices. */
static int64_t same_local(const TlLayout *l, int64_t t, const int64_t *idx,
                          int64_t *holders) {
  int64_t local, count;
  if (!tl_layout_locate(l, idx, &local, holders, 1024, &count, NULL))
    return -1;
  for (int64_t k = 0; k < count && k < 1024; k++)
    if (holders[k] == t)
      return local;
  return -1;
}

/* A SIMT dot: every thread computes its own C elements from A and B
 * elements it holds itself, at the same local positions in every thread
 * (checked at compile time), as one fma.rn.f32 per k in k order (the
 * products of f16, bf16 and f32 values are exact in f32, so this rounds as
 * tl.dot does) or, for i32 accumulators, wrapping multiplies and adds.
 * False, emitting nothing, when the layouts or types do not allow it. */
static bool simt_dot(Lower *L, Tile *a, Tile *b, Tile *c, Tile **out) {
  TlType *ea = tl_tensor_elem(a->type), *eb = tl_tensor_elem(b->type),
         *ec = tl_tensor_elem(c->type);
  bool fl = lw_is_f(ec, 8, 23);
  bool fin = (lw_is_f(ea, 5, 10) || lw_is_f(ea, 8, 7) || lw_is_f(ea, 8, 23)) &&
             (lw_is_f(eb, 5, 10) || lw_is_f(eb, 8, 7) || lw_is_f(eb, 8, 23));
  bool iin = tl_type_is_int(ea) && tl_type_is_int(eb) &&
             tl_type_bitwidth(ea) <= 32 && tl_type_bitwidth(eb) <= 32;
  bool iacc = tl_type_is_int(ec) && tl_type_int_width(ec) == 32;
  if (!(fl && fin) && !(iacc && iin))
    return false;
  const TlLayout *la = tl_reg_layout(a->type), *lb = tl_reg_layout(b->type),
                 *lc = tl_reg_layout(c->type);
  unsigned rank = tl_tensor_rank(a->type), bd = rank - 2; /* batch dims first */
  int64_t K = tl_tensor_dim(a->type, rank - 1), nc = tl_layout_local_size(lc);
  /* The threads that run it: those of the smallest layout (a tile over
   * fewer threads than the block lives in a warp branch of its warps). */
  int64_t nt = tl_layout_num_threads(la);
  if (tl_layout_num_threads(lb) < nt)
    nt = tl_layout_num_threads(lb);
  if (tl_layout_num_threads(lc) < nt)
    nt = tl_layout_num_threads(lc);
  if (nt * nc * K > (INT64_C(1) << 22))
    return false;
  int64_t *pa = tl_xmalloc(sizeof *pa * (size_t)(nc * K)),
          *pb = tl_xmalloc(sizeof *pb * (size_t)(nc * K));
  int64_t *holders = tl_xmalloc(sizeof *holders * 1024);
  bool ok = true;
  for (int64_t t = 0; t < nt && ok; t++)
    for (int64_t i = 0; i < nc && ok; i++) {
      int64_t ij[TL_LAYOUT_MAX_RANK];
      ok = tl_layout_map(lc, t, i, ij, NULL);
      for (int64_t k = 0; k < K && ok; k++) {
        int64_t ik[TL_LAYOUT_MAX_RANK], kj[TL_LAYOUT_MAX_RANK];
        memcpy(ik, ij, sizeof ik);
        memcpy(kj, ij, sizeof kj);
        ik[bd + 1] = k;
        kj[bd] = k;
        int64_t xa = same_local(la, t, ik, holders),
                xb = same_local(lb, t, kj, holders);
        ok = xa >= 0 && xb >= 0 &&
             (t == 0 || (pa[i * K + k] == xa && pb[i * K + k] == xb));
        pa[i * K + k] = xa;
        pb[i * K + k] = xb;
      }
    }
  tl_free(holders);
  if (ok) {
    Tile *d = lw_new_tile(L, c->type);
    memcpy(d->words, c->words, sizeof *d->words * d->nwords);
    TlType *f32 = tl_type_f32(L->ctx), *ct;
    for (int64_t i = 0; i < nc; i++) {
      TlValue *acc = lw_decode(L, d, (unsigned)i, &ct);
      for (int64_t k = 0; k < K; k++) {
        TlType *ta, *tb;
        TlValue *x = lw_decode(L, a, (unsigned)pa[i * K + k], &ta);
        TlValue *y = lw_decode(L, b, (unsigned)pb[i * K + k], &tb);
        if (fl) {
          if (ta != f32)
            x = tl_arith_extf(&L->b, x, f32);
          if (tb != f32)
            y = tl_arith_extf(&L->b, y, f32);
          acc = tl_simt_fma(&L->b, x, y, acc);
        } else {
          if (ta != ct)
            x = tl_arith_bitcast(&L->b, x, ct);
          if (tb != ct)
            y = tl_arith_bitcast(&L->b, y, ct);
          acc = tl_arith_addi(&L->b, acc, tl_arith_muli(&L->b, x, y));
        }
      }
      lw_encode(L, d, (unsigned)i, acc);
    }
    *out = d;
  }
  tl_free(pa);
  tl_free(pb);
  return ok;
}

/* tl.dot as mma.sync: the first form whose fragments the operand layouts
 * tile, one instruction per (m, n, k) block, k ascending; else a SIMT
 * dot. */
bool lw_lower_dot(Lower *L, TlOp *op) {
  for (unsigned i = 0; i < 2; i++)
    if (tl_tensor_kind(tl_value_type(tl_op_operand(op, i))) == TL_TENSOR_SHARED)
      return lw_lower_dot_wgmma(L, op);
  Tile *a = lw_tile_of(L, tl_op_operand(op, 0)),
       *b = lw_tile_of(L, tl_op_operand(op, 1)),
       *c = lw_tile_of(L, tl_op_operand(op, 2));
  TlType *ea = tl_tensor_elem(a->type), *eb = tl_tensor_elem(b->type),
         *ec = tl_tensor_elem(c->type);
  const char *ta = mma_elem(ea), *tb = mma_elem(eb), *tc = mma_acc(ec);
  const TlMmaForm *f = NULL, *missing = NULL;
  TlLayout qc;
  int64_t K = 0, *pair_a = NULL, *pair_b = NULL;
  bool typed = false;
  /* The forms of these types in table order (the larger k first); 8-bit
   * integers may mix signedness, other types must be equal. */
  for (unsigned i = 0; ta && tb && tc && i < tl_mma_form_count() && !f; i++) {
    const TlMmaForm *g = tl_mma_form_at(i);
    if (strcmp(g->a_type, ta) || strcmp(g->b_type, tb) ||
        strcmp(g->acc_type, tc) || (ea != eb && tl_type_bitwidth(ea) != 8))
      continue;
    typed = true;
    if (!tl_arch_has(L->arch, g->feature) || L->arch->sm < g->min_sm) {
      missing = missing ? missing : g;
      continue;
    }
    if (dot_pairs(g, a, b, c, &qc, &K, &pair_a, &pair_b))
      f = g;
  }
  if (!f) {
    Tile *d;
    if (simt_dot(L, a, b, c, &d)) {
      lw_put_tile(L, tl_op_result(op, 0), d);
      return true;
    }
    if (missing && typed) {
      TlStr need = {0};
      tl_str_printf(&need, "mma.%s with %s x %s -> %s needs %s", missing->shape,
                    ta, tb, tc, tl_feature_name(missing->feature));
      bool r = lw_fail_feature(L, op, tl_str_cstr(&need), missing->feature,
                               NULL);
      tl_str_free(&need);
      return r;
    }
    if (!typed)
      return lw_fail(
          L, op,
          "dot of these element types with these layouts (mma takes f16 or "
          "bf16 with f32 accumulation, f16 with f16, i8/u8 or u1 with i32; "
          "the SIMT dot needs f32 or i32 accumulators and every thread "
          "holding the A and B elements of its C elements)");
    return lw_fail(
        L, op,
        "dot whose layouts are neither tilings of one mma form's fragments "
        "with matching blocks in every warp nor a SIMT dot's (every thread "
        "holding the A and B elements of its C elements)");
  }
  int64_t nqc = tl_layout_local_size(&qc);
  Tile *d = lw_new_tile(L, c->type);
  memcpy(d->words, c->words, sizeof *d->words * d->nwords);
  bool fa = !strcmp(f->cd_reg, "f32");
  TlType *rt = fa ? tl_type_f32(L->ctx) : lw_i32(L);
  TlType *va = tl_simt_vec_type(L->ctx, f->a_regs, lw_i32(L)),
         *vb = tl_simt_vec_type(L->ctx, f->b_regs, lw_i32(L));
  TlType *vc = tl_simt_vec_type(L->ctx, f->cd_regs, rt);
  for (int64_t qlc = 0; qlc < nqc; qlc++) {
    for (int64_t k = 0; k < K; k++) {
      TlValue *av[4], *bv[4], *cv[4];
      for (unsigned j = 0; j < f->a_regs; j++)
        av[j] = tl_arith_bitcast(
            &L->b, a->words[pair_a[qlc * K + k] * f->a_regs + j], lw_i32(L));
      for (unsigned j = 0; j < f->b_regs; j++)
        bv[j] = tl_arith_bitcast(
            &L->b, b->words[pair_b[qlc * K + k] * f->b_regs + j], lw_i32(L));
      for (unsigned j = 0; j < f->cd_regs; j++)
        cv[j] = tl_arith_bitcast(&L->b, d->words[qlc * f->cd_regs + j], rt);
      TlValue *ops[3];
      ops[0] = tl_build1(&L->b, TL_OP_SIMT_BUILD, f->a_regs, av, va);
      ops[1] = tl_build1(&L->b, TL_OP_SIMT_BUILD, f->b_regs, bv, vb);
      ops[2] = tl_build1(&L->b, TL_OP_SIMT_BUILD, f->cd_regs, cv, vc);
      TlOp *mma = tl_build(&L->b, TL_OP_SIMT_MMA, 3, ops, 1, &vc);
      tl_op_set_attr(mma, "shape", lw_str(L, f->shape));
      tl_op_set_attr(mma, "a_type", lw_str(L, f->a_type));
      tl_op_set_attr(mma, "b_type", lw_str(L, f->b_type));
      tl_op_set_attr(mma, "acc_type", lw_str(L, f->acc_type));
      if (*f->b1_op)
        tl_op_set_attr(mma, "b1_op", lw_str(L, f->b1_op));
      for (unsigned j = 0; j < f->cd_regs; j++) {
        TlValue *x = lw_extract(L, tl_op_result(mma, 0), rt, j);
        d->words[qlc * f->cd_regs + j] = tl_arith_bitcast(&L->b, x, lw_u32(L));
      }
    }
  }
  tl_free(pair_a);
  tl_free(pair_b);
  lw_put_tile(L, tl_op_result(op, 0), d);
  return true;
}
