/* fmt/bulk: every available path against the scalar exact path.
 *
 * For every format (fp32, tf32, fp16, bf16, fp8-e4m3, fp8-e5m2), RNE and SR
 * (several seeds; index0 values that make one call cross a multiple of 2^32
 * and the 2^64 wrap), saturate on and off: fmt_bulk_encode on each path
 * equals fmt_round_double((double)x) element by element, with ctl.rbits =
 * rng_bits(seed, index0 + i), on about a million random fp32 patterns per
 * format plus the special and edge patterns (zeros, subnormals, every value
 * of the format with the midpoints to its neighbours and the fp32 patterns
 * either side, max, overflow thresholds, inf, NaNs with payloads). Also:
 * lengths that are not multiples of the vector width and misaligned
 * pointers, with guard elements that must stay untouched; fmt_bulk_quantize
 * equals encode then decode (and the scalar result decoded); fmt_bulk_decode
 * of every pattern (all 2^8 / 2^16 / 2^19, fp32 sampled) equals fmt_to_double
 * with NaN -> 0x7fc00000; SR results depend only on (seed, index), not on
 * the path or on how the array is split into calls. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "fmt/bulk.h"
#include "fmt/bulk_impl.h"
#include "fmt/decode.h"
#include "fmt/format.h"
#include "fmt/round.h"
#include "util/rng.h"

static const fmt_id all_fmts[] = { FMT_FP32, FMT_TF32, FMT_FP16, FMT_BF16, FMT_E4M3, FMT_E5M2 };
#define NFMTS ((int)(sizeof all_fmts / sizeof all_fmts[0]))

static const uint64_t sr_seeds[] = { 0, 1, 0x9e3779b97f4a7c15ull };
/* index0 values: 0, an odd start, just below 2^32 (the call crosses 2^32),
 * just below 2^33, and just below 2^64 (the index wraps to 0). */
static const uint64_t sr_index0_tail[] = { 0, 12345, (1ull << 32) - 3000, (1ull << 33) - 77,
                                           UINT64_MAX - 1000 };
#define N_INDEX0 ((int)(sizeof sr_index0_tail / sizeof sr_index0_tail[0]))

#define N_RANDOM_RNE (1u << 21)
#define N_RANDOM_SR (1u << 18)
#define MAX_SHOWN 5

/* --- helpers --- */

static uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static uint64_t prng_state;
static uint32_t prng(void)
{
	/* xorshift64*: independent of the library's rng */
	prng_state ^= prng_state >> 12;
	prng_state ^= prng_state << 25;
	prng_state ^= prng_state >> 27;
	return (uint32_t)((prng_state * 0x2545f4914f6cdd1dull) >> 32);
}

/* Element access through memcpy: the tail tests pass misaligned buffers. */
static uint32_t load_elem(const void *p, size_t size, size_t i)
{
	uint8_t b8;
	uint16_t b16;
	uint32_t b32;
	if (size == 1) {
		memcpy(&b8, (const char *)p + i, 1);
		return b8;
	}
	if (size == 2) {
		memcpy(&b16, (const char *)p + 2 * i, 2);
		return b16;
	}
	memcpy(&b32, (const char *)p + 4 * i, 4);
	return b32;
}

static void store_elem(void *p, size_t size, size_t i, uint32_t v)
{
	uint8_t b8 = (uint8_t)v;
	uint16_t b16 = (uint16_t)v;
	if (size == 1)
		memcpy((char *)p + i, &b8, 1);
	else if (size == 2)
		memcpy((char *)p + 2 * i, &b16, 2);
	else
		memcpy((char *)p + 4 * i, &v, 4);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	ck_assert_ptr_nonnull(p);
	return p;
}

/* fp32 pattern of a decoded value, NaN -> the canonical 0x7fc00000. */
static uint32_t decoded_bits(const fmt_info *f, uint32_t b)
{
	double d = fmt_to_double(f, b);
	return isnan(d) ? 0x7fc00000u : f2u((float)d);
}

/* --- the input patterns --- */

typedef struct {
	uint32_t *v;
	size_t n, cap;
} patterns;

static void pat_add(patterns *p, uint32_t u)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 4096;
		p->v = realloc(p->v, p->cap * sizeof *p->v);
		ck_assert_ptr_nonnull(p->v);
	}
	p->v[p->n++] = u;
}

/* u and its negation. */
static void pat_add2(patterns *p, uint32_t u)
{
	pat_add(p, u & 0x7fffffffu);
	pat_add(p, u | 0x80000000u);
}

static void pat_add_float_near(patterns *p, float x)
{
	pat_add2(p, f2u(x));
	pat_add2(p, f2u(nextafterf(x, 0.0f)));
	pat_add2(p, f2u(nextafterf(x, INFINITY)));
}

