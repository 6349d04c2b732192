/* The GPU trainer's products through cuBLAS, with real tensor-core math for
 * the low-precision compute formats (bf16/fp16 operands, fp32 accumulation;
 * TF32 only when asked). */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

extern "C" {
#include "gpu/gpu.h"
#include "gpu/gpu_internal.h"
}

static cublasHandle_t handle;
static cublasStatus_t handle_status = CUBLAS_STATUS_NOT_INITIALIZED;

static void handle_create(void)
{
	handle_status = cublasCreate(&handle);
	if (handle_status == CUBLAS_STATUS_SUCCESS)
		handle_status = cublasSetStream(handle, 0);
}

static mp_status cublas_status(cublasStatus_t s, const char *what)
{
	if (s == CUBLAS_STATUS_SUCCESS)
		return MP_OK;
	gpu_set_error("%s: %s", what, cublasGetStatusString(s));
	return s == CUBLAS_STATUS_ALLOC_FAILED ? MP_ENOMEM : MP_EIO;
}

extern "C" mp_status gpu_gemm(fmt_id fmt, int ta, int tb, size_t M, size_t N, size_t K, float alpha, const void *A,
                              size_t lda, const void *B, size_t ldb, float beta, float *C, size_t ldc)
{
	mp_status st = gpu_require();
	if (st != MP_OK)
		return st;
	cudaDataType_t ab;
	cublasComputeType_t compute;
	switch (fmt) {
	case FMT_FP32: ab = CUDA_R_32F; compute = CUBLAS_COMPUTE_32F_PEDANTIC; break;   /* no TF32 */
	case FMT_TF32: ab = CUDA_R_32F; compute = CUBLAS_COMPUTE_32F_FAST_TF32; break;
	case FMT_BF16: case FMT_E4M3: case FMT_E5M2: ab = CUDA_R_16BF; compute = CUBLAS_COMPUTE_32F; break;
	case FMT_FP16: ab = CUDA_R_16F; compute = CUBLAS_COMPUTE_32F; break;
	default:
		gpu_set_error("gpu_gemm: %s operands are not supported", fmt_get(fmt)->name);
		return MP_EUNSUPPORTED;
	}
	if (M == 0 || N == 0)
		return MP_OK;
	if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || lda > INT32_MAX || ldb > INT32_MAX || ldc > INT32_MAX) {
		gpu_set_error("gpu_gemm: a dimension exceeds 2^31 - 1");
		return MP_EINVAL;
	}
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, handle_create);
	st = cublas_status(handle_status, "cublasCreate");
	if (st != MP_OK)
		return st;
	/* Row-major C (M,N) = op(A) op(B) is column-major C^T (N,M) =
	 * op(B)^T op(A)^T, and a row-major array read as column-major is its
	 * transpose: B's memory goes first, with B's flag, then A's. */
	cublasOperation_t opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N, opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
	return cublas_status(cublasGemmEx(handle, opb, opa, (int)N, (int)M, (int)K, &alpha, B, ab, (int)ldb, A, ab,
	                                  (int)lda, &beta, C, CUDA_R_32F, (int)ldc, compute, CUBLAS_GEMM_DEFAULT),
	                     "cublasGemmEx");
}

extern "C" mp_status gpu_gemm_nt(fmt_id fmt, float *d_out, const void *d_a, const void *d_b, size_t M, size_t N,
                                 size_t K, float beta)
{
	if (fmt == FMT_E4M3 || fmt == FMT_E5M2) {
		gpu_set_error("gpu_gemm_nt: %s operands are not supported (fp32, tf32, bf16, fp16)", fmt_get(fmt)->name);
		return MP_EUNSUPPORTED;
	}
	return gpu_gemm(fmt, 0, 1, M, N, K, 1.0f, d_a, K, d_b, K, beta, d_out, N);
}
