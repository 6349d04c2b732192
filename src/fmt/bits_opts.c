#include "fmt/bits_opts.h"
#include "fmt/interval.h"
#include "util/optwalk.h"

static const struct option bits_options[] = {
	{ "format", required_argument, NULL, 'f' },
	{ "mode", required_argument, NULL, 'm' },
	{ "raw", required_argument, NULL, 'r' },
	{ "interval", required_argument, NULL, 'i' },
	{ "saturate", no_argument, NULL, 'S' },
	{ "csv", no_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* One option (getopt's c, its value v) into o. */
static mp_status bits_option(bits_opts *o, int c, const char *v, char *err, size_t errlen)
{
	switch (c) {
	case 'f':
		o->have_formats = true;
		return fmt_list_arg("--format", v, o->fmts, &o->nfmts, err, errlen);
	case 'm':
		return fmt_mode_arg(v, &o->mode, err, errlen);
	case 'i':
		if (o->interval)
			return mp_fail(MP_EINVAL, err, errlen, "--interval: one VALUE at a time ('%s', then '%s')",
			               o->interval, v);
		o->interval = v;
		return MP_OK;
	case 'S':
		o->saturate = true;
		return MP_OK;
	case 'r':
		if (o->nraw == BITS_OPTS_MAX)
			return mp_fail(MP_EINVAL, err, errlen, "--raw: at most %zu patterns", o->nraw);
		o->raws[o->nraw++] = v;
		return MP_OK;
	default:   /* 'c' */
		o->csv = true;
		return MP_OK;
	}
}

mp_status bits_opts_parse(int argc, char **argv, bits_opts *o, char *err, size_t errlen)
{
	*o = (bits_opts){ .mode = FMT_RNE };
	optwalk w = { 0 };
	char *value;
	int c;
	while ((c = optwalk_next(&w, argc, argv, bits_options, &value)) != -1) {
		if (c == OPTWALK_VALUE) {
			if (o->nvalues == BITS_OPTS_MAX)
				return mp_fail(MP_EINVAL, err, errlen, "at most %zu values", o->nvalues);
			o->values[o->nvalues++] = value;
			continue;
		}
		if (c == ':' || c == '?')
			return optwalk_error("bits", c, argv, bits_options, err, errlen);
		if (c == 'h') {
			o->help = true;
			return MP_OK;
		}
		if (bits_option(o, c, optarg, err, errlen) != MP_OK)
			return MP_EINVAL;
	}
	if (!o->have_formats) {
		for (int i = 0; i < FMT_COUNT; i++)
			o->fmts[i] = (fmt_id)i;
		o->nfmts = FMT_COUNT;
	}
	if (fmt_mode_stochastic(o->mode) && !o->interval)
		return mp_fail(MP_EINVAL, err, errlen, "--mode: %s is not offered here; use 'mixprec round --mode %s', "
		               "or 'mixprec bits --interval VALUE' for where each value can come from",
		               fmt_mode_name(o->mode), fmt_mode_name(o->mode));
	if (o->interval && (o->nraw || o->nvalues))
		return mp_fail(MP_EINVAL, err, errlen, "--interval: its VALUE is the option's own; no other VALUE "
		               "nor --raw with it");
	if (o->interval && (!o->have_formats || o->nfmts != 1))
		return mp_fail(MP_EINVAL, err, errlen, "--interval needs exactly one --format (the interval depends on it)");
	if (o->nraw && (!o->have_formats || o->nfmts != 1))
		return mp_fail(MP_EINVAL, err, errlen, "--raw needs exactly one --format (the pattern's width depends on it)");
	if (!o->nraw && o->nvalues == 0 && !o->interval)
		return mp_fail(MP_EINVAL, err, errlen, "no value given (see 'mixprec bits --help')");
	return MP_OK;
}
