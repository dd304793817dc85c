/* The bytes each tl.view_global of a kernel needs from the buffer its
 * pointer parameter is given (include/tl/analysis.h, "Global view
 * extents"), so that a launch can refuse a buffer that is too small before
 * anything reaches the GPU.
 *
 * A view of sizes s_i and element strides t_i over elements of b bits
 * spans elements 0 .. sum_i (s_i - 1) t_i from its pointer, so it needs
 *
 *   ceildiv((1 + sum_i (s_i - 1) t_i) * b, 8)   bytes, or 0 when some s_i = 0.
 *
 * Each size and stride is traced back through the integer arith ops to
 * constants, template values and integer parameters; the result is an
 * expression tree over the parameters, folded where its operands are
 * constants. The view needs those bytes only where it is used: each use
 * is reached under the conditions of the scf.if branches around it, which
 * are traced the same way (a condition that cannot be traced counts as
 * true; loops count as entered). The bytes are then
 *
 *   (guard_1 || guard_2 || ...) * (the sizes positive) * bytes
 *
 * written in the language of requires clauses (tl_cond_check evaluates
 * it with every name a constant) and evaluated here over a launch's
 * arguments from the tree. A view whose size or stride depends on
 * anything else (a loaded value, block indices, a loop's counter, a float)
 * is left unchecked, with the reason. */
#include "tl/analysis.h"
#include "tl/dialects.h"
#include "tl/predicates.h"
#include "tl/tl.h"

#include <string.h>

/* Node kinds. */
typedef enum Kind {
  K_CONST, /* value */
  K_PARAM, /* integer parameter `param`, wrapped to `bits` (signed or not) */
  K_ADD,
  K_SUB,
  K_MUL,
  K_DIV,
  K_REM,
  K_CEILDIV,
  K_MIN,
  K_MAX,
  K_EQ,
  K_NE,
  K_LT,
  K_LE,
  K_GT,
  K_GE,
  K_AND,
  K_OR,
  K_NOT,
} Kind;

typedef struct Node {
  Kind kind;
  int a, b; /* operand nodes, -1 when none */
  int64_t value;
  unsigned param, bits;
  bool is_signed;
} Node;

typedef struct View {
  TlOp *op;
  unsigned param;
  int root; /* the bytes, or -1: unchecked */
  const char *why;
  TlStr text, bytes;
} View;

struct TlViewExtents {
  TlOp *kernel;
  TL_VEC(Node) nodes;
  TL_VEC(View) views;
  unsigned nparams;
  const char **names;
};

/* Deep enough for any kernel of the library; a deeper chain is left
 * unchecked rather than recursed into without bound. */
enum { MAX_TRACE_DEPTH = 48 };

static int node(TlViewExtents *x, Node n) {
  tl_vec_push(&x->nodes, n);
  return (int)x->nodes.len - 1;
}

static int constant(TlViewExtents *x, int64_t v) {
  return node(x, (Node){K_CONST, -1, -1, v, 0, 0, false});
}

static bool is_const(const TlViewExtents *x, int n, int64_t v) {
  return x->nodes.data[n].kind == K_CONST && x->nodes.data[n].value == v;
}

/* a op b in 64-bit integers; false on overflow or a divisor that is not
 * positive. '/' and '%' floor, as the expression language's do. */
static bool apply(Kind k, int64_t a, int64_t b, int64_t *r) {
  switch (k) {
  case K_ADD:
    return !__builtin_add_overflow(a, b, r);
  case K_SUB:
    return !__builtin_sub_overflow(a, b, r);
  case K_MUL:
    return !__builtin_mul_overflow(a, b, r);
  case K_DIV:
    if (b <= 0)
      return false;
    *r = a / b - (a % b < 0);
    return true;
  case K_REM:
    if (b <= 0)
      return false;
    *r = a % b < 0 ? a % b + b : a % b;
    return true;
  case K_CEILDIV:
    if (b <= 0)
      return false;
    *r = a / b + (a % b > 0);
    return true;
  case K_MIN:
    *r = a < b ? a : b;
    return true;
  case K_MAX:
    *r = a > b ? a : b;
    return true;
  case K_EQ:
    *r = a == b;
    return true;
  case K_NE:
    *r = a != b;
    return true;
  case K_LT:
    *r = a < b;
    return true;
  case K_LE:
    *r = a <= b;
    return true;
  case K_GT:
    *r = a > b;
    return true;
  case K_GE:
    *r = a >= b;
    return true;
  case K_AND:
    *r = a && b;
    return true;
  case K_OR:
    *r = a || b;
    return true;
  default:
    TL_UNREACHABLE("not a binary node");
  }
}

