/* Unit tests of the thread-level VM (exec/vm/simt_vm.c): the kernels of
 * test/gpu/gpu_test.c (every mma form, ldmatrix x1/x2/x4 with and without
 * .trans, cp.async with zero fill, shfl/prmt/lop3/fma.f16x2 and a guarded
 * copy) run on the VM against the same host references; divergence and
 * reconvergence in scf.if, scf.for and scf.while; cvt with every rounding
 * against references built from neighbouring codes; the H200 mma model
 * against warps of results recorded on an H200; and every error the VM
 * detects, with its exact diagnostic.
 *
 * Tolerances: the mma checks use gpu_test's (the inputs have at most 6
 * significant bits, so the products are exact and the sums may differ from
 * the exact sum by one rounding of the accumulator per term) and also
 * require the VM's own order bit for bit (k increasing, each sum rounded
 * once: a plain C loop in float computes it exactly here, the double sum
 * of these inputs being exact); everything else is bit-exact. */
#include "tl/dialects.h"
#include "tl/dtype.h"
#include "tl/layout.h"
#include "tl/simt_vm.h"
#include "tl/tl.h"
#include "unit.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/*===--- Harness ----------------------------------------------------------===*/

typedef struct Diags {
  TlStr text;
} Diags;

static void capture(const TlDiag *d, void *user) {
  Diags *c = user;
  tl_str_printf(&c->text, "%u:%u: %s: %s\n", d->loc.line, d->loc.col,
                tl_diag_severity_name(d->severity), d->message);
}

typedef struct Run {
  TlContext *ctx;
  TlModule *m;
  TlSimtVm *vm;
  Diags diags;
} Run;

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
  r->vm = tl_simt_vm_create(r->ctx);
  return true;
}

static void teardown(Run *r) {
  tl_simt_vm_destroy(r->vm);
  if (r->m)
    tl_module_destroy(r->m);
  tl_context_destroy(r->ctx);
  tl_str_free(&r->diags.text);
}

static TlSimtLaunch launch1(int64_t grid, int64_t block, int64_t smem) {
  TlSimtLaunch l = {{grid, 1, 1}, {block, 1, 1}, smem};
  return l;
}

static bool run(Run *r, const TlSimtLaunch *l, unsigned n,
                const TlVmArg *args) {
  bool ok = !TL_FAILED(tl_simt_vm_run_named(r->vm, r->m, NULL, l, n, args));
  if (!ok)
    fprintf(stderr, "%s", tl_str_cstr(&r->diags.text));
  return ok;
}

static TlVmArg bytes_arg(void *p, size_t n) {
  return tl_vm_arg_buffer(p, n, tl_dtype_uint(8));
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 16);
}

/* Runs text with three buffers (in a, in b, in/out c) on one warp. */
static bool run3(const char *text, void *a, size_t na, void *b, size_t nb,
                 void *c, size_t nc, int64_t smem) {
  Run r;
  if (!setup(&r, text))
    return false;
  TlSimtLaunch l = launch1(1, 32, smem);
  TlVmArg args[3] = {bytes_arg(a, na), bytes_arg(b, nb), bytes_arg(c, nc)};
  bool ok = run(&r, &l, 3, args);
  teardown(&r);
  return ok;
}

/*===--- mma (gpu_test's kernel and reference) ----------------------------===*/

typedef struct MmaCase {
  const char *shape, *ab, *acc, *atom;
  unsigned m, n, k, a_regs, b_regs, c_elems;
  unsigned bits;
  bool float_in, f16_acc;
  const char *b; /* B's type when it is not A's */
} MmaCase;

static const MmaCase mma_cases[] = {
    {"m16n8k16", "f16", "f32", "mma_m16n8k16_f16", 16, 8, 16, 4, 2, 4, 16, true,
     false, NULL},
    {"m16n8k16", "f16", "f16", "mma_m16n8k16_f16", 16, 8, 16, 4, 2, 2, 16, true,
     true, NULL},
    {"m16n8k16", "bf16", "f32", "mma_m16n8k16_bf16", 16, 8, 16, 4, 2, 4, 16,
     true, false, NULL},
    {"m16n8k8", "f16", "f32", "mma_m16n8k8_f16", 16, 8, 8, 2, 1, 4, 16, true,
     false, NULL},
    {"m16n8k8", "f16", "f16", "mma_m16n8k8_f16", 16, 8, 8, 2, 1, 2, 16, true,
     true, NULL},
    {"m16n8k8", "bf16", "f32", "mma_m16n8k8_f16", 16, 8, 8, 2, 1, 4, 16, true,
     false, NULL},
    {"m16n8k32", "s8", "s32", "mma_m16n8k32_s8", 16, 8, 32, 4, 2, 4, 8, false,
     false, NULL},
    {"m16n8k32", "u8", "s32", "mma_m16n8k32_s8", 16, 8, 32, 4, 2, 4, 8, false,
     false, NULL},
    {"m16n8k32", "e4m3", "f32", "mma_m16n8k32_s8", 16, 8, 32, 4, 2, 4, 8, true,
     false, NULL},
    {"m16n8k32", "e5m2", "f32", "mma_m16n8k32_s8", 16, 8, 32, 4, 2, 4, 8, true,
     false, NULL},
    {"m16n8k32", "e4m3", "f32", "mma_m16n8k32_s8", 16, 8, 32, 4, 2, 4, 8, true,
     false, "e5m2"},
    {"m16n8k256", "b1", "s32", "mma_m16n8k256_b1", 16, 8, 256, 4, 2, 4, 1,
     false, false, NULL},
    {"m8n8k128", "b1", "s32", "mma_m8n8k128_b1", 8, 8, 128, 1, 1, 2, 1, false,
     false, NULL},
};

static void atom(const char *prefix, const char *which, TlLayout *l) {
  char name[64];
  snprintf(name, sizeof name, "%s_%s", prefix, which);
  bool ok = tl_layout_atom(l, name, NULL);
  CHECK(ok);
}

/* The dtype of a float input type name (e4m3 and e5m2 are fp8). */
static TlDType float_dtype(const char *type) {
  return !strcmp(type, "f16")    ? tl_dtype_f16()
         : !strcmp(type, "bf16") ? tl_dtype_bf16()
         : !strcmp(type, "e4m3") ? tl_dtype_small_float(4, 3)
                                 : tl_dtype_small_float(5, 2);
}

static double in_value(const MmaCase *mc, const char *type, uint32_t code) {
  if (mc->float_in)
    return tl_dtype_decode(float_dtype(type), code);
  if (!strcmp(type, "s8"))
    return (double)(int8_t)code;
  return (double)code;
}

static uint32_t random_code(const MmaCase *mc, const char *type) {
  if (mc->float_in) {
    double v = ((int)(rnd() % 64) - 32) / 16.0;
    return (uint32_t)tl_dtype_encode(float_dtype(type), v);
  }
  return rnd() & ((1u << mc->bits) - 1);
}

static void put(uint32_t *regs, unsigned i, unsigned bits, uint32_t code) {
  unsigned per = 32 / bits;
  regs[i / per] |= code << (i % per * bits);
}

static void test_mma(const MmaCase *mc) {
  char text[4096];
  const char *cd = mc->float_in ? (mc->f16_acc ? "i32" : "f32") : "i32";
  snprintf(
      text, sizeof text,
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
      "  %%pa = simt.ptr_add %%a, %%oa : !simt.ptr<global>, i64 -> "
      "!simt.ptr<global>\n"
      "  %%pb = simt.ptr_add %%b, %%ob : !simt.ptr<global>, i64 -> "
      "!simt.ptr<global>\n"
      "  %%pc = simt.ptr_add %%c, %%oc : !simt.ptr<global>, i64 -> "
      "!simt.ptr<global>\n"
      "  %%va = simt.load %%pa : !simt.ptr<global> -> !simt.vec<%uxi32>\n"
      "  %%vb = simt.load %%pb : !simt.ptr<global> -> !simt.vec<%uxi32>\n"
      "  %%vc = simt.load %%pc : !simt.ptr<global> -> !simt.vec<%ux%s>\n"
      "  %%d = simt.mma %%va, %%vb, %%vc {shape = \"%s\", a_type = \"%s\", "
      "b_type = "
      "\"%s\", acc_type = \"%s\"%s} : !simt.vec<%uxi32>, !simt.vec<%uxi32>, "
      "!simt.vec<%ux%s> -> "
      "!simt.vec<%ux%s>\n"
      "  simt.store %%d, %%pc : !simt.vec<%ux%s>, !simt.ptr<global>\n"
      "  return\n}\n",
      mc->a_regs * 4, mc->b_regs * 4, mc->c_elems * 4, mc->a_regs, mc->b_regs,
      mc->c_elems, cd, mc->shape, mc->ab, mc->b ? mc->b : mc->ab, mc->acc,
      !strcmp(mc->ab, "b1") ? ", b1_op = \"and.popc\"" : "", mc->a_regs,
      mc->b_regs, mc->c_elems, cd, mc->c_elems, cd, mc->c_elems, cd);
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
    C[i] = mc->float_in ? ((int)(rnd() % 16) - 8) / 4.0
                        : (double)((int)(rnd() % 2001) - 1000);
  uint32_t *fa = tl_xcalloc(32 * mc->a_regs, 4),
           *fb = tl_xcalloc(32 * mc->b_regs, 4),
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
      if (!mc->float_in) {
        fc[t * mc->c_elems + i] = (uint32_t)(int32_t)v;
      } else if (mc->f16_acc) {
        put(fc + t * mc->c_elems, (unsigned)i, 16,
            (uint32_t)tl_dtype_encode(tl_dtype_f16(), v));
      } else {
        float f = (float)v;
        memcpy(&fc[t * mc->c_elems + i], &f, 4);
      }
    }
  }
  bool ran = run3(text, fa, 32 * mc->a_regs * 4u, fb, 32 * mc->b_regs * 4u, fc,
                  32 * mc->c_elems * 4u, 0);
  CHECK(ran);
  unsigned bad = 0, inexact = 0;
  for (unsigned t = 0; ran && t < 32; t++)
    for (int64_t i = 0; i < tl_layout_local_size(&lc); i++) {
      tl_layout_map(&lc, t, i, idx, NULL);
      unsigned r = (unsigned)idx[0], c = (unsigned)idx[1];
      double ref = C[r * N + c], mag = fabs(ref);
      /* The VM's order: k increasing, each sum rounded once. */
      float seq = (float)C[r * N + c];
      double seq16 = C[r * N + c];
      for (unsigned kk = 0; kk < K; kk++) {
        double p = in_value(mc, mc->ab, A[r * K + kk]) *
                   in_value(mc, mc->b ? mc->b : mc->ab, B[kk * N + c]);
        ref += p;
        mag += fabs(p);
        seq = (float)((double)seq + p);
        seq16 = tl_dtype_decode(tl_dtype_f16(),
                                tl_dtype_encode(tl_dtype_f16(), seq16 + p));
      }
      double got, want_seq;
      if (!mc->float_in) {
        got = (double)(int32_t)fc[t * mc->c_elems + i];
        want_seq = (double)(int32_t)(uint32_t)(int64_t)ref;
      } else if (mc->f16_acc) {
        uint32_t w = fc[t * mc->c_elems + i / 2];
        got = tl_dtype_decode(tl_dtype_f16(), (w >> (i % 2 * 16)) & 0xffff);
        want_seq = seq16;
      } else {
        float f;
        memcpy(&f, &fc[t * mc->c_elems + i], 4);
        got = f;
        want_seq = seq;
      }
      double tol = !mc->float_in ? 0
                                 : (mc->f16_acc ? 0x1p-10 : 0x1p-23) *
                                       (mag + 1) * (K + 1);
      bad += fabs(got - ref) > tol;
      inexact += got != want_seq;
    }
  if (bad || inexact)
    fprintf(stderr,
            "mma.%s %s->%s: %u beyond tolerance, %u not the VM's "
            "order\n",
            mc->shape, mc->b ? mc->b : mc->ab, mc->acc, bad, inexact);
  CHECK(ran && !bad && !inexact);
  tl_free(A);
  tl_free(B);
  tl_free(C);
  tl_free(fa);
  tl_free(fb);
  tl_free(fc);
}

/*===--- mma as the H200 computes it --------------------------------------===*/

/* One warp's mma, recorded on an H200 (the kernel below compiled by
 * tl-llc -mcpu=sm_90a and run through exec/runtime): per lane 48 input
 * bytes (A's registers at 0, C's at 16, B's at 32) and 16 output bytes
 * (D's registers), in hex. The operands are random: normal values, and in
 * the "edge" sets also zeros, subnormals, infinities and NaN. The warp of
 * each set is the one of 512 where tl.dot's order differs most from the
 * GPU; TL_SIMT_MMA_SM90 must give the GPU's bits (a NaN for a NaN). */
typedef struct H200Mma {
  const char *what, *shape, *ab, *acc;
  const char *in, *out;
} H200Mma;

