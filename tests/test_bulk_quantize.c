/* fmt/bulk's float-to-float operations on every available path, for every
 * format, against the scalar exact path: fmt_bulk_quantize equals encode
 * then decode (and the scalar result decoded); fmt_bulk_accumulate, plain
 * and Kahan, RNE and SR, equals the step written out with the scalar path;
 * fmt_bulk_decode of every pattern (all 2^8 / 2^16 / 2^19, fp32 sampled)
 * equals fmt_to_double with NaN -> 0x7fc00000; short calls with guard
 * elements, and calls long enough to be streamed; the fp8 decode by arithmetic (the device's) equals the tables.
 * Encode: test_bulk.c. */
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
#include "fmt/bulk_impl.h"
#include "fmt/decode.h"
#include "fmt/format.h"
#include "fmt/round.h"
#include "util/rng.h"

/* --- accumulate --- */

/* The scalar model of one accumulation step, from the exact path only:
 * q(v) = the fp32 value of fmt_round_double(v) (v is an fp32 sum). */
static float scalar_q(fmt_id id, fmt_mode mode, uint32_t rbits, float v)
{
	fmt_round_ctl ctl = { .mode = mode, .rbits = rbits };
	return u2f(decoded_bits(fmt_get(id), fmt_round_double(fmt_get(id), &ctl, (double)v, NULL)));
}

/* fmt_bulk_accumulate on every path, plain and Kahan, RNE, SR, rto, rnz and
 * sr-equal, against
 * the step written out with the scalar exact path: x = q(x + u) and
 * y = u - c, t = q(x + y), c = q_rne((t - x) - y), x = t. Values of the
 * format near a few magnitudes with small updates, so that many are lost. */
START_TEST(accumulate_matches_scalar)
{
	fmt_id id = all_fmts[_i];
	size_t n = 20000 + 13;
	float *x0 = xmalloc(n * 4), *u = xmalloc(n * 4), *c0 = xmalloc(n * 4);
	float *x = xmalloc(n * 4), *c = xmalloc(n * 4), *ex = xmalloc(n * 4), *ec = xmalloc(n * 4);
	prng_state = 0x1234567ull + (uint64_t)_i;
	static const float mags[] = { 1.0f, 600.0f, 3.0e-3f, 40.0f };
	for (size_t i = 0; i < n; i++) {
		float m = mags[i % 4] * (1.0f + (float)(prng() % 1000) / 1000.0f);
		x0[i] = scalar_q(id, FMT_RNE, 0, (prng() & 1) ? -m : m);
		u[i] = (float)((double)(int32_t)prng() / 2147483648.0) * mags[i % 4] * 0.01f;
		c0[i] = scalar_q(id, FMT_RNE, 0, u[i] * 0.1f);
	}
	const struct { fmt_mode mode; uint64_t seed, index0; } runs[] = {
		{ FMT_RNE, 0, 0 }, { FMT_SR, 5, 77 }, { FMT_SR, 6, (1ull << 32) - 5000 },
		{ FMT_RTO, 0, 0 }, { FMT_RNZ, 0, 0 }, { FMT_SR_EQUAL, 6, (1ull << 32) - 5000 },
	};
	size_t bad = 0;
	for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
		for (int kahan = 0; kahan < 2; kahan++) {
			size_t same = 0;
			for (size_t i = 0; i < n; i++) {
				uint32_t rb = rng_bits(runs[r].seed, runs[r].index0 + i);
				if (kahan) {
					float y = u[i] - c0[i];
					float t = scalar_q(id, runs[r].mode, rb, x0[i] + y);
					ec[i] = scalar_q(id, FMT_RNE, 0, (t - x0[i]) - y);
					ex[i] = t;
				} else {
					ex[i] = scalar_q(id, runs[r].mode, rb, x0[i] + u[i]);
				}
				same += ex[i] == x0[i];
			}
			for (int path = 0; path < FMT_SIMD_COUNT; path++) {
				if (!path_tested((fmt_simd)path))
					continue;
				memcpy(x, x0, n * 4);
				memcpy(c, c0, n * 4);
				fmt_bulk_opts o = { .fmt = id, .mode = runs[r].mode, .seed = runs[r].seed,
				                    .index0 = runs[r].index0 };
				size_t unchanged = 0;
				ck_assert_int_eq(fmt_bulk_accumulate((fmt_simd)path, &o, x, kahan ? c : NULL, u, n,
				                                     &unchanged), MP_OK);
				for (size_t i = 0; i < n; i++) {
					bool ok = f2u(x[i]) == f2u(ex[i]) && (!kahan || f2u(c[i]) == f2u(ec[i]));
					if (!ok && bad++ < MAX_SHOWN)
						printf("# accumulate %s %s kahan=%d path %s i=%zu: x %a + u %a -> %a, want %a\n",
						       fmt_get(id)->name, fmt_mode_name(runs[r].mode), kahan,
						       fmt_simd_name((fmt_simd)path), i, (double)x0[i], (double)u[i],
						       (double)x[i], (double)ex[i]);
				}
				ck_assert_uint_eq(unchanged, same);
			}
		}
	}
	free(x0); free(u); free(c0); free(x); free(c); free(ex); free(ec);
	ck_assert_msg(bad == 0, "%zu accumulate mismatches", bad);
}
END_TEST

