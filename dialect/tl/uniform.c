/* Warp uniformity of a tl.kernel (docs/langref.md, "Warp-uniform values
 * and warp branches").
 *
 * Scalars of the tl dialect are block-uniform (one value for the whole
 * block) except the warp-uniform ones: the results of tl.warp_index, of an
 * op with a warp-uniform operand, and of an scf op that runs per warp. An
 * scf op runs per warp (it is a *warp branch*) when one of its operands
 * or of the values its regions yield is warp-uniform; its regions run in
 * each warp on its own, so their block arguments are warp-uniform too.
 * The sets are a fixed point over the kernel (a loop may carry a value
 * that becomes warp-uniform in its body).
 *
 * tl_uniformity_verify states the rules: outside warp branches a
 * warp-uniform value feeds only arith ops and scf ops; a warp branch gives
 * scalars, and register tiles each of whose elements one warp holds (its
 * tile results are not warp-uniform: each element comes from its warp);
 * inside one, the ops that need every warp of the block
 * (a barrier, a copy or reduction spread over the block, the scratch of a
 * broadcast, a shared allocation) are refused. */
#include "tl_internal.h"

#include "tl/predicates.h"

#include <string.h>

/*===--- Pointer sets -----------------------------------------------------===*/

typedef struct PSet {
  const void **keys;
  size_t cap, len;
} PSet;

static size_t pslot(const PSet *s, const void *k) {
  size_t h = (size_t)tl_hash_bytes(&k, sizeof k, 0) & (s->cap - 1);
  while (s->keys[h] && s->keys[h] != k)
    h = (h + 1) & (s->cap - 1);
  return h;
}

static bool pset_has(const PSet *s, const void *k) {
  return s->cap && s->keys[pslot(s, k)] == k;
}

/* Adds k; true when it was not there. */
static bool pset_add(PSet *s, const void *k) {
  if (pset_has(s, k))
    return false;
  if (2 * (s->len + 1) > s->cap) {
    PSet n = {NULL, s->cap ? 2 * s->cap : 64, 0};
    n.keys = tl_xcalloc(n.cap, sizeof *n.keys);
    for (size_t i = 0; i < s->cap; i++)
      if (s->keys[i])
        n.keys[pslot(&n, s->keys[i])] = s->keys[i], n.len++;
    tl_free(s->keys);
    *s = n;
  }
  s->keys[pslot(s, k)] = k;
  s->len++;
  return true;
}

struct TlUniformity {
  PSet warp;    /* TlValue*: warp-uniform values */
  PSet diverge; /* TlOp*: warp branches */
};

/*===--- The analysis -----------------------------------------------------===*/

static bool any_warp_operand(const TlUniformity *u, TlOp *op) {
  for (unsigned i = 0; i < tl_op_num_operands(op); i++)
    if (pset_has(&u->warp, tl_op_operand(op, i)))
      return true;
  return false;
}

/* Whether a region of op yields a warp-uniform value. */
static bool yields_warp(const TlUniformity *u, TlOp *op) {
  for (unsigned r = 0; r < tl_op_num_regions(op); r++)
    for (TlBlock *b = tl_region_first_block(tl_op_region(op, r)); b;
         b = tl_block_next(b)) {
      TlOp *t = tl_block_terminator(b);
      if (t && tl_op_num_regions(t) == 0 && any_warp_operand(u, t))
        return true;
    }
  return false;
}

