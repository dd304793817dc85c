/* The printer: types, attributes and operations in their textual form.
 *
 * Value names: a value keeps the name it had in the source (its hint) when
 * that name is an identifier, made unique with a `_N` suffix; other values
 * are numbered %0, %1, ... and unnamed block arguments %arg0, %arg1, ...
 * Names are unique within each op that is isolated from above, so printing
 * and re-parsing gives the same text. */
#include "float_util.h"
#include "ir_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*===--- Aliases ---------------------------------------------------------===*/

/* While a module prints, dialect attributes (layouts) print as aliases
 * defined at the top of the file: `#layout0 = #tl.layout<...>`. The table
 * is per thread so that printers on different threads do not meet. */
typedef struct AliasTable {
  TL_VEC(const TlAttr *) attrs;
  TL_VEC(char *) names;
} AliasTable;

static _Thread_local const AliasTable *current_aliases;

static const char *alias_of(const TlAttr *a) {
  const AliasTable *t = current_aliases;
  for (size_t i = 0; t && i < t->attrs.len; i++)
    if (t->attrs.data[i] == a)
      return t->names.data[i];
  return NULL;
}

/*===--- Types and attributes --------------------------------------------===*/

void tl_type_print(const TlType *t, TlStr *out) {
  switch (t->kind) {
  case TL_TYPE_INT:
    if (t->is_bool)
      tl_str_puts(out, "i1");
    else
      tl_str_printf(out, "%c%u", t->is_signed ? 'i' : 'u', t->width);
    return;
  case TL_TYPE_FLOAT:
    if (t->exp == 5 && t->man == 10)
      tl_str_puts(out, "f16");
    else if (t->exp == 8 && t->man == 7)
      tl_str_puts(out, "bf16");
    else if (t->exp == 8 && t->man == 23)
      tl_str_puts(out, "f32");
    else if (t->exp == 11 && t->man == 52)
      tl_str_puts(out, "f64");
    else
      tl_str_printf(out, "f%ue%um%u", 1 + t->exp + t->man, t->exp, t->man);
    return;
  case TL_TYPE_NONE:
    tl_str_puts(out, "none");
    return;
  case TL_TYPE_FUNCTION:
    tl_str_putc(out, '(');
    for (unsigned i = 0; i < t->nin; i++) {
      if (i)
        tl_str_puts(out, ", ");
      tl_type_print(t->types[i], out);
    }
    tl_str_puts(out, ") -> ");
    if (t->nout == 1 && t->types[t->nin]->kind != TL_TYPE_FUNCTION) {
      tl_type_print(t->types[t->nin], out);
      return;
    }
    tl_str_putc(out, '(');
    for (unsigned i = 0; i < t->nout; i++) {
      if (i)
        tl_str_puts(out, ", ");
      tl_type_print(t->types[t->nin + i], out);
    }
    tl_str_putc(out, ')');
    return;
  case TL_TYPE_DIALECT:
    tl_str_printf(out, "!%s", t->def->name);
    t->def->print(t, out);
    return;
  }
}

void tl_print_string_literal(TlStr *out, const char *s, size_t n) {
  tl_str_putc(out, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\')
      tl_str_printf(out, "\\%c", c);
    else if (c == '\n')
      tl_str_puts(out, "\\n");
    else if (c == '\t')
      tl_str_puts(out, "\\t");
    else if (c < 32 || c >= 127)
      tl_str_printf(out, "\\%02X", c);
    else
      tl_str_putc(out, (char)c);
  }
  tl_str_putc(out, '"');
}

/* Bare identifiers print as they are; anything else is quoted. */
static bool is_bare_id(const char *s) {
  if (!(isalpha((unsigned char)*s) || *s == '_'))
    return false;
  for (; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '$' || *s == '.'))
      return false;
  return true;
}

static void print_name(TlStr *out, const char *name) {
  if (is_bare_id(name))
    tl_str_puts(out, name);
  else
    tl_print_string_literal(out, name, strlen(name));
}

/* The shortest decimal that reads back as the same value of the type (the
 * parser rounds literals to the type exactly once). */
static bool reads_back(const char *buf, double v, const TlType *t) {
  bool overflow;
  const char *digits = buf[0] == '-' ? buf + 1 : buf;
  double r =
      tl_float_round_decimal(digits, buf[0] == '-', t->exp, t->man, &overflow);
  return !overflow && r == v;
}

