# Unit tests of the hardware tables (lib/arch), checked against the
# layout library's atoms.
tl_add_unit_test(unit_arch arch_test.c LIBS tl_arch tl_layout tl_support)
