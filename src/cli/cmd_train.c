#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "gpu/gpu.h"
#include "gpu/gpu_train.h"
#include "fmt/decode.h"
#include "train/train.h"
#include "util/csvout.h"

void openblas_set_num_threads(int num_threads);

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void train_help(void)
{
	train_config d = train_config_default();
	char preset_lines[1024];
	cli_wrap_list(preset_lines, sizeof preset_lines, policy_preset_names(), 21, 80);
	printf("Usage: mixprec train [--policy P,...] [--steps N] [--csv FILE] [options]\n"
	       "Trains the tiny GPT (pre-LayerNorm, character level) on the CPU (or the GPU:\n"
	       "--device cuda) under one or more precision policies side by side, from the\n"
	       "same initial weights and on the same batches, and reports per step what\n"
	       "each policy loses.\n\n"
	       "  --policy P,...     presets (default fp32):\n%s"
	       "  --steps N          optimisation steps (default 200)\n"
	       "  --csv FILE         per-step CSV (FILE may be -): step,policy,loss,val_loss,\n"
	       "                     grad_norm,loss_scale,skipped,underflow_frac,\n"
	       "                     lost_update_frac,resid_lost_frac,ms\n"
	       "  --data FILE        training text (default: the bundled corpus); the last tenth\n"
	       "                     is held out\n"
	       "  --lr X             AdamW learning rate (default %g)\n"
	       "  --seed N           weights and batches (default %llu)\n"
	       "  --batch B, --context T, --layers L, --heads H, --channels C\n"
	       "                     shape (defaults %zu, %zu, %zu, %zu, %zu); budget's\n"
	       "                     names --micro-batch, --seq, --hidden are aliases\n"
	       "  --eval-every N     held-out loss every N steps (default %zu; 0 = never)\n"
	       "  --resid-offset V   add V to the residual stream after the embeddings\n"
	       "  --resid-offset-channels K   only to the first K channels (an outlier channel)\n"
	       "  --threads N        1 or 2: the two halves of each batch one after the other\n"
	       "                     or in parallel (default 2; same results either way)\n"
	       "  --device cpu|cuda  where to train (default cpu). cuda: the whole batch in one\n"
	       "                     pass on the GPU, cuBLAS products on the tensor cores in the\n"
	       "                     policy's GEMM format; exits 3, naming why, without a GPU\n"
	       "Change parts of every listed policy:\n"
	       "  --gemm F  --residual F[:rne|sr]  --weights fp32|F[:rne|sr|kahan]  --grads F\n"
	       "  --grad-accum F  --optim-state F  --loss-scale none|dynamic[:S]|static:S\n"
	       "  --reductions fp32|low|F   softmax, LayerNorm and cross-entropy sums in fp32\n"
	       "                     (default) or, to show the pitfall, in F (low: the GEMM\n"
	       "                     format)\n\n"
	       "Ctrl-C stops after the current step and keeps what was written.\n",
	       preset_lines, d.lr, (unsigned long long)d.seed, d.B, d.t, d.model.L, d.model.NH,
	       d.model.C, d.eval_every);
}

static bool parse_pos(const char *cmd, const char *opt, const char *text, size_t *v, size_t max)
{
	unsigned long long x;
	if (!cli_parse_u64(cmd, opt, text, &x))
		return false;
	if (x < 1 || x > max) {
		cli_error(cmd, "%s: %llu is out of range (1..%zu)", opt, x, max);
		return false;
	}
	*v = (size_t)x;
	return true;
}

static bool parse_real(const char *cmd, const char *opt, const char *text, double *v)
{
	return cli_parse_real(cmd, opt, text, -DBL_MAX, false, DBL_MAX, v);
}

/* --loss-scale static:S and dynamic:S (S its first value), with S in the
 * full number syntax, as "static:S" with S exact (into buf) and S for a
 * dynamic scaler in *init. */
