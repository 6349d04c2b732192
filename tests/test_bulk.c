/* fmt/bulk's encode: every available path against the scalar exact path.
 *
 * For every format (fp32, tf32, fp16, bf16, fp8-e4m3, fp8-e5m2), RNE and SR
 * and the modes rto, rnz, sr-equal (several seeds; index0 values that make one call cross a multiple of 2^32
 * and the 2^64 wrap), saturate on and off: fmt_bulk_encode on each path
 * equals fmt_round_double((double)x) element by element, with ctl.rbits =
 * rng_bits(seed, index0 + i), on about a million random fp32 patterns per
 * format plus the special and edge patterns (zeros, subnormals, every value
 * of the format with the midpoints to its neighbours and the fp32 patterns
 * either side, max, overflow thresholds, inf, NaNs with payloads). Also:
 * lengths that are not multiples of the vector width and misaligned
 * pointers, with guard elements that must stay untouched; SR results depend
 * only on (seed, index), not on the path or on how the array is split into
 * calls; hand-worked values, statuses and path selection. Quantize,
 * accumulate and decode: test_bulk_quantize.c. */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "bulk_check.h"
#include "fmt/bulk.h"
#include "fmt/format.h"
#include "fmt/round.h"
#include "util/rng.h"

static const uint64_t sr_seeds[] = { 0, 1, 0x9e3779b97f4a7c15ull };
/* index0 values: 0, an odd start, just below 2^32 (the call crosses 2^32),
 * just below 2^33, and just below 2^64 (the index wraps to 0). */
static const uint64_t sr_index0_tail[] = { 0, 12345, (1ull << 32) - 3000, (1ull << 33) - 77,
                                           UINT64_MAX - 1000 };
#define N_INDEX0 ((int)(sizeof sr_index0_tail / sizeof sr_index0_tail[0]))

#define N_RANDOM_RNE (1u << 21)

/* Encodes in[0..n) on every available path and compares with the scalar
 * path; returns the number of mismatches (all paths). */
static size_t check_encode_all_paths(const fmt_bulk_opts *o, const float *in, size_t n)
{
	size_t size = fmt_bulk_elem_size(o->fmt);
	uint32_t *exp = xmalloc(n * sizeof *exp);
	void *out = xmalloc(n * size);
	scalar_expect(o, in, exp, n);
	size_t bad = 0;
	char buf[160];
	for (int p = 0; p < FMT_SIMD_COUNT; p++) {
		if (!path_tested((fmt_simd)p))
			continue;
		memset(out, 0xa5, n * size);
		ck_assert_int_eq(fmt_bulk_encode((fmt_simd)p, o, out, in, n), MP_OK);
		size_t b = count_bad(opts_text(o, (fmt_simd)p, buf, sizeof buf), in, exp, out, size, n);
		if (b)
			fprintf(stderr, "# %s: %zu of %zu elements differ from fmt_round_double\n", buf, b, n);
		bad += b;
	}
	free(exp);
	free(out);
	return bad;
}

/* --- encode: RNE --- */

START_TEST(encode_rne_matches_scalar)
{
	fmt_id id = all_fmts[_i];
	patterns p = make_inputs(id, N_RANDOM_RNE);
	float *in = as_floats(&p);
	size_t bad = 0;
	for (int sat = 0; sat < 2; sat++) {
		fmt_bulk_opts o = { .fmt = id, .mode = FMT_RNE, .saturate = sat != 0 };
		bad += check_encode_all_paths(&o, in, p.n);
	}
	ck_assert_msg(bad == 0, "%s RNE: %zu mismatches against fmt_round_double (see the log)",
	              fmt_get(id)->name, bad);
	free(in);
	free(p.v);
}
END_TEST

/* --- encode: SR --- */

