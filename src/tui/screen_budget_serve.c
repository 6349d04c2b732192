#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget/budget.h"
#include "tui/screen_budget_serve.h"
#include "tui/screens.h"

enum { F_MODEL, F_CONTEXT, F_BATCH, F_RESERVE, F_WEIGHTS, F_KV, F_GPU, F_UTIL, F_COUNT };

static const char *const field_names[F_COUNT] = {
	[F_MODEL] = "Model", [F_CONTEXT] = "Context", [F_BATCH] = "Batch", [F_RESERVE] = "Reserve",
	[F_WEIGHTS] = "Weights", [F_KV] = "KV cache", [F_GPU] = "GPU memory", [F_UTIL] = "GPU util",
};

static tui_field *text_field(serve_view *v, int f)
{
	switch (f) {
	case F_CONTEXT: return &v->context;
	case F_BATCH: return &v->batch;
	case F_RESERVE: return &v->reserve;
	case F_GPU: return &v->gpu;
	case F_UTIL: return &v->util;
	default: return NULL;
	}
}

static void compute(serve_view *v)
{
	v->err[0] = '\0';
	v->ok = serve_compute(&v->res, &v->cfg, v->err, sizeof v->err) == MP_OK;
}

static void set_count_field(tui_field *f, double x)
{
	char t[32];
	snprintf(t, sizeof t, "%.0f", x);
	field_set(f, t);
}

void serve_view_init(serve_view *v)
{
	memset(v, 0, sizeof *v);
	v->cfg = serve_defaults();
	v->cfg.gpu_mem = 80e9;
	field_set(&v->gpu, "80GB");
	field_set(&v->util, "0.9");
	field_set(&v->reserve, "0");
	set_count_field(&v->batch, 1);
	serve_view_set_preset(v, "llama-3-8b");
}

void serve_view_set_preset(serve_view *v, const char *name)
{
	for (size_t i = 0; i < budget_preset_count(); i++)
		if (!strcmp(name, budget_preset_name(i)) && serve_preset(name, &v->cfg.model) == MP_OK) {
			double p;
			budget_shape s;
			budget_preset(name, &p, &s);
			v->preset = (int)i;
			v->cfg.context = s.seq;
			set_count_field(&v->context, s.seq);
		}
	compute(v);
}

/* A size as a person types it: 80GB, 39.5GiB, or bytes. */
static void size_field(tui_field *f, double bytes)
{
	char t[64];
	double g = bytes / 1e9, gi = bytes / 1073741824.0;
	if (g * 100 == floor(g * 100))
		snprintf(t, sizeof t, "%.15gGB", g);
	else if (gi * 100 == floor(gi * 100))
		snprintf(t, sizeof t, "%.15gGiB", gi);
	else
		snprintf(t, sizeof t, "%.0f", bytes);
	field_set(f, t);
}

void serve_view_from_opts(serve_view *v, const budget_opts *o)
{
	serve_view_init(v);
	v->cfg = o->serve_cfg;
	v->preset = -1;
	for (size_t i = 0; o->preset && i < budget_preset_count(); i++)
		if (!strcmp(o->preset, budget_preset_name(i)))
			v->preset = (int)i;
	set_count_field(&v->context, v->cfg.context);
	set_count_field(&v->batch, v->cfg.batch);
	char t[64];
	if (v->cfg.gpu_mem > 0)
		size_field(&v->gpu, v->cfg.gpu_mem);
	else
		field_set(&v->gpu, "none");
	snprintf(t, sizeof t, "%.4g", v->cfg.gpu_util);
	field_set(&v->util, t);
	if (v->cfg.reserve > 0)
		size_field(&v->reserve, v->cfg.reserve);
	compute(v);
}

/* A typed field into cfg; false (and a message) for a bad value. */
static bool apply_text(serve_view *v, tui_screen *s, int f)
{
	char err[256];
	double x;
	const char *t = text_field(v, f)->text;
	mp_status st;
	if (f == F_CONTEXT || f == F_BATCH) {
		st = budget_parse_count(t, &x, err, sizeof err);
	} else if (f == F_UTIL) {
		char *end;
		x = strtod(t, &end);
		st = end != t && *end == '\0' && x > 0 && x <= 1 ? MP_OK : MP_EINVAL;
		snprintf(err, sizeof err, "'%.64s' is not a fraction in (0, 1]", t);
	} else if (f == F_GPU && !strcmp(t, "none")) {
		st = MP_OK;
		x = 0;
	} else {
		st = serve_parse_bytes(t, &x, err, sizeof err);
	}
	if (st != MP_OK) {
		tui_message(s->app, true, "%s: %s", field_names[f], err);
		return false;
	}
	double *to = f == F_CONTEXT ? &v->cfg.context : f == F_BATCH ? &v->cfg.batch : f == F_UTIL ? &v->cfg.gpu_util
	           : f == F_GPU ? &v->cfg.gpu_mem : &v->cfg.reserve;
	*to = x;
	return true;
}

