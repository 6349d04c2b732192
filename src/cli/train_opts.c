#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/train_opts.h"
#include "gpu/gpu.h"
#include "gpu/gpu_trainer.h"
#include "util/file.h"

int train_opts_device_ready(const char *cmd, const train_opts *o)
{
	const char *why;
	if (o->cfg.device == TRAIN_DEVICE_CUDA && !gpu_ready(&why, NULL)) {
		cli_error(cmd, "--device cuda: %s", why);
		return CLI_ENV;
	}
	return CLI_OK;
}

/* What went wrong in a trainer call that returned st: the GPU's own
 * message when the device failed (cleared before each call), else the
 * status's text (a bad token, host memory, ...). */
const char *train_opts_why_failed(const train_opts *su, mp_status st)
{
	return su->cfg.device == TRAIN_DEVICE_CUDA && gpu_failed() ? gpu_last_error() : mp_status_message(st);
}

/* The GPU kernels keep a head's row in a local array. */
bool train_opts_shape_ok(const char *cmd, const train_opts *su)
{
	size_t hs = su->cfg.model.C / su->cfg.model.NH;
	if (su->cfg.device == TRAIN_DEVICE_CUDA && hs > GPU_TRAIN_HEAD_MAX) {
		cli_error(cmd, "--device cuda: a head of %zu channels (--channels / --heads) exceeds the GPU kernels' %d",
		          hs, GPU_TRAIN_HEAD_MAX);
		return false;
	}
	return true;
}

/* The offset must survive being stored in each policy's residual format. */
bool train_opts_offset_fits(const char *cmd, const train_opts *su, const train_policy *pols, size_t np)
{
	double v = fabs((double)su->cfg.resid_offset);
	for (size_t i = 0; i < np; i++) {
		const fmt_info *f = fmt_get(pols[i].resid_fmt);
		if (pols[i].resid_lowp && v > fmt_max(f)) {
			cli_error(cmd, "--resid-offset: %g does not fit in policy %s's residual stream (%s, largest %g)",
			          (double)su->cfg.resid_offset, pols[i].name, f->name, fmt_max(f));
			return false;
		}
	}
	return true;
}

/* --accum-bits / --promote-every: emulated on the CPU, for a low-precision
 * GEMM only (an fp32 GEMM is BLAS's). */
static bool accum_options_fit(const char *cmd, const train_opts *su, const train_policy *pols, size_t np)
{
	for (size_t i = 0; i < np; i++) {
		if (pols[i].fp8 != FP8_SCALING_NONE && su->cfg.device != TRAIN_DEVICE_CPU) {
			cli_error(cmd, "--device cuda: policy %s scales its fp8 tensors one by one (amax, scale, "
			          "history), which is emulated with --device cpu only", pols[i].name);
			return false;
		}
		if (pols[i].fp8 != FP8_SCALING_NONE && pols[i].bf16_last == su->cfg.model.L)
			fprintf(stderr, "mixprec %s: note: policy %s leaves all %zu blocks' Linears in %s (--bf16-last "
			        "%zu): nothing is cast to fp8 or fp4 (--bf16-last 0 casts them)\n", cmd, pols[i].name,
			        pols[i].bf16_last, fmt_get(pols[i].gemm_lowp ? pols[i].gemm_fmt : FMT_FP32)->name,
			        pols[i].bf16_last);
		if (pols[i].fp8 != FP8_SCALING_NONE && pols[i].bf16_last > su->cfg.model.L) {
			cli_error(cmd, "--bf16-last: policy %s leaves its last %zu blocks in bf16, and the model has %zu "
			          "(--layers)", pols[i].name, pols[i].bf16_last, su->cfg.model.L);
			return false;
		}
		if (!policy_accum_emulated(&pols[i]))
			continue;
		const char *opt = pols[i].accum_bits ? "--accum-bits" : "--promote-every";
		if (su->cfg.device == TRAIN_DEVICE_CUDA) {
			cli_error(cmd, "%s: the CUDA trainer's GEMMs are cuBLAS's, whose accumulator is the GPU's own; "
			          "the accumulator is emulated with --device cpu only", opt);
			return false;
		}
		if (!pols[i].gemm_lowp) {
			cli_error(cmd, "%s: policy %s multiplies in fp32 (BLAS); the accumulator is emulated for a "
			          "low-precision GEMM only (add --gemm F, e.g. fp8-e4m3)", opt, pols[i].name);
			return false;
		}
	}
	return true;
}

/* Resolves the policy list with the changes applied. */
bool train_opts_policies(const char *cmd, const train_opts *su, train_policy *out, size_t max, size_t *n)
{
	char err[1024];
	if (train_opts_resolve(su, su->policies, out, max, n, err, sizeof err) != MP_OK) {
		cli_error(cmd, "%s", err);
		return false;
	}
	return accum_options_fit(cmd, su, out, *n);
}

/* Loads the corpus; on failure reports it and returns the exit status (2 for
 * a file that is unusable as text, 3 when it cannot be read), else CLI_OK. */
int train_opts_load_data(const char *cmd, const train_opts *su, corpus *c)
{
	char err[512];
	const char *path = su->data ? su->data : corpus_default_path();
	mp_status st = corpus_load(c, path, su->cfg.t, err, sizeof err);
	if (st != MP_OK) {
		char hint[8400];
		cli_error(cmd, "--data: %s", st == MP_ENOMEM ? "out of memory" : err);
		if (st == MP_EIO && !su->data)
			cli_error(cmd, "%s", file_data_hint(hint, sizeof hint, "MIXPREC_DATADIR", path));
		return st == MP_EINVAL ? CLI_USAGE : CLI_ENV;
	}
	if (c->replaced)
		fprintf(stderr, "mixprec %s: note: %zu non-ASCII bytes of %s read as '?'\n", cmd, c->replaced, path);
	return CLI_OK;
}
