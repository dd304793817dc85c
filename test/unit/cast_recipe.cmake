# The cast-recipe emitter (passes/cast_recipe.c): every cast recipe emitted
# as simt, run on the thread-level VM against the host codec (run from
# test/unit/cast_recipe.test; test/target/cast-recipe*.test compile its
# --print-kinds module to PTX).
tl_add_unit_test(unit_cast_recipe cast_recipe_test.c LIBS tl_passes tl_vm tl_dialects tl_layout tl_ir tl_dtype tl_support m)
target_include_directories(unit_cast_recipe PRIVATE ${PROJECT_SOURCE_DIR}/passes)
