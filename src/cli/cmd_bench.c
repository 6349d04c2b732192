#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "cli/bench.h"
#include "cli/bench_quant.h"
#include "cli/cli.h"
#include "tui/tui.h"
#include "drift/drift.h"
#include "fmt/bulk.h"
#include "gpu/gpu.h"
#include "util/csvout.h"
#include "util/rng.h"

static void bench_help(void)
{
	printf("Usage: mixprec bench [round|drift|train|tui|all] [--threads N,...] [--mib N]\n"
	       "                     [--reps N] [--csv] [--device cpu|cuda]\n"
	       "                     [--simd avx512|avx2|portable]\n"
	       "Measures kernels on arrays larger than the caches, against a memcpy of the\n"
	       "same size measured in the same run.\n\n"
	       "  round          bulk rounding kernels: each one's memory traffic rate, (bytes\n"
	       "                 read + written) per second, as a ratio to memcpy's (default)\n"
	       "                 and the block formats (quantize: MX, nvfp4), elements and\n"
	       "                 scales, 4 + 1 + 1/block bytes per element; a read-only pass\n"
	       "                 (bytes read per second) as a second baseline\n"
	       "  drift          one step of the drift simulation per variant: updates per\n"
	       "                 second and the ratio to the memory-bandwidth bound (memcpy's\n"
	       "                 traffic rate / bytes an update must move)\n"
	       "  train          ms per training step of the tiny GPT (default shape) for fp32\n"
	       "                 and bf16-mixed, the share of the step spent in sgemm, and the\n"
	       "                 achieved GFLOP/s against sgemm's own at the same shapes\n"
	       "  --policy P,..  train: the policies timed, each against the first (default\n"
	       "                 fp32,bf16-mixed; e.g. bf16-mixed,fp8-delayed,fp8-current)\n"
	       "  tui            the workbench, off-screen: time to its first frame at 80x24\n"
	       "                 and 132x43 (the budget is 100 ms), and the time from a key\n"
	       "                 to its finished frame while training runs (budget 50 ms)\n"
	       "  all            all four\n"
	       "  --threads N,.. thread counts to measure (default 1,2)\n"
	       "  --mib N        size of the fp32 input array in MiB (default 512)\n"
	       "  --simd P       the SIMD path the CPU kernels take (default: the best this\n"
	       "                 CPU has; the same as MIXPREC_SIMD=P), so that one machine\n"
	       "                 measures every path; each round row names its path\n"
	       "  --reps N       repetitions (default 3), each running every kernel once;\n"
	       "                 each kernel's best is kept\n"
	       "  --csv          CSV, by measurement:\n"
	       "                 round: threads,kernel,path,seconds,gb_per_s,ratio_to_memcpy\n"
	       "                 drift: threads,variant,seconds,updates_per_s,bound_per_s,ratio\n"
	       "                 train: threads,policy,ms_per_step,sgemm_share,gflops,\n"
	       "                 sgemm_gflops\n"
	       "                 tui: measure,size,ms,budget_ms\n"
	       "  --device D     cpu (default) or cuda: round and drift on the GPU against a\n"
	       "                 device-to-device cudaMemcpy of the same size (default --mib\n"
	       "                 2048); drift adds the whole simulation (all variants, state in\n"
	       "                 registers) in element-steps/s against moving all variants'\n"
	       "                 state (88 bytes) through memory once per step. CSV:\n"
	       "                 device,kernel,seconds,gb_per_s,ratio_to_copy (round);\n"
	       "                 device,variant,seconds,updates_per_s,bound_per_s,ratio (drift).\n"
	       "                 train (also part of all): ms per step on the GPU for fp32\n"
	       "                 and bf16-mixed, at the default shape against the CPU's step\n"
	       "                 (ratio = CPU ms / GPU ms) and at L4 H16 C1024 B16 T256\n"
	       "                 against the GPU's fp32 step, then GPT-2 small's shape (L12\n"
	       "                 H12 C768 V50257 B4 T1024): tokens/s and the cuBLAS share of\n"
	       "                 one profiled step; CSV device,shape,policy,ms_per_step,ratio,\n"
	       "                 tokens_per_s,cublas_share (the last two for GPT-2's rows)\n"
	       "  -h, --help     this text\n\n"
	       "MIXPREC_SIMD=portable|avx2 caps the SIMD path. Timings vary with the machine's\n"
	       "load: compare only ratios from one run.\n");
}

