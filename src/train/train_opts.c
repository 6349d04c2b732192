#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/numarg.h"
#include "util/optwalk.h"
#include "train/nvfp4_probe.h"
#include "train/shape.h"
#include "train/train_opts.h"
#include "train/train_opts_impl.h"


#define COMMON_OPTIONS                                                       \
	{ "policy", required_argument, NULL, OPT_POLICY },                   \
	{ "steps", required_argument, NULL, OPT_STEPS },                     \
	{ "data", required_argument, NULL, OPT_DATA },                       \
	{ "lr", required_argument, NULL, OPT_LR },                           \
	{ "lr-schedule", required_argument, NULL, OPT_SCHED },               \
	{ "warmup", required_argument, NULL, OPT_WARMUP },                   \
	{ "lr-min", required_argument, NULL, OPT_LRMIN },                    \
	{ "beta1", required_argument, NULL, OPT_BETA1 },                     \
	{ "beta2", required_argument, NULL, OPT_BETA2 },                     \
	{ "seed", required_argument, NULL, OPT_SEED },                       \
	{ "batch", required_argument, NULL, OPT_BATCH },                     \
	{ "context", required_argument, NULL, OPT_CONTEXT },                 \
	{ "layers", required_argument, NULL, OPT_LAYERS },                   \
	{ "heads", required_argument, NULL, OPT_HEADS },                     \
	{ "channels", required_argument, NULL, OPT_CHANNELS },               \
	{ "hidden", required_argument, NULL, OPT_CHANNELS },                 \
	{ "seq", required_argument, NULL, OPT_CONTEXT },                     \
	{ "micro-batch", required_argument, NULL, OPT_BATCH },               \
	{ "eval-every", required_argument, NULL, OPT_EVAL },                 \
	{ "resid-offset", required_argument, NULL, OPT_OFFSET },             \
	{ "resid-offset-channels", required_argument, NULL, OPT_OFFSET_CH }, \
	{ "threads", required_argument, NULL, OPT_THREADS },                 \
	{ "device", required_argument, NULL, OPT_DEVICE },                   \
	{ "gemm", required_argument, NULL, OPT_GEMM },                       \
	{ "residual", required_argument, NULL, OPT_RESID },                  \
	{ "weights", required_argument, NULL, OPT_WEIGHTS },                 \
	{ "grads", required_argument, NULL, OPT_GRADS },                     \
	{ "grad-accum", required_argument, NULL, OPT_ACCUM },                \
	{ "optim-state", required_argument, NULL, OPT_OPTIM },               \
	{ "loss-scale", required_argument, NULL, OPT_SCALE },                \
	{ "reductions", required_argument, NULL, OPT_REDUCE },               \
	{ "preset", required_argument, NULL, OPT_PRESET },                   \
	{ "accum-bits", required_argument, NULL, OPT_ACCBITS },              \
	{ "promote-every", required_argument, NULL, OPT_PROMOTE },           \
	{ "fp8-scaling", required_argument, NULL, OPT_FP8SCALING },          \
	{ "fp8-format", required_argument, NULL, OPT_FP8FMT },               \
	{ "amax-history", required_argument, NULL, OPT_AMAXH },              \
	{ "amax-algo", required_argument, NULL, OPT_AMAXALGO },              \
	{ "fp8-margin", required_argument, NULL, OPT_MARGIN },               \
	{ "scale-pow2", required_argument, NULL, OPT_POW2 },                 \
	{ "scale-rule", required_argument, NULL, OPT_SRULE },                \
	{ "bf16-last", required_argument, NULL, OPT_BF16LAST },              \
	{ "no-rht", no_argument, NULL, OPT_NORHT },                          \
	{ "no-sr", no_argument, NULL, OPT_NOSR },                            \
	{ "no-2d", no_argument, NULL, OPT_NO2D },                            \
	{ "bf16-from", required_argument, NULL, OPT_BF16FROM },              \
	{ "help", no_argument, NULL, 'h' }

