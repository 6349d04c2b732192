/* Shared by the train/layers tests (test_layers.c: fp32 kernels against
 * fp64 oracles; test_layers_bf16.c: emulated low precision): random inputs
 * with exact fp64 copies, checked allocation, the small shapes. */
#ifndef MIXPREC_TESTS_LAYERS_FIXTURE_H
#define MIXPREC_TESTS_LAYERS_FIXTURE_H

#include <stdint.h>
#include <stdlib.h>

#include "testutil.h"
#include "util/rng.h"

/* Backward kernels accumulate (+=): every gradient buffer starts here and
 * a check subtracts it. */
#define GRAD0 0.5f

/* Uniform in [-1, 1) from a counter-based stream. */
static inline double urand(uint64_t *state)
{
	*state += 1;
	return (double)(rng_mix64(*state) >> 11) * 0x1p-52 - 1.0;
}

/* Random fp32 values in [-scale, scale) with an exact fp64 copy. */
static inline void fill(float *f, double *d, size_t n, double scale, uint64_t *st)
{
	for (size_t i = 0; i < n; i++) {
		f[i] = (float)(scale * urand(st));
		d[i] = f[i];
	}
}

static inline float *falloc(size_t n)
{
	float *p = malloc(n * sizeof *p);
	ck_assert_ptr_nonnull(p);
	return p;
}

static inline double *dalloc(size_t n)
{
	double *p = calloc(n, sizeof *p);
	ck_assert_ptr_nonnull(p);
	return p;
}

static inline float *galloc(size_t n)
{
	float *p = falloc(n);
	for (size_t i = 0; i < n; i++)
		p[i] = GRAD0;
	return p;
}

/* Small shapes, odd where it matters, so an index mix-up cannot hide. */
enum { B = 2, T = 5, C = 8, OC = 6, NH = 2, V = 7, MAXT = 6 };

#endif
