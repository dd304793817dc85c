# Tensor maps (exec/vm/tensor_map.c): the rules, TL's encoding, and 1-D
# and 3-D TMA loads on the thread-level VM (run from test/unit/tensor_map.test).
tl_add_unit_test(unit_tensor_map tensor_map_test.c LIBS tl_vm tl_dialects tl_layout tl_ir tl_dtype tl_support m)
