/* The drift simulation on the GPU: one thread per element keeps the fp64
 * reference and every variant in registers over a run of steps, draws each
 * update with the CPU's drift_update_draw and rounds with the CPU's
 * bulk_quantize1, in the order drift.c does: the same bits as the CPU. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

extern "C" {
#include "drift/drift_gpu.h"
#include "drift/drift_update.h"
#include "fmt/bulk_impl.h"
#include "gpu/gpu.h"
#include "gpu/gpu_internal.h"
}

struct gpu_drift {
	gpu_drift_params p;
	double *x64;                  /* (E) */
	float *x[GPU_DRIFT_NF];       /* (E) each */
	float *comp;                  /* (E) bf16-kahan's compensation */
	unsigned long long *count;    /* (GPU_DRIFT_NF + 1) unchanged updates, fp64 first */
};

/* The variants' rounding: formats and modes as drift_apply chooses them. */
struct drift_rounding {
	bulk_params fp32, bf16, bf16_sr, fp16;
};

enum { V_FP32, V_BF16_RNE, V_BF16_SR, V_BF16_KAHAN, V_FP16_RNE };
enum { DRIFT_THREADS = 256 };

static bulk_params params(fmt_id fmt, fmt_mode mode, uint64_t seed)
{
	fmt_bulk_opts o;
	memset(&o, 0, sizeof o);
	o.fmt = fmt;
	o.mode = mode;
	o.seed = seed;
	bulk_params p;
	bulk_params_init(&p, &o);
	return p;
}

__device__ static inline void warp_count_add(unsigned long long *total, unsigned long long c)
{
	for (int o = 16; o > 0; o >>= 1)
		c += __shfl_down_sync(0xffffffffu, c, o);
	if ((threadIdx.x & 31) == 0 && c)
		atomicAdd(total, c);
}

__global__ static void drift_kernel(drift_rounding q, gpu_drift_params p, uint64_t step0, size_t nsteps,
                                    double *x64, float *x0, float *x1, float *x2, float *x3, float *x4, float *comp,
                                    unsigned long long *unchanged)
{
	size_t E = p.elements, stride = (size_t)gridDim.x * blockDim.x;
	size_t span = (E + stride - 1) / stride * stride;
	uint32_t same[GPU_DRIFT_NF + 1] = { 0 };
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < span; i += stride) {
		if (i >= E)
			continue;
		double r64 = x64[i];
		float a = x0[i], b = x1[i], c = x2[i], d = x3[i], e = x4[i], k = comp[i];
		for (size_t s = 0; s < nsteps; s++) {
			uint64_t step = step0 + s;
			float u = drift_update_draw(p.dist, p.mean, p.std, p.seed, E, step, i);
			double n64 = __dadd_rn(r64, (double)u);
			same[0] += n64 == r64;
			r64 = n64;
			float old = a;   /* fp32 */
			a = bulk_quantize1(&q.fp32, __fadd_rn(old, u), 0);
			same[1 + V_FP32] += a == old;
			old = b;         /* bf16 rne */
			b = bulk_quantize1(&q.bf16, __fadd_rn(old, u), 0);
			same[1 + V_BF16_RNE] += b == old;
			old = c;         /* bf16 sr: index step * E + element, as drift.c numbers it */
			c = bulk_quantize1(&q.bf16_sr, __fadd_rn(old, u), rng_bits(p.seed, step * E + i));
			same[1 + V_BF16_SR] += c == old;
			old = d;         /* bf16 kahan */
			float y = __fsub_rn(u, k);
			float t = bulk_quantize1(&q.bf16, __fadd_rn(old, y), 0);
			k = bulk_quantize1(&q.bf16, __fsub_rn(__fsub_rn(t, old), y), 0);
			d = t;
			same[1 + V_BF16_KAHAN] += d == old;
			old = e;         /* fp16 rne */
			e = bulk_quantize1(&q.fp16, __fadd_rn(old, u), 0);
			same[1 + V_FP16_RNE] += e == old;
		}
		x64[i] = r64;
		x0[i] = a;
		x1[i] = b;
		x2[i] = c;
		x3[i] = d;
		x4[i] = e;
		comp[i] = k;
	}
	for (int v = 0; v <= GPU_DRIFT_NF; v++)
		warp_count_add(&unchanged[v], same[v]);
}

__global__ static void drift_fill(double *x64, double v64, float *x0, float *x1, float *x2, float *x3, float *x4,
                                  float *comp, gpu_drift_params p)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.elements; i += stride) {
		x64[i] = v64;
		x0[i] = p.start[0];
		x1[i] = p.start[1];
		x2[i] = p.start[2];
		x3[i] = p.start[3];
		x4[i] = p.start[4];
		comp[i] = 0.0f;
	}
}

static unsigned drift_grid(size_t E)
{
	size_t want = (E + DRIFT_THREADS - 1) / DRIFT_THREADS, cap = (size_t)gpu_sm_count() * 32;
	return (unsigned)(want < 1 ? 1 : want < cap ? want : cap);
}

extern "C" void gpu_drift_free(gpu_drift *s)
{
	if (!s)
		return;
	/* gpu_free records a failure (usually an earlier kernel's) in gpu/'s record */
	gpu_free(s->x64);
	for (int v = 0; v < GPU_DRIFT_NF; v++)
		gpu_free(s->x[v]);
	gpu_free(s->comp);
	gpu_free(s->count);
	free(s);
}

