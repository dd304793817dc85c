/* The ops whose elements may move between threads: tl.broadcast and
 * tl.reduce, by butterfly shuffles within a warp and through a shared
 * scratch, placed after the planned tiles, across warps. */
#include "lower.h"
#include "tl/predicates.h"

/*===--- Broadcasts ------------------------------------------------------===*/

/* The shared scratch (after the planned tiles) for an op that needs
 * `bytes` of it, after a barrier that keeps earlier users of the scratch
 * ahead of this op's writes. */
TlValue *lw_scratch(Lower *L, int64_t bytes) {
  if (L->scratch_bytes < bytes)
    L->scratch_bytes = bytes;
  TlType *pt = tl_simt_ptr_type(L->ctx, TL_SIMT_SHARED);
  TlValue *p = tl_build1(&L->b, TL_OP_SIMT_SMEM_BASE, 0, NULL, pt);
  p = lw_ptr_add(L, p, lw_cst(L, lw_i64(L), L->scratch_base));
  lw_barrier(L);
  return p;
}

/* Word `slot` (an i64) of the scratch. */
static TlValue *scratch_word(Lower *L, TlValue *scratch, TlValue *slot) {
  return lw_ptr_add(L, scratch,
                    tl_arith_muli(&L->b, slot, lw_cst(L, lw_i64(L), 4)));
}

/* The operand's local element that every thread reads for the result's
 * local element i of a tile broadcast, or -1 when some thread that runs
 * it does not hold it (the broadcast would move elements between
 * threads). The threads that run it are those of the smaller layout: a
 * tile over fewer threads than the block lives in a warp branch taken by
 * its warps (the block VM checks it), as the verifier's check assumes. */
static int64_t broadcast_source(const TlLayout *src, const TlLayout *dst,
                                int64_t i) {
  int64_t j = -1, ts = tl_layout_num_threads(src),
          td = tl_layout_num_threads(dst);
  int64_t holders[1024];
  for (int64_t t = 0; t < (ts < td ? ts : td); t++) {
    int64_t idx[TL_LAYOUT_MAX_RANK], local, count;
    if (!tl_layout_map(dst, t, i, idx, NULL))
      return -1;
    for (int d = 0; d < src->rank; d++)
      if (src->shape[d] == 1)
        idx[d] = 0;
    if (!tl_layout_locate(src, idx, &local, holders, 1024, &count, NULL) ||
        (j >= 0 && local != j))
      return -1;
    j = local;
    bool held = false;
    for (int64_t k = 0; k < count && k < 1024 && !held; k++)
      held = holders[k] == t;
    if (!held)
      return -1;
  }
  return j;
}

/* A broadcast whose elements move between threads: the operand goes to
 * the scratch as one word per element in row-major order (one writer per
 * element), and after a barrier each thread reads its result elements
 * (index 0 along the operand's size-1 dimensions). */
static void broadcast_through_scratch(Lower *L, Tile *x, Tile *t) {
  const TlLayout *S = tl_reg_layout(x->type), *D = tl_reg_layout(t->type);
  int64_t stride[TL_LAYOUT_MAX_RANK], n = 1;
  for (int d = S->rank - 1; d >= 0; d--) {
    stride[d] = n;
    n *= S->shape[d];
  }
  TlValue *scratch = lw_scratch(L, n * 4), *idx[TL_LAYOUT_MAX_RANK];
  TlValue *guard = lw_writer_guard(L, S);
  TlBuilder outside = guard ? lw_open_guard(L, guard) : L->b;
  for (int64_t i = 0; i < tl_layout_local_size(S); i++) {
    lw_index_of(L, S, i, idx);
    TlValue *lin = lw_cst(L, lw_i64(L), 0);
    for (int d = 0; d < S->rank; d++)
      lin = tl_arith_addi(
          &L->b, lin,
          tl_arith_muli(&L->b, idx[d], lw_cst(L, lw_i64(L), stride[d])));
    TlValue *e = lw_get_elem(L, x, (unsigned)i);
    lw_store(L, e, scratch_word(L, scratch, lin), 0);
  }
  if (guard)
    lw_close_guard(L, outside);
  lw_barrier(L);
  for (int64_t i = 0; i < tl_layout_local_size(D); i++) {
    lw_index_of(L, D, i, idx);
    TlValue *lin = lw_cst(L, lw_i64(L), 0);
    for (int d = 0; d < S->rank; d++)
      if (S->shape[d] > 1)
        lin = tl_arith_addi(
            &L->b, lin,
            tl_arith_muli(&L->b, idx[d], lw_cst(L, lw_i64(L), stride[d])));
    TlValue *p = scratch_word(L, scratch, lin);
    lw_set_elem(L, t, (unsigned)i, lw_load(L, p, lw_u32(L), 0));
  }
}

