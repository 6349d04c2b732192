/* Round to odd prevents double rounding (Boldo and Melquiond, "Emulation of
 * a FMA and correctly rounded sums: proved algorithms using rounding to
 * odd", IEEE Transactions on Computers 57(4):462-471, 2008: rounding to odd
 * into a wider precision, then to nearest, gives the correctly rounded
 * result). fp32 has 24 bits, bf16 8 and the same exponent range (fp32's
 * subnormal grid is 2^16 times finer), so for binary64 inputs x:
 * rne_bf16(rto_fp32(x)) == rne_bf16(x), which this test checks rather than
 * assumes.
 *
 * The inputs are the neighbourhoods of every bf16 midpoint, where double
 * rounding goes wrong: for every finite bf16 value of either sign, its
 * midpoints to both neighbours (past max: max + half its spacing), the
 * doubles one fp64 ulp either side, those 1/4, 1/2 - 2^-20, 1/2, 3/4 and
 * 1 - 2^-20 of an fp32 ulp either side, and a double 2^-30 of a bf16 step
 * either side. The expected result comes from GNU MPFR (precision 8, bf16's
 * exponent range, mpfr_subnormalize), not from fmt/; the rounding under
 * test is fmt_round_double's.
 *
 * Rounding by rne twice is wrong on named cases: x = 1 + 2^-8 + 2^-40 lies
 * above the midpoint of 1 and 1 + 2^-7; fp32 rne lands on the midpoint
 * 1 + 2^-8 (2^-40 is below half of fp32's ulp 2^-23), and bf16 rne then
 * ties to the even 1, where x's nearest bf16 is 1 + 2^-7. The test counts
 * such cases over the same inputs and checks the named ones. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <mpfr.h>

#include "fmt/decode.h"
#include "fmt/format.h"
#include "fmt/round.h"
#include "testutil.h"

/* x rounded to nearest even bf16 by MPFR, as a double (inf past the
 * overflow threshold). */
static double mpfr_bf16(mpfr_t m, double x)
{
	int inex = mpfr_set_d(m, x, MPFR_RNDN);
	inex = mpfr_check_range(m, inex, MPFR_RNDN);
	mpfr_subnormalize(m, inex, MPFR_RNDN);
	return mpfr_get_d(m, MPFR_RNDN);
}

/* fp32 in mode m, then bf16 by rne, through fmt/. */
static double via_fp32(fmt_mode m, double x)
{
	fmt_round_ctl c32 = { .mode = m }, c16 = { .mode = FMT_RNE };
	uint32_t b32 = fmt_round_double(fmt_get(FMT_FP32), &c32, x, NULL);
	double x32 = fmt_to_double(fmt_get(FMT_FP32), b32);
	return fmt_to_double(fmt_get(FMT_BF16), fmt_round_double(fmt_get(FMT_BF16), &c16, x32, NULL));
}

static double bf16_value(uint32_t b)
{
	return fmt_to_double(fmt_get(FMT_BF16), b);
}

/* The inputs around one midpoint mid (of two neighbours ulp16 apart):
 * up to 32 doubles into xs. */
static int around(double mid, double ulp16, double *xs)
{
	/* fp32's ulp at the midpoint: 2^-16 of bf16's spacing, never below 2^-149 */
	double u32 = fmax(ulp16 * 0x1p-16, 0x1p-149);
	static const double frac[] = { 0.25, 0.5 - 0x1p-20, 0.5, 0.75, 1 - 0x1p-20 };
	int n = 0;
	xs[n++] = mid;
	xs[n++] = nextafter(mid, INFINITY);
	xs[n++] = nextafter(mid, -INFINITY);
	for (size_t k = 0; k < sizeof frac / sizeof frac[0]; k++) {
		xs[n++] = mid + frac[k] * u32;
		xs[n++] = mid - frac[k] * u32;
	}
	xs[n++] = mid + ulp16 * 0x1p-30;
	xs[n++] = mid - ulp16 * 0x1p-30;
	return n;
}

