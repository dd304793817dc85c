/* The hardware tables: the GPU targets TL compiles for with their limits
 * and features (include/tl/targets.def), and the warp-level instruction
 * forms TL emits (include/tl/forms.def). Every consumer reads these
 * tables: the simt verifier, the back end, the thread-level VM, the
 * passes (through TlPassOptions.arch) and the tools' -mcpu lists.
 *
 * The tables are static and never change: every pointer returned here
 * points into them (never free it, compare with ==). Pure C; depends on
 * lib/support only. */
#ifndef TL_ARCH_H
#define TL_ARCH_H

#include "tl/support.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A hardware feature; targets.def gives each its bit. */
typedef enum TlFeature {
#define TL_FEATURE(NAME, bit, what) TL_FEATURE_##NAME = 1u << (bit),
#include "tl/targets.def"
} TlFeature;

/* One -mcpu target (the columns of targets.def). */
typedef struct TlArch {
  const char *name;     /* "sm_90a" */
  unsigned sm;          /* 90 */
  int64_t max_smem;     /* most dynamic shared memory per block, bytes */
  bool exact;           /* runs only on devices of exactly this SM */
  unsigned min_ptx;     /* first PTX ISA with the target, x 10 */
  unsigned default_ptx; /* PTX ISA used when none is asked for, x 10 */
  unsigned features;    /* TlFeature bits */
} TlArch;

/* The register counts setmaxnreg takes (registers per thread, PTX ISA):
 * multiples of TL_SETMAXNREG_STEP from TL_SETMAXNREG_MIN to
 * TL_SETMAXNREG_MAX. The simt and tl verifiers share them. */
enum {
  TL_SETMAXNREG_MIN = 24,
  TL_SETMAXNREG_MAX = 256,
  TL_SETMAXNREG_STEP = 8
};

/* The targets in table order; i < tl_arch_count() or NULL. */
unsigned tl_arch_count(void);
const TlArch *tl_arch_at(unsigned i);
/* The target named `name` ("sm_80"), NULL when there is none (name may be
 * NULL). */
const TlArch *tl_arch_lookup(const char *name);
/* The target used when none is named: sm_80, the first row. */
const TlArch *tl_arch_default(void);
/* The target to compile for a device of compute capability sm x 10: the
 * exact target of that SM if the table has one, else the latest target
 * whose code runs there. NULL for a device older than every target. */
const TlArch *tl_arch_for_device(unsigned sm);
/* Whether the target (not NULL) has every feature of `features`
 * (TlFeature bits; 0: true). */
bool tl_arch_has(const TlArch *arch, unsigned features);
/* The most dynamic shared memory per block of any target. */
int64_t tl_arch_max_smem_any(void);

/* The target names, NULL-terminated, in table order. */
const char *const *tl_arch_names(void);
/* Appends "sm_80, sm_86, sm_89, sm_90, sm_90a": the names of the targets
 * that have every feature of `features` (0: all targets), for
 * diagnostics; "or" before the last name when `or_last`. */
void tl_arch_names_text(TlStr *out, unsigned features, bool or_last);
/* How diagnostics name a feature ("fp8 mma"); NULL when f is not one of
 * the table's feature bits (0 and combinations included). */
const char *tl_feature_name(unsigned f);
/* Appends the one wording of every refusal for a missing feature: "WHAT,
 * which sm_80 lacks (targets with it: sm_90 or sm_90a)", WHAT naming what
 * needs the feature ("simt.tma_load needs TMA (cp.async.bulk.tensor)"). */
void tl_arch_lacks_text(TlStr *out, const char *what, const TlArch *arch,
                        unsigned feature);

/* One mma.sync form (the columns of forms.def's TL_MMA_FORM). */
typedef struct TlMmaForm {
  const char *shape;                    /* "m16n8k16" */
  unsigned m, n, k;                     /* the shape as numbers */
  const char *a_type, *b_type;          /* "f16", "s8", "b1", ... */
  const char *acc_type;                 /* "f32", "f16" or "s32" */
  unsigned a_regs, b_regs, cd_regs;     /* 32-bit registers per lane */
  const char *cd_reg;                   /* "f32" or "i32" */
  const char *a_atom, *b_atom, *c_atom; /* lib/layout atom names */
  TlFeature feature;
  unsigned min_sm, min_ptx; /* min_ptx x 10 */
  const char *b1_op;        /* "and.popc" for b1, "" otherwise */
  bool satfinite;           /* takes .satfinite */
  const char *intrinsic;    /* without .satfinite */
} TlMmaForm;

