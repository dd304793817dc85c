/* Unit tests of include/tl/analysis.h.
 *
 * Shared memory: tile sizes and alignments of hand-computed cases, and a
 * planned kernel read back through tl_shared_offset, tl_shared_alignment,
 * tl_shared_reuses and tl_kernel_smem_bytes.
 *
 * Divisibility: for every integer binary op the analysis knows, on several
 * integer types, a kernel computes `%r = op %x, %y` where %x and %y are
 * parameters assumed divisible by 2^a and 2^b (or %y a constant). For
 * random x and y with those factors, the result computed here in plain C
 * (wrapping to the type, division toward zero, remainder with the sign of
 * the dividend) must be divisible by what the analysis claims for %r. */
#include "tl/analysis.h"
#include "tl/arch.h"
#include "tl/dialects.h"
#include "tl/tl.h"
#include "unit.h"

#include <inttypes.h>
#include <stdint.h>

static TlModule *parse(TlContext *ctx, const char *src) {
  TlModule *m = tl_parse_module(ctx, "t.tl", src, strlen(src), 1);
  CHECK(m != NULL);
  CHECK(m && !TL_FAILED(tl_verify(tl_module_op(m))));
  return m;
}

static TlOp *first_op(TlModule *m, const char *name) {
  TlOp *found = NULL;
  for (TlOp *k = tl_block_first_op(tl_module_body(m)); k && !found;
       k = tl_op_next(k)) {
    if (strcmp(tl_op_name(k), name) == 0)
      return k;
    TlBlock *b =
        tl_op_num_regions(k) ? tl_region_first_block(tl_op_region(k, 0)) : NULL;
    for (TlOp *o = b ? tl_block_first_op(b) : NULL; o; o = tl_op_next(o))
      if (strcmp(tl_op_name(o), name) == 0 && !found)
        found = o;
  }
  return found;
}

static int errors;
static char last_error[256];
static void capture(const TlDiag *d, void *user) {
  if (d->severity == TL_DIAG_ERROR)
    errors++;
  snprintf(last_error, sizeof last_error, "%s", d->message);
}

/*===--- Shared memory ---------------------------------------------------===*/

static void test_shared_sizes(TlContext *ctx) {
  int64_t d2[2] = {64, 64}, d1[1] = {3};
  TlType *f16 = tl_type_f16(ctx), *u4 = tl_type_int(ctx, 4, false);
  TlType *i6 = tl_type_int(ctx, 6, true);
  /* 64 * 64 * 2 bytes, row-major: 16-byte aligned. */
  TlType *a = tl_shared_type_get(ctx, 2, d2, f16, false, 0, 0, 0);
  CHECK_EQ_INT(tl_shared_type_bytes(a), 8192);
  CHECK_EQ_INT(tl_shared_type_alignment(a), 16);
  /* swizzle<3, 3, 3>: blocks of 2^9 f16 = 1024 bytes. */
  TlType *b = tl_shared_type_get(ctx, 2, d2, f16, false, 3, 3, 3);
  CHECK_EQ_INT(tl_shared_type_bytes(b), 8192);
  CHECK_EQ_INT(tl_shared_type_alignment(b), 1024);
  /* 3 x 4 bits = 12 bits -> 2 bytes; 3 x 6 bits = 18 bits -> 3 bytes. */
  CHECK_EQ_INT(
      tl_shared_type_bytes(tl_shared_type_get(ctx, 1, d1, u4, false, 0, 0, 0)),
      2);
  CHECK_EQ_INT(
      tl_shared_type_bytes(tl_shared_type_get(ctx, 1, d1, i6, false, 0, 0, 0)),
      3);
  /* swizzle<1, 0, 1> on 3 x i6: cosize rounds 3 up to the block of 4
   * elements, 24 bits -> 3 bytes; the block is 3 bytes, rounded up to a
   * power of two (4), below 16. */
  TlType *c = tl_shared_type_get(ctx, 1, d1, i6, false, 1, 0, 1);
  CHECK_EQ_INT(tl_shared_type_bytes(c), 3);
  CHECK_EQ_INT(tl_shared_type_alignment(c), 16);
  /* Not shared types. */
  CHECK_EQ_INT(tl_shared_type_bytes(f16), -1);
  CHECK_EQ_INT(tl_shared_type_alignment(NULL), -1);
}

