/* tl.kernel and tl.template: a kernel's signature, template parameters,
 * launch grid and block size.
 *
 *   tl.kernel @matmul(%a: !tl.ptr<f16>, %m: i32) template(BM = 16, BN = 8)
 *       grid(ceildiv(m, BM), 128 / BN) threads(32) {
 *     %bm = tl.template BM : i32
 *     ...
 *   }
 *
 * Parameters are scalars or !tl.ptr, named by identifiers. Template
 * parameters are named integer constants or scalar types (`WT = u4`) with
 * defaults; a definition given
 * to the context (tl_context_set_define) overrides the default while
 * parsing, so a kernel instantiated with other values is another kernel.
 * After the header the kernel installs a template environment in the
 * parser: `{expr}` in its types (`!tl.reg<{BM}x16xf16, ...>`) is a
 * condition (tl.h) over the template parameters, evaluated while parsing,
 * so the IR holds the instance's concrete types; `{WT}` where a type is
 * expected is a type parameter's type, and `bits(WT)`, `is_float(WT)`,
 * `is_signed(WT)` are its properties in expressions. `requires(cond, ...)`
 * states what the values must satisfy; it is checked with the instance's
 * values when the kernel is parsed and verified.
 * grid (1 to 3 expressions) and threads are grid expressions (tl.h) over
 * the integer parameters, by name, and the template parameters; the
 * runtime evaluates them at launch (tl_kernel_launch_dims). What is known
 * before launch is checked when the kernel is parsed and verified: no
 * constant divisor is zero or negative, a constant grid dimension or
 * thread count is within CUDA's limits, and with a constant thread count
 * every register tile of the body spans exactly that many threads, or
 * inside a warp branch the threads of its first warps
 * (tl_uniformity_tile_threads_ok).
 *
 * Attributes: sym_name, function_type, arg_names (the parameters' names, as
 * expressions use them), template (a dictionary of i64 and types), requires (an
 * optional array of strings), grid (an array of 1-3 strings), threads (a
 * string). The body needs no terminator. */
#include "tl_internal.h"

#include <ctype.h>
#include <string.h>


/*===--- Names in grid expressions --------------------------------------===*/

typedef struct Names {
  unsigned nargs;
  const char *const *arg_names;
  TlType *const *arg_types;
  TlAttr *templ;             /* dict */
  const int64_t *arg_values; /* evaluating: the launch values, or NULL */
  int nonint;                /* the non-integer parameter last looked up */
  int param;  /* constant contexts: the parameter last looked up, or -1 */
  const char *type_param; /* a type parameter last used as a number */
  TlStr *used; /* constant contexts: "N = 1, M = 2", the names read */
  bool unmet;  /* a requires condition was false */
} Names;

/* Grid expressions use integer parameters; i1 is a boolean, not a size. */
static bool int_param(const TlType *t) {
  return tl_type_is_int(t) && !tl_type_is_bool(t);
}

static bool is_name(const char *s, size_t len, const char *name) {
  return strlen(name) == len && !memcmp(name, s, len);
}

/* The template parameter `name` names, or NULL. */
static TlAttr *template_param(Names *n, const char *name, size_t len,
                              const char **key) {
  for (unsigned i = 0; n->templ && i < tl_attr_dict_size(n->templ); i++) {
    TlNamedAttr e = tl_attr_dict_entry(n->templ, i);
    if (is_name(name, len, e.name)) {
      if (key)
        *key = e.name;
      return e.attr;
    }
  }
  return NULL;
}

/* A template parameter's value in an expression: an integer parameter
 * by its name, a type parameter through a query, `bits(WT)` (tl.h). */
static bool template_number(Names *n, const char *name, size_t len,
                            int64_t *v, const char **key) {
  const char *open = memchr(name, '(', len);
  if (!open) {
    TlAttr *a = template_param(n, name, len, key);
    if (a && tl_attr_kind(a) == TL_ATTR_TYPE)
      n->type_param = *key;
    if (!a || tl_attr_kind(a) != TL_ATTR_INT)
      return false;
    *v = tl_attr_int_value(a);
    return true;
  }
  size_t qn = (size_t)(open - name);
  const char *arg = open + 1, *comma = memchr(arg, ',', len - qn - 1);
  size_t alen = comma ? (size_t)(comma - arg) : len - qn - 2;
  TlAttr *a = template_param(n, arg, alen, key);
  if (!a || tl_attr_kind(a) != TL_ATTR_TYPE)
    return false;
  TlType *t = tl_attr_type_value(a);
  if (!comma != !is_name(name, qn, "interleave"))
    return false;
  if (comma) {
    /* interleave(T, D): of the cast recipe from T to D. */
    const char *d = comma + 2;
    TlAttr *b = template_param(n, d, (size_t)(name + len - 1 - d), NULL);
    TlDType sd, dd;
    const TlCastRecipe *r = NULL;
    if (!b || tl_attr_kind(b) != TL_ATTR_TYPE)
      return false;
    if (tl_type_to_dtype(t, &sd) && tl_type_to_dtype(tl_attr_type_value(b), &dd))
      r = tl_cast_recipe_find(sd, dd);
    *v = r ? tl_cast_recipe_interleave(r) : 0;
    return true;
  }
  if (is_name(name, qn, "bits"))
    *v = tl_type_bitwidth(t);
  else if (is_name(name, qn, "is_float"))
    *v = tl_type_is_float(t);
  else
    *v = tl_type_is_float(t) || (tl_type_is_int(t) && tl_type_int_signed(t));
  return true;
}

