/* drift --ema: Adam's second moment in a narrow format, one value. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "drift/ema.h"
#include "util/csvout.h"

static void ema_help(void)
{
	ema_params d = ema_defaults();
	printf("Usage: mixprec drift --ema [--beta2 B] [--format F] [--mode rne|sr] [--g2 G]\n"
	       "                     [--steps N] [--elements E] [--seed S] [--csv FILE]\n"
	       "Adam's second moment v stored in a narrow format F, one value (with sr, E\n"
	       "independent values): from v = 0, every step computes\n"
	       "    v <- round_F(fl32(fl32(b*v) + fl32(c*G)))\n"
	       "with b = fl32(B), c = fl32(1 - b), fl32 an fp32 operation and round_F the\n"
	       "rounding into F. With rne v stops where the increment c*(G - v) falls below\n"
	       "half the spacing of F at v, far below G; sr keeps the increment on average.\n"
	       "Printed against the same recurrence in fp32 and the exact EMA in fp64.\n\n"
	       "  --beta2 B       Adam's beta2, in (0, 1) (default %g)\n"
	       "  --format F      bf16 (default), fp16, fp8-e4m3, fp8-e5m2, tf32, fp32\n"
	       "  --mode M        rne (default) or sr\n"
	       "  --g2 G          the squared gradient of every step (default %g)\n"
	       "  --steps N       steps (default 20/(1 - B): %zu for the default B)\n"
	       "  --elements E    independent values with sr, v is their mean (default %zu)\n"
	       "  --seed S        seed of stochastic rounding (default 0)\n"
	       "  --csv FILE      one row per step (FILE may be -):\n"
	       "                  step,format,mode,v,v_fp32,v_fp64,unchanged_frac\n",
	       d.beta2, d.g2, d.steps, d.elements);
}

static bool parse_num(const char *opt, const char *text, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(text, &end);
	if (!*text || *end || errno || !isfinite(*v)) {
		cli_error("drift", "%s: '%s' is not a finite number", opt, text);
		return false;
	}
	return true;
}

static bool parse_count(const char *opt, const char *text, size_t *v, size_t max)
{
	unsigned long long u;
	if (!cli_parse_count("drift", opt, text, 1, max, &u))
		return false;
	*v = (size_t)u;
	return true;
}

typedef struct {
	csvw w;
	const ema_params *p;
} ema_csv;

static void ema_row(void *ctx, const ema_state *s)
{
	ema_csv *c = ctx;
	csvw_fieldf(&c->w, "%zu", s->step);
	csvw_field(&c->w, fmt_get(c->p->fmt)->name);
	csvw_field(&c->w, fmt_mode_name(c->p->mode));
	csvw_fieldf(&c->w, "%.9g", s->v);
	csvw_fieldf(&c->w, "%.9g", s->v32);
	csvw_fieldf(&c->w, "%.9g", s->v64);
	csvw_fieldf(&c->w, "%.6g", s->unchanged_frac);
	csvw_end_row(&c->w);
}

static void ema_print(const ema_params *p, const ema_result *r)
{
	const char *fn = fmt_get(p->fmt)->name;
	float b = (float)p->beta2, c = 1.0f - b;
	printf("drift --ema: v <- round_%s(fl32(fl32(b*v) + fl32(c*g2))), %s, v0 = 0, g2 = %g\n"
	       "b = fl32(%g) = %.9g, c = fl32(1 - b) = %.9g\n\n", fn, fmt_mode_name(p->mode), p->g2, p->beta2,
	       (double)b, (double)c);
	if (r->stalled)
		printf("v stops at %.9g after %zu steps: there the increment %.6g is not more than half\n"
		       "the %s spacing (%.6g), so round-to-nearest gives v back; every later step changes nothing\n\n",
		       r->stall_value, r->stall_steps, r->increment, fn, r->half_spacing);
	else if (p->mode == FMT_RNE)
		printf("v has not stopped within %zu steps\n\n", p->steps);
	else
		printf("with sr v does not stop: it moves on %.1f%% of the steps (mean of %zu values)\n\n",
		       100.0 * (1 - r->final.unchanged_frac), p->elements);
	printf("after %zu steps: v = %.6g in %s, %.6g in fp32, %.6g in fp64 (the exact EMA)\n", r->final.step,
	       r->final.v, fn, r->final.v32, r->final.v64);
}

/* Parses one option of drift --ema; false on a bad value (reported). */
static bool ema_option(int c, ema_params *p, bool *steps_set)
{
	const fmt_info *f;
	unsigned long long u;
	switch (c) {
	case 'b':
		if (!parse_num("--beta2", optarg, &p->beta2))
			return false;
		if (!(p->beta2 > 0 && p->beta2 < 1)) {
			cli_error("drift", "--beta2: %s is not between 0 and 1", optarg);
			return false;
		}
		return true;
	case 'g':
		if (!parse_num("--g2", optarg, &p->g2))
			return false;
		if (p->g2 < 0) {
			cli_error("drift", "--g2: a squared gradient is not negative (got %s)", optarg);
			return false;
		}
		return true;
	case 'f':
		if (!(f = fmt_find(optarg))) {
			cli_error("drift", "--format: unknown format '%s' (known: %s)", optarg, fmt_known_names());
			return false;
		}
		p->fmt = f->id;
		return true;
	case 'm':
		if (fmt_mode_parse(optarg, &p->mode) != MP_OK || (p->mode != FMT_RNE && p->mode != FMT_SR)) {
			cli_error("drift", "--mode: '%s' is not rne or sr", optarg);
			return false;
		}
		return true;
	case 'T': *steps_set = true; return parse_count("--steps", optarg, &p->steps, (size_t)1 << 32);
	case 'E': return parse_count("--elements", optarg, &p->elements, (size_t)1 << 24);
	case 'S':
		if (!cli_parse_u64("drift", "--seed", optarg, &u))
			return false;
		p->seed = u;
		return true;
	default:
		return false;
	}
}

