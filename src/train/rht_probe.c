#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drift/drift_update.h"
#include "quant/quant.h"
#include "train/blockcast.h"
#include "train/rht_probe.h"
#include "util/rng.h"

/* The stream that places the outliers: apart from the values' own. */
#define PROBE_OUTLIER_STREAM 0x6f75746c69657273ull   /* "outliers" */

/* The blocks outliers are placed in: unit values each. */
static size_t unit_of(const rht_probe_cfg *c)
{
	return c->unit ? c->unit : 16;
}

mp_status rht_probe_cfg_check(const rht_probe_cfg *c, char *err, size_t errlen)
{
	const char *why = NULL;
	if (c->unit > PROBE_N_MAX)
		why = "the unit of the blocks must be at most 2^24";
	else if (c->n == 0 || c->n % unit_of(c) != 0 || c->n > PROBE_N_MAX)
		why = c->unit ? "n must be a positive multiple of the unit, at most 2^24"
		               : "n must be a positive multiple of 16, at most 2^24";
	else if (c->dist != PROBE_DIST_GAUSS && c->dist != PROBE_DIST_UNIFORM && c->dist != PROBE_DIST_LAPLACE)
		why = "unknown distribution";
	else if (c->place != PROBE_PLACE_BLOCKS && c->place != PROBE_PLACE_TENSOR)
		why = "unknown outlier placement";
	else if (c->outliers > (c->place == PROBE_PLACE_BLOCKS ? c->n / unit_of(c) : c->n))
		why = "more outliers than places for them";
	else if (c->outliers > 0 && !(c->outlier_value > 0 && c->outlier_value <= 3.4028234663852886e38))
		why = "the outlier value must be positive and finite in fp32";
	else if (!quant_mode_ok(c->mode))
		why = "elements round with " QUANT_MODES;
	else if (c->draws == 0 || c->draws > PROBE_DRAWS_MAX || (!quant_mode_draws(c->mode) && c->draws != 1))
		why = "draws must be 1 for rne, rto and rnz, 1..100000 for sr and sr-equal";
	return why ? mp_fail(MP_EINVAL, err, errlen, "%s", why) : MP_OK;
}

/* A uniform integer in [0, m), m <= 2^32, from 32 random bits. */
static size_t below(uint32_t bits, size_t m)
{
	return (size_t)(((uint64_t)bits * (uint64_t)m) >> 32);
}

/* K distinct picks out of 0..m-1 into pick[0..k): a partial Fisher-Yates
 * shuffle, step j drawing bits j of the outlier stream. idx holds m. */
static void pick_distinct(size_t *pick, size_t k, size_t *idx, size_t m, uint64_t stream)
{
	for (size_t i = 0; i < m; i++)
		idx[i] = i;
	for (size_t j = 0; j < k; j++) {
		size_t t = j + below(rng_bits(stream, j), m - j);
		size_t s = idx[j];
		idx[j] = idx[t];
		idx[t] = s;
		pick[j] = idx[j];
	}
}

/* Value i of a Laplace distribution of standard deviation 1 (scale
 * 1/sqrt 2): -ln u with a random sign, u in (0, 1] from 32 bits of the
 * counter hash drift_update_draw uses and the sign from the next, ln as
 * drift_log (+, -, *, / only: the same bits everywhere). */
static float laplace_draw(uint64_t seed, uint64_t i)
{
	uint64_t r = rng_mix64(seed * 0x9e3779b97f4a7c15ull ^ rng_mix64(i));
	double u = ((double)(uint32_t)r + 1.0) * 0x1p-32;
	double m = -0.7071067811865476 * drift_log(u);
	return (float)((r >> 32) & 1 ? -m : m);
}

mp_status rht_probe_values(float *x, bool *is_outlier, const rht_probe_cfg *c)
{
	int dist = c->dist == PROBE_DIST_GAUSS ? 2 : 1;   /* drift_update_draw's codes */
	for (size_t i = 0; i < c->n; i++)
		x[i] = c->dist == PROBE_DIST_LAPLACE ? laplace_draw(c->seed, i)
		                                     : drift_update_draw(dist, 0.0, 1.0, c->seed, c->n, 0, i);
	if (is_outlier)
		memset(is_outlier, 0, c->n * sizeof *is_outlier);
	if (c->outliers == 0)
		return MP_OK;
	size_t unit = unit_of(c), m = c->place == PROBE_PLACE_BLOCKS ? c->n / unit : c->n, k = c->outliers;
	size_t *idx = malloc((m + k) * sizeof *idx);
	if (!idx)
		return MP_ENOMEM;
	uint64_t stream = rng_mix64(c->seed ^ PROBE_OUTLIER_STREAM);
	pick_distinct(idx + m, k, idx, m, stream);
	float v = (float)c->outlier_value;
	for (size_t j = 0; j < k; j++) {
		size_t at = idx[m + j];
		if (c->place == PROBE_PLACE_BLOCKS)   /* bits k + j: the position in the block */
			at = unit * at + below(rng_bits(stream, k + j), unit);
		x[at] = (rng_bits(stream, 2 * k + j) & 1) ? -v : v;   /* bits 2k + j: the sign */
		if (is_outlier)
			is_outlier[at] = true;
	}
	free(idx);
	return MP_OK;
}

