/* Unit tests of the small-float encoder (passes/small_float.c): for every
 * float type of at most 8 bits (the 28 fNeXmY, f8e4m3 and f8e5m2 among
 * them), the conversion from f32 is emitted into a simt kernel in which
 * each thread loads 4 f32 bit patterns from a global buffer, converts them
 * with one call (the constants shared) and stores 4 u32 codes. The kernel
 * is verified and run on the thread-level VM, and every code is compared
 * bit for bit (NaN codes included, and the upper bits must be zero) with
 * tl_dtype_encode(dst, (double)x), the rule of the block VM's tl.cast
 * (exec/vm/numeric.c e_fencode for types of at most 8 bits); a block-VM
 * tl.cast of the boundary inputs is checked against the same rule, so a
 * change of the VM's semantics fails here too.
 *
 * Inputs per type: every representable value, every midpoint between
 * neighbouring magnitudes (0 and the smallest subnormal, max and the
 * overflow threshold max + ulp/2, then 2^(emax+1)), each with its f32
 * neighbours one and two ulps away, a quarter of the smallest value, both
 * signs of all of these; +-0, +-inf, f32 extremes and subnormals, NaNs
 * with several payloads and both signs; then 8192 random bit patterns and
 * 8192 random values within a binade of the type's range. The instruction
 * count per value must be TL_SMALL_FLOAT_OPS_PER_VALUE. Refusals (wide or
 * non-float destinations, no values, sources that would round twice) have
 * their messages checked. Everything is exact: no tolerance.
 *
 * With --print the test prints a module with one conversion kernel per
 * kind of format (test/target/small-float*.test compile it to PTX). */
#include "small_float.h"
#include "tl/dialects.h"
#include "tl/dtype.h"
#include "tl/simt.h"
#include "tl/simt_vm.h"
#include "tl/tl.h"
#include "tl/vm.h"
#include "unit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define PER_THREAD 4

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

typedef struct Diags {
  TlStr text;
} Diags;

static void capture(const TlDiag *d, void *user) {
  Diags *c = user;
  tl_str_printf(&c->text, "%u:%u: %s: %s\n", d->loc.line, d->loc.col,
                tl_diag_severity_name(d->severity), d->message);
}

static float as_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* The block VM's rule for f32 -> a float of at most 8 bits. */
static uint32_t reference(TlDType t, uint32_t x) {
  return (uint32_t)tl_dtype_encode(t, (double)as_f32(x));
}

/*===--- Inputs -----------------------------------------------------------===*/

typedef struct Inputs {
  uint32_t *v;
  size_t n, cap;
} Inputs;

static void push(Inputs *in, uint32_t x) {
  if (in->n == in->cap) {
    in->cap = in->cap ? 2 * in->cap : 1024;
    in->v = realloc(in->v, in->cap * sizeof *in->v);
  }
  in->v[in->n++] = x;
}

/* p (a non-negative double exactly representable in f32, or beyond f32's
 * range), its f32 neighbours one and two ulps away, all with both signs. */
