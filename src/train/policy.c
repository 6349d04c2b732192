#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quant/quant.h"
#include "train/accum.h"
#include "train/policy.h"

/* The presets, one full row each (every part named, so what a preset keeps
 * in which format is read off its row), with the line --help and the man
 * page give for it. */
typedef struct {
	train_policy p;
	const char *about;   /* what the preset is, in at most 58 characters */
} preset;

static const preset presets[] = {
	{ .about = "the reference: every part in fp32",
	  .p = { .name = "fp32",
		.gemm_fmt = FMT_FP32, .reduce_fmt = FMT_FP32,
		.resid_fmt = FMT_FP32, .resid_mode = FMT_RNE,
		.weight_fmt = FMT_FP32, .wupdate = WUPD_RNE,
		.grad_fmt = FMT_FP32, .grad_accum_fmt = FMT_FP32, .optim_fmt = FMT_FP32, .optim_mode = FMT_RNE,
		.scaling = SCALER_NONE, .static_scale = 1.0 } },
	{ .about = "bf16 GEMMs and gradients; fp32 master weights and Adam",
	  .p = { .name = "bf16-mixed",
		.gemm_fmt = FMT_BF16, .reduce_fmt = FMT_FP32,
		.resid_fmt = FMT_FP32, .resid_mode = FMT_RNE,
		.weight_fmt = FMT_FP32, .wupdate = WUPD_RNE,
		.grad_fmt = FMT_BF16, .grad_accum_fmt = FMT_FP32, .optim_fmt = FMT_FP32, .optim_mode = FMT_RNE,
		.scaling = SCALER_NONE, .static_scale = 1.0 } },
	{ .about = "bf16-mixed with the residual stream stored in bf16",
	  .p = { .name = "bf16-resid",
		.gemm_fmt = FMT_BF16, .reduce_fmt = FMT_FP32,
		.resid_fmt = FMT_BF16, .resid_mode = FMT_RNE,
		.weight_fmt = FMT_FP32, .wupdate = WUPD_RNE,
		.grad_fmt = FMT_BF16, .grad_accum_fmt = FMT_FP32, .optim_fmt = FMT_FP32, .optim_mode = FMT_RNE,
		.scaling = SCALER_NONE, .static_scale = 1.0 } },
	{ .about = "bf16-resid, the stream rounded stochastically",
	  .p = { .name = "bf16-resid-sr",
		.gemm_fmt = FMT_BF16, .reduce_fmt = FMT_FP32,
		.resid_fmt = FMT_BF16, .resid_mode = FMT_SR,
		.weight_fmt = FMT_FP32, .wupdate = WUPD_RNE,
		.grad_fmt = FMT_BF16, .grad_accum_fmt = FMT_FP32, .optim_fmt = FMT_FP32, .optim_mode = FMT_RNE,
		.scaling = SCALER_NONE, .static_scale = 1.0 } },
	{ .about = "all in bf16, no fp32 master: small updates are lost",
	  .p = { .name = "bf16-pure",
		.gemm_fmt = FMT_BF16, .reduce_fmt = FMT_FP32,
		.resid_fmt = FMT_BF16, .resid_mode = FMT_RNE,
		.weight_fmt = FMT_BF16, .wupdate = WUPD_RNE,
		.grad_fmt = FMT_BF16, .grad_accum_fmt = FMT_BF16, .optim_fmt = FMT_BF16, .optim_mode = FMT_RNE,
		.scaling = SCALER_NONE, .static_scale = 1.0 } },
	{ .about = "bf16-pure, weights and stream rounded stochastically",
	  .p = { .name = "bf16-pure-sr",
		.gemm_fmt = FMT_BF16, .reduce_fmt = FMT_FP32,
		.resid_fmt = FMT_BF16, .resid_mode = FMT_SR,
		.weight_fmt = FMT_BF16, .wupdate = WUPD_SR,
		.grad_fmt = FMT_BF16, .grad_accum_fmt = FMT_BF16, .optim_fmt = FMT_BF16, .optim_mode = FMT_RNE,
		.scaling = SCALER_NONE, .static_scale = 1.0 } },
	{ .about = "bf16-pure, weight updates Kahan-compensated",
	  .p = { .name = "bf16-pure-kahan",
		.gemm_fmt = FMT_BF16, .reduce_fmt = FMT_FP32,
		.resid_fmt = FMT_BF16, .resid_mode = FMT_RNE,
		.weight_fmt = FMT_BF16, .wupdate = WUPD_KAHAN,
		.grad_fmt = FMT_BF16, .grad_accum_fmt = FMT_BF16, .optim_fmt = FMT_BF16, .optim_mode = FMT_RNE,
		.scaling = SCALER_NONE, .static_scale = 1.0 } },
	{ .about = "fp16 GEMMs and gradients, fp32 master, dynamic loss scale",
	  .p = { .name = "fp16-mixed",
		.gemm_fmt = FMT_FP16, .reduce_fmt = FMT_FP32,
		.resid_fmt = FMT_FP32, .resid_mode = FMT_RNE,
		.weight_fmt = FMT_FP32, .wupdate = WUPD_RNE,
		.grad_fmt = FMT_FP16, .grad_accum_fmt = FMT_FP32, .optim_fmt = FMT_FP32, .optim_mode = FMT_RNE,
		.scaling = SCALER_DYNAMIC, .static_scale = 1.0 } },
	{ .about = "fp16-mixed without loss scaling: small gradients flush",
	  .p = { .name = "fp16-noscale",
		.gemm_fmt = FMT_FP16, .reduce_fmt = FMT_FP32,
		.resid_fmt = FMT_FP32, .resid_mode = FMT_RNE,
		.weight_fmt = FMT_FP32, .wupdate = WUPD_RNE,
		.grad_fmt = FMT_FP16, .grad_accum_fmt = FMT_FP32, .optim_fmt = FMT_FP32, .optim_mode = FMT_RNE,
		.scaling = SCALER_NONE, .static_scale = 1.0 } },
	{ .about = "E4M3 GEMMs, E5M2 gradients, fp32 master, dynamic scale",
	  .p = { .name = "fp8-mixed",
		.gemm_fmt = FMT_E4M3, .reduce_fmt = FMT_FP32,
		.resid_fmt = FMT_FP32, .resid_mode = FMT_RNE,
		.weight_fmt = FMT_FP32, .wupdate = WUPD_RNE,
		.grad_fmt = FMT_E5M2, .grad_accum_fmt = FMT_FP32, .optim_fmt = FMT_FP32, .optim_mode = FMT_RNE,
		.scaling = SCALER_DYNAMIC, .static_scale = 1.0 } },
	/* Transformer Engine's recipes: the Linear layers' weights and inputs in
	 * E4M3, their output gradients in E5M2 (Format.HYBRID), one fp32 scale
	 * per tensor and no loss scale; attention, the tied head, LayerNorm,
	 * softmax and the loss as TE leaves them outside fp8 (bf16 GEMMs, fp32
	 * reductions); the weight gradients out of the GEMM in bf16, accumulated
	 * and stepped in fp32 (FP8_RECIPE_REST, in every fp8 recipe below) */
#define FP8_RECIPE_REST                                                                                 \
	.gemm_fmt = FMT_BF16, .reduce_fmt = FMT_FP32,                                                   \
	.resid_fmt = FMT_FP32, .resid_mode = FMT_RNE,                                                   \
	.weight_fmt = FMT_FP32, .wupdate = WUPD_RNE,                                                    \
	.grad_fmt = FMT_BF16, .grad_accum_fmt = FMT_FP32, .optim_fmt = FMT_FP32, .optim_mode = FMT_RNE, \
	.scaling = SCALER_NONE, .static_scale = 1.0
	{ .about = "TE DelayedScaling: per-tensor scales from an amax history",
	  .p = { .name = "fp8-delayed",
		FP8_RECIPE_REST,
		.cast = CAST_SCALING_DELAYED, .cast_fwd = FMT_E4M3, .cast_bwd = FMT_E5M2, .amax_history = 16,
		.amax_algo = AMAX_ALGO_MAX, .fp8_margin = 0 } },
	{ .about = "TE Float8CurrentScaling: per-tensor scales from each amax",
	  .p = { .name = "fp8-current",
		FP8_RECIPE_REST,
		.cast = CAST_SCALING_CURRENT, .cast_fwd = FMT_E4M3, .cast_bwd = FMT_E5M2, .amax_history = 16,
		.amax_algo = AMAX_ALGO_MAX, .fp8_margin = 0 } },
	/* the block recipes, the rest as the two above: DeepSeek-V3's (TE's
	 * Float8BlockScaling), MXFP8 (TE's MXFP8BlockScaling) and NVIDIA's NVFP4
	 * pretraining recipe (TE's NVFP4BlockScaling, arXiv:2509.25149), its
	 * last block kept in bf16 at this depth */
	{ .about = "DeepSeek-V3: E4M3, fp32 scales per 1x128 and 128x128",
	  .p = { .name = "fp8-block",
		FP8_RECIPE_REST,
		.cast = CAST_SCALING_BLOCK, .cast_fwd = FMT_E4M3, .cast_bwd = FMT_E4M3, .amax_history = 1,
		.amax_algo = AMAX_ALGO_MAX, .scale_pow2 = true } },
	{ .about = "MXFP8: E4M3, an e8m0 scale per 32 (the ceil rule)",
	  .p = { .name = "mxfp8",
		FP8_RECIPE_REST,
		.cast = CAST_SCALING_MX, .cast_fwd = FMT_E4M3, .cast_bwd = FMT_E4M3, .amax_history = 1,
		.amax_algo = AMAX_ALGO_MAX, .mx_rule = QUANT_RULE_CEIL } },
	{ .about = "NVFP4 recipe: RHT, SR grads, 2D weights, last block bf16",
	  .p = { .name = "nvfp4",
		FP8_RECIPE_REST,
		.cast = CAST_SCALING_NVFP4, .cast_fwd = FMT_E2M1, .cast_bwd = FMT_E2M1, .amax_history = 1,
		.amax_algo = AMAX_ALGO_MAX, .nvfp4_rht = true, .nvfp4_sr = true, .nvfp4_2d = true, .highp_last = 1 } },
};
#undef FP8_RECIPE_REST

