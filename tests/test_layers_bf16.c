/* The GPT kernels with their reductions or GEMM operands in emulated bf16
 * (the _q kernels of train/layers.h): LayerNorm's statistics over an offset
 * of 512 with every expectation derived by hand, the error of bf16 sums
 * against fp32 within bounds derived from bf16's rounding error, and
 * attention under bf16 GEMMs against an fp64 reference built from operands
 * rounded here by an independent bit trick. The fp32 kernels against fp64
 * oracles: test_layers.c. */
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

/* x rounded to bf16, to nearest with ties to even, by the classic bit
 * trick (independent of the library's rounding code): add 0x7fff plus the
 * lowest kept bit, then truncate. Finite inputs only. */
static float bf16_rne(float x)
{
	uint32_t u;
	memcpy(&u, &x, sizeof u);
	u += 0x7fffu + ((u >> 16) & 1u);
	u &= 0xffff0000u;
	memcpy(&x, &u, sizeof x);
	return x;
}

static bool is_bf16(float x)
{
	return bf16_rne(x) == x;
}

/* Half the bf16 spacing at magnitude y > 0: 8 significant bits. */
static double bf16_half_ulp(double y)
{
	return ldexp(1.0, ilogb(y) - 8);
}

/* Two rows with an offset of 512, LayerNorm's statistics summed in bf16
 * (8 significant bits), every expectation derived here by hand.
 *
 * Row 1, x_c = 512 + c/8 (c = 0..7), all exact in fp32: fp32 mean
 * 512 + 3.5/8 = 512.4375, variance mean(c^2)/64 - 0.4375^2 = 140/512 -
 * 0.19140625 = 0.08203125. In bf16 the running sum is k*512 after k
 * channels (k = 1..8): the spacing there is 4, 8 or 16, each added c/8 < 1
 * is below half a spacing and rounds away, so the mean is exactly 512 and
 * every small value is lost. The centred values are then c/8 (exact), the
 * running sum of their squares c^2/64 is exact all the way (0, 1, 5, 14,
 * 30, 55, 91, 140 over 64: at most 8 significant bits), so the variance is
 * 140/64/8 = 35/128 = 0.2734375, 3.3 times too large; eps = 1e-5 is below
 * half a spacing of it (2^-10) and vanishes; rstd = 1/sqrt(35/128) =
 * 1.91237 rounds to 245/128 (spacing 2^-7 in [1, 2)).
 *
 * Row 2, x = 512 then seven times 515: fp32 mean 512 + 21/8 = 514.625,
 * which bf16 itself would hold as 516 (spacing 4). The running bf16 sum
 * loses every 3: 512, then 1027 -> 1024, 1539 -> 1536 (spacing 8),
 * 2051 -> 2048, 2563 -> 2560, 3075 -> 3072, 3587 -> 3584 (16),
 * 4099 -> 4096 (32): the mean is 512, not 516; it is the accumulation
 * that loses the small values, not only the mean's final rounding. The
 * centred values 0 and 3, squares 9 summed exactly to 63, variance
 * 63/8 = 7.875 (true 0.984375); eps vanishes (spacing 2^-5); rstd =
 * 1/sqrt(7.875) = 0.356348 rounds to 182/512 (spacing 2^-9). */
START_TEST(test_layernorm_reduce_bf16)
{
	enum { CC = 8 };
	float x[2 * CC], w[CC], b[CC], out[2 * CC], mean[2], rstd[2];
	for (int c = 0; c < CC; c++) {
		x[c] = 512.0f + (float)c / 8.0f;
		x[CC + c] = c == 0 ? 512.0f : 515.0f;
		w[c] = 1.0f;
		b[c] = 0.0f;
	}
	layernorm_forward_q(out, mean, rstd, x, w, b, 1, 2, CC, FMT_FP32);
	ck_assert_msg(fabs(mean[0] - 512.4375) < 1e-4, "fp32 mean %.9g", (double)mean[0]);
	ck_assert_msg(fabs(rstd[0] - 1.0 / sqrt(0.08203125 + 1e-5)) < 1e-4, "fp32 rstd %.9g", (double)rstd[0]);
	ck_assert_msg(fabs(mean[1] - 514.625) < 1e-4, "fp32 mean %.9g", (double)mean[1]);
	ck_assert_msg(fabs(rstd[1] - 1.0 / sqrt(0.984375 + 1e-5)) < 1e-4, "fp32 rstd %.9g", (double)rstd[1]);

	layernorm_forward_q(out, mean, rstd, x, w, b, 1, 2, CC, FMT_BF16);
	ck_assert_msg(mean[0] == 512.0f, "bf16 mean %.9g, want exactly 512", (double)mean[0]);
	ck_assert_msg(rstd[0] == 245.0f / 128.0f, "bf16 rstd %.9g, want 245/128", (double)rstd[0]);
	ck_assert_msg(mean[1] == 512.0f, "bf16 mean %.9g, want exactly 512", (double)mean[1]);
	ck_assert_msg(rstd[1] == 182.0f / 512.0f, "bf16 rstd %.9g, want 182/512", (double)rstd[1]);
	/* out = q(q(x - m) rstd): the normalised row is shifted, not centred */
	double osum = 0.0;
	for (int c = 0; c < CC; c++) {
		ck_assert_msg(out[c] == bf16_rne((float)c / 8.0f * (245.0f / 128.0f)), "out[%d] = %.9g", c,
		              (double)out[c]);
		osum += out[c];
	}
	ck_assert_msg(osum / CC > 0.8, "mean of the normalised row %g should be ~0.84, not 0", osum / CC);
}
END_TEST

