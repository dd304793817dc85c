/* tl-llc: compiles TL IR to PTX (or LLVM IR) for an NVIDIA GPU.
 *
 *   tl-llc [options] input.tl
 *
 * Exit status: 0 on success; 1 for bad input, a bad command line or a
 * compilation error. */
#define _POSIX_C_SOURCE 200809L

#include "tl/analysis.h"
#include "tl/dialects.h"
#include "tl/pass.h"
#include "tl/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *out) {
  fputs("usage: tl-llc [options] [input.tl | -]\n"
        "\n"
        "Compiles the kernels of a TL module to PTX: tl.kernel ops (lowered\n"
        "first with " TL_PIPELINE_GPU ") and funcs with the\n"
        "'kernel' attribute in the simt, arith and scf dialects.\n"
        "\n"
        "options:\n"
        "  -o FILE          write the output to FILE (default: stdout); with PTX,\n"
        "                   also FILE.json, the kernels' launch metadata\n"
        "  -mcpu=SM         target:",
        out);
  for (const char *const *n = tl_arch_names(); *n; n++)
    fprintf(out, "%s %s%s", n == tl_arch_names() ? "" : ",", *n,
            tl_arch_lookup(*n) == tl_arch_default() ? " (default)" : "");
  fputs("\n"
        "  -mptx=N          PTX ISA version x 10 (default 80 = PTX 8.0)\n"
        "  -O0 .. -O3       LLVM optimization level (default -O3)\n"
        "  -emit-llvm       write the optimized LLVM IR instead of PTX\n"
        "  -emit-simt       write the lowered kernels (simt IR) instead of PTX\n"
        "  -D NAME=VALUE    set a kernel template parameter\n"
        "  --time           report the compile time of each phase on stderr\n"
        "  --help           show this help\n",
        out);
}

/* Lowers the module's tl.kernel ops to simt kernels for the target, the
 * pipeline tl-opt and tl-run use; a module of simt kernels is left as it
 * is. */
static TlResult lower_tl_kernels(TlModule *m, const TlArch *arch) {
  bool has_tl = false;
  for (TlOp *op = tl_block_first_op(tl_module_body(m)); op && !has_tl;
       op = tl_op_next(op))
    has_tl = tl_op_id(op) == TL_OP_TL_KERNEL;
  if (!has_tl)
    return TL_SUCCESS;
  TlPipeline *pl = tl_pipeline_create();
  TlPipelineConfig cfg = {.verify_each = true, .arch = arch};
  TlResult r = tl_pipeline_parse(pl, TL_PIPELINE_GPU,
                                 tl_context_diag(tl_op_context(tl_module_op(m))));
  if (!TL_FAILED(r))
    r = tl_pipeline_run(pl, m, &cfg);
  tl_pipeline_destroy(pl);
  return r;
}

static int cli_error(const char *fmt, const char *arg) {
  fputs("tl-llc: error: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\n(run 'tl-llc --help' for usage)\n", stderr);
  return 1;
}

static char *read_file(const char *path, size_t *len) {
  TlErr err;
  char *text = tl_read_file(path, len, &err);
  if (!text)
    fprintf(stderr, "tl-llc: error: %s\n", err.msg);
  return text;
}

static void json_string(TlStr *out, const char *s) {
  tl_str_putc(out, '"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      tl_str_printf(out, "\\%c", *s);
    else if ((unsigned char)*s < 32)
      tl_str_printf(out, "\\u%04x", (unsigned char)*s);
    else
      tl_str_putc(out, *s);
  }
  tl_str_putc(out, '"');
}

/* Each tl.kernel's global views as a launcher checks its buffers against
 * them (docs/runtime.md, "Extent checks"), read before the lowering:
 * names[i] the kernel, jsons[i] its "extents" array, [{"param", "view",
 * "bytes"}], "bytes" the bytes the view needs (an expression over the
 * integer parameters) or null with "unchecked" the reason. */
typedef struct Extents {
  unsigned n;
  const char **names;
  TlStr *jsons;
} Extents;

static void collect_extents(TlModule *m, Extents *x) {
  for (TlOp *op = tl_block_first_op(tl_module_body(m)); op; op = tl_op_next(op)) {
    if (tl_op_id(op) != TL_OP_TL_KERNEL)
      continue;
    x->names = tl_xrealloc(x->names, (x->n + 1) * sizeof *x->names);
    x->jsons = tl_xrealloc(x->jsons, (x->n + 1) * sizeof *x->jsons);
    TlStr *j = &x->jsons[x->n];
    *j = (TlStr){0};
    x->names[x->n++] = tl_symbol_name(op);
    TlViewExtents *v = tl_view_extents_create(op);
    TlAttr *names = tl_op_attr(op, "arg_names");
    tl_str_putc(j, '[');
    for (unsigned i = 0; i < tl_view_extents_count(v); i++) {
      TlViewExtent e;
      tl_view_extents_get(v, i, &e);
      tl_str_puts(j, i ? ", {\"param\": " : "{\"param\": ");
      if (names && e.param < tl_attr_array_size(names))
        json_string(j, tl_attr_string_value(tl_attr_array_elem(names, e.param), NULL));
      else
        tl_str_printf(j, "\"arg%u\"", e.param);
      tl_str_puts(j, ", \"view\": ");
      json_string(j, e.text);
      if (e.bytes) {
        tl_str_puts(j, ", \"bytes\": ");
        json_string(j, e.bytes);
      } else {
        tl_str_puts(j, ", \"bytes\": null, \"unchecked\": ");
        json_string(j, e.why ? e.why : "");
      }
      tl_str_putc(j, '}');
    }
    tl_str_putc(j, ']');
    tl_view_extents_destroy(v);
  }
}

