/* quant/ (block-scaled quantization) on blocks worked out by hand: each
 * expected scale and element is derived in the comment beside it from the
 * rules in quant/quant.h, never taken from the program. */
#include <math.h>
#include <string.h>

#include "fmt/decode.h"
#include "fmt/parse.h"
#include "quant/quant.h"
#include "quant_fixture.h"

/* One block, amax 500, e4m3 (max 448, emax_elem 8). ocp: floor(log2 500) =
 * 8, X = 2^(8-8) = 1, e8m0 0x7f; 500 saturates to 448 (0x7e). ceil: 500 /
 * 448 = 1.116, ceil(log2) = 1, X = 2 (0x80): 250 lies above the midpoint
 * 248 of 240 and 256, so 256 (0x78), the value 512: nothing saturates, and
 * 1 / 2 = 2^-1 (0x30) shows the binade the ceil rule gives away. */
START_TEST(mx_e4m3_floor_saturates_ceil_does_not)
{
	static const char *const v[] = { "500", "1", "-3", "0.1" };
	quant_result r;
	ck_assert(run(QUANT_MXFP8_E4M3, QUANT_RULE_OCP, FMT_RNE, 0, v, 4, &r) == MP_OK);
	ck_assert(r.nblocks == 1 && r.blocks[0].count == 4 && r.opts.block == 32);
	expect_scale(&r, 0, 0x7f, 1.0);
	expect_elem(&r, 0, 0x7e, 448, QUANT_SATURATED);
	expect_elem(&r, 1, 0x38, 1, 0);          /* 2^0: exponent field 7 */
	expect_elem(&r, 2, 0xc4, -3, 0);         /* -1.5 * 2^1: field 8, fraction 100 */
	/* 0.1 = 1.6 * 2^-4: 1.6 * 8 = 12.8 -> 13, so 1.625 * 2^-4, field 3, fraction 101 */
	expect_elem(&r, 3, 0x1d, 0.1015625, 0);
	ck_assert(r.blocks[0].nsaturated == 1 && r.nsaturated == 1 && r.nflushed == 0);
	/* ||value - V|| / ||V||: errors 52, 0, 0, 0.0015625 over 500, 1, -3, 0.1 */
	double want = sqrt((52.0 * 52 + 0.0015625 * 0.0015625) / (500.0 * 500 + 1 + 9 + 0.01));
	ck_assert_msg(fabs(r.blocks[0].rel_error - want) < 1e-12 * want, "rel_error %.17g, want %.17g",
	              r.blocks[0].rel_error, want);
	ck_assert(fabs(r.rel_error - want) < 1e-12 * want);
	quant_result_free(&r);

	ck_assert(run(QUANT_MXFP8_E4M3, QUANT_RULE_CEIL, FMT_RNE, 0, v, 4, &r) == MP_OK);
	expect_scale(&r, 0, 0x80, 2.0);
	expect_elem(&r, 0, 0x78, 512, 0);        /* 256 = 2^8: field 15 */
	expect_elem(&r, 1, 0x30, 1, 0);          /* 0.5: field 6 */
	expect_elem(&r, 2, 0xbc, -3, 0);         /* -1.5: field 7, fraction 100 */
	expect_elem(&r, 3, 0x15, 0.1015625, 0);  /* 0.05 = 1.6 * 2^-5 -> 1.625 * 2^-5: field 2 */
	ck_assert(r.nsaturated == 0);
	quant_result_free(&r);
}
END_TEST

/* e5m2 (max 57344 = 1.75 * 2^15, emax_elem 15). ocp: floor(log2 1000) = 9,
 * X = 2^-6 (e8m0 121 = 0x79): 1000 * 64 = 64000 > 57344 saturates (0x7b,
 * value 57344 / 64 = 896); 0.001 * 64 = 0.064 = 1.024 * 2^-4 -> 1.0 * 2^-4
 * (field 11: 0x2c, value 2^-10). ceil: 1000 / 57344 = 2^-5.84, ceil -5, X
 * = 2^-5 (0x7a): 1000 * 32 = 32000 = 1.953 * 2^14 -> 2^15 (the next up,
 * 1.75 * 2^14 = 28672, is farther): field 30, 0x78, value 1024. */
