# The layout algebra's fuzzer (fuzz/layout_fuzz.c).
tl_add_fuzzer(layout LIBS tl_layout tl_support)
# libFuzzer's coverage instrumentation applies to the target's own sources
# only, so compile lib/layout into it as well: the fuzzer then sees which
# branches of the algebra an input reaches (the archive's members are not
# needed and are not linked).
file(GLOB tl_layout_fuzz_sources ${PROJECT_SOURCE_DIR}/lib/layout/*.c)
target_sources(layout_fuzz PRIVATE ${tl_layout_fuzz_sources})
