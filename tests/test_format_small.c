/* The sub-8-bit and FNUZ formats (fp6-e3m2, fp6-e2m3, fp4-e2m1, fp8-e4m3fnuz,
 * fp8-e5m2fnuz, e8m0): the table, every pattern decoded, and the neighbour
 * steps, against a table and formulas written out in this file
 * (OCP MX v1.0 for fp6/fp4/e8m0; FNUZ as in LLVM's APFloat and ml_dtypes:
 * one NaN 0x80, no -0, no inf). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/decode.h"
#include "fmt/format.h"
#include "fmt/round.h"
#include "small_formats.h"
#include "testutil.h"

START_TEST(table)
{
	const small_spec *s = &SPECS[_i];
	const fmt_info *f = fmt_get(s->id);
	ck_assert_str_eq(f->name, s->name);
	ck_assert_int_eq(f->width, s->width);
	ck_assert_int_eq(f->exp_bits, s->exp_bits);
	ck_assert_int_eq(f->frac_bits, s->frac_bits);
	ck_assert_int_eq(f->bias, s->bias);
	ck_assert(fmt_max(f) == s->max);
	ck_assert(fmt_min_normal(f) == s->min_normal);
	if (isnan(s->min_subnormal))
		ck_assert(isnan(fmt_min_subnormal(f)) && !fmt_has_subnormals(f));
	else
		ck_assert(fmt_min_subnormal(f) == s->min_subnormal && fmt_has_subnormals(f));
	ck_assert(!fmt_has_inf(f));
	ck_assert_int_eq(fmt_has_nan(f), s->kind != 0);
	ck_assert_int_eq(fmt_has_sign(f), s->kind != 2);
	ck_assert_int_eq(fmt_has_neg_zero(f), s->kind == 0);
	ck_assert(!fmt_is_kernel(s->id));
	/* bits print as 0x and ceil(width/4) hex digits */
	ck_assert_int_eq(fmt_hex_digits(f), (s->width + 3) / 4);
	ck_assert_int_eq(fmt_hex_digits(f), s->width == 4 ? 1 : 2);
	ck_assert(fmt_find(s->name) == f);
	ck_assert_ptr_nonnull(strstr(fmt_known_names(), s->name));
	ck_assert_ptr_null(strstr(fmt_kernel_names(), s->name));
}
END_TEST

