/* The CUDA device layer: detection, memory, and the bulk rounding kernels.
 *
 * The kernels call the CPU's own per-element functions (bulk_encode1,
 * bulk_decode1, rng_bits: __host__ __device__ through util/hd.h), so the
 * GPU and the CPU share one formula and give the same bits. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

extern "C" {
#include "fmt/bulk_impl.h"
#include "gpu/gpu.h"
#include "gpu/gpu_internal.h"
}
#include "gpu/gpu_bulk_body.h"

/* --- errors --- */

static thread_local char last_error[512];

extern "C" void gpu_clear_error(void)
{
	last_error[0] = '\0';
}

extern "C" bool gpu_failed(void)
{
	return last_error[0] != '\0';
}

extern "C" const char *gpu_last_error(void)
{
	return last_error[0] ? last_error : "no error";
}

extern "C" void gpu_set_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof last_error, fmt, ap);
	va_end(ap);
}

extern "C" mp_status gpu_error_out(mp_status st, char *err, size_t errlen)
{
	if (st != MP_OK && errlen > 0)
		snprintf(err, errlen, "%s", last_error[0] ? last_error : mp_status_message(st));
	return st;
}

/* A CUDA error as a status, remembering the message. */
extern "C" mp_status gpu_status_of(int err, const char *what)
{
	cudaError_t e = (cudaError_t)err;
	if (e == cudaSuccess)
		return MP_OK;
	gpu_set_error("%s: %s", what, cudaGetErrorString(e));
	return e == cudaErrorMemoryAllocation ? MP_ENOMEM : MP_EIO;
}

/* --- detection --- */

__global__ static void probe_kernel(int *out)
{
	*out = 1;
}

static bool ready_ok;
static const char *ready_reason = "built with CUDA";
static gpu_info ready_info;
static char reason_buf[384];

static void detect(void)
{
	int dv = 0, rv = 0;
	cudaRuntimeGetVersion(&rv);
	/* 0 when no driver is installed (libcuda.so.1 cannot be loaded) */
	if (cudaDriverGetVersion(&dv) != cudaSuccess || dv == 0) {
		ready_reason = "no CUDA driver";
		return;
	}
	int count = 0;
	cudaError_t e = cudaGetDeviceCount(&count);
	if (e == cudaErrorInsufficientDriver) {
		snprintf(reason_buf, sizeof reason_buf,
		         "the CUDA driver (%d.%d) is older than this build's CUDA runtime (%d.%d)", dv / 1000,
		         dv % 1000 / 10, rv / 1000, rv % 1000 / 10);
		ready_reason = reason_buf;
		return;
	}
	if (e == cudaErrorNoDevice || (e == cudaSuccess && count == 0)) {
		ready_reason = "no CUDA device";
		return;
	}
	if (e != cudaSuccess) {
		snprintf(reason_buf, sizeof reason_buf, "CUDA initialisation failed: %s", cudaGetErrorString(e));
		ready_reason = reason_buf;
		return;
	}
	cudaDeviceProp prop;
	if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
		ready_reason = "no CUDA device";
		return;
	}
	gpu_info *in = &ready_info;
	snprintf(in->name, sizeof in->name, "%s", prop.name);
	in->cc_major = prop.major;
	in->cc_minor = prop.minor;
	in->memory = prop.totalGlobalMem;
	in->driver_version = dv;
	in->runtime_version = rv;
	in->sms = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
	/* does this build hold code (SASS or PTX) the device can run? */
	cudaFuncAttributes fa;
	e = cudaFuncGetAttributes(&fa, probe_kernel);
	if (e != cudaSuccess) {
		snprintf(reason_buf, sizeof reason_buf,
		         "%s (compute capability %d.%d) cannot run this build's kernels (%s); "
		         "rebuild with CUDA_ARCH naming sm_%d%d",
		         prop.name, prop.major, prop.minor, cudaGetErrorString(e), prop.major, prop.minor);
		ready_reason = reason_buf;
		cudaGetLastError();
		return;
	}
	ready_ok = true;
	ready_reason = NULL;
}

extern "C" mp_status gpu_ready(gpu_info *info, char *err, size_t errlen)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, detect);
	if (!ready_ok)
		return mp_fail(MP_EUNSUPPORTED, err, errlen, "%s", ready_reason);
	if (info)
		*info = ready_info;
	return MP_OK;
}

extern "C" int gpu_sm_count(void)
{
	gpu_info in;
	in.sms = 1;   /* left as it is when there is no device */
	gpu_ready(&in, NULL, 0);
	return in.sms;
}

