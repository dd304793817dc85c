/* Shared memory: tiles at their planned offsets (tl.alloc_shared), views
 * of them (tl.slice, tl.permute, tl.reshape), element addresses under the
 * shared layout's swizzle, and loads and stores of register tiles by
 * ldmatrix or the widest ld.shared/st.shared runs. */
#include "lower.h"

/* tl.alloc_shared: the planned offset past the dynamic shared memory's
 * start. A tile that reuses the bytes of earlier ones first waits for the
 * block (every access to those happened before, docs/analysis.md). */
bool lw_lower_alloc_shared(Lower *L, TlOp *op) {
  int64_t off;
  TlErr err;
  Smem *m = TL_ARENA_NEW(&L->arena, Smem);
  TlType *st = tl_value_type(tl_op_result(op, 0));
  if (!tl_shared_offset(op, &off))
    return lw_fail(L, op, "a shared tile the plan did not place");
  if (!tl_shared_type_layout(st, &m->layout, &err))
    return lw_fail(L, op, "a shared tile without a layout");
  m->elem = tl_tensor_elem(st);
  if (tl_shared_reuses(op))
    lw_barrier(L);
  TlType *pt = tl_simt_ptr_type(L->ctx, TL_SIMT_SHARED);
  TlValue *b = tl_build1(&L->b, TL_OP_SIMT_SMEM_BASE, 0, NULL, pt);
  if (off)
    b = lw_ptr_add(L, b, lw_cst(L, lw_i64(L), off));
  m->base = b;
  lw_put_smem(L, tl_op_result(op, 0), m);
  return true;
}

/* The unswizzled element offset of the shared element at (off + idx),
 * idx may be NULL: the layout's mixed radix per dimension, its strides and
 * its base. */
static TlValue *smem_linear(Lower *L, const TlSharedLayout *l, TlValue **off,
                            TlValue **idx) {
  TlValue *lin = lw_cst(L, lw_i64(L), l->base);
  for (int d = 0; d < l->rank; d++) {
    TlValue *pos = idx ? tl_arith_addi(&L->b, off[d], idx[d]) : off[d];
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
        dg = tl_arith_divi(&L->b, dg, lw_cst(L, lw_i64(L), below));
      if (!top)
        dg = tl_arith_remi(&L->b, dg, lw_cst(L, lw_i64(L), l->mode_shape[j]));
      if (l->mode_stride[j] != 1)
        dg = tl_arith_muli(&L->b, dg, lw_cst(L, lw_i64(L), l->mode_stride[j]));
      lin = tl_arith_addi(&L->b, lin, dg);
      below *= l->mode_shape[j];
    }
  }
  return lin;
}

/* The element offset of the shared element at (off + idx): its linear
 * offset, then the layout's swizzle. */
static TlValue *smem_offset(Lower *L, const TlSharedLayout *l, TlValue **off,
                            TlValue **idx) {
  TlValue *lin = smem_linear(L, l, off, idx);
  if (l->swizzle_bits) {
    int64_t mask = ((INT64_C(1) << l->swizzle_bits) - 1) << l->swizzle_base;
    TlValue *hi =
        tl_arith_shri(&L->b, lin, lw_cst(L, lw_i64(L), l->swizzle_shift));
    lin = tl_arith_xori(&L->b, lin,
                        tl_arith_andi(&L->b, hi, lw_cst(L, lw_i64(L), mask)));
  }
  return lin;
}

/* Byte address of the shared element at (off + idx). Elements are stored
 * compactly (element k at bits [k b, k b + b) of the tile's bytes, as in
 * global memory); a sub-byte element gives the byte holding its first
 * bit, which callers use at byte boundaries only (smem_bit_addr gives the
 * offset within the byte). */
