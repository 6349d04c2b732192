/* Memory budget lab: a form over budget_config and a stacked bar of one GPU's
 * memory per component, in GB and GiB (src/budget, as `mixprec budget`). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "budget/budget.h"
#include "budget/budget_opts.h"
#include "budget/tinygpt.h"
#include "tui/budget_layout.h"
#include "train/data.h"
#include "train/policy.h"
#include "train/recipe.h"
#include "train/train.h"
#include "tui/screen_budget_serve.h"
#include "tui/screens.h"
#include "tui/worker.h"

#define BUDGET_KEYS(X)                                                                  \
	X(BG_UP, "k Up", "previous field", 'k', FK(KEY_UP), FK(KEY_BTAB))                \
	X(BG_DOWN, "j Down Tab", "next field", 'j', FK(KEY_DOWN), '\t')                   \
	X(BG_PREV, "h Left", "previous choice of this field (stage, GPUs: minus)", 'h',   \
	  FK(KEY_LEFT))                                                                   \
	X(BG_NEXT, "l Right", "next choice of this field (stage, GPUs: plus)", 'l',       \
	  FK(KEY_RIGHT))                                                                  \
	X(BG_EDIT, "Enter", "type a value into a text field (params, GPUs, shape)", TUI_ENTER_KEYS) \
	X(BG_SERVE, "s", "serving view: weights, KV cache, the batch one GPU holds (budget --serve)", 's')
TUI_KEYMAP(budget, BUDGET_KEYS);

/* The layout's fields come before the shape, so that Up from the Model
 * field reaches the shape, as it did before the layout had fields. */
enum { F_PRESET, F_PARAMS, F_RECIPE, F_OPTIM, F_ZERO, F_GPUS, F_CONV, F_RECOMP, F_LAYOUT,
       F_SHAPE = F_LAYOUT + BUDGET_LAYOUT_FIELDS, F_COUNT };

static const char *const field_names[F_COUNT] = {
	[F_PRESET] = "Model", [F_PARAMS] = "Params", [F_RECIPE] = "Recipe", [F_OPTIM] = "Optimizer",
	[F_ZERO] = "ZeRO stage", [F_GPUS] = "GPUs", [F_CONV] = "Convention", [F_RECOMP] = "Recompute",
	[F_SHAPE] = "Shape",
};

static bool is_layout(int f)
{
	return f >= F_LAYOUT && f < F_SHAPE;
}

/* A field's name: the form's, or the layout's (budget_layout.h). */
static const char *field_label(int f)
{
	return is_layout(f) ? budget_layout_label(f - F_LAYOUT) : field_names[f];
}

/* The Model field's choices: 0 custom (no shape), then budget.c's named
 * models, i standing for budget_preset_name(i - 1). */
static const char *preset_choice(int i)
{
	return i == 0 ? "custom" : budget_preset_name((size_t)(i - 1));
}

static int preset_choices(void)
{
	return (int)budget_preset_count() + 1;
}

typedef struct {
	/* the tiny trainer's memory per recipe, filled by a worker (under work.mu) */
	tui_worker work;
	bool have[BUDGET_RECIPE_COUNT];
	train_memory mem[BUDGET_RECIPE_COUNT];
	size_t tparams;
	double tacts;           /* the activation formula for the trainer's shape (budget/tinygpt.h) */
	char terr[256];
	budget_config cfg;
	int preset;             /* a preset_choice; 0: custom (no shape) */
	int field;
	bool editing;
	tui_field params, gpus, shape;
	budget_result res;
	bool ok;
	char err[256];
	bool serving;           /* the serving view (screen_budget_serve.c) is shown */
	serve_view serve;
} budget_lab;

/* The budget of the fields, read as their CLI twin through budget's own
 * parser: a combination it refuses shows the parser's reason. */
