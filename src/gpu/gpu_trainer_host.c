/* The GPU trainer run on the CPU: gpu_trainer_impl.h's passes with "device memory"
 * in host memory, each kernel body called for every index in a loop, and
 * sgemm for cuBLAS (operands stored as fp32 values of the GEMM format, as
 * the CPU emulation holds them). Slow and single-threaded; it exists so the
 * tests can check the GPU trainer's code where there is no GPU. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_trainer.h"
#include "gpu/gpu_kernels.h"

#define GPU_TRAINER_LINKAGE static
#define GPU_TRAINER_OP(name) host_##name
#define GPU_TRAINER_LAUNCH(body, n, ...)                                 \
	do {                                                    \
		size_t n_ = (n);                                \
		for (size_t i_ = 0; i_ < n_; i_++)              \
			gpu_kernel_##body(i_, __VA_ARGS__);            \
	} while (0)

/* Host memory: malloc says when it runs out. */
static mp_status be_reserve(size_t bytes, size_t B, size_t T, size_t C, size_t L, size_t V)
{
	(void)bytes, (void)B, (void)T, (void)C, (void)L, (void)V;
	return MP_OK;
}

static mp_status be_alloc(void **p, size_t bytes)
{
	*p = calloc(1, bytes ? bytes : 1);
	return *p ? MP_OK : MP_ENOMEM;
}

static void be_free(void *p)
{
	free(p);
}

static mp_status be_put(void *d, const void *h, size_t bytes)
{
	memcpy(d, h, bytes);
	return MP_OK;
}

static mp_status be_get(void *h, const void *d, size_t bytes)
{
	memcpy(h, d, bytes);
	return MP_OK;
}

static mp_status be_zero(void *d, size_t bytes)
{
	memset(d, 0, bytes);
	return MP_OK;
}

static mp_status be_check(void)
{
	return MP_OK;
}

/* Every operand is an array of fp32 values. */
static int be_operand_kind(fmt_id f)
{
	(void)f;
	return GPU_KERNEL_OP_F32;
}

/* Row-major C (M,N) = alpha op(A) op(B) + beta C, fp32. */
static mp_status be_gemm(fmt_id compute, int ta, int tb, size_t M, size_t N, size_t K, float alpha, const void *A,
                         size_t lda, const void *B, size_t ldb, float beta, float *C, size_t ldc)
{
	(void)compute;
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N,
	            (int)K, alpha, (const float *)A, (int)lda, (const float *)B, (int)ldb, beta, C, (int)ldc);
	return MP_OK;
}

#include "gpu/gpu_trainer_impl.h"

/* Host memory and sgemm: the statuses say all, and err is left untouched. */
static mp_status host_create_err(void **out, const train_config *cfg, const train_policy *p, const float *params,
                                 size_t P, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	return host_create(out, cfg, p, params, P);
}

const train_backend gpu_trainer_host = {
	.name = "emulated",
	.create = host_create_err,
	.free = host_free,
	.acts_bytes = host_acts_bytes,
	.forward = host_forward,
	.backward = host_backward,
	.grads = host_grads,
	.update = host_update,
	.read = host_read,
	/* like the device's: reached through read() only, so the tests see
	 * what a GPU run copies back */
	.host_model = NULL,
	.host_raw_grads = NULL,
	.state_has = host_state_has,
	.state_read = host_state_read,
	.state_write = host_state_write,
};
