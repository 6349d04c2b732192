/* The options of `mixprec train` and `mixprec gradhist` (shape, optimiser,
 * schedule, policy changes, data, device, and each command's own), parsed
 * from an argv into data: the CLI's commands and the TUI's Training and
 * Loss-scale labs read a command line through these functions only, so a
 * lesson's block means the same in both. Nothing is printed: a bad option
 * gives MP_EINVAL and a message naming it. Whether a device is usable, the
 * corpus and the checkpoint files are the caller's. */
#ifndef MIXPREC_TRAIN_TRAIN_OPTS_H
#define MIXPREC_TRAIN_TRAIN_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "train/policy.h"
#include "train/train.h"
#include "util/status.h"

enum { TRAIN_OPTS_CHANGES = 16 };

/* A policy change an option asks for: policy_set's key and value. */
typedef struct {
	const char *key;             /* a static string */
	char value[64];
} policy_change;

/* Every option of `mixprec train`; the strings point into the argv parsed. */
typedef struct {
	train_config cfg;            /* train_config_default() with the options applied */
	const char *policies;        /* --policy; "fp32" */
	const char *data;            /* --data; NULL for the default corpus */
	size_t steps;                /* --steps; 200 (gradhist 20) */
	bool lr_min_set;
	policy_change changes[TRAIN_OPTS_CHANGES];   /* --gemm, --no-rht, ...: applied in order given */
	size_t nchanges;
	unsigned shape_set;          /* TRAIN_SHAPE_SET_ bits of the shape options given: --preset keeps them */
	bool help;                   /* -h, --help: nothing else is checked */
	/* train's own */
	const char *csv, *tensor_stats;   /* NULL when not asked for */
	double progress_every;       /* seconds between progress lines off a terminal; 5 */
	bool probe_nvfp4;            /* --probe nvfp4 */
	size_t probe_draws;          /* --probe-draws; 64 */
	bool probe_draws_set;
	const char *save, *init, *resume;   /* --save, --init, --resume FILE; NULL when not given */
	size_t save_every;           /* --save-every; 0: only at the end */
	size_t stop_at;              /* --stop-at; 0: at --steps */
} train_opts;

/* gradhist's options: the run's and its own. */
typedef struct {
	train_opts run;
	double scale;                /* --scale; 1 */
	bool csv;                    /* --csv */
	bool activations;            /* --of activations */
} gradhist_opts;

/* Parses `mixprec train`'s argv (argv[0] the command) into *o, every
 * option and the checks that need several of them (--warmup against
 * --steps, --heads against --channels, ...); sets the schedule's length
 * from --steps. MP_EINVAL with the message in err. */
mp_status train_opts_parse(int argc, char **argv, train_opts *o, char *err, size_t errlen);

/* The same for `mixprec gradhist`. */
mp_status gradhist_opts_parse(int argc, char **argv, gradhist_opts *g, char *err, size_t errlen);

/* The policies of list (comma-separated policy_parse names), at most max,
 * each with o's changes applied (--fp8-scaling first; a change for a part a
 * policy's recipe has not is skipped, and an error when no policy has it).
 * MP_EINVAL with the message, naming the option, in err. */
mp_status train_opts_resolve(const train_opts *o, const char *list, train_policy *out, size_t max, size_t *n,
                             char *err, size_t errlen);

#endif
