/* The setup train and gradhist do with their options once
 * train/train_opts.c has parsed them: the device, the policies, the corpus.
 * Each reports its own errors (cli_error) naming the option. */
#ifndef MIXPREC_CLI_TRAIN_OPTS_H
#define MIXPREC_CLI_TRAIN_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "train/shape.h"
#include "train/train.h"
#include "train/train_opts.h"

/* --device cuda: whether a GPU is usable; CLI_OK, or CLI_ENV after
 * reporting why not. */
int train_opts_device_ready(const char *cmd, const train_opts *o);

/* The GPU kernels' head-size limit, with --device cuda. */
bool train_opts_shape_ok(const char *cmd, const train_opts *su);

/* The policy list with the changes applied, at most max, each checked
 * against the run (policy_check: its device, shape and offset). */
bool train_opts_policies(const char *cmd, const train_opts *su, train_policy *out, size_t max, size_t *n);

/* Loads the corpus; returns CLI_OK, or the exit status after reporting. */
int train_opts_load_data(const char *cmd, const train_opts *su, corpus *c);

#endif
