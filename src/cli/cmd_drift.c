#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "drift/drift.h"
#include "drift/drift_opts.h"
#include "fmt/decode.h"
#include "fmt/parse.h"
#include "fmt/bulk.h"
#include "gpu/gpu.h"
#include "util/csvout.h"

static void drift_help(void)
{
	drift_params d = drift_defaults();
	printf("Usage: mixprec drift [--x0 V] [--steps T] [--elements E] [--dist D] [--mean M]\n"
	       "                     [--std S] [--seed N] [--csv FILE] [--sweep x0=V,V,...]\n"
	       "                     [--device cpu|cuda]\n"
	       "Simulates a residual value that keeps receiving small updates: E independent\n"
	       "values start at x0 and each gets T updates, stored as fp64 (the reference),\n"
	       "fp32, bf16 with round-to-nearest (rne), stochastic rounding (sr) and Kahan\n"
	       "compensation (a bf16 value and a bf16 compensation term), and fp16 (rne).\n"
	       "Every variant gets the identical fp32 update sequence; an addition is done\n"
	       "in fp32 and its result rounded to the variant's format, as hardware does.\n\n"
	       "  --x0 V          starting value (default %g; near 600 the bf16 spacing is 4)\n"
	       "  --steps T       updates per value (default %zu)\n"
	       "  --elements E    independent values (default %zu)\n"
	       "  --dist D        constant, uniform or normal (default normal)\n"
	       "  --mean M        mean update (default %g)\n"
	       "  --std S         standard deviation of the update (default %g)\n"
	       "  --seed N        seed of the updates and of stochastic rounding (default 0)\n"
	       "  --csv FILE      trajectories (FILE may be -): variant,step,mean,drift,\n"
	       "                  retained,unchanged_frac, at most 2,000 rows; each\n"
	       "                  variant's last row is final\n"
	       "  --sweep x0=LIST one row per starting value, e.g.\n"
	       "                  --sweep x0=1,10,100,600,1000,10000\n"
	       "                  (with --csv: x0,variant,start,drift,retained,unchanged_frac)\n"
	       "  --device D      cpu (default) or cuda: the same results on the GPU, for\n"
	       "                  large E x T (needs a build with CUDA and a GPU; else exit 3)\n"
	       "  --ema           Adam's second moment in bf16 or fp16 instead: where it\n"
	       "                  stops (see 'mixprec drift --ema --help')\n"
	       "  -h, --help      this text\n\n"
	       "drift = mean - start (start: x0 as the variant stores it); retained = drift /\n"
	       "fp64's drift; unchanged = share of updates that left the value unchanged.\n"
	       "Ctrl-C stops early and keeps what was written.\n",
	       d.x0, d.steps, d.elements, d.mean, d.std);
}

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void print_table(const drift_params *p, const drift_state st[DRIFT_VARIANT_COUNT], size_t steps)
{
	printf("drift: x0 = %g, %zu steps of %s updates (mean %g, std %g), %zu values, seed %llu\n\n", p->x0,
	       steps, drift_dist_name(p->dist), p->mean, p->std, p->elements, (unsigned long long)p->seed);
	printf("%-11s %14s %14s %14s %10s %10s\n", "variant", "start", "final mean", "drift", "retained",
	       "unchanged");
	for (int v = 0; v < DRIFT_VARIANT_COUNT; v++) {
		if (!isfinite(st[v].start)) {
			printf("%-11s %14.6g   x0 overflows this format: nothing to measure\n",
			       drift_variant_name((drift_variant)v), st[v].start);
			continue;
		}
		printf("%-11s %14.6g %14.8g %14.6g %9.1f%% %9.1f%%\n", drift_variant_name((drift_variant)v),
		       st[v].start, st[v].mean, st[v].drift, 100 * st[v].retained, 100 * st[v].unchanged_frac);
	}
}

/* One trajectory row: variant,step,mean,drift,retained,unchanged_frac. */
static void csv_state_row(csvw *w, const char *variant, size_t step, const drift_state *s)
{
	csvw_field(w, variant);
	csvw_fieldf(w, "%zu", step);
	if (!isfinite(s->start)) {
		/* x0 overflows the variant's format: no trajectory to report */
		csvw_field(w, "");
		csvw_field(w, "");
		csvw_field(w, "");
		csvw_field(w, "");
		csvw_end_row(w);
		return;
	}
	csvw_fieldf(w, "%.17g", s->mean);
	csvw_fieldf(w, "%.17g", s->drift);
	if (isnan(s->retained))
		csvw_field(w, "");
	else
		csvw_fieldf(w, "%.17g", s->retained);
	csvw_fieldf(w, "%.17g", s->unchanged_frac);
	csvw_end_row(w);
}