typedef enum { K_MEMCPY, K_READ, K_ENCODE, K_DECODE, K_QUANTIZE } kernel_kind;

typedef struct {
	const char *name;
	kernel_kind kind;
	fmt_id fmt;
	fmt_mode mode;
	fmt_simd path;
} kernel;

typedef struct {
	const kernel *k;
	float *in;
	void *out;
} slice;

double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct {
	bench_work *work;
	const void *ctx;
	size_t begin, end;
} bench_share;

static void *bench_share_run(void *arg)
{
	const bench_share *b = arg;
	b->work(b->ctx, b->begin, b->end);
	return NULL;
}

double bench_parallel(bench_work *work, const void *ctx, size_t n, int nthreads)
{
	pthread_t tid[64];
	bench_share sh[64];
	nthreads = nthreads < 1 ? 1 : nthreads > 64 ? 64 : nthreads;
	double t0 = bench_now();
	for (int t = 0; t < nthreads; t++) {
		size_t b = (n * (size_t)t / (size_t)nthreads) & ~(size_t)63;
		size_t e = t + 1 == nthreads ? n : (n * (size_t)(t + 1) / (size_t)nthreads) & ~(size_t)63;
		sh[t] = (bench_share){ .work = work, .ctx = ctx, .begin = b, .end = e };
		if (t > 0)
			pthread_create(&tid[t], NULL, bench_share_run, &sh[t]);
	}
	bench_share_run(&sh[0]);
	for (int t = 1; t < nthreads; t++)
		pthread_join(tid[t], NULL);
	return bench_now() - t0;
}

/* Reads in[0..n) and nothing else: the patterns or'ed together, eight
 * lanes at a time (the compiler vectorises it). */
__attribute__((optimize("tree-vectorize"))) static uint32_t read_all(const float *in, size_t n)
{
	uint32_t acc[8] = { 0 };
	const uint32_t *u = (const uint32_t *)(const void *)in;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__builtin_prefetch(u + i + 2048);   /* as the bulk kernels ask ahead (fmt/bulk_body.h) */
		for (int j = 0; j < 8; j++)
			acc[j] |= u[i + (size_t)j];
	}
	for (; i < n; i++)
		acc[0] |= u[i];
	return acc[0] | acc[1] | acc[2] | acc[3] | acc[4] | acc[5] | acc[6] | acc[7];
}

static volatile uint32_t read_sink;

static void run_slice(const void *ctx, size_t begin, size_t end)
{
	const slice *s = ctx;
	const kernel *k = s->k;
	size_t n = end - begin, es = fmt_bulk_elem_size(k->fmt);
	fmt_bulk_opts o = { .fmt = k->fmt, .mode = k->mode, .seed = 42, .index0 = begin };
	switch (k->kind) {
	case K_MEMCPY:
		memcpy((float *)s->out + begin, s->in + begin, n * sizeof(float));
		break;
	case K_READ:
		read_sink = read_all(s->in + begin, n);
		break;
	case K_ENCODE:
		fmt_bulk_encode(k->path, &o, (char *)s->out + begin * es, s->in + begin, n);
		break;
	case K_DECODE:
		fmt_bulk_decode(k->path, k->fmt, s->in + begin, (char *)s->out + begin * es, n);
		break;
	case K_QUANTIZE:   /* in place, on a copy of the input (bench_round) */
		fmt_bulk_quantize(k->path, &o, s->in + begin, n);
		break;
	}
}

/* Seconds for one pass of k over n elements on nthreads threads. */
static double time_pass(const kernel *k, float *in, void *out, size_t n, int nthreads)
{
	slice sl = { .k = k, .in = in, .out = out };
	return bench_parallel(run_slice, &sl, n, nthreads);
}

/* Bytes read per element, and written. */
static double read_per_elem(const kernel *k)
{
	return k->kind == K_DECODE ? (double)fmt_bulk_elem_size(k->fmt) : 4;
}

static double written_per_elem(const kernel *k)
{
	switch (k->kind) {
	case K_MEMCPY:   return 4;
	case K_READ:     return 0;
	case K_ENCODE:   return (double)fmt_bulk_elem_size(k->fmt);
	case K_DECODE:   return 4;
	case K_QUANTIZE: return 4;
	}
	return 0;
}