/* Parameters are runtime values; template parameters are constants. */
static TlExprName classify(void *user, const char *name, size_t len,
                           int64_t *v) {
  Names *n = user;
  const char *key;
  for (unsigned i = 0; i < n->nargs; i++)
    if (is_name(name, len, n->arg_names[i])) {
      if (int_param(n->arg_types[i]))
        return TL_EXPR_NAME_RUNTIME;
      n->nonint = (int)i;
      return TL_EXPR_NAME_UNKNOWN;
    }
  return template_number(n, name, len, v, &key) ? TL_EXPR_NAME_CONST
                                                 : TL_EXPR_NAME_UNKNOWN;
}

/* Template expressions and requires clauses are evaluated before any
 * launch: only template parameters have values there. */
/* Appends "NAME = value" to the names read (each name once, in the order
 * first read; a type by its name). */
static void note_used(Names *n, const char *pname) {
  TlAttr *a = template_param(n, pname, strlen(pname), NULL);
  TlStr key = {0}, val = {0};
  tl_str_printf(&key, "%s = ", pname);
  if (tl_attr_kind(a) == TL_ATTR_TYPE)
    tl_type_print(tl_attr_type_value(a), &val);
  else
    tl_str_printf(&val, "%lld", (long long)tl_attr_int_value(a));
  const char *s = tl_str_cstr(n->used), *at = s;
  bool seen = false;
  while (!seen && (at = strstr(at, tl_str_cstr(&key)))) {
    seen = at == s || at[-1] == ' ';
    at++;
  }
  if (!seen)
    tl_str_printf(n->used, "%s%s = %s", n->used->len ? ", " : "", pname,
                  tl_str_cstr(&val));
  tl_str_free(&key);
  tl_str_free(&val);
}

static TlExprName classify_const(void *user, const char *name, size_t len,
                                 int64_t *v) {
  Names *n = user;
  for (unsigned i = 0; i < n->nargs; i++)
    if (is_name(name, len, n->arg_names[i])) {
      n->param = (int)i;
      return TL_EXPR_NAME_UNKNOWN;
    }
  const char *pname;
  if (!template_number(n, name, len, v, &pname))
    return TL_EXPR_NAME_UNKNOWN;
  if (n->used) {
    note_used(n, pname);
    /* A query of two types, `interleave(WT, AT)`, read both. */
    const char *comma = memchr(name, ',', len);
    const char *second = NULL;
    if (comma && template_param(n, comma + 2, (size_t)(name + len - 1 -
                                                      (comma + 2)),
                                &second))
      note_used(n, second);
  }
  return TL_EXPR_NAME_CONST;
}

/* Checks a condition over template parameters only; used (may be NULL)
 * receives the names read with their values. */
static bool check_const(const char *s, size_t len, Names *nm, TlStr *canon,
                        int64_t *v, TlStr *used, TlErr *err, size_t *off) {
  nm->param = -1;
  nm->type_param = NULL;
  nm->used = used;
  bool ok = tl_cond_check(s, len, classify_const, nm, canon, NULL, v, err, off);
  nm->used = NULL;
  if (!ok && nm->param >= 0)
    tl_err(err,
           "'%s' is a kernel parameter, known only at launch; only template "
           "parameters can be used here",
           nm->arg_names[nm->param]);
  else if (!ok && nm->type_param)
    tl_err(err,
           "'%s' is a type, not a number (bits(%s), is_float(%s) and "
           "is_signed(%s) are numbers)",
           nm->type_param, nm->type_param, nm->type_param, nm->type_param);
  return ok;
}

/* The parser's template environment inside a kernel: Names as user. */
static bool template_eval(void *user, const char *text, size_t len,
                          int64_t *value, TlStr *names, TlErr *err,
                          size_t *err_offset) {
  *err_offset = 0;
  return check_const(text, len, user, NULL, value, names, err, err_offset);
}

/* The parser's type hook inside a kernel: `{WT}`. */
static TlType *template_type(void *user, const char *text, size_t len,
                             TlErr *err) {
  Names *n = user;
  while (len && isspace((unsigned char)*text))
    text++, len--;
  while (len && isspace((unsigned char)text[len - 1]))
    len--;
  TlAttr *a = template_param(n, text, len, NULL);
  if (a && tl_attr_kind(a) == TL_ATTR_TYPE)
    return tl_attr_type_value(a);
  tl_err(err, "%s", a ? "the template parameter is an integer, not a type"
                      : "a type here is a type template parameter's name");
  return NULL;
}

static bool lookup(void *user, const char *name, size_t len, int64_t *v) {
  Names *n = user;
  int64_t c;
  for (unsigned i = 0; i < n->nargs; i++)
    if (is_name(name, len, n->arg_names[i]) && int_param(n->arg_types[i]) &&
        n->arg_values) {
      *v = n->arg_values[i];
      return true;
    }
  if (classify(user, name, len, &c) == TL_EXPR_NAME_CONST) {
    *v = c;
    return true;
  }
  return false;
}

/* CUDA's limits on a launch: grid x up to 2^31 - 1, y and z up to 65535,
 * 1024 threads per block. */
static const int64_t grid_max[3] = {INT32_MAX, 65535, 65535};
enum { THREADS_MAX = 1024 };

enum { DIM_THREADS = 3, DIM_REQUIRES = 4, MAX_REQUIRES = 64 };

/* Checks a requires condition: template parameters only, and it holds
 * (else nm->unmet, with the message naming the values). */
