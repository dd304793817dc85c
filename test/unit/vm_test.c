/* Unit tests of the VM (exec/vm): kernels built from text, run on fresh
 * seeded random inputs, compared with independent references written as
 * plain C loops over decoded values. Tolerances: every comparison here is
 * bit-exact (the VM's arithmetic is exact or correctly rounded in a stated
 * order, and each reference computes the same rounding in C). Every error
 * the VM detects has a case checking its exact diagnostic. */
#include "tl/dialects.h"
#include "tl/tl.h"
#include "tl/vm.h"
#include "unit.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/*===--- Harness ----------------------------------------------------------===*/

typedef struct Diags {
  TlStr text; /* "line:col: severity: message\n" per diagnostic */
} Diags;

static void capture(const TlDiag *d, void *user) {
  Diags *c = user;
  tl_str_printf(&c->text, "%u:%u: %s: %s\n", d->loc.line, d->loc.col,
                tl_diag_severity_name(d->severity), d->message);
}

typedef struct Run {
  TlContext *ctx;
  TlModule *m;
  TlVm *vm;
  Diags diags;
} Run;

/* Parses and verifies text; the run's diagnostics are captured. */
static bool setup(Run *r, const char *text) {
  memset(r, 0, sizeof *r);
  r->ctx = tl_context_create();
  tl_register_all_dialects(r->ctx);
  tl_diag_set_handler(tl_context_diag(r->ctx), capture, &r->diags);
  r->m = tl_parse_module(r->ctx, "k.tl", text, strlen(text), 1);
  if (!r->m || TL_FAILED(tl_verify(tl_module_op(r->m)))) {
    fprintf(stderr, "kernel does not parse:\n%s\n%s", text,
            tl_str_cstr(&r->diags.text));
    return false;
  }
  r->vm = tl_vm_create(r->ctx);
  return true;
}

static void teardown(Run *r) {
  tl_vm_destroy(r->vm);
  if (r->m)
    tl_module_destroy(r->m);
  tl_context_destroy(r->ctx);
  tl_str_free(&r->diags.text);
}

/* Runs the only kernel; returns whether it succeeded. */
static bool run(Run *r, unsigned n, const TlVmArg *args) {
  return !TL_FAILED(tl_vm_run_named(r->vm, r->m, NULL, n, args));
}

static char *fmt(const char *f, ...) TL_PRINTF(1, 2);
static char *fmt(const char *f, ...) {
  TlStr s = {0};
  va_list ap;
  va_start(ap, f);
  tl_str_vprintf(&s, f, ap);
  va_end(ap);
  return s.data;
}

/* xorshift64*: the tests' own random numbers. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545f4914f6cdd1dull;
}
/* Uniform in [-1, 1). */
static double rnd_unit(void) { return (double)(rnd() >> 11) * 0x1p-52 - 1.0; }

/* A buffer of n codes of t, filled randomly: floats from [-scale, scale),
 * integers over their range. */
static void *rand_buf(TlDType t, size_t n, double scale) {
  void *b = tl_xcalloc(tl_dtype_storage_bytes(t, n) + 1, 1);
  for (size_t i = 0; i < n; i++)
    tl_dtype_store(t, b, i,
                   tl_dtype_is_float(t) ? tl_dtype_encode(t, scale * rnd_unit())
                                        : rnd());
  return b;
}

static TlVmArg buf_arg(void *b, TlDType t, size_t n) {
  return tl_vm_arg_buffer(b, tl_dtype_storage_bytes(t, n), t);
}

/*===--- The Fig. 2 matmul ------------------------------------------------===*/

static const char *matmul_text =
    "#mma_a = #tl.layout<column_local(2, 2).spatial(8, 4).local(1, 2)>\n"
    "#mma_b = #tl.layout<local(2, 1).column_spatial(4, 8).local(2, 1)>\n"
    "#mma_c = #tl.layout<local(2, 1).spatial(8, 4).local(1, 2)>\n"
    "#bl = #tl.layout<local(3).spatial(32)>\n"
    "tl.kernel @matmul_f16_i6(%a: !tl.ptr<f16>, %b: !tl.ptr<u8>, %c: "
    "!tl.ptr<f16>, %m: i32)\n"
    "    template(BM = 16, BN = 8) grid(ceildiv(m, BM), 1024 / BN) "
    "threads(32) {\n"
    "  %bi, %bj = tl.block_indices : i32, i32\n"
    "  %ga = tl.view_global %a[%m, 1024] : !tl.global<?x1024xf16>\n"
    "  %gb = tl.view_global %b[64, 128, 96] : !tl.global<64x128x96xu8>\n"
    "  %gc = tl.view_global %c[%m, 1024] : !tl.global<?x1024xf16>\n"
    "  %zero = tl.alloc_register 0.0 : !tl.reg<16x8xf32, #mma_c>\n"
    "  %c0 = arith.constant 0 : i32\n"
    "  %c1 = arith.constant 1 : i32\n"
    "  %c64 = arith.constant 64 : i32\n"
    "  %c16 = arith.constant 16 : i32\n"
    "  %c8 = arith.constant 8 : i32\n"
    "  %row = arith.muli %bi, %c16 : i32\n"
    "  %acc = scf.for %k = %c0 to %c64 step %c1 : i32 iter_args(%s = %zero) "
    "-> (!tl.reg<16x8xf32, #mma_c>) {\n"
    "    %kk = arith.muli %k, %c16 : i32\n"
    "    %ta = tl.load_global %ga[%row, %kk] : !tl.global<?x1024xf16> -> "
    "!tl.reg<16x16xf16, #mma_a>\n"
    "    %tb = tl.load_global %gb[%k, %bj, %c0] : !tl.global<64x128x96xu8> "
    "-> !tl.reg<1x1x96xu8, #tl.layout<local(1, 1, 3).spatial(1, 1, 32)>>\n"
    "    %tb1 = tl.reshape %tb : !tl.reg<1x1x96xu8, #tl.layout<local(1, 1, "
    "3).spatial(1, 1, 32)>> -> !tl.reg<96xu8, #bl>\n"
    "    %b6 = tl.view %tb1 : !tl.reg<96xu8, #bl> -> !tl.reg<16x8xi6, "
    "#mma_b>\n"
    "    %bh = tl.cast %b6 : !tl.reg<16x8xi6, #mma_b> -> !tl.reg<16x8xf16, "
    "#mma_b>\n"
    "    %d = tl.dot %ta, %bh, %s : !tl.reg<16x16xf16, #mma_a>, "
    "!tl.reg<16x8xf16, #mma_b> -> !tl.reg<16x8xf32, #mma_c>\n"
    "    scf.yield %d : !tl.reg<16x8xf32, #mma_c>\n"
    "  }\n"
    "  %o = tl.cast %acc : !tl.reg<16x8xf32, #mma_c> -> !tl.reg<16x8xf16, "
    "#mma_c>\n"
    "  %col = arith.muli %bj, %c8 : i32\n"
    "  tl.store_global %o, %gc[%row, %col] : !tl.reg<16x8xf16, #mma_c>, "
    "!tl.global<?x1024xf16>\n"
    "}\n";

/* The weight packing of Tilus Fig. 9, written out: tile (kb, nb) of 16 x 8
 * int6 weights is held in the mma B layout (thread t, local i: row
 * 8*(i/2) + 2*(t%4) + i%2, column t/4); thread t's four codes, little-endian
 * in local order, form 24 bits, which the u8 layout local(3).spatial(32)
 * places in bytes t, 32 + t and 64 + t of the tile's 96 bytes. */
static void pack_i6(const int8_t *w, uint8_t *out) {
  for (int kb = 0; kb < 64; kb++)
    for (int nb = 0; nb < 128; nb++) {
      uint8_t *tile = out + ((size_t)kb * 128 + (size_t)nb) * 96;
      for (int t = 0; t < 32; t++) {
        uint32_t bits = 0;
        for (int i = 0; i < 4; i++) {
          int r = 8 * (i / 2) + 2 * (t % 4) + i % 2, c = t / 4;
          bits |= (uint32_t)(w[(size_t)(kb * 16 + r) * 1024 +
                               (size_t)(nb * 8 + c)] &
                             63)
                  << (6 * i);
        }
        for (int j = 0; j < 3; j++)
          tile[32 * j + t] = (uint8_t)(bits >> (8 * j));
      }
    }
}

static void test_matmul(void) {
  Run r;
  if (!setup(&r, matmul_text)) {
    CHECK(false);
    return;
  }
  const int M = 64, K = 1024, N = 1024;
  TlDType f16 = tl_dtype_f16();
  uint16_t *a = rand_buf(f16, (size_t)M * K, 1.0);
  int8_t *w = tl_xmalloc((size_t)K * N);
  for (size_t i = 0; i < (size_t)K * N; i++)
    w[i] = (int8_t)((int)(rnd() % 64) - 32);
  uint8_t *b = tl_xcalloc((size_t)K * N * 6 / 8, 1);
  pack_i6(w, b);
  uint16_t *c = tl_xcalloc((size_t)M * N, 2);
  TlVmArg args[4] = {
      buf_arg(a, f16, (size_t)M * K),
      tl_vm_arg_buffer(b, (size_t)K * N * 6 / 8, tl_dtype_uint(8)),
      buf_arg(c, f16, (size_t)M * N), tl_vm_arg_int(M)};
  CHECK(run(&r, 4, args));
  TlVmStats st = tl_vm_stats(r.vm);
  CHECK_EQ_INT(st.blocks, (M / 16) * (N / 8));
  CHECK_EQ_INT(st.threads, 32);
  /* Reference: f32 accumulation in k order; f16 x i6 products (17 bits)
   * are exact in float, each float addition rounds once. */
  float *af = tl_xmalloc(sizeof(float) * (size_t)M * K);
  float *acc = tl_xcalloc((size_t)N, sizeof(float));
  for (size_t i = 0; i < (size_t)M * K; i++)
    af[i] = (float)tl_dtype_decode(f16, a[i]);
  int bad = 0;
  for (int i = 0; i < M; i++) {
    memset(acc, 0, sizeof(float) * (size_t)N);
    for (int k = 0; k < K; k++)
      for (int j = 0; j < N; j++)
        acc[j] = acc[j] + af[i * K + k] * (float)w[(size_t)k * N + (size_t)j];
    for (int j = 0; j < N; j++) {
      uint16_t want = (uint16_t)tl_dtype_encode(f16, acc[j]);
      if (c[i * N + j] != want && bad++ < 3)
        fprintf(stderr, "matmul [%d, %d]: got %#x, want %#x\n", i, j,
                c[i * N + j], want);
    }
  }
  CHECK_EQ_INT(bad, 0);
  tl_free(af);
  tl_free(acc);
  tl_free(a);
  tl_free(w);
  tl_free(b);
  tl_free(c);
  teardown(&r);
}

/*===--- Views ------------------------------------------------------------===*/

/* u8 -> i6 -> u8 through registers: i6 elements land where the mma B
 * layout says, and the round trip gives the bytes back. */
