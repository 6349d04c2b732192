/* MXINT8 on blocks derived by hand. The element, as OCP MX v1.0 defines
 * INT8 and microsoft/microxcaling (commit 3b429a84, mx/formats.py) encodes
 * it: "int8: ebits, mbits = 0, 8; emax = 0", max_norm = 2^emax *
 * (2^(mbits-1) - 1) / 2^(mbits-2) = 127 / 64 = 1.984375: two's complement
 * int8 codes standing for code x 2^-6, clamped to +-max_norm. The scale is
 * the OCP rule's X = 2^(floor(log2 amax) - emax_elem) with emax_elem = 0;
 * an element is V / X in units of 2^-6, rounded to an integer. */
#include "quant_fixture.h"

#include "fmt/format.h"

/* {1.5, -0.7, 0.01, -2, 2.5}: amax 2.5, floor(log2 2.5) = 1, X = 2 (e8m0
 * 0x80). 1.5 / 2 = 0.75 = 48 / 64: 0x30; -0.7 / 2 * 64 = -22.4 -> -22 =
 * 0xea, value -22 / 32 = -0.6875; 0.01 / 2 * 64 = 0.32 -> 0 (flushed); -2
 * / 2 * 64 = -64 = 0xc0; 2.5 / 2 * 64 = 80 = 0x50. */
START_TEST(mxint8_block)
{
	static const char *const v[] = { "1.5", "-0.7", "0.01", "-2", "2.5" };
	quant_result r;
	ck_assert(run(QUANT_MXINT8, QUANT_RULE_OCP, FMT_RNE, 0, v, 5, &r) == MP_OK);
	expect_scale(&r, 0, 0x80, 2);
	expect_elem(&r, 0, 0x30, 1.5, 0);
	expect_elem(&r, 1, 0xea, -0.6875, 0);
	expect_elem(&r, 2, 0x00, 0, QUANT_FLUSHED);
	expect_elem(&r, 3, 0xc0, -2, 0);
	expect_elem(&r, 4, 0x50, 2.5, 0);
	quant_result_free(&r);
	/* ceil: ceil(log2(2.5 / 1.984375)) = ceil(0.333) = 1, the same X;
	 * torchao-ceil: ceil(log2 2.5) - 0 = 2: X = 4, 2.5 / 4 * 64 = 40 = 0x28 */
	ck_assert(run(QUANT_MXINT8, QUANT_RULE_CEIL, FMT_RNE, 0, v, 5, &r) == MP_OK);
	expect_scale(&r, 0, 0x80, 2);
	quant_result_free(&r);
	ck_assert(run(QUANT_MXINT8, QUANT_RULE_TCEIL, FMT_RNE, 0, v, 5, &r) == MP_OK);
	expect_scale(&r, 0, 0x81, 4);
	expect_elem(&r, 4, 0x28, 2.5, 0);
	quant_result_free(&r);
}
END_TEST

/* Saturation, symmetric: amax 1.9921875 = 127.5 / 64, floor(log2) = 0, X =
 * 1: 127.5 is the tie between 127 and 128, which rounds to even 128, past
 * 127: saturated to 127 (0x7f); -127.5 rounds to -128, which int8 holds
 * (0x80) but the element saturates at -127 (0x81), as microxcaling clamps
 * to -max_norm. 509 / 256 = 127.25 / 64 rounds down to 127 unsaturated. The even rule
 * rounds amax 1.9921875 = (2 - 2^-7) * 2^0 to 2 (mbits 6): X = 2, 63.75 ->
 * 64 = 0x40. rceil: 1.9921875 / 1.984375 = 1.0039, ceil(log2) = 1, X = 2. */
START_TEST(mxint8_saturation)
{
	static const char *const v[] = { "1.9921875", "-1.9921875", "509/256", "-1" };
	quant_result r;
	ck_assert(run(QUANT_MXINT8, QUANT_RULE_OCP, FMT_RNE, 0, v, 4, &r) == MP_OK);
	expect_scale(&r, 0, 0x7f, 1);
	expect_elem(&r, 0, 0x7f, 1.984375, QUANT_SATURATED);
	expect_elem(&r, 1, 0x81, -1.984375, QUANT_SATURATED);
	expect_elem(&r, 2, 0x7f, 1.984375, 0);
	expect_elem(&r, 3, 0xc0, -1, 0);
	quant_result_free(&r);
	ck_assert(run(QUANT_MXINT8, QUANT_RULE_EVEN, FMT_RNE, 0, v, 4, &r) == MP_OK);
	expect_scale(&r, 0, 0x80, 2);
	expect_elem(&r, 0, 0x40, 2, 0);
	expect_elem(&r, 1, 0xc0, -2, 0);
	quant_result_free(&r);
	ck_assert(run(QUANT_MXINT8, QUANT_RULE_RCEIL, FMT_RNE, 0, v, 4, &r) == MP_OK);
	expect_scale(&r, 0, 0x80, 2);
	quant_result_free(&r);
}
END_TEST

