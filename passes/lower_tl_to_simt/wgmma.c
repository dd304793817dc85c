/* tl.dot with operands in shared memory: warpgroup mma (wgmma, sm_90a).
 *
 * The accumulator's layout must be made of m16n8 accumulator fragments
 * (the mma.sync atom) whose warps come in warpgroups: warp 4 g + j holds,
 * at every local position, the block 16 rows below warp 4 g's, so the
 * four warps hold the 64 rows of one wgmma's D and the n8 blocks a warp
 * holds at consecutive columns are its N (up to 256 columns an
 * instruction). Warpgroup g's blocks are warpgroup 0's moved by g times
 * one offset, so its operand addresses are warpgroup 0's plus g times a
 * constant. b is a shared tile; a a shared tile or a register tile made of
 * the mma.sync A fragments of the same rows (wgmma's A from registers).
 * The shared operands' k slices must be canonical wgmma layouts
 * (tl_shared_layout_wgmma), whose descriptors the lowering builds once
 * per operand and advances by constants.
 *
 * The dot is issued as a proxy fence (the tiles were written by the
 * generic proxy), wgmma.fence, the instructions k slice by k slice, one
 * commit group and a wait for it: the result is complete when the op
 * ends, as tl.dot's semantics say. */
#include "lower.h"

#include <stdio.h>

/*===--- Emission --------------------------------------------------------===*/

static void emit0(Lower *L, TlOpId id) { tl_build(&L->b, id, 0, NULL, 0, NULL); }

static TlValue *emit_desc(Lower *L, TlValue *ptr, const TlWgmmaDesc *d) {
  TlType *i64 = lw_i64(L);
  TlOp *op = tl_build(&L->b, TL_OP_SIMT_WGMMA_DESC, 1, &ptr, 1, &i64);
  char sw[8];
  snprintf(sw, sizeof sw, "%dB", d->swizzle);
  tl_op_set_attr(op, "swizzle", lw_str(L, d->swizzle ? sw : "none"));
  tl_op_set_attr(op, "lbo", lw_int(L, d->lbo));
  tl_op_set_attr(op, "sbo", lw_int(L, d->sbo));
  return tl_op_result(op, 0);
}

/*===--- Analysis --------------------------------------------------------===*/

/* The types of a wgmma form: inputs, accumulator and k per instruction. */
typedef struct WForm {
  const char *in, *acc;
  int64_t k;
  const TlMmaForm *mma; /* the mma.sync form of the same fragments */
} WForm;

static bool wform(Lower *L, TlType *ea, TlType *eb, TlType *ec, WForm *w) {
  const char *in = NULL;
  if (lw_is_f(ea, 5, 10) && lw_is_f(eb, 5, 10) && lw_is_f(ec, 8, 23))
    in = "f16";
  else if (lw_is_f(ea, 8, 7) && lw_is_f(eb, 8, 7) && lw_is_f(ec, 8, 23))
    in = "bf16";
  else if (tl_type_is_int(ea) && tl_type_int_width(ea) == 8 &&
           tl_type_is_int(eb) && tl_type_int_width(eb) == 8 &&
           tl_type_is_int(ec) && tl_type_int_width(ec) == 32 &&
           tl_type_int_signed(ea) && tl_type_int_signed(eb))
    in = "s8";
  if (!in)
    return false;
  w->in = in;
  w->acc = in[0] == 's' ? "s32" : "f32";
  w->k = in[0] == 's' ? 32 : 16;
  w->mma = tl_mma_form_lookup(in[0] == 's' ? "m16n8k32" : "m16n8k16", in, in,
                              w->acc);
  (void)L;
  return w->mma != NULL;
}

/* One instruction's accumulators: mma C blocks (warpgroup 0's rows mb ..
 * mb + 3 of 16, columns nb .. nb + n - 1 of 8) at the local positions
 * q[0 .. n). */
typedef struct Group {
  int64_t mb, nb, n;
  int64_t *q;
} Group;

/*===--- The lowering ----------------------------------------------------===*/

/* The operand's descriptor fields for the slice of warpgroup 0 at
 * (mn0, k0), after a located diagnostic when it is not canonical. */
