/* What the bench subcommands share (cli/cmd_bench.c, bench_train.c). */
#ifndef MIXPREC_CLI_BENCH_H
#define MIXPREC_CLI_BENCH_H

#include <stdbool.h>

#include "gpu/gpu.h"

/* Seconds on the monotonic clock. */
double bench_now(void);

/* bench train on the CPU: each policy of policy_list (comma-separated; the
 * first is the baseline) at each thread count, best of reps. A CLI_* code. */
int bench_train(const int *threads, int nthreads, unsigned reps, bool csv, const char *policy_list);

/* bench train --device cuda on the GPU info describes. A CLI_* code. */
int bench_train_cuda(const gpu_info *info, unsigned reps, bool csv);

#endif
