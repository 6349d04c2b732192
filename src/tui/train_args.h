/* The options of `mixprec train` as the Training lab takes them from a
 * lesson's block: every option that shapes the run (policies and their
 * changes, steps, model shape or --preset, learning rate, seed, residual offset, device,
 * data), so that a block opened in the lab runs exactly as its command does.
 * Parsing only: nothing is printed, errors name the option. */
#ifndef MIXPREC_TUI_TRAIN_ARGS_H
#define MIXPREC_TUI_TRAIN_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "train/policy.h"
#include "train/train.h"
#include "util/status.h"

enum { TRAIN_ARGS_CHANGES = 16 };

typedef struct {
	train_config cfg;            /* train_config_default() with the options applied */
	char policies[512];          /* "fp32" when not given */
	size_t steps;                /* 200 when not given, as `mixprec train` */
	struct {
		char key[32], value[64];
	} changes[TRAIN_ARGS_CHANGES]; /* --gemm, --residual, ...: policy_set keys */
	size_t nchanges;
	char data[256];              /* --data; "" for the default corpus */
	char csv[256];               /* --csv; "" when not given */
	char text[512];              /* the options as given, for the screen */
	unsigned shape_set;          /* TRAIN_SHAPE_SET_ bits of the shape options given: --preset keeps them */
} train_args;

/* Parses argv[1..argc-1] (argv[0] is the command). MP_EINVAL with a
 * message naming the option in err for an unknown option, a missing value
 * or a value out of range. */
mp_status train_args_parse(train_args *a, int argc, char **argv, char *err, size_t errlen);

/* Applies the policy changes to p; MP_EINVAL with the reason in err. */
mp_status train_args_apply(const train_args *a, train_policy *p, char *err, size_t errlen);

#endif