static void compute(budget_lab *b)
{
	budget_config cfg;
	char twin[1024];
	budget_layout_twin(twin, sizeof twin, &b->cfg, b->preset ? preset_choice(b->preset) : NULL);
	b->ok = budget_layout_parse(twin, &cfg, b->err, sizeof b->err) == MP_OK;
	if (b->ok) {
		b->ok = budget_compute(&b->res, &cfg) == MP_OK;
		if (!b->ok)
			snprintf(b->err, sizeof b->err, "this combination is not valid");
	}
}

/* The shape as its field shows it: "L h a s b" (layers, hidden, heads,
 * sequence, micro-batch) or "none". */
static void shape_text(budget_lab *b)
{
	const budget_shape *sh = &b->cfg.shape;
	char t[128];
	if (sh->layers == 0)
		snprintf(t, sizeof t, "none");
	else
		snprintf(t, sizeof t, "%.0f %.0f %.0f %.0f %.0f", sh->layers, sh->hidden, sh->heads, sh->seq,
		         sh->micro_batch);
	field_set(&b->shape, t);
}

/* The text field of a form field, or NULL for a field of choices. */
static tui_field *text_field(budget_lab *b, int f)
{
	return f == F_PARAMS ? &b->params : f == F_GPUS ? &b->gpus : f == F_SHAPE ? &b->shape : NULL;
}

static void set_preset(budget_lab *b, int i)
{
	b->preset = i;
	if (i == 0) {
		memset(&b->cfg.shape, 0, sizeof b->cfg.shape);
		shape_text(b);
		return;
	}
	double params;
	if (budget_preset(preset_choice(i), &params, &b->cfg.shape) == MP_OK) {
		b->cfg.params = params;
		char t[64];
		snprintf(t, sizeof t, "%.4g", params);
		field_set(&b->params, t);
	}
	shape_text(b);
}

static bool apply_text(tui_screen *s, int field)
{
	budget_lab *b = s->priv;
	char err[256];
	double v;
	if (field == F_SHAPE) {
		budget_shape sh = { 0 };
		char tail;
		if (strcmp(b->shape.text, "none") &&
		    sscanf(b->shape.text, "%lf %lf %lf %lf %lf %c", &sh.layers, &sh.hidden, &sh.heads, &sh.seq,
		           &sh.micro_batch, &tail) != 5) {
			tui_message(s->app, true, "Shape: give layers hidden heads sequence micro-batch (12 768 12 1024 1), "
			                          "or none");
			return false;
		}
		b->cfg.shape = sh;
		b->preset = 0;
		return true;
	}
	const tui_field *f = field == F_PARAMS ? &b->params : &b->gpus;
	if (budget_parse_count(f->text, &v, err, sizeof err) != MP_OK) {
		tui_message(s->app, true, "%s: %s", field_names[field], err[0] ? err : "not a positive count");
		return false;
	}
	if (field == F_PARAMS) {
		b->cfg.params = v;
		b->preset = 0;
		memset(&b->cfg.shape, 0, sizeof b->cfg.shape);
		shape_text(b);
	} else {
		b->cfg.gpus = v;
	}
	return true;
}

/* Sets up the tiny trainer under each recipe's policy, at the default shape
 * of `mixprec train`, and notes what it keeps; frees it again at once. */
