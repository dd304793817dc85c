/* Global memory: views (tl.view_global, tl.alloc_global), loads and stores
 * of register tiles (tl.load_global, tl.store_global), atomics and fences
 * (tl.atomic_rmw, tl.atomic_cas, tl.fence) and copies into shared tiles
 * (tl.copy_async). Accesses move the widest runs, up to 16
 * bytes, that the layouts and the alignment analysis allow; masked ones
 * read zeros and skip writes outside the view. */
#include "lower.h"

/* tl.alloc_global: a row-major view at the planned offset of the
 * workspace parameter. */
bool lw_lower_alloc_global(Lower *L, TlOp *op) {
  TlAttr *off = tl_op_attr(op, "offset");
  if (!L->workspace || !off)
    return lw_fail(L, op, "a workspace tensor the plan did not place");
  View *v = TL_ARENA_NEW(&L->arena, View);
  TlType *g = tl_value_type(tl_op_result(op, 0));
  v->ptr =
      lw_ptr_add(L, L->workspace, lw_cst(L, lw_i64(L), tl_attr_int_value(off)));
  v->rank = tl_tensor_rank(g);
  v->elem = tl_tensor_elem(g);
  int64_t run = 1;
  for (int d = (int)v->rank - 1; d >= 0; d--) {
    v->dims[d] = lw_cst(L, lw_i64(L), tl_tensor_dim(g, (unsigned)d));
    v->strides[d] = lw_cst(L, lw_i64(L), run);
    run *= tl_tensor_dim(g, (unsigned)d);
  }
  lw_put_view(L, tl_op_result(op, 0), v);
  return true;
}

/* tl.view_global: the pointer, the sizes and the strides (row-major when
 * the op gives none), static ones as constants. */
bool lw_lower_view_global(Lower *L, TlOp *op) {
  View *v = TL_ARENA_NEW(&L->arena, View);
  TlType *g = tl_value_type(tl_op_result(op, 0));
  v->ptr = lw_scalar(L, tl_op_operand(op, 0));
  v->rank = tl_tensor_rank(g);
  v->elem = tl_tensor_elem(g);
  TlAttr *dims = tl_op_attr(op, "static_dims"),
         *strides = tl_op_attr(op, "static_strides");
  unsigned next = 1;
  for (unsigned d = 0; d < v->rank; d++) {
    int64_t s = tl_attr_int_value(tl_attr_array_elem(dims, d));
    v->dims[d] = s >= 0 ? lw_cst(L, lw_i64(L), s)
                        : lw_to_i64(L, lw_scalar(L, tl_op_operand(op, next++)));
  }
  if (strides) {
    for (unsigned d = 0; d < v->rank; d++) {
      int64_t s = tl_attr_int_value(tl_attr_array_elem(strides, d));
      v->strides[d] =
          s >= 0 ? lw_cst(L, lw_i64(L), s)
                 : lw_to_i64(L, lw_scalar(L, tl_op_operand(op, next++)));
    }
  } else {
    v->strides[v->rank - 1] = lw_cst(L, lw_i64(L), 1);
    for (int d = (int)v->rank - 2; d >= 0; d--)
      v->strides[d] = tl_arith_muli(&L->b, v->strides[d + 1], v->dims[d + 1]);
  }
  lw_put_view(L, tl_op_result(op, 0), v);
  return true;
}

/* Byte address of element (off + idx) and, for sub-byte types, the bit
 * offset within the byte. */
static TlValue *elem_addr(Lower *L, View *v, TlValue **off, TlValue **idx,
                          TlValue **bitoff) {
  TlValue *lin = NULL;
  for (unsigned d = 0; d < v->rank; d++) {
    TlValue *pos = tl_arith_addi(&L->b, off[d], idx[d]);
    TlValue *term = tl_arith_muli(&L->b, pos, v->strides[d]);
    lin = lin ? tl_arith_addi(&L->b, lin, term) : term;
  }
  unsigned b = tl_type_bitwidth(v->elem);
  TlValue *bytes;
  *bitoff = NULL;
  if (b >= 8) {
    bytes =
        b == 8 ? lin : tl_arith_muli(&L->b, lin, lw_cst(L, lw_i64(L), b / 8));
  } else {
    TlValue *bits = tl_arith_muli(&L->b, lin, lw_cst(L, lw_i64(L), b));
    bytes = tl_arith_divi(&L->b, bits, lw_cst(L, lw_i64(L), 8));
    *bitoff = tl_arith_trunci(
        &L->b, tl_arith_remi(&L->b, bits, lw_cst(L, lw_i64(L), 8)), lw_u32(L));
  }
  return lw_ptr_add(L, v->ptr, bytes);
}

/* The byte alignment of local element i's address in the view of a
 * global access whose tile runs along the view's last dimension at stride
 * 1; *run gets the number of local elements from i on that follow it
 * there. 0 when the view is not known to be contiguous along the tile's
 * last dimension, or when the element may start inside a byte. */
