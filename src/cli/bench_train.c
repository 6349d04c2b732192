/* bench train: ms per step of the tiny GPT per policy on the CPU, the sgemm
 * share; on a GPU the same and the GPT-2-small-shaped rows. */
#include <stdlib.h>
#include <string.h>

#include "cli/bench.h"
#include "cli/cli.h"
#include "fmt/bulk.h"
#include "gpu/gpu.h"
#include "gpu/gpu_trainer.h"
#include "train/layers.h"
#include "train/train.h"
#include "train/train_bench.h"
#include "util/blas.h"
#include "util/csvout.h"
#include "util/file.h"

void openblas_set_num_threads(int num_threads);

int bench_train(const int *threads, int nthreads, unsigned reps, bool csv, const char *policy_list)
{
	train_policy pols[16];
	size_t np = 0;
	char names[512];
	snprintf(names, sizeof names, "%s", policy_list);
	for (char *save = NULL, *tok = strtok_r(names, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char why[512];
		if (np == 16) {
			cli_error("bench", "--policy: at most 16 policies");
			return CLI_USAGE;
		}
		if (policy_parse(tok, &pols[np++], why, sizeof why) != MP_OK) {   /* as train reads them */
			cli_error("bench", "--policy: %s", why);
			return CLI_USAGE;
		}
	}
	train_config cfg = train_config_default();
	cfg.eval_every = 0;
	corpus data;
	char err[512];
	char corpus_path[4096];
	mp_status st = corpus_load(&data, corpus_default_path(corpus_path, sizeof corpus_path), cfg.t, err, sizeof err);
	if (st != MP_OK) {
		char hint[8400];
		cli_error("bench", "train: %s", err);
		cli_error("bench", "%s", file_data_hint(hint, sizeof hint, "MIXPREC_DATADIR", corpus_path));
		return CLI_ENV;
	}
	size_t steps = 4 * (size_t)reps;
	csvw w;
	if (csv) {
		csvw_init(&w, stdout);
		csvw_header(&w, "threads,policy,ms_per_step,sgemm_share,gflops,sgemm_gflops");
	} else {
		printf("bench train: tiny GPT, %zu layers, %zu heads, %zu channels, batch %zu x %zu; %zu timed\n"
		       "steps after 2 warm-up steps; OpenBLAS kernels: %s; SIMD path %s\n\n",
		       cfg.model.L, cfg.model.NH, cfg.model.C, cfg.B, cfg.t, steps, blas_corename(),
		       fmt_simd_name(fmt_simd_best()));
		printf("%-8s %-12s %10s %12s %10s %14s\n", "threads", "policy", "ms/step", "sgemm share", "GFLOP/s",
		       "sgemm GFLOP/s");
	}
	int rc = CLI_OK;
	openblas_set_num_threads(1);
	for (int ti = 0; ti < nthreads && rc == CLI_OK; ti++) {
		/* the trainer runs the two batch halves on up to two threads */
		cfg.threads = threads[ti] >= 2 ? 2 : 1;
		double first_ms = 0;
		for (size_t k = 0; k < np; k++) {
			const char *name = pols[k].name;
			trainer *t;
			char why[512];
			if (trainer_create(&t, &cfg, &pols[k], &data, why, sizeof why) != MP_OK) {
				cli_error("bench", "train: cannot set up %s: %s", name, why);
				rc = CLI_ENV;
				break;
			}
			train_stats s;
			for (int i = 0; i < 2; i++)
				trainer_step(t, &s);
			layers_gemm_stats_reset();
			double t0 = bench_now();
			for (size_t i = 0; i < steps; i++)
				trainer_step(t, &s);
			double el = bench_now() - t0, gs, gf;
			layers_gemm_stats(&gs, &gf);
			gs /= cfg.threads;   /* sgemm time summed over the workers, per worker */
			trainer_free(t);
			double ms = 1e3 * el / (double)steps;
			if (k == 0)
				first_ms = ms;
			if (csv) {
				csvw_fieldf(&w, "%d", threads[ti]);
				csvw_field(&w, name);
				csvw_fieldf(&w, "%.2f", ms);
				csvw_fieldf(&w, "%.3f", gs / el);
				csvw_fieldf(&w, "%.2f", gf / el * 1e-9);
				csvw_fieldf(&w, "%.2f", gs > 0 ? gf / gs * 1e-9 : 0.0);
				csvw_end_row(&w);
			} else {
				printf("%-8d %-12s %10.1f %11.0f%% %10.1f %14.1f", threads[ti], name, ms, 100 * gs / el,
				       gf / el * 1e-9, gs > 0 ? gf / gs * 1e-9 : 0.0);
				if (k > 0)
					printf("   (%.2fx the %s step)", ms / first_ms, pols[0].name);
				printf("\n");
			}
			fflush(stdout);
		}
	}
	corpus_free(&data);
	return rc;
}

/* The GPU step against the CPU step (train/train_bench.c). */
typedef struct {
	bool csv;
	csvw w;
} train_cuda_out;

static void train_cuda_row(void *ctx, const train_bench_row *r)
{
	train_cuda_out *o = ctx;
	if (o->csv) {
		csvw_field(&o->w, r->device);
		csvw_field(&o->w, r->shape);
		csvw_field(&o->w, r->policy);
		csvw_fieldf(&o->w, "%.3f", r->ms);
		csvw_fieldf(&o->w, "%.2f", r->ratio);
		csvw_field(&o->w, "");
		csvw_field(&o->w, "");
		csvw_end_row(&o->w);
	} else {
		printf("%-6s %-24s %-12s %10.2f %8.2fx\n", r->device, r->shape, r->policy, r->ms, r->ratio);
	}
	fflush(stdout);
}

/* The GPT-2-small-shaped rows (gpu/gpu_train_bench.c). */
static void train_gpt2_row(void *ctx, const gpu_train_bench_row *r)
{
	train_cuda_out *o = ctx;
	if (o->csv) {
		csvw_field(&o->w, "cuda");
		csvw_field(&o->w, r->shape);
		csvw_field(&o->w, r->policy);
		csvw_fieldf(&o->w, "%.3f", r->ms);
		csvw_fieldf(&o->w, "%.2f", r->ratio);
		csvw_fieldf(&o->w, "%.0f", r->tokens_per_s);
		csvw_fieldf(&o->w, "%.4f", r->gemm_share);
		csvw_end_row(&o->w);
	} else {
		printf("%-12s %10.2f %8.2fx %11.0f %8.1f%% (%.1f of %.1f ms)\n", r->policy, r->ms, r->ratio,
		       r->tokens_per_s, 100 * r->gemm_share, r->gemm_ms, r->kernels_ms);
	}
	fflush(stdout);
}

static mp_status bench_train_gpt2(const corpus *data, unsigned reps, train_cuda_out *o, char *err, size_t errlen)
{
	if (!o->csv)
		printf("\nGPT-2 small's shape (L12 H12 C768, vocabulary 50257 of which the character corpus\n"
		       "uses ids 0-127, B4 T1024) on the GPU, %u timed steps; ratio: fp32 ms / this ms;\n"
		       "cuBLAS: the GEMMs' share of the kernel time in one more step, timed with CUDA events\n\n"
		       "%-12s %10s %9s %11s %9s\n", reps, "policy", "ms/step", "ratio", "tokens/s", "cuBLAS");
	return gpu_train_bench_gpt2(data, reps, train_gpt2_row, o, err, errlen);
}

int bench_train_cuda(const gpu_info *info, unsigned reps, bool csv)
{
	corpus data;
	char err[512];
	size_t ctx = train_bench_cuda_context() > gpu_train_bench_gpt2_context() ? train_bench_cuda_context()
	                                                                          : gpu_train_bench_gpt2_context();
	char corpus_path[4096];
	if (corpus_load(&data, corpus_default_path(corpus_path, sizeof corpus_path), ctx, err, sizeof err) != MP_OK) {
		char hint[8400];
		cli_error("bench", "train: %s", err);
		cli_error("bench", "%s", file_data_hint(hint, sizeof hint, "MIXPREC_DATADIR", corpus_path));
		return CLI_ENV;
	}
	train_cuda_out o = { .csv = csv };
	if (csv) {
		csvw_init(&o.w, stdout);
		csvw_header(&o.w, "device,shape,policy,ms_per_step,ratio,tokens_per_s,cublas_share");
	} else {
		printf("bench train --device cuda: %s; %u CPU and %u GPU timed steps after 2 warm-up steps\n"
		       "ratio: CPU ms / GPU ms at the default shape; GPU fp32 ms / this policy's GPU ms at the\n"
		       "large one\n\n%-6s %-24s %-12s %10s %9s\n", info->name, reps, 4 * reps, "device", "shape",
		       "policy", "ms/step", "ratio");
	}
	openblas_set_num_threads(1);
	mp_status st = train_bench_cuda(&data, reps, train_cuda_row, &o, err, sizeof err);
	if (st == MP_OK)
		st = bench_train_gpt2(&data, reps, &o, err, sizeof err);
	corpus_free(&data);
	if (st != MP_OK) {
		cli_error("bench", "train --device cuda: %s", err);
		return CLI_ENV;
	}
	return cli_flush_stdout("bench") ? CLI_OK : CLI_ENV;
}
