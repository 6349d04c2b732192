#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cli.h"
#include "teach/lesson.h"

static void lesson_help(void)
{
	printf("Usage: mixprec lesson list\n"
	       "       mixprec lesson show NAME [--width N]\n"
	       "       mixprec lesson commands NAME\n"
	       "Lists the lessons, prints one as plain text (for reading or piping), or\n"
	       "lists the mixprec commands it suggests running, one per line.\n\n"
	       "  --width N   wrap at N columns (default: the terminal's width, else 80)\n"
	       "  -h, --help  this text\n\n"
	       "Lessons are Markdown files in (MIXPREC_LESSONDIR points elsewhere):\n"
	       "  %s\n",
	       lesson_dir());
}

/* Loads lesson NAME from the lesson folder; reports failures. */
static int load_named(const char *name, lesson_doc *doc)
{
	if (!*name || strchr(name, '/') || name[0] == '.') {
		cli_error("lesson", "'%s' is not a lesson name (see 'mixprec lesson list')", name);
		return CLI_USAGE;
	}
	char path[4096], err[4200];
	snprintf(path, sizeof path, "%s/%s.md", lesson_dir(), name);
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

int cmd_lesson(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "width", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	size_t width = 0;
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
			if (!cli_parse_u64("lesson", "--width", optarg, &u))
				return CLI_USAGE;
			if (u < 40 || u > 1000) {
				cli_error("lesson", "--width: %llu is out of range (40..1000)", u);
				return CLI_USAGE;
			}
			width = (size_t)u;
			break;
		case 'h': lesson_help(); return cli_flush_stdout("lesson") ? CLI_OK : CLI_ENV;
		case ':':
		default:
			return cli_option_error("lesson", c, argv);
		}
	}
	const char *verb = nwords ? words[0] : "list";
	if (!strcmp(verb, "list")) {
		if (nwords > 1) {
			cli_error("lesson", "list takes no argument");
			return CLI_USAGE;
		}
		char **names;
		size_t n;
		if (lesson_list(lesson_dir(), &names, &n) != MP_OK) {
			cli_error("lesson", "cannot read the lesson folder %s", lesson_dir());
			return CLI_ENV;
		}
		int rc = CLI_OK;
		for (size_t i = 0; i < n; i++) {
			lesson_doc doc;
			if (rc == CLI_OK && load_named(names[i], &doc) == CLI_OK) {
				printf("%-20s %s\n", names[i], doc.title);
				lesson_free(&doc);
			}
			free(names[i]);
		}
		free(names);
		return cli_flush_stdout("lesson") ? rc : CLI_ENV;
	}
	if (strcmp(verb, "show") && strcmp(verb, "commands")) {
		cli_error("lesson", "unknown action '%s' (known: list, show, commands)", verb);
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
