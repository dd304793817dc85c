/* Unit tests of the paper's programs in the kernel library (kernels/):
 * each kernel is read from the source tree (the directory is argv[1]), run
 * in the block-level VM at several sizes, ragged ones included where the
 * kernel allows them, on fresh random inputs, and compared with plain C
 * loops over decoded values:
 *
 *   vector_add.tl     exact (one f32 addition per element, as in C)
 *   softmax.tl        |y - ref| <= (N + 8) 2^-24 ref   (derived below)
 *   matmul_f16_u4.tl  |c - ref| <= e + 2^-11 (|ref| + e) + 2^-25,
 *                     e = (K + 1) 2^-24 sum_k |a b|    (derived below),
 *                     and bit for bit against C's k-ordered f32 sum
 *   transform_i6.tl   its bytes equal the C packer's; matmul_f16_i6.tl fed
 *                     by either gives the same bits (and is within the
 *                     matmul bound of the reference)
 *
 * Every comparison is also run once against a perturbed reference and must
 * then fail, so that no check passes vacuously. vector_add and
 * matmul_f16_u4 also run as other instances (-D BLOCK, -D BM: their tile
 * types follow the template values). Template values a kernel cannot
 * handle must be refused when it is parsed.
 *
 * Random numbers come from xorshift64* with the fixed seed below (printed;
 * `--seed N` after the directory picks another), so a failure in CI
 * reproduces. */
#include "tl/dialects.h"
#include "tl/tl.h"
#include "tl/vm.h"
#include "unit.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/*===--- Harness ----------------------------------------------------------===*/

static const char *kernels_dir;

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
  const char *name;
} Run;

/* The text of kernels/NAME, or NULL (with a message) when unreadable. */
static char *read_kernel(const char *name, size_t *len) {
  TlStr path = {0};
  tl_str_printf(&path, "%s/%s", kernels_dir, name);
  FILE *f = fopen(tl_str_cstr(&path), "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", tl_str_cstr(&path));
    tl_str_free(&path);
    return NULL;
  }
  TlStr text = {0};
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    tl_str_printf(&text, "%.*s", (int)n, chunk);
  fclose(f);
  tl_str_free(&path);
  *len = text.len;
  return text.data;
}

/* Parses and verifies kernels/NAME with the template definitions given as
 * (name, value) pairs, ending with NULL. */
