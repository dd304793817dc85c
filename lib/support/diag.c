/* The diagnostics engine: counts errors, formats located messages with the
 * offending source line and a caret, and forwards them to a handler. */
#include "tl/diag.h"

#include <string.h>

typedef struct Source {
  char *name;
  char *text;
  size_t len;
} Source;

struct TlDiagEngine {
  TlDiagHandler handler;
  void *user;
  FILE *out;
  unsigned errors;
  unsigned silenced;
  const char *tool; /* the prefix of an unlocated diagnostic, or NULL */
  TL_VEC(Source) sources;
};

TlDiagEngine *tl_diag_engine_create(void) {
  TlDiagEngine *e = tl_xcalloc(1, sizeof *e);
  e->out = stderr;
  return e;
}

void tl_diag_engine_destroy(TlDiagEngine *e) {
  if (!e)
    return;
  for (size_t i = 0; i < e->sources.len; i++) {
    tl_free(e->sources.data[i].name);
    tl_free(e->sources.data[i].text);
  }
  tl_vec_free(&e->sources);
  tl_free(e);
}

void tl_diag_set_handler(TlDiagEngine *e, TlDiagHandler h, void *user) {
  e->handler = h;
  e->user = user;
}

void tl_diag_set_stream(TlDiagEngine *e, FILE *out) { e->out = out; }

void tl_diag_add_source(TlDiagEngine *e, const char *name, const char *text,
                        size_t len) {
  for (size_t i = 0; i < e->sources.len; i++)
    if (strcmp(e->sources.data[i].name, name) == 0) {
      tl_free(e->sources.data[i].text);
      e->sources.data[i].text = tl_xmalloc(len + 1);
      memcpy(e->sources.data[i].text, text, len);
      e->sources.data[i].text[len] = 0;
      e->sources.data[i].len = len;
      return;
    }
  Source s = {tl_xstrdup(name), tl_xmalloc(len + 1), len};
  memcpy(s.text, text, len);
  s.text[len] = 0;
  tl_vec_push(&e->sources, s);
}

const char *tl_diag_severity_name(TlDiagSeverity s) {
  switch (s) {
  case TL_DIAG_ERROR: return "error";
  case TL_DIAG_WARNING: return "warning";
  case TL_DIAG_NOTE: return "note";
  case TL_DIAG_REMARK: return "remark";
  }
  return "error";
}

/* Finds line `line` (1-based) of a registered source; sets *n to its length
 * without the newline. */
static const char *find_line(const TlDiagEngine *e, TlLoc loc, size_t *n) {
  for (size_t i = 0; i < e->sources.len; i++) {
    const Source *s = &e->sources.data[i];
    if (strcmp(s->name, loc.file) != 0)
      continue;
    const char *p = s->text, *end = s->text + s->len;
    for (uint32_t l = 1; l < loc.line && p < end; p++)
      if (*p == '\n')
        l++;
    if (p >= end && loc.line > 1)
      return NULL;
    const char *q = p;
    while (q < end && *q != '\n' && *q != '\r')
      q++;
    *n = (size_t)(q - p);
    return p;
  }
  return NULL;
}

void tl_diag_format(const TlDiagEngine *e, const TlDiag *d, TlStr *out) {
  if (tl_loc_is_known(d->loc))
    tl_str_printf(out, "%s:%u:%u: ", d->loc.file, d->loc.line, d->loc.col);
  else
    tl_str_printf(out, "%s: ", e->tool ? e->tool : "<unknown>");
  tl_str_printf(out, "%s: %s\n", tl_diag_severity_name(d->severity),
                d->message);
  size_t n = 0;
  const char *line = tl_loc_is_known(d->loc) ? find_line(e, d->loc, &n) : NULL;
  if (!line)
    return;
  /* Tabs are kept in the caret line so that it lines up under the source. */
  tl_str_puts(out, "  ");
  for (size_t i = 0; i < n; i++)
    tl_str_putc(out, (line[i] == '\t' || (unsigned char)line[i] >= 32) ? line[i] : ' ');
  tl_str_puts(out, "\n  ");
  for (uint32_t i = 1; i < d->loc.col && i <= n; i++)
    tl_str_putc(out, line[i - 1] == '\t' ? '\t' : ' ');
  tl_str_puts(out, "^\n");
}

void tl_diag_silence(TlDiagEngine *e, bool on) {
  if (on)
    e->silenced++;
  else if (e->silenced)
    e->silenced--;
}

void tl_diag_set_tool(TlDiagEngine *e, const char *tool) { e->tool = tool; }

void tl_diag_vemit(TlDiagEngine *e, TlDiagSeverity sev, TlLoc loc,
                   const char *fmt, va_list ap) {
  if (e->silenced)
    return;
  TlStr msg = {0};
  tl_str_vprintf(&msg, fmt, ap);
  TlDiag d = {sev, loc, tl_str_cstr(&msg)};
  if (sev == TL_DIAG_ERROR)
    e->errors++;
  if (e->handler) {
    e->handler(&d, e->user);
  } else {
    TlStr text = {0};
    tl_diag_format(e, &d, &text);
    fputs(tl_str_cstr(&text), e->out);
    tl_str_free(&text);
  }
  tl_str_free(&msg);
}

void tl_diag_emit(TlDiagEngine *e, TlDiagSeverity sev, TlLoc loc,
                  const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_diag_vemit(e, sev, loc, fmt, ap);
  va_end(ap);
}

unsigned tl_diag_error_count(const TlDiagEngine *e) { return e->errors; }
void tl_diag_reset_count(TlDiagEngine *e) { e->errors = 0; }
