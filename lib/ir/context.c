/* The context: interned strings, uniqued types and attributes, the dialect
 * registry and the diagnostic engine. Types and attributes are uniqued in
 * open-addressing tables keyed by a structural hash, so two equal types are
 * the same pointer and every comparison elsewhere is `==`. */
#include "ir_internal.h"

#include <ctype.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*===--- Unique tables ---------------------------------------------------===*/

typedef bool (*EqFn)(const void *stored, const void *key);

static void uniq_free(UniqTable *t) {
  tl_free(t->slots);
  tl_free(t->hashes);
}

static void uniq_grow(UniqTable *t) {
  size_t ncap = t->cap ? t->cap * 2 : 256;
  void **ns = tl_xcalloc(ncap, sizeof *ns);
  uint64_t *nh = tl_xcalloc(ncap, sizeof *nh);
  for (size_t i = 0; i < t->cap; i++) {
    if (!t->slots[i])
      continue;
    size_t j = t->hashes[i] & (ncap - 1);
    while (ns[j])
      j = (j + 1) & (ncap - 1);
    ns[j] = t->slots[i];
    nh[j] = t->hashes[i];
  }
  uniq_free(t);
  t->slots = ns;
  t->hashes = nh;
  t->cap = ncap;
}

/* Returns the stored object equal to key, or NULL and the slot to fill. */
static void *uniq_find(UniqTable *t, uint64_t h, const void *key, EqFn eq,
                       size_t *slot) {
  if (2 * (t->count + 1) > t->cap)
    uniq_grow(t);
  size_t j = h & (t->cap - 1);
  for (; t->slots[j]; j = (j + 1) & (t->cap - 1))
    if (t->hashes[j] == h && eq(t->slots[j], key))
      return t->slots[j];
  *slot = j;
  return NULL;
}

static void uniq_insert(UniqTable *t, size_t slot, uint64_t h, void *obj) {
  t->slots[slot] = obj;
  t->hashes[slot] = h;
  t->count++;
}

static TlType *get_type(TlContext *ctx, TlType *key);

/*===--- Context ---------------------------------------------------------===*/

TlContext *tl_context_create(void) {
  TlContext *ctx = tl_xcalloc(1, sizeof *ctx);
  ctx->strings = tl_strtab_create();
  ctx->diag = tl_diag_engine_create();
  {
    TlType k = {.kind = TL_TYPE_INT, .width = 1, .is_bool = true};
    ctx->i1 = get_type(ctx, &k);
  }
  ctx->f16 = tl_type_float(ctx, 5, 10);
  ctx->bf16 = tl_type_float(ctx, 8, 7);
  ctx->f32 = tl_type_float(ctx, 8, 23);
  ctx->f64 = tl_type_float(ctx, 11, 52);
  ctx->none = tl_type_none(ctx);
  ctx->unit = tl_attr_unit(ctx);
  tl_builtin_register(ctx);
  return ctx;
}

void tl_context_destroy(TlContext *ctx) {
  if (!ctx)
    return;
  uniq_free(&ctx->types);
  uniq_free(&ctx->attrs);
  tl_vec_free(&ctx->dialects);
  tl_vec_free(&ctx->op_defs);
  tl_vec_free(&ctx->type_defs);
  tl_vec_free(&ctx->attr_defs);
  tl_vec_free(&ctx->defines);
  tl_strtab_destroy(ctx->strings);
  tl_diag_engine_destroy(ctx->diag);
  tl_arena_reset(&ctx->arena);
  tl_free(ctx);
}

TlDiagEngine *tl_context_diag(TlContext *ctx) { return ctx->diag; }

const char *tl_context_intern(TlContext *ctx, const char *s, size_t n) {
  return tl_strtab_intern(ctx->strings, s, n);
}