static const struct option train_options[] = {
	COMMON_OPTIONS,
	{ "save", required_argument, NULL, OPT_SAVE },
	{ "save-every", required_argument, NULL, OPT_SAVE_EVERY },
	{ "init", required_argument, NULL, OPT_INIT },
	{ "resume", required_argument, NULL, OPT_RESUME },
	{ "stop-at", required_argument, NULL, OPT_STOP_AT },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "tensor-stats", required_argument, NULL, OPT_TSTATS },
	{ "progress-every", required_argument, NULL, OPT_PROGRESS },
	{ "probe", required_argument, NULL, OPT_PROBE },
	{ "probe-draws", required_argument, NULL, OPT_PROBE_DRAWS },
	{ "grad-noise", no_argument, NULL, OPT_GRAD_NOISE },
	{ 0 },
};

static const struct option gradhist_options[] = {
	COMMON_OPTIONS,
	{ "scale", required_argument, NULL, OPT_HSCALE },
	{ "csv", no_argument, NULL, OPT_HCSV },
	{ "of", required_argument, NULL, OPT_OF },
	{ 0 },
};

/* --- values --- */

/* A count in 1..max into *v. */
static mp_status count_value(const char *opt, const char *text, size_t *v, size_t max, char *err, size_t errlen)
{
	unsigned long long x;
	mp_status st = numarg_count(opt, text, 1, max, &x, err, errlen);
	if (st == MP_OK)
		*v = (size_t)x;
	return st;
}

/* A finite number into *v. */
static mp_status real_value(const char *opt, const char *text, double *v, char *err, size_t errlen)
{
	return numarg_real(opt, text, -DBL_MAX, false, DBL_MAX, v, err, errlen);
}

/* A count of at least 1 for --save-every and --stop-at. */
static mp_status positive_value(const char *opt, const char *text, size_t *v, char *err, size_t errlen)
{
	unsigned long long x;
	if (numarg_u64(opt, text, &x, err, errlen) != MP_OK)
		return MP_EINVAL;
	if (x == 0 || x > SIZE_MAX)
		return mp_fail(MP_EINVAL, err, errlen, "%s: must be at least 1 (got %s)", opt, text);
	*v = (size_t)x;
	return MP_OK;
}

/* A policy change named key with value text. */
static mp_status add_change(train_opts *o, const char *key, const char *text, char *err, size_t errlen)
{
	if (o->nchanges == TRAIN_OPTS_CHANGES)
		return mp_fail(MP_EINVAL, err, errlen, "too many policy changes");
	policy_change *c = &o->changes[o->nchanges];
	if (strlen(text) >= sizeof c->value)
		return mp_fail(MP_EINVAL, err, errlen, "--%s: '%s' is too long", key, text);
	c->key = key;
	snprintf(c->value, sizeof c->value, "%s", text);
	o->nchanges++;
	return MP_OK;
}

/* --loss-scale static:S and dynamic:S (S its first value), with S in the
 * full number syntax, as the change "static:S" with S exact and "dynamic"
 * with S the scaler's first value. */
static mp_status loss_scale_option(train_opts *o, const char *text, char *err, size_t errlen)
{
	bool dyn = !strncmp(text, "dynamic:", 8);
	if (!dyn && strncmp(text, "static:", 7)) {
		if (!*text || strlen(text) >= 40)
			return mp_fail(MP_EINVAL, err, errlen, "--loss-scale: '%s' is not none, dynamic[:S] or static:S", text);
		return add_change(o, "loss-scale", text, err, errlen);
	}
	double s;
	if (numarg_real(dyn ? "--loss-scale dynamic:S" : "--loss-scale static:S", text + (dyn ? 8 : 7), 0, true, 1e30,
	                &s, err, errlen) != MP_OK)
		return MP_EINVAL;
	if (dyn)
		o->cfg.init_scale = s;
	char buf[40];
	snprintf(buf, sizeof buf, dyn ? "dynamic" : "static:%.17g", s);
	return add_change(o, "loss-scale", buf, err, errlen);
}

/* --- the options --- */

