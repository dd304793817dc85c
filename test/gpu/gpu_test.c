/* GPU tests of the back end: kernels written in the simt dialect are
 * compiled by exec/target for the device's SM, run through exec/runtime, and
 * their results compared with independent host references:
 *   - every mma.sync form, with operand fragments built on the host from
 *     the layout library's PTX atoms (so the atoms are checked against the
 *     hardware too), against a plain matmul;
 *   - ldmatrix x1/x2/x4 (.trans), against the ldmatrix atoms;
 *   - cp.async with zero fill, shared memory and barriers;
 *   - shfl, prmt, lop3 and f16x2/bf16x2 fma, bit for bit against the dtype
 *     library's register-op emulator;
 *   - a 16-byte copy with a cache hint;
 *   - atom (add.f32, add.noftz.f16x2, max, min, exch), atom.cas, fence and
 *     ld.acquire, against C arithmetic.
 *   - with --wgmma DIR only: the simt.wgmma cases that
 *     test/vm/simt/Inputs/wgmma_ref.py writes (gen-all DIR), against NumPy.
 * Usage: gpu_test [SOURCE_ROOT [--wgmma DIR]] (default: the current
 * directory).
 * Exit status 0 when every check passes, 1 otherwise; 77 (skipped) when
 * there is no CUDA driver or device. Inputs are seeded: rerun with
 * TL_GPU_SEED=n for other data. */
#include "tl/dialects.h"
#include "tl/dtype.h"
#include "tl/layout.h"
#include "tl/runtime.h"
#include "tl/pass.h"
#include "tl/target.h"
#include "tl/vm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, checks;
static TlContext *ctx;
static TlRuntime *rt;
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 16);
}

#define CHECK(c, ...)                                                          \
  do {                                                                         \
    checks++;                                                                  \
    if (!(c)) {                                                                \
      failures++;                                                              \
      if (failures < 20) {                                                     \
        fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                   \
        fprintf(stderr, __VA_ARGS__);                                          \
        fputc('\n', stderr);                                                   \
      }                                                                        \
    }                                                                          \
  } while (0)

/* Compiles kernel text and returns the kernel handle. */
static void *compile(const char *text, const char *name) {
  TlModule *m = tl_parse_module(ctx, name, text, strlen(text), 1);
  if (!m || TL_FAILED(tl_verify(tl_module_op(m)))) {
    tl_module_destroy(m);
    return NULL;
  }
  const TlArch *arch = tl_arch_for_device(tl_runtime_sm(rt));
  TlTargetOptions o = {arch ? arch->name : NULL, 0, 3};
  TlTarget *t = tl_target_create(ctx, &o);
  TlStr ptx = {0};
  void *k = NULL;
  if (t && !TL_FAILED(tl_target_compile(t, m, &ptx, NULL, NULL)))
    k = tl_runtime_kernel(rt, ptx.data, ptx.len, name);
  tl_str_free(&ptx);
  tl_target_destroy(t);
  tl_module_destroy(m);
  return k;
}

static TlLaunch warp_launch(void) {
  TlLaunch l = {{1, 1, 1}, {32, 1, 1}, 0};
  return l;
}

/* Runs a kernel with three buffers (in a, in b, in/out c). */
static bool run3(void *k, void *a, size_t na, void *b, size_t nb, void *c,
                 size_t nc, const TlLaunch *l) {
  TlDevPtr da = tl_runtime_alloc(rt, na), db = tl_runtime_alloc(rt, nb),
           dc = tl_runtime_alloc(rt, nc);
  bool ok = da && db && dc && !TL_FAILED(tl_runtime_upload(rt, da, a, na)) &&
            !TL_FAILED(tl_runtime_upload(rt, db, b, nb)) &&
            !TL_FAILED(tl_runtime_upload(rt, dc, c, nc));
  void *args[3] = {&da, &db, &dc};
  ok = ok && !TL_FAILED(tl_runtime_launch(rt, k, l, args)) &&
       !TL_FAILED(tl_runtime_download(rt, c, dc, nc));
  tl_runtime_free(rt, da);
  tl_runtime_free(rt, db);
  tl_runtime_free(rt, dc);
  return ok;
}

/*===--- tl kernels end to end ------------------------------------------===*/

/* The Tilus Fig. 2 matmul (f16 x i6): lowered to simt, compiled and run on
 * the GPU, against the tl VM on the same inputs. The VM accumulates in k
 * order rounding to f32 after every product; mma sums 16 products per
 * instruction, so results may differ by a rounding of the f32 sum before
 * the final f16 rounding: the tolerance is 2 f16 ulps of the result plus
 * 2^-10. */
