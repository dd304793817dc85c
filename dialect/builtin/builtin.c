/* The builtin dialect: `module`, `func` and `return`.
 *
 *   module @name? attributes {...}? { ops }
 *   func @name(%a: T, ...) -> (R, ...) attributes {...}? { ops; return ... }
 *   return %v, ... : T, ...
 *
 * A module holds any ops and needs no terminator; a func is isolated from
 * above and its body ends with `return` matching its result types. Builtin
 * ops print without the `builtin.` prefix. */
#include "../../lib/ir/ir_internal.h"

#include <string.h>

/*===--- module ----------------------------------------------------------===*/

static TlResult module_parse(TlParser *p, TlOpState *st) {
  const char *name;
  if (!tl_parser_peek_punct(p, "{") && !tl_parser_peek_identifier(p, NULL)) {
    if (TL_FAILED(tl_parse_symbol_name(p, &name)))
      return TL_FAILURE;
    tl_op_state_set_attr(st, "sym_name", tl_attr_string(st->ctx, name, strlen(name)));
  }
  if (tl_parse_optional_keyword(p, "attributes") &&
      TL_FAILED(tl_parse_optional_attr_dict(p, st)))
    return TL_FAILURE;
  return tl_parse_region(p, st, 0, NULL);
}

static void module_print(TlPrinter *p, TlOp *op) {
  const char *name = tl_symbol_name(op);
  if (name) {
    TlAttr *sym = tl_attr_symbol(tl_op_context(op), name);
    tl_print_str(p, " ");
    tl_print_attr(p, sym);
  }
  static const char *const elided[] = {"sym_name", NULL};
  bool other = false;
  for (unsigned i = 0; i < tl_op_num_attrs(op); i++)
    if (strcmp(tl_op_attr_at(op, i).name, "sym_name") != 0)
      other = true;
  if (other) {
    tl_print_str(p, " attributes");
    tl_print_attr_dict(p, op, elided);
  }
  tl_print_str(p, " ");
  tl_print_region(p, tl_op_region(op, 0), false);
}

