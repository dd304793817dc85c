/* The VM's driver: the public API, the compilation of a kernel into
 * instruction lists over value slots, the run over the grid, structured
 * control flow (scf) and the scalar ops of arith. Tile ops live in tile.c,
 * memory ops in memory.c; docs/vm.md states the semantics. */
#include "vm_internal.h"

#include "tl/analysis.h"
#include "tl/tensor_map.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/*===--- Kernels and parameters ------------------------------------------===*/

static bool is_kernel(TlOp *op) { return tl_op_id(op) == TL_OP_TL_KERNEL; }

TlOp *tl_vm_find_kernel(TlModule *m, const char *name) {
  TlOp *found = NULL;
  unsigned count = 0;
  for (TlOp *op = tl_block_first_op(tl_module_body(m)); op;
       op = tl_op_next(op)) {
    if (!is_kernel(op))
      continue;
    count++;
    if (name ? strcmp(tl_symbol_name(op), name) == 0 : !found)
      found = found ? found : op;
  }
  TlContext *ctx = tl_module_context(m);
  TlLoc loc = tl_op_loc(tl_module_op(m));
  if (name && !found) {
    tl_emit_error(ctx, loc, "no tl.kernel named '%s'", name);
    return NULL;
  }
  if (!name && count != 1) {
    if (count == 0)
      tl_emit_error(ctx, loc, "the module has no tl.kernel");
    else
      tl_emit_error(ctx, loc, "the module has %u kernels; name one", count);
    return NULL;
  }
  return found;
}

unsigned tl_vm_num_params(TlOp *kernel) {
  return tl_block_num_args(tl_region_first_block(tl_op_region(kernel, 0)));
}

const char *tl_vm_param_name(TlOp *kernel, unsigned i) {
  TlAttr *names = tl_op_attr(kernel, "arg_names");
  if (i >= tl_attr_array_size(names))
    return "workspace"; /* a tl.alloc_global's buffer */
  const char *s = tl_attr_string_value(tl_attr_array_elem(names, i), NULL);
  return tl_context_intern(tl_op_context(kernel), s, strlen(s));
}

TlType *tl_vm_param_type(TlOp *kernel, unsigned i) {
  return tl_value_type(
      tl_block_arg(tl_region_first_block(tl_op_region(kernel, 0)), i));
}

int tl_vm_param_index(TlOp *kernel, const char *name) {
  for (unsigned i = 0; i < tl_vm_num_params(kernel); i++)
    if (strcmp(tl_vm_param_name(kernel, i), name) == 0)
      return (int)i;
  return -1;
}

/*===--- Creation --------------------------------------------------------===*/

TlVm *tl_vm_create(TlContext *ctx) {
  TlVm *vm = tl_xcalloc(1, sizeof *vm);
  vm->ctx = ctx;
  vm->print_out = stdout;
  vm->warp = -1;
  vm->max_bytes = TL_VM_DEFAULT_MAX_BYTES;
  tl_arena_init(&vm->arena);
  tl_arena_init(&vm->block_arena);
  return vm;
}

void tl_vm_destroy(TlVm *vm) {
  if (!vm)
    return;
  for (uint32_t i = 0; i < vm->slot_cap; i++)
    val_clear(&vm->slots[i]);
  tl_free(vm->slots);
  pmap_free(&vm->etypes);
  for (size_t i = 0; i < vm->ltabs.cap; i++)
    if (vm->ltabs.keys[i]) {
      LTab *t = vm->ltabs.vals[i];
      tl_free(t->idx);
      tl_free(t->owner);
    }
  pmap_free(&vm->ltabs);
  pmap_free(&vm->soffs);
  pmap_free(&vm->kernels);
  pmap_free(&vm->slots_of);
  tl_vec_free(&vm->wslots);
  tl_vec_free(&vm->dot_regs);
  tl_vec_free(&vm->dot_recs);
  tl_free(vm->f16_table);
  tl_free(vm->bf16_table);
  tl_arena_reset(&vm->arena);
  tl_arena_reset(&vm->block_arena);
  tl_free(vm);
}

void tl_vm_set_print_stream(TlVm *vm, FILE *out) { vm->print_out = out; }
void tl_vm_set_op_limit(TlVm *vm, int64_t max_ops) {
  vm->max_ops = max_ops > 0 ? max_ops : 0;
}
void tl_vm_set_memory_limit(TlVm *vm, int64_t max_bytes) {
  vm->max_bytes = max_bytes > 0 ? max_bytes : TL_VM_DEFAULT_MAX_BYTES;
}

/* Whether `bytes` of what (a tile, a workspace) fit the VM's memory limit;
 * an error at op if not. */
static bool fits_memory(TlVm *vm, TlOp *op, const char *what, int64_t n,
                        int64_t bytes) {
  if (bytes <= vm->max_bytes)
    return true;
  tl_op_emit_error(op,
                   "%s of %lld elements needs %lld bytes on the VM, more "
                   "than its limit of %lld bytes (tl-run --max-bytes)",
                   what, (long long)n, (long long)bytes,
                   (long long)vm->max_bytes);
  return false;
}

/* What the run has spent of its budget: the ops it executed, and one for
 * each block it finished, so that a grid of blocks that run few ops (or
 * none) is bounded too. */
static bool over_budget(const TlVm *vm) {
  return vm_over_budget(vm->max_ops, vm->stats.ops, vm->stats.blocks);
}

void vm_block_budget_error(TlOp *kernel, int64_t max_ops, int64_t blocks) {
  tl_op_emit_error(kernel,
                   "the run exceeds its budget of %lld executed ops after %lld "
                   "blocks (a block counts as one op besides the ops it "
                   "executes)",
                   (long long)max_ops, (long long)blocks);
}

/* After each loop iteration: false, after an error at the loop, once the
 * run has spent more than its budget. */
static bool within_budget(TlVm *vm, Inst *loop) {
  if (!over_budget(vm))
    return true;
  vm_error(vm, loop->op,
           "the run exceeds its budget of %lld executed ops in this loop "
           "(does it ever end?)",
           (long long)vm->max_ops);
  return false;
}

TlVmStats tl_vm_stats(const TlVm *vm) { return vm->stats; }

/*===--- Errors ----------------------------------------------------------===*/

bool vm_error(TlVm *vm, TlOp *op, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  tl_op_emit_error(op, "%s", buf);
  vm->failed = true;
  return false;
}

void vm_note(TlVm *vm, TlOp *op, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  tl_emit_note(vm->ctx, tl_op_loc(op), "%s", buf);
}

void vm_fmt_index(char *buf, size_t cap, int rank, const int64_t *idx) {
  size_t n = 0;
  n += (size_t)snprintf(buf + n, cap - n, "[");
  for (int d = 0; d < rank && n < cap; d++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? ", " : "",
                          (long long)idx[d]);
  if (n < cap)
    snprintf(buf + n, cap - n, "]");
}

/*===--- Values ----------------------------------------------------------===*/

Tile *tile_new(TlVm *vm, TlType *type, bool undef) {
  Tile *t = tl_xmalloc(sizeof *t);
  t->refs = 1;
  t->type = type;
  t->n = tl_tensor_num_elements(type);
  t->v = tl_xmalloc(sizeof(uint64_t) * (size_t)t->n);
  t->undef = undef ? tl_xmalloc((size_t)t->n) : NULL;
  t->dot = 0;
  t->dot_op = NULL;
  if (undef) {
    memset(t->undef, 1, (size_t)t->n);
    memset(t->v, 0, sizeof(uint64_t) * (size_t)t->n);
  }
  return t;
}

void tile_release(Tile *t) {
  if (t && --t->refs == 0) {
    tl_free(t->v);
    tl_free(t->undef);
    tl_free(t);
  }
}

void val_clear(Val *slot) {
  if (slot->kind == V_TILE)
    tile_release(slot->obj);
  slot->kind = V_NONE;
  slot->obj = NULL;
}

void val_set(Val *slot, Val v) {
  if (v.kind == V_TILE)
    ((Tile *)v.obj)->refs++;
  val_clear(slot);
  *slot = v;
}

void vm_put_tile(TlVm *vm, const Inst *in, unsigned i, Tile *t) {
  Val *s = &vm->slots[in->out[i]];
  val_clear(s);
  s->kind = V_TILE;
  s->obj = t;
}

