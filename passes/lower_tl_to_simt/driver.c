/* lower-tl-to-simt: turns each tl.kernel into one thread's program, a
 * builtin func with the `kernel` attribute written in simt, arith and scf
 * (what tl-llc compiles), as Tilus §8.1 does. lower.h describes how the
 * kernel's values are represented; this file holds the pass entry, the
 * kernel's func, the op dispatch and the structured control flow, whose
 * regions are lowered in place over the expanded values.
 *
 * Instruction selection (docs/lowering.md):
 *   - tl.dot becomes mma.sync when the operand layouts are tilings of the
 *     fragment atoms of an mma form for their types (f16/bf16 m16n8k16 and
 *     m16n8k8, i8/u8 m16n8k32, u1 m16n8k256 and m8n8k128; decided by
 *     layout division), one instruction per (m, n, k) block, k ascending
 *     (dot.c);
 *   - global and shared loads and stores move the widest runs (up to 16
 *     bytes) the layouts and the alignment analysis allow; shared loads
 *     whose register layout tiles the ldmatrix fragment use ldmatrix
 *     (global.c, shared.c);
 *   - casts from types of at most 8 bits to f16, bf16 and f32 run the dtype
 *     library's register recipes (lop3/prmt/magic-number programs); f32
 *     pairs into f16/bf16 use one cvt.rn.{f16,bf16}x2.f32; other casts
 *     decode each element to a 32-bit int or f32 and encode it again
 *     (elementwise.c).
 * What is not lowered yet is reported at the op, never miscompiled.
 *
 * Requires: verified IR. Guarantees: no tl op is left; the funcs verify. */
#include "../passes_internal.h"
#include "lower.h"

/* The most dynamic shared memory a block may use (sm_90's 227 KB). */

const TlPassOptionDef tl_pass_lower_tl_to_simt_options[] = {
    {NULL, 0, NULL, NULL}};

/*===--- Control flow ----------------------------------------------------===*/

static bool lower_block(Lower *L, TlBlock *blk);

typedef TL_VEC(TlValue *) ValueVec;

/* Loop and if signatures carry tiles as their words: appends the lowered
 * values v expands to, its tile's words or its scalar. */
static void expand_value(Lower *L, TlValue *v, ValueVec *out) {
  Tile *t = lw_tile_of(L, v);
  if (t) {
    for (unsigned i = 0; i < t->nwords; i++)
      tl_vec_push(out, t->words[i]);
  } else {
    tl_vec_push(out, lw_scalar(L, v));
  }
}

/* Maps olds[0..n) to the values of news in order, the inverse of
 * expand_value: a tile takes as many as it has words, a scalar one. */
static void bind_expanded(Lower *L, unsigned n, TlValue *const *olds,
                          TlValue *const *news) {
  unsigned k = 0;
  for (unsigned i = 0; i < n; i++) {
    TlType *t = tl_value_type(olds[i]);
    if (tl_tensor_kind(t) == TL_TENSOR_REG) {
      Tile *tile = lw_new_tile(L, t);
      for (unsigned j = 0; j < tile->nwords; j++)
        tile->words[j] = news[k++];
      lw_put_tile(L, olds[i], tile);
    } else {
      lw_put_scalar(L, olds[i], news[k++]);
    }
  }
}

/* Maps the results of the old op to the expanded results of its lowered
 * form. */
static void bind_results(Lower *L, TlOp *op, TlOp *nop) {
  unsigned n = tl_op_num_results(op);
  ValueVec res = {0};
  for (unsigned i = 0; i < tl_op_num_results(nop); i++)
    tl_vec_push(&res, tl_op_result(nop, i));
  TlValue **oldres = tl_xmalloc(sizeof *oldres * (n + 1));
  for (unsigned i = 0; i < n; i++)
    oldres[i] = tl_op_result(op, i);
  bind_expanded(L, n, oldres, res.data);
  tl_free(oldres);
  tl_vec_free(&res);
}

typedef TL_VEC(TlType *) TypeVec;

/* Appends the types a value of type t expands to: a tile's words (u32),
 * else the scalar's lowered type (pointers into global memory). */
