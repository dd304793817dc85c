/* Data types: the low-precision type family, the host reference for
 * encode/decode/pack/unpack, quantisation helpers, and the register-level
 * cast recipes the GPU lowering uses (with a bit-exact emulator).
 *
 * Pure C, no IR dependency. Every function here is reentrant; nothing
 * allocates except where a comment says so. The semantics of every format
 * and of every recipe are tabulated in docs/dtypes.md. */
#ifndef TL_DTYPE_H
#define TL_DTYPE_H

#include "tl/support.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===-------------------------------------------------------------------===*
 * The type family
 *===-------------------------------------------------------------------===*/

typedef enum TlDTypeKind {
  TL_DTYPE_INVALID = 0, /* the zero TlDType: not a type */
  TL_DTYPE_BOOL,        /* 1 bit, 0 or 1 */
  TL_DTYPE_UINT,        /* uN: N in 1..8, 16, 32, 64 */
  TL_DTYPE_INT,         /* iN (two's complement): N in 2..8, 16, 32, 64 */
  TL_DTYPE_FLOAT,       /* f16 bf16 f32 f64 and the small fNeXmY */
} TlDTypeKind;

/* A data type is a small value: compare with tl_dtype_eq, copy freely.
 * exp_bits/man_bits are 0 for non-floats. A float has 1 sign bit, so
 * bits == 1 + exp_bits + man_bits. */
typedef struct TlDType {
  uint8_t kind; /* TlDTypeKind */
  uint8_t bits;
  uint8_t exp_bits;
  uint8_t man_bits;
} TlDType;

/* How a float format treats its all-ones exponent (see docs/dtypes.md). */
typedef enum TlFloatSpecials {
  TL_FLOAT_IEEE,   /* f16 bf16 f32 f64 f8e5m2: inf and NaN as IEEE 754 */
  TL_FLOAT_FN,     /* f8e4m3 (OCP E4M3): no inf, NaN only S.1111.111 */
  TL_FLOAT_FINITE, /* every other small float: all codes finite */
} TlFloatSpecials;

/* Constructors for the fixed types; they never fail. */
TlDType tl_dtype_bool(void);
TlDType tl_dtype_f16(void);
TlDType tl_dtype_bf16(void);
TlDType tl_dtype_f32(void);
TlDType tl_dtype_f64(void);
/* uN for N in 1..8,16,32,64; iN for N in 2..8,16,32,64; anything else
 * returns the invalid type (kind TL_DTYPE_INVALID). */
TlDType tl_dtype_uint(unsigned bits);
TlDType tl_dtype_int(unsigned bits);
/* fNeXmY with X >= 1, Y >= 0, 2 <= 1+X+Y <= 8; otherwise invalid. */
TlDType tl_dtype_small_float(unsigned exp_bits, unsigned man_bits);

bool tl_dtype_is_valid(TlDType t);
bool tl_dtype_eq(TlDType a, TlDType b);
unsigned tl_dtype_bits(TlDType t);
bool tl_dtype_is_float(TlDType t);
bool tl_dtype_is_integer(TlDType t); /* bool, uN, iN */
bool tl_dtype_is_signed(TlDType t);  /* iN and every float */
/* Special-value rules of a float type; TL_FLOAT_FINITE for non-floats. */
TlFloatSpecials tl_dtype_specials(TlDType t);
/* Exponent bias of a float type (15 for f16, 2^(X-1)-1 for fNeXmY);
 * 0 for non-floats. */
int tl_dtype_bias(TlDType t);
/* Largest and smallest finite values as doubles (exact except u64/i64,
 * which round to the nearest double). For floats min == -max. */
double tl_dtype_max(TlDType t);
double tl_dtype_min(TlDType t);

/* The canonical name ("bool", "u4", "i8", "f16", "bf16", "f8e4m3", ...),
 * a pointer to static storage; "<invalid>" for an invalid type. */
const char *tl_dtype_name(TlDType t);
/* Parses exactly n bytes of s (no NUL needed). Accepts every canonical name
 * and the alias "i1" for bool. On success stores *out and returns true; on
 * an unknown name returns false and leaves *out untouched (the caller
 * words the diagnostic). s may be NULL only when n == 0. */
bool tl_dtype_parse(const char *s, size_t n, TlDType *out);

/* Calls fn(t, user) for every type of bit width <= 8 in a fixed order:
 * bool, u1..u8, i2..i8, then the small floats by width and exponent bits.
 * Returns how many types were visited. fn may be NULL (just counts). */
unsigned tl_dtype_foreach_small(void (*fn)(TlDType t, void *user), void *user);

