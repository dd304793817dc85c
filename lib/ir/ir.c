/* Operations, values and their use lists, blocks, regions, modules and the
 * builder. All of them live in their module's arena: erasing an op unlinks
 * it and drops its uses, and the memory returns when the module is
 * destroyed. */
#include "ir_internal.h"

#include <stdlib.h>
#include <string.h>

/*===--- Use lists -------------------------------------------------------===*/

static void use_link(TlUse *u, TlValue *v) {
  u->value = v;
  if (!v) {
    u->next = NULL;
    u->prevp = NULL;
    return;
  }
  u->next = v->uses;
  if (v->uses)
    v->uses->prevp = &u->next;
  u->prevp = &v->uses;
  v->uses = u;
}

static void use_unlink(TlUse *u) {
  if (!u->value)
    return;
  *u->prevp = u->next;
  if (u->next)
    u->next->prevp = u->prevp;
  u->value = NULL;
  u->next = NULL;
  u->prevp = NULL;
}

/*===--- Values ----------------------------------------------------------===*/

TlType *tl_value_type(const TlValue *v) { return v->type; }
void tl_value_set_type(TlValue *v, TlType *t) { v->type = t; }
TlOp *tl_value_def(const TlValue *v) { return v->op; }
TlBlock *tl_value_block(const TlValue *v) { return v->block; }
unsigned tl_value_index(const TlValue *v) { return v->index; }
const char *tl_value_name_hint(const TlValue *v) { return v->hint; }
void tl_value_set_name_hint(TlValue *v, const char *n) { v->hint = n; }
TlLoc tl_value_loc(const TlValue *v) { return v->op ? v->op->loc : v->loc; }
TlUse *tl_value_first_use(const TlValue *v) { return v->uses; }
TlUse *tl_use_next(const TlUse *u) { return u->next; }
TlOp *tl_use_owner(const TlUse *u) { return u->owner; }
unsigned tl_use_operand_index(const TlUse *u) { return u->index; }
bool tl_value_has_uses(const TlValue *v) { return v->uses != NULL; }
bool tl_value_has_one_use(const TlValue *v) {
  return v->uses && !v->uses->next;
}

void tl_value_replace_all_uses(TlValue *from, TlValue *to) {
  if (from == to)
    return;
  while (from->uses) {
    TlUse *u = from->uses;
    use_unlink(u);
    use_link(u, to);
  }
}

/*===--- Op state --------------------------------------------------------===*/

void tl_op_state_init(TlOpState *st, TlContext *ctx, const TlOpDef *def,
                      TlLoc loc) {
  memset(st, 0, sizeof *st);
  st->ctx = ctx;
  st->def = def;
  st->loc = loc;
}

void tl_op_state_free(TlOpState *st) {
  tl_vec_free(&st->operands);
  tl_vec_free(&st->results);
  tl_vec_free(&st->attrs);
  tl_vec_free(&st->regions);
}

void tl_op_state_add_operand(TlOpState *st, TlValue *v) {
  tl_vec_push(&st->operands, v);
}

void tl_op_state_add_operands(TlOpState *st, unsigned n, TlValue *const *v) {
  for (unsigned i = 0; i < n; i++)
    tl_vec_push(&st->operands, v[i]);
}

void tl_op_state_add_result(TlOpState *st, TlType *t) {
  tl_vec_push(&st->results, t);
}

void tl_op_state_set_attr(TlOpState *st, const char *name, TlAttr *a) {
  name = tl_context_intern(st->ctx, name, strlen(name));
  for (size_t i = 0; i < st->attrs.len; i++)
    if (st->attrs.data[i].name == name) {
      st->attrs.data[i].attr = a;
      return;
    }
  TlNamedAttr na = {name, a};
  tl_vec_push(&st->attrs, na);
}

TlAttr *tl_op_state_get_attr(const TlOpState *st, const char *name) {
  for (size_t i = 0; i < st->attrs.len; i++)
    if (strcmp(st->attrs.data[i].name, name) == 0)
      return st->attrs.data[i].attr;
  return NULL;
}