static void set_define(TlContext *ctx, const char *name, int64_t value,
                       TlType *type) {
  name = tl_context_intern(ctx, name, strlen(name));
  for (size_t i = 0; i < ctx->defines.len; i++)
    if (ctx->defines.data[i].name == name) {
      ctx->defines.data[i].value = value;
      ctx->defines.data[i].type = type;
      return;
    }
  struct Define d = {name, value, type, false};
  tl_vec_push(&ctx->defines, d);
}

void tl_context_set_define(TlContext *ctx, const char *name, int64_t value) {
  set_define(ctx, name, value, NULL);
}

void tl_context_set_define_type(TlContext *ctx, const char *name,
                                TlType *type) {
  set_define(ctx, name, 0, type);
}

bool tl_context_get_define_value(TlContext *ctx, const char *name,
                                 int64_t *value, TlType **type) {
  for (size_t i = 0; i < ctx->defines.len; i++)
    if (strcmp(ctx->defines.data[i].name, name) == 0) {
      ctx->defines.data[i].used = true;
      *value = ctx->defines.data[i].value;
      *type = ctx->defines.data[i].type;
      return true;
    }
  return false;
}

bool tl_context_get_define(TlContext *ctx, const char *name, int64_t *value) {
  TlType *type;
  int64_t v;
  if (!tl_context_get_define_value(ctx, name, &v, &type) || type)
    return false;
  *value = v;
  return true;
}

static bool ident_char(char c, bool first) {
  return c == '_' || isalpha((unsigned char)c) ||
         (!first && isdigit((unsigned char)c));
}

TlResult tl_context_parse_define(TlContext *ctx, const char *text,
                                 TlErr *err) {
  const char *eq = strchr(text, '=');
  size_t n = eq ? (size_t)(eq - text) : 0;
  bool named = n > 0 && n < 128;
  for (size_t i = 0; named && i < n; i++)
    named = ident_char(text[i], i == 0);
  if (!named) {
    tl_err(err, "invalid definition '%s' (want NAME=INTEGER or NAME=TYPE)",
           text);
    return TL_FAILURE;
  }
  char name[128];
  memcpy(name, text, n);
  name[n] = 0;
  const char *v = eq + 1;
  int64_t x;
  TlIntStatus st = tl_int64_literal(v, strlen(v), &x);
  if (st == TL_INT_OK) {
    tl_context_set_define(ctx, name, x);
    return TL_SUCCESS;
  }
  if (st == TL_INT_TOO_LARGE) {
    tl_err(err, "invalid definition '%s': %s is out of range for i64", text,
           v);
    return TL_FAILURE;
  }
  bool bad;
  TlType *t = tl_type_scalar_named(ctx, v, strlen(v), &bad);
  if (!t || t == tl_type_none(ctx)) {
    tl_err(err,
           "invalid definition '%s': '%s' is neither an integer nor a "
           "scalar type",
           text, v);
    return TL_FAILURE;
  }
  tl_context_set_define_type(ctx, name, t);
  return TL_SUCCESS;
}

void tl_context_clear_defines(TlContext *ctx) { ctx->defines.len = 0; }

const char *tl_context_define_at(TlContext *ctx, unsigned i, bool *used) {
  if (i >= ctx->defines.len)
    return NULL;
  if (used)
    *used = ctx->defines.data[i].used;
  return ctx->defines.data[i].name;
}

TlLoc tl_loc_get(TlContext *ctx, const char *file, uint32_t line,
                 uint32_t col) {
  TlLoc l = {file ? tl_context_intern(ctx, file, strlen(file)) : NULL, line,
             col};
  return l;
}

#define EMITTER(fn, sev)                                                       \
  void fn(TlContext *ctx, TlLoc loc, const char *fmt, ...) {                   \
    va_list ap;                                                                \
    va_start(ap, fmt);                                                         \
    tl_diag_vemit(ctx->diag, sev, loc, fmt, ap);                               \
    va_end(ap);                                                                \
  }
EMITTER(tl_emit_error, TL_DIAG_ERROR)
EMITTER(tl_emit_warning, TL_DIAG_WARNING)
EMITTER(tl_emit_note, TL_DIAG_NOTE)
EMITTER(tl_emit_remark, TL_DIAG_REMARK)