/* Whether nodes a and b are the same expression. */
static bool same(const TlViewExtents *x, int a, int b) {
  if (a == b)
    return true;
  if (a < 0 || b < 0)
    return false;
  const Node *na = &x->nodes.data[a], *nb = &x->nodes.data[b];
  if (na->kind != nb->kind)
    return false;
  if (na->kind == K_CONST)
    return na->value == nb->value;
  if (na->kind == K_PARAM)
    return na->param == nb->param;
  return same(x, na->a, nb->a) && same(x, na->b, nb->b);
}

static int binary(TlViewExtents *x, Kind k, int a, int b);

/* e + c, with e's own constant term merged: (y + 3) + 1 is y + 4. */
static int add_const(TlViewExtents *x, int e, int64_t c) {
  const Node *ne = &x->nodes.data[e];
  int64_t inner, sum;
  if ((ne->kind == K_ADD || ne->kind == K_SUB) &&
      x->nodes.data[ne->b].kind == K_CONST) {
    inner = x->nodes.data[ne->b].value;
    if (ne->kind == K_SUB && __builtin_sub_overflow(0, inner, &inner))
      return -1;
    if (__builtin_add_overflow(inner, c, &sum))
      return -1;
    int y = ne->a;
    if (sum == 0)
      return y;
    if (sum < 0 && sum != INT64_MIN)
      return binary(x, K_SUB, y, constant(x, -sum));
    return binary(x, K_ADD, y, constant(x, sum));
  }
  return -1;
}

/* a k b, folded when both are constants (and the fold is defined), and
 * the identities that keep the text short. */
static int binary(TlViewExtents *x, Kind k, int a, int b) {
  const Node *na = &x->nodes.data[a], *nb = &x->nodes.data[b];
  int64_t r;
  if (na->kind == K_CONST && nb->kind == K_CONST &&
      apply(k, na->value, nb->value, &r))
    return constant(x, r);
  if (k == K_ADD || k == K_SUB) {
    /* A constant joins the other operand's constant term. */
    int m = -1;
    if (nb->kind == K_CONST && (k == K_ADD || nb->value != INT64_MIN))
      m = add_const(x, a, k == K_ADD ? nb->value : -nb->value);
    else if (na->kind == K_CONST && k == K_ADD)
      m = add_const(x, b, na->value);
    if (m >= 0)
      return m;
  }
  if ((k == K_AND || k == K_OR) && same(x, a, b))
    return a;
  if ((k == K_AND || k == K_OR) &&
      ((x->nodes.data[a].kind == K_NOT && same(x, x->nodes.data[a].a, b)) ||
       (x->nodes.data[b].kind == K_NOT && same(x, x->nodes.data[b].a, a))))
    return constant(x, k == K_OR);
  if ((k == K_DIV || k == K_CEILDIV) && is_const(x, b, 1))
    return a;
  if ((k == K_ADD && is_const(x, a, 0)) || (k == K_MUL && is_const(x, a, 1)))
    return b;
  if (((k == K_ADD || k == K_SUB) && is_const(x, b, 0)) ||
      ((k == K_MUL || k == K_DIV) && is_const(x, b, 1)))
    return a;
  if (k == K_MUL && (is_const(x, a, 0) || is_const(x, b, 0)))
    return constant(x, 0);
  if (k == K_AND && (is_const(x, a, 0) || is_const(x, b, 0)))
    return constant(x, 0);
  if (k == K_AND && x->nodes.data[a].kind == K_CONST)
    return b;
  /* a && (a && c) is a && c: guards repeat their conditions. */
  if (k == K_AND && x->nodes.data[b].kind == K_AND &&
      (same(x, a, x->nodes.data[b].a) || same(x, a, x->nodes.data[b].b)))
    return b;
  if (k == K_AND && x->nodes.data[b].kind == K_CONST)
    return a;
  if (k == K_OR && x->nodes.data[a].kind == K_CONST && !is_const(x, a, 0))
    return constant(x, 1);
  if (k == K_OR && is_const(x, a, 0))
    return b;
  if (k == K_OR && is_const(x, b, 0))
    return a;
  return node(x, (Node){k, a, b, 0, 0, 0, false});
}

