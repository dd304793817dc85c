/* The common ground of lower-tl-to-simt: the map from the kernel's values
 * to their lowered forms, the packed words of register tiles and their
 * elements in compute types, the logical indices of a thread's elements,
 * accesses of up to 16 bytes from and to tile elements, and guards that
 * leave one writer per element. */
#include "lower.h"

/*===--- Lowered values --------------------------------------------------===*/

/* The map is a vector of entries with an open-addressing index over it:
 * each value's slot holds its latest entry (a later put shadows an
 * earlier one), so a lookup is one probe sequence, not a scan. */
static size_t slot_of(const Lower *L, const TlValue *v) {
  uint64_t h = tl_hash_bytes(&v, sizeof v, 0);
  return (size_t)h & (L->nslots - 1);
}

static void index_entry(Lower *L, size_t e) {
  const TlValue *v = L->map.data[e].from;
  size_t i = slot_of(L, v);
  while (L->slots[i] && L->map.data[L->slots[i] - 1].from != v)
    i = (i + 1) & (L->nslots - 1);
  L->slots[i] = e + 1;
}

static void put(Lower *L, Entry e) {
  tl_vec_push(&L->map, e);
  if (2 * L->map.len > L->nslots) {
    tl_free(L->slots);
    L->nslots = L->nslots ? 2 * L->nslots : 64;
    L->slots = tl_xcalloc(L->nslots, sizeof *L->slots);
    for (size_t i = 0; i < L->map.len; i++) /* in order: the latest wins */
      index_entry(L, i);
  } else {
    index_entry(L, L->map.len - 1);
  }
}

static Entry *find(Lower *L, TlValue *v) {
  if (!L->nslots)
    return NULL;
  for (size_t i = slot_of(L, v); L->slots[i]; i = (i + 1) & (L->nslots - 1))
    if (L->map.data[L->slots[i] - 1].from == v)
      return &L->map.data[L->slots[i] - 1];
  return NULL;
}

void lw_put_scalar(Lower *L, TlValue *from, TlValue *to) {
  put(L, (Entry){from, to, NULL, NULL, NULL});
}

void lw_put_tile(Lower *L, TlValue *from, Tile *t) {
  put(L, (Entry){from, NULL, t, NULL, NULL});
}

void lw_put_view(Lower *L, TlValue *from, View *v) {
  put(L, (Entry){from, NULL, NULL, v, NULL});
}

void lw_put_smem(Lower *L, TlValue *from, Smem *m) {
  put(L, (Entry){from, NULL, NULL, NULL, m});
}

TlValue *lw_scalar(Lower *L, TlValue *v) {
  Entry *e = find(L, v);
  return e ? e->scalar : NULL;
}

Tile *lw_tile_of(Lower *L, TlValue *v) {
  Entry *e = find(L, v);
  return e ? e->tile : NULL;
}

View *lw_view_of(Lower *L, TlValue *v) {
  Entry *e = find(L, v);
  return e ? e->view : NULL;
}

Smem *lw_smem_of(Lower *L, TlValue *v) {
  Entry *e = find(L, v);
  return e ? e->smem : NULL;
}

bool lw_fail(Lower *L, TlOp *op, const char *msg) {
  if (!L->failed)
    tl_op_emit_error(op, "cannot lower to simt yet: %s", msg);
  L->failed = true;
  return false;
}

bool lw_fail_feature(Lower *L, TlOp *op, const char *what, unsigned feature,
                     const char *hint) {
  TlStr msg = {0};
  tl_arch_lacks_text(&msg, what, L->arch, feature);
  if (hint)
    tl_str_printf(&msg, "; %s", hint);
  bool r = lw_fail(L, op, tl_str_cstr(&msg));
  tl_str_free(&msg);
  return r;
}

/* An index value as i64 (arith.exti extends by the source's signedness). */
TlValue *lw_to_i32(Lower *L, TlValue *v) {
  TlType *t = tl_value_type(v);
  unsigned w = tl_type_int_width(t);
  if (w == 32)
    return tl_type_int_signed(t) ? v : tl_arith_bitcast(&L->b, v, lw_i32(L));
  return w > 32 ? tl_arith_trunci(&L->b, v, lw_i32(L))
                : tl_arith_exti(&L->b, v, lw_i32(L));
}

