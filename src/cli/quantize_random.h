/* mixprec quantize --random: block formats on a generated tensor with
 * planted outliers, side by side, and NVFP4 with and without the random
 * Hadamard transform (train/rht_probe.h computes, this prints). */
#ifndef MIXPREC_CLI_QUANTIZE_RANDOM_H
#define MIXPREC_CLI_QUANTIZE_RANDOM_H

#include <stdbool.h>
#include <stddef.h>

#include "quant/quant.h"
#include "quant/quant_opts.h"

/* Runs quantize --random, its options as quantize_opts_parse left them
 * (those that need --random already checked): the exit status (errors
 * reported, naming the option). o holds the parsed --block (0 when not
 * given), --scale-rule, --mode and --seed; a->to the formats. */
int quantize_random(const quantize_random_args *a, const quant_opts *o, bool rht, bool csv);

/* The help text's part on --random. */
void quantize_random_help(void);

#endif
