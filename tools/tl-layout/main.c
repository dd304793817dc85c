/* tl-layout: the layout viewer. Parses a layout written in the paper's
 * syntax (or names a hardware atom), prints its canonical text and draws
 * its thread:local grid; --info describes the representation instead.
 * Diagnostics point at the offending byte with a caret; bad input exits 1. */
#include "tl/layout.h"

#include <stdio.h>
#include <string.h>

#define MAX_GRID_CELLS 65536

static void usage(FILE *f) {
  fputs("usage: tl-layout [options] LAYOUT\n"
        "       tl-layout [options] --atom NAME\n"
        "       tl-layout --shared TEXT\n"
        "\n"
        "Prints the canonical form of a register layout and its grid of\n"
        "thread:local cells (as the Tilus paper draws layouts).\n"
        "\n"
        "  LAYOUT        e.g. 'local(2, 1).spatial(8, 4).local(1, 2)'\n"
        "  --atom NAME   show a hardware atom (mma fragment, ldmatrix)\n"
        "  --list-atoms  list the atoms and exit\n"
        "  --shared TEXT show a shared-memory layout (shared<...>) as its\n"
        "                grid of element offsets\n"
        "  --info        print shape, threads, local size and modes instead\n"
        "                of the grid\n"
        "  --explicit    print the explicit layout<...> form\n"
        "  --help        show this help\n",
        f);
}

static void print_ints(const char *label, const int32_t *v, int n) {
  printf("%s[", label);
  for (int i = 0; i < n; i++)
    printf("%s%d", i ? ", " : "", v[i]);
  printf("]\n");
}

static void info(const TlLayout *l) {
  print_ints("shape: ", l->shape, l->rank);
  printf("threads: %lld", (long long)tl_layout_num_threads(l));
  if (tl_layout_replication(l) > 1)
    printf(" (each element held by %lld)", (long long)tl_layout_replication(l));
  printf("\nlocal size: %lld\n", (long long)tl_layout_local_size(l));
  print_ints("modes: ", l->mode_shape, l->num_modes);
  print_ints("mode dims: ", l->mode_dim, l->num_modes);
  print_ints("spatial: ", l->spatial_modes, l->num_spatial);
  print_ints("local: ", l->local_modes, l->num_local);
}

/* Diagnostic in the compiler's format, with the input line and a caret. */
static int diagnose(const char *text, size_t offset, const char *msg) {
  fprintf(stderr, "<layout>:1:%zu: error: %s\n", offset + 1, msg);
  fprintf(stderr, "  %s\n  ", text);
  for (size_t i = 0; i < offset; i++)
    fputc(text[i] == '\t' ? '\t' : ' ', stderr);
  fputs("^\n", stderr);
  return 1;
}

static int show_shared(const char *text) {
  TlSharedLayout l;
  TlErr err;
  size_t at = 0;
  if (!tl_shared_layout_parse(&l, text, strlen(text), &err, &at))
    return diagnose(text, at, err.msg);
  TlStr s = {0};
  tl_shared_layout_print(&l, &s);
  tl_str_putc(&s, '\n');
  if (tl_shared_layout_cosize(&l) > MAX_GRID_CELLS * 64 ||
      l.shape[0] > MAX_GRID_CELLS) {
    tl_str_puts(&s, "(grid not drawn: too large)\n");
  } else {
    int64_t n = 1;
    for (int d = 0; d < l.rank; d++)
      n *= l.shape[d];
    if (n > MAX_GRID_CELLS)
      tl_str_printf(&s, "(grid of %lld cells not drawn; the limit is %d)\n",
                    (long long)n, MAX_GRID_CELLS);
    else
      tl_shared_layout_render(&l, &s);
  }
  fputs(tl_str_cstr(&s), stdout);
  tl_str_free(&s);
  return 0;
}

static int run(int argc, char **argv) {
  bool show_info = false, explicit_form = false;
  const char *atom = NULL, *text = NULL, *shared = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(a, "--info") == 0) {
      show_info = true;
    } else if (strcmp(a, "--explicit") == 0) {
      explicit_form = true;
    } else if (strcmp(a, "--list-atoms") == 0) {
      for (int k = 0; k < tl_layout_atom_count(); k++)
        printf("%-20s %s\n", tl_layout_atom_name(k), tl_layout_atom_summary(k));
      return 0;
    } else if (strcmp(a, "--atom") == 0) {
      if (i + 1 == argc) {
        fprintf(stderr, "tl-layout: error: --atom needs a name\n");
        return 1;
      }
      atom = argv[++i];
    } else if (strcmp(a, "--shared") == 0) {
      if (i + 1 == argc) {
        fprintf(stderr, "tl-layout: error: --shared needs a layout\n");
        return 1;
      }
      shared = argv[++i];
    } else if (a[0] == '-' && a[1] == '-') {
      fprintf(stderr, "tl-layout: error: unknown option '%s' (see --help)\n",
              a);
      return 1;
    } else if (text) {
      fprintf(stderr, "tl-layout: error: more than one layout given\n");
      return 1;
    } else {
      text = a;
    }
  }
  if (shared && !atom && !text)
    return show_shared(shared);
  if (!!atom + !!text != 1) {
    fprintf(stderr, "tl-layout: error: give one LAYOUT or --atom NAME "
                    "(see --help)\n");
    return 1;
  }
  TlLayout l;
  TlErr err;
  if (atom) {
    if (!tl_layout_atom(&l, atom, &err)) {
      fprintf(stderr, "tl-layout: error: %s\n", err.msg);
      return 1;
    }
  } else {
    size_t at = 0;
    if (!tl_layout_parse(&l, text, strlen(text), &err, &at))
      return diagnose(text, at, err.msg);
  }
  TlStr s = {0};
  if (explicit_form)
    tl_layout_print_explicit(&l, &s);
  else
    tl_layout_print(&l, &s);
  printf("%s\n", tl_str_cstr(&s));
  tl_str_clear(&s);
  if (show_info) {
    info(&l);
  } else if (tl_layout_num_elements(&l) > MAX_GRID_CELLS) {
    /* A grid this large is unreadable and can be gigabytes of text. */
    printf("(grid of %lld cells not drawn; the limit is %d, see --info)\n",
           (long long)tl_layout_num_elements(&l), MAX_GRID_CELLS);
  } else {
    tl_layout_render(&l, &s);
    fputs(tl_str_cstr(&s), stdout);
  }
  tl_str_free(&s);
  return 0;
}

int main(int argc, char **argv) {
  int rc = run(argc, argv);
  /* Output lost to a full disk is a failure. */
  TlErr err;
  if (!tl_stdout_flush(&err)) {
    fprintf(stderr, "tl-layout: error: %s\n", err.msg);
    rc = 1;
  }
  return rc;
}
