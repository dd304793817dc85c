/* The thread-block instruction set of the tl dialect (Tilus Table 1 and
 * what the kernel library needs). Every op acts for the whole thread block;
 * register tiles are distributed over the block's threads by their layouts.
 * The semantics of each op are in docs/langref.md; the verifiers here check
 * shapes, element types and layouts and say exactly what disagrees. */
#include "tl/arch.h"
#include "tl/dialects.h"
#include "tl/predicates.h"
#include "tl_internal.h"

#include <math.h>
#include <string.h>

/*===--- Helpers ---------------------------------------------------------===*/

static TlType *otype(const TlOp *op, unsigned i) {
  return tl_value_type(tl_op_operand(op, i));
}
static TlType *rtype(const TlOp *op, unsigned i) {
  return tl_value_type(tl_op_result(op, i));
}
static bool is_reg(const TlType *t) {
  return tl_tensor_kind(t) == TL_TENSOR_REG;
}
static bool is_index(const TlType *t) {
  return tl_type_is_int(t) && !tl_type_is_bool(t);
}

static char *type_text(const TlType *t) {
  TlStr s = {0};
  tl_type_print(t, &s);
  return s.data;
}

/* "'op' op <what> must be <kind>, but is <type>" */
static TlResult bad_type(TlOp *op, const char *what, const char *kind,
                         const TlType *t) {
  char *s = type_text(t);
  tl_op_emit_error(op, "%s must be %s, but is %s", what, kind, s);
  tl_free(s);
  return TL_FAILURE;
}

