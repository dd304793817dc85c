/* Memory ops of the VM: global views over bound host buffers, loads and
 * stores with bounds checks and masks, shared tiles with their checks
 * (bounds, use after free, leaks, uninitialised reads, reads of pending
 * copy_async data, data races between threads without tl.synchronize),
 * views of shared tiles (tl.slice, tl.permute, tl.reshape), copy_async
 * groups and tl.synchronize. Shared storage is indexed by element offset,
 * so every view of an allocation meets the same elements and checks.
 * docs/vm.md states the rules. */
#include "vm_internal.h"
#include "tl/tensor_map.h"

#include <stdio.h>

/*===--- Block lifetime ---------------------------------------------------===*/

void vm_block_begin(TlVm *vm) {
  vm->epoch = 1; /* SElem.epoch 0 never matches: fresh elements are stale */
  vm->open_group = 1;
  vm->done_group = 0;
  vm->dots = 0;
  vm->dot_recs.len = 0;
  memset(vm->wg_regs, 0, sizeof vm->wg_regs);
  vm->dot_regs.len = 0;
  vm->rings = NULL;
  vm->nrings = 0;
  vm->shared = NULL;
  vm->released = 0;
  vm->seen.len = 0;
  vm->visible.len = 0;
}

static void shared_destroy(Shared *s) {
  tl_free(s->v);
  tl_free(s->st);
  tl_free(s);
}

/* Whether ring r is done with: no step acquired and not committed, and
 * every committed step waited for by some warp (its bytes landed);
 * reports the error (`when`: "when the block ends") otherwise. */
static bool ring_settled(TlVm *vm, const Ring *r, const char *when) {
  int64_t seen = 0;
  for (int64_t w = 0; w < vm->nwarps; w++)
    if (r->waited[w] > seen)
      seen = r->waited[w];
  if (r->acquired > r->committed)
    return vm_error(vm, r->op,
                    "step %lld of the ring is acquired but never committed "
                    "(tl.ring_commit) %s",
                    (long long)r->committed, when);
  if (seen < r->committed)
    return vm_error(vm, r->op,
                    "the copies of step %lld of the ring may still be "
                    "landing %s (no warp waits for it with tl.ring_wait)",
                    (long long)seen, when);
  return true;
}

bool vm_block_end(TlVm *vm, bool check) {
  bool ok = true;
  if (check && vm->dot_recs.len)
    ok = vm_error(vm, vm->dot_recs.data[vm->dot_recs.len - 1].op,
                  "the product is still in flight when the block ends (no "
                  "tl.dot_wait retires it)");
  for (Ring *r = vm->rings; r && check && ok; r = r->next)
    ok = ring_settled(vm, r, "when the block ends");
  for (Shared *s = vm->shared; s && check && ok; s = s->next) {
    if (s->free_op || !s->npending)
      continue;
    for (int64_t e = 0; e < s->n; e++)
      if (s->st[e].pending) {
        ok = vm_error(vm, s->st[e].wop,
                      "the copy is still pending when the "
                      "block ends (no tl.copy_async_wait "
                      "completes its group)");
        break;
      }
  }
  for (Shared *s = vm->shared; s && check && ok; s = s->next)
    if (!s->free_op)
      ok = vm_error(vm, s->alloc_op,
                    "the shared tile is never freed (leaked "
                    "at the end of the block)");
  while (vm->shared) {
    Shared *n = vm->shared->next;
    shared_destroy(vm->shared);
    vm->shared = n;
  }
  tl_arena_reset(&vm->block_arena);
  return ok;
}

/*===--- Helpers ----------------------------------------------------------===*/

static void unravel(int64_t flat, int rank, const int64_t *shape,
                    int64_t *idx) {
  for (int d = rank - 1; d >= 0; d--) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
}

/* a + b, saturating at the int64 range (an index that far out is outside
 * every view anyway). */
static int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return a > 0 ? INT64_MAX : INT64_MIN;
  return r;
}

/* sum(idx[d] * strides[d]); false when it overflows int64. */
static bool dot_strides(int rank, const int64_t *idx, const int64_t *strides,
                        int64_t *out) {
  int64_t o = 0, t;
  for (int d = 0; d < rank; d++)
    if (__builtin_mul_overflow(idx[d], strides[d], &t) ||
        __builtin_add_overflow(o, t, &o))
      return false;
  *out = o;
  return true;
}

static void tile_shape(TlType *t, int *rank, int64_t *shape) {
  *rank = (int)tl_tensor_rank(t);
  for (int d = 0; d < *rank; d++)
    shape[d] = tl_tensor_dim(t, (unsigned)d);
}

/* Offsets operands from..from+rank. */
static void read_offsets(TlVm *vm, Inst *in, unsigned from, int rank,
                         int64_t *off) {
  for (int d = 0; d < rank; d++)
    off[d] = vm_int_operand(vm, in, from + (unsigned)d);
}

static uint64_t buf_load(const TlVmArg *a, int64_t i) {
  switch (a->dtype.bits) {
  case 8:
    return ((const uint8_t *)a->data)[i];
  case 16: {
    uint16_t v;
    memcpy(&v, (const uint8_t *)a->data + 2 * i, 2);
    return v;
  }
  case 32: {
    uint32_t v;
    memcpy(&v, (const uint8_t *)a->data + 4 * i, 4);
    return v;
  }
  case 64: {
    uint64_t v;
    memcpy(&v, (const uint8_t *)a->data + 8 * i, 8);
    return v;
  }
  default:
    return tl_dtype_load(a->dtype, a->data, (size_t)i);
  }
}

static void buf_store(const TlVmArg *a, int64_t i, uint64_t c) {
  switch (a->dtype.bits) {
  case 8:
    ((uint8_t *)a->data)[i] = (uint8_t)c;
    return;
  case 16: {
    uint16_t v = (uint16_t)c;
    memcpy((uint8_t *)a->data + 2 * i, &v, 2);
    return;
  }
  case 32: {
    uint32_t v = (uint32_t)c;
    memcpy((uint8_t *)a->data + 4 * i, &v, 4);
    return;
  }
  case 64:
    memcpy((uint8_t *)a->data + 8 * i, &c, 8);
    return;
  default:
    tl_dtype_store(a->dtype, a->data, (size_t)i, c);
  }
}

/* Checks global index g against the view and the buffer. Returns 1 with the
 * element offset in *off, 0 when outside the view and masked, -1 after an
 * error. verb: "reads", "writes", "copies". */
static int global_at(TlVm *vm, Inst *in, const GView *g, const int64_t *idx,
                     bool masked, const char *verb, int64_t thread,
                     int64_t *off) {
  char ib[256], sb[256];
  for (int d = 0; d < g->rank; d++)
    if (idx[d] < 0 || idx[d] >= g->sizes[d]) {
      if (masked)
        return 0;
      vm_fmt_index(ib, sizeof ib, g->rank, idx);
      vm_fmt_index(sb, sizeof sb, g->rank, g->sizes);
      char who[48] = "";
      if (thread >= 0)
        snprintf(who, sizeof who, " (thread %lld)", (long long)thread);
      vm_error(vm, in->op,
               "%s element %s outside the global view of sizes %s%s", verb, ib,
               sb, who);
      vm_note(vm, g->def, "the view is defined here");
      return -1;
    }
  int64_t o = INT64_MAX;
  const TlVmArg *a = &vm->args[g->param];
  int64_t cap = (int64_t)((a->size * 8) / a->dtype.bits);
  if (!dot_strides(g->rank, idx, g->strides, &o) || o < 0 || o >= cap) {
    vm_fmt_index(ib, sizeof ib, g->rank, idx);
    vm_error(vm, in->op,
             "%s element %s of the view at offset %lld, outside "
             "the buffer of '%s' (%lld elements)",
             verb, ib, (long long)o,
             tl_vm_param_name(vm->kernel, (unsigned)g->param), (long long)cap);
    vm_note(vm, g->def, "the view is defined here");
    return -1;
  }
  *off = o;
  return 1;
}

/* Whether the box [off, off + shape) lies inside the view and its elements
 * inside the buffer, so that no element needs a check. */
static bool box_inside(const TlVm *vm, const GView *g, const int64_t *off,
                       const int64_t *shape) {
  int64_t lo, hi, last[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < g->rank; d++) {
    if (shape[d] <= 0)
      return false;
    if (off[d] < 0 || off[d] > g->sizes[d] - shape[d])
      return false;
    last[d] = off[d] + shape[d] - 1;
  }
  if (!dot_strides(g->rank, off, g->strides, &lo) ||
      !dot_strides(g->rank, last, g->strides, &hi))
    return false;
  const TlVmArg *a = &vm->args[g->param];
  return lo >= 0 && hi < (int64_t)((a->size * 8) / a->dtype.bits);
}

/* Element offset of off + j in the view. */
static inline int64_t view_offset(const GView *g, const int64_t *off,
                                  const int64_t *j) {
  int64_t o = 0;
  for (int d = 0; d < g->rank; d++)
    o += (off[d] + j[d]) * g->strides[d];
  return o;
}

/*===--- Global races -----------------------------------------------------===*/

/* Blocks of one launch run in no fixed order and cannot wait for each
 * other, so an element one block writes may be touched by another only
 * when the two accesses are ordered: the first block released its
 * accesses (a tl.fence or an atomic with release ordering) before an
 * atomic that the second block's atomic observed, and the second acquired
 * what it observed (an atomic or tl.fence with acquire ordering) before
 * its access. Atomics of different blocks to one element need no order.
 * Within a block, threads see each other's writes only across a
 * tl.synchronize. Every access to a buffer element is checked against the
 * last write and the reads of the run.
 *
 * The orders are vector clocks over blocks (Clock): each block keeps the
 * stamp up to which its accesses are released, the releases its atomics
 * observed and those it acquired; each atomically accessed element the
 * releases published to it (an atomic after a release publishes it, with
 * what its block acquired before: releases are cumulative). */

/* Marks the parameters a kernel may write: those under the views its
 * tl.store_global, tl.atomic_rmw and tl.atomic_cas ops write to (every
 * parameter when a view does not come straight from a tl.view_global of
 * one). A race needs a write, so buffers only read need no tracking. */
typedef struct Written {
  TlOp *kernel;
  bool *param;
  unsigned n;
} Written;

static void mark_written(TlOp *op, void *user) {
  Written *w = user;
  unsigned vi;
  switch (tl_op_id(op)) {
  case TL_OP_TL_STORE_GLOBAL:
  case TL_OP_TL_ATOMIC_RMW:
    vi = 1;
    break;
  case TL_OP_TL_ATOMIC_CAS:
    vi = 2;
    break;
  default:
    return;
  }
  TlOp *view = tl_value_def(tl_op_operand(op, vi));
  TlValue *ptr = view && tl_op_id(view) == TL_OP_TL_VIEW_GLOBAL
                     ? tl_op_operand(view, 0)
                     : NULL;
  TlBlock *entry = tl_region_first_block(tl_op_region(w->kernel, 0));
  for (unsigned i = 0; i < w->n; i++)
    if (!ptr || tl_block_arg(entry, i) == ptr)
      w->param[i] = true;
}