static void test_matmul_f16_i6(const char *dir) {
  char path[1024];
  snprintf(path, sizeof path, "%s/kernels/matmul_f16_i6.tl", dir);
  FILE *f = fopen(path, "rb");
  CHECK(f, "cannot open %s", path);
  if (!f)
    return;
  static char text[65536];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  TlModule *vm_mod = tl_parse_module(ctx, path, text, n, 1);
  TlModule *gpu_mod = tl_parse_module(ctx, path, text, n, 1);
  TlPipeline *pl = tl_pipeline_create();
  TlPipelineConfig cfg = {.verify_each = true,
                          .arch = tl_arch_for_device(tl_runtime_sm(rt))};
  bool ok = vm_mod && gpu_mod && !TL_FAILED(tl_verify(tl_module_op(vm_mod))) &&
            !TL_FAILED(tl_pipeline_parse(pl, TL_PIPELINE_GPU, tl_context_diag(ctx))) &&
            !TL_FAILED(tl_pipeline_run(pl, gpu_mod, &cfg));
  tl_pipeline_destroy(pl);
  CHECK(ok, "the matmul does not lower");
  void *k = NULL;
  if (ok) {
    TlStr t = {0};
    tl_module_print(gpu_mod, NULL, &t);
    k = compile(t.data, "matmul_f16_i6");
    tl_str_free(&t);
  }
  CHECK(k, "the lowered matmul does not compile or load");
  int32_t m = 64;
  size_t na = (size_t)m * 1024, nb = 64 * 128 * 96, nc = (size_t)m * 1024;
  uint16_t *a = tl_xmalloc(na * 2), *cv = tl_xcalloc(nc, 2), *cg = tl_xcalloc(nc, 2);
  uint8_t *b = tl_xmalloc(nb);
  for (size_t i = 0; i < na; i++)
    a[i] = (uint16_t)tl_dtype_encode(tl_dtype_f16(), ((int)(rnd() % 2001) - 1000) / 1000.0);
  for (size_t i = 0; i < nb; i++)
    b[i] = (uint8_t)rnd();
  if (k && ok) {
    TlVm *vm = tl_vm_create(ctx);
    TlVmArg args[4] = {tl_vm_arg_buffer(a, na * 2, tl_dtype_f16()),
                       tl_vm_arg_buffer(b, nb, tl_dtype_uint(8)),
                       tl_vm_arg_buffer(cv, nc * 2, tl_dtype_f16()), tl_vm_arg_int(m)};
    bool vm_ok = !TL_FAILED(tl_vm_run_named(vm, vm_mod, "matmul_f16_i6", 4, args));
    tl_vm_destroy(vm);
    CHECK(vm_ok, "the VM does not run the matmul");
    TlDevPtr da = tl_runtime_alloc(rt, na * 2), db = tl_runtime_alloc(rt, nb),
             dc = tl_runtime_alloc(rt, nc * 2);
    bool gpu_ok = da && db && dc && !TL_FAILED(tl_runtime_upload(rt, da, a, na * 2)) &&
                  !TL_FAILED(tl_runtime_upload(rt, db, b, nb)) &&
                  !TL_FAILED(tl_runtime_memset(rt, dc, 0xFF, nc * 2));
    void *kargs[4] = {&da, &db, &dc, &m};
    TlLaunch l = {{(unsigned)(m / 16), 1024 / 8, 1}, {32, 1, 1}, 0};
    gpu_ok = gpu_ok && !TL_FAILED(tl_runtime_launch(rt, k, &l, kargs)) &&
             !TL_FAILED(tl_runtime_download(rt, cg, dc, nc * 2));
    CHECK(gpu_ok, "the matmul does not run on the GPU");
    unsigned bad = 0;
    double worst = 0;
    for (size_t i = 0; vm_ok && gpu_ok && i < nc; i++) {
      double x = tl_dtype_decode(tl_dtype_f16(), cv[i]), y = tl_dtype_decode(tl_dtype_f16(), cg[i]);
      double err = fabs(x - y), tol = 2 * 0x1p-10 * fabs(x) + 0x1p-10;
      if (err > worst)
        worst = err;
      if (!(err <= tol))
        bad++;
    }
    CHECK(vm_ok && gpu_ok && !bad, "matmul f16 x i6: %u of %zu outputs differ from the VM (worst %g)",
          bad, nc, worst);
    if (gpu_ok) {
      double ms = 0;
      TlLaunch lt = l;
      if (!TL_FAILED(tl_runtime_time(rt, k, &lt, kargs, 3, 20, &ms)))
        printf("matmul f16 x i6 (m=64, n=k=1024, lowered from tl): %s (worst error %g, "
               "%.3f ms median, cold L2)\n",
               !bad ? "ok" : "FAILED", worst, ms);
    }
    tl_runtime_free(rt, da);
    tl_runtime_free(rt, db);
    tl_runtime_free(rt, dc);
  }
  tl_free(a);
  tl_free(b);
  tl_free(cv);
  tl_free(cg);
  tl_module_destroy(vm_mod);
  tl_module_destroy(gpu_mod);
}

/*===--- mma -------------------------------------------------------------===*/

typedef struct MmaCase {
  const char *shape, *ab, *acc, *atom; /* atom prefix: mma_m16n8k16_f16 */
  unsigned m, n, k, a_regs, b_regs, c_elems;
  unsigned bits;      /* bits per A/B element */
  bool float_in, f16_acc;
  const char *b;      /* B's type when it is not A's */
} MmaCase;

static const MmaCase mma_cases[] = {
    {"m16n8k16", "f16", "f32", "mma_m16n8k16_f16", 16, 8, 16, 4, 2, 4, 16, true, false, NULL},
    {"m16n8k16", "f16", "f16", "mma_m16n8k16_f16", 16, 8, 16, 4, 2, 2, 16, true, true, NULL},
    {"m16n8k16", "bf16", "f32", "mma_m16n8k16_bf16", 16, 8, 16, 4, 2, 4, 16, true, false, NULL},
    {"m16n8k8", "f16", "f32", "mma_m16n8k8_f16", 16, 8, 8, 2, 1, 4, 16, true, false, NULL},
    {"m16n8k8", "bf16", "f32", "mma_m16n8k8_f16", 16, 8, 8, 2, 1, 4, 16, true, false, NULL},
    {"m16n8k32", "s8", "s32", "mma_m16n8k32_s8", 16, 8, 32, 4, 2, 4, 8, false, false, NULL},
    {"m16n8k32", "u8", "s32", "mma_m16n8k32_s8", 16, 8, 32, 4, 2, 4, 8, false, false, NULL},
    /* fp8: sm_89 and later (the GPU's target has it on an H100). */
    {"m16n8k32", "e4m3", "f32", "mma_m16n8k32_s8", 16, 8, 32, 4, 2, 4, 8, true, false, NULL},
    {"m16n8k32", "e5m2", "f32", "mma_m16n8k32_s8", 16, 8, 32, 4, 2, 4, 8, true, false, NULL},
    {"m16n8k32", "e4m3", "f32", "mma_m16n8k32_s8", 16, 8, 32, 4, 2, 4, 8, true, false,
     "e5m2"},
    {"m16n8k256", "b1", "s32", "mma_m16n8k256_b1", 16, 8, 256, 4, 2, 4, 1, false, false, NULL},
    {"m8n8k128", "b1", "s32", "mma_m8n8k128_b1", 8, 8, 128, 1, 1, 2, 1, false, false, NULL},
};

static void atom(const char *prefix, const char *which, TlLayout *l) {
  char name[64];
  snprintf(name, sizeof name, "%s_%s", prefix, which);
  TlErr err;
  if (!tl_layout_atom(l, name, &err)) {
    fprintf(stderr, "no atom %s: %s\n", name, err.msg);
    exit(1);
  }
}

/* The dtype of a float input type name (e4m3 and e5m2 are fp8). */
static TlDType float_dtype(const char *type) {
  return !strcmp(type, "f16")    ? tl_dtype_f16()
         : !strcmp(type, "bf16") ? tl_dtype_bf16()
         : !strcmp(type, "e4m3") ? tl_dtype_small_float(4, 3)
                                 : tl_dtype_small_float(5, 2);
}