static TlResult counts(TlOp *op, unsigned nops, unsigned nres) {
  if (tl_op_num_operands(op) != nops || tl_op_num_results(op) != nres) {
    tl_op_emit_error(op,
                     "expects %u operands and %u results, but has %u and "
                     "%u",
                     nops, nres, tl_op_num_operands(op), tl_op_num_results(op));
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

static void print_shape_list(TlStr *s, const TlType *t) {
  tl_str_putc(s, '[');
  for (unsigned i = 0; i < tl_tensor_rank(t); i++)
    tl_str_printf(s, "%s%lld", i ? ", " : "", (long long)tl_tensor_dim(t, i));
  tl_str_putc(s, ']');
}

/* Two tensor types with the same shape; reports which dimension differs. */
static TlResult same_shape(TlOp *op, const char *a, const TlType *ta,
                           const char *b, const TlType *tb) {
  bool same = tl_tensor_rank(ta) == tl_tensor_rank(tb);
  for (unsigned i = 0; same && i < tl_tensor_rank(ta); i++)
    same = tl_tensor_dim(ta, i) == tl_tensor_dim(tb, i);
  if (same)
    return TL_SUCCESS;
  TlStr x = {0}, y = {0};
  print_shape_list(&x, ta);
  print_shape_list(&y, tb);
  tl_op_emit_error(op, "%s has shape %s but %s has shape %s", a,
                   tl_str_cstr(&x), b, tl_str_cstr(&y));
  tl_str_free(&x);
  tl_str_free(&y);
  return TL_FAILURE;
}

static TlResult same_layout(TlOp *op, const char *a, const TlType *ta,
                            const char *b, const TlType *tb) {
  if (tl_layout_equal(tl_reg_layout(ta), tl_reg_layout(tb)))
    return TL_SUCCESS;
  TlStr x = {0}, y = {0};
  tl_layout_print(tl_reg_layout(ta), &x);
  tl_layout_print(tl_reg_layout(tb), &y);
  tl_op_emit_error(op, "%s has layout %s but %s has layout %s", a,
                   tl_str_cstr(&x), b, tl_str_cstr(&y));
  tl_str_free(&x);
  tl_str_free(&y);
  return TL_FAILURE;
}

/* Operands from..from+rank are integer indices, one per dimension of t. */
static TlResult check_indices(TlOp *op, unsigned from, const TlType *t,
                              const char *what) {
  unsigned n = tl_op_num_operands(op) - from, rank = tl_tensor_rank(t);
  if (n != rank) {
    tl_op_emit_error(op, "%s has %u dimensions but %u offsets are given", what,
                     rank, n);
    return TL_FAILURE;
  }
  for (unsigned i = 0; i < n; i++)
    if (!is_index(otype(op, from + i)))
      return bad_type(op, "an offset", "an integer", otype(op, from + i));
  return TL_SUCCESS;
}

/* Custom-form pieces. */

static TlResult resolve_any(TlParser *p, const TlOperandRef *r, TlValue **v) {
  return tl_parser_lookup(p, r, v);
}

/* `[%i, %j]` — indices resolve to whatever integer type they have. */
static TlResult parse_indices(TlParser *p, TlOpState *st) {
  if (TL_FAILED(tl_parse_punct(p, "[")))
    return TL_FAILURE;
  if (tl_parse_optional_punct(p, "]"))
    return TL_SUCCESS;
  do {
    TlOperandRef r;
    TlValue *v;
    if (TL_FAILED(tl_parse_operand(p, &r)) || TL_FAILED(resolve_any(p, &r, &v)))
      return TL_FAILURE;
    tl_op_state_add_operand(st, v);
  } while (tl_parse_optional_punct(p, ","));
  return tl_parse_punct(p, "]");
}

static void print_indices(TlPrinter *p, const TlOp *op, unsigned from) {
  tl_print_str(p, "[");
  for (unsigned i = from; i < tl_op_num_operands(op); i++) {
    if (i > from)
      tl_print_str(p, ", ");
    tl_print_operand(p, tl_op_operand(op, i));
  }
  tl_print_str(p, "]");
}

static TlResult parse_typed_operand(TlParser *p, TlOperandRef *r) {
  return tl_parse_operand(p, r);
}

/* Optional unit attributes written as bare keywords (`masked`). */
static void parse_flags(TlParser *p, TlOpState *st, const char *const *flags) {
  for (bool again = true; again;) {
    again = false;
    for (const char *const *f = flags; *f; f++)
      if (tl_parse_optional_keyword(p, *f)) {
        tl_op_state_set_attr(st, *f, tl_attr_unit(st->ctx));
        again = true;
      }
  }
}

static const char *const masked_flag[] = {"masked", NULL};

/* `[ masked ] [ attr-dict ] ":" A "," B` after two operands a and b, whose
 * types must be A and B (the error points at loc). */
static TlResult parse_masked_pair_types(TlParser *p, TlOpState *st, TlLoc loc,
                                        TlValue *a, TlValue *b) {
  TlType *ta, *tb;
  parse_flags(p, st, masked_flag);
  if (TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(tl_parse_punct(p, ":")) || TL_FAILED(tl_parse_type(p, &ta)) ||
      TL_FAILED(tl_parse_punct(p, ",")) || TL_FAILED(tl_parse_type(p, &tb)))
    return TL_FAILURE;
  if (ta != tl_value_type(a) || tb != tl_value_type(b)) {
    tl_parser_error(p, loc, "the operands do not have the types given after ':'");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

static void print_flags(TlPrinter *p, const TlOp *op,
                        const char *const *flags) {
  for (const char *const *f = flags; *f; f++)
    if (tl_op_attr(op, *f))
      tl_printf(p, " %s", *f);
}


/*===--- block_indices ---------------------------------------------------===*/

static TlResult block_indices_parse(TlParser *p, TlOpState *st) {
  TlTypeVec types = {0};
  TlResult r = TL_FAILURE;
  if (TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(tl_parse_punct(p, ":")) ||
      TL_FAILED(tl_parse_type_list(p, &types)))
    goto out;
  for (size_t i = 0; i < types.len; i++)
    tl_op_state_add_result(st, types.data[i]);
  r = TL_SUCCESS;
out:
  tl_vec_free(&types);
  return r;
}

static void block_indices_print(TlPrinter *p, TlOp *op) {
  tl_print_attr_dict(p, op, NULL);
  tl_print_str(p, " : ");
  for (unsigned i = 0; i < tl_op_num_results(op); i++) {
    if (i)
      tl_print_str(p, ", ");
    tl_print_type(p, rtype(op, i));
  }
}

static TlResult block_indices_verify(TlOp *op) {
  unsigned n = tl_op_num_results(op);
  if (tl_op_num_operands(op) || n < 1 || n > 3) {
    tl_op_emit_error(op, "has no operands and 1 to 3 results");
    return TL_FAILURE;
  }
  for (unsigned i = 0; i < n; i++)
    if (rtype(op, i) != tl_type_int(tl_op_context(op), 32, true))
      return bad_type(op, "each result", "i32", rtype(op, i));
  if (!tl_enclosing_kernel(op)) {
    tl_op_emit_error(op, "must be inside a tl.kernel");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/* tl.warp_index: parses and prints as tl.block_indices; the op table
 * gives it no operands and one result. */
static TlResult warp_index_verify(TlOp *op) {
  if (rtype(op, 0) != tl_type_int(tl_op_context(op), 32, true))
    return bad_type(op, "the result", "i32", rtype(op, 0));
  if (!tl_enclosing_kernel(op)) {
    tl_op_emit_error(op, "must be inside a tl.kernel");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/*===--- view_global -----------------------------------------------------===*/

/* `[%m, 1024]`: each entry an operand or a literal; literals go in attr.
 * `negative` is the error for a negative literal. */
static TlResult parse_mixed(TlParser *p, TlOpState *st, const char *attr,
                            const char *negative) {
  TL_VEC(TlAttr *) stat = {0};
  TlType *i64 = tl_type_int(st->ctx, 64, true);
  TlResult r = TL_FAILURE;
  if (TL_FAILED(tl_parse_punct(p, "[")))
    goto out;
  do {
    if (tl_parser_peek_operand(p)) {
      TlOperandRef ref;
      TlValue *v;
      if (TL_FAILED(tl_parse_operand(p, &ref)) ||
          TL_FAILED(resolve_any(p, &ref, &v)))
        goto out;
      tl_op_state_add_operand(st, v);
      tl_vec_push(&stat, tl_attr_int(st->ctx, i64, -1));
    } else {
      int64_t x;
      TlLoc l = tl_parser_loc(p);
      if (TL_FAILED(tl_parse_int(p, &x)))
        goto out;
      if (x < 0) {
        tl_parser_error(p, l, "%s", negative);
        goto out;
      }
      tl_vec_push(&stat, tl_attr_int(st->ctx, i64, x));
    }
  } while (tl_parse_optional_punct(p, ","));
  if (TL_FAILED(tl_parse_punct(p, "]")))
    goto out;
  tl_op_state_set_attr(st, attr,
                       tl_attr_array(st->ctx, (unsigned)stat.len, stat.data));
  r = TL_SUCCESS;
out:
  tl_vec_free(&stat);
  return r;
}

static TlResult view_global_parse(TlParser *p, TlOpState *st) {
  TlOperandRef ptr;
  TlValue *pv;
  TlType *t;
  if (TL_FAILED(tl_parse_operand(p, &ptr)) ||
      TL_FAILED(resolve_any(p, &ptr, &pv)))
    return TL_FAILURE;
  tl_op_state_add_operand(st, pv);
  if (TL_FAILED(parse_mixed(p, st, "static_dims",
                            "sizes and strides are not negative")))
    return TL_FAILURE;
  if (tl_parse_optional_keyword(p, "strides") &&
      TL_FAILED(parse_mixed(p, st, "static_strides",
                            "sizes and strides are not negative")))
    return TL_FAILURE;
  if (TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(tl_parse_punct(p, ":")) || TL_FAILED(tl_parse_type(p, &t)))
    return TL_FAILURE;
  tl_op_state_add_result(st, t);
  return TL_SUCCESS;
}

/* Prints a mixed list, taking operands from *next. */
static void print_mixed(TlPrinter *p, const TlOp *op, TlAttr *stat,
                        unsigned *next) {
  tl_print_str(p, "[");
  for (unsigned i = 0; i < tl_attr_array_size(stat); i++) {
    if (i)
      tl_print_str(p, ", ");
    int64_t x = tl_attr_int_value(tl_attr_array_elem(stat, i));
    if (x < 0)
      tl_print_operand(p, tl_op_operand(op, (*next)++));
    else
      tl_printf(p, "%lld", (long long)x);
  }
  tl_print_str(p, "]");
}

static void view_global_print(TlPrinter *p, TlOp *op) {
  static const char *const elided[] = {"static_dims", "static_strides", NULL};
  unsigned next = 1;
  tl_print_str(p, " ");
  tl_print_operand(p, tl_op_operand(op, 0));
  print_mixed(p, op, tl_op_attr(op, "static_dims"), &next);
  if (tl_op_attr(op, "static_strides")) {
    tl_print_str(p, " strides");
    print_mixed(p, op, tl_op_attr(op, "static_strides"), &next);
  }
  tl_print_attr_dict(p, op, elided);
  tl_print_str(p, " : ");
  tl_print_type(p, rtype(op, 0));
}

static unsigned count_dynamic(TlAttr *a) {
  unsigned n = 0;
  for (unsigned i = 0; a && i < tl_attr_array_size(a); i++)
    n += tl_attr_int_value(tl_attr_array_elem(a, i)) < 0;
  return n;
}

/* A static size or stride list: integers >= 0, or -1 for an operand. */
static bool mixed_ok(TlAttr *a) {
  if (!a || tl_attr_kind(a) != TL_ATTR_ARRAY)
    return false;
  for (unsigned i = 0; i < tl_attr_array_size(a); i++) {
    TlAttr *e = tl_attr_array_elem(a, i);
    if (tl_attr_kind(e) != TL_ATTR_INT || tl_attr_int_value(e) < -1)
      return false;
  }
  return true;
}

static TlResult view_global_verify(TlOp *op) {
  if (tl_op_num_results(op) != 1 || tl_op_num_operands(op) < 1) {
    tl_op_emit_error(op, "takes a pointer and sizes and has one result");
    return TL_FAILURE;
  }
  TlType *g = rtype(op, 0), *ptr = otype(op, 0);
  if (tl_tensor_kind(g) != TL_TENSOR_GLOBAL)
    return bad_type(op, "the result", "a !tl.global", g);
  if (!tl_type_is_ptr(ptr))
    return bad_type(op, "the first operand", "a !tl.ptr", ptr);
  if (tl_tensor_elem(ptr) != tl_tensor_elem(g)) {
    char *a = type_text(ptr), *b = type_text(g);
    tl_op_emit_error(op, "pointer %s and view %s have different element types",
                     a, b);
    tl_free(a);
    tl_free(b);
    return TL_FAILURE;
  }
  TlAttr *dims = tl_op_attr(op, "static_dims");
  TlAttr *strides = tl_op_attr(op, "static_strides");
  unsigned rank = tl_tensor_rank(g);
  if (!mixed_ok(dims) || (strides && !mixed_ok(strides))) {
    tl_op_emit_error(op, "'static_dims' and 'static_strides' must be arrays "
                         "of integers, -1 for a runtime value");
    return TL_FAILURE;
  }
  if (tl_attr_array_size(dims) != rank) {
    tl_op_emit_error(op, "the view has %u dimensions, so it needs %u sizes",
                     rank, rank);
    return TL_FAILURE;
  }
  if (tl_global_type_strided(g) != (strides != NULL)) {
    tl_op_emit_error(op, tl_global_type_strided(g)
                             ? "a strided view needs 'strides[...]'"
                             : "'strides' needs a strided view type (add "
                               "', strided')");
    return TL_FAILURE;
  }
  if (strides && tl_attr_array_size(strides) != rank) {
    tl_op_emit_error(op, "the view has %u dimensions, so it needs %u strides",
                     rank, rank);
    return TL_FAILURE;
  }
  for (unsigned i = 0; i < rank; i++) {
    int64_t s = tl_attr_int_value(tl_attr_array_elem(dims, i));
    int64_t d = tl_tensor_dim(g, i);
    if (d >= 0 && s != d) {
      tl_op_emit_error(op, "size %u is %s but the view type says %lld", i,
                       s < 0 ? "a runtime value" : "a different constant",
                       (long long)d);
      return TL_FAILURE;
    }
  }
  unsigned want = 1 + count_dynamic(dims) + count_dynamic(strides);
  if (tl_op_num_operands(op) != want) {
    tl_op_emit_error(op, "expects %u operands, but has %u", want,
                     tl_op_num_operands(op));
    return TL_FAILURE;
  }
  for (unsigned i = 1; i < want; i++)
    if (!is_index(otype(op, i)))
      return bad_type(op, "a size or stride", "an integer", otype(op, i));
  return TL_SUCCESS;
}

/*===--- alloc_register --------------------------------------------------===*/

/* `tl.alloc_register 0.0 : T`: the literal takes T's element type. */
static TlResult alloc_register_parse(TlParser *p, TlOpState *st) {
  TlType *t;
  TlLiteral lit;
  bool has_init =
      !tl_parser_peek_punct(p, ":") && !tl_parser_peek_punct(p, "{");
  if (has_init && TL_FAILED(tl_parse_literal(p, &lit)))
    return TL_FAILURE;
  TlLoc tloc;
  if (TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(tl_parse_punct(p, ":")))
    return TL_FAILURE;
  tloc = tl_parser_loc(p);
  if (TL_FAILED(tl_parse_type(p, &t)))
    return TL_FAILURE;
  if (has_init) {
    TlAttr *init;
    if (!is_reg(t)) {
      tl_parser_error(p, tloc, "tl.alloc_register makes a !tl.reg");
      return TL_FAILURE;
    }
    if (TL_FAILED(tl_literal_to_attr(p, &lit, tl_tensor_elem(t), &init)))
      return TL_FAILURE;
    tl_op_state_set_attr(st, "init", init);
  }
  tl_op_state_add_result(st, t);
  return TL_SUCCESS;
}

static void alloc_register_print(TlPrinter *p, TlOp *op) {
  static const char *const elided[] = {"init", NULL};
  TlAttr *init = tl_op_attr(op, "init");
  if (init) {
    /* The value without its type (the tile's element type): print the
     * attribute and drop the " : type" suffix. */
    TlStr s = {0};
    tl_attr_print(init, &s);
    char *colon = strstr(s.data, " : ");
    if (colon)
      *colon = 0;
    tl_printf(p, " %s", s.data);
    tl_str_free(&s);
  }
  tl_print_attr_dict(p, op, elided);
  tl_print_str(p, " : ");
  tl_print_type(p, rtype(op, 0));
}

static TlResult alloc_register_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 0, 1)))
    return TL_FAILURE;
  if (!is_reg(rtype(op, 0)))
    return bad_type(op, "the result", "a !tl.reg", rtype(op, 0));
  TlAttr *init = tl_op_attr(op, "init");
  if (init && ((tl_attr_kind(init) != TL_ATTR_INT &&
                tl_attr_kind(init) != TL_ATTR_FLOAT) ||
               tl_attr_get_type(init) != tl_tensor_elem(rtype(op, 0)))) {
    tl_op_emit_error(op, "'init' must be a number of the element type");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/*===--- Loads and stores ------------------------------------------------===*/

/* `%src[%i, ...] flags : Src -> Dst` */
static TlResult load_parse(TlParser *p, TlOpState *st) {
  TlOperandRef src;
  TlValue *sv;
  TlType *from, *to;
  if (TL_FAILED(parse_typed_operand(p, &src)) ||
      TL_FAILED(resolve_any(p, &src, &sv)))
    return TL_FAILURE;
  tl_op_state_add_operand(st, sv);
  if (TL_FAILED(parse_indices(p, st)))
    return TL_FAILURE;
  parse_flags(p, st, masked_flag);
  if (TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(tl_parse_punct(p, ":")) || TL_FAILED(tl_parse_type(p, &from)) ||
      TL_FAILED(tl_parse_punct(p, "->")) || TL_FAILED(tl_parse_type(p, &to)))
    return TL_FAILURE;
  if (from != tl_value_type(sv)) {
    tl_parser_error(p, src.loc, "'%%%s' does not have the type given after ':'",
                    src.name);
    return TL_FAILURE;
  }
  tl_op_state_add_result(st, to);
  return TL_SUCCESS;
}

static void load_print(TlPrinter *p, TlOp *op) {
  tl_print_str(p, " ");
  tl_print_operand(p, tl_op_operand(op, 0));
  print_indices(p, op, 1);
  print_flags(p, op, masked_flag);
  tl_print_attr_dict(p, op, masked_flag);
  tl_print_str(p, " : ");
  tl_print_type(p, otype(op, 0));
  tl_print_str(p, " -> ");
  tl_print_type(p, rtype(op, 0));
}

/* `%value, %dst[%i, ...] flags : Value, Dst` */
static TlResult store_parse(TlParser *p, TlOpState *st) {
  TlOperandRef val, dst;
  TlValue *vv, *dv;
  if (TL_FAILED(tl_parse_operand(p, &val)) ||
      TL_FAILED(resolve_any(p, &val, &vv)) ||
      TL_FAILED(tl_parse_punct(p, ",")) ||
      TL_FAILED(tl_parse_operand(p, &dst)) ||
      TL_FAILED(resolve_any(p, &dst, &dv)))
    return TL_FAILURE;
  tl_op_state_add_operand(st, vv);
  tl_op_state_add_operand(st, dv);
  if (TL_FAILED(parse_indices(p, st)))
    return TL_FAILURE;
  return parse_masked_pair_types(p, st, val.loc, vv, dv);
}

static void store_print(TlPrinter *p, TlOp *op) {
  tl_print_str(p, " ");
  tl_print_operand(p, tl_op_operand(op, 0));
  tl_print_str(p, ", ");
  tl_print_operand(p, tl_op_operand(op, 1));
  print_indices(p, op, 2);
  print_flags(p, op, masked_flag);
  tl_print_attr_dict(p, op, masked_flag);
  tl_print_str(p, " : ");
  tl_print_type(p, otype(op, 0));
  tl_print_str(p, ", ");
  tl_print_type(p, otype(op, 1));
}

static TlResult check_tile(TlOp *op, const TlType *mem, const char *memname,
                           const TlType *reg, bool shared) {
  if (tl_tensor_kind(mem) != (shared ? TL_TENSOR_SHARED : TL_TENSOR_GLOBAL))
    return bad_type(op, memname, shared ? "a !tl.shared" : "a !tl.global", mem);
  if (!is_reg(reg))
    return bad_type(op, "the register tile", "a !tl.reg", reg);
  if (tl_tensor_elem(mem) != tl_tensor_elem(reg)) {
    char *a = type_text(tl_tensor_elem(mem)),
         *b = type_text(tl_tensor_elem(reg));
    tl_op_emit_error(op, "%s holds %s but the register tile holds %s", memname,
                     a, b);
    tl_free(a);
    tl_free(b);
    return TL_FAILURE;
  }
  if (tl_tensor_rank(mem) != tl_tensor_rank(reg)) {
    tl_op_emit_error(op, "%s has %u dimensions but the register tile has %u",
                     memname, tl_tensor_rank(mem), tl_tensor_rank(reg));
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/* The `masked` flag: a unit attribute (the custom form writes it as a
 * keyword), and only on global-memory accesses. */
static TlResult check_masked(TlOp *op, bool allowed) {
  TlAttr *m = tl_op_attr(op, "masked");
  if (!m)
    return TL_SUCCESS;
  if (!allowed) {
    tl_op_emit_error(op, "shared-memory accesses are not masked");
    return TL_FAILURE;
  }
  if (tl_attr_kind(m) != TL_ATTR_UNIT) {
    tl_op_emit_error(op, "'masked' must be a unit attribute");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/* Unmasked accesses at constant offsets: the tile must lie inside the
 * tensor's static dimensions (a masked access may reach outside; runtime
 * offsets and `?` sizes are the program's responsibility). */
static TlResult check_bounds(TlOp *op, unsigned from, const TlType *mem,
                             const char *memname, const TlType *tile,
                             const char *tilename) {
  if (tl_op_attr(op, "masked"))
    return TL_SUCCESS;
  for (unsigned i = 0; i < tl_tensor_rank(mem); i++) {
    int64_t d = tl_tensor_dim(mem, i), n = tl_tensor_dim(tile, i);
    if (d >= 0 && n > d) {
      /* Larger than a static size: outside at any offset. */
      tl_op_emit_error(op, "%s is larger than %s in dimension %u (%lld > %lld)",
                       tilename, memname, i, (long long)n, (long long)d);
      return TL_FAILURE;
    }
  }
  for (unsigned i = 0; i < tl_tensor_rank(mem); i++) {
    TlValue *v = tl_op_operand(op, from + i);
    TlAttr *c = tl_value_constant(v);
    if (!c || tl_attr_kind(c) != TL_ATTR_INT)
      continue;
    bool neg = tl_type_int_signed(tl_value_type(v)) && tl_attr_int_value(c) < 0;
    uint64_t off = tl_attr_uint_value(c);
    int64_t d = tl_tensor_dim(mem, i), n = tl_tensor_dim(tile, i);
    if (neg) {
      tl_op_emit_error(op, "offset %u is negative (%lld)", i,
                       (long long)tl_attr_int_value(c));
      return TL_FAILURE;
    }
    if (d >= 0 && (off > (uint64_t)d || (uint64_t)n > (uint64_t)d - off)) {
      tl_op_emit_error(op,
                       "%s does not fit in %s in dimension %u: offset "
                       "%llu + %lld > %lld",
                       tilename, memname, i, (unsigned long long)off,
                       (long long)n, (long long)d);
      return TL_FAILURE;
    }
  }
  return TL_SUCCESS;
}

static TlResult load_verify(TlOp *op, bool shared) {
  const char *mem = shared ? "the shared tensor" : "the global tensor";
  if (tl_op_num_results(op) != 1 || tl_op_num_operands(op) < 1) {
    tl_op_emit_error(op, "takes a tensor and offsets and has one result");
    return TL_FAILURE;
  }
  if (TL_FAILED(check_tile(op, otype(op, 0), mem, rtype(op, 0), shared)) ||
      TL_FAILED(check_masked(op, !shared)) ||
      TL_FAILED(check_indices(op, 1, otype(op, 0), mem)))
    return TL_FAILURE;
  return check_bounds(op, 1, otype(op, 0), mem, rtype(op, 0),
                      "the register tile");
}

static TlResult store_verify(TlOp *op, bool shared) {
  const char *mem = shared ? "the shared tensor" : "the global tensor";
  if (tl_op_num_results(op) != 0 || tl_op_num_operands(op) < 2) {
    tl_op_emit_error(op, "takes a register tile, a tensor and offsets");
    return TL_FAILURE;
  }
  if (TL_FAILED(check_tile(op, otype(op, 1), mem, otype(op, 0), shared)) ||
      TL_FAILED(check_masked(op, !shared)) ||
      TL_FAILED(check_indices(op, 2, otype(op, 1), mem)))
    return TL_FAILURE;
  return check_bounds(op, 2, otype(op, 1), mem, otype(op, 0),
                      "the register tile");
}

static TlResult load_global_verify(TlOp *op) { return load_verify(op, false); }
static TlResult load_shared_verify(TlOp *op) { return load_verify(op, true); }
static TlResult store_global_verify(TlOp *op) {
  return store_verify(op, false);
}
static TlResult store_shared_verify(TlOp *op) { return store_verify(op, true); }

/*===--- Atomics and fences ----------------------------------------------===*/

/* `tl.atomic_rmw KIND %v, %g[...] [masked] {attrs} : V, G` and
 * `tl.atomic_cas %cmp, %v, %g[...] [masked] {attrs} : V, G`: nvals value
 * operands of type V, then the view and its offsets. A scalar V is the
 * scalar form, whose result (of type V) is the old value. */
static TlResult atomic_parse(TlParser *p, TlOpState *st, unsigned nvals) {
  TlOperandRef vals[2], view;
  TlType *vt, *gt;
  TlLoc l = tl_parser_loc(p);
  if (nvals == 1) {
    const char *kind;
    if (TL_FAILED(tl_parse_identifier(p, &kind)))
      return TL_FAILURE;
    if (tl_atomic_kind_by_name(kind) == TL_ATOMIC_UNKNOWN) {
      tl_parser_error(p, l, "unknown atomic operation '%s' (add max min exch)",
                      kind);
      return TL_FAILURE;
    }
    tl_op_state_set_attr(st, "kind",
                         tl_attr_string(st->ctx, kind, strlen(kind)));
  }
  for (unsigned i = 0; i < nvals; i++)
    if (TL_FAILED(tl_parse_operand(p, &vals[i])) ||
        TL_FAILED(tl_parse_punct(p, ",")))
      return TL_FAILURE;
  if (TL_FAILED(tl_parse_operand(p, &view)))
    return TL_FAILURE;
  TlOpState idx;
  tl_op_state_init(&idx, st->ctx, NULL, st->loc);
  TlResult r = parse_indices(p, &idx);
  if (!TL_FAILED(r)) {
    parse_flags(p, st, masked_flag);
    r = TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
                TL_FAILED(tl_parse_punct(p, ":")) ||
                TL_FAILED(tl_parse_type(p, &vt)) ||
                TL_FAILED(tl_parse_punct(p, ",")) ||
                TL_FAILED(tl_parse_type(p, &gt))
            ? TL_FAILURE
            : TL_SUCCESS;
  }
  for (unsigned i = 0; i < nvals && !TL_FAILED(r); i++) {
    TlValue *v;
    r = tl_parser_resolve(p, &vals[i], vt, &v);
    if (!TL_FAILED(r))
      tl_op_state_add_operand(st, v);
  }
  if (!TL_FAILED(r)) {
    TlValue *g;
    r = tl_parser_resolve(p, &view, gt, &g);
    if (!TL_FAILED(r)) {
      tl_op_state_add_operand(st, g);
      tl_op_state_add_operands(st, (unsigned)idx.operands.len,
                               idx.operands.data);
      if (tl_type_is_scalar(vt))
        tl_op_state_add_result(st, vt);
    }
  }
  tl_op_state_free(&idx);
  return r;
}

static TlResult atomic_rmw_parse(TlParser *p, TlOpState *st) {
  return atomic_parse(p, st, 1);
}
static TlResult atomic_cas_parse(TlParser *p, TlOpState *st) {
  return atomic_parse(p, st, 2);
}

static void atomic_print(TlPrinter *p, TlOp *op) {
  static const char *const elided[] = {"kind", "masked", NULL};
  bool rmw = tl_op_id(op) == TL_OP_TL_ATOMIC_RMW;
  unsigned nvals = rmw ? 1 : 2;
  if (rmw)
    tl_printf(p, " %s", tl_attr_string_value(tl_op_attr(op, "kind"), NULL));
  for (unsigned i = 0; i < nvals; i++) {
    tl_print_str(p, " ");
    tl_print_operand(p, tl_op_operand(op, i));
    tl_print_str(p, ",");
  }
  tl_print_str(p, " ");
  tl_print_operand(p, tl_op_operand(op, nvals));
  print_indices(p, op, nvals + 1);
  print_flags(p, op, masked_flag);
  tl_print_attr_dict(p, op, elided);
  tl_print_str(p, " : ");
  tl_print_type(p, otype(op, 0));
  tl_print_str(p, ", ");
  tl_print_type(p, otype(op, nvals));
}

/* `scope` and `ordering`: strings from the tables of predicates.def; a
 * fence takes no `relaxed` (it would order nothing). */
static TlResult check_memory_order(TlOp *op, bool fence) {
  TlAttr *s = tl_op_attr(op, "scope"), *o = tl_op_attr(op, "ordering");
  if (s && tl_mem_scope_of(op, TL_SCOPE_GPU) == TL_SCOPE_UNKNOWN) {
    tl_op_emit_error(op, "'scope' must be \"cta\", \"gpu\" or \"sys\"");
    return TL_FAILURE;
  }
  TlMemOrder ord = tl_mem_order_of(op, TL_ORDER_RELAXED);
  if (o && ord == TL_ORDER_UNKNOWN) {
    tl_op_emit_error(op, "'ordering' must be \"relaxed\", \"acquire\", "
                         "\"release\" or \"acq_rel\"");
    return TL_FAILURE;
  }
  if (o && fence && ord == TL_ORDER_RELAXED) {
    tl_op_emit_error(op, "a fence orders \"acquire\", \"release\" or "
                         "\"acq_rel\", not \"relaxed\"");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/* The element types each atomic operation takes (what PTX's atom has on
 * every target TL supports; exch and cas move 32 bits). */
static TlResult check_atomic_elem(TlOp *op, TlType *e) {
  bool cas = tl_op_id(op) == TL_OP_TL_ATOMIC_CAS;
  TlAtomicKind k = cas ? TL_ATOMIC_EXCH : tl_atomic_kind_of(op);
  bool i32 =
      tl_type_is_int(e) && !tl_type_is_bool(e) && tl_type_int_width(e) == 32;
  bool f32 = tl_type_is_float(e) && tl_type_bitwidth(e) == 32 &&
             tl_type_float_exp(e) == 8;
  bool f16 = tl_type_is_float(e) && tl_type_bitwidth(e) == 16 &&
             tl_type_float_exp(e) == 5;
  const char *want = NULL;
  switch (k) {
  case TL_ATOMIC_ADD:
    want = i32 || f32 || f16 ? NULL : "i32, u32, f32 or f16";
    break;
  case TL_ATOMIC_MAX:
  case TL_ATOMIC_MIN:
    want = i32 ? NULL : "i32 or u32";
    break;
  case TL_ATOMIC_EXCH:
    want = i32 || f32 ? NULL : "i32, u32 or f32";
    break;
  default:
    tl_op_emit_error(op, "requires a 'kind' among add max min exch");
    return TL_FAILURE;
  }
  if (!want)
    return TL_SUCCESS;
  char *s = type_text(e);
  tl_op_emit_error(op, "atomic %s takes %s elements, not %s",
                   cas ? "cas" : tl_atomic_kind_name(k), want, s);
  tl_free(s);
  return TL_FAILURE;
}

/* The scalar form: one element, at indices (one per dimension) that must
 * lie inside the view; constant ones are checked against static sizes. */
static TlResult check_scalar_access(TlOp *op, unsigned from, TlType *g) {
  for (unsigned d = 0; d < tl_tensor_rank(g); d++) {
    TlAttr *c = tl_value_constant(tl_op_operand(op, from + d));
    if (!c || tl_attr_kind(c) != TL_ATTR_INT)
      continue;
    int64_t i = tl_attr_int_value(c), n = tl_tensor_dim(g, d);
    if (tl_type_int_signed(tl_value_type(tl_op_operand(op, from + d))) &&
        i < 0) {
      tl_op_emit_error(op, "index %u is negative (%lld)", d, (long long)i);
      return TL_FAILURE;
    }
    if (n >= 0 && tl_attr_uint_value(c) >= (uint64_t)n) {
      tl_op_emit_error(op,
                       "index %u (%llu) is outside dimension %u of size "
                       "%lld",
                       d, (unsigned long long)tl_attr_uint_value(c), d,
                       (long long)n);
      return TL_FAILURE;
    }
  }
  return TL_SUCCESS;
}

static TlResult atomic_verify(TlOp *op) {
  unsigned nvals = tl_op_id(op) == TL_OP_TL_ATOMIC_CAS ? 2 : 1;
  if (tl_op_num_operands(op) < nvals + 1 || tl_op_num_results(op) > 1) {
    tl_op_emit_error(op, nvals == 2 ? "takes a compared value, a new value, "
                                      "a global tensor and offsets"
                                    : "takes a value, a global tensor and "
                                      "offsets");
    return TL_FAILURE;
  }
  TlType *v = otype(op, 0), *g = otype(op, nvals);
  if (nvals == 2 && otype(op, 1) != v) {
    tl_op_emit_error(op, "the compared and the new value must have one type");
    return TL_FAILURE;
  }
  if (tl_tensor_kind(g) != TL_TENSOR_GLOBAL)
    return bad_type(op, "the global tensor", "a !tl.global", g);
  if (TL_FAILED(check_memory_order(op, false)))
    return TL_FAILURE;
  if (is_reg(v)) {
    if (tl_op_num_results(op)) {
      tl_op_emit_error(op, "the tile form has no results (the scalar form "
                           "returns the old value)");
      return TL_FAILURE;
    }
    if (TL_FAILED(check_tile(op, g, "the global tensor", v, false)) ||
        TL_FAILED(check_atomic_elem(op, tl_tensor_elem(v))) ||
        TL_FAILED(check_masked(op, true)) ||
        TL_FAILED(check_indices(op, nvals + 1, g, "the global tensor")))
      return TL_FAILURE;
    return check_bounds(op, nvals + 1, g, "the global tensor", v,
                        "the register tile");
  }
  if (!tl_type_is_scalar(v))
    return bad_type(op, "the value", "a scalar or a !tl.reg", v);
  if (v != tl_tensor_elem(g)) {
    char *a = type_text(v), *b = type_text(tl_tensor_elem(g));
    tl_op_emit_error(op,
                     "the value has type %s but the global tensor holds "
                     "%s",
                     a, b);
    tl_free(a);
    tl_free(b);
    return TL_FAILURE;
  }
  if (tl_op_num_results(op) != 1 || rtype(op, 0) != v) {
    tl_op_emit_error(op, "the scalar form has one result, the old value, of "
                         "the value's type");
    return TL_FAILURE;
  }
  if (tl_op_attr(op, "masked")) {
    tl_op_emit_error(op, "the scalar form is not masked: its element must "
                         "lie in the view");
    return TL_FAILURE;
  }
  if (TL_FAILED(check_atomic_elem(op, v)) ||
      TL_FAILED(check_indices(op, nvals + 1, g, "the global tensor")))
    return TL_FAILURE;
  return check_scalar_access(op, nvals + 1, g);
}

static TlResult fence_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 0, 0)))
    return TL_FAILURE;
  return check_memory_order(op, true);
}

/*===--- Scalar loads and gathers ----------------------------------------===*/

/* `%v = tl.load_scalar %g[%i, ...] {attrs} : G -> T` and
 * `%r = tl.gather %g[%idx, %o, ...] [masked] {attrs} : G, I -> R`: the
 * view, then its indices (for a gather the index tile first). */
static TlResult load_scalar_parse(TlParser *p, TlOpState *st) {
  return load_parse(p, st);
}

static TlResult gather_parse(TlParser *p, TlOpState *st) {
  TlOperandRef g;
  TlValue *gv;
  TlType *gt, *it, *rt;
  if (TL_FAILED(tl_parse_operand(p, &g)) || TL_FAILED(resolve_any(p, &g, &gv)))
    return TL_FAILURE;
  tl_op_state_add_operand(st, gv);
  if (TL_FAILED(parse_indices(p, st)))
    return TL_FAILURE;
  parse_flags(p, st, masked_flag);
  if (TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(tl_parse_punct(p, ":")) || TL_FAILED(tl_parse_type(p, &gt)) ||
      TL_FAILED(tl_parse_punct(p, ",")) || TL_FAILED(tl_parse_type(p, &it)) ||
      TL_FAILED(tl_parse_punct(p, "->")) || TL_FAILED(tl_parse_type(p, &rt)))
    return TL_FAILURE;
  if (gt != tl_value_type(gv) ||
      (st->operands.len > 1 && it != tl_value_type(st->operands.data[1]))) {
    tl_parser_error(p, g.loc,
                    "the operands do not have the types given after ':'");
    return TL_FAILURE;
  }
  tl_op_state_add_result(st, rt);
  return TL_SUCCESS;
}

static void gather_print(TlPrinter *p, TlOp *op) {
  tl_print_str(p, " ");
  tl_print_operand(p, tl_op_operand(op, 0));
  print_indices(p, op, 1);
  print_flags(p, op, masked_flag);
  tl_print_attr_dict(p, op, masked_flag);
  tl_print_str(p, " : ");
  tl_print_type(p, otype(op, 0));
  tl_print_str(p, ", ");
  tl_print_type(p, otype(op, 1));
  tl_print_str(p, " -> ");
  tl_print_type(p, rtype(op, 0));
}

/* A scalar load reads one element for the whole block; with `ordering`
 * (relaxed or acquire) it is an atomic load of 16, 32 or 64 bits, the
 * form for flags another block sets. */
static TlResult load_scalar_verify(TlOp *op) {
  if (tl_op_num_results(op) != 1 || tl_op_num_operands(op) < 1) {
    tl_op_emit_error(op, "takes a global tensor and indices and has one "
                         "result");
    return TL_FAILURE;
  }
  TlType *g = otype(op, 0), *t = rtype(op, 0);
  if (tl_tensor_kind(g) != TL_TENSOR_GLOBAL)
    return bad_type(op, "the global tensor", "a !tl.global", g);
  if (t != tl_tensor_elem(g)) {
    char *a = type_text(t), *b = type_text(tl_tensor_elem(g));
    tl_op_emit_error(op,
                     "the result has type %s but the global tensor holds "
                     "%s",
                     a, b);
    tl_free(a);
    tl_free(b);
    return TL_FAILURE;
  }
  if (tl_type_bitwidth(t) < 8 || tl_type_is_bool(t)) {
    char *a = type_text(t);
    tl_op_emit_error(op,
                     "a scalar load reads whole bytes: %s elements have "
                     "no address of their own",
                     a);
    tl_free(a);
    return TL_FAILURE;
  }
  if (tl_op_attr(op, "masked")) {
    tl_op_emit_error(op, "a scalar load is not masked: its element must lie "
                         "in the view");
    return TL_FAILURE;
  }
  if (TL_FAILED(check_memory_order(op, false)))
    return TL_FAILURE;
  TlMemOrder o = tl_mem_order_of(op, TL_ORDER_RELAXED);
  if (tl_op_attr(op, "ordering") && o != TL_ORDER_RELAXED &&
      o != TL_ORDER_ACQUIRE) {
    tl_op_emit_error(op,
                     "a load orders \"relaxed\" or \"acquire\", not "
                     "\"%s\"",
                     tl_mem_order_name(o));
    return TL_FAILURE;
  }
  unsigned b = tl_type_bitwidth(t);
  if ((tl_op_attr(op, "ordering") || tl_op_attr(op, "scope")) && b != 16 &&
      b != 32 && b != 64) {
    tl_op_emit_error(op, "an ordered load reads 16, 32 or 64 bits, not %u", b);
    return TL_FAILURE;
  }
  if (TL_FAILED(check_indices(op, 1, g, "the global tensor")))
    return TL_FAILURE;
  return check_scalar_access(op, 1, g);
}

/* r[i, j, ...] = g[idx[i, 0, ...], o_1 + j, ...]: the index tile selects
 * the view's index in dimension 0 (a row, or an element of a 1-D view),
 * the offsets place the other dimensions. */
static TlResult gather_verify(TlOp *op) {
  if (tl_op_num_results(op) != 1 || tl_op_num_operands(op) < 2) {
    tl_op_emit_error(op, "takes a global tensor, an index tile and offsets "
                         "and has one result");
    return TL_FAILURE;
  }
  TlType *g = otype(op, 0), *it = otype(op, 1), *r = rtype(op, 0);
  if (TL_FAILED(check_tile(op, g, "the global tensor", r, false)) ||
      TL_FAILED(check_masked(op, true)))
    return TL_FAILURE;
  if (!is_reg(it) || !is_index(tl_tensor_elem(it)))
    return bad_type(op, "the index tile", "a !tl.reg of integers", it);
  unsigned n = tl_tensor_rank(g);
  if (tl_tensor_rank(it) != n) {
    tl_op_emit_error(op,
                     "the index tile has %u dimensions but the global "
                     "tensor has %u",
                     tl_tensor_rank(it), n);
    return TL_FAILURE;
  }
  for (unsigned d = 1; d < n; d++)
    if (tl_tensor_dim(it, d) != 1) {
      tl_op_emit_error(op,
                       "the index tile must have size 1 in dimension %u, "
                       "but has %lld",
                       d, (long long)tl_tensor_dim(it, d));
      return TL_FAILURE;
    }
  if (tl_tensor_dim(it, 0) != tl_tensor_dim(r, 0)) {
    tl_op_emit_error(op,
                     "the index tile selects %lld rows but the register "
                     "tile has %lld",
                     (long long)tl_tensor_dim(it, 0),
                     (long long)tl_tensor_dim(r, 0));
    return TL_FAILURE;
  }
  if (tl_op_num_operands(op) != n + 1) {
    tl_op_emit_error(op,
                     "the global tensor has %u dimensions, so the "
                     "index tile is followed by %u offsets, not %u",
                     n, n - 1, tl_op_num_operands(op) - 2);
    return TL_FAILURE;
  }
  for (unsigned d = 2; d <= n; d++)
    if (!is_index(otype(op, d)))
      return bad_type(op, "an offset", "an integer", otype(op, d));
  if (tl_type_bitwidth(tl_tensor_elem(r)) < 8) {
    tl_op_emit_error(op, "a gather reads whole bytes: sub-byte elements "
                         "have no address of their own");
    return TL_FAILURE;
  }
  if (tl_op_attr(op, "masked"))
    return TL_SUCCESS;
  for (unsigned d = 1; d < n; d++) {
    int64_t size = tl_tensor_dim(g, d), t = tl_tensor_dim(r, d);
    if (size >= 0 && t > size) {
      tl_op_emit_error(op,
                       "the register tile is larger than the global "
                       "tensor in dimension %u (%lld > %lld)",
                       d, (long long)t, (long long)size);
      return TL_FAILURE;
    }
  }
  return TL_SUCCESS;
}

/*===--- Shared memory ---------------------------------------------------===*/

static TlResult result_only_parse(TlParser *p, TlOpState *st) {
  TlType *t;
  if (TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(tl_parse_punct(p, ":")) || TL_FAILED(tl_parse_type(p, &t)))
    return TL_FAILURE;
  tl_op_state_add_result(st, t);
  return TL_SUCCESS;
}

static void result_only_print(TlPrinter *p, TlOp *op) {
  tl_print_attr_dict(p, op, NULL);
  tl_print_str(p, " : ");
  tl_print_type(p, rtype(op, 0));
}

static TlResult alloc_shared_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 0, 1)))
    return TL_FAILURE;
  if (tl_tensor_kind(rtype(op, 0)) != TL_TENSOR_SHARED)
    return bad_type(op, "the result", "a !tl.shared", rtype(op, 0));
  return TL_SUCCESS;
}

/* tl.alloc_global: a row-major global tensor of static shape, one per
 * launch, shared by every block and zero when the launch starts. */
static TlResult alloc_global_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 0, 1)))
    return TL_FAILURE;
  TlType *t = rtype(op, 0);
  if (tl_tensor_kind(t) != TL_TENSOR_GLOBAL)
    return bad_type(op, "the result", "a !tl.global", t);
  for (unsigned d = 0; d < tl_tensor_rank(t); d++)
    if (tl_tensor_dim(t, d) < 0) {
      tl_op_emit_error(op, "the workspace's size must be static, but dimension %u is dynamic",
                       d);
      return TL_FAILURE;
    }
  if (tl_global_type_strided(t)) {
    tl_op_emit_error(op, "the workspace is row-major: its type takes no strides");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/* `%a, %b {attrs} : T, U` with the types checked against the operands. */
static TlResult operands_parse(TlParser *p, TlOpState *st) {
  if (!tl_parser_peek_operand(p))
    return tl_parse_optional_attr_dict(p, st);
  return tl_parse_typed_operands(p, st, true);
}

static void operands_print(TlPrinter *p, TlOp *op) {
  tl_print_typed_operands(p, op, 0, true);
}

static TlResult free_shared_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 1, 0)))
    return TL_FAILURE;
  if (tl_tensor_kind(otype(op, 0)) != TL_TENSOR_SHARED)
    return bad_type(op, "the operand", "a !tl.shared", otype(op, 0));
  TlOp *d = tl_value_def(tl_op_operand(op, 0));
  if (!d || tl_op_id(d) != TL_OP_TL_ALLOC_SHARED) {
    /* A view (tl.slice, tl.permute, tl.reshape) shares its buffer. */
    if (d && tl_op_num_operands(d) > 0 &&
        tl_tensor_kind(otype(d, 0)) == TL_TENSOR_SHARED)
      tl_op_emit_error(op,
                       "frees only what tl.alloc_shared allocated, not a "
                       "view made by '%s'",
                       tl_op_name(d));
    else
      tl_op_emit_error(op, "frees only what tl.alloc_shared allocated");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

TlValue *tl_copy_async_ring(const TlOp *op) {
  unsigned n = tl_op_num_operands(op);
  if (tl_op_id(op) != TL_OP_TL_COPY_ASYNC || n < 4 ||
      !tl_type_is_ring(otype(op, n - 2)))
    return NULL;
  return tl_op_operand(op, n - 2);
}

/* `tl.copy_async %g[%i, %j], %s masked : G, S`, and through a ring
 * `tl.copy_async %tm[%i, %j], %s, %r[%k] : M, S, R`. */
static TlResult copy_async_parse(TlParser *p, TlOpState *st) {
  TlOperandRef g, s, r;
  TlValue *gv, *sv, *rv = NULL;
  if (TL_FAILED(tl_parse_operand(p, &g)) || TL_FAILED(resolve_any(p, &g, &gv)))
    return TL_FAILURE;
  TlOpState idx, step;
  tl_op_state_init(&idx, st->ctx, NULL, st->loc);
  tl_op_state_init(&step, st->ctx, NULL, st->loc);
  TlResult res = TL_FAILURE;
  if (TL_FAILED(parse_indices(p, &idx)) || TL_FAILED(tl_parse_punct(p, ",")) ||
      TL_FAILED(tl_parse_operand(p, &s)) || TL_FAILED(resolve_any(p, &s, &sv)))
    goto out;
  if (tl_parse_optional_punct(p, ",")) {
    if (TL_FAILED(tl_parse_operand(p, &r)) || TL_FAILED(resolve_any(p, &r, &rv)) ||
        TL_FAILED(parse_indices(p, &step)))
      goto out;
    if (step.operands.len != 1) {
      tl_parser_error(p, r.loc, "a ring takes one step index, not %zu",
                      step.operands.len);
      goto out;
    }
  }
  tl_op_state_add_operand(st, sv);
  tl_op_state_add_operand(st, gv);
  tl_op_state_add_operands(st, (unsigned)idx.operands.len, idx.operands.data);
  if (TL_FAILED(parse_masked_pair_types(p, st, g.loc, gv, sv)))
    goto out;
  if (rv) {
    TlType *rt;
    if (TL_FAILED(tl_parse_punct(p, ",")) || TL_FAILED(tl_parse_type(p, &rt)))
      goto out;
    if (rt != tl_value_type(rv)) {
      tl_parser_error(p, r.loc, "the operands do not have the types given after ':'");
      goto out;
    }
    tl_op_state_add_operand(st, rv);
    tl_op_state_add_operands(st, 1, step.operands.data);
  }
  res = TL_SUCCESS;
out:
  tl_op_state_free(&idx);
  tl_op_state_free(&step);
  return res;
}

static void copy_async_print(TlPrinter *p, TlOp *op) {
  TlValue *ring = tl_copy_async_ring(op);
  unsigned n = tl_op_num_operands(op) - (ring ? 2 : 0);
  tl_print_str(p, " ");
  tl_print_operand(p, tl_op_operand(op, 1));
  tl_print_str(p, "[");
  for (unsigned i = 2; i < n; i++) {
    if (i > 2)
      tl_print_str(p, ", ");
    tl_print_operand(p, tl_op_operand(op, i));
  }
  tl_print_str(p, "], ");
  tl_print_operand(p, tl_op_operand(op, 0));
  if (ring) {
    tl_print_str(p, ", ");
    tl_print_operand(p, ring);
    tl_print_str(p, "[");
    tl_print_operand(p, tl_op_operand(op, n + 1));
    tl_print_str(p, "]");
  }
  print_flags(p, op, masked_flag);
  tl_print_attr_dict(p, op, masked_flag);
  tl_print_str(p, " : ");
  tl_print_type(p, otype(op, 1));
  tl_print_str(p, ", ");
  tl_print_type(p, otype(op, 0));
  if (ring) {
    tl_print_str(p, ", ");
    tl_print_type(p, tl_value_type(ring));
  }
}

/* `tl.copy_async %tm[%i, %j], %s : !tl.tensormap<...>, !tl.shared<...>`:
 * a TMA copy of the map's box at element coordinates (outermost first)
 * into a shared tile shaped and laid out as TMA leaves the box. */
static TlResult copy_tma_verify(TlOp *op) {
  TlType *s = otype(op, 0), *m = otype(op, 1);
  if (tl_op_attr(op, "masked") || tl_op_attr(op, "cache")) {
    tl_op_emit_error(op, "a copy through a tensor map takes neither 'masked' "
                         "(elements outside the tensor are always 0) nor "
                         "'cache'");
    return TL_FAILURE;
  }
  TlValue *mv = tl_op_operand(op, 1);
  TlBlock *owner = tl_value_block(mv);
  TlOp *fn = owner ? tl_block_parent_op(owner) : NULL;
  if (!fn || (tl_op_id(fn) != TL_OP_TL_KERNEL &&
              tl_op_id(fn) != TL_OP_BUILTIN_FUNC)) {
    tl_op_emit_error(op, "the tensor map must be a parameter of the kernel");
    return TL_FAILURE;
  }
  if (tl_tensor_kind(s) != TL_TENSOR_SHARED)
    return bad_type(op, "the destination", "a !tl.shared", s);
  unsigned rank = tl_tensormap_rank(m);
  if (tl_tensormap_elem(m) != tl_tensor_elem(s)) {
    char *a = type_text(tl_tensormap_elem(m)), *b = type_text(tl_tensor_elem(s));
    tl_op_emit_error(op, "the tensor map holds %s but the shared tile holds %s",
                     a, b);
    tl_free(a);
    tl_free(b);
    return TL_FAILURE;
  }
  if (tl_tensor_rank(s) != rank) {
    tl_op_emit_error(op,
                     "the tensor map has %u dimensions but the shared tile "
                     "has %u",
                     rank, tl_tensor_rank(s));
    return TL_FAILURE;
  }
  unsigned n = tl_op_num_operands(op) - 2 - (tl_copy_async_ring(op) ? 2 : 0);
  if (n != rank) {
    tl_op_emit_error(op,
                     "the tensor map has %u dimensions but %u coordinates "
                     "are given",
                     rank, n);
    return TL_FAILURE;
  }
  for (unsigned i = 0; i < n; i++)
    if (!is_index(otype(op, 2 + i)))
      return bad_type(op, "a coordinate", "an integer", otype(op, 2 + i));
  TlStr box = {0}, shape = {0};
  bool same = true;
  for (unsigned i = 0; i < rank; i++) {
    tl_str_printf(&box, "%s%lld", i ? ", " : "",
                  (long long)tl_tensormap_box(m, i));
    same = same && tl_tensormap_box(m, i) == tl_tensor_dim(s, i);
  }
  if (!same) {
    print_shape_list(&shape, s);
    tl_op_emit_error(op,
                     "the shared tile has shape %s, but the tensor map's "
                     "box is [%s]",
                     tl_str_cstr(&shape), tl_str_cstr(&box));
  }
  tl_str_free(&box);
  tl_str_free(&shape);
  if (!same)
    return TL_FAILURE;
  /* The tile's element layout must be the one TMA writes (the layout
   * library's values compare: canonical layouts are zero-padded). */
  TlSharedLayout want, got;
  if (!tl_tensormap_box_layout(m, &want) ||
      !tl_shared_type_layout(s, &got, NULL) || memcmp(&want, &got, sizeof want)) {
    TlStr w = {0};
    tl_shared_layout_print(&want, &w);
    int b = want.swizzle_bits, mm = want.swizzle_base, sh = want.swizzle_shift;
    if (b)
      tl_op_emit_error(op,
                       "the shared tile's layout is not the one TMA writes "
                       "the box in: row-major with swizzle<%d, %d, %d> (%s)",
                       b, mm, sh, tl_str_cstr(&w));
    else
      tl_op_emit_error(op,
                       "the shared tile's layout is not the one TMA writes "
                       "the box in: row-major, unswizzled (%s)",
                       tl_str_cstr(&w));
    tl_str_free(&w);
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

typedef struct TmaScan {
  bool tma;        /* a copy through a tensor map was seen */
  int64_t pending; /* the largest N of a tl.copy_async_wait N */
} TmaScan;

static void scan_tma(TlOp *op, void *user) {
  TmaScan *s = user;
  if (tl_op_id(op) == TL_OP_TL_COPY_ASYNC && tl_op_num_operands(op) > 1 &&
      tl_type_is_tensormap(otype(op, 1)) && !tl_copy_async_ring(op))
    s->tma = true;
  TlAttr *n = tl_op_id(op) == TL_OP_TL_COPY_ASYNC_WAIT
                  ? tl_op_attr(op, "pending")
                  : NULL;
  if (n && tl_attr_kind(n) == TL_ATTR_INT && tl_attr_int_value(n) > s->pending)
    s->pending = tl_attr_int_value(n);
}

/* Eight barriers at least: a kernel may commit a few groups before its
 * first wait (a prologue) whatever its N. */
unsigned tl_kernel_tma_ring(TlOp *kernel) {
  TmaScan s = {false, 0};
  tl_op_walk(kernel, scan_tma, &s, false);
  if (!s.tma)
    return 0;
  return s.pending + 1 > 8 ? (unsigned)s.pending + 1 : 8;
}

static TlResult copy_async_verify(TlOp *op) {
  if (tl_op_num_results(op) != 0 || tl_op_num_operands(op) < 2) {
    tl_op_emit_error(op, "takes a shared tile, a global tensor and offsets");
    return TL_FAILURE;
  }
  TlType *s = otype(op, 0), *g = otype(op, 1);
  TlValue *ring = tl_copy_async_ring(op);
  if (ring && !is_index(otype(op, tl_op_num_operands(op) - 1)))
    return bad_type(op, "the ring's step", "an integer",
                    otype(op, tl_op_num_operands(op) - 1));
  if (ring && !tl_type_is_tensormap(g)) {
    tl_op_emit_error(op, "only a copy through a tensor map (TMA) fills a "
                         "ring's slot");
    return TL_FAILURE;
  }
  if (tl_type_is_tensormap(g))
    return copy_tma_verify(op);
  if (tl_tensor_kind(s) != TL_TENSOR_SHARED)
    return bad_type(op, "the destination", "a !tl.shared", s);
  if (tl_tensor_kind(g) != TL_TENSOR_GLOBAL)
    return bad_type(op, "the source", "a !tl.global", g);
  if (tl_tensor_elem(s) != tl_tensor_elem(g)) {
    tl_op_emit_error(op, "source and destination element types differ");
    return TL_FAILURE;
  }
  if (tl_tensor_rank(s) != tl_tensor_rank(g)) {
    tl_op_emit_error(op, "source and destination ranks differ (%u vs %u)",
                     tl_tensor_rank(g), tl_tensor_rank(s));
    return TL_FAILURE;
  }
  if (TL_FAILED(check_masked(op, true)) ||
      TL_FAILED(check_indices(op, 2, g, "the global tensor")))
    return TL_FAILURE;
  /* `cache`: the L2 eviction priority of the copied lines (a hint). */
  TlAttr *c = tl_op_attr(op, "cache");
  const char *cs = c && tl_attr_kind(c) == TL_ATTR_STRING
                       ? tl_attr_string_value(c, NULL)
                       : NULL;
  if (c && (!cs || (strcmp(cs, "evict_first") && strcmp(cs, "evict_last") &&
                    strcmp(cs, "evict_normal")))) {
    tl_op_emit_error(op, "'cache' must be \"evict_first\", \"evict_last\" or "
                         "\"evict_normal\"");
    return TL_FAILURE;
  }
  return check_bounds(op, 2, g, "the global tensor", s, "the shared tile");
}

/*===--- Rings -----------------------------------------------------------===*/

static TlResult alloc_ring_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 0, 1)))
    return TL_FAILURE;
  if (!tl_type_is_ring(rtype(op, 0)))
    return bad_type(op, "the result", "a !tl.ring", rtype(op, 0));
  return TL_SUCCESS;
}