static bool setup(Run *r, const char *name, ...) {
  memset(r, 0, sizeof *r);
  r->name = name;
  r->ctx = tl_context_create();
  tl_register_all_dialects(r->ctx);
  tl_diag_set_handler(tl_context_diag(r->ctx), capture, &r->diags);
  va_list ap;
  va_start(ap, name);
  for (const char *def; (def = va_arg(ap, const char *));)
    tl_context_set_define(r->ctx, def, va_arg(ap, int64_t));
  va_end(ap);
  size_t len = 0;
  char *text = read_kernel(name, &len);
  if (text)
    r->m = tl_parse_module(r->ctx, name, text, len, 1);
  tl_free(text);
  if (!r->m || TL_FAILED(tl_verify(tl_module_op(r->m)))) {
    fprintf(stderr, "%s does not parse:\n%s", name,
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

/* Runs the module's only kernel; on failure prints the diagnostics. */
static bool run(Run *r, unsigned n, const TlVmArg *args) {
  if (!TL_FAILED(tl_vm_run_named(r->vm, r->m, NULL, n, args)))
    return true;
  fprintf(stderr, "%s failed in the VM:\n%s", r->name,
          tl_str_cstr(&r->diags.text));
  return false;
}

/* xorshift64*: the tests' own random numbers. */
static uint64_t seed = 0x7469c0de2025ull;
static uint64_t rng_state;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545f4914f6cdd1dull;
}
/* Uniform in [-1, 1). */
static double rnd_unit(void) { return (double)(rnd() >> 11) * 0x1p-52 - 1.0; }

static TlDType f16(void) { return tl_dtype_f16(); }

/* n f16 codes, uniform in [-scale, scale) rounded to f16. */
static uint16_t *rand_f16(size_t n, double scale) {
  uint16_t *b = tl_xmalloc(2 * n + 1);
  for (size_t i = 0; i < n; i++)
    b[i] = (uint16_t)tl_dtype_encode(f16(), scale * rnd_unit());
  return b;
}

static TlVmArg f16_arg(uint16_t *b, size_t n) {
  return tl_vm_arg_buffer(b, 2 * n, f16());
}
static TlVmArg f32_arg(float *b, size_t n) {
  return tl_vm_arg_buffer(b, 4 * n, tl_dtype_f32());
}
static TlVmArg u8_arg(uint8_t *b, size_t n) {
  return tl_vm_arg_buffer(b, n, tl_dtype_uint(8));
}

/*===--- Comparisons ------------------------------------------------------===*/

/* Each returns how many elements fail; the first few are printed when
 * `loud` (the perturbed runs are quiet: they are meant to fail). */

static int cmp_exact_f32(const char *what, const float *got, const float *ref,
                         size_t n, bool loud) {
  int bad = 0;
  for (size_t i = 0; i < n; i++)
    if (memcmp(&got[i], &ref[i], sizeof(float)) != 0 && bad++ < 3 && loud)
      fprintf(stderr, "%s [%zu]: got %a, want %a\n", what, i, (double)got[i],
              (double)ref[i]);
  return bad;
}

/* |got - ref| <= rel * ref (ref > 0). Sets *worst to the largest
 * |got - ref| / ref seen. */
static int cmp_rel(const char *what, const float *got, const double *ref,
                   size_t n, double rel, double *worst, bool loud) {
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    double err = fabs((double)got[i] - ref[i]);
    if (worst && err / ref[i] > *worst)
      *worst = err / ref[i];
    if (!(err <= rel * ref[i]) && bad++ < 3 && loud)
      fprintf(stderr, "%s [%zu]: got %.9g, want %.9g (error %.3g > %.3g)\n",
              what, i, (double)got[i], ref[i], err, rel * ref[i]);
  }
  return bad;
}

/* The matmul bound. The kernel sums K exact products p_k (f16 x f16: 22
 * significant bits, exact in f32) in f32, in some order, and rounds the
 * sum s to f16 once. Summing K terms with K - 1 roundings, each of
 * relative size at most u = 2^-24, changes the sum by at most
 * gamma_(K-1) sum_k |p_k| <= (K - 1) u / (1 - (K - 1) u) sum_k |p_k|, which
 * is below e = (K + 1) u sum_k |p_k| for K u < 1/2; the reference sum in
 * double is off by at most K 2^-53 sum |p_k|, inside the same e. The f16
 * rounding adds half an ulp: at most 2^-11 |s| for a normal result (|s| <=
 * |ref| + e) and 2^-25 (half the subnormal spacing 2^-24) otherwise. */
static double matmul_tol(double ref, double abs_sum, int k) {
  double e = (k + 1) * 0x1p-24 * abs_sum;
  return e + 0x1p-11 * (fabs(ref) + e) + 0x1p-25;
}

/* got: f16 codes; ref and abs_sum: the exact sums and sums of |products|.
 * Sets *worst to the largest |got - ref| / tol seen. */
static int cmp_matmul(const char *what, const uint16_t *got, const double *ref,
                      const double *abs_sum, size_t n, int k, double *worst,
                      bool loud) {
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    double v = tl_dtype_decode(f16(), got[i]);
    double tol = matmul_tol(ref[i], abs_sum[i], k);
    double err = fabs(v - ref[i]);
    if (worst && err / tol > *worst)
      *worst = err / tol;
    if (!(err <= tol) && bad++ < 3 && loud)
      fprintf(stderr, "%s [%zu]: got %.9g, want %.9g (error %.3g > %.3g)\n",
              what, i, v, ref[i], err, tol);
  }
  return bad;
}

static int cmp_bytes(const char *what, const uint8_t *got, const uint8_t *ref,
                     size_t n, bool loud) {
  int bad = 0;
  for (size_t i = 0; i < n; i++)
    if (got[i] != ref[i] && bad++ < 3 && loud)
      fprintf(stderr, "%s byte %zu: got %#x, want %#x\n", what, i, got[i],
              ref[i]);
  return bad;
}

/*===--- vector_add.tl ----------------------------------------------------===*/

/* z = x + y: the VM rounds the exact sum to f32 once, as C's float
 * addition does, so the comparison is exact. n covers one element, a
 * block less one, exactly one block, a block plus one, and ragged tails
 * of several blocks; BLOCK is the default 512 and other instances (the
 * tile type follows BLOCK). */
