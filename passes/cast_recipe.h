/* Emission of lib/dtype's cast recipes as simt + arith ops: the bridge
 * between the register-op programs that tl_cast_recipe_verify checked bit
 * for bit and the lowering's packed register tiles. Internal to passes/.
 *
 * Register ops become (docs/lowering.md, "Cast recipes"):
 *
 *   mov                         arith.constant (u32), one per value per call
 *   lop3, prmt, prmt.r          simt.lop3 {lut}, simt.prmt (selector a
 *                               constant for prmt, a register for prmt.r)
 *   shl, shr                    arith.shli, arith.shri on u32
 *   sar                         arith.shri on i32 (arith.bitcast in and out)
 *   shf.r (funnel shift)        arith.shri, arith.shli, arith.ori (LLVM
 *                               folds the three into one shf.r)
 *   iadd, isub                  arith.addi, arith.subi on u32
 *   hadd2 ... hfma2, badd2 ...  simt.add2/sub2/mul2/fma2 on
 *                               !simt.vec<2xf16> / !simt.vec<2xbf16>
 *   fadd, fsub, fmul            arith.addf/subf/mulf on f32
 *   ffma                        simt.fma (fma.rn.f32: one rounding)
 *   cvt.f32.f16lo/hi            simt.extract of a 2xf16 view, simt.cvt
 *   cvt.f16x2.f32, .bf16x2      simt.cvt_pack {rounding = "rn"}
 *
 * Reinterpretations between u32, f32 and the 2-element vectors are
 * arith.bitcast / simt.bitcast, which cost no instruction.
 *
 *   hmax2, hmin2, bmax2, bmin2  simt.max, simt.min on the 2xf16 / 2xbf16
 *   fmax, fmin                  view, or on f32: PTX's rule that a NaN
 *                               operand yields the other (arith.maxf would
 *                               propagate the NaN)
 *
 * Only the quantising recipes (TL_RECIPE_QUANT) use max/min; they take a
 * scale and a zero point and are emitted by tl_emit_quant_recipe.
 *
 * Cost, per group of r->n_values values (the figures of docs/dtypes.md):
 * the recipe's n_ops - n_const_ops instructions, except that each shf.r is
 * three arith ops in the IR (one shf.r in PTX after LLVM); constants are
 * arith.constant ops shared by every group of a call (hoistable). Ops no
 * requested result depends on are not emitted, so a partial group costs
 * less. Then the permutation fix-up, which restores identity order:
 *   - f32 destinations: free (one word per element: words are reordered);
 *   - f16/bf16 destinations: one simt.prmt per output word whose two halves
 *     are not recipe elements (2k, 2k+1) of one word in order, plus one
 *     simt.prmt for a last word holding a single value (it clears the high
 *     half). What lib/dtype's recipes pay per full group: MAGIC from 1 to
 *     5-bit integers and bool one prmt per output word (values i and i + n/2
 *     share a word: Marlin's interleave) or all but one, 6/7-bit to f16
 *     likewise, 6/7-bit to bf16 and u8 -> f16 none, i8 -> f16 2 per 4
 *     values; REBIAS one per output word or all but one or two (f3e2m0 ->
 *     bf16 none); BYTES none; LUT one per output word (4 per 8 values);
 *     CHAIN none when the pair comes from f32, f8e4m3 -> bf16 2 per 4.
 * Example: u4 -> f16 is 9 + 4 instructions per 8 values, u4 -> f32 17.
 * test/unit/cast_recipe_test.c checks the count of this rule for every
 * recipe (and prints them all with -v). */
#ifndef TL_PASSES_CAST_RECIPE_H
#define TL_PASSES_CAST_RECIPE_H

#include "tl/dtype.h"
#include "tl/ir.h"

/* Words of n values of `bits` bits packed compactly: ceil(n * bits / 32). */
static inline unsigned tl_cast_recipe_words(unsigned bits, unsigned n) {
  return (unsigned)(((unsigned long)n * bits + 31) / 32);
}

/* Whether tl_emit_cast_recipe can emit r (every cast recipe can; the
 * quantising ones take parameters and go through tl_emit_quant_recipe).
 * On false, err says why. */
bool tl_cast_recipe_emittable(const TlCastRecipe *r, TlErr *err);