static void test_plan(TlContext *ctx) {
  const char *src =
      "tl.kernel @k() grid(1) threads(32) {\n"
      "  %a = tl.alloc_shared : !tl.shared<256xf32>\n"
      "  tl.free_shared %a : !tl.shared<256xf32>\n"
      "  %b = tl.alloc_shared : !tl.shared<16xf32, swizzle<2, 0, 2>>\n"
      "  %c = tl.alloc_shared : !tl.shared<8xf32>\n"
      "}\n";
  TlModule *m = parse(ctx, src);
  if (!m)
    return;
  TlOp *k = first_op(m, "tl.kernel");
  TlOp *a = tl_block_first_op(tl_region_first_block(tl_op_region(k, 0)));
  TlOp *b = tl_op_next(tl_op_next(a)), *c = tl_op_next(b);
  int64_t v = -7;
  CHECK_EQ_INT(tl_kernel_smem_bytes(k), -1);
  CHECK(!tl_shared_offset(a, &v) && v == -7);
  CHECK(!tl_shared_reuses(a));
  CHECK(!TL_FAILED(tl_plan_shared_memory(k, tl_arch_lookup("sm_90")->max_smem)));
  /* %a at 0 (1024 bytes, then freed); %b (64 bytes, swizzle block 2^4 f32
   * = 64 bytes) reuses 0; %c, live with %b, goes to 64. */
  CHECK(tl_shared_offset(a, &v) && v == 0);
  CHECK(tl_shared_offset(b, &v) && v == 0);
  CHECK(tl_shared_alignment(b, &v) && v == 64);
  CHECK(tl_shared_offset(c, &v) && v == 64);
  CHECK(tl_shared_alignment(c, &v) && v == 16);
  CHECK_EQ_INT(tl_kernel_smem_bytes(k), 1024);
  CHECK(!tl_shared_reuses(a));
  CHECK(tl_shared_reuses(b));
  CHECK(tl_shared_reuses(c)); /* inside %a's old bytes too */
  /* Not the right ops. */
  CHECK(!tl_shared_offset(k, &v));
  CHECK_EQ_INT(tl_kernel_smem_bytes(a), -1);
  /* Over a limit: fails, attributes stay from the last successful run. */
  tl_diag_set_handler(tl_context_diag(ctx), capture, NULL);
  CHECK(TL_FAILED(tl_plan_shared_memory(k, 100)));
  tl_diag_set_handler(tl_context_diag(ctx), NULL, NULL);
  CHECK_EQ_INT(errors, 1);
  CHECK_EQ_STR(last_error, "'tl.kernel' op needs 1024 bytes of shared memory, "
                           "more than the limit of 100");
  CHECK_EQ_INT(tl_kernel_smem_bytes(k), 1024);
  tl_module_destroy(m);
}

/*===--- Divisibility soundness ------------------------------------------===*/

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

typedef struct IntType {
  const char *name;
  int width;
  bool sgn;
} IntType;

static int64_t wrap_to(uint64_t v, const IntType *t) {
  if (t->width < 64) {
    v &= (UINT64_C(1) << t->width) - 1;
    if (t->sgn && (v >> (t->width - 1)) & 1)
      v |= ~((UINT64_C(1) << t->width) - 1);
  }
  return (int64_t)v;
}