static int negation(TlViewExtents *x, int a) {
  if (x->nodes.data[a].kind == K_CONST)
    return constant(x, x->nodes.data[a].value == 0);
  return node(x, (Node){K_NOT, a, -1, 0, 0, 0, false});
}

/* The kernel's value of template parameter `name`, or false. */
static bool template_value(TlOp *kernel, const char *name, int64_t *v) {
  TlAttr *templ = tl_op_attr(kernel, "template");
  TlAttr *a = templ && name ? tl_attr_dict_get(templ, name) : NULL;
  if (!a || tl_attr_kind(a) != TL_ATTR_INT)
    return false;
  *v = tl_attr_int_value(a);
  return true;
}

/* The tree of integer value v, or -1 after setting *why. */
static int trace(TlViewExtents *x, TlValue *v, int depth, const char **why) {
  TlType *t = tl_value_type(v);
  if (!tl_type_is_int(t)) {
    *why = "a size or stride is not an integer value";
    return -1;
  }
  if (depth > MAX_TRACE_DEPTH) {
    *why = "a size or stride is computed by too long a chain of ops";
    return -1;
  }
  TlOp *d = tl_value_def(v);
  if (!d) {
    TlBlock *b = tl_value_block(v);
    TlOp *owner = b ? tl_block_parent_op(b) : NULL;
    if (owner != x->kernel) {
      *why = "a size or stride depends on a loop's or region's argument";
      return -1;
    }
    return node(x, (Node){K_PARAM, -1, -1, 0, tl_value_index(v),
                          tl_type_bitwidth(t), tl_type_int_signed(t)});
  }
  TlAttr *c = tl_value_constant(v);
  if (c && tl_attr_kind(c) == TL_ATTR_INT)
    return constant(x, tl_attr_int_value(c));
  int64_t tv;
  switch (tl_op_id(d)) {
  case TL_OP_TL_TEMPLATE:
    if (template_value(x->kernel,
                       tl_attr_string_value(tl_op_attr(d, "name"), NULL), &tv))
      return constant(x, tv);
    break;
  case TL_OP_ARITH_EXTI:
  case TL_OP_ARITH_TRUNCI:
  case TL_OP_ARITH_BITCAST:
    /* Value-preserving for the non-negative sizes of a correct launch;
     * the launch's values are read at their parameters' own width. */
    if (tl_type_is_int(tl_value_type(tl_op_operand(d, 0))))
      return trace(x, tl_op_operand(d, 0), depth + 1, why);
    break;
  case TL_OP_ARITH_ADDI:
  case TL_OP_ARITH_SUBI:
  case TL_OP_ARITH_MULI:
  case TL_OP_ARITH_DIVI:
  case TL_OP_ARITH_REMI:
  case TL_OP_ARITH_CEILDIVI:
  case TL_OP_ARITH_MINI:
  case TL_OP_ARITH_MAXI:
  case TL_OP_ARITH_CMPI: {
    static const Kind cmp[] = {
        [TL_CMPI_EQ] = K_EQ, [TL_CMPI_NE] = K_NE, [TL_CMPI_LT] = K_LT,
        [TL_CMPI_LE] = K_LE, [TL_CMPI_GT] = K_GT, [TL_CMPI_GE] = K_GE};
    Kind k;
    switch (tl_op_id(d)) {
    case TL_OP_ARITH_ADDI:
      k = K_ADD;
      break;
    case TL_OP_ARITH_SUBI:
      k = K_SUB;
      break;
    case TL_OP_ARITH_MULI:
      k = K_MUL;
      break;
    case TL_OP_ARITH_DIVI:
      k = K_DIV;
      break;
    case TL_OP_ARITH_REMI:
      k = K_REM;
      break;
    case TL_OP_ARITH_CEILDIVI:
      k = K_CEILDIV;
      break;
    case TL_OP_ARITH_MINI:
      k = K_MIN;
      break;
    case TL_OP_ARITH_MAXI:
      k = K_MAX;
      break;
    default: {
      TlCmpiPredicate p = tl_cmpi_predicate_of(d);
      if (p < 0 || p > TL_CMPI_GE ||
          !tl_type_is_int(tl_value_type(tl_op_operand(d, 0)))) {
        *why = "a size, stride or condition compares in a way not traced";
        return -1;
      }
      k = cmp[p];
    }
    }
    int a = trace(x, tl_op_operand(d, 0), depth + 1, why);
    int b = a < 0 ? -1 : trace(x, tl_op_operand(d, 1), depth + 1, why);
    return b < 0 ? -1 : binary(x, k, a, b);
  }
  case TL_OP_ARITH_ANDI:
  case TL_OP_ARITH_ORI:
    /* Booleans only: the conditions of branches. */
    if (tl_type_is_bool(t)) {
      int a = trace(x, tl_op_operand(d, 0), depth + 1, why);
      int b = a < 0 ? -1 : trace(x, tl_op_operand(d, 1), depth + 1, why);
      if (b < 0)
        return -1;
      return binary(x, tl_op_id(d) == TL_OP_ARITH_ANDI ? K_AND : K_OR, a, b);
    }
    break;
  case TL_OP_ARITH_XORI:
    /* `xori %c, true`: the negation of a condition. */
    if (tl_type_is_bool(t)) {
      TlAttr *one = tl_value_constant(tl_op_operand(d, 1));
      if (one && tl_attr_kind(one) == TL_ATTR_INT && tl_attr_int_value(one)) {
        int a = trace(x, tl_op_operand(d, 0), depth + 1, why);
        return a < 0 ? -1 : negation(x, a);
      }
    }
    break;
  case TL_OP_TL_BLOCK_INDICES:
    *why = "a size or stride depends on the block's indices";
    return -1;
  default:
    break;
  }
  *why = tl_op_num_operands(d) && tl_op_id(d) != TL_OP_ARITH_SELECT
             ? "a size or stride depends on a value read or computed by an op "
               "not traced"
             : "a size or stride depends on a value not traced";
  if (tl_op_id(d) == TL_OP_ARITH_SELECT)
    *why = "a size or stride is chosen by arith.select";
  return -1;
}

