/* Building single-result ops at a builder, for the passes' code emitters
 * (cast recipes, small-float encoding). Internal to passes/. */
#ifndef TL_PASSES_EMIT_H
#define TL_PASSES_EMIT_H

#include "tl/ir.h"

/* An op `name` with operands ops[0..n), one result of type rt and, when
 * attr is non-NULL, the attribute attr = val. The dialect must be
 * registered. */
static inline TlValue *tl_emit_op(TlBuilder *b, TlContext *ctx, TlLoc loc, const char *name,
                                  unsigned n, TlValue *const *ops, TlType *rt,
                                  const char *attr, TlAttr *val) {
  const TlOpDef *def = tl_context_op_def(ctx, name);
  tl_assert(def);
  TlOpState st;
  tl_op_state_init(&st, ctx, def, loc);
  tl_op_state_add_operands(&st, n, ops);
  tl_op_state_add_result(&st, rt);
  if (attr)
    tl_op_state_set_attr(&st, attr, val);
  return tl_op_result(tl_builder_insert(b, &st), 0);
}

#endif