/* tl.broadcast of a scalar (its bits in every element) or of a tile: from
 * the same thread's local elements where every thread holds what it needs,
 * else through the shared scratch. */
bool lw_lower_broadcast(Lower *L, TlOp *op) {
  TlValue *a = tl_op_operand(op, 0);
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  Tile *t = lw_zero_tile(L, rt);
  unsigned b = lw_elem_bits(rt);
  int64_t count = tl_layout_local_size(tl_reg_layout(rt));
  if (tl_tensor_kind(tl_value_type(a)) != TL_TENSOR_REG) {
    if (b == 64) {
      TlType *u64 = tl_type_int(L->ctx, 64, false);
      TlValue *bits = lw_scalar(L, a);
      if (tl_value_type(bits) != u64)
        bits = tl_arith_bitcast(&L->b, bits, u64);
      for (int64_t i = 0; i < count; i++)
        lw_set_elem64(L, t, (unsigned)i, bits);
      lw_put_tile(L, tl_op_result(op, 0), t);
      return true;
    }
    /* The scalar's bits, zero-extended (lw_set_elem keeps the low b): integers
     * of any width (i1 included) as they are, floats reinterpreted. */
    TlValue *bits = lw_scalar(L, a);
    TlType *st = tl_value_type(bits);
    if (tl_type_is_float(st))
      bits = tl_arith_bitcast(&L->b, bits, tl_type_int(L->ctx, b, false));
    else if (tl_type_int_signed(st) && !tl_type_is_bool(st))
      bits = tl_arith_bitcast(&L->b, bits, tl_type_int(L->ctx, b, false));
    if (b < 32)
      bits = tl_arith_exti(&L->b, bits, lw_u32(L));
    else if (tl_value_type(bits) != lw_u32(L))
      bits = tl_arith_bitcast(&L->b, bits, lw_u32(L));
    for (int64_t i = 0; i < count; i++)
      lw_set_elem(L, t, (unsigned)i, bits);
    lw_put_tile(L, tl_op_result(op, 0), t);
    return true;
  }
  if (!lw_broadcast_tile(L, op, lw_tile_of(L, a), t))
    return false;
  lw_put_tile(L, tl_op_result(op, 0), t);
  return true;
}

bool lw_broadcast_tile(Lower *L, TlOp *op, Tile *x, Tile *t) {
  int64_t count = tl_layout_local_size(tl_reg_layout(t->type));
  int64_t *src = tl_xmalloc(sizeof *src * (size_t)(count + 1));
  bool local = true;
  for (int64_t i = 0; i < count && local; i++)
    local = (src[i] = broadcast_source(tl_reg_layout(x->type),
                                       tl_reg_layout(t->type), i)) >= 0;
  if (local)
    for (int64_t i = 0; i < count; i++)
      lw_copy_elem(L, t, (unsigned)i, x, (unsigned)src[i]);
  else if (L->warp_branch)
    /* The scratch needs a barrier of the block (the verifier refuses). */
    lw_fail(L, op,
            "a broadcast in a warp branch that moves elements between "
            "threads");
  else if (lw_elem_bits(t->type) == 64)
    lw_fail(L, op,
            "broadcasts of 64-bit elements that move them between threads");
  else
    broadcast_through_scratch(L, x, t);
  tl_free(src);
  return !L->failed;
}

/*===--- Reductions ------------------------------------------------------===*/

