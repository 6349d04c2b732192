/* Stochastic rounding across a multiple of 2^16 of the index inside one
 * call, on every path. The vector kernels hold idx >> 16 of lowbias32's
 * first step from one step of their loops to the next, so the steps that
 * reach a new run of 2^16 indices, and those whose lanes straddle two runs,
 * are where a kernel could draw the wrong bits while every other element
 * is right. Checked:
 *
 * - fmt_bulk_encode and fmt_bulk_quantize of every kernel format (short
 *   calls from each of 64 starting offsets before a multiple of 2^16, so
 *   every alignment of the crossing to the vector lanes occurs, and calls
 *   of 2^20 elements and more, which stream their outputs a register at a
 *   time) against the scalar path with rng_bits(seed, index0 + i);
 * - quant_bulk's MX and nvfp4 sr over more than 2^16 elements from index 0,
 *   against quant_run (exact rationals), with MX blocks of 32 and of 40
 *   (a block of 40 puts a step of 4 vectors across the multiple); and from
 *   starting offsets before a multiple of 2^16 (quant_run starts at 0) on
 *   every path against the AVX-512 kernels, a separate implementation,
 *   where this CPU has them. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "bulk_check.h"
#include "fmt/bulk.h"
#include "fmt/parse.h"
#include "quant/quant.h"
#include "util/rng.h"

/* The first index of a run of 2^16: 3 2^16, away from 0 and from 2^32. */
#define RUN_START (3ull << 16)

/* Encode and quantize of in[0..n) from index0 on every tested path against
 * the scalar path; returns the mismatches. */
static size_t check_paths(const fmt_bulk_opts *o, const float *in, size_t n, uint32_t *exp, void *out, float *x)
{
	const fmt_info *f = fmt_get(o->fmt);
	size_t size = fmt_bulk_elem_size(o->fmt), bad = 0;
	char buf[160];
	scalar_expect(o, in, exp, n);
	for (int p = 0; p < FMT_SIMD_COUNT; p++) {
		if (!path_tested((fmt_simd)p))
			continue;
		opts_text(o, (fmt_simd)p, buf, sizeof buf);
		memset(out, 0xa5, n * size);
		ck_assert_int_eq(fmt_bulk_encode((fmt_simd)p, o, out, in, n), MP_OK);
		bad += count_bad(buf, in, exp, out, size, n);
		memcpy(x, in, n * sizeof *x);
		ck_assert_int_eq(fmt_bulk_quantize((fmt_simd)p, o, x, n), MP_OK);
		for (size_t i = 0; i < n; i++)
			if (f2u(x[i]) != decoded_bits(f, exp[i])) {
				if (bad < MAX_SHOWN)
					fprintf(stderr, "# %s quantize: element %zu (index %#" PRIx64 ") = %a: %a, expected %a\n",
					        buf, i, o->index0 + i, (double)in[i], (double)x[i],
					        (double)u2f(decoded_bits(f, exp[i])));
				bad++;
			}
	}
	return bad;
}

START_TEST(bulk_short_calls_across_a_run)
{
	fmt_id id = all_fmts[_i];
	enum { N = 300 };
	patterns p = { 0 };
	prng_state = 0x452821e638d01377ull + (uint64_t)id;
	pat_add_random(&p, id, N);
	float *in = as_floats(&p);
	uint32_t *exp = xmalloc(N * sizeof *exp);
	void *out = xmalloc(N * 4);
	float *x = xmalloc(N * sizeof *x);
	size_t bad = 0;
	/* the multiple of 2^16 falls on element 100 - off: 37 .. 100 */
	for (uint64_t off = 0; off < 64; off++) {
		fmt_bulk_opts o = { .fmt = id, .mode = FMT_SR, .saturate = off % 2 != 0, .seed = 17 + off,
		                    .index0 = RUN_START - 100 + off };
		bad += check_paths(&o, in, N, exp, out, x);
	}
	ck_assert_msg(bad == 0, "%s SR across 2^16: %zu mismatches (see the log)", fmt_get(id)->name, bad);
	free(exp);
	free(out);
	free(x);
	free(in);
	free(p.v);
}
END_TEST

START_TEST(bulk_streamed_calls_across_runs)
{
	fmt_id id = all_fmts[_i];
	const size_t n = (1u << 20) + 77;   /* streamed, and across 16 multiples of 2^16 */
	patterns p = { 0 };
	prng_state = 0xbe5466cf34e90c6cull + (uint64_t)id;
	pat_add_random(&p, id, n);
	float *in = as_floats(&p);
	uint32_t *exp = xmalloc(n * sizeof *exp);
	void *out = xmalloc(n * 4);
	float *x = xmalloc(n * sizeof *x);
	/* starts: on a multiple, one after, and one that is not a multiple of
	 * any register's lanes */
	const uint64_t starts[] = { RUN_START, RUN_START + 1, RUN_START - 12345 };
	size_t bad = 0;
	for (size_t s = 0; s < sizeof starts / sizeof starts[0]; s++) {
		fmt_bulk_opts o = { .fmt = id, .mode = FMT_SR, .seed = 5 + s, .index0 = starts[s] };
		bad += check_paths(&o, in, n, exp, out, x);
	}
	ck_assert_msg(bad == 0, "%s SR streamed across 2^16: %zu mismatches (see the log)", fmt_get(id)->name, bad);
	free(exp);
	free(out);
	free(x);
	free(in);
	free(p.v);
}
END_TEST

