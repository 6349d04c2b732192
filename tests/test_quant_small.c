/* quant/ below 8 bits: MXFP6 (e3m2, e2m3), MXFP4 (e2m1) and NVFP4 on
 * blocks worked out by hand (each derivation in the comment beside it). */
#include <math.h>
#include <string.h>

#include "fmt/parse.h"
#include "quant/quant.h"
#define QF_SEED 3
#include "quant_fixture.h"

/* MXFP4 (e2m1: 0, 0.5, 1, 1.5, 2, 3, 4, 6; emax_elem 2). amax 7: ocp
 * floor(log2 7) - 2 = 0, X = 1 (0x7f): 7 saturates to 6 (0x7); -0.3 lies
 * above the midpoint 0.25 of 0 and 0.5: -0.5 (0x9); 0.25 is that midpoint,
 * to the even code 0 (flushed); -0.1 is -0 (0x8, flushed). ceil: 7 / 6 =
 * 1.17, X = 2 (0x80): 3.5 is the midpoint of 3 (code 5) and 4 (code 6): 4,
 * value 8; 0.5 (0x1) value 1; -0.15 -> -0; 0.125 -> 0; -0.05 -> -0. */
START_TEST(mxfp4_rules)
{
	static const char *const v[] = { "7", "1", "-0.3", "0.25", "-0.1" };
	quant_result r;
	ck_assert(run(QUANT_MXFP4, QUANT_RULE_OCP, FMT_RNE, 0, v, 5, &r) == MP_OK);
	expect_scale(&r, 0, 0x7f, 1);
	expect_elem(&r, 0, 0x7, 6, QUANT_SATURATED);
	expect_elem(&r, 1, 0x2, 1, 0);
	expect_elem(&r, 2, 0x9, -0.5, 0);
	expect_elem(&r, 3, 0x0, 0, QUANT_FLUSHED);
	expect_elem(&r, 4, 0x8, -0.0, QUANT_FLUSHED);
	ck_assert(r.nsaturated == 1 && r.nflushed == 2);
	quant_result_free(&r);
	ck_assert(run(QUANT_MXFP4, QUANT_RULE_CEIL, FMT_RNE, 0, v, 5, &r) == MP_OK);
	expect_scale(&r, 0, 0x80, 2);
	expect_elem(&r, 0, 0x6, 8, 0);
	expect_elem(&r, 1, 0x1, 1, 0);
	expect_elem(&r, 2, 0x8, -0.0, QUANT_FLUSHED);
	expect_elem(&r, 3, 0x0, 0, QUANT_FLUSHED);
	expect_elem(&r, 4, 0x8, -0.0, QUANT_FLUSHED);
	quant_result_free(&r);
}
END_TEST

/* Saturation means the nearest value lies past the largest. e2m1 with X = 1
 * (amax 7.01: floor(log2) = 2 = emax_elem): 6.5 and 6.99 round down onto 6
 * (the next value past 6 would be 8, the midpoint 7); 7 is that midpoint,
 * whose even neighbour is 8 (6 = 1.1 x 2^2 is odd): saturated; 7.01 too.
 * e4m3 with X = 1 (amax 500, floor(log2) = 8): 448 = 1.110 x 2^8 is even,
 * so the midpoint 464 of 448 and 480 rounds onto 448, unsaturated; 464.5
 * and 500 saturate. */
START_TEST(saturation_is_past_the_nearest)
{
	static const char *const v4[] = { "6.5", "6.99", "7", "7.01" };
	quant_result r;
	ck_assert(run(QUANT_MXFP4, QUANT_RULE_OCP, FMT_RNE, 4, v4, 4, &r) == MP_OK);
	expect_scale(&r, 0, 0x7f, 1);
	expect_elem(&r, 0, 0x7, 6, 0);
	expect_elem(&r, 1, 0x7, 6, 0);
	expect_elem(&r, 2, 0x7, 6, QUANT_SATURATED);
	expect_elem(&r, 3, 0x7, 6, QUANT_SATURATED);
	ck_assert(r.nsaturated == 2);
	quant_result_free(&r);
	static const char *const v8[] = { "450", "464", "464.5", "500" };
	ck_assert(run(QUANT_MXFP8_E4M3, QUANT_RULE_OCP, FMT_RNE, 4, v8, 4, &r) == MP_OK);
	expect_scale(&r, 0, 0x7f, 1);
	expect_elem(&r, 0, 0x7e, 448, 0);
	expect_elem(&r, 1, 0x7e, 448, 0);
	expect_elem(&r, 2, 0x7e, 448, QUANT_SATURATED);
	expect_elem(&r, 3, 0x7e, 448, QUANT_SATURATED);
	quant_result_free(&r);
	/* the thresholds themselves */
	double thr;
	bool up;
	quant_overflow_threshold(fmt_get(FMT_E2M1), &thr, &up);
	ck_assert(thr == 7 && up);
	quant_overflow_threshold(fmt_get(FMT_E4M3), &thr, &up);
	ck_assert(thr == 464 && !up);
	quant_overflow_threshold(fmt_get(FMT_E5M2), &thr, &up);
	ck_assert(thr == 61440 && up);
}
END_TEST

