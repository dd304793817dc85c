/* Grid expressions: the small integer language of tl.kernel's grid and
 * threads clauses (grammar in tl.h), and conditions, the same language
 * with comparisons and logic (requires clauses and template expressions).
 * One recursive-descent evaluator serves both checking (canonical text,
 * names classified) and evaluation. Values are int64 with overflow
 * reported; '/' and '%' floor toward minus infinity and need a positive
 * divisor.
 *
 * While checking, a runtime name (a kernel parameter) stands for any value,
 * so every value carries whether it depends on one (`dyn`): an arithmetic
 * error is reported only where the operands that cause it are constants
 * (a constant divisor that is not positive fails whatever the dividend; an
 * overflow needs both operands constant). Evaluation has no runtime names,
 * so every error is reported there.
 *
 * `&&` and `||` skip their right operand when the left one decides the
 * result (a constant): its arithmetic errors are not reported, so that
 * `G > 0 && K % G == 0` holds no error for G = 0. Names are still checked
 * there. */
#include "tl/tl.h"

#include <ctype.h>
#include <string.h>

enum { MAX_DEPTH = 64 };

typedef struct Val {
  int64_t v;
  bool dyn; /* depends on a runtime name (checking only) */
} Val;

typedef struct Ev {
  const char *s, *p, *end;
  TlExprLookup lookup;     /* evaluating */
  TlExprClassify classify; /* checking */
  void *user;
  TlErr *err;
  size_t err_off;
  bool failed;
  bool logic; /* conditions: comparisons, !, && and || */
  int skip;   /* inside an operand that && or || does not evaluate */
  int depth;
} Ev;

static bool fail(Ev *e, const char *at, const char *msg, const char *arg) {
  if (!e->failed) {
    e->failed = true;
    e->err_off = (size_t)(at - e->s);
    tl_err(e->err, msg, arg);
  }
  return false;
}

static void space(Ev *e) {
  while (e->p < e->end && isspace((unsigned char)*e->p))
    e->p++;
}

static bool eat(Ev *e, char c) {
  space(e);
  if (e->p < e->end && *e->p == c) {
    e->p++;
    return true;
  }
  return false;
}

/* Floor division and its remainder for b > 0, written so that no
 * intermediate overflows (INT64_MIN / 3 included). */
static int64_t floordiv(int64_t a, int64_t b) { return a / b - (a % b < 0); }
static int64_t floormod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return r < 0 ? r + b : r;
}
static int64_t ceildiv(int64_t a, int64_t b) { return a / b + (a % b > 0); }

/* A divisor must be positive; a runtime divisor makes the result runtime. */
static bool divisor_ok(Ev *e, const char *at, const char *what, Val b) {
  if (b.dyn || b.v > 0 || e->skip)
    return true;
  return fail(e, at, "%s by a non-positive value in expression", what);
}

/* Applies a checked operation: runtime operands give a runtime result;
 * constant operands that overflow are an error. */
static bool arith(Ev *e, const char *at, char op, Val a, Val b, Val *r) {
  r->dyn = a.dyn || b.dyn;
  if (r->dyn) {
    r->v = 1;
    return true;
  }
  bool ovf = op == '+'   ? __builtin_add_overflow(a.v, b.v, &r->v)
             : op == '-' ? __builtin_sub_overflow(a.v, b.v, &r->v)
                         : __builtin_mul_overflow(a.v, b.v, &r->v);
  if (ovf && e->skip)
    r->v = 1;
  return !ovf || e->skip || fail(e, at, "overflow in expression%s", "");
}

static bool expr(Ev *e, Val *v, TlStr *text);
static bool top(Ev *e, Val *v, TlStr *text);

/* The name n[0..len), written at `at` (for errors). */
static bool name(Ev *e, const char *at, const char *n, size_t len, Val *v,
                 TlStr *text) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.*s", (int)(len < 60 ? len : 60), n);
  bool known;
  if (e->classify) {
    TlExprName k = e->classify(e->user, n, len, &v->v);
    known = k != TL_EXPR_NAME_UNKNOWN;
    v->dyn = k == TL_EXPR_NAME_RUNTIME;
    if (v->dyn)
      v->v = 1;
  } else {
    known = e->lookup && e->lookup(e->user, n, len, &v->v);
    v->dyn = false;
  }
  if (!known)
    return fail(e, at, "unknown name '%s' in expression", buf);
  tl_str_printf(text, "%.*s", (int)len, n);
  return true;
}