TlValue *lw_to_i64(Lower *L, TlValue *v) {
  TlType *t = tl_value_type(v);
  if (t == lw_i64(L))
    return v;
  if (tl_type_int_width(t) == 64)
    return tl_arith_bitcast(&L->b, v, lw_i64(L));
  return tl_arith_exti(&L->b, v, lw_i64(L));
}

/*===--- Tiles -----------------------------------------------------------===*/

unsigned lw_tile_words(TlType *reg) {
  int64_t bits = tl_layout_local_size(tl_reg_layout(reg)) * lw_elem_bits(reg);
  return (unsigned)((bits + 31) / 32);
}

Tile *lw_new_tile(Lower *L, TlType *reg) {
  Tile *t = TL_ARENA_NEW(&L->arena, Tile);
  t->type = reg;
  t->nwords = lw_tile_words(reg);
  t->words = TL_ARENA_NEWN(&L->arena, TlValue *, t->nwords ? t->nwords : 1);
  return t;
}

Tile *lw_zero_tile(Lower *L, TlType *reg) {
  Tile *t = lw_new_tile(L, reg);
  TlValue *z = lw_cst(L, lw_u32(L), 0);
  for (unsigned i = 0; i < t->nwords; i++)
    t->words[i] = z;
  return t;
}

static uint32_t mask_of(unsigned b) {
  return b >= 32 ? 0xffffffffu : (1u << b) - 1;
}

/* Bits [pos, pos + n) of t's bit string (n <= 32), zero-extended into a
 * u32. */
TlValue *lw_tile_bits(Lower *L, Tile *t, int64_t pos, unsigned n) {
  unsigned w = (unsigned)(pos / 32), o = (unsigned)(pos % 32);
  TlValue *v = t->words[w];
  if (o)
    v = tl_arith_shri(&L->b, v, lw_cst(L, lw_u32(L), o));
  if (o + n > 32) {
    TlValue *hi =
        tl_arith_shli(&L->b, t->words[w + 1], lw_cst(L, lw_u32(L), 32 - o));
    v = tl_arith_ori(&L->b, v, hi);
  }
  if (n < 32)
    v = tl_arith_andi(&L->b, v, lw_cst(L, lw_u32(L), mask_of(n)));
  return v;
}

/* Element i (b bits, zero-extended into a u32). */
TlValue *lw_get_elem(Lower *L, Tile *t, unsigned i) {
  unsigned b = lw_elem_bits(t->type);
  return lw_tile_bits(L, t, (int64_t)i * b, b);
}

/* Stores the low b bits of v (a u32) as element i. */
void lw_set_elem(Lower *L, Tile *t, unsigned i, TlValue *v) {
  unsigned b = lw_elem_bits(t->type), p = i * b, w = p / 32, o = p % 32;
  if (b < 32)
    v = tl_arith_andi(&L->b, v, lw_cst(L, lw_u32(L), mask_of(b)));
  if (b == 32) {
    t->words[w] = v;
    return;
  }
  TlValue *keep = tl_arith_andi(
      &L->b, t->words[w],
      lw_cst(L, lw_u32(L), (int64_t)(uint32_t) ~(mask_of(b) << o)));
  TlValue *sh = o ? tl_arith_shli(&L->b, v, lw_cst(L, lw_u32(L), o)) : v;
  t->words[w] = tl_arith_ori(&L->b, keep, sh);
  if (o + b > 32) {
    unsigned rest = o + b - 32;
    TlValue *keep2 =
        tl_arith_andi(&L->b, t->words[w + 1],
                      lw_cst(L, lw_u32(L), (int64_t)(uint32_t)~mask_of(rest)));
    TlValue *hi = tl_arith_shri(&L->b, v, lw_cst(L, lw_u32(L), 32 - o));
    t->words[w + 1] = tl_arith_ori(&L->b, keep2, hi);
  }
}

/* Element i of a tile of 64-bit elements (words 2i and 2i + 1, low word
 * first), as a u64, and its inverse. */
