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
