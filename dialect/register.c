/* Registers every dialect TL ships with a context. */
#include "tl/dialects.h"

void tl_register_all_dialects(TlContext *ctx) {
  tl_arith_register(ctx);
  tl_scf_register(ctx);
}
