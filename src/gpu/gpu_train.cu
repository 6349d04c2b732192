/* The GPU trainer: gt_impl.h's passes on the device. Each kernel body of
 * gt_kernels.h runs as one thread per index (gt_run below); the Linear
 * layers' products go through cuBLAS with the policy's operand format on the
 * tensor cores (bf16 or fp16 operands, fp32 accumulation; fp8 values as bf16
 * operands, which multiply exactly; TF32 only in a tf32 policy). */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

extern "C" {
#include "gpu/gpu.h"
#include "gpu/gpu_internal.h"
#include "gpu/gpu_train.h"
#include "gpu/gt_kernels.h"
}

/* --- one thread per index --- */

template <typename Body, typename... A>
__global__ static void gt_run(size_t n, A... a)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		Body::run(i, a...);
}

/* Row kernels have few indices (one per token); small blocks spread them
 * over more multiprocessors. */
template <typename Body, typename... A>
static void gt_launch(size_t n, A... a)
{
	if (n == 0)
		return;
	unsigned block = n >= ((size_t)1 << 16) ? 256 : 64;
	size_t grid = (n + block - 1) / block;
	gt_run<Body, A...><<<(unsigned)grid, block>>>(n, a...);
}

#define GT_BODY(name)                                                   \
	struct gtb_##name {                                             \
		template <typename... A>                                \
		__device__ static void run(size_t i, A... a)            \
		{                                                       \
			gtk_##name(i, a...);                            \
		}                                                       \
	};
GT_BODY(encoder_forward)
GT_BODY(encoder_backward_wpe)
GT_BODY(encoder_backward_wte)
GT_BODY(residual_forward)
GT_BODY(resid_dots)
GT_BODY(layernorm_forward)
GT_BODY(layernorm_backward_inp)
GT_BODY(layernorm_params_partial)
GT_BODY(colsum_finish)
GT_BODY(operand)
GT_BODY(bias_round)
GT_BODY(bias_partial)
GT_BODY(round)
GT_BODY(attention_forward)
GT_BODY(attention_backward_q)
GT_BODY(attention_backward_kv)
GT_BODY(gelu_forward)
GT_BODY(gelu_backward)
GT_BODY(crossentropy_forward)
GT_BODY(crossentropy_backward)
GT_BODY(grads)
GT_BODY(adamw)

#define GT_BACKEND gt_backend_cuda
#define GT_LAUNCH(body, n, ...) gt_launch<gtb_##body>((size_t)(n), __VA_ARGS__)

/* --- device memory --- */

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

/* Reports a failed launch (a fault inside a kernel shows at the next copy). */
static mp_status be_check(void)
{
	return gpu_status_of(cudaGetLastError(), "a training kernel");
}

static int be_operand_kind(fmt_id f)
{
	switch (f) {
	case FMT_BF16: case FMT_FP16: return GT_OP_NATIVE16;
	case FMT_E4M3: case FMT_E5M2: return GT_OP_BF16;
	default: return GT_OP_F32;
	}
}

static mp_status be_gemm(fmt_id compute, int ta, int tb, size_t M, size_t N, size_t K, float alpha, const void *A,
                         size_t lda, const void *B, size_t ldb, float beta, float *C, size_t ldc)
{
	return gpu_gemm(compute, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

#include "gpu/gt_impl.h"