/* Runs one simulation; writes trajectory rows to w when not NULL. */
static int run_one(const drift_params *p, csvw *w, drift_state final[DRIFT_VARIANT_COUNT], size_t *steps_done)
{
	drift_sim *sim;
	char err[512];
	mp_status st = drift_create(&sim, p, err, sizeof err);
	if (st != MP_OK && p->device == DRIFT_DEVICE_CUDA && st != MP_EINVAL) {
		cli_error("drift", "--device cuda: %s", err);
		return CLI_ENV;
	}
	if (st != MP_OK) {
		cli_error("drift", "cannot set up the simulation: %s", mp_status_message(st));
		return st == MP_ENOMEM ? CLI_ENV : CLI_USAGE;
	}
	/* at most 2,000 rows: (points + 1) per variant */
	size_t points = 2000 / DRIFT_VARIANT_COUNT - 1;
	size_t every = p->steps / points + (p->steps % points != 0);
	if (every == 0)
		every = 1;
	bool progress = isatty(STDERR_FILENO) && (double)p->steps * (double)p->elements > 2e7;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	drift_state s[DRIFT_VARIANT_COUNT];
	/* trajectory points are kept per variant and written variant by variant */
	size_t npts = 0, cap = points + 2;
	drift_state *traj = w ? malloc(cap * DRIFT_VARIANT_COUNT * sizeof *traj) : NULL;
	size_t *tstep = w ? malloc(cap * sizeof *tstep) : NULL;
	if (w && (!traj || !tstep)) {
		free(traj);
		free(tstep);
		drift_free(sim);
		cli_error("drift", "out of memory");
		return CLI_ENV;
	}
	size_t done = 0;
	for (;;) {
		if (w && npts < cap) {
			drift_snapshot(sim, s);
			memcpy(traj + npts * DRIFT_VARIANT_COUNT, s, sizeof s);
			tstep[npts++] = done;
		}
		if (done >= p->steps || interrupted || drift_status(sim) != MP_OK)
			break;
		done = drift_advance(sim, every);
		if (progress) {
			struct timespec t;
			clock_gettime(CLOCK_MONOTONIC, &t);
			double el = (double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec);
			double eta = done ? el * (double)(p->steps - done) / (double)done : 0;
			fprintf(stderr, "\rdrift: step %zu/%zu, %.0f s left   ", done, p->steps, eta);
		}
	}
	if (progress)
		fprintf(stderr, "\r%60s\r", "");
	drift_snapshot(sim, final);
	if (drift_status(sim) != MP_OK) {
		cli_error("drift", "--device cuda: stopped at step %zu: %s", done, drift_error(sim));
		free(traj);
		free(tstep);
		drift_free(sim);
		return CLI_ENV;
	}
	if (w) {
		/* the last point is the final state; retained is relative to fp64 at that step */
		for (int v = 0; v < DRIFT_VARIANT_COUNT; v++)
			for (size_t k = 0; k < npts; k++)
				csv_state_row(w, drift_variant_name((drift_variant)v), tstep[k],
				              &traj[k * DRIFT_VARIANT_COUNT + (size_t)v]);
	}
	*steps_done = done;
	free(traj);
	free(tstep);
	drift_free(sim);
	return CLI_OK;
}

/* The command line into o: the exit status, CLI_OK to go on or after
 * --help (printed; o->help); a failure is reported. */
static int parse_drift_opts(int argc, char **argv, drift_opts *o)
{
	char err[512];
	mp_status st = drift_opts_parse(argc, argv, o, err, sizeof err);
	if (st != MP_OK) {
		cli_error("drift", "%s", err);
		return st == MP_ENOMEM ? CLI_ENV : CLI_USAGE;
	}
	if (o->ema)
		return CLI_OK;
	if (o->help) {
		drift_help();
		return cli_flush_stdout("drift") ? CLI_OK : CLI_ENV;
	}
	char why[384];
	if (o->p.device == DRIFT_DEVICE_CUDA && gpu_ready(NULL, why, sizeof why) != MP_OK) {
		cli_error("drift", "--device cuda: %s", why);
		return CLI_ENV;
	}
	return CLI_OK;
}