TlValue *lw_smem_addr(Lower *L, Smem *m, TlValue **off, TlValue **idx) {
  TlValue *lin = smem_offset(L, &m->layout, off, idx);
  unsigned b = tl_type_bitwidth(m->elem);
  TlValue *bytes =
      b == 8  ? lin
      : b > 8 ? tl_arith_muli(&L->b, lin, lw_cst(L, lw_i64(L), b / 8))
      : 8 % b == 0
          ? tl_arith_divi(&L->b, lin, lw_cst(L, lw_i64(L), 8 / b))
          : tl_arith_divi(&L->b,
                          tl_arith_muli(&L->b, lin, lw_cst(L, lw_i64(L), b)),
                          lw_cst(L, lw_i64(L), 8));
  return lw_ptr_add(L, m->base, bytes);
}

/* For sub-byte elements: the byte holding the first bit of the shared
 * element at (off + idx), and that bit's offset in it (u32). */
static TlValue *smem_bit_addr(Lower *L, Smem *m, TlValue **off, TlValue **idx,
                              TlValue **bitoff) {
  TlValue *lin = smem_offset(L, &m->layout, off, idx);
  unsigned b = tl_type_bitwidth(m->elem);
  TlValue *bits =
      b == 1 ? lin : tl_arith_muli(&L->b, lin, lw_cst(L, lw_i64(L), b));
  *bitoff = tl_arith_trunci(
      &L->b, tl_arith_remi(&L->b, bits, lw_cst(L, lw_i64(L), 8)), lw_u32(L));
  return lw_ptr_add(L, m->base,
                    tl_arith_divi(&L->b, bits, lw_cst(L, lw_i64(L), 8)));
}

/* Whether every aligned run of w elements along the last dimension of
 * the shared layout is w consecutive elements starting at a multiple of w
 * (so a w-element access of an aligned tile is aligned): an innermost mode
 * of stride 1 that w divides, every other stride and the base multiples of
 * w, and a swizzle that moves whole runs (2^M >= w). */