static int64_t run_alignment(Lower *L, TlOp *op, unsigned view_operand,
                             const TlLayout *l, int64_t i, int64_t *run) {
  TlAccessAlignment acc;
  int64_t ci[TL_LAYOUT_MAX_RANK];
  *run = lw_local_run(l, i, ci);
  if (!L->facts || !tl_analysis_access_alignment(L->facts, op, &acc) ||
      acc.contiguous < l->shape[l->rank - 1])
    return 0;
  int64_t div[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < l->rank; d++) {
    div[d] = lw_pow2_factor(ci[d]);
    int64_t sd = lw_spatial_div(l, d);
    if (sd < div[d])
      div[d] = sd;
  }
  unsigned nops = tl_op_num_operands(op);
  TlValue *offs[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < l->rank; d++)
    offs[d] = tl_op_operand(op, nops - (unsigned)l->rank + (unsigned)d);
  return tl_analysis_view_alignment(L->facts, tl_op_operand(op, view_operand),
                                    offs, div);
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

/* Whether element (off + idx) lies inside the view: 0 <= pos < size in
 * every dimension (i1). */
static TlValue *in_view(Lower *L, View *v, TlValue **off, TlValue **idx) {
  TlValue *ok = NULL;
  for (unsigned d = 0; d < v->rank; d++) {
    TlValue *pos = tl_arith_addi(&L->b, off[d], idx[d]);
    TlValue *a = tl_arith_cmpi(&L->b, "ge", pos, lw_cst(L, lw_i64(L), 0));
    TlValue *b = tl_arith_cmpi(&L->b, "lt", pos, v->dims[d]);
    TlValue *both = tl_arith_andi(&L->b, a, b);
    ok = ok ? tl_arith_andi(&L->b, ok, both) : both;
  }
  return ok;
}

/* One element of a masked load: `scf.if ok -> u32 { load } else { 0 }`. */
static TlValue *masked_elem_load(Lower *L, TlValue *ok, TlValue *p, TlType *mem,
                                 unsigned b, TlValue *bitoff) {
  TlType *u32 = lw_u32(L);
  TlOp *nif = lw_scf_if(L, ok, 1, &u32);
  TlBuilder saved = L->b;
  TlBlock *then = tl_block_create(L->module),
          *other = tl_block_create(L->module);
  tl_region_append_block(tl_op_region(nif, 0), then);
  tl_region_append_block(tl_op_region(nif, 1), other);
  tl_builder_set_end(&L->b, then);
  TlValue *x = lw_load(L, p, mem, 0);
  if (b < 32)
    x = tl_arith_exti(&L->b, x, u32);
  if (bitoff)
    x = tl_arith_shri(&L->b, x, bitoff);
  tl_build(&L->b, TL_OP_SCF_YIELD, 1, &x, 0, NULL);
  tl_builder_set_end(&L->b, other);
  TlValue *z = lw_cst(L, u32, 0);
  tl_build(&L->b, TL_OP_SCF_YIELD, 1, &z, 0, NULL);
  L->b = saved;
  return tl_op_result(nif, 0);
}

/* The power of two known to divide the size of the last dimension of
 * global view g (a tl.view_global or tl.alloc_global result). */
static int64_t last_dim_div(Lower *L, TlValue *g) {
  TlType *gt = tl_value_type(g);
  unsigned last = tl_tensor_rank(gt) - 1;
  int64_t s = tl_tensor_dim(gt, last);
  if (s >= 0)
    return lw_pow2_factor(s);
  TlOp *def = tl_value_def(g);
  if (!def || tl_op_id(def) != TL_OP_TL_VIEW_GLOBAL)
    return 1;
  /* Operand 1 + k is the k-th dynamic size (as lw_lower_view_global). */
  unsigned next = 1;
  for (unsigned d = 0; d < last; d++)
    next += tl_tensor_dim(gt, d) < 0;
  return lw_offset_div(L, tl_op_operand(def, next));
}

/* How many of a masked load's local elements from i on one access may
 * move: the unmasked width, cut so that the run lies wholly inside or
 * wholly outside the view. Its elements share every index but the last,
 * so the mask is uniform over it when its first position in the last
 * dimension (offset + index) and that dimension's size are multiples of
 * the width. */
static int64_t masked_run(Lower *L, TlOp *op, const TlLayout *l, int64_t i,
                          unsigned bytes) {
  int64_t w = vector_run(L, op, 0, l, i, bytes);
  if (w == 1)
    return 1;
  int last = l->rank - 1;
  int64_t ci[TL_LAYOUT_MAX_RANK];
  lw_local_run(l, i, ci);
  int64_t div = lw_pow2_factor(ci[last]);
  int64_t sd = lw_spatial_div(l, last);
  if (sd < div)
    div = sd;
  int64_t od = lw_offset_div(
      L, tl_op_operand(op, tl_op_num_operands(op) - 1));
  if (od < div)
    div = od;
  int64_t dd = last_dim_div(L, tl_op_operand(op, 0));
  if (dd < div)
    div = dd;
  while (w > 1 && div % w)
    w /= 2;
  return w;
}

/* A masked access of w elements: `scf.if ok -> T { load } else { 0 }`,
 * T the access type of their bytes. */
static TlValue *masked_run_load(Lower *L, TlValue *ok, TlValue *p,
                                unsigned bytes) {
  TlType *at = lw_access_type(L, bytes);
  TlOp *nif = lw_scf_if(L, ok, 1, &at);
  TlBuilder saved = L->b;
  TlBlock *then = tl_block_create(L->module),
          *other = tl_block_create(L->module);
  tl_region_append_block(tl_op_region(nif, 0), then);
  tl_region_append_block(tl_op_region(nif, 1), other);
  tl_builder_set_end(&L->b, then);
  TlValue *x = lw_load(L, p, at, bytes);
  tl_build(&L->b, TL_OP_SCF_YIELD, 1, &x, 0, NULL);
  tl_builder_set_end(&L->b, other);
  TlValue *z;
  if (bytes <= 4) {
    z = lw_cst(L, at, 0);
  } else {
    TlValue *zw[4];
    for (unsigned k = 0; k < bytes / 4; k++)
      zw[k] = lw_cst(L, lw_u32(L), 0);
    z = tl_build1(&L->b, TL_OP_SIMT_BUILD, bytes / 4, zw, at);
  }
  tl_build(&L->b, TL_OP_SCF_YIELD, 1, &z, 0, NULL);
  L->b = saved;
  return tl_op_result(nif, 0);
}

/* For a masked access: how many of the local run of n elements from i on
 * lie wholly inside or wholly outside the view: the largest power of two
 * at most n that divides the run's first position in the last dimension
 * (its constant part, the thread-dependent part, the offset) and the
 * view's last size. */
static int64_t uniform_mask_run(Lower *L, TlOp *op, unsigned view_operand,
                                const TlLayout *l, int64_t i, int64_t n) {
  int last = l->rank - 1;
  int64_t ci[TL_LAYOUT_MAX_RANK];
  lw_local_run(l, i, ci);
  int64_t div = lw_pow2_factor(ci[last]);
  int64_t sd = lw_spatial_div(l, last),
          od = lw_offset_div(L, tl_op_operand(op, tl_op_num_operands(op) - 1)),
          dd = last_dim_div(L, tl_op_operand(op, view_operand));
  if (sd < div)
    div = sd;
  if (od < div)
    div = od;
  if (dd < div)
    div = dd;
  int64_t w = 1;
  while (w * 2 <= n && div % (w * 2) == 0)
    w *= 2;
  return w;
}

/* The bytes of the next access of a run of nbytes bytes whose first
 * `done` are moved, the run's start aligned to `align`: the widest power
 * of two up to 16 that what is left holds and the offset's alignment
 * allows. */
static unsigned run_access(int64_t done, int64_t nbytes, int64_t align) {
  int64_t at = done ? lw_pow2_factor(done) : TL_DIVISIBILITY_MAX;
  if (align < at)
    at = align;
  unsigned cb = 16;
  while (cb > 1 && (cb > nbytes - done || at % cb))
    cb /= 2;
  return cb;
}

/* A run of a thread's sub-byte elements that starts on a byte boundary
 * (the alignment analysis proves it, `align` bytes) and covers whole
 * bytes: its bytes, bits [pos, pos + 8 nbytes) of t, loaded in the widest
 * accesses the alignment allows; with ok (masked), each access reads 0
 * where ok is false. */
static void load_byte_run(Lower *L, Tile *t, int64_t pos, TlValue *p,
                          int64_t nbytes, int64_t align, TlValue *ok) {
  for (int64_t done = 0; done < nbytes;) {
    unsigned cb = run_access(done, nbytes, align);
    TlValue *q = done ? lw_ptr_add(L, p, lw_cst(L, lw_i64(L), done)) : p;
    TlValue *x = ok ? masked_run_load(L, ok, q, cb)
                    : lw_load(L, q, lw_access_type(L, cb), cb > 1 ? cb : 0);
    int64_t bit = pos + done * 8;
    if (cb <= 4)
      lw_put_bits(L, t, bit, cb * 8,
                  cb < 4 ? tl_arith_exti(&L->b, x, lw_u32(L)) : x);
    else
      for (unsigned j = 0; j < cb / 4; j++)
        lw_put_bits(L, t, bit + 32 * j, 32, lw_extract(L, x, lw_u32(L), j));
    done += cb;
  }
}

/* tl.load_global: the thread's elements in the widest accesses their
 * runs and alignment allow; masked loads in runs over which the mask is
 * uniform (one predicated access each, 0 outside the view), else element
 * by element; elements of 3, 5, 6 or 7 bits from the bytes they touch. */
bool lw_lower_load_global(Lower *L, TlOp *op) {
  View *v = lw_view_of(L, tl_op_operand(op, 0));
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  unsigned b = lw_elem_bits(rt);
  bool masked = tl_op_attr(op, "masked") != NULL;
  bool straddles = b < 8 && 8 % b;
  TlValue *off[TL_LAYOUT_MAX_RANK], *idx[TL_LAYOUT_MAX_RANK];
  for (unsigned d = 0; d < v->rank; d++)
    off[d] = lw_to_i64(L, lw_scalar(L, tl_op_operand(op, 1 + d)));
  Tile *t = lw_zero_tile(L, rt);
  const TlLayout *l = tl_reg_layout(rt);
  TlType *mem = tl_type_int(L->ctx, b < 8 ? 8 : b, false);
  for (int64_t i = 0; i < tl_layout_local_size(l);) {
    lw_index_of(L, l, i, idx);
    TlValue *bitoff;
    TlValue *p = elem_addr(L, v, off, idx, &bitoff);
    if (b < 8) {
      /* A run of whole bytes on a byte boundary (for a masked load, one
       * over which the mask is uniform): its bytes in wide accesses. */
      int64_t n, align = run_alignment(L, op, 0, l, i, &n);
      if (align && (n * b) % 8 == 0 && masked)
        n = uniform_mask_run(L, op, 0, l, i, n);
      if (align && (n * b) % 8 == 0) {
        load_byte_run(L, t, i * b, p, n * b / 8, align,
                      masked ? in_view(L, v, off, idx) : NULL);
        i += n;
        continue;
      }
      if (straddles && masked)
        return lw_fail(
            L, op,
            "masked global loads of 3, 5, 6 or 7-bit elements whose runs "
            "over which the mask is uniform are not whole bytes on a byte "
            "boundary (load bytes and tl.view them)");
    }
    int64_t w = b < 8   ? 1
                : masked ? masked_run(L, op, l, i, b / 8)
                         : vector_run(L, op, 0, l, i, b / 8);
    if (straddles) {
      /* The element's byte, and the next one only when the element runs
       * into it (so no byte past the element is read). */
      TlValue *lo = tl_arith_exti(&L->b, lw_load(L, p, mem, 0), lw_u32(L));
      TlValue *spill = tl_arith_cmpi(&L->b, "gt", bitoff,
                                     lw_cst(L, lw_u32(L), 8 - (int64_t)b));
      TlValue *next = lw_ptr_add(L, p, lw_cst(L, lw_i64(L), 1));
      TlValue *hi = masked_elem_load(L, spill, next, mem, 8, NULL);
      TlValue *both = tl_arith_ori(
          &L->b, lo, tl_arith_shli(&L->b, hi, lw_cst(L, lw_u32(L), 8)));
      lw_set_elem(L, t, (unsigned)i, tl_arith_shri(&L->b, both, bitoff));
      i++;
      continue;
    }
    if (masked && w > 1) {
      /* One access for the w elements, all inside the view or all
       * outside it. */
      unsigned bytes = (unsigned)w * b / 8;
      lw_scatter_access(L, t, i, w,
                        masked_run_load(L, in_view(L, v, off, idx), p, bytes));
      i += w;
      continue;
    }
    if (masked && b == 64) {
      /* Both words, each 0 outside the view. */
      TlValue *ok = in_view(L, v, off, idx);
      TlValue *hi = lw_ptr_add(L, p, lw_cst(L, lw_i64(L), 4));
      t->words[2 * i] = masked_elem_load(L, ok, p, lw_u32(L), 32, NULL);
      t->words[2 * i + 1] = masked_elem_load(L, ok, hi, lw_u32(L), 32, NULL);
      i++;
      continue;
    }
    if (masked) {
      /* Outside the view the element reads 0 (element by element). */
      lw_set_elem(
          L, t, (unsigned)i,
          masked_elem_load(L, in_view(L, v, off, idx), p, mem, b, bitoff));
      i++;
      continue;
    }
    if (w > 1 || b == 64) {
      /* One access for w elements: its bytes are the elements' bits in
       * order, which is the tile's own packing. */
      unsigned bytes = (unsigned)w * b / 8;
      TlValue *x = lw_load(L, p, lw_access_type(L, bytes), bytes);
      lw_scatter_access(L, t, i, w, x);
      i += w;
      continue;
    }
    TlValue *x = lw_load(L, p, mem, 0);
    if (b < 32)
      x = tl_arith_exti(&L->b, x, lw_u32(L));
    if (bitoff)
      x = tl_arith_shri(&L->b, x, bitoff);
    lw_set_elem(L, t, (unsigned)i, x);
    i++;
  }
  lw_put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/* Stores of sub-byte elements: a thread writes whole bytes only, so each
 * run of its elements along the view's last dimension must start on a
 * byte boundary (the alignment analysis proves it) and cover whole bytes;
 * the run's bytes go out in the widest accesses their alignment allows.
 * A masked store cuts each run to one over which the mask is uniform
 * (uniform_mask_run), which must still be whole bytes; the run's accesses
 * then happen only inside the view. */
static bool store_subbyte(Lower *L, TlOp *op, Tile *t, View *v, TlValue **off,
                          bool masked) {
  const TlLayout *l = tl_reg_layout(t->type);
  unsigned b = lw_elem_bits(t->type);
  TlValue *idx[TL_LAYOUT_MAX_RANK];
  for (int64_t i = 0; i < tl_layout_local_size(l);) {
    int64_t n, align = run_alignment(L, op, 1, l, i, &n);
    if (masked && (n * b) % 8 == 0 && align) {
      n = uniform_mask_run(L, op, 1, l, i, n);
      if ((n * b) % 8) {
        char msg[240];
        snprintf(msg, sizeof msg,
                 "masked global stores of %u-bit elements whose runs over "
                 "which the mask is uniform are not whole bytes (%lld "
                 "element%s: the run's first column and the view's last size "
                 "must be known multiples of %u)",
                 b, (long long)n, n == 1 ? "" : "s", 8 / (b & -b));
        return lw_fail(L, op, msg);
      }
    }
    if ((n * b) % 8)
      return lw_fail(
          L, op,
          "global stores of sub-byte elements whose runs along the last "
          "dimension do not cover whole bytes (threads would share bytes)");
    if (align == 0)
      return lw_fail(
          L, op,
          "global stores of sub-byte elements not known to start on a byte "
          "boundary (an `assume` on the pointer or offsets may prove it)");
    lw_index_of(L, l, i, idx);
    TlValue *bitoff;
    TlValue *p = elem_addr(L, v, off, idx, &bitoff);
    int64_t nbytes = n * b / 8;
    TlBuilder inside =
        masked ? lw_open_guard(L, in_view(L, v, off, idx)) : L->b;
    for (int64_t done = 0; done < nbytes;) {
      unsigned cb = run_access(done, nbytes, align);
      TlValue *words[4];
      for (unsigned k = 0; k * 4 < cb; k++)
        words[k] = lw_tile_bits(L, t, i * b + done * 8 + k * 32,
                                cb >= 4 ? 32 : cb * 8);
      TlType *ct = cb > 4 ? lw_access_type(L, cb) : NULL;
      TlValue *x;
      if (cb < 4)
        x = tl_arith_trunci(&L->b, words[0],
                            tl_type_int(L->ctx, cb * 8, false));
      else if (cb == 4)
        x = words[0];
      else
        x = tl_build1(&L->b, TL_OP_SIMT_BUILD, cb / 4, words, ct);
      TlValue *q = done ? lw_ptr_add(L, p, lw_cst(L, lw_i64(L), done)) : p;
      lw_store(L, x, q, cb > 1 ? cb : 0);
      done += cb;
    }
    if (masked)
      lw_close_guard(L, inside);
    i += n;
  }
  return true;
}

/* tl.store_global: each element by one writer, in the widest accesses
 * its run and alignment allow; masked stores element by element, skipped
 * outside the view. */
bool lw_lower_store_global(Lower *L, TlOp *op) {
  Tile *t = lw_tile_of(L, tl_op_operand(op, 0));
  View *v = lw_view_of(L, tl_op_operand(op, 1));
  unsigned b = lw_elem_bits(t->type);
  bool masked = tl_op_attr(op, "masked") != NULL;
  TlValue *off[TL_LAYOUT_MAX_RANK], *idx[TL_LAYOUT_MAX_RANK];
  for (unsigned d = 0; d < v->rank; d++)
    off[d] = lw_to_i64(L, lw_scalar(L, tl_op_operand(op, 2 + d)));
  const TlLayout *l = tl_reg_layout(t->type);
  TlValue *guard = lw_writer_guard(L, l);
  TlBuilder outside = guard ? lw_open_guard(L, guard) : L->b;
  if (b < 8) {
    bool ok = store_subbyte(L, op, t, v, off, masked);
    if (guard)
      lw_close_guard(L, outside);
    return ok;
  }
  TlType *mem = tl_type_int(L->ctx, b, false);
  for (int64_t i = 0; i < tl_layout_local_size(l);) {
    lw_index_of(L, l, i, idx);
    TlValue *bitoff;
    TlValue *p = elem_addr(L, v, off, idx, &bitoff);
    int64_t w = masked ? 1 : vector_run(L, op, 1, l, i, b / 8);
    if (w > 1 || b == 64) {
      unsigned bytes = (unsigned)w * b / 8;
      TlValue *x = lw_gather_access(L, t, i, w);
      /* (w is 1 when masked: outside the view the element is skipped.) */
      TlBuilder inside =
          masked ? lw_open_guard(L, in_view(L, v, off, idx)) : L->b;
      lw_store(L, x, p, bytes);
      if (masked)
        lw_close_guard(L, inside);
      i += w;
      continue;
    }
    TlValue *x = lw_get_elem(L, t, (unsigned)i);
    if (b < 32)
      x = tl_arith_trunci(&L->b, x, mem);
    /* Outside the view the element is skipped. */
    TlBuilder inside =
        masked ? lw_open_guard(L, in_view(L, v, off, idx)) : L->b;
    lw_store(L, x, p, 0);
    if (masked)
      lw_close_guard(L, inside);
    i++;
  }
  if (guard)
    lw_close_guard(L, outside);
  return true;
}

/*===--- Atomics and fences ----------------------------------------------===*/

/* One simt.atom (kind from op, or atom_cas when cmp is given) of v at p,
 * with op's scope and ordering; the old value. */
static TlValue *emit_atom(Lower *L, TlOp *op, TlValue *p, TlValue *cmp,
                          TlValue *v) {
  TlValue *ops[3] = {p, cmp ? cmp : v, v};
  TlType *t = tl_value_type(v);
  TlOp *a = cmp ? tl_build(&L->b, TL_OP_SIMT_ATOM_CAS, 3, ops, 1, &t)
                : tl_build(&L->b, TL_OP_SIMT_ATOM, 2, ops, 1, &t);
  static const char *const copied[] = {"kind", "scope", "ordering", NULL};
  for (const char *const *n = copied; *n; n++)
    if (tl_op_attr(op, *n))
      tl_op_set_attr(a, *n, tl_op_attr(op, *n));
  return tl_op_result(a, 0);
}

/* Whether local elements i and i + 1 of an f16 add go as one f16x2 atom:
 * adjacent in the view and their pair 4-byte aligned (the alignment
 * analysis proves it), and not masked (a pair may straddle the edge). */
static bool f16_pair(Lower *L, TlOp *op, const TlLayout *l, int64_t i,
                     bool masked) {
  TlType *e = tl_tensor_elem(tl_value_type(tl_op_operand(op, 0)));
  return tl_op_id(op) == TL_OP_TL_ATOMIC_RMW && !masked &&
         tl_atomic_kind_of(op) == TL_ATOMIC_ADD && lw_is_f(e, 5, 10) &&
         i + 1 < tl_layout_local_size(l) && vector_run(L, op, 1, l, i, 2) >= 2;
}

/* The tile form: each element by one writer (replicated ones once), an
 * atom per element or per f16 pair; a masked one is skipped outside the
 * view. A release is the block's: a barrier first puts every thread's
 * earlier accesses before it (releases are cumulative); an acquire is
 * made the block's by a barrier after. */
static bool lower_atomic_tile(Lower *L, TlOp *op, unsigned nvals) {
  Tile *t = lw_tile_of(L, tl_op_operand(op, nvals - 1));
  Tile *c = nvals == 2 ? lw_tile_of(L, tl_op_operand(op, 0)) : NULL;
  View *v = lw_view_of(L, tl_op_operand(op, nvals));
  bool masked = tl_op_attr(op, "masked") != NULL;
  TlMemOrder ord = tl_mem_order_of(op, TL_ORDER_RELAXED);
  TlValue *off[TL_LAYOUT_MAX_RANK], *idx[TL_LAYOUT_MAX_RANK];
  for (unsigned d = 0; d < v->rank; d++)
    off[d] = lw_to_i64(L, lw_scalar(L, tl_op_operand(op, nvals + 1 + d)));
  const TlLayout *l = tl_reg_layout(t->type);
  if (tl_mem_order_releases(ord))
    lw_barrier(L);
  TlValue *guard = lw_writer_guard(L, l);
  TlBuilder outside = guard ? lw_open_guard(L, guard) : L->b;
  for (int64_t i = 0; i < tl_layout_local_size(l);) {
    lw_index_of(L, l, i, idx);
    TlValue *bitoff, *p = elem_addr(L, v, off, idx, &bitoff);
    if (f16_pair(L, op, l, i, masked)) {
      TlType *h2 = tl_simt_vec_type(L->ctx, 2, tl_type_f16(L->ctx));
      TlValue *x = tl_build1(&L->b, TL_OP_SIMT_BITCAST, 1,
                             (TlValue *[]){lw_gather_access(L, t, i, 2)}, h2);
      emit_atom(L, op, p, NULL, x);
      i += 2;
      continue;
    }
    TlBuilder inside =
        masked ? lw_open_guard(L, in_view(L, v, off, idx)) : L->b;
    if (c) {
      /* cas compares bits: the elements' words, as u32. */
      emit_atom(L, op, p, lw_get_elem(L, c, (unsigned)i),
                lw_get_elem(L, t, (unsigned)i));
    } else {
      TlType *ct;
      emit_atom(L, op, p, NULL, lw_decode(L, t, (unsigned)i, &ct));
    }
    if (masked)
      lw_close_guard(L, inside);
    i++;
  }
  if (guard)
    lw_close_guard(L, outside);
  if (tl_mem_order_acquires(ord))
    lw_barrier(L);
  return true;
}

/* The scalar form: after a barrier (the scratch's), thread 0 runs the
 * atomic and leaves the old value in the shared scratch, which every
 * thread reads after a second barrier. The barriers also make the
 * atomic's release and acquire the block's. */
static bool lower_atomic_scalar(Lower *L, TlOp *op, unsigned nvals) {
  View *v = lw_view_of(L, tl_op_operand(op, nvals));
  TlValue *idx[TL_LAYOUT_MAX_RANK], *zero[TL_LAYOUT_MAX_RANK];
  for (unsigned d = 0; d < v->rank; d++) {
    idx[d] = lw_to_i64(L, lw_scalar(L, tl_op_operand(op, nvals + 1 + d)));
    zero[d] = lw_cst(L, lw_i64(L), 0);
  }
  TlValue *x = lw_scalar(L, tl_op_operand(op, nvals - 1));
  TlValue *cmp = nvals == 2 ? lw_scalar(L, tl_op_operand(op, 0)) : NULL;
  TlType *t = tl_value_type(x);
  TlValue *scratch = lw_scratch(L, 4);
  TlBuilder outside = lw_open_guard(
      L, tl_arith_cmpi(&L->b, "eq", L->tid, lw_cst(L, lw_i32(L), 0)));
  TlValue *bitoff, *p = elem_addr(L, v, idx, zero, &bitoff);
  TlValue *old;
  if (cmp) {
    /* cas compares bits: f32 goes as u32. */
    TlType *u32 = lw_u32(L);
    TlValue *cb =
        t == u32 || tl_type_is_int(t) ? cmp : tl_arith_bitcast(&L->b, cmp, u32);
    TlValue *xb =
        t == u32 || tl_type_is_int(t) ? x : tl_arith_bitcast(&L->b, x, u32);
    old = emit_atom(L, op, p, cb, xb);
    if (tl_value_type(old) != t)
      old = tl_arith_bitcast(&L->b, old, t);
  } else {
    old = emit_atom(L, op, p, NULL, x);
  }
  lw_store(L, old, scratch, 0);
  lw_close_guard(L, outside);
  lw_barrier(L);
  lw_put_scalar(L, tl_op_result(op, 0), lw_load(L, scratch, t, 0));
  return true;
}

bool lw_lower_atomic(Lower *L, TlOp *op) {
  unsigned nvals = tl_op_id(op) == TL_OP_TL_ATOMIC_CAS ? 2 : 1;
  return tl_op_num_results(op) ? lower_atomic_scalar(L, op, nvals)
                               : lower_atomic_tile(L, op, nvals);
}

/* tl.fence: a barrier, a fence in every thread, a barrier: the first puts
 * every thread's earlier accesses before the fence (a release is the
 * block's), the second every thread's later ones after it. */
bool lw_lower_fence(Lower *L, TlOp *op) {
  lw_barrier(L);
  TlOp *f = tl_build(&L->b, TL_OP_SIMT_FENCE, 0, NULL, 0, NULL);
  if (tl_op_attr(op, "scope"))
    tl_op_set_attr(f, "scope", tl_op_attr(op, "scope"));
  if (tl_op_attr(op, "ordering"))
    tl_op_set_attr(f, "ordering", tl_op_attr(op, "ordering"));
  lw_barrier(L);
  return true;
}

/*===--- Scalar loads and gathers ----------------------------------------===*/

/* tl.load_scalar: every thread loads the element (one address for the
 * block, served once by the cache); an ordering makes each thread's load
 * an ordered one (ld.acquire.SCOPE: each thread acquires for itself). */
bool lw_lower_load_scalar(Lower *L, TlOp *op) {
  View *v = lw_view_of(L, tl_op_operand(op, 0));
  TlValue *idx[TL_LAYOUT_MAX_RANK], *zero[TL_LAYOUT_MAX_RANK], *bitoff;
  for (unsigned d = 0; d < v->rank; d++) {
    idx[d] = lw_to_i64(L, lw_scalar(L, tl_op_operand(op, 1 + d)));
    zero[d] = lw_cst(L, lw_i64(L), 0);
  }
  TlType *t = tl_value_type(tl_op_result(op, 0));
  TlOp *ld =
      tl_build(&L->b, TL_OP_SIMT_LOAD, 1,
               (TlValue *[]){elem_addr(L, v, idx, zero, &bitoff)}, 1, &t);
  if (tl_op_attr(op, "ordering"))
    tl_op_set_attr(ld, "ordering", tl_op_attr(op, "ordering"));
  if (tl_op_attr(op, "ordering") && tl_op_attr(op, "scope"))
    tl_op_set_attr(ld, "scope", tl_op_attr(op, "scope"));
  lw_put_scalar(L, tl_op_result(op, 0), tl_op_result(ld, 0));
  return true;
}

/* The index tile's value for each result element, as i64: the tile
 * broadcast along its size-1 dimensions to the result's shape and layout
 * (in registers where every thread holds its rows' indices, else through
 * the shared scratch), each element decoded by its signedness. */
static Tile *gather_rows(Lower *L, TlOp *op, TlType *rt) {
  Tile *ix = lw_tile_of(L, tl_op_operand(op, 1));
  TlType *it = ix->type;
  int64_t dims[TL_LAYOUT_MAX_RANK];
  for (unsigned d = 0; d < tl_tensor_rank(rt); d++)
    dims[d] = tl_tensor_dim(rt, d);
  TlType *bt = tl_reg_type_get(L->ctx, tl_tensor_rank(rt), dims,
                               tl_tensor_elem(it), tl_reg_layout(rt));
  Tile *b = lw_zero_tile(L, bt);
  return lw_broadcast_tile(L, op, ix, b) ? b : NULL;
}

/* tl.gather: element (i, j, ...) of the result from the view at (idx[i],
 * o_1 + j, ...), one load per element (rows selected at run time give no
 * runs to vectorize); masked ones read 0 outside the view. */
bool lw_lower_gather(Lower *L, TlOp *op) {
  View *v = lw_view_of(L, tl_op_operand(op, 0));
  TlType *rt = tl_value_type(tl_op_result(op, 0));
  unsigned b = lw_elem_bits(rt);
  bool masked = tl_op_attr(op, "masked") != NULL;
  Tile *rows = gather_rows(L, op, rt);
  if (!rows)
    return false;
  TlValue *off[TL_LAYOUT_MAX_RANK], *idx[TL_LAYOUT_MAX_RANK];
  off[0] = lw_cst(L, lw_i64(L), 0);
  for (unsigned d = 1; d < v->rank; d++)
    off[d] = lw_to_i64(L, lw_scalar(L, tl_op_operand(op, 1 + d)));
  Tile *t = lw_zero_tile(L, rt);
  const TlLayout *l = tl_reg_layout(rt);
  TlType *mem = tl_type_int(L->ctx, b, false);
  for (int64_t i = 0; i < tl_layout_local_size(l); i++) {
    lw_index_of(L, l, i, idx);
    TlType *ct;
    idx[0] = lw_to_i64(L, lw_decode(L, rows, (unsigned)i, &ct));
    TlValue *bitoff, *p = elem_addr(L, v, off, idx, &bitoff);
    if (b == 64) {
      TlValue *hi = lw_ptr_add(L, p, lw_cst(L, lw_i64(L), 4));
      TlValue *ok = masked ? in_view(L, v, off, idx) : NULL;
      t->words[2 * i] = ok ? masked_elem_load(L, ok, p, lw_u32(L), 32, NULL)
                           : lw_load(L, p, lw_u32(L), 0);
      t->words[2 * i + 1] =
          ok ? masked_elem_load(L, ok, hi, lw_u32(L), 32, NULL)
             : lw_load(L, hi, lw_u32(L), 0);
      continue;
    }
    TlValue *x;
    if (masked) {
      x = masked_elem_load(L, in_view(L, v, off, idx), p, mem, b, NULL);
    } else {
      x = lw_load(L, p, mem, 0);
      if (b < 32)
        x = tl_arith_exti(&L->b, x, lw_u32(L));
    }
    lw_set_elem(L, t, (unsigned)i, x);
  }
  lw_put_tile(L, tl_op_result(op, 0), t);
  return true;
}

/*===--- Copies into shared tiles ----------------------------------------===*/

/* The widest chunk of w elements (w * bytes of 4, 8 or 16) that both
 * sides of a copy keep contiguous and aligned: along the tile's last
 * dimension, which the global view must hold contiguously, with every row
 * start aligned to the chunk; in shared memory an innermost mode of stride
 * 1 that w divides, every other stride and the base multiples of w, and a
 * swizzle that moves whole chunks (2^M >= w). The chunks must also spread
 * evenly over the block's threads: a multiple of their number, or a
 * divisor of it (threads 0 .. c - 1 then copy one chunk each). Elements
 * of 3, 5, 6 or 7 bits fill no such chunk: theirs hold the fewest
 * elements that are a whole number of pieces of 4, 8 or 16 bytes (8 / g
 * times the piece's bytes, g = gcd(b, 8): b / g pieces), and *piece gets
 * the piece's size in bytes. 0 when no width qualifies. */
static int64_t copy_width(Lower *L, TlOp *op, const Smem *m, int64_t n,
                          unsigned *piece) {
  const TlSharedLayout *l = &m->layout;
  int64_t b = tl_type_bitwidth(m->elem), last = l->shape[l->rank - 1];
  int64_t g = b % 8 == 0 ? 8 : b % 4 == 0 ? 4 : b % 2 == 0 ? 2 : 1;
  TlAccessAlignment acc;
  if (!L->facts || !tl_analysis_access_alignment(L->facts, op, &acc) ||
      acc.contiguous < last)
    return 0;
  for (int64_t cb = 16; cb >= 4; cb /= 2) {
    int64_t w = b < 8 && 8 % b ? cb * 8 / g : cb * 8 / b;
    *piece = (unsigned)cb;
    if (w > 0 && last % w == 0 && acc.row % cb == 0 &&
        n / w > 0 &&
        ((n / w) % L->threads == 0 || L->threads % (n / w) == 0) &&
        lw_smem_runs(l, w))
      return w;
  }
  return 0;
}

/* The row-major index of element e (i64) of a shared tile's shape, into
 * idx[0..rank): the last dimension varies fastest. */
static void unravel(Lower *L, TlValue *e, const TlSharedLayout *sl,
                    TlValue **idx) {
  int64_t stride = 1;
  for (int d = sl->rank - 1; d >= 0; d--) {
    TlValue *q = stride > 1
                     ? tl_arith_divi(&L->b, e, lw_cst(L, lw_i64(L), stride))
                     : e;
    idx[d] = d > 0 ? tl_arith_remi(&L->b, q, lw_cst(L, lw_i64(L), sl->shape[d]))
                   : q;
    stride *= sl->shape[d];
  }
}

/* A copy no cp.async width serves (unaligned or uneven): done at once,
 * element e by thread e % T with a load and a shared store, which is
 * complete before any wait, as the asynchronous one would be there. */
static bool copy_by_elements(Lower *L, TlOp *op, Smem *m, View *v, bool masked,
                             int64_t n) {
  unsigned b = tl_type_bitwidth(m->elem);
  if (b < 8)
    return lw_fail(
        L, op,
        "copies of sub-byte elements without 4, 8 or 16-byte chunks that "
        "are contiguous and aligned on both sides and spread evenly over "
        "the block's threads");
  const TlSharedLayout *sl = &m->layout;
  int rank = sl->rank;
  TlValue *off[TL_LAYOUT_MAX_RANK], *zero[TL_LAYOUT_MAX_RANK],
      *idx[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    off[d] = lw_to_i64(L, lw_scalar(L, tl_op_operand(op, 2 + (unsigned)d)));
    zero[d] = lw_cst(L, lw_i64(L), 0);
  }
  TlType *mem = tl_type_int(L->ctx, b, false);
  TlValue *tid = tl_arith_exti(&L->b, L->tid, lw_i64(L));
  int64_t T = L->threads;
  for (int64_t k = 0; k * T < n; k++) {
    TlValue *e =
        k ? tl_arith_addi(&L->b, tid, lw_cst(L, lw_i64(L), k * T)) : tid;
    TlBuilder outside = L->b;
    bool ragged = (k + 1) * T > n;
    if (ragged)
      outside = lw_open_guard(
          L, tl_arith_cmpi(&L->b, "lt", e, lw_cst(L, lw_i64(L), n)));
    unravel(L, e, sl, idx);
    TlValue *bitoff, *src = elem_addr(L, v, off, idx, &bitoff), *x;
    if (masked) {
      TlOp *nif = lw_scf_if(L, in_view(L, v, off, idx), 1, &mem);
      TlBuilder saved = L->b;
      TlBlock *then = tl_block_create(L->module),
              *other = tl_block_create(L->module);
      tl_region_append_block(tl_op_region(nif, 0), then);
      tl_region_append_block(tl_op_region(nif, 1), other);
      tl_builder_set_end(&L->b, then);
      TlValue *ld = lw_load(L, src, mem, 0);
      tl_build(&L->b, TL_OP_SCF_YIELD, 1, &ld, 0, NULL);
      tl_builder_set_end(&L->b, other);
      TlValue *z = lw_cst(L, mem, 0);
      tl_build(&L->b, TL_OP_SCF_YIELD, 1, &z, 0, NULL);
      L->b = saved;
      x = tl_op_result(nif, 0);
    } else {
      x = lw_load(L, src, mem, 0);
    }
    lw_store(L, x, lw_smem_addr(L, m, zero, idx), 0);
    if (ragged)
      lw_close_guard(L, outside);
  }
  return true;
}

/* One cp.async of cb bytes: ops are the shared destination, the global
 * source and, for a masked copy, the source's size in bytes (i32); hint,
 * when not NULL, the tl.copy_async's `cache` (the L2 eviction priority). */
static void cp_async(Lower *L, unsigned nops, TlValue *const *ops, unsigned cb,
                     TlAttr *hint) {
  TlOp *op = tl_build(&L->b, TL_OP_SIMT_CP_ASYNC, nops, ops, 0, NULL);
  tl_op_set_attr(op, "size", lw_int(L, cb));
  tl_op_set_attr(op, "cache", lw_str(L, cb == 16 ? "cg" : "ca"));
  if (hint)
    tl_op_set_attr(op, "l2_hint", hint);
}

/* tl.copy_async: the tile in chunks of w elements in row-major order,
 * chunk c copied by thread c % T with one cp.async (consecutive threads
 * read consecutive global chunks); a chunk of 3, 5, 6 or 7-bit elements
 * with one cp.async per piece. */
bool lw_lower_copy_async(Lower *L, TlOp *op) {
  Smem *m = lw_smem_of(L, tl_op_operand(op, 0));
  View *v = lw_view_of(L, tl_op_operand(op, 1));
  if (!m || !v)
    return lw_fail(L, op,
                   "copies between tensors not made by tl.alloc_shared and "
                   "tl.view_global");
  bool masked = tl_op_attr(op, "masked") != NULL;
  unsigned b = tl_type_bitwidth(m->elem);
  if (b > 8 && 32 % b && b != 64)
    return lw_fail(L, op,
                   "copies of elements other than 1 to 8, 16, 32 or 64 bits");
  const TlSharedLayout *sl = &m->layout;
  int rank = sl->rank;
  int64_t n = 1;
  for (int d = 0; d < rank; d++)
    n *= sl->shape[d];
  unsigned cb = 0;
  int64_t w = copy_width(L, op, m, n, &cb);
  if (!w)
    return copy_by_elements(L, op, m, v, masked, n);
  int64_t pieces = w * b / 8 / cb;
  /* A masked chunk must lie wholly before the view or start in it. */
  if (masked && lw_offset_div(L, tl_op_operand(op, 1 + (unsigned)rank)) % w)
    return copy_by_elements(L, op, m, v, masked, n);
  /* ... and, for elements of 3, 5, 6 or 7 bits, the view's last column
   * must end on a byte boundary (the copy's zero fill is by bytes). */
  if (masked && b < 8 && 8 % b && last_dim_div(L, tl_op_operand(op, 1)) * b % 8)
    return lw_fail(
        L, op,
        "masked copies of 3, 5, 6 or 7-bit elements whose view's last "
        "dimension is not known to end on a byte boundary (a multiple of 8 "
        "elements, or of 4 for 6-bit ones)");
  TlValue *off[TL_LAYOUT_MAX_RANK], *zero[TL_LAYOUT_MAX_RANK],
      *idx[TL_LAYOUT_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    off[d] = lw_to_i64(L, lw_scalar(L, tl_op_operand(op, 2 + (unsigned)d)));
    zero[d] = lw_cst(L, lw_i64(L), 0);
  }
  TlValue *first = tl_arith_muli(&L->b, tl_arith_exti(&L->b, L->tid, lw_i64(L)),
                                 lw_cst(L, lw_i64(L), w));
  /* Fewer chunks than threads: threads 0 .. n / w - 1 copy one each. */
  bool few = n / w < L->threads;
  TlBuilder outside = L->b;
  if (few)
    outside = lw_open_guard(
        L, tl_arith_cmpi(&L->b, "lt", first, lw_cst(L, lw_i64(L), n)));
  for (int64_t k = 0; k < (few ? 1 : n / w / L->threads); k++) {
    /* Element e = (tid + k * T) * w, unravelled row-major. */
    TlValue *e =
        tl_arith_addi(&L->b, first, lw_cst(L, lw_i64(L), k * L->threads * w));
    unravel(L, e, sl, idx);
    TlValue *bitoff, *dst = lw_smem_addr(L, m, zero, idx);
    if (!masked) {
      TlValue *src = elem_addr(L, v, off, idx, &bitoff);
      for (int64_t j = 0; j < pieces; j++) {
        TlValue *step = lw_cst(L, lw_i64(L), j * cb);
        TlValue *ops[2] = {j ? lw_ptr_add(L, dst, step) : dst,
                           j ? lw_ptr_add(L, src, step) : src};
        cp_async(L, 2, ops, cb, tl_op_attr(op, "cache"));
      }
      continue;
    }
    /* Masked: a chunk whose first element lies in the view reads the
     * elements up to the view's last column and zero-fills the rest (the
     * source size); any other chunk reads nothing and fills zeros, with
     * the view's first element as its (unread) source. A piece of a chunk
     * past the view's last column is such a chunk too. */
    TlValue *ok = in_view(L, v, off, idx);
    TlValue *pos = tl_arith_addi(&L->b, off[rank - 1], idx[rank - 1]);
    TlValue *left = tl_arith_subi(&L->b, v->dims[rank - 1], pos);
    TlValue *cnt = tl_arith_mini(&L->b, left, lw_cst(L, lw_i64(L), w));
    cnt = tl_arith_select(&L->b, ok, cnt, lw_cst(L, lw_i64(L), 0));
    TlValue *bits = tl_arith_muli(&L->b, cnt, lw_cst(L, lw_i64(L), b));
    TlValue *bytes = tl_arith_divi(&L->b, bits, lw_cst(L, lw_i64(L), 8));
    /* The chunk's address as an unmasked copy computes it (affine in the
     * offsets, so the loop's strength reduction serves both), or the
     * view's first element: one select of the address, none of its
     * indices. */
    TlValue *unread = elem_addr(L, v, zero, zero, &bitoff);
    TlValue *src = tl_arith_select(&L->b, ok, elem_addr(L, v, off, idx, &bitoff), unread);
    for (int64_t j = 0; j < pieces; j++) {
      TlValue *bj = bytes, *sj = src, *dj = dst;
      if (j) {
        TlValue *step = lw_cst(L, lw_i64(L), j * cb);
        bj = tl_arith_maxi(&L->b, tl_arith_subi(&L->b, bytes, step),
                           lw_cst(L, lw_i64(L), 0));
        TlValue *some = tl_arith_cmpi(&L->b, "gt", bj, lw_cst(L, lw_i64(L), 0));
        sj = tl_arith_select(&L->b, some, lw_ptr_add(L, src, step), unread);
        dj = lw_ptr_add(L, dst, step);
      }
      if (pieces > 1)
        bj = tl_arith_mini(&L->b, bj, lw_cst(L, lw_i64(L), cb));
      TlValue *ops[3] = {dj, sj, tl_arith_trunci(&L->b, bj, lw_i32(L))};
      cp_async(L, 3, ops, cb, tl_op_attr(op, "cache"));
    }
  }
  if (few)
    lw_close_guard(L, outside);
  return true;
}
