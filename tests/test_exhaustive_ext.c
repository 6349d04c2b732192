/* The bulk fp32 -> format loop (fmt_bulk_encode, saturating or not) of the
 * integer, ml_dtypes and P3109 rows over fp32 bit patterns, against a
 * binary64 reference written here from tests/ext_formats.h's decoder: the
 * format's values sorted by magnitude on each side of zero, plus the grid
 * point B past the largest; |x| between neighbours lo and hi goes to the
 * nearer, a tie to the even pattern (RNE), or to hi iff the 32 random bits
 * are below ceil((|x| - lo) / (hi - lo) * 2^32) (SR; hi - lo is a power of
 * two, so the quotient is exact); reaching B overflows (the integers and
 * saturate: +-max; else the infinity, or the NaN where there is none);
 * NaN gives the format's NaN (the integers 0), negatives in P3109's
 * unsigned formats their NaN, -0 the format's zero.
 *
 * Usage: test_exhaustive_ext rne|sr. Inputs: every 4096th pattern plus
 * every pattern whose low 16 bits are within 2 of 0, 0x8000 or 0x10000
 * (the formats' rounding points lie 17 or more bits down: ties and their
 * neighbours), in the chunks exhaustive_run.c samples (all with
 * MIXPREC_EXHAUSTIVE=full); all 2^32 patterns with MIXPREC_EXHAUSTIVE_FP8_FULL=1.
 * Every path runs the scalar loop for these formats: the best path is
 * checked. Exit 0 when everything agrees, 1 on a mismatch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/bulk.h"
#include "util/rng.h"
#include "exhaustive_run.h"
#include "ext_formats.h"

static bool full, sr;
static const uint64_t SEED = 0x5eed15;

/* One side of zero: magnitudes ascending from 0 (mag[n] is B). */
typedef struct {
	int n;
	double mag[257];
	uint32_t bits[257];
} side;

typedef struct {
	const ext_spec *s;
	side pos, neg;
	bool has_inf, has_negzero;
	uint32_t inf_bits[2];
} table;

static table tables[NEXT];

static void side_fill(table *t, side *sd, bool neg)
{
	const ext_spec *s = t->s;
	sd->n = 0;
	for (uint32_t b = 0; b < ext_patterns(s); b++) {
		double v = ext_value(s, b);
		if (isinf(v)) {
			t->has_inf = true;
			t->inf_bits[v < 0] = b;
		}
		if (v == 0 && signbit(v))
			t->has_negzero = true;
		if (!isfinite(v) || (v == 0 && signbit(v)) || (v != 0 && (v < 0) != neg))
			continue;
		int j = sd->n++;   /* insertion by magnitude */
		while (j > 0 && sd->mag[j - 1] > fabs(v)) {
			sd->mag[j] = sd->mag[j - 1];
			sd->bits[j] = sd->bits[j - 1];
			j--;
		}
		sd->mag[j] = fabs(v);
		sd->bits[j] = b;
	}
	double top = sd->mag[sd->n - 1];
	sd->mag[sd->n] = s->kind == EXT_INT ? top + 1 : top + ldexp(1.0, ilogb(top) - s->frac_bits);
	/* B's pattern parity, for ties: the one after max's (the integers: B's own) */
	sd->bits[sd->n] = s->kind == EXT_INT ? (uint32_t)sd->mag[sd->n] & 1u : ext_max_bits(s) + 1;
}

static void table_init(table *t, const ext_spec *s)
{
	memset(t, 0, sizeof *t);
	t->s = s;
	side_fill(t, &t->pos, false);
	side_fill(t, &t->neg, s->kind == EXT_INT);
	if (s->kind != EXT_INT && ext_signed(s))   /* sign-magnitude: the negative side mirrors */
		for (int i = 0; i < t->neg.n; i++)
			t->neg.bits[i] = t->pos.bits[i] ? t->pos.bits[i] | 0x80u : (t->has_negzero ? 0x80u : 0u);
}

static uint32_t overflow_bits(const table *t, const side *sd, bool neg, bool sat)
{
	if (t->s->kind == EXT_INT || sat)
		return sd->bits[sd->n - 1];
	return t->has_inf ? t->inf_bits[neg] : t->s->nan_bits;
}

/* Expected pattern of fp32 u; r: the SR bits. */
static uint32_t ref_ext(const table *t, bool sat, uint32_t u, uint32_t r)
{
	const ext_spec *s = t->s;
	bool neg = u >> 31;
	uint32_t a32 = u & 0x7fffffffu;
	if (a32 > 0x7f800000u)
		return s->kind == EXT_INT ? 0 : s->nan_bits;
	if (a32 == 0)
		return neg && t->has_negzero ? 0x80u : 0u;
	if (neg && !ext_signed(s))
		return s->nan_bits;
	const side *sd = neg ? &t->neg : &t->pos;
	if (a32 == 0x7f800000u)
		return s->kind == EXT_INT || sat ? sd->bits[sd->n - 1] : t->has_inf ? t->inf_bits[neg] : s->nan_bits;
	double a = (double)u2f(a32);
	int lo = 0, hi = sd->n;   /* the largest k with mag[k] <= a */
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;
		if (sd->mag[mid] <= a)
			lo = mid;
		else
			hi = mid - 1;
	}
	int k = lo;
	if (k == sd->n)
		return overflow_bits(t, sd, neg, sat);
	if (sd->mag[k] == a)
		return sd->bits[k];
	double d1 = a - sd->mag[k], d2 = sd->mag[k + 1] - a;
	bool up = sr ? (double)r < ceil(ldexp(d1 / (sd->mag[k + 1] - sd->mag[k]), 32))
	             : d1 > d2 || (d1 == d2 && (sd->bits[k] & 1));
	if (!up)
		return sd->bits[k];
	return k + 1 == sd->n ? overflow_bits(t, sd, neg, sat) : sd->bits[k + 1];
}

