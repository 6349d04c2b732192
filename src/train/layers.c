/* Forward and backward kernels of the tiny GPT (see layers.h for the
 * conventions). Matmuls and the attention products go through cblas_sgemm. */
#include "train/layers.h"

#include <cblas.h>
#include <math.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmt/bulk.h"
#include "fmt/bulk_impl.h"
#include "train/layernorm_core.h"

/* --- embeddings --- */

void encoder_forward(float *out, const int *inp, const float *wte, const float *wpe,
                     size_t B, size_t T, size_t C)
{
	for (size_t b = 0; b < B; b++) {
		for (size_t t = 0; t < T; t++) {
			float *o = out + (b * T + t) * C;                 // (C)
			const float *we = wte + (size_t)inp[b * T + t] * C; // (C)
			const float *pe = wpe + t * C;                    // (C)
			for (size_t c = 0; c < C; c++)
				o[c] = we[c] + pe[c];
		}
	}
}

void encoder_backward(float *dwte, float *dwpe, const float *dout, const int *inp,
                      size_t B, size_t T, size_t C)
{
	for (size_t b = 0; b < B; b++) {
		for (size_t t = 0; t < T; t++) {
			const float *d = dout + (b * T + t) * C;          // (C)
			float *dwe = dwte + (size_t)inp[b * T + t] * C;   // (C)
			float *dpe = dwpe + t * C;                        // (C)
			for (size_t c = 0; c < C; c++) {
				dwe[c] += d[c];
				dpe[c] += d[c];
			}
		}
	}
}

/* --- layer normalisation --- */

/* The portable and low-precision rows are train/layernorm_core.h's, which
 * the GPU bodies run too. The AVX-512 twins (below, with the other SIMD
 * code) have the same formulas with sums in 16 lanes and fused
 * multiply-adds: other bits, so they keep their own loops. */
static bool have_avx512(void);
static void layernorm_forward_avx512(float *out, float *mean, float *rstd, const float *inp,
                                     const float *weight, const float *bias, size_t N, size_t C);
static void layernorm_backward_avx512(float *dinp, float *dweight, float *dbias, const float *dout,
                                      const float *inp, const float *weight, const float *mean,
                                      const float *rstd, size_t N, size_t C);
static void softmax_backward_causal_avx512(float *dpre, const float *datt, const float *att, size_t T);

/* The rounding of the LayerNorm reductions to f (RNE): NULL for fp32 (no
 * rounding), else p filled. */
static const bulk_params *layernorm_rounding(bulk_params *p, fmt_id f)
{
	if (f == FMT_FP32)
		return NULL;
	fmt_bulk_opts o = { .fmt = f, .mode = FMT_RNE };
	bulk_params_init(p, &o);
	return p;
}

/* The portable forward over BT rows, the statistics and output rounded to
 * reduce (FMT_FP32: no rounding). */
static void layernorm_forward_rows(float *out, float *mean, float *rstd, const float *inp,
                                   const float *weight, const float *bias, size_t BT, size_t C, fmt_id reduce)
{
	bulk_params p;
	const bulk_params *q = layernorm_rounding(&p, reduce);
	for (size_t bt = 0; bt < BT; bt++)
		layernorm_core_forward_row(out + bt * C, mean + bt, rstd + bt, inp + bt * C, weight, bias, C, q);
}

void layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
                       const float *weight, const float *bias, size_t B, size_t T, size_t C)
{
	if (have_avx512())
		layernorm_forward_avx512(out, mean, rstd, inp, weight, bias, B * T, C);
	else
		layernorm_forward_rows(out, mean, rstd, inp, weight, bias, B * T, C, FMT_FP32);
}

/* The portable backward over B*T rows, with the two row means (the only
 * reductions) and their terms rounded to reduce (FMT_FP32: no rounding). */
static void layernorm_backward_rows(float *dinp, float *dweight, float *dbias, const float *dout,
                                    const float *inp, const float *weight, const float *mean,
                                    const float *rstd, size_t BT, size_t C, fmt_id reduce);

void layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                        const float *inp, const float *weight, const float *mean,
                        const float *rstd, size_t B, size_t T, size_t C)
{
	if (have_avx512())
		layernorm_backward_avx512(dinp, dweight, dbias, dout, inp, weight, mean, rstd, B * T, C);
	else
		layernorm_backward_rows(dinp, dweight, dbias, dout, inp, weight, mean, rstd, B * T, C, FMT_FP32);
}

