/* mixprec exercise list|show|hint|solve|kinds|lint, and mixprec check. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "teach/classroom.h"
#include "teach/exercise.h"
#include "teach/progress.h"
#include "util/file.h"

#define MAX_WORDS 64

static void exercise_help(void)
{
	printf("Usage: mixprec exercise list\n"
	       "       mixprec exercise show ID [--student S] [--params]\n"
	       "       mixprec exercise hint ID [N] [--student S]\n"
	       "       mixprec exercise solve ID [--student S]\n"
	       "       mixprec exercise kinds\n"
	       "       mixprec exercise lint [FILE.ex...]\n"
	       "Lists the exercises, prints one for a student's variant (or only its\n"
	       "parameters as name=value lines), its hints up to N (default: the next\n"
	       "one), or its worked solution with every expected answer; lists the\n"
	       "kinds an exercise file can use; checks exercise files (exit 2 on errors).\n"
	       "Check answers with 'mixprec check ID FIELD=ANSWER...'.\n\n"
	       "  --student S       the student whose variant to use (default: the defaults):\n"
	       "                    1 to 64 letters, digits, . _ @ -, not starting with . - @\n"
	       "  --course-seed S   the course's seed (default: $MIXPREC_COURSE_SEED, else 0)\n"
	       "  --params          show: print only the parameters, as name=value lines\n"
	       "  --exercise-dir DIR  read the exercises from DIR\n"
	       "  -h, --help        this text\n\n"
	       "Exercises are files in %s\n"
	       "($MIXPREC_EXERCISEDIR points elsewhere; the format is in exercises/README.md).\n",
	       ex_dir());
}

static void check_help(void)
{
	printf("Usage: mixprec check ID FIELD=ANSWER... [--student S] [--course-seed S]\n"
	       "Checks answers to exercise ID and explains wrong ones. With no FIELD=ANSWER\n"
	       "argument, reads them from standard input, one per line.\n"
	       "Numbers take any syntax of 'mixprec round' (0.1, 6.1e-5, 2^-14, 1/1024,\n"
	       "3*2^-10), also 6.1 x 10^-5, 2**-14 and 65,536, optionally with a unit\n"
	       "(B, GB, GiB: converted when the question asks another) or %%; bits are 0x3dcd,\n"
	       "0b0011110111001101 or binary grouped with spaces (quote it); choices are\n"
	       "words (yes/no, format names).\n\n"
	       "  --student S       the student whose variant is checked\n"
	       "  --course-seed S   the course's seed (default: $MIXPREC_COURSE_SEED, else 0)\n"
	       "  --exercise-dir DIR  read the exercises from DIR\n"
	       "  --no-progress     do not record the attempt\n"
	       "  -h, --help        this text\n\n"
	       "Exit status: 0 every answer given is correct, 1 one is wrong, 2 one cannot\n"
	       "be read or names no field of the exercise (or bad usage).\n");
}

typedef struct {
	const char *student;
	const char *seed;
	const char *dir;
	bool params_only;
	bool no_progress;
	const char *words[MAX_WORDS];
	size_t nwords;
} ex_opts;

enum { OPT_STUDENT = 256, OPT_SEED, OPT_PARAMS, OPT_DIR, OPT_NOPROG };

static int parse_opts(const char *cmd, int argc, char **argv, ex_opts *o, void (*help)(void))
{
	static const struct option opts[] = {
		{ "student", required_argument, NULL, OPT_STUDENT },
		{ "course-seed", required_argument, NULL, OPT_SEED },
		{ "params", no_argument, NULL, OPT_PARAMS },
		{ "exercise-dir", required_argument, NULL, OPT_DIR },
		{ "no-progress", no_argument, NULL, OPT_NOPROG },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	memset(o, 0, sizeof *o);
	o->seed = ex_course_seed(NULL);
	cli_args args = { 0 };
	char *value, err[400];
	int c;
	while ((c = cli_getopt(&args, argc, argv, opts, &value)) != -1) {
		switch (c) {
		case CLI_ARG_VALUE:
			if (o->nwords == MAX_WORDS) {
				cli_error(cmd, "too many arguments (at most %d)", MAX_WORDS);
				return CLI_USAGE;
			}
			o->words[o->nwords++] = value;
			break;
		case OPT_STUDENT:
			if (class_id_check(optarg, err, sizeof err) != MP_OK) {
				cli_error(cmd, "--student: %s", err);
				return CLI_USAGE;
			}
			o->student = optarg;
			break;
		case OPT_SEED:
			if (!cli_parse_course_seed(cmd, optarg, &o->seed))
				return CLI_USAGE;
			break;
		case OPT_PARAMS: o->params_only = true; break;
		case OPT_DIR: o->dir = optarg; break;
		case OPT_NOPROG: o->no_progress = true; break;
		case 'h': help(); return cli_flush_stdout(cmd) ? -1 : CLI_ENV;
		case ':':
		default:
			return cli_option_error(cmd, c, argv, opts);
		}
	}
	return CLI_OK;
}

bool cli_parse_course_seed(const char *cmd, const char *text, const char **seed)
{
	if (!*text || strlen(text) > 128) {
		cli_error(cmd, "--course-seed: give a seed of 1 to 128 characters");
		return false;
	}
	*seed = text;
	return true;
}

int cli_load_exercises(const char *cmd, const char *dir, ex_set *set, bool quiet)
{
	ex_diags d = { 0 };
	memset(set, 0, sizeof *set);
	mp_status st = ex_load_dir(set, dir ? dir : ex_dir(), &d);
	if (!quiet || st != MP_OK)
		for (size_t i = 0; i < d.count; i++)
			fprintf(stderr, "mixprec %s: warning: %s\n", cmd, d.msgs[i]);
	ex_diags_free(&d);
	if (st != MP_OK) {
		char hint[8400];
		if (st == MP_ENOMEM)
			cli_error(cmd, "out of memory");
		else if (st == MP_EIO && !dir)
			cli_error(cmd, "%s", file_data_hint(hint, sizeof hint, "MIXPREC_EXERCISEDIR", ex_dir()));
		ex_set_free(set);
		return CLI_ENV;
	}
	return CLI_OK;
}

static const ex_exercise *find_or_report(const char *cmd, const ex_set *set, const char *id)
{
	const ex_exercise *ex = ex_find(set, id);
	if (!ex)
		cli_error(cmd, "no exercise '%s' (see 'mixprec exercise list')", id);
	return ex;
}

static char *progress_item(char *buf, size_t n, const ex_exercise *ex, const ex_opts *o)
{
	if (o->student)
		snprintf(buf, n, "exercise:%s@%s", ex->id, o->student);
	else
		snprintf(buf, n, "exercise:%s", ex->id);
	return buf;
}

/* False when the progress could not be saved (reported): exit 3. */
static bool record(const char *cmd, const ex_exercise *ex, const ex_opts *o, long attempt, bool solved, long hints)
{
	if (o->no_progress)
		return true;
	char item[PROGRESS_ITEM_MAX + 200], note[1024];
	progress_item(item, sizeof item, ex, o);
	if (strlen(item) >= PROGRESS_ITEM_MAX)
		return true;
	mp_status st = progress_record(item, attempt, solved, hints, note, sizeof note);
	if (note[0])
		fprintf(stderr, "mixprec %s: %s%s\n", cmd, st == MP_OK ? "note: " : "progress not saved: ", note);
	return st == MP_OK;
}