static mp_status drift_create_on(gpu_drift **out, const gpu_drift_params *p)
{
	*out = NULL;
	mp_status st = gpu_require();
	if (st != MP_OK)
		return st;
	if (p->elements == 0)
		return MP_EINVAL;
	gpu_drift *s = (gpu_drift *)calloc(1, sizeof *s);
	if (!s)
		return MP_ENOMEM;
	s->p = *p;
	size_t E = p->elements;
	st = gpu_status_of(cudaMalloc(&s->x64, E * sizeof(double)), "GPU memory for the drift state");
	for (int v = 0; v < GPU_DRIFT_NF && st == MP_OK; v++)
		st = gpu_status_of(cudaMalloc(&s->x[v], E * sizeof(float)), "GPU memory for the drift state");
	if (st == MP_OK)
		st = gpu_status_of(cudaMalloc(&s->comp, E * sizeof(float)), "GPU memory for the drift state");
	if (st == MP_OK)
		st = gpu_status_of(cudaMalloc(&s->count, (GPU_DRIFT_NF + 1) * sizeof *s->count), "cudaMalloc");
	if (st == MP_OK)
		st = gpu_status_of(cudaMemset(s->count, 0, (GPU_DRIFT_NF + 1) * sizeof *s->count), "cudaMemset");
	if (st == MP_OK) {
		drift_fill<<<drift_grid(E), DRIFT_THREADS>>>(s->x64, p->start64, s->x[0], s->x[1], s->x[2], s->x[3],
		                                             s->x[4], s->comp, *p);
		st = gpu_status_of(cudaGetLastError(), "drift start kernel");
	}
	if (st != MP_OK) {
		gpu_drift_free(s);
		return st;
	}
	*out = s;
	return MP_OK;
}

static mp_status drift_advance_on(gpu_drift *s, uint64_t step0, size_t n)
{
	if (n == 0)
		return MP_OK;
	mp_status st = MP_OK;
	drift_rounding q;
	q.fp32 = params(FMT_FP32, FMT_RNE, s->p.seed);
	q.bf16 = params(FMT_BF16, FMT_RNE, s->p.seed);
	q.bf16_sr = params(FMT_BF16, FMT_SR, s->p.seed);
	q.fp16 = params(FMT_FP16, FMT_RNE, s->p.seed);
	/* long runs in pieces, so that no launch runs for seconds (a display
	 * GPU's watchdog) and a per-thread count cannot overflow */
	size_t piece = (size_t)1 << 30;
	size_t per = s->p.elements >= piece ? 1 : piece / s->p.elements;
	for (size_t done = 0; done < n && st == MP_OK;) {
		size_t m = n - done < per ? n - done : per;
		drift_kernel<<<drift_grid(s->p.elements), DRIFT_THREADS>>>(q, s->p, step0 + done, m, s->x64, s->x[0],
		                                                            s->x[1], s->x[2], s->x[3], s->x[4], s->comp,
		                                                            s->count);
		st = gpu_status_of(cudaGetLastError(), "drift kernel");
		done += m;
	}
	/* wait: the caller's progress report and Ctrl-C act between calls */
	if (st == MP_OK)
		st = gpu_status_of(cudaDeviceSynchronize(), "drift kernel");
	return st;
}

static mp_status drift_read_on(gpu_drift *s, double *x64, float *const x[GPU_DRIFT_NF], float *comp,
                               uint64_t unchanged[GPU_DRIFT_NF + 1])
{
	size_t E = s->p.elements;
	mp_status st = gpu_get(x64, s->x64, E * sizeof(double));
	for (int v = 0; v < GPU_DRIFT_NF && st == MP_OK; v++)
		st = gpu_get(x[v], s->x[v], E * sizeof(float));
	if (st == MP_OK)
		st = gpu_get(comp, s->comp, E * sizeof(float));
	unsigned long long c[GPU_DRIFT_NF + 1];
	if (st == MP_OK)
		st = gpu_get(c, s->count, sizeof c);
	for (int v = 0; v <= GPU_DRIFT_NF && st == MP_OK; v++)
		unchanged[v] = c[v];
	return st;
}

/* drift/drift_gpu.h's boundaries: the sentence of a failure goes into the
 * caller's err. */
extern "C" mp_status gpu_drift_create(gpu_drift **out, const gpu_drift_params *p, char *err, size_t errlen)
{
	gpu_clear_error();
	return gpu_error_out(drift_create_on(out, p), err, errlen);
}

extern "C" mp_status gpu_drift_advance(gpu_drift *s, uint64_t step0, size_t n, char *err, size_t errlen)
{
	gpu_clear_error();
	return gpu_error_out(drift_advance_on(s, step0, n), err, errlen);
}

extern "C" mp_status gpu_drift_read(gpu_drift *s, double *x64, float *const x[GPU_DRIFT_NF], float *comp,
                                    uint64_t unchanged[GPU_DRIFT_NF + 1], char *err, size_t errlen)
{
	gpu_clear_error();
	return gpu_error_out(drift_read_on(s, x64, x, comp, unchanged), err, errlen);
}