void vm_gtrack_begin(TlVm *vm) {
  vm->gtrack = tl_xcalloc(vm->nargs + 1, sizeof *vm->gtrack);
  vm->stamp = 0;
  Written w = {vm->kernel, tl_xcalloc(vm->nargs + 1, sizeof(bool)), vm->nargs};
  tl_op_walk(vm->kernel, mark_written, &w, false);
  for (unsigned i = 0; i < vm->nargs; i++) {
    const TlVmArg *a = &vm->args[i];
    if (a->kind != TL_VM_ARG_BUFFER || !a->dtype.bits || !w.param[i])
      continue;
    size_t n = (a->size * 8) / a->dtype.bits;
    vm->gtrack[i] = tl_xmalloc(sizeof(GElem) * (n + 1));
    for (size_t e = 0; e < n; e++)
      vm->gtrack[i][e] = (GElem){
          .wblock = -1, .rblock = -1, .writer = T_NONE, .reader = T_NONE};
  }
  tl_free(w.param);
}

void vm_gtrack_end(TlVm *vm) {
  for (unsigned i = 0; vm->gtrack && i < vm->nargs; i++)
    tl_free(vm->gtrack[i]);
  tl_free(vm->gtrack);
  vm->gtrack = NULL;
  for (size_t i = 0; i < vm->syncs.len; i++)
    tl_vec_free(&vm->syncs.data[i]);
  tl_vec_free(&vm->syncs);
  tl_vec_free(&vm->seen);
  tl_vec_free(&vm->visible);
}

/* Vector clocks: the stamp of block b (0 when absent), raising b's entry
 * to s, and the entrywise maximum. */
static uint64_t clock_get(const Clock *c, int32_t b) {
  for (size_t i = 0; i < c->len; i++)
    if (c->data[i].block == b)
      return c->data[i].stamp;
  return 0;
}

static void clock_raise(Clock *c, int32_t b, uint64_t s) {
  for (size_t i = 0; i < c->len; i++)
    if (c->data[i].block == b) {
      if (c->data[i].stamp < s)
        c->data[i].stamp = s;
      return;
    }
  ClockEntry e = {b, s};
  tl_vec_push(c, e);
}

static void clock_join(Clock *dst, const Clock *src) {
  for (size_t i = 0; i < src->len; i++)
    clock_raise(dst, src->data[i].block, src->data[i].stamp);
}

static int32_t linear_block(const TlVm *vm) {
  return (int32_t)(vm->block[0] + vm->grid[0] * (vm->block[1] + vm->grid[1] * vm->block[2]));
}

/* Whether this block acquired block b's accesses up to stamp s. */
static bool ordered_before(const TlVm *vm, int32_t b, uint64_t s) {
  return clock_get(&vm->visible, b) >= s;
}

/* An atomic access of this block to element x: it observes every release
 * published to x, and an atomic write publishes this block's (with what
 * the block acquired) when it has released. */
static void sync_atomic(TlVm *vm, GElem *x, bool write) {
  if (x->sync)
    clock_join(&vm->seen, &vm->syncs.data[x->sync - 1]);
  if (!write || !vm->released)
    return;
  if (!x->sync) {
    Clock fresh = {0};
    tl_vec_push(&vm->syncs, fresh);
    x->sync = (uint32_t)vm->syncs.len;
  }
  Clock *c = &vm->syncs.data[x->sync - 1];
  clock_raise(c, linear_block(vm), vm->released);
  clock_join(c, &vm->visible);
}

/* The ordering of an atomic or fence between blocks: none at scope cta
 * (it orders the block's own threads only). */
static TlMemOrder block_order(TlOp *op, TlMemOrder dflt) {
  if (tl_mem_scope_of(op, TL_SCOPE_GPU) == TL_SCOPE_CTA)
    return TL_ORDER_RELAXED;
  return tl_mem_order_of(op, dflt);
}

/* The release and acquire halves of an atomic or fence with ordering o,
 * around its accesses (release_half before them, acquire_half after). */
static void release_half(TlVm *vm, TlMemOrder o) {
  if (tl_mem_order_releases(o))
    vm->released = vm->stamp;
}

static void acquire_half(TlVm *vm, TlMemOrder o) {
  if (tl_mem_order_acquires(o))
    clock_join(&vm->visible, &vm->seen);
}

static void block_text(const TlVm *vm, int32_t b, char *buf, size_t cap) {
  int64_t x = b % vm->grid[0], y = (b / vm->grid[0]) % vm->grid[1],
          z = b / (vm->grid[0] * vm->grid[1]);
  snprintf(buf, cap, "(%lld, %lld, %lld)", (long long)x, (long long)y, (long long)z);
}

static const char *thread_name(int t, char *buf, size_t cap) {
  if (t == T_MANY)
    snprintf(buf, cap, "several threads");
  else
    snprintf(buf, cap, "thread %d", t);
  return buf;
}

/* How an access is named in race messages. */
static const char *access_text(bool write, bool atomic) {
  return atomic ? (write ? "updated atomically" : "read atomically")
                : (write ? "written" : "read");
}

static const char *const unordered_blocks =
    "blocks of one launch are ordered only by a release in one that an "
    "acquire in the other observed";

/* One access by thread t (T_MANY for a replicated read or a copy) to
 * element o of parameter p's buffer; false after a race error. A plain
 * write of the value the element already holds (`same`) does not race
 * with earlier plain writes: whichever lands last, the element ends the
 * same. Two atomics never race. */
static bool gtrack(TlVm *vm, Inst *in, int p, int64_t o, int t, bool write,
                   bool same, bool atomic) {
  if (!vm->gtrack || !vm->gtrack[p])
    return true;
  GElem *x = &vm->gtrack[p][o];
  int32_t b = linear_block(vm);
  const char *name = tl_vm_param_name(vm->kernel, (unsigned)p);
  const char *how = access_text(write, atomic);
  char bb[64], tb[32], ub[32];
  bool both_atomic_w = atomic && x->watomic;
  bool benign = write && same && !atomic && !x->watomic;
  if (x->wop && x->wblock != b && !both_atomic_w && !benign &&
      !ordered_before(vm, x->wblock, x->wstamp)) {
    block_text(vm, x->wblock, bb, sizeof bb);
    vm_error(vm, in->op,
             "data race on element %lld of '%s': %s by %s of this block, but "
             "block %s %s it (%s)",
             (long long)o, name, how, thread_name(t, tb, sizeof tb), bb,
             x->watomic ? "updated" : "wrote", unordered_blocks);
    vm_note(vm, x->wop, "the other block's %s",
            x->watomic ? "atomic" : "write");
    return false;
  }
  if (x->wop && x->wblock == b && x->wepoch == vm->epoch &&
      (x->writer != t || t == T_MANY) && !both_atomic_w && !benign) {
    vm_error(vm, in->op,
             "data race on element %lld of '%s': %s by %s, %s by %s "
             "with no tl.synchronize between",
             (long long)o, name, how, thread_name(t, tb, sizeof tb),
             access_text(true, x->watomic),
             thread_name(x->writer, ub, sizeof ub));
    vm_note(vm, x->wop, "the write");
    return false;
  }
  if (write && x->reader != T_NONE && !(atomic && x->ratomic)) {
    if (x->rblock != b && !ordered_before(vm, x->rblock, x->rstamp)) {
      block_text(vm, x->rblock, bb, sizeof bb);
      return vm_error(vm, in->op,
                      "data race on element %lld of '%s': %s by %s of this "
                      "block, but block %s read it (%s)",
                      (long long)o, name, how, thread_name(t, tb, sizeof tb),
                      bb, unordered_blocks);
    }
    if (x->rblock == b && x->repoch == vm->epoch &&
        (x->reader != t || t == T_MANY))
      return vm_error(vm, in->op,
                      "data race on element %lld of '%s': %s by %s, read "
                      "by %s with no tl.synchronize between",
                      (long long)o, name, how, thread_name(t, tb, sizeof tb),
                      thread_name(x->reader, ub, sizeof ub));
  }
  if (write) {
    x->wblock = b;
    x->wepoch = vm->epoch;
    x->writer = (int16_t)t;
    x->wop = in->op;
    x->wstamp = vm->stamp;
    x->watomic = atomic;
  } else if (x->reader == T_NONE || x->rblock != b || x->repoch != vm->epoch) {
    x->rblock = b;
    x->repoch = vm->epoch;
    x->reader = (int16_t)t;
    x->rstamp = vm->stamp;
    x->ratomic = atomic;
  } else {
    if (x->reader != t)
      x->reader = T_MANY;
    x->rstamp = vm->stamp;
    x->ratomic = x->ratomic && atomic;
  }
  if (atomic)
    sync_atomic(vm, x, write);
  return true;
}

/* The thread that accesses tile element e: its owner, or T_MANY when the
 * layout replicates it (a read by several threads). */
static int accessor(const LTab *lt, int64_t e) {
  return lt->rep > 1 ? T_MANY : lt->owner[e];
}

/* The next row-major index j of a tile of the given shape. */
static void step(int64_t *j, int rank, const int64_t *shape) {
  for (int d = rank - 1; d >= 0 && ++j[d] == shape[d]; d--)
    j[d] = 0;
}

/*===--- Global memory ----------------------------------------------------===*/

static bool exec_view_global(TlVm *vm, Inst *in) {
  TlOp *op = in->op;
  TlType *gt = tl_value_type(tl_op_result(op, 0));
  GView *g = TL_ARENA_NEW(&vm->block_arena, GView);
  g->param = (int)vm_in(vm, in, 0)->bits;
  g->rank = (int)tl_tensor_rank(gt);
  g->def = op;
  TlAttr *dims = tl_op_attr(op, "static_dims");
  TlAttr *strides = tl_op_attr(op, "static_strides");
  unsigned next = 1;
  for (int d = 0; d < g->rank; d++) {
    int64_t s = tl_attr_int_value(tl_attr_array_elem(dims, (unsigned)d));
    if (s < 0)
      s = vm_int_operand(vm, in, next++);
    if (s < 0)
      return vm_error(vm, op, "size %d is negative (%lld)", d, (long long)s);
    g->sizes[d] = s;
  }
  int64_t run = 1;
  for (int d = g->rank - 1; d >= 0; d--) {
    g->strides[d] = run;
    run *= g->sizes[d] ? g->sizes[d] : 1;
  }
  if (strides)
    for (int d = 0; d < g->rank; d++) {
      int64_t s = tl_attr_int_value(tl_attr_array_elem(strides, (unsigned)d));
      if (s < 0)
        s = vm_int_operand(vm, in, next++);
      if (s < 0)
        return vm_error(vm, op, "stride %d is negative (%lld)", d,
                        (long long)s);
      g->strides[d] = s;
    }
  Val *out = &vm->slots[in->out[0]];
  val_clear(out);
  out->kind = V_GLOBAL;
  out->obj = g;
  return true;
}