/* ceildiv(a, b), min(a, b), max(a, b) after the function name. */
static bool call(Ev *e, const char *n, size_t len, Val *v, TlStr *text) {
  Val a, b;
  TlStr ta = {0}, tb = {0};
  e->p++; /* '(' */
  bool ok = top(e, &a, &ta) &&
            (eat(e, ',') || fail(e, e->p, "expected ',' in expression%s", ""));
  space(e);
  const char *bat = e->p;
  ok = ok && top(e, &b, &tb) &&
       (eat(e, ')') || fail(e, e->p, "expected ')' in expression%s", ""));
  if (ok) {
    v->dyn = a.dyn || b.dyn;
    if (n[0] == 'c') {
      ok = divisor_ok(e, bat, "ceildiv", b);
      v->v = ok && !v->dyn && b.v > 0 ? ceildiv(a.v, b.v) : 1;
    } else {
      /* min when n[1] == 'i', max otherwise */
      v->v = v->dyn ? 1 : (n[1] == 'i') == (a.v < b.v) ? a.v : b.v;
    }
    tl_str_printf(text, "%.*s(%s, %s)", (int)len, n, tl_str_cstr(&ta),
                  tl_str_cstr(&tb));
  }
  tl_str_free(&ta);
  tl_str_free(&tb);
  return ok;
}

/* bits(T), is_float(T), is_signed(T), interleave(T, D): properties of
 * type parameters. */
static bool type_query(const char *n, size_t len) {
  static const char *const names[] = {"bits", "is_float", "is_signed",
                                      "interleave"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strlen(names[i]) == len && !memcmp(n, names[i], len))
      return true;
  return false;
}

/* A type query after its name (at n): `(NAME)` or `(NAME, NAME)` is read,
 * and the whole text in canonical form, `bits(WT)` or `interleave(WT,
 * AT)`, is looked up as a name (tl.h). */
static bool query(Ev *e, const char *n, Val *v, TlStr *text) {
  const char *open = e->p;
  char buf[160];
  int k = snprintf(buf, sizeof buf, "%.*s(", (int)(open - n), n);
  for (int i = 0;; i++) {
    e->p++; /* '(' or ',' */
    space(e);
    const char *arg = e->p;
    while (e->p < e->end && (isalnum((unsigned char)*e->p) || *e->p == '_'))
      e->p++;
    size_t alen = (size_t)(e->p - arg);
    if (!alen || isdigit((unsigned char)*arg) || alen > 60)
      return fail(e, arg, "expected a type parameter's name in expression%s",
                  "");
    k += snprintf(buf + k, sizeof buf - (size_t)k, "%s%.*s", i ? ", " : "",
                  (int)alen, arg);
    space(e);
    if (i == 0 && e->p < e->end && *e->p == ',')
      continue;
    if (!eat(e, ')'))
      return fail(e, e->p, "expected ')' in expression%s", "");
    break;
  }
  k += snprintf(buf + k, sizeof buf - (size_t)k, ")");
  return name(e, n, buf, (size_t)k, v, text);
}

