/* The options train and gradhist share (shape, optimiser, schedule, policy
 * changes, data, device): parsing, the checks that need several of them,
 * and the setup both commands do with them. Each reports its own errors
 * (cli_error) naming the option. */
#ifndef MIXPREC_CLI_TRAIN_OPTS_H
#define MIXPREC_CLI_TRAIN_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "train/shape.h"
#include "train/train.h"

typedef struct {
	const char *key, *value;
} policy_change;

/* Options shared by train and gradhist. */
typedef struct {
	train_config cfg;
	const char *policies;
	const char *data;
	size_t steps;
	bool lr_min_set;
	double progress_every;     /* train: seconds between progress lines off a terminal */
	policy_change changes[16];
	size_t nchanges;
	unsigned shape_set;        /* TRAIN_SHAPE_SET_ bits of the shape options given: --preset keeps them */
} train_setup;

enum {
	OPT_BATCH = 256, OPT_CONTEXT, OPT_LAYERS, OPT_HEADS, OPT_CHANNELS, OPT_EVAL, OPT_OFFSET,
	OPT_OFFSET_CH, OPT_THREADS, OPT_DEVICE, OPT_GEMM, OPT_RESID, OPT_WEIGHTS, OPT_GRADS, OPT_ACCUM,
	OPT_OPTIM, OPT_SCALE, OPT_REDUCE, OPT_LR, OPT_SEED, OPT_DATA, OPT_STEPS, OPT_POLICY, OPT_CSV, OPT_HSCALE,
	OPT_SCHED, OPT_WARMUP, OPT_LRMIN, OPT_PROGRESS, OPT_BETA1, OPT_BETA2, OPT_OF, OPT_PRESET,
	OPT_ACCBITS, OPT_PROMOTE, OPT_FP8SCALING, OPT_FP8FMT, OPT_AMAXH, OPT_AMAXALGO, OPT_MARGIN,
	OPT_POW2, OPT_SRULE, OPT_BF16LAST, OPT_NORHT, OPT_NOSR, OPT_NO2D, OPT_BF16FROM, OPT_TSTATS,
	OPT_PROBE, OPT_PROBE_DRAWS, OPT_GRAD_NOISE,
};

#define COMMON_OPTIONS                                                       \
	{ "policy", required_argument, NULL, OPT_POLICY },                   \
	{ "steps", required_argument, NULL, OPT_STEPS },                     \
	{ "data", required_argument, NULL, OPT_DATA },                       \
	{ "lr", required_argument, NULL, OPT_LR },                           \
	{ "lr-schedule", required_argument, NULL, OPT_SCHED },               \
	{ "warmup", required_argument, NULL, OPT_WARMUP },                   \
	{ "lr-min", required_argument, NULL, OPT_LRMIN },                    \
	{ "beta1", required_argument, NULL, OPT_BETA1 },                     \
	{ "beta2", required_argument, NULL, OPT_BETA2 },                     \
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
	{ "preset", required_argument, NULL, OPT_PRESET },                   \
	{ "accum-bits", required_argument, NULL, OPT_ACCBITS },              \
	{ "promote-every", required_argument, NULL, OPT_PROMOTE },           \
	{ "fp8-scaling", required_argument, NULL, OPT_FP8SCALING },          \
	{ "fp8-format", required_argument, NULL, OPT_FP8FMT },               \
	{ "amax-history", required_argument, NULL, OPT_AMAXH },              \
	{ "amax-algo", required_argument, NULL, OPT_AMAXALGO },              \
	{ "fp8-margin", required_argument, NULL, OPT_MARGIN },               \
	{ "scale-pow2", required_argument, NULL, OPT_POW2 },                 \
	{ "scale-rule", required_argument, NULL, OPT_SRULE },                \
	{ "bf16-last", required_argument, NULL, OPT_BF16LAST },              \
	{ "no-rht", no_argument, NULL, OPT_NORHT },                          \
	{ "no-sr", no_argument, NULL, OPT_NOSR },                            \
	{ "no-2d", no_argument, NULL, OPT_NO2D },                            \
	{ "bf16-from", required_argument, NULL, OPT_BF16FROM },              \
	{ "help", no_argument, NULL, 'h' }

/* A finite number into *v; false (reported) otherwise. */
bool train_opts_real(const char *cmd, const char *opt, const char *text, double *v);

/* Handles one common option (optarg its value); returns 1 handled, 0 not
 * common, -1 error, -3 environment failure (--device cuda without a GPU). */
int train_opts_common(const char *cmd, train_setup *su, int c);

/* What went wrong in a trainer call that returned st (the GPU's own message
 * when the device failed). */
const char *train_opts_why_failed(const train_setup *su, mp_status st);

/* The GPU kernels' head-size limit, with --device cuda. */
bool train_opts_shape_ok(const char *cmd, const train_setup *su);

/* The options that only make sense together, once all are read; sets the
 * schedule's length from --steps. */
bool train_opts_agree(const char *cmd, train_setup *su);

/* The policy list with the changes applied, at most max, each checked
 * against the run (policy_check: its device, shape and offset). */
bool train_opts_policies(const char *cmd, const train_setup *su, train_policy *out, size_t max, size_t *n);

/* Loads the corpus; returns CLI_OK, or the exit status after reporting. */
int train_opts_load_data(const char *cmd, const train_setup *su, corpus *c);

#endif
