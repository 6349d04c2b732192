#include <stdlib.h>
#include <string.h>

#include "fmt/numarg.h"
#include "fmt/round_opts.h"
#include "util/optwalk.h"

static const struct option round_options[] = {
	{ "to", required_argument, NULL, 't' },
	{ "mode", required_argument, NULL, 'm' },
	{ "seed", required_argument, NULL, 's' },
	{ "saturate", no_argument, NULL, 'S' },
	{ "flip-prob", required_argument, NULL, 'p' },
	{ "flip-bits", required_argument, NULL, 'b' },
	{ "csv", no_argument, NULL, 'c' },
	{ "device", required_argument, NULL, 'd' },
	{ "via", required_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

mp_status fmt_mode_arg(const char *text, fmt_mode *m, char *err, size_t errlen)
{
	if (fmt_mode_parse(text, m) != MP_OK)
		return mp_fail(MP_EINVAL, err, errlen, "--mode: unknown rounding mode '%s' (known: %s)", text,
		               fmt_mode_known());
	return MP_OK;
}

mp_status fmt_list_arg(const char *opt, const char *list, fmt_id *ids, size_t *count, char *err, size_t errlen)
{
	char why[256];
	if (fmt_parse_list(list, ids, FMT_OPTS_LIST_MAX, count, why, sizeof why) != MP_OK)
		return mp_fail(MP_EINVAL, err, errlen, "%s: %s", opt, why);
	return MP_OK;
}

/* --via F:MODE: the format and the mode of a first rounding. A stochastic
 * mode is refused: the value would then be a draw, and the element's
 * random bits belong to the second rounding. */
static mp_status via_arg(round_opts *o, const char *text, char *err, size_t errlen)
{
	const char *colon = strchr(text, ':');
	char name[64];
	size_t len = colon ? (size_t)(colon - text) : 0;
	if (!colon || len == 0 || len >= sizeof name || !colon[1])
		return mp_fail(MP_EINVAL, err, errlen, "--via: '%s' is not FORMAT:MODE (for example fp32:rto)", text);
	memcpy(name, text, len);
	name[len] = '\0';
	size_t count;
	char why[256];
	if (fmt_parse_list(name, &o->via_fmt, 1, &count, why, sizeof why) != MP_OK)
		return mp_fail(MP_EINVAL, err, errlen, "--via: %s", why);
	if (fmt_mode_parse(colon + 1, &o->via_mode) != MP_OK)
		return mp_fail(MP_EINVAL, err, errlen, "--via: unknown rounding mode '%s' (known: %s)", colon + 1,
		               fmt_mode_known());
	if (o->via_mode == FMT_SR || o->via_mode == FMT_SR_EQUAL)
		return mp_fail(MP_EINVAL, err, errlen, "--via: the first rounding takes a deterministic mode, not %s",
		               fmt_mode_name(o->via_mode));
	o->via = true;
	return MP_OK;
}

/* --device D, after the mode and the formats: cuda takes the GPU kernels'
 * modes and formats only. */
static mp_status device_check(round_opts *o, const char *device, char *err, size_t errlen)
{
	if (strcmp(device, "cpu") && strcmp(device, "cuda"))
		return mp_fail(MP_EINVAL, err, errlen, "--device: unknown device '%s' (known: cpu, cuda)", device);
	if (strcmp(device, "cuda"))
		return MP_OK;
	if (o->via)
		return mp_fail(MP_EINVAL, err, errlen, "--device cuda: --via rounds on the CPU only");
	if (o->mode != FMT_RNE && o->mode != FMT_SR)
		return mp_fail(MP_EINVAL, err, errlen, "--device cuda: the GPU kernels round with rne or sr, not %s",
		               fmt_mode_name(o->mode));
	for (size_t i = 0; i < o->nfmts; i++)
		if (!fmt_is_kernel(o->fmts[i]))
			return mp_fail(MP_EINVAL, err, errlen, "--device cuda: %s is not available on the GPU (%s are)",
			               fmt_get(o->fmts[i])->name, fmt_kernel_names());
	o->cuda = true;
	return MP_OK;
}

/* --flip-bits against every --to format: each must have the bits named. */
static mp_status flip_check(const round_opts *o, bool bits_given, char *err, size_t errlen)
{
	if (bits_given && !o->flip)
		return mp_fail(MP_EINVAL, err, errlen, "--flip-bits needs --flip-prob");
	for (size_t i = 0; o->flip && i < o->nfmts; i++) {
		const fmt_info *f = fmt_get(o->fmts[i]);
		int lo;
		if (flip_span(f, &o->flip_opt, &lo) > 0)
			continue;
		if (o->flip_opt.where == FLIP_BIT)
			return mp_fail(MP_EINVAL, err, errlen, "--flip-bits: bit %d is past %s's %d bits (0..%d)",
			               o->flip_opt.bit, f->name, f->width, f->width - 1);
		return mp_fail(MP_EINVAL, err, errlen, "--flip-bits: %s has no %s bits", f->name,
		               o->flip_opt.where == FLIP_FRAC ? "fraction" : "exponent");
	}
	return MP_OK;
}

mp_status round_opts_parse(int argc, char **argv, round_opts *o, char *err, size_t errlen)
{
	*o = (round_opts){ .mode = FMT_RNE };
	if (!(o->values = calloc((size_t)argc + 1, sizeof *o->values)))
		return mp_fail(MP_ENOMEM, err, errlen, "out of memory");
	const char *device = "cpu", *to = "fp32,fp16,bf16";
	bool bits_given = false;
	optwalk w = { 0 };
	char *value;
	int c;
	while ((c = optwalk_next(&w, argc, argv, round_options, &value)) != -1) {
		mp_status st = MP_OK;
		switch (c) {
		case OPTWALK_VALUE: o->values[o->nvalues++] = value; break;
		case 't': to = optarg; break;
		case 'm': st = fmt_mode_arg(optarg, &o->mode, err, errlen); break;
		case 's': st = numarg_u64("--seed", optarg, &o->seed, err, errlen); break;
		case 'S': o->saturate = true; break;
		case 'p':
			o->flip = true;
			st = numarg_real("--flip-prob", optarg, 0.0, false, 1.0, &o->flip_opt.p, err, errlen);
			break;
		case 'b':
			bits_given = true;
			st = flip_where_parse("--flip-bits", optarg, &o->flip_opt, err, errlen);
			break;
		case 'c': o->csv = true; break;
		case 'd': device = optarg; break;
		case 'v': st = via_arg(o, optarg, err, errlen); break;
		case 'h': o->help = true; return MP_OK;
		default: return optwalk_error("round", c, argv, round_options, err, errlen);   /* ':' or '?' */
		}
		if (st != MP_OK)
			return MP_EINVAL;
	}
	if (fmt_list_arg("--to", to, o->fmts, &o->nfmts, err, errlen) != MP_OK)
		return MP_EINVAL;
	o->flip_opt.seed = o->seed;
	if (flip_check(o, bits_given, err, errlen) != MP_OK)
		return MP_EINVAL;
	return device_check(o, device, err, errlen);
}

void round_opts_free(round_opts *o)
{
	free(o->values);
	o->values = NULL;
	o->nvalues = 0;
}
