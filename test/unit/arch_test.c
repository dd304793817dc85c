/* Unit tests of the hardware tables (include/tl/arch.h): target lookups,
 * limits and features, and every instruction form's columns checked
 * against each other and against an independent account: register counts
 * from the shape and the element widths (a warp's 32 lanes hold the whole
 * operand in 32-bit registers), fragment layouts from the layout library's
 * atoms, intrinsic names from the PTX spelling of the form. */
#include "tl/arch.h"
#include "tl/layout.h"
#include "unit.h"

#include <stdio.h>
#include <string.h>

static void test_targets(void) {
  static const struct {
    const char *name;
    unsigned sm;
    int64_t smem;
  } want[] = {{"sm_80", 80, 166912},
              {"sm_86", 86, 101376},
              {"sm_89", 89, 101376},
              {"sm_90", 90, 232448},
              {"sm_90a", 90, 232448}};
  CHECK_EQ_INT(tl_arch_count(), 5);
  const char *const *names = tl_arch_names();
  for (unsigned i = 0; i < 5; i++) {
    const TlArch *a = tl_arch_lookup(want[i].name);
    CHECK(a && a == tl_arch_at(i));
    if (!a)
      continue;
    CHECK_EQ_STR(a->name, want[i].name);
    CHECK_EQ_STR(names[i], want[i].name);
    CHECK_EQ_INT(a->sm, want[i].sm);
    CHECK_EQ_INT(a->max_smem, want[i].smem);
    CHECK(a->min_ptx >= 70 && a->min_ptx <= a->default_ptx);
    CHECK_EQ_INT(a->exact, !strcmp(a->name, "sm_90a"));
    /* Every target has what TL's kernels use on all of them. */
    CHECK(tl_arch_has(a, TL_FEATURE_CP_ASYNC | TL_FEATURE_LDMATRIX |
                             TL_FEATURE_MMA_F16 | TL_FEATURE_MMA_BF16 |
                             TL_FEATURE_MMA_INT8 | TL_FEATURE_MMA_B1));
    CHECK_EQ_INT(tl_arch_has(a, TL_FEATURE_MMA_FP8), a->sm >= 89);
    CHECK_EQ_INT(tl_arch_has(a, TL_FEATURE_TMA), a->sm >= 90);
    CHECK_EQ_INT(tl_arch_has(a, TL_FEATURE_WGMMA), a->exact);
    CHECK_EQ_INT(tl_arch_has(a, TL_FEATURE_SETMAXNREG), a->exact);
  }
  CHECK(names[5] == NULL);
  CHECK(tl_arch_at(5) == NULL);
  CHECK(tl_arch_lookup("sm_75") == NULL);
  CHECK(tl_arch_lookup("SM_80") == NULL);
  CHECK(tl_arch_lookup(NULL) == NULL);
  CHECK(tl_arch_default() == tl_arch_lookup("sm_80"));
  CHECK_EQ_INT(tl_arch_max_smem_any(), 232448);
  CHECK(tl_arch_has(tl_arch_default(), 0));

  /* The device -> target choice: an exact target only for its own SM. */
  CHECK(tl_arch_for_device(75) == NULL);
  CHECK(tl_arch_for_device(80) == tl_arch_lookup("sm_80"));
  CHECK(tl_arch_for_device(86) == tl_arch_lookup("sm_86"));
  CHECK(tl_arch_for_device(87) == tl_arch_lookup("sm_86"));
  CHECK(tl_arch_for_device(89) == tl_arch_lookup("sm_89"));
  CHECK(tl_arch_for_device(90) == tl_arch_lookup("sm_90a"));
  CHECK(tl_arch_for_device(100) == tl_arch_lookup("sm_90"));
  CHECK(tl_arch_for_device(120) == tl_arch_lookup("sm_90"));

  TlStr s = {0};
  tl_arch_names_text(&s, 0, false);
  CHECK_EQ_STR(tl_str_cstr(&s), "sm_80, sm_86, sm_89, sm_90, sm_90a");
  tl_str_clear(&s);
  tl_arch_names_text(&s, TL_FEATURE_MMA_FP8, true);
  CHECK_EQ_STR(tl_str_cstr(&s), "sm_89, sm_90 or sm_90a");
  tl_str_clear(&s);
  tl_arch_names_text(&s, TL_FEATURE_WGMMA | TL_FEATURE_TMA, true);
  CHECK_EQ_STR(tl_str_cstr(&s), "sm_90a");
  tl_str_free(&s);

  /* Feature bits are distinct single bits, each with a name. */
  unsigned seen = 0;
  for (unsigned bit = 0; bit < 32; bit++) {
    const char *what = tl_feature_name(1u << bit);
    if (!what)
      continue;
    CHECK(!(seen & (1u << bit)));
    seen |= 1u << bit;
  }
  CHECK_EQ_INT(seen, 0x7ff);
  CHECK_EQ_STR(tl_feature_name(TL_FEATURE_MMA_FP8), "fp8 mma");
  CHECK(tl_feature_name(TL_FEATURE_TMA | TL_FEATURE_WGMMA) == NULL);
  CHECK(tl_feature_name(0) == NULL);
}