/* Value of element code c of an A/B type as a double. */
static double in_value(const MmaCase *mc, const char *type, uint32_t code) {
  if (mc->float_in)
    return tl_dtype_decode(float_dtype(type), code);
  if (!strcmp(type, "s8"))
    return (double)(int8_t)code;
  return (double)code; /* u8, b1 */
}

static uint32_t random_code(const MmaCase *mc, const char *type) {
  if (mc->float_in && mc->bits == 8) {
    /* fp8: halves in [-2, 2], so every partial sum of a dot product is a
     * multiple of 1/4 below 2^8: exact in any accumulator of 10 or more
     * bits, whatever the tensor cores' fp8 summation keeps. */
    return (uint32_t)tl_dtype_encode(float_dtype(type), ((int)(rnd() % 9) - 4) / 2.0);
  }
  if (mc->float_in) {
    /* Values in [-2, 2) with few significant bits, so products are exact. */
    double v = ((int)(rnd() % 64) - 32) / 16.0;
    return (uint32_t)tl_dtype_encode(float_dtype(type), v);
  }
  return rnd() & ((1u << mc->bits) - 1);
}

/* Packs element code `code` of local index i into a thread's registers. */
static void put(uint32_t *regs, unsigned i, unsigned bits, uint32_t code) {
  unsigned per = 32 / bits;
  regs[i / per] |= code << (i % per * bits);
}

static void test_mma(const MmaCase *mc) {
  char text[4096];
  const char *cd = mc->float_in ? (mc->f16_acc ? "i32" : "f32") : "i32";
  snprintf(text, sizeof text,
           "func @mma(%%a: !simt.ptr<global>, %%b: !simt.ptr<global>, %%c: "
           "!simt.ptr<global>) attributes {kernel, threads = 32} {\n"
           "  %%lane = simt.lane_id : -> i32\n"
           "  %%l = arith.exti %%lane : i32 to i64\n"
           "  %%sa = arith.constant %u : i64\n"
           "  %%sb = arith.constant %u : i64\n"
           "  %%sc = arith.constant %u : i64\n"
           "  %%oa = arith.muli %%l, %%sa : i64\n"
           "  %%ob = arith.muli %%l, %%sb : i64\n"
           "  %%oc = arith.muli %%l, %%sc : i64\n"
           "  %%pa = simt.ptr_add %%a, %%oa : !simt.ptr<global>, i64 -> !simt.ptr<global>\n"
           "  %%pb = simt.ptr_add %%b, %%ob : !simt.ptr<global>, i64 -> !simt.ptr<global>\n"
           "  %%pc = simt.ptr_add %%c, %%oc : !simt.ptr<global>, i64 -> !simt.ptr<global>\n"
           "  %%va = simt.load %%pa : !simt.ptr<global> -> !simt.vec<%uxi32>\n"
           "  %%vb = simt.load %%pb : !simt.ptr<global> -> !simt.vec<%uxi32>\n"
           "  %%vc = simt.load %%pc : !simt.ptr<global> -> !simt.vec<%ux%s>\n"
           "  %%d = simt.mma %%va, %%vb, %%vc {shape = \"%s\", a_type = \"%s\", b_type = "
           "\"%s\", acc_type = \"%s\"%s} : !simt.vec<%uxi32>, !simt.vec<%uxi32>, "
           "!simt.vec<%ux%s> -> "
           "!simt.vec<%ux%s>\n"
           "  simt.store %%d, %%pc : !simt.vec<%ux%s>, !simt.ptr<global>\n"
           "  return\n}\n",
           mc->a_regs * 4, mc->b_regs * 4, mc->c_elems * 4, mc->a_regs, mc->b_regs,
           mc->c_elems, cd, mc->shape, mc->ab, mc->b ? mc->b : mc->ab, mc->acc,
           !strcmp(mc->ab, "b1") ? ", b1_op = \"and.popc\"" : "", mc->a_regs,
           mc->b_regs, mc->c_elems, cd, mc->c_elems, cd, mc->c_elems, cd);
  void *k = compile(text, "mma");
  CHECK(k, "mma.%s %s->%s does not compile or load", mc->shape, mc->ab, mc->acc);
  if (!k)
    return;
  TlLayout la, lb, lc;
  atom(mc->atom, "a", &la);
  atom(mc->atom, "b", &lb);
  atom(mc->atom, "c", &lc);
  unsigned M = mc->m, N = mc->n, K = mc->k;
  uint32_t *A = tl_xcalloc(M * K, 4), *B = tl_xcalloc(K * N, 4);
  double *C = tl_xcalloc(M * N, sizeof(double));
  for (unsigned i = 0; i < M * K; i++)
    A[i] = random_code(mc, mc->ab);
  for (unsigned i = 0; i < K * N; i++)
    B[i] = random_code(mc, mc->b ? mc->b : mc->ab);
  for (unsigned i = 0; i < M * N; i++)
    C[i] = mc->float_in ? ((int)(rnd() % 16) - 8) / 4.0 : (double)((int)(rnd() % 2001) - 1000);
  uint32_t *fa = tl_xcalloc(32 * mc->a_regs, 4), *fb = tl_xcalloc(32 * mc->b_regs, 4),
           *fc = tl_xcalloc(32 * mc->c_elems, 4);
  int64_t idx[2];
  for (unsigned t = 0; t < 32; t++) {
    for (int64_t i = 0; i < tl_layout_local_size(&la); i++) {
      tl_layout_map(&la, t, i, idx, NULL);
      put(fa + t * mc->a_regs, (unsigned)i, mc->bits, A[idx[0] * K + idx[1]]);
    }
    for (int64_t i = 0; i < tl_layout_local_size(&lb); i++) {
      tl_layout_map(&lb, t, i, idx, NULL);
      put(fb + t * mc->b_regs, (unsigned)i, mc->bits, B[idx[0] * N + idx[1]]);
    }
    for (int64_t i = 0; i < tl_layout_local_size(&lc); i++) {
      tl_layout_map(&lc, t, i, idx, NULL);
      double v = C[idx[0] * N + idx[1]];
      uint32_t bitsv;
      if (!mc->float_in) {
        bitsv = (uint32_t)(int32_t)v;
        fc[t * mc->c_elems + i] = bitsv;
      } else if (mc->f16_acc) {
        put(fc + t * mc->c_elems, (unsigned)i, 16, (uint32_t)tl_dtype_encode(tl_dtype_f16(), v));
      } else {
        float f = (float)v;
        memcpy(&fc[t * mc->c_elems + i], &f, 4);
      }
    }
  }
  TlLaunch l = warp_launch();
  bool ran = run3(k, fa, 32 * mc->a_regs * 4u, fb, 32 * mc->b_regs * 4u, fc,
                  32 * mc->c_elems * 4u, &l);
  CHECK(ran, "mma.%s %s->%s failed to run", mc->shape, mc->ab, mc->acc);
  unsigned bad = 0;
  double worst = 0;
  for (unsigned t = 0; ran && t < 32; t++)
    for (int64_t i = 0; i < tl_layout_local_size(&lc); i++) {
      tl_layout_map(&lc, t, i, idx, NULL);
      unsigned r = (unsigned)idx[0], c = (unsigned)idx[1];
      double ref = C[r * N + c], mag = fabs(ref);
      for (unsigned kk = 0; kk < K; kk++) {
        double p = in_value(mc, mc->ab, A[r * K + kk]) *
                   in_value(mc, mc->b ? mc->b : mc->ab, B[kk * N + c]);
        ref += p;
        mag += fabs(p);
      }
      double got;
      if (!mc->float_in) {
        got = (double)(int32_t)fc[t * mc->c_elems + i];
      } else if (mc->f16_acc) {
        uint32_t w = fc[t * mc->c_elems + i / 2];
        got = tl_dtype_decode(tl_dtype_f16(), (w >> (i % 2 * 16)) & 0xffff);
      } else {
        float f;
        memcpy(&f, &fc[t * mc->c_elems + i], 4);
        got = f;
      }
      /* Integers are exact. Floats: the inputs have at most 6 significant
       * bits, so every product is exact; the hardware's summation order
       * and rounding may differ from this exact sum by one rounding of the
       * accumulator per term: 2^-23 (f32) or 2^-10 (f16) relative to the
       * sum of magnitudes, times K. */
      double tol = !mc->float_in ? 0 : (mc->f16_acc ? 0x1p-10 : 0x1p-23) * (mag + 1) * (K + 1);
      double err = fabs(got - ref);
      if (err > worst)
        worst = err;
      if (err > tol)
        bad++;
    }
  const char *bt = mc->b ? mc->b : mc->ab;
  CHECK(ran && !bad, "mma.%s %s.%s->%s: %u of %u results wrong (worst error %g)", mc->shape,
        mc->ab, bt, mc->acc, bad, 32u * mc->c_elems, worst);
  printf("mma.%s.%s.%s.%s: %s (worst error %g)\n", mc->shape, mc->ab, bt, mc->acc,
         ran && !bad ? "ok" : "FAILED", worst);
  tl_free(A);
  tl_free(B);
  tl_free(C);
  tl_free(fa);
  tl_free(fb);
  tl_free(fc);
}