/*===--- Registry --------------------------------------------------------===*/

void tl_context_register_dialect(TlContext *ctx, const TlDialectDef *d) {
  for (size_t i = 0; i < ctx->dialects.len; i++)
    if (ctx->dialects.data[i] == d)
      return;
  tl_vec_push(&ctx->dialects, d);
  for (unsigned i = 0; i < d->num_ops; i++) {
    const TlOpDef *o = &d->ops[i];
    tl_assert(o->id < TL_OP_COUNT && (!o->id || !ctx->op_by_id[o->id]));
    tl_vec_push(&ctx->op_defs, o);
    if (o->id)
      ctx->op_by_id[o->id] = o;
  }
  for (const TlTypeDef *const *t = d->types; t && *t; t++)
    tl_vec_push(&ctx->type_defs, *t);
  for (const TlAttrDef *const *a = d->attrs; a && *a; a++)
    tl_vec_push(&ctx->attr_defs, *a);
}

const TlDialectDef *tl_context_dialect(TlContext *ctx, const char *name) {
  for (size_t i = 0; i < ctx->dialects.len; i++)
    if (strcmp(ctx->dialects.data[i]->name, name) == 0)
      return ctx->dialects.data[i];
  return NULL;
}

const TlOpDef *tl_context_op_def(TlContext *ctx, const char *name) {
  for (size_t i = 0; i < ctx->op_defs.len; i++)
    if (strcmp(ctx->op_defs.data[i]->name, name) == 0)
      return ctx->op_defs.data[i];
  return NULL;
}

const TlTypeDef *tl_context_type_def(TlContext *ctx, const char *name) {
  for (size_t i = 0; i < ctx->type_defs.len; i++)
    if (strcmp(ctx->type_defs.data[i]->name, name) == 0)
      return ctx->type_defs.data[i];
  return NULL;
}

const TlAttrDef *tl_context_attr_def(TlContext *ctx, const char *name) {
  for (size_t i = 0; i < ctx->attr_defs.len; i++)
    if (strcmp(ctx->attr_defs.data[i]->name, name) == 0)
      return ctx->attr_defs.data[i];
  return NULL;
}

const TlOpDef *tl_context_op_def_by_id(TlContext *ctx, TlOpId id) {
  return id > TL_OP_NONE && id < TL_OP_COUNT ? ctx->op_by_id[id] : NULL;
}

unsigned tl_context_num_op_defs(TlContext *ctx) {
  return (unsigned)ctx->op_defs.len;
}
const TlOpDef *tl_context_op_def_at(TlContext *ctx, unsigned i) {
  return i < ctx->op_defs.len ? ctx->op_defs.data[i] : NULL;
}

/*===--- Types -----------------------------------------------------------===*/

static uint64_t hash_type(const TlType *k) {
  uint64_t h = tl_hash_bytes(&k->kind, sizeof k->kind, 0);
  h = tl_hash_combine(h, k->width * 4u + k->is_signed * 2u + k->is_bool);
  h = tl_hash_combine(h, k->exp * 131u + k->man);
  h = tl_hash_combine(h, (uintptr_t)k->def);
  for (unsigned i = 0; i < k->nin + k->nout; i++)
    h = tl_hash_combine(h, (uintptr_t)k->types[i]);
  for (unsigned i = 0; i < k->nparams; i++)
    h = tl_hash_combine(h, (uintptr_t)k->params[i]);
  return h;
}

static bool eq_type(const void *sp, const void *kp) {
  const TlType *s = sp, *k = kp;
  if (s->kind != k->kind || s->width != k->width ||
      s->is_signed != k->is_signed || s->is_bool != k->is_bool || s->exp != k->exp || s->man != k->man ||
      s->nin != k->nin || s->nout != k->nout || s->def != k->def ||
      s->nparams != k->nparams)
    return false;
  for (unsigned i = 0; i < k->nin + k->nout; i++)
    if (s->types[i] != k->types[i])
      return false;
  for (unsigned i = 0; i < k->nparams; i++)
    if (s->params[i] != k->params[i])
      return false;
  return true;
}

