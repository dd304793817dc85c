/* The arith dialect: scalar integer, float and boolean arithmetic,
 * comparisons, select and casts, with constant folding.
 *
 * Integer types carry their signedness (iN signed, uN unsigned, i1 the
 * boolean), so one op serves both: `arith.divi` divides signed for iN and
 * unsigned for uN; `arith.shri` shifts arithmetically for iN and logically
 * for uN; comparisons order by the operand type's signedness.
 *
 * Semantics that folding must respect:
 *   - integer arithmetic wraps modulo 2^width; divi/remi by zero and the
 *     signed overflow MIN / -1 are undefined and never folded; a shift by
 *     width or more is undefined and never folded;
 *   - float arithmetic rounds the exact result to the type (nearest-even);
 *     formats without infinity saturate to their largest finite value, and
 *     a NaN result in a format without NaN is undefined (never folded).
 *   - fptoi rounds toward zero and saturates; NaN converts to 0. */
#include "tl/dialects.h"
#include "tl/predicates.h"
#include "tl/rewrite.h"

#include "../../lib/ir/float_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/*===--- Helpers ---------------------------------------------------------===*/

static TlAttr *const_of(TlValue *v);

TlAttr *tl_value_constant(TlValue *v) { return const_of(v); }

static bool is_int(TlType *t) { return tl_type_is_int(t); }
static bool is_float(TlType *t) { return tl_type_is_float(t); }

static void type_str(TlType *t, TlStr *s) { tl_type_print(t, s); }

/* Emits "'op' op <what> must be <kind>, but got <type>". */
static TlResult type_error(TlOp *op, const char *what, const char *kind,
                           TlType *t) {
  TlStr s = {0};
  type_str(t, &s);
  tl_op_emit_error(op, "%s must be %s, but got %s", what, kind, tl_str_cstr(&s));
  tl_str_free(&s);
  return TL_FAILURE;
}

