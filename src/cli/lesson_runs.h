/* The commands lesson check runs: this program itself, without a shell,
 * under a chosen OpenBLAS core type, each distinct (command, core type)
 * once, several at a time. lesson check first collects every run its
 * lessons need (lesson_runs_record as the runner), runs them all
 * (lesson_runs_fill), then checks the claims from the outputs
 * (lesson_runs_lookup as the runner). */
#ifndef MIXPREC_CLI_LESSON_RUNS_H
#define MIXPREC_CLI_LESSON_RUNS_H

#include <stdbool.h>
#include <stddef.h>

#include "util/status.h"

typedef struct lesson_runs lesson_runs;

lesson_runs *lesson_runs_new(void);
void lesson_runs_free(lesson_runs *r);

/* lesson_runner for the collecting pass: notes the run, answers an empty
 * output and exit status 0. */
mp_status lesson_runs_record(void *runs, char *const *argv, const char *blas_core, char **out, int *exit_status);

/* Runs every noted run not yet run, at most jobs at a time; progress on
 * stderr when progress is set. MP_EIO when a run could not be started. */
mp_status lesson_runs_fill(lesson_runs *r, size_t jobs, bool progress);

/* lesson_runner for the checking pass: the noted run's output (a run not
 * noted before runs now, alone). */
mp_status lesson_runs_lookup(void *runs, char *const *argv, const char *blas_core, char **out, int *exit_status);

/* How many distinct runs are noted. */
size_t lesson_runs_count(const lesson_runs *r);

#endif
