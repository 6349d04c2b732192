/* train/rht_probe.c against oracles written here from the definitions: a
 * scalar MX quantizer (OCP MX v1.0: X = 2^(floor(log2 amax) - emax_elem),
 * elements V / X rounded to nearest even on the element's grid, built
 * here from its fields, and clipped at its max), a scalar NVFP4 quantizer
 * (e2m1 values {0, 0.5, 1, 1.5, 2, 3, 4, 6}, the
 * e4m3 block scale = block amax / 6 rounded to e4m3, an fp32 tensor scale
 * amax / 2688), the RHT as the matrix S H16 / 4 with Sylvester's entries
 * (-1)^popcount(i & j), and stochastic rounding's closed forms: between
 * grid points a < t < b it gives b with probability (t - a) / (b - a), so
 * its mean is t and its variance (t - a)(b - t). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant/quant.h"
#include "train/blockcast.h"
#include "train/rht_probe.h"
#include "testutil.h"

static const rht_probe_cast NV_PLAIN = { .fmt = QUANT_NVFP4, .block = 16 };
static const rht_probe_cast NV_RHT = { .fmt = QUANT_NVFP4, .block = 16, .rht = true };

/* --- the reference quantizers --- */

static const double e2m1[8] = { 0, 0.5, 1, 1.5, 2, 3, 4, 6 };

/* The nearest of the 8 magnitudes to t >= 0 (ties to the even code),
 * saturating at 6. */
static double ref_e2m1(double t)
{
	if (t >= 6)
		return 6;
	int best = 0;
	for (int k = 1; k < 8; k++) {
		double d = fabs(e2m1[k] - t), db = fabs(e2m1[best] - t);
		if (d < db || (d == db && k % 2 == 0))
			best = k;
	}
	return e2m1[best];
}

/* The positive e4m3 values by their code 1..126: exponent field e, three
 * fraction bits m; e = 0 subnormal m/8 2^-6; 0x7f is NaN. */
static double e4m3_value(int code)
{
	int e = code >> 3, m = code & 7;
	return e == 0 ? m / 8.0 * 0x1p-6 : (1 + m / 8.0) * ldexp(1, e - 7);
}

/* s_b = e4m3(a / (6 s_t)) rounded to nearest (ties to the even code),
 * saturating at 448: compared as |v 6 s_t - a| (v 6 s_t exact). */
static double ref_block_scale(double a, double s_t)
{
	int best = 0;
	for (int code = 1; code <= 126; code++) {
		double d = fabs(e4m3_value(code) * 6 * s_t - a), db = fabs(e4m3_value(best) * 6 * s_t - a);
		if (d < db || (d == db && code % 2 == 0))
			best = code;
	}
	return e4m3_value(best);
}

/* s_t = fp32(amax / 2688), nearest: of the fp32 values around the
 * quotient, the one whose product with 2688 (exact) is nearest amax. */
static float ref_tensor_scale(float amax)
{
	float f = (float)(amax / 2688.0), best = f;
	float cand[3] = { nextafterf(f, 0), f, nextafterf(f, INFINITY) };
	for (int k = 0; k < 3; k++)
		if (fabs((double)cand[k] * 2688 - amax) < fabs((double)best * 2688 - amax))
			best = cand[k];
	return best;
}

typedef struct {
	double q[4096];
	size_t flushed, saturated;
	float s_t;
} ref_cast;