static void print_float(TlStr *out, double v, const TlType *t) {
  char buf[64];
  /* Whole numbers of moderate size print in full (448.0, not 4.5e+02). */
  if (fabs(v) < 1e16 && v == (double)(long long)v) {
    snprintf(buf, sizeof buf, "%.0f", v);
    if (reads_back(buf, v, t)) {
      tl_str_printf(out, "%s.0", buf);
      return;
    }
  }
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (reads_back(buf, v, t))
      break;
  }
  tl_str_puts(out, buf);
  if (!strpbrk(buf, ".en"))
    tl_str_puts(out, ".0");
}

static bool is_default_type(const TlAttr *a) {
  if (a->kind == TL_ATTR_INT)
    return a->type->width == 64 && a->type->is_signed;
  return a->type->exp == 11 && a->type->man == 52;
}

void tl_attr_print(const TlAttr *a, TlStr *out) {
  switch (a->kind) {
  case TL_ATTR_UNIT:
    tl_str_puts(out, "unit");
    return;
  case TL_ATTR_INT:
    if (a->type->is_bool) {
      tl_str_puts(out, a->ival ? "true" : "false");
      return;
    }
    if (a->type->is_signed)
      tl_str_printf(out, "%lld", (long long)a->ival);
    else
      tl_str_printf(out, "%llu", (unsigned long long)tl_attr_uint_value(a));
    break;
  case TL_ATTR_FLOAT:
    if (isfinite(a->fval)) {
      print_float(out, a->fval, a->type);
    } else {
      /* Infinities and NaN have no decimal form: print the bit pattern. */
      unsigned n = 1 + a->type->exp + a->type->man;
      tl_str_printf(out, "0x%0*llX", (int)(n + 3) / 4,
                    (unsigned long long)tl_float_to_bits(a->fval, a->type->exp,
                                                         a->type->man));
    }
    break;
  case TL_ATTR_STRING:
    tl_print_string_literal(out, a->str, a->len);
    return;
  case TL_ATTR_TYPE:
    tl_type_print(a->type, out);
    return;
  case TL_ATTR_ARRAY:
    tl_str_putc(out, '[');
    for (unsigned i = 0; i < a->n; i++) {
      if (i)
        tl_str_puts(out, ", ");
      tl_attr_print(a->elems[i], out);
    }
    tl_str_putc(out, ']');
    return;
  case TL_ATTR_DICT:
    tl_str_putc(out, '{');
    for (unsigned i = 0; i < a->n; i++) {
      if (i)
        tl_str_puts(out, ", ");
      print_name(out, a->entries[i].name);
      if (a->entries[i].attr->kind != TL_ATTR_UNIT) {
        tl_str_puts(out, " = ");
        tl_attr_print(a->entries[i].attr, out);
      }
    }
    tl_str_putc(out, '}');
    return;
  case TL_ATTR_SYMBOL:
    tl_str_putc(out, '@');
    print_name(out, a->str);
    return;
  case TL_ATTR_DIALECT: {
    const char *alias = alias_of(a);
    if (alias) {
      tl_str_printf(out, "#%s", alias);
      return;
    }
    tl_str_printf(out, "#%s", a->def->name);
    a->def->print(a, out);
    return;
  }
  }
  /* A hex float literal always names its type: without one it would read
   * back as an integer. */
  if (!is_default_type(a) || (a->kind == TL_ATTR_FLOAT && !isfinite(a->fval))) {
    tl_str_puts(out, " : ");
    tl_type_print(a->type, out);
  }
}

/*===--- Value names -----------------------------------------------------===*/

typedef struct Name {
  const char *base; /* without '%' */
  int index;        /* result number inside a group, or -1 */
} Name;

/* An open-addressing set or map keyed by pointers. */
typedef struct PtrMap {
  const void **keys;
  Name *vals; /* NULL for a set */
  size_t cap, count;
} PtrMap;

static size_t ptr_hash(const void *p, size_t cap) {
  uintptr_t x = (uintptr_t)p;
  x ^= x >> 17;
  x *= 0x9E3779B97F4A7C15ull;
  return (size_t)(x >> 7) & (cap - 1);
}