static void test_vector_add_case(int block) {
  Run r;
  if (!setup(&r, "vector_add.tl", "BLOCK", (int64_t)block, NULL)) {
    CHECK(false);
    return;
  }
  const int sizes[] = {1,    block - 1, block, block + 1,
                       1000, 3 * block, 4096 + 7};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    size_t n = (size_t)sizes[s];
    float *x = tl_xmalloc(4 * n), *y = tl_xmalloc(4 * n);
    float *z = tl_xcalloc(n, 4), *ref = tl_xmalloc(4 * n);
    for (size_t i = 0; i < n; i++) {
      x[i] = (float)rnd_unit();
      y[i] = (float)(rnd_unit() * 1e3);
      ref[i] = x[i] + y[i];
    }
    TlVmArg args[4] = {f32_arg(x, n), f32_arg(y, n), f32_arg(z, n),
                       tl_vm_arg_int((int64_t)n)};
    CHECK(run(&r, 4, args));
    CHECK_EQ_INT(tl_vm_stats(r.vm).blocks,
                 (n + (size_t)block - 1) / (size_t)block);
    CHECK_EQ_INT(tl_vm_stats(r.vm).threads, block / 4);
    CHECK_EQ_INT(cmp_exact_f32("vector_add", z, ref, n, true), 0);
    /* One ulp off in the last element (the ragged tail) must be seen. */
    ref[n - 1] = nextafterf(ref[n - 1], INFINITY);
    CHECK_EQ_INT(cmp_exact_f32("vector_add", z, ref, n, false), 1);
    printf("vector_add BLOCK=%d n=%zu: exact\n", block, n);
    tl_free(x);
    tl_free(y);
    tl_free(z);
    tl_free(ref);
  }
  teardown(&r);
}

static void test_vector_add(void) {
  test_vector_add_case(512);
  test_vector_add_case(1024);
  test_vector_add_case(64);
}

/*===--- softmax.tl -------------------------------------------------------===*/

/* y = exp(x - max) / sum exp(x - max) per row. The reference takes the
 * row maximum (exact) and d = x - max in f32 (the kernel's tl.sub, the
 * same rounding), then e = expf(d) and sum and quotient in double.
 *
 * Tolerance, relative to the reference, u = 2^-24: the kernel's exp is
 * the double exp rounded to f32 (u); its row sum adds N positive terms
 * (per 128-column chunk in index order, then the chunk totals) with N - 1
 * roundings, at most (N - 1) u relative (positive terms); the quotient
 * rounds once (u): (N + 2) u. The reference's expf is within an ulp (2u)
 * per term, so its sum and quotient are within 4u plus double rounding.
 * (N + 6) u to first order; (N + 8) u leaves room for the second-order
 * terms. x is uniform in [-4, 4), so d is in [-8, 0] and no exp underflows.
 */
static void test_softmax_case(int n_cols, int m) {
  Run r;
  if (!setup(&r, "softmax.tl", "N", (int64_t)n_cols, NULL)) {
    CHECK(false);
    return;
  }
  size_t n = (size_t)m * (size_t)n_cols;
  float *x = tl_xmalloc(4 * n), *y = tl_xcalloc(n, 4);
  double *ref = tl_xmalloc(8 * n);
  for (size_t i = 0; i < n; i++)
    x[i] = (float)(4 * rnd_unit());
  TlVmArg args[3] = {f32_arg(x, n), f32_arg(y, n), tl_vm_arg_int(m)};
  CHECK(run(&r, 3, args));
  CHECK_EQ_INT(tl_vm_stats(r.vm).blocks, (m + 3) / 4);
  for (int i = 0; i < m; i++) {
    const float *row = x + (size_t)i * (size_t)n_cols;
    float mx = row[0];
    for (int j = 1; j < n_cols; j++)
      mx = row[j] > mx ? row[j] : mx;
    double sum = 0;
    for (int j = 0; j < n_cols; j++) {
      float d = row[j] - mx;
      ref[(size_t)i * (size_t)n_cols + (size_t)j] = expf(d);
      sum += expf(d);
    }
    for (int j = 0; j < n_cols; j++)
      ref[(size_t)i * (size_t)n_cols + (size_t)j] /= sum;
  }
  double rel = (n_cols + 8) * 0x1p-24, worst = 0;
  CHECK_EQ_INT(cmp_rel("softmax", y, ref, n, rel, &worst, true), 0);
  /* Twice the tolerance off in one element of the last row must be seen. */
  ref[n - 2] *= 1 + 2 * rel;
  CHECK_EQ_INT(cmp_rel("softmax", y, ref, n, rel, NULL, false), 1);
  printf("softmax N=%d m=%d: max relative error %.3g (%.2f of the "
         "tolerance %.3g)\n",
         n_cols, m, worst, worst / rel, rel);
  tl_free(x);
  tl_free(y);
  tl_free(ref);
  teardown(&r);
}

