#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "teach/lesson.h"
#include "teach/lesson_check.h"
#include "util/file.h"

static void lesson_help(void)
{
	printf("Usage: mixprec lesson list\n"
	       "       mixprec lesson show NAME [--width N]\n"
	       "       mixprec lesson commands NAME\n"
	       "       mixprec lesson check [NAME] [--seeds N]\n"
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
	       "  -h, --help  this text\n\n"
	       "Lessons are Markdown files in (MIXPREC_LESSONDIR points elsewhere):\n"
	       "  %s\n",
	       lesson_dir());
}

/* The lesson folder cannot be read: which places were tried, and the fix. */
static int lesson_folder_missing(void)
{
	char hint[8400];
	cli_error("lesson", "cannot read the lesson folder %s: %s", lesson_dir(),
	          file_data_hint(hint, sizeof hint, "MIXPREC_LESSONDIR", lesson_dir()));
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
	snprintf(path, sizeof path, "%s/%s.md", lesson_dir(), name);
	if (access(lesson_dir(), F_OK) != 0)
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

/* Output beyond this is not what a lesson's command prints. */
#define CHECK_MAX_OUTPUT (16u << 20)

/* Runs this program itself with argv[1..] (no shell, stdin and stderr
 * closed to /dev/null, at most 15 minutes) and captures its stdout. */
static mp_status run_self(void *ctx, char *const *argv, char **out, int *exit_status)
{
	(void)ctx;
	*out = NULL;
	int fd[2];
	if (pipe(fd) != 0)
		return MP_EIO;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return MP_EIO;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);
		if (devnull < 0 || dup2(fd[1], STDOUT_FILENO) < 0 || dup2(devnull, STDIN_FILENO) < 0 ||
		    dup2(devnull, STDERR_FILENO) < 0)
			_exit(127);
		close(fd[0]);
		close(fd[1]);
		alarm(900);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(fd[1]);
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	bool too_long = false;
	for (;;) {
		if (buf && len + 1 == cap && cap < CHECK_MAX_OUTPUT + 1) {
			char *p = realloc(buf, 2 * cap);
			if (p) {
				buf = p;
				cap *= 2;
			}
		}
		char sink[4096];
		bool room = buf && len + 1 < cap;
		ssize_t r = read(fd[0], room ? buf + len : sink, room ? cap - 1 - len : sizeof sink);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (room)
			len += (size_t)r;
		else
			too_long = true;
	}
	close(fd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			free(buf);
			return MP_EIO;
		}
	if (!buf)
		return MP_ENOMEM;
	buf[len] = '\0';
	*out = buf;
	*exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	if (*exit_status == 127)
		return MP_EIO;
	if (too_long && *exit_status == 0)
		*exit_status = 3;
	return MP_OK;
}

static const char *item_label(const lesson_check_item *it)
{
	if (it->kind == LC_MALFORMED)
		return "BAD ";
	return it->ok ? "ok  " : "FAIL";
}

/* Checks one lesson; adds to the totals. Returns its exit status. */
static int check_one(const char *name, size_t seeds, size_t *claims, size_t *failed)
{
	lesson_doc doc;
	int rc = load_named(name, &doc);
	if (rc != CLI_OK)
		return rc;
	char file[4200];
	snprintf(file, sizeof file, "%s/%s.md", lesson_dir(), name);
	lesson_check_report rep;
	mp_status st = lesson_check(&doc, seeds, run_self, NULL, &rep);
	for (size_t i = 0; i < rep.n; i++) {
		const lesson_check_item *it = &rep.items[i];
		const char *kind = it->kind == LC_BLOCK ? "command " : it->kind == LC_UNBOUND ? "unbound " : "";
		printf("%s %s:%u: %s%s | %s\n", item_label(it), file, it->line, kind, it->detail, it->what);
	}
	*claims += rep.claims;
	*failed += rep.failed + rep.malformed;
	rc = rep.malformed ? CLI_USAGE : rep.failed ? CLI_WRONG : CLI_OK;
	if (st != MP_OK) {
		cli_error("lesson", "%s: %s", file, st == MP_ENOMEM ? "out of memory" : "cannot run mixprec itself");
		rc = CLI_ENV;
	}
	lesson_check_report_free(&rep);
	lesson_free(&doc);
	return rc;
}

/* lesson check [NAME]: the worst status of the lessons checked wins
 * (environment over malformed over wrong). */
static int check_lessons(const char *name, size_t seeds)
{
	size_t claims = 0, failed = 0;
	int rc = CLI_OK;
	if (name) {
		lesson_doc doc;
		if ((rc = load_named(name, &doc)) != CLI_OK)
			return rc;   /* named and reported: no summary of nothing */
		lesson_free(&doc);
		rc = check_one(name, seeds, &claims, &failed);
	} else {
		char **names;
		size_t n;
		if (lesson_list(lesson_dir(), &names, &n) != MP_OK)
			return lesson_folder_missing();
		for (size_t i = 0; i < n; i++) {
			int r = check_one(names[i], seeds, &claims, &failed);
			rc = r > rc ? r : rc;
			free(names[i]);
		}
		free(names);
	}
	printf("%zu claims, %zu failed or malformed, %zu seed%s\n", claims, failed, seeds, seeds == 1 ? "" : "s");
	if (!cli_flush_stdout("lesson"))
		return CLI_ENV;
	return rc;
}

int cmd_lesson(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "width", required_argument, NULL, 'w' },
		{ "seeds", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	size_t width = 0, seeds = 1;
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
		case 's':
			if (!cli_parse_u64("lesson", "--seeds", optarg, &u))
				return CLI_USAGE;
			if (u < 1 || u > 100) {
				cli_error("lesson", "--seeds: %llu is out of range (1..100)", u);
				return CLI_USAGE;
			}
			seeds = (size_t)u;
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
		if (lesson_list(lesson_dir(), &names, &n) != MP_OK)
			return lesson_folder_missing();
		int rc = CLI_OK;
		for (size_t i = 0; i < n; i++) {
			lesson_doc doc;
			if (rc == CLI_OK && load_named(names[i], &doc) == CLI_OK) {
				/* a file name is not sanitised by the parser: no control bytes */
				for (char *p = names[i]; *p; p++)
					if ((unsigned char)*p < 0x20 || *p == 0x7f)
						*p = '?';
				printf("%-20s %s\n", names[i], doc.title);
				lesson_free(&doc);
			}
			free(names[i]);
		}
		free(names);
		return cli_flush_stdout("lesson") ? rc : CLI_ENV;
	}
	if (!strcmp(verb, "check"))
		return check_lessons(nwords > 1 ? words[1] : NULL, seeds);
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
