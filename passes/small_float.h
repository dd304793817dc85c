/* Emission of casts into the small float formats: an f32 register value
 * becomes the code of any float type of at most 8 bits that lib/dtype
 * knows (every fNeXmY, f8e4m3 and f8e5m2 included), bit for bit what the
 * block VM's tl.cast computes, that is tl_dtype_encode(dst, x) of the exact
 * value: round to nearest even once, overflow to infinity where the format
 * has one (f8e5m2) and saturation to +-max otherwise, NaN to the format's
 * canonical NaN code (+0 for formats without NaN), subnormals, and the
 * sign kept on zeros and on negative values that round to zero. Internal
 * to passes/.
 *
 * The emitted code is straight-line: integer ops on u32 (arith.andi,
 * mini, maxi, addi, shri, cmpi, select), two simt.fma (fma.rn.f32, which
 * keeps subnormals) and one simt.lop3, 12 instructions per value plus
 * constants shared by the values of one call (docs/lowering.md, "Casts to
 * small floats", derives them). Decoding the other way (a small float to
 * f32, f16 or bf16) is lib/dtype's cast recipes (cast_recipe.h).
 *
 * Sources other than f32 reach the emitter through an exact conversion to
 * f32 first, so the value is still rounded once: f16 and bf16 by
 * arith.extf, the types of at most 8 bits by their cast recipe to f32,
 * integers of at most 24 bits by arith.itofp. Wider integers would round
 * twice and are refused (tl_small_float_cast_supported). */
#ifndef TL_PASSES_SMALL_FLOAT_H
#define TL_PASSES_SMALL_FLOAT_H

#include "tl/dtype.h"
#include "tl/ir.h"

/* Instructions tl_emit_to_small_float emits per value (ops other than
 * arith.constant and bitcasts). */
#define TL_SMALL_FLOAT_OPS_PER_VALUE 12

/* Whether dst is a float of at most 8 bits (a destination of
 * tl_emit_to_small_float). On false, err (may be NULL) says why. */
bool tl_small_float_dst_ok(TlDType dst, TlErr *err);

/* Whether a cast from src to dst (dst must pass tl_small_float_dst_ok) can
 * be emitted with one rounding by converting src exactly to f32 and
 * calling tl_emit_to_small_float: src f32, f16, bf16, any type of at most
 * 8 bits (bool, uN, iN, small floats), u16 and i16. 32 and 64-bit integers
 * and f64 are refused (their conversion to f32 rounds). On false, err (may
 * be NULL) says why. */
bool tl_small_float_cast_supported(TlDType src, TlDType dst, TlErr *err);

/* Emits, at b's insertion point (ops located at loc), the conversion of n
 * f32 values x_f32[0..n) (type tl_type_f32) to dst. code[i] receives a u32
 * (tl_type_int(ctx, 32, false)) holding the code of dst for x_f32[i] in
 * its low tl_dtype_bits(dst) bits, the upper bits zero. Constants are
 * emitted once per call and shared by the n values. The arith and simt
 * dialects must be registered in b's context. Returns false with a message
 * in err (may be NULL), emitting nothing, when dst is not a float of at
 * most 8 bits or n is 0. code may not overlap x_f32. */
bool tl_emit_to_small_float_n(TlBuilder *b, TlLoc loc, TlDType dst, unsigned n,
                              TlValue *const *x_f32, TlValue **code,
                              TlErr *err);

/* One value: tl_emit_to_small_float_n with n = 1. */
bool tl_emit_to_small_float(TlBuilder *b, TlLoc loc, TlDType dst,
                            TlValue *x_f32, TlValue **code, TlErr *err);

#endif
