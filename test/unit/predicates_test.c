/* Unit tests of the predicate and reduction tables (tl/predicates.h):
 * every float predicate against IEEE 754's comparisons, written here by
 * name with C99's quiet comparison macros, on NaN, both zeros, infinities,
 * subnormals and ordinary values; every integer predicate against C's
 * operators on signed and unsigned extremes; names, lookups, masks and
 * the reading of an op's attribute. */
#include "tl/dialects.h"
#include "tl/predicates.h"
#include "unit.h"

#include <float.h>
#include <math.h>
#include <stdint.h>

/* `a NAME b` by IEEE 754 (quiet comparisons: NaN is unordered with every
 * value, itself included; -0 == +0). */
static bool ieee_cmp(const char *name, double a, double b) {
  bool uno = isunordered(a, b);
  /* clang-format off */
  if (!strcmp(name, "oeq")) return !uno && a == b;
  if (!strcmp(name, "ogt")) return isgreater(a, b);
  if (!strcmp(name, "oge")) return isgreaterequal(a, b);
  if (!strcmp(name, "olt")) return isless(a, b);
  if (!strcmp(name, "ole")) return islessequal(a, b);
  if (!strcmp(name, "one")) return islessgreater(a, b);
  if (!strcmp(name, "ord")) return !uno;
  if (!strcmp(name, "ueq")) return uno || a == b;
  if (!strcmp(name, "ugt")) return !islessequal(a, b);
  if (!strcmp(name, "uge")) return !isless(a, b);
  if (!strcmp(name, "ult")) return !isgreaterequal(a, b);
  if (!strcmp(name, "ule")) return !isgreater(a, b);
  if (!strcmp(name, "une")) return !(a == b);
  if (!strcmp(name, "uno")) return uno;
  /* clang-format on */
  return false;
}

static const char *const float_names[] = {"oeq", "ogt", "oge", "olt", "ole",
                                          "one", "ord", "ueq", "ugt", "uge",
                                          "ult", "ule", "une", "uno"};

/* NaN of both signs, infinities, zeros, ordinary values, the least
 * normal, the least subnormal, the largest finite. */
static const double float_values[] = {NAN,
                                      -NAN,
                                      INFINITY,
                                      -INFINITY,
                                      0.0,
                                      -0.0,
                                      1.0,
                                      -1.0,
                                      1.5,
                                      -1.5,
                                      DBL_MIN,
                                      -DBL_MIN,
                                      4.9406564584124654e-324,
                                      DBL_MAX,
                                      -DBL_MAX};

#define NFLOAT (sizeof float_values / sizeof float_values[0])

static void test_cmpf(void) {
  CHECK_EQ_INT(TL_CMPF_COUNT, 14);
  for (size_t n = 0; n < 14; n++) {
    TlCmpfPredicate p = tl_cmpf_predicate_by_name(float_names[n]);
    CHECK(p != TL_CMPF_UNKNOWN);
    if (p == TL_CMPF_UNKNOWN)
      continue;
    CHECK_EQ_STR(tl_cmpf_predicate_name(p), float_names[n]);
    for (size_t i = 0; i < NFLOAT; i++)
      for (size_t j = 0; j < NFLOAT; j++) {
        double a = float_values[i], b = float_values[j];
        bool want = ieee_cmp(float_names[n], a, b);
        if (tl_cmpf_holds(p, a, b) != want)
          fprintf(stderr, "%s %g %g: want %d\n", float_names[n], a, b, want);
        CHECK(tl_cmpf_holds(p, a, b) == want);
      }
  }
  /* The zeros are equal, NaN is not equal to itself. */
  TlCmpfPredicate oeq = tl_cmpf_predicate_by_name("oeq");
  CHECK(tl_cmpf_holds(oeq, 0.0, -0.0));
  CHECK(!tl_cmpf_holds(oeq, NAN, NAN));
  CHECK(tl_cmpf_holds(tl_cmpf_predicate_by_name("une"), NAN, NAN));
  /* The set is closed under negation: each predicate's complement (in
   * the four relations) is another predicate, o<op> and u<inverse op>. */
  for (int p = 0; p < TL_CMPF_COUNT; p++) {
    unsigned want = ~tl_cmpf_predicate_mask((TlCmpfPredicate)p) & 15u;
    int found = 0;
    for (int q = 0; q < TL_CMPF_COUNT; q++)
      found += tl_cmpf_predicate_mask((TlCmpfPredicate)q) == want;
    CHECK_EQ_INT(found, 1);
  }
  CHECK(tl_cmpf_predicate_by_name("OEQ") == TL_CMPF_UNKNOWN);
  CHECK(tl_cmpf_predicate_by_name("eq") == TL_CMPF_UNKNOWN);
  CHECK(tl_cmpf_predicate_by_name("") == TL_CMPF_UNKNOWN);
  CHECK(tl_cmpf_predicate_by_name(NULL) == TL_CMPF_UNKNOWN);
}

