/* lower-tl-to-simt: turns each tl.kernel into one thread's program, a
 * builtin func with the `kernel` attribute written in simt, arith and scf
 * (what tl-llc compiles), as Tilus §8.1 does.
 *
 * Representation. A register tile becomes, in each thread, the thread's
 * local elements packed little-endian into 32-bit words (u32): element i of
 * b bits occupies bits [i*b, i*b + b) of the word stream, so a value may
 * straddle two words. This is exactly the bit string tl.view reinterprets,
 * so a view costs nothing, and it is the register form mma fragments and
 * ldmatrix results have (two f16 per word, element 0 low). Scalars stay the
 * SSA values they are; a global view becomes its pointer, sizes and
 * strides; the thread's index within the block is read once.
 *
 * Instruction selection (docs/lowering.md):
 *   - tl.dot becomes mma.sync when the operand layouts are tilings of the
 *     fragment atoms of an mma form for their types (f16/bf16 m16n8k16 and
 *     m16n8k8, i8/u8 m16n8k32, u1 m16n8k256 and m8n8k128; decided by
 *     layout division), one instruction per (m, n, k) block, k ascending;
 *   - global and shared loads and stores move the widest runs (up to 16
 *     bytes) the layouts and the alignment analysis allow; shared loads
 *     whose register layout tiles the ldmatrix fragment use ldmatrix;
 *   - casts from types of at most 8 bits to f16, bf16 and f32 run the dtype
 *     library's register recipes (lop3/prmt/magic-number programs); f32
 *     pairs into f16/bf16 use one cvt.rn.{f16,bf16}x2.f32; other casts
 *     decode each element to a 32-bit int or f32 and encode it again.
 * What is not lowered yet is reported at the op, never miscompiled.
 *
 * Requires: verified IR. Guarantees: no tl op is left; the funcs verify. */
#include "cast_recipe.h"
#include "small_float.h"
#include "passes_internal.h"
#include "tl/analysis.h"
#include "tl/dialects.h"
#include "tl/dtype.h"
#include "tl/simt.h"
#include "tl/tl.h"

#include <stdio.h>
#include <string.h>

/* The most dynamic shared memory a block may use (sm_90's 227 KB). */
#define TL_SMEM_LIMIT 232448

const TlPassOptionDef tl_pass_lower_tl_to_simt_options[] = {{NULL, 0, NULL, NULL}};

/*===--- Lowered values --------------------------------------------------===*/

typedef struct Tile {
  TlType *type; /* the !tl.reg type */
  unsigned nwords;
  TlValue **words;
} Tile;

