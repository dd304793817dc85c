/* The tl dialect's types and the #tl.layout attribute.
 *
 * Every tensor type keeps its parameters as uniqued attributes, so types
 * compare with ==:
 *   param 0: the dimensions, an array of i64 (-1 = dynamic)
 *   param 1: the element type (a type attribute)
 *   param 2: global: strided (bool); shared: column_major (bool);
 *            reg: the layout (#tl.layout)
 *   param 3: shared only: the swizzle, an array [B, M, S] (empty if none)
 * The layout attribute stores the canonical TlLayout struct as its payload
 * (canonical layouts are zero-padded, so bytewise uniquing is structural
 * equality). */
#include "tl/tl.h"
#include "tl_internal.h"

#include <string.h>

/*===--- #tl.layout ------------------------------------------------------===*/

/* Maps a byte offset inside an attribute body back to a source location. */
TlLoc tl_text_loc(TlLoc start, const char *text, size_t off) {
  TlLoc l = start;
  for (size_t i = 0; i < off; i++) {
    if (text[i] == '\n') {
      l.line++;
      l.col = 1;
    } else {
      l.col++;
    }
  }
  return l;
}

static TlAttr *layout_parse(TlParser *p, const TlAttrDef *def) {
  const char *text;
  size_t len;
  TlLoc loc;
  if (TL_FAILED(tl_parse_raw_body(p, &text, &len, &loc)))
    return NULL;
  TlLayout l;
  TlErr err;
  size_t off = 0;
  if (!tl_layout_parse(&l, text, len, &err, &off)) {
    tl_parser_error(p, tl_parser_raw_loc(p, off), "invalid layout: %s",
                    err.msg);
    return NULL;
  }
  return tl_layout_attr_get(tl_parser_context(p), &l);
}

static void layout_print(const TlAttr *a, TlStr *out) {
  tl_str_putc(out, '<');
  tl_layout_print(tl_layout_attr_value(a), out);
  tl_str_putc(out, '>');
}

const TlAttrDef tl_layout_attr_def = {
    .name = "tl.layout",
    .parse = layout_parse,
    .print = layout_print,
};

TlAttr *tl_layout_attr_get(TlContext *ctx, const TlLayout *layout) {
  /* Uniquing is bytewise, so only the canonical form may be stored. */
  TlLayout l;
  if (!layout)
    return NULL;
  l = *layout;
  if (!tl_layout_canonicalize(&l, NULL))
    return NULL;
  return tl_attr_dialect(ctx, &tl_layout_attr_def, 0, NULL, &l, sizeof l);
}

const TlLayout *tl_layout_attr_value(const TlAttr *a) {
  if (!a || tl_attr_kind(a) != TL_ATTR_DIALECT ||
      tl_attr_def(a) != &tl_layout_attr_def)
    return NULL;
  return tl_attr_blob(a, NULL);
}

/*===--- #tl.smem ---------------------------------------------------------===*/

/* A shared-memory layout written out in full: modes, strides, base and
 * swizzle (the text of tl_shared_layout_print without its `shared`
 * prefix): #tl.smem<shape=[16, 16], modes=[16, 16], strides=[1, 16]>. */
static TlAttr *smem_parse(TlParser *p, const TlAttrDef *def) {
  const char *text;
  size_t len;
  TlLoc loc;
  if (TL_FAILED(tl_parse_raw_body(p, &text, &len, &loc)))
    return NULL;
  TlStr full = {0};
  tl_str_puts(&full, "shared<");
  tl_str_putn(&full, text, len);
  tl_str_putc(&full, '>');
  TlSharedLayout l;
  TlErr err;
  size_t off = 0;
  bool ok = tl_shared_layout_parse(&l, full.data, full.len, &err, &off);
  tl_str_free(&full);
  if (!ok) {
    /* Offsets past "shared<" fall inside the body. */
    size_t at = off >= 7 ? off - 7 : 0;
    tl_parser_error(p, tl_parser_raw_loc(p, at < len ? at : len),
                    "invalid shared-memory layout: %s", err.msg);
    return NULL;
  }
  return tl_smem_attr_get(tl_parser_context(p), &l);
}

static void smem_print(const TlAttr *a, TlStr *out) {
  TlStr s = {0};
  tl_shared_layout_print(tl_smem_attr_value(a), &s);
  /* Drop the leading "shared": the body is "<...>". */
  tl_str_puts(out, s.data + 6);
  tl_str_free(&s);
}

const TlAttrDef tl_smem_attr_def = {
    .name = "tl.smem",
    .parse = smem_parse,
    .print = smem_print,
};

TlAttr *tl_smem_attr_get(TlContext *ctx, const TlSharedLayout *layout) {
  if (!layout)
    return NULL;
  /* Canonical layouts are zero-padded: bytewise uniquing is equality. */
  return tl_attr_dialect(ctx, &tl_smem_attr_def, 0, NULL, layout, sizeof *layout);
}

