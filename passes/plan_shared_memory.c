/* plan-shared-memory: places the shared-memory tiles of each tl.kernel in
 * the kernel's dynamic shared memory (exec/analysis/shared_plan.c;
 * docs/analysis.md gives the rules).
 * Requires: verified IR.
 * Does: sets `offset` and `alignment` (i64, bytes) on every tl.alloc_shared
 * nested in a tl.kernel and `smem_bytes` (i64) on the kernel, replacing
 * values from an earlier run; an alloc_shared outside a kernel is left as
 * it is. Fails, with an error at the kernel, when a kernel needs more than
 * `limit` bytes (by default the target's dynamic shared memory per block,
 * TlPassOptions.arch).
 * Guarantees (no verifier checks these; a pass that moves, adds or removes
 * tl.alloc_shared or tl.free_shared ops must run this pass again):
 *  - offset is a multiple of alignment; alignment is a power of two, at
 *    least 16, and at least the swizzle block of a swizzled tile;
 *  - offset + tl_shared_type_bytes(type) <= smem_bytes <= limit, and
 *    smem_bytes is the largest such end (0 for a kernel without tiles);
 *  - two tiles whose lifetimes (tl.alloc_shared to tl.free_shared in
 *    program order, stretched over every loop enclosing the allocation; to
 *    the end of the kernel without a free that always runs) overlap have
 *    disjoint byte ranges. */
#include "passes_internal.h"
#include "tl/analysis.h"

#include <string.h>

const TlPassOptionDef tl_pass_plan_shared_memory_options[] = {
    {"limit", TL_PASS_OPT_INT, "0",
     "most bytes of dynamic shared memory a kernel may use (0: the "
     "target's per-block maximum)"},
    {NULL, 0, NULL, NULL}};

TlResult tl_pass_plan_shared_memory(TlOp *module, const TlPassOptions *opts) {
  TlResult r = TL_SUCCESS;
  int64_t limit = opts->ints[0] ? opts->ints[0] : opts->arch->max_smem;
  for (unsigned i = 0; i < tl_op_num_regions(module); i++)
    for (TlBlock *b = tl_region_first_block(tl_op_region(module, i)); b;
         b = tl_block_next(b))
      for (TlOp *op = tl_block_first_op(b); op; op = tl_op_next(op))
        if (tl_op_id(op) == TL_OP_TL_KERNEL &&
            TL_FAILED(tl_plan_shared_memory(op, limit)))
          r = TL_FAILURE;
  return r;
}