static TlValue *get_elem64(Lower *L, Tile *t, unsigned i) {
  TlType *u64 = tl_type_int(L->ctx, 64, false);
  TlValue *lo = tl_arith_exti(&L->b, t->words[2 * i], u64);
  TlValue *hi = tl_arith_exti(&L->b, t->words[2 * i + 1], u64);
  return tl_arith_ori(&L->b, lo, tl_arith_shli(&L->b, hi, lw_cst(L, u64, 32)));
}

void lw_set_elem64(Lower *L, Tile *t, unsigned i, TlValue *v) {
  TlType *u64 = tl_type_int(L->ctx, 64, false);
  t->words[2 * i] = tl_arith_trunci(&L->b, v, lw_u32(L));
  t->words[2 * i + 1] = tl_arith_trunci(
      &L->b, tl_arith_shri(&L->b, v, lw_cst(L, u64, 32)), lw_u32(L));
}

/* dst's element i = src's element j (tiles of one element type). */
void lw_copy_elem(Lower *L, Tile *dst, unsigned i, Tile *src, unsigned j) {
  if (lw_elem_bits(dst->type) == 64) {
    dst->words[2 * i] = src->words[2 * j];
    dst->words[2 * i + 1] = src->words[2 * j + 1];
    return;
  }
  lw_set_elem(L, dst, i, lw_get_elem(L, src, j));
}

/*===--- Indices ---------------------------------------------------------===*/

/* The digits (i64) of thread's spatial modes of layout l: the ravel of
 * its spatial entries over the thread index (i32). Threads beyond the
 * layout's count (a tile over the first warps, in a warp branch) hold
 * none of its elements and never run its ops; the modulo keeps their
 * indices in range all the same. */
static void thread_digits(Lower *L, const TlLayout *l, TlValue *thread,
                          TlValue **digit) {
  int64_t below = 1;
  for (int k = l->num_spatial - 1; k >= 0; k--) {
    int m = l->spatial_modes[k];
    int64_t size = m >= 0 ? l->mode_shape[m] : -m;
    if (m >= 0) {
      TlValue *d =
          below > 1 ? tl_arith_divi(&L->b, thread, lw_cst(L, lw_i32(L), below))
                    : thread;
      digit[m] = tl_arith_exti(
          &L->b, tl_arith_remi(&L->b, d, lw_cst(L, lw_i32(L), size)),
          lw_i64(L));
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
        TlValue *term = size > 1 ? tl_arith_muli(&L->b, rdigit[k],
                                                 lw_cst(L, lw_i64(L), size))
                                 : rdigit[k];
        v = v ? tl_arith_addi(&L->b, v, term) : term;
      } else {
        cval += cdigit[k] * size;
      }
      size *= l->mode_shape[k];
    }
    TlValue *c = lw_cst(L, lw_i64(L), cval);
    idx[d] = v ? (cval ? tl_arith_addi(&L->b, v, c) : v) : c;
  }
}

/* The logical index of local element `local` of the calling thread, per
 * dimension, as i64 values: the spatial part from the thread index, the
 * local part a constant. */
void lw_index_of(Lower *L, const TlLayout *l, int64_t local, TlValue **idx) {
  int64_t digit[TL_LAYOUT_MAX_MODES] = {0};
  for (int k = l->num_local - 1; k >= 0; k--) {
    int m = l->local_modes[k];
    digit[m] = local % l->mode_shape[m];
    local /= l->mode_shape[m];
  }
  TlValue *sdigit[TL_LAYOUT_MAX_MODES] = {0};
  thread_digits(L, l, L->tid, sdigit);
  ravel_index(L, l, sdigit, digit, idx);
}

/* The logical index (i64 per dimension) of local element `local` of
 * thread `thread` in layout l, both i32 values known at run time only. */
