#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "drift/drift.h"
#include "drift/drift_update.h"
#include "fmt/bulk.h"
#include "fmt/decode.h"
#include "fmt/round.h"
#include "drift/drift_gpu.h"
#include "util/rng.h"

/* Updates are generated and applied in chunks that stay in cache: the update
 * chunk is shared by all variants and never goes to memory. */
#define CHUNK 4096

struct drift_sim {
	drift_params p;
	size_t step;
	double *x64;                           /* (E) */
	float *x[DRIFT_VARIANT_COUNT];         /* (E) each; unused for fp64 */
	float *comp;                           /* (E) Kahan compensation */
	double start[DRIFT_VARIANT_COUNT];
	uint64_t unchanged[DRIFT_VARIANT_COUNT];
	gpu_drift *gpu;                        /* DRIFT_DEVICE_CUDA: the state lives there */
	bool stale;                            /* the host arrays lag the GPU's state */
	mp_status status;
	char err[512];                         /* drift_error: why the GPU stopped */
};

static const char *const variant_names[DRIFT_VARIANT_COUNT] = {
	[DRIFT_FP64] = "fp64", [DRIFT_FP32] = "fp32", [DRIFT_BF16_RNE] = "bf16-rne",
	[DRIFT_BF16_SR] = "bf16-sr", [DRIFT_BF16_KAHAN] = "bf16-kahan", [DRIFT_FP16_RNE] = "fp16-rne",
};

const char *drift_variant_name(drift_variant v)
{
	return (unsigned)v < DRIFT_VARIANT_COUNT ? variant_names[v] : "?";
}

const char *drift_dist_name(drift_dist d)
{
	switch (d) {
	case DRIFT_DIST_CONSTANT: return "constant";
	case DRIFT_DIST_UNIFORM:  return "uniform";
	case DRIFT_DIST_NORMAL:   return "normal";
	}
	return "?";
}

mp_status drift_dist_parse(const char *name, drift_dist *d)
{
	for (int i = DRIFT_DIST_CONSTANT; i <= DRIFT_DIST_NORMAL; i++) {
		if (!strcasecmp(name, drift_dist_name((drift_dist)i))) {
			*d = (drift_dist)i;
			return MP_OK;
		}
	}
	return MP_EINVAL;
}

drift_params drift_defaults(void)
{
	return (drift_params){ .elements = 1000, .steps = 10000, .x0 = 600, .dist = DRIFT_DIST_NORMAL,
	                       .mean = 0.5, .std = 0.5, .seed = 0 };
}

/* --- updates --- */

_Static_assert(DRIFT_DIST_CONSTANT == 0 && DRIFT_DIST_UNIFORM == 1 && DRIFT_DIST_NORMAL == 2,
               "drift_update_draw numbers the distributions so");

float drift_update_value(const drift_params *p, uint64_t step, uint64_t element)
{
	return drift_update_draw((int)p->dist, p->mean, p->std, p->seed, p->elements, step, element);
}

/* --- applying updates --- */

static fmt_id variant_format(drift_variant v)
{
	switch (v) {
	case DRIFT_FP16_RNE: return FMT_FP16;
	case DRIFT_FP32:     return FMT_FP32;
	default:             return FMT_BF16;
	}
}

size_t drift_apply(drift_variant v, float *x, float *comp, const float *u, size_t n, uint64_t seed,
                   uint64_t index0)
{
	fmt_bulk_opts o = { .fmt = variant_format(v), .mode = v == DRIFT_BF16_SR ? FMT_SR : FMT_RNE,
	                    .seed = seed, .index0 = index0 };
	size_t unchanged = 0;
	fmt_bulk_accumulate(FMT_SIMD_AUTO, &o, x, v == DRIFT_BF16_KAHAN ? comp : NULL, u, n, &unchanged);
	return unchanged;
}

/* --- the simulation --- */

mp_status drift_create(drift_sim **out, const drift_params *p, char *err, size_t errlen)
{
	*out = NULL;
	if (p->elements == 0 || !isfinite(p->x0) || !isfinite(p->mean) || !isfinite(p->std) || p->std < 0)
		return mp_fail(MP_EINVAL, err, errlen, "%s", mp_status_message(MP_EINVAL));
	drift_sim *s = calloc(1, sizeof *s);
	if (!s)
		return mp_fail(MP_ENOMEM, err, errlen, "%s", mp_status_message(MP_ENOMEM));
	s->p = *p;
	size_t E = p->elements;
	s->x64 = malloc(E * sizeof *s->x64);
	s->comp = calloc(E, sizeof *s->comp);
	bool ok = s->x64 && s->comp;
	for (int v = 1; v < DRIFT_VARIANT_COUNT && ok; v++)
		ok = (s->x[v] = malloc(E * sizeof(float))) != NULL;
	if (!ok) {
		drift_free(s);
		return mp_fail(MP_ENOMEM, err, errlen, "%s", mp_status_message(MP_ENOMEM));
	}
	s->start[DRIFT_FP64] = p->have_starts ? p->starts[DRIFT_FP64] : p->x0;
	for (size_t i = 0; i < E; i++)
		s->x64[i] = s->start[DRIFT_FP64];
	for (int v = 1; v < DRIFT_VARIANT_COUNT; v++) {
		/* x0 as the variant stores it (RNE), from the exact value when given */
		fmt_round_ctl ctl = { .mode = FMT_RNE };
		const fmt_info *f = fmt_get(variant_format((drift_variant)v));
		float x = p->have_starts ? (float)p->starts[v]
		                         : (float)fmt_to_double(f, fmt_round_double(f, &ctl, p->x0, NULL));
		s->start[v] = x;
		for (size_t i = 0; i < E; i++)
			s->x[v][i] = x;
	}
	if (p->device == DRIFT_DEVICE_CUDA) {
		gpu_drift_params g = { .elements = E, .dist = (int)p->dist, .mean = p->mean, .std = p->std,
		                       .seed = p->seed, .start64 = s->start[DRIFT_FP64] };
		_Static_assert(GPU_DRIFT_NF == DRIFT_VARIANT_COUNT - 1, "the GPU runs every variant but fp64");
		for (int v = 1; v < DRIFT_VARIANT_COUNT; v++)
			g.start[v - 1] = (float)s->start[v];
		mp_status st = gpu_drift_create(&s->gpu, &g, err, errlen);
		if (st != MP_OK) {
			drift_free(s);
			return st;
		}
	}
	*out = s;
	return MP_OK;
}

