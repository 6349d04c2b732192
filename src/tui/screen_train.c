/* Training lab: the tiny GPT under chosen policies (src/train, as `mixprec
 * train`), trained in a worker thread that publishes each step's record under
 * a mutex; the screen copies them and draws live plots and a table. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/data.h"
#include "train/policy.h"
#include "gpu/gpu.h"
#include "train/train.h"
#include "train/shape.h"
#include "train/train_csv.h"
#include "tui/plotview.h"
#include "tui/screens.h"
#include "tui/worker.h"
#include "tui/train_args.h"
#include "util/csvout.h"

void openblas_set_num_threads(int num_threads);

#define TRAIN_KEYS(X)                                                                          \
	X(TR_UP, "k Up", "previous policy", 'k', FK(KEY_UP))                                    \
	X(TR_DOWN, "j Down", "next policy", 'j', FK(KEY_DOWN))                                  \
	X(TR_TOGGLE, "Space", "choose / drop the policy under the cursor", ' ')                 \
	X(TR_START, "s", "start training the chosen policies (restarts)", 's')                  \
	X(TR_PAUSE, "p", "pause / resume", 'p')                                                 \
	X(TR_STOP, "x", "stop", 'x')                                                            \
	X(TR_METRIC, "m Tab", "plot: loss, resid_lost_frac, lost_update_frac", 'm', '\t')       \
	X(TR_SHAPE, "z", "model: tiny (seconds), or the default or the lesson's options", 'z')   \
	X(TR_DEVICE, "g", "train on the GPU (CUDA) or the CPU", 'g')                             \
	X(TR_STEPS, "n", "edit the number of steps", 'n')                                       \
	X(TR_PATH, "f", "edit the CSV file name", 'f')                                          \
	X(TR_EXPORT, "e", "export every step so far as CSV (the train --csv columns)", 'e')
TUI_KEYMAP(train, TRAIN_KEYS);

enum { MAXPOL = 16, METRIC_COUNT = 3, MAX_STEPS = 100000 };
static const char *const metric_names[METRIC_COUNT] = { "loss", "resid_lost_frac", "lost_update_frac" };

typedef struct {
	/* shared with the worker, under work.mu; work.cv wakes a paused worker */
	tui_worker work;
	bool paused;
	size_t done_steps;
	char phase[96];
	char err[256];
	train_stats *hist;          /* (steps, np) */
	/* set before the worker starts, then read-only */
	train_config cfg;
	train_policy pols[MAXPOL];
	size_t np, steps;
	char data_path[256];
	/* the UI's */
	bool chosen[MAXPOL];        /* by preset index */
	int cursor;
	int metric;
	bool tiny;
	bool gpu;           /* the next run trains on the GPU */
	bool have_args;     /* opened with a command's options (a lesson's block) */
	train_args args;    /* ... which the run takes exactly, unless z picks the tiny shape */
	tui_field steps_f, path_f;
	int editing;                /* 0, 'n' or 'f' */
	train_stats *ui_hist;
	size_t ui_done;
	bool ui_running, ui_paused;
	char ui_phase[96];
	double *px, *py;            /* (steps) and (np, steps) for the plot */
	plot_canvas canvas;
} train_lab;

static void set_phase(train_lab *t, const char *text)
{
	pthread_mutex_lock(&t->work.mu);
	snprintf(t->phase, sizeof t->phase, "%s", text);
	pthread_mutex_unlock(&t->work.mu);
}