START_TEST(encode_sr_matches_scalar)
{
	fmt_id id = all_fmts[_i];
	patterns p = make_inputs(id, N_RANDOM_SR);
	float *in = as_floats(&p);
	size_t bad = 0;
	for (int sat = 0; sat < 2; sat++)
		for (size_t s = 0; s < sizeof sr_seeds / sizeof sr_seeds[0]; s++)
			for (int k = 0; k < N_INDEX0; k++) {
				fmt_bulk_opts o = { .fmt = id, .mode = FMT_SR, .saturate = sat != 0,
				                    .seed = sr_seeds[s], .index0 = sr_index0_tail[k] };
				/* start the near-boundary index0 values half a call before it */
				if (k >= 2)
					o.index0 = sr_index0_tail[k] + 3000 - p.n / 2;
				if (k == 2 || k == 4)
					ck_assert(o.index0 + p.n - 1 < o.index0 || (o.index0 >> 32) != ((o.index0 + p.n - 1) >> 32));
				bad += check_encode_all_paths(&o, in, p.n);
			}
	ck_assert_msg(bad == 0, "%s SR: %zu mismatches against fmt_round_double (see the log)",
	              fmt_get(id)->name, bad);
	free(in);
	free(p.v);
}
END_TEST

/* --- encode: rto, rnz, sr-equal --- */

/* The modes beyond rne and sr on every path against fmt_round_double, which
 * test_round_mpfr checks against MPFR (rto and rnz derived there from the
 * neighbours and the midpoint); sr-equal with index0 values whose calls
 * cross 2^32. */
START_TEST(encode_modes_match_scalar)
{
	fmt_id id = all_fmts[_i];
	patterns p = make_inputs(id, N_RANDOM_RNE / 2);
	float *in = as_floats(&p);
	static const fmt_mode modes[] = { FMT_RTO, FMT_RNZ, FMT_SR_EQUAL };
	size_t bad = 0;
	for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
		for (int sat = 0; sat < 2; sat++)
			for (int k = 0; k < (modes[m] == FMT_SR_EQUAL ? 3 : 1); k++) {
				fmt_bulk_opts o = { .fmt = id, .mode = modes[m], .saturate = sat != 0,
				                    .seed = sr_seeds[k], .index0 = sr_index0_tail[k] };
				if (k == 2)
					o.index0 = sr_index0_tail[k] + 3000 - p.n / 2;
				bad += check_encode_all_paths(&o, in, p.n);
			}
	ck_assert_msg(bad == 0, "%s rto/rnz/sr-equal: %zu mismatches against fmt_round_double (see the log)",
	              fmt_get(id)->name, bad);
	free(in);
	free(p.v);
}
END_TEST

/* SR: the same (seed, index) gives the same result whatever the split into
 * calls and whatever the path. */
START_TEST(sr_split_independent)
{
	fmt_id id = all_fmts[_i];
	const size_t n = 5000;
	size_t size = fmt_bulk_elem_size(id);
	patterns p = { 0 };
	prng_state = 0x13198a2e03707344ull + (uint64_t)id;
	pat_add_random(&p, id, n);
	float *in = as_floats(&p);
	uint32_t *exp = xmalloc(n * sizeof *exp);
	void *out = xmalloc(n * size);
	const uint64_t starts[] = { 0, (1ull << 32) - 2500, (7ull << 32) - 1, UINT64_MAX - 2500 };
	char buf[160];
	size_t bad = 0;
	for (size_t s = 0; s < sizeof starts / sizeof starts[0]; s++) {
		fmt_bulk_opts o = { .fmt = id, .mode = FMT_SR, .seed = 42 + s, .index0 = starts[s] };
		scalar_expect(&o, in, exp, n);
		for (int path = 0; path < FMT_SIMD_COUNT; path++) {
			if (!path_tested((fmt_simd)path))
				continue;
			for (int trial = 0; trial < 4; trial++) {
				memset(out, 0xa5, n * size);
				size_t done = 0;
				while (done < n) {
					/* piece lengths: 1..40, sometimes a few hundred */
					size_t len = trial == 0 ? n : 1 + prng() % (prng() % 8 == 0 ? 400 : 40);
					if (len > n - done)
						len = n - done;
					fmt_bulk_opts part = o;
					part.index0 = o.index0 + done;
					ck_assert_int_eq(fmt_bulk_encode((fmt_simd)path, &part, (char *)out + done * size,
					                                 in + done, len), MP_OK);
					done += len;
				}
				opts_text(&o, (fmt_simd)path, buf, sizeof buf);
				size_t b = count_bad(buf, in, exp, out, size, n);
				if (b)
					fprintf(stderr, "# %s split trial %d: %zu mismatches\n", buf, trial, b);
				bad += b;
			}
		}
	}
	ck_assert_msg(bad == 0, "%s SR split into calls: %zu mismatches", fmt_get(id)->name, bad);
	free(exp);
	free(out);
	free(in);
	free(p.v);
}
END_TEST

