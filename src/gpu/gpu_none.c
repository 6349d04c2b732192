/* The device layer of a build without CUDA: nothing is ready, and every
 * operation says why. */
#include "drift/drift_gpu.h"
#include "gpu/gpu.h"
#include "gpu/gpu_internal.h"
#include "gpu/gpu_trainer.h"

static const char none[] = "built without CUDA";

mp_status gpu_ready(gpu_info *info, char *err, size_t errlen)
{
	(void)info;
	return mp_fail(MP_EUNSUPPORTED, err, errlen, "%s", none);
}

const char *gpu_last_error(void)
{
	return none;
}

void gpu_clear_error(void)
{
}

bool gpu_failed(void)
{
	return false;
}

mp_status gpu_error_out(mp_status st, char *err, size_t errlen)
{
	return st == MP_OK ? st : mp_fail(st, err, errlen, "%s", none);
}

mp_status gpu_alloc(void **d_p, size_t bytes)
{
	(void)bytes;
	*d_p = NULL;
	return MP_EUNSUPPORTED;
}

mp_status gpu_mem_info(size_t *free_bytes, size_t *total_bytes)
{
	*free_bytes = *total_bytes = 0;
	return MP_EUNSUPPORTED;
}

mp_status gpu_free(void *d_p)
{
	(void)d_p;
	return MP_OK;
}

mp_status gpu_put(void *d_dst, const void *src, size_t bytes)
{
	(void)d_dst, (void)src, (void)bytes;
	return MP_EUNSUPPORTED;
}

mp_status gpu_get(void *dst, const void *d_src, size_t bytes)
{
	(void)dst, (void)d_src, (void)bytes;
	return MP_EUNSUPPORTED;
}

mp_status gpu_copy(void *d_dst, const void *d_src, size_t bytes)
{
	(void)d_dst, (void)d_src, (void)bytes;
	return MP_EUNSUPPORTED;
}

mp_status gpu_sync(void)
{
	return MP_EUNSUPPORTED;
}

mp_status gpu_bulk_encode(const fmt_bulk_opts *o, void *d_out, const float *d_in, size_t n)
{
	(void)o, (void)d_out, (void)d_in, (void)n;
	return MP_EUNSUPPORTED;
}

mp_status gpu_bulk_decode(fmt_id fmt, float *d_out, const void *d_in, size_t n)
{
	(void)fmt, (void)d_out, (void)d_in, (void)n;
	return MP_EUNSUPPORTED;
}

mp_status gpu_bulk_quantize(const fmt_bulk_opts *o, float *d_x, size_t n)
{
	(void)o, (void)d_x, (void)n;
	return MP_EUNSUPPORTED;
}

mp_status gpu_bulk_accumulate(const fmt_bulk_opts *o, float *d_x, float *d_comp, const float *d_u, size_t n,
                              size_t *unchanged)
{
	(void)o, (void)d_x, (void)d_comp, (void)d_u, (void)n;
	if (unchanged)
		*unchanged = 0;
	return MP_EUNSUPPORTED;
}

mp_status gpu_round_host(const fmt_bulk_opts *o, void *out, const float *in, size_t n, char *err, size_t errlen)
{
	(void)o;
	(void)out;
	(void)in;
	(void)n;
	return mp_fail(MP_EUNSUPPORTED, err, errlen, "%s", none);
}

mp_status gpu_drift_create(gpu_drift **out, const gpu_drift_params *p, char *err, size_t errlen)
{
	(void)p;
	*out = NULL;
	return mp_fail(MP_EUNSUPPORTED, err, errlen, "%s", none);
}

void gpu_drift_free(gpu_drift *s)
{
	(void)s;
}

mp_status gpu_drift_advance(gpu_drift *s, uint64_t step0, size_t n, char *err, size_t errlen)
{
	(void)s, (void)step0, (void)n;
	return mp_fail(MP_EUNSUPPORTED, err, errlen, "%s", none);
}

mp_status gpu_drift_read(gpu_drift *s, double *x64, float *const x[GPU_DRIFT_NF], float *comp,
                         uint64_t unchanged[GPU_DRIFT_NF + 1], char *err, size_t errlen)
{
	(void)s, (void)x64, (void)x, (void)comp, (void)unchanged;
	return mp_fail(MP_EUNSUPPORTED, err, errlen, "%s", none);
}

mp_status gpu_gemm_nt(fmt_id fmt, float *d_out, const void *d_a, const void *d_b, size_t M, size_t N, size_t K,
                      float beta)
{
	(void)fmt, (void)d_out, (void)d_a, (void)d_b, (void)M, (void)N, (void)K, (void)beta;
	return MP_EUNSUPPORTED;
}

mp_status gpu_gemm(fmt_id fmt, int ta, int tb, size_t M, size_t N, size_t K, float alpha, const void *A, size_t lda,
                   const void *B, size_t ldb, float beta, float *C, size_t ldc)
{
	(void)fmt, (void)ta, (void)tb, (void)M, (void)N, (void)K, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb;
	(void)beta, (void)C, (void)ldc;
	return MP_EUNSUPPORTED;
}

/* --- the training backend: nothing to create --- */

static mp_status none_create(void **out, const train_config *cfg, const train_policy *p, const float *params,
                             size_t P, char *err, size_t errlen)
{
	(void)cfg, (void)p, (void)params, (void)P;
	*out = NULL;
	return mp_fail(MP_EUNSUPPORTED, err, errlen, "%s", none);
}

const train_backend gpu_trainer_cuda = { .name = "cuda", .create = none_create };

mp_status gpu_train_kernel_check(gpu_kernel_emit emit, void *ctx)
{
	(void)emit, (void)ctx;
	return MP_EUNSUPPORTED;
}

bool gpu_profile_enabled(void)
{
	return false;
}

bool gpu_profile_set(bool on)
{
	(void)on;
	return false;
}

void gpu_profile_reset(void)
{
}

size_t gpu_profile_rows(gpu_profile_row *rows, size_t max)
{
	(void)rows;
	(void)max;
	return 0;
}
