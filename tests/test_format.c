/* The format table and decoding, against values derived by hand from the
 * format definitions (IEEE 754, OCP FP8, bfloat16, TF32). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fmt/decode.h"
#include "fmt/format.h"
#include "testutil.h"

START_TEST(table_figures)
{
	const fmt_info *fp32 = fmt_get(FMT_FP32), *fp16 = fmt_get(FMT_FP16), *bf16 = fmt_get(FMT_BF16);
	const fmt_info *tf32 = fmt_get(FMT_TF32), *e4m3 = fmt_get(FMT_E4M3), *e5m2 = fmt_get(FMT_E5M2);
	/* max = (2 - 2^-frac) * 2^emax */
	ck_assert(fmt_max(fp32) == (2.0 - 0x1p-23) * 0x1p127);
	ck_assert(fmt_max(fp16) == 65504.0);
	ck_assert(fmt_max(bf16) == (2.0 - 0x1p-7) * 0x1p127);
	ck_assert(fmt_max(tf32) == (2.0 - 0x1p-10) * 0x1p127);
	ck_assert(fmt_max(e4m3) == 448.0);    /* 1.110b * 2^8: 1.111b * 2^8 is the NaN */
	ck_assert(fmt_max(e5m2) == 57344.0);  /* 1.11b * 2^15 */
	ck_assert(fmt_min_normal(fp32) == 0x1p-126);
	ck_assert(fmt_min_normal(fp16) == 0x1p-14);
	ck_assert(fmt_min_normal(bf16) == 0x1p-126);
	ck_assert(fmt_min_normal(e4m3) == 0x1p-6);
	ck_assert(fmt_min_normal(e5m2) == 0x1p-14);
	ck_assert(fmt_min_subnormal(fp32) == 0x1p-149);
	ck_assert(fmt_min_subnormal(fp16) == 0x1p-24);
	ck_assert(fmt_min_subnormal(bf16) == 0x1p-133);
	ck_assert(fmt_min_subnormal(tf32) == 0x1p-136);
	ck_assert(fmt_min_subnormal(e4m3) == 0x1p-9);
	ck_assert(fmt_min_subnormal(e5m2) == 0x1p-16);
	ck_assert(fmt_epsilon(fp32) == 0x1p-23);
	ck_assert(fmt_epsilon(fp16) == 0x1p-10);
	ck_assert(fmt_epsilon(bf16) == 0x1p-7);
	/* the lesson's decimal digits: 24, 11 and 8 bits times log10(2) */
	ck_assert(fabs(fmt_decimal_digits(fp32) - 7.2247) < 1e-3);
	ck_assert(fabs(fmt_decimal_digits(fp16) - 3.3113) < 1e-3);
	ck_assert(fabs(fmt_decimal_digits(bf16) - 2.4082) < 1e-3);
	ck_assert(fmt_has_inf(fp16) && !fmt_has_inf(e4m3) && fmt_has_inf(e5m2));
}
END_TEST

