# lib/dtype unit tests (run from test/unit/dtype.test).
tl_add_unit_test(unit_dtype dtype_test.c LIBS tl_dtype tl_support)
tl_add_unit_test(unit_dtype_recipe dtype_recipe_test.c LIBS tl_dtype tl_support)
