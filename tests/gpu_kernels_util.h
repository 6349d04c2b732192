/* Shared by the two files of test_gpu_kernels (tests/test_gpu_kernels.c:
 * the passes' bodies; tests/test_gpu_kernels_optim.c: the optimiser's):
 * the shape, the tolerances (derived in test_gpu_kernels.c) and the
 * helpers. */
#ifndef MIXPREC_TESTS_GPU_KERNELS_UTIL_H
#define MIXPREC_TESTS_GPU_KERNELS_UTIL_H

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/bulk.h"
#include "gpu/gpu_kernels.h"
#include "testutil.h"
#include "train/layers.h"
#include "util/rng.h"

#define B 2
#define T 7
#define C 12
#define NH 3
#define V 20
#define BT (B * T)
#define FP32_TOL 1e-5
#define LOWP_TOL (4 * 0x1p-8)

/* --- helpers --- */

static inline double urand(uint64_t *state)
{
	*state += 1;
	return (double)(rng_mix64(*state) >> 11) * 0x1p-52 - 1.0;
}

static inline void fill(float *f, size_t n, double scale, uint64_t *st)
{
	for (size_t i = 0; i < n; i++)
		f[i] = (float)(scale * urand(st));
}

static inline void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
	ck_assert_ptr_nonnull(p);
	return p;
}

static inline float *fdup(const float *x, size_t n)
{
	float *p = xcalloc(n, sizeof *p);
	memcpy(p, x, n * sizeof *p);
	return p;
}


/* x rounded in place with fmt_bulk_quantize (fp32: untouched). */
static inline void quantize(float *x, size_t n, fmt_id f, fmt_mode mode, uint64_t seed, uint64_t index0)
{
	if (f == FMT_FP32)
		return;
	fmt_bulk_opts o = { .fmt = f, .mode = mode, .seed = seed, .index0 = index0 };
	ck_assert_int_eq(fmt_bulk_quantize(FMT_SIMD_AUTO, &o, x, n), MP_OK);
}

/* GPU_KERNEL_VERBOSE=1 prints the worst error of every comparison (to size the
 * tolerances). */
static inline int verbose(void)
{
	static int v = -1;
	if (v < 0)
		v = getenv("GPU_KERNEL_VERBOSE") != NULL;
	return v;
}

/* |got - ref| <= tol * max|ref| for every element; names the first element
 * that fails (what, index, expected, got). */
static inline void expect_close(const char *what, const float *got, const float *ref, size_t n, double tol)
{
	double s = 0.0;
	for (size_t i = 0; i < n; i++)
		s = fmax(s, fabs((double)ref[i]));
	ck_assert_msg(s > 0.0 && isfinite(s), "%s: reference is all zero or not finite", what);
	double worst = 0.0;
	for (size_t i = 0; i < n; i++) {
		double e = fabs((double)got[i] - (double)ref[i]);
		ck_assert_msg(e <= tol * s, "%s[%zu]: expected %.9g, got %.9g (error %.3g > %.3g = %.3g * max %.4g)",
		              what, i, (double)ref[i], (double)got[i], e, tol * s, tol, s);
		worst = fmax(worst, e);
	}
	if (verbose())
		fprintf(stderr, "# %-40s worst %.3g of max %.4g (%.3g of the tolerance)\n", what, worst, s,
		        worst / (tol * s));
	/* Low precision: a flipped rounding needs an fp32 sum within a few fp32
	 * ulps of a rounding boundary of the format (odds ~2^-14 per rounding
	 * for bf16), and it spreads at most over the row it feeds; so besides
	 * the size of the differences, at most one element in 8 may differ at
	 * all. This catches a mistake smaller than an ulp that is made on every
	 * element (a scale applied after the rounding instead of before). */
	if (tol > FP32_TOL) {
		size_t differ = 0;
		for (size_t i = 0; i < n; i++)
			differ += got[i] != ref[i];
		ck_assert_msg(differ <= n / 8 + 1, "%s: %zu of %zu elements differ (at most %zu may: a rare flipped rounding)",
		              what, differ, n, n / 8 + 1);
	}
}

/* Bit for bit (+0 and -0 differ; NaNs compare by pattern). */
static inline void expect_bits(const char *what, const float *got, const float *ref, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t a, b;
		memcpy(&a, &got[i], 4);
		memcpy(&b, &ref[i], 4);
		ck_assert_msg(a == b, "%s[%zu]: expected %.9g (0x%08x), got %.9g (0x%08x)", what, i, (double)ref[i],
		              (unsigned)b, (double)got[i], (unsigned)a);
	}
	if (verbose())
		fprintf(stderr, "# %-40s bit-identical (%zu elements)\n", what, n);
}

static inline void expect_dbits(const char *what, const double *got, const double *ref, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(memcmp(&got[i], &ref[i], sizeof got[i]) == 0, "%s[%zu]: expected %.17g, got %.17g", what, i,
		              ref[i], got[i]);
}

static inline const char *fmt_short(fmt_id f)
{
	switch (f) {
	case FMT_FP32: return "fp32";
	case FMT_BF16: return "bf16";
	case FMT_FP16: return "fp16";
	case FMT_E4M3: return "e4m3";
	default: return "other";
	}
}

/* Random tokens in [0, V), every one of the first few ids used at least
 * twice so that dwte sums several rows. */
static inline void fill_tokens(int *tok, size_t n, uint64_t *st)
{
	for (size_t i = 0; i < n; i++)
		tok[i] = (int)((urand(st) + 1.0) * 0.5 * V) % V;
	tok[0] = tok[3] = tok[n - 1] = 5;
}


/* The optimiser's bodies (tests/test_gpu_kernels_optim.c). */
void gpu_kernels_add_optimiser_tests(TCase *tc);

#endif