enum { PRESET_COUNT = sizeof presets / sizeof presets[0] };

size_t policy_preset_count(void)
{
	return PRESET_COUNT;
}

const train_policy *policy_preset(size_t i)
{
	return i < PRESET_COUNT ? &presets[i].p : NULL;
}

const char *policy_preset_about(size_t i)
{
	return i < PRESET_COUNT ? presets[i].about : NULL;
}

static char preset_names[PRESET_COUNT * 24];

static void preset_names_fill(void)
{
	size_t len = 0;
	for (size_t i = 0; i < PRESET_COUNT; i++)
		len += (size_t)snprintf(preset_names + len, sizeof preset_names - len, "%s%s", i ? ", " : "",
		                        presets[i].p.name);
}

const char *policy_preset_names(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, preset_names_fill);
	return preset_names;
}

mp_status policy_from_name(const char *name, train_policy *p)
{
	for (size_t i = 0; i < PRESET_COUNT; i++) {
		if (!strcmp(presets[i].p.name, name)) {
			*p = presets[i].p;
			return MP_OK;
		}
	}
	return MP_EINVAL;
}

mp_status policy_parse(const char *spec, train_policy *p, char *err, size_t errlen)
{
	char buf[sizeof p->name];
	if (snprintf(buf, sizeof buf, "%s", spec) >= (int)sizeof buf) {
		snprintf(err, errlen, "policy '%.40s...' is too long", spec);
		return MP_EINVAL;
	}
	char *save = NULL, *part = strtok_r(buf, "+", &save);
	if (!part || policy_from_name(part, p) != MP_OK) {
		snprintf(err, errlen, "unknown policy '%s' (known: %s)", part ? part : spec, policy_preset_names());
		return MP_EINVAL;
	}
	while ((part = strtok_r(NULL, "+", &save)) != NULL) {
		char *eq = strchr(part, '=');
		if (!eq || eq == part) {
			snprintf(err, errlen, "'%s' in policy '%s' is not KEY=VALUE", part, spec);
			return MP_EINVAL;
		}
		*eq = '\0';
		char why[192];
		if (policy_set(p, part, eq + 1, why, sizeof why) != MP_OK) {
			snprintf(err, errlen, "policy '%s': %s", spec, why);
			return MP_EINVAL;
		}
	}
	return MP_OK;
}