/* tl.alloc_global: a row-major view of the launch's workspace buffer. */
static bool exec_alloc_global(TlVm *vm, Inst *in) {
  TlOp *op = in->op;
  TlType *gt = tl_value_type(tl_op_result(op, 0));
  GView *g = TL_ARENA_NEW(&vm->block_arena, GView);
  g->param = -1;
  for (unsigned k = 0; k + vm->user_nargs < vm->nargs; k++)
    if (vm->ws_ops[k] == op)
      g->param = (int)(vm->user_nargs + k);
  tl_assert(g->param >= 0);
  g->rank = (int)tl_tensor_rank(gt);
  g->def = op;
  int64_t run = 1;
  for (int d = g->rank - 1; d >= 0; d--) {
    g->sizes[d] = tl_tensor_dim(gt, (unsigned)d);
    g->strides[d] = run;
    run *= g->sizes[d] ? g->sizes[d] : 1;
  }
  Val *out = &vm->slots[in->out[0]];
  val_clear(out);
  out->kind = V_GLOBAL;
  out->obj = g;
  return true;
}

static bool exec_load_global(TlVm *vm, Inst *in) {
  TlType *rt = tl_value_type(tl_op_result(in->op, 0));
  const GView *g = vm_in(vm, in, 0)->obj;
  const TlVmArg *a = &vm->args[g->param];
  bool masked = tl_op_attr(in->op, "masked") != NULL;
  int rank;
  int64_t shape[TL_LAYOUT_MAX_RANK], off[TL_LAYOUT_MAX_RANK];
  int64_t j[TL_LAYOUT_MAX_RANK], idx[TL_LAYOUT_MAX_RANK];
  tile_shape(rt, &rank, shape);
  read_offsets(vm, in, 1, rank, off);
  const LTab *lt = vm_ltab(vm, tl_reg_layout(rt));
  /* In a warp branch the warp loads the elements it holds; the others
   * are undefined. */
  int32_t *mine = vm_warp_holders(vm, lt);
  Tile *t = tile_new(vm, rt, mine != NULL);
  memset(j, 0, sizeof j);
  if (box_inside(vm, g, off, shape)) {
    /* Row by row along the last dimension. */
    int64_t inner = shape[rank - 1], st = g->strides[rank - 1];
    for (int64_t e = 0; e < t->n; e += inner) {
      int64_t o = view_offset(g, off, j);
      for (int64_t k = 0; k < inner; k++) {
        if (mine && mine[e + k] < 0)
          continue;
        if (!gtrack(vm, in, g->param, o + k * st, accessor(lt, e + k), false,
                    false, false)) {
          tile_release(t);
          tl_free(mine);
          return false;
        }
        t->v[e + k] = buf_load(a, o + k * st);
        if (mine)
          t->undef[e + k] = 0;
      }
      for (int d = rank - 2; d >= 0 && ++j[d] == shape[d]; d--)
        j[d] = 0;
    }
    tl_free(mine);
    vm_put_tile(vm, in, 0, t);
    return true;
  }
  for (int64_t e = 0; e < t->n; e++) {
    if (mine && mine[e] < 0) {
      step(j, rank, shape);
      continue;
    }
    if (mine)
      t->undef[e] = 0;
    for (int d = 0; d < rank; d++)
      idx[d] = sat_add(off[d], j[d]);
    int64_t o;
    int r = global_at(vm, in, g, idx, masked, "reads", lt->owner[e], &o);
    if (r < 0) {
      tile_release(t);
      tl_free(mine);
      return false;
    }
    if (r &&
        !gtrack(vm, in, g->param, o, accessor(lt, e), false, false, false)) {
      tile_release(t);
      tl_free(mine);
      return false;
    }
    t->v[e] = r ? buf_load(a, o) : 0;
    step(j, rank, shape);
  }
  tl_free(mine);
  vm_put_tile(vm, in, 0, t);
  return true;
}

/* The first undefined element of a tile being stored (of those mine marks,
 * when not NULL): an error. */
static bool check_defined(TlVm *vm, Inst *in, const Tile *t,
                          const int32_t *mine) {
  if (!t->undef)
    return true;
  for (int64_t e = 0; e < t->n; e++)
    if (t->undef[e] && (!mine || mine[e] >= 0)) {
      int rank;
      int64_t shape[TL_LAYOUT_MAX_RANK], idx[TL_LAYOUT_MAX_RANK];
      char ib[256];
      tile_shape(t->type, &rank, shape);
      unravel(e, rank, shape, idx);
      vm_fmt_index(ib, sizeof ib, rank, idx);
      const LTab *lt = vm_ltab(vm, tl_reg_layout(t->type));
      return vm_error(vm, in->op,
                      "stores undefined element %s of the register "
                      "tile (thread %d)",
                      ib, mine ? mine[e] : lt->owner[e]);
    }
  return true;
}

/* Stores by the elements' owners; in a warp branch, by the running warp's
 * lowest thread holding each (the other warps do not run). */
static bool exec_store_global(TlVm *vm, Inst *in) {
  const Tile *t = vm_in(vm, in, 0)->obj;
  const GView *g = vm_in(vm, in, 1)->obj;
  const TlVmArg *a = &vm->args[g->param];
  bool masked = tl_op_attr(in->op, "masked") != NULL;
  const LTab *lt = vm_ltab(vm, tl_reg_layout(t->type));
  int32_t *mine = vm_warp_holders(vm, lt);
  bool ok = check_defined(vm, in, t, mine);
  int rank;
  int64_t shape[TL_LAYOUT_MAX_RANK], off[TL_LAYOUT_MAX_RANK];
  int64_t j[TL_LAYOUT_MAX_RANK], idx[TL_LAYOUT_MAX_RANK];
  tile_shape(t->type, &rank, shape);
  read_offsets(vm, in, 2, rank, off);
  memset(j, 0, sizeof j);
  bool inside = box_inside(vm, g, off, shape);
  for (int64_t e = 0; ok && e < t->n; e++) {
    if (mine && mine[e] < 0) {
      step(j, rank, shape);
      continue;
    }
    int who = mine ? mine[e] : lt->owner[e];
    int64_t o;
    int r = 1;
    if (inside) {
      o = view_offset(g, off, j);
    } else {
      for (int d = 0; d < rank; d++)
        idx[d] = sat_add(off[d], j[d]);
      r = global_at(vm, in, g, idx, masked, "writes", who, &o);
    }
    if (r < 0 || (r && !gtrack(vm, in, g->param, o, who, true,
                               buf_load(a, o) == t->v[e], false)))
      ok = false;
    else if (r)
      buf_store(a, o, t->v[e]);
    step(j, rank, shape);
  }
  tl_free(mine);
  return ok;
}

/*===--- Atomics and fences -----------------------------------------------===*/

/* One atomic on element o of the view's buffer by thread t: the race and
 * ordering checks, then old -> op(old, v) (cas: v where old equals cmp,
 * bit for bit). *old gets the element's value before. */
static bool atomic_at(TlVm *vm, Inst *in, const GView *g, int64_t o, int t,
                      uint64_t cmp, uint64_t v, uint64_t *old) {
  const TlVmArg *a = &vm->args[g->param];
  if (!gtrack(vm, in, g->param, o, t, true, false, true))
    return false;
  *old = buf_load(a, o);
  uint64_t x;
  if (in->code == TL_OP_TL_ATOMIC_CAS)
    x = *old == cmp ? v : *old;
  else
    x = vm_atomic_apply(in->et2, (TlAtomicKind)in->pred, *old, v);
  buf_store(a, o, x);
  return true;
}

/* The scalar form: once for the block, by thread 0 (the lowering's
 * choice), at indices that must lie in the view; the old value is the
 * result every thread receives. */
static bool exec_atomic_scalar(TlVm *vm, Inst *in, unsigned nvals) {
  const GView *g = vm_in(vm, in, nvals)->obj;
  int64_t idx[TL_LAYOUT_MAX_RANK], o;
  read_offsets(vm, in, nvals + 1, g->rank, idx);
  if (global_at(vm, in, g, idx, false, "updates", 0, &o) < 0)
    return false;
  uint64_t v = vm_in(vm, in, nvals - 1)->bits;
  uint64_t cmp = nvals == 2 ? vm_in(vm, in, 0)->bits : 0, old;
  if (!atomic_at(vm, in, g, o, 0, cmp, v, &old))
    return false;
  vm_put_scalar(vm, in, 0, old);
  return true;
}

/* The tile form: each element once (by its owner), in row-major order;
 * masked elements outside the view are skipped. */
static bool exec_atomic_tile(TlVm *vm, Inst *in, unsigned nvals) {
  const Tile *t = vm_in(vm, in, nvals - 1)->obj;
  const Tile *c = nvals == 2 ? vm_in(vm, in, 0)->obj : NULL;
  const GView *g = vm_in(vm, in, nvals)->obj;
  bool masked = tl_op_attr(in->op, "masked") != NULL;
  const LTab *lt = vm_ltab(vm, tl_reg_layout(t->type));
  int32_t *mine = vm_warp_holders(vm, lt);
  bool ok =
      check_defined(vm, in, t, mine) && (!c || check_defined(vm, in, c, mine));
  int rank;
  int64_t shape[TL_LAYOUT_MAX_RANK], off[TL_LAYOUT_MAX_RANK];
  int64_t j[TL_LAYOUT_MAX_RANK] = {0}, idx[TL_LAYOUT_MAX_RANK];
  tile_shape(t->type, &rank, shape);
  read_offsets(vm, in, nvals + 1, rank, off);
  for (int64_t e = 0; ok && e < t->n; e++) {
    if (mine && mine[e] < 0) {
      step(j, rank, shape);
      continue;
    }
    for (int d = 0; d < rank; d++)
      idx[d] = sat_add(off[d], j[d]);
    int who = mine ? mine[e] : lt->owner[e];
    int64_t o;
    uint64_t old;
    int r = global_at(vm, in, g, idx, masked, "updates", who, &o);
    if (r < 0 ||
        (r && !atomic_at(vm, in, g, o, who, c ? c->v[e] : 0, t->v[e], &old)))
      ok = false;
    step(j, rank, shape);
  }
  tl_free(mine);
  return ok;
}