/* v[0..n) cast by the NVFP4 rules, RNE, from the definitions above. */
static void ref_nvfp4(ref_cast *r, const float *v, size_t n)
{
	float amax = 0;
	for (size_t i = 0; i < n; i++)
		amax = fabsf(v[i]) > amax ? fabsf(v[i]) : amax;
	r->s_t = ref_tensor_scale(amax);
	r->flushed = r->saturated = 0;
	for (size_t b = 0; b < n; b += 16) {
		double ba = 0;
		for (size_t i = b; i < b + 16; i++)
			ba = fabs(v[i]) > ba ? fabs(v[i]) : ba;
		double u = ref_block_scale(ba, r->s_t) * r->s_t;   /* s_b s_t */
		for (size_t i = b; i < b + 16; i++) {
			double t = fabs(v[i]) / u, e = u > 0 ? ref_e2m1(t) : 0;
			r->q[i] = (v[i] < 0 ? -e : e) * u;
			r->flushed += v[i] != 0 && e == 0;
			/* saturated: the nearest e2m1 value lies past 6, at 7 and above
			 * (7 itself ties to 8, the even neighbour) */
			r->saturated += u > 0 && t >= 7;
		}
	}
}

/* The RHT from its definition: (v H)_j = sum_i v_i s_i H16[i][j] / 4. */
static double hmat(int i, int j)
{
	double s = (QUANT_RHT_SIGNS >> i & 1) ? -1 : 1;
	return s * (__builtin_popcount((unsigned)(i & j)) & 1 ? -0.25 : 0.25);
}

/* ||a - b|| over the positions where mask (NULL: all) equals want. */
static double dist2(const double *a, const float *b, const bool *mask, bool want, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		if (!mask || mask[i] == want)
			s += (a[i] - b[i]) * (a[i] - b[i]);
	return s;
}

static double norm2(const float *x, const bool *mask, bool want, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		if (!mask || mask[i] == want)
			s += (double)x[i] * x[i];
	return s;
}

static rht_probe_cfg cfg_small(void)
{
	return (rht_probe_cfg){ .n = 256, .dist = PROBE_DIST_GAUSS, .outliers = 3, .outlier_value = 25,
		            .place = PROBE_PLACE_BLOCKS, .seed = 3, .mode = FMT_RNE, .draws = 1 };
}

static void close_rel(double got, double want, double tol, const char *what)
{
	ck_assert_msg(fabs(got - want) <= tol * fabs(want), "%s: %.10g, expected %.10g", what, got, want);
}

START_TEST(plain_against_reference)
{
	rht_probe_cfg c = cfg_small();
	float x[256];
	bool out[256];
	ck_assert_int_eq(rht_probe_values(x, out, &c), MP_OK);
	static ref_cast r;
	ref_nvfp4(&r, x, c.n);
	rht_probe_arm a;
	ck_assert_int_eq(rht_probe_run(&a, x, out, &c, &NV_PLAIN), MP_OK);
	ck_assert(a.tensor_scale == r.s_t);
	close_rel(a.error, sqrt(dist2(r.q, x, NULL, false, c.n) / norm2(x, NULL, false, c.n)), 1e-12, "error");
	close_rel(a.inlier_error, sqrt(dist2(r.q, x, out, false, c.n) / norm2(x, out, false, c.n)), 1e-12, "inliers");
	close_rel(a.outlier_error, sqrt(dist2(r.q, x, out, true, c.n) / norm2(x, out, true, c.n)), 1e-12, "outliers");
	ck_assert_double_eq(a.flushed, (double)r.flushed / 256);
	ck_assert_double_eq(a.saturated, (double)r.saturated / 256);
	/* the case is not degenerate: some flushed, errors of NVFP4's size */
	ck_assert(r.flushed > 0);
	ck_assert(a.error > 0.02 && a.error < 0.5 && a.sr_var == 0 && a.sr_bias == 0);
	/* 4-bit elements, an 8-bit scale per 16 and 32 bits over 256 values */
	ck_assert_double_eq(a.bits, 4 + 8.0 / 16 + 32.0 / 256);
}
END_TEST

