/* Training lab: the tiny GPT under chosen policies (src/train, as `mixprec
 * train`), trained in a worker thread that publishes each step's record under
 * a mutex; the screen copies them and draws live plots and a table. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/gpt2.h"
#include "ckpt/infer.h"
#include "fmt/numarg.h"
#include "train/data.h"
#include "train/policy.h"
#include "gpu/gpu.h"
#include "train/train.h"
#include "train/train_opts.h"
#include "train/shape.h"
#include "train/train_csv.h"
#include "tui/plotview.h"
#include "tui/screens.h"
#include "tui/screen_train_fp8.h"
#include "tui/screen_train_table.h"
#include "tui/worker.h"
#include "util/file.h"
#include "util/csvout.h"

void openblas_set_num_threads(int num_threads);

#define TRAIN_KEYS(X)                                                                          \
	X(TR_UP, "k Up", "previous policy", 'k', FK(KEY_UP))                                    \
	X(TR_DOWN, "j Down", "next policy", 'j', FK(KEY_DOWN))                                  \
	X(TR_TOGGLE, "Space", "choose / drop the policy under the cursor", ' ')                 \
	X(TR_START, "s", "start training the chosen policies (restarts)", 's')                  \
	X(TR_PAUSE, "p", "pause / resume", 'p')                                                 \
	X(TR_STOP, "x", "stop", 'x')                                                            \
	X(TR_METRIC, "m Tab", "plot: loss, resid_lost_frac, lost_update_frac, grad noise", 'm', '\t') \
	X(TR_PANELS, "l", "plot: one panel per policy side by side, or all in one", 'l')          \
	X(TR_FP8, "v", "fp8 view: scales, overflow and underflow per policy", 'v')                 \
	X(TR_SHAPE, "z", "model: tiny (seconds), default, or the lesson's options", 'z')   \
	X(TR_DEVICE, "g", "train on the GPU (CUDA) or the CPU", 'g')                             \
	X(TR_STEPS, "n", "edit the number of steps", 'n')                                       \
	X(TR_PATH, "f", "edit the CSV file name", 'f')                                          \
	X(TR_EXPORT, "e", "export every step so far as CSV (the train --csv columns)", 'e')           \
	X(TR_SAVE, "w", "save each run's model (safetensors, named after the CSV)", 'w')           \
	X(TR_INIT, "i", "edit the model the next run starts from (empty: fresh)", 'i')      \
	X(TR_SAMPLE, "t", "Sample: text from each run's model as it is now", 't')
TUI_KEYMAP(train, TRAIN_KEYS);

enum { MAXPOL = 16, METRIC_COUNT = 4, MAX_STEPS = 100000 };
/* The layout at 80x24 and up: the policies in POL_COLS columns of POL_COLW
 * cells ("[x] " and a name of up to 15: four rows for 15 presets); below
 * the table and the Sample panel, which take what they need, the plot keeps
 * at least PLOT_MIN_ROWS (at 80x24 beside two policies it has 9: 7 of data). */
enum { POL_COLS = 4, POL_COLW = 20 };
/* grad_noise_ratio: a policy that casts no gradient (NaN) draws no points */
static const char *const metric_names[METRIC_COUNT] = { "loss", "resid_lost_frac", "lost_update_frac",
	                                                "grad_noise_ratio" };

