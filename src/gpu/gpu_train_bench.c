/* The GPT-2-small-shaped row of `mixprec bench train --device cuda` and
 * `train_gpu bench`: 12 layers, 12 heads, 768 channels, context 1024 and
 * GPT-2's vocabulary size, 50257. The corpus is the character one, so the
 * tokens are the bytes below 128 and the other ids never occur as inputs,
 * but every product and the softmax run over all 50257 logits: the step
 * does the work of GPT-2 small's (124M parameters). Plain C over gpu.h and
 * train.h; a build without CUDA compiles it too (the trainer then says
 * "built without CUDA"). */
#include <stdio.h>
#include <string.h>

#include "gpu/gpu.h"
#include "gpu/gpu_internal.h"
#include "gpu/gpu_trainer.h"
#include "train/policy.h"
#include "train/train.h"

enum { GPT2_B = 4, GPT2_T = 1024 };

size_t gpu_train_bench_gpt2_context(void)
{
	return GPT2_T;
}

/* The cuBLAS share of one profiled step: CUDA events around each GEMM and
 * each kernel launch (MIXPREC_GPU_PROFILE's machinery, switched on for
 * this step only: it serialises the stream, so the step's speed comes from
 * the unprofiled ones). */
static mp_status profiled_step(trainer *t, gpu_train_bench_row *row)
{
	bool was = gpu_profile_set(true);
	gpu_profile_reset();
	train_stats s;
	mp_status st = trainer_step(t, &s);
	gpu_profile_row rows[64];
	size_t n = st == MP_OK ? gpu_profile_rows(rows, 64) : 0;
	gpu_profile_set(was);
	for (size_t i = 0; i < n; i++) {
		row->kernels_ms += rows[i].ms;
		if (strcmp(rows[i].name, GPU_PROFILE_GEMM) == 0)
			row->gemm_ms += rows[i].ms;
	}
	row->gemm_share = row->kernels_ms > 0 ? row->gemm_ms / row->kernels_ms : 0;
	return st;
}

/* One policy: device memory, two warm-up steps, reps timed steps, one
 * profiled step; on failure why (n bytes) says what failed. */
static mp_status gpt2_row(const train_config *cfg, const char *policy, const corpus *c, unsigned reps,
                          gpu_train_bench_row *row, char *why, size_t n)
{
	train_policy p;
	mp_status st = policy_from_name(policy, &p);
	if (st != MP_OK)
		return mp_fail(st, why, n, "%s", mp_status_message(st));
	size_t free0 = 0, free1 = 0, total = 0;
	gpu_clear_error();
	st = gpu_error_out(gpu_mem_info(&free0, &total), why, n);
	trainer *t = NULL;
	if (st == MP_OK)
		st = trainer_create(&t, cfg, &p, c, why, n);
	if (st == MP_OK) {
		gpu_clear_error();
		st = gpu_error_out(gpu_mem_info(&free1, &total), why, n);
	}
	row->device_gib = (double)(free0 > free1 ? free0 - free1 : 0) / 1073741824.0;
	train_stats s;
	for (int i = 0; i < 2 && st == MP_OK; i++)
		st = trainer_step(t, &s);
	double sum = 0;
	for (unsigned i = 0; i < reps && st == MP_OK; i++) {
		st = trainer_step(t, &s);
		sum += s.ms;
	}
	row->ms = sum / (double)reps;
	row->tokens_per_s = (double)(cfg->B * cfg->t) / (row->ms * 1e-3);
	if (st == MP_OK)
		st = profiled_step(t, row);
	if (t && st != MP_OK && trainer_error(t)[0])
		snprintf(why, n, "%s", trainer_error(t));
	trainer_free(t);
	return st;
}

mp_status gpu_train_bench_gpt2(const corpus *c, unsigned reps, gpu_train_bench_emit emit, void *ctx, char *err,
                               size_t errlen)
{
	static const char *const policies[] = { "fp32", "bf16-mixed" };
	train_config cfg = train_config_default();
	cfg.model = (gpt_config){ .V = 50257, .T = GPT2_T, .C = 768, .L = 12, .NH = 12 };
	cfg.t = GPT2_T;
	cfg.B = GPT2_B;
	cfg.eval_every = 0;
	cfg.device = TRAIN_DEVICE_CUDA;
	static char shape[96];
	snprintf(shape, sizeof shape, "GPT-2 small: L%zu H%zu C%zu V%zu B%zu T%zu", cfg.model.L, cfg.model.NH,
	         cfg.model.C, cfg.model.V, cfg.B, cfg.t);
	double fp32_ms = 0;
	for (size_t k = 0; k < sizeof policies / sizeof policies[0]; k++) {
		gpu_train_bench_row row;
		memset(&row, 0, sizeof row);
		row.shape = shape;
		row.policy = policies[k];
		char why[400];
		mp_status st = gpt2_row(&cfg, policies[k], c, reps ? reps : 1, &row, why, sizeof why);
		if (st != MP_OK) {
			snprintf(err, errlen, "%s on cuda at %s: %s", policies[k], shape, why);
			return st;
		}
		if (k == 0)
			fp32_ms = row.ms;
		row.ratio = fp32_ms / row.ms;
		emit(ctx, &row);
	}
	return MP_OK;
}
