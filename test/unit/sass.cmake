# The SASS reader (exec/runtime/sass.c), run from test/unit/sass.test over
# a real disassembly in test/unit/Inputs.
tl_add_unit_test(unit_sass sass_test.c LIBS tl_sass tl_support)
