/* The fp32 row kernels of the tiny GPT, written once over 16-lane vectors
 * (GCC vector extensions) and compiled by layers_simd.c for each SIMD path:
 * 16 AVX-512 lanes, two 8-lane AVX2 halves, or four 4-lane SSE2 / NEON
 * quarters. Every path runs the same IEEE operations in the same order, so
 * a path changes speed, never a bit. The order is the definition:
 *
 * - a row sum over n elements is 16 partial sums, lane j adding elements
 *   j, j + 16, j + 32, ... in that order from +0, lanes past n adding
 *   nothing, then the fixed tree lane[i] += lane[i + h] for h = 8, 4, 2, 1;
 * - a row maximum is the same tree of lane maxima (v > m ? v : m);
 * - exp(x) is LB_NAME(exp) below: x clamped to [-104, 89], k = x log2(e)
 *   rounded to nearest even, r = x - k ln 2 in two steps, e^r by a
 *   degree-7 polynomial in Horner form, 2^k as two exact powers of two;
 * - no multiply-add is fused (the build compiles with -ffp-contract=off).
 *
 * Includers define LB_NAME(x) (the instance's name for kernel x) and
 * LB_TARGET (its function attributes: a target, or nothing). */

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef float lb_vf __attribute__((vector_size(64)));
typedef int32_t lb_vi __attribute__((vector_size(64)));

#define LB_LANES 16
#define LB_INLINE static inline __attribute__((always_inline))

/* x[i..i+16) with the lanes past n read as pad. */
LB_INLINE lb_vf LB_NAME(load)(const float *x, size_t i, size_t n, float pad)
{
	lb_vf v;
	if (n - i >= LB_LANES) {
		memcpy(&v, x + i, sizeof v);
		return v;
	}
	float t[LB_LANES];
	for (size_t j = 0; j < LB_LANES; j++)
		t[j] = i + j < n ? x[i + j] : pad;
	memcpy(&v, t, sizeof v);
	return v;
}

/* x[i..min(i+16, n)) = v (a full vector by one fixed-size copy, which the
 * compiler turns into vector stores; the tail lane by lane). */
LB_INLINE void LB_NAME(store)(float *x, size_t i, size_t n, lb_vf v)
{
	if (n - i >= LB_LANES) {
		memcpy(x + i, &v, sizeof v);
		return;
	}
	float t[LB_LANES];
	memcpy(t, &v, sizeof t);
	for (size_t j = 0; i + j < n; j++)
		x[i + j] = t[j];
}

LB_INLINE lb_vf LB_NAME(splat)(float a)
{
	return (lb_vf){ 0 } + a;
}

/* a where the lane of mask is set (all ones), else b. */
LB_INLINE lb_vf LB_NAME(select)(lb_vi mask, lb_vf a, lb_vf b)
{
	return (lb_vf)(((lb_vi)a & mask) | ((lb_vi)b & ~mask));
}

/* The lanes summed by the fixed tree. */
LB_INLINE float LB_NAME(hsum)(lb_vf v)
{
	float a[LB_LANES];
	memcpy(a, &v, sizeof a);
	for (size_t h = LB_LANES / 2; h > 0; h /= 2)
		for (size_t i = 0; i < h; i++)
			a[i] = a[i] + a[i + h];
	return a[0];
}

/* The lanes' maximum by the same tree. */
LB_INLINE float LB_NAME(hmax)(lb_vf v)
{
	float a[LB_LANES];
	memcpy(a, &v, sizeof a);
	for (size_t h = LB_LANES / 2; h > 0; h /= 2)
		for (size_t i = 0; i < h; i++)
			a[i] = a[i + h] > a[i] ? a[i + h] : a[i];
	return a[0];
}

/* exp(x) = 2^k e^r: k = x log2(e) rounded to nearest even, r = x - k ln 2
 * in two parts (Cody and Waite: k ln2_hi is exact, so r keeps its low
 * bits), e^r by its Taylor polynomial of degree 7 (|r| <= ln2 / 2:
 * truncation below 6e-9), 2^k applied as two exact powers of two so that a
 * subnormal result is rounded once. Relative error about 1e-7; x below
 * -104 gives 0, above 89 inf, NaN stays NaN. */
