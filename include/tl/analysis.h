/* Analyses of tl kernels that the lowering to simt consults
 * (docs/analysis.md describes both precisely):
 *
 *  - the shared-memory plan: a byte offset and alignment for every
 *    tl.alloc_shared of a tl.kernel in the kernel's dynamic shared memory,
 *    and the kernel's total, written as attributes by the pass
 *    plan-shared-memory (or tl_plan_shared_memory) and read back here;
 *  - divisibility of integer values: the largest power of two known to
 *    divide each integer SSA value (and the value where it is a constant),
 *    in the style of Triton's axis info, and from it the guaranteed byte
 *    alignment of the elements a global-memory access touches.
 *
 * Library tl_analysis (exec/analysis). */
#ifndef TL_ANALYSIS_H
#define TL_ANALYSIS_H

#include "tl/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/*===------------------------------------------------------------------===*
 * Shared-memory plan
 *===------------------------------------------------------------------===*/

/* Bytes a !tl.shared tile occupies: the cosize of its element layout
 * (tl_shared_layout_cosize: one past the largest element offset, rounded up
 * to the swizzle block) times the element's bits, rounded up to whole
 * bytes (sub-byte elements are packed). -1 when t is not a !tl.shared
 * type or its layout cannot be built. */
int64_t tl_shared_type_bytes(const TlType *t);
/* The alignment, in bytes, the plan gives a tile of type t: 16, or the
 * swizzle block (2^(B+M+S) elements) in bytes rounded up to a power of two
 * when that is larger. -1 when t is not a !tl.shared type. */
int64_t tl_shared_type_alignment(const TlType *t);

/* Plans one tl.kernel: sets `offset` and `alignment` (i64) on each of its
 * tl.alloc_shared ops and `smem_bytes` (i64) on the kernel, replacing
 * earlier values. Fails, after an error at the kernel, when the total
 * exceeds `limit` bytes (the attributes are then left unset) or when an
 * allocation's type has no layout. */
TlResult tl_plan_shared_memory(TlOp *kernel, int64_t limit);

/* The planned byte offset of a tl.alloc_shared (its `offset` attribute).
 * False (and *offset untouched) when the op is not a tl.alloc_shared or has
 * not been planned. */
bool tl_shared_offset(TlOp *alloc, int64_t *offset);
/* The planned alignment of a tl.alloc_shared (its `alignment` attribute);
 * false as tl_shared_offset. */
bool tl_shared_alignment(TlOp *alloc, int64_t *alignment);
/* Whether a planned tl.alloc_shared shares bytes with a tile allocated
 * before it in program order (false when not planned). Tiles that share
 * bytes never lie in one loop, so every access to the earlier tile happens
 * before any access to this one: one barrier before this allocation
 * separates them across the block's threads. */
bool tl_shared_reuses(TlOp *alloc);
/* The planned dynamic shared memory of a tl.kernel in bytes (its
 * `smem_bytes` attribute); -1 when the kernel has not been planned. */
int64_t tl_kernel_smem_bytes(TlOp *kernel);

/* The global workspace of a tl.kernel: every tl.alloc_global gets a byte
 * `offset` (i64) in one buffer per launch, in program order, each a
 * multiple of 256 bytes (their tensors live for the whole launch), and the
 * kernel gets the total as `workspace_bytes` (i64; 0 without any). */
void tl_plan_global_workspace(TlOp *kernel);
/* The tensor's bytes: its elements' bits rounded up to whole bytes. */
int64_t tl_global_workspace_bytes_of(const TlType *t);

/*===------------------------------------------------------------------===*
 * Divisibility and alignment
 *===------------------------------------------------------------------===*/

/* Divisibilities are capped at 2^30 (the value 0 is divisible by every
 * power of two and reports 2^30). */
#define TL_DIVISIBILITY_MAX (INT64_C(1) << 30)

/* Checks a tl.kernel's `assume` attribute, if any: a dictionary whose
 * entries name integer (not i1) or !tl.ptr parameters of the kernel, each
 * with a positive power of two N up to 2^30 that is below 2^width for an
 * integer parameter. Reports every problem at the kernel and fails. */
TlResult tl_kernel_check_assumptions(TlOp *kernel);

/* Checks one launch of a kernel against its `assume`: values[i] is the
 * value of integer parameter i (two's complement) or the byte address of
 * pointer parameter i, for i < n; other entries are ignored, and 0 (which
 * every power of two divides) stands for an address the caller does not
 * know. Reports each broken promise at the kernel, with the argument's
 * name and value, and fails; fails too for a malformed `assume`. */
TlResult tl_kernel_check_launch_assumptions(TlOp *kernel, unsigned n,
                                           const uint64_t *values);

typedef struct TlAnalysis TlAnalysis;

/* Analyses every integer and pointer value nested in `root`: a tl.kernel
 * (its parameters as `assume` says), or any op with regions, whose entry
 * arguments are then unknown (pointers: aligned to their element). Caller
 * owns the result. NULL, after diagnostics from
 * tl_kernel_check_assumptions, when root is a kernel with a malformed
 * `assume`. The IR must not change while the result is used. */
TlAnalysis *tl_analysis_run(TlOp *root);
void tl_analysis_destroy(TlAnalysis *a);

