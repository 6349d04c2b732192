/* Stochastic rounding in fmt_round_num: the magnitude rule checked by hand
 * on bf16 around 1 + 2^-9 (sr and sr-equal), the bias of sr-equal, and the
 * statistics of SR against the GNU MPFR
 * oracle's neighbours and probability (tests/mpfr_oracle.h): for a few
 * values of every format, the mean of many rounded results lies within
 * four standard errors of the exact value, and two seeds give different
 * streams. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <gmp.h>
#include <mpfr.h>

#include "fmt/format.h"
#include "fmt/parse.h"
#include "fmt/round.h"
#include "mpfr_oracle.h"
#include "util/rng.h"
#include "util/status.h"
#include "testutil.h"

enum { SR_SAMPLES = 100000 };

/* --- the SR rule by hand --- */

/* bf16 around 1 + 2^-9: neighbours 1 (0x3f80) and 1 + 2^-7 (0x3f81), so the
 * magnitude lies 1/4 of the gap past the neighbour toward zero, for x and -x:
 * away from zero iff rbits < 2^30. */
START_TEST(test_sr_rule_by_hand)
{
	static const struct {
		const char *text;
		uint32_t rbits, bits;
	} cases[] = {
		{ "1.001953125", 0x00000000u, 0x3f81 },
		{ "1.001953125", 0x3fffffffu, 0x3f81 },
		{ "1.001953125", 0x40000000u, 0x3f80 },
		{ "1.001953125", 0xffffffffu, 0x3f80 },
		{ "-1.001953125", 0x00000000u, 0xbf81 },   /* away: -(1 + 2^-7) */
		{ "-1.001953125", 0x3fffffffu, 0xbf81 },
		{ "-1.001953125", 0x40000000u, 0xbf80 },   /* toward zero: -1 */
		{ "-1.001953125", 0xffffffffu, 0xbf80 },
	};
	const fmt_info *f = fmt_get(FMT_BF16);
	int bad = 0;
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		fmt_num x;
		fmt_num_init(&x);
		char err[256];
		ck_assert_int_eq(fmt_parse_number(&x, cases[k].text, err, sizeof err), MP_OK);
		fmt_round_ctl ctl = { .mode = FMT_SR, .rbits = cases[k].rbits };
		uint32_t got = fmt_round_num(f, &ctl, &x, NULL);
		if (got != cases[k].bits) {
			printf("# bf16 sr \"%s\" rbits=0x%08x: expected 0x%04x, got 0x%04x\n",
			       cases[k].text, (unsigned)cases[k].rbits, (unsigned)cases[k].bits,
			       (unsigned)got);
			bad++;
		}
		fmt_num_clear(&x);
	}
	fflush(stdout);
	ck_assert_msg(bad == 0, "%d bf16 sr results break the magnitude rule", bad);
}
END_TEST

/* --- test 3: SR statistics --- */

static const struct {
	fmt_id id;
	const char *text;
} SR_CASES[] = {
	{ FMT_BF16, "0.1" },
	{ FMT_BF16, "1.001953125" },      /* 1 + 2^-9: exactly half a bf16 ulp */
	{ FMT_FP16, "1e-7" },             /* subnormal */
	{ FMT_E4M3, "-0.3" },
	{ FMT_FP32, "1/3" },
	{ FMT_E5M2, "-1e-5" },            /* below the min subnormal */
	{ FMT_TF32, "3.14159265358979" },
	{ FMT_FP16, "-65519" },           /* neighbours max and 65536: up overflows */
};