void tl_op_state_add_region(TlOpState *st, TlRegion *r) {
  tl_vec_push(&st->regions, r);
}

/*===--- Operations ------------------------------------------------------===*/

static int cmp_named(const void *a, const void *b) {
  return strcmp(((const TlNamedAttr *)a)->name, ((const TlNamedAttr *)b)->name);
}

TlOp *tl_op_create(TlModule *m, TlOpState *st) {
  TlArena *a = &m->arena;
  TlOp *op = TL_ARENA_NEW(a, TlOp);
  op->def = st->def;
  op->loc = st->loc;
  op->module = m;
  op->noperands = op->operand_cap = (unsigned)st->operands.len;
  op->operands = TL_ARENA_NEWN(a, TlUse, op->noperands);
  for (unsigned i = 0; i < op->noperands; i++) {
    op->operands[i].owner = op;
    op->operands[i].index = i;
    use_link(&op->operands[i], st->operands.data[i]);
  }
  op->nresults = (unsigned)st->results.len;
  op->results = TL_ARENA_NEWN(a, TlValue, op->nresults);
  for (unsigned i = 0; i < op->nresults; i++) {
    op->results[i].type = st->results.data[i];
    op->results[i].op = op;
    op->results[i].index = i;
  }
  op->nattrs = (unsigned)st->attrs.len;
  op->attrs = tl_arena_memdup(a, st->attrs.data, sizeof(TlNamedAttr) * op->nattrs);
  qsort(op->attrs, op->nattrs, sizeof(TlNamedAttr), cmp_named);
  unsigned nreg = (unsigned)st->regions.len;
  if (st->nregions > nreg)
    nreg = st->nregions;
  op->nregions = nreg;
  op->regions = TL_ARENA_NEWN(a, TlRegion *, nreg);
  for (unsigned i = 0; i < nreg; i++) {
    TlRegion *r = i < st->regions.len ? st->regions.data[i] : NULL;
    if (!r)
      r = tl_region_create(m);
    r->op = op;
    op->regions[i] = r;
  }
  tl_op_state_free(st);
  return op;
}

const TlOpDef *tl_op_def(const TlOp *op) { return op->def; }

TlOpId tl_op_id(const TlOp *op) { return op->def ? op->def->id : TL_OP_NONE; }
const char *tl_op_name(const TlOp *op) { return op->def->name; }
bool tl_op_is(const TlOp *op, const TlOpDef *def) { return op->def == def; }
TlContext *tl_op_context(const TlOp *op) { return op->module->ctx; }
TlModule *tl_op_module(const TlOp *op) { return op->module; }
TlLoc tl_op_loc(const TlOp *op) { return op->loc; }
bool tl_op_has_trait(const TlOp *op, unsigned trait) {
  return (op->def->traits & trait) == trait;
}

unsigned tl_op_num_operands(const TlOp *op) { return op->noperands; }
TlValue *tl_op_operand(const TlOp *op, unsigned i) {
  return op->operands[i].value;
}

void tl_op_set_operand(TlOp *op, unsigned i, TlValue *v) {
  use_unlink(&op->operands[i]);
  use_link(&op->operands[i], v);
}

void tl_op_set_operands(TlOp *op, unsigned n, TlValue *const *v) {
  for (unsigned i = 0; i < op->noperands; i++)
    use_unlink(&op->operands[i]);
  if (n > op->operand_cap) {
    op->operands = TL_ARENA_NEWN(&op->module->arena, TlUse, n);
    op->operand_cap = n;
  }
  op->noperands = n;
  for (unsigned i = 0; i < n; i++) {
    op->operands[i].owner = op;
    op->operands[i].index = i;
    use_link(&op->operands[i], v[i]);
  }
}