static void *memory_worker(void *arg)
{
	budget_lab *b = arg;
	train_config cfg = train_config_default();
	budget_tiny_acts acts;
	budget_tiny_gpt shape = { .V = (double)cfg.model.V, .C = (double)cfg.model.C, .L = (double)cfg.model.L,
		                  .NH = (double)cfg.model.NH, .B = (double)cfg.B, .t = (double)cfg.t };
	double formula = budget_tiny_gpt_activations(&acts, &shape) == MP_OK ? acts.total : NAN;
	corpus data;
	char err[256] = "";
	char corpus_path[4096];
	mp_status st = corpus_load(&data, corpus_default_path(corpus_path, sizeof corpus_path), cfg.t, err, sizeof err);
	bool have_data = st == MP_OK;
	for (int r = 0; st == MP_OK && r < BUDGET_RECIPE_COUNT; r++) {
		pthread_mutex_lock(&b->work.mu);
		bool stop = b->work.stop;
		pthread_mutex_unlock(&b->work.mu);
		if (stop)
			break;
		train_policy pol;
		trainer *t;
		if (policy_for_recipe((budget_recipe)r, &pol) != MP_OK)
			continue;
		st = trainer_create(&t, &cfg, &pol, &data, err, sizeof err);
		if (st != MP_OK)
			break;
		train_memory m = trainer_memory(t);
		size_t n = trainer_model(t)->num_params;
		trainer_free(t);
		pthread_mutex_lock(&b->work.mu);
		b->mem[r] = m;
		b->have[r] = true;
		b->tparams = n;
		b->tacts = formula;
		pthread_mutex_unlock(&b->work.mu);
	}
	if (err[0] == '\0' && st != MP_OK)
		snprintf(err, sizeof err, "%s", mp_status_message(st));
	if (have_data)
		corpus_free(&data);
	pthread_mutex_lock(&b->work.mu);
	if (err[0])
		snprintf(b->terr, sizeof b->terr, "the tiny trainer: %s", err);
	b->work.running = false;
	pthread_mutex_unlock(&b->work.mu);
	return NULL;
}

/* A command line (`budget ...`, from a lesson's block) read by the CLI's
 * parser into the fields; a bad one leaves the lab's defaults, with the
 * reason on the status line. */
static void fill_from_command(tui_screen *s, int argc, char **argv)
{
	budget_lab *b = s->priv;
	budget_opts o;
	char err[1024], t[64];
	if (budget_opts_parse(argc, argv, &o, err, sizeof err) != MP_OK) {
		tui_message(s->app, true, "%s; the lab's defaults instead", err);
		return;
	}
	if (o.serve) {
		serve_view_from_opts(&b->serve, &o);
		b->serving = true;
	}
	b->cfg = o.cfg;
	b->preset = 0;
	for (int k = 1; o.preset && k < preset_choices(); k++)
		if (!strcmp(o.preset, preset_choice(k)))
			b->preset = k;
	snprintf(t, sizeof t, "%.4g", o.cfg.params);
	field_set(&b->params, o.params_text ? o.params_text : t);
	snprintf(t, sizeof t, "%.0f", o.cfg.gpus);
	field_set(&b->gpus, t);
	shape_text(b);
	const char *skipped = o.help ? "--help" : o.csv ? "--csv" : NULL;
	if (skipped)
		tui_message(s->app, false, "%s: the lab does not run it; the rest as given", skipped);
}

static mp_status budget_init(tui_screen *s, int argc, char **argv)
{
	budget_lab *b = s->priv;
	tui_worker_init(&b->work);
	tui_worker_start(&b->work, memory_worker, b);
	b->cfg = budget_defaults();
	set_preset(b, 1);
	field_set(&b->gpus, "1");
	serve_view_init(&b->serve);
	if (argc > 1)
		fill_from_command(s, argc, argv);
	if (b->cfg.convention == BUDGET_CONV_DEEPSPEED && b->cfg.zero_stage == 0)
		b->cfg.zero_stage = 2;
	compute(b);
	return MP_OK;
}