static void *worker(void *arg)
{
	train_lab *t = arg;
	corpus data;
	char err[256];
	trainer *tr[MAXPOL] = { 0 };
	set_phase(t, "loading the corpus");
	mp_status st = corpus_load(&data, t->data_path, t->cfg.t, err, sizeof err);
	bool have_data = st == MP_OK;
	set_phase(t, "setting up the trainers");
	for (size_t i = 0; i < t->np && st == MP_OK; i++) {
		gpu_clear_error();
		st = trainer_create(&tr[i], &t->cfg, &t->pols[i], &data);
		if (st != MP_OK)
			snprintf(err, sizeof err, "policy %s: %s", t->pols[i].name,
			         gpu_failed() ? gpu_last_error() : mp_status_message(st));
	}
	if (st == MP_OK)
		set_phase(t, "training");
	for (size_t step = 0; st == MP_OK && step < t->steps; step++) {
		for (size_t i = 0; i < t->np && st == MP_OK; i++) {
			train_stats s;
			st = trainer_step(tr[i], &s);
			if (st != MP_OK) {
				snprintf(err, sizeof err, "policy %s, step %zu: %s", t->pols[i].name, step,
				         gpu_failed() ? gpu_last_error() : mp_status_message(st));
				break;
			}
			pthread_mutex_lock(&t->work.mu);
			t->hist[step * t->np + i] = s;
			if (i + 1 == t->np)
				t->done_steps = step + 1;
			pthread_mutex_unlock(&t->work.mu);
		}
		pthread_mutex_lock(&t->work.mu);
		while (t->paused && !t->work.stop)
			pthread_cond_wait(&t->work.cv, &t->work.mu);
		bool stop = t->work.stop;
		pthread_mutex_unlock(&t->work.mu);
		if (stop)
			break;
	}
	for (size_t i = 0; i < t->np; i++)
		if (tr[i])
			trainer_free(tr[i]);
	if (have_data)
		corpus_free(&data);
	pthread_mutex_lock(&t->work.mu);
	if (st != MP_OK && !t->err[0])
		snprintf(t->err, sizeof t->err, "%s", err);
	t->work.running = false;
	pthread_mutex_unlock(&t->work.mu);
	return NULL;
}

static void free_run(train_lab *t)
{
	free(t->hist);
	free(t->ui_hist);
	free(t->px);
	free(t->py);
	t->hist = t->ui_hist = NULL;
	t->px = t->py = NULL;
}

/* The tiny shape (train/shape.c, train --preset tiny) trains a step in
 * milliseconds: enough to watch the curves.
 * Otherwise the default, or the options the lab was opened with. */
static train_config shape_config(const train_lab *t, bool tiny)
{
	train_config c = t->have_args ? t->args.cfg : train_config_default();
	if (tiny)
		train_shape_apply(train_shape_get(TRAIN_SHAPE_TINY), &c, 0);
	return c;
}

static void start(tui_screen *s)
{
	train_lab *t = s->priv;
	tui_worker_stop(&t->work);
	char *end;
	unsigned long long steps = strtoull(t->steps_f.text, &end, 10);
	if (*end || steps < 1 || steps > MAX_STEPS || !(t->steps_f.text[0] >= '0' && t->steps_f.text[0] <= '9')) {
		tui_message(s->app, true, "steps: '%s' is not a whole number in 1..%d", t->steps_f.text, MAX_STEPS);
		return;
	}
	t->np = 0;
	for (size_t i = 0; i < policy_preset_count() && t->np < MAXPOL; i++)
		if (t->chosen[i])
			t->pols[t->np++] = *policy_preset(i);
	if (!t->np) {
		tui_message(s->app, true, "choose at least one policy (Space)");
		return;
	}
	for (size_t i = 0; i < t->np && t->have_args && !t->tiny; i++) {
		char err[256];
		if (train_args_apply(&t->args, &t->pols[i], err, sizeof err) != MP_OK) {
			tui_message(s->app, true, "policy %s: %s", t->pols[i].name, err);
			return;
		}
	}
	snprintf(t->data_path, sizeof t->data_path, "%s",
	         t->have_args && t->args.data[0] ? t->args.data : corpus_default_path());
	free_run(t);
	t->steps = (size_t)steps;
	t->cfg = shape_config(t, t->tiny);
	t->cfg.device = t->gpu ? TRAIN_DEVICE_CUDA : TRAIN_DEVICE_CPU;
	t->hist = calloc(t->steps * t->np, sizeof *t->hist);
	t->ui_hist = calloc(t->steps * t->np, sizeof *t->ui_hist);
	t->px = calloc(t->steps, sizeof *t->px);
	t->py = calloc(t->steps * t->np, sizeof *t->py);
	if (!t->hist || !t->ui_hist || !t->px || !t->py) {
		free_run(t);
		tui_message(s->app, true, "out of memory for %llu steps", steps);
		return;
	}
	t->paused = false;
	t->done_steps = t->ui_done = 0;
	t->err[0] = '\0';
	snprintf(t->phase, sizeof t->phase, "starting");
	/* the trainer runs the two batch halves on two threads; BLAS stays single-threaded */
	openblas_set_num_threads(1);
	if (!tui_worker_start(&t->work, worker, t))
		tui_message(s->app, true, "cannot start a worker thread");
}