unsigned tl_mma_form_count(void);
/* Form i in table order; i < tl_mma_form_count() or NULL. */
const TlMmaForm *tl_mma_form_at(unsigned i);
/* The form of a shape, input types and accumulator type; NULL when TL
 * has none (any argument may be NULL). */
const TlMmaForm *tl_mma_form_lookup(const char *shape, const char *a_type,
                                    const char *b_type, const char *acc_type);
/* Bits of one element of an mma type (16 for "f16", 1 for "b1"); 0 for a
 * name no form uses. */
unsigned tl_mma_type_bits(const char *type);
/* Appends a summary of the mma forms for diagnostics: per shape, the A
 * types with their accumulator types, "m16n8k16 f16->f32|f16, m16n8k16
 * bf16->f32, ..., m16n8k32 s8|u8->s32, ..." (B is A's type, or for the
 * forms that mix them, the other type of the same width). */
void tl_mma_forms_text(TlStr *out);

/* One ldmatrix form (forms.def's TL_LDMATRIX_FORM). */
typedef struct TlLdmatrixForm {
  unsigned num;     /* 8x8 matrices: 1, 2 or 4 (= i32 registers) */
  bool trans;       /* .trans */
  const char *elem; /* "b16" */
  const char *atom; /* "ldmatrix_x4_trans" */
  TlFeature feature;
  unsigned min_sm, min_ptx;
  const char *intrinsic;
} TlLdmatrixForm;

unsigned tl_ldmatrix_form_count(void);
const TlLdmatrixForm *tl_ldmatrix_form_at(unsigned i);
/* The form loading `num` matrices (transposed when trans), or NULL. */
const TlLdmatrixForm *tl_ldmatrix_form_lookup(int64_t num, bool trans);

/* One cp.async form (forms.def's TL_CP_ASYNC_FORM). */
typedef struct TlCpAsyncForm {
  unsigned bytes;    /* 4, 8 or 16 */
  const char *cache; /* "ca" or "cg" */
  TlFeature feature;
  unsigned min_sm, min_ptx;
  const char *intrinsic, *zfill_intrinsic;
} TlCpAsyncForm;

unsigned tl_cp_async_form_count(void);
const TlCpAsyncForm *tl_cp_async_form_at(unsigned i);
/* The form copying `bytes` bytes through `cache`, or NULL (cache may be
 * NULL). */
const TlCpAsyncForm *tl_cp_async_form_lookup(int64_t bytes, const char *cache);

/* One wgmma.mma_async form (forms.def's TL_WGMMA_FORM). */
typedef struct TlWgmmaForm {
  unsigned k;                  /* 16 (f16, bf16) or 32 (s8, u8) */
  const char *a_type, *b_type; /* "f16", "bf16", "s8", "u8" */
  const char *acc_type;        /* "f32" or "s32" */
  unsigned a_regs;             /* i32 registers per lane of a register A */
  unsigned n8_max;             /* N: multiples of 8 to this, then of 16 */
  bool trans;                  /* takes a_major/b_major = "mn" */
  const char *a_atom, *c_atom; /* lib/layout atoms of a warp's A and D */
  TlFeature feature;
  unsigned min_sm, min_ptx;
} TlWgmmaForm;

unsigned tl_wgmma_form_count(void);
const TlWgmmaForm *tl_wgmma_form_at(unsigned i);
/* The form of the input and accumulator types, or NULL (any argument
 * may be NULL). */
const TlWgmmaForm *tl_wgmma_form_lookup(const char *a_type, const char *b_type,
                                        const char *acc_type);
/* Whether the form has width n: 8 <= n <= 256, a multiple of 8 up to
 * n8_max and of 16 above it. */
bool tl_wgmma_form_has_n(const TlWgmmaForm *f, int64_t n);

#ifdef __cplusplus
}
#endif
#endif
