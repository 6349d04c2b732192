/* The fp32 row kernels of the tiny GPT, written once over vectors of the
 * target's own width (GCC vector extensions: LB_W lanes, 16 for AVX-512, 8
 * for AVX2, 4 for SSE2 or NEON) and compiled by layers_simd.c once per SIMD
 * path. Every path runs the same IEEE operations in the same order, so a
 * path changes speed, never a bit. The order is the definition:
 *
 * - a row sum over n elements is 16 partial sums, lane j adding elements
 *   j, j + 16, j + 32, ... in that order from +0, lanes past n adding
 *   nothing, then the fixed tree lane[i] += lane[i + h] for h = 8, 4, 2, 1
 *   (a path with LB_W < 16 keeps the 16 lanes in 16 / LB_W vectors);
 * - a row maximum is the same tree of lane maxima (v > m ? v : m);
 * - exp(x) is LB_NAME(exp) below: x clamped to [-104, 89], k = x log2(e)
 *   rounded to nearest even, r = x - k ln 2 in two steps, e^r by a
 *   degree-7 polynomial in Horner form, 2^k as two exact powers of two;
 * - elementwise formulas are the same expressions on every path;
 * - no multiply-add is fused (the build compiles with -ffp-contract=off).
 *
 * Includers define LB_NAME(x) (the instance's name for kernel x), LB_W
 * (lanes of its vectors: 4, 8 or 16) and LB_TARGET (its function
 * attributes: a target, or nothing). */

#include <math.h>
#include <stdint.h>
#include <string.h>

#define LB_VF LB_NAME(vf)
#define LB_VI LB_NAME(vi)
typedef float LB_VF __attribute__((vector_size(4 * LB_W)));
typedef int32_t LB_VI __attribute__((vector_size(4 * LB_W)));

#define LB_LANES 16              /* lanes of the defined sum order */
#define LB_K (LB_LANES / LB_W)   /* vectors that hold them */
#define LB_INLINE static inline __attribute__((always_inline))

/* x[i..i+LB_W) with the lanes past n read as pad. */
LB_INLINE LB_VF LB_NAME(load)(const float *x, size_t i, size_t n, float pad)
{
	LB_VF v;
	if (i + LB_W <= n) {
		memcpy(&v, x + i, sizeof v);
		return v;
	}
	float t[LB_W];
	for (size_t j = 0; j < LB_W; j++)
		t[j] = i + j < n ? x[i + j] : pad;
	memcpy(&v, t, sizeof v);
	return v;
}

/* x[i..min(i+LB_W, n)) = v (a full vector by one fixed-size copy, which the
 * compiler turns into a vector store; a tail lane by lane). */
LB_INLINE void LB_NAME(store)(float *x, size_t i, size_t n, LB_VF v)
{
	if (i + LB_W <= n) {
		memcpy(x + i, &v, sizeof v);
		return;
	}
	float t[LB_W];
	memcpy(t, &v, sizeof t);
	for (size_t j = 0; i + j < n; j++)
		x[i + j] = t[j];
}

LB_INLINE LB_VF LB_NAME(splat)(float a)
{
	return (LB_VF){ 0 } + a;
}

/* a where the lane of mask is set (all ones), else b. */
LB_INLINE LB_VF LB_NAME(select)(LB_VI mask, LB_VF a, LB_VF b)
{
	return (LB_VF)(((LB_VI)a & mask) | ((LB_VI)b & ~mask));
}

/* The 16 lanes of acc[0..LB_K) (acc[k] holds lanes k LB_W ...) summed by
 * the fixed tree. */
LB_INLINE float LB_NAME(hsum)(const LB_VF *acc)
{
	float a[LB_LANES];
	memcpy(a, acc, sizeof a);
	for (size_t h = LB_LANES / 2; h > 0; h /= 2)
		for (size_t i = 0; i < h; i++)
			a[i] = a[i] + a[i + h];
	return a[0];
}