typedef struct View {
  TlValue *ptr;              /* !simt.ptr<global> */
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

typedef struct Entry {
  TlValue *from;
  TlValue *scalar;
  Tile *tile;
  View *view;
  Smem *smem;
} Entry;

typedef struct Lower {
  TlContext *ctx;
  TlModule *module;
  TlBuilder b;
  TlLoc loc;
  TL_VEC(Entry) map;
  TlValue *tid;     /* thread index (i32) */
  TlValue *workspace; /* the launch's global workspace (!simt.ptr<global>) */
  TlAnalysis *facts; /* divisibility of the kernel's values */
  unsigned threads; /* threads per block */
  int64_t scratch_base;  /* shared scratch for reductions: byte offset */
  int64_t scratch_bytes; /* its size, the most any op needs */
  bool failed;
  TlArena arena;
} Lower;

static Entry *find(Lower *L, TlValue *v) {
  for (size_t i = L->map.len; i-- > 0;)
    if (L->map.data[i].from == v)
      return &L->map.data[i];
  return NULL;
}

static void put_scalar(Lower *L, TlValue *from, TlValue *to) {
  Entry e = {from, to, NULL, NULL, NULL};
  tl_vec_push(&L->map, e);
}

static void put_tile(Lower *L, TlValue *from, Tile *t) {
  Entry e = {from, NULL, t, NULL, NULL};
  tl_vec_push(&L->map, e);
}

static TlValue *scalar(Lower *L, TlValue *v) {
  Entry *e = find(L, v);
  return e ? e->scalar : NULL;
}

static Tile *tile_of(Lower *L, TlValue *v) {
  Entry *e = find(L, v);
  return e ? e->tile : NULL;
}

static bool fail(Lower *L, TlOp *op, const char *msg) {
  if (!L->failed)
    tl_op_emit_error(op, "cannot lower to simt yet: %s", msg);
  L->failed = true;
  return false;
}

/*===--- Emission helpers ------------------------------------------------===*/

static TlType *u32(Lower *L) { return tl_type_int(L->ctx, 32, false); }
static TlType *i32(Lower *L) { return tl_type_int(L->ctx, 32, true); }
static TlType *i64(Lower *L) { return tl_type_int(L->ctx, 64, true); }

static TlValue *cst(Lower *L, TlType *t, int64_t v) {
  return tl_arith_constant(&L->b, tl_attr_int(L->ctx, t, v), L->loc);
}

static TlValue *op1(Lower *L, const char *name, TlValue *a, TlType *rt) {
  return tl_op_result(tl_builder_create(&L->b, name, L->loc, 1, &a, 1, &rt), 0);
}

static TlValue *op2(Lower *L, const char *name, TlValue *a, TlValue *b) {
  TlValue *ops[2] = {a, b};
  TlType *t = tl_value_type(a);
  return tl_op_result(tl_builder_create(&L->b, name, L->loc, 2, ops, 1, &t), 0);
}

/* Creates an op with attributes given as name/attr pairs. */
static TlOp *make(Lower *L, const char *name, unsigned nops, TlValue *const *ops,
                  unsigned nres, TlType *const *res, unsigned nattrs,
                  const TlNamedAttr *attrs) {
  TlOpState st;
  tl_op_state_init(&st, L->ctx, tl_context_op_def(L->ctx, name), L->loc);
  tl_op_state_add_operands(&st, nops, ops);
  for (unsigned i = 0; i < nres; i++)
    tl_op_state_add_result(&st, res[i]);
  for (unsigned i = 0; i < nattrs; i++)
    tl_op_state_set_attr(&st, attrs[i].name, attrs[i].attr);
  return tl_builder_insert(&L->b, &st);
}

static TlAttr *str(Lower *L, const char *s) { return tl_attr_string(L->ctx, s, strlen(s)); }

/* An index value as i64 (arith.exti extends by the source's signedness). */
static TlValue *to_i64(Lower *L, TlValue *v) {
  TlType *t = tl_value_type(v);
  if (t == i64(L))
    return v;
  if (tl_type_int_width(t) == 64)
    return op1(L, "arith.bitcast", v, i64(L));
  return op1(L, "arith.exti", v, i64(L));
}

/* arith.cmpi by the operands' signedness, and arith.select. */
static TlValue *cmpu(Lower *L, const char *pred, TlValue *x, TlValue *y) {
  TlType *i1 = tl_type_bool(L->ctx);
  TlNamedAttr p = {"predicate", str(L, pred)};
  TlValue *o[2] = {x, y};
  return tl_op_result(make(L, "arith.cmpi", 2, o, 1, &i1, 1, &p), 0);
}

static TlValue *sel(Lower *L, TlValue *c, TlValue *x, TlValue *y) {
  TlValue *o[3] = {c, x, y};
  TlType *t = tl_value_type(x);
  return tl_op_result(make(L, "arith.select", 3, o, 1, &t, 0, NULL), 0);
}

/*===--- Tiles -----------------------------------------------------------===*/

static unsigned elem_bits(const TlType *reg) { return tl_type_bitwidth(tl_tensor_elem(reg)); }

static Tile *new_tile(Lower *L, TlType *reg) {
  Tile *t = TL_ARENA_NEW(&L->arena, Tile);
  t->type = reg;
  int64_t bits = tl_layout_local_size(tl_reg_layout(reg)) * elem_bits(reg);
  t->nwords = (unsigned)((bits + 31) / 32);
  t->words = TL_ARENA_NEWN(&L->arena, TlValue *, t->nwords ? t->nwords : 1);
  return t;
}

static Tile *zero_tile(Lower *L, TlType *reg) {
  Tile *t = new_tile(L, reg);
  TlValue *z = cst(L, u32(L), 0);
  for (unsigned i = 0; i < t->nwords; i++)
    t->words[i] = z;
  return t;
}

static uint32_t mask_of(unsigned b) { return b >= 32 ? 0xffffffffu : (1u << b) - 1; }

/* Bits [pos, pos + n) of t's bit string (n <= 32), zero-extended into a
 * u32. */
static TlValue *tile_bits(Lower *L, Tile *t, int64_t pos, unsigned n) {
  unsigned w = (unsigned)(pos / 32), o = (unsigned)(pos % 32);
  TlValue *v = t->words[w];
  if (o)
    v = op2(L, "arith.shri", v, cst(L, u32(L), o));
  if (o + n > 32) {
    TlValue *hi = op2(L, "arith.shli", t->words[w + 1], cst(L, u32(L), 32 - o));
    v = op2(L, "arith.ori", v, hi);
  }
  if (n < 32)
    v = op2(L, "arith.andi", v, cst(L, u32(L), mask_of(n)));
  return v;
}

/* Element i (b bits, zero-extended into a u32). */
static TlValue *get_elem(Lower *L, Tile *t, unsigned i) {
  unsigned b = elem_bits(t->type);
  return tile_bits(L, t, (int64_t)i * b, b);
}

/* Stores the low b bits of v (a u32) as element i. */
static void set_elem(Lower *L, Tile *t, unsigned i, TlValue *v) {
  unsigned b = elem_bits(t->type), p = i * b, w = p / 32, o = p % 32;
  if (b < 32)
    v = op2(L, "arith.andi", v, cst(L, u32(L), mask_of(b)));
  if (b == 32) {
    t->words[w] = v;
    return;
  }
  TlValue *keep = op2(L, "arith.andi", t->words[w],
                      cst(L, u32(L), (int64_t)(uint32_t)~(mask_of(b) << o)));
  TlValue *sh = o ? op2(L, "arith.shli", v, cst(L, u32(L), o)) : v;
  t->words[w] = op2(L, "arith.ori", keep, sh);
  if (o + b > 32) {
    unsigned rest = o + b - 32;
    TlValue *keep2 = op2(L, "arith.andi", t->words[w + 1],
                         cst(L, u32(L), (int64_t)(uint32_t)~mask_of(rest)));
    TlValue *hi = op2(L, "arith.shri", v, cst(L, u32(L), 32 - o));
    t->words[w + 1] = op2(L, "arith.ori", keep2, hi);
  }
}

/* Element i of a tile of 64-bit elements (words 2i and 2i + 1, low word
 * first), as a u64, and its inverse. */
static TlValue *get_elem64(Lower *L, Tile *t, unsigned i) {
  TlType *u64 = tl_type_int(L->ctx, 64, false);
  TlValue *lo = op1(L, "arith.exti", t->words[2 * i], u64);
  TlValue *hi = op1(L, "arith.exti", t->words[2 * i + 1], u64);
  return op2(L, "arith.ori", lo, op2(L, "arith.shli", hi, cst(L, u64, 32)));
}

static void set_elem64(Lower *L, Tile *t, unsigned i, TlValue *v) {
  TlType *u64 = tl_type_int(L->ctx, 64, false);
  t->words[2 * i] = op1(L, "arith.trunci", v, u32(L));
  t->words[2 * i + 1] = op1(L, "arith.trunci", op2(L, "arith.shri", v, cst(L, u64, 32)), u32(L));
}

/* dst's element i = src's element j (tiles of one element type). */
static void copy_elem(Lower *L, Tile *dst, unsigned i, Tile *src, unsigned j) {
  if (elem_bits(dst->type) == 64) {
    dst->words[2 * i] = src->words[2 * j];
    dst->words[2 * i + 1] = src->words[2 * j + 1];
    return;
  }
  set_elem(L, dst, i, get_elem(L, src, j));
}

/* The digits (i64) of thread's spatial modes of layout l: the ravel of
 * its spatial entries over the thread index (i32). Threads beyond the
 * layout's count hold replicas of lower ones: the modulo folds them. */
static void thread_digits(Lower *L, const TlLayout *l, TlValue *thread, TlValue **digit) {
  int64_t below = 1;
  for (int k = l->num_spatial - 1; k >= 0; k--) {
    int m = l->spatial_modes[k];
    int64_t size = m >= 0 ? l->mode_shape[m] : -m;
    if (m >= 0) {
      TlValue *d = below > 1 ? op2(L, "arith.divi", thread, cst(L, i32(L), below)) : thread;
      digit[m] = op1(L, "arith.exti", op2(L, "arith.remi", d, cst(L, i32(L), size)), i64(L));
    }
    below *= size;
  }
}

/* The logical index (i64 per dimension) from a digit per mode: run-time
 * digits where rdigit[m] is set, the constants cdigit[m] elsewhere. */
static void ravel_index(Lower *L, const TlLayout *l, TlValue *const *rdigit,
                        const int64_t *cdigit, TlValue **idx) {
  int m = 0;
  for (int d = 0; d < l->rank; d++) {
    int64_t cval = 0, size = 1;
    TlValue *v = NULL;
    int first = m;
    while (m < l->num_modes && l->mode_dim[m] == d)
      m++;
    for (int k = m - 1; k >= first; k--) {
      if (rdigit[k]) {
        TlValue *term = size > 1 ? op2(L, "arith.muli", rdigit[k], cst(L, i64(L), size))
                                 : rdigit[k];
        v = v ? op2(L, "arith.addi", v, term) : term;
      } else {
        cval += cdigit[k] * size;
      }
      size *= l->mode_shape[k];
    }
    TlValue *c = cst(L, i64(L), cval);
    idx[d] = v ? (cval ? op2(L, "arith.addi", v, c) : v) : c;
  }
}

/* The logical index of local element `local` of the calling thread, per
 * dimension, as i64 values: the spatial part from the thread index, the
 * local part a constant. */
static bool index_of(Lower *L, const TlLayout *l, int64_t local, TlValue **idx) {
  int64_t digit[TL_LAYOUT_MAX_MODES] = {0};
  for (int k = l->num_local - 1; k >= 0; k--) {
    int m = l->local_modes[k];
    digit[m] = local % l->mode_shape[m];
    local /= l->mode_shape[m];
  }
  TlValue *sdigit[TL_LAYOUT_MAX_MODES] = {0};
  thread_digits(L, l, L->tid, sdigit);
  ravel_index(L, l, sdigit, digit, idx);
  return true;
}

/*===--- Global memory ---------------------------------------------------===*/

static View *view_of(Lower *L, TlValue *v) {
  Entry *e = find(L, v);
  return e ? e->view : NULL;
}

/* tl.alloc_global: a row-major view at the planned offset of the
 * workspace parameter. */
static bool lower_alloc_global(Lower *L, TlOp *op) {
  TlAttr *off = tl_op_attr(op, "offset");
  if (!L->workspace || !off)
    return fail(L, op, "a workspace tensor the plan did not place");
  View *v = TL_ARENA_NEW(&L->arena, View);
  TlType *g = tl_value_type(tl_op_result(op, 0));
  TlValue *ops[2] = {L->workspace, cst(L, i64(L), tl_attr_int_value(off))};
  TlType *pt = tl_value_type(L->workspace);
  v->ptr = tl_op_result(make(L, "simt.ptr_add", 2, ops, 1, &pt, 0, NULL), 0);
  v->rank = tl_tensor_rank(g);
  v->elem = tl_tensor_elem(g);
  int64_t run = 1;
  for (int d = (int)v->rank - 1; d >= 0; d--) {
    v->dims[d] = cst(L, i64(L), tl_tensor_dim(g, (unsigned)d));
    v->strides[d] = cst(L, i64(L), run);
    run *= tl_tensor_dim(g, (unsigned)d);
  }
  Entry e = {tl_op_result(op, 0), NULL, NULL, v, NULL};
  tl_vec_push(&L->map, e);
  return true;
}

static bool lower_view_global(Lower *L, TlOp *op) {
  View *v = TL_ARENA_NEW(&L->arena, View);
  TlType *g = tl_value_type(tl_op_result(op, 0));
  v->ptr = scalar(L, tl_op_operand(op, 0));
  v->rank = tl_tensor_rank(g);
  v->elem = tl_tensor_elem(g);
  TlAttr *dims = tl_op_attr(op, "static_dims"), *strides = tl_op_attr(op, "static_strides");
  unsigned next = 1;
  for (unsigned d = 0; d < v->rank; d++) {
    int64_t s = tl_attr_int_value(tl_attr_array_elem(dims, d));
    v->dims[d] = s >= 0 ? cst(L, i64(L), s) : to_i64(L, scalar(L, tl_op_operand(op, next++)));
  }
  if (strides) {
    for (unsigned d = 0; d < v->rank; d++) {
      int64_t s = tl_attr_int_value(tl_attr_array_elem(strides, d));
      v->strides[d] =
          s >= 0 ? cst(L, i64(L), s) : to_i64(L, scalar(L, tl_op_operand(op, next++)));
    }
  } else {
    v->strides[v->rank - 1] = cst(L, i64(L), 1);
    for (int d = (int)v->rank - 2; d >= 0; d--)
      v->strides[d] = op2(L, "arith.muli", v->strides[d + 1], v->dims[d + 1]);
  }
  Entry e = {tl_op_result(op, 0), NULL, NULL, v, NULL};
  tl_vec_push(&L->map, e);
  return true;
}

/* Byte address of element (off + idx) and, for sub-byte types, the bit
 * offset within the byte. */
static TlValue *elem_addr(Lower *L, View *v, TlValue **off, TlValue **idx, TlValue **bitoff) {
  TlValue *lin = NULL;
  for (unsigned d = 0; d < v->rank; d++) {
    TlValue *pos = op2(L, "arith.addi", off[d], idx[d]);
    TlValue *term = op2(L, "arith.muli", pos, v->strides[d]);
    lin = lin ? op2(L, "arith.addi", lin, term) : term;
  }
  unsigned b = tl_type_bitwidth(v->elem);
  TlValue *bytes;
  *bitoff = NULL;
  if (b >= 8) {
    bytes = b == 8 ? lin : op2(L, "arith.muli", lin, cst(L, i64(L), b / 8));
  } else {
    TlValue *bits = op2(L, "arith.muli", lin, cst(L, i64(L), b));
    bytes = op2(L, "arith.divi", bits, cst(L, i64(L), 8));
    *bitoff = op1(L, "arith.trunci", op2(L, "arith.remi", bits, cst(L, i64(L), 8)), u32(L));
  }
  TlValue *ops[2] = {v->ptr, bytes};
  TlType *pt = tl_value_type(v->ptr);
  return tl_op_result(make(L, "simt.ptr_add", 2, ops, 1, &pt, 0, NULL), 0);
}

/* The compile-time part of local element i's logical index (its local
 * digits; the spatial part comes from the thread index). */
static void const_index(const TlLayout *l, int64_t local, int64_t *c) {
  int64_t digit[TL_LAYOUT_MAX_MODES] = {0};
  for (int k = l->num_local - 1; k >= 0; k--) {
    int m = l->local_modes[k];
    digit[m] = local % l->mode_shape[m];
    local /= l->mode_shape[m];
  }
  int m = 0;
  for (int d = 0; d < l->rank; d++) {
    int first = m;
    int64_t size = 1;
    c[d] = 0;
    while (m < l->num_modes && l->mode_dim[m] == d)
      m++;
    for (int k = m - 1; k >= first; k--) {
      c[d] += digit[k] * size;
      size *= l->mode_shape[k];
    }
  }
}

static int64_t pow2_factor(int64_t x) {
  return x == 0 ? TL_DIVISIBILITY_MAX : (x & -x) < TL_DIVISIBILITY_MAX ? (x & -x)
                                                                       : TL_DIVISIBILITY_MAX;
}

/* The power of two dividing the thread-dependent part of dimension d of
 * every element's index: the smallest stride of a spatial mode of d. */
static int64_t spatial_div(const TlLayout *l, int d) {
  int64_t div = TL_DIVISIBILITY_MAX, stride = 1;
  for (int m = l->num_modes - 1; m >= 0; m--) {
    if (l->mode_dim[m] != d)
      continue;
    for (int k = 0; k < l->num_spatial; k++)
      if (l->spatial_modes[k] == m && pow2_factor(stride) < div)
        div = pow2_factor(stride);
    stride *= l->mode_shape[m];
  }
  return div;
}

/* How many local elements from i on are consecutive along the last
 * dimension with the other indices fixed; ci gets element i's constant
 * index. */
static int64_t local_run(const TlLayout *l, int64_t i, int64_t *ci) {
  int64_t cj[TL_LAYOUT_MAX_RANK];
  const_index(l, i, ci);
  int64_t n = 1, total = tl_layout_local_size(l);
  while (i + n < total) {
    const_index(l, i + n, cj);
    bool next = cj[l->rank - 1] == ci[l->rank - 1] + n;
    for (int d = 0; d + 1 < l->rank && next; d++)
      next = cj[d] == ci[d];
    if (!next)
      break;
    n++;
  }
  return n;
}

/* The byte alignment of local element i's address in the view of a
 * global access whose tile runs along the view's last dimension at stride
 * 1; *run gets the number of local elements from i on that follow it
 * there. 0 when the view is not known to be contiguous along the tile's
 * last dimension, or when the element may start inside a byte. */
static int64_t run_alignment(Lower *L, TlOp *op, unsigned view_operand, const TlLayout *l,
                             int64_t i, int64_t *run) {
  TlAccessAlignment acc;
  int64_t ci[TL_LAYOUT_MAX_RANK];
  *run = local_run(l, i, ci);
  if (!L->facts || !tl_analysis_access_alignment(L->facts, op, &acc) ||
      acc.contiguous < l->shape[l->rank - 1])
    return 0;
  int64_t div[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < l->rank; d++) {
    div[d] = pow2_factor(ci[d]);
    int64_t sd = spatial_div(l, d);
    if (sd < div[d])
      div[d] = sd;
  }
  unsigned nops = tl_op_num_operands(op);
  TlValue *offs[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < l->rank; d++)
    offs[d] = tl_op_operand(op, nops - (unsigned)l->rank + (unsigned)d);
  return tl_analysis_view_alignment(L->facts, tl_op_operand(op, view_operand), offs, div);
}

/* How many local elements from i on lie at consecutive addresses and can
 * be moved by one access of at most 16 bytes: a run along the last
 * dimension of the tile (whose view stride is 1), cut to the largest power
 * of two whose byte size the start address is known to be aligned to. */
static int64_t vector_run(Lower *L, TlOp *op, unsigned view_operand,
                          const TlLayout *l, int64_t i, unsigned bytes) {
  int64_t n;
  int64_t align = run_alignment(L, op, view_operand, l, i, &n);
  if (bytes == 0 || align == 0)
    return 1;
  int64_t w = 1;
  while (w * 2 <= n && w * 2 * bytes <= 16 && align % (w * 2 * bytes) == 0)
    w *= 2;
  return w;
}

/* The register type of an access of `bytes` bytes (2, 4, 8 or 16). */
static TlType *access_type(Lower *L, unsigned bytes) {
  if (bytes <= 4)
    return tl_type_int(L->ctx, bytes * 8, false);
  return tl_simt_vec_type(L->ctx, bytes / 4, u32(L));
}

static TlNamedAttr align_attr(Lower *L, unsigned bytes) {
  TlNamedAttr a = {"align", tl_attr_int(L->ctx, i64(L), bytes)};
  return a;
}

/* The w elements of t from local element i on (w * bits a whole number of
 * bytes, 2 to 16) as the value of one access: their bits in order, which is
 * the tile's own packing. */
static TlValue *gather_access(Lower *L, Tile *t, int64_t i, int64_t w) {
  unsigned b = elem_bits(t->type), bytes = (unsigned)(w * b / 8);
  TlType *at = access_type(L, bytes);
  Tile tmp = {t->type, bytes >= 4 ? bytes / 4 : 1, NULL};
  TlValue *words[4];
  for (unsigned k = 0; k < 4; k++)
    words[k] = cst(L, u32(L), 0);
  tmp.words = words;
  if ((i * b) % 32 == 0 && bytes >= 4)
    memcpy(words, &t->words[(i * b) / 32], sizeof *words * (bytes / 4));
  else
    for (int64_t j = 0; j < w; j++)
      set_elem(L, &tmp, (unsigned)j, get_elem(L, t, (unsigned)(i + j)));
  if (bytes < 4)
    return op1(L, "arith.trunci", words[0], at);
  if (bytes == 4)
    return words[0];
  return tl_op_result(make(L, "simt.build", bytes / 4, words, 1, &at, 0, NULL), 0);
}

/* The inverse: the value x of one access into w elements of t from i on. */
static void scatter_access(Lower *L, Tile *t, int64_t i, int64_t w, TlValue *x) {
  unsigned b = elem_bits(t->type), bytes = (unsigned)(w * b / 8);
  Tile tmp = {t->type, bytes >= 4 ? bytes / 4 : 1, NULL};
  TlValue *words[4];
  tmp.words = words;
  if (bytes < 4) {
    words[0] = op1(L, "arith.exti", x, u32(L));
  } else if (bytes == 4) {
    words[0] = x;
  } else {
    TlType *ut = u32(L);
    for (unsigned k = 0; k < bytes / 4; k++) {
      TlNamedAttr ix = {"index", tl_attr_int(L->ctx, i64(L), k)};
      words[k] = tl_op_result(make(L, "simt.extract", 1, &x, 1, &ut, 1, &ix), 0);
    }
  }
  if ((i * b) % 32 == 0 && bytes >= 4)
    memcpy(&t->words[(i * b) / 32], words, sizeof *words * (bytes / 4));
  else
    for (int64_t j = 0; j < w; j++)
      set_elem(L, t, (unsigned)(i + j), get_elem(L, &tmp, (unsigned)j));
}

/* Whether element (off + idx) lies inside the view: 0 <= pos < size in
 * every dimension (i1). */
static TlValue *in_view(Lower *L, View *v, TlValue **off, TlValue **idx) {
  TlType *i1 = tl_type_bool(L->ctx);
  TlValue *ok = NULL;
  for (unsigned d = 0; d < v->rank; d++) {
    TlValue *pos = op2(L, "arith.addi", off[d], idx[d]);
    TlNamedAttr ge = {"predicate", str(L, "ge")}, lt = {"predicate", str(L, "lt")};
    TlValue *lo[2] = {pos, cst(L, i64(L), 0)}, *hi[2] = {pos, v->dims[d]};
    TlValue *a = tl_op_result(make(L, "arith.cmpi", 2, lo, 1, &i1, 1, &ge), 0);
    TlValue *b = tl_op_result(make(L, "arith.cmpi", 2, hi, 1, &i1, 1, &lt), 0);
    TlValue *both = op2(L, "arith.andi", a, b);
    ok = ok ? op2(L, "arith.andi", ok, both) : both;
  }
  return ok;
}

/* One element of a masked load: `scf.if ok -> u32 { load } else { 0 }`. */
static TlValue *masked_elem_load(Lower *L, TlValue *ok, TlValue *p, TlType *mem, unsigned b,
                                 TlValue *bitoff) {
  TlOpState st;
  tl_op_state_init(&st, L->ctx, tl_context_op_def(L->ctx, "scf.if"), L->loc);
  tl_op_state_add_operand(&st, ok);
  tl_op_state_add_result(&st, u32(L));
  st.nregions = 2;
  TlOp *nif = tl_builder_insert(&L->b, &st);
  TlBuilder saved = L->b;
  TlBlock *then = tl_block_create(L->module), *other = tl_block_create(L->module);
  tl_region_append_block(tl_op_region(nif, 0), then);
  tl_region_append_block(tl_op_region(nif, 1), other);
  tl_builder_set_end(&L->b, then);
  TlValue *x = tl_op_result(make(L, "simt.load", 1, &p, 1, &mem, 0, NULL), 0);
  if (b < 32)
    x = op1(L, "arith.exti", x, u32(L));
  if (bitoff)
    x = op2(L, "arith.shri", x, bitoff);
  tl_builder_create(&L->b, "scf.yield", L->loc, 1, &x, 0, NULL);
  tl_builder_set_end(&L->b, other);
  TlValue *z = cst(L, u32(L), 0);
  tl_builder_create(&L->b, "scf.yield", L->loc, 1, &z, 0, NULL);
  L->b = saved;
  return tl_op_result(nif, 0);
}

static bool lower_load_global(Lower *L, TlOp *op) {
  View *v = view_of(L, tl_op_operand(op, 0));
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  unsigned b = elem_bits(rt);
  bool masked = tl_op_attr(op, "masked") != NULL;
  bool straddles = b < 8 && 8 % b;
  if (straddles && masked)
    return fail(L, op, "masked global loads of 3, 5, 6 or 7-bit elements (load bytes and "
                       "tl.view them)");
  TlValue *off[TL_LAYOUT_MAX_RANK], *idx[TL_LAYOUT_MAX_RANK];
  for (unsigned d = 0; d < v->rank; d++)
    off[d] = to_i64(L, scalar(L, tl_op_operand(op, 1 + d)));
  Tile *t = zero_tile(L, rt);
  const TlLayout *l = tl_reg_layout(rt);
  TlType *mem = tl_type_int(L->ctx, b < 8 ? 8 : b, false);
  for (int64_t i = 0; i < tl_layout_local_size(l);) {
    index_of(L, l, i, idx);
    TlValue *bitoff;
    TlValue *p = elem_addr(L, v, off, idx, &bitoff);
    int64_t w = b >= 8 && !masked ? vector_run(L, op, 0, l, i, b / 8) : 1;
    if (straddles) {
      /* The element's byte, and the next one only when the element runs
       * into it (so no byte past the element is read). */
      TlValue *lo = op1(L, "arith.exti",
                        tl_op_result(make(L, "simt.load", 1, &p, 1, &mem, 0, NULL), 0), u32(L));
      TlType *i1 = tl_type_bool(L->ctx);
      TlNamedAttr gt = {"predicate", str(L, "gt")};
      TlValue *cmp[2] = {bitoff, cst(L, u32(L), 8 - (int64_t)b)};
      TlValue *spill = tl_op_result(make(L, "arith.cmpi", 2, cmp, 1, &i1, 1, &gt), 0);
      TlValue *ops[2] = {p, cst(L, i64(L), 1)};
      TlType *pt = tl_value_type(p);
      TlValue *next = tl_op_result(make(L, "simt.ptr_add", 2, ops, 1, &pt, 0, NULL), 0);
      TlValue *hi = masked_elem_load(L, spill, next, mem, 8, NULL);
      TlValue *both = op2(L, "arith.ori", lo, op2(L, "arith.shli", hi, cst(L, u32(L), 8)));
      set_elem(L, t, (unsigned)i, op2(L, "arith.shri", both, bitoff));
      i++;
      continue;
    }
    if (masked && b == 64) {
      /* Both words, each 0 outside the view. */
      TlValue *ok = in_view(L, v, off, idx);
      TlValue *ops[2] = {p, cst(L, i64(L), 4)};
      TlType *pt = tl_value_type(p);
      TlValue *hi = tl_op_result(make(L, "simt.ptr_add", 2, ops, 1, &pt, 0, NULL), 0);
      t->words[2 * i] = masked_elem_load(L, ok, p, u32(L), 32, NULL);
      t->words[2 * i + 1] = masked_elem_load(L, ok, hi, u32(L), 32, NULL);
      i++;
      continue;
    }
    if (masked) {
      /* Outside the view the element reads 0 (element by element). */
      set_elem(L, t, (unsigned)i,
               masked_elem_load(L, in_view(L, v, off, idx), p, mem, b, bitoff));
      i++;
      continue;
    }
    if (w > 1 || b == 64) {
      /* One access for w elements: its bytes are the elements' bits in
       * order, which is the tile's own packing. */
      unsigned bytes = (unsigned)w * b / 8;
      TlType *at = access_type(L, bytes);
      TlNamedAttr al = align_attr(L, bytes);
      TlValue *x = tl_op_result(make(L, "simt.load", 1, &p, 1, &at, 1, &al), 0);
      scatter_access(L, t, i, w, x);
      i += w;
      continue;
    }
    TlValue *x = tl_op_result(make(L, "simt.load", 1, &p, 1, &mem, 0, NULL), 0);
    if (b < 32)
      x = op1(L, "arith.exti", x, u32(L));
    if (bitoff)
      x = op2(L, "arith.shri", x, bitoff);
    set_elem(L, t, (unsigned)i, x);
    i++;
  }
  put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/* Whether the calling thread writes a store of a tile in layout l: every
 * element once, by the thread whose replication digits are all 0 (threads
 * beyond the layout's count hold replicas too). NULL when every thread
 * writes. */
static TlValue *writer_guard(Lower *L, const TlLayout *l) {
  TlType *i1 = tl_type_bool(L->ctx);
  TlValue *cond = NULL;
  int64_t below = 1, count = tl_layout_num_threads(l);
  if (count < (int64_t)L->threads) {
    TlNamedAttr lt = {"predicate", str(L, "lt")};
    TlValue *ops[2] = {L->tid, cst(L, i32(L), count)};
    cond = tl_op_result(make(L, "arith.cmpi", 2, ops, 1, &i1, 1, &lt), 0);
  }
  for (int k = l->num_spatial - 1; k >= 0; k--) {
    int m = l->spatial_modes[k];
    int64_t size = m >= 0 ? l->mode_shape[m] : -m;
    if (m < 0 && size > 1) {
      TlValue *d = below > 1 ? op2(L, "arith.divi", L->tid, cst(L, i32(L), below)) : L->tid;
      if (below * size < count)
        d = op2(L, "arith.remi", d, cst(L, i32(L), size));
      TlNamedAttr eq = {"predicate", str(L, "eq")};
      TlValue *ops[2] = {d, cst(L, i32(L), 0)};
      TlValue *c = tl_op_result(make(L, "arith.cmpi", 2, ops, 1, &i1, 1, &eq), 0);
      cond = cond ? op2(L, "arith.andi", cond, c) : c;
    }
    below *= size;
  }
  return cond;
}

/* `scf.if cond {` with the builder in its then block; close_guard ends
 * it. */
static TlBuilder open_guard(Lower *L, TlValue *cond) {
  TlOpState st;
  tl_op_state_init(&st, L->ctx, tl_context_op_def(L->ctx, "scf.if"), L->loc);
  tl_op_state_add_operand(&st, cond);
  st.nregions = 2;
  TlOp *nif = tl_builder_insert(&L->b, &st);
  TlBlock *then = tl_block_create(L->module);
  tl_region_append_block(tl_op_region(nif, 0), then);
  TlBuilder saved = L->b;
  tl_builder_set_end(&L->b, then);
  return saved;
}

static void close_guard(Lower *L, TlBuilder saved) {
  tl_builder_create(&L->b, "scf.yield", L->loc, 0, NULL, 0, NULL);
  L->b = saved;
}

/* Stores of sub-byte elements: a thread writes whole bytes only, so each
 * run of its elements along the view's last dimension must start on a
 * byte boundary (the alignment analysis proves it) and cover whole bytes;
 * the run's bytes go out in the widest accesses their alignment allows. */
static bool store_subbyte(Lower *L, TlOp *op, Tile *t, View *v, TlValue **off) {
  const TlLayout *l = tl_reg_layout(t->type);
  unsigned b = elem_bits(t->type);
  TlValue *idx[TL_LAYOUT_MAX_RANK];
  for (int64_t i = 0; i < tl_layout_local_size(l);) {
    int64_t n, align = run_alignment(L, op, 1, l, i, &n);
    if ((n * b) % 8)
      return fail(L, op, "global stores of sub-byte elements whose runs along the last "
                         "dimension do not cover whole bytes (threads would share bytes)");
    if (align == 0)
      return fail(L, op, "global stores of sub-byte elements not known to start on a byte "
                         "boundary (an `assume` on the pointer or offsets may prove it)");
    index_of(L, l, i, idx);
    TlValue *bitoff;
    TlValue *p = elem_addr(L, v, off, idx, &bitoff);
    TlType *pt = tl_value_type(p);
    int64_t nbytes = n * b / 8;
    for (int64_t done = 0; done < nbytes;) {
      int64_t at = done ? pow2_factor(done) : TL_DIVISIBILITY_MAX;
      if (align < at)
        at = align;
      unsigned cb = 16;
      while (cb > 1 && (cb > nbytes - done || at % cb))
        cb /= 2;
      TlValue *words[4];
      for (unsigned k = 0; k * 4 < cb; k++)
        words[k] = tile_bits(L, t, i * b + done * 8 + k * 32, cb >= 4 ? 32 : cb * 8);
      TlType *ct = cb > 4 ? access_type(L, cb) : NULL;
      TlValue *x;
      if (cb < 4)
        x = op1(L, "arith.trunci", words[0], tl_type_int(L->ctx, cb * 8, false));
      else if (cb == 4)
        x = words[0];
      else
        x = tl_op_result(make(L, "simt.build", cb / 4, words, 1, &ct, 0, NULL), 0);
      TlValue *q = p;
      if (done) {
        TlValue *ops[2] = {p, cst(L, i64(L), done)};
        q = tl_op_result(make(L, "simt.ptr_add", 2, ops, 1, &pt, 0, NULL), 0);
      }
      TlValue *ops[2] = {x, q};
      TlNamedAttr al = align_attr(L, cb);
      make(L, "simt.store", 2, ops, 0, NULL, cb > 1 ? 1 : 0, &al);
      done += cb;
    }
    i += n;
  }
  return true;
}

static bool lower_store_global(Lower *L, TlOp *op) {
  Tile *t = tile_of(L, tl_op_operand(op, 0));
  View *v = view_of(L, tl_op_operand(op, 1));
  unsigned b = elem_bits(t->type);
  bool masked = tl_op_attr(op, "masked") != NULL;
  if (b < 8 && masked)
    return fail(L, op, "masked global stores of sub-byte elements");
  TlValue *off[TL_LAYOUT_MAX_RANK], *idx[TL_LAYOUT_MAX_RANK];
  for (unsigned d = 0; d < v->rank; d++)
    off[d] = to_i64(L, scalar(L, tl_op_operand(op, 2 + d)));
  const TlLayout *l = tl_reg_layout(t->type);
  TlValue *guard = writer_guard(L, l);
  TlBuilder outside = guard ? open_guard(L, guard) : L->b;
  if (b < 8) {
    bool ok = store_subbyte(L, op, t, v, off);
    if (guard)
      close_guard(L, outside);
    return ok;
  }
  TlType *mem = tl_type_int(L->ctx, b, false);
  for (int64_t i = 0; i < tl_layout_local_size(l);) {
    index_of(L, l, i, idx);
    TlValue *bitoff;
    TlValue *p = elem_addr(L, v, off, idx, &bitoff);
    int64_t w = masked ? 1 : vector_run(L, op, 1, l, i, b / 8);
    if (w > 1 || b == 64) {
      unsigned bytes = (unsigned)w * b / 8;
      TlNamedAttr al = align_attr(L, bytes);
      TlValue *ops[2] = {gather_access(L, t, i, w), p};
      /* (w is 1 when masked: outside the view the element is skipped.) */
      TlBuilder inside = masked ? open_guard(L, in_view(L, v, off, idx)) : L->b;
      make(L, "simt.store", 2, ops, 0, NULL, 1, &al);
      if (masked)
        close_guard(L, inside);
      i += w;
      continue;
    }
    TlValue *x = get_elem(L, t, (unsigned)i);
    if (b < 32)
      x = op1(L, "arith.trunci", x, mem);
    TlValue *ops[2] = {x, p};
    /* Outside the view the element is skipped. */
    TlBuilder inside = masked ? open_guard(L, in_view(L, v, off, idx)) : L->b;
    make(L, "simt.store", 2, ops, 0, NULL, 0, NULL);
    if (masked)
      close_guard(L, inside);
    i++;
  }
  if (guard)
    close_guard(L, outside);
  return true;
}

/*===--- Shared memory ---------------------------------------------------===*/

/* tl.alloc_shared: the planned offset past the dynamic shared memory's
 * start. A tile that reuses the bytes of earlier ones first waits for the
 * block (every access to those happened before, docs/analysis.md). */
static bool lower_alloc_shared(Lower *L, TlOp *op) {
  int64_t off;
  TlErr err;
  Smem *m = TL_ARENA_NEW(&L->arena, Smem);
  TlType *st = tl_value_type(tl_op_result(op, 0));
  if (!tl_shared_offset(op, &off))
    return fail(L, op, "a shared tile the plan did not place");
  if (!tl_shared_type_layout(st, &m->layout, &err))
    return fail(L, op, "a shared tile without a layout");
  m->elem = tl_tensor_elem(st);
  if (tl_shared_reuses(op))
    make(L, "simt.barrier", 0, NULL, 0, NULL, 0, NULL);
  TlType *pt = tl_simt_ptr_type(L->ctx, TL_SIMT_SHARED);
  TlValue *b = tl_op_result(make(L, "simt.smem_base", 0, NULL, 1, &pt, 0, NULL), 0);
  if (off) {
    TlValue *ops[2] = {b, cst(L, i64(L), off)};
    b = tl_op_result(make(L, "simt.ptr_add", 2, ops, 1, &pt, 0, NULL), 0);
  }
  m->base = b;
  Entry e = {tl_op_result(op, 0), NULL, NULL, NULL, m};
  tl_vec_push(&L->map, e);
  return true;
}

static Smem *smem_of(Lower *L, TlValue *v) {
  Entry *e = find(L, v);
  return e ? e->smem : NULL;
}

/* The unswizzled element offset of the shared element at (off + idx),
 * idx may be NULL: the layout's mixed radix per dimension, its strides and
 * its base. */
static TlValue *smem_linear(Lower *L, const TlSharedLayout *l, TlValue **off, TlValue **idx) {
  TlValue *lin = cst(L, i64(L), l->base);
  for (int d = 0; d < l->rank; d++) {
    TlValue *pos = idx ? op2(L, "arith.addi", off[d], idx[d]) : off[d];
    /* The dimension's modes, least significant (last) first. */
    int64_t below = 1;
    for (int j = l->num_modes - 1; j >= 0; j--) {
      if (l->mode_dim[j] != d)
        continue;
      bool top = true;
      for (int q = 0; q < j; q++)
        top &= l->mode_dim[q] != d;
      TlValue *dg = pos;
      if (below > 1)
        dg = op2(L, "arith.divi", dg, cst(L, i64(L), below));
      if (!top)
        dg = op2(L, "arith.remi", dg, cst(L, i64(L), l->mode_shape[j]));
      if (l->mode_stride[j] != 1)
        dg = op2(L, "arith.muli", dg, cst(L, i64(L), l->mode_stride[j]));
      lin = op2(L, "arith.addi", lin, dg);
      below *= l->mode_shape[j];
    }
  }
  return lin;
}

/* Byte address of the shared element at (off + idx): its linear offset,
 * then the layout's swizzle. */
static TlValue *smem_addr(Lower *L, Smem *m, TlValue **off, TlValue **idx) {
  const TlSharedLayout *l = &m->layout;
  TlValue *lin = smem_linear(L, l, off, idx);
  if (l->swizzle_bits) {
    int64_t mask = ((INT64_C(1) << l->swizzle_bits) - 1) << l->swizzle_base;
    TlValue *hi = op2(L, "arith.shri", lin, cst(L, i64(L), l->swizzle_shift));
    lin = op2(L, "arith.xori", lin, op2(L, "arith.andi", hi, cst(L, i64(L), mask)));
  }
  /* Sub-byte elements are accessed in whole aligned bytes only. */
  unsigned b = tl_type_bitwidth(m->elem);
  TlValue *bytes = b == 8  ? lin
                   : b > 8 ? op2(L, "arith.muli", lin, cst(L, i64(L), b / 8))
                           : op2(L, "arith.divi", lin, cst(L, i64(L), 8 / b));
  TlValue *ops[2] = {m->base, bytes};
  TlType *pt = tl_value_type(m->base);
  return tl_op_result(make(L, "simt.ptr_add", 2, ops, 1, &pt, 0, NULL), 0);
}

/* Whether every aligned run of w elements along the last dimension of
 * the shared layout is w consecutive elements starting at a multiple of w
 * (so a w-element access of an aligned tile is aligned): an innermost mode
 * of stride 1 that w divides, every other stride and the base multiples of
 * w, and a swizzle that moves whole runs (2^M >= w). */
static bool smem_runs(const TlSharedLayout *l, int64_t w) {
  int inner = -1;
  for (int j = l->num_modes - 1; j >= 0 && inner < 0; j--)
    if (l->mode_dim[j] == l->rank - 1)
      inner = j;
  if (inner < 0 || l->mode_stride[inner] != 1 || l->mode_shape[inner] % w ||
      l->base % w || (l->swizzle_bits && (INT64_C(1) << l->swizzle_base) < w))
    return false;
  for (int j = 0; j < l->num_modes; j++)
    if (j != inner && l->mode_stride[j] % w)
      return false;
  return true;
}

/* The power of two known to divide a tile offset operand. */
static int64_t offset_div(Lower *L, TlValue *v) {
  return L->facts ? tl_analysis_divisibility(L->facts, v) : 1;
}

/* The widest shared access (at most 16 bytes) for local elements i.. of
 * a tile in register layout l at offsets whose last one is `last_off`:
 * consecutive along the last dimension in registers and in shared memory,
 * the first one's index there a multiple of the width. For sub-byte
 * elements a width whose bits are not whole bytes cannot be accessed. */
static int64_t smem_vector_run(Lower *L, const Smem *m, const TlLayout *l, int64_t i,
                               TlValue *last_off) {
  unsigned b = tl_type_bitwidth(m->elem);
  int64_t ci[TL_LAYOUT_MAX_RANK];
  int64_t n = local_run(l, i, ci);
  int64_t div = pow2_factor(ci[l->rank - 1]);
  int64_t sd = spatial_div(l, l->rank - 1), od = offset_div(L, last_off);
  if (sd < div)
    div = sd;
  if (od < div)
    div = od;
  int64_t w = 1;
  while (w * 2 <= n && w * 2 * b <= 128 && div % (w * 2) == 0 && smem_runs(&m->layout, w * 2))
    w *= 2;
  return w;
}

/* The logical index (i64 per dimension) of local element `local` of
 * thread `thread` in layout l, both i32 values known at run time only. */
static void index_at(Lower *L, const TlLayout *l, TlValue *thread, TlValue *local,
                     TlValue **idx) {
  TlValue *digit[TL_LAYOUT_MAX_MODES] = {0};
  int64_t zero[TL_LAYOUT_MAX_MODES] = {0}, below = 1;
  for (int k = l->num_local - 1; k >= 0; k--) {
    int m = l->local_modes[k];
    TlValue *d = below > 1 ? op2(L, "arith.divi", local, cst(L, i32(L), below)) : local;
    if (k > 0)
      d = op2(L, "arith.remi", d, cst(L, i32(L), l->mode_shape[m]));
    digit[m] = op1(L, "arith.exti", d, i64(L));
    below *= l->mode_shape[m];
  }
  thread_digits(L, l, thread, digit);
  ravel_index(L, l, digit, zero, idx);
}

/* tl.load_shared with ldmatrix: the register layout is a tiling of the
 * one-matrix fragment (8 rows of 16 bytes; .trans for 16-bit columns),
 * every 16-byte row of the tile is a 16-byte aligned run in shared memory
 * and the last offset keeps it so. Each instruction loads the next 4 (or
 * 2, or 1) matrices a thread holds, which are its next tile words: lanes
 * 8j..8j+7 give the rows of matrix j. False, emitting nothing, when the
 * load does not qualify. */
static bool load_ldmatrix(Lower *L, Smem *m, const TlLayout *l, unsigned b, TlValue **off,
                          TlValue *last_off, Tile *t) {
  int rank = l->rank;
  int64_t w = 128 / b;
  TlLayout q;
  bool trans = false;
  if (rank < 2 || L->threads % 32 || 32 % b ||
      !smem_runs(&m->layout, w) || offset_div(L, last_off) % w)
    return false;
  if (!tl_layout_ldmatrix_compatible(l, (int)b, false, 1, &q, NULL)) {
    if (b != 16 || !tl_layout_ldmatrix_compatible(l, 16, true, 1, &q, NULL))
      return false;
    trans = true;
  }
  int64_t nmat = tl_layout_local_size(&q);
  int num = nmat % 4 == 0 ? 4 : nmat % 2 == 0 ? 2 : 1;
  TlValue *lane = op2(L, "arith.remi", L->tid, cst(L, i32(L), 32));
  TlValue *warp = op2(L, "arith.divi", L->tid, cst(L, i32(L), 32));
  TlValue *row = op1(L, "arith.exti", op2(L, "arith.remi", lane, cst(L, i32(L), 8)), i64(L));
  TlValue *mat = op2(L, "arith.divi", lane, cst(L, i32(L), 8));
  if (num < 4)
    mat = op2(L, "arith.remi", mat, cst(L, i32(L), num));
  TlType *vt = tl_simt_vec_type(L->ctx, (unsigned)num, i32(L)), *it = i32(L), *ut = u32(L);
  TlNamedAttr attrs[2] = {{"num", tl_attr_int(L->ctx, i64(L), num)},
                          {"trans", tl_attr_unit(L->ctx)}};
  for (int64_t g = 0; g < nmat / num; g++) {
    TlValue *ql = g ? op2(L, "arith.addi", mat, cst(L, i32(L), g * num)) : mat;
    TlValue *idx[TL_LAYOUT_MAX_RANK];
    index_at(L, &q, warp, ql, idx);
    idx[rank - 2] = op2(L, "arith.addi", op2(L, "arith.muli", idx[rank - 2], cst(L, i64(L), 8)),
                        row);
    idx[rank - 1] = op2(L, "arith.muli", idx[rank - 1], cst(L, i64(L), w));
    TlValue *p = smem_addr(L, m, off, idx);
    TlValue *x = tl_op_result(make(L, "simt.ldmatrix", 1, &p, 1, &vt, trans ? 2 : 1, attrs), 0);
    for (int j = 0; j < num; j++) {
      TlNamedAttr ix = {"index", tl_attr_int(L->ctx, i64(L), j)};
      TlValue *e = tl_op_result(make(L, "simt.extract", 1, &x, 1, &it, 1, &ix), 0);
      t->words[g * num + j] = op1(L, "arith.bitcast", e, ut);
    }
  }
  return true;
}

/* Tiles of 1, 2, 4, 8, 16 or 32-bit elements: ldmatrix where the layouts
 * allow it, else the widest ld.shared runs (whole bytes for sub-byte
 * elements). */
static bool lower_load_shared(Lower *L, TlOp *op) {
  Smem *m = smem_of(L, tl_op_operand(op, 0));
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  unsigned b = elem_bits(rt);
  if (!m)
    return fail(L, op, "shared tiles not made by tl.alloc_shared");
  if (32 % b && b != 64)
    return fail(L, op, "shared loads of elements other than 1, 2, 4, 8, 16, 32 or 64 bits");
  int rank = m->layout.rank;
  TlValue *off[TL_LAYOUT_MAX_RANK], *idx[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < rank; d++)
    off[d] = to_i64(L, scalar(L, tl_op_operand(op, 1 + (unsigned)d)));
  TlValue *last_off = tl_op_operand(op, (unsigned)rank);
  Tile *t = zero_tile(L, rt);
  const TlLayout *l = tl_reg_layout(rt);
  if (load_ldmatrix(L, m, l, b, off, last_off, t)) {
    put_tile(L, tl_op_result(op, 0), t);
    return true;
  }
  TlType *mem = tl_type_int(L->ctx, b, false);
  for (int64_t i = 0; i < tl_layout_local_size(l);) {
    index_of(L, l, i, idx);
    TlValue *p = smem_addr(L, m, off, idx);
    int64_t w = smem_vector_run(L, m, l, i, last_off);
    if (w * b < 8)
      return fail(L, op, "shared loads of sub-byte elements whose runs along the last "
                         "dimension are not whole aligned bytes");
    if (w > 1 || b == 64) {
      unsigned bytes = (unsigned)w * b / 8;
      TlType *at = access_type(L, bytes);
      TlNamedAttr al = align_attr(L, bytes);
      scatter_access(L, t, i, w, tl_op_result(make(L, "simt.load", 1, &p, 1, &at, 1, &al), 0));
      i += w;
      continue;
    }
    TlValue *x = tl_op_result(make(L, "simt.load", 1, &p, 1, &mem, 0, NULL), 0);
    if (b < 32)
      x = op1(L, "arith.exti", x, u32(L));
    set_elem(L, t, (unsigned)i, x);
    i++;
  }
  put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/* The widest st.shared runs, by one writer per element. */
static bool lower_store_shared(Lower *L, TlOp *op) {
  Tile *t = tile_of(L, tl_op_operand(op, 0));
  Smem *m = smem_of(L, tl_op_operand(op, 1));
  unsigned b = elem_bits(t->type);
  if (!m)
    return fail(L, op, "shared tiles not made by tl.alloc_shared");
  if (32 % b && b != 64)
    return fail(L, op, "shared stores of elements other than 1, 2, 4, 8, 16, 32 or 64 bits");
  int rank = m->layout.rank;
  TlValue *off[TL_LAYOUT_MAX_RANK], *idx[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < rank; d++)
    off[d] = to_i64(L, scalar(L, tl_op_operand(op, 2 + (unsigned)d)));
  TlValue *last_off = tl_op_operand(op, 1 + (unsigned)rank);
  const TlLayout *l = tl_reg_layout(t->type);
  TlValue *guard = writer_guard(L, l);
  TlBuilder outside = guard ? open_guard(L, guard) : L->b;
  TlType *mem = tl_type_int(L->ctx, b, false);
  for (int64_t i = 0; i < tl_layout_local_size(l);) {
    index_of(L, l, i, idx);
    TlValue *p = smem_addr(L, m, off, idx);
    int64_t w = smem_vector_run(L, m, l, i, last_off);
    if (w * b < 8) {
      if (guard)
        close_guard(L, outside);
      return fail(L, op, "shared stores of sub-byte elements whose runs along the last "
                         "dimension are not whole aligned bytes (threads would share bytes)");
    }
    if (w > 1 || b == 64) {
      TlNamedAttr al = align_attr(L, (unsigned)w * b / 8);
      TlValue *ops[2] = {gather_access(L, t, i, w), p};
      make(L, "simt.store", 2, ops, 0, NULL, 1, &al);
      i += w;
      continue;
    }
    TlValue *x = get_elem(L, t, (unsigned)i);
    if (b < 32)
      x = op1(L, "arith.trunci", x, mem);
    TlValue *ops[2] = {x, p};
    make(L, "simt.store", 2, ops, 0, NULL, 0, NULL);
    i++;
  }
  if (guard)
    close_guard(L, outside);
  return true;
}

/* The widest chunk of w elements (w * bytes of 4, 8 or 16) that both
 * sides of a copy keep contiguous and aligned: along the tile's last
 * dimension, which the global view must hold contiguously, with every row
 * start aligned to the chunk; in shared memory an innermost mode of stride
 * 1 that w divides, every other stride and the base multiples of w, and a
 * swizzle that moves whole chunks (2^M >= w). The chunks must also spread
 * evenly over the block's threads. 0 when no width qualifies. */
static int64_t copy_width(Lower *L, TlOp *op, const Smem *m, int64_t n) {
  const TlSharedLayout *l = &m->layout;
  int64_t b = tl_type_bitwidth(m->elem), last = l->shape[l->rank - 1];
  TlAccessAlignment acc;
  if (!L->facts || !tl_analysis_access_alignment(L->facts, op, &acc) ||
      acc.contiguous < last)
    return 0;
  for (int64_t cb = 16; cb >= 4; cb /= 2) {
    int64_t w = cb * 8 / b;
    if (w > 0 && last % w == 0 && acc.row % cb == 0 && (n / w) % L->threads == 0 &&
        smem_runs(l, w))
      return w;
  }
  return 0;
}

/* tl.copy_async: the tile in chunks of w elements in row-major order,
 * chunk c copied by thread c % T with one cp.async (consecutive threads
 * read consecutive global chunks). */
/* A copy no cp.async width serves (unaligned or uneven): done at once,
 * element e by thread e % T with a load and a shared store, which is
 * complete before any wait, as the asynchronous one would be there. */
static bool copy_by_elements(Lower *L, TlOp *op, Smem *m, View *v, bool masked, int64_t n) {
  unsigned b = tl_type_bitwidth(m->elem);
  if (b < 8)
    return fail(L, op, "copies of sub-byte elements without 4, 8 or 16-byte chunks that "
                       "are contiguous and aligned on both sides and spread evenly over "
                       "the block's threads");
  const TlSharedLayout *sl = &m->layout;
  int rank = sl->rank;
  TlValue *off[TL_LAYOUT_MAX_RANK], *zero[TL_LAYOUT_MAX_RANK], *idx[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    off[d] = to_i64(L, scalar(L, tl_op_operand(op, 2 + (unsigned)d)));
    zero[d] = cst(L, i64(L), 0);
  }
  TlType *mem = tl_type_int(L->ctx, b, false);
  TlValue *tid = op1(L, "arith.exti", L->tid, i64(L));
  int64_t T = L->threads;
  for (int64_t k = 0; k * T < n; k++) {
    TlValue *e = k ? op2(L, "arith.addi", tid, cst(L, i64(L), k * T)) : tid;
    TlBuilder outside = L->b;
    bool ragged = (k + 1) * T > n;
    if (ragged)
      outside = open_guard(L, cmpu(L, "lt", e, cst(L, i64(L), n)));
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; d--) {
      TlValue *q = stride > 1 ? op2(L, "arith.divi", e, cst(L, i64(L), stride)) : e;
      idx[d] = d > 0 ? op2(L, "arith.remi", q, cst(L, i64(L), sl->shape[d])) : q;
      stride *= sl->shape[d];
    }
    TlValue *bitoff, *src = elem_addr(L, v, off, idx, &bitoff), *x;
    if (masked) {
      TlValue *ok = in_view(L, v, off, idx);
      TlType *ty = mem;
      TlOpState st;
      tl_op_state_init(&st, L->ctx, tl_context_op_def(L->ctx, "scf.if"), L->loc);
      tl_op_state_add_operand(&st, ok);
      tl_op_state_add_result(&st, ty);
      st.nregions = 2;
      TlOp *nif = tl_builder_insert(&L->b, &st);
      TlBuilder saved = L->b;
      TlBlock *then = tl_block_create(L->module), *other = tl_block_create(L->module);
      tl_region_append_block(tl_op_region(nif, 0), then);
      tl_region_append_block(tl_op_region(nif, 1), other);
      tl_builder_set_end(&L->b, then);
      TlValue *ld = tl_op_result(make(L, "simt.load", 1, &src, 1, &ty, 0, NULL), 0);
      tl_builder_create(&L->b, "scf.yield", L->loc, 1, &ld, 0, NULL);
      tl_builder_set_end(&L->b, other);
      TlValue *z = cst(L, ty, 0);
      tl_builder_create(&L->b, "scf.yield", L->loc, 1, &z, 0, NULL);
      L->b = saved;
      x = tl_op_result(nif, 0);
    } else {
      x = tl_op_result(make(L, "simt.load", 1, &src, 1, &mem, 0, NULL), 0);
    }
    TlValue *ops[2] = {x, smem_addr(L, m, zero, idx)};
    make(L, "simt.store", 2, ops, 0, NULL, 0, NULL);
    if (ragged)
      close_guard(L, outside);
  }
  return true;
}

static bool lower_copy_async(Lower *L, TlOp *op) {
  Smem *m = smem_of(L, tl_op_operand(op, 0));
  View *v = view_of(L, tl_op_operand(op, 1));
  if (!m || !v)
    return fail(L, op, "copies between tensors not made by tl.alloc_shared and "
                       "tl.view_global");
  bool masked = tl_op_attr(op, "masked") != NULL;
  unsigned b = tl_type_bitwidth(m->elem);
  if (32 % b && b != 64)
    return fail(L, op, "copies of elements other than 1, 2, 4, 8, 16, 32 or 64 bits");
  const TlSharedLayout *sl = &m->layout;
  int rank = sl->rank;
  int64_t n = 1;
  for (int d = 0; d < rank; d++)
    n *= sl->shape[d];
  int64_t w = copy_width(L, op, m, n);
  if (!w)
    return copy_by_elements(L, op, m, v, masked, n);
  unsigned cb = (unsigned)(w * b / 8);
  /* A masked chunk must lie wholly before the view or start in it. */
  if (masked && offset_div(L, tl_op_operand(op, 1 + (unsigned)rank)) % w)
    return copy_by_elements(L, op, m, v, masked, n);
  TlValue *off[TL_LAYOUT_MAX_RANK], *zero[TL_LAYOUT_MAX_RANK], *idx[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    off[d] = to_i64(L, scalar(L, tl_op_operand(op, 2 + (unsigned)d)));
    zero[d] = cst(L, i64(L), 0);
  }
  TlValue *first = op2(L, "arith.muli", op1(L, "arith.exti", L->tid, i64(L)),
                       cst(L, i64(L), w));
  TlNamedAttr attrs[2] = {{"size", tl_attr_int(L->ctx, i64(L), cb)},
                          {"cache", str(L, cb == 16 ? "cg" : "ca")}};
  for (int64_t k = 0; k < n / w / L->threads; k++) {
    /* Element e = (tid + k * T) * w, unravelled row-major. */
    TlValue *e = op2(L, "arith.addi", first, cst(L, i64(L), k * L->threads * w));
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; d--) {
      TlValue *q = stride > 1 ? op2(L, "arith.divi", e, cst(L, i64(L), stride)) : e;
      idx[d] = d > 0 ? op2(L, "arith.remi", q, cst(L, i64(L), sl->shape[d])) : q;
      stride *= sl->shape[d];
    }
    TlValue *bitoff, *dst = smem_addr(L, m, zero, idx);
    if (!masked) {
      TlValue *ops[2] = {dst, elem_addr(L, v, off, idx, &bitoff)};
      make(L, "simt.cp_async", 2, ops, 0, NULL, 2, attrs);
      continue;
    }
    /* Masked: a chunk whose first element lies in the view reads the
     * elements up to the view's last column and zero-fills the rest (the
     * source size); any other chunk reads nothing and fills zeros, with
     * the view's first element as its (unread) source. */
    TlValue *ok = in_view(L, v, off, idx);
    TlValue *pos = op2(L, "arith.addi", off[rank - 1], idx[rank - 1]);
    TlValue *left = op2(L, "arith.subi", v->dims[rank - 1], pos);
    TlValue *cnt = op2(L, "arith.mini", left, cst(L, i64(L), w));
    TlValue *sel[3] = {ok, cnt, cst(L, i64(L), 0)};
    TlType *it = i64(L);
    cnt = tl_op_result(make(L, "arith.select", 3, sel, 1, &it, 0, NULL), 0);
    TlValue *so[TL_LAYOUT_MAX_RANK], *si[TL_LAYOUT_MAX_RANK];
    for (int d = 0; d < rank; d++) {
      TlValue *a[3] = {ok, off[d], zero[d]}, *c[3] = {ok, idx[d], zero[d]};
      so[d] = tl_op_result(make(L, "arith.select", 3, a, 1, &it, 0, NULL), 0);
      si[d] = tl_op_result(make(L, "arith.select", 3, c, 1, &it, 0, NULL), 0);
    }
    TlValue *bits = op2(L, "arith.muli", cnt, cst(L, i64(L), b));
    TlValue *bytes = op1(L, "arith.trunci", op2(L, "arith.divi", bits, cst(L, i64(L), 8)),
                         i32(L));
    TlValue *ops[3] = {dst, elem_addr(L, v, so, si, &bitoff), bytes};
    make(L, "simt.cp_async", 3, ops, 0, NULL, 2, attrs);
  }
  return true;
}

/*===--- Register tiles --------------------------------------------------===*/

static bool lower_alloc_register(Lower *L, TlOp *op) {
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  TlAttr *init = tl_op_attr(op, "init");
  Tile *t = zero_tile(L, rt);
  if (init) {
    unsigned b = elem_bits(rt);
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
        return fail(L, op, "this initial value");
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
      t->words[i] = cst(L, u32(L), w[i]);
    tl_free(w);
  }
  put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/* view, reshape and permute keep every thread's bits: only the type
 * changes. */
/* tl.slice, tl.permute and tl.reshape of a shared tile: a view of the same
 * bytes in the result type's layout (the verifier derived it), starting,
 * for a slice, at the sub-tile's first element. The offsets are multiples
 * of the sizes, so the sub-tile's kept digits are 0 and its unswizzled
 * offset less the base is the shift, a multiple of the swizzle block,
 * which the swizzle therefore leaves alone. */
static bool lower_shared_view(Lower *L, TlOp *op, Smem *src) {
  TlErr err;
  Smem *m = TL_ARENA_NEW(&L->arena, Smem);
  if (!tl_shared_type_layout(tl_value_type(tl_op_result(op, 0)), &m->layout, &err))
    return fail(L, op, "a shared view without a layout");
  m->elem = src->elem;
  m->base = src->base;
  if (!strcmp(tl_op_name(op), "tl.slice")) {
    const TlSharedLayout *l = &src->layout;
    int64_t offs[TL_LAYOUT_MAX_RANK];
    unsigned b = tl_type_bitwidth(m->elem);
    if (!tl_slice_offsets(op, offs))
      return fail(L, op, "a slice without offsets");
    for (int j = 0; j < l->num_modes; j++)
      if (b < 8 && (l->mode_stride[j] * b) % 8)
        return fail(L, op, "slices of sub-byte shared tiles that may start inside a byte");
    TlValue *pos[TL_LAYOUT_MAX_RANK];
    unsigned next = 1;
    for (int d = 0; d < l->rank; d++)
      pos[d] = offs[d] >= 0 ? cst(L, i64(L), offs[d])
                            : to_i64(L, scalar(L, tl_op_operand(op, next++)));
    TlValue *shift = op2(L, "arith.subi", smem_linear(L, l, pos, NULL), cst(L, i64(L), l->base));
    TlValue *bytes = b == 8  ? shift
                     : b > 8 ? op2(L, "arith.muli", shift, cst(L, i64(L), b / 8))
                             : op2(L, "arith.divi", shift, cst(L, i64(L), 8 / b));
    TlValue *ops[2] = {src->base, bytes};
    TlType *pt = tl_value_type(src->base);
    m->base = tl_op_result(make(L, "simt.ptr_add", 2, ops, 1, &pt, 0, NULL), 0);
  }
  Entry e = {tl_op_result(op, 0), NULL, NULL, NULL, m};
  tl_vec_push(&L->map, e);
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
  bool ok = tl_slice_offsets(op, offs) &&
            tl_layout_slice(&out, tl_reg_layout(src->type), offs, sizes, map, NULL);
  if (ok) {
    Tile *t = zero_tile(L, rt);
    for (int64_t j = 0; j < n; j++)
      copy_elem(L, t, (unsigned)j, src, (unsigned)map[j]);
    put_tile(L, tl_op_result(op, 0), t);
  }
  tl_free(map);
  return ok || fail(L, op, "a register slice the layout library does not derive");
}

static bool lower_reinterpret(Lower *L, TlOp *op) {
  Smem *sm = smem_of(L, tl_op_operand(op, 0));
  if (sm)
    return lower_shared_view(L, op, sm);
  Tile *src = tile_of(L, tl_op_operand(op, 0));
  if (!strcmp(tl_op_name(op), "tl.slice"))
    return lower_reg_slice(L, op, src);
  Tile *t = new_tile(L, tl_value_type(tl_op_result(op, 0)));
  if (t->nwords != src->nwords)
    return fail(L, op, "a view changing the number of words");
  memcpy(t->words, src->words, sizeof *t->words * t->nwords);
  put_tile(L, tl_op_result(op, 0), t);
  return true;
}

static bool is_f(const TlType *t, unsigned e, unsigned m) {
  return tl_type_is_float(t) && tl_type_float_exp(t) == e && tl_type_float_man(t) == m;
}

/* Element i as a 32-bit value of a compute type: iN sign-extended to i32,
 * uN zero-extended to u32, f16/bf16/f32 as floats. */
static TlValue *decode(Lower *L, Tile *t, unsigned i, TlType **ct) {
  TlType *e = tl_tensor_elem(t->type);
  unsigned b = tl_type_bitwidth(e);
  if (b == 64) {
    /* i64, u64 and f64 compute as themselves. */
    TlValue *x = get_elem64(L, t, i);
    *ct = tl_type_is_int(e) ? tl_type_int(L->ctx, 64, tl_type_int_signed(e)) : e;
    return *ct == tl_value_type(x) ? x : op1(L, "arith.bitcast", x, *ct);
  }
  TlValue *x = get_elem(L, t, i);
  if (tl_type_is_int(e)) {
    if (tl_type_int_signed(e)) {
      TlValue *s = op1(L, "arith.bitcast", x, i32(L));
      if (b < 32) {
        s = op2(L, "arith.shli", s, cst(L, i32(L), 32 - b));
        s = op2(L, "arith.shri", s, cst(L, i32(L), 32 - b));
      }
      *ct = i32(L);
      return s;
    }
    *ct = u32(L);
    return x;
  }
  if (is_f(e, 8, 23)) {
    *ct = tl_type_f32(L->ctx);
    return op1(L, "arith.bitcast", x, *ct);
  }
  if (is_f(e, 5, 10) || is_f(e, 8, 7)) {
    *ct = e;
    TlValue *h = op1(L, "arith.trunci", x, tl_type_int(L->ctx, 16, false));
    return op1(L, "arith.bitcast", h, e);
  }
  *ct = NULL;
  return NULL;
}

/* Stores a value of a compute type (decode's: i32, u32 or a float of the
 * element's format) as element i; integers keep their low bits. */
static void encode(Lower *L, Tile *t, unsigned i, TlValue *v) {
  TlType *vt = tl_value_type(v);
  if (elem_bits(t->type) == 64) {
    TlType *u64 = tl_type_int(L->ctx, 64, false);
    if (tl_type_bitwidth(vt) < 64)
      v = op1(L, "arith.exti", v, tl_type_int(L->ctx, 64, tl_type_int_signed(vt)));
    set_elem64(L, t, i, tl_value_type(v) == u64 ? v : op1(L, "arith.bitcast", v, u64));
    return;
  }
  if (tl_type_is_int(vt)) {
    set_elem(L, t, i, tl_type_int_signed(vt) ? op1(L, "arith.bitcast", v, u32(L)) : v);
    return;
  }
  TlType *e = tl_tensor_elem(t->type);
  unsigned b = tl_type_bitwidth(e);
  TlValue *bits = op1(L, "arith.bitcast", v, tl_type_int(L->ctx, b, false));
  if (b < 32)
    bits = op1(L, "arith.exti", bits, u32(L));
  set_elem(L, t, i, bits);
}

/* A cast to a float of at most 8 bits (dd) from sd, whose values f32
 * holds exactly: decoded to f32 words, then encoded with one rounding. */
static bool cast_to_small_float(Lower *L, TlOp *op, Tile *src, TlType *rt, TlDType sd,
                                TlDType dd, int64_t n) {
  TlErr err;
  if (!tl_small_float_cast_supported(sd, dd, &err))
    return fail(L, op, err.msg);
  TlType *f32 = tl_type_f32(L->ctx);
  TlValue **xs = TL_ARENA_NEWN(&L->arena, TlValue *, (size_t)n);
  TlValue **codes = TL_ARENA_NEWN(&L->arena, TlValue *, (size_t)n);
  if (sd.bits <= 8) {
    const TlCastRecipe *r32 = tl_cast_recipe_find(sd, tl_dtype_f32());
    if (!r32 || !tl_emit_cast_recipe(&L->b, L->loc, r32, src->words, (unsigned)n, xs, &err))
      return fail(L, op, r32 ? err.msg : "a source type without a recipe to f32");
    for (int64_t i = 0; i < n; i++)
      xs[i] = op1(L, "arith.bitcast", xs[i], f32);
  } else {
    for (int64_t i = 0; i < n; i++) {
      TlType *ct;
      TlValue *x = decode(L, src, (unsigned)i, &ct);
      if (!x)
        return fail(L, op, "casts from this element type");
      xs[i] = tl_type_is_int(ct) ? op1(L, "arith.itofp", x, f32)
              : ct == f32        ? x
                                 : op1(L, "arith.extf", x, f32);
    }
  }
  if (!tl_emit_to_small_float_n(&L->b, L->loc, dd, (unsigned)n, xs, codes, &err))
    return fail(L, op, err.msg);
  Tile *t = zero_tile(L, rt);
  for (int64_t i = 0; i < n; i++)
    set_elem(L, t, (unsigned)i, codes[i]);
  put_tile(L, tl_op_result(op, 0), t);
  return true;
}

static bool lower_cast(Lower *L, TlOp *op) {
  Tile *src = tile_of(L, tl_op_operand(op, 0));
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  TlType *se = tl_tensor_elem(src->type), *de = tl_tensor_elem(rt);
  int64_t n = tl_layout_local_size(tl_reg_layout(rt));
  /* Types of at most 8 bits to f16, bf16 and f32: the dtype library's
   * exhaustively checked register recipes (docs/dtypes.md), over the
   * tile's words as they are. */
  TlDType sd, dd;
  const TlCastRecipe *r = n > 0 && tl_type_to_dtype(se, &sd) && tl_type_to_dtype(de, &dd)
                              ? tl_cast_recipe_find(sd, dd)
                              : NULL;
  if (r && tl_cast_recipe_emittable(r, NULL)) {
    Tile *t = new_tile(L, rt);
    TlErr err;
    if (!tl_emit_cast_recipe(&L->b, L->loc, r, src->words, (unsigned)n, t->words, &err))
      return fail(L, op, err.msg);
    put_tile(L, tl_op_result(op, 0), t);
    return true;
  }
  /* To floats of at most 8 bits: the value exactly in f32 (a recipe for
   * sources of at most 8 bits), then one rounding to the format
   * (passes/small_float.h). */
  if (n > 0 && se != de && tl_type_to_dtype(se, &sd) && tl_type_to_dtype(de, &dd) &&
      tl_small_float_dst_ok(dd, NULL))
    return cast_to_small_float(L, op, src, rt, sd, dd, n);
  Tile *t = zero_tile(L, rt);
  /* f32 pairs to f16x2/bf16x2: one cvt.rn per word. */
  if (is_f(se, 8, 23) && (is_f(de, 5, 10) || is_f(de, 8, 7)) && n % 2 == 0) {
    TlType *v2 = tl_simt_vec_type(L->ctx, 2, de);
    for (int64_t w = 0; w < n / 2; w++) {
      TlValue *a = op1(L, "arith.bitcast", src->words[2 * w], tl_type_f32(L->ctx));
      TlValue *bv = op1(L, "arith.bitcast", src->words[2 * w + 1], tl_type_f32(L->ctx));
      TlValue *ops[2] = {a, bv};
      TlNamedAttr rn = {"rounding", str(L, "rn")};
      TlValue *p = tl_op_result(make(L, "simt.cvt_pack", 2, ops, 1, &v2, 1, &rn), 0);
      TlType *ut = u32(L);
      t->words[w] = tl_op_result(make(L, "simt.bitcast", 1, &p, 1, &ut, 0, NULL), 0);
    }
    put_tile(L, tl_op_result(op, 0), t);
    return true;
  }
  if (se == de) {
    memcpy(t->words, src->words, sizeof *t->words * t->nwords);
    put_tile(L, tl_op_result(op, 0), t);
    return true;
  }
  bool dst_ok = tl_type_is_int(de) || is_f(de, 8, 23) || is_f(de, 5, 10) || is_f(de, 8, 7);
  dst_ok |= is_f(de, 11, 52);
  if (!dst_ok || tl_type_bitwidth(de) > 64 || tl_type_bitwidth(se) > 64)
    return fail(L, op, "casts from or to this element type");
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
    Tile *wide = new_tile(L, tl_reg_type_get(L->ctx, tl_tensor_rank(rt), dims,
                                             tl_type_f32(L->ctx), tl_reg_layout(rt)));
    if (!r32 || !tl_emit_cast_recipe(&L->b, L->loc, r32, src->words, (unsigned)n,
                                     wide->words, &err))
      return fail(L, op, "casts from this element type");
    src = wide;
  }
  for (int64_t i = 0; i < n; i++) {
    TlType *ct;
    TlValue *x = decode(L, src, (unsigned)i, &ct);
    if (!x)
      return fail(L, op, "casts from this element type");
    TlValue *y;
    if (tl_type_is_bool(de)) {
      /* Nonzero is true; so is NaN (an unordered compare). */
      TlType *i1 = tl_type_bool(L->ctx);
      bool fl = tl_type_is_float(ct);
      TlNamedAttr ne = {"predicate", str(L, fl ? "une" : "ne")};
      TlValue *ops[2] = {x, fl ? tl_arith_constant(&L->b, tl_attr_float(L->ctx, ct, 0.0), L->loc)
                               : cst(L, ct, 0)};
      TlValue *c = tl_op_result(make(L, fl ? "arith.cmpf" : "arith.cmpi", 2, ops, 1, &i1, 1, &ne), 0);
      encode(L, t, (unsigned)i, op1(L, "arith.exti", c, u32(L)));
      continue;
    }
    if (tl_type_is_float(de)) {
      if (tl_type_is_int(ct))
        y = op1(L, "arith.itofp", x, de);
      else if (ct == de)
        y = x;
      else if (tl_type_bitwidth(ct) < tl_type_bitwidth(de))
        y = op1(L, "arith.extf", x, de);
      else if (tl_type_bitwidth(ct) == tl_type_bitwidth(de)) /* f16 <-> bf16 */
        y = op1(L, "arith.truncf", op1(L, "arith.extf", x, tl_type_f32(L->ctx)), de);
      else
        y = op1(L, "arith.truncf", x, de);
    } else {
      /* To an integer: floats truncate and saturate (NaN -> 0); integers
       * saturate to the destination's range. */
      unsigned db = tl_type_bitwidth(de);
      bool ds = tl_type_int_signed(de);
      TlType *wide = db == 64 ? tl_type_int(L->ctx, 64, ds) : ds ? i32(L) : u32(L);
      if (tl_type_is_float(ct)) {
        y = op1(L, "arith.fptoi", x, tl_type_int(L->ctx, db, ds));
        y = db < 32 ? op1(L, "arith.exti", y, wide) : y;
      } else if (tl_type_int_signed(ct)) {
        /* A signed value is exact in i64: clamp there, then narrow. */
        TlValue *w64 = tl_type_int_width(ct) == 64 ? x : op1(L, "arith.exti", x, i64(L));
        if (db < 64 || !ds)
          w64 = op2(L, "arith.maxi", w64, cst(L, i64(L), ds ? -(INT64_C(1) << (db - 1)) : 0));
        if (db < 64)
          w64 = op2(L, "arith.mini", w64,
                    cst(L, i64(L), ds ? (INT64_C(1) << (db - 1)) - 1
                                      : (int64_t)((UINT64_C(1) << db) - 1)));
        y = tl_value_type(w64) == wide ? w64
            : op1(L, db == 64 ? "arith.bitcast" : "arith.trunci", w64, wide);
      } else {
        /* An unsigned value is exact in u64: only the top can overflow. */
        TlType *u64 = tl_type_int(L->ctx, 64, false);
        TlValue *w64 = tl_type_int_width(ct) == 64 ? x : op1(L, "arith.exti", x, u64);
        if (db < 64 || ds)
          w64 = op2(L, "arith.mini", w64,
                    cst(L, u64, (int64_t)(ds ? (UINT64_C(1) << (db - 1)) - 1
                                             : (UINT64_C(1) << db) - 1)));
        y = tl_value_type(w64) == wide ? w64
            : op1(L, db == 64 ? "arith.bitcast" : "arith.trunci", w64, wide);
      }
      encode(L, t, (unsigned)i, y);
      continue;
    }
    encode(L, t, (unsigned)i, y);
  }
  put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/*===--- dot -------------------------------------------------------------===*/

/* Finds the quotient q with layout = q . atom; false if it is not one. */
static bool tiling(const TlLayout *l, const char *atom, TlLayout *q) {
  TlLayout a;
  return tl_layout_atom(&a, atom, NULL) && tl_layout_match_atom(l, &a, q, NULL);
}

/* The atom block (row, col) that quotient local index ql holds in warp w. */
static void block_of(const TlLayout *q, int64_t w, int64_t ql, int64_t *rc) {
  tl_layout_map(q, w, ql, rc, NULL);
}

/* The mma forms tl.dot uses, tried in order for its element types. An
 * operand class: "f16", "bf16", "int8" (i8 or u8 on each side), "b1" (u1
 * or bool: products are ANDs, sums popcounts); accumulators f32, f16 or
 * i32. The atoms name the fragments' register layouts. */
typedef struct DotForm {
  const char *shape, *in, *acc, *atom;
  unsigned ra, rb, rc; /* 32-bit registers of A, B and C/D per lane */
  int64_t k;           /* the atom's K */
} DotForm;

/* clang-format off */
static const DotForm dot_forms[] = {
    {"m16n8k16",  "f16",  "f32", "mma_m16n8k16_f16",  4, 2, 4, 16},
    {"m16n8k8",   "f16",  "f32", "mma_m16n8k8_f16",   2, 1, 4, 8},
    {"m16n8k16",  "f16",  "f16", "mma_m16n8k16_f16",  4, 2, 2, 16},
    {"m16n8k8",   "f16",  "f16", "mma_m16n8k8_f16",   2, 1, 2, 8},
    {"m16n8k16",  "bf16", "f32", "mma_m16n8k16_bf16", 4, 2, 4, 16},
    {"m16n8k8",   "bf16", "f32", "mma_m16n8k8_f16",   2, 1, 4, 8},
    {"m16n8k32",  "int8", "i32", "mma_m16n8k32_s8",   4, 2, 4, 32},
    {"m16n8k256", "b1",   "i32", "mma_m16n8k256_b1",  4, 2, 4, 256},
    {"m8n8k128",  "b1",   "i32", "mma_m8n8k128_b1",   1, 1, 2, 128},
};
/* clang-format on */

/* The mma class of an operand element type, NULL if none. */
static const char *dot_class(const TlType *t) {
  if (is_f(t, 5, 10))
    return "f16";
  if (is_f(t, 8, 7))
    return "bf16";
  if (tl_type_is_int(t) && tl_type_int_width(t) == 8)
    return "int8";
  if (tl_type_bitwidth(t) == 1)
    return "b1";
  return NULL;
}

static const char *acc_class(const TlType *t) {
  if (is_f(t, 8, 23))
    return "f32";
  if (is_f(t, 5, 10))
    return "f16";
  if (tl_type_is_int(t) && tl_type_int_width(t) == 32)
    return "i32";
  return NULL;
}

/* The PTX type of an mma operand element. */
static const char *mma_type(const TlType *t, const char *cls) {
  if (strcmp(cls, "int8"))
    return cls;
  return tl_type_int_signed(t) ? "s8" : "u8";
}

/* Whether the dot's layouts are tilings of form f's fragments whose warps
 * hold matching blocks: for every C block a thread holds and every k, the
 * A and B blocks at the same local positions in every warp (pair_a and
 * pair_b, nqc * K entries each, get those positions). */
static bool dot_pairs(const DotForm *f, Tile *a, Tile *b, Tile *c, TlLayout *qc,
                      int64_t *K, int64_t **pair_a, int64_t **pair_b) {
  char na[64], nb[64], nc[64];
  snprintf(na, sizeof na, "%s_a", f->atom);
  snprintf(nb, sizeof nb, "%s_b", f->atom);
  snprintf(nc, sizeof nc, "%s_c", f->atom);
  TlLayout qa, qb;
  if (!tiling(tl_reg_layout(a->type), na, &qa) || !tiling(tl_reg_layout(b->type), nb, &qb) ||
      !tiling(tl_reg_layout(c->type), nc, qc))
    return false;
  int64_t warps = tl_layout_num_threads(qc);
  if (tl_layout_num_threads(&qa) != warps || tl_layout_num_threads(&qb) != warps)
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
            (w > 0 && (pa[qlc * *K + k] != found_a || pb[qlc * *K + k] != found_b)))
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

/* The local index at which every thread of the block holds element idx
 * of layout l, or -1 when some thread does not hold it or the threads
 * hold it at different local indices. thread_of maps a block thread to a
 * thread of l (threads past l's count hold replicas of lower ones). */
static int64_t same_local(Lower *L, const TlLayout *l, int64_t t, const int64_t *idx,
                          int64_t *holders) {
  int64_t local, count, nt = tl_layout_num_threads(l);
  if (!tl_layout_locate(l, idx, &local, holders, 1024, &count, NULL))
    return -1;
  for (int64_t k = 0; k < count && k < 1024; k++)
    if (holders[k] == t % nt)
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
  bool fl = is_f(ec, 8, 23);
  bool fin = (is_f(ea, 5, 10) || is_f(ea, 8, 7) || is_f(ea, 8, 23)) &&
             (is_f(eb, 5, 10) || is_f(eb, 8, 7) || is_f(eb, 8, 23));
  bool iin = tl_type_is_int(ea) && tl_type_is_int(eb) && tl_type_bitwidth(ea) <= 32 &&
             tl_type_bitwidth(eb) <= 32;
  bool iacc = tl_type_is_int(ec) && tl_type_int_width(ec) == 32;
  if (!(fl && fin) && !(iacc && iin))
    return false;
  const TlLayout *la = tl_reg_layout(a->type), *lb = tl_reg_layout(b->type),
                 *lc = tl_reg_layout(c->type);
  unsigned rank = tl_tensor_rank(a->type), bd = rank - 2; /* batch dims first */
  int64_t K = tl_tensor_dim(a->type, rank - 1), nc = tl_layout_local_size(lc);
  if ((int64_t)L->threads * nc * K > (INT64_C(1) << 22))
    return false;
  int64_t *pa = tl_xmalloc(sizeof *pa * (size_t)(nc * K)), *pb = tl_xmalloc(sizeof *pb * (size_t)(nc * K));
  int64_t *holders = tl_xmalloc(sizeof *holders * 1024);
  bool ok = true;
  for (int64_t t = 0; t < (int64_t)L->threads && ok; t++)
    for (int64_t i = 0; i < nc && ok; i++) {
      int64_t ij[TL_LAYOUT_MAX_RANK];
      ok = tl_layout_map(lc, t % tl_layout_num_threads(lc), i, ij, NULL);
      for (int64_t k = 0; k < K && ok; k++) {
        int64_t ik[TL_LAYOUT_MAX_RANK], kj[TL_LAYOUT_MAX_RANK];
        memcpy(ik, ij, sizeof ik);
        memcpy(kj, ij, sizeof kj);
        ik[bd + 1] = k;
        kj[bd] = k;
        int64_t xa = same_local(L, la, t, ik, holders), xb = same_local(L, lb, t, kj, holders);
        ok = xa >= 0 && xb >= 0 && (t == 0 || (pa[i * K + k] == xa && pb[i * K + k] == xb));
        pa[i * K + k] = xa;
        pb[i * K + k] = xb;
      }
    }
  tl_free(holders);
  if (ok) {
    Tile *d = new_tile(L, c->type);
    memcpy(d->words, c->words, sizeof *d->words * d->nwords);
    TlType *f32 = tl_type_f32(L->ctx), *ct;
    for (int64_t i = 0; i < nc; i++) {
      TlValue *acc = decode(L, d, (unsigned)i, &ct);
      for (int64_t k = 0; k < K; k++) {
        TlType *ta, *tb;
        TlValue *x = decode(L, a, (unsigned)pa[i * K + k], &ta);
        TlValue *y = decode(L, b, (unsigned)pb[i * K + k], &tb);
        if (fl) {
          if (ta != f32)
            x = op1(L, "arith.extf", x, f32);
          if (tb != f32)
            y = op1(L, "arith.extf", y, f32);
          TlValue *ops[3] = {x, y, acc};
          acc = tl_op_result(make(L, "simt.fma", 3, ops, 1, &f32, 0, NULL), 0);
        } else {
          if (ta != ct)
            x = op1(L, "arith.bitcast", x, ct);
          if (tb != ct)
            y = op1(L, "arith.bitcast", y, ct);
          acc = op2(L, "arith.addi", acc, op2(L, "arith.muli", x, y));
        }
      }
      encode(L, d, (unsigned)i, acc);
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
static bool lower_dot(Lower *L, TlOp *op) {
  Tile *a = tile_of(L, tl_op_operand(op, 0)), *b = tile_of(L, tl_op_operand(op, 1)),
       *c = tile_of(L, tl_op_operand(op, 2));
  TlType *ea = tl_tensor_elem(a->type), *eb = tl_tensor_elem(b->type),
         *ec = tl_tensor_elem(c->type);
  const char *ca = dot_class(ea), *cb = dot_class(eb), *cc = acc_class(ec);
  const DotForm *f = NULL;
  TlLayout qc;
  int64_t K = 0, *pair_a = NULL, *pair_b = NULL;
  bool typed = false;
  for (size_t i = 0; ca && cb && cc && i < sizeof dot_forms / sizeof *dot_forms && !f; i++) {
    const DotForm *g = &dot_forms[i];
    if (strcmp(g->in, ca) || strcmp(g->in, cb) || strcmp(g->acc, cc) ||
        (strcmp(ca, "int8") && ea != eb))
      continue;
    typed = true;
    if (dot_pairs(g, a, b, c, &qc, &K, &pair_a, &pair_b))
      f = g;
  }
  if (!f) {
    Tile *d;
    if (simt_dot(L, a, b, c, &d)) {
      put_tile(L, tl_op_result(op, 0), d);
      return true;
    }
    if (!typed)
      return fail(L, op, "dot of these element types with these layouts (mma takes f16 or "
                         "bf16 with f32 accumulation, f16 with f16, i8/u8 or u1 with i32; "
                         "the SIMT dot needs f32 or i32 accumulators and every thread "
                         "holding the A and B elements of its C elements)");
    return fail(L, op, "dot whose layouts are neither tilings of one mma form's fragments "
                       "with matching blocks in every warp nor a SIMT dot's (every thread "
                       "holding the A and B elements of its C elements)");
  }
  int64_t nqc = tl_layout_local_size(&qc);
  Tile *d = new_tile(L, c->type);
  memcpy(d->words, c->words, sizeof *d->words * d->nwords);
  bool fa = !strcmp(f->acc, "f32");
  TlType *rt = fa ? tl_type_f32(L->ctx) : i32(L);
  TlType *va = tl_simt_vec_type(L->ctx, f->ra, i32(L)), *vb = tl_simt_vec_type(L->ctx, f->rb, i32(L));
  TlType *vc = tl_simt_vec_type(L->ctx, f->rc, rt);
  TlNamedAttr attrs[5] = {{"shape", str(L, f->shape)},
                          {"a_type", str(L, mma_type(ea, ca))},
                          {"b_type", str(L, mma_type(eb, cb))},
                          {"acc_type", str(L, !strcmp(f->acc, "i32") ? "s32" : f->acc)},
                          {"b1_op", str(L, "and.popc")}};
  unsigned nattrs = strcmp(f->in, "b1") ? 4 : 5;
  for (int64_t qlc = 0; qlc < nqc; qlc++) {
    for (int64_t k = 0; k < K; k++) {
      TlValue *av[4], *bv[4], *cv[4];
      for (unsigned j = 0; j < f->ra; j++)
        av[j] = op1(L, "arith.bitcast", a->words[pair_a[qlc * K + k] * f->ra + j], i32(L));
      for (unsigned j = 0; j < f->rb; j++)
        bv[j] = op1(L, "arith.bitcast", b->words[pair_b[qlc * K + k] * f->rb + j], i32(L));
      for (unsigned j = 0; j < f->rc; j++)
        cv[j] = op1(L, "arith.bitcast", d->words[qlc * f->rc + j], rt);
      TlValue *ops[3] = {
          tl_op_result(make(L, "simt.build", f->ra, av, 1, &va, 0, NULL), 0),
          tl_op_result(make(L, "simt.build", f->rb, bv, 1, &vb, 0, NULL), 0),
          tl_op_result(make(L, "simt.build", f->rc, cv, 1, &vc, 0, NULL), 0)};
      TlValue *D = tl_op_result(make(L, "simt.mma", 3, ops, 1, &vc, nattrs, attrs), 0);
      for (unsigned j = 0; j < f->rc; j++) {
        TlNamedAttr ix = {"index", tl_attr_int(L->ctx, i64(L), j)};
        TlValue *x = tl_op_result(make(L, "simt.extract", 1, &D, 1, &rt, 1, &ix), 0);
        d->words[qlc * f->rc + j] = op1(L, "arith.bitcast", x, u32(L));
      }
    }
  }
  tl_free(pair_a);
  tl_free(pair_b);
  put_tile(L, tl_op_result(op, 0), d);
  return true;
}

/*===--- Elementwise -----------------------------------------------------===*/

/* fmod(a, b) on f32 values, exactly (C's fmod, which tl.mod on floats
 * is): |a| = ma 2^(ea - 150) and |b| = mb 2^(eb - 150) with integer
 * significands ma, mb < 2^24, so the remainder is ((ma 2^(ea - eb)) mod
 * mb) 2^(eb - 150); 2^(ea - eb) mod mb comes by square-and-multiply over
 * the nine bits of ea - eb < 512, in u64 (products below 2^48). Straight
 * line, no loop. |a| < |b| and an infinite b give a; an infinite or NaN a,
 * a NaN b or a zero b give NaN; the sign is a's. */
static TlValue *fmod32(Lower *L, TlValue *a, TlValue *b) {
  TlType *f32 = tl_type_f32(L->ctx), *u64 = tl_type_int(L->ctx, 64, false),
         *f64 = tl_type_f64(L->ctx), *u = u32(L);
  TlValue *ba = op1(L, "arith.bitcast", a, u), *bb = op1(L, "arith.bitcast", b, u);
  TlValue *mask = cst(L, u, 0x7fffffff);
  TlValue *ua = op2(L, "arith.andi", ba, mask), *ub = op2(L, "arith.andi", bb, mask);
  /* Exponent fields (subnormals as 1) and integer significands. */
  TlValue *ea = op2(L, "arith.shri", ua, cst(L, u, 23)), *eb = op2(L, "arith.shri", ub, cst(L, u, 23));
  TlValue *fa = op2(L, "arith.andi", ua, cst(L, u, 0x7fffff)), *fb = op2(L, "arith.andi", ub, cst(L, u, 0x7fffff));
  TlValue *za = cmpu(L, "eq", ea, cst(L, u, 0)), *zb = cmpu(L, "eq", eb, cst(L, u, 0));
  TlValue *ma = sel(L, za, fa, op2(L, "arith.ori", fa, cst(L, u, 0x800000)));
  TlValue *mb = sel(L, zb, fb, op2(L, "arith.ori", fb, cst(L, u, 0x800000)));
  ea = sel(L, za, cst(L, u, 1), ea);
  eb = sel(L, zb, cst(L, u, 1), eb);
  /* k = ea - eb, meaningful when |a| >= |b| (then ea >= eb); clamp the
   * other case to 0 (its result is a). */
  TlValue *big = cmpu(L, "ge", ua, ub);
  TlValue *k = sel(L, big, op2(L, "arith.subi", ea, eb), cst(L, u, 0));
  TlValue *m = op1(L, "arith.exti", sel(L, cmpu(L, "eq", mb, cst(L, u, 0)), cst(L, u, 1), mb), u64);
  TlValue *base = op2(L, "arith.remi", cst(L, u64, 2), m);
  TlValue *acc = op2(L, "arith.remi", cst(L, u64, 1), m);
  for (int j = 0; j < 9; j++) {
    TlValue *bit = op2(L, "arith.andi", op2(L, "arith.shri", k, cst(L, u, j)), cst(L, u, 1));
    TlValue *times = op2(L, "arith.remi", op2(L, "arith.muli", acc, base), m);
    acc = sel(L, cmpu(L, "ne", bit, cst(L, u, 0)), times, acc);
    if (j < 8)
      base = op2(L, "arith.remi", op2(L, "arith.muli", base, base), m);
  }
  TlValue *rs = op2(L, "arith.remi", op2(L, "arith.muli", op1(L, "arith.exti", ma, u64), acc), m);
  /* rs 2^(eb - 150), exact in f64 and then in f32 (a multiple of b's
   * ulp below |b|). */
  TlValue *scale_bits = op2(L, "arith.shli",
                            op1(L, "arith.exti", op2(L, "arith.addi", eb, cst(L, u, 1023 - 150)), u64),
                            cst(L, u64, 52));
  TlValue *mag = op2(L, "arith.mulf", op1(L, "arith.itofp", rs, f64),
                     op1(L, "arith.bitcast", scale_bits, f64));
  TlValue *r = op1(L, "arith.bitcast", op1(L, "arith.truncf", mag, f32), u);
  r = op2(L, "arith.ori", r, op2(L, "arith.andi", ba, cst(L, u, 0x80000000u)));
  /* The special cases. */
  TlValue *inf = cst(L, u, 0x7f800000);
  r = sel(L, big, r, ba);
  r = sel(L, cmpu(L, "eq", ub, inf), ba, r);
  TlValue *nan = op2(L, "arith.ori", cmpu(L, "ge", ua, inf), cmpu(L, "gt", ub, inf));
  nan = op2(L, "arith.ori", nan, cmpu(L, "eq", ub, cst(L, u, 0)));
  r = sel(L, nan, cst(L, u, 0x7fc00000), r);
  return op1(L, "arith.bitcast", r, f32);
}

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
  int64_t dims[TL_LAYOUT_MAX_RANK], n = tl_layout_local_size(tl_reg_layout(x->type));
  for (unsigned d = 0; d < tl_tensor_rank(x->type); d++)
    dims[d] = tl_tensor_dim(x->type, d);
  Tile *w = new_tile(L, tl_reg_type_get(L->ctx, tl_tensor_rank(x->type), dims,
                                        tl_type_f32(L->ctx), tl_reg_layout(x->type)));
  TlErr err;
  if (!r || n == 0 || !tl_emit_cast_recipe(&L->b, L->loc, r, x->words, (unsigned)n, w->words, &err))
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
    xs[i] = op1(L, "arith.bitcast", f->words[i], tl_type_f32(L->ctx));
  TlErr err;
  if (!tl_type_to_dtype(tl_tensor_elem(t->type), &dd) ||
      !tl_emit_to_small_float_n(&L->b, L->loc, dd, (unsigned)n, xs, codes, &err))
    return false;
  for (int64_t i = 0; i < n; i++)
    set_elem(L, t, (unsigned)i, codes[i]);
  return true;
}

static bool lower_elementwise(Lower *L, TlOp *op) {
  const char *n = tl_op_name(op) + 3;
  static const struct {
    const char *tl, *fop, *iop;
  } tab[] = {{"add", "arith.addf", "arith.addi"}, {"sub", "arith.subf", "arith.subi"},
             {"mul", "arith.mulf", "arith.muli"}, {"div", "arith.divf", "arith.divi"},
             {"max", "arith.maxf", "arith.maxi"}, {"min", "arith.minf", "arith.mini"},
             {"and", NULL, "arith.andi"},         {"or", NULL, "arith.ori"},
             {"xor", NULL, "arith.xori"},         {"mod", NULL, "arith.remi"},
             {"shl", NULL, "arith.shli"},         {"shr", NULL, "arith.shri"}};
  const char *fop = NULL, *iop = NULL;
  for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
    if (!strcmp(tab[i].tl, n)) {
      fop = tab[i].fop;
      iop = tab[i].iop;
    }
  if (!iop)
    return fail(L, op, "this elementwise op");
  Tile *x = tile_of(L, tl_op_operand(op, 0)), *y = tile_of(L, tl_op_operand(op, 1));
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  Tile *t = zero_tile(L, rt), *out = t;
  int64_t count = tl_layout_local_size(tl_reg_layout(rt));
  /* Small floats compute in f32 and round once back. */
  bool small = is_small_float(tl_tensor_elem(rt));
  if (small) {
    x = widen_small(L, x);
    y = widen_small(L, y);
    if (!x || !y)
      return fail(L, op, "elementwise arithmetic on this element type (cast it first)");
    out = zero_tile(L, x->type);
  }
  for (int64_t i = 0; i < count; i++) {
    TlType *ct;
    TlValue *a = decode(L, x, (unsigned)i, &ct), *b = decode(L, y, (unsigned)i, &ct);
    if (!a)
      return fail(L, op, "elementwise arithmetic on this element type (cast it first)");
    bool fl = tl_type_is_float(ct);
    if (fl && !strcmp(n, "mod") && tl_type_bitwidth(ct) <= 32) {
      /* In f32 (f16 and bf16 values and their remainders are exact there). */
      TlType *f32 = tl_type_f32(L->ctx);
      TlValue *r = fmod32(L, ct == f32 ? a : op1(L, "arith.extf", a, f32),
                          ct == f32 ? b : op1(L, "arith.extf", b, f32));
      encode(L, out, (unsigned)i, ct == f32 ? r : op1(L, "arith.truncf", r, ct));
      continue;
    }
    if (fl && !fop)
      return fail(L, op, !strcmp(n, "mod") ? "f64 remainders" : "bitwise ops on floats");
    TlValue *r = op2(L, fl ? fop : iop, a, b);
    encode(L, out, (unsigned)i, r);
  }
  if (small && !narrow_small(L, out, t))
    return fail(L, op, "elementwise arithmetic on this element type (cast it first)");
  put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/* tl.neg, tl.abs, tl.not: per element in its compute type; integer
 * results wrap to the element's width (set_elem keeps its bits). */
static bool lower_unary(Lower *L, TlOp *op) {
  const char *n = tl_op_name(op) + 3;
  Tile *x = tile_of(L, tl_op_operand(op, 0));
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  Tile *t = zero_tile(L, rt);
  int64_t count = tl_layout_local_size(tl_reg_layout(rt));
  for (int64_t i = 0; i < count; i++) {
    TlType *ct;
    if (is_small_float(tl_tensor_elem(rt)) && strcmp(n, "not")) {
      /* The sign bit flipped or cleared, as for every float. */
      unsigned b = elem_bits(rt);
      TlValue *c = get_elem(L, x, (unsigned)i), *sign = cst(L, u32(L), 1u << (b - 1));
      set_elem(L, t, (unsigned)i,
               !strcmp(n, "neg") ? op2(L, "arith.xori", c, sign)
                                 : op2(L, "arith.andi", c, cst(L, u32(L), (1u << (b - 1)) - 1)));
      continue;
    }
    TlValue *a = decode(L, x, (unsigned)i, &ct), *r;
    if (!a)
      return fail(L, op, "elementwise arithmetic on this element type (cast it first)");
    bool fl = tl_type_is_float(ct);
    if (!strcmp(n, "not")) {
      if (fl)
        return fail(L, op, "bitwise ops on floats");
      r = op2(L, "arith.xori", a, cst(L, ct, -1));
    } else if (fl) {
      r = op1(L, !strcmp(n, "neg") ? "arith.negf" : "arith.absf", a, ct);
    } else {
      TlValue *neg = op2(L, "arith.subi", cst(L, ct, 0), a);
      if (!strcmp(n, "neg") || !tl_type_int_signed(ct)) {
        r = !strcmp(n, "neg") ? neg : a;
      } else {
        TlType *i1 = tl_type_bool(L->ctx);
        TlNamedAttr lt = {"predicate", str(L, "lt")};
        TlValue *ops[2] = {a, cst(L, ct, 0)};
        TlValue *below = tl_op_result(make(L, "arith.cmpi", 2, ops, 1, &i1, 1, &lt), 0);
        TlValue *sel[3] = {below, neg, a};
        r = tl_op_result(make(L, "arith.select", 3, sel, 1, &ct, 0, NULL), 0);
      }
    }
    encode(L, t, (unsigned)i, r);
  }
  put_tile(L, tl_op_result(op, 0), t);
  return true;
}

static TlValue *fcst(Lower *L, double v) {
  return tl_arith_constant(&L->b, tl_attr_float(L->ctx, tl_type_f32(L->ctx), v), L->loc);
}

static TlValue *math(Lower *L, const char *fn, TlValue *x) {
  TlType *f32 = tl_type_f32(L->ctx);
  TlNamedAttr a = {"fn", str(L, fn)};
  return tl_op_result(make(L, "simt.math", 1, &x, 1, &f32, 1, &a), 0);
}

static TlValue *fma32(Lower *L, TlValue *a, TlValue *b, TlValue *c) {
  TlType *f32 = tl_type_f32(L->ctx);
  TlValue *ops[3] = {a, b, c};
  return tl_op_result(make(L, "simt.fma", 3, ops, 1, &f32, 0, NULL), 0);
}

/* e^x as 2^t (1 + c ln 2) with t = x * log2(e) rounded and c the rest of
 * x * log2(e): the product's rounding error (an fma) plus x times the
 * low part of log2(e); c is 0 once |t| >= 128, where 2^t is 0 or
 * infinite. The error is ex2.approx's, not a multiple of |x| as for
 * ex2(x * log2(e)). */
static TlValue *exp32(Lower *L, TlValue *x) {
  TlType *f32 = tl_type_f32(L->ctx), *i1 = tl_type_bool(L->ctx);
  TlValue *hi = fcst(L, 1.44269502162933349609375);       /* log2(e) in f32 */
  TlValue *lo = fcst(L, 1.925963033500011e-08);           /* log2(e) - hi */
  TlValue *t = op2(L, "arith.mulf", x, hi);
  TlValue *c = fma32(L, x, lo, fma32(L, x, hi, op1(L, "arith.negf", t, f32)));
  TlNamedAttr olt = {"predicate", str(L, "olt")};
  TlValue *cmp[2] = {op1(L, "arith.absf", t, f32), fcst(L, 128.0)};
  TlValue *small = tl_op_result(make(L, "arith.cmpf", 2, cmp, 1, &i1, 1, &olt), 0);
  TlValue *sel[3] = {small, c, fcst(L, 0.0)};
  c = tl_op_result(make(L, "arith.select", 3, sel, 1, &f32, 0, NULL), 0);
  TlValue *r = math(L, "ex2.approx", t);
  return fma32(L, r, op2(L, "arith.mulf", c, fcst(L, 0.693147182464599609375)), r);
}

/* tl.exp, tl.exp2, tl.log2, tl.sqrt, tl.rsqrt on f16, bf16 and f32: in f32
 * by the special-function unit (sqrt correctly rounded), then rounded to
 * the element type. Within the approximations' error of the VM's exactly
 * rounded values (docs/lowering.md). */
static bool lower_math(Lower *L, TlOp *op) {
  const char *n = tl_op_name(op) + 3;
  Tile *x = tile_of(L, tl_op_operand(op, 0));
  TlType *rt = tl_value_type(tl_op_result(op, 0)), *f32 = tl_type_f32(L->ctx);
  TlType *e = tl_tensor_elem(rt);
  if (!is_f(e, 8, 23) && !is_f(e, 5, 10) && !is_f(e, 8, 7))
    return fail(L, op, "math functions on types other than f16, bf16 and f32");
  Tile *t = zero_tile(L, rt);
  int64_t count = tl_layout_local_size(tl_reg_layout(rt));
  for (int64_t i = 0; i < count; i++) {
    TlType *ct;
    TlValue *a = decode(L, x, (unsigned)i, &ct), *r;
    if (ct != f32)
      a = op1(L, "arith.extf", a, f32);
    if (!strcmp(n, "exp"))
      r = exp32(L, a);
    else
      r = math(L, !strcmp(n, "exp2")   ? "ex2.approx"
                  : !strcmp(n, "log2") ? "lg2.approx"
                  : !strcmp(n, "sqrt") ? "sqrt.rn"
                                       : "rsqrt.approx",
               a);
    if (ct != f32)
      r = op1(L, "arith.truncf", r, ct);
    encode(L, t, (unsigned)i, r);
  }
  put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/* tl.cmp: arith.cmpi by the compute type's signedness, or arith.cmpf with
 * the ordered predicate (false on NaN) except `ne`, which is unordered
 * (true on NaN); each i1 result becomes one bit of the tile. */
static bool lower_cmp(Lower *L, TlOp *op) {
  const char *pred = tl_attr_string_value(tl_op_attr(op, "predicate"), NULL);
  Tile *x = tile_of(L, tl_op_operand(op, 0)), *y = tile_of(L, tl_op_operand(op, 1));
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  Tile *t = zero_tile(L, rt);
  TlType *i1 = tl_type_bool(L->ctx), *w = u32(L);
  TlValue *one = cst(L, w, 1), *zero = cst(L, w, 0);
  x = widen_small(L, x); /* small floats compare by their exact values */
  y = widen_small(L, y);
  if (!x || !y)
    return fail(L, op, "comparisons of this element type (cast it first)");
  int64_t count = tl_layout_local_size(tl_reg_layout(rt));
  for (int64_t i = 0; i < count; i++) {
    TlType *ct;
    TlValue *a = decode(L, x, (unsigned)i, &ct), *b = decode(L, y, (unsigned)i, &ct);
    if (!a)
      return fail(L, op, "comparisons of this element type (cast it first)");
    bool fl = tl_type_is_float(ct);
    char fpred[8];
    snprintf(fpred, sizeof fpred, "%s%s", strcmp(pred, "ne") ? "o" : "u", pred);
    TlNamedAttr pa = {"predicate", str(L, fl ? fpred : pred)};
    TlValue *ops[2] = {a, b};
    TlValue *c = tl_op_result(make(L, fl ? "arith.cmpf" : "arith.cmpi", 2, ops, 1, &i1, 1, &pa), 0);
    TlValue *sel[3] = {c, one, zero};
    set_elem(L, t, (unsigned)i, tl_op_result(make(L, "arith.select", 3, sel, 1, &w, 0, NULL), 0));
  }
  put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/* tl.where: each element's bits from %a or %b by its condition bit. */
static bool lower_where(Lower *L, TlOp *op) {
  Tile *c = tile_of(L, tl_op_operand(op, 0));
  Tile *a = tile_of(L, tl_op_operand(op, 1)), *b = tile_of(L, tl_op_operand(op, 2));
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  Tile *t = zero_tile(L, rt);
  TlType *i1 = tl_type_bool(L->ctx), *w = u32(L);
  TlValue *zero = cst(L, w, 0);
  TlNamedAttr ne = {"predicate", str(L, "ne")};
  int64_t count = tl_layout_local_size(tl_reg_layout(rt));
  bool wide = elem_bits(rt) == 64;
  for (int64_t i = 0; i < count; i++) {
    TlValue *ops[2] = {get_elem(L, c, (unsigned)i), zero};
    TlValue *bit = tl_op_result(make(L, "arith.cmpi", 2, ops, 1, &i1, 1, &ne), 0);
    if (wide) {
      for (int64_t k = 2 * i; k < 2 * i + 2; k++) {
        TlValue *sel[3] = {bit, a->words[k], b->words[k]};
        t->words[k] = tl_op_result(make(L, "arith.select", 3, sel, 1, &w, 0, NULL), 0);
      }
      continue;
    }
    TlValue *sel[3] = {bit, get_elem(L, a, (unsigned)i), get_elem(L, b, (unsigned)i)};
    set_elem(L, t, (unsigned)i, tl_op_result(make(L, "arith.select", 3, sel, 1, &w, 0, NULL), 0));
  }
  put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/* The shared scratch (after the planned tiles) for an op that needs
 * `bytes` of it, after a barrier that keeps earlier users of the scratch
 * ahead of this op's writes. */
static TlValue *scratch_base(Lower *L, int64_t bytes) {
  if (L->scratch_bytes < bytes)
    L->scratch_bytes = bytes;
  TlType *pt = tl_simt_ptr_type(L->ctx, TL_SIMT_SHARED);
  TlValue *p = tl_op_result(make(L, "simt.smem_base", 0, NULL, 1, &pt, 0, NULL), 0);
  TlValue *ops[2] = {p, cst(L, i64(L), L->scratch_base)};
  p = tl_op_result(make(L, "simt.ptr_add", 2, ops, 1, &pt, 0, NULL), 0);
  make(L, "simt.barrier", 0, NULL, 0, NULL, 0, NULL);
  return p;
}

/* Word `slot` (an i64) of the scratch. */
static TlValue *scratch_word(Lower *L, TlValue *scratch, TlValue *slot) {
  TlValue *ops[2] = {scratch, op2(L, "arith.muli", slot, cst(L, i64(L), 4))};
  TlType *pt = tl_value_type(scratch);
  return tl_op_result(make(L, "simt.ptr_add", 2, ops, 1, &pt, 0, NULL), 0);
}

/* The operand's local element that every thread reads for the result's
 * local element i of a tile broadcast, or -1 when some thread of the block
 * does not hold it (the broadcast would move elements between threads). */
static int64_t broadcast_source(Lower *L, const TlLayout *src, const TlLayout *dst,
                                int64_t i) {
  int64_t j = -1, ts = tl_layout_num_threads(src), td = tl_layout_num_threads(dst);
  int64_t holders[1024];
  for (int64_t t = 0; t < (int64_t)L->threads; t++) {
    int64_t idx[TL_LAYOUT_MAX_RANK], local, count;
    if (!tl_layout_map(dst, t % td, i, idx, NULL))
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
      held = holders[k] == t % ts;
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
  TlValue *scratch = scratch_base(L, n * 4), *idx[TL_LAYOUT_MAX_RANK];
  TlValue *guard = writer_guard(L, S);
  TlBuilder outside = guard ? open_guard(L, guard) : L->b;
  for (int64_t i = 0; i < tl_layout_local_size(S); i++) {
    index_of(L, S, i, idx);
    TlValue *lin = cst(L, i64(L), 0);
    for (int d = 0; d < S->rank; d++)
      lin = op2(L, "arith.addi", lin, op2(L, "arith.muli", idx[d], cst(L, i64(L), stride[d])));
    TlValue *ops[2] = {get_elem(L, x, (unsigned)i), scratch_word(L, scratch, lin)};
    make(L, "simt.store", 2, ops, 0, NULL, 0, NULL);
  }
  if (guard)
    close_guard(L, outside);
  make(L, "simt.barrier", 0, NULL, 0, NULL, 0, NULL);
  TlType *w = u32(L);
  for (int64_t i = 0; i < tl_layout_local_size(D); i++) {
    index_of(L, D, i, idx);
    TlValue *lin = cst(L, i64(L), 0);
    for (int d = 0; d < S->rank; d++)
      if (S->shape[d] > 1)
        lin = op2(L, "arith.addi", lin,
                  op2(L, "arith.muli", idx[d], cst(L, i64(L), stride[d])));
    TlValue *p = scratch_word(L, scratch, lin);
    set_elem(L, t, (unsigned)i, tl_op_result(make(L, "simt.load", 1, &p, 1, &w, 0, NULL), 0));
  }
}

/* tl.broadcast of a scalar (its bits in every element) or of a tile: from
 * the same thread's local elements where every thread holds what it needs,
 * else through the shared scratch. */
static bool lower_broadcast(Lower *L, TlOp *op) {
  TlValue *a = tl_op_operand(op, 0);
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  Tile *t = zero_tile(L, rt);
  unsigned b = elem_bits(rt);
  int64_t count = tl_layout_local_size(tl_reg_layout(rt));
  if (tl_tensor_kind(tl_value_type(a)) != TL_TENSOR_REG) {
    if (b == 64) {
      TlType *u64 = tl_type_int(L->ctx, 64, false);
      TlValue *bits = scalar(L, a);
      if (tl_value_type(bits) != u64)
        bits = op1(L, "arith.bitcast", bits, u64);
      for (int64_t i = 0; i < count; i++)
        set_elem64(L, t, (unsigned)i, bits);
      put_tile(L, tl_op_result(op, 0), t);
      return true;
    }
    /* The scalar's bits, zero-extended (set_elem keeps the low b): integers
     * of any width (i1 included) as they are, floats reinterpreted. */
    TlValue *bits = scalar(L, a);
    TlType *st = tl_value_type(bits);
    if (tl_type_is_float(st))
      bits = op1(L, "arith.bitcast", bits, tl_type_int(L->ctx, b, false));
    else if (tl_type_int_signed(st) && !tl_type_is_bool(st))
      bits = op1(L, "arith.bitcast", bits, tl_type_int(L->ctx, b, false));
    if (b < 32)
      bits = op1(L, "arith.exti", bits, u32(L));
    else if (tl_value_type(bits) != u32(L))
      bits = op1(L, "arith.bitcast", bits, u32(L));
    for (int64_t i = 0; i < count; i++)
      set_elem(L, t, (unsigned)i, bits);
    put_tile(L, tl_op_result(op, 0), t);
    return true;
  }
  Tile *x = tile_of(L, a);
  int64_t *src = tl_xmalloc(sizeof *src * (size_t)(count + 1));
  bool local = true;
  for (int64_t i = 0; i < count && local; i++)
    local = (src[i] = broadcast_source(L, tl_reg_layout(x->type), tl_reg_layout(rt), i)) >= 0;
  if (local)
    for (int64_t i = 0; i < count; i++)
      copy_elem(L, t, (unsigned)i, x, (unsigned)src[i]);
  else if (b == 64)
    fail(L, op, "broadcasts of 64-bit elements that move them between threads");
  else
    broadcast_through_scratch(L, x, t);
  tl_free(src);
  if (L->failed)
    return false;
  put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/* A value of a compute type as 32 bits for a shuffle, and back. */
static TlValue *to_word(Lower *L, TlValue *v, TlType *ct) {
  if (tl_type_is_float(ct) && tl_type_bitwidth(ct) == 16)
    return op1(L, "arith.exti", op1(L, "arith.bitcast", v, tl_type_int(L->ctx, 16, false)),
               u32(L));
  return ct == u32(L) ? v : op1(L, "arith.bitcast", v, u32(L));
}

static TlValue *from_word(Lower *L, TlValue *w, TlType *ct) {
  if (tl_type_is_float(ct) && tl_type_bitwidth(ct) == 16)
    return op1(L, "arith.bitcast", op1(L, "arith.trunci", w, tl_type_int(L->ctx, 16, false)),
               ct);
  return ct == u32(L) ? w : op1(L, "arith.bitcast", w, ct);
}

/* Word r * T + thread (an i64) of the reduction scratch. */
static TlValue *scratch_slot(Lower *L, TlValue *scratch, int64_t r, TlValue *thread) {
  return scratch_word(L, scratch, op2(L, "arith.addi", thread, cst(L, i64(L), r * L->threads)));
}

/* tl.reduce: each thread combines its local elements of a result element
 * in index order, then the lanes holding the other parts exchange partial
 * results by butterfly shuffles (xor over the thread-index bits of the
 * dimension's spatial modes), so every lane ends with the whole result, as
 * the reduced layout's replication requires. Parts held by other warps
 * meet in a shared scratch placed after the planned tiles. Integer and
 * max/min results equal the VM's; a float sum adds in another order than
 * its index order. */
static bool lower_reduce(Lower *L, TlOp *op) {
  const char *kind = tl_attr_string_value(tl_op_attr(op, "kind"), NULL);
  int d = (int)tl_attr_int_value(tl_op_attr(op, "dim"));
  Tile *x = tile_of(L, tl_op_operand(op, 0));
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  const TlLayout *A = tl_reg_layout(x->type), *R = tl_reg_layout(rt);
  bool sum = !strcmp(kind, "sum"), max = !strcmp(kind, "max");
  const char *fop = sum ? "arith.addf" : max ? "arith.maxf" : "arith.minf";
  const char *iop = sum ? "arith.addi" : max ? "arith.maxi" : "arith.mini";
  /* The thread-index bits of d's spatial modes: butterfly shuffle masks
   * within a warp (masks), and bits that select warps (cross). */
  int64_t masks[32], cross[32], below = 1, crossmask = 0;
  int nm = 0, nc = 0;
  for (int k = A->num_spatial - 1; k >= 0; k--) {
    int m = A->spatial_modes[k];
    int64_t size = m >= 0 ? A->mode_shape[m] : -m;
    if (m >= 0 && A->mode_dim[m] == d && size > 1) {
      if ((size & (size - 1)) || (below & (below - 1)))
        return fail(L, op, "reductions over thread groups that are not powers of two");
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
    return fail(L, op, "reductions across threads in blocks that are not whole warps");
  if ((nm || nc) && elem_bits(rt) == 64)
    return fail(L, op, "reductions of 64-bit elements across threads");
  int64_t nres = tl_layout_local_size(R);
  TlValue *scratch = NULL, *mine = NULL, *tbase = NULL;
  if (nc) {
    /* Each thread's partial results go to word r * T + t of the scratch;
     * after a barrier every thread combines the partials of the threads
     * that differ from it in the cross bits only. */
    scratch = scratch_base(L, nres * L->threads * 4);
    mine = op1(L, "arith.exti", L->tid, i64(L));
    tbase = op2(L, "arith.andi", mine, cst(L, i64(L), ~crossmask));
  }
  TlType **ctypes = nc ? TL_ARENA_NEWN(&L->arena, TlType *, (size_t)nres) : NULL;
  Tile *t = zero_tile(L, rt);
  int64_t na = tl_layout_local_size(A), nr = tl_layout_local_size(R);
  int64_t *order = tl_xmalloc(sizeof *order * (size_t)(na + 1));
  int64_t *pos = tl_xmalloc(sizeof *pos * (size_t)(na + 1));
  bool ok = true;
  for (int64_t r = 0; r < nr && ok; r++) {
    int64_t cr[TL_LAYOUT_MAX_RANK], c[TL_LAYOUT_MAX_RANK];
    const_index(R, r, cr);
    /* The operand's local elements of this result, by their index in d. */
    int64_t n = 0;
    for (int64_t i = 0; i < na; i++) {
      const_index(A, i, c);
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
      TlValue *v = decode(L, x, (unsigned)order[k], &ct);
      if (!v) {
        ok = fail(L, op, "reductions of this element type (cast it first)");
        break;
      }
      acc = acc ? op2(L, tl_type_is_float(ct) ? fop : iop, acc, v) : v;
    }
    if (ok && !acc)
      ok = fail(L, op, "a reduced layout whose elements the lowering cannot match");
    if (!ok)
      break;
    for (int k = 0; k < nm; k++) {
      TlNamedAttr mode = {"mode", str(L, "bfly")};
      TlType *w = u32(L);
      TlValue *ops[2] = {to_word(L, acc, ct), cst(L, i32(L), masks[k])};
      TlValue *o = tl_op_result(make(L, "simt.shfl", 2, ops, 1, &w, 1, &mode), 0);
      acc = op2(L, tl_type_is_float(ct) ? fop : iop, acc, from_word(L, o, ct));
    }
    if (nc) {
      TlValue *ops[2] = {to_word(L, acc, ct), scratch_slot(L, scratch, r, mine)};
      make(L, "simt.store", 2, ops, 0, NULL, 0, NULL);
      ctypes[r] = ct;
      continue;
    }
    encode(L, t, (unsigned)r, acc);
  }
  tl_free(order);
  tl_free(pos);
  if (!ok)
    return false;
  if (nc) {
    make(L, "simt.barrier", 0, NULL, 0, NULL, 0, NULL);
    TlType *w = u32(L);
    for (int64_t r = 0; r < nres; r++) {
      TlValue *acc = NULL;
      for (int64_t c = 0; c < (INT64_C(1) << nc); c++) {
        int64_t other = 0;
        for (int j = 0; j < nc; j++)
          if (c >> j & 1)
            other |= cross[j];
        TlValue *who = other ? op2(L, "arith.addi", tbase, cst(L, i64(L), other)) : tbase;
        TlValue *p = scratch_slot(L, scratch, r, who);
        TlValue *v = from_word(L, tl_op_result(make(L, "simt.load", 1, &p, 1, &w, 0, NULL), 0),
                               ctypes[r]);
        acc = acc ? op2(L, tl_type_is_float(ctypes[r]) ? fop : iop, acc, v) : v;
      }
      encode(L, t, (unsigned)r, acc);
    }
  }
  put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/*===--- print -----------------------------------------------------------===*/

/* A value of element type e as a printf operand and its conversion, in
 * the block VM's style: integers in decimal, floats with enough digits to
 * identify them within their type. NULL for types print cannot show. */
static TlValue *print_arg(Lower *L, TlValue *v, TlType *e, const char **spec) {
  TlType *f32 = tl_type_f32(L->ctx);
  if (tl_type_is_int(e)) {
    unsigned w = tl_type_int_width(e);
    bool sg = tl_type_int_signed(e) && !tl_type_is_bool(e);
    if (w == 64) {
      *spec = sg ? "%lld" : "%llu";
      return v;
    }
    *spec = sg ? "%d" : "%u";
    TlType *t32 = sg ? i32(L) : u32(L);
    return tl_value_type(v) == t32 ? v : op1(L, "arith.exti", v, t32);
  }
  if (is_f(e, 11, 52)) {
    *spec = "%.17g";
    return v;
  }
  if (is_f(e, 8, 23) || is_f(e, 5, 10) || is_f(e, 8, 7)) {
    *spec = is_f(e, 8, 23) ? "%.9g" : "%.5g";
    return tl_value_type(v) == f32 ? v : op1(L, "arith.extf", v, f32);
  }
  return NULL;
}

/* `FILE:LINE:COL: TYPE` of a print, with % doubled for printf. */
static void print_where(TlOp *op, TlType *t, TlStr *out) {
  TlLoc l = tl_op_loc(op);
  for (const char *c = l.file ? l.file : "<unknown>"; *c; c++)
    tl_str_printf(out, *c == '%' ? "%%%%" : "%c", *c);
  tl_str_printf(out, ":%u:%u: ", l.line, l.col);
  TlStr ts = {0};
  tl_type_print(t, &ts);
  tl_str_printf(out, "%s", tl_str_cstr(&ts));
  tl_str_free(&ts);
}

static void emit_printf(Lower *L, const char *fmt, unsigned n, TlValue *const *args) {
  TlNamedAttr f = {"format", str(L, fmt)};
  make(L, "simt.printf", n, args, 0, NULL, 1, &f);
}

/* tl.print through the device printf. A scalar: thread 0 of each block
 * prints `block (x, y, z): WHERE: TYPE = VALUE`, as the block VM does. A
 * tile: each element once (replicas skipped), by the thread that holds
 * it, as `block (x, y, z) thread T: WHERE: TYPE[i, j] = VALUE`, in the
 * device's order. */
static bool lower_print(Lower *L, TlOp *op) {
  TlValue *v = tl_op_operand(op, 0);
  TlType *t = tl_value_type(v);
  TlValue *blk[3];
  TlType *it = i32(L);
  for (int d = 0; d < 3; d++) {
    TlNamedAttr dim = {"dim", str(L, d == 0 ? "x" : d == 1 ? "y" : "z")};
    blk[d] = tl_op_result(make(L, "simt.block_id", 0, NULL, 1, &it, 1, &dim), 0);
  }
  TlStr fmt = {0};
  const char *spec;
  if (tl_tensor_kind(t) != TL_TENSOR_REG) {
    TlValue *a = print_arg(L, scalar(L, v), t, &spec);
    if (!a) {
      tl_str_free(&fmt);
      return fail(L, op, "prints of this scalar type");
    }
    tl_str_printf(&fmt, "block (%%d, %%d, %%d): ");
    print_where(op, t, &fmt);
    tl_str_printf(&fmt, " = %s\n", spec);
    TlType *i1 = tl_type_bool(L->ctx);
    TlNamedAttr eq = {"predicate", str(L, "eq")};
    TlValue *ops[2] = {L->tid, cst(L, i32(L), 0)};
    TlBuilder outside =
        open_guard(L, tl_op_result(make(L, "arith.cmpi", 2, ops, 1, &i1, 1, &eq), 0));
    TlValue *args[4] = {blk[0], blk[1], blk[2], a};
    emit_printf(L, tl_str_cstr(&fmt), 4, args);
    close_guard(L, outside);
    tl_str_free(&fmt);
    return true;
  }
  Tile *x = tile_of(L, v);
  const TlLayout *l = tl_reg_layout(t);
  TlType *e = tl_tensor_elem(t);
  TlValue *guard = writer_guard(L, l);
  TlBuilder outside = guard ? open_guard(L, guard) : L->b;
  bool ok = true;
  for (int64_t i = 0; i < tl_layout_local_size(l) && ok; i++) {
    TlType *ct;
    TlValue *val = decode(L, x, (unsigned)i, &ct), *idx[TL_LAYOUT_MAX_RANK];
    TlValue *a = val ? print_arg(L, val, e, &spec) : NULL;
    if (!a) {
      ok = fail(L, op, "prints of tiles of this element type (cast them first)");
      break;
    }
    index_of(L, l, i, idx);
    tl_str_clear(&fmt);
    tl_str_printf(&fmt, "block (%%d, %%d, %%d) thread %%d: ");
    print_where(op, t, &fmt);
    TlValue *args[4 + TL_LAYOUT_MAX_RANK + 1] = {blk[0], blk[1], blk[2], L->tid};
    for (int d = 0; d < l->rank; d++) {
      tl_str_printf(&fmt, d ? ", %%lld" : "[%%lld");
      args[4 + d] = idx[d];
    }
    tl_str_printf(&fmt, "] = %s\n", spec);
    args[4 + l->rank] = a;
    emit_printf(L, tl_str_cstr(&fmt), 5 + (unsigned)l->rank, args);
  }
  if (guard)
    close_guard(L, outside);
  tl_str_free(&fmt);
  return ok;
}

/*===--- Control flow and the driver -------------------------------------===*/

static bool lower_block(Lower *L, TlBlock *blk);

/* Expands the types of values for loop/if signatures: tiles become words. */
typedef TL_VEC(TlValue *) ValueVec;

static void expand_value(Lower *L, TlValue *v, ValueVec *out) {
  Tile *t = tile_of(L, v);
  if (t) {
    for (unsigned i = 0; i < t->nwords; i++)
      tl_vec_push(out, t->words[i]);
  } else {
    tl_vec_push(out, scalar(L, v));
  }
}

/* Maps values vals[0..n) (types types[]) from a flat list of new values. */
static void bind_expanded(Lower *L, unsigned n, TlValue *const *olds, TlValue *const *news) {
  unsigned k = 0;
  for (unsigned i = 0; i < n; i++) {
    TlType *t = tl_value_type(olds[i]);
    if (tl_tensor_kind(t) == TL_TENSOR_REG) {
      Tile *tile = new_tile(L, t);
      for (unsigned j = 0; j < tile->nwords; j++)
        tile->words[j] = news[k++];
      put_tile(L, olds[i], tile);
    } else {
      put_scalar(L, olds[i], news[k++]);
    }
  }
}

/* The types a value of type t expands to: a tile's words, else the
 * scalar's lowered type. */
/* Maps the results of the old op to the expanded results of its lowered
 * form. */
static void bind_results(Lower *L, TlOp *op, TlOp *nop) {
  unsigned n = tl_op_num_results(op);
  ValueVec res = {0};
  for (unsigned i = 0; i < tl_op_num_results(nop); i++)
    tl_vec_push(&res, tl_op_result(nop, i));
  TlValue **oldres = tl_xmalloc(sizeof *oldres * (n + 1));
  for (unsigned i = 0; i < n; i++)
    oldres[i] = tl_op_result(op, i);
  bind_expanded(L, n, oldres, res.data);
  tl_free(oldres);
  tl_vec_free(&res);
}

typedef TL_VEC(TlType *) TypeVec;

static void expand_type(Lower *L, TlType *t, TypeVec *out) {
  if (tl_tensor_kind(t) == TL_TENSOR_REG) {
    Tile *tile = new_tile(L, t);
    for (unsigned j = 0; j < tile->nwords; j++)
      tl_vec_push(out, u32(L));
  } else {
    tl_vec_push(out, tl_type_is_ptr(t) ? tl_simt_ptr_type(L->ctx, TL_SIMT_GLOBAL) : t);
  }
}

/* Lowers region r of the old op into a new block of region r of nop:
 * block arguments expanded, the body lowered, the terminator (same name)
 * rebuilt over expanded operands, its first `keep` operands as they are
 * (scf.condition's flag). */
static bool lower_region_into(Lower *L, TlOp *op, TlOp *nop, unsigned r, unsigned keep) {
  TlBlock *ob = tl_region_first_block(tl_op_region(op, r)), *nb = tl_block_create(L->module);
  tl_region_append_block(tl_op_region(nop, r), nb);
  unsigned na = tl_block_num_args(ob);
  TypeVec types = {0};
  for (unsigned i = 0; i < na; i++)
    expand_type(L, tl_value_type(tl_block_arg(ob, i)), &types);
  ValueVec args = {0};
  for (size_t i = 0; i < types.len; i++)
    tl_vec_push(&args, tl_block_add_arg(nb, types.data[i], L->loc));
  TlValue **olds = tl_xmalloc(sizeof *olds * (na + 1));
  for (unsigned i = 0; i < na; i++)
    olds[i] = tl_block_arg(ob, i);
  bind_expanded(L, na, olds, args.data);
  tl_free(olds);
  TlBuilder saved = L->b;
  tl_builder_set_end(&L->b, nb);
  bool ok = lower_block(L, ob);
  if (ok) {
    TlOp *y = tl_block_terminator(ob);
    ValueVec outs = {0};
    for (unsigned i = 0; i < tl_op_num_operands(y); i++) {
      if (i < keep)
        tl_vec_push(&outs, scalar(L, tl_op_operand(y, i)));
      else
        expand_value(L, tl_op_operand(y, i), &outs);
    }
    tl_builder_create(&L->b, tl_op_name(y), L->loc, (unsigned)outs.len, outs.data, 0, NULL);
    tl_vec_free(&outs);
  }
  L->b = saved;
  tl_vec_free(&types);
  tl_vec_free(&args);
  return ok;
}

/* scf.if: the same op over expanded results, each region lowered in
 * place and its yield expanded. */
static bool lower_if(Lower *L, TlOp *op) {
  unsigned n = tl_op_num_results(op);
  TypeVec types = {0};
  for (unsigned i = 0; i < n; i++)
    expand_type(L, tl_value_type(tl_op_result(op, i)), &types);
  TlOpState st;
  tl_op_state_init(&st, L->ctx, tl_context_op_def(L->ctx, "scf.if"), L->loc);
  tl_op_state_add_operand(&st, scalar(L, tl_op_operand(op, 0)));
  for (size_t i = 0; i < types.len; i++)
    tl_op_state_add_result(&st, types.data[i]);
  st.nregions = 2;
  TlOp *nif = tl_builder_insert(&L->b, &st);
  bool ok = true;
  for (unsigned r = 0; r < 2 && ok; r++)
    if (!tl_region_empty(tl_op_region(op, r)))
      ok = lower_region_into(L, op, nif, r, 0);
  if (ok)
    bind_results(L, op, nif);
  tl_vec_free(&types);
  return ok;
}

/* scf.while: inits, results and both regions' arguments expanded. */
static bool lower_while(Lower *L, TlOp *op) {
  unsigned n = tl_op_num_results(op);
  ValueVec inits = {0};
  for (unsigned i = 0; i < tl_op_num_operands(op); i++)
    expand_value(L, tl_op_operand(op, i), &inits);
  TypeVec types = {0};
  for (unsigned i = 0; i < n; i++)
    expand_type(L, tl_value_type(tl_op_result(op, i)), &types);
  TlOpState st;
  tl_op_state_init(&st, L->ctx, tl_context_op_def(L->ctx, "scf.while"), L->loc);
  tl_op_state_add_operands(&st, (unsigned)inits.len, inits.data);
  for (size_t i = 0; i < types.len; i++)
    tl_op_state_add_result(&st, types.data[i]);
  st.nregions = 2;
  TlOp *nw = tl_builder_insert(&L->b, &st);
  bool ok = lower_region_into(L, op, nw, 0, 1) && lower_region_into(L, op, nw, 1, 0);
  if (ok)
    bind_results(L, op, nw);
  tl_vec_free(&inits);
  tl_vec_free(&types);
  return ok;
}

static bool lower_for(Lower *L, TlOp *op) {
  unsigned n = tl_op_num_results(op);
  ValueVec inits = {0};
  TL_VEC(TlType *) types = {0};
  for (unsigned i = 0; i < n; i++)
    expand_value(L, tl_op_operand(op, 3 + i), &inits);
  for (size_t i = 0; i < inits.len; i++)
    tl_vec_push(&types, tl_value_type(inits.data[i]));
  TlOpState st;
  tl_op_state_init(&st, L->ctx, tl_context_op_def(L->ctx, "scf.for"), L->loc);
  for (unsigned i = 0; i < 3; i++)
    tl_op_state_add_operand(&st, scalar(L, tl_op_operand(op, i)));
  tl_op_state_add_operands(&st, (unsigned)inits.len, inits.data);
  for (size_t i = 0; i < types.len; i++)
    tl_op_state_add_result(&st, types.data[i]);
  st.nregions = 1;
  TlOp *nf = tl_builder_insert(&L->b, &st);
  TlBlock *body = tl_block_create(L->module), *old = tl_region_first_block(tl_op_region(op, 0));
  tl_region_append_block(tl_op_region(nf, 0), body);
  TlValue *iv = tl_block_add_arg(body, tl_value_type(tl_block_arg(old, 0)), L->loc);
  put_scalar(L, tl_block_arg(old, 0), iv);
  ValueVec args = {0};
  for (size_t i = 0; i < types.len; i++)
    tl_vec_push(&args, tl_block_add_arg(body, types.data[i], L->loc));
  TlValue **olds = tl_xmalloc(sizeof *olds * (n + 1));
  for (unsigned i = 0; i < n; i++)
    olds[i] = tl_block_arg(old, 1 + i);
  bind_expanded(L, n, olds, args.data);
  TlBuilder saved = L->b;
  tl_builder_set_end(&L->b, body);
  bool ok = lower_block(L, old);
  if (ok) {
    TlOp *y = tl_block_terminator(old);
    ValueVec outs = {0};
    for (unsigned i = 0; i < tl_op_num_operands(y); i++)
      expand_value(L, tl_op_operand(y, i), &outs);
    tl_builder_create(&L->b, "scf.yield", L->loc, (unsigned)outs.len, outs.data, 0, NULL);
    tl_vec_free(&outs);
  }
  L->b = saved;
  bind_results(L, op, nf);
  tl_free(olds);
  tl_vec_free(&inits);
  tl_vec_free(&types);
  tl_vec_free(&args);
  return ok;
}

/* Ops of arith are per-thread scalars already: clone with mapped operands. */
static bool lower_scalar_op(Lower *L, TlOp *op) {
  TlOpState st;
  tl_op_state_init(&st, L->ctx, tl_op_def(op), L->loc);
  for (unsigned i = 0; i < tl_op_num_operands(op); i++) {
    TlValue *v = scalar(L, tl_op_operand(op, i));
    if (!v) {
      tl_op_state_free(&st);
      return fail(L, op, "an op using a tile where a scalar is expected");
    }
    tl_op_state_add_operand(&st, v);
  }
  for (unsigned i = 0; i < tl_op_num_results(op); i++)
    tl_op_state_add_result(&st, tl_value_type(tl_op_result(op, i)));
  for (unsigned i = 0; i < tl_op_num_attrs(op); i++)
    tl_op_state_set_attr(&st, tl_op_attr_at(op, i).name, tl_op_attr_at(op, i).attr);
  TlOp *n = tl_builder_insert(&L->b, &st);
  for (unsigned i = 0; i < tl_op_num_results(op); i++) {
    tl_value_set_name_hint(tl_op_result(n, i), tl_value_name_hint(tl_op_result(op, i)));
    put_scalar(L, tl_op_result(op, i), tl_op_result(n, i));
  }
  return true;
}

static bool lower_op(Lower *L, TlOp *op) {
  const char *n = tl_op_name(op);
  L->loc = tl_op_loc(op);
  if (!strncmp(n, "arith.", 6))
    return lower_scalar_op(L, op);
  if (!strcmp(n, "scf.for"))
    return lower_for(L, op);
  if (!strcmp(n, "scf.if"))
    return lower_if(L, op);
  if (!strcmp(n, "scf.while"))
    return lower_while(L, op);
  if (!strcmp(n, "tl.block_indices")) {
    static const char *const dims[] = {"x", "y", "z"};
    for (unsigned i = 0; i < tl_op_num_results(op); i++) {
      TlNamedAttr d = {"dim", str(L, dims[i])};
      TlType *t = i32(L);
      TlValue *v = tl_op_result(make(L, "simt.block_id", 0, NULL, 1, &t, 1, &d), 0);
      tl_value_set_name_hint(v, tl_value_name_hint(tl_op_result(op, i)));
      put_scalar(L, tl_op_result(op, i), v);
    }
    return true;
  }
  if (!strcmp(n, "tl.template")) {
    TlOp *k = tl_enclosing_kernel(op);
    TlAttr *v = tl_attr_dict_get(tl_op_attr(k, "template"),
                                 tl_attr_string_value(tl_op_attr(op, "name"), NULL));
    put_scalar(L, tl_op_result(op, 0),
               cst(L, tl_value_type(tl_op_result(op, 0)), tl_attr_int_value(v)));
    return true;
  }
  if (!strcmp(n, "tl.alloc_global"))
    return lower_alloc_global(L, op);
  if (!strcmp(n, "tl.view_global"))
    return lower_view_global(L, op);
  if (!strcmp(n, "tl.alloc_register"))
    return lower_alloc_register(L, op);
  if (!strcmp(n, "tl.load_global"))
    return lower_load_global(L, op);
  if (!strcmp(n, "tl.store_global"))
    return lower_store_global(L, op);
  if (!strcmp(n, "tl.view") || !strcmp(n, "tl.reshape") ||
      !strcmp(n, "tl.permute") || !strcmp(n, "tl.slice"))
    return lower_reinterpret(L, op);
  if (!strcmp(n, "tl.cast"))
    return lower_cast(L, op);
  if (!strcmp(n, "tl.dot"))
    return lower_dot(L, op);
  if (!strcmp(n, "tl.add") || !strcmp(n, "tl.sub") || !strcmp(n, "tl.mul") ||
      !strcmp(n, "tl.div") || !strcmp(n, "tl.max") || !strcmp(n, "tl.min") ||
      !strcmp(n, "tl.and") || !strcmp(n, "tl.or") || !strcmp(n, "tl.xor") ||
      !strcmp(n, "tl.mod") || !strcmp(n, "tl.shl") || !strcmp(n, "tl.shr"))
    return lower_elementwise(L, op);
  if (!strcmp(n, "tl.neg") || !strcmp(n, "tl.abs") || !strcmp(n, "tl.not"))
    return lower_unary(L, op);
  if (!strcmp(n, "tl.print"))
    return lower_print(L, op);
  if (!strcmp(n, "tl.exp") || !strcmp(n, "tl.exp2") || !strcmp(n, "tl.log2") ||
      !strcmp(n, "tl.sqrt") || !strcmp(n, "tl.rsqrt"))
    return lower_math(L, op);
  if (!strcmp(n, "tl.cmp"))
    return lower_cmp(L, op);
  if (!strcmp(n, "tl.broadcast"))
    return lower_broadcast(L, op);
  if (!strcmp(n, "tl.reduce"))
    return lower_reduce(L, op);
  if (!strcmp(n, "tl.where"))
    return lower_where(L, op);
  if (!strcmp(n, "tl.alloc_shared"))
    return lower_alloc_shared(L, op);
  if (!strcmp(n, "tl.free_shared"))
    return true; /* the plan already reuses its bytes */
  if (!strcmp(n, "tl.load_shared"))
    return lower_load_shared(L, op);
  if (!strcmp(n, "tl.store_shared"))
    return lower_store_shared(L, op);
  if (!strcmp(n, "tl.copy_async"))
    return lower_copy_async(L, op);
  if (!strcmp(n, "tl.copy_async_commit")) {
    make(L, "simt.cp_async_commit", 0, NULL, 0, NULL, 0, NULL);
    return true;
  }
  if (!strcmp(n, "tl.copy_async_wait")) {
    TlNamedAttr p = {"pending", tl_op_attr(op, "pending")};
    make(L, "simt.cp_async_wait", 0, NULL, 0, NULL, 1, &p);
    return true;
  }
  if (!strcmp(n, "tl.synchronize")) {
    make(L, "simt.barrier", 0, NULL, 0, NULL, 0, NULL);
    return true;
  }
  return fail(L, op, "this op");
}

static bool lower_block(Lower *L, TlBlock *blk) {
  for (TlOp *op = tl_block_first_op(blk); op; op = tl_op_next(op)) {
    if (tl_op_has_trait(op, TL_TRAIT_TERMINATOR))
      return true;
    if (!lower_op(L, op))
      return false;
  }
  return true;
}

/* Grid-expression names for `threads`: template values only. */
static bool template_lookup(void *user, const char *name, size_t len, int64_t *v) {
  TlAttr *templ = user;
  for (unsigned i = 0; i < tl_attr_dict_size(templ); i++) {
    TlNamedAttr e = tl_attr_dict_entry(templ, i);
    if (strlen(e.name) == len && !memcmp(e.name, name, len)) {
      *v = tl_attr_int_value(e.attr);
      return true;
    }
  }
  return false;
}

/* Replaces one tl.kernel by a kernel func. */
static bool lower_kernel(TlContext *ctx, TlOp *k) {
  Lower L;
  memset(&L, 0, sizeof L);
  L.ctx = ctx;
  L.module = tl_op_module(k);
  L.loc = tl_op_loc(k);
  TlType *ft = tl_attr_type_value(tl_op_attr(k, "function_type"));
  unsigned n = tl_type_function_num_inputs(ft);
  int64_t threads;
  size_t tlen;
  const char *ttext = tl_attr_string_value(tl_op_attr(k, "threads"), &tlen);
  TlErr err;
  if (!tl_expr_eval(ttext, tlen, template_lookup, tl_op_attr(k, "template"), &threads, &err,
                    NULL) ||
      threads < 1 || threads > 1024) {
    tl_op_emit_error(k, "cannot lower: threads per block must be a constant from 1 to "
                        "1024 (template values allowed): %s",
                     threads < 1 || threads > 1024 ? "out of range" : err.msg);
    return false;
  }
  L.threads = (unsigned)threads;
  TL_VEC(TlType *) ins = {0};
  for (unsigned i = 0; i < n; i++) {
    TlType *t = tl_type_function_input(ft, i);
    tl_vec_push(&ins, tl_type_is_ptr(t) ? tl_simt_ptr_type(ctx, TL_SIMT_GLOBAL) : t);
  }
  /* The global workspace, when the kernel allocates one, is one more
   * parameter after the kernel's own (the launcher allocates and zeroes
   * `workspace_bytes` for it). */
  tl_plan_global_workspace(k);
  int64_t ws_bytes = tl_attr_int_value(tl_op_attr(k, "workspace_bytes"));
  if (ws_bytes)
    tl_vec_push(&ins, tl_simt_ptr_type(ctx, TL_SIMT_GLOBAL));
  TlOpState st;
  tl_op_state_init(&st, ctx, tl_context_op_def(ctx, "builtin.func"), L.loc);
  tl_op_state_set_attr(&st, "sym_name", tl_op_attr(k, "sym_name"));
  tl_op_state_set_attr(&st, "function_type",
                       tl_attr_type(ctx, tl_type_function(ctx, (unsigned)ins.len, ins.data, 0,
                                                          NULL)));
  if (ws_bytes)
    tl_op_state_set_attr(&st, "workspace_bytes",
                         tl_attr_int(ctx, tl_type_int(ctx, 64, true), ws_bytes));
  tl_op_state_set_attr(&st, "kernel", tl_attr_unit(ctx));
  tl_op_state_set_attr(&st, "threads", tl_attr_int(ctx, tl_type_int(ctx, 64, true), threads));
  /* What the runtime needs to launch it: the grid over the parameters. */
  tl_op_state_set_attr(&st, "grid", tl_op_attr(k, "grid"));
  tl_op_state_set_attr(&st, "arg_names", tl_op_attr(k, "arg_names"));
  tl_op_state_set_attr(&st, "template", tl_op_attr(k, "template"));
  st.nregions = 1;
  L.facts = tl_analysis_run(k);
  /* Shared tiles at their planned offsets, the total on the func. */
  if (L.facts && TL_FAILED(tl_plan_shared_memory(k, TL_SMEM_LIMIT))) {
    tl_analysis_destroy(L.facts);
    L.facts = NULL;
  }
  if (L.facts) {
    L.scratch_base = (tl_kernel_smem_bytes(k) + 15) / 16 * 16;
    tl_op_state_set_attr(&st, "smem_bytes",
                         tl_attr_int(ctx, tl_type_int(ctx, 64, true),
                                     tl_kernel_smem_bytes(k)));
  }
  if (!L.facts) {
    tl_op_state_free(&st);
    tl_vec_free(&ins);
    return false;
  }
  tl_builder_init(&L.b, L.module);
  tl_builder_set_before(&L.b, k);
  TlOp *fn = tl_builder_insert(&L.b, &st);
  tl_vec_free(&ins);
  TlBlock *body = tl_block_create(L.module);
  tl_region_append_block(tl_op_region(fn, 0), body);
  TlBlock *old = tl_region_first_block(tl_op_region(k, 0));
  for (unsigned i = 0; i < n; i++) {
    TlValue *a = tl_block_add_arg(body, tl_type_function_input(tl_attr_type_value(
                                            tl_op_attr(fn, "function_type")), i),
                                  L.loc);
    tl_value_set_name_hint(a, tl_value_name_hint(tl_block_arg(old, i)));
    put_scalar(&L, tl_block_arg(old, i), a);
  }
  if (ws_bytes) {
    L.workspace = tl_block_add_arg(body, tl_simt_ptr_type(ctx, TL_SIMT_GLOBAL), L.loc);
    tl_value_set_name_hint(L.workspace, tl_context_intern(ctx, "workspace", 9));
  }
  tl_builder_set_end(&L.b, body);
  TlNamedAttr dx = {"dim", str(&L, "x")};
  TlType *t32 = i32(&L);
  L.tid = tl_op_result(make(&L, "simt.thread_id", 0, NULL, 1, &t32, 1, &dx), 0);
  tl_value_set_name_hint(L.tid, tl_context_intern(ctx, "tid", 3));
  bool ok = lower_block(&L, old);
  if (ok && L.scratch_bytes) {
    int64_t total = L.scratch_base + L.scratch_bytes;
    if (total > TL_SMEM_LIMIT) {
      tl_op_emit_error(k, "cannot lower: the shared tiles (%lld bytes) and the reduction "
                          "scratch (%lld bytes) exceed the %d bytes of shared memory",
                       (long long)L.scratch_base, (long long)L.scratch_bytes, TL_SMEM_LIMIT);
      ok = false;
    } else {
      tl_op_set_attr(fn, "smem_bytes", tl_attr_int(ctx, tl_type_int(ctx, 64, true), total));
    }
  }
  if (ok) {
    tl_builder_create(&L.b, "builtin.return", L.loc, 0, NULL, 0, NULL);
    tl_op_erase(k);
  } else {
    tl_op_erase(fn);
  }
  tl_analysis_destroy(L.facts);
  tl_vec_free(&L.map);
  tl_arena_reset(&L.arena);
  return ok;
}

typedef TL_VEC(TlOp *) TlOpVec;

static void collect_kernels(TlOp *op, void *user) {
  TlOpVec *ks = user;
  if (!strcmp(tl_op_name(op), "tl.kernel"))
    tl_vec_push(ks, op);
}

TlResult tl_pass_lower_tl_to_simt(TlOp *module, const TlPassOptions *opts) {
  TlOpVec ks = {0};
  tl_op_walk(module, collect_kernels, &ks, false);
  bool ok = true;
  for (size_t i = 0; i < ks.len && ok; i++)
    ok = lower_kernel(tl_op_context(module), ks.data[i]);
  tl_vec_free(&ks);
  return ok ? TL_SUCCESS : TL_FAILURE;
}