/* "F" or "F:mode" into a format and mode; mode_ok lists the modes allowed. */
static bool parse_fmt_mode(const char *value, fmt_id *f, const char **mode, char *err, size_t errlen)
{
	char name[64];
	snprintf(name, sizeof name, "%s", value);
	char *colon = strchr(name, ':');
	*mode = NULL;
	if (colon) {
		*colon = '\0';
		*mode = value + (colon - name) + 1;
	}
	const fmt_info *fi = fmt_find(name);
	if (!fi) {
		snprintf(err, errlen, "unknown format '%s' (known: %s)", name, fmt_kernel_names());
		return false;
	}
	if (!fmt_is_kernel(fi->id)) {   /* fp6, fp4, FNUZ, e8m0: round, bits and quantize only */
		snprintf(err, errlen, "format '%s' is not available to training policies (known: %s)", name,
		         fmt_kernel_names());
		return false;
	}
	*f = fi->id;
	return true;
}

static bool plain_fmt(const char *key, const char *value, fmt_id *f, char *err, size_t errlen)
{
	const char *mode;
	if (!parse_fmt_mode(value, f, &mode, err, errlen))
		return false;
	if (mode) {
		snprintf(err, errlen, "%s takes a format only, not ':%s'", key, mode);
		return false;
	}
	return true;
}

