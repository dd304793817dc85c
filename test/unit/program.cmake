# The runtime API (exec/program), run from test/unit/program.test with a
# scratch directory, the source root and the stand-in CUDA drivers (the
# second with cuTensorMapEncodeTiled).
tl_add_unit_test(unit_program program_test.c LIBS tl_program)
add_dependencies(unit_program fake_cuda fake_cuda_tma)