static const H200Mma h200_mma[] = {
    {"mma_f32 (warp 500)", "m16n8k16", "f16", "f32",
     "24b598a3f69e4695b1c550c275d0f2524c85e93ec045e4393b89d243bb75f83b382d03b5f"
     "e2f5acd0000000000000000"
     "35d361337858bfc1ac568b58d0b0d5a9671279c1f92c95c0f370373f62c450413dcb12146"
     "34f88bf0000000000000000"
     "5a2e4ec747315cbfbe1dd92b26239aaf7fa2023e582b933f607be1c3e7ce484447376a460"
     "b552f3c0000000000000000"
     "df42d222133c3236d6cb5b5813d10f1a7a2ac6bc646ae3bb11578cbc7a3196c3103710a5e"
     "4cf9e350000000000000000"
     "48566c9611c0aec7d8184952e34953a46fcc453c20d8433e2368cfbdc7f598c415c25d1ea"
     "fba903d0000000000000000"
     "f1512822f4a6bb1c0cb06ca46b49b65a295e7c44ed6a57ba92d69cbc47b8f2c0a1a5594bd"
     "8354ca90000000000000000"
     "e1c0c054e32e34bc1bbd35c1b9ac844fbdb489413041b33cf92b45411eca1cc43fbd194d7"
     "4c8ce300000000000000000"
     "353f0bb2e3d3c32cd3d706295c52a0ae64976fbfc19ebe39ba8892ba5b165a42591e1fa0d"
     "93b392d0000000000000000"
     "8c2c87bc9c1bb4c88a1dfc4d6619f1d496071dc404ae21c07033213d8a31e3c4771d9797a"
     "4d978300000000000000000"
     "6bc053967ece041c53acc14b882f34b16474cf3f2ff159c012c9583b2cb251b93e9deabc1"
     "09cebd70000000000000000"
     "e8b1381e2e377da6f3194cb939bbf8bd9bb9fcb9bac215bb32318b40b78e92439ac7f42ae"
     "62ddbad0000000000000000"
     "04999cca68c508cce356de4cb0ae47b63f502e42a91a89c233037e4431297343f5194dd0e"
     "228e5c60000000000000000"
     "af30fa3792276fa7a4ca13bce1ce5dd2464d19c49994a5c2b19a5abb39bf5dbf575b7bc20"
     "2acf29b0000000000000000"
     "7a24cab8c057d2d512316cc6ed2e3e32e6a1cf44f776b4b9e90c8e3a6c726cc460b7bdd73"
     "3b519a00000000000000000"
     "88a42ebd5dc45b15e7b0224fcd549159076b22446b54df3bad82c0b88fc10d401a9d92570"
     "cad5fae0000000000000000"
     "08bd423fe52300a6863db7a3b0316c21db6173c0e4b732bbca58c841eb81da3b2930e41be"
     "ad8fc380000000000000000"
     "28be0442ad5099a0745237a3061e34c14ef614ba0b6c7c3abdd2283982c1a64090a49e29b"
     "049b74f0000000000000000"
     "0158e9db70a9724a4ed636af4d9f41c71c4a0bc20c5581c4fdd5103c1b2799c2931d93d8f"
     "595422b0000000000000000"
     "b3bcff31f3b4879beb369ca3db4e8c55c5240942c502674599a9cabb9f045ec029bdfbbbe"
     "b45a2470000000000000000"
     "dc2ace400d3d763bf420aecc8821e2bb11b5bdbeb7212fc2ddd6cd3c6eabbbc31f5229b0b"
     "e3f2e290000000000000000"
     "663a5ea7039e3ab44b955694b3bb28bd5425374265a324c310b0d03f45a7c83f42af93a21"
     "248c9ce0000000000000000"
     "5145b39cfa9f782d4e4a0614fd9d97bcd75ae2ba44eb67c4a4906043f5ef53c3a0b1b73ce"
     "39439b20000000000000000"
     "c9381eb55f367e310eade124f9a77ed5de3582c05f0730412063c83d17d659ba203e50302"
     "0a90a1b0000000000000000"
     "163a285bfba229cd11d16a4bf998d4a9239d8ac4e5bd3842988bdc4054fcbec3ea37f4c51"
     "fa685af0000000000000000"
     "d62f3c9d134f9356b4c6a9b109c96043bd3aa93f0c43433a480ff9bd5bb02d40da34f3ca6"
     "c2c14990000000000000000"
     "60a12fbe07a51b9b1a512ab2ccb4b89ff86f68455944b9bd2622b7bc5e0c46b920467b3fb"
     "e22ee570000000000000000"
     "a3d96cb377a29bbdf5ae741f5f2ab0c647d5f5bafbe6ea3b2411e140fa86e1ba0d3567d66"
     "61576bb0000000000000000"
     "88b1abc80218cb31e03e21d21324f9c2f427e041f0b4c6c17fa89ebd5d07f93f971b723af"
     "db383b30000000000000000"
     "0fa5b943a03a8dd9d4ae6e94523ac1ac07ddef42054dddc2a2906abdbc08763f45ba51bf0"
     "d21ee220000000000000000"
     "a3d113214a3e382fea25e3c276a3565128c441ba92bdfd43934d89bc192bd53e03a296276"
     "2d41ca40000000000000000"
     "afa30c434346ebb33bd35a224b99f9a9b250423a9ed8ca41179c45bf7032e4c465971c400"
     "bd3d1c50000000000000000"
     "bf5baea6ac3c9c2b7ebcf144cfd7ee421a9d96c4acec5c3f55502a425f0c6bc27fb18ad6e"
     "c33e2bb0000000000000000",
     "55c98545b03fe4c2130ac5c4743380c1e3828fc6aeabc1442826c945e8ffc945"
     "b12513c22a0dea402f6e9c44f00b80c49ff8924696f1eec54fa68444d0e7acc3"
     "63cc2045d994964451d4d3c4fae495c40759824441f94c47102ee5c6a37506c6"
     "71eea344c199abc427c522c5014117c4d450e8c5fdde21433838d6466d8954c4"
     "b11490c52beb0b43b33bfa44df06f0c4a94cccc4482087c6e4d60c44c9b25e42"
     "e7a96d448bb110c48fcb29c5f29b1e451250f64476a3a64442a26f44c1e6f944"
     "e5ec18c468dbcac2b233b1455d7601c5383d964528a386c3ae899e45e0d12346"
     "1a5e32442301b7c2500354465acf7e443c0f34c4aab8b4c3e516e94382f1a7c5"
     "920896c5285e6dc5ea9e1445dd1219c31f330cc647b4e94645595a44d4dddd45"
     "992e13477e656c450d4c85c4f2f492428e787343ed43d345ab9d71c41b1c20c5"
     "4bb4c94436a351c3cc8e75c2bf40fcc0bb9af9c581faae459c5b9d449d2641c3"
     "772f95c2fa19a9c4a13337c4d3af164398d654c4cee5c1c61730aec2743b0f45"
     "0ce182448dbe63437c3705c30a28c7c2b74bda4588a2f1c274b1e5445ea6bf45"
     "8f76b9433e4f85c311e819c23e853bc37b93e6c14bf1e7c4870fa3c448f12dc3"
     "e47568c5b557ef438dbd734575150bc3e816d143e2249044c1e5afc5412c9f46"
     "e32d3846840d1e43a6aa50c3e060e2c470ca11c572e14845a5d9f945e4f16043"},
    {"edge_f32 (warp 458)", "m16n8k16", "f16", "f32",
     "a9877634b0125e456e2a0000fa432e03a8e17540d1b9b9c1281949404f6359008280439d2"
     "102beca0000000000000000"
     "5c12815ab482108e4c350993797619650000000000000000711612befa774ec3423800004"
     "28100800000000000000000"
     "2731f782000057bcdf3a81fb7f83d646f52d2ac42f867abfbd9c0980d6a1234100000df9d"
     "45e00920000000000000000"
     "c5818082e45891e024560f900080310000000080920b69005f237bc0b929cb3ab04c170b0"
     "080908e0000000000000000"
     "18224fa44c877117385ad7f31e4de368ce8131bba6582f3f48ad9cbb5656683af21c97da0"
     "080eb6b0000000000000000"
     "e53e195d09e023222d29543f5d9c8a8100000080afa5283a69f53ebf9d0404c30000ef3f3"
     "872ae350000000000000000"
     "b303ab0d0000bf19e9a6008025483367da0f6bbfe06680ba5941994400000080cb9db0b08"
     "99272270000000000000000"
     "2fc6d7941f8797dc55ce186862b6008061dd23c30000000033dccb3f578fb93a0424b8310"
     "08024af0000000000000000"
     "007cecde751b4bae8f0255344066790000000080cf77453ae260933c7b2570432069fa03d"
     "56dc4800000000000000000"
     "007ce3d89ece6d99f66c7048ba487d4b100f08430000008098c766c0aced320062766682e"
     "58587190000000000000000"
     "46ef65a400000080ea700d8239d72444d7741e80535c8fc00fea333d461d1d8000801a15e"
     "e0cabdf0000000000000000"
     "b6035f3646aff7b40b81d8db0080f3e600000000000000000000000000000080828341c50"
     "04d49000000000000000000"
     "0080d72239f2e875e58200809fc4c113829f0bbb32cfeac0d9498c3f5f3e8f3d83df00800"
     "08040a30000000000000000"
     "38a2a6d4e72b00800000990f6484e93cfcb67a80698352c4acf7c93eb0ba70c1aa7566358"
     "9dd963c0000000000000000"
     "5a479d8c72bea8a4edb81d910080c0a0de88dcbf305e7fbe2c2705bf62c14740996c6166a"
     "73aa1ca0000000000000000"
     "000020047576aae400007fd100002a8500000000b7fe8bbc6ae8fd3b05485f3bd6a7b1004"
     "7dc92010000000000000000"
     "b3040080d49f3a9d0080686c7c9c2bd963fc2940c3745fbf1d124d80be0795c07b98789c2"
     "e01f0470000000000000000"
     "21c45973b1513a6a4ba7000000808452754e2844c8a86ec20cc90d000000008067a3db010"
     "0006a860000000000000000"
     "4086008048196ca356c2cc2f0080640400000000b0fc5b80000000002f8d203e000045241"
     "44c2f2a0000000000000000"
     "cd448aea76bb178f0000f78e8535bcaf1d635d39258404baa40b8dbf5a17e43c3280cf04c"
     "f4457ba0000000000000000"
     "baabfff00a263f855a3d838269d6dae75ca8f63eaecf62bff78ba0c29853fbc1c707cbd87"
     "f97d4230000000000000000"
     "007500a400002ac093e8812c6cd409b85c2d4041fe9b3c3c0fc8ac3c4bdab23a143600804"
     "5dbe70f0000000000000000"
     "3714177bdcbdf470ca9d00003e97803e00000080545f35c35e13dbc1d297a5ba3f7be506b"
     "9919a0e0000000000000000"
     "2c78c0414c8032390080ab93102100800ad4b7bcbfbf61c3000000809a8feb3d2b92f91cd"
     "8db65830000000000000000"
     "3380aee5268b0000ae1b5e529100ccbb38ec83c02048e244cd3024801c44f839230308335"
     "e88c6d20000000000000000"
     "1b8d7ec517fa0080fcf1c0ad1c6a0080c230a63ea01f5841db6e6143d417a9bcec9f9c209"
     "c4dd4720000000000000000"
     "e79e643875608de200809b45a7c6000075740f4300000080000000800000000043b400809"
     "93000800000000000000000"
     "6c41df9aeff94257d2c16b8b8f11258318e8cb3d61b1523cc905e1429d4666ba1bc157afa"
     "55700000000000000000000"
     "542525f671438b28e55400800e3524a3f76da439cd39ba3b65d1bec3de528d42a267025a0"
     "080bf820000000000000000"
     "1c482e50d14f00808b6d2b068dbeea300000000076c1e7400000008000000080b40141c88"
     "820fd9b0000000000000000"
     "c11e00000bce000071393eb2000049e58d452cc347665441ea57d83cf8d12a80bcafda08d"
     "4283d810000000000000000"
     "2ad80080d7738912a701b57086e262814de57e445f238a4200000000ba1910bd38a9113cd"
     "0aeb7e50000000000000000",
     "d908d543a5742c452bd43a47c701a14d222de64b1f95404979e0b74646510fcb"
     "ddbe45c5b1426ec6be16f03dd23cbcca8cba3b46e7bbd7c4ffc38f4b5d992544"
     "ca4a53488a4c78ccfa57eec64ec51a4bbc839649638a384716f559cb6f3737cb"
     "5966fcc7b1e4be45e386a646f75b67c2b6df594940543bca786804c85f3295c3"
     "ffffff7fffffff7f405445c7ee0dec470000807fffffff7ff835074b76c516c9"
     "000080ff0000807f6e51edc3154c09c5ffffff7f0000807f02b74c4892da1e4a"
     "acb480c32bce18c32672f24841ae9bca0bc09ec342b502477c47ffcbeec1ba4a"
     "859ab8414e14d548cfbf9cc2a24e68ca32617140b0c07d477a602fc7f2849acb"
     "27b872c74ac68b4b15483145c42122c98247afc7e267b1c7cd4d914983128149"
     "91b20b473f7e504273efa3c47370a442f8446ec8385900c8d129344960a4d2c6"
     "ba320fcf9d2ad3cbd31fc8cdfd1b0acbf750ff4d6e17084ed5b615c98e0a7d4b"
     "fd403344d380014aef1177c66dbf89c773e709c87256f0c9bedac34794698342"
     "8659b6c6ca5e14cdd8c1004c08f4174cdc972ec5dd8b844a3b7b9bceaff289ce"
     "c719074459a53b4ae4cb134435acfc4b9b9188c8168588c83b173e4854890045"
     "877701c59600944cc5d19248ab3ca1c6d9ac2649082bdec9b137b449c8135149"
     "d757f0c5270a1b4a17127fc5958595c94699f047118490cbfeb109c816d2d145"},
    {"edge_f16 (warp 40)", "m16n8k16", "f16", "f16",
     "1a3c3e5f42b43812b35b00003966373a70710080a239498d0000000000000000eb720c5e0"
     "b009d130000000000000000"
     "bd9bae8000808aed3e7b00803995000099a6b4f4d096000000000000000000007b6800e73"
     "9c2a8150000000000000000"
     "72b37f3cf4cad5240000df83ca680000ecd8db5d40b8b2290000000000000000784fae518"
     "427c8510000000000000000"
     "346b4640c58cb67282b048e1d1a3ece997a81f144bece59a000000000000000030a5c52da"
     "bf3f1130000000000000000"
     "000050822ededc805f6b00001fcb8b64ae2394be558120330000000000000000fa8246dfb"
     "cf036b50000000000000000"
     "60990080a5c5008096fabb83993e8ebc6c8052800000f0be0000000000000000cbd000806"
     "b5abb9e0000000000000000"
     "0139173aa719d4098fbc3ce8dacf710eb1a3be0d4c98329b0000000000000000d1024331c"
     "0dc59300000000000000000"
     "72824918fb8501f483abe7717ab60f83938104398100a0df000000000000000031c3c6253"
     "dfae3140000000000000000"
     "593bfcca0080d237dddf00005ff7405d08680000a7ab7a010000000000000000864c00005"
     "bea007c0000000000000000"
     "00007db3fb3d5d368858f9aeec029b1900809da59693a1c20000000000000000330078c52"
     "02ae0060000000000000000"
     "6996b5634b03cd5d00007e1c7f02f3f67300caf55001a0af000000000000000011affed15"
     "c4aaad50000000000000000"
     "0a969e5dfff0146ffa4ef05e36be76d88403e7e58b8249190000000000000000c78000809"
     "f1529e40000000000000000"
     "940dc9934df144c6f8ee00806faf0e29a30b436ba5d764340000000000000000518079049"
     "92f00000000000000000000"
     "000000002f8c315aca6e331a4ae1b47090ae00801c1285280000000000000000026fc26ff"
     "52b10230000000000000000"
     "784450c8cf1d00000080124aa68000806d1bfb640b240006000000000000000043cb0000d"
     "b148cbf0000000000000000"
     "ece0437b785b4a2e03a1f7fa1993c616d099045ea69400000000000000000000c38c20682"
     "f6065cf0000000000000000"
     "0297032682b6adc6fb7a1c3127c2000028c3aa02008097e70000000000000000bbb400805"
     "802e2820000000000000000"
     "38c265a974db0000c4806795a2142cdb2fc728c19b6f00000000000000000000ed363b775"
     "5d100800000000000000000"
     "314100800a062740bafae90ab5caf720957781e2343fcf1f00000000000000009fb6fc510"
     "0806d8f0000000000000000"
     "a2988df4991b0000da2bc333008093c70000b83cc3b60e6c000000000000000021b988bdb"
     "4af5b020000000000000000"
     "d3cee3f8008011b308d308ead82c88bf48d659300a23c033000000000000000039ecb8775"
     "a9a50570000000000000000"
     "0080008000005624eabebc4fca31076e023fd7f09c339883000000000000000000808dda7"
     "5500c250000000000000000"
     "7a79f5ea75822888000089cb0542f14aaa10357554615b180000000000000000ad9b8aa1a"
     "fbc00000000000000000000"
     "9dae8a96aabf00003ceb2e63c7de138d52e4ccd5952c4f800000000000000000634d0a830"
     "90e95600000000000000000"
     "0000f830daf900008a5437a1d0159af1200922b5e97abc00000000000000000001ac24a3d"
     "cf200000000000000000000"
     "46a7d6cee5662ea1de3b1f60220074d5ccb9c0a3eacf45cc00000000000000005203e3b51"
     "c0343ae0000000000000000"
     "7b5d7e2fefddf230cd83e4ed609b0080b9b236ab0080828e00000000000000007af2830ad"
     "f3362e60000000000000000"
     "bcad5692864158f5aff328ca16160000cc1994efbc0fee8100000000000000003894204b6"
     "000dc020000000000000000"
     "f5c4b511d58319000080e89b4234d2d20080a0f17602656f00000000000000004bc6f259d"
     "2cec3380000000000000000"
     "a66933beb9420000697800004b210897689efb1eb2a533b70000000000000000a1b00080a"
     "cd3e98c0000000000000000"
     "3a3691ec00fc47c29ca583b98e5800800080bd2fd297ab1f00000000000000000000af9c6"
     "9c78cc00000000000000000"
     "008003641a5600000080c7bab76cbfce678232d64c5677160000000000000000e507b900d"
     "59400000000000000000000",
     "8675007c007c00fc0000000000000000ff7f5470007c00fc0000000000000000"
     "00fc007c00fc00fc000000000000000000fc00fc00fc86fb0000000000000000"
     "007c00fc00fc007c0000000000000000ff7f00fc007c00fc0000000000000000"
     "007c007c8c75007c000000000000000000fc007c1bf8476a0000000000000000"
     "00fc007c00fc007c0000000000000000ff7f007c007c007c0000000000000000"
     "1a7800fc5f7600fc0000000000000000007c1661007c007c0000000000000000"
     "bdf3007c00fc00fc0000000000000000ff7f007c007c007c0000000000000000"
     "00fc00fc007c007c0000000000000000007c00fcc664007c0000000000000000"
     "7ff100fc00fc66790000000000000000007c00fcff7f00fc0000000000000000"
     "c97add7be2bf00fc000000000000000000fc00fc46790f6a0000000000000000"
     "007c007c007c007c000000000000000000fc00fc00fc00fc0000000000000000"
     "00fc00fccd64f5ee000000000000000000fc00fcf2f5f8d60000000000000000"
     "007c007c00fce1fb000000000000000000fc00fc00fc00fc0000000000000000"
     "00fcbf6a8079007c0000000000000000007cbc6b007c007c0000000000000000"
     "007c007c00fc00fc000000000000000000fc007cff7f007c0000000000000000"
     "00fc007c007c007c00000000000000002d7100fc007cff7f0000000000000000"},
    {"edge_bf16 (warp 397)", "m16n8k16", "bf16", "f32",
     "e84200000080debcaf3e14bce3bf81420000000025c0ca3dd76b0880f07d020025bb49c12"
     "dc02bc10000000000000000"
     "1b3c2b3b00808f426c80cdc26341d641cb2bdb3ad65cfabf982c4143b5765e414f3b9041b"
     "f4200800000000000000000"
     "da3c29c23b0000001cbedec21343b04196a37f80ea360bbecd5e67bf94c79143f042cdba6"
     "1be8e420000000000000000"
     "e53e2c3f008084bf8cbd00006ac15e3efb641d809d206400ae83230020d00a0000002e434"
     "0be03c30000000000000000"
     "008038c06e3c00801fc073c25c42833f891470c59f6e46bc000000806f96c2bb69be01427"
     "33e8eb90000000000000000"
     "000077bcb7ba7d3f58bf6c00d3413f3ba1a67180e8fada3c5911d14072475b40d0bf7c3c3"
     "6be64c00000000000000000"
     "d4bd51002fbd11c20080cebbc64000004ce3803b1c5b4f42e9618cbe000000000bbd1e80c"
     "fbd053f0000000000000000"
     "008062c05e3e6ac2ab3e0000373f0080e5cd9e4100000080fa6acc4322af3b3e503e9a42e"
     "23b05c30000000000000000"
     "41bf56bda63c553d59c0f3bc45ba833ad975528052818444d8b5aebc1c0df43fa7bdffc22"
     "cc0903c0000000000000000"
     "c43e000076c1afc12f804dbf0000510071a8f34210aab23a32c27845000000806e41b8bbc"
     "fc061420000000000000000"
     "284300800080dd429c3faa41fabbd03a755079c002de2680168de5400000008000000080b"
     "d42c5be0000000000000000"
     "d7bcc840c34159bc093f6880283eb7be00000080dfe4d542f285d5c400000000343d62bb7"
     "9bbfbc00000000000000000"
     "0080223f0a805cc2243fe53d0080c83cf27b1bc4e3d188bb4280e9c3000000001fc2493f5"
     "00000000000000000000000"
     "713cbbbe3b3ccac04840e2c0bec200003c36418053d07b3ae27b5a800f8054426a4037bff"
     "33e35420000000000000000"
     "3b4042bcc7bd0a3c7dbce73f008007bbb36de6c01d92e8c300000080bbbe20bed5c22ac24"
     "08000800000000000000000"
     "dfbf9340733bdebe773cf83d283d413f9d2722c329ddd1bf62f3d1c16d06433b70be04c2f"
     "ec00c3e0000000000000000"
     "1dbbf13dd53b7c804e3f7cbeb94045bc20f2db3c2067a1c2854b5d3c0000008024bcbfc07"
     "7bc38bc0000000000000000"
     "8fbc0bc0d5bd00000cbd3ac317c1fbc103257b3aa2452e42dea95000000000800000e4400"
     "0809f3e0000000000000000"
     "1b41493ce542864088423542acbe6c00ce3d4744cc0787432e050bbec5af2b3fc4bf93bd4"
     "44000800000000000000000"
     "9b3b4c802dc300808141703a5241bfc2dbcd0745bb5364c3094bc9bc54230c459bbe8b3f4"
     "2bfdcbf0000000000000000"
     "6e3c5300494000003b411fc19d3c0080a9eb403bee753e3d0000008098dc1dc10000c3c11"
     "dbd61000000000000000000"
     "903c413f7e00cb3a0080ea3cdfbec3400000008069ec4780db6af2bd9c1ee8c3000000003"
     "5bd00000000000000000000"
     "028000802b3f1080008093412bc200001ec2033b53719f421e466043a53a523ccfbf03c17"
     "000b7bb0000000000000000"
     "3d40723b2143008036808bc03f80c83dc30e5e414d8df33ff1023a422d5e2144a2bbfcc2b"
     "ebb033b0000000000000000"
     "26005cc03c80414012c142400a3c8bc0000000006b27924185dc6980c7214000d0bb0000f"
     "13ba2be0000000000000000"
     "edbdce3c86bf153e40c03fbf45803ec12bc573ba00000080b6a7903a2999604300001cbec"
     "9bed6420000000000000000"
     "833a21c36a00843c603de3badc3e9bbde29aa13f3a6731c0b56b7841249ed6bf1c42803a0"
     "08032bf0000000000000000"
     "02bf7c43ef3cca40bf406400d13f59c0a66c12404a2bd9bd739cbfbda7dcf0416c80abbf0"
     "00000800000000000000000"
     "0000013e0080354219c22f3cf73bfdbeae8055b9000000000000008027d86ab9973c1cbc0"
     "53fe3400000000000000000"
     "d93c434100800000fdbb000026bb35bf9513af392095a7ba000000006cf5d54055be90bd5"
     "040ecc20000000000000000"
     "e83f2442b84164bdb7410080d5ba6e0047fc3f3ff9f1bb3d6f5b3b3eeda6a3be4e0047bb3"
     "03b4e800000000000000000"
     "77425fc1ec3c6d00e4bc3c3c11008abd9c1dff3e000000009127aec3e2336d80803b0f804"
     "8407f000000000000000000",
     "e28ef2c5838ca643d1244d45e3cc51c33d9cb3c5eebfe9c5bb217246da42a644"
     "6f75eec187d882434f057444c3c7d243cf2b2ac6a9043d4628b72f459b0129c5"
     "721671c56a87b6c39304f4c5b5858cc547d2bc439c91f4423b988843cbcb5945"
     "9d8d5d41c4c90d44e05c12c2b284ef45004a2042faf3d8c34896ed43a55ef742"
     "0bdcb146604dc144d506afc362659f42ee484d43cc768dc645416a45c14194c5"
     "c5e67ac3fb3c84c4d3da23c3221c62c47159c945bc0c49435517d5c4077ca040"
     "80506644899dbf43e2f10ec64854ecc4ee6dfbc3d3cf42c49a2aee45ea87d0c0"
     "412370c1790585c4aed38c436cecae44e51e4bc4c6c452441ebd0c4181bd99c3"
     "7cce86455a8d1644ade6c5465aa64746cc727ec505ee14c6cfcc7cc4fac658c6"
     "710d6244d00c7b438b8c9f41adff59c3b6cc87c6ec11aa4662038b446b28ba45"
     "8f4ff54465b6134426850c42341e03c1b8d325c0806d95bf698666c5c033d3c3"
     "f24b3e41475d9d42d82b35428b1decbfa79be840a3de83c2182f354474d994c2"
     "864c2a471ce19646fd7cc144e3c68644106add430be6c2c4713b7ac4332f06c4"
     "856b9743b120edc6ac9ef5402bad59c4ba15cfc37f47e442e5b79fc499baaf44"
     "18bcecc435ad85c44bd60945aac0b74485b70c45b04bbbc44186b5c5e14e18c5"
     "9ed6eb420af6b044689d98c3e8808ec4066aaf423cc0a4c11299ec439efa9e42"},
    {"k8_f32 (warp 109)", "m16n8k8", "f16", "f32",
     "ef434743d8bc9dc3ee4f3ca229af649b4020b044d07fab41b47e1dbb3ae468c4fab43737a"
     "f3ec5480000000000000000"
     "e8471d972b2678464b3c412d27292f1b50a43e3b8e4ce6bdba06dc394e5a2bc2a1d9339ff"
     "7335fb70000000000000000"
     "2117e2d78a56893255d9b436c74b3843c6fb433a2dc3e9bcb41461c1bc911bc320b77cda1"
     "9bc4a980000000000000000"
     "eb41d5b106a0154e8142d4d2272cb49c7c5c54baddb3dac380d7673f935e9ac184b88b209"
     "eb27fda0000000000000000"
     "f53e94d47a945b214d41ba5b549ce5ab660a7fba33b5f3bbf869cc43aac06a3aa7a17cc27"
     "d41df1c0000000000000000"
     "963942d99728b240ab391538303b32356f238fbb60ff80bde7142b4276a94fc1fa49f3a9e"
     "a1da5cd0000000000000000"
     "4fa165be9aa67cd597b2a2ac0bb0a62b60833cc55b3f11c3dafc76c5f671eb4027c065548"
     "4417d400000000000000000"
     "98ce6eaa73a22cd1a0c65ed9bbc8bbbb0d156dbdf89bcb41af09324287c15bc36e236b27b"
     "d2e00ca0000000000000000"
     "1d3d1e2c3a38fe1544b2c9c4554210d8181f6443b87932bda16cff449e98e3c4295a2c4c0"
     "dcd8cb60000000000000000"
     "04a09db98cbb473e162020c30853e09c556438be02b89dc30e57dbba122b75c0bf5423a4a"
     "cd6ed4e0000000000000000"
     "7fc83524b4281f1bbea755ccbb4c82496513773b48bf44be6dfb6b3c5d8166c093b72f980"
     "aa8b2a50000000000000000"
     "c4158c2b67539d4a28bb0d248c98c94d55a1d2398a3933bb47412944072b15bf2a3de257f"
     "04ef8550000000000000000"
     "a1202c1f292db2ca78304047a3c3d897ab1766c2515c4c44c414c34335332839b93a5732e"
     "195a33a0000000000000000"
     "5c417423dd5b1ecb032791a02dc35a9ea5d11fbd960bbcc13b07cc3cda34a5449d2835c84"
     "3d5dd410000000000000000"
     "e79446b79e1b953682529d1b8728081acfd75a3d0f6c8442124b5dc16d6e0242189d2e32d"
     "ca18ea40000000000000000"
     "215bf030c93e7d55073db44420d0cc3b1af9e63f4b198abfbd635abf569ff9c347bee81ab"
     "c2a26ba0000000000000000"
     "d0a1efc266d94323b1a14c9eec1c384eb684fb38bf0e6c3f452978bc06145a3f694dfe523"
     "19da3d50000000000000000"
     "a036fddbabca564a872befcc8c2b562d8be98ec3646d533cb436bec20648e33c9519912a8"
     "22daa4b0000000000000000"
     "34adb5a85442524963b57a5272dbfc4f9373463f5a900ec416d34244bffe2bc3cf422a418"
     "64482ce0000000000000000"
     "24af73bbed50fac9dd1ef3153214735577b7d8c4b4fe623fa9d7af3a8e1d76c48b3d4a15b"
     "f3c94500000000000000000"
     "c234ec1a0f5b85c8aec8fd4c2048133f96b374416cb109c00093d8c09e6c49c3e34f9b22e"
     "71d51b20000000000000000"
     "7ca80714e342094b67553d97d3c454bf02b94b3f6e1170c070fefbc3db79813b822531d14"
     "65b08160000000000000000"
     "38360633949d6fd9899f721fb719e5a3700297c1758e783d4aa3c4411c0dcc39322a95c33"
     "f20acb10000000000000000"
     "fcd0dfd912bb12aa6042ca2b4f9506b503aa713e87b6b23f1cdc55c33d75ae3ea2c067958"
     "dd4ca1b0000000000000000"
     "3542a8cea9c509c38444302c3ed6e89b845e8c3adce16a4285ec4e44c5fd0dbd654c821f9"
     "75ae4520000000000000000"
     "acce80968f57d49729b40e5be4afeb45921ca03ad7b8d13ad0e51ec0fc9095c06e9b3eb62"
     "ec7029b0000000000000000"
     "1cb2b9dbc94570b0a4b421bde3c6b5a2c6876dc1785854bafdb2a940cbc05e3f71bbb9240"
     "72b7dce0000000000000000"
     "9ecab8c9c21f614fd99f6b2b9e2f06a960f5093d9edc99bb767c903c4de9fcb7899787159"
     "dd4e45a0000000000000000"
     "53484fb7af4b41be484b67c39c2f472b70c7a8bd0b6a613fc9d14cbf1eb5cac07b3e12afb"
     "f4734c50000000000000000"
     "1dbde7cef84c1036c621f3c1c4bba8c75b65253b6a7fe03a9295673ae04b523a92c7fc3f1"
     "c28d0250000000000000000"
     "fb37fd4c17ad0b5559db4f1b72a7cc40bd8f1fbe4dbdef3b0fb68a431ded49bd25c9854db"
     "144552a0000000000000000"
     "42146718c5376a4652b51fda394a9d98625c36bc973dac3df748ea3c54a5fa3fd055ada61"
     "bbd09da0000000000000000",
     "2255cc461df008c6f7f2bcc21e2c8cc4c804b2446f13c6c179e529452ed9c6c2"
     "cb9700c2122c1544d7b1cf426b19e5c30cc98642af8a3bc5216ef0c2a12e87c4"
     "91723c43fcdc0c43446491463fd6c0c5870958c41d75b444a8a6a1c5542e47c2"
     "afaadec5d49bd945d38e82c52d917243ff49bf42458d2ec5d4b127426d8806c5"
     "bcc3654345fe9b4188310845fad6e4c41bff83435a339ac38524de442c07dbc2"
     "d88c293f0d8d89420da4bb42c8553dc3e5e0f8417a77bb42a9642b44f569ac45"
     "d7a80fc46d334d444be12fc746b44045b7d40144abcebec30234ea46c4b3b444"
     "fecb9d43fa60e6c34b683dc4647d1c4481bac23f8c80a546b23ba740b3a60dc5"
     "7d3f85c28060d441de146043c3221244aef1d5c376650645590b0fc7860a9cc3"
     "ce084fc3aff81c46010e33c5df3dc4c50745ccc4939d02c49b453ec502962a45"
     "7c2657c01596c04021320a47c71e41c62d15b9c681e56942455d2c4748451642"
     "f6b883c20b67ca4221597745ae13e1453e9b9d40c04767c5483d6a45aefa5dc5"
     "01105b472f1c89c61583a3c67183b34467624fc5e5d8f4c1b83a3746260db7c0"
     "e5e202c5401285443e1e93c30f4e2ec347784842c554cac5ef91d2c21ebe76c4"
     "5d9074c504c6ad4437d29ec681aeb8455012c844f2497343234fa64536ccc741"
     "da3f5543c1faa744edd536443b62224365b02243321aca4334bf87430c12d544"},
    {"k8_bf16 (warp 260)", "m16n8k8", "bf16", "f32",
     "b83fa5bd7fbc6dbbb43b25c2c6babb3b5f9dd043a9b5b5bb2f9c43c1f88c1a3aeac175bd4"
     "bbe6a3e0000000000000000"
     "32b9773d0cbe5d3fd5bbea41f9bcfb42cbc18b4026c70fbb8d4fe6c3903027bea53c4235e"
     "33c4d420000000000000000"
     "17bee13f92beffc1a0c008c3c93f6541a8f78840890d79bb7da783c3dd06c3befbbe2242b"
     "8c28b3f0000000000000000"
     "f1bcbb3bc7bd8bb97fbf99bfc43c8bbf7009cec3a4a3f4ba6df359c5ff5d403dd9c29a403"
     "abdd8be0000000000000000"
     "e63fb5c23441bcc1bc3d1dbe8bbe8742b9da6cc1fcedf3c12932fa3a1ee005be24be74c00"
     "44206c10000000000000000"
     "5cbfe43cb13e03c36a41193bf33eeebbadca6dc46183354324cf95bc046eeebd6dbe9341b"
     "93c65420000000000000000"
     "c13ff63d5a4363bcabbe2a3e65c1ee3b22ffdcbcdfde72bb648fabbbb71dd9c452be8ec15"
     "e3f8c400000000000000000"
     "2e3f8d42da3f81bd41435ebe40bcd7c2c9ca16bbc31bf141cd3f42c4769aafc013bfa6370"
     "440febb0000000000000000"
     "4a42e8be573ce63c61c25f3fc03c48c13ed97f3a082a8141120e57c0bbc228bb493c14be5"
     "b4194bc0000000000000000"
     "f53955bcbcbbeb415e406dbcc23f19bc2e0c3f3b34ccad42c6dd7139d136eebcb2bb1941c"
     "f40ec3f0000000000000000"
     "8fbe1bc000bf703b103c8ebd2b4061c2186af5ba6d6eedc306e04e3e718a29b8fac18a3cf"
     "13c2ebc0000000000000000"
     "08becfba9d422dbb49c153b9d4be7e43884939c2febb5b426eaad33a2fe1243e9f42ea3cc"
     "bbedfbd0000000000000000"
     "80bcaebe053cb73cbe42afbe04be353b43ca0c3a5d9ccb3b7d6fd4b8fd0cc5418ec07fc15"
     "2be02400000000000000000"
     "2ec1cabe9041ecbbd5bf0e3c0f427bc3d67270bf124148bfe1e2c33d111f7a3c8cc22abd9"
     "9c2323e0000000000000000"
     "c13e433b5d3e96bcd141d6c1703c17c1f775163a698dcebde0e21cc20cd0bb39353ef742d"
     "3bc78410000000000000000"
     "41c39cbcbbbaa83b7c3b8b3cdd3de83fe652fe3ababa7e3ea81f5443944757bf0f3cd6c0b"
     "8bcfabe0000000000000000"
     "eac14e424b3b27c0713ceec1f540c5bd9cc4d0bcb47d3ac3392ba6bcff67884033be653d9"
     "8c224420000000000000000"
     "74c1624277bdc6c13e3bf8406340683c945fe1baf27991393420fe3e9ac11fc145bc29c0a"
     "eba32400000000000000000"
     "2f3de53ed3ba67bc57bdd43f8b3d453fc8c047c5e671ae3d8263bbbf85e2dec43bc1e63dd"
     "abcb1ba0000000000000000"
     "21bec640c13fc2bb72c24b3f5bc1eb402c703fc5e1f2ae3fd779f33ae0fcd3c3fc3fe33d8"
     "9be8d400000000000000000"
     "c6c1ccba9cbb3cc1e7c2ce3de4c2074225c3a1c4ab334f45137b763ad842b73d493cf1396"
     "2ba8a400000000000000000"
     "44bd1a3cb63c8cbf713bf0429fbb10bf1f24843cd3aed142c8a323c052a4d040e942e8be3"
     "c40553e0000000000000000"
     "283ea64074bb34bcd3bce2c082bc693fb5725fba0ce4603b0ea5223fad4940443ec070bf5"
     "13f02420000000000000000"
     "783f65c1183a76bfe2bb9cbba5423cbe23ca6d3f74e32b3b04b49a440ec1a543533bdac22"
     "7c156410000000000000000"
     "efc115c1e53c50427940a241173f2cbcbbf6fd40eda8bbbe452c373df4c21245b34158ba1"
     "842f6410000000000000000"
     "6cc23c405742303edbbbfbc2aabfe03f5422b1bc379f6d40bf248944d2e232ba16bba03a5"
     "cbc03bc0000000000000000"
     "01bd8c3bf1bc5e3f45bc0942fbc0d5bcab6855bddddb3a393e3da9429443973d533b47c1e"
     "1419e410000000000000000"
     "b2c0efbb403ff43e47ba9fbbd8415c43f51fdb3f198df43df3414843fc3be53c0fbc143e8"
     "23df3400000000000000000"
     "96bd083d10c1c9bf4b3fafc0fec062424ab66b3bde4117bf1872583e739e13c32e41e13e3"
     "ebe24400000000000000000"
     "23be843b52ba56be6c3f25c3e142c13d4d34ffc3dd6e80c4469e1dc0e4bf2b3a4d3fc2bdc"
     "13f13400000000000000000"
     "123e7340ce3bd53e8fc04e40a0c0e9bcf40617be8bbf9043a3c22ebb3d1db04239c2143f8"
     "9bd683e0000000000000000"
     "0bc066bd19bf353d5c415141a5ba6241381906c07d375dbcc91974c4c0e1a3c46b41763b5"
     "4c22d420000000000000000",
     "d3d5e043dfcbefc1ee80a1c4a2731144f2b7e8400bf05343a5dbe1c3d37175c5"
     "3452b7405fcceebfd80285c355ed6041c8e2c8c390f3b741da3141c5e368dfc0"
     "d3b14f43f1109c430a0b1bc4b9cf13c52c3768c4a675984436b2f7c5967eab43"
     "03bb5ec1eb69f3c55f9e09c588570ec522e54342e9cd48c26e2403c41d491bc6"
     "9614c3c408ac5242752205c6ed4ef7438865a7bfce92d6c3284acc450d4092be"
     "3fe0c2c0b174ebc3290ca6427c513fc19f378b445f5f1944a79fcdbefdb39244"
     "3499a3462788d64254530bbf8839a44189ff6fc62f363f44c2d3ddc049d49dc4"
     "119cbfc3e1509ec489c827c223fd02458657a93fc9cd32c5457e54430d286a40"
     "1145654468ed2344042724c30796dcc33aba01448b04c2430cc1e7c298970c42"
     "439250c55fd71ac5357685421c47dec45da168c5cfd49dc3b67c513e414ac8c3"
     "bd8805c46eab4945cf2f89c082d6c7417cbd8e42f09c6e447ded32c1a75d4543"
     "e1605240c19ac144e27533408f3f5b44b1dc1ac4c5cd81c3cdb09a44e24aa343"
     "ab9ab944715bdd42a0fc3ac24bcd0445eaeecdc3d0f88945d4f18f44c23b8cc5"
     "61b34fc1aed2d6c5ebc8b042cf09c24571a626c46750e4c378fe3d43622d9e42"
     "7a9cc343ff8a85c2c7baac43b01217c3a8db2bc4bfce08c49f2f50c25437e842"
     "733cb5c03f8a8843dd0d563faf70a542c7c84bc264e314c210de93c4b84db1c4"},
};

