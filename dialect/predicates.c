/* The tables of tl/ops/predicates.def expanded: lookup by name and by an
 * op's attribute, names, masks, and the evaluation of a predicate on two
 * values through the relation that holds between them. Shared by the
 * arith and tl dialects and the layers above them. */
#include "tl/predicates.h"

#include <math.h>
#include <string.h>

typedef struct CmpiRow {
  const char *name;
  unsigned mask;
  TlCmpfPredicate on_floats;
} CmpiRow;

typedef struct Row {
  const char *name;
  unsigned mask;
} Row;

static const CmpiRow cmpi_rows[] = {
#define TL_CMPI_PREDICATE(ID, name, mask, on_floats)                           \
  {name, mask, TL_CMPF_##on_floats},
#include "tl/ops/predicates.def"
};

static const Row cmpf_rows[] = {
#define TL_CMPF_PREDICATE(ID, name, mask) {name, mask},
#include "tl/ops/predicates.def"
};

static const char *const reduce_names[] = {
#define TL_REDUCE_KIND(ID, name) name,
#include "tl/ops/predicates.def"
};

typedef struct AtomicRow {
  const char *name, *ptx;
} AtomicRow;

typedef struct ScopeRow {
  const char *name, *ptx, *llvm;
} ScopeRow;

typedef struct OrderRow {
  const char *name;
  bool acquire, release;
} OrderRow;

static const AtomicRow atomic_rows[] = {
#define TL_ATOMIC_KIND(ID, name, ptx) {name, ptx},
#include "tl/ops/predicates.def"
};

static const ScopeRow scope_rows[] = {
#define TL_MEM_SCOPE(ID, name, ptx, llvm) {name, ptx, llvm},
#include "tl/ops/predicates.def"
};

static const OrderRow order_rows[] = {
#define TL_MEM_ORDER(ID, name, acquire, release) {name, acquire, release},
#include "tl/ops/predicates.def"
};

TlCmpiPredicate tl_cmpi_predicate_by_name(const char *name) {
  for (int i = 0; name && i < TL_CMPI_COUNT; i++)
    if (!strcmp(cmpi_rows[i].name, name))
      return (TlCmpiPredicate)i;
  return TL_CMPI_UNKNOWN;
}

TlCmpfPredicate tl_cmpf_predicate_by_name(const char *name) {
  for (int i = 0; name && i < TL_CMPF_COUNT; i++)
    if (!strcmp(cmpf_rows[i].name, name))
      return (TlCmpfPredicate)i;
  return TL_CMPF_UNKNOWN;
}

TlReduceKind tl_reduce_kind_by_name(const char *name) {
  for (int i = 0; name && i < TL_REDUCE_COUNT; i++)
    if (!strcmp(reduce_names[i], name))
      return (TlReduceKind)i;
  return TL_REDUCE_UNKNOWN;
}

TlAtomicKind tl_atomic_kind_by_name(const char *name) {
  for (int i = 0; name && i < TL_ATOMIC_COUNT; i++)
    if (!strcmp(atomic_rows[i].name, name))
      return (TlAtomicKind)i;
  return TL_ATOMIC_UNKNOWN;
}

TlMemScope tl_mem_scope_by_name(const char *name) {
  for (int i = 0; name && i < TL_SCOPE_COUNT; i++)
    if (!strcmp(scope_rows[i].name, name))
      return (TlMemScope)i;
  return TL_SCOPE_UNKNOWN;
}

TlMemOrder tl_mem_order_by_name(const char *name) {
  for (int i = 0; name && i < TL_ORDER_COUNT; i++)
    if (!strcmp(order_rows[i].name, name))
      return (TlMemOrder)i;
  return TL_ORDER_UNKNOWN;
}

/* The value of a string attribute, or NULL. */
static const char *str_attr(const TlOp *op, const char *name) {
  TlAttr *a = tl_op_attr(op, name);
  return a && tl_attr_kind(a) == TL_ATTR_STRING ? tl_attr_string_value(a, NULL)
                                                : NULL;
}

TlCmpiPredicate tl_cmpi_predicate_of(const TlOp *op) {
  return tl_cmpi_predicate_by_name(str_attr(op, "predicate"));
}

TlCmpfPredicate tl_cmpf_predicate_of(const TlOp *op) {
  return tl_cmpf_predicate_by_name(str_attr(op, "predicate"));
}

TlReduceKind tl_reduce_kind_of(const TlOp *op) {
  return tl_reduce_kind_by_name(str_attr(op, "kind"));
}

TlAtomicKind tl_atomic_kind_of(const TlOp *op) {
  return tl_atomic_kind_by_name(str_attr(op, "kind"));
}

TlMemScope tl_mem_scope_of(const TlOp *op, TlMemScope dflt) {
  return tl_op_attr(op, "scope") ? tl_mem_scope_by_name(str_attr(op, "scope"))
                                 : dflt;
}

TlMemOrder tl_mem_order_of(const TlOp *op, TlMemOrder dflt) {
  return tl_op_attr(op, "ordering")
             ? tl_mem_order_by_name(str_attr(op, "ordering"))
             : dflt;
}

const char *tl_atomic_kind_name(TlAtomicKind k) {
  tl_assert(k >= 0 && k < TL_ATOMIC_COUNT);
  return atomic_rows[k].name;
}

const char *tl_atomic_kind_ptx(TlAtomicKind k) {
  tl_assert(k >= 0 && k < TL_ATOMIC_COUNT);
  return atomic_rows[k].ptx;
}

const char *tl_mem_scope_name(TlMemScope s) {
  tl_assert(s >= 0 && s < TL_SCOPE_COUNT);
  return scope_rows[s].name;
}

const char *tl_mem_scope_ptx(TlMemScope s) {
  tl_assert(s >= 0 && s < TL_SCOPE_COUNT);
  return scope_rows[s].ptx;
}

const char *tl_mem_scope_llvm(TlMemScope s) {
  tl_assert(s >= 0 && s < TL_SCOPE_COUNT);
  return scope_rows[s].llvm;
}

const char *tl_mem_order_name(TlMemOrder o) {
  tl_assert(o >= 0 && o < TL_ORDER_COUNT);
  return order_rows[o].name;
}

bool tl_mem_order_acquires(TlMemOrder o) {
  tl_assert(o >= 0 && o < TL_ORDER_COUNT);
  return order_rows[o].acquire;
}

bool tl_mem_order_releases(TlMemOrder o) {
  tl_assert(o >= 0 && o < TL_ORDER_COUNT);
  return order_rows[o].release;
}

const char *tl_cmpi_predicate_name(TlCmpiPredicate p) {
  tl_assert(p >= 0 && p < TL_CMPI_COUNT);
  return cmpi_rows[p].name;
}

const char *tl_cmpf_predicate_name(TlCmpfPredicate p) {
  tl_assert(p >= 0 && p < TL_CMPF_COUNT);
  return cmpf_rows[p].name;
}

const char *tl_reduce_kind_name(TlReduceKind k) {
  tl_assert(k >= 0 && k < TL_REDUCE_COUNT);
  return reduce_names[k];
}

unsigned tl_cmpi_predicate_mask(TlCmpiPredicate p) {
  tl_assert(p >= 0 && p < TL_CMPI_COUNT);
  return cmpi_rows[p].mask;
}

unsigned tl_cmpf_predicate_mask(TlCmpfPredicate p) {
  tl_assert(p >= 0 && p < TL_CMPF_COUNT);
  return cmpf_rows[p].mask;
}

TlCmpfPredicate tl_cmpi_predicate_on_floats(TlCmpiPredicate p) {
  tl_assert(p >= 0 && p < TL_CMPI_COUNT);
  return cmpi_rows[p].on_floats;
}

bool tl_cmpi_holds_signed(TlCmpiPredicate p, int64_t a, int64_t b) {
  unsigned rel = a < b ? TL_CMP_LT : a > b ? TL_CMP_GT : TL_CMP_EQ;
  return (tl_cmpi_predicate_mask(p) & rel) != 0;
}

bool tl_cmpi_holds_unsigned(TlCmpiPredicate p, uint64_t a, uint64_t b) {
  unsigned rel = a < b ? TL_CMP_LT : a > b ? TL_CMP_GT : TL_CMP_EQ;
  return (tl_cmpi_predicate_mask(p) & rel) != 0;
}

bool tl_cmpf_holds(TlCmpfPredicate p, double a, double b) {
  /* C's < > == are IEEE's ordered comparisons: all false with a NaN, and
   * -0 == +0. */
  unsigned rel = isnan(a) || isnan(b) ? TL_CMP_UNORDERED
                 : a < b              ? TL_CMP_LT
                 : a > b              ? TL_CMP_GT
                                      : TL_CMP_EQ;
  return (tl_cmpf_predicate_mask(p) & rel) != 0;
}
