#include "train/backend.h"

static const train_backend *const backends[] = {
	[TRAIN_DEVICE_CPU] = &train_backend_cpu,
	[TRAIN_DEVICE_CUDA] = &gpu_trainer_cuda,
	[TRAIN_DEVICE_EMULATED] = &gpu_trainer_host,
};

const train_backend *train_backend_for(train_device d)
{
	return (size_t)d < sizeof backends / sizeof backends[0] ? backends[d] : NULL;
}
