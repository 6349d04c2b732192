/* The integer, ml_dtypes and IEEE P3109 rows of the format table: every
 * pattern decoded, against the decoder of tests/ext_formats.h written from
 * the published definitions; every value rounded back to its own pattern in
 * every mode; the neighbour steps against the values sorted; the largest
 * and smallest values against the ones derived by hand there. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/decode.h"
#include "fmt/format.h"
#include "fmt/parse.h"
#include "fmt/round.h"
#include "ext_formats.h"
#include "testutil.h"

START_TEST(table)
{
	const ext_spec *s = &EXT[_i];
	const fmt_info *f = fmt_get(s->id);
	ck_assert_str_eq(f->name, s->name);
	ck_assert_int_eq(f->id, s->id);
	ck_assert_int_eq(f->width, s->width);
	ck_assert_int_eq(f->exp_bits, s->exp_bits);
	ck_assert_int_eq(f->frac_bits, s->frac_bits);
	ck_assert_int_eq(f->bias, s->bias);
	ck_assert_msg(fmt_max(f) == s->max, "%s max %a, by hand %a", s->name, fmt_max(f), s->max);
	ck_assert(!fmt_is_kernel(s->id));
	ck_assert(f->extra);   /* outside the exercises' lists of likely mistakes */
	ck_assert(fmt_find(s->name) == f);
	if (strncmp(s->name, "p3109-", 6) == 0)   /* named by pattern: "p3109-8p1..8p7 and their sf, ue, uf variants" */
		ck_assert_ptr_nonnull(strstr(fmt_known_names(), "p3109-8p1..8p7 and their sf, ue, uf variants"));
	else
		ck_assert_ptr_nonnull(strstr(fmt_known_names(), s->name));
	ck_assert_ptr_null(strstr(fmt_kernel_names(), s->name));
	ck_assert_int_eq(fmt_hex_digits(f), (s->width + 3) / 4);
	/* the decoder's own extremes agree with the values derived by hand */
	double hi = 0, lo = INFINITY;
	for (uint32_t b = 0; b < ext_patterns(s); b++) {
		double v = ext_value(s, b);
		if (isfinite(v) && v > hi)
			hi = v;
		if (isfinite(v) && v > 0 && v < lo)
			lo = v;
	}
	ck_assert_msg(hi == s->max && lo == s->min_pos, "%s: decoder max %a min %a", s->name, hi, lo);
	ck_assert_msg(fmt_to_double(f, ext_max_bits(s)) == s->max, "%s", s->name);
}
END_TEST