/* A form's feature is on exactly the targets at or after its first SM. */
static void check_feature(TlFeature f, unsigned min_sm, const char *what) {
  for (unsigned i = 0; i < tl_arch_count(); i++) {
    const TlArch *a = tl_arch_at(i);
    if (tl_arch_has(a, f) != (a->sm >= min_sm)) {
      CHECK(!"feature does not follow min_sm");
      fprintf(stderr, "  %s on %s\n", what, a->name);
    }
  }
}

/* The atom is a warp's (rows x cols) layout holding `regs` 32-bit
 * registers of `bits`-bit elements per lane. */
static void check_atom(const char *atom, int64_t rows, int64_t cols,
                       unsigned regs, unsigned bits, const char *what) {
  TlLayout l;
  if (!tl_layout_atom(&l, atom, NULL)) {
    CHECK(!"unknown atom");
    fprintf(stderr, "  %s: %s\n", what, atom);
    return;
  }
  bool ok = l.rank == 2 && l.shape[0] == rows && l.shape[1] == cols &&
            tl_layout_num_threads(&l) == 32 &&
            tl_layout_local_size(&l) * bits == (int64_t)regs * 32;
  CHECK(ok);
  if (!ok)
    fprintf(stderr, "  %s: atom %s does not match\n", what, atom);
}

static void test_mma_forms(void) {
  unsigned n = tl_mma_form_count();
  CHECK_EQ_INT(n, 16);
  CHECK(tl_mma_form_at(n) == NULL);
  for (unsigned i = 0; i < n; i++) {
    const TlMmaForm *f = tl_mma_form_at(i);
    char what[96], shape[32];
    snprintf(what, sizeof what, "%s %s.%s.%s", f->shape, f->a_type, f->b_type,
             f->acc_type);
    snprintf(shape, sizeof shape, "m%un%uk%u", f->m, f->n, f->k);
    CHECK_EQ_STR(f->shape, shape);
    unsigned ab = tl_mma_type_bits(f->a_type), bb = tl_mma_type_bits(f->b_type),
             cb = tl_mma_type_bits(f->acc_type);
    CHECK(ab && bb && cb);
    CHECK_EQ_INT(ab, bb);
    /* A warp holds A (m x k), B (k x n) and C (m x n) in 32 lanes of
     * 32-bit registers. */
    CHECK_EQ_INT((uint64_t)f->a_regs * 32 * 32, (uint64_t)f->m * f->k * ab);
    CHECK_EQ_INT((uint64_t)f->b_regs * 32 * 32, (uint64_t)f->k * f->n * bb);
    CHECK_EQ_INT((uint64_t)f->cd_regs * 32 * 32, (uint64_t)f->m * f->n * cb);
    CHECK_EQ_STR(f->cd_reg, strcmp(f->acc_type, "f32") ? "i32" : "f32");
    check_atom(f->a_atom, f->m, f->k, f->a_regs, ab, what);
    check_atom(f->b_atom, f->k, f->n, f->b_regs, bb, what);
    check_atom(f->c_atom, f->m, f->n, f->cd_regs, cb, what);
    CHECK_EQ_INT(f->b1_op[0] != 0, !strcmp(f->a_type, "b1"));
    CHECK_EQ_INT(f->satfinite, !strcmp(f->acc_type, "s32") && ab == 8);
    CHECK(f->min_ptx >= 65 && f->min_sm >= 75);
    CHECK(tl_feature_name(f->feature) != NULL);
    check_feature(f->feature, f->min_sm, what);
    /* Each row is one form: the lookup finds it. */
    CHECK(tl_mma_form_lookup(f->shape, f->a_type, f->b_type, f->acc_type) == f);
    /* llvm.nvvm.mma[.<b1_op>].<shape>.row.col.<types>, the types as
     * LLVM's MMA_SIGNATURE names them: fp8 forms by D, A, B and C, f16
     * forms by D and C, the others by A (and B when it differs). */
    char name[128];
    int at = snprintf(name, sizeof name, "llvm.nvvm.mma.%s%s%s.row.col.",
                      f->b1_op, f->b1_op[0] ? "." : "", f->shape);
    bool fp8 = !strcmp(f->a_type, "e4m3") || !strcmp(f->a_type, "e5m2");
    if (fp8)
      snprintf(name + at, sizeof name - at, "%s.%s.%s.%s", f->acc_type,
               f->a_type, f->b_type, f->acc_type);
    else if (!strcmp(f->a_type, "f16"))
      snprintf(name + at, sizeof name - at, "%s.%s", f->acc_type, f->acc_type);
    else if (strcmp(f->a_type, f->b_type))
      snprintf(name + at, sizeof name - at, "%s.%s", f->a_type, f->b_type);
    else
      snprintf(name + at, sizeof name - at, "%s", f->a_type);
    CHECK_EQ_STR(f->intrinsic, name);
  }
  CHECK(tl_mma_form_lookup("m16n8k16", "bf16", "bf16", "f16") == NULL);
  CHECK(tl_mma_form_lookup("m16n8k16", "f16", "bf16", "f32") == NULL);
  CHECK(tl_mma_form_lookup(NULL, "f16", "f16", "f32") == NULL);
  CHECK(tl_mma_form_lookup("m16n8k32", "s8", "u8", "s32") != NULL);
  CHECK(tl_mma_form_lookup("m16n8k32", "e5m2", "e4m3", "f32") != NULL);
  CHECK(tl_mma_form_lookup("m16n8k32", "e4m3", "e4m3", "f16") == NULL);
  CHECK(tl_mma_form_lookup("m16n8k32", "e4m3", "s8", "f32") == NULL);
  CHECK_EQ_INT(tl_mma_type_bits("s4"), 0);
  CHECK_EQ_INT(tl_mma_type_bits(NULL), 0);
  TlStr s = {0};
  tl_mma_forms_text(&s);
  CHECK_EQ_STR(tl_str_cstr(&s),
               "m16n8k16 f16->f32|f16, m16n8k16 bf16->f32, m16n8k8 "
               "f16->f32|f16, m16n8k8 bf16->f32, m16n8k32 s8|u8->s32, "
               "m16n8k32 e4m3|e5m2->f32, m16n8k256 b1->s32, m8n8k128 "
               "b1->s32");
  tl_str_free(&s);
}

