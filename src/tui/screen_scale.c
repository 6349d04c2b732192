/* Loss-scaling lab: gradients of real training steps (an fp16-mixed run of
 * the tiny GPT in a worker thread) as a histogram of powers of two against
 * fp16's smallest subnormal, smallest normal and largest value; S changes in
 * powers of two and the shares that underflow or overflow follow, counted
 * as `mixprec gradhist --scale S` counts them; the dynamic scaler's trace
 * (S per step, skipped steps marked) as a plot beside or under it. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/format.h"
#include "train/data.h"
#include "train/policy.h"
#include "train/shape.h"
#include "train/hist.h"
#include "train/train.h"
#include "train/train_opts.h"
#include "tui/plotview.h"
#include "tui/screens.h"
#include "tui/worker.h"

void openblas_set_num_threads(int num_threads);

#define SCALE_KEYS(X)                                                          \
	X(SC_UP, "+ ]", "double the loss scale S", '+', ']', '=')                  \
	X(SC_DOWN, "- [", "halve the loss scale S", '-', '[')                      \
	X(SC_ONE, "1", "S = 1 (no scaling)", '1')                                  \
	X(SC_RUN, "s", "train again (new gradients)", 's')                         \
	X(SC_SHAPE, "z", "model size for the next run: tiny or the default", 'z')                \
	X(SC_INIT, "i", "the dynamic scaler's first S (next run): 2^16, 2^20, 2^24", 'i')  \
	X(SC_DERIVE, "d", "the derivation as fill-in steps (exercise 7.4b)", 'd')
TUI_KEYMAP(scale, SCALE_KEYS);

enum { KMIN = MAG_HIST_KMIN, KMAX = MAG_HIST_KMAX, NBUCKETS = KMAX - KMIN + 1, RUN_STEPS = 20 };

typedef struct {
	/* shared with the worker, under work.mu */
	tui_worker work;
	size_t done_steps;
	double trace_scale[RUN_STEPS];
	bool trace_skipped[RUN_STEPS];
	double *grads;              /* |gradient| (unscaled), handed over when the run ends */
	size_t ngrads;
	char err[256];
	bool tiny_run;
	int init_log2_run;          /* the dynamic scaler starts at 2^this */
	/* the UI's */
	bool tiny;
	int init_log2;              /* for the next run */
	int log2s;                  /* S = 2^log2s */
	bool ui_running;
	size_t ui_steps;
	double ui_scale[RUN_STEPS];
	bool ui_skipped[RUN_STEPS];
	double *ui_grads;
	size_t ui_n;
	double share[NBUCKETS], kx[NBUCKETS];
	size_t count[NBUCKETS], nonzero, zero;
	int lo, hi;
	plot_canvas canvas;
	/* the dynamic scaler's trace as a figure: step numbers, S, and S again
	 * where a step was skipped (NAN elsewhere) */
	double trace_x[RUN_STEPS], trace_skip[RUN_STEPS];
	plot_canvas trace_canvas;
} scale_lab;

static void *worker(void *arg)
{
	scale_lab *l = arg;
	train_config cfg = train_config_default();
	cfg.eval_every = 0;
	cfg.init_scale = ldexp(1.0, l->init_log2_run);
	if (l->tiny_run)
		train_shape_apply(train_shape_get(TRAIN_SHAPE_TINY), &cfg, 0);
	train_policy pol;
	corpus data;
	trainer *tr = NULL;
	char err[256] = "";
	mp_status st = policy_from_name("fp16-mixed", &pol);
	char corpus_path[4096];
	if (st == MP_OK)
		st = corpus_load(&data, corpus_default_path(corpus_path, sizeof corpus_path), cfg.t, err, sizeof err);
	bool have_data = st == MP_OK;
	if (st == MP_OK)
		st = trainer_create(&tr, &cfg, &pol, &data, err, sizeof err);
	train_stats s = { 0 };
	for (size_t i = 0; st == MP_OK && i < RUN_STEPS; i++) {
		st = trainer_step(tr, &s);
		if (st != MP_OK) {
			snprintf(err, sizeof err, "%s", trainer_error(tr));
			break;
		}
		pthread_mutex_lock(&l->work.mu);
		l->trace_scale[i] = s.loss_scale;
		l->trace_skipped[i] = s.skipped;
		l->done_steps = i + 1;
		bool stop = l->work.stop;
		pthread_mutex_unlock(&l->work.mu);
		if (stop)
			break;
	}
	double *mag = NULL;
	size_t n = 0;
	if (st == MP_OK && tr) {
		/* the raw gradients carry the scale of the step that made them */
		const float *g = trainer_raw_grads(tr, &n);
		mag = malloc((n ? n : 1) * sizeof *mag);
		if (!mag)
			st = MP_ENOMEM;
		for (size_t i = 0; mag && i < n; i++)
			mag[i] = fabs((double)g[i]) / s.loss_scale;
	}
	if (tr)
		trainer_free(tr);
	if (have_data)
		corpus_free(&data);
	pthread_mutex_lock(&l->work.mu);
	if (st != MP_OK)
		snprintf(l->err, sizeof l->err, "%s", err[0] ? err : mp_status_message(st));
	free(l->grads);
	l->grads = mag;
	l->ngrads = mag ? n : 0;
	l->work.running = false;
	pthread_mutex_unlock(&l->work.mu);
	return NULL;
}

