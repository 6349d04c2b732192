#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/lesson_runs.h"
#include "teach/lesson.h"
#include "teach/lesson_check.h"
#include "util/blas.h"
#include "util/file.h"

static void lesson_help(void)
{
	char lesson_folder[4096];
	printf("Usage: mixprec lesson list\n"
	       "       mixprec lesson show NAME [--width N]\n"
	       "       mixprec lesson commands NAME\n"
	       "       mixprec lesson check [NAME] [--seeds N] [--blas-cores LIST]\n"
	       "                            [--jobs N] [--ranges] [--mutate]\n"
	       "Lists the lessons, prints one as plain text (for reading or piping), or\n"
	       "lists the mixprec commands it suggests running, one per line.\n"
	       "check runs every command of a lesson (of every lesson without NAME) and\n"
	       "checks each claim written beside it; one line per claim: ok or FAIL, what\n"
	       "was measured, FILE:LINE. Exit 0 when all hold, 1 when one fails, 2 for a\n"
	       "malformed claim. The claim syntax is in lessons/README.md.\n\n"
	       "  --width N   wrap at N columns (default: the terminal's width, else 80)\n"
	       "  --seeds N   run each command whose claims compare or bound values N times,\n"
	       "              --seed shifted by 0..N-1; those claims must hold for every seed,\n"
	       "              comparisons with a margin at least the seed-to-seed spread\n"
	       "              (default 1)\n"
	       "  --blas-cores LIST  run each command that trains (train, gradhist) under\n"
	       "              each of these OpenBLAS core types (OPENBLAS_CORETYPE), every\n"
	       "              seed under each: native (OpenBLAS's own choice), Prescott,\n"
	       "              Core2, Nehalem, Sandybridge, Haswell, Zen, SkylakeX; those this\n"
	       "              CPU cannot run are left out and named (default: native only)\n"
	       "  --jobs N    runs at a time (default: the CPUs online)\n"
	       "  --ranges    for lesson authors: each claim also shows the range of its\n"
	       "              left side over every run of its block (seeds x core types)\n"
	       "  --mutate    also replace each value a claim reads, one at a time, by values\n"
	       "              just past what it tolerates: a claim that holds whatever they\n"
	       "              read is reported VACUOUS (exit 1); runs nothing more\n"
	       "  -h, --help  this text\n\n"
	       "Lessons are Markdown files in (MIXPREC_LESSONDIR points elsewhere):\n"
	       "  %s\n",
	       lesson_dir(lesson_folder, sizeof lesson_folder));
}

/* The lesson folder cannot be read: which places were tried, and the fix. */
static int lesson_folder_missing(void)
{
	char hint[8400];
	char lesson_folder[4096];
	const char *dir = lesson_dir(lesson_folder, sizeof lesson_folder);
	cli_error("lesson", "cannot read the lesson folder %s: %s", dir,
	          file_data_hint(hint, sizeof hint, "MIXPREC_LESSONDIR", dir));
	return CLI_ENV;
}

/* Loads lesson NAME from the lesson folder; reports failures. */
static int load_named(const char *name, lesson_doc *doc)
{
	if (!*name || strchr(name, '/') || name[0] == '.') {
		cli_error("lesson", "'%s' is not a lesson name (see 'mixprec lesson list')", name);
		return CLI_USAGE;
	}
	char path[4096], err[4200];
	char lesson_folder[4096];
	const char *dir = lesson_dir(lesson_folder, sizeof lesson_folder);
	snprintf(path, sizeof path, "%s/%s.md", dir, name);
	if (access(dir, F_OK) != 0)
		return lesson_folder_missing();
	if (access(path, F_OK) != 0) {
		cli_error("lesson", "no lesson '%s' (see 'mixprec lesson list')", name);
		return CLI_USAGE;
	}
	mp_status st = lesson_load(doc, path, err, sizeof err);
	if (st != MP_OK) {
		cli_error("lesson", "%s", st == MP_ENOMEM ? "out of memory" : err);
		return st == MP_EIO ? CLI_ENV : CLI_USAGE;
	}
	return CLI_OK;
}

