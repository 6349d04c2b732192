/* The GPU trainer: gpu_trainer_impl.h's passes on the device. Each kernel body of
 * gpu_kernels.h runs as one thread per index (gpu_kernel_run below); the Linear
 * layers' products go through cuBLAS with the policy's operand format on the
 * tensor cores (bf16 or fp16 operands, fp32 accumulation; fp8 values as bf16
 * operands, which multiply exactly; TF32 only in a tf32 policy). */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

extern "C" {
#include "gpu/gpu.h"
#include "gpu/gpu_internal.h"
#include "gpu/gpu_trainer.h"
#include "gpu/gpu_kernels.h"
}

/* --- one thread per index --- */

/* at most GPU_KERNEL_BLOCK threads a block (gpu_kernel_launch), so that the
 * compiler keeps every body within the registers such a block may use */
enum { GPU_KERNEL_BLOCK = 256 };

template <typename Body, typename... A>
__global__ static void __launch_bounds__(GPU_KERNEL_BLOCK) gpu_kernel_run(size_t n, A... a)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		Body::run(i, a...);
}

/* --- MIXPREC_GPU_SYNC and MIXPREC_GPU_PROFILE ---
 *
 * SYNC=1 synchronises after every launch, so that a fault is caught at the
 * kernel that made it and be_check names that kernel's body. PROFILE=1
 * times every launch (and every cuBLAS GEMM) with CUDA events; both
 * serialise the stream, so they are for finding faults and costs, not for
 * the speed figures. The GPU trainer runs on one host thread; so do these. */

struct debug_flags {
	bool sync, profile;
};

static bool env_on(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") != 0;
}

static debug_flags &debug(void)
{
	static debug_flags f = { env_on("MIXPREC_GPU_SYNC"), env_on("MIXPREC_GPU_PROFILE") };
	return f;
}

/* the first kernel that failed under SYNC, for be_check */
static const char *fault_kernel;
static cudaError_t fault_error = cudaSuccess;

enum { PROFILE_ROWS = 40 };
static gpu_profile_row profile[PROFILE_ROWS];
static size_t profile_n;
static cudaEvent_t ev_start, ev_stop;

static void profile_add(const char *name, float ms)
{
	size_t i = 0;
	while (i < profile_n && strcmp(profile[i].name, name) != 0)
		i++;
	if (i == profile_n) {
		if (profile_n == PROFILE_ROWS)
			return;
		profile[profile_n++] = gpu_profile_row{ name, 0.0, 0 };
	}
	profile[i].ms += ms;
	profile[i].launches++;
}

/* Before a launch: the start event (PROFILE). */
static void debug_before(void)
{
	if (!debug().profile)
		return;
	if (!ev_start && (cudaEventCreate(&ev_start) != cudaSuccess || cudaEventCreate(&ev_stop) != cudaSuccess))
		return;
	cudaEventRecord(ev_start, 0);
}

/* After a launch of body name: its time (PROFILE), its errors (SYNC). */
static void debug_after(const char *name)
{
	const debug_flags &d = debug();
	if (d.profile && ev_start) {
		float ms = 0;
		if (cudaEventRecord(ev_stop, 0) == cudaSuccess && cudaEventSynchronize(ev_stop) == cudaSuccess &&
		    cudaEventElapsedTime(&ms, ev_start, ev_stop) == cudaSuccess)
			profile_add(name, ms);
	}
	if (d.sync) {
		cudaError_t e = cudaGetLastError();
		if (e == cudaSuccess)
			e = cudaDeviceSynchronize();
		if (e != cudaSuccess && fault_error == cudaSuccess) {
			fault_kernel = name;
			fault_error = e;
		}
	}
}

extern "C" bool gpu_profile_enabled(void)
{
	return debug().profile;
}

extern "C" bool gpu_profile_set(bool on)
{
	bool was = debug().profile;
	debug().profile = on;
	return was;
}

extern "C" void gpu_profile_reset(void)
{
	profile_n = 0;
}

extern "C" size_t gpu_profile_rows(gpu_profile_row *rows, size_t max)
{
	size_t n = profile_n < max ? profile_n : max;
	for (size_t i = 0; i < n; i++)
		rows[i] = profile[i];
	return n;
}

