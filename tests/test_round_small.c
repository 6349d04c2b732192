/* Rounding into the sub-8-bit and FNUZ formats in every mode, SR included, against
 * an oracle of exact rationals written here: the sorted list of a format's
 * values (tests/small_formats.h), the two neighbours of the exact input,
 * and each mode's rule between them; then the formats' special rules one by
 * one with hand-derived bits; then the bulk kernels on every path against
 * the scalar functions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>

#include "fmt/bulk.h"
#include "fmt/decode.h"
#include "fmt/parse.h"
#include "fmt/round.h"
#include "util/rng.h"
#include "small_formats.h"
#include "testutil.h"

/* --- the oracle --- */

/* The non-negative values of a format in increasing order (pattern i is
 * value i, e8m0 included), with one more past max: the value the unbounded
 * exponent range would have next (max + its spacing; e8m0: 2^128). */
typedef struct {
	size_t n;          /* values, the one past max included */
	mpq_t v[256];
	uint32_t bits[256];
} grid;

static void grid_init(grid *g, const small_spec *s)
{
	uint32_t top = small_max_bits(s);
	g->n = 0;
	for (uint32_t b = 0; b <= top; b++) {
		mpq_init(g->v[g->n]);
		mpq_set_d(g->v[g->n], small_value(s, b));
		g->bits[g->n++] = b;
	}
	double past = s->kind == SMALL_E8M0 ? 0x1p128 : 2 * s->max - small_value(s, top - 1);
	mpq_init(g->v[g->n]);
	mpq_set_d(g->v[g->n], past);
	g->bits[g->n++] = top + 1;
}

static void grid_clear(grid *g)
{
	for (size_t i = 0; i < g->n; i++)
		mpq_clear(g->v[i]);
}

/* SR moves away from zero iff rbits < ceil((a - lo) / (hi - lo) * 2^32). */
static bool sr_up(const mpq_t a, const mpq_t lo, const mpq_t hi, uint32_t rbits)
{
	mpq_t f, w;
	mpq_inits(f, w, NULL);
	mpq_sub(f, a, lo);
	mpq_sub(w, hi, lo);
	mpq_div(f, f, w);
	mpq_mul_2exp(f, f, 32);
	mpz_t c;
	mpz_init(c);
	mpz_cdiv_q(c, mpq_numref(f), mpq_denref(f));
	bool up = mpz_cmp_ui(c, rbits) > 0;
	mpz_clear(c);
	mpq_clears(f, w, NULL);
	return up;
}

/* The expected bits of the finite nonzero value (-1)^neg a; *inexact set. */
static uint32_t oracle_finite(const small_spec *s, const grid *g, const mpq_t a, bool neg, fmt_mode mode,
                              uint32_t rbits, bool saturate, bool *inexact)
{
	uint32_t sign = neg ? small_sign(s) : 0;
	size_t last = g->n - 2;   /* max */
	if (mpq_cmp(a, g->v[0]) < 0) {   /* e8m0 below 2^-127: clamped to it */
		*inexact = true;
		return 0;
	}
	size_t lo = 0;
	while (lo < last && mpq_cmp(g->v[lo + 1], a) <= 0)
		lo++;
	*inexact = mpq_cmp(a, g->v[lo]) != 0;
	size_t r = lo;
	if (*inexact) {
		size_t hi = lo + 1;
		mpq_t mid;
		mpq_init(mid);
		mpq_add(mid, g->v[lo], g->v[hi]);
		mpq_div_2exp(mid, mid, 1);
		int c = mpq_cmp(a, mid);
		mpq_clear(mid);
		bool up = false;
		switch (mode) {
		case FMT_RNE:  up = c > 0 || (c == 0 && (g->bits[lo] & 1)); break;
		case FMT_RNA:  up = c >= 0; break;
		case FMT_RTZ:  up = false; break;
		case FMT_UP:   up = !neg; break;
		case FMT_DOWN: up = neg; break;
		case FMT_SR:   up = sr_up(a, g->v[lo], g->v[hi], rbits); break;
		/* to odd: the neighbour whose pattern ends in 1; e8m0's patterns are
		 * exponents (no significand bit to set), where it is rtz */
		case FMT_RTO:  up = s->kind != SMALL_E8M0 && !(g->bits[lo] & 1); break;
		case FMT_RNZ:  up = c > 0; break;
		case FMT_SR_EQUAL: up = rbits < 0x80000000u; break;
		default:       break;
		}
		r = up ? hi : lo;
	}
	/* past max: overflow (to odd truncates first: never past max; sr-equal
	 * past max already chose between max and the overflow result) */
	if (r > last) {
		if (s->kind == SMALL_NONE || saturate || mode == FMT_RTO)
			return sign | small_max_bits(s);
		return s->kind == SMALL_FNUZ ? 0x80 : 0xff;
	}
	if (g->bits[r] == 0 && s->kind == SMALL_FNUZ)
		return 0;
	return sign | g->bits[r];
}