static void start(tui_screen *s)
{
	scale_lab *l = s->priv;
	tui_worker_stop(&l->work);
	l->done_steps = 0;
	l->err[0] = '\0';
	l->tiny_run = l->tiny;
	l->init_log2_run = l->init_log2;
	openblas_set_num_threads(1);
	if (!tui_worker_start(&l->work, worker, l))
		tui_message(s->app, true, "cannot start a worker thread");
}

/* The histogram of |g| by powers of two (what does not depend on S), from
 * train/hist.c as gradhist draws it. */
static void bucket(scale_lab *l)
{
	mag_hist h;
	mag_hist_init(&h, fmt_get(FMT_FP16), 1.0);
	mag_hist_add_double(&h, l->ui_grads, l->ui_n, 1.0);
	memcpy(l->count, h.count, sizeof l->count);
	l->nonzero = h.nonzero;
	l->zero = h.zero;
	l->lo = h.lo;
	l->hi = h.hi;
	for (int k = 0; k < NBUCKETS; k++) {
		l->kx[k] = KMIN + k + 0.5;
		/* empty buckets draw nothing (not a column of height 0) */
		l->share[k] = l->count[k] ? (double)l->count[k] / (double)l->nonzero : NAN;
	}
}

static mp_status scale_init(tui_screen *s, int argc, char **argv)
{
	scale_lab *l = s->priv;
	tui_worker_init(&l->work);
	plot_canvas_init(&l->canvas);
	plot_canvas_init(&l->trace_canvas);
	for (int i = 0; i < RUN_STEPS; i++)
		l->trace_x[i] = i + 1;
	l->tiny = true;
	l->init_log2 = 16;
	/* a lesson's gradhist block, read as `mixprec gradhist` reads it: the lab takes its --scale */
	gradhist_opts g;
	char err[1024];
	int e;
	if (argc > 1 && gradhist_opts_parse(argc, argv, &g, err, sizeof err) != MP_OK)
		tui_message(s->app, true, "%s; the lab's defaults instead", err);
	else if (argc > 1 && frexp(g.scale, &e) == 0.5)
		l->log2s = e - 1;
	else if (argc > 1)
		tui_message(s->app, true, "--scale: this lab takes powers of two; %.17g is not one", g.scale);
	start(s);
	return MP_OK;
}

static void scale_done(tui_screen *s)
{
	scale_lab *l = s->priv;
	tui_worker_destroy(&l->work);
	free(l->grads);
	free(l->ui_grads);
	plot_canvas_free(&l->canvas);
	plot_canvas_free(&l->trace_canvas);
}

static bool scale_tick(tui_screen *s)
{
	scale_lab *l = s->priv;
	bool fresh = false;
	pthread_mutex_lock(&l->work.mu);
	bool changed = l->ui_running != l->work.running || l->ui_steps != l->done_steps;
	l->ui_running = l->work.running;
	l->ui_steps = l->done_steps;
	memcpy(l->ui_scale, l->trace_scale, sizeof l->ui_scale);
	memcpy(l->ui_skipped, l->trace_skipped, sizeof l->ui_skipped);
	if (!l->work.running && l->grads) {
		/* the run is over: take its gradients */
		free(l->ui_grads);
		l->ui_grads = l->grads;
		l->ui_n = l->ngrads;
		l->grads = NULL;
		fresh = true;
	}
	if (l->err[0]) {
		tui_message(s->app, true, "loss-scaling run: %s", l->err);
		l->err[0] = '\0';
	}
	pthread_mutex_unlock(&l->work.mu);
	if (!l->ui_running)
		tui_worker_join(&l->work);
	if (fresh)
		bucket(l);
	return changed || fresh;
}

static bool scale_busy(tui_screen *s)
{
	scale_lab *l = s->priv;
	return tui_worker_running(&l->work);
}

