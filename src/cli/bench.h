/* What the bench subcommands share (cli/cmd_bench.c, bench_train.c). */
#ifndef MIXPREC_CLI_BENCH_H
#define MIXPREC_CLI_BENCH_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu/gpu.h"
#include "util/csvout.h"

/* Seconds on the monotonic clock. */
double bench_now(void);

/* One thread's share of a pass: elements [begin, end) of the work ctx. */
typedef void bench_work(const void *ctx, size_t begin, size_t end);

/* Seconds for one pass of work over n elements on nthreads (1..64)
 * threads, each slice starting at a multiple of 64 elements (whole cache
 * lines, whole blocks of 16 or 32), the calling thread taking the first. */
double bench_parallel(bench_work *work, const void *ctx, size_t n, int nthreads);

/* One bench round row: CSV through w (NULL: text), the ratio against
 * memcpy's rate base (GB/s) in the same run. */
void bench_round_row(csvw *w, int threads, const char *name, const char *path, double seconds, double gbps,
                     double base);

/* bench train on the CPU: each policy of policy_list (comma-separated; the
 * first is the baseline) at each thread count, best of reps. A CLI_* code. */
int bench_train(const int *threads, int nthreads, unsigned reps, bool csv, const char *policy_list);

/* bench train --device cuda on the GPU info describes. A CLI_* code. */
int bench_train_cuda(const gpu_info *info, unsigned reps, bool csv);

#endif