void bench_round_row(csvw *w, int threads, const char *name, const char *path, double seconds, double gbps,
                     double base)
{
	if (w) {
		csvw_fieldf(w, "%d", threads);
		csvw_field(w, name);
		csvw_field(w, path);
		csvw_fieldf(w, "%.6f", seconds);
		csvw_fieldf(w, "%.3f", gbps);
		csvw_fieldf(w, "%.3f", gbps / base);
		csvw_end_row(w);
	} else {
		printf("%-8d %-30s %-18s %10.2f %7.2fx\n", threads, name, path, gbps, gbps / base);
	}
}

static int bench_round(const int *threads, int nthreads, size_t mib, unsigned reps, bool csv);
static int bench_drift(const int *threads, int nthreads, size_t mib, unsigned reps, bool csv);
static int bench_tui(unsigned reps, bool csv);

/* --- the GPU --- */

typedef struct {
	bool csv, drift;
	csvw w;
} cuda_out;

static void cuda_row(void *ctx, const gpu_bench_row *r)
{
	cuda_out *o = ctx;
	if (o->csv) {
		csvw_field(&o->w, "cuda");
		csvw_field(&o->w, r->name);
		csvw_fieldf(&o->w, "%.6g", r->seconds);
		if (o->drift) {
			csvw_fieldf(&o->w, "%.4g", r->rate);
			csvw_fieldf(&o->w, "%.4g", r->bound);
		} else {
			csvw_fieldf(&o->w, "%.3f", r->rate);
		}
		csvw_fieldf(&o->w, "%.3f", r->ratio);
		csvw_end_row(&o->w);
	} else if (o->drift) {
		printf("%-28s %14.3e %14.3e %7.2fx\n", r->name, r->rate, r->bound, r->ratio);
	} else {
		printf("%-30s %10.2f %7.2fx\n", r->name, r->rate, r->ratio);
	}
	fflush(stdout);
}


static int bench_cuda(const char *what, size_t mib, unsigned reps, bool csv)
{
	char why[384], err[512];
	gpu_info info;
	if (gpu_ready(&info, why, sizeof why) != MP_OK) {
		cli_error("bench", "--device cuda: %s", why);
		return CLI_ENV;
	}
	if (!strcmp(what, "train"))
		return bench_train_cuda(&info, reps, csv);
	bool all = !strcmp(what, "all");
	cuda_out o = { .csv = csv };
	mp_status st = MP_OK;
	if (csv)
		csvw_init(&o.w, stdout);
	if (all || !strcmp(what, "round")) {
		if (csv)
			csvw_header(&o.w, "device,kernel,seconds,gb_per_s,ratio_to_copy");
		else
			printf("bench round --device cuda: %s (sm_%d%d), %zu MiB of fp32, best of %u\n"
			       "GB/s counts bytes read + written; ratio is against a device-to-device copy.\n\n"
			       "%-30s %10s %8s\n", info.name, info.cc_major, info.cc_minor, mib, reps, "kernel", "GB/s",
			       "ratio");
		st = gpu_bench_round(mib, reps, cuda_row, &o, err, sizeof err);
	}
	if (st == MP_OK && (all || !strcmp(what, "drift"))) {
		o.drift = true;
		if (csv)
			csvw_header(&o.w, "device,variant,seconds,updates_per_s,bound_per_s,ratio");
		else
			printf("%sbench drift --device cuda: %s, one step over %zu MiB of fp32 state, best of %u\n"
			       "bound = the copy's traffic rate / bytes an update moves\n\n%-28s %14s %14s %8s\n",
			       all ? "\n" : "", info.name, mib, reps, "variant", "updates/s", "bound/s", "ratio");
		st = gpu_bench_drift(mib, reps, cuda_row, &o, err, sizeof err);
	}
	if (st != MP_OK) {
		cli_error("bench", "--device cuda: %s", err);
		return CLI_ENV;
	}
	if (all) {
		if (!csv)
			printf("\n");
		int rc = bench_train_cuda(&info, reps, csv);
		if (rc != CLI_OK)
			return rc;
	}
	return cli_flush_stdout("bench") ? CLI_OK : CLI_ENV;
}

/* --simd: the path every CPU kernel takes, by MIXPREC_SIMD (which the
 * rounding kernels and the trainer's row kernels read once, on first use). */
