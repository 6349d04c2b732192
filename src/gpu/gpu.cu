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

extern "C" bool gpu_ready(const char **reason, gpu_info *info)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, detect);
	if (reason)
		*reason = ready_reason;
	if (info && ready_ok)
		*info = ready_info;
	return ready_ok;
}

extern "C" int gpu_sm_count(void)
{
	gpu_info in;
	return gpu_ready(NULL, &in) ? in.sms : 1;
}

extern "C" mp_status gpu_require(void)
{
	const char *why;
	if (gpu_ready(&why, NULL))
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
 * (grid-stride) over groups of 4 elements. */
enum { THREADS = 256, GROUP = 4 };

static unsigned grid_for(size_t groups)
{
	size_t want = (groups + THREADS - 1) / THREADS, cap = (size_t)gpu_sm_count() * 16;
	return (unsigned)(want < 1 ? 1 : want < cap ? want : cap);
}

/* rng_bits(seed, index) with the per-2^32-block key cached: the key costs
 * two 64-bit mixes, the bits one 32-bit mix. */
struct sr_stream {
	uint64_t seed, hi;
	rng_key k;

	__device__ void init(uint64_t s)
	{
		seed = s;
		hi = ~0ull;
	}
	__device__ uint32_t bits(uint64_t index)
	{
		if (index >> 32 != hi) {
			hi = index >> 32;
			k = rng_key_for(seed, index);
		}
		return rng_bits_keyed(k, (uint32_t)index);
	}
};

template <typename T> struct vec4;
template <> struct vec4<uint8_t> { typedef uchar4 type; };
template <> struct vec4<uint16_t> { typedef ushort4 type; };
template <> struct vec4<uint32_t> { typedef uint4 type; };

template <typename T>
__device__ static inline void store4(T *out, size_t g, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
	typename vec4<T>::type v;
	v.x = (T)a;
	v.y = (T)b;
	v.z = (T)c;
	v.w = (T)d;
	reinterpret_cast<typename vec4<T>::type *>(out)[g] = v;
}

template <typename T>
__device__ static inline void load4(const T *in, size_t g, uint32_t *a)
{
	typename vec4<T>::type v = reinterpret_cast<const typename vec4<T>::type *>(in)[g];
	a[0] = v.x;
	a[1] = v.y;
	a[2] = v.z;
	a[3] = v.w;
}

/* One element of an encode: fp32 targets copy (bulk_fp32_one), the others
 * round with bulk_encode1. */
template <bool FP32, bool SR>
__device__ static inline uint32_t encode_one(const bulk_params &p, int saturate, float x, sr_stream &rs,
                                             uint64_t index)
{
	if (FP32)
		return bulk_fp32_one(x, saturate);
	return bulk_encode1(&p, bulk_f2u(x), SR ? rs.bits(index) : 0u);
}

/* Input and output are aligned to a group of 4 when vec is set; the host
 * sends a misaligned array through the scalar loop (vec = false). */
template <typename T, bool FP32, bool SR>
__global__ static void encode_kernel(bulk_params p, int saturate, uint64_t seed, uint64_t index0, T *out,
                                     const float *in, size_t n, bool vec)
{
	sr_stream rs;
	rs.init(seed);
	size_t stride = (size_t)gridDim.x * blockDim.x, t0 = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t groups = vec ? n / GROUP : 0;
	for (size_t g = t0; g < groups; g += stride) {
		float4 v = reinterpret_cast<const float4 *>(in)[g];
		uint64_t i = index0 + g * GROUP;
		uint32_t a = encode_one<FP32, SR>(p, saturate, v.x, rs, i);
		uint32_t b = encode_one<FP32, SR>(p, saturate, v.y, rs, i + 1);
		uint32_t c = encode_one<FP32, SR>(p, saturate, v.z, rs, i + 2);
		uint32_t d = encode_one<FP32, SR>(p, saturate, v.w, rs, i + 3);
		store4<T>(out, g, a, b, c, d);
	}
	for (size_t i = groups * GROUP + t0; i < n; i += stride)
		out[i] = (T)encode_one<FP32, SR>(p, saturate, in[i], rs, index0 + i);
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

template <bool FP32, bool SR>
__device__ static inline float quantize_one(const bulk_params &p, int saturate, float x, sr_stream &rs,
                                            uint64_t index)
{
	if (FP32)
		return bulk_u2f(bulk_fp32_one(x, saturate));
	return bulk_quantize1(&p, x, SR ? rs.bits(index) : 0u);
}

template <bool FP32, bool SR>
__global__ static void quantize_kernel(bulk_params p, int saturate, uint64_t seed, uint64_t index0, float *x,
                                       size_t n, bool vec)
{
	sr_stream rs;
	rs.init(seed);
	size_t stride = (size_t)gridDim.x * blockDim.x, t0 = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t groups = vec ? n / GROUP : 0;
	for (size_t g = t0; g < groups; g += stride) {
		float4 v = reinterpret_cast<float4 *>(x)[g];
		uint64_t i = index0 + g * GROUP;
		v.x = quantize_one<FP32, SR>(p, saturate, v.x, rs, i);
		v.y = quantize_one<FP32, SR>(p, saturate, v.y, rs, i + 1);
		v.z = quantize_one<FP32, SR>(p, saturate, v.z, rs, i + 2);
		v.w = quantize_one<FP32, SR>(p, saturate, v.w, rs, i + 3);
		reinterpret_cast<float4 *>(x)[g] = v;
	}
	for (size_t i = groups * GROUP + t0; i < n; i += stride)
		x[i] = quantize_one<FP32, SR>(p, saturate, x[i], rs, index0 + i);
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
                                             float u, sr_stream &rs, uint64_t index)
{
	uint32_t r = SR ? rs.bits(index) : 0u;
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

template <bool SR, bool KAHAN>
__global__ static void accumulate_kernel(bulk_params p, uint64_t seed, uint64_t index0, float *x, float *comp,
                                         const float *u, size_t n, unsigned long long *unchanged)
{
	bulk_params rne = p;
	rne.sr = 0;
	sr_stream rs;
	rs.init(seed);
	unsigned long long same = 0;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	/* every thread of a warp runs the loop the same number of times, so that
	 * the shuffle in count_add sees all 32 lanes */
	size_t span = (n + stride - 1) / stride * stride;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < span; i += stride) {
		if (i < n) {
			float xi = x[i], ci = KAHAN ? comp[i] : 0.0f;
			same += accumulate_one<SR, KAHAN>(p, rne, xi, ci, u[i], rs, index0 + i);
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

template <typename T>
static void launch_encode(const bulk_params &p, const fmt_bulk_opts *o, void *d_out, const float *d_in, size_t n)
{
	bool vec = aligned(d_in, 16) && aligned(d_out, GROUP * sizeof(T));
	unsigned grid = grid_for(n / GROUP + 1);
	T *out = (T *)d_out;
	if (o->fmt == FMT_FP32)
		encode_kernel<T, true, false><<<grid, THREADS>>>(p, o->saturate, o->seed, o->index0, out, d_in, n, vec);
	else if (o->mode == FMT_SR)
		encode_kernel<T, false, true><<<grid, THREADS>>>(p, o->saturate, o->seed, o->index0, out, d_in, n, vec);
	else
		encode_kernel<T, false, false><<<grid, THREADS>>>(p, o->saturate, o->seed, o->index0, out, d_in, n, vec);
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
	switch (fmt_bulk_elem_size(o->fmt)) {
	case 1: launch_encode<uint8_t>(p, o, d_out, d_in, n); break;
	case 2: launch_encode<uint16_t>(p, o, d_out, d_in, n); break;
	default: launch_encode<uint32_t>(p, o, d_out, d_in, n); break;
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
	bool vec = aligned(d_x, 16);
	unsigned grid = grid_for(n / GROUP + 1);
	if (o->fmt == FMT_FP32)
		quantize_kernel<true, false><<<grid, THREADS>>>(p, o->saturate, o->seed, o->index0, d_x, n, vec);
	else if (o->mode == FMT_SR)
		quantize_kernel<false, true><<<grid, THREADS>>>(p, o->saturate, o->seed, o->index0, d_x, n, vec);
	else
		quantize_kernel<false, false><<<grid, THREADS>>>(p, o->saturate, o->seed, o->index0, d_x, n, vec);
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
	unsigned grid = grid_for(n);
	bool sr = o->mode == FMT_SR;
	if (d_comp && sr)
		accumulate_kernel<true, true><<<grid, THREADS>>>(p, o->seed, o->index0, d_x, d_comp, d_u, n, d_count);
	else if (d_comp)
		accumulate_kernel<false, true><<<grid, THREADS>>>(p, o->seed, o->index0, d_x, d_comp, d_u, n, d_count);
	else if (sr)
		accumulate_kernel<true, false><<<grid, THREADS>>>(p, o->seed, o->index0, d_x, d_comp, d_u, n, d_count);
	else
		accumulate_kernel<false, false><<<grid, THREADS>>>(p, o->seed, o->index0, d_x, d_comp, d_u, n, d_count);
	st = gpu_status_of(cudaGetLastError(), "accumulate kernel");
	if (st == MP_OK && unchanged) {
		unsigned long long c = 0;
		st = gpu_get(&c, d_count, sizeof c);
		*unchanged = (size_t)c;
	}
	return st;
}

extern "C" mp_status gpu_round_host(const fmt_bulk_opts *o, void *out, const float *in, size_t n)
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
