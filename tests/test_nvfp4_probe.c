/* train/nvfp4_probe.c (train --probe nvfp4) against oracles of its own: a
 * 16x16 weight whose 1D forward and backward casts are worked out by hand
 * below; a scalar NVFP4 quantizer written here from the definition (e2m1
 * elements {0, 0.5, 1, 1.5, 2, 3, 4, 6}, an e4m3 scale per block of 16 =
 * amax / (6 s_t) rounded to nearest even, s_t = amax_tensor / 2688 in
 * fp32; every rounding to nearest, ties to the even code) for RNE; SR's
 * mean against the bound its per-element variance gives; and a run's
 * captured output gradients against the bias gradients they sum to. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "train/data.h"
#include "train/model.h"
#include "train/nvfp4_probe.h"
#include "train/policy.h"
#include "train/train.h"
#include "testutil.h"

/* --- the scalar reference --- */

static const double e2m1[8] = { 0, 0.5, 1, 1.5, 2, 3, 4, 6 };

/* The index of the value of v[0..n) (ascending, from 0) nearest y >= 0,
 * ties to the even index (the even code); past the last: the last
 * (saturation). */
static size_t nearest(const double *v, size_t n, double y)
{
	if (y >= v[n - 1])
		return n - 1;
	size_t i = 0;
	while (v[i + 1] <= y)
		i++;
	double lo = y - v[i], hi = v[i + 1] - y;
	return lo < hi ? i : hi < lo ? i + 1 : i % 2 == 0 ? i : i + 1;
}

/* The 127 non-negative finite e4m3 values, by code: 2^-6 m/8 for exponent
 * field 0, else 2^(e-7) (1 + m/8); code 126 is 448. */
static void e4m3_values(double v[127])
{
	for (int c = 0; c < 127; c++) {
		int e = c >> 3, m = c & 7;
		v[c] = e == 0 ? ldexp(m / 8.0, -6) : ldexp(1 + m / 8.0, e - 7);
	}
}

/* q = x (rows, cols) quantized to NVFP4 in blocks of br x bc (dividing the
 * shape) and decoded to fp32. */
static void ref_cast(float *q, const float *x, size_t rows, size_t cols, size_t br, size_t bc)
{
	double e4[127];
	e4m3_values(e4);
	double amax = 0;
	for (size_t i = 0; i < rows * cols; i++)
		amax = fmax(amax, fabs(x[i]));
	double s_t = (float)(amax / 2688);
	for (size_t r0 = 0; r0 < rows; r0 += br)
		for (size_t c0 = 0; c0 < cols; c0 += bc) {
			double bmax = 0;
			for (size_t i = r0; i < r0 + br; i++)
				for (size_t j = c0; j < c0 + bc; j++)
					bmax = fmax(bmax, fabs(x[i * cols + j]));
			double s_b = s_t > 0 ? e4[nearest(e4, 127, bmax / (6 * s_t))] : 0;
			for (size_t i = r0; i < r0 + br; i++)
				for (size_t j = c0; j < c0 + bc; j++) {
					float v = x[i * cols + j];
					double e = s_b > 0 ? e2m1[nearest(e2m1, 8, fabs(v) / (s_b * s_t))] : 0;
					q[i * cols + j] = copysignf((float)(e * s_b * s_t), v);
				}
		}
}

static double sq_diff(const float *a, const float *b, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
	return s;
}

static double sq(const float *a, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += (double)a[i] * a[i];
	return s;
}

/* A deterministic value in (-1, 1). */
static double unit(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(int64_t)(*s >> 11 << 11) / 9.223372036854775808e18;
}

static void close_to(double got, double want, const char *what)
{
	ck_assert_msg(fabs(got - want) <= 1e-12 * fabs(want), "%s: %.17g, expected %.17g", what, got, want);
}

static nvfp4_probe_result probe_weight(const float *w, size_t rows, size_t cols)
{
	nvfp4_probe *p;
	ck_assert_int_eq(nvfp4_probe_create(&p, 1, 1), MP_OK);
	ck_assert_int_eq(nvfp4_probe_weight(p, w, rows, cols), MP_OK);
	nvfp4_probe_result r = nvfp4_probe_result_of(p);
	nvfp4_probe_free(p);
	return r;
}