/* `a NAME b` by C's operators, on the type given. */
static bool c_cmp_signed(const char *name, int64_t a, int64_t b) {
  /* clang-format off */
  if (!strcmp(name, "eq")) return a == b;
  if (!strcmp(name, "ne")) return a != b;
  if (!strcmp(name, "lt")) return a < b;
  if (!strcmp(name, "le")) return a <= b;
  if (!strcmp(name, "gt")) return a > b;
  if (!strcmp(name, "ge")) return a >= b;
  /* clang-format on */
  return false;
}
static bool c_cmp_unsigned(const char *name, uint64_t a, uint64_t b) {
  /* clang-format off */
  if (!strcmp(name, "eq")) return a == b;
  if (!strcmp(name, "ne")) return a != b;
  if (!strcmp(name, "lt")) return a < b;
  if (!strcmp(name, "le")) return a <= b;
  if (!strcmp(name, "gt")) return a > b;
  if (!strcmp(name, "ge")) return a >= b;
  /* clang-format on */
  return false;
}

static const char *const int_names[] = {"eq", "ne", "lt", "le", "gt", "ge"};

static void test_cmpi(void) {
  static const int64_t sv[] = {
      INT64_MIN, INT64_MIN + 1, INT32_MIN,     -2,       -1, 0, 1,
      2,         INT32_MAX,     INT64_MAX - 1, INT64_MAX};
  static const uint64_t uv[] = {0,
                                1,
                                2,
                                UINT32_MAX,
                                (uint64_t)INT64_MAX,
                                (uint64_t)INT64_MAX + 1,
                                UINT64_MAX - 1,
                                UINT64_MAX};
  CHECK_EQ_INT(TL_CMPI_COUNT, 6);
  for (size_t n = 0; n < 6; n++) {
    TlCmpiPredicate p = tl_cmpi_predicate_by_name(int_names[n]);
    CHECK(p != TL_CMPI_UNKNOWN);
    if (p == TL_CMPI_UNKNOWN)
      continue;
    CHECK_EQ_STR(tl_cmpi_predicate_name(p), int_names[n]);
    for (size_t i = 0; i < sizeof sv / sizeof sv[0]; i++)
      for (size_t j = 0; j < sizeof sv / sizeof sv[0]; j++)
        CHECK(tl_cmpi_holds_signed(p, sv[i], sv[j]) ==
              c_cmp_signed(int_names[n], sv[i], sv[j]));
    for (size_t i = 0; i < sizeof uv / sizeof uv[0]; i++)
      for (size_t j = 0; j < sizeof uv / sizeof uv[0]; j++)
        CHECK(tl_cmpi_holds_unsigned(p, uv[i], uv[j]) ==
              c_cmp_unsigned(int_names[n], uv[i], uv[j]));
    /* An integer is never unordered. */
    CHECK(!(tl_cmpi_predicate_mask(p) & TL_CMP_UNORDERED));
  }
  /* The signedness decides: the bits of -1 are the largest u64. */
  TlCmpiPredicate lt = tl_cmpi_predicate_by_name("lt");
  CHECK(tl_cmpi_holds_signed(lt, -1, 0));
  CHECK(!tl_cmpi_holds_unsigned(lt, (uint64_t)-1, 0));
  CHECK(tl_cmpi_holds_signed(lt, INT64_MIN, INT64_MAX));
  CHECK(!tl_cmpi_holds_unsigned(lt, (uint64_t)INT64_MIN, INT64_MAX));
  /* The names arith.cmpi does not take. */
  static const char *const bad[] = {"slt", "ult", "oeq", "EQ", "", "lt "};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    CHECK(tl_cmpi_predicate_by_name(bad[i]) == TL_CMPI_UNKNOWN);
  CHECK(tl_cmpi_predicate_by_name(NULL) == TL_CMPI_UNKNOWN);
}