static TlResult expect_counts(TlOp *op, unsigned nops, unsigned nres) {
  if (tl_op_num_operands(op) != nops || tl_op_num_results(op) != nres) {
    tl_op_emit_error(op, "expects %u operand%s and %u result%s, but has %u "
                         "and %u",
                     nops, nops == 1 ? "" : "s", nres, nres == 1 ? "" : "s",
                     tl_op_num_operands(op), tl_op_num_results(op));
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/* Rounds a double to a float type; false when the result is not
 * representable (NaN in a format without NaN). */
static bool round_to(TlType *t, double v, double *out) {
  unsigned e = tl_type_float_exp(t), m = tl_type_float_man(t);
  if (isnan(v) && !tl_float_has_nan(e, m))
    return false;
  /* tl_float_round passes infinities through unchanged; a format without
   * infinity saturates them like any other overflow. */
  if (isinf(v) && !tl_float_has_inf(e, m))
    v = copysign(tl_float_max(e, m), v);
  *out = tl_float_round(v, e, m, NULL);
  return true;
}

/*===--- Custom forms ----------------------------------------------------===*/

/* `%a, %b : T` for ops whose operands and result share one type. */
static TlResult parse_same_type(TlParser *p, TlOpState *st, unsigned n) {
  TlOperandRefVec refs = {0};
  TlType *t;
  TlResult r = TL_FAILURE;
  if (TL_FAILED(tl_parse_operand_list(p, &refs)))
    goto out;
  if (refs.len != n) {
    tl_parser_error(p, tl_parser_loc(p), "expected %u operand%s, found %zu", n,
                    n == 1 ? "" : "s", refs.len);
    goto out;
  }
  if (TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(tl_parse_punct(p, ":")) || TL_FAILED(tl_parse_type(p, &t)) ||
      TL_FAILED(tl_parser_resolve_operands(p, st, n, refs.data, 1, &t)))
    goto out;
  tl_op_state_add_result(st, t);
  r = TL_SUCCESS;
out:
  tl_vec_free(&refs);
  return r;
}

static TlResult parse_binary(TlParser *p, TlOpState *st) {
  return parse_same_type(p, st, 2);
}
static TlResult parse_unary(TlParser *p, TlOpState *st) {
  return parse_same_type(p, st, 1);
}

static void print_same_type(TlPrinter *p, TlOp *op) {
  tl_print_str(p, " ");
  for (unsigned i = 0; i < tl_op_num_operands(op); i++) {
    if (i)
      tl_print_str(p, ", ");
    tl_print_operand(p, tl_op_operand(op, i));
  }
  tl_print_attr_dict(p, op, NULL);
  tl_print_str(p, " : ");
  tl_print_type(p, tl_value_type(tl_op_result(op, 0)));
}

static TlResult verify_same_type(TlOp *op, unsigned n, bool want_int) {
  if (TL_FAILED(expect_counts(op, n, 1)))
    return TL_FAILURE;
  TlType *t = tl_value_type(tl_op_result(op, 0));
  if (want_int ? !is_int(t) : !is_float(t))
    return type_error(op, "result type", want_int ? "an integer" : "a float",
                      t);
  for (unsigned i = 0; i < n; i++)
    if (tl_value_type(tl_op_operand(op, i)) != t) {
      tl_op_emit_error(op, "operand #%u and the result must have the same "
                           "type",
                       i);
      return TL_FAILURE;
    }
  return TL_SUCCESS;
}

static TlResult verify_int_binary(TlOp *op) { return verify_same_type(op, 2, true); }
static TlResult verify_float_binary(TlOp *op) { return verify_same_type(op, 2, false); }
static TlResult verify_float_unary(TlOp *op) { return verify_same_type(op, 1, false); }

/*===--- constant --------------------------------------------------------===*/

/* `arith.constant {expr} : T` in a tl.kernel: the template expression's
 * value as an integer constant of T (the IR holds the instance). */
static TlResult constant_template_parse(TlParser *p, TlOpState *st) {
  TlLoc loc = tl_parser_loc(p);
  int64_t v;
  TlType *t;
  if (TL_FAILED(tl_parse_int(p, &v)) || TL_FAILED(tl_parse_punct(p, ":")))
    return TL_FAILURE;
  TlLoc tloc = tl_parser_loc(p);
  if (TL_FAILED(tl_parse_type(p, &t)))
    return TL_FAILURE;
  if (!tl_type_is_int(t)) {
    tl_parser_error(p, tloc,
                    "a template expression gives an integer constant: the "
                    "type must be an integer type");
    return TL_FAILURE;
  }
  unsigned w = tl_type_int_width(t);
  bool sgn = tl_type_int_signed(t);
  bool fits = tl_type_is_bool(t) ? v == 0 || v == 1
              : w >= 64          ? sgn || v >= 0
              : sgn              ? v >= -(INT64_C(1) << (w - 1)) &&
                                      v < (INT64_C(1) << (w - 1))
                                 : v >= 0 && v < (INT64_C(1) << w);
  if (!fits) {
    TlStr ts = {0};
    tl_type_print(t, &ts);
    tl_parser_error(p, loc, "template expression value %lld does not fit in %s",
                    (long long)v, tl_str_cstr(&ts));
    tl_str_free(&ts);
    return TL_FAILURE;
  }
  tl_op_state_set_attr(st, "value", tl_attr_int(st->ctx, t, v));
  tl_op_state_add_result(st, t);
  return tl_parse_optional_attr_dict(p, st);
}

static TlResult constant_parse(TlParser *p, TlOpState *st) {
  if (tl_parser_peek_template_int(p))
    return constant_template_parse(p, st);
  TlLoc loc = tl_parser_loc(p);
  TlAttr *a;
  if (TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(tl_parse_attr(p, &a)))
    return TL_FAILURE;
  TlAttrKind k = tl_attr_kind(a);
  if (k != TL_ATTR_INT && k != TL_ATTR_FLOAT) {
    tl_parser_error(p, loc, "'arith.constant' needs an integer or float value "
                            "with its type, such as `1 : i32`");
    return TL_FAILURE;
  }
  /* `true` and `false` may name their type, as constant_print writes them. */
  if (k == TL_ATTR_INT && tl_type_is_bool(tl_attr_get_type(a)) &&
      tl_parse_optional_punct(p, ":")) {
    TlLoc tloc = tl_parser_loc(p);
    TlType *t;
    if (TL_FAILED(tl_parse_type(p, &t)))
      return TL_FAILURE;
    if (!tl_type_is_bool(t)) {
      tl_parser_error(p, tloc, "a boolean constant has type i1");
      return TL_FAILURE;
    }
  }
  tl_op_state_set_attr(st, "value", a);
  tl_op_state_add_result(st, tl_attr_get_type(a));
  return TL_SUCCESS;
}

static void constant_print(TlPrinter *p, TlOp *op) {
  static const char *const elided[] = {"value", NULL};
  tl_print_attr_dict(p, op, elided);
  TlAttr *a = tl_op_attr(op, "value");
  tl_print_str(p, " ");
  tl_print_attr(p, a);
  /* The attribute printer leaves out the default types i64 and f64; the
   * constant always names its type. */
  TlType *t = tl_attr_get_type(a);
  bool is_default = (tl_attr_kind(a) == TL_ATTR_INT && tl_type_int_width(t) == 64 &&
                     tl_type_int_signed(t) && !tl_type_is_bool(t)) ||
                    (tl_attr_kind(a) == TL_ATTR_FLOAT && t == tl_type_f64(tl_op_context(op)));
  /* (Non-finite floats print as typed hex bit patterns already.) */
  if (tl_attr_kind(a) == TL_ATTR_FLOAT && !isfinite(tl_attr_float_value(a)))
    is_default = false;
  if (is_default || tl_type_is_bool(t)) {
    tl_print_str(p, " : ");
    tl_print_type(p, t);
  }
}

static TlResult constant_verify(TlOp *op) {
  if (TL_FAILED(expect_counts(op, 0, 1)))
    return TL_FAILURE;
  TlAttr *a = tl_op_attr(op, "value");
  TlAttrKind k = tl_attr_kind(a);
  if (k != TL_ATTR_INT && k != TL_ATTR_FLOAT) {
    tl_op_emit_error(op, "attribute 'value' must be an integer or float");
    return TL_FAILURE;
  }
  if (tl_attr_get_type(a) != tl_value_type(tl_op_result(op, 0))) {
    tl_op_emit_error(op, "the type of 'value' must match the result type");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

static TlResult constant_fold(TlOp *op, TlAttr *const *ops, TlFoldResult *res) {
  res[0].attr = tl_op_attr(op, "value");
  return TL_SUCCESS;
}


static TlAttr *const_of(TlValue *v) {
  TlOp *d = tl_value_def(v);
  if (!d || !tl_op_has_trait(d, TL_TRAIT_CONSTANT))
    return NULL;
  return tl_op_attr(d, "value");
}

TlValue *tl_arith_constant(TlBuilder *b, TlAttr *value, TlLoc loc) {
  TlContext *ctx = tl_module_context(b->module);
  TlOpState st;
  tl_op_state_init(&st, ctx, tl_context_op_def_by_id(ctx, TL_OP_ARITH_CONSTANT),
                    loc);
  tl_op_state_set_attr(&st, "value", value);
  tl_op_state_add_result(&st, tl_attr_get_type(value));
  return tl_op_result(tl_builder_insert(b, &st), 0);
}

/*===--- Integer binary ops ----------------------------------------------===*/

typedef enum IntOp {
  I_ADD, I_SUB, I_MUL, I_DIV, I_REM, I_CEILDIV, I_AND, I_OR, I_XOR,
  I_SHL, I_SHR, I_MIN, I_MAX,
} IntOp;

/* Folds a op b on the type's value set; false if undefined. */
static bool int_eval(IntOp k, TlType *t, TlAttr *a, TlAttr *b, int64_t *out) {
  unsigned w = tl_type_int_width(t);
  bool sgn = tl_type_int_signed(t);
  int64_t x = tl_attr_int_value(a), y = tl_attr_int_value(b);
  uint64_t ux = tl_attr_uint_value(a), uy = tl_attr_uint_value(b);
  int64_t smin = w == 64 ? INT64_MIN : -(int64_t)(1ull << (w - 1));
  switch (k) {
  case I_ADD: *out = (int64_t)(ux + uy); return true;
  case I_SUB: *out = (int64_t)(ux - uy); return true;
  case I_MUL: *out = (int64_t)(ux * uy); return true;
  case I_AND: *out = (int64_t)(ux & uy); return true;
  case I_OR: *out = (int64_t)(ux | uy); return true;
  case I_XOR: *out = (int64_t)(ux ^ uy); return true;
  case I_DIV:
  case I_REM:
  case I_CEILDIV:
    if (uy == 0 || (sgn && x == smin && y == -1))
      return false;
    if (sgn) {
      int64_t q = x / y, r = x % y;
      if (k == I_CEILDIV && r != 0 && ((r > 0) == (y > 0)))
        q++;
      *out = k == I_REM ? r : q;
    } else {
      uint64_t q = ux / uy, r = ux % uy;
      if (k == I_CEILDIV && r)
        q++;
      *out = (int64_t)(k == I_REM ? r : q);
    }
    return true;
  case I_SHL:
    if (uy >= w)
      return false;
    *out = (int64_t)(ux << uy);
    return true;
  case I_SHR:
    if (uy >= w)
      return false;
    *out = sgn ? x >> uy : (int64_t)(ux >> uy);
    return true;
  case I_MIN: *out = (sgn ? x < y : ux < uy) ? x : y; return true;
  case I_MAX: *out = (sgn ? x > y : ux > uy) ? x : y; return true;
  }
  return false;
}

/* Whether a is the integer constant v of its type. */
static bool is_int_const(TlOp *op, TlAttr *a, int64_t v) {
  return a && tl_attr_kind(a) == TL_ATTR_INT &&
         a == tl_attr_int(tl_op_context(op), tl_attr_get_type(a), v);
}

/* Identities where one operand is a known constant or both operands are the
 * same value; the folder returns an existing value or a new constant. */
static TlResult int_fold(IntOp k, TlOp *op, TlAttr *const *c,
                         TlFoldResult *res) {
  TlType *t = tl_value_type(tl_op_result(op, 0));
  TlValue *x = tl_op_operand(op, 0), *y = tl_op_operand(op, 1);
  TlContext *ctx = tl_op_context(op);
  if (c[0] && c[1]) {
    int64_t v;
    if (!int_eval(k, t, c[0], c[1], &v))
      return TL_FAILURE;
    res[0].attr = tl_attr_int(ctx, t, v);
    return TL_SUCCESS;
  }
  bool sgn = tl_type_int_signed(t);
  int64_t allones = -1;
  switch (k) {
  case I_ADD:
  case I_OR:
  case I_XOR:
  case I_SUB:
  case I_SHL:
  case I_SHR:
    if (is_int_const(op, c[1], 0)) {
      res[0].value = x;
      return TL_SUCCESS;
    }
    if (k == I_ADD || k == I_OR || k == I_XOR)
      if (is_int_const(op, c[0], 0)) {
        res[0].value = y;
        return TL_SUCCESS;
      }
    if ((k == I_SUB || k == I_XOR) && x == y) {
      res[0].attr = tl_attr_int(ctx, t, 0);
      return TL_SUCCESS;
    }
    if (k == I_OR && x == y) {
      res[0].value = x;
      return TL_SUCCESS;
    }
    break;
  case I_MUL:
    if (is_int_const(op, c[1], 1) || is_int_const(op, c[0], 1)) {
      res[0].value = is_int_const(op, c[1], 1) ? x : y;
      return TL_SUCCESS;
    }
    if (is_int_const(op, c[1], 0) || is_int_const(op, c[0], 0)) {
      res[0].attr = tl_attr_int(ctx, t, 0);
      return TL_SUCCESS;
    }
    break;
  case I_AND:
    if (x == y || is_int_const(op, c[1], allones)) {
      res[0].value = x;
      return TL_SUCCESS;
    }
    if (is_int_const(op, c[1], 0)) {
      res[0].attr = tl_attr_int(ctx, t, 0);
      return TL_SUCCESS;
    }
    break;
  case I_DIV:
  case I_CEILDIV:
    if (is_int_const(op, c[1], 1)) {
      res[0].value = x;
      return TL_SUCCESS;
    }
    break;
  case I_REM:
    if (is_int_const(op, c[1], 1)) {
      res[0].attr = tl_attr_int(ctx, t, 0);
      return TL_SUCCESS;
    }
    break;
  case I_MIN:
  case I_MAX:
    if (x == y) {
      res[0].value = x;
      return TL_SUCCESS;
    }
    (void)sgn;
    break;
  }
  return TL_FAILURE;
}

#define INT_BINARY(fn, kind)                                                   \
  static TlResult fn(TlOp *op, TlAttr *const *c, TlFoldResult *r) {            \
    return int_fold(kind, op, c, r);                                           \
  }
INT_BINARY(fold_addi, I_ADD)
INT_BINARY(fold_subi, I_SUB)
INT_BINARY(fold_muli, I_MUL)
INT_BINARY(fold_divi, I_DIV)
INT_BINARY(fold_remi, I_REM)
INT_BINARY(fold_ceildivi, I_CEILDIV)
INT_BINARY(fold_andi, I_AND)
INT_BINARY(fold_ori, I_OR)
INT_BINARY(fold_xori, I_XOR)
INT_BINARY(fold_shli, I_SHL)
INT_BINARY(fold_shri, I_SHR)
INT_BINARY(fold_mini, I_MIN)
INT_BINARY(fold_maxi, I_MAX)

/* Canonicalization: (x + c1) + c2 -> x + (c1 + c2), and the same for
 * muli, andi, ori, xori (associative and commutative on the wrapped value
 * set). */
static TlResult reassociate(TlRewriter *rw, TlOp *op);

static const TlPattern addi_patterns[] = {
    {TL_OP_ARITH_ADDI, "reassociate-constants", reassociate}, {0}};
static const TlPattern muli_patterns[] = {
    {TL_OP_ARITH_MULI, "reassociate-constants", reassociate}, {0}};
static const TlPattern andi_patterns[] = {
    {TL_OP_ARITH_ANDI, "reassociate-constants", reassociate}, {0}};
static const TlPattern ori_patterns[] = {
    {TL_OP_ARITH_ORI, "reassociate-constants", reassociate}, {0}};
static const TlPattern xori_patterns[] = {
    {TL_OP_ARITH_XORI, "reassociate-constants", reassociate}, {0}};



static TlResult reassociate(TlRewriter *rw, TlOp *op) {
  TlAttr *c2 = const_of(tl_op_operand(op, 1));
  TlOp *inner = tl_value_def(tl_op_operand(op, 0));
  if (!c2 || !inner || tl_op_def(inner) != tl_op_def(op))
    return TL_FAILURE;
  TlAttr *c1 = const_of(tl_op_operand(inner, 1));
  if (!c1)
    return TL_FAILURE;
  IntOp k;
  switch (tl_op_id(op)) {
  case TL_OP_ARITH_ADDI: k = I_ADD; break;
  case TL_OP_ARITH_MULI: k = I_MUL; break;
  case TL_OP_ARITH_ANDI: k = I_AND; break;
  case TL_OP_ARITH_ORI: k = I_OR; break;
  default: k = I_XOR; break;
  }
  TlType *t = tl_value_type(tl_op_result(op, 0));
  int64_t v;
  if (!int_eval(k, t, c1, c2, &v))
    return TL_FAILURE;
  TlBuilder *b = tl_rewriter_builder(rw);
  tl_builder_set_before(b, op);
  TlValue *c = tl_arith_constant(b, tl_attr_int(tl_op_context(op), t, v),
                                 tl_op_loc(op));
  tl_rewriter_notify_created(rw, tl_value_def(c));
  TlValue *ops[2] = {tl_op_operand(inner, 0), c};
  tl_rewriter_update_operands(rw, op, 2, ops);
  return TL_SUCCESS;
}

/*===--- Float binary and unary ops --------------------------------------===*/

typedef enum FloatOp { F_ADD, F_SUB, F_MUL, F_DIV, F_MIN, F_MAX, F_NEG, F_ABS } FloatOp;

static TlResult float_fold(FloatOp k, TlOp *op, TlAttr *const *c,
                           TlFoldResult *res) {
  TlType *t = tl_value_type(tl_op_result(op, 0));
  TlContext *ctx = tl_op_context(op);
  unsigned n = tl_op_num_operands(op);
  if (c[0] && (n == 1 || c[1])) {
    double x = tl_attr_float_value(c[0]), y = n == 2 ? tl_attr_float_value(c[1]) : 0;
    double v;
    switch (k) {
    case F_ADD: v = x + y; break;
    case F_SUB: v = x - y; break;
    case F_MUL: v = x * y; break;
    case F_DIV: v = x / y; break;
    /* minf/maxf propagate NaN; -0 orders below +0. */
    case F_MIN: v = isnan(x) || isnan(y) ? NAN : (x < y || (x == y && signbit(x))) ? x : y; break;
    case F_MAX: v = isnan(x) || isnan(y) ? NAN : (x > y || (x == y && !signbit(x))) ? x : y; break;
    case F_NEG: v = -x; break;
    case F_ABS: v = fabs(x); break;
    default: return TL_FAILURE;
    }
    double r;
    if (!round_to(t, v, &r))
      return TL_FAILURE;
    res[0].attr = tl_attr_float(ctx, t, r);
    return TL_SUCCESS;
  }
  /* x * 1.0 = x and x + (-0.0) = x hold for every x, NaN included. */
  if (k == F_MUL && c[1] && tl_attr_float_value(c[1]) == 1.0) {
    res[0].value = tl_op_operand(op, 0);
    return TL_SUCCESS;
  }
  if (k == F_ADD && c[1] && tl_attr_float_value(c[1]) == 0 &&
      signbit(tl_attr_float_value(c[1]))) {
    res[0].value = tl_op_operand(op, 0);
    return TL_SUCCESS;
  }
  if (k == F_NEG) {
    TlOp *d = tl_value_def(tl_op_operand(op, 0));
    if (d && tl_op_def(d) == tl_op_def(op)) {
      res[0].value = tl_op_operand(d, 0);
      return TL_SUCCESS;
    }
  }
  return TL_FAILURE;
}

#define FLOAT_FOLD(fn, kind)                                                   \
  static TlResult fn(TlOp *op, TlAttr *const *c, TlFoldResult *r) {            \
    return float_fold(kind, op, c, r);                                         \
  }
FLOAT_FOLD(fold_addf, F_ADD)
FLOAT_FOLD(fold_subf, F_SUB)
FLOAT_FOLD(fold_mulf, F_MUL)
FLOAT_FOLD(fold_divf, F_DIV)
FLOAT_FOLD(fold_minf, F_MIN)
FLOAT_FOLD(fold_maxf, F_MAX)
FLOAT_FOLD(fold_negf, F_NEG)
FLOAT_FOLD(fold_absf, F_ABS)



/*===--- Comparisons -----------------------------------------------------===*/

/* Whether name is a predicate of cmpi (want_int) or of cmpf. */
static bool pred_known(const char *name, bool want_int) {
  return want_int ? tl_cmpi_predicate_by_name(name) != TL_CMPI_UNKNOWN
                  : tl_cmpf_predicate_by_name(name) != TL_CMPF_UNKNOWN;
}

static TlResult parse_cmp(TlParser *p, TlOpState *st, bool want_int) {
  TlLoc loc = tl_parser_loc(p);
  const char *pred;
  TlOperandRefVec refs = {0};
  TlType *t;
  TlResult r = TL_FAILURE;
  if (TL_FAILED(tl_parse_identifier(p, &pred)))
    goto out;
  if (!pred_known(pred, want_int)) {
    tl_parser_error(p, loc, "unknown comparison predicate '%s'", pred);
    goto out;
  }
  if (TL_FAILED(tl_parse_punct(p, ",")) ||
      TL_FAILED(tl_parse_operand_list(p, &refs)))
    goto out;
  if (refs.len != 2) {
    tl_parser_error(p, tl_parser_loc(p), "expected 2 operands, found %zu",
                    refs.len);
    goto out;
  }
  if (TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(tl_parse_punct(p, ":")) || TL_FAILED(tl_parse_type(p, &t)) ||
      TL_FAILED(tl_parser_resolve_operands(p, st, 2, refs.data, 1, &t)))
    goto out;
  tl_op_state_set_attr(st, "predicate", tl_attr_string(st->ctx, pred, strlen(pred)));
  tl_op_state_add_result(st, tl_type_bool(st->ctx));
  r = TL_SUCCESS;
out:
  tl_vec_free(&refs);
  return r;
}

static TlResult cmpi_parse(TlParser *p, TlOpState *st) {
  return parse_cmp(p, st, true);
}
static TlResult cmpf_parse(TlParser *p, TlOpState *st) {
  return parse_cmp(p, st, false);
}

static void cmp_print(TlPrinter *p, TlOp *op) {
  static const char *const elided[] = {"predicate", NULL};
  tl_printf(p, " %s, ", tl_attr_string_value(tl_op_attr(op, "predicate"), NULL));
  tl_print_operand(p, tl_op_operand(op, 0));
  tl_print_str(p, ", ");
  tl_print_operand(p, tl_op_operand(op, 1));
  tl_print_attr_dict(p, op, elided);
  tl_print_str(p, " : ");
  tl_print_type(p, tl_value_type(tl_op_operand(op, 0)));
}

static TlResult verify_cmp(TlOp *op, bool pred_ok, bool want_int) {
  if (TL_FAILED(expect_counts(op, 2, 1)))
    return TL_FAILURE;
  if (!pred_ok) {
    tl_op_emit_error(op, "requires a valid 'predicate' attribute");
    return TL_FAILURE;
  }
  TlType *t = tl_value_type(tl_op_operand(op, 0));
  if (want_int ? !is_int(t) : !is_float(t))
    return type_error(op, "operand type", want_int ? "an integer" : "a float", t);
  if (tl_value_type(tl_op_operand(op, 1)) != t) {
    tl_op_emit_error(op, "both operands must have the same type");
    return TL_FAILURE;
  }
  if (!tl_type_is_bool(tl_value_type(tl_op_result(op, 0)))) {
    tl_op_emit_error(op, "result must be i1");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

static TlResult cmpi_verify(TlOp *op) {
  return verify_cmp(op, tl_cmpi_predicate_of(op) != TL_CMPI_UNKNOWN, true);
}
static TlResult cmpf_verify(TlOp *op) {
  return verify_cmp(op, tl_cmpf_predicate_of(op) != TL_CMPF_UNKNOWN, false);
}

static TlResult cmpi_fold(TlOp *op, TlAttr *const *c, TlFoldResult *res) {
  TlCmpiPredicate p = tl_cmpi_predicate_of(op);
  TlContext *ctx = tl_op_context(op);
  if (tl_op_operand(op, 0) == tl_op_operand(op, 1)) {
    res[0].attr =
        tl_attr_bool(ctx, (tl_cmpi_predicate_mask(p) & TL_CMP_EQ) != 0);
    return TL_SUCCESS;
  }
  if (!c[0] || !c[1])
    return TL_FAILURE;
  TlType *t = tl_value_type(tl_op_operand(op, 0));
  bool v = tl_type_int_signed(t)
               ? tl_cmpi_holds_signed(p, tl_attr_int_value(c[0]),
                                      tl_attr_int_value(c[1]))
               : tl_cmpi_holds_unsigned(p, tl_attr_uint_value(c[0]),
                                        tl_attr_uint_value(c[1]));
  res[0].attr = tl_attr_bool(ctx, v);
  return TL_SUCCESS;
}

static TlResult cmpf_fold(TlOp *op, TlAttr *const *c, TlFoldResult *res) {
  if (!c[0] || !c[1])
    return TL_FAILURE;
  bool v = tl_cmpf_holds(tl_cmpf_predicate_of(op), tl_attr_float_value(c[0]),
                         tl_attr_float_value(c[1]));
  res[0].attr = tl_attr_bool(tl_op_context(op), v);
  return TL_SUCCESS;
}



/*===--- select ----------------------------------------------------------===*/

static TlResult select_parse(TlParser *p, TlOpState *st) {
  TlOperandRefVec refs = {0};
  TlType *t;
  TlResult r = TL_FAILURE;
  if (TL_FAILED(tl_parse_operand_list(p, &refs)))
    goto out;
  if (refs.len != 3) {
    tl_parser_error(p, tl_parser_loc(p), "expected 3 operands, found %zu",
                    refs.len);
    goto out;
  }
  TlValue *c;
  if (TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(tl_parse_punct(p, ":")) || TL_FAILED(tl_parse_type(p, &t)) ||
      TL_FAILED(tl_parser_resolve(p, &refs.data[0], tl_type_bool(st->ctx), &c)))
    goto out;
  tl_op_state_add_operand(st, c);
  if (TL_FAILED(tl_parser_resolve_operands(p, st, 2, refs.data + 1, 1, &t)))
    goto out;
  tl_op_state_add_result(st, t);
  r = TL_SUCCESS;
out:
  tl_vec_free(&refs);
  return r;
}

static TlResult select_verify(TlOp *op) {
  if (TL_FAILED(expect_counts(op, 3, 1)))
    return TL_FAILURE;
  if (!tl_type_is_bool(tl_value_type(tl_op_operand(op, 0))))
    return type_error(op, "condition", "i1", tl_value_type(tl_op_operand(op, 0)));
  TlType *t = tl_value_type(tl_op_result(op, 0));
  if (tl_value_type(tl_op_operand(op, 1)) != t ||
      tl_value_type(tl_op_operand(op, 2)) != t) {
    tl_op_emit_error(op, "both choices and the result must have the same type");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

static void select_print(TlPrinter *p, TlOp *op) {
  tl_print_str(p, " ");
  for (unsigned i = 0; i < 3; i++) {
    if (i)
      tl_print_str(p, ", ");
    tl_print_operand(p, tl_op_operand(op, i));
  }
  tl_print_attr_dict(p, op, NULL);
  tl_print_str(p, " : ");
  tl_print_type(p, tl_value_type(tl_op_result(op, 0)));
}

static TlResult select_fold(TlOp *op, TlAttr *const *c, TlFoldResult *res) {
  if (tl_op_operand(op, 1) == tl_op_operand(op, 2)) {
    res[0].value = tl_op_operand(op, 1);
    return TL_SUCCESS;
  }
  if (!c[0])
    return TL_FAILURE;
  res[0].value = tl_op_operand(op, tl_attr_int_value(c[0]) ? 1 : 2);
  return TL_SUCCESS;
}


/*===--- Casts -----------------------------------------------------------===*/

typedef enum CastKind { C_EXTI, C_TRUNCI, C_ITOFP, C_FPTOI, C_EXTF, C_TRUNCF, C_BITCAST } CastKind;

static TlResult cast_parse(TlParser *p, TlOpState *st) {
  TlOperandRef ref;
  TlType *from, *to;
  TlValue *v;
  if (TL_FAILED(tl_parse_operand(p, &ref)) ||
      TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(tl_parse_punct(p, ":")) || TL_FAILED(tl_parse_type(p, &from)) ||
      TL_FAILED(tl_parse_keyword(p, "to")) || TL_FAILED(tl_parse_type(p, &to)) ||
      TL_FAILED(tl_parser_resolve(p, &ref, from, &v)))
    return TL_FAILURE;
  tl_op_state_add_operand(st, v);
  tl_op_state_add_result(st, to);
  return TL_SUCCESS;
}

static void cast_print(TlPrinter *p, TlOp *op) {
  tl_print_str(p, " ");
  tl_print_operand(p, tl_op_operand(op, 0));
  tl_print_attr_dict(p, op, NULL);
  tl_print_str(p, " : ");
  tl_print_type(p, tl_value_type(tl_op_operand(op, 0)));
  tl_print_str(p, " to ");
  tl_print_type(p, tl_value_type(tl_op_result(op, 0)));
}

static CastKind cast_kind(const TlOp *op);

static TlResult cast_verify(TlOp *op) {
  if (TL_FAILED(expect_counts(op, 1, 1)))
    return TL_FAILURE;
  TlType *from = tl_value_type(tl_op_operand(op, 0));
  TlType *to = tl_value_type(tl_op_result(op, 0));
  unsigned wf = tl_type_bitwidth(from), wt = tl_type_bitwidth(to);
  switch (cast_kind(op)) {
  case C_EXTI:
  case C_TRUNCI:
    if (!is_int(from))
      return type_error(op, "source type", "an integer", from);
    if (!is_int(to))
      return type_error(op, "result type", "an integer", to);
    if (cast_kind(op) == C_EXTI ? wt <= wf : wt >= wf) {
      tl_op_emit_error(op, "result must be %s than the source (%u vs %u bits)",
                       cast_kind(op) == C_EXTI ? "wider" : "narrower", wt, wf);
      return TL_FAILURE;
    }
    return TL_SUCCESS;
  case C_ITOFP:
    if (!is_int(from))
      return type_error(op, "source type", "an integer", from);
    if (!is_float(to))
      return type_error(op, "result type", "a float", to);
    return TL_SUCCESS;
  case C_FPTOI:
    if (!is_float(from))
      return type_error(op, "source type", "a float", from);
    if (!is_int(to))
      return type_error(op, "result type", "an integer", to);
    return TL_SUCCESS;
  case C_EXTF:
  case C_TRUNCF: {
    if (!is_float(from))
      return type_error(op, "source type", "a float", from);
    if (!is_float(to))
      return type_error(op, "result type", "a float", to);
    /* Widening must be exact: more (or equal) exponent and mantissa bits,
     * a different type, and no larger finite range (a format without
     * infinity uses its top binade for finite values: f7e5m1 reaches 98304,
     * beyond f16). */
    unsigned ef = tl_type_float_exp(from), mf = tl_type_float_man(from);
    unsigned et = tl_type_float_exp(to), mt = tl_type_float_man(to);
    bool widens = et >= ef && mt >= mf && from != to &&
                  tl_float_max(ef, mf) <= tl_float_max(et, mt);
    if (cast_kind(op) == C_EXTF && !widens) {
      tl_op_emit_error(op, "result type cannot represent every source value; "
                           "use arith.truncf");
      return TL_FAILURE;
    }
    if (cast_kind(op) == C_TRUNCF && (widens || from == to)) {
      tl_op_emit_error(op, "result type represents every source value; use "
                           "arith.extf");
      return TL_FAILURE;
    }
    return TL_SUCCESS;
  }
  case C_BITCAST:
    if (!tl_type_is_scalar(from) || !tl_type_is_scalar(to) || wf != wt) {
      tl_op_emit_error(op, "source and result must be scalars of the same bit "
                           "width (%u vs %u)",
                       wf, wt);
      return TL_FAILURE;
    }
    return TL_SUCCESS;
  }
  return TL_SUCCESS;
}

static TlResult cast_fold(TlOp *op, TlAttr *const *c, TlFoldResult *res) {
  TlType *from = tl_value_type(tl_op_operand(op, 0));
  TlType *to = tl_value_type(tl_op_result(op, 0));
  TlContext *ctx = tl_op_context(op);
  CastKind k = cast_kind(op);
  if (from == to && k == C_BITCAST) {
    res[0].value = tl_op_operand(op, 0);
    return TL_SUCCESS;
  }
  /* Round trips through a wider type: trunci(exti(x)) = x. The kind of the
   * defining op is checked first: only casts are known to have an operand. */
  TlOp *d = tl_value_def(tl_op_operand(op, 0));
  CastKind dk = d ? cast_kind(d) : (CastKind)-1;
  if (!c[0] &&
      ((k == C_TRUNCI && dk == C_EXTI) || (k == C_TRUNCF && dk == C_EXTF) ||
       (k == C_BITCAST && dk == C_BITCAST)) &&
      tl_value_type(tl_op_operand(d, 0)) == to) {
    res[0].value = tl_op_operand(d, 0);
    return TL_SUCCESS;
  }
  if (!c[0])
    return TL_FAILURE;
  switch (k) {
  case C_EXTI:
  case C_TRUNCI:
    res[0].attr = tl_attr_int(ctx, to, tl_attr_int_value(c[0]));
    return TL_SUCCESS;
  case C_ITOFP: {
    double v = tl_type_int_signed(from) ? (double)tl_attr_int_value(c[0])
                                        : (double)tl_attr_uint_value(c[0]);
    /* Beyond 2^53 the conversion to double already rounds; do not fold. */
    if (fabs(v) > 9007199254740992.0)
      return TL_FAILURE;
    double r;
    if (!round_to(to, v, &r))
      return TL_FAILURE;
    res[0].attr = tl_attr_float(ctx, to, r);
    return TL_SUCCESS;
  }
  case C_FPTOI: {
    double v = tl_attr_float_value(c[0]);
    unsigned w = tl_type_int_width(to);
    bool sgn = tl_type_int_signed(to);
    double lo = sgn ? -ldexp(1.0, (int)w - 1) : 0;
    double hi = sgn ? ldexp(1.0, (int)w - 1) : ldexp(1.0, (int)w);
    int64_t out;
    if (isnan(v))
      out = 0;
    else if (v <= lo)
      out = sgn ? (int64_t)lo : 0;
    else if (v >= hi)
      out = sgn ? (int64_t)(hi - 1 > 9.2e18 ? INT64_MAX : (int64_t)(hi - 1))
                : (w == 64 ? (int64_t)UINT64_MAX : (int64_t)((1ull << w) - 1));
    else if (!sgn && v >= 9223372036854775808.0)
      out = (int64_t)(uint64_t)trunc(v);
    else
      out = (int64_t)trunc(v);
    res[0].attr = tl_attr_int(ctx, to, out);
    return TL_SUCCESS;
  }
  case C_EXTF:
  case C_TRUNCF: {
    double r;
    if (!round_to(to, tl_attr_float_value(c[0]), &r))
      return TL_FAILURE;
    res[0].attr = tl_attr_float(ctx, to, r);
    return TL_SUCCESS;
  }
  case C_BITCAST: {
    uint64_t bits;
    if (tl_attr_kind(c[0]) == TL_ATTR_INT)
      bits = tl_attr_uint_value(c[0]);
    else
      bits = tl_float_to_bits(tl_attr_float_value(c[0]), tl_type_float_exp(from),
                              tl_type_float_man(from));
    if (is_int(to)) {
      res[0].attr = tl_attr_int(ctx, to, (int64_t)bits);
    } else {
      double v = tl_float_from_bits(bits, tl_type_float_exp(to),
                                    tl_type_float_man(to), NULL);
      /* Attributes keep one positive NaN per type (no payload, no sign):
       * fold a NaN only if its bits are that one's. */
      if (isnan(v) && tl_float_to_bits(NAN, tl_type_float_exp(to),
                                       tl_type_float_man(to)) != bits)
        return TL_FAILURE;
      res[0].attr = tl_attr_float(ctx, to, v);
    }
    return TL_SUCCESS;
  }
  }
  return TL_FAILURE;
}

static CastKind cast_kind(const TlOp *op) {
  switch (tl_op_id(op)) {
  case TL_OP_ARITH_EXTI: return C_EXTI;
  case TL_OP_ARITH_TRUNCI: return C_TRUNCI;
  case TL_OP_ARITH_ITOFP: return C_ITOFP;
  case TL_OP_ARITH_FPTOI: return C_FPTOI;
  case TL_OP_ARITH_EXTF: return C_EXTF;
  case TL_OP_ARITH_TRUNCF: return C_TRUNCF;
  case TL_OP_ARITH_BITCAST: return C_BITCAST;
  default: break;
  }
  return (CastKind)-1;
}

/*===--- Registration ----------------------------------------------------===*/

static TlOp *materialize(TlBuilder *b, TlAttr *value, TlType *type,
                         TlLoc loc) {
  TlAttrKind k = tl_attr_kind(value);
  if ((k != TL_ATTR_INT && k != TL_ATTR_FLOAT) || tl_attr_get_type(value) != type)
    return NULL;
  return tl_value_def(tl_arith_constant(b, value, loc));
}

/* Each op's hooks, by its table row in include/tl/ops/arith.def. */
#define INT_OP(fold_fn, pats)                                              \
  .verify = verify_int_binary, .parse = parse_binary,                          \
  .print = print_same_type, .fold = fold_fn, .patterns = pats
#define FLOAT_OP(fold_fn)                                                  \
  .verify = verify_float_binary, .parse = parse_binary,                        \
  .print = print_same_type, .fold = fold_fn
#define FLOAT_UN(fold_fn)                                                   \
  .verify = verify_float_unary, .parse = parse_unary,                          \
  .print = print_same_type, .fold = fold_fn
#define CAST_OP                                                                   \
  .verify = cast_verify, .parse = cast_parse, .print = cast_print,             \
  .fold = cast_fold

#define TL_HOOKS_ARITH_CONSTANT                                                \
  .verify = constant_verify, .parse = constant_parse,                          \
  .print = constant_print, .fold = constant_fold
#define TL_HOOKS_ARITH_ADDI INT_OP(fold_addi, addi_patterns)
#define TL_HOOKS_ARITH_SUBI INT_OP(fold_subi, NULL)
#define TL_HOOKS_ARITH_MULI INT_OP(fold_muli, muli_patterns)
#define TL_HOOKS_ARITH_DIVI INT_OP(fold_divi, NULL)
#define TL_HOOKS_ARITH_REMI INT_OP(fold_remi, NULL)
#define TL_HOOKS_ARITH_CEILDIVI INT_OP(fold_ceildivi, NULL)
#define TL_HOOKS_ARITH_ANDI INT_OP(fold_andi, andi_patterns)
#define TL_HOOKS_ARITH_ORI INT_OP(fold_ori, ori_patterns)
#define TL_HOOKS_ARITH_XORI INT_OP(fold_xori, xori_patterns)
#define TL_HOOKS_ARITH_SHLI INT_OP(fold_shli, NULL)
#define TL_HOOKS_ARITH_SHRI INT_OP(fold_shri, NULL)
#define TL_HOOKS_ARITH_MINI INT_OP(fold_mini, NULL)
#define TL_HOOKS_ARITH_MAXI INT_OP(fold_maxi, NULL)
#define TL_HOOKS_ARITH_ADDF FLOAT_OP(fold_addf)
#define TL_HOOKS_ARITH_SUBF FLOAT_OP(fold_subf)
#define TL_HOOKS_ARITH_MULF FLOAT_OP(fold_mulf)
#define TL_HOOKS_ARITH_DIVF FLOAT_OP(fold_divf)
#define TL_HOOKS_ARITH_MINF FLOAT_OP(fold_minf)
#define TL_HOOKS_ARITH_MAXF FLOAT_OP(fold_maxf)
#define TL_HOOKS_ARITH_NEGF FLOAT_UN(fold_negf)
#define TL_HOOKS_ARITH_ABSF FLOAT_UN(fold_absf)
#define TL_HOOKS_ARITH_CMPI                                                    \
  .verify = cmpi_verify, .parse = cmpi_parse, .print = cmp_print,              \
  .fold = cmpi_fold
#define TL_HOOKS_ARITH_CMPF                                                    \
  .verify = cmpf_verify, .parse = cmpf_parse, .print = cmp_print,              \
  .fold = cmpf_fold
#define TL_HOOKS_ARITH_SELECT                                                  \
  .verify = select_verify, .parse = select_parse, .print = select_print,       \
  .fold = select_fold
#define TL_HOOKS_ARITH_EXTI CAST_OP
#define TL_HOOKS_ARITH_TRUNCI CAST_OP
#define TL_HOOKS_ARITH_ITOFP CAST_OP
#define TL_HOOKS_ARITH_FPTOI CAST_OP
#define TL_HOOKS_ARITH_EXTF CAST_OP
#define TL_HOOKS_ARITH_TRUNCF CAST_OP
#define TL_HOOKS_ARITH_BITCAST CAST_OP

static const TlOpDef arith_ops[] = {
#define TL_OP TL_OP_ENTRY
#include "tl/ops/arith.def"
#undef TL_OP
};

static const TlDialectDef arith_dialect = {
    .name = "arith",
    .ops = arith_ops,
    .num_ops = sizeof arith_ops / sizeof arith_ops[0],
    .materialize_constant = materialize,
};

void tl_arith_register(TlContext *ctx) {
  tl_context_register_dialect(ctx, &arith_dialect);
}