START_TEST(rht_against_reference)
{
	rht_probe_cfg c = cfg_small();
	float x[256], y[256];
	bool out[256];
	ck_assert_int_eq(rht_probe_values(x, out, &c), MP_OK);
	/* the rotated values from the matrix, in binary64, agree with the
	 * trainer's fp32 butterflies to fp32 rounding */
	memcpy(y, x, sizeof y);
	block_rht16_rows(y, 256, 1, QUANT_RHT_SIGNS);
	for (size_t b = 0; b < 256; b += 16)
		for (int j = 0; j < 16; j++) {
			double s = 0;
			for (int i = 0; i < 16; i++)
				s += x[b + i] * hmat(i, j);
			ck_assert_msg(fabs(s - y[b + j]) <= 1e-6 * (1 + fabs(s)), "%zu: %g vs %g", b + j, s, (double)y[b + j]);
		}
	/* the reference cast of those rotated values, rotated back with H^T */
	static ref_cast r;
	ref_nvfp4(&r, y, c.n);
	double back[256];
	for (size_t b = 0; b < 256; b += 16)
		for (int i = 0; i < 16; i++) {
			double s = 0;
			for (int j = 0; j < 16; j++)
				s += r.q[b + j] * hmat(i, j);
			back[b + i] = s;
		}
	rht_probe_arm a;
	ck_assert_int_eq(rht_probe_run(&a, x, out, &c, &NV_RHT), MP_OK);
	ck_assert(a.tensor_scale == r.s_t);
	ck_assert_double_eq(a.flushed, (double)r.flushed / 256);
	ck_assert_double_eq(a.saturated, (double)r.saturated / 256);
	double x2 = norm2(x, NULL, false, c.n);
	/* orthogonal: the error in the rotated domain is the error rotated back */
	close_rel(a.error, sqrt(dist2(r.q, y, NULL, false, c.n) / x2), 1e-5, "error (rotated domain)");
	close_rel(a.error, sqrt(dist2(back, x, NULL, false, c.n) / x2), 1e-5, "error");
	close_rel(a.inlier_error, sqrt(dist2(back, x, out, false, c.n) / norm2(x, out, false, c.n)), 1e-5, "inliers");
	close_rel(a.outlier_error, sqrt(dist2(back, x, out, true, c.n) / norm2(x, out, true, c.n)), 1e-5, "outliers");
}
END_TEST

/* --- MX, from the OCP definition --- */

/* An element format without inf (fp4, fp6, e4m3): exponent field e, f
 * fraction bits m; e = 0 subnormal m 2^-f 2^(1 - bias). Its magnitudes by
 * code, NaN codes left out (e4m3's 0x7f). */
typedef struct {
	int ebits, fbits, bias, emax_elem;
	bool top_nan;   /* the all-ones code is NaN (e4m3) */
} ref_elem;

static int ref_codes(const ref_elem *f)
{
	return (1 << (f->ebits + f->fbits)) - (f->top_nan ? 1 : 0);
}

static double ref_value(const ref_elem *f, int code)
{
	int e = code >> f->fbits, m = code & ((1 << f->fbits) - 1);
	double frac = m / (double)(1 << f->fbits);
	return e == 0 ? frac * ldexp(1, 1 - f->bias) : (1 + frac) * ldexp(1, e - f->bias);
}

/* The code of the nearest magnitude to t >= 0, ties to the even code; with
 * past, the grid continues one step beyond the max (code ref_codes(f), the
 * next value a wider format would have). */
static int ref_nearest_code(const ref_elem *f, double t, bool past)
{
	int best = 0;
	for (int code = 1; code < ref_codes(f) + (past ? 1 : 0); code++) {
		double d = fabs(ref_value(f, code) - t), db = fabs(ref_value(f, best) - t);
		if (d < db || (d == db && code % 2 == 0))
			best = code;
	}
	return best;
}

/* The nearest magnitude to t >= 0, ties to the even code; beyond the max,
 * the max (clipped). */
static double ref_round(const ref_elem *f, double t)
{
	return ref_value(f, ref_nearest_code(f, t, false));
}

