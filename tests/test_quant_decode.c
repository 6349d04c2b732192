/* quant's block decode (quant_kernels_of(path)->decode) on every SIMD path
 * the CPU has, against its definition evaluated here element by element:
 * v[i] = tab[r * stride + elems[i]] * mul[b], the count of nonzero olds
 * decoded to 0, each block's largest |old| and the count of |old| above
 * the block's bound. The tables: fp8 e4m3 and e5m2 written from the OCP
 * FP8 definitions (the kernels decode such tables by arithmetic), the same
 * with one entry or a NaN's sign changed (which the arithmetic does not
 * give: the kernel must notice), int8 values, random values, and rows of
 * 16 (nvfp4, mxfp4). Compared as bit patterns, NaN payloads included. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/bulk.h"
#include "quant/quant.h"
#include "quant/quant_impl.h"
#include "testutil.h"
#include "util/rng.h"

/* An fp8 code with E exponent bits (bias 2^(E-1) - 1) and M = 7 - E
 * fraction bits: (-1)^s 2^(e - bias) (1 + m 2^-M), subnormal m 2^(1 - bias - M);
 * e4m3 (E = 4): the all-ones magnitude is NaN; e5m2: exponent all ones is
 * inf (m = 0) or NaN. NaN patterns: the quiet NaN with the code's sign. */
static float fp8_value(uint32_t c, int E)
{
	int M = 7 - E, bias = (1 << (E - 1)) - 1;
	uint32_t s = c >> 7, e = (c >> M) & ((1u << E) - 1), m = c & ((1u << M) - 1);
	float v;
	if (E == 4 && (c & 0x7f) == 0x7f)
		return u2f(0x7fc00000u | s << 31);
	if (E == 5 && e == 31)
		return m ? u2f(0x7fc00000u | s << 31) : (s ? -INFINITY : INFINITY);
	if (e == 0)
		v = ldexpf((float)m, 1 - bias - M);
	else
		v = ldexpf(1.0f + (float)m / (float)(1 << M), (int)e - bias);
	return s ? -v : v;
}

#define N 1003   /* not a multiple of any lane count or block */

static uint8_t elems[N];
static float old[N], out[N], want[N], mulv[64], amax[64], amax_want[64];
static uint32_t over[64];
static uint8_t rows[64];

/* Runs path p's decode on elems (codes below nvals) and checks it against
 * the definition. */
static void check_decode(int p, const float *tab, size_t stride, size_t nvals, size_t bs, bool use_rows,
                         bool use_mul, const char *what)
{
	size_t nb = (N + bs - 1) / bs, under = 0, count = 0;
	for (size_t b = 0; b < nb; b++) {
		amax_want[b] = 0;
		for (size_t i = b * bs; i < N && i < (b + 1) * bs; i++) {
			const float *t = tab + (use_rows ? rows[b] : b) * stride;
			want[i] = t[elems[i]] * (use_mul ? mulv[b] : 1.0f);
			under += old[i] != 0 && want[i] == 0.0f;
			uint32_t a = f2u(old[i]) & 0x7fffffffu;
			count += a > over[b];
			if (a > f2u(amax_want[b]))
				amax_want[b] = u2f(a);
		}
	}
	quant_decode_stats ds = { .old = old, .over = over, .amax = amax };
	size_t got = quant_kernels_of((fmt_simd)p)->decode(out, elems, N, bs, tab, stride, nvals,
	                                                   use_rows ? rows : NULL, use_mul ? mulv : NULL, &ds);
	for (size_t i = 0; i < N; i++)
		ck_assert_msg(f2u(out[i]) == f2u(want[i]), "%s, path %s: element %zu (code 0x%02x): %08x, want %08x",
		              what, fmt_simd_name((fmt_simd)p), i, elems[i], f2u(out[i]), f2u(want[i]));
	ck_assert_msg(got == under, "%s: underflow %zu, want %zu", what, got, under);
	ck_assert_msg(ds.count == count, "%s: count %zu, want %zu", what, ds.count, count);
	for (size_t b = 0; b < nb; b++)
		ck_assert_msg(f2u(amax[b]) == f2u(amax_want[b]), "%s: block %zu amax", what, b);
	/* without stats: the same values */
	memset(out, 0, sizeof out);
	quant_kernels_of((fmt_simd)p)->decode(out, elems, N, bs, tab, stride, nvals, use_rows ? rows : NULL,
	                                      use_mul ? mulv : NULL, NULL);
	ck_assert_msg(memcmp(out, want, sizeof out) == 0, "%s: without stats", what);
}

