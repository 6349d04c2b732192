/* mixprec amax: one tensor's per-step amax replayed through Transformer
 * Engine's delayed and current scaling (train/amax_replay.h computes,
 * this file parses and prints). */
#include <float.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "train/amax_replay.h"
#include "util/csvout.h"

enum { STEPS_LIMIT = 1000000 };

typedef struct {
	float *amax;
	size_t n, cap;
	bool given;               /* --amax was given */
	amax_replay_cfg cfg;
	bool csv;
} amax_args;

static void amax_help(void)
{
	printf("Usage: mixprec amax [--amax A,A,...] [--history H] [--algo max|most_recent]\n"
	       "                    [--margin M] [--format e4m3|e5m2] [--csv]\n"
	       "Replays one tensor's amax (its largest magnitude), step by step, through the\n"
	       "two per-tensor fp8 scaling rules of NVIDIA's Transformer Engine:\n"
	       "  delayed (DelayedScaling): a step casts with the scale left by the earlier\n"
	       "    steps, fp8_max / amax_h / 2^margin, amax_h the largest amax of the last H\n"
	       "    steps (max) or the last one (most_recent); the step's own amax enters the\n"
	       "    history after the cast; the first step casts with 1;\n"
	       "  current (Float8CurrentScaling): scale = fp8_max / (this step's amax).\n"
	       "A step saturates when its largest element, amax x scale, rounds past fp8_max\n"
	       "and is clipped to it (as mixprec train counts overflow_frac).\n\n"
	       "  --amax A,A,...  the amax of steps 1, 2, ... (each >= 0, finite); without it,\n"
	       "                  one value per line of standard input\n"
	       "  --history H     amax history length (default 16; 1..%d)\n"
	       "  --algo A        max (default) or most_recent\n"
	       "  --margin M      delayed: scale / 2^M (default 0; -%d..%d)\n"
	       "  --format F      e4m3 (default, max 448) or e5m2 (max 57344)\n"
	       "  --csv [-]       CSV: step,amax,history_amax,delayed_scale,delayed_peak,\n"
	       "                  delayed_of_max,delayed_saturates,delayed_stored,current_scale,\n"
	       "                  current_peak,current_saturates,current_stored\n"
	       "Columns: d_peak = amax x d_scale, d_use = d_peak / fp8_max (above 1: clipped;\n"
	       "far below 1: the small values fall off the bottom of the format), d_stored =\n"
	       "what the largest element reads back as; c_ for current scaling.\n"
	       "Example: mixprec amax --amax 1,1,1,40,1,1,1,1,1 --history 4\n",
	       FP8_HISTORY_MAX, FP8_MARGIN_MAX, FP8_MARGIN_MAX);
}

/* One amax value into a (opt names where it came from). */
static bool add_value(amax_args *a, const char *opt, const char *text)
{
	double v;
	if (!cli_parse_real("amax", opt, text, 0, false, FLT_MAX, &v))
		return false;
	if (a->n == STEPS_LIMIT) {
		cli_error("amax", "%s: at most %d steps", opt, STEPS_LIMIT);
		return false;
	}
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		float *p = realloc(a->amax, cap * sizeof *p);
		if (!p) {
			cli_error("amax", "out of memory");
			return false;
		}
		a->amax = p;
		a->cap = cap;
	}
	a->amax[a->n++] = (float)v;
	return true;
}

static bool parse_list(amax_args *a, const char *text)
{
	char *copy = strdup(text), *save = NULL;
	if (!copy) {
		cli_error("amax", "out of memory");
		return false;
	}
	bool ok = true;
	for (char *tok = strtok_r(copy, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save))
		ok = add_value(a, "--amax", tok);
	free(copy);
	if (ok && a->n == 0) {
		cli_error("amax", "--amax: no value in '%s'", text);
		ok = false;
	}
	return ok;
}

/* The values from stdin, one per line (blank lines skipped); a bad line
 * is reported as "line N". */
static bool read_stdin(amax_args *a)
{
	char buf[512], where[32];
	size_t len, line = 0;
	int r;
	while ((r = cli_read_line(stdin, buf, sizeof buf, &len)) >= 0) {
		line++;
		snprintf(where, sizeof where, "line %zu", line);
		if (r == 1) {
			cli_error("amax", "%s: too long", where);
			return false;
		}
		while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
			buf[--len] = '\0';
		char *s = buf;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s && !add_value(a, where, s))
			return false;
	}
	if (a->n == 0) {
		cli_error("amax", "no amax: give --amax A,A,... or one value per line on standard input");
		return false;
	}
	return true;
}

