#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/policy.h"

/* Each preset is the all-fp32 policy with a few parts changed (written as
 * changes, not as full rows, so that what makes a preset is what it says). */
static train_policy presets[10];

static train_policy fp32_base(const char *name)
{
	train_policy p = {
		.gemm_lowp = false, .gemm_fmt = FMT_FP32, .reduce_lowp = false, .reduce_fmt = FMT_FP32,
		.resid_lowp = false, .resid_fmt = FMT_FP32,
		.resid_mode = FMT_RNE, .master_fp32 = true, .weight_fmt = FMT_FP32, .wupdate = WUPD_RNE,
		.grad_fmt = FMT_FP32, .grad_accum_fmt = FMT_FP32, .optim_fmt = FMT_FP32, .optim_mode = FMT_RNE,
		.scaling = SCALER_NONE, .static_scale = 1.0,
	};
	snprintf(p.name, sizeof p.name, "%s", name);
	return p;
}

/* 16-bit compute: GEMMs in f, gradients produced in f, accumulated in fp32. */
static train_policy mixed(const char *name, fmt_id f, fmt_id grads, scaler_kind scaling)
{
	train_policy p = fp32_base(name);
	p.gemm_lowp = true;
	p.gemm_fmt = f;
	p.grad_fmt = grads;
	p.scaling = scaling;
	return p;
}

/* Everything in bf16: weights (no fp32 master), gradients, Adam state, residual. */
static train_policy pure(const char *name, fmt_mode resid, weight_update w)
{
	train_policy p = mixed(name, FMT_BF16, FMT_BF16, SCALER_NONE);
	p.resid_lowp = true;
	p.resid_fmt = FMT_BF16;
	p.resid_mode = resid;
	p.master_fp32 = false;
	p.weight_fmt = FMT_BF16;
	p.wupdate = w;
	p.grad_accum_fmt = FMT_BF16;
	p.optim_fmt = FMT_BF16;
	return p;
}

static void presets_fill(void)
{
	size_t i = 0;
	presets[i++] = fp32_base("fp32");
	presets[i++] = mixed("bf16-mixed", FMT_BF16, FMT_BF16, SCALER_NONE);
	train_policy r = mixed("bf16-resid", FMT_BF16, FMT_BF16, SCALER_NONE);
	r.resid_lowp = true;
	r.resid_fmt = FMT_BF16;
	presets[i++] = r;
	snprintf(r.name, sizeof r.name, "bf16-resid-sr");
	r.resid_mode = FMT_SR;
	presets[i++] = r;
	presets[i++] = pure("bf16-pure", FMT_RNE, WUPD_RNE);
	presets[i++] = pure("bf16-pure-sr", FMT_SR, WUPD_SR);
	presets[i++] = pure("bf16-pure-kahan", FMT_RNE, WUPD_KAHAN);
	presets[i++] = mixed("fp16-mixed", FMT_FP16, FMT_FP16, SCALER_DYNAMIC);
	presets[i++] = mixed("fp16-noscale", FMT_FP16, FMT_FP16, SCALER_NONE);
	/* fp8: E4M3 operands, gradients in E5M2 (the wider range), dynamic scaling */
	presets[i++] = mixed("fp8-mixed", FMT_E4M3, FMT_E5M2, SCALER_DYNAMIC);
}

static void presets_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, presets_fill);
}

size_t policy_preset_count(void)
{
	return sizeof presets / sizeof presets[0];
}

const train_policy *policy_preset(size_t i)
{
	presets_init();
	return i < policy_preset_count() ? &presets[i] : NULL;
}

const char *policy_preset_names(void)
{
	return "fp32, bf16-mixed, bf16-resid, bf16-resid-sr, bf16-pure, bf16-pure-sr, bf16-pure-kahan, "
	       "fp16-mixed, fp16-noscale, fp8-mixed";
}

mp_status policy_from_name(const char *name, train_policy *p)
{
	presets_init();
	for (size_t i = 0; i < policy_preset_count(); i++) {
		if (!strcmp(presets[i].name, name)) {
			*p = presets[i];
			return MP_OK;
		}
	}
	return MP_EINVAL;
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
		snprintf(err, errlen, "unknown format '%s' (known: %s)", name, fmt_known_names());
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

mp_status policy_set(train_policy *p, const char *key, const char *value, char *err, size_t errlen)
{
	const char *mode;
	fmt_id f;
	if (!strcmp(key, "gemm")) {
		if (!plain_fmt(key, value, &f, err, errlen))
			return MP_EINVAL;
		p->gemm_fmt = f;
		p->gemm_lowp = f != FMT_FP32;
	} else if (!strcmp(key, "reductions")) {
		if (!strcmp(value, "low")) {
			if (!p->gemm_lowp) {
				snprintf(err, errlen, "'low' means the GEMM format, and this policy's GEMMs are fp32 "
				         "(name a format instead)");
				return MP_EINVAL;
			}
			f = p->gemm_fmt;
		} else if (!plain_fmt(key, value, &f, err, errlen)) {
			return MP_EINVAL;
		}
		p->reduce_fmt = f;
		p->reduce_lowp = f != FMT_FP32;
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
		p->resid_lowp = f != FMT_FP32;
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
		p->master_fp32 = f == FMT_FP32;
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
	} else {
		snprintf(err, errlen, "unknown policy part '%s'", key);
		return MP_EINVAL;
	}
	size_t len = strlen(p->name);
	snprintf(p->name + len, sizeof p->name - len, "+%s=%s", key, value);
	return MP_OK;
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
	if (p->master_fp32)
		snprintf(weights, sizeof weights, "fp32 master weights");
	else
		snprintf(weights, sizeof weights, "%s weights (%s updates)", fmt_get(p->weight_fmt)->name,
		         wnames[p->wupdate]);
	snprintf(buf, n, "gemm %s, reductions %s, residual %s%s%s, %s, grads %s accumulated in %s, Adam state %s%s%s, %s",
	         fmt_get(p->gemm_lowp ? p->gemm_fmt : FMT_FP32)->name,
	         fmt_get(p->reduce_lowp ? p->reduce_fmt : FMT_FP32)->name,
	         fmt_get(p->resid_lowp ? p->resid_fmt : FMT_FP32)->name,
	         p->resid_lowp ? ":" : "", p->resid_lowp ? fmt_mode_name(p->resid_mode) : "", weights,
	         fmt_get(p->grad_fmt)->name, fmt_get(p->grad_accum_fmt)->name, fmt_get(p->optim_fmt)->name,
	         p->optim_mode == FMT_SR ? ":" : "", p->optim_mode == FMT_SR ? "sr" : "", scale);
}
