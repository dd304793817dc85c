/* The shared-memory plan of a tl.kernel: every tl.alloc_shared gets a byte
 * offset in the kernel's dynamic shared memory, so that two tiles whose
 * lifetimes overlap never share a byte.
 *
 * Lifetimes are intervals of program positions: the ops of the kernel are
 * numbered in pre-order (an op before the ops nested in it), and an op with
 * regions spans the numbers of everything nested in it. A tile lives from
 * its tl.alloc_shared to the last tl.free_shared of it in a block where the
 * free runs whenever the allocation has: the allocation's block (SSA
 * visibility allows no enclosing block; a free nested in an scf.if or a
 * loop may be skipped, and is ignored). With no such free the tile lives
 * to the end of the kernel. Every loop (an op with regions other than
 * scf.if) enclosing the allocation stretches the interval over the whole
 * loop. That costs reuse inside loop bodies but makes tiles that share
 * bytes never lie in one loop, so all accesses to the earlier tile precede
 * all accesses to the later one and one barrier separates them. Tiles are
 * then placed in program order, each at the lowest offset, a multiple of
 * its alignment, that overlaps no tile already placed whose interval meets
 * its own (first fit). */
#include "tl/analysis.h"
#include "tl/layout.h"
#include "tl/tl.h"


/*===--- Sizes and alignments --------------------------------------------===*/

static int64_t pow2_ceil(int64_t x) {
  int64_t p = 1;
  while (p < x)
    p <<= 1;
  return p;
}

int64_t tl_shared_type_bytes(const TlType *t) {
  TlSharedLayout l;
  if (tl_tensor_kind(t) != TL_TENSOR_SHARED ||
      !tl_shared_type_layout(t, &l, NULL))
    return -1;
  int64_t bits = tl_type_bitwidth(tl_tensor_elem(t));
  return (tl_shared_layout_cosize(&l) * bits + 7) / 8;
}

int64_t tl_shared_type_alignment(const TlType *t) {
  if (tl_tensor_kind(t) != TL_TENSOR_SHARED)
    return -1;
  int b, m, s;
  tl_shared_type_swizzle(t, &b, &m, &s);
  if (b == 0)
    return 16;
  /* The swizzle permutes element offsets within blocks of 2^(B+M+S)
   * elements. A tile starting at a multiple of the block (in bytes) lets
   * the lowering apply the XOR to absolute shared addresses, and keeps the
   * bank pattern the layout was designed for. */
  int64_t bits = tl_type_bitwidth(tl_tensor_elem(t));
  int64_t block = pow2_ceil(((INT64_C(1) << (b + m + s)) * bits + 7) / 8);
  return block > 16 ? block : 16;
}

/* TMA writes a box to a shared address that is a multiple of 128 bytes,
 * and a swizzled box to one of 1024 (the repeat of the swizzle pattern,
 * docs/simt.md): a tile that a tl.copy_async through a tensor map writes,
 * itself or through its views, is aligned so (0: no such copy). */
static int64_t tma_alignment(TlValue *tile) {
  int64_t a = 0;
  for (TlUse *u = tl_value_first_use(tile); u; u = tl_use_next(u)) {
    TlOp *o = tl_use_owner(u);
    int64_t want = 0;
    switch (tl_op_id(o)) {
    case TL_OP_TL_COPY_ASYNC: {
      TlType *src = tl_value_type(tl_op_operand(o, 1));
      if (tl_use_operand_index(u) == 0 && tl_type_is_tensormap(src))
        want = tl_tensormap_swizzle(src) ? 1024 : 128;
      break;
    }
    case TL_OP_TL_SLICE:
    case TL_OP_TL_RESHAPE:
    case TL_OP_TL_PERMUTE:
      if (tl_use_operand_index(u) == 0)
        want = tma_alignment(tl_op_result(o, 0));
      break;
    default:
      break;
    }
    if (want > a)
      a = want;
  }
  return a;
}

/*===--- Program positions -----------------------------------------------===*/

typedef struct Span {
  TlOp *op;
  int64_t first, last;
} Span;

typedef struct Alloc {
  TlOp *op;
  int64_t start, end; /* the lifetime, inclusive */
  int64_t size, align, offset;
} Alloc;

typedef struct Walk {
  int64_t next;
  TL_VEC(Span) spans; /* ops with regions */
  TL_VEC(Alloc) allocs;
  TL_VEC(Span) frees; /* op = the tl.free_shared, first = its position */
} Walk;

