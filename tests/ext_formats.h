/* The integer, ml_dtypes and IEEE P3109 formats as the tests know them: their
 * parameters typed in from the published definitions, with the largest and
 * smallest values derived by hand, and each pattern's value by a decoder
 * written here from those definitions, not taken from the library
 * (tests/test_format_ext.c, test_round_ext.c, test_exhaustive_small.c).
 *
 * The definitions decoded (quoted or paraphrased from the sources named):
 *
 * EXT_INT    ml_dtypes 0.5.4 README: "int2, int4, uint2 and uint4: low
 *            precision integer types"; ml_dtypes' intN<N> holds two's
 *            complement values -2^(N-1) .. 2^(N-1) - 1 (int4 -8..7, int2
 *            -2..1); int8 is numpy's -128..127. Pattern b is b when its top
 *            bit is clear, else b - 2^N.
 */
#ifndef MIXPREC_TESTS_EXT_FORMATS_H
#define MIXPREC_TESTS_EXT_FORMATS_H

#include <math.h>
#include <stdint.h>

#include "fmt/format.h"

typedef enum { EXT_INT } ext_kind;

typedef struct {
	fmt_id id;
	const char *name;
	ext_kind kind;
	int width, exp_bits, frac_bits, bias;
	double max, min_pos;   /* largest finite value; smallest positive one */
} ext_spec;

static const ext_spec EXT[] = {
	/* integers: max 2^(N-1) - 1, smallest positive 1 */
	{ FMT_INT8, "int8", EXT_INT, 8, 0, 0, 0, 127.0, 1.0 },
	{ FMT_INT4, "int4", EXT_INT, 4, 0, 0, 0, 7.0, 1.0 },
	{ FMT_INT2, "int2", EXT_INT, 2, 0, 0, 0, 1.0, 1.0 },
};
#define NEXT ((int)(sizeof EXT / sizeof EXT[0]))

static inline uint32_t ext_patterns(const ext_spec *s) { return 1u << s->width; }

/* The value of pattern b by the definitions above (NaN for NaN patterns). */
static inline double ext_value(const ext_spec *s, uint32_t b)
{
	switch (s->kind) {
	case EXT_INT:
		return b >> (s->width - 1) ? (double)b - ldexp(1.0, s->width) : (double)b;
	}
	return NAN;
}

/* The pattern of +max, and of the result of overflow toward +-inf in a mode
 * that does not saturate: the integers saturate in every mode. */
static inline uint32_t ext_max_bits(const ext_spec *s)
{
	return (1u << (s->width - 1)) - 1u;
}

#endif