static mp_status train_init(tui_screen *s, int argc, char **argv)
{
	train_lab *t = s->priv;
	tui_worker_init(&t->work);
	plot_canvas_init(&t->canvas);
	t->tiny = true;
	field_set(&t->steps_f, "50");
	field_set(&t->path_f, "mixprec-train.csv");
	bool given = false;
	char err[256];
	if (argc > 1 && train_args_parse(&t->args, argc, argv, err, sizeof err) != MP_OK) {
		tui_message(s->app, true, "%s; the lab's defaults instead", err);
	} else if (argc > 1) {
		/* the command's own run: its shape and options, its default steps */
		t->have_args = true;
		t->tiny = false;
		t->gpu = t->args.cfg.device == TRAIN_DEVICE_CUDA;
		char n[32];
		snprintf(n, sizeof n, "%zu", t->args.steps);
		field_set(&t->steps_f, n);
		if (t->args.csv[0])
			field_set(&t->path_f, t->args.csv);
		char list[512];
		snprintf(list, sizeof list, "%s", t->args.policies);
		char *save = NULL;
		for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			bool found = false;
			for (size_t k = 0; k < policy_preset_count() && k < MAXPOL; k++)
				if (!strcmp(policy_preset(k)->name, tok))
					t->chosen[k] = found = given = true;
			if (!found)
				tui_message(s->app, true, "--policy: unknown policy '%s' (known: %s)", tok,
				            policy_preset_names());
		}
	}
	if (!given)
		t->chosen[0] = true;
	return MP_OK;
}

static void train_done(tui_screen *s)
{
	train_lab *t = s->priv;
	tui_worker_destroy(&t->work);
	free_run(t);
	plot_canvas_free(&t->canvas);
}

static bool train_tick(tui_screen *s)
{
	train_lab *t = s->priv;
	pthread_mutex_lock(&t->work.mu);
	bool changed = t->ui_done != t->done_steps || t->ui_running != t->work.running || strcmp(t->ui_phase, t->phase);
	if (t->hist && t->done_steps > t->ui_done)
		memcpy(t->ui_hist + t->ui_done * t->np, t->hist + t->ui_done * t->np,
		       (t->done_steps - t->ui_done) * t->np * sizeof *t->hist);
	t->ui_done = t->done_steps;
	t->ui_running = t->work.running;
	t->ui_paused = t->paused;
	memcpy(t->ui_phase, t->phase, sizeof t->phase);
	if (t->err[0]) {
		tui_message(s->app, true, "train: %s", t->err);
		t->err[0] = '\0';
	}
	pthread_mutex_unlock(&t->work.mu);
	if (!t->ui_running)
		tui_worker_join(&t->work);
	return changed;
}

static bool train_busy(tui_screen *s)
{
	train_lab *t = s->priv;
	return tui_worker_running(&t->work);
}

static double metric_of(const train_stats *st, int m)
{
	return m == 0 ? st->loss : m == 1 ? st->resid_lost_frac : st->lost_update_frac;
}