static void test_view_i6(void) {
  const char *text =
      "#mma_b = #tl.layout<local(2, 1).column_spatial(4, 8).local(2, 1)>\n"
      "#bl = #tl.layout<local(3).spatial(32)>\n"
      "tl.kernel @v(%b: !tl.ptr<u8>, %w: !tl.ptr<i6>, %back: !tl.ptr<u8>) "
      "grid(1) threads(32) {\n"
      "  %c0 = arith.constant 0 : i32\n"
      "  %gb = tl.view_global %b[96] : !tl.global<96xu8>\n"
      "  %gw = tl.view_global %w[16, 8] : !tl.global<16x8xi6>\n"
      "  %gk = tl.view_global %back[96] : !tl.global<96xu8>\n"
      "  %t = tl.load_global %gb[%c0] : !tl.global<96xu8> -> !tl.reg<96xu8, "
      "#bl>\n"
      "  %v = tl.view %t : !tl.reg<96xu8, #bl> -> !tl.reg<16x8xi6, #mma_b>\n"
      "  tl.store_global %v, %gw[%c0, %c0] : !tl.reg<16x8xi6, #mma_b>, "
      "!tl.global<16x8xi6>\n"
      "  %w2 = tl.load_global %gw[%c0, %c0] : !tl.global<16x8xi6> -> "
      "!tl.reg<16x8xi6, #mma_b>\n"
      "  %u = tl.view %w2 : !tl.reg<16x8xi6, #mma_b> -> !tl.reg<96xu8, #bl>\n"
      "  tl.store_global %u, %gk[%c0] : !tl.reg<96xu8, #bl>, "
      "!tl.global<96xu8>\n"
      "}\n";
  Run r;
  if (!setup(&r, text)) {
    CHECK(false);
    return;
  }
  TlDType u8 = tl_dtype_uint(8), i6 = tl_dtype_int(6);
  uint8_t *b = rand_buf(u8, 96, 0);
  uint8_t *w = tl_xcalloc(tl_dtype_storage_bytes(i6, 128), 1);
  uint8_t *back = tl_xcalloc(96, 1);
  TlVmArg args[3] = {buf_arg(b, u8, 96), buf_arg(w, i6, 128),
                     buf_arg(back, u8, 96)};
  CHECK(run(&r, 3, args));
  int bad = 0;
  for (int t = 0; t < 32; t++) {
    uint32_t bits = b[t] | (uint32_t)b[32 + t] << 8 | (uint32_t)b[64 + t] << 16;
    for (int i = 0; i < 4; i++) {
      int row = 8 * (i / 2) + 2 * (t % 4) + i % 2, col = t / 4;
      bad += tl_dtype_load(i6, w, (size_t)(row * 8 + col)) !=
             ((bits >> (6 * i)) & 63);
    }
  }
  CHECK_EQ_INT(bad, 0);
  CHECK(memcmp(b, back, 96) == 0);
  tl_free(b);
  tl_free(w);
  tl_free(back);
  teardown(&r);
}

/* i4, u8 and i6 tiles whose threads hold whole rows of 48 bits: viewing
 * between them keeps each thread's bits, so the compact storage of all
 * three is the same bytes; i4 -> u8 -> i6 -> (cast to i8 and back) -> i4
 * round-trips. */
static void test_view_i4(void) {
  const char *text =
      "#r4 = #tl.layout<spatial(32, 1).local(1, 12)>\n"
      "#b8 = #tl.layout<spatial(32).local(6)>\n"
      "#s6 = #tl.layout<spatial(32, 1).local(1, 8)>\n"
      "tl.kernel @v(%x: !tl.ptr<i4>, %bytes: !tl.ptr<u8>, %y: !tl.ptr<i4>, "
      "%z: !tl.ptr<i6>) grid(1) threads(32) {\n"
      "  %c0 = arith.constant 0 : i32\n"
      "  %gx = tl.view_global %x[32, 12] : !tl.global<32x12xi4>\n"
      "  %gb = tl.view_global %bytes[192] : !tl.global<192xu8>\n"
      "  %gy = tl.view_global %y[32, 12] : !tl.global<32x12xi4>\n"
      "  %gz = tl.view_global %z[32, 8] : !tl.global<32x8xi6>\n"
      "  %t = tl.load_global %gx[%c0, %c0] : !tl.global<32x12xi4> -> "
      "!tl.reg<32x12xi4, #r4>\n"
      "  %u = tl.view %t : !tl.reg<32x12xi4, #r4> -> !tl.reg<192xu8, #b8>\n"
      "  tl.store_global %u, %gb[%c0] : !tl.reg<192xu8, #b8>, "
      "!tl.global<192xu8>\n"
      "  %s = tl.view %u : !tl.reg<192xu8, #b8> -> !tl.reg<32x8xi6, #s6>\n"
      "  %s8 = tl.cast %s : !tl.reg<32x8xi6, #s6> -> !tl.reg<32x8xi8, #s6>\n"
      "  %s6 = tl.cast %s8 : !tl.reg<32x8xi8, #s6> -> !tl.reg<32x8xi6, #s6>\n"
      "  tl.store_global %s6, %gz[%c0, %c0] : !tl.reg<32x8xi6, #s6>, "
      "!tl.global<32x8xi6>\n"
      "  %back = tl.view %s6 : !tl.reg<32x8xi6, #s6> -> !tl.reg<32x12xi4, "
      "#r4>\n"
      "  tl.store_global %back, %gy[%c0, %c0] : !tl.reg<32x12xi4, #r4>, "
      "!tl.global<32x12xi4>\n"
      "}\n";
  Run r;
  if (!setup(&r, text)) {
    CHECK(false);
    return;
  }
  TlDType i4 = tl_dtype_int(4), u8 = tl_dtype_uint(8), i6 = tl_dtype_int(6);
  uint8_t *x = rand_buf(i4, 384, 0);
  uint8_t *bytes = tl_xcalloc(192, 1), *y = tl_xcalloc(192, 1);
  uint8_t *z = tl_xcalloc(192, 1);
  TlVmArg args[4] = {buf_arg(x, i4, 384), buf_arg(bytes, u8, 192),
                     buf_arg(y, i4, 384), buf_arg(z, i6, 256)};
  CHECK(run(&r, 4, args));
  CHECK(memcmp(x, bytes, 192) == 0);
  CHECK(memcmp(x, z, 192) == 0);
  CHECK(memcmp(x, y, 192) == 0);
  tl_free(x);
  tl_free(bytes);
  tl_free(y);
  tl_free(z);
  teardown(&r);
}

/*===--- Elementwise ops
 * ---------------------------------------------------===*/

/* One elementwise op on 8x16 tiles of type T: z = op(x, y) or op(x). */
static char *ew_kernel(const char *op, const char *T, bool unary) {
  return fmt(
      "#l = #tl.layout<spatial(8, 4).local(1, 4)>\n"
      "tl.kernel @ew(%%x: !tl.ptr<%s>, %%y: !tl.ptr<%s>, %%z: !tl.ptr<%s>) "
      "grid(1) threads(32) {\n"
      "  %%c0 = arith.constant 0 : i32\n"
      "  %%gx = tl.view_global %%x[8, 16] : !tl.global<8x16x%s>\n"
      "  %%gy = tl.view_global %%y[8, 16] : !tl.global<8x16x%s>\n"
      "  %%gz = tl.view_global %%z[8, 16] : !tl.global<8x16x%s>\n"
      "  %%a = tl.load_global %%gx[%%c0, %%c0] : !tl.global<8x16x%s> -> "
      "!tl.reg<8x16x%s, #l>\n"
      "  %%b = tl.load_global %%gy[%%c0, %%c0] : !tl.global<8x16x%s> -> "
      "!tl.reg<8x16x%s, #l>\n"
      "  %%r = %s %%a%s : !tl.reg<8x16x%s, #l>\n"
      "  tl.store_global %%r, %%gz[%%c0, %%c0] : !tl.reg<8x16x%s, #l>, "
      "!tl.global<8x16x%s>\n"
      "}\n",
      T, T, T, T, T, T, T, T, T, T, op, unary ? "" : ", %b", T, T, T);
}

/* Runs op on random x, y of type t and returns z (caller frees x, y, z). */
static bool run_ew(const char *op, TlDType t, bool unary, void **x, void **y,
                   void **z, void (*fix)(TlDType, void *, void *)) {
  char *text = ew_kernel(op, tl_dtype_name(t), unary);
  Run r;
  bool ok = setup(&r, text);
  tl_free(text);
  *x = rand_buf(t, 128, 4.0);
  *y = rand_buf(t, 128, 4.0);
  *z = tl_xcalloc(tl_dtype_storage_bytes(t, 128) + 1, 1);
  if (fix)
    fix(t, *x, *y);
  if (ok) {
    TlVmArg args[3] = {buf_arg(*x, t, 128), buf_arg(*y, t, 128),
                       buf_arg(*z, t, 128)};
    ok = run(&r, 3, args);
    if (!ok)
      fprintf(stderr, "%s on %s failed:\n%s", op, tl_dtype_name(t),
              tl_str_cstr(&r.diags.text));
  }
  teardown(&r);
  return ok;
}

/* Float ops on f16, bf16 and f8e4m3: the reference computes in double and
 * rounds once with lib/dtype (for + - * / sqrt that is the correctly
 * rounded result; exp, exp2, log2 and rsqrt are the double libm value
 * rounded once, as the VM documents); f32 uses C float arithmetic. */
static void test_float_ops(void) {
  static const struct {
    const char *op;
    bool unary;
  } ops[] = {{"tl.add", 0},  {"tl.sub", 0},  {"tl.mul", 0},  {"tl.div", 0},
             {"tl.max", 0},  {"tl.min", 0},  {"tl.mod", 0},  {"tl.neg", 1},
             {"tl.abs", 1},  {"tl.exp", 1},  {"tl.exp2", 1}, {"tl.log2", 1},
             {"tl.sqrt", 1}, {"tl.rsqrt", 1}};
  TlDType types[] = {tl_dtype_f16(), tl_dtype_bf16(), tl_dtype_f32(),
                     tl_dtype_small_float(4, 3)};
  for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
    for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
      TlDType t = types[ti];
      void *x, *y, *z;
      bool ok = run_ew(ops[oi].op, t, ops[oi].unary, &x, &y, &z, NULL);
      CHECK(ok);
      int bad = 0;
      for (size_t i = 0; ok && i < 128; i++) {
        double a = tl_dtype_decode(t, tl_dtype_load(t, x, i));
        double b = tl_dtype_decode(t, tl_dtype_load(t, y, i));
        const char *o = ops[oi].op + 3;
        double v;
        if (!strcmp(o, "add"))
          v = a + b;
        else if (!strcmp(o, "sub"))
          v = a - b;
        else if (!strcmp(o, "mul"))
          v = a * b;
        else if (!strcmp(o, "div"))
          v = a / b;
        else if (!strcmp(o, "max"))
          v = a > b || (a == b && !signbit(a)) ? a : b;
        else if (!strcmp(o, "min"))
          v = a < b || (a == b && signbit(a)) ? a : b;
        else if (!strcmp(o, "mod"))
          v = fmod(a, b);
        else if (!strcmp(o, "neg"))
          v = -a;
        else if (!strcmp(o, "abs"))
          v = fabs(a);
        else if (!strcmp(o, "exp"))
          v = exp(a);
        else if (!strcmp(o, "exp2"))
          v = exp2(a);
        else if (!strcmp(o, "log2"))
          v = log2(a);
        else if (!strcmp(o, "sqrt"))
          v = sqrt(a);
        else
          v = 1.0 / sqrt(a);
        uint64_t want = tl_dtype_encode(t, v);
        if (t.bits == 32 && (!strcmp(o, "add") || !strcmp(o, "sub") ||
                             !strcmp(o, "mul") || !strcmp(o, "div"))) {
          float fa = (float)a, fb = (float)b, fv;
          fv = !strcmp(o, "add")   ? fa + fb
               : !strcmp(o, "sub") ? fa - fb
               : !strcmp(o, "mul") ? fa * fb
                                   : fa / fb;
          want = tl_dtype_encode(t, fv);
        }
        uint64_t got = tl_dtype_load(t, z, i);
        bool both_nan =
            tl_dtype_code_is_nan(t, got) && tl_dtype_code_is_nan(t, want);
        if (got != want && !both_nan && bad++ < 3)
          fprintf(stderr, "%s %s(%g, %g): got %#llx, want %#llx\n",
                  tl_dtype_name(t), o, a, b, (unsigned long long)got,
                  (unsigned long long)want);
      }
      CHECK_EQ_INT(bad, 0);
      tl_free(x);
      tl_free(y);
      tl_free(z);
    }
}

