/* The lowering state shared by the files of lower-tl-to-simt (driver.c
 * describes the pass): the lowered form of each value, the Lower struct,
 * small emission helpers, and the functions one file of the lowering calls
 * in another, all prefixed lw_. Internal to passes/lower_tl_to_simt/.
 *
 * Representation. A register tile becomes, in each thread, the thread's
 * local elements packed little-endian into 32-bit words (u32): element i of
 * b bits occupies bits [i*b, i*b + b) of the word stream, so a value may
 * straddle two words. This is exactly the bit string tl.view reinterprets,
 * so a view costs nothing, and it is the register form mma fragments and
 * ldmatrix results have (two f16 per word, element 0 low). Scalars stay the
 * SSA values they are; a global view becomes its pointer, sizes and
 * strides; a shared tile its first byte and its layout; the thread's index
 * within the block is read once. */
#ifndef TL_LOWER_TL_TO_SIMT_LOWER_H
#define TL_LOWER_TL_TO_SIMT_LOWER_H

#include "tl/analysis.h"
#include "tl/arch.h"
#include "tl/build.h"
#include "tl/dialects.h"
#include "tl/predicates.h"
#include "tl/simt.h"
#include "tl/tl.h"

#include <string.h>

/*===--- Lowered values --------------------------------------------------===*/

/* A register tile in one thread: its local elements, packed. */
typedef struct Tile {
  TlType *type; /* the !tl.reg type */
  unsigned nwords;
  TlValue **words;
} Tile;

/* A global view (tl.view_global, tl.alloc_global). */
typedef struct View {
  TlValue *ptr; /* !simt.ptr<global> */
  unsigned rank;
  TlValue *dims[TL_LAYOUT_MAX_RANK];    /* i64 */
  TlValue *strides[TL_LAYOUT_MAX_RANK]; /* i64, in elements */
  TlType *elem;
} View;

/* A shared tile: its first byte and its layout (element offsets). */
typedef struct Smem {
  TlValue *base; /* !simt.ptr<shared> */
  TlSharedLayout layout;
  TlType *elem;
} Smem;

/* What a value of the kernel lowered to: one of scalar, tile, view and
 * smem is set. */
typedef struct Entry {
  TlValue *from;
  TlValue *scalar;
  Tile *tile;
  View *view;
  Smem *smem;
} Entry;

/* A tl.alloc_ring and the byte offset of its barriers (ring.c). */
typedef struct RingPlace {
  TlOp *op;
  int64_t off;
} RingPlace;

/* The lowering of one kernel. */
typedef struct Lower {
  TlContext *ctx;
  const TlArch *arch; /* the target (its shared memory, its mma forms) */
  TlModule *module;
  TlBuilder b; /* its location: the op being lowered */
  TL_VEC(Entry) map;
  size_t *slots; /* the map's index: entry + 1 by the value's hash, 0 free */
  size_t nslots; /* a power of two, at least twice the entries */
  TlValue *tid;          /* thread index (i32) */
  TlValue *workspace;    /* the launch's global workspace (!simt.ptr<global>) */
  TlAnalysis *facts;     /* divisibility of the kernel's values */
  TlUniformity *uni;     /* the kernel's warp branches */
  int warp_branch;       /* > 0 while lowering inside a warp branch */
  unsigned threads;      /* threads per block */
  int64_t scratch_base;  /* shared scratch for reductions and broadcasts:
                            byte offset */
  int64_t scratch_bytes; /* its size, the most any op needs */
  bool tma;              /* the kernel copies through tensor maps (tma.c) */
  unsigned tma_ring;     /* its mbarriers */
  int64_t tma_bars;      /* their byte offset in shared memory */
  int64_t tma_counts;    /* the threads' commit counters (u32): offset */
  TL_VEC(RingPlace) rings; /* the kernel's rings (ring.c) */
  int64_t ring_end;      /* the end of their barriers: byte offset */
  bool proxy_fences;     /* shared bytes pass between the generic and the
                            async proxy: fence.proxy.async at releases
                            and barriers (lw_plan_proxy_fences) */
  TL_VEC(TlOp *) mixed_tiles; /* the tl.alloc_shared tiles both proxies
                            reach: fenced before each async access */
  bool all_mixed;        /* every tile counts as one (planned tiles share
                            bytes, or a tile of no tl.alloc_shared) */
  bool failed;
  TlArena arena;
} Lower;

/*===--- Emission helpers ------------------------------------------------===*/

