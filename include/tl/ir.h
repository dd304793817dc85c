/* The TL IR: context, types, attributes, operations, blocks, regions,
 * values, the builder, the op registry, parsing and printing.
 *
 * Shapes follow MLIR. A TlContext owns everything uniqued (types,
 * attributes, interned strings) and the registry of dialects; compare
 * uniqued objects with ==. A TlModule owns an arena holding its operations,
 * blocks, regions and values; tl_module_destroy frees them all at once.
 *
 * Ownership in names: _create/_destroy (caller owns), _get (uniqued, owned
 * by the context, never freed by the caller), _take (detached from its
 * parent, now owned by the caller until re-inserted).
 *
 * Fallible functions return TlResult or NULL and report through the
 * context's diagnostic engine. */
#ifndef TL_IR_H
#define TL_IR_H

#include "tl/diag.h"
#include "tl/support.h"
#include "tl/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TlContext TlContext;
typedef struct TlType TlType;
typedef struct TlAttr TlAttr;
typedef struct TlOp TlOp;
typedef struct TlBlock TlBlock;
typedef struct TlRegion TlRegion;
typedef struct TlValue TlValue;
typedef struct TlUse TlUse;
typedef struct TlModule TlModule;
typedef struct TlOpDef TlOpDef;
typedef struct TlDialectDef TlDialectDef;
typedef struct TlTypeDef TlTypeDef;
typedef struct TlAttrDef TlAttrDef;
typedef struct TlParser TlParser;
typedef struct TlPrinter TlPrinter;
typedef struct TlBuilder TlBuilder;

/*===------------------------------------------------------------------===*
 * Context
 *===------------------------------------------------------------------===*/

/* Creates a context with the builtin dialect registered (register the
 * others with tl_register_all_dialects, dialects.h). Caller owns it. */
TlContext *tl_context_create(void);
void tl_context_destroy(TlContext *ctx);
/* The context's diagnostic engine (owned by the context). */
TlDiagEngine *tl_context_diag(TlContext *ctx);
/* Interns a string; the result lives as long as the context. */
const char *tl_context_intern(TlContext *ctx, const char *s, size_t n);
/* Emits a diagnostic through the context's engine. */
void tl_emit_error(TlContext *ctx, TlLoc loc, const char *fmt, ...)
    TL_PRINTF(3, 4);
void tl_emit_warning(TlContext *ctx, TlLoc loc, const char *fmt, ...)
    TL_PRINTF(3, 4);
void tl_emit_note(TlContext *ctx, TlLoc loc, const char *fmt, ...)
    TL_PRINTF(3, 4);
void tl_emit_remark(TlContext *ctx, TlLoc loc, const char *fmt, ...)
    TL_PRINTF(3, 4);
/* Compile-time definitions (tl-opt -D NAME=VALUE): integers by name that
 * dialects consult while parsing (tl.kernel's template parameters take
 * their value from here when defined). Setting a name again replaces it;
 * get marks the name used. name is copied (interned); never fails.
 *
 * Instantiating a kernel from C is what the tools do: set the definitions,
 * then parse the kernel's text (tl_parse_module). Every kernel parsed
 * afterwards is the instance with those values, in its template header,
 * its requires clause, its grid and in the template expressions of its
 * types (`!tl.reg<{BM}x16xf16, ...>`); the parse fails with a located
 * error when a value breaks a constraint or makes a type invalid. Parsing
 * the same text again after other definitions gives another instance, in
 * the same context or another: types are uniqued, so tiles of different
 * sizes have different (!=) types. */
void tl_context_set_define(TlContext *ctx, const char *name, int64_t value);
bool tl_context_get_define(TlContext *ctx, const char *name, int64_t *value);
/* Definitions may also be types (a kernel's type template parameters:
 * `template(WT = u4)`, `-D WT=f6e3m2`). get_define reports integers only;
 * get_define_value reports either (*type NULL for an integer). */
void tl_context_set_define_type(TlContext *ctx, const char *name,
                                TlType *type);
bool tl_context_get_define_value(TlContext *ctx, const char *name,
                                 int64_t *value, TlType **type);
/* Adds the definition `NAME=VALUE` (the tools' -D): NAME an identifier
 * shorter than 128 characters, VALUE a decimal integer or a scalar type
 * name. Fails with a message in err (may be NULL). */
TlResult tl_context_parse_define(TlContext *ctx, const char *text,
                                 TlErr *err);
/* Forgets every definition: kernels parsed afterwards take their
 * defaults. */
void tl_context_clear_defines(TlContext *ctx);
/* The i-th definition (NULL past the end) and whether it was used. */
const char *tl_context_define_at(TlContext *ctx, unsigned i, bool *used);

/* Makes a location with an interned file name. */
TlLoc tl_loc_get(TlContext *ctx, const char *file, uint32_t line,
                 uint32_t col);

