/* mixprec lab new (classroom sheets) and mixprec grade (grading submissions). */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "teach/class_report.h"
#include "teach/classroom.h"
#include "teach/exercise.h"
#include "teach/lesson.h"
#include "util/csvout.h"
#include "util/file.h"
#include "util/strbuf.h"

#define DEFAULT_SET "7.4a,7.4b,7.4c,7.4d,7.4e"
#define MAX_SUBMISSIONS 4096

static void lab_help(void)
{
	printf("Usage: mixprec lab new --roster ROSTER.csv --out DIR [--course-seed S]\n"
	       "                       [--exercises LIST]\n"
	       "Writes, for every student of the roster, a sheet with their own variant of\n"
	       "each exercise (DIR/ID.md and DIR/ID.txt) and an answer template\n"
	       "(DIR/ID-answers.csv), plus the instructor's key (DIR/answer-key.csv).\n"
	       "A roster with a bad row writes nothing: fix the row and run again.\n\n"
	       "  --roster FILE       CSV with a student_id column (and optionally name)\n"
	       "  --out DIR           where to write (created when missing)\n"
	       "  --course-seed S     the course's seed (default: $MIXPREC_COURSE_SEED, else 0);\n"
	       "                      give the same one to 'mixprec grade'; the sheets print\n"
	       "                      it, so letters, digits and ._@:+=,/- only, not\n"
	       "                      starting with -\n"
	       "  --exercises LIST    exercise ids, comma-separated, or 'all' (default\n"
	       "                      %s)\n"
	       "  --exercise-dir DIR  read the exercises from DIR\n"
	       "  -h, --help          this text\n\n"
	       "File formats: README.md, section \"Classroom labs\"; examples in data/.\n"
	       "A Gradescope autograder for the lab: mixprec lab autograder --help.\n",
	       DEFAULT_SET);
}

static void grade_help(void)
{
	printf("Usage: mixprec grade --roster ROSTER.csv SUBMISSION.csv... [--out FILE]\n"
	       "                    [--summary FILE] [--course-seed S] [--exercises LIST]\n"
	       "Grades every student of the roster on every exercise of the lab against\n"
	       "their own variant: a score and feedback per student and exercise, and a\n"
	       "class summary (success rate, most common wrong answer and most common mistake\n"
	       "per field: one mistake in every variant, however the numbers differ).\n"
	       "Malformed rows and unknown students are reported as file:line and the\n"
	       "rest is still graded on the terminal, but a run with a problem in an\n"
	       "input writes no file (--out and --summary are left as they were).\n"
	       "Output cells that a spreadsheet would run as a formula are neutralised;\n"
	       "files are written atomically.\n\n"
	       "  --roster FILE       CSV with a student_id column\n"
	       "  --out FILE          grades CSV (default: standard output)\n"
	       "  --summary FILE      the class summary as CSV too\n"
	       "  --course-seed S     the seed the sheets were made with\n"
	       "  --exercises LIST    exercise ids, comma-separated, or 'all' (default\n"
	       "                      %s)\n"
	       "  --exercise-dir DIR  read the exercises from DIR\n"
	       "  -h, --help          this text\n\n"
	       "Grades: student_id,name,exercise,score,correct,fields,feedback (and a\n"
	       "'total' row per student). Exit status: 0 every answer right, 1 some answer\n"
	       "wrong or missing, 2 bad usage or a problem in an input file, 3 I/O failure.\n",
	       DEFAULT_SET);
}

typedef struct {
	const char *roster, *out, *summary, *seed, *list, *dir;
	const char *words[MAX_SUBMISSIONS];
	size_t nwords;
} lab_opts;

enum { OPT_ROSTER = 256, OPT_OUT, OPT_SUMMARY, OPT_SEED, OPT_LIST, OPT_DIR };