static bool exec_atomic(TlVm *vm, Inst *in) {
  unsigned nvals = in->code == TL_OP_TL_ATOMIC_CAS ? 2 : 1;
  TlMemOrder ord = block_order(in->op, TL_ORDER_RELAXED);
  release_half(vm, ord);
  bool ok = in->nout ? exec_atomic_scalar(vm, in, nvals)
                     : exec_atomic_tile(vm, in, nvals);
  if (ok)
    acquire_half(vm, ord);
  return ok;
}

static bool exec_fence(TlVm *vm, Inst *in) {
  TlMemOrder ord = block_order(in->op, TL_ORDER_ACQ_REL);
  release_half(vm, ord);
  acquire_half(vm, ord);
  return true;
}

/*===--- Scalar loads and gathers -----------------------------------------===*/

/* tl.load_scalar: one element for the block, read by every thread; with
 * an ordering it is an atomic read, which observes the releases published
 * to the element, and with acquire acquires them. */
static bool exec_load_scalar(TlVm *vm, Inst *in) {
  const GView *g = vm_in(vm, in, 0)->obj;
  int64_t idx[TL_LAYOUT_MAX_RANK], o;
  read_offsets(vm, in, 1, g->rank, idx);
  if (global_at(vm, in, g, idx, false, "reads", -1, &o) < 0)
    return false;
  bool atomic = tl_op_attr(in->op, "ordering") != NULL;
  if (!gtrack(vm, in, g->param, o, T_MANY, false, false, atomic))
    return false;
  if (atomic)
    acquire_half(vm, block_order(in->op, TL_ORDER_RELAXED));
  vm_put_scalar(vm, in, 0, buf_load(&vm->args[g->param], o));
  return true;
}

/* tl.gather: result element (i, j, ...) reads the view at (idx[i], o_1 +
 * j, ...), idx read with its type's signedness; masked ones read 0
 * outside the view. */
static bool exec_gather(TlVm *vm, Inst *in) {
  TlType *rt = tl_value_type(tl_op_result(in->op, 0));
  const GView *g = vm_in(vm, in, 0)->obj;
  const Tile *ix = vm_in(vm, in, 1)->obj;
  const EType *ie = vm_etype(vm, tl_tensor_elem(ix->type));
  bool masked = tl_op_attr(in->op, "masked") != NULL;
  int rank;
  int64_t shape[TL_LAYOUT_MAX_RANK], off[TL_LAYOUT_MAX_RANK] = {0};
  int64_t j[TL_LAYOUT_MAX_RANK] = {0}, idx[TL_LAYOUT_MAX_RANK];
  tile_shape(rt, &rank, shape);
  for (int d = 1; d < rank; d++)
    off[d] = vm_int_operand(vm, in, 1 + (unsigned)d);
  const LTab *lt = vm_ltab(vm, tl_reg_layout(rt));
  Tile *t = tile_new(vm, rt, false);
  for (int64_t e = 0; e < t->n; e++) {
    if (ix->undef && ix->undef[j[0]]) {
      tile_release(t);
      return vm_error(vm, in->op,
                      "gathers with undefined element [%lld, ...] of the "
                      "index tile",
                      (long long)j[0]);
    }
    idx[0] = e_sval(ie, ix->v[j[0]]);
    if (ie->kind == EK_UINT && ix->v[j[0]] > INT64_MAX)
      idx[0] = INT64_MAX;
    for (int d = 1; d < rank; d++)
      idx[d] = sat_add(off[d], j[d]);
    int64_t o;
    int r = global_at(vm, in, g, idx, masked, "gathers", lt->owner[e], &o);
    if (r < 0 || (r && !gtrack(vm, in, g->param, o, accessor(lt, e), false,
                               false, false))) {
      tile_release(t);
      return false;
    }
    t->v[e] = r ? buf_load(&vm->args[g->param], o) : 0;
    for (int d = rank - 1; d >= 0 && ++j[d] == shape[d]; d--)
      j[d] = 0;
  }
  vm_put_tile(vm, in, 0, t);
  return true;
}

/*===--- Shared memory ----------------------------------------------------===*/

/* The largest allocation, in elements: far beyond any GPU's shared memory
 * (at most 228 KiB per block today). */
enum { MAX_SHARED_SPAN = 1 << 26 };

/* Element offsets of every index (row-major) of shared tile type t, in the
 * VM's arena, computed once per type. */
static const int64_t *shared_offsets(TlVm *vm, TlType *t) {
  int64_t *offs = pmap_get(&vm->soffs, t);
  if (offs)
    return offs;
  TlSharedLayout l;
  if (!tl_shared_type_layout(t, &l, NULL))
    TL_UNREACHABLE("a !tl.shared type has a layout");
  int64_t n = tl_tensor_num_elements(t), idx[TL_LAYOUT_MAX_RANK] = {0};
  offs = TL_ARENA_NEWN(&vm->arena, int64_t, (size_t)n);
  for (int64_t f = 0; f < n; f++) {
    if (!tl_shared_layout_offset(&l, idx, &offs[f], NULL))
      TL_UNREACHABLE("an index of the tile");
    for (int d = l.rank - 1; d >= 0 && ++idx[d] == l.shape[d]; d--)
      idx[d] = 0;
  }
  pmap_put(&vm->soffs, t, offs);
  return offs;
}

/* A new view of mem with type t at storage offset base. */
static SView *new_view(TlVm *vm, Shared *mem, TlType *t, int64_t base,
                       TlOp *def) {
  SView *v = TL_ARENA_NEW(&vm->block_arena, SView);
  v->mem = mem;
  v->type = t;
  tile_shape(t, &v->rank, v->shape);
  v->n = tl_tensor_num_elements(t);
  v->base = base;
  v->offs = shared_offsets(vm, t);
  v->def = def;
  return v;
}

/* Storage index of the view's element at flat index f. Views stay inside
 * their allocation: the verifier derives their layouts from the
 * allocation's and slices check their offsets. */
static inline int64_t storage_at(const SView *v, int64_t f) {
  int64_t o = v->base + v->offs[f];
  tl_assert(o >= 0 && o < v->mem->n);
  return o;
}

static void put_view(TlVm *vm, Inst *in, SView *v) {
  Val *out = &vm->slots[in->out[0]];
  val_clear(out);
  out->kind = V_SHARED;
  out->obj = v;
}

static SView *live_shared(TlVm *vm, Inst *in, unsigned i) {
  SView *v = vm_in(vm, in, i)->obj;
  if (v->mem->free_op) {
    if (v == v->mem->root) {
      vm_error(vm, in->op, "uses a shared tile after it was freed");
      vm_note(vm, v->mem->free_op, "freed here");
    } else {
      vm_error(vm, in->op,
               "uses a view of a shared tile after the tile was freed");
      vm_note(vm, v->mem->free_op, "freed here");
      vm_note(vm, v->def, "the view is made here");
    }
    return NULL;
  }
  return v;
}

static bool exec_alloc_shared(TlVm *vm, Inst *in) {
  TlType *st = tl_value_type(tl_op_result(in->op, 0));
  TlSharedLayout l;
  if (!tl_shared_type_layout(st, &l, NULL))
    TL_UNREACHABLE("a !tl.shared type has a layout");
  /* Storage spans the layout's offsets: a #tl.smem layout may spread a
   * small tile thinly over a huge range, which the VM does not allocate. */
  int64_t span = tl_shared_layout_cosize(&l);
  if (span > MAX_SHARED_SPAN)
    return vm_error(vm, in->op,
                    "the shared tile's layout spans %lld elements; the VM "
                    "allocates at most %lld",
                    (long long)span, (long long)MAX_SHARED_SPAN);
  Shared *s = tl_xcalloc(1, sizeof *s);
  s->n = span;
  s->v = tl_xcalloc((size_t)s->n, sizeof *s->v);
  s->st = tl_xcalloc((size_t)s->n, sizeof *s->st);
  s->alloc_op = in->op;
  s->next = vm->shared;
  vm->shared = s;
  s->root = new_view(vm, s, st, 0, in->op);
  put_view(vm, in, s->root);
  return true;
}

static bool exec_free_shared(TlVm *vm, Inst *in) {
  SView *v = vm_in(vm, in, 0)->obj;
  Shared *s = v->mem;
  if (v != s->root) {
    /* The verifier rejects what it sees; this catches unverified IR. */
    vm_error(vm, in->op,
             "frees a view of a shared tile; only the value tl.alloc_shared "
             "made can be freed");
    vm_note(vm, s->alloc_op, "allocated here");
    return false;
  }
  if (s->free_op) {
    vm_error(vm, in->op, "frees a shared tile that was already freed");
    vm_note(vm, s->free_op, "freed here");
    return false;
  }
  if (s->npending)
    for (int64_t e = 0; e < s->n; e++)
      if (s->st[e].pending) {
        vm_error(vm, in->op,
                 "frees a shared tile while a tl.copy_async into "
                 "it is pending");
        vm_note(vm, s->st[e].wop, "the copy starts here");
        return false;
      }
  s->free_op = in->op;
  return true;
}

/* tl.slice, tl.permute and tl.reshape of a shared tile: a view of the same
 * allocation with the result type's layout. The verifier checked that the
 * result layout is the operand's re-indexed (permute, reshape) or its
 * sub-layout at offset 0, the same at every position up to a shift
 * (slice); the shift of this position is its first element's offset
 * minus the result's. */
static bool exec_shared_view(TlVm *vm, Inst *in) {
  SView *v = live_shared(vm, in, 0);
  if (!v)
    return false;
  TlType *rt = tl_value_type(tl_op_result(in->op, 0));
  SView *w = new_view(vm, v->mem, rt, v->base, in->op);
  if (in->code == TL_OP_TL_SLICE) {
    int64_t off[TL_LAYOUT_MAX_RANK], f = 0;
    unsigned next = 1;
    if (!tl_slice_offsets(in->op, off))
      TL_UNREACHABLE("tl.slice is verified");
    for (int d = 0; d < v->rank; d++) {
      if (off[d] < 0)
        off[d] = vm_int_operand(vm, in, next++);
      int64_t size = w->shape[d];
      if (off[d] < 0 || off[d] > v->shape[d] - size) {
        char sb[256];
        vm_fmt_index(sb, sizeof sb, v->rank, v->shape);
        return vm_error(vm, in->op,
                        "slice [%lld, %lld) of dimension %d is outside the "
                        "shared tile of shape %s",
                        (long long)off[d], (long long)(off[d] + size), d, sb);
      }
      if (off[d] % size != 0)
        return vm_error(vm, in->op,
                        "slice offset %lld of dimension %d is not a multiple "
                        "of the slice size %lld",
                        (long long)off[d], d, (long long)size);
      f = f * v->shape[d] + off[d];
    }
    w->base += v->offs[f] - w->offs[0];
  }
  put_view(vm, in, w);
  return true;
}