/* "2^k" for a power of two (a dynamic scaler's S always is), else %g. */
static void pow2_text(char *buf, size_t n, double v)
{
	int e;
	if (v > 0 && frexp(v, &e) == 0.5)
		snprintf(buf, n, "2^%d", e - 1);
	else
		snprintf(buf, n, "%.6g", v);
}

/* The dynamic scaler's trace: S per step on a log axis, the skipped steps
 * (an inf or NaN in the scaled gradients: S halves) marked on it. */
static void draw_trace(scale_lab *l, WINDOW *w, int y, int x, int rows, int cols)
{
	for (size_t i = 0; i < RUN_STEPS; i++)
		l->trace_skip[i] = i < l->ui_steps && l->ui_skipped[i] ? l->ui_scale[i] : NAN;
	plot_series series[2] = {
		{ .name = "S", .x = l->trace_x, .y = l->ui_scale, .n = l->ui_steps, .draw = PLOT_DRAW_LINE },
		{ .name = "skipped step", .x = l->trace_x, .y = l->trace_skip, .n = l->ui_steps,
		  .draw = PLOT_DRAW_POINTS },
	};
	plot_figure fig;
	plot_figure_init(&fig);
	char title[96];
	snprintf(title, sizeof title, "dynamic loss scale S per fp16-mixed step, from 2^%d", l->init_log2_run);
	fig.title = title;
	fig.series = series;
	fig.nseries = 2;
	fig.logy = true;
	fig.fix_x = true;
	fig.xmin = 1;
	fig.xmax = RUN_STEPS;
	if (!l->ui_steps) {
		tui_put(w, y, x + 1, cols - 2, ROLE_DIM, "(the dynamic scaler's trace fills in as the steps run)");
		return;
	}
	plotview_draw(w, y, x, rows, cols, &fig, &l->trace_canvas);
}