/* A value of a compute type as 32 bits for a shuffle, and back. */
static TlValue *to_word(Lower *L, TlValue *v, TlType *ct) {
  if (tl_type_is_float(ct) && tl_type_bitwidth(ct) == 16)
    return tl_arith_exti(
        &L->b, tl_arith_bitcast(&L->b, v, tl_type_int(L->ctx, 16, false)),
        lw_u32(L));
  return ct == lw_u32(L) ? v : tl_arith_bitcast(&L->b, v, lw_u32(L));
}

static TlValue *from_word(Lower *L, TlValue *w, TlType *ct) {
  if (tl_type_is_float(ct) && tl_type_bitwidth(ct) == 16)
    return tl_arith_bitcast(
        &L->b, tl_arith_trunci(&L->b, w, tl_type_int(L->ctx, 16, false)), ct);
  return ct == lw_u32(L) ? w : tl_arith_bitcast(&L->b, w, ct);
}

/* Word r * T + thread (an i64) of the reduction scratch. */
static TlValue *scratch_slot(Lower *L, TlValue *scratch, int64_t r,
                             TlValue *thread) {
  return scratch_word(
      L, scratch,
      tl_arith_addi(&L->b, thread, lw_cst(L, lw_i64(L), r * L->threads)));
}

/* tl.reduce: each thread combines its local elements of a result element
 * in index order, then the lanes holding the other parts exchange partial
 * results by butterfly shuffles (xor over the thread-index bits of the
 * dimension's spatial modes), so every lane ends with the whole result, as
 * the reduced layout's replication requires. Parts held by other warps
 * meet in a shared scratch placed after the planned tiles. Integer and
 * max/min results equal the VM's; a float sum adds in another order than
 * its index order. */