static bool check_requires(const char *s, size_t len, Names *nm, TlStr *canon,
                           TlErr *err, size_t *off) {
  TlStr used = {0}, text = {0};
  int64_t v;
  nm->unmet = false;
  bool ok = check_const(s, len, nm, &text, &v, &used, err, off);
  if (ok && !v) {
    nm->unmet = true;
    ok = tl_err(err, "template constraint '%s' does not hold%s%s",
                tl_str_cstr(&text), used.len ? " with " : "",
                tl_str_cstr(&used));
  }
  if (ok && canon)
    tl_str_puts(canon, tl_str_cstr(&text));
  tl_str_free(&used);
  tl_str_free(&text);
  return ok;
}

/* Checks one grid (dim 0..2) or threads (dim 3) expression, or a requires
 * condition (dim 4); a constant grid or threads expression must be within
 * the launch limits. On failure writes the message and the byte offset of
 * the error. */
static bool check_expr(const char *s, size_t len, unsigned dim, Names *nm,
                       TlStr *canon, int64_t *konst, TlErr *err, size_t *off) {
  bool is_const;
  int64_t v;
  nm->nonint = -1;
  *off = 0;
  if (dim == DIM_REQUIRES) {
    if (!check_requires(s, len, nm, canon, err, off))
      return false;
    if (konst)
      *konst = 0;
    return true;
  }
  if (!tl_expr_check(s, len, classify, nm, canon, &is_const, &v, err, off)) {
    if (nm->nonint >= 0) {
      TlStr t = {0};
      tl_type_print(nm->arg_types[nm->nonint], &t);
      tl_err(err,
             "parameter '%s' has type %s; grid expressions use integer "
             "parameters only",
             nm->arg_names[nm->nonint], tl_str_cstr(&t));
      tl_str_free(&t);
    }
    return false;
  }
  if (konst)
    *konst = is_const ? v : 0;
  if (!is_const)
    return true;
  /* A bad constant is the whole expression: point at its start. */
  while (*off < len && isspace((unsigned char)s[*off]))
    ++*off;
  int64_t max = dim < 3 ? grid_max[dim] : THREADS_MAX;
  if (v < 1 || v > max) {
    if (dim < 3)
      return tl_err(err, "grid dimension %u is %lld, outside 1..%lld", dim,
                    (long long)v, (long long)max);
    return tl_err(err, "threads per block is %lld, outside 1..%lld",
                  (long long)v, (long long)max);
  }
  return true;
}

/* [A-Za-z_][A-Za-z0-9_]*: what grid expressions can refer to. */
static bool identifier(const char *s) {
  if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
    return false;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_')
      return false;
  return true;
}

/*===--- Parsing ---------------------------------------------------------===*/

typedef TL_VEC(TlAttr *) AttrVec;

/* `(expr, expr)` as raw text pieces split at top-level commas; dims start
 * at first_dim (0 for grid, 3 for threads). */
static TlResult parse_exprs(TlParser *p, const char *what, unsigned max,
                            unsigned first_dim, AttrVec *out, Names *names) {
  const char *text;
  size_t len;
  TlLoc loc;
  if (!tl_parser_peek_punct(p, "(")) {
    tl_parser_error(p, tl_parser_loc(p), "expected '(' after '%s'", what);
    return TL_FAILURE;
  }
  if (TL_FAILED(tl_parse_raw_body(p, &text, &len, &loc)))
    return TL_FAILURE;
  TlContext *ctx = tl_parser_context(p);
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= len; i++) {
    if (i < len && text[i] == '(')
      depth++;
    else if (i < len && text[i] == ')')
      depth--;
    if (i < len && !(text[i] == ',' && depth == 0))
      continue;
    if (out->len >= max) {
      tl_parser_error(p, tl_text_loc(loc, text, start),
                      "'%s' takes at most %u expression%s", what, max,
                      max == 1 ? "" : "s");
      return TL_FAILURE;
    }
    TlStr canon = {0};
    TlErr err;
    size_t off;
    unsigned dim =
        first_dim + (first_dim < DIM_REQUIRES ? (unsigned)out->len : 0);
    names->unmet = false;
    if (!check_expr(text + start, i - start, dim, names, &canon, NULL, &err,
                    &off)) {
      if (names->unmet) {
        /* A condition that does not hold: point at its start. */
        size_t at = start;
        while (at < i && isspace((unsigned char)text[at]))
          at++;
        tl_parser_error(p, tl_text_loc(loc, text, at), "%s", err.msg);
      } else {
        tl_parser_error(p, tl_text_loc(loc, text, start + off),
                        "invalid %s expression: %s", what, err.msg);
      }
      tl_str_free(&canon);
      return TL_FAILURE;
    }
    tl_vec_push(out,
                tl_attr_string(ctx, canon.data ? canon.data : "", canon.len));
    tl_str_free(&canon);
    start = i + 1;
  }
  return TL_SUCCESS;
}