/* --- every mode on a dense set of inputs --- */

static const fmt_mode MODES[] = { FMT_RNE, FMT_RNA, FMT_RTZ, FMT_UP, FMT_DOWN, FMT_RTO, FMT_RNZ };
static const uint32_t RBITS[] = { 0, 1, 0x3fffffffu, 0x7fffffffu, 0x80000000u, 0x80000001u, 0xbfffffffu,
                                  0xc0000000u, 0xfffffffeu, 0xffffffffu, 0x12345678u, 0xdeadbeefu };

/* Rounds (-1)^neg a in every mode (SR and sr-equal with every RBITS), with and without
 * saturation, through fmt_round_num (and fmt_round_double when a is a
 * double), against the oracle. */
static void check_value(const small_spec *s, const grid *g, const mpq_t a, bool neg)
{
	if (neg && s->kind == SMALL_E8M0)
		return;   /* no negative values: e8m0_rules */
	const fmt_info *f = fmt_get(s->id);
	fmt_num x;
	fmt_num_init(&x);
	mpq_set(x.mag, a);
	x.neg = neg;
	double d = mpq_get_d(a);
	mpq_t back;
	mpq_init(back);
	mpq_set_d(back, d);
	bool is_double = mpq_equal(back, a);
	mpq_clear(back);
	for (int sat = 0; sat < 2; sat++) {
		const size_t nm = sizeof MODES / sizeof MODES[0], nr = sizeof RBITS / sizeof RBITS[0];
		for (size_t m = 0; m < nm + 2 * nr; m++) {
			bool sr = m >= nm;
			fmt_round_ctl ctl = { .mode = !sr ? MODES[m] : m < nm + nr ? FMT_SR : FMT_SR_EQUAL, .saturate = sat,
			                      .rbits = sr ? RBITS[(m - nm) % nr] : 0 };
			bool inexact;
			uint32_t want = oracle_finite(s, g, a, neg, ctl.mode, ctl.rbits, sat, &inexact);
			unsigned flags;
			uint32_t got = fmt_round_num(f, &ctl, &x, &flags);
			/* each check only on a mismatch: a passing ck_assert costs a
			 * write in Check's fork mode, and this loop runs millions of times */
			if (got != want)
				ck_abort_msg("%s %s%s rbits %08x sat %d: %s%.17g -> 0x%02x, want 0x%02x", s->name,
				             fmt_mode_name(ctl.mode), "", ctl.rbits, sat, neg ? "-" : "", d, got, want);
			if (flags & FMT_FLAG_INVALID)
				ck_abort_msg("%s %.17g: invalid flag", s->name, d);
			if (((flags & FMT_FLAG_INEXACT) != 0) != inexact)
				ck_abort_msg("%s %.17g inexact flag", s->name, d);
			if (is_double) {
				unsigned f2;
				uint32_t g2 = fmt_round_double(f, &ctl, neg ? -d : d, &f2);
				if (g2 != want || f2 != flags)
					ck_abort_msg("%s %.17g: fmt_round_double gives 0x%02x flags %u, want 0x%02x flags %u", s->name,
					             d, g2, f2, want, flags);
			}
		}
	}
	fmt_num_clear(&x);
}

/* Inputs: every value, the points k/8 of the way to the next one (ties at
 * k = 4), ties missed by 2^-40 of the gap both ways, a third of the gap
 * (not a binary fraction), past max, and tiny ones; both signs. */
