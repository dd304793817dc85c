/* The verifier: structural rules every op obeys (operands visible where
 * used, terminators in place, symbol uniqueness, the generic traits), then
 * each op's own verifier. Nested ops are verified before the op that holds
 * them, so an op's verifier may rely on well-formed regions. */
#include "ir_internal.h"

#include <string.h>

/* Whether value v may be used by op `user`: v is defined in a block that
 * encloses user (as an argument, or by an op before user's ancestor in that
 * block), with no isolated op in between. */
static bool visible(TlValue *v, TlOp *user, bool *crosses_isolation) {
  TlBlock *defblock = v->op ? v->op->block : v->block;
  bool isolated = false;
  *crosses_isolation = false;
  if (!defblock)
    return false;
  for (TlOp *o = user; o; o = tl_op_parent(o)) {
    if (o->block == defblock) {
      if (isolated) {
        *crosses_isolation = true;
        return false;
      }
      return !v->op || tl_op_before_in_block(v->op, o);
    }
    TlOp *parent = tl_op_parent(o);
    if (parent && (parent->def->traits & TL_TRAIT_ISOLATED))
      isolated = true;
  }
  return false;
}

static TlResult verify_op(TlOp *op);

static TlResult verify_structure(TlOp *op) {
  TlContext *ctx = op->module->ctx;
  unsigned tr = op->def->traits;
  for (unsigned i = 0; i < op->noperands; i++) {
    TlValue *v = op->operands[i].value;
    if (!v) {
      tl_op_emit_error(op, "operand #%u is null", i);
      return TL_FAILURE;
    }
    bool iso;
    if (!visible(v, op, &iso)) {
      if (iso)
        tl_op_emit_error(op, "operand #%u is defined outside of this isolated "
                             "region", i);
      else
        tl_op_emit_error(op, "operand #%u does not dominate this use", i);
      if (tl_loc_is_known(tl_value_loc(v)))
        tl_emit_note(ctx, tl_value_loc(v), "operand defined here");
      return TL_FAILURE;
    }
  }
  if (tr & TL_TRAIT_TERMINATOR) {
    if (!op->block || op->block->last != op) {
      tl_op_emit_error(op, "must be the last operation in its block");
      return TL_FAILURE;
    }
  }
  if ((tr & TL_TRAIT_SYMBOL) && !tl_symbol_name(op)) {
    tl_op_emit_error(op, "requires a string attribute 'sym_name'");
    return TL_FAILURE;
  }
  if ((tr & TL_TRAIT_CONSTANT) && !tl_op_attr(op, "value")) {
    tl_op_emit_error(op, "requires attribute 'value'");
    return TL_FAILURE;
  }
  if (tr & TL_TRAIT_SAME_TYPE) {
    TlType *t = op->noperands ? op->operands[0].value->type
                : op->nresults ? op->results[0].type
                               : NULL;
    for (unsigned i = 0; i < op->noperands; i++)
      if (op->operands[i].value->type != t) {
        tl_op_emit_error(op, "requires all operands and results to have the "
                             "same type");
        return TL_FAILURE;
      }
    for (unsigned i = 0; i < op->nresults; i++)
      if (op->results[i].type != t) {
        tl_op_emit_error(op, "requires all operands and results to have the "
                             "same type");
        return TL_FAILURE;
      }
  }
  for (unsigned r = 0; r < op->nregions; r++) {
    TlRegion *reg = op->regions[r];
    unsigned nblocks = 0;
    for (TlBlock *b = reg->first; b; b = b->next)
      nblocks++;
    if ((tr & TL_TRAIT_SINGLE_BLOCK) && nblocks != 1) {
      tl_op_emit_error(op, "region #%u must have exactly one block", r);
      return TL_FAILURE;
    }
    if (nblocks > 1) {
      tl_op_emit_error(op, "region #%u has %u blocks; TL regions hold one", r,
                       nblocks);
      return TL_FAILURE;
    }
    for (TlBlock *b = reg->first; b; b = b->next) {
      /* Nested ops first: a terminator that is not last says so itself. */
      for (TlOp *o = b->first; o; o = o->next)
        if (TL_FAILED(verify_op(o)))
          return TL_FAILURE;
      if (!(tr & TL_TRAIT_NO_TERMINATOR)) {
        TlOp *t = tl_block_terminator(b);
        if (!t) {
          if (b->last)
            tl_op_emit_error(b->last,
                             "block of '%s' must end with a terminator, not "
                             "this op",
                             op->def->name);
          else
            tl_op_emit_error(op, "region #%u's block must end with a "
                                 "terminator",
                             r);
          return TL_FAILURE;
        }
      }
    }
  }
  if (tr & TL_TRAIT_SYMBOL_TABLE) {
    for (unsigned r = 0; r < op->nregions; r++)
      for (TlBlock *b = op->regions[r]->first; b; b = b->next)
        for (TlOp *o = b->first; o; o = o->next) {
          const char *n = tl_symbol_name(o);
          if (!n)
            continue;
          for (TlOp *q = b->first; q != o; q = q->next) {
            const char *m = tl_symbol_name(q);
            if (m && strcmp(m, n) == 0) {
              tl_op_emit_error(o, "redefinition of symbol '@%s'", n);
              tl_emit_note(ctx, q->loc, "previous definition is here");
              return TL_FAILURE;
            }
          }
        }
  }
  return TL_SUCCESS;
}

static const char *plural(unsigned n) { return n == 1 ? "" : "s"; }

/* The counts an op's table row fixes (tl/ops.h), checked for every op
 * before its verify hook runs: a hook may index operands and results the
 * row fixes without checking them. */
static TlResult verify_counts(TlOp *op) {
  int no = op->def->num_operands, nr = op->def->num_results;
  unsigned ho = op->noperands, hr = op->nresults;
  bool okops = no == TL_VARIADIC || (unsigned)no == ho;
  bool okres = nr == TL_VARIADIC || (unsigned)nr == hr;
  if (okops && okres)
    return TL_SUCCESS;
  if (no != TL_VARIADIC && nr != TL_VARIADIC)
    tl_op_emit_error(op, "expects %d operand%s and %d result%s, but has %u and %u",
                     no, plural((unsigned)no), nr, plural((unsigned)nr), ho, hr);
  else if (!okops)
    tl_op_emit_error(op, "expects %d operand%s, but has %u", no,
                     plural((unsigned)no), ho);
  else
    tl_op_emit_error(op, "expects %d result%s, but has %u", nr,
                     plural((unsigned)nr), hr);
  return TL_FAILURE;
}

static TlResult verify_op(TlOp *op) {
  if (TL_FAILED(verify_structure(op)) || TL_FAILED(verify_counts(op)))
    return TL_FAILURE;
  if (op->def->verify && TL_FAILED(op->def->verify(op)))
    return TL_FAILURE;
  return TL_SUCCESS;
}

TlResult tl_verify(TlOp *op) { return verify_op(op); }
