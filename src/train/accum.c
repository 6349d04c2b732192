/* Accumulation precision: the model and its sources are in accum.h. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "fmt/bulk.h"
#include "train/accum.h"
#include "util/rng.h"

mp_status accum_cfg_check(const accum_cfg *c, char *err, size_t errlen)
{
	if (c->bits < ACCUM_BITS_MIN || c->bits > ACCUM_BITS_FP32) {
		snprintf(err, errlen, "bits %d is out of range (%d..%d; %d is an IEEE fp32 accumulator)", c->bits,
		         ACCUM_BITS_MIN, ACCUM_BITS_FP32, ACCUM_BITS_FP32);
		return MP_EINVAL;
	}
	if (c->block < 1 || c->block > ACCUM_BLOCK_MAX) {
		snprintf(err, errlen, "block %zu is out of range (1..%d)", c->block, ACCUM_BLOCK_MAX);
		return MP_EINVAL;
	}
	return MP_OK;
}

/* --- the tensor core's partial sum --- */

/* v stored in fp32 rounded toward zero: the tensor core's final
 * normalisation (Fasi et al.; H100TC.m frmode 'rz'). */
static float float_toward_zero(double v)
{
	float f = (float)v;
	if (fabs((double)f) > fabs(v))
		f = nextafterf(f, 0.0f);
	return f;
}

/* acc plus the n products x[k*incx] * y[k*incy], as one block: every term
 * truncated toward zero to a multiple of 2^(E - bits + 1), E the exponent of
 * the largest term (acc included), then summed exactly. A truncated term is
 * below 2^(bits+1) in units of that step and a block has at most
 * ACCUM_BLOCK_MAX + 1 terms, so the int64 sum is exact (< 2^46); the
 * conversion to int64 truncates toward zero, as the hardware's shift does. */
float accum_block_add(float acc, const float *x, size_t incx, const float *y, size_t incy, size_t n, int bits)
{
	enum { BUF = 64 };
	double buf[BUF];
	double big = fabs((double)acc), all = (double)acc;
	for (size_t k = 0; k < n; k++) {
		double p = (double)x[k * incx] * (double)y[k * incy];
		if (k < BUF)
			buf[k] = p;
		big = fabs(p) > big ? fabs(p) : big;
		all += p;
	}
	/* an inf or NaN operand (an fp8 overflow under loss scaling) makes the
	 * sum inf or NaN, as in fp32, so the scaler sees it */
	if (!isfinite(all))
		return (float)all;
	if (big == 0.0)
		return 0.0f;
	int shift = ilogb(big) - bits + 1;
	double down = ldexp(1.0, -shift);
	int64_t s = (int64_t)((double)acc * down);
	for (size_t k = 0; k < n; k++)
		s += (int64_t)((k < BUF ? buf[k] : (double)x[k * incx] * (double)y[k * incy]) * down);
	return float_toward_zero(ldexp((double)s, shift));
}

/* The tensor core's partial sum of n products, from zero. */
static float partial_sum(const float *x, size_t incx, const float *y, size_t incy, size_t n, const accum_cfg *c)
{
	float acc = 0.0f;
	if (c->bits >= ACCUM_BITS_FP32) {
		for (size_t k = 0; k < n; k++) {
			float p = x[k * incx] * y[k * incy];
			acc += p;
		}
		return acc;
	}
	for (size_t k0 = 0; k0 < n; k0 += c->block) {
		size_t len = n - k0 < c->block ? n - k0 : c->block;
		acc = accum_block_add(acc, x + k0 * incx, incx, y + k0 * incy, incy, len, c->bits);
	}
	return acc;
}

float accum_dot(const float *x, size_t incx, const float *y, size_t incy, size_t K, const accum_cfg *c)
{
	size_t every = c->promote_every ? c->promote_every : K;
	float total = 0.0f;
	for (size_t k0 = 0; k0 < K; k0 += every) {
		size_t n = K - k0 < every ? K - k0 : every;
		float part = partial_sum(x + k0 * incx, incx, y + k0 * incy, incy, n, c);
		/* promotion: the partial sum joins fp32 registers on CUDA cores */
		total = c->promote_every ? total + part : part;
	}
	return total;
}

/* dst (n, K) = the n strided vectors src[j*cs + k*ks]: contiguous, so that
 * each dot reads memory in order. */
static void gather(float *dst, const float *src, size_t cs, size_t ks, size_t n, size_t K)
{
	for (size_t k = 0; k < K; k++)
		for (size_t j = 0; j < n; j++)
			dst[j * K + k] = src[j * cs + k * ks];
}

mp_status accum_gemm(float *out, size_t ldo, bool add, const float *a, size_t a_rs, size_t a_ks, const float *b,
                     size_t b_cs, size_t b_ks, size_t M, size_t N, size_t K, const accum_cfg *c)
{
	float *at = NULL, *bt = NULL;
	if (a_ks != 1 && (at = malloc(M * K * sizeof *at)) == NULL)
		return MP_ENOMEM;
	if (b_ks != 1 && (bt = malloc(N * K * sizeof *bt)) == NULL) {
		free(at);
		return MP_ENOMEM;
	}
	if (at) {
		gather(at, a, a_rs, a_ks, M, K);
		a = at, a_rs = K;
	}
	if (bt) {
		gather(bt, b, b_cs, b_ks, N, K);
		b = bt, b_cs = K;
	}
	for (size_t i = 0; i < M; i++) {
		for (size_t j = 0; j < N; j++) {
			float d = accum_dot(a + i * a_rs, 1, b + j * b_cs, 1, K, c);
			float *o = out + i * ldo + j;
			*o = add ? *o + d : d;
		}
	}
	free(at);
	free(bt);
	return MP_OK;
}

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