static void test_ldmatrix_forms(void) {
  unsigned n = tl_ldmatrix_form_count();
  CHECK_EQ_INT(n, 6);
  CHECK(tl_ldmatrix_form_at(n) == NULL);
  for (unsigned i = 0; i < n; i++) {
    const TlLdmatrixForm *f = tl_ldmatrix_form_at(i);
    char what[64], name[96];
    snprintf(what, sizeof what, "ldmatrix x%u%s", f->num,
             f->trans ? " trans" : "");
    CHECK(f->num == 1 || f->num == 2 || f->num == 4);
    CHECK_EQ_STR(f->elem, "b16");
    /* num 8x8 matrices of b16 stacked along the rows, one register each. */
    check_atom(f->atom, 8 * f->num, 8, f->num, 16, what);
    check_feature(f->feature, f->min_sm, what);
    snprintf(name, sizeof name,
             "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x%u%s.b16", f->num,
             f->trans ? ".trans" : "");
    CHECK_EQ_STR(f->intrinsic, name);
    CHECK(tl_ldmatrix_form_lookup(f->num, f->trans) == f);
  }
  CHECK(tl_ldmatrix_form_lookup(3, false) == NULL);
  CHECK(tl_ldmatrix_form_lookup(8, true) == NULL);
}

static void test_cp_async_forms(void) {
  unsigned n = tl_cp_async_form_count();
  CHECK_EQ_INT(n, 4);
  CHECK(tl_cp_async_form_at(n) == NULL);
  for (unsigned i = 0; i < n; i++) {
    const TlCpAsyncForm *f = tl_cp_async_form_at(i);
    char what[64], name[96];
    snprintf(what, sizeof what, "cp.async.%s %u", f->cache, f->bytes);
    CHECK(f->bytes == 4 || f->bytes == 8 || f->bytes == 16);
    /* .cg bypasses L1 and moves whole 16-byte sectors. */
    CHECK(!strcmp(f->cache, "ca") ||
          (!strcmp(f->cache, "cg") && f->bytes == 16));
    check_feature(f->feature, f->min_sm, what);
    snprintf(name, sizeof name, "llvm.nvvm.cp.async.%s.shared.global.%u",
             f->cache, f->bytes);
    CHECK_EQ_STR(f->intrinsic, name);
    strcat(name, ".s");
    CHECK_EQ_STR(f->zfill_intrinsic, name);
    CHECK(tl_cp_async_form_lookup(f->bytes, f->cache) == f);
  }
  CHECK(tl_cp_async_form_lookup(8, "cg") == NULL);
  CHECK(tl_cp_async_form_lookup(16, NULL) == NULL);
  CHECK(tl_cp_async_form_lookup(2, "ca") == NULL);
}

int main(void) {
  test_targets();
  test_mma_forms();
  test_ldmatrix_forms();
  test_cp_async_forms();
  return unit_report();
}