static void mark_ops(TlUniformity *u, TlBlock *b, bool *changed) {
  for (TlOp *op = tl_block_first_op(b); op; op = tl_op_next(op)) {
    TlOpId id = tl_op_id(op);
    if (id == TL_OP_SCF_YIELD || id == TL_OP_SCF_CONDITION)
      continue;
    unsigned nr = tl_op_num_regions(op);
    if (nr && (any_warp_operand(u, op) || yields_warp(u, op))) {
      *changed |= pset_add(&u->diverge, op);
      for (unsigned r = 0; r < nr; r++)
        for (TlBlock *rb = tl_region_first_block(tl_op_region(op, r)); rb;
             rb = tl_block_next(rb))
          for (unsigned a = 0; a < tl_block_num_args(rb); a++)
            *changed |= pset_add(&u->warp, tl_block_arg(rb, a));
    }
    /* A warp branch's tile results are the block's: each element comes
     * from the warp that holds it (the rules allow only such tiles). */
    bool branch = pset_has(&u->diverge, op);
    if (id == TL_OP_TL_WARP_INDEX || branch || (!nr && any_warp_operand(u, op)))
      for (unsigned i = 0; i < tl_op_num_results(op); i++)
        if (!branch || tl_type_is_scalar(tl_value_type(tl_op_result(op, i))))
          *changed |= pset_add(&u->warp, tl_op_result(op, i));
    for (unsigned r = 0; r < nr; r++)
      for (TlBlock *rb = tl_region_first_block(tl_op_region(op, r)); rb;
           rb = tl_block_next(rb))
        mark_ops(u, rb, changed);
  }
}

TlUniformity *tl_uniformity_create(TlOp *kernel) {
  TlUniformity *u = tl_xcalloc(1, sizeof *u);
  bool changed = true;
  while (changed) {
    changed = false;
    for (unsigned r = 0; r < tl_op_num_regions(kernel); r++)
      for (TlBlock *b = tl_region_first_block(tl_op_region(kernel, r)); b;
           b = tl_block_next(b))
        mark_ops(u, b, &changed);
  }
  return u;
}

void tl_uniformity_destroy(TlUniformity *u) {
  if (!u)
    return;
  tl_free(u->warp.keys);
  tl_free(u->diverge.keys);
  tl_free(u);
}

bool tl_uniformity_is_warp(const TlUniformity *u, const TlValue *v) {
  return pset_has(&u->warp, v);
}

bool tl_uniformity_diverges(const TlUniformity *u, const TlOp *op) {
  return pset_has(&u->diverge, op);
}

bool tl_uniformity_in_branch(const TlUniformity *u, const TlOp *op) {
  for (TlOp *p = tl_op_parent(op); p && tl_op_id(p) != TL_OP_TL_KERNEL;
       p = tl_op_parent(p))
    if (pset_has(&u->diverge, p))
      return true;
  return false;
}

bool tl_uniformity_tile_threads_ok(const TlUniformity *u, const TlOp *op,
                                   int64_t tile_threads, int64_t threads,
                                   TlErr *err) {
  if (tile_threads == threads)
    return true;
  if (tile_threads > threads)
    return tl_err(err, "a tile spans at most the block's threads");
  if (!tl_uniformity_in_branch(u, op))
    return tl_err(err, "a tile over fewer threads, a multiple of 32, may be "
                       "made only in a warp branch");
  if (tile_threads % 32)
    return tl_err(err, "a tile over fewer threads than the block spans whole "
                       "warps: a multiple of 32");
  return true;
}

/*===--- The rules --------------------------------------------------------===*/

/* Whether a reduction of a tile of layout l over dimension d combines
 * elements of several warps (the lowering meets them in the shared
 * scratch behind a barrier): some spatial mode of d spans thread-index
 * bits at or above 32. */
static bool reduces_across_warps(const TlLayout *l, int d) {
  int64_t below = 1;
  for (int k = l->num_spatial - 1; k >= 0; k--) {
    int m = l->spatial_modes[k];
    int64_t size = m >= 0 ? l->mode_shape[m] : -m;
    if (m >= 0 && l->mode_dim[m] == d && size > 1 && below * size > 32)
      return true;
    below *= size;
  }
  return false;
}

/* Whether a tile broadcast from layout src to layout dst takes every
 * element of the result from the same thread (the lowering's
 * registers-only broadcast; else the elements go through the shared
 * scratch, behind a barrier): for each local index i of dst, every thread
 * that runs it holds, at one local index of src, the element its i-th
 * element reads (index 0 along src's size-1 dimensions). The threads that
 * run it are those of the smaller layout: a tile over fewer threads than
 * the block lives in a warp branch, whose other warps may not use it. */