static void test_softmax(void) {
  test_softmax_case(128, 1);
  test_softmax_case(128, 13);
  test_softmax_case(256, 8);
  test_softmax_case(256, 6);
  test_softmax_case(512, 3);
}

/*===--- Matmul references ------------------------------------------------===*/

/* ref[i][j] = sum_k a[i][k] w[k][j] in double (each product exact, the
 * sum within K 2^-53 sum |a w| of the exact one: inside the bound's e) and
 * abs_sum[i][j] = sum_k |a[i][k] w[k][j]|; w holds decoded values. */
static void matmul_ref(const uint16_t *a, const double *w, int m, int k, int n,
                       double *ref, double *abs_sum) {
  double *af = tl_xmalloc(sizeof(double) * (size_t)k);
  for (int i = 0; i < m; i++) {
    for (int kk = 0; kk < k; kk++)
      af[kk] = tl_dtype_decode(f16(), a[(size_t)i * (size_t)k + (size_t)kk]);
    double *ri = ref + (size_t)i * (size_t)n;
    double *si = abs_sum + (size_t)i * (size_t)n;
    for (int j = 0; j < n; j++)
      ri[j] = si[j] = 0;
    for (int kk = 0; kk < k; kk++)
      for (int j = 0; j < n; j++) {
        double p = af[kk] * w[(size_t)kk * (size_t)n + (size_t)j];
        ri[j] += p;
        si[j] += fabs(p);
      }
  }
  tl_free(af);
}

/* The f16 codes of C's f32 sum in k order (k = 0, 1, ...; each float
 * addition rounds once), the order tl.dot specifies (docs/vm.md). */
static void matmul_kordered(const uint16_t *a, const double *w, int m, int k,
                            int n, uint16_t *out) {
  float *acc = tl_xmalloc(sizeof(float) * (size_t)n);
  for (int i = 0; i < m; i++) {
    for (int j = 0; j < n; j++)
      acc[j] = 0;
    for (int kk = 0; kk < k; kk++) {
      float av =
          (float)tl_dtype_decode(f16(), a[(size_t)i * (size_t)k + (size_t)kk]);
      for (int j = 0; j < n; j++)
        acc[j] = acc[j] + av * (float)w[(size_t)kk * (size_t)n + (size_t)j];
    }
    for (int j = 0; j < n; j++)
      out[(size_t)i * (size_t)n + (size_t)j] =
          (uint16_t)tl_dtype_encode(f16(), acc[j]);
  }
  tl_free(acc);
}

/* Checks c (f16 codes, m x n) against the bound and, bit for bit, against
 * the k-ordered f32 sum; then that a reference perturbed by twice the
 * tolerance in one element, and a k-ordered result one f16 ulp off, fail. */
static void check_matmul(const char *what, const uint16_t *a, const double *w,
                         int m, int k, int n, const uint16_t *c) {
  size_t mn = (size_t)m * (size_t)n;
  double *ref = tl_xmalloc(8 * mn), *abs_sum = tl_xmalloc(8 * mn);
  uint16_t *ord = tl_xmalloc(2 * mn);
  matmul_ref(a, w, m, k, n, ref, abs_sum);
  matmul_kordered(a, w, m, k, n, ord);
  double worst = 0;
  CHECK_EQ_INT(cmp_matmul(what, c, ref, abs_sum, mn, k, &worst, true), 0);
  int diff = 0;
  for (size_t i = 0; i < mn; i++)
    if (c[i] != ord[i] && diff++ < 3)
      fprintf(stderr, "%s [%zu]: got %#x, k-ordered f32 gives %#x\n", what, i,
              c[i], ord[i]);
  CHECK_EQ_INT(diff, 0);
  size_t p = mn / 2;
  ref[p] += 2 * matmul_tol(ref[p], abs_sum[p], k);
  CHECK_EQ_INT(cmp_matmul(what, c, ref, abs_sum, mn, k, NULL, false), 1);
  ord[p] ^= 1;
  diff = 0;
  for (size_t i = 0; i < mn; i++)
    diff += c[i] != ord[i];
  CHECK_EQ_INT(diff, 1);
  printf("%s: within the bound (worst error %.3f of it), k-ordered f32 "
         "bit for bit\n",
         what, worst);
  tl_free(ref);
  tl_free(abs_sum);
  tl_free(ord);
}