/* --- lesson check --- */

/* What lesson check was asked: the seeds, the BLAS core types, the jobs. */
typedef struct {
	lesson_check_opts opts;
	const char *cores[16];
	char cores_text[256];   /* the --blas-cores list, split in place */
	size_t skipped;     /* core types this CPU cannot run */
	char skipped_names[200];
	size_t jobs;
} check_setup;

/* Checks one lesson; adds to the totals. Returns its exit status. */
static const char *item_label(const lesson_check_item *it)
{
	if (it->kind == LC_MALFORMED)
		return "BAD ";
	if (it->kind == LC_VACUOUS)
		return "VACUOUS";
	return it->ok ? "ok  " : "FAIL";
}

/* With record set, only notes the runs the lesson needs (nothing printed). */
static int check_one(const char *name, const check_setup *cs, lesson_runs *runs, bool record, size_t *claims,
                     size_t *failed)
{
	lesson_doc doc;
	char lesson_folder[4096];
	const char *dir = lesson_dir(lesson_folder, sizeof lesson_folder);
	if (record) {   /* a lesson that does not load is reported by the checking pass */
		char path[4200], err[4200];
		snprintf(path, sizeof path, "%s/%s.md", dir, name);
		if (lesson_load(&doc, path, err, sizeof err) != MP_OK)
			return CLI_OK;
	} else {
		int rc = load_named(name, &doc);
		if (rc != CLI_OK)
			return rc;
	}
	char file[4200];
	snprintf(file, sizeof file, "%s/%s.md", dir, name);
	lesson_check_report rep;
	mp_status st = lesson_check(&doc, &cs->opts, record ? lesson_runs_record : lesson_runs_lookup, runs, &rep);
	if (record) {
		lesson_check_report_free(&rep);
		lesson_free(&doc);
		return st == MP_OK ? CLI_OK : CLI_ENV;
	}
	for (size_t i = 0; i < rep.n; i++) {
		const lesson_check_item *it = &rep.items[i];
		const char *kind = it->kind == LC_BLOCK     ? "command "
		                   : it->kind == LC_UNBOUND ? "unbound "
		                   : it->kind == LC_RANGE   ? "range "
		                                            : "";
		printf("%s %s:%u: %s%s | %s\n", item_label(it), file, it->line, kind, it->detail, it->what);
	}
	*claims += rep.claims;
	*failed += rep.failed + rep.malformed;
	int rc = rep.malformed ? CLI_USAGE : rep.failed ? CLI_WRONG : CLI_OK;
	if (st != MP_OK) {
		cli_error("lesson", "%s: %s", file, st == MP_ENOMEM ? "out of memory" : "cannot run mixprec itself");
		rc = CLI_ENV;
	}
	lesson_check_report_free(&rep);
	lesson_free(&doc);
	return rc;
}

/* The lessons to check: NAME, or every lesson. */
static int check_names(const char *name, char ***names, size_t *n)
{
	if (name) {
		lesson_doc doc;
		int rc = load_named(name, &doc);
		if (rc != CLI_OK)
			return rc;   /* named and reported: no summary of nothing */
		lesson_free(&doc);
		*names = malloc(sizeof **names);
		if (!*names || ((*names)[0] = strdup(name)) == NULL) {
			free(*names);
			cli_error("lesson", "out of memory");
			return CLI_ENV;
		}
		*n = 1;
		return CLI_OK;
	}
	char lesson_folder[4096];
	if (lesson_list(lesson_dir(lesson_folder, sizeof lesson_folder), names, n) != MP_OK)
		return lesson_folder_missing();
	return CLI_OK;
}

/* lesson check [NAME]: every run the lessons need first (each distinct
 * command and core type once, cs->jobs at a time), then the claims; the
 * worst status of the lessons checked wins (environment over malformed
 * over wrong). */
