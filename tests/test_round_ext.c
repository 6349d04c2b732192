/* fmt_round_num and fmt_round_double into the integer, ml_dtypes and P3109
 * rows, in every mode, saturating or not, against an oracle of exact
 * rationals (GMP mpq) that never calls the library's rounding: the values of
 * tests/ext_formats.h's own decoder, sorted by magnitude on each side of
 * zero, with one more grid point B beyond the largest (max + 2^(ilogb(max)
 * - T) for the floats, the next integer for the integers), and the rules:
 *
 *   between neighbours lo < |x| < hi: rne the nearer, a tie to the even
 *   pattern; rna a tie away from zero; rtz lo; up/down by the sign; sr hi
 *   iff the 32 random bits are below ceil((|x| - lo) / (hi - lo) * 2^32).
 *   Reaching B (or |x| >= B in a mode away from zero) overflows: the
 *   integers saturate in every mode; otherwise saturate gives +-max, an
 *   infinity where the format has one, else its NaN. A mode toward zero
 *   past max gives +-max. Zero: -0 only where the format has it; P3109's
 *   unsigned formats refuse negatives (their NaN, FMT_FLAG_INVALID); NaN
 *   gives the format's NaN (the integers have none: 0, FMT_FLAG_INVALID).
 *
 * Inputs: every value, the midpoints of every pair of neighbours (B
 * included), points just beside them, quarter points, a point 2^-33 of the
 * gap above lo (SR), far beyond B and far below the smallest value, and
 * random fp32 values over the format's range, both signs. SR runs with
 * fixed random bits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>

#include "fmt/format.h"
#include "fmt/parse.h"
#include "fmt/round.h"
#include "ext_formats.h"
#include "testutil.h"

enum { MAXV = 260 };

/* One side of zero: magnitudes ascending from 0, their patterns, and B. */
typedef struct {
	int n;                 /* values 0..n-1; mag[n] is B */
	mpq_t mag[MAXV + 1];
	uint32_t bits[MAXV + 1];
	bool odd[MAXV + 1];
} side;

typedef struct {
	const ext_spec *s;
	side pos, neg;
	uint32_t inf_bits[2];   /* +inf, -inf; 0 and has_inf false when none */
	bool has_inf, has_negzero;
} oracle;

/* The side of sign `neg` from the decoder's values. */
static void side_build(oracle *o, side *sd, bool neg)
{
	const ext_spec *s = o->s;
	double vals[MAXV];
	uint32_t pats[MAXV];
	int n = 0;
	for (uint32_t b = 0; b < ext_patterns(s); b++) {
		double v = ext_value(s, b);
		if (isnan(v))
			continue;
		if (isinf(v)) {
			o->has_inf = true;
			o->inf_bits[v < 0] = b;
			continue;
		}
		if (v == 0 && signbit(v)) {
			o->has_negzero = true;
			continue;
		}
		if ((v < 0) != neg && v != 0)
			continue;
		vals[n] = v;
		pats[n++] = b;
	}
	/* sort patterns with their values by magnitude */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && fabs(vals[j]) < fabs(vals[j - 1]); j--) {
			double t = vals[j];
			vals[j] = vals[j - 1];
			vals[j - 1] = t;
			uint32_t u = pats[j];
			pats[j] = pats[j - 1];
			pats[j - 1] = u;
		}
	sd->n = n;
	for (int i = 0; i < n; i++) {
		mpq_init(sd->mag[i]);
		mpq_set_d(sd->mag[i], fabs(vals[i]));
		sd->bits[i] = pats[i];
		sd->odd[i] = pats[i] & 1;
	}
	/* B: the next grid point past the largest magnitude */
	double top = fabs(vals[n - 1]);
	double b = s->kind == EXT_INT ? top + 1 : top + ldexp(1.0, ilogb(top) - s->frac_bits);
	mpq_init(sd->mag[n]);
	mpq_set_d(sd->mag[n], b);
	sd->bits[n] = 0;
	sd->odd[n] = s->kind == EXT_INT ? fmod(b, 2) != 0 : ((ext_max_bits(s) + 1) & 1);
}