static Name *map_find(PtrMap *m, const void *k, bool *present) {
  *present = false;
  if (!m->cap)
    return NULL;
  for (size_t j = ptr_hash(k, m->cap); m->keys[j]; j = (j + 1) & (m->cap - 1))
    if (m->keys[j] == k) {
      *present = true;
      return m->vals ? &m->vals[j] : NULL;
    }
  return NULL;
}

static void map_put(PtrMap *m, const void *k, Name n, bool is_map) {
  if (2 * (m->count + 1) > m->cap) {
    size_t ncap = m->cap ? m->cap * 2 : 64;
    const void **nk = tl_xcalloc(ncap, sizeof *nk);
    Name *nv = is_map ? tl_xcalloc(ncap, sizeof *nv) : NULL;
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->keys[i])
        continue;
      size_t j = ptr_hash(m->keys[i], ncap);
      while (nk[j])
        j = (j + 1) & (ncap - 1);
      nk[j] = m->keys[i];
      if (is_map)
        nv[j] = m->vals[i];
    }
    tl_free(m->keys);
    tl_free(m->vals);
    m->keys = nk;
    m->vals = nv;
    m->cap = ncap;
  }
  size_t j = ptr_hash(k, m->cap);
  while (m->keys[j])
    j = (j + 1) & (m->cap - 1);
  m->keys[j] = k;
  if (is_map)
    m->vals[j] = n;
  m->count++;
}

/* The names of one isolated scope: values to names, and the set of names
 * taken (interned in the printer's string table, so compared by pointer). */
typedef struct NameScope {
  PtrMap names;
  PtrMap used;
  unsigned next_num, next_arg;
} NameScope;

struct TlPrinter {
  TlStr *out;
  TlContext *ctx;
  TlPrintOptions opts;
  unsigned indent;
  NameScope *scope;
  TlStrtab *strings;
  bool generic; /* printing a generic op's regions */
};

static bool name_used(TlPrinter *p, const char *n) {
  bool present;
  map_find(&p->scope->used, tl_strtab_intern(p->strings, n, strlen(n)),
           &present);
  return present;
}

static const char *mark_used(TlPrinter *p, const char *n) {
  const char *c = tl_strtab_intern(p->strings, n, strlen(n));
  Name none = {0};
  map_put(&p->scope->used, c, none, false);
  return c;
}

static bool is_number(const char *s) {
  if (!*s)
    return false;
  for (; *s; s++)
    if (!isdigit((unsigned char)*s))
      return false;
  return true;
}

static const char *fresh_name(TlPrinter *p, const char *hint, bool is_arg) {
  char buf[160];
  NameScope *s = p->scope;
  if (hint && !is_number(hint) && strlen(hint) < 100) {
    if (!name_used(p, hint))
      return mark_used(p, hint);
    for (unsigned k = 1;; k++) {
      snprintf(buf, sizeof buf, "%s_%u", hint, k);
      if (!name_used(p, buf))
        return mark_used(p, buf);
    }
  }
  for (;;) {
    if (is_arg)
      snprintf(buf, sizeof buf, "arg%u", s->next_arg++);
    else
      snprintf(buf, sizeof buf, "%u", s->next_num++);
    if (!name_used(p, buf))
      return mark_used(p, buf);
  }
}

static Name *lookup_name(TlPrinter *p, TlValue *v) {
  bool present;
  return map_find(&p->scope->names, v, &present);
}

static void set_name(TlPrinter *p, TlValue *v, Name n) {
  map_put(&p->scope->names, v, n, true);
}

static void name_block_arg(TlPrinter *p, TlValue *v) {
  if (lookup_name(p, v))
    return;
  Name n = {fresh_name(p, v->hint, true), -1};
  set_name(p, v, n);
}

/* Names an op's results: individually when each has its own distinct
 * hint, else as one group `%g:N` used as `%g#i`. */
static bool name_results(TlPrinter *p, TlOp *op) {
  unsigned n = op->nresults;
  if (n == 0)
    return false;
  bool individual = n == 1;
  if (!individual) {
    individual = true;
    for (unsigned i = 0; i < n && individual; i++) {
      const char *h = op->results[i].hint;
      if (!h || is_number(h))
        individual = false;
      for (unsigned j = 0; j < i && individual; j++)
        if (op->results[j].hint == h)
          individual = false;
    }
  }
  if (individual) {
    for (unsigned i = 0; i < n; i++) {
      Name nm = {fresh_name(p, op->results[i].hint, false), -1};
      set_name(p, &op->results[i], nm);
    }
    return false;
  }
  const char *base = fresh_name(p, op->results[0].hint, false);
  for (unsigned i = 0; i < n; i++) {
    Name nm = {base, (int)i};
    set_name(p, &op->results[i], nm);
  }
  return true;
}