/*===-------------------------------------------------------------------===*
 * Host reference: code points <-> doubles
 *
 * A code point is the type's bit pattern in the low tl_dtype_bits(t) bits
 * of a uint64_t. Decode ignores higher bits. All rules are in
 * docs/dtypes.md; in short:
 *  - decode is exact (u64/i64 above 2^53 round to nearest double);
 *  - float encode rounds to nearest, ties to even, once. Overflow goes to
 *    inf for IEEE formats (f16 bf16 f32 f8e5m2) and saturates to +-max for
 *    f8e4m3 and the finite small floats (+-inf saturate too). NaN encodes
 *    to the format's canonical positive quiet NaN, and to +0 in formats
 *    without NaN. -0.0 encodes to the negative-zero code.
 *  - integer encode rounds to nearest, ties to even, then saturates to the
 *    type's range; NaN encodes to 0. bool is x != 0 (NaN is true).
 * t must be valid (tl_dtype_is_valid): an invalid t decodes to NaN and
 * encodes to 0. These functions never fail otherwise.
 *===-------------------------------------------------------------------===*/
double tl_dtype_decode(TlDType t, uint64_t code);
uint64_t tl_dtype_encode(TlDType t, double x);
/* Same rules from a float (exact widening first, so a single rounding). */
uint64_t tl_dtype_encode_f32(TlDType t, float x);
/* Canonical NaN code of t, or false when t has no NaN. */
bool tl_dtype_nan_code(TlDType t, uint64_t *code);
/* True when code is a NaN of t. */
bool tl_dtype_code_is_nan(TlDType t, uint64_t code);

/*===-------------------------------------------------------------------===*
 * Compact storage (Tilus section 7.1)
 *
 * Bit order is little-endian at both levels: bit k of the stream is bit
 * (k % 8) of byte k / 8, and value i of width w occupies stream bits
 * [off + i*w, off + (i+1)*w) with its bit j at stream bit off + i*w + j.
 * A value may straddle bytes. Widths 16/32/64 follow the same rule, which
 * for a byte-aligned offset is the little-endian memory layout.
 *===-------------------------------------------------------------------===*/
/* Writes n codes of t into buf starting at stream bit bit_off, leaving all
 * other bits untouched. Codes are masked to the width. buf must hold
 * ceil((bit_off + n*bits) / 8) bytes; codes and buf must not overlap. */
void tl_dtype_pack(TlDType t, const uint64_t *codes, size_t n, void *buf,
                   size_t bit_off);
/* Reads n codes of t from buf starting at stream bit bit_off (zero-extended
 * into codes[i]). */
void tl_dtype_unpack(TlDType t, const void *buf, size_t bit_off, size_t n,
                     uint64_t *codes);
/* Element access: value index i of a compact array starting at bit 0. */
uint64_t tl_dtype_load(TlDType t, const void *buf, size_t i);
void tl_dtype_store(TlDType t, void *buf, size_t i, uint64_t code);
/* Bytes needed for n values of t. */
size_t tl_dtype_storage_bytes(TlDType t, size_t n);

/*===-------------------------------------------------------------------===*
 * Quantisation of matrices (weights): W[k][n], row-major, k the reduction
 * dimension. Rules (docs/dtypes.md "Quantisation"):
 *  - integer qtype, symmetric: scale = absmax / P, q = clamp(rne(x/scale)
 *    + z), where for iN z = 0 and P = 2^(N-1)-1; for uN z = 2^(N-1) and
 *    P = 2^(N-1)-1 (offset binary, Marlin's "-8" form for u4).
 *  - integer qtype, asymmetric: lo = min(0, min x), hi = max(0, max x),
 *    scale = (hi-lo) / (qmax-qmin), z = clamp(rne(qmin - lo/scale)),
 *    q = clamp(rne(x/scale) + z).
 *  - float qtype (small floats, f16, bf16): scale = absmax / max(qtype),
 *    q = encode(x / scale) (RNE, saturating; symmetric only).
 *  - a group with absmax 0 (or hi == lo) gets scale 1.
 *  - scales are stored as f32 and the quantiser divides by the stored f32
 *    scale in double; dequant is decode(q - z) * scale rounded once to the
 *    output type.
 *===-------------------------------------------------------------------===*/
typedef enum TlQuantMode {
  TL_QUANT_SYMMETRIC,
  TL_QUANT_ASYMMETRIC,
} TlQuantMode;

typedef struct TlQuantSpec {
  TlDType qtype;     /* integer (not bool) or small float */
  TlQuantMode mode;  /* asymmetric needs an integer qtype */
  size_t group_size; /* rows per group along k: 0 = per channel (all k) */
  bool per_tensor;   /* one scale for the matrix (group_size ignored) */
} TlQuantSpec;

