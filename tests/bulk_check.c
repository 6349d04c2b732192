/* The helpers of tests/bulk_check.h. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "bulk_check.h"
#include "fmt/decode.h"
#include "fmt/round.h"
#include "util/rng.h"

uint64_t prng_state;
uint32_t prng(void)
{
	/* xorshift64*: independent of the library's rng */
	prng_state ^= prng_state >> 12;
	prng_state ^= prng_state << 25;
	prng_state ^= prng_state >> 27;
	return (uint32_t)((prng_state * 0x2545f4914f6cdd1dull) >> 32);
}

/* Element access through memcpy: the tail tests pass misaligned buffers. */
uint32_t load_elem(const void *p, size_t size, size_t i)
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

void store_elem(void *p, size_t size, size_t i, uint32_t v)
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

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	ck_assert_ptr_nonnull(p);
	return p;
}

/* fp32 pattern of a decoded value, NaN -> the canonical 0x7fc00000. */
uint32_t decoded_bits(const fmt_info *f, uint32_t b)
{
	double d = fmt_to_double(f, b);
	return isnan(d) ? 0x7fc00000u : f2u((float)d);
}

/* --- the input patterns --- */

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
void pat_add_random(patterns *p, fmt_id id, size_t n)
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

patterns make_inputs(fmt_id id, size_t nrandom)
{
	patterns p = { 0 };
	prng_state = 0x243f6a8885a308d3ull ^ ((uint64_t)id << 40);
	pat_add_edges(&p, id);
	pat_add_random(&p, id, nrandom);
	return p;
}

float *as_floats(const patterns *p)
{
	float *x = xmalloc(p->n * sizeof(float));
	memcpy(x, p->v, p->n * sizeof(float));
	return x;
}

/* --- the scalar expectation --- */

void scalar_expect(const fmt_bulk_opts *o, const float *in, uint32_t *exp, size_t n)
{
	const fmt_info *f = fmt_get(o->fmt);
	for (size_t i = 0; i < n; i++) {
		fmt_round_ctl ctl = { .mode = o->mode, .saturate = o->saturate,
		                      .rbits = o->mode == FMT_SR || o->mode == FMT_SR_EQUAL
		                                   ? rng_bits(o->seed, o->index0 + i) : 0 };
		exp[i] = fmt_round_double(f, &ctl, (double)in[i], NULL);
	}
}

const char *opts_text(const fmt_bulk_opts *o, fmt_simd path, char *buf, size_t size)
{
	snprintf(buf, size, "%s %s%s seed=%#" PRIx64 " index0=%#" PRIx64 " path=%s",
	         fmt_get(o->fmt)->name, fmt_mode_name(o->mode), o->saturate ? " saturate" : "",
	         o->seed, o->index0, fmt_simd_name(path));
	return buf;
}

/* Counts mismatches between exp[] and got (elements of `size` bytes),
 * printing the first few; returns the count. */
size_t count_bad(const char *what, const float *in, const uint32_t *exp, const void *got,
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

bool path_tested(fmt_simd p)
{
	return fmt_simd_available(p) && (only_path < 0 || (int)p == only_path);
}

int bulk_check_main(const char *prog, int argc, char **argv, Suite *(*suite)(void))
{
	if (argc > 1) {
		for (int p = 0; p < FMT_SIMD_COUNT; p++)
			if (!strcmp(argv[1], fmt_simd_name((fmt_simd)p)))
				only_path = p;
		if (only_path < 0) {
			fprintf(stderr, "%s: unknown path '%s' (portable, avx2-f16c, avx512-bf16)\n", prog, argv[1]);
			return 99;
		}
		if (!fmt_simd_available((fmt_simd)only_path)) {
			printf("SKIP: this CPU lacks the %s path\n", argv[1]);
			return 77;
		}
	}
	return testutil_run(suite());
}