/* Flat index of index idx in the view; false after a bounds error. */
static bool shared_index(TlVm *vm, Inst *in, const SView *s, const int64_t *idx,
                         const char *verb, int64_t *flat) {
  int64_t f = 0;
  for (int d = 0; d < s->rank; d++) {
    if (idx[d] < 0 || idx[d] >= s->shape[d]) {
      char ib[256], sb[256];
      vm_fmt_index(ib, sizeof ib, s->rank, idx);
      vm_fmt_index(sb, sizeof sb, s->rank, s->shape);
      return vm_error(vm, in->op,
                      "%s element %s outside the shared tile of "
                      "shape %s",
                      verb, ib, sb);
    }
    f = f * s->shape[d] + idx[d];
  }
  *flat = f;
  return true;
}

static void fresh(TlVm *vm, SElem *x) {
  if (x->epoch != vm->epoch) {
    x->epoch = vm->epoch;
    x->writer = T_NONE;
    x->reader = T_NONE;
  }
}

/* A write of shared element x (at index idx of a rank-dimensional tile)
 * while a tl.dot_async that reads it is in flight is an error. */
static bool dot_free(TlVm *vm, Inst *in, const SElem *x, int rank,
                     const int64_t *idx, const char *verb) {
  if (!x->dot)
    return true;
  if (x->ring) {
    /* A ring's slot: the products in flight that read its step (warps
     * interleave, so the numbers say nothing of other warps' products). */
    bool reads = false;
    for (size_t r = 0; r < vm->dot_recs.len && !reads; r++)
      for (int o = 0; o < DOT_RINGS && !reads; o++) {
        const DotSlots *s = &vm->dot_recs.data[r].reads[o];
        reads = s->ring == x->ring && s->step <= x->step && x->step <= s->step_hi;
      }
    if (!reads)
      return true;
  } else if (!vm_dot_in_flight(vm, x->dot, ~0u)) {
    return true;
  }
  char ib[256];
  vm_fmt_index(ib, sizeof ib, rank, idx);
  return vm_error(vm, in->op,
                  "%s element %s of the shared tile while a tl.dot_async "
                  "that reads it is in flight (no tl.dot_wait has retired "
                  "it)",
                  verb, ib);
}

/* Whether product dot itself is in flight in one of the warps. */
static bool dot_rec_has(const TlVm *vm, uint32_t dot, uint32_t warps) {
  for (size_t r = 0; r < vm->dot_recs.len; r++)
    if (vm->dot_recs.data[r].id == dot)
      return (vm->dot_recs.data[r].warps & warps) != 0;
  return false;
}

uint32_t vm_running_warps(const TlVm *vm) {
  if (vm->warp >= 0)
    return 1u << vm->warp;
  return vm->nwarps >= 32 ? ~0u : (1u << vm->nwarps) - 1;
}

bool vm_dot_in_flight(const TlVm *vm, uint32_t dot, uint32_t warps) {
  for (size_t r = 0; r < vm->dot_recs.len; r++) {
    const DotRec *d = &vm->dot_recs.data[r];
    if (d->id > dot)
      break;
    if (d->warps & warps)
      return true;
  }
  return false;
}

uint32_t vm_dot_issue(TlVm *vm, Inst *in) {
  DotRec d = {++vm->dots, vm_running_warps(vm), in->op, {{0, 0, 0}}};
  tl_vec_push(&vm->dot_recs, d);
  return d.id;
}

/* tl.dot_wait N in the running warps: in each, every product but its
 * newest N retires. */
static void dot_wait(TlVm *vm, int64_t pending) {
  uint32_t warps = vm_running_warps(vm);
  for (int64_t w = 0; w < vm->nwarps; w++) {
    if (!(warps >> w & 1))
      continue;
    int64_t seen = 0;
    for (size_t r = vm->dot_recs.len; r-- > 0;) {
      DotRec *d = &vm->dot_recs.data[r];
      if (d->warps >> w & 1 && ++seen > pending)
        d->warps &= ~(1u << w);
    }
  }
  size_t keep = 0;
  for (size_t r = 0; r < vm->dot_recs.len; r++)
    if (vm->dot_recs.data[r].warps)
      vm->dot_recs.data[keep++] = vm->dot_recs.data[r];
  vm->dot_recs.len = keep;
}

bool vm_dot_operands_ok(TlVm *vm, Inst *in) {
  uint32_t running = vm_running_warps(vm);
  for (unsigned i = 0; i < in->nin; i++) {
    const Val *v = &vm->slots[in->in[i]];
    if (v->kind != V_TILE || (in->code == TL_OP_TL_DOT_ASYNC && i == 2))
      continue;
    const Tile *t = v->obj;
    if (t->dot && vm_dot_in_flight(vm, t->dot, running)) {
      vm_error(vm, in->op,
               "operand #%u is the result of a tl.dot_async still in flight "
               "(no tl.dot_wait has retired it)",
               i);
      vm_note(vm, t->dot_op, "the tl.dot_async");
      return false;
    }
  }
  /* An op that defines registers a product in flight reads as a. */
  for (size_t r = 0; r < vm->dot_regs.len; r++) {
    const DotReg *d = &vm->dot_regs.data[r];
    if (!dot_rec_has(vm, d->dot, running))
      continue;
    for (unsigned i = 0; i < in->nout; i++)
      if (in->out[i] == d->slot) {
        vm_error(vm, in->op,
                 "defines result #%u again while a tl.dot_async in flight "
                 "reads it as its a (no tl.dot_wait has retired the dot): "
                 "the dot reads those registers until it retires; wait for "
                 "it first, or give the next product its own a",
                 i);
        vm_note(vm, d->op, "the tl.dot_async");
        return false;
      }
  }
  return true;
}

void vm_dot_regs_add(TlVm *vm, Inst *in, uint32_t dot) {
  size_t keep = 0; /* drop the retired ones first */
  for (size_t r = 0; r < vm->dot_regs.len; r++)
    if (dot_rec_has(vm, vm->dot_regs.data[r].dot, ~0u))
      vm->dot_regs.data[keep++] = vm->dot_regs.data[r];
  vm->dot_regs.len = keep;
  for (unsigned i = 0; i < in->naregs; i++) {
    DotReg d = {in->aregs[i], dot, in->op};
    tl_vec_push(&vm->dot_regs, d);
  }
}

/*===--- Rings ------------------------------------------------------------===*/

/* Whether the producer holds step k of r (acquired, not committed: the
 * step its copies fill), and the words before r->committed that say so
 * in a message ("" when it holds that step, else "none; the next is "). */
static bool producer_holds(const Ring *r, int64_t k) {
  return k == r->committed && k < r->acquired;
}

static const char *held_text(const Ring *r) {
  return r->committed < r->acquired ? "" : "none; the next is ";
}

static Ring *ring_of(TlVm *vm, uint32_t id) {
  for (Ring *r = vm->rings; r; r = r->next)
    if (r->id == id)
      return r;
  TL_UNREACHABLE("an element names a ring of the block");
}

/* Whether the running warps may read element x (index idx of s), which a
 * copy of step x->step of its ring filled: each waited for the step and
 * has not released it. */
static bool ring_read_ok(TlVm *vm, Inst *in, int rank, const int64_t *idx,
                         const SElem *x) {
  Ring *r = ring_of(vm, x->ring);
  uint32_t warps = vm_running_warps(vm);
  for (int64_t w = 0; w < vm->nwarps; w++) {
    if (!(warps >> w & 1))
      continue;
    char ib[256];
    if (r->waited[w] <= (int64_t)x->step) {
      vm_fmt_index(ib, sizeof ib, rank, idx);
      vm_error(vm, in->op,
               "reads element %s of the shared tile, which step %u of the "
               "ring fills, before warp %lld waits for that step "
               "(tl.ring_wait)",
               ib, x->step, (long long)w);
      vm_note(vm, x->wop, "the copy");
      return false;
    }
    if (r->released[w] > (int64_t)x->step) {
      vm_fmt_index(ib, sizeof ib, rank, idx);
      vm_error(vm, in->op,
               "reads element %s of the shared tile, which step %u of the "
               "ring fills, after warp %lld released that step "
               "(tl.ring_release): the producer may be filling the slot "
               "again",
               ib, x->step, (long long)w);
      vm_note(vm, x->wop, "the copy");
      return false;
    }
  }
  return true;
}

/* Reads element idx of the shared view s for `reader` (a thread or
 * T_MANY) into *v, with the checks of a shared read: in bounds, not
 * pending behind a copy, written, and no race with its writer (for an
 * element a ring's copy filled, that the running warps waited for the
 * step and hold it). */
static bool read_shared_elem(TlVm *vm, Inst *in, SView *s, int rank,
                             const int64_t *idx, int reader, uint64_t *v) {
  char ib[256], wb[32], rb[32];
  int64_t f = 0;
  if (!shared_index(vm, in, s, idx, "reads", &f))
    return false;
  int64_t o = storage_at(s, f);
  SElem *x = &s->mem->st[o];
  if (x->ring) {
    if (!ring_read_ok(vm, in, rank, idx, x))
      return false;
    *v = s->mem->v[o];
    return true;
  }
  if (x->pending) {
    vm_fmt_index(ib, sizeof ib, rank, idx);
    vm_error(vm, in->op,
             "reads element %s of the shared tile while a "
             "tl.copy_async into it is pending (no "
             "tl.copy_async_wait has completed it)",
             ib);
    vm_note(vm, x->wop, "the copy starts here");
    return false;
  }
  if (!x->init) {
    vm_fmt_index(ib, sizeof ib, rank, idx);
    vm_error(vm, in->op,
             "reads element %s of the shared tile, which was "
             "never written",
             ib);
    vm_note(vm, s->mem->alloc_op, "allocated here");
    return false;
  }
  if (x->epoch == vm->epoch && x->writer != T_NONE &&
      (x->writer == T_BLOCK || reader != x->writer)) {
    vm_fmt_index(ib, sizeof ib, rank, idx);
    if (x->writer == T_BLOCK) {
      vm_error(vm, in->op,
               "data race on element %s of the shared tile: "
               "written by tl.copy_async and read by %s with no "
               "tl.synchronize after the tl.copy_async_wait",
               ib, thread_name(reader, rb, sizeof rb));
      vm_note(vm, x->wop, "the copy starts here");
    } else {
      vm_error(vm, in->op,
               "data race on element %s of the shared tile: "
               "written by %s and read by %s with no "
               "tl.synchronize in between",
               ib, thread_name(x->writer, wb, sizeof wb),
               thread_name(reader, rb, sizeof rb));
      vm_note(vm, x->wop, "written here");
    }
    return false;
  }
  fresh(vm, x);
  if (x->reader == T_NONE)
    x->reader = (int16_t)reader;
  else if (x->reader != reader)
    x->reader = T_MANY;
  *v = s->mem->v[o];
  return true;
}