/* accum-bits=N or promote-every=K into p. */
static bool accum_part(train_policy *p, const char *key, const char *value, char *err, size_t errlen)
{
	bool bits = !strcmp(key, "accum-bits");
	char *end;
	errno = 0;
	unsigned long long v = strtoull(value, &end, 10);
	if (!*value || *end || value[0] == '-' || errno || (bits && (v < ACCUM_BITS_MIN || v > ACCUM_BITS_FP32)) ||
	    v > ACCUM_BLOCK_MAX) {
		if (bits)
			snprintf(err, errlen, "'%s' is not a number of bits in %d..%d (%d: an IEEE fp32 accumulator)",
			         value, ACCUM_BITS_MIN, ACCUM_BITS_FP32, ACCUM_BITS_FP32);
		else
			snprintf(err, errlen, "'%s' is not a number of products in 0..%d (0: never)", value, ACCUM_BLOCK_MAX);
		return false;
	}
	if (bits)
		p->accum_bits = (int)v;
	else
		p->promote_every = (size_t)v;
	return true;
}

/* An integer in [lo, hi] from value; false (err written) otherwise. */
static bool int_part(const char *key, const char *value, long lo, long hi, long *v, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	long x = strtol(value, &end, 10);
	if (!*value || *end || errno || x < lo || x > hi) {
		snprintf(err, errlen, "%s '%s' is not a whole number in %ld..%ld", key, value, lo, hi);
		return false;
	}
	*v = x;
	return true;
}

static const char *const scaling_names[CAST_SCALING_COUNT] = {
	[CAST_SCALING_NONE] = "none", [CAST_SCALING_DELAYED] = "delayed", [CAST_SCALING_CURRENT] = "current",
	[CAST_SCALING_BLOCK] = "block", [CAST_SCALING_MX] = "mx", [CAST_SCALING_NVFP4] = "nvfp4" };

/* The preset whose fp8 parts fp8-scaling=s takes. */
static const char *const scaling_presets[CAST_SCALING_COUNT] = {
	[CAST_SCALING_DELAYED] = "fp8-delayed", [CAST_SCALING_CURRENT] = "fp8-current",
	[CAST_SCALING_BLOCK] = "fp8-block", [CAST_SCALING_MX] = "mxfp8", [CAST_SCALING_NVFP4] = "nvfp4" };