/* tl.cmp on floats: each integer predicate as its ordered float one, but
 * `ne` the negation of `eq` (true with NaN). */
static void test_cmpi_on_floats(void) {
  static const char *const want[] = {"oeq", "une", "olt", "ole", "ogt", "oge"};
  for (size_t n = 0; n < 6; n++)
    CHECK_EQ_STR(tl_cmpf_predicate_name(tl_cmpi_predicate_on_floats(
                     tl_cmpi_predicate_by_name(int_names[n]))),
                 want[n]);
  TlCmpfPredicate eq = tl_cmpi_predicate_on_floats(TL_CMPI_EQ);
  TlCmpfPredicate ne = tl_cmpi_predicate_on_floats(TL_CMPI_NE);
  for (size_t i = 0; i < NFLOAT; i++)
    for (size_t j = 0; j < NFLOAT; j++) {
      double a = float_values[i], b = float_values[j];
      CHECK(tl_cmpf_holds(ne, a, b) == !tl_cmpf_holds(eq, a, b));
      /* Without NaN, the float form orders as the integer one does. */
      if (isnan(a) || isnan(b))
        continue;
      unsigned rel = a < b ? TL_CMP_LT : a > b ? TL_CMP_GT : TL_CMP_EQ;
      for (int p = 0; p < TL_CMPI_COUNT; p++)
        CHECK(tl_cmpf_holds(tl_cmpi_predicate_on_floats((TlCmpiPredicate)p), a,
                            b) ==
              ((tl_cmpi_predicate_mask((TlCmpiPredicate)p) & rel) != 0));
    }
}

static void test_reduce(void) {
  static const char *const names[] = {"sum", "max", "min"};
  CHECK_EQ_INT(TL_REDUCE_COUNT, 3);
  for (size_t n = 0; n < 3; n++) {
    TlReduceKind k = tl_reduce_kind_by_name(names[n]);
    CHECK(k != TL_REDUCE_UNKNOWN);
    if (k != TL_REDUCE_UNKNOWN)
      CHECK_EQ_STR(tl_reduce_kind_name(k), names[n]);
  }
  CHECK(tl_reduce_kind_by_name("SUM") == TL_REDUCE_UNKNOWN);
  CHECK(tl_reduce_kind_by_name("prod") == TL_REDUCE_UNKNOWN);
  CHECK(tl_reduce_kind_by_name(NULL) == TL_REDUCE_UNKNOWN);
}

/* The predicate of an op's attribute; unknown when the op has none. */
static void test_of_op(void) {
  TlContext *ctx = tl_context_create();
  tl_register_all_dialects(ctx);
  const char *src = "func @f(%a: u8, %x: f16) {\n"
                    "  %0 = arith.cmpi ge, %a, %a : u8\n"
                    "  %1 = arith.cmpf ult, %x, %x : f16\n"
                    "  %2 = arith.addi %a, %a : u8\n"
                    "  return\n"
                    "}\n";
  TlModule *m = tl_parse_module(ctx, "f.tl", src, strlen(src), 1);
  CHECK(m != NULL);
  if (m) {
    TlOp *fn = tl_block_first_op(tl_module_body(m));
    TlOp *cmpi = tl_block_first_op(tl_region_first_block(tl_op_region(fn, 0)));
    TlOp *cmpf = tl_op_next(cmpi), *addi = tl_op_next(cmpf);
    CHECK(tl_cmpi_predicate_of(cmpi) == TL_CMPI_GE);
    CHECK(tl_cmpf_predicate_of(cmpf) == TL_CMPF_ULT);
    CHECK(tl_cmpi_predicate_of(cmpf) == TL_CMPI_UNKNOWN);
    CHECK(tl_cmpf_predicate_of(addi) == TL_CMPF_UNKNOWN);
    CHECK(tl_reduce_kind_of(addi) == TL_REDUCE_UNKNOWN);
    tl_module_destroy(m);
  }
  tl_context_destroy(ctx);
}

int main(void) {
  test_cmpf();
  test_cmpi();
  test_cmpi_on_floats();
  test_reduce();
  test_of_op();
  return unit_report();
}