static bool broadcast_in_threads(const TlLayout *src, const TlLayout *dst) {
  int64_t ts = tl_layout_num_threads(src), td = tl_layout_num_threads(dst);
  int64_t threads = ts < td ? ts : td;
  int64_t cap = tl_layout_replication(src);
  int64_t *holders = tl_xmalloc(sizeof *holders * (size_t)cap);
  bool ok = true;
  for (int64_t i = 0; ok && i < tl_layout_local_size(dst); i++) {
    int64_t j = -1;
    for (int64_t t = 0; ok && t < threads; t++) {
      int64_t idx[TL_LAYOUT_MAX_RANK], local, count;
      ok = tl_layout_map(dst, t, i, idx, NULL);
      for (int d = 0; ok && d < src->rank; d++)
        if (src->shape[d] == 1)
          idx[d] = 0;
      ok = ok &&
           tl_layout_locate(src, idx, &local, holders, cap, &count, NULL) &&
           (j < 0 || local == j);
      if (!ok)
        break;
      j = local;
      bool held = false;
      for (int64_t k = 0; k < count && !held; k++)
        held = holders[k] == t;
      ok = held;
    }
  }
  tl_free(holders);
  return ok;
}

/* Why op cannot run in a warp branch, or NULL when it can. */
static const char *refusal(TlOp *op) {
  switch (tl_op_id(op)) {
  case TL_OP_TL_SYNCHRONIZE:
    return "it waits for every thread of the block";
  case TL_OP_TL_COPY_ASYNC:
    /* A copy that fills a ring's slot is issued by the running warp. */
    if (tl_copy_async_ring(op))
      return NULL;
    return "asynchronous copies are spread over every thread of the block "
           "(a copy through a tensor map into a ring's slot is not)";
  case TL_OP_TL_COPY_ASYNC_COMMIT:
  case TL_OP_TL_COPY_ASYNC_WAIT:
    return "asynchronous copies are spread over every thread of the block";
  case TL_OP_TL_ALLOC_RING:
    return "a ring's barriers are set up for the whole block (behind a "
           "barrier)";
  case TL_OP_TL_ALLOC_SHARED:
  case TL_OP_TL_FREE_SHARED:
    return "shared tiles are allocated for the whole block (a reuse waits "
           "for every thread)";
  case TL_OP_TL_FENCE:
    return "a fence orders the accesses of the whole block (between two "
           "barriers)";
  case TL_OP_TL_EXIT:
    return "the block leaves as one";
  case TL_OP_TL_PRINT:
    return "the block prints as one";
  case TL_OP_TL_GATHER: {
    /* The row indices go to the result's layout as a broadcast does. */
    TlType *it = tl_value_type(tl_op_operand(op, 1));
    TlType *rt = tl_value_type(tl_op_result(op, 0));
    if (tl_tensor_kind(it) == TL_TENSOR_REG &&
        tl_tensor_kind(rt) == TL_TENSOR_REG &&
        broadcast_in_threads(tl_reg_layout(it), tl_reg_layout(rt)))
      return NULL;
    return "its row indices move between threads through the shared "
           "scratch (behind a barrier)";
  }
  case TL_OP_TL_BROADCAST: {
    TlType *st = tl_value_type(tl_op_operand(op, 0));
    TlType *rt = tl_value_type(tl_op_result(op, 0));
    if (tl_tensor_kind(st) != TL_TENSOR_REG ||
        (tl_tensor_kind(rt) == TL_TENSOR_REG &&
         broadcast_in_threads(tl_reg_layout(st), tl_reg_layout(rt))))
      return NULL;
    return "the broadcast moves elements between threads through the shared "
           "scratch (behind a barrier)";
  }
  case TL_OP_TL_ATOMIC_RMW:
  case TL_OP_TL_ATOMIC_CAS: {
    if (tl_op_num_results(op))
      return "the scalar form hands the old value to every thread through "
             "the shared scratch (behind barriers)";
    TlMemOrder o = tl_mem_order_of(op, TL_ORDER_RELAXED);
    if (tl_mem_order_releases(o) || tl_mem_order_acquires(o))
      return "an ordered atomic releases or acquires for the whole block "
             "(behind a barrier)";
    return NULL;
  }
  case TL_OP_TL_REDUCE: {
    TlType *t = tl_value_type(tl_op_operand(op, 0));
    TlAttr *d = tl_op_attr(op, "dim");
    if (tl_tensor_kind(t) == TL_TENSOR_REG && d &&
        reduces_across_warps(tl_reg_layout(t), (int)tl_attr_int_value(d)))
      return "the reduced dimension is spread over several warps, which "
             "meet in the shared scratch (behind a barrier)";
    return NULL;
  }
  default:
    return NULL;
  }
}

