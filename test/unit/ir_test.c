/* Unit tests of the public C API: build IR from C, walk it, mutate it and
 * check its printed form; uniquing of types and attributes; diagnostics. */
#include "tl/build.h"
#include "tl/dialects.h"
#include "tl/pass.h"
#include "unit.h"

static char *print_module(TlModule *m) {
  TlStr s = {0};
  tl_module_print(m, NULL, &s);
  return s.data;
}

static void test_uniquing(TlContext *ctx) {
  CHECK(tl_type_int(ctx, 32, true) == tl_type_int(ctx, 32, true));
  CHECK(tl_type_int(ctx, 32, true) != tl_type_int(ctx, 32, false));
  CHECK(tl_type_int(ctx, 1, false) != tl_type_bool(ctx));
  CHECK(tl_type_int(ctx, 1, true) == NULL);
  CHECK(tl_type_int(ctx, 65, false) == NULL);
  CHECK(tl_type_float(ctx, 4, 3) == tl_type_float(ctx, 4, 3));
  CHECK(tl_type_float(ctx, 4, 4) == NULL); /* 9 bits */
  CHECK(tl_type_float(ctx, 0, 3) == NULL);
  CHECK(tl_type_bitwidth(tl_type_float(ctx, 2, 1)) == 4);
  TlType *i32 = tl_type_int(ctx, 32, true);
  TlType *in[2] = {i32, i32};
  CHECK(tl_type_function(ctx, 2, in, 1, in) == tl_type_function(ctx, 2, in, 1, in));
  CHECK(tl_type_function(ctx, 2, in, 1, in) != tl_type_function(ctx, 1, in, 1, in));

  TlAttr *a = tl_attr_int(ctx, tl_type_int(ctx, 3, true), 5);
  CHECK(tl_attr_int_value(a) == -3); /* 0b101 as i3 */
  CHECK(a == tl_attr_int(ctx, tl_type_int(ctx, 3, true), -3));
  CHECK(tl_attr_uint_value(tl_attr_int(ctx, tl_type_int(ctx, 3, false), -1)) == 7);
  CHECK(tl_attr_string(ctx, "ab", 2) == tl_attr_string(ctx, "abc", 2));
  TlAttr *elems[2] = {a, tl_attr_bool(ctx, true)};
  CHECK(tl_attr_array(ctx, 2, elems) == tl_attr_array(ctx, 2, elems));
  TlNamedAttr e1[2] = {{"b", a}, {"a", a}}, e2[2] = {{"a", a}, {"b", a}};
  CHECK(tl_attr_dict(ctx, 2, e1) == tl_attr_dict(ctx, 2, e2));
  TlNamedAttr dup[2] = {{"a", a}, {"a", a}};
  CHECK(tl_attr_dict(ctx, 2, dup) == NULL);
  TlStr s = {0};
  tl_attr_print(tl_attr_dict(ctx, 2, e1), &s);
  CHECK_EQ_STR(tl_str_cstr(&s), "{a = -3 : i3, b = -3 : i3}");
  tl_str_free(&s);
}

/* Builds func @axpy(%x: i32, %y: i32) -> i32 { %0 = muli; %1 = addi; return }
 * through the API and checks the text. */
