/* Declarations of every pass entry point and option table, from
 * passes.def. */
#ifndef TL_PASSES_INTERNAL_H
#define TL_PASSES_INTERNAL_H

#include "tl/pass.h"

#define TL_PASS(c, flag, summary)                                              \
  TlResult tl_pass_##c(TlOp *module, const TlPassOptions *opts);               \
  extern const TlPassOptionDef tl_pass_##c##_options[];
#include "passes.def"
#undef TL_PASS

#endif