enum { O_AMAX = 256, O_HISTORY, O_ALGO, O_MARGIN, O_FORMAT, O_CSV };

static bool amax_option(int c, const char *arg, amax_args *a)
{
	unsigned long long v;
	double m;
	switch (c) {
	case O_AMAX:
		a->given = true;
		return parse_list(a, arg);
	case O_HISTORY:
		if (!cli_parse_u64("amax", "--history", arg, &v))
			return false;
		if (v < 1 || v > FP8_HISTORY_MAX) {
			cli_error("amax", "--history: %llu is out of range (1..%d)", v, FP8_HISTORY_MAX);
			return false;
		}
		a->cfg.history = (size_t)v;
		return true;
	case O_ALGO:
		if (!strcmp(arg, "max") || !strcmp(arg, "most_recent")) {
			a->cfg.algo = strcmp(arg, "max") ? AMAX_ALGO_MOST_RECENT : AMAX_ALGO_MAX;
			return true;
		}
		cli_error("amax", "--algo: '%s' is neither max nor most_recent", arg);
		return false;
	case O_MARGIN:
		if (!cli_parse_real("amax", "--margin", arg, -FP8_MARGIN_MAX, false, FP8_MARGIN_MAX, &m))
			return false;
		if (m != (double)(int)m) {
			cli_error("amax", "--margin: %s is not a whole number", arg);
			return false;
		}
		a->cfg.margin = (int)m;
		return true;
	case O_FORMAT: {
		const fmt_info *f = fmt_find(arg);
		if (!f || (f->id != FMT_E4M3 && f->id != FMT_E5M2)) {
			cli_error("amax", "--format: '%s' is not an fp8 format of the recipes (e4m3, e5m2)", arg);
			return false;
		}
		a->cfg.fmt = f->id;
		return true;
	}
	default: return false;
	}
}

/* Parses argv into a; returns -1 to go on, else the exit status. */
static int amax_parse(int argc, char **argv, amax_args *a)
{
	static const struct option opts[] = {
		{ "amax", required_argument, NULL, O_AMAX },     { "history", required_argument, NULL, O_HISTORY },
		{ "algo", required_argument, NULL, O_ALGO },     { "margin", required_argument, NULL, O_MARGIN },
		{ "format", required_argument, NULL, O_FORMAT }, { "csv", no_argument, NULL, O_CSV },
		{ "help", no_argument, NULL, 'h' },              { 0 },
	};
	cli_args args = { 0 };
	char *value;
	int c;
	bool after_csv = false;   /* "--csv -" is "--csv", as train's --csv FILE takes "-" */
	while ((c = cli_getopt(&args, argc, argv, opts, &value)) != -1) {
		bool csv_dash = after_csv && c == CLI_ARG_VALUE && !strcmp(value, "-");
		after_csv = c == O_CSV;
		if (c == 'h') {
			amax_help();
			return cli_flush_stdout("amax") ? CLI_OK : CLI_ENV;
		}
		if (c == O_CSV || csv_dash) {
			a->csv = true;
		} else if (c == CLI_ARG_VALUE) {
			cli_error("amax", "unexpected argument '%s' (values go in --amax A,A,...)", value);
			return CLI_USAGE;
		} else if (c < O_AMAX || c > O_FORMAT) {
			return cli_option_error("amax", c, argv, opts);
		} else if (!amax_option(c, optarg, a)) {
			return CLI_USAGE;
		}
	}
	if (!a->given && !read_stdin(a))
		return CLI_USAGE;
	return -1;
}

/* --- output --- */