LB_INLINE lb_vf LB_NAME(exp)(lb_vf x)
{
	const lb_vf lo = LB_NAME(splat)(-104.0f), hi = LB_NAME(splat)(89.0f);
	const lb_vf round = LB_NAME(splat)(0x1.8p23f);
	x = LB_NAME(select)(x < lo, lo, x);
	x = LB_NAME(select)(x > hi, hi, x);
	lb_vf k = (x * LB_NAME(splat)(1.4426950408889634f) + round) - round;   /* |k| <= 150 */
	lb_vf r = (x - k * LB_NAME(splat)(0x1.63p-1f)) - k * LB_NAME(splat)(-2.12194440e-4f);
	lb_vf p = LB_NAME(splat)(1.0f / 5040);
	p = p * r + LB_NAME(splat)(1.0f / 720);
	p = p * r + LB_NAME(splat)(1.0f / 120);
	p = p * r + LB_NAME(splat)(1.0f / 24);
	p = p * r + LB_NAME(splat)(1.0f / 6);
	p = p * r + LB_NAME(splat)(0.5f);
	p = p * r + LB_NAME(splat)(1.0f);
	p = p * r + LB_NAME(splat)(1.0f);
	/* NaN lanes convert as 0 (p is NaN there whatever 2^k is); the test is
	 * on the bits, which every target compares in vector registers */
	lb_vi nan = ((lb_vi)k & 0x7fffffff) > 0x7f800000;
	lb_vi ki = __builtin_convertvector(LB_NAME(select)(nan, LB_NAME(splat)(0.0f), k), lb_vi);
	lb_vi k1 = ki >> 1, k2 = ki - k1;   /* each in [-75, 64]: 2^k1, 2^k2 are normal */
	lb_vf s1 = (lb_vf)((k1 + 127) << 23), s2 = (lb_vf)((k2 + 127) << 23);
	return (p * s1) * s2;
}

/* 1 + tanh(u) = 2 / (1 + exp(-2u)): accurate in relative terms in both
 * tails, with exp's 0 and inf giving the limits 2 and 0. */
LB_INLINE lb_vf LB_NAME(one_plus_tanh)(lb_vf u)
{
	const lb_vf two = LB_NAME(splat)(2.0f);
	return two / (LB_NAME(splat)(1.0f) + LB_NAME(exp)(u * LB_NAME(splat)(-2.0f)));
}

LB_TARGET static float LB_NAME(softmax_row)(float *out, const float *in, size_t n, float *max_out)
{
	lb_vf mx = LB_NAME(splat)(-INFINITY);
	for (size_t i = 0; i < n; i += LB_LANES) {
		lb_vf v = LB_NAME(load)(in, i, n, -INFINITY);
		mx = LB_NAME(select)(v > mx, v, mx);
	}
	float m = LB_NAME(hmax)(mx);
	lb_vf vm = LB_NAME(splat)(m), sum = LB_NAME(splat)(0.0f);
	for (size_t i = 0; i < n; i += LB_LANES) {
		lb_vf e = LB_NAME(exp)(LB_NAME(load)(in, i, n, 0.0f) - vm);
		if (n - i < LB_LANES) {
			const lb_vi lane = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
			e = LB_NAME(select)(lane < (lb_vi){ 0 } + (int32_t)(n - i), e, LB_NAME(splat)(0.0f));
		}
		sum = sum + e;
		LB_NAME(store)(out, i, n, e);
	}
	float total = LB_NAME(hsum)(sum);
	lb_vf inv = LB_NAME(splat)(1.0f / total);
	for (size_t i = 0; i < n; i += LB_LANES)
		LB_NAME(store)(out, i, n, LB_NAME(load)(out, i, n, 0.0f) * inv);
	*max_out = m;
	return total;
}

/* dpre = att (datt - <att, datt>) on and below the diagonal, 0 above. */
LB_TARGET static void LB_NAME(softmax_backward_causal)(float *dpre, const float *datt, const float *att, size_t T)
{
	for (size_t t = 0; t < T; t++) {
		const float *ar = att + t * T;    // (T)
		const float *dr = datt + t * T;   // (T)
		float *dp = dpre + t * T;         // (T)
		size_t n = t + 1;
		lb_vf acc = LB_NAME(splat)(0.0f);
		for (size_t u = 0; u < n; u += LB_LANES)
			acc = acc + LB_NAME(load)(ar, u, n, 0.0f) * LB_NAME(load)(dr, u, n, 0.0f);
		lb_vf dot = LB_NAME(splat)(LB_NAME(hsum)(acc));
		for (size_t u = 0; u < n; u += LB_LANES)
			LB_NAME(store)(dp, u, n, LB_NAME(load)(ar, u, n, 0.0f) * (LB_NAME(load)(dr, u, n, 0.0f) - dot));
		for (size_t u = n; u < T; u++)
			dp[u] = 0.0f;
	}
}

LB_TARGET static void LB_NAME(gelu_forward)(float *out, const float *inp, size_t N)
{
	const lb_vf half = LB_NAME(splat)(0.5f), sc = LB_NAME(splat)(GELU_SCALE), cube = LB_NAME(splat)(GELU_CUBE);
	for (size_t i = 0; i < N; i += LB_LANES) {
		lb_vf x = LB_NAME(load)(inp, i, N, 0.0f);
		lb_vf u = sc * (x + cube * x * x * x);
		LB_NAME(store)(out, i, N, half * x * LB_NAME(one_plus_tanh)(u));
	}
}