START_TEST(weights_by_hand)
{
	/* amax 2688 = 6 x 448: s_t = 2688 / 2688 = 1.
	 * Forward, blocks along the rows: row 0 (2688, 24): s_b = 448, 2688 ->
	 * 6 x 448 = 2688, 24 / 448 = 0.054 below 0.25 -> 0. Row 1 (7, 5 at
	 * columns 2, 3): 7/6 = 1.167 -> e4m3 1.125 (not 1.25); 7 / 1.125 =
	 * 6.22 saturates to 6: 6.75; 5 / 1.125 = 4.44 -> 4: 4.5.
	 * Backward, blocks down the columns, each holding one value: 2688 ->
	 * 2688; 24: s_b = 4, 6 x 4 = 24; 7: 6.75 as above; 5: 5/6 = 0.833 ->
	 * e4m3 0.8125 (not 0.875), 5 / 0.8125 = 6.15 -> 6: 4.875.
	 * Q_fwd - Q_bwd: -24 at (0,1), 4.5 - 4.875 = -0.375 at (1,3):
	 * 576 + 0.140625 = 576.140625. Q_fwd - W: -24, -0.25, 6.75 - 7, -0.5:
	 * 576 + 0.0625 + 0.25 = 576.3125. ||W||^2 = 2688^2 + 24^2 + 7^2 + 5^2
	 * = 7225994. 16x16: one block, s_b = 448, both casts 2688 and zeros. */
	float w[256] = { 0 };
	w[0] = 2688;
	w[1] = 24;
	w[16 + 2] = 7;
	w[16 + 3] = 5;
	nvfp4_probe_result r = probe_weight(w, 16, 16);
	ck_assert_uint_eq(r.weights, 1);
	ck_assert(r.w_2d == 0);
	close_to(r.w_1d, sqrt(576.140625 / 7225994), "w_1d");
	close_to(r.w_err, sqrt(576.3125 / 7225994), "w_err");
}
END_TEST

START_TEST(weights_reference)
{
	/* a (48, 32) weight, values of every size and a few outliers: the
	 * forward cast in 1x16 blocks, the backward in 16x1, both by the
	 * scalar reference */
	enum { R = 48, C = 32, N = R * C };
	static float w[N], f[N], b[N];
	uint64_t s = 7;
	for (size_t i = 0; i < N; i++)
		w[i] = (float)(0.02 * unit(&s) * (i % 37 == 0 ? 20 : 1) * exp2(3 * unit(&s)));
	ref_cast(f, w, R, C, 1, 16);
	ref_cast(b, w, R, C, 16, 1);
	double d = sq_diff(f, b, N), w2 = sq(w, N);
	ck_assert(d > 0);
	nvfp4_probe_result r = probe_weight(w, R, C);
	close_to(r.w_1d, sqrt(d / w2), "w_1d");
	close_to(r.w_err, sqrt(sq_diff(f, w, N) / w2), "w_err");
	ck_assert(r.w_2d == 0);
	/* pooled over two weights: the squares summed before the ratio */
	nvfp4_probe *p;
	ck_assert_int_eq(nvfp4_probe_create(&p, 1, 1), MP_OK);
	ck_assert_int_eq(nvfp4_probe_weight(p, w, R, C), MP_OK);
	ck_assert_int_eq(nvfp4_probe_weight(p, w, R * C / 16, 16), MP_OK);
	ref_cast(f, w, R * C / 16, 16, 1, 16);
	ref_cast(b, w, R * C / 16, 16, 16, 1);
	r = nvfp4_probe_result_of(p);
	ck_assert_uint_eq(r.weights, 2);
	close_to(r.w_1d, sqrt((d + sq_diff(f, b, N)) / (2 * w2)), "pooled w_1d");
	nvfp4_probe_free(p);
}
END_TEST

/* SR's variance for x cast with scale s_b s_t = scale, below saturation:
 * between the neighbours lo <= y <= hi on the e2m1 grid (y = |x| /
 * scale), up with probability p = (y - lo) / (hi - lo): ((hi - lo) scale)^2
 * p (1 - p). */
