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
 * EXT_IEEE   ml_dtypes 0.5.4 include/float8.h, float8_e3m4 and float8_e4m3:
 *            "is_iec559 = true", "has_infinity = true"; infinity() is
 *            0b0'111'0000 (e3m4) and 0b0'1111'000 (e4m3), quiet_NaN()
 *            0b0'111'1000 and 0b0'1111'100 (IEEE 754-2019 6.2.1, quoted
 *            there). So IEEE 754's binary layout: exponent field all ones is
 *            inf (fraction 0) or NaN; 0 is (-1)^s 2^(1-bias) 0.f; else
 *            (-1)^s 2^(e-bias) 1.f; bias 3 (e3m4), 7 (e4m3).
 * EXT_FNUZ   float8_e4m3b11fnuz (same file): kExponentBias = 11,
 *            "has_infinity = false", infinity() = quiet_NaN() =
 *            0b1'0000'000; max() 0b0'1111'111 = 1.875 * 2^4 = 30. Every
 *            pattern but 0x80 is a number, without reserved exponents.
 *            P3109's signed finite formats follow the same rules.
 * EXT_SE     IEEE P3109 interim report (P3109/Public: the report and its
 *            value tables "Value Tables/HexStrings/K8/P{P}/Binary8p{P}se.csv",
 *            read at commit e059815cbb14; graphcore-research/gfloat
 *            src/gfloat/formats.py, format_info_p3109(k, precision,
 *            signedness, domain): signed bias floor(2^(k-p-1)), unsigned
 *            2^(k-p), has_nz=False, num_high_nans 0 signed / 1 unsigned):
 *            K = 8 bits, precision P (implicit bit included), T = P - 1
 *            trailing bits, signed: 8 - P exponent bits and bias
 *            2^(K-P-1); "one NaN, one zero": 0x80 is NaN, there is no -0;
 *            extended: 0x7f is +inf and 0xff -inf; otherwise IEEE's layout
 *            (subnormals where T > 0). Binary8p3se: 0x01 = 0x0.8p-16
 *            (2^-17), 0x7e = 0x1.8p+15 (49152).
 * EXT_SF     signed finite (Binary8p{P}sf.csv): as EXT_SE, but 0x7f and
 *            0xff are finite (Binary8p3sf: 0x7f = 0x1.cp+15 = 57344).
 * EXT_UE     unsigned extended (Binary8p{P}ue.csv): no sign bit, 9 - P
 *            exponent bits, bias 2^(K-P); 0xff NaN, 0xfe +inf
 *            (Binary8p3ue: 0xfd = 0x1.4p+31).
 * EXT_UF     unsigned finite (Binary8p{P}uf.csv): as EXT_UE, 0xfe finite.
 */
#ifndef MIXPREC_TESTS_EXT_FORMATS_H
#define MIXPREC_TESTS_EXT_FORMATS_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "fmt/format.h"

typedef enum { EXT_INT, EXT_IEEE, EXT_FNUZ, EXT_SE, EXT_SF, EXT_UE, EXT_UF } ext_kind;

typedef struct {
	fmt_id id;
	const char *name;
	ext_kind kind;
	int width, exp_bits, frac_bits, bias;
	double max, min_pos;   /* largest finite value; smallest positive one */
	uint32_t nan_bits;     /* the canonical NaN (0 where there is none) */
} ext_spec;

