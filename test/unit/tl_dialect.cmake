# Unit tests of the tl dialect's C API (include/tl/tl.h): types, layouts as
# attributes, grid expressions, launch dimensions and template overrides.
tl_add_unit_test(unit_tl_dialect tl_dialect_test.c LIBS tl_passes tl_dialects tl_layout tl_ir tl_support)