/* Their maximum by the same tree. */
LB_INLINE float LB_NAME(hmax)(const LB_VF *acc)
{
	float a[LB_LANES];
	memcpy(a, acc, sizeof a);
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
LB_INLINE LB_VF LB_NAME(exp)(LB_VF x)
{
	const LB_VF lo = LB_NAME(splat)(-104.0f), hi = LB_NAME(splat)(89.0f);
	const LB_VF round = LB_NAME(splat)(0x1.8p23f);
	x = LB_NAME(select)(x < lo, lo, x);
	x = LB_NAME(select)(x > hi, hi, x);
	LB_VF k = (x * LB_NAME(splat)(1.4426950408889634f) + round) - round;   /* |k| <= 150 */
	LB_VF r = (x - k * LB_NAME(splat)(0x1.63p-1f)) - k * LB_NAME(splat)(-2.12194440e-4f);
	LB_VF p = LB_NAME(splat)(1.0f / 5040);
	p = p * r + LB_NAME(splat)(1.0f / 720);
	p = p * r + LB_NAME(splat)(1.0f / 120);
	p = p * r + LB_NAME(splat)(1.0f / 24);
	p = p * r + LB_NAME(splat)(1.0f / 6);
	p = p * r + LB_NAME(splat)(0.5f);
	p = p * r + LB_NAME(splat)(1.0f);
	p = p * r + LB_NAME(splat)(1.0f);
	/* NaN lanes convert as 0 (p is NaN there whatever 2^k is); the test is
	 * on the bits, which every target compares in vector registers */
	LB_VI nan = ((LB_VI)k & 0x7fffffff) > 0x7f800000;
	LB_VI ki = __builtin_convertvector(LB_NAME(select)(nan, LB_NAME(splat)(0.0f), k), LB_VI);
	LB_VI k1 = ki >> 1, k2 = ki - k1;   /* each in [-75, 64]: 2^k1, 2^k2 are normal */
	LB_VF s1 = (LB_VF)((k1 + 127) << 23), s2 = (LB_VF)((k2 + 127) << 23);
	return (p * s1) * s2;
}

/* 1 + tanh(u) = 2 / (1 + exp(-2u)): accurate in relative terms in both
 * tails, with exp's 0 and inf giving the limits 2 and 0. */
LB_INLINE LB_VF LB_NAME(one_plus_tanh)(LB_VF u)
{
	const LB_VF two = LB_NAME(splat)(2.0f);
	return two / (LB_NAME(splat)(1.0f) + LB_NAME(exp)(u * LB_NAME(splat)(-2.0f)));
}

/* Lanes i..i+LB_W of a row of n whose index is below n, as a mask. */
LB_INLINE LB_VI LB_NAME(inside)(size_t i, size_t n)
{
	LB_VI lane;
	for (int j = 0; j < LB_W; j++)
		lane[j] = j;
	return lane + (int32_t)i < (LB_VI){ 0 } + (int32_t)n;
}

LB_TARGET static float LB_NAME(softmax_row)(float *out, const float *in, size_t n, float *max_out)
{
	LB_VF mx[LB_K];
	for (int k = 0; k < LB_K; k++)
		mx[k] = LB_NAME(splat)(-INFINITY);
	for (size_t i = 0; i < n; i += LB_LANES)
		for (int k = 0; k < LB_K; k++) {
			LB_VF v = LB_NAME(load)(in, i + k * LB_W, n, -INFINITY);
			mx[k] = LB_NAME(select)(v > mx[k], v, mx[k]);
		}
	float m = LB_NAME(hmax)(mx);
	LB_VF vm = LB_NAME(splat)(m), sum[LB_K];
	for (int k = 0; k < LB_K; k++)
		sum[k] = LB_NAME(splat)(0.0f);
	for (size_t i = 0; i < n; i += LB_LANES)
		for (int k = 0; k < LB_K; k++) {
			size_t at = i + k * LB_W;
			if (at >= n)
				break;   /* lanes past n add nothing */
			LB_VF e = LB_NAME(exp)(LB_NAME(load)(in, at, n, 0.0f) - vm);
			if (at + LB_W > n)
				e = LB_NAME(select)(LB_NAME(inside)(at, n), e, LB_NAME(splat)(0.0f));
			sum[k] = sum[k] + e;
			LB_NAME(store)(out, at, n, e);
		}
	float total = LB_NAME(hsum)(sum);
	LB_VF inv = LB_NAME(splat)(1.0f / total);
	for (size_t i = 0; i < n; i += LB_W)
		LB_NAME(store)(out, i, n, LB_NAME(load)(out, i, n, 0.0f) * inv);
	*max_out = m;
	return total;
}

/* The defined sum of a[u] b[u] over u < n. */
LB_INLINE float LB_NAME(dot)(const float *a, const float *b, size_t n)
{
	LB_VF acc[LB_K];
	for (int k = 0; k < LB_K; k++)
		acc[k] = LB_NAME(splat)(0.0f);
	for (size_t u = 0; u < n; u += LB_LANES)
		for (int k = 0; k < LB_K; k++) {
			size_t at = u + k * LB_W;
			if (at < n)
				acc[k] = acc[k] + LB_NAME(load)(a, at, n, 0.0f) * LB_NAME(load)(b, at, n, 0.0f);
		}
	return LB_NAME(hsum)(acc);
}

/* dpre = att (datt - <att, datt>) on and below the diagonal, 0 above. */
LB_TARGET static void LB_NAME(softmax_backward_causal)(float *dpre, const float *datt, const float *att, size_t T)
{
	for (size_t t = 0; t < T; t++) {
		const float *ar = att + t * T;    // (T)
		const float *dr = datt + t * T;   // (T)
		float *dp = dpre + t * T;         // (T)
		size_t n = t + 1;
		LB_VF dot = LB_NAME(splat)(LB_NAME(dot)(ar, dr, n));
		for (size_t u = 0; u < n; u += LB_W)
			LB_NAME(store)(dp, u, n, LB_NAME(load)(ar, u, n, 0.0f) * (LB_NAME(load)(dr, u, n, 0.0f) - dot));
		for (size_t u = n; u < T; u++)
			dp[u] = 0.0f;
	}
}

LB_TARGET static void LB_NAME(gelu_forward)(float *out, const float *inp, size_t N)
{
	const LB_VF half = LB_NAME(splat)(0.5f), sc = LB_NAME(splat)(GELU_SCALE), cube = LB_NAME(splat)(GELU_CUBE);
	for (size_t i = 0; i < N; i += LB_W) {
		LB_VF x = LB_NAME(load)(inp, i, N, 0.0f);
		LB_VF u = sc * (x + cube * x * x * x);
		LB_NAME(store)(out, i, N, half * x * LB_NAME(one_plus_tanh)(u));
	}
}

LB_TARGET static void LB_NAME(gelu_backward)(float *dinp, const float *inp, const float *dout, size_t N)
{
	const LB_VF half = LB_NAME(splat)(0.5f), one = LB_NAME(splat)(1.0f), two = LB_NAME(splat)(2.0f);
	const LB_VF sc = LB_NAME(splat)(GELU_SCALE), cube = LB_NAME(splat)(GELU_CUBE);
	const LB_VF cube3 = LB_NAME(splat)(3.0f * GELU_CUBE);
	for (size_t i = 0; i < N; i += LB_W) {
		LB_VF x = LB_NAME(load)(inp, i, N, 0.0f);
		LB_VF u = sc * (x + cube * x * x * x);
		LB_VF opt = LB_NAME(one_plus_tanh)(u);
		LB_VF du = sc * (one + cube3 * x * x);
		/* sech^2 u = 1 - tanh^2 u = opt (2 - opt) */
		LB_VF grad = half * opt + half * x * opt * (two - opt) * du;
		LB_VF d = LB_NAME(load)(dinp, i, N, 0.0f) + grad * LB_NAME(load)(dout, i, N, 0.0f);
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
		LB_VF acc[LB_K];
		for (int k = 0; k < LB_K; k++)
			acc[k] = LB_NAME(splat)(0.0f);
		for (size_t c = 0; c < C; c += LB_LANES)
			for (int k = 0; k < LB_K; k++)
				if (c + k * LB_W < C)
					acc[k] = acc[k] + LB_NAME(load)(x, c + k * LB_W, C, 0.0f);
		float m = LB_NAME(hsum)(acc) / (float)C;
		LB_VF vm = LB_NAME(splat)(m);
		for (int k = 0; k < LB_K; k++)
			acc[k] = LB_NAME(splat)(0.0f);
		for (size_t c = 0; c < C; c += LB_LANES)
			for (int k = 0; k < LB_K; k++)
				if (c + k * LB_W < C) {
					LB_VF d = LB_NAME(load)(x, c + k * LB_W, C, m) - vm;   /* lanes past C: m - m = 0 */
					acc[k] = acc[k] + d * d;
				}
		float v = LB_NAME(hsum)(acc) / (float)C;
		float s = 1.0f / sqrtf(v + 1e-5f);
		LB_VF vs = LB_NAME(splat)(s);
		for (size_t c = 0; c < C; c += LB_W) {
			LB_VF nrm = (LB_NAME(load)(x, c, C, 0.0f) - vm) * vs;
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
		LB_VF vm = LB_NAME(splat)(mean[bt]), vs = LB_NAME(splat)(rstd[bt]);
		LB_VF ga[LB_K], gna[LB_K];
		for (int k = 0; k < LB_K; k++)
			ga[k] = gna[k] = LB_NAME(splat)(0.0f);
		for (size_t c = 0; c < C; c += LB_LANES)
			for (int k = 0; k < LB_K; k++) {
				size_t at = c + k * LB_W;
				if (at >= C)
					break;
				LB_VF nrm = (LB_NAME(load)(x, at, C, 0.0f) - vm) * vs;
				LB_VF g = LB_NAME(load)(weight, at, C, 0.0f) * LB_NAME(load)(d, at, C, 0.0f);
				ga[k] = ga[k] + g;
				gna[k] = gna[k] + g * nrm;
			}
		LB_VF g_mean = LB_NAME(splat)(LB_NAME(hsum)(ga) / (float)C);
		LB_VF gn_mean = LB_NAME(splat)(LB_NAME(hsum)(gna) / (float)C);
		for (size_t c = 0; c < C; c += LB_W) {
			LB_VF dv = LB_NAME(load)(d, c, C, 0.0f);
			LB_VF nrm = (LB_NAME(load)(x, c, C, 0.0f) - vm) * vs;
			LB_VF g = LB_NAME(load)(weight, c, C, 0.0f) * dv;
			LB_NAME(store)(dbias, c, C, LB_NAME(load)(dbias, c, C, 0.0f) + dv);
			LB_NAME(store)(dweight, c, C, LB_NAME(load)(dweight, c, C, 0.0f) + nrm * dv);
			LB_VF t = (g - g_mean) - nrm * gn_mean;
			LB_NAME(store)(dx, c, C, LB_NAME(load)(dx, c, C, 0.0f) + t * vs);
		}
	}
}

#undef LB_VF
#undef LB_VI
#undef LB_LANES
#undef LB_K
#undef LB_INLINE