/* MXFP6 e3m2 (bias 3, max 28 = 1.75 * 2^4, emax_elem 4). ocp: 30 -> X = 1:
 * saturates to 28 (field 7, fraction 11: 0x1f); 0.3 = 1.2 * 2^-2 -> 1.25 *
 * 2^-2 (field 1, fraction 01: 0x05). ceil: 30 / 28 -> X = 2: 15 = 1.875 *
 * 2^3, the midpoint of 1.75 * 2^3 (fraction 11) and 2^4 (even): 16 (field
 * 7, 0x1c), value 32; 0.15 is below the min normal 2^-2: on the grid 2^-4,
 * 0.15 / 0.0625 = 2.4 -> 2 (0x02), value 0.125 * 2. */
START_TEST(mxfp6_e3m2_rules)
{
	static const char *const v[] = { "30", "0.3" };
	quant_result r;
	ck_assert(run(QUANT_MXFP6_E3M2, QUANT_RULE_OCP, FMT_RNE, 0, v, 2, &r) == MP_OK);
	expect_scale(&r, 0, 0x7f, 1);
	expect_elem(&r, 0, 0x1f, 28, QUANT_SATURATED);
	expect_elem(&r, 1, 0x05, 0.3125, 0);
	quant_result_free(&r);
	ck_assert(run(QUANT_MXFP6_E3M2, QUANT_RULE_CEIL, FMT_RNE, 0, v, 2, &r) == MP_OK);
	expect_scale(&r, 0, 0x80, 2);
	expect_elem(&r, 0, 0x1c, 32, 0);
	expect_elem(&r, 1, 0x02, 0.25, 0);
	quant_result_free(&r);
}
END_TEST

/* MXFP6 e2m3 (bias 1, max 7.5 = 1.875 * 2^2, emax_elem 2). ocp: amax 7.9
 * -> X = 1: -7.9 saturates to -7.5 (0x3f); 1.0625 is the midpoint of 1
 * (fraction 000, even) and 1.125: 1 (0x08). ceil: 7.9 / 7.5 -> X = 2:
 * 3.95 = 1.975 * 2, 0.975 * 8 = 7.8 -> 8, a carry to 4 (field 3, 0x38):
 * value -8; 0.53125 is below the min normal 1: on the grid 0.125, 4.25 ->
 * 4 (0x04), value 1. */
START_TEST(mxfp6_e2m3_rules)
{
	static const char *const v[] = { "-7.9", "1.0625" };
	quant_result r;
	ck_assert(run(QUANT_MXFP6_E2M3, QUANT_RULE_OCP, FMT_RNE, 0, v, 2, &r) == MP_OK);
	expect_scale(&r, 0, 0x7f, 1);
	expect_elem(&r, 0, 0x3f, -7.5, QUANT_SATURATED);
	expect_elem(&r, 1, 0x08, 1, 0);
	quant_result_free(&r);
	ck_assert(run(QUANT_MXFP6_E2M3, QUANT_RULE_CEIL, FMT_RNE, 0, v, 2, &r) == MP_OK);
	expect_scale(&r, 0, 0x80, 2);
	expect_elem(&r, 0, 0x38, -8, 0);
	expect_elem(&r, 1, 0x04, 1, 0);
	quant_result_free(&r);
}
END_TEST

/* NVFP4, one block: amax 6, s_t = fp32(6 / 2688) = fp32(1/448) = 2^-9 *
 * 8/7 rounded to 24 bits: 8/7 = 1.001001001...b, the 25th bit and more are
 * 1001... (above half), so up: fraction 0x124925, pattern 0x3b124925, a
 * hair above 1/448. s_b = e4m3(6 / (6 s_t)) = e4m3(1 / s_t), a hair below
 * 448: 448 (0x7e). D = 448 s_t, a hair above 1: 6 / D -> 6 (above the
 * midpoint 5), 1 / D -> 1, -0.3 / D -> -0.5 (above 0.25), 0 -> 0. */
