/* Drift lab: the residual-drift simulation of src/drift (as `mixprec drift`)
 * with editable parameters, run in a worker thread; the screen shows the
 * live trajectories of every variant and their retained fractions. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift/drift.h"
#include "drift/drift_opts.h"
#include "fmt/decode.h"
#include "fmt/numarg.h"
#include "fmt/parse.h"
#include "fmt/round.h"
#include "tui/plotview.h"
#include "tui/screens.h"
#include "tui/worker.h"
#include "util/numtext.h"

#define DRIFT_KEYS(X)                                                                    \
	X(DR_START, "s", "start (or restart) the simulation with these parameters", 's')  \
	X(DR_STOP, "x", "stop the simulation", 'x')                                        \
	X(DR_UP, "k Up", "previous parameter", 'k', FK(KEY_UP), FK(KEY_BTAB))             \
	X(DR_DOWN, "j Down Tab", "next parameter", 'j', FK(KEY_DOWN), '\t')                \
	X(DR_EDIT, "Enter", "edit the parameter (the distribution: next choice)", TUI_ENTER_KEYS) \
	X(DR_CYCLE, "h l Left Right", "previous / next distribution", 'h', 'l', FK(KEY_LEFT), FK(KEY_RIGHT))
TUI_KEYMAP(drift, DRIFT_KEYS);

enum { F_X0, F_STEPS, F_ELEMS, F_SEED, F_DIST, F_MEAN, F_STD, F_COUNT };
static const struct {
	const char *label, *opt;
	int row, col;
} fields[F_COUNT] = {
	[F_X0] = { .label = "x0", .opt = "--x0", .row = 0, .col = 1 },
	[F_STEPS] = { .label = "steps", .opt = "--steps", .row = 0, .col = 21 },
	[F_ELEMS] = { .label = "elements", .opt = "--elements", .row = 0, .col = 41 },
	[F_SEED] = { .label = "seed", .opt = "--seed", .row = 0, .col = 63 },
	[F_DIST] = { .label = "dist", .opt = "--dist", .row = 1, .col = 1 },
	[F_MEAN] = { .label = "mean", .opt = "--mean", .row = 1, .col = 21 },
	[F_STD] = { .label = "std", .opt = "--std", .row = 1, .col = 41 },
};

enum { MAX_SAMPLES = 257 };

/* The parameters as the lab last showed them, so that leaving the lab (Esc)
 * and coming back keeps them for the rest of the session. Only the UI thread
 * touches it. */
static struct {
	bool set;
	char text[F_COUNT][256];
	drift_dist dist;
} remembered;

typedef struct {
	/* shared with the worker, under work.mu */
	tui_worker work;
	size_t step, nsamples;
	drift_state state[DRIFT_VARIANT_COUNT];
	double sx[MAX_SAMPLES], sy[DRIFT_VARIANT_COUNT][MAX_SAMPLES];
	char err[128];
	/* the worker's own */
	drift_params run;
	/* the UI's */
	tui_field text[F_COUNT];
	drift_dist dist;
	int field;
	bool editing;
	size_t ui_n, ui_step, ui_total;
	bool ui_running, have_result;
	drift_state ui_state[DRIFT_VARIANT_COUNT];
	double ux[MAX_SAMPLES], uy[DRIFT_VARIANT_COUNT][MAX_SAMPLES];
	plot_canvas canvas;
} drift_lab;

static void *worker(void *arg)
{
	drift_lab *d = arg;
	drift_sim *sim;
	char err[100];
	mp_status st = drift_create(&sim, &d->run, err, sizeof err);
	if (st != MP_OK) {
		pthread_mutex_lock(&d->work.mu);
		snprintf(d->err, sizeof d->err, "cannot start: %s", err);
		d->work.running = false;
		pthread_mutex_unlock(&d->work.mu);
		return NULL;
	}
	size_t chunk = (d->run.steps + MAX_SAMPLES - 2) / (MAX_SAMPLES - 1);
	drift_state s[DRIFT_VARIANT_COUNT];
	for (;;) {
		drift_snapshot(sim, s);
		size_t done = drift_step_count(sim);
		pthread_mutex_lock(&d->work.mu);
		memcpy(d->state, s, sizeof s);
		d->step = done;
		if (d->nsamples < MAX_SAMPLES) {
			d->sx[d->nsamples] = (double)done;
			for (int v = 0; v < DRIFT_VARIANT_COUNT; v++)
				d->sy[v][d->nsamples] = s[v].drift;
			d->nsamples++;
		}
		bool stop = d->work.stop || done >= d->run.steps;
		pthread_mutex_unlock(&d->work.mu);
		if (stop)
			break;
		drift_advance(sim, chunk);
	}
	drift_free(sim);
	pthread_mutex_lock(&d->work.mu);
	d->work.running = false;
	pthread_mutex_unlock(&d->work.mu);
	return NULL;
}