static void field_value(const budget_lab *b, int f, char *buf, size_t n)
{
	switch (f) {
	case F_PRESET: snprintf(buf, n, "%s", preset_choice(b->preset)); break;
	case F_PARAMS: snprintf(buf, n, "%s", b->params.text); break;
	case F_RECIPE: snprintf(buf, n, "%s", budget_recipe_name(b->cfg.recipe)); break;
	case F_OPTIM: snprintf(buf, n, "%s", budget_optimizer_name(b->cfg.optimizer)); break;
	case F_ZERO: snprintf(buf, n, "%d", b->cfg.zero_stage); break;
	case F_GPUS: snprintf(buf, n, "%s", b->gpus.text); break;
	case F_CONV: snprintf(buf, n, "%s", budget_convention_name(b->cfg.convention)); break;
	case F_RECOMP: snprintf(buf, n, "%s", budget_recompute_name(b->cfg.recompute)); break;
	case F_SHAPE: snprintf(buf, n, "%s", b->shape.text); break;
	default: budget_layout_value(&b->cfg, f - F_LAYOUT, buf, n); break;
	}
}

/* Row y from column x: the layout's fields in a line; below it, the lab's
 * CLI twin. */
static void draw_layout(budget_lab *b, WINDOW *w, int y, int x, int cols)
{
	for (int f = F_LAYOUT; f < F_SHAPE; f++) {
		bool cur = f == b->field;
		const char *label = field_label(f);
		tui_put(w, y, x, 4, cur ? ROLE_STRONG : ROLE_DIM, label);
		x += (int)strlen(label) + 1;
		char v[32], shown[48];
		field_value(b, f, v, sizeof v);
		snprintf(shown, sizeof shown, "<%s>", v);
		tui_put(w, y, x, 9, cur ? ROLE_SELECT : ROLE_NORMAL, shown);
		x += (int)strlen(shown) + 1;
	}
	char twin[1024], line[1100];
	budget_layout_twin(twin, sizeof twin, &b->cfg, b->preset ? preset_choice(b->preset) : NULL);
	snprintf(line, sizeof line, "$ mixprec %s", twin);
	tui_put_fit(w, y + 1, 1, cols - 2, ROLE_DIM, line);
}

/* Glyphs that keep the components apart without colour. */
static const char *const seg_ascii[BUDGET_COMPONENT_COUNT] = { "M", "W", "G", "A", "O", "x" };

/* The tiny trainer of this program under the same recipe, beside the
 * formula for its parameter count, in the three rows from y. */
static void draw_trainer_compare(budget_lab *b, WINDOW *w, int y, int cols)
{
	pthread_mutex_lock(&b->work.mu);
	bool have = b->have[b->cfg.recipe], running = b->work.running;
	train_memory m = b->mem[b->cfg.recipe];
	size_t n = b->tparams;
	double tacts = b->tacts;
	pthread_mutex_unlock(&b->work.mu);
	if (have) {
		budget_config c = b->cfg;
		c.params = (double)n;
		c.zero_stage = 0;
		c.gpus = 1;
		memset(&c.shape, 0, sizeof c.shape);
		budget_result f;
		bool fok = budget_compute(&f, &c) == MP_OK;
		char who[64];
		snprintf(who, sizeof who, "GPT, %zu params", n);
		tui_putf(w, y, 1, cols - 2, ROLE_HEADING, "%-20s %7s %7s %7s %7s %7s %8s", who, "master", "working",
		         "grads", "accum", "adam", "acts");
		/* a recipe with one weight copy (fp32, bf16-pure) counts it as the
		 * weights the GEMMs read; the trainer calls fp32's copy its master */
		size_t master = m.master_weights, working = m.working_weights;
		if (fok && f.bytes[BUDGET_MASTER] == 0 && working == 0) {
			working = master;
			master = 0;
		}
		tui_putf(w, y + 1, 1, cols - 2, ROLE_NORMAL, "%-20s %7.2f %7.2f %7.2f %7.2f %7.2f %8.2f", "mixprec train, MB",
		         master / 1e6, working / 1e6, m.gradients / 1e6, m.grad_accum / 1e6, m.optim_state / 1e6,
		         m.activations / 1e6);
		if (fok)
			tui_putf(w, y + 2, 1, cols - 2, ROLE_NORMAL, "%-20s %7.2f %7.2f %7.2f %7.2f %7.2f %8.2f",
			         "formula, MB", f.bytes[BUDGET_MASTER] / 1e6, f.bytes[BUDGET_WEIGHTS] / 1e6,
			         f.bytes[BUDGET_GRADS] / 1e6, f.bytes[BUDGET_GRAD_ACCUM] / 1e6, f.bytes[BUDGET_OPTIMIZER] / 1e6,
			         tacts / 1e6);
	} else if (running) {
		tui_put(w, y + 1, 1, cols - 2, ROLE_DIM, "setting up mixprec train's GPT to compare ...");
	} else if (!policy_name_for_recipe(b->cfg.recipe)) {
		tui_put(w, y + 1, 1, cols - 2, ROLE_DIM, "(mixprec train has no policy for this recipe)");
	}
}