/* Scale/zero entries for a k x n matrix: per tensor 1; otherwise
 * ceil(k / group) * n, indexed [k / group][n] (group = k when 0). */
size_t tl_quant_num_groups(const TlQuantSpec *spec, size_t k, size_t n);

/* Quantises src (k*n values of src_type: f32, f16 or bf16 bit patterns,
 * row-major) into packed (compact, tl_dtype_storage_bytes(qtype, k*n)
 * bytes, row-major), scales (tl_quant_num_groups floats) and zeros (as
 * many int32; may be NULL for symmetric integer and float qtypes, whose
 * zero is implied). Fails (false + err) on an unsupported spec or src
 * type, a zero dimension, or a non-finite input; outputs are then
 * unspecified. Caller owns every buffer. */
bool tl_quant_matrix(const TlQuantSpec *spec, TlDType src_type, const void *src,
                     size_t k, size_t n, void *packed, float *scales,
                     int32_t *zeros, TlErr *err);
/* The matching dequantiser: dst gets k*n values of dst_type (f32, f16,
 * bf16), each (decode(q) - z) * scale rounded once. zeros may be NULL
 * when the spec implies them. Fails like tl_quant_matrix. */
bool tl_dequant_matrix(const TlQuantSpec *spec, const void *packed,
                       const float *scales, const int32_t *zeros, size_t k,
                       size_t n, TlDType dst_type, void *dst, TlErr *err);

/*===-------------------------------------------------------------------===*
 * Register operations: the data form of device cast recipes
 *
 * A recipe runs on 32-bit virtual registers r0..r(n_regs-1). Packed
 * f16x2/bf16x2 values keep element 0 in bits [0,16) and element 1 in
 * bits [16,32). All float arithmetic rounds to nearest even once, keeps
 * subnormals (no .ftz), and returns the canonical NaN (0x7fff for halves,
 * 0x7fffffff for f32) when the result is NaN.
 *===-------------------------------------------------------------------===*/
typedef enum TlRegOpcode {
  TL_ROP_MOV,    /* d = imm (a constant; hoistable) */
  TL_ROP_LOP3,   /* d = lop3(a, b, c, imm & 0xff) as PTX lop3.b32 */
  TL_ROP_PRMT,   /* d = prmt.b32(a, b, imm) default mode (imm = selector,
                    nibble bit 3 replicates the byte's sign bit) */
  TL_ROP_PRMT_R, /* d = prmt.b32(a, b, c): the selector is register c
                    (its low 16 bits): a byte table lookup */
  TL_ROP_SHL,    /* d = a << imm (imm < 32) */
  TL_ROP_SHR,    /* d = a >> imm, logical */
  TL_ROP_SAR,    /* d = a >> imm, arithmetic */
  TL_ROP_SHF_R,  /* d = low 32 bits of ((b:a) >> imm), shf.r.clamp.b32 */
  TL_ROP_IADD,   /* d = a + b (mod 2^32) */
  TL_ROP_ISUB,   /* d = a - b (mod 2^32) */
  TL_ROP_HADD2,  /* f16x2: d = a + b */
  TL_ROP_HSUB2,  /* f16x2: d = a - b */
  TL_ROP_HMUL2,  /* f16x2: d = a * b */
  TL_ROP_HFMA2,  /* f16x2: d = a * b + c, one rounding */
  TL_ROP_HMAX2,  /* f16x2: max, a NaN operand yields the other */
  TL_ROP_HMIN2,  /* f16x2: min, likewise */
  TL_ROP_BADD2,  /* bf16x2 versions of the above */
  TL_ROP_BSUB2,
  TL_ROP_BMUL2,
  TL_ROP_BFMA2,
  TL_ROP_BMAX2,
  TL_ROP_BMIN2,
  TL_ROP_FADD, /* f32 */
  TL_ROP_FSUB,
  TL_ROP_FMUL,
  TL_ROP_FFMA,
  TL_ROP_FMAX,
  TL_ROP_FMIN,
  TL_ROP_CVT_F32_F16LO,  /* d = (f32) low f16 half of a (exact) */
  TL_ROP_CVT_F32_F16HI,  /* d = (f32) high f16 half of a (exact) */
  TL_ROP_CVT_F16X2_F32,  /* d = {rn_f16(a) low, rn_f16(b) high}; PTX
                            cvt.rn.f16x2.f32 d, b, a (operands swapped) */
  TL_ROP_CVT_BF16X2_F32, /* likewise to bf16x2 (cvt.rn.bf16x2.f32) */
  TL_ROP_CVT_F16X2_E4M3X2, /* d = f16x2 of the two f8e4m3 bytes of half imm
                              (0 low, 1 high) of a, byte 0 of the half in
                              the low half of d; exact (NaN -> NaN);
                              cvt.rn.f16x2.e4m3x2 on sm_89+ */
  TL_ROP_COUNT_
} TlRegOpcode;

