/* Translation of simt + arith + scf to LLVM IR, one function per op.
 *
 * Kernels are builtin funcs with the `kernel` attribute. Structured control
 * flow becomes basic blocks: scf.for a header with phis for the induction
 * variable and the carried values, scf.if a diamond with phis for its
 * results, scf.while a header computing the condition. NVVM intrinsics are
 * resolved by name through one table and LLVMLookupIntrinsicID, so an
 * intrinsic LLVM does not have is a diagnostic here rather than an
 * `.extern .func` that only ptxas would reject. Inline PTX is used only
 * where LLVM has no intrinsic or loses what the op says: lop3,
 * cache-hinted loads and stores, and the atomics (docs/target.md lists
 * every site). */
#include "target_internal.h"
#include "tl/predicates.h"
#include "tl/simt.h"

#include <llvm-c/Core.h>

#include <stdio.h>
#include <string.h>

typedef struct Map {
  const TlValue **keys;
  LLVMValueRef *vals;
  size_t cap, count;
} Map;

typedef struct Tr {
  TlContext *ctx;
  const TlArch *arch; /* the target's row of the target table */
  unsigned ptx;       /* the PTX ISA, x 10 */
  LLVMContextRef lc;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  LLVMValueRef fn;
  LLVMValueRef smem; /* the dynamic shared memory symbol, created on use */
  Map map;
  bool failed;
} Tr;

/*===--- Value map -------------------------------------------------------===*/

static size_t hash_ptr(const void *p, size_t cap) {
  uintptr_t x = (uintptr_t)p;
  x ^= x >> 17;
  x *= 0x9E3779B97F4A7C15ull;
  return (size_t)(x >> 11) & (cap - 1);
}

static void map_put(Map *m, const TlValue *k, LLVMValueRef v) {
  if (2 * (m->count + 1) > m->cap) {
    size_t ncap = m->cap ? m->cap * 2 : 256;
    const TlValue **nk = tl_xcalloc(ncap, sizeof *nk);
    LLVMValueRef *nv = tl_xcalloc(ncap, sizeof *nv);
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i]) {
        size_t j = hash_ptr(m->keys[i], ncap);
        while (nk[j])
          j = (j + 1) & (ncap - 1);
        nk[j] = m->keys[i];
        nv[j] = m->vals[i];
      }
    tl_free(m->keys);
    tl_free(m->vals);
    m->keys = nk;
    m->vals = nv;
    m->cap = ncap;
  }
  size_t j = hash_ptr(k, m->cap);
  while (m->keys[j] && m->keys[j] != k)
    j = (j + 1) & (m->cap - 1);
  if (!m->keys[j])
    m->count++;
  m->keys[j] = k;
  m->vals[j] = v;
}

static LLVMValueRef map_get(const Map *m, const TlValue *k) {
  if (!m->cap)
    return NULL;
  for (size_t j = hash_ptr(k, m->cap); m->keys[j]; j = (j + 1) & (m->cap - 1))
    if (m->keys[j] == k)
      return m->vals[j];
  return NULL;
}

/*===--- Errors and types ------------------------------------------------===*/

static LLVMValueRef fail_op(Tr *t, TlOp *op, const char *fmt, const char *arg) {
  if (!t->failed) {
    TlStr s = {0};
    tl_str_printf(&s, fmt, arg);
    tl_op_emit_error(op, "%s", tl_str_cstr(&s));
    tl_str_free(&s);
  }
  t->failed = true;
  return NULL;
}

/* The LLVM type of a TL type; NULL for types the back end cannot hold in a
 * register (small floats, tl tiles). */
static LLVMTypeRef ltype(Tr *t, const TlType *ty) {
  if (tl_type_is_int(ty))
    return LLVMIntTypeInContext(t->lc, tl_type_int_width(ty));
  if (tl_type_is_float(ty)) {
    unsigned e = tl_type_float_exp(ty), m = tl_type_float_man(ty);
    if (e == 5 && m == 10)
      return LLVMHalfTypeInContext(t->lc);
    if (e == 8 && m == 7)
      return LLVMBFloatTypeInContext(t->lc);
    if (e == 8 && m == 23)
      return LLVMFloatTypeInContext(t->lc);
    if (e == 11 && m == 52)
      return LLVMDoubleTypeInContext(t->lc);
    return NULL;
  }
  if (tl_simt_is_vec(ty)) {
    LLVMTypeRef e = ltype(t, tl_simt_vec_elem(ty));
    return e ? LLVMVectorType(e, tl_simt_vec_size(ty)) : NULL;
  }
  if (tl_simt_is_ptr(ty))
    return LLVMPointerTypeInContext(t->lc, (unsigned)tl_simt_ptr_space(ty));
  /* A tensor map is a by-value kernel parameter, seen through its generic
   * address (translate_func marks the parameter byval grid_constant). */
  if (tl_simt_is_tensormap(ty))
    return LLVMPointerTypeInContext(t->lc, 0);
  return NULL;
}

static LLVMTypeRef i32t(Tr *t) { return LLVMInt32TypeInContext(t->lc); }

static LLVMValueRef val(Tr *t, TlValue *v) {
  LLVMValueRef r = map_get(&t->map, v);
  tl_assert(r);
  return r;
}

static LLVMValueRef operand(Tr *t, TlOp *op, unsigned i) {
  return val(t, tl_op_operand(op, i));
}

/*===--- Intrinsics ------------------------------------------------------===*/

/* Declares an intrinsic by name (with overload types); NULL and a
 * diagnostic when LLVM does not know it. */
static LLVMValueRef intrinsic(Tr *t, TlOp *op, const char *name,
                              LLVMTypeRef *overloads, unsigned n,
                              LLVMTypeRef *fnty) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id)
    return fail_op(t, op, "this LLVM has no intrinsic %s", name);
  *fnty = LLVMIntrinsicGetType(t->lc, id, overloads, n);
  return LLVMGetIntrinsicDeclaration(t->mod, id, overloads, n);
}

static LLVMValueRef call(Tr *t, TlOp *op, const char *name,
                         LLVMTypeRef *overloads, unsigned n, LLVMValueRef *args,
                         unsigned nargs) {
  LLVMTypeRef fty;
  LLVMValueRef f = intrinsic(t, op, name, overloads, n, &fty);
  if (!f)
    return NULL;
  return LLVMBuildCall2(t->b, fty, f, args, nargs, "");
}

/* Reinterprets v as type ty (same size in bits). */
static LLVMValueRef coerce(Tr *t, LLVMValueRef v, LLVMTypeRef ty) {
  return LLVMTypeOf(v) == ty ? v : LLVMBuildBitCast(t->b, v, ty, "");
}

/*===--- arith -----------------------------------------------------------===*/

static bool is_signed(const TlType *ty) {
  return tl_type_is_int(ty) && tl_type_int_signed(ty);
}

/* Float -> integer, saturating, NaN -> 0: the .sat intrinsics' semantics.
 * LLVM 22's NVPTX back end miscompiles them into i1 (it tests the clamped
 * value for zero and inverts the bit), so a 1-bit result goes through i8
 * and is clamped to 1 there. */
static LLVMValueRef fptoi_sat(Tr *t, TlOp *op, LLVMValueRef x, TlType *rty,
                              LLVMTypeRef lr) {
  const char *name = is_signed(rty) ? "llvm.fptosi.sat" : "llvm.fptoui.sat";
  if (LLVMGetIntTypeWidth(lr) != 1) {
    LLVMTypeRef ov[2] = {lr, LLVMTypeOf(x)};
    return call(t, op, name, ov, 2, &x, 1);
  }
  LLVMTypeRef i8 = LLVMInt8TypeInContext(t->lc);
  LLVMTypeRef ov[2] = {i8, LLVMTypeOf(x)};
  LLVMValueRef v = call(t, op, "llvm.fptoui.sat", ov, 2, &x, 1);
  if (!v)
    return NULL;
  LLVMValueRef one = LLVMConstInt(i8, 1, false);
  LLVMValueRef big = LLVMBuildICmp(t->b, LLVMIntUGT, v, one, "");
  v = LLVMBuildSelect(t->b, big, one, v, "");
  return LLVMBuildTrunc(t->b, v, lr, "");
}


static LLVMValueRef arith_constant(Tr *t, TlOp *op) {
  TlAttr *a = tl_op_attr(op, "value");
  LLVMTypeRef ty = ltype(t, tl_attr_get_type(a));
  if (!ty)
    return fail_op(t, op, "the type of this constant has no register form%s", "");
  if (tl_attr_kind(a) == TL_ATTR_INT)
    return LLVMConstInt(ty, (unsigned long long)tl_attr_int_value(a), 1);
  return LLVMConstReal(ty, tl_attr_float_value(a));
}

/* LLVM's predicates of arith.cmpi, by predicate, for signed and unsigned
 * operands. */
static const LLVMIntPredicate cmpi_signed[TL_CMPI_COUNT] = {
    [TL_CMPI_EQ] = LLVMIntEQ,  [TL_CMPI_NE] = LLVMIntNE,
    [TL_CMPI_LT] = LLVMIntSLT, [TL_CMPI_LE] = LLVMIntSLE,
    [TL_CMPI_GT] = LLVMIntSGT, [TL_CMPI_GE] = LLVMIntSGE,
};
static const LLVMIntPredicate cmpi_unsigned[TL_CMPI_COUNT] = {
    [TL_CMPI_EQ] = LLVMIntEQ,  [TL_CMPI_NE] = LLVMIntNE,
    [TL_CMPI_LT] = LLVMIntULT, [TL_CMPI_LE] = LLVMIntULE,
    [TL_CMPI_GT] = LLVMIntUGT, [TL_CMPI_GE] = LLVMIntUGE,
};

/* LLVM's predicates of arith.cmpf, by predicate. */
static const LLVMRealPredicate cmpf_llvm[TL_CMPF_COUNT] = {
    [TL_CMPF_OEQ] = LLVMRealOEQ, [TL_CMPF_OGT] = LLVMRealOGT,
    [TL_CMPF_OGE] = LLVMRealOGE, [TL_CMPF_OLT] = LLVMRealOLT,
    [TL_CMPF_OLE] = LLVMRealOLE, [TL_CMPF_ONE] = LLVMRealONE,
    [TL_CMPF_ORD] = LLVMRealORD, [TL_CMPF_UEQ] = LLVMRealUEQ,
    [TL_CMPF_UGT] = LLVMRealUGT, [TL_CMPF_UGE] = LLVMRealUGE,
    [TL_CMPF_ULT] = LLVMRealULT, [TL_CMPF_ULE] = LLVMRealULE,
    [TL_CMPF_UNE] = LLVMRealUNE, [TL_CMPF_UNO] = LLVMRealUNO,
};

