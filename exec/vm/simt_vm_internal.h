/* Shared between the files of the thread-level VM (simt_vm.c runs kernels,
 * simt_numeric.c holds its PTX arithmetic): rounding modes, conversions
 * and the byte permute modes, as pure functions on codes. */
#ifndef TL_SIMT_VM_INTERNAL_H
#define TL_SIMT_VM_INTERNAL_H

#include "vm_internal.h"

/* PTX rounding modifiers of cvt: none, the float roundings and the integer
 * roundings (same directions: nearest even, toward zero, down, up). */
typedef enum SvRound {
  SV_NONE,
  SV_RN,
  SV_RZ,
  SV_RM,
  SV_RP,
  SV_RNI,
  SV_RZI,
  SV_RMI,
  SV_RPI,
} SvRound;

/* The rounding named s ("rn" ... "rpi"), SV_NONE for NULL. */
SvRound sv_round_parse(const char *s);

/* The IEEE code (1 sign, ebits exponent, mbits fraction bits) nearest to
 * (-1)^neg * mant * 2^exp in direction r (one of SV_RN..SV_RP): exact
 * when representable, subnormals kept, overflow to infinity or to the
 * largest finite value as the direction says. mant == 0 gives a zero of
 * the sign neg. */
uint64_t sv_round_ieee(bool neg, uint64_t mant, int exp, unsigned ebits,
                       unsigned mbits, SvRound r);

/* The GPU's canonical NaN of a float type (all bits but the sign set). */
uint64_t sv_nan(const EType *e);

/* cvt[.r][.sat].d.s of code c, as PTX defines it (docs/vm.md). s and d
 * are f16, bf16, f32, f64 or 8..64-bit integers; the combination is one
 * the simt verifier accepts. */
uint64_t sv_cvt(const EType *s, const EType *d, uint64_t c, SvRound r,
                bool sat);

/* prmt.b32 with a mode: 0 for the default (selector nibbles), else 1..6
 * for f4e, b4e, rc8, ecl, ecr, rc16. */
uint32_t sv_prmt(uint32_t a, uint32_t b, uint32_t sel, int mode);
/* cvt.rn.f16x2.e4m3x2 of the 16-bit half `half` of a: the f16x2 word. */
uint32_t sv_cvt_e4m3x2(uint32_t a, unsigned half);
/* lop3.b32 with truth table lut. */
uint32_t sv_lop3(uint32_t a, uint32_t b, uint32_t c, unsigned lut);

#endif