/* One register operation. a/b/c are register indices (unused ones are 0);
 * imm is the truth table, selector, shift amount or constant. */
typedef struct TlRegOp {
  uint8_t op; /* TlRegOpcode */
  uint8_t dst, a, b, c;
  uint32_t imm;
} TlRegOp;

/* Printable mnemonic ("lop3", "hfma2", ...); "?" for out-of-range. */
const char *tl_regop_name(TlRegOpcode op);
/* How many register operands op reads (0..3, taken in the order a, b, c;
 * the others are ignored), and whether it reads imm. 0/false for an
 * out-of-range opcode. */
unsigned tl_regop_num_operands(TlRegOpcode op);
bool tl_regop_has_imm(TlRegOpcode op);

/* Runs ops over regs (n_regs entries, read and written in place). Each op
 * is emulated bit-exactly. Fails (false + err) on a register index
 * >= n_regs or an unknown opcode, leaving regs partly updated. */
bool tl_regop_run(const TlRegOp *ops, size_t n_ops, uint32_t *regs,
                  size_t n_regs, TlErr *err);

/* Exact scalar helpers the emulator is built on, exported for tests and
 * the VM: f16/bf16 bit patterns in the low 16 bits. */
uint16_t tl_f16_add(uint16_t a, uint16_t b);
uint16_t tl_f16_mul(uint16_t a, uint16_t b);
uint16_t tl_f16_fma(uint16_t a, uint16_t b, uint16_t c);
uint16_t tl_bf16_add(uint16_t a, uint16_t b);
uint16_t tl_bf16_mul(uint16_t a, uint16_t b);
uint16_t tl_bf16_fma(uint16_t a, uint16_t b, uint16_t c);
uint32_t tl_f32_fma(uint32_t a, uint32_t b, uint32_t c);
/* max/min as PTX max.f16/.bf16/.f32 (and the x2 forms per half): a NaN
 * operand yields the other operand, two NaNs the canonical NaN; -0 orders
 * below +0. */
uint16_t tl_f16_max(uint16_t a, uint16_t b);
uint16_t tl_f16_min(uint16_t a, uint16_t b);
uint16_t tl_bf16_max(uint16_t a, uint16_t b);
uint16_t tl_bf16_min(uint16_t a, uint16_t b);
uint32_t tl_f32_max(uint32_t a, uint32_t b);
uint32_t tl_f32_min(uint32_t a, uint32_t b);

/*===-------------------------------------------------------------------===*
 * Cast recipes
 *
 * Registers: r0..r(n_in_words-1) hold the input words, the next n_params
 * registers hold runtime parameters (quantising recipes only), the rest
 * are temporaries. After running ops, output word j is in register
 * out_regs[j]. Output element e (element 0 = low half of word 0, 1 = high
 * half of word 0, ...; one element per word for f32) is input value
 * value_of[e] of the input words, where input value i is read from bits
 * [i*w, (i+1)*w) of the input words concatenated little-endian (the
 * compact order of tl_dtype_pack). Input words hold 32/w values when w
 * divides 32, else w words hold 32 values (w = 3, 5, 6, 7). For
 * quantising recipes the roles are reversed: output value i (compact
 * order in the one output word) is input element value_of[i]. A recipe is
 * single-assignment: every op writes a fresh register.
 *===-------------------------------------------------------------------===*/
#define TL_RECIPE_MAX_OPS 240
#define TL_RECIPE_MAX_WORDS 32
#define TL_RECIPE_MAX_VALUES 64

typedef enum TlRecipeKind {
  TL_RECIPE_MAGIC,  /* integer via a magic-number float (0x6400 family) */
  TL_RECIPE_REBIAS, /* float via exponent re-biasing by a multiply */
  TL_RECIPE_BYTES,  /* bit placement only (f8e5m2 -> f16) */
  TL_RECIPE_LUT,    /* 4-bit floats: prmt as an 8-entry byte table */
  TL_RECIPE_CHAIN,  /* another recipe followed by cvt ops */
  TL_RECIPE_CVT,    /* a conversion instruction (f8e4m3 -> f16) */
  TL_RECIPE_QUANT,  /* float -> integer with scale and zero point */
} TlRecipeKind;