unsigned tl_op_num_results(const TlOp *op) { return op->nresults; }
TlValue *tl_op_result(const TlOp *op, unsigned i) { return &op->results[i]; }
unsigned tl_op_num_regions(const TlOp *op) { return op->nregions; }
TlRegion *tl_op_region(const TlOp *op, unsigned i) { return op->regions[i]; }

unsigned tl_op_num_attrs(const TlOp *op) { return op->nattrs; }
TlNamedAttr tl_op_attr_at(const TlOp *op, unsigned i) { return op->attrs[i]; }

TlAttr *tl_op_attr(const TlOp *op, const char *name) {
  for (unsigned i = 0; i < op->nattrs; i++)
    if (strcmp(op->attrs[i].name, name) == 0)
      return op->attrs[i].attr;
  return NULL;
}

void tl_op_set_attr(TlOp *op, const char *name, TlAttr *a) {
  for (unsigned i = 0; i < op->nattrs; i++)
    if (strcmp(op->attrs[i].name, name) == 0) {
      op->attrs[i].attr = a;
      return;
    }
  TlNamedAttr *na = TL_ARENA_NEWN(&op->module->arena, TlNamedAttr, op->nattrs + 1);
  memcpy(na, op->attrs, sizeof *na * op->nattrs);
  na[op->nattrs].name = tl_context_intern(op->module->ctx, name, strlen(name));
  na[op->nattrs].attr = a;
  op->attrs = na;
  op->nattrs++;
  qsort(op->attrs, op->nattrs, sizeof(TlNamedAttr), cmp_named);
}

void tl_op_remove_attr(TlOp *op, const char *name) {
  for (unsigned i = 0; i < op->nattrs; i++)
    if (strcmp(op->attrs[i].name, name) == 0) {
      memmove(&op->attrs[i], &op->attrs[i + 1],
              sizeof(TlNamedAttr) * (op->nattrs - i - 1));
      op->nattrs--;
      return;
    }
}

bool tl_op_is_pure(const TlOp *op) {
  unsigned tr = op->def->traits;
  if (tr & TL_TRAIT_PURE)
    return true;
  if (!(tr & TL_TRAIT_RECURSIVE_PURE))
    return false;
  for (unsigned r = 0; r < op->nregions; r++)
    for (TlBlock *b = op->regions[r]->first; b; b = b->next)
      for (TlOp *o = b->first; o; o = o->next)
        if (!tl_op_is_pure(o))
          return false;
  return true;
}

TlBlock *tl_op_block(const TlOp *op) { return op->block; }
TlOp *tl_op_parent(const TlOp *op) {
  return op->block && op->block->region ? op->block->region->op : NULL;
}
TlOp *tl_op_next(const TlOp *op) { return op->next; }
TlOp *tl_op_prev(const TlOp *op) { return op->prev; }

bool tl_op_is_ancestor(const TlOp *ancestor, const TlOp *op) {
  for (; op; op = tl_op_parent(op))
    if (op == ancestor)
      return true;
  return false;
}

void tl_op_take(TlOp *op) {
  TlBlock *b = op->block;
  if (!b)
    return;
  if (op->prev)
    op->prev->next = op->next;
  else
    b->first = op->next;
  if (op->next)
    op->next->prev = op->prev;
  else
    b->last = op->prev;
  op->prev = op->next = NULL;
  op->block = NULL;
}

static void link_before(TlBlock *b, TlOp *op, TlOp *before) {
  tl_assert(!op->block);
  op->block = b;
  b->order_valid = false;
  if (!before) {
    op->prev = b->last;
    op->next = NULL;
    if (b->last)
      b->last->next = op;
    else
      b->first = op;
    b->last = op;
    return;
  }
  op->next = before;
  op->prev = before->prev;
  if (before->prev)
    before->prev->next = op;
  else
    b->first = op;
  before->prev = op;
}

void tl_op_insert_before(TlOp *op, TlOp *before) {
  link_before(before->block, op, before);
}

void tl_op_insert_after(TlOp *op, TlOp *after) {
  link_before(after->block, op, after->next);
}

