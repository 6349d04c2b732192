/* The AVX-512 twins of layers.c's kernels (declared in layers_avx512.h):
 * the row softmax, GELU, the causal softmax Jacobian and LayerNorm, with
 * sums in 16 lanes and fused multiply-adds, so they agree with the portable
 * loops to a few ulps, not bit for bit. layers.c chooses between the two
 * with layers_have_avx512(); on other CPUs (and other architectures, where
 * the stubs below stand in) it runs the portable loops. */
#include "train/layers_avx512.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define T512 __attribute__((target("avx512f,avx512dq")))

/* exp(x) as 2^k times a degree-6 polynomial of the fraction (relative error
 * about 1e-7); underflows to 0 and overflows to inf like expf. */
T512 static inline __m512 exp16(__m512 x)
{
	__m512 t = _mm512_mul_ps(x, _mm512_set1_ps(1.4426950408889634f));
	__m512 k = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512 f = _mm512_sub_ps(t, k);
	__m512 p = _mm512_set1_ps(1.5403530393381606e-4f);
	p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.3333558146428443e-3f));
	p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.6181291076284772e-3f));
	p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.5504108664821580e-2f));
	p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.4022650695910071e-1f));
	p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.9314718055994531e-1f));
	p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
	return _mm512_scalef_ps(p, k);
}

T512 float softmax_row_avx512(float *out, const float *in, size_t n, float *max_out)
{
	__m512 mx = _mm512_set1_ps(-INFINITY);
	for (size_t i = 0; i < n; i += 16) {
		__mmask16 m = n - i >= 16 ? 0xffff : (__mmask16)((1u << (n - i)) - 1);
		mx = _mm512_mask_max_ps(mx, m, mx, _mm512_maskz_loadu_ps(m, in + i));
	}
	*max_out = _mm512_reduce_max_ps(mx);
	__m512 vmax = _mm512_set1_ps(*max_out), sum = _mm512_setzero_ps();
	for (size_t i = 0; i < n; i += 16) {
		__mmask16 m = n - i >= 16 ? 0xffff : (__mmask16)((1u << (n - i)) - 1);
		__m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, in + i), vmax));
		e = _mm512_maskz_mov_ps(m, e);
		sum = _mm512_add_ps(sum, e);
		_mm512_mask_storeu_ps(out + i, m, e);
	}
	float total = _mm512_reduce_add_ps(sum);
	__m512 inv = _mm512_set1_ps(1.0f / total);
	for (size_t i = 0; i < n; i += 16) {
		__mmask16 m = n - i >= 16 ? 0xffff : (__mmask16)((1u << (n - i)) - 1);
		_mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, out + i), inv));
	}
	return total;
}

/* MIXPREC_SIMD=portable or avx2 (as for the bulk kernels) selects the
 * portable loops, so that tests can run them on any CPU. */
/* Detected once for every thread (pthread_once: the trainers' workers ask
 * at the same time, and a plain cached flag would be a data race). */
static bool have_avx512;
static pthread_once_t have_once = PTHREAD_ONCE_INIT;

static void have_detect(void)
{
	__builtin_cpu_init();
	const char *env = getenv("MIXPREC_SIMD");
	bool capped = env && (!strcmp(env, "portable") || !strcmp(env, "avx2"));
	have_avx512 = !capped && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}

bool layers_have_avx512(void)
{
	pthread_once(&have_once, have_detect);
	return have_avx512;
}

/* GELU is elementwise but costs a tanh per element: with libm's scalar tanhf
 * it took 40% of a training step. The AVX-512 path computes 1 + tanh through
 * exp (2^k times a degree-6 polynomial, relative error about 1e-7), close to
 * fp32's own rounding of the result. */

/* 1 + tanh(u) = 2 / (1 + exp(-2u)): accurate in relative terms in both
 * tails (1 + tanh(u) for very negative u is tiny, not 1 - 1), and exp's
 * overflow and underflow give the right limits 0 and 2. */
