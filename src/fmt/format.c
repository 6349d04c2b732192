#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "fmt/format.h"

static const fmt_info formats[FMT_COUNT] = {
	[FMT_FP32] = { .id = FMT_FP32, .name = "fp32", .aliases = "float32,single,float,f32",
		.summary = "IEEE binary32", .width = 32, .exp_bits = 8, .frac_bits = 23,
		.bias = 127, .specials = FMT_SPECIALS_IEEE, .kernel = true },
	[FMT_TF32] = { .id = FMT_TF32, .name = "tf32", .aliases = "tensorfloat32,tensorfloat-32",
		.summary = "NVIDIA TensorFloat-32 (fp32 range, fp16 precision)", .width = 19,
		.exp_bits = 8, .frac_bits = 10, .bias = 127, .specials = FMT_SPECIALS_IEEE, .kernel = true },
	[FMT_FP16] = { .id = FMT_FP16, .name = "fp16", .aliases = "float16,half,binary16,f16",
		.summary = "IEEE binary16", .width = 16, .exp_bits = 5, .frac_bits = 10,
		.bias = 15, .specials = FMT_SPECIALS_IEEE, .kernel = true },
	[FMT_BF16] = { .id = FMT_BF16, .name = "bf16", .aliases = "bfloat16,brainfloat16",
		.summary = "bfloat16 (fp32 range, 8 significant bits)", .width = 16,
		.exp_bits = 8, .frac_bits = 7, .bias = 127, .specials = FMT_SPECIALS_IEEE, .kernel = true },
	[FMT_E4M3] = { .id = FMT_E4M3, .name = "fp8-e4m3", .aliases = "e4m3,fp8e4m3,e4m3fn,fp8-e4m3fn,float8_e4m3fn",
		.summary = "OCP FP8 E4M3 (fn: no inf, NaN = S.1111.111)", .width = 8,
		.exp_bits = 4, .frac_bits = 3, .bias = 7, .specials = FMT_SPECIALS_FN, .kernel = true },
	[FMT_E5M2] = { .id = FMT_E5M2, .name = "fp8-e5m2", .aliases = "e5m2,fp8e5m2,float8_e5m2",
		.summary = "OCP FP8 E5M2 (IEEE-like)", .width = 8,
		.exp_bits = 5, .frac_bits = 2, .bias = 15, .specials = FMT_SPECIALS_IEEE, .kernel = true },
	[FMT_E3M2] = { .id = FMT_E3M2, .name = "fp6-e3m2", .aliases = "e3m2,fp6e3m2,float6_e3m2fn",
		.summary = "OCP MX FP6 E3M2 (no inf, no NaN; saturates)", .width = 6,
		.exp_bits = 3, .frac_bits = 2, .bias = 3, .specials = FMT_SPECIALS_NONE },
	[FMT_E2M3] = { .id = FMT_E2M3, .name = "fp6-e2m3", .aliases = "e2m3,fp6e2m3,float6_e2m3fn",
		.summary = "OCP MX FP6 E2M3 (no inf, no NaN; saturates)", .width = 6,
		.exp_bits = 2, .frac_bits = 3, .bias = 1, .specials = FMT_SPECIALS_NONE },
	[FMT_E2M1] = { .id = FMT_E2M1, .name = "fp4-e2m1", .aliases = "fp4,e2m1,fp4e2m1,float4_e2m1fn",
		.summary = "OCP MX FP4 E2M1 (no inf, no NaN; saturates)", .width = 4,
		.exp_bits = 2, .frac_bits = 1, .bias = 1, .specials = FMT_SPECIALS_NONE },
	[FMT_E4M3FNUZ] = { .id = FMT_E4M3FNUZ, .name = "fp8-e4m3fnuz", .aliases = "e4m3fnuz,float8_e4m3fnuz",
		.summary = "FP8 E4M3 FNUZ (bias 8; no inf, no -0, NaN = 0x80)", .width = 8,
		.exp_bits = 4, .frac_bits = 3, .bias = 8, .specials = FMT_SPECIALS_FNUZ },
	[FMT_E5M2FNUZ] = { .id = FMT_E5M2FNUZ, .name = "fp8-e5m2fnuz", .aliases = "e5m2fnuz,float8_e5m2fnuz",
		.summary = "FP8 E5M2 FNUZ (bias 16; no inf, no -0, NaN = 0x80)", .width = 8,
		.exp_bits = 5, .frac_bits = 2, .bias = 16, .specials = FMT_SPECIALS_FNUZ },
	[FMT_E8M0] = { .id = FMT_E8M0, .name = "e8m0", .aliases = "fp8-e8m0,e8m0fnu,float8_e8m0fnu",
		.summary = "OCP MX scale E8M0 (unsigned 2^(b-127); no zero, NaN = 0xff)", .width = 8,
		.exp_bits = 8, .frac_bits = 0, .bias = 127, .specials = FMT_SPECIALS_E8M0 },
	/* two's complement integers: ml_dtypes 0.5.4's README lists int2 and int4
	 * ("low precision integer types"); int8 is numpy's */
	[FMT_INT8] = { .id = FMT_INT8, .name = "int8", .aliases = "i8,mxint8-elem",
		.summary = "two's complement integer -128..127 (the MXINT8 element; saturates)", .width = 8,
		.exp_bits = 0, .frac_bits = 0, .bias = 0, .specials = FMT_SPECIALS_INT, .extra = true },
	[FMT_INT4] = { .id = FMT_INT4, .name = "int4", .aliases = "i4",
		.summary = "two's complement integer -8..7 (ml_dtypes int4; saturates)", .width = 4,
		.exp_bits = 0, .frac_bits = 0, .bias = 0, .specials = FMT_SPECIALS_INT, .extra = true },
	[FMT_INT2] = { .id = FMT_INT2, .name = "int2", .aliases = "i2",
		.summary = "two's complement integer -2..1 (ml_dtypes int2; saturates)", .width = 2,
		.exp_bits = 0, .frac_bits = 0, .bias = 0, .specials = FMT_SPECIALS_INT, .extra = true },
	/* ml_dtypes 0.5.4 (include/float8.h: numeric_limits_float8_e3m4, _e4m3,
	 * _e4m3b11fnuz): e3m4 and e4m3 are IEEE-like (inf, NaN = all-ones
	 * exponent), e4m3b11fnuz is FNUZ with bias 11 */
	[FMT_E3M4] = { .id = FMT_E3M4, .name = "fp8-e3m4", .aliases = "e3m4,float8_e3m4",
		.summary = "ml_dtypes float8_e3m4 (IEEE-like: bias 3, inf, NaN)", .width = 8,
		.exp_bits = 3, .frac_bits = 4, .bias = 3, .specials = FMT_SPECIALS_IEEE, .extra = true },
	[FMT_E4M3IEEE] = { .id = FMT_E4M3IEEE, .name = "fp8-e4m3-ieee", .aliases = "float8_e4m3,e4m3-ieee",
		.summary = "ml_dtypes float8_e4m3 (IEEE-like E4M3: bias 7, inf, NaN)", .width = 8,
		.exp_bits = 4, .frac_bits = 3, .bias = 7, .specials = FMT_SPECIALS_IEEE, .extra = true },
	[FMT_E4M3B11FNUZ] = { .id = FMT_E4M3B11FNUZ, .name = "fp8-e4m3b11fnuz",
		.aliases = "e4m3b11fnuz,float8_e4m3b11fnuz",
		.summary = "ml_dtypes float8_e4m3b11fnuz (bias 11; no inf, no -0, NaN = 0x80)", .width = 8,
		.exp_bits = 4, .frac_bits = 3, .bias = 11, .specials = FMT_SPECIALS_FNUZ, .extra = true },
	/* IEEE P3109 binary8pP (the working group's interim report, as its
	 * value tables Binary8pP{se,sf,ue,uf}.csv and gfloat's format_info_p3109
	 * give it): precision P with the implicit bit, P - 1 fraction bits; signed
	 * formats have 8 - P exponent bits and bias 2^(7-P), unsigned ones 9 - P
	 * and bias 2^(8-P) (one more than IEEE's 2^(E-1) - 1). One zero, no -0;
	 * P = 1 has no fraction, hence no subnormals */
	[FMT_P3109_P1] = { .id = FMT_P3109_P1, .name = "p3109-8p1", .aliases = "binary8p1se,binary8p1,p3109-8p1se,p3109_p1",
		.summary = "P3109 binary8p1se (bias 64; signed extended: NaN 0x80, inf 0x7f/0xff, no -0)", .width = 8,
		.exp_bits = 7, .frac_bits = 0, .bias = 64, .specials = FMT_SPECIALS_P3109, .extra = true },
	[FMT_P3109_P1SF] = { .id = FMT_P3109_P1SF, .name = "p3109-8p1sf", .aliases = "binary8p1sf",
		.summary = "P3109 binary8p1sf (bias 64; signed finite: NaN 0x80, no inf, no -0)", .width = 8,
		.exp_bits = 7, .frac_bits = 0, .bias = 64, .specials = FMT_SPECIALS_FNUZ, .extra = true },
	[FMT_P3109_P1UE] = { .id = FMT_P3109_P1UE, .name = "p3109-8p1ue", .aliases = "binary8p1ue",
		.summary = "P3109 binary8p1ue (bias 128; unsigned extended: inf 0xfe, NaN 0xff)", .width = 8,
		.exp_bits = 8, .frac_bits = 0, .bias = 128, .specials = FMT_SPECIALS_P3109U, .extra = true },
	[FMT_P3109_P1UF] = { .id = FMT_P3109_P1UF, .name = "p3109-8p1uf", .aliases = "binary8p1uf",
		.summary = "P3109 binary8p1uf (bias 128; unsigned finite: no inf, NaN 0xff)", .width = 8,
		.exp_bits = 8, .frac_bits = 0, .bias = 128, .specials = FMT_SPECIALS_P3109UF, .extra = true },
	[FMT_P3109_P2] = { .id = FMT_P3109_P2, .name = "p3109-8p2", .aliases = "binary8p2se,binary8p2,p3109-8p2se,p3109_p2",
		.summary = "P3109 binary8p2se (bias 32; signed extended: NaN 0x80, inf 0x7f/0xff, no -0)", .width = 8,
		.exp_bits = 6, .frac_bits = 1, .bias = 32, .specials = FMT_SPECIALS_P3109, .extra = true },
	[FMT_P3109_P2SF] = { .id = FMT_P3109_P2SF, .name = "p3109-8p2sf", .aliases = "binary8p2sf",
		.summary = "P3109 binary8p2sf (bias 32; signed finite: NaN 0x80, no inf, no -0)", .width = 8,
		.exp_bits = 6, .frac_bits = 1, .bias = 32, .specials = FMT_SPECIALS_FNUZ, .extra = true },
	[FMT_P3109_P2UE] = { .id = FMT_P3109_P2UE, .name = "p3109-8p2ue", .aliases = "binary8p2ue",
		.summary = "P3109 binary8p2ue (bias 64; unsigned extended: inf 0xfe, NaN 0xff)", .width = 8,
		.exp_bits = 7, .frac_bits = 1, .bias = 64, .specials = FMT_SPECIALS_P3109U, .extra = true },
	[FMT_P3109_P2UF] = { .id = FMT_P3109_P2UF, .name = "p3109-8p2uf", .aliases = "binary8p2uf",
		.summary = "P3109 binary8p2uf (bias 64; unsigned finite: no inf, NaN 0xff)", .width = 8,
		.exp_bits = 7, .frac_bits = 1, .bias = 64, .specials = FMT_SPECIALS_P3109UF, .extra = true },
	[FMT_P3109_P3] = { .id = FMT_P3109_P3, .name = "p3109-8p3", .aliases = "binary8p3se,binary8p3,p3109-8p3se,p3109_p3",
		.summary = "P3109 binary8p3se (bias 16; signed extended: NaN 0x80, inf 0x7f/0xff, no -0)", .width = 8,
		.exp_bits = 5, .frac_bits = 2, .bias = 16, .specials = FMT_SPECIALS_P3109, .extra = true },
	[FMT_P3109_P3SF] = { .id = FMT_P3109_P3SF, .name = "p3109-8p3sf", .aliases = "binary8p3sf",
		.summary = "P3109 binary8p3sf (bias 16; signed finite: NaN 0x80, no inf, no -0)", .width = 8,
		.exp_bits = 5, .frac_bits = 2, .bias = 16, .specials = FMT_SPECIALS_FNUZ, .extra = true },
	[FMT_P3109_P3UE] = { .id = FMT_P3109_P3UE, .name = "p3109-8p3ue", .aliases = "binary8p3ue",
		.summary = "P3109 binary8p3ue (bias 32; unsigned extended: inf 0xfe, NaN 0xff)", .width = 8,
		.exp_bits = 6, .frac_bits = 2, .bias = 32, .specials = FMT_SPECIALS_P3109U, .extra = true },
	[FMT_P3109_P3UF] = { .id = FMT_P3109_P3UF, .name = "p3109-8p3uf", .aliases = "binary8p3uf",
		.summary = "P3109 binary8p3uf (bias 32; unsigned finite: no inf, NaN 0xff)", .width = 8,
		.exp_bits = 6, .frac_bits = 2, .bias = 32, .specials = FMT_SPECIALS_P3109UF, .extra = true },
	[FMT_P3109_P4] = { .id = FMT_P3109_P4, .name = "p3109-8p4", .aliases = "binary8p4se,binary8p4,p3109-8p4se,p3109_p4",
		.summary = "P3109 binary8p4se (bias 8; signed extended: NaN 0x80, inf 0x7f/0xff, no -0)", .width = 8,
		.exp_bits = 4, .frac_bits = 3, .bias = 8, .specials = FMT_SPECIALS_P3109, .extra = true },
	[FMT_P3109_P4SF] = { .id = FMT_P3109_P4SF, .name = "p3109-8p4sf", .aliases = "binary8p4sf",
		.summary = "P3109 binary8p4sf (bias 8; signed finite: NaN 0x80, no inf, no -0)", .width = 8,
		.exp_bits = 4, .frac_bits = 3, .bias = 8, .specials = FMT_SPECIALS_FNUZ, .extra = true },
	[FMT_P3109_P4UE] = { .id = FMT_P3109_P4UE, .name = "p3109-8p4ue", .aliases = "binary8p4ue",
		.summary = "P3109 binary8p4ue (bias 16; unsigned extended: inf 0xfe, NaN 0xff)", .width = 8,
		.exp_bits = 5, .frac_bits = 3, .bias = 16, .specials = FMT_SPECIALS_P3109U, .extra = true },
	[FMT_P3109_P4UF] = { .id = FMT_P3109_P4UF, .name = "p3109-8p4uf", .aliases = "binary8p4uf",
		.summary = "P3109 binary8p4uf (bias 16; unsigned finite: no inf, NaN 0xff)", .width = 8,
		.exp_bits = 5, .frac_bits = 3, .bias = 16, .specials = FMT_SPECIALS_P3109UF, .extra = true },
	[FMT_P3109_P5] = { .id = FMT_P3109_P5, .name = "p3109-8p5", .aliases = "binary8p5se,binary8p5,p3109-8p5se,p3109_p5",
		.summary = "P3109 binary8p5se (bias 4; signed extended: NaN 0x80, inf 0x7f/0xff, no -0)", .width = 8,
		.exp_bits = 3, .frac_bits = 4, .bias = 4, .specials = FMT_SPECIALS_P3109, .extra = true },
	[FMT_P3109_P5SF] = { .id = FMT_P3109_P5SF, .name = "p3109-8p5sf", .aliases = "binary8p5sf",
		.summary = "P3109 binary8p5sf (bias 4; signed finite: NaN 0x80, no inf, no -0)", .width = 8,
		.exp_bits = 3, .frac_bits = 4, .bias = 4, .specials = FMT_SPECIALS_FNUZ, .extra = true },
	[FMT_P3109_P5UE] = { .id = FMT_P3109_P5UE, .name = "p3109-8p5ue", .aliases = "binary8p5ue",
		.summary = "P3109 binary8p5ue (bias 8; unsigned extended: inf 0xfe, NaN 0xff)", .width = 8,
		.exp_bits = 4, .frac_bits = 4, .bias = 8, .specials = FMT_SPECIALS_P3109U, .extra = true },
	[FMT_P3109_P5UF] = { .id = FMT_P3109_P5UF, .name = "p3109-8p5uf", .aliases = "binary8p5uf",
		.summary = "P3109 binary8p5uf (bias 8; unsigned finite: no inf, NaN 0xff)", .width = 8,
		.exp_bits = 4, .frac_bits = 4, .bias = 8, .specials = FMT_SPECIALS_P3109UF, .extra = true },
	[FMT_P3109_P6] = { .id = FMT_P3109_P6, .name = "p3109-8p6", .aliases = "binary8p6se,binary8p6,p3109-8p6se,p3109_p6",
		.summary = "P3109 binary8p6se (bias 2; signed extended: NaN 0x80, inf 0x7f/0xff, no -0)", .width = 8,
		.exp_bits = 2, .frac_bits = 5, .bias = 2, .specials = FMT_SPECIALS_P3109, .extra = true },
	[FMT_P3109_P6SF] = { .id = FMT_P3109_P6SF, .name = "p3109-8p6sf", .aliases = "binary8p6sf",
		.summary = "P3109 binary8p6sf (bias 2; signed finite: NaN 0x80, no inf, no -0)", .width = 8,
		.exp_bits = 2, .frac_bits = 5, .bias = 2, .specials = FMT_SPECIALS_FNUZ, .extra = true },
	[FMT_P3109_P6UE] = { .id = FMT_P3109_P6UE, .name = "p3109-8p6ue", .aliases = "binary8p6ue",
		.summary = "P3109 binary8p6ue (bias 4; unsigned extended: inf 0xfe, NaN 0xff)", .width = 8,
		.exp_bits = 3, .frac_bits = 5, .bias = 4, .specials = FMT_SPECIALS_P3109U, .extra = true },
	[FMT_P3109_P6UF] = { .id = FMT_P3109_P6UF, .name = "p3109-8p6uf", .aliases = "binary8p6uf",
		.summary = "P3109 binary8p6uf (bias 4; unsigned finite: no inf, NaN 0xff)", .width = 8,
		.exp_bits = 3, .frac_bits = 5, .bias = 4, .specials = FMT_SPECIALS_P3109UF, .extra = true },
	[FMT_P3109_P7] = { .id = FMT_P3109_P7, .name = "p3109-8p7", .aliases = "binary8p7se,binary8p7,p3109-8p7se,p3109_p7",
		.summary = "P3109 binary8p7se (bias 1; signed extended: NaN 0x80, inf 0x7f/0xff, no -0)", .width = 8,
		.exp_bits = 1, .frac_bits = 6, .bias = 1, .specials = FMT_SPECIALS_P3109, .extra = true },
	[FMT_P3109_P7SF] = { .id = FMT_P3109_P7SF, .name = "p3109-8p7sf", .aliases = "binary8p7sf",
		.summary = "P3109 binary8p7sf (bias 1; signed finite: NaN 0x80, no inf, no -0)", .width = 8,
		.exp_bits = 1, .frac_bits = 6, .bias = 1, .specials = FMT_SPECIALS_FNUZ, .extra = true },
	[FMT_P3109_P7UE] = { .id = FMT_P3109_P7UE, .name = "p3109-8p7ue", .aliases = "binary8p7ue",
		.summary = "P3109 binary8p7ue (bias 2; unsigned extended: inf 0xfe, NaN 0xff)", .width = 8,
		.exp_bits = 2, .frac_bits = 6, .bias = 2, .specials = FMT_SPECIALS_P3109U, .extra = true },
	[FMT_P3109_P7UF] = { .id = FMT_P3109_P7UF, .name = "p3109-8p7uf", .aliases = "binary8p7uf",
		.summary = "P3109 binary8p7uf (bias 2; unsigned finite: no inf, NaN 0xff)", .width = 8,
		.exp_bits = 2, .frac_bits = 6, .bias = 2, .specials = FMT_SPECIALS_P3109UF, .extra = true },
};