/* fp8-scaling=S: a recipe other than p's brings its own formats and parts,
 * from its preset; p's own recipe keeps the parts p has. */
static bool scaling_part(train_policy *p, const char *value, char *err, size_t errlen)
{
	for (int i = 0; i < CAST_SCALING_COUNT; i++) {
		if (strcmp(value, scaling_names[i]))
			continue;
		train_policy r;   /* a new recipe brings its parts; the same one keeps the policy's */
		if (i != CAST_SCALING_NONE && i != (int)p->cast && policy_from_name(scaling_presets[i], &r) == MP_OK) {
			p->cast_fwd = r.cast_fwd;
			p->cast_bwd = r.cast_bwd;
			p->amax_history = r.amax_history;
			p->amax_algo = r.amax_algo;
			p->fp8_margin = r.fp8_margin;
			p->scale_pow2 = r.scale_pow2;
			p->mx_rule = r.mx_rule;
			p->mx_block = r.mx_block;
			p->nvfp4_rht = r.nvfp4_rht;
			p->nvfp4_sr = r.nvfp4_sr;
			p->nvfp4_2d = r.nvfp4_2d;
			p->highp_last = r.highp_last;
		}
		p->cast = (cast_scaling)i;
		return true;
	}
	snprintf(err, errlen, "fp8-scaling '%s' is not none, delayed, current, block, mx or nvfp4", value);
	return false;
}

/* on|off into *b. */
static bool switch_part(const char *key, const char *value, bool *b, char *err, size_t errlen)
{
	if (strcmp(value, "on") && strcmp(value, "off")) {
		snprintf(err, errlen, "%s '%s' is not on or off", key, value);
		return false;
	}
	*b = !strcmp(value, "on");
	return true;
}

/* The block recipes' parts: scale-pow2, scale-rule, block, rht, sr, 2d,
 * bf16-last, bf16-from.
 * MP_EUNSUPPORTED (err says why) when p's recipe has no such part. */
static mp_status block_part(train_policy *p, const char *key, const char *value, char *err, size_t errlen)
{
	long v;
	cast_scaling want = !strcmp(key, "scale-pow2") ? CAST_SCALING_BLOCK
	                   : !strcmp(key, "scale-rule") || !strcmp(key, "block") ? CAST_SCALING_MX
	                   : !strcmp(key, "bf16-last") || !strcmp(key, "bf16-from") ? CAST_SCALING_COUNT
	                   : CAST_SCALING_NVFP4;
	if (want == CAST_SCALING_COUNT ? p->cast == CAST_SCALING_NONE : p->cast != want) {
		snprintf(err, errlen, "%s applies to %s scaling only, and policy %s has %s", key,
		         want == CAST_SCALING_COUNT ? "fp8 or fp4" : scaling_names[want], p->name, scaling_names[p->cast]);
		return MP_EUNSUPPORTED;
	}
	if (!strcmp(key, "bf16-last")) {
		if (!int_part(key, value, 0, 64, &v, err, errlen))
			return MP_EINVAL;
		p->highp_last = (size_t)v;
		return MP_OK;
	}
	if (!strcmp(key, "bf16-from")) {
		if (!int_part(key, value, 0, POLICY_STEP_MAX, &v, err, errlen))
			return MP_EINVAL;
		p->bf16_switch = true;
		p->bf16_from = (size_t)v;
		return MP_OK;
	}
	if (!strcmp(key, "block")) {
		if (!int_part(key, value, 1, QUANT_BLOCK_MAX, &v, err, errlen))
			return MP_EINVAL;
		p->mx_block = (size_t)v;
		return MP_OK;
	}
	if (!strcmp(key, "scale-rule")) {
		if (quant_rule_parse(value, &p->mx_rule) != MP_OK) {
			snprintf(err, errlen, "scale-rule '%s' is not one of %s", value, quant_rule_names());
			return MP_EINVAL;
		}
		return MP_OK;
	}
	bool *b = !strcmp(key, "scale-pow2") ? &p->scale_pow2 : !strcmp(key, "rht") ? &p->nvfp4_rht
	          : !strcmp(key, "sr") ? &p->nvfp4_sr : &p->nvfp4_2d;
	return switch_part(key, value, b, err, errlen) ? MP_OK : MP_EINVAL;
}

