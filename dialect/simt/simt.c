/* The simt dialect: one thread's program after lowering. Values are the
 * thread's registers (scalars of the builtin types and small vectors
 * !simt.vec<NxT>); memory is reached through byte pointers
 * !simt.ptr<global> and !simt.ptr<shared>; warp-collective instructions
 * (ldmatrix, mma, shfl) are written from one lane's point of view, with
 * the PTX ISA's fragment layouts. Arithmetic on scalars comes from arith,
 * control flow from scf.
 *
 * Each op stands for one PTX instruction (or, where a target lacks it, an
 * equivalent sequence that the translation to LLVM IR emits), and the
 * verifier accepts only the forms that ptxas assembles, so that a verified
 * op does not fail in ptxas for a reason the IR shows: the mma, ldmatrix
 * and cp.async forms are the rows of the form table (include/tl/forms.def),
 * and whether the target has a form is checked when translating for it.
 * docs/simt.md lists every rule.
 *
 * Every op's custom form is `simt.op operands {attrs} : types -> results`;
 * attributes are checked by name and kind before the op's own rules run,
 * so a misspelt hint is an error rather than a silent no-op. */
#include "tl/simt.h"
#include "tl/arch.h"
#include "tl/dialects.h"
#include "tl/predicates.h"

#include <stdio.h>
#include <string.h>

/*===--- Types -----------------------------------------------------------===*/

/* !simt.vec<NxT>: param 0 = N (i64), param 1 = element type.
 * !simt.ptr<global|shared>: param 0 = address space (i64, TlSimtSpace). */
extern const TlTypeDef simt_vec_def, simt_ptr_def, simt_tensormap_def;

TlType *tl_simt_vec_type(TlContext *ctx, unsigned n, TlType *elem) {
  if (n < 1 || n > 16 || !tl_type_is_scalar(elem))
    return NULL;
  TlAttr *p[2] = {tl_attr_int(ctx, tl_type_int(ctx, 64, true), n),
                  tl_attr_type(ctx, elem)};
  return tl_type_dialect(ctx, &simt_vec_def, 2, p);
}

TlType *tl_simt_ptr_type(TlContext *ctx, TlSimtSpace space) {
  TlAttr *p = tl_attr_int(ctx, tl_type_int(ctx, 64, true), space);
  return tl_type_dialect(ctx, &simt_ptr_def, 1, &p);
}

bool tl_simt_is_vec(const TlType *t) {
  return t && tl_type_kind(t) == TL_TYPE_DIALECT &&
         tl_type_def(t) == &simt_vec_def;
}
unsigned tl_simt_vec_size(const TlType *t) {
  return (unsigned)tl_attr_int_value(tl_type_param(t, 0));
}
TlType *tl_simt_vec_elem(const TlType *t) {
  return tl_attr_type_value(tl_type_param(t, 1));
}
bool tl_simt_is_ptr(const TlType *t) {
  return t && tl_type_kind(t) == TL_TYPE_DIALECT &&
         tl_type_def(t) == &simt_ptr_def;
}
TlSimtSpace tl_simt_ptr_space(const TlType *t) {
  return (TlSimtSpace)tl_attr_int_value(tl_type_param(t, 0));
}

unsigned tl_simt_value_bits(const TlType *t) {
  if (tl_type_is_scalar(t))
    return tl_type_bitwidth(t);
  if (tl_simt_is_vec(t))
    return tl_simt_vec_size(t) * tl_type_bitwidth(tl_simt_vec_elem(t));
  return 0;
}

static TlType *vec_parse(TlParser *p, const TlTypeDef *def) {
  TlDimVec dims = {0};
  TlType *elem, *t = NULL;
  TlLoc l = tl_parser_loc(p);
  if (TL_FAILED(tl_parse_punct(p, "<")) ||
      TL_FAILED(tl_parse_shape_and_type(p, &dims, &elem)) ||
      TL_FAILED(tl_parse_punct(p, ">")))
    goto out;
  if (dims.len != 1 || dims.data[0] < 1 || dims.data[0] > 16 ||
      !tl_type_is_scalar(elem)) {
    tl_parser_error(p, l,
                    "!simt.vec is 1 to 16 scalars, e.g. !simt.vec<2xf16>");
    goto out;
  }
  t = tl_simt_vec_type(tl_parser_context(p), (unsigned)dims.data[0], elem);
out:
  tl_vec_free(&dims);
  return t;
}

static void vec_print(const TlType *t, TlStr *out) {
  tl_str_printf(out, "<%ux", tl_simt_vec_size(t));
  tl_type_print(tl_simt_vec_elem(t), out);
  tl_str_putc(out, '>');
}

static TlType *ptr_parse(TlParser *p, const TlTypeDef *def) {
  if (TL_FAILED(tl_parse_punct(p, "<")))
    return NULL;
  TlLoc l = tl_parser_loc(p);
  TlSimtSpace s;
  if (tl_parse_optional_keyword(p, "global"))
    s = TL_SIMT_GLOBAL;
  else if (tl_parse_optional_keyword(p, "shared"))
    s = TL_SIMT_SHARED;
  else {
    tl_parser_error(p, l, "expected 'global' or 'shared'");
    return NULL;
  }
  if (TL_FAILED(tl_parse_punct(p, ">")))
    return NULL;
  return tl_simt_ptr_type(tl_parser_context(p), s);
}

static void ptr_print(const TlType *t, TlStr *out) {
  tl_str_puts(out,
              tl_simt_ptr_space(t) == TL_SIMT_GLOBAL ? "<global>" : "<shared>");
}

/* !simt.tensormap has no parameters. */
static TlType *tensormap_parse(TlParser *p, const TlTypeDef *def) {
  (void)def;
  return tl_simt_tensormap_type(tl_parser_context(p));
}

static void tensormap_print(const TlType *t, TlStr *out) {
  (void)t;
  (void)out;
}

const TlTypeDef simt_vec_def = {"simt.vec", vec_parse, vec_print};
const TlTypeDef simt_ptr_def = {"simt.ptr", ptr_parse, ptr_print};
const TlTypeDef simt_tensormap_def = {"simt.tensormap", tensormap_parse,
                                      tensormap_print};

TlType *tl_simt_tensormap_type(TlContext *ctx) {
  return tl_type_dialect(ctx, &simt_tensormap_def, 0, NULL);
}

bool tl_simt_is_tensormap(const TlType *t) {
  return t && tl_type_kind(t) == TL_TYPE_DIALECT &&
         tl_type_def(t) == &simt_tensormap_def;
}

/*===--- Helpers ---------------------------------------------------------===*/

static TlType *ot(const TlOp *op, unsigned i) {
  return tl_value_type(tl_op_operand(op, i));
}
static TlType *rt(const TlOp *op, unsigned i) {
  return tl_value_type(tl_op_result(op, i));
}

/* Emits "'op' op <what> must be <want>, but got <type>". */
static TlResult bad(TlOp *op, const char *what, const char *want,
                    const TlType *t) {
  TlStr s = {0};
  tl_type_print(t, &s);
  tl_op_emit_error(op, "%s must be %s, but got %s", what, want,
                   tl_str_cstr(&s));
  tl_str_free(&s);
  return TL_FAILURE;
}

static TlResult counts(TlOp *op, unsigned nops, unsigned nres) {
  if (tl_op_num_operands(op) == nops && tl_op_num_results(op) == nres)
    return TL_SUCCESS;
  tl_op_emit_error(op,
                   "expects %u operand%s and %u result%s, but has %u "
                   "and %u",
                   nops, nops == 1 ? "" : "s", nres, nres == 1 ? "" : "s",
                   tl_op_num_operands(op), tl_op_num_results(op));
  return TL_FAILURE;
}

static bool is_i32(const TlOp *op, const TlType *t) {
  TlContext *c = tl_op_context(op);
  return t == tl_type_int(c, 32, true) || t == tl_type_int(c, 32, false);
}

static bool is_vec_of(const TlType *t, unsigned n, const TlType *elem) {
  return tl_simt_is_vec(t) && tl_simt_vec_size(t) == n &&
         tl_simt_vec_elem(t) == elem;
}

static bool is_half_pair(const TlOp *op, const TlType *t) {
  TlContext *c = tl_op_context(op);
  return is_vec_of(t, 2, tl_type_f16(c)) || is_vec_of(t, 2, tl_type_bf16(c));
}

/* Whether s is one of the NULL-terminated names. */
static bool one_of(const char *s, const char *const *names) {
  for (; *names; names++)
    if (!strcmp(s, *names))
      return true;
  return false;
}

/* A list of distinct words for a message, built from the form tables:
 * "4, 8 or 16". Each word is copied (up to 31 characters). */
typedef struct Words {
  char w[16][32];
  unsigned n;
} Words;

static void words_add(Words *ws, const char *w) {
  for (unsigned i = 0; i < ws->n; i++)
    if (!strcmp(ws->w[i], w))
      return;
  if (ws->n < 16)
    snprintf(ws->w[ws->n++], sizeof ws->w[0], "%s", w);
}

/* Appends the words joined by ", " and `last` before the last one. */
static void words_text(TlStr *out, const Words *ws, const char *last) {
  for (unsigned i = 0; i < ws->n; i++)
    tl_str_printf(out, "%s%s",
                  i == 0          ? ""
                  : i + 1 < ws->n ? ", "
                                  : last,
                  ws->w[i]);
}

/* The attributes an op takes: name, kind and whether it is required. The
 * verifier of each op first checks its attributes against its table
 * (unknown names, wrong kinds, missing required ones). */
typedef struct AttrSpec {
  const char *name;
  TlAttrKind kind; /* TL_ATTR_INT, TL_ATTR_STRING or TL_ATTR_UNIT */
  bool required;
} AttrSpec;

static TlResult attrs_ok(TlOp *op, const AttrSpec *specs, unsigned n) {
  for (unsigned i = 0; i < tl_op_num_attrs(op); i++) {
    TlNamedAttr a = tl_op_attr_at(op, i);
    const AttrSpec *s = NULL;
    for (unsigned j = 0; j < n && !s; j++)
      if (!strcmp(specs[j].name, a.name))
        s = &specs[j];
    if (!s) {
      tl_op_emit_error(op, "unknown attribute '%s'", a.name);
      return TL_FAILURE;
    }
    if (tl_attr_kind(a.attr) != s->kind) {
      tl_op_emit_error(op, "attribute '%s' must be %s", a.name,
                       s->kind == TL_ATTR_INT      ? "an integer"
                       : s->kind == TL_ATTR_STRING ? "a string"
                                                   : "a unit attribute");
      return TL_FAILURE;
    }
  }
  for (unsigned j = 0; j < n; j++)
    if (specs[j].required && !tl_op_attr(op, specs[j].name)) {
      tl_op_emit_error(op, "requires attribute '%s'", specs[j].name);
      return TL_FAILURE;
    }
  return TL_SUCCESS;
}

