/* The VM's driver: the public API, the compilation of a kernel into
 * instruction lists over value slots, the run over the grid, structured
 * control flow (scf) and the scalar ops of arith. Tile ops live in tile.c,
 * memory ops in memory.c; docs/vm.md states the semantics. */
#include "vm_internal.h"
#include "tl/analysis.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/*===--- Kernels and parameters ------------------------------------------===*/

static bool is_kernel(TlOp *op) {
  return strcmp(tl_op_name(op), "tl.kernel") == 0;
}

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

/* After each loop iteration: false, after an error at the loop, once the
 * run has executed more ops than its budget. */
static bool within_budget(TlVm *vm, Inst *loop) {
  if (!vm->max_ops || vm->stats.ops <= vm->max_ops)
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

/* The opcodes of arith and scf ops, which both VMs run the same way. */
static const struct {
  const char *name;
  OpCode code;
} scalar_ops[] = {
    {"arith.constant", OC_CONST},
    {"arith.addi", OC_ADDI},
    {"arith.subi", OC_SUBI},
    {"arith.muli", OC_MULI},
    {"arith.divi", OC_DIVI},
    {"arith.remi", OC_REMI},
    {"arith.ceildivi", OC_CEILDIVI},
    {"arith.andi", OC_ANDI},
    {"arith.ori", OC_ORI},
    {"arith.xori", OC_XORI},
    {"arith.shli", OC_SHLI},
    {"arith.shri", OC_SHRI},
    {"arith.mini", OC_MINI},
    {"arith.maxi", OC_MAXI},
    {"arith.addf", OC_ADDF},
    {"arith.subf", OC_SUBF},
    {"arith.mulf", OC_MULF},
    {"arith.divf", OC_DIVF},
    {"arith.minf", OC_MINF},
    {"arith.maxf", OC_MAXF},
    {"arith.negf", OC_NEGF},
    {"arith.absf", OC_ABSF},
    {"arith.cmpi", OC_CMPI},
    {"arith.cmpf", OC_CMPF},
    {"arith.select", OC_SELECT},
    {"arith.exti", OC_EXTI},
    {"arith.trunci", OC_TRUNCI},
    {"arith.itofp", OC_ITOFP},
    {"arith.fptoi", OC_FPTOI},
    {"arith.extf", OC_EXTF},
    {"arith.truncf", OC_TRUNCF},
    {"arith.bitcast", OC_BITCAST},
    {"scf.for", OC_FOR},
    {"scf.if", OC_IF},
    {"scf.while", OC_WHILE},
};

int vm_scalar_opcode(const char *name) {
  for (size_t i = 0; i < sizeof scalar_ops / sizeof scalar_ops[0]; i++)
    if (strcmp(scalar_ops[i].name, name) == 0)
      return scalar_ops[i].code;
  return -1;
}

static const struct {
  const char *name;
  OpCode code;
} op_names[] = {
    {"tl.template", OC_TEMPLATE},
    {"tl.block_indices", OC_BLOCK_INDICES},
    {"tl.view_global", OC_VIEW_GLOBAL},
    {"tl.alloc_register", OC_ALLOC_REGISTER},
    {"tl.load_global", OC_LOAD_GLOBAL},
    {"tl.store_global", OC_STORE_GLOBAL},
    {"tl.alloc_shared", OC_ALLOC_SHARED},
    {"tl.alloc_global", OC_ALLOC_GLOBAL},
    {"tl.free_shared", OC_FREE_SHARED},
    {"tl.load_shared", OC_LOAD_SHARED},
    {"tl.store_shared", OC_STORE_SHARED},
    {"tl.copy_async", OC_COPY_ASYNC},
    {"tl.copy_async_commit", OC_COMMIT},
    {"tl.copy_async_wait", OC_WAIT},
    {"tl.synchronize", OC_SYNC},
    {"tl.exit", OC_EXIT},
    {"tl.print", OC_PRINT},
    {"tl.cmp", OC_CMP},
    {"tl.where", OC_WHERE},
    {"tl.broadcast", OC_BROADCAST},
    {"tl.cast", OC_CAST},
    {"tl.view", OC_VIEW},
    {"tl.reshape", OC_RESHAPE},
    {"tl.permute", OC_PERMUTE},
    {"tl.slice", OC_SLICE},
    {"tl.dot", OC_DOT},
    {"tl.reduce", OC_REDUCE},
    {"tl.add", OC_ADD},
    {"tl.sub", OC_SUB},
    {"tl.mul", OC_MUL},
    {"tl.div", OC_DIV},
    {"tl.mod", OC_MOD},
    {"tl.max", OC_MAX},
    {"tl.min", OC_MIN},
    {"tl.and", OC_AND},
    {"tl.or", OC_OR},
    {"tl.xor", OC_XOR},
    {"tl.shl", OC_SHL},
    {"tl.shr", OC_SHR},
    {"tl.neg", OC_NEG},
    {"tl.abs", OC_ABS},
    {"tl.not", OC_NOT},
    {"tl.exp", OC_EXP},
    {"tl.exp2", OC_EXP2},
    {"tl.log2", OC_LOG2},
    {"tl.sqrt", OC_SQRT},
    {"tl.rsqrt", OC_RSQRT},
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

static bool compile_op(TlVm *vm, TlOp *op, Inst *in) {
  in->op = op;
  in->code = OC_UNKNOWN;
  int sc = vm_scalar_opcode(tl_op_name(op));
  if (sc >= 0)
    in->code = (OpCode)sc;
  for (size_t i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
    if (strcmp(op_names[i].name, tl_op_name(op)) == 0)
      in->code = op_names[i].code;
  if (in->code == OC_UNKNOWN) {
    tl_op_emit_error(op, "the VM does not execute this op");
    return false;
  }
  in->nin = tl_op_num_operands(op);
  in->nout = tl_op_num_results(op);
  in->in = TL_ARENA_NEWN(&vm->arena, uint32_t, in->nin + 1);
  in->out = TL_ARENA_NEWN(&vm->arena, uint32_t, in->nout + 1);
  for (unsigned i = 0; i < in->nin; i++)
    in->in[i] = slot_for(vm, tl_op_operand(op, i));
  for (unsigned i = 0; i < in->nout; i++)
    in->out[i] = slot_for(vm, tl_op_result(op, i));
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
  case OC_CONST:
    in->konst = attr_code(vm, tl_op_attr(op, "value"), rt);
    break;
  case OC_CMPI:
    in->pred = tl_cmpi_predicate_of(op);
    in->et = in->et2;
    break;
  case OC_CMPF:
    in->pred = tl_cmpf_predicate_of(op);
    in->et = in->et2;
    break;
  case OC_CMP:
    in->pred = tl_cmpi_predicate_of(op);
    break;
  case OC_REDUCE:
    in->pred = tl_reduce_kind_of(op);
    in->imm = tl_attr_int_value(tl_op_attr(op, "dim"));
    break;
  case OC_WAIT:
    in->imm = tl_attr_int_value(tl_op_attr(op, "pending"));
    break;
  case OC_SLICE:
  case OC_RESHAPE:
  case OC_PERMUTE:
    /* On shared tiles these make views: memory.c runs them. */
    if (tl_tensor_kind(ot) == TL_TENSOR_SHARED) {
      in->imm = in->code;
      in->code = OC_SHARED_VIEW;
    }
    break;
  case OC_ALLOC_REGISTER:
    if (tl_op_attr(op, "init")) {
      in->konst = attr_code(vm, tl_op_attr(op, "init"), tl_tensor_elem(rt));
      in->has_konst = true;
    }
    break;
  case OC_TEMPLATE: {
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
  in->nregions = tl_op_num_regions(op);
  if (in->nregions) {
    in->regions = TL_ARENA_NEWN(&vm->arena, Body, in->nregions);
    for (unsigned r = 0; r < in->nregions; r++) {
      TlBlock *b = tl_region_first_block(tl_op_region(op, r));
      if (b && !compile_block(vm, b, &in->regions[r]))
        return false;
    }
  }
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
    const char *name = tl_op_name(op);
    if (!strcmp(name, "scf.yield") || !strcmp(name, "scf.condition")) {
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
  bool ok =
      compile_block(vm, tl_region_first_block(tl_op_region(kernel, 0)), b);
  pmap_free(&vm->slots_of);
  if (!ok)
    return NULL;
  b->nslots = vm->nslots;
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
bool vm_int_binary(TlVm *vm, TlOp *op, const EType *e, OpCode k, uint64_t a,
                   uint64_t b, uint64_t *out);
bool vm_int_binary(TlVm *vm, TlOp *op, const EType *e, OpCode k, uint64_t a,
                   uint64_t b, uint64_t *out) {
  bool sgn = e->kind == EK_SINT;
  int64_t x = e_sval(e, a), y = e_sval(e, b);
  int64_t smin = e->bits == 64 ? INT64_MIN : -(int64_t)(1ull << (e->bits - 1));
  uint64_t r;
  switch (k) {
  case OC_ADDI:
    r = a + b;
    break;
  case OC_SUBI:
    r = a - b;
    break;
  case OC_MULI:
    r = a * b;
    break;
  case OC_ANDI:
    r = a & b;
    break;
  case OC_ORI:
    r = a | b;
    break;
  case OC_XORI:
    r = a ^ b;
    break;
  case OC_DIVI:
  case OC_REMI:
  case OC_CEILDIVI:
    if (b == 0)
      return vm_error(vm, op, "integer division by zero");
    if (sgn && x == smin && y == -1)
      return vm_error(vm, op, "signed division overflow (%lld / -1)",
                      (long long)x);
    if (sgn) {
      int64_t q = x / y, rem = x % y;
      if (k == OC_CEILDIVI && rem != 0 && ((rem > 0) == (y > 0)))
        q++;
      r = (uint64_t)(k == OC_REMI ? rem : q);
    } else {
      uint64_t q = a / b, rem = a % b;
      if (k == OC_CEILDIVI && rem)
        q++;
      r = k == OC_REMI ? rem : q;
    }
    break;
  case OC_SHLI:
  case OC_SHRI:
    if (b >= e->bits)
      return vm_error(vm, op, "shift amount %llu is not less than the width %u",
                      (unsigned long long)b, e->bits);
    if (k == OC_SHLI)
      r = a << b;
    else
      r = sgn ? (uint64_t)(x >> b) : a >> b;
    break;
  case OC_MINI:
    r = (sgn ? x < y : a < b) ? a : b;
    break;
  case OC_MAXI:
    r = (sgn ? x > y : a > b) ? a : b;
    break;
  default:
    TL_UNREACHABLE("not an integer op");
  }
  *out = r & e->mask;
  return true;
}

/* Float binary op of codes of type e, rounded once to e. */
uint64_t vm_float_binary(const EType *e, OpCode k, uint64_t a, uint64_t b);
uint64_t vm_float_binary(const EType *e, OpCode k, uint64_t a, uint64_t b) {
  double x = e_f(e, a), y = e_f(e, b), v;
  /* +, -, *, / of two doubles holding p-bit values, p <= 24, rounded to
   * double and then to p bits, equal the exact result rounded once
   * (53 >= 2p + 2); f64 computes natively. */
  switch (k) {
  case OC_ADDF:
    v = x + y;
    break;
  case OC_SUBF:
    v = x - y;
    break;
  case OC_MULF:
    v = x * y;
    break;
  case OC_DIVF:
    v = x / y;
    break;
  case OC_MINF:
    v = fmin_nan(x, y);
    break;
  case OC_MAXF:
    v = fmax_nan(x, y);
    break;
  default:
    TL_UNREACHABLE("not a float op");
  }
  return e_fencode(e, v);
}

static uint64_t sign_bit(const EType *e) { return 1ull << (e->bits - 1); }

static bool exec_scalar(TlVm *vm, Inst *in) {
  const EType *e = in->et;
  Val *a = in->nin > 0 ? vm_in(vm, in, 0) : NULL;
  Val *b = in->nin > 1 ? vm_in(vm, in, 1) : NULL;
  uint64_t r = 0;
  switch (in->code) {
  case OC_CONST:
  case OC_TEMPLATE:
    r = in->konst;
    break;
  case OC_ADDI:
  case OC_SUBI:
  case OC_MULI:
  case OC_DIVI:
  case OC_REMI:
  case OC_CEILDIVI:
  case OC_ANDI:
  case OC_ORI:
  case OC_XORI:
  case OC_SHLI:
  case OC_SHRI:
  case OC_MINI:
  case OC_MAXI:
    if (!vm_int_binary(vm, in->op, e, in->code, a->bits, b->bits, &r))
      return false;
    break;
  case OC_ADDF:
  case OC_SUBF:
  case OC_MULF:
  case OC_DIVF:
  case OC_MINF:
  case OC_MAXF:
    r = vm_float_binary(e, in->code, a->bits, b->bits);
    break;
  case OC_NEGF:
    r = a->bits ^ sign_bit(e);
    break;
  case OC_ABSF:
    r = a->bits & ~sign_bit(e);
    break;
  case OC_CMPI:
    r = e->kind == EK_SINT ? tl_cmpi_holds_signed(in->pred, e_sval(e, a->bits),
                                                  e_sval(e, b->bits))
                           : tl_cmpi_holds_unsigned(in->pred, a->bits, b->bits);
    break;
  case OC_CMPF:
    r = tl_cmpf_holds(in->pred, e_f(e, a->bits), e_f(e, b->bits));
    break;
  case OC_SELECT:
    r = a->bits ? b->bits : vm_in(vm, in, 2)->bits;
    break;
  case OC_EXTI:
    r = (uint64_t)e_sval(in->et2, a->bits) & e->mask;
    break;
  case OC_TRUNCI:
  case OC_BITCAST:
    r = a->bits & e->mask;
    break;
  case OC_ITOFP:
  case OC_FPTOI:
  case OC_EXTF:
  case OC_TRUNCF:
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

static Flow run_body(TlVm *vm, Body *b) {
  for (unsigned i = 0; i < b->n; i++) {
    Inst *in = &b->insts[i];
    vm->stats.ops++;
    bool ok;
    switch (in->code) {
    case OC_FOR: {
      Flow f = exec_for(vm, in);
      if (f != F_OK)
        return f;
      continue;
    }
    case OC_IF: {
      Flow f = exec_if(vm, in);
      if (f != F_OK)
        return f;
      continue;
    }
    case OC_WHILE: {
      Flow f = exec_while(vm, in);
      if (f != F_OK)
        return f;
      continue;
    }
    case OC_EXIT:
      return F_EXIT;
    case OC_BLOCK_INDICES:
      for (unsigned r = 0; r < in->nout; r++)
        vm_put_scalar(vm, in, r, (uint64_t)vm->block[r] & 0xffffffffu);
      continue;
    case OC_VIEW_GLOBAL:
    case OC_LOAD_GLOBAL:
    case OC_STORE_GLOBAL:
    case OC_ALLOC_SHARED:
    case OC_ALLOC_GLOBAL:
    case OC_FREE_SHARED:
    case OC_LOAD_SHARED:
    case OC_STORE_SHARED:
    case OC_COPY_ASYNC:
    case OC_COMMIT:
    case OC_WAIT:
    case OC_SYNC:
    case OC_SHARED_VIEW:
      ok = vm_exec_memory(vm, in);
      break;
    default:
      if (in->code < OC_FOR || in->code == OC_TEMPLATE)
        ok = exec_scalar(vm, in);
      else
        ok = vm_exec_tile(vm, in);
      break;
    }
    if (!ok)
      return F_ERROR;
  }
  return F_OK;
}

/*===--- Running ---------------------------------------------------------===*/

/* Threads of every register layout in the kernel fit the block. */
static bool check_layouts(TlVm *vm, TlOp *kernel, int64_t threads);

typedef struct LayoutCheck {
  TlVm *vm;
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
    if (n > c->threads) {
      tl_op_emit_error(op,
                       "result #%u is spread over %lld threads, but the "
                       "block has %lld",
                       i, (long long)n, (long long)c->threads);
      c->ok = false;
      return;
    }
  }
}

static bool check_layouts(TlVm *vm, TlOp *kernel, int64_t threads) {
  LayoutCheck c = {vm, threads, true};
  tl_op_walk(kernel, check_op_layouts, &c, false);
  return c.ok;
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
    if (tl_type_is_ptr(t)) {
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
      if (a->kind == TL_VM_ARG_BUFFER) {
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
  if (!strcmp(tl_op_name(op), "tl.alloc_global"))
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
  if (!check_layouts(vm, kernel, vm->threads))
    return TL_FAILURE;
  vm->kernel = kernel;
  /* The launch's workspaces (tl.alloc_global): zeroed buffers after the
   * arguments. */
  TL_VEC(TlOp *) ws = {0};
  tl_op_walk(kernel, collect_alloc_global, &ws, false);
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
        if (!vm_block_end(vm, f == F_OK) || f == F_ERROR) {
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
