# Unit tests of exec/analysis (include/tl/analysis.h): shared-memory sizes,
# alignments and the plan read back through the C API, and the soundness of
# the divisibility rules against plain C arithmetic on random values (run
# from test/unit/analysis.test).
tl_add_unit_test(unit_analysis analysis_test.c LIBS tl_analysis tl_dialects tl_layout tl_ir tl_support)