static bool bench_simd_select(const char *name)
{
	static const struct {
		const char *name;
		fmt_simd path;
	} paths[] = { { "avx512", FMT_SIMD_AVX512 }, { "avx2", FMT_SIMD_AVX2 }, { "portable", FMT_SIMD_PORTABLE } };
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		if (strcmp(name, paths[i].name))
			continue;
		if (paths[i].path != FMT_SIMD_AVX512)
			setenv("MIXPREC_SIMD", name, 1);
		else
			unsetenv("MIXPREC_SIMD");
		if (!fmt_simd_available(paths[i].path)) {
			cli_error("bench", "--simd %s: this CPU lacks that path (its best: %s)", name,
			          fmt_simd_name(fmt_simd_best()));
			return false;
		}
		if (fmt_simd_best() != paths[i].path) {
			cli_error("bench", "--simd %s: MIXPREC_SIMD=%s was read first", name, getenv("MIXPREC_SIMD"));
			return false;
		}
		return true;
	}
	cli_error("bench", "--simd: unknown path '%s' (known: avx512, avx2, portable)", name);
	return false;
}

int cmd_bench(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "mib", required_argument, NULL, 'm' },
		{ "reps", required_argument, NULL, 'r' },
		{ "csv", no_argument, NULL, 'c' },
		{ "device", required_argument, NULL, 'd' },
		{ "policy", required_argument, NULL, 'p' },
		{ "simd", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *threads_list = "1,2", *device = "cpu", *policies = "fp32,bf16-mixed";
	bool mib_given = false;
	unsigned long long mib = 512, reps = 3;
	bool csv = false;
	optind = 0;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 't': threads_list = optarg; break;
		case 'm':
			if (!cli_parse_u64("bench", "--mib", optarg, &mib))
				return CLI_USAGE;
			mib_given = true;
			break;
		case 'r':
			if (!cli_parse_u64("bench", "--reps", optarg, &reps))
				return CLI_USAGE;
			break;
		case 'c': csv = true; break;
		case 'p': policies = optarg; break;
		case 's':
			if (!bench_simd_select(optarg))
				return CLI_USAGE;
			break;
		case 'd':
			if (strcmp(optarg, "cpu") && strcmp(optarg, "cuda")) {
				cli_error("bench", "--device: unknown device '%s' (known: cpu, cuda)", optarg);
				return CLI_USAGE;
			}
			device = optarg;
			break;
		case 'h': bench_help(); return cli_flush_stdout("bench") ? CLI_OK : CLI_ENV;
		case ':':
		default:
			return cli_option_error("bench", c, argv, opts);
		}
	}
	const char *what = optind < argc ? argv[optind] : "round";
	if (strcmp(what, "round") && strcmp(what, "drift") && strcmp(what, "train") && strcmp(what, "tui") &&
	    strcmp(what, "all")) {
		cli_error("bench", "unknown benchmark '%s' (known: round, drift, train, tui, all)", what);
		return CLI_USAGE;
	}
	if (optind + 1 < argc) {
		cli_error("bench", "unexpected argument '%s'", argv[optind + 1]);
		return CLI_USAGE;
	}
	if (mib < 1 || mib > 65536 || reps < 1 || reps > 100) {
		cli_error("bench", "--mib must be 1..65536 and --reps 1..100");
		return CLI_USAGE;
	}
	int threads[16], nthreads = 0;
	for (const char *p = threads_list; *p && nthreads < 16;) {
		char *end;
		long t = strtol(p, &end, 10);
		if (end == p || t < 1 || t > 64 || (*end && *end != ',')) {
			cli_error("bench", "--threads: '%s' is not a list of thread counts 1..64", threads_list);
			return CLI_USAGE;
		}
		threads[nthreads++] = (int)t;
		p = *end ? end + 1 : end;
	}

	if (!strcmp(device, "cuda") && !strcmp(what, "tui")) {
		cli_error("bench", "tui --device cuda: the workbench runs on the CPU; use 'mixprec bench tui'");
		return CLI_USAGE;
	}
	if (!strcmp(device, "cuda"))
		return bench_cuda(what, mib_given ? (size_t)mib : 2048, (unsigned)reps, csv);

	int rc = CLI_OK;
	bool all = !strcmp(what, "all");
	if (all || !strcmp(what, "round"))
		rc = bench_round(threads, nthreads, (size_t)mib, (unsigned)reps, csv);
	if (rc == CLI_OK && (all || !strcmp(what, "drift")))
		rc = bench_drift(threads, nthreads, (size_t)mib, (unsigned)reps, csv);
	if (rc == CLI_OK && (all || !strcmp(what, "train")))
		rc = bench_train(threads, nthreads, (unsigned)reps, csv, policies);
	if (rc == CLI_OK && (all || !strcmp(what, "tui")))
		rc = bench_tui((unsigned)reps, csv);
	if (rc == CLI_OK && !cli_flush_stdout("bench"))
		rc = CLI_ENV;
	return rc;
}

