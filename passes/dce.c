/* dce: erases ops that have no side effects and whose results are unused,
 * including scf.for and scf.if whose bodies are side-effect free.
 * Requires: verified IR. Guarantees: verified IR; no dead pure op is left.
 *
 * Walking each block backwards visits users before the values they use, so
 * one sweep removes whole dead chains. */
#include "passes_internal.h"

const TlPassOptionDef tl_pass_dce_options[] = {{NULL, 0, NULL, NULL}};

static bool dead(TlOp *op) {
  if (tl_op_has_trait(op, TL_TRAIT_TERMINATOR))
    return false;
  for (unsigned i = 0; i < tl_op_num_results(op); i++)
    if (tl_value_has_uses(tl_op_result(op, i)))
      return false;
  return tl_op_is_pure(op);
}

static void sweep(TlOp *op) {
  for (unsigned r = 0; r < tl_op_num_regions(op); r++)
    for (TlBlock *b = tl_region_first_block(tl_op_region(op, r)); b;
         b = tl_block_next(b))
      for (TlOp *o = tl_block_last_op(b), *prev; o; o = prev) {
        prev = tl_op_prev(o);
        if (dead(o))
          tl_op_erase(o);
        else
          sweep(o);
      }
}

TlResult tl_pass_dce(TlOp *module, const TlPassOptions *opts) {
  sweep(module);
  return TL_SUCCESS;
}
