#include <pthread.h>
#include <stdio.h>

#include "cli/bench.h"
#include "cli/bench_quant.h"
#include "quant/quant.h"

typedef struct {
	const char *name;
	quant_id fmt;
	fmt_mode mode;
} qkernel;

typedef struct {
	const qkernel *k;
	const float *in;
	uint8_t *elems, *scales;
	float s_t;
	size_t block;
} qslice;

static void qslice_run(const void *ctx, size_t begin, size_t end)
{
	const qslice *s = ctx;
	quant_opts o = { .fmt = s->k->fmt, .mode = s->k->mode, .seed = 42 };
	quant_bulk(FMT_SIMD_AUTO, &o, s->s_t, begin, s->elems + begin, s->scales + begin / s->block, s->in + begin,
	           end - begin, NULL);
}

/* Seconds for one pass on nthreads threads (slices of whole blocks, at
 * multiples of 64 elements). */
static double qtime(qslice proto, size_t n, int nthreads)
{
	return bench_parallel(qslice_run, &proto, n, nthreads);
}

void bench_quant_rows(csvw *w, const float *in, void *out, size_t n, int nthreads, unsigned reps, double base)
{
	static const qkernel kernels[] = {
		{ "block mxfp8-e4m3 rne", QUANT_MXFP8_E4M3, FMT_RNE },
		{ "block mxfp8-e4m3 sr", QUANT_MXFP8_E4M3, FMT_SR },
		{ "block mxfp4 rne", QUANT_MXFP4, FMT_RNE },
		{ "block nvfp4 rne", QUANT_NVFP4, FMT_RNE },
		{ "block nvfp4 sr", QUANT_NVFP4, FMT_SR },
	};
	const char *path = fmt_simd_name(fmt_simd_best());
	float s_t = 0;
	quant_bulk_tensor_scale(&s_t, in, n, NULL);
	for (size_t ki = 0; ki < sizeof kernels / sizeof kernels[0]; ki++) {
		const quant_info *q = quant_get(kernels[ki].fmt);
		if (!q->name)
			continue;
		qslice proto = { .k = &kernels[ki], .in = in, .elems = out, .scales = (uint8_t *)out + n,
		                 .s_t = s_t, .block = (size_t)q->block };
		double best = 1e30;
		for (unsigned r = 0; r < reps; r++) {
			double t = qtime(proto, n, nthreads);
			best = t < best ? t : best;
		}
		double gbps = (5.0 + 1.0 / q->block) * (double)n / best / 1e9;
		bench_round_row(w, nthreads, kernels[ki].name, path, best, gbps, base);
		fflush(stdout);
	}
}