static LLVMValueRef arith_op(Tr *t, TlOp *op) {
  LLVMBuilderRef b = t->b;
  TlType *rty = tl_op_num_results(op) ? tl_value_type(tl_op_result(op, 0)) : NULL;
  TlType *aty = tl_op_num_operands(op) ? tl_value_type(tl_op_operand(op, 0)) : NULL;
  LLVMTypeRef lr = rty ? ltype(t, rty) : NULL;
  if (rty && !lr)
    return fail_op(t, op, "this type has no register form on the GPU%s", "");
  if (aty && !ltype(t, aty))
    return fail_op(t, op, "the operand type has no register form on the GPU%s", "");
  LLVMValueRef x = tl_op_num_operands(op) > 0 ? operand(t, op, 0) : NULL;
  LLVMValueRef y = tl_op_num_operands(op) > 1 ? operand(t, op, 1) : NULL;
  bool sgn = aty && is_signed(aty);
  TlOpId id = tl_op_id(op);
  switch (id) {
  case TL_OP_ARITH_CONSTANT:
    return arith_constant(t, op);
  case TL_OP_ARITH_ADDI:
    return LLVMBuildAdd(b, x, y, "");
  case TL_OP_ARITH_SUBI:
    return LLVMBuildSub(b, x, y, "");
  case TL_OP_ARITH_MULI:
    return LLVMBuildMul(b, x, y, "");
  case TL_OP_ARITH_DIVI:
    return sgn ? LLVMBuildSDiv(b, x, y, "") : LLVMBuildUDiv(b, x, y, "");
  case TL_OP_ARITH_REMI:
    return sgn ? LLVMBuildSRem(b, x, y, "") : LLVMBuildURem(b, x, y, "");
  case TL_OP_ARITH_CEILDIVI: {
    /* q = x / y; q + (r != 0 && (r > 0) == (y > 0)) for signed; q + (r != 0)
     * for unsigned. */
    LLVMValueRef q = sgn ? LLVMBuildSDiv(b, x, y, "") : LLVMBuildUDiv(b, x, y, "");
    LLVMValueRef r = sgn ? LLVMBuildSRem(b, x, y, "") : LLVMBuildURem(b, x, y, "");
    LLVMValueRef zero = LLVMConstInt(lr, 0, 0);
    LLVMValueRef nz = LLVMBuildICmp(b, LLVMIntNE, r, zero, "");
    if (sgn) {
      LLVMValueRef rp = LLVMBuildICmp(b, LLVMIntSGT, r, zero, "");
      LLVMValueRef yp = LLVMBuildICmp(b, LLVMIntSGT, y, zero, "");
      nz = LLVMBuildAnd(b, nz, LLVMBuildICmp(b, LLVMIntEQ, rp, yp, ""), "");
    }
    return LLVMBuildAdd(b, q, LLVMBuildZExt(b, nz, lr, ""), "");
  }
  case TL_OP_ARITH_ANDI:
    return LLVMBuildAnd(b, x, y, "");
  case TL_OP_ARITH_ORI:
    return LLVMBuildOr(b, x, y, "");
  case TL_OP_ARITH_XORI:
    return LLVMBuildXor(b, x, y, "");
  case TL_OP_ARITH_SHLI:
    return LLVMBuildShl(b, x, y, "");
  case TL_OP_ARITH_SHRI:
    return sgn ? LLVMBuildAShr(b, x, y, "") : LLVMBuildLShr(b, x, y, "");
  case TL_OP_ARITH_MINI:
  case TL_OP_ARITH_MAXI: {
    LLVMTypeRef ov[1] = {lr};
    LLVMValueRef args[2] = {x, y};
    const char *name = id == TL_OP_ARITH_MINI
                           ? (sgn ? "llvm.smin" : "llvm.umin")
                           : (sgn ? "llvm.smax" : "llvm.umax");
    return call(t, op, name, ov, 1, args, 2);
  }
  case TL_OP_ARITH_ADDF:
    return LLVMBuildFAdd(b, x, y, "");
  case TL_OP_ARITH_SUBF:
    return LLVMBuildFSub(b, x, y, "");
  case TL_OP_ARITH_MULF:
    return LLVMBuildFMul(b, x, y, "");
  case TL_OP_ARITH_DIVF:
    return LLVMBuildFDiv(b, x, y, "");
  case TL_OP_ARITH_MINF:
  case TL_OP_ARITH_MAXF: {
    LLVMTypeRef ov[1] = {lr};
    LLVMValueRef args[2] = {x, y};
    return call(t, op, id == TL_OP_ARITH_MINF ? "llvm.minimum" : "llvm.maximum",
                ov, 1, args, 2);
  }
  case TL_OP_ARITH_NEGF:
    return LLVMBuildFNeg(b, x, "");
  case TL_OP_ARITH_ABSF: {
    LLVMTypeRef ov[1] = {lr};
    return call(t, op, "llvm.fabs", ov, 1, &x, 1);
  }
  case TL_OP_ARITH_CMPI: {
    TlCmpiPredicate p = tl_cmpi_predicate_of(op);
    if (p == TL_CMPI_UNKNOWN)
      return fail_op(t, op, "unknown predicate%s", "");
    return LLVMBuildICmp(b, sgn ? cmpi_signed[p] : cmpi_unsigned[p], x, y, "");
  }
  case TL_OP_ARITH_CMPF: {
    TlCmpfPredicate p = tl_cmpf_predicate_of(op);
    if (p == TL_CMPF_UNKNOWN)
      return fail_op(t, op, "unknown predicate%s", "");
    return LLVMBuildFCmp(b, cmpf_llvm[p], x, y, "");
  }
  case TL_OP_ARITH_SELECT:
    return LLVMBuildSelect(b, x, y, operand(t, op, 2), "");
  case TL_OP_ARITH_EXTI:
    return sgn ? LLVMBuildSExt(b, x, lr, "") : LLVMBuildZExt(b, x, lr, "");
  case TL_OP_ARITH_TRUNCI:
    return LLVMBuildTrunc(b, x, lr, "");
  case TL_OP_ARITH_ITOFP:
    return sgn ? LLVMBuildSIToFP(b, x, lr, "") : LLVMBuildUIToFP(b, x, lr, "");
  case TL_OP_ARITH_FPTOI:
    return fptoi_sat(t, op, x, rty, lr);
  case TL_OP_ARITH_EXTF:
    return LLVMBuildFPExt(b, x, lr, "");
  case TL_OP_ARITH_TRUNCF:
    return LLVMBuildFPTrunc(b, x, lr, "");
  case TL_OP_ARITH_BITCAST:
    return LLVMBuildBitCast(b, x, lr, "");
  default:
    return fail_op(t, op, "no translation for %s", tl_op_name(op));
  }
}

/*===--- simt ------------------------------------------------------------===*/

static const char *str_attr(const TlOp *op, const char *name) {
  TlAttr *a = tl_op_attr(op, name);
  return a ? tl_attr_string_value(a, NULL) : NULL;
}

static int64_t int_attr(const TlOp *op, const char *name, int64_t dflt) {
  TlAttr *a = tl_op_attr(op, name);
  return a && tl_attr_kind(a) == TL_ATTR_INT ? tl_attr_int_value(a) : dflt;
}

/* simt.cvt_e4m3x2: cvt.rn.f16x2.e4m3x2 where the target has it (PTX ISA
 * 7.8 on sm_90, and the NVPTX back end asks PTX ISA 8.1 of sm_89);
 * elsewhere the same exact conversion in integer and
 * f16x2 ops: each byte's sign to bit 15 of its half and E:M below it
 * (bits 7-13), read as an f16 2^-8 times the e4m3 value (subnormals
 * included), times 256; the code S.1111.111 is NaN (0x7fff). */
static LLVMValueRef cvt_e4m3x2(Tr *t, TlOp *op, LLVMTypeRef lr) {
  LLVMBuilderRef b = t->b;
  LLVMTypeRef i16 = LLVMInt16TypeInContext(t->lc);
  LLVMValueRef w = coerce(t, operand(t, op, 0), i32t(t));
  if (int_attr(op, "half", 0))
    w = LLVMBuildLShr(b, w, LLVMConstInt(i32t(t), 16, 0), "");
  if ((t->arch->sm >= 90 && t->ptx >= 78) || (t->arch->sm >= 89 && t->ptx >= 81)) {
    LLVMValueRef h = LLVMBuildTrunc(b, w, i16, "");
    LLVMValueRef r = call(t, op, "llvm.nvvm.e4m3x2.to.f16x2.rn", NULL, 0, &h, 1);
    return r ? coerce(t, r, lr) : NULL;
  }
  LLVMTypeRef v2i16 = LLVMVectorType(i16, 2);
  LLVMValueRef k = LLVMConstInt(i32t(t), 0xff, 0);
  /* the two bytes at bits 0-7 and 16-23 */
  LLVMValueRef x = LLVMBuildOr(
      b, LLVMBuildAnd(b, w, k, ""),
      LLVMBuildShl(b, LLVMBuildAnd(b, w, LLVMConstInt(i32t(t), 0xff00, 0), ""),
                   LLVMConstInt(i32t(t), 8, 0), ""),
      "");
  LLVMValueRef em = LLVMBuildAnd(b, x, LLVMConstInt(i32t(t), 0x007f007f, 0), "");
  LLVMValueRef s = LLVMBuildAnd(b, x, LLVMConstInt(i32t(t), 0x00800080, 0), "");
  LLVMValueRef bits = LLVMBuildOr(b, LLVMBuildShl(b, s, LLVMConstInt(i32t(t), 8, 0), ""),
                                  LLVMBuildShl(b, em, LLVMConstInt(i32t(t), 7, 0), ""), "");
  LLVMValueRef v = LLVMBuildBitCast(b, bits, lr, "");
  LLVMValueRef h256 = LLVMConstReal(LLVMHalfTypeInContext(t->lc), 256.0);
  LLVMValueRef two[2] = {h256, h256};
  v = LLVMBuildFMul(b, v, LLVMConstVector(two, 2), "");
  LLVMValueRef n7f = LLVMConstInt(i16, 0x7f, 0), nan = LLVMConstInt(i16, 0x7fff, 0);
  LLVMValueRef n7f2[2] = {n7f, n7f}, nan2[2] = {nan, nan};
  LLVMValueRef isnan = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildBitCast(b, em, v2i16, ""),
                                     LLVMConstVector(n7f2, 2), "");
  return LLVMBuildSelect(b, isnan, LLVMBuildBitCast(b, LLVMConstVector(nan2, 2), lr, ""),
                         v, "");
}

static LLVMValueRef sreg(Tr *t, TlOp *op, const char *reg, const char *dim) {
  char name[64];
  snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s%s%s", reg, dim ? "." : "",
           dim ? dim : "");
  return call(t, op, name, NULL, 0, NULL, 0);
}

static LLVMValueRef smem_base(Tr *t) {
  if (!t->smem) {
    /* `.extern .shared .align 1024 .b8 tl_smem[]`: the planner places a
     * swizzled tile at a multiple of its swizzle block (at most 1024
     * bytes), which the XOR patterns of ldmatrix and wgmma operands need
     * in absolute addresses. */
    LLVMTypeRef ty = LLVMArrayType2(LLVMInt8TypeInContext(t->lc), 0);
    t->smem = LLVMAddGlobalInAddressSpace(t->mod, ty, "tl_smem", 3);
    LLVMSetLinkage(t->smem, LLVMExternalLinkage);
    LLVMSetAlignment(t->smem, 1024);
  }
  return t->smem;
}