static bool loss_scale_option(const char *cmd, const char *text, char *buf, size_t n, double *init)
{
	bool dyn = !strncmp(text, "dynamic:", 8);
	if (!dyn && strncmp(text, "static:", 7))
		return snprintf(buf, n, "%s", text) > 0;
	double s;
	if (!cli_parse_real(cmd, dyn ? "--loss-scale dynamic:S" : "--loss-scale static:S", text + (dyn ? 8 : 7), 0,
	                    true, 1e30, &s))
		return false;
	if (dyn)
		*init = s;
	snprintf(buf, n, dyn ? "dynamic" : "static:%.17g", s);
	return true;
}

typedef struct {
	const char *key, *value;
} policy_change;

/* Options shared by train and gradhist. */
typedef struct {
	train_config cfg;
	const char *policies;
	const char *data;
	size_t steps;
	policy_change changes[16];
	size_t nchanges;
} train_setup;

enum {
	OPT_BATCH = 256, OPT_CONTEXT, OPT_LAYERS, OPT_HEADS, OPT_CHANNELS, OPT_EVAL, OPT_OFFSET,
	OPT_OFFSET_CH, OPT_THREADS, OPT_DEVICE, OPT_GEMM, OPT_RESID, OPT_WEIGHTS, OPT_GRADS, OPT_ACCUM,
	OPT_OPTIM, OPT_SCALE, OPT_REDUCE, OPT_LR, OPT_SEED, OPT_DATA, OPT_STEPS, OPT_POLICY, OPT_CSV, OPT_HSCALE,
};

#define COMMON_OPTIONS                                                       \
	{ "policy", required_argument, NULL, OPT_POLICY },                   \
	{ "steps", required_argument, NULL, OPT_STEPS },                     \
	{ "data", required_argument, NULL, OPT_DATA },                       \
	{ "lr", required_argument, NULL, OPT_LR },                           \
	{ "seed", required_argument, NULL, OPT_SEED },                       \
	{ "batch", required_argument, NULL, OPT_BATCH },                     \
	{ "context", required_argument, NULL, OPT_CONTEXT },                 \
	{ "layers", required_argument, NULL, OPT_LAYERS },                   \
	{ "heads", required_argument, NULL, OPT_HEADS },                     \
	{ "channels", required_argument, NULL, OPT_CHANNELS },               \
	{ "hidden", required_argument, NULL, OPT_CHANNELS },                 \
	{ "seq", required_argument, NULL, OPT_CONTEXT },                     \
	{ "micro-batch", required_argument, NULL, OPT_BATCH },               \
	{ "eval-every", required_argument, NULL, OPT_EVAL },                 \
	{ "resid-offset", required_argument, NULL, OPT_OFFSET },             \
	{ "resid-offset-channels", required_argument, NULL, OPT_OFFSET_CH }, \
	{ "threads", required_argument, NULL, OPT_THREADS },                 \
	{ "device", required_argument, NULL, OPT_DEVICE },                   \
	{ "gemm", required_argument, NULL, OPT_GEMM },                       \
	{ "residual", required_argument, NULL, OPT_RESID },                  \
	{ "weights", required_argument, NULL, OPT_WEIGHTS },                 \
	{ "grads", required_argument, NULL, OPT_GRADS },                     \
	{ "grad-accum", required_argument, NULL, OPT_ACCUM },                \
	{ "optim-state", required_argument, NULL, OPT_OPTIM },               \
	{ "loss-scale", required_argument, NULL, OPT_SCALE },                \
	{ "reductions", required_argument, NULL, OPT_REDUCE },               \
	{ "help", no_argument, NULL, 'h' }