START_TEST(names_and_aliases)
{
	static const struct { const char *name; fmt_id id; } cases[] = {
		{ "fp32", FMT_FP32 }, { "float32", FMT_FP32 }, { "single", FMT_FP32 }, { "FP32", FMT_FP32 },
		{ "fp16", FMT_FP16 }, { "float16", FMT_FP16 }, { "half", FMT_FP16 },
		{ "bf16", FMT_BF16 }, { "bfloat16", FMT_BF16 }, { "tf32", FMT_TF32 },
		{ "fp8-e4m3", FMT_E4M3 }, { "e4m3", FMT_E4M3 }, { "fp8-e5m2", FMT_E5M2 }, { "e5m2", FMT_E5M2 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const fmt_info *f = fmt_find(cases[i].name);
		ck_assert_msg(f && f->id == cases[i].id, "%s", cases[i].name);
	}
	ck_assert_ptr_null(fmt_find("bf61"));
	ck_assert_ptr_null(fmt_find(""));
	ck_assert_ptr_null(fmt_find("fp"));
	fmt_id ids[8];
	size_t n;
	char err[256];
	ck_assert_int_eq(fmt_parse_list("fp32,half,bf16", ids, 8, &n, err, sizeof err), MP_OK);
	ck_assert_uint_eq(n, 3);
	ck_assert(ids[0] == FMT_FP32 && ids[1] == FMT_FP16 && ids[2] == FMT_BF16);
	ck_assert_int_eq(fmt_parse_list("fp32,bf61", ids, 8, &n, err, sizeof err), MP_EFORMAT);
	ck_assert_msg(strncmp(err, "unknown format 'bf61' (known: fp32, ", 36) == 0, "%s", err);
	ck_assert_int_eq(fmt_parse_list("fp32,bf16,fp16", ids, 2, &n, err, sizeof err), MP_EINVAL);
	ck_assert_str_eq(err, "too many formats in 'fp32,bf16,fp16'");
	/* a name longer than any is unknown, and named whole */
	char list[96], want[112];
	memset(list, 'x', 80);
	strcpy(list + 80, ",fp32");
	snprintf(want, sizeof want, "unknown format '%.80s' (known: ", list);
	ck_assert_int_eq(fmt_parse_list(list, ids, 8, &n, err, sizeof err), MP_EFORMAT);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
}
END_TEST

/* The kernel column: the six formats the training kernels, the SIMD paths and
 * the GPU implement, named in table order; no other format is one. */
START_TEST(kernel_column)
{
	static const fmt_id kernel[] = { FMT_FP32, FMT_TF32, FMT_FP16, FMT_BF16, FMT_E4M3, FMT_E5M2 };
	size_t nk = 0;
	for (int id = 0; id < FMT_COUNT; id++) {
		bool listed = false;
		for (size_t j = 0; j < sizeof kernel / sizeof kernel[0]; j++)
			listed |= kernel[j] == (fmt_id)id;
		ck_assert_msg(fmt_is_kernel((fmt_id)id) == listed, "%s", fmt_get((fmt_id)id)->name);
		nk += listed;
	}
	ck_assert_uint_eq(nk, 6);
	ck_assert_str_eq(fmt_kernel_names(), "fp32, tf32, fp16, bf16, fp8-e4m3, fp8-e5m2");
}
END_TEST

START_TEST(decode_by_hand)
{
	fmt_decoded d;
	/* bf16 600 = 1.171875 * 2^9: exponent 136 = 10001000, fraction 0.171875 * 128 = 22 */
	fmt_decode(fmt_get(FMT_BF16), 0x4416, &d);
	ck_assert(d.cls == FMT_CLASS_NORMAL && !d.neg);
	ck_assert_uint_eq(d.exp_field, 136);
	ck_assert_uint_eq(d.frac_field, 22);
	ck_assert(d.value == 600.0);
	ck_assert(d.ulp == 4.0);   /* 2^(9 - 7) */
	fmt_decode(fmt_get(FMT_FP16), 0x7c00, &d);
	ck_assert(d.cls == FMT_CLASS_INF && isinf(d.value) && d.value > 0);
	fmt_decode(fmt_get(FMT_FP16), 0xfe00, &d);
	ck_assert(d.cls == FMT_CLASS_NAN);
	fmt_decode(fmt_get(FMT_FP16), 0x0001, &d);
	ck_assert(d.cls == FMT_CLASS_SUBNORMAL && d.value == 0x1p-24 && d.ulp == 0x1p-24);
	fmt_decode(fmt_get(FMT_FP16), 0x8000, &d);
	ck_assert(d.cls == FMT_CLASS_ZERO && d.value == 0 && signbit(d.value));
	/* e4m3: 0x7e = 0 1111 110 = 1.75 * 2^8 = 448 is finite; 0x7f and 0xff are NaN */
	fmt_decode(fmt_get(FMT_E4M3), 0x7e, &d);
	ck_assert(d.cls == FMT_CLASS_NORMAL && d.value == 448.0);
	fmt_decode(fmt_get(FMT_E4M3), 0x78, &d);
	ck_assert(d.cls == FMT_CLASS_NORMAL && d.value == 256.0);   /* exponent 15 is a normal one */
	fmt_decode(fmt_get(FMT_E4M3), 0x7f, &d);
	ck_assert(d.cls == FMT_CLASS_NAN);
	fmt_decode(fmt_get(FMT_E4M3), 0xff, &d);
	ck_assert(d.cls == FMT_CLASS_NAN);
	fmt_decode(fmt_get(FMT_E5M2), 0x7c, &d);
	ck_assert(d.cls == FMT_CLASS_INF);
	fmt_decode(fmt_get(FMT_E5M2), 0x7b, &d);
	ck_assert(d.value == 57344.0);
	/* tf32 1.0: exponent 127 in a 19-bit pattern: 0 01111111 0000000000 */
	fmt_decode(fmt_get(FMT_TF32), 0x1fc00, &d);
	ck_assert(d.value == 1.0 && d.ulp == 0x1p-10);
	/* every fp32 pattern decodes to the same value as the hardware float */
	for (uint32_t b = 0; b < 0xffffffffu - 9973u; b += 9973u) {
		float f;
		memcpy(&f, &b, 4);
		double v = fmt_to_double(fmt_get(FMT_FP32), b);
		ck_assert(isnan(f) ? isnan(v) : (v == (double)f && !signbit(v) == !signbit(f)));
	}
}
END_TEST

START_TEST(neighbours)
{
	const fmt_info *f = fmt_get(FMT_FP16);
	uint32_t r;
	ck_assert(fmt_next_up(f, 0x3c00, &r) && r == 0x3c01);          /* 1 -> 1 + 2^-10 */
	ck_assert(fmt_next_down(f, 0x3c00, &r) && r == 0x3bff);        /* 1 -> 1 - 2^-11 */
	ck_assert(fmt_next_up(f, 0x0000, &r) && r == 0x0001);
	ck_assert(fmt_next_up(f, 0x8000, &r) && r == 0x0001);          /* nextUp(-0) = min subnormal */
	ck_assert(fmt_next_down(f, 0x0000, &r) && r == 0x8001);
	ck_assert(fmt_next_up(f, 0x8001, &r) && r == 0x8000);          /* -min subnormal -> -0 */
	ck_assert(fmt_next_up(f, 0x7bff, &r) && r == 0x7c00);          /* max -> inf */
	ck_assert(!fmt_next_up(f, 0x7c00, &r));
	ck_assert(fmt_next_up(f, 0xfc00, &r) && r == 0xfbff);          /* -inf -> -max */
	ck_assert(!fmt_next_up(f, 0x7e00, &r));
	ck_assert(!fmt_next_up(fmt_get(FMT_E4M3), 0x7e, &r));          /* no inf beyond 448 */
	ck_assert(fmt_next_down(fmt_get(FMT_E4M3), 0x7e, &r) && r == 0x7d);
	ck_assert(fmt_next_down(fmt_get(FMT_BF16), 0x4416, &r) && r == 0x4415);
	ck_assert(fmt_to_double(fmt_get(FMT_BF16), 0x4415) == 596.0);
}
END_TEST

static Suite *format_suite(void)
{
	Suite *s = suite_create("format");
	TCase *tc = tcase_create("table");
	tcase_add_test(tc, table_figures);
	tcase_add_test(tc, names_and_aliases);
	tcase_add_test(tc, kernel_column);
	tcase_add_test(tc, decode_by_hand);
	tcase_add_test(tc, neighbours);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(format_suite());
}
