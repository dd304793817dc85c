/* The tl dialect: thread-block level tiles with layouts (Tilus §6).
 *
 * Types (every T is a scalar type: iN, uN, i1, f16, bf16, f32, f64, fNeXmY):
 *   !tl.ptr<T>                          a pointer to global memory
 *   !tl.global<DxDxT>                   a row-major view of global memory;
 *   !tl.global<DxDxT, strided>          or one with explicit strides
 *                                       (D is a size or `?` for dynamic)
 *   !tl.shared<DxDxT>                   a shared-memory tile, row-major;
 *   !tl.shared<DxDxT, column_major>     column-major; either may end with
 *   !tl.shared<DxDxT, swizzle<B, M, S>> an XOR swizzle (CuTe's)
 *   !tl.reg<DxDxT, #tl.layout<...>>     a register tile distributed over the
 *                                       block's threads by a layout
 * Attributes:
 *   #tl.layout<local(2, 1).spatial(8, 4)>   a register layout (layout.h)
 */
#ifndef TL_TL_H
#define TL_TL_H

#include "tl/dtype.h"
#include "tl/ir.h"
#include "tl/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Registers the tl dialect (tl_register_all_dialects does it too). */
void tl_tl_register(TlContext *ctx);

/* #tl.layout: uniqued in the context (compare with ==). The stored value
 * is the canonical form of *layout, so equal layouts give one attribute.
 * NULL (no diagnostic) when layout is NULL or not a valid layout. */
TlAttr *tl_layout_attr_get(TlContext *ctx, const TlLayout *layout);
/* The layout of a #tl.layout attribute, or NULL for any other attribute. */
const TlLayout *tl_layout_attr_value(const TlAttr *a);

typedef enum TlTensorKind {
  TL_TENSOR_NONE, /* not a tl tensor type */
  TL_TENSOR_GLOBAL,
  TL_TENSOR_SHARED,
  TL_TENSOR_REG,
} TlTensorKind;

/* Type constructors, uniqued in the context (compare with ==). NULL (no
 * diagnostic) when elem is not a scalar (or NULL), dims is NULL, the rank
 * is outside 1..8, a dimension is outside 1..2^31-1 (or -1 where dynamic
 * is allowed: !tl.global only), the layout is NULL, invalid or of another
 * shape, or the shared tile has no valid element layout: more than
 * 2^31-1 elements, or a swizzle other than none (B = M = S = 0) or
 * 1 <= B <= 8, 0 <= M <= 16, B <= S <= 16. */
TlType *tl_ptr_type_get(TlContext *ctx, TlType *elem);
TlType *tl_global_type_get(TlContext *ctx, unsigned rank, const int64_t *dims,
                           TlType *elem, bool strided);
TlType *tl_shared_type_get(TlContext *ctx, unsigned rank, const int64_t *dims,
                           TlType *elem, bool column_major, int swizzle_bits,
                           int swizzle_base, int swizzle_shift);
TlType *tl_reg_type_get(TlContext *ctx, unsigned rank, const int64_t *dims,
                        TlType *elem, const TlLayout *layout);

/* Accessors. Each accepts any type (or NULL) and answers neutrally for a
 * type of another kind: false, NULL, 0 or TL_TENSOR_NONE. */
bool tl_type_is_ptr(const TlType *t);
TlTensorKind tl_tensor_kind(const TlType *t);
/* Element type of a tensor or pointer type. */
TlType *tl_tensor_elem(const TlType *t);
unsigned tl_tensor_rank(const TlType *t);
/* Size of dimension i; -1 when dynamic (global tensors only); 0 when i is
 * not below the rank. */
int64_t tl_tensor_dim(const TlType *t, unsigned i);
/* Product of the dimensions; -1 if one is dynamic or the product does not
 * fit in int64 (a global view may be that large). */
int64_t tl_tensor_num_elements(const TlType *t);
bool tl_global_type_strided(const TlType *t);
/* The register layout of a !tl.reg type (owned by the context). */
const TlLayout *tl_reg_layout(const TlType *t);
/* #tl.smem: a shared-memory layout given in full (modes, strides, base,
 * swizzle), uniqued; NULL for a NULL layout / for other attributes. */