static void push_near(Inputs *in, double p) {
  float f = (float)p;
  float g[5] = {f, nextafterf(f, INFINITY), nextafterf(f, 0),
                nextafterf(nextafterf(f, INFINITY), INFINITY),
                nextafterf(nextafterf(f, 0), 0)};
  for (unsigned i = 0; i < 5; i++) {
    push(in, bits_of(g[i]));
    push(in, bits_of(g[i]) ^ 0x80000000u);
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The boundary inputs of t (see the file comment). */
static void boundary_inputs(TlDType t, Inputs *in) {
  unsigned ncodes = 1u << t.bits, nm = 0;
  double *mags = calloc(ncodes, sizeof *mags);
  for (unsigned c = 0; c < ncodes; c++) {
    double v = tl_dtype_decode(t, c);
    if (!isnan(v) && !isinf(v) && !signbit(v))
      mags[nm++] = v;
  }
  qsort(mags, nm, sizeof *mags, cmp_double);
  double max = tl_dtype_max(t);
  for (unsigned i = 0; i < nm; i++) {
    push_near(in, mags[i]);
    if (i + 1 < nm)
      push_near(in, (mags[i] + mags[i + 1]) / 2); /* exact in f32 */
  }
  tl_assert(mags[nm - 1] == max);
  /* the overflow threshold, the next power of two, far beyond */
  double ulp = max - mags[nm - 2];
  push_near(in, max + ulp / 2);
  push_near(in, ldexp(1.0, ilogb(max) + 1));
  push_near(in, 2 * max + 3 * ulp);
  push_near(in, mags[1] / 4);
  free(mags);
  static const uint32_t specials[] = {
      0x00000000, 0x80000000, 0x7f800000, 0xff800000, /* zeros, infs */
      0x7f7fffff, 0xff7fffff, 0x00000001, 0x80000001, /* f32 extremes */
      0x007fffff, 0x807fffff, 0x00800000, 0x80800000, /* subnormals */
      0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, /* NaNs */
      0x7fffffff, 0xffffffff, 0x7fa5a5a5, 0xff9e3779, 0x7fc00001};
  for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
    push(in, specials[i]);
}

/* Random bit patterns, and random values within a binade of t's range
 * (random sign and mantissa, exponent from below the smallest subnormal
 * to above max). */
static void random_inputs(TlDType t, Inputs *in, unsigned n) {
  int lo = 1 - tl_dtype_bias(t) - (int)t.man_bits - 2;
  int hi = ilogb(tl_dtype_max(t)) + 2;
  for (unsigned i = 0; i < n; i++)
    push(in, rnd() ^ (rnd() << 16));
  for (unsigned i = 0; i < n; i++) {
    uint32_t e = (uint32_t)(lo + (int)(rnd() % (unsigned)(hi - lo + 1)) + 127);
    push(in, (rnd() & 0x80000000u) | e << 23 | (rnd() & 0x7fffffu));
  }
}

/*===--- Building the kernel ----------------------------------------------===*/

typedef struct Kernel {
  TlContext *ctx;
  TlModule *m;
  TlBuilder b;
  TlLoc loc;
} Kernel;

static TlValue *op(Kernel *k, const char *name, unsigned n, TlValue *const *ops,
                   TlType *rt, const char *attr, TlAttr *val) {
  TlOpState st;
  tl_op_state_init(&st, k->ctx, tl_context_op_def(k->ctx, name), k->loc);
  tl_op_state_add_operands(&st, n, ops);
  if (rt)
    tl_op_state_add_result(&st, rt);
  if (attr)
    tl_op_state_set_attr(&st, attr, val);
  TlOp *o = tl_builder_insert(&k->b, &st);
  return rt ? tl_op_result(o, 0) : NULL;
}

static TlValue *i64c(Kernel *k, int64_t v) {
  return tl_arith_constant(
      &k->b, tl_attr_int(k->ctx, tl_type_int(k->ctx, 64, true), v), k->loc);
}

/* The address of word `word` of thread gt's PER_THREAD words. */
static TlValue *word_ptr(Kernel *k, TlValue *base, TlValue *gt, unsigned word) {
  TlType *i64 = tl_type_int(k->ctx, 64, true);
  TlValue *mul[2] = {gt, i64c(k, 4 * PER_THREAD)};
  TlValue *off = op(k, "arith.muli", 2, mul, i64, NULL, NULL);
  TlValue *add[2] = {off, i64c(k, 4 * (int64_t)word)};
  off = op(k, "arith.addi", 2, add, i64, NULL, NULL);
  TlValue *pa[2] = {base, off};
  return op(k, "simt.ptr_add", 2, pa, tl_value_type(base), NULL, NULL);
}

/* Whether an emitted op is an instruction (constants and bitcasts are
 * not). */
static bool costs(TlOp *o) {
  const char *n = tl_op_name(o);
  return strcmp(n, "arith.constant") && strcmp(n, "arith.bitcast");
}

static void kernel_init(Kernel *k, Diags *d) {
  memset(k, 0, sizeof *k);
  k->ctx = tl_context_create();
  tl_register_all_dialects(k->ctx);
  tl_diag_set_handler(tl_context_diag(k->ctx), capture, d);
  k->loc = tl_loc_unknown();
  k->m = tl_module_create(k->ctx, k->loc);
  tl_builder_init(&k->b, k->m);
}

static void kernel_fini(Kernel *k) {
  tl_module_destroy(k->m);
  tl_context_destroy(k->ctx);
}

/* Adds kernel `name`(in, out): thread gt = block_id * 32 + thread_id
 * converts in[4 gt .. 4 gt + 4) (f32) to t and stores the codes (u32) at
 * out[4 gt ..]. Stores the instruction count of the conversion in *cost. */
static bool add_kernel(Kernel *k, const char *name, TlDType t, unsigned *cost) {
  TlContext *ctx = k->ctx;
  TlType *gp = tl_simt_ptr_type(ctx, TL_SIMT_GLOBAL);
  TlType *i32 = tl_type_int(ctx, 32, true), *f32 = tl_type_f32(ctx);
  TlType *ins[2] = {gp, gp};
  TlOpState st;
  tl_op_state_init(&st, ctx, tl_context_op_def(ctx, "builtin.func"), k->loc);
  tl_op_state_set_attr(&st, "sym_name",
                       tl_attr_string(ctx, name, strlen(name)));
  tl_op_state_set_attr(
      &st, "function_type",
      tl_attr_type(ctx, tl_type_function(ctx, 2, ins, 0, NULL)));
  tl_op_state_set_attr(&st, "kernel", tl_attr_unit(ctx));
  st.nregions = 1;
  tl_builder_set_end(&k->b, tl_module_body(k->m));
  TlOp *fn = tl_builder_insert(&k->b, &st);
  TlBlock *body = tl_block_create(k->m);
  tl_region_append_block(tl_op_region(fn, 0), body);
  TlValue *pin = tl_block_add_arg(body, gp, k->loc);
  TlValue *pout = tl_block_add_arg(body, gp, k->loc);
  tl_builder_set_end(&k->b, body);
  TlAttr *x = tl_attr_string(ctx, "x", 1);
  TlValue *tid = op(k, "simt.thread_id", 0, NULL, i32, "dim", x);
  TlValue *bid = op(k, "simt.block_id", 0, NULL, i32, "dim", x);
  TlValue *c32 = tl_arith_constant(&k->b, tl_attr_int(ctx, i32, 32), k->loc);
  TlValue *m2[2] = {bid, c32};
  TlValue *gt = op(k, "arith.muli", 2, m2, i32, NULL, NULL);
  TlValue *a2[2] = {gt, tid};
  gt = op(k, "arith.addi", 2, a2, i32, NULL, NULL);
  gt = op(k, "arith.exti", 1, &gt, tl_type_int(ctx, 64, true), NULL, NULL);
  TlValue *in[PER_THREAD], *out[PER_THREAD];
  for (unsigned w = 0; w < PER_THREAD; w++) {
    TlValue *p = word_ptr(k, pin, gt, w);
    in[w] = op(k, "simt.load", 1, &p, f32, NULL, NULL);
  }
  TlOp *before = tl_block_last_op(body);
  TlErr err = {{0}};
  bool ok =
      tl_emit_to_small_float_n(&k->b, k->loc, t, PER_THREAD, in, out, &err);
  CHECK(ok);
  if (!ok) {
    fprintf(stderr, "%s: %s\n", tl_dtype_name(t), err.msg);
    return false;
  }
  *cost = 0;
  for (TlOp *o = tl_op_next(before); o; o = tl_op_next(o))
    *cost += costs(o);
  for (unsigned w = 0; w < PER_THREAD; w++) {
    TlValue *p = word_ptr(k, pout, gt, w);
    TlValue *sv[2] = {out[w], p};
    CHECK(tl_value_type(out[w]) == tl_type_int(ctx, 32, false));
    op(k, "simt.store", 2, sv, NULL, NULL, NULL);
  }
  op(k, "builtin.return", 0, NULL, NULL, NULL, NULL);
  return true;
}

/*===--- Running and checking ---------------------------------------------===*/

/* Converts in->v on the thread-level VM and compares every code with the
 * reference; returns the number of mismatches. */
static unsigned check_simt(TlDType t, const Inputs *in) {
  Diags diags = {{0}};
  Kernel k;
  kernel_init(&k, &diags);
  unsigned cost = 0, bad = 0;
  const char *name = tl_dtype_name(t);
  if (!add_kernel(&k, "to_small_float", t, &cost)) {
    kernel_fini(&k);
    tl_str_free(&diags.text);
    return 1;
  }
  CHECK_EQ_INT(cost, PER_THREAD * TL_SMALL_FLOAT_OPS_PER_VALUE);
  bool verified = !TL_FAILED(tl_verify(tl_module_op(k.m)));
  CHECK(verified);
  size_t threads = (in->n + 32 * PER_THREAD - 1) / (32 * PER_THREAD) * 32;
  size_t n = threads * PER_THREAD;
  uint32_t *x = calloc(n, sizeof *x), *codes = calloc(n, sizeof *codes);
  memcpy(x, in->v, in->n * sizeof *x);
  if (verified) {
    TlSimtVm *vm = tl_simt_vm_create(k.ctx);
    TlSimtLaunch l = {{(int64_t)threads / 32, 1, 1}, {32, 1, 1}, 0};
    TlVmArg args[2] = {tl_vm_arg_buffer(x, n * 4, tl_dtype_uint(8)),
                       tl_vm_arg_buffer(codes, n * 4, tl_dtype_uint(8))};
    TlOp *fn = tl_simt_vm_find_kernel(k.m, "to_small_float");
    bool ran = fn && !TL_FAILED(tl_simt_vm_run(vm, fn, &l, 2, args));
    CHECK(ran);
    tl_simt_vm_destroy(vm);
    for (size_t i = 0; ran && i < in->n; i++) {
      uint32_t want = reference(t, x[i]);
      if (codes[i] != want && bad++ < 4)
        fprintf(stderr, "%s: f32 0x%08x (%.9g): got 0x%x, expected 0x%x\n",
                name, x[i], (double)as_f32(x[i]), codes[i], want);
    }
  } else {
    bad++;
  }
  fputs(tl_str_cstr(&diags.text), stderr);
  free(x);
  free(codes);
  kernel_fini(&k);
  tl_str_free(&diags.text);
  return bad;
}

/* tl.cast f32 -> t on the block VM over in->v, 1024 values per run: the
 * VM must follow the reference too. Returns the number of mismatches. */
static unsigned check_block_vm(TlDType t, const Inputs *in) {
  const char *name = tl_dtype_name(t);
  TlStr text = {0};
  tl_str_printf(
      &text,
      "#l = #tl.layout<spatial(8, 4).local(4, 8)>\n"
      "tl.kernel @cast(%%x: !tl.ptr<f32>, %%z: !tl.ptr<%s>) grid(1) "
      "threads(32) {\n"
      "  %%c0 = arith.constant 0 : i32\n"
      "  %%gx = tl.view_global %%x[32, 32] : !tl.global<32x32xf32>\n"
      "  %%gz = tl.view_global %%z[32, 32] : !tl.global<32x32x%s>\n"
      "  %%a = tl.load_global %%gx[%%c0, %%c0] : !tl.global<32x32xf32> -> "
      "!tl.reg<32x32xf32, #l>\n"
      "  %%r = tl.cast %%a : !tl.reg<32x32xf32, #l> -> !tl.reg<32x32x%s, #l>\n"
      "  tl.store_global %%r, %%gz[%%c0, %%c0] : !tl.reg<32x32x%s, #l>, "
      "!tl.global<32x32x%s>\n"
      "}\n",
      name, name, name, name, name);
  Diags diags = {{0}};
  TlContext *ctx = tl_context_create();
  tl_register_all_dialects(ctx);
  tl_diag_set_handler(tl_context_diag(ctx), capture, &diags);
  TlModule *m =
      tl_parse_module(ctx, "cast.tl", tl_str_cstr(&text), text.len, 1);
  bool ok = m && !TL_FAILED(tl_verify(tl_module_op(m)));
  CHECK(ok);
  unsigned bad = ok ? 0 : 1;
  TlVm *vm = tl_vm_create(ctx);
  uint32_t x[1024];
  uint8_t z[1024 + 8];
  for (size_t base = 0; ok && base < in->n; base += 1024) {
    size_t cnt = in->n - base < 1024 ? in->n - base : 1024;
    memset(x, 0, sizeof x);
    memcpy(x, in->v + base, cnt * sizeof *x);
    memset(z, 0, sizeof z);
    TlVmArg args[2] = {tl_vm_arg_buffer(x, sizeof x, tl_dtype_f32()),
                       tl_vm_arg_buffer(z, tl_dtype_storage_bytes(t, 1024), t)};
    ok = !TL_FAILED(tl_vm_run_named(vm, m, NULL, 2, args));
    CHECK(ok);
    for (size_t i = 0; ok && i < cnt; i++) {
      uint32_t got = (uint32_t)tl_dtype_load(t, z, i),
               want = reference(t, x[i]);
      if (got != want && bad++ < 4)
        fprintf(stderr,
                "%s: block VM tl.cast of f32 0x%08x: 0x%x, expected "
                "0x%x\n",
                name, x[i], got, want);
    }
  }
  fputs(tl_str_cstr(&diags.text), stderr);
  tl_vm_destroy(vm);
  if (m)
    tl_module_destroy(m);
  tl_context_destroy(ctx);
  tl_str_free(&diags.text);
  tl_str_free(&text);
  return bad;
}

typedef struct Tally {
  unsigned types;
  size_t values;
} Tally;

static void check_type(TlDType t, void *user) {
  Tally *tally = user;
  if (!tl_dtype_is_float(t))
    return;
  Inputs in = {0};
  boundary_inputs(t, &in);
  CHECK_EQ_INT(check_block_vm(t, &in), 0);
  random_inputs(t, &in, 8192);
  CHECK_EQ_INT(check_simt(t, &in), 0);
  tally->types++;
  tally->values += in.n;
  free(in.v);
}

/*===--- Refusals ---------------------------------------------------------===*/

static void test_refusals(void) {
  Diags diags = {{0}};
  Kernel k;
  kernel_init(&k, &diags);
  tl_builder_set_end(&k.b, tl_module_body(k.m));
  TlValue *xs[1] = {NULL}, *out[1];
  TlErr err = {{0}};
  CHECK(!tl_emit_to_small_float(&k.b, k.loc, tl_dtype_f16(), xs[0], out, &err));
  CHECK_EQ_STR(err.msg, "f16 is not a float of at most 8 bits (casts to "
                        "small floats only)");
  CHECK(
      !tl_emit_to_small_float(&k.b, k.loc, tl_dtype_int(8), xs[0], out, &err));
  CHECK_EQ_STR(err.msg, "i8 is not a float of at most 8 bits (casts to "
                        "small floats only)");
  TlDType e4m3 = tl_dtype_small_float(4, 3);
  CHECK(!tl_emit_to_small_float_n(&k.b, k.loc, e4m3, 0, xs, out, &err));
  CHECK_EQ_STR(err.msg, "no values to cast");
  CHECK(tl_block_first_op(tl_module_body(k.m)) == NULL);
  kernel_fini(&k);
  tl_str_free(&diags.text);

  /* sources: exact in f32, or refused */
  TlDType ok_src[] = {tl_dtype_f32(),
                      tl_dtype_f16(),
                      tl_dtype_bf16(),
                      tl_dtype_int(16),
                      tl_dtype_uint(16),
                      tl_dtype_int(8),
                      tl_dtype_uint(1),
                      tl_dtype_bool(),
                      e4m3,
                      tl_dtype_small_float(5, 2)};
  for (size_t i = 0; i < sizeof ok_src / sizeof ok_src[0]; i++)
    CHECK(tl_small_float_cast_supported(ok_src[i], e4m3, NULL));
  CHECK(!tl_small_float_cast_supported(tl_dtype_int(32), e4m3, &err));
  CHECK_EQ_STR(err.msg, "casts from i32 to f8e4m3 would round twice through "
                        "f32 (sources of at most 16 bits and f32 only)");
  CHECK(!tl_small_float_cast_supported(tl_dtype_uint(32), e4m3, NULL));
  CHECK(!tl_small_float_cast_supported(tl_dtype_int(64), e4m3, NULL));
  CHECK(!tl_small_float_cast_supported(tl_dtype_f64(), e4m3, NULL));
  CHECK(!tl_small_float_cast_supported(tl_dtype_f32(), tl_dtype_bf16(), &err));
  CHECK_EQ_STR(err.msg, "bf16 is not a float of at most 8 bits (casts to "
                        "small floats only)");
}

/* One kernel per kind of format: OCP E4M3 (fn), E5M2 (ieee), FP4 and FP6
 * (finite), Y = 0 at both ends of the exponent range. */
static int print_kernels(void) {
  static const char *const names[] = {"f8e4m3", "f8e5m2", "f4e2m1",
                                      "f6e3m2", "f2e1m0", "f8e7m0"};
  Diags diags = {{0}};
  Kernel k;
  kernel_init(&k, &diags);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    TlDType t;
    unsigned cost;
    char kname[32];
    snprintf(kname, sizeof kname, "to_%s", names[i]);
    if (!tl_dtype_parse(names[i], strlen(names[i]), &t) ||
        !add_kernel(&k, kname, t, &cost))
      return 1;
  }
  int rc = 1;
  if (!TL_FAILED(tl_verify(tl_module_op(k.m)))) {
    TlStr s = {0};
    tl_module_print(k.m, NULL, &s);
    fputs(tl_str_cstr(&s), stdout);
    tl_str_free(&s);
    rc = 0;
  }
  fputs(tl_str_cstr(&diags.text), stderr);
  kernel_fini(&k);
  tl_str_free(&diags.text);
  return rc;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--print"))
    return print_kernels();
  test_refusals();
  Tally tally = {0};
  tl_dtype_foreach_small(check_type, &tally);
  CHECK_EQ_INT(tally.types, 28);
  printf("%u types, %zu values\n", tally.types, tally.values);
  return unit_report();
}