static bool exec_load_shared(TlVm *vm, Inst *in) {
  TlType *rt = tl_value_type(tl_op_result(in->op, 0));
  SView *s = live_shared(vm, in, 0);
  if (!s)
    return false;
  int rank;
  int64_t shape[TL_LAYOUT_MAX_RANK], off[TL_LAYOUT_MAX_RANK];
  int64_t j[TL_LAYOUT_MAX_RANK], idx[TL_LAYOUT_MAX_RANK];
  tile_shape(rt, &rank, shape);
  read_offsets(vm, in, 1, rank, off);
  const LTab *lt = vm_ltab(vm, tl_reg_layout(rt));
  int32_t *mine = vm_warp_holders(vm, lt);
  Tile *t = tile_new(vm, rt, mine != NULL);
  memset(j, 0, sizeof j);
  for (int64_t e = 0; e < t->n; e++) {
    if (mine && mine[e] < 0) {
      step(j, rank, shape);
      continue;
    }
    if (mine)
      t->undef[e] = 0;
    for (int d = 0; d < rank; d++)
      idx[d] = sat_add(off[d], j[d]);
    int reader = lt->rep > 1 ? T_MANY : lt->owner[e];
    if (!read_shared_elem(vm, in, s, rank, idx, reader, &t->v[e]))
      goto fail;
    step(j, rank, shape);
  }
  tl_free(mine);
  vm_put_tile(vm, in, 0, t);
  return true;
fail:
  tl_free(mine);
  tile_release(t);
  return false;
}

uint64_t *vm_read_shared_operand(TlVm *vm, Inst *in, unsigned i,
                                 uint32_t dot) {
  SView *s = live_shared(vm, in, i);
  if (!s)
    return NULL;
  uint64_t *v = tl_xcalloc((size_t)(s->n ? s->n : 1), sizeof *v);
  int64_t j[TL_LAYOUT_MAX_RANK] = {0};
  for (int64_t e = 0; e < s->n; e++) {
    if (!read_shared_elem(vm, in, s, s->rank, j, T_MANY, &v[e])) {
      tl_free(v);
      return NULL;
    }
    SElem *x = &s->mem->st[storage_at(s, e)];
    if (dot)
      x->dot = dot;
    if (dot && x->ring) { /* for tl.ring_release and dot_free */
      DotRec *d = &vm->dot_recs.data[vm->dot_recs.len - 1];
      DotSlots *ds = d->reads;
      while (ds < d->reads + DOT_RINGS - 1 && ds->ring && ds->ring != x->ring)
        ds++;
      if (ds->ring && ds->ring != x->ring) {
        tl_free(v);
        vm_error(vm, in->op,
                 "a tl.dot_async reads the slots of more than %d rings, "
                 "more than the block VM tracks", DOT_RINGS);
        return NULL;
      }
      if (!ds->ring)
        ds->ring = x->ring, ds->step = ds->step_hi = x->step;
      ds->step = x->step < ds->step ? x->step : ds->step;
      ds->step_hi = x->step > ds->step_hi ? x->step : ds->step_hi;
    }
    step(j, s->rank, s->shape);
  }
  return v;
}

/* Sub-byte elements are stored compactly (element k at bits [k b, k b +
 * b) of the tile), and a thread writes whole bytes: another thread's
 * element written in this epoch in a byte of element o (storage index)
 * is a race with thread w's write. */
static bool byte_shared_ok(TlVm *vm, Inst *in, SView *s, int64_t o, unsigned b,
                           int w, int rank, const int64_t *idx) {
  int64_t lo = o * b / 8 * 8, hi = (o * b + b - 1) / 8 * 8 + 8;
  for (int64_t q = lo / b; q * (int64_t)b < hi && q < s->mem->n; q++) {
    SElem *y = &s->mem->st[q];
    if (q == o || y->epoch != vm->epoch || y->writer == T_NONE ||
        y->writer == w)
      continue;
    char ib[256], wb[32];
    vm_fmt_index(ib, sizeof ib, rank, idx);
    vm_error(vm, in->op,
             "data race on element %s of the shared tile: thread %d "
             "writes a byte that also holds an element written by %s "
             "with no tl.synchronize in between (%u-bit elements share "
             "bytes)",
             ib, w,
             y->writer == T_BLOCK ? "tl.copy_async"
                                  : thread_name(y->writer, wb, sizeof wb),
             b);
    vm_note(vm, y->wop, "written here");
    return false;
  }
  return true;
}

static bool store_shared_elems(TlVm *vm, Inst *in, const Tile *t, SView *s,
                               const LTab *lt, const int32_t *mine);

/* Stores by the elements' owners; in a warp branch, by the running warp's
 * lowest thread holding each. */
static bool exec_store_shared(TlVm *vm, Inst *in) {
  const Tile *t = vm_in(vm, in, 0)->obj;
  SView *s = live_shared(vm, in, 1);
  if (!s)
    return false;
  const LTab *lt = vm_ltab(vm, tl_reg_layout(t->type));
  int32_t *mine = vm_warp_holders(vm, lt);
  bool ok = store_shared_elems(vm, in, t, s, lt, mine);
  tl_free(mine);
  return ok;
}

/* The elements of t that mine gives a writer (all, by their owners, when
 * NULL). */
static bool store_shared_elems(TlVm *vm, Inst *in, const Tile *t, SView *s,
                               const LTab *lt, const int32_t *mine) {
  if (!check_defined(vm, in, t, mine))
    return false;
  unsigned b = tl_type_bitwidth(tl_tensor_elem(t->type));
  int rank;
  int64_t shape[TL_LAYOUT_MAX_RANK], off[TL_LAYOUT_MAX_RANK];
  int64_t j[TL_LAYOUT_MAX_RANK], idx[TL_LAYOUT_MAX_RANK];
  tile_shape(t->type, &rank, shape);
  read_offsets(vm, in, 2, rank, off);
  memset(j, 0, sizeof j);
  char ib[256], wb[32], rb[32];
  for (int64_t e = 0; e < t->n; e++) {
    if (mine && mine[e] < 0) {
      step(j, rank, shape);
      continue;
    }
    for (int d = 0; d < rank; d++)
      idx[d] = sat_add(off[d], j[d]);
    int64_t f = 0;
    if (!shared_index(vm, in, s, idx, "writes", &f))
      return false;
    int64_t o = storage_at(s, f);
    SElem *x = &s->mem->st[o];
    int w = mine ? mine[e] : lt->owner[e];
    if (!dot_free(vm, in, x, rank, idx, "writes"))
      return false;
    if (x->pending) {
      vm_fmt_index(ib, sizeof ib, rank, idx);
      vm_error(vm, in->op,
               "writes element %s of the shared tile while a "
               "tl.copy_async into it is pending",
               ib);
      vm_note(vm, x->wop, "the copy starts here");
      return false;
    }
    if (x->epoch == vm->epoch && ((x->writer != T_NONE && x->writer != w) ||
                                  (x->reader != T_NONE && x->reader != w))) {
      vm_fmt_index(ib, sizeof ib, rank, idx);
      if (x->writer == T_BLOCK) {
        vm_error(vm, in->op,
                 "data race on element %s of the shared tile: "
                 "written by tl.copy_async and then by thread %d "
                 "with no tl.synchronize after the "
                 "tl.copy_async_wait",
                 ib, w);
        vm_note(vm, x->wop, "the copy starts here");
      } else if (x->writer != T_NONE && x->writer != w) {
        vm_error(vm, in->op,
                 "data race on element %s of the shared tile: "
                 "written by thread %d and then by thread %d with "
                 "no tl.synchronize in between",
                 ib, x->writer, w);
        vm_note(vm, x->wop, "first written here");
      } else {
        vm_error(vm, in->op,
                 "data race on element %s of the shared tile: "
                 "read by %s and then written by thread %d with "
                 "no tl.synchronize in between",
                 ib, thread_name(x->reader, rb, sizeof rb), w);
      }
      (void)wb;
      return false;
    }
    if (b < 8 && !byte_shared_ok(vm, in, s, o, b, w, rank, idx))
      return false;
    fresh(vm, x);
    x->writer = (int16_t)w;
    x->init = 1;
    x->wop = in->op;
    x->ring = 0;
    s->mem->v[o] = t->v[e];
    for (int d = rank - 1; d >= 0 && ++j[d] == shape[d]; d--)
      j[d] = 0;
  }
  return true;
}

/*===--- copy_async -------------------------------------------------------===*/

/* Whether the copy may write element x (index j of the shared tile s):
 * no copy into it pending, and no access of this epoch left unordered by
 * a tl.synchronize. */
static bool copy_target_ok(TlVm *vm, Inst *in, const SView *s,
                           const SElem *x, const int64_t *j) {
  char ib[256], rb[32];
  if (!dot_free(vm, in, x, s->rank, j, "copies into"))
    return false;
  if (x->pending) {
    vm_fmt_index(ib, sizeof ib, s->rank, j);
    vm_error(vm, in->op,
             "copies into element %s of the shared tile while "
             "an earlier tl.copy_async into it is pending",
             ib);
    vm_note(vm, x->wop, "the earlier copy starts here");
    return false;
  }
  if (x->epoch == vm->epoch && (x->writer != T_NONE || x->reader != T_NONE)) {
    vm_fmt_index(ib, sizeof ib, s->rank, j);
    if (x->writer == T_BLOCK)
      vm_error(vm, in->op,
               "data race on element %s of the shared tile: "
               "copied again with no tl.synchronize after the "
               "tl.copy_async_wait of the earlier copy",
               ib);
    else if (x->writer != T_NONE)
      vm_error(vm, in->op,
               "data race on element %s of the shared tile: "
               "written by thread %d and then copied into with "
               "no tl.synchronize in between",
               ib, x->writer);
    else
      vm_error(vm, in->op,
               "data race on element %s of the shared tile: "
               "read by %s and then copied into with no "
               "tl.synchronize in between",
               ib, thread_name(x->reader, rb, sizeof rb));
    return false;
  }
  return true;
}

/* Element x (storage so of s's memory) now waits for the open group. */
static void copy_pending(TlVm *vm, Inst *in, SView *s, SElem *x) {
  x->pending = vm->open_group;
  x->wop = in->op;
  x->ring = 0;
  s->mem->npending++;
}

