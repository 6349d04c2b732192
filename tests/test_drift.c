/* The drift simulation against outcomes derived by hand from the formats. */
#include <math.h>

#include "drift/drift.h"
#include "drift/drift_update.h"
#include "testutil.h"

static void run(const drift_params *p, drift_state st[DRIFT_VARIANT_COUNT])
{
	drift_sim *s;
	ck_assert_int_eq(drift_create(&s, p, NULL, 0), MP_OK);
	ck_assert_uint_eq(drift_advance(s, p->steps), p->steps);
	drift_snapshot(s, st);
	drift_free(s);
}

START_TEST(constant_half_at_600)
{
	/* bf16 spacing in [512, 1024) is 4: 600 + 0.5 rounds back to 600 every time.
	 * In fp32 every partial sum 600 + 0.5k (< 1024) is exact. 400 steps keep
	 * the values below 1024, where the bf16 spacing would double. */
	drift_params p = { .elements = 256, .steps = 400, .x0 = 600, .dist = DRIFT_DIST_CONSTANT,
	                   .mean = 0.5, .std = 0, .seed = 3 };
	drift_state st[DRIFT_VARIANT_COUNT];
	run(&p, st);
	ck_assert(st[DRIFT_FP64].drift == 200.0);
	ck_assert(st[DRIFT_FP32].drift == 200.0 && st[DRIFT_FP32].retained == 1.0);
	ck_assert(st[DRIFT_BF16_RNE].mean == 600.0 && st[DRIFT_BF16_RNE].retained == 0.0);
	ck_assert(st[DRIFT_BF16_RNE].unchanged_frac == 1.0);
	ck_assert(st[DRIFT_FP32].unchanged_frac == 0.0);
	/* SR: each step moves +4 with p = 0.5/4 = 1/8, else 0: mean 0.5, variance
	 * 16 * (1/8)(7/8) = 1.75 per step; over T steps and E values the mean
	 * drift has standard error sqrt(1.75 T / E). */
	double se = sqrt(1.75 * 400 / 256);
	ck_assert_msg(fabs(st[DRIFT_BF16_SR].drift - 200.0) < 4 * se, "sr drift %g, se %g",
	              st[DRIFT_BF16_SR].drift, se);
	/* SR leaves the value unchanged in about 7/8 of the updates */
	ck_assert(fabs(st[DRIFT_BF16_SR].unchanged_frac - 0.875) < 0.01);
	/* Kahan carries the lost part: within one spacing (4) of the exact drift */
	ck_assert_msg(fabs(st[DRIFT_BF16_KAHAN].drift - 200.0) <= 4.0, "kahan drift %g",
	              st[DRIFT_BF16_KAHAN].drift);
	/* fp16 spacing in [512, 1024) is 0.5: every update lands exactly */
	ck_assert(st[DRIFT_FP16_RNE].drift == 200.0);
}
END_TEST

START_TEST(small_updates_to_one)
{
	/* 0.001 added 1,000 times to 1.0: the bf16 spacing above 1 is 2^-7, so
	 * 1 + 0.001 rounds back to 1 every time; fp64 sums float(0.001) exactly. */
	drift_params p = { .elements = 8, .steps = 1000, .x0 = 1.0, .dist = DRIFT_DIST_CONSTANT,
	                   .mean = 0.001, .std = 0, .seed = 0 };
	drift_state st[DRIFT_VARIANT_COUNT];
	run(&p, st);
	ck_assert(st[DRIFT_BF16_RNE].mean == 1.0);
	ck_assert(fabs(st[DRIFT_FP64].drift - 1000.0 * (double)0.001f) < 1e-12);
	ck_assert(fabs(st[DRIFT_FP32].retained - 1.0) < 1e-4);
}
END_TEST

START_TEST(updates_identical_and_distributed)
{
	drift_params p = drift_defaults();
	p.dist = DRIFT_DIST_NORMAL;
	p.mean = 0.5;
	p.std = 0.5;
	p.elements = 1000;
	/* the same (step, element) always gives the same update */
	ck_assert(drift_update_value(&p, 7, 11) == drift_update_value(&p, 7, 11));
	ck_assert(drift_update_value(&p, 7, 11) != drift_update_value(&p, 7, 12));
	/* sample mean and variance of 10^5 updates: within 4 standard errors */
	double sum = 0, sq = 0;
	size_t n = 100000;
	for (size_t i = 0; i < n; i++) {
		double u = drift_update_value(&p, i / 1000, i % 1000);
		sum += u;
		sq += u * u;
	}
	double mean = sum / (double)n, var = sq / (double)n - mean * mean;
	ck_assert_msg(fabs(mean - 0.5) < 4 * 0.5 / sqrt((double)n), "mean %g", mean);
	/* the variance of a sample variance of a normal: 2 sigma^4 / n */
	ck_assert_msg(fabs(var - 0.25) < 4 * sqrt(2.0 * 0.0625 / (double)n), "var %g", var);
	p.dist = DRIFT_DIST_UNIFORM;
	sum = sq = 0;
	for (size_t i = 0; i < n; i++) {
		double u = drift_update_value(&p, i / 1000, i % 1000);
		ck_assert(u >= 0.5 - 0.5 * sqrt(3.0) - 1e-6 && u <= 0.5 + 0.5 * sqrt(3.0) + 1e-6);
		sum += u;
		sq += u * u;
	}
	mean = sum / (double)n;
	var = sq / (double)n - mean * mean;
	ck_assert(fabs(mean - 0.5) < 4 * 0.5 / sqrt((double)n));
	ck_assert(fabs(var - 0.25) < 0.01);
}
END_TEST

