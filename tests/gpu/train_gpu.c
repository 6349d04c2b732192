/* The GPU trainer against the CPU trainer on a real device (the same checks
 * test_train runs on the GPU trainer's code emulated on the CPU), and its
 * speed. Plain C with TAP output; exits 77 (skip) without a usable GPU.
 *
 *   train_gpu            the checks
 *   train_gpu bench [R]  ms per step on both devices (train/train_bench.c)
 *                        as a Markdown table, R CPU steps (default 5)
 *   train_gpu gpt2 [R]   the GPT-2-small-shaped step (gpu/gpu_train_bench.c):
 *                        ms, tokens/s and the cuBLAS share, R timed steps
 *                        per policy (default 3)
 *
 * The CPU trainer is the oracle: layers.c and model.c are checked against
 * finite differences and hand-derived values by test_layers and test_model.
 * Tolerances (gpu_compare_tolerance): 1e-4 relative for the fp32 policy; four units
 * of the coarsest format in use otherwise (a rounded intermediate may land
 * on its other neighbour when cuBLAS sums in another order). */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "gpu/gpu_internal.h"
#include "tap.h"
#include "gpu/gpu_trainer.h"
#include "gpu_compare.h"
#include "train/policy.h"
#include "train/train_bench.h"

void openblas_set_num_threads(int num_threads);


static void kernel_row(void *ctx, const char *kernel, double err, double tol)
{
	(void)ctx;
	if (tol == 0)
		report(err == 0, "kernel %s: the host's bits", kernel);
	else
		report(err <= tol, "kernel %s: within %.3g of the host (%.3g)", kernel, tol, err);
}

/* Every policy, one pass: the loss and each gradient part. */
static void passes(const char *label, const train_config *cfg, const corpus *c)
{
	for (size_t i = 0; i < policy_preset_count(); i++) {
		const char *name = policy_preset(i)->name;
		if (policy_cpu_only(policy_preset(i)))   /* the GPU trainer refuses them */
			continue;
		gpu_compare_pass r;
		mp_status st = gpu_compare_pass_compare(TRAIN_DEVICE_CUDA, name, cfg, c, &r);
		if (st != MP_OK) {
			report(false, "%s %s: pass failed: %s (%s)", label, name, mp_status_message(st), gpu_last_error());
			continue;
		}
		double tol = gpu_compare_tolerance(name);
		bool loss_ok = fabs(r.loss_dev - r.loss_cpu) <= tol * fabs(r.loss_cpu);
		report(loss_ok && r.worst <= tol && r.nonzero >= 0.5,
		       "%s %s: loss %.6f (CPU %.6f), worst gradient %s off by %.3g (tolerance %.3g); %.3g of the "
		       "gradients nonzero at scale %g", label, name, r.loss_dev, r.loss_cpu,
		       gpu_compare_tensor_name(r.worst_tensor), r.worst, tol, r.nonzero, (double)r.scale);
	}
}

static void run(const char *name, const train_config *cfg, const corpus *c, size_t steps, double max_diff,
                double last_diff)
{
	gpu_compare_run r;
	mp_status st = gpu_compare_run_compare(TRAIN_DEVICE_CUDA, name, cfg, c, steps, &r);
	if (st != MP_OK) {
		report(false, "%s, %zu steps: failed: %s (%s)", name, steps, mp_status_message(st), gpu_last_error());
		return;
	}
	bool skips_ok = r.skipped_cpu <= r.skipped_dev + 1 && r.skipped_dev <= r.skipped_cpu + 1;
	char why[160] = "statistics agree";
	bool stats_ok = gpu_compare_run_stats_ok(&r, why, sizeof why);
	report(r.max_diff <= max_diff && fabs(r.last_dev - r.last_cpu) <= last_diff && skips_ok && stats_ok,
	       "%s, %zu steps: loss curves within %.3g (bound %.3g); last %.4f vs CPU %.4f (bound %.3g); %s "
	       "(lost-update %.3g vs %.3g, underflow %.3g vs %.3g); skipped %zu vs %zu",
	       name, steps, r.max_diff, max_diff, r.last_dev, r.last_cpu, last_diff, why, r.mean_lost_dev,
	       r.mean_lost, r.mean_underflow_dev, r.mean_underflow, r.skipped_dev, r.skipped_cpu);
}

static void bench_row(void *ctx, const train_bench_row *r)
{
	(void)ctx;
	printf("| %s | %s | %s | %.2f | %.2fx |\n", r->device, r->shape, r->policy, r->ms, r->ratio);
	fflush(stdout);
}

static void gpt2_row(void *ctx, const gpu_train_bench_row *r)
{
	(void)ctx;
	printf("| %s | %s | %.2f | %.0f | %.2fx | %.1f%% (%.2f of %.2f ms) | %.2f |\n", r->shape, r->policy, r->ms,
	       r->tokens_per_s, r->ratio, 100 * r->gemm_share, r->gemm_ms, r->kernels_ms, r->device_gib);
	fflush(stdout);
}