/*===------------------------------------------------------------------===*
 * Types (uniqued)
 *===------------------------------------------------------------------===*/

typedef enum TlTypeKind {
  TL_TYPE_INT,      /* iN (signed, N>=2), uN (unsigned), i1 = bool */
  TL_TYPE_FLOAT,    /* f16, bf16, f32, f64, fNeXmY */
  TL_TYPE_FUNCTION, /* (inputs) -> (results) */
  TL_TYPE_NONE,     /* none: the type of nothing (placeholder results) */
  TL_TYPE_DIALECT,  /* !dialect.name<params> */
} TlTypeKind;

TlTypeKind tl_type_kind(const TlType *t);

/* Integer types iN (signed, 2..64) and uN (unsigned, 1..64); NULL for any
 * other width. The boolean `i1` (also spelled `bool`) is its own 1-bit
 * unsigned type, distinct from u1: get it with tl_type_bool. */
TlType *tl_type_int(TlContext *ctx, unsigned width, bool is_signed);
TlType *tl_type_bool(TlContext *ctx);
bool tl_type_is_int(const TlType *t);
bool tl_type_is_bool(const TlType *t);
unsigned tl_type_int_width(const TlType *t);
bool tl_type_int_signed(const TlType *t);

/* Float types with `exp` exponent bits and `man` mantissa bits:
 * f16 = (5, 10), bf16 = (8, 7), f32 = (8, 23), f64 = (11, 52); small floats
 * fNeXmY with N = 1 + X + Y <= 8, X >= 1. NULL if the pair names no type. */
TlType *tl_type_float(TlContext *ctx, unsigned exp, unsigned man);
TlType *tl_type_f16(TlContext *ctx);
TlType *tl_type_bf16(TlContext *ctx);
TlType *tl_type_f32(TlContext *ctx);
TlType *tl_type_f64(TlContext *ctx);
bool tl_type_is_float(const TlType *t);
unsigned tl_type_float_exp(const TlType *t);
unsigned tl_type_float_man(const TlType *t);

/* Scalars are ints and floats. Bit width of a scalar type, 0 otherwise. */
bool tl_type_is_scalar(const TlType *t);
unsigned tl_type_bitwidth(const TlType *t);

/* The type a builtin scalar name spells (iN, uN, bool, i1, f16, bf16, f32,
 * f64, fNeXmY, none), read from s[0..n). NULL for other names; *bad is
 * then true when the name has a type's form but no type (i1000, f9e4m4). */
TlType *tl_type_scalar_named(TlContext *ctx, const char *s, size_t n,
                             bool *bad);

TlType *tl_type_none(TlContext *ctx);
TlType *tl_type_function(TlContext *ctx, unsigned nin, TlType *const *in,
                         unsigned nout, TlType *const *out);
unsigned tl_type_function_num_inputs(const TlType *t);
TlType *tl_type_function_input(const TlType *t, unsigned i);
unsigned tl_type_function_num_results(const TlType *t);
TlType *tl_type_function_result(const TlType *t, unsigned i);

/* Dialect types: a registered definition plus uniqued attribute
 * parameters. */
TlType *tl_type_dialect(TlContext *ctx, const TlTypeDef *def, unsigned n,
                        TlAttr *const *params);
const TlTypeDef *tl_type_def(const TlType *t);
unsigned tl_type_num_params(const TlType *t);
TlAttr *tl_type_param(const TlType *t, unsigned i);

/* Appends the textual form of a type. */
void tl_type_print(const TlType *t, TlStr *out);

/*===------------------------------------------------------------------===*
 * Attributes (uniqued)
 *===------------------------------------------------------------------===*/

typedef enum TlAttrKind {
  TL_ATTR_UNIT,    /* presence only: `{name}` */
  TL_ATTR_INT,     /* 42 : i32, true, false */
  TL_ATTR_FLOAT,   /* 1.5 : f32 */
  TL_ATTR_STRING,  /* "text" */
  TL_ATTR_TYPE,    /* a type used as a value */
  TL_ATTR_ARRAY,   /* [a, b, c] */
  TL_ATTR_DICT,    /* {a = 1, b} : sorted by name */
  TL_ATTR_SYMBOL,  /* @name */
  TL_ATTR_DIALECT, /* #dialect.name<...> */
} TlAttrKind;

typedef struct TlNamedAttr {
  const char *name; /* interned */
  TlAttr *attr;
} TlNamedAttr;

TlAttrKind tl_attr_kind(const TlAttr *a);

TlAttr *tl_attr_unit(TlContext *ctx);
/* Integer attribute of an integer type. The value is truncated to the
 * type's width, then sign- (signed) or zero- (unsigned, bool) extended. */
TlAttr *tl_attr_int(TlContext *ctx, TlType *type, int64_t value);
TlAttr *tl_attr_bool(TlContext *ctx, bool v);
/* Float attribute; value is stored as a double (for f16/bf16/f32 it is
 * whatever the caller gives; folders round before creating). */