static unsigned hex_bytes(const char *h, uint8_t *out) {
  unsigned n = 0;
  for (; h[0] && h[1]; h += 2) {
    unsigned v;
    sscanf(h, "%2x", &v);
    out[n++] = (uint8_t)v;
  }
  return n;
}

static bool is_nan_code(uint32_t v, bool half, bool bf) {
  if (!half)
    return (v & 0x7f800000u) == 0x7f800000u && (v & 0x7fffff);
  return bf ? (v & 0x7f80) == 0x7f80 && (v & 0x7f)
            : (v & 0x7c00) == 0x7c00 && (v & 0x3ff);
}

static void test_mma_h200(void) {
  for (size_t v = 0; v < sizeof h200_mma / sizeof h200_mma[0]; v++) {
    const H200Mma *h = &h200_mma[v];
    bool k8 = !strcmp(h->shape, "m16n8k8"), f16acc = !strcmp(h->acc, "f16");
    unsigned an = k8 ? 2 : 4, bn = k8 ? 1 : 2, cn = f16acc ? 2 : 4;
    const char *cty = f16acc ? "i32" : "f32";
    char text[2048];
    snprintf(text, sizeof text,
             "func @m(%%src: !simt.ptr<global>, %%unused: !simt.ptr<global>, "
             "%%dst: !simt.ptr<global>) attributes {kernel} {\n"
             "  %%lane = simt.lane_id : -> i32\n"
             "  %%l = arith.exti %%lane : i32 to i64\n"
             "  %%c48 = arith.constant 48 : i64\n"
             "  %%c16 = arith.constant 16 : i64\n"
             "  %%c32 = arith.constant 32 : i64\n"
             "  %%oi = arith.muli %%l, %%c48 : i64\n"
             "  %%oo = arith.muli %%l, %%c16 : i64\n"
             "  %%pa = simt.ptr_add %%src, %%oi : !simt.ptr<global>, i64 -> "
             "!simt.ptr<global>\n"
             "  %%pc = simt.ptr_add %%pa, %%c16 : !simt.ptr<global>, i64 -> "
             "!simt.ptr<global>\n"
             "  %%pb = simt.ptr_add %%pa, %%c32 : !simt.ptr<global>, i64 -> "
             "!simt.ptr<global>\n"
             "  %%po = simt.ptr_add %%dst, %%oo : !simt.ptr<global>, i64 -> "
             "!simt.ptr<global>\n"
             "  %%a = simt.load %%pa : !simt.ptr<global> -> !simt.vec<%uxi32>\n"
             "  %%b = simt.load %%pb : !simt.ptr<global> -> !simt.vec<%uxi32>\n"
             "  %%c = simt.load %%pc : !simt.ptr<global> -> !simt.vec<%ux%s>\n"
             "  %%d = simt.mma %%a, %%b, %%c {shape = \"%s\", a_type = \"%s\", "
             "b_type = \"%s\", acc_type = \"%s\"} : !simt.vec<%uxi32>, "
             "!simt.vec<%uxi32>, !simt.vec<%ux%s> -> !simt.vec<%ux%s>\n"
             "  simt.store %%d, %%po : !simt.vec<%ux%s>, !simt.ptr<global>\n"
             "  return\n}\n",
             an, bn, cn, cty, h->shape, h->ab, h->ab, h->acc, an, bn, cn, cty,
             cn, cty, cn, cty);
    uint8_t in[32 * 48], want[32 * 16];
    CHECK_EQ_INT(hex_bytes(h->in, in), sizeof in);
    CHECK_EQ_INT(hex_bytes(h->out, want), sizeof want);
    for (int model = 0; model < 2; model++) {
      Run r;
      if (!setup(&r, text)) {
        CHECK(false);
        return;
      }
      if (model)
        tl_simt_vm_set_mma_model(r.vm, TL_SIMT_MMA_SM90);
      uint8_t out[32 * 16] = {0};
      uint32_t dummy = 0;
      TlSimtLaunch l = launch1(1, 32, 0);
      TlVmArg args[3] = {bytes_arg(in, sizeof in), bytes_arg(&dummy, 4),
                         bytes_arg(out, sizeof out)};
      CHECK(run(&r, &l, 3, args));
      unsigned differ = 0;
      bool half = f16acc, bf = false;
      unsigned w = half ? 2 : 4;
      for (unsigned i = 0; i < sizeof out; i += w) {
        uint32_t x = 0, y = 0;
        memcpy(&x, out + i, w);
        memcpy(&y, want + i, w);
        differ +=
            x != y && !(is_nan_code(x, half, bf) && is_nan_code(y, half, bf));
      }
      if (model && differ)
        fprintf(stderr, "mma %s: %u results differ from the H200's\n", h->what,
                differ);
      /* The GPU's bits with the H200 model; tl.dot's order differs. */
      CHECK(model ? differ == 0 : differ > 0);
      teardown(&r);
    }
  }
}

