/* lower-tl-to-simt: rings (tl.alloc_ring, tl.ring_acquire, tl.ring_commit,
 * tl.ring_wait, tl.ring_release) and the TMA copies that fill a ring's
 * slot (docs/lowering.md, "Rings").
 *
 * A ring of S slots and C consumer warps is 2 S mbarriers in shared
 * memory, after the planned tiles: full[s] (count 1: the producer's
 * commit, plus the bytes of the slot's copies) and then empty[s] (count
 * 32 C: every thread of each consumer warp releases). Step k uses slot
 * s = k mod S in its phase k / S: the consumers wait for full[s] with
 * parity (k / S) & 1, the producer for empty[s] with the other parity, so
 * its first S acquires pass at once (a fresh barrier's phase of parity 1
 * counts as completed). The ops act for each warp that runs them: the
 * producer's copy and commit in the warp's lane 0, the waits and the
 * releases in every thread. */
#include "lower.h"

static TlValue *ring_base(Lower *L, TlValue *ring, TlOp *op) {
  TlValue *p = lw_scalar(L, ring);
  if (!p)
    lw_fail(L, op, "a ring not made by tl.alloc_ring in this kernel");
  return p;
}

/* full[k mod S] (empty: empty[k mod S]) and, where parity is not NULL,
 * the parity of step k's phase. */
static TlValue *slot_barrier(Lower *L, TlValue *base, TlType *rt, TlValue *k,
                             bool empty, TlValue **parity) {
  unsigned S = tl_ring_stages(rt);
  TlType *i32 = lw_i32(L);
  k = lw_to_i32(L, k);
  TlValue *s = tl_arith_remi(&L->b, k, lw_cst(L, i32, S));
  if (parity)
    *parity = tl_arith_andi(&L->b, tl_arith_divi(&L->b, k, lw_cst(L, i32, S)),
                            lw_cst(L, i32, 1));
  TlValue *off = tl_arith_muli(&L->b, lw_to_i64(L, s), lw_cst(L, lw_i64(L), 8));
  if (empty)
    off = tl_arith_addi(&L->b, off, lw_cst(L, lw_i64(L), 8 * (int64_t)S));
  return lw_ptr_add(L, base, off);
}

static TlValue *is_lane0(Lower *L) {
  return tl_arith_cmpi(
      &L->b, "eq", tl_arith_andi(&L->b, L->tid, lw_cst(L, lw_i32(L), 31)),
      lw_cst(L, lw_i32(L), 0));
}

static void find_rings(TlOp *op, void *user) {
  Lower *L = user;
  if (tl_op_id(op) != TL_OP_TL_ALLOC_RING)
    return;
  RingPlace r = {op, L->ring_end};
  tl_vec_push(&L->rings, r);
  L->ring_end += 16 * (int64_t)tl_ring_stages(tl_value_type(tl_op_result(op, 0)));
}

bool lw_rings_begin(Lower *L, TlOp *kernel) {
  L->ring_end = (L->scratch_base + 7) / 8 * 8;
  tl_op_walk(kernel, find_rings, L, false);
  if (!L->rings.len)
    return true;
  if (!tl_arch_has(L->arch, TL_FEATURE_TMA))
    return lw_fail_feature(L, L->rings.data[0].op,
                           "a ring's barriers are mbarriers that TMA copies "
                           "complete",
                           TL_FEATURE_TMA, NULL);
  L->scratch_base = (L->ring_end + 15) / 16 * 16;
  return true;
}

