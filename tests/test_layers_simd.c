/* The fp32 row kernels give the same bits on every SIMD path the CPU runs
 * (portable, AVX2, AVX-512), and those bits are the order of operations
 * train/layers_body.h defines. The oracle here restates that order in plain
 * scalar C, written independently of the vector body: 16 partial sums in
 * an array, the tree by index arithmetic, exp with libm's rintf and ldexpf
 * in place of the body's magic-number rounding and exponent bits. Any path
 * whose order changes (a lane count, the tree, a fused multiply-add, the
 * polynomial) fails here; exp's accuracy is checked against binary64. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "train/layers_simd.h"
#include "util/rng.h"

/* --- the defined order, restated --- */

static float ref_sum(const float *x, size_t n)
{
	float lane[16] = { 0 };
	for (size_t i = 0; i < n; i++)
		lane[i % 16] = lane[i % 16] + x[i];
	for (size_t h = 8; h >= 1; h /= 2)
		for (size_t i = 0; i < h; i++)
			lane[i] = lane[i] + lane[i + h];
	return lane[0];
}

static float ref_dot(const float *a, const float *b, size_t n)
{
	float lane[16] = { 0 };
	for (size_t i = 0; i < n; i++)
		lane[i % 16] = lane[i % 16] + a[i] * b[i];
	for (size_t h = 8; h >= 1; h /= 2)
		for (size_t i = 0; i < h; i++)
			lane[i] = lane[i] + lane[i + h];
	return lane[0];
}

static float ref_max(const float *x, size_t n)
{
	float lane[16];
	for (size_t j = 0; j < 16; j++)
		lane[j] = -INFINITY;
	for (size_t i = 0; i < n; i++)
		lane[i % 16] = x[i] > lane[i % 16] ? x[i] : lane[i % 16];
	for (size_t h = 8; h >= 1; h /= 2)
		for (size_t i = 0; i < h; i++)
			lane[i] = lane[i + h] > lane[i] ? lane[i + h] : lane[i];
	return lane[0];
}

static float ref_exp(float x)
{
	if (x < -104.0f)
		x = -104.0f;
	if (x > 89.0f)
		x = 89.0f;
	float k = rintf(x * 1.4426950408889634f);
	float r = (x - k * 0x1.63p-1f) - k * -2.12194440e-4f;
	const float c[8] = { 1.0f / 5040, 1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f };
	float p = c[0];
	for (int i = 1; i < 8; i++)
		p = p * r + c[i];
	if (isnan(x))
		return p;
	int ki = (int)k, k1 = ki >= 0 ? ki / 2 : -((-ki + 1) / 2);   /* floor(ki / 2) */
	return ldexpf(ldexpf(p, k1), ki - k1);
}

static float ref_opt(float u)   /* 1 + tanh(u) */
{
	return 2.0f / (1.0f + ref_exp(u * -2.0f));
}

static float ref_softmax_row(float *out, const float *in, size_t n, float *max_out)
{
	float m = ref_max(in, n);
	for (size_t i = 0; i < n; i++)
		out[i] = ref_exp(in[i] - m);
	float total = ref_sum(out, n), inv = 1.0f / total;
	for (size_t i = 0; i < n; i++)
		out[i] = out[i] * inv;
	*max_out = m;
	return total;
}

static void ref_layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *w,
                                  const float *b, size_t N, size_t C)
{
	float *d = malloc(C * sizeof *d);
	ck_assert_ptr_nonnull(d);
	for (size_t r = 0; r < N; r++) {
		const float *x = inp + r * C;
		float m = ref_sum(x, C) / (float)C;
		for (size_t c = 0; c < C; c++)
			d[c] = x[c] - m;
		float v = ref_dot(d, d, C) / (float)C;
		float s = 1.0f / sqrtf(v + 1e-5f);
		for (size_t c = 0; c < C; c++)
			out[r * C + c] = (x[c] - m) * s * w[c] + b[c];
		mean[r] = m;
		rstd[r] = s;
	}
	free(d);
}