TlAttr *tl_attr_float(TlContext *ctx, TlType *type, double value);
TlAttr *tl_attr_string(TlContext *ctx, const char *s, size_t n);
TlAttr *tl_attr_type(TlContext *ctx, TlType *type);
TlAttr *tl_attr_array(TlContext *ctx, unsigned n, TlAttr *const *elems);
/* Dictionary; the entries are sorted by name; duplicate names: NULL. */
TlAttr *tl_attr_dict(TlContext *ctx, unsigned n, const TlNamedAttr *entries);
TlAttr *tl_attr_symbol(TlContext *ctx, const char *name);
/* Dialect attribute: a definition, attribute parameters and an opaque byte
 * payload (copied; uniqued bytewise). */
TlAttr *tl_attr_dialect(TlContext *ctx, const TlAttrDef *def, unsigned n,
                        TlAttr *const *params, const void *blob,
                        size_t blob_size);

TlType *tl_attr_get_type(const TlAttr *a); /* int/float/type attrs, else NULL */
int64_t tl_attr_int_value(const TlAttr *a);
uint64_t tl_attr_uint_value(const TlAttr *a);
double tl_attr_float_value(const TlAttr *a);
const char *tl_attr_string_value(const TlAttr *a, size_t *len);
TlType *tl_attr_type_value(const TlAttr *a);
unsigned tl_attr_array_size(const TlAttr *a);
TlAttr *tl_attr_array_elem(const TlAttr *a, unsigned i);
unsigned tl_attr_dict_size(const TlAttr *a);
TlNamedAttr tl_attr_dict_entry(const TlAttr *a, unsigned i);
TlAttr *tl_attr_dict_get(const TlAttr *a, const char *name);
const char *tl_attr_symbol_name(const TlAttr *a);
const TlAttrDef *tl_attr_def(const TlAttr *a);
unsigned tl_attr_num_params(const TlAttr *a);
TlAttr *tl_attr_param(const TlAttr *a, unsigned i);
const void *tl_attr_blob(const TlAttr *a, size_t *size);

void tl_attr_print(const TlAttr *a, TlStr *out);

/*===------------------------------------------------------------------===*
 * Dialect registry
 *===------------------------------------------------------------------===*/

enum {
  TL_TRAIT_PURE = 1u << 0,        /* no side effects: CSE/DCE may act */
  TL_TRAIT_TERMINATOR = 1u << 1,  /* must end its block */
  TL_TRAIT_COMMUTATIVE = 1u << 2, /* binary, operands may swap */
  TL_TRAIT_ISOLATED = 1u << 3,    /* regions see no outer values */
  TL_TRAIT_SYMBOL = 1u << 4,      /* has a `sym_name` string attribute */
  TL_TRAIT_SYMBOL_TABLE = 1u << 5, /* children's symbols are unique */
  TL_TRAIT_NO_TERMINATOR = 1u << 6, /* blocks of its regions need none */
  TL_TRAIT_CONSTANT = 1u << 7,    /* produces its `value` attribute */
  TL_TRAIT_SAME_TYPE = 1u << 8,   /* operands and results share one type */
  TL_TRAIT_SINGLE_BLOCK = 1u << 9, /* each region has exactly one block */
  /* Has regions and no effects of its own: it is pure when everything
   * nested in it is (scf.for, scf.if). */
  TL_TRAIT_RECURSIVE_PURE = 1u << 10,
};

/* Whether op has no side effects (TL_TRAIT_PURE, or TL_TRAIT_RECURSIVE_PURE
 * with every nested op side-effect free). Terminators count as pure here;
 * callers never erase a terminator on its own. */
bool tl_op_is_pure(const TlOp *op);

/* What a folder produced for one result: a constant or an existing value
 * (exactly one non-NULL). */
typedef struct TlFoldResult {
  TlAttr *attr;
  TlValue *value;
} TlFoldResult;

typedef struct TlRewriter TlRewriter;
typedef struct TlOpState TlOpState;

/* A rewrite pattern rooted at one op (TL_OP_NONE: any op). apply returns
 * TL_SUCCESS if it changed the IR (through the rewriter only). */
typedef struct TlPattern {
  TlOpId root;        /* the op it applies to; TL_OP_NONE: every op */
  const char *name;   /* for debugging and statistics */
  TlResult (*apply)(TlRewriter *rw, TlOp *op);
} TlPattern;

/* An op's definition: its identity, from the dialect's table
 * (tl/ops.h), and its hooks. */
