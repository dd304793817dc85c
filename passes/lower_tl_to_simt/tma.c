/* lower-tl-to-simt: tl.copy_async through a tensor map (TMA), and the
 * commit groups and waits of a kernel that has such copies
 * (docs/lowering.md, "TMA copies and the mbarrier ring").
 *
 * Thread 0 issues every TMA copy (simt.tma_load). Each commit group owns
 * one mbarrier of a ring of R (tl_kernel_tma_ring: at least 8, and one
 * more than the largest N of the kernel's tl.copy_async_wait N) in shared
 * memory, used round the ring: group g (counting the kernel's commits
 * from 0) completes phase g / R of mbarrier g mod R. The barriers are
 * initialised once at kernel start (thread 0: arrival count 1;
 * fence.mbarrier_init; a block barrier). Per copy, thread 0 adds the
 * box's bytes to the group's expected transactions before it issues the
 * load; at the commit it arrives once, so the phase completes when every
 * byte of the group has landed (at once for a group without TMA copies).
 * Each thread keeps in shared memory the number of commits so far (c) and
 * of groups it has waited for (w); tl.copy_async_wait N, after the
 * cp.async.wait_group N that covers the groups' cp.async copies, polls
 * mbarrier.try_wait.parity on the barrier of each group g in [w, c - N)
 * with parity (g / R) & 1 (each group's bytes complete only its own
 * barrier). Reusing barrier g mod R for group g + R is safe when every
 * thread has waited for group g before group g + R's phase can complete:
 * the block VM requires group g to be complete and the block synchronized
 * since before a TMA copy joins group g + R. */
#include "lower.h"

/* Thread t's counters, two u32 words of shared memory: word 0 the
 * commits so far, word 1 the groups it has waited for. */
static TlValue *counter_ptr(Lower *L, int word) {
  TlType *pt = tl_simt_ptr_type(L->ctx, TL_SIMT_SHARED);
  TlValue *base = tl_build1(&L->b, TL_OP_SIMT_SMEM_BASE, 0, NULL, pt);
  TlValue *off = tl_arith_addi(
      &L->b, lw_cst(L, lw_i64(L), L->tma_counts + 4 * word),
      tl_arith_muli(&L->b, tl_arith_exti(&L->b, L->tid, lw_i64(L)),
                    lw_cst(L, lw_i64(L), 8)));
  return lw_ptr_add(L, base, off);
}

static TlValue *load_counter(Lower *L, int word) {
  return lw_load(L, counter_ptr(L, word), lw_i32(L), 4);
}

/* mbarrier g mod R of the ring (g an i32 >= 0). */
static TlValue *barrier_of(Lower *L, TlValue *g) {
  TlType *pt = tl_simt_ptr_type(L->ctx, TL_SIMT_SHARED);
  TlValue *slot = tl_arith_remi(&L->b, g, lw_cst(L, lw_i32(L), L->tma_ring));
  TlValue *off = tl_arith_addi(
      &L->b, lw_cst(L, lw_i64(L), L->tma_bars),
      tl_arith_muli(&L->b, tl_arith_exti(&L->b, slot, lw_i64(L)),
                    lw_cst(L, lw_i64(L), 8)));
  return lw_ptr_add(L, tl_build1(&L->b, TL_OP_SIMT_SMEM_BASE, 0, NULL, pt),
                    off);
}

/*===--- Which proxy reaches each shared tile ----------------------------===*/

enum { BY_GENERIC = 1, BY_ASYNC = 2 };

typedef struct Proxies {
  TL_VEC(TlOp *) allocs;
  TL_VEC(unsigned) by;
  bool unknown; /* an access to a tile of no tl.alloc_shared */
} Proxies;

/* The tl.alloc_shared behind a shared tile (through its views), or NULL. */
static TlOp *alloc_of(TlValue *v) {
  for (;;) {
    TlOp *d = tl_value_def(v);
    if (!d)
      return NULL;
    switch (tl_op_id(d)) {
    case TL_OP_TL_ALLOC_SHARED:
      return d;
    case TL_OP_TL_SLICE:
    case TL_OP_TL_RESHAPE:
    case TL_OP_TL_PERMUTE:
    case TL_OP_TL_VIEW:
      v = tl_op_operand(d, 0);
      break;
    default:
      return NULL;
    }
  }
}

