/* The lexer and the recursive-descent parser of the textual IR.
 *
 * Grammar (docs/langref.md has the full EBNF):
 *   file      ::= (alias | op)*
 *   alias     ::= '#' id '=' attr | '!' id '=' type
 *   op        ::= (results '=')? (string generic | bare-id custom)
 *   results   ::= result (',' result)*      result ::= %id (':' int)?
 *   generic   ::= '(' operands ')' ('(' region (',' region)* ')')?
 *                 attr-dict? ':' function-type
 *   region    ::= '{' ('^' id ('(' arg (',' arg)* ')')? ':')? op* '}'
 *
 * The first error stops the parse: it is reported once, located, and every
 * parse function returns TL_FAILURE up to the caller. Nesting is bounded so
 * that hostile input cannot exhaust the stack.
 *
 * Template expressions: inside an op whose parser installed a template
 * environment (tl.kernel), `{expr}` stands for an integer in a shape
 * dimension, an integer read by tl_parse_int, and anywhere inside the raw
 * body of a dialect attribute (a layout). The parser finds the braces, the
 * environment evaluates the text between them, and the rest of the parse
 * sees the number: the IR holds only concrete types. An alias whose body
 * has a template expression (or uses such an alias) is kept as text and
 * parsed again at each use, with the environment of that use. */
#include "float_util.h"
#include "ir_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DEPTH = 200 };

typedef enum TokKind {
  T_EOF,
  T_IDENT,  /* bare identifier */
  T_VALUE,  /* %name (text without '%') */
  T_BLOCK,  /* ^name */
  T_SYMBOL, /* @name or @"string" (text is the name) */
  T_HASH,   /* #name */
  T_BANG,   /* !name */
  T_INT,
  T_FLOAT,
  T_STRING, /* text is the raw literal without quotes */
  T_PUNCT,
} TokKind;

typedef struct Tok {
  TokKind kind;
  const char *p; /* start of the token's text */
  size_t n;
  TlLoc loc;
  const char *start; /* start of the whole token in the source */
} Tok;

/* A name in scope: one value, or a group of results `%g:N`. */
typedef struct Binding {
  const char *name; /* interned */
  TlValue **vals;
  unsigned n;
} Binding;

typedef TL_VEC(TlNamedAttr) NamedAttrVec;

typedef struct Alias {
  const char *name; /* interned, without the sigil */
  bool is_type;
  TlAttr *attr;     /* attribute alias, unless templated */
  TlType *type;     /* type alias, unless templated */
  /* Templated: the source text of the value, parsed at each use. */
  const char *text;
  size_t len;
  unsigned line;
  const char *line_start;
} Alias;

/* A template expression evaluated for the op being parsed, for the notes
 * of a later error. */
typedef struct TmplUse {
  TlLoc loc;
  const char *text; /* scratch: the braces and what they hold */
  int64_t value;
  const char *names; /* scratch: "BM = 16, BN = 8", the names it read */
} TmplUse;

/* A substituted part of the raw body last returned: bytes [out, out_end)
 * of the returned text replace bytes [src, src_end) of the source. */
typedef struct RawSub {
  size_t out, out_end, src, src_end;
} RawSub;

struct TlParser {
  TlContext *ctx;
  const char *file;
  const char *src, *end, *cur;
  unsigned line;
  const char *line_start;
  Tok tok;
  TlModule *module;
  bool failed;
  unsigned depth;
  TL_VEC(Binding) bindings;
  TL_VEC(size_t) scopes;    /* bindings.len at each region entry */
  TL_VEC(size_t) isolation; /* bindings.len at each isolated region entry */
  TL_VEC(Alias) aliases;
  size_t alias_limit;       /* aliases visible: the first alias_limit */
  unsigned expansions;      /* templated alias expansions so far */
  const TlTemplateEnv *env; /* template environment, or NULL */
  TL_VEC(TmplUse) uses;
  const char *raw_src; /* the raw body last returned: its source text */
  TlLoc raw_loc;
  TL_VEC(RawSub) raw_subs;
  TlArena scratch;
};

/* Hostile input could nest templated aliases so that each use expands
 * many; the bound keeps the work linear in practice. */
enum { MAX_EXPANSIONS = 100000, MAX_USE_NOTES = 4 };

/*===--- Diagnostics -----------------------------------------------------===*/

TlContext *tl_parser_context(TlParser *p) { return p->ctx; }
TlLoc tl_parser_loc(TlParser *p) { return p->tok.loc; }

void tl_parser_error(TlParser *p, TlLoc loc, const char *fmt, ...) {
  if (p->failed)
    return;
  p->failed = true;
  va_list ap;
  va_start(ap, fmt);
  tl_diag_vemit(p->ctx->diag, TL_DIAG_ERROR, loc, fmt, ap);
  va_end(ap);
  /* The values that made this instance: an error may come from them. */
  for (size_t i = 0; i < p->uses.len && i < MAX_USE_NOTES; i++) {
    const TmplUse *u = &p->uses.data[i];
    tl_emit_note(p->ctx, u->loc, "template expression '%s' is %lld%s%s",
                 u->text, (long long)u->value, u->names[0] ? " with " : "",
                 u->names);
  }
}

const TlTemplateEnv *tl_parser_set_template_env(TlParser *p,
                                                const TlTemplateEnv *env) {
  const TlTemplateEnv *old = p->env;
  p->env = env;
  return old;
}

static TlResult fail(TlParser *p, const char *fmt, const char *arg) {
  tl_parser_error(p, p->tok.loc, fmt, arg);
  return TL_FAILURE;
}

/*===--- Lexer -----------------------------------------------------------===*/

static bool id_start(int c) { return isalpha(c) || c == '_'; }
static bool id_char(int c) {
  return isalnum(c) || c == '_' || c == '$' || c == '.';
}

static TlLoc loc_at(TlParser *p, const char *q) {
  TlLoc l = {p->file, p->line, (uint32_t)(q - p->line_start) + 1};
  return l;
}

/* The location of text + off, text starting at start (text may span
 * lines). */
static TlLoc text_loc(TlLoc start, const char *text, size_t off) {
  TlLoc l = start;
  for (size_t i = 0; i < off; i++) {
    if (text[i] == '\n') {
      l.line++;
      l.col = 1;
    } else {
      l.col++;
    }
  }
  return l;
}

/* The end of the template expression opening at q ('{'): the matching
 * '}', or NULL when there is none before end (or before a newline when
 * one_line). */
static const char *brace_end(const char *q, const char *end, bool one_line) {
  int depth = 0;
  for (; q < end; q++) {
    if (*q == '{')
      depth++;
    else if (*q == '}' && --depth == 0)
      return q;
    else if (*q == '\n' && one_line)
      return NULL;
  }
  return NULL;
}

/* Evaluates the template expression [open, close] ('{' to '}') at loc,
 * through the environment; records it for the notes of a later error. */
static TlResult template_value(TlParser *p, const char *open,
                               const char *close, TlLoc loc, int64_t *out) {
  size_t n = (size_t)(close - open) + 1;
  const char *shown = tl_arena_strndup(&p->scratch, open, n < 60 ? n : 60);
  if (n >= 60)
    shown = tl_arena_printf(&p->scratch, "%s...", shown);
  if (!p->env) {
    tl_parser_error(p, loc,
                    "template expression '%s' outside a tl.kernel: only a "
                    "kernel's template parameters can be used",
                    shown);
    return TL_FAILURE;
  }
  TlErr err;
  size_t off = 0;
  TlStr names = {0};
  bool ok =
      p->env->eval(p->env->user, open + 1, n - 2, out, &names, &err, &off);
  const char *nm = tl_arena_strndup(&p->scratch, names.data ? names.data : "",
                                    names.len);
  tl_str_free(&names);
  if (!ok) {
    tl_parser_error(p, text_loc(loc, open, off + 1),
                    "invalid template expression '%s': %s", shown, err.msg);
    return TL_FAILURE;
  }
  TmplUse u = {loc, shown, *out, nm};
  tl_vec_push(&p->uses, u);
  return TL_SUCCESS;
}