const TlSharedLayout *tl_smem_attr_value(const TlAttr *a) {
  if (!a || tl_attr_kind(a) != TL_ATTR_DIALECT || tl_attr_def(a) != &tl_smem_attr_def)
    return NULL;
  return tl_attr_blob(a, NULL);
}

/*===--- Type helpers ----------------------------------------------------===*/

extern const TlTypeDef tl_ptr_type_def, tl_global_type_def, tl_shared_type_def,
    tl_reg_type_def, tl_tensormap_type_def, tl_ring_type_def;

static TlAttr *dims_attr(TlContext *ctx, unsigned rank, const int64_t *dims) {
  TlAttr *elems[TL_LAYOUT_MAX_RANK];
  TlType *i64 = tl_type_int(ctx, 64, true);
  for (unsigned i = 0; i < rank; i++)
    elems[i] = tl_attr_int(ctx, i64, dims[i]);
  return tl_attr_array(ctx, rank, elems);
}

static bool dims_ok(unsigned rank, const int64_t *dims, bool dynamic_ok) {
  if (!dims || rank < 1 || rank > TL_LAYOUT_MAX_RANK)
    return false;
  for (unsigned i = 0; i < rank; i++)
    if (!(dims[i] >= 1 && dims[i] <= TL_LAYOUT_MAX_SIZE) &&
        !(dynamic_ok && dims[i] == -1))
      return false;
  return true;
}

/* The element layout of a shared tile; fails with the layout library's
 * reason (a size too large, a bad swizzle). */
static bool shared_layout(TlSharedLayout *out, unsigned rank,
                          const int64_t *dims, bool column_major, int b, int m,
                          int s, TlErr *err) {
  bool ok = column_major
                ? tl_shared_layout_column_major(out, (int)rank, dims, err)
                : tl_shared_layout_row_major(out, (int)rank, dims, err);
  return ok && (b == 0 || tl_shared_layout_swizzle(out, out, b, m, s, err));
}

/* The swizzle parameters the type syntax allows (B == 0: none, and then M
 * and S are 0 too), and a valid layout. */
static bool shared_params_ok(unsigned rank, const int64_t *dims,
                             bool column_major, int b, int m, int s,
                             TlErr *err) {
  if (b == 0 ? (m != 0 || s != 0)
             : (b < 1 || b > 8 || m < 0 || m > 16 || s < b || s > 16))
    return tl_err(err,
                  "invalid swizzle<%d, %d, %d>: need 1 <= B <= 8, "
                  "0 <= M <= 16 and B <= S <= 16",
                  b, m, s);
  TlSharedLayout l;
  return shared_layout(&l, rank, dims, column_major, b, m, s, err);
}

TlType *tl_ptr_type_get(TlContext *ctx, TlType *elem) {
  if (!tl_type_is_scalar(elem))
    return NULL;
  TlAttr *p = tl_attr_type(ctx, elem);
  return tl_type_dialect(ctx, &tl_ptr_type_def, 1, &p);
}

TlType *tl_global_type_get(TlContext *ctx, unsigned rank, const int64_t *dims,
                           TlType *elem, bool strided) {
  if (!tl_type_is_scalar(elem) || !dims_ok(rank, dims, true))
    return NULL;
  TlAttr *p[3] = {dims_attr(ctx, rank, dims), tl_attr_type(ctx, elem),
                  tl_attr_bool(ctx, strided)};
  return tl_type_dialect(ctx, &tl_global_type_def, 3, p);
}

TlType *tl_shared_type_get(TlContext *ctx, unsigned rank, const int64_t *dims,
                           TlType *elem, bool column_major, int b, int m,
                           int s) {
  if (!tl_type_is_scalar(elem) || !dims_ok(rank, dims, false) ||
      !shared_params_ok(rank, dims, column_major, b, m, s, NULL))
    return NULL;
  TlType *i64 = tl_type_int(ctx, 64, true);
  TlAttr *sw[3] = {tl_attr_int(ctx, i64, b), tl_attr_int(ctx, i64, m),
                   tl_attr_int(ctx, i64, s)};
  TlAttr *p[4] = {dims_attr(ctx, rank, dims), tl_attr_type(ctx, elem),
                  tl_attr_bool(ctx, column_major),
                  tl_attr_array(ctx, b ? 3 : 0, sw)};
  return tl_type_dialect(ctx, &tl_shared_type_def, 4, p);
}

