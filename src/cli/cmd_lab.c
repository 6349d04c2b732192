/* mixprec lab new: the classroom sheets, answer templates and key. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/lab_opts.h"
#include "teach/class_report.h"
#include "teach/classroom.h"
#include "teach/exercise.h"
#include "teach/lesson.h"
#include "util/csvout.h"
#include "util/file.h"
#include "util/strbuf.h"

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
	       LAB_DEFAULT_SET);
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

/* Frees the first n solutions of sol, and sol. */
static void free_solutions(ex_solution *sol, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ex_solution_free(&sol[i]);
	free(sol);
}

/* Every student's solution of every exercise, sol[s * nex + e], solved
 * before the first file is written so that a variant that does not solve
 * leaves the folder as it was; NULL after reporting. */
static ex_solution *solve_all(const lab_opts *o, const class_roster *roster, const ex_exercise **ex, size_t nex)
{
	ex_solution *sol = calloc(roster->count * nex + 1, sizeof *sol);
	if (!sol) {
		cli_error("lab", "out of memory");
		return NULL;
	}
	char err[4400];
	for (size_t s = 0; s < roster->count; s++)
		for (size_t e = 0; e < nex; e++) {
			ex_variant v;
			ex_variant_make(ex[e], o->seed, roster->students[s].id, &v);
			if (ex_solve(ex[e], &v, &sol[s * nex + e], err, sizeof err) != MP_OK) {
				cli_error("lab", "exercise %s for %s: %s; nothing written", ex[e]->id, roster->students[s].id,
				          err);
				free_solutions(sol, s * nex + e);
				return NULL;
			}
		}
	return sol;
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
	ex_solution *sol = NULL;
	if ((rc = lab_select_exercises("lab", &set, o->list, &ex, &nex)) != CLI_OK)
		goto done;
	mp_status st = class_roster_load(&roster, o->roster, &d);
	lab_print_diags("lab", &d);
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
	if (!(sol = solve_all(o, &roster, ex, nex))) {
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
		for (size_t e = 0; e < nex; e++) {
			const ex_solution *se = &sol[s * nex + e];
			for (size_t f = 0; f < ex[e]->nfields; f++) {
				csvw_field(&tw, stu->id);
				csvw_field(&tw, ex[e]->id);
				csvw_field(&tw, ex[e]->fields[f].name);
				csvw_field(&tw, "");
				csvw_end_row(&tw);
				csvw_field(&kw, stu->id);
				csvw_field(&kw, ex[e]->id);
				csvw_field(&kw, ex[e]->fields[f].name);
				csvw_field(&kw, se->expect[f].text);
				csvw_end_row(&kw);
			}
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
	if (sol)
		free_solutions(sol, roster.count * nex);
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
	int rc = lab_parse("lab", argc, argv, &o, lab_help);
	if (rc != CLI_OK)
		return rc < 0 ? CLI_OK : rc;
	if (o.nwords == 0 || strcmp(o.words[0], "new") != 0) {
		cli_error("lab", "%s%s%s (known: new, autograder, autograde)", o.nwords ? "unknown action '" : "needs an action",
		          o.nwords ? o.words[0] : "", o.nwords ? "'" : "");
		return CLI_USAGE;
	}
	if (o.summary || o.format || o.assignment_ids) {
		cli_error("lab", "%s belongs to 'mixprec grade'",
		          o.summary ? "--summary" : o.format ? "--format" : "--assignment-ids");
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