struct TlOpDef {
  TlOpId id;           /* TL_OP_NONE for ops outside TL's tables */
  const char *name;    /* "dialect.op" */
  const char *summary; /* one line, for docs and --help */
  unsigned traits;
  int num_operands;    /* or TL_VARIADIC: checked before verify runs */
  int num_results;     /* or TL_VARIADIC */
  TlOpClass op_class;
  /* Checks the op's own invariants (operand/result counts and types,
   * attributes). Region contents are verified separately, before this
   * hook runs. Report with tl_op_emit_error. */
  TlResult (*verify)(TlOp *op);
  /* Custom textual form: parse everything after the op name into st;
   * print everything after the op name (the printer writes the results
   * and the name). NULL: only the generic form. */
  TlResult (*parse)(TlParser *p, TlOpState *st);
  void (*print)(TlPrinter *p, TlOp *op);
  /* Folds given the constant values of the operands (NULL where not
   * constant). Returns TL_SUCCESS and fills results[0..nresults) or fails
   * without touching the IR. */
  TlResult (*fold)(TlOp *op, TlAttr *const *operands, TlFoldResult *results);
  /* Canonicalization patterns, NULL-terminated by a pattern with apply ==
   * NULL. */
  const TlPattern *patterns;
};

/* One TlOpDef initialiser from a row of an op table (tl/ops.h), for
 * `#define TL_OP TL_OP_ENTRY` before including the table. The hooks come
 * from TL_HOOKS_<ID>, which the dialect defines for each of its ops as a
 * list of designated initialisers (.verify = ..., .parse = ...). */
