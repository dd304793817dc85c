/* Building single-result ops at a builder, for the passes' code emitters
 * (cast recipes, small-float encoding). Internal to passes/. */
#ifndef TL_PASSES_EMIT_H
#define TL_PASSES_EMIT_H

#include "tl/ir.h"

/* The op `id` with operands ops[0..n), one result of type rt and, when
 * attr is non-NULL, the attribute attr = val, at b's insertion point and
 * location. The op's dialect must be registered. */
static inline TlValue *tl_emit_op(TlBuilder *b, TlOpId id, unsigned n,
                                  TlValue *const *ops, TlType *rt,
                                  const char *attr, TlAttr *val) {
  TlOp *op = tl_build(b, id, n, ops, 1, &rt);
  if (attr)
    tl_op_set_attr(op, attr, val);
  return tl_op_result(op, 0);
}

#endif