T512 static inline __m512 one_plus_tanh16(__m512 u)
{
	__m512 e = exp16(_mm512_mul_ps(u, _mm512_set1_ps(-2.0f)));   /* exp(-2u) */
	return _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

T512 void gelu_forward_avx512(float *out, const float *inp, size_t N)
{
	const __m512 half = _mm512_set1_ps(0.5f);
	const __m512 sc = _mm512_set1_ps(GELU_SCALE), cube = _mm512_set1_ps(GELU_CUBE);
	for (size_t i = 0; i < N; i += 16) {
		__mmask16 m = N - i >= 16 ? 0xffff : (__mmask16)((1u << (N - i)) - 1);
		__m512 x = _mm512_maskz_loadu_ps(m, inp + i);
		__m512 x3 = _mm512_mul_ps(_mm512_mul_ps(x, x), x);
		__m512 u = _mm512_mul_ps(sc, _mm512_fmadd_ps(cube, x3, x));
		__m512 y = _mm512_mul_ps(_mm512_mul_ps(half, x), one_plus_tanh16(u));
		_mm512_mask_storeu_ps(out + i, m, y);
	}
}

T512 void gelu_backward_avx512(float *dinp, const float *inp, const float *dout, size_t N)
{
	const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f);
	const __m512 sc = _mm512_set1_ps(GELU_SCALE), cube = _mm512_set1_ps(GELU_CUBE);
	const __m512 cube3 = _mm512_set1_ps(3.0f * GELU_CUBE);
	for (size_t i = 0; i < N; i += 16) {
		__mmask16 m = N - i >= 16 ? 0xffff : (__mmask16)((1u << (N - i)) - 1);
		__m512 x = _mm512_maskz_loadu_ps(m, inp + i);
		__m512 x2 = _mm512_mul_ps(x, x);
		__m512 u = _mm512_mul_ps(sc, _mm512_fmadd_ps(cube, _mm512_mul_ps(x2, x), x));
		__m512 opt = one_plus_tanh16(u);
		__m512 du = _mm512_mul_ps(sc, _mm512_fmadd_ps(cube3, x2, one));
		/* sech^2 = 1 - tanh^2 = (1 + tanh)(1 - tanh) = opt (2 - opt) */
		__m512 sech2 = _mm512_mul_ps(opt, _mm512_sub_ps(_mm512_set1_ps(2.0f), opt));
		__m512 grad = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_mul_ps(half, x), sech2), du,
		                              _mm512_mul_ps(half, opt));
		__m512 d = _mm512_maskz_loadu_ps(m, dinp + i);
		d = _mm512_fmadd_ps(grad, _mm512_maskz_loadu_ps(m, dout + i), d);
		_mm512_mask_storeu_ps(dinp + i, m, d);
	}
}

/* The causal softmax Jacobian, the row's dot product in 16 lanes. */
T512 void softmax_backward_causal_avx512(float *dpre, const float *datt, const float *att, size_t T)
{
	for (size_t t = 0; t < T; t++) {
		const float *ar = att + t * T;    // (T)
		const float *dr = datt + t * T;   // (T)
		float *dp = dpre + t * T;         // (T)
		size_t n = t + 1;
		__m512 acc = _mm512_setzero_ps();
		for (size_t u = 0; u < n; u += 16) {
			__mmask16 k = n - u >= 16 ? 0xffff : (__mmask16)((1u << (n - u)) - 1);
			acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, ar + u), _mm512_maskz_loadu_ps(k, dr + u), acc);
		}
		__m512 dot = _mm512_set1_ps(_mm512_reduce_add_ps(acc));
		for (size_t u = 0; u < T; u += 16) {
			__mmask16 k = T - u >= 16 ? 0xffff : (__mmask16)((1u << (T - u)) - 1);
			/* lanes above the diagonal store 0 */
			__mmask16 lo = u >= n ? 0 : n - u >= 16 ? 0xffff : (__mmask16)((1u << (n - u)) - 1);
			__m512 av = _mm512_maskz_loadu_ps(lo, ar + u);
			__m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(lo, dr + u), dot);
			_mm512_mask_storeu_ps(dp + u, k, _mm512_maskz_mul_ps(lo, av, d));
		}
	}
}

/* LayerNorm: the same two-pass formulas as the portable loops, each row's
 * sums taken in 16 lanes and then across them. */
T512 static inline __mmask16 tail_mask(size_t n, size_t i)
{
	return n - i >= 16 ? 0xffff : (__mmask16)((1u << (n - i)) - 1);
}

