/* GPU throughput against a device-to-device copy measured in the same run.
 * Plain C over gpu.h, so a build without CUDA compiles it too (and every
 * call then fails with "built without CUDA"). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drift/drift_gpu.h"
#include "gpu/gpu.h"
#include "gpu/gpu_internal.h"
#include "util/rng.h"

/* Launches per timed batch: a launch costs microseconds, a pass over the
 * default array about a millisecond; batching keeps the overhead out. */
enum { BATCH = 8, DRIFT_STEPS = 64 };

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef enum { K_COPY, K_ENCODE, K_DECODE, K_QUANTIZE, K_ACCUMULATE } kind;

typedef struct {
	const char *name;
	kind kind;
	fmt_id fmt;
	fmt_mode mode;
	int kahan;
} kernel;

typedef struct {
	float *in, *out, *u, *comp;
	float *src;   /* round only: the input as filled, to restore in from */
	size_t n;
} buffers;

static mp_status run_once(const kernel *k, const buffers *b)
{
	fmt_bulk_opts o = { .fmt = k->fmt, .mode = k->mode, .seed = 42 };
	switch (k->kind) {
	case K_COPY:       return gpu_copy(b->out, b->in, b->n * sizeof(float));
	case K_ENCODE:     return gpu_bulk_encode(&o, b->out, b->in, b->n);
	case K_DECODE:     return gpu_bulk_decode(k->fmt, b->in, b->out, b->n);
	case K_QUANTIZE:   return gpu_bulk_quantize(&o, b->out, b->n);
	case K_ACCUMULATE: return gpu_bulk_accumulate(&o, b->out, k->kahan ? b->comp : NULL, b->u, b->n, NULL);
	}
	return MP_EINVAL;
}

/* Seconds per pass, best of reps batches. */
static mp_status time_kernel(const kernel *k, const buffers *b, unsigned reps, double *best)
{
	*best = 1e30;
	mp_status st = run_once(k, b);   /* warm-up */
	if (st == MP_OK)
		st = gpu_sync();
	for (unsigned r = 0; r < reps && st == MP_OK; r++) {
		double t0 = now();
		for (int i = 0; i < BATCH && st == MP_OK; i++)
			st = run_once(k, b);
		if (st == MP_OK)
			st = gpu_sync();
		double t = (now() - t0) / BATCH;
		if (t < *best)
			*best = t;
	}
	return st;
}

static double traffic_per_elem(const kernel *k)
{
	double es = (double)fmt_bulk_elem_size(k->fmt);
	switch (k->kind) {
	case K_COPY:       return 8;
	case K_ENCODE:     return 4 + es;
	case K_DECODE:     return es + 4;
	case K_QUANTIZE:   return 8;
	case K_ACCUMULATE: return k->kahan ? 20 : 12;
	}
	return 0;
}

static void buffers_free(buffers *b)
{
	gpu_free(b->in);
	gpu_free(b->out);
	gpu_free(b->u);
	gpu_free(b->comp);
	gpu_free(b->src);
}

/* in: normal values of mixed magnitude (as the CPU bench), kept also in src
 * for round; out, comp zero; u: small updates. */
