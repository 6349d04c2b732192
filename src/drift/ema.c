#include <math.h>
#include <stdlib.h>

#include "drift/ema.h"
#include "fmt/bulk.h"
#include "fmt/decode.h"
#include "util/hd.h"

ema_params ema_defaults(void)
{
	return (ema_params){ .beta2 = 0.999, .g2 = 1.0, .fmt = FMT_BF16, .mode = FMT_RNE, .steps = 20000,
		             .elements = 1000, .seed = 0 };
}

/* fl32(fl32(b v) + fl32(c g2)): each operation rounded to fp32, never fused */
static MP_NO_CONTRACT float ema_step32(float b, float c, float v, float g2)
{
	float bv = b * v, cg = c * g2;
	return bv + cg;
}

/* Half the distance from x (a value of f) to the next larger value of f. */
static double half_spacing_above(fmt_id f, float x)
{
	if (f == FMT_FP32)
		return 0.5 * ((double)nextafterf(x, INFINITY) - (double)x);
	uint32_t bits = 0;
	fmt_bulk_opts o = { .fmt = f, .mode = FMT_RNE };
	size_t w = fmt_bulk_elem_size(f);
	unsigned char buf[4] = { 0 };
	if (fmt_bulk_encode(FMT_SIMD_AUTO, &o, buf, &x, 1) != MP_OK)
		return NAN;
	bits = w == 1 ? buf[0] : w == 2 ? *(uint16_t *)(void *)buf : *(uint32_t *)(void *)buf;
	fmt_decoded d;
	fmt_decode(fmt_get(f), bits, &d);
	return 0.5 * d.ulp;
}

static mp_status ema_check(const ema_params *p)
{
	if (!(p->beta2 > 0 && p->beta2 < 1) || !isfinite(p->g2) || p->g2 < 0 || p->steps == 0 || p->elements == 0)
		return MP_EINVAL;
	if (p->mode != FMT_RNE && p->mode != FMT_SR)
		return MP_EINVAL;
	return MP_OK;
}

mp_status ema_run(const ema_params *p, ema_emit emit, void *ctx, ema_result *out)
{
	*out = (ema_result){ .stall_value = NAN };
	mp_status st = ema_check(p);
	if (st != MP_OK)
		return st;
	/* RNE is deterministic: every element is the same, one is enough */
	size_t E = p->mode == FMT_RNE ? 1 : p->elements;
	float *v = calloc(2 * E, sizeof *v), *prev = v + E;
	if (!v)
		return MP_ENOMEM;
	float b = (float)p->beta2, c = 1.0f - b, g2 = (float)p->g2, v32 = 0;
	double v64 = 0;
	size_t unchanged = 0;
	fmt_bulk_opts o = { .fmt = p->fmt, .mode = p->mode, .seed = p->seed };
	for (size_t n = 1; n <= p->steps && st == MP_OK; n++) {
		for (size_t i = 0; i < E; i++) {
			prev[i] = v[i];
			v[i] = ema_step32(b, c, v[i], g2);
		}
		/* element i of step n draws index (n - 1) E + i of the SR stream */
		o.index0 = (uint64_t)(n - 1) * E;
		st = fmt_bulk_quantize(FMT_SIMD_AUTO, &o, v, E);
		double sum = 0;
		for (size_t i = 0; i < E; i++) {
			unchanged += v[i] == prev[i];
			sum += v[i];
		}
		if (p->mode == FMT_RNE && !out->stalled && v[0] == prev[0] && st == MP_OK) {
			out->stalled = 1;
			out->stall_value = v[0];
			out->stall_steps = n - 1;
			out->increment = (double)ema_step32(b, c, v[0], g2) - (double)v[0];
			out->half_spacing = half_spacing_above(p->fmt, v[0]);
		}
		v32 = ema_step32(b, c, v32, g2);
		v64 = p->beta2 * v64 + (1 - p->beta2) * p->g2;
		out->final = (ema_state){ .step = n, .v = sum / (double)E, .v32 = v32, .v64 = v64,
			                  .unchanged_frac = (double)unchanged / ((double)n * (double)E) };
		if (emit && st == MP_OK)
			emit(ctx, &out->final);
	}
	free(v);
	return st;
}
