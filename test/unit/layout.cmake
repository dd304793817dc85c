# Unit tests of the layout algebra (lib/layout): register layouts, atoms and
# text in unit_layout; the GF(2) view and shared-memory layouts in
# unit_layout_shared.
tl_add_unit_test(unit_layout layout_test.c LIBS tl_layout tl_support)
tl_add_unit_test(unit_layout_shared layout_shared_test.c LIBS tl_layout tl_support)