static double sr_var(double x, double scale)
{
	double y = fabs(x) / scale;
	size_t j = 0;
	while (j < 7 && e2m1[j + 1] <= y)
		j++;
	if (j == 7)
		return 0;
	double gap = e2m1[j + 1] - e2m1[j], p = (y - e2m1[j]) / gap;
	return gap * scale * gap * scale * p * (1 - p);
}

/* The gradient of the SR test: (8, 32), two blocks of 16 per row; block
 * k's amax is 6 x 2^-8 x v[k], v an e4m3 value, and block 0's is 10.5 =
 * 6 x 2^-8 x 448, the tensor's: s_t = 2^-8 exactly, every s_b = v[k]
 * exactly, so no element lies past 6 s_b and SR is unbiased everywhere.
 * The elements' SR variances (sr_var) summed into var, their squares into
 * var2, weighted by g^2 into varg. */
static void sr_gradient(float g[256], double *var, double *var2, double *varg)
{
	static const double v[16] = { 448, 1, 2.5, 40, 0.5, 13, 96, 0.125, 208, 3.5, 0.875, 20, 6, 0.0625, 160, 28 };
	uint64_t s = 11;
	*var = *var2 = *varg = 0;
	for (size_t k = 0; k < 16; k++) {
		double scale = v[k] * 0x1p-8, amax = 6 * scale;
		for (size_t i = 0; i < 16; i++) {
			float x = (float)(i == 0 ? (k % 2 ? -amax : amax) : amax * unit(&s));
			g[k * 16 + i] = x;
			double vi = sr_var(x, scale);
			*var += vi;
			*var2 += vi * vi;
			*varg += vi * x * x;
		}
	}
}

static nvfp4_probe_result probe_grad(const float *g, size_t rows, size_t cols, size_t draws, uint64_t seed)
{
	nvfp4_probe *p;
	ck_assert_int_eq(nvfp4_probe_create(&p, draws, seed), MP_OK);
	ck_assert_int_eq(nvfp4_probe_grad(p, g, rows, cols, 3), MP_OK);
	nvfp4_probe_result r = nvfp4_probe_result_of(p);
	nvfp4_probe_free(p);
	return r;
}

START_TEST(sr_bias)
{
	float g[256], q[256];
	double var, var2, varg;
	sr_gradient(g, &var, &var2, &varg);
	double g2 = sq(g, 256);
	/* RNE: deterministic, its bias is its error, as the reference casts */
	ref_cast(q, g, 8, 32, 1, 16);
	double dot = 0;
	for (size_t i = 0; i < 256; i++)
		dot += ((double)q[i] - g[i]) * g[i];
	for (size_t R = 16; R <= 1024; R *= 8) {
		nvfp4_probe_result r = probe_grad(g, 8, 32, R, 5);
		ck_assert_uint_eq(r.grads, 1);
		ck_assert_uint_eq(r.draws, R);
		close_to(r.rne_bias, sqrt(sq_diff(q, g, 256) / g2), "rne_bias");
		close_to(r.rne_proj, dot / g2, "rne_proj");
		/* SR's mean of R draws, element i: mean g_i, variance v_i / R
		 * (unbiased, independent draws), near normal, so (mean_i - g_i)^2
		 * has mean v_i / R and variance 2 (v_i / R)^2: the sum lies within
		 * 6 of its standard deviations sqrt(2 sum v_i^2) / R of sum v_i / R */
		double b2 = r.sr_bias * r.sr_bias * g2, sd = sqrt(2 * var2) / (double)R;
		ck_assert_msg(fabs(b2 - var / (double)R) < 6 * sd, "R = %zu: ||mean - g||^2 %.6g, sum var / R %.6g +- %.3g",
		              R, b2, var / (double)R, sd);
		/* one draw's error: E ||Q - g||^2 = sum var, averaged over R draws */
		double e2 = r.sr_err * r.sr_err * g2;
		ck_assert_msg(e2 < 2 * var && e2 > 0.5 * var, "R = %zu: one draw %.6g, sum var %.6g", R, e2, var);
		/* the signed part, sum (mean - g) g: mean 0, variance sum var g^2 / R */
		ck_assert_msg(fabs(r.sr_proj) * g2 < 5 * sqrt(varg / (double)R), "R = %zu: sr_proj %g", R, r.sr_proj);
		ck_assert(r.sr_bias < r.rne_bias);
	}
	/* keyed by the seed: the same seed the same bits, another seed others */
	nvfp4_probe_result a = probe_grad(g, 8, 32, 16, 5), b = probe_grad(g, 8, 32, 16, 5),
	                   c = probe_grad(g, 8, 32, 16, 6);
	ck_assert(a.sr_bias == b.sr_bias && a.sr_proj == b.sr_proj && a.sr_bias != c.sr_bias);
}
END_TEST