/* Codes below nvals, every one of them among the first elements; olds of
 * mixed magnitude (some 0), multipliers powers of two and not. */
static void fill(size_t nvals, uint64_t seed)
{
	for (size_t i = 0; i < N; i++) {
		uint32_t r = rng_bits(seed, i);
		elems[i] = (uint8_t)(i < nvals ? i : r % nvals);
		old[i] = r % 7 == 0 ? 0.0f : ldexpf((float)(r >> 8), (int)(r % 40) - 40) * (r & 1 ? -1.0f : 1.0f);
	}
	for (size_t b = 0; b < 64; b++) {
		uint32_t r = rng_bits(seed + 1, b);
		mulv[b] = b % 3 ? ldexpf(1.0f, (int)(r % 60) - 30) : 1.0f + (float)(r >> 9) * 0x1p-23f;
		mulv[b] = b % 11 == 5 ? 0x1p-140f : mulv[b];   /* products that vanish */
		over[b] = r >> 2;
		rows[b] = (uint8_t)(r % 5);
	}
}

static void each_path(const float *tab, size_t stride, size_t nvals, bool use_rows, const char *what)
{
	for (int p = 0; p < FMT_SIMD_COUNT; p++) {
		if (!fmt_simd_available((fmt_simd)p))
			continue;
		check_decode(p, tab, stride, nvals, 32, use_rows, true, what);
		check_decode(p, tab, stride, nvals, 16, use_rows, false, what);
	}
}

START_TEST(fp8_tables)
{
	float tab[256];
	for (int E = 4; E <= 5; E++) {
		fill(256, (uint64_t)E);
		for (uint32_t c = 0; c < 256; c++)
			tab[c] = fp8_value(c, E);
		each_path(tab, 0, 256, false, E == 4 ? "e4m3" : "e5m2");
		/* one entry off the format: no arithmetic gives it */
		float keep = tab[0x33];
		tab[0x33] = 1.0f;
		each_path(tab, 0, 256, false, "fp8 with an entry changed");
		tab[0x33] = keep;
		/* a negative code's NaN without its sign */
		tab[0xff] = u2f(0x7fc00001u);
		each_path(tab, 0, 256, false, "fp8 with an unsigned NaN");
		/* a subnormal entry off by one ulp */
		tab[0x01] = u2f(f2u(tab[0x01]) + 1);
		each_path(tab, 0, 256, false, "fp8 with a subnormal changed");
	}
}
END_TEST

START_TEST(other_tables)
{
	static float tab[5 * 256];
	fill(256, 9);
	for (uint32_t c = 0; c < 256; c++)
		tab[c] = (float)(int8_t)c * 0x1p-6f;   /* mxint8's elements */
	each_path(tab, 0, 256, false, "int8");
	for (uint32_t c = 0; c < 256; c++)
		tab[c] = u2f(rng_bits(10, c) & 0xbfffffffu);
	each_path(tab, 0, 256, false, "random 256");
	fill(64, 11);
	each_path(tab, 0, 64, false, "random 64");
	/* rows of 16: nvfp4's values times a scale per row, and one row */
	static const float e2m1[8] = { 0, 0.5f, 1, 1.5f, 2, 3, 4, 6 };
	fill(16, 12);
	for (uint32_t r = 0; r < 5; r++)
		for (uint32_t c = 0; c < 16; c++)
			tab[r * 16 + c] = (c & 8 ? -e2m1[c & 7] : e2m1[c & 7]) * (0.25f + (float)r * 1.375f);
	each_path(tab, 16, 16, true, "rows of 16");
	each_path(tab + 3 * 16, 0, 16, false, "one row of 16");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("quant_decode");
	TCase *tc = tcase_create("quant_decode");
	tcase_add_test(tc, fp8_tables);
	tcase_add_test(tc, other_tables);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
