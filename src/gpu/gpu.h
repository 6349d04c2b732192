/* The CUDA device layer, callable from C.
 *
 * Built from gpu.cu and gpu_drift.cu when configure finds nvcc and cuBLAS;
 * otherwise gpu_none.c, whose gpu_ready() says "built without CUDA" and whose
 * other functions return MP_EUNSUPPORTED. A build with CUDA links the CUDA
 * runtime statically and loads the driver only when asked, so mixprec runs
 * on a machine without a GPU or driver; only --device cuda then fails.
 *
 * Pointers named d_* are device memory (gpu_alloc). Kernels run in order on
 * one stream; a function returning a status has checked the launch, and
 * gpu_sync() waits and reports any error a kernel hit.
 *
 * Errors: the functions a front end calls (gpu_ready, gpu_round_host,
 * gpu_bench_*) take the caller's char *err, size_t errlen and write the
 * sentence of a failure there (util/status.h). The device-array operations
 * below them, which only gpu/ and tests/gpu call, return a status and keep
 * the sentence in gpu/'s private per-thread record (gpu_internal.h), which
 * the boundary functions copy out. */
#ifndef MIXPREC_GPU_GPU_H
#define MIXPREC_GPU_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmt/bulk.h"
#include "util/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
	char name[256];
	int cc_major, cc_minor;     /* compute capability */
	size_t memory;              /* bytes of device memory */
	int driver_version;         /* e.g. 13000 for 13.0 */
	int runtime_version;
	int sms;                    /* streaming multiprocessors (at least 1) */
} gpu_info;

/* MP_OK when a CUDA device can run this build's kernels (checked once, then
 * cached); info (may be NULL) then gets the device's description.
 * Otherwise MP_EUNSUPPORTED with err saying why: "built without CUDA", "no
 * CUDA driver", "no CUDA device", a driver older than the runtime, or a
 * device this build has no code for (384 bytes hold any). */
mp_status gpu_ready(gpu_info *info, char *err, size_t errlen);

/* MIXPREC_GPU_PROFILE=1 (read once): the GPU trainer times every kernel
 * launch and cuBLAS GEMM with CUDA events. The rows (one per kernel body,
 * at most max) since the last reset; 0 without profiling or CUDA. */
typedef struct {
	const char *name;
	double ms;                   /* summed over its launches */
	unsigned long long launches;
} gpu_profile_row;
/* the row of the cuBLAS products */
#define GPU_PROFILE_GEMM "cuBLAS GEMM"
bool gpu_profile_enabled(void);
/* Turns the profile on or off from here on (the environment's setting until
 * then); returns the previous state. Not while a step runs. */
bool gpu_profile_set(bool on);
void gpu_profile_reset(void);
size_t gpu_profile_rows(gpu_profile_row *rows, size_t max);

/* --- memory --- */

mp_status gpu_alloc(void **d_p, size_t bytes);
/* The device memory free now and in all (cudaMemGetInfo). */
mp_status gpu_mem_info(size_t *free_bytes, size_t *total_bytes);
/* Frees d_p (NULL is fine); MP_OK, or the error cudaFree reports (often an
 * earlier kernel's fault), recorded in gpu/'s record. */
mp_status gpu_free(void *d_p);
mp_status gpu_put(void *d_dst, const void *src, size_t bytes);      /* host -> device */
mp_status gpu_get(void *dst, const void *d_src, size_t bytes);      /* device -> host */
mp_status gpu_copy(void *d_dst, const void *d_src, size_t bytes);   /* device -> device */
/* Waits for every kernel and copy; reports the first error. */
mp_status gpu_sync(void);

/* --- bulk rounding on device arrays, bit-identical to fmt_bulk_* --- */

/* fp32 -> format (o->mode RNE or SR; SR element i uses rng_bits(o->seed,
 * o->index0 + i) as the CPU does). MP_EUNSUPPORTED for other modes. */