static unsigned type_bits(Tr *t, const TlType *ty) { return tl_simt_value_bits(ty); }

/* simt.load {ordering, scope}: an LLVM atomic load of the value's bits as
 * an integer (NVPTX gives ld.relaxed.SCOPE or ld.acquire.SCOPE), then
 * reinterpreted. */
static LLVMValueRef ordered_load(Tr *t, TlOp *op, LLVMValueRef ptr,
                                 unsigned bits) {
  TlMemOrder o = tl_mem_order_of(op, TL_ORDER_RELAXED);
  const char *s = tl_mem_scope_llvm(tl_mem_scope_of(op, TL_SCOPE_GPU));
  LLVMTypeRef it = LLVMIntTypeInContext(t->lc, bits);
  LLVMValueRef v = LLVMBuildLoad2(t->b, it, ptr, "");
  LLVMSetAlignment(v, bits / 8);
  LLVMSetOrdering(v, o == TL_ORDER_ACQUIRE ? LLVMAtomicOrderingAcquire
                                           : LLVMAtomicOrderingMonotonic);
  LLVMSetAtomicSyncScopeID(v, LLVMGetSyncScopeID(t->lc, s, strlen(s)));
  return coerce(t, v, ltype(t, tl_value_type(tl_op_result(op, 0))));
}

static LLVMValueRef access(Tr *t, TlOp *op, bool load) {
  TlType *vty = load ? tl_value_type(tl_op_result(op, 0)) : tl_value_type(tl_op_operand(op, 0));
  LLVMValueRef ptr = operand(t, op, load ? 0 : 1);
  LLVMTypeRef lty = ltype(t, vty);
  unsigned bits = type_bits(t, vty);
  unsigned align = (unsigned)int_attr(op, "align", bits / 8);
  const char *cache = str_attr(op, "cache");
  if (!lty)
    return fail_op(t, op, "the accessed type has no register form%s", "");
  if (load && tl_op_attr(op, "ordering"))
    return ordered_load(t, op, ptr, bits);
  if (!cache) {
    if (load) {
      LLVMValueRef v = LLVMBuildLoad2(t->b, lty, ptr, "");
      LLVMSetAlignment(v, align);
      return v;
    }
    LLVMValueRef s = LLVMBuildStore(t->b, operand(t, op, 0), ptr);
    LLVMSetAlignment(s, align);
    return s;
  }
  /* Cache hints have no LLVM form: inline PTX over 16- or 32-bit regs. */
  unsigned nregs = bits <= 32 ? 1 : bits / 32;
  unsigned rbits = bits < 32 ? 16 : 32;
  const char *suffix = bits == 8 ? "u8" : bits == 16 ? "u16" : "u32";
  char asmtext[160], cons[64];
  const char *vec = nregs == 2 ? ".v2" : nregs == 4 ? ".v4" : "";
  LLVMTypeRef rt = LLVMIntTypeInContext(t->lc, rbits);
  char rc = rbits == 16 ? 'h' : 'r';
  if (load) {
    if (nregs == 1)
      snprintf(asmtext, sizeof asmtext, "ld.global.%s.%s $0, [$1];", cache, suffix);
    else if (nregs == 2)
      snprintf(asmtext, sizeof asmtext, "ld.global.%s%s.%s {$0, $1}, [$2];", cache, vec, suffix);
    else
      snprintf(asmtext, sizeof asmtext, "ld.global.%s%s.%s {$0, $1, $2, $3}, [$4];", cache,
               vec, suffix);
    size_t k = 0;
    for (unsigned i = 0; i < nregs; i++)
      k += (size_t)snprintf(cons + k, sizeof cons - k, "=%c,", rc);
    snprintf(cons + k, sizeof cons - k, "l");
    LLVMTypeRef elems[4] = {rt, rt, rt, rt};
    LLVMTypeRef retty = nregs == 1 ? rt : LLVMStructTypeInContext(t->lc, elems, nregs, 0);
    LLVMTypeRef pty = LLVMTypeOf(ptr);
    LLVMTypeRef fty = LLVMFunctionType(retty, &pty, 1, 0);
    LLVMValueRef ia = LLVMGetInlineAsm(fty, asmtext, strlen(asmtext), cons, strlen(cons), 1, 0,
                                       LLVMInlineAsmDialectATT, 0);
    LLVMValueRef r = LLVMBuildCall2(t->b, fty, ia, &ptr, 1, "");
    LLVMValueRef whole;
    if (nregs == 1) {
      whole = bits < 16 ? LLVMBuildTrunc(t->b, r, LLVMIntTypeInContext(t->lc, bits), "") : r;
    } else {
      LLVMTypeRef vt = LLVMVectorType(rt, nregs);
      whole = LLVMGetUndef(vt);
      for (unsigned i = 0; i < nregs; i++)
        whole = LLVMBuildInsertElement(t->b, whole, LLVMBuildExtractValue(t->b, r, i, ""),
                                       LLVMConstInt(i32t(t), i, 0), "");
    }
    return coerce(t, whole, lty);
  }
  LLVMValueRef v = operand(t, op, 0);
  LLVMValueRef args[5];
  LLVMTypeRef tys[5];
  args[0] = ptr;
  tys[0] = LLVMTypeOf(ptr);
  if (nregs == 1) {
    LLVMValueRef iv = coerce(t, v, LLVMIntTypeInContext(t->lc, bits));
    args[1] = bits < 16 ? LLVMBuildZExt(t->b, iv, rt, "") : iv;
    tys[1] = rt;
    snprintf(asmtext, sizeof asmtext, "st.global.%s.%s [$0], $1;", cache, suffix);
    snprintf(cons, sizeof cons, "l,%c", rc);
  } else {
    LLVMValueRef vv = coerce(t, v, LLVMVectorType(rt, nregs));
    for (unsigned i = 0; i < nregs; i++) {
      args[1 + i] = LLVMBuildExtractElement(t->b, vv, LLVMConstInt(i32t(t), i, 0), "");
      tys[1 + i] = rt;
    }
    if (nregs == 2)
      snprintf(asmtext, sizeof asmtext, "st.global.%s.v2.u32 [$0], {$1, $2};", cache);
    else
      snprintf(asmtext, sizeof asmtext, "st.global.%s.v4.u32 [$0], {$1, $2, $3, $4};", cache);
    snprintf(cons, sizeof cons, nregs == 2 ? "l,r,r" : "l,r,r,r,r");
  }
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(t->lc), tys, 1 + nregs, 0);
  LLVMValueRef ia = LLVMGetInlineAsm(fty, asmtext, strlen(asmtext), cons, strlen(cons), 1, 0,
                                     LLVMInlineAsmDialectATT, 0);
  return LLVMBuildCall2(t->b, fty, ia, args, 1 + nregs, "");
}

/*===--- Atomics and fences ----------------------------------------------===*/

/* The PTX type of an atom's value: s32/u32/f32, the f16 forms with .noftz
 * (the only ones PTX has), b32 for exch and cas. */
static const char *atom_type(TlType *ty, TlAtomicKind k) {
  if (tl_simt_is_vec(ty))
    return "noftz.f16x2";
  if (tl_type_is_float(ty))
    return k == TL_ATOMIC_EXCH          ? "b32"
           : tl_type_bitwidth(ty) == 16 ? "noftz.f16"
                                        : "f32";
  if (k == TL_ATOMIC_EXCH)
    return "b32";
  return tl_type_int_signed(ty) ? "s32" : "u32";
}

/* simt.atom and simt.atom_cas as inline PTX, atom.SEM.SCOPE.global...:
 * LLVM 22's NVPTX back end drops the ordering and scope of atomicrmw
 * (acq_rel and system scope come out as a plain, gpu-scope atom) and
 * expands an f16x2 fadd into a cas loop, so the instruction is written
 * out. The value travels in a 16 or 32-bit register ("h", "r"); the
 * memory clobber keeps LLVM from moving other accesses across it. */
static LLVMValueRef atom_op(Tr *t, TlOp *op) {
  bool cas = tl_op_id(op) == TL_OP_SIMT_ATOM_CAS;
  TlType *vty = tl_value_type(tl_op_result(op, 0));
  unsigned bits = tl_simt_value_bits(vty);
  TlAtomicKind k = cas ? TL_ATOMIC_EXCH : tl_atomic_kind_of(op);
  const char *sem = tl_mem_order_name(tl_mem_order_of(op, TL_ORDER_RELAXED));
  const char *scope = tl_mem_scope_ptx(tl_mem_scope_of(op, TL_SCOPE_GPU));
  char text[128], cons[48];
  char rc = bits == 16 ? 'h' : 'r';
  if (cas) {
    snprintf(text, sizeof text, "atom.%s.%s.global.cas.b32 $0, [$1], $2, $3;",
             sem, scope);
    snprintf(cons, sizeof cons, "=r,l,r,r,~{memory}");
  } else {
    snprintf(text, sizeof text, "atom.%s.%s.global.%s.%s $0, [$1], $2;", sem,
             scope, tl_atomic_kind_ptx(k), atom_type(vty, k));
    snprintf(cons, sizeof cons, "=%c,l,%c,~{memory}", rc, rc);
  }
  LLVMTypeRef it = LLVMIntTypeInContext(t->lc, bits);
  LLVMValueRef args[3] = {operand(t, op, 0), NULL, NULL};
  LLVMTypeRef tys[3] = {LLVMTypeOf(args[0]), it, it};
  unsigned n = cas ? 3 : 2;
  for (unsigned i = 1; i < n; i++)
    args[i] = coerce(t, operand(t, op, i), it);
  LLVMTypeRef fty = LLVMFunctionType(it, tys, n, 0);
  LLVMValueRef ia =
      LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), 1, 0,
                       LLVMInlineAsmDialectATT, 0);
  LLVMValueRef r = LLVMBuildCall2(t->b, fty, ia, args, n, "");
  return coerce(t, r, ltype(t, vty));
}

/* simt.fence: an LLVM fence at the scope's sync scope (NVPTX emits
 * fence.acq_rel.SCOPE for acquire, release and acq_rel alike). */
static LLVMValueRef fence_op(Tr *t, TlOp *op) {
  static const LLVMAtomicOrdering llvm_order[TL_ORDER_COUNT] = {
      [TL_ORDER_RELAXED] = LLVMAtomicOrderingMonotonic,
      [TL_ORDER_ACQUIRE] = LLVMAtomicOrderingAcquire,
      [TL_ORDER_RELEASE] = LLVMAtomicOrderingRelease,
      [TL_ORDER_ACQ_REL] = LLVMAtomicOrderingAcquireRelease};
  const char *s = tl_mem_scope_llvm(tl_mem_scope_of(op, TL_SCOPE_GPU));
  unsigned id = LLVMGetSyncScopeID(t->lc, s, strlen(s));
  return LLVMBuildFenceSyncScope(
      t->b, llvm_order[tl_mem_order_of(op, TL_ORDER_ACQ_REL)], id, "");
}