/* No zero divisors, no MIN / -1, shift amounts below the width. */
static void fix_int(TlDType t, void *x, void *y) {
  for (size_t i = 0; i < 128; i++) {
    uint64_t b = tl_dtype_load(t, y, i);
    if (tl_dtype_decode(t, b) == 0 || tl_dtype_decode(t, b) == -1)
      tl_dtype_store(t, y, i, 3);
  }
}

static void fix_shift(TlDType t, void *x, void *y) {
  for (size_t i = 0; i < 128; i++)
    tl_dtype_store(t, y, i, tl_dtype_load(t, y, i) % t.bits);
}

/* Integer ops wrap at the width; signedness from the type. */
static void test_int_ops(void) {
  static const char *const ops[] = {"tl.add", "tl.sub", "tl.mul", "tl.div",
                                    "tl.mod", "tl.max", "tl.min", "tl.and",
                                    "tl.or",  "tl.xor", "tl.shl", "tl.shr",
                                    "tl.neg", "tl.abs", "tl.not"};
  TlDType types[] = {tl_dtype_int(8),  tl_dtype_uint(8), tl_dtype_int(32),
                     tl_dtype_uint(4), tl_dtype_int(6),  tl_dtype_int(64)};
  for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
    for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
      TlDType t = types[ti];
      const char *o = ops[oi] + 3;
      bool unary = !strcmp(o, "neg") || !strcmp(o, "abs") || !strcmp(o, "not");
      bool shift = !strcmp(o, "shl") || !strcmp(o, "shr");
      void *x, *y, *z;
      bool ok =
          run_ew(ops[oi], t, unary, &x, &y, &z, shift ? fix_shift : fix_int);
      CHECK(ok);
      int bad = 0;
      bool sgn = tl_dtype_is_signed(t);
      uint64_t mask = t.bits == 64 ? ~0ull : (1ull << t.bits) - 1;
      for (size_t i = 0; ok && i < 128; i++) {
        uint64_t ua = tl_dtype_load(t, x, i), ub = tl_dtype_load(t, y, i);
        int64_t a = (int64_t)ua, b = (int64_t)ub;
        if (sgn && t.bits < 64) {
          a = (int64_t)(ua << (64 - t.bits)) >> (64 - t.bits);
          b = (int64_t)(ub << (64 - t.bits)) >> (64 - t.bits);
        }
        uint64_t v;
        if (!strcmp(o, "add"))
          v = ua + ub;
        else if (!strcmp(o, "sub"))
          v = ua - ub;
        else if (!strcmp(o, "mul"))
          v = ua * ub;
        else if (!strcmp(o, "div"))
          v = sgn ? (uint64_t)(a / b) : ua / ub;
        else if (!strcmp(o, "mod"))
          v = sgn ? (uint64_t)(a % b) : ua % ub;
        else if (!strcmp(o, "max"))
          v = (sgn ? a > b : ua > ub) ? ua : ub;
        else if (!strcmp(o, "min"))
          v = (sgn ? a < b : ua < ub) ? ua : ub;
        else if (!strcmp(o, "and"))
          v = ua & ub;
        else if (!strcmp(o, "or"))
          v = ua | ub;
        else if (!strcmp(o, "xor"))
          v = ua ^ ub;
        else if (!strcmp(o, "shl"))
          v = ua << ub;
        else if (!strcmp(o, "shr"))
          v = sgn ? (uint64_t)(a >> ub) : ua >> ub;
        else if (!strcmp(o, "neg"))
          v = 0 - ua;
        else if (!strcmp(o, "abs"))
          v = sgn && a < 0 ? 0 - ua : ua;
        else
          v = ~ua;
        v &= mask;
        uint64_t got = tl_dtype_load(t, z, i);
        if (got != v && bad++ < 3)
          fprintf(stderr, "%s %s(%lld, %lld): got %llu, want %llu\n",
                  tl_dtype_name(t), o, (long long)a, (long long)b,
                  (unsigned long long)got, (unsigned long long)v);
      }
      CHECK_EQ_INT(bad, 0);
      tl_free(x);
      tl_free(y);
      tl_free(z);
    }
}

/*===--- Casts ------------------------------------------------------------===*/

static bool run_cast(TlDType from, TlDType to, void *x, void *z, size_t n) {
  const char *S = tl_dtype_name(from), *D = tl_dtype_name(to);
  char *text =
      fmt("#l = #tl.layout<spatial(8, 4).local(1, 4)>\n"
          "tl.kernel @cast(%%x: !tl.ptr<%s>, %%z: !tl.ptr<%s>) grid(1) "
          "threads(32) {\n"
          "  %%c0 = arith.constant 0 : i32\n"
          "  %%gx = tl.view_global %%x[8, 16] : !tl.global<8x16x%s>\n"
          "  %%gz = tl.view_global %%z[8, 16] : !tl.global<8x16x%s>\n"
          "  %%a = tl.load_global %%gx[%%c0, %%c0] : !tl.global<8x16x%s> -> "
          "!tl.reg<8x16x%s, #l>\n"
          "  %%r = tl.cast %%a : !tl.reg<8x16x%s, #l> -> !tl.reg<8x16x%s, #l>\n"
          "  tl.store_global %%r, %%gz[%%c0, %%c0] : !tl.reg<8x16x%s, #l>, "
          "!tl.global<8x16x%s>\n"
          "}\n",
          S, D, S, D, S, S, S, D, D, D);
  Run r;
  bool ok = setup(&r, text);
  tl_free(text);
  if (ok) {
    TlVmArg args[2] = {buf_arg(x, from, n), buf_arg(z, to, n)};
    ok = run(&r, 2, args);
  }
  teardown(&r);
  return ok;
}

/* tl.cast: floats round to nearest even once and saturate or overflow by
 * the target's rules (lib/dtype encode); to integers toward zero,
 * saturating, NaN to 0; integers convert by value, saturating. */
static uint64_t cast_ref(TlDType from, TlDType to, uint64_t code) {
  double x = tl_dtype_decode(from, code);
  if (tl_dtype_is_float(to))
    return tl_dtype_encode(to, x);
  if (to.kind == TL_DTYPE_BOOL)
    return x != 0 || isnan(x);
  if (isnan(x))
    return 0;
  double t = trunc(x), lo = tl_dtype_min(to), hi = tl_dtype_max(to);
  t = t < lo ? lo : t > hi ? hi : t;
  return tl_dtype_encode(to, t);
}

static void test_casts(void) {
  TlDType f32 = tl_dtype_f32(), f16 = tl_dtype_f16();
  struct {
    TlDType from, to;
    double scale;
  } cases[] = {
      {f32, f16, 1e5},
      {f32, tl_dtype_bf16(), 1e3},
      {f32, tl_dtype_small_float(4, 3), 600},
      {f32, tl_dtype_small_float(5, 2), 1e5},
      {f32, tl_dtype_small_float(2, 1), 8},
      {f32, tl_dtype_small_float(3, 2), 40},
      {f32, tl_dtype_int(8), 300},
      {f32, tl_dtype_uint(4), 20},
      {f32, tl_dtype_int(32), 3e9},
      {f32, tl_dtype_bool(), 1},
      {f16, tl_dtype_int(6), 50},
      {f16, f32, 1e4},
      {tl_dtype_int(8), f16, 0},
      {tl_dtype_int(6), tl_dtype_bf16(), 0},
      {tl_dtype_uint(8), tl_dtype_small_float(4, 3), 0},
      {tl_dtype_int(32), f32, 0},
      {tl_dtype_int(32), tl_dtype_int(8), 0},
      {tl_dtype_uint(8), tl_dtype_int(4), 0},
      {tl_dtype_int(64), f32, 0},
  };
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    TlDType from = cases[ci].from, to = cases[ci].to;
    void *x = rand_buf(from, 128, cases[ci].scale);
    if (tl_dtype_is_float(from)) {
      /* Specials: NaN, +-inf, -0, ties. */
      uint64_t nan;
      if (tl_dtype_nan_code(from, &nan))
        tl_dtype_store(from, x, 0, nan);
      tl_dtype_store(from, x, 1, tl_dtype_encode(from, INFINITY));
      tl_dtype_store(from, x, 2, tl_dtype_encode(from, -INFINITY));
      tl_dtype_store(from, x, 3, tl_dtype_encode(from, -0.0));
      tl_dtype_store(from, x, 4, tl_dtype_encode(from, 2.5));
      tl_dtype_store(from, x, 5, tl_dtype_encode(from, -3.5));
    }
    void *z = tl_xcalloc(tl_dtype_storage_bytes(to, 128) + 1, 1);
    CHECK(run_cast(from, to, x, z, 128));
    int bad = 0;
    for (size_t i = 0; i < 128; i++) {
      uint64_t c = tl_dtype_load(from, x, i);
      uint64_t want = cast_ref(from, to, c), got = tl_dtype_load(to, z, i);
      if (got != want && bad++ < 3)
        fprintf(stderr, "cast %s -> %s of %g: got %#llx, want %#llx\n",
                tl_dtype_name(from), tl_dtype_name(to),
                tl_dtype_decode(from, c), (unsigned long long)got,
                (unsigned long long)want);
    }
    CHECK_EQ_INT(bad, 0);
    tl_free(x);
    tl_free(z);
  }
}

/*===--- dot and reduce ---------------------------------------------------===*/