typedef struct {
	/* shared with the worker, under work.mu; work.cv wakes a paused worker */
	tui_worker work;
	bool paused;
	size_t done_steps;
	char phase[96];
	char err[256];
	train_stats *hist;          /* (steps, np) */
	fp8v_policy fp8[MAXPOL];    /* (np) each policy's fp8 scaling after its last step */
	bool snap_req;              /* the UI asks for a copy of every run's weights */
	float *snap;                /* (np, P) the copy, handed over to the UI (at the end too) */
	size_t snap_step;
	/* set before the worker starts, then read-only */
	train_config cfg;
	train_policy pols[MAXPOL];
	size_t np, steps;
	char data_path[256];
	/* the UI's */
	bool chosen[MAXPOL];        /* by preset index */
	int cursor;
	int metric;
	bool panels;                /* the plot: a panel per policy, not all in one */
	bool show_fp8;              /* the fp8 view in place of the table and the plot */
	bool tiny;
	bool gpu;           /* the next run trains on the GPU */
	bool have_args;     /* opened with a command's options (a lesson's block) */
	train_opts args;    /* ... which the run takes exactly, unless z picks the tiny shape */
	char args_data[256];  /* --data; "" for the default corpus */
	char args_text[512];  /* the options as given, for the screen */
	tui_field steps_f, path_f, init_f;
	int editing;                /* 0, 'n', 'f' or 'i' */
	float *init_w;              /* the weights init_f names, for the run (cfg.init_weights) */
	float *ui_snap;             /* (np, P) the last copy of the weights taken over from the worker */
	size_t ui_snap_step;
	int pending;                /* 'w' or 't' waiting for a copy */
	char sample[MAXPOL][100];   /* the Sample panel: each run's text */
	size_t sample_step;
	train_stats *ui_hist;
	fp8v_policy ui_fp8[MAXPOL];
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

/* Copies every run's weights (trainer_sync: from the GPU too) for the UI. */
static void snapshot(train_lab *t, trainer *const *tr, size_t done)
{
	size_t P = trainer_model(tr[0])->num_params;
	float *buf = malloc(t->np * P * sizeof *buf);
	for (size_t i = 0; buf && i < t->np; i++)
		if (trainer_sync(tr[i]) == MP_OK)
			memcpy(buf + i * P, trainer_model(tr[i])->params_memory, P * sizeof *buf);
	pthread_mutex_lock(&t->work.mu);
	free(t->snap);
	t->snap = buf;
	t->snap_step = done;
	t->snap_req = false;
	pthread_mutex_unlock(&t->work.mu);
}

static void *worker(void *arg)
{
	train_lab *t = arg;
	corpus data;
	char err[256];
	trainer *tr[MAXPOL] = { 0 };
	fp8v_policy fp8_next[MAXPOL];
	memset(fp8_next, 0, sizeof fp8_next);
	set_phase(t, "loading the corpus");
	mp_status st = corpus_load(&data, t->data_path, t->cfg.t, err, sizeof err);
	bool have_data = st == MP_OK;
	set_phase(t, "setting up the trainers");
	for (size_t i = 0; i < t->np && st == MP_OK; i++) {
		char why[200];
		st = trainer_create(&tr[i], &t->cfg, &t->pols[i], &data, why, sizeof why);
		if (st != MP_OK)
			snprintf(err, sizeof err, "policy %s: %s", t->pols[i].name, why);
	}
	if (st == MP_OK)
		set_phase(t, "training");
	for (size_t step = 0; st == MP_OK && step < t->steps; step++) {
		for (size_t i = 0; i < t->np && st == MP_OK; i++) {
			train_stats s;
			st = trainer_step(tr[i], &s);
			if (st != MP_OK) {
				snprintf(err, sizeof err, "policy %s, step %zu: %.180s", t->pols[i].name, step,
				         trainer_error(tr[i]));
				break;
			}
			/* the fp8 view into the worker's own copy, published with the
			 * step's last policy: the UI never sees policies a step apart */
			if (fp8v_capture(&fp8_next[i], trainer_fp8(tr[i])) != MP_OK) {
				st = MP_ENOMEM;
				snprintf(err, sizeof err, "policy %s, step %zu: out of memory for the fp8 view",
				         t->pols[i].name, step);
			}
			pthread_mutex_lock(&t->work.mu);
			t->hist[step * t->np + i] = s;
			if (i + 1 == t->np) {
				for (size_t j = 0; j < t->np && st == MP_OK; j++)
					if (fp8v_copy(&t->fp8[j], &fp8_next[j]) != MP_OK) {
						st = MP_ENOMEM;
						snprintf(err, sizeof err, "step %zu: out of memory for the fp8 view", step);
					}
				t->done_steps = step + 1;
			}
			pthread_mutex_unlock(&t->work.mu);
		}
		pthread_mutex_lock(&t->work.mu);
		for (;;) {
			if (t->snap_req && !t->work.stop) {
				pthread_mutex_unlock(&t->work.mu);
				snapshot(t, tr, step + 1);
				pthread_mutex_lock(&t->work.mu);
			}
			if (!t->paused || t->work.stop)
				break;
			pthread_cond_wait(&t->work.cv, &t->work.mu);
		}
		bool stop = t->work.stop;
		pthread_mutex_unlock(&t->work.mu);
		if (stop)
			break;
	}
	if (st == MP_OK && tr[0])
		snapshot(t, tr, t->done_steps);   /* what w and t use once the run is over */
	for (size_t i = 0; i < t->np; i++) {
		if (tr[i])
			trainer_free(tr[i]);
		fp8v_clear(&fp8_next[i]);
	}
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
	free(t->snap);
	free(t->ui_snap);
	free(t->init_w);
	t->snap = t->ui_snap = t->init_w = NULL;
	t->pending = 0;
	t->sample_step = 0;
	free(t->hist);
	free(t->ui_hist);
	free(t->px);
	free(t->py);
	t->hist = t->ui_hist = NULL;
	t->px = t->py = NULL;
	for (size_t i = 0; i < MAXPOL; i++) {
		fp8v_clear(&t->fp8[i]);
		fp8v_clear(&t->ui_fp8[i]);
	}
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

/* The saved model init_f names, for the next run; false (reported) when it
 * cannot be read or its shape is not the run's. */
static bool load_init(tui_screen *s)
{
	train_lab *t = s->priv;
	char err[4200];
	ckpt_model m;
	mp_status st = ckpt_open(&m, t->init_f.text, err, sizeof err);
	if (st == MP_OK && ckpt_check_shape(&m, t->cfg.model, err, sizeof err) != MP_OK)
		st = MP_EINVAL;
	if (st == MP_OK) {
		t->init_w = malloc(m.num_params * sizeof *t->init_w);
		st = t->init_w ? ckpt_weights(&m, t->init_w) : MP_ENOMEM;
		if (st != MP_OK)
			snprintf(err, sizeof err, "out of memory");
	}
	ckpt_close(&m);
	if (st != MP_OK) {
		tui_message(s->app, true, "start from: %s", err);
		return false;
	}
	t->cfg.init_weights = t->init_w;
	return true;
}

static void start(tui_screen *s)
{
	train_lab *t = s->priv;
	tui_worker_stop(&t->work);
	unsigned long long steps = 0;
	char why[400];
	if (numarg_count("steps", t->steps_f.text, 1, MAX_STEPS, &steps, why, sizeof why) != MP_OK) {
		tui_message(s->app, true, "steps: '%s' is not a whole number in 1..%d", t->steps_f.text, MAX_STEPS);
		return;
	}
	t->np = 0;
	char list[512] = "";
	for (size_t i = 0; i < policy_preset_count() && t->np < MAXPOL; i++)
		if (t->chosen[i]) {
			t->pols[t->np++] = *policy_preset(i);
			size_t l = strlen(list);
			snprintf(list + l, sizeof list - l, "%s%s", l ? "," : "", policy_preset(i)->name);
		}
	if (!t->np) {
		tui_message(s->app, true, "choose at least one policy (Space)");
		return;
	}
	/* the command's policy changes, applied as train applies them */
	char err[1024];
	if (t->have_args && !t->tiny && train_opts_resolve(&t->args, list, t->pols, MAXPOL, &t->np, err, sizeof err)
	    != MP_OK) {
		tui_message(s->app, true, "%s", err);
		return;
	}
	char corpus_path[4096];
	snprintf(t->data_path, sizeof t->data_path, "%s",
	         t->have_args && t->args_data[0] ? t->args_data : corpus_default_path(corpus_path, sizeof corpus_path));
	free_run(t);
	t->steps = (size_t)steps;
	t->cfg = shape_config(t, t->tiny);
	t->cfg.device = t->gpu ? TRAIN_DEVICE_CUDA : TRAIN_DEVICE_CPU;
	t->cfg.grad_noise = true;   /* the grad_noise_ratio plot (m) */
	if (t->init_f.text[0] && !load_init(s))
		return;
	for (size_t i = 0; i < t->np; i++) {   /* what trainer_create would refuse, said before it runs */
		if (policy_check(&t->pols[i], &t->cfg, err, sizeof err) != MP_OK) {
			tui_message(s->app, true, "%s", err);
			return;
		}
	}
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

/* argv[1..argc-1] joined by spaces into buf. */
static void join_args(char *buf, size_t n, int argc, char **argv)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 1; i < argc; i++) {
		int k = snprintf(buf + used, n - used, "%s%s", used ? " " : "", argv[i]);
		if (k < 0 || (size_t)k >= n - used)
			break;
		used += (size_t)k;
	}
}

/* The first option of `mixprec train` given that the lab has no use for
 * (it runs, plots and exports; saving and resuming are the command's), or
 * NULL. */
static const char *unrun_option(const train_opts *o)
{
	return o->resume ? "--resume" : o->stop_at ? "--stop-at" : o->save ? "--save" : o->save_every ? "--save-every"
	       : o->tensor_stats ? "--tensor-stats" : o->probe_nvfp4 ? "--probe" : NULL;
}

/* Chooses the presets the --policy list names; false when none is one
 * (each unknown name reported). */
static bool choose_policies(tui_screen *s, const char *policies)
{
	train_lab *t = s->priv;
	char list[512];
	bool given = false;
	snprintf(list, sizeof list, "%s", policies);
	char *save = NULL;
	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		bool found = false;
		for (size_t k = 0; k < policy_preset_count() && k < MAXPOL; k++)
			if (!strcmp(policy_preset(k)->name, tok))
				t->chosen[k] = found = given = true;
		if (!found)
			tui_message(s->app, true, "--policy: unknown policy '%s' (known: %s)", tok, policy_preset_names());
	}
	return given;
}