START_TEST(mx_e5m2_rules)
{
	static const char *const v[] = { "1000", "0.001" };
	quant_result r;
	ck_assert(run(QUANT_MXFP8_E5M2, QUANT_RULE_OCP, FMT_RNE, 0, v, 2, &r) == MP_OK);
	expect_scale(&r, 0, 0x79, 0x1p-6);
	expect_elem(&r, 0, 0x7b, 896, QUANT_SATURATED);
	expect_elem(&r, 1, 0x2c, 0x1p-10, 0);
	quant_result_free(&r);
	ck_assert(run(QUANT_MXFP8_E5M2, QUANT_RULE_CEIL, FMT_RNE, 0, v, 2, &r) == MP_OK);
	expect_scale(&r, 0, 0x7a, 0x1p-5);
	expect_elem(&r, 0, 0x78, 1024, 0);
	/* 0.001 * 32 = 0.032 = 1.024 * 2^-5 -> 2^-5: field 10, 0x28, value 2^-10 */
	expect_elem(&r, 1, 0x28, 0x1p-10, 0);
	quant_result_free(&r);
}
END_TEST

/* An all-zero block: X = 2^-127, e8m0 0x00, under both rules; zeros keep
 * their sign (e4m3 -0 is 0x80). */
START_TEST(mx_all_zero_block)
{
	static const char *const v[] = { "0", "-0", "0/5" };
	for (int rule = 0; rule < QUANT_RULE_COUNT; rule++) {
		quant_result r;
		ck_assert(run(QUANT_MXFP8_E4M3, (quant_rule)rule, FMT_RNE, 0, v, 3, &r) == MP_OK);
		expect_scale(&r, 0, 0x00, 0x1p-127);
		ck_assert(!r.blocks[0].clamped && r.blocks[0].rel_error == 0);
		expect_elem(&r, 0, 0x00, 0.0, 0);
		expect_elem(&r, 1, 0x80, -0.0, 0);
		expect_elem(&r, 2, 0x00, 0.0, 0);
		quant_result_free(&r);
	}
}
END_TEST

/* The clamp: 2^-130 gives floor - 8 = -138 -> -127 (0x00), element 2^-3
 * (field 4: 0x20); 2^140 gives 132 -> 127 (0xfe), 2^13 saturates to 448
 * (0x7e); ceil on e5m2: 2^-200 / 57344 = 2^-215.8 -> -215 -> -127. */
START_TEST(mx_clamp)
{
	quant_result r;
	static const char *const lo[] = { "2^-130" };
	ck_assert(run(QUANT_MXFP8_E4M3, QUANT_RULE_OCP, FMT_RNE, 0, lo, 1, &r) == MP_OK);
	expect_scale(&r, 0, 0x00, 0x1p-127);
	ck_assert(r.blocks[0].clamped && r.blocks[0].scale_exp == -127);
	expect_elem(&r, 0, 0x20, 0x1p-130, 0);
	quant_result_free(&r);
	static const char *const hi[] = { "2^140", "-2^139" };
	ck_assert(run(QUANT_MXFP8_E4M3, QUANT_RULE_OCP, FMT_RNE, 0, hi, 2, &r) == MP_OK);
	expect_scale(&r, 0, 0xfe, 0x1p127);
	ck_assert(r.blocks[0].clamped);
	expect_elem(&r, 0, 0x7e, 448 * 0x1p127, QUANT_SATURATED);
	expect_elem(&r, 1, 0xfe, -448 * 0x1p127, QUANT_SATURATED);
	quant_result_free(&r);
	static const char *const tiny[] = { "2^-200" };
	ck_assert(run(QUANT_MXFP8_E5M2, QUANT_RULE_CEIL, FMT_RNE, 0, tiny, 1, &r) == MP_OK);
	ck_assert(r.blocks[0].clamped && r.blocks[0].scale_bits == 0);
	/* 2^-200 / 2^-127 = 2^-73: below half of e5m2's 2^-16, flushed to 0 */
	expect_elem(&r, 0, 0x00, 0.0, QUANT_FLUSHED);
	quant_result_free(&r);
}
END_TEST

/* Inputs beyond binary64's range. 1e400 (about 2^1328.8) and 1: floor(log2)
 * - 2 clamps to 127, 1e400 / 2^127 saturates to 6 (0x7), 1 / 2^127 flushes;
 * ||value - V||^2 / ||V||^2 = ((1e400 - 6 * 2^127)^2 + 1) / (1e800 + 1),
 * 1 minus about 1e-361: 1 in binary64 (1e400 itself is beyond binary64).
 * 1e-400 and 3e-400: X = 2^-127, both flush to zero, so the error is
 * ||V|| / ||V|| = 1 exactly (both inputs are 0 in binary64). */