/*===--- ldmatrix, cp.async, register ops, copy ---------------------------===*/

static void test_ldmatrix(unsigned num, bool trans) {
  char text[2048];
  snprintf(
      text, sizeof text,
      "func @ldm(%%src: !simt.ptr<global>, %%unused: !simt.ptr<global>, %%dst: "
      "!simt.ptr<global>) attributes {kernel, threads = 32} {\n"
      "  %%lane = simt.lane_id : -> i32\n"
      "  %%l = arith.exti %%lane : i32 to i64\n"
      "  %%c16 = arith.constant 16 : i64\n"
      "  %%c4 = arith.constant %u : i64\n"
      "  %%o = arith.muli %%l, %%c16 : i64\n"
      "  %%ps = simt.ptr_add %%src, %%o : !simt.ptr<global>, i64 -> "
      "!simt.ptr<global>\n"
      "  %%row = simt.load %%ps : !simt.ptr<global> -> !simt.vec<4xi32>\n"
      "  %%s = simt.smem_base : -> !simt.ptr<shared>\n"
      "  %%ss = simt.ptr_add %%s, %%o : !simt.ptr<shared>, i64 -> "
      "!simt.ptr<shared>\n"
      "  simt.store %%row, %%ss : !simt.vec<4xi32>, !simt.ptr<shared>\n"
      "  simt.barrier\n"
      "  %%r = simt.ldmatrix %%ss {num = %u%s} : !simt.ptr<shared> -> "
      "!simt.vec<%uxi32>\n"
      "  %%od = arith.muli %%l, %%c4 : i64\n"
      "  %%pd = simt.ptr_add %%dst, %%od : !simt.ptr<global>, i64 -> "
      "!simt.ptr<global>\n"
      "  simt.store %%r, %%pd : !simt.vec<%uxi32>, !simt.ptr<global>\n"
      "  return\n}\n",
      num * 4, num, trans ? ", trans" : "", num, num);
  uint16_t src[32 * 8];
  for (unsigned i = 0; i < 32 * 8; i++)
    src[i] = (uint16_t)rnd();
  uint32_t dst[32 * 4] = {0};
  char name[32];
  snprintf(name, sizeof name, "ldmatrix_x%u%s", num, trans ? "_trans" : "");
  TlLayout lay;
  bool ok = tl_layout_atom(&lay, name, NULL);
  CHECK(ok);
  uint32_t dummy = 0;
  bool ran = run3(text, src, sizeof src, &dummy, 4, dst, 32 * num * 4, 512);
  CHECK(ran);
  unsigned bad = 0;
  int64_t idx[2];
  for (unsigned t = 0; ran && t < 32; t++)
    for (int64_t i = 0; i < tl_layout_local_size(&lay); i++) {
      tl_layout_map(&lay, t, i, idx, NULL);
      unsigned r = (unsigned)idx[0], c = (unsigned)idx[1];
      uint16_t want = src[r * 8 + c];
      uint16_t got = (uint16_t)(dst[t * num + i / 2] >> (i % 2 * 16));
      bad += got != want;
    }
  if (bad)
    fprintf(stderr, "ldmatrix x%u%s: %u elements wrong\n", num,
            trans ? ".trans" : "", bad);
  CHECK(!bad);
}