/* fp8-scaling, fp8-format, amax-history, amax-algo, fp8-margin into p:
 * MP_OK, MP_EINVAL, or MP_EUNSUPPORTED for a part p's recipe lacks. */
static mp_status fp8_part(train_policy *p, const char *key, const char *value, char *err, size_t errlen)
{
	long v;
	if (!strcmp(key, "fp8-scaling"))
		return scaling_part(p, value, err, errlen) ? MP_OK : MP_EINVAL;
	if (!strcmp(key, "fp8-format")) {
		bool hybrid = !strcmp(value, "hybrid");
		if (!hybrid && strcmp(value, "e4m3")) {
			snprintf(err, errlen, "fp8-format '%s' is not hybrid (E4M3 forward, E5M2 gradients) or e4m3", value);
			return MP_EINVAL;
		}
		if (p->cast == CAST_SCALING_NVFP4) {
			snprintf(err, errlen, "policy %s casts to fp4-e2m1, not fp8", p->name);
			return MP_EUNSUPPORTED;
		}
		p->cast_fwd = FMT_E4M3;
		p->cast_bwd = hybrid ? FMT_E5M2 : FMT_E4M3;
		return MP_OK;
	}
	if (!strcmp(key, "amax-algo")) {
		bool most = !strcmp(value, "most_recent");
		if (!most && strcmp(value, "max")) {
			snprintf(err, errlen, "amax-algo '%s' is not max or most_recent", value);
			return MP_EINVAL;
		}
		p->amax_algo = most ? AMAX_ALGO_MOST_RECENT : AMAX_ALGO_MAX;
		return MP_OK;
	}
	if (!strcmp(key, "amax-history")) {
		if (!int_part(key, value, 1, FP8_HISTORY_MAX, &v, err, errlen))
			return MP_EINVAL;
		p->amax_history = (size_t)v;
		return MP_OK;
	}
	if (!int_part(key, value, -FP8_MARGIN_MAX, FP8_MARGIN_MAX, &v, err, errlen))
		return MP_EINVAL;
	p->fp8_margin = (int)v;
	return MP_OK;
}