static int parse(const char *cmd, int argc, char **argv, lab_opts *o, void (*help)(void))
{
	static const struct option opts[] = {
		{ "roster", required_argument, NULL, OPT_ROSTER },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "summary", required_argument, NULL, OPT_SUMMARY },
		{ "course-seed", required_argument, NULL, OPT_SEED },
		{ "exercises", required_argument, NULL, OPT_LIST },
		{ "exercise-dir", required_argument, NULL, OPT_DIR },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	memset(o, 0, sizeof *o);
	o->seed = ex_course_seed(NULL);
	o->list = DEFAULT_SET;
	cli_args args = { 0 };
	char *value;
	int c;
	while ((c = cli_getopt(&args, argc, argv, opts, &value)) != -1) {
		switch (c) {
		case CLI_ARG_VALUE:
			if (o->nwords == MAX_SUBMISSIONS) {
				cli_error(cmd, "too many files (at most %d)", MAX_SUBMISSIONS);
				return CLI_USAGE;
			}
			o->words[o->nwords++] = value;
			break;
		case OPT_ROSTER: o->roster = optarg; break;
		case OPT_OUT: o->out = optarg; break;
		case OPT_SUMMARY: o->summary = optarg; break;
		case OPT_SEED:
			if (!cli_parse_course_seed(cmd, optarg, &o->seed))
				return CLI_USAGE;
			break;
		case OPT_LIST: o->list = optarg; break;
		case OPT_DIR: o->dir = optarg; break;
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

static void print_diags(const char *cmd, const ex_diags *d)
{
	for (size_t i = 0; i < d->count; i++)
		fprintf(stderr, "mixprec %s: %s\n", cmd, d->msgs[i]);
}

/* The exercises of the lab, in LIST order. */
static int select_exercises(const char *cmd, const ex_set *set, const char *list, const ex_exercise ***out,
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

/* ---- lab new ---------------------------------------------------------------- */

/* Writes text to path atomically. */
static bool write_text(const char *path, const char *text, size_t len)
{
	file_atomic a;
	char err[4400];
	if (file_atomic_open_flags(&a, path, FILE_IN_FOLDER, err, sizeof err) != MP_OK) {
		cli_error("lab", "%s", err);
		return false;
	}
	fwrite(text, 1, len, a.fp);
	if (file_atomic_commit(&a, err, sizeof err) != MP_OK) {
		cli_error("lab", "%s", err);
		return false;
	}
	return true;
}

/* Text from a roster as Markdown that shows it literally: ASCII punctuation
 * backslash-escaped (no links, emphasis or HTML), line breaks and other
 * control characters as blanks (a name cannot start a heading of its own). */
static void md_literal(strbuf *b, const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			strbuf_printf(b, " ");
		else if (ispunct(*p))
			strbuf_printf(b, "\\%c", *p);
		else
			strbuf_printf(b, "%c", *p);
	}
}

/* The sheet of one student as Markdown. */
static bool sheet_markdown(strbuf *b, const class_student *st, const ex_exercise *const *ex, size_t nex,
                           const char *seed)
{
	strbuf_printf(b, "# Mixed precision lab: ");
	md_literal(b, st->name[0] ? st->name : st->id);
	strbuf_printf(b, "\n\n");
	strbuf_printf(b, "Student id: `%s`. Course seed: `%s`.\n\n", st->id, seed);
	strbuf_printf(b, "Your numbers are your own: they differ from your neighbours'. Write each answer into "
	      "the answer column of `%s-answers.csv`, or check it yourself first with "
	      "`mixprec check ID FIELD=ANSWER --student %s --course-seed %s`.\n\n",
	   st->id, st->id, seed);
	for (size_t e = 0; e < nex; e++) {
		ex_variant v;
		ex_variant_make(ex[e], seed, st->id, &v);
		char *prompt = ex_prompt(ex[e], &v);
		if (!prompt)
			return false;
		strbuf_printf(b, "## Exercise %s: %s\n\n", ex[e]->id, ex[e]->title);
		/* paragraphs of the prompt: one line each in Markdown */
		for (const char *p = prompt; *p; p++)
			strbuf_printf(b, "%c", *p == '\n' && p[1] != '\n' && (p == prompt || p[-1] != '\n') ? ' ' : *p);
		strbuf_printf(b, "\n\n| field | asks for |\n|---|---|\n");
		for (size_t f = 0; f < ex[e]->nfields; f++) {
			const ex_field *fl = &ex[e]->fields[f];
			char *label = NULL;
			if (fl->label) {
				ex_exercise tmp = *ex[e];
				tmp.prompt = fl->label;
				label = ex_prompt(&tmp, &v);
			}
			strbuf_printf(b, "| `%s` | ", fl->name);
			for (const char *p = label ? label : ""; *p; p++)
				strbuf_printf(b, *p == '|' ? "\\|" : "%c", *p);
			if (fl->type == EX_BITS && fl->width)
				strbuf_printf(b, " (%d bits, in binary)", fl->width);
			else if (fl->type == EX_BITS)
				strbuf_printf(b, " (%s bits: 0x... or binary)", fmt_get(fl->format)->name);
			if (fl->type == EX_CHOICE)
				for (size_t k = 0; k < fl->nchoices; k++)
					strbuf_printf(b, "%s%s", k ? ", " : " (one of: ", fl->choices[k]);
			strbuf_printf(b, "%s", fl->type == EX_CHOICE ? ")" : "");
			if (fl->unit[0])
				strbuf_printf(b, " (in %s)", fl->unit);
			strbuf_printf(b, " |\n");
			free(label);
		}
		strbuf_printf(b, "\n");
		free(prompt);
	}
	return !b->oom;
}

/* Every file lab new will write in the folder, checked before the first is
 * written: none a link, a pipe, a device or a folder, none the roster. */
static bool targets_ok(const lab_opts *o, const class_roster *roster)
{
	static const char *const kinds[] = { "%s/%s.md", "%s/%s.txt", "%s/%s-answers.csv" };
	char path[4400], err[4400];
	for (size_t s = 0; s <= roster->count; s++)
		for (int k = 0; k < (s < roster->count ? 3 : 1); k++) {
			if (s < roster->count)
				snprintf(path, sizeof path, kinds[k], o->out, roster->students[s].id);
			else
				snprintf(path, sizeof path, "%s/answer-key.csv", o->out);
			if (file_same(path, o->roster)) {
				cli_error("lab", "%s: is the roster (--roster); nothing written", path);
				return false;
			}
			if (file_check_target(path, FILE_IN_FOLDER, err, sizeof err) != MP_OK) {
				cli_error("lab", "%s; nothing written", err);
				return false;
			}
		}
	return true;
}

/* The sheets of one student: DIR/ID.md and, through the lesson renderer,
 * DIR/ID.txt. CLI_OK, or CLI_ENV (reported). */
static int write_sheets(const lab_opts *o, const class_student *stu, const ex_exercise **ex, size_t nex)
{
	char path[4400];
	int rc = CLI_OK;
	strbuf md = { 0 };
	if (!sheet_markdown(&md, stu, ex, nex, o->seed)) {
		cli_error("lab", "out of memory");
		free(md.buf);
		return CLI_ENV;
	}
	snprintf(path, sizeof path, "%s/%s.md", o->out, stu->id);
	if (!write_text(path, md.buf, md.len))
		rc = CLI_ENV;
	lesson_doc doc;
	if (rc == CLI_OK && lesson_parse(&doc, stu->id, md.buf, md.len) == MP_OK) {
		char *txt = NULL;
		size_t tlen = 0;
		FILE *mem = open_memstream(&txt, &tlen);
		bool ok = mem && lesson_render_text(&doc, 78, mem);
		if (mem)
			fclose(mem);
		snprintf(path, sizeof path, "%s/%s.txt", o->out, stu->id);
		if (!ok || !write_text(path, txt, tlen))
			rc = CLI_ENV;
		free(txt);
		lesson_free(&doc);
	} else if (rc == CLI_OK) {
		cli_error("lab", "cannot render the sheet of %s", stu->id);
		rc = CLI_ENV;
	}
	free(md.buf);
	return rc;
}

/* Whether every exercise solves for every student's variant (reported
 * when one does not), checked before the first file is written so that a
 * failure leaves the folder as it was. */
static bool variants_solvable(const lab_opts *o, const class_roster *roster, const ex_exercise **ex, size_t nex)
{
	char err[4400];
	for (size_t s = 0; s < roster->count; s++)
		for (size_t e = 0; e < nex; e++) {
			ex_variant v;
			ex_variant_make(ex[e], o->seed, roster->students[s].id, &v);
			ex_solution sol;
			if (ex_solve(ex[e], &v, &sol, err, sizeof err) != MP_OK) {
				cli_error("lab", "exercise %s for %s: %s; nothing written", ex[e]->id, roster->students[s].id,
				          err);
				return false;
			}
			ex_solution_free(&sol);
		}
	return true;
}

/* Writes the sheets, answer templates and key of o (cmd_lab checked --out
 * and the arguments), only when the roster has no bad row and every
 * variant solves: a failed run writes nothing. */
static int lab_new(const lab_opts *o)
{
	ex_set set;
	int rc = cli_load_exercises("lab", o->dir, &set, false);
	if (rc != CLI_OK)
		return rc;
	const ex_exercise **ex = NULL;
	size_t nex = 0;
	class_roster roster = { 0 };
	ex_diags d = { 0 };
	if ((rc = select_exercises("lab", &set, o->list, &ex, &nex)) != CLI_OK)
		goto done;
	mp_status st = class_roster_load(&roster, o->roster, &d);
	print_diags("lab", &d);
	if (st == MP_ENOMEM || st == MP_EIO) {
		rc = st == MP_ENOMEM ? CLI_ENV : d.count && access(o->roster, R_OK) == 0 ? CLI_USAGE : CLI_ENV;
		goto done;
	}
	if (roster.count == 0) {
		cli_error("lab", "%s: no usable student", o->roster);
		rc = CLI_USAGE;
		goto done;
	}
	if (d.count) {
		cli_error("lab", "%s: nothing written: fix the roster rows above and run again", o->roster);
		rc = CLI_USAGE;
		goto done;
	}
	if (!variants_solvable(o, &roster, ex, nex)) {
		rc = CLI_USAGE;
		goto done;
	}
	if (mkdir(o->out, 0777) != 0 && errno != EEXIST) {
		cli_error("lab", "cannot create %s: %s", o->out, strerror(errno));
		rc = CLI_ENV;
		goto done;
	}
	if (!targets_ok(o, &roster)) {
		rc = CLI_USAGE;
		goto done;
	}
	/* the key, all students */
	char path[4400], err[4400];
	snprintf(path, sizeof path, "%s/answer-key.csv", o->out);
	file_atomic key;
	if (file_atomic_open_flags(&key, path, FILE_IN_FOLDER, err, sizeof err) != MP_OK) {
		cli_error("lab", "%s", err);
		rc = CLI_ENV;
		goto done;
	}
	csvw kw;
	csvw_init(&kw, key.fp);
	csvw_header(&kw, "student_id,exercise,field,expected");
	size_t written = 0;
	for (size_t s = 0; s < roster.count && rc == CLI_OK; s++) {
		const class_student *stu = &roster.students[s];
		rc = write_sheets(o, stu, ex, nex);
		if (rc != CLI_OK)
			break;
		/* the answer template and the key rows */
		snprintf(path, sizeof path, "%s/%s-answers.csv", o->out, stu->id);
		file_atomic t;
		if (rc == CLI_OK && file_atomic_open_flags(&t, path, FILE_IN_FOLDER, err, sizeof err) != MP_OK) {
			cli_error("lab", "%s", err);
			rc = CLI_ENV;
		}
		if (rc != CLI_OK)
			break;
		csvw tw;
		csvw_init(&tw, t.fp);
		csvw_header(&tw, "student_id,exercise,field,answer");
		for (size_t e = 0; e < nex && rc == CLI_OK; e++) {
			ex_variant v;
			ex_variant_make(ex[e], o->seed, stu->id, &v);
			ex_solution sol;
			if (ex_solve(ex[e], &v, &sol, err, sizeof err) != MP_OK) {
				cli_error("lab", "exercise %s for %s: %s", ex[e]->id, stu->id, err);
				rc = CLI_USAGE;
				break;
			}
			for (size_t f = 0; f < ex[e]->nfields; f++) {
				csvw_field(&tw, stu->id);
				csvw_field(&tw, ex[e]->id);
				csvw_field(&tw, ex[e]->fields[f].name);
				csvw_field(&tw, "");
				csvw_end_row(&tw);
				csvw_field(&kw, stu->id);
				csvw_field(&kw, ex[e]->id);
				csvw_field(&kw, ex[e]->fields[f].name);
				csvw_field(&kw, sol.expect[f].text);
				csvw_end_row(&kw);
			}
			ex_solution_free(&sol);
		}
		if (rc != CLI_OK) {
			file_atomic_abort(&t);
		} else if (file_atomic_commit(&t, err, sizeof err) != MP_OK) {
			cli_error("lab", "%s", err);
			rc = CLI_ENV;
		} else {
			written++;
		}
	}
	if (rc != CLI_OK) {
		file_atomic_abort(&key);
	} else if (file_atomic_commit(&key, err, sizeof err) != MP_OK) {
		cli_error("lab", "%s", err);
		rc = CLI_ENV;
	}
	if (rc == CLI_OK) {
		printf("Wrote sheets for %zu student%s (%zu exercise%s) to %s, with answer-key.csv.\n", written,
		       written == 1 ? "" : "s", nex, nex == 1 ? "" : "s", o->out);
	}
done:
	ex_diags_free(&d);
	class_roster_free(&roster);
	free(ex);
	ex_set_free(&set);
	return rc;
}

int cmd_lab(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "autograder"))
		return cmd_lab_autograder(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "autograde"))
		return cmd_lab_autograde(argc - 1, argv + 1);
	lab_opts o;
	int rc = parse("lab", argc, argv, &o, lab_help);
	if (rc != CLI_OK)
		return rc < 0 ? CLI_OK : rc;
	if (o.nwords == 0 || strcmp(o.words[0], "new") != 0) {
		cli_error("lab", "%s%s%s (known: new, autograder, autograde)", o.nwords ? "unknown action '" : "needs an action",
		          o.nwords ? o.words[0] : "", o.nwords ? "'" : "");
		return CLI_USAGE;
	}
	if (o.summary) {
		cli_error("lab", "--summary belongs to 'mixprec grade'");
		return CLI_USAGE;
	}
	/* the sheets print the seed in code spans and in a command to copy */
	if (!cli_course_seed_printable("lab", o.seed == ex_course_seed(NULL) ? "MIXPREC_COURSE_SEED" : "--course-seed", o.seed))
		return CLI_USAGE;
	if (!o.out) {
		cli_error("lab", "--out DIR is required");
		return CLI_USAGE;
	}
	if (o.nwords > 1) {
		cli_error("lab", "unexpected argument '%s'", o.words[1]);
		return CLI_USAGE;
	}
	rc = lab_new(&o);
	return cli_flush_stdout("lab") ? rc : CLI_ENV;
}

