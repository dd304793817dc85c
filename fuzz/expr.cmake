# The template-expression fuzzer (fuzz/expr_fuzz.c): a mode byte, then the
# text of a grid expression or a condition.
tl_add_fuzzer(expr LIBS tl_dialects tl_ir tl_support)
