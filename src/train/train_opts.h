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
#include "train/run_state.h"
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
	/* what was given, for a resume (train_opts_resume) */
	unsigned long long given;    /* a bit per option given (train/train_opts_impl.h) */
	const char *preset;          /* --preset NAME; NULL when not given */
	char saved_policies[4200];   /* a resume's policy list, which policies then points to */
	char saved_data[4096];       /* a resume's --data, which data then points to */
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

/* A resume: *o, parsed from a command line with --resume, completed from
 * the run state rs of the first file of the saved run (path, for the
 * messages). Every option the run's numbers depend on (the shape, the
 * policies and the options that change them, the optimiser, the schedule,
 * --seed, --eval-every, --resid-offset, --device, --data) that the command
 * line leaves out is taken from rs, through the same checks as on the
 * command line; one that was given must agree with it (MP_EINVAL, naming
 * the option, its value and the saved one). A cosine schedule's length is
 * the saved run's, and --steps, when given, must be it. A run state that
 * does not say which text it trained on (files written before that was
 * recorded) leaves --data as given, with a line in note saying so (note
 * empty otherwise). A missing key names the option to give. */
mp_status train_opts_resume(train_opts *o, const run_state *rs, const char *path, char *note, size_t notelen,
                            char *err, size_t errlen);

/* The metadata keys under which --save records the run's policy list
 * (names as policy_parse reads them, comma-separated) and its --data
 * (absent: the bundled corpus). */
#define TRAIN_OPTS_META_POLICIES "state.run.policies"
#define TRAIN_OPTS_META_DATA "state.run.data"

/* The policies of list (comma-separated policy_parse names), at most max,
 * each with o's changes applied (--fp8-scaling first; a change for a part a
 * policy's recipe has not is skipped, and an error when no policy has it).
 * MP_EINVAL with the message, naming the option, in err. */
mp_status train_opts_resolve(const train_opts *o, const char *list, train_policy *out, size_t max, size_t *n,
                             char *err, size_t errlen);

#endif
