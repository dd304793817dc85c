/* The pass registry (from passes.def), textual pipelines and the runner
 * with verification, IR printing and timing between passes. */
#define _POSIX_C_SOURCE 200809L
#include "passes_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const TlPassInfo registry[] = {
#define TL_PASS(c, flag, summary) {flag, summary, tl_pass_##c, tl_pass_##c##_options},
#include "passes.def"
#undef TL_PASS
};

unsigned tl_pass_count(void) { return sizeof registry / sizeof registry[0]; }
const TlPassInfo *tl_pass_at(unsigned i) {
  return i < tl_pass_count() ? &registry[i] : NULL;
}
const TlPassInfo *tl_pass_lookup(const char *flag) {
  for (unsigned i = 0; i < tl_pass_count(); i++)
    if (strcmp(registry[i].flag, flag) == 0)
      return &registry[i];
  return NULL;
}

typedef struct Entry {
  const TlPassInfo *pass;
  TlPassOptions opts;
  double seconds;
  unsigned runs;
} Entry;

struct TlPipeline {
  TL_VEC(Entry) passes;
  TL_VEC(char *) strings;
};

TlPipeline *tl_pipeline_create(void) {
  return tl_xcalloc(1, sizeof(TlPipeline));
}

void tl_pipeline_destroy(TlPipeline *pl) {
  if (!pl)
    return;
  for (size_t i = 0; i < pl->strings.len; i++)
    tl_free(pl->strings.data[i]);
  tl_vec_free(&pl->strings);
  tl_vec_free(&pl->passes);
  tl_free(pl);
}

unsigned tl_pipeline_size(const TlPipeline *pl) {
  return (unsigned)pl->passes.len;
}

static unsigned num_options(const TlPassInfo *p) {
  unsigned n = 0;
  for (const TlPassOptionDef *o = p->options; o && o->name; o++)
    n++;
  return n;
}

/* Sets option i from text; false if the text is not a valid value. */
static bool set_option(TlPipeline *pl, Entry *e, unsigned i, const char *v,
                       size_t n) {
  const TlPassOptionDef *o = &e->pass->options[i];
  char *s = tl_xmalloc(n + 1);
  memcpy(s, v, n);
  s[n] = 0;
  bool ok = true;
  switch (o->kind) {
  case TL_PASS_OPT_INT: {
    int64_t x = 0;
    ok = tl_int64_literal(s, n, &x) == TL_INT_OK && x >= 0 && x <= 1000000000;
    e->opts.ints[i] = x;
    break;
  }
  case TL_PASS_OPT_BOOL:
    if (!strcmp(s, "true") || !strcmp(s, "1"))
      e->opts.bools[i] = true;
    else if (!strcmp(s, "false") || !strcmp(s, "0"))
      e->opts.bools[i] = false;
    else
      ok = false;
    break;
  case TL_PASS_OPT_STRING:
    e->opts.strings[i] = s;
    tl_vec_push(&pl->strings, s);
    return true;
  }
  tl_free(s);
  return ok;
}

void tl_pipeline_add(TlPipeline *pl, const TlPassInfo *pass) {
  Entry e;
  memset(&e, 0, sizeof e);
  e.pass = pass;
  e.opts.n = num_options(pass);
  tl_vec_push(&pl->passes, e);
  Entry *last = &tl_vec_last(&pl->passes);
  for (unsigned i = 0; i < last->opts.n; i++) {
    const char *d = pass->options[i].default_value;
    set_option(pl, last, i, d, strlen(d));
  }
}

static TlResult pipe_error(TlDiagEngine *diag, const char *text, size_t at,
                           const char *fmt, const char *arg) {
  TlStr s = {0};
  tl_str_printf(&s, "invalid pass pipeline '%s' at offset %zu: ", text, at);
  tl_str_printf(&s, fmt, arg);
  tl_diag_emit(diag, TL_DIAG_ERROR, tl_loc_unknown(), "%s", tl_str_cstr(&s));
  tl_str_free(&s);
  return TL_FAILURE;
}

