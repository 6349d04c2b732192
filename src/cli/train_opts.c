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

static bool parse_pos(const char *cmd, const char *opt, const char *text, size_t *v, size_t max)
{
	unsigned long long x;
	if (!cli_parse_u64(cmd, opt, text, &x))
		return false;
	if (x < 1 || x > max) {
		cli_error(cmd, "%s: %llu is out of range (1..%zu)", opt, x, max);
		return false;
	}
	*v = (size_t)x;
	return true;
}

bool train_opts_real(const char *cmd, const char *opt, const char *text, double *v)
{
	return cli_parse_real(cmd, opt, text, -DBL_MAX, false, DBL_MAX, v);
}

/* --loss-scale static:S and dynamic:S (S its first value), with S in the
 * full number syntax, as "static:S" with S exact (into buf) and S for a
 * dynamic scaler in *init. */
static bool loss_scale_option(const char *cmd, const char *text, char *buf, size_t n, double *init)
{
	bool dyn = !strncmp(text, "dynamic:", 8);
	if (!dyn && strncmp(text, "static:", 7)) {
		if (!*text || strlen(text) >= n) {
			cli_error(cmd, "--loss-scale: '%s' is not none, dynamic[:S] or static:S", text);
			return false;
		}
		snprintf(buf, n, "%s", text);
		return true;
	}
	double s;
	if (!cli_parse_real(cmd, dyn ? "--loss-scale dynamic:S" : "--loss-scale static:S", text + (dyn ? 8 : 7), 0,
	                    true, 1e30, &s))
		return false;
	if (dyn)
		*init = s;
	snprintf(buf, n, dyn ? "dynamic" : "static:%.17g", s);
	return true;
}

/* The optimiser's options: lr, its schedule, Adam's betas. Returns as
 * train_opts_common does. */
static int optim_option(const char *cmd, train_setup *su, int c)
{
	double d;
	unsigned long long u;
	switch (c) {
	case OPT_LR:
		if (!train_opts_real(cmd, "--lr", optarg, &d))
			return -1;
		if (d <= 0) {
			cli_error(cmd, "--lr: must be a positive number (got %s)", optarg);
			return -1;
		}
		su->cfg.lr = d;
		return 1;
	case OPT_SCHED:
		if (lr_kind_parse(optarg, &su->cfg.sched.kind) != MP_OK) {
			cli_error(cmd, "--lr-schedule: unknown schedule '%s' (known: constant, cosine)", optarg);
			return -1;
		}
		return 1;
	case OPT_WARMUP:
		if (!cli_parse_u64(cmd, "--warmup", optarg, &u))
			return -1;
		su->cfg.sched.warmup = (size_t)u;
		return 1;
	case OPT_LRMIN:
		if (!train_opts_real(cmd, "--lr-min", optarg, &d))
			return -1;
		if (d < 0) {
			cli_error(cmd, "--lr-min: must not be negative (got %s)", optarg);
			return -1;
		}
		su->cfg.sched.lr_min = d;
		su->lr_min_set = true;
		return 1;
	case OPT_BETA1: case OPT_BETA2: {
		const char *name = c == OPT_BETA1 ? "--beta1" : "--beta2";
		if (!train_opts_real(cmd, name, optarg, &d))
			return -1;
		if (!(d >= 0 && d < 1)) {
			cli_error(cmd, "%s: %s is not in [0, 1)", name, optarg);
			return -1;
		}
		*(c == OPT_BETA1 ? &su->cfg.beta1 : &su->cfg.beta2) = d;
		return 1;
	}
	default:
		return 0;
	}
}

/* The accumulator and fp8-scaling options, each a policy change named as
 * its option; 1, or -1 (reported) when there are too many. */