/* ---- grade ---------------------------------------------------------------------- */

static void grade_row(csvw *w, const class_student *st, const char *exercise, const class_sheet_row *row)
{
	csvw_field(w, st->id);
	csvw_field(w, st->name);
	csvw_field(w, exercise);
	csvw_fieldf(w, "%.3f", row->score);
	csvw_fieldf(w, "%zu", row->correct);
	csvw_fieldf(w, "%zu", row->fields);
	csvw_field(w, row->feedback);
	csvw_end_row(w);
}

static void write_grades(csvw *w, const class_report *r, const class_grading *g)
{
	csvw_header(w, "student_id,name,exercise,score,correct,fields,feedback");
	for (size_t s = 0; s < r->nstudents; s++) {
		const class_student *st = &g->roster->students[s];
		for (size_t e = 0; e < r->nex; e++)
			grade_row(w, st, g->ex[e]->id, class_report_sheet(r, s, e));
		grade_row(w, st, "total", &r->total[s]);
	}
}

/* text with control characters as '?', cut to fit buf; utf8: a cut inside a
 * UTF-8 sequence drops its leading bytes, and DEL is a control character */
static void shown_text(char *buf, size_t size, const char *text, bool utf8)
{
	snprintf(buf, size, "%s", text);
	size_t len = strlen(buf);
	if (utf8 && len == size - 1) {
		size_t k = len;
		while (k > 0 && ((unsigned char)buf[k - 1] & 0xc0) == 0x80)
			k--;
		if (k > 0 && ((unsigned char)buf[k - 1] & 0xc0) == 0xc0)
			buf[k - 1] = '\0';
	}
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 || (utf8 && (unsigned char)*p == 0x7f))
			*p = '?';
}