TlAttr *tl_smem_attr_get(TlContext *ctx, const TlSharedLayout *layout);
const TlSharedLayout *tl_smem_attr_value(const TlAttr *a);
/* A !tl.shared type with an explicit layout (!tl.shared<DxT, #tl.smem<...>>);
 * NULL when the layout's shape is not dims (or as tl_shared_type_get). */
TlType *tl_shared_type_get_layout(TlContext *ctx, unsigned rank,
                                  const int64_t *dims, TlType *elem,
                                  const TlSharedLayout *layout);
/* The explicit layout of a shared type, or NULL when it has none. */
const TlSharedLayout *tl_shared_type_explicit_layout(const TlType *t);
/* The concrete element layout of a !tl.shared type; fails (with a message
 * in err, which may be NULL) for any other type. */
bool tl_shared_type_layout(const TlType *t, TlSharedLayout *out, TlErr *err);
bool tl_shared_type_column_major(const TlType *t);
/* Swizzle<B, M, S> of a shared type; all 0 when unswizzled. */
void tl_shared_type_swizzle(const TlType *t, int *b, int *m, int *s);

/* !tl.tensormap<?x?xT, box = [B0, B1], swizzle = W>: a TMA tensor map over
 * a tensor of rank 1..3 (sizes known at launch), its box (outermost
 * first) and its shared-memory swizzle span in bytes (0: none, 32, 64 or
 * 128). A kernel parameter only (docs/langref.md). Uniqued; NULL (no
 * diagnostic) when tl_tensormap_type_check refuses the parameters. */
TlType *tl_tensormap_type_get(TlContext *ctx, unsigned rank, TlType *elem,
                              const int64_t *box, unsigned swizzle);
/* Whether the parameters make a tensor map type; false with the reason in
 * err (may be NULL): "the box's inner dimension is 96 bytes; under a
 * 128-byte swizzle it must be exactly 128". */
bool tl_tensormap_type_check(unsigned rank, const TlType *elem,
                             const int64_t *box, unsigned swizzle, TlErr *err);
bool tl_type_is_tensormap(const TlType *t);
/* Rank, element type, box dimension i (outermost first) and swizzle of a
 * tensor map type; 0 or NULL for other types. */
unsigned tl_tensormap_rank(const TlType *t);
TlType *tl_tensormap_elem(const TlType *t);
int64_t tl_tensormap_box(const TlType *t, unsigned i);
unsigned tl_tensormap_swizzle(const TlType *t);
/* The shared-memory layout in which TMA leaves the box (row-major, with
 * the swizzle as swizzle<log2(W/16), 4 - log2(element bytes), 3>); false
 * for other types. */
bool tl_tensormap_box_layout(const TlType *t, TlSharedLayout *out);

/* !tl.ring<stages = S, consumers = C>: the mbarriers of a producer/consumer
 * pipeline of S slots whose steps C consumer warps release (tl.alloc_ring,
 * docs/langref.md). Uniqued; NULL when S or C is outside 1..32. */
TlType *tl_ring_type_get(TlContext *ctx, int64_t stages, int64_t consumers);
bool tl_type_is_ring(const TlType *t);
/* S and C of a ring type; 0 for other types. */
unsigned tl_ring_stages(const TlType *t);
unsigned tl_ring_consumers(const TlType *t);

/* The ring of a tl.copy_async that fills a ring's slot (its operands end
 * with the ring and the step), or NULL. */
TlValue *tl_copy_async_ring(const TlOp *op);

/* The mbarriers of the ring that carries a kernel's commit groups once
 * it copies through tensor maps into groups (docs/lowering.md): R =
 * max(8, 1 + the largest N of its tl.copy_async_wait N); 0 for a kernel
 * (or any op) without such copies (copies into a tl.alloc_ring's slots
 * complete on that ring's barriers and do not count). A copy through a tensor map may join group g + R
 * only after group g has completed and the block has synchronized since
 * (the block VM checks it; the lowering relies on it). */
unsigned tl_kernel_tma_ring(TlOp *kernel);