/* The optimiser's options: lr, its schedule, Adam's betas. */
static mp_status optim_option(train_opts *o, int c, const char *v, char *err, size_t errlen)
{
	double d;
	unsigned long long u;
	switch (c) {
	case OPT_LR:
		if (real_value("--lr", v, &d, err, errlen) != MP_OK)
			return MP_EINVAL;
		if (d <= 0)
			return mp_fail(MP_EINVAL, err, errlen, "--lr: must be a positive number (got %s)", v);
		o->cfg.lr = d;
		return MP_OK;
	case OPT_SCHED:
		if (lr_kind_parse(v, &o->cfg.sched.kind) != MP_OK)
			return mp_fail(MP_EINVAL, err, errlen, "--lr-schedule: unknown schedule '%s' (known: constant, cosine)", v);
		return MP_OK;
	case OPT_WARMUP:
		if (numarg_u64("--warmup", v, &u, err, errlen) != MP_OK)
			return MP_EINVAL;
		o->cfg.sched.warmup = (size_t)u;
		return MP_OK;
	case OPT_LRMIN:
		if (real_value("--lr-min", v, &d, err, errlen) != MP_OK)
			return MP_EINVAL;
		if (d < 0)
			return mp_fail(MP_EINVAL, err, errlen, "--lr-min: must not be negative (got %s)", v);
		o->cfg.sched.lr_min = d;
		o->lr_min_set = true;
		return MP_OK;
	default: {   /* OPT_BETA1, OPT_BETA2 */
		const char *name = c == OPT_BETA1 ? "--beta1" : "--beta2";
		if (real_value(name, v, &d, err, errlen) != MP_OK)
			return MP_EINVAL;
		if (!(d >= 0 && d < 1))
			return mp_fail(MP_EINVAL, err, errlen, "%s: %s is not in [0, 1)", name, v);
		*(c == OPT_BETA1 ? &o->cfg.beta1 : &o->cfg.beta2) = d;
		return MP_OK;
	}
	}
}

/* The model's shape and the run's size: --batch, --context, --layers,
 * --heads, --channels, --preset, --eval-every, --steps, --seed. */
static mp_status shape_option(train_opts *o, int c, const char *v, char *err, size_t errlen)
{
	size_t n;
	unsigned long long u;
	switch (c) {
	case OPT_STEPS: return count_value("--steps", v, &o->steps, 100000000, err, errlen);
	case OPT_SEED:
		if (numarg_u64("--seed", v, &u, err, errlen) != MP_OK)
			return MP_EINVAL;
		o->cfg.seed = u;
		return MP_OK;
	case OPT_BATCH:
		o->shape_set |= TRAIN_SHAPE_SET_B;
		return count_value("--batch", v, &o->cfg.B, 4096, err, errlen);
	case OPT_CONTEXT:
		if (count_value("--context", v, &n, GPT_MAX_CONTEXT, err, errlen) != MP_OK)
			return MP_EINVAL;
		o->cfg.t = o->cfg.model.T = n;
		o->shape_set |= TRAIN_SHAPE_SET_T;
		return MP_OK;
	case OPT_LAYERS:
		o->shape_set |= TRAIN_SHAPE_SET_L;
		return count_value("--layers", v, &o->cfg.model.L, GPT_MAX_LAYERS, err, errlen);
	case OPT_HEADS:
		o->shape_set |= TRAIN_SHAPE_SET_NH;
		return count_value("--heads", v, &o->cfg.model.NH, GPT_MAX_HEADS, err, errlen);
	case OPT_CHANNELS:
		o->shape_set |= TRAIN_SHAPE_SET_C;
		return count_value("--channels", v, &o->cfg.model.C, GPT_MAX_CHANNELS, err, errlen);
	case OPT_PRESET: {
		const train_shape *sh;
		if (train_shape_from_name(v, &sh) != MP_OK)
			return mp_fail(MP_EINVAL, err, errlen, "--preset: unknown shape '%s' (known: %s)", v, train_shape_names());
		train_shape_apply(sh, &o->cfg, o->shape_set);
		return MP_OK;
	}
	default:   /* OPT_EVAL */
		if (numarg_u64("--eval-every", v, &u, err, errlen) != MP_OK)
			return MP_EINVAL;
		o->cfg.eval_every = (size_t)u;
		o->shape_set |= TRAIN_SHAPE_SET_EVAL;
		return MP_OK;
	}
}