/*===--- ldmatrix --------------------------------------------------------===*/

static void test_ldmatrix(unsigned num, bool trans) {
  char text[2048];
  snprintf(text, sizeof text,
           "func @ldm(%%src: !simt.ptr<global>, %%unused: !simt.ptr<global>, %%dst: "
           "!simt.ptr<global>) attributes {kernel, threads = 32} {\n"
           "  %%lane = simt.lane_id : -> i32\n"
           "  %%l = arith.exti %%lane : i32 to i64\n"
           "  %%c16 = arith.constant 16 : i64\n"
           "  %%c4 = arith.constant %u : i64\n"
           "  %%o = arith.muli %%l, %%c16 : i64\n"
           "  %%ps = simt.ptr_add %%src, %%o : !simt.ptr<global>, i64 -> !simt.ptr<global>\n"
           "  %%row = simt.load %%ps : !simt.ptr<global> -> !simt.vec<4xi32>\n"
           "  %%s = simt.smem_base : -> !simt.ptr<shared>\n"
           "  %%ss = simt.ptr_add %%s, %%o : !simt.ptr<shared>, i64 -> !simt.ptr<shared>\n"
           "  simt.store %%row, %%ss : !simt.vec<4xi32>, !simt.ptr<shared>\n"
           "  simt.barrier\n"
           "  %%r = simt.ldmatrix %%ss {num = %u%s} : !simt.ptr<shared> -> !simt.vec<%uxi32>\n"
           "  %%od = arith.muli %%l, %%c4 : i64\n"
           "  %%pd = simt.ptr_add %%dst, %%od : !simt.ptr<global>, i64 -> !simt.ptr<global>\n"
           "  simt.store %%r, %%pd : !simt.vec<%uxi32>, !simt.ptr<global>\n"
           "  return\n}\n",
           num * 4, num, trans ? ", trans" : "", num, num);
  void *k = compile(text, "ldm");
  CHECK(k, "ldmatrix x%u%s does not compile or load", num, trans ? ".trans" : "");
  if (!k)
    return;
  /* 32 rows of 8 b16 elements (16 bytes); row r is what lane r stored and
   * the row address lane r gives (lanes beyond 8*num are ignored). */
  uint16_t src[32 * 8];
  for (unsigned i = 0; i < 32 * 8; i++)
    src[i] = (uint16_t)rnd();
  uint32_t dst[32 * 4] = {0};
  char name[32];
  snprintf(name, sizeof name, "ldmatrix_x%u%s", num, trans ? "_trans" : "");
  TlLayout lay;
  TlErr err;
  if (!tl_layout_atom(&lay, name, &err)) {
    CHECK(false, "no atom %s: %s", name, err.msg);
    return;
  }
  TlLaunch l = warp_launch();
  uint32_t dummy = 0;
  TlLaunch ls = l;
  ls.smem_bytes = 512;
  bool ran = run3(k, src, sizeof src, &dummy, 4, dst, 32 * num * 4, &ls);
  unsigned bad = 0;
  int64_t idx[2];
  for (unsigned t = 0; ran && t < 32; t++)
    for (int64_t i = 0; i < tl_layout_local_size(&lay); i++) {
      tl_layout_map(&lay, t, i, idx, NULL);
      /* The atom maps (lane, register half) to the element's (row, col) in
       * the stored matrices, with or without .trans. */
      unsigned r = (unsigned)idx[0], c = (unsigned)idx[1];
      uint16_t want = src[r * 8 + c];
      uint16_t got = (uint16_t)(dst[t * num + i / 2] >> (i % 2 * 16));
      bad += got != want;
    }
  CHECK(ran && !bad, "ldmatrix x%u%s: %u elements wrong", num, trans ? ".trans" : "", bad);
  printf("ldmatrix.x%u%s: %s\n", num, trans ? ".trans" : "", ran && !bad ? "ok" : "FAILED");
}