static void ref_layernorm_backward(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                                   const float *w, const float *mean, const float *rstd, size_t N, size_t C)
{
	float *g = malloc(C * sizeof *g), *nrm = malloc(C * sizeof *nrm);
	ck_assert(g && nrm);
	for (size_t r = 0; r < N; r++) {
		const float *d = dout + r * C, *x = inp + r * C;
		for (size_t c = 0; c < C; c++) {
			nrm[c] = (x[c] - mean[r]) * rstd[r];
			g[c] = w[c] * d[c];
		}
		float g_mean = ref_sum(g, C) / (float)C, gn_mean = ref_dot(g, nrm, C) / (float)C;
		for (size_t c = 0; c < C; c++) {
			db[c] = db[c] + d[c];
			dw[c] = dw[c] + nrm[c] * d[c];
			dinp[r * C + c] = dinp[r * C + c] + ((g[c] - g_mean) - nrm[c] * gn_mean) * rstd[r];
		}
	}
	free(g);
	free(nrm);
}

/* --- helpers --- */

static void fill(float *x, size_t n, float scale, float offset, uint64_t *st)
{
	for (size_t i = 0; i < n; i++) {
		*st += 1;
		x[i] = offset + scale * (float)((double)(rng_mix64(*st) >> 11) * 0x1p-52 - 1.0);
	}
}

static float *falloc(size_t n)
{
	float *p = calloc(n ? n : 1, sizeof *p);
	ck_assert_ptr_nonnull(p);
	return p;
}

static void expect_bits(const char *what, const char *path, size_t size, const float *got, const float *want,
                        size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (memcmp(&got[i], &want[i], sizeof got[i]) != 0)
			ck_abort_msg("%s (%s path, size %zu): element %zu is %a, the defined order gives %a", what, path, size, i,
			             (double)got[i], (double)want[i]);
}

/* Sizes around every lane boundary: a tail of 1..15, one and several full vectors. */
static const size_t sizes[] = { 1, 2, 7, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 100, 128, 257 };
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* --- the kernels, every available path --- */

START_TEST(test_exp_accuracy)
{
	/* through softmax_row of (0, x): out[1] = exp(x) / (1 + exp(x)) */
	for (int p = 0; p < LAYERS_NPATHS; p++) {
		if (!layers_path_available((layers_path)p))
			continue;
		const layers_kernels *k = layers_kernels_of((layers_path)p);
		for (double x = -87.0; x <= 0.0; x += 0.0137) {
			float in[2] = { 0.0f, (float)x }, out[2], mx;
			k->softmax_row(out, in, 2, &mx);
			double e = exp((double)(float)x), want = e / (1.0 + e);
			ck_assert_msg(fabs(out[1] - want) <= 3e-7 * want, "%s: softmax(0, %a)[1] = %.9g, binary64 says %.9g",
			              k->name, x, (double)out[1], want);
		}
		/* limits: exp(-inf) and anything below 2^-150 give 0 */
		float in[4] = { 0.0f, -INFINITY, -200.0f, -104.0f }, out[4], mx;
		k->softmax_row(out, in, 4, &mx);
		ck_assert_msg(out[0] == 1.0f && out[1] == 0.0f && out[2] == 0.0f && out[3] == 0.0f,
		              "%s: softmax of (0, -inf, -200, -104) = (%a, %a, %a, %a)", k->name, (double)out[0],
		              (double)out[1], (double)out[2], (double)out[3]);
		/* a subnormal result is rounded once: exp(-100) = 3.72e-44 */
		float in2[2] = { 0.0f, -100.0f };
		k->softmax_row(out, in2, 2, &mx);
		float want = (float)exp(-100.0);
		ck_assert_msg(fabsf(out[1] - want) <= 0x1p-149f, "%s: exp(-100) = %a, not %a", k->name, (double)out[1],
		              (double)want);
	}
}
END_TEST