static TlType *get_type(TlContext *ctx, TlType *key) {
  key->ctx = ctx;
  uint64_t h = hash_type(key);
  size_t slot;
  TlType *t = uniq_find(&ctx->types, h, key, eq_type, &slot);
  if (t)
    return t;
  t = TL_ARENA_NEW(&ctx->arena, TlType);
  *t = *key;
  t->hash = h;
  if (key->nin + key->nout)
    t->types = tl_arena_memdup(&ctx->arena, key->types,
                               sizeof(TlType *) * (key->nin + key->nout));
  if (key->nparams)
    t->params = tl_arena_memdup(&ctx->arena, key->params,
                                sizeof(TlAttr *) * key->nparams);
  uniq_insert(&ctx->types, slot, h, t);
  return t;
}

TlTypeKind tl_type_kind(const TlType *t) { return t->kind; }

TlType *tl_type_int(TlContext *ctx, unsigned width, bool is_signed) {
  /* There is no signed 1-bit integer; i1 is the boolean (tl_type_bool). */
  if (width < 1 || width > 64 || (width == 1 && is_signed))
    return NULL;
  TlType k = {.kind = TL_TYPE_INT, .width = width, .is_signed = is_signed};
  return get_type(ctx, &k);
}

TlType *tl_type_bool(TlContext *ctx) { return ctx->i1; }
bool tl_type_is_int(const TlType *t) { return t && t->kind == TL_TYPE_INT; }
bool tl_type_is_bool(const TlType *t) {
  return t && t->kind == TL_TYPE_INT && t->is_bool;
}
unsigned tl_type_int_width(const TlType *t) { return t->width; }
bool tl_type_int_signed(const TlType *t) { return t->is_signed; }

TlType *tl_type_float(TlContext *ctx, unsigned exp, unsigned man) {
  bool std = (exp == 5 && man == 10) || (exp == 8 && man == 7) ||
             (exp == 8 && man == 23) || (exp == 11 && man == 52);
  bool small = exp >= 1 && 1 + exp + man <= 8;
  if (!std && !small)
    return NULL;
  TlType k = {.kind = TL_TYPE_FLOAT, .exp = exp, .man = man};
  return get_type(ctx, &k);
}

TlType *tl_type_f16(TlContext *ctx) { return ctx->f16; }
TlType *tl_type_bf16(TlContext *ctx) { return ctx->bf16; }
TlType *tl_type_f32(TlContext *ctx) { return ctx->f32; }
TlType *tl_type_f64(TlContext *ctx) { return ctx->f64; }
bool tl_type_is_float(const TlType *t) { return t && t->kind == TL_TYPE_FLOAT; }
unsigned tl_type_float_exp(const TlType *t) { return t->exp; }
unsigned tl_type_float_man(const TlType *t) { return t->man; }

TlType *tl_type_scalar_named(TlContext *ctx, const char *s, size_t n,
                              bool *bad) {
  char buf[32];
  *bad = false;
  if (n == 0 || n >= sizeof buf)
    return NULL;
  memcpy(buf, s, n);
  buf[n] = 0;
  if (!strcmp(buf, "bool") || !strcmp(buf, "i1"))
    return ctx->i1;
  if (!strcmp(buf, "f16"))
    return ctx->f16;
  if (!strcmp(buf, "bf16"))
    return ctx->bf16;
  if (!strcmp(buf, "f32"))
    return ctx->f32;
  if (!strcmp(buf, "f64"))
    return ctx->f64;
  if (!strcmp(buf, "none"))
    return tl_type_none(ctx);
  if ((buf[0] == 'i' || buf[0] == 'u') && n > 1) {
    for (size_t i = 1; i < n; i++)
      if (!isdigit((unsigned char)buf[i]))
        return NULL;
    unsigned long w = n > 3 ? 999 : strtoul(buf + 1, NULL, 10);
    TlType *t = w <= 64 ? tl_type_int(ctx, (unsigned)w, buf[0] == 'i') : NULL;
    if (!t)
      *bad = true;
    return t;
  }
  if (buf[0] == 'f') {
    unsigned nb, e, m;
    char tail;
    if (sscanf(buf, "f%ue%um%u%c", &nb, &e, &m, &tail) == 3) {
      char canon[32];
      snprintf(canon, sizeof canon, "f%ue%um%u", nb, e, m);
      TlType *t = NULL;
      if (!strcmp(canon, buf) && nb == 1 + e + m && nb <= 8 && e >= 1)
        t = tl_type_float(ctx, e, m);
      if (!t)
        *bad = true;
      return t;
    }
  }
  return NULL;
}

