#include <stdlib.h>
#include <string.h>

#include "fmt/numarg.h"
#include "fmt/round_opts.h"
#include "quant/quant_opts.h"
#include "util/optwalk.h"

static const struct option quantize_options[] = {
	{ "to", required_argument, NULL, 't' },
	{ "block", required_argument, NULL, 'b' },
	{ "scale-rule", required_argument, NULL, 'r' },
	{ "mode", required_argument, NULL, 'm' },
	{ "seed", required_argument, NULL, 's' },
	{ "csv", no_argument, NULL, 'c' },
	{ "rht", no_argument, NULL, 'R' },
	{ "random", required_argument, NULL, 'N' },
	{ "dist", required_argument, NULL, 'd' },
	{ "outliers", required_argument, NULL, 'o' },
	{ "outliers-in", required_argument, NULL, 'i' },
	{ "draws", required_argument, NULL, 'D' },
	{ "compare-rht", no_argument, NULL, 'C' },
	{ "from-model", required_argument, NULL, 'M' },
	{ "tensor", required_argument, NULL, 'T' },
	{ "row", required_argument, NULL, 'w' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* One option (getopt's c, its value v) into o. */
static mp_status quantize_option(quantize_opts *o, int c, const char *v, char *err, size_t errlen)
{
	quantize_random_args *ra = &o->ra;
	unsigned long long u;
	switch (c) {
	case 't': ra->to = v; return MP_OK;
	case 'r': ra->rule = v; return MP_OK;
	case 'N': ra->random = v; return MP_OK;
	case 'd': ra->dist = v; return MP_OK;
	case 'o': ra->outliers = v; return MP_OK;
	case 'i': ra->outliers_in = v; return MP_OK;
	case 'D': ra->draws = v; return MP_OK;
	case 'C': ra->compare = true; return MP_OK;
	case 'M': o->model.path = v; return MP_OK;
	case 'T': o->model.tensor = v; return MP_OK;
	case 'w':
		o->row_given = true;
		return numarg_u64("--row", v, &o->model.row, err, errlen);
	case 'b':
		ra->block = v;
		return quant_parse_block(v, &o->q.block, err, errlen);
	case 'm':
		if (fmt_mode_arg(v, &o->q.mode, err, errlen) != MP_OK)
			return MP_EINVAL;
		if (!quant_mode_ok(o->q.mode))
			return mp_fail(MP_EINVAL, err, errlen, "--mode: elements round with %s, not %s", QUANT_MODES, v);
		return MP_OK;
	case 's':
		if (numarg_u64("--seed", v, &u, err, errlen) != MP_OK)
			return MP_EINVAL;
		o->q.seed = u;
		return MP_OK;
	case 'c': o->csv = true; return MP_OK;
	default:   /* 'R' */
		o->rht = true;
		return MP_OK;
	}
}

/* The checks after the walk: the options that need --random, the rule,
 * and --to (left to quantize_random, a list, with --random). */
static mp_status quantize_check(quantize_opts *o, char *err, size_t errlen)
{
	const quantize_random_args *ra = &o->ra;
	const char *stray = ra->dist ? "--dist" : ra->outliers ? "--outliers" : ra->outliers_in ? "--outliers-in"
	                    : ra->draws ? "--draws" : ra->compare ? "--compare-rht" : NULL;
	if (stray && !ra->random)
		return mp_fail(MP_EINVAL, err, errlen, "%s: only with --random N (a generated tensor)", stray);
	const quantize_model_args *m = &o->model;
	const char *needs_model = m->tensor ? "--tensor" : o->row_given ? "--row" : NULL;
	if (needs_model && !m->path)
		return mp_fail(MP_EINVAL, err, errlen, "%s: only with --from-model FILE (a weight of a saved model)",
		               needs_model);
	if (m->path && !m->tensor)
		return mp_fail(MP_EINVAL, err, errlen, "--from-model: --tensor NAME is required (which weight; "
		               "wte.weight is the token embeddings)");
	if (m->path && ra->random)
		return mp_fail(MP_EINVAL, err, errlen, "--from-model: not with --random (one source of values)");
	if (m->path && o->nvalues)
		return mp_fail(MP_EINVAL, err, errlen, "value 1: '%s': no VALUEs with --from-model (the row is the values)",
		               o->values[0]);
	if (ra->rule && quant_rule_parse(ra->rule, &o->q.rule) != MP_OK)
		return mp_fail(MP_EINVAL, err, errlen, "--scale-rule: unknown rule '%s' (known: %s)", ra->rule,
		               quant_rule_names());
	const char *to = ra->to;
	if (to && ra->random)
		return MP_OK;
	const quant_info *q = to ? quant_find(to) : NULL;
	if (!q) {
		if (to && strchr(to, ','))
			return mp_fail(MP_EINVAL, err, errlen, "--to: a list of formats ('%s') only with --random N", to);
		if (to)
			return mp_fail(MP_EINVAL, err, errlen, "--to: unknown block format '%s' (known: %s)", to,
			               quant_known_names());
		return mp_fail(MP_EINVAL, err, errlen, "--to: a block format is required (known: %s)", quant_known_names());
	}
	o->q.fmt = q->id;
	if (ra->rule && q->nvfp4)
		return mp_fail(MP_EINVAL, err, errlen, "--scale-rule: nvfp4 has one rule (its scales are rounded to nearest)");
	return MP_OK;
}

mp_status quantize_opts_parse(int argc, char **argv, quantize_opts *o, char *err, size_t errlen)
{
	*o = (quantize_opts){ .q = { .mode = FMT_RNE, .rule = QUANT_RULE_OCP, .seed = QUANT_SEED_DEFAULT } };
	if (!(o->values = calloc((size_t)argc + 1, sizeof *o->values)))
		return mp_fail(MP_ENOMEM, err, errlen, "out of memory");
	optwalk w = { 0 };
	char *value;
	int c;
	while ((c = optwalk_next(&w, argc, argv, quantize_options, &value)) != -1) {
		if (c == OPTWALK_VALUE) {
			o->values[o->nvalues++] = value;
			continue;
		}
		if (c == ':' || c == '?')
			return optwalk_error("quantize", c, argv, quantize_options, err, errlen);
		if (c == 'h') {
			o->help = true;
			return MP_OK;
		}
		if (quantize_option(o, c, optarg, err, errlen) != MP_OK)
			return MP_EINVAL;
	}
	o->ra.value = o->nvalues ? o->values[0] : NULL;
	return quantize_check(o, err, errlen);
}

void quantize_opts_free(quantize_opts *o)
{
	free(o->values);
	o->values = NULL;
	o->nvalues = 0;
}
