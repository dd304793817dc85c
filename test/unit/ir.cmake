tl_add_unit_test(unit_ir ir_test.c LIBS tl_passes tl_dialects tl_ir tl_support)
