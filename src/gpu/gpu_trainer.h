/* The GPU trainer: train/backend.h's interface implemented twice from one
 * source (gpu/gpu_trainer_impl.h with the kernel bodies of
 * gpu/gpu_kernels.h): gpu_trainer_cuda on the GPU (gpu_trainer.cu, its
 * table in gpu_trainer_cuda.c; in a build without CUDA, gpu_none.c's, whose
 * create returns MP_EUNSUPPORTED), and gpu_trainer_host, the same passes and
 * kernel bodies run on the CPU with sgemm for cuBLAS, which the tests use
 * to check the GPU trainer's code on machines without a GPU.
 *
 * The whole batch is one pass (the CPU trainer splits it into two halves
 * for its two threads); the statistics are the CPU trainer's, except that
 * underflow_frac counts the flushes of one pass where the CPU rounds each
 * half-batch's (smaller) gradients. */
#ifndef MIXPREC_GPU_GPU_TRAINER_H
#define MIXPREC_GPU_GPU_TRAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "train/backend.h"
#include "train/data.h"
#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest head size (channels / heads) the GPU kernels take: they
 * keep a head's row in a local array. create returns MP_EINVAL above it. */
#define GPU_TRAIN_HEAD_MAX 128

/* gpu_trainer_cuda's operations (gpu_trainer.cu), for its table. */
mp_status gpu_trainer_cuda_create(void **out, const train_config *cfg, const train_policy *p, const float *params,
                                  size_t P);
void gpu_trainer_cuda_free(void *s);
size_t gpu_trainer_cuda_acts_bytes(const void *s);
mp_status gpu_trainer_cuda_forward(void *s, const int *inputs, const int *targets, uint64_t step, double *loss,
                                   double *dot_se, double *dot_ee);
mp_status gpu_trainer_cuda_backward(void *s, float loss_scale);
mp_status gpu_trainer_cuda_grads(void *s, double inv_scale, size_t *nonzero, size_t *flushed, bool *found_inf,
                                 double *norm2);
mp_status gpu_trainer_cuda_update(void *s, double clip, double c1, double c2, uint64_t adam_t, size_t *nonzero,
                                  size_t *lost);
mp_status gpu_trainer_cuda_read(void *s, train_array which, float *host);
bool gpu_trainer_cuda_state_has(const void *s, train_state_array which);
mp_status gpu_trainer_cuda_state_read(void *s, train_state_array which, float *host);
mp_status gpu_trainer_cuda_state_write(void *s, train_state_array which, const float *host);

/* Every kernel body run on the GPU and on the host (the same code) over
 * random inputs at a small odd shape; emit gets each comparison: err is the
 * largest difference over the largest magnitude (inf: patterns differ where
 * tol is 0, i.e. where both sides must give the same bits), tol its bound
 * (looser where expf/logf enter). MP_EUNSUPPORTED without a usable GPU. */
typedef void (*gpu_kernel_emit)(void *ctx, const char *kernel, double err, double tol);
mp_status gpu_train_kernel_check(gpu_kernel_emit emit, void *ctx);

/* The GPT-2-small-shaped benchmark (gpu_train_bench.c): L12 H12 C768,
 * vocabulary 50257 (of which the character corpus uses the first 128 ids),
 * B4 T1024, fp32 then bf16-mixed, on the GPU. */
typedef struct {
	const char *shape;        /* "GPT-2 small: L12 H12 C768 V50257 B4 T1024" */
	const char *policy;
	double ms;                /* per step, mean of the timed steps after two warm-up steps */
	double ratio;             /* the fp32 row's ms / this ms */
	double tokens_per_s;      /* B T tokens per step / the step's time */
	double gemm_ms;           /* one more step, profiled: the cuBLAS GEMMs' time (CUDA events) */
	double kernels_ms;        /* that step's kernel and GEMM time in all */
	double gemm_share;        /* gemm_ms / kernels_ms */
	double device_gib;        /* device memory the trainer took */
} gpu_train_bench_row;
typedef void (*gpu_train_bench_emit)(void *ctx, const gpu_train_bench_row *row);

/* The context length to load the corpus for (1024). */
size_t gpu_train_bench_gpt2_context(void);
/* reps timed steps per policy; MP_EUNSUPPORTED without a GPU, MP_ENOMEM
 * when the device lacks the memory; err names the policy and shape of a
 * failure and says why (how much memory it needs and the device has). */
mp_status gpu_train_bench_gpt2(const corpus *c, unsigned reps, gpu_train_bench_emit emit, void *ctx, char *err,
                               size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
