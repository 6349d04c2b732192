#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "drift/drift.h"
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

/* A number in the full syntax (0.5, 2^9, 3*2^-10, 1/3, ...), finite, to the
 * nearest binary64; with starts, also rounded exactly into every variant's
 * format (no detour through binary64). */
static bool parse_double(const char *opt, const char *text, double *v, double *starts)
{
	double scratch[DRIFT_VARIANT_COUNT];
	char err[300];
	if (drift_parse_start(text, v, starts ? starts : scratch, err, sizeof err) != MP_OK) {
		cli_error("drift", "%s: %s", opt, err);
		return false;
	}
	return true;
}

static bool parse_size(const char *opt, const char *text, size_t *v, size_t max)
{
	unsigned long long x;
	if (!cli_parse_u64("drift", opt, text, &x))
		return false;
	if (x < 1 || x > max) {
		cli_error("drift", "%s: %llu is out of range (1..%zu)", opt, x, max);
		return false;
	}
	*v = (size_t)x;
	return true;
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

/* What the command line asks for. */
typedef struct {
	drift_params p;
	const char *csv_path, *sweep;
	double xs[64], xstarts[64][DRIFT_VARIANT_COUNT];   /* --sweep's starting values */
	size_t nx;
	bool help;   /* --help was printed: nothing more to do */
} drift_opts;

/* --device D: CLI_OK, or the exit status (reported). */
static int parse_device(const char *text, drift_params *p)
{
	if (!strcmp(text, "cpu")) {
		p->device = DRIFT_DEVICE_CPU;
	} else if (!strcmp(text, "cuda")) {
		char why[384];
		if (gpu_ready(NULL, why, sizeof why) != MP_OK) {
			cli_error("drift", "--device cuda: %s", why);
			return CLI_ENV;
		}
		p->device = DRIFT_DEVICE_CUDA;
	} else {
		cli_error("drift", "--device: unknown device '%s' (known: cpu, cuda)", text);
		return CLI_USAGE;
	}
	return CLI_OK;
}

/* One option (getopt's c, its value in optarg) into o: the exit status,
 * CLI_OK to go on or after --help (o->help); a failure is reported. */
static int parse_option(drift_opts *o, int c, const char *value, char **argv)
{
	drift_params *p = &o->p;
	unsigned long long u;
	switch (c) {
	case CLI_ARG_VALUE:
		cli_error("drift", "unexpected argument '%s' (see 'mixprec drift --help')", value);
		return CLI_USAGE;
	case 'x':
		if (!parse_double("--x0", optarg, &p->x0, p->starts))
			return CLI_USAGE;
		p->have_starts = true;
		break;
	case 'T': if (!parse_size("--steps", optarg, &p->steps, (size_t)1 << 40)) return CLI_USAGE; break;
	case 'E': if (!parse_size("--elements", optarg, &p->elements, (size_t)1 << 32)) return CLI_USAGE; break;
	case 'm': if (!parse_double("--mean", optarg, &p->mean, NULL)) return CLI_USAGE; break;
	case 's':
		if (!parse_double("--std", optarg, &p->std, NULL))
			return CLI_USAGE;
		if (p->std < 0) {
			cli_error("drift", "--std: must not be negative");
			return CLI_USAGE;
		}
		break;
	case 'd':
		if (drift_dist_parse(optarg, &p->dist) != MP_OK) {
			cli_error("drift", "--dist: unknown distribution '%s' (known: constant, uniform, normal)", optarg);
			return CLI_USAGE;
		}
		break;
	case 'S':
		if (!cli_parse_u64("drift", "--seed", optarg, &u))
			return CLI_USAGE;
		p->seed = u;
		break;
	case 'c': o->csv_path = optarg; break;
	case 'w': o->sweep = optarg; break;
	case 'D': {
		int rc = parse_device(optarg, p);
		if (rc != CLI_OK)
			return rc;
		break;
	}
	case 'h':
		drift_help();
		o->help = true;
		return cli_flush_stdout("drift") ? CLI_OK : CLI_ENV;
	case ':':
	default:
		return cli_option_error("drift", c, argv);
	}
	return CLI_OK;
}

/* --sweep x0=V,V,... into o->xs and o->xstarts: CLI_OK, or the exit status
 * (reported). */
static int parse_sweep(drift_opts *o)
{
	const char *sweep = o->sweep;
	if (strncmp(sweep, "x0=", 3) != 0) {
		cli_error("drift", "--sweep: expected x0=V,V,... (got '%s')", sweep);
		return CLI_USAGE;
	}
	char *copy = strdup(sweep + 3), *rest = copy;
	if (!copy)
		return CLI_ENV;
	/* strsep, not strtok: an empty item (x0=1,,2) is refused, as round's --to does */
	for (char *tok; rest && (tok = strsep(&rest, ","));) {
		if (!*tok && (tok != copy || rest)) {
			cli_error("drift", "--sweep: an empty value in '%s'", sweep);
			free(copy);
			return CLI_USAGE;
		}
		if (!*tok)
			break;   /* x0= alone: reported below */
		size_t max = sizeof o->xs / sizeof o->xs[0];
		if (o->nx == max || !parse_double("--sweep", tok, &o->xs[o->nx], o->xstarts[o->nx])) {
			if (o->nx == max)
				cli_error("drift", "--sweep: at most %zu values", o->nx);
			free(copy);
			return CLI_USAGE;
		}
		o->nx++;
	}
	free(copy);
	if (o->nx == 0) {
		cli_error("drift", "--sweep: no values after x0=");
		return CLI_USAGE;
	}
	return CLI_OK;
}

/* The command line into o: the exit status, CLI_OK to go on or after
 * --help (o->help); a failure is reported. */
static int parse_drift_opts(int argc, char **argv, drift_opts *o)
{
	static const struct option opts[] = {
		{ "x0", required_argument, NULL, 'x' },
		{ "steps", required_argument, NULL, 'T' },
		{ "elements", required_argument, NULL, 'E' },
		{ "dist", required_argument, NULL, 'd' },
		{ "mean", required_argument, NULL, 'm' },
		{ "std", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },
		{ "csv", required_argument, NULL, 'c' },
		{ "sweep", required_argument, NULL, 'w' },
		{ "device", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	o->p = drift_defaults();
	o->csv_path = o->sweep = NULL;
	o->nx = 0;
	o->help = false;
	cli_args args = { 0 };
	char *value;
	int c;
	while ((c = cli_getopt(&args, argc, argv, opts, &value)) != -1) {
		int rc = parse_option(o, c, value, argv);
		if (rc != CLI_OK || o->help)
			return rc;
	}
	return o->sweep ? parse_sweep(o) : CLI_OK;
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
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--ema"))
			return cmd_drift_ema(argc, argv);
	drift_opts o;
	int rc = parse_drift_opts(argc, argv, &o);
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