T512 void layernorm_forward_avx512(float *out, float *mean, float *rstd, const float *inp,
                                   const float *weight, const float *bias, size_t N, size_t C)
{
	const float eps = 1e-5f;
	for (size_t bt = 0; bt < N; bt++) {
		const float *x = inp + bt * C;   // (C)
		float *o = out + bt * C;         // (C)
		__m512 acc = _mm512_setzero_ps();
		for (size_t c = 0; c < C; c += 16)
			acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(tail_mask(C, c), x + c));
		float m = _mm512_reduce_add_ps(acc) / (float)C;
		__m512 vm = _mm512_set1_ps(m);
		acc = _mm512_setzero_ps();
		for (size_t c = 0; c < C; c += 16) {
			__mmask16 k = tail_mask(C, c);
			__m512 d = _mm512_maskz_sub_ps(k, _mm512_maskz_loadu_ps(k, x + c), vm);
			acc = _mm512_fmadd_ps(d, d, acc);
		}
		float v = _mm512_reduce_add_ps(acc) / (float)C;
		float s = 1.0f / sqrtf(v + eps);
		__m512 vs = _mm512_set1_ps(s);
		for (size_t c = 0; c < C; c += 16) {
			__mmask16 k = tail_mask(C, c);
			__m512 n = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + c), vm), vs);
			__m512 y = _mm512_fmadd_ps(n, _mm512_maskz_loadu_ps(k, weight + c), _mm512_maskz_loadu_ps(k, bias + c));
			_mm512_mask_storeu_ps(o + c, k, y);
		}
		mean[bt] = m;
		rstd[bt] = s;
	}
}

T512 void layernorm_backward_avx512(float *dinp, float *dweight, float *dbias, const float *dout,
                                    const float *inp, const float *weight, const float *mean,
                                    const float *rstd, size_t N, size_t C)
{
	for (size_t bt = 0; bt < N; bt++) {
		const float *d = dout + bt * C;  // (C)
		const float *x = inp + bt * C;   // (C)
		float *dx = dinp + bt * C;       // (C)
		__m512 vm = _mm512_set1_ps(mean[bt]), vs = _mm512_set1_ps(rstd[bt]);
		__m512 ga = _mm512_setzero_ps(), gna = _mm512_setzero_ps();
		for (size_t c = 0; c < C; c += 16) {
			__mmask16 k = tail_mask(C, c);
			__m512 n = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + c), vm), vs);
			__m512 g = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, weight + c), _mm512_maskz_loadu_ps(k, d + c));
			ga = _mm512_add_ps(ga, g);
			gna = _mm512_fmadd_ps(g, n, gna);
		}
		__m512 g_mean = _mm512_set1_ps(_mm512_reduce_add_ps(ga) / (float)C);
		__m512 gn_mean = _mm512_set1_ps(_mm512_reduce_add_ps(gna) / (float)C);
		for (size_t c = 0; c < C; c += 16) {
			__mmask16 k = tail_mask(C, c);
			__m512 dv = _mm512_maskz_loadu_ps(k, d + c);
			__m512 n = _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + c), vm), vs);
			__m512 g = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, weight + c), dv);
			_mm512_mask_storeu_ps(dbias + c, k, _mm512_add_ps(_mm512_maskz_loadu_ps(k, dbias + c), dv));
			_mm512_mask_storeu_ps(dweight + c, k, _mm512_fmadd_ps(n, dv, _mm512_maskz_loadu_ps(k, dweight + c)));
			__m512 t = _mm512_sub_ps(_mm512_sub_ps(g, g_mean), _mm512_mul_ps(n, gn_mean));
			_mm512_mask_storeu_ps(dx + c, k, _mm512_fmadd_ps(t, vs, _mm512_maskz_loadu_ps(k, dx + c)));
		}
	}
}

#else
bool layers_have_avx512(void) { return false; }
float softmax_row_avx512(float *out, const float *in, size_t n, float *max_out)
{
	(void)out; (void)in; (void)n; (void)max_out;
	return 0;
}
void gelu_forward_avx512(float *out, const float *inp, size_t N) { (void)out; (void)inp; (void)N; }
void softmax_backward_causal_avx512(float *dpre, const float *datt, const float *att, size_t T)
{
	(void)dpre; (void)datt; (void)att; (void)T;
}
void layernorm_forward_avx512(float *out, float *mean, float *rstd, const float *inp,
                              const float *weight, const float *bias, size_t N, size_t C)
{
	(void)out; (void)mean; (void)rstd; (void)inp; (void)weight; (void)bias; (void)N; (void)C;
}
void layernorm_backward_avx512(float *dinp, float *dweight, float *dbias, const float *dout,
                               const float *inp, const float *weight, const float *mean,
                               const float *rstd, size_t N, size_t C)
{
	(void)dinp; (void)dweight; (void)dbias; (void)dout; (void)inp; (void)weight; (void)mean; (void)rstd;
	(void)N; (void)C;
}
void gelu_backward_avx512(float *dinp, const float *inp, const float *dout, size_t N)
{
	(void)dinp; (void)inp; (void)dout; (void)N;
}
#endif
