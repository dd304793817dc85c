/* The IR's data structures, shared by the files of lib/ir. Nothing outside
 * lib/ir (and dialect/builtin, which is compiled with it) sees these. */
#ifndef TL_IR_INTERNAL_H
#define TL_IR_INTERNAL_H

#include "tl/ir.h"

/* An open-addressing set of uniqued objects, keyed by a precomputed hash. */
typedef struct UniqTable {
  void **slots;
  uint64_t *hashes;
  size_t cap, count;
} UniqTable;

struct TlContext {
  TlArena arena; /* uniqued objects and their arrays */
  TlStrtab *strings;
  TlDiagEngine *diag;
  UniqTable types, attrs;
  TL_VEC(const TlDialectDef *) dialects;
  TL_VEC(const TlOpDef *) op_defs;
  const TlOpDef *op_by_id[TL_OP_COUNT]; /* registered ops of the tables */
  TL_VEC(const TlTypeDef *) type_defs;
  TL_VEC(const TlAttrDef *) attr_defs;
  /* A definition is an integer, or a type when type is not NULL. */
  TL_VEC(struct Define {
    const char *name;
    int64_t value;
    TlType *type;
    bool used;
  }) defines;
  /* Cached common objects. */
  TlType *i1, *f16, *bf16, *f32, *f64, *none;
  TlAttr *unit;
};

struct TlType {
  TlTypeKind kind;
  uint64_t hash;
  TlContext *ctx;
  unsigned width; /* int */
  bool is_signed; /* int */
  bool is_bool;   /* int: the 1-bit boolean `i1` (distinct from u1) */
  unsigned exp, man; /* float */
  unsigned nin, nout; /* function: types[0..nin) inputs, then results */
  TlType **types;
  const TlTypeDef *def; /* dialect */
  unsigned nparams;
  TlAttr **params;
};

struct TlAttr {
  TlAttrKind kind;
  uint64_t hash;
  TlContext *ctx;
  TlType *type;   /* int, float, type */
  int64_t ival;   /* int (canonical extension of the type's width) */
  double fval;    /* float, compared bitwise */
  const char *str; /* string, symbol (string: len bytes, NUL-terminated) */
  size_t len;
  unsigned n;      /* array, dict, dialect params */
  TlAttr **elems;
  TlNamedAttr *entries;
  const TlAttrDef *def;
  void *blob;
  size_t blob_size;
};

struct TlUse {
  TlValue *value;
  TlUse *next;   /* next use of the same value */
  TlUse **prevp; /* the pointer that points at this use */
  TlOp *owner;
  unsigned index;
};

struct TlValue {
  TlType *type;
  TlUse *uses;
  TlOp *op;       /* defining op (results) */
  TlBlock *block; /* owning block (arguments) */
  unsigned index;
  const char *hint;
  TlLoc loc; /* arguments only */
};

struct TlOp {
  const TlOpDef *def;
  TlLoc loc;
  TlModule *module;
  TlBlock *block;
  TlOp *prev, *next;
  unsigned noperands, operand_cap;
  TlUse *operands;
  unsigned nresults;
  TlValue *results;
  unsigned nattrs;
  TlNamedAttr *attrs; /* sorted by name pointer order? no: by strcmp */
  unsigned nregions;
  TlRegion **regions;
  unsigned order;   /* position in block when block->order_valid */
  bool erased;      /* set by tl_op_erase; the memory stays until module end */
  bool in_worklist; /* used by the pattern driver */
};

struct TlBlock {
  TlModule *module;
  TlRegion *region;
  TlBlock *prev, *next;
  TlOp *first, *last;
  unsigned nargs, argcap;
  TlValue **args;
  bool order_valid;
};

struct TlRegion {
  TlOp *op;
  TlBlock *first, *last;
};

struct TlModule {
  TlContext *ctx;
  TlArena arena;
  TlOp *op;
};

/* Registers the builtin dialect (dialect/builtin). */
void tl_builtin_register(TlContext *ctx);
/* builtin's definitions, in the order of include/tl/ops/builtin.def. */
extern const TlOpDef tl_builtin_ops[];

/* Whether op a comes before op b in the same block. */
bool tl_op_before_in_block(TlOp *a, TlOp *b);

#endif