static const char *cp_async_text =
    "func @cpa(%src: !simt.ptr<global>, %unused: !simt.ptr<global>, %dst: "
    "!simt.ptr<global>) attributes {kernel, threads = 32} {\n"
    "  %lane = simt.lane_id : -> i32\n"
    "  %l = arith.exti %lane : i32 to i64\n"
    "  %c16 = arith.constant 16 : i64\n"
    "  %o = arith.muli %l, %c16 : i64\n"
    "  %ps = simt.ptr_add %src, %o : !simt.ptr<global>, i64 -> "
    "!simt.ptr<global>\n"
    "  %s = simt.smem_base : -> !simt.ptr<shared>\n"
    "  %ss = simt.ptr_add %s, %o : !simt.ptr<shared>, i64 -> "
    "!simt.ptr<shared>\n"
    "  %c17 = arith.constant 17 : i32\n"
    "  %n = arith.remi %lane, %c17 : i32\n"
    "  simt.cp_async %ss, %ps, %n {size = 16, cache = \"cg\"} : "
    "!simt.ptr<shared>, "
    "!simt.ptr<global>, i32\n"
    "  simt.cp_async_commit\n"
    "  simt.cp_async_wait {pending = 0}\n"
    "  simt.barrier\n"
    "  %c31 = arith.constant 31 : i32\n"
    "  %other = arith.subi %c31, %lane : i32\n"
    "  %ol = arith.exti %other : i32 to i64\n"
    "  %oo = arith.muli %ol, %c16 : i64\n"
    "  %so = simt.ptr_add %s, %oo : !simt.ptr<shared>, i64 -> "
    "!simt.ptr<shared>\n"
    "  %v = simt.load %so : !simt.ptr<shared> -> !simt.vec<4xi32>\n"
    "  %pd = simt.ptr_add %dst, %o : !simt.ptr<global>, i64 -> "
    "!simt.ptr<global>\n"
    "  simt.store %v, %pd : !simt.vec<4xi32>, !simt.ptr<global>\n"
    "  return\n}\n";

static void test_cp_async(void) {
  uint8_t src[512], dst[512];
  for (unsigned i = 0; i < 512; i++)
    src[i] = (uint8_t)(rnd() | 1);
  memset(dst, 0xAB, sizeof dst);
  uint32_t dummy = 0;
  /* The last lane's source row ends the buffer: its 16 - n bytes past
   * the source size are not read (a ragged edge). */
  bool ran = run3(cp_async_text, src, sizeof src - 16 + 31 % 17, &dummy, 4, dst,
                  sizeof dst, 512);
  CHECK(ran);
  unsigned bad = 0;
  for (unsigned t = 0; ran && t < 32; t++) {
    unsigned o = 31 - t, n = o % 17;
    for (unsigned b = 0; b < 16; b++)
      bad += dst[t * 16 + b] != (b < n ? src[o * 16 + b] : 0);
  }
  CHECK(!bad);
}

static const char *regs_text =
    "func @regs(%src: !simt.ptr<global>, %unused: !simt.ptr<global>, %dst: "
    "!simt.ptr<global>) attributes {kernel, threads = 32} {\n"
    "  %lane = simt.lane_id : -> i32\n"
    "  %l = arith.exti %lane : i32 to i64\n"
    "  %c16 = arith.constant 16 : i64\n"
    "  %o = arith.muli %l, %c16 : i64\n"
    "  %ps = simt.ptr_add %src, %o : !simt.ptr<global>, i64 -> "
    "!simt.ptr<global>\n"
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
    "  %out = simt.build %sh, %pr, %lo, %fr : i32, i32, i32, i32 -> "
    "!simt.vec<4xi32>\n"
    "  %pd = simt.ptr_add %dst, %o : !simt.ptr<global>, i64 -> "
    "!simt.ptr<global>\n"
    "  simt.store %out, %pd : !simt.vec<4xi32>, !simt.ptr<global>\n"
    "  return\n}\n";

static void test_register_ops(void) {
  uint32_t src[128], dst[128] = {0};
  for (unsigned i = 0; i < 128; i++)
    src[i] = rnd() << 16 ^ rnd();
  for (unsigned t = 0; t < 32; t++)
    for (unsigned j = 0; j < 4; j++) {
      uint32_t *v = &src[t * 4 + j];
      if (((*v >> 10) & 31) == 31)
        *v ^= 1u << 14;
      if (((*v >> 26) & 31) == 31)
        *v ^= 1u << 30;
    }
  uint32_t dummy = 0;
  bool ran = run3(regs_text, src, sizeof src, &dummy, 4, dst, sizeof dst, 0);
  CHECK(ran);
  unsigned bad[4] = {0};
  for (unsigned t = 0; ran && t < 32; t++) {
    uint32_t x = src[t * 4], y = src[t * 4 + 1], z = src[t * 4 + 2],
             w = src[t * 4 + 3];
    uint32_t regs[5] = {x, y, z, w, 0};
    TlRegOp prmt = {TL_ROP_PRMT_R, 4, 0, 1, 2, 0};
    tl_regop_run(&prmt, 1, regs, 5, NULL);
    uint32_t want_pr = regs[4];
    TlRegOp lop = {TL_ROP_LOP3, 4, 0, 1, 3, 106};
    tl_regop_run(&lop, 1, regs, 5, NULL);
    uint32_t want_lo = regs[4];
    uint32_t want_fma =
        tl_f16_fma((uint16_t)x, (uint16_t)y, (uint16_t)w) |
        (uint32_t)tl_f16_fma((uint16_t)(x >> 16), (uint16_t)(y >> 16),
                             (uint16_t)(w >> 16))
            << 16;
    bad[0] += dst[t * 4] != src[(t ^ 1) * 4];
    bad[1] += dst[t * 4 + 1] != want_pr;
    bad[2] += dst[t * 4 + 2] != want_lo;
    bad[3] += dst[t * 4 + 3] != want_fma;
  }
  CHECK(!bad[0] && !bad[1] && !bad[2] && !bad[3]);
}

