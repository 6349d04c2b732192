/* The fused nvfp4 cast (quant_nv_rows, every path's kernel) against the
 * two passes it replaces, worked out here: quant_bulk on the portable path
 * for the codes and scales (itself checked against quant_run's exact
 * rationals), each code's value from fmt's decoders, e2m1(code) x
 * e4m3(scale) x s_t in binary64 (exact: at most 3, 4 and 24 bits) rounded
 * once to fp32, and the counts by their definitions (a nonzero input
 * decoded to 0; |x|'s pattern above its block's over). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fmt/decode.h"
#include "quant/quant.h"
#include "quant/quant_impl.h"
#include "testutil.h"
#include "util/rng.h"

#define NB 45            /* blocks: five groups of 8 and five more */
#define NE (NB * 16)

static float in[NE], want[NE], out[NE], amax_want[NB], amax[NB];
static uint32_t over[256];
static uint8_t scales_want[NB], scales[NB];
static size_t under_want, count_want;

/* Magnitudes over many binades per block (its own range), zeros, values
 * that vanish below the scale, and one all-zero block. */
static void fill(uint64_t seed)
{
	for (size_t i = 0; i < NE; i++) {
		uint32_t r = rng_bits(seed, i), b = (uint32_t)(i / 16);
		float v = ldexpf((float)(r >> 9) * 0x1p-23f + 1.0f, (int)(b * 5 % 40) - 20 - (int)(r % 28));
		in[i] = b == 3 || r % 11 == 0 ? 0.0f : r & 1 ? -v : v;
	}
}

/* The reference for o at stream index index0 with tensor scale s_t. */
static void reference(const quant_opts *o, float s_t, uint64_t index0)
{
	const fmt_info *e2 = fmt_get(quant_get(QUANT_NVFP4)->elem), *e4 = fmt_get(FMT_E4M3);
	uint8_t codes[NE];
	size_t bad;
	ck_assert_int_eq(quant_bulk(FMT_SIMD_PORTABLE, o, s_t, index0, codes, scales_want, in, NE, &bad), MP_OK);
	/* over: 3.25 x the scale (a fair share of each block counts), and for
	 * each block one element exactly at its block's (not above) */
	over[0] = UINT32_MAX;
	for (uint32_t k = 1; k < 256; k++)
		over[k] = f2u((float)(3.25 * fmt_to_double(e4, k & 0x7fu) * (double)s_t));
	for (size_t b = 0; b < NB; b++)
		if (in[b * 16 + b % 16] != 0 && scales_want[b] != 0)
			over[scales_want[b]] = f2u(in[b * 16 + b % 16]) & 0x7fffffffu;
	under_want = count_want = 0;
	for (size_t b = 0; b < NB; b++) {
		uint32_t am = 0;
		double D = fmt_to_double(e4, scales_want[b]) * (double)s_t;
		for (size_t i = b * 16; i < (b + 1) * 16; i++) {
			want[i] = (float)(fmt_to_double(e2, codes[i]) * D);
			uint32_t a = f2u(in[i]) & 0x7fffffffu;
			under_want += in[i] != 0 && want[i] == 0;
			count_want += a > over[scales_want[b]];
			am = a > am ? a : am;
		}
		amax_want[b] = u2f(am);
	}
}

static void check(const char *what, mp_status rc, size_t done, const quant_fused_stats *fs)
{
	ck_assert_msg(rc == MP_OK && done == NE, "%s: status %d, %zu done", what, (int)rc, done);
	for (size_t i = 0; i < NE; i++)
		ck_assert_msg(f2u(out[i]) == f2u(want[i]), "%s: element %zu: %08x, want %08x", what, i, f2u(out[i]),
		              f2u(want[i]));
	ck_assert_msg(memcmp(scales, scales_want, NB) == 0, "%s: scales", what);
	ck_assert_msg(memcmp(amax, amax_want, sizeof amax) == 0, "%s: amax", what);
	ck_assert_msg(fs->under == under_want && fs->count == count_want, "%s: under %zu count %zu, want %zu %zu", what,
	              fs->under, fs->count, under_want, count_want);
}

/* Stream starts: 0; one whose blocks cross a multiple of 2^16 (the keyed
 * counters' step); one just below a multiple of 2^32 (a new key). */
static const uint64_t starts[] = { 0, 65536 - 16 * 7, (5ull << 32) - NE };

/* Tensor scales: the tensor's own (quant_bulk_tensor_scale), one that
 * puts the smallest values near fp32's subnormals, one that saturates. */
static float scale_of(int k)
{
	float s_t = 0;
	ck_assert_int_eq(quant_bulk_tensor_scale(&s_t, in, NE, NULL), MP_OK);
	return k == 0 ? s_t : k == 1 ? 0x1p-135f : s_t * 0x1p-6f;
}