static void test_build(TlContext *ctx) {
  TlModule *m = tl_module_create(ctx, tl_loc_unknown());
  TlType *i32 = tl_type_int(ctx, 32, true);
  TlType *in[2] = {i32, i32};
  TlOpState st;
  tl_op_state_init(&st, ctx, tl_context_op_def(ctx, "builtin.func"),
                   tl_loc_unknown());
  tl_op_state_set_attr(&st, "sym_name", tl_attr_string(ctx, "axpy", 4));
  tl_op_state_set_attr(&st, "function_type",
                       tl_attr_type(ctx, tl_type_function(ctx, 2, in, 1, in)));
  st.nregions = 1;
  TlBuilder b;
  tl_builder_init(&b, m);
  tl_builder_set_end(&b, tl_module_body(m));
  TlOp *fn = tl_builder_insert(&b, &st);
  TlBlock *body = tl_block_create(m);
  tl_region_append_block(tl_op_region(fn, 0), body);
  TlValue *x = tl_block_add_arg(body, i32, tl_loc_unknown());
  TlValue *y = tl_block_add_arg(body, i32, tl_loc_unknown());
  tl_value_set_name_hint(x, tl_context_intern(ctx, "x", 1));
  tl_value_set_name_hint(y, tl_context_intern(ctx, "y", 1));
  tl_builder_set_end(&b, body);
  TlValue *two = tl_arith_constant(&b, tl_attr_int(ctx, i32, 2), tl_loc_unknown());
  TlValue *ops[2] = {x, two};
  TlOp *mul = tl_builder_create(&b, "arith.muli", tl_loc_unknown(), 2, ops, 1, &i32);
  TlValue *ops2[2] = {tl_op_result(mul, 0), y};
  TlOp *add = tl_builder_create(&b, "arith.addi", tl_loc_unknown(), 2, ops2, 1, &i32);
  TlValue *r = tl_op_result(add, 0);
  tl_builder_create(&b, "builtin.return", tl_loc_unknown(), 1, &r, 0, NULL);
  CHECK(!TL_FAILED(tl_verify(tl_module_op(m))));
  char *text = print_module(m);
  CHECK_EQ_STR(text, "module {\n"
                     "  func @axpy(%x: i32, %y: i32) -> i32 {\n"
                     "    %0 = arith.constant 2 : i32\n"
                     "    %1 = arith.muli %x, %0 : i32\n"
                     "    %2 = arith.addi %1, %y : i32\n"
                     "    return %2 : i32\n"
                     "  }\n"
                     "}\n");
  tl_free(text);

  /* Use lists and mutation. */
  CHECK(tl_value_has_one_use(tl_op_result(mul, 0)));
  CHECK(tl_use_owner(tl_value_first_use(x)) == mul);
  CHECK(tl_value_def(r) == add && tl_value_block(x) == body);
  tl_value_replace_all_uses(tl_op_result(mul, 0), x);
  CHECK(!tl_value_has_uses(tl_op_result(mul, 0)));
  CHECK(tl_op_operand(add, 0) == x);
  tl_op_erase(mul);
  CHECK(tl_block_first_op(body) == tl_value_def(two));
  CHECK(tl_op_next(tl_value_def(two)) == add);
  /* A clone is detached and equal in text. */
  TlOp *c = tl_op_clone(add);
  CHECK(tl_op_block(c) == NULL && tl_op_operand(c, 0) == x);
  tl_op_insert_after(c, add);
  CHECK(tl_op_next(add) == c);
  TlValue *cv = tl_op_result(c, 0);
  tl_op_set_operand(tl_block_terminator(body), 0, cv);
  CHECK(tl_symbol_lookup(tl_module_op(m), "axpy") == fn);
  CHECK(tl_symbol_lookup(tl_module_op(m), "nope") == NULL);

  /* cse merges the clone back; canonicalize then folds nothing further. */
  TlPipeline *pl = tl_pipeline_create();
  CHECK(!TL_FAILED(tl_pipeline_parse(pl, "cse, canonicalize", tl_context_diag(ctx))));
  CHECK(tl_pipeline_size(pl) == 2);
  TlPipelineConfig cfg = {.verify_each = true};
  CHECK(!TL_FAILED(tl_pipeline_run(pl, m, &cfg)));
  tl_pipeline_destroy(pl);
  text = print_module(m);
  CHECK_EQ_STR(text, "module {\n"
                     "  func @axpy(%x: i32, %y: i32) -> i32 {\n"
                     "    %0 = arith.addi %x, %y : i32\n"
                     "    return %0 : i32\n"
                     "  }\n"
                     "}\n");
  tl_free(text);
  tl_module_destroy(m);
}

/* The op tables: every row is registered under its id and name, ids are
 * dense, and each class's builder signature matches the row's counts. */
static void test_op_tables(TlContext *ctx) {
  unsigned seen = 0;
  for (int id = TL_OP_NONE + 1; id < TL_OP_COUNT; id++) {
    const TlOpDef *d = tl_context_op_def_by_id(ctx, (TlOpId)id);
    CHECK(d && d->id == (TlOpId)id);
    if (!d)
      continue;
    seen++;
    CHECK(tl_context_op_def(ctx, d->name) == d);
    CHECK(d->summary && d->summary[0]);
    int n = d->num_operands;
    switch (d->op_class) {
    case TL_OPCLASS_UNARY: case TL_OPCLASS_CONVERT: CHECK(n == 1); break;
    case TL_OPCLASS_BINARY: case TL_OPCLASS_COMPARE: CHECK(n == 2); break;
    case TL_OPCLASS_TERNARY: case TL_OPCLASS_SELECT: CHECK(n == 3); break;
    case TL_OPCLASS_OTHER: break;
    }
    if (d->op_class != TL_OPCLASS_OTHER)
      CHECK(d->num_results == 1);
  }
  CHECK(seen == TL_OP_COUNT - 1 && seen == tl_context_num_op_defs(ctx));
  CHECK(tl_context_op_def_by_id(ctx, TL_OP_NONE) == NULL);
  CHECK(tl_context_op_def_by_id(ctx, TL_OP_COUNT) == NULL);
}