/*===--- cp.async --------------------------------------------------------===*/

static void test_cp_async(void) {
  const char *text =
      "func @cpa(%src: !simt.ptr<global>, %unused: !simt.ptr<global>, %dst: "
      "!simt.ptr<global>) attributes {kernel, threads = 32} {\n"
      "  %lane = simt.lane_id : -> i32\n"
      "  %l = arith.exti %lane : i32 to i64\n"
      "  %c16 = arith.constant 16 : i64\n"
      "  %o = arith.muli %l, %c16 : i64\n"
      "  %ps = simt.ptr_add %src, %o : !simt.ptr<global>, i64 -> !simt.ptr<global>\n"
      "  %s = simt.smem_base : -> !simt.ptr<shared>\n"
      "  %ss = simt.ptr_add %s, %o : !simt.ptr<shared>, i64 -> !simt.ptr<shared>\n"
      "  %c17 = arith.constant 17 : i32\n"
      "  %n = arith.remi %lane, %c17 : i32\n"
      "  simt.cp_async %ss, %ps, %n {size = 16, cache = \"cg\"} : !simt.ptr<shared>, "
      "!simt.ptr<global>, i32\n"
      "  simt.cp_async_commit\n"
      "  simt.cp_async_wait {pending = 0}\n"
      "  simt.barrier\n"
      "  %c31 = arith.constant 31 : i32\n"
      "  %other = arith.subi %c31, %lane : i32\n"
      "  %ol = arith.exti %other : i32 to i64\n"
      "  %oo = arith.muli %ol, %c16 : i64\n"
      "  %so = simt.ptr_add %s, %oo : !simt.ptr<shared>, i64 -> !simt.ptr<shared>\n"
      "  %v = simt.load %so : !simt.ptr<shared> -> !simt.vec<4xi32>\n"
      "  %pd = simt.ptr_add %dst, %o : !simt.ptr<global>, i64 -> !simt.ptr<global>\n"
      "  simt.store %v, %pd : !simt.vec<4xi32>, !simt.ptr<global>\n"
      "  return\n}\n";
  void *k = compile(text, "cpa");
  CHECK(k, "cp.async kernel does not compile or load");
  if (!k)
    return;
  uint8_t src[512], dst[512];
  for (unsigned i = 0; i < 512; i++)
    src[i] = (uint8_t)(rnd() | 1);
  memset(dst, 0xAB, sizeof dst);
  uint32_t dummy = 0;
  TlLaunch l = warp_launch();
  l.smem_bytes = 512;
  bool ran = run3(k, src, sizeof src, &dummy, 4, dst, sizeof dst, &l);
  unsigned bad = 0;
  /* Lane t reads back what lane 31 - t copied: its first (31 - t) % 17
   * bytes, then zeros (the barrier makes other lanes' copies visible). */
  for (unsigned t = 0; ran && t < 32; t++) {
    unsigned o = 31 - t, n = o % 17;
    for (unsigned b = 0; b < 16; b++)
      bad += dst[t * 16 + b] != (b < n ? src[o * 16 + b] : 0);
  }
  CHECK(ran && !bad, "cp.async zero fill: %u bytes wrong", bad);
  printf("cp.async.cg 16 with zero fill: %s\n", ran && !bad ? "ok" : "FAILED");
}

/*===--- Atomics ---------------------------------------------------------===*/

/* f32 x with a subnormal flushed to the zero of its sign. */
static float ftz(float x) {
  return fpclassify(x) == FP_SUBNORMAL ? copysignf(0.0f, x) : x;
}

/* simt.atom and simt.atom_cas, one element per lane (so the order of the
 * lanes does not matter), against C: atom.add.f32 rounds once and flushes
 * subnormal inputs and results (the VMs' model, docs/vm.md), f16x2 adds
 * each half rounded once with subnormals kept, max.s32, min.u32, exch and
 * a cas that succeeds on even lanes; the old values of the f32 add and an
 * acquire load of the exchanged word come back too. */
