# The block VM's fuzzer (fuzz/vm_fuzz.c): a kernel's text, parsed,
# verified and run within an op budget and a memory limit.
tl_add_fuzzer(vm LIBS tl_vm tl_dialects tl_ir tl_support)
# The VM's loops over a tile's elements compare at every step; libFuzzer's
# comparison tracing there more than halves the executions a second and
# guides nothing the edges do not, so the VM keeps its edges only.
target_compile_options(tl_vm PRIVATE -fno-sanitize-coverage=trace-cmp)