START_TEST(fused_as_two_passes)
{
	fmt_mode mode = _i % 2 ? FMT_SR : FMT_RNE;
	uint64_t index0 = starts[_i / 2 % 3];
	fill(200 + (uint64_t)_i);
	float s_t = scale_of(_i / 6);
	quant_opts o = { .fmt = QUANT_NVFP4, .mode = mode, .seed = 77 + (uint64_t)_i };
	reference(&o, s_t, index0);
	for (int p = 0; p < FMT_SIMD_COUNT; p++) {
		if (!fmt_simd_available((fmt_simd)p))
			continue;
		char what[96];
		snprintf(what, sizeof what, "%s, s_t %a, from %llu, path %s", mode == FMT_SR ? "sr" : "rne", (double)s_t,
		         (unsigned long long)index0, fmt_simd_name((fmt_simd)p));
		quant_fused_stats fs = { .scales = scales, .amax = amax };
		size_t done;
		memset(out, 0, sizeof out);
		mp_status rc = quant_nv_rows_on((fmt_simd)p, out, in, NE, &o, s_t, index0, over, &fs, &done);
		check(what, rc, done, &fs);
		/* in place */
		memcpy(out, in, sizeof out);
		fs = (quant_fused_stats){ .scales = scales, .amax = amax };
		rc = quant_nv_rows_on((fmt_simd)p, out, out, NE, &o, s_t, index0, over, &fs, &done);
		check(what, rc, done, &fs);
	}
	quant_fused_stats fs = { .scales = scales, .amax = amax };
	size_t done;
	mp_status rc = quant_nv_rows(out, in, NE, &o, s_t, index0, over, &fs, &done);
	check("quant_nv_rows", rc, done, &fs);
}
END_TEST

/* An inf or NaN: the blocks before it done, the rest unwritten. */
START_TEST(nonfinite)
{
	fill(9);
	float s_t = scale_of(0);
	for (int k = 0; k < 2; k++) {
		/* in the third group of 8; among the blocks after the last group */
		size_t at = k ? 17 * 16 + 5 : 42 * 16 + 15;
		float keep = in[at];
		in[at] = k ? NAN : -INFINITY;
		quant_opts o = { .fmt = QUANT_NVFP4, .mode = k ? FMT_SR : FMT_RNE, .seed = 3 };
		for (int p = 0; p < FMT_SIMD_COUNT; p++) {
			if (!fmt_simd_available((fmt_simd)p))
				continue;
			for (size_t i = 0; i < NE; i++)
				out[i] = -7.0f;
			quant_fused_stats fs = { .scales = scales, .amax = amax };
			size_t done;
			ck_assert_int_eq(quant_nv_rows_on((fmt_simd)p, out, in, NE, &o, s_t, 0, over, &fs, &done), MP_EINVAL);
			ck_assert_uint_eq(done, at / 16 * 16);
			for (size_t i = done; i < NE; i++)
				ck_assert_msg(f2u(out[i]) == f2u(-7.0f), "path %d: element %zu written", p, i);
		}
		in[at] = keep;
	}
}
END_TEST

/* What the fused cast does not do, refused before anything is written. */
START_TEST(refusals)
{
	fill(10);
	quant_fused_stats fs = { .scales = scales, .amax = amax };
	quant_opts o = { .fmt = QUANT_NVFP4, .mode = FMT_RNE };
	size_t done = 99;
	for (size_t i = 0; i < NE; i++)
		out[i] = -7.0f;
	ck_assert_int_eq(quant_nv_rows(out, in, NE - 8, &o, 1.0f, 0, over, &fs, &done), MP_EUNSUPPORTED);
	ck_assert_uint_eq(done, 0);
	ck_assert_int_eq(quant_nv_rows(out, in, NE, &o, 0.0f, 0, over, &fs, &done), MP_EUNSUPPORTED);   /* s_t 0 */
	o.block = 32;
	ck_assert_int_eq(quant_nv_rows(out, in, NE, &o, 1.0f, 0, over, &fs, &done), MP_EUNSUPPORTED);
	o = (quant_opts){ .fmt = QUANT_NVFP4, .mode = FMT_RTO };
	ck_assert_int_eq(quant_nv_rows(out, in, NE, &o, 1.0f, 0, over, &fs, &done), MP_EUNSUPPORTED);
	o = (quant_opts){ .fmt = QUANT_MXFP4, .mode = FMT_RNE };
	ck_assert_int_eq(quant_nv_rows(out, in, NE, &o, 1.0f, 0, over, &fs, &done), MP_EUNSUPPORTED);
	/* sr across a multiple of 2^32: two keys */
	o = (quant_opts){ .fmt = QUANT_NVFP4, .mode = FMT_SR };
	ck_assert_int_eq(quant_nv_rows(out, in, NE, &o, 1.0f, (1ull << 32) - 16, over, &fs, &done), MP_EUNSUPPORTED);
	for (size_t i = 0; i < NE; i++)
		ck_assert(f2u(out[i]) == f2u(-7.0f));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("quant_nvcast");
	TCase *tc = tcase_create("quant_nvcast");
	tcase_add_loop_test(tc, fused_as_two_passes, 0, 18);
	tcase_add_test(tc, nonfinite);
	tcase_add_test(tc, refusals);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