static NameScope *push_scope(TlPrinter *p) {
  NameScope *outer = p->scope;
  p->scope = tl_xcalloc(1, sizeof *p->scope);
  return outer;
}

static void pop_scope(TlPrinter *p, NameScope *outer) {
  tl_free(p->scope->names.keys);
  tl_free(p->scope->names.vals);
  tl_free(p->scope->used.keys);
  tl_free(p->scope);
  p->scope = outer;
}

/*===--- Printer API for custom forms ------------------------------------===*/

TlStr *tl_printer_out(TlPrinter *p) { return p->out; }

void tl_print_operand(TlPrinter *p, TlValue *v) {
  if (!v) {
    tl_str_puts(p->out, "%<<null>>");
    return;
  }
  Name *n = lookup_name(p, v);
  if (!n) {
    /* A use before its definition (only in IR that fails to verify). */
    Name nm = {fresh_name(p, v->hint, !v->op), -1};
    set_name(p, v, nm);
    n = lookup_name(p, v);
  }
  tl_str_printf(p->out, "%%%s", n->base);
  if (n->index >= 0)
    tl_str_printf(p->out, "#%d", n->index);
}

void tl_print_operands(TlPrinter *p, unsigned n, TlValue *const *v) {
  for (unsigned i = 0; i < n; i++) {
    if (i)
      tl_str_puts(p->out, ", ");
    tl_print_operand(p, v[i]);
  }
}

void tl_print_type(TlPrinter *p, const TlType *t) { tl_type_print(t, p->out); }
void tl_print_attr(TlPrinter *p, const TlAttr *a) { tl_attr_print(a, p->out); }
void tl_print_str(TlPrinter *p, const char *s) { tl_str_puts(p->out, s); }

void tl_printf(TlPrinter *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_str_vprintf(p->out, fmt, ap);
  va_end(ap);
}

void tl_print_attr_dict(TlPrinter *p, const TlOp *op,
                        const char *const *elided) {
  bool first = true;
  for (unsigned i = 0; i < op->nattrs; i++) {
    bool skip = false;
    for (const char *const *e = elided; e && *e; e++)
      if (strcmp(*e, op->attrs[i].name) == 0)
        skip = true;
    if (skip)
      continue;
    tl_str_puts(p->out, first ? " {" : ", ");
    first = false;
    print_name(p->out, op->attrs[i].name);
    if (op->attrs[i].attr->kind != TL_ATTR_UNIT) {
      tl_str_puts(p->out, " = ");
      tl_attr_print(op->attrs[i].attr, p->out);
    }
  }
  if (!first)
    tl_str_putc(p->out, '}');
}

void tl_print_typed_operands(TlPrinter *p, TlOp *op, unsigned from,
                             bool attrs_first) {
  unsigned n = op->noperands;
  for (unsigned i = from; i < n; i++) {
    tl_str_puts(p->out, i > from ? ", " : " ");
    tl_print_operand(p, op->operands[i].value);
  }
  if (attrs_first)
    tl_print_attr_dict(p, op, NULL);
  if (n > from) {
    tl_str_puts(p->out, " : ");
    for (unsigned i = from; i < n; i++) {
      if (i > from)
        tl_str_puts(p->out, ", ");
      tl_type_print(op->operands[i].value->type, p->out);
    }
  }
  if (!attrs_first)
    tl_print_attr_dict(p, op, NULL);
}

void tl_print_arg_def(TlPrinter *p, TlValue *arg) {
  name_block_arg(p, arg);
  tl_print_operand(p, arg);
  tl_str_puts(p->out, ": ");
  tl_type_print(arg->type, p->out);
}

static void print_op(TlPrinter *p, TlOp *op);

static void newline(TlPrinter *p) {
  tl_str_putc(p->out, '\n');
  for (unsigned i = 0; i < p->indent; i++)
    tl_str_puts(p->out, "  ");
}

static void print_block_body(TlPrinter *p, TlBlock *b) {
  for (TlOp *o = b->first; o; o = o->next) {
    newline(p);
    print_op(p, o);
  }
}