/* --- tails and misaligned pointers, with guard elements --- */

START_TEST(encode_tails_and_guards)
{
	fmt_id id = all_fmts[_i];
	size_t size = fmt_bulk_elem_size(id);
	patterns p = make_inputs(id, 4096);
	float *src = as_floats(&p);
	size_t cap = 257 + 2 * GUARD + 4;
	float *in = xmalloc(cap * sizeof(float));
	uint32_t *exp = xmalloc(cap * sizeof *exp);
	unsigned char *outbuf = xmalloc(cap * size + 8);
	char buf[160];
	size_t bad = 0, pos = 0;
	static const fmt_mode modes[] = { FMT_RNE, FMT_SR, FMT_RTO, FMT_RNZ, FMT_SR_EQUAL };
	for (size_t mode = 0; mode < sizeof modes / sizeof modes[0]; mode++)
		for (int sat = 0; sat < 2; sat++)
			for (size_t li = 0; li < sizeof tail_lengths / sizeof tail_lengths[0]; li++)
				for (size_t off = 0; off < 4; off++) {
					size_t n = tail_lengths[li];
					/* a window of the patterns, edges first, then random */
					for (size_t i = 0; i < n; i++)
						in[off + i] = src[(pos + i) % p.n];
					pos = (pos + n * 7 + 1) % p.n;
					fmt_bulk_opts o = { .fmt = id, .mode = modes[mode], .saturate = sat != 0,
					                    .seed = 7, .index0 = (1ull << 32) - 20 + li };
					scalar_expect(&o, in + off, exp, n);
					for (int path = 0; path < FMT_SIMD_COUNT; path++) {
						if (!path_tested((fmt_simd)path))
							continue;
						/* output misaligned by off elements and by one byte */
						for (int byte = 0; byte < 2; byte++) {
							unsigned char *out = outbuf + byte + off * size;
							memset(outbuf, 0x5a, cap * size + 8);
							ck_assert_int_eq(fmt_bulk_encode((fmt_simd)path, &o, out, in + off, n), MP_OK);
							opts_text(&o, (fmt_simd)path, buf, sizeof buf);
							bad += count_bad(buf, in + off, exp, out, size, n);
							for (unsigned char *q = outbuf; q < outbuf + cap * size + 8; q++)
								if ((q < out || q >= out + n * size) && *q != 0x5a) {
									if (bad < MAX_SHOWN)
										fprintf(stderr, "# %s n=%zu off=%zu: byte %td outside the output "
										        "was written\n", buf, n, off, q - out);
									bad++;
								}
						}
					}
				}
	ck_assert_msg(bad == 0, "%s: %zu mismatches or guard writes in short/misaligned calls",
	              fmt_get(id)->name, bad);
	free(in);
	free(exp);
	free(outbuf);
	free(src);
	free(p.v);
}
END_TEST

/* --- statuses and path selection --- */