static void oracle_init(oracle *o, const ext_spec *s)
{
	memset(o, 0, sizeof *o);
	o->s = s;
	side_build(o, &o->pos, false);
	/* the integers' negative side has its own values; a sign-magnitude
	 * format's mirrors the positive one (an unsigned format's is not used) */
	side_build(o, &o->neg, s->kind == EXT_INT);
	if (s->kind != EXT_INT && ext_signed(s)) {
		for (int i = 0; i < o->neg.n; i++)
			o->neg.bits[i] = o->pos.bits[i] ? o->pos.bits[i] | 0x80u : (o->has_negzero ? 0x80u : 0u);
	}
}

static void oracle_clear(oracle *o)
{
	for (int i = 0; i <= o->pos.n; i++)
		mpq_clear(o->pos.mag[i]);
	for (int i = 0; i <= o->neg.n; i++)
		mpq_clear(o->neg.mag[i]);
}

/* The result of reaching B (overflow) on side neg. */
static uint32_t overflow_bits(const oracle *o, const side *sd, bool neg, bool sat)
{
	if (o->s->kind == EXT_INT || sat)
		return sd->bits[sd->n - 1];
	if (o->has_inf)
		return o->inf_bits[neg];
	return o->s->nan_bits;
}

/* Round to odd's parity of value k of a side: the last bit of its
 * significand, the implicit bit included. An integer's is its own parity
 * (two's complement keeps it in the last bit); without fraction bits every
 * nonzero value's significand is 1, odd; else the pattern's last bit is the
 * fraction's. */
static bool rto_odd(const oracle *o, const side *sd, int k)
{
	if (o->s->kind == EXT_INT)
		return sd->bits[k] & 1u;
	if (o->s->frac_bits == 0)
		return mpq_sgn(sd->mag[k]) != 0;
	return sd->bits[k] & 1u;
}

/* The expected bits and flags of the exact value (neg, a = |x|). */
static uint32_t expect(const oracle *o, bool neg, const mpq_t a, fmt_mode m, bool sat, uint32_t r, unsigned *fl)
{
	const ext_spec *s = o->s;
	*fl = 0;
	if (mpq_sgn(a) == 0)
		return neg && o->has_negzero ? 0x80u : 0u;
	if (neg && !ext_signed(s)) {
		*fl = FMT_FLAG_INVALID;
		return s->nan_bits;
	}
	const side *sd = neg ? &o->neg : &o->pos;
	bool toward_zero = m == FMT_RTZ || (m == FMT_UP && neg) || (m == FMT_DOWN && !neg);
	int k = 0;
	while (k < sd->n && mpq_cmp(sd->mag[k + 1], a) <= 0)
		k++;
	if (k < sd->n && mpq_cmp(sd->mag[k], a) == 0)
		return sd->bits[k];   /* exact */
	*fl = FMT_FLAG_INEXACT;
	/* rto truncates first and so never passes the largest value; sr-equal
	 * steps away from zero with probability 1/2: r < 2^31 (the core's rule) */
	bool equal_up = r < 0x80000000u;
	if (k >= sd->n)   /* |x| >= B */
		return toward_zero || m == FMT_RTO || (m == FMT_SR_EQUAL && !equal_up) ? sd->bits[sd->n - 1]
		                                                                      : overflow_bits(o, sd, neg, sat);
	/* lo = mag[k] < a < hi = mag[k + 1] */
	mpq_t d1, d2;
	mpq_inits(d1, d2, NULL);
	mpq_sub(d1, a, sd->mag[k]);
	mpq_sub(d2, sd->mag[k + 1], a);
	int c = mpq_cmp(d1, d2);
	bool up;
	switch (m) {
	case FMT_RNE: up = c > 0 || (c == 0 && sd->odd[k]); break;
	case FMT_RNA: up = c >= 0; break;
	case FMT_SR: {
		/* t = ceil(d1 / (d1 + d2) * 2^32) */
		mpq_t f;
		mpq_init(f);
		mpq_add(d2, d1, d2);
		mpq_div(f, d1, d2);
		mpq_mul_2exp(f, f, 32);
		mpz_t t;
		mpz_init(t);
		mpz_cdiv_q(t, mpq_numref(f), mpq_denref(f));
		up = mpz_cmp_ui(t, r) > 0;
		mpz_clear(t);
		mpq_clear(f);
		break;
	}
	case FMT_RNZ: up = c > 0; break;   /* nearest, ties toward zero */
	case FMT_SR_EQUAL: up = equal_up; break;
	case FMT_RTO: up = !rto_odd(o, sd, k); break;   /* the neighbour whose significand is odd */
	default: up = !toward_zero; break;
	}
	mpq_clears(d1, d2, NULL);
	if (!up)
		return sd->bits[k];
	if (k + 1 == sd->n && m == FMT_RTO)
		return sd->bits[k];   /* never past the largest value */
	if (k + 1 == sd->n) {
		*fl |= FMT_FLAG_OVERFLOW;
		return overflow_bits(o, sd, neg, sat);
	}
	return sd->bits[k + 1];
}

