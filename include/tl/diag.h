/* Diagnostics: located errors, warnings, notes and remarks.
 *
 * A TlDiagEngine collects diagnostics and hands each to a handler. The
 * default handler prints
 *     file:line:col: error: message
 *       the source line
 *           ^
 * to stderr when the file's text was registered with tl_diag_add_source.
 * Library users install their own handler to capture diagnostics (tl-opt's
 * --verify-diagnostics does). */
#ifndef TL_DIAG_H
#define TL_DIAG_H

#include "tl/support.h"
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A source location. file is an interned or static string, NULL when the
 * location is unknown; line and col are 1-based. */
typedef struct TlLoc {
  const char *file;
  uint32_t line, col;
} TlLoc;

static inline TlLoc tl_loc_unknown(void) {
  TlLoc l = {NULL, 0, 0};
  return l;
}
static inline bool tl_loc_is_known(TlLoc l) { return l.file != NULL; }

typedef enum TlDiagSeverity {
  TL_DIAG_ERROR,
  TL_DIAG_WARNING,
  TL_DIAG_NOTE,
  TL_DIAG_REMARK,
} TlDiagSeverity;

typedef struct TlDiag {
  TlDiagSeverity severity;
  TlLoc loc;
  const char *message; /* valid only during the handler call */
} TlDiag;

typedef struct TlDiagEngine TlDiagEngine;

/* A handler receives every diagnostic. user is the pointer given at
 * installation. */
typedef void (*TlDiagHandler)(const TlDiag *diag, void *user);

/* Caller owns the engine; destroy frees it and the registered sources. */
TlDiagEngine *tl_diag_engine_create(void);
void tl_diag_engine_destroy(TlDiagEngine *e);

/* Installs a handler; NULL restores the default (print to the engine's
 * stream, stderr unless changed with tl_diag_set_stream). */
void tl_diag_set_handler(TlDiagEngine *e, TlDiagHandler h, void *user);
void tl_diag_set_stream(TlDiagEngine *e, FILE *out);

/* The tool whose diagnostics these are ("tl-run"): a diagnostic without a
 * location (a driver's error, a bad pipeline string) is printed as
 * "tl-run: error: ..." instead of "<unknown>: error: ...". Not copied:
 * a string that outlives the engine. */
void tl_diag_set_tool(TlDiagEngine *e, const char *tool);

/* Registers the text of a source file so that diagnostics located in it
 * show the line and a caret. The text is copied. */
void tl_diag_add_source(TlDiagEngine *e, const char *name, const char *text,
                        size_t len);

void tl_diag_emit(TlDiagEngine *e, TlDiagSeverity sev, TlLoc loc,
                  const char *fmt, ...) TL_PRINTF(4, 5);
void tl_diag_vemit(TlDiagEngine *e, TlDiagSeverity sev, TlLoc loc,
                   const char *fmt, va_list ap);

/* Silences the engine (nesting): while silenced, diagnostics are dropped
 * and not counted. For checks whose failure is an answer, not an error. */
void tl_diag_silence(TlDiagEngine *e, bool on);

/* Number of errors emitted since creation or the last reset. */
unsigned tl_diag_error_count(const TlDiagEngine *e);
void tl_diag_reset_count(TlDiagEngine *e);

/* Formats a diagnostic the way the default handler prints it (with the
 * source line and caret when the source is registered), appending to out. */
void tl_diag_format(const TlDiagEngine *e, const TlDiag *d, TlStr *out);

const char *tl_diag_severity_name(TlDiagSeverity s);

#ifdef __cplusplus
}
#endif
#endif