START_TEST(normal_run_and_fp32_tracks_fp64)
{
	drift_params p = drift_defaults();
	p.elements = 100;
	p.steps = 2000;
	drift_state st[DRIFT_VARIANT_COUNT];
	run(&p, st);
	/* fp32 near 600..1600 rounds each sum to 2^-14..2^-13: the mean error stays tiny */
	ck_assert(fabs(st[DRIFT_FP32].retained - 1.0) < 1e-4);
	/* bf16 rne swallows every |u| < 2 except when u is large: most drift is lost */
	ck_assert(st[DRIFT_BF16_RNE].retained < 0.1);
	ck_assert(fabs(st[DRIFT_BF16_SR].retained - 1.0) < 0.05);
	ck_assert(fabs(st[DRIFT_BF16_KAHAN].retained - 1.0) < 0.01);
	/* a second run with the same seed is identical */
	drift_state again[DRIFT_VARIANT_COUNT];
	run(&p, again);
	for (int v = 0; v < DRIFT_VARIANT_COUNT; v++)
		ck_assert(again[v].mean == st[v].mean);
	/* a start that bf16 cannot store is stored rounded: 10000 -> 9984 (spacing 64) */
	p.x0 = 10000;
	p.steps = 1;
	run(&p, st);
	ck_assert(st[DRIFT_BF16_RNE].start == 9984.0);
	ck_assert(st[DRIFT_FP32].start == 10000.0);
}
END_TEST

START_TEST(own_log_and_cos_against_libm)
{
	/* The draw's own log and cos (shared with the GPU kernel) against libm's
	 * on the inputs the draw uses, (k + 1) 2^-32, and on the edges: log
	 * within 2 ulp relative, cos within 2^-51 absolute; long double libm
	 * cos is the oracle for cos(2 pi u), whose argument double rounds. */
	const long double two_pi = 6.283185307179586476925286766559005768L;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint32_t k = (uint32_t)x;
		if (i < 4)
			k = i < 2 ? (uint32_t)i : 0xffffffffu - (uint32_t)(i - 2);
		double u = ((double)k + 1.0) * 0x1p-32;
		double l = log(u);
		if (l == 0)
			ck_assert(drift_log(u) == 0);
		else
			ck_assert_msg(fabs(drift_log(u) - l) <= 2 * 0x1p-52 * fabs(l), "log(%a): %a vs %a", u,
			              drift_log(u), l);
		double c = (double)cosl(two_pi * (long double)u);
		ck_assert_msg(fabs(drift_cos2pi(u) - c) <= 0x1p-51, "cos(2 pi %a): %a vs %a", u, drift_cos2pi(u), c);
	}
	/* exact points of the reduction: quarter turns */
	ck_assert(drift_cos2pi(0.25) == 0 && drift_cos2pi(0.5) == -1 && drift_cos2pi(1.0) == 1);
	ck_assert(drift_log(1.0) == 0 && drift_log(0.5) == -0.69314718055994530942);
}
END_TEST

START_TEST(bad_parameters)
{
	drift_sim *s;
	drift_params p = drift_defaults();
	p.elements = 0;
	ck_assert_int_eq(drift_create(&s, &p, NULL, 0), MP_EINVAL);
	p = drift_defaults();
	p.x0 = NAN;
	ck_assert_int_eq(drift_create(&s, &p, NULL, 0), MP_EINVAL);
	drift_dist d;
	ck_assert_int_eq(drift_dist_parse("gaussian", &d), MP_EINVAL);
	ck_assert(drift_dist_parse("Normal", &d) == MP_OK && d == DRIFT_DIST_NORMAL);
}
END_TEST

static Suite *drift_suite(void)
{
	Suite *s = suite_create("drift");
	TCase *tc = tcase_create("sim");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, constant_half_at_600);
	tcase_add_test(tc, small_updates_to_one);
	tcase_add_test(tc, updates_identical_and_distributed);
	tcase_add_test(tc, normal_run_and_fp32_tracks_fp64);
	tcase_add_test(tc, bad_parameters);
	tcase_add_test(tc, own_log_and_cos_against_libm);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(drift_suite());
}