/* One sweep row per variant: x0,variant,start,drift,retained,unchanged_frac. */
static void csv_sweep_rows(csvw *w, double x0, const drift_state st[DRIFT_VARIANT_COUNT])
{
	char x0s[64];
	snprintf(x0s, sizeof x0s, "%.17g", x0);
	for (int v = 0; v < DRIFT_VARIANT_COUNT; v++) {
		csvw_field(w, x0s);
		csvw_field(w, drift_variant_name((drift_variant)v));
		csvw_fieldf(w, "%.17g", st[v].start);
		if (isfinite(st[v].start))
			csvw_fieldf(w, "%.17g", st[v].drift);
		else
			csvw_field(w, "");
		if (isnan(st[v].retained))
			csvw_field(w, "");
		else
			csvw_fieldf(w, "%.17g", st[v].retained);
		csvw_fieldf(w, "%.17g", st[v].unchanged_frac);
		csvw_end_row(w);
	}
}

static void print_sweep_header(const drift_params *p)
{
	printf("drift sweep: %zu steps of %s updates (mean %g, std %g), %zu values, seed %llu\n"
	       "retained share of the fp64 drift:\n\n%-10s", p->steps, drift_dist_name(p->dist), p->mean, p->std,
	       p->elements, (unsigned long long)p->seed, "x0");
	for (int v = 1; v < DRIFT_VARIANT_COUNT; v++)
		printf(" %11s", drift_variant_name((drift_variant)v));
	printf("\n");
}

static void print_sweep_row(double x0, const drift_state st[DRIFT_VARIANT_COUNT])
{
	printf("%-10g", x0);
	for (int v = 1; v < DRIFT_VARIANT_COUNT; v++) {
		if (isfinite(st[v].start))
			printf(" %10.1f%%", 100 * st[v].retained);
		else
			printf(" %11s", "overflow");
	}
	printf("\n");
}

/* Runs one simulation per starting value of the sweep; the CSV to fp (may be
 * NULL), the table to stdout unless fp is stdout. */
static int run_sweep(const drift_opts *o, FILE *fp, csvw *w, size_t *done)
{
	drift_state st[DRIFT_VARIANT_COUNT];
	if (fp)
		csvw_header(w, "x0,variant,start,drift,retained,unchanged_frac");
	if (fp != stdout)
		print_sweep_header(&o->p);
	int rc = CLI_OK;
	for (size_t i = 0; i < o->nx && rc == CLI_OK && !interrupted; i++) {
		drift_params q = o->p;
		q.x0 = o->xs[i];
		q.have_starts = true;
		memcpy(q.starts, o->xstarts[i], sizeof q.starts);
		rc = run_one(&q, NULL, st, done);
		if (rc != CLI_OK)
			break;
		if (fp)
			csv_sweep_rows(w, o->xs[i], st);
		if (fp != stdout)
			print_sweep_row(o->xs[i], st);
	}
	return rc;
}

/* One simulation; its trajectories to fp (may be NULL), the table to stdout
 * unless fp is stdout. */
static int run_single(const drift_params *p, FILE *fp, csvw *w, size_t *done)
{
	drift_state st[DRIFT_VARIANT_COUNT];
	if (fp)
		csvw_header(w, "variant,step,mean,drift,retained,unchanged_frac");
	int rc = run_one(p, fp ? w : NULL, st, done);
	if (rc == CLI_OK && fp != stdout)
		print_table(p, st, *done);
	return rc;
}

int cmd_drift(int argc, char **argv)
{
	drift_opts o;
	int rc = parse_drift_opts(argc, argv, &o);
	if (rc == CLI_OK && o.ema)
		return cmd_drift_ema(argc, argv);
	if (rc != CLI_OK || o.help)
		return rc;

	FILE *fp = NULL;
	file_atomic out;
	if (o.csv_path && !cli_out_open("drift", "--csv", o.csv_path, &out, &fp))
		return CLI_ENV;
	csvw w;
	if (fp)
		csvw_init(&w, fp);
	struct sigaction sa = { .sa_handler = on_sigint }, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);

	size_t done = 0;
	rc = o.sweep ? run_sweep(&o, fp, &w, &done) : run_single(&o.p, fp, &w, &done);
	sigaction(SIGINT, &old, NULL);
	if (interrupted)
		cli_error("drift", "interrupted after %zu steps; what was computed has been written", done);
	if (!cli_out_close("drift", "--csv", &out, fp, rc == CLI_OK))
		rc = CLI_ENV;
	if (!cli_flush_stdout("drift"))
		return CLI_ENV;
	if (interrupted && rc == CLI_OK)
		rc = 130;
	return rc;
}
