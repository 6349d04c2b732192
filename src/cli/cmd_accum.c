/* mixprec accum: the relative error of a K-long dot product summed by a
 * tensor core's truncating accumulator, with and without promotion to fp32,
 * against K. The model and its sources are train/accum.h's. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "train/accum.h"
#include "util/csvout.h"

enum { MAX_K = 32, K_LIMIT = 1 << 20, TRIALS_LIMIT = 100000 };

typedef struct {
	size_t k[MAX_K], nk;
	size_t at;                /* the K of the summary under the table */
	accum_cfg acc;            /* bits, block, promote_every (0: no promoted rows) */
	fmt_id fmt;
	accum_dist dist;
	size_t trials;
	unsigned long long seed;
	bool csv;
} accum_args;

/* One series of the output: an accumulator configuration and its name. */
typedef struct {
	char name[48];
	accum_cfg c;
} accum_series;

static void accum_help(void)
{
	printf("Usage: mixprec accum [--k LIST] [--at K] [--bits N] [--promote-every K]\n"
	       "                     [--block B] [--format F] [--dist positive|mixed]\n"
	       "                     [--trials T] [--seed S] [--csv]\n"
	       "The relative error of K-long dot products summed the way Hopper's fp8 tensor\n"
	       "cores sum them, against the exact dot (MPFR), per K: with the partial sum\n"
	       "alone, with it promoted into an fp32 accumulator every K products (as\n"
	       "DeepSeek-V3 does every 128), and with an fp32 accumulator for reference.\n"
	       "Tensor-core model: a block of B products (exact) and the partial sum are\n"
	       "aligned to the largest exponent E, each truncated toward zero to a multiple\n"
	       "of 2^(E-N+1), summed exactly, stored in fp32 rounded toward zero.\n\n"
	       "  --k LIST           dot lengths (default 128,256,512,1024,2048,4096,8192,\n"
	       "                     16384; each 1..%d)\n"
	       "  --at K             the K of the summary under the table (default 4096):\n"
	       "                     the largest error with and without promotion, in both\n"
	       "                     measures below (--csv: the rows of that K hold them)\n"
	       "  --bits N           bits the partial sum keeps (default 14; 2..24, 24: fp32)\n"
	       "  --promote-every K  products between promotions (default 128; 0: none)\n"
	       "  --block B          products aligned together (default 32, Hopper fp8)\n"
	       "  --format F         the operands' format (default fp8-e4m3; RNE, saturating)\n"
	       "  --dist D           operands uniform on [0,1) (positive: every product > 0,\n"
	       "                     the default) or on [-1,1) (mixed signs)\n"
	       "  --trials T         dots per K (default 100; operand k of trial t is the same\n"
	       "                     for every K and every accumulator)\n"
	       "  --seed S           (default %d)\n"
	       "  --csv              CSV: k,accumulator,bits,block,promote_every,format,dist,\n"
	       "                     trials,max_rel_error,mean_rel_error,max_scaled_error\n"
	       "rel_error = |dot - exact| / |exact| (the summary's 'relative'); scaled_error =\n"
	       "|dot - exact| / sum |x y| (its 'normwise': the measure of error analysis,\n"
	       "which stays meaningful where cancellation makes |exact| tiny).\n"
	       "Plot: mixprec accum --csv > a.csv; mixprec plot a.csv --x k --y max_rel_error\n"
	       "      --by accumulator --logx --logy\n",
	       K_LIMIT, ACCUM_SEED_DEFAULT);
}

