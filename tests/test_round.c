/* The number parser and the rounding core on cases worked out by hand. */
#include <math.h>
#include <string.h>

#include "fmt/decode.h"
#include "fmt/parse.h"
#include "fmt/round.h"
#include "testutil.h"

/* Parses text and checks it equals num/den exactly (sign included). */
static void expect_value(const char *text, long num, unsigned long den)
{
	fmt_num x;
	fmt_num_init(&x);
	char err[256];
	ck_assert_msg(fmt_parse_number(&x, text, err, sizeof err) == MP_OK, "%s: %s", text, err);
	mpq_t want;
	mpq_init(want);
	mpq_set_si(want, num, den);
	mpq_canonicalize(want);
	mpq_t got;
	mpq_init(got);
	mpq_set(got, x.mag);
	if (x.neg)
		mpq_neg(got, got);
	ck_assert_msg(x.kind == NUM_FINITE && mpq_equal(got, want), "%s", text);
	mpq_clears(want, got, NULL);
	fmt_num_clear(&x);
}

static void expect_error(const char *text, const char *fragment)
{
	fmt_num x;
	fmt_num_init(&x);
	char err[256];
	ck_assert_msg(fmt_parse_number(&x, text, err, sizeof err) == MP_EPARSE, "%s parsed", text);
	ck_assert_msg(strstr(err, fragment) != NULL, "%s: message '%s' lacks '%s'", text, err, fragment);
	fmt_num_clear(&x);
}

START_TEST(parse_forms)
{
	expect_value("0.1", 1, 10);
	expect_value("  -6.5e-5 ", -65, 1000000);
	expect_value("1e3", 1000, 1);
	expect_value(".5", 1, 2);
	expect_value("5.", 5, 1);
	expect_value("0x1.8p1", 3, 1);                 /* 1.5 * 2 */
	expect_value("0x1.99999ap-4", 0x199999a, 1ul << 28);   /* 0x199999a * 2^-24 * 2^-4 */
	expect_value("0x10", 16, 1);
	expect_value("1/3", 1, 3);
	expect_value("-2/-4", 1, 2);
	expect_value("0.5/0.25", 2, 1);
	expect_value("2^-14", 1, 1ul << 14);
	expect_value("3*2^-10", 3, 1024);
	expect_value("-1.5*2^3", -12, 1);
	expect_value("10^-3", 1, 1000);
	fmt_num x;
	fmt_num_init(&x);
	ck_assert(fmt_parse_number(&x, "-inf", NULL, 0) == MP_OK && x.kind == NUM_INF && x.neg);
	ck_assert(fmt_parse_number(&x, "Infinity", NULL, 0) == MP_OK && x.kind == NUM_INF && !x.neg);
	ck_assert(fmt_parse_number(&x, "nan", NULL, 0) == MP_OK && x.kind == NUM_NAN);
	ck_assert(fmt_parse_number(&x, "-0", NULL, 0) == MP_OK && x.neg && mpq_sgn(x.mag) == 0);
	/* an exponent far out of every format's range still parses exactly */
	ck_assert(fmt_parse_number(&x, "1e-4000", NULL, 0) == MP_OK && mpq_sgn(x.mag) > 0);
	fmt_num_clear(&x);
}
END_TEST

START_TEST(parse_errors)
{
	expect_error("", "empty");
	expect_error("   ", "empty");
	expect_error("1e", "exponent has no digits");
	expect_error("1e+", "exponent has no digits");
	expect_error("abc", "not a number");
	expect_error("1.5x", "unexpected 'x'");
	expect_error("1/0", "division by zero");
	expect_error("0x", "no digits");
	expect_error("0x1p", "no digits");
	expect_error("1.5^2", "whole number");
	expect_error("3*2", "expected '^'");
	expect_error("1e999999", "out of range");
	expect_error("--1", "more than one sign");
	expect_error("1..2", "unexpected");
	expect_error("inf5", "not a number");
}
END_TEST