static const char *copy_text =
    "func @copy(%src: !simt.ptr<global>, %dst: !simt.ptr<global>, %n: i32) "
    "attributes {kernel, threads = 128} {\n"
    "  %tid = simt.thread_id {dim = \"x\"} : -> i32\n"
    "  %bid = simt.block_id {dim = \"x\"} : -> i32\n"
    "  %c128 = arith.constant 128 : i32\n"
    "  %base = arith.muli %bid, %c128 : i32\n"
    "  %i = arith.addi %base, %tid : i32\n"
    "  %ok = arith.cmpi lt, %i, %n : i32\n"
    "  scf.if %ok {\n"
    "    %i64 = arith.exti %i : i32 to i64\n"
    "    %c16 = arith.constant 16 : i64\n"
    "    %off = arith.muli %i64, %c16 : i64\n"
    "    %ps = simt.ptr_add %src, %off : !simt.ptr<global>, i64 -> "
    "!simt.ptr<global>\n"
    "    %v = simt.load %ps {align = 16, cache = \"cg\"} : !simt.ptr<global> "
    "-> !simt.vec<4xi32>\n"
    "    %pd = simt.ptr_add %dst, %off : !simt.ptr<global>, i64 -> "
    "!simt.ptr<global>\n"
    "    simt.store %v, %pd {align = 16} : !simt.vec<4xi32>, "
    "!simt.ptr<global>\n"
    "    scf.yield\n"
    "  }\n"
    "  return\n"
    "}\n";

static void test_copy(void) {
  Run r;
  if (!setup(&r, copy_text)) {
    CHECK(false);
    return;
  }
  int32_t count = 1000;
  size_t bytes = (size_t)count * 16 + 64;
  uint8_t *src = tl_xmalloc(bytes), *dst = tl_xmalloc(bytes);
  for (size_t i = 0; i < bytes; i++)
    src[i] = (uint8_t)rnd();
  memset(dst, 0x5A, bytes);
  TlSimtLaunch l = launch1((count + 127) / 128, 128, 0);
  TlVmArg args[3] = {bytes_arg(src, bytes), bytes_arg(dst, bytes),
                     tl_vm_arg_int(count)};
  CHECK(run(&r, &l, 3, args));
  unsigned bad = 0;
  for (size_t i = 0; i < bytes; i++)
    bad += dst[i] != (i < (size_t)count * 16 ? src[i] : 0x5A);
  CHECK_EQ_INT(bad, 0);
  TlSimtVmStats st = tl_simt_vm_stats(r.vm);
  CHECK_EQ_INT(st.blocks, 8);
  /* Names of parameters come from the source. */
  TlOp *k = tl_simt_vm_find_kernel(r.m, "copy");
  CHECK(k);
  CHECK_EQ_INT(tl_simt_vm_num_params(k), 3);
  CHECK_EQ_STR(tl_simt_vm_param_name(k, 2), "n");
  CHECK_EQ_INT(tl_simt_vm_param_index(k, "dst"), 1);
  CHECK_EQ_INT(tl_simt_vm_param_index(k, "nope"), -1);
  tl_free(src);
  tl_free(dst);
  teardown(&r);
}

/*===--- Divergence and reconvergence -------------------------------------===*/

/* Odd and even threads take different sides of an scf.if; each thread
 * loops `lane` times in scf.for and runs the Collatz iteration of tid + 1
 * in scf.while (each leaving on its own); then, reconverged, the whole
 * block shuffles and passes a barrier. */
static const char *diverge_text =
    "func @div(%out: !simt.ptr<global>) attributes {kernel} {\n"
    "  %tid = simt.thread_id {dim = \"x\"} : -> i32\n"
    "  %lane = simt.lane_id : -> i32\n"
    "  %c0 = arith.constant 0 : i32\n"
    "  %c1 = arith.constant 1 : i32\n"
    "  %c2 = arith.constant 2 : i32\n"
    "  %c3 = arith.constant 3 : i32\n"
    "  %c100 = arith.constant 100 : i32\n"
    "  %odd = arith.remi %tid, %c2 : i32\n"
    "  %isodd = arith.cmpi eq, %odd, %c1 : i32\n"
    "  %v = scf.if %isodd -> (i32) {\n"
    "    %a = arith.muli %tid, %c3 : i32\n"
    "    scf.yield %a : i32\n"
    "  } else {\n"
    "    %b = arith.addi %tid, %c100 : i32\n"
    "    scf.yield %b : i32\n"
    "  }\n"
    "  %s = scf.for %i = %c0 to %lane step %c1 : i32 iter_args(%acc = %c0) -> "
    "(i32) {\n"
    "    %n = arith.addi %acc, %i : i32\n"
    "    scf.yield %n : i32\n"
    "  }\n"
    "  %x0 = arith.addi %tid, %c1 : i32\n"
    "  %r:2 = scf.while (%x = %x0, %k = %c0) : (i32, i32) -> (i32, i32) {\n"
    "    %ne = arith.cmpi ne, %x, %c1 : i32\n"
    "    scf.condition(%ne) %x, %k : i32, i32\n"
    "  } do {\n"
    "  ^bb0(%x2: i32, %k2: i32):\n"
    "    %m = arith.remi %x2, %c2 : i32\n"
    "    %ev = arith.cmpi eq, %m, %c0 : i32\n"
    "    %h = arith.divi %x2, %c2 : i32\n"
    "    %t3 = arith.muli %x2, %c3 : i32\n"
    "    %t1 = arith.addi %t3, %c1 : i32\n"
    "    %nx = arith.select %ev, %h, %t1 : i32\n"
    "    %k3 = arith.addi %k2, %c1 : i32\n"
    "    scf.yield %nx, %k3 : i32, i32\n"
    "  }\n"
    "  %nb = simt.shfl %v, %c1 {mode = \"bfly\"} : i32, i32 -> i32\n"
    "  simt.barrier\n"
    "  %all = simt.build %v, %s, %r#1, %nb : i32, i32, i32, i32 -> "
    "!simt.vec<4xi32>\n"
    "  %t64 = arith.exti %tid : i32 to i64\n"
    "  %c16 = arith.constant 16 : i64\n"
    "  %o = arith.muli %t64, %c16 : i64\n"
    "  %p = simt.ptr_add %out, %o : !simt.ptr<global>, i64 -> "
    "!simt.ptr<global>\n"
    "  simt.store %all, %p : !simt.vec<4xi32>, !simt.ptr<global>\n"
    "  return\n"
    "}\n";

static int32_t side(int t) { return t % 2 ? t * 3 : t + 100; }

static void test_divergence(void) {
  Run r;
  if (!setup(&r, diverge_text)) {
    CHECK(false);
    return;
  }
  int32_t out[64 * 4] = {0};
  TlSimtLaunch l = launch1(1, 64, 0);
  TlVmArg a = bytes_arg(out, sizeof out);
  CHECK(run(&r, &l, 1, &a));
  unsigned bad = 0;
  for (int t = 0; t < 64; t++) {
    int lane = t % 32, steps = 0;
    for (int64_t x = t + 1; x != 1; x = x % 2 ? 3 * x + 1 : x / 2)
      steps++;
    bad += out[t * 4] != side(t);
    bad += out[t * 4 + 1] != lane * (lane - 1) / 2;
    bad += out[t * 4 + 2] != steps;
    bad += out[t * 4 + 3] != side(t ^ 1);
  }
  CHECK_EQ_INT(bad, 0);
  TlSimtVmStats st = tl_simt_vm_stats(r.vm);
  CHECK_EQ_INT(st.blocks, 1);
  CHECK_EQ_INT(st.barriers, 1);
  teardown(&r);
}

/*===--- Ids in 3-D blocks and grids --------------------------------------===*/

static const char *ids_text =
    "func @ids(%out: !simt.ptr<global>) attributes {kernel} {\n"
    "  %tx = simt.thread_id {dim = \"x\"} : -> i32\n"
    "  %ty = simt.thread_id {dim = \"y\"} : -> i32\n"
    "  %tz = simt.thread_id {dim = \"z\"} : -> i32\n"
    "  %bx = simt.block_id {dim = \"x\"} : -> i32\n"
    "  %by = simt.block_id {dim = \"y\"} : -> i32\n"
    "  %nx = simt.block_dim {dim = \"x\"} : -> i32\n"
    "  %ny = simt.block_dim {dim = \"y\"} : -> i32\n"
    "  %nz = simt.block_dim {dim = \"z\"} : -> i32\n"
    "  %gx = simt.grid_dim {dim = \"x\"} : -> i32\n"
    "  %lane = simt.lane_id : -> i32\n"
    "  %warp = simt.warp_id : -> i32\n"
    "  %a = arith.muli %tz, %ny : i32\n"
    "  %b = arith.addi %a, %ty : i32\n"
    "  %c = arith.muli %b, %nx : i32\n"
    "  %t = arith.addi %c, %tx : i32\n"
    "  %d = arith.muli %by, %gx : i32\n"
    "  %blk = arith.addi %d, %bx : i32\n"
    "  %per = arith.muli %nx, %ny : i32\n"
    "  %per2 = arith.muli %per, %nz : i32\n"
    "  %e = arith.muli %blk, %per2 : i32\n"
    "  %g = arith.addi %e, %t : i32\n"
    "  %v = simt.build %t, %lane, %warp, %blk : i32, i32, i32, i32 -> "
    "!simt.vec<4xi32>\n"
    "  %g64 = arith.exti %g : i32 to i64\n"
    "  %c16 = arith.constant 16 : i64\n"
    "  %o = arith.muli %g64, %c16 : i64\n"
    "  %p = simt.ptr_add %out, %o : !simt.ptr<global>, i64 -> "
    "!simt.ptr<global>\n"
    "  simt.store %v, %p : !simt.vec<4xi32>, !simt.ptr<global>\n"
    "  %c2 = arith.constant 2 : i32\n"
    "  %bad = arith.cmpi eq, %blk, %c2 : i32\n"
    "  %yz = arith.cmpi eq, %ty, %c2 : i32\n"
    "  %both = arith.andi %bad, %yz : i1\n"
    "  scf.if %both {\n"
    "    %q = arith.divi %tx, %tz : i32\n"
    "    scf.yield\n"
    "  }\n"
    "  return\n"
    "}\n";

/* A grid of 2 x 3 blocks of 8 x 4 x 2 threads: thread_id, block_id,
 * lane_id and warp_id; block 2 then divides by zero in a thread with
 * z = 0, named by its (x, y, z). */
static void test_ids(void) {
  Run r;
  if (!setup(&r, ids_text)) {
    CHECK(false);
    return;
  }
  int32_t out[6 * 64 * 4];
  memset(out, 0xff, sizeof out);
  TlSimtLaunch l = {{2, 3, 1}, {8, 4, 2}, 0};
  TlVmArg a = bytes_arg(out, sizeof out);
  bool ok = !TL_FAILED(tl_simt_vm_run_named(r.vm, r.m, NULL, &l, 1, &a));
  CHECK(!ok);
  CHECK_EQ_STR(tl_str_cstr(&r.diags.text),
               "34:10: error: 'arith.divi' op integer division by zero\n"
               "1:1: note: in thread 16 = (0, 2, 0) (warp 0, lane 16)\n"
               "1:1: note: in block (0, 1, 0) of the grid (2, 3, 1)\n");
  unsigned bad = 0;
  for (int b = 0; b < 3; b++) /* blocks 0, 1 and 2 stored before the error */
    for (int t = 0; t < 64; t++) {
      const int32_t *v = &out[(b * 64 + t) * 4];
      bad += v[0] != t || v[1] != t % 32 || v[2] != t / 32 || v[3] != b;
    }
  CHECK_EQ_INT(bad, 0);
  teardown(&r);
}

/*===--- cvt --------------------------------------------------------------===*/