mp_status policy_set(train_policy *p, const char *key, const char *value, char *err, size_t errlen)
{
	const char *mode;
	fmt_id f;
	if (!strcmp(key, "gemm")) {
		if (!plain_fmt(key, value, &f, err, errlen))
			return MP_EINVAL;
		p->gemm_fmt = f;
	} else if (!strcmp(key, "reductions")) {
		if (!strcmp(value, "low")) {
			if (p->gemm_fmt == FMT_FP32) {
				snprintf(err, errlen, "'low' means the GEMM format, and this policy's GEMMs are fp32 "
				         "(name a format instead)");
				return MP_EINVAL;
			}
			f = p->gemm_fmt;
		} else if (!plain_fmt(key, value, &f, err, errlen)) {
			return MP_EINVAL;
		}
		p->reduce_fmt = f;
	} else if (!strcmp(key, "residual")) {
		if (!parse_fmt_mode(value, &f, &mode, err, errlen))
			return MP_EINVAL;
		fmt_mode m = FMT_RNE;
		if (mode && (fmt_mode_parse(mode, &m) != MP_OK || (m != FMT_RNE && m != FMT_SR))) {
			snprintf(err, errlen, "residual rounding '%s' is not rne or sr", mode);
			return MP_EINVAL;
		}
		p->resid_fmt = f;
		p->resid_mode = m;
	} else if (!strcmp(key, "weights")) {
		if (!parse_fmt_mode(value, &f, &mode, err, errlen))
			return MP_EINVAL;
		weight_update w = WUPD_RNE;
		if (mode && !strcmp(mode, "sr"))
			w = WUPD_SR;
		else if (mode && !strcmp(mode, "kahan"))
			w = WUPD_KAHAN;
		else if (mode && strcmp(mode, "rne")) {
			snprintf(err, errlen, "weight update '%s' is not rne, sr or kahan", mode);
			return MP_EINVAL;
		}
		if (f == FMT_FP32 && mode) {
			snprintf(err, errlen, "fp32 master weights take no update mode (':%s')", mode);
			return MP_EINVAL;
		}
		p->weight_fmt = f;
		p->wupdate = w;
	} else if (!strcmp(key, "grads")) {
		if (!plain_fmt(key, value, &p->grad_fmt, err, errlen))
			return MP_EINVAL;
	} else if (!strcmp(key, "grad-accum")) {
		if (!plain_fmt(key, value, &p->grad_accum_fmt, err, errlen))
			return MP_EINVAL;
	} else if (!strcmp(key, "optim-state")) {
		if (!parse_fmt_mode(value, &f, &mode, err, errlen))
			return MP_EINVAL;
		fmt_mode m = FMT_RNE;
		if (mode && (fmt_mode_parse(mode, &m) != MP_OK || (m != FMT_RNE && m != FMT_SR))) {
			snprintf(err, errlen, "optimiser-state rounding '%s' is not rne or sr", mode);
			return MP_EINVAL;
		}
		if (f == FMT_FP32 && mode) {
			snprintf(err, errlen, "fp32 optimiser state takes no rounding mode (':%s')", mode);
			return MP_EINVAL;
		}
		p->optim_fmt = f;
		p->optim_mode = m;
	} else if (!strcmp(key, "loss-scale")) {
		if (!strcmp(value, "none")) {
			p->scaling = SCALER_NONE;
		} else if (!strcmp(value, "dynamic")) {
			p->scaling = SCALER_DYNAMIC;
		} else if (!strncmp(value, "static:", 7)) {
			char *end;
			double s = strtod(value + 7, &end);
			if (*end || !(s > 0) || s > 1e30) {
				snprintf(err, errlen, "loss-scale static:%s needs a positive scale", value + 7);
				return MP_EINVAL;
			}
			p->scaling = SCALER_STATIC;
			p->static_scale = s;
		} else {
			snprintf(err, errlen, "loss-scale '%s' is not none, dynamic or static:S", value);
			return MP_EINVAL;
		}
	} else if (!strcmp(key, "accum-bits") || !strcmp(key, "promote-every")) {
		if (!accum_part(p, key, value, err, errlen))
			return MP_EINVAL;
	} else if (!strcmp(key, "fp8-scaling") || !strcmp(key, "fp8-format") || !strcmp(key, "amax-history") ||
	           !strcmp(key, "amax-algo") || !strcmp(key, "fp8-margin")) {
		mp_status st = fp8_part(p, key, value, err, errlen);
		if (st != MP_OK)
			return st;
	} else if (!strcmp(key, "scale-pow2") || !strcmp(key, "scale-rule") || !strcmp(key, "block") ||
	           !strcmp(key, "rht") ||
	           !strcmp(key, "sr") || !strcmp(key, "2d") || !strcmp(key, "bf16-last") ||
	           !strcmp(key, "bf16-from")) {
		mp_status st = block_part(p, key, value, err, errlen);
		if (st != MP_OK)
			return st;
	} else if (policy_part_is(key)) {
		/* per-operand GEMM formats, softmax/LayerNorm/GELU output formats and
		 * bit flips (train/policy_parts.c) */
		mp_status st = policy_part_set(p, key, value, err, errlen);
		if (st != MP_OK)
			return st;
	} else {
		snprintf(err, errlen, "unknown policy part '%s'", key);
		return MP_EINVAL;
	}
	size_t len = strlen(p->name);
	snprintf(p->name + len, sizeof p->name - len, "+%s=%s", key, value);
	return MP_OK;
}