START_TEST(every_mode)
{
	const small_spec *s = &SPECS[_i];
	grid *g = malloc(sizeof *g);
	grid_init(g, s);
	mpq_t a, gap, t;
	mpq_inits(a, gap, t, NULL);
	for (size_t i = 0; i + 1 < g->n; i++) {
		mpq_sub(gap, g->v[i + 1], g->v[i]);
		for (int k = 0; k < 8 + 5; k++) {
			/* k < 8: k/8; then 1/2 - 2^-40, 1/2 + 2^-40, 1/3, 2^-40, 1 - 2^-40 */
			static const long off[5][2] = { { 1, -1 }, { 1, 1 }, { 0, 0 }, { 0, 1 }, { 2, -1 } };
			if (k < 8 || k == 10) {
				mpq_set_si(t, k < 8 ? k : 1, k < 8 ? 8 : 3);
			} else {
				mpq_t eps;
				mpq_init(eps);
				mpq_set_si(eps, off[k - 8][1], 1);
				mpq_div_2exp(eps, eps, 40);
				mpq_set_si(t, off[k - 8][0], 2);   /* 0, 1/2 or 1 */
				mpq_add(t, t, eps);
				mpq_clear(eps);
			}
			mpq_mul(a, gap, t);
			mpq_add(a, a, g->v[i]);
			if (mpq_sgn(a) == 0)
				continue;
			check_value(s, g, a, false);
			check_value(s, g, a, true);
		}
	}
	/* far past max, and below the smallest magnitude */
	static const double far[] = { 0x1p200, 1e30, 0x1p-200, 1e-30 };
	for (size_t k = 0; k < sizeof far / sizeof far[0]; k++) {
		mpq_set_d(a, far[k]);
		check_value(s, g, a, false);
		check_value(s, g, a, true);
	}
	mpq_set(a, g->v[g->n - 1]);   /* the value past max itself, and twice it */
	check_value(s, g, a, false);
	mpq_mul_2exp(a, a, 1);
	check_value(s, g, a, true);
	mpq_clears(a, gap, t, NULL);
	grid_clear(g);
	free(g);
}
END_TEST

/* --- the special rules, one by one, with bits worked out by hand --- */

static uint32_t rnd(fmt_id id, const char *text, fmt_mode mode, bool sat, unsigned *flags)
{
	fmt_num x;
	fmt_num_init(&x);
	ck_assert_int_eq(fmt_parse_number(&x, text, NULL, 0), MP_OK);
	fmt_round_ctl ctl = { .mode = mode, .saturate = sat };
	unsigned fl;
	uint32_t b = fmt_round_num(fmt_get(id), &ctl, &x, &fl);
	if (flags)
		*flags = fl;
	fmt_num_clear(&x);
	return b;
}

/* fp6 and fp4: beyond max and +-inf saturate to +-max in every mode; NaN
 * has no encoding (FMT_FLAG_INVALID, a reason naming it). */
START_TEST(mx_saturate_and_nan)
{
	static const struct { fmt_id id; uint32_t max, neg_max; } f[] = {
		{ FMT_E3M2, 0x1f, 0x3f }, { FMT_E2M3, 0x1f, 0x3f }, { FMT_E2M1, 0x7, 0xf } };
	static const char *const big[] = { "1000", "inf", "1e300", "29", "7.75" };
	for (size_t i = 0; i < 3; i++)
		for (int m = 0; m < FMT_MODE_COUNT; m++)
			for (size_t k = 0; k < sizeof big / sizeof big[0]; k++) {
				if (f[i].id == FMT_E3M2 && !strcmp(big[k], "7.75"))
					continue;   /* 7.75 is within fp6-e3m2's range */
				char neg[32];
				snprintf(neg, sizeof neg, "-%s", big[k]);
				unsigned fl;
				ck_assert_uint_eq(rnd(f[i].id, big[k], (fmt_mode)m, false, &fl), f[i].max);
				ck_assert(!(fl & FMT_FLAG_INVALID));
				ck_assert_uint_eq(rnd(f[i].id, neg, (fmt_mode)m, false, NULL), f[i].neg_max);
			}
	/* 6.5 lies between fp4's 6 and the 8 it would have: rounds up, saturates */
	ck_assert_uint_eq(rnd(FMT_E2M1, "7", FMT_RNE, false, NULL), 0x7);
	ck_assert_uint_eq(rnd(FMT_E2M1, "5", FMT_RNE, false, NULL), 0x6);   /* tie 4|6 -> 4 (0x6 even) */
	ck_assert_uint_eq(rnd(FMT_E2M1, "5", FMT_RNA, false, NULL), 0x7);
	ck_assert_uint_eq(rnd(FMT_E2M1, "0.25", FMT_RNE, false, NULL), 0x0);   /* tie 0|0.5 -> 0 */
	ck_assert_uint_eq(rnd(FMT_E2M1, "0.75", FMT_RNE, false, NULL), 0x2);   /* tie 0.5|1 -> 1 */
	ck_assert_uint_eq(rnd(FMT_E2M1, "2.5", FMT_RNE, false, NULL), 0x4);    /* tie 2|3 -> 2 */
	for (size_t i = 0; i < 3; i++) {
		unsigned fl;
		ck_assert_uint_eq(rnd(f[i].id, "nan", FMT_RNE, false, &fl), 0);
		ck_assert(fl & FMT_FLAG_INVALID);
		ck_assert_uint_eq(fmt_round_double(fmt_get(f[i].id), &(fmt_round_ctl){ .mode = FMT_SR }, NAN, &fl), 0);
		ck_assert(fl & FMT_FLAG_INVALID);
		ck_assert_ptr_nonnull(strstr(fmt_invalid_reason(fmt_get(f[i].id), true, false, false), "no NaN"));
	}
}
END_TEST