START_TEST(nvfp4_one_block)
{
	static const char *const v[] = { "6", "1", "-0.3", "0" };
	quant_result r;
	ck_assert(run(QUANT_NVFP4, QUANT_RULE_OCP, FMT_RNE, 0, v, 4, &r) == MP_OK);
	ck_assert(r.opts.block == 16 && r.nblocks == 1);
	ck_assert_msg(r.tensor_scale_bits == 0x3b124925u, "s_t 0x%08x", r.tensor_scale_bits);
	double st = 0x1.24924ap-9;   /* (2^23 + 0x124925) * 2^-32 */
	ck_assert(r.tensor_scale == st);
	expect_scale(&r, 0, 0x7e, 448);
	expect_elem(&r, 0, 0x7, 6 * 448 * st, 0);
	expect_elem(&r, 1, 0x2, 448 * st, 0);
	expect_elem(&r, 2, 0x9, -0.5 * 448 * st, 0);
	expect_elem(&r, 3, 0x0, 0, 0);
	quant_result_free(&r);
}
END_TEST

/* NVFP4 with --block 4 and amax_tensor 2688: s_t = 1 exactly.
 * block 0 {2688, 0, 0, 0}: s_b = e4m3(448) = 0x7e; 2688 / 448 = 6 (0x7).
 * block 1 {6, 1.25, 0.25, 5}: s_b = 1 (0x38), D = 1: 6; 1.25 is the
 *   midpoint of 1 (code 2) and 1.5 (code 3): 1 (0x2); 0.25: 0 (flushed);
 *   5, the midpoint of 4 (6) and 6 (7): 4 (0x6).
 * block 2 {1.75, 2.5, 3.5, 0.75}: s_b = e4m3(3.5 / 6 = 0.5833): the e4m3
 *   neighbours 0.5625 and 0.625, nearer 0.5625 (field 6, fraction 001:
 *   0x31). 1.75 / 0.5625 = 3.11 -> 3 (0x5); 2.5 / 0.5625 = 4.44 -> 4
 *   (0x6); 3.5 / 0.5625 = 6.22 saturates to 6 (0x7): s_b rounded down;
 *   0.75 / 0.5625 = 1.33 -> 1.5 (0x3).
 * block 3 {6, 1.75, 2.5, 3.5}: D = 1, ties to even codes: 2 (0x4), 2
 *   (0x4), 4 (0x6).
 * block 4 {6, 0.75, -0.75, -5}: 0.75 the midpoint of 0.5 (1) and 1 (2): 1
 *   (0x2), -1 (0xa), -5 -> -4 (0xe).
 * block 5 {2^-11, -2^-11, 0, -0}: s_b = e4m3(2^-11 / 6), below half the
 *   smallest e4m3 subnormal 2^-9: 0 (0x00), the elements 0 with their
 *   signs: 0x0, 0x8 (both flushed), 0x0, 0x8. */
START_TEST(nvfp4_blocks)
{
	static const char *const v[] = { "2688", "0", "0", "0", "6", "1.25", "0.25", "5",
		                         "1.75", "2.5", "3.5", "0.75", "6", "1.75", "2.5", "3.5",
		                         "6", "0.75", "-0.75", "-5", "2^-11", "-2^-11", "0", "-0" };
	quant_result r;
	ck_assert(run(QUANT_NVFP4, QUANT_RULE_OCP, FMT_RNE, 4, v, 24, &r) == MP_OK);
	ck_assert(r.tensor_scale_bits == 0x3f800000u && r.nblocks == 6);
	expect_scale(&r, 0, 0x7e, 448);
	expect_elem(&r, 0, 0x7, 2688, 0);
	expect_scale(&r, 1, 0x38, 1);
	expect_elem(&r, 4, 0x7, 6, 0);
	expect_elem(&r, 5, 0x2, 1, 0);
	expect_elem(&r, 6, 0x0, 0, QUANT_FLUSHED);
	expect_elem(&r, 7, 0x6, 4, 0);
	expect_scale(&r, 2, 0x31, 0.5625);
	expect_elem(&r, 8, 0x5, 3 * 0.5625, 0);
	expect_elem(&r, 9, 0x6, 4 * 0.5625, 0);
	/* 3.5 / 0.5625 = 6.22: rounds down onto 6, nearer than the 8 past it */
	expect_elem(&r, 10, 0x7, 6 * 0.5625, 0);
	expect_elem(&r, 11, 0x3, 1.5 * 0.5625, 0);
	expect_elem(&r, 13, 0x4, 2, 0);
	expect_elem(&r, 14, 0x4, 2, 0);
	expect_elem(&r, 15, 0x6, 4, 0);
	expect_elem(&r, 17, 0x2, 1, 0);
	expect_elem(&r, 18, 0xa, -1, 0);
	expect_elem(&r, 19, 0xe, -4, 0);
	expect_scale(&r, 5, 0x00, 0);
	expect_elem(&r, 20, 0x0, 0, QUANT_FLUSHED);
	expect_elem(&r, 21, 0x8, -0.0, QUANT_FLUSHED);
	expect_elem(&r, 22, 0x0, 0, 0);
	expect_elem(&r, 23, 0x8, -0.0, 0);
	quant_result_free(&r);
}
END_TEST