/*===--- matmul_f16_u4.tl -------------------------------------------------===*/

/* The u4 packing (kernels/matmul_f16_u4.tl): tile (kb, nb) of 16 x 8 codes
 * in the mma B layout (thread t, local i: row 8 (i / 2) + 2 (t % 4) + i % 2,
 * column t / 4); thread t's four codes, little-endian in local order, are
 * 16 bits, which the u8 layout spatial(32).local(2) puts in bytes 2t and
 * 2t + 1 of the tile's 64. codes is [k, n], one code (0..15) per byte. */
static void pack_u4(const uint8_t *codes, int k, int n, uint8_t *out) {
  for (int kb = 0; kb < k / 16; kb++)
    for (int nb = 0; nb < n / 8; nb++) {
      uint8_t *tile = out + ((size_t)kb * (size_t)(n / 8) + (size_t)nb) * 64;
      for (int t = 0; t < 32; t++) {
        unsigned bits = 0;
        for (int i = 0; i < 4; i++) {
          int row = kb * 16 + 8 * (i / 2) + 2 * (t % 4) + i % 2;
          int col = nb * 8 + t / 4;
          bits |= (unsigned)(codes[(size_t)row * (size_t)n + (size_t)col] & 15)
                  << (4 * i);
        }
        tile[2 * t] = (uint8_t)bits;
        tile[2 * t + 1] = (uint8_t)(bits >> 8);
      }
    }
}

static void test_matmul_u4_case(int bm, int m, int k, int n, int g) {
  Run r;
  if (!setup(&r, "matmul_f16_u4.tl", "BM", (int64_t)bm, "K", (int64_t)k, "N",
             (int64_t)n, "G", (int64_t)g, NULL)) {
    CHECK(false);
    return;
  }
  size_t kn = (size_t)k * (size_t)n, mn = (size_t)m * (size_t)n;
  uint16_t *a = rand_f16((size_t)m * (size_t)k, 1.0);
  uint8_t *codes = tl_xmalloc(kn), *b = tl_xmalloc(kn / 2);
  for (size_t i = 0; i < kn; i++)
    codes[i] = (uint8_t)(rnd() % 16);
  pack_u4(codes, k, n, b);
  size_t ns = (size_t)(k / g) * (size_t)n;
  uint16_t *s = rand_f16(ns, 0.125);
  uint16_t *c = tl_xcalloc(mn, 2);
  TlVmArg args[5] = {f16_arg(a, (size_t)m * (size_t)k), u8_arg(b, kn / 2),
                     f16_arg(s, ns), f16_arg(c, mn), tl_vm_arg_int(m)};
  CHECK(run(&r, 5, args));
  CHECK_EQ_INT(tl_vm_stats(r.vm).blocks, ((m + bm - 1) / bm) * (n / 8));
  /* The dequantized weights as the kernel forms them: (code - 8) * scale
   * (exact in double) rounded once to f16. */
  double *w = tl_xmalloc(sizeof(double) * kn);
  for (int kk = 0; kk < k; kk++)
    for (int j = 0; j < n; j++) {
      size_t i = (size_t)kk * (size_t)n + (size_t)j;
      double sc = tl_dtype_decode(f16(), s[(size_t)(kk / g) * (size_t)n + j]);
      w[i] =
          tl_dtype_decode(f16(), tl_dtype_encode(f16(), (codes[i] - 8.0) * sc));
    }
  char what[96];
  snprintf(what, sizeof what, "matmul_f16_u4 BM=%d m=%d K=%d N=%d G=%d", bm, m,
           k, n, g);
  check_matmul(what, a, w, m, k, n, c);
  tl_free(a);
  tl_free(codes);
  tl_free(b);
  tl_free(s);
  tl_free(c);
  tl_free(w);
  teardown(&r);
}