/* The policy-change options, each named as policy_set's key. */
static mp_status change_option(train_opts *o, int c, const char *v, char *err, size_t errlen)
{
	static const char *const keys[] = {
		[OPT_GEMM - OPT_GEMM] = "gemm", [OPT_RESID - OPT_GEMM] = "residual",
		[OPT_WEIGHTS - OPT_GEMM] = "weights", [OPT_GRADS - OPT_GEMM] = "grads",
		[OPT_ACCUM - OPT_GEMM] = "grad-accum", [OPT_OPTIM - OPT_GEMM] = "optim-state",
		[OPT_SCALE - OPT_GEMM] = "loss-scale", [OPT_REDUCE - OPT_GEMM] = "reductions" };
	static const char *const later[] = {
		[OPT_ACCBITS - OPT_ACCBITS] = "accum-bits", [OPT_PROMOTE - OPT_ACCBITS] = "promote-every",
		[OPT_FP8SCALING - OPT_ACCBITS] = "fp8-scaling", [OPT_FP8FMT - OPT_ACCBITS] = "fp8-format",
		[OPT_AMAXH - OPT_ACCBITS] = "amax-history", [OPT_AMAXALGO - OPT_ACCBITS] = "amax-algo",
		[OPT_MARGIN - OPT_ACCBITS] = "fp8-margin", [OPT_POW2 - OPT_ACCBITS] = "scale-pow2",
		[OPT_SRULE - OPT_ACCBITS] = "scale-rule", [OPT_BF16LAST - OPT_ACCBITS] = "bf16-last",
		[OPT_NORHT - OPT_ACCBITS] = "rht", [OPT_NOSR - OPT_ACCBITS] = "sr", [OPT_NO2D - OPT_ACCBITS] = "2d",
		[OPT_BF16FROM - OPT_ACCBITS] = "bf16-from" };
	if (c == OPT_SCALE) {
		if (o->nchanges == TRAIN_OPTS_CHANGES)
			return mp_fail(MP_EINVAL, err, errlen, "too many policy changes");
		return loss_scale_option(o, v, err, errlen);
	}
	if (c >= OPT_GEMM && c <= OPT_REDUCE)
		return add_change(o, keys[c - OPT_GEMM], v, err, errlen);
	/* --no-rht, --no-sr, --no-2d: the part switched off */
	bool off = c == OPT_NORHT || c == OPT_NOSR || c == OPT_NO2D;
	return add_change(o, later[c - OPT_ACCBITS], off ? "off" : v, err, errlen);
}

