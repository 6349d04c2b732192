#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/train_ckpt.h"
#include "ckpt/ckpt_state.h"
#include "ckpt/gpt2.h"
#include "train/run_state.h"
#include "train/train_state.h"
#include "util/file.h"

const char train_ckpt_help[] =
	"  --save FILE        the model of each policy at the end, as safetensors with\n"
	"                     Hugging Face GPT-2 names (F32; BF16/F16 for a policy that\n"
	"                     keeps its weights only in that format), and config.json\n"
	"                     beside it; several policies: FILE-POLICY.safetensors\n"
	"                     (a file, not a folder; at most 2 GiB, checked first)\n"
	"  --save-every N     also save every N steps (each write atomic)\n"
	"  --init FILE        start every policy from the weights in FILE (a --save),\n"
	"                     with a fresh optimiser; the shape options must match it\n";

bool train_ckpt_path(char *out, size_t n, const char *file, const train_policy *pols, size_t np, size_t i)
{
	return np == 1 ? snprintf(out, n, "%s", file) < (int)n : ckpt_policy_path(out, n, file, pols[i].name);
}

/* At least the bytes of policy p's checkpoint of model c: the weights in
 * their dtype and Adam's m and v in the optimiser's (both always saved;
 * v_ref and Kahan terms, and the header, only add to it). */
static uint64_t least_bytes(gpt_config c, const train_policy *p)
{
	uint64_t w, f32;
	if (!ckpt_weight_bytes(c, ckpt_dtype_for_policy(p), &w) || !ckpt_weight_bytes(c, ST_F32, &f32))
		return UINT64_MAX;
	uint64_t mv = f32 / 4 * 2 * rs_dtype_size(rs_dtype_of_format(p->optim_fmt));
	return mv > UINT64_MAX - w ? UINT64_MAX : w + mv;
}

static int prepare_paths(train_ckpt *k, gpt_config c, const train_policy *pols, size_t np)
{
	/* --save names a file, never a folder (the folder of the file holds config.json) */
	struct stat sb;
	size_t sl = strlen(k->save);
	if (sl == 0 || k->save[sl - 1] == '/' || (stat(k->save, &sb) == 0 && S_ISDIR(sb.st_mode))) {
		cli_error("train", "--save: '%s' is %s; pass a file, FILE.safetensors (in a folder: "
		          "%s%smodel.safetensors; several policies get FILE-POLICY.safetensors)", k->save,
		          sl ? "a folder" : "empty", k->save, sl && k->save[sl - 1] != '/' ? "/" : "");
		return CLI_USAGE;
	}
	k->paths = calloc(np, sizeof *k->paths);
	if (!k->paths) {
		cli_error("train", "out of memory");
		return CLI_ENV;
	}
	k->np = np;
	for (size_t i = 0; i < np; i++) {
		if (!train_ckpt_path(k->paths[i], sizeof k->paths[i], k->save, pols, np, i)) {
			cli_error("train", "--save: '%s': the path is too long", k->save);
			return CLI_USAGE;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(k->paths[i], k->paths[j])) {
				cli_error("train", "--save: policies %s and %s would both be saved as '%s'", pols[j].name,
				          pols[i].name, k->paths[i]);
				return CLI_USAGE;
			}
		uint64_t least = least_bytes(c, &pols[i]);
		if (least > CKPT_MAX_TENSOR_BYTES) {
			cli_error("train", "--save: policy %s: the checkpoint would take at least %" PRIu64 " bytes (the "
			          "weights and Adam's m and v), above the %" PRIu64 " a checkpoint may hold (eval, sample and "
			          "--resume read files up to %zu bytes); choose a smaller --layers, --channels or --context",
			          pols[i].name, least, (uint64_t)CKPT_MAX_TENSOR_BYTES, ST_MAX_FILE);
			return CLI_USAGE;
		}
		char err[4200];
		if (file_check_target(k->paths[i], 0, err, sizeof err) != MP_OK) {
			cli_error("train", "--save: %s", err);
			return CLI_ENV;
		}
	}
	return CLI_OK;
}

static int prepare_init(train_ckpt *k, train_opts *su)
{
	char err[4200];
	ckpt_model m;
	mp_status st = ckpt_open(&m, k->init, err, sizeof err);
	if (st != MP_OK) {
		cli_error("train", "--init: %s", st == MP_ENOMEM ? "out of memory" : err);
		return st == MP_EINVAL ? CLI_USAGE : CLI_ENV;
	}
	if (ckpt_check_shape(&m, su->cfg.model, err, sizeof err) != MP_OK) {
		cli_error("train", "--init: %s: %s", k->init, err);
		ckpt_close(&m);
		return CLI_USAGE;
	}
	k->init_weights = malloc(m.num_params * sizeof *k->init_weights);
	st = k->init_weights ? ckpt_weights(&m, k->init_weights) : MP_ENOMEM;
	ckpt_close(&m);
	if (st != MP_OK) {
		cli_error("train", "--init: out of memory");
		return CLI_ENV;
	}
	su->cfg.init_weights = k->init_weights;
	return CLI_OK;
}

