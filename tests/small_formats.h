/* The sub-8-bit and FNUZ formats as the tests know them: their table typed
 * in, and each pattern's value by the formulas, written here and not taken
 * from the library (tests/test_format_small.c, test_round_small.c,
 * test_exhaustive_small.c). */
#ifndef MIXPREC_TESTS_SMALL_FORMATS_H
#define MIXPREC_TESTS_SMALL_FORMATS_H

#include <math.h>
#include <stdint.h>

#include "fmt/format.h"

enum { SMALL_NONE = 0, SMALL_FNUZ = 1, SMALL_E8M0 = 2 };

typedef struct {
	fmt_id id;
	const char *name;
	int width, exp_bits, frac_bits, bias;
	double max, min_normal, min_subnormal;   /* min_subnormal NaN: none */
	int kind;   /* SMALL_NONE no inf/NaN, SMALL_FNUZ, SMALL_E8M0 */
} small_spec;

static const small_spec SPECS[] = {
	{ FMT_E3M2, "fp6-e3m2", 6, 3, 2, 3, 28.0, 0.25, 0.0625, SMALL_NONE },
	{ FMT_E2M3, "fp6-e2m3", 6, 2, 3, 1, 7.5, 1.0, 0.125, SMALL_NONE },
	{ FMT_E2M1, "fp4-e2m1", 4, 2, 1, 1, 6.0, 1.0, 0.5, SMALL_NONE },
	{ FMT_E4M3FNUZ, "fp8-e4m3fnuz", 8, 4, 3, 8, 240.0, 0x1p-7, 0x1p-10, SMALL_FNUZ },
	{ FMT_E5M2FNUZ, "fp8-e5m2fnuz", 8, 5, 2, 16, 57344.0, 0x1p-15, 0x1p-17, SMALL_FNUZ },
	{ FMT_E8M0, "e8m0", 8, 8, 0, 127, 0x1p127, 0x1p-127, NAN, SMALL_E8M0 },
};
#define NSPECS ((int)(sizeof SPECS / sizeof SPECS[0]))

/* The value of pattern b by the formulas: sign s, exponent field e, fraction
 * field m; (-1)^s 2^(1-bias) m/2^M when e = 0, else (-1)^s 2^(e-bias) (1 +
 * m/2^M). FNUZ: 0x80 is NaN. e8m0: 2^(b - 127), 0xff NaN. */
static inline double small_value(const small_spec *s, uint32_t b)
{
	if (s->kind == SMALL_E8M0)
		return b == 0xff ? NAN : ldexp(1.0, (int)b - 127);
	if (s->kind == SMALL_FNUZ && b == 0x80)
		return NAN;
	uint32_t sgn = b >> (s->width - 1);
	uint32_t e = (b >> s->frac_bits) & ((1u << s->exp_bits) - 1);
	uint32_t m = b & ((1u << s->frac_bits) - 1);
	double v = e == 0 ? ldexp((double)m, 1 - s->bias - s->frac_bits)
	                  : ldexp(1.0 + ldexp((double)m, -s->frac_bits), (int)e - s->bias);
	return sgn ? -v : v;
}

/* The sign bit (0 for e8m0) and the pattern of +max. */
static inline uint32_t small_sign(const small_spec *s) { return s->kind == SMALL_E8M0 ? 0 : 1u << (s->width - 1); }
static inline uint32_t small_max_bits(const small_spec *s) { return s->kind == SMALL_E8M0 ? 0xfe : small_sign(s) - 1; }

#endif
