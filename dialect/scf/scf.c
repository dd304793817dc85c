/* The scf dialect: structured control flow.
 *
 *   %r = scf.for %i = %lb to %ub step %s : T iter_args(%a = %init) -> (R) {
 *     ... scf.yield %next : R
 *   }
 *   %r = scf.if %cond -> (R) { ... scf.yield %x : R } else { ... }
 *   %r = scf.while (%a = %init) : (T) -> (R) {
 *     ... scf.condition(%c) %v : R
 *   } do {
 *   ^bb0(%b: R):
 *     ... scf.yield %next : T
 *   }
 *
 * The for loop runs i = lb, lb + step, ... while i < ub (compared with the
 * signedness of T); step must be positive. Every region holds one block
 * ending in scf.yield (scf.condition for the "before" region of while). */
#include "tl/dialects.h"
#include "tl/rewrite.h"

#include <stdio.h>
#include <string.h>


static TlResult counts_error(TlOp *op, const char *what, unsigned got,
                             unsigned want) {
  tl_op_emit_error(op, "%s: expected %u, found %u", what, want, got);
  return TL_FAILURE;
}

/* Types of v[0..n) equal types t[0..n)? Reports the first mismatch. */
static TlResult match_types(TlOp *op, const char *what, unsigned n,
                            TlType *const *want, TlValue *const *vals,
                            TlType *const *have) {
  for (unsigned i = 0; i < n; i++) {
    TlType *h = vals ? tl_value_type(vals[i]) : have[i];
    if (h != want[i]) {
      TlStr a = {0}, b = {0};
      tl_type_print(h, &a);
      tl_type_print(want[i], &b);
      tl_op_emit_error(op, "%s #%u has type %s, but %s is expected", what, i,
                       tl_str_cstr(&a), tl_str_cstr(&b));
      tl_str_free(&a);
      tl_str_free(&b);
      return TL_FAILURE;
    }
  }
  return TL_SUCCESS;
}

static TlOp *region_terminator(TlOp *op, unsigned r) {
  TlBlock *b = tl_region_first_block(tl_op_region(op, r));
  return b ? tl_block_terminator(b) : NULL;
}

/* Collects the operands or result types of an op into a scratch array. */
static TlValue **operands_of(TlOp *op, unsigned from, TlValue **buf,
                             unsigned cap) {
  unsigned n = tl_op_num_operands(op) - from;
  TlValue **v = n <= cap ? buf : tl_xmalloc(sizeof *v * n);
  for (unsigned i = 0; i < n; i++)
    v[i] = tl_op_operand(op, from + i);
  return v;
}

static TlType **result_types(TlOp *op, TlType **buf, unsigned cap) {
  unsigned n = tl_op_num_results(op);
  TlType **t = n <= cap ? buf : tl_xmalloc(sizeof *t * n);
  for (unsigned i = 0; i < n; i++)
    t[i] = tl_value_type(tl_op_result(op, i));
  return t;
}

/*===--- yield and condition ---------------------------------------------===*/

/* `%a, %b : T, U` (possibly empty) */
static TlResult parse_values_and_types(TlParser *p, TlOpState *st) {
  return tl_parse_typed_operands(p, st, false);
}

static void print_values_and_types(TlPrinter *p, TlOp *op, unsigned from) {
  tl_print_typed_operands(p, op, from, false);
}

static void yield_print(TlPrinter *p, TlOp *op) { print_values_and_types(p, op, 0); }

static TlResult yield_verify(TlOp *op) {
  TlOp *parent = tl_op_parent(op);
  TlOpId pid = parent ? tl_op_id(parent) : TL_OP_NONE;
  if (pid != TL_OP_SCF_FOR && pid != TL_OP_SCF_IF && pid != TL_OP_SCF_WHILE) {
    tl_op_emit_error(op, "must terminate a region of scf.for, scf.if or "
                         "scf.while");
    return TL_FAILURE;
  }
  if (tl_op_num_results(op))
    return counts_error(op, "number of results", tl_op_num_results(op), 0);
  /* The parent checks the types it expects. */
  return TL_SUCCESS;
}


