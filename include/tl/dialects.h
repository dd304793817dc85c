/* Registration of every dialect TL ships. */
#ifndef TL_DIALECTS_H
#define TL_DIALECTS_H

#include "tl/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Registers arith, scf, tl and simt (builtin is always registered).
 * Idempotent. */
void tl_register_all_dialects(TlContext *ctx);

void tl_arith_register(TlContext *ctx);
void tl_scf_register(TlContext *ctx);

/* Builds `arith.constant` of an int or float attribute at b's insertion
 * point and returns its result. */
TlValue *tl_arith_constant(TlBuilder *b, TlAttr *value, TlLoc loc);
/* The constant value of v if it is produced by a constant op, else NULL. */
TlAttr *tl_value_constant(TlValue *v);

#ifdef __cplusplus
}
#endif
#endif