void vm_put_scalar(TlVm *vm, const Inst *in, unsigned i, uint64_t code) {
  Val *s = &vm->slots[in->out[i]];
  if (s->kind == V_TILE)
    val_clear(s);
  s->kind = V_SCALAR;
  s->bits = code;
}

int64_t vm_int_operand(TlVm *vm, const Inst *in, unsigned i) {
  TlType *t = tl_value_type(tl_op_operand(in->op, i));
  return e_sval(vm_etype(vm, t), vm_in(vm, in, i)->bits);
}

/*===--- Compilation ------------------------------------------------------===*/

/* Where run_body sends each op the VM executes, by id. An op without an
 * entry is one the VM does not execute: compiling a kernel with one fails
 * with a diagnostic at it. tl.slice, tl.reshape and tl.permute of shared
 * tiles make views, which memory.c runs (compile_op redirects them). */
static const VmRun runner_of[TL_OP_COUNT] = {
    [TL_OP_ARITH_CONSTANT] = RUN_SCALAR,
    [TL_OP_ARITH_ADDI] = RUN_SCALAR,
    [TL_OP_ARITH_SUBI] = RUN_SCALAR,
    [TL_OP_ARITH_MULI] = RUN_SCALAR,
    [TL_OP_ARITH_DIVI] = RUN_SCALAR,
    [TL_OP_ARITH_REMI] = RUN_SCALAR,
    [TL_OP_ARITH_CEILDIVI] = RUN_SCALAR,
    [TL_OP_ARITH_ANDI] = RUN_SCALAR,
    [TL_OP_ARITH_ORI] = RUN_SCALAR,
    [TL_OP_ARITH_XORI] = RUN_SCALAR,
    [TL_OP_ARITH_SHLI] = RUN_SCALAR,
    [TL_OP_ARITH_SHRI] = RUN_SCALAR,
    [TL_OP_ARITH_MINI] = RUN_SCALAR,
    [TL_OP_ARITH_MAXI] = RUN_SCALAR,
    [TL_OP_ARITH_ADDF] = RUN_SCALAR,
    [TL_OP_ARITH_SUBF] = RUN_SCALAR,
    [TL_OP_ARITH_MULF] = RUN_SCALAR,
    [TL_OP_ARITH_DIVF] = RUN_SCALAR,
    [TL_OP_ARITH_MINF] = RUN_SCALAR,
    [TL_OP_ARITH_MAXF] = RUN_SCALAR,
    [TL_OP_ARITH_NEGF] = RUN_SCALAR,
    [TL_OP_ARITH_ABSF] = RUN_SCALAR,
    [TL_OP_ARITH_CMPI] = RUN_SCALAR,
    [TL_OP_ARITH_CMPF] = RUN_SCALAR,
    [TL_OP_ARITH_SELECT] = RUN_SCALAR,
    [TL_OP_ARITH_EXTI] = RUN_SCALAR,
    [TL_OP_ARITH_TRUNCI] = RUN_SCALAR,
    [TL_OP_ARITH_ITOFP] = RUN_SCALAR,
    [TL_OP_ARITH_FPTOI] = RUN_SCALAR,
    [TL_OP_ARITH_EXTF] = RUN_SCALAR,
    [TL_OP_ARITH_TRUNCF] = RUN_SCALAR,
    [TL_OP_ARITH_BITCAST] = RUN_SCALAR,
    [TL_OP_SCF_FOR] = RUN_FLOW,
    [TL_OP_SCF_IF] = RUN_FLOW,
    [TL_OP_SCF_WHILE] = RUN_FLOW,
    [TL_OP_TL_EXIT] = RUN_FLOW,
    [TL_OP_TL_TEMPLATE] = RUN_SCALAR,
    [TL_OP_TL_BLOCK_INDICES] = RUN_SCALAR,
    [TL_OP_TL_WARP_INDEX] = RUN_SCALAR,
    [TL_OP_TL_VIEW_GLOBAL] = RUN_MEMORY,
    [TL_OP_TL_LOAD_GLOBAL] = RUN_MEMORY,
    [TL_OP_TL_STORE_GLOBAL] = RUN_MEMORY,
    [TL_OP_TL_ATOMIC_RMW] = RUN_MEMORY,
    [TL_OP_TL_ATOMIC_CAS] = RUN_MEMORY,
    [TL_OP_TL_FENCE] = RUN_MEMORY,
    [TL_OP_TL_LOAD_SCALAR] = RUN_MEMORY,
    [TL_OP_TL_GATHER] = RUN_MEMORY,
    [TL_OP_TL_ALLOC_SHARED] = RUN_MEMORY,
    [TL_OP_TL_ALLOC_GLOBAL] = RUN_MEMORY,
    [TL_OP_TL_FREE_SHARED] = RUN_MEMORY,
    [TL_OP_TL_LOAD_SHARED] = RUN_MEMORY,
    [TL_OP_TL_STORE_SHARED] = RUN_MEMORY,
    [TL_OP_TL_COPY_ASYNC] = RUN_MEMORY,
    [TL_OP_TL_COPY_ASYNC_COMMIT] = RUN_MEMORY,
    [TL_OP_TL_COPY_ASYNC_WAIT] = RUN_MEMORY,
    [TL_OP_TL_SYNCHRONIZE] = RUN_MEMORY,
    [TL_OP_TL_ALLOC_RING] = RUN_MEMORY,
    [TL_OP_TL_RING_ACQUIRE] = RUN_MEMORY,
    [TL_OP_TL_RING_COMMIT] = RUN_MEMORY,
    [TL_OP_TL_RING_WAIT] = RUN_MEMORY,
    [TL_OP_TL_RING_RELEASE] = RUN_MEMORY,
    [TL_OP_TL_ALLOC_REGISTER] = RUN_TILE,
    [TL_OP_TL_PRINT] = RUN_TILE,
    [TL_OP_TL_CMP] = RUN_TILE,
    [TL_OP_TL_WHERE] = RUN_TILE,
    [TL_OP_TL_BROADCAST] = RUN_TILE,
    [TL_OP_TL_CAST] = RUN_TILE,
    [TL_OP_TL_VIEW] = RUN_TILE,
    [TL_OP_TL_RESHAPE] = RUN_TILE,
    [TL_OP_TL_PERMUTE] = RUN_TILE,
    [TL_OP_TL_SLICE] = RUN_TILE,
    [TL_OP_TL_DOT] = RUN_TILE,
    [TL_OP_TL_DOT_ASYNC] = RUN_TILE,
    [TL_OP_TL_DOT_WAIT] = RUN_MEMORY,
    [TL_OP_TL_SET_MAX_REGISTERS] = RUN_MEMORY,
    [TL_OP_TL_REDUCE] = RUN_TILE,
    [TL_OP_TL_ADD] = RUN_TILE,
    [TL_OP_TL_SUB] = RUN_TILE,
    [TL_OP_TL_MUL] = RUN_TILE,
    [TL_OP_TL_FMA] = RUN_TILE,
    [TL_OP_TL_DIV] = RUN_TILE,
    [TL_OP_TL_MOD] = RUN_TILE,
    [TL_OP_TL_MAX] = RUN_TILE,
    [TL_OP_TL_MIN] = RUN_TILE,
    [TL_OP_TL_AND] = RUN_TILE,
    [TL_OP_TL_OR] = RUN_TILE,
    [TL_OP_TL_XOR] = RUN_TILE,
    [TL_OP_TL_SHL] = RUN_TILE,
    [TL_OP_TL_SHR] = RUN_TILE,
    [TL_OP_TL_NEG] = RUN_TILE,
    [TL_OP_TL_ABS] = RUN_TILE,
    [TL_OP_TL_NOT] = RUN_TILE,
    [TL_OP_TL_EXP] = RUN_TILE,
    [TL_OP_TL_EXP2] = RUN_TILE,
    [TL_OP_TL_LOG2] = RUN_TILE,
    [TL_OP_TL_SQRT] = RUN_TILE,
    [TL_OP_TL_RSQRT] = RUN_TILE,
};