static int bench_round(const int *threads, int nthreads, size_t mib, unsigned reps, bool csv)
{
	size_t n = (mib << 20) / sizeof(float);
	float *in = aligned_alloc(64, n * sizeof(float));
	float *out = aligned_alloc(64, n * sizeof(float));
	if (!in || !out) {
		cli_error("bench", "cannot allocate 2 x %zu MiB", mib);
		free(in);
		free(out);
		return CLI_ENV;
	}
	/* normal values of mixed magnitude; every page touched before timing */
	for (size_t i = 0; i < n; i++) {
		uint32_t r = rng_bits(7, i);
		uint32_t bits = (r & 0x807fffffu) | ((uint32_t)(100 + (r >> 23) % 56) << 23);
		memcpy(&in[i], &bits, 4);
	}
	memset(out, 0, n * sizeof(float));

	fmt_simd best = fmt_simd_best();
	const kernel kernels[] = {
		{ "memcpy (baseline)", K_MEMCPY, FMT_FP32, FMT_RNE, best },
		{ "read only (baseline)", K_READ, FMT_FP32, FMT_RNE, best },
		{ "fp32->bf16 rne", K_ENCODE, FMT_BF16, FMT_RNE, best },
		{ "fp32->bf16 sr", K_ENCODE, FMT_BF16, FMT_SR, best },
		{ "fp32->fp16 rne", K_ENCODE, FMT_FP16, FMT_RNE, best },
		{ "fp32->fp16 sr", K_ENCODE, FMT_FP16, FMT_SR, best },
		{ "fp32->fp8-e4m3 rne", K_ENCODE, FMT_E4M3, FMT_RNE, best },
		{ "fp32->fp8-e5m2 sr", K_ENCODE, FMT_E5M2, FMT_SR, best },
		{ "bf16->fp32", K_DECODE, FMT_BF16, FMT_RNE, best },
		{ "fp16->fp32", K_DECODE, FMT_FP16, FMT_RNE, best },
		{ "quantize bf16 rne (in place)", K_QUANTIZE, FMT_BF16, FMT_RNE, best },
		{ "quantize bf16 sr (in place)", K_QUANTIZE, FMT_BF16, FMT_SR, best },
		{ "fp32->bf16 rne", K_ENCODE, FMT_BF16, FMT_RNE, FMT_SIMD_PORTABLE },
		{ "fp32->bf16 sr", K_ENCODE, FMT_BF16, FMT_SR, FMT_SIMD_PORTABLE },
	};
	size_t nk = sizeof kernels / sizeof kernels[0];

	csvw w;
	if (csv) {
		csvw_init(&w, stdout);
		csvw_header(&w, "threads,kernel,path,seconds,gb_per_s,ratio_to_memcpy");
	} else {
		printf("bench round: %zu MiB of fp32 (%zu elements), SIMD path %s, best of %u\n"
		       "GB/s counts bytes read + written; ratio is against memcpy's rate in this run.\n"
		       "The read-only pass: the bytes the same threads read per second, reading alone.\n\n",
		       mib, n, fmt_simd_name(best), reps);
		printf("%-8s %-30s %-18s %10s %8s\n", "threads", "kernel", "path", "GB/s", "ratio");
	}
	/* each repetition runs every kernel once, so that every kernel's best and
	 * memcpy's come from the same stretch of time on a shared machine */
	double *bestt = malloc(nk * sizeof *bestt);
	if (!bestt) {
		cli_error("bench", "out of memory");
		free(in);
		free(out);
		return CLI_ENV;
	}
	for (int ti = 0; ti < nthreads; ti++) {
		for (size_t ki = 0; ki < nk; ki++)
			bestt[ki] = 1e30;
		for (unsigned r = 0; r < reps; r++) {
			for (size_t ki = 0; ki < nk; ki++) {
				const kernel *k = &kernels[ki];
				double t;
				/* untimed: decode reads what an encode wrote; quantize
				 * rewrites a copy of the input, which stays as it is */
				if (k->kind == K_DECODE) {
					fmt_bulk_opts o = { .fmt = k->fmt, .mode = FMT_RNE };
					fmt_bulk_encode(best, &o, out, in, n);
					t = time_pass(k, (float *)out + n / 2, out, n / 2, threads[ti]);
				} else if (k->kind == K_QUANTIZE) {
					memcpy(out, in, n * sizeof(float));
					t = time_pass(k, (float *)out, out, n, threads[ti]);
				} else {
					t = time_pass(k, in, out, n, threads[ti]);
				}
				if (t < bestt[ki])
					bestt[ki] = t;
			}
		}
		double base = 8.0 * (double)n / bestt[0] / 1e9;   /* kernels[0]: memcpy */
		for (size_t ki = 0; ki < nk; ki++) {
			const kernel *k = &kernels[ki];
			size_t elems = k->kind == K_DECODE ? n / 2 : n;
			double rd = read_per_elem(k), wr = written_per_elem(k);
			double gbps = (rd + wr) * (double)elems / bestt[ki] / 1e9;
			const char *path = k->kind == K_MEMCPY ? "libc" : k->kind == K_READ ? "plain C" : fmt_simd_name(k->path);
			bench_round_row(csv ? &w : NULL, threads[ti], k->name, path, bestt[ki], gbps, base);
		}
		fflush(stdout);
		bench_quant_rows(csv ? &w : NULL, in, out, n, threads[ti], reps, base);
		fflush(stdout);
	}
	free(bestt);
	free(in);
	free(out);
	return CLI_OK;
}