static const uint32_t specials[] = {
	0x00000000u, 0x00000001u, 0x00000002u, 0x00000003u, 0x00001000u, 0x00400000u, 0x00400001u,
	0x007fffffu, 0x00800000u, 0x00800001u, 0x3f800000u, 0x3f800001u, 0x3fffffffu, 0x7f7fffffu,
	0x7f7f0000u, 0x7f000000u, 0x7f800000u,
	/* NaNs: quiet, signalling, with payloads */
	0x7fc00000u, 0x7fc00001u, 0x7fffffffu, 0x7f800001u, 0x7fbfffffu, 0x7fa00000u, 0x7fe12345u,
	0x7f800100u, 0x7f802000u,
};

/* Every value of f's grid (sampled for tf32) with the midpoints to the next
 * value and the fp32 patterns either side of each, both signs; the overflow
 * thresholds; the specials. */
static void pat_add_edges(patterns *p, fmt_id id)
{
	const fmt_info *f = fmt_get(id);
	for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
		pat_add2(p, specials[i]);
	if (id == FMT_FP32) {
		for (uint32_t e = 0; e < 256; e++)
			for (uint32_t m = 0; m < 8; m++) {
				pat_add2(p, (e << 23) | m);
				pat_add2(p, (e << 23) | (0x7fffffu - m));
				pat_add2(p, (e << 23) | (0x400000u + m));
			}
		return;
	}
	uint32_t mag_end = fmt_sign_mask(f);
	for (uint32_t b = 0; b < mag_end; b++) {
		if (id == FMT_TF32) {
			/* sample: a few fractions in every binade */
			uint32_t fr = b & fmt_frac_mask(f);
			if (!(fr < 3 || fr == 0x155 || (fr >= 0x1ff && fr <= 0x201) || fr >= 0x3fe))
				continue;
		}
		double d = fmt_to_double(f, b);
		if (!isfinite(d))
			continue;
		pat_add2(p, f2u((float)d));
		uint32_t nb;
		if (fmt_next_up(f, b, &nb)) {
			double d2 = fmt_to_double(f, nb);
			if (isfinite(d2))
				pat_add_float_near(p, (float)((d + d2) / 2));  /* exact in fp32 */
		}
	}
	double mx = fmt_max(f), ulp = ldexp(1.0, fmt_emax(f) - f->frac_bits);
	const double around_max[] = { mx, mx + ulp / 2, mx + ulp, mx + 1.5 * ulp, mx + 2 * ulp, 2 * mx,
	                              fmt_min_subnormal(f) / 2, fmt_min_subnormal(f) / 4,
	                              fmt_min_subnormal(f) * 1.5, fmt_min_normal(f) };
	for (size_t i = 0; i < sizeof around_max / sizeof around_max[0]; i++)
		if (around_max[i] <= FLT_MAX)
			pat_add_float_near(p, (float)around_max[i]);
}

/* n random patterns: half uniform bits, half with exponents near f's range
 * (and a quarter of those with the discarded bits forced to a tie). */
static void pat_add_random(patterns *p, fmt_id id, size_t n)
{
	const fmt_info *f = fmt_get(id);
	int lo = fmt_emin(f) - f->frac_bits - 3 + 127, hi = fmt_emax(f) + 2 + 127;
	if (lo < 0)
		lo = 0;
	if (hi > 255)
		hi = 255;
	int drop = 23 - f->frac_bits;
	for (size_t i = 0; i < n; i++) {
		uint32_t u = prng();
		if (i & 1) {
			uint32_t e = (uint32_t)lo + prng() % (uint32_t)(hi - lo + 1);
			u = (u & 0x807fffffu) | (e << 23);
			if ((i & 6) == 0 && drop > 0)
				u = (u & ~((1u << drop) - 1u)) | (1u << (drop - 1));
		}
		pat_add(p, u);
	}
}

static patterns make_inputs(fmt_id id, size_t nrandom)
{
	patterns p = { 0 };
	prng_state = 0x243f6a8885a308d3ull ^ ((uint64_t)id << 40);
	pat_add_edges(&p, id);
	pat_add_random(&p, id, nrandom);
	return p;
}

static float *as_floats(const patterns *p)
{
	float *x = xmalloc(p->n * sizeof(float));
	memcpy(x, p->v, p->n * sizeof(float));
	return x;
}

/* --- the scalar expectation --- */