START_TEST(test_softmax_row_bits)
{
	uint64_t st = 7;
	for (size_t s = 0; s < NSIZES; s++) {
		size_t n = sizes[s];
		float *in = falloc(n), *want = falloc(n), *got = falloc(n);
		fill(in, n, 8.0f, -3.0f, &st);
		float wmax, wsum = ref_softmax_row(want, in, n, &wmax);
		for (int p = 0; p < LAYERS_NPATHS; p++) {
			if (!layers_path_available((layers_path)p))
				continue;
			const layers_kernels *k = layers_kernels_of((layers_path)p);
			float gmax, gsum = k->softmax_row(got, in, n, &gmax);
			expect_bits("softmax_row", k->name, n, got, want, n);
			expect_bits("softmax_row sum", k->name, n, &gsum, &wsum, 1);
			expect_bits("softmax_row max", k->name, n, &gmax, &wmax, 1);
		}
		free(in);
		free(want);
		free(got);
	}
}
END_TEST

START_TEST(test_softmax_backward_bits)
{
	uint64_t st = 8;
	for (size_t T = 1; T <= 40; T += 3) {
		float *att = falloc(T * T), *datt = falloc(T * T), *want = falloc(T * T), *got = falloc(T * T);
		fill(att, T * T, 0.5f, 0.5f, &st);
		fill(datt, T * T, 2.0f, 0.0f, &st);
		for (size_t t = 0; t < T; t++) {
			float dot = ref_dot(att + t * T, datt + t * T, t + 1);
			for (size_t u = 0; u < T; u++)
				want[t * T + u] = u <= t ? att[t * T + u] * (datt[t * T + u] - dot) : 0.0f;
		}
		for (int p = 0; p < LAYERS_NPATHS; p++) {
			if (!layers_path_available((layers_path)p))
				continue;
			const layers_kernels *k = layers_kernels_of((layers_path)p);
			memset(got, 0xff, T * T * sizeof *got);
			k->softmax_backward_causal(got, datt, att, T);
			expect_bits("softmax_backward_causal", k->name, T, got, want, T * T);
		}
		free(att);
		free(datt);
		free(want);
		free(got);
	}
}
END_TEST

START_TEST(test_gelu_bits)
{
	uint64_t st = 9;
	for (size_t s = 0; s < NSIZES; s++) {
		size_t n = sizes[s] * 3;
		float *x = falloc(n), *dout = falloc(n), *want = falloc(n), *got = falloc(n);
		fill(x, n, 6.0f, 0.0f, &st);
		fill(dout, n, 1.0f, 0.0f, &st);
		x[0] = -30.0f;   /* both tails */
		x[n - 1] = 30.0f;
		for (size_t i = 0; i < n; i++) {
			float u = GELU_SCALE * (x[i] + GELU_CUBE * x[i] * x[i] * x[i]);
			want[i] = 0.5f * x[i] * ref_opt(u);
		}
		for (int p = 0; p < LAYERS_NPATHS; p++) {
			if (!layers_path_available((layers_path)p))
				continue;
			const layers_kernels *k = layers_kernels_of((layers_path)p);
			k->gelu_forward(got, x, n);
			expect_bits("gelu_forward", k->name, n, got, want, n);
		}
		for (size_t i = 0; i < n; i++) {
			float u = GELU_SCALE * (x[i] + GELU_CUBE * x[i] * x[i] * x[i]);
			float opt = ref_opt(u), du = GELU_SCALE * (1.0f + 3.0f * GELU_CUBE * x[i] * x[i]);
			float grad = 0.5f * opt + 0.5f * x[i] * opt * (2.0f - opt) * du;
			want[i] = 0.25f + grad * dout[i];
		}
		for (int p = 0; p < LAYERS_NPATHS; p++) {
			if (!layers_path_available((layers_path)p))
				continue;
			const layers_kernels *k = layers_kernels_of((layers_path)p);
			for (size_t i = 0; i < n; i++)
				got[i] = 0.25f;
			k->gelu_backward(got, x, dout, n);
			expect_bits("gelu_backward", k->name, n, got, want, n);
		}
		free(x);
		free(dout);
		free(want);
		free(got);
	}
}
END_TEST