/* The options both commands take; MP_EUNSUPPORTED for one that is not. */
static mp_status common_option(train_opts *o, int c, const char *v, char *err, size_t errlen)
{
	double d;
	size_t n;
	switch (c) {
	case OPT_POLICY: o->policies = v; return MP_OK;
	case OPT_DATA: o->data = v; return MP_OK;
	case OPT_STEPS: case OPT_SEED: case OPT_BATCH: case OPT_CONTEXT: case OPT_LAYERS: case OPT_HEADS:
	case OPT_CHANNELS: case OPT_PRESET: case OPT_EVAL:
		return shape_option(o, c, v, err, errlen);
	case OPT_LR: case OPT_SCHED: case OPT_WARMUP: case OPT_LRMIN: case OPT_BETA1: case OPT_BETA2:
		return optim_option(o, c, v, err, errlen);
	case OPT_OFFSET:
		if (real_value("--resid-offset", v, &d, err, errlen) != MP_OK)
			return MP_EINVAL;
		if (fabs(d) > FLT_MAX)
			return mp_fail(MP_EINVAL, err, errlen, "--resid-offset: %s is beyond fp32's largest value %g, where the residual "
			            "stream is added up", v, (double)FLT_MAX);
		o->cfg.resid_offset = (float)d;
		return MP_OK;
	case OPT_OFFSET_CH:
		if (count_value("--resid-offset-channels", v, &n, 4096, err, errlen) != MP_OK)
			return MP_EINVAL;
		o->cfg.resid_offset_channels = (int)n;
		return MP_OK;
	case OPT_THREADS:
		if (count_value("--threads", v, &n, 2, err, errlen) != MP_OK)
			return MP_EINVAL;
		o->cfg.threads = (int)n;
		return MP_OK;
	case OPT_DEVICE:
		if (strcmp(v, "cpu") && strcmp(v, "cuda"))
			return mp_fail(MP_EINVAL, err, errlen, "--device: unknown device '%s' (known: cpu, cuda)", v);
		o->cfg.device = strcmp(v, "cuda") ? TRAIN_DEVICE_CPU : TRAIN_DEVICE_CUDA;
		return MP_OK;
	default:
		if (c >= OPT_GEMM && c <= OPT_REDUCE)
			return change_option(o, c, v, err, errlen);
		if (c >= OPT_ACCBITS && c <= OPT_BF16FROM)
			return change_option(o, c, v, err, errlen);
		return MP_EUNSUPPORTED;
	}
}

/* train's own options. */
mp_status train_opts_option(train_opts *o, int c, const char *v, char *err, size_t errlen)
{
	unsigned long long u;
	switch (c) {
	case OPT_CSV: o->csv = v; return MP_OK;
	case OPT_TSTATS: o->tensor_stats = v; return MP_OK;
	case OPT_GRAD_NOISE: o->cfg.grad_noise = true; return MP_OK;
	case OPT_SAVE: o->save = v; return MP_OK;
	case OPT_INIT: o->init = v; return MP_OK;
	case OPT_RESUME: o->resume = v; return MP_OK;
	case OPT_SAVE_EVERY: return positive_value("--save-every", v, &o->save_every, err, errlen);
	case OPT_STOP_AT: return positive_value("--stop-at", v, &o->stop_at, err, errlen);
	case OPT_PROBE:
		if (strcmp(v, "nvfp4") != 0)
			return mp_fail(MP_EINVAL, err, errlen, "--probe: unknown probe '%s' (known: nvfp4)", v);
		o->probe_nvfp4 = true;
		return MP_OK;
	case OPT_PROBE_DRAWS:
		if (numarg_u64("--probe-draws", v, &u, err, errlen) != MP_OK)
			return MP_EINVAL;
		if (u < 1 || u > NVFP4_PROBE_DRAWS_MAX)
			return mp_fail(MP_EINVAL, err, errlen, "--probe-draws: %s is not in 1..%d", v, NVFP4_PROBE_DRAWS_MAX);
		o->probe_draws = (size_t)u;
		o->probe_draws_set = true;
		return MP_OK;
	case OPT_PROGRESS:
		if (real_value("--progress-every", v, &o->progress_every, err, errlen) != MP_OK)
			return MP_EINVAL;
		if (o->progress_every < 0)
			return mp_fail(MP_EINVAL, err, errlen, "--progress-every: must not be negative (got %s)", v);
		return MP_OK;
	default:
		return common_option(o, c, v, err, errlen);
	}
}

/* gradhist's own options. */
static mp_status gradhist_option(gradhist_opts *g, int c, const char *v, char *err, size_t errlen)
{
	switch (c) {
	case OPT_HCSV: g->csv = true; return MP_OK;
	case OPT_OF:
		if (strcmp(v, "grads") && strcmp(v, "activations"))
			return mp_fail(MP_EINVAL, err, errlen, "--of: '%s' is neither grads nor activations", v);
		g->activations = !strcmp(v, "activations");
		return MP_OK;
	case OPT_HSCALE:
		if (real_value("--scale", v, &g->scale, err, errlen) != MP_OK)
			return MP_EINVAL;
		if (g->scale <= 0)
			return mp_fail(MP_EINVAL, err, errlen, "--scale: must be a positive number (got %s)", v);
		return MP_OK;
	default:
		return common_option(&g->run, c, v, err, errlen);
	}
}