/* word quoted for a POSIX shell when it holds anything but safe characters. */
static void print_shell_word(const char *word)
{
	if (*word && strspn(word, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789@%+=:,./_-") ==
	                 strlen(word)) {
		printf("%s", word);
		return;
	}
	putchar('\'');
	for (const char *p = word; *p; p++)
		if (*p == '\'')
			printf("'\\''");
		else
			putchar(*p);
	putchar('\'');
}

/* " --student ID --course-seed SEED" when a student's variant is shown, so
 * that a printed command, pasted, checks that same variant. */
static void print_variant_args(const ex_opts *o)
{
	if (!o->student)
		return;
	printf(" --student ");
	print_shell_word(o->student);
	printf(" --course-seed ");
	print_shell_word(o->seed);
}

static void print_fields(const ex_exercise *ex, const ex_variant *v, const ex_opts *o)
{
	printf("\nAnswer with: mixprec check %s", ex->id);
	print_variant_args(o);
	for (size_t i = 0; i < ex->nfields; i++)
		printf(" %s=...", ex->fields[i].name);
	printf("\n");
	for (size_t i = 0; i < ex->nfields; i++) {
		const ex_field *f = &ex->fields[i];
		char type[160];
		if (f->type == EX_NUMBER)
			snprintf(type, sizeof type, "number%s%s", f->unit[0] ? ", in " : "", f->unit);
		else if (f->type == EX_BITS)
			if (f->width)
				snprintf(type, sizeof type, "%d bits, in binary", f->width);
			else
				snprintf(type, sizeof type, "%s bits", fmt_get(f->format)->name);
		else {
			snprintf(type, sizeof type, "one of");
			for (size_t k = 0; k < f->nchoices; k++)
				snprintf(type + strlen(type), sizeof type - strlen(type), " %s", f->choices[k]);
		}
		char *label = NULL;
		if (f->label) {
			ex_exercise tmp = *ex;   /* the label with the variant's values, as the prompt */
			tmp.prompt = f->label;
			label = ex_prompt(&tmp, v);
		}
		printf("  %-18s %s%s(%s%s)\n", f->name, label ? label : "", label ? " " : "", type,
		       f->optional ? "; optional" : "");
		free(label);
	}
}

static int do_show(const ex_exercise *ex, const ex_opts *o)
{
	ex_variant v;
	ex_variant_make(ex, o->seed, o->student, &v);
	if (o->params_only) {
		for (size_t i = 0; i < ex->nparams; i++)
			printf("%s=%s\n", ex->params[i].name, v.values[i]);
		return CLI_OK;
	}
	char *prompt = ex_prompt(ex, &v);
	if (!prompt) {
		cli_error("exercise", "out of memory");
		return CLI_ENV;
	}
	printf("%s  %s\n", ex->id, ex->title);
	if (o->student)
		printf("(variant of student %s)\n", o->student);
	printf("\n%s\n", prompt);
	free(prompt);
	print_fields(ex, &v, o);
	if (ex->nhints) {
		printf("\n%zu hint%s: mixprec exercise hint %s", ex->nhints, ex->nhints == 1 ? "" : "s", ex->id);
		print_variant_args(o);
		printf("\n");
	}
	return CLI_OK;
}

static int do_hint(const ex_exercise *ex, const ex_opts *o, const char *count)
{
	long upto = 0;
	if (count) {
		char *end;
		upto = strtol(count, &end, 10);
		if (*end || upto < 1 || (ex->nhints && (size_t)upto > ex->nhints)) {
			cli_error("exercise", "hint: '%s' is not a hint number (1 to %zu)", count, ex->nhints);
			return CLI_USAGE;
		}
	}
	if (ex->nhints == 0) {
		printf("Exercise %s has no hints.\n", ex->id);
		return CLI_OK;
	}
	if (!upto) {
		/* the next hint not yet seen */
		progress p;
		char note[1024] = "", item[PROGRESS_ITEM_MAX + 200];
		upto = 1;
		if (!o->no_progress && progress_load(&p, note, sizeof note) == MP_OK) {
			const progress_row *r = progress_get(&p, progress_item(item, sizeof item, ex, o));
			if (r)
				upto = r->hints + 1;
			progress_free(&p);
		}
		if (note[0])
			fprintf(stderr, "mixprec exercise: note: %s\n", note);
	}
	if ((size_t)upto > ex->nhints)
		upto = (long)ex->nhints;
	ex_variant v;
	ex_variant_make(ex, o->seed, o->student, &v);
	for (long i = 0; i < upto; i++) {
		ex_exercise tmp = *ex;
		tmp.prompt = ex->hints[i];
		char *h = ex_prompt(&tmp, &v);
		printf("Hint %ld of %zu: %s\n", i + 1, ex->nhints, h ? h : ex->hints[i]);
		free(h);
	}
	return record("exercise", ex, o, 0, false, upto) ? CLI_OK : CLI_ENV;
}

static int do_solve(const ex_exercise *ex, const ex_opts *o)
{
	ex_variant v;
	ex_variant_make(ex, o->seed, o->student, &v);
	ex_solution sol;
	char err[512];
	mp_status st = ex_solve(ex, &v, &sol, err, sizeof err);
	if (st != MP_OK) {
		cli_error("exercise", "%s: %s", ex->id, st == MP_ENOMEM ? "out of memory" : err);
		return st == MP_ENOMEM ? CLI_ENV : CLI_USAGE;
	}
	printf("%s  %s\n", ex->id, ex->title);
	for (size_t i = 0; i < ex->nparams; i++)
		printf("%s%s = %s", i ? ", " : "", ex->params[i].name, v.values[i]);
	printf("%s\n%s\n", ex->nparams ? "\n" : "", sol.worked);
	printf("Answers:\n");
	for (size_t i = 0; i < ex->nfields; i++)
		printf("  %s=%s\n", ex->fields[i].name, sol.expect[i].text);
	ex_solution_free(&sol);
	return CLI_OK;
}

static int do_lint(const ex_opts *o)
{
	ex_set set = { 0 };
	ex_diags d = { 0 };
	mp_status st = MP_OK;
	if (o->nwords > 1) {
		for (size_t i = 1; i < o->nwords && st == MP_OK; i++) {
			char *buf;
			size_t len;
			char err[600];
			st = file_read_all(o->words[i], 1u << 20, &buf, &len, err, sizeof err);
			if (st == MP_OK) {
				st = ex_load_text(&set, o->words[i], buf, len, &d);
				free(buf);
			} else if (st != MP_ENOMEM) {
				cli_error("exercise", "%s", err);
				ex_set_free(&set);
				ex_diags_free(&d);
				return CLI_ENV;
			}
		}
	} else {
		st = ex_load_dir(&set, o->dir ? o->dir : ex_dir(), &d);
	}
	for (size_t i = 0; i < d.count; i++)
		fprintf(stderr, "%s\n", d.msgs[i]);
	printf("%zu exercise%s loaded, %zu problem%s\n", set.count, set.count == 1 ? "" : "s", d.count,
	       d.count == 1 ? "" : "s");
	int rc = st == MP_ENOMEM || st == MP_EIO ? CLI_ENV : d.count ? CLI_USAGE : CLI_OK;
	ex_set_free(&set);
	ex_diags_free(&d);
	return rc;
}

int cmd_exercise(int argc, char **argv)
{
	ex_opts o;
	int rc = parse_opts("exercise", argc, argv, &o, exercise_help);
	if (rc != CLI_OK)
		return rc < 0 ? CLI_OK : rc;
	const char *verb = o.nwords ? o.words[0] : "list";
	if (!strcmp(verb, "kinds")) {
		for (size_t i = 0; ex_kind_at(i); i++) {
			const ex_kind *k = ex_kind_at(i);
			printf("%-15s %s\n%15s params: %s\n%15s fields: %s\n", k->name, k->summary, "",
			       k->params[0] ? k->params : "(none)", "", k->fields);
		}
		return cli_flush_stdout("exercise") ? CLI_OK : CLI_ENV;
	}
	if (!strcmp(verb, "lint")) {
		rc = do_lint(&o);
		return cli_flush_stdout("exercise") ? rc : CLI_ENV;
	}
	bool list = !strcmp(verb, "list");
	if (!list && strcmp(verb, "show") && strcmp(verb, "hint") && strcmp(verb, "solve")) {
		cli_error("exercise", "unknown action '%s' (known: list, show, hint, solve, kinds, lint)", verb);
		return CLI_USAGE;
	}
	size_t want = list ? 1 : !strcmp(verb, "hint") ? 3 : 2;
	if (!list && o.nwords < 2) {
		cli_error("exercise", "%s needs an exercise id (see 'mixprec exercise list')", verb);
		return CLI_USAGE;
	}
	if (o.nwords > want) {
		cli_error("exercise", "unexpected argument '%s'", o.words[want]);
		return CLI_USAGE;
	}
	ex_set set;
	if ((rc = cli_load_exercises("exercise", o.dir, &set, !list)) != CLI_OK)
		return rc;
	if (list) {
		progress p = { 0 };
		char note[1024] = "";
		bool have = progress_load(&p, note, sizeof note) == MP_OK;
		if (note[0])
			fprintf(stderr, "mixprec exercise: note: %s\n", note);
		for (size_t i = 0; i < set.count; i++) {
			const ex_exercise *ex = &set.items[i];
			char item[PROGRESS_ITEM_MAX + 64];
			snprintf(item, sizeof item, "exercise:%s", ex->id);
			const progress_row *r = have ? progress_get(&p, item) : NULL;
			const char *mark = !r ? " " : r->solved ? "*" : "-";
			printf("%s %-10s %-15s %s\n", mark, ex->id, ex->kind->name, ex->title);
		}
		if (have)
			progress_free(&p);
		printf("(* solved, - attempted)\n");
	} else {
		const ex_exercise *ex = find_or_report("exercise", &set, o.words[1]);
		if (!ex)
			rc = CLI_USAGE;
		else if (!strcmp(verb, "show"))
			rc = do_show(ex, &o);
		else if (!strcmp(verb, "hint"))
			rc = do_hint(ex, &o, o.nwords > 2 ? o.words[2] : NULL);
		else
			rc = do_solve(ex, &o);
	}
	ex_set_free(&set);
	return cli_flush_stdout("exercise") ? rc : CLI_ENV;
}

/* One FIELD=ANSWER: checks it and prints the verdict line. */
static ex_verdict check_one(const ex_exercise *ex, const ex_solution *sol, const char *arg, bool *seen, bool *tried)
{
	const char *eq = strchr(arg, '=');
	char name[EX_NAME_MAX];
	size_t n = eq ? (size_t)(eq - arg) : 0;
	while (n && (arg[n - 1] == ' ' || arg[n - 1] == '\t'))
		n--;
	size_t skip = 0;
	while (skip < n && (arg[skip] == ' ' || arg[skip] == '\t'))
		skip++;
	if (!eq || n - skip == 0 || n - skip >= sizeof name) {
		printf("'%s': expected FIELD=ANSWER\n", arg);
		return EX_MALFORMED;
	}
	memcpy(name, arg + skip, n - skip);
	name[n - skip] = '\0';
	int i = ex_field_index(ex, name);
	if (i < 0) {
		printf("%s: exercise %s has no such field (fields:", name, ex->id);
		for (size_t k = 0; k < ex->nfields; k++)
			printf(" %s", ex->fields[k].name);
		printf(")\n");
		return EX_MALFORMED;
	}
	char fb[1024];
	tried[i] = true;
	ex_verdict v = ex_check(ex, sol, (size_t)i, eq + 1, fb, sizeof fb);
	if (v == EX_CORRECT)
		seen[i] = true;
	printf("%s\n", fb);
	return v;
}

int cmd_check(int argc, char **argv)
{
	ex_opts o;
	int rc = parse_opts("check", argc, argv, &o, check_help);
	if (rc != CLI_OK)
		return rc < 0 ? CLI_OK : rc;
	if (o.nwords < 1) {
		cli_error("check", "needs an exercise id and FIELD=ANSWER pairs (see 'mixprec check --help')");
		return CLI_USAGE;
	}
	if (o.params_only) {
		cli_error("check", "--params belongs to 'mixprec exercise show'");
		return CLI_USAGE;
	}
	ex_set set;
	if ((rc = cli_load_exercises("check", o.dir, &set, true)) != CLI_OK)
		return rc;
	const ex_exercise *ex = find_or_report("check", &set, o.words[0]);
	if (!ex) {
		ex_set_free(&set);
		return CLI_USAGE;
	}
	ex_variant v;
	ex_variant_make(ex, o.seed, o.student, &v);
	ex_solution sol;
	char err[512];
	mp_status st = ex_solve(ex, &v, &sol, err, sizeof err);
	if (st != MP_OK) {
		cli_error("check", "%s: %s", ex->id, st == MP_ENOMEM ? "out of memory" : err);
		ex_set_free(&set);
		return st == MP_ENOMEM ? CLI_ENV : CLI_USAGE;
	}
	bool seen[EX_MAX_FIELDS] = { false }, tried[EX_MAX_FIELDS] = { false };
	size_t given = 0, wrong = 0, malformed = 0;
	if (o.nwords > 1) {
		for (size_t k = 1; k < o.nwords; k++) {
			ex_verdict r = check_one(ex, &sol, o.words[k], seen, tried);
			given++;
			wrong += r == EX_WRONG;
			malformed += r == EX_MALFORMED;
		}
	} else {
		if (isatty(STDIN_FILENO))
			fprintf(stderr, "Type FIELD=ANSWER lines, then Ctrl-D:\n");
		char line[4096];
		long lineno = 0;
		while (fgets(line, sizeof line, stdin)) {
			lineno++;
			size_t n = strlen(line);
			if (n == sizeof line - 1 && line[n - 1] != '\n') {
				printf("line %ld: too long\n", lineno);
				malformed++;
				int ch;
				while ((ch = getchar()) != EOF && ch != '\n')
					;
				continue;
			}
			while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
				line[--n] = '\0';
			char *s = line;
			if (lineno == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
				s += 3;   /* a byte-order mark from a Windows editor */
			while (*s == ' ' || *s == '\t')
				s++;
			if (!*s || *s == '#')
				continue;
			ex_verdict r = check_one(ex, &sol, s, seen, tried);
			given++;
			wrong += r == EX_WRONG;
			malformed += r == EX_MALFORMED;
		}
	}
	size_t solved = 0;
	for (size_t i = 0; i < ex->nfields; i++)
		solved += seen[i];
	if (given == 0) {
		cli_error("check", "no answers given (FIELD=ANSWER)");
		rc = CLI_USAGE;
	} else {
		size_t answered = 0;
		for (size_t i = 0; i < ex->nfields; i++)
			answered += tried[i];
		bool done = ex_solved(ex, tried, seen);
		if (done) {
			printf("%zu of %zu answer%s correct: exercise %s solved. See the worked solution: mixprec exercise solve %s",
			       solved, answered, answered == 1 ? "" : "s", ex->id, ex->id);
			print_variant_args(&o);
			printf("\n");
		} else {
			printf("%zu of %zu answer%s correct", solved, answered, answered == 1 ? "" : "s");
			if (answered < ex->nfields) {
				printf("; not answered:");
				for (size_t i = 0; i < ex->nfields; i++)
					if (!tried[i])
						printf(" %s%s", ex->fields[i].name, ex->fields[i].optional ? " (optional)" : "");
			}
			printf(".\n");
		}
		rc = malformed ? CLI_USAGE : wrong ? CLI_WRONG : CLI_OK;
		if (!record("check", ex, &o, 1, done, 0))
			rc = CLI_ENV;
	}
	ex_solution_free(&sol);
	ex_set_free(&set);
	return cli_flush_stdout("check") ? rc : CLI_ENV;
}