/* One field's lines of the class table. */
static void print_field(FILE *fp, const class_field_row *x, const char *name)
{
	char shown[48];
	shown_text(shown, sizeof shown, x->wrong ? x->wrong : "", false);
	fprintf(fp, "%-10s %-18s %4zu/%-4zu %7.0f%%  %s", "", name, x->correct, x->students,
	        class_report_percent(x->correct, x->students), shown);
	if (x->wrong)
		fprintf(fp, " (%zu)", x->wrong_count);
	fputc('\n', fp);
	if (x->mistake) {
		char ex_text[300];
		shown_text(ex_text, sizeof ex_text, x->mistake_example, true);
		fprintf(fp, "%-10s %-18s %zu made this mistake, e.g. \"%s\"\n", "", "", x->mistake_count, ex_text);
	}
}

static void summary_row(csvw *sw, const char *exercise, const char *field, size_t students, size_t correct,
                        double rate)
{
	csvw_field(sw, exercise);
	csvw_field(sw, field);
	csvw_fieldf(sw, "%zu", students);
	csvw_fieldf(sw, "%zu", correct);
	csvw_fieldf(sw, "%.3f", rate);
}

/* The class summary: a table on fp, and a CSV when sw is not NULL. */
static void summarise(FILE *fp, csvw *sw, const class_report *r, const class_grading *g)
{
	if (sw)
		csvw_header(sw, "exercise,field,students,correct,success_rate,common_wrong_answer,common_wrong_count,"
		                "common_mistake,common_mistake_count");
	fprintf(fp, "%-10s %-18s %9s %8s  %s\n", "exercise", "field", "correct", "success", "most common wrong answer");
	for (size_t e = 0; e < r->nex; e++) {
		const ex_exercise *ex = g->ex[e];
		const class_exercise_row *x = &r->exercise[e];
		fprintf(fp, "%-10s %-18s %4zu/%-4zu %7.0f%%\n", ex->id, "(all fields)", x->solved, x->students,
		        class_report_percent(x->solved, x->students));
		if (sw) {
			summary_row(sw, ex->id, "", x->students, x->solved, x->rate);
			for (int k = 0; k < 4; k++)
				csvw_field(sw, "");
			csvw_end_row(sw);
		}
		for (size_t i = x->first; i < x->first + x->count; i++) {
			const class_field_row *fr = &r->fields[i];
			const char *name = ex->fields[fr->field].name;
			print_field(fp, fr, name);
			if (sw) {
				summary_row(sw, ex->id, name, fr->students, fr->correct, fr->rate);
				csvw_field(sw, fr->wrong ? fr->wrong : "");
				csvw_fieldf(sw, "%zu", fr->wrong_count);
				csvw_field(sw, fr->mistake ? fr->mistake_example : "");
				csvw_fieldf(sw, "%zu", fr->mistake_count);
				csvw_end_row(sw);
			}
		}
	}
}

