/* The greedy pattern driver.
 *
 * Every op nested in the root goes on a worklist (in program order). For
 * each op taken off it: erase it if it is dead (pure, unused, not a
 * terminator); else fold it; else try its patterns. Whatever a change
 * touches (users of replaced values, definers of dropped operands, new ops)
 * goes back on the worklist. Sweeps repeat until one changes nothing.
 *
 * Constants produced by folding are materialized once per isolated region,
 * at the start of its entry block, and existing constants are deduplicated
 * and hoisted there as well; they are pure, so this is always legal. */
#include "ir_internal.h"
#include "tl/rewrite.h"

#include <string.h>

struct TlRewriter {
  TlBuilder builder;
  TL_VEC(TlOp *) worklist;
  const TlRewriteConfig *cfg;
  TlRewriteStats stats;
  bool changed;
  /* Constants hoisted per entry block: (block, attr, type) -> op. */
  TL_VEC(TlOp *) constants;
};

static void push(TlRewriter *rw, TlOp *op) {
  if (!op || op->erased || op->in_worklist)
    return;
  op->in_worklist = true;
  tl_vec_push(&rw->worklist, op);
}

static void push_users(TlRewriter *rw, TlValue *v) {
  for (TlUse *u = v->uses; u; u = u->next)
    push(rw, u->owner);
}

TlBuilder *tl_rewriter_builder(TlRewriter *rw) { return &rw->builder; }

void tl_rewriter_notify_created(TlRewriter *rw, TlOp *op) {
  rw->changed = true;
  push(rw, op);
}

void tl_rewriter_notify_modified(TlRewriter *rw, TlOp *op) {
  rw->changed = true;
  push(rw, op);
  for (unsigned i = 0; i < op->nresults; i++)
    push_users(rw, &op->results[i]);
}

void tl_rewriter_erase_op(TlRewriter *rw, TlOp *op) {
  rw->changed = true;
  rw->stats.erased++;
  for (unsigned i = 0; i < op->noperands; i++) {
    TlValue *v = op->operands[i].value;
    if (v && v->op)
      push(rw, v->op);
  }
  for (size_t i = 0; i < rw->constants.len; i++)
    if (rw->constants.data[i] == op)
      rw->constants.data[i] = rw->constants.data[--rw->constants.len];
  tl_op_erase(op);
}

void tl_rewriter_replace_op(TlRewriter *rw, TlOp *op, TlValue *const *values) {
  for (unsigned i = 0; i < op->nresults; i++) {
    push_users(rw, &op->results[i]);
    tl_value_replace_all_uses(&op->results[i], values[i]);
  }
  tl_rewriter_erase_op(rw, op);
}

void tl_rewriter_update_operands(TlRewriter *rw, TlOp *op, unsigned n,
                                 TlValue *const *values) {
  for (unsigned i = 0; i < op->noperands; i++) {
    TlValue *v = op->operands[i].value;
    if (v && v->op)
      push(rw, v->op);
  }
  tl_op_set_operands(op, n, values);
  tl_rewriter_notify_modified(rw, op);
}

/*===--- Constants -------------------------------------------------------===*/

/* The entry block of the closest isolated ancestor: where constants go. */
static TlBlock *constant_block(TlOp *op) {
  TlOp *o = op;
  while (o->block) {
    TlOp *parent = tl_op_parent(o);
    if (!parent || (parent->def->traits & TL_TRAIT_ISOLATED))
      return o->block->region->first;
    o = parent;
  }
  return NULL;
}

static TlOp *find_constant(TlRewriter *rw, TlBlock *b, TlAttr *value,
                           TlType *type) {
  for (size_t i = 0; i < rw->constants.len; i++) {
    TlOp *c = rw->constants.data[i];
    if (c->block == b && c->results[0].type == type &&
        tl_op_attr(c, "value") == value)
      return c;
  }
  return NULL;
}

