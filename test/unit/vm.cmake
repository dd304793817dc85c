# The VM (exec/vm): kernels run from text against C references (run from
# test/unit/vm.test).
tl_add_unit_test(unit_vm vm_test.c LIBS tl_vm tl_dialects tl_ir tl_dtype tl_support m)
