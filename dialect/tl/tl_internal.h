/* Shared between the files of the tl dialect. */
#ifndef TL_TL_INTERNAL_H
#define TL_TL_INTERNAL_H

#include "tl/rewrite.h"
#include "tl/tl.h"

extern const TlAttrDef tl_layout_attr_def, tl_smem_attr_def;
extern const TlTypeDef tl_ptr_type_def, tl_global_type_def, tl_shared_type_def,
    tl_reg_type_def, tl_tensormap_type_def, tl_ring_type_def;
extern const TlOpDef *const tl_tl_ops[];

/* The location of byte `off` of a raw body that starts at `start` (for
 * errors inside layouts and grid expressions, which may span lines). */
TlLoc tl_text_loc(TlLoc start, const char *text, size_t off);

/* The hooks of tl.kernel and tl.template (kernel.c), for the op table in
 * ops.c. */
TlResult tl_kernel_verify(TlOp *op);
TlResult tl_kernel_parse(TlParser *p, TlOpState *st);
void tl_kernel_print(TlPrinter *p, TlOp *op);
TlResult tl_template_verify(TlOp *op);
TlResult tl_template_parse(TlParser *p, TlOpState *st);
void tl_template_print(TlPrinter *p, TlOp *op);
TlResult tl_template_fold(TlOp *op, TlAttr *const *c, TlFoldResult *res);

#endif
