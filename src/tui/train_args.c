#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fmt/parse.h"
#include "fmt/round.h"
#include "train/shape.h"
#include "tui/train_args.h"

typedef enum { K_POLICY, K_STEPS, K_LR, K_SEED, K_BATCH, K_CONTEXT, K_LAYERS, K_HEADS, K_CHANNELS, K_EVAL,
	       K_OFFSET, K_OFFSET_CH, K_THREADS, K_DEVICE, K_DATA, K_CSV, K_PRESET, K_CHANGE } opt_kind;

/* Every option of `mixprec train` that takes a value. */
static const struct {
	const char *name;
	opt_kind kind;
	double max;     /* counts: the largest accepted */
} options[] = {
	{ "--policy", K_POLICY, 0 },
	{ "--steps", K_STEPS, 100000000 },
	{ "--lr", K_LR, 0 },
	{ "--seed", K_SEED, 18446744073709551615.0 },
	{ "--batch", K_BATCH, 4096 },
	{ "--context", K_CONTEXT, 4096 },
	{ "--layers", K_LAYERS, 64 },
	{ "--heads", K_HEADS, 64 },
	{ "--channels", K_CHANNELS, 4096 },
	{ "--eval-every", K_EVAL, 18446744073709551615.0 },
	{ "--resid-offset", K_OFFSET, 0 },
	{ "--resid-offset-channels", K_OFFSET_CH, 4096 },
	{ "--threads", K_THREADS, 2 },
	{ "--device", K_DEVICE, 0 },
	{ "--data", K_DATA, 0 },
	{ "--csv", K_CSV, 0 },
	{ "--preset", K_PRESET, 0 },
	{ "--gemm", K_CHANGE, 0 },
	{ "--residual", K_CHANGE, 0 },
	{ "--weights", K_CHANGE, 0 },
	{ "--grads", K_CHANGE, 0 },
	{ "--grad-accum", K_CHANGE, 0 },
	{ "--optim-state", K_CHANGE, 0 },
	{ "--loss-scale", K_CHANGE, 0 },
	{ "--reductions", K_CHANGE, 0 },
};

/* A finite number in the project's syntax, rounded once to binary64. */
static bool parse_real(const char *text, double *v)
{
	fmt_num x;
	fmt_num_init(&x);
	bool ok = fmt_parse_number(&x, text, NULL, 0) == MP_OK && x.kind == NUM_FINITE;
	if (ok)
		*v = fmt_num_to_double(&x);
	fmt_num_clear(&x);
	return ok && isfinite(*v);
}

/* A whole number in lo..max. */
static bool parse_count(const char *text, double lo, double max, double *v)
{
	return parse_real(text, v) && *v == floor(*v) && *v >= lo && *v <= max;
}