static const uint32_t RBITS[] = { 0, 1, 0x40000000u, 0x80000000u, 0xbfffffffu, 0xffffffffu };

static unsigned long nchecked;

/* Rounds x = (neg, a) in every mode both ways and compares. d: x as a
 * binary64 when it is one exactly (else NaN), to check fmt_round_double. */
static void check_value(const oracle *o, bool neg, const mpq_t a, double d)
{
	const fmt_info *f = fmt_get(o->s->id);
	fmt_num x;
	fmt_num_init(&x);
	x.neg = neg;
	mpq_set(x.mag, a);
	for (int m = 0; m < FMT_MODE_COUNT; m++) {
		size_t nr = m == FMT_SR || m == FMT_SR_EQUAL ? sizeof RBITS / sizeof RBITS[0] : 1;
		for (size_t ri = 0; ri < nr; ri++) {
			for (int sat = 0; sat < 2; sat++) {
				fmt_round_ctl ctl = { .mode = (fmt_mode)m, .saturate = sat, .rbits = RBITS[ri] };
				unsigned want_fl, fl;
				uint32_t want = expect(o, neg, a, (fmt_mode)m, sat, RBITS[ri], &want_fl);
				uint32_t got = fmt_round_num(f, &ctl, &x, &fl);
				unsigned mask = FMT_FLAG_INEXACT | FMT_FLAG_INVALID;
				ck_assert_msg(got == want && (fl & mask) == (want_fl & mask),
				              "%s %s%s r=0x%x: %s%.17g -> 0x%x flags %u, oracle 0x%x flags %u", o->s->name,
				              fmt_mode_name((fmt_mode)m), sat ? " sat" : "", RBITS[ri], neg ? "-" : "",
				              mpq_get_d(a), got, fl, want, want_fl);
				if (!isnan(d)) {
					uint32_t g2 = fmt_round_double(f, &ctl, d, &fl);
					ck_assert_msg(g2 == want, "%s double %a: 0x%x, oracle 0x%x", o->s->name, d, g2, want);
				}
				nchecked++;
			}
		}
	}
	fmt_num_clear(&x);
}

/* a = lo + (hi - lo) * num / 2^den_log2, both signs. */
static void check_between(const oracle *o, const side *sd, bool neg, int k, long num, int den_log2)
{
	mpq_t a, t;
	mpq_inits(a, t, NULL);
	mpq_sub(a, sd->mag[k + 1], sd->mag[k]);
	mpq_set_si(t, num, 1);
	mpq_mul(a, a, t);
	mpq_div_2exp(a, a, (mp_bitcnt_t)den_log2);
	mpq_add(a, a, sd->mag[k]);
	double d = mpq_get_d(a);
	mpq_set_d(t, d);
	check_value(o, neg, a, mpq_equal(t, a) ? (neg ? -d : d) : NAN);
	mpq_clears(a, t, NULL);
}

