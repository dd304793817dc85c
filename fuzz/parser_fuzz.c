/* Fuzzes the parser, printer, verifier and passes.
 *
 * Properties checked on every input:
 *   - parsing never crashes, hangs or leaks (the sanitizers watch);
 *   - whatever parses prints, and the printed text parses again and prints
 *     to the same text (printing then parsing is the identity);
 *   - whatever verifies still verifies after canonicalize,cse,dce, and its
 *     printed form round-trips as well. */
#include "tl/dialects.h"
#include "tl/pass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void quiet(const TlDiag *d, void *user) { (void)d, (void)user; }

static char *print(TlModule *m) {
  TlStr s = {0};
  tl_module_print(m, NULL, &s);
  return s.data;
}

static void round_trip(TlContext *ctx, TlModule *m, const char *what) {
  char *once = print(m);
  TlModule *again = tl_parse_module(ctx, "printed", once, strlen(once), 1);
  if (!again) {
    fprintf(stderr, "%s: printed IR does not parse:\n%s\n", what, once);
    abort();
  }
  char *twice = print(again);
  if (strcmp(once, twice) != 0) {
    fprintf(stderr, "%s: print is not stable:\n%s\n---\n%s\n", what, once,
            twice);
    abort();
  }
  tl_free(twice);
  tl_free(once);
  tl_module_destroy(again);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  TlContext *ctx = tl_context_create();
  tl_register_all_dialects(ctx);
  tl_diag_set_handler(tl_context_diag(ctx), quiet, NULL);
  TlModule *m = tl_parse_module(ctx, "fuzz", (const char *)data, size, 1);
  if (m) {
    round_trip(ctx, m, "parsed");
    if (!TL_FAILED(tl_verify(tl_module_op(m)))) {
      TlPipeline *pl = tl_pipeline_create();
      tl_pipeline_parse(pl, "canonicalize,cse,dce", tl_context_diag(ctx));
      TlPipelineConfig cfg = {.verify_each = true};
      if (TL_FAILED(tl_pipeline_run(pl, m, &cfg))) {
        /* Non-convergence is reported, but a verifier failure after a pass
         * is a bug. */
        if (TL_FAILED(tl_verify(tl_module_op(m)))) {
          fprintf(stderr, "passes broke verified IR\n");
          abort();
        }
      }
      tl_pipeline_destroy(pl);
      round_trip(ctx, m, "transformed");
    }
    tl_module_destroy(m);
  }
  tl_context_destroy(ctx);
  return 0;
}