/* Signed zero: zero keeps its sign; fp4 -0 is 0x8; a negative value that
 * rounds to zero is -0. */
START_TEST(signed_zero)
{
	ck_assert_uint_eq(rnd(FMT_E2M1, "-0", FMT_RNE, false, NULL), 0x8);
	ck_assert_uint_eq(rnd(FMT_E2M1, "0", FMT_RNE, false, NULL), 0x0);
	ck_assert_uint_eq(rnd(FMT_E2M1, "-0.2", FMT_RNE, false, NULL), 0x8);
	ck_assert_uint_eq(rnd(FMT_E2M1, "-0.2", FMT_UP, false, NULL), 0x8);     /* toward +inf: -0 */
	ck_assert_uint_eq(rnd(FMT_E2M1, "-0.2", FMT_DOWN, false, NULL), 0x9);   /* -0.5 */
	ck_assert_uint_eq(rnd(FMT_E3M2, "-0.01", FMT_RTZ, false, NULL), 0x20);
	ck_assert_uint_eq(rnd(FMT_E2M3, "-1e-9", FMT_RNE, false, NULL), 0x20);
	ck_assert_uint_eq(rnd(FMT_E3M2, "-0", FMT_SR, false, NULL), 0x20);
}
END_TEST

/* FNUZ: -0 and negatives that round to zero give 0x00; overflow gives NaN
 * 0x80 unless saturate; +-inf and NaN give 0x80. */