/* --- sgemm accounting --- */

/* Time and floating-point operations spent in sgemm, for the benchmark's
 * "share of the step in sgemm" (relaxed atomics: several trainers may run). */
static _Atomic unsigned long long gemm_ns, gemm_flops;

static void timed_sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K,
                        float alpha, const float *A, int lda, const float *Bm, int ldb, float beta, float *Cm,
                        int ldc)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cblas_sgemm(order, ta, tb, M, N, K, alpha, A, lda, Bm, ldb, beta, Cm, ldc);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	unsigned long long ns = (unsigned long long)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
	atomic_fetch_add_explicit(&gemm_ns, ns, memory_order_relaxed);
	atomic_fetch_add_explicit(&gemm_flops, 2ull * (unsigned long long)M * (unsigned long long)N * (unsigned long long)K,
	                          memory_order_relaxed);
}

void layers_gemm_stats(double *seconds, double *flops)
{
	*seconds = (double)atomic_load(&gemm_ns) * 1e-9;
	*flops = (double)atomic_load(&gemm_flops);
}

void layers_gemm_stats_reset(void)
{
	atomic_store(&gemm_ns, 0);
	atomic_store(&gemm_flops, 0);
}

/* --- matmul --- */

void matmul_forward(float *out, const float *inp, const float *weight, const float *bias,
                    size_t B, size_t T, size_t C, size_t OC)
{
	size_t M = B * T;
	float beta = 0.0f;
	if (bias != NULL) {
		for (size_t i = 0; i < M; i++)
			memcpy(out + i * OC, bias, OC * sizeof *bias);
		beta = 1.0f;
	}
	timed_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)M, (int)OC, (int)C,
	            1.0f, inp, (int)C, weight, (int)C, beta, out, (int)OC);
}

void matmul_forward_naive(float *out, const float *inp, const float *weight, const float *bias,
                          size_t B, size_t T, size_t C, size_t OC)
{
	for (size_t i = 0; i < B * T; i++) {
		const float *x = inp + i * C;   // (C)
		for (size_t o = 0; o < OC; o++) {
			const float *w = weight + o * C;   // (C)
			float acc = bias != NULL ? bias[o] : 0.0f;
			for (size_t k = 0; k < C; k++)
				acc += x[k] * w[k];
			out[i * OC + o] = acc;
		}
	}
}

void matmul_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                     const float *inp, const float *weight, size_t B, size_t T, size_t C, size_t OC)
{
	size_t M = B * T;
	if (dinp != NULL) /* (M,C) += dout (M,OC) @ weight (OC,C) */
		timed_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)C, (int)OC,
		            1.0f, dout, (int)OC, weight, (int)C, 1.0f, dinp, (int)C);
	if (dweight != NULL) /* (OC,C) += dout^T (OC,M) @ inp (M,C) */
		timed_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)OC, (int)C, (int)M,
		            1.0f, dout, (int)OC, inp, (int)C, 1.0f, dweight, (int)C);
	if (dbias != NULL) {
		/* row by row, in order (the same sums as a plain loop; saxpy with
		 * alpha 1 rounds each add exactly as + does), but vectorised */
		for (size_t i = 0; i < M; i++)
			cblas_saxpy((int)OC, 1.0f, dout + i * OC, 1, dbias, 1);
	}
}

/* --- softmax of one row --- */

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

T512 static float softmax_row_avx512(float *out, const float *in, size_t n, float *max_out)
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
static bool have_avx512(void)
{
	static int have = -1;
	if (have < 0) {
		__builtin_cpu_init();
		const char *env = getenv("MIXPREC_SIMD");
		bool capped = env && (!strcmp(env, "portable") || !strcmp(env, "avx2"));
		have = !capped && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
	}
	return have;
}
#else
static bool have_avx512(void) { return false; }
static float softmax_row_avx512(float *out, const float *in, size_t n, float *max_out)
{
	(void)out; (void)in; (void)n; (void)max_out;
	return 0;
}
#endif

/* out[0..n) = softmax(in[0..n)), max-subtracted; n >= 1. Returns the sum
 * of exp(in - max) and sets *max_out, so that log-sum-exp = log(sum) + max. */