static void expand_type(Lower *L, TlType *t, TypeVec *out) {
  if (tl_tensor_kind(t) == TL_TENSOR_REG) {
    for (unsigned j = lw_tile_words(t); j > 0; j--)
      tl_vec_push(out, lw_u32(L));
  } else {
    tl_vec_push(
        out, tl_type_is_ptr(t) ? tl_simt_ptr_type(L->ctx, TL_SIMT_GLOBAL) : t);
  }
}

/* Lowers region r of the old op into a new block of region r of nop:
 * block arguments expanded, the body lowered, the terminator (same op)
 * rebuilt at its location over expanded operands, its first `keep`
 * operands as they are (scf.condition's flag). */
static bool lower_region_into(Lower *L, TlOp *op, TlOp *nop, unsigned r,
                              unsigned keep) {
  TlBlock *ob = tl_region_first_block(tl_op_region(op, r)),
          *nb = tl_block_create(L->module);
  tl_region_append_block(tl_op_region(nop, r), nb);
  unsigned na = tl_block_num_args(ob);
  TypeVec types = {0};
  for (unsigned i = 0; i < na; i++)
    expand_type(L, tl_value_type(tl_block_arg(ob, i)), &types);
  ValueVec args = {0};
  for (size_t i = 0; i < types.len; i++)
    tl_vec_push(&args, tl_block_add_arg(nb, types.data[i], L->b.loc));
  TlValue **olds = tl_xmalloc(sizeof *olds * (na + 1));
  for (unsigned i = 0; i < na; i++)
    olds[i] = tl_block_arg(ob, i);
  bind_expanded(L, na, olds, args.data);
  tl_free(olds);
  TlBuilder saved = L->b;
  tl_builder_set_end(&L->b, nb);
  bool ok = lower_block(L, ob);
  if (ok) {
    TlOp *y = tl_block_terminator(ob);
    tl_builder_set_loc(&L->b, tl_op_loc(y));
    ValueVec outs = {0};
    for (unsigned i = 0; i < tl_op_num_operands(y); i++) {
      if (i < keep)
        tl_vec_push(&outs, lw_scalar(L, tl_op_operand(y, i)));
      else
        expand_value(L, tl_op_operand(y, i), &outs);
    }
    tl_build(&L->b, tl_op_id(y), (unsigned)outs.len, outs.data, 0, NULL);
    tl_vec_free(&outs);
  }
  L->b = saved;
  tl_vec_free(&types);
  tl_vec_free(&args);
  return ok;
}

/* scf.if: the same op over expanded results, each region lowered in
 * place and its yield expanded. */
static bool lower_if(Lower *L, TlOp *op) {
  unsigned n = tl_op_num_results(op);
  TypeVec types = {0};
  for (unsigned i = 0; i < n; i++)
    expand_type(L, tl_value_type(tl_op_result(op, i)), &types);
  TlOp *nif = lw_scf_if(L, lw_scalar(L, tl_op_operand(op, 0)),
                        (unsigned)types.len, types.data);
  bool ok = true;
  for (unsigned r = 0; r < 2 && ok; r++)
    if (!tl_region_empty(tl_op_region(op, r)))
      ok = lower_region_into(L, op, nif, r, 0);
  if (ok)
    bind_results(L, op, nif);
  tl_vec_free(&types);
  return ok;
}

/* scf.while: inits, results and both regions' arguments expanded. */
static bool lower_while(Lower *L, TlOp *op) {
  unsigned n = tl_op_num_results(op);
  ValueVec inits = {0};
  for (unsigned i = 0; i < tl_op_num_operands(op); i++)
    expand_value(L, tl_op_operand(op, i), &inits);
  TypeVec types = {0};
  for (unsigned i = 0; i < n; i++)
    expand_type(L, tl_value_type(tl_op_result(op, i)), &types);
  TlOpState st;
  tl_op_state_init(&st, L->ctx,
                   tl_context_op_def_by_id(L->ctx, TL_OP_SCF_WHILE), L->b.loc);
  tl_op_state_add_operands(&st, (unsigned)inits.len, inits.data);
  for (size_t i = 0; i < types.len; i++)
    tl_op_state_add_result(&st, types.data[i]);
  st.nregions = 2;
  TlOp *nw = tl_builder_insert(&L->b, &st);
  bool ok =
      lower_region_into(L, op, nw, 0, 1) && lower_region_into(L, op, nw, 1, 0);
  if (ok)
    bind_results(L, op, nw);
  tl_vec_free(&inits);
  tl_vec_free(&types);
  return ok;
}