/* Opens FILE (or stdout for NULL or "-") for an atomic write. */
static bool open_out(const char *path, file_atomic *a, FILE **fp)
{
	char err[4400];
	if (!path || !strcmp(path, "-")) {
		*fp = stdout;
		a->fp = NULL;
		return true;
	}
	if (file_atomic_open(a, path, err, sizeof err) != MP_OK) {
		cli_error("grade", "%s", err);
		return false;
	}
	*fp = a->fp;
	return true;
}

static bool close_out(const char *path, file_atomic *a, bool commit)
{
	char err[4400];
	if (!path || !strcmp(path, "-"))
		return true;
	if (!commit) {
		file_atomic_abort(a);
		return false;
	}
	if (file_atomic_commit(a, err, sizeof err) != MP_OK) {
		cli_error("grade", "%s", err);
		return false;
	}
	return true;
}

/* Whether --out and --summary are two different files, neither an input
 * (reported when not). */
static bool outputs_ok(const lab_opts *o)
{
	if (o->summary && !strcmp(o->summary, o->out ? o->out : "-")) {
		/* both would be renamed onto one path (or mixed on stdout): one table lost */
		cli_error("grade", "--summary: '%s' is also where the grades go (--out); give another file", o->summary);
		return false;
	}
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i <= o->nwords; i++) {
			const char *out = k ? o->summary : o->out, *in = i < o->nwords ? o->words[i] : o->roster;
			if (out && strcmp(out, "-") && file_same(out, in)) {
				/* by device and inode: another name or a link is the same file */
				cli_error("grade", "%s: '%s' is %s '%s', an input; give another file", k ? "--summary" : "--out",
				          out, i < o->nwords ? "the submission" : "the roster", in);
				return false;
			}
		}
	return true;
}