/* --- drift --- */

typedef struct {
	int variant;          /* drift_variant, or -1 for memcpy */
	float *x, *comp, *dst;
	double *x64;
	const float *u;
} drift_slice;

static void drift_slice_run(const void *ctx, size_t begin, size_t end)
{
	const drift_slice *s = ctx;
	size_t n = end - begin;
	if (s->variant < 0) {
		memcpy(s->dst + begin, s->x + begin, n * sizeof(float));
	} else if (s->variant == DRIFT_FP64) {
		for (size_t i = begin; i < end; i++)
			s->x64[i] += (double)s->u[i];
	} else {
		drift_apply((drift_variant)s->variant, s->x + begin, s->comp ? s->comp + begin : NULL,
		            s->u + begin, n, 1, begin);
	}
}

static double drift_time(drift_slice proto, size_t n, int nthreads)
{
	return bench_parallel(drift_slice_run, &proto, n, nthreads);
}

static int bench_drift(const int *threads, int nthreads, size_t mib, unsigned reps, bool csv)
{
	/* mib sizes the fp32 state array, as for round */
	size_t n = (mib << 20) / sizeof(float);
	float *x = aligned_alloc(64, n * sizeof(float)), *u = aligned_alloc(64, n * sizeof(float));
	float *comp = aligned_alloc(64, n * sizeof(float));
	double *x64 = aligned_alloc(64, n * sizeof(double));
	if (!x || !u || !comp || !x64) {
		free(x); free(u); free(comp); free(x64);
		cli_error("bench", "cannot allocate the drift arrays (%zu MiB each)", mib);
		return CLI_ENV;
	}
	drift_params p = drift_defaults();
	p.elements = n;
	for (size_t i = 0; i < n; i++) {
		u[i] = drift_update_value(&p, 0, i);
		x[i] = 600.0f;
		x64[i] = 600.0;
		comp[i] = 0;
	}
	csvw w;
	if (csv) {
		csvw_init(&w, stdout);
		csvw_header(&w, "threads,variant,seconds,updates_per_s,bound_per_s,ratio");
	} else {
		printf("bench drift: one step over %zu values (%zu MiB of fp32 state), best of %u\n"
		       "bound = memcpy's traffic rate in this run / bytes an update moves (x read and\n"
		       "written, update read; Kahan also its compensation; fp64 8-byte state)\n\n",
		       n, mib, reps);
		printf("%-8s %-12s %14s %14s %8s\n", "threads", "variant", "updates/s", "bound/s", "ratio");
	}
	for (int ti = 0; ti < nthreads; ti++) {
		drift_slice mc = { .variant = -1, .x = u, .dst = comp };
		double best = 1e30;
		for (unsigned r = 0; r < reps; r++) {
			double t = drift_time(mc, n, threads[ti]);
			best = t < best ? t : best;
		}
		double traffic = 8.0 * (double)n / best;   /* bytes/s, read + written */
		memset(comp, 0, n * sizeof(float));
		for (int v = 0; v < DRIFT_VARIANT_COUNT; v++) {
			drift_slice sl = { .variant = v, .x = x, .x64 = x64, .u = u,
			                   .comp = v == DRIFT_BF16_KAHAN ? comp : NULL };
			double bytes = v == DRIFT_FP64 ? 20 : v == DRIFT_BF16_KAHAN ? 20 : 12;
			best = 1e30;
			for (unsigned r = 0; r < reps; r++) {
				double t = drift_time(sl, n, threads[ti]);
				best = t < best ? t : best;
			}
			double ups = (double)n / best, bound = traffic / bytes;
			if (csv) {
				csvw_fieldf(&w, "%d", threads[ti]);
				csvw_field(&w, drift_variant_name((drift_variant)v));
				csvw_fieldf(&w, "%.6f", best);
				csvw_fieldf(&w, "%.4g", ups);
				csvw_fieldf(&w, "%.4g", bound);
				csvw_fieldf(&w, "%.3f", ups / bound);
				csvw_end_row(&w);
			} else {
				printf("%-8d %-12s %14.3e %14.3e %7.2fx\n", threads[ti], drift_variant_name((drift_variant)v),
				       ups, bound, ups / bound);
			}
			fflush(stdout);
		}
	}
	free(x); free(u); free(comp); free(x64);
	return CLI_OK;
}