START_TEST(fnuz_rules)
{
	for (int m = 0; m < FMT_MODE_COUNT; m++) {
		for (fmt_id id = FMT_E4M3FNUZ; id <= FMT_E5M2FNUZ; id++) {
			ck_assert_uint_eq(rnd(id, "-0", (fmt_mode)m, false, NULL), 0x00);
			ck_assert_uint_eq(rnd(id, "-0", (fmt_mode)m, true, NULL), 0x00);
			ck_assert_uint_eq(rnd(id, "nan", (fmt_mode)m, false, NULL), 0x80);
			ck_assert_uint_eq(rnd(id, "inf", (fmt_mode)m, false, NULL), 0x80);
			ck_assert_uint_eq(rnd(id, "-inf", (fmt_mode)m, false, NULL), 0x80);
			ck_assert_uint_eq(rnd(id, "inf", (fmt_mode)m, true, NULL), 0x7f);
			ck_assert_uint_eq(rnd(id, "-inf", (fmt_mode)m, true, NULL), 0xff);
			/* away from zero: DOWN, RTO (the last bit set), and SR and SR-EQUAL with
			 * rbits 0 (up iff 0 < ceil(frac * 2^32), and 0 < 2^31) */
			ck_assert_uint_eq(rnd(id, "-1e-30", (fmt_mode)m, false, NULL),
			                  (m == FMT_DOWN || m == FMT_SR || m == FMT_RTO || m == FMT_SR_EQUAL ? 0x81u : 0x00u));
		}
	}
	/* e4m3fnuz: max 240 = 1.111b * 2^7; 248 is the tie with 256 (odd max -> up) */
	ck_assert_uint_eq(rnd(FMT_E4M3FNUZ, "247.9", FMT_RNE, false, NULL), 0x7f);
	ck_assert_uint_eq(rnd(FMT_E4M3FNUZ, "248", FMT_RNE, false, NULL), 0x80);
	ck_assert_uint_eq(rnd(FMT_E4M3FNUZ, "-248", FMT_RNE, false, NULL), 0x80);
	ck_assert_uint_eq(rnd(FMT_E4M3FNUZ, "-248", FMT_RNE, true, NULL), 0xff);
	ck_assert_uint_eq(rnd(FMT_E4M3FNUZ, "1000", FMT_RTZ, false, NULL), 0x7f);
	ck_assert_uint_eq(rnd(FMT_E4M3FNUZ, "-1000", FMT_UP, false, NULL), 0xff);
	ck_assert_uint_eq(rnd(FMT_E4M3FNUZ, "-1000", FMT_DOWN, false, NULL), 0x80);
	/* min subnormal 2^-10; half of it is a tie with 0 -> 0, even for -2^-11 */
	ck_assert_uint_eq(rnd(FMT_E4M3FNUZ, "-2^-11", FMT_RNE, false, NULL), 0x00);
	ck_assert_uint_eq(rnd(FMT_E4M3FNUZ, "-3*2^-12", FMT_RNE, false, NULL), 0x81);
	ck_assert_uint_eq(rnd(FMT_E4M3FNUZ, "1", FMT_RNE, false, NULL), 0x40);   /* exponent 8 = bias */
	ck_assert_uint_eq(rnd(FMT_E5M2FNUZ, "1", FMT_RNE, false, NULL), 0x40);
	ck_assert_uint_eq(rnd(FMT_E5M2FNUZ, "61440", FMT_RNE, false, NULL), 0x80);   /* tie 57344|65536 */
	ck_assert_uint_eq(rnd(FMT_E5M2FNUZ, "-61439", FMT_RNE, false, NULL), 0xff);
}
END_TEST

/* e8m0: a power of two in the mode (ties to the even pattern), no zero, no
 * sign, 0xff NaN. */
START_TEST(e8m0_rules)
{
	static const struct { const char *x; fmt_mode m; uint32_t bits; } cases[] = {
		{ "1", FMT_RNE, 0x7f }, { "2^127", FMT_RNE, 0xfe }, { "2^-127", FMT_RNE, 0x00 },
		{ "3", FMT_RNE, 0x80 },     /* tie 2 (0x80, even) | 4 (0x81) */
		{ "1.5", FMT_RNE, 0x80 },   /* tie 1 (0x7f, odd) | 2 (0x80) */
		{ "3", FMT_RNA, 0x81 }, { "1.5", FMT_RNA, 0x80 },
		{ "3", FMT_RTZ, 0x80 }, { "3", FMT_DOWN, 0x80 }, { "3", FMT_UP, 0x81 },
		{ "2.9", FMT_RNE, 0x80 }, { "3.1", FMT_RNE, 0x81 }, { "0.3", FMT_RNE, 0x7d },
		{ "2^-128", FMT_RNE, 0x00 }, { "2^-128", FMT_RTZ, 0x00 }, { "1e-300", FMT_DOWN, 0x00 },
		{ "3*2^126", FMT_RNE, 0xfe },   /* tie 2^127 (0xfe even) | 2^128 (none) */
		{ "3*2^126", FMT_UP, 0xff },    /* past 2^127: NaN */
		{ "2^128", FMT_RTZ, 0xfe }, { "2^128", FMT_RNE, 0xff }, { "inf", FMT_RNE, 0xff }, { "nan", FMT_RNE, 0xff },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unsigned fl;
		ck_assert_msg(rnd(FMT_E8M0, cases[i].x, cases[i].m, false, &fl) == cases[i].bits, "%s %s", cases[i].x,
		              fmt_mode_name(cases[i].m));
		ck_assert(!(fl & FMT_FLAG_INVALID));
	}
	ck_assert_uint_eq(rnd(FMT_E8M0, "inf", FMT_RNE, true, NULL), 0xfe);
	ck_assert_uint_eq(rnd(FMT_E8M0, "2^200", FMT_RNE, true, NULL), 0xfe);
	static const char *const invalid[] = { "0", "-0", "-1", "-2^-130", "-inf" };
	for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
		for (int m = 0; m < FMT_MODE_COUNT; m++) {
			unsigned fl;
			ck_assert_uint_eq(rnd(FMT_E8M0, invalid[i], (fmt_mode)m, true, &fl), 0xff);
			ck_assert_msg(fl == FMT_FLAG_INVALID, "%s", invalid[i]);
		}
	const fmt_info *f = fmt_get(FMT_E8M0);
	ck_assert_ptr_nonnull(strstr(fmt_invalid_reason(f, false, true, false), "no zero"));
	ck_assert_ptr_nonnull(strstr(fmt_invalid_reason(f, false, false, true), "unsigned"));
	/* SR at 3 = 2 + half the gap to 4: up iff rbits < 2^31 */
	fmt_round_ctl ctl = { .mode = FMT_SR, .rbits = 0x7fffffffu };
	ck_assert_uint_eq(fmt_round_double(f, &ctl, 3.0, NULL), 0x81);
	ctl.rbits = 0x80000000u;
	ck_assert_uint_eq(fmt_round_double(f, &ctl, 3.0, NULL), 0x80);
}
END_TEST

