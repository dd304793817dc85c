/* Comparison predicates and reduction kinds: the names arith.cmpi, tl.cmp,
 * arith.cmpf and tl.reduce accept and what each means, declared once in
 * tl/ops/predicates.def. The dialects parse and verify with these tables;
 * the VMs evaluate with them and the back end maps them to LLVM's
 * predicates.
 *
 * A predicate is the set of relations of a to b for which `a PRED b`
 * holds, a mask of the TL_CMP_* bits: for any two values exactly one of
 * less, equal, greater and unordered (a or b is NaN) holds. +0 and -0 are
 * equal. */
#ifndef TL_PREDICATES_H
#define TL_PREDICATES_H

#include "tl/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  TL_CMP_LT = 1,
  TL_CMP_EQ = 2,
  TL_CMP_GT = 4,
  TL_CMP_UNORDERED = 8,
};

/* The predicates of arith.cmpi and tl.cmp, TL_CMPI_EQ .. TL_CMPI_GE. */
typedef enum TlCmpiPredicate {
  TL_CMPI_UNKNOWN = -1,
#define TL_CMPI_PREDICATE(ID, name, mask, on_floats) TL_CMPI_##ID,
#include "tl/ops/predicates.def"
  TL_CMPI_COUNT
} TlCmpiPredicate;

/* The predicates of arith.cmpf, TL_CMPF_OEQ .. TL_CMPF_UNO. */
typedef enum TlCmpfPredicate {
  TL_CMPF_UNKNOWN = -1,
#define TL_CMPF_PREDICATE(ID, name, mask) TL_CMPF_##ID,
#include "tl/ops/predicates.def"
  TL_CMPF_COUNT
} TlCmpfPredicate;

/* The reductions of tl.reduce, TL_REDUCE_SUM .. TL_REDUCE_MIN. */
typedef enum TlReduceKind {
  TL_REDUCE_UNKNOWN = -1,
#define TL_REDUCE_KIND(ID, name) TL_REDUCE_##ID,
#include "tl/ops/predicates.def"
  TL_REDUCE_COUNT
} TlReduceKind;

/* The operations of the atomics (tl.atomic_rmw's and simt.atom's `kind`),
 * TL_ATOMIC_ADD .. TL_ATOMIC_EXCH. */
typedef enum TlAtomicKind {
  TL_ATOMIC_UNKNOWN = -1,
#define TL_ATOMIC_KIND(ID, name, ptx) TL_ATOMIC_##ID,
#include "tl/ops/predicates.def"
  TL_ATOMIC_COUNT
} TlAtomicKind;

/* The memory scopes of atomics and fences (`scope`): the threads the
 * ordering is promised to, TL_SCOPE_CTA (the block), TL_SCOPE_GPU (the
 * device, the default) and TL_SCOPE_SYS (the device and the host). */
typedef enum TlMemScope {
  TL_SCOPE_UNKNOWN = -1,
#define TL_MEM_SCOPE(ID, name, ptx, llvm) TL_SCOPE_##ID,
#include "tl/ops/predicates.def"
  TL_SCOPE_COUNT
} TlMemScope;

/* The memory orderings of atomics and fences (`ordering`), TL_ORDER_RELAXED
 * .. TL_ORDER_ACQ_REL. */
typedef enum TlMemOrder {
  TL_ORDER_UNKNOWN = -1,
#define TL_MEM_ORDER(ID, name, acquire, release) TL_ORDER_##ID,
#include "tl/ops/predicates.def"
  TL_ORDER_COUNT
} TlMemOrder;

/* The entry named `name` ("lt", "uge", "sum"); *_UNKNOWN when name is
 * NULL or names none. */
TlCmpiPredicate tl_cmpi_predicate_by_name(const char *name);
TlCmpfPredicate tl_cmpf_predicate_by_name(const char *name);
TlReduceKind tl_reduce_kind_by_name(const char *name);
TlAtomicKind tl_atomic_kind_by_name(const char *name);
TlMemScope tl_mem_scope_by_name(const char *name);
TlMemOrder tl_mem_order_by_name(const char *name);

/* The entry of an op's string attribute: `predicate` of arith.cmpi or
 * tl.cmp, of arith.cmpf, `kind` of tl.reduce; *_UNKNOWN when the attribute
 * is missing, not a string, or names none. */
TlCmpiPredicate tl_cmpi_predicate_of(const TlOp *op);
TlCmpfPredicate tl_cmpf_predicate_of(const TlOp *op);
TlReduceKind tl_reduce_kind_of(const TlOp *op);
TlAtomicKind tl_atomic_kind_of(const TlOp *op);
/* The `scope` and `ordering` of an atomic or fence: the default given when
 * the attribute is missing, *_UNKNOWN when it is not a string or names
 * none. */
TlMemScope tl_mem_scope_of(const TlOp *op, TlMemScope dflt);
TlMemOrder tl_mem_order_of(const TlOp *op, TlMemOrder dflt);

/* The name of an entry (static storage). The argument must be a valid
 * entry (not *_UNKNOWN). */
const char *tl_cmpi_predicate_name(TlCmpiPredicate p);
const char *tl_cmpf_predicate_name(TlCmpfPredicate p);
const char *tl_reduce_kind_name(TlReduceKind k);
const char *tl_atomic_kind_name(TlAtomicKind k);
const char *tl_mem_scope_name(TlMemScope s);
const char *tl_mem_order_name(TlMemOrder o);
/* The PTX qualifier of a scope ("cta", "gpu", "sys") and its NVPTX sync
 * scope in LLVM IR ("block", "device", "" for the system); the PTX op of
 * an atomic ("add", "exch", ...). */
const char *tl_mem_scope_ptx(TlMemScope s);
const char *tl_mem_scope_llvm(TlMemScope s);
const char *tl_atomic_kind_ptx(TlAtomicKind k);
/* Whether an ordering has the acquire half (acquire, acq_rel) or the
 * release half (release, acq_rel). */
bool tl_mem_order_acquires(TlMemOrder o);
bool tl_mem_order_releases(TlMemOrder o);

/* The relations for which a predicate holds (TL_CMP_* bits). */
unsigned tl_cmpi_predicate_mask(TlCmpiPredicate p);
unsigned tl_cmpf_predicate_mask(TlCmpfPredicate p);

/* The float predicate tl.cmp means by p on float tiles: the ordered one
 * (false when an operand is NaN), but TL_CMPF_UNE for TL_CMPI_NE. */
TlCmpfPredicate tl_cmpi_predicate_on_floats(TlCmpiPredicate p);

/* Whether `a p b` holds for integers ordered as signed or as unsigned
 * values (the operand type's signedness decides which). */
bool tl_cmpi_holds_signed(TlCmpiPredicate p, int64_t a, int64_t b);
bool tl_cmpi_holds_unsigned(TlCmpiPredicate p, uint64_t a, uint64_t b);
/* Whether `a p b` holds for floats, by IEEE 754: NaN is unordered with
 * everything, itself included; -0 equals +0. */
bool tl_cmpf_holds(TlCmpfPredicate p, double a, double b);

#ifdef __cplusplus
}
#endif
#endif