/* One conversion over a buffer: thread i converts element i. */
static bool run_cvt(const char *from, const char *to, const char *attrs,
                    const void *in, size_t in_bytes, unsigned in_size,
                    void *out, unsigned out_size, unsigned n) {
  char text[2048];
  snprintf(text, sizeof text,
           "func @cvt(%%src: !simt.ptr<global>, %%dst: !simt.ptr<global>) "
           "attributes {kernel} {\n"
           "  %%t = simt.thread_id {dim = \"x\"} : -> i32\n"
           "  %%b = simt.block_id {dim = \"x\"} : -> i32\n"
           "  %%bd = simt.block_dim {dim = \"x\"} : -> i32\n"
           "  %%bb = arith.muli %%b, %%bd : i32\n"
           "  %%i = arith.addi %%bb, %%t : i32\n"
           "  %%i64 = arith.exti %%i : i32 to i64\n"
           "  %%sa = arith.constant %u : i64\n"
           "  %%sd = arith.constant %u : i64\n"
           "  %%oa = arith.muli %%i64, %%sa : i64\n"
           "  %%od = arith.muli %%i64, %%sd : i64\n"
           "  %%pa = simt.ptr_add %%src, %%oa : !simt.ptr<global>, i64 -> "
           "!simt.ptr<global>\n"
           "  %%pd = simt.ptr_add %%dst, %%od : !simt.ptr<global>, i64 -> "
           "!simt.ptr<global>\n"
           "  %%x = simt.load %%pa : !simt.ptr<global> -> %s\n"
           "  %%y = simt.cvt %%x %s : %s -> %s\n"
           "  simt.store %%y, %%pd : %s, !simt.ptr<global>\n"
           "  return\n}\n",
           in_size, out_size, from, attrs, from, to, to);
  Run r;
  if (!setup(&r, text))
    return false;
  TlSimtLaunch l = launch1(n / 64, 64, 0);
  TlVmArg args[2] = {bytes_arg((void *)in, in_bytes),
                     bytes_arg(out, (size_t)n * out_size)};
  bool ok = run(&r, &l, 2, args);
  teardown(&r);
  return ok;
}

/* The codes of t (16 bits) in increasing order of value, without NaNs,
 * with one zero: the reference for directed rounding picks neighbours. */
typedef struct Grid16 {
  double v[65536];
  uint16_t c[65536];
  unsigned n;
} Grid16;