static bool run_dot(TlDType ta, TlDType tb, TlDType tc, void *a, void *b,
                    void *c, void *d) {
  const char *A = tl_dtype_name(ta), *B = tl_dtype_name(tb),
             *C = tl_dtype_name(tc);
  char *text = fmt(
      "#la = #tl.layout<column_local(2, 4).spatial(8, 4).local(1, 2)>\n"
      "#lb = #tl.layout<local(4, 1).column_spatial(4, 8).local(2, 1)>\n"
      "#lc = #tl.layout<local(2, 1).spatial(8, 4).local(1, 2)>\n"
      "tl.kernel @dot(%%a: !tl.ptr<%s>, %%b: !tl.ptr<%s>, %%c: !tl.ptr<%s>, "
      "%%d: !tl.ptr<%s>) grid(1) threads(32) {\n"
      "  %%c0 = arith.constant 0 : i32\n"
      "  %%ga = tl.view_global %%a[16, 32] : !tl.global<16x32x%s>\n"
      "  %%gb = tl.view_global %%b[32, 8] : !tl.global<32x8x%s>\n"
      "  %%gc = tl.view_global %%c[16, 8] : !tl.global<16x8x%s>\n"
      "  %%gd = tl.view_global %%d[16, 8] : !tl.global<16x8x%s>\n"
      "  %%x = tl.load_global %%ga[%%c0, %%c0] : !tl.global<16x32x%s> -> "
      "!tl.reg<16x32x%s, #la>\n"
      "  %%y = tl.load_global %%gb[%%c0, %%c0] : !tl.global<32x8x%s> -> "
      "!tl.reg<32x8x%s, #lb>\n"
      "  %%z = tl.load_global %%gc[%%c0, %%c0] : !tl.global<16x8x%s> -> "
      "!tl.reg<16x8x%s, #lc>\n"
      "  %%r = tl.dot %%x, %%y, %%z : !tl.reg<16x32x%s, #la>, !tl.reg<32x8x%s, "
      "#lb> -> !tl.reg<16x8x%s, #lc>\n"
      "  tl.store_global %%r, %%gd[%%c0, %%c0] : !tl.reg<16x8x%s, #lc>, "
      "!tl.global<16x8x%s>\n"
      "}\n",
      A, B, C, C, A, B, C, C, A, A, B, B, C, C, A, B, C, C, C);
  Run r;
  bool ok = setup(&r, text);
  tl_free(text);
  if (ok) {
    TlVmArg args[4] = {buf_arg(a, ta, 512), buf_arg(b, tb, 256),
                       buf_arg(c, tc, 128), buf_arg(d, tc, 128)};
    ok = run(&r, 4, args);
    if (!ok)
      fprintf(stderr, "%s", tl_str_cstr(&r.diags.text));
  }
  teardown(&r);
  return ok;
}

/* tl.dot, floats: acc = c, then acc = round(acc + a*b) for k in order,
 * the product exact. Reference: C float (a float addition rounds once;
 * bf16 and f16 products are exact floats; f32 products go through fmaf,
 * one rounding of a*b + acc) or, for an f16 accumulator, double (exact for
 * these magnitudes) rounded by lib/dtype. Integers: exact, wrapped. */
static void test_dot(void) {
  TlDType f16 = tl_dtype_f16(), bf16 = tl_dtype_bf16(), f32 = tl_dtype_f32();
  TlDType i8 = tl_dtype_int(8), i32 = tl_dtype_int(32);
  struct {
    TlDType a, b, c;
  } cases[] = {{f16, f16, f32},
               {bf16, bf16, f32},
               {f32, f32, f32},
               {f16, f16, f16},
               {i8, i8, i32},
               {tl_dtype_uint(4), i8, tl_dtype_int(16)},
               {tl_dtype_small_float(4, 3), f16, f32}};
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    TlDType ta = cases[ci].a, tb = cases[ci].b, tc = cases[ci].c;
    void *a = rand_buf(ta, 512, 1.0), *b = rand_buf(tb, 256, 1.0);
    void *c = rand_buf(tc, 128, 4.0);
    void *d = tl_xcalloc(tl_dtype_storage_bytes(tc, 128) + 1, 1);
    CHECK(run_dot(ta, tb, tc, a, b, c, d));
    int bad = 0;
    for (int i = 0; i < 16; i++)
      for (int j = 0; j < 8; j++) {
        uint64_t want;
        if (!tl_dtype_is_float(tc)) {
          uint64_t acc = (uint64_t)(int64_t)tl_dtype_decode(
              tc, tl_dtype_load(tc, c, (size_t)(i * 8 + j)));
          for (int k = 0; k < 32; k++)
            acc += (uint64_t)(int64_t)tl_dtype_decode(
                       ta, tl_dtype_load(ta, a, (size_t)(i * 32 + k))) *
                   (uint64_t)(int64_t)tl_dtype_decode(
                       tb, tl_dtype_load(tb, b, (size_t)(k * 8 + j)));
          want = acc & ((1ull << tc.bits) - 1);
        } else if (tc.bits == 32) {
          float acc = (float)tl_dtype_decode(
              tc, tl_dtype_load(tc, c, (size_t)(i * 8 + j)));
          for (int k = 0; k < 32; k++) {
            float x = (float)tl_dtype_decode(
                ta, tl_dtype_load(ta, a, (size_t)(i * 32 + k)));
            float y = (float)tl_dtype_decode(
                tb, tl_dtype_load(tb, b, (size_t)(k * 8 + j)));
            acc = ta.bits == 32 ? fmaf(x, y, acc) : acc + x * y;
          }
          want = tl_dtype_encode(tc, acc);
        } else {
          double acc =
              tl_dtype_decode(tc, tl_dtype_load(tc, c, (size_t)(i * 8 + j)));
          for (int k = 0; k < 32; k++)
            acc = tl_dtype_decode(
                tc,
                tl_dtype_encode(
                    tc,
                    acc + tl_dtype_decode(
                              ta, tl_dtype_load(ta, a, (size_t)(i * 32 + k))) *
                              tl_dtype_decode(
                                  tb,
                                  tl_dtype_load(tb, b, (size_t)(k * 8 + j)))));
          want = tl_dtype_encode(tc, acc);
        }
        uint64_t got = tl_dtype_load(tc, d, (size_t)(i * 8 + j));
        if (got != want && bad++ < 3)
          fprintf(stderr, "dot %s x %s -> %s [%d, %d]: got %#llx, want %#llx\n",
                  tl_dtype_name(ta), tl_dtype_name(tb), tl_dtype_name(tc), i, j,
                  (unsigned long long)got, (unsigned long long)want);
      }
    CHECK_EQ_INT(bad, 0);
    tl_free(a);
    tl_free(b);
    tl_free(c);
    tl_free(d);
  }
}

/* tl.reduce over each dimension: sequential in index order, each step
 * rounded to the type (C float for f32). */
static void test_reduce(void) {
  static const char *const kinds[] = {"sum", "max", "min"};
  for (int ki = 0; ki < 3; ki++)
    for (int dim = 0; dim < 2; dim++)
      for (int ti = 0; ti < 2; ti++) {
        TlDType t = ti ? tl_dtype_int(32) : tl_dtype_f32();
        const char *T = tl_dtype_name(t);
        const char *rl = dim ? "spatial(4, 1)" : "local(1, 8).replicated(4)";
        char *text = fmt(
            "#l = #tl.layout<spatial(4, 1).local(1, 8)>\n"
            "#r = #tl.layout<%s>\n"
            "tl.kernel @red(%%x: !tl.ptr<%s>, %%z: !tl.ptr<%s>) grid(1) "
            "threads(4) {\n"
            "  %%c0 = arith.constant 0 : i32\n"
            "  %%gx = tl.view_global %%x[4, 8] : !tl.global<4x8x%s>\n"
            "  %%gz = tl.view_global %%z[%d, %d] : !tl.global<%dx%dx%s>\n"
            "  %%a = tl.load_global %%gx[%%c0, %%c0] : !tl.global<4x8x%s> -> "
            "!tl.reg<4x8x%s, #l>\n"
            "  %%r = tl.reduce %s %%a, %d : !tl.reg<4x8x%s, #l> -> "
            "!tl.reg<%dx%dx%s, #r>\n"
            "  tl.store_global %%r, %%gz[%%c0, %%c0] : !tl.reg<%dx%dx%s, #r>, "
            "!tl.global<%dx%dx%s>\n"
            "}\n",
            rl, T, T, T, dim ? 4 : 1, dim ? 1 : 8, dim ? 4 : 1, dim ? 1 : 8, T,
            T, T, kinds[ki], dim, T, dim ? 4 : 1, dim ? 1 : 8, T, dim ? 4 : 1,
            dim ? 1 : 8, T, dim ? 4 : 1, dim ? 1 : 8, T);
        Run r;
        bool ok = setup(&r, text);
        tl_free(text);
        void *x = rand_buf(t, 32, 100.0);
        void *z = tl_xcalloc(64, 1);
        if (ok) {
          TlVmArg args[2] = {buf_arg(x, t, 32), buf_arg(z, t, dim ? 4 : 8)};
          ok = run(&r, 2, args);
        }
        CHECK(ok);
        int bad = 0;
        for (int o = 0; ok && o < (dim ? 4 : 8); o++) {
          int n = dim ? 8 : 4;
          float facc = 0;
          int32_t iacc = 0;
          for (int k = 0; k < n; k++) {
            size_t e = dim ? (size_t)(o * 8 + k) : (size_t)(k * 8 + o);
            float fv = (float)tl_dtype_decode(t, tl_dtype_load(t, x, e));
            int32_t iv = (int32_t)tl_dtype_decode(t, tl_dtype_load(t, x, e));
            if (k == 0) {
              facc = fv;
              iacc = iv;
            } else if (ki == 0) {
              facc = facc + fv;
              iacc = (int32_t)((uint32_t)iacc + (uint32_t)iv);
            } else if (ki == 1) {
              facc = fv > facc ? fv : facc;
              iacc = iv > iacc ? iv : iacc;
            } else {
              facc = fv < facc ? fv : facc;
              iacc = iv < iacc ? iv : iacc;
            }
          }
          uint64_t want = ti ? (uint32_t)iacc : tl_dtype_encode(t, facc);
          bad += tl_dtype_load(t, z, (size_t)o) != want;
        }
        CHECK_EQ_INT(bad, 0);
        teardown(&r);
        tl_free(x);
        tl_free(z);
      }
}

/*===--- Shared memory and the checks
 * ---------------------------------------===*/

/* Lines 1-9 of every shared-memory case; the body starts at line 10. %c1
 * is 1 at run time (the verifier rejects constant offsets out of range). */
static const char *shared_head =
    "#row = #tl.layout<spatial(4, 1).local(1, 4)>\n"
    "#col = #tl.layout<local(4, 1).spatial(1, 4)>\n"
    "tl.kernel @k(%x: !tl.ptr<f32>, %y: !tl.ptr<f32>, %one: i32) grid(2) "
    "threads(4) {\n"
    "  %c0 = arith.constant 0 : i32\n"
    "  %c1 = arith.addi %one, %c0 : i32\n"
    "  %gx = tl.view_global %x[4, 4] : !tl.global<4x4xf32>\n"
    "  %gy = tl.view_global %y[4, 4] : !tl.global<4x4xf32>\n"
    "  %s = tl.alloc_shared : !tl.shared<4x4xf32>\n"
    "  %t = tl.load_global %gx[%c0, %c0] : !tl.global<4x4xf32> -> "
    "!tl.reg<4x4xf32, #row>\n";

#define STORE_ROW                                                              \
  "  tl.store_shared %t, %s[%c0, %c0] : !tl.reg<4x4xf32, #row>, "              \
  "!tl.shared<4x4xf32>\n"