/* The reference: op on wrapped values; false when undefined. */
static bool eval(const char *op, const IntType *t, int64_t x, int64_t y,
                 int64_t *out) {
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  int64_t smin = wrap_to(UINT64_C(1) << (t->width - 1), t);
  if (!strcmp(op, "addi"))
    *out = (int64_t)(ux + uy);
  else if (!strcmp(op, "subi"))
    *out = (int64_t)(ux - uy);
  else if (!strcmp(op, "muli"))
    *out = (int64_t)(ux * uy);
  else if (!strcmp(op, "andi"))
    *out = x & y;
  else if (!strcmp(op, "ori"))
    *out = x | y;
  else if (!strcmp(op, "xori"))
    *out = x ^ y;
  else if (!strcmp(op, "mini"))
    *out = (t->sgn ? x < y : ux < uy) ? x : y;
  else if (!strcmp(op, "maxi"))
    *out = (t->sgn ? x > y : ux > uy) ? x : y;
  else if (!strcmp(op, "shli") || !strcmp(op, "shri")) {
    if (uy >= (uint64_t)t->width)
      return false;
    if (op[2] == 'l')
      *out = (int64_t)(ux << uy);
    else
      *out = t->sgn ? x >> uy : (int64_t)(ux >> uy);
  } else {
    if (y == 0 || (t->sgn && x == smin && y == -1))
      return false;
    bool ceil = !strcmp(op, "ceildivi"), rem = !strcmp(op, "remi");
    if (t->sgn) {
      int64_t q = x / y, r = x % y;
      if (ceil && r != 0 && (r > 0) == (y > 0))
        q++;
      *out = rem ? r : q;
    } else {
      uint64_t q = ux / uy, r = ux % uy;
      if (ceil && r)
        q++;
      *out = (int64_t)(rem ? r : q);
    }
  }
  *out = wrap_to((uint64_t)*out, t);
  return true;
}

/* A random value of type t divisible by 2^k (k < width). */
static int64_t random_multiple(const IntType *t, int k) {
  uint64_t v = rnd();
  /* Small values and values near the limits both matter. */
  switch (rnd() % 3) {
  case 0:
    v %= 64;
    break;
  case 1:
    v = (uint64_t)0 - v % 64;
    break;
  default:
    break;
  }
  return wrap_to(v << k, t);
}

static void check_op(TlContext *ctx, const char *op, const IntType *t, int a,
                     int b, bool const_y, int64_t yc) {
  char src[1024], ytext[32];
  if (t->sgn)
    snprintf(ytext, sizeof ytext, "%" PRId64, yc);
  else
    snprintf(ytext, sizeof ytext, "%" PRIu64, (uint64_t)yc);
  if (const_y)
    snprintf(src, sizeof src,
             "tl.kernel @k(%%x: %s) grid(1) threads(32) attributes "
             "{assume = {x = %lld}} {\n"
             "  %%y = arith.constant %s : %s\n"
             "  %%r = arith.%s %%x, %%y : %s\n"
             "}\n",
             t->name, 1LL << a, ytext, t->name, op, t->name);
  else
    snprintf(src, sizeof src,
             "tl.kernel @k(%%x: %s, %%y: %s) grid(1) threads(32) attributes "
             "{assume = {x = %lld, y = %lld}} {\n"
             "  %%r = arith.%s %%x, %%y : %s\n"
             "}\n",
             t->name, t->name, 1LL << a, 1LL << b, op, t->name);
  TlModule *m = parse(ctx, src);
  if (!m)
    return;
  TlOp *k = first_op(m, "tl.kernel");
  TlOp *res = NULL;
  for (TlOp *o = tl_block_first_op(tl_region_first_block(tl_op_region(k, 0)));
       o; o = tl_op_next(o))
    if (strncmp(tl_op_name(o), "arith.", 6) == 0 &&
        strcmp(tl_op_name(o), "arith.constant") != 0)
      res = o;
  TlAnalysis *an = tl_analysis_run(k);
  CHECK(an != NULL);
  if (!an || !res) {
    tl_module_destroy(m);
    return;
  }
  int64_t d = tl_analysis_divisibility(an, tl_op_result(res, 0));
  int64_t c;
  bool is_const = tl_analysis_constant(an, tl_op_result(res, 0), &c);
  for (int i = 0; i < 200; i++) {
    int64_t x = random_multiple(t, a);
    int64_t y = const_y ? yc : random_multiple(t, b);
    int64_t v;
    if (!eval(op, t, x, y, &v))
      continue;
    /* v divisible by d: its low log2(d) bits are zero. */
    bool ok = ((uint64_t)v & (uint64_t)(d - 1)) == 0 && (!is_const || c == v);
    if (!ok)
      fprintf(stderr,
              "  %s %s: x = %" PRId64 " (2^%d | x), y = %" PRId64
              " gives %" PRId64 ", claimed divisible by %" PRId64 "%s\n",
              op, t->name, x, a, y, v, d, is_const ? " (constant)" : "");
    CHECK(ok);
    if (!ok)
      break;
  }
  tl_analysis_destroy(an);
  tl_module_destroy(m);
}