int cmd_drift_ema(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ema", no_argument, NULL, 'e' },           { "beta2", required_argument, NULL, 'b' },
		{ "format", required_argument, NULL, 'f' },  { "mode", required_argument, NULL, 'm' },
		{ "g2", required_argument, NULL, 'g' },      { "steps", required_argument, NULL, 'T' },
		{ "elements", required_argument, NULL, 'E' }, { "seed", required_argument, NULL, 'S' },
		{ "csv", required_argument, NULL, 'c' },     { "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	ema_params p = ema_defaults();
	const char *csv_path = NULL;
	bool steps_set = false;
	cli_args args = { 0 };
	char *value;
	int c;
	while ((c = cli_getopt(&args, argc, argv, opts, &value)) != -1) {
		if (c == 'h') {
			ema_help();
			return cli_flush_stdout("drift") ? CLI_OK : CLI_ENV;
		}
		if (c == 'e')
			continue;
		if (c == 'c') {
			csv_path = optarg;
			continue;
		}
		if (c == CLI_ARG_VALUE) {
			cli_error("drift", "unexpected argument '%s' (see 'mixprec drift --ema --help')", value);
			return CLI_USAGE;
		}
		if (c == ':' || c == '?')
			return cli_option_error("drift", c, argv, opts);
		if (!ema_option(c, &p, &steps_set))
			return CLI_USAGE;
	}
	if (!steps_set)
		p.steps = (size_t)ceil(20.0 / (1.0 - p.beta2));
	FILE *fp = NULL;
	file_atomic out;
	ema_csv ctx = { .p = &p };
	if (csv_path) {
		/* a temporary file renamed over the target only when the run succeeds */
		if (!cli_out_open("drift", "--csv", csv_path, &out, &fp))
			return CLI_ENV;
		csvw_init(&ctx.w, fp);
		csvw_header(&ctx.w, "step,format,mode,v,v_fp32,v_fp64,unchanged_frac");
	}
	ema_result r;
	mp_status st = ema_run(&p, fp ? ema_row : NULL, &ctx, &r);
	int rc = CLI_OK;
	if (st == MP_EUNSUPPORTED || st == MP_EINVAL) {
		cli_error("drift", "--format: %s cannot hold Adam's v here (%s)", fmt_get(p.fmt)->name,
		          mp_status_message(st));
		rc = CLI_USAGE;
	} else if (st != MP_OK) {
		cli_error("drift", "--ema: %s", mp_status_message(st));
		rc = CLI_ENV;
	}
	/* a write error shows again at commit, which reports it and keeps the old file */
	if (fp && !cli_out_close("drift", "--csv", &out, fp, rc == CLI_OK))
		rc = CLI_ENV;
	if (rc == CLI_OK && fp != stdout)
		ema_print(&p, &r);
	if (!cli_flush_stdout("drift"))
		return CLI_ENV;
	return rc;
}
