#include "fmt/formats_opts.h"
#include "fmt/round_opts.h"
#include "util/optwalk.h"

static const struct option formats_options[] = {
	{ "values", required_argument, NULL, 'v' },
	{ "mode", required_argument, NULL, 'm' },
	{ "saturate", no_argument, NULL, 'S' },
	{ "csv", no_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* --values' format into o. */
static mp_status values_arg(formats_opts *o, const char *v, char *err, size_t errlen)
{
	o->values = fmt_find(v);
	if (!o->values)
		return mp_fail(MP_EINVAL, err, errlen, "--values: unknown format '%s' (known: %s)", v, fmt_known_names());
	if (o->values->width > FORMATS_VALUES_MAX_BITS)
		return mp_fail(MP_EINVAL, err, errlen,
		               "--values: %s has %d bits; every value is listed for formats of at most %d bits "
		               "(2^%d rows); 'mixprec bits --interval VALUE --format %s' gives one value's interval",
		               o->values->name, o->values->width, FORMATS_VALUES_MAX_BITS, FORMATS_VALUES_MAX_BITS,
		               o->values->name);
	return MP_OK;
}

mp_status formats_opts_parse(int argc, char **argv, formats_opts *o, char *err, size_t errlen)
{
	*o = (formats_opts){ .mode = FMT_RNE };
	optwalk w = { 0 };
	char *value;
	int c;
	while ((c = optwalk_next(&w, argc, argv, formats_options, &value)) != -1) {
		mp_status st = MP_OK;
		switch (c) {
		case OPTWALK_VALUE:
			return mp_fail(MP_EINVAL, err, errlen, "unexpected argument '%s'", value);
		case 'v': st = values_arg(o, optarg, err, errlen); break;
		case 'm':
			st = fmt_mode_arg(optarg, &o->mode, err, errlen);
			o->have_mode = true;
			break;
		case 'S': o->saturate = true; break;
		case 'c': o->csv = true; break;
		case 'h': o->help = true; return MP_OK;
		default: return optwalk_error("formats", c, argv, formats_options, err, errlen);   /* ':' or '?' */
		}
		if (st != MP_OK)
			return MP_EINVAL;
	}
	if (!o->values && o->have_mode)
		return mp_fail(MP_EINVAL, err, errlen, "--mode needs --values FMT (the intervals of one format's values)");
	if (o->saturate && !o->have_mode)
		return mp_fail(MP_EINVAL, err, errlen, "--saturate needs --values FMT and --mode M");
	return MP_OK;
}
