/* Op identities. Every op of TL's dialects is declared once, in the table
 * of its dialect, include/tl/ops/<dialect>.def, as
 *
 *   TL_OP(ID, fn, "dialect.op", operands, results, CLASS, traits, "summary")
 *
 * Column legend:
 *   ID        the op in C: the enumerator TL_OP_<ID>
 *   fn        the typed builder tl_<fn> (tl/build.h), for the classes
 *             that have one
 *   name      the op's name in the IR
 *   operands  operand count, or TL_VARIADIC; the verifier checks fixed
 *             counts before the op's own verify hook runs
 *   results   result count, or TL_VARIADIC
 *   CLASS     the type class, TL_OPCLASS_<CLASS>, which fixes the typed
 *             builder's signature:
 *               UNARY, BINARY, TERNARY  operands and result of one type
 *               CONVERT  one operand, a result of a given type
 *               COMPARE  two operands, a result of a given (i1) type and a
 *                        `predicate` string attribute
 *               SELECT   a condition and two values of the result's type
 *               OTHER    attributes or regions: built with tl_build
 *   traits    TL_TRAIT_* flags (tl/ir.h)
 *   summary   one line, for docs and --help
 *
 * A dialect's source expands its table into its TlOpDef array with
 * TL_OP_ENTRY (tl/ir.h), adding each op's hooks; the consumers (VMs,
 * lowerings, the back end) switch on tl_op_id. Ops of dialects defined
 * outside these tables have the id TL_OP_NONE. */
#ifndef TL_OPS_H
#define TL_OPS_H

#ifdef __cplusplus
extern "C" {
#endif

#define TL_VARIADIC (-1)

typedef enum TlOpId {
  TL_OP_NONE,
#define TL_OP(ID, fn, name, nops, nres, cls, traits, summary) TL_OP_##ID,
#include "tl/ops/all.def"
#undef TL_OP
  TL_OP_COUNT
} TlOpId;

typedef enum TlOpClass {
  TL_OPCLASS_OTHER,
  TL_OPCLASS_UNARY,
  TL_OPCLASS_BINARY,
  TL_OPCLASS_TERNARY,
  TL_OPCLASS_CONVERT,
  TL_OPCLASS_COMPARE,
  TL_OPCLASS_SELECT,
} TlOpClass;

#ifdef __cplusplus
}
#endif
#endif
