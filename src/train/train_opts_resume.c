/* train --resume: the options a saved run's state fixes, taken from its
 * metadata (train/train_state.c writes it) where the command line leaves
 * them out, and checked against it where it gives them. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/train_opts.h"
#include "train/train_opts_impl.h"

/* The options read back from the metadata, each through its own handler. */
static const struct {
	const char *key;
	int code;
	const char *option;
	bool in_preset;   /* --preset sets it too */
} rows[] = {
	{ "state.config.n_layer", OPT_LAYERS, "--layers", true },
	{ "state.config.n_head", OPT_HEADS, "--heads", true },
	{ "state.config.n_embd", OPT_CHANNELS, "--channels", true },
	{ "state.config.context", OPT_CONTEXT, "--context", true },
	{ "state.config.batch", OPT_BATCH, "--batch", true },
	{ "state.config.eval_every", OPT_EVAL, "--eval-every", true },
	{ "state.config.seed", OPT_SEED, "--seed", false },
	{ "state.config.lr", OPT_LR, "--lr", false },
	{ "state.config.lr_schedule", OPT_SCHED, "--lr-schedule", false },
	{ "state.config.warmup", OPT_WARMUP, "--warmup", false },
	{ "state.config.lr_min", OPT_LRMIN, "--lr-min", false },
	{ "state.config.beta1", OPT_BETA1, "--beta1", false },
	{ "state.config.beta2", OPT_BETA2, "--beta2", false },
	{ "state.config.resid_offset", OPT_OFFSET, "--resid-offset", false },
	{ "state.config.resid_offset_channels", OPT_OFFSET_CH, "--resid-offset-channels", false },
	{ "state.device", OPT_DEVICE, "--device", false },
};
enum { NROWS = sizeof rows / sizeof rows[0] };

/* The value an option set in o, as the metadata writes it. */
static void value_text(const train_opts *o, int code, char *buf, size_t n)
{
	const train_config *c = &o->cfg;
	switch (code) {
	case OPT_LAYERS: snprintf(buf, n, "%zu", c->model.L); break;
	case OPT_HEADS: snprintf(buf, n, "%zu", c->model.NH); break;
	case OPT_CHANNELS: snprintf(buf, n, "%zu", c->model.C); break;
	case OPT_CONTEXT: snprintf(buf, n, "%zu", c->t); break;
	case OPT_BATCH: snprintf(buf, n, "%zu", c->B); break;
	case OPT_EVAL: snprintf(buf, n, "%zu", c->eval_every); break;
	case OPT_SEED: snprintf(buf, n, "%llu", (unsigned long long)c->seed); break;
	case OPT_LR: snprintf(buf, n, "%.17g", c->lr); break;
	case OPT_SCHED: snprintf(buf, n, "%s", lr_kind_name(c->sched.kind)); break;
	case OPT_WARMUP: snprintf(buf, n, "%zu", c->sched.warmup); break;
	case OPT_LRMIN: snprintf(buf, n, "%.17g", c->sched.lr_min); break;
	case OPT_BETA1: snprintf(buf, n, "%.17g", c->beta1); break;
	case OPT_BETA2: snprintf(buf, n, "%.17g", c->beta2); break;
	case OPT_OFFSET: snprintf(buf, n, "%.17g", (double)c->resid_offset); break;
	case OPT_OFFSET_CH: snprintf(buf, n, "%d", c->resid_offset_channels); break;
	default: snprintf(buf, n, "%s", c->device == TRAIN_DEVICE_CUDA ? "cuda" : "cpu"); break;   /* OPT_DEVICE */
	}
}