START_TEST(aliases)
{
	static const struct { const char *name; fmt_id id; } cases[] = {
		{ "fp4", FMT_E2M1 }, { "e2m1", FMT_E2M1 }, { "FP4-E2M1", FMT_E2M1 }, { "float4_e2m1fn", FMT_E2M1 },
		{ "e3m2", FMT_E3M2 }, { "float6_e3m2fn", FMT_E3M2 }, { "e2m3", FMT_E2M3 },
		{ "e4m3fnuz", FMT_E4M3FNUZ }, { "float8_e4m3fnuz", FMT_E4M3FNUZ }, { "e5m2fnuz", FMT_E5M2FNUZ },
		{ "e8m0fnu", FMT_E8M0 }, { "float8_e8m0fnu", FMT_E8M0 },
		/* the older names keep their formats */
		{ "e4m3", FMT_E4M3 }, { "e4m3fn", FMT_E4M3 }, { "e5m2", FMT_E5M2 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const fmt_info *f = fmt_find(cases[i].name);
		ck_assert_msg(f && f->id == cases[i].id, "%s", cases[i].name);
	}
	ck_assert_ptr_null(fmt_find("fp4-e3m0"));
	ck_assert_ptr_null(fmt_find("fp6"));   /* two fp6 formats: no short name */
	/* ids are appended after fp8-e5m2 in this order */
	ck_assert_int_eq(FMT_E3M2, FMT_E5M2 + 1);
	ck_assert_int_eq(FMT_INT8, FMT_E8M0 + 1);   /* the later rows follow e8m0 */
	fmt_id ids[8];
	size_t n;
	char err[256];
	ck_assert_int_eq(fmt_parse_list("fp4,e8m0,fp8-e5m2fnuz", ids, 8, &n, err, sizeof err), MP_OK);
	ck_assert(n == 3 && ids[0] == FMT_E2M1 && ids[1] == FMT_E8M0 && ids[2] == FMT_E5M2FNUZ);
}
END_TEST

/* Every pattern: class, value, fields and ulp against hand_value. */
START_TEST(every_pattern)
{
	const small_spec *s = &SPECS[_i];
	const fmt_info *f = fmt_get(s->id);
	int nnan = 0, nzero = 0;
	for (uint32_t b = 0; b < (1u << s->width); b++) {
		fmt_decoded d;
		fmt_decode(f, b, &d);
		double want = small_value(s, b);
		if (isnan(want)) {
			nnan++;
			ck_assert_msg(d.cls == FMT_CLASS_NAN && isnan(d.value), "%s 0x%x", s->name, b);
			continue;
		}
		ck_assert_msg(d.value == want && signbit(d.value) == signbit(want), "%s 0x%x: %a, want %a", s->name, b,
		              d.value, want);
		ck_assert(fmt_to_double(f, b) == want);
		ck_assert(d.cls != FMT_CLASS_INF);
		if (want == 0) {
			nzero++;
			ck_assert(d.cls == FMT_CLASS_ZERO);
		}
		fmt_class cls = want == 0 ? FMT_CLASS_ZERO
		              : s->kind != 2 && fabs(want) < s->min_normal ? FMT_CLASS_SUBNORMAL : FMT_CLASS_NORMAL;
		ck_assert_msg(d.cls == cls, "%s 0x%x: class %s", s->name, b, fmt_class_name(d.cls));
		if (s->kind == SMALL_E8M0) {
			ck_assert(!d.neg && d.exp_field == b && d.frac_field == 0);
			ck_assert(d.ulp == want);   /* 2^(e+1) - 2^e */
		} else {
			ck_assert_int_eq(d.neg, (b >> (s->width - 1)) & 1);
			ck_assert_uint_eq(d.frac_field, b & ((1u << s->frac_bits) - 1));
			ck_assert(d.ulp == ldexp(1.0, (fabs(want) < s->min_normal ? 1 - s->bias : ilogb(want)) - s->frac_bits));
		}
		ck_assert(fabs(want) <= s->max);
	}
	/* specials by count: fp6/fp4 have two zeros and no NaN; FNUZ one zero,
	 * one NaN; e8m0 no zero, one NaN */
	ck_assert_int_eq(nnan, s->kind == 0 ? 0 : 1);
	ck_assert_int_eq(nzero, s->kind == 0 ? 2 : s->kind == 1 ? 1 : 0);
}
END_TEST

/* The table by pattern: max, min normal, min subnormal, specials. */
START_TEST(named_patterns)
{
	static const struct { fmt_id id; uint32_t bits; double value; } cases[] = {
		{ FMT_E2M1, 0x7, 6.0 }, { FMT_E2M1, 0xf, -6.0 }, { FMT_E2M1, 0x2, 1.0 }, { FMT_E2M1, 0x1, 0.5 },
		{ FMT_E2M1, 0x8, -0.0 }, { FMT_E2M1, 0x5, 3.0 },
		{ FMT_E3M2, 0x1f, 28.0 }, { FMT_E3M2, 0x04, 0.25 }, { FMT_E3M2, 0x01, 0.0625 }, { FMT_E3M2, 0x20, -0.0 },
		{ FMT_E2M3, 0x1f, 7.5 }, { FMT_E2M3, 0x08, 1.0 }, { FMT_E2M3, 0x01, 0.125 }, { FMT_E2M3, 0x3f, -7.5 },
		{ FMT_E4M3FNUZ, 0x7f, 240.0 }, { FMT_E4M3FNUZ, 0x08, 0x1p-7 }, { FMT_E4M3FNUZ, 0x01, 0x1p-10 },
		{ FMT_E4M3FNUZ, 0xff, -240.0 }, { FMT_E4M3FNUZ, 0x40, 1.0 },
		{ FMT_E5M2FNUZ, 0x7f, 57344.0 }, { FMT_E5M2FNUZ, 0x04, 0x1p-15 }, { FMT_E5M2FNUZ, 0x01, 0x1p-17 },
		{ FMT_E5M2FNUZ, 0x40, 1.0 },
		{ FMT_E8M0, 0xfe, 0x1p127 }, { FMT_E8M0, 0x00, 0x1p-127 }, { FMT_E8M0, 0x7f, 1.0 }, { FMT_E8M0, 0x80, 2.0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		double v = fmt_to_double(fmt_get(cases[i].id), cases[i].bits);
		ck_assert_msg(v == cases[i].value && signbit(v) == signbit(cases[i].value), "case %zu", i);
	}
	ck_assert(isnan(fmt_to_double(fmt_get(FMT_E4M3FNUZ), 0x80)));
	ck_assert(isnan(fmt_to_double(fmt_get(FMT_E5M2FNUZ), 0x80)));
	ck_assert(isnan(fmt_to_double(fmt_get(FMT_E8M0), 0xff)));
	ck_assert_uint_eq(fmt_nan_bits(fmt_get(FMT_E4M3FNUZ)), 0x80);
	ck_assert_uint_eq(fmt_nan_bits(fmt_get(FMT_E8M0)), 0xff);
	ck_assert_uint_eq(fmt_nan_bits(fmt_get(FMT_E2M1)), 0x0);   /* none: the +0 given with FMT_FLAG_INVALID */
	ck_assert_uint_eq(fmt_max_bits(fmt_get(FMT_E2M1)), 0x7);
	ck_assert_uint_eq(fmt_max_bits(fmt_get(FMT_E8M0)), 0xfe);
	ck_assert_uint_eq(fmt_sign_mask(fmt_get(FMT_E2M1)), 0x8);
	ck_assert_uint_eq(fmt_sign_mask(fmt_get(FMT_E3M2)), 0x20);
	ck_assert_uint_eq(fmt_sign_mask(fmt_get(FMT_E8M0)), 0);
	ck_assert_int_eq(fmt_emin(fmt_get(FMT_E8M0)), -127);
	ck_assert_int_eq(fmt_emax(fmt_get(FMT_E8M0)), 127);
	ck_assert_int_eq(fmt_emax(fmt_get(FMT_E2M1)), 2);
	ck_assert_int_eq(fmt_emax(fmt_get(FMT_E4M3FNUZ)), 7);
}
END_TEST

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* next_up / next_down against the sorted list of every value: the next
 * larger (smaller) value, zero counted once; none past the ends. */
START_TEST(neighbours)
{
	const small_spec *s = &SPECS[_i];
	const fmt_info *f = fmt_get(s->id);
	uint32_t npat = 1u << s->width;
	double *vals = malloc(npat * sizeof *vals);
	size_t nv = 0;
	for (uint32_t b = 0; b < npat; b++) {
		double v = small_value(s, b);
		if (!isnan(v) && !(v == 0 && signbit(v)))
			vals[nv++] = v;
	}
	qsort(vals, nv, sizeof *vals, cmp_double);
	for (uint32_t b = 0; b < npat; b++) {
		double v = small_value(s, b);
		uint32_t out;
		if (isnan(v)) {
			ck_assert(!fmt_next_up(f, b, &out) && !fmt_next_down(f, b, &out));
			continue;
		}
		size_t k = 0;
		while (vals[k] != v)
			k++;
		bool up = fmt_next_up(f, b, &out);
		ck_assert_msg(up == (k + 1 < nv), "%s 0x%x up", s->name, b);
		if (up) {
			ck_assert_msg(small_value(s, out) == vals[k + 1], "%s next_up(0x%x) = 0x%x", s->name, b, out);
			ck_assert(!isnan(small_value(s, out)));
		}
		bool down = fmt_next_down(f, b, &out);
		ck_assert_msg(down == (k > 0), "%s 0x%x down", s->name, b);
		if (down) {
			ck_assert_msg(small_value(s, out) == vals[k - 1], "%s next_down(0x%x) = 0x%x", s->name, b, out);
			ck_assert(!isnan(small_value(s, out)));
		}
	}
	free(vals);
}
END_TEST

static Suite *small_suite(void)
{
	Suite *s = suite_create("format_small");
	TCase *tc = tcase_create("table");
	tcase_add_loop_test(tc, table, 0, NSPECS);
	tcase_add_test(tc, aliases);
	tcase_add_loop_test(tc, every_pattern, 0, NSPECS);
	tcase_add_test(tc, named_patterns);
	tcase_add_loop_test(tc, neighbours, 0, NSPECS);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(small_suite());
}
