# The SASS reader's fuzzer (fuzz/sass_fuzz.c): disassembly text in.
tl_add_fuzzer(sass LIBS tl_sass tl_support)