static int later_part(const char *cmd, train_setup *su, int c)
{
	static const char *const keys[] = {
		[OPT_ACCBITS - OPT_ACCBITS] = "accum-bits", [OPT_PROMOTE - OPT_ACCBITS] = "promote-every",
		[OPT_FP8SCALING - OPT_ACCBITS] = "fp8-scaling", [OPT_FP8FMT - OPT_ACCBITS] = "fp8-format",
		[OPT_AMAXH - OPT_ACCBITS] = "amax-history", [OPT_AMAXALGO - OPT_ACCBITS] = "amax-algo",
		[OPT_MARGIN - OPT_ACCBITS] = "fp8-margin", [OPT_POW2 - OPT_ACCBITS] = "scale-pow2",
		[OPT_SRULE - OPT_ACCBITS] = "scale-rule", [OPT_BF16LAST - OPT_ACCBITS] = "bf16-last",
		[OPT_NORHT - OPT_ACCBITS] = "rht", [OPT_NOSR - OPT_ACCBITS] = "sr", [OPT_NO2D - OPT_ACCBITS] = "2d",
		[OPT_BF16FROM - OPT_ACCBITS] = "bf16-from" };
	if (su->nchanges == sizeof su->changes / sizeof su->changes[0]) {
		cli_error(cmd, "too many policy changes");
		return -1;
	}
	/* --no-rht, --no-sr, --no-2d: the part switched off */
	const char *value = c == OPT_NORHT || c == OPT_NOSR || c == OPT_NO2D ? "off" : optarg;
	su->changes[su->nchanges++] = (policy_change){ keys[c - OPT_ACCBITS], value };
	return 1;
}

