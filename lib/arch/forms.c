/* The instruction-form tables: include/tl/forms.def expanded into the
 * mma.sync, ldmatrix, cp.async and wgmma rows, with lookups by the
 * attributes of the simt ops. */
#include "tl/arch.h"

#include <string.h>

/* clang-format off */
static const TlMmaForm mma_forms[] = {
#define TL_MMA_FORM(shape, m, n, k, a_type, b_type, acc_type, a_regs, b_regs, \
                    cd_regs, cd_reg, a_atom, b_atom, c_atom, feature, min_sm,  \
                    min_ptx, b1_op, satfinite, intrinsic)                      \
  {shape,  m,      n,      k,      a_type, b_type, acc_type,                   \
   a_regs, b_regs, cd_regs, cd_reg, a_atom, b_atom, c_atom,                   \
   TL_FEATURE_##feature, min_sm, min_ptx, b1_op, satfinite, intrinsic},
#include "tl/forms.def"
};

static const TlLdmatrixForm ldmatrix_forms[] = {
#define TL_LDMATRIX_FORM(num, trans, elem, atom, feature, min_sm, min_ptx,     \
                         intrinsic)                                            \
  {num, trans, elem, atom, TL_FEATURE_##feature, min_sm, min_ptx, intrinsic},
#include "tl/forms.def"
};

static const TlCpAsyncForm cp_async_forms[] = {
#define TL_CP_ASYNC_FORM(bytes, cache, feature, min_sm, min_ptx, intrinsic,    \
                         zfill_intrinsic)                                      \
  {bytes, cache, TL_FEATURE_##feature, min_sm, min_ptx, intrinsic,             \
   zfill_intrinsic},
#include "tl/forms.def"
};

static const TlWgmmaForm wgmma_forms[] = {
#define TL_WGMMA_FORM(k, a_type, b_type, acc_type, a_regs, n8_max, trans,      \
                      a_atom, c_atom, feature, min_sm, min_ptx)                \
  {k,     a_type, b_type, acc_type, a_regs, n8_max, trans, a_atom, c_atom,     \
   TL_FEATURE_##feature, min_sm, min_ptx},
#include "tl/forms.def"
};
/* clang-format on */

#define COUNT(a) ((unsigned)(sizeof a / sizeof a[0]))

static bool same(const char *a, const char *b) { return a && !strcmp(a, b); }

/*===--- mma -------------------------------------------------------------===*/

unsigned tl_mma_form_count(void) { return COUNT(mma_forms); }

const TlMmaForm *tl_mma_form_at(unsigned i) {
  return i < COUNT(mma_forms) ? &mma_forms[i] : NULL;
}

const TlMmaForm *tl_mma_form_lookup(const char *shape, const char *a_type,
                                    const char *b_type, const char *acc_type) {
  for (unsigned i = 0; i < COUNT(mma_forms); i++) {
    const TlMmaForm *f = &mma_forms[i];
    if (same(shape, f->shape) && same(a_type, f->a_type) &&
        same(b_type, f->b_type) && same(acc_type, f->acc_type))
      return f;
  }
  return NULL;
}

unsigned tl_mma_type_bits(const char *type) {
  static const struct {
    const char *name;
    unsigned bits;
  } types[] = {{"f32", 32}, {"s32", 32}, {"f16", 16}, {"bf16", 16}, {"s8", 8},
               {"u8", 8},   {"e4m3", 8}, {"e5m2", 8}, {"b1", 1}};
  for (unsigned i = 0; type && i < COUNT(types); i++)
    if (!strcmp(types[i].name, type))
      return types[i].bits;
  return 0;
}

/* Appends the accumulator types of the forms of (shape, a_type) as
 * "f32|f16". */
static void accs_of(TlStr *out, const char *shape, const char *a_type) {
  bool any = false;
  for (unsigned i = 0; i < COUNT(mma_forms); i++) {
    const TlMmaForm *f = &mma_forms[i];
    if (strcmp(f->shape, shape) || strcmp(f->a_type, a_type))
      continue;
    bool dup = false;
    for (unsigned j = 0; j < i; j++)
      dup |= !strcmp(mma_forms[j].shape, shape) &&
             !strcmp(mma_forms[j].a_type, a_type) &&
             !strcmp(mma_forms[j].acc_type, f->acc_type);
    if (!dup) {
      tl_str_printf(out, "%s%s", any ? "|" : "", f->acc_type);
      any = true;
    }
  }
}

