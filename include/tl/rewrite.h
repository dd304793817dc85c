/* Pattern rewriting: the greedy worklist driver that canonicalization and
 * dialect lowering share, and the rewriter through which patterns change
 * the IR (so the driver sees every change). */
#ifndef TL_REWRITE_H
#define TL_REWRITE_H

#include "tl/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The builder patterns create ops with; its insertion point is theirs to
 * set. Ops created through it must be announced with notify_created. */
TlBuilder *tl_rewriter_builder(TlRewriter *rw);
void tl_rewriter_notify_created(TlRewriter *rw, TlOp *op);
/* Replaces every use of op's results by values[i] and erases op. */
void tl_rewriter_replace_op(TlRewriter *rw, TlOp *op, TlValue *const *values);
/* Erases op; its results must be unused. */
void tl_rewriter_erase_op(TlRewriter *rw, TlOp *op);
/* Replaces op's operands. */
void tl_rewriter_update_operands(TlRewriter *rw, TlOp *op, unsigned n,
                                 TlValue *const *values);
/* Announces an in-place change to op (attributes, types). */
void tl_rewriter_notify_modified(TlRewriter *rw, TlOp *op);

typedef struct TlRewriteConfig {
  bool fold;                  /* run op folders (and constant dedup) */
  bool canonical_patterns;    /* apply each op's canonicalization patterns */
  const TlPattern *const *extra; /* more pattern arrays, NULL-terminated */
  unsigned max_iterations;    /* full sweeps; 0 means 10 */
  bool require_convergence;   /* fail if the last sweep still changed IR */
} TlRewriteConfig;

typedef struct TlRewriteStats {
  unsigned folded, patterns_applied, erased, iterations;
} TlRewriteStats;

/* Applies folds and patterns to everything nested in root until a sweep
 * changes nothing or max_iterations sweeps ran. With require_convergence,
 * running out of sweeps is an error (reported at root). stats may be
 * NULL. */
TlResult tl_apply_patterns_greedily(TlOp *root, const TlRewriteConfig *cfg,
                                    TlRewriteStats *stats);

#ifdef __cplusplus
}
#endif
#endif