TlType *tl_shared_type_get_layout(TlContext *ctx, unsigned rank,
                                  const int64_t *dims, TlType *elem,
                                  const TlSharedLayout *layout) {
  if (!tl_type_is_scalar(elem) || !dims_ok(rank, dims, false) || !layout ||
      (unsigned)layout->rank != rank)
    return NULL;
  for (unsigned i = 0; i < rank; i++)
    if (layout->shape[i] != dims[i])
      return NULL;
  TlAttr *p[5] = {dims_attr(ctx, rank, dims), tl_attr_type(ctx, elem),
                  tl_attr_bool(ctx, false), tl_attr_array(ctx, 0, NULL),
                  tl_smem_attr_get(ctx, layout)};
  return tl_type_dialect(ctx, &tl_shared_type_def, 5, p);
}

const TlSharedLayout *tl_shared_type_explicit_layout(const TlType *t) {
  if (tl_tensor_kind(t) != TL_TENSOR_SHARED || tl_type_num_params(t) < 5)
    return NULL;
  return tl_smem_attr_value(tl_type_param(t, 4));
}

TlType *tl_reg_type_get(TlContext *ctx, unsigned rank, const int64_t *dims,
                        TlType *elem, const TlLayout *layout) {
  if (!tl_type_is_scalar(elem) || !dims_ok(rank, dims, false) || !layout ||
      (unsigned)layout->rank != rank)
    return NULL;
  for (unsigned i = 0; i < rank; i++)
    if (layout->shape[i] != dims[i])
      return NULL;
  TlAttr *la = tl_layout_attr_get(ctx, layout);
  if (!la)
    return NULL;
  TlAttr *p[3] = {dims_attr(ctx, rank, dims), tl_attr_type(ctx, elem), la};
  return tl_type_dialect(ctx, &tl_reg_type_def, 3, p);
}

bool tl_type_is_ptr(const TlType *t) {
  return t && tl_type_kind(t) == TL_TYPE_DIALECT &&
         tl_type_def(t) == &tl_ptr_type_def;
}

TlTensorKind tl_tensor_kind(const TlType *t) {
  if (!t || tl_type_kind(t) != TL_TYPE_DIALECT)
    return TL_TENSOR_NONE;
  const TlTypeDef *d = tl_type_def(t);
  return d == &tl_global_type_def   ? TL_TENSOR_GLOBAL
         : d == &tl_shared_type_def ? TL_TENSOR_SHARED
         : d == &tl_reg_type_def    ? TL_TENSOR_REG
                                    : TL_TENSOR_NONE;
}

TlType *tl_tensor_elem(const TlType *t) {
  if (tl_type_is_ptr(t))
    return tl_attr_type_value(tl_type_param(t, 0));
  if (tl_tensor_kind(t) == TL_TENSOR_NONE)
    return NULL;
  return tl_attr_type_value(tl_type_param(t, 1));
}

unsigned tl_tensor_rank(const TlType *t) {
  if (tl_tensor_kind(t) == TL_TENSOR_NONE)
    return 0;
  return tl_attr_array_size(tl_type_param(t, 0));
}

int64_t tl_tensor_dim(const TlType *t, unsigned i) {
  if (i >= tl_tensor_rank(t))
    return 0;
  return tl_attr_int_value(tl_attr_array_elem(tl_type_param(t, 0), i));
}

int64_t tl_tensor_num_elements(const TlType *t) {
  unsigned rank = tl_tensor_rank(t);
  int64_t n = rank ? 1 : 0;
  for (unsigned i = 0; i < rank; i++) {
    int64_t d = tl_tensor_dim(t, i);
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      return -1;
  }
  return n;
}

bool tl_global_type_strided(const TlType *t) {
  return tl_tensor_kind(t) == TL_TENSOR_GLOBAL &&
         tl_attr_int_value(tl_type_param(t, 2)) != 0;
}

const TlLayout *tl_reg_layout(const TlType *t) {
  if (tl_tensor_kind(t) != TL_TENSOR_REG)
    return NULL;
  return tl_layout_attr_value(tl_type_param(t, 2));
}

bool tl_shared_type_column_major(const TlType *t) {
  return tl_tensor_kind(t) == TL_TENSOR_SHARED &&
         tl_attr_int_value(tl_type_param(t, 2)) != 0;
}

void tl_shared_type_swizzle(const TlType *t, int *b, int *m, int *s) {
  TlAttr *sw =
      tl_tensor_kind(t) == TL_TENSOR_SHARED ? tl_type_param(t, 3) : NULL;
  bool has = sw && tl_attr_array_size(sw) == 3;
  *b = has ? (int)tl_attr_int_value(tl_attr_array_elem(sw, 0)) : 0;
  *m = has ? (int)tl_attr_int_value(tl_attr_array_elem(sw, 1)) : 0;
  *s = has ? (int)tl_attr_int_value(tl_attr_array_elem(sw, 2)) : 0;
}