static void budget_draw(tui_screen *s, WINDOW *w, int rows, int cols)
{
	budget_lab *b = s->priv;
	if (b->serving) {
		serve_view_draw(&b->serve, w, rows, cols);
		return;
	}
	draw_layout(b, w, 4, 39, cols);
	for (int f = 0; f < F_COUNT; f++) {
		if (is_layout(f))
			continue;
		int y = f == F_SHAPE ? 4 : f % 4, x = f < 4 || f == F_SHAPE ? 1 : 41;
		bool cur = f == b->field;
		tui_put(w, y, x, 11, cur ? ROLE_STRONG : ROLE_DIM, field_names[f]);
		if (text_field(b, f) && cur && b->editing) {
			field_draw(w, y, x + 12, f == F_SHAPE ? 30 : 24, text_field(b, f), true);
		} else {
			char v[300], shown[320];
			field_value(b, f, v, sizeof v);
			snprintf(shown, sizeof shown, text_field(b, f) ? "[%s]" : "< %s >", v);
			tui_put(w, y, x + 12, f == F_SHAPE ? 24 : 26, cur ? ROLE_SELECT : ROLE_NORMAL, shown);
		}
	}
	if (!b->ok) {
		tui_put(w, 6, 1, cols - 2, ROLE_BAD, b->err);
		return;
	}
	const budget_result *r = &b->res;
	int y = 6;
	tui_putf(w, y++, 1, cols - 2, ROLE_HEADING, "%-18s %11s %13s %13s %15s", "component", "bytes/param", "GB",
	         "GiB", "per GPU (GB)");
	for (int c = 0; c < BUDGET_COMPONENT_COUNT; c++) {
		if (c == BUDGET_ACTIVATIONS && !r->has_activations)
			continue;
		tui_put(w, y, 1, 1, theme_series(c), theme_utf8() ? theme_glyph(GLYPH_BLOCK) : seg_ascii[c]);
		if (r->has_ds)   /* DeepSpeed gives no per-component split */
			tui_putf(w, y++, 3, cols - 4, ROLE_NORMAL, "%-16s %11.2f %13.3f %13.3f %15s", budget_component_name(c),
			         r->bytes_per_param[c], r->bytes[c] / 1e9, r->bytes[c] / 1073741824.0, "-");
		else
			tui_putf(w, y++, 3, cols - 4, ROLE_NORMAL, "%-16s %11.2f %13.3f %13.3f %15.3f",
			         budget_component_name(c), r->bytes_per_param[c], r->bytes[c] / 1e9,
			         r->bytes[c] / 1073741824.0, r->gpu_bytes[c] / 1e9);
	}
	tui_putf(w, y++, 1, cols - 2, ROLE_STRONG, "%-18s %11.2f %13.3f %13.3f %15.3f", r->total_is_max ? "total (max)" : "total",
	         r->total_bytes_per_param, r->total_bytes / 1e9, r->total_bytes / 1073741824.0, r->gpu_total_bytes / 1e9);
	/* one GPU's memory as a stacked bar, each component's share of the sum */
	y++;
	double sum = 0;
	for (int c = 0; c < BUDGET_COMPONENT_COUNT && !r->has_ds; c++)
		sum += r->gpu_bytes[c];
	int bw = cols - 4;
	if (r->has_layout)
		tui_putf(w, y++, 1, cols - 2, ROLE_DIM, "one GPU: %.3f GB = %.3f GiB (ZeRO stage %d over d = %.0f of %.0f GPUs)",
		         r->gpu_total_bytes / 1e9, r->gpu_total_bytes / 1073741824.0, r->zero_stage, r->dp, b->cfg.gpus);
	else
		tui_putf(w, y++, 1, cols - 2, ROLE_DIM, "one GPU: %.3f GB = %.3f GiB (ZeRO stage %d over %.0f GPU%s)",
		         r->gpu_total_bytes / 1e9, r->gpu_total_bytes / 1073741824.0, r->zero_stage, b->cfg.gpus,
		         b->cfg.gpus == 1 ? "" : "s");
	if (r->has_ds) {
		char opts[128];
		budget_ds_options_text(opts, sizeof opts, &r->ds_cfg);
		tui_putf(w, y, 1, cols - 2, ROLE_DIM, "CPU: %.3f GB (x1.5 buffer), DeepSpeed %s", r->ds.cpu_bytes / 1e9,
		         opts);
	}
	double acc = 0;
	int x0 = 0;
	for (int c = 0; c < BUDGET_COMPONENT_COUNT && sum > 0; c++) {
		acc += r->gpu_bytes[c];
		int x1 = (int)lround(acc / sum * bw);
		const char *g = theme_utf8() ? theme_glyph(GLYPH_BLOCK) : seg_ascii[c];
		tui_fill(w, y, 2 + x0, x1 - x0, theme_series(c), g);
		x0 = x1;
	}
	y++;
	/* the explanation (the CLI's, for this recipe and convention) when it
	 * fits whole between the bar and the comparison's three rows: at 80x24
	 * three rows without a shape */
	int note_rows = rows - y - 3;
	char note[1024];
	budget_explain(note, sizeof note, &b->cfg, r);
	if (note_rows > 0 && tui_wrap(NULL, 0, 0, cols - 2, 1000, ROLE_DIM, note) <= note_rows)
		tui_wrap(w, y, 1, cols - 2, note_rows, ROLE_DIM, note);
	draw_trainer_compare(b, w, rows - 3, cols);
}