/* --- bulk kernels against the scalar functions --- */

static uint32_t scalar_bits(fmt_id id, fmt_mode mode, bool sat, uint32_t r, float v)
{
	fmt_round_ctl ctl = { .mode = mode, .saturate = sat, .rbits = r };
	return fmt_round_double(fmt_get(id), &ctl, (double)v, NULL);
}

/* fp32 value of a pattern as the bulk decode gives it: NaN canonical */
static uint32_t decoded32(const small_spec *s, uint32_t b)
{
	double v = small_value(s, b);
	return isnan(v) ? 0x7fc00000u : f2u((float)v);
}

/* Inputs: a stride through all fp32 patterns, each value of the format, the
 * fp32 neighbours of each tie, and the specials. */
static size_t bulk_inputs(const small_spec *s, float *in)
{
	size_t n = 0;
	for (uint32_t i = 0; i < 65536; i++)
		in[n++] = u2f(i * 65521u + 7u);
	for (uint32_t b = 0; b < small_max_bits(s); b++) {
		float lo = (float)small_value(s, b), hi = (float)small_value(s, b + 1), mid = (lo + hi) / 2;
		float t[] = { lo, mid, nextafterf(mid, 0), nextafterf(mid, INFINITY), -mid, -nextafterf(mid, INFINITY) };
		for (size_t k = 0; k < sizeof t / sizeof t[0]; k++)
			in[n++] = t[k];
	}
	static const uint32_t sp[] = { 0, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u,
	                               0x7f7fffffu, 0xff7fffffu, 0x00000001u, 0x80000001u, 0x007fffffu, 0x00400000u,
	                               0x7f000000u, 0x43780000u, 0xc3780000u, 0x47700000u, 0x3f800000u };
	for (size_t k = 0; k < sizeof sp / sizeof sp[0]; k++)
		in[n++] = u2f(sp[k]);
	return n;
}

START_TEST(bulk_every_path)
{
	const small_spec *s = &SPECS[_i];
	float *in = malloc(70000 * sizeof *in), *x = malloc(70000 * sizeof *x);
	uint8_t *out = malloc(70000);
	size_t n = bulk_inputs(s, in);
	ck_assert_uint_eq(fmt_bulk_elem_size(s->id), 1);
	for (int p = 0; p < FMT_SIMD_COUNT; p++) {
		fmt_bulk_opts o = { .fmt = s->id, .mode = FMT_RNE };
		if (!fmt_simd_available((fmt_simd)p)) {
			ck_assert_int_eq(fmt_bulk_encode((fmt_simd)p, &o, out, in, n), MP_EUNSUPPORTED);
			continue;
		}
		for (int v = 0; v < 4; v++) {
			o.mode = v < 2 ? FMT_RNE : FMT_SR;
			o.saturate = v & 1;
			o.seed = 12345;
			o.index0 = 0xffffffffull - 1000;   /* crosses a 2^32 block of the SR stream */
			ck_assert_int_eq(fmt_bulk_encode((fmt_simd)p, &o, out, in, n), MP_OK);
			memcpy(x, in, n * sizeof *x);
			ck_assert_int_eq(fmt_bulk_quantize((fmt_simd)p, &o, x, n), MP_OK);
			for (size_t i = 0; i < n; i++) {
				uint32_t r = o.mode == FMT_SR ? rng_bits(o.seed, o.index0 + i) : 0;
				uint32_t want = scalar_bits(s->id, o.mode, o.saturate, r, in[i]);
				ck_assert_msg(out[i] == want, "%s %s %s sat %d: 0x%08x -> 0x%02x, want 0x%02x", s->name,
				              fmt_simd_name((fmt_simd)p), fmt_mode_name(o.mode), o.saturate, f2u(in[i]), out[i],
				              want);
				ck_assert_msg(f2u(x[i]) == decoded32(s, want), "%s quantize 0x%08x", s->name, f2u(in[i]));
			}
		}
		uint8_t all[256];
		float dec[256];
		for (int b = 0; b < 256; b++)
			all[b] = (uint8_t)(b & ((1u << s->width) - 1));
		ck_assert_int_eq(fmt_bulk_decode((fmt_simd)p, s->id, dec, all, 256), MP_OK);
		for (int b = 0; b < 256; b++)
			ck_assert_uint_eq(f2u(dec[b]), decoded32(s, all[b]));
	}
	free(in);
	free(x);
	free(out);
}
END_TEST