START_TEST(rto_then_rne_is_rne)
{
	mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
	mpfr_set_emin(-132);   /* bf16 in MPFR's convention: min subnormal 0.5 * 2^-132 */
	mpfr_set_emax(128);
	mpfr_t m;
	mpfr_init2(m, 8);
	long checked = 0, wrong_rto = 0, wrong_rne = 0;
	for (uint32_t b = 0; b < 0x7f80u; b++) {   /* every finite non-negative bf16 */
		double v = bf16_value(b);
		double up = b + 1 < 0x7f80u ? bf16_value(b + 1) : 0x1p128;   /* past max: the next step */
		double down = b > 0 ? bf16_value(b - 1) : -bf16_value(1);
		double mids[2] = { (v + up) / 2, (down + v) / 2 }, gaps[2] = { up - v, v - down };
		for (int side = 0; side < 2; side++) {
			double xs[32];
			int n = around(mids[side], gaps[side], xs);
			for (int i = 0; i < n; i++)
				for (int sign = 0; sign < 2; sign++) {
					double x = sign ? -xs[i] : xs[i];
					if (!isfinite(x))
						continue;
					double want = mpfr_bf16(m, x);
					double got = via_fp32(FMT_RTO, x);
					if (memcmp(&got, &want, sizeof got) != 0 && wrong_rto++ < 8)
						fprintf(stderr, "# %a: rto then rne %a, rne %a\n", x, got, want);
					if (via_fp32(FMT_RNE, x) != want)
						wrong_rne++;
					checked++;
				}
		}
	}
	mpfr_clear(m);
	mpfr_set_emin(emin);
	mpfr_set_emax(emax);
	fprintf(stderr, "# %ld inputs: rto then rne wrong on %ld, rne twice wrong on %ld\n", checked, wrong_rto,
	        wrong_rne);
	ck_assert_int_gt(checked, 1000000);
	ck_assert_int_eq(wrong_rto, 0);
	/* rne twice fails wherever x lies within half an fp32 ulp of a midpoint
	 * and off it: mid +- 1 fp64 ulp and +- 1/4 fp32 ulp of every midpoint
	 * but the few where fp32 itself is coarser than that */
	ck_assert_int_gt(wrong_rne, 100000);
}
END_TEST

/* The cases named in the lesson (lessons/rounding-rules.md), each value
 * worked out by hand in the comment. */
START_TEST(named_cases)
{
	/* 1 + 2^-8 + 2^-40: fp32 rne -> 1 + 2^-8 (the midpoint), bf16 rne -> 1
	 * (even); directly, and via rto (fp32 1 + 2^-8 + 2^-23, odd), 1 + 2^-7 */
	double x = 1 + 0x1p-8 + 0x1p-40;
	ck_assert(via_fp32(FMT_RNE, x) == 1.0);
	ck_assert(via_fp32(FMT_RTO, x) == 1 + 0x1p-7);
	/* 1 + 3 2^-8 - 2^-40, just below the midpoint of 1 + 2^-7 and
	 * 1 + 2^-6: fp32 rne -> the midpoint, bf16 rne -> 1 + 2^-6 (even
	 * 0x3f82); directly, and via rto, 1 + 2^-7 */
	x = 1 + 3 * 0x1p-8 - 0x1p-40;
	ck_assert(via_fp32(FMT_RNE, x) == 1 + 0x1p-6);
	ck_assert(via_fp32(FMT_RTO, x) == 1 + 0x1p-7);
	/* the midpoint itself is exact in fp32: both give the tie's even 1 */
	ck_assert(via_fp32(FMT_RNE, 1 + 0x1p-8) == 1.0);
	ck_assert(via_fp32(FMT_RTO, 1 + 0x1p-8) == 1.0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("double_round");
	TCase *tc = tcase_create("double_round");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, rto_then_rne_is_rne);
	tcase_add_test(tc, named_cases);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
