/* The trainer's state, shared by train.c (the steps) and train_state.c
 * (its export and import as a run state); nothing else includes it. */
#ifndef MIXPREC_TRAIN_TRAIN_IMPL_H
#define MIXPREC_TRAIN_TRAIN_IMPL_H

#include "train/backend.h"
#include "train/scaler.h"
#include "train/train.h"

struct trainer {
	train_config cfg;
	train_policy pol;
	const corpus *data;
	const train_backend *be;   /* where the passes and the optimiser run */
	void *state;               /* its state */
	gpt_model host;            /* batch (1,1): the initial weights, then, for a device
	                            * backend, the copies trainer_sync reads back */
	gpt_model *model;          /* trainer_model: the backend's own or host */
	float *raw_copy;           /* (P) a device backend's raw gradients as read back */
	const float *raw_grads;    /* trainer_raw_grads: the backend's own or raw_copy */
	int *inputs, *targets;     /* (B,t) */
	loss_scaler scaler;
	size_t step;
	size_t adam_t;             /* updates taken (skipped steps do not count) */
	char err[512];             /* trainer_error: why the last failing call failed */
};

#endif