static int check_lessons(const char *name, const check_setup *cs)
{
	char **names;
	size_t n, claims = 0, failed = 0;
	int rc = check_names(name, &names, &n);
	if (rc != CLI_OK)
		return rc;
	lesson_runs *runs = lesson_runs_new();
	if (!runs) {
		cli_error("lesson", "out of memory");
		rc = CLI_ENV;
	}
	for (size_t i = 0; rc == CLI_OK && i < n; i++)
		rc = check_one(names[i], cs, runs, true, &claims, &failed);   /* CLI_OK or CLI_ENV */
	if (rc == CLI_OK) {
		mp_status st = lesson_runs_fill(runs, cs->jobs, isatty(STDERR_FILENO));
		if (st != MP_OK) {
			cli_error("lesson", "%s", st == MP_ENOMEM ? "out of memory" : "cannot run mixprec itself");
			rc = CLI_ENV;
		}
	}
	for (size_t i = 0; rc != CLI_ENV && i < n; i++) {
		int r = check_one(names[i], cs, runs, false, &claims, &failed);
		rc = r > rc ? r : rc;
	}
	size_t nruns = runs ? lesson_runs_count(runs) : 0;
	lesson_runs_free(runs);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (rc == CLI_ENV)
		return rc;
	size_t seeds = cs->opts.seeds;
	printf("%zu claims, %zu failed or malformed, %zu seed%s", claims, failed, seeds, seeds == 1 ? "" : "s");
	if (cs->opts.ncores) {
		printf(", BLAS core types");
		for (size_t i = 0; i < cs->opts.ncores; i++)
			printf("%s%s", i ? "," : " ", cs->cores[i] ? cs->cores[i] : "native");
	}
	if (cs->skipped)
		printf(" (not run here: %s)", cs->skipped_names);
	printf("; %zu runs\n", nruns);
	if (!cli_flush_stdout("lesson"))
		return CLI_ENV;
	return rc;
}

/* --blas-cores LIST: each name known, the ones this CPU cannot run left
 * out (and named in the summary). */