/* Handles one common option; returns 1 handled, 0 not common, -1 error. */
static int common_option(const char *cmd, train_setup *su, int c)
{
	double d;
	size_t v;
	unsigned long long u;
	switch (c) {
	case OPT_POLICY: su->policies = optarg; return 1;
	case OPT_DATA: su->data = optarg; return 1;
	case OPT_STEPS: return parse_pos(cmd, "--steps", optarg, &su->steps, 100000000) ? 1 : -1;
	case OPT_LR:
		if (!parse_real(cmd, "--lr", optarg, &d))
			return -1;
		if (d <= 0) {
			cli_error(cmd, "--lr: must be a positive number (got %s)", optarg);
			return -1;
		}
		su->cfg.lr = d;
		return 1;
	case OPT_SEED:
		if (!cli_parse_u64(cmd, "--seed", optarg, &u))
			return -1;
		su->cfg.seed = u;
		return 1;
	case OPT_BATCH: return parse_pos(cmd, "--batch", optarg, &su->cfg.B, 4096) ? 1 : -1;
	case OPT_CONTEXT:
		if (!parse_pos(cmd, "--context", optarg, &v, 4096))
			return -1;
		su->cfg.t = su->cfg.model.T = v;
		return 1;
	case OPT_LAYERS: return parse_pos(cmd, "--layers", optarg, &su->cfg.model.L, 64) ? 1 : -1;
	case OPT_HEADS: return parse_pos(cmd, "--heads", optarg, &su->cfg.model.NH, 64) ? 1 : -1;
	case OPT_CHANNELS: return parse_pos(cmd, "--channels", optarg, &su->cfg.model.C, 4096) ? 1 : -1;
	case OPT_EVAL:
		if (!cli_parse_u64(cmd, "--eval-every", optarg, &u))
			return -1;
		su->cfg.eval_every = (size_t)u;
		return 1;
	case OPT_OFFSET:
		if (!parse_real(cmd, "--resid-offset", optarg, &d))
			return -1;
		su->cfg.resid_offset = (float)d;
		return 1;
	case OPT_OFFSET_CH:
		if (!parse_pos(cmd, "--resid-offset-channels", optarg, &v, 4096))
			return -1;
		su->cfg.resid_offset_channels = (int)v;
		return 1;
	case OPT_THREADS:
		if (!parse_pos(cmd, "--threads", optarg, &v, 2))
			return -1;
		su->cfg.threads = (int)v;
		return 1;
	case OPT_DEVICE:
		if (!strcmp(optarg, "cpu")) {
			su->cfg.device = TRAIN_DEVICE_CPU;
			return 1;
		}
		if (!strcmp(optarg, "cuda")) {
			const char *why;
			if (!gpu_ready(&why, NULL)) {
				cli_error(cmd, "--device cuda: %s", why);
				return -3;
			}
			su->cfg.device = TRAIN_DEVICE_CUDA;
			return 1;
		}
		cli_error(cmd, "--device: unknown device '%s' (known: cpu, cuda)", optarg);
		return -1;
	case OPT_GEMM: case OPT_RESID: case OPT_WEIGHTS: case OPT_GRADS: case OPT_ACCUM: case OPT_OPTIM:
	case OPT_SCALE: case OPT_REDUCE: {
		static const char *const keys[] = { [OPT_GEMM - OPT_GEMM] = "gemm", [OPT_RESID - OPT_GEMM] = "residual",
			[OPT_WEIGHTS - OPT_GEMM] = "weights", [OPT_GRADS - OPT_GEMM] = "grads",
			[OPT_ACCUM - OPT_GEMM] = "grad-accum", [OPT_OPTIM - OPT_GEMM] = "optim-state",
			[OPT_SCALE - OPT_GEMM] = "loss-scale", [OPT_REDUCE - OPT_GEMM] = "reductions" };
		if (su->nchanges == sizeof su->changes / sizeof su->changes[0]) {
			cli_error(cmd, "too many policy changes");
			return -1;
		}
		static char scales[16][40];
		const char *value = optarg;
		if (c == OPT_SCALE) {
			if (!loss_scale_option(cmd, optarg, scales[su->nchanges], sizeof scales[0], &su->cfg.init_scale))
				return -1;
			value = scales[su->nchanges];
		}
		su->changes[su->nchanges++] = (policy_change){ keys[c - OPT_GEMM], value };
		return 1;
	}
	default:
		return 0;
	}
}