/* The condition under which op runs, from the scf.if branches around it
 * below the kernel (1 where none can be traced). */
static int guard(TlViewExtents *x, TlOp *op) {
  int g = constant(x, 1);
  for (TlOp *in = op, *p = tl_op_parent(op); p && in != x->kernel;
       in = p, p = tl_op_parent(p)) {
    if (tl_op_id(p) != TL_OP_SCF_IF || p == x->kernel)
      continue;
    const char *why;
    int c = trace(x, tl_op_operand(p, 0), 0, &why);
    if (c < 0)
      continue;
    bool then = tl_block_region(tl_op_block(in)) == tl_op_region(p, 0);
    g = binary(x, K_AND, g, then ? c : negation(x, c));
  }
  return g;
}

/*===--- Printing ---------------------------------------------------------===*/

/* Precedence levels of the language (tl.h): || 1, && 2, comparisons 3,
 * + - 4, * / % 5, factors 6. */
static int prec(Kind k) {
  switch (k) {
  case K_OR:
    return 1;
  case K_AND:
    return 2;
  case K_EQ:
  case K_NE:
  case K_LT:
  case K_LE:
  case K_GT:
  case K_GE:
    return 3;
  case K_ADD:
  case K_SUB:
    return 4;
  case K_MUL:
  case K_DIV:
  case K_REM:
    return 5;
  default:
    return 6;
  }
}