static void train_draw(tui_screen *s, WINDOW *w, int rows, int cols)
{
	train_lab *t = s->priv;
	/* the policies, three columns */
	size_t npre = policy_preset_count() < MAXPOL ? policy_preset_count() : MAXPOL;
	int per_col = (int)(npre + 2) / 3;
	for (size_t i = 0; i < npre; i++) {
		int y = (int)i % per_col, x = 1 + 26 * ((int)i / per_col);
		bool cur = (int)i == t->cursor;
		char line[300];
		snprintf(line, sizeof line, "[%s] %s", t->chosen[i] ? "x" : " ", policy_preset(i)->name);
		tui_put(w, y, x, 25, cur ? ROLE_SELECT : t->chosen[i] ? ROLE_STRONG : ROLE_NORMAL, line);
	}
	int y = per_col;
	train_config c = shape_config(t, t->tiny);
	int x = tui_put(w, y, 1, 6, ROLE_DIM, "steps ");
	if (t->editing == 'n')
		field_draw(w, y, 1 + x, 8, &t->steps_f, true);
	else
		tui_putf(w, y, 1 + x, 8, ROLE_NORMAL, "[%s]", t->steps_f.text);
	x = tui_put(w, y, 17, 4, ROLE_DIM, "csv ");
	if (t->editing == 'f')
		field_draw(w, y, 17 + x, cols - 18 - x, &t->path_f, true);
	else
		tui_putf(w, y, 17 + x, cols - 18 - x, ROLE_NORMAL, "%s", t->path_f.text);
	y++;
	/* the model the next run trains, on a line of its own */
	const char *what = t->tiny ? "tiny" : t->have_args ? "the lesson's options" : "default";
	tui_putf(w, y++, 1, cols - 2, ROLE_DIM, "%s %s: %zu layer%s, %zu ch, %zu heads, batch %zux%zu, lr %g",
	         t->gpu ? "GPU" : "CPU", what, c.model.L, c.model.L == 1 ? "" : "s", c.model.C, c.model.NH, c.B, c.t,
	         c.lr);
	if (t->have_args && !t->tiny) {
		char line[600];
		snprintf(line, sizeof line, "from the lesson: mixprec train %s", t->args.text);
		y += tui_wrap(w, y, 1, cols - 2, 4, ROLE_EMPH, line);   /* a lesson's block in full */
	}
	if (t->ui_running)
		tui_putf(w, y, 1, cols - 2, ROLE_EMPH, "%s: step %zu of %zu%s", t->ui_phase, t->ui_done, t->steps,
		         t->ui_paused ? "  PAUSED (p resumes)" : "  (p pauses, x stops)");
	else if (t->ui_done)
		tui_putf(w, y, 1, cols - 2, ROLE_GOOD, "%s after %zu of %zu steps  (e exports CSV, s runs again)",
		         t->ui_done == t->steps ? "done" : "stopped", t->ui_done, t->steps);
	else
		tui_put(w, y, 1, cols - 2, ROLE_DIM, "Space chooses policies, s starts");
	y++;
	if (!t->ui_hist || !t->np)
		return;
	tui_putf(w, y++, 1, cols - 2, ROLE_HEADING, "%-15s %6s %8s %8s %8s %7s %9s %10s", "policy", "step", "loss",
	         "ms/step", "scale", "skipped", "lost_upd", "resid_lost");
	for (size_t i = 0; i < t->np && y < rows - PLOT_MIN_ROWS; i++, y++) {
		tui_put(w, y, 0, 1, theme_series((int)i), theme_utf8() ? theme_glyph(GLYPH_BLOCK) : "*");
		if (!t->ui_done) {
			tui_putf(w, y, 1, cols - 2, ROLE_NORMAL, "%-15.15s %6s", t->pols[i].name, "-");
			continue;
		}
		const train_stats *last = &t->ui_hist[(t->ui_done - 1) * t->np + i];
		double ms = 0;
		size_t skipped = 0;
		for (size_t k = 0; k < t->ui_done; k++) {
			ms += t->ui_hist[k * t->np + i].ms;
			skipped += t->ui_hist[k * t->np + i].skipped;
		}
		tui_putf(w, y, 1, cols - 2, ROLE_NORMAL, "%-15.15s %6zu %8.4f %8.1f %8.6g %7zu %9.3g %10.3g", t->pols[i].name,
		         last->step + 1, last->loss, ms / (double)t->ui_done, last->loss_scale, skipped,
		         last->lost_update_frac, last->resid_lost_frac);
	}
	/* the live plot of the chosen metric */
	plot_series series[MAXPOL];
	for (size_t k = 0; k < t->ui_done; k++)
		t->px[k] = (double)(k + 1);
	for (size_t i = 0; i < t->np; i++) {
		double *py = t->py + i * t->steps;
		for (size_t k = 0; k < t->ui_done; k++)
			py[k] = metric_of(&t->ui_hist[k * t->np + i], t->metric);
		series[i] = (plot_series){ .name = t->pols[i].name, .x = t->px, .y = py, .n = t->ui_done,
			                   .draw = PLOT_DRAW_LINE };
	}
	plot_figure fig;
	plot_figure_init(&fig);
	fig.title = metric_names[t->metric];
	fig.xlabel = "step";
	fig.series = series;
	fig.nseries = t->np;
	fig.fix_x = true;
	fig.xmin = 1;
	fig.xmax = (double)(t->steps > 1 ? t->steps : 2);
	plotview_draw(w, y, 0, rows - y, cols, &fig, &t->canvas);
}