/* The intrinsic names of verified simt.mma, simt.cp_async and
 * simt.ldmatrix ops: their rows of the form table (include/tl/forms.def;
 * the verifier accepts no other forms). .satfinite follows .row.col. */
static void mma_name(const TlOp *op, char *buf, size_t n) {
  const TlMmaForm *f = tl_simt_mma_form(op);
  tl_assert(f);
  const char *rc = strstr(f->intrinsic, ".row.col");
  if (tl_op_attr(op, "satfinite") && rc)
    snprintf(buf, n, "%.*s.satfinite%s", (int)(rc + 8 - f->intrinsic),
             f->intrinsic, rc + 8);
  else
    snprintf(buf, n, "%s", f->intrinsic);
}

/* With a source size operand, the zero-filling form. */
static void cp_async_name(const TlOp *op, char *buf, size_t n) {
  const TlCpAsyncForm *f = tl_simt_cp_async_form(op);
  tl_assert(f);
  snprintf(buf, n, "%s",
           tl_op_num_operands(op) == 3 ? f->zfill_intrinsic : f->intrinsic);
}

static void ldmatrix_name(const TlOp *op, char *buf, size_t n) {
  const TlLdmatrixForm *f = tl_simt_ldmatrix_form(op);
  tl_assert(f);
  snprintf(buf, n, "%s", f->intrinsic);
}

/* Calls an intrinsic whose parameters are the scalar elements of our
 * vector operands (in order) and whose result is a struct of scalars that
 * becomes our vector result; each element is reinterpreted to the type the
 * intrinsic wants. */
static LLVMValueRef call_unpacked(Tr *t, TlOp *op, const char *name,
                                  LLVMTypeRef *ov, unsigned nov) {
  LLVMTypeRef fty;
  LLVMValueRef f = intrinsic(t, op, name, ov, nov, &fty);
  if (!f)
    return NULL;
  unsigned np = LLVMCountParamTypes(fty);
  LLVMTypeRef *pt = tl_xmalloc(sizeof *pt * (np ? np : 1));
  LLVMGetParamTypes(fty, pt);
  LLVMValueRef *args = tl_xmalloc(sizeof *args * (np ? np : 1));
  unsigned k = 0;
  for (unsigned i = 0; i < tl_op_num_operands(op); i++) {
    LLVMValueRef v = operand(t, op, i);
    TlType *ty = tl_value_type(tl_op_operand(op, i));
    unsigned ne = tl_simt_is_vec(ty) ? tl_simt_vec_size(ty) : 1;
    for (unsigned e = 0; e < ne && k < np; e++, k++) {
      LLVMValueRef x = tl_simt_is_vec(ty)
                           ? LLVMBuildExtractElement(t->b, v, LLVMConstInt(i32t(t), e, 0), "")
                           : v;
      args[k] = coerce(t, x, pt[k]);
    }
  }
  LLVMValueRef r = NULL;
  if (k != np) {
    fail_op(t, op, "internal error: operand count does not match %s", name);
  } else {
    LLVMValueRef s = LLVMBuildCall2(t->b, fty, f, args, np, "");
    TlType *rty = tl_value_type(tl_op_result(op, 0));
    LLVMTypeRef lr = ltype(t, rty);
    LLVMTypeRef le = LLVMGetElementType(lr);
    unsigned n = tl_simt_vec_size(rty);
    r = LLVMGetUndef(lr);
    for (unsigned i = 0; i < n; i++) {
      LLVMValueRef x = LLVMGetTypeKind(LLVMTypeOf(s)) == LLVMStructTypeKind
                           ? LLVMBuildExtractValue(t->b, s, i, "")
                           : s;
      r = LLVMBuildInsertElement(t->b, r, coerce(t, x, le), LLVMConstInt(i32t(t), i, 0), "");
    }
  }
  tl_free(pt);
  tl_free(args);
  return r;
}

static LLVMValueRef inline_lop3(Tr *t, TlOp *op) {
  char text[64];
  snprintf(text, sizeof text, "lop3.b32 $0, $1, $2, $3, %lld;",
           (long long)int_attr(op, "lut", 0));
  LLVMTypeRef i32 = i32t(t);
  LLVMTypeRef ps[3] = {i32, i32, i32};
  LLVMTypeRef fty = LLVMFunctionType(i32, ps, 3, 0);
  LLVMValueRef ia = LLVMGetInlineAsm(fty, text, strlen(text), "=r,r,r,r", 8, 0, 0,
                                     LLVMInlineAsmDialectATT, 0);
  LLVMValueRef args[3] = {operand(t, op, 0), operand(t, op, 1), operand(t, op, 2)};
  return LLVMBuildCall2(t->b, fty, ia, args, 3, "");
}

/*===--- Warpgroup mma ---------------------------------------------------===*/

/* simt.wgmma_desc: the descriptor's fields with integer ops, so LLVM can
 * fold the constant ones: bits 0-13 the shared address's bits 4-17,
 * 16-29 and 32-45 the byte offsets over 16, 62-63 the swizzle mode. The
 * dynamic shared memory is aligned to 1024 bytes (smem_base), the 128-byte
 * swizzle's repeat, so the VM's addresses (from 0) and the GPU's agree on
 * the swizzle phase. */
static LLVMValueRef wgmma_desc(Tr *t, TlOp *op) {
  LLVMBuilderRef b = t->b;
  LLVMTypeRef i64 = LLVMInt64TypeInContext(t->lc);
  LLVMValueRef addr = LLVMBuildPtrToInt(b, operand(t, op, 0), i64, "");
  addr = LLVMBuildAnd(b, addr, LLVMConstInt(i64, 0x3ffff, 0), "");
  addr = LLVMBuildLShr(b, addr, LLVMConstInt(i64, 4, 0), "");
  uint64_t lbo = (uint64_t)int_attr(op, "lbo", 16) >> 4,
           sbo = (uint64_t)int_attr(op, "sbo", 0) >> 4,
           mode = (uint64_t)tl_simt_wgmma_swizzle_code(str_attr(op, "swizzle"));
  uint64_t fields = lbo << 16 | sbo << 32 | mode << 62;
  return LLVMBuildOr(b, addr, LLVMConstInt(i64, fields, 0), "");
}

/* simt.wgmma: LLVM 22 has no wgmma.mma_async intrinsic, so inline PTX:
 *   { .reg .pred p; setp.ne.b32 p, $S, 0;
 *     wgmma.mma_async.sync.aligned.m64nNkK.D.A.B {$0..$R-1}, A, $B, p
 *       [, 1, 1 [, tA], tB]; }
 * with the R = N/2 accumulator registers as outputs ("=f" or "=r") tied
 * to inputs holding C (so D overwrites C in place, as the instruction
 * does), A as "l" (descriptor) or four "r", B as "l", scale-d as an "r"
 * the asm turns into a predicate. The asm has side effects: it must stay
 * between the fence and the commit that the program put around it. */
static LLVMValueRef wgmma_op(Tr *t, TlOp *op) {
  const TlWgmmaForm *f = tl_simt_wgmma_form(op);
  tl_assert(f);
  LLVMBuilderRef b = t->b;
  LLVMTypeRef i32 = i32t(t), i64 = LLVMInt64TypeInContext(t->lc);
  bool fl = !strcmp(f->acc_type, "f32");
  LLVMTypeRef et = fl ? LLVMFloatTypeInContext(t->lc) : i32;
  unsigned tiles = tl_op_num_results(op), R = 4 * tiles;
  bool a_regs = tl_simt_is_vec(tl_value_type(tl_op_operand(op, 0)));
  unsigned na = a_regs ? f->a_regs : 1;
  bool pred = tl_op_num_operands(op) == tiles + 3;
  const char *am = str_attr(op, "a_major"), *bm = str_attr(op, "b_major");
  bool ta = am && !strcmp(am, "mn"), tb = bm && !strcmp(bm, "mn");
  /* Operands: R tied accumulators, A (na), B, scale-d. */
  unsigned nin = R + na + 2;
  LLVMTypeRef *pt = tl_xmalloc(sizeof *pt * nin);
  LLVMValueRef *args = tl_xmalloc(sizeof *args * nin);
  LLVMTypeRef *rts = tl_xmalloc(sizeof *rts * R);
  TlStr text = {0}, cons = {0};
  unsigned k = 0;
  for (unsigned i = 0; i < tiles; i++) {
    LLVMValueRef c = operand(t, op, 2 + i);
    for (unsigned e = 0; e < 4; e++, k++) {
      args[k] = LLVMBuildExtractElement(b, c, LLVMConstInt(i32, e, 0), "");
      pt[k] = et;
      rts[k] = et;
    }
  }
  LLVMValueRef a = operand(t, op, 0);
  for (unsigned e = 0; e < na; e++, k++) {
    args[k] =
        a_regs ? LLVMBuildExtractElement(b, a, LLVMConstInt(i32, e, 0), "") : a;
    pt[k] = a_regs ? i32 : i64;
  }
  args[k] = operand(t, op, 1);
  pt[k++] = i64;
  args[k] = pred ? LLVMBuildZExt(b, operand(t, op, tiles + 2), i32, "")
                 : LLVMConstInt(
                       i32, (unsigned long long)int_attr(op, "scale_d", 1), 0);
  pt[k++] = i32;
  tl_str_printf(&text, "{\n.reg .pred p;\nsetp.ne.b32 p, $%u, 0;\n",
                2 * R + na + 1);
  tl_str_printf(&text, "wgmma.mma_async.sync.aligned.m64n%uk%u.%s.%s.%s {",
                8 * tiles, f->k, f->acc_type, f->a_type, f->b_type);
  for (unsigned i = 0; i < R; i++)
    tl_str_printf(&text, "%s$%u", i ? ", " : "", i);
  tl_str_printf(&text, "}, ");
  if (a_regs)
    tl_str_printf(&text, "{$%u, $%u, $%u, $%u}", 2 * R, 2 * R + 1, 2 * R + 2,
                  2 * R + 3);
  else
    tl_str_printf(&text, "$%u", 2 * R);
  tl_str_printf(&text, ", $%u, p", 2 * R + na);
  if (f->trans) {
    tl_str_printf(&text, ", 1, 1");
    if (!a_regs)
      tl_str_printf(&text, ", %d", ta);
    tl_str_printf(&text, ", %d", tb);
  }
  tl_str_printf(&text, ";\n}");
  for (unsigned i = 0; i < R; i++)
    tl_str_printf(&cons, "%s=%s", i ? "," : "", fl ? "f" : "r");
  for (unsigned i = 0; i < R; i++)
    tl_str_printf(&cons, ",%u", i);
  for (unsigned e = 0; e < na; e++)
    tl_str_printf(&cons, ",%s", a_regs ? "r" : "l");
  tl_str_printf(&cons, ",l,r");
  LLVMTypeRef st = LLVMStructTypeInContext(t->lc, rts, R, 0);
  LLVMTypeRef fty = LLVMFunctionType(st, pt, nin, 0);
  LLVMValueRef ia = LLVMGetInlineAsm(fty, (char *)tl_str_cstr(&text), text.len,
                                     (char *)tl_str_cstr(&cons), cons.len, 1, 0,
                                     LLVMInlineAsmDialectATT, 0);
  LLVMValueRef r = LLVMBuildCall2(b, fty, ia, args, nin, "");
  LLVMValueRef first = NULL;
  for (unsigned i = 0; i < tiles; i++) {
    TlValue *res = tl_op_result(op, i);
    LLVMValueRef v = LLVMGetUndef(ltype(t, tl_value_type(res)));
    for (unsigned e = 0; e < 4; e++)
      v = LLVMBuildInsertElement(b, v,
                                 LLVMBuildExtractValue(b, r, 4 * i + e, ""),
                                 LLVMConstInt(i32, e, 0), "");
    map_put(&t->map, res, v);
    if (!i)
      first = v;
  }
  tl_str_free(&text);
  tl_str_free(&cons);
  tl_free(pt);
  tl_free(args);
  tl_free(rts);
  return first;
}