/* `%r[%k] [attr-dict] : R` */
static TlResult ring_op_parse(TlParser *p, TlOpState *st) {
  TlOperandRef r;
  TlValue *rv;
  TlType *t;
  if (TL_FAILED(tl_parse_operand(p, &r)) || TL_FAILED(resolve_any(p, &r, &rv)))
    return TL_FAILURE;
  tl_op_state_add_operand(st, rv);
  size_t before = st->operands.len;
  if (TL_FAILED(parse_indices(p, st)))
    return TL_FAILURE;
  if (st->operands.len - before != 1) {
    tl_parser_error(p, r.loc, "a ring takes one step index, not %zu",
                    st->operands.len - before);
    return TL_FAILURE;
  }
  if (TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(tl_parse_punct(p, ":")) || TL_FAILED(tl_parse_type(p, &t)))
    return TL_FAILURE;
  if (t != tl_value_type(rv)) {
    tl_parser_error(p, r.loc, "the operands do not have the types given after ':'");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

static void ring_op_print(TlPrinter *p, TlOp *op) {
  tl_print_str(p, " ");
  tl_print_operand(p, tl_op_operand(op, 0));
  print_indices(p, op, 1);
  tl_print_attr_dict(p, op, NULL);
  tl_print_str(p, " : ");
  tl_print_type(p, otype(op, 0));
}

static TlResult ring_op_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 2, 0)))
    return TL_FAILURE;
  if (!tl_type_is_ring(otype(op, 0)))
    return bad_type(op, "operand #0", "a !tl.ring", otype(op, 0));
  if (!is_index(otype(op, 1)))
    return bad_type(op, "the step", "an integer", otype(op, 1));
  return TL_SUCCESS;
}