#define STORE_COL                                                              \
  "  %tc = tl.load_global %gx[%c0, %c0] : !tl.global<4x4xf32> -> "             \
  "!tl.reg<4x4xf32, #col>\n"                                                   \
  "  tl.store_shared %tc, %s[%c0, %c0] : !tl.reg<4x4xf32, #col>, "             \
  "!tl.shared<4x4xf32>\n"
#define LOAD_COL                                                               \
  "  %u = tl.load_shared %s[%c0, %c0] : !tl.shared<4x4xf32> -> "               \
  "!tl.reg<4x4xf32, #col>\n"
#define LOAD_ROW                                                               \
  "  %u = tl.load_shared %s[%c0, %c0] : !tl.shared<4x4xf32> -> "               \
  "!tl.reg<4x4xf32, #row>\n"
#define COPY                                                                   \
  "  tl.copy_async %gx[%c0, %c0], %s : !tl.global<4x4xf32>, "                  \
  "!tl.shared<4x4xf32>\n"
#define FREE "  tl.free_shared %s : !tl.shared<4x4xf32>\n"
#define STORE_Y_COL                                                            \
  "  tl.store_global %u, %gy[%c0, %c0] : !tl.reg<4x4xf32, #col>, "             \
  "!tl.global<4x4xf32>\n"
#define STORE_Y_ROW                                                            \
  "  tl.store_global %u, %gy[%c0, %c0] : !tl.reg<4x4xf32, #row>, "             \
  "!tl.global<4x4xf32>\n"
#define BLOCK0 "3:1: note: in block (0, 0, 0) of the grid (2, 1, 1)\n"

/* Runs shared_head + body with x random (n_x elements bound) and y zero;
 * checks the diagnostics (empty: success, and then y == x). */
static void shared_case(const char *name, const char *body, size_t n_x,
                        const char *want) {
  char *text = fmt("%s%s}\n", shared_head, body);
  Run r;
  if (!setup(&r, text)) {
    CHECK(false);
    tl_free(text);
    return;
  }
  TlDType f32 = tl_dtype_f32();
  float *x = rand_buf(f32, 16, 1.0), *y = tl_xcalloc(16, sizeof(float));
  TlVmArg args[3] = {buf_arg(x, f32, n_x), buf_arg(y, f32, 16),
                     tl_vm_arg_int(1)};
  bool ok = run(&r, 3, args);
  CHECK(ok == (*want == 0));
  if (strcmp(tl_str_cstr(&r.diags.text), want) != 0) {
    fprintf(stderr, "case '%s': diagnostics differ:\n--- got\n%s--- want\n%s",
            name, tl_str_cstr(&r.diags.text), want);
    CHECK(false);
  }
  if (ok)
    CHECK(memcmp(x, y, sizeof(float) * 16) == 0);
  tl_free(x);
  tl_free(y);
  tl_free(text);
  teardown(&r);
}

static void test_shared(void) {
  /* Correct uses. */
  shared_case("store, sync, load",
              STORE_ROW "  tl.synchronize\n" LOAD_COL FREE STORE_Y_COL, 16, "");
  shared_case("same threads need no sync", STORE_ROW LOAD_ROW FREE STORE_Y_ROW,
              16, "");
  shared_case("copy, commit, wait, sync",
              COPY "  tl.copy_async_commit\n  tl.copy_async_wait 0\n  "
                   "tl.synchronize\n" LOAD_COL FREE STORE_Y_COL,
              16, "");
  /* (a) a read of a pending copy. */
  shared_case("pending copy", COPY LOAD_ROW FREE STORE_Y_ROW, 16,
              "11:8: error: 'tl.load_shared' op reads element [0, 0] of the "
              "shared tile while a tl.copy_async into it is pending (no "
              "tl.copy_async_wait has completed it)\n"
              "10:3: note: the copy starts here\n" BLOCK0);
  shared_case("wait 1 leaves the last group pending",
              COPY
              "  tl.copy_async_commit\n  tl.copy_async_wait 1\n" LOAD_ROW FREE
                  STORE_Y_ROW,
              16,
              "13:8: error: 'tl.load_shared' op reads element [0, 0] of the "
              "shared tile while a tl.copy_async into it is pending (no "
              "tl.copy_async_wait has completed it)\n"
              "10:3: note: the copy starts here\n" BLOCK0);
  shared_case("wait does not complete uncommitted copies",
              COPY "  tl.copy_async_wait 0\n" LOAD_ROW FREE STORE_Y_ROW, 16,
              "12:8: error: 'tl.load_shared' op reads element [0, 0] of the "
              "shared tile while a tl.copy_async into it is pending (no "
              "tl.copy_async_wait has completed it)\n"
              "10:3: note: the copy starts here\n" BLOCK0);
  /* (b) a read of never-written elements. */
  shared_case("uninitialised", LOAD_ROW FREE STORE_Y_ROW, 16,
              "10:8: error: 'tl.load_shared' op reads element [0, 0] of the "
              "shared tile, which was never written\n"
              "8:8: note: allocated here\n" BLOCK0);
  /* (c) races. */
  shared_case("read after write by another thread",
              STORE_ROW LOAD_COL FREE STORE_Y_COL, 16,
              "11:8: error: 'tl.load_shared' op data race on element [0, 1] "
              "of the shared tile: written by thread 0 and read by thread 1 "
              "with no tl.synchronize in between\n"
              "10:3: note: written here\n" BLOCK0);
  shared_case(
      "write after write",
      STORE_ROW STORE_COL "  tl.synchronize\n" LOAD_ROW FREE STORE_Y_ROW, 16,
      "12:3: error: 'tl.store_shared' op data race on element [0, 1] "
      "of the shared tile: written by thread 0 and then by thread 1 "
      "with no tl.synchronize in between\n"
      "10:3: note: first written here\n" BLOCK0);
  shared_case(
      "write after read",
      STORE_ROW "  tl.synchronize\n" LOAD_COL STORE_ROW FREE STORE_Y_COL, 16,
      "13:3: error: 'tl.store_shared' op data race on element [0, 1] "
      "of the shared tile: read by thread 1 and then written by "
      "thread 0 with no tl.synchronize in between\n" BLOCK0);
  shared_case("read after the wait without sync",
              COPY
              "  tl.copy_async_commit\n  tl.copy_async_wait 0\n" LOAD_ROW FREE
                  STORE_Y_ROW,
              16,
              "13:8: error: 'tl.load_shared' op data race on element [0, 0] "
              "of the shared tile: written by tl.copy_async and read by "
              "thread 0 with no tl.synchronize after the "
              "tl.copy_async_wait\n"
              "10:3: note: the copy starts here\n" BLOCK0);
  shared_case(
      "copy over unsynchronised reads",
      STORE_ROW
      "  tl.synchronize\n" LOAD_COL COPY
      "  tl.copy_async_commit\n  tl.copy_async_wait 0\n" FREE STORE_Y_COL,
      16,
      "13:3: error: 'tl.copy_async' op data race on element [0, 0] of "
      "the shared tile: read by thread 0 and then copied into with no "
      "tl.synchronize in between\n" BLOCK0);
  /* Lifetime. */
  shared_case("use after free", STORE_ROW FREE LOAD_ROW STORE_Y_ROW, 16,
              "12:8: error: 'tl.load_shared' op uses a shared tile after it "
              "was freed\n"
              "11:3: note: freed here\n" BLOCK0);
  shared_case("double free", STORE_ROW FREE FREE, 16,
              "12:3: error: 'tl.free_shared' op frees a shared tile that was "
              "already freed\n"
              "11:3: note: freed here\n" BLOCK0);
  shared_case("leak", STORE_ROW, 16,
              "8:8: error: 'tl.alloc_shared' op the shared tile is never "
              "freed (leaked at the end of the block)\n" BLOCK0);
  shared_case("free while a copy is pending", COPY FREE, 16,
              "11:3: error: 'tl.free_shared' op frees a shared tile while a "
              "tl.copy_async into it is pending\n"
              "10:3: note: the copy starts here\n" BLOCK0);
  shared_case(
      "copy pending at the end", COPY "  tl.copy_async_commit\n", 16,
      "10:3: error: 'tl.copy_async' op the copy is still pending when "
      "the block ends (no tl.copy_async_wait completes its group)\n" BLOCK0);
  /* Bounds. */
  shared_case("shared out of bounds",
              "  tl.store_shared %t, %s[%c1, %c0] : !tl.reg<4x4xf32, #row>, "
              "!tl.shared<4x4xf32>\n" FREE,
              16,
              "10:3: error: 'tl.store_shared' op writes element [4, 0] outside "
              "the shared tile of shape [4, 4]\n" BLOCK0);
  shared_case("global out of bounds",
              "  %u = tl.load_global %gx[%c1, %c0] : !tl.global<4x4xf32> -> "
              "!tl.reg<4x4xf32, #row>\n" FREE,
              16,
              "10:8: error: 'tl.load_global' op reads element [4, 0] outside "
              "the global view of sizes [4, 4] (thread 3)\n"
              "6:9: note: the view is defined here\n" BLOCK0);
  shared_case("store out of bounds",
              "  tl.store_global %t, %gy[%c0, %c1] : !tl.reg<4x4xf32, #row>, "
              "!tl.global<4x4xf32>\n" FREE,
              16,
              "10:3: error: 'tl.store_global' op writes element [0, 4] outside "
              "the global view of sizes [4, 4] (thread 0)\n"
              "7:9: note: the view is defined here\n" BLOCK0);
  shared_case("buffer too small", FREE, 8,
              "9:8: error: 'tl.load_global' op reads element [2, 0] of the "
              "view at offset 8, outside the buffer of 'x' (8 elements)\n"
              "6:9: note: the view is defined here\n" BLOCK0);
  shared_case("undefined register elements",
              "  %v = tl.alloc_register : !tl.reg<4x4xf32, #row>\n"
              "  %w = tl.add %v, %t : !tl.reg<4x4xf32, #row>\n"
              "  tl.store_global %w, %gy[%c0, %c0] : !tl.reg<4x4xf32, #row>, "
              "!tl.global<4x4xf32>\n" FREE,
              16,
              "12:3: error: 'tl.store_global' op stores undefined element "
              "[0, 0] of the register tile (thread 0)\n" BLOCK0);
}