/* SR of nvfp4 elements: blocks {2688, 537.6 x 15}: s_t = 1, s_b = 448,
 * 537.6 / 448 = 1.2, 0.4 of the gap from 1 to 1.5: up with probability
 * 0.4. Over N = 256 * 15 = 3840 elements the share up has standard
 * deviation sqrt(0.4 * 0.6 / N) = 0.0079; 5 of them bound it. */
START_TEST(nvfp4_sr_unbiased)
{
	enum { NB = 256, N = NB * 16 };
	static const char *v[N];
	for (size_t i = 0; i < N; i++)
		v[i] = i % 16 ? "537.6" : "2688";
	quant_result r;
	ck_assert(run(QUANT_NVFP4, QUANT_RULE_OCP, FMT_SR, 0, v, N, &r) == MP_OK);
	size_t up = 0, n = 0;
	for (size_t i = 0; i < N; i++) {
		if (i % 16 == 0)
			continue;
		ck_assert_msg(r.elems[i].bits == 0x2 || r.elems[i].bits == 0x3, "element %zu: 0x%x", i, r.elems[i].bits);
		up += r.elems[i].bits == 0x3;
		n++;
	}
	double share = (double)up / (double)n, sd = sqrt(0.4 * 0.6 / (double)n);
	ck_assert_msg(fabs(share - 0.4) < 5 * sd, "share up %g, want 0.4 +- %g", share, 5 * sd);
	quant_result_free(&r);
}
END_TEST

/* The tensor scale must be an fp32: 1e42 / 2688 = 3.7e38 > 3.4028e38. */
START_TEST(nvfp4_tensor_scale_overflow)
{
	static const char *const v[] = { "1", "-1e42", "2" };
	quant_result r;
	ck_assert(run(QUANT_NVFP4, QUANT_RULE_OCP, FMT_RNE, 0, v, 3, &r) == MP_EINVAL);
	ck_assert(r.bad == 1 && strstr(qf_err, "tensor scale"));
	quant_result_free(&r);
}
END_TEST

/* Bits per element, scales included (MXFP4 4 + 8/32, NVFP4 4 + 8/16, MXFP6
 * 6 + 8/32), and decoding: nvfp4 0x9 (-0.5) x e4m3 0x31 (0.5625) x 2. */
START_TEST(small_bits_and_decode)
{
	ck_assert(quant_bits_per_elem(quant_get(QUANT_MXFP4), 0) == 4.25);
	ck_assert(quant_bits_per_elem(quant_get(QUANT_NVFP4), 0) == 4.5);
	ck_assert(quant_bits_per_elem(quant_get(QUANT_MXFP6_E3M2), 0) == 6.25);
	ck_assert(quant_decode(quant_get(QUANT_NVFP4), 0x9, 0x31, 2) == -0.5625);
	ck_assert(quant_decode(quant_get(QUANT_MXFP4), 0x7, 0x7d, 1) == 1.5);
	ck_assert(quant_find("NVFP4") == quant_get(QUANT_NVFP4) && quant_find("mxfp4") == quant_get(QUANT_MXFP4));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("quant_small");
	TCase *tc = tcase_create("quant_small");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, mxfp4_rules);
	tcase_add_test(tc, mxfp6_e3m2_rules);
	tcase_add_test(tc, mxfp6_e2m3_rules);
	tcase_add_test(tc, nvfp4_one_block);
	tcase_add_test(tc, nvfp4_blocks);
	tcase_add_test(tc, saturation_is_past_the_nearest);
	tcase_add_test(tc, nvfp4_sr_unbiased);
	tcase_add_test(tc, nvfp4_tensor_scale_overflow);
	tcase_add_test(tc, small_bits_and_decode);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