/* Handles one common option; returns 1 handled, 0 not common, -1 error. */
int train_opts_common(const char *cmd, train_setup *su, int c)
{
	double d;
	size_t v;
	unsigned long long u;
	switch (c) {
	case OPT_POLICY: su->policies = optarg; return 1;
	case OPT_DATA: su->data = optarg; return 1;
	case OPT_STEPS: return parse_pos(cmd, "--steps", optarg, &su->steps, 100000000) ? 1 : -1;
	case OPT_SEED:
		if (!cli_parse_u64(cmd, "--seed", optarg, &u))
			return -1;
		su->cfg.seed = u;
		return 1;
	case OPT_BATCH:
		su->shape_set |= TRAIN_SHAPE_SET_B;
		return parse_pos(cmd, "--batch", optarg, &su->cfg.B, 4096) ? 1 : -1;
	case OPT_CONTEXT:
		if (!parse_pos(cmd, "--context", optarg, &v, GPT_MAX_CONTEXT))
			return -1;
		su->cfg.t = su->cfg.model.T = v;
		su->shape_set |= TRAIN_SHAPE_SET_T;
		return 1;
	case OPT_LAYERS:
		su->shape_set |= TRAIN_SHAPE_SET_L;
		return parse_pos(cmd, "--layers", optarg, &su->cfg.model.L, GPT_MAX_LAYERS) ? 1 : -1;
	case OPT_HEADS:
		su->shape_set |= TRAIN_SHAPE_SET_NH;
		return parse_pos(cmd, "--heads", optarg, &su->cfg.model.NH, GPT_MAX_HEADS) ? 1 : -1;
	case OPT_CHANNELS:
		su->shape_set |= TRAIN_SHAPE_SET_C;
		return parse_pos(cmd, "--channels", optarg, &su->cfg.model.C, GPT_MAX_CHANNELS) ? 1 : -1;
	case OPT_PRESET: {
		const train_shape *sh;
		if (train_shape_from_name(optarg, &sh) != MP_OK) {
			cli_error(cmd, "--preset: unknown shape '%s' (known: %s)", optarg, train_shape_names());
			return -1;
		}
		train_shape_apply(sh, &su->cfg, su->shape_set);
		return 1;
	}
	case OPT_EVAL:
		if (!cli_parse_u64(cmd, "--eval-every", optarg, &u))
			return -1;
		su->cfg.eval_every = (size_t)u;
		su->shape_set |= TRAIN_SHAPE_SET_EVAL;
		return 1;
	case OPT_OFFSET:
		if (!train_opts_real(cmd, "--resid-offset", optarg, &d))
			return -1;
		if (fabs(d) > FLT_MAX) {
			cli_error(cmd, "--resid-offset: %s is beyond fp32's largest value %g, where the residual stream "
			          "is added up", optarg, (double)FLT_MAX);
			return -1;
		}
		su->cfg.resid_offset = (float)d;
		return 1;
	case OPT_OFFSET_CH:
		if (!parse_pos(cmd, "--resid-offset-channels", optarg, &v, 4096))
			return -1;
		su->cfg.resid_offset_channels = (int)v;
		return 1;
	case OPT_THREADS:
		if (!parse_pos(cmd, "--threads", optarg, &v, 2))
			return -1;
		su->cfg.threads = (int)v;
		return 1;
	case OPT_DEVICE:
		if (!strcmp(optarg, "cpu")) {
			su->cfg.device = TRAIN_DEVICE_CPU;
			return 1;
		}
		if (!strcmp(optarg, "cuda")) {
			char why[384];
			if (gpu_ready(NULL, why, sizeof why) != MP_OK) {
				cli_error(cmd, "--device cuda: %s", why);
				return -3;
			}
			su->cfg.device = TRAIN_DEVICE_CUDA;
			return 1;
		}
		cli_error(cmd, "--device: unknown device '%s' (known: cpu, cuda)", optarg);
		return -1;
	case OPT_GEMM: case OPT_RESID: case OPT_WEIGHTS: case OPT_GRADS: case OPT_ACCUM: case OPT_OPTIM:
	case OPT_SCALE: case OPT_REDUCE: {
		static const char *const keys[] = { [OPT_GEMM - OPT_GEMM] = "gemm", [OPT_RESID - OPT_GEMM] = "residual",
			[OPT_WEIGHTS - OPT_GEMM] = "weights", [OPT_GRADS - OPT_GEMM] = "grads",
			[OPT_ACCUM - OPT_GEMM] = "grad-accum", [OPT_OPTIM - OPT_GEMM] = "optim-state",
			[OPT_SCALE - OPT_GEMM] = "loss-scale", [OPT_REDUCE - OPT_GEMM] = "reductions" };
		if (su->nchanges == sizeof su->changes / sizeof su->changes[0]) {
			cli_error(cmd, "too many policy changes");
			return -1;
		}
		static char scales[16][40];
		const char *value = optarg;
		if (c == OPT_SCALE) {
			if (!loss_scale_option(cmd, optarg, scales[su->nchanges], sizeof scales[0], &su->cfg.init_scale))
				return -1;
			value = scales[su->nchanges];
		}
		su->changes[su->nchanges++] = (policy_change){ keys[c - OPT_GEMM], value };
		return 1;
	}
	case OPT_ACCBITS: case OPT_PROMOTE: case OPT_FP8SCALING: case OPT_FP8FMT: case OPT_AMAXH: case OPT_AMAXALGO:
	case OPT_MARGIN: case OPT_POW2: case OPT_SRULE: case OPT_BF16LAST: case OPT_NORHT: case OPT_NOSR: case OPT_NO2D:
	case OPT_BF16FROM:
		return later_part(cmd, su, c);
	default:
		return optim_option(cmd, su, c);
	}
}

/* What went wrong in a trainer call that returned st: the GPU's own
 * message when the device failed (cleared before each call), else the
 * status's text (a bad token, host memory, ...). */
const char *train_opts_why_failed(const train_setup *su, mp_status st)
{
	return su->cfg.device == TRAIN_DEVICE_CUDA && gpu_failed() ? gpu_last_error() : mp_status_message(st);
}

/* The GPU kernels keep a head's row in a local array. */
bool train_opts_shape_ok(const char *cmd, const train_setup *su)
{
	size_t hs = su->cfg.model.C / su->cfg.model.NH;
	if (su->cfg.device == TRAIN_DEVICE_CUDA && hs > GPU_TRAIN_HEAD_MAX) {
		cli_error(cmd, "--device cuda: a head of %zu channels (--channels / --heads) exceeds the GPU kernels' %d",
		          hs, GPU_TRAIN_HEAD_MAX);
		return false;
	}
	return true;
}

/* The options that only make sense together, checked once all are read:
 * the schedule against --steps and --lr, the offset's channels against
 * --channels. Sets the schedule's length. */