/* v[0..n) cast by OCP's MX rule in blocks of bs: X = 2^(floor(log2 amax) -
 * emax_elem), the exponent clamped to [-127, 127] (2^-127 for an all-zero
 * block), elements V / X rounded and clipped. */
static void ref_mx(ref_cast *r, const ref_elem *f, const float *v, size_t n, size_t bs)
{
	r->s_t = 1;
	r->flushed = r->saturated = 0;
	for (size_t b = 0; b < n; b += bs) {
		double ba = 0;
		for (size_t i = b; i < b + bs; i++)
			ba = fabs(v[i]) > ba ? fabs(v[i]) : ba;
		int ex = -127;
		if (ba > 0) {
			int e2;
			frexp(ba, &e2);   /* ba = m 2^e2, m in [0.5, 1): floor(log2 ba) = e2 - 1 */
			ex = e2 - 1 - f->emax_elem;
			ex = ex < -127 ? -127 : ex > 127 ? 127 : ex;
		}
		double X = ldexp(1, ex);
		for (size_t i = b; i < b + bs; i++) {
			double t = fabs(v[i]) / X, e = ref_round(f, t);   /* t exact: X a power of 2 */
			r->q[i] = (v[i] < 0 ? -e : e) * X;
			r->flushed += v[i] != 0 && e == 0;
			/* saturated: its nearest value on the grid continued one step
			 * past the max (ties to the even code) is that step */
			r->saturated += ref_nearest_code(f, t, true) == ref_codes(f);
		}
	}
}

START_TEST(mx_against_reference)
{
	static const struct {
		quant_id id;
		ref_elem f;
		double bits;
	} cases[] = {
		{ QUANT_MXFP4, { .ebits = 2, .fbits = 1, .bias = 1, .emax_elem = 2 }, 4 + 8.0 / 32 },
		{ QUANT_MXFP8_E4M3, { .ebits = 4, .fbits = 3, .bias = 7, .emax_elem = 8, .top_nan = true }, 8 + 8.0 / 32 },
		{ QUANT_MXFP6_E2M3, { .ebits = 2, .fbits = 3, .bias = 1, .emax_elem = 2 }, 6 + 8.0 / 32 },
	};
	/* the grids: e2m1's 8 magnitudes end at 6, e4m3's at 448, e2m3's at 7.5 */
	ck_assert_double_eq(ref_value(&cases[0].f, 7), 6);
	ck_assert_double_eq(ref_value(&cases[0].f, 1), 0.5);
	ck_assert_double_eq(ref_value(&cases[1].f, 126), 448);
	ck_assert_double_eq(ref_value(&cases[2].f, 31), 7.5);
	rht_probe_cfg c = cfg_small();
	c.unit = 32;   /* the outliers one per block of 32 */
	float x[256];
	bool out[256];
	ck_assert_int_eq(rht_probe_values(x, out, &c), MP_OK);
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		static ref_cast r;
		ref_mx(&r, &cases[k].f, x, c.n, 32);
		rht_probe_cast pc = { .fmt = cases[k].id, .rule = QUANT_RULE_OCP, .block = 32 };
		rht_probe_arm a;
		ck_assert_int_eq(rht_probe_run(&a, x, out, &c, &pc), MP_OK);
		const char *name = quant_get(cases[k].id)->name;
		ck_assert_msg(a.tensor_scale == 1.0f, "%s: tensor scale %g", name, (double)a.tensor_scale);
		ck_assert_msg(a.bits == cases[k].bits, "%s: bits %g", name, a.bits);
		close_rel(a.error, sqrt(dist2(r.q, x, NULL, false, c.n) / norm2(x, NULL, false, c.n)), 1e-12, name);
		close_rel(a.inlier_error, sqrt(dist2(r.q, x, out, false, c.n) / norm2(x, out, false, c.n)), 1e-12, name);
		ck_assert_msg(fabs(a.outlier_error - sqrt(dist2(r.q, x, out, true, c.n) / norm2(x, out, true, c.n))) <=
		                      1e-12,
		              "%s: outliers %g", name, a.outlier_error);
		ck_assert_msg(a.flushed == (double)r.flushed / 256, "%s: flushed %g vs %zu", name, a.flushed, r.flushed);
		ck_assert_msg(a.saturated == (double)r.saturated / 256, "%s: saturated %g vs %zu", name, a.saturated,
		              r.saturated);
		ck_assert_msg(a.error > 0, "%s: error 0", name);
		/* OCP's floor rule clips in some blocks: those whose amax / 2^floor(log2 amax) passes max / 2^emax */
		if (cases[k].id == QUANT_MXFP4)
			ck_assert(r.saturated > 0 && r.flushed > 0);
	}
	/* two more fraction bits, a quarter of the spacing: e4m3's error well under e2m1's */
	rht_probe_arm a4, a8;
	rht_probe_cast p4 = { .fmt = QUANT_MXFP4, .block = 32 }, p8 = { .fmt = QUANT_MXFP8_E4M3, .block = 32 };
	ck_assert_int_eq(rht_probe_run(&a4, x, out, &c, &p4), MP_OK);
	ck_assert_int_eq(rht_probe_run(&a8, x, out, &c, &p8), MP_OK);
	ck_assert(a8.error < a4.error / 2);
	/* n must hold whole blocks: 256 values are not blocks of 48 */
	char why[256];
	rht_probe_cast p48 = { .fmt = QUANT_MXFP4, .block = 48 };
	ck_assert_int_eq(rht_probe_cast_check(&p48, &c, why, sizeof why), MP_EINVAL);
	ck_assert(strstr(why, "multiple of the block"));
	ck_assert_int_eq(rht_probe_run(&a4, x, out, &c, &p48), MP_EINVAL);
}
END_TEST

