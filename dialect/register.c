/* Registers every dialect TL ships with a context. */
#include "tl/dialects.h"
#include "tl/simt.h"
#include "tl/tl.h"

void tl_register_all_dialects(TlContext *ctx) {
  tl_arith_register(ctx);
  tl_scf_register(ctx);
  tl_tl_register(ctx);
  tl_simt_register(ctx);
}