static void print(const TlViewExtents *x, int n, int need, TlStr *out);

static void print_node(const TlViewExtents *x, int n, TlStr *out) {
  static const char *const ops[] = {
      [K_ADD] = " + ", [K_SUB] = " - ", [K_MUL] = " * ", [K_DIV] = " / ",
      [K_REM] = " % ", [K_EQ] = " == ", [K_NE] = " != ", [K_LT] = " < ",
      [K_LE] = " <= ", [K_GT] = " > ",  [K_GE] = " >= ", [K_AND] = " && ",
      [K_OR] = " || "};
  const Node *d = &x->nodes.data[n];
  switch (d->kind) {
  case K_CONST:
    /* No unary minus in the language. */
    if (d->value < 0)
      tl_str_printf(out, "(0 - %llu)", 0ull - (unsigned long long)d->value);
    else
      tl_str_printf(out, "%lld", (long long)d->value);
    return;
  case K_PARAM:
    tl_str_puts(out, x->names[d->param]);
    return;
  case K_NOT:
    tl_str_putc(out, '!');
    print(x, d->a, 6, out);
    return;
  case K_CEILDIV:
  case K_MIN:
  case K_MAX:
    tl_str_puts(out, d->kind == K_CEILDIV ? "ceildiv("
                     : d->kind == K_MIN   ? "min("
                                          : "max(");
    print(x, d->a, 1, out);
    tl_str_puts(out, ", ");
    print(x, d->b, 1, out);
    tl_str_putc(out, ')');
    return;
  default: {
    int p = prec(d->kind);
    /* Comparisons do not chain; the right operand of - / % binds
     * tighter. */
    bool left_assoc = p != 3;
    print(x, d->a, left_assoc ? p : p + 1, out);
    tl_str_puts(out, ops[d->kind]);
    print(x, d->b, p + 1, out);
  }
  }
}

static void print(const TlViewExtents *x, int n, int need, TlStr *out) {
  const Node *d = &x->nodes.data[n];
  bool paren = prec(d->kind) < need || (d->kind == K_CONST && d->value < 0);
  if (paren && !(d->kind == K_CONST))
    tl_str_putc(out, '(');
  print_node(x, n, out);
  if (paren && !(d->kind == K_CONST))
    tl_str_putc(out, ')');
}

/*===--- Views ------------------------------------------------------------===*/

typedef struct Walk {
  TlViewExtents *x;
} Walk;

/* Size or stride i of a view: the literal of `stat`, else the next
 * operand (*next). */
static TlValue *mixed(TlOp *op, TlAttr *stat, unsigned i, unsigned *next,
                      int64_t *lit) {
  *lit = tl_attr_int_value(tl_attr_array_elem(stat, i));
  return *lit < 0 ? tl_op_operand(op, (*next)++) : NULL;
}