static bool budget_tick(tui_screen *s)
{
	budget_lab *b = s->priv;
	pthread_mutex_lock(&b->work.mu);
	bool done = !b->work.running;
	if (b->terr[0]) {
		tui_message(s->app, true, "%s", b->terr);
		b->terr[0] = '\0';
	}
	pthread_mutex_unlock(&b->work.mu);
	return done && tui_worker_join(&b->work);
}

static bool budget_busy(tui_screen *s)
{
	budget_lab *b = s->priv;
	return tui_worker_running(&b->work);
}

static void budget_done(tui_screen *s)
{
	budget_lab *b = s->priv;
	tui_worker_destroy(&b->work);
}

/* Left/Right on a layout field; the GPUs field follows (t*p*c*d). */
static void layout_step(budget_lab *b, int f, int d)
{
	budget_layout_step(&b->cfg, f, d);
	char t[32];
	snprintf(t, sizeof t, "%.0f", b->cfg.gpus);
	field_set(&b->gpus, t);
}

/* The serving view's keys: s toggles it (with the training view's model
 * when that is a named one), the rest move within it. */
static int serve_handle(budget_lab *b, tui_screen *s, int action, int key)
{
	if (action == BG_SERVE && !b->serve.editing) {
		b->serving = !b->serving;
		if (b->serving && b->preset > 0)
			serve_view_set_preset(&b->serve, preset_choice(b->preset));
		return TUI_HANDLED;
	}
	if (!b->serving)
		return TUI_PASS;
	serve_move m = action == BG_UP ? SV_UP : action == BG_DOWN ? SV_DOWN : action == BG_PREV ? SV_PREV
	             : action == BG_NEXT ? SV_NEXT : action == BG_EDIT ? SV_EDIT : SV_OTHER;
	return serve_view_handle(&b->serve, s, m, key);
}