static void number(TlOp *op, Walk *w) {
  int64_t first = w->next++;
  TlOpId id = tl_op_id(op);
  if (id == TL_OP_TL_ALLOC_SHARED) {
    Alloc a = {op, first, first, 0, 0, 0};
    tl_vec_push(&w->allocs, a);
  } else if (id == TL_OP_TL_FREE_SHARED) {
    Span f = {op, first, first};
    tl_vec_push(&w->frees, f);
  }
  if (!tl_op_num_regions(op))
    return;
  size_t slot = w->spans.len;
  Span s = {op, first, first};
  tl_vec_push(&w->spans, s);
  for (unsigned r = 0; r < tl_op_num_regions(op); r++)
    for (TlBlock *b = tl_region_first_block(tl_op_region(op, r)); b;
         b = tl_block_next(b))
      for (TlOp *o = tl_block_first_op(b); o; o = tl_op_next(o))
        number(o, w);
  w->spans.data[slot].last = w->next - 1;
}

static const Span *span_of(const Walk *w, const TlOp *op) {
  for (size_t i = 0; i < w->spans.len; i++)
    if (w->spans.data[i].op == op)
      return &w->spans.data[i];
  TL_UNREACHABLE("op with regions was not numbered");
}

/* Whether block b is the block of op or of one of its ancestors below
 * kernel (so that code in b after them runs whenever op has run). */
static bool encloses(TlBlock *b, TlOp *op, TlOp *kernel) {
  for (TlOp *o = op; o && o != kernel; o = tl_op_parent(o))
    if (tl_op_block(o) == b)
      return true;
  return false;
}

static void lifetime(Alloc *a, const Walk *w, TlOp *kernel) {
  int64_t end = -1;
  TlValue *tile = tl_op_result(a->op, 0);
  for (size_t i = 0; i < w->frees.len; i++) {
    TlOp *f = w->frees.data[i].op;
    if (tl_op_operand(f, 0) == tile &&
        encloses(tl_op_block(f), a->op, kernel) && w->frees.data[i].first > end)
      end = w->frees.data[i].first;
  }
  a->end = end >= 0 ? end : span_of(w, kernel)->last;
  for (TlOp *o = tl_op_parent(a->op); o && o != kernel; o = tl_op_parent(o)) {
    if (tl_op_id(o) == TL_OP_SCF_IF)
      continue;
    const Span *s = span_of(w, o);
    if (s->first < a->start)
      a->start = s->first;
    if (s->last > a->end)
      a->end = s->last;
  }
}

/*===--- Placement -------------------------------------------------------===*/

static int64_t align_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

/* First fit: raise the offset past every conflicting placed tile until
 * none conflicts (each raise moves past one tile, so this ends). */
static void place(Alloc *allocs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    Alloc *a = &allocs[i];
    int64_t off = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (size_t j = 0; j < i; j++) {
        const Alloc *p = &allocs[j];
        bool live = a->start <= p->end && p->start <= a->end;
        bool bytes = off < p->offset + p->size && p->offset < off + a->size;
        if (live && bytes) {
          off = align_up(p->offset + p->size, a->align);
          moved = true;
        }
      }
    }
    a->offset = off;
  }
}

TlResult tl_plan_shared_memory(TlOp *kernel, int64_t limit) {
  TlContext *ctx = tl_op_context(kernel);
  Walk w = {0};
  TlResult r = TL_FAILURE;
  number(kernel, &w);
  for (size_t i = 0; i < w.allocs.len; i++) {
    Alloc *a = &w.allocs.data[i];
    TlType *t = tl_value_type(tl_op_result(a->op, 0));
    a->size = tl_shared_type_bytes(t);
    a->align = tl_shared_type_alignment(t);
    int64_t tma = tma_alignment(tl_op_result(a->op, 0));
    if (tma > a->align)
      a->align = tma;
    if (a->size < 0 || a->align < 0) {
      tl_op_emit_error(a->op, "the shared tile has no element layout");
      goto out;
    }
    lifetime(a, &w, kernel);
  }
  place(w.allocs.data, w.allocs.len);
  int64_t total = 0;
  for (size_t i = 0; i < w.allocs.len; i++) {
    const Alloc *a = &w.allocs.data[i];
    if (a->offset + a->size > total)
      total = a->offset + a->size;
  }
  if (total > limit) {
    tl_op_emit_error(kernel,
                     "needs %lld bytes of shared memory, more than the limit "
                     "of %lld",
                     (long long)total, (long long)limit);
    goto out;
  }
  TlType *i64 = tl_type_int(ctx, 64, true);
  for (size_t i = 0; i < w.allocs.len; i++) {
    const Alloc *a = &w.allocs.data[i];
    tl_op_set_attr(a->op, "offset", tl_attr_int(ctx, i64, a->offset));
    tl_op_set_attr(a->op, "alignment", tl_attr_int(ctx, i64, a->align));
  }
  tl_op_set_attr(kernel, "smem_bytes", tl_attr_int(ctx, i64, total));
  r = TL_SUCCESS;
out:
  tl_vec_free(&w.spans);
  tl_vec_free(&w.allocs);
  tl_vec_free(&w.frees);
  return r;
}