void tl_print_region(TlPrinter *p, TlRegion *r, bool print_entry_args) {
  if (!r->first) {
    tl_str_puts(p->out, "{}");
    return;
  }
  tl_str_putc(p->out, '{');
  p->indent++;
  for (TlBlock *b = r->first; b; b = b->next) {
    /* In the generic form an empty entry block keeps its label: `{}`
     * reads back as a region without blocks (unverified IR has empty
     * blocks; custom forms such as a module's make their block). */
    bool header = (b != r->first) || (print_entry_args && b->nargs) ||
                  (p->generic && !b->first && !b->nargs);
    if (header) {
      tl_str_putc(p->out, '\n');
      for (unsigned i = 1; i < p->indent; i++)
        tl_str_puts(p->out, "  ");
      tl_str_puts(p->out, "^bb0");
      if (b->nargs) {
        tl_str_putc(p->out, '(');
        for (unsigned i = 0; i < b->nargs; i++) {
          if (i)
            tl_str_puts(p->out, ", ");
          tl_print_arg_def(p, b->args[i]);
        }
        tl_str_putc(p->out, ')');
      }
      tl_str_putc(p->out, ':');
    } else {
      for (unsigned i = 0; i < b->nargs; i++)
        name_block_arg(p, b->args[i]);
    }
    print_block_body(p, b);
  }
  p->indent--;
  newline(p);
  tl_str_putc(p->out, '}');
}

/*===--- Operations ------------------------------------------------------===*/

static void print_generic(TlPrinter *p, TlOp *op) {
  tl_print_string_literal(p->out, op->def->name, strlen(op->def->name));
  tl_str_putc(p->out, '(');
  for (unsigned i = 0; i < op->noperands; i++) {
    if (i)
      tl_str_puts(p->out, ", ");
    tl_print_operand(p, op->operands[i].value);
  }
  tl_str_putc(p->out, ')');
  if (op->nregions) {
    tl_str_puts(p->out, " (");
    for (unsigned i = 0; i < op->nregions; i++) {
      if (i)
        tl_str_puts(p->out, ", ");
      bool was = p->generic;
      p->generic = true;
      tl_print_region(p, op->regions[i], true);
      p->generic = was;
    }
    tl_str_putc(p->out, ')');
  }
  tl_print_attr_dict(p, op, NULL);
  tl_str_puts(p->out, " : (");
  for (unsigned i = 0; i < op->noperands; i++) {
    if (i)
      tl_str_puts(p->out, ", ");
    TlValue *v = op->operands[i].value;
    if (v)
      tl_type_print(v->type, p->out);
    else
      tl_str_puts(p->out, "<<null>>");
  }
  tl_str_puts(p->out, ") -> ");
  if (op->nresults == 1 && op->results[0].type->kind != TL_TYPE_FUNCTION) {
    tl_type_print(op->results[0].type, p->out);
    return;
  }
  tl_str_putc(p->out, '(');
  for (unsigned i = 0; i < op->nresults; i++) {
    if (i)
      tl_str_puts(p->out, ", ");
    tl_type_print(op->results[i].type, p->out);
  }
  tl_str_putc(p->out, ')');
}

/* Whether an op is one of the builtin dialect's, which print their custom
 * form without the `builtin.` prefix (`func`, `return`). */
static bool is_builtin(const TlOpDef *def) {
  switch (def->id) {
#define TL_OP(ID, ...) case TL_OP_##ID:
#include "tl/ops/builtin.def"
#undef TL_OP
    return true;
  default:
    return false;
  }
}

static void print_op(TlPrinter *p, TlOp *op) {
  if (op->nresults) {
    bool group = name_results(p, op);
    if (group) {
      Name *n = lookup_name(p, &op->results[0]);
      tl_str_printf(p->out, "%%%s:%u = ", n->base, op->nresults);
    } else {
      for (unsigned i = 0; i < op->nresults; i++) {
        if (i)
          tl_str_puts(p->out, ", ");
        tl_print_operand(p, &op->results[i]);
      }
      tl_str_puts(p->out, " = ");
    }
  }
  /* An isolated op's regions see no outer names: number them afresh. */
  bool isolated = op->def->traits & TL_TRAIT_ISOLATED;
  NameScope *outer = isolated ? push_scope(p) : NULL;
  if (op->def->print && !p->opts.generic) {
    const char *name = op->def->name;
    if (is_builtin(op->def))
      name = strchr(name, '.') + 1;
    tl_str_puts(p->out, name);
    bool was = p->generic;
    p->generic = false; /* a custom form makes its own blocks */
    op->def->print(p, op);
    p->generic = was;
  } else {
    print_generic(p, op);
  }
  if (isolated)
    pop_scope(p, outer);
}

