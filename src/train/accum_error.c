/* Accumulation precision, measured: the exact reference (MPFR) and the
 * relative error of the model in accum.c over seeded random operands. Kept
 * apart from accum.c so that the trainer's GEMM needs no MPFR: accum.c is in
 * libmixprec_train.a, which the device build (--enable-device-build) makes
 * without MPFR, and this file in libmixprec.a. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "fmt/bulk.h"
#include "train/accum.h"
#include "util/rng.h"

/* --- the exact reference --- */

mp_status accum_exact_dot(const float *x, const float *y, size_t K, double *out)
{
	/* A product of two floats is exact in double (48 bits) and lies within
	 * [2^-298, 2^256); 700 bits hold any sum of fewer than 2^40 of them. */
	mpfr_t s, p;
	mpfr_init2(s, 700);
	mpfr_init2(p, 53);
	mpfr_set_zero(s, 1);
	for (size_t k = 0; k < K; k++) {
		mpfr_set_d(p, (double)x[k] * (double)y[k], MPFR_RNDN);
		mpfr_add(s, s, p, MPFR_RNDN);
	}
	*out = mpfr_get_d(s, MPFR_RNDN);
	mpfr_clear(s);
	mpfr_clear(p);
	return MP_OK;
}

/* --- the error against K --- */

const char *accum_dist_name(accum_dist d)
{
	return d == ACCUM_DIST_MIXED ? "mixed" : "positive";
}

bool accum_dist_parse(const char *name, accum_dist *d)
{
	if (!strcmp(name, "positive"))
		*d = ACCUM_DIST_POSITIVE;
	else if (!strcmp(name, "mixed"))
		*d = ACCUM_DIST_MIXED;
	else
		return false;
	return true;
}

/* Operand `which` (0: x, 1: y) element k of trial t: uniform on [0, 1) or
 * [-1, 1), the same for every K. */
static double draw(unsigned long long seed, size_t t, size_t k, int which, accum_dist d)
{
	uint64_t h = rng_mix64(rng_mix64(rng_mix64(seed) ^ (uint64_t)t) ^ (2 * (uint64_t)k + (uint64_t)which));
	double u = (double)(h >> 11) * 0x1p-53;
	return d == ACCUM_DIST_MIXED ? 2.0 * u - 1.0 : u;
}

/* x, y (K) = trial t's operands rounded to fmt. */
static mp_status trial_operands(float *x, float *y, fmt_id fmt, accum_dist dist, size_t K, size_t t,
                                unsigned long long seed)
{
	for (size_t k = 0; k < K; k++) {
		x[k] = (float)draw(seed, t, k, 0, dist);
		y[k] = (float)draw(seed, t, k, 1, dist);
	}
	fmt_bulk_opts o = { .fmt = fmt, .mode = FMT_RNE, .saturate = true };
	mp_status st = fmt_bulk_quantize(FMT_SIMD_AUTO, &o, x, K);
	return st == MP_OK ? fmt_bulk_quantize(FMT_SIMD_AUTO, &o, y, K) : st;
}

mp_status accum_error_measure(accum_error *out, fmt_id fmt, accum_dist dist, size_t K, size_t trials,
                              unsigned long long seed, const accum_cfg *c)
{
	memset(out, 0, sizeof *out);
	if (K == 0 || trials == 0)
		return MP_EINVAL;
	float *x = malloc(K * sizeof *x), *y = malloc(K * sizeof *y);
	mp_status st = x && y ? MP_OK : MP_ENOMEM;
	size_t counted = 0;
	for (size_t t = 0; t < trials && st == MP_OK; t++) {
		st = trial_operands(x, y, fmt, dist, K, t, seed);
		double exact = 0.0, mag = 0.0;
		if (st == MP_OK)
			st = accum_exact_dot(x, y, K, &exact);
		if (st != MP_OK)
			break;
		for (size_t k = 0; k < K; k++)
			mag += fabs((double)x[k] * (double)y[k]);
		double err = fabs((double)accum_dot(x, 1, y, 1, K, c) - exact);
		if (mag > 0 && err / mag > out->max_scaled)
			out->max_scaled = err / mag;
		if (exact != 0.0) {
			double rel = err / fabs(exact);
			out->max_rel = rel > out->max_rel ? rel : out->max_rel;
			out->mean_rel += rel;
			counted++;
		}
	}
	if (counted)
		out->mean_rel /= (double)counted;
	free(x);
	free(y);
	return st;
}