/* --- quantize --- */

/* fmt_bulk_quantize on every path == encode on the same path then decode ==
 * the scalar result decoded; also short calls with guards. */
START_TEST(quantize_matches_encode_decode)
{
	fmt_id id = all_fmts[_i];
	const fmt_info *f = fmt_get(id);
	size_t size = fmt_bulk_elem_size(id);
	patterns p = make_inputs(id, N_RANDOM_SR);
	float *in = as_floats(&p);
	size_t n = p.n;
	uint32_t *exp = xmalloc(n * sizeof *exp);
	uint32_t *expq = xmalloc(n * sizeof *expq);
	float *x = xmalloc(n * sizeof(float));
	float *dec = xmalloc(n * sizeof(float));
	void *enc = xmalloc(n * size);
	char buf[160];
	size_t bad = 0;
	const struct { fmt_mode mode; uint64_t seed, index0; } runs[] = {
		{ FMT_RNE, 0, 0 }, { FMT_SR, 3, 0 }, { FMT_SR, 99, (1ull << 32) - 1000 },
		{ FMT_RTO, 0, 0 }, { FMT_RNZ, 0, 0 }, { FMT_SR_EQUAL, 99, (1ull << 32) - 1000 },
	};
	for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++)
		for (int sat = 0; sat < 2; sat++) {
			fmt_bulk_opts o = { .fmt = id, .mode = runs[r].mode, .saturate = sat != 0,
			                    .seed = runs[r].seed, .index0 = runs[r].index0 };
			scalar_expect(&o, in, exp, n);
			for (size_t i = 0; i < n; i++)
				expq[i] = decoded_bits(f, exp[i]);
			for (int path = 0; path < FMT_SIMD_COUNT; path++) {
				if (!path_tested((fmt_simd)path))
					continue;
				opts_text(&o, (fmt_simd)path, buf, sizeof buf);
				memcpy(x, in, n * sizeof(float));
				ck_assert_int_eq(fmt_bulk_quantize((fmt_simd)path, &o, x, n), MP_OK);
				size_t b = count_bad(buf, in, expq, x, 4, n);
				if (b)
					fprintf(stderr, "# %s quantize vs scalar decoded: %zu mismatches\n", buf, b);
				bad += b;
				ck_assert_int_eq(fmt_bulk_encode((fmt_simd)path, &o, enc, in, n), MP_OK);
				ck_assert_int_eq(fmt_bulk_decode((fmt_simd)path, id, dec, enc, n), MP_OK);
				uint32_t *ed = xmalloc(n * sizeof *ed);
				memcpy(ed, dec, n * 4);
				b = count_bad(buf, in, ed, x, 4, n);
				if (b)
					fprintf(stderr, "# %s quantize vs encode+decode: %zu mismatches\n", buf, b);
				bad += b;
				free(ed);
				/* short calls with guards */
				for (size_t li = 0; li < sizeof tail_lengths / sizeof tail_lengths[0]; li++) {
					size_t m = tail_lengths[li], at = (li * 97) % (n - m + 1);
					float g[257 + 2 * GUARD];
					for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
						g[i] = u2f(0x7f8a5a5au);
					memcpy(g + GUARD, in + at, m * sizeof(float));
					fmt_bulk_opts os = o;
					os.index0 = o.index0 + at;
					ck_assert_int_eq(fmt_bulk_quantize((fmt_simd)path, &os, g + GUARD, m), MP_OK);
					bad += count_bad(buf, in + at, expq + at, g + GUARD, 4, m);
					for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
						if ((i < GUARD || i >= GUARD + m) && f2u(g[i]) != 0x7f8a5a5au) {
							fprintf(stderr, "# %s quantize n=%zu wrote outside: element %zd\n", buf, m,
							        (ptrdiff_t)i - GUARD);
							bad++;
						}
				}
			}
		}
	ck_assert_msg(bad == 0, "%s quantize: %zu mismatches", f->name, bad);
	free(exp);
	free(expq);
	free(x);
	free(dec);
	free(enc);
	free(in);
	free(p.v);
}
END_TEST