typedef struct TlCastRecipe {
  TlDType src, dst;
  TlRecipeKind kind;
  unsigned n_in_words; /* input registers r0.. */
  unsigned n_params;   /* runtime parameter registers after the inputs */
  unsigned n_out_words;
  unsigned n_values;    /* values converted per run */
  unsigned n_regs;      /* registers the ops use, inputs included */
  unsigned n_ops;       /* total, constants included */
  unsigned n_const_ops; /* TL_ROP_MOV of constants (hoistable) */
  uint8_t out_regs[TL_RECIPE_MAX_WORDS];
  uint8_t value_of[TL_RECIPE_MAX_VALUES];
  TlRegOp ops[TL_RECIPE_MAX_OPS];
  const char *summary; /* one line: technique and constants */
} TlCastRecipe;

/* The recipe converting src to dst (f16, bf16 or f32) for every type of
 * at most 8 bits; the quantising recipe for src f16/bf16/f32 and dst
 * u2/u4/u8/i2/i4/i8. Returns a pointer to static storage (built once, safe to
 * call from several threads), or NULL when no recipe exists. */
const TlCastRecipe *tl_cast_recipe_find(TlDType src, TlDType dst);
/* All recipes in a fixed order; *n gets the count. Never NULL. */
const TlCastRecipe *tl_cast_recipe_all(size_t *n);

/* Runs a recipe in the emulator: in holds n_in_words words, params
 * n_params words (may be NULL when n_params is 0), out receives
 * n_out_words words. Fails only on a malformed recipe (false + err). */
bool tl_cast_recipe_run(const TlCastRecipe *r, const uint32_t *in,
                        const uint32_t *params, uint32_t *out, TlErr *err);

/* The weight packer's side of a cast recipe: stores codes[e] (n_values
 * codes of r->src, in the order the outputs should come out) at input
 * position value_of[e] of words (n_in_words words, written whole), so
 * that running r yields element e = decode(codes[e]). For u4 -> f16 this
 * is Marlin's interleave. r must be a cast recipe (not TL_RECIPE_QUANT). */
void tl_cast_recipe_arrange(const TlCastRecipe *r, const uint64_t *codes,
                            uint32_t *words);

/* The interleave of a cast recipe to a 16-bit type: the d such that each
 * output word holds the values at input positions (p, p + d), p running
 * over the first halves of blocks of 2d positions in order (value_of[2j]
 * = j / d * 2d + j % d, value_of[2j + 1] = value_of[2j] + d): 1 for
 * values in order, 4 for u4 (Marlin's interleave). 0 when the recipe's
 * order is not of this form, or for other recipes. A weight layout that
 * stores each block of 2d codes as (i0, then d codes in output order)
 * needs no reordering after the cast (kernels/qmatmul.tl). */
unsigned tl_cast_recipe_interleave(const TlCastRecipe *r);

/* Checks r bit for bit against the host codec: every code point of the
 * source type in every input position (plus random words) for cast
 * recipes; for quantising recipes every f16/bf16 input under one inexact
 * (scale, zero point) pair and a strided subset under eleven others, and
 * random f32 inputs (half of them at rounding ties) under all twelve. NaN
 * outputs must be NaN where the reference is NaN (payload and sign are not
 * compared). Returns true and stores the number of compared values in
 * *n_checked (may be NULL); on the first mismatch returns false with a message
 * in err. */
bool tl_cast_recipe_verify(const TlCastRecipe *r, uint64_t *n_checked,
                           TlErr *err);

/* Host reference of the quantising recipes (KV-cache quantisation):
 * code of clamp(rne(x * scale + zero), lo, hi) in qtype, where x and scale
 * are exact doubles (the values of the source-format operands), the sum is
 * rounded once with ties to even, [lo, hi] is the range of qtype, and NaN
 * gives lo. For iN the zero point is added before rounding as for uN. */
uint64_t tl_kv_quant_ref(TlDType qtype, double x, double scale, int zero);
/* Parameter words a quantising recipe expects for a scale (given as a code
 * of the recipe's source type) and a zero point: params[0] = scale
 * broadcast to both halves (or the f32 bits), params[1] = zero as an
 * int32. Zero must keep zero + offset in [0, 2^bits) where offset is
 * 2^(bits-1) for iN and 0 for uN; returns false otherwise. */
bool tl_kv_quant_params(const TlCastRecipe *r, uint32_t scale_code, int zero,
                        uint32_t params[2], TlErr *err);

#ifdef __cplusplus
}
#endif
#endif