START_TEST(names)
{
	static const struct { const char *name; fmt_id id; } cases[] = {
		{ "int8", FMT_INT8 }, { "INT4", FMT_INT4 }, { "i2", FMT_INT2 }, { "mxint8-elem", FMT_INT8 },
		/* ml_dtypes' names */
		{ "float8_e3m4", FMT_E3M4 }, { "e3m4", FMT_E3M4 }, { "float8_e4m3", FMT_E4M3IEEE },
		{ "e4m3-ieee", FMT_E4M3IEEE }, { "float8_e4m3b11fnuz", FMT_E4M3B11FNUZ },
		/* the report's names (Binary8pPse ...) and gfloat's p3109_pP */
		{ "binary8p3se", FMT_P3109_P3 }, { "Binary8p3", FMT_P3109_P3 }, { "p3109-8p3se", FMT_P3109_P3 },
		{ "p3109_p3", FMT_P3109_P3 }, { "binary8p3sf", FMT_P3109_P3SF }, { "binary8p3ue", FMT_P3109_P3UE },
		{ "binary8p3uf", FMT_P3109_P3UF }, { "binary8p1se", FMT_P3109_P1 }, { "binary8p7uf", FMT_P3109_P7UF },
		/* the names of the older rows keep their formats */
		{ "e4m3", FMT_E4M3 }, { "float8_e4m3fn", FMT_E4M3 }, { "float8_e8m0fnu", FMT_E8M0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const fmt_info *f = fmt_find(cases[i].name);
		ck_assert_msg(f && f->id == cases[i].id, "%s", cases[i].name);
	}
	/* the older ids keep their values; the rows are appended */
	ck_assert_int_eq(FMT_E8M0, 11);
	ck_assert_int_eq(FMT_INT8, 12);
	ck_assert_int_eq(FMT_INT4, 13);
	ck_assert_int_eq(FMT_INT2, 14);
	ck_assert_int_eq(FMT_P3109_P7UF, FMT_COUNT - 1);
	ck_assert_int_eq(NEXT, FMT_COUNT - FMT_INT8);   /* every row after e8m0 is tested here */
	for (int id = 0; id < FMT_INT8; id++)
		ck_assert(!fmt_get((fmt_id)id)->extra);
	ck_assert_uint_eq(fmt_course_count(), 12);   /* the TUI's Bits explorer: fp32 .. e8m0 */
}
END_TEST

/* Every pattern: value (sign of zero included) and class. */
START_TEST(every_pattern)
{
	const ext_spec *s = &EXT[_i];
	const fmt_info *f = fmt_get(s->id);
	for (uint32_t b = 0; b < ext_patterns(s); b++) {
		fmt_decoded d;
		fmt_decode(f, b, &d);
		double want = ext_value(s, b);
		if (isnan(want)) {
			ck_assert_msg(d.cls == FMT_CLASS_NAN && isnan(d.value), "%s 0x%x", s->name, b);
			continue;
		}
		ck_assert_msg(d.value == want && signbit(d.value) == signbit(want), "%s 0x%x: %a, want %a", s->name, b,
		              d.value, want);
		ck_assert(fmt_to_double(f, b) == want);
		fmt_class cls = isinf(want) ? FMT_CLASS_INF
		              : want == 0   ? FMT_CLASS_ZERO
		              : fabs(want) < ldexp(1.0, 1 - s->bias) && s->kind != EXT_INT ? FMT_CLASS_SUBNORMAL
		                                                                            : FMT_CLASS_NORMAL;
		ck_assert_msg(d.cls == cls, "%s 0x%x: class %s", s->name, b, fmt_class_name(d.cls));
	}
}
END_TEST

/* Each finite pattern's value rounds back to the pattern in every mode,
 * exactly (no flags), from a binary64 and from an exact rational. */
START_TEST(round_trip)
{
	const ext_spec *s = &EXT[_i];
	const fmt_info *f = fmt_get(s->id);
	fmt_num x;
	fmt_num_init(&x);
	for (uint32_t b = 0; b < ext_patterns(s); b++) {
		double v = ext_value(s, b);
		if (!isfinite(v))
			continue;
		fmt_num_set_double(&x, v);
		for (int m = 0; m < FMT_MODE_COUNT; m++) {
			for (int sat = 0; sat < 2; sat++) {
				fmt_round_ctl ctl = { .mode = (fmt_mode)m, .saturate = sat, .rbits = 0x9e3779b9u * b };
				unsigned fl = 99, fl2 = 99;
				uint32_t got = fmt_round_double(f, &ctl, v, &fl);
				uint32_t got2 = fmt_round_num(f, &ctl, &x, &fl2);
				ck_assert_msg(got == b && fl == 0, "%s 0x%x (%a) %s: 0x%x flags %u", s->name, b, v,
				              fmt_mode_name((fmt_mode)m), got, fl);
				ck_assert(got2 == b && fl2 == 0);
			}
		}
	}
	fmt_num_clear(&x);
}
END_TEST

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* next_up / next_down step through the sorted values (NaN has none). */
START_TEST(neighbours)
{
	const ext_spec *s = &EXT[_i];
	const fmt_info *f = fmt_get(s->id);
	uint32_t np = ext_patterns(s);
	double *vals = malloc(np * sizeof *vals);
	size_t n = 0;
	for (uint32_t b = 0; b < np; b++) {
		double v = ext_value(s, b);
		if (!isnan(v) && !(v == 0 && signbit(v)))
			vals[n++] = v;
	}
	qsort(vals, n, sizeof *vals, cmp_double);
	for (uint32_t b = 0; b < np; b++) {
		double v = ext_value(s, b);
		uint32_t out;
		if (isnan(v)) {
			ck_assert(!fmt_next_up(f, b, &out) && !fmt_next_down(f, b, &out));
			continue;
		}
		size_t k = 0;
		while (vals[k] != v)
			k++;
		bool up = fmt_next_up(f, b, &out);
		ck_assert_msg(up == (k + 1 < n), "%s 0x%x up", s->name, b);
		if (up)
			ck_assert_msg(ext_value(s, out) == vals[k + 1], "%s next_up(0x%x) = 0x%x", s->name, b, out);
		bool down = fmt_next_down(f, b, &out);
		ck_assert_msg(down == (k > 0), "%s 0x%x down", s->name, b);
		if (down)
			ck_assert_msg(ext_value(s, out) == vals[k - 1], "%s next_down(0x%x) = 0x%x", s->name, b, out);
	}
	free(vals);
}
END_TEST

/* Values worked out by hand from the definitions, with their sources. */
/* P3109 binary8p3 (max 0x7e = 49152, the next grid point 1.75 * 2^15 =
 * 57344 being the pattern of inf): the midpoint 53248 ties to the even 0x7e;
 * above it RNE overflows to inf, or NaN in the finite format. */
static void p3109_by_hand(void)
{
	const fmt_info *se = fmt_get(FMT_P3109_P3), *sf = fmt_get(FMT_P3109_P3SF), *ue = fmt_get(FMT_P3109_P3UE);
	fmt_round_ctl rne = { .mode = FMT_RNE }, sat = { .mode = FMT_RNE, .saturate = true };
	unsigned fl;
	ck_assert_uint_eq(fmt_round_double(se, &rne, 53248.0, &fl), 0x7e);
	ck_assert_uint_eq(fl, FMT_FLAG_INEXACT);
	ck_assert_uint_eq(fmt_round_double(se, &rne, 53249.0, &fl), 0x7f);
	ck_assert_uint_eq(fl, FMT_FLAG_OVERFLOW | FMT_FLAG_INEXACT);
	ck_assert_uint_eq(fmt_round_double(se, &rne, -1e6, NULL), 0xff);
	ck_assert_uint_eq(fmt_round_double(se, &sat, -1e6, NULL), 0xfe);
	ck_assert_uint_eq(fmt_round_double(sf, &rne, 1e6, NULL), 0x80);
	ck_assert_uint_eq(fmt_round_double(sf, &sat, 1e6, NULL), 0x7f);
	ck_assert_uint_eq(fmt_round_double(se, &rne, -0x1p-30, NULL), 0x00);   /* no -0 */
	ck_assert_uint_eq(fmt_round_double(se, &rne, -0.0, NULL), 0x00);
	ck_assert_uint_eq(fmt_round_double(ue, &rne, -1.0, &fl), 0xff);   /* unsigned: no negatives */
	ck_assert_uint_eq(fl, FMT_FLAG_INVALID);
	ck_assert_uint_eq(fmt_round_double(ue, &rne, -0.0, &fl), 0x00);
	ck_assert_uint_eq(fl, 0);
	ck_assert_uint_eq(fmt_round_double(ue, &rne, INFINITY, NULL), 0xfe);
	ck_assert_uint_eq(fmt_round_double(se, &rne, NAN, NULL), 0x80);
	/* binary8p1: powers of two; 3 = 1.5 * 2 ties 2 (0x41, odd) | 4 (0x42, even) -> 4 */
	ck_assert_uint_eq(fmt_round_double(fmt_get(FMT_P3109_P1), &rne, 3.0, NULL), 0x42);
	ck_assert_uint_eq(fmt_round_double(fmt_get(FMT_P3109_P1), &rne, 0x1p-64, NULL), 0x00);   /* tie 0|2^-63 */
}

START_TEST(by_hand)
{
	static const struct { fmt_id id; uint32_t bits; double value; } cases[] = {
		/* two's complement: 0x80 = -128, 0xff = -1, 0x8 (int4) = -8, 0x2 (int2) = -2 */
		{ FMT_INT8, 0x80, -128.0 }, { FMT_INT8, 0xff, -1.0 }, { FMT_INT8, 0x7f, 127.0 },
		{ FMT_INT4, 0x8, -8.0 }, { FMT_INT4, 0x7, 7.0 }, { FMT_INT4, 0xf, -1.0 },
		{ FMT_INT2, 0x2, -2.0 }, { FMT_INT2, 0x3, -1.0 }, { FMT_INT2, 0x1, 1.0 },
		/* ml_dtypes float8.h: e3m4 max() 0b0'110'1111 = 15.5, infinity() 0b0'111'0000,
		 * quiet_NaN() 0b0'111'1000, min() 1 << 4 = 1/4; e4m3 max() 0b0'1110'111 = 240,
		 * infinity() 0b0'1111'000; e4m3b11fnuz max() 0x7f = 30, NaN 0x80, min() 2^-10 */
		{ FMT_E3M4, 0x6f, 15.5 }, { FMT_E3M4, 0x70, INFINITY }, { FMT_E3M4, 0x78, NAN }, { FMT_E3M4, 0x10, 0.25 },
		{ FMT_E3M4, 0x80, -0.0 }, { FMT_E4M3IEEE, 0x77, 240.0 }, { FMT_E4M3IEEE, 0x78, INFINITY },
		{ FMT_E4M3IEEE, 0xf8, -INFINITY }, { FMT_E4M3B11FNUZ, 0x7f, 30.0 }, { FMT_E4M3B11FNUZ, 0x80, NAN },
		{ FMT_E4M3B11FNUZ, 0x08, 0x1p-10 },
		/* P3109 value tables: Binary8p3se 0x01 0x0.8p-16, 0x04 0x1p-15, 0x40 0x1p+0,
		 * 0x7e 0x1.8p+15, 0x7f Inf, 0xff -Inf, 0x81 -0x0.8p-16; Binary8p1se 0x01
		 * 0x1p-63, 0x7e 0x1p+62; Binary8p3sf 0x7f 0x1.cp+15; Binary8p3ue 0x80
		 * 0x1p+0, 0xfd 0x1.4p+31, 0xfe Inf; the report: 0x80 (signed) and 0xff
		 * (unsigned) are NaN */
		{ FMT_P3109_P3, 0x01, 0x1p-17 }, { FMT_P3109_P3, 0x04, 0x1p-15 }, { FMT_P3109_P3, 0x40, 1.0 },
		{ FMT_P3109_P3, 0x7e, 49152.0 }, { FMT_P3109_P3, 0x7f, INFINITY }, { FMT_P3109_P3, 0xff, -INFINITY },
		{ FMT_P3109_P3, 0x81, -0x1p-17 }, { FMT_P3109_P3, 0x80, NAN }, { FMT_P3109_P1, 0x01, 0x1p-63 },
		{ FMT_P3109_P1, 0x7e, 0x1p62 }, { FMT_P3109_P1, 0x00, 0.0 }, { FMT_P3109_P3SF, 0x7f, 57344.0 },
		{ FMT_P3109_P3SF, 0xff, -57344.0 }, { FMT_P3109_P3UE, 0x80, 1.0 }, { FMT_P3109_P3UE, 0xfd, 0x1.4p31 },
		{ FMT_P3109_P3UE, 0xfe, INFINITY }, { FMT_P3109_P3UE, 0xff, NAN }, { FMT_P3109_P3UF, 0xfe, 0x1.8p31 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		double v = fmt_to_double(fmt_get(cases[i].id), cases[i].bits);
		ck_assert_msg((v == cases[i].value && signbit(v) == signbit(cases[i].value)) ||
		                  (isnan(v) && isnan(cases[i].value)),
		              "%s 0x%x: %a", fmt_get(cases[i].id)->name, cases[i].bits, v);
	}
	/* integers: ties to even, saturation in every mode, NaN invalid */
	const fmt_info *i8 = fmt_get(FMT_INT8), *i2 = fmt_get(FMT_INT2);
	fmt_round_ctl rne = { .mode = FMT_RNE }, rtz = { .mode = FMT_RTZ };
	unsigned fl;
	ck_assert_uint_eq(fmt_round_double(i8, &rne, 2.5, &fl), 0x02);
	ck_assert_uint_eq(fl, FMT_FLAG_INEXACT);
	ck_assert_uint_eq(fmt_round_double(i8, &rne, -3.5, NULL), 0xfc);   /* -4 */
	ck_assert_uint_eq(fmt_round_double(i8, &rne, -128.5, &fl), 0x80);   /* tie -128|-129: -128 is even */
	ck_assert_uint_eq(fl, FMT_FLAG_INEXACT);
	ck_assert_uint_eq(fmt_round_double(i8, &rtz, 1e9, &fl), 0x7f);
	ck_assert_uint_eq(fl, FMT_FLAG_OVERFLOW | FMT_FLAG_INEXACT);
	ck_assert_uint_eq(fmt_round_double(i8, &rne, -INFINITY, &fl), 0x80);
	ck_assert_uint_eq(fmt_round_double(i2, &rne, 1.5, &fl), 0x1);   /* tie 1|2 -> 2, beyond 1: saturates */
	ck_assert_uint_eq(fl, FMT_FLAG_OVERFLOW | FMT_FLAG_INEXACT);
	ck_assert_uint_eq(fmt_round_double(i8, &rne, NAN, &fl), 0x00);
	ck_assert_uint_eq(fl, FMT_FLAG_INVALID);
	ck_assert_uint_eq(fmt_round_double(i8, &rne, -0.0, &fl), 0x00);   /* no -0 */
	p3109_by_hand();
}
END_TEST

static Suite *ext_suite(void)
{
	Suite *s = suite_create("format_ext");
	TCase *tc = tcase_create("table");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, table, 0, NEXT);
	tcase_add_test(tc, names);
	tcase_add_loop_test(tc, every_pattern, 0, NEXT);
	tcase_add_loop_test(tc, round_trip, 0, NEXT);
	tcase_add_loop_test(tc, neighbours, 0, NEXT);
	tcase_add_test(tc, by_hand);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(ext_suite());
}