static void test_matmul_u4(void) {
  test_matmul_u4_case(16, 16, 256, 64, 64);
  test_matmul_u4_case(16, 37, 256, 64, 64); /* ragged: 3 blocks of rows */
  test_matmul_u4_case(16, 5, 512, 32, 128);
  test_matmul_u4_case(16, 33, 128, 128, 16);
  test_matmul_u4_case(16, 1, 1024, 16, 128);
  test_matmul_u4_case(16, 24, 1024, 256, 128);
  /* Taller block tiles: two and four mma tiles of rows per warp. */
  test_matmul_u4_case(32, 37, 256, 64, 64); /* ragged: 2 blocks of rows */
  test_matmul_u4_case(32, 64, 128, 32, 16);
  test_matmul_u4_case(64, 70, 256, 16, 128);
}

/*===--- transform_i6.tl feeding matmul_f16_i6.tl -------------------------===*/

/* The i6 packing of Tilus Fig. 9 (scripts/matmul_i6.py): tile (kb, nb) of
 * 16 x 8 codes in the mma B layout; thread t's four 6-bit codes,
 * little-endian in local order, are 24 bits, which the u8 layout
 * local(3).spatial(32) puts in bytes t, 32 + t and 64 + t of the tile's
 * 96. w is [1024, 1024]. */
static void pack_i6(const int8_t *w, uint8_t *out) {
  for (int kb = 0; kb < 64; kb++)
    for (int nb = 0; nb < 128; nb++) {
      uint8_t *tile = out + ((size_t)kb * 128 + (size_t)nb) * 96;
      for (int t = 0; t < 32; t++) {
        uint32_t bits = 0;
        for (int i = 0; i < 4; i++) {
          int row = kb * 16 + 8 * (i / 2) + 2 * (t % 4) + i % 2;
          int col = nb * 8 + t / 4;
          bits |= (uint32_t)(w[(size_t)row * 1024 + (size_t)col] & 63)
                  << (6 * i);
        }
        for (int j = 0; j < 3; j++)
          tile[32 * j + t] = (uint8_t)(bits >> (8 * j));
      }
    }
}

/* Runs matmul_f16_i6.tl on a (m x 1024 f16) and packed weights b; c gets
 * the result. */
static bool run_i6_matmul(Run *mm, uint16_t *a, int m, uint8_t *b,
                          uint16_t *c) {
  const size_t packed = 64 * 128 * 96;
  TlVmArg args[4] = {f16_arg(a, (size_t)m * 1024), u8_arg(b, packed),
                     f16_arg(c, (size_t)m * 1024), tl_vm_arg_int(m)};
  return run(mm, 4, args);
}

static void test_transform_i6(void) {
  Run tr, mm;
  if (!setup(&tr, "transform_i6.tl", NULL)) {
    CHECK(false);
    return;
  }
  if (!setup(&mm, "matmul_f16_i6.tl", NULL)) {
    CHECK(false);
    teardown(&tr);
    return;
  }
  const size_t kn = 1024 * 1024, packed = 64 * 128 * 96;
  TlDType i6 = tl_dtype_int(6);
  int8_t *w = tl_xmalloc(kn);
  uint8_t *raw = tl_xcalloc(tl_dtype_storage_bytes(i6, kn), 1);
  for (size_t i = 0; i < kn; i++) {
    w[i] = (int8_t)((int)(rnd() % 64) - 32);
    tl_dtype_store(i6, raw, i, (uint64_t)(w[i] & 63));
  }
  uint8_t *out = tl_xcalloc(packed, 1), *want = tl_xmalloc(packed);
  TlVmArg args[2] = {tl_vm_arg_buffer(raw, tl_dtype_storage_bytes(i6, kn), i6),
                     u8_arg(out, packed)};
  CHECK(run(&tr, 2, args));
  CHECK_EQ_INT(tl_vm_stats(tr.vm).blocks, 64 * 128);
  pack_i6(w, want);
  CHECK_EQ_INT(cmp_bytes("transform_i6", out, want, packed, true), 0);
  want[packed / 3] ^= 0x10;
  CHECK_EQ_INT(cmp_bytes("transform_i6", out, want, packed, false), 1);
  want[packed / 3] ^= 0x10;
  printf("transform_i6: %zu bytes equal the C packer's\n", packed);

  /* The matmul fed by either buffer: the same bits, within the bound. */
  const int m = 16;
  uint16_t *a = rand_f16((size_t)m * 1024, 1.0);
  uint16_t *c1 = tl_xcalloc((size_t)m * 1024, 2);
  uint16_t *c2 = tl_xcalloc((size_t)m * 1024, 2);
  CHECK(run_i6_matmul(&mm, a, m, out, c1));
  CHECK(run_i6_matmul(&mm, a, m, want, c2));
  CHECK(memcmp(c1, c2, (size_t)m * 1024 * 2) == 0);
  double *wd = tl_xmalloc(sizeof(double) * kn);
  for (size_t i = 0; i < kn; i++)
    wd[i] = w[i];
  check_matmul("matmul_f16_i6 m=16 fed by transform_i6", a, wd, m, 1024, 1024,
               c1);
  /* A packed buffer one bit off changes the result: the comparison of
   * the two runs can fail. */
  want[0] ^= 1;
  CHECK(run_i6_matmul(&mm, a, m, want, c2));
  CHECK(memcmp(c1, c2, (size_t)m * 1024 * 2) != 0);
  printf("matmul_f16_i6 m=%d: the same bits fed by transform_i6 and by the C "
         "packer\n",
         m);
  tl_free(w);
  tl_free(raw);
  tl_free(out);
  tl_free(want);
  tl_free(a);
  tl_free(c1);
  tl_free(c2);
  tl_free(wd);
  teardown(&mm);
  teardown(&tr);
}