/* `mixprec budget --serve ...` for what the view shows. */
static void cli_twin(const serve_view *v, char *buf, size_t n)
{
	const serve_config *c = &v->cfg;
	const serve_model *m = &c->model;
	size_t k;
	const char *name = v->preset >= 0 ? budget_preset_name((size_t)v->preset) : NULL;
	if (name)
		k = (size_t)snprintf(buf, n, "mixprec budget --serve --preset %s", name);
	else
		k = (size_t)snprintf(buf, n, "mixprec budget --serve --params %.0f --layers %.0f --channels %.0f --heads %.0f "
		                     "--kv-heads %.0f --head-dim %.0f", m->params, m->layers, m->hidden, m->heads,
		                     m->kv_heads, m->head_dim);
	k += (size_t)snprintf(buf + k, k < n ? n - k : 0, " --context %.0f --batch %.0f", c->context, c->batch);
	if (c->weights != SERVE_W_BF16)
		k += (size_t)snprintf(buf + k, k < n ? n - k : 0, " --weights-dtype %s", serve_weights_name(c->weights));
	if (c->kv != SERVE_KV_BF16)
		k += (size_t)snprintf(buf + k, k < n ? n - k : 0, " --kv-dtype %s", serve_kv_name(c->kv));
	if (c->gpu_mem > 0)
		k += (size_t)snprintf(buf + k, k < n ? n - k : 0, " --gpu-mem %s", v->gpu.text);
	if (c->gpu_mem > 0 && c->gpu_util != 0.9)
		k += (size_t)snprintf(buf + k, k < n ? n - k : 0, " --gpu-util %s", v->util.text);
	if (c->gpu_mem > 0 && c->reserve > 0)
		snprintf(buf + k, k < n ? n - k : 0, " --reserve %s", v->reserve.text);
}

static void field_value(const serve_view *v, int f, char *buf, size_t n)
{
	const char *name = v->preset >= 0 ? budget_preset_name((size_t)v->preset) : NULL;
	const tui_field *t = text_field((serve_view *)v, f);
	switch (f) {
	case F_MODEL: snprintf(buf, n, "%s", name ? name : "custom"); break;
	case F_WEIGHTS: snprintf(buf, n, "%s", serve_weights_name(v->cfg.weights)); break;
	case F_KV: snprintf(buf, n, "%s", serve_kv_name(v->cfg.kv)); break;
	default: snprintf(buf, n, "%s", t ? t->text : ""); break;
	}
}

static void draw_fields(serve_view *v, WINDOW *w)
{
	for (int f = 0; f < F_COUNT; f++) {
		int y = f % 4, x = f < 4 ? 1 : 41;
		bool cur = f == v->field;
		tui_put(w, y, x, 11, cur ? ROLE_STRONG : ROLE_DIM, field_names[f]);
		if (text_field(v, f) && cur && v->editing) {
			field_draw(w, y, x + 12, 24, text_field(v, f), true);
		} else {
			char val[300], shown[320];
			field_value(v, f, val, sizeof val);
			snprintf(shown, sizeof shown, text_field(v, f) ? "[%s]" : "< %s >", val);
			tui_put(w, y, x + 12, 26, cur ? ROLE_SELECT : ROLE_NORMAL, shown);
		}
	}
}

/* One GPU's memory as a bar: weights, reserve, the request's KV cache, free,
 * and the share vLLM leaves unused. */
static void draw_bar(const serve_view *v, WINDOW *w, int y, int cols)
{
	const serve_result *r = &v->res;
	double part[5] = { r->weights_total, v->cfg.reserve, fmin(r->kv_bytes, fmax(0, r->kv_budget)),
		           fmax(0, r->free_bytes), v->cfg.gpu_mem - r->usable };
	static const char *const glyph[5] = { "W", "R", "K", ".", " " };
	double sum = 0;
	for (int i = 0; i < 5; i++)
		sum += part[i];
	int bw = cols - 4, x0 = 0;
	double acc = 0;
	for (int i = 0; i < 5 && sum > 0; i++) {
		acc += part[i];
		int x1 = (int)lround(fmin(acc / sum, 1) * bw);
		tui_fill(w, y, 2 + x0, x1 - x0, i == 3 ? ROLE_DIM : theme_series(i), glyph[i]);
		x0 = x1;
	}
}