/* `tl.copy_async_wait 0`. Kernels keep a handful of stages in flight; the
 * bound keeps the number within what the hardware encodes. */
enum { MAX_PENDING = 64 };

static TlResult wait_parse(TlParser *p, TlOpState *st) {
  int64_t n;
  TlLoc l = tl_parser_loc(p);
  if (TL_FAILED(tl_parse_int(p, &n)))
    return TL_FAILURE;
  if (n < 0 || n > MAX_PENDING) {
    tl_parser_error(p, l, "the number of groups left pending must be 0..%d",
                    MAX_PENDING);
    return TL_FAILURE;
  }
  tl_op_state_set_attr(st, "pending",
                       tl_attr_int(st->ctx, tl_type_int(st->ctx, 64, true), n));
  return tl_parse_optional_attr_dict(p, st);
}

static void wait_print(TlPrinter *p, TlOp *op) {
  static const char *const elided[] = {"pending", NULL};
  tl_printf(p, " %lld",
            (long long)tl_attr_int_value(tl_op_attr(op, "pending")));
  tl_print_attr_dict(p, op, elided);
}

static TlResult wait_verify(TlOp *op) {
  TlAttr *n = tl_op_attr(op, "pending");
  if (TL_FAILED(counts(op, 0, 0)))
    return TL_FAILURE;
  /* The custom form's bound, so that every valid op prints and parses. */
  if (!n || tl_attr_kind(n) != TL_ATTR_INT || tl_attr_int_value(n) < 0 ||
      tl_attr_int_value(n) > MAX_PENDING) {
    tl_op_emit_error(op, "requires an integer 'pending' between 0 and %d",
                     MAX_PENDING);
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

static TlResult no_operands_verify(TlOp *op) { return counts(op, 0, 0); }

/* tl.set_max_registers {count = N, action = "inc" | "dec"}: simt.setmaxnreg's
 * rules (N a multiple of 8 from 24 to 256), with its messages. */
static TlResult set_max_registers_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 0, 0)))
    return TL_FAILURE;
  static const char *const names[] = {"count", "action"};
  static const TlAttrKind kinds[] = {TL_ATTR_INT, TL_ATTR_STRING};
  for (unsigned i = 0; i < 2; i++) {
    TlAttr *a = tl_op_attr(op, names[i]);
    if (!a) {
      tl_op_emit_error(op, "requires attribute '%s'", names[i]);
      return TL_FAILURE;
    }
    if (tl_attr_kind(a) != kinds[i]) {
      tl_op_emit_error(op, "attribute '%s' must be %s", names[i],
                       i ? "a string" : "an integer");
      return TL_FAILURE;
    }
  }
  int64_t n = tl_attr_int_value(tl_op_attr(op, "count"));
  if (n < TL_SETMAXNREG_MIN || n > TL_SETMAXNREG_MAX ||
      n % TL_SETMAXNREG_STEP) {
    tl_op_emit_error(op,
                     "'count' must be a multiple of %d from %d to %d, not "
                     "%lld",
                     TL_SETMAXNREG_STEP, TL_SETMAXNREG_MIN, TL_SETMAXNREG_MAX,
                     (long long)n);
    return TL_FAILURE;
  }
  const char *act = tl_attr_string_value(tl_op_attr(op, "action"), NULL);
  if (strcmp(act, "inc") && strcmp(act, "dec")) {
    tl_op_emit_error(op, "'action' must be \"inc\" or \"dec\"");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

static TlResult print_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 1, 0)))
    return TL_FAILURE;
  TlType *t = otype(op, 0);
  if (!tl_type_is_scalar(t) && !is_reg(t))
    return bad_type(op, "the operand", "a scalar or a !tl.reg", t);
  return TL_SUCCESS;
}

