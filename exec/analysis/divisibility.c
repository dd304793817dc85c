/* Divisibility of integer and pointer values, and the alignment of global
 * accesses derived from it (docs/analysis.md states the rules).
 *
 * A fact about a w-bit integer is the number of low bits known to be zero,
 * tz in 0..w (tz == w: the value is 0), and possibly the value itself.
 * Trailing zeros are what wrapping, truncation and extension preserve, so
 * the rules hold on the wrapped values of every integer type and for both
 * signed and unsigned readings. A pointer's fact is about its byte address
 * (w = 64).
 *
 * The facts are a lattice: "not reached yet" on top, then constants, then
 * tz from w down to 0. Every value starts on top and each sweep over the
 * ops (in program order) recomputes facts from the operands' facts; values
 * carried around loops (scf.for iter_args, scf.while arguments) join the
 * entering value with the one yielded back, so facts only move down and
 * the sweeps stop when nothing changes. */
#include "tl/analysis.h"
#include "tl/dialects.h"
#include "tl/tl.h"

#include <string.h>

/*===--- Facts -----------------------------------------------------------===*/

typedef struct Fact {
  const TlValue *key; /* NULL: empty slot */
  bool known;         /* false: not reached yet (top) */
  bool is_const;
  int tz;        /* low zero bits, 0..width */
  int64_t value; /* when is_const: as tl_attr_int_value reads it */
} Fact;

struct TlAnalysis {
  Fact *slots;
  size_t cap, len;
  bool changed;
  TlOp *root;
};