START_TEST(status_and_paths)
{
	float in[4] = { 1.0f, 2.0f, 3.0f, 4.0f };
	uint16_t out[4];
	float dec[4];
	ck_assert(fmt_simd_available(FMT_SIMD_PORTABLE));
	ck_assert(!fmt_simd_available(FMT_SIMD_COUNT));
	ck_assert(!fmt_simd_available(FMT_SIMD_AUTO));
	ck_assert(fmt_simd_available(fmt_simd_best()));
	/* the best path is the fastest available one, capped by MIXPREC_SIMD */
	const char *cap = getenv("MIXPREC_SIMD");
	int limit = cap && !strcmp(cap, "portable") ? FMT_SIMD_PORTABLE
	            : cap && !strcmp(cap, "avx2") ? FMT_SIMD_AVX2 : FMT_SIMD_COUNT - 1;
	for (int p = 0; p <= limit; p++)
		if (fmt_simd_available((fmt_simd)p))
			ck_assert_int_ge((int)fmt_simd_best(), p);
	ck_assert_int_le((int)fmt_simd_best(), limit);
	const fmt_mode other[] = { FMT_RNA, FMT_RTZ, FMT_UP, FMT_DOWN };
	for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
		fmt_bulk_opts o = { .fmt = FMT_FP16, .mode = other[i] };
		ck_assert_int_eq(fmt_bulk_encode(FMT_SIMD_PORTABLE, &o, out, in, 4), MP_EUNSUPPORTED);
		ck_assert_int_eq(fmt_bulk_quantize(FMT_SIMD_PORTABLE, &o, dec, 4), MP_EUNSUPPORTED);
	}
	fmt_bulk_opts o = { .fmt = FMT_FP16, .mode = FMT_RNE };
	for (int p = 0; p < FMT_SIMD_COUNT; p++)
		if (!fmt_simd_available((fmt_simd)p))
			ck_assert_int_eq(fmt_bulk_encode((fmt_simd)p, &o, out, in, 4), MP_EUNSUPPORTED);
	ck_assert_int_eq(fmt_bulk_encode((fmt_simd)FMT_SIMD_COUNT, &o, out, in, 4), MP_EUNSUPPORTED);
	ck_assert_int_eq(fmt_bulk_encode(FMT_SIMD_AUTO, &o, out, in, 4), MP_OK);
	const uint16_t want[4] = { 0x3c00, 0x4000, 0x4200, 0x4400 };
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(out[i], want[i]);
	ck_assert_int_eq(fmt_bulk_decode(FMT_SIMD_AUTO, FMT_FP16, dec, out, 4), MP_OK);
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(f2u(dec[i]), f2u(in[i]));
	ck_assert_uint_eq(fmt_bulk_elem_size(FMT_FP32), 4);
	ck_assert_uint_eq(fmt_bulk_elem_size(FMT_TF32), 4);
	ck_assert_uint_eq(fmt_bulk_elem_size(FMT_FP16), 2);
	ck_assert_uint_eq(fmt_bulk_elem_size(FMT_BF16), 2);
	ck_assert_uint_eq(fmt_bulk_elem_size(FMT_E4M3), 1);
	ck_assert_uint_eq(fmt_bulk_elem_size(FMT_E5M2), 1);
}
END_TEST