TlResult tl_pipeline_parse(TlPipeline *pl, const char *text,
                           TlDiagEngine *diag) {
  const char *p = text;
  while (isspace((unsigned char)*p))
    p++;
  if (!*p)
    return TL_SUCCESS;
  for (;;) {
    while (isspace((unsigned char)*p))
      p++;
    const char *s = p;
    while (isalnum((unsigned char)*p) || *p == '-' || *p == '_')
      p++;
    if (p == s)
      return pipe_error(diag, text, (size_t)(s - text), "expected a pass name%s", "");
    char name[64];
    size_t n = (size_t)(p - s) < sizeof name - 1 ? (size_t)(p - s) : sizeof name - 1;
    memcpy(name, s, n);
    name[n] = 0;
    const TlPassInfo *pass = tl_pass_lookup(name);
    if (!pass)
      return pipe_error(diag, text, (size_t)(s - text), "unknown pass '%s'", name);
    tl_pipeline_add(pl, pass);
    Entry *e = &tl_vec_last(&pl->passes);
    while (isspace((unsigned char)*p))
      p++;
    if (*p == '{') {
      p++;
      for (;;) {
        while (isspace((unsigned char)*p))
          p++;
        if (*p == '}') {
          p++;
          break;
        }
        const char *k = p;
        while (isalnum((unsigned char)*p) || *p == '-' || *p == '_')
          p++;
        size_t kn = (size_t)(p - k);
        unsigned idx = e->opts.n;
        for (unsigned i = 0; i < e->opts.n; i++)
          if (strlen(pass->options[i].name) == kn &&
              memcmp(pass->options[i].name, k, kn) == 0)
            idx = i;
        if (idx == e->opts.n) {
          char kb[64];
          snprintf(kb, sizeof kb, "%.*s", (int)(kn < 60 ? kn : 60), k);
          return pipe_error(diag, text, (size_t)(k - text),
                            "unknown option '%s'", kb);
        }
        if (*p != '=')
          return pipe_error(diag, text, (size_t)(p - text),
                            "expected '=' after option name%s", "");
        const char *v = ++p;
        while (*p && *p != '}' && !isspace((unsigned char)*p))
          p++;
        if (!set_option(pl, e, idx, v, (size_t)(p - v)))
          return pipe_error(diag, text, (size_t)(v - text),
                            "invalid value for option '%s'",
                            pass->options[idx].name);
        if (!*p)
          return pipe_error(diag, text, (size_t)(p - text), "expected '}'%s", "");
      }
    }
    while (isspace((unsigned char)*p))
      p++;
    if (!*p)
      return TL_SUCCESS;
    if (*p != ',')
      return pipe_error(diag, text, (size_t)(p - text),
                        "expected ',' between passes%s", "");
    p++;
  }
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void dump(TlModule *m, const TlPipelineConfig *cfg, const char *pass) {
  TlStr s = {0};
  tl_str_printf(&s, "// -----// IR Dump After %s //----- //\n", pass);
  tl_module_print(m, &cfg->print, &s);
  fputs(tl_str_cstr(&s), cfg->print_stream ? cfg->print_stream : stderr);
  tl_str_free(&s);
}

TlResult tl_pipeline_run(TlPipeline *pl, TlModule *m,
                         const TlPipelineConfig *cfg) {
  TlOp *top = tl_module_op(m);
  for (size_t i = 0; i < pl->passes.len; i++) {
    Entry *e = &pl->passes.data[i];
    e->opts.arch = cfg->arch ? cfg->arch : tl_arch_default();
    double t0 = cfg->timing ? now() : 0;
    TlResult r = e->pass->run(top, &e->opts);
    if (cfg->timing) {
      e->seconds += now() - t0;
      e->runs++;
    }
    if (TL_FAILED(r))
      return TL_FAILURE;
    if (cfg->verify_each && TL_FAILED(tl_verify(top))) {
      tl_emit_note(tl_module_context(m), tl_op_loc(top),
                   "the IR failed to verify after pass '%s'", e->pass->flag);
      return TL_FAILURE;
    }
    if (cfg->print_after_all ||
        (cfg->print_after && strcmp(cfg->print_after, e->pass->flag) == 0))
      dump(m, cfg, e->pass->flag);
  }
  return TL_SUCCESS;
}

void tl_pipeline_timing_report(const TlPipeline *pl, TlStr *out) {
  double total = 0;
  for (size_t i = 0; i < pl->passes.len; i++)
    total += pl->passes.data[i].seconds;
  tl_str_puts(out, "===-------------------------------------------===\n");
  tl_str_puts(out, "                Pass execution timing report\n");
  tl_str_puts(out, "===-------------------------------------------===\n");
  tl_str_printf(out, "  Total: %.4f ms\n", total * 1e3);
  for (size_t i = 0; i < pl->passes.len; i++)
    tl_str_printf(out, "  %10.4f ms  %5.1f%%  %s\n",
                  pl->passes.data[i].seconds * 1e3,
                  total > 0 ? 100.0 * pl->passes.data[i].seconds / total : 0.0,
                  pl->passes.data[i].pass->flag);
}
