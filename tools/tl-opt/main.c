/* tl-opt: parse, verify, transform and print TL IR.
 *
 *   tl-opt [options] [input.tl | -]
 *
 * Exit status: 0 on success; 1 when the input has errors, a pass fails,
 * the command line is wrong, or (with --verify-diagnostics) the
 * diagnostics differ from the expected ones. */
#include "tl/dialects.h"
#include "tl/pass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Options {
  TlContext *ctx;
  const char *input;
  const char *output;
  TlPipeline *pipeline;
  bool verify_each;
  bool print_after_all;
  const char *print_after;
  bool split_input;
  bool verify_diagnostics;
  bool timing;
  bool generic;
  const TlArch *arch; /* -mcpu; NULL: the default target */
} Options;

static void usage(FILE *out) {
  fputs("usage: tl-opt [options] [input.tl | -]\n"
        "\n"
        "Parses TL IR, verifies it, runs passes and prints the result.\n"
        "\n"
        "options:\n"
        "  -o FILE                  write the output to FILE (default: stdout)\n"
        "  -D NAME=VALUE            set a kernel template parameter (overrides\n"
        "                           the default given in tl.kernel template(...))\n"
        "  -mcpu=SM                 the target the passes compile for:\n"
        "                          ",
        out);
  for (const char *const *n = tl_arch_names(); *n; n++)
    fprintf(out, "%s %s%s", n == tl_arch_names() ? "" : ",", *n,
            tl_arch_lookup(*n) == tl_arch_default() ? " (default)" : "");
  fputs("\n"
        "  --pass-pipeline=PIPE     run a pipeline, e.g. 'canonicalize,cse'\n"
        "                           (options in braces: 'canonicalize{max-iterations=3}')\n"
        "  --verify-each[=BOOL]     verify after every pass (default: true)\n"
        "  --print-ir-after-all     print the IR after every pass (to stderr)\n"
        "  --print-ir-after=PASS    print the IR after each run of PASS\n"
        "  --split-input-file       treat '// -----' lines as separators of\n"
        "                           independent inputs\n"
        "  --verify-diagnostics     check diagnostics against expected-error,\n"
        "                           expected-warning, expected-note and\n"
        "                           expected-remark comments\n"
        "  --pass-timing            report the time spent in each pass\n"
        "  --print-generic          print every op in the generic form\n"
        "  --help                   show this help\n"
        "  --version                show the version\n"
        "\n"
        "passes (each also a flag, e.g. --cse; they run in command-line order):\n",
        out);
  for (unsigned i = 0; i < tl_pass_count(); i++) {
    const TlPassInfo *p = tl_pass_at(i);
    fprintf(out, "  --%-22s %s\n", p->flag, p->summary);
    for (const TlPassOptionDef *o = p->options; o && o->name; o++)
      fprintf(out, "      %s=<%s> (default %s): %s\n", o->name,
              o->kind == TL_PASS_OPT_INT    ? "int"
              : o->kind == TL_PASS_OPT_BOOL ? "bool"
                                            : "string",
              o->default_value, o->help);
  }
}

static int cli_error(const char *fmt, const char *arg) {
  fputs("tl-opt: error: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\n(run 'tl-opt --help' for usage)\n", stderr);
  return 1;
}

/* Reads a whole file (or stdin for "-"); NULL with a message on failure. */
static char *read_file(const char *path, size_t *len) {
  TlErr err;
  char *text = tl_read_file(path, len, &err);
  if (!text)
    fprintf(stderr, "tl-opt: error: %s\n", err.msg);
  return text;
}

static bool parse_bool(const char *v, bool *out) {
  if (!strcmp(v, "true") || !strcmp(v, "1")) {
    *out = true;
    return true;
  }
  if (!strcmp(v, "false") || !strcmp(v, "0")) {
    *out = false;
    return true;
  }
  return false;
}


/* Returns 0 to continue, 1 for an error, 2 for "done" (help/version). */
static int parse_args(int argc, char **argv, Options *o, TlDiagEngine *diag) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *eq = strchr(a, '=');
    size_t n = eq ? (size_t)(eq - a) : strlen(a);
    const char *val = eq ? eq + 1 : NULL;
