/* Unit tests of the tl dialect's C API (include/tl/tl.h): type
 * constructors and accessors (NULL or neutral values on bad input), the
 * #tl.layout attribute, grid expressions (evaluation, floor division,
 * errors with offsets, checking), launch dimensions of parsed kernels and
 * template overrides through tl_context_set_define. Expected grid sizes are
 * computed by hand in the comments, not by the code under test. */
#include "tl/dialects.h"
#include "tl/pass.h"
#include "tl/tl.h"
#include "unit.h"

#include <stdint.h>

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

static TlLayout layout(const char *text) {
  TlLayout l;
  memset(&l, 0, sizeof l);
  CHECK(tl_layout_parse(&l, text, strlen(text), NULL, NULL));
  return l;
}

/*===--- Types -----------------------------------------------------------===*/

static void test_ptr(TlContext *ctx) {
  TlType *f16 = tl_type_f16(ctx);
  TlType *p = tl_ptr_type_get(ctx, f16);
  CHECK(p != NULL);
  CHECK(p == tl_ptr_type_get(ctx, f16));
  CHECK(tl_type_is_ptr(p));
  CHECK(tl_tensor_kind(p) == TL_TENSOR_NONE);
  CHECK(tl_tensor_elem(p) == f16);
  CHECK_EQ_INT(tl_tensor_rank(p), 0);
  /* Only scalars: not NULL, none, a function or another pointer. */
  CHECK(tl_ptr_type_get(ctx, NULL) == NULL);
  CHECK(tl_ptr_type_get(ctx, tl_type_none(ctx)) == NULL);
  CHECK(tl_ptr_type_get(ctx, tl_type_function(ctx, 0, NULL, 0, NULL)) == NULL);
  CHECK(tl_ptr_type_get(ctx, p) == NULL);
  CHECK(!tl_type_is_ptr(f16));
  CHECK(!tl_type_is_ptr(NULL));
}

static void test_global(TlContext *ctx) {
  TlType *u8 = tl_type_int(ctx, 8, false);
  int64_t dims[9] = {-1, 1024, 1, 1, 1, 1, 1, 1, 1};
  TlType *g = tl_global_type_get(ctx, 2, dims, u8, false);
  CHECK(g != NULL);
  CHECK(g == tl_global_type_get(ctx, 2, dims, u8, false));
  CHECK(tl_tensor_kind(g) == TL_TENSOR_GLOBAL);
  CHECK(tl_tensor_elem(g) == u8);
  CHECK_EQ_INT(tl_tensor_rank(g), 2);
  CHECK_EQ_INT(tl_tensor_dim(g, 0), -1);
  CHECK_EQ_INT(tl_tensor_dim(g, 1), 1024);
  CHECK_EQ_INT(tl_tensor_dim(g, 2), 0); /* past the rank */
  CHECK_EQ_INT(tl_tensor_num_elements(g), -1);
  CHECK(!tl_global_type_strided(g));
  TlType *gs = tl_global_type_get(ctx, 2, dims, u8, true);
  CHECK(gs != NULL && gs != g);
  CHECK(tl_global_type_strided(gs));
  /* Accessors of other kinds answer neutrally. */
  CHECK(tl_reg_layout(g) == NULL);
  CHECK(!tl_shared_type_column_major(g));
  TlStr s = {0};
  tl_type_print(gs, &s);
  CHECK_EQ_STR(tl_str_cstr(&s), "!tl.global<?x1024xu8, strided>");
  tl_str_free(&s);

  int64_t big[8] = {2147483647, 2147483647, 2147483647, 1, 1, 1, 1, 1};
  TlType *gb = tl_global_type_get(ctx, 8, big, u8, false);
  CHECK(gb != NULL);
  CHECK_EQ_INT(tl_tensor_num_elements(gb), -1); /* 2^93: overflows int64 */
  int64_t nine[9] = {4, 4, 4, 4, 4, 4, 4, 4, 4};
  CHECK_EQ_INT(
      tl_tensor_num_elements(tl_global_type_get(ctx, 8, nine, u8, false)),
      65536);

  int64_t zero[1] = {0}, neg[1] = {-2}, over[1] = {(int64_t)1 << 31};
  CHECK(tl_global_type_get(ctx, 0, dims, u8, false) == NULL);
  CHECK(tl_global_type_get(ctx, 9, nine, u8, false) == NULL);
  CHECK(tl_global_type_get(ctx, 1, NULL, u8, false) == NULL);
  CHECK(tl_global_type_get(ctx, 1, zero, u8, false) == NULL);
  CHECK(tl_global_type_get(ctx, 1, neg, u8, false) == NULL);
  CHECK(tl_global_type_get(ctx, 1, over, u8, false) == NULL);
  CHECK(tl_global_type_get(ctx, 1, dims + 1, NULL, false) == NULL);
  CHECK(tl_global_type_get(ctx, 1, dims + 1, tl_ptr_type_get(ctx, u8), false) ==
        NULL);
}