static uint32_t slot_for(TlVm *vm, TlValue *v) {
  uintptr_t s = (uintptr_t)pmap_get(&vm->slots_of, v);
  if (s)
    return (uint32_t)(s - 1);
  uint32_t n = vm->nslots++;
  pmap_put(&vm->slots_of, v, (void *)(uintptr_t)(n + 1));
  return n;
}

/* Code of an int or float attribute in type t. */
static uint64_t attr_code(TlVm *vm, TlAttr *a, TlType *t) {
  const EType *e = vm_etype(vm, t);
  if (tl_attr_kind(a) == TL_ATTR_INT)
    return tl_attr_uint_value(a) & e->mask;
  return e_fencode(e, tl_attr_float_value(a));
}

static bool compile_block(TlVm *vm, TlBlock *b, Body *out);

/* Whether op waits on a ring (*user, a bool). */
static void find_ring_wait(TlOp *op, void *user) {
  TlOpId id = tl_op_id(op);
  if (id == TL_OP_TL_RING_WAIT || id == TL_OP_TL_RING_ACQUIRE)
    *(bool *)user = true;
}

static bool compile_op(TlVm *vm, TlOp *op, Inst *in) {
  in->op = op;
  in->code = tl_op_id(op);
  in->run = runner_of[in->code];
  if (in->run == RUN_NONE) {
    tl_op_emit_error(op, "the VM does not execute this op");
    return false;
  }
  in->nin = tl_op_num_operands(op);
  in->nout = tl_op_num_results(op);
  in->in = TL_ARENA_NEWN(&vm->arena, uint32_t, in->nin + 1);
  in->out = TL_ARENA_NEWN(&vm->arena, uint32_t, in->nout + 1);
  for (unsigned i = 0; i < in->nin; i++)
    in->in[i] = slot_for(vm, tl_op_operand(op, i));
  for (unsigned i = 0; i < in->nout; i++) {
    in->out[i] = slot_for(vm, tl_op_result(op, i));
    /* Tiles are 8 bytes an element here, whatever their type: a type of
     * 2^40 elements is an error now, not an abort when it runs. */
    TlType *t = tl_value_type(tl_op_result(op, i));
    TlTensorKind k = tl_tensor_kind(t);
    if (k == TL_TENSOR_REG || k == TL_TENSOR_SHARED) {
      int64_t n = tl_tensor_num_elements(t);
      int64_t bytes = n > INT64_MAX / 8 ? INT64_MAX : n * 8;
      if (!fits_memory(vm, op, k == TL_TENSOR_REG ? "a register tile"
                                                  : "a shared tile",
                       n, bytes))
        return false;
    }
  }
  if (in->code == TL_OP_TL_DOT_ASYNC &&
      tl_tensor_kind(tl_value_type(tl_op_operand(op, 0))) == TL_TENSOR_REG) {
    /* a and the register tiles it renames (no instruction between). */
    TL_VEC(uint32_t) slots = {0};
    for (TlValue *v = tl_op_operand(op, 0);;) {
      tl_vec_push(&slots, slot_for(vm, v));
      TlOp *def = tl_value_def(v);
      TlOpId id = def ? tl_op_id(def) : TL_OP_TL_DOT;
      if (id != TL_OP_TL_RESHAPE && id != TL_OP_TL_PERMUTE &&
          id != TL_OP_TL_VIEW)
        break;
      v = tl_op_operand(def, 0);
    }
    in->naregs = (unsigned)slots.len;
    in->aregs = tl_arena_memdup(&vm->arena, slots.data,
                                sizeof *slots.data * slots.len);
    tl_vec_free(&slots);
  }
  TlType *rt = in->nout ? tl_value_type(tl_op_result(op, 0)) : NULL;
  TlType *ot = in->nin ? tl_value_type(tl_op_operand(op, 0)) : NULL;
  /* Element types: of the result where it has one, else of operand 0. */
  TlType *re = rt ? (tl_type_is_scalar(rt) ? rt : tl_tensor_elem(rt)) : NULL;
  TlType *oe = ot ? (tl_type_is_scalar(ot) ? ot : tl_tensor_elem(ot)) : NULL;
  if (re && tl_type_is_scalar(re))
    in->et = vm_etype(vm, re);
  if (oe && tl_type_is_scalar(oe)) {
    in->et2 = vm_etype(vm, oe);
    if (!in->et)
      in->et = in->et2;
  }
  switch (in->code) {
  case TL_OP_ARITH_CONSTANT:
    in->konst = attr_code(vm, tl_op_attr(op, "value"), rt);
    break;
  case TL_OP_ARITH_CMPI:
    in->pred = tl_cmpi_predicate_of(op);
    in->et = in->et2;
    break;
  case TL_OP_ARITH_CMPF:
    in->pred = tl_cmpf_predicate_of(op);
    in->et = in->et2;
    break;
  case TL_OP_TL_CMP:
    in->pred = tl_cmpi_predicate_of(op);
    break;
  case TL_OP_TL_CAST: {
    TlRounding mode;
    tl_cast_rounding(op, &mode); /* verified */
    in->pred = (int)mode;
    break;
  }
  case TL_OP_TL_REDUCE:
    in->pred = tl_reduce_kind_of(op);
    in->imm = tl_attr_int_value(tl_op_attr(op, "dim"));
    break;
  case TL_OP_TL_COPY_ASYNC_WAIT:
  case TL_OP_TL_DOT_WAIT:
    in->imm = tl_attr_int_value(tl_op_attr(op, "pending"));
    break;
  case TL_OP_TL_ATOMIC_RMW:
  case TL_OP_TL_ATOMIC_CAS: {
    /* et2: the element type the atomic computes in (of the value). */
    TlType *vt = tl_value_type(tl_op_operand(op, 0));
    in->et2 = vm_etype(vm, tl_type_is_scalar(vt) ? vt : tl_tensor_elem(vt));
    in->pred = in->code == TL_OP_TL_ATOMIC_RMW ? (int)tl_atomic_kind_of(op) : 0;
    break;
  }
  case TL_OP_TL_SLICE:
  case TL_OP_TL_RESHAPE:
  case TL_OP_TL_PERMUTE:
    /* On shared tiles these make views: memory.c runs them. */
    if (tl_tensor_kind(ot) == TL_TENSOR_SHARED)
      in->run = RUN_MEMORY;
    break;
  case TL_OP_TL_ALLOC_REGISTER:
    if (tl_op_attr(op, "init")) {
      in->konst = attr_code(vm, tl_op_attr(op, "init"), tl_tensor_elem(rt));
      in->has_konst = true;
    }
    break;
  case TL_OP_TL_TEMPLATE: {
    TlOp *k = tl_enclosing_kernel(op);
    TlAttr *v =
        tl_attr_dict_get(tl_op_attr(k, "template"),
                         tl_attr_string_value(tl_op_attr(op, "name"), NULL));
    in->konst = (uint64_t)tl_attr_int_value(v) & in->et->mask;
    break;
  }
  default:
    break;
  }
  /* Inside a warp branch a tile may span the first warps only: the
   * others may not run an op on it (run_body checks). */
  if (vm->in_branch) {
    for (unsigned i = 0; i < in->nin + in->nout; i++) {
      TlType *t = tl_value_type(i < in->nin ? tl_op_operand(op, i)
                                            : tl_op_result(op, i - in->nin));
      if (tl_tensor_kind(t) != TL_TENSOR_REG)
        continue;
      int64_t n = tl_layout_num_threads(tl_reg_layout(t));
      if (!in->tile_threads || n < in->tile_threads)
        in->tile_threads = n;
    }
  }
  /* At the block level, a warp-uniform result is computed once per warp;
   * inside a warp branch every value is the running warp's. */
  if (!vm->in_branch) {
    if (tl_uniformity_diverges(vm->uni, op))
      in->warp = W_BRANCH;
    else if (in->run == RUN_SCALAR && in->nout &&
             tl_uniformity_is_warp(vm->uni, tl_op_result(op, 0)))
      in->warp = W_SCALAR;
    /* A warp branch's tiles are the block's (run_per_warp merges them). */
    if (in->warp == W_BRANCH)
      tl_op_walk(op, find_ring_wait, &in->coop, false);
    if (in->warp)
      for (unsigned i = 0; i < in->nout; i++)
        if (in->warp == W_SCALAR ||
            tl_type_is_scalar(tl_value_type(tl_op_result(op, i))))
          tl_vec_push(&vm->wslots, in->out[i]);
  }
  bool outer = vm->in_branch;
  vm->in_branch = outer || in->warp == W_BRANCH;
  in->nregions = tl_op_num_regions(op);
  if (in->nregions) {
    in->regions = TL_ARENA_NEWN(&vm->arena, Body, in->nregions);
    for (unsigned r = 0; r < in->nregions; r++) {
      TlBlock *b = tl_region_first_block(tl_op_region(op, r));
      if (b && !compile_block(vm, b, &in->regions[r])) {
        vm->in_branch = outer;
        return false;
      }
    }
  }
  vm->in_branch = outer;
  return true;
}