static bool slice_desc(Lower *L, TlOp *op, const char *name, Smem *s,
                       int mn_dim, int64_t mn0, int64_t mns, int64_t k0,
                       int64_t ks, bool mn_ok, TlWgmmaDesc *d) {
  TlErr err = {{0}};
  if (tl_shared_layout_wgmma(&s->layout, tl_type_bitwidth(s->elem), mn_dim,
                             mn0, mns, k0, ks, mn_ok, d, &err))
    return true;
  char msg[512];
  snprintf(msg, sizeof msg, "%s is no wgmma operand: %s", name, err.msg);
  return lw_fail(L, op, msg);
}

bool lw_lower_dot_wgmma(Lower *L, TlOp *op) {
  TlValue *va = tl_op_operand(op, 0), *vb = tl_op_operand(op, 1);
  TlType *ta = tl_value_type(va), *tb = tl_value_type(vb);
  bool a_shared = tl_tensor_kind(ta) == TL_TENSOR_SHARED;
  if (tl_tensor_kind(tb) != TL_TENSOR_SHARED)
    return lw_fail(L, op,
                   "a dot whose a is a shared tile needs b in shared memory "
                   "too (warpgroup mma reads b from shared memory)");
  if (!tl_arch_has(L->arch, TL_FEATURE_WGMMA))
    return lw_fail_feature(L, op,
                           "a dot of shared tiles runs as warpgroup mma (wgmma)",
                           TL_FEATURE_WGMMA,
                           "load the tiles with tl.load_shared for mma.sync");
  Tile *c = lw_tile_of(L, tl_op_operand(op, 2));
  TlType *ea = tl_tensor_elem(ta), *eb = tl_tensor_elem(tb),
         *ec = tl_tensor_elem(c->type);
  WForm f;
  if (!wform(L, ea, eb, ec, &f))
    return lw_fail(L, op,
                   "warpgroup mma takes f16 or bf16 with f32 accumulation, "
                   "or s8 with i32");
  TlLayout qc, ca;
  if (!tl_layout_atom(&ca, f.mma->c_atom, NULL) ||
      !tl_layout_match_atom(tl_reg_layout(c->type), &ca, &qc, NULL))
    return lw_fail(L, op,
                   "the accumulator's layout is not made of m16n8 mma "
                   "accumulator fragments (local(2, 1).spatial(8, 4)"
                   ".local(1, 2) blocks)");
  /* At the block level the accumulator spans every warp; in a warp
   * branch it may span the first warpgroups only (a tile over the first
   * warps), which must take the branch as wholes: the thread-level VM
   * checks that every wgmma runs in all four warps of its warpgroup. */
  int64_t nw = tl_layout_num_threads(&qc), nq = tl_layout_local_size(&qc);
  if (nw % 4 || (!L->warp_branch && nw * 32 != (int64_t)L->threads))
    return lw_fail(L, op,
                   L->warp_branch
                       ? "the accumulator must spread over whole warpgroups "
                         "of four warps"
                       : "the accumulator must spread over every warp of the "
                         "block in warpgroups of four");
  int64_t K = tl_tensor_dim(ta, 1), nk = K / f.k;
  if (K % f.k)
    return lw_fail(L, op, "warpgroup mma needs k a multiple of 16 (32 for s8)");
  /* The blocks: blk[(w * nq + q) * 2 + {0, 1}] = (row / 16, column / 8). */
  int64_t *blk = tl_xmalloc(sizeof *blk * (size_t)(nw * nq * 2));
  for (int64_t w = 0; w < nw; w++)
    for (int64_t q = 0; q < nq; q++)
      tl_layout_map(&qc, w, q, blk + (w * nq + q) * 2, NULL);
#define BLK(w, q, i) blk[((w) * nq + (q)) * 2 + (i)]
  bool ok = true;
  int64_t dm = 0, dn = 0;
  if (nw > 4) {
    dm = BLK(4, 0, 0) - BLK(0, 0, 0);
    dn = BLK(4, 0, 1) - BLK(0, 0, 1);
  }
  for (int64_t w = 0; w < nw && ok; w++)
    for (int64_t q = 0; q < nq && ok; q++)
      ok = BLK(w, q, 0) == BLK(0, q, 0) + (w / 4) * dm + w % 4 &&
           BLK(w, q, 1) == BLK(0, q, 1) + (w / 4) * dn;
  /* Warpgroup 0's instructions: its blocks by (row, column). */
  int64_t *order = tl_xmalloc(sizeof *order * (size_t)(nq * 3));
  for (int64_t q = 0; q < nq; q++) {
    order[q * 3] = BLK(0, q, 0);
    order[q * 3 + 1] = BLK(0, q, 1);
    order[q * 3 + 2] = q;
  }
  for (int64_t i = 1; i < nq; i++) /* insertion sort by (row, column) */
    for (int64_t j = i; j > 0; j--) {
      int64_t *x = order + (j - 1) * 3, *y = order + j * 3;
      if (x[0] < y[0] || (x[0] == y[0] && x[1] <= y[1]))
        break;
      for (int t = 0; t < 3; t++) {
        int64_t s = x[t];
        x[t] = y[t];
        y[t] = s;
      }
    }
  TL_VEC(Group) groups = {0};
  int64_t nmax = 256 / 8;
  for (int64_t i = 0; i < nq && ok;) {
    Group g = {order[i * 3], order[i * 3 + 1], 0, NULL};
    g.q = tl_xmalloc(sizeof *g.q * (size_t)nmax);
    while (i < nq && g.n < nmax && order[i * 3] == g.mb &&
           order[i * 3 + 1] == g.nb + g.n)
      g.q[g.n++] = order[i++ * 3 + 2];
    /* 8-bit forms past N = 32 go in steps of 16 columns. */
    if (f.k == 32 && g.n > 4 && g.n % 2) {
      g.n--;
      i--;
    }
    tl_vec_push(&groups, g);
  }
#undef BLK
  tl_free(order);
  tl_free(blk);
  if (!ok) {
    for (size_t i = 0; i < groups.len; i++)
      tl_free(groups.data[i].q);
    tl_vec_free(&groups);
    return lw_fail(L, op,
                   "the accumulator's warps are not in warpgroups: warp "
                   "4 g + j must hold the blocks 16 j rows below warp 4 g's, "
                   "and warpgroup g warpgroup 0's moved by g times one "
                   "offset");
  }
  /* The operands: b's k slices and (shared) a's, for warpgroups 0 and 1
   * (the step between warpgroups must be one constant). */
  Smem *sb = lw_smem_of(L, vb), *sa = a_shared ? lw_smem_of(L, va) : NULL;
  Tile *ra = a_shared ? NULL : lw_tile_of(L, va);
  unsigned ebytes = tl_type_bitwidth(eb) / 8;
  bool mn_ok = f.in[0] != 's';
  int64_t ngroups = (int64_t)groups.len;
  TlWgmmaDesc *da = tl_xcalloc((size_t)(ngroups * nk + 1), sizeof *da),
              *db = tl_xcalloc((size_t)(ngroups * nk + 1), sizeof *db);
  int64_t stride_a = 0, stride_b = 0;
  int64_t *apos = NULL;
  for (int64_t gi = 0; gi < ngroups && ok; gi++) {
    Group *g = &groups.data[gi];
    for (int64_t kk = 0; kk < nk && ok; kk++) {
      TlWgmmaDesc *a = &da[gi * nk + kk], *b = &db[gi * nk + kk];
      ok = slice_desc(L, op, "b", sb, 1, g->nb * 8, g->n * 8, kk * f.k, f.k,
                      mn_ok, b) &&
           (!sa || slice_desc(L, op, "a", sa, 0, g->mb * 16, 64, kk * f.k,
                              f.k, mn_ok, a));
      if (ok && nw > 4) {
        TlWgmmaDesc a1, b1;
        ok = slice_desc(L, op, "b", sb, 1, (g->nb + dn) * 8, g->n * 8,
                        kk * f.k, f.k, mn_ok, &b1) &&
             (!sa || slice_desc(L, op, "a", sa, 0, (g->mb + dm) * 16, 64,
                                kk * f.k, f.k, mn_ok, &a1));
        if (ok && gi == 0 && kk == 0) {
          stride_b = b1.start - b->start;
          stride_a = sa ? a1.start - a->start : 0;
        }
        ok = ok && b1.start - b->start == stride_b &&
             (!sa || a1.start - a->start == stride_a);
        if (!ok && !L->failed)
          lw_fail(L, op,
                  "the warpgroups' operand slices are not one constant "
                  "apart in shared memory");
      }
      /* One descriptor per operand: every slice with the first's fields. */
      ok = ok && b->swizzle == db[0].swizzle && b->lbo == db[0].lbo &&
           b->sbo == db[0].sbo && b->mn_major == db[0].mn_major &&
           (!sa || (a->swizzle == da[0].swizzle && a->lbo == da[0].lbo &&
                    a->sbo == da[0].sbo && a->mn_major == da[0].mn_major));
      if (!ok && !L->failed)
        lw_fail(L, op,
                "the operands' k slices have different wgmma layouts");
    }
  }
  /* a in registers: the A fragment of rows mb .. of 16 and k slice kk at
   * one local position in every warp. */
  TlLayout qa;
  if (ok && ra) {
    TlLayout aa;
    ok = tl_layout_atom(&aa, f.mma->a_atom, NULL) &&
         tl_layout_match_atom(tl_reg_layout(ra->type), &aa, &qa, NULL) &&
         tl_layout_num_threads(&qa) == nw;
    apos = tl_xcalloc((size_t)(ngroups * nk + 1), sizeof *apos);
    int64_t na = ok ? tl_layout_local_size(&qa) : 0;
    for (int64_t gi = 0; gi < ngroups && ok; gi++)
      for (int64_t kk = 0; kk < nk && ok; kk++) {
        int64_t found = -1;
        for (int64_t w = 0; w < nw && ok; w++) {
          int64_t want = groups.data[gi].mb + (w / 4) * dm + w % 4, at = -1;
          for (int64_t i = 0; i < na && at < 0; i++) {
            int64_t rc[2];
            tl_layout_map(&qa, w, i, rc, NULL);
            if (rc[0] == want && rc[1] == kk)
              at = i;
          }
          ok = at >= 0 && (found < 0 || at == found);
          found = at;
        }
        apos[gi * nk + kk] = found;
      }
    if (!ok)
      lw_fail(L, op,
              "a in registers must be made of m16k16 mma A fragments (m16k32 "
              "for s8) of the accumulator's rows, at one local position in "
              "every warp");
  }
  if (ok) {
    TlType *rt = f.acc[0] == 'f' ? tl_type_f32(L->ctx) : lw_i32(L);
    TlType *vc = tl_simt_vec_type(L->ctx, 4, rt);
    TlType *vai = tl_simt_vec_type(L->ctx, 4, lw_i32(L));
    Tile *d = lw_new_tile(L, c->type);
    /* Warpgroup g's operands: warpgroup 0's plus g times the stride. */
    TlValue *g64 = NULL;
    if (nw > 4) {
      TlType *i32 = lw_i32(L);
      TlValue *wid =
          tl_op_result(tl_build(&L->b, TL_OP_SIMT_WARP_ID, 0, NULL, 1, &i32), 0);
      g64 = lw_to_i64(L, tl_arith_divi(&L->b, wid, lw_cst(L, i32, 4)));
    }
    TlValue *pb = sb->base, *pa = sa ? sa->base : NULL;
    if (g64 && stride_b)
      pb = lw_ptr_add(L, pb, tl_arith_muli(&L->b, g64,
                                           lw_cst(L, lw_i64(L), stride_b * ebytes)));
    if (g64 && pa && stride_a)
      pa = lw_ptr_add(L, pa, tl_arith_muli(&L->b, g64,
                                           lw_cst(L, lw_i64(L), stride_a * ebytes)));
    /* The descriptors at the layouts' offset 0, advanced by the slices'
     * starts (in 16-byte units, the address field's). */
    TlWgmmaDesc b0 = db[0], a0 = da[0];
    b0.start = a0.start = 0;
    TlValue *descb = emit_desc(L, pb, &b0);
    TlValue *desca = pa ? emit_desc(L, pa, &a0) : NULL;
    /* Every operand register is made before wgmma.fence: the descriptors
     * of each slice, a's fragments and the accumulator tiles, which the
     * chain then carries from one instruction to the next. */
    TlValue **ao = tl_xmalloc(sizeof *ao * (size_t)(ngroups * nk));
    TlValue **bo = tl_xmalloc(sizeof *bo * (size_t)(ngroups * nk));
    for (int64_t x = 0; x < ngroups * nk; x++) {
      bo[x] = tl_arith_addi(&L->b, descb,
                            lw_cst(L, lw_i64(L), db[x].start * ebytes >> 4));
      if (desca) {
        ao[x] = tl_arith_addi(&L->b, desca,
                              lw_cst(L, lw_i64(L), da[x].start * ebytes >> 4));
      } else {
        TlValue *av[4];
        for (unsigned j = 0; j < 4; j++)
          av[j] = tl_arith_bitcast(&L->b, ra->words[apos[x] * 4 + j], lw_i32(L));
        ao[x] = tl_build1(&L->b, TL_OP_SIMT_BUILD, 4, av, vai);
      }
    }
    TlValue **acc = tl_xmalloc(sizeof *acc * (size_t)(nq + 1));
    for (int64_t q = 0; q < nq; q++) {
      TlValue *cv[4];
      for (unsigned j = 0; j < 4; j++)
        cv[j] = tl_arith_bitcast(&L->b, c->words[q * 4 + j], rt);
      acc[q] = tl_build1(&L->b, TL_OP_SIMT_BUILD, 4, cv, vc);
    }
    if ((desca && lw_tile_mixed(L, va)) || lw_tile_mixed(L, vb))
      emit0(L, TL_OP_SIMT_FENCE_PROXY_ASYNC);
    emit0(L, TL_OP_SIMT_WGMMA_FENCE);
    char shape[32];
    for (int64_t kk = 0; kk < nk; kk++)
      for (int64_t gi = 0; gi < ngroups; gi++) {
        Group *g = &groups.data[gi];
        TlValue **ops = tl_xmalloc(sizeof *ops * (size_t)(2 + g->n));
        TlType **res = tl_xmalloc(sizeof *res * (size_t)g->n);
        ops[0] = ao[gi * nk + kk];
        ops[1] = bo[gi * nk + kk];
        for (int64_t i = 0; i < g->n; i++) {
          ops[2 + i] = acc[g->q[i]];
          res[i] = vc;
        }
        TlOp *w = tl_build(&L->b, TL_OP_SIMT_WGMMA, (unsigned)(2 + g->n), ops,
                           (unsigned)g->n, res);
        snprintf(shape, sizeof shape, "m64n%lldk%lld", (long long)(g->n * 8),
                 (long long)f.k);
        tl_op_set_attr(w, "shape", lw_str(L, shape));
        tl_op_set_attr(w, "a_type", lw_str(L, f.in));
        tl_op_set_attr(w, "b_type", lw_str(L, f.in));
        tl_op_set_attr(w, "acc_type", lw_str(L, f.acc));
        if (desca && da[0].mn_major)
          tl_op_set_attr(w, "a_major", lw_str(L, "mn"));
        if (db[0].mn_major)
          tl_op_set_attr(w, "b_major", lw_str(L, "mn"));
        for (int64_t i = 0; i < g->n; i++)
          acc[g->q[i]] = tl_op_result(w, (unsigned)i);
        tl_free(ops);
        tl_free(res);
      }
    emit0(L, TL_OP_SIMT_WGMMA_COMMIT);
    /* tl.dot is complete when it ends; tl.dot_async at a tl.dot_wait. */
    if (tl_op_id(op) == TL_OP_TL_DOT) {
      TlOp *wait = tl_build(&L->b, TL_OP_SIMT_WGMMA_WAIT, 0, NULL, 0, NULL);
      tl_op_set_attr(wait, "n", lw_int(L, 0));
    }
    for (int64_t q = 0; q < nq; q++)
      for (unsigned j = 0; j < 4; j++)
        d->words[q * 4 + j] = tl_arith_bitcast(
            &L->b, lw_extract(L, acc[q], rt, j), lw_u32(L));
    tl_free(ao);
    tl_free(bo);
    tl_free(acc);
    lw_put_tile(L, tl_op_result(op, 0), d);
  }
  for (size_t i = 0; i < groups.len; i++)
    tl_free(groups.data[i].q);
  tl_vec_free(&groups);
  tl_free(da);
  tl_free(db);
  tl_free(apos);
  return ok;
}