static void free_extents(Extents *x) {
  for (unsigned i = 0; i < x->n; i++)
    tl_str_free(&x->jsons[i]);
  tl_free(x->names);
  tl_free(x->jsons);
}

/* What a launcher needs for every kernel of the module (docs/target.md):
 * {"target": ..., "kernels": [{"name", "threads", "smem_bytes", "params":
 * [{"name", "type"}], "grid": [expressions], "template": {name: value},
 * "extents": [...] (a tl.kernel's, collect_extents)}]}. Names and
 * expressions come from the lowered func's attributes. */
static void write_metadata(TlModule *m, const TlTargetOptions *o, const Extents *x,
                           TlStr *out) {
  tl_str_puts(out, "{\n  \"target\": ");
  json_string(out, o->cpu ? o->cpu : tl_arch_default()->name);
  tl_str_puts(out, ",\n  \"kernels\": [");
  bool first = true;
  for (TlOp *op = tl_block_first_op(tl_module_body(m)); op; op = tl_op_next(op)) {
    if (tl_op_id(op) != TL_OP_BUILTIN_FUNC || !tl_op_attr(op, "kernel"))
      continue;
    tl_str_puts(out, first ? "\n    {" : ",\n    {");
    first = false;
    tl_str_puts(out, "\"name\": ");
    json_string(out, tl_symbol_name(op));
    TlAttr *th = tl_op_attr(op, "threads"), *sm = tl_op_attr(op, "smem_bytes"),
           *wb = tl_op_attr(op, "workspace_bytes");
    tl_str_printf(out, ", \"threads\": %lld, \"smem_bytes\": %lld, \"workspace_bytes\": %lld",
                  th && tl_attr_kind(th) == TL_ATTR_INT ? (long long)tl_attr_int_value(th) : 0,
                  sm && tl_attr_kind(sm) == TL_ATTR_INT ? (long long)tl_attr_int_value(sm) : 0,
                  wb && tl_attr_kind(wb) == TL_ATTR_INT ? (long long)tl_attr_int_value(wb) : 0);
    TlType *ft = tl_attr_type_value(tl_op_attr(op, "function_type"));
    TlAttr *names = tl_op_attr(op, "arg_names");
    tl_str_puts(out, ",\n     \"params\": [");
    for (unsigned i = 0; i < tl_type_function_num_inputs(ft); i++) {
      TlStr ty = {0};
      tl_type_print(tl_type_function_input(ft, i), &ty);
      tl_str_puts(out, i ? ", {\"name\": " : "{\"name\": ");
      if (names && tl_attr_kind(names) == TL_ATTR_ARRAY && i < tl_attr_array_size(names))
        json_string(out, tl_attr_string_value(tl_attr_array_elem(names, i), NULL));
      else if (wb && i + 1 == tl_type_function_num_inputs(ft))
        tl_str_puts(out, "\"workspace\"");
      else
        tl_str_printf(out, "\"arg%u\"", i);
      tl_str_puts(out, ", \"type\": ");
      json_string(out, ty.data);
      tl_str_putc(out, '}');
      tl_str_free(&ty);
    }
    tl_str_puts(out, "],\n     \"grid\": [");
    TlAttr *grid = tl_op_attr(op, "grid");
    for (unsigned i = 0; grid && tl_attr_kind(grid) == TL_ATTR_ARRAY && i < tl_attr_array_size(grid); i++) {
      if (i)
        tl_str_puts(out, ", ");
      json_string(out, tl_attr_string_value(tl_attr_array_elem(grid, i), NULL));
    }
    tl_str_puts(out, "],\n     \"template\": {");
    TlAttr *templ = tl_op_attr(op, "template");
    for (unsigned i = 0; templ && tl_attr_kind(templ) == TL_ATTR_DICT && i < tl_attr_dict_size(templ); i++) {
      TlNamedAttr e = tl_attr_dict_entry(templ, i);
      if (i)
        tl_str_puts(out, ", ");
      json_string(out, e.name);
      tl_str_printf(out, ": %lld", (long long)tl_attr_int_value(e.attr));
    }
    tl_str_putc(out, '}');
    for (unsigned i = 0; i < x->n; i++)
      if (!strcmp(x->names[i], tl_symbol_name(op))) {
        tl_str_puts(out, ",\n     \"extents\": ");
        tl_str_puts(out, tl_str_cstr(&x->jsons[i]));
        break;
      }
    tl_str_putc(out, '}');
  }
  tl_str_puts(out, "\n  ]\n}\n");
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  const char *input = NULL, *output = NULL;
  TlTargetOptions topts = {NULL, 0, 3};
  bool emit_llvm = false, emit_simt = false, timing = false;
  TlContext *ctx = tl_context_create();
  tl_diag_set_tool(tl_context_diag(ctx), "tl-llc");
  tl_register_all_dialects(ctx);
  int rc = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      rc = 0;
      goto done;
    } else if (!strcmp(a, "-o")) {
      if (++i >= argc) {
        cli_error("option '%s' needs a file name", a);
        goto done;
      }
      output = argv[i];
    } else if (!strncmp(a, "-mcpu=", 6)) {
      topts.cpu = a + 6;
    } else if (!strncmp(a, "-mptx=", 6)) {
      int64_t v;
      if (tl_int64_literal(a + 6, strlen(a + 6), &v) != TL_INT_OK || v <= 0 ||
          v > 1000) {
        cli_error("invalid PTX version '%s'", a + 6);
        goto done;
      }
      topts.ptx = (unsigned)v;
    } else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3]) {
      topts.opt_level = (unsigned)(a[2] - '0');
    } else if (!strcmp(a, "-emit-llvm")) {
      emit_llvm = true;
    } else if (!strcmp(a, "-emit-simt")) {
      emit_simt = true;
    } else if (!strcmp(a, "--time")) {
      timing = true;
    } else if (!strncmp(a, "-D", 2)) {
      const char *def = a[2] ? a + 2 : (++i < argc ? argv[i] : NULL);
      TlErr err;
      if (!def) {
        cli_error("option '%s' needs NAME=VALUE", "-D");
        goto done;
      }
      if (TL_FAILED(tl_context_parse_define(ctx, def, &err))) {
        cli_error("%s", err.msg);
        goto done;
      }
    } else if (a[0] != '-' || !strcmp(a, "-")) {
      if (input) {
        cli_error("more than one input file given ('%s')", a);
        goto done;
      }
      input = a;
    } else {
      cli_error("unknown option '%s'", a);
      goto done;
    }
  }
  if (!input)
    input = "-";
  size_t len;
  char *text = read_file(input, &len);
  if (!text)
    goto done;
  const char *name = strcmp(input, "-") == 0 ? "<stdin>" : input;
  tl_diag_add_source(tl_context_diag(ctx), name, text, len);
  double t0 = now_ms();
  TlModule *m = tl_parse_module(ctx, name, text, len, 1);
  tl_free(text);
  TlTarget *target = NULL;
  TlStr out = {0};
  Extents extents = {0};
  bool parsed = m && !TL_FAILED(tl_verify(tl_module_op(m)));
  double t1 = now_ms();
  if (parsed && output && strcmp(output, "-") && !emit_llvm && !emit_simt)
    collect_extents(m, &extents);
  /* The target comes first: the lowering compiles for it. */
  if (!parsed || !(target = tl_target_create(ctx, &topts)) ||
      TL_FAILED(lower_tl_kernels(m, tl_target_arch(target))))
    goto fail;
  double t2 = now_ms();
  TlCompileTimes times = {0, 0, 0};
  if (emit_simt) {
    /* The module as the lowering leaves it: what the target translates. */
    tl_module_print(m, NULL, &out);
  } else if (TL_FAILED(tl_target_compile(target, m, &out,
                                         emit_llvm ? &out : NULL, &times))) {
    goto fail;
  }
  if (timing)
    fprintf(stderr,
            "tl-llc: parse %.2f ms, lower %.2f ms, translate %.2f ms, optimize %.2f ms, "
            "codegen %.2f ms, total %.2f ms\n",
            t1 - t0, t2 - t1, times.translate_ms, times.optimize_ms, times.codegen_ms,
            (t2 - t0) + times.translate_ms + times.optimize_ms + times.codegen_ms);
  TlErr err;
  if (!tl_write_file(output ? output : "-", tl_str_cstr(&out), out.len,
                     &err)) {
    fprintf(stderr, "tl-llc: error: %s\n", err.msg);
    goto fail;
  }
  if (output && strcmp(output, "-") && !emit_llvm && !emit_simt) {
    /* The launch metadata beside the PTX, once the PTX is written (a
     * failed write leaves no metadata of a kernel that is not there). */
    TlStr meta = {0}, path = {0};
    write_metadata(m, &topts, &extents, &meta);
    tl_str_printf(&path, "%s.json", output);
    bool written = tl_write_file(path.data, meta.data, meta.len, &err);
    tl_str_free(&meta);
    tl_str_free(&path);
    if (!written) {
      fprintf(stderr, "tl-llc: error: %s\n", err.msg);
      goto fail;
    }
  }
  rc = 0;
fail:
  free_extents(&extents);
  tl_str_free(&out);
  tl_target_destroy(target);
  tl_module_destroy(m);
done:
  tl_context_destroy(ctx);
  /* --help writes to standard output too. */
  TlErr ferr;
  if (!tl_stdout_flush(&ferr)) {
    fprintf(stderr, "tl-llc: error: %s\n", ferr.msg);
    rc = 1;
  }
  return rc;
}