/* Sets one option; false with the reason in err. */
static bool set_option(train_args *a, int k, const char *v, char *err, size_t errlen)
{
	const char *name = options[k].name;
	double d = 0;
	opt_kind kind = options[k].kind;
	bool count = kind == K_STEPS || kind == K_SEED || kind == K_BATCH || kind == K_CONTEXT || kind == K_LAYERS ||
	             kind == K_HEADS || kind == K_CHANNELS || kind == K_EVAL || kind == K_OFFSET_CH ||
	             kind == K_THREADS;
	double lo = kind == K_SEED || kind == K_EVAL ? 0 : 1;
	if (count && !parse_count(v, lo, options[k].max, &d)) {
		snprintf(err, errlen, "%s: '%s' is not a whole number in %.0f..%.0f", name, v, lo, options[k].max);
		return false;
	}
	switch (kind) {
	case K_POLICY: snprintf(a->policies, sizeof a->policies, "%s", v); break;
	case K_STEPS: a->steps = (size_t)d; break;
	case K_SEED: a->cfg.seed = (uint64_t)d; break;
	case K_BATCH: a->cfg.B = (size_t)d; a->shape_set |= TRAIN_SHAPE_SET_B; break;
	case K_CONTEXT: a->cfg.t = a->cfg.model.T = (size_t)d; a->shape_set |= TRAIN_SHAPE_SET_T; break;
	case K_LAYERS: a->cfg.model.L = (size_t)d; a->shape_set |= TRAIN_SHAPE_SET_L; break;
	case K_HEADS: a->cfg.model.NH = (size_t)d; a->shape_set |= TRAIN_SHAPE_SET_NH; break;
	case K_CHANNELS: a->cfg.model.C = (size_t)d; a->shape_set |= TRAIN_SHAPE_SET_C; break;
	case K_EVAL: a->cfg.eval_every = (size_t)d; a->shape_set |= TRAIN_SHAPE_SET_EVAL; break;
	case K_PRESET: {
		const train_shape *sh;
		if (train_shape_from_name(v, &sh) != MP_OK) {
			snprintf(err, errlen, "%s: unknown shape '%s' (known: %s)", name, v, train_shape_names());
			return false;
		}
		train_shape_apply(sh, &a->cfg, a->shape_set);
		break;
	}
	case K_OFFSET_CH: a->cfg.resid_offset_channels = (int)d; break;
	case K_THREADS: a->cfg.threads = (int)d; break;
	case K_LR:
		if (!parse_real(v, &d) || !(d > 0)) {
			snprintf(err, errlen, "%s: '%s' is not a positive number", name, v);
			return false;
		}
		a->cfg.lr = d;
		break;
	case K_OFFSET:
		if (!parse_real(v, &d) || !(fabs(d) <= 3.4028234663852886e38)) {
			snprintf(err, errlen, "%s: '%s' is not a finite fp32 number", name, v);
			return false;
		}
		a->cfg.resid_offset = (float)d;
		break;
	case K_DEVICE:
		if (strcmp(v, "cpu") && strcmp(v, "cuda")) {
			snprintf(err, errlen, "%s: unknown device '%s' (known: cpu, cuda)", name, v);
			return false;
		}
		a->cfg.device = strcmp(v, "cuda") ? TRAIN_DEVICE_CPU : TRAIN_DEVICE_CUDA;
		break;
	case K_DATA: snprintf(a->data, sizeof a->data, "%s", v); break;
	case K_CSV: snprintf(a->csv, sizeof a->csv, "%s", v); break;
	case K_CHANGE:
		if (a->nchanges == TRAIN_ARGS_CHANGES) {
			snprintf(err, errlen, "%s: too many policy changes", name);
			return false;
		}
		snprintf(a->changes[a->nchanges].key, sizeof a->changes[0].key, "%s", name + 2);
		snprintf(a->changes[a->nchanges].value, sizeof a->changes[0].value, "%s", v);
		a->nchanges++;
		break;
	}
	return true;
}

mp_status train_args_parse(train_args *a, int argc, char **argv, char *err, size_t errlen)
{
	memset(a, 0, sizeof *a);
	a->cfg = train_config_default();
	a->steps = 200;
	snprintf(a->policies, sizeof a->policies, "fp32");
	size_t used = 0;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];
		int k = -1;
		for (size_t j = 0; j < sizeof options / sizeof options[0]; j++)
			if (!strcmp(o, options[j].name))
				k = (int)j;
		if (k < 0) {
			snprintf(err, errlen, "%s: not an option of mixprec train that the lab can run", o);
			return MP_EINVAL;
		}
		if (i + 1 >= argc) {
			snprintf(err, errlen, "%s: needs a value", o);
			return MP_EINVAL;
		}
		const char *v = argv[++i];
		if (!set_option(a, k, v, err, errlen))
			return MP_EINVAL;
		int n = snprintf(a->text + used, sizeof a->text - used, "%s%s %s", used ? " " : "", o, v);
		if (n > 0 && (size_t)n < sizeof a->text - used)
			used += (size_t)n;
	}
	return MP_OK;
}

mp_status train_args_apply(const train_args *a, train_policy *p, char *err, size_t errlen)
{
	for (size_t k = 0; k < a->nchanges; k++) {
		char why[200];
		if (policy_set(p, a->changes[k].key, a->changes[k].value, why, sizeof why) != MP_OK) {
			snprintf(err, errlen, "--%s: %s", a->changes[k].key, why);
			return MP_EINVAL;
		}
	}
	return MP_OK;
}