static uint32_t rnd(fmt_id id, const char *text, fmt_mode mode, bool saturate)
{
	fmt_num x;
	fmt_num_init(&x);
	ck_assert(fmt_parse_number(&x, text, NULL, 0) == MP_OK);
	fmt_round_ctl ctl = { .mode = mode, .saturate = saturate };
	uint32_t b = fmt_round_num(fmt_get(id), &ctl, &x, NULL);
	fmt_num_clear(&x);
	return b;
}

START_TEST(round_by_hand)
{
	/* 0.1 = 1.6 * 2^-4; bf16 keeps 7 fraction bits of 0.6 = 0.1001100110011..b:
	 * 1001100|11... rounds up to 1001101 -> 0x3dcd; fp16 keeps 10: 1001100110|011 -> down, 0x2e66 */
	ck_assert_uint_eq(rnd(FMT_BF16, "0.1", FMT_RNE, false), 0x3dcd);
	ck_assert_uint_eq(rnd(FMT_BF16, "0.1", FMT_RTZ, false), 0x3dcc);
	ck_assert_uint_eq(rnd(FMT_FP16, "0.1", FMT_RNE, false), 0x2e66);
	ck_assert_uint_eq(rnd(FMT_FP16, "0.1", FMT_UP, false), 0x2e67);
	ck_assert_uint_eq(rnd(FMT_FP32, "0.1", FMT_RNE, false), 0x3dcccccd);
	ck_assert_uint_eq(rnd(FMT_FP32, "-0.1", FMT_DOWN, false), 0xbdcccccd);
	ck_assert_uint_eq(rnd(FMT_FP32, "-0.1", FMT_UP, false), 0xbdcccccc);
	/* 1 + 2^-8 is the midpoint of 1 and 1 + 2^-7 in bf16 */
	ck_assert_uint_eq(rnd(FMT_BF16, "1", FMT_RNE, false), 0x3f80);
	ck_assert_uint_eq(rnd(FMT_BF16, "257/256", FMT_RNE, false), 0x3f80);   /* tie to even */
	ck_assert_uint_eq(rnd(FMT_BF16, "257/256", FMT_RNA, false), 0x3f81);
	ck_assert_uint_eq(rnd(FMT_BF16, "259/256", FMT_RNE, false), 0x3f82);   /* tie, odd below: up */
	ck_assert_uint_eq(rnd(FMT_BF16, "-257/256", FMT_RNA, false), 0xbf81);
	ck_assert_uint_eq(rnd(FMT_BF16, "-257/256", FMT_DOWN, false), 0xbf81);
	ck_assert_uint_eq(rnd(FMT_BF16, "-257/256", FMT_UP, false), 0xbf80);
	/* the double-rounding trap: binary64 would make this an exact tie */
	ck_assert_uint_eq(rnd(FMT_BF16, "1.00390625000000000001", FMT_RNE, false), 0x3f81);
	ck_assert_uint_eq(rnd(FMT_BF16, "1.00390625", FMT_RNE, false), 0x3f80);
	ck_assert_uint_eq(rnd(FMT_BF16, "1.00390624999999999999", FMT_RNA, false), 0x3f80);
	/* fp16 overflow: max 65504, next would be 65536, threshold 65520 */
	ck_assert_uint_eq(rnd(FMT_FP16, "65519", FMT_RNE, false), 0x7bff);
	ck_assert_uint_eq(rnd(FMT_FP16, "65520", FMT_RNE, false), 0x7c00);
	ck_assert_uint_eq(rnd(FMT_FP16, "1e9", FMT_RTZ, false), 0x7bff);
	ck_assert_uint_eq(rnd(FMT_FP16, "-1e9", FMT_UP, false), 0xfbff);
	ck_assert_uint_eq(rnd(FMT_FP16, "-1e9", FMT_DOWN, false), 0xfc00);
	ck_assert_uint_eq(rnd(FMT_FP16, "1e9", FMT_RNE, true), 0x7bff);
	ck_assert_uint_eq(rnd(FMT_FP16, "-inf", FMT_RNE, true), 0xfbff);
	/* fp16 underflow: min subnormal 2^-24; half of it is a tie to 0 (even) */
	ck_assert_uint_eq(rnd(FMT_FP16, "2^-25", FMT_RNE, false), 0x0000);
	ck_assert_uint_eq(rnd(FMT_FP16, "3*2^-26", FMT_RNE, false), 0x0001);
	ck_assert_uint_eq(rnd(FMT_FP16, "2^-25", FMT_UP, false), 0x0001);
	ck_assert_uint_eq(rnd(FMT_FP16, "-2^-25", FMT_RNE, false), 0x8000);
	ck_assert_uint_eq(rnd(FMT_FP16, "1e-8", FMT_RNE, false), 0x0000);      /* the lesson's gradient */
	ck_assert_uint_eq(rnd(FMT_BF16, "1e-8", FMT_RNE, false) & 0x7fff, 0x322c);  /* 1e-8 ~ 1.34 * 2^-27 */
	ck_assert_uint_eq(rnd(FMT_FP16, "2^-14", FMT_RNE, false), 0x0400);
	/* carry from the largest subnormal into the smallest normal: (2^10 - 0.5) * 2^-24 ties to even 2^-14 */
	ck_assert_uint_eq(rnd(FMT_FP16, "2047*2^-25", FMT_RNE, false), 0x0400);
	/* fp8-e4m3: 448 max, 464 ties to even 448 (110 even), above overflows to NaN */
	ck_assert_uint_eq(rnd(FMT_E4M3, "464", FMT_RNE, false), 0x7e);
	ck_assert_uint_eq(rnd(FMT_E4M3, "465", FMT_RNE, false), 0x7f);
	/* negative overflow keeps the sign: 1 1111 111 (PyTorch, ml_dtypes, cuda_fp8.h) */
	ck_assert_uint_eq(rnd(FMT_E4M3, "-465", FMT_RNE, false), 0xff);
	ck_assert_uint_eq(rnd(FMT_E4M3, "-1000", FMT_RNE, false), 0xff);
	ck_assert_uint_eq(rnd(FMT_E4M3, "-inf", FMT_RNE, false), 0xff);
	ck_assert_uint_eq(rnd(FMT_E4M3, "-1000", FMT_DOWN, false), 0xff);
	ck_assert_uint_eq(rnd(FMT_E4M3, "-1000", FMT_UP, false), 0xfe);   /* toward +inf: -448 */
	ck_assert_uint_eq(rnd(FMT_E4M3, "-1000", FMT_RTZ, false), 0xfe);
	ck_assert_uint_eq(rnd(FMT_E4M3, "1000", FMT_DOWN, false), 0x7e);
	ck_assert_uint_eq(rnd(FMT_E4M3, "1000", FMT_UP, false), 0x7f);
	ck_assert_uint_eq(rnd(FMT_E4M3, "-nan", FMT_RNE, false), 0x7f);   /* NaN in: canonical NaN */
	ck_assert_uint_eq(rnd(FMT_E4M3, "-465", FMT_RNE, true), 0xfe);
	ck_assert_uint_eq(rnd(FMT_E4M3, "1000", FMT_RTZ, false), 0x7e);
	ck_assert_uint_eq(rnd(FMT_E4M3, "inf", FMT_RNE, false), 0x7f);
	ck_assert_uint_eq(rnd(FMT_E4M3, "2^-10", FMT_RNE, false), 0x00);      /* half of 2^-9: tie to 0 */
	ck_assert_uint_eq(rnd(FMT_E5M2, "61440", FMT_RNE, false), 0x7c);      /* tie between 57344 and 65536 */
	ck_assert_uint_eq(rnd(FMT_E5M2, "61439", FMT_RNE, false), 0x7b);
	/* tf32: 1 + 2^-11 ties to 1 */
	ck_assert_uint_eq(rnd(FMT_TF32, "1", FMT_RNE, false), 0x1fc00);
	ck_assert_uint_eq(rnd(FMT_TF32, "2049/2048", FMT_RNE, false), 0x1fc00);
	ck_assert_uint_eq(rnd(FMT_TF32, "2049/2048", FMT_RNA, false), 0x1fc01);
	/* NaNs are canonical whatever their sign */
	ck_assert_uint_eq(rnd(FMT_FP16, "-nan", FMT_RNE, false), 0x7e00);
	ck_assert_uint_eq(rnd(FMT_BF16, "nan", FMT_RNE, false), 0x7fc0);
	ck_assert_uint_eq(rnd(FMT_E5M2, "nan", FMT_RNE, false), 0x7e);
	ck_assert_uint_eq(rnd(FMT_FP32, "nan", FMT_RNE, false), 0x7fc00000);
}
END_TEST