#define IS(flag) (strlen(flag) == n && strncmp(a, flag, n) == 0)
    if (a[0] != '-' || !strcmp(a, "-")) {
      if (o->input)
        return cli_error("more than one input file given ('%s')", a);
      o->input = a;
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 2;
    } else if (!strcmp(a, "--version")) {
      puts("tl-opt (TL) " TL_VERSION);
      return 2;
    } else if (!strncmp(a, "-D", 2)) {
      const char *def = a[2] ? a + 2 : (++i < argc ? argv[i] : NULL);
      if (!def)
        return cli_error("option '%s' needs NAME=VALUE", a);
      TlErr err;
      if (TL_FAILED(tl_context_parse_define(o->ctx, def, &err)))
        return cli_error("%s", err.msg);
    } else if (!strcmp(a, "-o")) {
      if (++i >= argc)
        return cli_error("option '%s' needs a file name", a);
      o->output = argv[i];
    } else if (!strncmp(a, "-mcpu=", 6)) {
      if (!(o->arch = tl_arch_lookup(a + 6))) {
        TlStr msg = {0};
        tl_str_printf(&msg, "unknown target '%s' (supported: ", a + 6);
        tl_arch_names_text(&msg, 0, false);
        tl_str_putc(&msg, ')');
        cli_error("%s", tl_str_cstr(&msg));
        tl_str_free(&msg);
        return 1;
      }
    } else if (IS("--pass-pipeline")) {
      if (!val) {
        if (++i >= argc)
          return cli_error("option '%s' needs a value", a);
        val = argv[i];
      }
      if (TL_FAILED(tl_pipeline_parse(o->pipeline, val, diag)))
        return 1;
    } else if (IS("--verify-each")) {
      if (val && !parse_bool(val, &o->verify_each))
        return cli_error("invalid value for --verify-each: '%s'", val);
      if (!val)
        o->verify_each = true;
    } else if (!strcmp(a, "--print-ir-after-all")) {
      o->print_after_all = true;
    } else if (IS("--print-ir-after")) {
      if (!val || !tl_pass_lookup(val))
        return cli_error("--print-ir-after needs a pass name, got '%s'",
                         val ? val : "");
      o->print_after = val;
    } else if (!strcmp(a, "--split-input-file")) {
      o->split_input = true;
    } else if (!strcmp(a, "--verify-diagnostics")) {
      o->verify_diagnostics = true;
    } else if (!strcmp(a, "--pass-timing")) {
      o->timing = true;
    } else if (!strcmp(a, "--print-generic")) {
      o->generic = true;
    } else if (a[1] == '-' && !val && tl_pass_lookup(a + 2)) {
      tl_pipeline_add(o->pipeline, tl_pass_lookup(a + 2));
    } else {
      return cli_error("unknown option '%s'", a);
    }
#undef IS
  }
  if (!o->input)
    o->input = "-";
  return 0;
}

/*===--- --verify-diagnostics --------------------------------------------===*/

typedef struct Expected {
  TlDiagSeverity severity;
  unsigned line; /* absolute line in the file */
  unsigned decl_line, decl_col;
  char *message;
  bool matched;
} Expected;

typedef struct Checker {
  const char *file;
  TL_VEC(Expected) expected;
  TlDiagEngine *diag; /* for formatting and reporting */
  bool failed;
  TL_VEC(TlDiag) unexpected;
  TL_VEC(char *) unexpected_msgs;
} Checker;

static const char *const sev_names[] = {"error", "warning", "note", "remark"};

/* Scans one chunk (starting at absolute line first_line) for expected-*
 * comments. Reports malformed ones as errors. */