TlResult tl_kernel_parse(TlParser *p, TlOpState *st) {
  TlContext *ctx = st->ctx;
  const char *name;
  TL_VEC(TlArgDef) args = {0};
  TlTypeVec ins = {0};
  TL_VEC(const char *) names = {0};
  TL_VEC(TlNamedAttr) templ = {0};
  TL_VEC(TlLoc) tlocs = {0};
  AttrVec grid = {0}, threads = {0}, conds = {0};
  bool has_requires = false;
  const TlTemplateEnv *prev_env = NULL;
  bool env_set = false;
  TlResult r = TL_FAILURE;
  if (TL_FAILED(tl_parse_symbol_name(p, &name)))
    goto out;
  /* The parameters' types may name template parameters (`!tl.ptr<{WT}>`):
   * read the template header first, then the parameters. */
  TlParserMark *params = tl_parser_mark(p);
  const char *skipped;
  size_t skipped_len;
  if (!tl_parser_peek_punct(p, "(")) {
    tl_parse_punct(p, "(");
    goto out;
  }
  if (TL_FAILED(tl_parse_raw_body(p, &skipped, &skipped_len, NULL)))
    goto out;
  if (tl_parse_optional_keyword(p, "template")) {
    if (TL_FAILED(tl_parse_punct(p, "(")))
      goto out;
    do {
      const char *tn;
      int64_t v = 0;
      TlType *ty = NULL;
      TlLoc tl = tl_parser_loc(p);
      if (TL_FAILED(tl_parse_identifier(p, &tn)) ||
          TL_FAILED(tl_parse_punct(p, "=")))
        goto out;
      /* An integer, or a scalar type: `WT = u4`. */
      TlLoc vl = tl_parser_loc(p);
      const char *word;
      if (tl_parser_peek_identifier(p, &word)) {
        if (TL_FAILED(tl_parse_type(p, &ty)))
          goto out;
        if (!tl_type_is_scalar(ty) || tl_type_is_bool(ty)) {
          tl_parser_error(p, vl,
                          "a template parameter is an integer or a scalar "
                          "type (an integer or float type), not '%s'",
                          word);
          goto out;
        }
      } else if (TL_FAILED(tl_parse_int(p, &v))) {
        goto out;
      }
      if (!identifier(tn)) {
        tl_parser_error(p, tl,
                        "template parameter names are identifiers "
                        "([A-Za-z_][A-Za-z0-9_]*), not '%s'",
                        tn);
        goto out;
      }
      for (size_t i = 0; i < templ.len; i++)
        if (templ.data[i].name == tn) {
          tl_parser_error(p, tl, "template parameter '%s' given twice", tn);
          goto out;
        }
      int64_t over;
      TlType *tover;
      if (tl_context_get_define_value(ctx, tn, &over, &tover)) {
        if (!tover != !ty) {
          tl_parser_error(p, vl,
                          "template parameter '%s' is %s, but its definition "
                          "gives %s",
                          tn, ty ? "a type" : "an integer",
                          ty ? "an integer" : "a type");
          goto out;
        }
        if (tover && (!tl_type_is_scalar(tover) || tl_type_is_bool(tover))) {
          tl_parser_error(p, vl,
                          "template parameter '%s' is a scalar type; its "
                          "definition gives another type",
                          tn);
          goto out;
        }
        v = over;
        ty = tover;
      }
      TlNamedAttr na = {tn, ty ? tl_attr_type(ctx, ty)
                               : tl_attr_int(ctx, tl_type_int(ctx, 64, true),
                                             v)};
      tl_vec_push(&templ, na);
      tl_vec_push(&tlocs, tl);
    } while (tl_parse_optional_punct(p, ","));
    if (TL_FAILED(tl_parse_punct(p, ")")))
      goto out;
  }
  TlAttr *tdict = tl_attr_dict(ctx, (unsigned)templ.len, templ.data);
  Names pre = {.templ = tdict, .nonint = -1, .param = -1};
  TlTemplateEnv pre_env = {template_eval, &pre, template_type};
  prev_env = tl_parser_set_template_env(p, &pre_env);
  env_set = true;
  TlParserMark *after = tl_parser_mark(p);
  tl_parser_rewind(p, params);
  if (TL_FAILED(tl_parse_punct(p, "(")))
    goto out;
  if (!tl_parser_peek_punct(p, ")")) {
    do {
      TlArgDef a;
      TlLoc al = tl_parser_loc(p);
      if (TL_FAILED(tl_parse_arg_def(p, &a)))
        goto out;
      if (!tl_type_is_scalar(a.type) && !tl_type_is_ptr(a.type) &&
          !tl_type_is_tensormap(a.type)) {
        tl_parser_error(p, al, "kernel parameters are scalars, !tl.ptr or "
                               "!tl.tensormap");
        goto out;
      }
      /* Grid expressions refer to parameters by name. */
      if (!identifier(a.ref.name)) {
        tl_parser_error(p, al,
                        "kernel parameter names are identifiers "
                        "([A-Za-z_][A-Za-z0-9_]*), not '%s'",
                        a.ref.name);
        goto out;
      }
      for (size_t i = 0; i < names.len; i++)
        if (strcmp(names.data[i], a.ref.name) == 0) {
          tl_parser_error(p, al, "kernel parameter '%s' is declared twice",
                          a.ref.name);
          goto out;
        }
      tl_vec_push(&args, a);
      tl_vec_push(&ins, a.type);
      tl_vec_push(&names, a.ref.name);
    } while (tl_parse_optional_punct(p, ","));
  }
  if (TL_FAILED(tl_parse_punct(p, ")")))
    goto out;
  tl_parser_rewind(p, after);
  for (size_t t = 0; t < templ.len; t++)
    for (size_t i = 0; i < names.len; i++)
      if (strcmp(names.data[i], templ.data[t].name) == 0) {
        tl_parser_error(p, tlocs.data[t],
                        "template parameter '%s' has the name of a kernel "
                        "parameter",
                        templ.data[t].name);
        goto out;
      }

  Names nm = {.nargs = (unsigned)names.len,
              .arg_names = names.data,
              .arg_types = ins.data,
              .templ = tdict,
              .nonint = -1,
              .param = -1};
  if (tl_parse_optional_keyword(p, "requires")) {
    has_requires = true;
    if (TL_FAILED(parse_exprs(p, "requires", MAX_REQUIRES, DIM_REQUIRES,
                              &conds, &nm)))
      goto out;
  }
  /* An empty list fails as an empty expression, so both have >= 1. */
  if (TL_FAILED(tl_parse_keyword(p, "grid")) ||
      TL_FAILED(parse_exprs(p, "grid", 3, 0, &grid, &nm)) ||
      TL_FAILED(tl_parse_keyword(p, "threads")) ||
      TL_FAILED(parse_exprs(p, "threads", 1, 3, &threads, &nm)))
    goto out;
  TL_VEC(TlAttr *) name_attrs = {0};
  for (size_t i = 0; i < names.len; i++)
    tl_vec_push(&name_attrs,
                tl_attr_string(ctx, names.data[i], strlen(names.data[i])));
  tl_op_state_set_attr(st, "sym_name", tl_attr_string(ctx, name, strlen(name)));
  tl_op_state_set_attr(
      st, "function_type",
      tl_attr_type(
          ctx, tl_type_function(ctx, (unsigned)ins.len, ins.data, 0, NULL)));
  tl_op_state_set_attr(
      st, "arg_names",
      tl_attr_array(ctx, (unsigned)name_attrs.len, name_attrs.data));
  tl_vec_free(&name_attrs);
  tl_op_state_set_attr(st, "template", tdict);
  if (has_requires)
    tl_op_state_set_attr(st, "requires",
                         tl_attr_array(ctx, (unsigned)conds.len, conds.data));
  tl_op_state_set_attr(st, "grid",
                       tl_attr_array(ctx, (unsigned)grid.len, grid.data));
  tl_op_state_set_attr(st, "threads", threads.data[0]);
  /* From here on `{expr}` in types reads the template parameters. */
  TlTemplateEnv env = {template_eval, &nm, template_type};
  /* Replaces the header's environment; prev_env stays the caller's. */
  tl_parser_set_template_env(p, &env);
  env_set = true;
  if (tl_parse_optional_keyword(p, "attributes") &&
      TL_FAILED(tl_parse_optional_attr_dict(p, st)))
    goto out;
  r = tl_parse_region(p, st, (unsigned)args.len, args.data);
out:
  if (env_set)
    tl_parser_set_template_env(p, prev_env);
  tl_vec_free(&conds);
  tl_vec_free(&args);
  tl_vec_free(&ins);
  tl_vec_free(&names);
  tl_vec_free(&templ);
  tl_vec_free(&tlocs);
  tl_vec_free(&grid);
  tl_vec_free(&threads);
  return r;
}