/* --- decode --- */

START_TEST(decode_every_pattern)
{
	fmt_id id = all_fmts[_i];
	const fmt_info *f = fmt_get(id);
	size_t size = fmt_bulk_elem_size(id);
	size_t n;
	void *in;
	uint32_t *exp;
	if (id == FMT_FP32) {
		patterns p = make_inputs(FMT_FP32, 1u << 20);
		n = p.n;
		in = p.v;
	} else {
		n = (size_t)1 << f->width;
		in = xmalloc(n * size);
		for (size_t b = 0; b < n; b++)
			store_elem(in, size, b, (uint32_t)b);
	}
	exp = xmalloc(n * sizeof *exp);
	for (size_t i = 0; i < n; i++)
		exp[i] = decoded_bits(f, load_elem(in, size, i));
	float *out = xmalloc(n * sizeof(float) + 2 * GUARD * sizeof(float));
	size_t bad = 0;
	char what[96];
	for (int path = 0; path < FMT_SIMD_COUNT; path++) {
		if (!path_tested((fmt_simd)path))
			continue;
		snprintf(what, sizeof what, "%s decode path=%s", f->name, fmt_simd_name((fmt_simd)path));
		memset(out, 0xa5, n * sizeof(float));
		ck_assert_int_eq(fmt_bulk_decode((fmt_simd)path, id, out, in, n), MP_OK);
		for (size_t i = 0; i < n; i++) {
			uint32_t g = f2u(out[i]);
			if (g != exp[i]) {
				if (bad < MAX_SHOWN)
					fprintf(stderr, "# %s: pattern 0x%" PRIx32 ": expected 0x%08" PRIx32 ", got 0x%08" PRIx32 "\n",
					        what, load_elem(in, size, i), exp[i], g);
				bad++;
			}
		}
		/* short calls at every alignment, with guards */
		for (size_t li = 0; li < sizeof tail_lengths / sizeof tail_lengths[0]; li++)
			for (size_t off = 0; off < 3; off++) {
				size_t m = tail_lengths[li];
				if (m > n)
					continue;
				size_t at = (li * 131 + off) % (n - m + 1);
				for (size_t i = 0; i < m + 2 * GUARD; i++)
					out[i] = u2f(0x7f8a5a5au);
				ck_assert_int_eq(fmt_bulk_decode((fmt_simd)path, id, out + GUARD,
				                                 (const char *)in + at * size, m), MP_OK);
				for (size_t i = 0; i < m + 2 * GUARD; i++) {
					uint32_t g = f2u(out[i]);
					uint32_t want = i < GUARD || i >= GUARD + m ? 0x7f8a5a5au : exp[at + i - GUARD];
					if (g != want) {
						if (bad < MAX_SHOWN)
							fprintf(stderr, "# %s n=%zu: element %zd: expected 0x%08" PRIx32 ", got 0x%08" PRIx32 "\n",
							        what, m, (ptrdiff_t)i - GUARD, want, g);
						bad++;
					}
				}
			}
	}
	ck_assert_msg(bad == 0, "%s decode: %zu mismatches against fmt_to_double", f->name, bad);
	free(out);
	free(exp);
	free(in);
}
END_TEST