/* Two stages: wait 1 completes the first group only. */
static void test_pipeline(void) {
  const char *text =
      "#row = #tl.layout<spatial(4, 1).local(1, 4)>\n"
      "tl.kernel @p(%x: !tl.ptr<f32>, %y: !tl.ptr<f32>) grid(3) threads(4) {\n"
      "  %c0 = arith.constant 0 : i32\n"
      "  %c4 = arith.constant 4 : i32\n"
      "  %bi = tl.block_indices : i32\n"
      "  %r0 = arith.muli %bi, %c4 : i32\n"
      "  %gx = tl.view_global %x[24, 4] : !tl.global<24x4xf32>\n"
      "  %gy = tl.view_global %y[24, 4] : !tl.global<24x4xf32>\n"
      "  %s0 = tl.alloc_shared : !tl.shared<4x4xf32>\n"
      "  %s1 = tl.alloc_shared : !tl.shared<4x4xf32, column_major>\n"
      "  %r1 = arith.addi %r0, %c4 : i32\n"
      "  %r1b = arith.addi %r1, %c4 : i32\n"
      "  %r1c = arith.addi %r1b, %c4 : i32\n"
      "  tl.copy_async %gx[%r0, %c0], %s0 : !tl.global<24x4xf32>, "
      "!tl.shared<4x4xf32>\n"
      "  tl.copy_async_commit\n"
      "  tl.copy_async %gx[%r1c, %c0], %s1 masked : !tl.global<24x4xf32>, "
      "!tl.shared<4x4xf32, column_major>\n"
      "  tl.copy_async_commit\n"
      "  tl.copy_async_wait 1\n"
      "  tl.synchronize\n"
      "  %a = tl.load_shared %s0[%c0, %c0] : !tl.shared<4x4xf32> -> "
      "!tl.reg<4x4xf32, #row>\n"
      "  tl.copy_async_wait 0\n"
      "  tl.synchronize\n"
      "  %b = tl.load_shared %s1[%c0, %c0] : !tl.shared<4x4xf32, column_major> "
      "-> !tl.reg<4x4xf32, #row>\n"
      "  %d = tl.sub %b, %a : !tl.reg<4x4xf32, #row>\n"
      "  tl.store_global %d, %gy[%r0, %c0] : !tl.reg<4x4xf32, #row>, "
      "!tl.global<24x4xf32>\n"
      "  tl.free_shared %s0 : !tl.shared<4x4xf32>\n"
      "  tl.free_shared %s1 : !tl.shared<4x4xf32, column_major>\n"
      "}\n";
  Run r;
  if (!setup(&r, text)) {
    CHECK(false);
    return;
  }
  TlDType f32 = tl_dtype_f32();
  float *x = rand_buf(f32, 96, 1.0), *y = tl_xcalloc(96, sizeof(float));
  TlVmArg args[2] = {buf_arg(x, f32, 96), buf_arg(y, f32, 96)};
  CHECK(run(&r, 2, args));
  fputs(tl_str_cstr(&r.diags.text), stderr);
  int bad = 0;
  for (int blk = 0; blk < 3; blk++)
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++) {
        int row = blk * 4 + i, far = row + 12;
        float b = far < 24 ? x[far * 4 + j] : 0.0f; /* masked: zero */
        bad += y[row * 4 + j] != b - x[row * 4 + j];
      }
  CHECK_EQ_INT(bad, 0);
  tl_free(x);
  tl_free(y);
  teardown(&r);
}

/*===--- Control flow, masks, print, arguments
 * -----------------------------===*/

static void test_control(void) {
  const char *text =
      "tl.kernel @cf(%o: !tl.ptr<i32>, %n: i32) template(T = 3) grid(4) "
      "threads(1) {\n"
      "  %bi = tl.block_indices : i32\n"
      "  %c0 = arith.constant 0 : i32\n"
      "  %c1 = arith.constant 1 : i32\n"
      "  %c2 = arith.constant 2 : i32\n"
      "  %go = tl.view_global %o[4] : !tl.global<4xi32>\n"
      "  %t = tl.template T : i32\n"
      "  %big = arith.cmpi ge, %bi, %c2 : i32\n"
      "  scf.if %big {\n"
      "    tl.exit\n"
      "    scf.yield\n"
      "  }\n"
      "  %r:2 = scf.while (%i = %c0, %s = %c0) : (i32, i32) -> (i32, i32) {\n"
      "    %lim = arith.addi %n, %bi : i32\n"
      "    %lt = arith.cmpi lt, %i, %lim : i32\n"
      "    scf.condition(%lt) %i, %s : i32, i32\n"
      "  } do {\n"
      "  ^bb0(%i2: i32, %s2: i32):\n"
      "    %p = arith.muli %i2, %t : i32\n"
      "    %s3 = arith.addi %s2, %p : i32\n"
      "    %i3 = arith.addi %i2, %c1 : i32\n"
      "    scf.yield %i3, %s3 : i32, i32\n"
      "  }\n"
      "  %f = scf.for %k = %c0 to %c2 step %c1 : i32 iter_args(%a = %r#1) -> "
      "(i32) {\n"
      "    %a2 = arith.addi %a, %a : i32\n"
      "    scf.yield %a2 : i32\n"
      "  }\n"
      "  tl.print %f : i32\n"
      "  %v = tl.broadcast %f : i32 -> !tl.reg<1xi32, #tl.layout<local(1)>>\n"
      "  tl.print %v : !tl.reg<1xi32, #tl.layout<local(1)>>\n"
      "  tl.store_global %v, %go[%bi] : !tl.reg<1xi32, #tl.layout<local(1)>>, "
      "!tl.global<4xi32>\n"
      "}\n";
  Run r;
  if (!setup(&r, text)) {
    CHECK(false);
    return;
  }
  int32_t o[4] = {-1, -1, -1, -1};
  FILE *out = tmpfile();
  tl_vm_set_print_stream(r.vm, out);
  TlVmArg args[2] = {tl_vm_arg_buffer(o, sizeof o, tl_dtype_int(32)),
                     tl_vm_arg_int(5)};
  CHECK(run(&r, 2, args));
  /* o[b] = 4 * T * (0 + 1 + ... + (n + b - 1)) for the blocks that do not
   * exit. */
  CHECK_EQ_INT(o[0], 4 * 3 * 10);
  CHECK_EQ_INT(o[1], 4 * 3 * 15);
  CHECK_EQ_INT(o[2], -1);
  CHECK_EQ_INT(o[3], -1);
  char buf[512] = {0};
  rewind(out);
  size_t n = fread(buf, 1, sizeof buf - 1, out);
  buf[n] = 0;
  fclose(out);
  CHECK_EQ_STR(buf, "block (0, 0, 0): k.tl:28:3: i32 = 120\n"
                    "block (0, 0, 0): k.tl:30:3: !tl.reg<1xi32, "
                    "#tl.layout<local(1)>> = [120]\n"
                    "block (1, 0, 0): k.tl:28:3: i32 = 180\n"
                    "block (1, 0, 0): k.tl:30:3: !tl.reg<1xi32, "
                    "#tl.layout<local(1)>> = [180]\n");
  TlVmStats st = tl_vm_stats(r.vm);
  CHECK_EQ_INT(st.blocks, 4);
  CHECK_EQ_INT(st.grid[0], 4);
  teardown(&r);
}

/* Masked loads read zero and masked stores skip outside the view. */
static void test_masked(void) {
  const char *text =
      "#l = #tl.layout<spatial(8, 4).local(1, 2)>\n"
      "tl.kernel @m(%x: !tl.ptr<u8>, %y: !tl.ptr<u8>, %r: i32, %c: i32) "
      "grid(1) threads(32) {\n"
      "  %c0 = arith.constant 0 : i32\n"
      "  %c3 = arith.constant 3 : i32\n"
      "  %gx = tl.view_global %x[%r, %c] : !tl.global<?x?xu8>\n"
      "  %gy = tl.view_global %y[%r, %c] : !tl.global<?x?xu8>\n"
      "  %t = tl.load_global %gx[%c3, %c0] masked : !tl.global<?x?xu8> -> "
      "!tl.reg<8x8xu8, #l>\n"
      "  tl.store_global %t, %gy[%c0, %c3] masked : !tl.reg<8x8xu8, #l>, "
      "!tl.global<?x?xu8>\n"
      "}\n";
  Run r;
  if (!setup(&r, text)) {
    CHECK(false);
    return;
  }
  TlDType u8 = tl_dtype_uint(8);
  const int R = 5, C = 7;
  uint8_t *x = rand_buf(u8, R * C, 0), *y = tl_xcalloc(R * C, 1);
  memset(y, 0xee, R * C);
  TlVmArg args[4] = {buf_arg(x, u8, R * C), buf_arg(y, u8, R * C),
                     tl_vm_arg_int(R), tl_vm_arg_int(C)};
  CHECK(run(&r, 4, args));
  int bad = 0;
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) {
      /* y[i][j] = t[i][j - 3] = x[i + 3][j - 3] (0 outside x) */
      int ti = i, tj = j - 3;
      uint8_t want = 0xee;
      if (tj >= 0 && tj < 8 && ti < 8)
        want = (ti + 3 < R && tj < C) ? x[(ti + 3) * C + tj] : 0;
      bad += y[i * C + j] != want;
    }
  CHECK_EQ_INT(bad, 0);
  tl_free(x);
  tl_free(y);
  teardown(&r);
}

/* tl.cmp, tl.where and tl.broadcast (of a scalar and of a size-1 row):
 * z = where(x < y, x, y) + broadcast(x[0, :]) + 0.5. f32, each op rounded
 * once: the C reference computes the same float operations. */
static void test_select(void) {
  const char *text =
      "#l = #tl.layout<spatial(8, 4).local(1, 4)>\n"
      "#r = #tl.layout<local(1, 4).spatial(1, 4).replicated(8)>\n"
      "tl.kernel @w(%x: !tl.ptr<f32>, %y: !tl.ptr<f32>, %z: !tl.ptr<f32>, "
      "%h: f32) grid(1) threads(32) {\n"
      "  %c0 = arith.constant 0 : i32\n"
      "  %gx = tl.view_global %x[8, 16] : !tl.global<8x16xf32>\n"
      "  %gy = tl.view_global %y[8, 16] : !tl.global<8x16xf32>\n"
      "  %gz = tl.view_global %z[8, 16] : !tl.global<8x16xf32>\n"
      "  %a = tl.load_global %gx[%c0, %c0] : !tl.global<8x16xf32> -> "
      "!tl.reg<8x16xf32, #l>\n"
      "  %b = tl.load_global %gy[%c0, %c0] : !tl.global<8x16xf32> -> "
      "!tl.reg<8x16xf32, #l>\n"
      "  %row = tl.load_global %gx[%c0, %c0] : !tl.global<8x16xf32> -> "
      "!tl.reg<1x16xf32, #r>\n"
      "  %c = tl.cmp lt, %a, %b : !tl.reg<8x16xf32, #l>\n"
      "  %m = tl.where %c, %a, %b : !tl.reg<8x16xf32, #l>\n"
      "  %rb = tl.broadcast %row : !tl.reg<1x16xf32, #r> -> "
      "!tl.reg<8x16xf32, #l>\n"
      "  %hb = tl.broadcast %h : f32 -> !tl.reg<8x16xf32, #l>\n"
      "  %s = tl.add %m, %rb : !tl.reg<8x16xf32, #l>\n"
      "  %t = tl.add %s, %hb : !tl.reg<8x16xf32, #l>\n"
      "  tl.store_global %t, %gz[%c0, %c0] : !tl.reg<8x16xf32, #l>, "
      "!tl.global<8x16xf32>\n"
      "}\n";
  Run r;
  if (!setup(&r, text)) {
    CHECK(false);
    return;
  }
  TlDType f32 = tl_dtype_f32();
  float *x = rand_buf(f32, 128, 1.0), *y = rand_buf(f32, 128, 1.0);
  float *z = tl_xcalloc(128, sizeof(float));
  TlVmArg args[4] = {buf_arg(x, f32, 128), buf_arg(y, f32, 128),
                     buf_arg(z, f32, 128), tl_vm_arg_float(0.5)};
  CHECK(run(&r, 4, args));
  fputs(tl_str_cstr(&r.diags.text), stderr);
  int bad = 0;
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 16; j++) {
      float m = x[i * 16 + j] < y[i * 16 + j] ? x[i * 16 + j] : y[i * 16 + j];
      float want = (m + x[j]) + 0.5f;
      bad += z[i * 16 + j] != want;
    }
  CHECK_EQ_INT(bad, 0);
  tl_free(x);
  tl_free(y);
  tl_free(z);
  teardown(&r);
}