static void drop_refs(TlOp *op) {
  for (unsigned i = 0; i < op->noperands; i++)
    use_unlink(&op->operands[i]);
  for (unsigned r = 0; r < op->nregions; r++)
    for (TlBlock *b = op->regions[r]->first; b; b = b->next)
      for (TlOp *o = b->first; o; o = o->next)
        drop_refs(o);
}

static void mark_erased(TlOp *op) {
  op->erased = true;
  for (unsigned r = 0; r < op->nregions; r++)
    for (TlBlock *b = op->regions[r]->first; b; b = b->next)
      for (TlOp *o = b->first; o; o = o->next)
        mark_erased(o);
}

void tl_op_erase(TlOp *op) {
  drop_refs(op);
  for (unsigned i = 0; i < op->nresults; i++)
    tl_assert(!op->results[i].uses);
  tl_op_take(op);
  mark_erased(op);
}

void tl_op_walk(TlOp *op, TlWalkFn fn, void *user, bool post_order) {
  if (!post_order)
    fn(op, user);
  for (unsigned r = 0; r < op->nregions; r++)
    for (TlBlock *b = op->regions[r]->first; b; b = b->next)
      for (TlOp *o = b->first, *next; o; o = next) {
        next = o->next;
        tl_op_walk(o, fn, user, post_order);
      }
  if (post_order)
    fn(op, user);
}

/*===--- Cloning ---------------------------------------------------------===*/

/* A small map from old values to new ones, for one clone. */
typedef struct ValueMap {
  TL_VEC(TlValue *) from;
  TL_VEC(TlValue *) to;
} ValueMap;

static TlValue *map_lookup(ValueMap *m, TlValue *v) {
  for (size_t i = m->from.len; i-- > 0;)
    if (m->from.data[i] == v)
      return m->to.data[i];
  return v;
}

static void map_add(ValueMap *m, TlValue *a, TlValue *b) {
  tl_vec_push(&m->from, a);
  tl_vec_push(&m->to, b);
}

static TlOp *clone_rec(TlOp *op, ValueMap *map) {
  TlModule *m = op->module;
  TlOpState st;
  tl_op_state_init(&st, m->ctx, op->def, op->loc);
  for (unsigned i = 0; i < op->noperands; i++)
    tl_op_state_add_operand(&st, map_lookup(map, op->operands[i].value));
  for (unsigned i = 0; i < op->nresults; i++)
    tl_op_state_add_result(&st, op->results[i].type);
  for (unsigned i = 0; i < op->nattrs; i++)
    tl_vec_push(&st.attrs, op->attrs[i]);
  for (unsigned r = 0; r < op->nregions; r++) {
    TlRegion *nr = tl_region_create(m);
    for (TlBlock *b = op->regions[r]->first; b; b = b->next) {
      TlBlock *nb = tl_block_create(m);
      tl_region_append_block(nr, nb);
      for (unsigned i = 0; i < b->nargs; i++) {
        TlValue *na = tl_block_add_arg(nb, b->args[i]->type, b->args[i]->loc);
        na->hint = b->args[i]->hint;
        map_add(map, b->args[i], na);
      }
      for (TlOp *o = b->first; o; o = o->next)
        tl_block_append(nb, clone_rec(o, map));
    }
    tl_op_state_add_region(&st, nr);
  }
  TlOp *c = tl_op_create(m, &st);
  for (unsigned i = 0; i < op->nresults; i++) {
    c->results[i].hint = op->results[i].hint;
    map_add(map, &op->results[i], &c->results[i]);
  }
  return c;
}

TlOp *tl_op_clone(TlOp *op) {
  ValueMap map = {0};
  TlOp *c = clone_rec(op, &map);
  tl_vec_free(&map.from);
  tl_vec_free(&map.to);
  return c;
}

/*===--- Diagnostics on ops ----------------------------------------------===*/