static mp_status buffers_init(buffers *b, size_t mib, int drift)
{
	memset(b, 0, sizeof *b);
	b->n = (mib << 20) / sizeof(float);
	size_t bytes = b->n * sizeof(float);
	mp_status st = gpu_alloc((void **)&b->in, bytes);
	if (st == MP_OK)
		st = gpu_alloc((void **)&b->out, bytes);
	if (st == MP_OK && drift)
		st = gpu_alloc((void **)&b->u, bytes);
	if (st == MP_OK && drift)
		st = gpu_alloc((void **)&b->comp, bytes);
	if (st == MP_OK && !drift)
		st = gpu_alloc((void **)&b->src, bytes);
	/* filled on the host a slice at a time */
	size_t chunk = (size_t)1 << 22;
	float *h = st == MP_OK ? malloc(chunk * sizeof *h) : NULL;
	if (st == MP_OK && !h)
		st = MP_ENOMEM;
	for (size_t i0 = 0; i0 < b->n && st == MP_OK; i0 += chunk) {
		size_t m = b->n - i0 < chunk ? b->n - i0 : chunk;
		for (size_t i = 0; i < m; i++) {
			uint32_t r = rng_bits(7, i0 + i);
			uint32_t bits = (r & 0x807fffffu) | ((uint32_t)(100 + (r >> 23) % 56) << 23);
			memcpy(&h[i], &bits, 4);
		}
		st = gpu_put(b->in + i0, h, m * sizeof(float));
		if (st == MP_OK && drift) {
			for (size_t i = 0; i < m; i++)
				h[i] = 0.5f + (float)(rng_bits(8, i0 + i) >> 8) * 0x1p-24f;
			st = gpu_put(b->u + i0, h, m * sizeof(float));
			for (size_t i = 0; i < m && st == MP_OK; i++)
				h[i] = 600.0f;
			if (st == MP_OK)
				st = gpu_put(b->out + i0, h, m * sizeof(float));
			memset(h, 0, m * sizeof(float));
			if (st == MP_OK)
				st = gpu_put(b->comp + i0, h, m * sizeof(float));
		}
	}
	free(h);
	if (st == MP_OK && b->src)
		st = gpu_copy(b->src, b->in, bytes);
	if (st != MP_OK)
		buffers_free(b);
	return st;
}

static mp_status bench_round(size_t mib, unsigned reps, gpu_bench_emit emit, void *ctx)
{
	static const kernel kernels[] = {
		{ "cudaMemcpy d2d (baseline)", K_COPY, FMT_FP32, FMT_RNE, 0 },
		{ "fp32->bf16 rne", K_ENCODE, FMT_BF16, FMT_RNE, 0 },
		{ "fp32->bf16 sr", K_ENCODE, FMT_BF16, FMT_SR, 0 },
		{ "fp32->fp16 rne", K_ENCODE, FMT_FP16, FMT_RNE, 0 },
		{ "fp32->fp16 sr", K_ENCODE, FMT_FP16, FMT_SR, 0 },
		{ "fp32->fp8-e4m3 rne", K_ENCODE, FMT_E4M3, FMT_RNE, 0 },
		{ "fp32->fp8-e4m3 sr", K_ENCODE, FMT_E4M3, FMT_SR, 0 },
		{ "fp32->fp8-e5m2 rne", K_ENCODE, FMT_E5M2, FMT_RNE, 0 },
		{ "fp32->fp8-e5m2 sr", K_ENCODE, FMT_E5M2, FMT_SR, 0 },
		{ "bf16->fp32", K_DECODE, FMT_BF16, FMT_RNE, 0 },
		{ "fp16->fp32", K_DECODE, FMT_FP16, FMT_RNE, 0 },
		{ "fp8-e4m3->fp32", K_DECODE, FMT_E4M3, FMT_RNE, 0 },
		{ "quantize bf16 rne (in place)", K_QUANTIZE, FMT_BF16, FMT_RNE, 0 },
		{ "quantize bf16 sr (in place)", K_QUANTIZE, FMT_BF16, FMT_SR, 0 },
	};
	buffers b;
	mp_status st = buffers_init(&b, mib, 0);
	double base = 0;
	for (size_t i = 0; i < sizeof kernels / sizeof kernels[0] && st == MP_OK; i++) {
		const kernel *k = &kernels[i];
		/* Every kernel starts from the same input: a decode writes into in
		 * (fp16 and e4m3 of these values hold inf and NaN, on which SR skips
		 * its random bits), and quantize works in place on out, so both are
		 * restored from src, untimed. */
		st = gpu_copy(b.in, b.src, b.n * sizeof(float));
		if (st == MP_OK && k->kind == K_QUANTIZE)
			st = gpu_copy(b.out, b.src, b.n * sizeof(float));
		if (st != MP_OK)
			break;
		if (k->kind == K_DECODE) {   /* decode reads what an encode wrote (untimed) */
			fmt_bulk_opts o = { .fmt = k->fmt, .mode = FMT_RNE };
			st = gpu_bulk_encode(&o, b.out, b.in, b.n);
			if (st != MP_OK)
				break;
		}
		double t;
		st = time_kernel(k, &b, reps, &t);
		if (st != MP_OK)
			break;
		double gbps = traffic_per_elem(k) * (double)b.n / t / 1e9;
		if (k->kind == K_COPY)
			base = gbps;
		gpu_bench_row row = { .name = k->name, .seconds = t, .rate = gbps, .ratio = gbps / base };
		emit(ctx, &row);
	}
	buffers_free(&b);
	return st;
}

