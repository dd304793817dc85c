/* tl.print through the device printf, in the block VM's format. */
#include "lower.h"

/* A value of element type e as a printf operand and its conversion, in
 * the block VM's style: integers in decimal, floats with enough digits to
 * identify them within their type. NULL for types print cannot show. */
static TlValue *print_arg(Lower *L, TlValue *v, TlType *e, const char **spec) {
  TlType *f32 = tl_type_f32(L->ctx);
  if (tl_type_is_int(e)) {
    unsigned w = tl_type_int_width(e);
    bool sg = tl_type_int_signed(e) && !tl_type_is_bool(e);
    if (w == 64) {
      *spec = sg ? "%lld" : "%llu";
      return v;
    }
    *spec = sg ? "%d" : "%u";
    TlType *t32 = sg ? lw_i32(L) : lw_u32(L);
    return tl_value_type(v) == t32 ? v : tl_arith_exti(&L->b, v, t32);
  }
  if (lw_is_f(e, 11, 52)) {
    *spec = "%.17g";
    return v;
  }
  if (lw_is_f(e, 8, 23) || lw_is_f(e, 5, 10) || lw_is_f(e, 8, 7)) {
    *spec = lw_is_f(e, 8, 23) ? "%.9g" : "%.5g";
    return tl_value_type(v) == f32 ? v : tl_arith_extf(&L->b, v, f32);
  }
  return NULL;
}

/* `FILE:LINE:COL: TYPE` of a print, with % doubled for printf. */
static void print_where(TlOp *op, TlType *t, TlStr *out) {
  TlLoc l = tl_op_loc(op);
  for (const char *c = l.file ? l.file : "<unknown>"; *c; c++)
    tl_str_printf(out, *c == '%' ? "%%%%" : "%c", *c);
  tl_str_printf(out, ":%u:%u: ", l.line, l.col);
  TlStr ts = {0};
  tl_type_print(t, &ts);
  tl_str_printf(out, "%s", tl_str_cstr(&ts));
  tl_str_free(&ts);
}

/* A device printf of args[0..n) with the format fmt. */
static void emit_printf(Lower *L, const char *fmt, unsigned n,
                        TlValue *const *args) {
  TlOp *op = tl_build(&L->b, TL_OP_SIMT_PRINTF, n, args, 0, NULL);
  tl_op_set_attr(op, "format", lw_str(L, fmt));
}

/* tl.print through the device printf. A scalar: thread 0 of each block
 * prints `block (x, y, z): WHERE: TYPE = VALUE`, as the block VM does. A
 * tile: each element once (replicas skipped), by the thread that holds
 * it, as `block (x, y, z) thread T: WHERE: TYPE[i, j] = VALUE`, in the
 * device's order. */
bool lw_lower_print(Lower *L, TlOp *op) {
  TlValue *v = tl_op_operand(op, 0);
  TlType *t = tl_value_type(v);
  static const char *const dims[] = {"x", "y", "z"};
  TlValue *blk[3];
  for (int d = 0; d < 3; d++)
    blk[d] = lw_index_reg(L, TL_OP_SIMT_BLOCK_ID, dims[d]);
  TlStr fmt = {0};
  const char *spec;
  if (tl_tensor_kind(t) != TL_TENSOR_REG) {
    TlValue *a = print_arg(L, lw_scalar(L, v), t, &spec);
    if (!a) {
      tl_str_free(&fmt);
      return lw_fail(L, op, "prints of this scalar type");
    }
    tl_str_printf(&fmt, "block (%%d, %%d, %%d): ");
    print_where(op, t, &fmt);
    tl_str_printf(&fmt, " = %s\n", spec);
    TlBuilder outside = lw_open_guard(
        L, tl_arith_cmpi(&L->b, "eq", L->tid, lw_cst(L, lw_i32(L), 0)));
    TlValue *args[4] = {blk[0], blk[1], blk[2], a};
    emit_printf(L, tl_str_cstr(&fmt), 4, args);
    lw_close_guard(L, outside);
    tl_str_free(&fmt);
    return true;
  }
  Tile *x = lw_tile_of(L, v);
  const TlLayout *l = tl_reg_layout(t);
  TlType *e = tl_tensor_elem(t);
  TlValue *guard = lw_writer_guard(L, l);
  TlBuilder outside = guard ? lw_open_guard(L, guard) : L->b;
  bool ok = true;
  for (int64_t i = 0; i < tl_layout_local_size(l) && ok; i++) {
    TlType *ct;
    TlValue *val = lw_decode(L, x, (unsigned)i, &ct), *idx[TL_LAYOUT_MAX_RANK];
    TlValue *a = val ? print_arg(L, val, e, &spec) : NULL;
    if (!a) {
      ok = lw_fail(L, op,
                   "prints of tiles of this element type (cast them first)");
      break;
    }
    lw_index_of(L, l, i, idx);
    tl_str_clear(&fmt);
    tl_str_printf(&fmt, "block (%%d, %%d, %%d) thread %%d: ");
    print_where(op, t, &fmt);
    TlValue *args[4 + TL_LAYOUT_MAX_RANK + 1] = {blk[0], blk[1], blk[2],
                                                 L->tid};
    for (int d = 0; d < l->rank; d++) {
      tl_str_printf(&fmt, d ? ", %%lld" : "[%%lld");
      args[4 + d] = idx[d];
    }
    tl_str_printf(&fmt, "] = %s\n", spec);
    args[4 + l->rank] = a;
    emit_printf(L, tl_str_cstr(&fmt), 5 + (unsigned)l->rank, args);
  }
  if (guard)
    lw_close_guard(L, outside);
  tl_str_free(&fmt);
  return ok;
}