/* A decode long enough to be streamed (a million elements and more), into
 * an output a float or three past a register's alignment (the head done
 * element by element), guards on both sides; every pattern many times. */
START_TEST(decode_streamed)
{
	static const fmt_id ids[] = { FMT_BF16, FMT_FP16, FMT_E4M3, FMT_E5M2 };
	fmt_id id = ids[_i];
	const fmt_info *f = fmt_get(id);
	size_t size = fmt_bulk_elem_size(id), n = ((size_t)1 << 20) + 37, lead = 1 + 2 * (size_t)(_i % 2);
	uint32_t mask = (1u << f->width) - 1;
	void *in = xmalloc(n * size);
	for (size_t i = 0; i < n; i++)
		store_elem(in, size, i, (uint32_t)(i * 40503u) & mask);
	float *buf = aligned_alloc(64, ((n + 64) * sizeof(float) + 63) & ~(size_t)63);   /* a multiple of 64 bytes */
	ck_assert(buf);
	size_t bad = 0;
	for (int path = 0; path < FMT_SIMD_COUNT; path++) {
		if (!path_tested((fmt_simd)path))
			continue;
		for (size_t i = 0; i < n + 64; i++)
			buf[i] = u2f(0x7f8a5a5au);
		ck_assert_int_eq(fmt_bulk_decode((fmt_simd)path, id, buf + lead, in, n), MP_OK);
		for (size_t i = 0; i < n + 64; i++) {
			uint32_t want = i < lead || i >= lead + n ? 0x7f8a5a5au : decoded_bits(f, load_elem(in, size, i - lead));
			if (f2u(buf[i]) != want && bad++ < MAX_SHOWN)
				fprintf(stderr, "# %s decode path=%s: element %zd: expected 0x%08" PRIx32 ", got 0x%08" PRIx32 "\n",
				        f->name, fmt_simd_name((fmt_simd)path), (ptrdiff_t)i - (ptrdiff_t)lead, want, f2u(buf[i]));
		}
	}
	ck_assert_msg(bad == 0, "%s streamed decode: %zu mismatches", f->name, bad);
	free(buf);
	free(in);
}
END_TEST

START_TEST(fp8_arithmetic_decode_matches_tables)
{
	/* device code decodes fp8 by arithmetic (bulk_decode_fp8), the CPU by
	 * tables built from fmt_to_double: the same bits for all 256 patterns */
	bulk_tables_init();
	for (uint32_t b = 0; b < 256; b++) {
		ck_assert_msg(bulk_decode_fp8(b, 3, 7, 1) == bulk_f2u(bulk_decode_table[FMT_E4M3][b]), "e4m3 0x%02" PRIx32, b);
		ck_assert_msg(bulk_decode_fp8(b, 2, 15, 0) == bulk_f2u(bulk_decode_table[FMT_E5M2][b]), "e5m2 0x%02" PRIx32, b);
	}
	/* and against values derived by hand: e4m3 0x01 = 2^-9, 0x7e = 448, e5m2 0x7b = 57344 */
	ck_assert(bulk_u2f(bulk_decode_fp8(0x01, 3, 7, 1)) == 0x1p-9f);
	ck_assert(bulk_u2f(bulk_decode_fp8(0x7e, 3, 7, 1)) == 448.0f);
	ck_assert(bulk_u2f(bulk_decode_fp8(0x7b, 2, 15, 0)) == 57344.0f);
	ck_assert(bulk_decode_fp8(0xfc, 2, 15, 0) == 0xff800000u);
	ck_assert(bulk_decode_fp8(0xff, 3, 7, 1) == 0x7fc00000u);
}
END_TEST

static Suite *bulk_quantize_suite(void)
{
	Suite *s = suite_create("fmt_bulk_quantize");
	TCase *tc = tcase_create("bulk");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, fp8_arithmetic_decode_matches_tables);
	tcase_add_loop_test(tc, quantize_matches_encode_decode, 0, NFMTS);
	tcase_add_loop_test(tc, decode_every_pattern, 0, NFMTS);
	tcase_add_loop_test(tc, decode_streamed, 0, 4);
	tcase_add_loop_test(tc, accumulate_matches_scalar, 0, NFMTS);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return bulk_check_main("test_bulk_quantize", argc, argv, bulk_quantize_suite);
}
