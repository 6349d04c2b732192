/* The first piece of the GPU training backend: a Linear layer's product
 * through cuBLAS, with real tensor-core math for the low-precision compute
 * formats (bf16/fp16 operands, fp32 accumulation; TF32 only when asked).
 *
 * In its own file (and archive member) so that only programs calling it
 * link cuBLAS: mixprec itself does not yet, and starts without it. */
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

extern "C" mp_status gpu_gemm_nt(fmt_id fmt, float *d_out, const void *d_a, const void *d_b, size_t M, size_t N,
                                 size_t K, float beta)
{
	mp_status st = gpu_require();
	if (st != MP_OK)
		return st;
	cudaDataType_t ab;
	cublasComputeType_t compute;
	switch (fmt) {
	case FMT_FP32: ab = CUDA_R_32F; compute = CUBLAS_COMPUTE_32F_PEDANTIC; break;   /* no TF32 */
	case FMT_TF32: ab = CUDA_R_32F; compute = CUBLAS_COMPUTE_32F_FAST_TF32; break;
	case FMT_BF16: ab = CUDA_R_16BF; compute = CUBLAS_COMPUTE_32F; break;
	case FMT_FP16: ab = CUDA_R_16F; compute = CUBLAS_COMPUTE_32F; break;
	default:
		gpu_set_error("gpu_gemm_nt: %s operands are not supported (fp32, tf32, bf16, fp16)",
		              fmt_get(fmt)->name);
		return MP_EUNSUPPORTED;
	}
	if (M == 0 || N == 0)
		return MP_OK;
	if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX) {
		gpu_set_error("gpu_gemm_nt: a dimension exceeds 2^31 - 1");
		return MP_EINVAL;
	}
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, handle_create);
	st = cublas_status(handle_status, "cublasCreate");
	if (st != MP_OK)
		return st;
	/* row-major out (M,N) = a (M,K) b(N,K)^T is column-major out^T (N,M) =
	 * b^T a, where b and a read as column-major are (K,N) and (K,M) */
	float alpha = 1.0f;
	return cublas_status(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, (int)N, (int)M, (int)K, &alpha, d_b, ab,
	                                  (int)K, d_a, ab, (int)K, &beta, d_out, CUDA_R_32F, (int)N, compute,
	                                  CUBLAS_GEMM_DEFAULT),
	                     "cublasGemmEx");
}