static bool parse_cores(const char *list, check_setup *cs)
{
	if (strlen(list) >= sizeof cs->cores_text) {
		cli_error("lesson", "--blas-cores: a list of at most %zu characters", sizeof cs->cores_text - 1);
		return false;
	}
	strcpy(cs->cores_text, list);
	cs->opts.ncores = 0;
	cs->skipped = 0;
	cs->skipped_names[0] = '\0';
	for (char *save, *w = strtok_r(cs->cores_text, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		bool known;
		bool runs = blas_coretype_runs(w, &known);
		if (!known) {
			cli_error("lesson", "--blas-cores: unknown OpenBLAS core type '%s' (known: %s)", w,
			          blas_coretype_names());
			return false;
		}
		if (!runs) {
			size_t k = strlen(cs->skipped_names);
			snprintf(cs->skipped_names + k, sizeof cs->skipped_names - k, "%s%s", cs->skipped ? "," : "", w);
			cs->skipped++;
			continue;
		}
		if (cs->opts.ncores == sizeof cs->cores / sizeof cs->cores[0]) {
			cli_error("lesson", "--blas-cores: at most %zu core types", sizeof cs->cores / sizeof cs->cores[0]);
			return false;
		}
		cs->cores[cs->opts.ncores++] = strcasecmp(w, "native") ? w : NULL;
	}
	if (cs->opts.ncores == 0) {
		cli_error("lesson", "--blas-cores: none of '%s' runs on this CPU", list);
		return false;
	}
	return true;
}

/* lesson list: each lesson's name and title, in the course order. */
static int list_lessons(void)
{
	char **names;
	size_t n;
	char lesson_folder[4096];
	if (lesson_list(lesson_dir(lesson_folder, sizeof lesson_folder), &names, &n) != MP_OK)
		return lesson_folder_missing();
	int rc = CLI_OK;
	int width = 20;   /* the names' column: the longest name sets it */
	for (size_t i = 0; i < n; i++)
		if (strlen(names[i]) > (size_t)width && strlen(names[i]) < 200)
			width = (int)strlen(names[i]);
	for (size_t i = 0; i < n; i++) {
		lesson_doc doc;
		if (rc == CLI_OK && load_named(names[i], &doc) == CLI_OK) {
			/* a file name is not sanitised by the parser: no control bytes */
			for (char *p = names[i]; *p; p++)
				if ((unsigned char)*p < 0x20 || *p == 0x7f)
					*p = '?';
			printf("%-*s %s\n", width, names[i], doc.title);
			lesson_free(&doc);
		}
		free(names[i]);
	}
	free(names);
	return cli_flush_stdout("lesson") ? rc : CLI_ENV;
}

int cmd_lesson(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "width", required_argument, NULL, 'w' },
		{ "seeds", required_argument, NULL, 's' },
		{ "blas-cores", required_argument, NULL, 'b' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "ranges", no_argument, NULL, 'r' },
		{ "mutate", no_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	size_t width = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	check_setup cs = { .opts = { .seeds = 1, .blas_cores = cs.cores }, .jobs = ncpu > 0 ? (size_t)ncpu : 1 };
	const char *words[3] = { 0 };
	size_t nwords = 0;
	cli_args args = { 0 };
	char *value;
	int c;
	while ((c = cli_getopt(&args, argc, argv, opts, &value)) != -1) {
		unsigned long long u;
		switch (c) {
		case CLI_ARG_VALUE:
			if (nwords == 2) {
				cli_error("lesson", "unexpected argument '%s'", value);
				return CLI_USAGE;
			}
			words[nwords++] = value;
			break;
		case 'w':
			if (!cli_parse_count("lesson", "--width", optarg, 40, 1000, &u))
				return CLI_USAGE;
			width = (size_t)u;
			break;
		case 's':
			if (!cli_parse_count("lesson", "--seeds", optarg, 1, 100, &u))
				return CLI_USAGE;
			cs.opts.seeds = (size_t)u;
			break;
		case 'b':
			if (!parse_cores(optarg, &cs))
				return CLI_USAGE;
			break;
		case 'j':
			if (!cli_parse_count("lesson", "--jobs", optarg, 1, 64, &u))
				return CLI_USAGE;
			cs.jobs = (size_t)u;
			break;
		case 'r':
			cs.opts.ranges = true;
			break;
		case 'm':
			cs.opts.mutate = true;
			break;
		case 'h': lesson_help(); return cli_flush_stdout("lesson") ? CLI_OK : CLI_ENV;
		case ':':
		default:
			return cli_option_error("lesson", c, argv, opts);
		}
	}
	const char *verb = nwords ? words[0] : "list";
	if (!strcmp(verb, "list")) {
		if (nwords > 1) {
			cli_error("lesson", "list takes no argument");
			return CLI_USAGE;
		}
		return list_lessons();
	}
	if (!strcmp(verb, "check"))
		return check_lessons(nwords > 1 ? words[1] : NULL, &cs);
	if (strcmp(verb, "show") && strcmp(verb, "commands")) {
		cli_error("lesson", "unknown action '%s' (known: list, show, commands, check)", verb);
		return CLI_USAGE;
	}
	if (nwords < 2) {
		cli_error("lesson", "%s needs a lesson name (see 'mixprec lesson list')", verb);
		return CLI_USAGE;
	}
	lesson_doc doc;
	int rc = load_named(words[1], &doc);
	if (rc != CLI_OK)
		return rc;
	if (!strcmp(verb, "commands")) {
		for (size_t i = 0; i < doc.nblocks; i++) {
			const lesson_block *b = &doc.blocks[i];
			if (b->kind == LB_CODE && b->info && !strcmp(b->info, "mixprec"))
				fputs(b->text, stdout);
		}
	} else {
		if (!width) {
			struct winsize ws;
			width = isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40
			        ? ws.ws_col : 80;
		}
		lesson_render_text(&doc, width, stdout);
	}
	lesson_free(&doc);
	return cli_flush_stdout("lesson") ? CLI_OK : CLI_ENV;
}
