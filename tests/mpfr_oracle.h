/* An independent rounding oracle on GNU MPFR, shared by the tests of
 * fmt_round_num (test_round_mpfr.c: random inputs and edges;
 * test_round_mpfr_sr.c: stochastic rounding).
 *
 * The oracle never calls fmt_round_*: it rounds with mpfr_set_q at precision
 * frac_bits + 1 and mpfr_subnormalize for the subnormal grid (exponent
 * unbounded on top), decides ties-away and SR from the two neighbours with
 * exact rationals, applies the overflow rules of doc/DESIGN.md itself and
 * encodes the bits from its own table of formats. */
#ifndef MIXPREC_TESTS_MPFR_ORACLE_H
#define MIXPREC_TESTS_MPFR_ORACLE_H

#include <stdbool.h>
#include <stdint.h>

#include <gmp.h>
#include <mpfr.h>

#include "fmt/format.h"
#include "fmt/parse.h"
#include "fmt/round.h"

_Static_assert(sizeof(unsigned long) >= 8, "mpz_set_ui must take 64 bits");

/* --- the oracle's own description of each format (from doc/DESIGN.md) --- */

typedef struct {
	int width, fb, bias;
	bool has_inf;
	uint32_t max_bits, inf_bits, nan_bits;
	const char *max_text;      /* max finite value */
} ref_fmt;

extern const ref_fmt REF[FMT_COUNT];

/* --- a small deterministic generator for building inputs --- */

static inline uint64_t sm_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline long sm_range(uint64_t *s, long lo, long hi)   /* inclusive */
{
	return lo + (long)(sm_next(s) % (uint64_t)(hi - lo + 1));
}

/* --- the oracle --- */

typedef struct {
	fmt_id id;
	const ref_fmt *r;
	int p;
	long emin_f;          /* unbiased exponent of the min normal */
	mpfr_exp_t mp_emin;   /* MPFR exponent of the min subnormal */
	mpfr_t lo, hi, rn, rz, maxv, tmp;
	mpq_t qlo, qhi, d1, d2;
	mpz_t z;
	/* results of oracle_prepare */
	bool is_zero, special_inf, special_nan, neg, exact;
	uint64_t t;           /* SR: round up iff rbits < t (t in 1..2^32) */
	uint64_t t_floor;     /* floor(f * 2^32), for classifying mismatches */
	bool sre_up;          /* sr-equal: this element's draw moves the magnitude up */
} oracle;

/* Sets up o for format id; oracle_clear frees it. */
void oracle_init(oracle *o, fmt_id id);
void oracle_clear(oracle *o);
/* Everything about x that does not depend on the mode. q is x's signed value
 * (ignored unless kind is NUM_FINITE with a nonzero magnitude). */
void oracle_prepare(oracle *o, num_kind kind, bool neg, const mpq_t q);
/* Bits of a rounded value v (zero, or on the format's grid), with the
 * overflow rules of the mode. */
uint32_t oracle_encode(oracle *o, mpfr_srcptr v, fmt_mode m, bool sat);
/* The expected bits of x (prepared) in mode m. */
uint32_t oracle_expect(oracle *o, fmt_mode m, bool sat, uint32_t rbits);
/* The bits of an overflow to infinity with this sign: inf, or without one
 * (e4m3) the NaN with the sign. */
uint32_t inf_or_nan(const oracle *o, bool neg);

#endif
