/* The options of `mixprec quantize`, parsed from an argv into data: the
 * CLI's command and the TUI's Block explorer read a command line through
 * this function only, so a lesson's block means the same in both. Nothing
 * is printed: a bad option gives MP_EINVAL and a message naming it. The
 * VALUEs are kept as typed (the command reads them, reporting each bad one
 * and going on); --random's own options are kept as typed too, for
 * cmd_quantize's quantize_random to check against the generated tensor. */
#ifndef MIXPREC_QUANT_QUANT_OPTS_H
#define MIXPREC_QUANT_QUANT_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "quant/quant.h"
#include "util/status.h"

/* The --random options as typed (NULL: not given). */
typedef struct {
	const char *random, *dist, *outliers, *outliers_in, *draws;
	const char *to;      /* --to as typed: one block format or a comma-separated list */
	bool compare;        /* --compare-rht */
	const char *block;   /* --block as typed */
	const char *rule;    /* --scale-rule as typed */
	const char *value;   /* the first VALUE given, if any */
} quantize_random_args;

/* --from-model's options: a row of a saved model's weight as the values. */
typedef struct {
	const char *path;            /* --from-model FILE; NULL without it */
	const char *tensor;          /* --tensor NAME */
	unsigned long long row;      /* --row I (default 0) */
} quantize_model_args;

/* Every option of `mixprec quantize`; the strings point into the argv parsed. */
typedef struct {
	quant_opts q;                /* --to (not with --random), --block (0: not given), --scale-rule, --mode, --seed */
	char **values;               /* the VALUEs in command-line order, nvalues of them (allocated) */
	size_t nvalues;
	quantize_random_args ra;     /* --random's; ra.random NULL without it */
	quantize_model_args model;   /* --from-model's; model.path NULL without it */
	bool csv;                    /* --csv */
	bool rht;                    /* --rht */
	bool help;                   /* -h, --help: nothing after it is checked */
	bool row_given;              /* --row was given (it needs --from-model) */
} quantize_opts;

/* Parses `mixprec quantize`'s argv (argv[0] the command) into *o: every
 * option, --to against the block formats (a list only with --random), the
 * options that need --random or --from-model, and that the values come from
 * one source (VALUEs or stdin, --random, --from-model). MP_EINVAL with the message in err,
 * MP_ENOMEM out of memory; quantize_opts_free after either. */
mp_status quantize_opts_parse(int argc, char **argv, quantize_opts *o, char *err, size_t errlen);

void quantize_opts_free(quantize_opts *o);

#endif