/* Without an offset, LayerNorm, softmax and cross-entropy with bf16 sums
 * differ from fp32 by about bf16's rounding error u = 2^-9: each output
 * passes through a handful of rounded operations (a sum of C = 8 or V = 7
 * terms, a reciprocal, a product), so the relative error stays below
 * 16u = 2^-5, yet it is visible (above 2^-12, fp32 itself errs by 2^-24). */
START_TEST(test_reduce_bf16_error)
{
	uint64_t st = 31;
	size_t N = B * T * C, NV = B * T * V;
	float *inp = falloc(N), *weight = falloc(C), *bias = falloc(C), *o32 = falloc(N), *o16 = falloc(N);
	float *mean = falloc(B * T), *rstd = falloc(B * T);
	double *d = dalloc(N > NV ? N : NV);
	fill(inp, d, N, 2.0, &st);
	fill(weight, d, C, 1.0, &st);
	fill(bias, d, C, 1.0, &st);
	layernorm_forward_q(o32, mean, rstd, inp, weight, bias, B, T, C, FMT_FP32);
	layernorm_forward_q(o16, mean, rstd, inp, weight, bias, B, T, C, FMT_BF16);
	double mx = 0.0, worst = 0.0;
	for (size_t i = 0; i < N; i++)
		mx = fmax(mx, fabs(o32[i]));
	for (size_t i = 0; i < N; i++) {
		ck_assert(is_bf16(o16[i]));
		worst = fmax(worst, fabs(o16[i] - o32[i]) / mx);
	}
	ck_assert_msg(worst > 0x1p-12 && worst < 0x1p-5, "layernorm bf16 vs fp32: %g of max|out|", worst);

	int targets[B * T] = { 0, 6, 3, 3, 1, 2, 5, 4, 6, 0 };
	float *logits = falloc(NV), *p32 = falloc(NV), *p16 = falloc(NV), *l32 = falloc(B * T), *l16 = falloc(B * T);
	fill(logits, d, NV, 3.0, &st);
	crossentropy_softmax_forward_q(p32, l32, logits, targets, B, T, V, FMT_FP32);
	crossentropy_softmax_forward_q(p16, l16, logits, targets, B, T, V, FMT_BF16);
	worst = 0.0;
	for (size_t i = 0; i < NV; i++) {
		ck_assert(is_bf16(p16[i]));
		worst = fmax(worst, fabs(p16[i] - p32[i]) / p32[i]);
	}
	ck_assert_msg(worst > 0x1p-12 && worst < 0x1p-5, "softmax bf16 vs fp32: relative %g", worst);
	for (size_t i = 0; i < B * T; i++) {
		ck_assert(is_bf16(l16[i]));
		ck_assert_msg(fabs(l16[i] - l32[i]) < 0x1p-5 * (fabs(l32[i]) + 1.0), "loss %zu: bf16 %g, fp32 %g", i,
		              (double)l16[i], (double)l32[i]);
	}
	free(inp); free(weight); free(bias); free(o32); free(o16); free(mean); free(rstd); free(d);
	free(logits); free(p32); free(p16); free(l32); free(l16);
}
END_TEST

/* Attention under bf16 GEMMs against a reference built here: operands
 * rounded to bf16 (bf16_rne), products summed in fp64, outputs rounded.
 * The kernel sums in fp32; K products in fp32 (plus the scale's multiply)
 * err by at most gamma = (K + 1) 2^-24 sum|terms| (the recursive-summation
 * bound), so each kernel output, a bf16 value, must lie within half a bf16
 * spacing (of |exact| + gamma) plus gamma of the exact fp64 sum. Each stage
 * is checked from the kernel's own previous stage: preatt from the rounded
 * q and k, att as the fp64 softmax of preatt, out from att rounded to bf16
 * and the rounded v. The same bound against unrounded operands fails for
 * some entries: the data can tell whether operands were rounded. */