static bool compile_block(TlVm *vm, TlBlock *b, Body *out) {
  unsigned n = 0;
  for (TlOp *op = tl_block_first_op(b); op; op = tl_op_next(op))
    n++;
  out->nargs = tl_block_num_args(b);
  out->args = TL_ARENA_NEWN(&vm->arena, uint32_t, out->nargs + 1);
  for (unsigned i = 0; i < out->nargs; i++)
    out->args[i] = slot_for(vm, tl_block_arg(b, i));
  out->insts = TL_ARENA_NEWN(&vm->arena, Inst, n + 1);
  out->n = 0;
  for (TlOp *op = tl_block_first_op(b); op; op = tl_op_next(op)) {
    TlOpId id = tl_op_id(op);
    if (id == TL_OP_SCF_YIELD || id == TL_OP_SCF_CONDITION) {
      out->nyield = tl_op_num_operands(op);
      out->yield = TL_ARENA_NEWN(&vm->arena, uint32_t, out->nyield + 1);
      for (unsigned i = 0; i < out->nyield; i++)
        out->yield[i] = slot_for(vm, tl_op_operand(op, i));
      continue;
    }
    if (!compile_op(vm, op, &out->insts[out->n++]))
      return false;
  }
  return true;
}

static Body *compile_kernel(TlVm *vm, TlOp *kernel) {
  Body *b = pmap_get(&vm->kernels, kernel);
  if (b)
    return b;
  b = TL_ARENA_NEW(&vm->arena, Body);
  pmap_free(&vm->slots_of);
  vm->nslots = 0;
  vm->uni = tl_uniformity_create(kernel);
  vm->in_branch = false;
  vm->wslots.len = 0;
  bool ok =
      compile_block(vm, tl_region_first_block(tl_op_region(kernel, 0)), b);
  pmap_free(&vm->slots_of);
  tl_uniformity_destroy(vm->uni);
  vm->uni = NULL;
  if (!ok)
    return NULL;
  b->nslots = vm->nslots;
  b->nwslots = (unsigned)vm->wslots.len;
  b->wslots = TL_ARENA_NEWN(&vm->arena, uint32_t, b->nwslots + 1);
  if (b->nwslots)
    memcpy(b->wslots, vm->wslots.data, sizeof(uint32_t) * b->nwslots);
  pmap_put(&vm->kernels, kernel, b);
  return b;
}

/*===--- Layout tables ---------------------------------------------------===*/

const LTab *vm_ltab(TlVm *vm, const TlLayout *l) {
  LTab *t = pmap_get(&vm->ltabs, l);
  if (t)
    return t;
  t = TL_ARENA_NEW(&vm->arena, LTab);
  t->layout = l;
  t->threads = tl_layout_num_threads(l);
  t->local = tl_layout_local_size(l);
  t->n = tl_layout_num_elements(l);
  t->rep = tl_layout_replication(l);
  t->idx = tl_xmalloc(sizeof(int32_t) * (size_t)(t->threads * t->local));
  t->owner = tl_xmalloc(sizeof(int32_t) * (size_t)t->n);
  for (int64_t e = 0; e < t->n; e++)
    t->owner[e] = -1;
  int64_t idx[TL_LAYOUT_MAX_RANK];
  for (int64_t th = 0; th < t->threads; th++)
    for (int64_t i = 0; i < t->local; i++) {
      bool ok = tl_layout_map(l, th, i, idx, NULL);
      tl_assert(ok);
      int64_t flat = 0;
      for (int d = 0; d < l->rank; d++)
        flat = flat * l->shape[d] + idx[d];
      t->idx[th * t->local + i] = (int32_t)flat;
      if (t->owner[flat] < 0)
        t->owner[flat] = (int32_t)th;
    }
  pmap_put(&vm->ltabs, l, t);
  return t;
}

int32_t *vm_warp_holders(TlVm *vm, const LTab *lt) {
  if (vm->warp < 0)
    return NULL;
  int32_t *h = tl_xmalloc(sizeof *h * (size_t)(lt->n + 1));
  for (int64_t e = 0; e < lt->n; e++)
    h[e] = -1;
  int64_t lo = (int64_t)vm->warp * 32, hi = lo + 32;
  if (hi > vm->threads)
    hi = vm->threads;
  /* A layout over fewer threads than the block (in a warp branch) leaves
   * the threads past its count holding nothing. */
  if (hi > lt->threads)
    hi = lt->threads;
  /* Downwards, so that the lowest holder stays. */
  for (int64_t t = hi - 1; t >= lo; t--) {
    const int32_t *idx = lt->idx + t * lt->local;
    for (int64_t i = 0; i < lt->local; i++)
      h[idx[i]] = (int32_t)t;
  }
  return h;
}

/*===--- Scalars (arith) --------------------------------------------------===*/

/* arith.minf / maxf: NaN if either is NaN; -0 orders below +0. */
static double fmin_nan(double x, double y) {
  if (isnan(x) || isnan(y))
    return NAN;
  return (x < y || (x == y && signbit(x))) ? x : y;
}
static double fmax_nan(double x, double y) {
  if (isnan(x) || isnan(y))
    return NAN;
  return (x > y || (x == y && !signbit(x))) ? x : y;
}

/* Integer binary op on codes of type e; false (after an error) where
 * arith leaves it undefined. Shared with the elementwise tile ops. */
bool vm_int_binary(TlVm *vm, TlOp *op, const EType *e, TlOpId k, uint64_t a,
                   uint64_t b, uint64_t *out) {
  bool sgn = e->kind == EK_SINT;
  int64_t x = e_sval(e, a), y = e_sval(e, b);
  int64_t smin = e->bits == 64 ? INT64_MIN : -(int64_t)(1ull << (e->bits - 1));
  uint64_t r;
  switch (k) {
  case TL_OP_ARITH_ADDI:
    r = a + b;
    break;
  case TL_OP_ARITH_SUBI:
    r = a - b;
    break;
  case TL_OP_ARITH_MULI:
    r = a * b;
    break;
  case TL_OP_ARITH_ANDI:
    r = a & b;
    break;
  case TL_OP_ARITH_ORI:
    r = a | b;
    break;
  case TL_OP_ARITH_XORI:
    r = a ^ b;
    break;
  case TL_OP_ARITH_DIVI:
  case TL_OP_ARITH_REMI:
  case TL_OP_ARITH_CEILDIVI:
    if (b == 0)
      return vm_error(vm, op, "integer division by zero");
    if (sgn && x == smin && y == -1)
      return vm_error(vm, op, "signed division overflow (%lld / -1)",
                      (long long)x);
    if (sgn) {
      int64_t q = x / y, rem = x % y;
      if (k == TL_OP_ARITH_CEILDIVI && rem != 0 && ((rem > 0) == (y > 0)))
        q++;
      r = (uint64_t)(k == TL_OP_ARITH_REMI ? rem : q);
    } else {
      uint64_t q = a / b, rem = a % b;
      if (k == TL_OP_ARITH_CEILDIVI && rem)
        q++;
      r = k == TL_OP_ARITH_REMI ? rem : q;
    }
    break;
  case TL_OP_ARITH_SHLI:
  case TL_OP_ARITH_SHRI:
    if (b >= e->bits)
      return vm_error(vm, op, "shift amount %llu is not less than the width %u",
                      (unsigned long long)b, e->bits);
    if (k == TL_OP_ARITH_SHLI)
      r = a << b;
    else
      r = sgn ? (uint64_t)(x >> b) : a >> b;
    break;
  case TL_OP_ARITH_MINI:
    r = (sgn ? x < y : a < b) ? a : b;
    break;
  case TL_OP_ARITH_MAXI:
    r = (sgn ? x > y : a > b) ? a : b;
    break;
  default:
    TL_UNREACHABLE("not an integer op");
  }
  *out = r & e->mask;
  return true;
}