START_TEST(beyond_binary64)
{
	static const char *const big[] = { "1e400", "1" }, *const tiny[] = { "1e-400", "3e-400" };
	quant_result r;
	ck_assert(run(QUANT_MXFP4, QUANT_RULE_OCP, FMT_RNE, 0, big, 2, &r) == MP_OK);
	expect_scale(&r, 0, 0xfe, 0x1p127);
	expect_elem(&r, 0, 0x7, 6 * 0x1p127, QUANT_SATURATED);
	expect_elem(&r, 1, 0x0, 0, QUANT_FLUSHED);
	ck_assert(r.blocks[0].amax_at == 0 && isinf(r.blocks[0].amax));
	ck_assert_msg(r.blocks[0].rel_error == 1.0 && r.rel_error == 1.0, "rel_error %.17g, %.17g",
	              r.blocks[0].rel_error, r.rel_error);
	quant_result_free(&r);
	for (int nv = 0; nv < 2; nv++) {
		ck_assert(run(nv ? QUANT_NVFP4 : QUANT_MXFP4, QUANT_RULE_OCP, FMT_RNE, 0, tiny, 2, &r) == MP_OK);
		ck_assert(r.nflushed == 2 && r.blocks[0].amax_at == 1 && r.blocks[0].amax == 0);
		ck_assert_msg(r.blocks[0].rel_error == 1.0 && r.rel_error == 1.0, "%s: rel_error %.17g, %.17g",
		              nv ? "nvfp4" : "mxfp4", r.blocks[0].rel_error, r.rel_error);
		quant_result_free(&r);
	}
}
END_TEST

/* --block 2 over three values: a short last block with its own scale.
 * {4, 1}: X = 2^(2-8) = 2^-6 (0x79): 256 (field 15, 0x78), 64 (field 13,
 * 0x68). {3}: X = 2^(1-8) = 2^-7 (0x78): 384 = 1.5 * 2^8 (0x7c). */
START_TEST(mx_short_last_block)
{
	static const char *const v[] = { "4", "1", "3" };
	quant_result r;
	ck_assert(run(QUANT_MXFP8_E4M3, QUANT_RULE_OCP, FMT_RNE, 2, v, 3, &r) == MP_OK);
	ck_assert(r.nblocks == 2 && r.blocks[0].count == 2 && r.blocks[1].begin == 2 && r.blocks[1].count == 1);
	expect_scale(&r, 0, 0x79, 0x1p-6);
	expect_scale(&r, 1, 0x78, 0x1p-7);
	expect_elem(&r, 0, 0x78, 4, 0);
	expect_elem(&r, 1, 0x68, 1, 0);
	expect_elem(&r, 2, 0x7c, 3, 0);
	quant_result_free(&r);
}
END_TEST

/* Bad inputs and options: inf and NaN name their index; the block size,
 * the mode and the format are checked. */
START_TEST(errors)
{
	static const char *const v[] = { "1", "2", "-inf" };
	quant_result r;
	ck_assert(run(QUANT_MXFP8_E4M3, QUANT_RULE_OCP, FMT_RNE, 0, v, 3, &r) == MP_EINVAL);
	ck_assert(r.bad == 2 && strstr(qf_err, "inf"));
	quant_result_free(&r);
	ck_assert(run(QUANT_MXFP8_E4M3, QUANT_RULE_OCP, FMT_RTZ, 0, v, 2, &r) == MP_EINVAL);
	quant_result_free(&r);
	ck_assert(run(QUANT_MXFP8_E4M3, QUANT_RULE_OCP, FMT_RNE, QUANT_BLOCK_MAX + 1, v, 2, &r) == MP_EINVAL);
	quant_result_free(&r);
	ck_assert(run(QUANT_MXFP8_E4M3, QUANT_RULE_OCP, FMT_RNE, 0, v, 0, &r) == MP_OK && r.nblocks == 0);
	quant_result_free(&r);
	ck_assert(quant_find("MXFP8-E4M3") == quant_get(QUANT_MXFP8_E4M3) && !quant_find("mxfp9"));
	quant_rule rule;
	ck_assert(quant_rule_parse("CEIL", &rule) == MP_OK && rule == QUANT_RULE_CEIL);
	ck_assert(quant_rule_parse("round", &rule) == MP_EINVAL);
}
END_TEST

/* SR: 1.0375 = 83/80 in blocks whose amax it is: X = 2^(0-8), the scaled
 * value 265.6 lies between 256 and 288 (e4m3's spacing 32 in [256, 512)),
 * 9.6 / 32 = 0.3 of the gap above 256, so it rounds up with probability
 * 0.3 (to within 2^-32). Over N = 4096 elements the share that rounds up
 * has standard deviation sqrt(0.3 * 0.7 / N) = 0.00716; 5 of them bound it (a false alarm has
 * probability below 1e-6, and the seed is fixed). Every element is one of
 * the two neighbours, the run is reproducible, and another seed differs. */
