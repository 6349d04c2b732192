#include <stdlib.h>
#include <string.h>

#include "drift/drift_opts.h"
#include "fmt/numarg.h"
#include "util/optwalk.h"

static const struct option drift_options[] = {
	{ "x0", required_argument, NULL, 'x' },
	{ "steps", required_argument, NULL, 'T' },
	{ "elements", required_argument, NULL, 'E' },
	{ "dist", required_argument, NULL, 'd' },
	{ "mean", required_argument, NULL, 'm' },
	{ "std", required_argument, NULL, 's' },
	{ "seed", required_argument, NULL, 'S' },
	{ "csv", required_argument, NULL, 'c' },
	{ "sweep", required_argument, NULL, 'w' },
	{ "device", required_argument, NULL, 'D' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* A number in the full syntax (0.5, 2^9, 3*2^-10, 1/3, ...), finite, to the
 * nearest binary64; with starts, also rounded exactly into every variant's
 * format (no detour through binary64). */
static mp_status real_value(const char *opt, const char *text, double *v, double *starts, char *err, size_t errlen)
{
	double scratch[DRIFT_VARIANT_COUNT];
	char why[300];
	if (drift_parse_start(text, v, starts ? starts : scratch, why, sizeof why) != MP_OK)
		return mp_fail(MP_EINVAL, err, errlen, "%s: %s", opt, why);
	return MP_OK;
}

/* A count in 1..max. */
static mp_status size_value(const char *opt, const char *text, size_t *v, size_t max, char *err, size_t errlen)
{
	unsigned long long x;
	if (numarg_u64(opt, text, &x, err, errlen) != MP_OK)
		return MP_EINVAL;
	if (x < 1 || x > max)
		return mp_fail(MP_EINVAL, err, errlen, "%s: %llu is out of range (1..%zu)", opt, x, max);
	*v = (size_t)x;
	return MP_OK;
}

/* One option (getopt's c, its value v) into o. */
static mp_status drift_option(drift_opts *o, int c, const char *v, char *err, size_t errlen)
{
	drift_params *p = &o->p;
	unsigned long long u;
	switch (c) {
	case 'x':
		if (real_value("--x0", v, &p->x0, p->starts, err, errlen) != MP_OK)
			return MP_EINVAL;
		p->have_starts = true;
		o->x0_text = v;
		return MP_OK;
	case 'T': return size_value("--steps", v, &p->steps, (size_t)1 << 40, err, errlen);
	case 'E': return size_value("--elements", v, &p->elements, (size_t)1 << 32, err, errlen);
	case 'm': return real_value("--mean", v, &p->mean, NULL, err, errlen);
	case 's':
		if (real_value("--std", v, &p->std, NULL, err, errlen) != MP_OK)
			return MP_EINVAL;
		if (p->std < 0)
			return mp_fail(MP_EINVAL, err, errlen, "--std: must not be negative");
		return MP_OK;
	case 'd':
		if (drift_dist_parse(v, &p->dist) != MP_OK)
			return mp_fail(MP_EINVAL, err, errlen,
			               "--dist: unknown distribution '%s' (known: constant, uniform, normal)", v);
		return MP_OK;
	case 'S':
		if (numarg_u64("--seed", v, &u, err, errlen) != MP_OK)
			return MP_EINVAL;
		p->seed = u;
		return MP_OK;
	case 'c': o->csv_path = v; return MP_OK;
	case 'w': o->sweep = v; return MP_OK;
	default:   /* 'D' */
		if (strcmp(v, "cpu") && strcmp(v, "cuda"))
			return mp_fail(MP_EINVAL, err, errlen, "--device: unknown device '%s' (known: cpu, cuda)", v);
		p->device = strcmp(v, "cuda") ? DRIFT_DEVICE_CPU : DRIFT_DEVICE_CUDA;
		return MP_OK;
	}
}

/* --sweep x0=V,V,... into o->xs and o->xstarts. */
static mp_status parse_sweep(drift_opts *o, char *err, size_t errlen)
{
	const char *sweep = o->sweep;
	if (strncmp(sweep, "x0=", 3) != 0)
		return mp_fail(MP_EINVAL, err, errlen, "--sweep: expected x0=V,V,... (got '%s')", sweep);
	char *copy = strdup(sweep + 3), *rest = copy;
	if (!copy)
		return mp_fail(MP_ENOMEM, err, errlen, "out of memory");
	mp_status st = MP_OK;
	/* strsep, not strtok: an empty item (x0=1,,2) is refused, as round's --to does */
	for (char *tok; st == MP_OK && rest && (tok = strsep(&rest, ","));) {
		if (!*tok && (tok != copy || rest))
			st = mp_fail(MP_EINVAL, err, errlen, "--sweep: an empty value in '%s'", sweep);
		else if (!*tok)
			break;   /* x0= alone: reported below */
		else if (o->nx == DRIFT_OPTS_SWEEP_MAX)
			st = mp_fail(MP_EINVAL, err, errlen, "--sweep: at most %zu values", o->nx);
		else if ((st = real_value("--sweep", tok, &o->xs[o->nx], o->xstarts[o->nx], err, errlen)) == MP_OK)
			o->nx++;
	}
	free(copy);
	if (st == MP_OK && o->nx == 0)
		st = mp_fail(MP_EINVAL, err, errlen, "--sweep: no values after x0=");
	return st;
}

mp_status drift_opts_parse(int argc, char **argv, drift_opts *o, char *err, size_t errlen)
{
	*o = (drift_opts){ .p = drift_defaults() };
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--ema")) {
			o->ema = true;
			return MP_OK;
		}
	optwalk w = { 0 };
	char *value;
	int c;
	while ((c = optwalk_next(&w, argc, argv, drift_options, &value)) != -1) {
		if (c == OPTWALK_VALUE)
			return mp_fail(MP_EINVAL, err, errlen, "unexpected argument '%s' (see 'mixprec drift --help')", value);
		if (c == ':' || c == '?')
			return optwalk_error("drift", c, argv, drift_options, err, errlen);
		if (c == 'h') {
			o->help = true;
			return MP_OK;
		}
		if (drift_option(o, c, optarg, err, errlen) != MP_OK)
			return MP_EINVAL;
	}
	return o->sweep ? parse_sweep(o, err, errlen) : MP_OK;
}