static void test_atomics(void) {
  const char *text =
      "func @atoms(%a: !simt.ptr<global>, %b: !simt.ptr<global>, %c: "
      "!simt.ptr<global>) attributes {kernel, threads = 32} {\n"
      "  %lane = simt.lane_id : -> i32\n"
      "  %l = arith.exti %lane : i32 to i64\n"
      "  %c4 = arith.constant 4 : i64\n"
      "  %o = arith.muli %l, %c4 : i64\n"
      "  %pa = simt.ptr_add %a, %o : !simt.ptr<global>, i64 -> "
      "!simt.ptr<global>\n"
      "  %pb = simt.ptr_add %b, %o : !simt.ptr<global>, i64 -> "
      "!simt.ptr<global>\n"
      "  %x = simt.load %pa : !simt.ptr<global> -> f32\n"
      "  %y = simt.load %pb : !simt.ptr<global> -> u32\n"
      "  %h = simt.bitcast %y : u32 -> !simt.vec<2xf16>\n"
      "  %s = arith.bitcast %y : u32 to i32\n"
      "  %r = arith.constant 128 : i64\n"
      "  %p0 = simt.ptr_add %c, %o : !simt.ptr<global>, i64 -> "
      "!simt.ptr<global>\n"
      "  %p1 = simt.ptr_add %p0, %r : !simt.ptr<global>, i64 -> "
      "!simt.ptr<global>\n"
      "  %p2 = simt.ptr_add %p1, %r : !simt.ptr<global>, i64 -> "
      "!simt.ptr<global>\n"
      "  %p3 = simt.ptr_add %p2, %r : !simt.ptr<global>, i64 -> "
      "!simt.ptr<global>\n"
      "  %p4 = simt.ptr_add %p3, %r : !simt.ptr<global>, i64 -> "
      "!simt.ptr<global>\n"
      "  %p5 = simt.ptr_add %p4, %r : !simt.ptr<global>, i64 -> "
      "!simt.ptr<global>\n"
      "  %p6 = simt.ptr_add %p5, %r : !simt.ptr<global>, i64 -> "
      "!simt.ptr<global>\n"
      "  %p7 = simt.ptr_add %p6, %r : !simt.ptr<global>, i64 -> "
      "!simt.ptr<global>\n"
      "  %old = simt.atom %p0, %x {kind = \"add\", ordering = \"acq_rel\"} : "
      "!simt.ptr<global>, f32 -> f32\n"
      "  %hh = simt.atom %p1, %h {kind = \"add\"} : !simt.ptr<global>, "
      "!simt.vec<2xf16> -> !simt.vec<2xf16>\n"
      "  %m = simt.atom %p2, %s {kind = \"max\", scope = \"sys\"} : "
      "!simt.ptr<global>, i32 -> i32\n"
      "  %n = simt.atom %p3, %y {kind = \"min\", scope = \"cta\"} : "
      "!simt.ptr<global>, u32 -> u32\n"
      "  %e = simt.atom %p4, %y {kind = \"exch\", ordering = \"release\"} : "
      "!simt.ptr<global>, u32 -> u32\n"
      "  %lu = arith.bitcast %lane : i32 to u32\n"
      "  %q = simt.atom_cas %p5, %lu, %y {ordering = \"acquire\"} : "
      "!simt.ptr<global>, u32, u32 -> u32\n"
      "  simt.fence\n"
      "  %v = simt.load %p4 {ordering = \"acquire\"} : !simt.ptr<global> -> "
      "u32\n"
      "  simt.store %old, %p6 : f32, !simt.ptr<global>\n"
      "  simt.store %v, %p7 : u32, !simt.ptr<global>\n"
      "  return\n}\n";
  void *k = compile(text, "atoms");
  CHECK(k, "atomics kernel does not compile or load");
  if (!k)
    return;
  float a[32], c0[32];
  uint32_t b[32], c[256], init[256];
  TlDType h = tl_dtype_f16();
  for (unsigned t = 0; t < 32; t++) {
    uint32_t r = rnd();
    /* Lanes 0-7 subnormal inputs, 8-15 subnormal sums, the rest random. */
    a[t] = t < 8    ? (float)(t + 1) * 1e-39f
           : t < 16 ? 1.5e-38f
                    : (float)((int)(r % 2001) - 1000) / 64.0f;
    c0[t] = t < 8    ? 2e-39f
            : t < 16 ? -1.4e-38f
                     : (float)((int)(rnd() % 2001) - 1000) / 32.0f;
    /* f16 halves: subnormals (0x0001..0x03ff) on odd lanes. */
    b[t] = t & 1 ? (rnd() & 0x03ff03ffu) : (rnd() & 0x3bff3bffu);
  }
  for (unsigned t = 0; t < 32; t++) {
    memcpy(&init[t], &c0[t], 4);
    init[32 + t] = t & 1 ? (rnd() & 0x03ff03ffu) : (rnd() & 0x3bff3bffu);
    init[64 + t] = rnd();
    init[96 + t] = rnd();
    init[128 + t] = rnd();
    init[160 + t] = t & 1 ? t + 1000 : t;
    init[192 + t] = init[224 + t] = 0;
  }
  memcpy(c, init, sizeof c);
  TlLaunch l = warp_launch();
  bool ran = run3(k, a, sizeof a, b, sizeof b, c, sizeof c, &l);
  unsigned bad[8] = {0};
  for (unsigned t = 0; ran && t < 32; t++) {
    float sum = ftz(ftz(c0[t]) + ftz(a[t])), got, old;
    memcpy(&got, &c[t], 4);
    memcpy(&old, &c[192 + t], 4);
    bad[0] += memcmp(&got, &sum, 4) != 0 || memcmp(&old, &c0[t], 4) != 0;
    uint32_t want = 0;
    for (unsigned k2 = 0; k2 < 2; k2++) {
      uint64_t x = (init[32 + t] >> (16 * k2)) & 0xffff,
               y = (b[t] >> (16 * k2)) & 0xffff;
      want |= (uint32_t)tl_dtype_encode(h, tl_dtype_decode(h, x) +
                                               tl_dtype_decode(h, y))
              << (16 * k2);
    }
    bad[1] += c[32 + t] != want;
    bad[2] += c[64 + t] !=
              ((int32_t)init[64 + t] > (int32_t)b[t] ? init[64 + t] : b[t]);
    bad[3] += c[96 + t] != (init[96 + t] < b[t] ? init[96 + t] : b[t]);
    bad[4] += c[128 + t] != b[t] || c[224 + t] != b[t];
    bad[5] += c[160 + t] != (t & 1 ? t + 1000 : b[t]);
  }
  static const char *const what[] = {
      "add.f32 (ftz)", "add.noftz.f16x2",     "max.s32",
      "min.u32",       "exch and ld.acquire", "cas"};
  for (unsigned i = 0; i < 6; i++) {
    CHECK(ran && !bad[i], "atom.%s: %u lanes wrong", what[i], bad[i]);
    printf("atom.%s: %s\n", what[i], ran && !bad[i] ? "ok" : "FAILED");
  }
}

/*===--- Register ops ----------------------------------------------------===*/