static void test_shared(TlContext *ctx) {
  TlType *f16 = tl_type_f16(ctx);
  int64_t dims[2] = {64, 64};
  TlType *s = tl_shared_type_get(ctx, 2, dims, f16, false, 0, 0, 0);
  CHECK(s != NULL);
  CHECK(tl_tensor_kind(s) == TL_TENSOR_SHARED);
  CHECK_EQ_INT(tl_tensor_num_elements(s), 4096);
  CHECK(!tl_shared_type_column_major(s));
  int b = -1, m = -1, sh = -1;
  tl_shared_type_swizzle(s, &b, &m, &sh);
  CHECK(b == 0 && m == 0 && sh == 0);

  TlType *sw = tl_shared_type_get(ctx, 2, dims, f16, true, 3, 3, 4);
  CHECK(sw != NULL && sw != s);
  CHECK(tl_shared_type_column_major(sw));
  tl_shared_type_swizzle(sw, &b, &m, &sh);
  CHECK(b == 3 && m == 3 && sh == 4);
  /* The element layout is the library's column-major layout, swizzled. */
  TlSharedLayout got, want;
  CHECK(tl_shared_type_layout(sw, &got, NULL));
  CHECK(tl_shared_layout_column_major(&want, 2, dims, NULL));
  CHECK(tl_shared_layout_swizzle(&want, &want, 3, 3, 4, NULL));
  CHECK(tl_shared_layout_equal(&got, &want));
  TlStr t = {0};
  tl_type_print(sw, &t);
  CHECK_EQ_STR(tl_str_cstr(&t),
               "!tl.shared<64x64xf16, column_major, swizzle<3, 3, 4>>");
  tl_str_free(&t);

  TlErr err;
  CHECK(!tl_shared_type_layout(tl_type_f16(ctx), &got, &err));
  CHECK_EQ_STR(err.msg, "not a !tl.shared type");
  tl_shared_type_swizzle(f16, &b, &m, &sh); /* not shared: no swizzle */
  CHECK(b == 0 && m == 0 && sh == 0);

  int64_t dyn[2] = {-1, 64}, huge[2] = {65536, 65536};
  CHECK(tl_shared_type_get(ctx, 2, dyn, f16, false, 0, 0, 0) == NULL);
  CHECK(tl_shared_type_get(ctx, 2, huge, f16, false, 0, 0, 0) == NULL);
  CHECK(tl_shared_type_get(ctx, 2, dims, f16, false, 0, 3, 3) == NULL);
  CHECK(tl_shared_type_get(ctx, 2, dims, f16, false, 3, 3, 2) == NULL);
  CHECK(tl_shared_type_get(ctx, 2, dims, f16, false, 9, 3, 9) == NULL);
  CHECK(tl_shared_type_get(ctx, 2, dims, f16, false, -1, 3, 3) == NULL);
  CHECK(tl_shared_type_get(ctx, 2, dims, f16, false, 3, 17, 3) == NULL);
  CHECK(tl_shared_type_get(ctx, 2, dims, NULL, false, 0, 0, 0) == NULL);
}

static void test_reg(TlContext *ctx) {
  TlType *f32 = tl_type_f32(ctx);
  TlLayout l = layout("local(2, 1).spatial(8, 4).local(1, 2)");
  int64_t dims[2] = {16, 8};
  TlType *r = tl_reg_type_get(ctx, 2, dims, f32, &l);
  CHECK(r != NULL);
  CHECK(r == tl_reg_type_get(ctx, 2, dims, f32, &l));
  CHECK(tl_tensor_kind(r) == TL_TENSOR_REG);
  CHECK(tl_layout_equal(tl_reg_layout(r), &l));
  CHECK_EQ_INT(tl_tensor_num_elements(r), 128);
  CHECK(tl_tensor_elem(r) == f32);

  int64_t wrong[2] = {8, 16}, one[1] = {128};
  CHECK(tl_reg_type_get(ctx, 2, dims, f32, NULL) == NULL);
  CHECK(tl_reg_type_get(ctx, 2, wrong, f32, &l) == NULL);
  CHECK(tl_reg_type_get(ctx, 1, one, f32, &l) == NULL);
  CHECK(tl_reg_type_get(ctx, 2, dims, tl_type_none(ctx), &l) == NULL);
  /* A layout that is not valid (mode sizes do not make the shape). */
  TlLayout bad = l;
  bad.mode_shape[0] = 3;
  CHECK(tl_reg_type_get(ctx, 2, dims, f32, &bad) == NULL);

  /* Non-tensor types. */
  TlType *i32 = tl_type_int(ctx, 32, true);
  CHECK(tl_tensor_kind(i32) == TL_TENSOR_NONE);
  CHECK(tl_tensor_kind(NULL) == TL_TENSOR_NONE);
  CHECK(tl_tensor_elem(i32) == NULL);
  CHECK_EQ_INT(tl_tensor_rank(i32), 0);
  CHECK_EQ_INT(tl_tensor_dim(i32, 0), 0);
  CHECK_EQ_INT(tl_tensor_num_elements(i32), 0);
  CHECK(tl_reg_layout(i32) == NULL);
  CHECK(!tl_global_type_strided(i32));
}

static void test_layout_attr(TlContext *ctx) {
  TlLayout l = layout("spatial(8)");
  TlAttr *a = tl_layout_attr_get(ctx, &l);
  CHECK(a != NULL);
  CHECK(tl_layout_equal(tl_layout_attr_value(a), &l));
  /* A non-canonical description of the same layout (two modes 2 x 4 that
   * merge) is stored canonically, so it is the same attribute. */
  TlLayout split;
  memset(&split, 0, sizeof split);
  split.rank = 1;
  split.shape[0] = 8;
  split.num_modes = 2;
  split.mode_shape[0] = 2;
  split.mode_shape[1] = 4;
  split.num_spatial = 2;
  split.spatial_modes[0] = 0;
  split.spatial_modes[1] = 1;
  CHECK(tl_layout_attr_get(ctx, &split) == a);
  TlLayout bad = split;
  bad.mode_shape[1] = 3;
  CHECK(tl_layout_attr_get(ctx, &bad) == NULL);
  CHECK(tl_layout_attr_get(ctx, NULL) == NULL);
  CHECK(tl_layout_attr_value(NULL) == NULL);
  CHECK(tl_layout_attr_value(tl_attr_unit(ctx)) == NULL);
  TlStr s = {0};
  tl_attr_print(a, &s);
  CHECK_EQ_STR(tl_str_cstr(&s), "#tl.layout<spatial(8)>");
  tl_str_free(&s);
}