/* The typed builders make the ops the printer and the verifier expect,
 * at the builder's location. */
static void test_typed_builders(TlContext *ctx) {
  TlModule *m = tl_module_create(ctx, tl_loc_unknown());
  TlType *i32 = tl_type_int(ctx, 32, true), *f32 = tl_type_float(ctx, 8, 23);
  TlType *in[2] = {i32, f32};
  TlOpState st;
  tl_op_state_init(&st, ctx, tl_context_op_def_by_id(ctx, TL_OP_BUILTIN_FUNC),
                   tl_loc_unknown());
  tl_op_state_set_attr(&st, "sym_name", tl_attr_string(ctx, "f", 1));
  tl_op_state_set_attr(&st, "function_type",
                       tl_attr_type(ctx, tl_type_function(ctx, 2, in, 1, &f32)));
  st.nregions = 1;
  TlBuilder b;
  tl_builder_init(&b, m);
  tl_builder_set_end(&b, tl_module_body(m));
  TlOp *fn = tl_builder_insert(&b, &st);
  TlBlock *body = tl_block_create(m);
  tl_region_append_block(tl_op_region(fn, 0), body);
  TlValue *x = tl_block_add_arg(body, i32, tl_loc_unknown());
  TlValue *y = tl_block_add_arg(body, f32, tl_loc_unknown());
  tl_builder_set_end(&b, body);
  TlLoc here = tl_loc_get(ctx, "k.tl", 7, 3);
  tl_builder_set_loc(&b, here);
  TlValue *s = tl_arith_shli(&b, x, x);
  TlValue *c = tl_arith_cmpi(&b, "lt", s, x);
  TlValue *v = tl_arith_select(&b, c, s, x);
  TlValue *f = tl_arith_itofp(&b, v, f32);
  TlValue *g = tl_arith_negf(&b, tl_arith_mulf(&b, f, y));
  tl_build(&b, TL_OP_BUILTIN_RETURN, 1, &g, 0, NULL);
  CHECK(!TL_FAILED(tl_verify(tl_module_op(m))));
  CHECK(tl_op_id(tl_value_def(s)) == TL_OP_ARITH_SHLI);
  CHECK(tl_op_loc(tl_value_def(c)).line == 7);
  char *text = print_module(m);
  CHECK_EQ_STR(text, "module {\n"
                     "  func @f(%arg0: i32, %arg1: f32) -> f32 {\n"
                     "    %0 = arith.shli %arg0, %arg0 : i32\n"
                     "    %1 = arith.cmpi lt, %0, %arg0 : i32\n"
                     "    %2 = arith.select %1, %0, %arg0 : i32\n"
                     "    %3 = arith.itofp %2 : i32 to f32\n"
                     "    %4 = arith.mulf %3, %arg1 : f32\n"
                     "    %5 = arith.negf %4 : f32\n"
                     "    return %5 : f32\n"
                     "  }\n"
                     "}\n");
  tl_free(text);
  tl_module_destroy(m);
}

typedef struct Captured {
  int errors;
  char last[256];
  unsigned line, col;
} Captured;

static void capture(const TlDiag *d, void *user) {
  Captured *c = user;
  if (d->severity == TL_DIAG_ERROR)
    c->errors++;
  snprintf(c->last, sizeof c->last, "%s", d->message);
  c->line = d->loc.line;
  c->col = d->loc.col;
}

static void test_parse_errors(TlContext *ctx) {
  Captured c = {0};
  tl_diag_set_handler(tl_context_diag(ctx), capture, &c);
  const char *src = "func @f() {\n  %a = arith.addi %b, %b : i32\n}\n";
  CHECK(tl_parse_module(ctx, "x.tl", src, strlen(src), 1) == NULL);
  CHECK_EQ_INT(c.errors, 1);
  CHECK_EQ_STR(c.last, "use of undefined value '%b'");
  CHECK_EQ_INT(c.line, 2);
  CHECK_EQ_INT(c.col, 19);
  /* first_line shifts reported lines (split input files). */
  CHECK(tl_parse_module(ctx, "x.tl", src, strlen(src), 10) == NULL);
  CHECK_EQ_INT(c.line, 11);
  /* A verifier error reports the op location. */
  const char *bad = "func @f(%a: i32) -> i32 {\n  return\n}\n";
  TlModule *m = tl_parse_module(ctx, "y.tl", bad, strlen(bad), 1);
  CHECK(m != NULL);
  CHECK(TL_FAILED(tl_verify(tl_module_op(m))));
  CHECK_EQ_STR(c.last, "'builtin.return' op has 0 operands, but the enclosing "
                       "function returns 1 values");
  CHECK_EQ_INT(c.line, 2);
  tl_module_destroy(m);
  tl_diag_set_handler(tl_context_diag(ctx), NULL, NULL);
}