START_TEST(sr_by_hand)
{
	/* 1 + 2^-9 in bf16 lies a quarter of the way from 1 to 1 + 2^-7: ceil(0.25 * 2^32) = 2^30 */
	fmt_num x;
	fmt_num_init(&x);
	ck_assert(fmt_parse_number(&x, "513/512", NULL, 0) == MP_OK);
	fmt_round_ctl ctl = { .mode = FMT_SR };
	ctl.rbits = (1u << 30) - 1;
	ck_assert_uint_eq(fmt_round_num(fmt_get(FMT_BF16), &ctl, &x, NULL), 0x3f81);
	ctl.rbits = 1u << 30;
	ck_assert_uint_eq(fmt_round_num(fmt_get(FMT_BF16), &ctl, &x, NULL), 0x3f80);
	/* exact values never move */
	ck_assert(fmt_parse_number(&x, "1.5", NULL, 0) == MP_OK);
	ctl.rbits = 0;
	ck_assert_uint_eq(fmt_round_num(fmt_get(FMT_BF16), &ctl, &x, NULL), 0x3fc0);
	/* a fraction of the gap below 2^-32 still rounds up when the bits are 0 */
	ck_assert(fmt_parse_number(&x, "1+2^-60", NULL, 0) != MP_OK);   /* '+' is not an operator */
	ck_assert(fmt_parse_number(&x, "1152921504606846977/1152921504606846976", NULL, 0) == MP_OK);
	ctl.rbits = 0;
	ck_assert_uint_eq(fmt_round_num(fmt_get(FMT_BF16), &ctl, &x, NULL), 0x3f81);
	ctl.rbits = 1;
	ck_assert_uint_eq(fmt_round_num(fmt_get(FMT_BF16), &ctl, &x, NULL), 0x3f80);
	fmt_num_clear(&x);
}
END_TEST