/* --- the command line --- */

/* Walks argv with getopt_long over opts, handing each option to train's
 * (g NULL) or gradhist's handler. Neither command takes an argument that is
 * not an option's value: the first one is an error (hint: what follows it
 * in the message). */
static mp_status walk(const char *cmd, const char *hint, const struct option *opts, int argc, char **argv,
                      train_opts *o, gradhist_opts *g, char *err, size_t errlen)
{
	optwalk w = { 0 };
	char *value;
	int c;
	while ((c = optwalk_next(&w, argc, argv, opts, &value)) != -1) {
		if (c == OPTWALK_VALUE)
			return mp_fail(MP_EINVAL, err, errlen, "unexpected argument '%s'%s", value, hint);
		if (c == 'h') {
			o->help = true;
			return MP_OK;
		}
		if (c == ':' || c == '?')
			return optwalk_error(cmd, c, argv, opts, err, errlen);
		if (c >= OPT_BATCH && c < OPT_END)
			o->given |= 1ull << (c - OPT_BATCH);
		if (c == OPT_PRESET)
			o->preset = optarg;
		mp_status st = g ? gradhist_option(g, c, optarg, err, errlen) : train_opts_option(o, c, optarg, err, errlen);
		if (st != MP_OK)
			return MP_EINVAL;
	}
	return MP_OK;
}

/* The checks that need several options, once all are read: the schedule
 * against --steps and --lr, the offset's channels against --channels.
 * Sets the schedule's length. */
mp_status train_opts_agree(train_opts *o, char *err, size_t errlen)
{
	if (o->cfg.model.C % o->cfg.model.NH)
		return mp_fail(MP_EINVAL, err, errlen, "--heads: %zu does not divide --channels %zu", o->cfg.model.NH, o->cfg.model.C);
	lr_schedule *sc = &o->cfg.sched;
	if (o->lr_min_set && sc->kind != LR_COSINE)
		return mp_fail(MP_EINVAL, err, errlen, "--lr-min: only a cosine schedule has a final lr (add --lr-schedule cosine)");
	if (sc->lr_min > o->cfg.lr)
		return mp_fail(MP_EINVAL, err, errlen, "--lr-min: %g is above --lr %g", sc->lr_min, o->cfg.lr);
	if (sc->warmup > o->steps)
		return mp_fail(MP_EINVAL, err, errlen, "--warmup: %zu updates is more than --steps %zu", sc->warmup, o->steps);
	sc->total = o->steps;
	size_t k = (size_t)o->cfg.resid_offset_channels;
	if (k > o->cfg.model.C)
		return mp_fail(MP_EINVAL, err, errlen, "--resid-offset-channels: %zu is more than the model's %zu channels (--channels)",
		            k, o->cfg.model.C);
	return MP_OK;
}

/* --probe against the options it needs. */
static mp_status probe_fits(const train_opts *o, char *err, size_t errlen)
{
	if (!o->probe_nvfp4 && o->probe_draws_set)
		return mp_fail(MP_EINVAL, err, errlen, "--probe-draws: only with --probe nvfp4");
	if (!o->probe_nvfp4)
		return MP_OK;
	if (o->cfg.device != TRAIN_DEVICE_CPU)
		return mp_fail(MP_EINVAL, err, errlen, "--probe nvfp4: CPU only (the nvfp4 casts run on the CPU), not with --device cuda");
	const char *to_stdout = o->csv && !strcmp(o->csv, "-") ? "--csv"
	                        : o->tensor_stats && !strcmp(o->tensor_stats, "-") ? "--tensor-stats" : NULL;
	if (to_stdout)
		return mp_fail(MP_EINVAL, err, errlen, "--probe nvfp4: its table goes to standard output, which %s - takes", to_stdout);
	return MP_OK;
}