/* Whether path names a file (not stdout). */
static bool is_file(const char *path)
{
	return path && strcmp(path, "-") != 0;
}

/* The grades CSV (o->out), the summary CSV (o->summary) and the class
 * table. With keep_files, files named by --out and --summary are left as
 * they were (reported) and only what goes to stdout is written. rc is the
 * status so far; returns it, or CLI_ENV when a write failed. */
static int write_outputs(const lab_opts *o, const class_report *rep, const class_grading *g, size_t nstudents,
                         size_t nex, bool keep_files, int rc)
{
	const char *out = o->out, *summary = o->summary;
	if (keep_files) {
		for (int k = 0; k < 2; k++) {
			const char *path = k ? summary : out;
			if (is_file(path))
				cli_error("grade", "%s: %s not written (the inputs above have problems); an existing file is kept",
				          k ? "--summary" : "--out", path);
		}
		summary = is_file(summary) ? NULL : summary;
	}
	bool no_grades = keep_files && is_file(out);
	file_atomic ga = { 0 }, sa = { 0 };
	FILE *gfp = NULL, *sfp = NULL;
	if (!no_grades && !open_out(out, &ga, &gfp))
		return CLI_ENV;
	if (summary && !open_out(summary, &sa, &sfp)) {
		close_out(out, &ga, false);
		return CLI_ENV;
	}
	csvw gw, sw;
	if (gfp) {
		csvw_init(&gw, gfp);
		write_grades(&gw, rep, g);
	}
	if (sfp)
		csvw_init(&sw, sfp);
	FILE *table = gfp == stdout ? stderr : stdout;
	fprintf(table, "Graded %zu student%s on %zu exercise%s from %zu file%s; %zu answered everything right.\n",
	        nstudents, nstudents == 1 ? "" : "s", nex, nex == 1 ? "" : "s", o->nwords, o->nwords == 1 ? "" : "s",
	        rep->all_right);
	summarise(table, sfp ? &sw : NULL, rep, g);
	bool gok = !gfp || csvw_ok(&gw), sok = !sfp || csvw_ok(&sw), ok = gok && sok;
	/* a file whose own write failed goes through commit, which reports why
	 * and leaves the old file in place; a good one is dropped silently when
	 * the other failed */
	bool closed = !gfp || close_out(out, &ga, !gok || sok);
	closed = close_out(summary, &sa, !sok || gok) && closed;
	return !closed || !ok ? CLI_ENV : rc;
}