/* train_gpu gpt2 [R] */
static int bench_gpt2(const gpu_info *info, unsigned reps)
{
	corpus c;
	char err[512];
	char corpus_path[4096];
	corpus_default_path(corpus_path, sizeof corpus_path);
	if (corpus_load(&c, corpus_path, gpu_train_bench_gpt2_context(), err, sizeof err) != MP_OK) {
		printf("Bail out! %s\n", err);
		return 1;
	}
	printf("GPU: %s (sm_%d%d); vocabulary 50257, of which the character corpus uses ids 0-127\n\n"
	       "| shape | policy | ms/step | tokens/s | ratio to fp32 | cuBLAS share of the kernel time "
	       "(one profiled step) | device GiB |\n|---|---|---|---|---|---|---|\n",
	       info->name, info->cc_major, info->cc_minor);
	mp_status st = gpu_train_bench_gpt2(&c, reps, gpt2_row, NULL, err, sizeof err);
	corpus_free(&c);
	if (st != MP_OK)
		printf("Bail out! %s\n", err);
	return st == MP_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
	char why[384];
	gpu_info info;
	if (gpu_ready(&info, why, sizeof why) != MP_OK) {
		printf("1..0 # SKIP no usable GPU: %s\n", why);
		return 77;
	}
	openblas_set_num_threads(1);
	if (argc > 1 && !strcmp(argv[1], "gpt2"))
		return bench_gpt2(&info, argc > 2 ? (unsigned)atoi(argv[2]) : 3);
	bool bench = argc > 1 && !strcmp(argv[1], "bench");
	corpus c;
	char err[512];
	size_t t = bench ? train_bench_cuda_context() : 128;
	char corpus_path[4096];
	if (corpus_load(&c, corpus_default_path(corpus_path, sizeof corpus_path), t, err, sizeof err) != MP_OK) {
		printf("Bail out! %s\n", err);
		return 1;
	}
	if (bench) {
		unsigned reps = argc > 2 ? (unsigned)atoi(argv[2]) : 5;
		printf("GPU: %s (sm_%d%d)\n\n| device | shape | policy | ms/step | ratio |\n|---|---|---|---|---|\n",
		       info.name, info.cc_major, info.cc_minor);
		mp_status st = train_bench_cuda(&c, reps ? reps : 5, bench_row, NULL, err, sizeof err);
		corpus_free(&c);
		if (st != MP_OK)
			printf("Bail out! %s\n", err);
		printf("\nratio: CPU ms / GPU ms at the default shape (target >= 10x for bf16-mixed); "
		       "GPU fp32 ms / GPU ms at the large shape (target > 1x for bf16-mixed)\n");
		return st == MP_OK ? 0 : 1;
	}
	printf("# %s (sm_%d%d)\n", info.name, info.cc_major, info.cc_minor);
	/* kernel by kernel: the device against the same body on the host
	 * (whose runs test_gpu_kernels checks against layers.c) */
	mp_status kst = gpu_train_kernel_check(kernel_row, NULL);
	if (kst != MP_OK)
		report(false, "kernel checks stopped: %s (%s)", mp_status_message(kst), gpu_last_error());
	train_config small = train_config_default();
	small.model = gpu_compare_small_model();
	small.B = 4;
	small.t = small.model.T;
	small.eval_every = 0;
	passes("small", &small, &c);
	train_config def = train_config_default();
	def.eval_every = 0;
	passes("default", &def, &c);
	small.resid_offset = 600.0f;
	small.resid_offset_channels = 4;
	passes("offset 600", &small, &c);
	small.resid_offset = 0.0f;
	/* 200 fp32 steps at the default shape: the same sums in another order
	 * (cuBLAS, one pass against the CPU's two halves), so float-rounding
	 * differences that training carries along, a few thousandths of a nat */
	run("fp32", &def, &c, 200, 0.02, 0.01);
	static const char *const low[] = { "bf16-mixed", "bf16-resid", "bf16-resid-sr", "bf16-pure", "bf16-pure-sr",
	                                   "bf16-pure-kahan", "fp16-mixed", "fp16-noscale", "fp8-mixed" };
	/* emulated on the CPU these differ by at most 6e-4 nats (5e-3 for fp8);
	 * cuBLAS sums in its own order, so a few times more */
	for (size_t i = 0; i < sizeof low / sizeof low[0]; i++) {
		double b = strstr(low[i], "fp8") ? 0.05 : 0.02;
		run(low[i], &small, &c, 40, b, b);
	}
	corpus_free(&c);
	printf("1..%d\n", ntests);
	return nfailed ? 1 : 0;
}