void drift_free(drift_sim *s)
{
	if (!s)
		return;
	free(s->x64);
	free(s->comp);
	for (int v = 0; v < DRIFT_VARIANT_COUNT; v++)
		free(s->x[v]);
	gpu_drift_free(s->gpu);
	free(s);
}

/* The GPU's advance: the kernels only; the snapshot copies the state back. */
static size_t advance_gpu(drift_sim *s, size_t n)
{
	if (s->status != MP_OK)
		return s->step;
	size_t m = s->p.steps - s->step < n ? s->p.steps - s->step : n;
	mp_status st = gpu_drift_advance(s->gpu, s->step, m, s->err, sizeof s->err);
	if (st != MP_OK) {
		s->status = st;
	} else {
		s->step += m;
		s->stale = true;
	}
	return s->step;
}

/* Brings the host arrays up to the GPU's state, for the snapshot: the host
 * computes the means exactly as for the CPU path. The arrays are a cache of
 * the device state, so a const simulation may refresh them. */
static void refresh_from_gpu(const drift_sim *cs)
{
	drift_sim *s = (drift_sim *)cs;
	if (!s->gpu || !s->stale || s->status != MP_OK)
		return;
	float *x[GPU_DRIFT_NF];
	for (int v = 1; v < DRIFT_VARIANT_COUNT; v++)
		x[v - 1] = s->x[v];
	mp_status st = gpu_drift_read(s->gpu, s->x64, x, s->comp, s->unchanged, s->err, sizeof s->err);
	if (st != MP_OK)
		s->status = st;
	s->stale = false;
}

mp_status drift_status(const drift_sim *s)
{
	return s->status;
}

const char *drift_error(const drift_sim *s)
{
	return s->err;
}

size_t drift_advance(drift_sim *s, size_t n)
{
	if (s->gpu)
		return advance_gpu(s, n);
	size_t E = s->p.elements;
	float u[CHUNK];
	for (size_t k = 0; k < n && s->step < s->p.steps; k++, s->step++) {
		for (size_t c0 = 0; c0 < E; c0 += CHUNK) {
			size_t m = E - c0 < CHUNK ? E - c0 : CHUNK;
			for (size_t i = 0; i < m; i++)
				u[i] = drift_update_value(&s->p, s->step, c0 + i);
			for (size_t i = 0; i < m; i++) {
				double before = s->x64[c0 + i];
				s->x64[c0 + i] = before + (double)u[i];
				s->unchanged[DRIFT_FP64] += s->x64[c0 + i] == before;
			}
			for (int v = 1; v < DRIFT_VARIANT_COUNT; v++) {
				/* SR index: every (step, element) pair once */
				uint64_t index0 = (uint64_t)s->step * E + c0;
				s->unchanged[v] += drift_apply((drift_variant)v, s->x[v] + c0,
				                               v == DRIFT_BF16_KAHAN ? s->comp + c0 : NULL, u, m,
				                               s->p.seed, index0);
			}
		}
	}
	return s->step;
}

size_t drift_step_count(const drift_sim *s)
{
	return s->step;
}

void drift_snapshot(const drift_sim *s, drift_state out[DRIFT_VARIANT_COUNT])
{
	refresh_from_gpu(s);
	size_t E = s->p.elements;
	double updates = (double)s->step * (double)E;
	for (int v = 0; v < DRIFT_VARIANT_COUNT; v++) {
		double sum = 0;
		for (size_t i = 0; i < E; i++)
			sum += v == DRIFT_FP64 ? s->x64[i] : (double)s->x[v][i];
		out[v].start = s->start[v];
		out[v].mean = sum / (double)E;
		out[v].drift = out[v].mean - s->start[v];
		out[v].unchanged_frac = updates > 0 ? (double)s->unchanged[v] / updates : 0.0;
	}
	for (int v = 0; v < DRIFT_VARIANT_COUNT; v++)
		out[v].retained = out[DRIFT_FP64].drift != 0 && isfinite(out[v].start)
		                  ? out[v].drift / out[DRIFT_FP64].drift : NAN;
}
