/* The CUDA training backend's table (its operations are in gpu_trainer.cu;
 * here because CUDA C++ lacks designated initialisers). */
#include "gpu/gpu_trainer.h"

const train_backend gpu_trainer_cuda = {
	.name = "cuda",
	.create = gpu_trainer_cuda_create,
	.free = gpu_trainer_cuda_free,
	.acts_bytes = gpu_trainer_cuda_acts_bytes,
	.forward = gpu_trainer_cuda_forward,
	.backward = gpu_trainer_cuda_backward,
	.grads = gpu_trainer_cuda_grads,
	.update = gpu_trainer_cuda_update,
	.read = gpu_trainer_cuda_read,
	/* the state lives on the device: read() copies it back */
	.host_model = NULL,
	.host_raw_grads = NULL,
	.state_has = gpu_trainer_cuda_state_has,
	.state_read = gpu_trainer_cuda_state_read,
	.state_write = gpu_trainer_cuda_state_write,
};
