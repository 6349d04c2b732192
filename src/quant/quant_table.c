/* The block formats' table, their names and the option checks: apart from
 * quant.c's exact arithmetic (GMP, MPFR), so that the trainer's block casts
 * (train/blockcast.c, through quant_bulk) link without them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fmt/decode.h"
#include "quant/quant.h"
#include "quant/quant_impl.h"

static const quant_info table[QUANT_COUNT] = {
	[QUANT_MXFP8_E4M3] = { .id = QUANT_MXFP8_E4M3, .name = "mxfp8-e4m3", .elem = FMT_E4M3, .block = 32,
		.emax_elem = 8, .mbits = 3, .summary = "OCP MXFP8: fp8-e4m3 elements, an e8m0 scale per 32" },
	[QUANT_MXFP8_E5M2] = { .id = QUANT_MXFP8_E5M2, .name = "mxfp8-e5m2", .elem = FMT_E5M2, .block = 32,
		.emax_elem = 15, .mbits = 2, .summary = "OCP MXFP8: fp8-e5m2 elements, an e8m0 scale per 32" },
	[QUANT_MXFP6_E3M2] = { .id = QUANT_MXFP6_E3M2, .name = "mxfp6-e3m2", .elem = FMT_E3M2, .block = 32,
		.emax_elem = 4, .mbits = 2, .summary = "OCP MXFP6: fp6-e3m2 elements, an e8m0 scale per 32" },
	[QUANT_MXFP6_E2M3] = { .id = QUANT_MXFP6_E2M3, .name = "mxfp6-e2m3", .elem = FMT_E2M3, .block = 32,
		.emax_elem = 2, .mbits = 3, .summary = "OCP MXFP6: fp6-e2m3 elements, an e8m0 scale per 32" },
	[QUANT_MXFP4] = { .id = QUANT_MXFP4, .name = "mxfp4", .elem = FMT_E2M1, .block = 32,
		.emax_elem = 2, .mbits = 1, .summary = "OCP MXFP4: fp4-e2m1 elements, an e8m0 scale per 32" },
	[QUANT_NVFP4] = { .id = QUANT_NVFP4, .name = "nvfp4", .elem = FMT_E2M1, .block = 16, .emax_elem = 2, .mbits = 1,
		.nvfp4 = true, .summary = "NVIDIA NVFP4: fp4-e2m1 elements, an fp8-e4m3 scale per 16, an fp32 tensor scale" },
	/* OCP MX v1.0's INT8 element: two's complement with an implicit scale of
	 * 2^-6, so its largest value 127 x 2^-6 = 1.984375 has emax_elem 0 and 6
	 * fraction bits (as microsoft/microxcaling's mx/formats.py has it: int8
	 * emax 0, max_norm 1.984375). The elements are the int8 row's integers,
	 * standing for integer x 2^-6; they saturate at +-127 (-128 becomes
	 * -127), so 0x80 (-2) is decoded but never produced, as microxcaling
	 * clamps to +-max_norm. */
	[QUANT_MXINT8] = { .id = QUANT_MXINT8, .name = "mxint8", .elem = FMT_INT8, .block = 32, .emax_elem = 0,
		.mbits = 6, .elem_shift = -6, .summary = "OCP MXINT8: int8 elements x 2^-6, an e8m0 scale per 32" },
};

const quant_info *quant_get(quant_id id)
{
	return &table[id];
}

const quant_info *quant_find(const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; i < QUANT_COUNT; i++) {
		if (table[i].name && strcasecmp(table[i].name, name) == 0)
			return &table[i];
	}
	return NULL;
}

const char *quant_known_names(void)
{
	return "mxfp8-e4m3, mxfp8-e5m2, mxfp6-e3m2, mxfp6-e2m3, mxfp4, nvfp4, mxint8";
}