/* Grid expressions (tl.kernel's grid and threads): integer arithmetic over
 * the kernel's integer parameters and template constants, by name:
 *   expr   ::= term (('+' | '-') term)*
 *   term   ::= factor (('*' | '/' | '%') factor)*
 *   factor ::= int | name | '(' expr ')' | ('ceildiv' | 'min' | 'max')
 *              '(' expr ',' expr ')' | query '(' name ')'
 *            | 'interleave' '(' name ',' name ')'
 *   query  ::= 'bits' | 'is_float' | 'is_signed'
 * int is a decimal literal (no sign: there is no unary minus); name is
 * [A-Za-z_][A-Za-z0-9_]*. Values are int64; overflow is an error. '/' and
 * '%' are floor division and its remainder (x % y has y's sign), ceildiv
 * rounds up; each needs a positive divisor. A query asks about a type
 * (a kernel's type template parameter): its width in bits, whether it is a
 * float, whether it is signed (floats are), the interleave of the cast
 * recipe between two types (tl_cast_recipe_interleave); the callbacks
 * below see it as one name, spelled `bits(WT)` or `interleave(WT, AT)`,
 * and give its value. */
typedef bool (*TlExprLookup)(void *user, const char *name, size_t len,
                             int64_t *value);
/* Evaluates text, looking names up through `lookup` (may be NULL: no
 * names). Fails with a message (division by a non-positive value, unknown
 * name, overflow, syntax) in err (may be NULL) and the 0-based byte offset
 * of the offending text in *err_offset (may be NULL). */
bool tl_expr_eval(const char *text, size_t len, TlExprLookup lookup, void *user,
                  int64_t *value, TlErr *err, size_t *err_offset);

/* What a name is while checking an expression. */
typedef enum TlExprName {
  TL_EXPR_NAME_UNKNOWN, /* not a name the expression may use */
  TL_EXPR_NAME_RUNTIME, /* known at launch only: stands for any value */
  TL_EXPR_NAME_CONST,   /* a constant, whose value the callback stores */
} TlExprName;
typedef TlExprName (*TlExprClassify)(void *user, const char *name, size_t len,
                                     int64_t *value);
/* Checks text before any runtime value is known: the syntax, that every
 * name is known, and that no arithmetic error can happen among its
 * constant parts (a constant divisor that is not positive; an overflow of
 * constant operands). Appends the canonical text (single spaces around
 * binary operators, `f(a, b)` for calls, parentheses as written) to out
 * (may be NULL). *is_const (may be NULL) says whether the value depends on
 * no runtime name; then *value (may be NULL) is that value. Fails as
 * tl_expr_eval does. */
bool tl_expr_check(const char *text, size_t len, TlExprClassify classify,
                   void *user, TlStr *out, bool *is_const, int64_t *value,
                   TlErr *err, size_t *err_offset);

/* Conditions (tl.kernel's requires clause and template expressions): grid
 * expressions extended with comparisons and logic, C's precedence:
 *   cond   ::= conj ('||' conj)*
 *   conj   ::= cmp ('&&' cmp)*
 *   cmp    ::= expr (('==' | '!=' | '<' | '<=' | '>' | '>=') expr)?
 *   factor ::= ... | '!' factor | '(' cond ')'
 * (call arguments are conds too). A comparison, `!`, `&&` and `||` give 1
 * (true) or 0; any other value is true when not 0. `&&` and `||` do not
 * evaluate their right operand when the left one decides: its arithmetic
 * errors are not reported (its names must still be known). Checks and
 * fails as tl_expr_check does; the canonical text has one space around
 * binary operators and none after `!`. */
bool tl_cond_check(const char *text, size_t len, TlExprClassify classify,
                   void *user, TlStr *out, bool *is_const, int64_t *value,
                   TlErr *err, size_t *err_offset);

/* Warp uniformity of a tl.kernel (dialect/tl/uniform.c; docs/langref.md,
 * "Warp-uniform values and warp branches"): which scalar values are
 * warp-uniform (the same in the threads of a warp, not of the block) and
 * which scf ops are warp branches (they run per warp). The kernel's
 * verifier runs tl_uniformity_verify, which checks the rules and reports
 * at the op that breaks one. */