/* A finite number in the full syntax, to the nearest binary64; for x0 also
 * each variant's start rounded exactly from the typed value, as the CLI does. */
static bool parse_real(tui_screen *s, int f, double *v, double *starts)
{
	drift_lab *d = s->priv;
	double scratch[DRIFT_VARIANT_COUNT];
	char err[300];
	if (drift_parse_start(d->text[f].text, v, starts ? starts : scratch, err, sizeof err) != MP_OK) {
		tui_message(s->app, true, "%s: %s", fields[f].label, err);
		return false;
	}
	return true;
}

static bool parse_count(tui_screen *s, int f, size_t *v, size_t max)
{
	drift_lab *d = s->priv;
	const char *t = d->text[f].text;
	unsigned long long x = 0;
	char err[400];
	if (numarg_u64(fields[f].label, t, &x, err, sizeof err) != MP_OK || x < (f == F_SEED ? 0u : 1u) || x > max) {
		tui_message(s->app, true, "%s: '%s' is not a whole number in 1..%zu", fields[f].label, t, max);
		return false;
	}
	*v = (size_t)x;
	return true;
}

/* Checks one field's text as start() will read it; false with a message. */
static bool field_valid(tui_screen *s, int f)
{
	double v;
	size_t n;
	switch (f) {
	case F_X0: {
		double starts[DRIFT_VARIANT_COUNT];
		return parse_real(s, F_X0, &v, starts);
	}
	case F_STEPS: return parse_count(s, f, &n, 100000000);
	case F_ELEMS: return parse_count(s, f, &n, 10000000);
	case F_SEED: return parse_count(s, f, &n, (size_t)-1);
	case F_MEAN:
	case F_STD: return parse_real(s, f, &v, NULL);
	default: return true;
	}
}

static void remember(const drift_lab *d)
{
	for (int f = 0; f < F_COUNT; f++)
		snprintf(remembered.text[f], sizeof remembered.text[f], "%s", d->text[f].text);
	remembered.dist = d->dist;
	remembered.set = true;
}

static void start(tui_screen *s)
{
	drift_lab *d = s->priv;
	tui_worker_stop(&d->work);
	drift_params p = drift_defaults();
	size_t seed;
	if (!parse_real(s, F_X0, &p.x0, p.starts) || !parse_count(s, F_STEPS, &p.steps, 100000000) ||
	    !parse_count(s, F_ELEMS, &p.elements, 10000000) || !parse_count(s, F_SEED, &seed, (size_t)-1) ||
	    !parse_real(s, F_MEAN, &p.mean, NULL) || !parse_real(s, F_STD, &p.std, NULL))
		return;
	p.have_starts = true;
	p.seed = seed;
	p.dist = d->dist;
	d->run = p;
	d->nsamples = 0;
	d->step = 0;
	d->err[0] = '\0';
	d->ui_n = 0;
	d->ui_total = p.steps;
	d->have_result = false;
	if (!tui_worker_start(&d->work, worker, d))
		tui_message(s->app, true, "cannot start a worker thread");
}

/* v as the shorter of %.17g (600, not 6e+02) and the shortest text that
 * reads back as v (1e-05, not 1.0000000000000001e-05). */
static const char *value_text(char *buf, size_t n, double v)
{
	char s[64];
	numtext_short(s, sizeof s, v);
	snprintf(buf, n, "%.17g", v);
	if (strlen(s) < strlen(buf))
		snprintf(buf, n, "%s", s);
	return buf;
}

/* The fields from p; x0 as typed when x0_text is not NULL (its exact value,
 * not binary64's, rounds into each variant). */
static void set_fields(drift_lab *d, const drift_params *p, const char *x0_text)
{
	char t[64];
	field_set(&d->text[F_X0], x0_text ? x0_text : value_text(t, sizeof t, p->x0));
	snprintf(t, sizeof t, "%zu", p->steps);
	field_set(&d->text[F_STEPS], t);
	snprintf(t, sizeof t, "%zu", p->elements);
	field_set(&d->text[F_ELEMS], t);
	snprintf(t, sizeof t, "%llu", (unsigned long long)p->seed);
	field_set(&d->text[F_SEED], t);
	field_set(&d->text[F_MEAN], value_text(t, sizeof t, p->mean));
	field_set(&d->text[F_STD], value_text(t, sizeof t, p->std));
	d->dist = p->dist;
}