static void printer_init(TlPrinter *p, TlContext *ctx,
                         const TlPrintOptions *opts, TlStr *out) {
  memset(p, 0, sizeof *p);
  p->out = out;
  p->ctx = ctx;
  if (opts)
    p->opts = *opts;
  p->strings = tl_strtab_create();
  push_scope(p);
}

static void printer_done(TlPrinter *p) {
  pop_scope(p, NULL);
  tl_strtab_destroy(p->strings);
}

void tl_op_print(TlOp *op, const TlPrintOptions *opts, TlStr *out) {
  TlPrinter p;
  printer_init(&p, op->module->ctx, opts, out);
  /* Custom forms may rely on what the verifier guarantees: IR that does not
   * verify prints in the generic form, which holds any op. */
  if (!p.opts.generic) {
    TlDiagEngine *d = op->module->ctx->diag;
    tl_diag_silence(d, true);
    p.opts.generic = TL_FAILED(tl_verify(op));
    tl_diag_silence(d, false);
  }
  print_op(&p, op);
  tl_str_putc(out, '\n');
  printer_done(&p);
}

static void collect_attr(AliasTable *t, const TlAttr *a);

static void collect_type(AliasTable *t, const TlType *ty) {
  for (unsigned i = 0; i < ty->nin + ty->nout; i++)
    collect_type(t, ty->types[i]);
  for (unsigned i = 0; i < ty->nparams; i++)
    collect_attr(t, ty->params[i]);
}

static void collect_attr(AliasTable *t, const TlAttr *a) {
  if (a->kind == TL_ATTR_DIALECT) {
    for (size_t i = 0; i < t->attrs.len; i++)
      if (t->attrs.data[i] == a)
        return;
    /* The name is the definition's name without its dialect: layout0. */
    const char *base = strchr(a->def->name, '.');
    base = base ? base + 1 : a->def->name;
    unsigned k = 0;
    for (size_t i = 0; i < t->attrs.len; i++)
      k += t->attrs.data[i]->def == a->def;
    TlStr n = {0};
    tl_str_printf(&n, "%s%u", base, k);
    tl_vec_push(&t->attrs, a);
    tl_vec_push(&t->names, n.data);
    return;
  }
  if (a->type)
    collect_type(t, a->type);
  for (unsigned i = 0; i < a->n; i++) {
    if (a->elems && a->kind != TL_ATTR_DICT)
      collect_attr(t, a->elems[i]);
    if (a->entries)
      collect_attr(t, a->entries[i].attr);
  }
}

static void collect_op(TlOp *op, void *user) {
  AliasTable *t = user;
  for (unsigned i = 0; i < op->nattrs; i++)
    collect_attr(t, op->attrs[i].attr);
  for (unsigned i = 0; i < op->nresults; i++)
    collect_type(t, op->results[i].type);
  for (unsigned r = 0; r < op->nregions; r++)
    for (TlBlock *b = op->regions[r]->first; b; b = b->next)
      for (unsigned i = 0; i < b->nargs; i++)
        collect_type(t, b->args[i]->type);
}

void tl_module_print(TlModule *m, const TlPrintOptions *opts, TlStr *out) {
  AliasTable table = {0};
  if (!opts || !opts->no_aliases)
    tl_op_walk(m->op, collect_op, &table, false);
  /* Definitions print without aliases themselves. */
  for (size_t i = 0; i < table.attrs.len; i++) {
    tl_str_printf(out, "#%s = ", table.names.data[i]);
    tl_attr_print(table.attrs.data[i], out);
    tl_str_putc(out, '\n');
  }
  const AliasTable *saved = current_aliases;
  current_aliases = &table;
  tl_op_print(m->op, opts, out);
  current_aliases = saved;
  for (size_t i = 0; i < table.names.len; i++)
    tl_free(table.names.data[i]);
  tl_vec_free(&table.names);
  tl_vec_free(&table.attrs);
}