static TlResult condition_parse(TlParser *p, TlOpState *st) {
  TlOperandRef c;
  TlValue *v;
  if (TL_FAILED(tl_parse_punct(p, "(")) || TL_FAILED(tl_parse_operand(p, &c)) ||
      TL_FAILED(tl_parse_punct(p, ")")) ||
      TL_FAILED(tl_parser_resolve(p, &c, tl_type_bool(tl_parser_context(p)), &v)))
    return TL_FAILURE;
  tl_op_state_add_operand(st, v);
  return parse_values_and_types(p, st);
}

static void condition_print(TlPrinter *p, TlOp *op) {
  tl_print_str(p, "(");
  tl_print_operand(p, tl_op_operand(op, 0));
  tl_print_str(p, ")");
  print_values_and_types(p, op, 1);
}

static TlResult condition_verify(TlOp *op) {
  TlOp *parent = tl_op_parent(op);
  if (!parent || tl_op_id(parent) != TL_OP_SCF_WHILE ||
      tl_region_first_block(tl_op_region(parent, 0)) != tl_op_block(op)) {
    tl_op_emit_error(op, "must terminate the 'before' region of scf.while");
    return TL_FAILURE;
  }
  if (tl_op_num_operands(op) < 1 ||
      !tl_type_is_bool(tl_value_type(tl_op_operand(op, 0)))) {
    tl_op_emit_error(op, "first operand must be an i1 condition");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}


/*===--- for -------------------------------------------------------------===*/

static TlResult for_parse(TlParser *p, TlOpState *st) {
  TlArgDef iv;
  TlOperandRef lb, ub, step;
  TL_VEC(TlArgDef) args = {0};
  TlOperandRefVec inits = {0};
  TlTypeVec types = {0};
  TlType *t;
  TlResult r = TL_FAILURE;
  if (TL_FAILED(tl_parse_operand(p, &iv.ref)) || TL_FAILED(tl_parse_punct(p, "=")) ||
      TL_FAILED(tl_parse_operand(p, &lb)) || TL_FAILED(tl_parse_keyword(p, "to")) ||
      TL_FAILED(tl_parse_operand(p, &ub)) || TL_FAILED(tl_parse_keyword(p, "step")) ||
      TL_FAILED(tl_parse_operand(p, &step)) || TL_FAILED(tl_parse_punct(p, ":")) ||
      TL_FAILED(tl_parse_type(p, &t)))
    goto out;
  TlOperandRef bounds[3] = {lb, ub, step};
  if (TL_FAILED(tl_parser_resolve_operands(p, st, 3, bounds, 1, &t)))
    goto out;
  iv.type = t;
  tl_vec_push(&args, iv);
  if (tl_parse_optional_keyword(p, "iter_args")) {
    if (TL_FAILED(tl_parse_punct(p, "(")))
      goto out;
    do {
      TlArgDef a;
      TlOperandRef init;
      if (TL_FAILED(tl_parse_operand(p, &a.ref)) ||
          TL_FAILED(tl_parse_punct(p, "=")) ||
          TL_FAILED(tl_parse_operand(p, &init)))
        goto out;
      tl_vec_push(&args, a);
      tl_vec_push(&inits, init);
    } while (tl_parse_optional_punct(p, ","));
    if (TL_FAILED(tl_parse_punct(p, ")")) || TL_FAILED(tl_parse_punct(p, "->")) ||
        TL_FAILED(tl_parse_type_list(p, &types)))
      goto out;
    if (types.len != inits.len) {
      tl_parser_error(p, inits.data[0].loc,
                      "%zu iter_args but %zu result types", inits.len,
                      types.len);
      goto out;
    }
    if (TL_FAILED(tl_parser_resolve_operands(p, st, (unsigned)inits.len,
                                             inits.data, (unsigned)types.len,
                                             types.data)))
      goto out;
    for (size_t i = 0; i < types.len; i++) {
      args.data[i + 1].type = types.data[i];
      tl_op_state_add_result(st, types.data[i]);
    }
  }
  if (TL_FAILED(tl_parse_region(p, st, (unsigned)args.len, args.data)))
    goto out;
  r = tl_parse_optional_attr_dict(p, st);
out:
  tl_vec_free(&args);
  tl_vec_free(&inits);
  tl_vec_free(&types);
  return r;
}

static void for_print(TlPrinter *p, TlOp *op) {
  TlBlock *body = tl_region_first_block(tl_op_region(op, 0));
  tl_print_str(p, " ");
  tl_print_operand(p, tl_block_arg(body, 0));
  tl_print_str(p, " = ");
  tl_print_operand(p, tl_op_operand(op, 0));
  tl_print_str(p, " to ");
  tl_print_operand(p, tl_op_operand(op, 1));
  tl_print_str(p, " step ");
  tl_print_operand(p, tl_op_operand(op, 2));
  tl_print_str(p, " : ");
  tl_print_type(p, tl_value_type(tl_op_operand(op, 0)));
  unsigned n = tl_op_num_results(op);
  if (n) {
    tl_print_str(p, " iter_args(");
    for (unsigned i = 0; i < n; i++) {
      if (i)
        tl_print_str(p, ", ");
      tl_print_operand(p, tl_block_arg(body, i + 1));
      tl_print_str(p, " = ");
      tl_print_operand(p, tl_op_operand(op, 3 + i));
    }
    tl_print_str(p, ") -> (");
    for (unsigned i = 0; i < n; i++) {
      if (i)
        tl_print_str(p, ", ");
      tl_print_type(p, tl_value_type(tl_op_result(op, i)));
    }
    tl_print_str(p, ")");
  }
  tl_print_str(p, " ");
  tl_print_region(p, tl_op_region(op, 0), false);
  tl_print_attr_dict(p, op, NULL);
}

static TlResult for_verify(TlOp *op) {
  unsigned nops = tl_op_num_operands(op), n = tl_op_num_results(op);
  if (nops < 3 || nops != 3 + n) {
    tl_op_emit_error(op, "expects lb, ub, step and one init value per result "
                         "(%u results, %u operands)",
                     n, nops);
    return TL_FAILURE;
  }
  if (tl_op_num_regions(op) != 1)
    return counts_error(op, "number of regions", tl_op_num_regions(op), 1);
  TlType *t = tl_value_type(tl_op_operand(op, 0));
  if (!tl_type_is_int(t) || tl_type_is_bool(t)) {
    TlStr s = {0};
    tl_type_print(t, &s);
    tl_op_emit_error(op, "bounds must be integers, but have type %s",
                     tl_str_cstr(&s));
    tl_str_free(&s);
    return TL_FAILURE;
  }
  if (tl_value_type(tl_op_operand(op, 1)) != t ||
      tl_value_type(tl_op_operand(op, 2)) != t) {
    tl_op_emit_error(op, "lb, ub and step must have the same type");
    return TL_FAILURE;
  }
  TlAttr *step = tl_value_constant(tl_op_operand(op, 2));
  if (step && (tl_type_int_signed(t) ? tl_attr_int_value(step) <= 0
                                     : tl_attr_uint_value(step) == 0)) {
    tl_op_emit_error(op, "step must be positive");
    return TL_FAILURE;
  }
  TlBlock *body = tl_region_first_block(tl_op_region(op, 0));
  if (tl_block_num_args(body) != 1 + n)
    return counts_error(op, "number of body arguments (induction variable and "
                            "iter_args)",
                        tl_block_num_args(body), 1 + n);
  if (tl_value_type(tl_block_arg(body, 0)) != t) {
    tl_op_emit_error(op, "induction variable must have the type of the bounds");
    return TL_FAILURE;
  }
  TlType *buf[16];
  TlType **rt = result_types(op, buf, 16);
  TlValue *vbuf[16], **inits = operands_of(op, 3, vbuf, 16);
  TlResult res = match_types(op, "init value", n, rt, inits, NULL);
  TlValue *abuf[16], **bargs = n <= 16 ? abuf : tl_xmalloc(sizeof *bargs * n);
  for (unsigned i = 0; i < n; i++)
    bargs[i] = tl_block_arg(body, i + 1);
  if (!TL_FAILED(res))
    res = match_types(op, "iter_arg", n, rt, bargs, NULL);
  TlOp *y = region_terminator(op, 0);
  if (!TL_FAILED(res) && tl_op_id(y) != TL_OP_SCF_YIELD) {
    tl_op_emit_error(op, "body must end with scf.yield");
    res = TL_FAILURE;
  }
  if (!TL_FAILED(res) && tl_op_num_operands(y) != n) {
    tl_op_emit_error(y, "yields %u values, but the loop carries %u",
                     tl_op_num_operands(y), n);
    res = TL_FAILURE;
  }
  if (!TL_FAILED(res)) {
    TlValue *ybuf[16], **yv = operands_of(y, 0, ybuf, 16);
    res = match_types(y, "yielded value", n, rt, yv, NULL);
    if (yv != ybuf)
      tl_free(yv);
  }
  if (rt != buf)
    tl_free(rt);
  if (inits != vbuf)
    tl_free(inits);
  if (bargs != abuf)
    tl_free(bargs);
  return res;
}


/*===--- if --------------------------------------------------------------===*/

static TlResult if_parse(TlParser *p, TlOpState *st) {
  TlOperandRef c;
  TlValue *v;
  TlTypeVec types = {0};
  TlResult r = TL_FAILURE;
  if (TL_FAILED(tl_parse_operand(p, &c)) ||
      TL_FAILED(tl_parser_resolve(p, &c, tl_type_bool(st->ctx), &v)))
    goto out;
  tl_op_state_add_operand(st, v);
  if (tl_parse_optional_punct(p, "->") && TL_FAILED(tl_parse_type_list(p, &types)))
    goto out;
  for (size_t i = 0; i < types.len; i++)
    tl_op_state_add_result(st, types.data[i]);
  if (TL_FAILED(tl_parse_region(p, st, 0, NULL)))
    goto out;
  if (tl_parse_optional_keyword(p, "else")) {
    if (TL_FAILED(tl_parse_region(p, st, 0, NULL)))
      goto out;
  } else {
    tl_op_state_add_region(st, NULL); /* an empty else */
  }
  r = tl_parse_optional_attr_dict(p, st);
out:
  tl_vec_free(&types);
  return r;
}

static void if_print(TlPrinter *p, TlOp *op) {
  tl_print_str(p, " ");
  tl_print_operand(p, tl_op_operand(op, 0));
  unsigned n = tl_op_num_results(op);
  if (n) {
    tl_print_str(p, " -> (");
    for (unsigned i = 0; i < n; i++) {
      if (i)
        tl_print_str(p, ", ");
      tl_print_type(p, tl_value_type(tl_op_result(op, i)));
    }
    tl_print_str(p, ")");
  }
  tl_print_str(p, " ");
  tl_print_region(p, tl_op_region(op, 0), false);
  if (!tl_region_empty(tl_op_region(op, 1))) {
    tl_print_str(p, " else ");
    tl_print_region(p, tl_op_region(op, 1), false);
  }
  tl_print_attr_dict(p, op, NULL);
}

static TlResult if_verify(TlOp *op) {
  if (tl_op_num_operands(op) != 1 ||
      !tl_type_is_bool(tl_value_type(tl_op_operand(op, 0)))) {
    tl_op_emit_error(op, "expects one i1 condition operand");
    return TL_FAILURE;
  }
  if (tl_op_num_regions(op) != 2)
    return counts_error(op, "number of regions", tl_op_num_regions(op), 2);
  unsigned n = tl_op_num_results(op);
  if (tl_region_empty(tl_op_region(op, 0))) {
    tl_op_emit_error(op, "'then' region must not be empty");
    return TL_FAILURE;
  }
  if (n && tl_region_empty(tl_op_region(op, 1))) {
    tl_op_emit_error(op, "must have an 'else' region when it has results");
    return TL_FAILURE;
  }
  TlType *buf[16];
  TlType **rt = result_types(op, buf, 16);
  TlResult res = TL_SUCCESS;
  for (unsigned r = 0; r < 2 && !TL_FAILED(res); r++) {
    if (tl_region_empty(tl_op_region(op, r)))
      continue;
    TlBlock *b = tl_region_first_block(tl_op_region(op, r));
    if (tl_block_num_args(b)) {
      tl_op_emit_error(op, "regions take no arguments");
      res = TL_FAILURE;
      break;
    }
    TlOp *y = region_terminator(op, r);
    if (tl_op_id(y) != TL_OP_SCF_YIELD) {
      tl_op_emit_error(op, "regions must end with scf.yield");
      res = TL_FAILURE;
      break;
    }
    if (tl_op_num_operands(y) != n) {
      tl_op_emit_error(y, "yields %u values, but the scf.if has %u results",
                       tl_op_num_operands(y), n);
      res = TL_FAILURE;
      break;
    }
    TlValue *ybuf[16], **yv = operands_of(y, 0, ybuf, 16);
    res = match_types(y, "yielded value", n, rt, yv, NULL);
    if (yv != ybuf)
      tl_free(yv);
  }
  if (rt != buf)
    tl_free(rt);
  return res;
}

/* scf.if with a constant condition becomes the chosen region's body. */
static TlResult if_fold_constant(TlRewriter *rw, TlOp *op) {
  TlAttr *c = tl_value_constant(tl_op_operand(op, 0));
  if (!c)
    return TL_FAILURE;
  TlRegion *r = tl_op_region(op, tl_attr_int_value(c) ? 0 : 1);
  unsigned n = tl_op_num_results(op);
  if (tl_region_empty(r)) {
    tl_rewriter_erase_op(rw, op); /* no results: nothing to run */
    return TL_SUCCESS;
  }
  TlBlock *b = tl_region_first_block(r);
  TlOp *y = tl_block_terminator(b);
  for (TlOp *o = tl_block_first_op(b), *next; o != y; o = next) {
    next = tl_op_next(o);
    tl_op_take(o);
    tl_op_insert_before(o, op);
    tl_rewriter_notify_created(rw, o);
  }
  TlValue *vbuf[16], **vals = n <= 16 ? vbuf : tl_xmalloc(sizeof *vals * n);
  for (unsigned i = 0; i < n; i++)
    vals[i] = tl_op_operand(y, i);
  tl_rewriter_replace_op(rw, op, vals);
  if (vals != vbuf)
    tl_free(vals);
  return TL_SUCCESS;
}

static const TlPattern if_patterns[] = {
    {TL_OP_SCF_IF, "inline-constant-condition", if_fold_constant}, {0}};


/*===--- while -----------------------------------------------------------===*/

static TlResult while_parse(TlParser *p, TlOpState *st) {
  TL_VEC(TlArgDef) args = {0};
  TlOperandRefVec inits = {0};
  TlType *fn;
  TlResult r = TL_FAILURE;
  if (TL_FAILED(tl_parse_punct(p, "(")))
    goto out;
  if (!tl_parser_peek_punct(p, ")")) {
    do {
      TlArgDef a;
      TlOperandRef init;
      if (TL_FAILED(tl_parse_operand(p, &a.ref)) ||
          TL_FAILED(tl_parse_punct(p, "=")) ||
          TL_FAILED(tl_parse_operand(p, &init)))
        goto out;
      tl_vec_push(&args, a);
      tl_vec_push(&inits, init);
    } while (tl_parse_optional_punct(p, ","));
  }
  TlLoc tl = tl_parser_loc(p);
  if (TL_FAILED(tl_parse_punct(p, ")")) || TL_FAILED(tl_parse_punct(p, ":")))
    goto out;
  tl = tl_parser_loc(p);
  if (TL_FAILED(tl_parse_type(p, &fn)))
    goto out;
  if (tl_type_kind(fn) != TL_TYPE_FUNCTION ||
      tl_type_function_num_inputs(fn) != args.len) {
    tl_parser_error(p, tl, "expected a function type with %zu inputs",
                    args.len);
    goto out;
  }
  for (size_t i = 0; i < args.len; i++) {
    args.data[i].type = tl_type_function_input(fn, (unsigned)i);
    TlValue *v;
    if (TL_FAILED(tl_parser_resolve(p, &inits.data[i], args.data[i].type, &v)))
      goto out;
    tl_op_state_add_operand(st, v);
  }
  for (unsigned i = 0; i < tl_type_function_num_results(fn); i++)
    tl_op_state_add_result(st, tl_type_function_result(fn, i));
  if (TL_FAILED(tl_parse_region(p, st, (unsigned)args.len, args.data)) ||
      TL_FAILED(tl_parse_keyword(p, "do")) ||
      TL_FAILED(tl_parse_region(p, st, 0, NULL)))
    goto out;
  r = tl_parse_optional_attr_dict(p, st);
out:
  tl_vec_free(&args);
  tl_vec_free(&inits);
  return r;
}

static void while_print(TlPrinter *p, TlOp *op) {
  TlBlock *before = tl_region_first_block(tl_op_region(op, 0));
  tl_print_str(p, " (");
  for (unsigned i = 0; i < tl_op_num_operands(op); i++) {
    if (i)
      tl_print_str(p, ", ");
    tl_print_operand(p, tl_block_arg(before, i));
    tl_print_str(p, " = ");
    tl_print_operand(p, tl_op_operand(op, i));
  }
  tl_print_str(p, ") : (");
  for (unsigned i = 0; i < tl_op_num_operands(op); i++) {
    if (i)
      tl_print_str(p, ", ");
    tl_print_type(p, tl_value_type(tl_op_operand(op, i)));
  }
  tl_print_str(p, ") -> (");
  for (unsigned i = 0; i < tl_op_num_results(op); i++) {
    if (i)
      tl_print_str(p, ", ");
    tl_print_type(p, tl_value_type(tl_op_result(op, i)));
  }
  tl_print_str(p, ") ");
  tl_print_region(p, tl_op_region(op, 0), false);
  tl_print_str(p, " do ");
  tl_print_region(p, tl_op_region(op, 1), true);
  tl_print_attr_dict(p, op, NULL);
}

static TlResult while_verify(TlOp *op) {
  if (tl_op_num_regions(op) != 2)
    return counts_error(op, "number of regions", tl_op_num_regions(op), 2);
  unsigned n = tl_op_num_operands(op), m = tl_op_num_results(op);
  TlBlock *before = tl_region_first_block(tl_op_region(op, 0));
  TlBlock *after = tl_region_first_block(tl_op_region(op, 1));
  if (tl_block_num_args(before) != n)
    return counts_error(op, "number of 'before' arguments",
                        tl_block_num_args(before), n);
  if (tl_block_num_args(after) != m)
    return counts_error(op, "number of 'do' arguments", tl_block_num_args(after),
                        m);
  TlValue *ibuf[16], **inits = operands_of(op, 0, ibuf, 16);
  TlType *rbuf[16], **rt = result_types(op, rbuf, 16);
  TlType *tbuf[16], **it = n <= 16 ? tbuf : tl_xmalloc(sizeof *it * n);
  TlType *abuf[16], **at = m <= 16 ? abuf : tl_xmalloc(sizeof *at * m);
  for (unsigned i = 0; i < n; i++)
    it[i] = tl_value_type(inits[i]);
  for (unsigned i = 0; i < m; i++)
    at[i] = tl_value_type(tl_block_arg(after, i));
  TlValue *bbuf[16], **bargs = n <= 16 ? bbuf : tl_xmalloc(sizeof *bargs * n);
  for (unsigned i = 0; i < n; i++)
    bargs[i] = tl_block_arg(before, i);
  TlResult res = match_types(op, "'before' argument", n, it, bargs, NULL);
  if (!TL_FAILED(res))
    res = match_types(op, "'do' argument", m, rt, NULL, at);
  TlOp *c = region_terminator(op, 0), *y = region_terminator(op, 1);
  if (!TL_FAILED(res) && tl_op_id(c) != TL_OP_SCF_CONDITION) {
    tl_op_emit_error(op, "'before' region must end with scf.condition");
    res = TL_FAILURE;
  }
  if (!TL_FAILED(res) && tl_op_id(y) != TL_OP_SCF_YIELD) {
    tl_op_emit_error(op, "'do' region must end with scf.yield");
    res = TL_FAILURE;
  }
  if (!TL_FAILED(res) && tl_op_num_operands(c) != 1 + m) {
    tl_op_emit_error(c, "passes %u values, but the scf.while has %u results",
                     tl_op_num_operands(c) - 1, m);
    res = TL_FAILURE;
  }
  if (!TL_FAILED(res) && tl_op_num_operands(y) != n) {
    tl_op_emit_error(y, "yields %u values, but the scf.while carries %u",
                     tl_op_num_operands(y), n);
    res = TL_FAILURE;
  }
  if (!TL_FAILED(res)) {
    TlValue *cbuf[16], **cv = operands_of(c, 1, cbuf, 16);
    res = match_types(c, "passed value", m, rt, cv, NULL);
    if (cv != cbuf)
      tl_free(cv);
  }
  if (!TL_FAILED(res)) {
    TlValue *ybuf[16], **yv = operands_of(y, 0, ybuf, 16);
    res = match_types(y, "yielded value", n, it, yv, NULL);
    if (yv != ybuf)
      tl_free(yv);
  }
  if (inits != ibuf)
    tl_free(inits);
  if (rt != rbuf)
    tl_free(rt);
  if (it != tbuf)
    tl_free(it);
  if (at != abuf)
    tl_free(at);
  if (bargs != bbuf)
    tl_free(bargs);
  return res;
}

/* Each op's hooks, by its row in include/tl/ops/scf.def. */
#define TL_HOOKS_SCF_FOR                                                       \
  .verify = for_verify, .parse = for_parse, .print = for_print
#define TL_HOOKS_SCF_IF                                                        \
  .verify = if_verify, .parse = if_parse, .print = if_print,                   \
  .patterns = if_patterns
#define TL_HOOKS_SCF_WHILE                                                     \
  .verify = while_verify, .parse = while_parse, .print = while_print
#define TL_HOOKS_SCF_YIELD                                                     \
  .verify = yield_verify, .parse = parse_values_and_types,                     \
  .print = yield_print
#define TL_HOOKS_SCF_CONDITION                                                 \
  .verify = condition_verify, .parse = condition_parse,                        \
  .print = condition_print

static const TlOpDef scf_ops[] = {
#define TL_OP TL_OP_ENTRY
#include "tl/ops/scf.def"
#undef TL_OP
};

static const TlDialectDef scf_dialect = {
    .name = "scf",
    .ops = scf_ops,
    .num_ops = sizeof scf_ops / sizeof scf_ops[0],
};

void tl_scf_register(TlContext *ctx) {
  tl_context_register_dialect(ctx, &scf_dialect);
}