static mp_status bench_drift(size_t mib, unsigned reps, gpu_bench_emit emit, void *ctx)
{
	static const kernel kernels[] = {
		{ "cudaMemcpy d2d (baseline)", K_COPY, FMT_FP32, FMT_RNE, 0 },
		{ "fp32", K_ACCUMULATE, FMT_FP32, FMT_RNE, 0 },
		{ "bf16-rne", K_ACCUMULATE, FMT_BF16, FMT_RNE, 0 },
		{ "bf16-sr", K_ACCUMULATE, FMT_BF16, FMT_SR, 0 },
		{ "bf16-kahan", K_ACCUMULATE, FMT_BF16, FMT_RNE, 1 },
		{ "fp16-rne", K_ACCUMULATE, FMT_FP16, FMT_RNE, 0 },
	};
	buffers b;
	mp_status st = buffers_init(&b, mib, 1);
	double traffic = 0;
	for (size_t i = 0; i < sizeof kernels / sizeof kernels[0] && st == MP_OK; i++) {
		const kernel *k = &kernels[i];
		double t;
		st = time_kernel(k, &b, reps, &t);
		if (st != MP_OK)
			break;
		if (k->kind == K_COPY) {
			traffic = 8.0 * (double)b.n / t;
			continue;
		}
		double ups = (double)b.n / t, bound = traffic / traffic_per_elem(k);
		gpu_bench_row row = { .name = k->name, .seconds = t, .rate = ups, .bound = bound, .ratio = ups / bound };
		emit(ctx, &row);
	}
	buffers_free(&b);
	if (st != MP_OK)
		return st;

	/* the whole simulation: E = the same number of values, DRIFT_STEPS steps
	 * per launch; one element-step updates all six variants, which through
	 * memory would move 20 (fp64) + 12 x 3 + 20 (kahan) + 12 = 88 bytes */
	gpu_drift_params p = { .elements = b.n, .dist = 2, .mean = 0.5, .std = 0.5, .seed = 1, .start64 = 600,
	                       .start = { 600, 600, 600, 600, 600 } };
	gpu_drift *s;
	st = gpu_drift_create(&s, &p, NULL, 0);
	if (st != MP_OK)
		return st;
	double best = 1e30;
	uint64_t step = 0;
	st = gpu_drift_advance(s, step, 1, NULL, 0);
	step++;
	if (st == MP_OK)
		st = gpu_sync();
	for (unsigned r = 0; r < reps && st == MP_OK; r++) {
		double t0 = now();
		st = gpu_drift_advance(s, step, DRIFT_STEPS, NULL, 0);
		step += DRIFT_STEPS;
		if (st == MP_OK)
			st = gpu_sync();
		double t = (now() - t0) / DRIFT_STEPS;
		best = t < best ? t : best;
	}
	gpu_drift_free(s);
	if (st == MP_OK) {
		double ups = (double)b.n / best, bound = traffic / 88.0;
		gpu_bench_row row = { .name = "simulation (all variants)", .seconds = best, .rate = ups, .bound = bound,
		                      .ratio = ups / bound };
		emit(ctx, &row);
	}
	return st;
}

/* The boundaries: the sentence of a failure, recorded inside gpu/, goes
 * into the caller's err. */
mp_status gpu_bench_round(size_t mib, unsigned reps, gpu_bench_emit emit, void *ctx, char *err, size_t errlen)
{
	gpu_clear_error();
	return gpu_error_out(bench_round(mib, reps, emit, ctx), err, errlen);
}

mp_status gpu_bench_drift(size_t mib, unsigned reps, gpu_bench_emit emit, void *ctx, char *err, size_t errlen)
{
	gpu_clear_error();
	return gpu_error_out(bench_drift(mib, reps, emit, ctx), err, errlen);
}