static void add_view(TlViewExtents *x, TlOp *op) {
  View w;
  memset(&w, 0, sizeof w);
  w.op = op;
  w.root = -1;
  TlValue *ptr = tl_op_operand(op, 0);
  TlBlock *pb = tl_value_block(ptr);
  TlType *g = tl_value_type(tl_op_result(op, 0));
  TlAttr *dims = tl_op_attr(op, "static_dims"),
         *strides = tl_op_attr(op, "static_strides");
  unsigned rank = tl_tensor_rank(g);
  unsigned next = 1;
  const char *why = NULL;
  int size[16], stride[16];
  if (!pb || tl_block_parent_op(pb) != x->kernel || tl_value_def(ptr)) {
    /* Not a parameter's pointer: nothing a launch binds. */
    return;
  }
  w.param = tl_value_index(ptr);
  tl_str_printf(&w.text, "%s[", x->names[w.param]);
  if (rank > 16)
    why = "the view has more than 16 dimensions";
  for (unsigned i = 0; i < rank && i < 16; i++) {
    int64_t lit;
    TlValue *v = mixed(op, dims, i, &next, &lit);
    size[i] = v ? trace(x, v, 0, &why) : constant(x, lit);
    if (size[i] < 0) {
      const char *h = tl_value_name_hint(v);
      tl_str_printf(&w.text, "%s%%%s", i ? ", " : "", h ? h : "?");
      size[i] = constant(x, 0);
      if (!why)
        why = "a size cannot be traced";
      continue;
    }
    if (i)
      tl_str_puts(&w.text, ", ");
    print(x, size[i], 1, &w.text);
  }
  tl_str_putc(&w.text, ']');
  for (unsigned i = 0; strides && !why && i < rank; i++) {
    int64_t lit;
    TlValue *v = mixed(op, strides, i, &next, &lit);
    stride[i] = v ? trace(x, v, 0, &why) : constant(x, lit);
    if (stride[i] < 0)
      break;
  }
  for (unsigned r = rank; !strides && !why && r-- > 0;)
    stride[r] = r + 1 == rank ? constant(x, 1)
                              : binary(x, K_MUL, stride[r + 1], size[r + 1]);
  /* Where the view is used: unused, or used only in branches a constant
   * condition never takes, it needs nothing. */
  int reached = constant(x, 0);
  for (TlUse *u = tl_value_first_use(tl_op_result(op, 0)); u;
       u = tl_use_next(u))
    reached = binary(x, K_OR, reached, guard(x, tl_use_owner(u)));
  if (why) {
    w.why = why;
  } else if (is_const(x, reached, 0)) {
    w.why = tl_value_has_uses(tl_op_result(op, 0))
                ? "the view is used only in branches this instance never takes"
                : "the view is not used";
  } else {
    /* The last element's offset, then the bytes up to its end. */
    int last = constant(x, 0), positive = reached;
    for (unsigned i = 0; i < rank; i++) {
      int s1 = binary(x, K_SUB, size[i], constant(x, 1));
      last = binary(x, K_ADD, last, binary(x, K_MUL, s1, stride[i]));
      positive =
          binary(x, K_AND, positive, binary(x, K_GT, size[i], constant(x, 0)));
      /* A runtime stride below 0 reaches memory before the pointer,
       * which no byte count describes: such a launch is not checked. */
      if (x->nodes.data[stride[i]].kind != K_CONST)
        positive = binary(x, K_AND, positive,
                          binary(x, K_GE, stride[i], constant(x, 0)));
    }
    int64_t bits = tl_type_bitwidth(tl_tensor_elem(g));
    int elems = binary(x, K_ADD, constant(x, 1), last);
    int bytes = binary(x, K_CEILDIV, binary(x, K_MUL, elems, constant(x, bits)),
                       constant(x, 8));
    if (bits % 8 == 0)
      bytes = binary(x, K_MUL, elems, constant(x, bits / 8));
    /* A 0/1 condition times the bytes. */
    w.root = binary(x, K_MUL, positive, bytes);
    if (x->nodes.data[w.root].kind == K_CONST &&
        x->nodes.data[w.root].value < 0)
      w.root = constant(x, 0);
    print(x, w.root, 1, &w.bytes);
  }
  tl_vec_push(&x->views, w);
}

static void visit(TlOp *op, void *user) {
  Walk *w = user;
  if (tl_op_id(op) == TL_OP_TL_VIEW_GLOBAL)
    add_view(w->x, op);
}