START_TEST(sr_saturation)
{
	/* (1, 32): block 0 holds 2688 alone (s_t = 1, s_b = 448); block 1's
	 * amax is 7: 7/6 = 1.167 -> e4m3 1.125, so its largest value is 6 x
	 * 1.125 = 6.75 and 7 saturates there in every draw: SR's mean tends to
	 * g with 7 replaced by 6.75, a bias of 0.25 that no R removes. The
	 * other elements of block 1 lie below 6.75, unbiased. */
	float g[32] = { 2688 };
	uint64_t s = 3;
	double var = 0, var2 = 0, varg = 0;
	for (size_t i = 16; i < 32; i++) {
		g[i] = i == 23 ? 7.0f : (float)(6.7 * unit(&s));
		double vi = sr_var(g[i], 1.125);
		var += vi;
		var2 += vi * vi;
		varg += vi * g[i] * g[i];
	}
	double g2 = sq(g, 32);
	for (size_t R = 64; R <= 4096; R *= 64) {
		nvfp4_probe_result r = probe_grad(g, 1, 32, R, 8);
		double b2 = r.sr_bias * r.sr_bias * g2, want = 0.0625 + var / (double)R;
		/* (mean - g)^2 at 7 is exactly 0.0625; the others as in sr_bias */
		double sd = sqrt(2 * var2) / (double)R;
		ck_assert_msg(fabs(b2 - want) < 6 * sd, "R = %zu: ||mean - g||^2 %.6g, want %.6g +- %.3g", R, b2, want, sd);
		/* the signed part tends to (6.75 - 7) x 7 = -1.75, within 6
		 * standard deviations sqrt(sum v_i g_i^2 / R) */
		ck_assert_msg(fabs(r.sr_proj * g2 + 1.75) < 6 * sqrt(varg / (double)R), "R = %zu: <mean - g, g> %g", R,
		              r.sr_proj * g2);
	}
}
END_TEST

START_TEST(bad_draws)
{
	nvfp4_probe *p = (nvfp4_probe *)1;
	ck_assert_int_eq(nvfp4_probe_create(&p, 0, 1), MP_EINVAL);
	ck_assert_ptr_null(p);
	ck_assert_int_eq(nvfp4_probe_create(&p, NVFP4_PROBE_DRAWS_MAX + 1, 1), MP_EINVAL);
	ck_assert_int_eq(nvfp4_probe_create(&p, NVFP4_PROBE_DRAWS_MAX, 1), MP_OK);
	nvfp4_probe_result r = nvfp4_probe_result_of(p);
	ck_assert(r.weights == 0 && isnan(r.w_1d) && isnan(r.sr_bias));
	nvfp4_probe_free(p);
}
END_TEST

/* --- a run --- */

static trainer *run(const char *policy, bool keep, corpus *data, size_t steps, double *loss)
{
	train_config cfg = train_config_default();
	cfg.model = (gpt_config){ .V = 128, .T = 32, .C = 32, .L = 2, .NH = 2 };
	cfg.B = 4;
	cfg.t = 32;
	cfg.eval_every = 0;
	cfg.keep_douts = keep;
	train_policy p;
	ck_assert_int_eq(policy_from_name(policy, &p), MP_OK);
	trainer *t;
	ck_assert_int_eq(trainer_create(&t, &cfg, &p, data, NULL, 0), MP_OK);
	train_stats s = { .loss = NAN };
	for (size_t k = 0; k < steps; k++)
		ck_assert_int_eq(trainer_step(t, &s), MP_OK);
	*loss = s.loss;
	return t;
}