/* --- the cast --- */

typedef struct {
	float *y;          /* (n) the values cast: x, rotated under the RHT */
	double *q;         /* (n) one draw's cast, in the original domain */
	float *qf;         /* (n) under the RHT: the cast in fp32, rotated back */
	double *mean, *m2; /* (n) Welford's running mean and squared deviations over the draws */
	uint8_t *elems;    /* (n) element patterns */
	uint8_t *scales;   /* (n / block) e8m0 or e4m3 patterns */
} probe_work;

static void work_free(probe_work *w)
{
	free(w->y);
	free(w->q);
	free(w->qf);
	free(w->mean);
	free(w->m2);
	free(w->elems);
	free(w->scales);
}

static bool work_alloc(probe_work *w, size_t n, size_t block)
{
	*w = (probe_work){ .y = malloc(n * sizeof(float)), .q = malloc(n * sizeof(double)),
		           .qf = malloc(n * sizeof(float)),
		           .mean = calloc(n, sizeof(double)), .m2 = calloc(n, sizeof(double)),
		           .elems = malloc(n), .scales = malloc(n / block) };
	return w->y && w->q && w->qf && w->mean && w->m2 && w->elems && w->scales;
}

/* Sums of squares over the draws, in a fixed order. */
typedef struct {
	double x2_in, x2_out;   /* ||x||^2 over inliers and outliers */
	double e2_in, e2_out;   /* sum over draws of ||Q - x||^2, inliers and outliers */
	size_t flushed, saturated;
} probe_sums;

/* The quant_opts of k for one draw's seed. */
static quant_opts opts_of(const rht_probe_cast *k, const rht_probe_cfg *c, uint64_t seed)
{
	size_t block = k->block ? k->block : (size_t)quant_get(k->fmt)->block;
	return (quant_opts){ .fmt = k->fmt, .rule = k->rule, .mode = c->mode, .seed = seed, .block = block };
}

mp_status rht_probe_cast_check(const rht_probe_cast *k, const rht_probe_cfg *c, char *err, size_t errlen)
{
	if ((unsigned)k->fmt >= QUANT_COUNT)
		return mp_fail(MP_EINVAL, err, errlen, "unknown block format");
	quant_opts o = opts_of(k, c, 0);
	if (quant_opts_check(&o, err, errlen) != MP_OK)
		return MP_EINVAL;
	if (c->n % o.block != 0)
		return mp_fail(MP_EINVAL, err, errlen, "n must be a multiple of the block");
	if (k->rht && c->n % 16 != 0)
		return mp_fail(MP_EINVAL, err, errlen, "n must be a multiple of 16 under the RHT");
	return MP_OK;
}

/* One draw: cast w->y with seed into w->q, decoded exactly (under the RHT
 * rounded to fp32, as the trainer's cast does, and rotated back in fp32),
 * counting flushed and saturated elements. */
static mp_status cast_draw(probe_work *w, const rht_probe_cfg *c, const rht_probe_cast *k, float s_t, uint64_t seed,
                           probe_sums *s)
{
	const quant_info *q = quant_get(k->fmt);
	quant_opts o = opts_of(k, c, seed);
	size_t bad;
	mp_status rc = quant_bulk(FMT_SIMD_AUTO, &o, s_t, 0, w->elems, w->scales, w->y, c->n, &bad);
	if (rc != MP_OK)
		return rc;
	const fmt_info *ef = fmt_get(q->elem);
	uint32_t max_bits = fmt_max_bits(ef);
	double t = q->nvfp4 ? (double)s_t : 1.0;
	double thr;
	bool tie_over;   /* saturated: the nearest element value lies past the largest (quant.h) */
	quant_overflow_threshold(ef, &thr, &tie_over);
	for (size_t b = 0; b < c->n / o.block; b++) {
		/* the block's unit (scale x tensor scale), then thr in its units: exact */
		double top = quant_decode(q, max_bits, w->scales[b], t) / fmt_max(ef) * thr;
		for (size_t i = o.block * b; i < o.block * (b + 1); i++) {
			double v = quant_decode(q, w->elems[i], w->scales[b], t);
			double a = fabs((double)w->y[i]);
			s->flushed += w->y[i] != 0 && v == 0;
			s->saturated += top > 0 && (a > top || (a == top && tie_over));
			w->q[i] = v;
		}
	}
	if (!k->rht)
		return MP_OK;
	for (size_t i = 0; i < c->n; i++)
		w->qf[i] = (float)w->q[i];
	block_rht16_rows_back(w->qf, c->n, 1, QUANT_RHT_SIGNS);
	for (size_t i = 0; i < c->n; i++)
		w->q[i] = w->qf[i];
	return MP_OK;
}

