#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/ckpt_state.h"
#include "ckpt/gpt2.h"
#include "cli/cli.h"
#include "cli/train_resume.h"
#include "train/train_opts.h"
#include "train/train_state.h"

const char train_resume_help[] =
	"  --resume FILE      continue the run saved in FILE (a --save) bit for bit, with\n"
	"                     its optimiser, loss scaler and step; --steps is the run's\n"
	"                     new total. The shape, policies, optimiser, schedule, seed,\n"
	"                     data and device come from FILE: an option that differs\n"
	"                     from the saved run is an error (several policies: FILE\n"
	"                     as --save was given it)\n"
	"  --stop-at N        end after step N of the --steps run (with --save, to\n"
	"                     --resume it later: a cosine schedule keeps its length)\n";

/* end from --stop-at and --steps, after start is known. */
static int set_end(train_resume *r, const train_opts *su)
{
	r->end = su->steps;
	if (!r->stop_at)
		return CLI_OK;
	if (r->stop_at > su->steps || r->stop_at <= r->start) {
		cli_error("train", "--stop-at %zu: must be after step %zu and at most --steps (%zu)", r->stop_at, r->start,
		          su->steps);
		return CLI_USAGE;
	}
	r->end = r->stop_at;
	return CLI_OK;
}

/* The option behind a run-state metadata key, for the message. */
static const char *option_of(const char *err)
{
	static const struct {
		const char *key, *option;
	} hints[] = {
		{ "state.policy", "--policy and the options that change it" },
		{ "state.device", "--device" }, { "state.config.n_layer", "--layers" },
		{ "state.config.n_head", "--heads" }, { "state.config.n_embd", "--channels" },
		{ "state.config.n_positions", "--context" }, { "state.config.batch", "--batch" },
		{ "state.config.context", "--context" }, { "state.config.seed", "--seed" },
		{ "state.config.lr_schedule", "--lr-schedule" }, { "state.config.lr_min", "--lr-min" },
		{ "state.config.lr_total", "--steps: a cosine schedule's length is fixed when the run starts" },
		{ "state.config.lr", "--lr" }, { "state.config.warmup", "--warmup" },
		{ "state.config.beta1", "--beta1" }, { "state.config.beta2", "--beta2" },
		{ "state.config.eval_every", "--eval-every" },
		{ "state.config.resid_offset_channels", "--resid-offset-channels" },
		{ "state.config.resid_offset", "--resid-offset" }, { "state.config.init_scale", "--loss-scale dynamic:S" },
	};
	size_t len = strcspn(err, ":");
	for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++)
		if (strlen(hints[i].key) == len && !strncmp(err, hints[i].key, len))
			return hints[i].option;
	return NULL;
}

/* The run state of the open checkpoint m (read from path) into rs: a
 * tensor count a run can have and a recorded state. CLI_OK, or the exit
 * status after reporting (rs then freed). */
static int state_of(const ckpt_model *m, const char *path, run_state *rs)
{
	run_state_init(rs);
	if (m->file.n > CKPT_STATE_MAX_TENSORS) {
		cli_error("train", "--resume: %s holds %zu tensors, more than the %d a run can have", path, m->file.n,
		          CKPT_STATE_MAX_TENSORS);
		return CLI_USAGE;
	}
	if (ckpt_state_read(m, rs) != MP_OK) {
		cli_error("train", "--resume: out of memory");
		run_state_free(rs);
		return CLI_ENV;
	}
	if (!run_state_meta(rs, "state.format")) {
		cli_error("train", "--resume: %s has no run state (only weights: --init FILE starts a new run from them)",
		          path);
		run_state_free(rs);
		return CLI_USAGE;
	}
	return CLI_OK;
}

/* Opens the checkpoint at path into m; CLI_OK, or the exit status after
 * reporting. */
