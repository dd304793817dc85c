# The predicate and reduction tables (include/tl/predicates.h, run from
# test/unit/predicates.test).
tl_add_unit_test(unit_predicates predicates_test.c LIBS tl_dialects tl_ir tl_support m)