/* --k: a comma-separated list of lengths. */
static bool parse_k_list(const char *text, accum_args *a)
{
	char *copy = strdup(text), *save = NULL;
	if (!copy) {
		cli_error("accum", "out of memory");
		return false;
	}
	a->nk = 0;
	bool ok = true;
	for (char *tok = strtok_r(copy, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long long v;
		if (a->nk == MAX_K) {
			cli_error("accum", "--k: at most %d lengths", MAX_K);
			ok = false;
		} else if (!cli_parse_u64("accum", "--k", tok, &v)) {
			ok = false;
		} else if (v < 1 || v > K_LIMIT) {
			cli_error("accum", "--k: %llu is out of range (1..%d)", v, K_LIMIT);
			ok = false;
		} else {
			a->k[a->nk++] = (size_t)v;
		}
	}
	if (ok && a->nk == 0) {
		cli_error("accum", "--k: no length in '%s'", text);
		ok = false;
	}
	free(copy);
	return ok;
}

enum { O_K = 256, O_AT, O_BITS, O_PROMOTE, O_BLOCK, O_FORMAT, O_DIST, O_TRIALS, O_SEED, O_CSV };

/* One option into a; returns false after reporting a bad one. */
static bool accum_option(int c, const char *arg, accum_args *a)
{
	unsigned long long v;
	switch (c) {
	case O_K: return parse_k_list(arg, a);
	case O_AT:
		if (!cli_parse_count("accum", "--at", arg, 1, K_LIMIT, &v))
			return false;
		a->at = (size_t)v;
		return true;
	case O_BITS:
		if (!cli_parse_count("accum", "--bits", arg, ACCUM_BITS_MIN, ACCUM_BITS_FP32, &v))
			return false;
		a->acc.bits = (int)v;
		return true;
	case O_PROMOTE:
		if (!cli_parse_count("accum", "--promote-every", arg, 0, K_LIMIT, &v))
			return false;
		a->acc.promote_every = (size_t)v;
		return true;
	case O_BLOCK:
		if (!cli_parse_count("accum", "--block", arg, 1, ACCUM_BLOCK_MAX, &v))
			return false;
		a->acc.block = (size_t)v;
		return true;
	case O_FORMAT: {
		const fmt_info *f = fmt_find(arg);
		if (!f) {
			cli_error("accum", "--format: unknown format '%s' (known: %s)", arg, fmt_known_names());
			return false;
		}
		a->fmt = f->id;
		return true;
	}
	case O_DIST:
		if (!accum_dist_parse(arg, &a->dist)) {
			cli_error("accum", "--dist: '%s' is neither positive nor mixed", arg);
			return false;
		}
		return true;
	case O_TRIALS:
		if (!cli_parse_count("accum", "--trials", arg, 1, TRIALS_LIMIT, &v))
			return false;
		a->trials = (size_t)v;
		return true;
	case O_SEED: return cli_parse_u64("accum", "--seed", arg, &a->seed);
	default: return false;
	}
}

/* Parses argv into a; returns -1 to go on, else the exit status. */
static int accum_parse(int argc, char **argv, accum_args *a)
{
	static const struct option opts[] = {
		{ "k", required_argument, NULL, O_K },           { "at", required_argument, NULL, O_AT },
		{ "bits", required_argument, NULL, O_BITS },
		{ "promote-every", required_argument, NULL, O_PROMOTE },
		{ "block", required_argument, NULL, O_BLOCK },   { "format", required_argument, NULL, O_FORMAT },
		{ "dist", required_argument, NULL, O_DIST },     { "trials", required_argument, NULL, O_TRIALS },
		{ "seed", required_argument, NULL, O_SEED },     { "csv", no_argument, NULL, O_CSV },
		{ "help", no_argument, NULL, 'h' },              { 0 },
	};
	*a = (accum_args){ .acc = { .bits = 14, .block = ACCUM_BLOCK_HOPPER, .promote_every = 128 },
		           .fmt = FMT_E4M3, .dist = ACCUM_DIST_POSITIVE, .trials = 100, .seed = ACCUM_SEED_DEFAULT, .at = 4096,
		           .k = { 128, 256, 512, 1024, 2048, 4096, 8192, 16384 }, .nk = 8 };
	cli_args args = { 0 };
	char *value;
	int c;
	while ((c = cli_getopt(&args, argc, argv, opts, &value)) != -1) {
		if (c == 'h') {
			accum_help();
			return cli_flush_stdout("accum") ? CLI_OK : CLI_ENV;
		}
		if (c == O_CSV) {
			a->csv = true;
		} else if (c == CLI_ARG_VALUE) {
			cli_error("accum", "unexpected argument '%s'", value);
			return CLI_USAGE;
		} else if (c < O_K || c > O_SEED) {
			return cli_option_error("accum", c, argv, opts);
		} else if (!accum_option(c, optarg, a)) {
			return CLI_USAGE;
		}
	}
	return -1;
}

/* The series: the partial sum alone, promoted (when asked), fp32. */
static size_t accum_series_of(const accum_args *a, accum_series *s)
{
	size_t n = 0;
	s[n].c = (accum_cfg){ .bits = a->acc.bits, .block = a->acc.block };
	snprintf(s[n++].name, sizeof s[0].name, "%d-bit", a->acc.bits);
	if (a->acc.promote_every) {
		s[n].c = a->acc;
		snprintf(s[n++].name, sizeof s[0].name, "%d-bit+fp32/%zu", a->acc.bits, a->acc.promote_every);
	}
	s[n].c = (accum_cfg){ .bits = ACCUM_BITS_FP32, .block = 1 };
	snprintf(s[n++].name, sizeof s[0].name, "fp32");
	return n;
}

static void print_csv_row(csvw *w, const accum_args *a, size_t k, const accum_series *s, const accum_error *e)
{
	csvw_fieldf(w, "%zu", k);
	csvw_field(w, s->name);
	csvw_fieldf(w, "%d", s->c.bits);
	csvw_fieldf(w, "%zu", s->c.block);
	csvw_fieldf(w, "%zu", s->c.promote_every);
	csvw_field(w, fmt_get(a->fmt)->name);
	csvw_field(w, accum_dist_name(a->dist));
	csvw_fieldf(w, "%zu", a->trials);
	csvw_fieldf(w, "%.6g", e->max_rel);
	csvw_fieldf(w, "%.6g", e->mean_rel);
	csvw_fieldf(w, "%.6g", e->max_scaled);
	csvw_end_row(w);
}

static void print_heading(const accum_args *a, const accum_series *s, size_t ns)
{
	printf("accum: %zu dots per K of %s operands uniform on %s,\n"
	       "seed %llu; tensor core: blocks of %zu products aligned to the largest exponent,\n"
	       "%d bits kept (truncated toward zero). Errors relative to the exact dot (max and\n"
	       "mean over the dots; %%).\n\n%8s",
	       a->trials, fmt_get(a->fmt)->name, a->dist == ACCUM_DIST_MIXED ? "[-1, 1) (mixed signs)" : "[0, 1) (products > 0)",
	       a->seed, a->acc.block, a->acc.bits, "K");
	for (size_t i = 0; i < ns; i++)
		printf("  %21s", s[i].name);
	printf("\n%8s", "");
	for (size_t i = 0; i < ns; i++)
		printf("  %10s %10s", "max", "mean");
	printf("\n");
}

/* The summary under the table: at K = a->at, the largest error of the
 * partial sum alone and promoted (s[0], s[1] when promoted), in both
 * measures. Rows and columns are single words, so that a lesson's claims
 * can name them (promoted[normwise]). False when out of memory. */
static bool print_summary(const accum_args *a, const accum_series *s)
{
	size_t np = a->acc.promote_every ? 2 : 1;
	accum_error e[2];
	for (size_t i = 0; i < np; i++)
		if (accum_error_measure(&e[i], a->fmt, a->dist, a->at, a->trials, a->seed, &s[i].c) != MP_OK)
			return false;
	printf("\nAt K = %zu, %d bits, blocks of %zu: the largest error over the %zu dots\n", a->at, a->acc.bits,
	       a->acc.block, a->trials);
	if (np == 2)
		printf("(promoted: into fp32 every %zu products).\n", a->acc.promote_every);
	printf("%10s  %12s%s\n", "measure", "unpromoted", np == 2 ? "      promoted" : "");
	printf("%10s  %11.4g%%", "relative", 100 * e[0].max_rel);
	if (np == 2)
		printf("  %11.4g%%", 100 * e[1].max_rel);
	printf("\n%10s  %11.4g%%", "normwise", 100 * e[0].max_scaled);
	if (np == 2)
		printf("  %11.4g%%", 100 * e[1].max_scaled);
	printf("\nrelative: |dot - exact| / |exact|; normwise: |dot - exact| / sum |x y|, as\n"
	       "error analysis bounds a dot product (the same for positive products).\n");
	return true;
}

int cmd_accum(int argc, char **argv)
{
	accum_args a;
	int rc = accum_parse(argc, argv, &a);
	if (rc >= 0)
		return rc;
	accum_series s[3];
	size_t ns = accum_series_of(&a, s);
	csvw w;
	if (a.csv) {
		csvw_init(&w, stdout);
		csvw_header(&w, "k,accumulator,bits,block,promote_every,format,dist,trials,max_rel_error,mean_rel_error,"
		            "max_scaled_error");
	} else {
		print_heading(&a, s, ns);
	}
	for (size_t i = 0; i < a.nk; i++) {
		if (!a.csv)
			printf("%8zu", a.k[i]);
		for (size_t j = 0; j < ns; j++) {
			accum_error e;
			if (accum_error_measure(&e, a.fmt, a.dist, a.k[i], a.trials, a.seed, &s[j].c) != MP_OK) {
				cli_error("accum", "out of memory");
				return CLI_ENV;
			}
			if (a.csv)
				print_csv_row(&w, &a, a.k[i], &s[j], &e);
			else
				printf("  %9.4g%% %9.4g%%", 100 * e.max_rel, 100 * e.mean_rel);
		}
		if (!a.csv)
			printf("\n");
	}
	if (!a.csv && !print_summary(&a, s)) {
		cli_error("accum", "out of memory");
		return CLI_ENV;
	}
	return cli_flush_stdout("accum") ? CLI_OK : CLI_ENV;
}