/* scf.for: bounds and step as they are; inits, results and the body's
 * iteration arguments expanded. */
static bool lower_for(Lower *L, TlOp *op) {
  unsigned n = tl_op_num_results(op);
  ValueVec inits = {0};
  TypeVec types = {0};
  for (unsigned i = 0; i < n; i++)
    expand_value(L, tl_op_operand(op, 3 + i), &inits);
  for (size_t i = 0; i < inits.len; i++)
    tl_vec_push(&types, tl_value_type(inits.data[i]));
  TlOpState st;
  tl_op_state_init(&st, L->ctx, tl_context_op_def_by_id(L->ctx, TL_OP_SCF_FOR),
                   L->b.loc);
  for (unsigned i = 0; i < 3; i++)
    tl_op_state_add_operand(&st, lw_scalar(L, tl_op_operand(op, i)));
  tl_op_state_add_operands(&st, (unsigned)inits.len, inits.data);
  for (size_t i = 0; i < types.len; i++)
    tl_op_state_add_result(&st, types.data[i]);
  st.nregions = 1;
  TlOp *nf = tl_builder_insert(&L->b, &st);
  TlBlock *body = tl_block_create(L->module),
          *old = tl_region_first_block(tl_op_region(op, 0));
  tl_region_append_block(tl_op_region(nf, 0), body);
  TlValue *iv =
      tl_block_add_arg(body, tl_value_type(tl_block_arg(old, 0)), L->b.loc);
  lw_put_scalar(L, tl_block_arg(old, 0), iv);
  ValueVec args = {0};
  for (size_t i = 0; i < types.len; i++)
    tl_vec_push(&args, tl_block_add_arg(body, types.data[i], L->b.loc));
  TlValue **olds = tl_xmalloc(sizeof *olds * (n + 1));
  for (unsigned i = 0; i < n; i++)
    olds[i] = tl_block_arg(old, 1 + i);
  bind_expanded(L, n, olds, args.data);
  TlBuilder saved = L->b;
  tl_builder_set_end(&L->b, body);
  bool ok = lower_block(L, old);
  if (ok) {
    TlOp *y = tl_block_terminator(old);
    tl_builder_set_loc(&L->b, tl_op_loc(y));
    ValueVec outs = {0};
    for (unsigned i = 0; i < tl_op_num_operands(y); i++)
      expand_value(L, tl_op_operand(y, i), &outs);
    tl_build(&L->b, TL_OP_SCF_YIELD, (unsigned)outs.len, outs.data, 0, NULL);
    tl_vec_free(&outs);
  }
  L->b = saved;
  bind_results(L, op, nf);
  tl_free(olds);
  tl_vec_free(&inits);
  tl_vec_free(&types);
  tl_vec_free(&args);
  return ok;
}

/* An scf op; inside a warp branch (docs/langref.md) the writers of
 * replicated elements are chosen within each warp (lw_writer_guard). */
static bool lower_scf(Lower *L, TlOp *op) {
  bool branch = tl_uniformity_diverges(L->uni, op);
  L->warp_branch += branch;
  bool ok = tl_op_id(op) == TL_OP_SCF_FOR  ? lower_for(L, op)
            : tl_op_id(op) == TL_OP_SCF_IF ? lower_if(L, op)
                                           : lower_while(L, op);
  L->warp_branch -= branch;
  return ok;
}

/*===--- Ops -------------------------------------------------------------===*/