bool train_opts_agree(const char *cmd, train_setup *su)
{
	if (su->cfg.model.C % su->cfg.model.NH) {
		cli_error(cmd, "--heads: %zu does not divide --channels %zu", su->cfg.model.NH, su->cfg.model.C);
		return false;
	}
	lr_schedule *sc = &su->cfg.sched;
	if (su->lr_min_set && sc->kind != LR_COSINE) {
		cli_error(cmd, "--lr-min: only a cosine schedule has a final lr (add --lr-schedule cosine)");
		return false;
	}
	if (sc->lr_min > su->cfg.lr) {
		cli_error(cmd, "--lr-min: %g is above --lr %g", sc->lr_min, su->cfg.lr);
		return false;
	}
	if (sc->warmup > su->steps) {
		cli_error(cmd, "--warmup: %zu updates is more than --steps %zu", sc->warmup, su->steps);
		return false;
	}
	sc->total = su->steps;
	size_t k = (size_t)su->cfg.resid_offset_channels;
	if (k > su->cfg.model.C) {
		cli_error(cmd, "--resid-offset-channels: %zu is more than the model's %zu channels (--channels)", k,
		          su->cfg.model.C);
		return false;
	}
	return true;
}

/* The offset must survive being stored in each policy's residual format. */
bool train_opts_offset_fits(const char *cmd, const train_setup *su, const train_policy *pols, size_t np)
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
static bool accum_options_fit(const char *cmd, const train_setup *su, const train_policy *pols, size_t np)
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

/* The option a policy change came from ("rht" from --no-rht). */
static const char *change_option(const char *key)
{
	return !strcmp(key, "rht") ? "no-rht" : !strcmp(key, "sr") ? "no-sr" : !strcmp(key, "2d") ? "no-2d" : key;
}

/* Resolves the policy list with the changes applied. */
bool train_opts_policies(const char *cmd, const train_setup *su, train_policy *out, size_t max, size_t *n)
{
	char *copy = strdup(su->policies), *save = NULL;
	char err[sizeof su->changes / sizeof su->changes[0]][256];
	bool applied[sizeof su->changes / sizeof su->changes[0]] = { false };
	for (size_t k = 0; k < su->nchanges; k++)
		err[k][0] = '\0';
	*n = 0;
	bool ok = copy != NULL;
	for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && ok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == max) {
			cli_error(cmd, "--policy: at most %zu policies", max);
			ok = false;
			break;
		}
		char why[512];
		if (policy_parse(tok, &out[*n], why, sizeof why) != MP_OK) {
			cli_error(cmd, "--policy: %s", why);
			ok = false;
			break;
		}
		/* --fp8-scaling first: it chooses the recipe the other parts change */
		for (int pass = 0; pass < 2 && ok; pass++)
			for (size_t k = 0; k < su->nchanges && ok; k++) {
				if ((pass == 0) != !strcmp(su->changes[k].key, "fp8-scaling"))
					continue;
				mp_status st = policy_set(&out[*n], su->changes[k].key, su->changes[k].value, err[k],
				                          sizeof err[k]);
				if (st == MP_OK) {
					applied[k] = true;
				} else if (st != MP_EUNSUPPORTED) {   /* a recipe's own part: policies without it skip it */
					cli_error(cmd, "--%s: %s", change_option(su->changes[k].key), err[k]);
					ok = false;
				}
			}
		(*n)++;
	}
	free(copy);
	if (ok && *n == 0) {
		cli_error(cmd, "--policy: no policy named");
		ok = false;
	}
	for (size_t k = 0; k < su->nchanges && ok; k++)
		if (!applied[k]) {
			cli_error(cmd, "--%s: %s", change_option(su->changes[k].key), err[k]);
			ok = false;
		}
	return ok && accum_options_fit(cmd, su, out, *n);
}

/* Loads the corpus; on failure reports it and returns the exit status (2 for
 * a file that is unusable as text, 3 when it cannot be read), else CLI_OK. */
int train_opts_load_data(const char *cmd, const train_setup *su, corpus *c)
{
	char err[512];
	char corpus_path[4096];
	const char *path = su->data ? su->data : corpus_default_path(corpus_path, sizeof corpus_path);
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