static int open_checkpoint(const char *path, ckpt_model *m)
{
	char err[4200];
	mp_status st = ckpt_open(m, path, err, sizeof err);
	if (st == MP_OK)
		return CLI_OK;
	cli_error("train", "--resume: %s", st == MP_ENOMEM ? "out of memory" : err);
	return st == MP_EINVAL ? CLI_USAGE : CLI_ENV;
}

/* The run state of the checkpoint at path into rs; CLI_OK, or the exit
 * status after reporting. */
static int read_state(const char *path, run_state *rs)
{
	ckpt_model m;
	int rc = open_checkpoint(path, &m);
	if (rc != CLI_OK)
		return rc;
	rc = state_of(&m, path, rs);
	ckpt_close(&m);
	return rc;
}

/* Whether name, in the folder of file, is a policy's file of a run of
 * several that --save FILE wrote: FILE-POLICY.safetensors with POLICY the
 * file's own and the run's policy list recorded. Reads its state into rs. */
static bool sibling_of(const char *file, const char *dir, const char *name, run_state *rs, char *path, size_t n)
{
	if (snprintf(path, n, "%s%s", dir, name) >= (int)n)
		return false;
	ckpt_model m;
	char err[4200], want[4096];
	if (ckpt_open(&m, path, err, sizeof err) != MP_OK)
		return false;
	run_state_init(rs);
	bool ok = m.file.n <= CKPT_STATE_MAX_TENSORS && ckpt_state_read(&m, rs) == MP_OK;
	ckpt_close(&m);
	const char *pol = ok ? run_state_meta(rs, "state.policy") : NULL;
	const char *list = ok ? run_state_meta(rs, TRAIN_OPTS_META_POLICIES) : NULL;
	if (pol && list && strchr(list, ',') && ckpt_policy_path(want, sizeof want, file, pol) && !strcmp(want, path))
		return true;
	run_state_free(rs);
	return false;
}

/* FILE of a run of several policies, which --save FILE wrote as
 * FILE-POLICY.safetensors: the run state of the first such file (by name)
 * into rs and its path into path. */
static bool find_sibling(const char *file, run_state *rs, char *path, size_t n)
{
	const char *slash = strrchr(file, '/');
	char dir[4096];
	size_t dl = slash ? (size_t)(slash - file) + 1 : 0;
	if (dl >= sizeof dir)
		return false;
	snprintf(dir, sizeof dir, "%.*s", (int)dl, file);
	struct dirent **names;
	int count = scandir(dl ? dir : ".", &names, NULL, alphasort);
	if (count < 0)
		return false;
	bool found = false;
	for (int i = 0; i < count; i++) {
		if (!found && names[i]->d_name[0] != '.')
			found = sibling_of(file, dir, names[i]->d_name, rs, path, n);
		free(names[i]);
	}
	free(names);
	return found;
}

int train_resume_options(train_opts *su)
{
	run_state rs;
	char path[4096], err[8800], note[4400];
	FILE *probe = fopen(su->resume, "rb");
	int rc;
	if (probe || errno != ENOENT || !find_sibling(su->resume, &rs, path, sizeof path)) {
		if (probe)
			fclose(probe);
		snprintf(path, sizeof path, "%s", su->resume);
		if ((rc = read_state(path, &rs)) != CLI_OK)
			return rc;
	}
	mp_status st = train_opts_resume(su, &rs, path, note, sizeof note, err, sizeof err);
	run_state_free(&rs);
	if (st != MP_OK) {
		cli_error("train", "%s", st == MP_ENOMEM ? "out of memory" : err);
		return st == MP_ENOMEM ? CLI_ENV : CLI_USAGE;
	}
	if (note[0])
		fprintf(stderr, "mixprec train: note: %s\n", note);
	return CLI_OK;
}

/* The step count of a run state (checked again by the import). */
static bool saved_step(const run_state *rs, size_t *step)
{
	const rs_tensor *x = run_state_find(rs, "state.step");
	int64_t v;
	if (!x || x->dtype != RS_I64 || x->ndim != 0)
		return false;
	memcpy(&v, x->data, sizeof v);
	if (v < 0)
		return false;
	*step = (size_t)v;
	return true;
}