static TlResult module_verify(TlOp *op) {
  if (tl_op_num_operands(op) || tl_op_num_results(op) ||
      tl_op_num_regions(op) != 1) {
    tl_op_emit_error(op, "takes no operands, has no results and one region");
    return TL_FAILURE;
  }
  TlAttr *n = tl_op_attr(op, "sym_name");
  if (n && tl_attr_kind(n) != TL_ATTR_STRING) {
    tl_op_emit_error(op, "attribute 'sym_name' must be a string");
    return TL_FAILURE;
  }
  if (tl_block_num_args(tl_region_first_block(tl_op_region(op, 0)))) {
    tl_op_emit_error(op, "body takes no arguments");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}


/*===--- func ------------------------------------------------------------===*/

static TlResult func_parse(TlParser *p, TlOpState *st) {
  const char *name;
  TL_VEC(TlArgDef) args = {0};
  TlTypeVec ins = {0}, outs = {0};
  TlResult r = TL_FAILURE;
  if (TL_FAILED(tl_parse_symbol_name(p, &name)) ||
      TL_FAILED(tl_parse_punct(p, "(")))
    goto out;
  if (!tl_parser_peek_punct(p, ")")) {
    do {
      TlArgDef a;
      if (TL_FAILED(tl_parse_arg_def(p, &a)))
        goto out;
      tl_vec_push(&args, a);
      tl_vec_push(&ins, a.type);
    } while (tl_parse_optional_punct(p, ","));
  }
  if (TL_FAILED(tl_parse_punct(p, ")")))
    goto out;
  if (tl_parse_optional_punct(p, "->") &&
      TL_FAILED(tl_parse_type_list(p, &outs)))
    goto out;
  /* Set before the attribute dictionary so that a dictionary naming them
   * again is reported as a duplicate. */
  TlContext *ctx = st->ctx;
  tl_op_state_set_attr(st, "sym_name", tl_attr_string(ctx, name, strlen(name)));
  tl_op_state_set_attr(
      st, "function_type",
      tl_attr_type(ctx, tl_type_function(ctx, (unsigned)ins.len, ins.data,
                                         (unsigned)outs.len, outs.data)));
  if (tl_parse_optional_keyword(p, "attributes") &&
      TL_FAILED(tl_parse_optional_attr_dict(p, st)))
    goto out;
  r = tl_parse_region(p, st, (unsigned)args.len, args.data);
out:
  tl_vec_free(&args);
  tl_vec_free(&ins);
  tl_vec_free(&outs);
  return r;
}

static TlType *func_type(const TlOp *op) {
  TlAttr *a = tl_op_attr(op, "function_type");
  if (!a || tl_attr_kind(a) != TL_ATTR_TYPE ||
      tl_type_kind(tl_attr_type_value(a)) != TL_TYPE_FUNCTION)
    return NULL;
  return tl_attr_type_value(a);
}

static void func_print(TlPrinter *p, TlOp *op) {
  TlContext *ctx = tl_op_context(op);
  tl_print_str(p, " ");
  tl_print_attr(p, tl_attr_symbol(ctx, tl_symbol_name(op)));
  tl_print_str(p, "(");
  TlBlock *entry = tl_region_first_block(tl_op_region(op, 0));
  for (unsigned i = 0; i < tl_block_num_args(entry); i++) {
    if (i)
      tl_print_str(p, ", ");
    tl_print_arg_def(p, tl_block_arg(entry, i));
  }
  tl_print_str(p, ")");
  TlType *ft = func_type(op);
  unsigned nout = tl_type_function_num_results(ft);
  if (nout) {
    /* A single result is written bare unless it is itself a function type,
     * whose own parentheses would read as a result list. */
    bool parens = nout > 1 || tl_type_kind(tl_type_function_result(ft, 0)) ==
                                  TL_TYPE_FUNCTION;
    tl_print_str(p, parens ? " -> (" : " -> ");
    for (unsigned i = 0; i < nout; i++) {
      if (i)
        tl_print_str(p, ", ");
      tl_print_type(p, tl_type_function_result(ft, i));
    }
    if (parens)
      tl_print_str(p, ")");
  }
  static const char *const elided[] = {"sym_name", "function_type", NULL};
  if (tl_op_num_attrs(op) > 2) {
    tl_print_str(p, " attributes");
    tl_print_attr_dict(p, op, elided);
  }
  tl_print_str(p, " ");
  tl_print_region(p, tl_op_region(op, 0), false);
}

static TlResult func_verify(TlOp *op) {
  TlType *ft = func_type(op);
  if (!ft) {
    tl_op_emit_error(op, "requires a function type attribute 'function_type'");
    return TL_FAILURE;
  }
  if (tl_op_num_operands(op) || tl_op_num_results(op) ||
      tl_op_num_regions(op) != 1) {
    tl_op_emit_error(op, "takes no operands, has no results and one region");
    return TL_FAILURE;
  }
  TlBlock *entry = tl_region_first_block(tl_op_region(op, 0));
  unsigned n = tl_type_function_num_inputs(ft);
  if (tl_block_num_args(entry) != n) {
    tl_op_emit_error(op, "entry block has %u arguments but the type has %u "
                         "inputs",
                     tl_block_num_args(entry), n);
    return TL_FAILURE;
  }
  for (unsigned i = 0; i < n; i++)
    if (tl_value_type(tl_block_arg(entry, i)) != tl_type_function_input(ft, i)) {
      tl_op_emit_error(op, "type of entry block argument #%u does not match "
                           "the function type",
                       i);
      return TL_FAILURE;
    }
  return TL_SUCCESS;
}


/*===--- return ----------------------------------------------------------===*/

/* `return %a, %b : T, U` */
static TlResult return_parse(TlParser *p, TlOpState *st) {
  return tl_parse_typed_operands(p, st, false);
}

static void return_print(TlPrinter *p, TlOp *op) {
  tl_print_typed_operands(p, op, 0, false);
}

static TlResult return_verify(TlOp *op) {
  TlOp *f = tl_op_parent(op);
  if (!f || tl_op_id(f) != TL_OP_BUILTIN_FUNC) {
    tl_op_emit_error(op, "must be inside a 'func'");
    return TL_FAILURE;
  }
  TlType *ft = func_type(f);
  if (!ft)
    return TL_SUCCESS; /* the func's own verifier reports it */
  unsigned n = tl_type_function_num_results(ft);
  if (tl_op_num_operands(op) != n) {
    tl_op_emit_error(op, "has %u operands, but the enclosing function returns "
                         "%u values",
                     tl_op_num_operands(op), n);
    return TL_FAILURE;
  }
  for (unsigned i = 0; i < n; i++)
    if (tl_value_type(tl_op_operand(op, i)) != tl_type_function_result(ft, i)) {
      TlStr a = {0}, b = {0};
      tl_type_print(tl_value_type(tl_op_operand(op, i)), &a);
      tl_type_print(tl_type_function_result(ft, i), &b);
      tl_op_emit_error(op, "type of operand #%u (%s) does not match the "
                           "function result type (%s)",
                       i, tl_str_cstr(&a), tl_str_cstr(&b));
      tl_str_free(&a);
      tl_str_free(&b);
      return TL_FAILURE;
    }
  if (tl_op_num_results(op)) {
    tl_op_emit_error(op, "has no results");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}


/*===--- Definitions -----------------------------------------------------===*/

#define TL_HOOKS_BUILTIN_MODULE                                                \
  .verify = module_verify, .parse = module_parse, .print = module_print
#define TL_HOOKS_BUILTIN_FUNC                                                  \
  .verify = func_verify, .parse = func_parse, .print = func_print
#define TL_HOOKS_BUILTIN_RETURN                                                \
  .verify = return_verify, .parse = return_parse, .print = return_print

const TlOpDef tl_builtin_ops[] = {
#define TL_OP TL_OP_ENTRY
#include "tl/ops/builtin.def"
#undef TL_OP
};

static const TlDialectDef builtin_dialect = {
    .name = "builtin",
    .ops = tl_builtin_ops,
    .num_ops = sizeof tl_builtin_ops / sizeof tl_builtin_ops[0],
};

void tl_builtin_register(TlContext *ctx) {
  tl_context_register_dialect(ctx, &builtin_dialect);
}
