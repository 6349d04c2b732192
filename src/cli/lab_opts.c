/* The options, diagnostics and exercise selection shared by mixprec lab and
 * mixprec grade. */
#include "cli/lab_opts.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

enum { OPT_ROSTER = 256, OPT_OUT, OPT_SUMMARY, OPT_SEED, OPT_LIST, OPT_DIR, OPT_FORMAT, OPT_IDS, OPT_MISC };

int lab_parse(const char *cmd, int argc, char **argv, lab_opts *o, void (*help)(void))
{
	static const struct option opts[] = {
		{ "roster", required_argument, NULL, OPT_ROSTER },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "summary", required_argument, NULL, OPT_SUMMARY },
		{ "misconceptions", required_argument, NULL, OPT_MISC },
		{ "course-seed", required_argument, NULL, OPT_SEED },
		{ "exercises", required_argument, NULL, OPT_LIST },
		{ "exercise-dir", required_argument, NULL, OPT_DIR },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "assignment-ids", required_argument, NULL, OPT_IDS },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	memset(o, 0, sizeof *o);
	o->seed = ex_course_seed(NULL);
	o->list = LAB_DEFAULT_SET;
	cli_args args = { 0 };
	char *value;
	int c;
	while ((c = cli_getopt(&args, argc, argv, opts, &value)) != -1) {
		switch (c) {
		case CLI_ARG_VALUE:
			if (o->nwords == LAB_MAX_SUBMISSIONS) {
				cli_error(cmd, "too many files (at most %d)", LAB_MAX_SUBMISSIONS);
				return CLI_USAGE;
			}
			o->words[o->nwords++] = value;
			break;
		case OPT_ROSTER: o->roster = optarg; break;
		case OPT_OUT: o->out = optarg; break;
		case OPT_SUMMARY: o->summary = optarg; break;
		case OPT_MISC: o->misconceptions = optarg; break;
		case OPT_SEED:
			if (!cli_parse_course_seed(cmd, optarg, &o->seed))
				return CLI_USAGE;
			break;
		case OPT_LIST: o->list = optarg; break;
		case OPT_DIR: o->dir = optarg; break;
		case OPT_FORMAT: o->format = optarg; break;
		case OPT_IDS: o->assignment_ids = optarg; break;
		case 'h': help(); return cli_flush_stdout(cmd) ? -1 : CLI_ENV;
		case ':':
		default:
			return cli_option_error(cmd, c, argv, opts);
		}
	}
	if (!o->roster) {
		cli_error(cmd, "--roster FILE is required");
		return CLI_USAGE;
	}
	return CLI_OK;
}

void lab_print_diags(const char *cmd, const ex_diags *d)
{
	for (size_t i = 0; i < d->count; i++)
		fprintf(stderr, "mixprec %s: %s\n", cmd, d->msgs[i]);
}

int lab_select_exercises(const char *cmd, const ex_set *set, const char *list, const ex_exercise ***out,
                            size_t *n)
{
	*out = calloc(set->count ? set->count : 1, sizeof **out);
	*n = 0;
	if (!*out) {
		cli_error(cmd, "out of memory");
		return CLI_ENV;
	}
	if (!strcmp(list, "all")) {
		for (size_t i = 0; i < set->count; i++)
			(*out)[(*n)++] = &set->items[i];
		return CLI_OK;
	}
	char *copy = strdup(list);
	if (!copy) {
		cli_error(cmd, "out of memory");
		return CLI_ENV;
	}
	int rc = CLI_OK;
	for (char *save = NULL, *w = strtok_r(copy, ",", &save); w && rc == CLI_OK; w = strtok_r(NULL, ",", &save)) {
		const ex_exercise *ex = ex_find(set, w);
		bool dup = false;
		for (size_t i = 0; i < *n; i++)
			dup = dup || (*out)[i] == ex;
		if (!ex) {
			cli_error(cmd, "--exercises: no exercise '%s' (see 'mixprec exercise list')", w);
			rc = CLI_USAGE;
		} else if (dup) {
			cli_error(cmd, "--exercises: '%s' is listed twice", w);
			rc = CLI_USAGE;
		} else if (*n < set->count) {
			(*out)[(*n)++] = ex;
		}
	}
	free(copy);
	if (rc == CLI_OK && *n == 0) {
		cli_error(cmd, "--exercises: no exercise given");
		rc = CLI_USAGE;
	}
	return rc;
}