/*===--- Elementwise -----------------------------------------------------===*/

typedef enum EwKind { EW_ANY, EW_INT, EW_FLOAT } EwKind;

/* An elided result type the op could not derive: why, and the syntax to
 * write instead. */
static TlResult cannot_infer(TlParser *p, TlLoc loc, const char *why,
                             const char *write) {
  tl_parser_error(p, loc, "cannot infer the result type: %s; write '%s'", why,
                  write);
  return TL_FAILURE;
}

/* Operand r, of type t, must be a register tile for an elided result type
 * to derive from it; otherwise an error at r (`write` as cannot_infer). */
static TlResult tile_operand(TlParser *p, const TlOperandRef *r,
                             const TlType *t, const char *write) {
  if (is_reg(t))
    return TL_SUCCESS;
  char *s = type_text(t);
  tl_parser_error(p, r->loc,
                  "cannot infer the result type: '%%%s' has type %s, not a "
                  "!tl.reg tile; write '%s'",
                  r->name, s, write);
  tl_free(s);
  return TL_FAILURE;
}

/* The type of an elided `: R`: that of the operand r, a register tile. */
static TlResult inferred_tile(TlParser *p, const TlOperandRef *r,
                              TlType **out) {
  TlValue *v;
  if (TL_FAILED(tl_parser_lookup(p, r, &v)) ||
      TL_FAILED(tile_operand(p, r, tl_value_type(v), ": R")))
    return TL_FAILURE;
  *out = tl_value_type(v);
  return TL_SUCCESS;
}

/* `%a, %b [attr-dict] [: R]`: without R, the operands and the result
 * have the first operand's type. */
static TlResult same_type_parse(TlParser *p, TlOpState *st) {
  TlOperandRefVec refs = {0};
  TlType *t;
  TlResult r = TL_FAILURE;
  TlLoc l = tl_parser_loc(p);
  if (TL_FAILED(tl_parse_operand_list(p, &refs)) ||
      TL_FAILED(tl_parse_optional_attr_dict(p, st)))
    goto out;
  if (refs.len == 0) {
    tl_parser_error(p, l, "expected operands");
    goto out;
  }
  if (tl_parse_optional_punct(p, ":")
          ? TL_FAILED(tl_parse_type(p, &t))
          : TL_FAILED(inferred_tile(p, &refs.data[0], &t)))
    goto out;
  if (TL_FAILED(tl_parser_resolve_operands(p, st, (unsigned)refs.len, refs.data,
                                           1, &t)))
    goto out;
  tl_op_state_add_result(st, t);
  r = TL_SUCCESS;
out:
  tl_vec_free(&refs);
  return r;
}

static void same_type_print(TlPrinter *p, TlOp *op) {
  tl_print_str(p, " ");
  for (unsigned i = 0; i < tl_op_num_operands(op); i++) {
    if (i)
      tl_print_str(p, ", ");
    tl_print_operand(p, tl_op_operand(op, i));
  }
  tl_print_attr_dict(p, op, NULL);
  tl_print_str(p, " : ");
  tl_print_type(p, rtype(op, 0));
}

/* The operand count is the op's table row's (checked before this runs);
 * kind restricts the element type. */
static TlResult ew_check(TlOp *op, EwKind kind) {
  TlType *t = rtype(op, 0);
  if (!is_reg(t))
    return bad_type(op, "the result", "a !tl.reg", t);
  for (unsigned i = 0; i < tl_op_num_operands(op); i++)
    if (otype(op, i) != t) {
      char *a = type_text(otype(op, i)), *b = type_text(t);
      tl_op_emit_error(op, "operand #%u has type %s but the result has %s", i,
                       a, b);
      tl_free(a);
      tl_free(b);
      return TL_FAILURE;
    }
  TlType *e = tl_tensor_elem(t);
  if (kind == EW_INT && (!tl_type_is_int(e)))
    return bad_type(op, "the element type", "an integer", e);
  if (kind == EW_FLOAT && !tl_type_is_float(e))
    return bad_type(op, "the element type", "a float", e);
  return TL_SUCCESS;
}

static TlResult ew_any_verify(TlOp *op) { return ew_check(op, EW_ANY); }
static TlResult ew_int_verify(TlOp *op) { return ew_check(op, EW_INT); }
static TlResult ew_float_verify(TlOp *op) { return ew_check(op, EW_FLOAT); }

/* tl.fma: the elementwise rule, of f16, bf16 or f32 (the types with a
 * fused multiply-add instruction). */
static TlResult ew_fma_verify(TlOp *op) {
  if (TL_FAILED(ew_check(op, EW_FLOAT)))
    return TL_FAILURE;
  TlType *e = tl_tensor_elem(rtype(op, 0));
  TlContext *c = tl_op_context(op);
  if (e != tl_type_f16(c) && e != tl_type_bf16(c) && e != tl_type_f32(c))
    return bad_type(op, "the element type", "f16, bf16 or f32", e);
  return TL_SUCCESS;
}

static TlResult cmp_parse(TlParser *p, TlOpState *st) {
  const char *pred;
  TlLoc l = tl_parser_loc(p);
  TlOperandRef a, b;
  TlType *t;
  TlValue *va, *vb;
  if (TL_FAILED(tl_parse_identifier(p, &pred)))
    return TL_FAILURE;
  if (tl_cmpi_predicate_by_name(pred) == TL_CMPI_UNKNOWN) {
    tl_parser_error(p, l, "unknown comparison '%s' (eq ne lt le gt ge)", pred);
    return TL_FAILURE;
  }
  if (TL_FAILED(tl_parse_punct(p, ",")) || TL_FAILED(tl_parse_operand(p, &a)) ||
      TL_FAILED(tl_parse_punct(p, ",")) || TL_FAILED(tl_parse_operand(p, &b)) ||
      TL_FAILED(tl_parse_optional_attr_dict(p, st)))
    return TL_FAILURE;
  /* Without `: R`, R is %a's type. */
  bool typed = tl_parse_optional_punct(p, ":");
  if (typed ? TL_FAILED(tl_parse_type(p, &t))
            : TL_FAILED(tl_parser_lookup(p, &a, &va)))
    return TL_FAILURE;
  if (!typed)
    t = tl_value_type(va);
  if (TL_FAILED(tl_parser_resolve(p, &a, t, &va)) ||
      TL_FAILED(tl_parser_resolve(p, &b, t, &vb)))
    return TL_FAILURE;
  if (!is_reg(t)) {
    tl_parser_error(p, l, "tl.cmp compares !tl.reg tiles");
    return TL_FAILURE;
  }
  tl_op_state_add_operand(st, va);
  tl_op_state_add_operand(st, vb);
  tl_op_state_set_attr(st, "predicate",
                       tl_attr_string(st->ctx, pred, strlen(pred)));
  int64_t dims[TL_LAYOUT_MAX_RANK];
  for (unsigned i = 0; i < tl_tensor_rank(t); i++)
    dims[i] = tl_tensor_dim(t, i);
  tl_op_state_add_result(st, tl_reg_type_get(st->ctx, tl_tensor_rank(t), dims,
                                             tl_type_bool(st->ctx),
                                             tl_reg_layout(t)));
  return TL_SUCCESS;
}

static void cmp_print(TlPrinter *p, TlOp *op) {
  static const char *const elided[] = {"predicate", NULL};
  tl_printf(p, " %s, ",
            tl_attr_string_value(tl_op_attr(op, "predicate"), NULL));
  tl_print_operand(p, tl_op_operand(op, 0));
  tl_print_str(p, ", ");
  tl_print_operand(p, tl_op_operand(op, 1));
  tl_print_attr_dict(p, op, elided);
  tl_print_str(p, " : ");
  tl_print_type(p, otype(op, 0));
}

static TlResult cmp_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 2, 1)))
    return TL_FAILURE;
  if (tl_cmpi_predicate_of(op) == TL_CMPI_UNKNOWN) {
    tl_op_emit_error(op, "requires a 'predicate' among eq ne lt le gt ge");
    return TL_FAILURE;
  }
  TlType *t = otype(op, 0), *r = rtype(op, 0);
  if (!is_reg(t))
    return bad_type(op, "the operands", "!tl.reg tiles", t);
  if (otype(op, 1) != t) {
    tl_op_emit_error(op, "both operands must have the same type");
    return TL_FAILURE;
  }
  if (!is_reg(r) || !tl_type_is_bool(tl_tensor_elem(r)))
    return bad_type(op, "the result", "a !tl.reg of i1", r);
  if (TL_FAILED(same_shape(op, "the result", r, "each operand", t)) ||
      TL_FAILED(same_layout(op, "the result", r, "each operand", t)))
    return TL_FAILURE;
  return TL_SUCCESS;
}

/* `tl.where %c, %a, %b [: R]`: without R, R is %a's type. */
static TlResult where_parse(TlParser *p, TlOpState *st) {
  TlOperandRef c, a, b;
  TlValue *vc, *va, *vb;
  TlType *t;
  if (TL_FAILED(tl_parse_operand(p, &c)) || TL_FAILED(tl_parse_punct(p, ",")) ||
      TL_FAILED(tl_parse_operand(p, &a)) || TL_FAILED(tl_parse_punct(p, ",")) ||
      TL_FAILED(tl_parse_operand(p, &b)) ||
      TL_FAILED(tl_parse_optional_attr_dict(p, st)))
    return TL_FAILURE;
  if (tl_parse_optional_punct(p, ":") ? TL_FAILED(tl_parse_type(p, &t))
                                      : TL_FAILED(inferred_tile(p, &a, &t)))
    return TL_FAILURE;
  if (TL_FAILED(resolve_any(p, &c, &vc)) ||
      TL_FAILED(tl_parser_resolve(p, &a, t, &va)) ||
      TL_FAILED(tl_parser_resolve(p, &b, t, &vb)))
    return TL_FAILURE;
  tl_op_state_add_operand(st, vc);
  tl_op_state_add_operand(st, va);
  tl_op_state_add_operand(st, vb);
  tl_op_state_add_result(st, t);
  return TL_SUCCESS;
}

static TlResult where_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 3, 1)))
    return TL_FAILURE;
  TlType *c = otype(op, 0), *t = rtype(op, 0);
  if (!is_reg(t))
    return bad_type(op, "the result", "a !tl.reg", t);
  if (otype(op, 1) != t || otype(op, 2) != t) {
    tl_op_emit_error(op, "both choices and the result must have the same type");
    return TL_FAILURE;
  }
  if (!is_reg(c) || !tl_type_is_bool(tl_tensor_elem(c)))
    return bad_type(op, "the condition", "a !tl.reg of i1", c);
  if (TL_FAILED(same_shape(op, "the condition", c, "the result", t)) ||
      TL_FAILED(same_layout(op, "the condition", c, "the result", t)))
    return TL_FAILURE;
  return TL_SUCCESS;
}

/*===--- Conversions: broadcast, cast, view, reshape ---------------------===*/

/* `%src : From -> To` */
static TlResult convert_parse(TlParser *p, TlOpState *st) {
  TlOperandRef a;
  TlValue *v;
  TlType *from, *to;
  if (TL_FAILED(tl_parse_operand(p, &a)) ||
      TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(tl_parse_punct(p, ":")) || TL_FAILED(tl_parse_type(p, &from)) ||
      TL_FAILED(tl_parse_punct(p, "->")) || TL_FAILED(tl_parse_type(p, &to)) ||
      TL_FAILED(tl_parser_resolve(p, &a, from, &v)))
    return TL_FAILURE;
  tl_op_state_add_operand(st, v);
  tl_op_state_add_result(st, to);
  return TL_SUCCESS;
}

static void convert_print(TlPrinter *p, TlOp *op) {
  tl_print_str(p, " ");
  tl_print_operand(p, tl_op_operand(op, 0));
  tl_print_attr_dict(p, op, NULL);
  tl_print_str(p, " : ");
  tl_print_type(p, otype(op, 0));
  tl_print_str(p, " -> ");
  tl_print_type(p, rtype(op, 0));
}

static TlResult broadcast_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 1, 1)))
    return TL_FAILURE;
  TlType *s = otype(op, 0), *t = rtype(op, 0);
  if (!is_reg(t))
    return bad_type(op, "the result", "a !tl.reg", t);
  if (tl_type_is_scalar(s)) {
    if (s != tl_tensor_elem(t)) {
      tl_op_emit_error(op, "the scalar must have the element type of the "
                           "result");
      return TL_FAILURE;
    }
    return TL_SUCCESS;
  }
  if (!is_reg(s))
    return bad_type(op, "the operand", "a scalar or a !tl.reg", s);
  if (tl_tensor_elem(s) != tl_tensor_elem(t) ||
      tl_tensor_rank(s) != tl_tensor_rank(t)) {
    tl_op_emit_error(op, "operand and result need the same element type and "
                         "rank");
    return TL_FAILURE;
  }
  for (unsigned i = 0; i < tl_tensor_rank(s); i++)
    if (tl_tensor_dim(s, i) != 1 &&
        tl_tensor_dim(s, i) != tl_tensor_dim(t, i)) {
      tl_op_emit_error(op,
                       "dimension %u of size %lld cannot broadcast to "
                       "%lld (only size 1 broadcasts)",
                       i, (long long)tl_tensor_dim(s, i),
                       (long long)tl_tensor_dim(t, i));
      return TL_FAILURE;
    }
  return TL_SUCCESS;
}

/* tl.cast's layouts: equal, or each thread holds the same elements of
 * both, in any order (the cast reorders them within the thread's
 * registers; no element moves between threads). */
static TlResult same_elements(TlOp *op, const TlType *a, const TlType *r) {
  const TlLayout *la = tl_reg_layout(a), *lr = tl_reg_layout(r);
  if (tl_layout_equal(la, lr))
    return TL_SUCCESS;
  int64_t *perm =
      tl_xcalloc((size_t)tl_layout_local_size(lr) + 1, sizeof *perm);
  bool ok = tl_layout_reorder(la, lr, perm) >= 0;
  tl_free(perm);
  if (ok)
    return TL_SUCCESS;
  TlStr x = {0}, y = {0};
  tl_layout_print(la, &x);
  tl_layout_print(lr, &y);
  tl_op_emit_error(op,
                   "the operand has layout %s but the result has layout %s, "
                   "which does not give every thread the same elements",
                   tl_str_cstr(&x), tl_str_cstr(&y));
  tl_str_free(&x);
  tl_str_free(&y);
  return TL_FAILURE;
}