/*===--- Grid expressions ------------------------------------------------===*/

typedef struct Env {
  const char *names[4];
  int64_t values[4];
} Env;

static bool env_lookup(void *user, const char *name, size_t len, int64_t *v) {
  Env *e = user;
  for (int i = 0; i < 4 && e->names[i]; i++)
    if (strlen(e->names[i]) == len && !memcmp(e->names[i], name, len)) {
      *v = e->values[i];
      return true;
    }
  return false;
}

/* Evaluates text; on failure returns INT64_MIN + 1 and leaves the message
 * and offset in err / *off. */
static int64_t ev(const char *text, Env *env, TlErr *err, size_t *off) {
  int64_t v = 0;
  if (!tl_expr_eval(text, strlen(text), env_lookup, env, &v, err, off))
    return INT64_MIN + 1;
  return v;
}

static void test_expr_eval(void) {
  Env env = {{"m", "k", "big", NULL}, {33, -7, INT64_MAX, 0}};
  TlErr err;
  size_t off;
  CHECK_EQ_INT(ev("1 + 2 * 3", &env, &err, &off), 7);
  CHECK_EQ_INT(ev("(1 + 2) * 3", &env, &err, &off), 9);
  CHECK_EQ_INT(ev("10 - 4 - 3", &env, &err, &off), 3); /* left to right */
  CHECK_EQ_INT(ev("m / 8", &env, &err, &off), 4);
  /* Floor division: -7 / 2 = -3.5 -> -4; -7 % 2 = -7 - 2 * -4 = 1. */
  CHECK_EQ_INT(ev("k / 2", &env, &err, &off), -4);
  CHECK_EQ_INT(ev("k % 2", &env, &err, &off), 1);
  CHECK_EQ_INT(ev("k % 7", &env, &err, &off), 0);
  CHECK_EQ_INT(ev("(0 - 8) / 8", &env, &err, &off), -1);
  /* ceildiv rounds up: 33 / 16 = 2.06 -> 3; -7 / 2 = -3.5 -> -3. */
  CHECK_EQ_INT(ev("ceildiv(m, 16)", &env, &err, &off), 3);
  CHECK_EQ_INT(ev("ceildiv(32, 16)", &env, &err, &off), 2);
  CHECK_EQ_INT(ev("ceildiv(k, 2)", &env, &err, &off), -3);
  CHECK_EQ_INT(ev("min(m, k)", &env, &err, &off), -7);
  CHECK_EQ_INT(ev("max(m, k)", &env, &err, &off), 33);
  CHECK_EQ_INT(ev("max(min(m, 40), 50) + min(3, 3)", &env, &err, &off), 53);
  CHECK_EQ_INT(ev("  m\n*\t2 ", &env, &err, &off), 66);
  /* INT64_MIN is reachable; division and remainder by 3 do not overflow:
   * -2^63 = 3 * -3074457345618258603 + 1. */
  CHECK_EQ_INT(ev("0 - big - 1", &env, &err, &off), INT64_MIN);
  CHECK_EQ_INT(ev("(0 - big - 1) / 3", &env, &err, &off),
               -3074457345618258603LL);
  CHECK_EQ_INT(ev("(0 - big - 1) % 3", &env, &err, &off), 1);
  CHECK_EQ_INT(ev("ceildiv(0 - big - 1, 2)", &env, &err, &off),
               -4611686018427387904LL);
  CHECK_EQ_INT(ev("5 + (0 - big - 1)", &env, &err, &off), INT64_MIN + 5);
  CHECK_EQ_INT(ev("9223372036854775807", &env, &err, &off), INT64_MAX);
  /* A function name not followed by '(' is an ordinary name. */
  Env fn = {{"min", NULL}, {5}};
  CHECK_EQ_INT(ev("min + min(min, 2)", &fn, &err, &off), 7);
  /* No lookup: numbers only. */
  int64_t v = 0;
  CHECK(tl_expr_eval("4 * 4", 5, NULL, NULL, &v, NULL, NULL) && v == 16);
  /* Literals as everywhere (tl_int_literal): 010 is ten, 0x10 sixteen. */
  CHECK(tl_expr_eval("010 + 0x10", 10, NULL, NULL, &v, NULL, NULL) && v == 26);
  CHECK(!tl_expr_eval("m", 1, NULL, NULL, &v, NULL, NULL));
}

/* An error: message and the byte offset it names. */
static void expect_error(const char *text, const char *msg, size_t at) {
  Env env = {{"m", "k", "big", NULL}, {33, 0, INT64_MAX, 0}};
  TlErr err = {{0}};
  size_t off = 999;
  CHECK_EQ_INT(ev(text, &env, &err, &off), INT64_MIN + 1);
  CHECK_EQ_STR(err.msg, msg);
  CHECK_EQ_INT(off, at);
}