/* Printing then parsing is the identity on a program using most of the
 * syntax. */
static void test_round_trip(TlContext *ctx) {
  const char *ok =
      "#c = 5 : u7\n"
      "module @m attributes {note = \"a\\\"b\", list = [1, 2.5 : f16, #c, "
      "f6e3m2, @sym, unit]} {\n"
      "  func @g(%p: f6e3m2, %q: i1) -> (f6e3m2, u7) {\n"
      "    %c = arith.constant 0x1C : f6e3m2\n"
      "    %r = arith.select %q, %p, %c : f6e3m2\n"
      "    %u = arith.constant 127 : u7\n"
      "    return %r, %u : f6e3m2, u7\n"
      "  }\n"
      "}\n";
  TlModule *m = tl_parse_module(ctx, "rt.tl", ok, strlen(ok), 1);
  CHECK(m != NULL);
  if (!m)
    return;
  CHECK(!TL_FAILED(tl_verify(tl_module_op(m))));
  char *once = print_module(m);
  TlModule *m2 = tl_parse_module(ctx, "rt2.tl", once, strlen(once), 1);
  CHECK(m2 != NULL);
  char *twice = m2 ? print_module(m2) : NULL;
  CHECK_EQ_STR(once, twice);
  /* 0x1C = 0.111.00 as f6e3m2 (bias 3) is 1.00 x 2^(7-3) = 16.0 */
  CHECK(strstr(once, "arith.constant 16.0 : f6e3m2") != NULL);
  tl_free(once);
  tl_free(twice);
  tl_module_destroy(m);
  tl_module_destroy(m2);
}

/* IR that does not verify prints in the generic form: custom printers may
 * rely on verified attributes (here cmpi's predicate is misspelt). */
static void test_print_unverified(TlContext *ctx) {
  const char *src = "func @f(%a: i32) {\n"
                    "  %x = \"arith.cmpi\"(%a, %a) {predigate = \"lt\"} : "
                    "(i32, i32) -> i1\n"
                    "  return\n}\n";
  TlModule *m = tl_parse_module(ctx, "u.tl", src, strlen(src), 1);
  CHECK(m != NULL);
  if (!m)
    return;
  char *text = print_module(m);
  CHECK(strstr(text, "\"arith.cmpi\"(%a, %a) {predigate = \"lt\"}") != NULL);
  CHECK(strstr(text, "\"builtin.module\"()") != NULL);
  tl_free(text);
  CHECK_EQ_INT(tl_diag_error_count(tl_context_diag(ctx)), 0);
  tl_module_destroy(m);
}

/* An empty block (IR that does not verify: no terminator) survives a
 * print and a parse: the region keeps its one block. */
static void test_empty_block_round_trip(TlContext *ctx) {
  const char *src = "func @f(%c: i1) {\n  scf.if %c {\n  ^bb0:\n  }\n"
                    "  return\n}\n";
  TlModule *m = tl_parse_module(ctx, "e.tl", src, strlen(src), 1);
  CHECK(m != NULL);
  if (!m)
    return;
  char *once = print_module(m);
  TlModule *m2 = tl_parse_module(ctx, "e2.tl", once, strlen(once), 1);
  CHECK(m2 != NULL);
  char *twice = m2 ? print_module(m2) : NULL;
  CHECK_EQ_STR(once, twice);
  CHECK(strstr(once, "^bb0:") != NULL);
  tl_free(once);
  tl_free(twice);
  tl_module_destroy(m);
  if (m2)
    tl_module_destroy(m2);
}

int main(void) {
  TlContext *ctx = tl_context_create();
  tl_register_all_dialects(ctx);
  test_uniquing(ctx);
  test_build(ctx);
  test_op_tables(ctx);
  test_typed_builders(ctx);
  test_parse_errors(ctx);
  test_round_trip(ctx);
  test_empty_block_round_trip(ctx);
  tl_diag_reset_count(tl_context_diag(ctx));
  test_print_unverified(ctx);
  tl_context_destroy(ctx);
  return unit_report();
}