/* Adds draw r (from 0) of w->q to the sums and to Welford's recurrences. */
static void add_draw(probe_work *w, const float *x, const bool *is_outlier, size_t n, size_t r, probe_sums *s)
{
	for (size_t i = 0; i < n; i++) {
		double qv = w->q[i], e = qv - (double)x[i];
		if (is_outlier && is_outlier[i])
			s->e2_out += e * e;
		else
			s->e2_in += e * e;
		double d = qv - w->mean[i];
		w->mean[i] += d / (double)(r + 1);
		w->m2[i] += d * (qv - w->mean[i]);
	}
}

static double ratio_sqrt(double num, double den)
{
	return den > 0 ? sqrt(num / den) : 0.0;
}

/* The arm's figures from the sums and the recurrences over R draws. */
static void arm_figures(rht_probe_arm *out, const probe_work *w, const float *x, const rht_probe_cfg *c,
                        const probe_sums *s)
{
	double R = (double)c->draws, n = (double)c->n, x2 = s->x2_in + s->x2_out;
	out->error = ratio_sqrt((s->e2_in + s->e2_out) / R, x2);
	out->inlier_error = ratio_sqrt(s->e2_in / R, s->x2_in);
	out->outlier_error = ratio_sqrt(s->e2_out / R, s->x2_out);
	out->flushed = (double)s->flushed / (R * n);
	out->saturated = (double)s->saturated / (R * n);
	if (c->draws < 2)
		return;
	double var = 0, b2 = 0;
	for (size_t i = 0; i < c->n; i++) {
		double d = w->mean[i] - (double)x[i];
		var += w->m2[i] / (R - 1);
		b2 += d * d;
	}
	out->sr_var = x2 > 0 ? (var / n) / (x2 / n) : 0.0;
	out->sr_bias = ratio_sqrt(b2, x2);
	out->sr_noise = sqrt(out->sr_var / R);
}

mp_status rht_probe_run(rht_probe_arm *out, const float *x, const bool *is_outlier, const rht_probe_cfg *c,
                        const rht_probe_cast *k)
{
	*out = (rht_probe_arm){ 0 };
	if (rht_probe_cfg_check(c, NULL, 0) != MP_OK || rht_probe_cast_check(k, c, NULL, 0) != MP_OK)
		return MP_EINVAL;
	const quant_info *q = quant_get(k->fmt);
	size_t block = opts_of(k, c, 0).block;
	probe_work w;
	if (!work_alloc(&w, c->n, block)) {
		work_free(&w);
		return MP_ENOMEM;
	}
	memcpy(w.y, x, c->n * sizeof *w.y);
	if (k->rht)
		block_rht16_rows(w.y, c->n, 1, QUANT_RHT_SIGNS);
	size_t bad;
	mp_status rc = MP_OK;
	out->tensor_scale = 1.0f;
	if (q->nvfp4)
		rc = quant_bulk_tensor_scale(&out->tensor_scale, w.y, c->n, &bad);
	out->bits = quant_bits_per_elem(q, block) + (q->nvfp4 ? 32.0 / (double)c->n : 0.0);
	probe_sums s = { 0 };
	for (size_t i = 0; i < c->n; i++) {
		double v = (double)x[i] * (double)x[i];
		if (is_outlier && is_outlier[i])
			s.x2_out += v;
		else
			s.x2_in += v;
	}
	uint64_t base = rng_mix64(c->seed);
	for (size_t r = 0; rc == MP_OK && r < c->draws; r++) {
		rc = cast_draw(&w, c, k, out->tensor_scale, rng_mix64(base + r), &s);
		if (rc == MP_OK)
			add_draw(&w, x, is_outlier, c->n, r, &s);
	}
	if (rc == MP_OK)
		arm_figures(out, &w, x, c, &s);
	work_free(&w);
	return rc;
}