/* PTX's name of a hardware scalar type (f16, bf16, f32, f64, sN, uN). */
static void ptx_type(const TlType *ty, char *buf, size_t n) {
  if (tl_type_is_float(ty)) {
    unsigned e = tl_type_float_exp(ty), m = tl_type_float_man(ty);
    snprintf(buf, n, "%s", e == 8 && m == 7 ? "bf16" : e == 5 ? "f16" : e == 8 ? "f32" : "f64");
  } else {
    snprintf(buf, n, "%c%u", tl_type_int_signed(ty) ? 's' : 'u', tl_type_int_width(ty));
  }
}

/* The inline-asm register class and LLVM type carrying a PTX scalar: 8- and
 * 16-bit values (and f16/bf16 bits) travel in 16-bit registers. */
static char asm_reg(Tr *t, const TlType *ty, LLVMTypeRef *carrier) {
  unsigned w = tl_type_bitwidth(ty);
  if (tl_type_is_float(ty) && w >= 32) {
    *carrier = w == 32 ? LLVMFloatTypeInContext(t->lc) : LLVMDoubleTypeInContext(t->lc);
    return w == 32 ? 'f' : 'd';
  }
  *carrier = LLVMIntTypeInContext(t->lc, w <= 16 ? 16 : w);
  return w <= 16 ? 'h' : w == 32 ? 'r' : 'l';
}

/* simt.cvt: LLVM's own conversions where their semantics are exactly
 * PTX's (exact widening, round-to-nearest narrowing and int-to-float,
 * truncating saturating float-to-int, plain int resizing); inline
 * `cvt.R[.sat].T.A` for every other rounding and for .sat. */
static LLVMValueRef cvt(Tr *t, TlOp *op) {
  TlType *aty = tl_value_type(tl_op_operand(op, 0)), *rty = tl_value_type(tl_op_result(op, 0));
  LLVMValueRef x = operand(t, op, 0);
  LLVMTypeRef lr = ltype(t, rty);
  LLVMBuilderRef b = t->b;
  const char *rnd = str_attr(op, "rounding");
  bool sat = tl_op_attr(op, "sat") != NULL;
  bool af = tl_type_is_float(aty), rf = tl_type_is_float(rty);
  if (!sat) {
    if (af && rf && !rnd && tl_type_bitwidth(rty) > tl_type_bitwidth(aty))
      return LLVMBuildFPExt(b, x, lr, "");
    if (af && rf && rnd && !strcmp(rnd, "rn") && tl_type_bitwidth(rty) < tl_type_bitwidth(aty))
      return LLVMBuildFPTrunc(b, x, lr, "");
    if (!af && rf && rnd && !strcmp(rnd, "rn"))
      return is_signed(aty) ? LLVMBuildSIToFP(b, x, lr, "") : LLVMBuildUIToFP(b, x, lr, "");
    if (af && !rf && rnd && !strcmp(rnd, "rzi"))
      return fptoi_sat(t, op, x, rty, lr);
    if (!af && !rf && !rnd) {
      unsigned wa = tl_type_int_width(aty), wr = tl_type_int_width(rty);
      if (wr < wa)
        return LLVMBuildTrunc(b, x, lr, "");
      if (wr > wa)
        return is_signed(aty) ? LLVMBuildSExt(b, x, lr, "") : LLVMBuildZExt(b, x, lr, "");
      return x;
    }
  }
  char text[96], ta[8], tr[8], cons[8];
  ptx_type(aty, ta, sizeof ta);
  ptx_type(rty, tr, sizeof tr);
  snprintf(text, sizeof text, "cvt%s%s%s.%s.%s $0, $1;", rnd ? "." : "", rnd ? rnd : "",
           sat ? ".sat" : "", tr, ta);
  LLVMTypeRef ca, cr;
  char ra = asm_reg(t, aty, &ca), rr = asm_reg(t, rty, &cr);
  snprintf(cons, sizeof cons, "=%c,%c", rr, ra);
  /* Into the carrier: bits of f16/bf16, small ints extended by signedness. */
  LLVMValueRef in = x;
  if (af && tl_type_bitwidth(aty) == 16)
    in = LLVMBuildBitCast(b, x, ca, "");
  else if (!af && tl_type_int_width(aty) == 8)
    in = is_signed(aty) ? LLVMBuildSExt(b, x, ca, "") : LLVMBuildZExt(b, x, ca, "");
  LLVMTypeRef fty = LLVMFunctionType(cr, &ca, 1, 0);
  LLVMValueRef ia = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), 0, 0,
                                     LLVMInlineAsmDialectATT, 0);
  LLVMValueRef out = LLVMBuildCall2(b, fty, ia, &in, 1, "");
  if (rf && tl_type_bitwidth(rty) == 16)
    return LLVMBuildBitCast(b, out, lr, "");
  if (!rf && tl_type_int_width(rty) == 8)
    return LLVMBuildTrunc(b, out, lr, "");
  return out;
}

/* simt.printf: vprintf(format, arguments), the device printf the CUDA
 * driver provides (a real .extern .func, not an intrinsic): the format a
 * constant string in global memory, the arguments in a local buffer made
 * at the kernel's entry, each at its natural alignment, an f32 promoted to
 * double as C's variadic calls do. */
static LLVMValueRef printf_op(Tr *t, TlOp *op) {
  size_t len;
  const char *fmt = tl_attr_string_value(tl_op_attr(op, "format"), &len);
  LLVMContextRef lc = t->lc;
  LLVMBuilderRef b = t->b;
  LLVMValueRef str = LLVMConstStringInContext2(lc, fmt, len, 0);
  LLVMValueRef g = LLVMAddGlobalInAddressSpace(t->mod, LLVMTypeOf(str), "tl_fmt", 1);
  LLVMSetInitializer(g, str);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(lc, 0);
  unsigned n = tl_op_num_operands(op);
  LLVMTypeRef *fields = tl_xcalloc(n + 1, sizeof *fields);
  LLVMValueRef *vals = tl_xcalloc(n + 1, sizeof *vals);
  for (unsigned i = 0; i < n; i++) {
    vals[i] = operand(t, op, i);
    if (LLVMGetTypeKind(LLVMTypeOf(vals[i])) == LLVMFloatTypeKind)
      vals[i] = LLVMBuildFPExt(b, vals[i], LLVMDoubleTypeInContext(lc), "");
    fields[i] = LLVMTypeOf(vals[i]);
  }
  LLVMValueRef buf = LLVMConstNull(ptr);
  if (n) {
    LLVMTypeRef st = LLVMStructTypeInContext(lc, fields, n, 0);
    LLVMBuilderRef eb = LLVMCreateBuilderInContext(lc);
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(t->fn);
    LLVMValueRef first = LLVMGetFirstInstruction(entry);
    if (first)
      LLVMPositionBuilderBefore(eb, first);
    else
      LLVMPositionBuilderAtEnd(eb, entry);
    buf = LLVMBuildAlloca(eb, st, "printf_args");
    LLVMDisposeBuilder(eb);
    for (unsigned i = 0; i < n; i++)
      LLVMBuildStore(b, vals[i], LLVMBuildStructGEP2(b, st, buf, i, ""));
  }
  tl_free(fields);
  tl_free(vals);
  LLVMTypeRef params[2] = {ptr, ptr};
  LLVMTypeRef fty = LLVMFunctionType(LLVMInt32TypeInContext(lc), params, 2, 0);
  LLVMValueRef f = LLVMGetNamedFunction(t->mod, "vprintf");
  if (!f)
    f = LLVMAddFunction(t->mod, "vprintf", fty);
  LLVMValueRef args[2] = {LLVMBuildAddrSpaceCast(b, g, ptr, ""), buf};
  return LLVMBuildCall2(b, fty, f, args, 2, "");
}

/*===--- mbarrier and TMA ------------------------------------------------===*/

/* The mbarrier ops on a barrier in shared memory (the .shared::cta forms,
 * CTA scope); arrive's state result is unused (waits go by parity). */
static LLVMValueRef mbarrier_op(Tr *t, TlOp *op) {
  LLVMValueRef args[2] = {operand(t, op, 0),
                          tl_op_num_operands(op) > 1 ? operand(t, op, 1)
                                                     : NULL};
  switch (tl_op_id(op)) {
  case TL_OP_SIMT_MBARRIER_INIT:
    return call(t, op, "llvm.nvvm.mbarrier.init.shared", NULL, 0, args, 2);
  case TL_OP_SIMT_MBARRIER_ARRIVE:
    return call(t, op, "llvm.nvvm.mbarrier.arrive.shared", NULL, 0, args, 1);
  case TL_OP_SIMT_MBARRIER_ARRIVE_EXPECT_TX:
    return call(t, op, "llvm.nvvm.mbarrier.arrive.expect.tx.scope.cta.space.cta",
                NULL, 0, args, 2);
  case TL_OP_SIMT_MBARRIER_EXPECT_TX:
    return call(t, op, "llvm.nvvm.mbarrier.expect.tx.scope.cta.space.cta", NULL,
                0, args, 2);
  case TL_OP_SIMT_MBARRIER_TRY_WAIT:
    return call(t, op, "llvm.nvvm.mbarrier.try.wait.parity.scope.cta.space.cta",
                NULL, 0, args, 2);
  default:
    TL_UNREACHABLE("not an mbarrier op");
  }
}

/* cp.async.bulk.tensor.Nd...tile.mbarrier::complete_tx::bytes: the
 * intrinsic wants the destination as a shared::cluster address
 * (addrspace 7; a CTA's own shared window lies inside its cluster's), and
 * takes a CTA mask, a cache hint and a CTA group, all unused here (the
 * flags after them are 0). */