static const TlDialectDef *dialect_of(TlContext *ctx, const TlOpDef *def) {
  const char *dot = strchr(def->name, '.');
  char buf[64];
  size_t n = dot ? (size_t)(dot - def->name) : 0;
  if (!n || n >= sizeof buf)
    return NULL;
  memcpy(buf, def->name, n);
  buf[n] = 0;
  return tl_context_dialect(ctx, buf);
}

/* A constant op producing value of type for use by op, or NULL. */
static TlValue *materialize(TlRewriter *rw, TlOp *op, TlAttr *value,
                            TlType *type) {
  TlBlock *b = constant_block(op);
  if (!b)
    return NULL;
  TlOp *c = find_constant(rw, b, value, type);
  if (c)
    return &c->results[0];
  const TlDialectDef *d = dialect_of(op->module->ctx, op->def);
  if (!d || !d->materialize_constant)
    return NULL;
  TlBuilder cb;
  tl_builder_init(&cb, op->module);
  if (b->first)
    tl_builder_set_before(&cb, b->first);
  else
    tl_builder_set_end(&cb, b);
  c = d->materialize_constant(&cb, value, type, op->loc);
  if (!c)
    return NULL;
  tl_vec_push(&rw->constants, c);
  rw->changed = true;
  return &c->results[0];
}

/* Dedups and hoists an existing constant op. True if it changed the IR. */
static bool process_constant(TlRewriter *rw, TlOp *op) {
  TlBlock *b = constant_block(op);
  TlAttr *value = tl_op_attr(op, "value");
  if (!b || op->nresults != 1 || !value)
    return false;
  TlOp *c = find_constant(rw, b, value, op->results[0].type);
  if (c == op)
    return false;
  if (c) {
    push_users(rw, &op->results[0]);
    tl_value_replace_all_uses(&op->results[0], &c->results[0]);
    tl_rewriter_erase_op(rw, op);
    return true;
  }
  tl_vec_push(&rw->constants, op);
  if (op->block == b)
    return false;
  tl_op_take(op);
  if (b->first)
    tl_op_insert_before(op, b->first);
  else
    tl_block_append(b, op);
  rw->changed = true;
  return true;
}

/*===--- Folding ---------------------------------------------------------===*/

static TlAttr *constant_value(TlValue *v) {
  TlOp *d = v ? v->op : NULL;
  if (!d || !(d->def->traits & TL_TRAIT_CONSTANT))
    return NULL;
  return tl_op_attr(d, "value");
}

static bool try_fold(TlRewriter *rw, TlOp *op) {
  if (op->def->traits & TL_TRAIT_CONSTANT)
    return process_constant(rw, op);
  /* Commutative ops keep constants on the right, so patterns and folders
   * need to look in one place only. */
  if ((op->def->traits & TL_TRAIT_COMMUTATIVE) && op->noperands == 2 &&
      constant_value(op->operands[0].value) &&
      !constant_value(op->operands[1].value)) {
    TlValue *sw[2] = {op->operands[1].value, op->operands[0].value};
    tl_rewriter_update_operands(rw, op, 2, sw);
    return true;
  }
  if (!op->def->fold || op->nresults == 0)
    return false;
  TlAttr *cbuf[8], **c = op->noperands <= 8 ? cbuf : tl_xmalloc(sizeof *c * op->noperands);
  TlFoldResult rbuf[8], *r = op->nresults <= 8 ? rbuf : tl_xmalloc(sizeof *r * op->nresults);
  for (unsigned i = 0; i < op->noperands; i++)
    c[i] = constant_value(op->operands[i].value);
  memset(r, 0, sizeof *r * op->nresults);
  bool done = false;
  if (!TL_FAILED(op->def->fold(op, c, r))) {
    TlValue *vbuf[8], **vals = op->nresults <= 8 ? vbuf : tl_xmalloc(sizeof *vals * op->nresults);
    bool ok = true;
    for (unsigned i = 0; i < op->nresults && ok; i++) {
      if (r[i].value)
        vals[i] = r[i].value;
      else if (r[i].attr)
        ok = (vals[i] = materialize(rw, op, r[i].attr, op->results[i].type)) != NULL;
      else
        ok = false;
    }
    if (ok) {
      rw->stats.folded++;
      tl_rewriter_replace_op(rw, op, vals);
      done = true;
    }
    if (vals != vbuf)
      tl_free(vals);
  }
  if (c != cbuf)
    tl_free(c);
  if (r != rbuf)
    tl_free(r);
  return done;
}