static void mark(Proxies *p, TlValue *v, unsigned by) {
  TlOp *a = alloc_of(v);
  if (!a) {
    p->unknown = true;
    return;
  }
  for (size_t i = 0; i < p->allocs.len; i++)
    if (p->allocs.data[i] == a) {
      p->by.data[i] |= by;
      return;
    }
  tl_vec_push(&p->allocs, a);
  tl_vec_push(&p->by, by);
}

static void classify(TlOp *op, void *user) {
  Proxies *p = user;
  TlOpId id = tl_op_id(op);
  switch (id) {
  case TL_OP_TL_ALLOC_SHARED:
  case TL_OP_TL_FREE_SHARED:
  case TL_OP_TL_SLICE:
  case TL_OP_TL_RESHAPE:
  case TL_OP_TL_PERMUTE:
  case TL_OP_TL_VIEW:
    return;
  default:
    break;
  }
  for (unsigned i = 0; i < tl_op_num_operands(op); i++) {
    TlValue *v = tl_op_operand(op, i);
    if (tl_type_is_scalar(tl_value_type(v)) ||
        tl_tensor_kind(tl_value_type(v)) != TL_TENSOR_SHARED)
      continue;
    bool async =
        ((id == TL_OP_TL_DOT || id == TL_OP_TL_DOT_ASYNC) && i < 2) ||
        (id == TL_OP_TL_COPY_ASYNC && i == 0 &&
         tl_type_is_tensormap(tl_value_type(tl_op_operand(op, 1))));
    mark(p, v, async ? BY_ASYNC : BY_GENERIC);
  }
}

void lw_plan_proxy_fences(Lower *L, TlOp *kernel) {
  Proxies p = {0};
  tl_op_walk(kernel, classify, &p, false);
  bool any_async = false, any_mixed = false, all = p.unknown;
  for (size_t i = 0; i < p.allocs.len; i++) {
    any_async = any_async || (p.by.data[i] & BY_ASYNC);
    if (p.by.data[i] == (BY_GENERIC | BY_ASYNC)) {
      any_mixed = true;
      tl_vec_push(&L->mixed_tiles, p.allocs.data[i]);
    }
  }
  /* Planned tiles that share bytes: their accesses may cross proxies. */
  for (size_t i = 0; i < p.allocs.len && any_async && !all; i++)
    all = tl_shared_reuses(p.allocs.data[i]);
  tl_vec_free(&p.allocs);
  tl_vec_free(&p.by);
  L->proxy_fences = (any_mixed || all) && (any_async || p.unknown);
  L->all_mixed = all && L->proxy_fences;
}

bool lw_tile_mixed(Lower *L, TlValue *tile) {
  if (L->all_mixed)
    return true;
  TlOp *a = alloc_of(tile);
  if (!a)
    return L->proxy_fences;
  for (size_t i = 0; i < L->mixed_tiles.len; i++)
    if (L->mixed_tiles.data[i] == a)
      return true;
  return false;
}

/* The first copy through a tensor map (*user, a TlOp *, set once). */
static void find_tma(TlOp *op, void *user) {
  TlOp **first = user;
  if (!*first && tl_op_id(op) == TL_OP_TL_COPY_ASYNC &&
      tl_type_is_tensormap(tl_value_type(tl_op_operand(op, 1))))
    *first = op;
}

static TlValue *is_thread0(Lower *L) {
  return tl_arith_cmpi(&L->b, "eq", L->tid, lw_cst(L, lw_i32(L), 0));
}