/* What went wrong in a trainer call that returned st: the GPU's own
 * message when the device failed (cleared before each call), else the
 * status's text (a bad token, host memory, ...). */
static const char *why_failed(const train_setup *su, mp_status st)
{
	return su->cfg.device == TRAIN_DEVICE_CUDA && gpu_failed() ? gpu_last_error() : mp_status_message(st);
}

/* The GPU kernels keep a head's row in a local array. */
static bool device_shape_ok(const char *cmd, const train_setup *su)
{
	size_t hs = su->cfg.model.C / su->cfg.model.NH;
	if (su->cfg.device == TRAIN_DEVICE_CUDA && hs > GPU_TRAIN_HEAD_MAX) {
		cli_error(cmd, "--device cuda: a head of %zu channels (--channels / --heads) exceeds the GPU kernels' %d",
		          hs, GPU_TRAIN_HEAD_MAX);
		return false;
	}
	return true;
}

/* Resolves the policy list with the changes applied. */
static bool build_policies(const char *cmd, const train_setup *su, train_policy *out, size_t max, size_t *n)
{
	char *copy = strdup(su->policies), *save = NULL;
	*n = 0;
	bool ok = copy != NULL;
	for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && ok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == max) {
			cli_error(cmd, "--policy: at most %zu policies", max);
			ok = false;
			break;
		}
		if (policy_from_name(tok, &out[*n]) != MP_OK) {
			cli_error(cmd, "--policy: unknown policy '%s' (known: %s)", tok, policy_preset_names());
			ok = false;
			break;
		}
		for (size_t k = 0; k < su->nchanges && ok; k++) {
			char err[256];
			if (policy_set(&out[*n], su->changes[k].key, su->changes[k].value, err, sizeof err) != MP_OK) {
				cli_error(cmd, "--%s: %s", su->changes[k].key, err);
				ok = false;
			}
		}
		(*n)++;
	}
	free(copy);
	if (ok && *n == 0) {
		cli_error(cmd, "--policy: no policy named");
		ok = false;
	}
	return ok;
}

/* Loads the corpus; on failure reports it and returns the exit status (2 for
 * a file that is unusable as text, 3 when it cannot be read), else CLI_OK. */
static int load_data(const char *cmd, const train_setup *su, corpus *c)
{
	char err[512];
	const char *path = su->data ? su->data : corpus_default_path();
	mp_status st = corpus_load(c, path, su->cfg.t, err, sizeof err);
	if (st != MP_OK) {
		cli_error(cmd, "--data: %s", st == MP_ENOMEM ? "out of memory" : err);
		return st == MP_EINVAL ? CLI_USAGE : CLI_ENV;
	}
	if (c->replaced)
		fprintf(stderr, "mixprec %s: note: %zu non-ASCII bytes of %s read as '?'\n", cmd, c->replaced, path);
	return CLI_OK;
}

static void csv_row(csvw *w, const char *policy, const train_stats *s)
{
	csvw_fieldf(w, "%zu", s->step);
	csvw_field(w, policy);
	csvw_fieldf(w, "%.6f", s->loss);
	if (isnan(s->val_loss))
		csvw_field(w, "");
	else
		csvw_fieldf(w, "%.6f", s->val_loss);
	csvw_fieldf(w, "%.6g", s->grad_norm);
	csvw_fieldf(w, "%.6g", s->loss_scale);
	csvw_field(w, s->skipped ? "1" : "0");
	csvw_fieldf(w, "%.6g", s->underflow_frac);
	csvw_fieldf(w, "%.6g", s->lost_update_frac);
	csvw_fieldf(w, "%.6g", s->resid_lost_frac);
	csvw_fieldf(w, "%.3f", s->ms);
	csvw_end_row(w);
}