/*===--- Driver ----------------------------------------------------------===*/

static bool is_dead(TlOp *op) {
  if (!op->block || (op->def->traits & TL_TRAIT_TERMINATOR))
    return false;
  for (unsigned i = 0; i < op->nresults; i++)
    if (op->results[i].uses)
      return false;
  return tl_op_is_pure(op);
}

static bool try_patterns(TlRewriter *rw, TlOp *op, const TlPattern *ps) {
  for (; ps && ps->apply; ps++) {
    if (ps->root && ps->root != op->def->id)
      continue;
    tl_builder_set_before(&rw->builder, op);
    if (!TL_FAILED(ps->apply(rw, op))) {
      rw->stats.patterns_applied++;
      rw->changed = true;
      return true;
    }
  }
  return false;
}

static void collect(TlOp *op, void *user) {
  TlRewriter *rw = user;
  push(rw, op);
}

TlResult tl_apply_patterns_greedily(TlOp *root, const TlRewriteConfig *cfg,
                                    TlRewriteStats *stats) {
  TlRewriter rw;
  memset(&rw, 0, sizeof rw);
  rw.cfg = cfg;
  tl_builder_init(&rw.builder, root->module);
  unsigned max_iter = cfg->max_iterations ? cfg->max_iterations : 10;
  TlResult result = TL_FAILURE;
  for (unsigned iter = 0; iter < max_iter; iter++) {
    rw.stats.iterations++;
    rw.changed = false;
    rw.constants.len = 0;
    /* Program order: push everything, then reverse so pops come first-op
     * first. */
    for (unsigned r = 0; r < root->nregions; r++)
      for (TlBlock *b = root->regions[r]->first; b; b = b->next)
        for (TlOp *o = b->first; o; o = o->next)
          tl_op_walk(o, collect, &rw, false);
    for (size_t i = 0, j = rw.worklist.len; i < j / 2; i++) {
      TlOp *t = rw.worklist.data[i];
      rw.worklist.data[i] = rw.worklist.data[j - 1 - i];
      rw.worklist.data[j - 1 - i] = t;
    }
    while (rw.worklist.len) {
      TlOp *op = tl_vec_pop(&rw.worklist);
      op->in_worklist = false;
      if (op->erased || op == root)
        continue;
      if (is_dead(op)) {
        tl_rewriter_erase_op(&rw, op);
        continue;
      }
      if (cfg->fold && try_fold(&rw, op))
        continue;
      if (cfg->canonical_patterns && try_patterns(&rw, op, op->def->patterns)) {
        push(&rw, op);
        continue;
      }
      for (const TlPattern *const *e = cfg->extra; e && *e; e++)
        if (try_patterns(&rw, op, *e)) {
          push(&rw, op);
          break;
        }
    }
    if (!rw.changed) {
      result = TL_SUCCESS;
      break;
    }
  }
  for (size_t i = 0; i < rw.worklist.len; i++)
    rw.worklist.data[i]->in_worklist = false;
  if (TL_FAILED(result) && cfg->require_convergence)
    tl_op_emit_error(root, "pattern rewriting did not converge in %u "
                           "iterations",
                     max_iter);
  else
    result = TL_SUCCESS;
  tl_vec_free(&rw.worklist);
  tl_vec_free(&rw.constants);
  if (stats)
    *stats = rw.stats;
  return result;
}
