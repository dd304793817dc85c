/* Fuzzes the template-expression language of tl.kernel (dialect/tl/expr.c):
 * the grid and threads expressions (tl_expr_check, tl_expr_eval) and the
 * conditions of requires clauses and template expressions (tl_cond_check).
 *
 * An input is one mode byte, then the expression's text. The mode byte's
 * value modulo 4 says what is checked: bit 0 a condition (else an
 * expression), bit 1 that some names stand for runtime values (kernel
 * parameters; else every name is a constant). A name's value is a hash of
 * its spelling into a table of edge values (0, 1, -1, INT64_MIN ...), the
 * same for every call; a name that starts with '_' is unknown, and in the
 * runtime mode one whose hash is odd is a runtime name. Type queries
 * (`bits(WT)`) are names to the callbacks, so they get values the same way.
 *
 * Properties checked on every input:
 *   - checking never crashes, reads an undefined value or overflows (the
 *     sanitizers watch), and an error's offset lies within the text;
 *   - the canonical text is a fixed point: it checks again, to itself,
 *     with the same constness and value;
 *   - with every name a constant, an expression checks exactly when it
 *     evaluates, to the same value, or fails with the same message at the
 *     same offset (checking and evaluation are one evaluator);
 *   - runtime names never make an expression's error appear: what checks
 *     with constants checks with runtime names too (a condition may fail
 *     then, since `&&` and `||` evaluate their right side when the left
 *     side is not known); and whatever is constant with runtime names has
 *     the value it has when every name is a constant. */
#include "tl/tl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values a name may take: the edges of int64 arithmetic and of the
 * divisor rule (0 and negatives), and small sizes real kernels use. */
/* clang-format off */
static const int64_t values[] = {
    0, 1, 2, 3, 4, 7, 8, 16, 64, 128, -1, -2, INT64_MAX, INT64_MIN,
    (int64_t)1 << 32, (int64_t)1 << 62,
};
/* clang-format on */

static uint32_t hash(const char *n, size_t len) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)n[i]) * 16777619u;
  return h;
}

/* user: non-NULL (&runtime_names) when some names are runtime names. */
static int runtime_names;
static TlExprName classify(void *user, const char *n, size_t len,
                           int64_t *value) {
  if (len == 0 || n[0] == '_')
    return TL_EXPR_NAME_UNKNOWN;
  uint32_t h = hash(n, len);
  if (user && (h & 1))
    return TL_EXPR_NAME_RUNTIME;
  *value = values[(h >> 1) % (sizeof values / sizeof *values)];
  return TL_EXPR_NAME_CONST;
}

static bool lookup(void *user, const char *n, size_t len, int64_t *value) {
  return classify(user, n, len, value) == TL_EXPR_NAME_CONST;
}

typedef struct Outcome {
  bool ok, is_const;
  int64_t value;
  size_t off;
  TlErr err;
  TlStr canon;
} Outcome;

static Outcome check(const char *s, size_t len, bool cond, bool runtime) {
  Outcome o = {.value = 0, .off = (size_t)-1};
  o.ok = (cond ? tl_cond_check : tl_expr_check)(
      s, len, classify, runtime ? &runtime_names : NULL, &o.canon, &o.is_const,
      &o.value, &o.err, &o.off);
  if (!o.ok && o.off > len) {
    fprintf(stderr, "error offset %zu past the text's %zu bytes: %s\n", o.off,
            len, o.err.msg);
    abort();
  }
  return o;
}

static void fail(const char *what, const char *s, size_t len) {
  fprintf(stderr, "%s: '%.*s'\n", what, (int)len, s);
  abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  if (size == 0)
    return 0;
  bool cond = data[0] & 1, runtime = data[0] & 2;
  const char *s = (const char *)data + 1;
  size_t len = size - 1;

  Outcome o = check(s, len, cond, runtime);
  if (o.ok) {
    const char *c = tl_str_cstr(&o.canon);
    Outcome again = check(c, strlen(c), cond, runtime);
    if (!again.ok || strcmp(tl_str_cstr(&again.canon), c) != 0 ||
        again.is_const != o.is_const || (o.is_const && again.value != o.value))
      fail("the canonical text does not check to itself", c, strlen(c));
    tl_str_free(&again.canon);
  }

  /* Every name a constant: the reference the other modes are held to. */
  Outcome k = runtime ? check(s, len, cond, false) : o;
  if (k.ok && !k.is_const)
    fail("constant names give a runtime value", s, len);
  if (!cond) {
    int64_t v = 0;
    size_t off = (size_t)-1;
    TlErr err = {{0}};
    bool ok = tl_expr_eval(s, len, lookup, NULL, &v, &err, &off);
    if (ok != k.ok || (ok && v != k.value) ||
        (!ok && (off != k.off || strcmp(err.msg, k.err.msg) != 0)))
      fail("evaluation and checking disagree", s, len);
  }
  if (runtime) {
    if (!cond && k.ok && !o.ok)
      fail("a runtime name makes an error appear", s, len);
    if (k.ok && o.ok && o.is_const && o.value != k.value)
      fail("a constant's value changes with runtime names", s, len);
    tl_str_free(&k.canon);
  }
  tl_str_free(&o.canon);
  return 0;
}