bool lw_tma_begin(Lower *L, TlOp *kernel) {
  unsigned ring = tl_kernel_tma_ring(kernel);
  if (!ring)
    return true;
  if (!tl_arch_has(L->arch, TL_FEATURE_TMA)) {
    TlOp *first = NULL;
    tl_op_walk(kernel, find_tma, &first, false);
    return lw_fail_feature(L, first ? first : kernel,
                           "a copy through a tensor map runs as TMA "
                           "(cp.async.bulk.tensor)",
                           TL_FEATURE_TMA, NULL);
  }
  L->tma = true;
  L->tma_ring = ring;
  /* The ring and the counters, placed before the scratch. */
  L->tma_bars = (L->scratch_base + 7) / 8 * 8;
  L->tma_counts = L->tma_bars + 8 * (int64_t)L->tma_ring;
  L->scratch_base = (L->tma_counts + 8 * (int64_t)L->threads + 15) / 16 * 16;
  lw_store(L, lw_cst(L, lw_i32(L), 0), counter_ptr(L, 0), 4);
  lw_store(L, lw_cst(L, lw_i32(L), 0), counter_ptr(L, 1), 4);
  TlBuilder outside = lw_open_guard(L, is_thread0(L));
  for (unsigned r = 0; r < L->tma_ring; r++) {
    TlValue *ops[2] = {barrier_of(L, lw_cst(L, lw_i32(L), r)),
                       lw_cst(L, lw_i32(L), 1)};
    tl_build(&L->b, TL_OP_SIMT_MBARRIER_INIT, 2, ops, 0, NULL);
  }
  tl_build(&L->b, TL_OP_SIMT_FENCE_MBARRIER_INIT, 0, NULL, 0, NULL);
  lw_close_guard(L, outside);
  lw_barrier(L);
  return true;
}

bool lw_lower_copy_tma(Lower *L, TlOp *op) {
  Smem *m = lw_smem_of(L, tl_op_operand(op, 0));
  TlValue *map = lw_scalar(L, tl_op_operand(op, 1));
  TlType *mt = tl_value_type(tl_op_operand(op, 1));
  if (!m || !map)
    return lw_fail(L, op, "copies into tensors not made by tl.alloc_shared");
  TlSharedLayout want;
  if (!tl_tensormap_box_layout(mt, &want) ||
      memcmp(&want, &m->layout, sizeof want))
    return lw_fail(L, op,
                   "a copy through a tensor map into a view whose layout is "
                   "not the box's");
  TmaCopy c = {m, map, {NULL, NULL, NULL}, tl_tensormap_rank(mt),
               tl_type_bitwidth(tl_tensormap_elem(mt)) / 8,
               lw_tile_mixed(L, tl_op_operand(op, 0))};
  for (unsigned i = 0; i < c.rank; i++) {
    c.bytes *= tl_tensormap_box(mt, i);
    c.coords[c.rank - 1 - i] =
        lw_to_i32(L, lw_scalar(L, tl_op_operand(op, 2 + i)));
  }
  if (tl_copy_async_ring(op))
    return lw_lower_copy_ring(L, op, &c);
  if (L->warp_branch)
    return lw_fail(L, op, "a copy through a tensor map in a warp branch");
  TlBuilder outside = lw_open_guard(L, is_thread0(L));
  lw_issue_tma(L, &c, barrier_of(L, load_counter(L, 0)));
  lw_close_guard(L, outside);
  return true;
}

void lw_issue_tma(Lower *L, const TmaCopy *c, TlValue *bar) {
  /* Generic-proxy writes of this thread to the tile before the copy (the
   * others' were fenced at their tl.synchronize or ring release); a tile
   * only the async proxy reaches needs none. */
  if (c->mixed)
    tl_build(&L->b, TL_OP_SIMT_FENCE_PROXY_ASYNC, 0, NULL, 0, NULL);
  TlValue *ex[2] = {bar, lw_cst(L, lw_i32(L), c->bytes)};
  tl_build(&L->b, TL_OP_SIMT_MBARRIER_EXPECT_TX, 2, ex, 0, NULL);
  TlValue *ops[6] = {c->m->base, c->map, bar};
  for (unsigned i = 0; i < c->rank; i++)
    ops[3 + i] = c->coords[i];
  tl_build(&L->b, TL_OP_SIMT_TMA_LOAD, 3 + c->rank, ops, 0, NULL);
}

void lw_tma_commit(Lower *L) {
  if (!L->tma)
    return;
  TlValue *cp = counter_ptr(L, 0);
  TlValue *c = lw_load(L, cp, lw_i32(L), 4);
  TlBuilder outside = lw_open_guard(L, is_thread0(L));
  TlValue *bar = barrier_of(L, c);
  tl_build(&L->b, TL_OP_SIMT_MBARRIER_ARRIVE, 1, &bar, 0, NULL);
  lw_close_guard(L, outside);
  lw_store(L, tl_arith_addi(&L->b, c, lw_cst(L, lw_i32(L), 1)), cp, 4);
}

