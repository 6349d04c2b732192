/* The GPU trainer's products through cuBLAS, with real tensor-core math for
 * the low-precision compute formats (bf16/fp16 operands, fp32 accumulation;
 * TF32 only when asked). */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
/* set by configure; a build without config.h looks cuBLAS up by its plain
 * name */
#ifndef MIXPREC_CUBLAS_FILE
#define MIXPREC_CUBLAS_FILE "libcublas.so"
#endif
#ifndef MIXPREC_CUBLAS_SONAME
#define MIXPREC_CUBLAS_SONAME "libcublas.so"
#endif

extern "C" {
#include "gpu/gpu.h"
#include "gpu/gpu_internal.h"
}

/* cuBLAS is loaded on first use: linked, it would cost every command of
 * the program 0.15 s and 200 MB before main. */
static struct {
	decltype(&cublasCreate_v2) create;
	decltype(&cublasSetStream_v2) set_stream;
	cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
	                          const void *, cudaDataType, int, const void *, cudaDataType, int, const void *, void *,
	                          cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
	decltype(&cublasGetStatusString) status_string;
} cb;
static cublasHandle_t handle;
static cublasStatus_t handle_status = CUBLAS_STATUS_NOT_INITIALIZED;
static char load_error[384];

static void handle_create(void)
{
	void *lib = dlopen(MIXPREC_CUBLAS_FILE, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL)
		lib = dlopen(MIXPREC_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		const char *why = dlerror();
		snprintf(load_error, sizeof load_error, "cuBLAS cannot be loaded (%s): %s", MIXPREC_CUBLAS_FILE,
		         why ? why : "unknown error");
		return;
	}
	cb.create = (decltype(cb.create))dlsym(lib, "cublasCreate_v2");
	cb.set_stream = (decltype(cb.set_stream))dlsym(lib, "cublasSetStream_v2");
	cb.gemm_ex = (decltype(cb.gemm_ex))dlsym(lib, "cublasGemmEx");
	cb.status_string = (decltype(cb.status_string))dlsym(lib, "cublasGetStatusString");
	if (!cb.create || !cb.set_stream || !cb.gemm_ex || !cb.status_string) {
		snprintf(load_error, sizeof load_error, "%s lacks a cuBLAS function this build calls", MIXPREC_CUBLAS_FILE);
		cb.create = NULL;
		return;
	}
	handle_status = cb.create(&handle);
	if (handle_status == CUBLAS_STATUS_SUCCESS)
		handle_status = cb.set_stream(handle, 0);
}

static mp_status cublas_status(cublasStatus_t s, const char *what)
{
	if (s == CUBLAS_STATUS_SUCCESS)
		return MP_OK;
	gpu_set_error("%s: %s", what, cb.status_string(s));
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
	if (cb.create == NULL) {
		gpu_set_error("%s", load_error);
		return MP_EIO;
	}
	st = cublas_status(handle_status, "cublasCreate");
	if (st != MP_OK)
		return st;
	/* a failed kernel before the product is named as such, not as cuBLAS's */
	st = gpu_status_of(cudaPeekAtLastError(), "a kernel before cublasGemmEx");
	if (st != MP_OK)
		return st;
	/* Row-major C (M,N) = op(A) op(B) is column-major C^T (N,M) =
	 * op(B)^T op(A)^T, and a row-major array read as column-major is its
	 * transpose: B's memory goes first, with B's flag, then A's. */
	cublasOperation_t opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N, opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
	return cublas_status(cb.gemm_ex(handle, opb, opa, (int)N, (int)M, (int)K, &alpha, B, ab, (int)ldb, A, ab,
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