int cmd_grade(int argc, char **argv)
{
	lab_opts o;
	int rc = parse("grade", argc, argv, &o, grade_help);
	if (rc != CLI_OK)
		return rc < 0 ? CLI_OK : rc;
	if (o.nwords == 0) {
		cli_error("grade", "needs at least one SUBMISSION.csv");
		return CLI_USAGE;
	}
	if (!outputs_ok(&o))
		return CLI_USAGE;
	ex_set set;
	if ((rc = cli_load_exercises("grade", o.dir, &set, false)) != CLI_OK)
		return rc;
	const ex_exercise **ex = NULL;
	size_t nex = 0;
	class_roster roster = { 0 };
	class_grading g = { 0 };
	class_report rep = { 0 };
	ex_diags d = { 0 };
	bool input_problem = false;
	if ((rc = select_exercises("grade", &set, o.list, &ex, &nex)) != CLI_OK)
		goto done;
	mp_status st = class_roster_load(&roster, o.roster, &d);
	print_diags("grade", &d);
	input_problem = d.count > 0;
	ex_diags_free(&d);
	if (st == MP_ENOMEM || st == MP_EIO) {
		rc = st == MP_ENOMEM || access(o.roster, R_OK) != 0 ? CLI_ENV : CLI_USAGE;
		goto done;
	}
	if (class_grading_init(&g, ex, nex, &roster, o.seed) != MP_OK) {
		cli_error("grade", "out of memory");
		rc = CLI_ENV;
		goto done;
	}
	for (size_t i = 0; i < o.nwords; i++) {
		st = class_grading_add(&g, o.words[i], &d);
		print_diags("grade", &d);
		input_problem = input_problem || d.count > 0;
		ex_diags_free(&d);
		if (st == MP_ENOMEM) {
			cli_error("grade", "out of memory");
			rc = CLI_ENV;
			goto done;
		}
		if (st == MP_EIO && access(o.words[i], R_OK) != 0)
			rc = CLI_ENV;   /* an unreadable file: reported, the others still graded */
	}
	char err[512];
	st = class_grade(&g, err, sizeof err);
	if (st == MP_ENOMEM) {
		cli_error("grade", "out of memory");
		rc = CLI_ENV;
		goto done;
	}
	if (st != MP_OK) {
		/* reported; those fields say why, and everything else is graded */
		cli_error("grade", "%s", err);
		input_problem = true;
	}
	if (class_report_build(&rep, &g) != MP_OK) {
		cli_error("grade", "out of memory");
		rc = CLI_ENV;
		goto done;
	}
	/* a run with a problem in its inputs keeps every file as it was: the
	 * class table still shows what could be graded, on the terminal */
	bool keep_files = rc != CLI_OK || input_problem;
	rc = write_outputs(&o, &rep, &g, roster.count, nex, keep_files, rc);
	if (rc == CLI_OK)
		rc = input_problem ? CLI_USAGE : rep.all_right < roster.count ? CLI_WRONG : CLI_OK;
done:
	class_report_free(&rep);
	class_grading_free(&g);
	class_roster_free(&roster);
	free(ex);
	ex_set_free(&set);
	if (!cli_flush_stdout("grade"))
		return CLI_ENV;
	return rc;
}