static const char *const rounding_names[] = {"rz", "rn", "rm", "rp"};

const char *tl_rounding_name(TlRounding r) {
  return (unsigned)r < 4 ? rounding_names[r] : "?";
}

bool tl_cast_rounding(const TlOp *op, TlRounding *out) {
  *out = TL_ROUND_RZ;
  TlAttr *a = tl_op_attr(op, "rounding");
  if (!a)
    return true;
  if (tl_attr_kind(a) != TL_ATTR_STRING)
    return false;
  size_t len;
  const char *s = tl_attr_string_value(a, &len);
  for (unsigned i = 0; i < 4; i++)
    if (len == 2 && !memcmp(s, rounding_names[i], 2)) {
      *out = (TlRounding)i;
      return true;
    }
  return false;
}

/* tl.cast's "rounding": one of the four modes, on a float -> integer cast
 * (a bool result takes none: any nonzero value is true). */
static TlResult rounding_verify(TlOp *op, const TlType *a, const TlType *r) {
  TlAttr *at = tl_op_attr(op, "rounding");
  if (!at)
    return TL_SUCCESS;
  TlRounding mode;
  if (!tl_cast_rounding(op, &mode)) {
    if (tl_attr_kind(at) != TL_ATTR_STRING) {
      tl_op_emit_error(op, "'rounding' must be a string");
      return TL_FAILURE;
    }
    tl_op_emit_error(op,
                     "'rounding' must be \"rn\", \"rz\", \"rm\" or "
                     "\"rp\", not \"%s\"",
                     tl_attr_string_value(at, NULL));
    return TL_FAILURE;
  }
  TlType *ea = tl_tensor_elem(a), *er = tl_tensor_elem(r);
  if (!tl_type_is_float(ea) || !tl_type_is_int(er) || tl_type_is_bool(er)) {
    TlStr x = {0}, y = {0};
    tl_type_print(ea, &x);
    tl_type_print(er, &y);
    tl_op_emit_error(op,
                     "'rounding' applies to casts from a float to an "
                     "integer, not from %s to %s",
                     tl_str_cstr(&x), tl_str_cstr(&y));
    tl_str_free(&x);
    tl_str_free(&y);
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

static TlResult cast_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 1, 1)))
    return TL_FAILURE;
  TlType *a = otype(op, 0), *r = rtype(op, 0);
  if (!is_reg(a))
    return bad_type(op, "the operand", "a !tl.reg", a);
  if (!is_reg(r))
    return bad_type(op, "the result", "a !tl.reg", r);
  if (TL_FAILED(same_shape(op, "the operand", a, "the result", r)) ||
      TL_FAILED(rounding_verify(op, a, r)))
    return TL_FAILURE;
  return same_elements(op, a, r);
}