/* Row kernels have few indices (one per token); small blocks spread them
 * over more multiprocessors (an H200 has 132: 4,096 rows make 128 blocks). */
template <typename Body, typename... A>
static void gpu_kernel_launch(size_t n, A... a)
{
	if (n == 0)
		return;
	unsigned block = n >= ((size_t)1 << 16) ? (unsigned)GPU_KERNEL_BLOCK : n >= ((size_t)1 << 14) ? 64 : 32;
	size_t grid = (n + block - 1) / block;
	debug_before();
	gpu_kernel_run<Body, A...><<<(unsigned)grid, block>>>(n, a...);
	debug_after(Body::label);
}

#define GPU_KERNEL_BODY(name)                                                   \
	struct gpu_body_##name {                                             \
		static constexpr const char *label = #name;             \
		template <typename... A>                                \
		__device__ static void run(size_t i, A... a)            \
		{                                                       \
			gpu_kernel_##name(i, a...);                     \
		}                                                       \
		template <typename... A>                                \
		static void launch(size_t n, A... a)                    \
		{                                                       \
			gpu_kernel_launch<gpu_body_##name>(n, a...);    \
		}                                                       \
	};
GPU_KERNEL_BODY(encoder_forward)
GPU_KERNEL_BODY(encoder_backward_wpe)
GPU_KERNEL_BODY(encoder_backward_wte)
GPU_KERNEL_BODY(residual_forward)
GPU_KERNEL_BODY(resid_dots)
GPU_KERNEL_BODY(fold_u64)
GPU_KERNEL_BODY(fold_f64)
GPU_KERNEL_BODY(layernorm_forward)
GPU_KERNEL_BODY(layernorm_backward_inp)
GPU_KERNEL_BODY(layernorm_params_partial)
GPU_KERNEL_BODY(colsum_finish)
GPU_KERNEL_BODY(operand)
GPU_KERNEL_BODY(bias_round)
GPU_KERNEL_BODY(bias_partial)
GPU_KERNEL_BODY(round)
GPU_KERNEL_BODY(gelu_forward)
GPU_KERNEL_BODY(gelu_backward)
GPU_KERNEL_BODY(crossentropy_forward)
GPU_KERNEL_BODY(crossentropy_backward)
GPU_KERNEL_BODY(grads)
GPU_KERNEL_BODY(adamw)

/* C / NH from an attention body's arguments: five arrays, then NH, T, C
 * and the formats (gpu_kernels.h). */
template <typename P0, typename P1, typename P2, typename P3, typename P4, typename... R>
__host__ __device__ static size_t gpu_attention_hs(P0, P1, P2, P3, P4, size_t NH, size_t, size_t C, R...)
{
	return C / NH;
}

/* The attention bodies, one kernel per head size: HS 32, 64 or 128 is a
 * constant in the body (its loops unroll, its row arrays live in
 * registers); HS 0 is the generic kernel, hs = C / NH at run time. launch
 * picks the kernel from C / NH. The arguments end with NH, T, C and the
 * formats, as in gpu_kernels.h. */
#define GPU_KERNEL_ATTENTION_BODY(name)                                                      \
	template <int HS>                                                                         \
	struct gpu_body_##name##_hs {                                                             \
		static constexpr const char *label = #name;                                       \
		template <typename... A>                                                          \
		__device__ static void run(size_t i, A... a)                                      \
		{                                                                                 \
			gpu_kernel_##name##_hs(i, a..., HS ? (size_t)HS : gpu_attention_hs(a...)); \
		}                                                                                 \
	};                                                                                        \
	struct gpu_body_##name {                                                                  \
		template <typename... A>                                                          \
		static void launch(size_t n, A... a)                                              \
		{                                                                                 \
			switch (gpu_attention_hs(a...)) {                                         \
			case 32: gpu_kernel_launch<gpu_body_##name##_hs<32>>(n, a...); break;     \
			case 64: gpu_kernel_launch<gpu_body_##name##_hs<64>>(n, a...); break;     \
			case 128: gpu_kernel_launch<gpu_body_##name##_hs<128>>(n, a...); break;   \
			default: gpu_kernel_launch<gpu_body_##name##_hs<0>>(n, a...); break;      \
			}                                                                         \
		}                                                                                 \
	};