#define ATTRS_OK(op, specs) attrs_ok(op, specs, sizeof specs / sizeof *specs)

/* Attribute values, after attrs_ok has checked the kinds. */
static int64_t int_attr(const TlOp *op, const char *name, int64_t dflt) {
  TlAttr *a = tl_op_attr(op, name);
  return a ? tl_attr_int_value(a) : dflt;
}
static const char *str_attr(const TlOp *op, const char *name) {
  TlAttr *a = tl_op_attr(op, name);
  return a ? tl_attr_string_value(a, NULL) : NULL;
}

/* The value of an operand produced by a constant op, read with its type's
 * signedness; false when the operand is not a constant integer. */
static bool const_int(const TlOp *op, unsigned i, int64_t *out) {
  TlAttr *a = tl_value_constant(tl_op_operand(op, i));
  if (!a || tl_attr_kind(a) != TL_ATTR_INT)
    return false;
  TlType *t = tl_attr_get_type(a);
  /* A u64 above INT64_MAX is out of every range checked here: clamp it. */
  if (!tl_type_int_signed(t) && tl_attr_uint_value(a) > INT64_MAX)
    *out = INT64_MAX;
  else
    *out = tl_attr_int_value(a);
  return true;
}

/* The uniform custom form: `operands {attrs} : operand types -> results`
 * written as `%a, %b {x = 1} : T, U -> R` (`-> R` left out when there are
 * no results; no operands: `: -> R`; neither: nothing after the attrs). */
static TlResult std_parse(TlParser *p, TlOpState *st) {
  TlOperandRefVec refs = {0};
  TlTypeVec ins = {0}, outs = {0};
  TlResult r = TL_FAILURE;
  if (TL_FAILED(tl_parse_operand_list(p, &refs)) ||
      TL_FAILED(tl_parse_optional_attr_dict(p, st)))
    goto out;
  if (!refs.len && !tl_parser_peek_punct(p, ":")) {
    r = TL_SUCCESS;
    goto out;
  }
  if (TL_FAILED(tl_parse_punct(p, ":")))
    goto out;
  TlLoc types_loc = tl_parser_loc(p);
  if (!tl_parser_peek_punct(p, "->")) {
    do {
      TlType *t;
      if (TL_FAILED(tl_parse_type(p, &t)))
        goto out;
      tl_vec_push(&ins, t);
    } while (tl_parse_optional_punct(p, ","));
  }
  if (tl_parse_optional_punct(p, "->")) {
    do {
      TlType *t;
      if (TL_FAILED(tl_parse_type(p, &t)))
        goto out;
      tl_vec_push(&outs, t);
    } while (tl_parse_optional_punct(p, ","));
  }
  if (ins.len != refs.len) {
    tl_parser_error(p, types_loc, "%zu operands but %zu operand types",
                    refs.len, ins.len);
    goto out;
  }
  if (refs.len &&
      TL_FAILED(tl_parser_resolve_operands(p, st, (unsigned)refs.len, refs.data,
                                           (unsigned)ins.len, ins.data)))
    goto out;
  for (size_t i = 0; i < outs.len; i++)
    tl_op_state_add_result(st, outs.data[i]);
  r = TL_SUCCESS;
out:
  tl_vec_free(&refs);
  tl_vec_free(&ins);
  tl_vec_free(&outs);
  return r;
}

static void std_print(TlPrinter *p, TlOp *op) {
  unsigned n = tl_op_num_operands(op), m = tl_op_num_results(op);
  for (unsigned i = 0; i < n; i++) {
    tl_print_str(p, i ? ", " : " ");
    tl_print_operand(p, tl_op_operand(op, i));
  }
  tl_print_attr_dict(p, op, NULL);
  if (!n && !m)
    return;
  tl_print_str(p, " :");
  for (unsigned i = 0; i < n; i++) {
    tl_print_str(p, i ? ", " : " ");
    tl_print_type(p, ot(op, i));
  }
  if (m) {
    tl_print_str(p, " ->");
    for (unsigned i = 0; i < m; i++) {
      tl_print_str(p, i ? ", " : " ");
      tl_print_type(p, rt(op, i));
    }
  }
}

/*===--- Ids -------------------------------------------------------------===*/

/* %tid, %ctaid, %ntid and %nctaid take a dimension; lane_id is %laneid and
 * warp_id is the linear thread index divided by 32 (not %warpid, which
 * names the warp's current hardware slot and may change under preemption). */
static TlResult id_verify(TlOp *op) {
  static const AttrSpec dim[] = {{"dim", TL_ATTR_STRING, true}};
  static const char *const xyz[] = {"x", "y", "z", NULL};
  bool has_dim =
      tl_op_id(op) != TL_OP_SIMT_LANE_ID && tl_op_id(op) != TL_OP_SIMT_WARP_ID;
  if (TL_FAILED(counts(op, 0, 1)) ||
      TL_FAILED(attrs_ok(op, dim, has_dim ? 1 : 0)))
    return TL_FAILURE;
  if (has_dim && !one_of(str_attr(op, "dim"), xyz)) {
    tl_op_emit_error(op, "'dim' must be \"x\", \"y\" or \"z\"");
    return TL_FAILURE;
  }
  if (rt(op, 0) != tl_type_int(tl_op_context(op), 32, true))
    return bad(op, "the result", "i32", rt(op, 0));
  return TL_SUCCESS;
}

/*===--- Pointers and memory ---------------------------------------------===*/

static TlResult ptr_add_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 2, 1)) || TL_FAILED(attrs_ok(op, NULL, 0)))
    return TL_FAILURE;
  if (!tl_simt_is_ptr(ot(op, 0)))
    return bad(op, "the pointer", "a !simt.ptr", ot(op, 0));
  if (rt(op, 0) != ot(op, 0))
    return bad(op, "the result", "the pointer's type", rt(op, 0));
  /* The offset is extended by its signedness (iN sign, uN zero). */
  TlType *o = ot(op, 1);
  if (!tl_type_is_int(o) || tl_type_is_bool(o) ||
      (tl_type_int_width(o) != 32 && tl_type_int_width(o) != 64))
    return bad(op, "the byte offset", "a 32 or 64-bit integer", o);
  return TL_SUCCESS;
}

static TlResult smem_base_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 0, 1)) || TL_FAILED(attrs_ok(op, NULL, 0)))
    return TL_FAILURE;
  if (!tl_simt_is_ptr(rt(op, 0)) ||
      tl_simt_ptr_space(rt(op, 0)) != TL_SIMT_SHARED)
    return bad(op, "the result", "!simt.ptr<shared>", rt(op, 0));
  return TL_SUCCESS;
}

/* A memory access copies the bits of one register value: a scalar or a
 * vector of 8, 16, 32 or 64-bit elements, 1, 2, 4, 8 or 16 bytes in all.
 * The PTX form follows from the size alone (ld/st .b8, .b16, .b32, .b64,
 * .v4.b32 or .v2.b64 for 16 bytes), so element types that PTX has no
 * vector form for (16 x u8, 8 x f16) are legal: the bits are the same.
 * Sub-byte elements and i1 have no byte address: load whole bytes and
 * bitcast. PTX requires the address to be aligned to the access size;
 * `align` may promise more (LLVM's load/store vectorizer uses it). */
static TlResult access_ok(TlOp *op, const TlType *ptr, const TlType *t,
                          bool is_load) {
  static const char *const load_hints[] = {"ca", "cg", "cs", "lu", "cv", NULL};
  static const char *const store_hints[] = {"wb", "cg", "cs", "wt", NULL};
  const char *what = is_load ? "the loaded value" : "the stored value";
  if (!tl_simt_is_ptr(ptr))
    return bad(op, "the address", "a !simt.ptr", ptr);
  const TlType *e = tl_simt_is_vec(t) ? tl_simt_vec_elem(t) : t;
  unsigned eb =
      tl_type_is_scalar(e) && !tl_type_is_bool(e) ? tl_type_bitwidth(e) : 0;
  if (eb != 8 && eb != 16 && eb != 32 && eb != 64)
    return bad(op, what,
               "a scalar or !simt.vec of 8, 16, 32 or 64-bit elements", t);
  unsigned bytes = tl_simt_value_bits(t) / 8;
  if (bytes > 16 || (bytes & (bytes - 1)))
    return bad(op, what, "1, 2, 4, 8 or 16 bytes", t);
  int64_t align = int_attr(op, "align", bytes);
  /* 2^32 is the largest alignment LLVM IR can express. */
  if (align < (int64_t)bytes || (align & (align - 1)) ||
      align > ((int64_t)1 << 32)) {
    tl_op_emit_error(op,
                     "alignment %lld must be a power of two from the "
                     "access size (%u bytes) to 2^32",
                     (long long)align, bytes);
    return TL_FAILURE;
  }
  const char *cache = str_attr(op, "cache");
  if (cache && !one_of(cache, is_load ? load_hints : store_hints)) {
    tl_op_emit_error(op,
                     is_load ? "unknown load cache hint \"%s\" (ca, cg, "
                               "cs, lu or cv)"
                             : "unknown store cache hint \"%s\" (wb, cg, "
                               "cs or wt)",
                     cache);
    return TL_FAILURE;
  }
  /* ptxas accepts hints on shared accesses but they do nothing there. */
  if (cache && tl_simt_ptr_space(ptr) != TL_SIMT_GLOBAL) {
    tl_op_emit_error(op, "cache hints apply to global memory only");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

static const AttrSpec access_attrs[] = {{"align", TL_ATTR_INT, false},
                                        {"cache", TL_ATTR_STRING, false}};

/* An ordered load (`ordering` relaxed or acquire, `scope`) is
 * ld.SEM.SCOPE.global: one scalar of 16, 32 or 64 bits, naturally
 * aligned, without a cache hint. */
static TlResult ordered_load_ok(TlOp *op) {
  if (!tl_op_attr(op, "ordering") && !tl_op_attr(op, "scope"))
    return TL_SUCCESS;
  if (!tl_op_attr(op, "ordering")) {
    tl_op_emit_error(op, "'scope' needs an 'ordering'");
    return TL_FAILURE;
  }
  if (tl_mem_scope_of(op, TL_SCOPE_GPU) == TL_SCOPE_UNKNOWN) {
    tl_op_emit_error(op, "'scope' must be \"cta\", \"gpu\" or \"sys\"");
    return TL_FAILURE;
  }
  TlMemOrder o = tl_mem_order_of(op, TL_ORDER_RELAXED);
  if (o != TL_ORDER_RELAXED && o != TL_ORDER_ACQUIRE) {
    tl_op_emit_error(op, "an ordered load is \"relaxed\" or \"acquire\"");
    return TL_FAILURE;
  }
  TlType *t = rt(op, 0);
  unsigned b = tl_type_is_scalar(t) ? tl_type_bitwidth(t) : 0;
  if (b != 16 && b != 32 && b != 64)
    return bad(op, "an ordered load's value", "a 16, 32 or 64-bit scalar", t);
  if (tl_simt_ptr_space(ot(op, 0)) != TL_SIMT_GLOBAL) {
    tl_op_emit_error(op, "ordered loads read global memory");
    return TL_FAILURE;
  }
  if (tl_op_attr(op, "cache")) {
    tl_op_emit_error(op, "an ordered load takes no cache hint");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

static TlResult load_verify(TlOp *op) {
  static const AttrSpec attrs[] = {{"align", TL_ATTR_INT, false},
                                   {"cache", TL_ATTR_STRING, false},
                                   {"ordering", TL_ATTR_STRING, false},
                                   {"scope", TL_ATTR_STRING, false}};
  if (TL_FAILED(counts(op, 1, 1)) || TL_FAILED(ATTRS_OK(op, attrs)) ||
      TL_FAILED(access_ok(op, ot(op, 0), rt(op, 0), true)))
    return TL_FAILURE;
  return ordered_load_ok(op);
}

static TlResult store_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 2, 0)) || TL_FAILED(ATTRS_OK(op, access_attrs)))
    return TL_FAILURE;
  return access_ok(op, ot(op, 1), ot(op, 0), false);
}