static void test_register_ops(void) {
  const char *text =
      "func @regs(%src: !simt.ptr<global>, %unused: !simt.ptr<global>, %dst: "
      "!simt.ptr<global>) attributes {kernel, threads = 32} {\n"
      "  %lane = simt.lane_id : -> i32\n"
      "  %l = arith.exti %lane : i32 to i64\n"
      "  %c16 = arith.constant 16 : i64\n"
      "  %o = arith.muli %l, %c16 : i64\n"
      "  %ps = simt.ptr_add %src, %o : !simt.ptr<global>, i64 -> !simt.ptr<global>\n"
      "  %in = simt.load %ps : !simt.ptr<global> -> !simt.vec<4xi32>\n"
      "  %x = simt.extract %in {index = 0} : !simt.vec<4xi32> -> i32\n"
      "  %y = simt.extract %in {index = 1} : !simt.vec<4xi32> -> i32\n"
      "  %z = simt.extract %in {index = 2} : !simt.vec<4xi32> -> i32\n"
      "  %w = simt.extract %in {index = 3} : !simt.vec<4xi32> -> i32\n"
      "  %one = arith.constant 1 : i32\n"
      "  %sh = simt.shfl %x, %one {mode = \"bfly\"} : i32, i32 -> i32\n"
      "  %pr = simt.prmt %x, %y, %z : i32, i32, i32 -> i32\n"
      "  %lo = simt.lop3 %x, %y, %w {lut = 106} : i32, i32, i32 -> i32\n"
      "  %hx = simt.bitcast %x : i32 -> !simt.vec<2xf16>\n"
      "  %hy = simt.bitcast %y : i32 -> !simt.vec<2xf16>\n"
      "  %hw = simt.bitcast %w : i32 -> !simt.vec<2xf16>\n"
      "  %hf = simt.fma2 %hx, %hy, %hw : !simt.vec<2xf16>, !simt.vec<2xf16>, "
      "!simt.vec<2xf16> -> !simt.vec<2xf16>\n"
      "  %fr = simt.bitcast %hf : !simt.vec<2xf16> -> i32\n"
      "  %out = simt.build %sh, %pr, %lo, %fr : i32, i32, i32, i32 -> !simt.vec<4xi32>\n"
      "  %pd = simt.ptr_add %dst, %o : !simt.ptr<global>, i64 -> !simt.ptr<global>\n"
      "  simt.store %out, %pd : !simt.vec<4xi32>, !simt.ptr<global>\n"
      "  return\n}\n";
  void *k = compile(text, "regs");
  CHECK(k, "register-op kernel does not compile or load");
  if (!k)
    return;
  uint32_t src[128], dst[128] = {0};
  for (unsigned i = 0; i < 128; i++)
    src[i] = rnd() << 16 ^ rnd();
  /* Keep the f16 inputs finite and normal-ish: clear exponent-all-ones. */
  for (unsigned t = 0; t < 32; t++)
    for (unsigned j = 0; j < 4; j += 1) {
      uint32_t *v = &src[t * 4 + j];
      if (((*v >> 10) & 31) == 31)
        *v ^= 1u << 14;
      if (((*v >> 26) & 31) == 31)
        *v ^= 1u << 30;
    }
  uint32_t dummy = 0;
  TlLaunch l = warp_launch();
  bool ran = run3(k, src, sizeof src, &dummy, 4, dst, sizeof dst, &l);
  unsigned bad[4] = {0};
  for (unsigned t = 0; ran && t < 32; t++) {
    uint32_t x = src[t * 4], y = src[t * 4 + 1], z = src[t * 4 + 2], w = src[t * 4 + 3];
    uint32_t regs[5] = {x, y, z, w, 0};
    TlRegOp prmt = {TL_ROP_PRMT_R, 4, 0, 1, 2, 0};
    tl_regop_run(&prmt, 1, regs, 5, NULL);
    uint32_t want_pr = regs[4];
    TlRegOp lop = {TL_ROP_LOP3, 4, 0, 1, 3, 106};
    tl_regop_run(&lop, 1, regs, 5, NULL);
    uint32_t want_lo = regs[4];
    uint32_t want_fma = tl_f16_fma((uint16_t)x, (uint16_t)y, (uint16_t)w) |
                        (uint32_t)tl_f16_fma((uint16_t)(x >> 16), (uint16_t)(y >> 16),
                                             (uint16_t)(w >> 16))
                            << 16;
    bad[0] += dst[t * 4] != src[(t ^ 1) * 4];
    bad[1] += dst[t * 4 + 1] != want_pr;
    bad[2] += dst[t * 4 + 2] != want_lo;
    /* NaN results: any NaN encoding is acceptable. */
    uint32_t g = dst[t * 4 + 3];
    for (int h = 0; h < 2; h++) {
      uint16_t gh = (uint16_t)(g >> (16 * h)), wh = (uint16_t)(want_fma >> (16 * h));
      bool gnan = (gh & 0x7c00) == 0x7c00 && (gh & 0x3ff), wnan = (wh & 0x7c00) == 0x7c00 && (wh & 0x3ff);
      bad[3] += gnan != wnan || (!gnan && gh != wh);
    }
  }
  CHECK(ran && !bad[0], "shfl.xor: %u lanes wrong", bad[0]);
  CHECK(ran && !bad[1], "prmt: %u lanes differ from the emulator", bad[1]);
  CHECK(ran && !bad[2], "lop3: %u lanes differ from the emulator", bad[2]);
  CHECK(ran && !bad[3], "fma.rn.f16x2: %u halves differ from the emulator", bad[3]);
  printf("shfl/prmt/lop3/fma.f16x2 vs emulator: %s\n",
         ran && !bad[0] && !bad[1] && !bad[2] && !bad[3] ? "ok" : "FAILED");
}

static void test_copy(const char *dir) {
  char path[1024];
  snprintf(path, sizeof path, "%s/test/target/copy.tl", dir);
  FILE *f = fopen(path, "rb");
  CHECK(f, "cannot open %s", path);
  if (!f)
    return;
  char text[8192];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  void *k = compile(text, "copy");
  CHECK(k, "copy kernel does not compile or load");
  if (!k)
    return;
  int32_t count = 1000;
  size_t bytes = (size_t)count * 16 + 64;
  uint8_t *src = tl_xmalloc(bytes), *dst = tl_xmalloc(bytes);
  for (size_t i = 0; i < bytes; i++)
    src[i] = (uint8_t)rnd();
  memset(dst, 0x5A, bytes);
  TlDevPtr ds = tl_runtime_alloc(rt, bytes), dd = tl_runtime_alloc(rt, bytes);
  bool ok = ds && dd && !TL_FAILED(tl_runtime_upload(rt, ds, src, bytes)) &&
            !TL_FAILED(tl_runtime_upload(rt, dd, dst, bytes));
  void *args[3] = {&ds, &dd, &count};
  TlLaunch l = {{(count + 127) / 128, 1, 1}, {128, 1, 1}, 0};
  ok = ok && !TL_FAILED(tl_runtime_launch(rt, k, &l, args)) &&
       !TL_FAILED(tl_runtime_download(rt, dst, dd, bytes));
  unsigned bad = 0;
  for (size_t i = 0; ok && i < bytes; i++)
    bad += dst[i] != (i < (size_t)count * 16 ? src[i] : 0x5A);
  CHECK(ok && !bad, "copy: %u bytes wrong", bad);
  printf("copy (ld.global.cg.v4 + guard): %s\n", ok && !bad ? "ok" : "FAILED");
  tl_runtime_free(rt, ds);
  tl_runtime_free(rt, dd);
  tl_free(src);
  tl_free(dst);
}

/*===--- wgmma ------------------------------------------------------------===*/