START_TEST(orthogonal)
{
	/* H H^T = I exactly: each entry a sum of 16 terms +-1/16 */
	for (int i = 0; i < 16; i++)
		for (int k = 0; k < 16; k++) {
			double s = 0;
			for (int j = 0; j < 16; j++)
				s += hmat(i, j) * hmat(k, j);
			ck_assert_double_eq(s, i == k ? 1.0 : 0.0);
		}
	/* ||Hx|| = ||x|| to fp32 rounding; the way back gives x again */
	rht_probe_cfg c = { .n = 4096, .dist = PROBE_DIST_UNIFORM, .seed = 9, .mode = FMT_RNE, .draws = 1 };
	static float x[4096], y[4096];
	ck_assert_int_eq(rht_probe_values(x, NULL, &c), MP_OK);
	memcpy(y, x, sizeof y);
	block_rht16_rows(y, 4096, 1, QUANT_RHT_SIGNS);
	close_rel(sqrt(norm2(y, NULL, false, 4096)), sqrt(norm2(x, NULL, false, 4096)), 1e-6, "||Hx||");
	block_rht16_rows_back(y, 4096, 1, QUANT_RHT_SIGNS);
	for (size_t i = 0; i < 4096; i++)
		ck_assert_msg(fabsf(y[i] - x[i]) <= 1e-6f, "%zu: %g back as %g", i, (double)x[i], (double)y[i]);
}
END_TEST

