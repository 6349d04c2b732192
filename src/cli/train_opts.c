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
	char why[512];
	if (o->cfg.device == TRAIN_DEVICE_CUDA && gpu_ready(NULL, why, sizeof why) != MP_OK) {
		cli_error(cmd, "--device cuda: %s", why);
		return CLI_ENV;
	}
	return CLI_OK;
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

/* Every policy against the run's shape, device and offset (policy_check),
 * with policy_check_note's notes; false after reporting the first refusal. */
static bool policies_fit(const char *cmd, const train_opts *su, const train_policy *pols, size_t np)
{
	for (size_t i = 0; i < np; i++) {
		char msg[512];
		if (policy_check(&pols[i], &su->cfg, msg, sizeof msg) != MP_OK) {
			cli_error(cmd, "%s", msg);
			return false;
		}
		if (policy_check_note(&pols[i], &su->cfg, msg, sizeof msg))
			fprintf(stderr, "mixprec %s: note: %s\n", cmd, msg);
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
	return policies_fit(cmd, su, out, *n);
}

/* Loads the corpus; on failure reports it and returns the exit status (2 for
 * a file that is unusable as text, 3 when it cannot be read), else CLI_OK. */
int train_opts_load_data(const char *cmd, const train_opts *su, corpus *c)
{
	char err[512], def[4096];
	const char *path = su->data ? su->data : corpus_default_path(def, sizeof def);
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