START_TEST(run_douts)
{
	corpus data;
	char err[512];
	char corpus_path[4096];
	corpus_default_path(corpus_path, sizeof corpus_path);
	ck_assert_msg(corpus_load(&data, corpus_path, 32, err, sizeof err) == MP_OK, "%s", err);
	double loss, loss0;
	trainer *t = run("fp32", true, &data, 2, &loss);
	trainer_free(run("fp32", false, &data, 2, &loss0));
	ck_assert(loss == loss0);   /* keeping them changes nothing */
	/* each Linear's bias gradient is its output gradient summed over the
	 * tokens of both halves (fp32: no loss scale, no rounding) */
	const gpt_model *m = trainer_model(t);
	gpt_config c = m->config;
	const float *bias[4] = { m->grads.qkvb, m->grads.attprojb, m->grads.fcb, m->grads.fcprojb };
	for (size_t l = 0; l < c.L; l++)
		for (size_t k = 0; k < 4; k++) {
			size_t oc, rows[2];
			const float *d[2] = { trainer_douts(t, 0, &rows[0]), trainer_douts(t, 1, &rows[1]) };
			ck_assert(d[0] && d[1] && rows[0] == 64 && rows[1] == 64);
			(void)gpt_dout_at(c, 64, l, k, &oc);
			for (size_t o = 0; o < oc; o++) {
				double sum = 0, mag = 0;
				for (int h = 0; h < 2; h++)
					for (size_t i = 0; i < rows[h]; i++) {
						float v = d[h][gpt_dout_at(c, rows[h], l, k, &oc) + i * oc + o];
						sum += v;
						mag += fabs(v);
					}
				double want = bias[k][l * oc + o];
				ck_assert_msg(fabs(sum - want) <= 1e-5 * mag + 1e-12, "block %zu Linear %zu column %zu: %g vs %g",
				              l, k, o, sum, want);
			}
		}
	trainer_free(t);
	/* without keep_douts, or before a step: nothing to probe */
	nvfp4_probe_result r;
	t = run("nvfp4", false, &data, 1, &loss);
	ck_assert_int_eq(trainer_probe_nvfp4(t, 4, 1, &r), MP_EINVAL);
	trainer_free(t);
	t = run("nvfp4", true, &data, 0, &loss);
	ck_assert_int_eq(trainer_probe_nvfp4(t, 4, 1, &r), MP_EINVAL);
	trainer_free(t);
	corpus_free(&data);
}
END_TEST

START_TEST(run_probe)
{
	corpus data;
	char err[512];
	char corpus_path[4096];
	corpus_default_path(corpus_path, sizeof corpus_path);
	ck_assert_msg(corpus_load(&data, corpus_path, 32, err, sizeof err) == MP_OK, "%s", err);
	double loss;
	/* nvfp4 leaves the last of the 2 blocks in bf16: block 0's 4 Linears,
	 * their gradients in each half; fp32 casts none: all 8 */
	const char *pol[2] = { "nvfp4", "fp32" };
	const size_t lin[2] = { 4, 8 };
	for (int i = 0; i < 2; i++) {
		trainer *t = run(pol[i], true, &data, 3, &loss);
		nvfp4_probe_result r, again;
		ck_assert_int_eq(trainer_probe_nvfp4(t, 16, 9, &r), MP_OK);
		ck_assert_int_eq(trainer_probe_nvfp4(t, 16, 9, &again), MP_OK);
		ck_assert_uint_eq(r.weights, lin[i]);
		ck_assert_uint_eq(r.grads, 2 * lin[i]);
		ck_assert(r.w_2d == 0 && r.w_1d > 0 && r.w_1d < 2 * r.w_err);
		ck_assert(r.sr_bias < r.rne_bias && r.sr_err > r.rne_bias);
		ck_assert(memcmp(&r, &again, sizeof r) == 0);
		trainer_free(t);
	}
	corpus_free(&data);
}
END_TEST

int main(int argc, char **argv)
{
	testutil_fast_blas(argv);
	(void)argc;
	Suite *s = suite_create("nvfp4_probe");
	TCase *tc = tcase_create("nvfp4_probe");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, weights_by_hand);
	tcase_add_test(tc, weights_reference);
	tcase_add_test(tc, sr_bias);
	tcase_add_test(tc, sr_saturation);
	tcase_add_test(tc, bad_draws);
	tcase_add_test(tc, run_douts);
	tcase_add_test(tc, run_probe);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