START_TEST(values_and_outliers)
{
	/* gauss: mean 0, sd 1 over 65536 (sd of the mean 0.004); uniform
	 * within +-sqrt 3 */
	enum { N = 65536 };
	static float x[N];
	static bool out[N];
	rht_probe_cfg c = { .n = N, .dist = PROBE_DIST_GAUSS, .seed = 1, .mode = FMT_RNE, .draws = 1 };
	ck_assert_int_eq(rht_probe_values(x, out, &c), MP_OK);
	double s = 0, s2 = 0;
	for (size_t i = 0; i < N; i++) {
		s += x[i];
		s2 += (double)x[i] * x[i];
		ck_assert(!out[i]);
	}
	ck_assert_double_lt(fabs(s / N), 0.02);
	ck_assert_double_lt(fabs(sqrt(s2 / N) - 1), 0.02);
	c.dist = PROBE_DIST_UNIFORM;
	ck_assert_int_eq(rht_probe_values(x, out, &c), MP_OK);
	for (size_t i = 0; i < N; i++)
		ck_assert(fabsf(x[i]) <= 1.7320509f);
	/* Laplace of sd 1: P(|x| > 3) = e^(-3 sqrt 2) = 0.0144 (a normal's is
	 * 0.0027); its sd 1 within 0.03 */
	c.dist = PROBE_DIST_LAPLACE;
	ck_assert_int_eq(rht_probe_values(x, out, &c), MP_OK);
	size_t beyond = 0;
	s2 = 0;
	for (size_t i = 0; i < N; i++) {
		beyond += fabsf(x[i]) > 3;
		s2 += (double)x[i] * x[i];
	}
	ck_assert_double_lt(fabs((double)beyond / N - 0.0144), 0.002);
	ck_assert_double_lt(fabs(sqrt(s2 / N) - 1), 0.03);
	/* blocks: 100 outliers of +-40, each in a block of its own, both signs */
	c = (rht_probe_cfg){ .n = 4096, .dist = PROBE_DIST_GAUSS, .outliers = 100, .outlier_value = 40,
		         .place = PROBE_PLACE_BLOCKS, .seed = 2, .mode = FMT_RNE, .draws = 1 };
	ck_assert_int_eq(rht_probe_values(x, out, &c), MP_OK);
	size_t count = 0, neg = 0, per_block[256] = { 0 };
	for (size_t i = 0; i < 4096; i++) {
		ck_assert(out[i] == (fabsf(x[i]) == 40));
		count += out[i];
		neg += out[i] && x[i] < 0;
		per_block[i / 16] += out[i];
	}
	ck_assert_uint_eq(count, 100);
	ck_assert(neg > 20 && neg < 80);
	for (size_t b = 0; b < 256; b++)
		ck_assert_uint_le(per_block[b], 1);
	/* tensor: every place may hold one; all 4096 is allowed */
	c.place = PROBE_PLACE_TENSOR;
	c.outliers = 4096;
	ck_assert_int_eq(rht_probe_values(x, out, &c), MP_OK);
	for (size_t i = 0; i < 4096; i++)
		ck_assert(out[i] && fabsf(x[i]) == 40);
	/* the seed decides: another seed, other values */
	float y[16];
	rht_probe_cfg d = { .n = 16, .seed = 5, .mode = FMT_RNE, .draws = 1 };
	ck_assert_int_eq(rht_probe_values(x, NULL, &d), MP_OK);
	d.seed = 6;
	ck_assert_int_eq(rht_probe_values(y, NULL, &d), MP_OK);
	ck_assert(memcmp(x, y, sizeof y) != 0);
}
END_TEST