void lw_mbarrier_poll(Lower *L, TlValue *bar, TlValue *par) {
  TlType *i32 = lw_i32(L), *i1 = tl_type_bool(L->ctx);
  TlOpState st;
  tl_op_state_init(&st, L->ctx,
                   tl_context_op_def_by_id(L->ctx, TL_OP_SCF_WHILE), L->b.loc);
  tl_op_state_add_operand(&st, lw_cst(L, i32, 0));
  tl_op_state_add_result(&st, i32);
  st.nregions = 2;
  TlOp *w = tl_builder_insert(&L->b, &st);
  TlBlock *before = tl_block_create(L->module),
          *after = tl_block_create(L->module);
  tl_region_append_block(tl_op_region(w, 0), before);
  tl_region_append_block(tl_op_region(w, 1), after);
  TlValue *k = tl_block_add_arg(before, i32, L->b.loc);
  TlValue *k2 = tl_block_add_arg(after, i32, L->b.loc);
  TlBuilder saved = L->b;
  tl_builder_set_end(&L->b, before);
  TlValue *tw[2] = {bar, par};
  TlValue *done = tl_build1(&L->b, TL_OP_SIMT_MBARRIER_TRY_WAIT, 2, tw, i1);
  TlValue *again = tl_arith_xori(
      &L->b, done,
      tl_arith_constant(&L->b, tl_attr_int(L->ctx, i1, 1), L->b.loc));
  TlValue *cond[2] = {again, k};
  tl_build(&L->b, TL_OP_SCF_CONDITION, 2, cond, 0, NULL);
  tl_builder_set_end(&L->b, after);
  tl_build(&L->b, TL_OP_SCF_YIELD, 1, &k2, 0, NULL);
  L->b = saved;
}

/* Waits, in this thread, for the phase of group g's barrier (g an i32). */
static void poll_group(Lower *L, TlValue *g) {
  TlValue *par = tl_arith_andi(
      &L->b, tl_arith_divi(&L->b, g, lw_cst(L, lw_i32(L), L->tma_ring)),
      lw_cst(L, lw_i32(L), 1));
  lw_mbarrier_poll(L, barrier_of(L, g), par);
}

/* tl.copy_async_wait N: every group below c - N that this thread has not
 * waited for yet (a barrier's phase says nothing of another group's
 * bytes, so each is polled), in order; then waited = max(waited, c - N). */
void lw_tma_wait(Lower *L, int64_t pending) {
  if (!L->tma)
    return;
  TlValue *wp = counter_ptr(L, 1);
  TlValue *from = lw_load(L, wp, lw_i32(L), 4);
  TlValue *upto = tl_arith_subi(&L->b, load_counter(L, 0),
                                lw_cst(L, lw_i32(L), pending));
  TlOpState st;
  tl_op_state_init(&st, L->ctx, tl_context_op_def_by_id(L->ctx, TL_OP_SCF_FOR),
                   L->b.loc);
  tl_op_state_add_operand(&st, from);
  tl_op_state_add_operand(&st, upto);
  tl_op_state_add_operand(&st, lw_cst(L, lw_i32(L), 1));
  st.nregions = 1;
  TlOp *f = tl_builder_insert(&L->b, &st);
  TlBlock *body = tl_block_create(L->module);
  tl_region_append_block(tl_op_region(f, 0), body);
  TlValue *g = tl_block_add_arg(body, lw_i32(L), L->b.loc);
  TlBuilder saved = L->b;
  tl_builder_set_end(&L->b, body);
  poll_group(L, g);
  tl_build(&L->b, TL_OP_SCF_YIELD, 0, NULL, 0, NULL);
  L->b = saved;
  lw_store(L, tl_arith_maxi(&L->b, from, upto), wp, 4);
}

void lw_tma_synchronize(Lower *L) {
  if (L->tma && L->proxy_fences)
    tl_build(&L->b, TL_OP_SIMT_FENCE_PROXY_ASYNC, 0, NULL, 0, NULL);
}