/* ", linears ..." for a policy with fp8 scaling, else "". */
static void describe_fp8(const train_policy *p, char *buf, size_t n)
{
	char last[96] = "";
	const char *g = fmt_get(p->gemm_fmt)->name;
	size_t len = 0;
	if (p->cast != CAST_SCALING_NONE && p->highp_last == 1)
		len = (size_t)snprintf(last, sizeof last, ", the last block in %s", g);
	else if (p->cast != CAST_SCALING_NONE && p->highp_last)
		len = (size_t)snprintf(last, sizeof last, ", the last %zu blocks in %s", p->highp_last, g);
	if (p->cast != CAST_SCALING_NONE && p->bf16_switch)
		snprintf(last + len, sizeof last - len, ", every block in %s from step %zu", g, p->bf16_from);
	const char *f = fmt_get(p->cast_fwd)->name, *b = fmt_get(p->cast_bwd)->name;
	switch (p->cast) {
	case CAST_SCALING_NONE:
		buf[0] = '\0';
		break;
	case CAST_SCALING_DELAYED: case CAST_SCALING_CURRENT:
		snprintf(buf, n, ", linears %s/%s %s-scaled per tensor (history %zu %s, margin %d)%s", f, b,
		         scaling_names[p->cast], p->amax_history, p->amax_algo == AMAX_ALGO_MAX ? "max" : "most_recent",
		         p->fp8_margin, last);
		break;
	case CAST_SCALING_BLOCK:
		snprintf(buf, n, ", linears %s/%s with fp32 scales per 1x128 tile and 128x128 weight block%s%s", f, b,
		         p->scale_pow2 ? " (powers of two)" : "", last);
		break;
	case CAST_SCALING_MX:
		snprintf(buf, n, ", linears %s/%s with an e8m0 scale per %zu (%s rule)%s", f, b,
		         p->mx_block ? p->mx_block : (size_t)32, quant_rule_name(p->mx_rule), last);
		break;
	default:
		snprintf(buf, n, ", linears %s with e4m3 scales per %s and an fp32 tensor scale%s%s%s", f,
		         p->nvfp4_2d ? "16 (16x16 for weights)" : "16", p->nvfp4_sr ? ", SR gradients" : "",
		         p->nvfp4_rht ? ", RHT on wgrad" : "", last);
	}
}

void policy_describe(const train_policy *p, char *buf, size_t n)
{
	static const char *const wnames[] = { [WUPD_RNE] = "rne", [WUPD_SR] = "sr", [WUPD_KAHAN] = "kahan" };
	char scale[64];
	if (p->scaling == SCALER_NONE)
		snprintf(scale, sizeof scale, "no loss scaling");
	else if (p->scaling == SCALER_DYNAMIC)
		snprintf(scale, sizeof scale, "dynamic loss scaling");
	else
		snprintf(scale, sizeof scale, "loss scale %g", p->static_scale);
	char weights[64];
	if (policy_master_fp32(p))
		snprintf(weights, sizeof weights, "fp32 master weights");
	else
		snprintf(weights, sizeof weights, "%s weights (%s updates)", fmt_get(p->weight_fmt)->name,
		         wnames[p->wupdate]);
	char accum[80] = "", every[40] = "";
	if (p->promote_every)
		snprintf(every, sizeof every, ", into fp32 every %zu", p->promote_every);
	if (policy_accum_emulated(p))
		snprintf(accum, sizeof accum, " (%d-bit accumulator%s)", p->accum_bits ? p->accum_bits : ACCUM_BITS_FP32,
		         every);
	char fp8[256] = "", parts[256] = "";
	describe_fp8(p, fp8, sizeof fp8);
	policy_parts_describe(p, parts, sizeof parts);
	snprintf(buf, n, "gemm %s%s%s, reductions %s, residual %s%s%s, %s, grads %s accumulated in %s, Adam state %s%s%s, %s%s",
	         fmt_get(p->gemm_fmt)->name, accum, fp8,
	         fmt_get(p->reduce_fmt)->name,
	         fmt_get(p->resid_fmt)->name,
	         p->resid_fmt != FMT_FP32 ? ":" : "", p->resid_fmt != FMT_FP32 ? fmt_mode_name(p->resid_mode) : "",
	         weights,
	         fmt_get(p->grad_fmt)->name, fmt_get(p->grad_accum_fmt)->name, fmt_get(p->optim_fmt)->name,
	         p->optim_mode == FMT_SR ? ":" : "", p->optim_mode == FMT_SR ? "sr" : "", scale, parts);
}