/* accumulate: x = q(x + u), and the Kahan form, against the scalar rule. */
START_TEST(bulk_accumulate)
{
	const small_spec *s = &SPECS[_i];
	enum { N = 4096 };
	float x[N], x0[N], u[N], c[N], c0[N];
	for (size_t i = 0; i < N; i++) {
		uint32_t r = rng_bits(99, i);
		x0[i] = (float)small_value(s, r % small_max_bits(s));
		u[i] = (float)ldexp((double)(int32_t)rng_bits(98, i), -34) * (float)s->min_normal * 8;
		c0[i] = (float)ldexp((double)(int32_t)rng_bits(97, i), -40) * (float)s->min_normal;
	}
	for (int p = 0; p < FMT_SIMD_COUNT; p++) {
		if (!fmt_simd_available((fmt_simd)p))
			continue;
		for (int v = 0; v < 4; v++) {
			fmt_bulk_opts o = { .fmt = s->id, .mode = v & 1 ? FMT_SR : FMT_RNE, .seed = 4, .index0 = 77 };
			bool kahan = v >= 2;
			memcpy(x, x0, sizeof x);
			memcpy(c, c0, sizeof c);
			size_t same;
			ck_assert_int_eq(fmt_bulk_accumulate((fmt_simd)p, &o, x, kahan ? c : NULL, u, N, &same), MP_OK);
			size_t want_same = 0;
			for (size_t i = 0; i < N; i++) {
				uint32_t r = o.mode == FMT_SR ? rng_bits(o.seed, o.index0 + i) : 0;
				float want, wc = c0[i];
				if (kahan) {
					float y = u[i] - c0[i];
					want = u2f(decoded32(s, scalar_bits(s->id, o.mode, false, r, x0[i] + y)));
					wc = u2f(decoded32(s, scalar_bits(s->id, FMT_RNE, false, 0, (want - x0[i]) - y)));
				} else {
					want = u2f(decoded32(s, scalar_bits(s->id, o.mode, false, r, x0[i] + u[i])));
				}
				ck_assert_msg(f2u(x[i]) == f2u(want), "%s accumulate %zu", s->name, i);
				if (kahan)
					ck_assert_msg(f2u(c[i]) == f2u(wc), "%s comp %zu", s->name, i);
				want_same += want == x0[i];
			}
			ck_assert_uint_eq(same, want_same);
		}
	}
}
END_TEST

static Suite *round_small_suite(void)
{
	Suite *s = suite_create("round_small");
	TCase *tc = tcase_create("oracle");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, every_mode, 0, NSPECS);
	suite_add_tcase(s, tc);
	tc = tcase_create("rules");
	tcase_add_test(tc, mx_saturate_and_nan);
	tcase_add_test(tc, signed_zero);
	tcase_add_test(tc, fnuz_rules);
	tcase_add_test(tc, e8m0_rules);
	suite_add_tcase(s, tc);
	tc = tcase_create("bulk");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, bulk_every_path, 0, NSPECS);
	tcase_add_loop_test(tc, bulk_accumulate, 0, NSPECS);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(round_small_suite());
}