const fmt_info *fmt_get(fmt_id id)
{
	return &formats[id];
}

/* True when `name` equals one comma-separated entry of `list`, ignoring case. */
static bool list_contains(const char *list, const char *name)
{
	size_t len = strlen(name);
	while (*list) {
		const char *end = strchr(list, ',');
		size_t n = end ? (size_t)(end - list) : strlen(list);
		if (n == len && strncasecmp(list, name, n) == 0)
			return true;
		if (!end)
			break;
		list = end + 1;
	}
	return false;
}

size_t fmt_course_count(void)
{
	size_t n = 0;
	while (n < FMT_COUNT && !formats[n].extra)
		n++;
	return n;
}

const fmt_info *fmt_find(const char *name)
{
	if (!name || !*name)
		return NULL;
	for (size_t i = 0; i < FMT_COUNT; i++) {
		if (strcasecmp(formats[i].name, name) == 0 || list_contains(formats[i].aliases, name))
			return &formats[i];
	}
	return NULL;
}

const char *fmt_known_names(void)
{
	/* short enough for the 256-byte messages that quote it: the 28 P3109
	 * rows by their pattern (test_format_ext checks every row is named) */
	return "fp32, tf32, fp16, bf16, fp8-e4m3, fp8-e5m2, fp6-e3m2, fp6-e2m3, fp4-e2m1, "
	       "fp8-e4m3fnuz, fp8-e5m2fnuz, e8m0, int8, int4, int2, fp8-e3m4, fp8-e4m3-ieee, "
	       "fp8-e4m3b11fnuz, p3109-8p1..8p7 and their sf, ue, uf variants";
}