static bool factor(Ev *e, Val *v, TlStr *text) {
  /* Every Val starts here: a failed factor leaves a defined one, which
   * `!` and the callers may still read. */
  *v = (Val){1, false};
  space(e);
  const char *at = e->p;
  if (e->p >= e->end)
    return fail(e, at, "expected a number, a name or '(' in expression%s", "");
  if (e->depth >= MAX_DEPTH)
    return fail(e, at, "expression is nested too deeply%s", "");
  e->depth++;
  bool ok;
  if (isdigit((unsigned char)*e->p)) {
    /* The literal is the whole run of letters and digits (tl_int_literal:
     * decimal, or 0x hex), so that `08` is eight and `1a` an error. */
    while (e->p < e->end && isalnum((unsigned char)*e->p))
      e->p++;
    int64_t x = 1;
    TlIntStatus st = tl_int64_literal(at, (size_t)(e->p - at), &x);
    ok = st == TL_INT_OK ||
         fail(e, at,
              st == TL_INT_TOO_LARGE ? "integer is too large%s"
                                     : "malformed integer in expression%s",
              "");
    v->v = x;
    tl_str_printf(text, "%lld", (long long)x);
  } else if (isalpha((unsigned char)*e->p) || *e->p == '_') {
    const char *n = e->p;
    while (e->p < e->end && (isalnum((unsigned char)*e->p) || *e->p == '_'))
      e->p++;
    size_t len = (size_t)(e->p - n);
    bool is_fn = (len == 7 && !memcmp(n, "ceildiv", 7)) ||
                 (len == 3 && (!memcmp(n, "min", 3) || !memcmp(n, "max", 3)));
    space(e);
    /* A function name not followed by '(' is an ordinary name. */
    if (is_fn && e->p < e->end && *e->p == '(')
      ok = call(e, n, len, v, text);
    else if (type_query(n, len) && e->p < e->end && *e->p == '(')
      ok = query(e, n, v, text);
    else
      ok = name(e, n, n, len, v, text);
  } else if (*e->p == '!' && e->logic) {
    e->p++;
    tl_str_putc(text, '!');
    ok = factor(e, v, text);
    v->v = !ok || v->dyn ? 1 : v->v == 0;
  } else if (*e->p == '(') {
    e->p++;
    TlStr inner = {0};
    ok = top(e, v, &inner) &&
         (eat(e, ')') || fail(e, e->p, "expected ')' in expression%s", ""));
    if (ok)
      tl_str_printf(text, "(%s)", tl_str_cstr(&inner));
    tl_str_free(&inner);
  } else {
    char c[2] = {*e->p, 0};
    ok = fail(e, at, "unexpected '%s' in expression",
              isprint((unsigned char)c[0]) ? c : "?");
  }
  e->depth--;
  return ok;
}

static bool term(Ev *e, Val *v, TlStr *text) {
  if (!factor(e, v, text))
    return false;
  for (;;) {
    space(e);
    /* Compared one by one: strchr over the operators' string finds a
     * NUL byte too (its terminator), which then read as '%'. */
    if (e->p >= e->end || (*e->p != '*' && *e->p != '/' && *e->p != '%'))
      return true;
    const char *opat = e->p;
    char op = *e->p++;
    space(e);
    const char *bat = e->p;
    Val b;
    tl_str_printf(text, " %c ", op);
    if (!factor(e, &b, text))
      return false;
    if (op == '*') {
      if (!arith(e, opat, '*', *v, b, v))
        return false;
      continue;
    }
    if (!divisor_ok(e, bat, op == '/' ? "division" : "remainder", b))
      return false;
    v->dyn = v->dyn || b.dyn;
    v->v = v->dyn || b.v <= 0 ? 1
           : op == '/'        ? floordiv(v->v, b.v)
                              : floormod(v->v, b.v);
  }
}

static bool expr(Ev *e, Val *v, TlStr *text) {
  if (!term(e, v, text))
    return false;
  for (;;) {
    space(e);
    if (e->p >= e->end || (*e->p != '+' && *e->p != '-'))
      return true;
    const char *opat = e->p;
    char op = *e->p++;
    Val b;
    tl_str_printf(text, " %c ", op);
    if (!term(e, &b, text) || !arith(e, opat, op, *v, b, v))
      return false;
  }
}

/* A comparison operator at e->p (longest first), or NULL. */
static const char *cmp_op(Ev *e) {
  static const char *const ops[] = {"==", "!=", "<=", ">=", "<", ">", NULL};
  for (const char *const *o = ops; *o; o++) {
    size_t n = strlen(*o);
    if ((size_t)(e->end - e->p) >= n && !memcmp(e->p, *o, n))
      return *o;
  }
  return NULL;
}

