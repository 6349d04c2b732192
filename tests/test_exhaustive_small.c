/* The bulk fp32 -> format kernels of the sub-8-bit and FNUZ formats (fp6-e3m2,
 * fp6-e2m3, fp4-e2m1, fp8-e4m3fnuz, fp8-e5m2fnuz and, saturating too,
 * e8m0) over fp32 bit patterns, on every available path, against a binary64
 * reference written here from the formats' definitions:
 *
 *   fp6/fp4/FNUZ  scale |x| so that the last place is 1 (the subnormal grid
 *                 below the min normal), nearbyint (RNE) or floor plus "up
 *                 iff the 32 random bits are below ceil(frac * 2^32)" (SR),
 *                 scale back; past max: +-max (fp6/fp4 always, FNUZ with
 *                 saturate) or 0x80; zero: signed (fp6/fp4) or 0x00 (FNUZ).
 *   e8m0          |x| = m 2^E with 1 <= m < 2: RNE keeps 2^E below m = 1.5,
 *                 takes 2^(E+1) above, and the even pattern at 1.5; SR
 *                 moves up iff the bits are below ceil((m - 1) 2^32);
 *                 below 2^-127: 0x00; past 2^127: 0xff (0xfe saturating);
 *                 zero, negatives and NaN: 0xff.
 *
 * Usage: test_exhaustive_small rne|sr. The inputs are every 256th pattern
 * plus every pattern whose low 16 bits are within 2 of 0, 0x8000 or
 * 0x10000 (each format's rounding point lies 20 or more bits down, so these
 * include the ties and their neighbours), or all 2^32 patterns with
 * MIXPREC_EXHAUSTIVE_FP8_FULL=1. Exit 0 when everything agrees, 1 on a
 * mismatch (the first few are printed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/bulk.h"
#include "util/rng.h"
#include "exhaustive_run.h"
#include "small_formats.h"

static bool full, sr;
static const uint64_t SEED = 0x5eed14;

typedef struct {
	const small_spec *s;
	bool saturate;
	int rowof[FMT_SIMD_COUNT];
} combo;

static combo combos[NSPECS * 2];
static int ncombos;

/* Expected pattern of fp32 u; r: the SR bits. */
static uint32_t ref_small(const combo *c, uint32_t u, uint32_t r)
{
	const small_spec *s = c->s;
	bool neg = u >> 31;
	uint32_t a = u & 0x7fffffffu, sign = neg ? small_sign(s) : 0, max = small_max_bits(s);
	uint32_t ovf = s->kind == SMALL_NONE || c->saturate ? sign | max : 0x80;
	if (a > 0x7f800000u)
		return s->kind == SMALL_NONE ? 0 : 0x80;
	if (a == 0x7f800000u)
		return ovf;
	if (a == 0)
		return s->kind == SMALL_NONE ? sign : 0;
	double x = (double)u2f(a);
	int e = ilogb(x);
	int emin = 1 - s->bias;
	int q = (e > emin ? e : emin) - s->frac_bits;
	double y = ldexp(x, -q), n;
	if (sr) {
		double fl = floor(y);
		n = fl + ((double)r < ceil((y - fl) * 0x1p32) ? 1 : 0);
	} else {
		n = nearbyint(y);
	}
	double v = ldexp(n, q);
	if (v > s->max)
		return ovf;
	if (v == 0)
		return s->kind == SMALL_NONE ? sign : 0;
	if (v < s->min_normal)
		return sign | (uint32_t)n;
	int ev = ilogb(v);
	uint32_t frac = (uint32_t)ldexp(v / ldexp(1.0, ev) - 1.0, s->frac_bits);
	return sign | ((uint32_t)(ev + s->bias) << s->frac_bits) | frac;
}

static uint32_t ref_e8m0(const combo *c, uint32_t u, uint32_t r)
{
	if ((u >> 31) || (u & 0x7fffffffu) >= 0x7f800000u || u == 0)
		return (u == 0x7f800000u && c->saturate) ? 0xfe : 0xff;
	double x = (double)u2f(u);
	int E = ilogb(x);
	double m = ldexp(x, -E);
	if (E < -127)
		return 0x00;
	bool up;
	if (sr)
		up = (double)r < ceil((m - 1.0) * 0x1p32);
	else
		up = m > 1.5 || (m == 1.5 && ((E + 127) & 1));
	int Er = E + (up ? 1 : 0);
	if (Er > 127)
		return c->saturate ? 0xfe : 0xff;
	return (uint32_t)(Er + 127);
}

/* The chunk's inputs (all, or the sparse subset) into in; their count. */
static size_t fill_inputs(float *in, uint32_t base)
{
	uint32_t *u = (uint32_t *)(void *)in;
	size_t n = 0;
	for (uint32_t i = 0; i < CHUNK; i++) {
		uint32_t lo = (base + i) & 0xffffu;
		if (full || (i & 255) == 0 || lo <= 2 || lo >= 0xfffe || (lo >= 0x7ffe && lo <= 0x8002))
			u[n++] = base + i;
	}
	return n;
}