bool lw_lower_reduce(Lower *L, TlOp *op) {
  TlReduceKind kind = tl_reduce_kind_of(op);
  int d = (int)tl_attr_int_value(tl_op_attr(op, "dim"));
  Tile *x = lw_tile_of(L, tl_op_operand(op, 0));
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  const TlLayout *A = tl_reg_layout(x->type), *R = tl_reg_layout(rt);
  bool sum = kind == TL_REDUCE_SUM, max = kind == TL_REDUCE_MAX;
  TlOpId fop = sum   ? TL_OP_ARITH_ADDF
               : max ? TL_OP_ARITH_MAXF
                     : TL_OP_ARITH_MINF;
  TlOpId iop = sum   ? TL_OP_ARITH_ADDI
               : max ? TL_OP_ARITH_MAXI
                     : TL_OP_ARITH_MINI;
  /* The thread-index bits of d's spatial modes: butterfly shuffle masks
   * within a warp (masks), and bits that select warps (cross). */
  int64_t masks[32], cross[32], below = 1, crossmask = 0;
  int nm = 0, nc = 0;
  for (int k = A->num_spatial - 1; k >= 0; k--) {
    int m = A->spatial_modes[k];
    int64_t size = m >= 0 ? A->mode_shape[m] : -m;
    if (m >= 0 && A->mode_dim[m] == d && size > 1) {
      if ((size & (size - 1)) || (below & (below - 1)))
        return lw_fail(
            L, op, "reductions over thread groups that are not powers of two");
      for (int64_t q = below; q < below * size; q *= 2) {
        if (q < 32) {
          masks[nm++] = q;
        } else {
          cross[nc++] = q;
          crossmask |= q;
        }
      }
    }
    below *= size;
  }
  if ((nm || nc) && L->threads % 32)
    return lw_fail(
        L, op, "reductions across threads in blocks that are not whole warps");
  if ((nm || nc) && lw_elem_bits(rt) == 64)
    return lw_fail(L, op, "reductions of 64-bit elements across threads");
  int64_t nres = tl_layout_local_size(R);
  TlValue *scratch = NULL, *mine = NULL, *tbase = NULL;
  if (nc) {
    /* Each thread's partial results go to word r * T + t of the scratch;
     * after a barrier every thread combines the partials of the threads
     * that differ from it in the cross bits only. */
    scratch = lw_scratch(L, nres * L->threads * 4);
    mine = tl_arith_exti(&L->b, L->tid, lw_i64(L));
    tbase = tl_arith_andi(&L->b, mine, lw_cst(L, lw_i64(L), ~crossmask));
  }
  TlType **ctypes =
      nc ? TL_ARENA_NEWN(&L->arena, TlType *, (size_t)nres) : NULL;
  Tile *t = lw_zero_tile(L, rt);
  int64_t na = tl_layout_local_size(A), nr = tl_layout_local_size(R);
  int64_t *order = tl_xmalloc(sizeof *order * (size_t)(na + 1));
  int64_t *pos = tl_xmalloc(sizeof *pos * (size_t)(na + 1));
  bool ok = true;
  for (int64_t r = 0; r < nr && ok; r++) {
    int64_t cr[TL_LAYOUT_MAX_RANK], c[TL_LAYOUT_MAX_RANK];
    lw_const_index(R, r, cr);
    /* The operand's local elements of this result, by their index in d. */
    int64_t n = 0;
    for (int64_t i = 0; i < na; i++) {
      lw_const_index(A, i, c);
      bool same = true;
      for (int e = 0; e < A->rank && same; e++)
        same = e == d || c[e] == cr[e];
      if (!same)
        continue;
      int64_t k = n++;
      while (k > 0 && pos[k - 1] > c[d]) {
        pos[k] = pos[k - 1];
        order[k] = order[k - 1];
        k--;
      }
      pos[k] = c[d];
      order[k] = i;
    }
    TlType *ct = NULL;
    TlValue *acc = NULL;
    for (int64_t k = 0; k < n && ok; k++) {
      TlValue *v = lw_decode(L, x, (unsigned)order[k], &ct);
      if (!v) {
        ok = lw_fail(L, op, "reductions of this element type (cast it first)");
        break;
      }
      acc = acc ? lw_binary(L, tl_type_is_float(ct) ? fop : iop, acc, v) : v;
    }
    if (ok && !acc)
      ok = lw_fail(L, op,
                   "a reduced layout whose elements the lowering cannot match");
    if (!ok)
      break;
    for (int k = 0; k < nm; k++) {
      TlType *w = lw_u32(L);
      TlValue *ops[2] = {to_word(L, acc, ct), lw_cst(L, lw_i32(L), masks[k])};
      TlOp *shfl = tl_build(&L->b, TL_OP_SIMT_SHFL, 2, ops, 1, &w);
      tl_op_set_attr(shfl, "mode", lw_str(L, "bfly"));
      acc = lw_binary(L, tl_type_is_float(ct) ? fop : iop, acc,
                      from_word(L, tl_op_result(shfl, 0), ct));
    }
    if (nc) {
      TlValue *word = to_word(L, acc, ct);
      lw_store(L, word, scratch_slot(L, scratch, r, mine), 0);
      ctypes[r] = ct;
      continue;
    }
    lw_encode(L, t, (unsigned)r, acc);
  }
  tl_free(order);
  tl_free(pos);
  if (!ok)
    return false;
  if (nc) {
    lw_barrier(L);
    for (int64_t r = 0; r < nres; r++) {
      TlValue *acc = NULL;
      for (int64_t c = 0; c < (INT64_C(1) << nc); c++) {
        int64_t other = 0;
        for (int j = 0; j < nc; j++)
          if (c >> j & 1)
            other |= cross[j];
        TlValue *who =
            other ? tl_arith_addi(&L->b, tbase, lw_cst(L, lw_i64(L), other))
                  : tbase;
        TlValue *p = scratch_slot(L, scratch, r, who);
        TlValue *v = from_word(L, lw_load(L, p, lw_u32(L), 0), ctypes[r]);
        acc =
            acc ? lw_binary(L, tl_type_is_float(ctypes[r]) ? fop : iop, acc, v)
                : v;
      }
      lw_encode(L, t, (unsigned)r, acc);
    }
  }
  lw_put_tile(L, tl_op_result(op, 0), t);
  return true;
}