static const char *status_text(mp_status st)
{
	return mp_status_message(st);
}

int cmd_train(int argc, char **argv)
{
	static const struct option opts[] = { COMMON_OPTIONS, { "csv", required_argument, NULL, OPT_CSV }, { 0 } };
	train_setup su = { .cfg = train_config_default(), .policies = "fp32", .steps = 200 };
	const char *csv_path = NULL;
	cli_args args = { 0 };
	char *value;
	int c;
	while ((c = cli_getopt(&args, argc, argv, opts, &value)) != -1) {
		if (c == 'h') {
			train_help();
			return cli_flush_stdout("train") ? CLI_OK : CLI_ENV;
		}
		if (c == OPT_CSV) {
			csv_path = optarg;
			continue;
		}
		if (c == CLI_ARG_VALUE) {
			cli_error("train", "unexpected argument '%s' (see 'mixprec train --help')", value);
			return CLI_USAGE;
		}
		int r = common_option("train", &su, c);
		if (r == -3)
			return CLI_ENV;
		if (r < 0)
			return CLI_USAGE;
		if (r == 0)
			return cli_option_error("train", c, argv);
	}
	if (su.cfg.model.C % su.cfg.model.NH) {
		cli_error("train", "--heads: %zu does not divide --channels %zu", su.cfg.model.NH, su.cfg.model.C);
		return CLI_USAGE;
	}
	train_policy pols[16];
	size_t np;
	if (!device_shape_ok("train", &su) || !build_policies("train", &su, pols, 16, &np))
		return CLI_USAGE;
	corpus data;
	int lrc = load_data("train", &su, &data);
	if (lrc != CLI_OK)
		return lrc;
	/* the trainer parallelises over batch halves; BLAS stays single-threaded */
	openblas_set_num_threads(1);

	trainer *tr[16] = { 0 };
	int rc = CLI_OK;
	for (size_t i = 0; i < np && rc == CLI_OK; i++) {
		gpu_clear_error();
		mp_status st = trainer_create(&tr[i], &su.cfg, &pols[i], &data);
		if (st != MP_OK && su.cfg.device == TRAIN_DEVICE_CUDA && st != MP_EINVAL) {
			cli_error("train", "--device cuda: cannot set up policy %s: %s", pols[i].name, why_failed(&su, st));
			rc = CLI_ENV;
		} else if (st != MP_OK) {
			cli_error("train", "cannot set up policy %s: %s", pols[i].name, status_text(st));
			rc = st == MP_ENOMEM ? CLI_ENV : CLI_USAGE;
		}
	}
	FILE *fp = NULL;
	file_atomic out;
	csvw w;
	if (rc == CLI_OK && csv_path) {
		if (!cli_out_open("train", "--csv", csv_path, &out, &fp)) {
			rc = CLI_ENV;
		} else {
			csvw_init(&w, fp);
			csvw_header(&w, "step,policy,loss,val_loss,grad_norm,loss_scale,skipped,underflow_frac,"
			                "lost_update_frac,resid_lost_frac,ms");
		}
	}
	struct sigaction sa = { .sa_handler = on_sigint }, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	bool progress = isatty(STDERR_FILENO);
	train_stats last[16], sum[16];
	memset(sum, 0, sizeof sum);
	double last_val[16];
	for (size_t i = 0; i < 16; i++)
		last_val[i] = NAN;
	size_t skipped[16] = { 0 }, done = 0;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t step = 0; rc == CLI_OK && step < su.steps && !interrupted; step++) {
		for (size_t i = 0; i < np && rc == CLI_OK; i++) {
			gpu_clear_error();
			mp_status st = trainer_step(tr[i], &last[i]);
			if (st != MP_OK) {
				cli_error("train", "policy %s, step %zu: %s", pols[i].name, step, why_failed(&su, st));
				rc = CLI_ENV;
				break;
			}
			sum[i].ms += last[i].ms;
			skipped[i] += last[i].skipped;
			if (!isnan(last[i].val_loss))
				last_val[i] = last[i].val_loss;
			if (fp) {
				csv_row(&w, pols[i].name, &last[i]);
				if (fflush(fp) != 0 || ferror(fp)) {
					cli_error("train", "--csv: writing '%s' failed: %s", csv_path, strerror(errno ? errno : EIO));
					rc = CLI_ENV;
					break;
				}
			}
		}
		done = step + 1;
		if (progress && rc == CLI_OK) {
			struct timespec t;
			clock_gettime(CLOCK_MONOTONIC, &t);
			double el = (double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec);
			fprintf(stderr, "\rtrain: step %zu/%zu, loss %.4f (%s), %.0f s left   ", done, su.steps,
			        last[0].loss, pols[0].name, el / (double)done * (double)(su.steps - done));
		}
	}
	if (progress)
		fprintf(stderr, "\r%70s\r", "");
	sigaction(SIGINT, &old, NULL);
	if (interrupted)
		cli_error("train", "interrupted after %zu steps; the CSV has every finished step", done);
	if (rc == CLI_OK && done > 0 && fp != stdout) {
		gpu_info gi = { .name = "" };
		if (su.cfg.device == TRAIN_DEVICE_CUDA)
			gpu_ready(NULL, &gi);
		printf("train: %zu steps%s%s, batch %zu x %zu, %zu layers, %zu heads, %zu channels, %zu parameters\n\n",
		       done, gi.name[0] ? " on " : "", gi.name, su.cfg.B, su.cfg.t, su.cfg.model.L, su.cfg.model.NH, su.cfg.model.C,
		       trainer_model(tr[0])->num_params);
		/* the policy column as wide as its longest name ("+gemm=fp16" and the like make long ones) */
		int pw = 18;
		for (size_t i = 0; i < np; i++)
			pw = strlen(pols[i].name) > (size_t)pw ? (int)strlen(pols[i].name) : pw;
		printf("%-*s %9s %9s %9s %8s %9s %9s %9s\n", pw, "policy", "loss", "val_loss", "ms/step", "skipped",
		       "underflow", "lost_upd", "resid_lost");
		for (size_t i = 0; i < np; i++) {
			char val[32] = "-";   /* no evaluation yet (see --eval-every) */
			if (!isnan(last_val[i]))
				snprintf(val, sizeof val, "%.4f", last_val[i]);
			printf("%-*s %9.4f %9s %9.1f %8zu %9.3g %9.3g %9.3g\n", pw, pols[i].name, last[i].loss, val,
			       sum[i].ms / (double)done, skipped[i], last[i].underflow_frac, last[i].lost_update_frac,
			       last[i].resid_lost_frac);
		}
		printf("\nmemory per policy (MB = 10^6 bytes; weights, gradients and Adam state at the width of\n"
		       "their formats; activations as allocated here):\n");
		printf("%-*s %8s %8s %8s %8s %8s %8s\n", pw, "policy", "master", "working", "grads", "accum", "adam",
		       "acts");
		for (size_t i = 0; i < np; i++) {
			train_memory m = trainer_memory(tr[i]);
			printf("%-*s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f\n", pw, pols[i].name, m.master_weights / 1e6,
			       m.working_weights / 1e6, m.gradients / 1e6, m.grad_accum / 1e6, m.optim_state / 1e6,
			       m.activations / 1e6);
		}
	}
	if (!cli_out_close("train", "--csv", &out, fp, rc == CLI_OK))
		rc = CLI_ENV;
	for (size_t i = 0; i < np; i++)
		trainer_free(tr[i]);
	corpus_free(&data);
	if (!cli_flush_stdout("train"))
		return CLI_ENV;
	return rc == CLI_OK && interrupted ? 130 : rc;
}