/* Float binary op of codes of type e, rounded once to e. */
uint64_t vm_float_binary(const EType *e, TlOpId k, uint64_t a, uint64_t b) {
  double x = e_f(e, a), y = e_f(e, b), v;
  /* +, -, *, / of two doubles holding p-bit values, p <= 24, rounded to
   * double and then to p bits, equal the exact result rounded once
   * (53 >= 2p + 2); f64 computes natively. */
  switch (k) {
  case TL_OP_ARITH_ADDF:
    v = x + y;
    break;
  case TL_OP_ARITH_SUBF:
    v = x - y;
    break;
  case TL_OP_ARITH_MULF:
    v = x * y;
    break;
  case TL_OP_ARITH_DIVF:
    v = x / y;
    break;
  case TL_OP_ARITH_MINF:
    v = fmin_nan(x, y);
    break;
  case TL_OP_ARITH_MAXF:
    v = fmax_nan(x, y);
    break;
  default:
    TL_UNREACHABLE("not a float op");
  }
  return e_fencode(e, v);
}

/* f32 code c with a subnormal flushed to the zero of its sign. */
static uint64_t ftz32(uint64_t c) {
  return (c & 0x7f800000u) ? c : c & 0x80000000u;
}

uint64_t vm_atomic_apply(const EType *e, TlAtomicKind k, uint64_t old,
                         uint64_t v) {
  switch (k) {
  case TL_ATOMIC_ADD:
    if (e->kind != EK_FLOAT)
      return (old + v) & e->mask;
    if (e->bits == 32)
      return ftz32(vm_float_binary(e, TL_OP_ARITH_ADDF, ftz32(old), ftz32(v)));
    return vm_float_binary(e, TL_OP_ARITH_ADDF, old, v);
  case TL_ATOMIC_MAX:
  case TL_ATOMIC_MIN: {
    bool less = e->kind == EK_SINT ? e_sval(e, old) < e_sval(e, v) : old < v;
    return (k == TL_ATOMIC_MAX) == less ? v : old;
  }
  case TL_ATOMIC_EXCH:
    return v;
  default:
    TL_UNREACHABLE("a verified atomic kind");
  }
}

static uint64_t sign_bit(const EType *e) { return 1ull << (e->bits - 1); }

static bool exec_scalar(TlVm *vm, Inst *in) {
  const EType *e = in->et;
  Val *a = in->nin > 0 ? vm_in(vm, in, 0) : NULL;
  Val *b = in->nin > 1 ? vm_in(vm, in, 1) : NULL;
  uint64_t r = 0;
  switch (in->code) {
  case TL_OP_ARITH_CONSTANT:
  case TL_OP_TL_TEMPLATE:
    r = in->konst;
    break;
  case TL_OP_TL_BLOCK_INDICES:
    for (unsigned i = 0; i < in->nout; i++)
      vm_put_scalar(vm, in, i, (uint64_t)vm->block[i] & 0xffffffffu);
    return true;
  case TL_OP_TL_WARP_INDEX:
    tl_assert(vm->warp >= 0);
    r = (uint64_t)vm->warp;
    break;
  case TL_OP_ARITH_ADDI:
  case TL_OP_ARITH_SUBI:
  case TL_OP_ARITH_MULI:
  case TL_OP_ARITH_DIVI:
  case TL_OP_ARITH_REMI:
  case TL_OP_ARITH_CEILDIVI:
  case TL_OP_ARITH_ANDI:
  case TL_OP_ARITH_ORI:
  case TL_OP_ARITH_XORI:
  case TL_OP_ARITH_SHLI:
  case TL_OP_ARITH_SHRI:
  case TL_OP_ARITH_MINI:
  case TL_OP_ARITH_MAXI:
    if (!vm_int_binary(vm, in->op, e, in->code, a->bits, b->bits, &r))
      return false;
    break;
  case TL_OP_ARITH_ADDF:
  case TL_OP_ARITH_SUBF:
  case TL_OP_ARITH_MULF:
  case TL_OP_ARITH_DIVF:
  case TL_OP_ARITH_MINF:
  case TL_OP_ARITH_MAXF:
    r = vm_float_binary(e, in->code, a->bits, b->bits);
    break;
  case TL_OP_ARITH_NEGF:
    r = a->bits ^ sign_bit(e);
    break;
  case TL_OP_ARITH_ABSF:
    r = a->bits & ~sign_bit(e);
    break;
  case TL_OP_ARITH_CMPI:
    r = e->kind == EK_SINT ? tl_cmpi_holds_signed(in->pred, e_sval(e, a->bits),
                                                  e_sval(e, b->bits))
                           : tl_cmpi_holds_unsigned(in->pred, a->bits, b->bits);
    break;
  case TL_OP_ARITH_CMPF:
    r = tl_cmpf_holds(in->pred, e_f(e, a->bits), e_f(e, b->bits));
    break;
  case TL_OP_ARITH_SELECT:
    r = a->bits ? b->bits : vm_in(vm, in, 2)->bits;
    break;
  case TL_OP_ARITH_EXTI:
    r = (uint64_t)e_sval(in->et2, a->bits) & e->mask;
    break;
  case TL_OP_ARITH_TRUNCI:
  case TL_OP_ARITH_BITCAST:
    r = a->bits & e->mask;
    break;
  case TL_OP_ARITH_ITOFP:
  case TL_OP_ARITH_FPTOI:
  case TL_OP_ARITH_EXTF:
  case TL_OP_ARITH_TRUNCF:
    r = e_convert(in->et2, e, a->bits);
    break;
  default:
    TL_UNREACHABLE("not a scalar op");
  }
  vm_put_scalar(vm, in, 0, r);
  return true;
}

/*===--- Control flow -----------------------------------------------------===*/

typedef enum Flow { F_OK, F_EXIT, F_ERROR } Flow;

static Flow run_body(TlVm *vm, Body *b);

/* Copies slots src[0..n) into dst[0..n) (through a scratch copy: a loop may
 * yield its own arguments in another order). */
static void move_vals(TlVm *vm, const uint32_t *dst, const uint32_t *src,
                      unsigned n) {
  Val tmp[16], *t = n <= 16 ? tmp : tl_xmalloc(sizeof(Val) * n);
  for (unsigned i = 0; i < n; i++) {
    t[i] = vm->slots[src[i]];
    if (t[i].kind == V_TILE)
      ((Tile *)t[i].obj)->refs++;
  }
  for (unsigned i = 0; i < n; i++) {
    val_clear(&vm->slots[dst[i]]);
    vm->slots[dst[i]] = t[i];
  }
  if (t != tmp)
    tl_free(t);
}

static Flow exec_for(TlVm *vm, Inst *in) {
  const EType *e = in->et2;
  Body *body = &in->regions[0];
  uint64_t lb = vm_in(vm, in, 0)->bits, ub = vm_in(vm, in, 1)->bits;
  uint64_t step = vm_in(vm, in, 2)->bits;
  bool sgn = e->kind == EK_SINT;
  if (sgn ? e_sval(e, step) <= 0 : step == 0) {
    vm_error(vm, in->op, "step must be positive, but is %lld",
             (long long)(sgn ? e_sval(e, step) : (int64_t)step));
    return F_ERROR;
  }
  /* Carried values start as the inits. */
  move_vals(vm, body->args + 1, in->in + 3, in->nin - 3);
  uint64_t iv = lb;
  for (;;) {
    bool lt = sgn ? e_sval(e, iv) < e_sval(e, ub) : iv < ub;
    if (!lt)
      break;
    Val *ivs = &vm->slots[body->args[0]];
    val_clear(ivs);
    ivs->kind = V_SCALAR;
    ivs->bits = iv;
    Flow f = run_body(vm, body);
    if (f != F_OK)
      return f;
    if (!within_budget(vm, in))
      return F_ERROR;
    move_vals(vm, body->args + 1, body->yield, body->nyield);
    /* Next iv = iv + step; the loop ends when that reaches ub, without
     * wrapping around the type. */
    uint64_t gap =
        sgn ? (uint64_t)e_sval(e, ub) - (uint64_t)e_sval(e, iv) : ub - iv;
    if (gap <= step)
      break;
    iv = (iv + step) & e->mask;
  }
  move_vals(vm, in->out, body->args + 1, in->nout);
  return F_OK;
}

