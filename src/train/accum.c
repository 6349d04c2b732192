/* Accumulation precision: the model and its sources are in accum.h. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/accum.h"

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