/* Hand-worked values on every path: the canonical NaNs, overflow, saturation. */
START_TEST(hand_values)
{
	static const struct {
		fmt_id fmt;
		bool sat;
		uint32_t in, out;
	} cases[] = {
		{ FMT_FP16, false, 0x7fa00001u, 0x7e00 },  /* sNaN with payload */
		{ FMT_FP16, false, 0xffc00000u, 0x7e00 },  /* negative NaN -> positive canonical */
		{ FMT_FP16, false, 0x477ff000u, 0x7c00 },  /* 65520 -> inf */
		{ FMT_FP16, true, 0x477ff000u, 0x7bff },   /* saturated */
		{ FMT_FP16, true, 0xff800000u, 0xfbff },   /* -inf saturated */
		{ FMT_BF16, false, 0xff812345u, 0x7fc0 },
		{ FMT_BF16, false, 0x7f7f8000u, 0x7f80 },
		{ FMT_BF16, true, 0x7f7f8000u, 0x7f7f },
		{ FMT_E4M3, false, 0x7f800001u, 0x7f },
		{ FMT_E4M3, false, 0x43e80000u, 0x7e },    /* 464: tie -> 448 */
		{ FMT_E4M3, false, 0xc3e80001u, 0xff },    /* -464-: overflow -> NaN with the sign */
		{ FMT_E4M3, false, 0xc47a0000u, 0xff },    /* -1000 -> 1 1111 111 */
		{ FMT_E4M3, false, 0xff800000u, 0xff },    /* -inf -> 1 1111 111 */
		{ FMT_E4M3, false, 0x7f800000u, 0x7f },    /* +inf -> 0 1111 111 */
		{ FMT_E4M3, false, 0xffc00000u, 0x7f },    /* a NaN input: the canonical (positive) NaN */
		{ FMT_E4M3, true, 0xc3e80001u, 0xfe },     /* saturated: -448 */
		{ FMT_E4M3, true, 0x7f800000u, 0x7e },
		{ FMT_E5M2, false, 0xffc00000u, 0x7e },
		{ FMT_E5M2, false, 0x47700000u, 0x7c },    /* 61440: tie -> inf */
		{ FMT_E5M2, true, 0xc7700000u, 0xfb },
		{ FMT_TF32, false, 0x7f800001u, 0x3fe00 },
		{ FMT_TF32, false, 0x3f801000u, 0x1fc00 }, /* 1 + 2^-11: tie -> 1 */
		{ FMT_TF32, false, 0x3f803000u, 0x1fc02 },
		{ FMT_FP32, false, 0xffa00001u, 0x7fc00000u },
		{ FMT_FP32, false, 0x00000001u, 0x00000001u },
		{ FMT_FP32, false, 0xff800000u, 0xff800000u },
		{ FMT_FP32, true, 0x7f800000u, 0x7f7fffffu },  /* saturate: inf -> max, as in round.h */
		{ FMT_FP32, true, 0xff800000u, 0xff7fffffu },
		{ FMT_TF32, true, 0xff800000u, 0x7fbffu },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
		for (int path = 0; path < FMT_SIMD_COUNT; path++) {
			if (!path_tested((fmt_simd)path))
				continue;
			fmt_bulk_opts o = { .fmt = cases[c].fmt, .mode = FMT_RNE, .saturate = cases[c].sat };
			float x = u2f(cases[c].in);
			union { uint8_t b; uint16_t h; uint32_t w; } ob = { .w = 0 };
			ck_assert_int_eq(fmt_bulk_encode((fmt_simd)path, &o, &ob, &x, 1), MP_OK);
			size_t size = fmt_bulk_elem_size(o.fmt);
			uint32_t out = size == 1 ? ob.b : size == 2 ? ob.h : ob.w;
			ck_assert_msg(out == cases[c].out, "%s%s path %s: 0x%08" PRIx32 " -> 0x%" PRIx32 ", expected 0x%" PRIx32,
			              fmt_get(o.fmt)->name, o.saturate ? " saturate" : "", fmt_simd_name((fmt_simd)path),
			              cases[c].in, out, cases[c].out);
		}
}
END_TEST

static Suite *bulk_suite(void)
{
	Suite *s = suite_create("fmt_bulk");
	TCase *tc = tcase_create("bulk");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, status_and_paths);
	tcase_add_test(tc, hand_values);
	tcase_add_loop_test(tc, encode_rne_matches_scalar, 0, NFMTS);
	tcase_add_loop_test(tc, encode_sr_matches_scalar, 0, NFMTS);
	tcase_add_loop_test(tc, encode_modes_match_scalar, 0, NFMTS);
	tcase_add_loop_test(tc, sr_split_independent, 0, NFMTS);
	tcase_add_loop_test(tc, encode_tails_and_guards, 0, NFMTS);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return bulk_check_main("test_bulk", argc, argv, bulk_suite);
}