static void scalar_expect(const fmt_bulk_opts *o, const float *in, uint32_t *exp, size_t n)
{
	const fmt_info *f = fmt_get(o->fmt);
	for (size_t i = 0; i < n; i++) {
		fmt_round_ctl ctl = { .mode = o->mode, .saturate = o->saturate,
		                      .rbits = o->mode == FMT_SR ? rng_bits(o->seed, o->index0 + i) : 0 };
		exp[i] = fmt_round_double(f, &ctl, (double)in[i], NULL);
	}
}

static const char *opts_text(const fmt_bulk_opts *o, fmt_simd path, char *buf, size_t size)
{
	snprintf(buf, size, "%s %s%s seed=%#" PRIx64 " index0=%#" PRIx64 " path=%s",
	         fmt_get(o->fmt)->name, fmt_mode_name(o->mode), o->saturate ? " saturate" : "",
	         o->seed, o->index0, fmt_simd_name(path));
	return buf;
}

/* Counts mismatches between exp[] and got (elements of `size` bytes),
 * printing the first few; returns the count. */
static size_t count_bad(const char *what, const float *in, const uint32_t *exp, const void *got,
                        size_t size, size_t n)
{
	size_t bad = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t g = load_elem(got, size, i);
		if (g != exp[i]) {
			if (bad < MAX_SHOWN)
				fprintf(stderr, "# %s: element %zu input 0x%08" PRIx32 " (%a): expected 0x%" PRIx32
				        ", got 0x%" PRIx32 "\n",
				        what, i, in ? f2u(in[i]) : (uint32_t)i, in ? (double)in[i] : 0.0, exp[i], g);
			bad++;
		}
	}
	return bad;
}

/* The paths this run checks: every one the CPU has, or only the one named
 * on the command line (tests/bulk-*.sh, which skip a path the CPU lacks). */
static int only_path = -1;

static bool path_tested(fmt_simd p)
{
	return fmt_simd_available(p) && (only_path < 0 || (int)p == only_path);
}

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

static const size_t tail_lengths[] = { 0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 47, 63, 64, 65, 100, 257 };
#define GUARD 20

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
	for (int mode = 0; mode < 2; mode++)
		for (int sat = 0; sat < 2; sat++)
			for (size_t li = 0; li < sizeof tail_lengths / sizeof tail_lengths[0]; li++)
				for (size_t off = 0; off < 4; off++) {
					size_t n = tail_lengths[li];
					/* a window of the patterns, edges first, then random */
					for (size_t i = 0; i < n; i++)
						in[off + i] = src[(pos + i) % p.n];
					pos = (pos + n * 7 + 1) % p.n;
					fmt_bulk_opts o = { .fmt = id, .mode = mode ? FMT_SR : FMT_RNE, .saturate = sat != 0,
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

/* --- accumulate --- */

/* The scalar model of one accumulation step, from the exact path only:
 * q(v) = the fp32 value of fmt_round_double(v) (v is an fp32 sum). */
static float scalar_q(fmt_id id, fmt_mode mode, uint32_t rbits, float v)
{
	fmt_round_ctl ctl = { .mode = mode, .rbits = rbits };
	return u2f(decoded_bits(fmt_get(id), fmt_round_double(fmt_get(id), &ctl, (double)v, NULL)));
}

/* fmt_bulk_accumulate on every path, plain and Kahan, RNE and SR, against
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

static Suite *bulk_suite(void)
{
	Suite *s = suite_create("fmt_bulk");
	TCase *tc = tcase_create("bulk");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, status_and_paths);
	tcase_add_test(tc, hand_values);
	tcase_add_test(tc, fp8_arithmetic_decode_matches_tables);
	tcase_add_loop_test(tc, encode_rne_matches_scalar, 0, NFMTS);
	tcase_add_loop_test(tc, encode_sr_matches_scalar, 0, NFMTS);
	tcase_add_loop_test(tc, sr_split_independent, 0, NFMTS);
	tcase_add_loop_test(tc, encode_tails_and_guards, 0, NFMTS);
	tcase_add_loop_test(tc, quantize_matches_encode_decode, 0, NFMTS);
	tcase_add_loop_test(tc, decode_every_pattern, 0, NFMTS);
	tcase_add_loop_test(tc, accumulate_matches_scalar, 0, NFMTS);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		for (int p = 0; p < FMT_SIMD_COUNT; p++)
			if (!strcmp(argv[1], fmt_simd_name((fmt_simd)p)))
				only_path = p;
		if (only_path < 0) {
			fprintf(stderr, "test_bulk: unknown path '%s' (portable, avx2-f16c, avx512-bf16)\n", argv[1]);
			return 99;
		}
		if (!fmt_simd_available((fmt_simd)only_path)) {
			printf("SKIP: this CPU lacks the %s path\n", argv[1]);
			return 77;
		}
	}
	return testutil_run(bulk_suite());
}