/* Ops are built at L's builder, located at the op being lowered: by the
 * typed builders of tl/build.h (tl_arith_addi(&L->b, x, y),
 * tl_simt_fma(&L->b, a, b, c), ...), by tl_build with an op id, or by the
 * helpers below for the simt ops the lowering builds most. */

static inline TlType *lw_u32(Lower *L) {
  return tl_type_int(L->ctx, 32, false);
}
static inline TlType *lw_i32(Lower *L) { return tl_type_int(L->ctx, 32, true); }
static inline TlType *lw_i64(Lower *L) { return tl_type_int(L->ctx, 64, true); }

static inline unsigned lw_elem_bits(const TlType *reg) {
  return tl_type_bitwidth(tl_tensor_elem(reg));
}

/* Whether t is the float type of e exponent and m mantissa bits. */
static inline bool lw_is_f(const TlType *t, unsigned e, unsigned m) {
  return tl_type_is_float(t) && tl_type_float_exp(t) == e &&
         tl_type_float_man(t) == m;
}

/* An i64 attribute (sizes, indices, alignments), and a string one. */
static inline TlAttr *lw_int(Lower *L, int64_t v) {
  return tl_attr_int(L->ctx, lw_i64(L), v);
}

static inline TlAttr *lw_str(Lower *L, const char *s) {
  return tl_attr_string(L->ctx, s, strlen(s));
}

static inline TlValue *lw_cst(Lower *L, TlType *t, int64_t v) {
  return tl_arith_constant(&L->b, tl_attr_int(L->ctx, t, v), L->b.loc);
}

/* The op `id`, of the class BINARY, of a and b. */
static inline TlValue *lw_binary(Lower *L, TlOpId id, TlValue *a, TlValue *b) {
  TlValue *ops[2] = {a, b};
  return tl_build1(&L->b, id, 2, ops, tl_value_type(a));
}

/* The !simt.ptr p advanced by off bytes (an i64). */
static inline TlValue *lw_ptr_add(Lower *L, TlValue *p, TlValue *off) {
  TlValue *ops[2] = {p, off};
  return tl_build1(&L->b, TL_OP_SIMT_PTR_ADD, 2, ops, tl_value_type(p));
}

/* A value of type t loaded from p, and x stored to p; a nonzero `align`
 * is the alignment in bytes the address is promised to have. */
static inline TlValue *lw_load(Lower *L, TlValue *p, TlType *t,
                               unsigned align) {
  TlOp *op = tl_build(&L->b, TL_OP_SIMT_LOAD, 1, &p, 1, &t);
  if (align)
    tl_op_set_attr(op, "align", lw_int(L, align));
  return tl_op_result(op, 0);
}

static inline void lw_store(Lower *L, TlValue *x, TlValue *p, unsigned align) {
  TlValue *ops[2] = {x, p};
  TlOp *op = tl_build(&L->b, TL_OP_SIMT_STORE, 2, ops, 0, NULL);
  if (align)
    tl_op_set_attr(op, "align", lw_int(L, align));
}

/* Element i, of type t, of the vector x. */
static inline TlValue *lw_extract(Lower *L, TlValue *x, TlType *t, int64_t i) {
  TlOp *op = tl_build(&L->b, TL_OP_SIMT_EXTRACT, 1, &x, 1, &t);
  tl_op_set_attr(op, "index", lw_int(L, i));
  return tl_op_result(op, 0);
}

/* Waits for every thread of the block (bar.sync 0). */
static inline void lw_barrier(Lower *L) {
  tl_build(&L->b, TL_OP_SIMT_BARRIER, 0, NULL, 0, NULL);
}

/* The i32 index that op `id` (simt.thread_id, simt.block_id) reads along
 * dimension dim, "x", "y" or "z". */
static inline TlValue *lw_index_reg(Lower *L, TlOpId id, const char *dim) {
  TlType *t = lw_i32(L);
  TlOp *op = tl_build(&L->b, id, 0, NULL, 1, &t);
  tl_op_set_attr(op, "dim", lw_str(L, dim));
  return tl_op_result(op, 0);
}

/*===--- core.c: the value map, tiles, indices, accesses -----------------===*/

/* The value map: what each value of the tl kernel lowered to. A lookup of
 * a value lowered to another kind (or not yet) gives NULL. */