static const ext_spec EXT[] = {
	/* integers: max 2^(N-1) - 1, smallest positive 1 */
	{ FMT_INT8, "int8", EXT_INT, 8, 0, 0, 0, 127.0, 1.0, 0 },
	{ FMT_INT4, "int4", EXT_INT, 4, 0, 0, 0, 7.0, 1.0, 0 },
	{ FMT_INT2, "int2", EXT_INT, 2, 0, 0, 0, 1.0, 1.0, 0 },
	/* ml_dtypes' max() and denorm_min() comments: e3m4 15.5 and 2^-6, e4m3
	 * 240 and 2^-9, e4m3b11fnuz 30 and 2^-13 */
	{ FMT_E3M4, "fp8-e3m4", EXT_IEEE, 8, 3, 4, 3, 15.5, 0x1p-6, 0x78 },
	{ FMT_E4M3IEEE, "fp8-e4m3-ieee", EXT_IEEE, 8, 4, 3, 7, 240.0, 0x1p-9, 0x7c },
	{ FMT_E4M3B11FNUZ, "fp8-e4m3b11fnuz", EXT_FNUZ, 8, 4, 3, 11, 30.0, 0x1p-13, 0x80 },
	/* P3109, max and smallest positive by hand: the pattern's fields (e, f)
	 * give 2^(e-bias) (1 + f/2^T), subnormal 2^(1-bias) f/2^T.
	 * se max 0x7e: P=1 e=126: 2^62; P=2 e=63 f=0: 2^31; P=3 e=31 f=2:
	 * 1.5*2^15; P=4 e=15 f=6: 1.75*2^7; P=5 e=7 f=14: 1.875*2^3; P=6 e=3
	 * f=30: 1.9375*2; P=7 e=1 f=62: 1.96875. sf max 0x7f: 2^63, 1.5*2^31,
	 * 1.75*2^15, 1.875*2^7, 1.9375*2^3, 1.96875*2, 1.984375. ue max 0xfd:
	 * P=1 e=253 bias 128: 2^125; P=2 e=126 f=1: 1.5*2^62; P=3 e=63 f=1:
	 * 1.25*2^31; P=4 e=31 f=5: 1.625*2^15; P=5 e=15 f=13: 1.8125*2^7;
	 * P=6 e=7 f=29: 1.90625*2^3; P=7 e=3 f=61: 1.953125*2. uf max 0xfe:
	 * 2^126, 2^63, 1.5*2^31, 1.75*2^15, 1.875*2^7, 1.9375*2^3, 1.96875*2.
	 * Smallest positive 0x01: 2^(1-bias-T) (P=1: 2^(1-bias)). */
	{ FMT_P3109_P1, "p3109-8p1", EXT_SE, 8, 7, 0, 64, 0x1p62, 0x1p-63, 0x80 },
	{ FMT_P3109_P1SF, "p3109-8p1sf", EXT_SF, 8, 7, 0, 64, 0x1p63, 0x1p-63, 0x80 },
	{ FMT_P3109_P1UE, "p3109-8p1ue", EXT_UE, 8, 8, 0, 128, 0x1p125, 0x1p-127, 0xff },
	{ FMT_P3109_P1UF, "p3109-8p1uf", EXT_UF, 8, 8, 0, 128, 0x1p126, 0x1p-127, 0xff },
	{ FMT_P3109_P2, "p3109-8p2", EXT_SE, 8, 6, 1, 32, 0x1p31, 0x1p-32, 0x80 },
	{ FMT_P3109_P2SF, "p3109-8p2sf", EXT_SF, 8, 6, 1, 32, 1.5 * 0x1p31, 0x1p-32, 0x80 },
	{ FMT_P3109_P2UE, "p3109-8p2ue", EXT_UE, 8, 7, 1, 64, 1.5 * 0x1p62, 0x1p-64, 0xff },
	{ FMT_P3109_P2UF, "p3109-8p2uf", EXT_UF, 8, 7, 1, 64, 0x1p63, 0x1p-64, 0xff },
	{ FMT_P3109_P3, "p3109-8p3", EXT_SE, 8, 5, 2, 16, 49152.0, 0x1p-17, 0x80 },
	{ FMT_P3109_P3SF, "p3109-8p3sf", EXT_SF, 8, 5, 2, 16, 57344.0, 0x1p-17, 0x80 },
	{ FMT_P3109_P3UE, "p3109-8p3ue", EXT_UE, 8, 6, 2, 32, 1.25 * 0x1p31, 0x1p-33, 0xff },
	{ FMT_P3109_P3UF, "p3109-8p3uf", EXT_UF, 8, 6, 2, 32, 1.5 * 0x1p31, 0x1p-33, 0xff },
	{ FMT_P3109_P4, "p3109-8p4", EXT_SE, 8, 4, 3, 8, 224.0, 0x1p-10, 0x80 },
	{ FMT_P3109_P4SF, "p3109-8p4sf", EXT_SF, 8, 4, 3, 8, 240.0, 0x1p-10, 0x80 },
	{ FMT_P3109_P4UE, "p3109-8p4ue", EXT_UE, 8, 5, 3, 16, 53248.0, 0x1p-18, 0xff },
	{ FMT_P3109_P4UF, "p3109-8p4uf", EXT_UF, 8, 5, 3, 16, 57344.0, 0x1p-18, 0xff },
	{ FMT_P3109_P5, "p3109-8p5", EXT_SE, 8, 3, 4, 4, 15.0, 0x1p-7, 0x80 },
	{ FMT_P3109_P5SF, "p3109-8p5sf", EXT_SF, 8, 3, 4, 4, 15.5, 0x1p-7, 0x80 },
	{ FMT_P3109_P5UE, "p3109-8p5ue", EXT_UE, 8, 4, 4, 8, 232.0, 0x1p-11, 0xff },
	{ FMT_P3109_P5UF, "p3109-8p5uf", EXT_UF, 8, 4, 4, 8, 240.0, 0x1p-11, 0xff },
	{ FMT_P3109_P6, "p3109-8p6", EXT_SE, 8, 2, 5, 2, 3.875, 0x1p-6, 0x80 },
	{ FMT_P3109_P6SF, "p3109-8p6sf", EXT_SF, 8, 2, 5, 2, 3.9375, 0x1p-6, 0x80 },
	{ FMT_P3109_P6UE, "p3109-8p6ue", EXT_UE, 8, 3, 5, 4, 15.25, 0x1p-8, 0xff },
	{ FMT_P3109_P6UF, "p3109-8p6uf", EXT_UF, 8, 3, 5, 4, 15.5, 0x1p-8, 0xff },
	{ FMT_P3109_P7, "p3109-8p7", EXT_SE, 8, 1, 6, 1, 1.96875, 0x1p-6, 0x80 },
	{ FMT_P3109_P7SF, "p3109-8p7sf", EXT_SF, 8, 1, 6, 1, 1.984375, 0x1p-6, 0x80 },
	{ FMT_P3109_P7UE, "p3109-8p7ue", EXT_UE, 8, 2, 6, 2, 3.90625, 0x1p-7, 0xff },
	{ FMT_P3109_P7UF, "p3109-8p7uf", EXT_UF, 8, 2, 6, 2, 3.9375, 0x1p-7, 0xff },
};
#define NEXT ((int)(sizeof EXT / sizeof EXT[0]))