static int rowof[NEXT][FMT_SIMD_COUNT];

static size_t fill_inputs(float *in, uint32_t base)
{
	uint32_t *u = (uint32_t *)(void *)in;
	size_t n = 0;
	for (uint32_t i = 0; i < CHUNK; i++) {
		uint32_t lo = (base + i) & 0xffffu;
		if (full || (i & 4095) == 0 || lo <= 2 || lo >= 0xfffe || (lo >= 0x7ffe && lo <= 0x8002))
			u[n++] = base + i;
	}
	return n;
}

static void ext_chunk(worker *w, uint32_t base)
{
	size_t n = fill_inputs(w->in, base);
	const uint32_t *u = (const uint32_t *)(const void *)w->in;
	for (int k = 0; k < NEXT; k++) {
		for (int sat = 0; sat < 2; sat++) {
			fmt_bulk_opts o = { .fmt = EXT[k].id, .mode = sr ? FMT_SR : FMT_RNE, .saturate = sat,
			                    .seed = SEED, .index0 = base };
			for (size_t i = 0; i < n; i++)
				w->expect[i] = ref_ext(&tables[k], sat, u[i], sr ? rng_bits(SEED, base + i) : 0);
			check_all_paths_opts(w, &o, rowof[k], n, sr ? "binary64 SR reference" : "binary64 RNE reference");
		}
	}
}

/* The reference itself on values worked out by hand (RNE). */
static int self_check(void)
{
	static const struct { fmt_id id; bool sat; uint32_t in, out; } hand[] = {
		{ FMT_INT8, false, 0x40200000u, 0x02 },   /* 2.5: tie 2|3 -> 2 */
		{ FMT_INT8, false, 0xc3008000u, 0x80 },   /* -128.5: tie -128|-129 -> -128 */
		{ FMT_INT4, false, 0x41000000u, 0x07 },   /* 8 -> 7 (saturates) */
		{ FMT_INT2, false, 0xbfc00000u, 0x02 },   /* -1.5: tie -1|-2 -> -2 (even) */
		{ FMT_P3109_P3, false, 0x47500000u, 0x7e },   /* 53248: tie 49152|57344 -> 0x7e */
		{ FMT_P3109_P3, false, 0x47500100u, 0x7f },   /* just above: inf */
		{ FMT_P3109_P3, true, 0xc7500100u, 0xfe },    /* its negative, saturating: -49152 */
		{ FMT_P3109_P3SF, false, 0x47800000u, 0x80 }, /* 65536, past 57344 = max: NaN */
		{ FMT_P3109_P3UE, false, 0xbf800000u, 0xff }, /* -1: unsigned, NaN */
		{ FMT_P3109_P3, false, 0x80000000u, 0x00 },   /* -0 -> 0x00 */
		{ FMT_E3M4, false, 0xc1800000u, 0xf0 },       /* -16, the grid point past 15.5: -inf */
		{ FMT_E4M3B11FNUZ, false, 0x41f00000u, 0x7f }, /* 30 = max */
	};
	bool was = sr;
	sr = false;
	int bad = 0;
	for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
		int k = 0;
		while (EXT[k].id != hand[i].id)
			k++;
		uint32_t got = ref_ext(&tables[k], hand[i].sat, hand[i].in, 0);
		if (got != hand[i].out) {
			printf("reference self-check failed: %s(0x%08x) = 0x%02x, expected 0x%02x\n", EXT[k].name, hand[i].in,
			       got, hand[i].out);
			bad = 1;
		}
	}
	sr = was;
	return bad;
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "rne") && strcmp(argv[1], "sr"))) {
		fprintf(stderr, "usage: test_exhaustive_ext rne|sr\n");
		return 99;
	}
	sr = !strcmp(argv[1], "sr");
	const char *env = getenv("MIXPREC_EXHAUSTIVE_FP8_FULL");
	full = env && !strcmp(env, "1");
	for (int k = 0; k < NEXT; k++)
		table_init(&tables[k], &EXT[k]);
	if (self_check())
		return 1;
	for (int k = 0; k < NEXT; k++) {
		char name[64];
		snprintf(name, sizeof name, "%s %s (and saturating)", EXT[k].name, argv[1]);
		for (int p = 0; p < FMT_SIMD_COUNT; p++)
			rowof[k][p] = p == (int)fmt_simd_best() ? row_add(name, fmt_simd_name((fmt_simd)p), 2) : -1;
	}
	char title[160];
	snprintf(title, sizeof title, "integer, ml_dtypes and P3109 formats %s, %s fp32 inputs, against the binary64 "
	         "reference", sr ? "SR" : "RNE", full ? "all 2^32" : "a subset of the");
	return run_all(ext_chunk, title);
}