/* Ops of arith are per-thread scalars already: clone with mapped operands. */
static bool lower_scalar_op(Lower *L, TlOp *op) {
  TlOpState st;
  tl_op_state_init(&st, L->ctx, tl_op_def(op), L->b.loc);
  for (unsigned i = 0; i < tl_op_num_operands(op); i++) {
    TlValue *v = lw_scalar(L, tl_op_operand(op, i));
    if (!v) {
      tl_op_state_free(&st);
      return lw_fail(L, op, "an op using a tile where a scalar is expected");
    }
    tl_op_state_add_operand(&st, v);
  }
  for (unsigned i = 0; i < tl_op_num_results(op); i++)
    tl_op_state_add_result(&st, tl_value_type(tl_op_result(op, i)));
  for (unsigned i = 0; i < tl_op_num_attrs(op); i++)
    tl_op_state_set_attr(&st, tl_op_attr_at(op, i).name,
                         tl_op_attr_at(op, i).attr);
  TlOp *n = tl_builder_insert(&L->b, &st);
  for (unsigned i = 0; i < tl_op_num_results(op); i++) {
    tl_value_set_name_hint(tl_op_result(n, i),
                           tl_value_name_hint(tl_op_result(op, i)));
    lw_put_scalar(L, tl_op_result(op, i), tl_op_result(n, i));
  }
  return true;
}

/* tl.block_indices: the block's index, one simt.block_id per result. */
static bool lower_block_indices(Lower *L, TlOp *op) {
  static const char *const dims[] = {"x", "y", "z"};
  for (unsigned i = 0; i < tl_op_num_results(op); i++) {
    TlValue *v = lw_index_reg(L, TL_OP_SIMT_BLOCK_ID, dims[i]);
    tl_value_set_name_hint(v, tl_value_name_hint(tl_op_result(op, i)));
    lw_put_scalar(L, tl_op_result(op, i), v);
  }
  return true;
}

/* tl.warp_index: simt.warp_id, the linear thread index divided by 32.
 * The warp branches on it need no barrier: the verifier refused the ops
 * whose lowering waits for the block (docs/langref.md). */
static bool lower_warp_index(Lower *L, TlOp *op) {
  TlType *t = lw_i32(L);
  TlValue *v =
      tl_op_result(tl_build(&L->b, TL_OP_SIMT_WARP_ID, 0, NULL, 1, &t), 0);
  tl_value_set_name_hint(v, tl_value_name_hint(tl_op_result(op, 0)));
  lw_put_scalar(L, tl_op_result(op, 0), v);
  return true;
}

/* tl.template: the kernel's value of the parameter, a constant. */
static bool lower_template(Lower *L, TlOp *op) {
  TlOp *k = tl_enclosing_kernel(op);
  TlAttr *v =
      tl_attr_dict_get(tl_op_attr(k, "template"),
                       tl_attr_string_value(tl_op_attr(op, "name"), NULL));
  lw_put_scalar(
      L, tl_op_result(op, 0),
      lw_cst(L, tl_value_type(tl_op_result(op, 0)), tl_attr_int_value(v)));
  return true;
}

/* tl.set_max_registers: simt.setmaxnreg, which the warpgroups that reach
 * it run together (a warp branch taken by whole warpgroups; the
 * thread-level VM checks that). A block that is not whole warpgroups
 * cannot run it anywhere. */
static bool lower_set_max_registers(Lower *L, TlOp *op) {
  if (!tl_arch_has(L->arch, TL_FEATURE_SETMAXNREG))
    return lw_fail_feature(L, op,
                           "register reallocation runs as setmaxnreg",
                           TL_FEATURE_SETMAXNREG, NULL);
  if (L->threads % 128) {
    char msg[160];
    snprintf(msg, sizeof msg,
             "setmaxnreg runs in whole warpgroups of 128 threads, and a "
             "block of %u threads is not made of them",
             L->threads);
    return lw_fail(L, op, msg);
  }
  TlOp *s = tl_build(&L->b, TL_OP_SIMT_SETMAXNREG, 0, NULL, 0, NULL);
  tl_op_set_attr(s, "count", tl_op_attr(op, "count"));
  tl_op_set_attr(s, "action", tl_op_attr(op, "action"));
  return true;
}

