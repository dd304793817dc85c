/* Float-format helpers for literals and folding (see float_util.c). */
#ifndef TL_FLOAT_UTIL_H
#define TL_FLOAT_UTIL_H
#include <stdbool.h>
#include <stdint.h>

bool tl_float_has_inf(unsigned exp, unsigned man);
bool tl_float_has_nan(unsigned exp, unsigned man);
/* Largest finite value of the format. */
double tl_float_max(unsigned exp, unsigned man);
/* Rounds v to the format (nearest-even). Sets *overflow when v (an
 * infinity included) lies beyond the largest finite value: the result is
 * then +-inf for formats with infinity, else the saturated maximum. NaN
 * passes through. */
double tl_float_round(double v, unsigned exp, unsigned man, bool *overflow);
/* Bit pattern of a value already representable in the format. */
uint64_t tl_float_to_bits(double v, unsigned exp, unsigned man);
/* Value of a bit pattern; *valid is false if bits has bits above the width. */
double tl_float_from_bits(uint64_t bits, unsigned exp, unsigned man,
                          bool *valid);
/* Rounds a positive decimal numeral (text without sign, as lexed) to the
 * format exactly once, negating if neg; *overflow as tl_float_round. */
double tl_float_round_decimal(const char *text, bool neg, unsigned exp,
                              unsigned man, bool *overflow);
#endif