START_TEST(errors_of_results)
{
	fmt_num x;
	fmt_num_init(&x);
	double ae, re;
	ck_assert(fmt_parse_number(&x, "0.1", NULL, 0) == MP_OK);
	fmt_error_of(&x, 0.10009765625, &ae, &re);
	/* 0.10009765625 - 0.1 = 0.00009765625 = 2^-10 / 10; relative 2^-10 / 10 / 0.1 = 2^-10 */
	ck_assert(fabs(ae - 0.00009765625) < 1e-15 * 0.00009765625);
	ck_assert(fabs(re - 0x1p-10 * 1.0) < 1e-15);
	fmt_error_of(&x, INFINITY, &ae, &re);
	ck_assert(isinf(ae) && isinf(re));
	fmt_num_set_double(&x, NAN);
	fmt_error_of(&x, NAN, &ae, &re);
	ck_assert(isnan(ae) && isnan(re));
	fmt_num_set_double(&x, 0.0);
	fmt_error_of(&x, 0.0, &ae, &re);
	ck_assert(ae == 0 && re == 0);
	fmt_num_clear(&x);
	fmt_mode m;
	ck_assert(fmt_mode_parse("RNE", &m) == MP_OK && m == FMT_RNE);
	ck_assert(fmt_mode_parse("sr", &m) == MP_OK && m == FMT_SR);
	ck_assert(fmt_mode_parse("nearest", &m) == MP_EMODE);
}
END_TEST

static Suite *round_suite(void)
{
	Suite *s = suite_create("round");
	TCase *tc = tcase_create("hand");
	tcase_add_test(tc, parse_forms);
	tcase_add_test(tc, parse_errors);
	tcase_add_test(tc, round_by_hand);
	tcase_add_test(tc, sr_by_hand);
	tcase_add_test(tc, errors_of_results);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(round_suite());
}