LB_TARGET static void LB_NAME(gelu_backward)(float *dinp, const float *inp, const float *dout, size_t N)
{
	const lb_vf half = LB_NAME(splat)(0.5f), one = LB_NAME(splat)(1.0f), two = LB_NAME(splat)(2.0f);
	const lb_vf sc = LB_NAME(splat)(GELU_SCALE), cube = LB_NAME(splat)(GELU_CUBE);
	const lb_vf cube3 = LB_NAME(splat)(3.0f * GELU_CUBE);
	for (size_t i = 0; i < N; i += LB_LANES) {
		lb_vf x = LB_NAME(load)(inp, i, N, 0.0f);
		lb_vf u = sc * (x + cube * x * x * x);
		lb_vf opt = LB_NAME(one_plus_tanh)(u);
		lb_vf du = sc * (one + cube3 * x * x);
		/* sech^2 u = 1 - tanh^2 u = opt (2 - opt) */
		lb_vf grad = half * opt + half * x * opt * (two - opt) * du;
		lb_vf d = LB_NAME(load)(dinp, i, N, 0.0f) + grad * LB_NAME(load)(dout, i, N, 0.0f);
		LB_NAME(store)(dinp, i, N, d);
	}
}

/* LayerNorm over N rows of C (eps 1e-5): the mean, the variance of the
 * centred values (two passes: no cancellation when the stream carries a
 * large offset), o = (x - mean) rstd weight + bias. */
LB_TARGET static void LB_NAME(layernorm_forward)(float *out, float *mean, float *rstd, const float *inp,
                                                 const float *weight, const float *bias, size_t N, size_t C)
{
	for (size_t bt = 0; bt < N; bt++) {
		const float *x = inp + bt * C;   // (C)
		float *o = out + bt * C;         // (C)
		lb_vf acc = LB_NAME(splat)(0.0f);
		for (size_t c = 0; c < C; c += LB_LANES)
			acc = acc + LB_NAME(load)(x, c, C, 0.0f);
		float m = LB_NAME(hsum)(acc) / (float)C;
		lb_vf vm = LB_NAME(splat)(m);
		acc = LB_NAME(splat)(0.0f);
		for (size_t c = 0; c < C; c += LB_LANES) {
			lb_vf d = LB_NAME(load)(x, c, C, m) - vm;   /* lanes past C: m - m = 0 */
			acc = acc + d * d;
		}
		float v = LB_NAME(hsum)(acc) / (float)C;
		float s = 1.0f / sqrtf(v + 1e-5f);
		lb_vf vs = LB_NAME(splat)(s);
		for (size_t c = 0; c < C; c += LB_LANES) {
			lb_vf nrm = (LB_NAME(load)(x, c, C, 0.0f) - vm) * vs;
			LB_NAME(store)(o, c, C, nrm * LB_NAME(load)(weight, c, C, 0.0f) + LB_NAME(load)(bias, c, C, 0.0f));
		}
		mean[bt] = m;
		rstd[bt] = s;
	}
}

/* With n = (x - mean) rstd and g = weight dout: dx += rstd (g - mean(g) -
 * n mean(g n)), dweight += n dout, dbias += dout. */
LB_TARGET static void LB_NAME(layernorm_backward)(float *dinp, float *dweight, float *dbias, const float *dout,
                                                  const float *inp, const float *weight, const float *mean,
                                                  const float *rstd, size_t N, size_t C)
{
	for (size_t bt = 0; bt < N; bt++) {
		const float *d = dout + bt * C;  // (C)
		const float *x = inp + bt * C;   // (C)
		float *dx = dinp + bt * C;       // (C)
		lb_vf vm = LB_NAME(splat)(mean[bt]), vs = LB_NAME(splat)(rstd[bt]);
		lb_vf ga = LB_NAME(splat)(0.0f), gna = LB_NAME(splat)(0.0f);
		for (size_t c = 0; c < C; c += LB_LANES) {
			lb_vf nrm = (LB_NAME(load)(x, c, C, 0.0f) - vm) * vs;
			lb_vf g = LB_NAME(load)(weight, c, C, 0.0f) * LB_NAME(load)(d, c, C, 0.0f);
			ga = ga + g;
			gna = gna + g * nrm;
		}
		lb_vf g_mean = LB_NAME(splat)(LB_NAME(hsum)(ga) / (float)C);
		lb_vf gn_mean = LB_NAME(splat)(LB_NAME(hsum)(gna) / (float)C);
		for (size_t c = 0; c < C; c += LB_LANES) {
			lb_vf dv = LB_NAME(load)(d, c, C, 0.0f);
			lb_vf nrm = (LB_NAME(load)(x, c, C, 0.0f) - vm) * vs;
			lb_vf g = LB_NAME(load)(weight, c, C, 0.0f) * dv;
			LB_NAME(store)(dbias, c, C, LB_NAME(load)(dbias, c, C, 0.0f) + dv);
			LB_NAME(store)(dweight, c, C, LB_NAME(load)(dweight, c, C, 0.0f) + nrm * dv);
			lb_vf t = (g - g_mean) - nrm * gn_mean;
			LB_NAME(store)(dx, c, C, LB_NAME(load)(dx, c, C, 0.0f) + t * vs);
		}
	}
}

#undef LB_LANES
#undef LB_INLINE
