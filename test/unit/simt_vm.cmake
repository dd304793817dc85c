# The thread-level VM (exec/vm/simt_vm.c): gpu_test's kernels, divergence,
# cvt and every runtime error (run from test/unit/simt_vm.test).
tl_add_unit_test(unit_simt_vm simt_vm_test.c LIBS tl_vm tl_dialects tl_layout tl_ir tl_dtype tl_support m)