static int budget_handle(tui_screen *s, int action, int key)
{
	budget_lab *b = s->priv;
	if (!b->editing && (b->serving || action == BG_SERVE))
		return serve_handle(b, s, action, key);
	if (b->editing) {
		tui_field *f = text_field(b, b->field);
		int r = field_key(f, key);
		if (r == FIELD_ENTER && apply_text(s, b->field)) {
			b->editing = false;
			compute(b);
		} else if (r == FIELD_CANCEL) {
			b->editing = false;
		}
		return TUI_HANDLED;
	}
	switch (action) {
	case BG_UP:
		b->field = (b->field + F_COUNT - 1) % F_COUNT;
		return TUI_HANDLED;
	case BG_DOWN:
		b->field = (b->field + 1) % F_COUNT;
		return TUI_HANDLED;
	case BG_EDIT:
		if (text_field(b, b->field)) {
			b->editing = true;
			field_begin(text_field(b, b->field));
		} else {
			tui_message(s->app, false, "Left/Right change %s", field_label(b->field));
		}
		return TUI_HANDLED;
	case BG_PREV:
	case BG_NEXT: {
		int d = action == BG_NEXT ? 1 : -1;
		switch (b->field) {
		case F_PRESET: set_preset(b, (b->preset + d + preset_choices()) % preset_choices()); break;
		case F_RECIPE: b->cfg.recipe = (budget_recipe)((b->cfg.recipe + d + BUDGET_RECIPE_COUNT) % BUDGET_RECIPE_COUNT); break;
		case F_OPTIM: b->cfg.optimizer = (budget_optimizer)((b->cfg.optimizer + d + BUDGET_OPT_COUNT) % BUDGET_OPT_COUNT); break;
		case F_ZERO: b->cfg.zero_stage = (b->cfg.zero_stage + d + 4) % 4; break;
		case F_CONV: b->cfg.convention = (budget_convention)((b->cfg.convention + d + BUDGET_CONV_COUNT) % BUDGET_CONV_COUNT); break;
		case F_RECOMP: b->cfg.recompute = (budget_recompute)((b->cfg.recompute + d + BUDGET_RECOMPUTE_COUNT) % BUDGET_RECOMPUTE_COUNT); break;
		case F_GPUS: {
			double g = b->cfg.gpus * (d > 0 ? 2 : 0.5);
			if (g >= 1 && g <= 1e6) {
				b->cfg.gpus = g;
				char t[32];
				snprintf(t, sizeof t, "%.0f", g);
				field_set(&b->gpus, t);
			}
			break;
		}
		case F_PARAMS:
			tui_message(s->app, false, "Enter types a parameter count (124M, 7e9, 6.7B)");
			break;
		case F_SHAPE:
			tui_message(s->app, false, "Enter types a shape: layers hidden heads sequence micro-batch");
			break;
		default:
			layout_step(b, b->field - F_LAYOUT, d);
			break;
		}
		compute(b);
		return TUI_HANDLED;
	}
	}
	return TUI_PASS;
}

static bool budget_editing(tui_screen *s)
{
	budget_lab *b = s->priv;
	return b->serving ? b->serve.editing : b->editing;
}

const tui_screen_ops screen_budget_ops = {
	.name = "budget",
	.lab_of = "budget",
	.title = "Memory budget lab",
	.private_size = sizeof(budget_lab),
	.keys = budget_keys,
	.nkeys = budget_ACTION_COUNT,
	.init = budget_init,
	.draw = budget_draw,
	.handle = budget_handle,
	.editing = budget_editing,
	.tick = budget_tick,
	.busy = budget_busy,
	.done = budget_done,
};