bool tl_type_is_scalar(const TlType *t) {
  return t && (t->kind == TL_TYPE_INT || t->kind == TL_TYPE_FLOAT);
}

unsigned tl_type_bitwidth(const TlType *t) {
  if (!t)
    return 0;
  if (t->kind == TL_TYPE_INT)
    return t->width;
  if (t->kind == TL_TYPE_FLOAT)
    return 1 + t->exp + t->man;
  return 0;
}

TlType *tl_type_none(TlContext *ctx) {
  if (ctx->none)
    return ctx->none;
  TlType k = {.kind = TL_TYPE_NONE};
  return get_type(ctx, &k);
}

TlType *tl_type_function(TlContext *ctx, unsigned nin, TlType *const *in,
                         unsigned nout, TlType *const *out) {
  TlType *buf[64];
  TlType **all = nin + nout <= 64 ? buf : tl_xmalloc(sizeof(TlType *) * (nin + nout));
  for (unsigned i = 0; i < nin; i++)
    all[i] = in[i];
  for (unsigned i = 0; i < nout; i++)
    all[nin + i] = out[i];
  TlType k = {.kind = TL_TYPE_FUNCTION, .nin = nin, .nout = nout, .types = all};
  TlType *t = get_type(ctx, &k);
  if (all != buf)
    tl_free(all);
  return t;
}

unsigned tl_type_function_num_inputs(const TlType *t) { return t->nin; }
TlType *tl_type_function_input(const TlType *t, unsigned i) {
  return t->types[i];
}
unsigned tl_type_function_num_results(const TlType *t) { return t->nout; }
TlType *tl_type_function_result(const TlType *t, unsigned i) {
  return t->types[t->nin + i];
}

TlType *tl_type_dialect(TlContext *ctx, const TlTypeDef *def, unsigned n,
                        TlAttr *const *params) {
  TlType k = {.kind = TL_TYPE_DIALECT, .def = def, .nparams = n,
              .params = (TlAttr **)params};
  return get_type(ctx, &k);
}

const TlTypeDef *tl_type_def(const TlType *t) { return t->def; }
unsigned tl_type_num_params(const TlType *t) { return t->nparams; }
TlAttr *tl_type_param(const TlType *t, unsigned i) { return t->params[i]; }

/*===--- Attributes ------------------------------------------------------===*/

static uint64_t hash_attr(const TlAttr *k) {
  uint64_t h = tl_hash_bytes(&k->kind, sizeof k->kind, 0);
  h = tl_hash_combine(h, (uintptr_t)k->type);
  h = tl_hash_combine(h, (uint64_t)k->ival);
  uint64_t fb;
  memcpy(&fb, &k->fval, sizeof fb);
  h = tl_hash_combine(h, fb);
  if (k->str)
    h = tl_hash_bytes(k->str, k->len, h);
  for (unsigned i = 0; i < k->n; i++) {
    if (k->elems)
      h = tl_hash_combine(h, (uintptr_t)k->elems[i]);
    if (k->entries)
      h = tl_hash_combine(tl_hash_combine(h, (uintptr_t)k->entries[i].name),
                          (uintptr_t)k->entries[i].attr);
  }
  h = tl_hash_combine(h, (uintptr_t)k->def);
  if (k->blob_size)
    h = tl_hash_bytes(k->blob, k->blob_size, h);
  return h;
}

