/* mixprec quantize --random: block formats on a generated tensor with
 * planted outliers, side by side, and NVFP4 with and without the random
 * Hadamard transform (train/rht_probe.h computes, this prints). */
#ifndef MIXPREC_CLI_QUANTIZE_RANDOM_H
#define MIXPREC_CLI_QUANTIZE_RANDOM_H

#include <stdbool.h>
#include <stddef.h>

#include "quant/quant.h"

/* The --random options as typed (NULL: not given), parsed and checked by
 * quantize_random. */
typedef struct {
	const char *random, *dist, *outliers, *outliers_in, *draws;
	const char *to;      /* --to as typed: one block format or a comma-separated list */
	bool compare;        /* --compare-rht */
	const char *block;   /* --block as typed */
	const char *rule;    /* --scale-rule as typed */
	const char *value;   /* the first VALUE given, if any */
} quantize_random_args;

/* Whether any option that needs --random was given without it: reported,
 * true. */
bool quantize_random_stray(const quantize_random_args *a);

/* Runs quantize --random: the exit status (errors reported, naming the
 * option). o holds the parsed --block (0 when not given), --scale-rule,
 * --mode and --seed; a->to the formats. */
int quantize_random(const quantize_random_args *a, const quant_opts *o, bool rht, bool csv);

/* The help text's part on --random. */
void quantize_random_help(void);

#endif