void tl_mma_forms_text(TlStr *out) {
  /* One entry per shape and set of accumulators, in order of first
   * appearance, naming the A types that have exactly those
   * accumulators: "m16n8k32 s8|u8->s32". */
  bool done[COUNT(mma_forms)] = {false};
  bool first = true;
  for (unsigned i = 0; i < COUNT(mma_forms); i++) {
    if (done[i])
      continue;
    const TlMmaForm *g = &mma_forms[i];
    TlStr accs = {0};
    accs_of(&accs, g->shape, g->a_type);
    tl_str_printf(out, "%s%s ", first ? "" : ", ", g->shape);
    first = false;
    const char *named[COUNT(mma_forms)];
    unsigned nnamed = 0;
    for (unsigned j = i; j < COUNT(mma_forms); j++) {
      const TlMmaForm *f = &mma_forms[j];
      if (strcmp(f->shape, g->shape))
        continue;
      TlStr these = {0};
      accs_of(&these, f->shape, f->a_type);
      if (!strcmp(tl_str_cstr(&these), tl_str_cstr(&accs))) {
        done[j] = true;
        bool dup = false;
        for (unsigned k = 0; k < nnamed; k++)
          dup |= !strcmp(named[k], f->a_type);
        if (!dup) {
          tl_str_printf(out, "%s%s", nnamed ? "|" : "", f->a_type);
          named[nnamed++] = f->a_type;
        }
      }
      tl_str_free(&these);
    }
    tl_str_printf(out, "->%s", tl_str_cstr(&accs));
    tl_str_free(&accs);
  }
}

/*===--- ldmatrix and cp.async -------------------------------------------===*/

unsigned tl_ldmatrix_form_count(void) { return COUNT(ldmatrix_forms); }

const TlLdmatrixForm *tl_ldmatrix_form_at(unsigned i) {
  return i < COUNT(ldmatrix_forms) ? &ldmatrix_forms[i] : NULL;
}

const TlLdmatrixForm *tl_ldmatrix_form_lookup(int64_t num, bool trans) {
  for (unsigned i = 0; i < COUNT(ldmatrix_forms); i++)
    if ((int64_t)ldmatrix_forms[i].num == num &&
        ldmatrix_forms[i].trans == trans)
      return &ldmatrix_forms[i];
  return NULL;
}

unsigned tl_cp_async_form_count(void) { return COUNT(cp_async_forms); }

const TlCpAsyncForm *tl_cp_async_form_at(unsigned i) {
  return i < COUNT(cp_async_forms) ? &cp_async_forms[i] : NULL;
}

const TlCpAsyncForm *tl_cp_async_form_lookup(int64_t bytes, const char *cache) {
  for (unsigned i = 0; i < COUNT(cp_async_forms); i++)
    if ((int64_t)cp_async_forms[i].bytes == bytes &&
        same(cache, cp_async_forms[i].cache))
      return &cp_async_forms[i];
  return NULL;
}

/*===--- wgmma -----------------------------------------------------------===*/

unsigned tl_wgmma_form_count(void) { return COUNT(wgmma_forms); }

const TlWgmmaForm *tl_wgmma_form_at(unsigned i) {
  return i < COUNT(wgmma_forms) ? &wgmma_forms[i] : NULL;
}

const TlWgmmaForm *tl_wgmma_form_lookup(const char *a_type, const char *b_type,
                                        const char *acc_type) {
  for (unsigned i = 0; i < COUNT(wgmma_forms); i++) {
    const TlWgmmaForm *f = &wgmma_forms[i];
    if (same(a_type, f->a_type) && same(b_type, f->b_type) &&
        same(acc_type, f->acc_type))
      return f;
  }
  return NULL;
}

bool tl_wgmma_form_has_n(const TlWgmmaForm *f, int64_t n) {
  if (n < 8 || n > 256 || n % 8)
    return false;
  return n <= (int64_t)f->n8_max || n % 16 == 0;
}