extern "C" mp_status gpu_require(void)
{
	char why[384];
	if (gpu_ready(NULL, why, sizeof why) == MP_OK)
		return MP_OK;
	gpu_set_error("%s", why);
	return MP_EUNSUPPORTED;
}

/* --- memory --- */

/* Device counters for the kernels' reductions, allocated once (freeing
 * would wait for the device on every call). */
extern "C" mp_status gpu_counters(unsigned long long **d_counters)
{
	static unsigned long long *d_c;
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&lock);
	mp_status st = d_c ? MP_OK : gpu_status_of(cudaMalloc(&d_c, GPU_COUNTERS * sizeof *d_c), "cudaMalloc");
	pthread_mutex_unlock(&lock);
	*d_counters = d_c;
	return st;
}

extern "C" mp_status gpu_alloc(void **d_p, size_t bytes)
{
	*d_p = NULL;
	mp_status st = gpu_require();
	if (st != MP_OK)
		return st;
	return gpu_status_of(cudaMalloc(d_p, bytes ? bytes : 1), "cudaMalloc");
}

extern "C" mp_status gpu_mem_info(size_t *free_bytes, size_t *total_bytes)
{
	*free_bytes = *total_bytes = 0;
	mp_status st = gpu_require();
	if (st != MP_OK)
		return st;
	return gpu_status_of(cudaMemGetInfo(free_bytes, total_bytes), "cudaMemGetInfo");
}

extern "C" mp_status gpu_free(void *d_p)
{
	return d_p ? gpu_status_of(cudaFree(d_p), "cudaFree") : MP_OK;
}

extern "C" mp_status gpu_put(void *d_dst, const void *src, size_t bytes)
{
	return gpu_status_of(cudaMemcpy(d_dst, src, bytes, cudaMemcpyHostToDevice), "copy to the GPU");
}

extern "C" mp_status gpu_get(void *dst, const void *d_src, size_t bytes)
{
	return gpu_status_of(cudaMemcpy(dst, d_src, bytes, cudaMemcpyDeviceToHost), "copy from the GPU");
}

extern "C" mp_status gpu_copy(void *d_dst, const void *d_src, size_t bytes)
{
	return gpu_status_of(cudaMemcpyAsync(d_dst, d_src, bytes, cudaMemcpyDeviceToDevice, 0), "device copy");
}

extern "C" mp_status gpu_sync(void)
{
	return gpu_status_of(cudaDeviceSynchronize(), "GPU kernel");
}

/* --- rounding kernels --- */

/* Launch shape: enough blocks to fill the device, each thread looping
 * (grid-stride) over groups of elements (4 for decode; encode and quantize:
 * gpu_bulk_body.h's GPU_BULK_VEC). */
enum { THREADS = 256, GROUP = 4 };

static unsigned grid_for(size_t groups)
{
	size_t want = (groups + THREADS - 1) / THREADS, cap = (size_t)gpu_sm_count() * 16;
	return (unsigned)(want < 1 ? 1 : want < cap ? want : cap);
}

template <typename T> struct vec4;
template <> struct vec4<uint8_t> { typedef uchar4 type; };
template <> struct vec4<uint16_t> { typedef ushort4 type; };
template <> struct vec4<uint32_t> { typedef uint4 type; };

template <typename T>
__device__ static inline void load4(const T *in, size_t g, uint32_t *a)
{
	typename vec4<T>::type v = reinterpret_cast<const typename vec4<T>::type *>(in)[g];
	a[0] = v.x;
	a[1] = v.y;
	a[2] = v.z;
	a[3] = v.w;
}

/* Encode and quantize: gpu_bulk_body.h's thread bodies, one chunk per
 * launch (see there), the format, the mode and the element size constants
 * of each kernel. */
template <fmt_id F, bool SR, unsigned ES>
__global__ static void __launch_bounds__(THREADS) encode_kernel(bulk_params p, int saturate, gpu_bulk_chunk c,
                                                                 void *out, const float *in, bool vec)
{
	uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x, nthreads = gridDim.x * blockDim.x;
	gpu_bulk_encode_thread(tid, nthreads, p, F, SR, saturate, ES, &c, out, in, vec);
}

template <fmt_id F, bool SR>
__global__ static void __launch_bounds__(THREADS) quantize_kernel(bulk_params p, int saturate, gpu_bulk_chunk c,
                                                                   float *x, bool vec)
{
	uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x, nthreads = gridDim.x * blockDim.x;
	gpu_bulk_quantize_thread(tid, nthreads, p, F, SR, saturate, &c, x, vec);
}