static void test_expr_errors(void) {
  expect_error("m / k", "division by a non-positive value in expression", 4);
  expect_error("m / (k - 1)", "division by a non-positive value in expression",
               4);
  expect_error("m % k", "remainder by a non-positive value in expression", 4);
  expect_error("ceildiv(m,  k)",
               "ceildiv by a non-positive value in expression", 12);
  expect_error("m + zz", "unknown name 'zz' in expression", 4);
  expect_error("big + 1", "overflow in expression", 4);
  expect_error("0 - big - 2", "overflow in expression", 8);
  expect_error("big * 2", "overflow in expression", 4);
  expect_error("0 - (0 - big - 1)", "overflow in expression", 2);
  expect_error("92233720368547758070", "integer is too large", 0);
  expect_error("m + 1a", "malformed integer in expression", 4);
  expect_error("0x", "malformed integer in expression", 0);
  expect_error("m +", "expected a number, a name or '(' in expression", 3);
  expect_error("", "expected a number, a name or '(' in expression", 0);
  expect_error("(m", "expected ')' in expression", 2);
  expect_error("min(m k)", "expected ',' in expression", 6);
  expect_error("m ! 2", "unexpected text after expression", 2);
  expect_error("-m", "unexpected '-' in expression", 0);
  expect_error("m $", "unexpected text after expression", 2);
  char deep[200];
  memset(deep, '(', 100);
  deep[100] = '1';
  memset(deep + 101, ')', 98);
  deep[199] = 0;
  expect_error(deep, "expression is nested too deeply", 64);
  /* err and err_offset may be NULL. */
  CHECK(!tl_expr_eval("1 / 0", 5, NULL, NULL, NULL, NULL, NULL));
  /* A NUL byte is no operator: "4\0003" is 4, then stray text (it read as
   * 4 % 3, and printed as "4 "). */
  TlErr nul = {{0}};
  size_t at = 0;
  CHECK(!tl_expr_eval("4\0003", 3, NULL, NULL, NULL, &nul, &at));
  CHECK_EQ_STR(nul.msg, "unexpected text after expression");
  CHECK_EQ_INT(at, 1);
}

/* Checking: m is a runtime value, T a constant. */
static TlExprName classify(void *user, const char *name, size_t len,
                           int64_t *v) {
  (void)user;
  if (len == 1 && name[0] == 'm')
    return TL_EXPR_NAME_RUNTIME;
  if (len == 1 && name[0] == 'T') {
    *v = 4;
    return TL_EXPR_NAME_CONST;
  }
  return TL_EXPR_NAME_UNKNOWN;
}

static void test_expr_check(void) {
  TlStr out = {0};
  bool is_const = true;
  int64_t v = 0;
  TlErr err;
  size_t off;
  const char *t = "ceildiv( m,T )+min(m,2)*(m-1)/2%3-T";
  CHECK(tl_expr_check(t, strlen(t), classify, NULL, &out, &is_const, &v, &err,
                      &off));
  CHECK_EQ_STR(tl_str_cstr(&out),
               "ceildiv(m, T) + min(m, 2) * (m - 1) / 2 % 3 - T");
  CHECK(!is_const);
  tl_str_free(&out);
  t = "T * (T + 1) / 3";
  CHECK(tl_expr_check(t, strlen(t), classify, NULL, NULL, &is_const, &v, &err,
                      &off));
  CHECK(is_const);
  CHECK_EQ_INT(v, 6);
  /* Errors among constants are found before any runtime value is known;
   * errors that depend on a runtime value are not. */
  t = "m / (T - 4)";
  CHECK(!tl_expr_check(t, strlen(t), classify, NULL, NULL, NULL, NULL, &err,
                       &off));
  CHECK_EQ_STR(err.msg, "division by a non-positive value in expression");
  CHECK_EQ_INT(off, 4);
  t = "9223372036854775807 + T";
  CHECK(!tl_expr_check(t, strlen(t), classify, NULL, NULL, NULL, NULL, &err,
                       &off));
  CHECK_EQ_STR(err.msg, "overflow in expression");
  t = "9223372036854775807 + m";
  CHECK(tl_expr_check(t, strlen(t), classify, NULL, NULL, NULL, NULL, &err,
                      &off));
  t = "T / m";
  CHECK(tl_expr_check(t, strlen(t), classify, NULL, NULL, NULL, NULL, &err,
                      &off));
  t = "x";
  CHECK(!tl_expr_check(t, strlen(t), classify, NULL, NULL, NULL, NULL, &err,
                       &off));
  CHECK_EQ_STR(err.msg, "unknown name 'x' in expression");
}

/* Conditions: comparisons and logic over the same names, with C's
 * precedence; && and || skip the arithmetic errors of an operand they do
 * not need. */