static bool eq_attr(const void *sp, const void *kp) {
  const TlAttr *s = sp, *k = kp;
  if (s->kind != k->kind || s->type != k->type || s->ival != k->ival ||
      memcmp(&s->fval, &k->fval, sizeof s->fval) != 0 || s->len != k->len ||
      s->n != k->n || s->def != k->def || s->blob_size != k->blob_size)
    return false;
  if ((s->str == NULL) != (k->str == NULL) ||
      (s->str && memcmp(s->str, k->str, k->len) != 0))
    return false;
  for (unsigned i = 0; i < k->n; i++) {
    if (k->elems && s->elems[i] != k->elems[i])
      return false;
    if (k->entries && (s->entries[i].name != k->entries[i].name ||
                       s->entries[i].attr != k->entries[i].attr))
      return false;
  }
  return !k->blob_size || memcmp(s->blob, k->blob, k->blob_size) == 0;
}

static TlAttr *get_attr(TlContext *ctx, TlAttr *key) {
  key->ctx = ctx;
  uint64_t h = hash_attr(key);
  size_t slot;
  TlAttr *a = uniq_find(&ctx->attrs, h, key, eq_attr, &slot);
  if (a)
    return a;
  a = TL_ARENA_NEW(&ctx->arena, TlAttr);
  *a = *key;
  a->hash = h;
  if (key->str)
    a->str = tl_arena_strndup(&ctx->arena, key->str, key->len);
  if (key->elems && key->n)
    a->elems = tl_arena_memdup(&ctx->arena, key->elems, sizeof(TlAttr *) * key->n);
  if (key->entries && key->n)
    a->entries =
        tl_arena_memdup(&ctx->arena, key->entries, sizeof(TlNamedAttr) * key->n);
  if (key->blob_size)
    a->blob = tl_arena_memdup(&ctx->arena, key->blob, key->blob_size);
  uniq_insert(&ctx->attrs, slot, h, a);
  return a;
}

TlAttrKind tl_attr_kind(const TlAttr *a) { return a->kind; }

TlAttr *tl_attr_unit(TlContext *ctx) {
  TlAttr k = {.kind = TL_ATTR_UNIT};
  return get_attr(ctx, &k);
}

/* Truncates v to the type's width and extends it back, so each value has
 * one representation. */
static int64_t canonical_int(const TlType *t, int64_t v) {
  unsigned w = t->width;
  if (w >= 64)
    return v;
  uint64_t mask = (1ull << w) - 1, u = (uint64_t)v & mask;
  if (t->is_signed && (u >> (w - 1)) & 1)
    u |= ~mask;
  return (int64_t)u;
}

TlAttr *tl_attr_int(TlContext *ctx, TlType *type, int64_t value) {
  tl_assert(type && type->kind == TL_TYPE_INT);
  TlAttr k = {.kind = TL_ATTR_INT, .type = type,
              .ival = canonical_int(type, value)};
  return get_attr(ctx, &k);
}

TlAttr *tl_attr_bool(TlContext *ctx, bool v) {
  return tl_attr_int(ctx, ctx->i1, v);
}

TlAttr *tl_attr_float(TlContext *ctx, TlType *type, double value) {
  tl_assert(type && type->kind == TL_TYPE_FLOAT);
  if (isnan(value))
    value = NAN; /* one NaN per type: payloads are not kept */
  TlAttr k = {.kind = TL_ATTR_FLOAT, .type = type, .fval = value};
  return get_attr(ctx, &k);
}

TlAttr *tl_attr_string(TlContext *ctx, const char *s, size_t n) {
  TlAttr k = {.kind = TL_ATTR_STRING, .str = s ? s : "", .len = n};
  return get_attr(ctx, &k);
}