static mp_status train_init(tui_screen *s, int argc, char **argv)
{
	train_lab *t = s->priv;
	tui_worker_init(&t->work);
	plot_canvas_init(&t->canvas);
	t->tiny = true;
	field_set(&t->steps_f, "50");
	field_set(&t->path_f, "mixprec-train.csv");
	field_set(&t->init_f, "");
	bool given = false;
	char err[1024];
	if (argc > 1 && train_opts_parse(argc, argv, &t->args, err, sizeof err) != MP_OK) {
		tui_message(s->app, true, "%s; the lab's defaults instead", err);
	} else if (argc > 1) {
		/* the command's own run: its shape and options, its default steps */
		t->have_args = true;
		t->tiny = false;
		t->gpu = t->args.cfg.device == TRAIN_DEVICE_CUDA;
		char n[32];
		snprintf(n, sizeof n, "%zu", t->args.steps);
		field_set(&t->steps_f, n);
		if (t->args.csv)
			field_set(&t->path_f, t->args.csv);
		if (t->args.init)
			field_set(&t->init_f, t->args.init);
		snprintf(t->args_data, sizeof t->args_data, "%s", t->args.data ? t->args.data : "");
		join_args(t->args_text, sizeof t->args_text, argc, argv);
		const char *skipped = unrun_option(&t->args);
		if (skipped)
			tui_message(s->app, false, "%s: the lab does not run it; the rest as given", skipped);
		given = choose_policies(s, t->args.policies);
		/* argv is the caller's: what the lab keeps of it is copied above */
		t->args.policies = t->args.data = t->args.csv = t->args.tensor_stats = NULL;
		t->args.save = t->args.init = t->args.resume = NULL;
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

static size_t param_count(gpt_config c)
{
	size_t sizes[GPT_NUM_PARAM_TENSORS], P = 0;
	gpt_param_sizes(sizes, c);
	for (size_t i = 0; i < GPT_NUM_PARAM_TENSORS; i++)
		P += sizes[i];
	return P;
}

/* The file a run's model goes to: the CSV name with .safetensors for .csv
 * (or after it), and -POLICY before that with several runs. */
static bool model_path(const train_lab *t, size_t i, char *out, size_t n)
{
	char base[300];
	const char *csv = t->path_f.text;
	size_t len = strlen(csv);
	size_t stem = len >= 4 && !strcmp(csv + len - 4, ".csv") ? len - 4 : len;
	snprintf(base, sizeof base, "%.*s.safetensors", (int)stem, csv);
	if (t->np == 1)
		return snprintf(out, n, "%s", base) < (int)n;
	return ckpt_policy_path(out, n, base, t->pols[i].name);
}

static void save_models(tui_screen *s)
{
	train_lab *t = s->priv;
	char path[400], err[4200];
	size_t P = param_count(t->cfg.model);
	for (size_t i = 0; i < t->np; i++) {
		ckpt_info info = { .policy = t->pols[i].name, .step = t->ui_snap_step, .seed = t->cfg.seed,
		                   .dtype = ckpt_dtype_for_policy(&t->pols[i]) };
		if (!model_path(t, i, path, sizeof path) ||
		    ckpt_save(path, t->cfg.model, t->ui_snap + i * P, &info, err, sizeof err) != MP_OK ||
		    ckpt_write_config(path, t->cfg.model, ST_F32, err, sizeof err) != MP_OK) {
			tui_message(s->app, true, "save: %s", path[0] ? err : "the file name is too long");
			return;
		}
	}
	tui_message(s->app, false, "saved %zu model%s at step %zu: %s%s", t->np, t->np == 1 ? "" : "s",
	            t->ui_snap_step, path, t->np > 1 ? " and the others beside it" : "");
}

/* The Sample panel: each run's model continues "The " (temperature 0.8, seed 1). */
static void sample_models(tui_screen *s)
{
	train_lab *t = s->priv;
	size_t P = param_count(t->cfg.model);
	enum { N = sizeof t->sample[0] - 5 };
	for (size_t i = 0; i < t->np; i++) {
		gpt_model m;
		int prompt[4] = { 'T', 'h', 'e', ' ' }, out[N];
		infer_sample_opts o = { .tokens = N, .temperature = 0.8, .seed = 1 };
		snprintf(t->sample[i], sizeof t->sample[i], "The ");
		if (infer_init(&m, t->cfg.model, t->ui_snap + i * P, 1, t->cfg.model.T) != MP_OK) {
			tui_message(s->app, true, "sample: out of memory");
			return;
		}
		if (infer_sample(&m, prompt, 4, &o, out) == MP_OK)
			for (size_t k = 0; k < N; k++)
				t->sample[i][4 + k] = out[k] >= 32 && out[k] < 127 ? (char)out[k] : ' ';
		t->sample[i][4 + N] = '\0';
		gpt_free(&m);
	}
	t->sample_step = t->ui_snap_step;
}

static void use_snapshot(tui_screen *s, int what)
{
	if (what == 'w')
		save_models(s);
	else
		sample_models(s);
}

/* w and t: at once from the last copy when nothing runs, else after the
 * worker's next step. */
static void want_snapshot(tui_screen *s, int what)
{
	train_lab *t = s->priv;
	if (!t->ui_hist || (!t->work.joinable && !t->ui_snap)) {
		tui_message(s->app, true, "nothing trained yet: s starts training");
		return;
	}
	if (!t->work.joinable) {
		use_snapshot(s, what);
		return;
	}
	t->pending = what;
	pthread_mutex_lock(&t->work.mu);
	t->snap_req = true;
	pthread_cond_broadcast(&t->work.cv);   /* a paused worker takes the copy too */
	pthread_mutex_unlock(&t->work.mu);
}

static bool train_tick(tui_screen *s)
{
	train_lab *t = s->priv;
	pthread_mutex_lock(&t->work.mu);
	bool changed = t->ui_done != t->done_steps || t->ui_running != t->work.running || strcmp(t->ui_phase, t->phase);
	if (t->hist && t->done_steps > t->ui_done)
		memcpy(t->ui_hist + t->ui_done * t->np, t->hist + t->ui_done * t->np,
		       (t->done_steps - t->ui_done) * t->np * sizeof *t->hist);
	for (size_t i = 0; t->hist && changed && i < t->np; i++)
		if (fp8v_copy(&t->ui_fp8[i], &t->fp8[i]) != MP_OK)
			tui_message(s->app, true, "fp8 view: out of memory");
	t->ui_done = t->done_steps;
	t->ui_running = t->work.running;
	t->ui_paused = t->paused;
	memcpy(t->ui_phase, t->phase, sizeof t->phase);
	if (t->err[0]) {
		tui_message(s->app, true, "train: %s", t->err);
		t->err[0] = '\0';
	}
	bool fresh = t->snap != NULL;
	if (fresh) {
		free(t->ui_snap);
		t->ui_snap = t->snap;
		t->ui_snap_step = t->snap_step;
		t->snap = NULL;
	}
	pthread_mutex_unlock(&t->work.mu);
	if (!t->ui_running)
		tui_worker_join(&t->work);
	if ((fresh || !t->ui_running) && t->pending && t->ui_snap) {
		int what = t->pending;
		t->pending = 0;
		use_snapshot(s, what);
		changed = true;
	}
	return changed;
}

static bool train_busy(tui_screen *s)
{
	train_lab *t = s->priv;
	return tui_worker_running(&t->work);
}

static double metric_of(const train_stats *st, int m)
{
	return m == 0 ? st->loss : m == 1 ? st->resid_lost_frac : m == 2 ? st->lost_update_frac : st->grad_noise_ratio;
}

static void train_draw(tui_screen *s, WINDOW *w, int rows, int cols)
{
	train_lab *t = s->priv;
	/* the policies, POL_COLS columns */
	size_t npre = policy_preset_count() < MAXPOL ? policy_preset_count() : MAXPOL;
	int per_col = (int)(npre + POL_COLS - 1) / POL_COLS;
	for (size_t i = 0; i < npre; i++) {
		int y = (int)i % per_col, x = 1 + POL_COLW * ((int)i / per_col);
		bool cur = (int)i == t->cursor;
		char line[300];
		snprintf(line, sizeof line, "[%s] %s", t->chosen[i] ? "x" : " ", policy_preset(i)->name);
		tui_put_fit(w, y, x, POL_COLW - 1, cur ? ROLE_SELECT : t->chosen[i] ? ROLE_STRONG : ROLE_NORMAL, line);
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
	x = tui_put(w, y, 1, 12, ROLE_DIM, "start from ");
	if (t->editing == 'i')
		field_draw(w, y, 1 + x, cols - 2 - x, &t->init_f, true);
	else
		tui_putf(w, y, 1 + x, cols - 2 - x, t->init_f.text[0] ? ROLE_NORMAL : ROLE_DIM, "%s",
		         t->init_f.text[0] ? t->init_f.text : "fresh weights (i: a saved model)");
	y++;
	if (t->have_args && !t->tiny) {
		char line[600];
		snprintf(line, sizeof line, "from the lesson: mixprec train %s", t->args_text);
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
	const char *names[MAXPOL];
	for (size_t i = 0; i < t->np; i++)
		names[i] = t->pols[i].name;
	if (t->show_fp8 && (!t->ui_hist || !t->np))
		tui_put(w, y, 1, cols - 2, ROLE_DIM, "fp8 view: each policy's scales once a run starts (v: back)");
	else if (t->show_fp8)
		fp8v_draw(w, y, rows - y, cols, t->ui_fp8, names, t->np);
	if (t->show_fp8 || !t->ui_hist || !t->np)
		return;
	y += train_table_draw(w, y, rows - y - PLOT_MIN_ROWS, cols, t->ui_hist, t->ui_done, t->np, names);
	/* the Sample panel: what the loss numbers mean */
	bool sample = t->sample_step && y + 1 < rows - PLOT_MIN_ROWS;   /* the heading with a row under it */
	if (sample)
		tui_putf(w, y++, 1, cols - 2, ROLE_HEADING, "Sample at step %zu (t: again)", t->sample_step);
	for (size_t i = 0; sample && i < t->np && y < rows - PLOT_MIN_ROWS; i++, y++) {
		tui_put_fit(w, y, 1, 15, ROLE_NORMAL, t->pols[i].name);
		tui_put_fit(w, y, 17, cols - 18, ROLE_NORMAL, t->sample[i]);
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
	/* the title names the x axis too: no row for an x label */
	char title[64];
	snprintf(title, sizeof title, "%s by step", metric_names[t->metric]);
	fig.title = title;
	fig.series = series;
	fig.nseries = t->np;
	fig.fix_x = true;
	fig.xmin = 1;
	fig.xmax = (double)(t->steps > 1 ? t->steps : 2);
	if (t->panels) {
		fig.ylabel = metric_names[t->metric];
		train_panels_draw(w, y, rows - y, cols, &fig, names, &t->canvas);
	} else {
		plotview_draw(w, y, 0, rows - y, cols, &fig, &t->canvas);
	}
}

static void export_csv(tui_screen *s)
{
	train_lab *t = s->priv;
	if (!t->ui_done) {
		tui_message(s->app, true, "nothing to export yet: s starts training");
		return;
	}
	/* through a temporary file renamed over the target: a full disk or a
	 * failed write leaves an existing file as it was */
	file_atomic a;
	char err[512];
	if (file_atomic_open(&a, t->path_f.text, err, sizeof err) != MP_OK) {
		tui_message(s->app, true, "cannot write %s", err);
		return;
	}
	csvw w;
	csvw_init(&w, a.fp);
	train_csv_header(&w);
	for (size_t k = 0; k < t->ui_done; k++)
		for (size_t i = 0; i < t->np; i++)
			train_csv_row(&w, t->pols[i].name, &t->ui_hist[k * t->np + i]);
	if (!csvw_ok(&w)) {
		file_atomic_abort(&a);
		tui_message(s->app, true, "writing '%s' failed; an existing file is kept", t->path_f.text);
	} else if (file_atomic_commit(&a, err, sizeof err) != MP_OK) {
		tui_message(s->app, true, "writing %s; an existing file is kept", err);
	} else {
		tui_message(s->app, false, "wrote %zu steps x %zu policies to %s", t->ui_done, t->np, t->path_f.text);
	}
}

static int train_handle(tui_screen *s, int action, int key)
{
	train_lab *t = s->priv;
	if (t->editing) {
		int r = field_key(t->editing == 'n' ? &t->steps_f : t->editing == 'f' ? &t->path_f : &t->init_f, key);
		if (r == FIELD_ENTER || r == FIELD_CANCEL)
			t->editing = 0;
		return TUI_HANDLED;
	}
	size_t npre = policy_preset_count() < MAXPOL ? policy_preset_count() : MAXPOL;
	if (key == FK(KEY_MOUSE)) {
		const tui_mouse *m = tui_last_mouse(s->app);
		int per_col = (int)(npre + POL_COLS - 1) / POL_COLS;
		int i = m->x >= 1 ? (m->x - 1) / POL_COLW * per_col + m->y : -1;
		if (m->click && m->y >= 0 && m->y < per_col && m->x >= 1 && (m->x - 1) % POL_COLW < POL_COLW - 1 && i >= 0 &&
		    i < (int)npre) {
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
	case TR_PANELS: t->panels = !t->panels; return TUI_HANDLED;
	case TR_FP8: t->show_fp8 = !t->show_fp8; return TUI_HANDLED;
	case TR_DEVICE: {
		char why[384];
		if (!t->gpu && gpu_ready(NULL, why, sizeof why) != MP_OK) {
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
	case TR_SAVE: want_snapshot(s, 'w'); return TUI_HANDLED;
	case TR_SAMPLE: want_snapshot(s, 't'); return TUI_HANDLED;
	case TR_INIT:
		t->editing = 'i';
		field_begin(&t->init_f);
		return TUI_HANDLED;
	}
	return TUI_PASS;
}

static bool train_editing(tui_screen *s)
{
	return ((train_lab *)s->priv)->editing != 0;
}

const tui_screen_ops screen_train_ops = {
	.name = "train",
	.lab_of = "train",
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
