/* The CUDA training backend's table (its operations are in gpu_trainer.cu;
 * here because CUDA C++ lacks designated initialisers). Each operation
 * starts by forgetting gpu/'s record of an earlier failure, so that the
 * error hook gives the sentence of the operation that failed. */
#include <stdio.h>

#include "gpu/gpu_internal.h"
#include "gpu/gpu_trainer.h"


static mp_status cuda_forward(void *s, const int *inputs, const int *targets, uint64_t step, double *loss,
                              double *dot_se, double *dot_ee)
{
	gpu_clear_error();
	return gpu_trainer_cuda_forward(s, inputs, targets, step, loss, dot_se, dot_ee);
}

static mp_status cuda_backward(void *s, float loss_scale)
{
	gpu_clear_error();
	return gpu_trainer_cuda_backward(s, loss_scale);
}

static mp_status cuda_grads(void *s, double inv_scale, size_t *nonzero, size_t *flushed, bool *found_inf,
                            double *norm2)
{
	gpu_clear_error();
	return gpu_trainer_cuda_grads(s, inv_scale, nonzero, flushed, found_inf, norm2);
}

static mp_status cuda_update(void *s, double clip, double c1, double c2, uint64_t adam_t, size_t *nonzero,
                             size_t *lost)
{
	gpu_clear_error();
	return gpu_trainer_cuda_update(s, clip, c1, c2, adam_t, nonzero, lost);
}

static mp_status cuda_read(void *s, train_array which, float *host)
{
	gpu_clear_error();
	return gpu_trainer_cuda_read(s, which, host);
}

static mp_status cuda_state_read(void *s, train_state_array which, float *host)
{
	gpu_clear_error();
	return gpu_trainer_cuda_state_read(s, which, host);
}

static mp_status cuda_state_write(void *s, train_state_array which, const float *host)
{
	gpu_clear_error();
	return gpu_trainer_cuda_state_write(s, which, host);
}

/* The record holds the sentence of the last operation's failure. */
static bool cuda_error(const void *s, char *err, size_t errlen)
{
	(void)s;
	if (!gpu_failed())
		return false;
	snprintf(err, errlen, "%s", gpu_last_error());
	return true;
}

static mp_status cuda_create(void **out, const train_config *cfg, const train_policy *p, const float *params,
                             size_t P, char *err, size_t errlen)
{
	gpu_clear_error();
	mp_status st = gpu_trainer_cuda_create(out, cfg, p, params, P);
	if (st != MP_OK)
		cuda_error(NULL, err, errlen);
	return st;
}

const train_backend gpu_trainer_cuda = {
	.name = "cuda",
	.create = cuda_create,
	.free = gpu_trainer_cuda_free,
	.acts_bytes = gpu_trainer_cuda_acts_bytes,
	.forward = cuda_forward,
	.backward = cuda_backward,
	.grads = cuda_grads,
	.update = cuda_update,
	.read = cuda_read,
	/* the state lives on the device: read() copies it back */
	.host_model = NULL,
	.host_raw_grads = NULL,
	.state_has = gpu_trainer_cuda_state_has,
	.state_read = cuda_state_read,
	.state_write = cuda_state_write,
	.error = cuda_error,
};