static int cmp_grid(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static Grid16 *grid16(TlDType t) {
  Grid16 *g = tl_xcalloc(1, sizeof *g);
  typedef struct {
    double v;
    uint16_t c;
  } P;
  P *p = tl_xmalloc(sizeof(P) * 65536);
  unsigned n = 0;
  for (uint32_t c = 0; c < 65536; c++) {
    double v = tl_dtype_decode(t, c);
    if (isnan(v) || (v == 0 && c))
      continue;
    p[n].v = v;
    p[n].c = (uint16_t)c;
    n++;
  }
  qsort(p, n, sizeof(P), cmp_grid);
  for (unsigned i = 0; i < n; i++) {
    g->v[i] = p[i].v;
    g->c[i] = p[i].c;
  }
  g->n = n;
  tl_free(p);
  return g;
}

/* The code of x rounded in direction r (0 rn, 1 rz, 2 rm, 3 rp) by the
 * grid of finite and infinite values; the sign of a zero result is x's. */
static uint16_t grid_round(const Grid16 *g, double x, int r, uint16_t rn) {
  if (r == 0)
    return rn; /* the codec's nearest-even, itself checked exhaustively */
  unsigned lo = 0, hi = g->n - 1;
  while (hi - lo > 1) {
    unsigned mid = (lo + hi) / 2;
    if (g->v[mid] <= x)
      lo = mid;
    else
      hi = mid;
  }
  double a = g->v[lo], b = g->v[hi];
  uint16_t ca = g->c[lo], cb = g->c[hi];
  if (a == x || b == x) { /* exact */
    uint16_t c = a == x ? ca : cb;
    return x == 0 && signbit(x) ? (uint16_t)(c | 0x8000) : c;
  }
  /* Below and above: the largest finite value is the last below inf. */
  bool down = r == 2 || (r == 1 && x > 0);
  uint16_t c = down ? ca : cb;
  double v = down ? a : b;
  if (v == 0)
    c = x < 0 ? 0x8000 : 0;
  return c;
}

static void test_cvt_f32_to_half(void) {
  static const char *rn[4] = {"rn", "rz", "rm", "rp"};
  const unsigned n = 1024;
  for (int h = 0; h < 2; h++) {
    TlDType t = h ? tl_dtype_bf16() : tl_dtype_f16();
    Grid16 *g = grid16(t);
    uint32_t in[1024];
    for (unsigned i = 0; i < n; i++) {
      uint32_t u = rnd() << 16 ^ rnd();
      /* Mostly values near the half's range, some anywhere. */
      if (i % 4 && !h)
        u = (u & 0x80ffffffu) | ((100u + rnd() % 46) << 23);
      if (i < 8) {
        float special[8] = {0.0f,      -0.0f, 65504.0f, 65520.0f,
                            -65520.0f, 1e-8f, -3e-8f,   1e30f};
        memcpy(&u, &special[i], 4);
      }
      if (((u >> 23) & 0xff) == 0xff)
        u ^= 1u << 30; /* no NaN or inf here */
      in[i] = u;
    }
    for (int r = 0; r < 4; r++) {
      uint16_t out[1024];
      char attrs[48];
      snprintf(attrs, sizeof attrs, "{rounding = \"%s\"}", rn[r]);
      bool ok = run_cvt("f32", h ? "bf16" : "f16", attrs, in, sizeof in, 4, out,
                        2, n);
      CHECK(ok);
      unsigned bad = 0;
      for (unsigned i = 0; ok && i < n; i++) {
        float f;
        memcpy(&f, &in[i], 4);
        uint16_t want = grid_round(g, f, r, (uint16_t)tl_dtype_encode(t, f));
        if (out[i] != want && bad++ < 4)
          fprintf(stderr, "cvt.%s.%s.f32 %a: got 0x%04x, want 0x%04x\n", rn[r],
                  h ? "bf16" : "f16", (double)f, out[i], want);
      }
      CHECK_EQ_INT(bad, 0);
    }
    tl_free(g);
  }
}

/* f32 -> i32 and u8 with the integer roundings; i32 -> f32 with the float
 * roundings (neighbours of the nearest float); i32 -> i8 with and without
 * sat; f16 -> f16 rounded to integral values. */
static void test_cvt_int(void) {
  const unsigned n = 256;
  static const char *irn[4] = {"rni", "rzi", "rmi", "rpi"};
  static const char *frn[4] = {"rn", "rz", "rm", "rp"};
  float fin[256];
  for (unsigned i = 0; i < n; i++)
    fin[i] = (float)((int)(rnd() % 2000001) - 1000000) / 256.0f;
  fin[0] = 2.5f, fin[1] = -2.5f, fin[2] = 3e9f, fin[3] = -3e9f;
  fin[4] = NAN, fin[5] = 0.5f, fin[6] = -0.5f, fin[7] = 255.5f;
  for (int r = 0; r < 4; r++) {
    char attrs[48];
    snprintf(attrs, sizeof attrs, "{rounding = \"%s\"}", irn[r]);
    int32_t out[256];
    uint8_t out8[256];
    bool ok = run_cvt("f32", "i32", attrs, fin, sizeof fin, 4, out, 4, n) &&
              run_cvt("f32", "u8", attrs, fin, sizeof fin, 4, out8, 1, n);
    CHECK(ok);
    unsigned bad = 0;
    for (unsigned i = 0; ok && i < n; i++) {
      double x = fin[i], y = r == 0   ? nearbyint(x)
                             : r == 1 ? trunc(x)
                             : r == 2 ? floor(x)
                                      : ceil(x);
      int32_t w = isnan(x)            ? 0
                  : y >= 2147483648.0 ? INT32_MAX
                  : y < -2147483648.0 ? INT32_MIN
                                      : (int32_t)y;
      uint8_t w8 = isnan(x) ? 0 : y >= 255 ? 255 : y <= 0 ? 0 : (uint8_t)y;
      bad += out[i] != w;
      bad += out8[i] != w8;
    }
    CHECK_EQ_INT(bad, 0);
  }
  int32_t iin[256];
  for (unsigned i = 0; i < n; i++)
    iin[i] = (int32_t)(rnd() << 16 ^ rnd());
  iin[0] = INT32_MAX, iin[1] = INT32_MIN, iin[2] = 16777217, iin[3] = -16777219;
  for (int r = 0; r < 4; r++) {
    char attrs[48];
    snprintf(attrs, sizeof attrs, "{rounding = \"%s\"}", frn[r]);
    float out[256];
    bool ok = run_cvt("i32", "f32", attrs, iin, sizeof iin, 4, out, 4, n);
    CHECK(ok);
    unsigned bad = 0;
    for (unsigned i = 0; ok && i < n; i++) {
      double x = iin[i];
      float f = (float)x; /* nearest even: x is exact */
      float lo = f > x ? nextafterf(f, -INFINITY) : f;
      float hi = f < x ? nextafterf(f, INFINITY) : f;
      float want = r == 0 ? f : r == 1 ? (x > 0 ? lo : hi) : r == 2 ? lo : hi;
      bad += out[i] != want;
    }
    CHECK_EQ_INT(bad, 0);
  }
  for (int sat = 0; sat < 2; sat++) {
    int8_t out[256];
    bool ok =
        run_cvt("i32", "i8", sat ? "{sat}" : "", iin, sizeof iin, 4, out, 1, n);
    CHECK(ok);
    unsigned bad = 0;
    for (unsigned i = 0; ok && i < n; i++) {
      int8_t want = sat ? (int8_t)(iin[i] > 127    ? 127
                                   : iin[i] < -128 ? -128
                                                   : iin[i])
                        : (int8_t)(uint8_t)(uint32_t)iin[i];
      bad += out[i] != want;
    }
    CHECK_EQ_INT(bad, 0);
  }
  /* f16 -> f16 rni: every finite code, against nearbyint. */
  uint16_t hin[65536 / 64 * 64], hout[65536];
  unsigned nh = 0;
  for (uint32_t c = 0; c < 65536; c++)
    if (((c >> 10) & 31) != 31)
      hin[nh++] = (uint16_t)c;
  nh = nh / 64 * 64;
  bool ok = run_cvt("f16", "f16", "{rounding = \"rni\"}", hin, nh * 2, 2, hout,
                    2, nh);
  CHECK(ok);
  unsigned bad = 0;
  for (unsigned i = 0; ok && i < nh; i++) {
    double x = tl_dtype_decode(tl_dtype_f16(), hin[i]);
    uint16_t want = (uint16_t)tl_dtype_encode(tl_dtype_f16(), nearbyint(x));
    bad += hout[i] != want;
  }
  CHECK_EQ_INT(bad, 0);
}

/*===--- Errors -----------------------------------------------------------===*/

/* Every error kernel starts with these 11 lines (so the body starts on
 * line 12): %tid, %t64, the shared base %s, constants, and the thread's
 * own 4-byte word of shared (%st) and global (%gt) memory. */
static const char *prelude =
    "func @k(%g: !simt.ptr<global>) attributes {kernel} {\n"
    "  %tid = simt.thread_id {dim = \"x\"} : -> i32\n"
    "  %t64 = arith.exti %tid : i32 to i64\n"
    "  %s = simt.smem_base : -> !simt.ptr<shared>\n"
    "  %c0 = arith.constant 0 : i32\n"
    "  %c1 = arith.constant 1 : i32\n"
    "  %c4 = arith.constant 4 : i64\n"
    "  %c16 = arith.constant 16 : i32\n"
    "  %o4 = arith.muli %t64, %c4 : i64\n"
    "  %st = simt.ptr_add %s, %o4 : !simt.ptr<shared>, i64 -> "
    "!simt.ptr<shared>\n"
    "  %gt = simt.ptr_add %g, %o4 : !simt.ptr<global>, i64 -> "
    "!simt.ptr<global>\n";

static int expect_failures;

/* Runs prelude + body + return on `threads` threads with `smem` bytes of
 * shared memory and a 256-byte global buffer; the run must fail with
 * exactly the diagnostics `want`. */
static void expect_error(const char *name, const char *body, int64_t threads,
                         int64_t smem, const char *want) {
  char *text = tl_xmalloc(strlen(prelude) + strlen(body) + 32);
  sprintf(text, "%s%s  return\n}\n", prelude, body);
  Run r;
  if (!setup(&r, text)) {
    CHECK(false);
    tl_free(text);
    return;
  }
  uint8_t buf[256] = {0};
  TlVmArg a = bytes_arg(buf, sizeof buf);
  TlSimtLaunch l = launch1(1, threads, smem);
  bool ok = !TL_FAILED(tl_simt_vm_run_named(r.vm, r.m, NULL, &l, 1, &a));
  CHECK(!ok);
  if (strcmp(tl_str_cstr(&r.diags.text), want) != 0) {
    fprintf(stderr, "error case '%s':\n got:\n%s want:\n%s", name,
            tl_str_cstr(&r.diags.text), want);
    expect_failures++;
    CHECK(false);
  }
  teardown(&r);
  tl_free(text);
}

#define BLOCK_NOTE "1:1: note: in block (0, 0, 0) of the grid (1, 1, 1)\n"

static void test_errors(void) {
  expect_error("divergent barrier",
               "  %lt = arith.cmpi lt, %tid, %c16 : i32\n"
               "  scf.if %lt {\n"
               "    simt.barrier\n"
               "    scf.yield\n"
               "  }\n",
               64, 0,
               "14:5: error: 'simt.barrier' op divergent barrier: 16 of the "
               "block's 64 threads arrive at bar.sync 0, which waits for all "
               "of them; thread 16 (warp 0, lane 16) does not\n" BLOCK_NOTE);
  expect_error("barrier count",
               "  %c32 = arith.constant 32 : i32\n"
               "  %lt = arith.cmpi lt, %tid, %c32 : i32\n"
               "  scf.if %lt {\n"
               "    simt.barrier {id = 1, threads = 64}\n"
               "    scf.yield\n"
               "  }\n",
               64, 0,
               "15:5: error: 'simt.barrier' op divergent barrier: 32 threads "
               "arrive at bar.sync 1, 64, which waits for 64\n" BLOCK_NOTE);
  expect_error("barrier too large", "  simt.barrier {id = 2, threads = 96}\n",
               64, 0,
               "12:3: error: 'simt.barrier' op bar.sync 2, 96 waits for 96 "
               "threads, but the block has 64\n" BLOCK_NOTE);
  expect_error(
      "partial warp shfl",
      "  %c5 = arith.constant 5 : i32\n"
      "  %lt = arith.cmpi lt, %tid, %c5 : i32\n"
      "  scf.if %lt {\n"
      "    %x = simt.shfl %tid, %c1 {mode = \"idx\"} : i32, i32 -> i32\n"
      "    scf.yield\n"
      "  }\n",
      32, 0,
      "15:10: error: 'simt.shfl' op warp 0 executes this warp-collective op "
      "with 5 of its 32 lanes; every lane must execute it\n" BLOCK_NOTE);
  expect_error(
      "partial last warp",
      "  %x = simt.shfl %tid, %c1 {mode = \"down\"} : i32, i32 -> i32\n", 48, 0,
      "12:8: error: 'simt.shfl' op warp 1 executes this warp-collective op "
      "with 16 of its 32 lanes; every lane must execute it\n" BLOCK_NOTE);
  expect_error("shared out of bounds",
               "  simt.store %tid, %st : i32, !simt.ptr<shared>\n"
               "  simt.barrier\n"
               "  %p = simt.ptr_add %st, %o4 : !simt.ptr<shared>, i64 -> "
               "!simt.ptr<shared>\n"
               "  %v = simt.load %p : !simt.ptr<shared> -> i32\n",
               4, 16,
               "15:8: error: 'simt.load' op out-of-bounds shared access: "
               "thread 2 (warp 0, lane 2) reads 4 bytes at shared address 16, "
               "but the block has 16 bytes of shared memory\n" BLOCK_NOTE);
  expect_error("global out of bounds",
               "  %c1000 = arith.constant 1000 : i64\n"
               "  %o = arith.muli %t64, %c1000 : i64\n"
               "  %p = simt.ptr_add %g, %o : !simt.ptr<global>, i64 -> "
               "!simt.ptr<global>\n"
               "  simt.store %tid, %p : i32, !simt.ptr<global>\n",
               4, 0,
               "15:3: error: 'simt.store' op out-of-bounds global access: "
               "thread 1 (warp 0, lane 1) writes 4 bytes at offset 1000 of "
               "'g', which has 256 bytes\n" BLOCK_NOTE);
  expect_error("no buffer",
               "  %big = arith.constant -2199023255552 : i64\n"
               "  %p = simt.ptr_add %g, %big : !simt.ptr<global>, i64 -> "
               "!simt.ptr<global>\n"
               "  %v = simt.load %p : !simt.ptr<global> -> i32\n",
               4, 0,
               "14:8: error: 'simt.load' op global access outside every "
               "buffer: thread 0 (warp 0, lane 0) reads 4 bytes at address "
               "0xffffff0000000000\n" BLOCK_NOTE);
  expect_error("misaligned",
               "  %c2 = arith.constant 2 : i64\n"
               "  %p = simt.ptr_add %st, %c2 : !simt.ptr<shared>, i64 -> "
               "!simt.ptr<shared>\n"
               "  simt.store %tid, %p : i32, !simt.ptr<shared>\n",
               4, 64,
               "14:3: error: 'simt.store' op misaligned shared access: thread "
               "0 (warp 0, lane 0) writes 4 bytes at shared address 2, which "
               "is not a multiple of 4 (the access size)\n" BLOCK_NOTE);
  expect_error(
      "misaligned by attribute",
      "  %v = simt.load %gt {align = 16} : !simt.ptr<global> -> i32\n", 4, 0,
      "12:8: error: 'simt.load' op misaligned global access: thread 1 (warp 0, "
      "lane 1) reads 4 bytes at offset 4 of 'g', which is not a multiple of 16 "
      "(the op's alignment attribute)\n" BLOCK_NOTE);
  expect_error(
      "uninitialised", "  %v = simt.load %st : !simt.ptr<shared> -> i32\n", 4,
      64,
      "12:8: error: 'simt.load' op thread 0 (warp 0, lane 0) reads "
      "uninitialised shared memory: byte 0 was never written\n" BLOCK_NOTE);
  expect_error(
      "read before wait",
      "  simt.cp_async %st, %gt {size = 4, cache = \"ca\"} : "
      "!simt.ptr<shared>, !simt.ptr<global>\n"
      "  simt.cp_async_commit\n"
      "  simt.cp_async_wait {pending = 1}\n"
      "  %v = simt.load %st : !simt.ptr<shared> -> i32\n",
      4, 64,
      "15:8: error: 'simt.load' op thread 0 (warp 0, lane 0) reads shared "
      "address 0 while a cp.async into it is pending (no cp.async.wait_group "
      "has completed it)\n"
      "12:3: note: the cp.async, by thread 0 (warp 0, lane 0)\n" BLOCK_NOTE);
  expect_error(
      "pending at the end",
      "  simt.cp_async %st, %gt {size = 4, cache = \"ca\"} : "
      "!simt.ptr<shared>, !simt.ptr<global>\n"
      "  simt.cp_async_commit\n",
      4, 64,
      "12:3: error: 'simt.cp_async' op the cp.async of thread 0 (warp 0, lane "
      "0) into shared address 0 is still pending when the kernel ends (no "
      "cp.async.wait_group completed it)\n" BLOCK_NOTE);
  expect_error(
      "uncommitted copy",
      "  simt.cp_async %st, %gt {size = 4, cache = \"ca\"} : "
      "!simt.ptr<shared>, !simt.ptr<global>\n"
      "  simt.cp_async_wait {pending = 0}\n"
      "  simt.store %tid, %st : i32, !simt.ptr<shared>\n",
      4, 64,
      "14:3: error: 'simt.store' op thread 0 (warp 0, lane 0) writes shared "
      "address 0 while a cp.async into it is pending (no cp.async.wait_group "
      "has completed it)\n"
      "12:3: note: the cp.async, by thread 0 (warp 0, lane 0)\n" BLOCK_NOTE);
  expect_error(
      "source size",
      "  %n = arith.addi %c16, %tid : i32\n"
      "  simt.cp_async %st, %gt, %n {size = 16, cache = \"cg\"} : "
      "!simt.ptr<shared>, !simt.ptr<global>, i32\n",
      4, 256,
      "13:3: error: 'simt.cp_async' op thread 1 (warp 0, lane 1) copies with "
      "source size 17, more than the 16 bytes of the copy\n" BLOCK_NOTE);
  expect_error("copy misaligned",
               "  simt.cp_async %st, %gt {size = 8, cache = \"ca\"} : "
               "!simt.ptr<shared>, !simt.ptr<global>\n",
               4, 64,
               "12:3: error: 'simt.cp_async' op misaligned shared access: "
               "thread 1 (warp 0, lane 1) writes 8 bytes at shared address 4, "
               "which is not a multiple of 8 (the copy size)\n" BLOCK_NOTE);
  expect_error("race read after write",
               "  simt.store %tid, %st : i32, !simt.ptr<shared>\n"
               "  %n = arith.xori %t64, %c4 : i64\n"
               "  %p = simt.ptr_add %s, %n : !simt.ptr<shared>, i64 -> "
               "!simt.ptr<shared>\n"
               "  %v = simt.load %p : !simt.ptr<shared> -> i32\n",
               4, 64,
               "15:8: error: 'simt.load' op data race: thread 0 (warp 0, lane "
               "0) reads shared address 4, written by thread 1 (warp 0, lane "
               "1) since the last barrier\n"
               "12:3: note: the write\n" BLOCK_NOTE);
  expect_error("race write after write",
               "  simt.store %tid, %s : i32, !simt.ptr<shared>\n", 4, 64,
               "12:3: error: 'simt.store' op data race: thread 1 (warp 0, lane "
               "1) writes shared address 0, also written by thread 0 (warp 0, "
               "lane 0) since the last barrier\n"
               "12:3: note: the other write\n" BLOCK_NOTE);
  expect_error("race write after read",
               "  simt.store %tid, %st : i32, !simt.ptr<shared>\n"
               "  simt.barrier\n"
               "  %v = simt.load %s : !simt.ptr<shared> -> i32\n"
               "  %z = arith.cmpi eq, %tid, %c1 : i32\n"
               "  scf.if %z {\n"
               "    simt.store %tid, %s : i32, !simt.ptr<shared>\n"
               "    scf.yield\n"
               "  }\n",
               4, 64,
               "17:5: error: 'simt.store' op data race: thread 1 (warp 0, lane "
               "1) writes shared address 0, read by other threads since the "
               "last barrier\n" BLOCK_NOTE);
  expect_error("race after a wait without a barrier",
               "  simt.cp_async %st, %gt {size = 4, cache = \"ca\"} : "
               "!simt.ptr<shared>, !simt.ptr<global>\n"
               "  simt.cp_async_commit\n"
               "  simt.cp_async_wait {pending = 0}\n"
               "  %v = simt.load %s : !simt.ptr<shared> -> i32\n",
               4, 64,
               "15:8: error: 'simt.load' op data race: thread 1 (warp 0, lane "
               "1) reads shared address 0, written by thread 0 (warp 0, lane "
               "0) since the last barrier\n"
               "12:3: note: the write\n" BLOCK_NOTE);
  expect_error("division by zero",
               "  %c3 = arith.constant 3 : i32\n"
               "  %m = arith.remi %tid, %c3 : i32\n"
               "  %q = arith.divi %c16, %m : i32\n",
               4, 0,
               "14:8: error: 'arith.divi' op integer division by zero\n"
               "1:1: note: in thread 0 (warp 0, lane 0)\n" BLOCK_NOTE);
  expect_error("loop step",
               "  %z = scf.for %i = %c0 to %c16 step %tid : i32 iter_args(%a = "
               "%c0) -> (i32) {\n"
               "    scf.yield %a : i32\n"
               "  }\n",
               4, 0,
               "12:8: error: 'scf.for' op step must be positive, but is 0\n"
               "1:1: note: in thread 0 (warp 0, lane 0)\n" BLOCK_NOTE);
}

/* Errors found before any block runs, located at the kernel. */
static void expect_launch_error(const char *name, const char *text,
                                TlSimtLaunch l, unsigned n, TlVmArg *args,
                                const char *want) {
  Run r;
  if (!setup(&r, text)) {
    CHECK(false);
    return;
  }
  bool ok = !TL_FAILED(tl_simt_vm_run_named(r.vm, r.m, NULL, &l, n, args));
  CHECK(!ok);
  if (strcmp(tl_str_cstr(&r.diags.text), want) != 0) {
    fprintf(stderr, "launch error case '%s':\n got:\n%s want:\n%s", name,
            tl_str_cstr(&r.diags.text), want);
    CHECK(false);
  }
  teardown(&r);
}

static void test_launch_errors(void) {
  uint8_t buf[16];
  TlVmArg good[3] = {bytes_arg(buf, 16), bytes_arg(buf, 16), tl_vm_arg_int(1)};
  expect_launch_error(
      "threads attribute", copy_text, launch1(1, 64, 0), 3, good,
      "1:1: error: 'builtin.func' op the kernel requires 128 threads per block "
      "(threads = 128), but the launch has 64\n");
  expect_launch_error("block too large", copy_text,
                      (TlSimtLaunch){{1, 1, 1}, {128, 16, 1}, 0}, 3, good,
                      "1:1: error: 'builtin.func' op a block of 2048 threads "
                      "is more than 1024\n");
  expect_launch_error("smem", copy_text, launch1(1, 128, 1 << 20), 3, good,
                      "1:1: error: 'builtin.func' op 1048576 bytes of dynamic "
                      "shared memory; a block has 0 to 232448\n");
  expect_launch_error("grid", copy_text, launch1(0, 128, 0), 3, good,
                      "1:1: error: 'builtin.func' op grid dimension x is 0; it "
                      "must be 1 to 2147483647\n");
  expect_launch_error(
      "arg count", copy_text, launch1(1, 128, 0), 2, good,
      "1:1: error: 'builtin.func' op takes 3 arguments, but 2 are given\n");
  TlVmArg swapped[3] = {tl_vm_arg_int(1), bytes_arg(buf, 16), tl_vm_arg_int(1)};
  expect_launch_error("scalar for a pointer", copy_text, launch1(1, 128, 0), 3,
                      swapped,
                      "1:1: error: 'builtin.func' op parameter 'src' "
                      "(!simt.ptr<global>) needs a buffer\n");
  TlVmArg buffer_n[3] = {bytes_arg(buf, 16), bytes_arg(buf, 16),
                         bytes_arg(buf, 16)};
  expect_launch_error("buffer for a scalar", copy_text, launch1(1, 128, 0), 3,
                      buffer_n,
                      "1:1: error: 'builtin.func' op parameter 'n' is a "
                      "scalar, but a buffer is given\n");
  expect_launch_error("no kernel", "func @f() {\n  return\n}\n",
                      launch1(1, 1, 0), 0, NULL,
                      "1:1: error: the module has no kernel (a func with the "
                      "'kernel' attribute)\n");
}

int main(void) {
  for (size_t i = 0; i < sizeof mma_cases / sizeof mma_cases[0]; i++)
    test_mma(&mma_cases[i]);
  for (unsigned num = 1; num <= 4; num *= 2) {
    test_ldmatrix(num, false);
    test_ldmatrix(num, true);
  }
  test_mma_h200();
  test_cp_async();
  test_register_ops();
  test_copy();
  test_divergence();
  test_ids();
  test_cvt_f32_to_half();
  test_cvt_int();
  test_errors();
  test_launch_errors();
  return unit_report();
}