/* Reads policy i's file into r->states[i]; CLI_OK or the exit status. */
static int read_one(train_resume *r, const train_opts *su, const train_policy *p, size_t i)
{
	const char *path = r->paths[i];
	char err[4200];
	ckpt_model m;
	int rc = open_checkpoint(path, &m);
	if (rc != CLI_OK)
		return rc;
	if (ckpt_check_shape(&m, su->cfg.model, err, sizeof err) != MP_OK) {
		cli_error("train", "--resume: %s: %s", path, err);
		rc = CLI_USAGE;
	} else if (m.policy && strcmp(m.policy, p->name)) {
		cli_error("train", "--resume: %s holds a run of policy %s, the options give %s", path, m.policy, p->name);
		rc = CLI_USAGE;
	} else {
		rc = state_of(&m, path, &r->states[i]);
	}
	ckpt_close(&m);
	return rc;
}

int train_resume_prepare(train_resume *r, const train_opts *su, const train_ckpt *k, const train_policy *pols,
                         size_t np)
{
	if (!r->file)
		return set_end(r, su);
	if (k->init) {
		cli_error("train", "--resume and --init: give one (--init starts a new run from saved weights, "
		          "--resume continues a saved run)");
		return CLI_USAGE;
	}
	r->states = calloc(np, sizeof *r->states);
	r->paths = calloc(np, sizeof *r->paths);
	if (!r->states || !r->paths) {
		cli_error("train", "out of memory");
		return CLI_ENV;
	}
	r->np = np;
	for (size_t i = 0; i < np; i++) {
		if (!train_ckpt_path(r->paths[i], sizeof r->paths[i], r->file, pols, np, i)) {
			cli_error("train", "--resume: '%s': the path is too long", r->file);
			return CLI_USAGE;
		}
		int rc = read_one(r, su, &pols[i], i);
		if (rc != CLI_OK)
			return rc;
		size_t step;
		if (!saved_step(&r->states[i], &step)) {
			cli_error("train", "--resume: %s: no valid state.step", r->paths[i]);
			return CLI_USAGE;
		}
		if (i > 0 && step != r->start) {
			cli_error("train", "--resume: %s is at step %zu, %s at step %zu: the policies of a run go together",
			          r->paths[0], r->start, r->paths[i], step);
			return CLI_USAGE;
		}
		r->start = step;
	}
	if (r->start >= su->steps) {
		cli_error("train", "--steps %zu: the run in %s has done %zu steps already (--steps is the run's total)",
		          su->steps, r->paths[0], r->start);
		return CLI_USAGE;
	}
	return set_end(r, su);
}

int train_resume_apply(train_resume *r, trainer *const *tr, const train_policy *pols)
{
	for (size_t i = 0; i < r->np; i++) {
		char err[1024];
		mp_status st = trainer_state_import(tr[i], &r->states[i], err, sizeof err);
		if (st == MP_EUNSUPPORTED) {
			cli_error("train", "--resume: this device's trainer cannot restore a run state");
			return CLI_USAGE;
		}
		if (st != MP_OK) {
			const char *opt = st == MP_EINVAL ? option_of(err) : NULL;
			cli_error("train", "--resume: %s: policy %s: %s%s%s%s", r->paths[i], pols[i].name,
			          st == MP_EINVAL ? err : mp_status_message(st), opt ? " (" : "", opt ? opt : "", opt ? ")" : "");
			return st == MP_ENOMEM ? CLI_ENV : CLI_USAGE;
		}
	}
	return CLI_OK;
}

void train_resume_free(train_resume *r)
{
	for (size_t i = 0; r->states && i < r->np; i++)
		run_state_free(&r->states[i]);
	free(r->states);
	free(r->paths);
	r->states = NULL;
	r->paths = NULL;
}
