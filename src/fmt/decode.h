/* Decoding bit patterns: fields, class, exact value, spacing and neighbours. */
#ifndef MIXPREC_FMT_DECODE_H
#define MIXPREC_FMT_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include "fmt/format.h"

typedef struct {
	bool neg;
	uint32_t exp_field;
	uint32_t frac_field;
	fmt_class cls;
	int exponent;    /* unbiased exponent of the last-place grid's leading bit (emin for subnormals) */
	double value;    /* exact: every value of every format is a binary64 */
	double ulp;      /* spacing from |value| to the next larger magnitude; NaN for inf/NaN */
} fmt_decoded;

/* Decodes bits (the low f->width bits are used). */
void fmt_decode(const fmt_info *f, uint32_t bits, fmt_decoded *out);

/* The exact value of a pattern (NaN for NaN patterns). */
double fmt_to_double(const fmt_info *f, uint32_t bits);

/* The next representable value toward +inf / -inf. Returns false when there is
 * none (from NaN, +inf upward, or past the largest finite value of a format
 * without inf). */
bool fmt_next_up(const fmt_info *f, uint32_t bits, uint32_t *out);
bool fmt_next_down(const fmt_info *f, uint32_t bits, uint32_t *out);

/* Short names: "zero", "subnormal", "normal", "inf", "nan". */
const char *fmt_class_name(fmt_class c);

#endif