/* Row r: taken from the saved value, or the given one checked against it. */
static mp_status one_row(train_opts *o, size_t r, const char *saved, const char *path, char *err, size_t errlen)
{
	int code = rows[r].code;
	bool explicit = TRAIN_GIVEN(o, code), by_preset = !explicit && rows[r].in_preset && o->preset;
	char why[1024];
	if (code == OPT_OFFSET_CH && !strcmp(saved, "0")) {   /* every channel, the default no option gives */
		if (explicit)
			return mp_fail(MP_EINVAL, err, errlen, "--resid-offset-channels %d: the saved run in %s offset every "
			               "channel (leave the option out)", o->cfg.resid_offset_channels, path);
		o->cfg.resid_offset_channels = 0;
		return MP_OK;
	}
	if (!explicit && !by_preset) {
		if (train_opts_option(o, code, saved, why, sizeof why) != MP_OK)
			return mp_fail(MP_EINVAL, err, errlen, "--resume: %s: %s '%s' is not a value of %s: %s", path, rows[r].key,
			               saved, rows[r].option, why);
		return MP_OK;
	}
	train_opts *t = malloc(sizeof *t);
	if (!t)
		return mp_fail(MP_ENOMEM, err, errlen, "out of memory");
	*t = *o;
	mp_status st = train_opts_option(t, code, saved, why, sizeof why);
	char have[64], want[64];
	value_text(o, code, have, sizeof have);
	value_text(t, code, want, sizeof want);
	free(t);
	if (st != MP_OK)
		return mp_fail(MP_EINVAL, err, errlen, "--resume: %s: %s '%s' is not a value of %s: %s", path, rows[r].key,
		               saved, rows[r].option, why);
	if (strcmp(have, want) && explicit)
		return mp_fail(MP_EINVAL, err, errlen, "%s %s: the saved run in %s has %s %s (a resume takes it from the "
		               "file: leave the option out)", rows[r].option, have, path, rows[r].option, want);
	if (strcmp(have, want))
		return mp_fail(MP_EINVAL, err, errlen, "--preset %s gives %s %s; the saved run in %s has %s %s (a resume "
		               "takes the shape from the file: leave --preset out)", o->preset, rows[r].option, have, path,
		               rows[r].option, want);
	return MP_OK;
}

/* The model's positions, which --context sets with the context and
 * --preset apart from it (tiny: 128 positions, windows of 32). */
static mp_status positions(train_opts *o, const char *saved, const char *path, char *err, size_t errlen)
{
	char *end;
	unsigned long long n = strtoull(saved, &end, 10);
	if (*end || end == saved || n < o->cfg.t || n > GPT_MAX_CONTEXT)
		return mp_fail(MP_EINVAL, err, errlen, "--resume: %s: state.config.n_positions '%s' is not in %zu..%d", path,
		               saved, o->cfg.t, GPT_MAX_CONTEXT);
	if (o->cfg.model.T == (size_t)n)
		return MP_OK;
	if (TRAIN_GIVEN(o, OPT_CONTEXT))
		return mp_fail(MP_EINVAL, err, errlen, "--context %zu: the saved run in %s has a model of %llu positions "
		               "trained on windows of %zu (leave --context out)", o->cfg.t, path, n, o->cfg.t);
	if (o->preset)
		return mp_fail(MP_EINVAL, err, errlen, "--preset %s gives a model of %zu positions; the saved run in %s has "
		               "%llu (leave --preset out)", o->preset, o->cfg.model.T, path, n);
	o->cfg.model.T = (size_t)n;
	return MP_OK;
}

/* --loss-scale dynamic:S's first scale, which the policy's name leaves out. */
static mp_status init_scale(train_opts *o, const char *saved, const char *path, char *err, size_t errlen)
{
	char *end;
	double s = strtod(saved, &end);
	if (*end || end == saved || !isfinite(s) || !(s >= 0) || s > 1e30)   /* 0: the policy's own first scale */
		return mp_fail(MP_EINVAL, err, errlen, "--resume: %s: state.config.init_scale '%s' is not a scale in [0, 1e30]",
		               path, saved);
	char have[64];
	snprintf(have, sizeof have, "%.17g", o->cfg.init_scale);
	if (TRAIN_GIVEN(o, OPT_SCALE) && strcmp(have, saved))
		return mp_fail(MP_EINVAL, err, errlen, "--loss-scale: the first scale %s; the saved run in %s started at %s "
		               "(leave the option out)", have, path, saved);
	o->cfg.init_scale = s;
	return MP_OK;
}

