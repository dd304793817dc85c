# The paper's programs in kernels/ run in the VM against C references (run
# from test/unit/paper.test, which passes the kernels directory).
tl_add_unit_test(unit_paper paper_test.c LIBS tl_vm tl_dialects tl_ir tl_dtype tl_support m)