START_TEST(test_sr_statistics)
{
	fmt_id id = SR_CASES[_i].id;
	const char *text = SR_CASES[_i].text;
	const fmt_info *f = fmt_get(id);
	oracle o;
	oracle_init(&o, id);
	fmt_num x;
	fmt_num_init(&x);
	char err[256];
	ck_assert_int_eq(fmt_parse_number(&x, text, err, sizeof err), MP_OK);
	mpq_t q;
	mpq_init(q);
	mpq_set(q, x.mag);
	if (x.neg)
		mpq_neg(q, q);
	oracle_prepare(&o, x.kind, x.neg, q);
	ck_assert(!o.exact);
	uint32_t lo_bits = oracle_encode(&o, o.lo, FMT_SR, false);
	uint32_t hi_bits = oracle_encode(&o, o.hi, FMT_SR, false);
	double lo = mpfr_get_d(o.lo, MPFR_RNDN), hi = mpfr_get_d(o.hi, MPFR_RNDN);
	double xv = mpq_get_d(q);
	double p = ldexp((double)o.t, -32);   /* P(round up), to 2^-32 */

	static uint32_t stream_a[SR_SAMPLES];
	uint64_t seeds[2] = { 0x0123456789abcdefull, 0x0123456789abcdeeull };
	fmt_round_ctl ctl = { .mode = FMT_SR };
	for (int sd = 0; sd < 2; sd++) {
		long n_hi = 0, n_lo = 0, n_diff = 0;
		for (uint64_t i = 0; i < SR_SAMPLES; i++) {
			ctl.rbits = rng_bits(seeds[sd], i);
			uint32_t got = fmt_round_num(f, &ctl, &x, NULL);
			if (got == hi_bits)
				n_hi++;
			else if (got == lo_bits)
				n_lo++;
			if (sd == 0)
				stream_a[i] = got;
			else if (stream_a[i] != got)
				n_diff++;
		}
		ck_assert_msg(n_hi + n_lo == SR_SAMPLES,
		              "%s sr \"%s\": %ld results are neither 0x%x nor 0x%x", f->name, text,
		              SR_SAMPLES - n_hi - n_lo, (unsigned)lo_bits, (unsigned)hi_bits);
		/* hi may be an overflow (inf): measure the mean on the unbounded grid */
		double mean = lo + (hi - lo) * ((double)n_hi / SR_SAMPLES);
		double se = fabs(hi - lo) * sqrt(p * (1 - p) / SR_SAMPLES);
		printf("# sr %s \"%s\" seed %d: lo %.9g hi %.9g p %.6f, up %ld/%d, mean %.9g, "
		       "exact %.9g, %.2f se\n", f->name, text, sd, lo, hi, p, n_hi, SR_SAMPLES,
		       mean, xv, fabs(mean - xv) / se);
		fflush(stdout);
		ck_assert_msg(fabs(mean - xv) <= 4 * se, "%s sr \"%s\": mean %.12g, exact %.12g, se %.3g",
		              f->name, text, mean, xv, se);
		if (sd == 1)
			ck_assert_msg((double)n_diff > SR_SAMPLES * p * (1 - p),
			              "%s sr \"%s\": seeds give nearly the same stream (%ld differ)",
			              f->name, text, n_diff);
	}
	mpq_clear(q);
	fmt_num_clear(&x);
	oracle_clear(&o);
}
END_TEST

/* --- sr-equal: the rule by hand and its bias --- */

/* bf16 1 + 2^-9 (a quarter of the gap past 1): up iff rbits < 2^31 for x
 * and -x; exact values stay whatever the bits; fp16 1e6 lies past max
 * (65504): inf when the draw goes up, max when not, max saturating. */
START_TEST(test_sr_equal_rule_by_hand)
{
	static const struct {
		fmt_id id;
		const char *text;
		uint32_t rbits, bits;
		bool sat;
	} cases[] = {
		{ FMT_BF16, "1.001953125", 0x00000000u, 0x3f81, false },
		{ FMT_BF16, "1.001953125", 0x7fffffffu, 0x3f81, false },
		{ FMT_BF16, "1.001953125", 0x80000000u, 0x3f80, false },
		{ FMT_BF16, "1.001953125", 0xffffffffu, 0x3f80, false },
		{ FMT_BF16, "-1.001953125", 0x7fffffffu, 0xbf81, false },   /* away from zero */
		{ FMT_BF16, "-1.001953125", 0x80000000u, 0xbf80, false },
		{ FMT_BF16, "1.00390625", 0x7fffffffu, 0x3f81, false },    /* the midpoint: sr's rule too */
		{ FMT_BF16, "1", 0x00000000u, 0x3f80, false },              /* exact */
		{ FMT_FP16, "1e6", 0x00000000u, 0x7c00, false },
		{ FMT_FP16, "1e6", 0x80000000u, 0x7bff, false },
		{ FMT_FP16, "1e6", 0x00000000u, 0x7bff, true },
		{ FMT_FP16, "-1e6", 0x7fffffffu, 0xfc00, false },
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		fmt_num x;
		fmt_num_init(&x);
		ck_assert_int_eq(fmt_parse_number(&x, cases[k].text, NULL, 0), MP_OK);
		fmt_round_ctl ctl = { .mode = FMT_SR_EQUAL, .saturate = cases[k].sat, .rbits = cases[k].rbits };
		uint32_t got = fmt_round_num(fmt_get(cases[k].id), &ctl, &x, NULL);
		ck_assert_msg(got == cases[k].bits, "%s sr-equal \"%s\" rbits 0x%08x: 0x%04x, expected 0x%04x",
		              fmt_get(cases[k].id)->name, cases[k].text, (unsigned)cases[k].rbits, (unsigned)got,
		              (unsigned)cases[k].bits);
		fmt_num_clear(&x);
	}
}
END_TEST