static void scale_draw(tui_screen *s, WINDOW *w, int rows, int cols)
{
	scale_lab *l = s->priv;
	const fmt_info *h = fmt_get(FMT_FP16);
	double S = ldexp(1.0, l->log2s);
	tui_putf(w, 0, 1, cols - 2, ROLE_STRONG, "loss scale S = 2^%d = %.10g", l->log2s, S);
	tui_put(w, 0, 40, cols - 41, ROLE_DIM, "(+ doubles, - halves, d: derivation)");
	if (l->ui_running) {
		tui_putf(w, 1, 1, cols - 2, ROLE_EMPH, "training fp16-mixed (%s shape): step %zu of %d", l->tiny ? "tiny" : "default",
		         l->ui_steps, RUN_STEPS);
		draw_trace(l, w, 3, 0, rows - 3, cols);
		return;
	}
	if (!l->ui_n) {
		tui_put(w, 1, 1, cols - 2, ROLE_DIM, "no gradients yet: s trains a few steps");
		return;
	}
	/* the shares at S, per element, as gradhist counts them (train/hist.c) */
	mag_hist at;
	mag_hist_init(&at, h, S);
	mag_hist_add_double(&at, l->ui_grads, l->ui_n, 1.0);
	size_t under = at.flushed, sub = at.subnormal, over = at.overflow;
	double nz = l->nonzero ? (double)l->nonzero : 1;
	tui_putf(w, 1, 1, cols - 2, ROLE_NORMAL, "%zu nonzero gradients of the last of %zu fp16-mixed steps (%zu exactly 0)",
	         l->nonzero, l->ui_steps, l->zero);
	int x = 1;
	x += tui_putf(w, 2, x, cols - x, under ? ROLE_BAD : ROLE_GOOD, "underflow to 0: %.2f%%", 100.0 * (double)under / nz);
	x += tui_putf(w, 2, x, cols - x, ROLE_NORMAL, "   subnormal: %.2f%%", 100.0 * (double)sub / nz);
	tui_putf(w, 2, x, cols - x, over ? ROLE_BAD : ROLE_GOOD, "   overflow to inf: %.2f%%", 100.0 * (double)over / nz);
	/* the dynamic scaler's trace */
	char trace[512];
	size_t used = 0, skipped = 0;
	for (size_t i = 0; i < l->ui_steps; i++)
		skipped += l->ui_skipped[i];
	char first[32], last[32];
	pow2_text(first, sizeof first, l->ui_steps ? l->ui_scale[0] : 0.0);
	pow2_text(last, sizeof last, l->ui_steps ? l->ui_scale[l->ui_steps - 1] : 0.0);
	used += (size_t)snprintf(trace, sizeof trace, "dynamic scaler: S %s -> %s over %zu steps, %zu skipped", first,
	                         last, l->ui_steps, skipped);
	for (size_t i = 0, shown = 0; i < l->ui_steps && used + 8 < sizeof trace && shown < 8; i++)
		if (l->ui_skipped[i]) {
			used += (size_t)snprintf(trace + used, sizeof trace - used, "%s%zu", shown ? "," : " (steps ", i + 1);
			shown++;
		}
	if (skipped && used + 2 < sizeof trace)
		snprintf(trace + used, sizeof trace - used, ")");
	tui_put(w, 3, 1, cols - 2, ROLE_DIM, trace);
	/* the histogram with fp16's limits at this S (in gradient units: limit / S) */
	int lo = l->lo < -30 - l->log2s ? l->lo : -30 - l->log2s;
	int hi = l->hi > 17 - l->log2s ? l->hi : 17 - l->log2s;
	lo = lo < KMIN ? KMIN : lo;
	hi = hi > KMAX ? KMAX : hi;
	plot_series series = { .name = "share of nonzero gradients", .x = l->kx + (l->lo - KMIN),
		               .y = l->share + (l->lo - KMIN), .n = (size_t)(l->hi - l->lo + 1),
		               .draw = PLOT_DRAW_COLUMNS };
	double min_sub = fmt_min_subnormal(h), min_norm = fmt_min_normal(h), max = fmt_max(h);
	plot_marker marks[3] = {
		{ .vertical = true, .at = log2(min_sub / S), .label = "min sub" },
		{ .vertical = true, .at = log2(min_norm / S), .label = "min normal" },
		{ .vertical = true, .at = log2(max / S), .label = "max" },
	};
	plot_figure fig;
	plot_figure_init(&fig);
	fig.title = "|gradient| by power of two, fp16 limits / S";
	fig.xlabel = "log2 |g|";
	fig.series = &series;
	fig.nseries = 1;
	fig.markers = marks;
	fig.nmarkers = 3;
	fig.fix_x = true;
	fig.xmin = lo;
	fig.xmax = hi + 1;
	fig.fix_y = true;
	fig.ymin = 0;
	fig.ymax = 0;
	for (int k = l->lo; k <= l->hi; k++)
		if (l->share[k - KMIN] > fig.ymax)
			fig.ymax = l->share[k - KMIN];
	if (!(fig.ymax > 0))
		fig.ymax = 1;
	/* the histogram and the trace: side by side when there is room, else
	 * the trace under the histogram in a third of the rows */
	int top = 5, avail = rows - top;
	if (cols >= 120) {
		int hw = cols * 3 / 5;
		plotview_draw(w, top, 0, avail, hw, &fig, &l->canvas);
		draw_trace(l, w, top, hw + 1, avail, cols - hw - 1);
	} else {
		int tr = avail / 3 > PLOT_MIN_ROWS + 1 ? avail / 3 : PLOT_MIN_ROWS + 1;
		plotview_draw(w, top, 0, avail - tr, cols, &fig, &l->canvas);
		draw_trace(l, w, top + avail - tr, 0, tr, cols);
	}
}

static int scale_handle(tui_screen *s, int action, int key)
{
	(void)key;
	scale_lab *l = s->priv;
	switch (action) {
	case SC_UP:
		if (l->log2s < 40)
			l->log2s++;
		return TUI_HANDLED;
	case SC_DOWN:
		if (l->log2s > -40)
			l->log2s--;
		return TUI_HANDLED;
	case SC_ONE: l->log2s = 0; return TUI_HANDLED;
	case SC_RUN: start(s); return TUI_HANDLED;
	case SC_DERIVE:
		tui_exercise_open(s, "7.4b");
		return TUI_HANDLED;
	case SC_INIT:
		l->init_log2 = l->init_log2 >= 24 ? 16 : l->init_log2 + 4;
		tui_message(s->app, false, "the next run (s) starts the dynamic scaler at S = 2^%d%s", l->init_log2,
		            l->init_log2 == 16 ? " (PyTorch's default)" : "");
		return TUI_HANDLED;
	case SC_SHAPE:
		l->tiny = !l->tiny;
		tui_message(s->app, false, "the next run (s) uses the %s shape", l->tiny ? "tiny" : "default");
		return TUI_HANDLED;
	}
	return TUI_PASS;
}

const tui_screen_ops screen_scale_ops = {
	.name = "scale",
	.lab_of = "gradhist",
	.title = "Loss-scaling lab",
	.private_size = sizeof(scale_lab),
	.keys = scale_keys,
	.nkeys = scale_ACTION_COUNT,
	.init = scale_init,
	.draw = scale_draw,
	.handle = scale_handle,
	.tick = scale_tick,
	.busy = scale_busy,
	.done = scale_done,
};
