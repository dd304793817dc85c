# The tuning space and the tune cache (exec/tune), run from
# test/unit/tune.test in a scratch directory.
tl_add_unit_test(unit_tune tune_test.c LIBS tl_tune tl_support)
