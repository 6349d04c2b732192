/* mixprec tui: the interactive workbench (also what `mixprec` alone starts),
 * and its off-screen key-script mode for tests. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "teach/classroom.h"
#include "tui/tui.h"

static void tui_help(void)
{
	printf("Usage: mixprec [tui] [--start SCREEN]\n"
	       "       mixprec tui --keys FILE [--dump FILE] [--size COLSxROWS] [--start SCREEN]\n"
	       "Starts the interactive workbench: the lessons, the exercises and the live labs.\n"
	       "Press ? on any screen for its keys. It needs a terminal (not TERM=dumb) of at\n"
	       "least 80x24; every lab has a command for scripts (see 'mixprec --help').\n\n"
	       "  --start SCREEN   open this screen first: home, lesson, exercises, exercise,\n"
	       "                   bits, handround, drift, train, budget, scale, block\n"
	       "  --keys FILE      run a key script off-screen instead (no terminal needed):\n"
	       "                   lines 'keys K...', 'type TEXT', 'dump LABEL', 'wait [S]',\n"
	       "                   'resize COLSxROWS'; # starts a comment\n"
	       "  --dump FILE      where 'dump' writes the screen text (default: stdout)\n"
	       "  --size COLSxROWS the virtual screen of a key script (default 80x24)\n"
	       "  --list-keys      print every screen's keys and exit\n"
	       "  -h, --help       this text\n");
}

int cmd_tui(int argc, char **argv)
{
	enum { OPT_KEYS = 256, OPT_DUMP, OPT_SIZE, OPT_START, OPT_LIST };
	static const struct option opts[] = {
		{ "keys", required_argument, NULL, OPT_KEYS }, { "dump", required_argument, NULL, OPT_DUMP },
		{ "size", required_argument, NULL, OPT_SIZE }, { "start", required_argument, NULL, OPT_START },
		{ "list-keys", no_argument, NULL, OPT_LIST },  { "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	tui_options o = { .rows = 24, .cols = 80 };
	cli_args args = { 0 };
	char *value;
	int c;
	while ((c = cli_getopt(&args, argc, argv, opts, &value)) != -1) {
		switch (c) {
		case 'h':
			tui_help();
			return cli_flush_stdout("tui") ? CLI_OK : CLI_ENV;
		case OPT_LIST:
			tui_list_keys(stdout);
			return cli_flush_stdout("tui") ? CLI_OK : CLI_ENV;
		case OPT_KEYS: o.keys_path = optarg; break;
		case OPT_DUMP: o.dump_path = optarg; break;
		case OPT_START: o.start = optarg; break;
		case OPT_SIZE: {
			char tail;
			if (sscanf(optarg, "%dx%d%c", &o.cols, &o.rows, &tail) != 2 || o.cols < 1 || o.rows < 1 ||
			    o.cols > 1000 || o.rows > 1000) {
				cli_error("tui", "--size: '%s' is not COLSxROWS (e.g. 80x24)", optarg);
				return CLI_USAGE;
			}
			break;
		}
		case CLI_ARG_VALUE:
			cli_error("tui", "unexpected argument '%s' (see 'mixprec tui --help')", value);
			return CLI_USAGE;
		case ':':
		default:
			return cli_option_error("tui", c, argv, opts);
		}
	}
	if (o.dump_path && !o.keys_path) {
		cli_error("tui", "--dump needs --keys");
		return CLI_USAGE;
	}
	if (o.start) {
		static const char *const known[] = { "home",  "lesson", "exercises", "exercise", "bits",
			                             "handround", "drift", "train", "budget", "scale", "block" };
		bool ok = false;
		for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
			ok = ok || !strcmp(o.start, known[i]);
		if (!ok) {
			cli_error("tui", "--start: unknown screen '%s' (known: home, lesson, exercises, exercise, bits, "
			                 "handround, drift, train, budget, scale, block)", o.start);
			return CLI_USAGE;
		}
	}
	/* the Exercises screen shows this student's variants: the id rule of
	 * --student and the rosters */
	const char *student = getenv("MIXPREC_STUDENT");
	char err[400];
	if (student && *student && class_id_check(student, err, sizeof err) != MP_OK) {
		cli_error("tui", "MIXPREC_STUDENT: %s", err);
		return CLI_USAGE;
	}
	fflush(stdout);
	return tui_run(&o);
}