/* sr-equal takes lo and hi with probability 1/2 each, whatever x's place in
 * the gap, so E[result] = (lo + hi) / 2 and the bias E[result] - x =
 * (lo + hi) / 2 - x = (1/2 - f)(hi - lo), f = (x - lo) / (hi - lo): zero
 * only at the midpoint. With N draws the mean has standard error
 * |hi - lo| / (2 sqrt(N)). Checked: the mean lies within four of them of
 * (lo + hi) / 2, and, where the predicted bias exceeds eight of them, more
 * than four from x (proportional SR, test_sr_statistics, is within four). */
START_TEST(test_sr_equal_statistics)
{
	fmt_id id = SR_CASES[_i].id;
	const fmt_info *f = fmt_get(id);
	oracle o;
	oracle_init(&o, id);
	fmt_num x;
	fmt_num_init(&x);
	ck_assert_int_eq(fmt_parse_number(&x, SR_CASES[_i].text, NULL, 0), MP_OK);
	mpq_t q;
	mpq_init(q);
	mpq_set(q, x.mag);
	if (x.neg)
		mpq_neg(q, q);
	oracle_prepare(&o, x.kind, x.neg, q);
	ck_assert(!o.exact);
	uint32_t hi_bits = oracle_encode(&o, o.hi, FMT_SR, false);
	double lo = mpfr_get_d(o.lo, MPFR_RNDN), hi = mpfr_get_d(o.hi, MPFR_RNDN), xv = mpq_get_d(q);
	fmt_round_ctl ctl = { .mode = FMT_SR_EQUAL };
	long n_hi = 0;
	for (uint64_t i = 0; i < SR_SAMPLES; i++) {
		ctl.rbits = rng_bits(0x5eede9a1ull, i);
		n_hi += fmt_round_num(f, &ctl, &x, NULL) == hi_bits;
	}
	double mean = lo + (hi - lo) * ((double)n_hi / SR_SAMPLES);   /* on the unbounded grid */
	double se = fabs(hi - lo) / (2 * sqrt((double)SR_SAMPLES)), bias = (lo + hi) / 2 - xv;
	printf("# sr-equal %s \"%s\": lo %.9g hi %.9g, up %ld/%d, mean %.9g, exact %.9g, predicted bias %.3g "
	       "(%.1f se)\n", f->name, SR_CASES[_i].text, lo, hi, n_hi, SR_SAMPLES, mean, xv, bias, fabs(bias) / se);
	fflush(stdout);
	ck_assert_msg(fabs(mean - (lo + hi) / 2) <= 4 * se, "%s sr-equal: mean %.12g, (lo + hi) / 2 %.12g", f->name,
	              mean, (lo + hi) / 2);
	if (fabs(bias) > 8 * se)
		ck_assert_msg(fabs(mean - xv) > 4 * se, "%s sr-equal: mean %.12g unbiased against x %.12g", f->name,
		              mean, xv);
	mpq_clear(q);
	fmt_num_clear(&x);
	oracle_clear(&o);
}
END_TEST

static Suite *round_mpfr_sr_suite(void)
{
	Suite *s = suite_create("round_mpfr_sr");
	TCase *tc = tcase_create("rule");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_sr_rule_by_hand);
	tcase_add_test(tc, test_sr_equal_rule_by_hand);
	suite_add_tcase(s, tc);
	tc = tcase_create("sr");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_sr_statistics, 0, (int)(sizeof SR_CASES / sizeof SR_CASES[0]));
	tcase_add_loop_test(tc, test_sr_equal_statistics, 0, (int)(sizeof SR_CASES / sizeof SR_CASES[0]));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(round_mpfr_sr_suite());
}