static uint64_t hash_ptr(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

static Fact *lookup(TlAnalysis *a, const TlValue *v) {
  size_t mask = a->cap - 1;
  for (size_t i = hash_ptr(v) & mask;; i = (i + 1) & mask)
    if (a->slots[i].key == v || !a->slots[i].key)
      return &a->slots[i];
}

static void grow(TlAnalysis *a) {
  Fact *old = a->slots;
  size_t n = a->cap;
  a->cap = n ? n * 2 : 64;
  a->slots = tl_xcalloc(a->cap, sizeof *a->slots);
  for (size_t i = 0; i < n; i++)
    if (old[i].key)
      *lookup(a, old[i].key) = old[i];
  tl_free(old);
}

static Fact *slot(TlAnalysis *a, const TlValue *v) {
  if (2 * (a->len + 1) > a->cap)
    grow(a);
  Fact *f = lookup(a, v);
  if (!f->key) {
    f->key = v;
    a->len++;
  }
  return f;
}

/* The facts this analysis tracks: integers (i1 included) and pointers. */
static int width_of(const TlType *t) {
  if (tl_type_is_int(t))
    return (int)tl_type_int_width(t);
  if (tl_type_is_ptr(t))
    return 64;
  return 0;
}

/* v wrapped to the w-bit type, read as signed or unsigned. */
static int64_t wrap(uint64_t v, int w, bool sgn) {
  if (w < 64) {
    v &= (UINT64_C(1) << w) - 1;
    if (sgn && (v >> (w - 1)) & 1)
      v |= ~((UINT64_C(1) << w) - 1);
  }
  return (int64_t)v;
}

static int ctz_w(uint64_t v, int w) {
  int n = 0;
  while (n < w && !((v >> n) & 1))
    n++;
  return n;
}

static Fact unknown(void) {
  Fact f = {0};
  f.known = true;
  return f;
}
static Fact with_tz(int tz, int w) {
  Fact f = unknown();
  f.tz = tz < 0 ? 0 : tz > w ? w : tz;
  return f;
}
static Fact constant(int64_t v, TlType *t) {
  int w = width_of(t);
  Fact f = unknown();
  f.is_const = true;
  f.value = wrap((uint64_t)v, w, tl_type_int_signed(t));
  f.tz = ctz_w((uint64_t)f.value, w);
  return f;
}

static Fact get(TlAnalysis *a, const TlValue *v) {
  Fact *f = lookup(a, v);
  return f->key ? *f : (Fact){0};
}

/* What is known of either of two values. */
static Fact join(Fact x, Fact y) {
  if (!x.known)
    return y;
  if (!y.known)
    return x;
  if (x.is_const && y.is_const && x.value == y.value)
    return x;
  Fact f = unknown();
  f.tz = x.tz < y.tz ? x.tz : y.tz;
  return f;
}

static void set(TlAnalysis *a, const TlValue *v, Fact f) {
  if (!width_of(tl_value_type(v)) || !f.known)
    return;
  Fact *s = slot(a, v);
  Fact old = *s;
  /* Facts only move down: keep what both sweeps allow. */
  Fact n = old.known ? join(old, f) : f;
  n.key = v;
  if (!old.known || old.is_const != n.is_const || old.tz != n.tz ||
      old.value != n.value)
    a->changed = true;
  *s = n;
}

/*===--- Kernel parameters -----------------------------------------------===*/

static int log2_exact(int64_t n) {
  if (n <= 0 || (n & (n - 1)))
    return -1;
  return ctz_w((uint64_t)n, 64);
}

/* The parameter named `name` of a kernel, or -1. */
static int param_index(TlOp *kernel, const char *name) {
  TlAttr *names = tl_op_attr(kernel, "arg_names");
  for (unsigned i = 0; names && i < tl_attr_array_size(names); i++)
    if (strcmp(tl_attr_string_value(tl_attr_array_elem(names, i), NULL),
               name) == 0)
      return (int)i;
  return -1;
}

TlResult tl_kernel_check_assumptions(TlOp *kernel) {
  TlAttr *as = tl_op_attr(kernel, "assume");
  if (!as)
    return TL_SUCCESS;
  if (tl_attr_kind(as) != TL_ATTR_DICT) {
    tl_op_emit_error(kernel, "'assume' must be a dictionary of parameter "
                             "names to powers of two");
    return TL_FAILURE;
  }
  TlResult r = TL_SUCCESS;
  TlBlock *entry = tl_region_first_block(tl_op_region(kernel, 0));
  for (unsigned i = 0; i < tl_attr_dict_size(as); i++) {
    TlNamedAttr e = tl_attr_dict_entry(as, i);
    int p = param_index(kernel, e.name);
    if (p < 0) {
      tl_op_emit_error(kernel, "'assume' names '%s', which is not a parameter",
                       e.name);
      r = TL_FAILURE;
      continue;
    }
    TlType *t = tl_value_type(tl_block_arg(entry, (unsigned)p));
    if ((!tl_type_is_int(t) || tl_type_is_bool(t)) && !tl_type_is_ptr(t)) {
      tl_op_emit_error(kernel,
                       "'assume' applies to integer and pointer parameters, "
                       "not to '%s'",
                       e.name);
      r = TL_FAILURE;
      continue;
    }
    int k = tl_attr_kind(e.attr) == TL_ATTR_INT
                ? log2_exact(tl_attr_int_value(e.attr))
                : -1;
    if (k < 0 || k > 30 || (tl_type_is_int(t) && k >= width_of(t))) {
      tl_op_emit_error(kernel,
                       "'assume' for '%s' must be a power of two from 1 to "
                       "2^%d",
                       e.name,
                       tl_type_is_int(t) && width_of(t) <= 31 ? width_of(t) - 1
                                                              : 30);
      r = TL_FAILURE;
    }
  }
  return r;
}

TlResult tl_kernel_check_launch_assumptions(TlOp *kernel, unsigned n,
                                           const uint64_t *values) {
  if (TL_FAILED(tl_kernel_check_assumptions(kernel)))
    return TL_FAILURE;
  TlAttr *as = tl_op_attr(kernel, "assume");
  if (!as)
    return TL_SUCCESS;
  TlResult r = TL_SUCCESS;
  TlBlock *entry = tl_region_first_block(tl_op_region(kernel, 0));
  for (unsigned i = 0; i < tl_attr_dict_size(as); i++) {
    TlNamedAttr e = tl_attr_dict_entry(as, i);
    int p = param_index(kernel, e.name);
    uint64_t d = (uint64_t)tl_attr_int_value(e.attr);
    if (p < 0 || (unsigned)p >= n || !(values[p] & (d - 1)))
      continue;
    TlType *t = tl_value_type(tl_block_arg(entry, (unsigned)p));
    if (tl_type_is_ptr(t))
      tl_op_emit_error(kernel,
                       "argument '%s' at address 0x%llx breaks 'assume': it "
                       "is not %llu-byte aligned",
                       e.name, (unsigned long long)values[p],
                       (unsigned long long)d);
    else if (tl_type_int_signed(t))
      tl_op_emit_error(kernel,
                       "argument '%s' = %lld breaks 'assume': it is not a "
                       "multiple of %llu",
                       e.name, (long long)values[p], (unsigned long long)d);
    else
      tl_op_emit_error(kernel,
                       "argument '%s' = %llu breaks 'assume': it is not a "
                       "multiple of %llu",
                       e.name, (unsigned long long)values[p],
                       (unsigned long long)d);
    r = TL_FAILURE;
  }
  return r;
}

/* A pointer to T is aligned to T when T is a whole power-of-two number of
 * bytes: the hardware's scalar accesses require it. */
static int natural_tz(TlType *ptr) {
  unsigned bits = tl_type_bitwidth(tl_tensor_elem(ptr));
  int k = log2_exact(bits);
  return k >= 3 ? k - 3 : 0;
}

static void seed_params(TlAnalysis *a) {
  TlOp *root = a->root;
  if (!tl_op_num_regions(root))
    return;
  TlBlock *entry = tl_region_first_block(tl_op_region(root, 0));
  bool kernel = tl_op_id(root) == TL_OP_TL_KERNEL;
  TlAttr *as = kernel ? tl_op_attr(root, "assume") : NULL;
  for (unsigned i = 0; entry && i < tl_block_num_args(entry); i++) {
    TlValue *v = tl_block_arg(entry, i);
    TlType *t = tl_value_type(v);
    int tz = tl_type_is_ptr(t) ? natural_tz(t) : 0;
    if (as) {
      TlAttr *names = tl_op_attr(root, "arg_names");
      TlAttr *n = tl_attr_dict_get(
          as, tl_attr_string_value(tl_attr_array_elem(names, i), NULL));
      int k = n ? log2_exact(tl_attr_int_value(n)) : -1;
      if (k > tz)
        tz = k;
    }
    set(a, v, with_tz(tz, width_of(t)));
  }
}

/*===--- Transfer functions ----------------------------------------------===*/

typedef enum Bin {
  B_ADD,
  B_SUB,
  B_MUL,
  B_DIV,
  B_CEILDIV,
  B_REM,
  B_AND,
  B_OR,
  B_XOR,
  B_SHL,
  B_SHR,
  B_MIN,
  B_MAX,
  B_NONE
} Bin;

static Bin bin_of(TlOpId id) {
  switch (id) {
  case TL_OP_ARITH_ADDI: return B_ADD;
  case TL_OP_ARITH_SUBI: return B_SUB;
  case TL_OP_ARITH_MULI: return B_MUL;
  case TL_OP_ARITH_DIVI: return B_DIV;
  case TL_OP_ARITH_CEILDIVI: return B_CEILDIV;
  case TL_OP_ARITH_REMI: return B_REM;
  case TL_OP_ARITH_ANDI: return B_AND;
  case TL_OP_ARITH_ORI: return B_OR;
  case TL_OP_ARITH_XORI: return B_XOR;
  case TL_OP_ARITH_SHLI: return B_SHL;
  case TL_OP_ARITH_SHRI: return B_SHR;
  case TL_OP_ARITH_MINI: return B_MIN;
  case TL_OP_ARITH_MAXI: return B_MAX;
  default: return B_NONE;
  }
}

/* x op y on constants; false where the result is undefined (division by
 * zero, MIN / -1, shifts by the width or more). */
static bool fold(Bin k, TlType *t, int64_t x, int64_t y, int64_t *out) {
  int w = width_of(t);
  bool sgn = tl_type_int_signed(t);
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  int64_t smin = (int64_t)wrap(UINT64_C(1) << (w - 1), w, true);
  switch (k) {
  case B_ADD:
    *out = (int64_t)(ux + uy);
    return true;
  case B_SUB:
    *out = (int64_t)(ux - uy);
    return true;
  case B_MUL:
    *out = (int64_t)(ux * uy);
    return true;
  case B_AND:
    *out = x & y;
    return true;
  case B_OR:
    *out = x | y;
    return true;
  case B_XOR:
    *out = x ^ y;
    return true;
  case B_MIN:
    *out = (sgn ? x < y : ux < uy) ? x : y;
    return true;
  case B_MAX:
    *out = (sgn ? x > y : ux > uy) ? x : y;
    return true;
  case B_SHL:
    if (uy >= (uint64_t)w)
      return false;
    *out = (int64_t)(ux << uy);
    return true;
  case B_SHR:
    if (uy >= (uint64_t)w)
      return false;
    *out = sgn ? x >> uy : (int64_t)(ux >> uy);
    return true;
  case B_DIV:
  case B_CEILDIV:
  case B_REM:
    if (y == 0 || (sgn && x == smin && y == -1))
      return false;
    if (sgn) {
      int64_t q = x / y, r = x % y;
      if (k == B_CEILDIV && r != 0 && (r > 0) == (y > 0))
        q++;
      *out = k == B_REM ? r : q;
    } else {
      uint64_t q = ux / uy, r = ux % uy;
      if (k == B_CEILDIV && r)
        q++;
      *out = (int64_t)(k == B_REM ? r : q);
    }
    return true;
  case B_NONE:
    break;
  }
  return false;
}

/* log2 |c| when the constant fact c is plus or minus a power of two (as
 * the type's signedness reads it), else -1. */
static int pow2_const(Fact c, bool sgn) {
  if (!c.is_const || c.value == 0)
    return -1;
  uint64_t m = (uint64_t)c.value;
  if (sgn && c.value < 0)
    m = (uint64_t)0 - m;
  return (m & (m - 1)) ? -1 : ctz_w(m, 64);
}

static Fact binary(Bin k, TlType *t, Fact x, Fact y) {
  int w = width_of(t);
  int64_t v;
  if (x.is_const && y.is_const && fold(k, t, x.value, y.value, &v))
    return constant(v, t);
  int lo = x.tz < y.tz ? x.tz : y.tz, hi = x.tz > y.tz ? x.tz : y.tz;
  int m;
  switch (k) {
  case B_ADD:
  case B_SUB:
  case B_OR:
  case B_XOR:
  case B_MIN:
  case B_MAX:
    /* The result's low bits below both operands' zeros are zero (min,
     * max: the result is one of the operands). */
    return with_tz(lo, w);
  case B_MUL:
    return with_tz(x.tz + y.tz, w);
  case B_AND:
    return with_tz(hi, w);
  case B_SHL:
    return with_tz(y.is_const && (uint64_t)y.value < (uint64_t)w
                       ? x.tz + (int)y.value
                       : x.tz,
                   w);
  case B_SHR:
    if (x.tz == w)
      return with_tz(w, w); /* 0 >> n is 0 */
    return with_tz(
        y.is_const && (uint64_t)y.value < (uint64_t)w ? x.tz - (int)y.value : 0,
        w);
  case B_DIV:
  case B_CEILDIV:
    /* An exact division by +-2^m removes m zeros. */
    m = pow2_const(y, tl_type_int_signed(t));
    if (x.tz == w && !(y.is_const && y.value == 0))
      return with_tz(w, w);
    return with_tz(m >= 0 && x.tz >= m ? x.tz - m : 0, w);
  case B_REM:
    /* x - q*y keeps the zeros common to x and y; a multiple of +-2^m
     * leaves no remainder. */
    m = pow2_const(y, tl_type_int_signed(t));
    if (m >= 0 && x.tz >= m)
      return constant(0, t);
    return with_tz(lo, w);
  case B_NONE:
    break;
  }
  return unknown();
}

static void transfer(TlAnalysis *a, TlOp *op);

static void sweep_block(TlAnalysis *a, TlBlock *b) {
  for (TlOp *o = tl_block_first_op(b); o; o = tl_op_next(o))
    transfer(a, o);
}

static TlBlock *entry_block(TlOp *op, unsigned r) {
  return tl_op_num_regions(op) > r ? tl_region_first_block(tl_op_region(op, r))
                                   : NULL;
}

static TlOp *terminator(TlOp *op, unsigned r) {
  TlBlock *b = entry_block(op, r);
  return b ? tl_block_last_op(b) : NULL;
}

/* Operand i of term, or nothing (top) when there is none. */
static Fact term_fact(TlAnalysis *a, TlOp *term, unsigned i) {
  if (!term || i >= tl_op_num_operands(term))
    return (Fact){0};
  return get(a, tl_op_operand(term, i));
}

static void transfer_for(TlAnalysis *a, TlOp *op) {
  TlBlock *body = entry_block(op, 0);
  TlValue *iv = tl_block_arg(body, 0);
  Fact lb = get(a, tl_op_operand(op, 0)), step = get(a, tl_op_operand(op, 2));
  /* i = lb + k * step */
  if (lb.known && step.known)
    set(a, iv,
        with_tz(lb.tz < step.tz ? lb.tz : step.tz,
                width_of(tl_value_type(iv))));
  TlOp *y = terminator(op, 0);
  for (unsigned i = 0; i < tl_op_num_results(op); i++) {
    Fact in = join(get(a, tl_op_operand(op, 3 + i)), term_fact(a, y, i));
    set(a, tl_block_arg(body, i + 1), in);
  }
  sweep_block(a, body);
  y = terminator(op, 0);
  for (unsigned i = 0; i < tl_op_num_results(op); i++)
    set(a, tl_op_result(op, i),
        join(get(a, tl_op_operand(op, 3 + i)), term_fact(a, y, i)));
}

static void transfer_if(TlAnalysis *a, TlOp *op) {
  for (unsigned r = 0; r < tl_op_num_regions(op); r++)
    if (entry_block(op, r))
      sweep_block(a, entry_block(op, r));
  TlOp *t = terminator(op, 0), *e = terminator(op, 1);
  for (unsigned i = 0; i < tl_op_num_results(op); i++)
    set(a, tl_op_result(op, i), join(term_fact(a, t, i), term_fact(a, e, i)));
}

static void transfer_while(TlAnalysis *a, TlOp *op) {
  TlBlock *before = entry_block(op, 0), *after = entry_block(op, 1);
  TlOp *y = terminator(op, 1);
  for (unsigned i = 0; i < tl_block_num_args(before); i++)
    set(a, tl_block_arg(before, i),
        join(get(a, tl_op_operand(op, i)), term_fact(a, y, i)));
  sweep_block(a, before);
  TlOp *c = terminator(op, 0);
  for (unsigned i = 0; i < tl_op_num_results(op); i++) {
    Fact f = term_fact(a, c, i + 1);
    set(a, tl_block_arg(after, i), f);
    set(a, tl_op_result(op, i), f);
  }
  sweep_block(a, after);
}

/* The template value a tl.template op names (its kernel's `template`). */
static bool template_value(TlAnalysis *a, TlOp *op, int64_t *v) {
  TlOp *k = tl_enclosing_kernel(op);
  TlAttr *n = tl_op_attr(op, "name");
  TlAttr *d = k ? tl_op_attr(k, "template") : NULL;
  TlAttr *e =
      d && n ? tl_attr_dict_get(d, tl_attr_string_value(n, NULL)) : NULL;
  if (!e || tl_attr_kind(e) != TL_ATTR_INT)
    return false;
  *v = tl_attr_int_value(e);
  return true;
}

static void transfer(TlAnalysis *a, TlOp *op) {
  TlOpId id = tl_op_id(op);
  if (id == TL_OP_SCF_FOR) {
    transfer_for(a, op);
    return;
  }
  if (id == TL_OP_SCF_IF) {
    transfer_if(a, op);
    return;
  }
  if (id == TL_OP_SCF_WHILE) {
    transfer_while(a, op);
    return;
  }
  /* Any other op with regions: its block arguments are unknown. */
  for (unsigned r = 0; r < tl_op_num_regions(op); r++)
    for (TlBlock *b = entry_block(op, r); b; b = tl_block_next(b)) {
      for (unsigned i = 0; i < tl_block_num_args(b); i++)
        set(a, tl_block_arg(b, i), unknown());
      sweep_block(a, b);
    }
  if (tl_op_num_results(op) != 1) {
    for (unsigned i = 0; i < tl_op_num_results(op); i++)
      set(a, tl_op_result(op, i), unknown()); /* tl.block_indices, ... */
    return;
  }
  TlValue *res = tl_op_result(op, 0);
  TlType *t = tl_value_type(res);
  if (!tl_type_is_int(t)) {
    set(a, res, unknown());
    return;
  }
  int w = width_of(t);
  unsigned n = tl_op_num_operands(op);
  Fact x = n > 0 ? get(a, tl_op_operand(op, 0)) : unknown();
  Fact y = n > 1 ? get(a, tl_op_operand(op, 1)) : unknown();
  Bin k = bin_of(id);
  int64_t v;
  if (k != B_NONE && n == 2) {
    if (x.known && y.known)
      set(a, res, binary(k, t, x, y));
  } else if (id == TL_OP_ARITH_CONSTANT) {
    TlAttr *c = tl_op_attr(op, "value");
    set(a, res,
        c && tl_attr_kind(c) == TL_ATTR_INT ? constant(tl_attr_int_value(c), t)
                                            : unknown());
  } else if (id == TL_OP_TL_TEMPLATE) {
    set(a, res, template_value(a, op, &v) ? constant(v, t) : unknown());
  } else if (id == TL_OP_ARITH_SELECT && n == 3) {
    Fact c = x, p = y, q = get(a, tl_op_operand(op, 2));
    if (c.known && c.is_const)
      set(a, res, c.value ? p : q);
    else if (c.known && p.known && q.known)
      set(a, res, join(p, q));
  } else if ((id == TL_OP_ARITH_EXTI || id == TL_OP_ARITH_TRUNCI ||
              id == TL_OP_ARITH_BITCAST) &&
             n == 1) {
    TlType *from = tl_value_type(tl_op_operand(op, 0));
    if (!tl_type_is_int(from)) {
      set(a, res, unknown());
    } else if (x.known) {
      int wf = width_of(from);
      /* exti: the same integer; trunci: the low bits; bitcast (equal
       * widths): the same bits. All keep the low zero bits. */
      set(a, res,
          x.is_const ? constant(x.value, t)
                     : with_tz(x.tz >= wf ? w : x.tz, w));
    }
  } else {
    set(a, res, unknown());
  }
}

/*===--- Running and queries ---------------------------------------------===*/

TlAnalysis *tl_analysis_run(TlOp *root) {
  if (tl_op_id(root) == TL_OP_TL_KERNEL &&
      TL_FAILED(tl_kernel_check_assumptions(root)))
    return NULL;
  TlAnalysis *a = tl_xcalloc(1, sizeof *a);
  a->root = root;
  grow(a);
  seed_params(a);
  /* Facts only move down and each has fewer than 70 levels, so this ends;
   * loops nested d deep need about d + 1 sweeps. */
  do {
    a->changed = false;
    for (unsigned r = 0; r < tl_op_num_regions(root); r++)
      for (TlBlock *b = entry_block(root, r); b; b = tl_block_next(b))
        sweep_block(a, b);
  } while (a->changed);
  return a;
}

void tl_analysis_destroy(TlAnalysis *a) {
  if (!a)
    return;
  tl_free(a->slots);
  tl_free(a);
}

/* Low zero bits of v's value (64 for zero), or -1 if not tracked. */
static int tz_of(TlAnalysis *a, TlValue *v) {
  int w = width_of(tl_value_type(v));
  if (!w)
    return -1;
  Fact f = get(a, v);
  if (!f.known)
    return 0;
  return f.tz >= w ? 64 : f.tz;
}

static int64_t pow2_capped(int k) { return INT64_C(1) << (k > 30 ? 30 : k); }

int64_t tl_analysis_divisibility(TlAnalysis *a, TlValue *v) {
  int k = tz_of(a, v);
  return k < 0 ? 0 : pow2_capped(k);
}

bool tl_analysis_constant(TlAnalysis *a, TlValue *v, int64_t *value) {
  if (!tl_type_is_int(tl_value_type(v)))
    return false;
  Fact f = get(a, v);
  if (!f.known || !f.is_const)
    return false;
  *value = f.value;
  return true;
}

/*===--- Global accesses -------------------------------------------------===*/

/* Saturating sum of zero-bit counts (64 stands for "zero"). */
static int add_tz(int x, int y) { return x + y > 64 ? 64 : x + y; }

/* The view's pointer fact and, per dimension, the zero bits of its size
 * and stride and the stride's value when constant (-1 if not). */
typedef struct ViewInfo {
  unsigned rank;
  int ptr_tz;
  int elem_bits;
  int size_tz[TL_LAYOUT_MAX_RANK], stride_tz[TL_LAYOUT_MAX_RANK];
  int64_t size[TL_LAYOUT_MAX_RANK], stride[TL_LAYOUT_MAX_RANK];
} ViewInfo;

static int const_tz(int64_t c) { return c == 0 ? 64 : ctz_w((uint64_t)c, 64); }

static bool view_info(TlAnalysis *a, TlValue *view, ViewInfo *vi) {
  TlType *g = tl_value_type(view);
  if (tl_tensor_kind(g) != TL_TENSOR_GLOBAL ||
      tl_tensor_rank(g) > TL_LAYOUT_MAX_RANK)
    return false;
  memset(vi, 0, sizeof *vi);
  vi->rank = tl_tensor_rank(g);
  vi->elem_bits = (int)tl_type_bitwidth(tl_tensor_elem(g));
  TlOp *d = tl_value_def(view);
  bool from_view = d && tl_op_id(d) == TL_OP_TL_VIEW_GLOBAL;
  TlAttr *dims = from_view ? tl_op_attr(d, "static_dims") : NULL;
  TlAttr *strides = from_view ? tl_op_attr(d, "static_strides") : NULL;
  if (from_view) {
    vi->ptr_tz = tz_of(a, tl_op_operand(d, 0));
  } else {
    int k = log2_exact(vi->elem_bits);
    vi->ptr_tz = k >= 3 ? k - 3 : 0;
  }
  /* Runtime sizes, then runtime strides, follow the pointer operand. */
  unsigned next = 1;
  for (unsigned i = 0; i < vi->rank; i++) {
    int64_t s = dims ? tl_attr_int_value(tl_attr_array_elem(dims, i))
                     : tl_tensor_dim(g, i);
    vi->size[i] = -1;
    if (s >= 0) {
      vi->size[i] = s;
      vi->size_tz[i] = const_tz(s);
    } else if (from_view) {
      TlValue *v = tl_op_operand(d, next++);
      int64_t c;
      vi->size_tz[i] = tz_of(a, v);
      if (tl_analysis_constant(a, v, &c))
        vi->size[i] = c;
    }
  }
  if (tl_global_type_strided(g)) {
    for (unsigned i = 0; i < vi->rank; i++) {
      int64_t s =
          strides ? tl_attr_int_value(tl_attr_array_elem(strides, i)) : -1;
      vi->stride[i] = -1;
      if (s >= 0) {
        vi->stride[i] = s;
        vi->stride_tz[i] = const_tz(s);
      } else if (strides) {
        TlValue *v = tl_op_operand(d, next++);
        int64_t c;
        vi->stride_tz[i] = tz_of(a, v);
        if (tl_analysis_constant(a, v, &c))
          vi->stride[i] = c;
      }
    }
  } else {
    /* Row-major: stride_k = prod_{j > k} size_j. */
    int tz = 0;
    int64_t s = 1;
    for (unsigned i = vi->rank; i-- > 0;) {
      vi->stride_tz[i] = tz;
      vi->stride[i] = s;
      tz = add_tz(tz, vi->size_tz[i]);
      if (s >= 0 && vi->size[i] >= 0 && vi->size[i] <= INT32_MAX &&
          s <= INT64_MAX / (vi->size[i] ? vi->size[i] : 1))
        s *= vi->size[i];
      else
        s = -1;
    }
  }
  return true;
}

/* Zero bits of the bit address of the element; see
 * tl_analysis_view_alignment. */
static int element_tz(TlAnalysis *a, const ViewInfo *vi,
                      TlValue *const *offsets, const int64_t *index_div) {
  int e = const_tz(vi->elem_bits);
  int tz = add_tz(vi->ptr_tz, 3);
  for (unsigned k = 0; k < vi->rank; k++) {
    int o = tz_of(a, offsets[k]);
    int term = add_tz(add_tz(e, o < 0 ? 0 : o), vi->stride_tz[k]);
    if (term < tz)
      tz = term;
    if (index_div && index_div[k] > 0) {
      term = add_tz(add_tz(e, const_tz(index_div[k])), vi->stride_tz[k]);
      if (term < tz)
        tz = term;
    }
  }
  return tz;
}

static int64_t bytes_of(int tz_bits) {
  return tz_bits < 3 ? 0 : pow2_capped(tz_bits - 3);
}

int64_t tl_analysis_view_alignment(TlAnalysis *a, TlValue *view,
                                   TlValue *const *offsets,
                                   const int64_t *index_div) {
  ViewInfo vi;
  if (!view_info(a, view, &vi))
    return 0;
  return bytes_of(element_tz(a, &vi, offsets, index_div));
}

bool tl_analysis_access_alignment(TlAnalysis *a, TlOp *op,
                                  TlAccessAlignment *out) {
  TlOpId id = tl_op_id(op);
  TlValue *view;
  TlType *tile;
  unsigned from;
  if (id == TL_OP_TL_LOAD_GLOBAL) {
    view = tl_op_operand(op, 0);
    tile = tl_value_type(tl_op_result(op, 0));
    from = 1;
  } else if (id == TL_OP_TL_STORE_GLOBAL ||
             (id == TL_OP_TL_ATOMIC_RMW && !tl_op_num_results(op))) {
    view = tl_op_operand(op, 1);
    tile = tl_value_type(tl_op_operand(op, 0));
    from = 2;
  } else if (id == TL_OP_TL_COPY_ASYNC) {
    view = tl_op_operand(op, 1);
    tile = tl_value_type(tl_op_operand(op, 0));
    from = 2;
  } else {
    return false;
  }
  ViewInfo vi;
  if (!view_info(a, view, &vi) || tl_op_num_operands(op) != from + vi.rank ||
      tl_tensor_rank(tile) != vi.rank)
    return false;
  TlValue *offs[TL_LAYOUT_MAX_RANK];
  int64_t zero[TL_LAYOUT_MAX_RANK] = {0}, rows[TL_LAYOUT_MAX_RANK] = {0},
          all[TL_LAYOUT_MAX_RANK] = {0};
  unsigned n = vi.rank;
  for (unsigned k = 0; k < n; k++) {
    offs[k] = tl_op_operand(op, from + k);
    /* Tile dimensions of size 1 only ever use index 0. */
    int64_t step = tl_tensor_dim(tile, k) > 1 ? 1 : 0;
    all[k] = step;
    rows[k] = k + 1 < n ? step : 0;
  }
  out->first = bytes_of(element_tz(a, &vi, offs, zero));
  out->row = bytes_of(element_tz(a, &vi, offs, rows));
  out->element = bytes_of(element_tz(a, &vi, offs, all));
  int64_t c = 1;
  if (vi.stride[n - 1] == 1) {
    c = tl_tensor_dim(tile, n - 1);
    for (unsigned k = n - 1; k-- > 0;) {
      int64_t next = tl_tensor_dim(tile, k + 1);
      /* Row k + 1 of the tile ends where row k's next element starts:
       * stride_k = stride_{k+1} * tile_{k+1} (for a row-major view, the
       * tile spans the whole dimension k + 1). */
      if (vi.stride[k + 1] < 0 || vi.stride[k] < 0 ||
          vi.stride[k + 1] > INT64_MAX / next ||
          vi.stride[k] != vi.stride[k + 1] * next)
        break;
      c *= tl_tensor_dim(tile, k);
    }
  }
  out->contiguous = c;
  return true;
}