template <typename T>
__global__ static void decode_kernel(fmt_id fmt, float *out, const T *in, size_t n, bool vec)
{
	size_t stride = (size_t)gridDim.x * blockDim.x, t0 = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t groups = vec ? n / GROUP : 0;
	for (size_t g = t0; g < groups; g += stride) {
		uint32_t a[4];
		load4<T>(in, g, a);
		float4 v;
		v.x = bulk_u2f(bulk_decode1(fmt, a[0]));
		v.y = bulk_u2f(bulk_decode1(fmt, a[1]));
		v.z = bulk_u2f(bulk_decode1(fmt, a[2]));
		v.w = bulk_u2f(bulk_decode1(fmt, a[3]));
		reinterpret_cast<float4 *>(out)[g] = v;
	}
	for (size_t i = groups * GROUP + t0; i < n; i += stride)
		out[i] = bulk_u2f(bulk_decode1(fmt, in[i]));
}

/* Sums a per-thread count into *total: a warp shuffle, then one atomic per warp. */
__device__ static inline void count_add(unsigned long long *total, unsigned long long c)
{
	for (int o = 16; o > 0; o >>= 1)
		c += __shfl_down_sync(0xffffffffu, c, o);
	if ((threadIdx.x & 31) == 0 && c)
		atomicAdd(total, c);
}

/* portable_accumulate's element, written once for the CPU's formula:
 * x = q(x + u), or Kahan's y = u - c; t = q(x + y); c = q_rne((t - x) - y). */
template <bool SR, bool KAHAN>
__device__ static inline bool accumulate_one(const bulk_params &p, const bulk_params &rne, float &x, float &c,
                                             float u, uint32_t r)
{
	float old = x;
	if (KAHAN) {
		float y = __fsub_rn(u, c);
		float t = bulk_quantize1(&p, __fadd_rn(old, y), r);
		c = bulk_quantize1(&rne, __fsub_rn(__fsub_rn(t, old), y), 0);
		x = t;
	} else {
		x = bulk_quantize1(&p, __fadd_rn(old, u), r);
	}
	return x == old;
}

/* One chunk (gpu_bulk_body.h: 32-bit indices, one SR key): x, comp and u
 * start at the chunk's base. */
template <bool SR, bool KAHAN>
__global__ static void __launch_bounds__(THREADS) accumulate_kernel(bulk_params p, gpu_bulk_chunk c, float *x,
                                                                     float *comp, const float *u,
                                                                     unsigned long long *unchanged)
{
	p.sr = SR;
	bulk_params rne = p;
	rne.sr = 0;
	unsigned long long same = 0;
	uint32_t stride = gridDim.x * blockDim.x, n = c.end - c.first;
	/* every thread of a warp runs the loop the same number of times, so that
	 * the shuffle in count_add sees all 32 lanes (n < 2^31, stride < 2^20:
	 * no 32-bit overflow) */
	uint32_t span = (n + stride - 1) / stride * stride;
	for (uint32_t k = blockIdx.x * blockDim.x + threadIdx.x; k < span; k += stride) {
		if (k < n) {
			uint32_t i = c.first + k;
			float xi = x[i], ci = KAHAN ? comp[i] : 0.0f;
			uint32_t r = SR ? rng_bits_keyed(c.key, c.idx_base + i) : 0u;
			same += accumulate_one<SR, KAHAN>(p, rne, xi, ci, u[i], r);
			x[i] = xi;
			if (KAHAN)
				comp[i] = ci;
		}
	}
	count_add(unchanged, same);
}

/* --- dispatch --- */

static mp_status check_opts(const fmt_bulk_opts *o)
{
	if (o->mode != FMT_RNE && o->mode != FMT_SR)
		return MP_EUNSUPPORTED;
	if ((unsigned)o->fmt >= FMT_COUNT)
		return MP_EFORMAT;
	if (!fmt_is_kernel(o->fmt)) {
		gpu_set_error("%s is not available on the GPU (%s are); the CPU rounds it", fmt_get(o->fmt)->name,
		              fmt_kernel_names());
		return MP_EUNSUPPORTED;
	}
	return gpu_require();
}

static bool aligned(const void *p, size_t a)
{
	return ((uintptr_t)p & (a - 1)) == 0;
}

/* Elements of format F in bytes. */
template <fmt_id F>
static constexpr unsigned elem_bytes(void)
{
	return F == FMT_E4M3 || F == FMT_E5M2 ? 1 : F == FMT_FP16 || F == FMT_BF16 ? 2 : 4;
}