/* Lowers one op of the kernel at L's builder; false after a diagnostic. */
/* A register tile lowers to one 32-bit value a word of each thread's
 * part, every op on it unrolled over them: past this many words a thread
 * the unrolled kernel is too big to compile (and could never fit in a
 * thread's 255 registers), so the lowering refuses it instead of running
 * out of memory. The VMs run such tiles (within their memory limit). */
enum { MAX_TILE_WORDS = 16384 };

static bool check_tile_sizes(TlOp *op) {
  for (unsigned i = 0; i < tl_op_num_results(op); i++) {
    TlType *t = tl_value_type(tl_op_result(op, i));
    if (tl_tensor_kind(t) != TL_TENSOR_REG)
      continue;
    int64_t n = tl_layout_local_size(tl_reg_layout(t));
    int64_t words = (n * (int64_t)lw_elem_bits(t) + 31) / 32;
    if (words > MAX_TILE_WORDS) {
      tl_op_emit_error(op,
                       "cannot lower: result %u is a register tile of %lld "
                       "elements a thread (%lld 32-bit words; the lowering "
                       "takes at most %d a thread)",
                       i, (long long)n, (long long)words, MAX_TILE_WORDS);
      return false;
    }
  }
  return true;
}

static bool lower_op(Lower *L, TlOp *op) {
  tl_builder_set_loc(&L->b, tl_op_loc(op));
  if (!check_tile_sizes(op))
    return false;
  switch (tl_op_id(op)) {
#define TL_OP(ID, fn, name, nops, nres, cls, traits, summary) case TL_OP_##ID:
#include "tl/ops/arith.def"
#undef TL_OP
    return lower_scalar_op(L, op); /* every arith op, from its table */
  case TL_OP_SCF_FOR:
  case TL_OP_SCF_IF:
  case TL_OP_SCF_WHILE:
    return lower_scf(L, op);
  case TL_OP_TL_BLOCK_INDICES:
    return lower_block_indices(L, op);
  case TL_OP_TL_WARP_INDEX:
    return lower_warp_index(L, op);
  case TL_OP_TL_TEMPLATE:
    return lower_template(L, op);
  case TL_OP_TL_ALLOC_GLOBAL:
    return lw_lower_alloc_global(L, op);
  case TL_OP_TL_VIEW_GLOBAL:
    return lw_lower_view_global(L, op);
  case TL_OP_TL_ALLOC_REGISTER:
    return lw_lower_alloc_register(L, op);
  case TL_OP_TL_LOAD_GLOBAL:
    return lw_lower_load_global(L, op);
  case TL_OP_TL_STORE_GLOBAL:
    return lw_lower_store_global(L, op);
  case TL_OP_TL_ATOMIC_RMW:
  case TL_OP_TL_ATOMIC_CAS:
    return lw_lower_atomic(L, op);
  case TL_OP_TL_FENCE:
    return lw_lower_fence(L, op);
  case TL_OP_TL_LOAD_SCALAR:
    return lw_lower_load_scalar(L, op);
  case TL_OP_TL_GATHER:
    return lw_lower_gather(L, op);
  case TL_OP_TL_VIEW:
  case TL_OP_TL_RESHAPE:
  case TL_OP_TL_PERMUTE:
  case TL_OP_TL_SLICE:
    return lw_lower_reinterpret(L, op);
  case TL_OP_TL_CAST:
    return lw_lower_cast(L, op);
  case TL_OP_TL_DOT:
    return lw_lower_dot(L, op);
  case TL_OP_TL_DOT_ASYNC:
    return lw_lower_dot_wgmma(L, op);
  case TL_OP_TL_DOT_WAIT: {
    TlOp *wait = tl_build(&L->b, TL_OP_SIMT_WGMMA_WAIT, 0, NULL, 0, NULL);
    tl_op_set_attr(wait, "n", tl_op_attr(op, "pending"));
    return true;
  }
  case TL_OP_TL_SET_MAX_REGISTERS:
    return lower_set_max_registers(L, op);
  case TL_OP_TL_ADD:
  case TL_OP_TL_SUB:
  case TL_OP_TL_MUL:
  case TL_OP_TL_DIV:
  case TL_OP_TL_MAX:
  case TL_OP_TL_MIN:
  case TL_OP_TL_AND:
  case TL_OP_TL_OR:
  case TL_OP_TL_XOR:
  case TL_OP_TL_MOD:
  case TL_OP_TL_SHL:
  case TL_OP_TL_SHR:
    return lw_lower_elementwise(L, op);
  case TL_OP_TL_FMA:
    return lw_lower_fma(L, op);
  case TL_OP_TL_NEG:
  case TL_OP_TL_ABS:
  case TL_OP_TL_NOT:
    return lw_lower_unary(L, op);
  case TL_OP_TL_PRINT:
    return lw_lower_print(L, op);
  case TL_OP_TL_EXP:
  case TL_OP_TL_EXP2:
  case TL_OP_TL_LOG2:
  case TL_OP_TL_SQRT:
  case TL_OP_TL_RSQRT:
    return lw_lower_math(L, op);
  case TL_OP_TL_CMP:
    return lw_lower_cmp(L, op);
  case TL_OP_TL_BROADCAST:
    return lw_lower_broadcast(L, op);
  case TL_OP_TL_REDUCE:
    return lw_lower_reduce(L, op);
  case TL_OP_TL_WHERE:
    return lw_lower_where(L, op);
  case TL_OP_TL_ALLOC_SHARED:
    return lw_lower_alloc_shared(L, op);
  case TL_OP_TL_FREE_SHARED:
    return true; /* the plan already reuses its bytes */
  case TL_OP_TL_LOAD_SHARED:
    return lw_lower_load_shared(L, op);
  case TL_OP_TL_STORE_SHARED:
    return lw_lower_store_shared(L, op);
  case TL_OP_TL_COPY_ASYNC:
    return tl_type_is_tensormap(tl_value_type(tl_op_operand(op, 1)))
               ? lw_lower_copy_tma(L, op)
               : lw_lower_copy_async(L, op);
  case TL_OP_TL_COPY_ASYNC_COMMIT:
    tl_build(&L->b, TL_OP_SIMT_CP_ASYNC_COMMIT, 0, NULL, 0, NULL);
    lw_tma_commit(L);
    return true;
  case TL_OP_TL_COPY_ASYNC_WAIT: {
    TlOp *wait = tl_build(&L->b, TL_OP_SIMT_CP_ASYNC_WAIT, 0, NULL, 0, NULL);
    tl_op_set_attr(wait, "pending", tl_op_attr(op, "pending"));
    lw_tma_wait(L, tl_attr_int_value(tl_op_attr(op, "pending")));
    return true;
  }
  case TL_OP_TL_ALLOC_RING:
    return lw_lower_alloc_ring(L, op);
  case TL_OP_TL_RING_ACQUIRE:
  case TL_OP_TL_RING_COMMIT:
  case TL_OP_TL_RING_WAIT:
  case TL_OP_TL_RING_RELEASE:
    return lw_lower_ring_op(L, op);
  case TL_OP_TL_SYNCHRONIZE:
    lw_tma_synchronize(L);
    lw_barrier(L);
    return true;
  /* tl.exit is block-uniform (it is reached under scalar conditions only,
   * which every thread holds alike), so every thread runs the simt.exit
   * together: no thread is left at a later barrier or warp-wide op. */
  case TL_OP_TL_EXIT:
    tl_build(&L->b, TL_OP_SIMT_EXIT, 0, NULL, 0, NULL);
    return true;
  default:
    return lw_fail(L, op, "this op");
  }
}