static LLVMValueRef tma_load_op(Tr *t, TlOp *op) {
  unsigned nc = tl_op_num_operands(op) - 3;
  char name[64];
  snprintf(name, sizeof name, "llvm.nvvm.cp.async.bulk.tensor.g2s.tile.%ud",
           nc);
  LLVMValueRef args[13];
  unsigned n = 0;
  args[n++] = LLVMBuildAddrSpaceCast(
      t->b, operand(t, op, 0), LLVMPointerTypeInContext(t->lc, 7), "");
  args[n++] = operand(t, op, 2);
  args[n++] = operand(t, op, 1);
  for (unsigned i = 0; i < nc; i++)
    args[n++] = operand(t, op, 3 + i);
  LLVMTypeRef i1 = LLVMInt1TypeInContext(t->lc);
  args[n++] = LLVMConstInt(LLVMInt16TypeInContext(t->lc), 0, 0);
  args[n++] = LLVMConstInt(LLVMInt64TypeInContext(t->lc), 0, 0);
  args[n++] = LLVMConstInt(i1, 0, 0);
  args[n++] = LLVMConstInt(i1, 0, 0);
  args[n++] = LLVMConstInt(i32t(t), 0, 0);
  return call(t, op, name, NULL, 0, args, n);
}

static LLVMValueRef simt_op(Tr *t, TlOp *op) {
  LLVMBuilderRef b = t->b;
  TlType *rty = tl_op_num_results(op) ? tl_value_type(tl_op_result(op, 0)) : NULL;
  LLVMTypeRef lr = rty ? ltype(t, rty) : NULL;
  switch (tl_op_id(op)) {
  case TL_OP_SIMT_THREAD_ID:
    return sreg(t, op, "tid", str_attr(op, "dim"));
  case TL_OP_SIMT_BLOCK_ID:
    return sreg(t, op, "ctaid", str_attr(op, "dim"));
  case TL_OP_SIMT_BLOCK_DIM:
    return sreg(t, op, "ntid", str_attr(op, "dim"));
  case TL_OP_SIMT_GRID_DIM:
    return sreg(t, op, "nctaid", str_attr(op, "dim"));
  case TL_OP_SIMT_LANE_ID:
    return sreg(t, op, "laneid", NULL);
  case TL_OP_SIMT_WARP_ID: {
    /* The linear thread index over 32 (%warpid is a physical slot that can
     * change under preemption): (tid.z * ntid.y + tid.y) * ntid.x + tid.x. */
    LLVMValueRef tx = sreg(t, op, "tid", "x"), ty = sreg(t, op, "tid", "y"),
                 tz = sreg(t, op, "tid", "z"), nx = sreg(t, op, "ntid", "x"),
                 ny = sreg(t, op, "ntid", "y");
    if (!tx || !ty || !tz || !nx || !ny)
      return NULL;
    LLVMValueRef lin = LLVMBuildAdd(b, LLVMBuildMul(b, tz, ny, ""), ty, "");
    lin = LLVMBuildAdd(b, LLVMBuildMul(b, lin, nx, ""), tx, "");
    return LLVMBuildLShr(b, lin, LLVMConstInt(i32t(t), 5, 0), "");
  }
  case TL_OP_SIMT_PTR_ADD: {
    LLVMValueRef off = operand(t, op, 1);
    return LLVMBuildGEP2(b, LLVMInt8TypeInContext(t->lc), operand(t, op, 0), &off, 1, "");
  }
  case TL_OP_SIMT_SMEM_BASE:
    return smem_base(t);
  case TL_OP_SIMT_LOAD:
    return access(t, op, true);
  case TL_OP_SIMT_STORE:
    return access(t, op, false);
  case TL_OP_SIMT_CP_ASYNC: {
    /* `l2_hint` is dropped: the .L2::cache_hint form of cp.async
     * (createpolicy + cp.async ... .L2::cache_hint) is miscompiled by
     * ptxas 13.0 for sm_90, whose LDGSTS then reads its cache policy from
     * an unwritten uniform register and traps (docs/simt.md); the hint
     * changes no result. */
    char name[80];
    bool zfill = tl_op_num_operands(op) == 3;
    cp_async_name(op, name, sizeof name);
    LLVMValueRef args[3] = {operand(t, op, 0), operand(t, op, 1),
                            zfill ? operand(t, op, 2) : NULL};
    return call(t, op, name, NULL, 0, args, zfill ? 3 : 2);
  }
  case TL_OP_SIMT_CP_ASYNC_COMMIT:
    return call(t, op, "llvm.nvvm.cp.async.commit.group", NULL, 0, NULL, 0);
  case TL_OP_SIMT_CP_ASYNC_WAIT: {
    LLVMValueRef k = LLVMConstInt(i32t(t), (unsigned long long)int_attr(op, "pending", 0), 0);
    return call(t, op, "llvm.nvvm.cp.async.wait.group", NULL, 0, &k, 1);
  }
  case TL_OP_SIMT_PRINTF:
    return printf_op(t, op);
  case TL_OP_SIMT_MBARRIER_INIT:
  case TL_OP_SIMT_MBARRIER_ARRIVE:
  case TL_OP_SIMT_MBARRIER_ARRIVE_EXPECT_TX:
  case TL_OP_SIMT_MBARRIER_EXPECT_TX:
  case TL_OP_SIMT_MBARRIER_TRY_WAIT:
    return mbarrier_op(t, op);
  case TL_OP_SIMT_FENCE_PROXY_ASYNC:
    return call(t, op, "llvm.nvvm.fence.proxy.async.shared_cta", NULL, 0, NULL,
                0);
  case TL_OP_SIMT_FENCE_MBARRIER_INIT:
    return call(t, op, "llvm.nvvm.fence.mbarrier_init.release.cluster", NULL, 0,
                NULL, 0);
  case TL_OP_SIMT_TMA_LOAD:
    return tma_load_op(t, op);
  case TL_OP_SIMT_ATOM:
  case TL_OP_SIMT_ATOM_CAS:
    return atom_op(t, op);
  case TL_OP_SIMT_FENCE:
    return fence_op(t, op);
  case TL_OP_SIMT_BARRIER: {
    LLVMValueRef args[2] = {
        LLVMConstInt(i32t(t), (unsigned long long)int_attr(op, "id", 0), 0),
        LLVMConstInt(i32t(t), (unsigned long long)int_attr(op, "threads", 0), 0)};
    if (tl_op_attr(op, "threads"))
      return call(t, op, "llvm.nvvm.barrier.cta.sync.aligned.count", NULL, 0, args, 2);
    return call(t, op, "llvm.nvvm.barrier.cta.sync.aligned.all", NULL, 0, args, 1);
  }
  /* ret from the kernel. The ops after it in its block (dead) go to a
   * block of their own with no predecessor, which LLVM removes. */
  case TL_OP_SIMT_EXIT:
    LLVMBuildRetVoid(b);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(t->lc, t->fn, "exit.dead"));
    return NULL;
  case TL_OP_SIMT_LDMATRIX: {
    char name[96];
    ldmatrix_name(op, name, sizeof name);
    LLVMTypeRef ov[1] = {LLVMTypeOf(operand(t, op, 0))};
    return call_unpacked(t, op, name, ov, 1);
  }
  case TL_OP_SIMT_MMA: {
    char name[96];
    mma_name(op, name, sizeof name);
    return call_unpacked(t, op, name, NULL, 0);
  }
  case TL_OP_SIMT_WGMMA:
    return wgmma_op(t, op);
  case TL_OP_SIMT_WGMMA_DESC:
    return wgmma_desc(t, op);
  case TL_OP_SIMT_WGMMA_FENCE:
    return call(t, op, "llvm.nvvm.wgmma.fence.sync.aligned", NULL, 0, NULL, 0);
  case TL_OP_SIMT_WGMMA_COMMIT:
    return call(t, op, "llvm.nvvm.wgmma.commit_group.sync.aligned", NULL, 0,
                NULL, 0);
  case TL_OP_SIMT_WGMMA_WAIT: {
    LLVMValueRef n = LLVMConstInt(LLVMInt64TypeInContext(t->lc),
                                  (unsigned long long)int_attr(op, "n", 0), 0);
    return call(t, op, "llvm.nvvm.wgmma.wait_group.sync.aligned", NULL, 0, &n,
                1);
  }
  case TL_OP_SIMT_SETMAXNREG: {
    /* The count is an immarg: ptxas takes only a constant. */
    char name[64];
    snprintf(name, sizeof name, "llvm.nvvm.setmaxnreg.%s.sync.aligned.u32",
             str_attr(op, "action"));
    unsigned long long count = (unsigned long long)int_attr(op, "count", 0);
    LLVMValueRef n = LLVMConstInt(i32t(t), count, 0);
    return call(t, op, name, NULL, 0, &n, 1);
  }
  case TL_OP_SIMT_SHFL: {
    const char *m = str_attr(op, "mode");
    char name[64];
    snprintf(name, sizeof name, "llvm.nvvm.shfl.sync.%s.i32", m);
    /* clamp: 0x1f for idx/xor/down (segment = whole warp), 0 for up. */
    unsigned clamp = !strcmp(m, "up") ? 0 : 0x1f;
    LLVMValueRef args[4] = {LLVMConstInt(i32t(t), 0xffffffffu, 0),
                            coerce(t, operand(t, op, 0), i32t(t)), operand(t, op, 1),
                            LLVMConstInt(i32t(t), clamp, 0)};
    LLVMValueRef r = call(t, op, name, NULL, 0, args, 4);
    return r ? coerce(t, r, lr) : NULL;
  }
  case TL_OP_SIMT_PRMT: {
    const char *m = str_attr(op, "mode");
    char name[32];
    snprintf(name, sizeof name, "llvm.nvvm.prmt%s%s", m ? "." : "", m ? m : "");
    /* The default, f4e and b4e modes permute the bytes of a and b; rc8,
     * ecl, ecr and rc16 read a and the selector only. */
    bool two = m && (!strcmp(m, "rc8") || !strcmp(m, "ecl") || !strcmp(m, "ecr") ||
                     !strcmp(m, "rc16"));
    LLVMValueRef args[3] = {operand(t, op, 0), operand(t, op, two ? 2 : 1),
                            operand(t, op, 2)};
    return call(t, op, name, NULL, 0, args, two ? 2 : 3);
  }
  case TL_OP_SIMT_LOP3:
    return inline_lop3(t, op);
  case TL_OP_SIMT_ADD2:
    return LLVMBuildFAdd(b, operand(t, op, 0), operand(t, op, 1), "");
  case TL_OP_SIMT_SUB2:
    return LLVMBuildFSub(b, operand(t, op, 0), operand(t, op, 1), "");
  case TL_OP_SIMT_MUL2:
    return LLVMBuildFMul(b, operand(t, op, 0), operand(t, op, 1), "");
  /* llvm.fma on <2 x half>/<2 x bfloat> or f32: fma.rn, one rounding */
  case TL_OP_SIMT_FMA2:
  case TL_OP_SIMT_FMA: {
    LLVMTypeRef ov[1] = {lr};
    LLVMValueRef args[3] = {operand(t, op, 0), operand(t, op, 1), operand(t, op, 2)};
    return call(t, op, "llvm.fma", ov, 1, args, 3);
  }
  /* llvm.maximumnum/minimumnum (IEEE 754-2019 maximumNumber: a NaN operand
   * yields the other, -0 below +0) is PTX's max/min rule; NVPTX selects
   * max.f32, max.f16, max.bf16, max.f16x2 and max.bf16x2 for it, and
   * LLVM's constant folding follows the same rule. */
  case TL_OP_SIMT_MAX:
  case TL_OP_SIMT_MIN: {
    LLVMTypeRef ov[1] = {lr};
    LLVMValueRef args[2] = {operand(t, op, 0), operand(t, op, 1)};
    return call(t, op,
                tl_op_id(op) == TL_OP_SIMT_MAX ? "llvm.maximumnum"
                                               : "llvm.minimumnum",
                ov, 1, args, 2);
  }
  /* The special functions: llvm.nvvm.ex2.approx is overloaded, the others
   * name their type. */
  case TL_OP_SIMT_MATH: {
    const char *fn = str_attr(op, "fn");
    LLVMTypeRef ov[1] = {lr};
    LLVMValueRef x = operand(t, op, 0);
    if (!strcmp(fn, "ex2.approx"))
      return call(t, op, "llvm.nvvm.ex2.approx", ov, 1, &x, 1);
    return call(t, op,
                !strcmp(fn, "lg2.approx")     ? "llvm.nvvm.lg2.approx.f"
                : !strcmp(fn, "rsqrt.approx") ? "llvm.nvvm.rsqrt.approx.f"
                                              : "llvm.nvvm.sqrt.rn.f",
                NULL, 0, &x, 1);
  }
  case TL_OP_SIMT_CVT:
    return cvt(t, op);
  case TL_OP_SIMT_CVT_PACK: {
    const char *rnd = str_attr(op, "rounding");
    if (rnd && !strcmp(rnd, "rz")) {
      /* llvm.nvvm.ff2{f16,bf16}x2.rz(a, b) puts a in the upper half. */
      bool bf = tl_simt_vec_elem(rty) != tl_type_f16(t->ctx);
      LLVMValueRef args[2] = {operand(t, op, 1), operand(t, op, 0)};
      LLVMValueRef r = call(t, op, bf ? "llvm.nvvm.ff2bf16x2.rz" : "llvm.nvvm.ff2f16x2.rz",
                            NULL, 0, args, 2);
      return r ? coerce(t, r, lr) : NULL;
    }
    /* fptrunc <2 x float> gives one cvt.rn.f16x2.f32 (bf16x2 likewise). */
    LLVMTypeRef v2f = LLVMVectorType(LLVMFloatTypeInContext(t->lc), 2);
    LLVMValueRef v = LLVMGetUndef(v2f);
    v = LLVMBuildInsertElement(b, v, operand(t, op, 1), LLVMConstInt(i32t(t), 1, 0), "");
    v = LLVMBuildInsertElement(b, v, operand(t, op, 0), LLVMConstInt(i32t(t), 0, 0), "");
    return LLVMBuildFPTrunc(b, v, lr, "");
  }
  case TL_OP_SIMT_CVT_E4M3X2:
    return cvt_e4m3x2(t, op, lr);
  case TL_OP_SIMT_BITCAST:
    return LLVMBuildBitCast(b, operand(t, op, 0), lr, "");
  case TL_OP_SIMT_EXTRACT:
    return LLVMBuildExtractElement(
        b, operand(t, op, 0), LLVMConstInt(i32t(t), (unsigned long long)int_attr(op, "index", 0), 0),
        "");
  case TL_OP_SIMT_BUILD: {
    LLVMValueRef v = LLVMGetUndef(lr);
    for (unsigned i = 0; i < tl_op_num_operands(op); i++)
      v = LLVMBuildInsertElement(b, v, operand(t, op, i), LLVMConstInt(i32t(t), i, 0), "");
    return v;
  }
  default:
    return fail_op(t, op, "no translation for %s", tl_op_name(op));
  }
}