/* --- gradhist --- */

static void gradhist_help(void)
{
	printf("Usage: mixprec gradhist [--steps N] [--scale S] [--policy P] [--csv]\n"
	       "                        [train options]\n"
	       "Trains a few steps (default 20) and shows the magnitudes of the last step's\n"
	       "gradients as a histogram of powers of two, with fp16's and bf16's smallest\n"
	       "subnormal, smallest normal and largest values marked, and the share of\n"
	       "nonzero gradients that would underflow or overflow in fp16 after multiplying\n"
	       "the loss by S (default 1; try 1024 or 65536).\n\n"
	       "  --csv    CSV: log2_lo,log2_hi,count,share,fp16_at_scale\n"
	       "  train options: see 'mixprec train --help' (--policy default fp32)\n");
}

int cmd_gradhist(int argc, char **argv)
{
	static const struct option opts[] = { COMMON_OPTIONS, { "scale", required_argument, NULL, OPT_HSCALE },
		                              { "csv", no_argument, NULL, OPT_CSV }, { 0 } };
	train_setup su = { .cfg = train_config_default(), .policies = "fp32", .steps = 20 };
	su.cfg.eval_every = 0;
	double scale = 1;
	bool csv = false;
	cli_args args = { 0 };
	char *value;
	int c;
	while ((c = cli_getopt(&args, argc, argv, opts, &value)) != -1) {
		if (c == 'h') {
			gradhist_help();
			return cli_flush_stdout("gradhist") ? CLI_OK : CLI_ENV;
		}
		if (c == OPT_CSV) {
			csv = true;
			continue;
		}
		if (c == OPT_HSCALE) {
			if (!parse_real("gradhist", "--scale", optarg, &scale))
				return CLI_USAGE;
			if (scale <= 0) {
				cli_error("gradhist", "--scale: must be a positive number (got %s)", optarg);
				return CLI_USAGE;
			}
			continue;
		}
		if (c == CLI_ARG_VALUE) {
			cli_error("gradhist", "unexpected argument '%s'", value);
			return CLI_USAGE;
		}
		int r = common_option("gradhist", &su, c);
		if (r == -3)
			return CLI_ENV;
		if (r < 0)
			return CLI_USAGE;
		if (r == 0)
			return cli_option_error("gradhist", c, argv);
	}
	train_policy pol[1];
	size_t np;
	if (!device_shape_ok("gradhist", &su) || !build_policies("gradhist", &su, pol, 1, &np))
		return CLI_USAGE;
	corpus data;
	int lrc = load_data("gradhist", &su, &data);
	if (lrc != CLI_OK)
		return lrc;
	/* the trainer parallelises over batch halves; BLAS stays single-threaded */
	openblas_set_num_threads(1);
	trainer *tr;
	gpu_clear_error();
	mp_status st = trainer_create(&tr, &su.cfg, &pol[0], &data);
	if (st != MP_OK) {
		corpus_free(&data);
		cli_error("gradhist", "cannot set up: %s", why_failed(&su, st));
		return CLI_ENV;
	}
	train_stats s;
	for (size_t i = 0; i < su.steps && st == MP_OK; i++)
		st = trainer_step(tr, &s);
	if (st != MP_OK) {
		trainer_free(tr);
		corpus_free(&data);
		cli_error("gradhist", "training failed: %s", why_failed(&su, st));
		return CLI_ENV;
	}
	st = trainer_sync(tr);
	if (st != MP_OK) {
		trainer_free(tr);
		corpus_free(&data);
		cli_error("gradhist", "--device cuda: cannot read the gradients back: %s", why_failed(&su, st));
		return CLI_ENV;
	}
	size_t n;
	const float *g = trainer_raw_grads(tr, &n);
	double used_scale = s.loss_scale;   /* the raw gradients carry the policy's own scale */
	/* buckets [2^k, 2^(k+1)) for k in -160..40 */
	enum { KMIN = -160, KMAX = 40 };
	size_t count[KMAX - KMIN + 1] = { 0 }, nonzero = 0, zero = 0;
	const fmt_info *h = fmt_get(FMT_FP16);
	size_t under = 0, sub = 0, over = 0;
	for (size_t i = 0; i < n; i++) {
		double a = fabs((double)g[i]) / used_scale;
		if (a == 0) {
			zero++;
			continue;
		}
		nonzero++;
		int k = ilogb(a);
		k = k < KMIN ? KMIN : k > KMAX ? KMAX : k;
		count[k - KMIN]++;
		double as = a * scale;
		if (as <= fmt_min_subnormal(h) / 2)   /* half the smallest subnormal ties to 0 */
			under++;
		else if (as < fmt_min_normal(h))
			sub++;
		if (as > fmt_max(h))
			over++;
	}
	int lo = KMAX, hi = KMIN;
	for (int k = KMIN; k <= KMAX; k++) {
		if (count[k - KMIN]) {
			lo = k < lo ? k : lo;
			hi = k > hi ? k : hi;
		}
	}
	if (csv) {
		csvw w;
		csvw_init(&w, stdout);
		csvw_header(&w, "log2_lo,log2_hi,count,share,fp16_at_scale");
		for (int k = lo; k <= hi; k++) {
			double as = ldexp(1.0, k) * scale;
			/* a bucket [2^k, 2^(k+1)) is flushed when all of it is below half the
			 * smallest subnormal: its values above that round up to it */
			const char *region = as < fmt_min_subnormal(h) / 2 ? "flushed" : as < fmt_min_normal(h) ? "subnormal"
			                     : as > fmt_max(h) ? "overflow" : "normal";
			csvw_fieldf(&w, "%d", k);
			csvw_fieldf(&w, "%d", k + 1);
			csvw_fieldf(&w, "%zu", count[k - KMIN]);
			csvw_fieldf(&w, "%.6g", nonzero ? (double)count[k - KMIN] / (double)nonzero : 0.0);
			csvw_field(&w, region);
			csvw_end_row(&w);
		}
	} else {
		printf("gradhist: %s, gradients of step %zu, %zu parameters (%zu exactly zero)\n"
		       "loss scale S = %g; marks: fp16 min subnormal 2^-24, min normal 2^-14, max 65504;\n"
		       "bf16 min subnormal 2^-133, min normal 2^-126 (all gradients here are far above them)\n\n",
		       pol[0].name, su.steps, n, zero, scale);
		size_t peak = 1;
		for (int k = lo; k <= hi; k++)
			peak = count[k - KMIN] > peak ? count[k - KMIN] : peak;
		for (int k = lo; k <= hi; k++) {
			int bar = (int)(50.0 * (double)count[k - KMIN] / (double)peak + 0.5);
			double as = ldexp(1.0, k) * scale;
			const char *mark = as < fmt_min_subnormal(h) / 2 ? "  <- flushed to 0 in fp16"
			                   : as < fmt_min_normal(h) ? "  <- fp16 subnormal" : as > fmt_max(h) ? "  <- fp16 overflow" : "";
			printf("2^%-4d %9zu |%.*s%s\n", k, count[k - KMIN], bar,
			       "##################################################", mark);
		}
		printf("\nat S = %g in fp16: %.2f%% flush to zero, %.2f%% are subnormal (fewer bits), "
		       "%.2f%% overflow\n", scale, nonzero ? 100.0 * (double)under / (double)nonzero : 0.0,
		       nonzero ? 100.0 * (double)sub / (double)nonzero : 0.0,
		       nonzero ? 100.0 * (double)over / (double)nonzero : 0.0);
	}
	trainer_free(tr);
	corpus_free(&data);
	return cli_flush_stdout("gradhist") ? CLI_OK : CLI_ENV;
}
