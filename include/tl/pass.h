/* The pass manager. Passes are declared once in passes/passes.def; the
 * registry, tl-opt's flags and docs/passes.md all come from there.
 *
 * A pipeline is text: `canonicalize,cse{},dce` — pass names separated by
 * commas, each with optional options in braces: `canonicalize{max-iterations=3}`.
 * Passes run on the module op in order. */
#ifndef TL_PASS_H
#define TL_PASS_H

#include "tl/arch.h"
#include "tl/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum TlPassOptionKind {
  TL_PASS_OPT_INT,
  TL_PASS_OPT_BOOL,
  TL_PASS_OPT_STRING,
} TlPassOptionKind;

typedef struct TlPassOptionDef {
  const char *name;
  TlPassOptionKind kind;
  const char *default_value;
  const char *help;
} TlPassOptionDef;

/* Parsed option values of one pass instance, by option index, and the
 * target the pipeline compiles for. */
typedef struct TlPassOptions {
  unsigned n;
  int64_t ints[8];
  bool bools[8];
  const char *strings[8]; /* owned by the pipeline */
  const TlArch *arch;     /* the run's TlPipelineConfig.arch, never NULL
                             while a pass runs (static; do not free) */
} TlPassOptions;

typedef struct TlPassInfo {
  const char *flag;    /* "canonicalize" */
  const char *summary; /* one line */
  /* Runs on the module op; reports errors through diagnostics. */
  TlResult (*run)(TlOp *module, const TlPassOptions *opts);
  const TlPassOptionDef *options; /* terminated by a NULL name; may be NULL */
} TlPassInfo;

/* The registry, in passes.def order. */
unsigned tl_pass_count(void);
const TlPassInfo *tl_pass_at(unsigned i);
const TlPassInfo *tl_pass_lookup(const char *flag);

/* The pipeline that takes a module's tl kernels to the simt kernels the
 * PTX target compiles: the one default of tl-llc, tl-run and libtl. */
#define TL_PIPELINE_GPU "lower-tl-to-simt,canonicalize,cse"

typedef struct TlPipeline TlPipeline;

/* Creates an empty pipeline (caller owns). */
TlPipeline *tl_pipeline_create(void);
void tl_pipeline_destroy(TlPipeline *pl);
/* Appends the passes of a textual pipeline; on error reports through diag
 * (located at column offsets of `text` when `loc` is known) and fails. */
TlResult tl_pipeline_parse(TlPipeline *pl, const char *text,
                           TlDiagEngine *diag);
/* Appends one pass with default options. */
void tl_pipeline_add(TlPipeline *pl, const TlPassInfo *pass);
unsigned tl_pipeline_size(const TlPipeline *pl);

typedef struct TlPipelineConfig {
  bool verify_each;          /* verify after every pass (the caller verifies
                                the input before running) */
  bool print_after_all;      /* print the IR after every pass */
  const char *print_after;   /* print after each run of this pass, or NULL */
  bool timing;               /* collect wall time per pass */
  TlPrintOptions print;
  FILE *print_stream;        /* where IR dumps go (stderr if NULL) */
  const TlArch *arch;        /* the target the passes compile for (what
                                they see as TlPassOptions.arch); NULL:
                                tl_arch_default() */
} TlPipelineConfig;

/* Runs the pipeline on a module. Stops at the first failing pass or
 * verification. */
TlResult tl_pipeline_run(TlPipeline *pl, TlModule *m,
                         const TlPipelineConfig *cfg);
/* Appends the timing report ("pass: N ms") collected by runs with
 * cfg->timing. */
void tl_pipeline_timing_report(const TlPipeline *pl, TlStr *out);

#ifdef __cplusplus
}
#endif
#endif