/* --- block formats --- */

#define QN 68000u   /* above 2^16, a multiple of 16, 32 and 40 */

/* Each block of 16 its own magnitude window, signs and exponents random. */
static void block_data(float *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t r = rng_bits(61, i), w = rng_bits(62, i / 16);
		uint32_t e = 60 + w % 120 + (r >> 23) % 10;
		v[i] = u2f((r & 0x807fffffu) | (e << 23));
	}
}

static void quant_exact_case(const float *v, quant_id q, size_t block, uint64_t seed)
{
	static uint8_t el[QN], sc[QN];
	quant_opts o = { .fmt = q, .mode = FMT_SR, .seed = seed, .block = block };
	fmt_num *xv = xmalloc(QN * sizeof *xv);
	for (size_t i = 0; i < QN; i++) {
		fmt_num_init(&xv[i]);
		fmt_num_set_double(&xv[i], v[i]);
	}
	quant_result r;
	ck_assert(quant_run(&o, xv, QN, &r, NULL, 0) == MP_OK);
	float s_t = 0;
	if (quant_get(q)->nvfp4)
		ck_assert(quant_bulk_tensor_scale(&s_t, v, QN, NULL) == MP_OK);
	for (int p = 0; p < FMT_SIMD_COUNT; p++) {
		if (!path_tested((fmt_simd)p))
			continue;
		memset(el, 0xaa, sizeof el);
		ck_assert(quant_bulk((fmt_simd)p, &o, s_t, 0, el, sc, v, QN, NULL) == MP_OK);
		for (size_t i = 0; i < QN; i++)
			ck_assert_msg(el[i] == r.elems[i].bits, "%s block %zu sr %s: element %zu = %a: 0x%02x, exact 0x%02x",
			              quant_get(q)->name, r.opts.block, fmt_simd_name((fmt_simd)p), i, (double)v[i], el[i],
			              r.elems[i].bits);
	}
	quant_result_free(&r);
	for (size_t i = 0; i < QN; i++)
		fmt_num_clear(&xv[i]);
	free(xv);
}

START_TEST(quant_across_a_run_exact)
{
	float *v = xmalloc(QN * sizeof *v);
	block_data(v, QN);
	quant_exact_case(v, QUANT_MXFP8_E4M3, 0, 3);
	quant_exact_case(v, QUANT_MXFP8_E4M3, 40, 4);
	quant_exact_case(v, QUANT_MXFP4, 0, 5);
	quant_exact_case(v, QUANT_NVFP4, 0, 6);
	free(v);
}
END_TEST

START_TEST(quant_across_a_run_paths)
{
	if (!fmt_simd_available(FMT_SIMD_AVX512))
		return;
	enum { M = 4000 };   /* a multiple of 16, 32 and 40 */
	static uint8_t e1[M], s1[M], e2[M], s2[M];
	float *v = xmalloc(M * sizeof *v);
	block_data(v, M);
	const struct { quant_id q; size_t block; } cases[] = {
		{ QUANT_MXFP8_E4M3, 32 }, { QUANT_MXFP8_E4M3, 40 }, { QUANT_MXFP4, 32 }, { QUANT_NVFP4, 16 },
	};
	float s_t;
	ck_assert(quant_bulk_tensor_scale(&s_t, v, M, NULL) == MP_OK);
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
		for (uint64_t k = 0; k < 40; k++) {
			size_t bs = cases[c].block;
			/* index0 a multiple of the block, the run's start in block 1 .. 40 */
			uint64_t index0 = (RUN_START / bs - k - 1) * bs;
			quant_opts o = { .fmt = cases[c].q, .mode = FMT_SR, .seed = 30 + k, .block = bs };
			ck_assert(quant_bulk(FMT_SIMD_AVX512, &o, s_t, index0, e2, s2, v, M, NULL) == MP_OK);
			for (int p = 0; p < FMT_SIMD_AVX512; p++) {
				if (!path_tested((fmt_simd)p))
					continue;
				memset(e1, 0xaa, sizeof e1);
				ck_assert(quant_bulk((fmt_simd)p, &o, s_t, index0, e1, s1, v, M, NULL) == MP_OK);
				ck_assert(memcmp(s1, s2, M / bs) == 0);
				for (size_t i = 0; i < M; i++)
					ck_assert_msg(e1[i] == e2[i], "%s block %zu index0 %#" PRIx64 " %s: element %zu: 0x%02x, avx512 0x%02x",
					              quant_get(cases[c].q)->name, bs, index0, fmt_simd_name((fmt_simd)p), i, e1[i], e2[i]);
			}
		}
	free(v);
}
END_TEST

static Suite *sr_runs_suite(void)
{
	Suite *s = suite_create("sr_runs");
	TCase *tc = tcase_create("sr_runs");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, bulk_short_calls_across_a_run, 0, NFMTS);
	tcase_add_loop_test(tc, bulk_streamed_calls_across_runs, 0, NFMTS);
	tcase_add_test(tc, quant_across_a_run_exact);
	tcase_add_test(tc, quant_across_a_run_paths);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return bulk_check_main("test_sr_runs", argc, argv, sr_runs_suite);
}
