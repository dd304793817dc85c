/* test-print-alignment: writes what the divisibility analysis
 * (exec/analysis/divisibility.c) proves into the IR, for lit tests.
 * Requires: verified IR.
 * Does, in every tl.kernel: on each op with integer results, a
 * `divisibility` attribute (i64 for one result; for several, an array of
 * i64 with 0 for a result that is not an integer); on each op whose
 * regions' entry blocks have integer or pointer arguments (the kernel's
 * parameters, scf.for's induction variable and iter_args, scf.while's
 * arguments), `arg_divisibility`: an array over those arguments, region by
 * region, 0 for the others; on each tl.load_global, tl.store_global and
 * tl.copy_async, `access_alignment = {first, row, element, contiguous}`
 * (tl_analysis_access_alignment). Fails with the analysis's errors for a
 * malformed `assume`.
 * Guarantees: verified IR with the same meaning (only attributes added). */
#include "passes_internal.h"
#include "tl/analysis.h"
#include "tl/tl.h"

#include <string.h>

const TlPassOptionDef tl_pass_test_print_alignment_options[] = {
    {NULL, 0, NULL, NULL}};

static bool tracked(TlType *t) {
  return tl_type_is_int(t) || tl_type_is_ptr(t);
}

typedef struct Ctx {
  TlAnalysis *a;
  TlContext *ctx;
  TlType *i64;
} Ctx;

static TlAttr *num(Ctx *c, int64_t v) { return tl_attr_int(c->ctx, c->i64, v); }

static void annotate(TlOp *op, void *user) {
  Ctx *c = user;
  TL_VEC(TlAttr *) v = {0};
  bool any = false;
  for (unsigned i = 0; i < tl_op_num_results(op); i++) {
    TlValue *r = tl_op_result(op, i);
    any |= tracked(tl_value_type(r));
    tl_vec_push(&v, num(c, tl_analysis_divisibility(c->a, r)));
  }
  if (any)
    tl_op_set_attr(op, "divisibility",
                   v.len == 1 ? v.data[0]
                              : tl_attr_array(c->ctx, (unsigned)v.len, v.data));
  v.len = 0;
  any = false;
  for (unsigned r = 0; r < tl_op_num_regions(op); r++) {
    TlBlock *b = tl_region_first_block(tl_op_region(op, r));
    for (unsigned i = 0; b && i < tl_block_num_args(b); i++) {
      TlValue *arg = tl_block_arg(b, i);
      any |= tracked(tl_value_type(arg));
      tl_vec_push(&v, num(c, tl_analysis_divisibility(c->a, arg)));
    }
  }
  if (any)
    tl_op_set_attr(op, "arg_divisibility",
                   tl_attr_array(c->ctx, (unsigned)v.len, v.data));
  tl_vec_free(&v);
  TlAccessAlignment al;
  if (tl_analysis_access_alignment(c->a, op, &al)) {
    TlNamedAttr e[4] = {
        {tl_context_intern(c->ctx, "first", 5), num(c, al.first)},
        {tl_context_intern(c->ctx, "row", 3), num(c, al.row)},
        {tl_context_intern(c->ctx, "element", 7), num(c, al.element)},
        {tl_context_intern(c->ctx, "contiguous", 10), num(c, al.contiguous)}};
    tl_op_set_attr(op, "access_alignment", tl_attr_dict(c->ctx, 4, e));
  }
}

TlResult tl_pass_test_print_alignment(TlOp *module, const TlPassOptions *opts) {
  TlResult res = TL_SUCCESS;
  TlContext *ctx = tl_op_context(module);
  for (unsigned i = 0; i < tl_op_num_regions(module); i++)
    for (TlBlock *b = tl_region_first_block(tl_op_region(module, i)); b;
         b = tl_block_next(b))
      for (TlOp *op = tl_block_first_op(b); op; op = tl_op_next(op)) {
        if (tl_op_id(op) != TL_OP_TL_KERNEL)
          continue;
        Ctx c = {tl_analysis_run(op), ctx, tl_type_int(ctx, 64, true)};
        if (!c.a) {
          res = TL_FAILURE;
          continue;
        }
        tl_op_walk(op, annotate, &c, false);
        tl_analysis_destroy(c.a);
      }
  return res;
}