/* Reads DIR/NAME.SUFFIX.npy into *out; false (and a FAIL) when it cannot. */
static bool read_case_npy(const char *dir, const char *name, const char *suffix,
                          TlNpy *out) {
  char path[1024];
  TlErr err;
  snprintf(path, sizeof path, "%s/%s.%s.npy", dir, name, suffix);
  bool ok = tl_npy_read(path, out, &err);
  CHECK(ok, "wgmma %s: cannot read %s", name, path);
  return ok;
}

/* The simt.wgmma cases of test/vm/simt/Inputs/wgmma_ref.py (gen-all DIR):
 * each kernel runs on the device (one warpgroup) and D must equal the
 * NumPy reference bit for bit, as it does on the thread-level VM
 * (test/vm/simt/wgmma.test; every sum is exact). Needs sm_90a's wgmma:
 * other devices print a skip line. */
static void test_wgmma(const char *dir) {
  const TlArch *arch = tl_arch_for_device(tl_runtime_sm(rt));
  if (!arch || !tl_arch_has(arch, TL_FEATURE_WGMMA)) {
    printf("wgmma: skipped (%s has no wgmma)\n",
           arch ? arch->name : "the device");
    return;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/cases.txt", dir);
  FILE *f = fopen(path, "r");
  CHECK(f, "wgmma: cannot read %s", path);
  if (!f)
    return;
  char name[256];
  unsigned smem, out_bytes, flag, ncases = 0, nbad = 0;
  while (fscanf(f, "%255s %u %u %u", name, &smem, &out_bytes, &flag) == 4) {
    ncases++;
    int before = failures;
    size_t len = 0;
    char *text = NULL;
    snprintf(path, sizeof path, "%s/%s.tl", dir, name);
    FILE *tf = fopen(path, "rb");
    if (tf) {
      fseek(tf, 0, SEEK_END);
      len = (size_t)ftell(tf);
      fseek(tf, 0, SEEK_SET);
      text = tl_xmalloc(len + 1);
      len = fread(text, 1, len, tf);
      text[len] = 0;
      fclose(tf);
    }
    TlNpy img = {0}, a = {0}, c = {0}, ref = {0};
    void *k = text ? compile(text, "wg") : NULL;
    CHECK(k, "wgmma %s: the kernel does not compile", name);
    if (k && read_case_npy(dir, name, "img", &img) &&
        read_case_npy(dir, name, "a", &a) &&
        read_case_npy(dir, name, "c", &c) &&
        read_case_npy(dir, name, "ref", &ref)) {
      TlDevPtr di = tl_runtime_alloc(rt, img.size),
               da = tl_runtime_alloc(rt, a.size),
               dc = tl_runtime_alloc(rt, c.size),
               dout = tl_runtime_alloc(rt, out_bytes);
      uint8_t *out = tl_xcalloc(1, out_bytes);
      int32_t fl = (int32_t)flag;
      void *args[5] = {&di, &da, &dc, &dout, &fl};
      TlLaunch l = {{1, 1, 1}, {128, 1, 1}, smem};
      bool ok = di && da && dc && dout &&
                !TL_FAILED(tl_runtime_upload(rt, di, img.data, img.size)) &&
                !TL_FAILED(tl_runtime_upload(rt, da, a.data, a.size)) &&
                !TL_FAILED(tl_runtime_upload(rt, dc, c.data, c.size)) &&
                !TL_FAILED(tl_runtime_memset(rt, dout, 0, out_bytes)) &&
                !TL_FAILED(tl_runtime_launch(rt, k, &l, args)) &&
                !TL_FAILED(tl_runtime_download(rt, out, dout, out_bytes));
      CHECK(ok, "wgmma %s: the launch failed", name);
      CHECK(!ok || ref.size == out_bytes, "wgmma %s: reference of %zu bytes",
            name, ref.size);
      if (ok && ref.size == out_bytes) {
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < out_bytes / 4; i++)
          if (memcmp(out + 4 * i, (uint8_t *)ref.data + 4 * i, 4) && !bad++)
            first = i;
        CHECK(!bad,
              "wgmma %s: %zu of %u elements differ from NumPy, the first at "
              "[%zu, %zu]",
              name, bad, out_bytes / 4, first / (out_bytes / 256),
              first % (out_bytes / 256));
      }
      tl_free(out);
      tl_runtime_free(rt, di);
      tl_runtime_free(rt, da);
      tl_runtime_free(rt, dc);
      tl_runtime_free(rt, dout);
    }
    tl_npy_free(&img);
    tl_npy_free(&a);
    tl_npy_free(&c);
    tl_npy_free(&ref);
    tl_free(text);
    nbad += failures != before;
    printf("wgmma %s: %s\n", name, failures != before ? "FAIL" : "ok");
  }
  fclose(f);
  printf("wgmma: %u cases, %u failed\n", ncases, nbad);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  const char *seed = getenv("TL_GPU_SEED");
  if (seed)
    rng_state ^= strtoull(seed, NULL, 0) * 0x2545F4914F6CDD1Dull;
  ctx = tl_context_create();
  tl_register_all_dialects(ctx);
  rt = tl_runtime_create(tl_context_diag(ctx), 0);
  if (!rt) {
    printf("skipped: no CUDA device\n");
    tl_context_destroy(ctx);
    return 77;
  }
  printf("device: %s (sm_%u, %u SMs)\n", tl_runtime_device_name(rt), tl_runtime_sm(rt),
         tl_runtime_num_sms(rt));
  if (argc > 3 && !strcmp(argv[2], "--wgmma")) {
    /* gpu_test SOURCE_ROOT --wgmma CASES: the wgmma cases only. */
    test_wgmma(argv[3]);
    tl_runtime_destroy(rt);
    tl_context_destroy(ctx);
    printf("%d checks, %d failed\n", checks, failures);
    return failures != 0;
  }
  test_copy(dir);
  test_matmul_f16_i6(dir);
  for (size_t i = 0; i < sizeof mma_cases / sizeof mma_cases[0]; i++)
    test_mma(&mma_cases[i]);
  for (unsigned num = 1; num <= 4; num *= 2) {
    test_ldmatrix(num, false);
    test_ldmatrix(num, true);
  }
  test_cp_async();
  test_atomics();
  test_register_ops();
  tl_runtime_destroy(rt);
  tl_context_destroy(ctx);
  printf("%d checks, %d failed\n", checks, failures);
  return failures != 0;
}