/* One launch per chunk (gpu_bulk_body.h); fp32 ignores SR, as the CPU does. */
template <fmt_id F>
static void encode_chunks(const bulk_params &p, const fmt_bulk_opts *o, void *d_out, const float *d_in, size_t n)
{
	constexpr unsigned ES = elem_bytes<F>();
	bool sr = F != FMT_FP32 && o->mode == FMT_SR;
	bool vec = aligned(d_in, 16) && aligned(d_out, ES == 1 ? 8 : 16);
	for (size_t lo = 0; lo < n;) {
		gpu_bulk_chunk c = gpu_bulk_chunk_at(o->seed, o->index0, sr, lo, n);
		unsigned grid = grid_for(c.end / GPU_BULK_VEC + 1);
		void *out = (char *)d_out + c.base * ES;
		const float *in = d_in + c.base;
		if (sr)
			encode_kernel<F, F != FMT_FP32, ES><<<grid, THREADS>>>(p, o->saturate, c, out, in, vec);
		else
			encode_kernel<F, false, ES><<<grid, THREADS>>>(p, o->saturate, c, out, in, vec);
		lo = c.hi;
	}
}

template <fmt_id F>
static void quantize_chunks(const bulk_params &p, const fmt_bulk_opts *o, float *d_x, size_t n)
{
	bool sr = F != FMT_FP32 && o->mode == FMT_SR;
	bool vec = aligned(d_x, 16);
	for (size_t lo = 0; lo < n;) {
		gpu_bulk_chunk c = gpu_bulk_chunk_at(o->seed, o->index0, sr, lo, n);
		unsigned grid = grid_for(c.end / GPU_BULK_VEC + 1);
		if (sr)
			quantize_kernel<F, F != FMT_FP32><<<grid, THREADS>>>(p, o->saturate, c, d_x + c.base, vec);
		else
			quantize_kernel<F, false><<<grid, THREADS>>>(p, o->saturate, c, d_x + c.base, vec);
		lo = c.hi;
	}
}

static bulk_params params_for(const fmt_bulk_opts *o)
{
	bulk_params p;
	memset(&p, 0, sizeof p);
	if (o->fmt != FMT_FP32)
		bulk_params_init(&p, o);
	return p;
}

extern "C" mp_status gpu_bulk_encode(const fmt_bulk_opts *o, void *d_out, const float *d_in, size_t n)
{
	mp_status st = check_opts(o);
	if (st != MP_OK || n == 0)
		return st;
	bulk_params p = params_for(o);
	switch (o->fmt) {
	case FMT_FP32: encode_chunks<FMT_FP32>(p, o, d_out, d_in, n); break;
	case FMT_TF32: encode_chunks<FMT_TF32>(p, o, d_out, d_in, n); break;
	case FMT_FP16: encode_chunks<FMT_FP16>(p, o, d_out, d_in, n); break;
	case FMT_BF16: encode_chunks<FMT_BF16>(p, o, d_out, d_in, n); break;
	case FMT_E4M3: encode_chunks<FMT_E4M3>(p, o, d_out, d_in, n); break;
	default: encode_chunks<FMT_E5M2>(p, o, d_out, d_in, n); break;
	}
	return gpu_status_of(cudaGetLastError(), "encode kernel");
}

extern "C" mp_status gpu_bulk_decode(fmt_id fmt, float *d_out, const void *d_in, size_t n)
{
	if ((unsigned)fmt >= FMT_COUNT)
		return MP_EFORMAT;
	if (!fmt_is_kernel(fmt)) {
		gpu_set_error("%s is not available on the GPU (%s are)", fmt_get(fmt)->name, fmt_kernel_names());
		return MP_EUNSUPPORTED;
	}
	mp_status st = gpu_require();
	if (st != MP_OK || n == 0)
		return st;
	size_t es = fmt_bulk_elem_size(fmt);
	bool vec = aligned(d_out, 16) && aligned(d_in, GROUP * es);
	unsigned grid = grid_for(n / GROUP + 1);
	switch (es) {
	case 1: decode_kernel<uint8_t><<<grid, THREADS>>>(fmt, d_out, (const uint8_t *)d_in, n, vec); break;
	case 2: decode_kernel<uint16_t><<<grid, THREADS>>>(fmt, d_out, (const uint16_t *)d_in, n, vec); break;
	default: decode_kernel<uint32_t><<<grid, THREADS>>>(fmt, d_out, (const uint32_t *)d_in, n, vec); break;
	}
	return gpu_status_of(cudaGetLastError(), "decode kernel");
}