mp_status gpu_bulk_encode(const fmt_bulk_opts *o, void *d_out, const float *d_in, size_t n);
/* format -> fp32, exact; NaN becomes 0x7fc00000. */
mp_status gpu_bulk_decode(fmt_id fmt, float *d_out, const void *d_in, size_t n);
/* Rounds d_x in place to values of the format. */
mp_status gpu_bulk_quantize(const fmt_bulk_opts *o, float *d_x, size_t n);
/* fmt_bulk_accumulate on the device: d_x[i] = q(d_x[i] + d_u[i]), Kahan with
 * d_comp (may be NULL); *unchanged (may be NULL; then no wait) gets the number
 * of elements that did not change. */
mp_status gpu_bulk_accumulate(const fmt_bulk_opts *o, float *d_x, float *d_comp, const float *d_u, size_t n,
                              size_t *unchanged);
/* gpu_bulk_encode on host arrays: copies in (n fp32 values) to the device,
 * encodes them into o->fmt and copies the n encoded elements
 * (fmt_bulk_elem_size(o->fmt) bytes each) back to out. The device buffers
 * are allocated and freed inside; errors as gpu_bulk_encode's, with the
 * sentence in err. */
mp_status gpu_round_host(const fmt_bulk_opts *o, void *out, const float *in, size_t n, char *err, size_t errlen);

/* --- products for the training backend (gpu_gemm.cu) --- */

/* Row-major C (M,N) = alpha op(A) op(B) + beta C, op transposing when ta
 * (tb) is set, accumulated and written in fp32 through cuBLAS. fmt is the
 * compute format: FMT_FP32 (fp32 math, TF32 off), FMT_TF32 (fp32 operands on
 * TF32 tensor cores), FMT_BF16 or FMT_FP16 (operands are arrays of 16-bit
 * patterns; tensor cores), FMT_E4M3 or FMT_E5M2 (fp8 values held as bf16
 * patterns, which bf16 tensor cores multiply exactly). */
mp_status gpu_gemm(fmt_id fmt, int ta, int tb, size_t M, size_t N, size_t K, float alpha, const void *A, size_t lda,
                   const void *B, size_t ldb, float beta, float *C, size_t ldc);

/* d_out (M,N) = d_a (M,K) @ d_b (N,K)^T + beta * d_out (a Linear layer:
 * inputs times weights transposed): gpu_gemm for fp32, tf32, bf16 and fp16;
 * MP_EUNSUPPORTED for the fp8 formats. */
mp_status gpu_gemm_nt(fmt_id fmt, float *d_out, const void *d_a, const void *d_b, size_t M, size_t N, size_t K,
                      float beta);

/* --- benchmarks (gpu_bench.c): device throughput against a device-to-device
 * cudaMemcpy of the same size measured in the same run --- */

typedef struct {
	const char *name;     /* kernel or variant */
	double seconds;       /* one pass, best of the repetitions */
	double rate;          /* GB/s of traffic (round) or updates/s (drift) */
	double bound;         /* drift: the copy's traffic rate / bytes an update moves; else 0 */
	double ratio;         /* rate / the copy's rate (round) or rate / bound (drift) */
} gpu_bench_row;

typedef void (*gpu_bench_emit)(void *ctx, const gpu_bench_row *row);

/* Rounding kernels on an fp32 array of mib MiB: rows for the copy (ratio 1),
 * then each kernel. On failure err says why. */
mp_status gpu_bench_round(size_t mib, unsigned reps, gpu_bench_emit emit, void *ctx, char *err, size_t errlen);
/* One drift step per pass over mib MiB of fp32 state for each variant
 * (gpu_bulk_accumulate), then the whole simulation (every variant, state in
 * registers over 64 steps) counted in element-steps against the bound of
 * moving all variants' state through memory once per step. On failure err
 * says why. */
mp_status gpu_bench_drift(size_t mib, unsigned reps, gpu_bench_emit emit, void *ctx, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