/* cp.async.{ca,cg}.shared.global [dst], [src], size{, src_size}: copies
 * `size` bytes, of which the first src_size are read and the rest are
 * zero (the ragged-edge fill). ptxas rejects a constant src_size above
 * size; a register one above size is undefined. */
static TlResult cp_async_verify(TlOp *op) {
  static const AttrSpec attrs[] = {{"size", TL_ATTR_INT, true},
                                   {"cache", TL_ATTR_STRING, true},
                                   {"l2_hint", TL_ATTR_STRING, false}};
  unsigned n = tl_op_num_operands(op);
  if (tl_op_num_results(op) || (n != 2 && n != 3)) {
    tl_op_emit_error(op, "takes a shared destination, a global source and "
                         "optionally the source size, and has no results");
    return TL_FAILURE;
  }
  if (TL_FAILED(ATTRS_OK(op, attrs)))
    return TL_FAILURE;
  if (!tl_simt_is_ptr(ot(op, 0)) ||
      tl_simt_ptr_space(ot(op, 0)) != TL_SIMT_SHARED)
    return bad(op, "the destination", "!simt.ptr<shared>", ot(op, 0));
  if (!tl_simt_is_ptr(ot(op, 1)) ||
      tl_simt_ptr_space(ot(op, 1)) != TL_SIMT_GLOBAL)
    return bad(op, "the source", "!simt.ptr<global>", ot(op, 1));
  int64_t size = int_attr(op, "size", 0);
  const char *cache = str_attr(op, "cache");
  /* The forms are the rows of the cp.async table (forms.def): sizes and
   * cache levels are checked alone first, for the clearer message. */
  bool size_ok = false, cache_ok = false;
  for (unsigned i = 0; i < tl_cp_async_form_count(); i++) {
    size_ok |= tl_cp_async_form_at(i)->bytes == size;
    cache_ok |= !strcmp(tl_cp_async_form_at(i)->cache, cache);
  }
  if (!size_ok || !cache_ok || !tl_cp_async_form_lookup(size, cache)) {
    /* The list to offer: every size, every cache level, or the sizes of
     * this cache level. */
    Words ws = {0};
    for (unsigned i = 0; i < tl_cp_async_form_count(); i++) {
      const TlCpAsyncForm *f = tl_cp_async_form_at(i);
      char w[32];
      if (!cache_ok && size_ok)
        snprintf(w, sizeof w, "\"%s\"", f->cache);
      else if (!size_ok || !strcmp(f->cache, cache))
        snprintf(w, sizeof w, "%u", f->bytes);
      else
        continue;
      words_add(&ws, w);
    }
    TlStr text = {0};
    words_text(&text, &ws, " or ");
    if (!size_ok)
      tl_op_emit_error(op, "copies %s bytes, not %lld", tl_str_cstr(&text),
                       (long long)size);
    else if (!cache_ok)
      tl_op_emit_error(op, "'cache' must be %s", tl_str_cstr(&text));
    else /* .cg bypasses L1 and moves whole 16-byte sectors only */
      tl_op_emit_error(op, "cp.async.%s copies %s bytes only", cache,
                       tl_str_cstr(&text));
    tl_str_free(&text);
    return TL_FAILURE;
  }
  int64_t src;
  if (n == 3 && !is_i32(op, ot(op, 2)))
    return bad(op, "the source size", "i32 or u32", ot(op, 2));
  if (n == 3 && const_int(op, 2, &src) && (src < 0 || src > size)) {
    tl_op_emit_error(op, "source size %lld is outside 0..%lld", (long long)src,
                     (long long)size);
    return TL_FAILURE;
  }
  /* The L2 eviction priority of the copy's cache policy
   * (createpolicy.fractional.L2::<hint>, cp.async.L2::cache_hint). */
  const char *hint = str_attr(op, "l2_hint");
  if (hint && strcmp(hint, "evict_first") && strcmp(hint, "evict_last") &&
      strcmp(hint, "evict_normal")) {
    tl_op_emit_error(op, "'l2_hint' must be \"evict_first\", \"evict_last\" "
                         "or \"evict_normal\"");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/* cp.async.commit_group and exit: no operands, results or attributes. */
static TlResult bare_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 0, 0)))
    return TL_FAILURE;
  return attrs_ok(op, NULL, 0);
}

/* cp.async.wait_group N waits until at most N of the thread's committed
 * groups are pending. The PTX ISA sets no upper bound and ptxas takes any
 * 32-bit N; a larger N than the groups in flight only waits less. The
 * LLVM intrinsic takes N as an i32 immediate. */
static TlResult wait_verify(TlOp *op) {
  static const AttrSpec attrs[] = {{"pending", TL_ATTR_INT, true}};
  if (TL_FAILED(counts(op, 0, 0)) || TL_FAILED(ATTRS_OK(op, attrs)))
    return TL_FAILURE;
  int64_t n = int_attr(op, "pending", 0);
  if (n < 0 || n > INT32_MAX) {
    tl_op_emit_error(op,
                     "'pending' must be between 0 and 2147483647, not "
                     "%lld",
                     (long long)n);
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/*===--- Atomics and fences ----------------------------------------------===*/

/* `scope` and `ordering` of the atomics and fences: the names of the
 * tables in predicates.def; a fence orders something (not relaxed). */
static TlResult memory_order_ok(TlOp *op, bool fence) {
  if (tl_mem_scope_of(op, TL_SCOPE_GPU) == TL_SCOPE_UNKNOWN) {
    tl_op_emit_error(op, "'scope' must be \"cta\", \"gpu\" or \"sys\"");
    return TL_FAILURE;
  }
  TlMemOrder o =
      tl_mem_order_of(op, fence ? TL_ORDER_ACQ_REL : TL_ORDER_RELAXED);
  if (o == TL_ORDER_UNKNOWN) {
    tl_op_emit_error(op, "'ordering' must be \"relaxed\", \"acquire\", "
                         "\"release\" or \"acq_rel\"");
    return TL_FAILURE;
  }
  if (fence && o == TL_ORDER_RELAXED) {
    tl_op_emit_error(op, "a fence orders \"acquire\", \"release\" or "
                         "\"acq_rel\", not \"relaxed\"");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

static const AttrSpec atom_attrs[] = {{"kind", TL_ATTR_STRING, true},
                                      {"scope", TL_ATTR_STRING, false},
                                      {"ordering", TL_ATTR_STRING, false}};
static const AttrSpec order_attrs[] = {{"scope", TL_ATTR_STRING, false},
                                       {"ordering", TL_ATTR_STRING, false}};

static TlResult global_address_ok(TlOp *op, const TlType *p) {
  if (!tl_simt_is_ptr(p) || tl_simt_ptr_space(p) != TL_SIMT_GLOBAL)
    return bad(op, "the address", "!simt.ptr<global>", p);
  return TL_SUCCESS;
}

/* atom{.sem}{.scope}.global.OP.T d, [a], b: the value types PTX's atom
 * has for each operation on every TL target (sm_80 on). */
static TlResult atom_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 2, 1)) || TL_FAILED(ATTRS_OK(op, atom_attrs)))
    return TL_FAILURE;
  TlAtomicKind k = tl_atomic_kind_of(op);
  if (k == TL_ATOMIC_UNKNOWN) {
    tl_op_emit_error(op, "'kind' must be \"add\", \"max\", \"min\" or "
                         "\"exch\"");
    return TL_FAILURE;
  }
  if (TL_FAILED(memory_order_ok(op, false)) ||
      TL_FAILED(global_address_ok(op, ot(op, 0))))
    return TL_FAILURE;
  TlContext *c = tl_op_context(op);
  TlType *t = ot(op, 1);
  bool ok = false;
  const char *want = "";
  switch (k) {
  case TL_ATOMIC_ADD:
    ok = is_i32(op, t) || t == tl_type_f32(c) || t == tl_type_f16(c) ||
         is_vec_of(t, 2, tl_type_f16(c));
    want = "i32, u32, f32, f16 or !simt.vec<2xf16>";
    break;
  case TL_ATOMIC_MAX:
  case TL_ATOMIC_MIN:
    ok = is_i32(op, t);
    want = "i32 or u32";
    break;
  default:
    ok = is_i32(op, t) || t == tl_type_f32(c);
    want = "i32, u32 or f32";
    break;
  }
  if (!ok) {
    char what[48];
    snprintf(what, sizeof what, "the value of atom.%s", tl_atomic_kind_ptx(k));
    return bad(op, what, want, t);
  }
  if (rt(op, 0) != t)
    return bad(op, "the result", "the value's type", rt(op, 0));
  return TL_SUCCESS;
}

/* atom{.sem}{.scope}.global.cas.b32 d, [a], cmp, new. */
static TlResult atom_cas_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 3, 1)) || TL_FAILED(ATTRS_OK(op, order_attrs)) ||
      TL_FAILED(memory_order_ok(op, false)) ||
      TL_FAILED(global_address_ok(op, ot(op, 0))))
    return TL_FAILURE;
  if (!is_i32(op, ot(op, 1)))
    return bad(op, "the compared value", "i32 or u32", ot(op, 1));
  if (ot(op, 2) != ot(op, 1))
    return bad(op, "the new value", "the compared value's type", ot(op, 2));
  if (rt(op, 0) != ot(op, 1))
    return bad(op, "the result", "the compared value's type", rt(op, 0));
  return TL_SUCCESS;
}

/* fence.{acq_rel,sc}.scope (LLVM gives acquire and release fences the
 * acq_rel form). */
static TlResult fence_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 0, 0)) || TL_FAILED(ATTRS_OK(op, order_attrs)))
    return TL_FAILURE;
  return memory_order_ok(op, true);
}

/* bar.sync id{, threads}: 16 named barriers per block; a thread count,
 * when given, is a whole number of warps (ptxas rejects others) and at
 * most a block's 1024 threads. Without it every thread of the block
 * takes part. */
