#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "budget/budget_opts.h"
#include "tui/budget_layout.h"

static const char *const labels[BUDGET_LAYOUT_FIELDS] = {
	[BUDGET_LAYOUT_TP] = "TP", [BUDGET_LAYOUT_SP] = "SP", [BUDGET_LAYOUT_PP] = "PP",
	[BUDGET_LAYOUT_VPP] = "VPP", [BUDGET_LAYOUT_CP] = "CP",
};

const char *budget_layout_label(int f)
{
	return f >= 0 && f < BUDGET_LAYOUT_FIELDS ? labels[f] : "?";
}

static double *axis_of(budget_config *cfg, int f)
{
	budget_parallel *q = &cfg->par;
	switch (f) {
	case BUDGET_LAYOUT_TP: return &q->tp;
	case BUDGET_LAYOUT_PP: return &q->pp;
	case BUDGET_LAYOUT_VPP: return &q->vpp;
	case BUDGET_LAYOUT_CP: return &q->cp;
	default: return NULL;
	}
}

void budget_layout_value(const budget_config *cfg, int f, char *buf, size_t n)
{
	if (f == BUDGET_LAYOUT_SP) {
		snprintf(buf, n, "%s", cfg->par.sp ? "on" : "off");
		return;
	}
	double *v = axis_of((budget_config *)cfg, f);
	snprintf(buf, n, "%.0f", v ? budget_par_axis(*v) : 0);
}

/* t*p*c of cfg's layout. */
static double model_size(const budget_config *cfg)
{
	const budget_parallel *q = &cfg->par;
	return budget_par_axis(q->tp) * budget_par_axis(q->pp) * budget_par_axis(q->cp);
}

void budget_layout_step(budget_config *cfg, int f, int d)
{
	cfg->par.given = true;
	if (f == BUDGET_LAYOUT_SP) {
		cfg->par.sp = !cfg->par.sp;
		return;
	}
	double *v = axis_of(cfg, f);
	if (!v)
		return;
	/* the GPUs are the world size t*p*c*d: keep d as the sizes change */
	double dp = cfg->gpus / model_size(cfg);
	if (dp < 1 || dp != (double)(long long)dp)
		dp = 1;
	double x = budget_par_axis(*v);
	x = f == BUDGET_LAYOUT_VPP ? x + d : d > 0 ? x * 2 : x / 2;
	if (x >= 1 && x <= 4096)
		*v = x;
	cfg->gpus = dp * model_size(cfg);
}

/* Whether the twin carries a layout option. */
static bool budget_layout_on(const budget_config *cfg)
{
	const budget_parallel *q = &cfg->par;
	return q->sp || q->tp > 1 || q->pp > 1 || q->vpp > 1 || q->cp > 1;
}

/* Appends to buf (length *used of n). */
static void add(char *buf, size_t n, size_t *used, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(*used < n ? buf + *used : NULL, *used < n ? n - *used : 0, fmt, ap);
	va_end(ap);
	if (k > 0)
		*used += (size_t)k;
}

/* The model part: a preset and what differs from it, or the count and the shape. */
static void twin_model(char *buf, size_t n, size_t *u, const budget_config *cfg, const char *preset)
{
	double params = 0;
	budget_shape ps = { 0 };
	const budget_shape *s = &cfg->shape;
	if (preset && budget_preset(preset, &params, &ps) == MP_OK) {
		add(buf, n, u, " --preset %s", preset);
	} else {
		preset = NULL;
		ps.micro_batch = 1;
	}
	if (cfg->params != params)
		add(buf, n, u, " --params %.17g", cfg->params);
	if (s->layers == 0)
		return;
	const struct { const char *opt; double v, p; } dims[] = {
		{ "--layers", s->layers, ps.layers }, { "--channels", s->hidden, ps.hidden },
		{ "--heads", s->heads, ps.heads }, { "--context", s->seq, ps.seq },
		{ "--batch", s->micro_batch, ps.micro_batch }, { "--vocab", s->vocab, preset ? ps.vocab : 0 },
	};
	for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
		if (dims[i].v != dims[i].p)
			add(buf, n, u, " %s %.0f", dims[i].opt, dims[i].v);
}

size_t budget_layout_twin(char *buf, size_t n, const budget_config *cfg, const char *preset)
{
	budget_config def = budget_defaults();
	size_t u = 0;
	if (n)
		buf[0] = '\0';
	add(buf, n, &u, "budget");
	twin_model(buf, n, &u, cfg, preset);
	if (cfg->recipe != def.recipe)
		add(buf, n, &u, " --recipe %s", budget_recipe_name(cfg->recipe));
	if (cfg->optimizer != def.optimizer)
		add(buf, n, &u, " --optimizer %s", budget_optimizer_name(cfg->optimizer));
	if (cfg->convention != def.convention)
		add(buf, n, &u, " --convention %s", budget_convention_name(cfg->convention));
	if (cfg->zero_stage != 0)
		add(buf, n, &u, " --zero %d", cfg->zero_stage);
	if (cfg->shape.layers > 0 && cfg->recompute != def.recompute)
		add(buf, n, &u, " --recompute %s", budget_recompute_name(cfg->recompute));
	const budget_parallel *q = &cfg->par;
	const struct { const char *opt; double v; } axes[] = {
		{ "--tp", q->tp }, { "--pp", q->pp }, { "--vpp", q->vpp }, { "--cp", q->cp },
	};
	for (size_t i = 0; i < sizeof axes / sizeof axes[0]; i++) {
		if (axes[i].v > 1)
			add(buf, n, &u, " %s %.0f", axes[i].opt, axes[i].v);
		if (i == 0 && q->sp)
			add(buf, n, &u, " --sp");
	}
	/* with a layout the GPUs default to t*p*c (d = 1) */
	double model = model_size(cfg);
	if (cfg->gpus != 1 && !(budget_layout_on(cfg) && cfg->gpus == model))
		add(buf, n, &u, " --gpus %.0f", cfg->gpus);
	return u;
}

mp_status budget_layout_parse(const char *twin, budget_config *out, char *err, size_t errlen)
{
	char line[1024], *argv[64];
	if (strlen(twin) >= sizeof line)
		return mp_fail(MP_EINVAL, err, errlen, "the command line is too long");
	snprintf(line, sizeof line, "%s", twin);
	int argc = 0;
	for (char *w = strtok(line, " "); w && argc < 63; w = strtok(NULL, " "))
		argv[argc++] = w;
	argv[argc] = NULL;
	budget_opts o;
	if (budget_opts_parse(argc, argv, &o, err, errlen) != MP_OK)
		return MP_EINVAL;
	*out = o.cfg;
	return MP_OK;
}