TlAttr *tl_attr_type(TlContext *ctx, TlType *type) {
  TlAttr k = {.kind = TL_ATTR_TYPE, .type = type};
  return get_attr(ctx, &k);
}

TlAttr *tl_attr_array(TlContext *ctx, unsigned n, TlAttr *const *elems) {
  TlAttr *none[1] = {NULL};
  TlAttr k = {.kind = TL_ATTR_ARRAY, .n = n,
              .elems = n ? (TlAttr **)elems : none};
  return get_attr(ctx, &k);
}

static int cmp_named(const void *a, const void *b) {
  return strcmp(((const TlNamedAttr *)a)->name, ((const TlNamedAttr *)b)->name);
}

TlAttr *tl_attr_dict(TlContext *ctx, unsigned n, const TlNamedAttr *entries) {
  TlNamedAttr *sorted = tl_xmalloc(sizeof *sorted * (n ? n : 1));
  for (unsigned i = 0; i < n; i++) {
    sorted[i] = entries[i];
    sorted[i].name = tl_context_intern(ctx, entries[i].name, strlen(entries[i].name));
  }
  qsort(sorted, n, sizeof *sorted, cmp_named);
  for (unsigned i = 1; i < n; i++)
    if (sorted[i].name == sorted[i - 1].name) {
      tl_free(sorted);
      return NULL;
    }
  TlAttr k = {.kind = TL_ATTR_DICT, .n = n, .entries = sorted};
  TlAttr *a = get_attr(ctx, &k);
  tl_free(sorted);
  return a;
}

TlAttr *tl_attr_symbol(TlContext *ctx, const char *name) {
  TlAttr k = {.kind = TL_ATTR_SYMBOL, .str = name, .len = strlen(name)};
  return get_attr(ctx, &k);
}

TlAttr *tl_attr_dialect(TlContext *ctx, const TlAttrDef *def, unsigned n,
                        TlAttr *const *params, const void *blob,
                        size_t blob_size) {
  TlAttr *none[1] = {NULL};
  TlAttr k = {.kind = TL_ATTR_DIALECT, .def = def, .n = n,
              .elems = n ? (TlAttr **)params : none, .blob = (void *)blob,
              .blob_size = blob_size};
  return get_attr(ctx, &k);
}

TlType *tl_attr_get_type(const TlAttr *a) { return a->type; }
int64_t tl_attr_int_value(const TlAttr *a) { return a->ival; }
uint64_t tl_attr_uint_value(const TlAttr *a) {
  unsigned w = a->type->width;
  return w >= 64 ? (uint64_t)a->ival : (uint64_t)a->ival & ((1ull << w) - 1);
}
double tl_attr_float_value(const TlAttr *a) { return a->fval; }
const char *tl_attr_string_value(const TlAttr *a, size_t *len) {
  if (len)
    *len = a->len;
  return a->str;
}
TlType *tl_attr_type_value(const TlAttr *a) { return a->type; }
unsigned tl_attr_array_size(const TlAttr *a) { return a->n; }
TlAttr *tl_attr_array_elem(const TlAttr *a, unsigned i) { return a->elems[i]; }
unsigned tl_attr_dict_size(const TlAttr *a) { return a->n; }
TlNamedAttr tl_attr_dict_entry(const TlAttr *a, unsigned i) {
  return a->entries[i];
}
TlAttr *tl_attr_dict_get(const TlAttr *a, const char *name) {
  for (unsigned i = 0; i < a->n; i++)
    if (strcmp(a->entries[i].name, name) == 0)
      return a->entries[i].attr;
  return NULL;
}
const char *tl_attr_symbol_name(const TlAttr *a) { return a->str; }
const TlAttrDef *tl_attr_def(const TlAttr *a) { return a->def; }
unsigned tl_attr_num_params(const TlAttr *a) { return a->n; }
TlAttr *tl_attr_param(const TlAttr *a, unsigned i) { return a->elems[i]; }
const void *tl_attr_blob(const TlAttr *a, size_t *size) {
  if (size)
    *size = a->blob_size;
  return a->blob;
}