GPU_KERNEL_ATTENTION_BODY(attention_forward)
GPU_KERNEL_ATTENTION_BODY(attention_backward_q)
GPU_KERNEL_ATTENTION_BODY(attention_backward_kv)

#define GPU_TRAINER_LINKAGE extern "C"
#define GPU_TRAINER_OP(name) gpu_trainer_cuda_##name
#define GPU_TRAINER_LAUNCH(body, n, ...) gpu_body_##body::launch((size_t)(n), __VA_ARGS__)

/* --- device memory --- */

/* Room left for cuBLAS's workspace and what the runtime allocates itself. */
static const size_t be_margin = (size_t)512 << 20;

/* MP_ENOMEM, saying how much the shape needs and how much is free, when
 * bytes (and the margin) do not fit in the device's free memory. */
static mp_status be_reserve(size_t bytes, size_t B, size_t T, size_t C, size_t L, size_t V)
{
	size_t free_b, total_b;
	mp_status st = gpu_mem_info(&free_b, &total_b);
	if (st != MP_OK)
		return st;
	if (bytes + be_margin <= free_b)
		return MP_OK;
	gpu_set_error("the GPU trainer needs %.2f GiB of device memory at B=%zu T=%zu C=%zu L=%zu V=%zu "
	              "(%.2f GiB more for cuBLAS); the device has %.2f GiB free of %.2f GiB: use a smaller batch "
	              "or shape", (double)bytes / 1073741824.0, B, T, C, L, V, (double)be_margin / 1073741824.0,
	              (double)free_b / 1073741824.0, (double)total_b / 1073741824.0);
	return MP_ENOMEM;
}

static mp_status be_alloc(void **p, size_t bytes)
{
	mp_status st = gpu_alloc(p, bytes);
	if (st == MP_OK)
		st = gpu_status_of(cudaMemset(*p, 0, bytes), "cudaMemset");
	return st;
}

static void be_free(void *p)
{
	gpu_free(p);
}

static mp_status be_put(void *d, const void *h, size_t bytes)
{
	return gpu_put(d, h, bytes);
}

static mp_status be_get(void *h, const void *d, size_t bytes)
{
	return gpu_get(h, d, bytes);
}

static mp_status be_zero(void *d, size_t bytes)
{
	return gpu_status_of(cudaMemsetAsync(d, 0, bytes, 0), "cudaMemset");
}

/* Reports a failed launch (a fault inside a kernel shows at the next copy,
 * or, under MIXPREC_GPU_SYNC=1, here, naming the kernel). */
static mp_status be_check(void)
{
	if (fault_error != cudaSuccess) {
		gpu_set_error("training kernel %s: %s", fault_kernel, cudaGetErrorString(fault_error));
		fault_error = cudaSuccess;
		return MP_EIO;
	}
	return gpu_status_of(cudaGetLastError(), "a training kernel");
}

static int be_operand_kind(fmt_id f)
{
	switch (f) {
	case FMT_BF16: case FMT_FP16: return GPU_KERNEL_OP_NATIVE16;
	case FMT_E4M3: case FMT_E5M2: return GPU_KERNEL_OP_BF16;
	default: return GPU_KERNEL_OP_F32;
	}
}