void lw_put_scalar(Lower *L, TlValue *from, TlValue *to);
void lw_put_tile(Lower *L, TlValue *from, Tile *t);
void lw_put_view(Lower *L, TlValue *from, View *v);
void lw_put_smem(Lower *L, TlValue *from, Smem *m);
TlValue *lw_scalar(Lower *L, TlValue *v);
Tile *lw_tile_of(Lower *L, TlValue *v);
View *lw_view_of(Lower *L, TlValue *v);
Smem *lw_smem_of(Lower *L, TlValue *v);
/* Reports that op cannot be lowered (the first time only); returns false. */
bool lw_fail(Lower *L, TlOp *op, const char *msg);
/* Reports that op needs target feature `feature`: "WHAT, which TARGET
 * lacks (targets with it: ...)[; HINT]" (hint may be NULL). */
bool lw_fail_feature(Lower *L, TlOp *op, const char *what, unsigned feature,
                     const char *hint);
/* An integer of any width and signedness as i32 (truncated or extended)
 * or as i64. */
TlValue *lw_to_i32(Lower *L, TlValue *v);
TlValue *lw_to_i64(Lower *L, TlValue *v);

/* Tiles: the number of words of a !tl.reg type's tile; lw_new_tile
 * leaves the words unset, lw_zero_tile sets them to 0. */
unsigned lw_tile_words(TlType *reg);
Tile *lw_new_tile(Lower *L, TlType *reg);
Tile *lw_zero_tile(Lower *L, TlType *reg);
TlValue *lw_tile_bits(Lower *L, Tile *t, int64_t pos, unsigned n);
TlValue *lw_get_elem(Lower *L, Tile *t, unsigned i);
void lw_set_elem(Lower *L, Tile *t, unsigned i, TlValue *v);
void lw_set_elem64(Lower *L, Tile *t, unsigned i, TlValue *v);
void lw_copy_elem(Lower *L, Tile *dst, unsigned i, Tile *src, unsigned j);
TlValue *lw_decode(Lower *L, Tile *t, unsigned i, TlType **ct);
void lw_encode(Lower *L, Tile *t, unsigned i, TlValue *v);

/* Logical indices of a thread's local elements, and what the layouts and
 * the divisibility facts tell of them. */
void lw_index_of(Lower *L, const TlLayout *l, int64_t local, TlValue **idx);
void lw_index_at(Lower *L, const TlLayout *l, TlValue *thread, TlValue *local,
                 TlValue **idx);
void lw_const_index(const TlLayout *l, int64_t local, int64_t *c);
int64_t lw_pow2_factor(int64_t x);
int64_t lw_spatial_div(const TlLayout *l, int d);
int64_t lw_local_run(const TlLayout *l, int64_t i, int64_t *ci);
int64_t lw_offset_div(Lower *L, TlValue *v);

/* Memory accesses of 1 to 16 bytes from and to tile elements. */
TlType *lw_access_type(Lower *L, unsigned bytes);
TlValue *lw_gather_access(Lower *L, Tile *t, int64_t i, int64_t w);
void lw_scatter_access(Lower *L, Tile *t, int64_t i, int64_t w, TlValue *x);

/* One writer per element, and code under a condition: lw_scf_if builds
 * an scf.if on cond with results of types res[0..n) and two regions
 * without blocks. */
TlValue *lw_writer_guard(Lower *L, const TlLayout *l);
TlOp *lw_scf_if(Lower *L, TlValue *cond, unsigned n, TlType *const *res);
TlBuilder lw_open_guard(Lower *L, TlValue *cond);
void lw_close_guard(Lower *L, TlBuilder saved);

/*===--- The lowering of each op (false after a diagnostic) --------------===*/

/* global.c */
bool lw_lower_alloc_global(Lower *L, TlOp *op);
bool lw_lower_view_global(Lower *L, TlOp *op);
bool lw_lower_load_global(Lower *L, TlOp *op);
bool lw_lower_store_global(Lower *L, TlOp *op);
bool lw_lower_copy_async(Lower *L, TlOp *op);
bool lw_lower_atomic(Lower *L, TlOp *op);
bool lw_lower_fence(Lower *L, TlOp *op);
bool lw_lower_load_scalar(Lower *L, TlOp *op);
bool lw_lower_gather(Lower *L, TlOp *op);

/* shared.c, and the addresses and runs of shared tiles */
bool lw_lower_alloc_shared(Lower *L, TlOp *op);
bool lw_lower_load_shared(Lower *L, TlOp *op);
bool lw_lower_store_shared(Lower *L, TlOp *op);
bool lw_lower_shared_view(Lower *L, TlOp *op, Smem *src);
TlValue *lw_smem_addr(Lower *L, Smem *m, TlValue **off, TlValue **idx);
bool lw_smem_runs(const TlSharedLayout *l, int64_t w);
void lw_put_bits(Lower *L, Tile *t, int64_t pos, unsigned n, TlValue *v);

