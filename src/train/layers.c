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
#include "train/layers_simd.h"

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

/* The fp32 rows are layers_body.h's (16-lane sums in one defined order, the
 * same bits on every SIMD path); the low-precision rows, which round every
 * term of a sum taken in order, are train/layernorm_core.h's, which the
 * GPU bodies run too. */

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

/* The forward over BT rows with the statistics and output rounded to
 * reduce (not FMT_FP32). */
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
	layers_kernels_of(LAYERS_NPATHS)->layernorm_forward(out, mean, rstd, inp, weight, bias, B * T, C);
}

/* The backward over B*T rows, with the two row means (the only reductions)
 * and their terms rounded to reduce (not FMT_FP32). */
static void layernorm_backward_rows(float *dinp, float *dweight, float *dbias, const float *dout,
                                    const float *inp, const float *weight, const float *mean,
                                    const float *rstd, size_t BT, size_t C, fmt_id reduce);

void layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                        const float *inp, const float *weight, const float *mean,
                        const float *rstd, size_t B, size_t T, size_t C)
{
	layers_kernels_of(LAYERS_NPATHS)->layernorm_backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, B * T,
	                                                     C);
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

/* out[0..n) = softmax(in[0..n)), max-subtracted; n >= 1. Returns the sum
 * of exp(in - max) and sets *max_out, so that log-sum-exp = log(sum) + max. */
static float softmax_row(float *out, const float *in, size_t n, float *max_out)
{
	return layers_kernels_of(LAYERS_NPATHS)->softmax_row(out, in, n, max_out);
}

/* Softmax Jacobian per row of a causal (T,T) block: dpre = att (datt -
 * <att, datt>) on and below the diagonal, 0 above (masked entries have
 * att = 0 and get no gradient). */
static void softmax_backward_causal(float *dpre, const float *datt, const float *att, size_t T)
{
	layers_kernels_of(LAYERS_NPATHS)->softmax_backward_causal(dpre, datt, att, T);
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

void gelu_forward(float *out, const float *inp, size_t N)
{
	layers_kernels_of(LAYERS_NPATHS)->gelu_forward(out, inp, N);
}

void gelu_backward(float *dinp, const float *inp, const float *dout, size_t N)
{
	layers_kernels_of(LAYERS_NPATHS)->gelu_backward(dinp, inp, dout, N);
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

/* dst (T,hs) with row stride ld += src (T,hs) rounded to f; the adds
 * vectorised (each element's one IEEE add, whatever the width). */
__attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic")))
static void scatter_add_rounded(float *dst, float *src, size_t T, size_t hs, size_t ld, fmt_id f)
{
	qn(src, T * hs, f);
	for (size_t t = 0; t < T; t++) {
		float *restrict d = dst + t * ld;
		const float *restrict s = src + t * hs;
		for (size_t i = 0; i < hs; i++)
			d[i] += s[i];
	}
}

size_t attention_scratch_floats(size_t T, size_t C, size_t NH)
{
	size_t hs = C / NH;
	return 5 * T * hs + T * T;
}

void attention_forward_q(float *out, float *preatt, float *att, float *scratch, const float *inp,
                         size_t B, size_t T, size_t C, size_t NH, kernel_fmts f)
{
	if (f.gemm == FMT_FP32 && f.reduce == FMT_FP32 && f.softmax == FMT_FP32) {
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
				qn(ar, t + 1, f.softmax);
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