/* --- tui --- */

static int bench_tui(unsigned reps, bool csv)
{
	static const int sizes[][2] = { { 24, 80 }, { 43, 132 } };
	if (csv)
		printf("measure,size,ms,budget_ms\n");
	else
		printf("tui: time to the first frame, off-screen (best of %u; budget 100 ms)\n", reps);
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		double best = -1;
		for (unsigned r = 0; r < reps; r++) {
			double ms = tui_bench_first_frame(sizes[i][0], sizes[i][1]);
			if (ms < 0) {
				cli_error("bench", "tui: the workbench could not start off-screen (terminfo missing?)");
				return CLI_ENV;
			}
			if (best < 0 || ms < best)
				best = ms;
		}
		if (csv)
			printf("first_frame,%dx%d,%.3f,100\n", sizes[i][1], sizes[i][0], best);
		else
			printf("  %3dx%-3d  %8.2f ms  (%.0f%% of the budget)\n", sizes[i][1], sizes[i][0], best,
			       best / 100 * 100);
	}
	/* the whole process: exec, libraries (OpenBLAS among them), lessons, one
	 * frame, exit: an upper bound on what a user waits for */
	double best = -1;
	for (unsigned r = 0; r < reps; r++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		pid_t pid = fork();
		if (pid == 0) {
			int fd = open("/dev/null", O_WRONLY);
			if (fd >= 0) {
				dup2(fd, STDOUT_FILENO);
				dup2(fd, STDERR_FILENO);
			}
			execl("/proc/self/exe", "mixprec", "tui", "--keys", "/dev/null", (char *)NULL);
			_exit(127);
		}
		int status = 0;
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			cli_error("bench", "tui: 'mixprec tui --keys /dev/null' failed");
			return CLI_ENV;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double ms = 1e3 * (double)(t1.tv_sec - t0.tv_sec) + 1e-6 * (double)(t1.tv_nsec - t0.tv_nsec);
		if (best < 0 || ms < best)
			best = ms;
	}
	if (csv)
		printf("process_first_frame_exit,80x24,%.3f,100\n", best);
	else
		printf("  whole process (exec, first frame, exit): %.2f ms  (%.0f%% of the budget)\n", best,
		       best / 100 * 100);
	double max_ms, median_ms;
	if (!tui_bench_key_latency(24, 80, 40, &max_ms, &median_ms)) {
		cli_error("bench", "tui: could not start training in the Training lab");
		return CLI_ENV;
	}
	if (csv) {
		printf("key_to_frame_median,80x24,%.3f,50\n", median_ms);
		printf("key_to_frame_max,80x24,%.3f,50\n", max_ms);
	} else {
		printf("tui: key to finished frame while fp32 and bf16-mixed train (40 keys; budget 50 ms)\n"
		       "  median %8.2f ms, slowest %8.2f ms  (%.0f%% of the budget)\n",
		       median_ms, max_ms, max_ms / 50 * 100);
	}
	return CLI_OK;
}