/* The largest power of two (at most TL_DIVISIBILITY_MAX) known to divide
 * v: for an integer, its value (as the type's signedness reads it; the
 * same for both readings); for a !tl.ptr, its byte address. 1 for a value
 * the analysis knows nothing about or did not reach; 0 for a value that is
 * neither an integer nor a pointer. */
int64_t tl_analysis_divisibility(TlAnalysis *a, TlValue *v);
/* True, with the value, when v is an integer the analysis proved constant
 * (arith.constant, tl.template, and arithmetic on them). */
bool tl_analysis_constant(TlAnalysis *a, TlValue *v, int64_t *value);

/* The guaranteed alignment in bytes of the address of element
 * (offsets[k] + index[k])_k of the global view `view` (a value of a
 * !tl.global type, normally a tl.view_global result), where each index[k]
 * is an unknown multiple of index_div[k] (a power of two), or 0 when
 * index_div[k] is 0. offsets has one value per dimension. Returns a power
 * of two up to TL_DIVISIBILITY_MAX, or 0 when the element may start inside
 * a byte (sub-byte element types). */
int64_t tl_analysis_view_alignment(TlAnalysis *a, TlValue *view,
                                   TlValue *const *offsets,
                                   const int64_t *index_div);

/* What the lowering needs to vectorise one global access. */
typedef struct TlAccessAlignment {
  /* Bytes (a power of two, or 0 if the address may fall inside a byte):
   * the guaranteed alignment of the tile's first element [0, ..., 0]... */
  int64_t first;
  /* ... of the start [r_0, ..., r_{n-2}, 0] of every row of the tile ... */
  int64_t row;
  /* ... and of every element of the tile. */
  int64_t element;
  /* Elements of the tile, in its row-major order from any row start, that
   * are known to lie at consecutive element addresses (>= 1): the tile's
   * last dimension when the view's last stride is 1, times each earlier
   * dimension k of the tile while stride_k = stride_{k+1} * tile_{k+1}
   * (for a row-major view: the tile spans the whole dimension k + 1). */
  int64_t contiguous;
} TlAccessAlignment;

/* For tl.load_global, tl.store_global, tl.copy_async and the tile form of
 * tl.atomic_rmw: the alignments of the tile at the op's offsets in its
 * global view. False for any other op. */
bool tl_analysis_access_alignment(TlAnalysis *a, TlOp *access,
                                  TlAccessAlignment *out);

/*===------------------------------------------------------------------===*
 * Global view extents
 *===------------------------------------------------------------------===*/

/* The bytes each tl.view_global over a pointer parameter of a tl.kernel
 * needs from the buffer a launch binds to that parameter (docs/runtime.md,
 * "Extent checks"): elem_bits * (1 + sum_i (size_i - 1) * stride_i)
 * rounded up to bytes, 0 for a view with an empty dimension, with each
 * size and stride traced through the integer arith ops to constants,
 * template values and integer parameters, and times the conditions of the
 * scf.if branches its uses lie in (those that trace; loops count as
 * entered). A view whose sizes or strides depend on anything else (a
 * loaded value, the block's indices, a loop's counter) is unchecked, as is
 * one that is unused or used only in branches the instance never takes;
 * views over values that are not parameters are not listed. The kernel
 * must verify and outlive the object, which the caller owns
 * (tl_view_extents_destroy accepts NULL). Never fails. */
typedef struct TlViewExtents TlViewExtents;
TlViewExtents *tl_view_extents_create(TlOp *kernel);
void tl_view_extents_destroy(TlViewExtents *x);
unsigned tl_view_extents_count(const TlViewExtents *x);

typedef struct TlViewExtent {
  TlOp *view;        /* the tl.view_global */
  unsigned param;    /* the pointer parameter it views */
  const char *text;  /* the view as messages name it: "kc[nbh, len, 64]" */
  const char *bytes; /* the bytes it needs, a condition in the language of
                        requires clauses (tl.h) over the integer
                        parameters' names, e.g. "(n > 0) * (n * 4)";
                        NULL when unchecked */
  const char *why;   /* unchecked: the reason (static text) */
} TlViewExtent;
/* View i < count, in program order; the texts are owned by x. */
void tl_view_extents_get(const TlViewExtents *x, unsigned i,
                         TlViewExtent *out);
/* The bytes view i needs for the parameter values int_args (indexed by
 * parameter, read for the integer ones only, each wrapped to its type as
 * the kernel sees it), the value of its `bytes` text; 0 for an unchecked
 * view. The right operand of a product whose left operand is 0 is not
 * evaluated (as && does), so a branch the launch does not take cannot
 * fail. False on an overflow of 64-bit integers or a divisor that is not
 * positive. */
bool tl_view_extents_eval(const TlViewExtents *x, unsigned i,
                          const int64_t *int_args, int64_t *bytes);
/* What each of the kernel's n parameters needs for int_args: need[p] the
 * largest bytes of its checked views (-1 when one of them overflows or
 * divides by a non-positive value), view[p] that view's index (-1: no
 * checked view, need[p] 0). */
void tl_view_extents_needs(const TlViewExtents *x, unsigned n,
                           const int64_t *int_args, int64_t *need, int *view);

#ifdef __cplusplus
}
#endif
#endif