TlViewExtents *tl_view_extents_create(TlOp *kernel) {
  TlViewExtents *x = tl_xcalloc(1, sizeof *x);
  x->kernel = kernel;
  TlAttr *names = tl_op_attr(kernel, "arg_names");
  TlBlock *body = tl_op_num_regions(kernel)
                      ? tl_region_first_block(tl_op_region(kernel, 0))
                      : NULL;
  x->nparams = body ? tl_block_num_args(body) : 0;
  x->names = tl_xcalloc(x->nparams + 1, sizeof *x->names);
  for (unsigned i = 0; i < x->nparams; i++) {
    const char *n =
        names && i < tl_attr_array_size(names)
            ? tl_attr_string_value(tl_attr_array_elem(names, i), NULL)
            : NULL;
    x->names[i] = n ? n : "?";
  }
  Walk w = {x};
  if (body)
    tl_op_walk(kernel, visit, &w, false);
  return x;
}

void tl_view_extents_destroy(TlViewExtents *x) {
  if (!x)
    return;
  for (size_t i = 0; i < x->views.len; i++) {
    tl_str_free(&x->views.data[i].text);
    tl_str_free(&x->views.data[i].bytes);
  }
  tl_vec_free(&x->views);
  tl_vec_free(&x->nodes);
  tl_free(x->names);
  tl_free(x);
}

unsigned tl_view_extents_count(const TlViewExtents *x) {
  return (unsigned)x->views.len;
}

void tl_view_extents_get(const TlViewExtents *x, unsigned i,
                         TlViewExtent *out) {
  View *w = &x->views.data[i];
  out->view = w->op;
  out->param = w->param;
  out->text = tl_str_cstr(&w->text);
  out->bytes = w->root >= 0 ? tl_str_cstr(&w->bytes) : NULL;
  out->why = w->why;
}

/*===--- Evaluation -------------------------------------------------------===*/

/* Node n over the launch's values; false on overflow or a divisor that
 * is not positive. && and || skip their right operand when the left
 * decides, and a product whose left operand (a condition) is 0 skips its
 * right one, as the language's && does: the bytes of a view in a branch
 * the launch does not take are not evaluated. */
static bool eval(const TlViewExtents *x, int n, const int64_t *args,
                 int64_t *r) {
  const Node *d = &x->nodes.data[n];
  int64_t a, b;
  switch (d->kind) {
  case K_CONST:
    *r = d->value;
    return true;
  case K_PARAM: {
    /* As the kernel sees the value: wrapped to its parameter's width. */
    uint64_t v = (uint64_t)args[d->param];
    unsigned w = d->bits;
    if (w && w < 64) {
      v &= (UINT64_C(1) << w) - 1;
      if (d->is_signed && (v >> (w - 1)) & 1)
        v |= ~((UINT64_C(1) << w) - 1);
    }
    *r = (int64_t)v;
    return true;
  }
  case K_NOT:
    if (!eval(x, d->a, args, &a))
      return false;
    *r = a == 0;
    return true;
  default:
    break;
  }
  if (!eval(x, d->a, args, &a))
    return false;
  if ((d->kind == K_AND || d->kind == K_MUL) && a == 0) {
    *r = 0;
    return true;
  }
  if (d->kind == K_OR && a != 0) {
    *r = 1;
    return true;
  }
  return eval(x, d->b, args, &b) && apply(d->kind, a, b, r);
}

bool tl_view_extents_eval(const TlViewExtents *x, unsigned i,
                          const int64_t *int_args, int64_t *bytes) {
  const View *w = &x->views.data[i];
  if (w->root < 0) {
    *bytes = 0;
    return true;
  }
  return eval(x, w->root, int_args, bytes);
}

void tl_view_extents_needs(const TlViewExtents *x, unsigned n,
                           const int64_t *int_args, int64_t *need, int *view) {
  for (unsigned i = 0; i < n; i++) {
    need[i] = 0;
    view[i] = -1;
  }
  for (unsigned v = 0; v < tl_view_extents_count(x); v++) {
    TlViewExtent e;
    tl_view_extents_get(x, v, &e);
    int64_t b;
    if (!e.bytes || e.param >= n || need[e.param] < 0)
      continue;
    if (!tl_view_extents_eval(x, v, int_args, &b))
      b = -1;
    if (b < 0 || b > need[e.param]) {
      need[e.param] = b;
      view[e.param] = (int)v;
    }
  }
}