bool lw_smem_runs(const TlSharedLayout *l, int64_t w) {
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

/* The widest shared access (at most 16 bytes) for local elements i.. of
 * a tile in register layout l at offsets whose last one is `last_off`:
 * consecutive along the last dimension in registers and in shared memory,
 * the first one's index there a multiple of the width. For sub-byte
 * elements a width whose bits are not whole bytes cannot be accessed. */
static int64_t smem_vector_run(Lower *L, const Smem *m, const TlLayout *l,
                               int64_t i, TlValue *last_off) {
  unsigned b = tl_type_bitwidth(m->elem);
  int64_t ci[TL_LAYOUT_MAX_RANK];
  int64_t n = lw_local_run(l, i, ci);
  int64_t div = lw_pow2_factor(ci[l->rank - 1]);
  int64_t sd = lw_spatial_div(l, l->rank - 1), od = lw_offset_div(L, last_off);
  if (sd < div)
    div = sd;
  if (od < div)
    div = od;
  int64_t w = 1;
  while (w * 2 <= n && w * 2 * b <= 128 && div % (w * 2) == 0 &&
         lw_smem_runs(&m->layout, w * 2))
    w *= 2;
  return w;
}

/* tl.load_shared with ldmatrix: the register layout is a tiling of the
 * one-matrix fragment (8 rows of 16 bytes; .trans for 16-bit columns),
 * every 16-byte row of the tile is a 16-byte aligned run in shared memory
 * and the last offset keeps it so. Each instruction loads the next 4 (or
 * 2, or 1) matrices a thread holds, which are its next tile words: lanes
 * 8j..8j+7 give the rows of matrix j. False, emitting nothing, when the
 * load does not qualify. */
static bool load_ldmatrix(Lower *L, Smem *m, const TlLayout *l, unsigned b,
                          TlValue **off, TlValue *last_off, Tile *t) {
  int rank = l->rank;
  int64_t w = 128 / b;
  TlLayout q;
  bool trans = false;
  if (rank < 2 || L->threads % 32 || 32 % b || !lw_smem_runs(&m->layout, w) ||
      lw_offset_div(L, last_off) % w)
    return false;
  if (!tl_layout_ldmatrix_compatible(l, (int)b, false, 1, &q, NULL)) {
    if (b != 16 || !tl_layout_ldmatrix_compatible(l, 16, true, 1, &q, NULL))
      return false;
    trans = true;
  }
  int64_t nmat = tl_layout_local_size(&q);
  int num = nmat % 4 == 0 ? 4 : nmat % 2 == 0 ? 2 : 1;
  TlValue *lane = tl_arith_remi(&L->b, L->tid, lw_cst(L, lw_i32(L), 32));
  TlValue *warp = tl_arith_divi(&L->b, L->tid, lw_cst(L, lw_i32(L), 32));
  TlValue *row = tl_arith_exti(
      &L->b, tl_arith_remi(&L->b, lane, lw_cst(L, lw_i32(L), 8)), lw_i64(L));
  TlValue *mat = tl_arith_divi(&L->b, lane, lw_cst(L, lw_i32(L), 8));
  if (num < 4)
    mat = tl_arith_remi(&L->b, mat, lw_cst(L, lw_i32(L), num));
  TlType *vt = tl_simt_vec_type(L->ctx, (unsigned)num, lw_i32(L));
  for (int64_t g = 0; g < nmat / num; g++) {
    TlValue *ql =
        g ? tl_arith_addi(&L->b, mat, lw_cst(L, lw_i32(L), g * num)) : mat;
    TlValue *idx[TL_LAYOUT_MAX_RANK];
    lw_index_at(L, &q, warp, ql, idx);
    idx[rank - 2] = tl_arith_addi(
        &L->b, tl_arith_muli(&L->b, idx[rank - 2], lw_cst(L, lw_i64(L), 8)),
        row);
    idx[rank - 1] =
        tl_arith_muli(&L->b, idx[rank - 1], lw_cst(L, lw_i64(L), w));
    TlValue *p = lw_smem_addr(L, m, off, idx);
    TlOp *ld = tl_build(&L->b, TL_OP_SIMT_LDMATRIX, 1, &p, 1, &vt);
    tl_op_set_attr(ld, "num", lw_int(L, num));
    if (trans)
      tl_op_set_attr(ld, "trans", tl_attr_unit(L->ctx));
    TlValue *x = tl_op_result(ld, 0);
    for (int j = 0; j < num; j++)
      t->words[g * num + j] =
          tl_arith_bitcast(&L->b, lw_extract(L, x, lw_i32(L), j), lw_u32(L));
  }
  return true;
}

/* One sub-byte element from the bytes it touches: the byte holding its
 * first bit and, for elements of 3, 5, 6 or 7 bits, the next byte when
 * the element runs into it (else the same byte again, so that no byte
 * past the element is read); the element's bits at the bottom of a u32
 * (lw_set_elem keeps the low b). */
static TlValue *load_subbyte_elem(Lower *L, Smem *m, TlValue **off,
                                  TlValue **idx) {
  unsigned b = tl_type_bitwidth(m->elem);
  TlType *u8 = tl_type_int(L->ctx, 8, false), *u32 = lw_u32(L);
  TlValue *bitoff, *p = smem_bit_addr(L, m, off, idx, &bitoff);
  TlValue *x = tl_arith_exti(&L->b, lw_load(L, p, u8, 0), u32);
  if (8 % b) {
    TlValue *spill =
        tl_arith_cmpi(&L->b, "gt", bitoff, lw_cst(L, u32, 8 - (int64_t)b));
    TlValue *step = tl_arith_select(&L->b, spill, lw_cst(L, lw_i64(L), 1),
                                    lw_cst(L, lw_i64(L), 0));
    TlValue *hi =
        tl_arith_exti(&L->b, lw_load(L, lw_ptr_add(L, p, step), u8, 0), u32);
    x = tl_arith_ori(&L->b, x, tl_arith_shli(&L->b, hi, lw_cst(L, u32, 8)));
  }
  return tl_arith_shri(&L->b, x, bitoff);
}

/* Sets bits [pos, pos + n) of t's word stream (n <= 32) to the low n bits
 * of v (a u32). */
void lw_put_bits(Lower *L, Tile *t, int64_t pos, unsigned n, TlValue *v) {
  unsigned w = (unsigned)(pos / 32), o = (unsigned)(pos % 32);
  uint32_t mask = n == 32 ? UINT32_MAX : (UINT32_C(1) << n) - 1;
  if (n < 32)
    v = tl_arith_andi(&L->b, v, lw_cst(L, lw_u32(L), mask));
  if (n == 32 && o == 0) {
    t->words[w] = v;
    return;
  }
  TlValue *keep =
      tl_arith_andi(&L->b, t->words[w],
                    lw_cst(L, lw_u32(L), (int64_t)(uint32_t) ~(mask << o)));
  TlValue *sh = o ? tl_arith_shli(&L->b, v, lw_cst(L, lw_u32(L), o)) : v;
  t->words[w] = tl_arith_ori(&L->b, keep, sh);
  if (o + n > 32) {
    unsigned rest = o + n - 32;
    uint32_t low = (UINT32_C(1) << rest) - 1;
    TlValue *keep2 = tl_arith_andi(
        &L->b, t->words[w + 1], lw_cst(L, lw_u32(L), (int64_t)(uint32_t)~low));
    TlValue *hi = tl_arith_shri(&L->b, v, lw_cst(L, lw_u32(L), 32 - o));
    t->words[w + 1] = tl_arith_ori(&L->b, keep2, hi);
  }
}

/* A run of 3, 5, 6 or 7-bit elements that is whole bytes: the nbytes
 * bytes at p, which are bits [pos, pos + 8 nbytes) of t's word stream,
 * moved in pieces of `align` bytes (each piece's address a multiple of
 * it): loaded into t, or stored from it. */
static void move_bytes(Lower *L, Tile *t, int64_t pos, TlValue *p,
                       int64_t nbytes, unsigned align, bool store) {
  TlType *at = lw_access_type(L, align);
  for (int64_t k = 0; k < nbytes / align; k++) {
    TlValue *q = k ? lw_ptr_add(L, p, lw_cst(L, lw_i64(L), k * align)) : p;
    int64_t at_bit = pos + k * align * 8;
    if (store) {
      TlValue *x;
      if (align <= 4) {
        x = lw_tile_bits(L, t, at_bit, align * 8);
        if (align < 4)
          x = tl_arith_trunci(&L->b, x, at);
      } else {
        TlValue *words[4];
        for (unsigned j = 0; j < align / 4; j++)
          words[j] = lw_tile_bits(L, t, at_bit + 32 * j, 32);
        x = tl_build1(&L->b, TL_OP_SIMT_BUILD, align / 4, words, at);
      }
      lw_store(L, x, q, align > 1 ? align : 0);
      continue;
    }
    TlValue *x = lw_load(L, q, at, align > 1 ? align : 0);
    if (align <= 4) {
      lw_put_bits(L, t, at_bit, align * 8,
                  align < 4 ? tl_arith_exti(&L->b, x, lw_u32(L)) : x);
    } else {
      for (unsigned j = 0; j < align / 4; j++)
        lw_put_bits(L, t, at_bit + 32 * j, 32, lw_extract(L, x, lw_u32(L), j));
    }
  }
}

/* The pieces move_bytes moves a run of nbytes in: the largest power of
 * two, at most 16, dividing nbytes (a run of w elements starts at an
 * element offset that is a multiple of w, so at a byte multiple of it). */
static unsigned piece_bytes(int64_t nbytes) {
  int64_t a = lw_pow2_factor(nbytes);
  return (unsigned)(a > 16 ? 16 : a);
}

/* Tiles of any element width up to 32 bits, and of 64: ldmatrix where
 * the layouts allow it, else the widest ld.shared runs; sub-byte elements
 * in runs of whole bytes where the layouts give them, else element by
 * element from the bytes each touches. */
bool lw_lower_load_shared(Lower *L, TlOp *op) {
  Smem *m = lw_smem_of(L, tl_op_operand(op, 0));
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  unsigned b = lw_elem_bits(rt);
  if (!m)
    return lw_fail(L, op, "shared tiles not made by tl.alloc_shared");
  if (b > 8 && 32 % b && b != 64)
    return lw_fail(
        L, op, "shared loads of elements other than 1 to 8, 16, 32 or 64 bits");
  int rank = m->layout.rank;
  TlValue *off[TL_LAYOUT_MAX_RANK], *idx[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < rank; d++)
    off[d] = lw_to_i64(L, lw_scalar(L, tl_op_operand(op, 1 + (unsigned)d)));
  TlValue *last_off = tl_op_operand(op, (unsigned)rank);
  Tile *t = lw_zero_tile(L, rt);
  const TlLayout *l = tl_reg_layout(rt);
  if (load_ldmatrix(L, m, l, b, off, last_off, t)) {
    lw_put_tile(L, tl_op_result(op, 0), t);
    return true;
  }
  TlType *mem = tl_type_int(L->ctx, b, false);
  for (int64_t i = 0; i < tl_layout_local_size(l);) {
    lw_index_of(L, l, i, idx);
    int64_t w = smem_vector_run(L, m, l, i, last_off);
    if (b < 8 && (w * b) % 8) {
      lw_set_elem(L, t, (unsigned)i, load_subbyte_elem(L, m, off, idx));
      i++;
      continue;
    }
    TlValue *p = lw_smem_addr(L, m, off, idx);
    if (b < 8 && 8 % b) {
      move_bytes(L, t, i * b, p, w * b / 8, piece_bytes(w * b / 8), false);
      i += w;
      continue;
    }
    if (w > 1 || b == 64) {
      unsigned bytes = (unsigned)w * b / 8;
      lw_scatter_access(L, t, i, w,
                        lw_load(L, p, lw_access_type(L, bytes), bytes));
      i += w;
      continue;
    }
    TlValue *x = lw_load(L, p, mem, 0);
    if (b < 32)
      x = tl_arith_exti(&L->b, x, lw_u32(L));
    lw_set_elem(L, t, (unsigned)i, x);
    i++;
  }
  lw_put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/* The widest st.shared runs, by one writer per element; sub-byte
 * elements in whole bytes only (a run of a thread's elements along the
 * last dimension that starts on a byte boundary and covers whole bytes):
 * a thread never writes a byte that holds another thread's element. */
bool lw_lower_store_shared(Lower *L, TlOp *op) {
  Tile *t = lw_tile_of(L, tl_op_operand(op, 0));
  Smem *m = lw_smem_of(L, tl_op_operand(op, 1));
  unsigned b = lw_elem_bits(t->type);
  if (!m)
    return lw_fail(L, op, "shared tiles not made by tl.alloc_shared");
  if (b > 8 && 32 % b && b != 64)
    return lw_fail(
        L, op,
        "shared stores of elements other than 1 to 8, 16, 32 or 64 bits");
  int rank = m->layout.rank;
  TlValue *off[TL_LAYOUT_MAX_RANK], *idx[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < rank; d++)
    off[d] = lw_to_i64(L, lw_scalar(L, tl_op_operand(op, 2 + (unsigned)d)));
  TlValue *last_off = tl_op_operand(op, 1 + (unsigned)rank);
  const TlLayout *l = tl_reg_layout(t->type);
  TlValue *guard = lw_writer_guard(L, l);
  TlBuilder outside = guard ? lw_open_guard(L, guard) : L->b;
  TlType *mem = tl_type_int(L->ctx, b, false);
  for (int64_t i = 0; i < tl_layout_local_size(l);) {
    lw_index_of(L, l, i, idx);
    TlValue *p = lw_smem_addr(L, m, off, idx);
    int64_t w = smem_vector_run(L, m, l, i, last_off);
    if (b < 8 && (w * b) % 8) {
      if (guard)
        lw_close_guard(L, outside);
      char msg[200];
      snprintf(msg, sizeof msg,
               "shared stores of %u-bit elements whose runs along the last "
               "dimension are not whole aligned bytes (threads would share "
               "bytes: a thread's run of %lld element%s is %lld bits)",
               b, (long long)w, w == 1 ? "" : "s", (long long)(w * b));
      return lw_fail(L, op, msg);
    }
    if (b < 8 && 8 % b) {
      move_bytes(L, t, i * b, p, w * b / 8, piece_bytes(w * b / 8), true);
      i += w;
      continue;
    }
    if (w > 1 || b == 64) {
      lw_store(L, lw_gather_access(L, t, i, w), p, (unsigned)w * b / 8);
      i += w;
      continue;
    }
    TlValue *x = lw_get_elem(L, t, (unsigned)i);
    if (b < 32)
      x = tl_arith_trunci(&L->b, x, mem);
    lw_store(L, x, p, 0);
    i++;
  }
  if (guard)
    lw_close_guard(L, outside);
  return true;
}

/* tl.slice, tl.permute and tl.reshape of a shared tile: a view of the same
 * bytes in the result type's layout (the verifier derived it), starting,
 * for a slice, at the sub-tile's first element. The offsets are multiples
 * of the sizes, so the sub-tile's kept digits are 0 and its unswizzled
 * offset less the base is the shift, a multiple of the swizzle block,
 * which the swizzle therefore leaves alone. */
bool lw_lower_shared_view(Lower *L, TlOp *op, Smem *src) {
  TlErr err;
  Smem *m = TL_ARENA_NEW(&L->arena, Smem);
  if (!tl_shared_type_layout(tl_value_type(tl_op_result(op, 0)), &m->layout,
                             &err))
    return lw_fail(L, op, "a shared view without a layout");
  m->elem = src->elem;
  m->base = src->base;
  if (tl_op_id(op) == TL_OP_TL_SLICE) {
    const TlSharedLayout *l = &src->layout;
    int64_t offs[TL_LAYOUT_MAX_RANK];
    unsigned b = tl_type_bitwidth(m->elem);
    if (!tl_slice_offsets(op, offs))
      return lw_fail(L, op, "a slice without offsets");
    for (int j = 0; j < l->num_modes; j++)
      if (b < 8 && (l->mode_stride[j] * b) % 8)
        return lw_fail(
            L, op,
            "slices of sub-byte shared tiles that may start inside a byte");
    TlValue *pos[TL_LAYOUT_MAX_RANK];
    unsigned next = 1;
    for (int d = 0; d < l->rank; d++)
      pos[d] = offs[d] >= 0
                   ? lw_cst(L, lw_i64(L), offs[d])
                   : lw_to_i64(L, lw_scalar(L, tl_op_operand(op, next++)));
    TlValue *shift = tl_arith_subi(&L->b, smem_linear(L, l, pos, NULL),
                                   lw_cst(L, lw_i64(L), l->base));
    TlValue *bytes =
        b == 8  ? shift
        : b > 8 ? tl_arith_muli(&L->b, shift, lw_cst(L, lw_i64(L), b / 8))
        : 8 % b == 0
            ? tl_arith_divi(&L->b, shift, lw_cst(L, lw_i64(L), 8 / b))
            : tl_arith_divi(
                  &L->b, tl_arith_muli(&L->b, shift, lw_cst(L, lw_i64(L), b)),
                  lw_cst(L, lw_i64(L), 8));
    m->base = lw_ptr_add(L, src->base, bytes);
  }
  lw_put_smem(L, tl_op_result(op, 0), m);
  return true;
}
