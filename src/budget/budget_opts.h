/* The options of `mixprec budget`, parsed from an argv into data: the CLI's
 * command and the TUI's Memory budget lab read a command line through this
 * function only, so a lesson's block means the same in both. Nothing is
 * printed: a bad option, or a combination the estimate cannot take, gives
 * MP_EINVAL and a message naming it. */
#ifndef MIXPREC_BUDGET_BUDGET_OPTS_H
#define MIXPREC_BUDGET_BUDGET_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "budget/budget.h"
#include "budget/serve.h"
#include "util/status.h"

/* More GPUs than any cluster has: a typo, not a plan. */
#define BUDGET_GPUS_MAX (1 << 20)

/* Every option of `mixprec budget`; the strings point into the argv parsed. */
typedef struct {
	budget_config cfg;           /* budget_defaults() with the options applied, the shape resolved */
	const char *preset;          /* --preset's name; NULL when not given */
	const char *params_text;     /* --params as typed; NULL when not given */
	bool per_gpu;                /* --gpus, --zero, a layout option or the deepspeed convention: per-GPU columns */
	bool csv;                    /* --csv */
	bool help;                   /* -h, --help: nothing else is checked */
	/* --serve: the serving estimate instead of training's; serve_cfg's
	 * model from the preset or shape, context and batch from --context and
	 * --batch (the preset's context, 1) */
	bool serve;
	serve_config serve_cfg;
} budget_opts;

/* Parses `mixprec budget`'s argv (argv[0] the command) into *o, every
 * option and the checks that need several (a whole shape, the deepspeed
 * convention's own). MP_EINVAL with the message in err. */
mp_status budget_opts_parse(int argc, char **argv, budget_opts *o, char *err, size_t errlen);

#endif