static void check_side(const oracle *o, const side *sd, bool neg)
{
	static const struct { long num; int den_log2; } at[] = {
		{ 0, 0 }, { 1, 1 }, { (1L << 20) - 1, 21 }, { (1L << 20) + 1, 21 }, { 1, 2 }, { 3, 2 }, { 1, 33 },
		{ (1L << 33) - 1, 33 },
	};
	for (int k = 0; k < sd->n; k++)
		for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
			check_between(o, sd, neg, k, at[i].num, at[i].den_log2);
	mpq_t a;
	mpq_init(a);
	/* B itself, 1.5 B, 2^200 B; 2^-40 and 2^-1 of the smallest magnitude */
	static const double scale_b[] = { 1.0, 1.5, 0x1p200 }, scale_min[] = { 0x1p-40, 0.5, 0.75 };
	for (size_t i = 0; i < 3; i++) {
		mpq_set_d(a, scale_b[i]);
		mpq_mul(a, a, sd->mag[sd->n]);
		check_value(o, neg, a, NAN);
		mpq_set_d(a, scale_min[i]);
		mpq_mul(a, a, sd->mag[1]);
		check_value(o, neg, a, NAN);
	}
	mpq_clear(a);
}

START_TEST(every_mode)
{
	const ext_spec *s = &EXT[_i];
	oracle o;
	oracle_init(&o, s);
	nchecked = 0;
	check_side(&o, &o.pos, false);
	check_side(&o, &o.neg, true);
	/* random fp32 values over the range, both signs */
	uint64_t st = 0x5eed0000u + (uint64_t)_i;
	int lo = ilogb(s->min_pos) - 3, hi = ilogb(s->max) + 2;
	mpq_t a;
	mpq_init(a);
	for (int i = 0; i < 1000; i++) {
		st = st * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t r = (uint32_t)(st >> 32);
		int e = lo + (int)(r % (uint32_t)(hi - lo + 1));
		if (e < -149 || e > 127)
			continue;
		float v = ldexpf(1.0f + (float)(r & 0x7fffffu) * 0x1p-23f, e);
		mpq_set_d(a, (double)v);
		check_value(&o, (r >> 23) & 1, a, (r >> 23) & 1 ? -(double)v : (double)v);
	}
	mpq_clear(a);
	ck_assert(nchecked > 10000);
	oracle_clear(&o);
}
END_TEST

/* Infinities and NaN by the rules of the file's comment. */
START_TEST(specials)
{
	const ext_spec *s = &EXT[_i];
	const fmt_info *f = fmt_get(s->id);
	oracle o;
	oracle_init(&o, s);
	for (int sat = 0; sat < 2; sat++) {
		fmt_round_ctl ctl = { .mode = FMT_RNE, .saturate = sat };
		unsigned fl;
		uint32_t got = fmt_round_double(f, &ctl, NAN, &fl);
		ck_assert_uint_eq(got, s->kind == EXT_INT ? 0 : s->nan_bits);
		ck_assert_uint_eq(fl, s->kind == EXT_INT ? FMT_FLAG_INVALID : 0);
		for (int neg = 0; neg < 2; neg++) {
			const side *sd = neg ? &o.neg : &o.pos;
			uint32_t want = neg && !ext_signed(s) ? s->nan_bits
			              : s->kind == EXT_INT || sat ? sd->bits[sd->n - 1]
			              : o.has_inf ? o.inf_bits[neg] : s->nan_bits;
			got = fmt_round_double(f, &ctl, neg ? -INFINITY : INFINITY, &fl);
			ck_assert_msg(got == want, "%s %sinf sat %d: 0x%x, want 0x%x", s->name, neg ? "-" : "", sat, got, want);
		}
	}
	oracle_clear(&o);
}
END_TEST

static Suite *round_ext_suite(void)
{
	Suite *s = suite_create("round_ext");
	TCase *tc = tcase_create("oracle");
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, every_mode, 0, NEXT);
	tcase_add_loop_test(tc, specials, 0, NEXT);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(round_ext_suite());
}
