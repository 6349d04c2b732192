/* Bit flips after rounding (fmt/flip.h), against CPFloat's rule read in
 * north-numerical-computing/cpfloat (src/cpfloat_template.h at 6ea1027,
 * ADD_BITFLIP_CODE): each element independently, with probability p, gets
 * exactly one bit flipped, the position uniform over the eligible bits.
 * Checked: p = 0 leaves every value; p = 1 changes every element in exactly
 * one bit, inside the span (any, frac, exp) or at the chosen bit; the number
 * struck out of N at p = 0.01, and each position's share at p = 1, within
 * six binomial standard deviations; the same flips for a seed whatever the
 * call split; another seed gives other flips. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "testutil.h"

#include "fmt/flip.h"
#include "fmt/format.h"
#include "util/rng.h"

static int popcount32(uint32_t x)
{
	int n = 0;
	for (; x; x &= x - 1)
		n++;
	return n;
}

/* The fields of f as [lo, lo + n) bit ranges, derived from the table's
 * widths: fraction at the bottom, exponent above it, sign (if any) on top. */
static void span_of(const fmt_info *f, flip_where w, int *lo, int *n)
{
	*lo = w == FLIP_EXP ? f->frac_bits : 0;
	*n = w == FLIP_FRAC ? f->frac_bits : w == FLIP_EXP ? f->exp_bits : f->width;
}

START_TEST(p_zero_is_identity)
{
	for (int id = 0; id < FMT_COUNT; id++) {
		const fmt_info *f = fmt_get((fmt_id)id);
		flip_opts o = { .p = 0.0, .seed = 7, .where = FLIP_ANY };
		for (uint32_t i = 0; i < 4096; i++) {
			uint32_t bits = rng_bits(1, i) & (f->width == 32 ? UINT32_MAX : (UINT32_C(1) << f->width) - 1);
			ck_assert_uint_eq(flip_code(f, &o, i, bits), bits);
			ck_assert_int_eq(flip_pick(f, &o, i), -1);
		}
	}
	float x[256];
	for (int i = 0; i < 256; i++)
		x[i] = u2f(rng_bits(2, (uint64_t)i));
	float y[256];
	memcpy(y, x, sizeof x);
	flip_opts o = { .p = 0.0, .seed = 7 };
	ck_assert_uint_eq(flip_floats(FMT_FP32, &o, 0, y, 256), 0);
	ck_assert_int_eq(memcmp(x, y, sizeof x), 0);
}
END_TEST

/* p = 1: one bit, inside the span, for every kernel-or-not format and span. */
START_TEST(p_one_flips_one_bit_in_span)
{
	static const flip_where spans[] = { FLIP_ANY, FLIP_FRAC, FLIP_EXP };
	for (int id = 0; id < FMT_COUNT; id++) {
		const fmt_info *f = fmt_get((fmt_id)id);
		for (size_t s = 0; s < 3; s++) {
			int lo, n;
			span_of(f, spans[s], &lo, &n);
			flip_opts o = { .p = 1.0, .seed = 11, .where = spans[s] };
			for (uint32_t i = 0; i < 2000; i++) {
				uint32_t bits = rng_bits(3, i) & (f->width == 32 ? UINT32_MAX : (UINT32_C(1) << f->width) - 1);
				uint32_t d = flip_code(f, &o, i, bits) ^ bits;
				if (n == 0) {   /* e8m0's fraction: nothing to strike */
					ck_assert_uint_eq(d, 0);
					continue;
				}
				ck_assert_int_eq(popcount32(d), 1);
				int b = __builtin_ctz(d);
				ck_assert_msg(b >= lo && b < lo + n, "%s span %zu: bit %d outside [%d,%d)", f->name, s, b, lo,
				              lo + n);
			}
		}
		for (int bit = 0; bit < f->width; bit++) {
			flip_opts o = { .p = 1.0, .seed = 5, .where = FLIP_BIT, .bit = bit };
			ck_assert_uint_eq(flip_code(f, &o, 9, 0), UINT32_C(1) << bit);
		}
		flip_opts past = { .p = 1.0, .where = FLIP_BIT, .bit = f->width };
		ck_assert_uint_eq(flip_code(f, &past, 9, 0), 0);
	}
}
END_TEST

/* Values: fp32 flips the float's own bits; bf16's are the top 16 of fp32's,
 * so a fraction flip of a bf16 value changes exactly one of bits 16..22. */