static Flow exec_if(TlVm *vm, Inst *in) {
  Body *b = vm_in(vm, in, 0)->bits ? &in->regions[0]
            : in->nregions > 1     ? &in->regions[1]
                                   : NULL;
  if (!b || !b->insts)
    return F_OK;
  Flow f = run_body(vm, b);
  if (f != F_OK)
    return f;
  move_vals(vm, in->out, b->yield, in->nout);
  return F_OK;
}

static Flow exec_while(TlVm *vm, Inst *in) {
  Body *before = &in->regions[0], *after = &in->regions[1];
  move_vals(vm, before->args, in->in, in->nin);
  for (;;) {
    Flow f = run_body(vm, before);
    if (f != F_OK)
      return f;
    bool go = vm->slots[before->yield[0]].bits != 0;
    if (!go) {
      move_vals(vm, in->out, before->yield + 1, in->nout);
      return F_OK;
    }
    move_vals(vm, after->args, before->yield + 1, before->nyield - 1);
    f = run_body(vm, after);
    if (f != F_OK)
      return f;
    if (!within_budget(vm, in))
      return F_ERROR;
    move_vals(vm, before->args, after->yield, after->nyield);
  }
}

/* scf ops and tl.exit. */
static Flow exec_flow(TlVm *vm, Inst *in) {
  switch (in->code) {
  case TL_OP_SCF_FOR:
    return exec_for(vm, in);
  case TL_OP_SCF_IF:
    return exec_if(vm, in);
  case TL_OP_SCF_WHILE:
    return exec_while(vm, in);
  case TL_OP_TL_EXIT:
    return F_EXIT;
  default:
    TL_UNREACHABLE("not a control-flow op");
  }
}

/* The kernel body being run: its warp-uniform slots. */
static Body *running_body(TlVm *vm) {
  return pmap_get(&vm->kernels, vm->kernel);
}

/* An instruction at the block level that meets warp-uniform values: once
 * per warp w, with the warp-uniform slots holding warp w's values and
 * vm->warp = w; its results are warp w's values. A warp branch runs its
 * regions for each warp in turn (warp 0 first): the ops inside act for
 * the threads of that warp only (docs/vm.md). */
/* Into the merged tile m of a warp branch's tile result, the elements of
 * t (warp w's result) that warp w's threads hold (the verifier made sure
 * no other warp holds them). */
static void merge_warp_tile(TlVm *vm, Tile *m, const Tile *t, int64_t w) {
  const LTab *lt = vm_ltab(vm, tl_reg_layout(t->type));
  int64_t hi = (w + 1) * 32 < lt->threads ? (w + 1) * 32 : lt->threads;
  for (int64_t th = w * 32; th < hi; th++)
    for (int64_t i = 0; i < lt->local; i++) {
      int32_t e = lt->idx[th * lt->local + i];
      m->v[e] = t->v[e];
      m->undef[e] = t->undef ? t->undef[e] : 0;
    }
  if (t->dot > m->dot) {
    m->dot = t->dot;
    m->dot_op = t->dot_op;
  }
}

/* Warp w's values of the warp-uniform slots, into the slots array sl. */
static void load_warp_values(TlVm *vm, Val *sl, int64_t w) {
  Body *kb = running_body(vm);
  const uint64_t *mine = vm->wvals + (size_t)w * vm->wstride;
  for (unsigned k = 0; k < kb->nwslots; k++) {
    Val *v = &sl[kb->wslots[k]];
    val_clear(v);
    v->kind = V_SCALAR;
    v->bits = mine[kb->wslots[k]];
  }
}

/* Warp w's results of in, from the slots array sl: scalars into its
 * warp-uniform values, tiles merged (merged[i] made on first use). */
static void keep_warp_results(TlVm *vm, Inst *in, const Val *sl, int64_t w,
                              Tile **merged) {
  uint64_t *mine = vm->wvals + (size_t)w * vm->wstride;
  for (unsigned i = 0; i < in->nout; i++) {
    const Val *v = &sl[in->out[i]];
    if (v->kind != V_TILE) {
      mine[in->out[i]] = v->bits;
      continue;
    }
    const Tile *t = v->obj;
    if (!merged[i])
      merged[i] = tile_new(vm, t->type, true);
    merge_warp_tile(vm, merged[i], t, w);
  }
}

static Flow run_coop(TlVm *vm, Inst *in, Tile **merged);

static Flow run_per_warp(TlVm *vm, Inst *in) {
  Flow f = F_OK;
  Tile **merged = in->nout ? tl_xcalloc(in->nout, sizeof *merged) : NULL;
  if (in->coop) {
    f = run_coop(vm, in, merged);
  } else {
    for (int64_t w = 0; w < vm->nwarps && f == F_OK; w++) {
      load_warp_values(vm, vm->slots, w);
      vm->warp = (int)w;
      if (in->warp == W_SCALAR)
        f = exec_scalar(vm, in) ? F_OK : F_ERROR;
      else
        f = exec_flow(vm, in);
      vm->warp = -1;
      if (f == F_OK)
        keep_warp_results(vm, in, vm->slots, w, merged);
    }
  }
  for (unsigned i = 0; i < in->nout; i++) {
    if (!merged[i])
      continue;
    if (f == F_OK)
      vm_put_tile(vm, in, i, merged[i]);
    else
      tile_release(merged[i]);
  }
  tl_free(merged);
  return f;
}

/*===--- Warp branches that wait on rings ---------------------------------===*/

/* A warp branch that holds a ring wait (tl.ring_wait, tl.ring_acquire)
 * runs its warps as cooperative threads, one at a time: each runs in its
 * own copy of the value slots until it finishes or must wait for a step
 * that another warp has yet to commit or release (vm_coop_block); the
 * scheduler then runs the next warp, round robin, among those not
 * finished that have not blocked since the rings last changed. When every
 * warp left is blocked and nothing changed, the kernel deadlocks: the
 * first blocked warp reports it. A producer's loop and the consumers'
 * loops may thus be separate branches of one scf op, as on the GPU. */
struct Coop {
  TlVm *vm;
  Inst *in;
  VmBaton baton;
  uint64_t *seen; /* vm->coop_progress when the warp blocked */
  Val **slots;
  Flow *flow;
};

static bool coop_warp(void *ctx, int64_t w) {
  Coop *c = ctx;
  c->flow[w] = exec_flow(c->vm, c->in);
  return c->flow[w] == F_OK;
}

bool vm_coop_block(TlVm *vm) {
  Coop *c = vm->coop;
  c->seen[vm->warp] = vm->coop_progress;
  return vm_baton_yield(&c->baton, vm->warp);
}