static mp_status be_gemm(fmt_id compute, int ta, int tb, size_t M, size_t N, size_t K, float alpha, const void *A,
                         size_t lda, const void *B, size_t ldb, float beta, float *C, size_t ldc)
{
	debug_before();
	mp_status st = gpu_gemm(compute, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
	debug_after(GPU_PROFILE_GEMM);
	return st;
}

#include "gpu/gpu_trainer_impl.h"

/* --- every kernel body on the device against the same body on the host ---
 *
 * The host runs of these bodies are checked against the CPU trainer by
 * tests/test_gpu_kernels.c; running each on both sides over the same random
 * inputs closes the chain kernel by kernel on a real GPU. */

#include <type_traits>

namespace {

template <typename T>
struct buf {
	T *h = nullptr, *d = nullptr;
	size_t n = 0;
};

struct kcheck {
	gpu_kernel_emit emit;
	void *ctx;
	mp_status st = MP_OK;
	uint64_t seed = 12345;
	void *host[256], *dev[256];
	int nhost = 0, ndev = 0;
};

template <typename T>
static buf<T> make(kcheck &k, size_t n, double scale)
{
	buf<T> b;
	b.n = n;
	if (k.nhost == 256 || k.ndev == 256) {
		k.st = MP_ENOMEM;
		return b;
	}
	b.h = (T *)calloc(n ? n : 1, sizeof(T));
	if (b.h == NULL) {
		k.st = MP_ENOMEM;
		return b;
	}
	k.host[k.nhost++] = b.h;
	for (size_t i = 0; i < n; i++) {
		uint32_t r = rng_bits(k.seed, i);
		if (std::is_floating_point<T>::value)
			b.h[i] = (T)(scale * ((double)r * 0x1p-31 - 1.0));
		else
			b.h[i] = (T)(r % (uint32_t)(scale > 0 ? scale : 1));
	}
	k.seed++;
	void *d = NULL;
	if (k.st == MP_OK)
		k.st = gpu_alloc(&d, n ? n * sizeof(T) : 1);
	if (k.st == MP_OK) {
		b.d = (T *)d;
		k.dev[k.ndev++] = d;
		k.st = gpu_put(b.d, b.h, n * sizeof(T));
	}
	return b;
}

/* The device's copy of b against the host's: the largest difference over
 * the largest magnitude (inf when a pattern differs where tol is 0). */
template <typename T>
static void compare(kcheck &k, const char *name, const buf<T> &b, double tol)
{
	if (k.st != MP_OK)
		return;
	T *got = (T *)malloc(b.n ? b.n * sizeof(T) : 1);
	if (got == NULL) {
		k.st = MP_ENOMEM;
		return;
	}
	k.st = gpu_status_of(cudaDeviceSynchronize(), name);
	if (k.st == MP_OK)
		k.st = gpu_get(got, b.d, b.n * sizeof(T));
	if (k.st == MP_OK) {
		double big = 0, diff = 0;
		bool same = memcmp(got, b.h, b.n * sizeof(T)) == 0;
		for (size_t i = 0; i < b.n; i++) {
			double a = (double)b.h[i], g = (double)got[i];
			big = fabs(a) > big ? fabs(a) : big;
			double d = fabs(g - a);
			diff = d > diff || d != d ? d : diff;
		}
		double err = same ? 0.0 : tol == 0 ? INFINITY : big > 0 ? diff / big : diff;
		k.emit(k.ctx, name, err, tol);
	}
	free(got);
}

template <bool D, typename T>
static T *P(const buf<T> &b)
{
	return D ? b.d : b.h;
}

/* Runs body on both sides: on the host in a loop, on the device one thread
 * per index (the arguments chosen by run(std::integral_constant<bool, D>)). */
#define BOTH(body, n, ...)                                                      \
	do {                                                                    \
		auto run_ = [&](auto dev_) {                                    \
			constexpr bool D = decltype(dev_)::value;               \
			if constexpr (D)                                        \
				gpu_body_##body::launch((size_t)(n), __VA_ARGS__); \
			else                                                    \
				for (size_t i_ = 0; i_ < (size_t)(n); i_++)     \
					gpu_kernel_##body(i_, __VA_ARGS__);             \
		};                                                              \
		if (k.st == MP_OK) {                                            \
			run_(std::false_type());                                \
			run_(std::true_type());                                 \
			k.st = be_check();                                      \
		}                                                               \
	} while (0)

/* The shape the kernels are checked at (small and odd), the tolerances and
 * the quantisers every section uses. exact: the same operations on both
 * sides; rel: expf/logf, whose device and libm versions may differ in the
 * last place; lowp: a value rounded to bf16 after expf may then land on the
 * other neighbour. */
struct kshape {
	size_t B = 2, T = 33, C = 48, NH = 3, V = 50, BT = B * T, BTC = BT * C, NT = B * NH * T * T;
	size_t R = 7;                     /* row chunks of the column sums */
	double exact = 0, rel = 1e-5, lowp = 0x1p-7;
	gpu_kernel_q f32 = gpu_kernel_q_of(FMT_FP32, FMT_RNE), bf = gpu_kernel_q_of(FMT_BF16, FMT_RNE);
	gpu_kernel_q bfsr = gpu_kernel_q_of(FMT_BF16, FMT_SR), h16 = gpu_kernel_q_of(FMT_FP16, FMT_RNE);
};

#define KSHAPE_NAMES                                                                              \
	const size_t B = ks.B, T = ks.T, C = ks.C, NH = ks.NH, V = ks.V, BT = ks.BT, BTC = ks.BTC; \
	const size_t NT = ks.NT, R = ks.R;                                                        \
	const double exact = ks.exact, rel = ks.rel, lowp = ks.lowp;                              \
	const gpu_kernel_q f32 = ks.f32, bf = ks.bf, bfsr = ks.bfsr, h16 = ks.h16;                \
	(void)B, (void)T, (void)C, (void)NH, (void)V, (void)BT, (void)BTC, (void)NT, (void)R;     \
	(void)exact, (void)rel, (void)lowp, (void)f32, (void)bf, (void)bfsr, (void)h16

/* Embeddings and the residual stream. */
static void check_embeddings(kcheck &k, const kshape &ks)
{
	KSHAPE_NAMES;
	auto tok = make<int>(k, BT, (double)V);
	auto wte = make<float>(k, V * C, 0.5), wpe = make<float>(k, T * C, 0.5);
	auto enc = make<float>(k, BTC, 1);
	auto dex = make<double>(k, BTC, 1);
	BOTH(encoder_forward, BTC, P<D>(enc), P<D>(dex), P<D>(tok), P<D>(wte), P<D>(wpe), T, C, 600.0f, (size_t)5, bfsr,
	     (uint64_t)99, (uint64_t)0xfffffff0ull);
	compare(k, "encoder_forward (bf16 SR, offset)", enc, exact);
	auto off = make<int>(k, V + 1, 1), pos = make<int>(k, BT, 1);
	if (k.st == MP_OK) {   /* token positions as gpu_trainer_forward sorts them */
		int np = 0;
		for (size_t v = 0; v < V; v++) {
			off.h[v] = np;
			for (size_t bt = 0; bt < BT; bt++)
				if ((size_t)tok.h[bt] == v)
					pos.h[np++] = (int)bt;
		}
		off.h[V] = np;
		k.st = gpu_put(off.d, off.h, (V + 1) * sizeof(int));
		if (k.st == MP_OK)
			k.st = gpu_put(pos.d, pos.h, BT * sizeof(int));
	}
	auto dout = make<float>(k, BTC, 1), dwte = make<float>(k, V * C, 1), dwpe = make<float>(k, T * C, 1);
	BOTH(encoder_backward_wte, V * C, P<D>(dwte), P<D>(dout), P<D>(off), P<D>(pos), C);
	compare(k, "encoder_backward_wte", dwte, exact);
	BOTH(encoder_backward_wpe, T * C, P<D>(dwpe), P<D>(dout), B, T, C);
	compare(k, "encoder_backward_wpe", dwpe, exact);
	auto ra = make<float>(k, BTC, 600), rb = make<float>(k, BTC, 3), rout = make<float>(k, BTC, 1);
	BOTH(residual_forward, BTC, P<D>(rout), P<D>(dex), P<D>(ra), P<D>(rb), bfsr, (uint64_t)7, (uint64_t)12345);
	compare(k, "residual_forward (bf16 SR)", rout, exact);
	compare(k, "residual_forward dexact", dex, exact);
	auto num = make<double>(k, 64, 1), den = make<double>(k, 64, 1);
	BOTH(resid_dots, 64, P<D>(num), P<D>(den), P<D>(rout), P<D>(ra), P<D>(dex), BTC, (size_t)64);
	compare(k, "resid_dots num", num, exact);
	compare(k, "resid_dots den", den, exact);

}

/* LayerNorm, fp32 and bf16 reductions, and its parameter gradients. */
static void check_layernorm(kcheck &k, const kshape &ks)
{
	KSHAPE_NAMES;
	auto x = make<float>(k, BTC, 2), lw = make<float>(k, C, 1), lb = make<float>(k, C, 1);
	auto dout = make<float>(k, BTC, 1);
	const gpu_kernel_q reds[2] = { f32, bf };
	const char *const rname[2] = { "fp32", "bf16" };
	for (int ri = 0; ri < 2; ri++) {
		char name[96];
		auto lo = make<float>(k, BTC, 1), mean = make<float>(k, BT, 1), rstd = make<float>(k, BT, 1);
		BOTH(layernorm_forward, BT, P<D>(lo), P<D>(mean), P<D>(rstd), P<D>(x), P<D>(lw), P<D>(lb), C, reds[ri]);
		snprintf(name, sizeof name, "layernorm_forward (%s)", rname[ri]);
		compare(k, name, lo, exact);
		compare(k, name, rstd, exact);
		auto dx = make<float>(k, BTC, 1);
		BOTH(layernorm_backward_inp, BT, P<D>(dx), P<D>(dout), P<D>(x), P<D>(lw), P<D>(mean), P<D>(rstd), C,
		     reds[ri]);
		snprintf(name, sizeof name, "layernorm_backward_inp (%s)", rname[ri]);
		compare(k, name, dx, exact);
	}
	const size_t rows_per = (BT + R - 1) / R;
	auto pw = make<float>(k, 2 * R * C, 1), dw = make<float>(k, C, 1);
	auto mean = make<float>(k, BT, 0.1), rstd = make<float>(k, BT, 2);
	BOTH(layernorm_params_partial, R * C, P<D>(pw), P<D>(pw) + R * C, P<D>(dout), P<D>(x), P<D>(mean), P<D>(rstd), BT,
	     C, rows_per);
	compare(k, "layernorm_params_partial", pw, exact);
	BOTH(colsum_finish, C, P<D>(dw), P<D>(pw), C, R);
	compare(k, "colsum_finish", dw, exact);

}

/* The GEMMs' operands, bias and rounding kernels. */
static void check_gemm_helpers(kcheck &k, const kshape &ks)
{
	KSHAPE_NAMES;
	auto op16 = make<uint16_t>(k, BTC, 1);
	auto xin = make<float>(k, BTC, 3);
	BOTH(operand, BTC, (void *)P<D>(op16), (int)GPU_KERNEL_OP_NATIVE16, P<D>(xin), 1, h16);
	compare(k, "operand (fp16 patterns, in place)", op16, exact);
	compare(k, "operand: the rounded activation", xin, exact);
	auto bout = make<float>(k, BT * V, 5), bias = make<float>(k, V, 1), bpart = make<float>(k, R * V, 1);
	BOTH(bias_round, BT * V, P<D>(bout), P<D>(bias), V, bf);
	compare(k, "bias_round (bf16)", bout, exact);
	BOTH(bias_partial, R * V, P<D>(bpart), P<D>(bout), BT, V, (BT + R - 1) / R);
	compare(k, "bias_partial", bpart, exact);
	BOTH(round, BT * V, P<D>(bpart), bf);
	compare(k, "round (bf16)", bpart, exact);

}

/* Attention: fp32, and bf16 products with fp32 and bf16 softmax sums. */
static void check_attention(kcheck &k, const kshape &ks)
{
	KSHAPE_NAMES;
	const gpu_kernel_q gms[3] = { f32, bf, bf }, rds[3] = { f32, f32, bf };
	const char *const aname[3] = { "fp32", "bf16 GEMM", "bf16 GEMM + sums" };
	auto qkv = make<float>(k, 3 * BTC, 2), dattn = make<float>(k, BTC, 1);
	for (int a = 0; a < 3; a++) {
		char name[96];
		auto qkv_r = make<float>(k, 3 * BTC, 1), dout_r = make<float>(k, BTC, 1);
		BOTH(operand, 3 * BTC, (void *)P<D>(qkv_r), (int)GPU_KERNEL_OP_F32, P<D>(qkv), 0, gms[a]);
		BOTH(operand, BTC, (void *)P<D>(dout_r), (int)GPU_KERNEL_OP_F32, P<D>(dattn), 0, gms[a]);
		auto out = make<float>(k, BTC, 1), pre = make<float>(k, NT, 1), att = make<float>(k, NT, 1);
		auto att_r = make<float>(k, NT, 1), dinp = make<float>(k, 3 * BTC, 1), dpre = make<float>(k, NT, 1);
		BOTH(attention_forward, B * NH * T, P<D>(out), P<D>(pre), P<D>(att), P<D>(att_r), P<D>(qkv_r), NH, T, C,
		     gms[a], rds[a]);
		snprintf(name, sizeof name, "attention_forward (%s, hs %zu)", aname[a], C / NH);
		compare(k, name, pre, exact);
		compare(k, name, out, a == 0 ? rel : lowp);
		compare(k, name, att, a == 2 ? lowp : rel);
		/* the backward from the host's att on both sides */
		if (k.st == MP_OK)
			k.st = gpu_put(att.d, att.h, NT * sizeof(float));
		BOTH(operand, NT, (void *)P<D>(att_r), (int)GPU_KERNEL_OP_F32, P<D>(att), 0, gms[a]);
		BOTH(attention_backward_q, B * NH * T, P<D>(dinp), P<D>(dpre), P<D>(dout_r), P<D>(qkv_r), P<D>(att), NH, T,
		     C, gms[a], rds[a]);
		snprintf(name, sizeof name, "attention_backward_q (%s, hs %zu)", aname[a], C / NH);
		compare(k, name, dpre, exact);
		if (k.st == MP_OK)
			k.st = gpu_put(dpre.d, dpre.h, NT * sizeof(float));
		BOTH(attention_backward_kv, B * NH * T, P<D>(dinp), P<D>(dpre), P<D>(dout_r), P<D>(qkv_r), P<D>(att_r), NH,
		     T, C, gms[a]);
		snprintf(name, sizeof name, "attention_backward q, k, v (%s, hs %zu)", aname[a], C / NH);
		compare(k, name, dinp, exact);
	}

}

/* GELU and the loss. */
static void check_pointwise(kcheck &k, const kshape &ks)
{
	KSHAPE_NAMES;
	const gpu_kernel_q reds[2] = { f32, bf };
	const char *const rname[2] = { "fp32", "bf16" };
	auto g_in = make<float>(k, 4 * BTC, 4), g_out = make<float>(k, 4 * BTC, 1), g_din = make<float>(k, 4 * BTC, 1);
	auto g_d = make<float>(k, 4 * BTC, 1);
	BOTH(gelu_forward, 4 * BTC, P<D>(g_out), P<D>(g_in));
	compare(k, "gelu_forward", g_out, rel);
	BOTH(gelu_backward, 4 * BTC, P<D>(g_din), P<D>(g_in), P<D>(g_d));
	compare(k, "gelu_backward", g_din, rel);
	auto logits = make<float>(k, BT * V, 8), probs = make<float>(k, BT * V, 1), losses = make<float>(k, BT, 1);
	auto tg = make<int>(k, BT, (double)V);
	auto dlog = make<float>(k, BT * V, 1);
	for (int ri = 0; ri < 2; ri++) {
		char name[96];
		BOTH(crossentropy_forward, BT, P<D>(probs), P<D>(losses), P<D>(logits), P<D>(tg), V, reds[ri]);
		snprintf(name, sizeof name, "crossentropy_forward (%s)", rname[ri]);
		compare(k, name, probs, ri ? lowp : rel);
		compare(k, name, losses, ri ? lowp : rel);
	}
	if (k.st == MP_OK)
		k.st = gpu_put(probs.d, probs.h, BT * V * sizeof(float));
	BOTH(crossentropy_backward, BT * V, P<D>(dlog), P<D>(probs), P<D>(tg), 1.0f / 66.0f, V);
	compare(k, "crossentropy_backward", dlog, exact);

}

/* The gradient phase and AdamW. */
static void check_optimiser(kcheck &k, const kshape &ks)
{
	KSHAPE_NAMES;
	const size_t NPAR = 5000, NP = 96;
	auto gg = make<float>(k, NPAR, 1e-4), raw = make<float>(k, NPAR, 1);
	auto nz = make<unsigned long long>(k, NP, 1), fl = make<unsigned long long>(k, NP, 1);
	auto nf = make<unsigned long long>(k, NP, 1);
	auto n2 = make<double>(k, NP, 1);
	BOTH(grads, NP, P<D>(gg), P<D>(raw), P<D>(nz), P<D>(fl), P<D>(nf), P<D>(n2), NPAR, NP, h16, bf, 1.0 / 1024);
	compare(k, "grads (fp16, bf16 accumulation)", gg, exact);
	compare(k, "grads: flushed counts", fl, exact);
	compare(k, "grads: squared norm", n2, exact);
	gpu_kernel_adam ad;
	memset(&ad, 0, sizeof ad);
	ad.lr = 1e-3, ad.beta1 = 0.9, ad.beta2 = 0.95, ad.eps = 1e-8, ad.weight_decay = 0.1;
	ad.clip = 0.5, ad.c1 = 0.19, ad.c2 = 0.0975, ad.kahan = 1, ad.seed = 3, ad.index0 = 4 * NPAR;
	auto w = make<float>(k, NPAR, 1), m = make<float>(k, NPAR, 1e-3), v = make<float>(k, NPAR, 1e-6);
	auto comp = make<float>(k, NPAR, 1e-4);
	auto ls = make<unsigned long long>(k, NP, 1);
	auto wop = make<uint16_t>(k, NPAR, 1);
	BOTH(round, NPAR, P<D>(w), bf);
	BOTH(round, NPAR, P<D>(comp), bf);
	BOTH(adamw, NP, P<D>(w), P<D>(m), P<D>(v), P<D>(comp), P<D>(gg), P<D>(nz), P<D>(ls), (void *)P<D>(wop),
	     (int)GPU_KERNEL_OP_NATIVE16, 1, NPAR, NP, ad, f32, bf, bf);
	compare(k, "adamw (bf16 weights, Kahan): weights", w, exact);
	compare(k, "adamw: compensation", comp, exact);
	compare(k, "adamw: lost updates", ls, exact);
	compare(k, "adamw: bf16 working copy", wop, exact);
	ad.kahan = 0;
	BOTH(adamw, NP, P<D>(w), P<D>(m), P<D>(v), P<D>(comp), P<D>(gg), P<D>(nz), P<D>(ls), (void *)P<D>(wop),
	     (int)GPU_KERNEL_OP_NATIVE16, 1, NPAR, NP, ad, f32, bfsr, bf);
	compare(k, "adamw (bf16 weights, SR): weights", w, exact);

}

} // namespace

extern "C" mp_status gpu_train_kernel_check(gpu_kernel_emit emit, void *ctx)
{
	mp_status st = gpu_require();
	if (st != MP_OK)
		return st;
	kcheck k;
	k.emit = emit;
	k.ctx = ctx;
	const kshape ks;
	check_embeddings(k, ks);
	check_layernorm(k, ks);
	check_gemm_helpers(k, ks);
	/* the generic head size (16), then each one compiled as a constant;
	 * T = 33 puts warps across (b, h) blocks */
	static const size_t heads[4][2] = { { 48, 3 }, { 96, 3 }, { 128, 2 }, { 128, 1 } };
	for (int i = 0; i < 4; i++) {
		kshape a = ks;
		a.C = heads[i][0];
		a.NH = heads[i][1];
		a.BTC = a.BT * a.C;
		a.NT = a.B * a.NH * a.T * a.T;
		check_attention(k, a);
	}
	check_pointwise(k, ks);
	check_optimiser(k, ks);
	for (int i = 0; i < k.nhost; i++)
		free(k.host[i]);
	for (int i = 0; i < k.ndev; i++)
		gpu_free(k.dev[i]);
	return k.st;
}