START_TEST(floats_flip_their_encoding)
{
	enum { N = 3000 };
	float x[N], y[N];
	for (int i = 0; i < N; i++)
		x[i] = u2f((rng_bits(4, (uint64_t)i) & 0x3fff0000u) | 0x3f800000u);   /* bf16 values in [1, 4) */
	memcpy(y, x, sizeof x);
	flip_opts o = { .p = 1.0, .seed = 2, .where = FLIP_FRAC };
	ck_assert_uint_eq(flip_floats(FMT_BF16, &o, 100, y, N), N);
	for (int i = 0; i < N; i++) {
		uint32_t d = f2u(x[i]) ^ f2u(y[i]);
		ck_assert_int_eq(popcount32(d), 1);
		ck_assert_msg(d >= (1u << 16) && d < (1u << 23), "element %d: %08x", i, d);
		ck_assert_int_eq(__builtin_ctz(d) - 16, flip_pick(fmt_get(FMT_BF16), &o, 100 + (uint64_t)i));
	}
	memcpy(y, x, sizeof x);
	o.where = FLIP_ANY;
	ck_assert_uint_eq(flip_floats(FMT_FP32, &o, 0, y, N), N);
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(popcount32(f2u(x[i]) ^ f2u(y[i])), 1);
}
END_TEST

/* At p = 0.01 the struck count is Binomial(N, p'), p' = floor(p 2^64) / 2^64
 * (p' - p < 2^-64): within mean +- 6 sqrt(N p (1 - p)). At p = 1 over the 8
 * bits of fp8-e4m3, each position's count is Binomial(N, 1/8). */
START_TEST(frequencies_binomial)
{
	const fmt_info *f = fmt_get(FMT_E4M3);
	const double p = 0.01;
	const size_t N = 1u << 20;
	flip_opts o = { .p = p, .seed = 12345, .where = FLIP_ANY };
	size_t hits = 0;
	for (size_t i = 0; i < N; i++)
		hits += flip_pick(f, &o, i) >= 0;
	double mean = (double)N * p, sd = sqrt((double)N * p * (1 - p));
	ck_assert_msg(fabs((double)hits - mean) <= 6 * sd, "%zu flips of %zu, expected %.0f +- %.0f", hits, N, mean,
	              6 * sd);
	size_t per[8] = { 0 };
	const size_t M = 80000;
	o.p = 1.0;
	for (size_t i = 0; i < M; i++)
		per[flip_pick(f, &o, i)]++;
	double m8 = (double)M / 8, sd8 = sqrt((double)M * (1.0 / 8) * (7.0 / 8));
	for (int b = 0; b < 8; b++)
		ck_assert_msg(fabs((double)per[b] - m8) <= 6 * sd8, "bit %d: %zu of %zu", b, per[b], M);
}
END_TEST

/* A seed's flips depend on the element's index only: one call equals two
 * calls split anywhere; another seed strikes other elements. */
START_TEST(reproducible_by_index)
{
	enum { N = 5000 };
	static float a[N], b[N], c[N];
	for (int i = 0; i < N; i++)
		a[i] = b[i] = c[i] = (float)(i % 97) * 0.25f;
	flip_opts o = { .p = 0.05, .seed = 99, .where = FLIP_ANY };
	size_t n1 = flip_floats(FMT_FP16, &o, 40, a, N);
	size_t n2 = flip_floats(FMT_FP16, &o, 40, b, 1234) + flip_floats(FMT_FP16, &o, 40 + 1234, b + 1234, N - 1234);
	ck_assert_uint_eq(n1, n2);
	ck_assert_int_eq(memcmp(a, b, sizeof a), 0);
	o.seed = 100;
	flip_floats(FMT_FP16, &o, 40, c, N);
	ck_assert_int_ne(memcmp(a, c, sizeof a), 0);
}
END_TEST

START_TEST(where_parse)
{
	flip_opts o = { 0 };
	char err[128];
	ck_assert_int_eq(flip_where_parse("--flip-bits", "exp", &o, err, sizeof err), MP_OK);
	ck_assert_int_eq(o.where, FLIP_EXP);
	ck_assert_int_eq(flip_where_parse("--flip-bits", "7", &o, err, sizeof err), MP_OK);
	ck_assert_int_eq(o.where, FLIP_BIT);
	ck_assert_int_eq(o.bit, 7);
	ck_assert_int_eq(flip_where_parse("--flip-bits", "sign", &o, err, sizeof err), MP_EINVAL);
	ck_assert_str_eq(err, "--flip-bits: 'sign' is not any, frac, exp or a bit number 0..31");
	ck_assert_int_eq(flip_where_parse("--flip-bits", "32", &o, err, sizeof err), MP_EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("flip");
	TCase *tc = tcase_create("flip");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, p_zero_is_identity);
	tcase_add_test(tc, p_one_flips_one_bit_in_span);
	tcase_add_test(tc, floats_flip_their_encoding);
	tcase_add_test(tc, frequencies_binomial);
	tcase_add_test(tc, reproducible_by_index);
	tcase_add_test(tc, where_parse);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