int train_ckpt_prepare(train_ckpt *k, train_opts *su, const train_policy *pols, size_t np)
{
	k->saved_at = SIZE_MAX;
	if (k->save_every && !k->save) {
		cli_error("train", "--save-every: needs --save FILE");
		return CLI_USAGE;
	}
	int rc = k->save ? prepare_paths(k, su->cfg.model, pols, np) : CLI_OK;
	if (rc == CLI_OK && k->init)
		rc = prepare_init(k, su);
	return rc;
}

int train_ckpt_check_weights(trainer *const *tr, const train_policy *pols, size_t np, size_t done)
{
	for (size_t i = 0; i < np; i++) {
		char what[256];
		mp_status st = trainer_sync(tr[i]);
		if (st != MP_OK) {
			cli_error("train", "policy %s: cannot read the weights back: %s", pols[i].name, trainer_error(tr[i]));
			return CLI_ENV;
		}
		const gpt_model *m = trainer_model(tr[i]);
		if (gpt_param_nonfinite_text(m->config, m->params_memory, what, sizeof what) != MP_OK) {
			cli_error("train", "out of memory");
			return CLI_ENV;
		}
		if (what[0]) {
			cli_error("train", "policy %s, step %zu: the update made the weights not finite (%s); the run diverged "
			          "and stops here, nothing is saved (a smaller --lr may help)", pols[i].name, done - 1, what);
			return CLI_USAGE;
		}
	}
	return CLI_OK;
}

/* What a resume needs beside one policy's state: the run's policy list and
 * its --data (train/train_opts.h's keys). */
static mp_status record_run(run_state *rs, const train_opts *su, const train_policy *pols, size_t np)
{
	char list[sizeof su->saved_policies];
	size_t len = 0;
	for (size_t i = 0; i < np; i++) {
		int w = snprintf(list + len, sizeof list - len, "%s%s", i ? "," : "", pols[i].name);
		if (w < 0 || (size_t)w >= sizeof list - len)
			return MP_OK;   /* too long to record: a resume names the policies with --policy */
		len += (size_t)w;
	}
	mp_status st = run_state_set_meta(rs, TRAIN_OPTS_META_POLICIES, list);
	if (st == MP_OK && su->data) {
		/* the absolute path, so that a resume from another folder reads the same text */
		char *abs = realpath(su->data, NULL);
		st = run_state_set_meta(rs, TRAIN_OPTS_META_DATA, abs ? abs : su->data);
		free(abs);
	}
	return st;
}

static int save_all(train_ckpt *k, const train_opts *su, trainer *const *tr, const train_policy *pols,
                    size_t done)
{
	char err[4200];
	st_dtype first = ckpt_dtype_for_policy(&pols[0]), cfg_dtype = first;
	int rc = train_ckpt_check_weights(tr, pols, k->np, done);
	if (rc != CLI_OK)
		return rc;
	for (size_t i = 0; i < k->np; i++) {
		mp_status st;
		const gpt_model *m = trainer_model(tr[i]);
		ckpt_info info = { .policy = pols[i].name, .step = done, .seed = su->cfg.seed,
		                   .dtype = ckpt_dtype_for_policy(&pols[i]) };
		if (info.dtype != first)
			cfg_dtype = ST_F32;
		/* the run state beside the weights, for train --resume */
		run_state rs;
		st_tensor *x = NULL;
		st_meta *xm = NULL;
		run_state_init(&rs);
		st = trainer_state_export(tr[i], &rs);
		if (st == MP_OK)
			st = record_run(&rs, su, pols, k->np);
		if (st == MP_OK)
			st = ckpt_state_extras(&rs, &x, &info.nextra, &xm, &info.nextra_meta);
		info.extra = x;
		info.extra_meta = xm;
		if (st == MP_OK)
			st = ckpt_save(k->paths[i], m->config, m->params_memory, &info, err, sizeof err);
		else
			snprintf(err, sizeof err, "%s: the run state: %s", k->paths[i], mp_status_message(st));
		free(x);
		free(xm);
		run_state_free(&rs);
		if (st != MP_OK) {
			cli_error("train", "--save: %s", err);
			return CLI_ENV;
		}
	}
	if (ckpt_write_config(k->paths[0], su->cfg.model, cfg_dtype, err, sizeof err) != MP_OK) {
		cli_error("train", "--save: %s", err);
		return CLI_ENV;
	}
	k->saved_at = done;
	return CLI_OK;
}

int train_ckpt_step(train_ckpt *k, const train_opts *su, trainer *const *tr, const train_policy *pols,
                    size_t done, bool final)
{
	if (!k->save || k->saved_at == done)
		return CLI_OK;
	if (final || (k->save_every && done % k->save_every == 0))
		return save_all(k, su, tr, pols, done);
	return CLI_OK;
}

void train_ckpt_free(train_ckpt *k)
{
	free(k->paths);
	free(k->init_weights);
	k->paths = NULL;
	k->init_weights = NULL;
}
