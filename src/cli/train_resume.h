/* train --resume FILE: continues a run saved by --save (or --save-every)
 * bit for bit, from the run state in the checkpoint (ckpt/ckpt_state.h).
 * --steps stays the run's total: a run saved after k steps resumes at
 * step k and stops at --steps. Every option the numbers depend on is the
 * saved run's, read from the file (train_opts_resume). Several policies:
 * FILE-POLICY.safetensors for each, as --save names them. */
#ifndef MIXPREC_CLI_TRAIN_RESUME_H
#define MIXPREC_CLI_TRAIN_RESUME_H

#include <stddef.h>

#include "cli/train_ckpt.h"
#include "cli/train_opts.h"
#include "train/run_state.h"
#include "train/train.h"

typedef struct {
	const char *file;          /* --resume FILE, or NULL */
	run_state *states;         /* one per policy, read by train_resume_prepare */
	char (*paths)[4096];
	size_t np;
	size_t start;              /* steps the saved run did: the first step to run */
	size_t stop_at;            /* --stop-at N: end after step N of the run (0: at --steps) */
	size_t end;                /* the step this invocation stops before, after prepare */
} train_resume;

/* With --resume: the options the saved run fixes, completed from (or
 * checked against) the file --resume names, or for a run of several
 * policies the first of its FILE-POLICY.safetensors. CLI_OK, or the exit
 * status after reporting. */
int train_resume_options(train_opts *su);

/* Once the policies are known: reads each policy's file and its run state,
 * checks the shape, the policy, the steps against --steps and --stop-at,
 * and --init's absence; sets start and end. Returns CLI_OK or the exit
 * status after reporting. */
int train_resume_prepare(train_resume *r, const train_opts *su, const train_ckpt *k, const train_policy *pols,
                         size_t np);

/* Sets every trainer to its saved state. CLI_OK, or CLI_USAGE after
 * naming what disagrees with the options. */
int train_resume_apply(train_resume *r, trainer *const *tr, const train_policy *pols);

void train_resume_free(train_resume *r);

extern const char train_resume_help[];

#endif