/* For printing: any name stands for some value. */
static TlExprName any_name(void *user, const char *name, size_t len,
                           int64_t *v) {
  return TL_EXPR_NAME_RUNTIME;
}

/* Prints an expression attribute in canonical form, so that printing
 * what the generic form gave is stable (as written when it does not
 * check). */
static void print_expr(TlPrinter *p, TlAttr *a, bool cond, const char *sep) {
  size_t len = 0;
  const char *s = a ? tl_attr_string_value(a, &len) : NULL;
  if (!s) {
    tl_print_str(p, sep);
    return;
  }
  TlStr canon = {0};
  bool ok = cond ? tl_cond_check(s, len, any_name, NULL, &canon, NULL, NULL,
                                 NULL, NULL)
                 : tl_expr_check(s, len, any_name, NULL, &canon, NULL, NULL,
                                 NULL, NULL);
  tl_printf(p, "%s%s", sep, ok ? tl_str_cstr(&canon) : s);
  tl_str_free(&canon);
}

void tl_kernel_print(TlPrinter *p, TlOp *op) {
  TlContext *ctx = tl_op_context(op);
  tl_print_str(p, " ");
  tl_print_attr(p, tl_attr_symbol(ctx, tl_symbol_name(op)));
  tl_print_str(p, "(");
  TlBlock *entry = tl_region_first_block(tl_op_region(op, 0));
  TlAttr *names = tl_op_attr(op, "arg_names");
  for (unsigned i = 0; i < tl_block_num_args(entry); i++) {
    if (i)
      tl_print_str(p, ", ");
    TlValue *a = tl_block_arg(entry, i);
    /* Parameters print under the names the expressions use. */
    const char *n = tl_attr_string_value(tl_attr_array_elem(names, i), NULL);
    tl_value_set_name_hint(a, tl_context_intern(ctx, n, strlen(n)));
    tl_print_arg_def(p, a);
  }
  tl_print_str(p, ")");
  TlAttr *templ = tl_op_attr(op, "template");
  if (tl_attr_dict_size(templ)) {
    tl_print_str(p, " template(");
    for (unsigned i = 0; i < tl_attr_dict_size(templ); i++) {
      TlNamedAttr e = tl_attr_dict_entry(templ, i);
      tl_printf(p, "%s%s = ", i ? ", " : "", e.name);
      if (tl_attr_kind(e.attr) == TL_ATTR_TYPE)
        tl_print_type(p, tl_attr_type_value(e.attr));
      else
        tl_printf(p, "%lld", (long long)tl_attr_int_value(e.attr));
    }
    tl_print_str(p, ")");
  }
  TlAttr *req = tl_op_attr(op, "requires");
  if (req) {
    tl_print_str(p, " requires(");
    for (unsigned i = 0; i < tl_attr_array_size(req); i++)
      print_expr(p, tl_attr_array_elem(req, i), true, i ? ", " : "");
    tl_print_str(p, ")");
  }
  tl_print_str(p, " grid(");
  TlAttr *grid = tl_op_attr(op, "grid");
  for (unsigned i = 0; i < tl_attr_array_size(grid); i++)
    print_expr(p, tl_attr_array_elem(grid, i), false, i ? ", " : "");
  print_expr(p, tl_op_attr(op, "threads"), false, ") threads(");
  tl_print_str(p, ")");
  static const char *const elided[] = {
      "sym_name", "function_type", "arg_names", "template",
      "requires", "grid",          "threads",   NULL};
  if (tl_op_num_attrs(op) > 6u + (req != NULL)) {
    tl_print_str(p, " attributes");
    tl_print_attr_dict(p, op, elided);
  }
  tl_print_str(p, " ");
  tl_print_region(p, tl_op_region(op, 0), false);
}