static void export_csv(tui_screen *s)
{
	train_lab *t = s->priv;
	if (!t->ui_done) {
		tui_message(s->app, true, "nothing to export yet: s starts training");
		return;
	}
	FILE *fp = fopen(t->path_f.text, "w");
	if (!fp) {
		tui_message(s->app, true, "cannot write '%s': %s", t->path_f.text, strerror(errno));
		return;
	}
	csvw w;
	csvw_init(&w, fp);
	train_csv_header(&w);
	for (size_t k = 0; k < t->ui_done; k++)
		for (size_t i = 0; i < t->np; i++)
			train_csv_row(&w, t->pols[i].name, &t->ui_hist[k * t->np + i]);
	bool ok = csvw_ok(&w);
	ok = fclose(fp) == 0 && ok;
	if (ok)
		tui_message(s->app, false, "wrote %zu steps x %zu policies to %s", t->ui_done, t->np, t->path_f.text);
	else
		tui_message(s->app, true, "writing '%s' failed", t->path_f.text);
}

static int train_handle(tui_screen *s, int action, int key)
{
	train_lab *t = s->priv;
	if (t->editing) {
		int r = field_key(t->editing == 'n' ? &t->steps_f : &t->path_f, key);
		if (r == FIELD_ENTER || r == FIELD_CANCEL)
			t->editing = 0;
		return TUI_HANDLED;
	}
	size_t npre = policy_preset_count() < MAXPOL ? policy_preset_count() : MAXPOL;
	if (key == FK(KEY_MOUSE)) {
		const tui_mouse *m = tui_last_mouse(s->app);
		int per_col = (int)(npre + 2) / 3;
		int i = m->x >= 1 ? (m->x - 1) / 26 * per_col + m->y : -1;
		if (m->click && m->y >= 0 && m->y < per_col && m->x >= 1 && (m->x - 1) % 26 < 25 && i >= 0 && i < (int)npre) {
			t->cursor = i;
			t->chosen[i] = !t->chosen[i];
		}
		return TUI_HANDLED;
	}
	switch (action) {
	case TR_UP: t->cursor = (t->cursor + (int)npre - 1) % (int)npre; return TUI_HANDLED;
	case TR_DOWN: t->cursor = (t->cursor + 1) % (int)npre; return TUI_HANDLED;
	case TR_TOGGLE: t->chosen[t->cursor] = !t->chosen[t->cursor]; return TUI_HANDLED;
	case TR_START: start(s); return TUI_HANDLED;
	case TR_PAUSE:
		if (!t->work.joinable) {
			tui_message(s->app, false, "nothing is running");
			return TUI_HANDLED;
		}
		pthread_mutex_lock(&t->work.mu);
		t->paused = !t->paused;
		pthread_cond_broadcast(&t->work.cv);
		pthread_mutex_unlock(&t->work.mu);
		train_tick(s);
		return TUI_HANDLED;
	case TR_STOP:
		tui_worker_stop(&t->work);
		train_tick(s);
		return TUI_HANDLED;
	case TR_METRIC: t->metric = (t->metric + 1) % METRIC_COUNT; return TUI_HANDLED;
	case TR_DEVICE: {
		const char *why;
		if (!t->gpu && !gpu_ready(&why, NULL)) {
			tui_message(s->app, true, "no GPU to train on: %s", why);
			return TUI_HANDLED;
		}
		t->gpu = !t->gpu;
		tui_message(s->app, false, "the next run trains on the %s (s starts it)", t->gpu ? "GPU" : "CPU");
		return TUI_HANDLED;
	}
	case TR_SHAPE:
		t->tiny = !t->tiny;
		tui_message(s->app, false, "the next run uses %s (s starts it)",
		            t->tiny ? "the tiny shape" : t->have_args ? "the lesson's options" : "the default shape");
		return TUI_HANDLED;
	case TR_STEPS:
	case TR_PATH:
		t->editing = action == TR_STEPS ? 'n' : 'f';
		field_begin(action == TR_STEPS ? &t->steps_f : &t->path_f);
		return TUI_HANDLED;
	case TR_EXPORT: export_csv(s); return TUI_HANDLED;
	}
	return TUI_PASS;
}

static bool train_editing(tui_screen *s)
{
	return ((train_lab *)s->priv)->editing != 0;
}

const tui_screen_ops screen_train_ops = {
	.name = "train",
	.title = "Training lab",
	.private_size = sizeof(train_lab),
	.keys = train_keys,
	.nkeys = train_ACTION_COUNT,
	.init = train_init,
	.draw = train_draw,
	.handle = train_handle,
	.editing = train_editing,
	.tick = train_tick,
	.busy = train_busy,
	.done = train_done,
};