static void print_csv(const amax_replay_step *s, size_t n, float fmax)
{
	csvw w;
	csvw_init(&w, stdout);
	csvw_header(&w, "step,amax,history_amax,delayed_scale,delayed_peak,delayed_of_max,delayed_saturates,"
	            "delayed_stored,current_scale,current_peak,current_saturates,current_stored");
	for (size_t i = 0; i < n; i++) {
		csvw_fieldf(&w, "%zu", i + 1);
		csvw_fieldf(&w, "%.9g", (double)s[i].amax);
		csvw_fieldf(&w, "%.9g", (double)s[i].history_amax);
		csvw_fieldf(&w, "%.9g", (double)s[i].delayed_scale);
		csvw_fieldf(&w, "%.9g", s[i].delayed_peak);
		csvw_fieldf(&w, "%.9g", s[i].delayed_peak / fmax);
		csvw_field(&w, s[i].delayed_saturates ? "1" : "0");
		csvw_fieldf(&w, "%.9g", (double)s[i].delayed_stored);
		csvw_fieldf(&w, "%.9g", (double)s[i].current_scale);
		csvw_fieldf(&w, "%.9g", s[i].current_peak);
		csvw_field(&w, s[i].current_saturates ? "1" : "0");
		csvw_fieldf(&w, "%.9g", (double)s[i].current_stored);
		csvw_end_row(&w);
	}
}

/* The steps whose delayed cast saturates, as "4, 9" (at most a few). */
static void saturated_steps(const amax_replay_step *s, size_t n, char *out, size_t len)
{
	size_t used = 0, shown = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++) {
		if (!s[i].delayed_saturates)
			continue;
		if (shown++ == 8) {
			snprintf(out + used, len - used, ", ...");
			return;
		}
		used += (size_t)snprintf(out + used, len - used, "%s%zu", used ? ", " : "", i + 1);
	}
}

static void print_table(const amax_replay_step *s, size_t n, float next, const amax_replay_cfg *c, float fmax)
{
	printf("amax: %s (max %g), history %zu, algo %s, margin %d\n"
	       "delayed: scale from the steps before (1 at the start); current: fp8_max / amax\n\n",
	       fmt_get(c->fmt)->name, (double)fmax, c->history, c->algo == AMAX_ALGO_MAX ? "max" : "most_recent",
	       c->margin);
	printf("%5s %10s %10s %10s %9s %5s %9s %9s %5s\n", "step", "amax", "d_scale", "d_peak", "d_use", "d_sat",
	       "d_stored", "c_scale", "c_sat");
	size_t dsat = 0, csat = 0, worst = 0;
	for (size_t i = 0; i < n; i++) {
		const amax_replay_step *p = &s[i];
		printf("%5zu %10.4g %10.4g %10.4g %9.4g %5s %9.4g %9.4g %5s\n", i + 1, (double)p->amax,
		       (double)p->delayed_scale, p->delayed_peak, p->delayed_peak / fmax, p->delayed_saturates ? "yes" : "no",
		       (double)p->delayed_stored, (double)p->current_scale, p->current_saturates ? "yes" : "no");
		dsat += p->delayed_saturates;
		csat += p->current_saturates;
		if (p->delayed_peak > s[worst].delayed_peak)
			worst = i;
	}
	char steps[128];
	saturated_steps(s, n, steps, sizeof steps);
	printf("\ndelayed: saturates on %zu of %zu steps%s%s%s\n", dsat, n, dsat > 1 ? " (steps " : dsat ? " (step " : "",
	       steps, dsat ? ")" : "");
	if (dsat)
		printf("delayed: the worst, step %zu, is %.4g times fp8_max\n", worst + 1, s[worst].delayed_peak / fmax);
	printf("current: saturates on %zu of %zu steps\n", csat, n);
	printf("delayed: the next step would cast with %.6g\n", (double)next);
}

int cmd_amax(int argc, char **argv)
{
	amax_args a = { .cfg = { .fmt = FMT_E4M3, .history = 16, .algo = AMAX_ALGO_MAX, .margin = 0 } };
	int rc = amax_parse(argc, argv, &a);
	if (rc >= 0) {
		free(a.amax);
		return rc;
	}
	amax_replay_step *s = calloc(a.n, sizeof *s);
	float next;
	if (!s || amax_replay(s, &next, a.amax, a.n, &a.cfg) != MP_OK) {
		/* the parser checked every value and option: only memory is left */
		cli_error("amax", "out of memory");
		free(s);
		free(a.amax);
		return CLI_ENV;
	}
	float fmax = amax_replay_fp8_max(a.cfg.fmt);
	if (a.csv)
		print_csv(s, a.n, fmax);
	else
		print_table(s, a.n, next, &a.cfg, fmax);
	free(s);
	free(a.amax);
	return cli_flush_stdout("amax") ? CLI_OK : CLI_ENV;
}