static void test_soundness(TlContext *ctx) {
  static const IntType types[] = {{"i8", 8, true},    {"u8", 8, false},
                                  {"i16", 16, true},  {"i32", 32, true},
                                  {"u32", 32, false}, {"i64", 64, true},
                                  {"u64", 64, false}};
  static const char *const ops[] = {"addi", "subi",     "muli", "andi", "ori",
                                    "xori", "mini",     "maxi", "shli", "shri",
                                    "divi", "ceildivi", "remi"};
  static const int64_t consts[] = {1, 2, 3, 4, 8, 12, 16, -1, -4, -8, 64, 0};
  for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
    const IntType *t = &types[ti];
    int maxk = t->width - 1 < 30 ? t->width - 1 : 30;
    for (size_t oi = 0; oi < sizeof ops / sizeof *ops; oi++) {
      for (int a = 0; a <= maxk; a += 3)
        for (int b = 0; b <= maxk; b += 4)
          check_op(ctx, ops[oi], t, a, b, false, 0);
      for (size_t ci = 0; ci < sizeof consts / sizeof *consts; ci++) {
        int64_t c = wrap_to((uint64_t)consts[ci], t);
        if (c != consts[ci])
          continue; /* -1 in an unsigned type: written otherwise */
        for (int a = 0; a <= maxk; a += 2)
          check_op(ctx, ops[oi], t, a, 0, true, c);
      }
    }
  }
}

/*===--- Views -----------------------------------------------------------===*/

static void test_view_alignment(TlContext *ctx) {
  const char *src =
      "tl.kernel @k(%a: !tl.ptr<bf16>, %n: i32) grid(1) threads(32) "
      "attributes {assume = {a = 256, n = 8}} {\n"
      "  %c0 = arith.constant 0 : i32\n"
      "  %c32 = arith.constant 32 : i32\n"
      "  %g = tl.view_global %a[%n, %n, 128] : !tl.global<?x?x128xbf16>\n"
      "}\n";
  TlModule *m = parse(ctx, src);
  if (!m)
    return;
  TlOp *k = first_op(m, "tl.kernel");
  TlOp *c0 = tl_block_first_op(tl_region_first_block(tl_op_region(k, 0)));
  TlOp *c32 = tl_op_next(c0), *g = tl_op_next(c32);
  TlAnalysis *an = tl_analysis_run(k);
  CHECK(an != NULL);
  if (an) {
    TlValue *z = tl_op_result(c0, 0), *t = tl_op_result(c32, 0);
    TlValue *offs[3] = {z, z, t};
    TlValue *view = tl_op_result(g, 0);
    /* Strides [n * 128, 128, 1] elements of 2 bytes. Element [0, 0, 32]:
     * 64 bytes, below the pointer's 256. */
    CHECK_EQ_INT(tl_analysis_view_alignment(an, view, offs, NULL), 64);
    /* Index [i, j, 0] for any i, j: stride 128 elements = 256 bytes, the
     * other 8 * 128 * 2 = 2048 bytes; with the offset 32: 64. */
    int64_t rows[3] = {1, 1, 0};
    CHECK_EQ_INT(tl_analysis_view_alignment(an, view, offs, rows), 64);
    TlValue *zeros[3] = {z, z, z};
    CHECK_EQ_INT(tl_analysis_view_alignment(an, view, zeros, rows), 256);
    /* Index [0, 0, 8k]: 16 bytes; [0, 0, k]: 2 bytes. */
    int64_t vec8[3] = {0, 0, 8}, any[3] = {1, 1, 1};
    CHECK_EQ_INT(tl_analysis_view_alignment(an, view, zeros, vec8), 16);
    CHECK_EQ_INT(tl_analysis_view_alignment(an, view, zeros, any), 2);
    /* The pointer itself, and a value that is not an integer. */
    CHECK_EQ_INT(
        tl_analysis_divisibility(
            an, tl_block_arg(tl_region_first_block(tl_op_region(k, 0)), 0)),
        256);
    CHECK_EQ_INT(tl_analysis_divisibility(an, view), 0);
    int64_t v;
    CHECK(tl_analysis_constant(an, t, &v) && v == 32);
    CHECK(!tl_analysis_constant(an, view, &v));
    TlAccessAlignment al;
    CHECK(!tl_analysis_access_alignment(an, g, &al));
    tl_analysis_destroy(an);
  }
  tl_module_destroy(m);
}

