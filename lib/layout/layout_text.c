/* The text syntax of register layouts: a recursive-descent parser for the
 * paper's product expressions (local(2, 1).spatial(8, 4)...) plus the
 * explicit layout<...> form, and the printer that finds a product of
 * primitives for a canonical layout when one exists.
 *
 * Grammar (docs/layouts.md has the EBNF):
 *   chain    = term { "." term }
 *   term     = prim "(" int { "," int } ")" | "replicated" "(" int ")"
 *            | "layout" "<" "shape" "=" list "," "modes" "=" list ","
 *              "spatial" "=" list "," "local" "=" list ">"
 * `replicated(c)` has no rank of its own: it takes the rank of the other
 * terms of its chain, so a chain needs at least one other term. */
#include "layout_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct Parser {
  const char *text;
  size_t len, pos;
  TlErr *err;
  size_t *err_offset;
} Parser;

static bool fail_at(Parser *p, size_t at, const char *fmt, ...) TL_PRINTF(3, 4);
static bool fail_at(Parser *p, size_t at, const char *fmt, ...) {
  if (p->err_offset)
    *p->err_offset = at;
  char buf[sizeof p->err->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return tl_err(p->err, "%s", buf);
}

static bool fail_err(Parser *p, size_t at) {
  if (p->err_offset)
    *p->err_offset = at;
  return false;
}

static void skip_ws(Parser *p) {
  while (p->pos < p->len &&
         (p->text[p->pos] == ' ' || p->text[p->pos] == '\t' ||
          p->text[p->pos] == '\n' || p->text[p->pos] == '\r'))
    p->pos++;
}

static int peek(Parser *p) {
  skip_ws(p);
  return p->pos < p->len ? (unsigned char)p->text[p->pos] : -1;
}

/* What the next token looks like, for messages. */
static const char *next_desc(Parser *p, char *buf, size_t n) {
  int c = peek(p);
  if (c < 0)
    return "end of input";
  if (c >= 0x20 && c < 0x7f)
    snprintf(buf, n, "'%c'", c);
  else
    snprintf(buf, n, "byte 0x%02x", c);
  return buf;
}

static bool expect(Parser *p, char c) {
  if (peek(p) == c) {
    p->pos++;
    return true;
  }
  char buf[16];
  return fail_at(p, p->pos, "expected '%c', found %s", c,
                 next_desc(p, buf, sizeof buf));
}

static bool is_ident_char(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         (c >= '0' && c <= '9');
}

/* Reads an identifier into buf (truncated); returns its length, 0 if none. */
static size_t ident(Parser *p, char *buf, size_t n) {
  skip_ws(p);
  size_t start = p->pos;
  int c = p->pos < p->len ? (unsigned char)p->text[p->pos] : -1;
  if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'))
    return 0;
  while (p->pos < p->len && is_ident_char((unsigned char)p->text[p->pos]))
    p->pos++;
  size_t k = p->pos - start;
  size_t copy = k < n - 1 ? k : n - 1;
  memcpy(buf, p->text + start, copy);
  buf[copy] = 0;
  return k;
}

/* Integers are capped well above every limit so that "too large" is
 * reported by the constructor with the real bound. */
static bool integer(Parser *p, int64_t *v, bool allow_neg) {
  skip_ws(p);
  size_t start = p->pos;
  bool neg = false;
  if (allow_neg && p->pos < p->len && p->text[p->pos] == '-')
    neg = true, p->pos++;
  if (p->pos >= p->len || p->text[p->pos] < '0' || p->text[p->pos] > '9') {
    char buf[16];
    p->pos = start;
    return fail_at(p, start, "expected an integer, found %s",
                   next_desc(p, buf, sizeof buf));
  }
  int64_t x = 0;
  while (p->pos < p->len && p->text[p->pos] >= '0' && p->text[p->pos] <= '9') {
    x = x * 10 + (p->text[p->pos++] - '0');
    if (x > 1000000000000LL)
      return fail_at(p, start, "integer is too large");
  }
  *v = neg ? -x : x;
  return true;
}

static bool int_list(Parser *p, int64_t *v, int cap, int *n, bool allow_neg) {
  if (!expect(p, '['))
    return false;
  *n = 0;
  if (peek(p) == ']') {
    p->pos++;
    return true;
  }
  for (;;) {
    if (*n == cap) {
      return fail_at(p, p->pos, "list has more than %d entries", cap);
    }
    if (!integer(p, &v[(*n)++], allow_neg))
      return false;
    if (peek(p) == ']') {
      p->pos++;
      return true;
    }
    if (!expect(p, ','))
      return false;
  }
}

static bool keyword(Parser *p, const char *kw) {
  char buf[32];
  size_t at = (skip_ws(p), p->pos);
  size_t k = ident(p, buf, sizeof buf);
  if (k == 0 || strcmp(buf, kw) != 0) {
    p->pos = at;
    return fail_at(p, at, "expected '%s'", kw);
  }
  return true;
}

typedef enum TermKind {
  TERM_LOCAL,
  TERM_SPATIAL,
  TERM_COLUMN_LOCAL,
  TERM_COLUMN_SPATIAL,
  TERM_REPLICATED,
  TERM_EXPLICIT
} TermKind;

/* The explicit form, after the keyword "layout". */
static bool explicit_form(Parser *p, size_t at, TlLayout *out) {
  int64_t shape[TL_LAYOUT_MAX_RANK], modes[TL_RAW_MAX_MODES],
      spatial[TL_RAW_MAX_MODES], local[TL_RAW_MAX_MODES];
  int rank, nm, ns, nl;
  if (!expect(p, '<') || !keyword(p, "shape") || !expect(p, '=') ||
      !int_list(p, shape, TL_LAYOUT_MAX_RANK, &rank, false) ||
      !expect(p, ',') || !keyword(p, "modes") || !expect(p, '=') ||
      !int_list(p, modes, TL_RAW_MAX_MODES, &nm, false) || !expect(p, ',') ||
      !keyword(p, "spatial") || !expect(p, '=') ||
      !int_list(p, spatial, TL_RAW_MAX_MODES, &ns, true) || !expect(p, ',') ||
      !keyword(p, "local") || !expect(p, '=') ||
      !int_list(p, local, TL_RAW_MAX_MODES, &nl, false) || !expect(p, '>'))
    return false;
  if (rank == 0)
    return fail_at(p, at, "layout<...> needs a non-empty shape");
  if (!tl_layout_make(out, rank, shape, nm, modes, ns, spatial, nl, local,
                      p->err))
    return fail_err(p, at);
  return true;
}

/* One term; *kind and *rank describe it (rank 0 for replicated). */
static bool term(Parser *p, TlLayout *out, TermKind *kind, int64_t *rep) {
  char name[32], buf[16];
  size_t at = (skip_ws(p), p->pos);
  size_t k = ident(p, name, sizeof name);
  if (k == 0)
    return fail_at(p, at, "expected a layout, found %s",
                   next_desc(p, buf, sizeof buf));
  if (strcmp(name, "layout") == 0) {
    *kind = TERM_EXPLICIT;
    return explicit_form(p, at, out);
  }
  if (strcmp(name, "local") == 0)
    *kind = TERM_LOCAL;
  else if (strcmp(name, "spatial") == 0)
    *kind = TERM_SPATIAL;
  else if (strcmp(name, "column_local") == 0)
    *kind = TERM_COLUMN_LOCAL;
  else if (strcmp(name, "column_spatial") == 0)
    *kind = TERM_COLUMN_SPATIAL;
  else if (strcmp(name, "replicated") == 0)
    *kind = TERM_REPLICATED;
  else {
    char shown[40];
    snprintf(shown, sizeof shown, "%.*s%s", (int)(k < 24 ? k : 24),
             p->text + at, k > 24 ? "..." : "");
    return fail_at(p, at,
                   "unknown layout '%s' (expected local, spatial, "
                   "column_local, column_spatial, replicated or layout)",
                   shown);
  }
  int64_t args[TL_LAYOUT_MAX_RANK];
  int n = 0;
  if (!expect(p, '('))
    return false;
  for (;;) {
    size_t arg_at = (skip_ws(p), p->pos);
    if (n == TL_LAYOUT_MAX_RANK)
      return fail_at(p, arg_at, "a layout has at most %d dimensions",
                     TL_LAYOUT_MAX_RANK);
    if (!integer(p, &args[n], false))
      return false;
    if (args[n] < 1 || args[n] > TL_LAYOUT_MAX_SIZE)
      return fail_at(p, arg_at, "size must be in [1, 2147483647]");
    n++;
    if (peek(p) == ')') {
      p->pos++;
      break;
    }
    if (!expect(p, ','))
      return false;
  }
  bool ok;
  switch (*kind) {
  case TERM_LOCAL:
    ok = tl_layout_local(out, n, args, p->err);
    break;
  case TERM_SPATIAL:
    ok = tl_layout_spatial(out, n, args, p->err);
    break;
  case TERM_COLUMN_LOCAL:
    ok = tl_layout_column_local(out, n, args, p->err);
    break;
  case TERM_COLUMN_SPATIAL:
    ok = tl_layout_column_spatial(out, n, args, p->err);
    break;
  default:
    if (n != 1)
      return fail_at(p, at,
                     "replicated takes one argument (the number of threads), "
                     "not %d",
                     n);
    *rep = args[0];
    ok = true;
    break;
  }
  return ok ? true : fail_err(p, at);
}

bool tl_layout_parse_prefix(TlLayout *out, const char *text, size_t len,
                            size_t *end, TlErr *err, size_t *err_offset) {
  Parser p = {text, len, 0, err, err_offset};
  /* Fold the chain left to right. Replicated terms before the first term
   * with a shape wait in `pending` (replicated(a).replicated(b) is
   * replicated(a * b), so one count is exact) until the rank is known. */
  TlLayout acc;
  int rank = 0;
  int64_t pending = 1;
  size_t first = 0;
  for (int n = 0;; n++) {
    size_t at = (skip_ws(&p), p.pos);
    TlLayout t;
    TermKind kind = TERM_REPLICATED; /* set by term() */
    int64_t rep = 1;
    if (n == 0)
      first = at;
    if (!term(&p, &t, &kind, &rep))
      return false;
    if (kind == TERM_REPLICATED) {
      if (rank == 0) {
        pending *= rep;
        if (pending > TL_LAYOUT_MAX_SIZE)
          return fail_at(&p, at, "more than 2147483647 threads");
      } else if (!tl_layout_replicated(&t, rank, rep, err) ||
                 !tl_layout_product(&acc, &acc, &t, err)) {
        return fail_err(&p, at);
      }
    } else if (rank == 0) {
      rank = t.rank;
      TlLayout r;
      if (!tl_layout_replicated(&r, rank, pending, err) ||
          !tl_layout_product(&acc, &r, &t, err))
        return fail_err(&p, at);
    } else if (t.rank != rank) {
      return fail_at(
          &p, at, "rank mismatch: this layout has rank %d, the chain rank %d",
          t.rank, rank);
    } else if (!tl_layout_product(&acc, &acc, &t, err)) {
      return fail_err(&p, at);
    }
    size_t save = p.pos;
    if (peek(&p) != '.') {
      p.pos = save;
      break;
    }
    p.pos++;
  }
  if (rank == 0)
    return fail_at(&p, first,
                   "cannot infer the rank of replicated(...): chain it with "
                   "a layout that has a shape, e.g. local(1).replicated(4)%s",
                   "");
  *out = acc;
  if (end)
    *end = p.pos;
  return true;
}

bool tl_layout_parse(TlLayout *out, const char *text, size_t len, TlErr *err,
                     size_t *err_offset) {
  size_t end;
  TlLayout l;
  if (!tl_layout_parse_prefix(&l, text, len, &end, err, err_offset))
    return false;
  Parser p = {text, len, end, err, err_offset};
  if (peek(&p) >= 0) {
    char buf[16];
    return fail_at(&p, p.pos, "expected '.' or end of input, found %s",
                   next_desc(&p, buf, sizeof buf));
  }
  *out = l;
  return true;
}

static void print_list(TlStr *out, const int32_t *v, int n) {
  tl_str_putc(out, '[');
  for (int i = 0; i < n; i++)
    tl_str_printf(out, "%s%d", i ? ", " : "", v[i]);
  tl_str_putc(out, ']');
}

void tl_layout_print_explicit(const TlLayout *l, TlStr *out) {
  tl_str_puts(out, "layout<shape=");
  print_list(out, l->shape, l->rank);
  tl_str_puts(out, ", modes=");
  print_list(out, l->mode_shape, l->num_modes);
  tl_str_puts(out, ", spatial=");
  print_list(out, l->spatial_modes, l->num_spatial);
  tl_str_puts(out, ", local=");
  print_list(out, l->local_modes, l->num_local);
  tl_str_putc(out, '>');
}

static void print_prim(TlStr *out, const TlLayout *l, const char *name,
                       const int64_t *dims) {
  tl_str_puts(out, name);
  tl_str_putc(out, '(');
  for (int d = 0; d < l->rank; d++)
    tl_str_printf(out, "%s%lld", d ? ", " : "", (long long)dims[d]);
  tl_str_putc(out, ')');
}

/* Decomposes l into primitives, outermost first. A product appends each
 * factor's modes as the less significant digits of every dimension and of
 * both lists, so a factor can take a mode only when it is the first
 * remaining mode of its dimension ("ready") and a list head. Greedily: a
 * local factor when the local head is ready (ties between a local and a
 * spatial head concern different dimensions and commute; local first
 * prints the paper's local(2, 1).spatial(8, 4).local(1, 2)), else a spatial
 * factor or a replication. Each factor extends along its list while the
 * next mode is ready, in a new dimension, and keeps the row-major or
 * column-major direction its first two modes set. When neither head is
 * ready the order constraints form a cycle and no product exists. */
static bool print_product(const TlLayout *l, TlStr *out) {
  int next[TL_LAYOUT_MAX_RANK]; /* first remaining mode of each dimension */
  for (int d = 0; d < l->rank; d++) {
    next[d] = -1;
    for (int m = l->num_modes - 1; m >= 0; m--)
      if (l->mode_dim[m] == d)
        next[d] = m;
  }
  TlStr s = {0};
  int sp = 0, lp = 0, nterms = 0, nshaped = 0;
  while (sp < l->num_spatial || lp < l->num_local) {
    const int32_t *list;
    int *pos, n;
    bool spatial;
    if (lp < l->num_local &&
        next[l->mode_dim[l->local_modes[lp]]] == l->local_modes[lp]) {
      list = l->local_modes, pos = &lp, n = l->num_local, spatial = false;
    } else if (sp < l->num_spatial && l->spatial_modes[sp] < 0) {
      if (nterms++)
        tl_str_putc(&s, '.');
      tl_str_printf(&s, "replicated(%d)", -l->spatial_modes[sp++]);
      continue;
    } else if (sp < l->num_spatial && next[l->mode_dim[l->spatial_modes[sp]]] ==
                                          l->spatial_modes[sp]) {
      list = l->spatial_modes, pos = &sp, n = l->num_spatial, spatial = true;
    } else {
      tl_str_free(&s);
      return false;
    }
    int64_t dims[TL_LAYOUT_MAX_RANK];
    for (int d = 0; d < l->rank; d++)
      dims[d] = 1;
    int dir = 0, last = -1, taken = 0;
    while (*pos < n) {
      int32_t m = list[*pos];
      if (m < 0)
        break;
      int d = l->mode_dim[m];
      if (next[d] != m || dims[d] != 1)
        break;
      if (taken == 1)
        dir = d > last ? 1 : -1;
      if (taken >= 1 && (dir > 0 ? d < last : d > last))
        break;
      dims[d] = l->mode_shape[m];
      next[d] = m + 1 < l->num_modes && l->mode_dim[m + 1] == d ? m + 1 : -1;
      last = d;
      taken++;
      (*pos)++;
    }
    if (nterms++)
      tl_str_putc(&s, '.');
    nshaped++;
    const char *name = dir < 0 ? (spatial ? "column_spatial" : "column_local")
                               : (spatial ? "spatial" : "local");
    print_prim(&s, l, name, dims);
  }
  if (nshaped == 0) {
    /* No factor carries the rank: lead with the identity local(1, ...). */
    int64_t ones[TL_LAYOUT_MAX_RANK];
    for (int d = 0; d < l->rank; d++)
      ones[d] = 1;
    print_prim(out, l, "local", ones);
    if (nterms)
      tl_str_putc(out, '.');
  }
  tl_str_puts(out, tl_str_cstr(&s));
  tl_str_free(&s);
  return true;
}

void tl_layout_print(const TlLayout *l, TlStr *out) {
  if (!print_product(l, out))
    tl_layout_print_explicit(l, out);
}

bool tl_shared_layout_parse(TlSharedLayout *out, const char *text, size_t len,
                            TlErr *err, size_t *err_offset) {
  Parser p = {text, len, 0, err, err_offset};
  int64_t shape[TL_LAYOUT_MAX_RANK], modes[TL_LAYOUT_MAX_MODES],
      strides[TL_LAYOUT_MAX_MODES], base = 0, sw[3] = {0, 0, 0};
  int rank, nm, ns;
  size_t at = (skip_ws(&p), p.pos);
  if (!keyword(&p, "shared") || !expect(&p, '<') || !keyword(&p, "shape") ||
      !expect(&p, '=') ||
      !int_list(&p, shape, TL_LAYOUT_MAX_RANK, &rank, false) ||
      !expect(&p, ',') || !keyword(&p, "modes") || !expect(&p, '=') ||
      !int_list(&p, modes, TL_LAYOUT_MAX_MODES, &nm, false) ||
      !expect(&p, ',') || !keyword(&p, "strides") || !expect(&p, '='))
    return false;
  size_t strides_at = (skip_ws(&p), p.pos);
  if (!int_list(&p, strides, TL_LAYOUT_MAX_MODES, &ns, false))
    return false;
  bool seen_base = false, seen_swizzle = false;
  while (peek(&p) == ',') {
    p.pos++;
    char name[16];
    size_t key_at = (skip_ws(&p), p.pos);
    ident(&p, name, sizeof name);
    if (strcmp(name, "base") == 0 && !seen_base && !seen_swizzle) {
      seen_base = true;
      if (!expect(&p, '=') || !integer(&p, &base, false))
        return false;
    } else if (strcmp(name, "swizzle") == 0 && !seen_swizzle) {
      seen_swizzle = true;
      if (!expect(&p, '=') || !expect(&p, '<') || !integer(&p, &sw[0], false) ||
          !expect(&p, ',') || !integer(&p, &sw[1], false) || !expect(&p, ',') ||
          !integer(&p, &sw[2], false) || !expect(&p, '>'))
        return false;
      if (sw[0] > 40 || sw[1] > 40 || sw[2] > 40)
        return fail_at(&p, key_at, "swizzle parameters above 40");
    } else {
      p.pos = key_at;
      return fail_at(&p, key_at, "expected 'base' or 'swizzle'");
    }
  }
  if (!expect(&p, '>'))
    return false;
  if (peek(&p) >= 0) {
    char buf[16];
    return fail_at(&p, p.pos, "expected end of input, found %s",
                   next_desc(&p, buf, sizeof buf));
  }
  if (ns != nm)
    return fail_at(&p, strides_at,
                   "the number of strides differs from the number of modes");
  if (rank == 0)
    return fail_at(&p, at, "shared<...> needs a non-empty shape");
  TlSharedLayout l, b;
  if (!tl_shared_layout_make(&l, rank, shape, nm, modes, strides, err))
    return fail_err(&p, at);
  /* The base is folded in before the swizzle, as the layout defines it. */
  if (base > ((int64_t)1 << 48))
    return fail_at(&p, at, "base offset above 2^48");
  l.base = base;
  if (!tl_shared_layout_swizzle(&b, &l, (int)sw[0], (int)sw[1], (int)sw[2],
                                err))
    return fail_err(&p, at);
  *out = b;
  return true;
}