START_TEST(sr_closed_forms)
{
	/* 64 copies of one block: amax 2688 gives s_t = 1 and s_b = 448
	 * exactly (e4m3's max), so element t = x / 448 lies on the e2m1 grid
	 * or between a < t < b; its SR variance is 448^2 (t - a)(b - t) and its
	 * mean x. Nothing is clipped: the bias is sampling alone. */
	static const double t[16] = { 6, 2.5, 0.3, 1.2, 4.7, -3.3, 0.1, 5.5, -0.75, 1.9, -2.2, 0.6, 3.9, -5.1, 1, -0.2 };
	enum { N = 1024 };
	static float x[N];
	static bool out[N];
	double want_var = 0, x2 = 0;
	for (size_t i = 0; i < N; i++) {
		x[i] = (float)(448 * t[i % 16]);
		double m = fabs((double)x[i]) / 448, a = 0, b = 6;
		for (int k = 0; k < 8; k++) {
			if (e2m1[k] <= m && e2m1[k] > a)
				a = e2m1[k];
			if (e2m1[k] >= m && e2m1[k] < b)
				b = e2m1[k];
		}
		want_var += 448.0 * 448.0 * (m - a) * (b - m);
		x2 += (double)x[i] * x[i];
	}
	rht_probe_cfg c = { .n = N, .mode = FMT_SR, .draws = 2000, .seed = 4 };
	rht_probe_arm a;
	ck_assert_int_eq(rht_probe_run(&a, x, out, &c, &NV_PLAIN), MP_OK);
	ck_assert(a.tensor_scale == 1.0f);
	close_rel(a.sr_var, (want_var / N) / (x2 / N), 0.03, "sr_var");
	/* E ||Q - x||^2 = the summed variance for an unbiased rounding */
	close_rel(a.error, sqrt(want_var / x2), 0.03, "error");
	close_rel(a.sr_noise, sqrt(want_var / x2 / 2000), 0.03, "sr_noise");
	/* ||mean - x||^2 over 1024 elements: about the summed variance / R */
	ck_assert_msg(a.sr_bias > 0.8 * a.sr_noise && a.sr_bias < 1.2 * a.sr_noise, "bias %g, noise %g", a.sr_bias,
	              a.sr_noise);
	ck_assert_double_eq(a.saturated, 0);
	/* the same draws again: reproducible; RNE of the same: no variance */
	rht_probe_arm b;
	ck_assert_int_eq(rht_probe_run(&b, x, out, &c, &NV_PLAIN), MP_OK);
	ck_assert(memcmp(&a, &b, sizeof a) == 0);
	c.mode = FMT_RNE;
	c.draws = 1;
	ck_assert_int_eq(rht_probe_run(&b, x, out, &c, &NV_PLAIN), MP_OK);
	ck_assert(b.sr_var == 0 && b.error < a.error);
}
END_TEST

START_TEST(bad_configs)
{
	char why[256];
	rht_probe_cfg ok = cfg_small(), c;
	ck_assert_int_eq(rht_probe_cfg_check(&ok, why, sizeof why), MP_OK);
	c = ok;
	c.n = 250;
	ck_assert_int_eq(rht_probe_cfg_check(&c, why, sizeof why), MP_EINVAL);
	ck_assert(strstr(why, "multiple of 16"));
	c = ok;
	c.outliers = 17;   /* 16 blocks */
	c.n = 256;
	ck_assert_int_eq(rht_probe_cfg_check(&c, why, sizeof why), MP_EINVAL);
	ck_assert(strstr(why, "outliers"));
	c.place = PROBE_PLACE_TENSOR;
	ck_assert_int_eq(rht_probe_cfg_check(&c, why, sizeof why), MP_OK);
	c = ok;
	c.outlier_value = INFINITY;
	ck_assert_int_eq(rht_probe_cfg_check(&c, why, sizeof why), MP_EINVAL);
	ck_assert(strstr(why, "outlier value"));
	c = ok;
	c.draws = 2;
	ck_assert_int_eq(rht_probe_cfg_check(&c, why, sizeof why), MP_EINVAL);
	ck_assert(strstr(why, "draws"));
	rht_probe_arm a;
	float x[256] = { 0 };
	ck_assert_int_eq(rht_probe_run(&a, x, NULL, &c, &NV_PLAIN), MP_EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rht_probe");
	TCase *tc = tcase_create("rht_probe");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, plain_against_reference);
	tcase_add_test(tc, rht_against_reference);
	tcase_add_test(tc, mx_against_reference);
	tcase_add_test(tc, orthogonal);
	tcase_add_test(tc, values_and_outliers);
	tcase_add_test(tc, sr_closed_forms);
	tcase_add_test(tc, bad_configs);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