enum { MAX_PARAMS = 64 };

typedef struct ThreadCheck {
  TlOp *kernel;
  int64_t threads;
  TlUniformity *uni; /* made at the first tile over other threads */
  bool failed;
} ThreadCheck;

static bool tile_threads_ok(TlOp *op, ThreadCheck *tc, unsigned i, TlType *t) {
  if (tl_tensor_kind(t) != TL_TENSOR_REG)
    return true;
  int64_t n = tl_layout_num_threads(tl_reg_layout(t));
  if (n == tc->threads)
    return true;
  if (!tc->uni)
    tc->uni = tl_uniformity_create(tc->kernel);
  TlErr why;
  if (tl_uniformity_tile_threads_ok(tc->uni, op, n, tc->threads, &why))
    return true;
  tl_op_emit_error(op,
                   "result #%u is a register tile over %lld threads, but "
                   "the kernel has %lld threads per block (%s)",
                   i, (long long)n, (long long)tc->threads, why.msg);
  tc->failed = true;
  return false;
}

/* Checking results covers every value: inside the isolated kernel a tile
 * is an op result or a block argument typed after one (scf iter_args). */
static void check_threads(TlOp *op, void *user) {
  ThreadCheck *tc = user;
  for (unsigned i = 0; !tc->failed && i < tl_op_num_results(op); i++)
    tile_threads_ok(op, tc, i, tl_value_type(tl_op_result(op, i)));
}