static float softmax_row(float *out, const float *in, size_t n, float *max_out)
{
	if (have_avx512())
		return softmax_row_avx512(out, in, n, max_out);
	float mx = -INFINITY;
	for (size_t u = 0; u < n; u++)
		mx = in[u] > mx ? in[u] : mx;
	float sum = 0.0f;
	for (size_t u = 0; u < n; u++) {
		out[u] = expf(in[u] - mx);
		sum += out[u];
	}
	float inv = 1.0f / sum;
	for (size_t u = 0; u < n; u++)
		out[u] *= inv;
	*max_out = mx;
	return sum;
}

/* Softmax Jacobian per row of a causal (T,T) block: dpre = att (datt -
 * <att, datt>) on and below the diagonal, 0 above (masked entries have
 * att = 0 and get no gradient). */
static void softmax_backward_causal(float *dpre, const float *datt, const float *att, size_t T)
{
	if (have_avx512()) {
		softmax_backward_causal_avx512(dpre, datt, att, T);
		return;
	}
	for (size_t t = 0; t < T; t++) {
		const float *ar = att + t * T;    // (T)
		const float *dr = datt + t * T;   // (T)
		float *dp = dpre + t * T;         // (T)
		float dot = 0.0f;
		for (size_t u = 0; u <= t; u++)
			dot += ar[u] * dr[u];
		for (size_t u = 0; u <= t; u++)
			dp[u] = ar[u] * (dr[u] - dot);
		for (size_t u = t + 1; u < T; u++)
			dp[u] = 0.0f;
	}
}

/* --- attention --- */

void attention_forward(float *out, float *preatt, float *att, const float *inp,
                       size_t B, size_t T, size_t C, size_t NH)
{
	size_t C3 = 3 * C, hs = C / NH;
	float scale = 1.0f / sqrtf((float)hs);
	for (size_t b = 0; b < B; b++) {
		for (size_t h = 0; h < NH; h++) {
			const float *q = inp + b * T * C3 + h * hs;   // (T,hs), row stride 3C
			const float *k = q + C;                       // (T,hs), row stride 3C
			const float *v = q + 2 * C;                   // (T,hs), row stride 3C
			float *pa = preatt + (b * NH + h) * T * T;    // (T,T)
			float *a = att + (b * NH + h) * T * T;        // (T,T)
			float *o = out + b * T * C + h * hs;          // (T,hs), row stride C
			/* The full T x T product costs twice the causal half but keeps
			 * the work in one GEMM; the upper triangle is cleared below. */
			timed_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)T, (int)T, (int)hs,
			            scale, q, (int)C3, k, (int)C3, 0.0f, pa, (int)T);
			for (size_t t = 0; t < T; t++) {
				float *pr = pa + t * T;   // (T)
				float *ar = a + t * T;    // (T)
				float mx;
				softmax_row(ar, pr, t + 1, &mx);
				for (size_t u = t + 1; u < T; u++) {
					pr[u] = 0.0f;
					ar[u] = 0.0f;
				}
			}
			timed_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)T, (int)hs, (int)T,
			            1.0f, a, (int)T, v, (int)C3, 0.0f, o, (int)C);
		}
	}
}

void attention_backward(float *dinp, float *dpreatt, float *datt, const float *dout,
                        const float *inp, const float *att, size_t B, size_t T, size_t C, size_t NH)
{
	size_t C3 = 3 * C, hs = C / NH;
	float scale = 1.0f / sqrtf((float)hs);
	for (size_t b = 0; b < B; b++) {
		for (size_t h = 0; h < NH; h++) {
			const float *q = inp + b * T * C3 + h * hs;   // (T,hs), row stride 3C
			const float *k = q + C;                       // (T,hs), row stride 3C
			const float *v = q + 2 * C;                   // (T,hs), row stride 3C
			float *dq = dinp + b * T * C3 + h * hs;       // (T,hs), row stride 3C
			float *dk = dq + C;                           // (T,hs), row stride 3C
			float *dv = dq + 2 * C;                       // (T,hs), row stride 3C
			const float *a = att + (b * NH + h) * T * T;  // (T,T)
			const float *d = dout + b * T * C + h * hs;   // (T,hs), row stride C
			/* out = att @ v: datt = dout @ v^T, dv += att^T @ dout. */
			timed_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)T, (int)T, (int)hs,
			            1.0f, d, (int)C, v, (int)C3, 0.0f, datt, (int)T);
			timed_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)T, (int)hs, (int)T,
			            1.0f, a, (int)T, d, (int)C, 1.0f, dv, (int)C3);
			softmax_backward_causal(dpreatt, datt, a, T);
			/* preatt = scale q @ k^T: dq += scale dpre @ k, dk += scale dpre^T @ q. */
			timed_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)T, (int)hs, (int)T,
			            scale, dpreatt, (int)T, k, (int)C3, 1.0f, dq, (int)C3);
			timed_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)T, (int)hs, (int)T,
			            scale, dpreatt, (int)T, q, (int)C3, 1.0f, dk, (int)C3);
		}
	}
}

