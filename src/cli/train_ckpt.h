/* train's checkpoint options: --save FILE (at the end), --save-every N,
 * --init FILE (start every policy from saved weights). The files are
 * ckpt/gpt2.h's; this module names them, checks them before a run starts
 * and reports what goes wrong, naming the option. */
#ifndef MIXPREC_CLI_TRAIN_CKPT_H
#define MIXPREC_CLI_TRAIN_CKPT_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/train_opts.h"
#include "train/train.h"

typedef struct {
	const char *save;          /* --save FILE, or NULL */
	size_t save_every;         /* 0: only at the end */
	const char *init;          /* --init FILE, or NULL */
	char (*paths)[4096];       /* one per policy, after train_ckpt_prepare */
	size_t np;
	size_t saved_at;           /* steps done at the last save (SIZE_MAX: none) */
	float *init_weights;       /* --init's weights, owned */
} train_ckpt;

/* Once the policies are known: the file of each (FILE itself for one
 * policy, FILE with -POLICY before .safetensors for several), each checked
 * as a target; --init's weights read and checked against the shape options,
 * set as su->cfg.init_weights. Returns CLI_OK or the exit status after
 * reporting. */
int train_ckpt_prepare(train_ckpt *k, train_opts *su, const train_policy *pols, size_t np);

/* After `done` steps: saves every policy's model when --save-every is due,
 * or (final) at the end, once its weights are checked finite. Returns
 * CLI_OK, or CLI_USAGE (weights not finite) or CLI_ENV after reporting. */
int train_ckpt_step(train_ckpt *k, const train_opts *su, trainer *const *tr, const train_policy *pols,
                    size_t done, bool final);

/* After `done` steps: every policy's weights read back (trainer_sync) and
 * checked finite. CLI_OK; CLI_USAGE after naming the policy, the step and
 * the first weight that is inf or NaN; CLI_ENV when they cannot be read. */
int train_ckpt_check_weights(trainer *const *tr, const train_policy *pols, size_t np, size_t done);

/* The file of policy i of np under FILE, as --save and --resume name
 * them: FILE itself for one policy, else FILE with -POLICY before
 * .safetensors; false when it does not fit in n. */
bool train_ckpt_path(char *out, size_t n, const char *file, const train_policy *pols, size_t np, size_t i);

void train_ckpt_free(train_ckpt *k);

/* The help lines of the options. */
extern const char train_ckpt_help[];

#endif