static TlResult barrier_verify(TlOp *op) {
  static const AttrSpec attrs[] = {{"id", TL_ATTR_INT, false},
                                   {"threads", TL_ATTR_INT, false}};
  if (TL_FAILED(counts(op, 0, 0)) || TL_FAILED(ATTRS_OK(op, attrs)))
    return TL_FAILURE;
  int64_t id = int_attr(op, "id", 0);
  if (id < 0 || id > 15) {
    tl_op_emit_error(op, "barrier id %lld is outside 0..15", (long long)id);
    return TL_FAILURE;
  }
  int64_t t = int_attr(op, "threads", 32);
  if (t < 32 || t > 1024 || t % 32) {
    tl_op_emit_error(op,
                     "thread count %lld must be a multiple of 32 from "
                     "32 to 1024",
                     (long long)t);
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/* ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: each lane gives
 * one row address (lanes 0-7 for matrix 0, 8-15 for matrix 1, ...) and
 * receives one i32 (two b16) per matrix. .trans exists for b16 only, which
 * is the only element size of this form. */
static TlResult ldmatrix_verify(TlOp *op) {
  static const AttrSpec attrs[] = {{"num", TL_ATTR_INT, true},
                                   {"trans", TL_ATTR_UNIT, false}};
  if (TL_FAILED(counts(op, 1, 1)) || TL_FAILED(ATTRS_OK(op, attrs)))
    return TL_FAILURE;
  if (!tl_simt_is_ptr(ot(op, 0)) ||
      tl_simt_ptr_space(ot(op, 0)) != TL_SIMT_SHARED)
    return bad(op, "the address", "!simt.ptr<shared>", ot(op, 0));
  /* The forms are the rows of the ldmatrix table (forms.def). */
  int64_t num = int_attr(op, "num", 0);
  if (!tl_ldmatrix_form_lookup(num, tl_op_attr(op, "trans") != NULL)) {
    Words nums = {0};
    for (unsigned i = 0; i < tl_ldmatrix_form_count(); i++) {
      char w[32];
      snprintf(w, sizeof w, "%u", tl_ldmatrix_form_at(i)->num);
      words_add(&nums, w);
    }
    TlStr text = {0};
    words_text(&text, &nums, " or ");
    tl_op_emit_error(op, "loads %s matrices, not %lld", tl_str_cstr(&text),
                     (long long)num);
    tl_str_free(&text);
    return TL_FAILURE;
  }
  TlType *i32 = tl_type_int(tl_op_context(op), 32, true);
  if (!is_vec_of(rt(op, 0), (unsigned)num, i32)) {
    char want[32];
    snprintf(want, sizeof want, "!simt.vec<%lldxi32>", (long long)num);
    return bad(op, "the result", want, rt(op, 0));
  }
  return TL_SUCCESS;
}

/*===--- mma -------------------------------------------------------------===*/

/* mma.sync.aligned.<shape>.row.col: the forms are the rows of the mma form
 * table (include/tl/forms.def). Every fragment is its PTX registers, one
 * vector element per 32-bit register: A and B are i32 (packed elements),
 * C and D the form's register type (f32 for f32 accumulation, i32 for s32
 * or a packed f16x2 pair with element 0 in the low half). Whether the
 * target has the form is the back end's check. */

/* Appends the A types of the forms, "f16, bf16, ... or b1"; with `mixed`,
 * the pairs of different A and B types instead, "s8 with u8 and ...". */
static void mma_types_text(TlStr *out, bool mixed) {
  Words ws = {0};
  for (unsigned i = 0; i < tl_mma_form_count(); i++) {
    const TlMmaForm *f = tl_mma_form_at(i);
    char w[32];
    bool differ = strcmp(f->a_type, f->b_type) != 0;
    /* One word per unordered pair: "s8 with u8" stands for u8 x s8 too. */
    if (mixed && differ && strcmp(f->a_type, f->b_type) < 0)
      snprintf(w, sizeof w, "%s with %s", f->a_type, f->b_type);
    else if (mixed && differ)
      snprintf(w, sizeof w, "%s with %s", f->b_type, f->a_type);
    else if (!mixed)
      snprintf(w, sizeof w, "%s", f->a_type);
    else
      continue;
    words_add(&ws, w);
  }
  words_text(out, &ws, mixed ? " and " : " or ");
}

/* Whether some form has these input types (any shape). */
static bool mma_inputs_exist(const char *a, const char *b, bool a_only) {
  for (unsigned i = 0; i < tl_mma_form_count(); i++) {
    const TlMmaForm *f = tl_mma_form_at(i);
    if (!strcmp(f->a_type, a) && (a_only || !strcmp(f->b_type, b)))
      return true;
  }
  return false;
}

static TlResult mma_verify(TlOp *op) {
  static const AttrSpec attrs[] = {
      {"shape", TL_ATTR_STRING, true},  {"a_type", TL_ATTR_STRING, true},
      {"b_type", TL_ATTR_STRING, true}, {"acc_type", TL_ATTR_STRING, true},
      {"b1_op", TL_ATTR_STRING, false}, {"satfinite", TL_ATTR_UNIT, false}};
  if (TL_FAILED(counts(op, 3, 1)) || TL_FAILED(ATTRS_OK(op, attrs)))
    return TL_FAILURE;
  const char *shape = str_attr(op, "shape"), *at = str_attr(op, "a_type"),
             *bt = str_attr(op, "b_type"), *acc = str_attr(op, "acc_type");
  TlStr text = {0};
  TlResult r = TL_FAILURE;
  if (!mma_inputs_exist(at, NULL, true) || !mma_inputs_exist(bt, NULL, true)) {
    mma_types_text(&text, false);
    tl_op_emit_error(op, "unknown mma input type \"%s\" (%s)",
                     mma_inputs_exist(at, NULL, true) ? bt : at,
                     tl_str_cstr(&text));
    goto out;
  }
  if (!mma_inputs_exist(at, bt, false)) {
    mma_types_text(&text, true);
    tl_op_emit_error(op,
                     "mma inputs %s and %s do not match (only %s may be mixed)",
                     at, bt, tl_str_cstr(&text));
    goto out;
  }
  const TlMmaForm *f = tl_mma_form_lookup(shape, at, bt, acc);
  if (!f) {
    tl_mma_forms_text(&text);
    tl_op_emit_error(op,
                     "mma.%s with %s inputs and %s accumulation is not "
                     "supported (supported: %s)",
                     shape, at, acc, tl_str_cstr(&text));
    goto out;
  }
  const char *bop = str_attr(op, "b1_op");
  if (f->b1_op[0] && (!bop || strcmp(bop, f->b1_op))) {
    tl_op_emit_error(op,
                     "%s mma requires b1_op = \"%s\" (xor.popc is "
                     "emulated on sm_90)",
                     at, f->b1_op);
    goto out;
  }
  if (!f->b1_op[0] && bop) {
    tl_op_emit_error(op, "b1_op applies to b1 inputs only");
    goto out;
  }
  if (tl_op_attr(op, "satfinite") && !f->satfinite) {
    Words ws = {0};
    for (unsigned i = 0; i < tl_mma_form_count(); i++)
      if (tl_mma_form_at(i)->satfinite)
        words_add(&ws, tl_mma_form_at(i)->a_type);
    words_text(&text, &ws, " and ");
    tl_op_emit_error(op, "satfinite applies to %s inputs only",
                     tl_str_cstr(&text));
    goto out;
  }
  TlContext *ctx = tl_op_context(op);
  TlType *i32 = tl_type_int(ctx, 32, true);
  TlType *cd = !strcmp(f->cd_reg, "f32") ? tl_type_f32(ctx) : i32;
  char want[40];
  snprintf(want, sizeof want, "!simt.vec<%uxi32>", f->a_regs);
  if (!is_vec_of(ot(op, 0), f->a_regs, i32)) {
    r = bad(op, "operand A", want, ot(op, 0));
    goto out;
  }
  snprintf(want, sizeof want, "!simt.vec<%uxi32>", f->b_regs);
  if (!is_vec_of(ot(op, 1), f->b_regs, i32)) {
    r = bad(op, "operand B", want, ot(op, 1));
    goto out;
  }
  snprintf(want, sizeof want, "!simt.vec<%ux%s>", f->cd_regs, f->cd_reg);
  if (!is_vec_of(ot(op, 2), f->cd_regs, cd)) {
    r = bad(op, "the accumulator", want, ot(op, 2));
    goto out;
  }
  r = rt(op, 0) == ot(op, 2) ? TL_SUCCESS
                             : bad(op, "the result", want, rt(op, 0));
out:
  tl_str_free(&text);
  return r;
}

/*===--- Warpgroup mma (wgmma) -------------------------------------------===*/

/* wgmma.mma_async.sync.aligned.m64nNkK: the forms are the rows of the
 * wgmma form table (include/tl/forms.def). Operands: A (a shared-memory
 * matrix descriptor, i64, or a warp's A fragment in registers), B (a
 * descriptor), the N/8 accumulator tiles (each one m16n8 C fragment of
 * the matching mma form) and optionally an i1 scale-d predicate; results:
 * the N/8 tiles of D. */

/* The (a, b, acc) triples of the table, "f16 x f16 -> f32, ...". */
static void wgmma_forms_text(TlStr *out) {
  for (unsigned i = 0; i < tl_wgmma_form_count(); i++) {
    const TlWgmmaForm *f = tl_wgmma_form_at(i);
    tl_str_printf(out, "%s%s x %s -> %s", i ? ", " : "", f->a_type, f->b_type,
                  f->acc_type);
  }
}

/* N of a shape "m64nNkK" with the form's K, or -1 when it is not one. */
static int64_t wgmma_shape_n(const char *shape, unsigned k) {
  unsigned n = 0, kk = 0;
  char back[40];
  if (!shape || sscanf(shape, "m64n%uk%u", &n, &kk) != 2 || kk != k)
    return -1;
  snprintf(back, sizeof back, "m64n%uk%u", n, kk);
  return strcmp(back, shape) ? -1 : (int64_t)n;
}

static bool is_bool_type(const TlType *t) { return tl_type_is_bool(t); }

static TlResult wgmma_verify(TlOp *op) {
  static const AttrSpec attrs[] = {
      {"shape", TL_ATTR_STRING, true},    {"a_type", TL_ATTR_STRING, true},
      {"b_type", TL_ATTR_STRING, true},   {"acc_type", TL_ATTR_STRING, true},
      {"a_major", TL_ATTR_STRING, false}, {"b_major", TL_ATTR_STRING, false},
      {"scale_d", TL_ATTR_INT, false}};
  static const char *const majors[] = {"k", "mn", NULL};
  if (TL_FAILED(ATTRS_OK(op, attrs)))
    return TL_FAILURE;
  const char *shape = str_attr(op, "shape"), *at = str_attr(op, "a_type"),
             *bt = str_attr(op, "b_type"), *acc = str_attr(op, "acc_type");
  const TlWgmmaForm *f = tl_wgmma_form_lookup(at, bt, acc);
  if (!f) {
    TlStr text = {0};
    wgmma_forms_text(&text);
    tl_op_emit_error(op, "wgmma %s x %s -> %s is not supported (supported: %s)",
                     at, bt, acc, tl_str_cstr(&text));
    tl_str_free(&text);
    return TL_FAILURE;
  }
  int64_t n = wgmma_shape_n(shape, f->k);
  if (n < 0 || !tl_wgmma_form_has_n(f, n)) {
    if (f->n8_max >= 256)
      tl_op_emit_error(op,
                       "wgmma shape \"%s\" is not m64nNk%u with N a multiple "
                       "of 8 from 8 to 256",
                       shape, f->k);
    else
      tl_op_emit_error(op,
                       "wgmma shape \"%s\" is not m64nNk%u with N a multiple "
                       "of 8 up to %u or of 16 up to 256",
                       shape, f->k, f->n8_max);
    return TL_FAILURE;
  }
  const char *am = str_attr(op, "a_major"), *bm = str_attr(op, "b_major");
  if ((am && !one_of(am, majors)) || (bm && !one_of(bm, majors))) {
    tl_op_emit_error(op, "'%s' must be \"k\" or \"mn\"",
                     am && !one_of(am, majors) ? "a_major" : "b_major");
    return TL_FAILURE;
  }
  if (!f->trans && ((am && !strcmp(am, "mn")) || (bm && !strcmp(bm, "mn")))) {
    tl_op_emit_error(op,
                     "%s x %s wgmma reads K-major operands only (a_major and "
                     "b_major \"k\")",
                     at, bt);
    return TL_FAILURE;
  }
  unsigned tiles = (unsigned)n / 8, nops = tl_op_num_operands(op);
  bool pred = nops == tiles + 3 && is_bool_type(ot(op, nops - 1));
  if (pred && tl_op_attr(op, "scale_d")) {
    tl_op_emit_error(op, "scale_d is an attribute or an i1 operand, not both");
    return TL_FAILURE;
  }
  if (nops != tiles + 2 + pred) {
    tl_op_emit_error(op,
                     "wgmma.%s takes A, B and %u accumulator tiles (and "
                     "optionally an i1 scale-d), but has %u operands",
                     shape, tiles, nops);
    return TL_FAILURE;
  }
  if (tl_op_num_results(op) != tiles) {
    tl_op_emit_error(op,
                     "wgmma.%s has %u results (one m16n8 tile each), but has "
                     "%u",
                     shape, tiles, tl_op_num_results(op));
    return TL_FAILURE;
  }
  int64_t sd = int_attr(op, "scale_d", 1);
  if (sd != 0 && sd != 1) {
    tl_op_emit_error(op, "'scale_d' must be 0 or 1, not %lld", (long long)sd);
    return TL_FAILURE;
  }
  TlContext *ctx = tl_op_context(op);
  TlType *i32 = tl_type_int(ctx, 32, true), *i64 = tl_type_int(ctx, 64, true);
  TlType *cd = !strcmp(f->acc_type, "f32") ? tl_type_f32(ctx) : i32;
  char want[64];
  bool a_regs = ot(op, 0) != i64;
  if (a_regs && !is_vec_of(ot(op, 0), f->a_regs, i32)) {
    snprintf(want, sizeof want, "a descriptor (i64) or !simt.vec<%uxi32>",
             f->a_regs);
    return bad(op, "operand A", want, ot(op, 0));
  }
  if (a_regs && am && !strcmp(am, "mn")) {
    tl_op_emit_error(op, "A in registers is a K-major fragment: a_major = "
                         "\"mn\" needs a descriptor A");
    return TL_FAILURE;
  }
  if (ot(op, 1) != i64)
    return bad(op, "operand B", "a descriptor (i64)", ot(op, 1));
  snprintf(want, sizeof want, "!simt.vec<4x%s>",
           !strcmp(f->acc_type, "f32") ? "f32" : "i32");
  for (unsigned i = 0; i < tiles; i++) {
    if (!is_vec_of(ot(op, 2 + i), 4, cd))
      return bad(op, "each accumulator tile", want, ot(op, 2 + i));
    if (rt(op, i) != ot(op, 2 + i))
      return bad(op, "each result", want, rt(op, i));
  }
  return TL_SUCCESS;
}

/* wgmma.wait_group N: as cp.async.wait_group, N is an immediate (the LLVM
 * intrinsic's i64 immarg); TL keeps it to 0..2^31 - 1. */
static TlResult wgmma_wait_verify(TlOp *op) {
  static const AttrSpec attrs[] = {{"n", TL_ATTR_INT, true}};
  if (TL_FAILED(counts(op, 0, 0)) || TL_FAILED(ATTRS_OK(op, attrs)))
    return TL_FAILURE;
  int64_t n = int_attr(op, "n", 0);
  if (n < 0 || n > INT32_MAX) {
    tl_op_emit_error(op, "'n' must be between 0 and 2147483647, not %lld",
                     (long long)n);
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/* setmaxnreg.{inc,dec}.sync.aligned.u32 N: ptxas takes N a multiple of 8
 * from 24 to 256 (and says so for either bound broken). */
static TlResult setmaxnreg_verify(TlOp *op) {
  static const AttrSpec attrs[] = {{"count", TL_ATTR_INT, true},
                                   {"action", TL_ATTR_STRING, true}};
  static const char *const actions[] = {"inc", "dec", NULL};
  if (TL_FAILED(counts(op, 0, 0)) || TL_FAILED(ATTRS_OK(op, attrs)))
    return TL_FAILURE;
  int64_t n = int_attr(op, "count", 0);
  if (n < TL_SETMAXNREG_MIN || n > TL_SETMAXNREG_MAX ||
      n % TL_SETMAXNREG_STEP) {
    tl_op_emit_error(op, "'count' must be a multiple of %d from %d to %d, "
                         "not %lld",
                     TL_SETMAXNREG_STEP, TL_SETMAXNREG_MIN, TL_SETMAXNREG_MAX,
                     (long long)n);
    return TL_FAILURE;
  }
  if (!one_of(str_attr(op, "action"), actions)) {
    tl_op_emit_error(op, "'action' must be \"inc\" or \"dec\"");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/* The swizzle modes of a matrix descriptor, by their code in bits 62-63. */
static const char *const swizzles[] = {"none", "128B", "64B", "32B", NULL};

int tl_simt_wgmma_swizzle_code(const char *name) {
  for (int i = 0; name && swizzles[i]; i++)
    if (!strcmp(swizzles[i], name))
      return i;
  return -1;
}

/* The descriptor's byte offsets are 14-bit fields of 16-byte units. */
static TlResult desc_offset_ok(TlOp *op, const char *name, int64_t v) {
  if (v >= 0 && v <= (int64_t)0x3fff * 16 && v % 16 == 0)
    return TL_SUCCESS;
  tl_op_emit_error(op,
                   "'%s' must be a multiple of 16 from 0 to 262128, not %lld",
                   name, (long long)v);
  return TL_FAILURE;
}

static TlResult wgmma_desc_verify(TlOp *op) {
  static const AttrSpec attrs[] = {{"swizzle", TL_ATTR_STRING, true},
                                   {"lbo", TL_ATTR_INT, false},
                                   {"sbo", TL_ATTR_INT, true}};
  if (TL_FAILED(counts(op, 1, 1)) || TL_FAILED(ATTRS_OK(op, attrs)))
    return TL_FAILURE;
  if (tl_simt_wgmma_swizzle_code(str_attr(op, "swizzle")) < 0) {
    tl_op_emit_error(op, "'swizzle' must be \"none\", \"32B\", \"64B\" or "
                         "\"128B\"");
    return TL_FAILURE;
  }
  if (TL_FAILED(desc_offset_ok(op, "lbo", int_attr(op, "lbo", 16))) ||
      TL_FAILED(desc_offset_ok(op, "sbo", int_attr(op, "sbo", 0))))
    return TL_FAILURE;
  if (!tl_simt_is_ptr(ot(op, 0)) ||
      tl_simt_ptr_space(ot(op, 0)) != TL_SIMT_SHARED)
    return bad(op, "the address", "!simt.ptr<shared>", ot(op, 0));
  if (rt(op, 0) != tl_type_int(tl_op_context(op), 64, true))
    return bad(op, "the result", "i64", rt(op, 0));
  return TL_SUCCESS;
}

/*===--- Form-table rows of ops ------------------------------------------===*/

/* Attribute values for the lookups: NULL or the default when the
 * attribute is missing or of another kind (the op is then unverified). */
static const char *form_str(const TlOp *op, const char *name) {
  TlAttr *a = tl_op_attr(op, name);
  return a && tl_attr_kind(a) == TL_ATTR_STRING ? tl_attr_string_value(a, NULL)
                                                : NULL;
}

static int64_t form_int(const TlOp *op, const char *name, int64_t dflt) {
  TlAttr *a = tl_op_attr(op, name);
  return a && tl_attr_kind(a) == TL_ATTR_INT ? tl_attr_int_value(a) : dflt;
}

const TlMmaForm *tl_simt_mma_form(const TlOp *op) {
  if (tl_op_id(op) != TL_OP_SIMT_MMA)
    return NULL;
  return tl_mma_form_lookup(form_str(op, "shape"), form_str(op, "a_type"),
                            form_str(op, "b_type"), form_str(op, "acc_type"));
}

const TlLdmatrixForm *tl_simt_ldmatrix_form(const TlOp *op) {
  if (tl_op_id(op) != TL_OP_SIMT_LDMATRIX)
    return NULL;
  return tl_ldmatrix_form_lookup(form_int(op, "num", 0),
                                 tl_op_attr(op, "trans") != NULL);
}

const TlCpAsyncForm *tl_simt_cp_async_form(const TlOp *op) {
  if (tl_op_id(op) != TL_OP_SIMT_CP_ASYNC)
    return NULL;
  return tl_cp_async_form_lookup(form_int(op, "size", 0),
                                 form_str(op, "cache"));
}

const TlWgmmaForm *tl_simt_wgmma_form(const TlOp *op) {
  if (tl_op_id(op) != TL_OP_SIMT_WGMMA)
    return NULL;
  return tl_wgmma_form_lookup(form_str(op, "a_type"), form_str(op, "b_type"),
                              form_str(op, "acc_type"));
}

bool tl_simt_op_needs(const TlOp *op, TlFeature *feature, unsigned *min_ptx) {
  /* The wgmma ops: sm_90a's wgmma, PTX ISA 8.0. */
  const TlWgmmaForm *w = tl_simt_wgmma_form(op);
  if (w || tl_op_id(op) == TL_OP_SIMT_WGMMA_FENCE ||
      tl_op_id(op) == TL_OP_SIMT_WGMMA_COMMIT ||
      tl_op_id(op) == TL_OP_SIMT_WGMMA_WAIT ||
      tl_op_id(op) == TL_OP_SIMT_WGMMA_DESC) {
    *feature = w ? w->feature : TL_FEATURE_WGMMA;
    *min_ptx = w ? w->min_ptx : 80;
    return true;
  }
  const TlMmaForm *m = tl_simt_mma_form(op);
  const TlLdmatrixForm *l = tl_simt_ldmatrix_form(op);
  const TlCpAsyncForm *c = tl_simt_cp_async_form(op);
  if (m || l || c) {
    *feature = m ? m->feature : l ? l->feature : c->feature;
    *min_ptx = m ? m->min_ptx : l ? l->min_ptx : c->min_ptx;
    return true;
  }
  if (tl_op_id(op) == TL_OP_SIMT_CP_ASYNC_COMMIT ||
      tl_op_id(op) == TL_OP_SIMT_CP_ASYNC_WAIT) {
    *feature = TL_FEATURE_CP_ASYNC;
    *min_ptx = 0;
    return true;
  }
  /* The mbarrier forms with transaction counts, try_wait.parity and the
   * tensor copies are sm_90 and PTX 8.0. */
  switch (tl_op_id(op)) {
  case TL_OP_SIMT_MBARRIER_INIT:
  case TL_OP_SIMT_MBARRIER_ARRIVE:
  case TL_OP_SIMT_MBARRIER_ARRIVE_EXPECT_TX:
  case TL_OP_SIMT_MBARRIER_EXPECT_TX:
  case TL_OP_SIMT_MBARRIER_TRY_WAIT:
  case TL_OP_SIMT_FENCE_PROXY_ASYNC:
  case TL_OP_SIMT_FENCE_MBARRIER_INIT:
  case TL_OP_SIMT_TMA_LOAD:
    *feature = TL_FEATURE_TMA;
    *min_ptx = 80;
    return true;
  case TL_OP_SIMT_SETMAXNREG:
    *feature = TL_FEATURE_SETMAXNREG;
    *min_ptx = 80;
    return true;
  default:
    return false;
  }
}

/*===--- Register operations ---------------------------------------------===*/

/* shfl.sync.{idx,bfly,up,down}.b32 over the full warp (member mask all
 * ones; clamp 31 for idx, bfly and down, 0 for up). PTX reads the low 5
 * bits of the lane for idx and bfly and lets up/down run off the warp
 * edge (the lane keeps its own value); a constant outside 0..31 is
 * therefore a mistake and rejected. */
static TlResult shfl_verify(TlOp *op) {
  static const AttrSpec attrs[] = {{"mode", TL_ATTR_STRING, true}};
  static const char *const modes[] = {"idx", "bfly", "up", "down", NULL};
  if (TL_FAILED(counts(op, 2, 1)) || TL_FAILED(ATTRS_OK(op, attrs)))
    return TL_FAILURE;
  if (!one_of(str_attr(op, "mode"), modes)) {
    tl_op_emit_error(op, "'mode' must be \"idx\", \"bfly\", \"up\" or "
                         "\"down\"");
    return TL_FAILURE;
  }
  if (tl_simt_value_bits(ot(op, 0)) != 32)
    return bad(op, "the shuffled value", "32 bits", ot(op, 0));
  if (rt(op, 0) != ot(op, 0))
    return bad(op, "the result", "the shuffled value's type", rt(op, 0));
  if (!is_i32(op, ot(op, 1)))
    return bad(op, "the lane operand", "i32 or u32", ot(op, 1));
  int64_t lane;
  if (const_int(op, 1, &lane) && (lane < 0 || lane > 31)) {
    tl_op_emit_error(op, "lane or offset %lld is outside 0..31",
                     (long long)lane);
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/* prmt and lop3 work on b32 registers: i32 and u32 are both accepted. */
static TlResult b32_ops_verify(TlOp *op, unsigned n) {
  if (TL_FAILED(counts(op, n, 1)))
    return TL_FAILURE;
  for (unsigned i = 0; i < n; i++)
    if (!is_i32(op, ot(op, i)))
      return bad(op, "each operand", "i32 or u32", ot(op, i));
  if (!is_i32(op, rt(op, 0)))
    return bad(op, "the result", "i32 or u32", rt(op, 0));
  return TL_SUCCESS;
}

/* prmt.b32{.mode} d, a, b, c: without a mode each selector nibble of c
 * picks one of the 8 bytes of {b, a} (bit 3: replicate the sign). */
static TlResult prmt_verify(TlOp *op) {
  static const AttrSpec attrs[] = {{"mode", TL_ATTR_STRING, false}};
  static const char *const modes[] = {"f4e", "b4e",  "rc8", "ecl",
                                      "ecr", "rc16", NULL};
  if (TL_FAILED(b32_ops_verify(op, 3)) || TL_FAILED(ATTRS_OK(op, attrs)))
    return TL_FAILURE;
  const char *m = str_attr(op, "mode");
  if (m && !one_of(m, modes)) {
    tl_op_emit_error(op,
                     "unknown prmt mode \"%s\" (f4e, b4e, rc8, ecl, ecr "
                     "or rc16)",
                     m);
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/* lop3.b32 d, a, b, c, lut: bit i of d is bit (a_i b_i c_i) of lut, read
 * as a 3-bit index with a as the high bit: the truth table of f is
 * f(0xF0, 0xCC, 0xAA). */
static TlResult lop3_verify(TlOp *op) {
  static const AttrSpec attrs[] = {{"lut", TL_ATTR_INT, true}};
  if (TL_FAILED(b32_ops_verify(op, 3)) || TL_FAILED(ATTRS_OK(op, attrs)))
    return TL_FAILURE;
  int64_t lut = int_attr(op, "lut", 0);
  if (lut < 0 || lut > 255) {
    tl_op_emit_error(op, "truth table %lld is outside 0..255", (long long)lut);
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/* add/sub/mul/fma .rn on f16x2 and bf16x2. PTX has add/sub/mul.bf16x2 on
 * sm_90 only; on sm_80 they are fma.rn.bf16x2 with 1.0 or -0.0, which
 * rounds the same (the product by 1 is exact). */
static TlResult packed_verify(TlOp *op) {
  unsigned n = tl_op_id(op) == TL_OP_SIMT_FMA2 ? 3 : 2;
  if (TL_FAILED(counts(op, n, 1)) || TL_FAILED(attrs_ok(op, NULL, 0)))
    return TL_FAILURE;
  TlType *t = rt(op, 0);
  if (!is_half_pair(op, t))
    return bad(op, "the result", "!simt.vec<2xf16> or !simt.vec<2xbf16>", t);
  for (unsigned i = 0; i < n; i++)
    if (ot(op, i) != t)
      return bad(op, "each operand", "the result type", ot(op, i));
  return TL_SUCCESS;
}

/* fma.rn.f32: a * b + c rounded once to nearest even. arith has no fused
 * form, and a multiply followed by an add rounds twice. */
static TlResult fma_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 3, 1)) || TL_FAILED(attrs_ok(op, NULL, 0)))
    return TL_FAILURE;
  TlType *t = rt(op, 0);
  if (t != tl_type_f32(tl_op_context(op)))
    return bad(op, "the result", "f32", t);
  for (unsigned i = 0; i < 3; i++)
    if (ot(op, i) != t)
      return bad(op, "each operand", "the result type", ot(op, i));
  return TL_SUCCESS;
}

/* max/min on f32, f16, bf16 and their pairs: PTX's max.f32 ... max.bf16x2,
 * all on sm_80, whose NaN rule (a NaN operand yields the other) differs
 * from arith.maxf's (NaN if either is NaN). */
static TlResult maxmin_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 2, 1)) || TL_FAILED(attrs_ok(op, NULL, 0)))
    return TL_FAILURE;
  TlContext *c = tl_op_context(op);
  TlType *t = rt(op, 0);
  if (t != tl_type_f32(c) && t != tl_type_f16(c) && t != tl_type_bf16(c) &&
      !is_half_pair(op, t))
    return bad(op, "the result",
               "f32, f16, bf16, !simt.vec<2xf16> or !simt.vec<2xbf16>", t);
  for (unsigned i = 0; i < 2; i++)
    if (ot(op, i) != t)
      return bad(op, "each operand", "the result type", ot(op, i));
  return TL_SUCCESS;
}

/* The special-function unit and the correctly rounded square root, on
 * f32: ex2.approx, lg2.approx and rsqrt.approx (subnormals kept, results
 * within the PTX ISA's stated error of the exact value) and sqrt.rn. */
static const char *const math_fns[] = {"ex2.approx", "lg2.approx", "rsqrt.approx",
                                       "sqrt.rn", NULL};

static TlResult math_verify(TlOp *op) {
  static const AttrSpec attrs[] = {{"fn", TL_ATTR_STRING, true}};
  if (TL_FAILED(counts(op, 1, 1)) || TL_FAILED(ATTRS_OK(op, attrs)))
    return TL_FAILURE;
  if (!one_of(str_attr(op, "fn"), math_fns)) {
    tl_op_emit_error(op, "'fn' must be \"ex2.approx\", \"lg2.approx\", "
                         "\"rsqrt.approx\" or \"sqrt.rn\", not \"%s\"",
                     str_attr(op, "fn"));
    return TL_FAILURE;
  }
  TlType *t = rt(op, 0);
  if (t != tl_type_f32(tl_op_context(op)))
    return bad(op, "the result", "f32", t);
  if (ot(op, 0) != t)
    return bad(op, "the operand", "the result type", ot(op, 0));
  return TL_SUCCESS;
}

/* simt.printf: the CUDA device printf (vprintf) with a constant format. */
int tl_simt_printf_next(const char *fmt, size_t len, size_t *pos, TlPrintfSpec *spec) {
  size_t i = *pos;
  for (;;) {
    while (i < len && fmt[i] != '%')
      i++;
    if (i >= len) {
      *pos = len;
      return 0;
    }
    if (i + 1 < len && fmt[i + 1] == '%') {
      i += 2;
      continue;
    }
    break;
  }
  spec->start = i++;
  while (i < len && strchr("-+ #0", fmt[i]))
    i++;
  while (i < len && fmt[i] >= '0' && fmt[i] <= '9')
    i++;
  if (i < len && fmt[i] == '.') {
    i++;
    while (i < len && fmt[i] >= '0' && fmt[i] <= '9')
      i++;
  }
  spec->wide = i + 1 < len && fmt[i] == 'l' && fmt[i + 1] == 'l';
  if (spec->wide)
    i += 2;
  if (i >= len || !strchr(spec->wide ? "diuxXo" : "diuxXocfFeEgGaA", fmt[i])) {
    *pos = i;
    return -1;
  }
  spec->conv = fmt[i];
  spec->end = *pos = i + 1;
  return 1;
}

static TlResult printf_verify(TlOp *op) {
  static const AttrSpec attrs[] = {{"format", TL_ATTR_STRING, true}};
  if (tl_op_num_results(op)) {
    tl_op_emit_error(op, "has no results");
    return TL_FAILURE;
  }
  if (TL_FAILED(ATTRS_OK(op, attrs)))
    return TL_FAILURE;
  size_t len, pos = 0;
  const char *fmt = tl_attr_string_value(tl_op_attr(op, "format"), &len);
  TlPrintfSpec sp;
  unsigned n = 0;
  int r;
  TlContext *c = tl_op_context(op);
  while ((r = tl_simt_printf_next(fmt, len, &pos, &sp)) > 0) {
    if (n >= tl_op_num_operands(op)) {
      tl_op_emit_error(op, "the format has more conversions than the %u operands",
                       tl_op_num_operands(op));
      return TL_FAILURE;
    }
    TlType *t = ot(op, n);
    bool fl = strchr("fFeEgGaA", sp.conv) != NULL;
    bool ok = fl ? t == tl_type_f32(c) || t == tl_type_f64(c)
                 : tl_type_is_int(t) && !tl_type_is_bool(t) &&
                       tl_type_int_width(t) == (sp.wide ? 64u : 32u);
    if (!ok) {
      tl_op_emit_error(op, "operand #%u is printed by '%.*s', which takes %s, not the operand's type",
                       n, (int)(sp.end - sp.start), fmt + sp.start,
                       fl ? "f32 or f64" : sp.wide ? "a 64-bit integer" : "a 32-bit integer");
      return TL_FAILURE;
    }
    n++;
  }
  if (r < 0) {
    tl_op_emit_error(op, "unsupported conversion at byte %zu of the format (TL prints "
                         "d i u x X o c, with ll for 64 bits, and f F e E g G a A)",
                     pos);
    return TL_FAILURE;
  }
  if (n != tl_op_num_operands(op)) {
    tl_op_emit_error(op, "the format has %u conversion%s but the op has %u operands", n,
                     n == 1 ? "" : "s", tl_op_num_operands(op));
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/*===--- Conversions -----------------------------------------------------===*/

/* The scalar types cvt converts: f16, bf16, f32, f64 and the 8, 16, 32 and
 * 64-bit integers (PTX .u8 ... .s64; i1 and other widths have no cvt). */
static bool cvt_type(const TlType *t) {
  if (tl_type_is_float(t)) {
    unsigned e = tl_type_float_exp(t), m = tl_type_float_man(t);
    return (e == 5 && m == 10) || (e == 8 && m == 7) || (e == 8 && m == 23) ||
           (e == 11 && m == 52);
  }
  if (tl_type_is_int(t) && !tl_type_is_bool(t)) {
    unsigned w = tl_type_int_width(t);
    return w == 8 || w == 16 || w == 32 || w == 64;
  }
  return false;
}

static bool is_bf16(const TlType *t) {
  return tl_type_is_float(t) && tl_type_float_exp(t) == 8 &&
         tl_type_float_man(t) == 7;
}

/* Whether float `to` holds every value of float `from` (both cvt types). */
static bool float_widens(const TlType *from, const TlType *to) {
  return tl_type_float_exp(to) >= tl_type_float_exp(from) &&
         tl_type_float_man(to) >= tl_type_float_man(from) && from != to;
}

/* Whether integer type `to` holds every value of integer type `from`. */
static bool int_holds(const TlType *from, const TlType *to) {
  unsigned f = tl_type_int_width(from), t = tl_type_int_width(to);
  if (tl_type_int_signed(to))
    return tl_type_int_signed(from) ? t >= f : t > f;
  return !tl_type_int_signed(from) && t >= f;
}

typedef enum Rounding { RND_NONE, RND_FLOAT, RND_INT } Rounding;

/* The rounding PTX demands of cvt (checked with ptxas):
 *   float -> int, and float -> the same float (round to an integral
 *     value): an integer rounding rni, rzi, rmi or rpi;
 *   int -> float, and float -> a float that loses precision or range: a
 *     float rounding rn, rz, rm or rp;
 *   int -> int and float -> a float that holds every value: none. */
static Rounding cvt_rounding(const TlType *from, const TlType *to) {
  bool ff = tl_type_is_float(from), tf = tl_type_is_float(to);
  if (ff && !tf)
    return RND_INT;
  if (!ff && tf)
    return RND_FLOAT;
  if (!ff)
    return RND_NONE;
  if (from == to)
    return RND_INT;
  return float_widens(from, to) ? RND_NONE : RND_FLOAT;
}

static TlResult cvt_verify(TlOp *op) {
  static const AttrSpec attrs[] = {{"rounding", TL_ATTR_STRING, false},
                                   {"sat", TL_ATTR_UNIT, false}};
  static const char *const frnd[] = {"rn", "rz", "rm", "rp", NULL};
  static const char *const irnd[] = {"rni", "rzi", "rmi", "rpi", NULL};
  if (TL_FAILED(counts(op, 1, 1)) || TL_FAILED(ATTRS_OK(op, attrs)))
    return TL_FAILURE;
  TlType *a = ot(op, 0), *r = rt(op, 0);
  if (!cvt_type(a))
    return bad(op, "the source",
               "f16, bf16, f32, f64 or an 8, 16, 32 or "
               "64-bit integer",
               a);
  if (!cvt_type(r))
    return bad(op, "the result",
               "f16, bf16, f32, f64 or an 8, 16, 32 or "
               "64-bit integer",
               r);
  TlStr as = {0}, rs = {0};
  tl_type_print(a, &as);
  tl_type_print(r, &rs);
  TlResult res = TL_FAILURE;
  const char *rnd = str_attr(op, "rounding");
  Rounding need = cvt_rounding(a, r);
  /* sm_80 has cvt between bf16 and f32 only (ptxas: "cvt with .bf16.f16
   * requires sm_90"). Other pairs go through f32: bf16 -> f32 is exact, and
   * f32 -> bf16 rounds once. */
  TlType *other = is_bf16(a) ? r : a;
  if ((is_bf16(a) || is_bf16(r)) && other != tl_type_f32(tl_op_context(op))) {
    tl_op_emit_error(op, "cvt from %s to %s needs sm_90; convert through f32",
                     tl_str_cstr(&as), tl_str_cstr(&rs));
    goto out;
  }
  if (rnd && !one_of(rnd, frnd) && !one_of(rnd, irnd)) {
    tl_op_emit_error(op, "unknown rounding \"%s\"", rnd);
    goto out;
  }
  if (need == RND_NONE && rnd) {
    tl_op_emit_error(op, "cvt from %s to %s takes no rounding",
                     tl_str_cstr(&as), tl_str_cstr(&rs));
    goto out;
  }
  if (need == RND_FLOAT && (!rnd || !one_of(rnd, frnd))) {
    tl_op_emit_error(op,
                     "cvt from %s to %s requires a float rounding (rn, "
                     "rz, rm or rp)",
                     tl_str_cstr(&as), tl_str_cstr(&rs));
    goto out;
  }
  if (need == RND_INT && (!rnd || !one_of(rnd, irnd))) {
    tl_op_emit_error(op,
                     "cvt from %s to %s requires an integer rounding "
                     "(rni, rzi, rmi or rpi)",
                     tl_str_cstr(&as), tl_str_cstr(&rs));
    goto out;
  }
  /* .sat clamps to the result's range. PTX's float-to-integer conversions
   * clamp without it, and ptxas rejects it where the result holds every
   * source value; on a float result it would clamp to [0, 1], which no
   * lowering needs. */
  if (tl_op_attr(op, "sat") && (tl_type_is_float(a) || tl_type_is_float(r))) {
    tl_op_emit_error(op, "'sat' applies to integer-to-integer conversions "
                         "only (float-to-integer conversions saturate "
                         "anyway)");
    goto out;
  }
  if (tl_op_attr(op, "sat") && int_holds(a, r)) {
    tl_op_emit_error(op,
                     "cvt from %s to %s cannot overflow and takes no "
                     "'sat'",
                     tl_str_cstr(&as), tl_str_cstr(&rs));
    goto out;
  }
  res = TL_SUCCESS;
out:
  tl_str_free(&as);
  tl_str_free(&rs);
  return res;
}

/* cvt.{rn,rz}.{f16x2,bf16x2}.f32 d, a, b puts a in the upper half of d.
 * simt.cvt_pack %x, %y gives element 0 (the lower half) from %x, so the
 * translation passes %y as a and %x as b. */
static TlResult cvt_pack_verify(TlOp *op) {
  static const AttrSpec attrs[] = {{"rounding", TL_ATTR_STRING, false}};
  static const char *const rnd[] = {"rn", "rz", NULL};
  if (TL_FAILED(counts(op, 2, 1)) || TL_FAILED(ATTRS_OK(op, attrs)))
    return TL_FAILURE;
  TlType *f32 = tl_type_f32(tl_op_context(op));
  for (unsigned i = 0; i < 2; i++)
    if (ot(op, i) != f32)
      return bad(op, "each operand", "f32", ot(op, i));
  if (!is_half_pair(op, rt(op, 0)))
    return bad(op, "the result", "!simt.vec<2xf16> or !simt.vec<2xbf16>",
               rt(op, 0));
  const char *r = str_attr(op, "rounding");
  if (r && !one_of(r, rnd)) {
    tl_op_emit_error(op, "'rounding' must be \"rn\" or \"rz\"");
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

/* cvt.rn.f16x2.e4m3x2 d, h: the two f8e4m3 bytes of the 16-bit half
 * `half` (0 the low, 1 the high) of a b32 register to f16x2, byte 0 of
 * the half into element 0. */
static TlResult cvt_e4m3x2_verify(TlOp *op) {
  static const AttrSpec attrs[] = {{"half", TL_ATTR_INT, true}};
  if (TL_FAILED(counts(op, 1, 1)) || TL_FAILED(ATTRS_OK(op, attrs)))
    return TL_FAILURE;
  if (!is_i32(op, ot(op, 0)))
    return bad(op, "the operand", "i32 or u32", ot(op, 0));
  if (!is_vec_of(rt(op, 0), 2, tl_type_f16(tl_op_context(op))))
    return bad(op, "the result", "!simt.vec<2xf16>", rt(op, 0));
  int64_t h = int_attr(op, "half", 0);
  if (h != 0 && h != 1) {
    tl_op_emit_error(op, "'half' must be 0 or 1, not %lld", (long long)h);
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

static TlResult bitcast_verify(TlOp *op) {
  if (TL_FAILED(counts(op, 1, 1)) || TL_FAILED(attrs_ok(op, NULL, 0)))
    return TL_FAILURE;
  unsigned a = tl_simt_value_bits(ot(op, 0)), r = tl_simt_value_bits(rt(op, 0));
  if (!a || !r || a != r) {
    tl_op_emit_error(op,
                     "reinterprets registers of the same width (%u vs %u "
                     "bits)",
                     a, r);
    return TL_FAILURE;
  }
  return TL_SUCCESS;
}

static TlResult extract_verify(TlOp *op) {
  static const AttrSpec attrs[] = {{"index", TL_ATTR_INT, true}};
  if (TL_FAILED(counts(op, 1, 1)) || TL_FAILED(ATTRS_OK(op, attrs)))
    return TL_FAILURE;
  if (!tl_simt_is_vec(ot(op, 0)))
    return bad(op, "the operand", "a !simt.vec", ot(op, 0));
  int64_t i = int_attr(op, "index", 0);
  if (i < 0 || i >= (int64_t)tl_simt_vec_size(ot(op, 0))) {
    tl_op_emit_error(op, "index %lld is out of range for %u elements",
                     (long long)i, tl_simt_vec_size(ot(op, 0)));
    return TL_FAILURE;
  }
  if (rt(op, 0) != tl_simt_vec_elem(ot(op, 0)))
    return bad(op, "the result", "the element type", rt(op, 0));
  return TL_SUCCESS;
}

static TlResult build_verify(TlOp *op) {
  unsigned n = tl_op_num_operands(op);
  if (tl_op_num_results(op) != 1 || !tl_simt_is_vec(rt(op, 0))) {
    tl_op_emit_error(op, "has one !simt.vec result");
    return TL_FAILURE;
  }
  if (TL_FAILED(attrs_ok(op, NULL, 0)))
    return TL_FAILURE;
  TlType *v = rt(op, 0);
  if (n != tl_simt_vec_size(v)) {
    tl_op_emit_error(op, "builds %u elements from %u operands",
                     tl_simt_vec_size(v), n);
    return TL_FAILURE;
  }
  for (unsigned i = 0; i < n; i++)
    if (ot(op, i) != tl_simt_vec_elem(v))
      return bad(op, "each operand", "the element type", ot(op, i));
  return TL_SUCCESS;
}

/*===--- mbarrier and TMA ------------------------------------------------===*/

static bool is_shared_ptr(const TlType *t) {
  return tl_simt_is_ptr(t) && tl_simt_ptr_space(t) == TL_SIMT_SHARED;
}

/* A constant operand i outside lo..hi: "<what> V is outside lo..hi". */
static TlResult const_in(TlOp *op, unsigned i, const char *what, int64_t lo,
                         int64_t hi) {
  int64_t v;
  if (!const_int(op, i, &v) || (v >= lo && v <= hi))
    return TL_SUCCESS;
  tl_op_emit_error(op, "%s %lld is outside %lld..%lld", what, (long long)v,
                   (long long)lo, (long long)hi);
  return TL_FAILURE;
}

/* The mbarrier ops take the barrier, an 8-byte object in shared memory,
 * first. PTX limits the arrival count to 1..2^20-1 and a transaction
 * count to 0..2^20-1; try_wait.parity's parity is 0 or 1. */
static TlResult mbarrier_verify(TlOp *op) {
  TlOpId id = tl_op_id(op);
  bool wait = id == TL_OP_SIMT_MBARRIER_TRY_WAIT;
  unsigned nops = id == TL_OP_SIMT_MBARRIER_ARRIVE ? 1 : 2;
  if (TL_FAILED(counts(op, nops, wait ? 1 : 0)) ||
      TL_FAILED(attrs_ok(op, NULL, 0)))
    return TL_FAILURE;
  if (!is_shared_ptr(ot(op, 0)))
    return bad(op, "the mbarrier", "!simt.ptr<shared>", ot(op, 0));
  if (nops == 1)
    return TL_SUCCESS;
  const char *what = id == TL_OP_SIMT_MBARRIER_INIT ? "the arrival count"
                     : wait                         ? "the phase parity"
                                                    : "the transaction count";
  if (!is_i32(op, ot(op, 1)))
    return bad(op, what, "i32 or u32", ot(op, 1));
  if (wait && rt(op, 0) != tl_type_bool(tl_op_context(op)))
    return bad(op, "the result", "i1", rt(op, 0));
  if (id == TL_OP_SIMT_MBARRIER_INIT)
    return const_in(op, 1, "arrival count", 1, (1 << 20) - 1);
  if (wait)
    return const_in(op, 1, "phase parity", 0, 1);
  return const_in(op, 1, "transaction count", 0, (1 << 20) - 1);
}

/* cp.async.bulk.tensor.Nd.shared::cluster.global.tile
 * .mbarrier::complete_tx::bytes [dst], [tensormap, {c0, ...}], [mbar]:
 * the box of the tensor map at the coordinates (innermost first) to
 * shared memory, its bytes counted on the mbarrier. */
static TlResult tma_load_verify(TlOp *op) {
  unsigned n = tl_op_num_operands(op);
  if (tl_op_num_results(op) || n < 4 || n > 6) {
    tl_op_emit_error(op, "takes a shared destination, a tensor map, an "
                         "mbarrier and 1 to 3 coordinates, and has no "
                         "results");
    return TL_FAILURE;
  }
  if (TL_FAILED(attrs_ok(op, NULL, 0)))
    return TL_FAILURE;
  if (!is_shared_ptr(ot(op, 0)))
    return bad(op, "the destination", "!simt.ptr<shared>", ot(op, 0));
  if (!tl_simt_is_tensormap(ot(op, 1)))
    return bad(op, "the tensor map", "!simt.tensormap", ot(op, 1));
  if (!is_shared_ptr(ot(op, 2)))
    return bad(op, "the mbarrier", "!simt.ptr<shared>", ot(op, 2));
  for (unsigned i = 3; i < n; i++)
    if (ot(op, i) != tl_type_int(tl_op_context(op), 32, true))
      return bad(op, "each coordinate", "i32", ot(op, i));
  return TL_SUCCESS;
}

/*===--- Definitions -----------------------------------------------------===*/



/* Each op's hooks, by its row in include/tl/ops/simt.def: every simt op
 * has the generic-looking standard form (std_parse, std_print). */
#define STD(verify_fn)                                                         \
  .verify = verify_fn, .parse = std_parse, .print = std_print
#define TL_HOOKS_SIMT_THREAD_ID STD(id_verify)
#define TL_HOOKS_SIMT_BLOCK_ID STD(id_verify)
#define TL_HOOKS_SIMT_BLOCK_DIM STD(id_verify)
#define TL_HOOKS_SIMT_GRID_DIM STD(id_verify)
#define TL_HOOKS_SIMT_LANE_ID STD(id_verify)
#define TL_HOOKS_SIMT_WARP_ID STD(id_verify)
#define TL_HOOKS_SIMT_PTR_ADD STD(ptr_add_verify)
#define TL_HOOKS_SIMT_SMEM_BASE STD(smem_base_verify)
#define TL_HOOKS_SIMT_LOAD STD(load_verify)
#define TL_HOOKS_SIMT_STORE STD(store_verify)
#define TL_HOOKS_SIMT_CP_ASYNC STD(cp_async_verify)
#define TL_HOOKS_SIMT_CP_ASYNC_COMMIT STD(bare_verify)
#define TL_HOOKS_SIMT_CP_ASYNC_WAIT STD(wait_verify)
#define TL_HOOKS_SIMT_BARRIER STD(barrier_verify)
#define TL_HOOKS_SIMT_EXIT STD(bare_verify)
#define TL_HOOKS_SIMT_ATOM STD(atom_verify)
#define TL_HOOKS_SIMT_ATOM_CAS STD(atom_cas_verify)
#define TL_HOOKS_SIMT_FENCE STD(fence_verify)
#define TL_HOOKS_SIMT_LDMATRIX STD(ldmatrix_verify)
#define TL_HOOKS_SIMT_MMA STD(mma_verify)
#define TL_HOOKS_SIMT_WGMMA STD(wgmma_verify)
#define TL_HOOKS_SIMT_WGMMA_FENCE STD(bare_verify)
#define TL_HOOKS_SIMT_WGMMA_COMMIT STD(bare_verify)
#define TL_HOOKS_SIMT_WGMMA_WAIT STD(wgmma_wait_verify)
#define TL_HOOKS_SIMT_WGMMA_DESC STD(wgmma_desc_verify)
#define TL_HOOKS_SIMT_SETMAXNREG STD(setmaxnreg_verify)
#define TL_HOOKS_SIMT_SHFL STD(shfl_verify)
#define TL_HOOKS_SIMT_PRMT STD(prmt_verify)
#define TL_HOOKS_SIMT_LOP3 STD(lop3_verify)
#define TL_HOOKS_SIMT_ADD2 STD(packed_verify)
#define TL_HOOKS_SIMT_SUB2 STD(packed_verify)
#define TL_HOOKS_SIMT_MUL2 STD(packed_verify)
#define TL_HOOKS_SIMT_FMA2 STD(packed_verify)
#define TL_HOOKS_SIMT_FMA STD(fma_verify)
#define TL_HOOKS_SIMT_MAX STD(maxmin_verify)
#define TL_HOOKS_SIMT_MIN STD(maxmin_verify)
#define TL_HOOKS_SIMT_MATH STD(math_verify)
#define TL_HOOKS_SIMT_PRINTF STD(printf_verify)
#define TL_HOOKS_SIMT_CVT STD(cvt_verify)
#define TL_HOOKS_SIMT_CVT_PACK STD(cvt_pack_verify)
#define TL_HOOKS_SIMT_CVT_E4M3X2 STD(cvt_e4m3x2_verify)
#define TL_HOOKS_SIMT_BITCAST STD(bitcast_verify)
#define TL_HOOKS_SIMT_EXTRACT STD(extract_verify)
#define TL_HOOKS_SIMT_BUILD STD(build_verify)
#define TL_HOOKS_SIMT_MBARRIER_INIT STD(mbarrier_verify)
#define TL_HOOKS_SIMT_MBARRIER_ARRIVE STD(mbarrier_verify)
#define TL_HOOKS_SIMT_MBARRIER_ARRIVE_EXPECT_TX STD(mbarrier_verify)
#define TL_HOOKS_SIMT_MBARRIER_EXPECT_TX STD(mbarrier_verify)
#define TL_HOOKS_SIMT_MBARRIER_TRY_WAIT STD(mbarrier_verify)
#define TL_HOOKS_SIMT_FENCE_PROXY_ASYNC STD(bare_verify)
#define TL_HOOKS_SIMT_FENCE_MBARRIER_INIT STD(bare_verify)
#define TL_HOOKS_SIMT_TMA_LOAD STD(tma_load_verify)

static const TlOpDef simt_ops[] = {
#define TL_OP TL_OP_ENTRY
#include "tl/ops/simt.def"
#undef TL_OP
};

static const TlTypeDef *const simt_types[] = {
    &simt_vec_def, &simt_ptr_def, &simt_tensormap_def, NULL};

static const TlDialectDef simt_dialect = {
    .name = "simt",
    .ops = simt_ops,
    .num_ops = sizeof simt_ops / sizeof simt_ops[0],
    .types = simt_types};

void tl_simt_register(TlContext *ctx) {
  tl_context_register_dialect(ctx, &simt_dialect);
}