static void draw_rows(const serve_view *v, WINDOW *w, int y, int cols)
{
	const serve_result *r = &v->res;
	const double gib = 1073741824.0;
	struct { const char *name; double bytes; bool gpu; } rows[] = {
		{ "weights", r->weight_bytes, false }, { "weight_scales", r->scale_bytes, false },
		{ "kv_cache_per_token", r->kv_token_bytes, false }, { "kv_cache", r->kv_bytes, false },
		{ "usable", r->usable, true }, { "reserve", v->cfg.reserve, true },
		{ "kv_budget", r->kv_budget, true }, { "free", r->free_bytes, true },
	};
	tui_putf(w, y++, 1, cols - 2, ROLE_HEADING, "%-20s %18s %12s %12s", "item", "bytes", "GB", "GiB");
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (!rows[i].gpu || r->has_gpu)
			tui_putf(w, y++, 1, cols - 2, ROLE_NORMAL, "%-20s %18.0f %12.3f %12.3f", rows[i].name, rows[i].bytes,
			         rows[i].bytes / 1e9, rows[i].bytes / gib);
}

void serve_view_draw(serve_view *v, WINDOW *w, int rows, int cols)
{
	(void)rows;
	draw_fields(v, w);
	char cmd[512];
	cli_twin(v, cmd, sizeof cmd);
	tui_put(w, 4, 1, 2, ROLE_DIM, "$");
	int used = tui_wrap(w, 4, 3, cols - 4, 2, ROLE_CODE, cmd);
	int y = 4 + (used > 0 ? used : 1);
	if (!v->ok) {
		tui_wrap(w, y + 1, 1, cols - 2, 3, ROLE_BAD, v->err);
		return;
	}
	const serve_result *r = &v->res;
	draw_rows(v, w, y, cols);
	y += r->has_gpu ? 9 : 5;
	tui_putf(w, y++, 1, cols - 2, ROLE_NORMAL, "KV heads per GPU %.0f   tokens %.0f   %s weights %.4g bits", r->kv_heads_gpu,
	         r->kv_tokens, serve_weights_name(v->cfg.weights), r->bits_per_linear);
	if (!r->has_gpu)
		return;
	tui_putf(w, y++, 1, cols - 2, ROLE_STRONG, "blocks %.0f of %.0f tokens   max tokens %.0f   max batch at %.0f: %.0f",
	         r->blocks, v->cfg.block_size, r->max_tokens, v->cfg.context, r->max_batch);
	draw_bar(v, w, y++, cols);
	tui_put(w, y++, 1, cols - 2, ROLE_DIM, "W weights  R reserve  K this batch's KV cache  . free KV blocks");
	char msg[512];
	if (serve_fit_message(msg, sizeof msg, &v->cfg, r) > 0)
		tui_wrap(w, y, 1, cols - 2, 2, ROLE_BAD, msg);
	else
		tui_putf(w, y, 1, cols - 2, ROLE_GOOD, "fits: %.0f of %.0f blocks in use", v->cfg.batch * r->blocks_per_seq,
		         r->blocks);
}

/* Left/Right on a field of choices. */
static void step_choice(serve_view *v, tui_screen *s, int d)
{
	int np = (int)budget_preset_count();
	switch (v->field) {
	case F_MODEL: {
		int p = v->preset < 0 ? 0 : (v->preset + d + np) % np;
		serve_view_set_preset(v, budget_preset_name((size_t)p));
		break;
	}
	case F_WEIGHTS: v->cfg.weights = (serve_weights)((v->cfg.weights + d + SERVE_W_COUNT) % SERVE_W_COUNT); break;
	case F_KV: v->cfg.kv = (serve_kv)((v->cfg.kv + d + SERVE_KV_COUNT) % SERVE_KV_COUNT); break;
	default: tui_message(s->app, false, "Enter types %s", field_names[v->field]); break;
	}
	compute(v);
}

int serve_view_handle(serve_view *v, tui_screen *s, serve_move move, int key)
{
	if (v->editing) {
		int r = field_key(text_field(v, v->field), key);
		if (r == FIELD_ENTER && apply_text(v, s, v->field)) {
			v->editing = false;
			compute(v);
		} else if (r == FIELD_CANCEL) {
			v->editing = false;
		}
		return TUI_HANDLED;
	}
	switch (move) {
	case SV_UP: v->field = (v->field + F_COUNT - 1) % F_COUNT; return TUI_HANDLED;
	case SV_DOWN: v->field = (v->field + 1) % F_COUNT; return TUI_HANDLED;
	case SV_PREV: step_choice(v, s, -1); return TUI_HANDLED;
	case SV_NEXT: step_choice(v, s, 1); return TUI_HANDLED;
	case SV_EDIT:
		if (text_field(v, v->field)) {
			v->editing = true;
			field_begin(text_field(v, v->field));
		} else {
			tui_message(s->app, false, "Left/Right change %s", field_names[v->field]);
		}
		return TUI_HANDLED;
	default: return TUI_PASS;
	}
}