/* expr [cmp expr]: 1 when the comparison holds, else 0. */
static bool comparison(Ev *e, Val *v, TlStr *text) {
  if (!expr(e, v, text))
    return false;
  space(e);
  const char *op = cmp_op(e);
  if (!op)
    return true;
  e->p += strlen(op);
  Val b;
  tl_str_printf(text, " %s ", op);
  if (!expr(e, &b, text))
    return false;
  v->dyn = v->dyn || b.dyn;
  bool r = op[0] == '=' ? v->v == b.v
           : op[0] == '!' ? v->v != b.v
           : op[0] == '<' ? (op[1] ? v->v <= b.v : v->v < b.v)
                          : (op[1] ? v->v >= b.v : v->v > b.v);
  v->v = v->dyn ? 1 : r;
  return true;
}

/* Operands joined by && (and_op) or || (or): a constant left operand that
 * decides the result makes the right one skipped. */
static bool logic_chain(Ev *e, Val *v, TlStr *text, bool and_op) {
  if (!(and_op ? comparison(e, v, text) : logic_chain(e, v, text, true)))
    return false;
  const char *tok = and_op ? "&&" : "||";
  for (;;) {
    space(e);
    if (e->end - e->p < 2 || memcmp(e->p, tok, 2) != 0)
      return true;
    e->p += 2;
    tl_str_printf(text, " %s ", tok);
    bool decided = !v->dyn && (and_op ? v->v == 0 : v->v != 0);
    Val b;
    e->skip += decided;
    bool ok = and_op ? comparison(e, &b, text) : logic_chain(e, &b, text, true);
    e->skip -= decided;
    if (!ok)
      return false;
    if (decided)
      continue;
    v->dyn = v->dyn || b.dyn;
    v->v = v->dyn ? 1 : b.v != 0;
  }
}

/* The whole language: a condition in logic mode, else an expression. */
static bool top(Ev *e, Val *v, TlStr *text) {
  if (!e->logic)
    return expr(e, v, text);
  return logic_chain(e, v, text, false);
}

static bool run(Ev *e, TlStr *out, Val *v, size_t *err_offset) {
  TlStr canon = {0};
  bool ok = top(e, v, &canon);
  space(e);
  if (ok && e->p != e->end)
    ok = fail(e, e->p, "unexpected text after expression%s", "");
  if (ok && out)
    tl_str_puts(out, tl_str_cstr(&canon));
  tl_str_free(&canon);
  if (!ok && err_offset)
    *err_offset = e->err_off;
  return ok;
}

bool tl_expr_eval(const char *text, size_t len, TlExprLookup lookup, void *user,
                  int64_t *value, TlErr *err, size_t *err_offset) {
  Ev e = {.s = text,
          .p = text,
          .end = text + len,
          .lookup = lookup,
          .user = user,
          .err = err};
  Val v = {0, false};
  if (!run(&e, NULL, &v, err_offset))
    return false;
  if (value)
    *value = v.v;
  return true;
}

static bool check(const char *text, size_t len, bool logic,
                  TlExprClassify classify, void *user, TlStr *out,
                  bool *is_const, int64_t *value, TlErr *err,
                  size_t *err_offset) {
  Ev e = {.s = text,
          .p = text,
          .end = text + len,
          .classify = classify,
          .user = user,
          .err = err,
          .logic = logic};
  Val v = {0, false};
  if (!run(&e, out, &v, err_offset))
    return false;
  if (is_const)
    *is_const = !v.dyn;
  if (value)
    *value = v.v;
  return true;
}

bool tl_expr_check(const char *text, size_t len, TlExprClassify classify,
                   void *user, TlStr *out, bool *is_const, int64_t *value,
                   TlErr *err, size_t *err_offset) {
  return check(text, len, false, classify, user, out, is_const, value, err,
               err_offset);
}

bool tl_cond_check(const char *text, size_t len, TlExprClassify classify,
                   void *user, TlStr *out, bool *is_const, int64_t *value,
                   TlErr *err, size_t *err_offset) {
  return check(text, len, true, classify, user, out, is_const, value, err,
               err_offset);
}
