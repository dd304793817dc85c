/* The simt dialect: one thread's program (registers, vector memory access,
 * cp.async, ldmatrix, mma, shuffles, prmt, lop3, packed half arithmetic,
 * the f32 fma, conversions). docs/simt.md is its reference. Types:
 *   !simt.vec<NxT>        N (1..16) scalars of type T in registers; element
 *                         0 holds the lowest bits when the vector is
 *                         reinterpreted (bitcast) or stored (lowest address)
 *   !simt.ptr<global>     a byte address in global memory (64-bit)
 *   !simt.ptr<shared>     a byte address in shared memory */
#ifndef TL_SIMT_H
#define TL_SIMT_H

#include "tl/arch.h"
#include "tl/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Address spaces, numbered as LLVM's NVPTX target numbers them. */
typedef enum TlSimtSpace { TL_SIMT_GLOBAL = 1, TL_SIMT_SHARED = 3 } TlSimtSpace;

/* Registers the simt ops and types with ctx. Idempotent. */
void tl_simt_register(TlContext *ctx);

/* Uniqued in ctx (compare with ==, never free). NULL when n is outside
 * 1..16 or elem is not a scalar. */
TlType *tl_simt_vec_type(TlContext *ctx, unsigned n, TlType *elem);
/* Uniqued in ctx; never NULL. */
TlType *tl_simt_ptr_type(TlContext *ctx, TlSimtSpace space);
/* False for NULL. The accessors below require a type of their kind. */
bool tl_simt_is_vec(const TlType *t);
unsigned tl_simt_vec_size(const TlType *t);
TlType *tl_simt_vec_elem(const TlType *t);
bool tl_simt_is_ptr(const TlType *t);
TlSimtSpace tl_simt_ptr_space(const TlType *t);
/* Bits of a scalar or vector register value, 0 for other types. */
unsigned tl_simt_value_bits(const TlType *t);

/* !simt.tensormap: a TMA tensor map, a kernel parameter passed by value
 * (128 bytes, docs/simt.md "mbarrier and TMA"). Uniqued in ctx; never
 * NULL. tl_simt_is_tensormap is false for NULL. */
TlType *tl_simt_tensormap_type(TlContext *ctx);
bool tl_simt_is_tensormap(const TlType *t);

/* The rows of the form table (include/tl/forms.def) of simt.mma,
 * simt.ldmatrix and simt.cp_async ops, read from their attributes: never
 * NULL for a verified op of that name; NULL for another op or a form the
 * table lacks. Static storage. */
const TlMmaForm *tl_simt_mma_form(const TlOp *op);
const TlLdmatrixForm *tl_simt_ldmatrix_form(const TlOp *op);
const TlCpAsyncForm *tl_simt_cp_async_form(const TlOp *op);
/* The wgmma form table's row of a simt.wgmma op (same contract). */
const TlWgmmaForm *tl_simt_wgmma_form(const TlOp *op);
/* The code of a simt.wgmma_desc swizzle name in the descriptor's bits
 * 62-63 ("none" 0, "128B" 1, "64B" 2, "32B" 3); -1 for another name or
 * NULL. */
int tl_simt_wgmma_swizzle_code(const char *name);
/* What a target needs to run op: true, with the feature and the first PTX
 * ISA (x 10), for an op whose form is a row of the form table (and
 * cp.async's commit and wait, which need cp.async; the mbarrier, TMA and
 * async-proxy fence ops, which need TMA; the wgmma fence, commit, wait and
 * descriptor ops, which need wgmma and PTX 8.0; simt.setmaxnreg, which
 * needs setmaxnreg and PTX 8.0); false for the others, which every target
 * runs. */
bool tl_simt_op_needs(const TlOp *op, TlFeature *feature, unsigned *min_ptx);

/* One conversion of a simt.printf format: text[start, end) is the whole
 * `%...c` (flags "-+ #0", width, `.precision`, `ll` for 64-bit integers),
 * conv its letter: an integer (d i u x X o c), taking an i32/u32 operand,
 * or an i64/u64 one with `ll`; or a float (f F e E g G a A), taking an f32
 * (printed as a double) or an f64 operand. */
typedef struct TlPrintfSpec {
  size_t start, end;
  char conv;
  bool wide; /* `ll` */
} TlPrintfSpec;

/* The next conversion of fmt[0, len) at or after *pos (which it advances);
 * `%%` is text. Returns 1 with *spec filled, 0 at the end, -1 for a
 * malformed or unsupported conversion (*spec->start says where). */
int tl_simt_printf_next(const char *fmt, size_t len, size_t *pos, TlPrintfSpec *spec);

#ifdef __cplusplus
}
#endif
#endif