/* --- pointwise --- */

#define GELU_SCALE 0.7978845608028654f   /* sqrt(2/pi) */
#define GELU_CUBE 0.044715f

/* GELU is elementwise but costs a tanh per element: with libm's scalar tanhf
 * it took 40% of a training step. The AVX-512 path computes 1 + tanh through
 * exp (2^k times a degree-6 polynomial, relative error about 1e-7), close to
 * fp32's own rounding of the result. */
#if defined(__x86_64__)

/* 1 + tanh(u) = 2 / (1 + exp(-2u)): accurate in relative terms in both
 * tails (1 + tanh(u) for very negative u is tiny, not 1 - 1), and exp's
 * overflow and underflow give the right limits 0 and 2. */
T512 static inline __m512 one_plus_tanh16(__m512 u)
{
	__m512 e = exp16(_mm512_mul_ps(u, _mm512_set1_ps(-2.0f)));   /* exp(-2u) */
	return _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

T512 static void gelu_forward_avx512(float *out, const float *inp, size_t N)
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

T512 static void gelu_backward_avx512(float *dinp, const float *inp, const float *dout, size_t N)
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
T512 static void softmax_backward_causal_avx512(float *dpre, const float *datt, const float *att, size_t T)
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

T512 static void layernorm_forward_avx512(float *out, float *mean, float *rstd, const float *inp,
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

T512 static void layernorm_backward_avx512(float *dinp, float *dweight, float *dbias, const float *dout,
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
static void gelu_forward_avx512(float *out, const float *inp, size_t N) { (void)out; (void)inp; (void)N; }
static void softmax_backward_causal_avx512(float *dpre, const float *datt, const float *att, size_t T)
{
	(void)dpre; (void)datt; (void)att; (void)T;
}
static void layernorm_forward_avx512(float *out, float *mean, float *rstd, const float *inp,
                                     const float *weight, const float *bias, size_t N, size_t C)
{
	(void)out; (void)mean; (void)rstd; (void)inp; (void)weight; (void)bias; (void)N; (void)C;
}
static void layernorm_backward_avx512(float *dinp, float *dweight, float *dbias, const float *dout,
                                      const float *inp, const float *weight, const float *mean,
                                      const float *rstd, size_t N, size_t C)
{
	(void)dinp; (void)dweight; (void)dbias; (void)dout; (void)inp; (void)weight; (void)mean; (void)rstd;
	(void)N; (void)C;
}
static void gelu_backward_avx512(float *dinp, const float *inp, const float *dout, size_t N)
{
	(void)dinp; (void)inp; (void)dout; (void)N;
}
#endif

void gelu_forward(float *out, const float *inp, size_t N)
{
	if (have_avx512()) {
		gelu_forward_avx512(out, inp, N);
		return;
	}
	for (size_t i = 0; i < N; i++) {
		float x = inp[i];
		float u = GELU_SCALE * (x + GELU_CUBE * x * x * x);
		out[i] = 0.5f * x * (2.0f / (1.0f + expf(-2.0f * u)));   /* 1 + tanh(u), both tails exact */
	}
}

void gelu_backward(float *dinp, const float *inp, const float *dout, size_t N)
{
	if (have_avx512()) {
		gelu_backward_avx512(dinp, inp, dout, N);
		return;
	}
	for (size_t i = 0; i < N; i++) {
		float x = inp[i];
		float u = GELU_SCALE * (x + GELU_CUBE * x * x * x);
		float opt = 2.0f / (1.0f + expf(-2.0f * u));   /* 1 + tanh(u) */
		float du = GELU_SCALE * (1.0f + 3.0f * GELU_CUBE * x * x);
		float grad = 0.5f * opt + 0.5f * x * opt * (2.0f - opt) * du;
		dinp[i] += grad * dout[i];
	}
}

void residual_forward(float *out, const float *inp1, const float *inp2, size_t N)
{
	for (size_t i = 0; i < N; i++)
		out[i] = inp1[i] + inp2[i];
}

void residual_backward(float *dinp1, float *dinp2, const float *dout, size_t N)
{
	for (size_t i = 0; i < N; i++) {
		dinp1[i] += dout[i];
		dinp2[i] += dout[i];
	}
}

/* --- softmax + cross-entropy --- */

float crossentropy_softmax_forward(float *probs, float *losses, const float *logits,
                                   const int *targets, size_t B, size_t T, size_t V)
{
	double total = 0.0;
	for (size_t bt = 0; bt < B * T; bt++) {
		const float *z = logits + bt * V;   // (V)
		float *p = probs + bt * V;          // (V)
		float mx;
		float sum = softmax_row(p, z, V, &mx);
		/* log-sum-exp form: finite even when the target's probability
		 * underflows to zero. */
		losses[bt] = logf(sum) + mx - z[targets[bt]];
		total += losses[bt];
	}
	return (float)(total / (double)(B * T));
}

void crossentropy_softmax_backward(float *dlogits, const float *probs, const int *targets,
                                   float dloss, size_t B, size_t T, size_t V)
{
	for (size_t bt = 0; bt < B * T; bt++) {
		const float *p = probs + bt * V;   // (V)
		float *dz = dlogits + bt * V;      // (V)
		for (size_t i = 0; i < V; i++)
			dz[i] += p[i] * dloss;
		dz[targets[bt]] -= dloss;
	}
}

/* --- emulated low precision --- */

/* x rounded to f (to nearest, ties to even); fp32 passes through. */
static float q1(float x, fmt_id f)
{
	if (f == FMT_FP32)
		return x;
	fmt_bulk_opts o = { .fmt = f, .mode = FMT_RNE };
	(void)fmt_bulk_quantize(FMT_SIMD_PORTABLE, &o, &x, 1);   /* RNE on a portable path cannot fail */
	return x;
}

/* x[0..n) rounded in place to f. */
static void qn(float *x, size_t n, fmt_id f)
{
	if (f == FMT_FP32)
		return;
	fmt_bulk_opts o = { .fmt = f, .mode = FMT_RNE };
	(void)fmt_bulk_quantize(FMT_SIMD_AUTO, &o, x, n);
}

void layernorm_forward_q(float *out, float *mean, float *rstd, const float *inp,
                         const float *weight, const float *bias, size_t B, size_t T, size_t C,
                         fmt_id reduce)
{
	if (reduce == FMT_FP32)
		layernorm_forward(out, mean, rstd, inp, weight, bias, B, T, C);
	else
		layernorm_forward_rows(out, mean, rstd, inp, weight, bias, B * T, C, reduce);
}

void layernorm_backward_q(float *dinp, float *dweight, float *dbias, const float *dout,
                          const float *inp, const float *weight, const float *mean,
                          const float *rstd, size_t B, size_t T, size_t C, fmt_id reduce)
{
	if (reduce == FMT_FP32)
		layernorm_backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, B, T, C);
	else
		layernorm_backward_rows(dinp, dweight, dbias, dout, inp, weight, mean, rstd, B * T, C, reduce);
}

static void layernorm_backward_rows(float *dinp, float *dweight, float *dbias, const float *dout,
                                    const float *inp, const float *weight, const float *mean,
                                    const float *rstd, size_t BT, size_t C, fmt_id reduce)
{
	bulk_params p;
	const bulk_params *q = layernorm_rounding(&p, reduce);
	for (size_t bt = 0; bt < BT; bt++) {
		const float *d = dout + bt * C;  // (C)
		const float *x = inp + bt * C;   // (C)
		float m = mean[bt], s = rstd[bt];
		/* the per-channel gradients are elementwise, not reductions: fp32 */
		for (size_t c = 0; c < C; c++) {
			dbias[c] += d[c];
			dweight[c] += (x[c] - m) * s * d[c];
		}
		layernorm_core_backward_row(dinp + bt * C, d, x, weight, m, s, C, q);
	}
}

/* softmax_row with the exponentials, their running sum, its reciprocal and
 * the probabilities rounded to f. */
static float softmax_row_q(float *out, const float *in, size_t n, float *max_out, fmt_id f)
{
	if (f == FMT_FP32)
		return softmax_row(out, in, n, max_out);
	float mx = -INFINITY;
	for (size_t u = 0; u < n; u++)
		mx = in[u] > mx ? in[u] : mx;
	float sum = 0.0f;
	for (size_t u = 0; u < n; u++) {
		out[u] = q1(expf(in[u] - mx), f);
		sum = q1(sum + out[u], f);
	}
	float inv = q1(1.0f / sum, f);
	for (size_t u = 0; u < n; u++)
		out[u] = q1(out[u] * inv, f);
	*max_out = mx;
	return sum;
}

/* Copies the (T,hs) block at src (row stride ld) into dst, rounded to f. */
static void gather_rounded(float *dst, const float *src, size_t T, size_t hs, size_t ld, fmt_id f)
{
	for (size_t t = 0; t < T; t++)
		memcpy(dst + t * hs, src + t * ld, hs * sizeof *dst);
	qn(dst, T * hs, f);
}

/* dst (T,hs) with row stride ld += src (T,hs) rounded to f. */
static void scatter_add_rounded(float *dst, float *src, size_t T, size_t hs, size_t ld, fmt_id f)
{
	qn(src, T * hs, f);
	for (size_t t = 0; t < T; t++)
		for (size_t i = 0; i < hs; i++)
			dst[t * ld + i] += src[t * hs + i];
}

size_t attention_scratch_floats(size_t T, size_t C, size_t NH)
{
	size_t hs = C / NH;
	return 5 * T * hs + T * T;
}

void attention_forward_q(float *out, float *preatt, float *att, float *scratch, const float *inp,
                         size_t B, size_t T, size_t C, size_t NH, kernel_fmts f)
{
	if (f.gemm == FMT_FP32 && f.reduce == FMT_FP32) {
		attention_forward(out, preatt, att, inp, B, T, C, NH);
		return;
	}
	size_t C3 = 3 * C, hs = C / NH;
	float scale = 1.0f / sqrtf((float)hs);
	float *qs = scratch, *ks = qs + T * hs, *vs = ks + T * hs, *os = vs + T * hs;   // (T,hs) each
	float *as = os + 2 * T * hs;                                                     // (T,T)
	for (size_t b = 0; b < B; b++) {
		for (size_t h = 0; h < NH; h++) {
			const float *q = inp + b * T * C3 + h * hs;   // (T,hs), row stride 3C
			float *pa = preatt + (b * NH + h) * T * T;    // (T,T)
			float *a = att + (b * NH + h) * T * T;        // (T,T)
			float *o = out + b * T * C + h * hs;          // (T,hs), row stride C
			gather_rounded(qs, q, T, hs, C3, f.gemm);
			gather_rounded(ks, q + C, T, hs, C3, f.gemm);
			gather_rounded(vs, q + 2 * C, T, hs, C3, f.gemm);
			/* the scale is applied to the fp32 sums before the output
			 * is rounded, as cuBLAS applies alpha */
			timed_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)T, (int)T, (int)hs,
			            scale, qs, (int)hs, ks, (int)hs, 0.0f, pa, (int)T);
			qn(pa, T * T, f.gemm);
			for (size_t t = 0; t < T; t++) {
				float *pr = pa + t * T;   // (T)
				float *ar = a + t * T;    // (T)
				float mx;
				for (size_t u = t + 1; u < T; u++)
					pr[u] = 0.0f;
				softmax_row_q(ar, pr, t + 1, &mx, f.reduce);
				for (size_t u = t + 1; u < T; u++)
					ar[u] = 0.0f;
			}
			memcpy(as, a, T * T * sizeof *as);
			qn(as, T * T, f.gemm);
			timed_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)T, (int)hs, (int)T,
			            1.0f, as, (int)T, vs, (int)hs, 0.0f, os, (int)hs);
			qn(os, T * hs, f.gemm);
			for (size_t t = 0; t < T; t++)
				memcpy(o + t * C, os + t * hs, hs * sizeof *o);
		}
	}
}