/*===--- Scalars: the arith semantics
 * ----------------------------------------===*/

/* Each case: ops computing %r of type T, and the expected result as an
 * integer (floats: their bit pattern). */
typedef struct ScalarCase {
  const char *ops, *type;
  int64_t want;
} ScalarCase;

static void test_scalars(void) {
  static const ScalarCase cases[] = {
      {"%a = arith.constant -7 : i32\n%b = arith.constant 2 : i32\n"
       "%r = arith.divi %a, %b : i32\n",
       "i32", -3},
      {"%a = arith.constant -7 : i32\n%b = arith.constant 2 : i32\n"
       "%r = arith.remi %a, %b : i32\n",
       "i32", -1},
      {"%a = arith.constant -7 : i32\n%b = arith.constant 2 : i32\n"
       "%r = arith.ceildivi %a, %b : i32\n",
       "i32", -3},
      {"%a = arith.constant 7 : i32\n%b = arith.constant 2 : i32\n"
       "%r = arith.ceildivi %a, %b : i32\n",
       "i32", 4},
      {"%a = arith.constant 250 : u8\n%b = arith.constant 7 : u8\n"
       "%r = arith.divi %a, %b : u8\n",
       "u8", 35},
      {"%a = arith.constant -16 : i8\n%b = arith.constant 2 : i8\n"
       "%r = arith.shri %a, %b : i8\n",
       "i8", -4},
      {"%a = arith.constant 240 : u8\n%b = arith.constant 2 : u8\n"
       "%r = arith.shri %a, %b : u8\n",
       "u8", 60},
      {"%a = arith.constant 120 : i8\n%b = arith.constant 10 : i8\n"
       "%r = arith.addi %a, %b : i8\n",
       "i8", -126},
      {"%a = arith.constant 1000 : i12\n%b = arith.constant 700 : i12\n"
       "%r = arith.muli %a, %b : i12\n",
       "i12", -416},
      {"%a = arith.constant 200 : u8\n%b = arith.constant 100 : u8\n"
       "%r = arith.mini %a, %b : u8\n",
       "u8", 100},
      {"%a = arith.constant -56 : i8\n%b = arith.constant 100 : i8\n"
       "%r = arith.maxi %a, %b : i8\n",
       "i8", 100},
      /* 2^24 + 1 rounds to even; 2^60 + 2^36 + 1 is above the f32
       * midpoint although its nearest double is the midpoint. */
      {"%a = arith.constant 16777217 : i32\n%r = arith.itofp %a : i32 to f32\n",
       "f32", 0x4b800000},
      {"%a = arith.constant 1152921573326323713 : i64\n"
       "%r = arith.itofp %a : i64 to f32\n",
       "f32", 0x5d800001},
      {"%a = arith.constant 255 : u8\n%r = arith.itofp %a : u8 to f16\n", "f16",
       0x5bf8},
      {"%a = arith.constant 3.9e9 : f32\n%r = arith.fptoi %a : f32 to i32\n",
       "i32", 2147483647},
      {"%a = arith.constant -2.5 : f32\n%r = arith.fptoi %a : f32 to i32\n",
       "i32", -2},
      {"%a = arith.constant -2.5 : f32\n%r = arith.fptoi %a : f32 to u8\n",
       "u8", 0},
      {"%a = arith.constant 0x7FC00000 : f32\n%r = arith.fptoi %a : f32 to "
       "i8\n",
       "i8", 0},
      {"%a = arith.constant 0x7FC00000 : f32\n%b = arith.constant 1.0 : f32\n"
       "%r = arith.cmpf uno, %a, %b : f32\n",
       "i1", 1},
      {"%a = arith.constant 0x7FC00000 : f32\n%b = arith.constant 1.0 : f32\n"
       "%r = arith.cmpf one, %a, %b : f32\n",
       "i1", 0},
      {"%a = arith.constant -1 : i8\n%b = arith.constant 1 : i8\n"
       "%r = arith.cmpi lt, %a, %b : i8\n",
       "i1", 1},
      {"%a = arith.constant 255 : u8\n%b = arith.constant 1 : u8\n"
       "%r = arith.cmpi lt, %a, %b : u8\n",
       "i1", 0},
      {"%a = arith.constant 65520.0 : f32\n%r = arith.truncf %a : f32 to f16\n",
       "f16", 0x7c00},
      {"%a = arith.constant 1000.0 : f32\n%r = arith.truncf %a : f32 to "
       "f8e4m3\n",
       "f8e4m3", 0x7e},
      {"%a = arith.constant 1.0 : f32\n%b = arith.constant 3.0 : f32\n"
       "%r = arith.divf %a, %b : f32\n",
       "f32", 0x3eaaaaab},
      /* f16 0.1 + 0.2 = 1228.5 * 2^-12 exactly: a tie, to even. */
      {"%a = arith.constant 0.1 : f16\n%b = arith.constant 0.2 : f16\n"
       "%r = arith.addf %a, %b : f16\n",
       "f16", 0x34cc},
      {"%a = arith.constant -0.0 : f32\n%b = arith.constant 0.0 : f32\n"
       "%r = arith.minf %b, %a : f32\n",
       "f32", (int64_t)0x80000000},
      {"%a = arith.constant 1.0 : f32\n%r = arith.negf %a : f32\n", "f32",
       (int64_t)0xbf800000},
      {"%a = arith.constant 200 : u8\n%r = arith.exti %a : u8 to i32\n", "i32",
       200},
      {"%a = arith.constant -56 : i8\n%r = arith.exti %a : i8 to i32\n", "i32",
       -56},
      {"%a = arith.constant 1000 : i32\n%r = arith.trunci %a : i32 to u8\n",
       "u8", 232},
      {"%c = arith.constant true\n%a = arith.constant 5 : i32\n"
       "%b = arith.constant 6 : i32\n%r = arith.select %c, %a, %b : i32\n",
       "i32", 5},
      /* A u8 loop from 250 by 10 runs once: it does not wrap around. */
      {"%lb = arith.constant 250 : u8\n%ub = arith.constant 255 : u8\n"
       "%st = arith.constant 10 : u8\n%z = arith.constant 0 : i32\n"
       "%one = arith.constant 1 : i32\n"
       "%r = scf.for %i = %lb to %ub step %st : u8 iter_args(%n = %z) -> (i32) "
       "{\n"
       "  %n2 = arith.addi %n, %one : i32\n  scf.yield %n2 : i32\n}\n",
       "i32", 1},
  };
  size_t n = sizeof cases / sizeof cases[0];
  TlStr text = {0};
  tl_str_printf(&text,
                "tl.kernel @s(%%o: !tl.ptr<i64>) grid(1) threads(1) {\n"
                "  %%go = tl.view_global %%o[%zu] : !tl.global<%zuxi64>\n",
                n, n);
  for (size_t i = 0; i < n; i++) {
    const char *t = cases[i].type;
    tl_str_printf(&text, "  scf.if %%true {\n");
    /* The case's ops, renamed into their own scope by the region. */
    tl_str_puts(&text, cases[i].ops);
    const char *v = "%r";
    bool is_float = t[0] == 'f' || t[0] == 'b';
    if (is_float) {
      unsigned w = !strcmp(t, "f32") ? 32 : !strcmp(t, "f16") ? 16 : 8;
      tl_str_printf(&text, "%%ri = arith.bitcast %%r : %s to u%u\n", t, w);
      tl_str_printf(&text, "%%r64 = arith.exti %%ri : u%u to i64\n", w);
      v = "%r64";
    } else if (strcmp(t, "i64") != 0) {
      tl_str_printf(&text, "%%r64 = arith.exti %%r : %s to i64\n", t);
      v = "%r64";
    }
    tl_str_printf(&text,
                  "%%k = arith.constant %zu : i32\n"
                  "%%t = tl.broadcast %s : i64 -> !tl.reg<1xi64, "
                  "#tl.layout<local(1)>>\n"
                  "tl.store_global %%t, %%go[%%k] : !tl.reg<1xi64, "
                  "#tl.layout<local(1)>>, !tl.global<%zuxi64>\n"
                  "  scf.yield\n  }\n",
                  i, v, n);
  }
  tl_str_puts(&text, "}\n");
  /* %true is defined first. */
  char *full = fmt("%.*s  %%true = arith.constant true\n%s",
                   (int)(strchr(text.data, '\n') - text.data + 1), text.data,
                   strchr(text.data, '\n') + 1);
  Run r;
  if (!setup(&r, full)) {
    CHECK(false);
  } else {
    int64_t *o = tl_xcalloc(n, sizeof(int64_t));
    TlVmArg arg = tl_vm_arg_buffer(o, n * 8, tl_dtype_int(64));
    CHECK(run(&r, 1, &arg));
    for (size_t i = 0; i < n; i++)
      if (o[i] != cases[i].want) {
        fprintf(stderr, "scalar case %zu (%s): got %lld (%#llx), want %lld\n%s",
                i, cases[i].type, (long long)o[i], (unsigned long long)o[i],
                (long long)cases[i].want, cases[i].ops);
        CHECK(false);
      }
    tl_free(o);
  }
  teardown(&r);
  tl_free(full);
  tl_str_free(&text);
}

static void expect_run_error(const char *what, const char *text, unsigned n,
                             const TlVmArg *args, const char *want) {
  Run r;
  if (!setup(&r, text)) {
    CHECK(false);
    return;
  }
  CHECK(!run(&r, n, args));
  if (strcmp(tl_str_cstr(&r.diags.text), want) != 0) {
    fprintf(stderr, "%s: diagnostics differ:\n--- got\n%s--- want\n%s", what,
            tl_str_cstr(&r.diags.text), want);
    CHECK(false);
  }
  teardown(&r);
}