/* The clamp and the zero block: {2^-130, 2^-140}: floor(log2) = -130 ->
 * -127 (0x00); units 2^-133: 2^-130 is 8 (0x08), 2^-140 is 2^-7 -> 0
 * (flushed). {0, -0}: X = 2^-127, elements 0 (no -0 in int8). {2^200}:
 * 200 -> 127 (0xfe), 2^200 / 2^121 saturates at 127. */
START_TEST(mxint8_clamp_and_zero)
{
	static const char *const lo[] = { "2^-130", "2^-140" }, *const z[] = { "0", "-0" }, *const hi[] = { "2^200" };
	quant_result r;
	ck_assert(run(QUANT_MXINT8, QUANT_RULE_OCP, FMT_RNE, 0, lo, 2, &r) == MP_OK);
	expect_scale(&r, 0, 0x00, 0x1p-127);
	ck_assert(r.blocks[0].clamped);
	expect_elem(&r, 0, 0x08, 0x1p-130, 0);
	expect_elem(&r, 1, 0x00, 0, QUANT_FLUSHED);
	quant_result_free(&r);
	ck_assert(run(QUANT_MXINT8, QUANT_RULE_OCP, FMT_RNE, 0, z, 2, &r) == MP_OK);
	expect_scale(&r, 0, 0x00, 0x1p-127);
	expect_elem(&r, 0, 0x00, 0, 0);
	expect_elem(&r, 1, 0x00, 0, 0);
	quant_result_free(&r);
	ck_assert(run(QUANT_MXINT8, QUANT_RULE_OCP, FMT_RNE, 0, hi, 1, &r) == MP_OK);
	expect_scale(&r, 0, 0xfe, 0x1p127);
	expect_elem(&r, 0, 0x7f, 127 * 0x1p121, QUANT_SATURATED);
	quant_result_free(&r);
}
END_TEST

/* The table row and decoding: 0x80 is -2 x X, 0x7f is 127/64 x X, 0x01 is
 * 2^-6 x X; 8 + 8/32 = 8.25 bits per element. The bulk path gives the
 * bytes of quant_run on every SIMD path (the first block above). */
START_TEST(mxint8_row_and_bulk)
{
	const quant_info *q = quant_find("MXINT8");
	ck_assert(q && q->id == QUANT_MXINT8 && q->emax_elem == 0 && q->block == 32);
	ck_assert(quant_elem_max(q) == 1.984375);
	ck_assert(quant_decode(q, 0x80, 0x7f, 1) == -2);
	ck_assert(quant_decode(q, 0x7f, 0x80, 1) == 2 * 1.984375);
	ck_assert(quant_decode(q, 0x01, 0x7f, 1) == 0x1p-6);
	ck_assert(quant_bits_per_elem(q, 0) == 8.25);
	float v[5] = { 1.5f, -0.7f, 0.01f, -2, 2.5f }, w[2] = { -1.9921875f, 1.9921875f };
	static const uint8_t want[5] = { 0x30, 0xea, 0x00, 0xc0, 0x50 };
	quant_opts o = { .fmt = QUANT_MXINT8, .rule = QUANT_RULE_OCP, .mode = FMT_RNE };
	for (int p = 0; p < FMT_SIMD_COUNT; p++) {
		if (!fmt_simd_available((fmt_simd)p))
			continue;
		uint8_t e[5], s;
		ck_assert(quant_bulk((fmt_simd)p, &o, 0, 0, e, &s, v, 5, NULL) == MP_OK);
		ck_assert(s == 0x80 && memcmp(e, want, 5) == 0);
		ck_assert(quant_bulk((fmt_simd)p, &o, 0, 0, e, &s, w, 2, NULL) == MP_OK);
		ck_assert_msg(s == 0x7f && e[0] == 0x81 && e[1] == 0x7f, "%02x %02x %02x", s, e[0], e[1]);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("quant_mxint8");
	TCase *tc = tcase_create("quant_mxint8");
	tcase_add_test(tc, mxint8_block);
	tcase_add_test(tc, mxint8_saturation);
	tcase_add_test(tc, mxint8_clamp_and_zero);
	tcase_add_test(tc, mxint8_row_and_bulk);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