/* Whether a copy of step k of ring r may write element x (index j of s):
 * no product in flight reads it, and the step that filled it before (of
 * this ring) is one that step k's tl.ring_acquire waited for, released by
 * every warp that waited for it; other elements by copy_target_ok. */
static bool ring_target_ok(TlVm *vm, Inst *in, const SView *s, const SElem *x,
                           const int64_t *j, const Ring *r, int64_t k) {
  if (x->ring != r->id)
    return copy_target_ok(vm, in, s, x, j);
  if (!dot_free(vm, in, x, s->rank, j, "copies into"))
    return false;
  char ib[256];
  int64_t prev = x->step;
  if (prev + r->stages > k) {
    vm_fmt_index(ib, sizeof ib, s->rank, j);
    vm_error(vm, in->op,
             "copies step %lld into element %s of the shared tile, which "
             "step %lld filled: a step may reuse only the slot of a step at "
             "least %u earlier (its tl.ring_acquire waits for that one's "
             "release)",
             (long long)k, ib, (long long)prev, r->stages);
    vm_note(vm, x->wop, "the copy of step %lld", (long long)prev);
    return false;
  }
  for (int64_t w = 0; w < vm->nwarps; w++)
    if (r->waited[w] > prev && r->released[w] <= prev) {
      vm_fmt_index(ib, sizeof ib, s->rank, j);
      vm_error(vm, in->op,
               "copies step %lld into element %s of the shared tile, which "
               "step %lld filled, but warp %lld waited for step %lld and "
               "has not released it (tl.ring_release)",
               (long long)k, ib, (long long)prev, (long long)w,
               (long long)prev);
      return false;
    }
  return true;
}

/* tl.copy_async through a tensor map (TMA): the box at the coordinates
 * (outermost first) of the map's tensor, elements outside it 0. The map
 * (TL's encoding, bound by bind_tensor_map) gives the sizes and byte
 * strides of the tensor in its buffer; the shared tile's layout was
 * checked to be where TMA puts the box, so the copy is by index. */
static bool exec_copy_tma(TlVm *vm, Inst *in) {
  SView *s = live_shared(vm, in, 0);
  if (!s)
    return false;
  Ring *ring = NULL;
  int64_t step = 0;
  if (tl_copy_async_ring(in->op)) {
    ring = vm_in(vm, in, in->nin - 2)->obj;
    step = vm_int_operand(vm, in, in->nin - 1);
    if (!producer_holds(ring, step))
      return vm_error(vm, in->op,
                      "copies into step %lld of the ring, but the step the "
                      "producer holds is %s%lld (tl.ring_acquire a step, "
                      "copy into its slot, then tl.ring_commit it)",
                      (long long)step, held_text(ring),
                      (long long)ring->committed);
  }
  unsigned p = (unsigned)vm_in(vm, in, 1)->bits;
  const TlVmArg *a = &vm->args[p];
  TlTensorMapDesc d;
  if (!tl_tensor_map_decode(a->map, &d, NULL))
    TL_UNREACHABLE("the map was checked when bound");
  /* Races are tracked on the buffer parameter sharing the map's memory. */
  int track = -1;
  for (unsigned k = 0; k < vm->user_nargs && track < 0; k++)
    if (vm->args[k].kind == TL_VM_ARG_BUFFER && vm->args[k].data == a->data &&
        a->data)
      track = (int)k;
  int rank = s->rank;
  int64_t c[TL_LAYOUT_MAX_RANK], j[TL_LAYOUT_MAX_RANK] = {0};
  read_offsets(vm, in, 2, rank, c);
  for (int k = 0; k < rank; k++)
    if (c[k] < INT32_MIN || c[k] > INT32_MAX)
      return vm_error(vm, in->op,
                      "coordinate %d is %lld, outside the 32-bit range of "
                      "TMA coordinates",
                      k, (long long)c[k]);
  uint64_t eb = d.elem_bytes;
  /* The innermost coordinate in whole 16-byte chunks (an H100 raises an
   * illegal instruction otherwise). */
  if ((c[rank - 1] * (int64_t)eb) % 16)
    return vm_error(vm, in->op,
                    "the innermost coordinate %lld is %lld bytes into the "
                    "row, not a multiple of 16 (TMA copies whole 16-byte "
                    "chunks)",
                    (long long)c[rank - 1], (long long)(c[rank - 1] * (int64_t)eb));
  /* The lowering's ring of R mbarriers carries group G in the barrier of
   * group G - R: that group must have completed, and every thread passed
   * its wait, before this copy can join G (docs/lowering.md). */
  if (vm->tma_kernel != vm->kernel) {
    vm->tma_kernel = vm->kernel;
    vm->tma_ring = tl_kernel_tma_ring(vm->kernel);
  }
  uint32_t G = vm->open_group, R = vm->tma_ring;
  if (!ring && G > R) {
    uint32_t g = G - R;
    if (g > vm->done_group)
      return vm_error(vm, in->op,
                      "a copy through a tensor map joins group %u while group "
                      "%u, %u groups earlier, is still pending (the lowering "
                      "keeps %u groups in flight at most: wait for it first)",
                      G, g, R, R);
    if (vm->group_epoch[g % 256] == vm->epoch)
      return vm_error(vm, in->op,
                      "a copy through a tensor map joins group %u with no "
                      "tl.synchronize after the tl.copy_async_wait that "
                      "completed group %u, %u groups earlier (the lowering "
                      "reuses its mbarrier)",
                      G, g, R);
  }
  /* TMA writes to 128-byte aligned addresses, a swizzled box to 1024-byte
   * aligned ones; tiles are placed so (exec/analysis/shared_plan.c), and
   * a view must keep it. */
  int64_t start = storage_at(s, 0) * (int64_t)eb, align = d.swizzle ? 1024 : 128;
  if (start % align)
    return vm_error(vm, in->op,
                    "the destination starts at byte %lld of its shared tile, "
                    "not a multiple of %lld as a copy through a tensor map "
                    "needs",
                    (long long)start, (long long)align);
  for (int64_t e = 0; e < s->n; e++) {
    int64_t so = storage_at(s, e);
    SElem *x = &s->mem->st[so];
    if (ring ? !ring_target_ok(vm, in, s, x, j, ring, step)
             : !copy_target_ok(vm, in, s, x, j))
      return false;
    /* Map dimension k is the tile's dimension rank - 1 - k. */
    bool inside = true;
    uint64_t byte = d.base;
    for (int k = 0; k < rank && inside; k++) {
      int64_t i = sat_add(c[rank - 1 - k], j[rank - 1 - k]);
      inside = i >= 0 && (uint64_t)i < d.dims[k];
      if (inside)
        byte += (uint64_t)i * (k ? d.strides[k - 1] : eb);
    }
    uint64_t v = 0;
    if (inside) {
      if (byte + eb > a->size) {
        char ib[256];
        int64_t idx[TL_LAYOUT_MAX_RANK];
        for (int dd = 0; dd < rank; dd++)
          idx[dd] = sat_add(c[dd], j[dd]);
        vm_fmt_index(ib, sizeof ib, rank, idx);
        return vm_error(vm, in->op,
                        "copies element %s of the tensor map's tensor, at "
                        "byte %llu, outside the %zu bytes of its buffer",
                        ib, (unsigned long long)byte, a->size);
      }
      int64_t o = (int64_t)(byte / eb);
      if (track >= 0 &&
          !gtrack(vm, in, track, o, T_MANY, false, false, false))
        return false;
      v = buf_load(a, o);
    }
    s->mem->v[so] = v;
    if (ring) {
      /* Landed for the warps that wait for the step (ring_read_ok). */
      x->ring = ring->id;
      x->step = (uint32_t)step;
      x->wop = in->op;
      x->init = 1;
      x->epoch = vm->epoch;
      x->writer = T_BLOCK;
      x->reader = T_NONE;
    } else {
      copy_pending(vm, in, s, x);
    }
    for (int dd = rank - 1; dd >= 0 && ++j[dd] == s->shape[dd]; dd--)
      j[dd] = 0;
  }
  return true;
}

static bool exec_copy_async(TlVm *vm, Inst *in) {
  if (tl_type_is_tensormap(tl_value_type(tl_op_operand(in->op, 1))))
    return exec_copy_tma(vm, in);
  SView *s = live_shared(vm, in, 0);
  if (!s)
    return false;
  const GView *g = vm_in(vm, in, 1)->obj;
  const TlVmArg *a = &vm->args[g->param];
  bool masked = tl_op_attr(in->op, "masked") != NULL;
  int64_t off[TL_LAYOUT_MAX_RANK], j[TL_LAYOUT_MAX_RANK] = {0};
  int64_t idx[TL_LAYOUT_MAX_RANK];
  read_offsets(vm, in, 2, s->rank, off);
  for (int64_t e = 0; e < s->n; e++) {
    int64_t so = storage_at(s, e);
    SElem *x = &s->mem->st[so];
    if (!copy_target_ok(vm, in, s, x, j))
      return false;
    for (int d = 0; d < s->rank; d++)
      idx[d] = sat_add(off[d], j[d]);
    int64_t o;
    int r = global_at(vm, in, g, idx, masked, "copies", -1, &o);
    if (r < 0)
      return false;
    if (r && !gtrack(vm, in, g->param, o, T_MANY, false, false, false))
      return false;
    s->mem->v[so] = r ? buf_load(a, o) : 0;
    copy_pending(vm, in, s, x);
    for (int d = s->rank - 1; d >= 0 && ++j[d] == s->shape[d]; d--)
      j[d] = 0;
  }
  return true;
}

static void complete_groups(TlVm *vm, uint32_t upto) {
  if (upto <= vm->done_group)
    return;
  for (uint32_t g = upto - vm->done_group > 256 ? upto - 255 : vm->done_group + 1;
       g <= upto; g++)
    vm->group_epoch[g % 256] = vm->epoch;
  vm->done_group = upto;
  for (Shared *s = vm->shared; s; s = s->next) {
    if (!s->npending)
      continue;
    for (int64_t e = 0; e < s->n; e++) {
      SElem *x = &s->st[e];
      if (x->pending && x->pending <= upto) {
        x->pending = 0;
        x->init = 1;
        x->epoch = vm->epoch;
        x->writer = T_BLOCK;
        x->reader = T_NONE;
        s->npending--;
      }
    }
  }
}