/*===--- Structured control flow -----------------------------------------===*/

static TlOp *translate_block(Tr *t, TlBlock *b);

static LLVMBasicBlockRef new_block(Tr *t, const char *name) {
  return LLVMAppendBasicBlockInContext(t->lc, t->fn, name);
}

static void scf_for(Tr *t, TlOp *op) {
  unsigned n = tl_op_num_results(op);
  LLVMValueRef lb = operand(t, op, 0), ub = operand(t, op, 1), step = operand(t, op, 2);
  bool sgn = is_signed(tl_value_type(tl_op_operand(op, 0)));
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(t->b);
  LLVMBasicBlockRef header = new_block(t, "for.header");
  LLVMBasicBlockRef body = new_block(t, "for.body");
  LLVMBasicBlockRef exit = new_block(t, "for.exit");
  LLVMBuildBr(t->b, header);
  LLVMPositionBuilderAtEnd(t->b, header);
  TlBlock *blk = tl_region_first_block(tl_op_region(op, 0));
  LLVMValueRef iv = LLVMBuildPhi(t->b, LLVMTypeOf(lb), "iv");
  LLVMValueRef *phis = tl_xmalloc(sizeof *phis * (n + 1));
  LLVMAddIncoming(iv, &lb, &pre, 1);
  map_put(&t->map, tl_block_arg(blk, 0), iv);
  for (unsigned i = 0; i < n; i++) {
    LLVMValueRef init = operand(t, op, 3 + i);
    phis[i] = LLVMBuildPhi(t->b, LLVMTypeOf(init), "");
    LLVMAddIncoming(phis[i], &init, &pre, 1);
    map_put(&t->map, tl_block_arg(blk, 1 + i), phis[i]);
  }
  LLVMValueRef cond = LLVMBuildICmp(t->b, sgn ? LLVMIntSLT : LLVMIntULT, iv, ub, "");
  LLVMBuildCondBr(t->b, cond, body, exit);
  LLVMPositionBuilderAtEnd(t->b, body);
  TlOp *y = translate_block(t, blk);
  if (!t->failed) {
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(t->b);
    LLVMValueRef next = LLVMBuildAdd(t->b, iv, step, "");
    LLVMAddIncoming(iv, &next, &latch, 1);
    for (unsigned i = 0; i < n; i++) {
      LLVMValueRef v = operand(t, y, i);
      LLVMAddIncoming(phis[i], &v, &latch, 1);
    }
    LLVMBuildBr(t->b, header);
  }
  LLVMPositionBuilderAtEnd(t->b, exit);
  for (unsigned i = 0; i < n; i++)
    map_put(&t->map, tl_op_result(op, i), phis[i]);
  tl_free(phis);
}

static void scf_if(Tr *t, TlOp *op) {
  unsigned n = tl_op_num_results(op);
  LLVMBasicBlockRef then_bb = new_block(t, "if.then");
  LLVMBasicBlockRef else_bb = new_block(t, "if.else");
  LLVMBasicBlockRef merge = new_block(t, "if.end");
  LLVMBuildCondBr(t->b, operand(t, op, 0), then_bb, else_bb);
  LLVMValueRef *vals[2] = {tl_xcalloc(n + 1, sizeof(LLVMValueRef)),
                           tl_xcalloc(n + 1, sizeof(LLVMValueRef))};
  LLVMBasicBlockRef ends[2];
  for (unsigned r = 0; r < 2; r++) {
    LLVMPositionBuilderAtEnd(t->b, r ? else_bb : then_bb);
    TlRegion *reg = tl_op_region(op, r);
    if (!tl_region_empty(reg)) {
      TlOp *y = translate_block(t, tl_region_first_block(reg));
      for (unsigned i = 0; i < n && !t->failed; i++)
        vals[r][i] = operand(t, y, i);
    }
    ends[r] = LLVMGetInsertBlock(t->b);
    LLVMBuildBr(t->b, merge);
  }
  LLVMPositionBuilderAtEnd(t->b, merge);
  for (unsigned i = 0; i < n && !t->failed; i++) {
    LLVMValueRef phi = LLVMBuildPhi(t->b, LLVMTypeOf(vals[0][i]), "");
    LLVMValueRef in[2] = {vals[0][i], vals[1][i]};
    LLVMAddIncoming(phi, in, ends, 2);
    map_put(&t->map, tl_op_result(op, i), phi);
  }
  tl_free(vals[0]);
  tl_free(vals[1]);
}

static void scf_while(Tr *t, TlOp *op) {
  unsigned n = tl_op_num_operands(op), m = tl_op_num_results(op);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(t->b);
  LLVMBasicBlockRef header = new_block(t, "while.cond");
  LLVMBasicBlockRef body = new_block(t, "while.body");
  LLVMBasicBlockRef exit = new_block(t, "while.exit");
  LLVMBuildBr(t->b, header);
  LLVMPositionBuilderAtEnd(t->b, header);
  TlBlock *before = tl_region_first_block(tl_op_region(op, 0));
  TlBlock *after = tl_region_first_block(tl_op_region(op, 1));
  LLVMValueRef *phis = tl_xmalloc(sizeof *phis * (n + 1));
  for (unsigned i = 0; i < n; i++) {
    LLVMValueRef init = operand(t, op, i);
    phis[i] = LLVMBuildPhi(t->b, LLVMTypeOf(init), "");
    LLVMAddIncoming(phis[i], &init, &pre, 1);
    map_put(&t->map, tl_block_arg(before, i), phis[i]);
  }
  TlOp *c = translate_block(t, before);
  if (!t->failed) {
    LLVMBuildCondBr(t->b, operand(t, c, 0), body, exit);
    for (unsigned i = 0; i < m; i++) {
      map_put(&t->map, tl_block_arg(after, i), operand(t, c, 1 + i));
      map_put(&t->map, tl_op_result(op, i), operand(t, c, 1 + i));
    }
    LLVMPositionBuilderAtEnd(t->b, body);
    TlOp *y = translate_block(t, after);
    if (!t->failed) {
      LLVMBasicBlockRef latch = LLVMGetInsertBlock(t->b);
      for (unsigned i = 0; i < n; i++) {
        LLVMValueRef v = operand(t, y, i);
        LLVMAddIncoming(phis[i], &v, &latch, 1);
      }
      LLVMBuildBr(t->b, header);
    }
  }
  LLVMPositionBuilderAtEnd(t->b, exit);
  tl_free(phis);
}

/* Translates the ops of a block; returns its terminator (untranslated).
 * Every op of the arith table goes to arith_op, every op of the simt table
 * to simt_op; any other op (a tl op) is refused with a diagnostic. */