static void collect_expected(Checker *c, const char *text, size_t len,
                             unsigned first_line) {
  unsigned line = first_line;
  const char *p = text, *end = text + len;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol)
      eol = end;
    const char *q = p;
    while (q < eol) {
      const char *hit = NULL;
      for (const char *s = q; s + 9 <= eol; s++)
        if (memcmp(s, "expected-", 9) == 0) {
          hit = s;
          break;
        }
      if (!hit)
        break;
      const char *s = hit + 9;
      int sev = -1;
      for (int k = 0; k < 4; k++) {
        size_t kn = strlen(sev_names[k]);
        if ((size_t)(eol - s) >= kn && memcmp(s, sev_names[k], kn) == 0) {
          sev = k;
          s += kn;
          break;
        }
      }
      q = s;
      if (sev < 0)
        continue;
      long target = (long)line;
      while (s < eol && *s == ' ')
        s++;
      if (s < eol && *s == '@') {
        s++;
        if (s < eol && (*s == '+' || *s == '-')) {
          char sign = *s++;
          long k = 0;
          while (s < eol && *s >= '0' && *s <= '9')
            k = k * 10 + (*s++ - '0');
          target = sign == '+' ? target + k : target - k;
        } else if ((size_t)(eol - s) >= 5 && memcmp(s, "above", 5) == 0) {
          target--;
          s += 5;
        } else if ((size_t)(eol - s) >= 5 && memcmp(s, "below", 5) == 0) {
          target++;
          s += 5;
        }
      }
      while (s < eol && *s == ' ')
        s++;
      const char *open = (size_t)(eol - s) >= 2 && !memcmp(s, "{{", 2) ? s : NULL;
      const char *close = NULL;
      if (open)
        for (const char *t = open + 2; t + 2 <= eol; t++)
          if (!memcmp(t, "}}", 2)) {
            close = t;
            break;
          }
      if (!open || !close) {
        TlLoc l = {c->file, line, (uint32_t)(hit - p) + 1};
        tl_diag_emit(c->diag, TL_DIAG_ERROR, l,
                     "expected-%s needs a message in {{...}}", sev_names[sev]);
        c->failed = true;
        q = eol;
        continue;
      }
      Expected e = {(TlDiagSeverity)sev, (unsigned)(target < 1 ? 0 : target), line,
                    (unsigned)(hit - p) + 1, NULL, false};
      size_t mn = (size_t)(close - open - 2);
      e.message = tl_xmalloc(mn + 1);
      memcpy(e.message, open + 2, mn);
      e.message[mn] = 0;
      tl_vec_push(&c->expected, e);
      q = close + 2;
    }
    line++;
    p = eol + 1;
  }
}

static void check_handler(const TlDiag *d, void *user) {
  Checker *c = user;
  for (size_t i = 0; i < c->expected.len; i++) {
    Expected *e = &c->expected.data[i];
    if (!e->matched && e->severity == d->severity && tl_loc_is_known(d->loc) &&
        d->loc.line == e->line && strcmp(d->loc.file, c->file) == 0 &&
        strstr(d->message, e->message)) {
      e->matched = true;
      return;
    }
  }
  TlDiag copy = *d;
  char *m = tl_xstrdup(d->message);
  copy.message = m;
  tl_vec_push(&c->unexpected, copy);
  tl_vec_push(&c->unexpected_msgs, m);
}

/* Reports mismatches through the default printer; returns true if all
 * expectations were met. */
static bool check_report(Checker *c) {
  bool ok = !c->failed;
  for (size_t i = 0; i < c->unexpected.len; i++) {
    TlDiag *d = &c->unexpected.data[i];
    TlStr s = {0};
    tl_str_printf(&s, "unexpected %s: %s", sev_names[d->severity], d->message);
    tl_diag_emit(c->diag, TL_DIAG_ERROR, d->loc, "%s", tl_str_cstr(&s));
    tl_str_free(&s);
    ok = false;
  }
  for (size_t i = 0; i < c->expected.len; i++) {
    Expected *e = &c->expected.data[i];
    if (!e->matched) {
      TlLoc l = {c->file, e->decl_line, e->decl_col};
      tl_diag_emit(c->diag, TL_DIAG_ERROR, l,
                   "expected %s \"%s\" was not produced", sev_names[e->severity],
                   e->message);
      ok = false;
    }
    tl_free(e->message);
  }
  for (size_t i = 0; i < c->unexpected_msgs.len; i++)
    tl_free(c->unexpected_msgs.data[i]);
  tl_vec_free(&c->expected);
  tl_vec_free(&c->unexpected);
  tl_vec_free(&c->unexpected_msgs);
  return ok;
}

/*===--- Driver ----------------------------------------------------------===*/