typedef struct TlUniformity TlUniformity;
TlUniformity *tl_uniformity_create(TlOp *kernel);
void tl_uniformity_destroy(TlUniformity *u);
bool tl_uniformity_is_warp(const TlUniformity *u, const TlValue *v);
bool tl_uniformity_diverges(const TlUniformity *u, const TlOp *op);
/* Whether op is inside a warp branch, at any depth: an op enclosing it
 * (below the kernel) is a warp branch. The blocks of a branch's regions
 * and of the ops inside it are inside too. */
bool tl_uniformity_in_branch(const TlUniformity *u, const TlOp *op);
/* Whether a result of op may be a register tile whose layout spans
 * tile_threads threads in a block of `threads` threads: exactly the
 * block's, or, inside a warp branch, fewer that are whole warps (a
 * multiple of 32; threads 0 .. tile_threads - 1 hold the elements). False
 * with the reason in err (may be NULL): "a tile over fewer threads, a
 * multiple of 32, may be made only in a warp branch". */
bool tl_uniformity_tile_threads_ok(const TlUniformity *u, const TlOp *op,
                                   int64_t tile_threads, int64_t threads,
                                   TlErr *err);
/* threads: the block's threads, 0 when not known. */
TlResult tl_uniformity_verify(TlOp *kernel, int64_t threads);

/* The tl.kernel op enclosing op, or NULL. */
TlOp *tl_enclosing_kernel(TlOp *op);
/* Evaluates a kernel's grid (grid[1] and grid[2] are 1 when not given) and
 * threads per block for the given parameter values: int_args[i] is the
 * value of parameter i, read only for integer parameters (entries of the
 * others are ignored); int_args may be NULL when no expression uses a
 * parameter. Fails with a message in err (may be NULL) for an arithmetic
 * error or a result outside CUDA's limits (grid x 1..2^31-1, y and z
 * 1..65535, threads 1..1024), and for an op that is not a valid tl.kernel
 * (whose verifier errors go to the context's diagnostics). */
bool tl_kernel_launch_dims(TlOp *kernel, const int64_t *int_args,
                           int64_t grid[3], int64_t *threads, TlErr *err);
/* The same for a kernel the caller has verified (tl_verify of its module
 * succeeded and it has not changed since): no verifier run, so a launch
 * whose integer arguments change each time (a decode step's length) pays
 * only the expressions. */
bool tl_kernel_verified_launch_dims(TlOp *kernel, const int64_t *int_args,
                                    int64_t grid[3], int64_t *threads,
                                    TlErr *err);

/* The permutation of a verified tl.permute: perm[k] is the operand
 * dimension that result dimension k reads. False when the "perm" attribute
 * is missing or not an array of operand-rank dimension indices. */
bool tl_permute_perm(TlOp *op, int *perm);

/* How tl.cast rounds a float to an integer: its "rounding" attribute
 * ("rz" toward zero, the default; "rn" to nearest, ties to even; "rm"
 * toward -infinity; "rp" toward +infinity). The value is then saturated to
 * the result's range, NaN giving 0. */
typedef enum TlRounding {
  TL_ROUND_RZ,
  TL_ROUND_RN,
  TL_ROUND_RM,
  TL_ROUND_RP,
} TlRounding;

/* The rounding of a tl.cast: TL_ROUND_RZ without the attribute. Returns
 * false when the attribute is not one of the four strings (the verifier
 * rejects that), leaving *out TL_ROUND_RZ. */
bool tl_cast_rounding(const TlOp *op, TlRounding *out);
/* The attribute spelling of a rounding ("rz", "rn", "rm", "rp"). */
const char *tl_rounding_name(TlRounding r);

/* The offsets of a verified tl.slice (rank of the operand entries):
 * offsets[d] is the literal offset of dimension d, or -1 where an operand
 * gives it, the operands following the source in dimension order. False
 * when the "static_offsets" attribute is missing or does not match the
 * operands. */
bool tl_slice_offsets(TlOp *op, int64_t *offsets);

/* The dtype library's TlDType of an element type (bool, integers of 1 to
 * 64 bits, f16, bf16, f32, f64, small floats); false for other types. */
bool tl_type_to_dtype(const TlType *t, TlDType *out);

#ifdef __cplusplus
}
#endif
#endif