/* elementwise.c */
bool lw_lower_alloc_register(Lower *L, TlOp *op);
bool lw_lower_reinterpret(Lower *L, TlOp *op);
bool lw_lower_cast(Lower *L, TlOp *op);
bool lw_lower_elementwise(Lower *L, TlOp *op);
bool lw_lower_fma(Lower *L, TlOp *op);
bool lw_lower_unary(Lower *L, TlOp *op);
bool lw_lower_math(Lower *L, TlOp *op);
bool lw_lower_cmp(Lower *L, TlOp *op);
bool lw_lower_where(Lower *L, TlOp *op);

/* reduce.c, and the shared scratch (placed after the planned tiles) that
 * an op needing `bytes` of it gets after a barrier keeping its earlier
 * users ahead */
TlValue *lw_scratch(Lower *L, int64_t bytes);
bool lw_lower_broadcast(Lower *L, TlOp *op);
/* Fills t (its type's shape, layout and element type) with x broadcast
 * along x's size-1 dimensions, as tl.broadcast does; false after a
 * diagnostic at op. */
bool lw_broadcast_tile(Lower *L, TlOp *op, Tile *x, Tile *t);
bool lw_lower_reduce(Lower *L, TlOp *op);

/* dot.c, and wgmma.c for the dots of shared tiles */
bool lw_lower_dot(Lower *L, TlOp *op);
bool lw_lower_dot_wgmma(Lower *L, TlOp *op);

/* tma.c: copies through tensor maps, and the mbarrier ring of their
 * commit groups. lw_tma_begin sets the ring up at kernel start (nothing
 * without TMA copies; false after a diagnostic when the target has no
 * TMA); the others add to the lowering of tl.copy_async_commit, wait N
 * and tl.synchronize (nothing without TMA copies). */
bool lw_tma_begin(Lower *L, TlOp *kernel);
/* Whether the kernel's shared tiles need fence.proxy.async: false when
 * every tile that TMA writes or wgmma reads is accessed by nothing else
 * (no ld/st.shared, no cp.async, no bytes shared with another tile by the
 * plan), so the async proxy's accesses are ordered by the mbarriers and
 * wgmma's waits alone. */
void lw_plan_proxy_fences(Lower *L, TlOp *kernel);
/* Whether the async proxy's accesses to the shared tile need a
 * fence.proxy.async before them (the generic proxy reaches its bytes). */
bool lw_tile_mixed(Lower *L, TlValue *tile);
bool lw_lower_copy_tma(Lower *L, TlOp *op);
/* A copy through a tensor map: its destination, map, coordinates (i32,
 * innermost first) and box bytes. lw_issue_tma emits it, completing on
 * mbarrier bar, in the threads that run it (the caller's guard): the
 * proxy fence where needed, the expected bytes, the load. */
typedef struct TmaCopy {
  Smem *m;
  TlValue *map;
  TlValue *coords[3];
  unsigned rank;
  int64_t bytes;
  bool mixed; /* the generic proxy reaches the tile (lw_tile_mixed) */
} TmaCopy;
void lw_issue_tma(Lower *L, const TmaCopy *c, TlValue *bar);
void lw_tma_commit(Lower *L);
void lw_tma_wait(Lower *L, int64_t pending);
void lw_tma_synchronize(Lower *L);
/* Polls simt.mbarrier_try_wait on bar with parity (i32) until it returns
 * true, in every thread that runs it. */
void lw_mbarrier_poll(Lower *L, TlValue *bar, TlValue *parity);

/* ring.c: lw_rings_begin places the kernel's rings after the planned
 * tiles (false after a diagnostic when the target has no TMA); the copy
 * into a ring's slot is lw_lower_copy_tma's, issued by lane 0 of each
 * warp that runs it on the slot's full barrier (coords innermost first). */
bool lw_rings_begin(Lower *L, TlOp *kernel);
bool lw_lower_alloc_ring(Lower *L, TlOp *op);
bool lw_lower_ring_op(Lower *L, TlOp *op);
bool lw_lower_copy_ring(Lower *L, TlOp *op, const TmaCopy *c);

/* print.c */
bool lw_lower_print(Lower *L, TlOp *op);

#endif
