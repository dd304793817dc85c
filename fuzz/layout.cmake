# The layout algebra's fuzzer (fuzz/layout_fuzz.c). Every library of a fuzz
# build is compiled with coverage instrumentation (top-level CMakeLists).
tl_add_fuzzer(layout LIBS tl_layout tl_support)