static inline uint32_t ext_patterns(const ext_spec *s) { return 1u << s->width; }

/* IEEE 754's layout of sign s, exponent field e and fraction f: e = 0 is
 * 2^(1-bias) f/2^T, else 2^(e-bias) (1 + f/2^T). */
static inline double ext_layout(const ext_spec *s, int sgn, uint32_t e, uint32_t f)
{
	double v = e == 0 ? ldexp((double)f, 1 - s->bias - s->frac_bits)
	                  : ldexp(1.0 + ldexp((double)f, -s->frac_bits), (int)e - s->bias);
	return sgn ? -v : v;
}

/* The value of pattern b by the definitions above (NaN for NaN patterns). */
static inline double ext_value(const ext_spec *s, uint32_t b)
{
	uint32_t emask = (1u << s->exp_bits) - 1u, fmask = (1u << s->frac_bits) - 1u;
	uint32_t e = (b >> s->frac_bits) & emask, f = b & fmask;
	int sgn = (int)(b >> 7) & 1;
	switch (s->kind) {
	case EXT_INT:
		return b >> (s->width - 1) ? (double)b - ldexp(1.0, s->width) : (double)b;
	case EXT_IEEE:
		if (e == emask)
			return f ? NAN : sgn ? -INFINITY : INFINITY;
		return ext_layout(s, sgn, e, f);
	case EXT_SE:
		if (b == 0x7f || b == 0xff)
			return b == 0xff ? -INFINITY : INFINITY;
		/* fall through */
	case EXT_SF:
	case EXT_FNUZ:
		return b == 0x80 ? NAN : ext_layout(s, sgn, e, f);
	case EXT_UE:
		if (b == 0xfe)
			return INFINITY;
		/* fall through */
	case EXT_UF:
		return b == 0xff ? NAN : ext_layout(s, 0, e, f);
	}
	return NAN;
}

/* The pattern of +max. */
static inline uint32_t ext_max_bits(const ext_spec *s)
{
	switch (s->kind) {
	case EXT_INT:  return (1u << (s->width - 1)) - 1u;
	case EXT_IEEE: return (((1u << s->exp_bits) - 1u) << s->frac_bits) - 1u;
	case EXT_SE:   return 0x7e;
	case EXT_UE:   return 0xfd;
	case EXT_UF:   return 0xfe;
	default:       return 0x7f;   /* FNUZ, SF */
	}
}

/* Whether the format has a sign (no: P3109's unsigned formats). */
static inline bool ext_signed(const ext_spec *s) { return s->kind != EXT_UE && s->kind != EXT_UF; }

#endif