static TlResult view_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 1, 1)))
    return TL_FAILURE;
  TlType *a = otype(op, 0), *r = rtype(op, 0);
  if (!is_reg(a))
    return bad_type(op, "the operand", "a !tl.reg", a);
  if (!is_reg(r))
    return bad_type(op, "the result", "a !tl.reg", r);
  const TlLayout *la = tl_reg_layout(a), *lr = tl_reg_layout(r);
  int64_t ta = tl_layout_num_threads(la), tr = tl_layout_num_threads(lr);
  if (ta != tr) {
    tl_op_emit_error(op,
                     "the operand is spread over %lld threads but the "
                     "result over %lld",
                     (long long)ta, (long long)tr);
    return TL_FAILURE;
  }
  int64_t ba = tl_layout_local_size(la) * tl_type_bitwidth(tl_tensor_elem(a));
  int64_t br = tl_layout_local_size(lr) * tl_type_bitwidth(tl_tensor_elem(r));
  if (ba != br) {
    tl_op_emit_error(op,
                     "each thread holds %lld bits of the operand (%lld x "
                     "%u) but %lld bits of the result (%lld x %u)",
                     (long long)ba, (long long)tl_layout_local_size(la),
                     tl_type_bitwidth(tl_tensor_elem(a)), (long long)br,
                     (long long)tl_layout_local_size(lr),
                     tl_type_bitwidth(tl_tensor_elem(r)));
    return TL_FAILURE;
  }
  if (tl_layout_replication(la) != 1 || tl_layout_replication(lr) != 1) {
    tl_op_emit_error(op, "views of replicated layouts are not supported");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/* One tile in, one out, both register tiles or both shared tiles (views of
 * one buffer), of one element type (reshape, permute, slice). */
static bool same_kind_tiles(const TlType *a, const TlType *r) {
  TlTensorKind k = tl_tensor_kind(a);
  return (k == TL_TENSOR_REG || k == TL_TENSOR_SHARED) &&
         tl_tensor_kind(r) == k && tl_tensor_elem(a) == tl_tensor_elem(r);
}

static TlResult same_elem_tiles(TlOp *op) {
  if (TL_FAILED(counts(op, 1, 1)))
    return TL_FAILURE;
  if (!same_kind_tiles(otype(op, 0), rtype(op, 0))) {
    tl_op_emit_error(op, "operand and result must be !tl.reg tiles or "
                         "!tl.shared tiles of one element type");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/* The result's layout must be `want`, which the op derives from the
 * operand's: `the <what> layout is ..., not ...` otherwise. */
static TlResult derived_layout(TlOp *op, const TlLayout *want,
                               const char *what) {
  const TlLayout *have = tl_reg_layout(rtype(op, 0));
  if (tl_layout_equal(want, have))
    return TL_SUCCESS;
  TlStr s = {0}, h = {0};
  tl_layout_print(want, &s);
  tl_layout_print(have, &h);
  tl_op_emit_error(op, "the %s layout is %s, not %s", what, tl_str_cstr(&s),
                   tl_str_cstr(&h));
  tl_str_free(&s);
  tl_str_free(&h);
  return TL_FAILURE;
}

/* The same for a shared result: its element layout (from its options or
 * its #tl.smem) must be `want`. */
static TlResult derived_shared_layout(TlOp *op, const TlSharedLayout *want,
                                      const char *what) {
  TlSharedLayout have;
  if (!tl_shared_type_layout(rtype(op, 0), &have, NULL))
    TL_UNREACHABLE("a !tl.shared type has a layout");
  if (tl_shared_layout_equal(want, &have))
    return TL_SUCCESS;
  TlStr s = {0}, h = {0};
  tl_shared_layout_print(want, &s);
  tl_shared_layout_print(&have, &h);
  tl_op_emit_error(op, "the %s layout is %s, not %s", what, tl_str_cstr(&s),
                   tl_str_cstr(&h));
  tl_str_free(&s);
  tl_str_free(&h);
  return TL_FAILURE;
}

/* The element layout of the shared operand #0. */
static TlSharedLayout operand_smem(TlOp *op) {
  TlSharedLayout l;
  if (!tl_shared_type_layout(otype(op, 0), &l, NULL))
    TL_UNREACHABLE("a !tl.shared type has a layout");
  return l;
}

static TlResult reshape_verify(TlOp *op) {
  if (TL_FAILED(same_elem_tiles(op)))
    return TL_FAILURE;
  TlType *a = otype(op, 0), *r = rtype(op, 0);
  int64_t dims[TL_LAYOUT_MAX_RANK];
  for (unsigned i = 0; i < tl_tensor_rank(r); i++)
    dims[i] = tl_tensor_dim(r, i);
  TlErr err;
  if (tl_tensor_kind(a) == TL_TENSOR_SHARED) {
    TlSharedLayout from = operand_smem(op), want;
    if (!tl_shared_layout_reshape(&want, &from, (int)tl_tensor_rank(r), dims,
                                  &err)) {
      tl_op_emit_error(op, "invalid reshape: %s", err.msg);
      return TL_FAILURE;
    }
    return derived_shared_layout(op, &want, "reshaped");
  }
  TlLayout want;
  if (!tl_layout_reshape(&want, tl_reg_layout(a), (int)tl_tensor_rank(r), dims,
                         &err)) {
    tl_op_emit_error(op, "invalid reshape: %s", err.msg);
    return TL_FAILURE;
  }
  return derived_layout(op, &want, "reshaped");
}

/* A "perm" attribute's dimension indices, for a tile of the given rank;
 * false when it is not an array of rank in-range integers. */
static bool perm_values(const TlAttr *a, unsigned rank, int *perm) {
  if (!a || tl_attr_kind(a) != TL_ATTR_ARRAY || tl_attr_array_size(a) != rank)
    return false;
  for (unsigned i = 0; i < tl_attr_array_size(a); i++) {
    TlAttr *e = tl_attr_array_elem(a, i);
    if (tl_attr_kind(e) != TL_ATTR_INT)
      return false;
    int64_t x = tl_attr_int_value(e);
    if (x < 0 || x >= TL_LAYOUT_MAX_RANK)
      return false;
    perm[i] = (int)x;
  }
  return true;
}

/* The permutation of an op whose "perm" attribute the verifier accepted. */
bool tl_permute_perm(TlOp *op, int *perm) {
  return perm_values(tl_op_attr(op, "perm"), tl_tensor_rank(otype(op, 0)),
                     perm);
}

/* tl.permute's result layout for the register tile a (out) or the shared
 * tile a (sout, its element layout): what the verifier requires and an
 * elided result type is made of. */
static bool permuted_layout(TlLayout *out, TlSharedLayout *sout,
                            const TlType *a, const int *perm, TlErr *err) {
  TlErr e;
  TlSharedLayout from;
  bool ok = tl_tensor_kind(a) == TL_TENSOR_SHARED
                ? tl_shared_type_layout(a, &from, &e) &&
                      tl_shared_layout_permute(sout, &from, perm, &e)
                : tl_layout_permute(out, tl_reg_layout(a), perm, &e);
  return ok || tl_err(err, "invalid permutation: %s", e.msg);
}

/* The register tile type of layout l's shape (the result type that a
 * derived layout determines), or NULL with the reason in err. */
static TlType *reg_of_layout(TlContext *ctx, TlType *elem, const TlLayout *l,
                             TlErr *err) {
  int64_t dims[TL_LAYOUT_MAX_RANK];
  for (int i = 0; i < l->rank; i++)
    dims[i] = l->shape[i];
  TlType *t = tl_reg_type_get(ctx, (unsigned)l->rank, dims, elem, l);
  if (!t)
    tl_err(err, "the derived layout makes no !tl.reg type");
  return t;
}

/* `[: A [-> R]]` after an op's operand %a and attributes: the operand
 * resolved into st and R, or NULL where R is elided (A is then %a's type
 * when elided too). */
static TlResult parse_unary_types(TlParser *p, TlOpState *st,
                                  const TlOperandRef *a, TlType **to) {
  TlType *from = NULL;
  TlValue *v;
  *to = NULL;
  if (tl_parse_optional_punct(p, ":") &&
      (TL_FAILED(tl_parse_type(p, &from)) ||
       (tl_parse_optional_punct(p, "->") && TL_FAILED(tl_parse_type(p, to)))))
    return TL_FAILURE;
  if (TL_FAILED(tl_parser_resolve(p, a, from, &v)))
    return TL_FAILURE;
  tl_op_state_add_operand(st, v);
  return TL_SUCCESS;
}

/* `%src, [p0, p1, ...] [: From [-> To]]`: result dimension k is operand
 * dimension p_k. Each thread keeps its elements in the same local order;
 * only the indexing changes, so the result layout is exactly
 * tl_layout_permute of the operand's. An elided To is derived so for a
 * register tile. A shared tile's is written: one element layout has
 * several spellings (column_major, #tl.smem, and row- and column-major
 * coincide on size-1 dimensions), which are different types. */
static TlResult permute_parse(TlParser *p, TlOpState *st) {
  TlOperandRef a;
  TlAttr *perm;
  TlType *to;
  if (TL_FAILED(tl_parse_operand(p, &a)) || TL_FAILED(tl_parse_punct(p, ",")) ||
      TL_FAILED(tl_parse_attr(p, &perm)) ||
      TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(parse_unary_types(p, st, &a, &to)))
    return TL_FAILURE;
  tl_op_state_set_attr(st, "perm", perm);
  if (!to) {
    TlType *from = tl_value_type(st->operands.data[0]);
    int pv[TL_LAYOUT_MAX_RANK];
    TlLayout want;
    TlErr err;
    if (TL_FAILED(tile_operand(p, &a, from, ": A -> R")))
      return TL_FAILURE;
    if (!perm_values(perm, tl_tensor_rank(from), pv)) {
      tl_err(&err, "'perm' must be an array of %u dimension indices",
             tl_tensor_rank(from));
      return cannot_infer(p, st->loc, err.msg, ": A -> R");
    }
    if (!permuted_layout(&want, NULL, from, pv, &err) ||
        !(to = reg_of_layout(st->ctx, tl_tensor_elem(from), &want, &err)))
      return cannot_infer(p, st->loc, err.msg, ": A -> R");
  }
  tl_op_state_add_result(st, to);
  return TL_SUCCESS;
}

static void permute_print(TlPrinter *p, TlOp *op) {
  static const char *const elided[] = {"perm", NULL};
  tl_print_str(p, " ");
  tl_print_operand(p, tl_op_operand(op, 0));
  tl_print_str(p, ", [");
  TlAttr *perm = tl_op_attr(op, "perm");
  for (unsigned i = 0; i < tl_attr_array_size(perm); i++)
    tl_printf(p, "%s%lld", i ? ", " : "",
              (long long)tl_attr_int_value(tl_attr_array_elem(perm, i)));
  tl_print_str(p, "]");
  tl_print_attr_dict(p, op, elided);
  tl_print_str(p, " : ");
  tl_print_type(p, otype(op, 0));
  tl_print_str(p, " -> ");
  tl_print_type(p, rtype(op, 0));
}

static TlResult permute_verify(TlOp *op) {
  if (TL_FAILED(same_elem_tiles(op)))
    return TL_FAILURE;
  TlType *a = otype(op, 0), *r = rtype(op, 0);
  unsigned rank = tl_tensor_rank(a);
  int perm[TL_LAYOUT_MAX_RANK];
  if (!tl_permute_perm(op, perm)) {
    tl_op_emit_error(op, "'perm' must be an array of %u dimension indices",
                     rank);
    return TL_FAILURE;
  }
  TlLayout want;
  TlSharedLayout swant;
  TlErr err;
  bool shared = tl_tensor_kind(a) == TL_TENSOR_SHARED;
  if (!permuted_layout(&want, &swant, a, perm, &err)) {
    tl_op_emit_error(op, "%s", err.msg);
    return TL_FAILURE;
  }
  bool shape_ok = tl_tensor_rank(r) == rank;
  for (unsigned k = 0; shape_ok && k < rank; k++)
    shape_ok = tl_tensor_dim(r, k) == tl_tensor_dim(a, (unsigned)perm[k]);
  if (!shape_ok) {
    tl_op_emit_error(op, "the result shape must be the operand's permuted");
    return TL_FAILURE;
  }
  return shared ? derived_shared_layout(op, &swant, "permuted")
                : derived_layout(op, &want, "permuted");
}

/*===--- slice -----------------------------------------------------------===*/

/* `%src[o0, %o1, ...] : From -> To`: each offset a literal or an index
 * operand, as tl.view_global's sizes (the literals in 'static_offsets', -1
 * where an operand follows the source). Register tiles take literals only;
 * the sub-tile each thread keeps is the one it holds (no data movement).
 * Shared tiles give a view of the same buffer. */
static TlResult slice_parse(TlParser *p, TlOpState *st) {
  TlOperandRef src;
  TlValue *sv;
  TlType *from, *to;
  if (TL_FAILED(tl_parse_operand(p, &src)) ||
      TL_FAILED(resolve_any(p, &src, &sv)))
    return TL_FAILURE;
  tl_op_state_add_operand(st, sv);
  if (TL_FAILED(parse_mixed(p, st, "static_offsets",
                            "slice offsets are not negative")) ||
      TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(tl_parse_punct(p, ":")) || TL_FAILED(tl_parse_type(p, &from)) ||
      TL_FAILED(tl_parse_punct(p, "->")) || TL_FAILED(tl_parse_type(p, &to)))
    return TL_FAILURE;
  if (from != tl_value_type(sv)) {
    tl_parser_error(p, src.loc, "'%%%s' does not have the type given after ':'",
                    src.name);
    return TL_FAILURE;
  }
  tl_op_state_add_result(st, to);
  return TL_SUCCESS;
}

static void slice_print(TlPrinter *p, TlOp *op) {
  static const char *const elided[] = {"static_offsets", NULL};
  unsigned next = 1;
  tl_print_str(p, " ");
  tl_print_operand(p, tl_op_operand(op, 0));
  print_mixed(p, op, tl_op_attr(op, "static_offsets"), &next);
  tl_print_attr_dict(p, op, elided);
  tl_print_str(p, " : ");
  tl_print_type(p, otype(op, 0));
  tl_print_str(p, " -> ");
  tl_print_type(p, rtype(op, 0));
}

bool tl_slice_offsets(TlOp *op, int64_t *offsets) {
  TlAttr *a = tl_op_attr(op, "static_offsets");
  unsigned rank = tl_tensor_rank(otype(op, 0));
  if (!mixed_ok(a) || tl_attr_array_size(a) != rank ||
      tl_op_num_operands(op) != 1 + count_dynamic(a))
    return false;
  for (unsigned d = 0; d < rank; d++)
    offsets[d] = tl_attr_int_value(tl_attr_array_elem(a, d));
  return true;
}

/* Offset d when known before the run (a literal or an arith.constant
 * operand): 1 with *off set, 0 for a runtime value, -1 after an error
 * about a negative constant. */
static int slice_known_offset(TlOp *op, const int64_t *offsets, unsigned d,
                              int64_t *off) {
  if (offsets[d] >= 0) {
    *off = offsets[d];
    return 1;
  }
  unsigned k = 1;
  for (unsigned e = 0; e < d; e++)
    k += offsets[e] < 0;
  TlValue *v = tl_op_operand(op, k);
  TlAttr *c = tl_value_constant(v);
  if (!c || tl_attr_kind(c) != TL_ATTR_INT)
    return 0;
  if (tl_type_int_signed(tl_value_type(v)) && tl_attr_int_value(c) < 0) {
    tl_op_emit_error(op, "offset %u is negative (%lld)", d,
                     (long long)tl_attr_int_value(c));
    return -1;
  }
  uint64_t u = tl_attr_uint_value(c);
  *off = u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
  return 1;
}

/* Per dimension: the result no larger than the operand, and a known offset
 * a multiple of the size with the sub-tile inside the operand. */
static TlResult slice_check_offsets(TlOp *op, const int64_t *offsets) {
  TlType *a = otype(op, 0), *r = rtype(op, 0);
  for (unsigned d = 0; d < tl_tensor_rank(a); d++) {
    int64_t n = tl_tensor_dim(a, d), size = tl_tensor_dim(r, d), off;
    if (size > n) {
      tl_op_emit_error(op,
                       "the result is larger than the operand in dimension "
                       "%u (%lld > %lld)",
                       d, (long long)size, (long long)n);
      return TL_FAILURE;
    }
    int known = slice_known_offset(op, offsets, d, &off);
    if (known < 0)
      return TL_FAILURE;
    if (!known)
      continue;
    if (off % size != 0) {
      tl_op_emit_error(op,
                       "offset %u (%lld) is not a multiple of the slice "
                       "size %lld",
                       d, (long long)off, (long long)size);
      return TL_FAILURE;
    }
    if (off > n - size) {
      tl_op_emit_error(op,
                       "the slice does not fit in dimension %u: offset %lld "
                       "+ %lld > %lld",
                       d, (long long)off, (long long)size, (long long)n);
      return TL_FAILURE;
    }
  }
  return TL_SUCCESS;
}

static TlResult slice_verify(TlOp *op) {
  if (tl_op_num_results(op) != 1 || tl_op_num_operands(op) < 1) {
    tl_op_emit_error(op, "takes a tile and offsets and has one result");
    return TL_FAILURE;
  }
  TlType *a = otype(op, 0), *r = rtype(op, 0);
  if (!same_kind_tiles(a, r)) {
    tl_op_emit_error(op, "operand and result must be !tl.reg tiles or "
                         "!tl.shared tiles of one element type");
    return TL_FAILURE;
  }
  unsigned rank = tl_tensor_rank(a);
  if (tl_tensor_rank(r) != rank) {
    tl_op_emit_error(op,
                     "a slice keeps the rank: the operand has %u dimensions "
                     "but the result %u",
                     rank, tl_tensor_rank(r));
    return TL_FAILURE;
  }
  TlAttr *sa = tl_op_attr(op, "static_offsets");
  if (!mixed_ok(sa) || tl_attr_array_size(sa) != rank) {
    tl_op_emit_error(op,
                     "'static_offsets' must be an array of %u integers, -1 "
                     "for an operand",
                     rank);
    return TL_FAILURE;
  }
  unsigned want = 1 + count_dynamic(sa);
  if (tl_op_num_operands(op) != want) {
    tl_op_emit_error(op, "expects %u operands, but has %u", want,
                     tl_op_num_operands(op));
    return TL_FAILURE;
  }
  for (unsigned i = 1; i < want; i++)
    if (!is_index(otype(op, i)))
      return bad_type(op, "an offset", "an integer", otype(op, i));
  bool shared = tl_tensor_kind(a) == TL_TENSOR_SHARED;
  if (!shared && want > 1) {
    tl_op_emit_error(op, "a register tile is sliced at literal offsets "
                         "only");
    return TL_FAILURE;
  }
  int64_t offsets[TL_LAYOUT_MAX_RANK], sizes[TL_LAYOUT_MAX_RANK];
  int64_t zeros[TL_LAYOUT_MAX_RANK] = {0};
  tl_slice_offsets(op, offsets);
  if (TL_FAILED(slice_check_offsets(op, offsets)))
    return TL_FAILURE;
  for (unsigned d = 0; d < rank; d++)
    sizes[d] = tl_tensor_dim(r, d);
  /* The layout depends on the sizes only: derive it at offset 0. */
  TlErr err;
  if (shared) {
    TlSharedLayout from = operand_smem(op), got;
    if (!tl_shared_layout_slice_view(&got, NULL, &from, NULL, sizes, &err)) {
      tl_op_emit_error(op, "invalid slice: %s", err.msg);
      return TL_FAILURE;
    }
    return derived_shared_layout(op, &got, "sliced");
  }
  TlLayout got;
  if (!tl_layout_slice(&got, tl_reg_layout(a), zeros, sizes, NULL, &err)) {
    tl_op_emit_error(op, "invalid slice: %s", err.msg);
    return TL_FAILURE;
  }
  return derived_layout(op, &got, "sliced");
}

/*===--- dot -------------------------------------------------------------===*/

/* `%a, %b, %c : A, B -> C` */
static TlResult dot_parse(TlParser *p, TlOpState *st) {
  TlOperandRef a, b, c;
  TlValue *va, *vb, *vc;
  TlType *ta, *tb, *tc;
  if (TL_FAILED(tl_parse_operand(p, &a)) || TL_FAILED(tl_parse_punct(p, ",")) ||
      TL_FAILED(tl_parse_operand(p, &b)) || TL_FAILED(tl_parse_punct(p, ",")) ||
      TL_FAILED(tl_parse_operand(p, &c)) ||
      TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(tl_parse_punct(p, ":")) || TL_FAILED(tl_parse_type(p, &ta)) ||
      TL_FAILED(tl_parse_punct(p, ",")) || TL_FAILED(tl_parse_type(p, &tb)) ||
      TL_FAILED(tl_parse_punct(p, "->")) || TL_FAILED(tl_parse_type(p, &tc)) ||
      TL_FAILED(tl_parser_resolve(p, &a, ta, &va)) ||
      TL_FAILED(tl_parser_resolve(p, &b, tb, &vb)) ||
      TL_FAILED(tl_parser_resolve(p, &c, tc, &vc)))
    return TL_FAILURE;
  tl_op_state_add_operand(st, va);
  tl_op_state_add_operand(st, vb);
  tl_op_state_add_operand(st, vc);
  tl_op_state_add_result(st, tc);
  return TL_SUCCESS;
}

static void dot_print(TlPrinter *p, TlOp *op) {
  tl_print_str(p, " ");
  for (unsigned i = 0; i < 3; i++) {
    if (i)
      tl_print_str(p, ", ");
    tl_print_operand(p, tl_op_operand(op, i));
  }
  tl_print_attr_dict(p, op, NULL);
  tl_print_str(p, " : ");
  tl_print_type(p, otype(op, 0));
  tl_print_str(p, ", ");
  tl_print_type(p, otype(op, 1));
  tl_print_str(p, " -> ");
  tl_print_type(p, rtype(op, 0));
}

static TlResult dot_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 3, 1)))
    return TL_FAILURE;
  TlType *a = otype(op, 0), *b = otype(op, 1), *c = otype(op, 2),
         *d = rtype(op, 0);
  const char *names[4] = {"a", "b", "the accumulator", "the result"};
  TlType *ts[4] = {a, b, c, d};
  /* a and b may be shared tiles (read in place: warpgroup mma on sm_90a);
   * then the dot is 2-D. */
  for (int i = 0; i < 4; i++) {
    bool shared = i < 2 && tl_tensor_kind(ts[i]) == TL_TENSOR_SHARED;
    if (!is_reg(ts[i]) && !shared)
      return bad_type(op, names[i], i < 2 ? "a !tl.reg or a !tl.shared" : "a !tl.reg",
                      ts[i]);
    if (shared && tl_tensor_rank(ts[i]) != 2) {
      tl_op_emit_error(op, "%s is a shared tile, which must be 2-D, but has %u dimensions",
                       names[i], tl_tensor_rank(ts[i]));
      return TL_FAILURE;
    }
    if (tl_tensor_rank(ts[i]) != 2 && tl_tensor_rank(ts[i]) != 3) {
      tl_op_emit_error(op, "%s must be 2-D, or 3-D with a leading batch dimension, but has "
                           "%u dimensions",
                       names[i], tl_tensor_rank(ts[i]));
      return TL_FAILURE;
    }
  }
  /* A batched dot: one product per index of the leading dimension. */
  unsigned rank = tl_tensor_rank(a);
  for (int i = 1; i < 4; i++)
    if (tl_tensor_rank(ts[i]) != rank ||
        (rank == 3 && tl_tensor_dim(ts[i], 0) != tl_tensor_dim(a, 0))) {
      tl_op_emit_error(op, "%s and a must have the same batch dimensions", names[i]);
      return TL_FAILURE;
    }
  if (c != d) {
    char *x = type_text(c), *y = type_text(d);
    tl_op_emit_error(op,
                     "the accumulator type %s differs from the result "
                     "type %s",
                     x, y);
    tl_free(x);
    tl_free(y);
    return TL_FAILURE;
  }
  unsigned r0 = rank - 2, r1 = rank - 1;
  int64_t m = tl_tensor_dim(a, r0), k = tl_tensor_dim(a, r1);
  int64_t kb = tl_tensor_dim(b, r0), n = tl_tensor_dim(b, r1);
  if (k != kb) {
    tl_op_emit_error(op,
                     "a is %lldx%lld and b is %lldx%lld: the inner "
                     "dimensions differ",
                     (long long)m, (long long)k, (long long)kb, (long long)n);
    return TL_FAILURE;
  }
  if (tl_tensor_dim(c, r0) != m || tl_tensor_dim(c, r1) != n) {
    tl_op_emit_error(op, "the accumulator is %lldx%lld but a x b is %lldx%lld",
                     (long long)tl_tensor_dim(c, r0),
                     (long long)tl_tensor_dim(c, r1), (long long)m,
                     (long long)n);
    return TL_FAILURE;
  }
  TlType *ea = tl_tensor_elem(a), *eb = tl_tensor_elem(b),
         *ec = tl_tensor_elem(c);
  if (tl_type_is_float(ea) != tl_type_is_float(eb) ||
      tl_type_is_float(ea) != tl_type_is_float(ec)) {
    tl_op_emit_error(op, "a, b and the accumulator must be all floats or all "
                         "integers");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/* tl.dot_async: tl.dot's rules, and a shared operand (it is warpgroup
 * mma's asynchronous form). */
static TlResult dot_async_verify(TlOp *op) {
  if (TL_FAILED(dot_verify(op)))
    return TL_FAILURE;
  if (tl_tensor_kind(otype(op, 1)) != TL_TENSOR_SHARED) {
    tl_op_emit_error(op, "b must be a shared tile (the asynchronous dot is "
                         "warpgroup mma, which reads b from shared memory)");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/*===--- reduce ----------------------------------------------------------===*/

/* tl.reduce's result layout: dimension dim of the register tile a
 * reduced. What the verifier requires and an elided result type is made
 * of; false with the verifier's message in err. */
static bool reduced_layout(TlLayout *out, const TlType *a, int64_t dim,
                           TlErr *err) {
  if (dim < 0 || dim >= (int64_t)tl_tensor_rank(a))
    return tl_err(err, "dimension %lld is out of range for a %u-D tile",
                  (long long)dim, tl_tensor_rank(a));
  TlErr e;
  if (!tl_layout_reduce(out, tl_reg_layout(a), (int)dim, &e))
    return tl_err(err, "cannot reduce the layout: %s", e.msg);
  return true;
}

/* `tl.reduce sum %a, 1 [: A [-> R]]` */
static TlResult reduce_parse(TlParser *p, TlOpState *st) {
  const char *kind;
  TlLoc l = tl_parser_loc(p);
  TlOperandRef a;
  int64_t dim;
  TlType *to;
  if (TL_FAILED(tl_parse_identifier(p, &kind)))
    return TL_FAILURE;
  if (tl_reduce_kind_by_name(kind) == TL_REDUCE_UNKNOWN) {
    tl_parser_error(p, l, "unknown reduction '%s' (sum max min)", kind);
    return TL_FAILURE;
  }
  if (TL_FAILED(tl_parse_operand(p, &a)) || TL_FAILED(tl_parse_punct(p, ",")) ||
      TL_FAILED(tl_parse_int(p, &dim)) ||
      TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(parse_unary_types(p, st, &a, &to)))
    return TL_FAILURE;
  tl_op_state_set_attr(st, "kind", tl_attr_string(st->ctx, kind, strlen(kind)));
  tl_op_state_set_attr(
      st, "dim", tl_attr_int(st->ctx, tl_type_int(st->ctx, 64, true), dim));
  if (!to) {
    TlType *from = tl_value_type(st->operands.data[0]);
    TlLayout want;
    TlErr err;
    if (TL_FAILED(tile_operand(p, &a, from, ": A -> R")))
      return TL_FAILURE;
    if (!reduced_layout(&want, from, dim, &err) ||
        !(to = reg_of_layout(st->ctx, tl_tensor_elem(from), &want, &err)))
      return cannot_infer(p, st->loc, err.msg, ": A -> R");
  }
  tl_op_state_add_result(st, to);
  return TL_SUCCESS;
}

static void reduce_print(TlPrinter *p, TlOp *op) {
  static const char *const elided[] = {"kind", "dim", NULL};
  tl_printf(p, " %s ", tl_attr_string_value(tl_op_attr(op, "kind"), NULL));
  tl_print_operand(p, tl_op_operand(op, 0));
  tl_printf(p, ", %lld", (long long)tl_attr_int_value(tl_op_attr(op, "dim")));
  tl_print_attr_dict(p, op, elided);
  tl_print_str(p, " : ");
  tl_print_type(p, otype(op, 0));
  tl_print_str(p, " -> ");
  tl_print_type(p, rtype(op, 0));
}

static TlResult reduce_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 1, 1)))
    return TL_FAILURE;
  TlAttr *d = tl_op_attr(op, "dim");
  if (tl_reduce_kind_of(op) == TL_REDUCE_UNKNOWN || !d ||
      tl_attr_kind(d) != TL_ATTR_INT) {
    tl_op_emit_error(op, "requires 'kind' (sum, max or min) and 'dim'");
    return TL_FAILURE;
  }
  TlType *a = otype(op, 0), *r = rtype(op, 0);
  if (!is_reg(a) || !is_reg(r) || tl_tensor_elem(a) != tl_tensor_elem(r)) {
    tl_op_emit_error(op, "operand and result must be !tl.reg tiles of one "
                         "element type");
    return TL_FAILURE;
  }
  int64_t dim = tl_attr_int_value(d);
  TlLayout want;
  TlErr err;
  if (!reduced_layout(&want, a, dim, &err)) {
    tl_op_emit_error(op, "%s", err.msg);
    return TL_FAILURE;
  }
  if (!tl_layout_equal(&want, tl_reg_layout(r))) {
    TlStr s = {0}, g = {0};
    tl_layout_print(&want, &s);
    tl_layout_print(tl_reg_layout(r), &g);
    tl_op_emit_error(op,
                     "the result layout must be %s (the operand's with "
                     "dimension %lld reduced), not %s",
                     tl_str_cstr(&s), (long long)dim, tl_str_cstr(&g));
    tl_str_free(&s);
    tl_str_free(&g);
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/*===--- Definitions -----------------------------------------------------===*/


/* A conversion to the operand's own type is the operand. */
static TlResult identity_fold(TlOp *op, TlAttr *const *c, TlFoldResult *res) {
  if (otype(op, 0) != rtype(op, 0))
    return TL_FAILURE;
  res[0].value = tl_op_operand(op, 0);
  return TL_SUCCESS;
}

/* view(view(x)) = view(x) and reshape(reshape(x)) = reshape(x): each
 * keeps every thread's bits (view) or every (thread, local) to element
 * mapping (reshape), so two in a row are one. The composed op is verified
 * by construction: same threads and bits per thread end to end, and the
 * reshape of a layout is unique. */
static TlResult compose(TlRewriter *rw, TlOp *op) {
  TlOp *inner = tl_value_def(tl_op_operand(op, 0));
  if (!inner || tl_op_def(inner) != tl_op_def(op))
    return TL_FAILURE;
  TlValue *x = tl_op_operand(inner, 0);
  tl_rewriter_update_operands(rw, op, 1, &x);
  return TL_SUCCESS;
}

/* For shared views the composed reshape is checked first: a layout
 * library that cannot derive it directly keeps the two steps. */
static TlResult compose_reshapes(TlRewriter *rw, TlOp *op) {
  TlOp *inner = tl_value_def(tl_op_operand(op, 0));
  if (!inner || tl_op_def(inner) != tl_op_def(op))
    return TL_FAILURE;
  TlType *x = otype(inner, 0), *r = rtype(op, 0);
  if (tl_tensor_kind(x) == TL_TENSOR_SHARED) {
    TlSharedLayout from, got, have;
    int64_t dims[TL_LAYOUT_MAX_RANK];
    for (unsigned i = 0; i < tl_tensor_rank(r); i++)
      dims[i] = tl_tensor_dim(r, i);
    if (!tl_shared_type_layout(x, &from, NULL) ||
        !tl_shared_type_layout(r, &have, NULL) ||
        !tl_shared_layout_reshape(&got, &from, (int)tl_tensor_rank(r), dims,
                                  NULL) ||
        !tl_shared_layout_equal(&got, &have))
      return TL_FAILURE;
  }
  return compose(rw, op);
}

static const TlPattern view_patterns[] = {{TL_OP_TL_VIEW, "compose-views", compose}, {0}};
static const TlPattern reshape_patterns[] = {
    {TL_OP_TL_RESHAPE, "compose-reshapes", compose_reshapes}, {0}};

/* slice(slice(x, o1), o2) = slice(x, o1 + o2) when both take literal
 * offsets: the outer sizes are products of trailing modes of the inner
 * result, hence of x, and the dropped modes of both are dropped at once,
 * so the direct slice derives the outer result's layout. */
static TlResult compose_slices(TlRewriter *rw, TlOp *op) {
  TlOp *inner = tl_value_def(tl_op_operand(op, 0));
  int64_t o1[TL_LAYOUT_MAX_RANK], o2[TL_LAYOUT_MAX_RANK];
  if (!inner || tl_op_def(inner) != tl_op_def(op) ||
      tl_op_num_operands(inner) != 1 || tl_op_num_operands(op) != 1 ||
      !tl_slice_offsets(inner, o1) || !tl_slice_offsets(op, o2))
    return TL_FAILURE;
  TlContext *ctx = tl_op_context(op);
  TlAttr *elems[TL_LAYOUT_MAX_RANK];
  unsigned rank = tl_tensor_rank(otype(op, 0));
  for (unsigned k = 0; k < rank; k++)
    elems[k] = tl_attr_int(ctx, tl_type_int(ctx, 64, true), o1[k] + o2[k]);
  TlValue *x = tl_op_operand(inner, 0);
  tl_op_set_attr(op, "static_offsets", tl_attr_array(ctx, rank, elems));
  tl_rewriter_update_operands(rw, op, 1, &x);
  return TL_SUCCESS;
}

static const TlPattern slice_patterns[] = {
    {TL_OP_TL_SLICE, "compose-slices", compose_slices}, {0}};

/* permute(permute(x, p), q) = permute(x, c) with c[k] = p[q[k]]: result
 * dimension k reads the inner result's dimension q[k], which reads x's
 * dimension p[q[k]]. Layouts compose the same way, so the op stays valid. */
static TlResult compose_permutes(TlRewriter *rw, TlOp *op) {
  TlOp *inner = tl_value_def(tl_op_operand(op, 0));
  int p[TL_LAYOUT_MAX_RANK], q[TL_LAYOUT_MAX_RANK];
  if (!inner || tl_op_def(inner) != tl_op_def(op) ||
      !tl_permute_perm(inner, p) || !tl_permute_perm(op, q))
    return TL_FAILURE;
  TlContext *ctx = tl_op_context(op);
  TlAttr *elems[TL_LAYOUT_MAX_RANK];
  unsigned rank = tl_tensor_rank(otype(op, 0));
  for (unsigned k = 0; k < rank; k++)
    elems[k] = tl_attr_int(ctx, tl_type_int(ctx, 64, true), p[q[k]]);
  TlValue *x = tl_op_operand(inner, 0);
  tl_op_set_attr(op, "perm", tl_attr_array(ctx, rank, elems));
  tl_rewriter_update_operands(rw, op, 1, &x);
  return TL_SUCCESS;
}

static const TlPattern permute_patterns[] = {
    {TL_OP_TL_PERMUTE, "compose-permutes", compose_permutes}, {0}};



/* Each op's hooks, by its row in include/tl/ops/tl.def. */
#define EW(kind)                                                               \
  .verify = ew_##kind##_verify, .parse = same_type_parse,                      \
  .print = same_type_print
#define TL_HOOKS_TL_KERNEL                                                     \
  .verify = tl_kernel_verify, .parse = tl_kernel_parse,                        \
  .print = tl_kernel_print
#define TL_HOOKS_TL_TEMPLATE                                                   \
  .verify = tl_template_verify, .parse = tl_template_parse,                    \
  .print = tl_template_print, .fold = tl_template_fold
#define TL_HOOKS_TL_BLOCK_INDICES                                              \
  .verify = block_indices_verify, .parse = block_indices_parse,                \
  .print = block_indices_print
#define TL_HOOKS_TL_WARP_INDEX                                                 \
  .verify = warp_index_verify, .parse = block_indices_parse,                   \
  .print = block_indices_print
#define TL_HOOKS_TL_VIEW_GLOBAL                                                \
  .verify = view_global_verify, .parse = view_global_parse,                    \
  .print = view_global_print
#define TL_HOOKS_TL_ALLOC_REGISTER                                             \
  .verify = alloc_register_verify, .parse = alloc_register_parse,              \
  .print = alloc_register_print
#define TL_HOOKS_TL_LOAD_GLOBAL                                                \
  .verify = load_global_verify, .parse = load_parse, .print = load_print
#define TL_HOOKS_TL_STORE_GLOBAL                                               \
  .verify = store_global_verify, .parse = store_parse, .print = store_print
#define TL_HOOKS_TL_ATOMIC_RMW                                                 \
  .verify = atomic_verify, .parse = atomic_rmw_parse, .print = atomic_print
#define TL_HOOKS_TL_ATOMIC_CAS                                                 \
  .verify = atomic_verify, .parse = atomic_cas_parse, .print = atomic_print
#define TL_HOOKS_TL_LOAD_SCALAR                                                \
  .verify = load_scalar_verify, .parse = load_scalar_parse, .print = load_print
#define TL_HOOKS_TL_GATHER                                                     \
  .verify = gather_verify, .parse = gather_parse, .print = gather_print
#define TL_HOOKS_TL_FENCE                                                      \
  .verify = fence_verify, .parse = operands_parse, .print = operands_print
#define TL_HOOKS_TL_ALLOC_SHARED                                               \
  .verify = alloc_shared_verify, .parse = result_only_parse,                   \
  .print = result_only_print
#define TL_HOOKS_TL_ALLOC_GLOBAL                                               \
  .verify = alloc_global_verify, .parse = result_only_parse,                   \
  .print = result_only_print
#define TL_HOOKS_TL_FREE_SHARED                                                \
  .verify = free_shared_verify, .parse = operands_parse,                       \
  .print = operands_print
#define TL_HOOKS_TL_LOAD_SHARED                                                \
  .verify = load_shared_verify, .parse = load_parse, .print = load_print
#define TL_HOOKS_TL_STORE_SHARED                                               \
  .verify = store_shared_verify, .parse = store_parse, .print = store_print
#define TL_HOOKS_TL_COPY_ASYNC                                                 \
  .verify = copy_async_verify, .parse = copy_async_parse,                      \
  .print = copy_async_print
#define TL_HOOKS_TL_COPY_ASYNC_COMMIT                                          \
  .verify = no_operands_verify, .parse = operands_parse,                       \
  .print = operands_print
#define TL_HOOKS_TL_COPY_ASYNC_WAIT                                            \
  .verify = wait_verify, .parse = wait_parse, .print = wait_print
#define TL_HOOKS_TL_DOT_WAIT                                                   \
  .verify = wait_verify, .parse = wait_parse, .print = wait_print
#define TL_HOOKS_TL_SET_MAX_REGISTERS                                          \
  .verify = set_max_registers_verify, .parse = operands_parse,                 \
  .print = operands_print
#define TL_HOOKS_TL_ALLOC_RING                                                 \
  .verify = alloc_ring_verify, .parse = result_only_parse,                     \
  .print = result_only_print
#define TL_HOOKS_TL_RING_ACQUIRE                                               \
  .verify = ring_op_verify, .parse = ring_op_parse, .print = ring_op_print
#define TL_HOOKS_TL_RING_COMMIT                                                \
  .verify = ring_op_verify, .parse = ring_op_parse, .print = ring_op_print
#define TL_HOOKS_TL_RING_WAIT                                                  \
  .verify = ring_op_verify, .parse = ring_op_parse, .print = ring_op_print
#define TL_HOOKS_TL_RING_RELEASE                                               \
  .verify = ring_op_verify, .parse = ring_op_parse, .print = ring_op_print
#define TL_HOOKS_TL_SYNCHRONIZE                                                \
  .verify = no_operands_verify, .parse = operands_parse,                       \
  .print = operands_print
#define TL_HOOKS_TL_EXIT                                                       \
  .verify = no_operands_verify, .parse = operands_parse,                       \
  .print = operands_print
#define TL_HOOKS_TL_PRINT                                                      \
  .verify = print_verify, .parse = operands_parse, .print = operands_print
#define TL_HOOKS_TL_CMP                                                        \
  .verify = cmp_verify, .parse = cmp_parse, .print = cmp_print
#define TL_HOOKS_TL_WHERE                                                      \
  .verify = where_verify, .parse = where_parse, .print = same_type_print
#define TL_HOOKS_TL_BROADCAST                                                  \
  .verify = broadcast_verify, .parse = convert_parse, .print = convert_print
#define TL_HOOKS_TL_CAST                                                       \
  .verify = cast_verify, .parse = convert_parse, .print = convert_print,       \
  .fold = identity_fold
#define TL_HOOKS_TL_VIEW                                                       \
  .verify = view_verify, .parse = convert_parse, .print = convert_print,       \
  .fold = identity_fold, .patterns = view_patterns
#define TL_HOOKS_TL_RESHAPE                                                    \
  .verify = reshape_verify, .parse = convert_parse, .print = convert_print,    \
  .fold = identity_fold, .patterns = reshape_patterns
#define TL_HOOKS_TL_PERMUTE                                                    \
  .verify = permute_verify, .parse = permute_parse, .print = permute_print,    \
  .fold = identity_fold, .patterns = permute_patterns
#define TL_HOOKS_TL_SLICE                                                      \
  .verify = slice_verify, .parse = slice_parse, .print = slice_print,          \
  .fold = identity_fold, .patterns = slice_patterns
#define TL_HOOKS_TL_DOT                                                        \
  .verify = dot_verify, .parse = dot_parse, .print = dot_print
#define TL_HOOKS_TL_DOT_ASYNC                                                  \
  .verify = dot_async_verify, .parse = dot_parse, .print = dot_print
#define TL_HOOKS_TL_REDUCE                                                     \
  .verify = reduce_verify, .parse = reduce_parse, .print = reduce_print
#define TL_HOOKS_TL_ADD EW(any)
#define TL_HOOKS_TL_SUB EW(any)
#define TL_HOOKS_TL_MUL EW(any)
#define TL_HOOKS_TL_FMA EW(fma)
#define TL_HOOKS_TL_DIV EW(any)
#define TL_HOOKS_TL_MOD EW(any)
#define TL_HOOKS_TL_MAX EW(any)
#define TL_HOOKS_TL_MIN EW(any)
#define TL_HOOKS_TL_AND EW(int)
#define TL_HOOKS_TL_OR EW(int)
#define TL_HOOKS_TL_XOR EW(int)
#define TL_HOOKS_TL_SHL EW(int)
#define TL_HOOKS_TL_SHR EW(int)
#define TL_HOOKS_TL_NEG EW(any)
#define TL_HOOKS_TL_ABS EW(any)
#define TL_HOOKS_TL_NOT EW(int)
#define TL_HOOKS_TL_EXP EW(float)
#define TL_HOOKS_TL_EXP2 EW(float)
#define TL_HOOKS_TL_LOG2 EW(float)
#define TL_HOOKS_TL_SQRT EW(float)
#define TL_HOOKS_TL_RSQRT EW(float)

static const TlOpDef tl_ops[] = {
#define TL_OP TL_OP_ENTRY
#include "tl/ops/tl.def"
#undef TL_OP
};

static const TlTypeDef *const tl_types[] = {
    &tl_ptr_type_def, &tl_global_type_def, &tl_shared_type_def,
    &tl_reg_type_def, &tl_tensormap_type_def, &tl_ring_type_def, NULL};
static const TlAttrDef *const tl_attrs[] = {&tl_layout_attr_def, &tl_smem_attr_def,
                                            NULL};

/* Folded template values become arith constants. */
static TlOp *materialize(TlBuilder *b, TlAttr *value, TlType *type, TlLoc loc) {
  if (tl_attr_kind(value) != TL_ATTR_INT || tl_attr_get_type(value) != type)
    return NULL;
  return tl_value_def(tl_arith_constant(b, value, loc));
}

static const TlDialectDef tl_dialect = {
    .name = "tl",
    .ops = tl_ops,
    .num_ops = sizeof tl_ops / sizeof tl_ops[0],
    .types = tl_types,
    .attrs = tl_attrs,
    .materialize_constant = materialize,
};

void tl_tl_register(TlContext *ctx) {
  tl_context_register_dialect(ctx, &tl_dialect);
}
