/* Typed builders, expanded from the op tables (tl/ops.h): one function
 * tl_<fn> for each op whose type class fixes its signature. Each builds
 * the op at b's insertion point and location (tl_builder_set_loc) and
 * returns its result; the op's dialect must be registered. The operands'
 * types are not checked here: verify the IR (or let the pass manager do
 * it) to catch a wrong one.
 *
 *   UNARY    tl_<fn>(b, x)              result of x's type
 *   BINARY   tl_<fn>(b, x, y)           result of x's type
 *   TERNARY  tl_<fn>(b, x, y, z)        result of x's type
 *   CONVERT  tl_<fn>(b, x, to)          result of type `to`
 *   COMPARE  tl_<fn>(b, pred, x, y)     i1 result, `predicate` = pred
 *   SELECT   tl_<fn>(b, c, x, y)        result of x's type
 *
 * Ops of the class OTHER (attributes, regions) are built with tl_build or
 * their dialect's own builders (tl_arith_constant). */
#ifndef TL_BUILD_H
#define TL_BUILD_H

#include "tl/ir.h"

#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TL_BUILD_OTHER(ID, fn)
#define TL_BUILD_UNARY(ID, fn)                                                 \
  static inline TlValue *tl_##fn(TlBuilder *b, TlValue *x) {                   \
    return tl_build1(b, TL_OP_##ID, 1, &x, tl_value_type(x));                  \
  }
#define TL_BUILD_BINARY(ID, fn)                                                \
  static inline TlValue *tl_##fn(TlBuilder *b, TlValue *x, TlValue *y) {       \
    TlValue *ops[2] = {x, y};                                                  \
    return tl_build1(b, TL_OP_##ID, 2, ops, tl_value_type(x));                 \
  }
#define TL_BUILD_TERNARY(ID, fn)                                               \
  static inline TlValue *tl_##fn(TlBuilder *b, TlValue *x, TlValue *y,         \
                                 TlValue *z) {                                 \
    TlValue *ops[3] = {x, y, z};                                               \
    return tl_build1(b, TL_OP_##ID, 3, ops, tl_value_type(x));                 \
  }
#define TL_BUILD_CONVERT(ID, fn)                                               \
  static inline TlValue *tl_##fn(TlBuilder *b, TlValue *x, TlType *to) {       \
    return tl_build1(b, TL_OP_##ID, 1, &x, to);                                \
  }
#define TL_BUILD_COMPARE(ID, fn)                                               \
  static inline TlValue *tl_##fn(TlBuilder *b, const char *pred, TlValue *x,   \
                                 TlValue *y) {                                 \
    TlContext *ctx = tl_module_context(b->module);                             \
    TlValue *ops[2] = {x, y};                                                  \
    TlType *i1 = tl_type_bool(ctx);                                            \
    TlOp *op = tl_build(b, TL_OP_##ID, 2, ops, 1, &i1);                        \
    tl_op_set_attr(op, "predicate", tl_attr_string(ctx, pred, strlen(pred)));  \
    return tl_op_result(op, 0);                                                \
  }
#define TL_BUILD_SELECT(ID, fn)                                                \
  static inline TlValue *tl_##fn(TlBuilder *b, TlValue *c, TlValue *x,         \
                                 TlValue *y) {                                 \
    TlValue *ops[3] = {c, x, y};                                               \
    return tl_build1(b, TL_OP_##ID, 3, ops, tl_value_type(x));                 \
  }

#define TL_OP(ID, fn, name, nops, nres, cls, traits, summary)                  \
  TL_BUILD_##cls(ID, fn)
#include "tl/ops/all.def"
#undef TL_OP

#ifdef __cplusplus
}
#endif
#endif
