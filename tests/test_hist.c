/* train/hist.c against values placed by hand into their buckets. */
#include <check.h>
#include <math.h>

#include "train/hist.h"
#include "testutil.h"

static size_t at(const mag_hist *h, int k)
{
	return h->count[k - MAG_HIST_KMIN];
}

START_TEST(buckets_and_shares)
{
	/* 1 and 1.5 in [2^0, 2^1); 3 in [2^1, 2^2); 2^-26 is below half fp16's
	 * smallest subnormal (2^-25): flushed; 2^-20 is an fp16 subnormal
	 * (below 2^-14); 70000 is above fp16's max 65504; NaN is not counted */
	const float x[] = { 0.0f, 1.0f, 1.5f, -3.0f, 0x1p-26f, 0x1p-20f, 70000.0f, NAN, 65510.0f };
	mag_hist h;
	mag_hist_init(&h, fmt_get(FMT_FP16), 1.0);
	mag_hist_add(&h, x, sizeof x / sizeof x[0], 1.0);
	ck_assert_uint_eq(h.zero, 1);
	ck_assert_uint_eq(h.nonzero, 7);   /* 65510 rounds to 65504 (below 65520, the overflow edge) */
	ck_assert_uint_eq(at(&h, 0), 2);
	ck_assert_uint_eq(at(&h, 1), 1);
	ck_assert_uint_eq(at(&h, -26), 1);
	ck_assert_uint_eq(at(&h, -20), 1);
	ck_assert_uint_eq(at(&h, 16), 1);   /* 2^16 = 65536 <= 70000 < 2^17 */
	ck_assert_uint_eq(at(&h, 15), 1);   /* 65510 */
	ck_assert_int_eq(h.lo, -26);
	ck_assert_int_eq(h.hi, 16);
	ck_assert_uint_eq(h.flushed, 1);
	ck_assert_uint_eq(h.subnormal, 1);
	ck_assert_uint_eq(h.overflow, 1);
	ck_assert_int_eq(mag_hist_region(&h, -26), MAG_FLUSHED);
	ck_assert_int_eq(mag_hist_region(&h, -20), MAG_SUBNORMAL);
	ck_assert_int_eq(mag_hist_region(&h, 0), MAG_NORMAL);
	ck_assert_int_eq(mag_hist_region(&h, 16), MAG_OVERFLOW);
	ck_assert_int_eq(mag_hist_region(&h, 15), MAG_NORMAL);   /* [32768, 65536) starts below 65520 */
}
END_TEST

START_TEST(unscale_then_scale)
{
	/* gradients carrying a loss scale of 1024: 2^-10 is 2^-20 once unscaled
	 * (bucket -20); the shares are for it times S = 2^6: 2^-14, fp16's min
	 * normal, so not subnormal; 2^-15 * 2^-10 * 2^6 = 2^-19 is */
	const float g[] = { 0x1p-10f, 0x1p-15f };
	mag_hist h;
	mag_hist_init(&h, fmt_get(FMT_FP16), 64.0);
	mag_hist_add(&h, g, 2, 1024.0);
	ck_assert_uint_eq(at(&h, -20), 1);
	ck_assert_uint_eq(at(&h, -25), 1);
	ck_assert_uint_eq(h.subnormal, 1);
	ck_assert_uint_eq(h.flushed, 0);
	/* at S = 1.5 the bucket [2^-26, 2^-25) becomes [1.5 2^-26, 1.5 2^-25):
	 * its upper part is above half the smallest subnormal, so not flushed */
	mag_hist_init(&h, fmt_get(FMT_FP16), 1.5);
	ck_assert_int_eq(mag_hist_region(&h, -26), MAG_SUBNORMAL);
	ck_assert_int_eq(mag_hist_region(&h, -27), MAG_FLUSHED);
}
END_TEST

START_TEST(doubles_like_floats)
{
	/* the TUI's loss-scaling lab keeps |g| as binary64: the same buckets and
	 * shares (2^-26 flushed, 2^-20 subnormal, 1 and 1.5 in bucket 0) */
	const double x[] = { 0.0, 1.0, 1.5, 0x1p-26, 0x1p-20 };
	mag_hist h;
	mag_hist_init(&h, fmt_get(FMT_FP16), 1.0);
	mag_hist_add_double(&h, x, 5, 1.0);
	ck_assert_uint_eq(h.zero, 1);
	ck_assert_uint_eq(h.nonzero, 4);
	ck_assert_uint_eq(at(&h, 0), 2);
	ck_assert_uint_eq(h.flushed, 1);
	ck_assert_uint_eq(h.subnormal, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hist");
	TCase *tc = tcase_create("hist");
	tcase_add_test(tc, buckets_and_shares);
	tcase_add_test(tc, unscale_then_scale);
	tcase_add_test(tc, doubles_like_floats);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