void attention_backward_q(float *dinp, float *dpreatt, float *datt, float *scratch, const float *dout,
                          const float *inp, const float *att, size_t B, size_t T, size_t C, size_t NH,
                          kernel_fmts f)
{
	if (f.gemm == FMT_FP32 && f.reduce == FMT_FP32) {
		attention_backward(dinp, dpreatt, datt, dout, inp, att, B, T, C, NH);
		return;
	}
	size_t C3 = 3 * C, hs = C / NH;
	float scale = 1.0f / sqrtf((float)hs);
	float *qs = scratch, *ks = qs + T * hs, *vs = ks + T * hs, *ds = vs + T * hs;   // (T,hs) each
	float *ps = ds + T * hs;                                                         // (T,hs) products
	float *as = ps + T * hs;                                                         // (T,T)
	for (size_t b = 0; b < B; b++) {
		for (size_t h = 0; h < NH; h++) {
			const float *q = inp + b * T * C3 + h * hs;   // (T,hs), row stride 3C
			float *dq = dinp + b * T * C3 + h * hs;       // (T,hs), row stride 3C
			float *dk = dq + C;                           // (T,hs), row stride 3C
			float *dv = dq + 2 * C;                       // (T,hs), row stride 3C
			const float *a = att + (b * NH + h) * T * T;  // (T,T)
			gather_rounded(qs, q, T, hs, C3, f.gemm);
			gather_rounded(ks, q + C, T, hs, C3, f.gemm);
			gather_rounded(vs, q + 2 * C, T, hs, C3, f.gemm);
			gather_rounded(ds, dout + b * T * C + h * hs, T, hs, C, f.gemm);
			memcpy(as, a, T * T * sizeof *as);
			qn(as, T * T, f.gemm);
			/* out = att @ v: datt = dout @ v^T, dv += att^T @ dout */
			timed_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)T, (int)T, (int)hs,
			            1.0f, ds, (int)hs, vs, (int)hs, 0.0f, datt, (int)T);
			qn(datt, T * T, f.gemm);
			timed_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)T, (int)hs, (int)T,
			            1.0f, as, (int)T, ds, (int)hs, 0.0f, ps, (int)hs);
			scatter_add_rounded(dv, ps, T, hs, C3, f.gemm);
			/* the softmax Jacobian from the saved (unrounded) softmax,
			 * its row dot product a reduction */
			for (size_t t = 0; t < T; t++) {
				const float *ar = a + t * T;      // (T)
				const float *dr = datt + t * T;   // (T)
				float *dp = dpreatt + t * T;      // (T)
				float dot = 0.0f;
				for (size_t u = 0; u <= t; u++)
					dot = q1(dot + q1(ar[u] * dr[u], f.reduce), f.reduce);
				for (size_t u = 0; u <= t; u++)
					dp[u] = ar[u] * (dr[u] - dot);
				for (size_t u = t + 1; u < T; u++)
					dp[u] = 0.0f;
			}
			qn(dpreatt, T * T, f.gemm);
			/* preatt = scale q @ k^T: dq += scale dpre @ k, dk += scale dpre^T @ q */
			timed_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)T, (int)hs, (int)T,
			            scale, dpreatt, (int)T, ks, (int)hs, 0.0f, ps, (int)hs);
			scatter_add_rounded(dq, ps, T, hs, C3, f.gemm);
			timed_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)T, (int)hs, (int)T,
			            scale, dpreatt, (int)T, qs, (int)hs, 0.0f, ps, (int)hs);
			scatter_add_rounded(dk, ps, T, hs, C3, f.gemm);
		}
	}
}

float crossentropy_softmax_forward_q(float *probs, float *losses, const float *logits,
                                     const int *targets, size_t B, size_t T, size_t V, fmt_id reduce)
{
	if (reduce == FMT_FP32)
		return crossentropy_softmax_forward(probs, losses, logits, targets, B, T, V);
	double total = 0.0;
	for (size_t bt = 0; bt < B * T; bt++) {
		const float *z = logits + bt * V;   // (V)
		float *p = probs + bt * V;          // (V)
		float mx;
		float sum = softmax_row_q(p, z, V, &mx, reduce);
		losses[bt] = q1(q1(logf(sum), reduce) + mx - z[targets[bt]], reduce);
		total += losses[bt];
	}
	return (float)(total / (double)(B * T));
}