/* A cosine schedule's length: the saved run's total, which --steps must be. */
static mp_status cosine_steps(train_opts *o, const char *saved, const char *path, char *err, size_t errlen)
{
	if (o->cfg.sched.kind != LR_COSINE)
		return MP_OK;
	char *end;
	unsigned long long n = strtoull(saved, &end, 10);
	if (*end || end == saved || n == 0 || n > 100000000)
		return mp_fail(MP_EINVAL, err, errlen, "--resume: %s: state.config.lr_total '%s' is not a cosine's length",
		               path, saved);
	if (TRAIN_GIVEN(o, OPT_STEPS) && o->steps != (size_t)n)
		return mp_fail(MP_EINVAL, err, errlen, "--steps %zu: the saved run in %s has a cosine schedule over --steps "
		               "%llu, which a resume keeps (give --steps %llu, or leave it out; --stop-at N with --save ends "
		               "a run early and keeps the length)", o->steps, path, n, n);
	o->steps = (size_t)n;
	return MP_OK;
}

/* Whether two paths name the same file (or are the same text). */
static bool same_path(const char *a, const char *b)
{
	if (!strcmp(a, b))
		return true;
	char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
	bool same = ra && rb && !strcmp(ra, rb);
	free(ra);
	free(rb);
	return same;
}

/* --data: the saved run's text, when it recorded it. */
static mp_status data_option(train_opts *o, const run_state *rs, const char *path, char *note, size_t notelen,
                             char *err, size_t errlen)
{
	if (!run_state_meta(rs, TRAIN_OPTS_META_POLICIES)) {
		snprintf(note, notelen, "%s does not record the text it trained on: --data as given (without it, the "
		         "bundled corpus)", path);
		return MP_OK;
	}
	const char *saved = run_state_meta(rs, TRAIN_OPTS_META_DATA);
	if (o->data && !saved)
		return mp_fail(MP_EINVAL, err, errlen, "--data %s: the saved run in %s trained on the bundled corpus (leave "
		               "--data out)", o->data, path);
	if (o->data && !same_path(o->data, saved))
		return mp_fail(MP_EINVAL, err, errlen, "--data %s: the saved run in %s trained on %s (leave --data out)",
		               o->data, path, saved);
	if (!o->data && saved) {
		if (strlen(saved) >= sizeof o->saved_data)
			return mp_fail(MP_EINVAL, err, errlen, "--resume: %s: %s is too long", path, TRAIN_OPTS_META_DATA);
		snprintf(o->saved_data, sizeof o->saved_data, "%s", saved);
		o->data = o->saved_data;
	}
	return MP_OK;
}

/* Whether two resolved policies are the same policy. */
static bool same_policy(const train_policy *a, const train_policy *b)
{
	char da[1024], db[1024];
	policy_describe(a, da, sizeof da);
	policy_describe(b, db, sizeof db);
	return !strcmp(da, db) && a->static_scale == b->static_scale;
}

/* The policies: the saved run's list; --policy and the options that change
 * policies, when given, must give the same policies. */