static const char *const rule_names[QUANT_RULE_COUNT] = {
	[QUANT_RULE_OCP] = "ocp",
	[QUANT_RULE_CEIL] = "ceil",
	[QUANT_RULE_EVEN] = "even",
	[QUANT_RULE_RCEIL] = "rceil",
	[QUANT_RULE_TCEIL] = "torchao-ceil",
};

const char *quant_rule_name(quant_rule r)
{
	return (unsigned)r < QUANT_RULE_COUNT ? rule_names[r] : "?";
}

const char *quant_rule_names(void)
{
	return "ocp (or floor), ceil, even, rceil, torchao-ceil";
}

mp_status quant_rule_parse(const char *name, quant_rule *r)
{
	if (strcasecmp(name, "floor") == 0) {   /* torchao's name of the OCP rule */
		*r = QUANT_RULE_OCP;
		return MP_OK;
	}
	for (int i = 0; i < QUANT_RULE_COUNT; i++) {
		if (strcasecmp(name, rule_names[i]) == 0) {
			*r = (quant_rule)i;
			return MP_OK;
		}
	}
	return MP_EINVAL;
}

double quant_elem_max(const quant_info *q)
{
	return ldexp(fmt_max(fmt_get(q->elem)), q->elem_shift);
}

void quant_overflow_threshold(const fmt_info *f, double *thr, bool *tie_over)
{
	double max = fmt_max(f);
	if (fmt_is_int(f)) {   /* integers 1 apart; the largest, 2^(w-1) - 1, is odd */
		*thr = max + 0.5;
		*tie_over = true;
		return;
	}
	int emax = fmt_emax(f);
	double ulp = ldexp(1.0, emax - f->frac_bits);
	*thr = max + ulp / 2;
	*tie_over = ((long long)((max - ldexp(1.0, emax)) / ulp) & 1) != 0;
}

double quant_bits_per_elem(const quant_info *q, size_t block)
{
	size_t b = block ? block : (size_t)q->block;
	return fmt_get(q->elem)->width + 8.0 / (double)b;
}

double quant_e4m3_value(uint32_t c)
{
	uint32_t mag = c & 0x7fu, e = mag >> 3, m = mag & 7u;
	if (mag == 0x7fu)
		return NAN;
	/* (8 + m) 2^(e - 10), or m 2^-9 below the min normal: exact in binary64 */
	double v = (double)(e ? 8 + m : m) * quant_pow2(e ? (int)e - 10 : -9);
	return c & 0x80u ? -v : v;
}

double quant_e8m0_value(uint32_t c)
{
	c &= 0xffu;
	return c == 0xffu ? NAN : quant_pow2((int)c - 127);
}

double quant_decode(const quant_info *q, uint32_t bits, uint32_t scale_bits, double tensor_scale)
{
	double e = fmt_to_double(fmt_get(q->elem), bits);
	if (q->nvfp4)
		return e * fmt_to_double(fmt_get(FMT_E4M3), scale_bits & 0xffu) * tensor_scale;
	if ((scale_bits & 0xffu) == 0xffu)
		return NAN;   /* e8m0's NaN */
	return ldexp(e, (int)(scale_bits & 0xffu) - 127 + q->elem_shift);
}

mp_status quant_opts_check(const quant_opts *o, char *err, size_t errlen)
{
	if ((unsigned)o->fmt >= QUANT_COUNT || !table[o->fmt].name)
		return mp_fail(MP_EINVAL, err, errlen, "unknown block format");
	if ((unsigned)o->rule >= QUANT_RULE_COUNT)
		return mp_fail(MP_EINVAL, err, errlen, "unknown scale rule");
	if (!quant_mode_ok(o->mode))
		return mp_fail(MP_EINVAL, err, errlen, "elements round with %s", QUANT_MODES);
	if (o->block > QUANT_BLOCK_MAX)
		return mp_fail(MP_EINVAL, err, errlen, "block size above 65536");
	return MP_OK;
}