TlResult tl_kernel_verify(TlOp *op) {
  /* A kernel is a module-level symbol: nested in another op it would be
   * out of reach of symbol lookup and of the runtime. */
  TlOp *parent = tl_op_parent(op);
  if (parent && tl_op_id(parent) != TL_OP_BUILTIN_MODULE) {
    tl_op_emit_error(op,
                     "must be at the top level of a module, not inside "
                     "'%s'",
                     tl_op_name(parent));
    return TL_FAILURE;
  }
  TlAttr *ft = tl_op_attr(op, "function_type");
  TlAttr *names = tl_op_attr(op, "arg_names");
  TlAttr *templ = tl_op_attr(op, "template");
  TlAttr *grid = tl_op_attr(op, "grid");
  TlAttr *threads = tl_op_attr(op, "threads");
  if (!ft || tl_attr_kind(ft) != TL_ATTR_TYPE ||
      tl_type_kind(tl_attr_type_value(ft)) != TL_TYPE_FUNCTION ||
      tl_type_function_num_results(tl_attr_type_value(ft)) != 0) {
    tl_op_emit_error(op, "requires 'function_type' with no results");
    return TL_FAILURE;
  }
  TlType *fn = tl_attr_type_value(ft);
  unsigned n = tl_type_function_num_inputs(fn);
  if (!names || tl_attr_kind(names) != TL_ATTR_ARRAY ||
      tl_attr_array_size(names) != n) {
    tl_op_emit_error(op, "requires 'arg_names' with one string per parameter");
    return TL_FAILURE;
  }
  if (!templ || tl_attr_kind(templ) != TL_ATTR_DICT) {
    tl_op_emit_error(op, "requires a dictionary 'template'");
    return TL_FAILURE;
  }
  for (unsigned i = 0; i < tl_attr_dict_size(templ); i++) {
    TlAttr *a = tl_attr_dict_entry(templ, i).attr;
    bool type = tl_attr_kind(a) == TL_ATTR_TYPE &&
                tl_type_is_scalar(tl_attr_type_value(a)) &&
                !tl_type_is_bool(tl_attr_type_value(a));
    if (tl_attr_kind(a) != TL_ATTR_INT && !type) {
      tl_op_emit_error(op,
                       "template parameter '%s' must be an integer or a "
                       "scalar type",
                       tl_attr_dict_entry(templ, i).name);
      return TL_FAILURE;
    }
  }
  if (!grid || tl_attr_kind(grid) != TL_ATTR_ARRAY ||
      tl_attr_array_size(grid) < 1 || tl_attr_array_size(grid) > 3 ||
      !threads || tl_attr_kind(threads) != TL_ATTR_STRING) {
    tl_op_emit_error(op, "requires 'grid' (1 to 3 strings) and 'threads' (a "
                         "string)");
    return TL_FAILURE;
  }
  if (n > MAX_PARAMS) {
    tl_op_emit_error(op, "has more than %d parameters", MAX_PARAMS);
    return TL_FAILURE;
  }
  /* The blocks an SM must hold at once (ptxas caps the registers); 0
   * asks for nothing, as no attribute does (a template's way to leave the
   * registers to ptxas). */
  TlAttr *mb = tl_op_attr(op, "min_blocks");
  if (mb && (tl_attr_kind(mb) != TL_ATTR_INT || tl_attr_int_value(mb) < 0 ||
             tl_attr_int_value(mb) > 32)) {
    tl_op_emit_error(op, "'min_blocks' must be an integer from 0 to 32");
    return TL_FAILURE;
  }
  const char *nbuf[MAX_PARAMS];
  TlType *tbuf[MAX_PARAMS];
  TlBlock *entry = tl_region_first_block(tl_op_region(op, 0));
  if (tl_block_num_args(entry) != n) {
    tl_op_emit_error(op,
                     "entry block has %u arguments but the kernel has %u "
                     "parameters",
                     tl_block_num_args(entry), n);
    return TL_FAILURE;
  }
  for (unsigned i = 0; i < n; i++) {
    TlAttr *s = tl_attr_array_elem(names, i);
    if (tl_attr_kind(s) != TL_ATTR_STRING) {
      tl_op_emit_error(op, "'arg_names' must hold strings");
      return TL_FAILURE;
    }
    nbuf[i] = tl_attr_string_value(s, NULL);
    tbuf[i] = tl_type_function_input(fn, i);
    if (!identifier(nbuf[i])) {
      tl_op_emit_error(op, "parameter name '%s' is not an identifier", nbuf[i]);
      return TL_FAILURE;
    }
    for (unsigned j = 0; j < i; j++)
      if (strcmp(nbuf[j], nbuf[i]) == 0) {
        tl_op_emit_error(op, "parameter name '%s' is used twice", nbuf[i]);
        return TL_FAILURE;
      }
    if (tl_attr_dict_get(templ, nbuf[i])) {
      tl_op_emit_error(op,
                       "parameter '%s' has the name of a template "
                       "parameter",
                       nbuf[i]);
      return TL_FAILURE;
    }
    if (!tl_type_is_scalar(tbuf[i]) && !tl_type_is_ptr(tbuf[i]) &&
        !tl_type_is_tensormap(tbuf[i])) {
      tl_op_emit_error(op,
                       "parameter #%u must be a scalar, !tl.ptr or "
                       "!tl.tensormap",
                       i);
      return TL_FAILURE;
    }
    if (tl_value_type(tl_block_arg(entry, i)) != tbuf[i]) {
      tl_op_emit_error(op,
                       "type of entry block argument #%u does not match "
                       "the parameter",
                       i);
      return TL_FAILURE;
    }
  }
  for (unsigned i = 0; i < tl_attr_dict_size(templ); i++)
    if (!identifier(tl_attr_dict_entry(templ, i).name)) {
      tl_op_emit_error(op, "template parameter name '%s' is not an identifier",
                       tl_attr_dict_entry(templ, i).name);
      return TL_FAILURE;
    }
  Names nm = {.nargs = n,
              .arg_names = nbuf,
              .arg_types = tbuf,
              .templ = templ,
              .nonint = -1,
              .param = -1};
  TlAttr *req = tl_op_attr(op, "requires");
  if (req && tl_attr_kind(req) != TL_ATTR_ARRAY) {
    tl_op_emit_error(op, "'requires' must be an array of strings");
    return TL_FAILURE;
  }
  for (unsigned i = 0; req && i < tl_attr_array_size(req); i++) {
    TlAttr *c = tl_attr_array_elem(req, i);
    if (tl_attr_kind(c) != TL_ATTR_STRING) {
      tl_op_emit_error(op, "'requires' must be an array of strings");
      return TL_FAILURE;
    }
    size_t len, off;
    const char *s = tl_attr_string_value(c, &len);
    TlErr err;
    if (!check_requires(s, len, &nm, NULL, &err, &off)) {
      if (nm.unmet)
        tl_op_emit_error(op, "%s", err.msg);
      else
        tl_op_emit_error(op, "invalid requires expression '%s': %s", s,
                         err.msg);
      return TL_FAILURE;
    }
  }
  int64_t nthreads = 0;
  for (unsigned i = 0; i <= tl_attr_array_size(grid); i++) {
    bool is_threads = i == tl_attr_array_size(grid);
    TlAttr *e = is_threads ? threads : tl_attr_array_elem(grid, i);
    if (tl_attr_kind(e) != TL_ATTR_STRING) {
      tl_op_emit_error(op, "'grid' must hold strings");
      return TL_FAILURE;
    }
    size_t len, off;
    const char *s = tl_attr_string_value(e, &len);
    TlErr err;
    if (!check_expr(s, len, is_threads ? 3 : i, &nm, NULL,
                    is_threads ? &nthreads : NULL, &err, &off)) {
      tl_op_emit_error(op, "invalid %s expression '%s': %s",
                       is_threads ? "threads" : "grid", s, err.msg);
      return TL_FAILURE;
    }
  }
  /* A register tile is distributed over all the threads of the block, so
   * its layout spans exactly `threads` threads (known when constant), or
   * over the first warps of it inside a warp branch. */
  if (nthreads) {
    ThreadCheck tc = {op, nthreads, NULL, false};
    tl_op_walk(op, check_threads, &tc, false);
    tl_uniformity_destroy(tc.uni);
    if (tc.failed)
      return TL_FAILURE;
  }
  return tl_uniformity_verify(op, nthreads);
}

/*===--- tl.template -----------------------------------------------------===*/

TlOp *tl_enclosing_kernel(TlOp *op) {
  for (TlOp *o = tl_op_parent(op); o; o = tl_op_parent(o))
    if (tl_op_id(o) == TL_OP_TL_KERNEL)
      return o;
  return NULL;
}

TlResult tl_template_parse(TlParser *p, TlOpState *st) {
  const char *name;
  TlType *t;
  if (TL_FAILED(tl_parse_identifier(p, &name)) ||
      TL_FAILED(tl_parse_punct(p, ":")) || TL_FAILED(tl_parse_type(p, &t)))
    return TL_FAILURE;
  tl_op_state_set_attr(st, "name", tl_attr_string(st->ctx, name, strlen(name)));
  tl_op_state_add_result(st, t);
  return tl_parse_optional_attr_dict(p, st);
}

void tl_template_print(TlPrinter *p, TlOp *op) {
  static const char *const elided[] = {"name", NULL};
  tl_printf(p, " %s : ", tl_attr_string_value(tl_op_attr(op, "name"), NULL));
  tl_print_type(p, tl_value_type(tl_op_result(op, 0)));
  tl_print_attr_dict(p, op, elided);
}