static mp_status policies_option(train_opts *o, const run_state *rs, const char *path, char *err, size_t errlen)
{
	const char *saved = run_state_meta(rs, TRAIN_OPTS_META_POLICIES);
	bool given = TRAIN_GIVEN(o, OPT_POLICY) || o->nchanges > 0;
	if (!saved && given)
		return MP_OK;   /* a file without the run's list: each file's policy is checked against the options' */
	if (!saved)
		saved = run_state_meta(rs, "state.policy");
	if (!saved)
		return mp_fail(MP_EINVAL, err, errlen, "--resume: %s does not name its policies (give --policy as the saved "
		               "run had it)", path);
	if (strlen(saved) >= sizeof o->saved_policies)
		return mp_fail(MP_EINVAL, err, errlen, "--resume: %s: the policy list is too long", path);
	enum { MAXP = 16 };
	train_opts *t = malloc(sizeof *t);
	train_policy *have = malloc(2 * MAXP * sizeof *have), *want = have + MAXP;
	size_t nh = 0, nw = 0;
	char why[1024];
	mp_status st = t && have ? MP_OK : mp_fail(MP_ENOMEM, err, errlen, "out of memory");
	if (st == MP_OK) {
		*t = *o;
		t->nchanges = 0;
		if (train_opts_resolve(t, saved, want, MAXP, &nw, why, sizeof why) != MP_OK)
			st = mp_fail(MP_EINVAL, err, errlen, "--resume: %s: its policies '%s': %s", path, saved, why);
	}
	if (st == MP_OK && given &&
	    train_opts_resolve(o, TRAIN_GIVEN(o, OPT_POLICY) ? o->policies : saved, have, MAXP, &nh, why, sizeof why) != MP_OK)
		st = mp_fail(MP_EINVAL, err, errlen, "%s", why);
	if (st == MP_OK && given && nh != nw)
		st = mp_fail(MP_EINVAL, err, errlen, "%s: the options give %zu %s; the saved run in %s has %zu (%s; a resume "
		             "takes them from the file: leave --policy and the policy changes out)",
		             TRAIN_GIVEN(o, OPT_POLICY) ? "--policy" : "the policy changes", nh, nh == 1 ? "policy" : "policies",
		             path, nw, saved);
	for (size_t i = 0; st == MP_OK && given && i < nh; i++)
		if (!same_policy(&have[i], &want[i]))
			st = mp_fail(MP_EINVAL, err, errlen, "%s: the options give policy %s; the saved run in %s has %s "
			             "(its policies: %s; a resume takes them from the file: leave --policy and the policy "
			             "changes out)", TRAIN_GIVEN(o, OPT_POLICY) ? "--policy" : "the policy changes",
			             have[i].name, path, want[i].name, saved);
	free(t);
	free(have);
	if (st != MP_OK)
		return st;
	snprintf(o->saved_policies, sizeof o->saved_policies, "%s", saved);
	o->policies = o->saved_policies;
	o->nchanges = 0;   /* the saved names carry them */
	return MP_OK;
}

mp_status train_opts_resume(train_opts *o, const run_state *rs, const char *path, char *note, size_t notelen,
                            char *err, size_t errlen)
{
	if (notelen)
		note[0] = '\0';
	for (size_t r = 0; r < NROWS; r++) {
		const char *saved = run_state_meta(rs, rows[r].key);
		if (!saved)
			return mp_fail(MP_EINVAL, err, errlen, "--resume: %s does not record %s (give %s as the saved run had it)",
			               path, rows[r].key, rows[r].option);
		if (one_row(o, r, saved, path, err, errlen) != MP_OK)
			return MP_EINVAL;
	}
	o->lr_min_set = TRAIN_GIVEN(o, OPT_LRMIN);   /* a constant schedule's saved lr_min is its default */
	const char *npos = run_state_meta(rs, "state.config.n_positions");
	const char *scale = run_state_meta(rs, "state.config.init_scale");
	const char *total = run_state_meta(rs, "state.config.lr_total");
	if (!npos || !scale || !total)
		return mp_fail(MP_EINVAL, err, errlen, "--resume: %s does not record %s (give %s as the saved run had it)", path,
		               !npos ? "state.config.n_positions" : scale ? "state.config.lr_total" : "state.config.init_scale",
		               !npos ? "--preset or --context" : scale ? "--steps" : "--loss-scale dynamic:S");
	mp_status st = positions(o, npos, path, err, errlen);
	if (st == MP_OK)
		st = init_scale(o, scale, path, err, errlen);
	if (st == MP_OK)
		st = cosine_steps(o, total, path, err, errlen);
	if (st == MP_OK)
		st = data_option(o, rs, path, note, notelen, err, errlen);
	if (st == MP_OK)
		st = policies_option(o, rs, path, err, errlen);
	if (st == MP_OK)
		st = train_opts_agree(o, err, errlen);
	return st;
}