mp_status train_opts_parse(int argc, char **argv, train_opts *o, char *err, size_t errlen)
{
	*o = (train_opts){ .cfg = train_config_default(), .policies = "fp32", .steps = 200, .progress_every = 5,
		           .probe_draws = 64 };
	if (walk("train", " (see 'mixprec train --help')", train_options, argc, argv, o, NULL, err, errlen) != MP_OK)
		return MP_EINVAL;
	if (o->help)
		return MP_OK;
	if (train_opts_agree(o, err, errlen) != MP_OK || probe_fits(o, err, errlen) != MP_OK)
		return MP_EINVAL;
	o->cfg.keep_douts = o->probe_nvfp4;
	return MP_OK;
}

mp_status gradhist_opts_parse(int argc, char **argv, gradhist_opts *g, char *err, size_t errlen)
{
	*g = (gradhist_opts){ .run = { .cfg = train_config_default(), .policies = "fp32", .steps = 20 }, .scale = 1 };
	g->run.cfg.eval_every = 0;
	if (walk("gradhist", "", gradhist_options, argc, argv, &g->run, g, err, errlen) != MP_OK)
		return MP_EINVAL;
	return g->run.help ? MP_OK : train_opts_agree(&g->run, err, errlen);
}

/* --- policies --- */

/* The option a policy change came from ("rht" from --no-rht). */
static const char *change_name(const char *key)
{
	return !strcmp(key, "rht") ? "no-rht" : !strcmp(key, "sr") ? "no-sr" : !strcmp(key, "2d") ? "no-2d" : key;
}

/* Applies o's changes to p (--fp8-scaling first: it chooses the recipe the
 * other parts change), marking in applied[] the ones p took; a part p's
 * recipe has not leaves its message in why[]. */
static mp_status apply_changes(const train_opts *o, train_policy *p, bool *applied, char (*why)[256], char *err,
                               size_t errlen)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t k = 0; k < o->nchanges; k++) {
			if ((pass == 0) != !strcmp(o->changes[k].key, "fp8-scaling"))
				continue;
			mp_status st = policy_set(p, o->changes[k].key, o->changes[k].value, why[k], sizeof why[k]);
			if (st == MP_OK)
				applied[k] = true;
			else if (st != MP_EUNSUPPORTED)   /* a recipe's own part: policies without it skip it */
				return mp_fail(MP_EINVAL, err, errlen, "--%s: %s", change_name(o->changes[k].key), why[k]);
		}
	return MP_OK;
}

mp_status train_opts_resolve(const train_opts *o, const char *list, train_policy *out, size_t max, size_t *n,
                             char *err, size_t errlen)
{
	char *copy = strdup(list), *save = NULL;
	char why[TRAIN_OPTS_CHANGES][256];
	bool applied[TRAIN_OPTS_CHANGES] = { false };
	for (size_t k = 0; k < o->nchanges; k++)
		why[k][0] = '\0';
	*n = 0;
	mp_status st = copy ? MP_OK : mp_fail(MP_EINVAL, err, errlen, "out of memory");
	for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && st == MP_OK;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == max) {
			st = mp_fail(MP_EINVAL, err, errlen, "--policy: at most %zu policies", max);
			break;
		}
		char reason[512];
		if (policy_parse(tok, &out[*n], reason, sizeof reason) != MP_OK) {
			st = mp_fail(MP_EINVAL, err, errlen, "--policy: %s", reason);
			break;
		}
		st = apply_changes(o, &out[*n], applied, why, err, errlen);
		(*n)++;
	}
	free(copy);
	if (st == MP_OK && *n == 0)
		st = mp_fail(MP_EINVAL, err, errlen, "--policy: no policy named");
	for (size_t k = 0; k < o->nchanges && st == MP_OK; k++)
		if (!applied[k])
			st = mp_fail(MP_EINVAL, err, errlen, "--%s: %s", change_name(o->changes[k].key), why[k]);
	return st;
}