/*===--- Launch checks of `assume` ---------------------------------------===*/

/* Runs the launch check on values[0..n) and returns the number of errors,
 * the last one in last_error. */
static int launch_errors(TlContext *ctx, TlOp *k, unsigned n,
                         const uint64_t *values) {
  errors = 0;
  last_error[0] = 0;
  tl_diag_set_handler(tl_context_diag(ctx), capture, NULL);
  TlResult r = tl_kernel_check_launch_assumptions(k, n, values);
  tl_diag_set_handler(tl_context_diag(ctx), NULL, NULL);
  CHECK_EQ_INT(TL_FAILED(r), errors > 0);
  return errors;
}

static void test_launch_assumptions(TlContext *ctx) {
  const char *src =
      "tl.kernel @k(%a: !tl.ptr<bf16>, %n: i32, %u: u32, %x: f32) grid(1) "
      "threads(32) attributes {assume = {a = 256, n = 8, u = 4}} {\n"
      "}\n"
      "tl.kernel @free(%n: i32) grid(1) threads(32) {\n"
      "}\n";
  TlModule *m = parse(ctx, src);
  if (!m)
    return;
  TlOp *k = first_op(m, "tl.kernel"), *free_k = tl_op_next(k);
  /* Kept: an unknown address (0), a negative multiple, any float bits. */
  uint64_t ok[4] = {0, (uint64_t)-16, 12, 0x3f800001};
  CHECK_EQ_INT(launch_errors(ctx, k, 4, ok), 0);
  uint64_t aligned[4] = {0x7f0000000100, 8, 0, 0};
  CHECK_EQ_INT(launch_errors(ctx, k, 4, aligned), 0);
  /* Broken: each argument named with its value. */
  uint64_t addr[4] = {0x7f0000000180, 8, 4, 0};
  CHECK_EQ_INT(launch_errors(ctx, k, 4, addr), 1);
  CHECK_EQ_STR(last_error, "'tl.kernel' op argument 'a' at address "
                           "0x7f0000000180 breaks 'assume': it is not "
                           "256-byte aligned");
  uint64_t neg[4] = {0, (uint64_t)-12, 4, 0};
  CHECK_EQ_INT(launch_errors(ctx, k, 4, neg), 1);
  CHECK_EQ_STR(last_error, "'tl.kernel' op argument 'n' = -12 breaks "
                           "'assume': it is not a multiple of 8");
  uint64_t big[4] = {0, 8, 4294967294u, 0};
  CHECK_EQ_INT(launch_errors(ctx, k, 4, big), 1);
  CHECK_EQ_STR(last_error, "'tl.kernel' op argument 'u' = 4294967294 breaks "
                           "'assume': it is not a multiple of 4");
  /* All three at once; only the first n values are read. */
  uint64_t all[4] = {1, 1, 1, 0};
  CHECK_EQ_INT(launch_errors(ctx, k, 4, all), 3);
  CHECK_EQ_INT(launch_errors(ctx, k, 1, all), 1);
  CHECK_EQ_INT(launch_errors(ctx, k, 0, all), 0);
  /* No `assume`: nothing to break. */
  CHECK_EQ_INT(launch_errors(ctx, free_k, 1, all), 0);
  tl_module_destroy(m);
}