#define TL_OP_ENTRY(ID, fn, NAME, NOPS, NRES, CLS, TRAITS, SUMMARY)            \
  {.id = TL_OP_##ID,                                                           \
   .name = NAME,                                                               \
   .summary = SUMMARY,                                                         \
   .traits = TRAITS,                                                           \
   .num_operands = NOPS,                                                       \
   .num_results = NRES,                                                        \
   .op_class = TL_OPCLASS_##CLS,                                               \
   TL_HOOKS_##ID},

struct TlTypeDef {
  const char *name; /* "dialect.type" */
  /* Parses the body after `!dialect.type` (usually `<...>`); NULL type on
   * error (after a diagnostic). */
  TlType *(*parse)(TlParser *p, const TlTypeDef *def);
  void (*print)(const TlType *t, TlStr *out); /* the body only */
};

struct TlAttrDef {
  const char *name; /* "dialect.attr" */
  TlAttr *(*parse)(TlParser *p, const TlAttrDef *def);
  void (*print)(const TlAttr *a, TlStr *out); /* the body only */
};

struct TlDialectDef {
  const char *name;
  const TlOpDef *ops; /* num_ops definitions */
  unsigned num_ops;
  const TlTypeDef *const *types;
  const TlAttrDef *const *attrs;
  /* Builds an op producing `value` of `type`, for folders; NULL if the
   * dialect cannot. */
  TlOp *(*materialize_constant)(TlBuilder *b, TlAttr *value, TlType *type,
                                TlLoc loc);
};

/* Registers a dialect (idempotent). The definition must outlive ctx. */
void tl_context_register_dialect(TlContext *ctx, const TlDialectDef *d);
const TlDialectDef *tl_context_dialect(TlContext *ctx, const char *name);
const TlOpDef *tl_context_op_def(TlContext *ctx, const char *name);
const TlTypeDef *tl_context_type_def(TlContext *ctx, const char *name);
const TlAttrDef *tl_context_attr_def(TlContext *ctx, const char *name);
/* The registered op with this id, or NULL (TL_OP_NONE, or its dialect is
 * not registered). */
const TlOpDef *tl_context_op_def_by_id(TlContext *ctx, TlOpId id);
/* Every registered op, in registration order. */
unsigned tl_context_num_op_defs(TlContext *ctx);
const TlOpDef *tl_context_op_def_at(TlContext *ctx, unsigned i);

/*===------------------------------------------------------------------===*
 * Values
 *===------------------------------------------------------------------===*/

TlType *tl_value_type(const TlValue *v);
void tl_value_set_type(TlValue *v, TlType *t);
/* The op defining v, or NULL for a block argument. */
TlOp *tl_value_def(const TlValue *v);
/* The block owning a block argument, or NULL for an op result. */
TlBlock *tl_value_block(const TlValue *v);
/* Result number or argument number. */
unsigned tl_value_index(const TlValue *v);
/* The name the value had in the source, or NULL. */
const char *tl_value_name_hint(const TlValue *v);
void tl_value_set_name_hint(TlValue *v, const char *interned_name);
/* Where v is defined (its op's or block's location). */
TlLoc tl_value_loc(const TlValue *v);

TlUse *tl_value_first_use(const TlValue *v);
TlUse *tl_use_next(const TlUse *u);
TlOp *tl_use_owner(const TlUse *u);
unsigned tl_use_operand_index(const TlUse *u);
bool tl_value_has_uses(const TlValue *v);
bool tl_value_has_one_use(const TlValue *v);
/* Replaces every use of `from` by `to`. */
void tl_value_replace_all_uses(TlValue *from, TlValue *to);

/*===------------------------------------------------------------------===*
 * Operations
 *===------------------------------------------------------------------===*/

/* Everything needed to create an op; build with tl_op_state_* and create
 * with tl_op_create. The state owns nothing after tl_op_create (call
 * tl_op_state_free if it was never used). */
struct TlOpState {
  TlContext *ctx;
  const TlOpDef *def;
  TlLoc loc;
  TL_VEC(TlValue *) operands;
  TL_VEC(TlType *) results;
  TL_VEC(TlNamedAttr) attrs;
  TL_VEC(TlRegion *) regions; /* detached regions to move in, or NULL */
  unsigned nregions;          /* regions to create empty if not given */
};

void tl_op_state_init(TlOpState *st, TlContext *ctx, const TlOpDef *def,
                      TlLoc loc);
void tl_op_state_free(TlOpState *st);
void tl_op_state_add_operand(TlOpState *st, TlValue *v);
void tl_op_state_add_operands(TlOpState *st, unsigned n, TlValue *const *v);
void tl_op_state_add_result(TlOpState *st, TlType *t);
/* Sets (or replaces) a named attribute. */
void tl_op_state_set_attr(TlOpState *st, const char *name, TlAttr *a);
TlAttr *tl_op_state_get_attr(const TlOpState *st, const char *name);
/* Adds a region to be created empty (or filled by the parser). */
void tl_op_state_add_region(TlOpState *st, TlRegion *r);

/* Creates a detached op in module m's arena. Never fails. */
TlOp *tl_op_create(TlModule *m, TlOpState *st);

const TlOpDef *tl_op_def(const TlOp *op);
/* The op's id (tl/ops.h): what consumers switch on. */
TlOpId tl_op_id(const TlOp *op);
const char *tl_op_name(const TlOp *op);
bool tl_op_is(const TlOp *op, const TlOpDef *def);
TlContext *tl_op_context(const TlOp *op);
TlModule *tl_op_module(const TlOp *op);
TlLoc tl_op_loc(const TlOp *op);
bool tl_op_has_trait(const TlOp *op, unsigned trait);

unsigned tl_op_num_operands(const TlOp *op);
TlValue *tl_op_operand(const TlOp *op, unsigned i);
void tl_op_set_operand(TlOp *op, unsigned i, TlValue *v);
/* Replaces the whole operand list. */
void tl_op_set_operands(TlOp *op, unsigned n, TlValue *const *v);
unsigned tl_op_num_results(const TlOp *op);
TlValue *tl_op_result(const TlOp *op, unsigned i);
unsigned tl_op_num_regions(const TlOp *op);
TlRegion *tl_op_region(const TlOp *op, unsigned i);

unsigned tl_op_num_attrs(const TlOp *op);
TlNamedAttr tl_op_attr_at(const TlOp *op, unsigned i);
TlAttr *tl_op_attr(const TlOp *op, const char *name);
void tl_op_set_attr(TlOp *op, const char *name, TlAttr *a);
void tl_op_remove_attr(TlOp *op, const char *name);

TlBlock *tl_op_block(const TlOp *op);   /* containing block or NULL */
TlOp *tl_op_parent(const TlOp *op);     /* op owning the containing region */
TlOp *tl_op_next(const TlOp *op);
TlOp *tl_op_prev(const TlOp *op);
/* True if `ancestor` is op or contains it (through regions). */
bool tl_op_is_ancestor(const TlOp *ancestor, const TlOp *op);

/* Unlinks op from its block (it keeps its operands and uses). */
void tl_op_take(TlOp *op);
/* Drops the op's operand uses, its regions' contents, unlinks it. Its
 * results must have no uses left. */
void tl_op_erase(TlOp *op);
/* Moves a detached op before/after another op. */
void tl_op_insert_before(TlOp *op, TlOp *before);
void tl_op_insert_after(TlOp *op, TlOp *after);
/* Deep copy in the same module; operands defined outside `op` stay as they
 * are, inner values are remapped. The copy is detached. */
TlOp *tl_op_clone(TlOp *op);

/* Emits an error/note located at op, prefixed with `'name' op `. */
void tl_op_emit_error(const TlOp *op, const char *fmt, ...) TL_PRINTF(2, 3);
void tl_op_emit_warning(const TlOp *op, const char *fmt, ...) TL_PRINTF(2, 3);
void tl_op_emit_remark(const TlOp *op, const char *fmt, ...) TL_PRINTF(2, 3);

/* Walks op and everything nested in it; post-order visits children first.
 * The callback may erase the op it is given (post-order only). */
typedef void (*TlWalkFn)(TlOp *op, void *user);
void tl_op_walk(TlOp *op, TlWalkFn fn, void *user, bool post_order);

/*===------------------------------------------------------------------===*
 * Blocks and regions
 *===------------------------------------------------------------------===*/

TlRegion *tl_region_create(TlModule *m);
TlOp *tl_region_parent(const TlRegion *r);
TlBlock *tl_region_first_block(const TlRegion *r);
/* Only blocks of a single-block region in TL; still a list for shape. */
TlBlock *tl_block_next(const TlBlock *b);
bool tl_region_empty(const TlRegion *r);
void tl_region_append_block(TlRegion *r, TlBlock *b);

TlBlock *tl_block_create(TlModule *m);
TlRegion *tl_block_region(const TlBlock *b);
TlOp *tl_block_parent_op(const TlBlock *b);
TlValue *tl_block_add_arg(TlBlock *b, TlType *t, TlLoc loc);
unsigned tl_block_num_args(const TlBlock *b);
TlValue *tl_block_arg(const TlBlock *b, unsigned i);
TlOp *tl_block_first_op(const TlBlock *b);
TlOp *tl_block_last_op(const TlBlock *b);
/* Appends a detached op. */
void tl_block_append(TlBlock *b, TlOp *op);
/* The terminator if the last op has the trait, else NULL. */
TlOp *tl_block_terminator(const TlBlock *b);

/*===------------------------------------------------------------------===*
 * Modules
 *===------------------------------------------------------------------===*/

/* Creates a module (a `builtin.module` op with one block). Caller owns;
 * destroying frees every op, block, region and value created in it. */
TlModule *tl_module_create(TlContext *ctx, TlLoc loc);
void tl_module_destroy(TlModule *m);
TlOp *tl_module_op(const TlModule *m);
TlBlock *tl_module_body(const TlModule *m);
TlContext *tl_module_context(const TlModule *m);
TlArena *tl_module_arena(TlModule *m);

/* Parses a whole buffer (one module: either an explicit `module { ... }`
 * or top-level ops wrapped in an implicit one). NULL on error, after
 * diagnostics. `name` is the file name used in locations; `first_line` is
 * the line number of the buffer's first line (for split input files). */
TlModule *tl_parse_module(TlContext *ctx, const char *name, const char *text,
                          size_t len, unsigned first_line);

/* Verifies op and everything nested in it. */
TlResult tl_verify(TlOp *op);

typedef struct TlPrintOptions {
  bool generic;      /* print every op in the generic form */
  bool print_locs;   /* reserved: locations are not printed yet */
  bool no_aliases;   /* module printing: write dialect attributes inline
                        instead of as #name aliases defined at the top */
} TlPrintOptions;
void tl_op_print(TlOp *op, const TlPrintOptions *opts, TlStr *out);
void tl_module_print(TlModule *m, const TlPrintOptions *opts, TlStr *out);

/* Symbol tables: ops with TL_TRAIT_SYMBOL under a TL_TRAIT_SYMBOL_TABLE op.
 * Returns the op named `name` directly inside table's region, or NULL. */
TlOp *tl_symbol_lookup(TlOp *table, const char *name);
const char *tl_symbol_name(const TlOp *op); /* NULL if it has none */

/*===------------------------------------------------------------------===*
 * Builder
 *===------------------------------------------------------------------===*/

struct TlBuilder {
  TlModule *module;
  TlBlock *block;  /* insertion block, NULL: ops are left detached */
  TlOp *before;    /* insert before this op; NULL: at the block's end */
  TlLoc loc;       /* given to ops built by id (tl_build, tl/build.h) */
};

void tl_builder_init(TlBuilder *b, TlModule *m);
void tl_builder_set_end(TlBuilder *b, TlBlock *block);
void tl_builder_set_before(TlBuilder *b, TlOp *op);
void tl_builder_set_after(TlBuilder *b, TlOp *op);
/* Creates the op from st and inserts it at the insertion point. */
TlOp *tl_builder_insert(TlBuilder *b, TlOpState *st);
/* Inserts an existing detached op. */
void tl_builder_insert_op(TlBuilder *b, TlOp *op);
/* Sets the location tl_build and the typed builders give their ops. */
void tl_builder_set_loc(TlBuilder *b, TlLoc loc);
/* Creates the op `id` with operands, result types and no attributes at
 * the insertion point and b's location. Aborts if the op's dialect is not
 * registered (a bug). */
TlOp *tl_build(TlBuilder *b, TlOpId id, unsigned nops, TlValue *const *ops,
               unsigned nres, TlType *const *res);
/* tl_build for an op with one result; returns the result. */
TlValue *tl_build1(TlBuilder *b, TlOpId id, unsigned nops,
                   TlValue *const *ops, TlType *res);
/* Convenience: creates an op by name ("arith.addi") with operands, result
 * types and no attributes. Aborts if the name is not registered (a bug). */
TlOp *tl_builder_create(TlBuilder *b, const char *name, TlLoc loc,
                        unsigned nops, TlValue *const *ops, unsigned nres,
                        TlType *const *res);

/*===------------------------------------------------------------------===*
 * Custom-form parsing (for TlOpDef.parse and TlTypeDef/TlAttrDef.parse)
 *===------------------------------------------------------------------===*/

/* An operand reference not yet resolved to a value: `%name` or `%name#3`. */
typedef struct TlOperandRef {
  const char *name; /* interned, without '%' */
  unsigned index;   /* result number for `#N` */
  TlLoc loc;
} TlOperandRef;

typedef TL_VEC(TlOperandRef) TlOperandRefVec;
typedef TL_VEC(TlType *) TlTypeVec;
typedef TL_VEC(int64_t) TlDimVec;

/* A block argument being defined: `%name : type`. */
typedef struct TlArgDef {
  TlOperandRef ref;
  TlType *type;
} TlArgDef;

TlContext *tl_parser_context(TlParser *p);
TlLoc tl_parser_loc(TlParser *p); /* location of the next token */
void tl_parser_error(TlParser *p, TlLoc loc, const char *fmt, ...)
    TL_PRINTF(3, 4);

/* Punctuation: one of ( ) [ ] { } < > , : = -> * ? + - / % # @ */
TlResult tl_parse_punct(TlParser *p, const char *punct);
bool tl_parse_optional_punct(TlParser *p, const char *punct);
/* A bare identifier equal to kw. */
TlResult tl_parse_keyword(TlParser *p, const char *kw);
bool tl_parse_optional_keyword(TlParser *p, const char *kw);
/* Any bare identifier (interned); peek does not consume. */
TlResult tl_parse_identifier(TlParser *p, const char **out);
bool tl_parser_peek_identifier(TlParser *p, const char **out);
bool tl_parser_peek_punct(TlParser *p, const char *punct);
bool tl_parser_peek_operand(TlParser *p);
/* Whether the next token opens a one-line `{...}` directly followed by
 * ':' (a template expression in the form `{expr} : type`, not an attribute
 * dictionary); does not consume. */
bool tl_parser_peek_template_int(TlParser *p);
/* An integer, optionally negative; or a template expression `{expr}`
 * (one line) where a template environment is installed. */
TlResult tl_parse_int(TlParser *p, int64_t *out);
TlResult tl_parse_string(TlParser *p, const char **out, size_t *len);
TlResult tl_parse_symbol_name(TlParser *p, const char **out); /* @name */

TlResult tl_parse_operand(TlParser *p, TlOperandRef *out);
/* Zero or more comma-separated operands. */
TlResult tl_parse_operand_list(TlParser *p, TlOperandRefVec *out);
TlResult tl_parser_resolve(TlParser *p, const TlOperandRef *ref, TlType *type,
                           TlValue **out);
/* Resolves and adds operands with the given types (n types, or one type
 * for all when ntypes == 1). */
TlResult tl_parser_resolve_operands(TlParser *p, TlOpState *st, unsigned n,
                                    const TlOperandRef *refs, unsigned ntypes,
                                    TlType *const *types);
/* A place in the text to parse again from: an op whose first part refers
 * to a later one (tl.kernel's parameter types may name its template
 * parameters) reads ahead, then rewinds. The mark lives in the parser's
 * scratch memory until the parse ends. Rewinding forgets nothing that was
 * defined in between (parse only what defines no values there). */
typedef struct TlParserMark TlParserMark;
TlParserMark *tl_parser_mark(TlParser *p);
void tl_parser_rewind(TlParser *p, const TlParserMark *m);
/* The type of an already-defined value without giving its type. */
TlResult tl_parser_lookup(TlParser *p, const TlOperandRef *ref, TlValue **out);

TlResult tl_parse_type(TlParser *p, TlType **out);
/* `t` or `t1, t2` (no parens) or `(t1, t2)`. */
TlResult tl_parse_type_list(TlParser *p, TlTypeVec *out);
TlResult tl_parse_attr(TlParser *p, TlAttr **out);
/* A number (or true/false) written without a type, to be given one later
 * (custom forms that name the type after the value). */
typedef struct TlLiteral {
  const char *text; /* the token, valid while parsing */
  size_t len;
  TlLoc loc;
  bool neg, is_float, is_bool, bool_value;
} TlLiteral;
TlResult tl_parse_literal(TlParser *p, TlLiteral *out);
/* Converts a literal to `type` by the rules of typed attribute literals
 * (exact rounding, range checks, hex bit patterns for floats). */
TlResult tl_literal_to_attr(TlParser *p, const TlLiteral *lit, TlType *type,
                            TlAttr **out);
/* `%a, %b : T, U`: operands with one type each, resolved into st; nothing
 * at all when no operand follows. The optional attribute dictionary stands
 * between the operands and the colon when attrs_first (`%a {x} : T`), else
 * after the types (`%a : T {x}`). */
TlResult tl_parse_typed_operands(TlParser *p, TlOpState *st, bool attrs_first);
/* Optional `{name = attr, ...}` added to st. */
TlResult tl_parse_optional_attr_dict(TlParser *p, TlOpState *st);
/* `%name : type` */
TlResult tl_parse_arg_def(TlParser *p, TlArgDef *out);
/* `x`-separated dimension list such as `16x?x8x` followed by a type:
 * `16x8xf32`. -1 marks a dynamic (`?`) dimension. Sets *elem. A dimension
 * may be a template expression (`{BM}x8xf32`) whose value is 1..2^40. */
TlResult tl_parse_shape_and_type(TlParser *p, TlDimVec *dims, TlType **elem);
/* A region `{ ... }` whose entry block gets the given arguments (already
 * typed). If nargs is 0 and the region starts with `^bb0(...)`, the block
 * header is parsed. The region is appended to st. */
TlResult tl_parse_region(TlParser *p, TlOpState *st, unsigned nargs,
                         const TlArgDef *args);
/* At `<` or `(`: returns the raw text between it and the matching closer
 * and consumes through it. For bodies with their own grammar (layouts,
 * grid expressions). Nesting is counted over (), [] and, in a `<` body,
 * <> together; a template expression `{...}` is skipped whole. In a `<`
 * body, each template expression is replaced by its decimal value (the
 * text then lives in the parser's scratch memory until the parse ends):
 * map offsets in the text to locations with tl_parser_raw_loc. *loc (may
 * be NULL) is where the body starts. */
TlResult tl_parse_raw_body(TlParser *p, const char **text, size_t *len,
                           TlLoc *loc);
/* The source location of byte off of the text the last tl_parse_raw_body
 * returned (a substituted value maps to its template expression). */
TlLoc tl_parser_raw_loc(TlParser *p, size_t off);

/* Template expressions. An op whose parser installs an environment makes
 * `{expr}` usable in what it parses next (its regions included): shape
 * dimensions, tl_parse_int, `<` raw bodies, types (`{T}`, through the
 * environment's type hook), and aliases whose value holds one (parsed
 * again at each use). eval gets the text between the braces
 * and gives its value, or fails with a message in err and the byte offset
 * of the problem in *err_offset; it appends the names it read with their
 * values ("BM = 16, BN = 8") to names, for notes. */
typedef struct TlTemplateEnv {
  bool (*eval)(void *user, const char *text, size_t len, int64_t *value,
               TlStr *names, TlErr *err, size_t *err_offset);
  void *user;
  /* Where a type is expected (tl_parse_type, the element type of a
   * shape), `{NAME}` names a type template parameter: gives its type, or
   * NULL with a message in err. May be NULL: no type parameters. */
  TlType *(*type)(void *user, const char *text, size_t len, TlErr *err);
} TlTemplateEnv;
/* Installs env (NULL: none; the parser keeps the pointer, which must stay
 * valid until replaced) and returns the previous one, to restore after
 * the op's regions. Without an environment a template expression is an
 * error. */
const TlTemplateEnv *tl_parser_set_template_env(TlParser *p,
                                                const TlTemplateEnv *env);

/*===------------------------------------------------------------------===*
 * Custom-form printing (for TlOpDef.print)
 *===------------------------------------------------------------------===*/

TlStr *tl_printer_out(TlPrinter *p);
void tl_print_operand(TlPrinter *p, TlValue *v);
void tl_print_operands(TlPrinter *p, unsigned n, TlValue *const *v);
void tl_print_type(TlPrinter *p, const TlType *t);
void tl_print_attr(TlPrinter *p, const TlAttr *a);
void tl_print_str(TlPrinter *p, const char *s);
void tl_printf(TlPrinter *p, const char *fmt, ...) TL_PRINTF(2, 3);
/* ` {a = 1, ...}` with the given names left out (NULL-terminated list). */
void tl_print_attr_dict(TlPrinter *p, const TlOp *op,
                        const char *const *elided);
/* The form tl_parse_typed_operands reads, for operands from..n-1 (with a
 * leading space; attributes printed as there, none elided). */
void tl_print_typed_operands(TlPrinter *p, TlOp *op, unsigned from,
                             bool attrs_first);
/* ` %name : type` for a block argument. */
void tl_print_arg_def(TlPrinter *p, TlValue *arg);
/* Prints a region `{ ... }`; entry block arguments are printed in a
 * `^bb0(...)` header only if print_entry_args (otherwise the op's custom
 * form prints them itself and names them through tl_print_arg_def). */
void tl_print_region(TlPrinter *p, TlRegion *r, bool print_entry_args);

/* Prints an escaped string literal "..." */
void tl_print_string_literal(TlStr *out, const char *s, size_t n);

#ifdef __cplusplus
}
#endif
#endif