extern "C" mp_status gpu_bulk_quantize(const fmt_bulk_opts *o, float *d_x, size_t n)
{
	mp_status st = check_opts(o);
	if (st != MP_OK || n == 0)
		return st;
	bulk_params p = params_for(o);
	switch (o->fmt) {
	case FMT_FP32: quantize_chunks<FMT_FP32>(p, o, d_x, n); break;
	case FMT_TF32: quantize_chunks<FMT_TF32>(p, o, d_x, n); break;
	case FMT_FP16: quantize_chunks<FMT_FP16>(p, o, d_x, n); break;
	case FMT_BF16: quantize_chunks<FMT_BF16>(p, o, d_x, n); break;
	case FMT_E4M3: quantize_chunks<FMT_E4M3>(p, o, d_x, n); break;
	default: quantize_chunks<FMT_E5M2>(p, o, d_x, n); break;
	}
	return gpu_status_of(cudaGetLastError(), "quantize kernel");
}

extern "C" mp_status gpu_bulk_accumulate(const fmt_bulk_opts *o, float *d_x, float *d_comp, const float *d_u,
                                         size_t n, size_t *unchanged)
{
	if (unchanged)
		*unchanged = 0;
	mp_status st = check_opts(o);
	if (st != MP_OK || n == 0)
		return st;
	/* fp32 accumulates through the same rounding kernel as the CPU does:
	 * bulk_params of fp32 make bulk_quantize1 an identity bar NaNs */
	bulk_params p;
	bulk_params_init(&p, o);
	unsigned long long *d_count;
	st = gpu_counters(&d_count);
	if (st != MP_OK)
		return st;
	st = gpu_status_of(cudaMemsetAsync(d_count, 0, sizeof *d_count, 0), "cudaMemset");
	if (st != MP_OK)
		return st;
	bool sr = o->mode == FMT_SR;
	for (size_t lo = 0; lo < n;) {
		gpu_bulk_chunk c = gpu_bulk_chunk_at(o->seed, o->index0, sr, lo, n);
		unsigned grid = grid_for(c.end - c.first);
		float *x = d_x + c.base, *comp = d_comp ? d_comp + c.base : NULL;
		const float *u = d_u + c.base;
		if (d_comp && sr)
			accumulate_kernel<true, true><<<grid, THREADS>>>(p, c, x, comp, u, d_count);
		else if (d_comp)
			accumulate_kernel<false, true><<<grid, THREADS>>>(p, c, x, comp, u, d_count);
		else if (sr)
			accumulate_kernel<true, false><<<grid, THREADS>>>(p, c, x, comp, u, d_count);
		else
			accumulate_kernel<false, false><<<grid, THREADS>>>(p, c, x, comp, u, d_count);
		lo = c.hi;
	}
	st = gpu_status_of(cudaGetLastError(), "accumulate kernel");
	if (st == MP_OK && unchanged) {
		unsigned long long c = 0;
		st = gpu_get(&c, d_count, sizeof c);
		*unchanged = (size_t)c;
	}
	return st;
}

static mp_status round_host(const fmt_bulk_opts *o, void *out, const float *in, size_t n)
{
	mp_status st = check_opts(o);
	if (st != MP_OK || n == 0)
		return st;
	size_t es = fmt_bulk_elem_size(o->fmt);
	if (n > SIZE_MAX / sizeof *in)
		return MP_ENOMEM;
	float *d_in = NULL;
	void *d_out = NULL;
	st = gpu_alloc((void **)&d_in, n * sizeof *in);
	if (st == MP_OK)
		st = gpu_alloc(&d_out, n * es);
	if (st == MP_OK)
		st = gpu_put(d_in, in, n * sizeof *in);
	if (st == MP_OK)
		st = gpu_bulk_encode(o, d_out, d_in, n);
	if (st == MP_OK)
		st = gpu_get(out, d_out, n * es);
	/* the status of the first failure (a failing free may still reword the message) */
	mp_status fs = gpu_free(d_in);
	if (st == MP_OK)
		st = fs;
	fs = gpu_free(d_out);
	return st == MP_OK ? fs : st;
}

extern "C" mp_status gpu_round_host(const fmt_bulk_opts *o, void *out, const float *in, size_t n, char *err,
                                    size_t errlen)
{
	gpu_clear_error();
	return gpu_error_out(round_host(o, out, in, n), err, errlen);
}