START_TEST(test_attention_gemm_bf16)
{
	uint64_t st = 41;
	size_t NI = B * T * 3 * C, NO = B * T * C, NA = B * NH * T * T, hs = C / NH;
	float *inp = falloc(NI), *out = falloc(NO), *preatt = falloc(NA), *att = falloc(NA);
	float *scratch = falloc(attention_scratch_floats(T, C, NH));
	double *inp64 = dalloc(NI);
	fill(inp, inp64, NI, 1.5, &st);
	kernel_fmts f = { .gemm = FMT_BF16, .reduce = FMT_FP32 };
	attention_forward_q(out, preatt, att, scratch, inp, B, T, C, NH, f);
	double scale = (double)(1.0f / sqrtf((float)hs));
	size_t discriminating = 0;
	for (size_t b = 0; b < B; b++)
		for (size_t h = 0; h < NH; h++)
			for (size_t t = 0; t < T; t++) {
				const float *q = inp + (b * T + t) * 3 * C + h * hs;
				const float *pr = preatt + ((b * NH + h) * T + t) * T;
				const float *ar = att + ((b * NH + h) * T + t) * T;
				double mx = -INFINITY, sum = 0.0;
				for (size_t u = 0; u <= t; u++) {
					const float *k = inp + (b * T + u) * 3 * C + C + h * hs;
					double ex = 0.0, ab = 0.0, ex_unr = 0.0;
					for (size_t i = 0; i < hs; i++) {
						double term = (double)bf16_rne(q[i]) * bf16_rne(k[i]);
						ex += term;
						ab += fabs(term);
						ex_unr += (double)q[i] * k[i];
					}
					ex *= scale;
					ex_unr *= scale;
					double gamma = (double)(hs + 1) * 0x1p-24 * ab * scale;
					double tol = bf16_half_ulp(fabs(ex) + gamma) + gamma;
					ck_assert_msg(is_bf16(pr[u]), "preatt %g is not a bf16 value", (double)pr[u]);
					ck_assert_msg(fabs(pr[u] - ex) <= tol, "preatt b%zu h%zu t%zu u%zu: %.9g, exact %.9g",
					              b, h, t, u, (double)pr[u], ex);
					discriminating += fabs(pr[u] - ex_unr) > tol;
					mx = fmax(mx, (double)pr[u]);
				}
				for (size_t u = 0; u <= t; u++)
					sum += exp(pr[u] - mx);
				for (size_t u = 0; u <= t; u++) {
					double a = exp(pr[u] - mx) / sum;
					ck_assert_msg(fabs(ar[u] - a) <= 1e-6, "att %.9g, want %.9g", (double)ar[u], a);
				}
				for (size_t i = 0; i < hs; i++) {
					double ex = 0.0, ab = 0.0, ex_unr = 0.0;
					for (size_t u = 0; u <= t; u++) {
						float v = inp[(b * T + u) * 3 * C + 2 * C + h * hs + i];
						double term = (double)bf16_rne(ar[u]) * bf16_rne(v);
						ex += term;
						ab += fabs(term);
						ex_unr += (double)ar[u] * v;
					}
					double gamma = (double)(T + 1) * 0x1p-24 * ab;
					double tol = bf16_half_ulp(fabs(ex) + gamma) + gamma;
					float o = out[(b * T + t) * C + h * hs + i];
					ck_assert_msg(is_bf16(o), "out %g is not a bf16 value", (double)o);
					ck_assert_msg(fabs(o - ex) <= tol, "out b%zu h%zu t%zu i%zu: %.9g, exact %.9g", b, h, t, i,
					              (double)o, ex);
					discriminating += fabs(o - ex_unr) > tol;
				}
			}
	ck_assert_msg(discriminating > 0, "no entry tells rounded from unrounded operands");

	/* The backward products under bf16 stay within a few bf16 roundings of
	 * fp32's gradient: relative to its largest entry below 2^-4 (each
	 * product's operands and outputs err by 2^-9, through two products),
	 * and the rounding shows (above 2^-12). */
	float *w = falloc(NO), *d32 = galloc(NI), *d16 = galloc(NI), *dpre = falloc(T * T), *datt = falloc(T * T);
	fill(w, inp64, NO, 1.0, &st);
	float *att32 = falloc(NA), *pre32 = falloc(NA);
	attention_forward(out, pre32, att32, inp, B, T, C, NH);
	attention_backward(d32, dpre, datt, w, inp, att32, B, T, C, NH);
	attention_backward_q(d16, dpre, datt, scratch, w, inp, att, B, T, C, NH, f);
	double mx = 0.0, worst = 0.0;
	for (size_t i = 0; i < NI; i++)
		mx = fmax(mx, fabs(d32[i] - GRAD0));
	for (size_t i = 0; i < NI; i++)
		worst = fmax(worst, fabs(d16[i] - d32[i]) / mx);
	ck_assert_msg(worst > 0x1p-12 && worst < 0x1p-4, "attention dinp bf16 vs fp32: %g of max", worst);

	free(inp); free(out); free(preatt); free(att); free(scratch); free(inp64);
	free(w); free(d32); free(d16); free(dpre); free(datt); free(att32); free(pre32);
}
END_TEST

static Suite *layers_bf16_suite(void)
{
	Suite *s = suite_create("layers_bf16");
	TCase *tc = tcase_create("kernels");
	tcase_add_test(tc, test_layernorm_reduce_bf16);
	tcase_add_test(tc, test_reduce_bf16_error);
	tcase_add_test(tc, test_attention_gemm_bf16);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	(void)argc;
	testutil_fast_blas(argv);
	return testutil_run(layers_bf16_suite());
}