/* Whether every element of a tile of layout l is held by threads of one
 * warp only: then the warps of a warp branch that gives the tile each
 * compute their own elements, and the tile after the branch takes each
 * element from the warp that holds it. */
static bool held_in_one_warp(const TlLayout *l) {
  int64_t threads = tl_layout_num_threads(l), local = tl_layout_local_size(l);
  int64_t n = 1;
  for (int d = 0; d < l->rank; d++)
    n *= l->shape[d];
  int32_t *warp = tl_xmalloc(sizeof *warp * (size_t)(n ? n : 1));
  for (int64_t e = 0; e < n; e++)
    warp[e] = -1;
  bool ok = true;
  for (int64_t t = 0; ok && t < threads; t++)
    for (int64_t i = 0; ok && i < local; i++) {
      int64_t idx[TL_LAYOUT_MAX_RANK], f = 0;
      if (!tl_layout_map(l, t, i, idx, NULL))
        continue;
      for (int d = 0; d < l->rank; d++)
        f = f * l->shape[d] + idx[d];
      if (warp[f] < 0)
        warp[f] = (int32_t)(t / 32);
      ok = warp[f] == t / 32;
    }
  tl_free(warp);
  return ok;
}

typedef struct Check {
  const TlUniformity *u;
  int64_t threads;
  bool ok;
} Check;

static bool scalar_or_scf(TlOp *op) {
  const char *n = tl_op_name(op);
  return strncmp(n, "arith.", 6) == 0 || strncmp(n, "scf.", 4) == 0;
}

static void check_ops(Check *c, TlBlock *b, TlOp *branch) {
  for (TlOp *op = tl_block_first_op(b); op && c->ok; op = tl_op_next(op)) {
    const char *why = branch ? refusal(op) : NULL;
    if (why) {
      tl_op_emit_error(op, "cannot run in a warp branch: %s", why);
      tl_emit_note(tl_op_context(op), tl_op_loc(branch), "the warp branch");
      c->ok = false;
      return;
    }
    if (!branch && !scalar_or_scf(op) && any_warp_operand(c->u, op)) {
      tl_op_emit_error(op, "uses a warp-uniform value outside a warp branch "
                           "(only arith and scf ops may)");
      c->ok = false;
      return;
    }
    bool div = tl_uniformity_diverges(c->u, op);
    if (div && !branch)
      for (unsigned i = 0; i < tl_op_num_results(op); i++) {
        TlType *t = tl_value_type(tl_op_result(op, i));
        if (tl_type_is_scalar(t) ||
            (tl_tensor_kind(t) == TL_TENSOR_REG &&
             held_in_one_warp(tl_reg_layout(t))))
          continue;
        tl_op_emit_error(op,
                         "runs per warp (a warp-uniform condition, bound "
                         "or carried value), but result #%u is %s",
                         i,
                         tl_tensor_kind(t) == TL_TENSOR_REG
                             ? "a register tile with elements held by "
                               "several warps (a warp branch may give a "
                               "tile only if each element is held in one "
                               "warp)"
                             : "not a scalar or a register tile");
        c->ok = false;
        return;
      }
    for (unsigned r = 0; r < tl_op_num_regions(op); r++)
      for (TlBlock *rb = tl_region_first_block(tl_op_region(op, r)); rb;
           rb = tl_block_next(rb))
        check_ops(c, rb, branch ? branch : div ? op : NULL);
  }
}

TlResult tl_uniformity_verify(TlOp *kernel, int64_t threads) {
  TlUniformity *u = tl_uniformity_create(kernel);
  Check c = {u, threads, true};
  for (unsigned r = 0; r < tl_op_num_regions(kernel); r++)
    for (TlBlock *b = tl_region_first_block(tl_op_region(kernel, r)); b;
         b = tl_block_next(b))
      check_ops(&c, b, NULL);
  tl_uniformity_destroy(u);
  return c.ok ? TL_SUCCESS : TL_FAILURE;
}