void lw_index_at(Lower *L, const TlLayout *l, TlValue *thread, TlValue *local,
                 TlValue **idx) {
  TlValue *digit[TL_LAYOUT_MAX_MODES] = {0};
  int64_t zero[TL_LAYOUT_MAX_MODES] = {0}, below = 1;
  for (int k = l->num_local - 1; k >= 0; k--) {
    int m = l->local_modes[k];
    TlValue *d = below > 1
                     ? tl_arith_divi(&L->b, local, lw_cst(L, lw_i32(L), below))
                     : local;
    if (k > 0)
      d = tl_arith_remi(&L->b, d, lw_cst(L, lw_i32(L), l->mode_shape[m]));
    digit[m] = tl_arith_exti(&L->b, d, lw_i64(L));
    below *= l->mode_shape[m];
  }
  thread_digits(L, l, thread, digit);
  ravel_index(L, l, digit, zero, idx);
}

/* The compile-time part of local element i's logical index (its local
 * digits; the spatial part comes from the thread index). */
void lw_const_index(const TlLayout *l, int64_t local, int64_t *c) {
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

/* The largest power of two dividing x, at most TL_DIVISIBILITY_MAX (which
 * 0 gets). */
int64_t lw_pow2_factor(int64_t x) {
  return x == 0                           ? TL_DIVISIBILITY_MAX
         : (x & -x) < TL_DIVISIBILITY_MAX ? (x & -x)
                                          : TL_DIVISIBILITY_MAX;
}

/* The power of two dividing the thread-dependent part of dimension d of
 * every element's index: the smallest stride of a spatial mode of d. */
int64_t lw_spatial_div(const TlLayout *l, int d) {
  int64_t div = TL_DIVISIBILITY_MAX, stride = 1;
  for (int m = l->num_modes - 1; m >= 0; m--) {
    if (l->mode_dim[m] != d)
      continue;
    for (int k = 0; k < l->num_spatial; k++)
      if (l->spatial_modes[k] == m && lw_pow2_factor(stride) < div)
        div = lw_pow2_factor(stride);
    stride *= l->mode_shape[m];
  }
  return div;
}

/* How many local elements from i on are consecutive along the last
 * dimension with the other indices fixed; ci gets element i's constant
 * index. */
int64_t lw_local_run(const TlLayout *l, int64_t i, int64_t *ci) {
  int64_t cj[TL_LAYOUT_MAX_RANK];
  lw_const_index(l, i, ci);
  int64_t n = 1, total = tl_layout_local_size(l);
  while (i + n < total) {
    lw_const_index(l, i + n, cj);
    bool next = cj[l->rank - 1] == ci[l->rank - 1] + n;
    for (int d = 0; d + 1 < l->rank && next; d++)
      next = cj[d] == ci[d];
    if (!next)
      break;
    n++;
  }
  return n;
}

/* The power of two known to divide a tile offset operand. */
int64_t lw_offset_div(Lower *L, TlValue *v) {
  return L->facts ? tl_analysis_divisibility(L->facts, v) : 1;
}

/*===--- Accesses --------------------------------------------------------===*/

/* The register type of an access of `bytes` bytes (2, 4, 8 or 16). */
TlType *lw_access_type(Lower *L, unsigned bytes) {
  if (bytes <= 4)
    return tl_type_int(L->ctx, bytes * 8, false);
  return tl_simt_vec_type(L->ctx, bytes / 4, lw_u32(L));
}

/* The w elements of t from local element i on (w * bits a whole number of
 * bytes, 2 to 16) as the value of one access: their bits in order, which is
 * the tile's own packing. */
TlValue *lw_gather_access(Lower *L, Tile *t, int64_t i, int64_t w) {
  unsigned b = lw_elem_bits(t->type), bytes = (unsigned)(w * b / 8);
  TlType *at = lw_access_type(L, bytes);
  Tile tmp = {t->type, bytes >= 4 ? bytes / 4 : 1, NULL};
  TlValue *words[4];
  for (unsigned k = 0; k < 4; k++)
    words[k] = lw_cst(L, lw_u32(L), 0);
  tmp.words = words;
  if ((i * b) % 32 == 0 && bytes >= 4)
    memcpy(words, &t->words[(i * b) / 32], sizeof *words * (bytes / 4));
  else
    for (int64_t j = 0; j < w; j++)
      lw_set_elem(L, &tmp, (unsigned)j, lw_get_elem(L, t, (unsigned)(i + j)));
  if (bytes < 4)
    return tl_arith_trunci(&L->b, words[0], at);
  if (bytes == 4)
    return words[0];
  return tl_build1(&L->b, TL_OP_SIMT_BUILD, bytes / 4, words, at);
}

/* The inverse: the value x of one access into w elements of t from i on. */
void lw_scatter_access(Lower *L, Tile *t, int64_t i, int64_t w, TlValue *x) {
  unsigned b = lw_elem_bits(t->type), bytes = (unsigned)(w * b / 8);
  Tile tmp = {t->type, bytes >= 4 ? bytes / 4 : 1, NULL};
  TlValue *words[4];
  tmp.words = words;
  if (bytes < 4) {
    words[0] = tl_arith_exti(&L->b, x, lw_u32(L));
  } else if (bytes == 4) {
    words[0] = x;
  } else {
    for (unsigned k = 0; k < bytes / 4; k++)
      words[k] = lw_extract(L, x, lw_u32(L), k);
  }
  if ((i * b) % 32 == 0 && bytes >= 4)
    memcpy(&t->words[(i * b) / 32], words, sizeof *words * (bytes / 4));
  else
    for (int64_t j = 0; j < w; j++)
      lw_set_elem(L, t, (unsigned)(i + j), lw_get_elem(L, &tmp, (unsigned)j));
}

/*===--- Guards ----------------------------------------------------------===*/

/* Whether the calling thread writes a store of a tile in layout l: every
 * element once, by the thread whose replication digits are all 0, below
 * the layout's count (a tile over the first warps). NULL when every thread
 * writes. In a warp branch only one warp runs: each element its threads
 * hold is written by the lowest of them, so the thread-index bits from 32
 * up (the warp) are no replication digit there. */
TlValue *lw_writer_guard(Lower *L, const TlLayout *l) {
  TlValue *cond = NULL;
  int64_t below = 1, count = tl_layout_num_threads(l);
  if (count < (int64_t)L->threads)
    cond = tl_arith_cmpi(&L->b, "lt", L->tid, lw_cst(L, lw_i32(L), count));
  for (int k = l->num_spatial - 1; k >= 0; k--) {
    int m = l->spatial_modes[k];
    int64_t size = m >= 0 ? l->mode_shape[m] : -m;
    int64_t digit = size; /* of the replication digit, what selects copies */
    if (m < 0 && size > 1 && L->warp_branch) {
      if (below >= 32) {
        below *= size;
        continue;
      }
      /* The digit's groups must not straddle warps: they fit in aligned
       * parts of a warp, or the warp boundary falls on a digit boundary. */
      bool inside = below * size <= 32 && 32 % (below * size) == 0;
      bool aligned =
          below * size > 32 && 32 % below == 0 && size % (32 / below) == 0;
      if (!inside && !aligned) {
        if (!L->failed)
          tl_emit_error(L->ctx, L->b.loc,
                        "cannot lower to simt yet: a store in a warp branch "
                        "of a tile replicated over thread groups that "
                        "straddle warps");
        L->failed = true;
        return NULL;
      }
      if (aligned)
        digit = 32 / below; /* the digit's part within the warp */
    }
    if (m < 0 && digit > 1) {
      TlValue *d =
          below > 1 ? tl_arith_divi(&L->b, L->tid, lw_cst(L, lw_i32(L), below))
                    : L->tid;
      if (below * digit < count)
        d = tl_arith_remi(&L->b, d, lw_cst(L, lw_i32(L), digit));
      TlValue *c = tl_arith_cmpi(&L->b, "eq", d, lw_cst(L, lw_i32(L), 0));
      cond = cond ? tl_arith_andi(&L->b, cond, c) : c;
    }
    below *= size;
  }
  return cond;
}

/* The regions get their blocks from the caller: lw_open_guard fills the
 * then region only, leaving the else region empty. */
TlOp *lw_scf_if(Lower *L, TlValue *cond, unsigned n, TlType *const *res) {
  TlOpState st;
  tl_op_state_init(&st, L->ctx, tl_context_op_def_by_id(L->ctx, TL_OP_SCF_IF),
                   L->b.loc);
  tl_op_state_add_operand(&st, cond);
  for (unsigned i = 0; i < n; i++)
    tl_op_state_add_result(&st, res[i]);
  st.nregions = 2;
  return tl_builder_insert(&L->b, &st);
}

/* `scf.if cond {` with the builder in its then block; lw_close_guard ends
 * it. */
TlBuilder lw_open_guard(Lower *L, TlValue *cond) {
  TlOp *nif = lw_scf_if(L, cond, 0, NULL);
  TlBlock *then = tl_block_create(L->module);
  tl_region_append_block(tl_op_region(nif, 0), then);
  TlBuilder saved = L->b;
  tl_builder_set_end(&L->b, then);
  return saved;
}

void lw_close_guard(Lower *L, TlBuilder saved) {
  tl_build(&L->b, TL_OP_SCF_YIELD, 0, NULL, 0, NULL);
  L->b = saved;
}

/*===--- Compute types ---------------------------------------------------===*/

/* Element i as a value of a compute type, *ct: iN sign-extended to i32,
 * uN zero-extended to u32, f16/bf16/f32 as floats, 64-bit elements as
 * i64, u64 or f64. NULL (and *ct NULL) for other element types. */
TlValue *lw_decode(Lower *L, Tile *t, unsigned i, TlType **ct) {
  TlType *e = tl_tensor_elem(t->type);
  unsigned b = tl_type_bitwidth(e);
  if (b == 64) {
    /* i64, u64 and f64 compute as themselves. */
    TlValue *x = get_elem64(L, t, i);
    *ct =
        tl_type_is_int(e) ? tl_type_int(L->ctx, 64, tl_type_int_signed(e)) : e;
    return *ct == tl_value_type(x) ? x : tl_arith_bitcast(&L->b, x, *ct);
  }
  TlValue *x = lw_get_elem(L, t, i);
  if (tl_type_is_int(e)) {
    if (tl_type_int_signed(e)) {
      TlValue *s = tl_arith_bitcast(&L->b, x, lw_i32(L));
      if (b < 32) {
        s = tl_arith_shli(&L->b, s, lw_cst(L, lw_i32(L), 32 - b));
        s = tl_arith_shri(&L->b, s, lw_cst(L, lw_i32(L), 32 - b));
      }
      *ct = lw_i32(L);
      return s;
    }
    *ct = lw_u32(L);
    return x;
  }
  if (lw_is_f(e, 8, 23)) {
    *ct = tl_type_f32(L->ctx);
    return tl_arith_bitcast(&L->b, x, *ct);
  }
  if (lw_is_f(e, 5, 10) || lw_is_f(e, 8, 7)) {
    *ct = e;
    TlValue *h = tl_arith_trunci(&L->b, x, tl_type_int(L->ctx, 16, false));
    return tl_arith_bitcast(&L->b, h, e);
  }
  *ct = NULL;
  return NULL;
}

/* Stores a value of a compute type (lw_decode's: i32, u32, i64, u64 or a
 * float of the element's format) as element i; integers keep their low
 * bits. */
void lw_encode(Lower *L, Tile *t, unsigned i, TlValue *v) {
  TlType *vt = tl_value_type(v);
  if (lw_elem_bits(t->type) == 64) {
    TlType *u64 = tl_type_int(L->ctx, 64, false);
    if (tl_type_bitwidth(vt) < 64)
      v = tl_arith_exti(&L->b, v,
                        tl_type_int(L->ctx, 64, tl_type_int_signed(vt)));
    lw_set_elem64(
        L, t, i, tl_value_type(v) == u64 ? v : tl_arith_bitcast(&L->b, v, u64));
    return;
  }
  if (tl_type_is_int(vt)) {
    lw_set_elem(L, t, i,
                tl_type_int_signed(vt) ? tl_arith_bitcast(&L->b, v, lw_u32(L))
                                       : v);
    return;
  }
  TlType *e = tl_tensor_elem(t->type);
  unsigned b = tl_type_bitwidth(e);
  TlValue *bits = tl_arith_bitcast(&L->b, v, tl_type_int(L->ctx, b, false));
  if (b < 32)
    bits = tl_arith_exti(&L->b, bits, lw_u32(L));
  lw_set_elem(L, t, i, bits);
}
