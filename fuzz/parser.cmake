tl_add_fuzzer(parser LIBS tl_passes tl_dialects tl_ir tl_support)