static bool exec_alloc_ring(TlVm *vm, Inst *in) {
  /* Run again (in a loop), it sets the same barriers up anew. */
  for (Ring *old = vm->rings; old; old = old->next)
    if (old->op == in->op &&
        !ring_settled(vm, old, "when tl.alloc_ring sets its barriers up again"))
      return false;
  TlType *t = tl_value_type(tl_op_result(in->op, 0));
  Ring *r = TL_ARENA_NEW(&vm->block_arena, Ring);
  memset(r, 0, sizeof *r);
  r->id = ++vm->nrings;
  r->stages = tl_ring_stages(t);
  r->consumers = tl_ring_consumers(t);
  r->op = in->op;
  size_t nw = (size_t)vm->nwarps;
  r->waited = TL_ARENA_NEWN(&vm->block_arena, int64_t, nw);
  r->released = TL_ARENA_NEWN(&vm->block_arena, int64_t, nw);
  r->rel_step = TL_ARENA_NEWN(&vm->block_arena, int64_t, r->stages);
  r->rel_count = TL_ARENA_NEWN(&vm->block_arena, unsigned, r->stages);
  memset(r->waited, 0, sizeof *r->waited * nw);
  memset(r->released, 0, sizeof *r->released * nw);
  for (unsigned i = 0; i < r->stages; i++)
    r->rel_step[i] = -1, r->rel_count[i] = 0;
  r->next = vm->rings;
  vm->rings = r;
  Val v = {V_RING, 0, r};
  val_set(&vm->slots[in->out[0]], v);
  return true;
}

/* The block VM runs each warp branch warp after warp, in program order:
 * a wait that nothing before it completes would never end there. */
static const char *const program_order =
    "the block VM runs warp branches one warp after another in program "
    "order, where this wait would never end: in each iteration, put the "
    "producer's branch before the consumers'";

/* The same in a warp branch whose warps run as threads: every warp left
 * waits for another. */
static const char *const no_warp_can =
    "every warp left in the warp branch waits for another, so this wait "
    "would never end (a deadlock)";

/* A ring wait that cannot go on yet: in a warp branch whose warps run as
 * threads, the others run meanwhile (true: look again); false otherwise,
 * with vm->failed set when the run was aborted (the error reported). */
static bool wait_again(TlVm *vm) {
  return vm->coop && vm_coop_block(vm);
}

/* The ring ops, for each running warp: the producer acquires and commits
 * the steps in order; each consumer warp waits for and releases them in
 * order (docs/langref.md, "Rings"). */
static bool exec_ring_op(TlVm *vm, Inst *in) {
  Ring *r = vm_in(vm, in, 0)->obj;
  int64_t k = vm_int_operand(vm, in, 1);
  uint32_t warps = vm_running_warps(vm);
  if (k < 0)
    return vm_error(vm, in->op, "step %lld of the ring is negative",
                    (long long)k);
  unsigned slot = (unsigned)(k % r->stages);
  for (int64_t w = 0; w < vm->nwarps; w++) {
    if (!(warps >> w & 1))
      continue;
    switch (in->code) {
    case TL_OP_TL_RING_ACQUIRE:
      if (k != r->acquired)
        return vm_error(vm, in->op,
                        "warp %lld acquires step %lld of the ring, but the "
                        "producer's next step is %lld (the producer takes "
                        "the steps 0, 1, 2, ... in order, in one warp)",
                        (long long)w, (long long)k, (long long)r->acquired);
      while (k >= r->stages && (r->rel_step[slot] != k - r->stages ||
                                r->rel_count[slot] < r->consumers)) {
        if (wait_again(vm))
          continue;
        if (vm->failed)
          return false;
        return vm_error(vm, in->op,
                        "waits for the %u consumer warps to release step "
                        "%lld (slot %u), but %u have: %s",
                        r->consumers, (long long)(k - r->stages), slot,
                        r->rel_step[slot] == k - r->stages ? r->rel_count[slot]
                                                           : 0,
                        vm->coop ? no_warp_can : program_order);
      }
      r->acquired++;
      break;
    case TL_OP_TL_RING_COMMIT:
      if (!producer_holds(r, k))
        return vm_error(vm, in->op,
                        "warp %lld commits step %lld of the ring, but the "
                        "step the producer holds is %s%lld",
                        (long long)w, (long long)k, held_text(r),
                        (long long)r->committed);
      r->committed++;
      vm->coop_progress++;
      break;
    case TL_OP_TL_RING_WAIT:
      if (k != r->waited[w])
        return vm_error(vm, in->op,
                        "warp %lld waits for step %lld of the ring, but its "
                        "next step is %lld (each warp waits for the steps "
                        "0, 1, 2, ... in order)",
                        (long long)w, (long long)k, (long long)r->waited[w]);
      while (k >= r->committed) {
        if (wait_again(vm))
          continue;
        if (vm->failed)
          return false;
        return vm_error(vm, in->op,
                        "warp %lld waits for step %lld of the ring, which is "
                        "not committed: %s",
                        (long long)w, (long long)k,
                        vm->coop ? no_warp_can : program_order);
      }
      r->waited[w]++;
      break;
    default: /* TL_OP_TL_RING_RELEASE */
      if (k != r->released[w] || k >= r->waited[w])
        return vm_error(vm, in->op,
                        "warp %lld releases step %lld of the ring, but %s",
                        (long long)w, (long long)k,
                        k >= r->waited[w] ? "has not waited for it "
                                            "(tl.ring_wait)"
                                          : "releases the steps in order");
      for (size_t i = 0; i < vm->dot_recs.len; i++) {
        const DotRec *d = &vm->dot_recs.data[i];
        for (int o = 0; o < DOT_RINGS; o++) {
          const DotSlots *s = &d->reads[o];
          if (d->warps >> w & 1 && s->ring == r->id && s->step <= k) {
            vm_error(vm, in->op,
                     "warp %lld releases step %lld of the ring while a "
                     "tl.dot_async that reads the slot of step %u is in "
                     "flight (retire it with tl.dot_wait first)",
                     (long long)w, (long long)k, s->step);
            vm_note(vm, d->op, "the tl.dot_async");
            return false;
          }
        }
      }
      if (r->rel_step[slot] != k)
        r->rel_step[slot] = k, r->rel_count[slot] = 0;
      if (++r->rel_count[slot] > r->consumers)
        return vm_error(vm, in->op,
                        "step %lld of the ring is released by %u warps, but "
                        "the ring has %u consumers",
                        (long long)k, r->rel_count[slot], r->consumers);
      r->released[w]++;
      vm->coop_progress++;
      break;
    }
  }
  return true;
}

bool vm_exec_memory(TlVm *vm, Inst *in) {
  switch (in->code) {
  case TL_OP_TL_LOAD_GLOBAL:
  case TL_OP_TL_STORE_GLOBAL:
  case TL_OP_TL_COPY_ASYNC:
  case TL_OP_TL_ATOMIC_RMW:
  case TL_OP_TL_ATOMIC_CAS:
  case TL_OP_TL_FENCE:
  case TL_OP_TL_LOAD_SCALAR:
  case TL_OP_TL_GATHER:
    vm->stamp++; /* the global-memory ops, in the order they run */
    break;
  default:
    break;
  }
  switch (in->code) {
  case TL_OP_TL_VIEW_GLOBAL:
    return exec_view_global(vm, in);
  case TL_OP_TL_LOAD_GLOBAL:
    return exec_load_global(vm, in);
  case TL_OP_TL_STORE_GLOBAL:
    return exec_store_global(vm, in);
  case TL_OP_TL_ATOMIC_RMW:
  case TL_OP_TL_ATOMIC_CAS:
    return exec_atomic(vm, in);
  case TL_OP_TL_FENCE:
    return exec_fence(vm, in);
  case TL_OP_TL_LOAD_SCALAR:
    return exec_load_scalar(vm, in);
  case TL_OP_TL_GATHER:
    return exec_gather(vm, in);
  case TL_OP_TL_ALLOC_SHARED:
    return exec_alloc_shared(vm, in);
  case TL_OP_TL_ALLOC_GLOBAL:
    return exec_alloc_global(vm, in);
  case TL_OP_TL_FREE_SHARED:
    return exec_free_shared(vm, in);
  case TL_OP_TL_LOAD_SHARED:
    return exec_load_shared(vm, in);
  case TL_OP_TL_STORE_SHARED:
    return exec_store_shared(vm, in);
  case TL_OP_TL_COPY_ASYNC:
    return exec_copy_async(vm, in);
  case TL_OP_TL_COPY_ASYNC_COMMIT:
    vm->open_group++;
    return true;
  case TL_OP_TL_COPY_ASYNC_WAIT: {
    /* Committed groups are open_group - 1 down to done_group + 1; all but
     * the newest imm of them complete. */
    int64_t upto = (int64_t)vm->open_group - 1 - in->imm;
    if (upto > 0)
      complete_groups(vm, (uint32_t)upto);
    return true;
  }
  case TL_OP_TL_DOT_WAIT:
    dot_wait(vm, in->imm);
    return true;
  case TL_OP_TL_ALLOC_RING:
    return exec_alloc_ring(vm, in);
  case TL_OP_TL_RING_ACQUIRE:
  case TL_OP_TL_RING_COMMIT:
  case TL_OP_TL_RING_WAIT:
  case TL_OP_TL_RING_RELEASE:
    return exec_ring_op(vm, in);
  case TL_OP_TL_SYNCHRONIZE:
    vm->epoch++;
    return true;
  case TL_OP_TL_SET_MAX_REGISTERS: {
    /* The block VM has no registers to reallocate. It checks that "dec"
     * does not raise a warpgroup's count above the one its last
     * tl.set_max_registers set, nor "inc" lower it (the count at entry is
     * ptxas's); whether whole warpgroups run it, the thread-level VM
     * checks after the lowering. */
    TlAttr *ca = tl_op_attr(in->op, "count"), *aa = tl_op_attr(in->op, "action");
    int64_t count = ca ? tl_attr_int_value(ca) : 0;
    const char *action = aa ? tl_attr_string_value(aa, NULL) : "";
    bool dec = !strcmp(action, "dec");
    uint32_t warps = vm_running_warps(vm);
    for (int w = 0; w < vm->nwarps && w < 32; w++) {
      if (!(warps >> w & 1))
        continue;
      int64_t *cur = &vm->wg_regs[w / 4];
      if (*cur && (dec ? count > *cur : count < *cur))
        return vm_error(vm, in->op,
                        "warpgroup %d %s its registers to %lld, but its "
                        "count is %lld (set by its last "
                        "tl.set_max_registers): \"%s\" must not %s it",
                        w / 4, dec ? "lowers" : "raises", (long long)count,
                        (long long)*cur, action, dec ? "raise" : "lower");
    }
    for (int w = 0; w < vm->nwarps && w < 32; w++)
      if (warps >> w & 1)
        vm->wg_regs[w / 4] = count;
    return true;
  }
  case TL_OP_TL_SLICE: /* of shared tiles (compile_op sends them here) */
  case TL_OP_TL_RESHAPE:
  case TL_OP_TL_PERMUTE:
    return exec_shared_view(vm, in);
  default:
    TL_UNREACHABLE("not a memory op");
  }
}