/* A command line (`drift ...`, from a lesson's block) read by the CLI's
 * parser into the fields, then run; a bad one leaves the fields as they
 * were, with the reason on the status line. */
static void fill_from_command(tui_screen *s, int argc, char **argv)
{
	drift_lab *d = s->priv;
	drift_opts o;
	char err[512];
	if (drift_opts_parse(argc, argv, &o, err, sizeof err) != MP_OK) {
		tui_message(s->app, true, "%s; the lab's defaults instead", err);
		return;
	}
	if (o.ema) {
		tui_message(s->app, false, "--ema: the lab does not run it (try: mixprec drift --ema ...)");
		return;
	}
	set_fields(d, &o.p, o.x0_text);
	const char *skipped = o.help ? "--help" : o.sweep ? "--sweep" : o.csv_path ? "--csv"
	                      : o.p.device == DRIFT_DEVICE_CUDA ? "--device" : NULL;
	if (skipped)
		tui_message(s->app, false, "%s: the lab does not run it; the rest as given", skipped);
	start(s);
}

static mp_status drift_init(tui_screen *s, int argc, char **argv)
{
	drift_lab *d = s->priv;
	tui_worker_init(&d->work);
	plot_canvas_init(&d->canvas);
	drift_params p = drift_defaults();
	set_fields(d, &p, NULL);
	if (remembered.set && argc <= 1) {
		for (int f = 0; f < F_COUNT; f++)
			if (f != F_DIST)
				field_set(&d->text[f], remembered.text[f]);
		d->dist = remembered.dist;
	}
	if (argc > 1)
		fill_from_command(s, argc, argv);
	return MP_OK;
}

static void drift_done(tui_screen *s)
{
	drift_lab *d = s->priv;
	tui_worker_destroy(&d->work);
	remember(d);
	plot_canvas_free(&d->canvas);
}

static bool drift_tick(tui_screen *s)
{
	drift_lab *d = s->priv;
	pthread_mutex_lock(&d->work.mu);
	bool changed = d->ui_n != d->nsamples || d->ui_running != d->work.running;
	for (size_t i = d->ui_n; i < d->nsamples; i++) {
		d->ux[i] = d->sx[i];
		for (int v = 0; v < DRIFT_VARIANT_COUNT; v++)
			d->uy[v][i] = d->sy[v][i];
	}
	d->ui_n = d->nsamples;
	memcpy(d->ui_state, d->state, sizeof d->state);
	d->ui_step = d->step;
	d->ui_running = d->work.running;
	if (d->nsamples)
		d->have_result = true;
	if (d->err[0]) {
		tui_message(s->app, true, "drift: %s", d->err);
		d->err[0] = '\0';
	}
	pthread_mutex_unlock(&d->work.mu);
	if (!d->ui_running)
		tui_worker_join(&d->work);
	return changed;
}

static bool drift_busy(tui_screen *s)
{
	drift_lab *d = s->priv;
	return tui_worker_running(&d->work);
}

static void fmt_cell(char *buf, size_t n, double v, const char *f)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, f, v);
}

