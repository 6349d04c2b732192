/* The GPU benchmarks without the rest of mixprec: what 'mixprec bench round
 * drift --device cuda' prints, for tests/gpu/device-check.sh on a machine
 * that has only the CUDA toolkit. Usage: bench_gpu [MIB [REPS]]. Exit 77
 * without a usable GPU. */
#include <stdio.h>
#include <stdlib.h>

#include "gpu/gpu.h"

static void row(void *ctx, const gpu_bench_row *r)
{
	const int *drift = ctx;
	if (*drift)
		printf("| %-28s | %12.3e | %12.3e | %6.2fx |\n", r->name, r->rate, r->bound, r->ratio);
	else
		printf("| %-30s | %9.1f | %6.2fx |\n", r->name, r->rate, r->ratio);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 2048;
	unsigned reps = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 5;
	char why[384];
	gpu_info info;
	if (gpu_ready(&info, why, sizeof why) != MP_OK) {
		printf("bench_gpu: skipped: %s\n", why);
		return 77;
	}
	if (mib < 1 || reps < 1) {
		fprintf(stderr, "usage: bench_gpu [MIB [REPS]]\n");
		return 2;
	}
	printf("%s (sm_%d%d), %zu MiB of fp32 per array, best of %u batches\n\n", info.name, info.cc_major,
	       info.cc_minor, mib, reps);
	int drift = 0;
	printf("| kernel | GB/s | ratio to copy |\n|---|---:|---:|\n");
	char err[512];
	mp_status st = gpu_bench_round(mib, reps, row, &drift, err, sizeof err);
	if (st == MP_OK) {
		drift = 1;
		printf("\n| drift | updates/s | copy bound/s | ratio |\n|---|---:|---:|---:|\n");
		st = gpu_bench_drift(mib, reps, row, &drift, err, sizeof err);
	}
	if (st != MP_OK) {
		fprintf(stderr, "bench_gpu: %s\n", err);
		return 1;
	}
	return 0;
}