static TlOp *translate_block(Tr *t, TlBlock *b) {
  for (TlOp *op = tl_block_first_op(b); op && !t->failed; op = tl_op_next(op)) {
    if (tl_op_has_trait(op, TL_TRAIT_TERMINATOR))
      return op;
    LLVMValueRef r = NULL;
    switch (tl_op_id(op)) {
    case TL_OP_SCF_FOR:
      scf_for(t, op);
      continue;
    case TL_OP_SCF_IF:
      scf_if(t, op);
      continue;
    case TL_OP_SCF_WHILE:
      scf_while(t, op);
      continue;
#define TL_OP(ID, ...) case TL_OP_##ID:
#include "tl/ops/arith.def"
#undef TL_OP
      r = arith_op(t, op);
      break;
#define TL_OP(ID, ...) case TL_OP_##ID:
#include "tl/ops/simt.def"
#undef TL_OP
      r = simt_op(t, op);
      break;
    default:
      r = fail_op(t, op, "cannot run on the GPU directly: lower it to the "
                         "simt dialect first%s",
                  "");
      break;
    }
    if (t->failed)
      return NULL;
    if (tl_op_num_results(op) == 1)
      map_put(&t->map, tl_op_result(op, 0), r);
  }
  return NULL;
}

/*===--- Target checks ---------------------------------------------------===*/

/* Refuses, at the op, a form the target lacks: a feature it does not have
 * or a later PTX ISA than it uses (LLVM would abort with "Cannot select"
 * on either). */
static void need(Tr *t, TlOp *op, const char *what, TlFeature f,
                 unsigned min_ptx) {
  if (!tl_arch_has(t->arch, f)) {
    TlStr need = {0}, msg = {0};
    tl_str_printf(&need, "%s needs %s", what, tl_feature_name(f));
    tl_arch_lacks_text(&msg, tl_str_cstr(&need), t->arch, f);
    tl_op_emit_error(op, "%s", tl_str_cstr(&msg));
    tl_str_free(&need);
    tl_str_free(&msg);
    t->failed = true;
  } else if (t->ptx < min_ptx) {
    tl_op_emit_error(
        op, "%s needs PTX ISA %u.%u or later (-mptx=%u), not %u.%u", what,
        min_ptx / 10, min_ptx % 10, min_ptx, t->ptx / 10, t->ptx % 10);
    t->failed = true;
  }
}

/* Checks one op of a kernel against the target (a tl_op_walk callback):
 * the warp-level forms through their rows of the form table. */
static void check_op(TlOp *op, void *user) {
  Tr *t = user;
  TlFeature feature;
  unsigned min_ptx;
  if (!tl_simt_op_needs(op, &feature, &min_ptx))
    return;
  char what[64];
  const TlMmaForm *m = tl_simt_mma_form(op);
  const TlLdmatrixForm *l = tl_simt_ldmatrix_form(op);
  const TlCpAsyncForm *c = tl_simt_cp_async_form(op);
  const TlWgmmaForm *w = tl_simt_wgmma_form(op);
  if (w)
    snprintf(what, sizeof what, "wgmma.mma_async %s x %s -> %s", w->a_type,
             w->b_type, w->acc_type);
  else if (tl_op_id(op) == TL_OP_SIMT_WGMMA_FENCE)
    snprintf(what, sizeof what, "wgmma.fence");
  else if (tl_op_id(op) == TL_OP_SIMT_WGMMA_COMMIT)
    snprintf(what, sizeof what, "wgmma.commit_group");
  else if (tl_op_id(op) == TL_OP_SIMT_WGMMA_WAIT)
    snprintf(what, sizeof what, "wgmma.wait_group");
  else if (tl_op_id(op) == TL_OP_SIMT_WGMMA_DESC)
    snprintf(what, sizeof what, "a wgmma matrix descriptor");
  else if (tl_op_id(op) == TL_OP_SIMT_SETMAXNREG)
    snprintf(what, sizeof what, "setmaxnreg.%s", str_attr(op, "action"));
  else if (m)
    snprintf(what, sizeof what, "mma.%s %s x %s -> %s", m->shape, m->a_type,
             m->b_type, m->acc_type);
  else if (l)
    snprintf(what, sizeof what, "ldmatrix.x%u%s.%s", l->num,
             l->trans ? ".trans" : "", l->elem);
  else if (c)
    snprintf(what, sizeof what, "cp.async.%s of %u bytes", c->cache, c->bytes);
  else if (feature == TL_FEATURE_TMA)
    snprintf(what, sizeof what, "%s", tl_op_name(op));
  else
    snprintf(what, sizeof what, "cp.async");
  need(t, op, what, feature, min_ptx);
}

/* Whether the target can run the kernel: every warp-level form, and the
 * dynamic shared memory the kernel declares (`smem_bytes`, set by the
 * lowering) within the target's per-block limit. Reports each problem. */
static bool check_target(Tr *t, TlOp *fn) {
  int64_t smem = int_attr(fn, "smem_bytes", 0);
  if (smem > t->arch->max_smem) {
    tl_emit_error(t->ctx, tl_op_loc(fn),
                  "kernel @%s uses %lld bytes of dynamic shared memory, more "
                  "than the %lld a block of %s may have",
                  tl_symbol_name(fn), (long long)smem,
                  (long long)t->arch->max_smem, t->arch->name);
    t->failed = true;
  }
  tl_op_walk(fn, check_op, t, false);
  return !t->failed;
}

/*===--- Kernels ---------------------------------------------------------===*/

/* The first simt.setmaxnreg of a kernel (a tl_op_walk callback). */
static void find_setmaxnreg(TlOp *op, void *user) {
  TlOp **first = user;
  if (!*first && tl_op_id(op) == TL_OP_SIMT_SETMAXNREG)
    *first = op;
}

static void translate_func(Tr *t, TlOp *fn) {
  if (!check_target(t, fn))
    return;
  TlOp *setmaxnreg = NULL;
  tl_op_walk(fn, find_setmaxnreg, &setmaxnreg, false);
  if (setmaxnreg && int_attr(fn, "threads", 0) <= 0 &&
      int_attr(fn, "max_threads", 0) <= 0) {
    fail_op(t, setmaxnreg,
            "ptxas ignores setmaxnreg in a kernel without `threads` or "
            "`max_threads` (it cannot tell the register count at entry)%s",
            "");
    return;
  }
  TlType *ft = tl_attr_type_value(tl_op_attr(fn, "function_type"));
  unsigned n = tl_type_function_num_inputs(ft);
  if (tl_type_function_num_results(ft)) {
    fail_op(t, fn, "a kernel returns no values%s", "");
    return;
  }
  LLVMTypeRef *ps = tl_xmalloc(sizeof *ps * (n ? n : 1));
  for (unsigned i = 0; i < n && !t->failed; i++)
    if (!(ps[i] = ltype(t, tl_type_function_input(ft, i))))
      fail_op(t, fn, "parameter type has no register form on the GPU%s", "");
  if (t->failed) {
    tl_free(ps);
    return;
  }
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(t->lc), ps, n, 0);
  t->fn = LLVMAddFunction(t->mod, tl_symbol_name(fn), fty);
  tl_free(ps);
  LLVMSetFunctionCallConv(t->fn, LLVMPTXKernelCallConv);
  int64_t threads = int_attr(fn, "threads", 0), maxt = int_attr(fn, "max_threads", 0);
  char buf[32];
  if (threads > 0) {
    snprintf(buf, sizeof buf, "%lld,1,1", (long long)threads);
    LLVMAddAttributeAtIndex(t->fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(t->lc, "nvvm.reqntid", 12, buf,
                                                      (unsigned)strlen(buf)));
  }
  /* ptxas rejects .maxntid together with .reqntid. */
  if (maxt > 0 && threads <= 0) {
    snprintf(buf, sizeof buf, "%lld", (long long)maxt);
    LLVMAddAttributeAtIndex(t->fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(t->lc, "nvvm.maxntid", 12, buf,
                                                      (unsigned)strlen(buf)));
  }
  /* ptxas honours setmaxnreg only where it knows the register count at
   * entry, which .reqntid or .maxntid with .minnctapersm give (65536 /
   * threads, down to a multiple of 8); otherwise it drops the instruction
   * with a C7508 "Potential Performance Loss" remark. One block per SM is
   * what a block of that many threads needs anyway. */
  /* `min_blocks` (the blocks an SM must hold at once) the same way: with
   * the thread count it caps the registers a thread may use. */
  int64_t minb = int_attr(fn, "min_blocks", 0);
  if (minb == 0 && setmaxnreg)
    minb = 1;
  if (minb > 0) {
    snprintf(buf, sizeof buf, "%lld", (long long)minb);
    LLVMAddAttributeAtIndex(t->fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(t->lc, "nvvm.minctasm",
                                                      13, buf,
                                                      (unsigned)strlen(buf)));
  }
  /* A tensor map parameter is `.param .align 64 .b8 [128]` read through
   * its generic address (cvta.param): LLVM's byval + nvvm.grid_constant,
   * which keeps the parameter in the param space instead of copying it to
   * local memory. cp.async.bulk.tensor may name a tensor map there. */
  for (unsigned i = 0; i < n; i++) {
    if (!tl_simt_is_tensormap(tl_type_function_input(ft, i)))
      continue;
    LLVMTypeRef blob = LLVMArrayType2(LLVMInt8TypeInContext(t->lc), 128);
    unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5);
    unsigned align = LLVMGetEnumAttributeKindForName("align", 5);
    LLVMAddAttributeAtIndex(t->fn, i + 1,
                            LLVMCreateTypeAttribute(t->lc, byval, blob));
    LLVMAddAttributeAtIndex(t->fn, i + 1,
                            LLVMCreateEnumAttribute(t->lc, align, 64));
    LLVMAddAttributeAtIndex(
        t->fn, i + 1,
        LLVMCreateStringAttribute(t->lc, "nvvm.grid_constant", 18, "", 0));
  }
  TlBlock *entry = tl_region_first_block(tl_op_region(fn, 0));
  for (unsigned i = 0; i < n; i++)
    map_put(&t->map, tl_block_arg(entry, i), LLVMGetParam(t->fn, i));
  LLVMPositionBuilderAtEnd(t->b, new_block(t, "entry"));
  translate_block(t, entry);
  if (!t->failed)
    LLVMBuildRetVoid(t->b);
}

TlResult tl_target_translate(TlContext *ctx, const TlArch *arch, unsigned ptx,
                             TlModule *m, LLVMContextRef lc,
                             LLVMModuleRef *out) {
  Tr t;
  memset(&t, 0, sizeof t);
  t.ctx = ctx;
  t.arch = arch;
  t.ptx = ptx;
  t.lc = lc;
  t.mod = LLVMModuleCreateWithNameInContext("tl", lc);
  t.b = LLVMCreateBuilderInContext(lc);
  unsigned kernels = 0;
  for (TlOp *op = tl_block_first_op(tl_module_body(m)); op && !t.failed;
       op = tl_op_next(op)) {
    if (tl_op_id(op) != TL_OP_BUILTIN_FUNC || !tl_op_attr(op, "kernel"))
      continue;
    translate_func(&t, op);
    kernels++;
  }
  if (!t.failed && !kernels) {
    tl_emit_error(ctx, tl_op_loc(tl_module_op(m)),
                  "the module has no kernel (a func with the 'kernel' "
                  "attribute) to compile");
    t.failed = true;
  }
  LLVMDisposeBuilder(t.b);
  tl_free(t.map.keys);
  tl_free(t.map.vals);
  *out = t.mod;
  return t.failed ? TL_FAILURE : TL_SUCCESS;
}