/*===--- Global view extents ---------------------------------------------===*/

/* Evaluates text, a condition over the names of kernel k's parameters,
 * with every name a constant: args[i] (the classify callback's user). */
typedef struct Args {
  TlOp *kernel;
  const int64_t *values;
} Args;

static TlExprName arg_value(void *user, const char *name, size_t len,
                            int64_t *value) {
  Args *a = user;
  TlAttr *names = tl_op_attr(a->kernel, "arg_names");
  for (unsigned i = 0; i < tl_attr_array_size(names); i++) {
    const char *n = tl_attr_string_value(tl_attr_array_elem(names, i), NULL);
    if (strlen(n) == len && !memcmp(n, name, len)) {
      *value = a->values[i];
      return TL_EXPR_NAME_CONST;
    }
  }
  return TL_EXPR_NAME_UNKNOWN;
}

static void test_view_extents(TlContext *ctx) {
  const char *src =
      "tl.kernel @k(%x: !tl.ptr<f32>, %w: !tl.ptr<u4>, %y: !tl.ptr<f16>,\n"
      "             %z: !tl.ptr<f32>, %n: i32, %ld: i32, %ns: i32, %u: u32)\n"
      "    template(B = 64, Q = 0) grid(1) threads(32) {\n"
      "  %b = tl.block_indices : i32\n"
      "  %c0 = arith.constant 0 : i32\n"
      "  %c1 = arith.constant 1 : i32\n"
      "  %bs = tl.template B : i32\n"
      "  %q = tl.template Q : i32\n"
      "  %m = arith.ceildivi %n, %bs : i32\n"
      "  %gx = tl.view_global %x[%m, 64] : !tl.global<?x64xf32>\n"
      "  %t = tl.load_global %gx[%c0, %c0] masked : !tl.global<?x64xf32> "
      "-> !tl.reg<1x64xf32, #tl.layout<spatial(1, 32).local(1, 2)>>\n"
      "  %gw = tl.view_global %w[%n, 64] strides[%ld, 1] : "
      "!tl.global<?x64xu4, strided>\n"
      "  %tw = tl.load_global %gw[%c0, %c0] masked : "
      "!tl.global<?x64xu4, strided> "
      "-> !tl.reg<1x64xu4, #tl.layout<spatial(1, 32).local(1, 2)>>\n"
      "  %gy = tl.view_global %y[%b] : !tl.global<?xf16>\n"
      "  %sy = tl.load_scalar %gy[%c0] : !tl.global<?xf16> -> f16\n"
      "  %split = arith.cmpi gt, %ns, %c1 : i32\n"
      "  scf.if %split {\n"
      "    %gz = tl.view_global %z[%ns, 8] : !tl.global<?x8xf32>\n"
      "    %sz = tl.load_scalar %gz[%c0, %c0] : !tl.global<?x8xf32> -> f32\n"
      "    scf.yield\n"
      "  }\n"
      "  %never = arith.cmpi ne, %q, %c0 : i32\n"
      "  scf.if %never {\n"
      "    %gz2 = tl.view_global %z[1000000, 8] : !tl.global<?x8xf32>\n"
      "    %sz2 = tl.load_scalar %gz2[%c0, %c0] : !tl.global<?x8xf32> -> f32\n"
      "    scf.yield\n"
      "  }\n"
      "  %ux = arith.bitcast %u : u32 to i32\n"
      "  %gu = tl.view_global %z[%ux] : !tl.global<?xf32>\n"
      "  %gv = tl.view_global %z[%n] : !tl.global<?xf32>\n"
      "  %su = tl.load_scalar %gu[%c0] : !tl.global<?xf32> -> f32\n"
      "}\n";
  TlModule *m = parse(ctx, src);
  TlOp *k = m ? tl_block_first_op(tl_module_body(m)) : NULL;
  if (!k)
    return;
  TlViewExtents *x = tl_view_extents_create(k);
  CHECK_EQ_INT(tl_view_extents_count(x), 7);
  static const struct {
    unsigned param;
    const char *text, *bytes, *why;
  } want[] = {
      {0, "x[ceildiv(n, 64), 64]", "(ceildiv(n, 64) > 0) * "
                                   "(((ceildiv(n, 64) - 1) * 64 + 64) * 4)",
       NULL},
      /* u4: bits rounded up to bytes; a runtime stride must not be
       * negative. */
      {1, "w[n, 64]",
       "(n > 0 && ld >= 0) * ceildiv(((n - 1) * ld + 64) * 4, 8)",
       NULL},
      {2, "y[%b]", NULL, "a size or stride depends on the block's indices"},
      {3, "z[ns, 8]", "(ns > 1 && ns > 0) * (((ns - 1) * 8 + 8) * 4)", NULL},
      {3, "z[1000000, 8]", NULL,
       "the view is used only in branches this instance never takes"},
      {3, "z[u]", "(u > 0) * (u * 4)", NULL},
      {3, "z[n]", NULL, "the view is not used"},
  };
  for (unsigned i = 0; i < 7 && i < tl_view_extents_count(x); i++) {
    TlViewExtent e;
    tl_view_extents_get(x, i, &e);
    CHECK_EQ_INT(e.param, want[i].param);
    CHECK_EQ_STR(e.text, want[i].text);
    if (want[i].bytes) {
      CHECK(e.bytes && !strcmp(e.bytes, want[i].bytes));
      if (e.bytes && strcmp(e.bytes, want[i].bytes))
        fprintf(stderr, "view %u: %s\n", i, e.bytes);
    } else {
      CHECK(e.bytes == NULL);
      CHECK_EQ_STR(e.why, want[i].why);
    }
  }
  /* The bytes as evaluated agree with their text in the language of
   * requires clauses, on random arguments (n, ld, ns, u). */
  uint64_t r = 0x2545f4914f6cdd1dull;
  for (int trial = 0; trial < 2000; trial++) {
    int64_t args[8] = {0};
    for (int j = 4; j < 8; j++) {
      r ^= r << 13, r ^= r >> 7, r ^= r << 17;
      args[j] = (int64_t)(r % 4001) - 1000;
    }
    args[7] = args[7] < 0 ? -args[7] : args[7];
    Args a = {k, args};
    for (unsigned i = 0; i < tl_view_extents_count(x); i++) {
      TlViewExtent e;
      tl_view_extents_get(x, i, &e);
      int64_t got, ref;
      CHECK(tl_view_extents_eval(x, i, args, &got));
      if (!e.bytes) {
        CHECK_EQ_INT(got, 0);
        continue;
      }
      bool is_const = false;
      CHECK(tl_cond_check(e.bytes, strlen(e.bytes), arg_value, &a, NULL,
                          &is_const, &ref, NULL, NULL));
      CHECK(is_const);
      CHECK_EQ_INT(got, ref);
    }
  }
  /* An i32 argument is read as the kernel reads it: 2^32 + 5 is 5. */
  int64_t big[8] = {0, 0, 0, 0, ((int64_t)1 << 32) + 5, 0, 0, 0};
  int64_t bytes;
  CHECK(tl_view_extents_eval(x, 1, big, &bytes));
  CHECK_EQ_INT(bytes, 32); /* n = 5 with ld = 0: the first row only */
  big[5] = 16;
  CHECK(tl_view_extents_eval(x, 1, big, &bytes));
  CHECK_EQ_INT(bytes, (4 * 16 + 64) / 2);
  tl_view_extents_destroy(x);
  tl_module_destroy(m);
}

int main(void) {
  TlContext *ctx = tl_context_create();
  tl_register_all_dialects(ctx);
  test_shared_sizes(ctx);
  test_plan(ctx);
  test_soundness(ctx);
  test_view_alignment(ctx);
  test_launch_assumptions(ctx);
  test_view_extents(ctx);
  tl_context_destroy(ctx);
  return unit_report();
}