static char kernel_names[128];

/* Joins the names of the kernel column's formats into buf. */
static void names_join(char *buf, size_t size)
{
	size_t len = 0;
	for (size_t i = 0; i < FMT_COUNT && len < size; i++) {
		if (formats[i].kernel)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "", formats[i].name);
	}
}

static void kernel_names_fill(void)
{
	names_join(kernel_names, sizeof kernel_names);
}

const char *fmt_kernel_names(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, kernel_names_fill);
	return kernel_names;
}

mp_status fmt_parse_list(const char *list, fmt_id *ids, size_t max, size_t *count, char *err, size_t errlen)
{
	*count = 0;
	const char *p = list;
	for (;;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char name[64];   /* longer than any name or alias: such an entry is unknown */
		const fmt_info *f = NULL;
		if (n < sizeof name) {
			memcpy(name, p, n);
			name[n] = '\0';
			f = fmt_find(name);
		}
		if (!f) {
			snprintf(err, errlen, "unknown format '%.*s' (known: %s)", (int)n, p, fmt_known_names());
			return MP_EFORMAT;
		}
		if (*count >= max) {
			snprintf(err, errlen, "too many formats in '%s'", list);
			return MP_EINVAL;
		}
		ids[(*count)++] = f->id;
		if (!end)
			return MP_OK;
		p = end + 1;
	}
}

double fmt_max(const fmt_info *f)
{
	uint32_t mbits = fmt_max_bits(f);
	if (fmt_is_int(f))
		return (double)mbits;
	int e = (int)(mbits >> f->frac_bits) - f->bias;
	double m = 1.0 + ldexp((double)(mbits & fmt_frac_mask(f)), -f->frac_bits);
	return ldexp(m, e);
}

double fmt_min_normal(const fmt_info *f)
{
	return ldexp(1.0, fmt_emin(f));
}

double fmt_min_subnormal(const fmt_info *f)
{
	if (!fmt_has_subnormals(f))
		return NAN;
	return ldexp(1.0, fmt_emin(f) - f->frac_bits);
}

double fmt_epsilon(const fmt_info *f)
{
	return ldexp(1.0, -f->frac_bits);
}

double fmt_decimal_digits(const fmt_info *f)
{
	return fmt_precision(f) * log10(2.0);
}