bool tl_shared_type_layout(const TlType *t, TlSharedLayout *out, TlErr *err) {
  if (tl_tensor_kind(t) != TL_TENSOR_SHARED)
    return tl_err(err, "not a !tl.shared type");
  const TlSharedLayout *explicit_layout = tl_shared_type_explicit_layout(t);
  if (explicit_layout) {
    *out = *explicit_layout;
    return true;
  }
  int64_t dims[TL_LAYOUT_MAX_RANK];
  unsigned rank = tl_tensor_rank(t);
  for (unsigned i = 0; i < rank; i++)
    dims[i] = tl_tensor_dim(t, i);
  int b, m, s;
  tl_shared_type_swizzle(t, &b, &m, &s);
  return shared_layout(out, rank, dims, tl_shared_type_column_major(t), b, m, s,
                       err);
}

/*===--- Parsing and printing --------------------------------------------===*/

/* `<DxDxT` (the opening bracket included); dynamic dims only if allowed. */
static TlResult parse_shape(TlParser *p, bool dynamic_ok, TlDimVec *dims,
                            TlType **elem, TlLoc *loc) {
  if (TL_FAILED(tl_parse_punct(p, "<")))
    return TL_FAILURE;
  *loc = tl_parser_loc(p);
  if (TL_FAILED(tl_parse_shape_and_type(p, dims, elem)))
    return TL_FAILURE;
  if (dims->len == 0 || dims->len > TL_LAYOUT_MAX_RANK) {
    tl_parser_error(p, *loc, "a tensor has 1 to %d dimensions, not %zu",
                    TL_LAYOUT_MAX_RANK, dims->len);
    return TL_FAILURE;
  }
  for (size_t i = 0; i < dims->len; i++) {
    if (dims->data[i] == -1 && !dynamic_ok) {
      tl_parser_error(p, *loc,
                      "dynamic dimensions are allowed only in "
                      "!tl.global");
      return TL_FAILURE;
    }
    if (dims->data[i] == 0 || dims->data[i] > TL_LAYOUT_MAX_SIZE) {
      tl_parser_error(p, *loc, "dimension %zu must be between 1 and %d", i,
                      TL_LAYOUT_MAX_SIZE);
      return TL_FAILURE;
    }
  }
  if (!tl_type_is_scalar(*elem)) {
    tl_parser_error(p, *loc, "the element type must be a scalar type");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

static void print_shape(const TlType *t, TlStr *out) {
  tl_str_putc(out, '<');
  for (unsigned i = 0; i < tl_tensor_rank(t); i++) {
    int64_t d = tl_tensor_dim(t, i);
    if (d < 0)
      tl_str_puts(out, "?x");
    else
      tl_str_printf(out, "%lldx", (long long)d);
  }
  tl_type_print(tl_tensor_elem(t), out);
}

static TlType *ptr_parse(TlParser *p, const TlTypeDef *def) {
  TlType *elem;
  TlLoc loc = tl_parser_loc(p);
  if (TL_FAILED(tl_parse_punct(p, "<")) || TL_FAILED(tl_parse_type(p, &elem)) ||
      TL_FAILED(tl_parse_punct(p, ">")))
    return NULL;
  TlType *t = tl_ptr_type_get(tl_parser_context(p), elem);
  if (!t)
    tl_parser_error(p, loc, "!tl.ptr needs a scalar element type");
  return t;
}

static void ptr_print(const TlType *t, TlStr *out) {
  tl_str_putc(out, '<');
  tl_type_print(tl_tensor_elem(t), out);
  tl_str_putc(out, '>');
}

static TlType *global_parse(TlParser *p, const TlTypeDef *def) {
  TlDimVec dims = {0};
  TlType *elem, *t = NULL;
  TlLoc loc;
  bool strided = false;
  if (TL_FAILED(parse_shape(p, true, &dims, &elem, &loc)))
    goto out;
  if (tl_parse_optional_punct(p, ",")) {
    if (TL_FAILED(tl_parse_keyword(p, "strided")))
      goto out;
    strided = true;
  }
  if (TL_FAILED(tl_parse_punct(p, ">")))
    goto out;
  t = tl_global_type_get(tl_parser_context(p), (unsigned)dims.len, dims.data,
                         elem, strided);
out:
  tl_vec_free(&dims);
  return t;
}

static void global_print(const TlType *t, TlStr *out) {
  print_shape(t, out);
  if (tl_global_type_strided(t))
    tl_str_puts(out, ", strided");
  tl_str_putc(out, '>');
}

static TlType *shared_parse(TlParser *p, const TlTypeDef *def) {
  TlDimVec dims = {0};
  TlType *elem, *t = NULL;
  TlLoc loc;
  bool column = false, order = false;
  int64_t sw[3] = {0, 0, 0};
  TlLoc swloc = {0}, explicit_loc = {0};
  TlAttr *explicit_attr = NULL;
  if (TL_FAILED(parse_shape(p, false, &dims, &elem, &loc)))
    goto out;
  while (tl_parse_optional_punct(p, ",")) {
    TlLoc kl = tl_parser_loc(p);
    if (explicit_attr) {
      tl_parser_error(p, kl,
                      "an explicit #tl.smem layout stands alone: no "
                      "row_major, column_major or swizzle with it");
      goto out;
    }
    bool col = tl_parse_optional_keyword(p, "column_major");
    if (col || tl_parse_optional_keyword(p, "row_major")) {
      if (order) {
        tl_parser_error(p, kl, "the element order is given twice");
        goto out;
      }
      order = true;
      column = col;
    } else if (tl_parse_optional_keyword(p, "swizzle")) {
      if (sw[0]) {
        tl_parser_error(p, kl, "the swizzle is given twice");
        goto out;
      }
      swloc = kl;
      if (TL_FAILED(tl_parse_punct(p, "<")) ||
          TL_FAILED(tl_parse_int(p, &sw[0])) ||
          TL_FAILED(tl_parse_punct(p, ",")) ||
          TL_FAILED(tl_parse_int(p, &sw[1])) ||
          TL_FAILED(tl_parse_punct(p, ",")) ||
          TL_FAILED(tl_parse_int(p, &sw[2])) ||
          TL_FAILED(tl_parse_punct(p, ">")))
        goto out;
      /* B == 0 would read as "no swizzle" and print as nothing. */
      if (sw[0] < 1 || sw[0] > 8 || sw[1] < 0 || sw[1] > 16 || sw[2] < sw[0] ||
          sw[2] > 16) {
        tl_parser_error(p, kl,
                        "invalid swizzle<%lld, %lld, %lld>: need 1 <= "
                        "B <= 8, 0 <= M <= 16 and B <= S <= 16",
                        (long long)sw[0], (long long)sw[1], (long long)sw[2]);
        goto out;
      }
    } else if (!order && !sw[0] && !explicit_attr &&
               !tl_parser_peek_identifier(p, NULL)) {
      /* An explicit layout: #tl.smem<...> (or an alias of one). */
      if (TL_FAILED(tl_parse_attr(p, &explicit_attr)))
        goto out;
      if (!tl_smem_attr_value(explicit_attr)) {
        tl_parser_error(p, kl, "expected a #tl.smem shared-memory layout");
        goto out;
      }
      explicit_loc = kl;
    } else {
      tl_parser_error(p, kl,
                      order || sw[0]
                          ? "an explicit #tl.smem layout stands alone: no "
                            "row_major, column_major or swizzle with it"
                          : "expected 'row_major', 'column_major', "
                            "'swizzle<B, M, S>' or a #tl.smem layout");
      goto out;
    }
  }
  if (TL_FAILED(tl_parse_punct(p, ">")))
    goto out;
  if (explicit_attr) {
    const TlSharedLayout *l = tl_smem_attr_value(explicit_attr);
    t = tl_shared_type_get_layout(tl_parser_context(p), (unsigned)dims.len,
                                  dims.data, elem, l);
    if (!t) {
      TlStr ls = {0};
      for (int i = 0; i < l->rank; i++)
        tl_str_printf(&ls, "%s%lld", i ? ", " : "", (long long)l->shape[i]);
      tl_parser_error(p, explicit_loc, "the layout has shape [%s], which is not "
                                       "the tile's",
                      tl_str_cstr(&ls));
      tl_str_free(&ls);
    }
    goto out;
  }
  TlErr err;
  if (!shared_params_ok((unsigned)dims.len, dims.data, column, (int)sw[0],
                        (int)sw[1], (int)sw[2], &err)) {
    tl_parser_error(p, sw[0] ? swloc : loc, "invalid shared-memory tile: %s",
                    err.msg);
    goto out;
  }
  t = tl_shared_type_get(tl_parser_context(p), (unsigned)dims.len, dims.data,
                         elem, column, (int)sw[0], (int)sw[1], (int)sw[2]);
out:
  tl_vec_free(&dims);
  return t;
}

static void shared_print(const TlType *t, TlStr *out) {
  print_shape(t, out);
  if (tl_shared_type_explicit_layout(t)) {
    tl_str_puts(out, ", ");
    tl_attr_print(tl_type_param(t, 4), out);
    tl_str_putc(out, '>');
    return;
  }
  if (tl_shared_type_column_major(t))
    tl_str_puts(out, ", column_major");
  int b, m, s;
  tl_shared_type_swizzle(t, &b, &m, &s);
  if (b)
    tl_str_printf(out, ", swizzle<%d, %d, %d>", b, m, s);
  tl_str_putc(out, '>');
}

static TlType *reg_parse(TlParser *p, const TlTypeDef *def) {
  TlDimVec dims = {0};
  TlType *elem, *t = NULL;
  TlLoc loc;
  TlAttr *a;
  if (TL_FAILED(parse_shape(p, false, &dims, &elem, &loc)) ||
      TL_FAILED(tl_parse_punct(p, ",")))
    goto out;
  TlLoc al = tl_parser_loc(p);
  if (TL_FAILED(tl_parse_attr(p, &a)) || TL_FAILED(tl_parse_punct(p, ">")))
    goto out;
  const TlLayout *l = tl_layout_attr_value(a);
  if (!l) {
    tl_parser_error(p, al, "expected a #tl.layout attribute");
    goto out;
  }
  t = tl_reg_type_get(tl_parser_context(p), (unsigned)dims.len, dims.data, elem,
                      l);
  if (!t) {
    TlStr want = {0};
    tl_layout_print(l, &want);
    TlStr shape = {0};
    for (size_t i = 0; i < dims.len; i++)
      tl_str_printf(&shape, "%s%lld", i ? ", " : "", (long long)dims.data[i]);
    TlStr lshape = {0};
    for (int i = 0; i < l->rank; i++)
      tl_str_printf(&lshape, "%s%d", i ? ", " : "", l->shape[i]);
    tl_parser_error(p, al, "layout %s has shape [%s], but the tile is [%s]",
                    tl_str_cstr(&want), tl_str_cstr(&lshape),
                    tl_str_cstr(&shape));
    tl_str_free(&want);
    tl_str_free(&shape);
    tl_str_free(&lshape);
  }
out:
  tl_vec_free(&dims);
  return t;
}

static void reg_print(const TlType *t, TlStr *out) {
  print_shape(t, out);
  tl_str_puts(out, ", ");
  tl_attr_print(tl_type_param(t, 2), out);
  tl_str_putc(out, '>');
}

/*===--- !tl.tensormap ----------------------------------------------------===*/

/* !tl.tensormap<?x?xT, box = [B0, B1], swizzle = W>. Parameters:
 *   param 0: the rank (i64)
 *   param 1: the element type (a type attribute)
 *   param 2: the box, outermost first (an array of i64)
 *   param 3: the swizzle span in bytes (i64: 0, 32, 64 or 128) */

bool tl_tensormap_type_check(unsigned rank, const TlType *elem,
                             const int64_t *box, unsigned swizzle, TlErr *err) {
  if (rank < 1 || rank > 3)
    return tl_err(err, "a tensor map has 1 to 3 dimensions, not %u", rank);
  unsigned bits = elem && tl_type_is_scalar(elem) ? tl_type_bitwidth(elem) : 0;
  if ((bits != 8 && bits != 16 && bits != 32 && bits != 64) ||
      tl_type_is_bool(elem))
    return tl_err(err, "a tensor map's elements are 1, 2, 4 or 8 bytes");
  for (unsigned i = 0; i < rank; i++)
    if (box[i] < 1 || box[i] > 256)
      return tl_err(err, "box dimension %u is %lld; a box has 1 to 256 "
                         "elements a dimension",
                    i, (long long)box[i]);
  int64_t inner = box[rank - 1] * (bits / 8);
  if (inner % 16)
    return tl_err(err, "the box's inner dimension is %lld bytes, not a "
                       "multiple of 16",
                  (long long)inner);
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return tl_err(err, "the swizzle is 0 (none), 32, 64 or 128 bytes, not %u",
                  swizzle);
  if (swizzle && inner != swizzle)
    return tl_err(err, "the box's inner dimension is %lld bytes; under a "
                       "%u-byte swizzle it must be exactly %u",
                  (long long)inner, swizzle, swizzle);
  return true;
}

TlType *tl_tensormap_type_get(TlContext *ctx, unsigned rank, TlType *elem,
                              const int64_t *box, unsigned swizzle) {
  if (!box || !tl_tensormap_type_check(rank, elem, box, swizzle, NULL))
    return NULL;
  TlType *i64 = tl_type_int(ctx, 64, true);
  TlAttr *p[4] = {tl_attr_int(ctx, i64, rank), tl_attr_type(ctx, elem),
                  dims_attr(ctx, rank, box), tl_attr_int(ctx, i64, swizzle)};
  return tl_type_dialect(ctx, &tl_tensormap_type_def, 4, p);
}

bool tl_type_is_tensormap(const TlType *t) {
  return t && tl_type_kind(t) == TL_TYPE_DIALECT &&
         tl_type_def(t) == &tl_tensormap_type_def;
}

unsigned tl_tensormap_rank(const TlType *t) {
  return tl_type_is_tensormap(t)
             ? (unsigned)tl_attr_int_value(tl_type_param(t, 0))
             : 0;
}

TlType *tl_tensormap_elem(const TlType *t) {
  return tl_type_is_tensormap(t) ? tl_attr_type_value(tl_type_param(t, 1))
                                 : NULL;
}

int64_t tl_tensormap_box(const TlType *t, unsigned i) {
  if (i >= tl_tensormap_rank(t))
    return 0;
  return tl_attr_int_value(tl_attr_array_elem(tl_type_param(t, 2), i));
}

unsigned tl_tensormap_swizzle(const TlType *t) {
  return tl_type_is_tensormap(t)
             ? (unsigned)tl_attr_int_value(tl_type_param(t, 3))
             : 0;
}

/* TMA writes the box row after row, the innermost dimension contiguous,
 * and under a swizzle of W bytes XORs byte-address bits [4, 4 + log2(W/16))
 * with bits [7, 7 + log2(W/16)) (docs/simt.md). In element offsets of e
 * bytes that is CuTe's swizzle<log2(W/16), 4 - log2(e), 3>: the B bits
 * at [M + S, M + S + B) = [7 - log2(e), ...) XORed into [M, M + B) =
 * [4 - log2(e), ...). It equals the address form when the box starts at a
 * multiple of the 1024-byte pattern (the lowering places it so). */
bool tl_tensormap_box_layout(const TlType *t, TlSharedLayout *out) {
  unsigned rank = tl_tensormap_rank(t);
  if (!rank)
    return false;
  int64_t box[3];
  for (unsigned i = 0; i < rank; i++)
    box[i] = tl_tensormap_box(t, i);
  unsigned sw = tl_tensormap_swizzle(t), eb = tl_type_bitwidth(tl_tensormap_elem(t)) / 8;
  int b = sw == 32 ? 1 : sw == 64 ? 2 : sw == 128 ? 3 : 0;
  int le = eb == 1 ? 0 : eb == 2 ? 1 : eb == 4 ? 2 : 3;
  return shared_layout(out, rank, box, false, b, b ? 4 - le : 0, b ? 3 : 0,
                       NULL);
}

static TlType *tensormap_parse(TlParser *p, const TlTypeDef *def) {
  TlDimVec dims = {0};
  TlType *elem, *t = NULL;
  TlLoc loc = tl_parser_loc(p);
  int64_t box[8] = {0}, sw = 0;
  size_t nbox = 0;
  if (TL_FAILED(tl_parse_punct(p, "<")))
    goto out;
  loc = tl_parser_loc(p);
  if (TL_FAILED(tl_parse_shape_and_type(p, &dims, &elem)))
    goto out;
  for (size_t i = 0; i < dims.len; i++)
    if (dims.data[i] != -1) {
      tl_parser_error(p, loc, "a tensor map's sizes are known at launch "
                              "only: write them as ?");
      goto out;
    }
  if (TL_FAILED(tl_parse_punct(p, ",")) ||
      TL_FAILED(tl_parse_keyword(p, "box")) ||
      TL_FAILED(tl_parse_punct(p, "=")) || TL_FAILED(tl_parse_punct(p, "[")))
    goto out;
  TlLoc boxloc = tl_parser_loc(p);
  do {
    int64_t v;
    if (TL_FAILED(tl_parse_int(p, &v)))
      goto out;
    if (nbox < 8)
      box[nbox] = v;
    nbox++;
  } while (tl_parse_optional_punct(p, ","));
  if (TL_FAILED(tl_parse_punct(p, "]")))
    goto out;
  TlLoc swloc = tl_parser_loc(p);
  if (tl_parse_optional_punct(p, ",")) {
    swloc = tl_parser_loc(p);
    if (TL_FAILED(tl_parse_keyword(p, "swizzle")) ||
        TL_FAILED(tl_parse_punct(p, "=")) || TL_FAILED(tl_parse_int(p, &sw)))
      goto out;
  }
  if (TL_FAILED(tl_parse_punct(p, ">")))
    goto out;
  if (nbox != dims.len) {
    tl_parser_error(p, boxloc,
                    "the box has %zu dimensions, but the tensor map has %zu",
                    nbox, dims.len);
    goto out;
  }
  TlErr err;
  if (sw < 0 || sw > 128 ||
      !tl_tensormap_type_check((unsigned)dims.len, elem, box, (unsigned)sw,
                               &err)) {
    if (sw < 0 || sw > 128)
      tl_err(&err, "the swizzle is 0 (none), 32, 64 or 128 bytes, not %lld",
             (long long)sw);
    bool at_sw = strstr(err.msg, "swizzle") != NULL;
    tl_parser_error(p, at_sw ? swloc : dims.len < 1 || dims.len > 3 ? loc : boxloc,
                    "invalid tensor map: %s", err.msg);
    goto out;
  }
  t = tl_tensormap_type_get(tl_parser_context(p), (unsigned)dims.len, elem,
                            box, (unsigned)sw);
out:
  tl_vec_free(&dims);
  return t;
}

static void tensormap_print(const TlType *t, TlStr *out) {
  tl_str_putc(out, '<');
  for (unsigned i = 0; i < tl_tensormap_rank(t); i++)
    tl_str_puts(out, "?x");
  tl_type_print(tl_tensormap_elem(t), out);
  tl_str_puts(out, ", box = [");
  for (unsigned i = 0; i < tl_tensormap_rank(t); i++)
    tl_str_printf(out, "%s%lld", i ? ", " : "",
                  (long long)tl_tensormap_box(t, i));
  tl_str_putc(out, ']');
  if (tl_tensormap_swizzle(t))
    tl_str_printf(out, ", swizzle = %u", tl_tensormap_swizzle(t));
  tl_str_putc(out, '>');
}

/*===--- !tl.ring ---------------------------------------------------------===*/

/* !tl.ring<stages = S, consumers = C>. Parameters:
 *   param 0: S, the slots (i64, 1..32)
 *   param 1: C, the consumer warps that release each step (i64, 1..32) */

enum { RING_MAX = 32 };

TlType *tl_ring_type_get(TlContext *ctx, int64_t stages, int64_t consumers) {
  if (stages < 1 || stages > RING_MAX || consumers < 1 || consumers > RING_MAX)
    return NULL;
  TlType *i64 = tl_type_int(ctx, 64, true);
  TlAttr *p[2] = {tl_attr_int(ctx, i64, stages), tl_attr_int(ctx, i64, consumers)};
  return tl_type_dialect(ctx, &tl_ring_type_def, 2, p);
}

bool tl_type_is_ring(const TlType *t) {
  return t && tl_type_kind(t) == TL_TYPE_DIALECT &&
         tl_type_def(t) == &tl_ring_type_def;
}

unsigned tl_ring_stages(const TlType *t) {
  return tl_type_is_ring(t) ? (unsigned)tl_attr_int_value(tl_type_param(t, 0))
                            : 0;
}

unsigned tl_ring_consumers(const TlType *t) {
  return tl_type_is_ring(t) ? (unsigned)tl_attr_int_value(tl_type_param(t, 1))
                            : 0;
}

/* `name = N` with N in 1..RING_MAX. */
static bool ring_param(TlParser *p, const char *name, int64_t *v) {
  TlLoc loc = tl_parser_loc(p);
  if (TL_FAILED(tl_parse_keyword(p, name)) ||
      TL_FAILED(tl_parse_punct(p, "=")))
    return false;
  loc = tl_parser_loc(p);
  if (TL_FAILED(tl_parse_int(p, v)))
    return false;
  if (*v < 1 || *v > RING_MAX) {
    tl_parser_error(p, loc, "a ring's %s are 1 to %d, not %lld", name,
                    RING_MAX, (long long)*v);
    return false;
  }
  return true;
}

static TlType *ring_parse(TlParser *p, const TlTypeDef *def) {
  (void)def;
  int64_t s, c;
  if (TL_FAILED(tl_parse_punct(p, "<")) || !ring_param(p, "stages", &s) ||
      TL_FAILED(tl_parse_punct(p, ",")) || !ring_param(p, "consumers", &c) ||
      TL_FAILED(tl_parse_punct(p, ">")))
    return NULL;
  return tl_ring_type_get(tl_parser_context(p), s, c);
}

static void ring_print(const TlType *t, TlStr *out) {
  tl_str_printf(out, "<stages = %u, consumers = %u>", tl_ring_stages(t),
                tl_ring_consumers(t));
}

const TlTypeDef tl_ptr_type_def = {"tl.ptr", ptr_parse, ptr_print};
const TlTypeDef tl_global_type_def = {"tl.global", global_parse, global_print};
const TlTypeDef tl_shared_type_def = {"tl.shared", shared_parse, shared_print};
const TlTypeDef tl_reg_type_def = {"tl.reg", reg_parse, reg_print};
const TlTypeDef tl_tensormap_type_def = {"tl.tensormap", tensormap_parse,
                                         tensormap_print};
const TlTypeDef tl_ring_type_def = {"tl.ring", ring_parse, ring_print};

/* The dtype library's description of an element type: bool, uN/iN, f16,
 * bf16, f32, f64 and the small floats fNeXmY. */
bool tl_type_to_dtype(const TlType *t, TlDType *out) {
  TlDType d = {0, 0, 0, 0};
  if (tl_type_is_bool(t))
    d = tl_dtype_bool();
  else if (tl_type_is_int(t))
    d = tl_type_int_signed(t) ? tl_dtype_int(tl_type_int_width(t))
                              : tl_dtype_uint(tl_type_int_width(t));
  else if (tl_type_is_float(t)) {
    unsigned e = tl_type_float_exp(t), m = tl_type_float_man(t);
    if (e == 5 && m == 10)
      d = tl_dtype_f16();
    else if (e == 8 && m == 7)
      d = tl_dtype_bf16();
    else if (e == 8 && m == 23)
      d = tl_dtype_f32();
    else if (e == 11 && m == 52)
      d = tl_dtype_f64();
    else
      d = tl_dtype_small_float(e, m);
  }
  if (!tl_dtype_is_valid(d))
    return false;
  *out = d;
  return true;
}