static Flow run_coop(TlVm *vm, Inst *in, Tile **merged) {
  int64_t n = vm->nwarps;
  uint32_t ns = running_body(vm)->nslots;
  Coop c;
  memset(&c, 0, sizeof c);
  c.vm = vm;
  c.in = in;
  c.seen = tl_xcalloc((size_t)n, sizeof *c.seen);
  c.flow = tl_xcalloc((size_t)n, sizeof *c.flow);
  c.slots = tl_xcalloc((size_t)n, sizeof *c.slots);
  Val *block_slots = vm->slots;
  for (int64_t w = 0; w < n; w++) {
    c.flow[w] = F_ERROR; /* until it runs */
    c.slots[w] = tl_xcalloc(ns + 1, sizeof(Val));
    for (uint32_t k = 0; k < ns; k++)
      val_set(&c.slots[w][k], block_slots[k]);
    load_warp_values(vm, c.slots[w], w);
  }
  VmBaton *b = &c.baton;
  vm_baton_start(b, n, coop_warp, &c);
  vm->coop = &c;
  /* Round robin over the warps not finished that have not blocked since
   * the rings last changed; none left but some blocked: a deadlock, which
   * the first blocked warp reports when it resumes aborted. */
  for (int64_t next = 0;;) {
    int64_t pick = -1, left = 0;
    for (int64_t i = 0; i < n && pick < 0; i++) {
      int64_t w = (next + i) % n;
      if (b->state[w] == VB_DONE)
        continue;
      left++;
      if (b->state[w] == VB_READY || c.seen[w] != vm->coop_progress)
        pick = w;
    }
    if (pick < 0) {
      b->abort = left > 0;
      break;
    }
    vm->slots = c.slots[pick];
    vm->warp = (int)pick;
    vm_baton_run(b, pick);
    next = pick + 1;
    if (b->state[pick] == VB_DONE && !b->ok[pick]) {
      b->abort = true;
      break;
    }
  }
  for (int64_t w = 0; w < n; w++) /* the aborted ones, in their slots */
    if (b->state[w] != VB_DONE) {
      vm->slots = c.slots[w];
      vm->warp = (int)w;
      vm_baton_run(b, w);
    }
  vm_baton_finish(b);
  vm->coop = NULL;
  vm->slots = block_slots;
  vm->warp = -1;
  /* (tl.exit is refused in warp branches: a warp ends F_OK or F_ERROR.) */
  Flow f = F_OK;
  for (int64_t w = 0; w < n; w++)
    if (c.flow[w] != F_OK)
      f = F_ERROR;
  for (int64_t w = 0; w < n && f == F_OK; w++)
    keep_warp_results(vm, in, c.slots[w], w, merged);
  for (int64_t w = 0; w < n; w++) {
    for (uint32_t k = 0; k < ns; k++)
      val_clear(&c.slots[w][k]);
    tl_free(c.slots[w]);
  }
  tl_free(c.seen);
  tl_free(c.flow);
  tl_free(c.slots);
  return f;
}

static Flow run_body(TlVm *vm, Body *b) {
  for (unsigned i = 0; i < b->n; i++) {
    Inst *in = &b->insts[i];
    vm->stats.ops++;
    bool ok;
    if (in->warp && vm->warp < 0) {
      Flow f = run_per_warp(vm, in);
      if (f != F_OK)
        return f;
      continue;
    }
    if (in->tile_threads && vm->warp >= 0 &&
        (int64_t)vm->warp * 32 >= in->tile_threads) {
      int64_t last = in->tile_threads / 32 - 1;
      char holders[64];
      if (last > 0)
        snprintf(holders, sizeof holders, "warps 0 to %lld hold",
                 (long long)last);
      else
        snprintf(holders, sizeof holders, "warp 0 holds");
      vm_error(vm, in->op,
               "warp %d runs this op on a register tile over %lld threads "
               "(%s its elements)",
               vm->warp, (long long)in->tile_threads, holders);
      return F_ERROR;
    }
    if (vm->dot_recs.len && in->run != RUN_FLOW &&
        !vm_dot_operands_ok(vm, in))
      return F_ERROR;
    switch (in->run) {
    case RUN_FLOW: {
      Flow f = exec_flow(vm, in);
      if (f != F_OK)
        return f;
      continue;
    }
    case RUN_SCALAR:
      ok = exec_scalar(vm, in);
      break;
    case RUN_TILE:
      ok = vm_exec_tile(vm, in);
      break;
    case RUN_MEMORY:
      ok = vm_exec_memory(vm, in);
      break;
    default:
      TL_UNREACHABLE("compile_op refuses the ops the VM does not run");
    }
    if (!ok)
      return F_ERROR;
  }
  return F_OK;
}

/*===--- Running ---------------------------------------------------------===*/

/* Every register layout in the kernel spans the block's threads, or the
 * first warps of it inside a warp branch (the verifier checks it when
 * `threads` is a constant). */
typedef struct LayoutCheck {
  TlOp *kernel;
  TlUniformity *uni; /* made at the first tile over other threads */
  int64_t threads;
  bool ok;
} LayoutCheck;

static void check_op_layouts(TlOp *op, void *user) {
  LayoutCheck *c = user;
  if (!c->ok)
    return;
  for (unsigned i = 0; i < tl_op_num_results(op); i++) {
    TlType *t = tl_value_type(tl_op_result(op, i));
    if (tl_tensor_kind(t) != TL_TENSOR_REG)
      continue;
    int64_t n = tl_layout_num_threads(tl_reg_layout(t));
    if (n == c->threads)
      continue;
    if (!c->uni)
      c->uni = tl_uniformity_create(c->kernel);
    TlErr why;
    if (!tl_uniformity_tile_threads_ok(c->uni, op, n, c->threads, &why)) {
      tl_op_emit_error(op,
                       "result #%u is spread over %lld threads, but the "
                       "block has %lld (%s)",
                       i, (long long)n, (long long)c->threads, why.msg);
      c->ok = false;
      return;
    }
  }
}

static bool check_layouts(TlOp *kernel, int64_t threads) {
  LayoutCheck c = {kernel, NULL, threads, true};
  tl_op_walk(kernel, check_op_layouts, &c, false);
  tl_uniformity_destroy(c.uni);
  return c.ok;
}

/* A !tl.tensormap parameter takes a tensor map (TL's encoding) over a
 * buffer of the type's elements, with the type's rank, box and swizzle
 * and element strides 1; its base and strides must keep the tensor's
 * elements aligned in the buffer. */
static bool bind_tensor_map(TlOp *kernel, const char *name, TlType *t,
                            const TlVmArg *a) {
  TlStr ts = {0};
  tl_type_print(t, &ts);
  TlTensorMapDesc d;
  TlErr err;
  TlDType dt;
  bool ok = false;
  unsigned rank = tl_tensormap_rank(t);
  if (a->kind != TL_VM_ARG_TENSOR_MAP || !a->map) {
    tl_op_emit_error(kernel, "parameter '%s' (%s) needs a tensor map", name,
                     tl_str_cstr(&ts));
  } else if (!tl_tensor_map_decode(a->map, &d, &err)) {
    tl_op_emit_error(kernel, "parameter '%s': %s", name, err.msg);
  } else if (!tl_vm_dtype_of(tl_tensormap_elem(t), &dt) ||
             !tl_dtype_eq(dt, a->dtype)) {
    tl_op_emit_error(kernel, "parameter '%s' is %s, but the buffer holds %s",
                     name, tl_str_cstr(&ts), tl_dtype_name(a->dtype));
  } else if (d.rank != rank || d.elem_bytes * 8 != tl_dtype_bits(dt) ||
             d.swizzle != tl_tensormap_swizzle(t)) {
    tl_op_emit_error(kernel,
                     "parameter '%s' is %s, but the tensor map has %u "
                     "dimensions of %u-byte elements and a %u-byte swizzle",
                     name, tl_str_cstr(&ts), d.rank, d.elem_bytes, d.swizzle);
  } else if (!a->data && a->size) {
    tl_op_emit_error(kernel, "parameter '%s' has a NULL buffer", name);
  } else if (d.base % d.elem_bytes) {
    tl_op_emit_error(kernel,
                     "parameter '%s': the tensor map's base %llu is not a "
                     "multiple of its element size",
                     name, (unsigned long long)d.base);
  } else {
    ok = true;
    for (unsigned k = 0; k < rank && ok; k++) {
      /* The type's box is outermost first, the map's innermost first. */
      if (d.box[k] != (uint64_t)tl_tensormap_box(t, rank - 1 - k) ||
          d.elem_strides[k] != 1) {
        tl_op_emit_error(kernel,
                         "parameter '%s' is %s, but the tensor map's box "
                         "dimension %u is %u elements with element stride "
                         "%u",
                         name, tl_str_cstr(&ts), rank - 1 - k, d.box[k],
                         d.elem_strides[k]);
        ok = false;
      }
    }
  }
  tl_str_free(&ts);
  return ok;
}