static void drift_draw(tui_screen *s, WINDOW *w, int rows, int cols)
{
	drift_lab *d = s->priv;
	for (int f = 0; f < F_COUNT; f++) {
		bool cur = f == d->field;
		int x = fields[f].col, y = fields[f].row;
		x += tui_put(w, y, x, 10, cur ? ROLE_STRONG : ROLE_DIM, fields[f].label);
		x++;
		if (cur && d->editing) {
			field_draw(w, y, x, 12, &d->text[f], true);
		} else {
			char v[80];
			snprintf(v, sizeof v, f == F_DIST ? "<%s>" : "[%s]", f == F_DIST ? drift_dist_name(d->dist) : d->text[f].text);
			tui_put(w, y, x, 14, cur ? ROLE_SELECT : ROLE_NORMAL, v);
		}
	}
	if (d->ui_running)
		tui_putf(w, 2, 1, cols - 2, ROLE_EMPH, "running: step %zu of %zu   (x stops)", d->ui_step, d->ui_total);
	else if (d->have_result)
		tui_putf(w, 2, 1, cols - 2, ROLE_GOOD, "%s after %zu of %zu steps   (s runs again)",
		         d->ui_step >= d->ui_total ? "done" : "stopped", d->ui_step, d->ui_total);
	else
		tui_put(w, 2, 1, cols - 2, ROLE_DIM, "s starts the simulation");
	if (!d->have_result)
		return;
	tui_putf(w, 3, 1, cols - 2, ROLE_HEADING, "%-12s %12s %12s %12s %9s %10s", "variant", "start", "mean", "drift",
	         "retained", "unchanged");
	for (int v = 0; v < DRIFT_VARIANT_COUNT; v++) {
		const drift_state *st = &d->ui_state[v];
		char a[32], b[32], c[32], r[32], u[32];
		fmt_cell(a, sizeof a, st->start, "%.6g");
		fmt_cell(b, sizeof b, st->mean, "%.6g");
		fmt_cell(c, sizeof c, st->drift, "%.6g");
		fmt_cell(r, sizeof r, st->retained, "%.4f");
		fmt_cell(u, sizeof u, st->unchanged_frac, "%.4f");
		tui_put(w, 4 + v, 1, 1, theme_series(v), theme_utf8() ? theme_glyph(GLYPH_BLOCK) : "*");
		tui_putf(w, 4 + v, 3, cols - 4, ROLE_NORMAL, "%-10s %12s %12s %12s %9s %10s", drift_variant_name(v), a, b,
		         c, r, u);
	}
	/* the trajectories: drift (mean - start) against the step */
	plot_series series[DRIFT_VARIANT_COUNT];
	for (int v = 0; v < DRIFT_VARIANT_COUNT; v++)
		series[v] = (plot_series){ .name = drift_variant_name(v), .x = d->ux, .y = d->uy[v], .n = d->ui_n,
			                   .draw = PLOT_DRAW_LINE };
	plot_figure fig;
	plot_figure_init(&fig);
	fig.title = "drift = mean - start";
	fig.xlabel = "step";
	fig.series = series;
	fig.nseries = DRIFT_VARIANT_COUNT;
	fig.fix_x = true;
	fig.xmin = 0;
	fig.xmax = (double)(d->ui_total ? d->ui_total : 1);
	plotview_draw(w, 11, 0, rows - 11, cols, &fig, &d->canvas);
}

static int drift_handle(tui_screen *s, int action, int key)
{
	drift_lab *d = s->priv;
	if (d->editing) {
		int r = field_key(&d->text[d->field], key);
		/* a value is checked as it is entered: a bad one stays in the
		 * field, being edited, with the reason on the status line */
		if (r == FIELD_ENTER && field_valid(s, d->field))
			d->editing = false;
		else if (r == FIELD_CANCEL)
			d->editing = false;
		return TUI_HANDLED;
	}
	switch (action) {
	case DR_START: start(s); return TUI_HANDLED;
	case DR_STOP:
		if (d->work.joinable)
			tui_worker_stop(&d->work);
		else
			tui_message(s->app, false, "nothing is running");
		drift_tick(s);
		return TUI_HANDLED;
	case DR_UP: d->field = (d->field + F_COUNT - 1) % F_COUNT; return TUI_HANDLED;
	case DR_DOWN: d->field = (d->field + 1) % F_COUNT; return TUI_HANDLED;
	case DR_EDIT:
		if (d->field == F_DIST) {
			d->dist = (drift_dist)((d->dist + 1) % 3);
		} else {
			d->editing = true;
			field_begin(&d->text[d->field]);
		}
		return TUI_HANDLED;
	case DR_CYCLE:
		if (d->field != F_DIST)
			return TUI_PASS;
		d->dist = (drift_dist)((d->dist + (key == 'h' || key == FK(KEY_LEFT) ? 2 : 1)) % 3);
		return TUI_HANDLED;
	}
	return TUI_PASS;
}

static bool drift_editing(tui_screen *s)
{
	return ((drift_lab *)s->priv)->editing;
}

const tui_screen_ops screen_drift_ops = {
	.name = "drift",
	.lab_of = "drift",
	.title = "Drift lab",
	.private_size = sizeof(drift_lab),
	.keys = drift_keys,
	.nkeys = drift_ACTION_COUNT,
	.init = drift_init,
	.draw = drift_draw,
	.handle = drift_handle,
	.editing = drift_editing,
	.tick = drift_tick,
	.busy = drift_busy,
	.done = drift_done,
};