static void small_chunk(worker *w, uint32_t base)
{
	size_t n = fill_inputs(w->in, base);
	const uint32_t *u = (const uint32_t *)(const void *)w->in;
	for (int k = 0; k < ncombos; k++) {
		const combo *c = &combos[k];
		fmt_bulk_opts o = { .fmt = c->s->id, .mode = sr ? FMT_SR : FMT_RNE, .saturate = c->saturate,
		                    .seed = SEED, .index0 = base };
		for (size_t i = 0; i < n; i++) {
			uint32_t r = sr ? rng_bits(SEED, base + i) : 0;
			w->expect[i] = c->s->kind == SMALL_E8M0 ? ref_e8m0(c, u[i], r) : ref_small(c, u[i], r);
		}
		check_all_paths_opts(w, &o, c->rowof, n, sr ? "binary64 SR reference" : "binary64 RNE reference");
	}
}

/* The reference itself on values worked out by hand. */
static int self_check(void)
{
	static const struct { fmt_id id; bool sat; uint32_t in, out; } hand[] = {
		{ FMT_E2M1, false, 0x40a00000u, 0x6 },   /* 5: tie 4|6 -> 4 */
		{ FMT_E2M1, false, 0x40e00000u, 0x7 },   /* 7: past 6 -> max */
		{ FMT_E2M1, false, 0xbe800000u, 0x8 },   /* -0.25: tie 0|0.5 -> -0 */
		{ FMT_E3M2, false, 0x41e80000u, 0x1f },  /* 29 -> 28 */
		{ FMT_E2M3, false, 0x3f880000u, 0x08 },  /* 1.0625: tie 1|1.125 -> 1 */
		{ FMT_E4M3FNUZ, false, 0x43780000u, 0x80 },  /* 248: tie 240|256 -> NaN */
		{ FMT_E4M3FNUZ, true, 0xc3780000u, 0xff },   /* -248 saturating: -240 */
		{ FMT_E4M3FNUZ, false, 0xb9800000u, 0x00 },  /* -2^-12 -> 0x00 */
		{ FMT_E5M2FNUZ, false, 0x3f800000u, 0x40 },  /* 1 */
		{ FMT_E8M0, false, 0x40400000u, 0x80 },  /* 3: tie 2|4 -> 2 (0x80 even) */
		{ FMT_E8M0, false, 0x3fc00000u, 0x80 },  /* 1.5: tie 1 (0x7f)|2 -> 2 */
		{ FMT_E8M0, false, 0x00000001u, 0x00 },  /* 2^-149 -> 2^-127 */
		{ FMT_E8M0, false, 0xbf800000u, 0xff },  /* -1 */
		{ FMT_E8M0, false, 0x7f400000u, 0xfe },  /* 1.5 * 2^127: tie, 0xfe even */
		{ FMT_E8M0, false, 0x7f600000u, 0xff },  /* 1.75 * 2^127 -> NaN */
	};
	bool was = sr;
	sr = false;
	int bad = 0;
	for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
		const small_spec *s = NULL;
		for (int k = 0; k < NSPECS; k++)
			if (SPECS[k].id == hand[i].id)
				s = &SPECS[k];
		combo c = { .s = s, .saturate = hand[i].sat };
		uint32_t got = s->kind == SMALL_E8M0 ? ref_e8m0(&c, hand[i].in, 0) : ref_small(&c, hand[i].in, 0);
		if (got != hand[i].out) {
			printf("reference self-check failed: %s(0x%08x) = 0x%02x, expected 0x%02x\n", s->name, hand[i].in, got,
			       hand[i].out);
			bad = 1;
		}
	}
	sr = was;
	return bad;
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "rne") && strcmp(argv[1], "sr"))) {
		fprintf(stderr, "usage: test_exhaustive_small rne|sr\n");
		return 99;
	}
	sr = !strcmp(argv[1], "sr");
	const char *env = getenv("MIXPREC_EXHAUSTIVE_FP8_FULL");
	full = env && !strcmp(env, "1");
	if (self_check())
		return 1;
	for (int k = 0; k < NSPECS; k++)
		for (int sat = 0; sat < 2; sat++) {
			if (sat && SPECS[k].kind == SMALL_NONE)
				continue;   /* fp6/fp4 saturate anyway */
			combo *c = &combos[ncombos++];
			c->s = &SPECS[k];
			c->saturate = sat;
			char name[64];
			snprintf(name, sizeof name, "%s %s%s", SPECS[k].name, argv[1], sat ? " saturating" : "");
			/* every path runs the portable loop for these formats: the
			 * portable path and the best one are checked (MAX_ROWS) */
			for (int p = 0; p < FMT_SIMD_COUNT; p++)
				c->rowof[p] = p == FMT_SIMD_PORTABLE || p == (int)fmt_simd_best()
				            ? row_add(name, fmt_simd_name((fmt_simd)p), 2) : -1;
		}
	char title[160];
	snprintf(title, sizeof title, "fp6, fp4, FNUZ, e8m0 %s, %s fp32 inputs, against the binary64 reference",
	         sr ? "SR" : "RNE", full ? "all 2^32" : "a subset of the");
	return run_all(small_chunk, title);
}