static bool bind_args(TlVm *vm, TlOp *kernel, Body *body, unsigned nargs,
                      const TlVmArg *args, int64_t *ints) {
  unsigned n = tl_vm_num_params(kernel);
  if (nargs != n) {
    tl_op_emit_error(kernel, "takes %u arguments, but %u are given", n, nargs);
    return false;
  }
  for (unsigned i = 0; i < n; i++) {
    TlType *t = tl_vm_param_type(kernel, i);
    const char *name = tl_vm_param_name(kernel, i);
    const TlVmArg *a = &args[i];
    Val v = {V_SCALAR, 0, NULL};
    ints[i] = 0;
    if (tl_type_is_tensormap(t)) {
      if (!bind_tensor_map(kernel, name, t, a))
        return false;
      v.kind = V_PTR;
      v.bits = i;
    } else if (tl_type_is_ptr(t)) {
      TlDType dt;
      TlStr s = {0};
      tl_type_print(t, &s);
      bool ok = true;
      if (a->kind != TL_VM_ARG_BUFFER) {
        tl_op_emit_error(kernel, "parameter '%s' (%s) needs a buffer", name,
                         tl_str_cstr(&s));
        ok = false;
      } else if (!tl_vm_dtype_of(tl_tensor_elem(t), &dt)) {
        tl_op_emit_error(kernel,
                         "parameter '%s' (%s) points to a type with no "
                         "memory format",
                         name, tl_str_cstr(&s));
        ok = false;
      } else if (!tl_dtype_eq(dt, a->dtype)) {
        tl_op_emit_error(kernel,
                         "parameter '%s' is %s, but the buffer holds %s", name,
                         tl_str_cstr(&s), tl_dtype_name(a->dtype));
        ok = false;
      } else if (!a->data && a->size) {
        tl_op_emit_error(kernel, "parameter '%s' has a NULL buffer", name);
        ok = false;
      }
      tl_str_free(&s);
      if (!ok)
        return false;
      v.kind = V_PTR;
      v.bits = i;
    } else {
      const EType *e = vm_etype(vm, t);
      if (a->kind == TL_VM_ARG_BUFFER || a->kind == TL_VM_ARG_TENSOR_MAP) {
        tl_op_emit_error(kernel,
                         "parameter '%s' is a scalar, but a buffer is "
                         "given",
                         name);
        return false;
      }
      if (e->kind == EK_FLOAT)
        v.bits = e_fencode(e, a->kind == TL_VM_ARG_FLOAT ? a->f : (double)a->i);
      else if (a->kind == TL_VM_ARG_FLOAT) {
        tl_op_emit_error(kernel,
                         "parameter '%s' is an integer, but a float is "
                         "given",
                         name);
        return false;
      } else
        v.bits = (uint64_t)a->i & e->mask;
      if (e->kind != EK_FLOAT)
        ints[i] = e_sval(e, v.bits);
    }
    val_set(&vm->slots[body->args[i]], v);
  }
  return true;
}

static void collect_alloc_global(TlOp *op, void *user) {
  TL_VEC(TlOp *) *ws = user;
  if (tl_op_id(op) == TL_OP_TL_ALLOC_GLOBAL)
    tl_vec_push(ws, op);
}

TlResult tl_vm_run(TlVm *vm, TlOp *kernel, unsigned nargs,
                   const TlVmArg *args) {
  memset(&vm->stats, 0, sizeof vm->stats);
  vm->failed = false;
  vm->kernel = NULL;
  if (!is_kernel(kernel)) {
    tl_op_emit_error(kernel, "is not a tl.kernel");
    return TL_FAILURE;
  }
  Body *body = compile_kernel(vm, kernel);
  if (!body)
    return TL_FAILURE;
  uint32_t nslots = body->nslots;
  if (nslots > vm->slot_cap) {
    vm->slots = tl_xrealloc(vm->slots, sizeof(Val) * nslots);
    memset(vm->slots + vm->slot_cap, 0, sizeof(Val) * (nslots - vm->slot_cap));
    vm->slot_cap = nslots;
  }
  /* Integer arguments for the grid expressions, and for `assume` (the
   * VM's buffers have no addresses: 0, aligned to anything). */
  int64_t *ints = tl_xcalloc((size_t)nargs + 1, sizeof *ints);
  TlErr err;
  bool bound = bind_args(vm, kernel, body, nargs, args, ints) &&
               !TL_FAILED(tl_kernel_check_launch_assumptions(
                   kernel, nargs, (const uint64_t *)ints));
  bool sized = bound && tl_kernel_launch_dims(kernel, ints, vm->grid,
                                              &vm->threads, &err);
  tl_free(ints);
  if (!bound)
    return TL_FAILURE;
  if (!sized) {
    tl_op_emit_error(kernel, "cannot compute the launch size: %s", err.msg);
    return TL_FAILURE;
  }
  if (!check_layouts(kernel, vm->threads))
    return TL_FAILURE;
  vm->kernel = kernel;
  vm->tma_kernel = NULL;
  vm->warp = -1;
  vm->nwarps = (vm->threads + 31) / 32;
  vm->wstride = nslots;
  vm->wvals = body->nwslots
                  ? tl_xcalloc((size_t)vm->nwarps * nslots, sizeof *vm->wvals)
                  : NULL;
  /* The launch's workspaces (tl.alloc_global): zeroed buffers after the
   * arguments. */
  TL_VEC(TlOp *) ws = {0};
  tl_op_walk(kernel, collect_alloc_global, &ws, false);
  for (size_t k = 0; k < ws.len; k++) {
    TlType *t = tl_value_type(tl_op_result(ws.data[k], 0));
    if (!fits_memory(vm, ws.data[k], "a workspace",
                     tl_tensor_num_elements(t),
                     tl_global_workspace_bytes_of(t))) {
      tl_free(ws.data);
      tl_free(vm->wvals);
      vm->wvals = NULL;
      vm->kernel = NULL;
      return TL_FAILURE;
    }
  }
  TlVmArg *all = tl_xcalloc(nargs + ws.len + 1, sizeof *all);
  if (nargs)
    memcpy(all, args, sizeof *all * nargs);
  for (size_t k = 0; k < ws.len; k++) {
    TlType *t = tl_value_type(tl_op_result(ws.data[k], 0));
    TlVmArg *a = &all[nargs + k];
    a->kind = TL_VM_ARG_BUFFER;
    a->size = (size_t)tl_global_workspace_bytes_of(t);
    a->data = tl_xcalloc(a->size + 1, 1);
    tl_type_to_dtype(tl_tensor_elem(t), &a->dtype);
  }
  vm->args = all;
  vm->nargs = nargs + (unsigned)ws.len;
  vm->user_nargs = nargs;
  vm->ws_ops = ws.data;
  memcpy(vm->stats.grid, vm->grid, sizeof vm->grid);
  vm->stats.threads = vm->threads;
  vm_gtrack_begin(vm);
  TlResult result = TL_SUCCESS;
  for (int64_t z = 0; z < vm->grid[2] && !result; z++)
    for (int64_t y = 0; y < vm->grid[1] && !result; y++)
      for (int64_t x = 0; x < vm->grid[0] && !result; x++) {
        vm->block[0] = x;
        vm->block[1] = y;
        vm->block[2] = z;
        vm_block_begin(vm);
        Flow f = run_body(vm, body);
        vm->stats.blocks++;
        bool ok = vm_block_end(vm, f == F_OK) && f != F_ERROR;
        /* After each block too: loops are not the only way to run long. */
        if (ok && over_budget(vm)) {
          vm_block_budget_error(kernel, vm->max_ops, vm->stats.blocks);
          ok = false;
        }
        if (!ok) {
          /* The block goes last, after the error's own notes. */
          tl_emit_note(vm->ctx, tl_op_loc(kernel),
                       "in block (%lld, %lld, %lld) of the grid (%lld, %lld, "
                       "%lld)",
                       (long long)x, (long long)y, (long long)z,
                       (long long)vm->grid[0], (long long)vm->grid[1],
                       (long long)vm->grid[2]);
          result = TL_FAILURE;
        }
      }
  vm_gtrack_end(vm);
  tl_free(vm->wvals);
  vm->wvals = NULL;
  for (unsigned k = nargs; k < vm->nargs; k++)
    tl_free(all[k].data);
  tl_free(all);
  tl_free(ws.data);
  vm->ws_ops = NULL;
  vm->args = NULL;
  vm->nargs = 0;
  /* Drop every value but the parameters' (they are rebound next run). */
  for (uint32_t i = 0; i < vm->slot_cap; i++)
    val_clear(&vm->slots[i]);
  vm->kernel = NULL;
  return result;
}

TlResult tl_vm_run_named(TlVm *vm, TlModule *m, const char *name,
                         unsigned nargs, const TlVmArg *args) {
  TlOp *k = tl_vm_find_kernel(m, name);
  return k ? tl_vm_run(vm, k, nargs, args) : TL_FAILURE;
}