/* The value of the template parameter an op names, or NULL. */
static TlAttr *template_value(TlOp *op) {
  TlOp *k = tl_enclosing_kernel(op);
  TlAttr *n = tl_op_attr(op, "name");
  if (!k || !n || tl_attr_kind(n) != TL_ATTR_STRING)
    return NULL;
  TlAttr *templ = tl_op_attr(k, "template");
  return templ ? tl_attr_dict_get(templ, tl_attr_string_value(n, NULL)) : NULL;
}

TlResult tl_template_verify(TlOp *op) {
  if (tl_op_num_operands(op) || tl_op_num_results(op) != 1 ||
      !tl_type_is_int(tl_value_type(tl_op_result(op, 0))) ||
      tl_type_is_bool(tl_value_type(tl_op_result(op, 0)))) {
    tl_op_emit_error(op, "has no operands and one integer result");
    return TL_FAILURE;
  }
  TlAttr *name = tl_op_attr(op, "name");
  if (!name || tl_attr_kind(name) != TL_ATTR_STRING) {
    tl_op_emit_error(op, "requires a string attribute 'name'");
    return TL_FAILURE;
  }
  if (!tl_enclosing_kernel(op)) {
    tl_op_emit_error(op, "must be inside a tl.kernel");
    return TL_FAILURE;
  }
  TlAttr *v = template_value(op);
  if (!v) {
    tl_op_emit_error(op, "the kernel has no template parameter '%s'",
                     tl_attr_string_value(tl_op_attr(op, "name"), NULL));
    return TL_FAILURE;
  }
  if (tl_attr_kind(v) != TL_ATTR_INT) {
    const char *n = tl_attr_string_value(tl_op_attr(op, "name"), NULL);
    tl_op_emit_error(op,
                     "template parameter '%s' is a type; its width is "
                     "{bits(%s)} where a number is written",
                     n, n);
    return TL_FAILURE;
  }
  TlType *t = tl_value_type(tl_op_result(op, 0));
  TlAttr *c = tl_attr_int(tl_op_context(op), t, tl_attr_int_value(v));
  if (tl_attr_int_value(c) != tl_attr_int_value(v)) {
    TlStr s = {0};
    tl_type_print(t, &s);
    tl_op_emit_error(op, "template value %lld does not fit in %s",
                     (long long)tl_attr_int_value(v), tl_str_cstr(&s));
    tl_str_free(&s);
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

TlResult tl_template_fold(TlOp *op, TlAttr *const *c, TlFoldResult *res) {
  TlAttr *v = template_value(op);
  if (!v || tl_attr_kind(v) != TL_ATTR_INT)
    return TL_FAILURE;
  res[0].attr =
      tl_attr_int(tl_op_context(op), tl_value_type(tl_op_result(op, 0)),
                  tl_attr_int_value(v));
  return TL_SUCCESS;
}

/*===--- Launch configuration --------------------------------------------===*/

bool tl_kernel_launch_dims(TlOp *kernel, const int64_t *int_args,
                           int64_t grid[3], int64_t *threads, TlErr *err) {
  grid[0] = grid[1] = grid[2] = 1;
  *threads = 1;
  /* Only what the verifier accepts; anything else would be read blindly. */
  if (!kernel || tl_op_id(kernel) != TL_OP_TL_KERNEL ||
      TL_FAILED(tl_kernel_verify(kernel)))
    return tl_err(err, "not a valid tl.kernel");
  return tl_kernel_verified_launch_dims(kernel, int_args, grid, threads, err);
}

bool tl_kernel_verified_launch_dims(TlOp *kernel, const int64_t *int_args,
                                    int64_t grid[3], int64_t *threads,
                                    TlErr *err) {
  grid[0] = grid[1] = grid[2] = 1;
  *threads = 1;
  TlType *fn = tl_attr_type_value(tl_op_attr(kernel, "function_type"));
  unsigned n = tl_type_function_num_inputs(fn);
  const char *nbuf[MAX_PARAMS];
  TlType *tbuf[MAX_PARAMS];
  TlAttr *names = tl_op_attr(kernel, "arg_names");
  for (unsigned i = 0; i < n; i++) {
    nbuf[i] = tl_attr_string_value(tl_attr_array_elem(names, i), NULL);
    tbuf[i] = tl_type_function_input(fn, i);
  }
  Names nm = {.nargs = n,
              .arg_names = nbuf,
              .arg_types = tbuf,
              .templ = tl_op_attr(kernel, "template"),
              .arg_values = int_args,
              .nonint = -1,
              .param = -1};
  TlAttr *g = tl_op_attr(kernel, "grid");
  for (unsigned i = 0; i <= tl_attr_array_size(g); i++) {
    bool is_threads = i == tl_attr_array_size(g);
    size_t len;
    const char *s = tl_attr_string_value(
        is_threads ? tl_op_attr(kernel, "threads") : tl_attr_array_elem(g, i),
        &len);
    int64_t *v = is_threads ? threads : &grid[i];
    TlErr e;
    if (!tl_expr_eval(s, len, lookup, &nm, v, &e, NULL))
      return tl_err(err, "%s expression '%s': %s",
                    is_threads ? "threads" : "grid", s, e.msg);
    int64_t max = is_threads ? THREADS_MAX : grid_max[i];
    if (*v < 1 || *v > max) {
      if (is_threads)
        return tl_err(err, "threads per block is %lld, outside 1..%lld",
                      (long long)*v, (long long)max);
      return tl_err(err, "grid dimension %u is %lld, outside 1..%lld", i,
                    (long long)*v, (long long)max);
    }
  }
  return true;
}