static void op_vemit(const TlOp *op, TlDiagSeverity sev, const char *fmt,
                     va_list ap) {
  TlStr s = {0};
  tl_str_printf(&s, "'%s' op ", op->def->name);
  tl_str_vprintf(&s, fmt, ap);
  tl_diag_emit(op->module->ctx->diag, sev, op->loc, "%s", tl_str_cstr(&s));
  tl_str_free(&s);
}

#define OP_EMITTER(fn, sev)                                                    \
  void fn(const TlOp *op, const char *fmt, ...) {                              \
    va_list ap;                                                                \
    va_start(ap, fmt);                                                         \
    op_vemit(op, sev, fmt, ap);                                                \
    va_end(ap);                                                                \
  }
OP_EMITTER(tl_op_emit_error, TL_DIAG_ERROR)
OP_EMITTER(tl_op_emit_warning, TL_DIAG_WARNING)
OP_EMITTER(tl_op_emit_remark, TL_DIAG_REMARK)

/*===--- Blocks and regions ----------------------------------------------===*/

TlRegion *tl_region_create(TlModule *m) { return TL_ARENA_NEW(&m->arena, TlRegion); }
TlOp *tl_region_parent(const TlRegion *r) { return r->op; }
TlBlock *tl_region_first_block(const TlRegion *r) { return r->first; }
TlBlock *tl_block_next(const TlBlock *b) { return b->next; }
bool tl_region_empty(const TlRegion *r) { return !r->first; }

void tl_region_append_block(TlRegion *r, TlBlock *b) {
  b->region = r;
  b->prev = r->last;
  b->next = NULL;
  if (r->last)
    r->last->next = b;
  else
    r->first = b;
  r->last = b;
}

TlBlock *tl_block_create(TlModule *m) {
  TlBlock *b = TL_ARENA_NEW(&m->arena, TlBlock);
  b->module = m;
  return b;
}

TlRegion *tl_block_region(const TlBlock *b) { return b->region; }
TlOp *tl_block_parent_op(const TlBlock *b) {
  return b->region ? b->region->op : NULL;
}

TlValue *tl_block_add_arg(TlBlock *b, TlType *t, TlLoc loc) {
  if (b->nargs == b->argcap) {
    unsigned ncap = b->argcap ? b->argcap * 2 : 4;
    TlValue **na = TL_ARENA_NEWN(&b->module->arena, TlValue *, ncap);
    if (b->nargs)
      memcpy(na, b->args, sizeof *na * b->nargs);
    b->args = na;
    b->argcap = ncap;
  }
  TlValue *v = TL_ARENA_NEW(&b->module->arena, TlValue);
  v->type = t;
  v->block = b;
  v->index = b->nargs;
  v->loc = loc;
  b->args[b->nargs++] = v;
  return v;
}

unsigned tl_block_num_args(const TlBlock *b) { return b->nargs; }
TlValue *tl_block_arg(const TlBlock *b, unsigned i) { return b->args[i]; }
TlOp *tl_block_first_op(const TlBlock *b) { return b->first; }
TlOp *tl_block_last_op(const TlBlock *b) { return b->last; }
void tl_block_append(TlBlock *b, TlOp *op) { link_before(b, op, NULL); }

TlOp *tl_block_terminator(const TlBlock *b) {
  return b->last && (b->last->def->traits & TL_TRAIT_TERMINATOR) ? b->last
                                                                  : NULL;
}

bool tl_op_before_in_block(TlOp *a, TlOp *b) {
  TlBlock *blk = a->block;
  tl_assert(blk && blk == b->block);
  if (!blk->order_valid) {
    unsigned n = 0;
    for (TlOp *o = blk->first; o; o = o->next)
      o->order = n++;
    blk->order_valid = true;
  }
  return a->order < b->order;
}

/*===--- Modules ---------------------------------------------------------===*/

TlModule *tl_module_create(TlContext *ctx, TlLoc loc) {
  TlModule *m = tl_xcalloc(1, sizeof *m);
  m->ctx = ctx;
  TlOpState st;
  tl_op_state_init(&st, ctx, tl_context_op_def_by_id(ctx, TL_OP_BUILTIN_MODULE),
                    loc);
  st.nregions = 1;
  m->op = tl_op_create(m, &st);
  tl_region_append_block(m->op->regions[0], tl_block_create(m));
  return m;
}

