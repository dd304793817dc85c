# The small-float encoder (passes/small_float.c): f32 to every float type of
# at most 8 bits, run on the thread-level VM against the host codec (run
# from test/unit/small_float.test; test/target/small-float*.test compile its
# --print module to PTX).
tl_add_unit_test(unit_small_float small_float_test.c LIBS tl_passes tl_vm tl_dialects tl_layout tl_ir tl_dtype tl_support m)
target_include_directories(unit_small_float PRIVATE ${PROJECT_SOURCE_DIR}/passes)