/* Lowers the ops of blk before its terminator, which the owner of the
 * block rebuilds. */
static bool lower_block(Lower *L, TlBlock *blk) {
  for (TlOp *op = tl_block_first_op(blk); op; op = tl_op_next(op)) {
    if (tl_op_has_trait(op, TL_TRAIT_TERMINATOR))
      return true;
    if (!lower_op(L, op) || L->failed)
      return false;
  }
  return true;
}

/*===--- Kernels ---------------------------------------------------------===*/

/* Grid-expression names for `threads`: template values only. */
static bool template_lookup(void *user, const char *name, size_t len,
                            int64_t *v) {
  TlAttr *templ = user;
  for (unsigned i = 0; i < tl_attr_dict_size(templ); i++) {
    TlNamedAttr e = tl_attr_dict_entry(templ, i);
    if (strlen(e.name) == len && !memcmp(e.name, name, len)) {
      *v = tl_attr_int_value(e.attr);
      return true;
    }
  }
  return false;
}

/* Replaces one tl.kernel by a kernel func. */
static bool lower_kernel(TlContext *ctx, const TlArch *arch, TlOp *k) {
  Lower L;
  memset(&L, 0, sizeof L);
  L.ctx = ctx;
  L.arch = arch;
  L.module = tl_op_module(k);
  tl_builder_init(&L.b, L.module);
  tl_builder_set_loc(&L.b, tl_op_loc(k));
  TlType *ft = tl_attr_type_value(tl_op_attr(k, "function_type"));
  unsigned n = tl_type_function_num_inputs(ft);
  int64_t threads = 0;
  size_t tlen;
  const char *ttext = tl_attr_string_value(tl_op_attr(k, "threads"), &tlen);
  TlErr err;
  bool known = tl_expr_eval(ttext, tlen, template_lookup,
                            tl_op_attr(k, "template"), &threads, &err, NULL);
  if (!known || threads < 1 || threads > 1024) {
    tl_op_emit_error(
        k,
        "cannot lower: threads per block must be a constant from 1 to "
        "1024 (template values allowed): %s",
        known ? "out of range" : err.msg);
    return false;
  }
  L.threads = (unsigned)threads;
  TL_VEC(TlType *) ins = {0};
  for (unsigned i = 0; i < n; i++) {
    TlType *t = tl_type_function_input(ft, i);
    tl_vec_push(&ins, tl_type_is_ptr(t) ? tl_simt_ptr_type(ctx, TL_SIMT_GLOBAL)
                      : tl_type_is_tensormap(t) ? tl_simt_tensormap_type(ctx)
                                                : t);
  }
  /* The global workspace, when the kernel allocates one, is one more
   * parameter after the kernel's own (the launcher allocates and zeroes
   * `workspace_bytes` for it). */
  tl_plan_global_workspace(k);
  int64_t ws_bytes = tl_attr_int_value(tl_op_attr(k, "workspace_bytes"));
  if (ws_bytes)
    tl_vec_push(&ins, tl_simt_ptr_type(ctx, TL_SIMT_GLOBAL));
  TlOpState st;
  tl_op_state_init(&st, ctx, tl_context_op_def_by_id(ctx, TL_OP_BUILTIN_FUNC),
                   L.b.loc);
  tl_op_state_set_attr(&st, "sym_name", tl_op_attr(k, "sym_name"));
  tl_op_state_set_attr(
      &st, "function_type",
      tl_attr_type(
          ctx, tl_type_function(ctx, (unsigned)ins.len, ins.data, 0, NULL)));
  if (ws_bytes)
    tl_op_state_set_attr(
        &st, "workspace_bytes",
        tl_attr_int(ctx, tl_type_int(ctx, 64, true), ws_bytes));
  tl_op_state_set_attr(&st, "kernel", tl_attr_unit(ctx));
  if (tl_op_attr(k, "min_blocks"))
    tl_op_state_set_attr(&st, "min_blocks", tl_op_attr(k, "min_blocks"));
  tl_op_state_set_attr(&st, "threads",
                       tl_attr_int(ctx, tl_type_int(ctx, 64, true), threads));
  /* What the runtime needs to launch it: the grid over the parameters. */
  tl_op_state_set_attr(&st, "grid", tl_op_attr(k, "grid"));
  tl_op_state_set_attr(&st, "arg_names", tl_op_attr(k, "arg_names"));
  tl_op_state_set_attr(&st, "template", tl_op_attr(k, "template"));
  st.nregions = 1;
  L.facts = tl_analysis_run(k);
  /* Shared tiles at their planned offsets, the total on the func. */
  if (L.facts && TL_FAILED(tl_plan_shared_memory(k, arch->max_smem))) {
    tl_analysis_destroy(L.facts);
    L.facts = NULL;
  }
  if (L.facts) {
    L.scratch_base = (tl_kernel_smem_bytes(k) + 15) / 16 * 16;
    tl_op_state_set_attr(
        &st, "smem_bytes",
        tl_attr_int(ctx, tl_type_int(ctx, 64, true), tl_kernel_smem_bytes(k)));
  }
  if (!L.facts) {
    tl_op_state_free(&st);
    tl_vec_free(&ins);
    return false;
  }
  tl_builder_set_before(&L.b, k);
  TlOp *fn = tl_builder_insert(&L.b, &st);
  tl_vec_free(&ins);
  TlBlock *body = tl_block_create(L.module);
  tl_region_append_block(tl_op_region(fn, 0), body);
  TlBlock *old = tl_region_first_block(tl_op_region(k, 0));
  for (unsigned i = 0; i < n; i++) {
    TlValue *a = tl_block_add_arg(
        body,
        tl_type_function_input(
            tl_attr_type_value(tl_op_attr(fn, "function_type")), i),
        L.b.loc);
    tl_value_set_name_hint(a, tl_value_name_hint(tl_block_arg(old, i)));
    lw_put_scalar(&L, tl_block_arg(old, i), a);
  }
  if (ws_bytes) {
    L.workspace =
        tl_block_add_arg(body, tl_simt_ptr_type(ctx, TL_SIMT_GLOBAL), L.b.loc);
    tl_value_set_name_hint(L.workspace, tl_context_intern(ctx, "workspace", 9));
  }
  tl_builder_set_end(&L.b, body);
  L.tid = lw_index_reg(&L, TL_OP_SIMT_THREAD_ID, "x");
  L.uni = tl_uniformity_create(k);
  tl_value_set_name_hint(L.tid, tl_context_intern(ctx, "tid", 3));
  lw_plan_proxy_fences(&L, k);
  bool ok = lw_rings_begin(&L, k) && lw_tma_begin(&L, k) &&
            lower_block(&L, old);
  if (ok && (L.scratch_bytes || L.tma || L.rings.len)) {
    int64_t total = L.scratch_base + L.scratch_bytes;
    if (total > arch->max_smem) {
      tl_op_emit_error(
          k,
          "cannot lower: the shared tiles (%lld bytes) and the reduction "
          "scratch (%lld bytes) exceed the %lld bytes of shared memory a "
          "block of %s may have",
          (long long)L.scratch_base, (long long)L.scratch_bytes,
          (long long)arch->max_smem, arch->name);
      ok = false;
    } else {
      tl_op_set_attr(fn, "smem_bytes",
                     tl_attr_int(ctx, tl_type_int(ctx, 64, true), total));
    }
  }
  if (ok) {
    tl_builder_set_loc(&L.b, tl_op_loc(k));
    tl_build(&L.b, TL_OP_BUILTIN_RETURN, 0, NULL, 0, NULL);
    tl_op_erase(k);
  } else {
    tl_op_erase(fn);
  }
  tl_analysis_destroy(L.facts);
  tl_uniformity_destroy(L.uni);
  tl_vec_free(&L.map);
  tl_free(L.slots);
  tl_vec_free(&L.rings);
  tl_vec_free(&L.mixed_tiles);
  tl_arena_reset(&L.arena);
  return ok;
}

typedef TL_VEC(TlOp *) TlOpVec;

static void collect_kernels(TlOp *op, void *user) {
  TlOpVec *ks = user;
  if (tl_op_id(op) == TL_OP_TL_KERNEL)
    tl_vec_push(ks, op);
}

TlResult tl_pass_lower_tl_to_simt(TlOp *module, const TlPassOptions *opts) {
  TlOpVec ks = {0};
  tl_op_walk(module, collect_kernels, &ks, false);
  bool ok = true;
  for (size_t i = 0; i < ks.len && ok; i++)
    ok = lower_kernel(tl_op_context(module), opts->arch, ks.data[i]);
  tl_vec_free(&ks);
  return ok ? TL_SUCCESS : TL_FAILURE;
}