static void test_errors(void) {
  const char *div =
      "#l = #tl.layout<spatial(2, 1).local(1, 2)>\n"
      "tl.kernel @d(%x: !tl.ptr<i8>) grid(1) threads(2) {\n"
      "  %c0 = arith.constant 0 : i32\n"
      "  %gx = tl.view_global %x[2, 2] : !tl.global<2x2xi8>\n"
      "  %a = tl.load_global %gx[%c0, %c0] : !tl.global<2x2xi8> -> "
      "!tl.reg<2x2xi8, #l>\n"
      "  %q = tl.div %a, %a : !tl.reg<2x2xi8, #l>\n"
      "  tl.store_global %q, %gx[%c0, %c0] : !tl.reg<2x2xi8, #l>, "
      "!tl.global<2x2xi8>\n"
      "}\n";
  int8_t x[4] = {1, 2, 0, 4};
  TlVmArg a1 = tl_vm_arg_buffer(x, 4, tl_dtype_int(8));
  expect_run_error("division by zero", div, 1, &a1,
                   "6:8: error: 'tl.div' op integer division by zero\n"
                   "6:8: note: at element [1, 0] of the tile\n"
                   "2:1: note: in block (0, 0, 0) of the grid (1, 1, 1)\n");
  TlVmArg a2 = tl_vm_arg_buffer(x, 4, tl_dtype_uint(8));
  expect_run_error("buffer type", div, 1, &a2,
                   "2:1: error: 'tl.kernel' op parameter 'x' is !tl.ptr<i8>, "
                   "but the buffer holds u8\n");
  expect_run_error("argument count", div, 0, NULL,
                   "2:1: error: 'tl.kernel' op takes 1 arguments, but 0 are "
                   "given\n");
  const char *shift = "tl.kernel @s(%n: u8) grid(n) threads(1) {\n"
                      "  %c9 = arith.constant 9 : u8\n"
                      "  %v = arith.shli %n, %c9 : u8\n"
                      "}\n";
  TlVmArg a3 = tl_vm_arg_int(1);
  expect_run_error("shift", shift, 1, &a3,
                   "3:8: error: 'arith.shli' op shift amount 9 is not less "
                   "than the width 8\n"
                   "1:1: note: in block (0, 0, 0) of the grid (1, 1, 1)\n");
  TlVmArg a4 = tl_vm_arg_int(0);
  expect_run_error("empty grid", shift, 1, &a4,
                   "1:1: error: 'tl.kernel' op cannot compute the launch "
                   "size: grid dimension 0 is 0, outside 1..2147483647\n");
  TlVmArg a1n = tl_vm_arg_int(4);
  const char *wide =
      "tl.kernel @w(%n: i32) grid(1) threads(n) {\n"
      "  %t = tl.alloc_register 0 : !tl.reg<8xi32, #tl.layout<spatial(8)>>\n"
      "}\n";
  expect_run_error("layout wider than the block", wide, 1, &a1n,
                   "2:8: error: 'tl.alloc_register' op result #0 is spread "
                   "over 8 threads, but the block has 4 (a tile spans at "
                   "most the block's threads)\n");
  /* With `threads` known at launch only, the run checks what the verifier
   * checks for a constant: a tile over fewer threads than the block is
   * made in a warp branch, over whole warps. */
  TlVmArg a96 = tl_vm_arg_int(96);
  const char *narrow =
      "tl.kernel @w(%n: i32) grid(1) threads(n) {\n"
      "  %t = tl.alloc_register 0 : !tl.reg<64xi32, #tl.layout<spatial(64)>>\n"
      "}\n";
  expect_run_error("layout narrower than the block", narrow, 1, &a96,
                   "2:8: error: 'tl.alloc_register' op result #0 is spread "
                   "over 64 threads, but the block has 96 (a tile over fewer "
                   "threads, a multiple of 32, may be made only in a warp "
                   "branch)\n");
  const char *part = "tl.kernel @w(%n: i32) grid(1) threads(n) {\n"
                     "  %w = tl.warp_index : i32\n"
                     "  %c1 = arith.constant 1 : i32\n"
                     "  %b = arith.cmpi lt, %w, %c1 : i32\n"
                     "  scf.if %b {\n"
                     "    %t = tl.alloc_register 0 : !tl.reg<16xi32, "
                     "#tl.layout<spatial(16)>>\n"
                     "    scf.yield\n"
                     "  }\n"
                     "}\n";
  expect_run_error("layout over part of a warp", part, 1, &a96,
                   "6:10: error: 'tl.alloc_register' op result #0 is spread "
                   "over 16 threads, but the block has 96 (a tile over fewer "
                   "threads than the block spans whole warps: a multiple of "
                   "32)\n");
  /* In a warp branch, over whole warps: warps 0 and 1 hold the tile; warp
   * 2 may not use it. */
  const char *late =
      "tl.kernel @w(%n: i32, %y: !tl.ptr<i32>) grid(1) threads(n) {\n"
      "  %w = tl.warp_index : i32\n"
      "  %c0 = arith.constant 0 : i32\n"
      "  %c3 = arith.constant 3 : i32\n"
      "  %g = tl.view_global %y[64] : !tl.global<64xi32>\n"
      "  %b = arith.cmpi lt, %w, %c3 : i32\n"
      "  scf.if %b {\n"
      "    %t = tl.alloc_register 7 : !tl.reg<64xi32, "
      "#tl.layout<spatial(64)>>\n"
      "    tl.store_global %t, %g[%c0] : !tl.reg<64xi32, "
      "#tl.layout<spatial(64)>>, !tl.global<64xi32>\n"
      "    scf.yield\n"
      "  }\n"
      "}\n";
  int32_t ys[64] = {0};
  TlVmArg late_args[2] = {a96,
                          tl_vm_arg_buffer(ys, sizeof ys, tl_dtype_int(32))};
  expect_run_error("warp past a tile's threads", late, 2, late_args,
                   "8:10: error: 'tl.alloc_register' op warp 2 runs this op "
                   "on a register tile over 64 threads (warps 0 to 1 hold "
                   "its elements)\n"
                   "1:1: note: in block (0, 0, 0) of the grid (1, 1, 1)\n");
  for (int i = 0; i < 64; i++)
    CHECK(ys[i] == 7); /* warps 0 and 1 stored before warp 2 failed */
  /* Shared storage covers the layout's offsets: two elements 10^8 apart
   * are more than the VM allocates. */
  const char *sparse =
      "tl.kernel @p() grid(1) threads(1) {\n"
      "  %s = tl.alloc_shared : !tl.shared<2xf32, #tl.smem<shape=[2], "
      "modes=[2], strides=[100000000]>>\n"
      "}\n";
  expect_run_error("sparse shared layout", sparse, 0, NULL,
                   "2:8: error: 'tl.alloc_shared' op the shared tile's layout "
                   "spans 100000001 elements; the VM allocates at most "
                   "67108864\n"
                   "1:1: note: in block (0, 0, 0) of the grid (1, 1, 1)\n");
}

/*===--- Slices and views -------------------------------------------------===*/

/* A stage of a 4-stage swizzled shared buffer picked by a runtime index and
 * read back, for every stage, against the C reference y = x[i]; a register
 * slice of the same tile against y = x[1]. */
static const char *stages_text =
    "#l = #tl.layout<spatial(1, 8, 4).local(1, 1, 4)>\n"
    "#f = #tl.layout<local(4, 1, 1).spatial(1, 8, 4).local(1, 1, 4)>\n"
    "!b = !tl.shared<4x8x16xf32, swizzle<2, 1, 2>>\n"
    "!s = !tl.shared<1x8x16xf32, swizzle<2, 1, 2>>\n"
    "tl.kernel @stages(%x: !tl.ptr<f32>, %y: !tl.ptr<f32>, %z: "
    "!tl.ptr<f32>, %i: i32) grid(1) threads(32) {\n"
    "  %c0 = arith.constant 0 : i32\n"
    "  %gx = tl.view_global %x[4, 8, 16] : !tl.global<4x8x16xf32>\n"
    "  %gy = tl.view_global %y[1, 8, 16] : !tl.global<1x8x16xf32>\n"
    "  %gz = tl.view_global %z[1, 8, 16] : !tl.global<1x8x16xf32>\n"
    "  %b = tl.alloc_shared : !b\n"
    "  %all = tl.load_global %gx[%c0, %c0, %c0] : !tl.global<4x8x16xf32> -> "
    "!tl.reg<4x8x16xf32, #f>\n"
    "  tl.store_shared %all, %b[%c0, %c0, %c0] : !tl.reg<4x8x16xf32, #f>, "
    "!b\n"
    "  tl.synchronize\n"
    "  %v = tl.slice %b[%i, 0, 0] : !b -> !s\n"
    "  %t = tl.load_shared %v[%c0, %c0, %c0] : !s -> !tl.reg<1x8x16xf32, #l>\n"
    "  tl.store_global %t, %gy[%c0, %c0, %c0] : !tl.reg<1x8x16xf32, #l>, "
    "!tl.global<1x8x16xf32>\n"
    "  %r = tl.slice %all[1, 0, 0] : !tl.reg<4x8x16xf32, #f> -> "
    "!tl.reg<1x8x16xf32, #l>\n"
    "  tl.store_global %r, %gz[%c0, %c0, %c0] : !tl.reg<1x8x16xf32, #l>, "
    "!tl.global<1x8x16xf32>\n"
    "  tl.free_shared %b : !b\n"
    "}\n";

static void test_slices(void) {
  TlDType f32 = tl_dtype_f32();
  for (int i = 0; i < 4; i++) {
    Run r;
    if (!setup(&r, stages_text)) {
      CHECK(false);
      return;
    }
    float *x = rand_buf(f32, 512, 1.0), *y = tl_xcalloc(128, sizeof(float)),
          *z = tl_xcalloc(128, sizeof(float));
    TlVmArg args[4] = {buf_arg(x, f32, 512), buf_arg(y, f32, 128),
                       buf_arg(z, f32, 128), tl_vm_arg_int(i)};
    CHECK(run(&r, 4, args));
    for (int e = 0; e < 128; e++) {
      CHECK(y[e] == x[i * 128 + e]);
      CHECK(z[e] == x[128 + e]);
    }
    tl_free(x);
    tl_free(y);
    tl_free(z);
    teardown(&r);
  }
}

/* The verifier rejects tl.free_shared of a view; the VM still reports one
 * in IR that was never verified. */
static void test_free_view(void) {
  const char *text = "tl.kernel @f() grid(1) threads(1) {\n"
                     "  %b = tl.alloc_shared : !tl.shared<2x4xf32>\n"
                     "  %v = tl.slice %b[1, 0] : !tl.shared<2x4xf32> -> "
                     "!tl.shared<1x4xf32>\n"
                     "  tl.free_shared %v : !tl.shared<1x4xf32>\n"
                     "}\n";
  Run r;
  memset(&r, 0, sizeof r);
  r.ctx = tl_context_create();
  tl_register_all_dialects(r.ctx);
  tl_diag_set_handler(tl_context_diag(r.ctx), capture, &r.diags);
  r.m = tl_parse_module(r.ctx, "k.tl", text, strlen(text), 1);
  CHECK(r.m != NULL);
  CHECK(TL_FAILED(tl_verify(tl_module_op(r.m))));
  tl_str_free(&r.diags.text);
  r.diags.text = (TlStr){0};
  r.vm = tl_vm_create(r.ctx);
  CHECK(!run(&r, 0, NULL));
  CHECK_EQ_STR(tl_str_cstr(&r.diags.text),
               "4:3: error: 'tl.free_shared' op frees a view of a shared tile; "
               "only the value tl.alloc_shared made can be freed\n"
               "2:8: note: allocated here\n"
               "1:1: note: in block (0, 0, 0) of the grid (1, 1, 1)\n");
  teardown(&r);
}

int main(void) {
  test_matmul();
  test_view_i6();
  test_view_i4();
  test_float_ops();
  test_int_ops();
  test_casts();
  test_dot();
  test_reduce();
  test_shared();
  test_pipeline();
  test_control();
  test_masked();
  test_select();
  test_scalars();
  test_errors();
  test_slices();
  test_free_view();
  return unit_report();
}