START_TEST(mx_sr_unbiased)
{
	enum { N = 4096 };
	static const char *v[N];
	for (size_t i = 0; i < N; i++)
		v[i] = "1.0375";
	quant_result r, r2;
	ck_assert(run(QUANT_MXFP8_E4M3, QUANT_RULE_OCP, FMT_SR, 0, v, N, &r) == MP_OK);
	size_t up = 0;
	for (size_t i = 0; i < N; i++) {
		double e = r.elems[i].value;
		ck_assert_msg(e == 1.0 || e == 1.125, "element %zu = %g", i, e);   /* 256 or 288 times 2^-8 */
		up += e == 1.125;
	}
	double share = (double)up / N, sd = sqrt(0.3 * 0.7 / N);
	ck_assert_msg(fabs(share - 0.3) < 5 * sd, "share rounded up %g, want 0.3 +- %g", share, 5 * sd);
	ck_assert(run(QUANT_MXFP8_E4M3, QUANT_RULE_OCP, FMT_SR, 0, v, N, &r2) == MP_OK);
	ck_assert(memcmp(r.elems, r2.elems, N * sizeof *r.elems) == 0);
	quant_result_free(&r2);
	/* another seed: the same rule, different draws */
	for (size_t i = 0; i < N; i++) {
		fmt_num_init(&xs[i]);
		fmt_parse_number(&xs[i], v[i], NULL, 0);
	}
	quant_opts o = { .fmt = QUANT_MXFP8_E4M3, .mode = FMT_SR, .seed = 2 };
	ck_assert(quant_run(&o, xs, N, &r2, NULL, 0) == MP_OK);
	for (size_t i = 0; i < N; i++)
		fmt_num_clear(&xs[i]);
	size_t diff = 0;
	for (size_t i = 0; i < N; i++)
		diff += r.elems[i].bits != r2.elems[i].bits;
	ck_assert(diff > 0);
	quant_result_free(&r);
	quant_result_free(&r2);
}
END_TEST

/* Bits per element, scales included: MXFP8 8 + 8/32 = 8.25; decode of an
 * MX element: e4m3 0x7e (448) x 2^(0x80 - 127) = 896, and 0xff is e8m0's NaN. */
START_TEST(bits_and_decode)
{
	const quant_info *q = quant_get(QUANT_MXFP8_E4M3);
	ck_assert(quant_bits_per_elem(q, 0) == 8.25 && quant_bits_per_elem(q, 16) == 8.5);
	ck_assert(quant_decode(q, 0x7e, 0x80, 1) == 896);
	ck_assert(quant_decode(q, 0xfe, 0x7d, 1) == -112);
	ck_assert(isnan(quant_decode(q, 0x38, 0xff, 1)));
}
END_TEST

/* The e4m3 scale values against values by hand (0x7e = 1.75 x 2^8 = 448;
 * 0x08 the min normal 2^-6; 0x01 the min subnormal 2^-9; 0xb9 = -1.125)
 * and against fmt's decoder for every code, -0 and the NaNs included. */
START_TEST(e4m3_values)
{
	ck_assert(quant_e4m3_value(0x7e) == 448 && quant_e4m3_value(0x08) == 0x1p-6);
	ck_assert(quant_e4m3_value(0x01) == 0x1p-9 && quant_e4m3_value(0xb9) == -1.125);
	ck_assert(isnan(quant_e4m3_value(0x7f)) && isnan(quant_e4m3_value(0xff)));
	const fmt_info *e4 = fmt_get(FMT_E4M3);
	for (uint32_t c = 0; c < 256; c++) {
		double v = quant_e4m3_value(c), w = fmt_to_double(e4, c);
		ck_assert_msg(isnan(w) ? isnan(v) : v == w && signbit(v) == signbit(w), "code 0x%02x: %a, want %a",
		              c, v, w);
	}
}
END_TEST

START_TEST(e8m0_values)
{
	ck_assert(quant_e8m0_value(127) == 1 && quant_e8m0_value(0) == 0x1p-127 && quant_e8m0_value(0xfe) == 0x1p127);
	ck_assert(isnan(quant_e8m0_value(0xff)) && quant_e8m0_value(0x180) == 2);
	const fmt_info *e8 = fmt_get(FMT_E8M0);
	for (uint32_t c = 0; c < 256; c++) {
		double v = quant_e8m0_value(c), w = fmt_to_double(e8, c);
		ck_assert_msg(isnan(w) ? isnan(v) : v == w, "code 0x%02x: %a, want %a", c, v, w);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("quant");
	TCase *tc = tcase_create("quant");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, mx_e4m3_floor_saturates_ceil_does_not);
	tcase_add_test(tc, mx_e5m2_rules);
	tcase_add_test(tc, mx_all_zero_block);
	tcase_add_test(tc, mx_clamp);
	tcase_add_test(tc, beyond_binary64);
	tcase_add_test(tc, mx_short_last_block);
	tcase_add_test(tc, errors);
	tcase_add_test(tc, mx_sr_unbiased);
	tcase_add_test(tc, bits_and_decode);
	tcase_add_test(tc, e4m3_values);
	tcase_add_test(tc, e8m0_values);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