/* The type template parameter `{NAME}` [open, close] names, at loc. */
static TlResult template_type(TlParser *p, const char *open,
                              const char *close, TlLoc loc, TlType **out) {
  size_t n = (size_t)(close - open) + 1;
  if (!p->env || !p->env->type) {
    tl_parser_error(p, loc,
                    "template expression '%.*s' outside a tl.kernel: only a "
                    "kernel's template parameters can be used",
                    (int)(n < 60 ? n : 60), open);
    return TL_FAILURE;
  }
  TlErr err;
  *out = p->env->type(p->env->user, open + 1, n - 2, &err);
  if (!*out) {
    tl_parser_error(p, loc, "invalid type '%.*s': %s", (int)(n < 60 ? n : 60),
                    open, err.msg);
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

static void skip_space(TlParser *p) {
  while (p->cur < p->end) {
    char c = *p->cur;
    if (c == '\n') {
      p->cur++;
      p->line++;
      p->line_start = p->cur;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      p->cur++;
    } else if (c == '/' && p->cur + 1 < p->end && p->cur[1] == '/') {
      while (p->cur < p->end && *p->cur != '\n')
        p->cur++;
    } else {
      break;
    }
  }
}

static const char *const puncts[] = {
    "->", "(", ")", "[", "]", "{", "}", "<", ">", ",", ":", "=",
    "*",  "?", "+", "-", "/", "%", "#", "@", "!", "^", NULL};

static void lex(TlParser *p) {
  skip_space(p);
  Tok *t = &p->tok;
  const char *s = p->cur;
  t->start = s;
  t->loc = loc_at(p, s);
  t->p = s;
  t->n = 0;
  if (s >= p->end) {
    t->kind = T_EOF;
    return;
  }
  unsigned char c = (unsigned char)*s;
  const char *q = s;
  if (id_start(c)) {
    while (q < p->end && id_char((unsigned char)*q))
      q++;
    t->kind = T_IDENT;
    t->n = (size_t)(q - s);
    p->cur = q;
    return;
  }
  if ((c == '%' || c == '^' || c == '#' || c == '!' || c == '@') &&
      q + 1 < p->end) {
    unsigned char d = (unsigned char)q[1];
    if (c == '@' && d == '"') {
      /* @"quoted symbol" */
      const char *r = q + 2;
      while (r < p->end && *r != '"' && *r != '\n')
        r += (*r == '\\' && r + 1 < p->end) ? 2 : 1;
      if (r < p->end && *r == '"') {
        t->kind = T_SYMBOL;
        t->p = q + 2;
        t->n = (size_t)(r - (q + 2));
        p->cur = r + 1;
        return;
      }
    }
    bool ok = (c == '%' || c == '^') ? (isalnum(d) || d == '_' || d == '$')
                                     : id_start(d);
    if (ok) {
      q++;
      while (q < p->end && id_char((unsigned char)*q))
        q++;
      t->kind = c == '%'   ? T_VALUE
                : c == '^' ? T_BLOCK
                : c == '#' ? T_HASH
                : c == '!' ? T_BANG
                           : T_SYMBOL;
      t->p = s + 1;
      t->n = (size_t)(q - s - 1);
      p->cur = q;
      return;
    }
  }
  if (isdigit(c)) {
    if (c == '0' && q + 1 < p->end && (q[1] == 'x' || q[1] == 'X') &&
        q + 2 < p->end && isxdigit((unsigned char)q[2])) {
      q += 2;
      while (q < p->end && isxdigit((unsigned char)*q))
        q++;
      t->kind = T_INT;
    } else {
      while (q < p->end && isdigit((unsigned char)*q))
        q++;
      t->kind = T_INT;
      if (q + 1 < p->end && *q == '.' && isdigit((unsigned char)q[1])) {
        q++;
        while (q < p->end && isdigit((unsigned char)*q))
          q++;
        t->kind = T_FLOAT;
      }
      if (q < p->end && (*q == 'e' || *q == 'E')) {
        const char *r = q + 1;
        if (r < p->end && (*r == '+' || *r == '-'))
          r++;
        if (r < p->end && isdigit((unsigned char)*r)) {
          while (r < p->end && isdigit((unsigned char)*r))
            r++;
          q = r;
          t->kind = T_FLOAT;
        }
      }
    }
    t->n = (size_t)(q - s);
    p->cur = q;
    return;
  }
  if (c == '"') {
    q++;
    while (q < p->end && *q != '"' && *q != '\n')
      q += (*q == '\\' && q + 1 < p->end) ? 2 : 1;
    if (q >= p->end || *q != '"') {
      t->kind = T_EOF;
      tl_parser_error(p, t->loc, "unterminated string literal");
      p->cur = p->end;
      return;
    }
    t->kind = T_STRING;
    t->p = s + 1;
    t->n = (size_t)(q - s - 1);
    p->cur = q + 1;
    return;
  }
  for (const char *const *pp = puncts; *pp; pp++) {
    size_t n = strlen(*pp);
    if ((size_t)(p->end - s) >= n && memcmp(s, *pp, n) == 0) {
      t->kind = T_PUNCT;
      t->n = n;
      p->cur = s + n;
      return;
    }
  }
  t->kind = T_EOF;
  if (isprint(c))
    tl_parser_error(p, t->loc, "unexpected character '%c'", c);
  else
    tl_parser_error(p, t->loc, "unexpected byte 0x%02X", c);
  p->cur = p->end;
}

/* Restarts lexing at q (used to split `16x8xf32`). Only called with q on
 * the current line. */
static void relex_at(TlParser *p, const char *q) {
  p->cur = q;
  lex(p);
}

static bool tok_is(TlParser *p, TokKind k, const char *text) {
  return p->tok.kind == k && strlen(text) == p->tok.n &&
         memcmp(p->tok.p, text, p->tok.n) == 0;
}

static const char *tok_intern(TlParser *p) {
  return tl_context_intern(p->ctx, p->tok.p, p->tok.n);
}

/* A printable rendering of the current token for messages. */
static const char *tok_text(TlParser *p) {
  if (p->tok.kind == T_EOF)
    return "end of input";
  size_t n = (size_t)(p->cur - p->tok.start);
  if (n > 40)
    n = 40;
  char *s = tl_arena_strndup(&p->scratch, p->tok.start, n);
  for (char *c = s; *c; c++)
    if (!isprint((unsigned char)*c))
      *c = '?';
  return tl_arena_printf(&p->scratch, "'%s'", s);
}

/*===--- Token-level API -------------------------------------------------===*/

bool tl_parser_peek_punct(TlParser *p, const char *punct) {
  return tok_is(p, T_PUNCT, punct);
}

/* A template expression is told from an attribute dictionary by what
 * follows the closing brace: a custom form that reads `{expr} : type`
 * never has a dictionary directly before its ':'. */
bool tl_parser_peek_template_int(TlParser *p) {
  if (p->failed || !tok_is(p, T_PUNCT, "{"))
    return false;
  const char *close = brace_end(p->tok.start, p->end, true);
  if (!close)
    return false;
  const char *q = close + 1;
  while (q < p->end && (*q == ' ' || *q == '\t'))
    q++;
  return q < p->end && *q == ':';
}

bool tl_parse_optional_punct(TlParser *p, const char *punct) {
  if (p->failed || !tok_is(p, T_PUNCT, punct))
    return false;
  lex(p);
  return true;
}

TlResult tl_parse_punct(TlParser *p, const char *punct) {
  if (tl_parse_optional_punct(p, punct))
    return TL_SUCCESS;
  if (!p->failed)
    tl_parser_error(p, p->tok.loc, "expected '%s', found %s", punct,
                    tok_text(p));
  return TL_FAILURE;
}

bool tl_parse_optional_keyword(TlParser *p, const char *kw) {
  if (p->failed || !tok_is(p, T_IDENT, kw))
    return false;
  lex(p);
  return true;
}

TlResult tl_parse_keyword(TlParser *p, const char *kw) {
  if (tl_parse_optional_keyword(p, kw))
    return TL_SUCCESS;
  if (!p->failed)
    tl_parser_error(p, p->tok.loc, "expected '%s', found %s", kw, tok_text(p));
  return TL_FAILURE;
}

bool tl_parser_peek_identifier(TlParser *p, const char **out) {
  if (p->tok.kind != T_IDENT)
    return false;
  if (out)
    *out = tok_intern(p);
  return true;
}

TlResult tl_parse_identifier(TlParser *p, const char **out) {
  if (p->failed)
    return TL_FAILURE;
  if (p->tok.kind != T_IDENT)
    return fail(p, "expected identifier, found %s", tok_text(p));
  *out = tok_intern(p);
  lex(p);
  return TL_SUCCESS;
}

bool tl_parser_peek_operand(TlParser *p) { return p->tok.kind == T_VALUE; }

/* An integer token's magnitude (tl_int_literal: decimal, or 0x hex);
 * false if it exceeds UINT64_MAX. */
static bool parse_magnitude(const Tok *t, uint64_t *out) {
  TlIntLit lit;
  if (tl_int_literal(t->p, t->n, &lit) != TL_INT_OK)
    return false;
  *out = lit.mag;
  return true;
}

TlResult tl_parse_int(TlParser *p, int64_t *out) {
  if (p->failed)
    return TL_FAILURE;
  if (tok_is(p, T_PUNCT, "{")) {
    const char *close = brace_end(p->tok.start, p->end, true);
    if (!close)
      return fail(p, "unterminated template expression%s", "");
    if (TL_FAILED(template_value(p, p->tok.start, close, p->tok.loc, out)))
      return TL_FAILURE;
    relex_at(p, close + 1);
    return TL_SUCCESS;
  }
  bool neg = tl_parse_optional_punct(p, "-");
  if (p->tok.kind != T_INT)
    return fail(p, "expected integer, found %s", tok_text(p));
  uint64_t m;
  if (!parse_magnitude(&p->tok, &m) ||
      m > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
    return fail(p, "integer %s is out of range", tok_text(p));
  *out = neg ? (int64_t)(0 - m) : (int64_t)m;
  lex(p);
  return TL_SUCCESS;
}

/* Decodes escapes (\n \t \" \\ and \XX hex) into scratch memory. */
static TlResult unescape(TlParser *p, const char **out, size_t *len) {
  const Tok *t = &p->tok;
  char *buf = tl_arena_alloc(&p->scratch, t->n + 1);
  size_t n = 0;
  for (size_t i = 0; i < t->n; i++) {
    char c = t->p[i];
    if (c != '\\') {
      buf[n++] = c;
      continue;
    }
    if (++i >= t->n)
      break;
    c = t->p[i];
    if (c == 'n')
      buf[n++] = '\n';
    else if (c == 't')
      buf[n++] = '\t';
    else if (c == '"' || c == '\\')
      buf[n++] = c;
    else if (i + 1 < t->n && isxdigit((unsigned char)c) &&
             isxdigit((unsigned char)t->p[i + 1])) {
      char hex[3] = {c, t->p[i + 1], 0};
      buf[n++] = (char)strtol(hex, NULL, 16);
      i++;
    } else {
      TlLoc l = t->loc;
      l.col += (uint32_t)i + 1;
      tl_parser_error(p, l, "unknown escape sequence '\\%c' in string",
                      isprint((unsigned char)c) ? c : '?');
      return TL_FAILURE;
    }
  }
  buf[n] = 0;
  *out = buf;
  *len = n;
  return TL_SUCCESS;
}

TlResult tl_parse_string(TlParser *p, const char **out, size_t *len) {
  if (p->failed)
    return TL_FAILURE;
  if (p->tok.kind != T_STRING)
    return fail(p, "expected string literal, found %s", tok_text(p));
  if (TL_FAILED(unescape(p, out, len)))
    return TL_FAILURE;
  lex(p);
  return TL_SUCCESS;
}

TlResult tl_parse_symbol_name(TlParser *p, const char **out) {
  if (p->failed)
    return TL_FAILURE;
  if (p->tok.kind != T_SYMBOL)
    return fail(p, "expected symbol name (@name), found %s", tok_text(p));
  const char *s;
  size_t n;
  if (TL_FAILED(unescape(p, &s, &n)))
    return TL_FAILURE;
  if (memchr(s, 0, n))
    return fail(p, "symbol name contains a NUL byte%s", "");
  *out = tl_context_intern(p->ctx, s, n);
  lex(p);
  return TL_SUCCESS;
}

/* The closer matching the opener at q ('<' or '('), or NULL when there is
 * none before end. Template expressions are skipped whole; a '(' body
 * counts only () and [], so that comparisons can stand in it. */
static const char *body_end(const char *q, const char *end) {
  bool angle = *q == '<';
  int depth = 1;
  for (q++; q < end; q++) {
    char c = *q;
    if (c == '{') {
      q = brace_end(q, end, false);
      if (!q)
        return NULL;
    } else if (c == '(' || c == '[' || (angle && c == '<')) {
      depth++;
    } else if ((c == ')' || c == ']' || (angle && c == '>')) && --depth == 0) {
      return q;
    }
  }
  return NULL;
}

/* Moves the lexer to q, later in the source, counting the lines passed. */
static void advance_to(TlParser *p, const char *q) {
  for (const char *r = p->cur; r < q; r++)
    if (*r == '\n') {
      p->line++;
      p->line_start = r + 1;
    }
  p->cur = q;
  lex(p);
}

/* Replaces each template expression of an angle body by its value. */
static TlResult substitute(TlParser *p, const char **text, size_t *len) {
  TlStr buf = {0};
  const char *t = *text;
  for (size_t i = 0; i < *len;) {
    if (t[i] != '{') {
      tl_str_putc(&buf, t[i++]);
      continue;
    }
    /* body_end skipped this expression whole: it closes inside. */
    const char *close = brace_end(t + i, t + *len, false);
    int64_t v;
    if (TL_FAILED(template_value(p, t + i, close,
                                 text_loc(p->raw_loc, t, i), &v))) {
      tl_str_free(&buf);
      return TL_FAILURE;
    }
    RawSub r = {buf.len, 0, i, (size_t)(close + 1 - t)};
    tl_str_printf(&buf, "%lld", (long long)v);
    r.out_end = buf.len;
    tl_vec_push(&p->raw_subs, r);
    i = r.src_end;
  }
  *text = tl_arena_strndup(&p->scratch, buf.data ? buf.data : "", buf.len);
  *len = buf.len;
  tl_str_free(&buf);
  return TL_SUCCESS;
}

TlResult tl_parse_raw_body(TlParser *p, const char **text, size_t *len,
                           TlLoc *loc) {
  if (p->failed)
    return TL_FAILURE;
  if (!tok_is(p, T_PUNCT, "<") && !tok_is(p, T_PUNCT, "("))
    return fail(p, "expected '<' or '(', found %s", tok_text(p));
  const char *open = p->tok.start;
  const char *close = body_end(open, p->end);
  if (!close) {
    tl_parser_error(p, p->tok.loc, "unbalanced '%c'", *open);
    return TL_FAILURE;
  }
  *text = open + 1;
  *len = (size_t)(close - *text);
  p->raw_src = *text;
  p->raw_loc = loc_at(p, *text);
  p->raw_subs.len = 0;
  if (loc)
    *loc = p->raw_loc;
  bool templated = *open == '<' && memchr(*text, '{', *len);
  /* Newlines are allowed inside and keep line numbers right. */
  advance_to(p, close + 1);
  if (templated && TL_FAILED(substitute(p, text, len)))
    return TL_FAILURE;
  return TL_SUCCESS;
}

TlLoc tl_parser_raw_loc(TlParser *p, size_t off) {
  size_t src = off;
  for (size_t i = 0; i < p->raw_subs.len; i++) {
    const RawSub *r = &p->raw_subs.data[i];
    if (off < r->out)
      break;
    if (off < r->out_end) {
      src = r->src;
      break;
    }
    src = r->src_end + (off - r->out_end);
  }
  return text_loc(p->raw_loc, p->raw_src, src);
}

/*===--- Values ----------------------------------------------------------===*/

TlResult tl_parse_operand(TlParser *p, TlOperandRef *out) {
  if (p->failed)
    return TL_FAILURE;
  if (p->tok.kind != T_VALUE)
    return fail(p, "expected SSA value (%%name), found %s", tok_text(p));
  out->name = tok_intern(p);
  out->loc = p->tok.loc;
  out->index = 0;
  /* `%g#3`: '#' directly followed by digits. */
  if (p->cur < p->end && *p->cur == '#' && p->cur + 1 < p->end &&
      isdigit((unsigned char)p->cur[1])) {
    const char *q = p->cur + 1;
    unsigned long v = 0;
    while (q < p->end && isdigit((unsigned char)*q)) {
      v = v * 10 + (unsigned long)(*q - '0');
      if (v > 1000000)
        break;
      q++;
    }
    if (v > 1000000) {
      tl_parser_error(p, loc_at(p, p->cur), "result number is too large");
      return TL_FAILURE;
    }
    out->index = (unsigned)v;
    p->cur = q;
  }
  lex(p);
  return TL_SUCCESS;
}

/* Lexer state, saved to look ahead and restored to back out. */
typedef struct LexState {
  const char *cur, *line_start;
  unsigned line;
  Tok tok;
} LexState;

static LexState save(TlParser *p) {
  LexState s = {p->cur, p->line_start, p->line, p->tok};
  return s;
}

static void restore(TlParser *p, LexState s) {
  p->cur = s.cur;
  p->line_start = s.line_start;
  p->line = s.line;
  p->tok = s.tok;
}

struct TlParserMark {
  LexState at;
};

TlParserMark *tl_parser_mark(TlParser *p) {
  TlParserMark *m = tl_arena_alloc(&p->scratch, sizeof *m);
  m->at = save(p);
  return m;
}

void tl_parser_rewind(TlParser *p, const TlParserMark *m) {
  if (!p->failed)
    restore(p, m->at);
}

/* After a list of values: is this `=` or `:N =`, i.e. were the values the
 * results of the next op rather than operands? */
static bool at_result_binding(TlParser *p) {
  if (tok_is(p, T_PUNCT, "="))
    return true;
  if (!tok_is(p, T_PUNCT, ":"))
    return false;
  LexState s = save(p);
  lex(p);
  bool yes = false;
  if (p->tok.kind == T_INT) {
    lex(p);
    yes = tok_is(p, T_PUNCT, "=") || tok_is(p, T_PUNCT, ",");
  }
  restore(p, s);
  return yes;
}

TlResult tl_parse_operand_list(TlParser *p, TlOperandRefVec *out) {
  if (p->tok.kind != T_VALUE)
    return p->failed ? TL_FAILURE : TL_SUCCESS;
  LexState start = save(p);
  size_t n0 = out->len;
  do {
    TlOperandRef r;
    if (TL_FAILED(tl_parse_operand(p, &r)))
      return TL_FAILURE;
    tl_vec_push(out, r);
  } while (tl_parse_optional_punct(p, ","));
  /* An op whose operands are optional (return, yield) followed by a new op
   * on the next line: the values name that op's results, so they are not
   * this op's operands. Back out and let the verifier say the terminator
   * is not last. */
  if (!p->failed && at_result_binding(p)) {
    restore(p, start);
    out->len = n0;
  }
  return p->failed ? TL_FAILURE : TL_SUCCESS;
}

static Binding *find_binding(TlParser *p, const char *name, bool *outside) {
  size_t iso = p->isolation.len ? tl_vec_last(&p->isolation) : 0;
  for (size_t i = p->bindings.len; i-- > 0;)
    if (p->bindings.data[i].name == name) {
      *outside = i < iso;
      return &p->bindings.data[i];
    }
  return NULL;
}

TlResult tl_parser_lookup(TlParser *p, const TlOperandRef *ref,
                          TlValue **out) {
  if (p->failed)
    return TL_FAILURE;
  bool outside;
  Binding *b = find_binding(p, ref->name, &outside);
  if (!b) {
    tl_parser_error(p, ref->loc, "use of undefined value '%%%s'", ref->name);
    return TL_FAILURE;
  }
  if (outside) {
    tl_parser_error(p, ref->loc,
                    "use of value '%%%s' defined outside an isolated region",
                    ref->name);
    return TL_FAILURE;
  }
  if (ref->index >= b->n) {
    tl_parser_error(p, ref->loc, "result #%u of '%%%s' does not exist (it has %u)",
                    ref->index, ref->name, b->n);
    return TL_FAILURE;
  }
  *out = b->vals[ref->index];
  return TL_SUCCESS;
}

TlResult tl_parser_resolve(TlParser *p, const TlOperandRef *ref, TlType *type,
                           TlValue **out) {
  if (TL_FAILED(tl_parser_lookup(p, ref, out)))
    return TL_FAILURE;
  if (type && (*out)->type != type) {
    TlStr want = {0}, got = {0};
    tl_type_print(type, &want);
    tl_type_print((*out)->type, &got);
    tl_parser_error(p, ref->loc,
                    "use of value '%%%s' expects type %s, but it has type %s",
                    ref->name, tl_str_cstr(&want), tl_str_cstr(&got));
    tl_str_free(&want);
    tl_str_free(&got);
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

TlResult tl_parser_resolve_operands(TlParser *p, TlOpState *st, unsigned n,
                                    const TlOperandRef *refs, unsigned ntypes,
                                    TlType *const *types) {
  if (ntypes != 1 && ntypes != n) {
    tl_parser_error(p, n ? refs[0].loc : p->tok.loc,
                    "%u operands present, but %u types given", n, ntypes);
    return TL_FAILURE;
  }
  for (unsigned i = 0; i < n; i++) {
    TlValue *v;
    if (TL_FAILED(tl_parser_resolve(p, &refs[i], types[ntypes == 1 ? 0 : i], &v)))
      return TL_FAILURE;
    tl_op_state_add_operand(st, v);
  }
  return TL_SUCCESS;
}

static TlResult define(TlParser *p, const char *name, TlLoc loc,
                       TlValue **vals, unsigned n) {
  bool outside;
  Binding *old = find_binding(p, name, &outside);
  if (old && !outside) {
    tl_parser_error(p, loc, "redefinition of value '%%%s'", name);
    return TL_FAILURE;
  }
  Binding b = {name, tl_arena_memdup(&p->scratch, vals, sizeof *vals * n), n};
  tl_vec_push(&p->bindings, b);
  if (!isdigit((unsigned char)name[0]))
    for (unsigned i = 0; i < n; i++)
      vals[i]->hint = name;
  return TL_SUCCESS;
}

/*===--- Types -----------------------------------------------------------===*/

static TlResult nesting(TlParser *p) {
  if (++p->depth > MAX_DEPTH) {
    tl_parser_error(p, p->tok.loc, "nesting is too deep (more than %d levels)",
                    MAX_DEPTH);
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

static Alias *find_alias(TlParser *p, const char *name, bool is_type) {
  for (size_t i = 0; i < p->aliases.len && i < p->alias_limit; i++)
    if (p->aliases.data[i].name == name &&
        p->aliases.data[i].is_type == is_type)
      return &p->aliases.data[i];
  return NULL;
}

/* Parses the text of a templated alias at its use (the current token),
 * with the template environment of the use. Only the aliases defined
 * before it are visible, as when it was written, so it cannot refer to
 * itself. */
static TlResult expand_alias(TlParser *p, const Alias *a, TlType **ty,
                             TlAttr **at) {
  TlLoc use = p->tok.loc;
  char sigil = a->is_type ? '!' : '#';
  if (!p->env) {
    tl_parser_error(p, use,
                    "alias '%c%s' has template expressions: it can be used "
                    "only inside a tl.kernel",
                    sigil, a->name);
    return TL_FAILURE;
  }
  if (++p->expansions > MAX_EXPANSIONS) {
    tl_parser_error(p, use,
                    "too many expansions of aliases with template "
                    "expressions (more than %d)",
                    MAX_EXPANSIONS);
    return TL_FAILURE;
  }
  size_t limit = p->alias_limit;
  LexState s = save(p);
  p->alias_limit = (size_t)(a - p->aliases.data);
  p->cur = a->text;
  p->line = a->line;
  p->line_start = a->line_start;
  lex(p);
  TlResult r = ty ? tl_parse_type(p, ty) : tl_parse_attr(p, at);
  if (!TL_FAILED(r) && p->tok.start < a->text + a->len) {
    fail(p, "unexpected %s in the value of an alias", tok_text(p));
    r = TL_FAILURE;
  }
  if (TL_FAILED(r))
    tl_emit_note(p->ctx, use, "in alias '%c%s', used here", sigil, a->name);
  p->alias_limit = limit;
  restore(p, s);
  if (!TL_FAILED(r))
    lex(p);
  return r;
}

static TlResult parse_function_results(TlParser *p, TlTypeVec *out);

TlResult tl_parse_type(TlParser *p, TlType **out) {
  if (p->failed || TL_FAILED(nesting(p)))
    return TL_FAILURE;
  TlResult r = TL_FAILURE;
  Tok t = p->tok;
  if (t.kind == T_IDENT) {
    bool bad;
    TlType *ty = tl_type_scalar_named(p->ctx, t.p, t.n, &bad);
    if (ty) {
      *out = ty;
      lex(p);
      r = TL_SUCCESS;
    } else {
      fail(p, bad ? "invalid type %s (see docs/langref.md for the types)"
                  : "expected type, found %s",
           tok_text(p));
    }
  } else if (t.kind == T_BANG) {
    const char *name = tok_intern(p);
    Alias *a = find_alias(p, name, true);
    const TlTypeDef *def = tl_context_type_def(p->ctx, name);
    if (a && a->text) {
      r = expand_alias(p, a, out, NULL);
    } else if (a) {
      *out = a->type;
      lex(p);
      r = TL_SUCCESS;
    } else if (def) {
      lex(p);
      *out = def->parse(p, def);
      r = *out && !p->failed ? TL_SUCCESS : TL_FAILURE;
      if (!*out && !p->failed)
        tl_parser_error(p, t.loc, "invalid type '!%s'", name);
    } else {
      tl_parser_error(p, t.loc, "unknown type '!%s'", name);
    }
  } else if (tok_is(p, T_PUNCT, "{")) {
    /* A type template parameter: `{WT}`. */
    const char *close = brace_end(p->tok.start, p->end, true);
    if (!close)
      fail(p, "unterminated template expression%s", "");
    else if (!TL_FAILED(
                   template_type(p, p->tok.start, close, t.loc, out))) {
      relex_at(p, close + 1);
      r = TL_SUCCESS;
    }
  } else if (tok_is(p, T_PUNCT, "(")) {
    /* Function type. */
    TlTypeVec ins = {0}, outs = {0};
    lex(p);
    if (!tl_parser_peek_punct(p, ")")) {
      do {
        TlType *x;
        if (TL_FAILED(tl_parse_type(p, &x)))
          goto done_fn;
        tl_vec_push(&ins, x);
      } while (tl_parse_optional_punct(p, ","));
    }
    if (TL_FAILED(tl_parse_punct(p, ")")) || TL_FAILED(tl_parse_punct(p, "->")) ||
        TL_FAILED(parse_function_results(p, &outs)))
      goto done_fn;
    *out = tl_type_function(p->ctx, (unsigned)ins.len, ins.data,
                            (unsigned)outs.len, outs.data);
    r = TL_SUCCESS;
  done_fn:
    tl_vec_free(&ins);
    tl_vec_free(&outs);
  } else {
    fail(p, "expected type, found %s", tok_text(p));
  }
  p->depth--;
  return r;
}

/* `type` or `(type, ...)` after `->`. */
static TlResult parse_function_results(TlParser *p, TlTypeVec *out) {
  if (tl_parse_optional_punct(p, "(")) {
    if (tl_parse_optional_punct(p, ")"))
      return TL_SUCCESS;
    do {
      TlType *x;
      if (TL_FAILED(tl_parse_type(p, &x)))
        return TL_FAILURE;
      tl_vec_push(out, x);
    } while (tl_parse_optional_punct(p, ","));
    return tl_parse_punct(p, ")");
  }
  TlType *x;
  if (TL_FAILED(tl_parse_type(p, &x)))
    return TL_FAILURE;
  tl_vec_push(out, x);
  return TL_SUCCESS;
}

TlResult tl_parse_type_list(TlParser *p, TlTypeVec *out) {
  if (tl_parser_peek_punct(p, "(")) {
    /* `(A, B)` is a list unless `->` follows: then it began a function
     * type, the list's first element. */
    LexState s = save(p);
    size_t n0 = out->len;
    lex(p);
    if (!tl_parse_optional_punct(p, ")")) {
      do {
        TlType *x;
        if (TL_FAILED(tl_parse_type(p, &x)))
          return TL_FAILURE;
        tl_vec_push(out, x);
      } while (tl_parse_optional_punct(p, ","));
      if (TL_FAILED(tl_parse_punct(p, ")")))
        return TL_FAILURE;
    }
    if (!tl_parser_peek_punct(p, "->"))
      return TL_SUCCESS;
    restore(p, s);
    out->len = n0;
  }
  do {
    TlType *x;
    if (TL_FAILED(tl_parse_type(p, &x)))
      return TL_FAILURE;
    tl_vec_push(out, x);
  } while (tl_parse_optional_punct(p, ","));
  return TL_SUCCESS;
}

TlResult tl_parse_shape_and_type(TlParser *p, TlDimVec *dims, TlType **elem) {
  /* The lexer reads `16x8xf32` as INT(16) IDENT(x8xf32); walk it by
   * characters: each dimension is digits or '?', followed directly by 'x'. */
  while (!p->failed && (p->tok.kind == T_INT || tok_is(p, T_PUNCT, "?") ||
                        tok_is(p, T_PUNCT, "{"))) {
    int64_t d = -1;
    const char *after = p->tok.p + p->tok.n;
    if (tok_is(p, T_PUNCT, "{")) {
      /* A template expression: `{BM}x16xf16`; without the 'x' after it,
       * the element type: `16x{WT}`. */
      const char *close = brace_end(p->tok.start, p->end, true);
      if (!close)
        return fail(p, "unterminated template expression%s", "");
      if (close + 1 >= p->end || close[1] != 'x')
        break;
      if (TL_FAILED(
              template_value(p, p->tok.start, close, p->tok.loc, &d)))
        return TL_FAILURE;
      if (d < 1 || d > (1ll << 40)) {
        /* The message says it all: no note repeating it. */
        TmplUse u = tl_vec_pop(&p->uses);
        tl_parser_error(p, p->tok.loc,
                        "template expression '%s' is %lld%s%s, not a "
                        "dimension (1..2^40)",
                        u.text, (long long)d, u.names[0] ? " with " : "",
                        u.names);
        return TL_FAILURE;
      }
      after = close + 1;
    } else if (p->tok.kind == T_INT && p->tok.p[0] == '0' && p->tok.n > 1 && p->tok.p[1] == 'x') {
      /* `0x8x...` lexes as the hex number 0x8: in a shape it is the
       * dimension 0 followed by 'x'. */
      d = 0;
      after = p->tok.p + 1;
    } else if (p->tok.kind == T_INT) {
      uint64_t m;
      if (p->tok.p[0] == '0' && p->tok.n > 1 && p->tok.p[1] == 'X')
        return fail(p, "expected dimension, found %s", tok_text(p));
      if (!parse_magnitude(&p->tok, &m) || m > (1ull << 40))
        return fail(p, "dimension %s is too large", tok_text(p));
      d = (int64_t)m;
    }
    if (after >= p->end || *after != 'x') {
      TlLoc l = loc_at(p, after);
      tl_parser_error(p, l, "expected 'x' after dimension in shape");
      return TL_FAILURE;
    }
    if (dims->len >= 64)
      return fail(p, "too many dimensions in shape%s", "");
    tl_vec_push(dims, d);
    relex_at(p, after + 1);
  }
  return tl_parse_type(p, elem);
}

/*===--- Attributes ------------------------------------------------------===*/

static TlResult parse_dict_entries(TlParser *p, NamedAttrVec *out);

static TlResult literal_attr(TlParser *p, Tok t, bool neg, TlType *type,
                             TlAttr **out);

static TlResult number_attr(TlParser *p, TlAttr **out) {
  Tok t = p->tok;
  bool neg = false;
  if (tok_is(p, T_PUNCT, "-")) {
    neg = true;
    lex(p);
    t = p->tok;
  }
  if (t.kind != T_INT && t.kind != T_FLOAT)
    return fail(p, "expected number after '-', found %s", tok_text(p));
  lex(p);
  TlType *type = NULL;
  if (tl_parse_optional_punct(p, ":")) {
    if (TL_FAILED(tl_parse_type(p, &type)))
      return TL_FAILURE;
  } else {
    type = t.kind == T_INT ? tl_type_int(p->ctx, 64, true) : p->ctx->f64;
  }
  return literal_attr(p, t, neg, type, out);
}

TlResult tl_parse_literal(TlParser *p, TlLiteral *out) {
  if (p->failed)
    return TL_FAILURE;
  memset(out, 0, sizeof *out);
  out->loc = p->tok.loc;
  if (tok_is(p, T_IDENT, "true") || tok_is(p, T_IDENT, "false")) {
    out->is_bool = true;
    out->bool_value = tok_is(p, T_IDENT, "true");
    lex(p);
    return TL_SUCCESS;
  }
  out->neg = tl_parse_optional_punct(p, "-");
  if (p->tok.kind != T_INT && p->tok.kind != T_FLOAT)
    return fail(p, "expected a number, found %s", tok_text(p));
  out->is_float = p->tok.kind == T_FLOAT;
  out->text = p->tok.p;
  out->len = p->tok.n;
  out->loc = p->tok.loc;
  lex(p);
  return TL_SUCCESS;
}

TlResult tl_literal_to_attr(TlParser *p, const TlLiteral *lit, TlType *type,
                            TlAttr **out) {
  if (p->failed)
    return TL_FAILURE;
  if (lit->is_bool) {
    if (!tl_type_is_bool(type)) {
      tl_parser_error(p, lit->loc, "true and false are values of i1");
      return TL_FAILURE;
    }
    *out = tl_attr_bool(p->ctx, lit->bool_value);
    return TL_SUCCESS;
  }
  if (!tl_type_is_scalar(type)) {
    tl_parser_error(p, lit->loc, "a literal needs an integer or float type");
    return TL_FAILURE;
  }
  Tok t = {lit->is_float ? T_FLOAT : T_INT, lit->text, lit->len, lit->loc,
           lit->text};
  return literal_attr(p, t, lit->neg, type, out);
}

static TlResult literal_attr(TlParser *p, Tok t, bool neg, TlType *type,
                             TlAttr **out) {
  char buf[128];
  if (t.n >= sizeof buf) {
    tl_parser_error(p, t.loc, "numeric literal is too long");
    return TL_FAILURE;
  }
  memcpy(buf, t.p, t.n);
  buf[t.n] = 0;
  bool hex = t.kind == T_INT && t.n > 2 && (buf[1] == 'x' || buf[1] == 'X');
  if (tl_type_is_int(type)) {
    if (t.kind == T_FLOAT) {
      tl_parser_error(p, t.loc, "floating-point literal for integer type");
      return TL_FAILURE;
    }
    uint64_t m;
    if (!parse_magnitude(&t, &m)) {
      tl_parser_error(p, t.loc, "integer literal is out of range");
      return TL_FAILURE;
    }
    unsigned w = type->width;
    bool fits;
    if (type->is_bool)
      fits = !neg && m <= 1;
    else if (type->is_signed)
      fits = neg ? m <= (1ull << (w - 1)) : m < (1ull << (w - 1)) || (hex && (w == 64 || m < (1ull << w)));
    else
      fits = !neg && (w == 64 || m < (1ull << w));
    if (!fits) {
      TlStr ts = {0};
      tl_type_print(type, &ts);
      tl_parser_error(p, t.loc, "integer literal %s%s does not fit in %s",
                      neg ? "-" : "", buf, tl_str_cstr(&ts));
      tl_str_free(&ts);
      return TL_FAILURE;
    }
    *out = tl_attr_int(p->ctx, type, neg ? (int64_t)(0 - m) : (int64_t)m);
    return TL_SUCCESS;
  }
  if (!tl_type_is_float(type)) {
    tl_parser_error(p, t.loc, "numeric literal needs an integer or float type");
    return TL_FAILURE;
  }
  double v;
  if (hex) {
    /* A hexadecimal literal of a float type is its bit pattern. */
    uint64_t bits;
    bool valid;
    if (neg || !parse_magnitude(&t, &bits)) {
      tl_parser_error(p, t.loc, "invalid float bit pattern");
      return TL_FAILURE;
    }
    v = tl_float_from_bits(bits, type->exp, type->man, &valid);
    if (!valid) {
      tl_parser_error(p, t.loc, "bit pattern %s is wider than the float type",
                      buf);
      return TL_FAILURE;
    }
  } else {
    bool overflow;
    double r = tl_float_round_decimal(buf, neg, type->exp, type->man, &overflow);
    if (overflow || isinf(strtod(buf, NULL))) {
      TlStr ts = {0};
      tl_type_print(type, &ts);
      tl_parser_error(p, t.loc, "float literal %s%s is out of range for %s",
                      neg ? "-" : "", buf, tl_str_cstr(&ts));
      tl_str_free(&ts);
      return TL_FAILURE;
    }
    v = r;
  }
  *out = tl_attr_float(p->ctx, type, v);
  return TL_SUCCESS;
}

/* Whether the `{...}` at the current token is a template expression, not
 * an attribute dictionary: inside a templated kernel, braces on one line
 * that do not open `{}`, `{name = ...}`, `{name, ...}` or `{"name" ...}`,
 * or that hold a lone name which is an integer template parameter
 * (`{count = {RP}}`; a dictionary of one unit attribute named as a
 * parameter is read as the parameter). */
static bool brace_is_template(TlParser *p) {
  if (!p->env || !tok_is(p, T_PUNCT, "{"))
    return false;
  const char *close = brace_end(p->tok.start, p->end, true);
  if (!close)
    return false;
  const char *q = p->tok.start + 1;
  while (q < close && (*q == ' ' || *q == '\t'))
    q++;
  if (q == close || *q == '"')
    return false;
  if (!(isalpha((unsigned char)*q) || *q == '_'))
    return true;
  const char *id = q;
  while (q < close && (isalnum((unsigned char)*q) || *q == '_' || *q == '.'))
    q++;
  size_t idn = (size_t)(q - id);
  while (q < close && (*q == ' ' || *q == '\t'))
    q++;
  if (q < close)
    return *q != '=' && *q != ',';
  int64_t v;
  TlErr err;
  size_t off = 0;
  TlStr names = {0};
  bool ok = p->env->eval(p->env->user, id, idn, &v, &names, &err, &off);
  tl_str_free(&names);
  return ok;
}

TlResult tl_parse_attr(TlParser *p, TlAttr **out) {
  if (p->failed || TL_FAILED(nesting(p)))
    return TL_FAILURE;
  TlResult r = TL_FAILURE;
  Tok t = p->tok;
  if (t.kind == T_INT || t.kind == T_FLOAT || tok_is(p, T_PUNCT, "-")) {
    r = number_attr(p, out);
  } else if (tok_is(p, T_IDENT, "true") || tok_is(p, T_IDENT, "false")) {
    *out = tl_attr_bool(p->ctx, tok_is(p, T_IDENT, "true"));
    lex(p);
    r = TL_SUCCESS;
  } else if (tok_is(p, T_IDENT, "unit")) {
    *out = p->ctx->unit;
    lex(p);
    r = TL_SUCCESS;
  } else if (t.kind == T_STRING) {
    const char *s;
    size_t n;
    if (!TL_FAILED(tl_parse_string(p, &s, &n))) {
      *out = tl_attr_string(p->ctx, s, n);
      r = TL_SUCCESS;
    }
  } else if (t.kind == T_SYMBOL) {
    const char *s;
    if (!TL_FAILED(tl_parse_symbol_name(p, &s))) {
      *out = tl_attr_symbol(p->ctx, s);
      r = TL_SUCCESS;
    }
  } else if (tok_is(p, T_PUNCT, "[")) {
    TL_VEC(TlAttr *) elems = {0};
    lex(p);
    if (!tl_parser_peek_punct(p, "]")) {
      do {
        TlAttr *e;
        if (TL_FAILED(tl_parse_attr(p, &e)))
          break;
        tl_vec_push(&elems, e);
      } while (tl_parse_optional_punct(p, ","));
    }
    if (!TL_FAILED(tl_parse_punct(p, "]"))) {
      *out = tl_attr_array(p->ctx, (unsigned)elems.len, elems.data);
      r = TL_SUCCESS;
    }
    tl_vec_free(&elems);
  } else if (brace_is_template(p)) {
    const char *close = brace_end(p->tok.start, p->end, true);
    int64_t v;
    if (!TL_FAILED(template_value(p, p->tok.start, close, t.loc, &v))) {
      relex_at(p, close + 1);
      TlType *type = tl_type_int(p->ctx, 64, true);
      if (!tl_parse_optional_punct(p, ":") || !TL_FAILED(tl_parse_type(p, &type))) {
        if (!tl_type_is_int(type))
          tl_parser_error(p, t.loc, "a template expression's attribute must have an integer type");
        else
          *out = tl_attr_int(p->ctx, type, v);
        r = p->failed ? TL_FAILURE : TL_SUCCESS;
      }
    }
  } else if (tok_is(p, T_PUNCT, "{")) {
    NamedAttrVec entries = {0};
    if (!TL_FAILED(parse_dict_entries(p, &entries))) {
      *out = tl_attr_dict(p->ctx, (unsigned)entries.len, entries.data);
      r = TL_SUCCESS;
    }
    tl_vec_free(&entries);
  } else if (t.kind == T_HASH) {
    const char *name = tok_intern(p);
    Alias *a = find_alias(p, name, false);
    const TlAttrDef *def = tl_context_attr_def(p->ctx, name);
    if (a && a->text) {
      r = expand_alias(p, a, NULL, out);
    } else if (a) {
      *out = a->attr;
      lex(p);
      r = TL_SUCCESS;
    } else if (def) {
      lex(p);
      *out = def->parse(p, def);
      r = *out && !p->failed ? TL_SUCCESS : TL_FAILURE;
      if (!*out && !p->failed)
        tl_parser_error(p, t.loc, "invalid attribute '#%s'", name);
    } else {
      tl_parser_error(p, t.loc, "unknown attribute '#%s'", name);
    }
  } else {
    TlType *ty;
    if (t.kind == T_IDENT || t.kind == T_BANG || tok_is(p, T_PUNCT, "(")) {
      if (!TL_FAILED(tl_parse_type(p, &ty))) {
        *out = tl_attr_type(p->ctx, ty);
        r = TL_SUCCESS;
      }
    } else {
      fail(p, "expected attribute, found %s", tok_text(p));
    }
  }
  p->depth--;
  return r;
}

/* `{name = attr, name, "quoted" = attr}`; rejects duplicate names. */
static TlResult parse_dict_entries(TlParser *p, NamedAttrVec *out) {
  if (TL_FAILED(tl_parse_punct(p, "{")))
    return TL_FAILURE;
  if (tl_parse_optional_punct(p, "}"))
    return TL_SUCCESS;
  do {
    TlLoc l = p->tok.loc;
    const char *name;
    if (p->tok.kind == T_IDENT) {
      name = tok_intern(p);
      lex(p);
    } else if (p->tok.kind == T_STRING) {
      size_t n;
      if (TL_FAILED(tl_parse_string(p, &name, &n)))
        return TL_FAILURE;
      if (n == 0 || memchr(name, 0, n)) {
        tl_parser_error(p, l, "attribute name must be non-empty");
        return TL_FAILURE;
      }
      name = tl_context_intern(p->ctx, name, n);
    } else {
      return fail(p, "expected attribute name, found %s", tok_text(p));
    }
    for (size_t i = 0; i < out->len; i++)
      if (out->data[i].name == name) {
        tl_parser_error(p, l, "duplicate attribute '%s'", name);
        return TL_FAILURE;
      }
    TlAttr *a = p->ctx->unit;
    if (tl_parse_optional_punct(p, "=") && TL_FAILED(tl_parse_attr(p, &a)))
      return TL_FAILURE;
    TlNamedAttr na = {name, a};
    tl_vec_push(out, na);
  } while (tl_parse_optional_punct(p, ","));
  return tl_parse_punct(p, "}");
}

TlResult tl_parse_optional_attr_dict(TlParser *p, TlOpState *st) {
  if (!tl_parser_peek_punct(p, "{"))
    return p->failed ? TL_FAILURE : TL_SUCCESS;
  NamedAttrVec entries = {0};
  TlLoc loc = p->tok.loc;
  TlResult r = parse_dict_entries(p, &entries);
  for (size_t i = 0; i < entries.len && !TL_FAILED(r); i++) {
    if (tl_op_state_get_attr(st, entries.data[i].name)) {
      tl_parser_error(p, loc,
                      "attribute '%s' is already set by the op's syntax",
                      entries.data[i].name);
      r = TL_FAILURE;
      break;
    }
    tl_op_state_set_attr(st, entries.data[i].name, entries.data[i].attr);
  }
  tl_vec_free(&entries);
  return r;
}

TlResult tl_parse_typed_operands(TlParser *p, TlOpState *st, bool attrs_first) {
  TlOperandRefVec refs = {0};
  TlTypeVec types = {0};
  TlResult r = TL_FAILURE;
  if (TL_FAILED(tl_parse_operand_list(p, &refs)))
    goto out;
  if (refs.len) {
    if ((attrs_first && TL_FAILED(tl_parse_optional_attr_dict(p, st))) ||
        TL_FAILED(tl_parse_punct(p, ":")) || TL_FAILED(tl_parse_type_list(p, &types)))
      goto out;
    /* One type per value (resolve_operands alone would also take one type
     * for all of them). */
    if (types.len != refs.len) {
      tl_parser_error(p, refs.data[0].loc, "%zu operands present, but %zu types given",
                      refs.len, types.len);
      goto out;
    }
    if (TL_FAILED(tl_parser_resolve_operands(p, st, (unsigned)refs.len, refs.data,
                                             (unsigned)types.len, types.data)))
      goto out;
    if (attrs_first) {
      r = TL_SUCCESS;
      goto out;
    }
  }
  r = tl_parse_optional_attr_dict(p, st);
out:
  tl_vec_free(&refs);
  tl_vec_free(&types);
  return r;
}

TlResult tl_parse_arg_def(TlParser *p, TlArgDef *out) {
  if (TL_FAILED(tl_parse_operand(p, &out->ref)))
    return TL_FAILURE;
  if (out->ref.index) {
    tl_parser_error(p, out->ref.loc, "argument name cannot have a result number");
    return TL_FAILURE;
  }
  if (TL_FAILED(tl_parse_punct(p, ":")))
    return TL_FAILURE;
  return tl_parse_type(p, &out->type);
}

/*===--- Operations and regions ------------------------------------------===*/

static TlResult parse_op(TlParser *p, TlBlock *block);

static void push_scope(TlParser *p, bool isolated) {
  tl_vec_push(&p->scopes, p->bindings.len);
  if (isolated)
    tl_vec_push(&p->isolation, p->bindings.len);
}

static void pop_scope(TlParser *p, bool isolated) {
  p->bindings.len = tl_vec_pop(&p->scopes);
  if (isolated)
    p->isolation.len--;
}

/* Parses `{ ... }` into region r; the entry block's arguments are args
 * (when given) or come from a `^bb0(...)` header. */
static TlResult parse_region_into(TlParser *p, TlRegion *r, unsigned nargs,
                                  const TlArgDef *args, bool isolated,
                                  bool single_block) {
  if (TL_FAILED(nesting(p)))
    return TL_FAILURE;
  TlResult res = TL_FAILURE;
  if (TL_FAILED(tl_parse_punct(p, "{")))
    goto out;
  push_scope(p, isolated);
  /* `{}` (nothing inside, no arguments) is a region without blocks, except
   * for ops whose regions always hold one block (module, func). */
  if (!nargs && !single_block && tl_parser_peek_punct(p, "}")) {
    lex(p);
    res = TL_SUCCESS;
    goto pop;
  }
  TlBlock *b = tl_block_create(p->module);
  tl_region_append_block(r, b);
  for (unsigned i = 0; i < nargs; i++) {
    TlValue *v = tl_block_add_arg(b, args[i].type, args[i].ref.loc);
    if (TL_FAILED(define(p, args[i].ref.name, args[i].ref.loc, &v, 1)))
      goto pop;
  }
  if (p->tok.kind == T_BLOCK) {
    TlLoc l = p->tok.loc;
    lex(p);
    if (tl_parse_optional_punct(p, "(")) {
      if (nargs) {
        tl_parser_error(p, l, "block arguments are already given by the op");
        goto pop;
      }
      if (!tl_parser_peek_punct(p, ")")) {
        do {
          TlArgDef a;
          if (TL_FAILED(tl_parse_arg_def(p, &a)))
            goto pop;
          TlValue *v = tl_block_add_arg(b, a.type, a.ref.loc);
          if (TL_FAILED(define(p, a.ref.name, a.ref.loc, &v, 1)))
            goto pop;
        } while (tl_parse_optional_punct(p, ","));
      }
      if (TL_FAILED(tl_parse_punct(p, ")")))
        goto pop;
    }
    if (TL_FAILED(tl_parse_punct(p, ":")))
      goto pop;
  }
  while (!p->failed && !tl_parser_peek_punct(p, "}")) {
    if (p->tok.kind == T_BLOCK) {
      tl_parser_error(p, p->tok.loc,
                      "a region holds a single block in TL (structured control "
                      "flow only)");
      goto pop;
    }
    if (p->tok.kind == T_EOF) {
      if (!p->failed)
        tl_parser_error(p, p->tok.loc, "expected '}' to close the region");
      goto pop;
    }
    if (TL_FAILED(parse_op(p, b)))
      goto pop;
  }
  if (!TL_FAILED(tl_parse_punct(p, "}")))
    res = TL_SUCCESS;
pop:
  pop_scope(p, isolated);
out:
  p->depth--;
  return res;
}

TlResult tl_parse_region(TlParser *p, TlOpState *st, unsigned nargs,
                         const TlArgDef *args) {
  TlRegion *r = tl_region_create(p->module);
  tl_op_state_add_region(st, r);
  unsigned tr = st->def ? st->def->traits : 0;
  return parse_region_into(p, r, nargs, args, tr & TL_TRAIT_ISOLATED,
                           tr & TL_TRAIT_SINGLE_BLOCK);
}

static TlResult parse_generic(TlParser *p, TlOpState *st) {
  TlOperandRefVec refs = {0};
  TlResult r = TL_FAILURE;
  TlType *fn = NULL;
  if (TL_FAILED(tl_parse_punct(p, "(")) ||
      TL_FAILED(tl_parse_operand_list(p, &refs)) ||
      TL_FAILED(tl_parse_punct(p, ")")))
    goto out;
  if (tl_parse_optional_punct(p, "(")) {
    do {
      if (TL_FAILED(tl_parse_region(p, st, 0, NULL)))
        goto out;
    } while (tl_parse_optional_punct(p, ","));
    if (TL_FAILED(tl_parse_punct(p, ")")))
      goto out;
  }
  if (TL_FAILED(tl_parse_optional_attr_dict(p, st)) ||
      TL_FAILED(tl_parse_punct(p, ":")))
    goto out;
  TlLoc tloc = p->tok.loc;
  if (TL_FAILED(tl_parse_type(p, &fn)))
    goto out;
  if (fn->kind != TL_TYPE_FUNCTION) {
    tl_parser_error(p, tloc, "expected a function type for the generic form");
    goto out;
  }
  if (fn->nin != refs.len) {
    tl_parser_error(p, tloc, "%zu operands present, but the type lists %u",
                    refs.len, fn->nin);
    goto out;
  }
  if (refs.len &&
      TL_FAILED(tl_parser_resolve_operands(p, st, (unsigned)refs.len, refs.data,
                                           fn->nin, fn->types)))
    goto out;
  for (unsigned i = 0; i < fn->nout; i++)
    tl_op_state_add_result(st, fn->types[fn->nin + i]);
  r = TL_SUCCESS;
out:
  tl_vec_free(&refs);
  return r;
}

typedef struct ResultDef {
  const char *name;
  TlLoc loc;
  unsigned count;
} ResultDef;

static TlResult parse_op(TlParser *p, TlBlock *block) {
  TL_VEC(ResultDef) results = {0};
  TlResult r = TL_FAILURE;
  TlOpState st;
  bool have_state = false;
  unsigned nres = 0;
  /* Notes of template expressions speak of the op at hand only. */
  p->uses.len = 0;

  if (p->tok.kind == T_VALUE) {
    do {
      TlOperandRef ref;
      if (TL_FAILED(tl_parse_operand(p, &ref)))
        goto out;
      ResultDef rd = {ref.name, ref.loc, 1};
      if (ref.index) {
        tl_parser_error(p, ref.loc, "a result name cannot have '#%u'", ref.index);
        goto out;
      }
      if (tl_parse_optional_punct(p, ":")) {
        int64_t n;
        TlLoc nl = p->tok.loc;
        if (TL_FAILED(tl_parse_int(p, &n)))
          goto out;
        if (n < 1 || n > 4096) {
          tl_parser_error(p, nl, "result group size must be 1..4096");
          goto out;
        }
        rd.count = (unsigned)n;
      }
      nres += rd.count;
      tl_vec_push(&results, rd);
    } while (tl_parse_optional_punct(p, ","));
    if (TL_FAILED(tl_parse_punct(p, "=")))
      goto out;
  }

  TlLoc loc = p->tok.loc;
  if (p->tok.kind == T_STRING) {
    const char *name;
    size_t n;
    if (TL_FAILED(tl_parse_string(p, &name, &n)))
      goto out;
    const TlOpDef *def = tl_context_op_def(p->ctx, name);
    if (!def) {
      tl_parser_error(p, loc, "unknown operation '%s'", name);
      goto out;
    }
    tl_op_state_init(&st, p->ctx, def, loc);
    have_state = true;
    if (TL_FAILED(parse_generic(p, &st)))
      goto out;
  } else if (p->tok.kind == T_IDENT) {
    const char *name = tok_intern(p);
    const TlOpDef *def = tl_context_op_def(p->ctx, name);
    if (!def && !strchr(name, '.')) {
      char buf[128];
      snprintf(buf, sizeof buf, "builtin.%s", name);
      def = tl_context_op_def(p->ctx, buf);
    }
    if (!def) {
      tl_parser_error(p, loc, "unknown operation '%s'", name);
      goto out;
    }
    if (!def->parse) {
      tl_parser_error(p, loc,
                      "operation '%s' has no custom form; write it in the "
                      "generic form \"%s\"(...)",
                      name, def->name);
      goto out;
    }
    lex(p);
    tl_op_state_init(&st, p->ctx, def, loc);
    have_state = true;
    if (TL_FAILED(def->parse(p, &st))) {
      if (!p->failed)
        tl_parser_error(p, loc, "failed to parse '%s'", def->name);
      goto out;
    }
  } else {
    fail(p, "expected operation, found %s", tok_text(p));
    goto out;
  }

  if (st.results.len != nres) {
    tl_parser_error(p, results.len ? results.data[0].loc : loc,
                    "operation '%s' defines %zu result%s but %u %s named",
                    st.def->name, st.results.len,
                    st.results.len == 1 ? "" : "s", nres,
                    nres == 1 ? "is" : "are");
    goto out;
  }
  TlOp *op = tl_op_create(p->module, &st);
  have_state = false;
  tl_block_append(block, op);
  unsigned k = 0;
  for (size_t i = 0; i < results.len; i++) {
    TlValue *vals[4096];
    for (unsigned j = 0; j < results.data[i].count; j++)
      vals[j] = tl_op_result(op, k + j);
    if (TL_FAILED(define(p, results.data[i].name, results.data[i].loc, vals,
                         results.data[i].count)))
      goto out;
    k += results.data[i].count;
  }
  r = TL_SUCCESS;
out:
  if (have_state)
    tl_op_state_free(&st);
  tl_vec_free(&results);
  return r;
}

/*===--- Top level -------------------------------------------------------===*/

/* Does the alias value at the current token depend on template values: a
 * templated alias, or a dialect attribute or type whose `<...>` body holds
 * a template expression or names a templated alias? Returns the end of
 * the value's text then, else NULL. */
static const char *templated_value(TlParser *p) {
  if (p->tok.kind != T_HASH && p->tok.kind != T_BANG)
    return NULL;
  const char *name = tok_intern(p);
  bool is_type = p->tok.kind == T_BANG;
  Alias *a = find_alias(p, name, is_type);
  if (a)
    return a->text ? p->cur : NULL;
  if (is_type ? !tl_context_type_def(p->ctx, name)
              : !tl_context_attr_def(p->ctx, name))
    return NULL;
  if (p->cur >= p->end || *p->cur != '<')
    return NULL;
  const char *close = body_end(p->cur, p->end);
  if (!close)
    return NULL; /* the parse reports it */
  for (const char *q = p->cur; q < close; q++) {
    if (*q == '{')
      return close + 1;
    if ((*q != '#' && *q != '!') || !id_start((unsigned char)q[1]))
      continue;
    const char *n = q + 1, *e = n;
    while (e < close && id_char((unsigned char)*e))
      e++;
    for (size_t i = 0; i < p->aliases.len; i++) {
      const Alias *b = &p->aliases.data[i];
      if (b->text && b->is_type == (*q == '!') &&
          strlen(b->name) == (size_t)(e - n) &&
          !memcmp(b->name, n, (size_t)(e - n)))
        return close + 1;
    }
    q = e - 1;
  }
  return NULL;
}

static TlResult parse_alias(TlParser *p) {
  bool is_type = p->tok.kind == T_BANG;
  TlLoc l = p->tok.loc;
  const char *name = tok_intern(p);
  lex(p);
  if (!tl_parser_peek_punct(p, "="))
    return fail(p, "expected '=' in alias definition, found %s", tok_text(p));
  if (tl_context_type_def(p->ctx, name) || tl_context_attr_def(p->ctx, name) ||
      strchr(name, '.')) {
    tl_parser_error(p, l, "alias name '%c%s' may not contain '.'",
                    is_type ? '!' : '#', name);
    return TL_FAILURE;
  }
  if (find_alias(p, name, is_type)) {
    tl_parser_error(p, l, "redefinition of alias '%c%s'", is_type ? '!' : '#',
                    name);
    return TL_FAILURE;
  }
  lex(p);
  Alias a = {name, is_type, NULL, NULL, NULL, 0, 0, NULL};
  const char *end = templated_value(p);
  if (end) {
    /* Kept as text; each use parses it in its own kernel. */
    a.text = p->tok.start;
    a.len = (size_t)(end - a.text);
    a.line = p->line;
    a.line_start = p->line_start;
    advance_to(p, end);
  } else if (is_type ? TL_FAILED(tl_parse_type(p, &a.type))
                     : TL_FAILED(tl_parse_attr(p, &a.attr))) {
    return TL_FAILURE;
  }
  tl_vec_push(&p->aliases, a);
  return TL_SUCCESS;
}

TlModule *tl_parse_module(TlContext *ctx, const char *name, const char *text,
                          size_t len, unsigned first_line) {
  TlParser p;
  memset(&p, 0, sizeof p);
  p.ctx = ctx;
  p.file = tl_context_intern(ctx, name, strlen(name));
  p.src = p.cur = p.line_start = text;
  p.end = text + len;
  p.line = first_line ? first_line : 1;
  p.alias_limit = SIZE_MAX;
  TlLoc start = {p.file, p.line, 1};
  p.module = tl_module_create(ctx, start);
  TlBlock *body = tl_module_body(p.module);
  lex(&p);
  push_scope(&p, true);
  while (!p.failed && p.tok.kind != T_EOF) {
    if ((p.tok.kind == T_HASH || p.tok.kind == T_BANG) && !body->first) {
      if (TL_FAILED(parse_alias(&p)))
        break;
      continue;
    }
    if (TL_FAILED(parse_op(&p, body)))
      break;
  }
  TlModule *m = p.module;
  /* A file holding exactly one explicit module is that module. */
  if (!p.failed && body->first && body->first == body->last &&
      tl_op_id(body->first) == TL_OP_BUILTIN_MODULE) {
    TlOp *inner = body->first;
    tl_op_take(inner);
    m->op = inner;
  }
  tl_vec_free(&p.bindings);
  tl_vec_free(&p.scopes);
  tl_vec_free(&p.isolation);
  tl_vec_free(&p.aliases);
  tl_vec_free(&p.uses);
  tl_vec_free(&p.raw_subs);
  tl_arena_reset(&p.scratch);
  if (p.failed) {
    tl_module_destroy(m);
    return NULL;
  }
  return m;
}