void tl_module_destroy(TlModule *m) {
  if (!m)
    return;
  tl_arena_reset(&m->arena);
  tl_free(m);
}

TlOp *tl_module_op(const TlModule *m) { return m->op; }
TlBlock *tl_module_body(const TlModule *m) { return m->op->regions[0]->first; }
TlContext *tl_module_context(const TlModule *m) { return m->ctx; }
TlArena *tl_module_arena(TlModule *m) { return &m->arena; }

/*===--- Symbols ---------------------------------------------------------===*/

const char *tl_symbol_name(const TlOp *op) {
  TlAttr *a = tl_op_attr(op, "sym_name");
  return a && a->kind == TL_ATTR_STRING ? a->str : NULL;
}

TlOp *tl_symbol_lookup(TlOp *table, const char *name) {
  for (unsigned r = 0; r < table->nregions; r++)
    for (TlBlock *b = table->regions[r]->first; b; b = b->next)
      for (TlOp *o = b->first; o; o = o->next) {
        const char *n = tl_symbol_name(o);
        if (n && strcmp(n, name) == 0)
          return o;
      }
  return NULL;
}

/*===--- Builder ---------------------------------------------------------===*/

void tl_builder_init(TlBuilder *b, TlModule *m) {
  b->module = m;
  b->block = NULL;
  b->before = NULL;
  b->loc = tl_loc_unknown();
}

void tl_builder_set_loc(TlBuilder *b, TlLoc loc) { b->loc = loc; }

void tl_builder_set_end(TlBuilder *b, TlBlock *block) {
  b->block = block;
  b->before = NULL;
}

void tl_builder_set_before(TlBuilder *b, TlOp *op) {
  b->block = op->block;
  b->before = op;
}

void tl_builder_set_after(TlBuilder *b, TlOp *op) {
  b->block = op->block;
  b->before = op->next;
}

void tl_builder_insert_op(TlBuilder *b, TlOp *op) {
  if (b->block)
    link_before(b->block, op, b->before);
}

TlOp *tl_builder_insert(TlBuilder *b, TlOpState *st) {
  TlOp *op = tl_op_create(b->module, st);
  tl_builder_insert_op(b, op);
  return op;
}

TlOp *tl_builder_create(TlBuilder *b, const char *name, TlLoc loc,
                        unsigned nops, TlValue *const *ops, unsigned nres,
                        TlType *const *res) {
  const TlOpDef *def = tl_context_op_def(b->module->ctx, name);
  if (!def)
    TL_UNREACHABLE("tl_builder_create: unregistered op");
  TlOpState st;
  tl_op_state_init(&st, b->module->ctx, def, loc);
  tl_op_state_add_operands(&st, nops, ops);
  for (unsigned i = 0; i < nres; i++)
    tl_op_state_add_result(&st, res[i]);
  return tl_builder_insert(b, &st);
}

TlOp *tl_build(TlBuilder *b, TlOpId id, unsigned nops, TlValue *const *ops,
               unsigned nres, TlType *const *res) {
  TlContext *ctx = b->module->ctx;
  const TlOpDef *def = tl_context_op_def_by_id(ctx, id);
  if (!def)
    TL_UNREACHABLE("tl_build: the op's dialect is not registered");
  TlOpState st;
  tl_op_state_init(&st, ctx, def, b->loc);
  tl_op_state_add_operands(&st, nops, ops);
  for (unsigned i = 0; i < nres; i++)
    tl_op_state_add_result(&st, res[i]);
  return tl_builder_insert(b, &st);
}

TlValue *tl_build1(TlBuilder *b, TlOpId id, unsigned nops,
                   TlValue *const *ops, TlType *res) {
  return tl_op_result(tl_build(b, id, nops, ops, 1, &res), 0);
}
