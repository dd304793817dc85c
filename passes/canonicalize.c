/* canonicalize: folds ops, deduplicates and hoists constants and applies
 * every registered op's canonicalization patterns, greedily, to a fixed
 * point.
 * Requires: verified IR. Guarantees: verified IR with the same meaning;
 * running it again changes nothing. */
#include "passes_internal.h"
#include "tl/rewrite.h"

const TlPassOptionDef tl_pass_canonicalize_options[] = {
    {"max-iterations", TL_PASS_OPT_INT, "10",
     "full sweeps at most (see test-convergence)"},
    {"fold", TL_PASS_OPT_BOOL, "true",
     "run op folders (and constant deduplication and hoisting)"},
    {"test-convergence", TL_PASS_OPT_BOOL, "false",
     "fail if the IR still changes after max-iterations sweeps"},
    {NULL, 0, NULL, NULL}};

TlResult tl_pass_canonicalize(TlOp *module, const TlPassOptions *opts) {
  TlRewriteConfig cfg = {
      .fold = opts->bools[1],
      .canonical_patterns = true,
      .max_iterations = (unsigned)opts->ints[0],
      .require_convergence = opts->bools[2],
  };
  if (cfg.max_iterations == 0)
    cfg.max_iterations = 1;
  return tl_apply_patterns_greedily(module, &cfg, NULL);
}