/*===--- Reading the plan ------------------------------------------------===*/

static bool int_attr(TlOp *op, TlOpId opid, const char *name,
                     int64_t *out) {
  if (!op || tl_op_id(op) != opid)
    return false;
  TlAttr *a = tl_op_attr(op, name);
  if (!a || tl_attr_kind(a) != TL_ATTR_INT)
    return false;
  *out = tl_attr_int_value(a);
  return true;
}

bool tl_shared_offset(TlOp *alloc, int64_t *offset) {
  return int_attr(alloc, TL_OP_TL_ALLOC_SHARED, "offset", offset);
}

bool tl_shared_alignment(TlOp *alloc, int64_t *alignment) {
  return int_attr(alloc, TL_OP_TL_ALLOC_SHARED, "alignment", alignment);
}

int64_t tl_kernel_smem_bytes(TlOp *kernel) {
  int64_t v;
  return int_attr(kernel, TL_OP_TL_KERNEL, "smem_bytes", &v) ? v : -1;
}

typedef struct Reuse {
  TlOp *target;
  int64_t lo, hi; /* the target's bytes [lo, hi) */
  bool done, overlaps;
} Reuse;

static void find_reuse(TlOp *op, void *user) {
  Reuse *r = user;
  int64_t off;
  if (r->done || tl_op_id(op) != TL_OP_TL_ALLOC_SHARED)
    return;
  if (op == r->target) {
    r->done = true;
    return;
  }
  int64_t n = tl_shared_type_bytes(tl_value_type(tl_op_result(op, 0)));
  if (tl_shared_offset(op, &off) && n > 0 && off < r->hi && r->lo < off + n)
    r->overlaps = true;
}

bool tl_shared_reuses(TlOp *alloc) {
  int64_t off;
  TlOp *kernel = alloc ? tl_enclosing_kernel(alloc) : NULL;
  if (!kernel || !tl_shared_offset(alloc, &off))
    return false;
  int64_t n = tl_shared_type_bytes(tl_value_type(tl_op_result(alloc, 0)));
  Reuse r = {alloc, off, off + (n > 0 ? n : 0), false, false};
  tl_op_walk(kernel, find_reuse, &r, false);
  return r.overlaps;
}

/*===--- The global workspace --------------------------------------------===*/

int64_t tl_global_workspace_bytes_of(const TlType *t) {
  int64_t n = 1;
  for (unsigned d = 0; d < tl_tensor_rank(t); d++)
    n *= tl_tensor_dim(t, d);
  return (n * tl_type_bitwidth(tl_tensor_elem(t)) + 7) / 8;
}

typedef struct Workspace {
  TlContext *ctx;
  int64_t total;
} Workspace;

static void place_global(TlOp *op, void *user) {
  Workspace *w = user;
  if (tl_op_id(op) != TL_OP_TL_ALLOC_GLOBAL)
    return;
  int64_t at = (w->total + 255) / 256 * 256;
  tl_op_set_attr(op, "offset", tl_attr_int(w->ctx, tl_type_int(w->ctx, 64, true), at));
  w->total = at + tl_global_workspace_bytes_of(tl_value_type(tl_op_result(op, 0)));
}

void tl_plan_global_workspace(TlOp *kernel) {
  Workspace w = {tl_op_context(kernel), 0};
  tl_op_walk(kernel, place_global, &w, false);
  tl_op_set_attr(kernel, "workspace_bytes",
                 tl_attr_int(w.ctx, tl_type_int(w.ctx, 64, true), w.total));
}