bool lw_lower_alloc_ring(Lower *L, TlOp *op) {
  int64_t off = -1;
  for (size_t i = 0; i < L->rings.len; i++)
    if (L->rings.data[i].op == op)
      off = L->rings.data[i].off;
  tl_assert(off >= 0);
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  unsigned S = tl_ring_stages(rt), C = tl_ring_consumers(rt);
  TlType *pt = tl_simt_ptr_type(L->ctx, TL_SIMT_SHARED);
  TlValue *base = lw_ptr_add(L, tl_build1(&L->b, TL_OP_SIMT_SMEM_BASE, 0, NULL, pt),
                             lw_cst(L, lw_i64(L), off));
  lw_put_scalar(L, tl_op_result(op, 0), base);
  /* Run again (in a loop), no thread may still poll the barriers it sets
   * up anew. */
  lw_barrier(L);
  TlBuilder outside = lw_open_guard(
      L, tl_arith_cmpi(&L->b, "eq", L->tid, lw_cst(L, lw_i32(L), 0)));
  for (unsigned i = 0; i < 2 * S; i++) {
    TlValue *ops[2] = {lw_ptr_add(L, base, lw_cst(L, lw_i64(L), 8 * (int64_t)i)),
                       lw_cst(L, lw_i32(L), i < S ? 1 : 32 * (int64_t)C)};
    tl_build(&L->b, TL_OP_SIMT_MBARRIER_INIT, 2, ops, 0, NULL);
  }
  tl_build(&L->b, TL_OP_SIMT_FENCE_MBARRIER_INIT, 0, NULL, 0, NULL);
  lw_close_guard(L, outside);
  lw_barrier(L);
  return true;
}

bool lw_lower_ring_op(Lower *L, TlOp *op) {
  TlValue *ring = tl_op_operand(op, 0);
  TlValue *base = ring_base(L, ring, op);
  TlValue *k = lw_scalar(L, tl_op_operand(op, 1));
  if (!base || !k)
    return false;
  TlType *rt = tl_value_type(ring);
  TlOpId id = tl_op_id(op);
  TlValue *parity = NULL;
  bool waits = id == TL_OP_TL_RING_ACQUIRE || id == TL_OP_TL_RING_WAIT;
  TlValue *bar = slot_barrier(L, base, rt, k,
                              id == TL_OP_TL_RING_ACQUIRE ||
                                  id == TL_OP_TL_RING_RELEASE,
                              waits ? &parity : NULL);
  switch (id) {
  case TL_OP_TL_RING_ACQUIRE:
    /* The release of step k - S completes the phase before this one. */
    lw_mbarrier_poll(L, bar, tl_arith_xori(&L->b, parity,
                                           lw_cst(L, lw_i32(L), 1)));
    return true;
  case TL_OP_TL_RING_WAIT:
    lw_mbarrier_poll(L, bar, parity);
    return true;
  case TL_OP_TL_RING_COMMIT: {
    TlBuilder outside = lw_open_guard(L, is_lane0(L));
    tl_build(&L->b, TL_OP_SIMT_MBARRIER_ARRIVE, 1, &bar, 0, NULL);
    lw_close_guard(L, outside);
    return true;
  }
  default: /* TL_OP_TL_RING_RELEASE */
    /* The thread's generic reads of the slot before the producer's TMA
     * writes to it (where the kernel's tiles cross the proxies). */
    if (L->proxy_fences)
      tl_build(&L->b, TL_OP_SIMT_FENCE_PROXY_ASYNC, 0, NULL, 0, NULL);
    tl_build(&L->b, TL_OP_SIMT_MBARRIER_ARRIVE, 1, &bar, 0, NULL);
    return true;
  }
}

bool lw_lower_copy_ring(Lower *L, TlOp *op, const TmaCopy *c) {
  TlValue *ring = tl_copy_async_ring(op);
  unsigned n = tl_op_num_operands(op);
  TlValue *base = ring_base(L, ring, op);
  TlValue *k = lw_scalar(L, tl_op_operand(op, n - 1));
  if (!base || !k)
    return false;
  TlValue *bar = slot_barrier(L, base, tl_value_type(ring), k, false, NULL);
  TlBuilder outside = lw_open_guard(L, is_lane0(L));
  lw_issue_tma(L, c, bar);
  lw_close_guard(L, outside);
  return true;
}
