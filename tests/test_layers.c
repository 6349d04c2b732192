/* The GPT kernels against oracles written here in fp64: every forward
 * against an fp64 implementation of the same layer, every backward against
 * central finite differences of that fp64 implementation, and the BLAS
 * matmul against the naive triple loop. (The kernels with bf16 reductions
 * or GEMM operands: test_layers_bf16.c.)
 *
 * Each backward is checked on the scalar objective J = sum(w * out) with
 * random weights w, so dout = w. Finite differences use h = 1e-6 on O(1)
 * inputs: the truncation error (h^2 f'''/6, ~1e-13) and the cancellation
 * error (eps64 |J| / h, ~1e-9) are both far below the fp32 tolerances, so
 * the fp64 FD gradient is the exact gradient to within the test's needs.
 *
 * Tolerances compare fp32 results with fp64 references as
 *   |got - ref| <= ATOL * max|ref| + RTOL * |ref|.
 * Every reduction here is at most 40 terms of O(1) values; fp32 rounding
 * (u = 2^-24 = 6e-8 per operation) then errs by roughly sqrt(K) u times the
 * terms' magnitudes, ~1e-6 of the largest value; the worst error observed
 * is 1.5% of the tolerance (3e-7 of max|ref|). ATOL = 2e-5 and RTOL = 1e-5
 * keep a wide margin for other BLAS kernels and compilers, and are still four
 * orders of magnitude below the O(1) relative error of a wrong formula (a
 * missing term, a transposed index, a factor 2). Backward kernels accumulate
 * (+=), so every gradient buffer starts at GRAD0 and the check subtracts it. */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers_fixture.h"
#include "testutil.h"
#include "train/layers.h"
#include "util/rng.h"

#define ATOL 2e-5
#define RTOL 1e-5
#define FD_H 1e-6

/* --- helpers --- */

/* Asserts got ~ ref (see the file comment); offset is subtracted from got
 * first (GRAD0 for accumulated gradients, else 0). */
static void check_close(const float *got, const double *ref, size_t n, float offset, const char *what)
{
	double mx = 0.0;
	for (size_t i = 0; i < n; i++)
		mx = fmax(mx, fabs(ref[i]));
	ck_assert_msg(mx > 0.0 || n == 0, "%s: reference is all zero, the check would be vacuous", what);
	double worst = 0.0;
	size_t wi = 0;
	for (size_t i = 0; i < n; i++) {
		double g = (double)got[i] - (double)offset;
		ck_assert_msg(isfinite(g), "%s[%zu] = %g is not finite", what, i, g);
		double excess = fabs(g - ref[i]) / (ATOL * mx + RTOL * fabs(ref[i]));
		if (excess > worst) {
			worst = excess;
			wi = i;
		}
	}
	ck_assert_msg(worst <= 1.0, "%s[%zu]: got %.9g, want %.9g (error %.3g x tolerance)", what, wi,
	              (double)got[wi] - offset, ref[wi], worst);
}

typedef double (*objective_fn)(void *ctx);

/* Central differences of f with respect to each x[i] (x is part of ctx). */
static void fd_grad(double *grad, double *x, size_t n, objective_fn f, void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		double save = x[i];
		x[i] = save + FD_H;
		double fp = f(ctx);
		x[i] = save - FD_H;
		double fm = f(ctx);
		x[i] = save;
		grad[i] = (fp - fm) / (2.0 * FD_H);
	}
}