/* The gradients a backward pass adds to: nonzero, so that the adds show. */
static void grads_start(float *dx, float *dw, float *db, size_t N, size_t C)
{
	for (size_t i = 0; i < N * C; i++)
		dx[i] = 0.5f;
	for (size_t c = 0; c < C; c++) {
		dw[c] = 0.25f;
		db[c] = -0.25f;
	}
}

START_TEST(test_layernorm_bits)
{
	uint64_t st = 10;
	const size_t N = 5;
	for (size_t s = 0; s < NSIZES; s++) {
		size_t C = sizes[s];
		float *x = falloc(N * C), *w = falloc(C), *b = falloc(C), *d = falloc(N * C);
		float *want = falloc(N * C), *got = falloc(N * C), *wm = falloc(N), *wr = falloc(N), *gm = falloc(N),
		      *gr = falloc(N);
		fill(x, N * C, 2.0f, s % 2 ? 600.0f : 0.0f, &st);   /* with and without the drift lesson's offset */
		fill(w, C, 0.5f, 1.0f, &st);
		fill(b, C, 0.1f, 0.0f, &st);
		fill(d, N * C, 1.0f, 0.0f, &st);
		ref_layernorm_forward(want, wm, wr, x, w, b, N, C);
		float *wdx = falloc(N * C), *wdw = falloc(C), *wdb = falloc(C);
		grads_start(wdx, wdw, wdb, N, C);
		ref_layernorm_backward(wdx, wdw, wdb, d, x, w, wm, wr, N, C);
		for (int p = 0; p < LAYERS_NPATHS; p++) {
			if (!layers_path_available((layers_path)p))
				continue;
			const layers_kernels *k = layers_kernels_of((layers_path)p);
			k->layernorm_forward(got, gm, gr, x, w, b, N, C);
			expect_bits("layernorm_forward", k->name, C, got, want, N * C);
			expect_bits("layernorm_forward mean", k->name, C, gm, wm, N);
			expect_bits("layernorm_forward rstd", k->name, C, gr, wr, N);
			float *gdx = falloc(N * C), *gdw = falloc(C), *gdb = falloc(C);
			grads_start(gdx, gdw, gdb, N, C);
			k->layernorm_backward(gdx, gdw, gdb, d, x, w, wm, wr, N, C);
			expect_bits("layernorm_backward dinp", k->name, C, gdx, wdx, N * C);
			expect_bits("layernorm_backward dweight", k->name, C, gdw, wdw, C);
			expect_bits("layernorm_backward dbias", k->name, C, gdb, wdb, C);
			free(gdx);
			free(gdw);
			free(gdb);
		}
		free(x); free(w); free(b); free(d); free(want); free(got);
		free(wm); free(wr); free(gm); free(gr); free(wdx); free(wdw); free(wdb);
	}
}
END_TEST

START_TEST(test_paths_reported)
{
	/* the portable path is always there, and the best path is available */
	ck_assert(layers_path_available(LAYERS_PORTABLE));
	ck_assert(layers_path_available(layers_path_best()));
	printf("# layers paths on this CPU:");
	for (int p = 0; p < LAYERS_NPATHS; p++)
		if (layers_path_available((layers_path)p))
			printf(" %s", layers_kernels_of((layers_path)p)->name);
	printf(" (best %s)\n", layers_kernels_of(LAYERS_NPATHS)->name);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("layers_simd");
	TCase *tc = tcase_create("bits");
	tcase_add_test(tc, test_paths_reported);
	tcase_add_test(tc, test_exp_accuracy);
	tcase_add_test(tc, test_softmax_row_bits);
	tcase_add_test(tc, test_softmax_backward_bits);
	tcase_add_test(tc, test_gelu_bits);
	tcase_add_test(tc, test_layernorm_bits);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