/* Processes one input chunk; appends its output. Returns success. */
static bool run_chunk(TlContext *ctx, const Options *o, const char *name,
                      const char *text, size_t len, unsigned first_line,
                      TlStr *out) {
  TlModule *m = tl_parse_module(ctx, name, text, len, first_line);
  if (!m)
    return false;
  bool ok = !TL_FAILED(tl_verify(tl_module_op(m)));
  if (ok) {
    TlPipelineConfig cfg = {
        .verify_each = o->verify_each,
        .print_after_all = o->print_after_all,
        .print_after = o->print_after,
        .timing = o->timing,
        .print = {.generic = o->generic},
        .arch = o->arch,
    };
    ok = !TL_FAILED(tl_pipeline_run(o->pipeline, m, &cfg));
  }
  if (ok) {
    TlPrintOptions po = {.generic = o->generic};
    tl_module_print(m, &po, out);
  }
  tl_module_destroy(m);
  return ok;
}

/* Splits at lines that start with `// -----`. */
static const char *next_split(const char *p, const char *end) {
  for (const char *q = p; q < end;) {
    if ((q == p || q[-1] == '\n') && (size_t)(end - q) >= 8 &&
        !memcmp(q, "// -----", 8))
      return q;
    const char *nl = memchr(q, '\n', (size_t)(end - q));
    if (!nl)
      break;
    q = nl + 1;
  }
  return end;
}

static int run(const Options *o, TlContext *ctx) {
  size_t len;
  char *text = read_file(o->input, &len);
  if (!text)
    return 1;
  const char *name = strcmp(o->input, "-") == 0 ? "<stdin>" : o->input;
  TlDiagEngine *diag = tl_context_diag(ctx);
  tl_diag_add_source(diag, name, text, len);
  TlStr out = {0};
  bool ok = true;
  const char *p = text, *end = text + len;
  unsigned line = 1;
  for (unsigned chunk = 0;; chunk++) {
    const char *stop = o->split_input ? next_split(p, end) : end;
    if (chunk)
      tl_str_puts(&out, "// -----\n");
    Checker chk;
    memset(&chk, 0, sizeof chk);
    if (o->verify_diagnostics) {
      chk.file = name;
      chk.diag = diag;
      collect_expected(&chk, p, (size_t)(stop - p), line);
      tl_diag_set_handler(diag, check_handler, &chk);
    }
    bool chunk_ok = run_chunk(ctx, o, name, p, (size_t)(stop - p), line, &out);
    if (o->verify_diagnostics) {
      tl_diag_set_handler(diag, NULL, NULL);
      chunk_ok = check_report(&chk);
    }
    ok = ok && chunk_ok;
    for (const char *q = p; q < stop; q++)
      line += *q == '\n';
    if (stop >= end)
      break;
    /* Skip the separator line. */
    const char *nl = memchr(stop, '\n', (size_t)(end - stop));
    p = nl ? nl + 1 : end;
    line++;
  }
  tl_free(text);
  bool used;
  for (unsigned i = 0; tl_context_define_at(ctx, i, &used); i++)
    if (!used)
      fprintf(stderr, "tl-opt: warning: -D %s matches no template parameter\n",
              tl_context_define_at(ctx, i, NULL));
  if (o->timing) {
    TlStr rep = {0};
    tl_pipeline_timing_report(o->pipeline, &rep);
    fputs(tl_str_cstr(&rep), stderr);
    tl_str_free(&rep);
  }
  TlErr err;
  bool written = tl_write_file(o->output ? o->output : "-", tl_str_cstr(&out),
                               out.len, &err);
  if (!written)
    fprintf(stderr, "tl-opt: error: %s\n", err.msg);
  tl_str_free(&out);
  return ok && written ? 0 : 1;
}

int main(int argc, char **argv) {
  TlContext *ctx = tl_context_create();
  tl_diag_set_tool(tl_context_diag(ctx), "tl-opt");
  tl_register_all_dialects(ctx);
  Options o = {0};
  o.ctx = ctx;
  o.verify_each = true;
  o.pipeline = tl_pipeline_create();
  int rc = parse_args(argc, argv, &o, tl_context_diag(ctx));
  if (rc == 0)
    rc = run(&o, ctx);
  else if (rc == 2)
    rc = 0;
  tl_pipeline_destroy(o.pipeline);
  tl_context_destroy(ctx);
  /* --help and --version write to standard output too. */
  TlErr err;
  if (!tl_stdout_flush(&err)) {
    fprintf(stderr, "tl-opt: error: %s\n", err.msg);
    rc = 1;
  }
  return rc;
}