/*===--- Template parameters the kernels refuse ---------------------------===*/

/* The kernels state what their template values must satisfy in requires
 * clauses: a value they cannot handle fails the parse with a located
 * error naming the condition and the value, instead of a wrong result. */
static void expect_rejected(const char *name, const char *def, int64_t value,
                            const char *message) {
  TlContext *ctx = tl_context_create();
  tl_register_all_dialects(ctx);
  Diags diags = {0};
  tl_diag_set_handler(tl_context_diag(ctx), capture, &diags);
  tl_context_set_define(ctx, def, value);
  size_t len = 0;
  char *text = read_kernel(name, &len);
  TlModule *m = text ? tl_parse_module(ctx, name, text, len, 1) : NULL;
  CHECK(text && !m);
  CHECK(strstr(tl_str_cstr(&diags.text), message) != NULL);
  if (m)
    tl_module_destroy(m);
  tl_free(text);
  tl_context_destroy(ctx);
  tl_str_free(&diags.text);
}

static void test_rejected(void) {
  expect_rejected("softmax.tl", "N", 200,
                  "error: template constraint 'N > 0 && N % 128 == 0' does "
                  "not hold with N = 200");
  expect_rejected("matmul_f16_u4.tl", "G", 48,
                  "error: template constraint 'K % G == 0' does not hold "
                  "with K = 1024, G = 48");
  expect_rejected("matmul_f16_u4.tl", "G", 40,
                  "error: template constraint 'G > 0 && G % 16 == 0' does "
                  "not hold with G = 40");
  expect_rejected("matmul_f16_u4.tl", "K", 1000,
                  "error: template constraint 'K % G == 0' does not hold "
                  "with K = 1000, G = 128");
  expect_rejected("matmul_f16_u4.tl", "N", 12,
                  "error: template constraint 'N > 0 && N % 8 == 0' does "
                  "not hold with N = 12");
  expect_rejected("matmul_f16_u4.tl", "BM", 24,
                  "error: template constraint 'BM > 0 && BM % 16 == 0' does "
                  "not hold with BM = 24");
  expect_rejected("vector_add.tl", "BLOCK", 6,
                  "error: template constraint 'BLOCK > 0 && BLOCK % 4 == 0' "
                  "does not hold with BLOCK = 6");
  /* A value the constraints allow but the launch limits do not. */
  expect_rejected("vector_add.tl", "BLOCK", 8192,
                  "error: invalid threads expression: threads per block is "
                  "2048, outside 1..1024");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: unit_paper KERNELS_DIR [--seed N]\n");
    return 2;
  }
  kernels_dir = argv[1];
  if (argc == 4 && !strcmp(argv[2], "--seed"))
    seed = strtoull(argv[3], NULL, 0);
  rng_state = seed ? seed : 1;
  printf("seed %#llx\n", (unsigned long long)seed);
  test_vector_add();
  test_softmax();
  test_matmul_u4();
  test_transform_i6();
  test_rejected();
  return unit_report();
}