static double dot64(const double *a, const double *b, size_t n)
{
	double s = 0.0;
	for (size_t i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

/* --- encoder --- */

static void encoder_ref(double *out, const int *inp, const double *wte, const double *wpe)
{
	for (size_t bt = 0; bt < B * T; bt++)
		for (size_t c = 0; c < C; c++)
			out[bt * C + c] = wte[inp[bt] * C + c] + wpe[(bt % T) * C + c];
}

typedef struct {
	const int *inp;
	double *wte, *wpe, *w, *out;
} enc_ctx;

static double enc_obj(void *p)
{
	enc_ctx *x = p;
	encoder_ref(x->out, x->inp, x->wte, x->wpe);
	return dot64(x->w, x->out, B * T * C);
}

START_TEST(test_encoder)
{
	uint64_t st = 1;
	/* Token 3 appears three times: its gradient row must sum them. */
	int inp[B * T] = { 3, 0, 6, 3, 1, 2, 3, 5, 4, 0 };
	float *wte = falloc(V * C), *wpe = falloc(MAXT * C), *w = falloc(B * T * C);
	float *out = falloc(B * T * C), *dwte = galloc(V * C), *dwpe = galloc(MAXT * C);
	double *wte64 = dalloc(V * C), *wpe64 = dalloc(MAXT * C), *w64 = dalloc(B * T * C);
	double *out64 = dalloc(B * T * C), *g64 = dalloc(V * C);
	fill(wte, wte64, V * C, 1.0, &st);
	fill(wpe, wpe64, MAXT * C, 1.0, &st);
	fill(w, w64, B * T * C, 1.0, &st);

	encoder_forward(out, inp, wte, wpe, B, T, C);
	encoder_ref(out64, inp, wte64, wpe64);
	check_close(out, out64, B * T * C, 0.0f, "encoder out");

	encoder_backward(dwte, dwpe, w, inp, B, T, C);
	enc_ctx ctx = { .inp = inp, .wte = wte64, .wpe = wpe64, .w = w64, .out = out64 };
	fd_grad(g64, wte64, V * C, enc_obj, &ctx);
	check_close(dwte, g64, V * C, GRAD0, "encoder dwte");
	/* wpe rows past T are unused and must keep their gradient. */
	fd_grad(g64, wpe64, MAXT * C, enc_obj, &ctx);
	check_close(dwpe, g64, MAXT * C, GRAD0, "encoder dwpe");

	free(wte); free(wpe); free(w); free(out); free(dwte); free(dwpe);
	free(wte64); free(wpe64); free(w64); free(out64); free(g64);
}
END_TEST

/* --- layernorm --- */

static void layernorm_ref(double *out, double *mean, double *rstd, const double *inp,
                          const double *weight, const double *bias, size_t n, size_t c_)
{
	for (size_t i = 0; i < n; i++) {
		const double *x = inp + i * c_;
		double m = 0.0, v = 0.0;
		for (size_t c = 0; c < c_; c++)
			m += x[c];
		m /= (double)c_;
		for (size_t c = 0; c < c_; c++)
			v += (x[c] - m) * (x[c] - m);
		v /= (double)c_;
		double s = 1.0 / sqrt(v + 1e-5);
		for (size_t c = 0; c < c_; c++)
			out[i * c_ + c] = (x[c] - m) * s * weight[c] + bias[c];
		if (mean != NULL) {
			mean[i] = m;
			rstd[i] = s;
		}
	}
}

typedef struct {
	double *inp, *weight, *bias, *w, *out;
} ln_ctx;

static double ln_obj(void *p)
{
	ln_ctx *x = p;
	layernorm_ref(x->out, NULL, NULL, x->inp, x->weight, x->bias, B * T, C);
	return dot64(x->w, x->out, B * T * C);
}

START_TEST(test_layernorm)
{
	uint64_t st = 2;
	size_t N = B * T * C;
	float *inp = falloc(N), *weight = falloc(C), *bias = falloc(C), *w = falloc(N);
	float *out = falloc(N), *mean = falloc(B * T), *rstd = falloc(B * T);
	float *dinp = galloc(N), *dweight = galloc(C), *dbias = galloc(C);
	double *inp64 = dalloc(N), *weight64 = dalloc(C), *bias64 = dalloc(C), *w64 = dalloc(N);
	double *out64 = dalloc(N), *mean64 = dalloc(B * T), *rstd64 = dalloc(B * T), *g64 = dalloc(N);
	fill(inp, inp64, N, 2.0, &st);
	fill(weight, weight64, C, 1.0, &st);
	fill(bias, bias64, C, 1.0, &st);
	fill(w, w64, N, 1.0, &st);

	layernorm_forward(out, mean, rstd, inp, weight, bias, B, T, C);
	layernorm_ref(out64, mean64, rstd64, inp64, weight64, bias64, B * T, C);
	check_close(out, out64, N, 0.0f, "layernorm out");
	check_close(mean, mean64, B * T, 0.0f, "layernorm mean");
	check_close(rstd, rstd64, B * T, 0.0f, "layernorm rstd");

	layernorm_backward(dinp, dweight, dbias, w, inp, weight, mean, rstd, B, T, C);
	ln_ctx ctx = { .inp = inp64, .weight = weight64, .bias = bias64, .w = w64, .out = out64 };
	fd_grad(g64, inp64, N, ln_obj, &ctx);
	check_close(dinp, g64, N, GRAD0, "layernorm dinp");
	fd_grad(g64, weight64, C, ln_obj, &ctx);
	check_close(dweight, g64, C, GRAD0, "layernorm dweight");
	fd_grad(g64, bias64, C, ln_obj, &ctx);
	check_close(dbias, g64, C, GRAD0, "layernorm dbias");

	free(inp); free(weight); free(bias); free(w); free(out); free(mean); free(rstd);
	free(dinp); free(dweight); free(dbias);
	free(inp64); free(weight64); free(bias64); free(w64); free(out64); free(mean64);
	free(rstd64); free(g64);
}
END_TEST

/* A stream offset of 600 (the drift lesson) must not cost the variance its
 * precision: the centred two-pass form keeps the normalised output within
 * fp32 rounding of the input's own representation error. */
START_TEST(test_layernorm_offset)
{
	uint64_t st = 22;
	size_t N = B * T * C;
	float *inp = falloc(N), *weight = falloc(C), *bias = falloc(C);
	float *out = falloc(N), *mean = falloc(B * T), *rstd = falloc(B * T);
	double *inp64 = dalloc(N), *weight64 = dalloc(C), *bias64 = dalloc(C), *out64 = dalloc(N);
	fill(inp, inp64, N, 0.05, &st);
	fill(weight, weight64, C, 1.0, &st);
	fill(bias, bias64, C, 1.0, &st);
	for (size_t i = 0; i < N; i++) {
		inp[i] += 600.0f;
		inp64[i] = inp[i];   /* the reference sees the same rounded inputs */
	}
	layernorm_forward(out, mean, rstd, inp, weight, bias, B, T, C);
	layernorm_ref(out64, NULL, NULL, inp64, weight64, bias64, B * T, C);
	/* The mean of 8 values near 600 errs by up to ~8 ulp(600) = 5e-4 in fp32,
	 * a shift common to all channels of the token that is ~1% of the 0.05
	 * spread; that bounds the error at ~2e-2 of the output's scale. */
	for (size_t i = 0; i < N; i++)
		ck_assert_msg(fabs(out[i] - out64[i]) < 2e-2, "out[%zu] = %g, want %g", i, (double)out[i], out64[i]);

	free(inp); free(weight); free(bias); free(out); free(mean); free(rstd);
	free(inp64); free(weight64); free(bias64); free(out64);
}
END_TEST

/* --- matmul --- */

static void matmul_ref(double *out, const double *inp, const double *weight, const double *bias,
                       size_t M, size_t K, size_t N)
{
	for (size_t i = 0; i < M; i++)
		for (size_t o = 0; o < N; o++) {
			double acc = bias != NULL ? bias[o] : 0.0;
			for (size_t k = 0; k < K; k++)
				acc += inp[i * K + k] * weight[o * K + k];
			out[i * N + o] = acc;
		}
}

/* BLAS against the naive loop on a shape big enough for OpenBLAS's blocked
 * kernels. Both sum the same K products in fp32 in different orders, so
 * each differs from the exact value by at most K u sum|terms| (the standard
 * recursive-summation bound, u = 2^-24, ignoring O(u^2)); the two may differ
 * by twice that. */
START_TEST(test_matmul_blas_vs_naive)
{
	enum { M = 37, K = 129, N = 67 };
	uint64_t st = 3;
	float *inp = falloc(M * K), *weight = falloc(N * K), *bias = falloc(N);
	float *o1 = falloc(M * N), *o2 = falloc(M * N);
	double *inp64 = dalloc(M * K), *weight64 = dalloc(N * K), *bias64 = dalloc(N);
	fill(inp, inp64, M * K, 1.0, &st);
	fill(weight, weight64, N * K, 1.0, &st);
	fill(bias, bias64, N, 1.0, &st);
	for (int with_bias = 0; with_bias <= 1; with_bias++) {
		const float *bp = with_bias ? bias : NULL;
		matmul_forward(o1, inp, weight, bp, 1, M, K, N);
		matmul_forward_naive(o2, inp, weight, bp, 1, M, K, N);
		for (size_t i = 0; i < M; i++)
			for (size_t o = 0; o < N; o++) {
				double mag = with_bias ? fabs(bias64[o]) : 0.0;
				for (size_t k = 0; k < K; k++)
					mag += fabs(inp64[i * K + k] * weight64[o * K + k]);
				double bound = 2.0 * (K + 1) * 0x1p-24 * mag;
				double d = fabs((double)o1[i * N + o] - (double)o2[i * N + o]);
				ck_assert_msg(d <= bound, "bias=%d out[%zu,%zu]: blas %.9g naive %.9g, bound %g",
				              with_bias, i, o, (double)o1[i * N + o], (double)o2[i * N + o], bound);
			}
	}
	free(inp); free(weight); free(bias); free(o1); free(o2);
	free(inp64); free(weight64); free(bias64);
}
END_TEST

typedef struct {
	double *inp, *weight, *bias, *w, *out;
} mm_ctx;

static double mm_obj(void *p)
{
	mm_ctx *x = p;
	matmul_ref(x->out, x->inp, x->weight, x->bias, B * T, C, OC);
	return dot64(x->w, x->out, B * T * OC);
}

START_TEST(test_matmul)
{
	uint64_t st = 4;
	float *inp = falloc(B * T * C), *weight = falloc(OC * C), *bias = falloc(OC);
	float *w = falloc(B * T * OC), *out = falloc(B * T * OC), *out_naive = falloc(B * T * OC);
	float *dinp = galloc(B * T * C), *dweight = galloc(OC * C), *dbias = galloc(OC);
	double *inp64 = dalloc(B * T * C), *weight64 = dalloc(OC * C), *bias64 = dalloc(OC);
	double *w64 = dalloc(B * T * OC), *out64 = dalloc(B * T * OC), *g64 = dalloc(B * T * C);
	fill(inp, inp64, B * T * C, 1.0, &st);
	fill(weight, weight64, OC * C, 1.0, &st);
	fill(bias, bias64, OC, 1.0, &st);
	fill(w, w64, B * T * OC, 1.0, &st);

	matmul_forward(out, inp, weight, bias, B, T, C, OC);
	matmul_ref(out64, inp64, weight64, bias64, B * T, C, OC);
	check_close(out, out64, B * T * OC, 0.0f, "matmul out");
	matmul_forward_naive(out_naive, inp, weight, bias, B, T, C, OC);
	check_close(out_naive, out64, B * T * OC, 0.0f, "matmul_naive out");
	matmul_forward(out, inp, weight, NULL, B, T, C, OC);
	matmul_ref(out64, inp64, weight64, NULL, B * T, C, OC);
	check_close(out, out64, B * T * OC, 0.0f, "matmul out (no bias)");

	matmul_backward(dinp, dweight, dbias, w, inp, weight, B, T, C, OC);
	mm_ctx ctx = { .inp = inp64, .weight = weight64, .bias = bias64, .w = w64, .out = out64 };
	fd_grad(g64, inp64, B * T * C, mm_obj, &ctx);
	check_close(dinp, g64, B * T * C, GRAD0, "matmul dinp");
	fd_grad(g64, weight64, OC * C, mm_obj, &ctx);
	check_close(dweight, g64, OC * C, GRAD0, "matmul dweight");
	fd_grad(g64, bias64, OC, mm_obj, &ctx);
	check_close(dbias, g64, OC, GRAD0, "matmul dbias");

	/* NULL skips a gradient and leaves the others exact. */
	float *dw2 = galloc(OC * C);
	matmul_backward(NULL, dw2, NULL, w, inp, weight, B, T, C, OC);
	ck_assert_mem_eq(dw2, dweight, OC * C * sizeof(float));
	free(dw2);

	free(inp); free(weight); free(bias); free(w); free(out); free(out_naive);
	free(dinp); free(dweight); free(dbias);
	free(inp64); free(weight64); free(bias64); free(w64); free(out64); free(g64);
}
END_TEST

/* --- attention --- */

static void attention_ref(double *out, double *preatt, double *att, const double *inp)
{
	size_t hs = C / NH;
	double scale = 1.0 / sqrt((double)hs);
	for (size_t b = 0; b < B; b++)
		for (size_t h = 0; h < NH; h++)
			for (size_t t = 0; t < T; t++) {
				const double *q = inp + (b * T + t) * 3 * C + h * hs;
				double pre[T], a[T], mx = -INFINITY, sum = 0.0;
				for (size_t u = 0; u <= t; u++) {
					const double *k = inp + (b * T + u) * 3 * C + C + h * hs;
					pre[u] = 0.0;
					for (size_t i = 0; i < hs; i++)
						pre[u] += q[i] * k[i];
					pre[u] *= scale;
					mx = fmax(mx, pre[u]);
				}
				for (size_t u = 0; u <= t; u++) {
					a[u] = exp(pre[u] - mx);
					sum += a[u];
				}
				for (size_t u = 0; u <= t; u++)
					a[u] /= sum;
				for (size_t u = t + 1; u < T; u++)
					pre[u] = a[u] = 0.0;
				if (preatt != NULL)
					for (size_t u = 0; u < T; u++) {
						preatt[((b * NH + h) * T + t) * T + u] = pre[u];
						att[((b * NH + h) * T + t) * T + u] = a[u];
					}
				double *o = out + (b * T + t) * C + h * hs;
				for (size_t i = 0; i < hs; i++) {
					o[i] = 0.0;
					for (size_t u = 0; u <= t; u++)
						o[i] += a[u] * inp[(b * T + u) * 3 * C + 2 * C + h * hs + i];
				}
			}
}

typedef struct {
	double *inp, *w, *out;
} att_ctx;

static double att_obj(void *p)
{
	att_ctx *x = p;
	attention_ref(x->out, NULL, NULL, x->inp);
	return dot64(x->w, x->out, B * T * C);
}

START_TEST(test_attention)
{
	uint64_t st = 5;
	size_t NI = B * T * 3 * C, NO = B * T * C, NA = B * NH * T * T;
	float *inp = falloc(NI), *w = falloc(NO), *out = falloc(NO);
	float *preatt = falloc(NA), *att = falloc(NA), *dinp = galloc(NI);
	float *dpreatt = falloc(T * T), *datt = falloc(T * T);
	double *inp64 = dalloc(NI), *w64 = dalloc(NO), *out64 = dalloc(NO);
	double *preatt64 = dalloc(NA), *att64 = dalloc(NA), *g64 = dalloc(NI);
	/* Scale 1.5 so the softmax is far from uniform. */
	fill(inp, inp64, NI, 1.5, &st);
	fill(w, w64, NO, 1.0, &st);

	attention_forward(out, preatt, att, inp, B, T, C, NH);
	attention_ref(out64, preatt64, att64, inp64);
	check_close(out, out64, NO, 0.0f, "attention out");
	check_close(preatt, preatt64, NA, 0.0f, "attention preatt");
	check_close(att, att64, NA, 0.0f, "attention att");
	for (size_t bh = 0; bh < B * NH; bh++)
		for (size_t t = 0; t < T; t++)
			for (size_t u = t + 1; u < T; u++)
				ck_assert(att[(bh * T + t) * T + u] == 0.0f);

	attention_backward(dinp, dpreatt, datt, w, inp, att, B, T, C, NH);
	att_ctx ctx = { .inp = inp64, .w = w64, .out = out64 };
	fd_grad(g64, inp64, NI, att_obj, &ctx);
	check_close(dinp, g64, NI, GRAD0, "attention dinp");

	free(inp); free(w); free(out); free(preatt); free(att); free(dinp); free(dpreatt); free(datt);
	free(inp64); free(w64); free(out64); free(preatt64); free(att64); free(g64);
}
END_TEST

/* --- GELU and residual --- */

static double gelu_ref(double x)
{
	return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

START_TEST(test_gelu)
{
	uint64_t st = 6;
	enum { N = 97 };
	float *inp = falloc(N), *out = falloc(N), *w = falloc(N), *dinp = galloc(N);
	double *inp64 = dalloc(N), *w64 = dalloc(N), *out64 = dalloc(N), *g64 = dalloc(N);
	/* [-4, 4) covers both tails and the curved middle. */
	fill(inp, inp64, N, 4.0, &st);
	fill(w, w64, N, 1.0, &st);
	gelu_forward(out, inp, N);
	for (size_t i = 0; i < N; i++) {
		out64[i] = gelu_ref(inp64[i]);
		/* GELU is pointwise: the FD of w_i gelu(x_i) is the whole gradient. */
		g64[i] = w64[i] * (gelu_ref(inp64[i] + FD_H) - gelu_ref(inp64[i] - FD_H)) / (2.0 * FD_H);
	}
	check_close(out, out64, N, 0.0f, "gelu out");
	gelu_backward(dinp, inp, w, N);
	check_close(dinp, g64, N, GRAD0, "gelu dinp");
	free(inp); free(out); free(w); free(dinp);
	free(inp64); free(w64); free(out64); free(g64);
}
END_TEST

/* GELU value and slope at every magnitude, each to a relative tolerance of
 * its own (not relative to the largest value): far in the negative tail
 * GELU is tiny but not zero, and the vectorised tanh must keep it so. */
START_TEST(test_gelu_tails)
{
	enum { N = 61 };
	float x[N], y[N], d[N], one[N];
	for (int i = 0; i < N; i++) {
		x[i] = -12.0f + 0.4f * (float)i;   /* -12 .. 12 */
		d[i] = 0.0f;
		one[i] = 1.0f;
	}
	gelu_forward(y, x, N);
	gelu_backward(d, x, one, N);
	for (int i = 0; i < N; i++) {
		double xd = x[i], c = sqrt(2.0 / M_PI), u = c * (xd + 0.044715 * xd * xd * xd);
		/* 1 + tanh(u) = 2 / (1 + exp(-2u)), exact in both tails in fp64 */
		double opt = 2.0 / (1.0 + exp(-2.0 * u));
		double want = 0.5 * xd * opt;
		double du = c * (1.0 + 3.0 * 0.044715 * xd * xd);
		double dwant = 0.5 * opt + 0.5 * xd * opt * (2.0 - opt) * du;
		/* below ~1e-38 fp32 runs out of range: absolute 1e-37 there */
		ck_assert_msg(fabs(y[i] - want) <= 1e-5 * fabs(want) + 1e-37, "gelu(%g) = %g, want %g", xd, y[i], want);
		ck_assert_msg(fabs(d[i] - dwant) <= 1e-5 * fabs(dwant) + 1e-37, "gelu'(%g) = %g, want %g", xd, d[i],
		              dwant);
	}
}
END_TEST

START_TEST(test_residual)
{
	/* Sums of small dyadic values are exact in fp32: compare for equality. */
	float a[4] = { 1.0f, -2.5f, 0.125f, 3.0f }, b[4] = { 0.5f, 0.25f, -1.0f, 8.0f };
	float out[4], want[4] = { 1.5f, -2.25f, -0.875f, 11.0f };
	float d1[4] = { 1, 1, 1, 1 }, d2[4] = { 2, 2, 2, 2 }, dout[4] = { 0.5f, -1, 4, 0 };
	residual_forward(out, a, b, 4);
	ck_assert_mem_eq(out, want, sizeof want);
	residual_forward(a, a, b, 4);   /* aliasing is allowed */
	ck_assert_mem_eq(a, want, sizeof want);
	residual_backward(d1, d2, dout, 4);
	for (size_t i = 0; i < 4; i++) {
		ck_assert(d1[i] == 1.0f + dout[i]);
		ck_assert(d2[i] == 2.0f + dout[i]);
	}
}
END_TEST

/* --- softmax + cross-entropy --- */

static double crossentropy_ref(double *probs, const double *logits, const int *targets)
{
	double total = 0.0;
	for (size_t bt = 0; bt < B * T; bt++) {
		const double *z = logits + bt * V;
		double mx = -INFINITY, sum = 0.0;
		for (size_t i = 0; i < V; i++)
			mx = fmax(mx, z[i]);
		for (size_t i = 0; i < V; i++)
			sum += exp(z[i] - mx);
		if (probs != NULL)
			for (size_t i = 0; i < V; i++)
				probs[bt * V + i] = exp(z[i] - mx) / sum;
		total += log(sum) + mx - z[targets[bt]];
	}
	return total / (double)(B * T);
}

typedef struct {
	double *logits;
	const int *targets;
} ce_ctx;

static double ce_obj(void *p)
{
	ce_ctx *x = p;
	return crossentropy_ref(NULL, x->logits, x->targets);
}

START_TEST(test_crossentropy)
{
	uint64_t st = 7;
	size_t N = B * T * V;
	int targets[B * T] = { 0, 6, 3, 3, 1, 2, 5, 4, 6, 0 };
	float *logits = falloc(N), *probs = falloc(N), *losses = falloc(B * T), *dlogits = galloc(N);
	double *logits64 = dalloc(N), *probs64 = dalloc(N), *g64 = dalloc(N);
	fill(logits, logits64, N, 3.0, &st);

	float loss = crossentropy_softmax_forward(probs, losses, logits, targets, B, T, V);
	double loss64 = crossentropy_ref(probs64, logits64, targets);
	check_close(&loss, &loss64, 1, 0.0f, "cross-entropy mean loss");
	check_close(probs, probs64, N, 0.0f, "softmax probs");
	double sum = 0.0;
	for (size_t i = 0; i < B * T; i++)
		sum += losses[i];
	ck_assert_double_eq_tol(sum / (B * T), loss, 1e-6);

	crossentropy_softmax_backward(dlogits, probs, targets, 1.0f / (B * T), B, T, V);
	ce_ctx ctx = { .logits = logits64, .targets = targets };
	fd_grad(g64, logits64, N, ce_obj, &ctx);
	check_close(dlogits, g64, N, GRAD0, "cross-entropy dlogits");

	/* A target whose probability underflows fp32 still has a finite loss:
	 * logits (0, ..., -200 at the target) give 200 + log(V-1 + e^-200). */
	for (size_t i = 0; i < N; i++)
		logits[i] = 0.0f;
	for (size_t bt = 0; bt < B * T; bt++)
		logits[bt * V + (size_t)targets[bt]] = -200.0f;
	loss = crossentropy_softmax_forward(probs, losses, logits, targets, B, T, V);
	ck_assert_double_eq_tol(loss, 200.0 + log((double)V - 1.0), 1e-4);

	free(logits); free(probs); free(losses); free(dlogits);
	free(logits64); free(probs64); free(g64);
}
END_TEST

static Suite *layers_suite(void)
{
	Suite *s = suite_create("layers");
	TCase *tc = tcase_create("kernels");
	tcase_add_test(tc, test_encoder);
	tcase_add_test(tc, test_layernorm);
	tcase_add_test(tc, test_layernorm_offset);
	tcase_add_test(tc, test_matmul_blas_vs_naive);
	tcase_add_test(tc, test_matmul);
	tcase_add_test(tc, test_attention);
	tcase_add_test(tc, test_gelu);
	tcase_add_test(tc, test_gelu_tails);
	tcase_add_test(tc, test_residual);
	tcase_add_test(tc, test_crossentropy);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	(void)argc;
	testutil_fast_blas(argv);
	return testutil_run(layers_suite());
}