/* Emits, at b's insertion point (all ops located at loc), the conversion of
 * n_elems >= 1 values of r->src to r->dst, r->n_values at a time.
 *
 * in: tl_cast_recipe_words(r->src.bits, n_elems) u32 values (type
 *   tl_type_int(ctx, 32, false)) holding the source values packed
 *   compactly little-endian: value i at bits [i*w, i*w + w) of the words
 *   concatenated, w = r->src.bits (the lowering's register tile form, and
 *   tl_dtype_pack's). Bits past n_elems*w in the last word are ignored.
 *   Group g reads words [g*r->n_in_words, (g+1)*r->n_in_words); words of a
 *   last, partial group past the caller's count are taken as zero.
 * out: receives tl_cast_recipe_words(r->dst.bits, n_elems) u32 values in
 *   identity order: element i (f16/bf16: two per word, element 0 in the
 *   low half; f32: one per word) is cast(value i), bit for bit what
 *   tl_cast_recipe_run computes (NaN as the recipe's canonical NaN). When
 *   the destination has 16 bits and n_elems is odd, the high half of the
 *   last word is zero. out may not overlap in.
 *
 * The simt, arith dialects must be registered in b's context. Returns
 * false with a message in err (may be NULL), emitting nothing, when r is
 * not emittable (tl_cast_recipe_emittable) or n_elems is 0. */
bool tl_emit_cast_recipe(TlBuilder *b, TlLoc loc, const TlCastRecipe *r,
                         TlValue *const *in, unsigned n_elems, TlValue **out,
                         TlErr *err);

/* The same with the results in another order: result i is the cast of
 * value perm[i], where perm keeps each group of r->n_values values (values
 * g*n_values .. (g+1)*n_values - 1, the last group possibly shorter) within
 * itself (tl_cast_recipe_perm_ok). A tl.cast between layouts that order a
 * thread's elements differently uses it: when the source's order is the
 * one the recipe leaves its results in (a packer's tl_cast_recipe_arrange
 * order), the outputs need no reordering at all. */
bool tl_cast_recipe_perm_ok(const TlCastRecipe *r, unsigned n_elems,
                            const unsigned *perm);
bool tl_emit_cast_recipe_perm(TlBuilder *b, TlLoc loc, const TlCastRecipe *r,
                              TlValue *const *in, unsigned n_elems,
                              const unsigned *perm, TlValue **out,
                              TlErr *err);

/* Emits a quantising recipe (r->kind == TL_RECIPE_QUANT, lib/dtype's
 * f16/bf16/f32 -> u2/u4/u8/i2/i4/i8) over n_elems >= 1 values, r->n_values
 * (32 / w) at a time: code i = clamp(rne(x s + z) + off) as
 * tl_kv_quant_ref, NaN giving the range's low end (docs/dtypes.md,
 * section 7).
 *
 * in: tl_cast_recipe_words(r->src.bits, n_elems) u32 values holding the
 *   source values (two f16/bf16 per word, value 0 in the low half; one f32
 *   per word). params: r->n_params u32 values, the words
 *   tl_kv_quant_params builds (the scale's bits in both halves or as f32,
 *   the zero point as an int32); constants or run-time values.
 * out: receives tl_cast_recipe_words(r->dst.bits, n_elems) u32 values:
 *   code i at bits [i w, i w + w) (the compact register tile form), the
 *   quantised source value perm[i] (i when perm is NULL; perm keeps each
 *   group of r->n_values within itself, tl_cast_recipe_perm_ok). Bits past
 *   the last code are zero.
 *
 * The recipe's output order (code i from recipe element value_of[i]) is
 * met by placing the sources: an input word whose two halves are not one
 * source word's in order costs one simt.prmt; f32 words cost nothing.
 * Per full group: r->n_ops - r->n_const_ops instructions plus those prmts;
 * a partial group adds one arith.andi. Returns false with a message in err
 * (may be NULL), emitting nothing, when r is not a well-formed quantising
 * recipe, n_elems is 0 or perm is not such a permutation. */
bool tl_emit_quant_recipe(TlBuilder *b, TlLoc loc, const TlCastRecipe *r,
                          TlValue *const *in, unsigned n_elems,
                          const unsigned *perm, TlValue *const *params,
                          TlValue **out, TlErr *err);

#endif