static void test_cond_check(void) {
  TlStr out = {0};
  bool is_const = false;
  int64_t v = -1;
  TlErr err;
  size_t off;
  const char *t = "T%4==0&&!(T>8)||T<=1";
  CHECK(tl_cond_check(t, strlen(t), classify, NULL, &out, &is_const, &v, &err,
                      &off));
  CHECK_EQ_STR(tl_str_cstr(&out), "T % 4 == 0 && !(T > 8) || T <= 1");
  CHECK(is_const);
  CHECK_EQ_INT(v, 1);
  tl_str_free(&out);
  static const struct {
    const char *text;
    int64_t value;
  } cases[] = {
      {"T != 4", 0},         {"T >= 4", 1},          {"T < 4", 0},
      {"1 + 2 == 3", 1},     {"!0 + 1", 2},          {"0 || T - 4", 0},
      {"T && 5", 1},         {"(T > 3) * 7", 7},     {"max(T == 4, 0)", 1},
      {"T < 4 && 1 / 0", 0}, {"T == 4 || 1 % 0", 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    t = cases[i].text;
    v = -1;
    CHECK(tl_cond_check(t, strlen(t), classify, NULL, NULL, &is_const, &v,
                        &err, &off));
    CHECK_EQ_INT(v, cases[i].value);
  }
  /* The operand that decides is evaluated: its errors count. */
  t = "T == 4 && 1 / 0";
  CHECK(!tl_cond_check(t, strlen(t), classify, NULL, NULL, NULL, NULL, &err,
                       &off));
  CHECK_EQ_STR(err.msg, "division by a non-positive value in expression");
  CHECK_EQ_INT(off, 14);
  /* Names are checked in skipped operands too. */
  t = "0 && x";
  CHECK(!tl_cond_check(t, strlen(t), classify, NULL, NULL, NULL, NULL, &err,
                       &off));
  CHECK_EQ_STR(err.msg, "unknown name 'x' in expression");
  /* A runtime name makes the result runtime. */
  t = "m > 3";
  CHECK(tl_cond_check(t, strlen(t), classify, NULL, NULL, &is_const, NULL,
                      &err, &off));
  CHECK(!is_const);
  /* Grid expressions have no comparisons. */
  t = "T == 4";
  CHECK(!tl_expr_check(t, strlen(t), classify, NULL, NULL, NULL, NULL, &err,
                       &off));
  CHECK_EQ_STR(err.msg, "unexpected text after expression");
}

/*===--- Kernels ---------------------------------------------------------===*/

static TlOp *first_kernel(TlModule *m) {
  return m ? tl_block_first_op(tl_module_body(m)) : NULL;
}

static TlModule *parse(TlContext *ctx, const char *src) {
  TlModule *m = tl_parse_module(ctx, "k.tl", src, strlen(src), 1);
  if (m && TL_FAILED(tl_verify(tl_module_op(m)))) {
    tl_module_destroy(m);
    return NULL;
  }
  return m;
}

/* Parameters: a pointer (ignored), m, a float (ignored), n, k. */
static const char *kernel_src =
    "tl.kernel @k(%p: !tl.ptr<f16>, %m: i32, %x: f32, %n: i64, %k: u16)\n"
    "    template(BM = 16, W = 4)\n"
    "    grid(ceildiv(m, BM), (n - 100) / 7 + 20, (n - 100) % 7 + k / 2)\n"
    "    threads(W * 32) {\n"
    "}\n";

static void launch(TlOp *k, int64_t m, int64_t n, int64_t kk, int64_t gx,
                   int64_t gy, int64_t gz, int64_t threads) {
  int64_t args[5] = {12345, m, 777, n, kk};
  int64_t grid[3] = {0, 0, 0}, t = 0;
  TlErr err = {{0}};
  CHECK(tl_kernel_launch_dims(k, args, grid, &t, &err));
  if (err.msg[0])
    fprintf(stderr, "launch error: %s\n", err.msg);
  CHECK_EQ_INT(grid[0], gx);
  CHECK_EQ_INT(grid[1], gy);
  CHECK_EQ_INT(grid[2], gz);
  CHECK_EQ_INT(t, threads);
}

static void launch_fails(TlOp *k, int64_t m, int64_t n, int64_t kk,
                         const char *msg) {
  int64_t args[5] = {0, m, 0, n, kk};
  int64_t grid[3], t;
  TlErr err = {{0}};
  CHECK(!tl_kernel_launch_dims(k, args, grid, &t, &err));
  CHECK_EQ_STR(err.msg, msg);
}

static void test_launch_dims(TlContext *ctx) {
  TlModule *mod = parse(ctx, kernel_src);
  CHECK(mod != NULL);
  TlOp *k = first_kernel(mod);
  if (!k)
    return;
  /* m = 33: ceildiv(33, 16) = 3.
   * n = 30: (30 - 100) / 7 = -70 / 7 = -10 -> y = 10;
   *         -70 % 7 = 0, k / 2 = 4 / 2 = 2 -> z = 2. */
  launch(k, 33, 30, 4, 3, 10, 2, 128);
  /* m = 32: exactly 2 blocks.
   * n = 31: -69 / 7 = -9.86 floors to -10 -> y = 10 (truncation: 11);
   *         -69 % 7 = -69 - 7 * -10 = 1, k / 2 = 5 / 2 = 2 -> z = 3. */
  launch(k, 32, 31, 5, 2, 10, 3, 128);
  /* m = 1: one block. n = 0: -100 / 7 = -14.3 -> -15 -> y = 5;
   * -100 % 7 = -100 + 105 = 5, k = 0 -> z = 5. */
  launch(k, 1, 0, 0, 1, 5, 5, 128);
  /* n = 100: y = 20, z = 0 + k / 2 = 1. m = 2^31 - 1: 134217728 blocks. */
  launch(k, 2147483647, 100, 3, 134217728, 20, 1, 128);

  /* Bad launch values. m = 0 gives no block; n = -100 gives
   * -200 / 7 = -28.6 -> -29 -> y = -9; k = 0 with n = 100 gives z = 0. */
  launch_fails(k, 0, 30, 4, "grid dimension 0 is 0, outside 1..2147483647");
  launch_fails(k, 33, -100, 4, "grid dimension 1 is -9, outside 1..65535");
  launch_fails(k, 33, 100, 0, "grid dimension 2 is 0, outside 1..65535");
  /* n near the int64 limit: n - 100 is fine, but the y grid is too large. */
  launch_fails(k, 33, 700000, 4,
               "grid dimension 1 is 100005, outside 1..65535");
  launch_fails(k, 33, INT64_MIN, 4,
               "grid expression '(n - 100) / 7 + 20': overflow in expression");

  /* int_args may be NULL only when no expression uses a parameter. */
  int64_t grid[3], t;
  TlErr err;
  CHECK(!tl_kernel_launch_dims(k, NULL, grid, &t, &err));
  CHECK_EQ_STR(err.msg, "grid expression 'ceildiv(m, BM)': unknown name 'm' in "
                        "expression");
  tl_module_destroy(mod);

  /* Division by a parameter: checked at launch. */
  mod = parse(ctx, "tl.kernel @d(%a: i32, %b: i32) grid(a / b, a % b + 1, "
                   "ceildiv(a, b)) threads(1) {\n}\n");
  k = first_kernel(mod);
  CHECK(k != NULL);
  if (k) {
    int64_t ok[2] = {10, 3}, zero[2] = {10, 0};
    CHECK(tl_kernel_launch_dims(k, ok, grid, &t, &err));
    CHECK(grid[0] == 3 && grid[1] == 2 && grid[2] == 4 && t == 1);
    CHECK(!tl_kernel_launch_dims(k, zero, grid, &t, &err));
    CHECK_EQ_STR(err.msg, "grid expression 'a / b': division by a "
                          "non-positive value in expression");
    CHECK(!tl_kernel_launch_dims(k, NULL, grid, &t, &err));
  }
  tl_module_destroy(mod);

  /* A kernel without parameters needs no values; threads over 1024 is
   * rejected at launch when it depends on a parameter. */
  mod = parse(ctx, "tl.kernel @c(%w: i32) grid(7) threads(w * 32) {\n}\n");
  k = first_kernel(mod);
  CHECK(k != NULL);
  if (k) {
    int64_t w[1] = {33};
    CHECK(!tl_kernel_launch_dims(k, w, grid, &t, &err));
    CHECK_EQ_STR(err.msg, "threads per block is 1056, outside 1..1024");
    w[0] = 8;
    CHECK(tl_kernel_launch_dims(k, w, grid, &t, &err));
    CHECK(grid[0] == 7 && grid[1] == 1 && grid[2] == 1 && t == 256);
  }
  tl_module_destroy(mod);

  /* Not a kernel. */
  CHECK(!tl_kernel_launch_dims(NULL, NULL, grid, &t, &err));
  CHECK_EQ_STR(err.msg, "not a valid tl.kernel");
}

static char *print_module(TlModule *m) {
  TlStr s = {0};
  tl_module_print(m, NULL, &s);
  return s.data;
}

static void test_overrides(void) {
  const char *src = "tl.kernel @k(%m: i32) template(BM = 16, BN = 8)\n"
                    "    grid(ceildiv(m, BM), 1024 / BN) threads(BN * 4) {\n"
                    "  %bm = tl.template BM : i32\n"
                    "  tl.print %bm : i32\n"
                    "}\n";
  TlContext *ctx = tl_context_create();
  tl_register_all_dialects(ctx);
  /* Defaults. */
  TlModule *m = parse(ctx, src);
  TlOp *k = first_kernel(m);
  CHECK(k != NULL);
  int64_t args[1] = {100}, grid[3], t;
  TlErr err;
  if (k) {
    CHECK(tl_kernel_launch_dims(k, args, grid, &t, &err));
    /* ceildiv(100, 16) = 7, 1024 / 8 = 128, 8 * 4 = 32 */
    CHECK(grid[0] == 7 && grid[1] == 128 && t == 32);
  }
  tl_module_destroy(m);

  /* Overrides replace the defaults while parsing; an unrelated definition
   * is left unused. */
  tl_context_set_define(ctx, "BM", 32);
  tl_context_set_define(ctx, "BN", 16);
  tl_context_set_define(ctx, "OTHER", 1);
  m = parse(ctx, src);
  k = first_kernel(m);
  CHECK(k != NULL);
  if (k) {
    CHECK(tl_kernel_launch_dims(k, args, grid, &t, &err));
    /* ceildiv(100, 32) = 4, 1024 / 16 = 64, 16 * 4 = 64 */
    CHECK(grid[0] == 4 && grid[1] == 64 && t == 64);
    char *text = print_module(m);
    CHECK(strstr(text, "template(BM = 32, BN = 16)") != NULL);
    tl_free(text);
    /* The template folds to the overridden value. */
    TlPipeline *pl = tl_pipeline_create();
    CHECK(!TL_FAILED(
        tl_pipeline_parse(pl, "canonicalize", tl_context_diag(ctx))));
    TlPipelineConfig cfg = {.verify_each = true};
    CHECK(!TL_FAILED(tl_pipeline_run(pl, m, &cfg)));
    tl_pipeline_destroy(pl);
    text = print_module(m);
    CHECK(strstr(text, "arith.constant 32 : i32") != NULL);
    CHECK(strstr(text, "tl.template") == NULL);
    tl_free(text);
  }
  tl_module_destroy(m);
  bool used = false;
  const char *name;
  int seen = 0;
  for (unsigned i = 0; (name = tl_context_define_at(ctx, i, &used)); i++) {
    seen++;
    if (!strcmp(name, "OTHER"))
      CHECK(!used);
    else
      CHECK(used);
  }
  CHECK_EQ_INT(seen, 3);

  /* An override that makes a constant grid expression invalid is a parse
   * error located at the expression. */
  Captured c = {0};
  tl_diag_set_handler(tl_context_diag(ctx), capture, &c);
  tl_context_set_define(ctx, "BN", 0);
  CHECK(tl_parse_module(ctx, "k.tl", src, strlen(src), 1) == NULL);
  CHECK_EQ_STR(c.last, "invalid grid expression: division by a non-positive "
                       "value in expression");
  CHECK_EQ_INT(c.line, 2);
  CHECK_EQ_INT(c.col, 33); /* the divisor BN */
  /* Too many threads per block. */
  tl_context_set_define(ctx, "BN", 512);
  CHECK(tl_parse_module(ctx, "k.tl", src, strlen(src), 1) == NULL);
  CHECK_EQ_STR(c.last, "invalid threads expression: threads per block is "
                       "2048, outside 1..1024");
  /* A value the template's result type cannot hold fails verification. */
  tl_context_set_define(ctx, "BN", 8);
  tl_context_set_define(ctx, "BM", (int64_t)1 << 40);
  m = tl_parse_module(ctx, "k.tl", src, strlen(src), 1);
  CHECK(m != NULL);
  if (m) {
    CHECK(TL_FAILED(tl_verify(tl_module_op(m))));
    CHECK_EQ_STR(c.last, "'tl.template' op template value 1099511627776 does "
                         "not fit in i32");
  }
  tl_module_destroy(m);
  tl_diag_set_handler(tl_context_diag(ctx), NULL, NULL);
  tl_context_destroy(ctx);
}

/* Definitions from text (the tools' -D): integers and scalar types; type
 * template parameters take a type definition and refuse an integer. */
static void test_type_defines(void) {
  TlContext *ctx = tl_context_create();
  tl_register_all_dialects(ctx);
  TlErr err;
  int64_t v;
  TlType *t;
  CHECK(!TL_FAILED(tl_context_parse_define(ctx, "K=-12", &err)));
  CHECK(tl_context_get_define(ctx, "K", &v) && v == -12);
  CHECK(!TL_FAILED(tl_context_parse_define(ctx, "WT=f6e3m2", &err)));
  CHECK(!tl_context_get_define(ctx, "WT", &v)); /* not an integer */
  CHECK(tl_context_get_define_value(ctx, "WT", &v, &t));
  CHECK(t == tl_type_float(ctx, 3, 2));
  CHECK(TL_FAILED(tl_context_parse_define(ctx, "WT=", &err)));
  CHECK_EQ_STR(err.msg, "invalid definition 'WT=': '' is neither an integer "
                        "nor a scalar type");
  CHECK(TL_FAILED(tl_context_parse_define(ctx, "W T=3", &err)));
  CHECK(TL_FAILED(tl_context_parse_define(ctx, "=3", &err)));
  CHECK(TL_FAILED(tl_context_parse_define(ctx, "X=u99", &err)));
  CHECK(TL_FAILED(tl_context_parse_define(ctx, "X=3x", &err)));
  const char *src =
      "tl.kernel @k() template(WT = u4, N = 64) requires(bits(WT) <= 8)\n"
      "    grid(N / bits(WT)) threads(32) {\n"
      "  %r = tl.alloc_register 0 : !tl.reg<{N}x{WT}, "
      "#tl.layout<local({N / 32}).spatial(32)>>\n"
      "}\n";
  tl_context_clear_defines(ctx);
  tl_context_set_define_type(ctx, "WT", tl_type_int(ctx, 3, true));
  TlModule *m = tl_parse_module(ctx, "k.tl", src, strlen(src), 1);
  CHECK(m != NULL);
  if (m) {
    TlOp *k = first_kernel(m);
    int64_t grid[3], th;
    CHECK(k && tl_kernel_launch_dims(k, NULL, grid, &th, &err));
    CHECK(grid[0] == 21 && th == 32); /* 64 / 3 */
    char *text = print_module(m);
    CHECK(strstr(text, "template(N = 64, WT = i3)") != NULL);
    CHECK(strstr(text, "!tl.reg<64xi3,") != NULL);
    tl_free(text);
  }
  tl_module_destroy(m);
  tl_context_destroy(ctx);
}

/* The first error of a parse and its place. */
typedef struct FirstError {
  int errors, notes;
  char msg[256];
  unsigned line, col;
} FirstError;

static void first_error(const TlDiag *d, void *user) {
  FirstError *f = user;
  if (d->severity == TL_DIAG_NOTE) {
    f->notes++;
    return;
  }
  if (d->severity == TL_DIAG_ERROR && !f->errors++) {
    snprintf(f->msg, sizeof f->msg, "%s", d->message);
    f->line = d->loc.line;
    f->col = d->loc.col;
  }
}

/* The type of the first result of the first op of the kernel's body. */
static TlType *first_result_type(TlOp *k) {
  TlBlock *b = tl_region_first_block(tl_op_region(k, 0));
  TlOp *op = b ? tl_block_first_op(b) : NULL;
  return op && tl_op_num_results(op) ? tl_value_type(tl_op_result(op, 0))
                                     : NULL;
}

/* Instantiation from C: one text parsed after different definitions gives
 * kernels whose tile types follow the template values; an alias with a
 * template expression follows each kernel's values. */
static void test_instances(void) {
  const char *src =
      "#acc = #tl.layout<local({BM / 8}, 1).spatial(8, 4).local(1, 2)>\n"
      "tl.kernel @k(%m: i32) template(BM = 16)\n"
      "    requires(BM % 16 == 0) grid(ceildiv(m, BM)) threads(32) {\n"
      "  %z = tl.alloc_register 0.0 : !tl.reg<{BM}x8xf32, #acc>\n"
      "  %s = tl.alloc_shared : !tl.shared<{BM}x{BM * 2}xf16>\n"
      "}\n";
  TlContext *ctx = tl_context_create();
  tl_register_all_dialects(ctx);
  TlModule *m16 = parse(ctx, src);
  tl_context_set_define(ctx, "BM", 32);
  TlModule *m32 = parse(ctx, src);
  TlOp *k16 = first_kernel(m16), *k32 = first_kernel(m32);
  CHECK(k16 && k32);
  if (k16 && k32) {
    TlType *t16 = first_result_type(k16), *t32 = first_result_type(k32);
    CHECK(t16 && t32 && t16 != t32);
    CHECK_EQ_INT(tl_tensor_dim(t16, 0), 16);
    CHECK_EQ_INT(tl_tensor_dim(t32, 0), 32);
    CHECK_EQ_INT(tl_layout_num_threads(tl_reg_layout(t32)), 32);
    CHECK(tl_reg_layout(t32)->shape[0] == 32);
    /* The same tile built by hand is the same (uniqued) type. */
    TlLayout l = layout("local(4, 1).spatial(8, 4).local(1, 2)");
    int64_t dims[2] = {32, 8};
    CHECK(tl_reg_type_get(ctx, 2, dims, tl_type_f32(ctx), &l) == t32);
    char *text = print_module(m32);
    CHECK(strstr(text, "!tl.reg<32x8xf32") != NULL);
    CHECK(strstr(text, "!tl.shared<32x64xf16>") != NULL);
    CHECK(strstr(text, "requires(BM % 16 == 0)") != NULL);
    CHECK(strstr(text, "{BM") == NULL);
    /* The instance prints as concrete text that parses back to itself. */
    tl_context_clear_defines(ctx);
    TlModule *again = parse(ctx, text);
    char *text2 = again ? print_module(again) : NULL;
    CHECK(text2 && !strcmp(text, text2));
    tl_free(text2);
    tl_module_destroy(again);
    tl_free(text);
  }
  tl_module_destroy(m16);
  tl_module_destroy(m32);

  /* A value the constraint refuses, and one that makes a type invalid:
   * located errors naming the condition or the expression. */
  FirstError f = {0};
  tl_diag_set_handler(tl_context_diag(ctx), first_error, &f);
  tl_context_set_define(ctx, "BM", 24);
  CHECK(tl_parse_module(ctx, "k.tl", src, strlen(src), 1) == NULL);
  CHECK_EQ_STR(f.msg,
               "template constraint 'BM % 16 == 0' does not hold with BM = 24");
  CHECK_EQ_INT(f.line, 3);
  CHECK_EQ_INT(f.col, 14);
  const char *bad = "tl.kernel @k() template(BM = 16) grid(1) threads(32) {\n"
                    "  %z = tl.alloc_register 0.0 : "
                    "!tl.reg<{BM}xf32, #tl.layout<spatial({BM / 2})>>\n"
                    "}\n";
  memset(&f, 0, sizeof f);
  tl_context_set_define(ctx, "BM", 64);
  CHECK(tl_parse_module(ctx, "k.tl", bad, strlen(bad), 1) == NULL);
  CHECK_EQ_STR(f.msg, "layout spatial(32) has shape [32], but the tile is "
                      "[64]");
  CHECK_EQ_INT(f.notes, 2); /* one per template expression of the type */
  memset(&f, 0, sizeof f);
  tl_context_set_define(ctx, "BM", 0);
  CHECK(tl_parse_module(ctx, "k.tl", bad, strlen(bad), 1) == NULL);
  CHECK_EQ_STR(f.msg, "template expression '{BM}' is 0 with BM = 0, not a "
                      "dimension (1..2^40)");
  CHECK_EQ_INT(f.col, 40);
  tl_diag_set_handler(tl_context_diag(ctx), NULL, NULL);
  tl_context_destroy(ctx);
}

/*===--- tl.slice offsets ------------------------------------------------===*/

static void find_slice(TlOp *op, void *user) {
  if (!strcmp(tl_op_name(op), "tl.slice"))
    *(TlOp **)user = op;
}

/* tl_slice_offsets gives the literals and -1 for each operand, in order;
 * an op whose attribute does not match its operands gives false. */
static void test_slice_offsets(void) {
  TlContext *ctx = tl_context_create();
  tl_register_all_dialects(ctx);
  const char *src =
      "func @f(%i: i32, %j: u8) {\n"
      "  %b = tl.alloc_shared : !tl.shared<4x2x64xf16>\n"
      "  %v = tl.slice %b[%i, 0, %j] : !tl.shared<4x2x64xf16> -> "
      "!tl.shared<2x2x32xf16, #tl.smem<shape=[2, 2, 32], modes=[2, 2, 32], "
      "strides=[128, 64, 1]>>\n"
      "  tl.free_shared %b : !tl.shared<4x2x64xf16>\n"
      "  return\n"
      "}\n";
  TlModule *m = parse(ctx, src);
  CHECK(m != NULL);
  TlOp *slice = NULL;
  if (m)
    tl_op_walk(tl_module_op(m), find_slice, &slice, false);
  CHECK(slice != NULL);
  if (slice) {
    int64_t off[3] = {7, 7, 7};
    CHECK(tl_slice_offsets(slice, off));
    CHECK_EQ_INT(off[0], -1);
    CHECK_EQ_INT(off[1], 0);
    CHECK_EQ_INT(off[2], -1);
    CHECK_EQ_INT(tl_op_num_operands(slice), 3);
    /* One literal fewer than the operands need. */
    TlType *i64 = tl_type_int(ctx, 64, true);
    TlAttr *two[2] = {tl_attr_int(ctx, i64, -1), tl_attr_int(ctx, i64, 0)};
    tl_op_set_attr(slice, "static_offsets", tl_attr_array(ctx, 2, two));
    CHECK(!tl_slice_offsets(slice, off));
  }
  tl_module_destroy(m);
  tl_context_destroy(ctx);
}

int main(void) {
  TlContext *ctx = tl_context_create();
  tl_register_all_dialects(ctx);
  test_ptr(ctx);
  test_global(ctx);
  test_shared(ctx);
  test_reg(ctx);
  test_layout_attr(ctx);
  test_expr_eval();
  test_expr_errors();
  test_expr_check();
  test_cond_check();
  test_launch_dims(ctx);
  tl_context_destroy(ctx);
  test_overrides();
  test_type_defines();
  test_instances();
  test_slice_offsets();
  return unit_report();
}
