/* mixprec grade: grading the submissions of a classroom lab. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/grade_export.h"
#include "cli/lab_opts.h"
#include "teach/class_report.h"
#include "teach/classroom.h"
#include "teach/exercise.h"
#include "util/csvout.h"
#include "util/file.h"

static void grade_help(void)
{
	printf("Usage: mixprec grade --roster ROSTER.csv SUBMISSION.csv... [--out FILE]\n"
	       "                    [--summary FILE] [--misconceptions FILE]\n"
	       "                    [--course-seed S] [--exercises LIST]\n"
	       "                    [--format csv|canvas|moodle|prairielearn]\n"
	       "                    [--assignment-ids EX=ID,...]\n"
	       "Grades every student of the roster on every exercise of the lab against\n"
	       "their own variant: a score and feedback per student and exercise, and a\n"
	       "class summary (success rate, most common wrong answer and most common mistake\n"
	       "per field: one mistake in every variant, however the numbers differ), and\n"
	       "every misconception the wrong answers showed, counted over the class, most\n"
	       "common first.\n"
	       "Malformed rows and unknown students are reported as file:line and the\n"
	       "rest is still graded on the terminal, but a run with a problem in an\n"
	       "input writes no file (--out, --summary and --misconceptions are left as\n"
	       "they were).\n"
	       "Output cells that a spreadsheet would run as a formula are neutralised;\n"
	       "files are written atomically.\n\n"
	       "  --roster FILE       CSV with a student_id column (and optionally name, email,\n"
	       "                      canvas_id, sis_user_id, sis_login_id, section)\n"
	       "  --out FILE          grades CSV (default: standard output); a folder for\n"
	       "                      prairielearn (new, or empty)\n"
	       "  --format F          what --out holds: csv (default, the columns below);\n"
	       "                      canvas: a Canvas Gradebook import (Student, ID, SIS User\n"
	       "                      ID, SIS Login ID, Section, a column per exercise, a\n"
	       "                      Points Possible row); moodle: a Moodle grade import\n"
	       "                      (Email address, ID number, Full name, a column per\n"
	       "                      exercise); prairielearn: DIR/ID/results.json per student,\n"
	       "                      PrairieLearn's external-grader results. An exercise is\n"
	       "                      worth a point per field that is not optional\n"
	       "  --assignment-ids EX=ID,...  with canvas: the Canvas assignment id of an\n"
	       "                      exercise (its column becomes 'TITLE (ID)'); an exercise\n"
	       "                      without one makes Canvas create a new assignment\n"
	       "  --summary FILE      the class summary as CSV too\n"
	       "  --misconceptions FILE  the misconceptions as CSV too: misconception,\n"
	       "                      exercise,field,students,share (of the roster), most\n"
	       "                      students first; 'mixprec plot FILE' draws a bar per\n"
	       "                      misconception (--svg/--png for an image)\n"
	       "  --course-seed S     the seed the sheets were made with\n"
	       "  --exercises LIST    exercise ids, comma-separated, or 'all' (default\n"
	       "                      %s)\n"
	       "  --exercise-dir DIR  read the exercises from DIR\n"
	       "  -h, --help          this text\n\n"
	       "Grades: student_id,name,exercise,score,correct,fields,feedback (and a\n"
	       "'total' row per student). Exit status: 0 every answer right, 1 some answer\n"
	       "wrong or missing, 2 bad usage or a problem in an input file, 3 I/O failure.\n",
	       LAB_DEFAULT_SET);
}

/* The format of --format (reported when unknown) and whether it fits --out. */
static bool format_ok(const lab_opts *o, grade_format *fmt)
{
	*fmt = GRADE_CSV;
	if (o->format && !grade_format_parse(o->format, fmt)) {
		cli_error("grade", "--format: unknown format '%s' (known: csv, canvas, moodle, prairielearn)", o->format);
		return false;
	}
	if (o->assignment_ids && *fmt != GRADE_CANVAS) {
		cli_error("grade", "--assignment-ids names Canvas assignments: it needs --format canvas");
		return false;
	}
	if (*fmt == GRADE_PRAIRIELEARN && (!o->out || !strcmp(o->out, "-"))) {
		cli_error("grade", "--format prairielearn needs --out DIR, the folder of the results");
		return false;
	}
	return *fmt != GRADE_PRAIRIELEARN || grade_prairielearn_target_ok(o->out);
}

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

/* The misconceptions: a table on fp, and a CSV when mw is not NULL. */
static void misconceptions(FILE *fp, csvw *mw, const class_report *r, const class_grading *g)
{
	if (mw)
		csvw_header(mw, "misconception,exercise,field,students,share");
	fprintf(fp, "\nMisconceptions, most common first (%zu):\n", r->nmisconceptions);
	if (r->nmisconceptions)
		fprintf(fp, "%8s %6s  %-10s %-18s %s\n", "students", "share", "exercise", "field", "misconception");
	for (size_t i = 0; i < r->nmisconceptions; i++) {
		const class_misconception_row *m = &r->misconceptions[i];
		const ex_exercise *ex = g->ex[m->exercise];
		const char *field = ex->fields[m->field].name;
		char tag[300];
		shown_text(tag, sizeof tag, m->tag, true);
		fprintf(fp, "%8zu %5.0f%%  %-10s %-18s %s\n", m->students, 100.0 * m->share, ex->id, field, tag);
		if (mw) {
			csvw_field(mw, m->tag);
			csvw_field(mw, ex->id);
			csvw_field(mw, field);
			csvw_fieldf(mw, "%zu", m->students);
			csvw_fieldf(mw, "%.3f", m->share);
			csvw_end_row(mw);
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

/* Whether --out, --summary and --misconceptions are different files, none
 * an input (reported when not). */
static bool outputs_ok(const lab_opts *o)
{
	const char *path[3] = { o->out ? o->out : "-", o->summary, o->misconceptions };
	static const char *const opt[3] = { "--out", "--summary", "--misconceptions" };
	for (int k = 1; k < 3; k++)
		for (int j = 0; j < k; j++)
			if (path[k] && path[j] && !strcmp(path[k], path[j])) {
				/* both would be renamed onto one path (or mixed on stdout): one table lost */
				cli_error("grade", "%s: '%s' is also where %s goes; give another file", opt[k], path[k], opt[j]);
				return false;
			}
	for (int k = 0; k < 3; k++)
		for (size_t i = 0; i <= o->nwords; i++) {
			const char *out = path[k], *in = i < o->nwords ? o->words[i] : o->roster;
			if (out && strcmp(out, "-") && file_same(out, in)) {
				/* by device and inode: another name or a link is the same file */
				cli_error("grade", "%s: '%s' is %s '%s', an input; give another file", opt[k], out,
				          i < o->nwords ? "the submission" : "the roster", in);
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

/* The grades CSV (o->out), the summary CSV (o->summary), the
 * misconceptions CSV (o->misconceptions) and the class tables. With
 * keep_files, files named by those options are left as they were
 * (reported) and only what goes to stdout is written. rc is the status so
 * far; returns it, or CLI_ENV when a write failed. */
static int write_outputs(const lab_opts *o, grade_format fmt, const char *const *ids, const class_report *rep,
                         const class_grading *g, size_t nstudents, size_t nex, bool keep_files, int rc)
{
	static const char *const opt[3] = { "--out", "--summary", "--misconceptions" };
	const char *path[3] = { o->out, o->summary, o->misconceptions };
	if (keep_files)
		for (int k = 0; k < 3; k++)
			if (is_file(path[k])) {
				cli_error("grade", "%s: %s not written (the inputs above have problems); an existing file is kept",
				          opt[k], path[k]);
				if (k > 0)
					path[k] = NULL;
			}
	bool no_grades = (keep_files && is_file(path[0])) || fmt == GRADE_PRAIRIELEARN;
	file_atomic fa[3] = { { 0 } };
	FILE *fp[3] = { NULL };
	csvw w[3];
	for (int k = 0; k < 3; k++) {
		if ((k == 0 && no_grades) || (k > 0 && !path[k]))
			continue;
		if (!open_out(path[k], &fa[k], &fp[k])) {
			for (int j = 0; j < k; j++)
				if (fp[j])
					close_out(path[j], &fa[j], false);
			return CLI_ENV;
		}
		csvw_init(&w[k], fp[k]);
	}
	if (fp[0]) {
		if (fmt == GRADE_CSV)
			write_grades(&w[0], rep, g);
		else
			grade_export_csv(fmt, &w[0], rep, g, ids);
	}
	FILE *table = fp[0] == stdout ? stderr : stdout;
	fprintf(table, "Graded %zu student%s on %zu exercise%s from %zu file%s; %zu answered everything right.\n",
	        nstudents, nstudents == 1 ? "" : "s", nex, nex == 1 ? "" : "s", o->nwords, o->nwords == 1 ? "" : "s",
	        rep->all_right);
	summarise(table, fp[1] ? &w[1] : NULL, rep, g);
	misconceptions(table, fp[2] ? &w[2] : NULL, rep, g);
	bool good[3], ok = true;
	for (int k = 0; k < 3; k++)
		ok = (good[k] = !fp[k] || csvw_ok(&w[k])) && ok;
	/* a file whose own write failed goes through commit, which reports why
	 * and leaves the old file in place; a good one is dropped silently when
	 * another failed */
	bool closed = true;
	for (int k = 0; k < 3; k++)
		if (fp[k])
			closed = close_out(path[k], &fa[k], !good[k] || ok) && closed;
	if (closed && ok && fmt == GRADE_PRAIRIELEARN && !keep_files && grade_export_prairielearn(o->out, rep, g) != CLI_OK)
		return CLI_ENV;
	return !closed || !ok ? CLI_ENV : rc;
}

int cmd_grade(int argc, char **argv)
{
	lab_opts o;
	int rc = lab_parse("grade", argc, argv, &o, grade_help);
	if (rc != CLI_OK)
		return rc < 0 ? CLI_OK : rc;
	if (o.nwords == 0) {
		cli_error("grade", "needs at least one SUBMISSION.csv");
		return CLI_USAGE;
	}
	grade_format fmt;
	if (!outputs_ok(&o) || !format_ok(&o, &fmt))
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
	char *ids_text = NULL;
	const char **ids = NULL;
	if ((rc = lab_select_exercises("grade", &set, o.list, &ex, &nex)) != CLI_OK)
		goto done;
	mp_status st = class_roster_load(&roster, o.roster, &d);
	lab_print_diags("grade", &d);
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
	if (o.assignment_ids) {
		ids_text = strdup(o.assignment_ids);
		ids = calloc(nex ? nex : 1, sizeof *ids);
		if (!ids_text || !ids) {
			cli_error("grade", "out of memory");
			rc = CLI_ENV;
			goto done;
		}
		if (!grade_assignment_ids(ids_text, &g, ids)) {
			rc = CLI_USAGE;
			goto done;
		}
	}
	if (grade_export_unmatched(fmt, &g, o.roster) > 0)
		input_problem = true;   /* a gradebook row it cannot match: reported, nothing written */
	for (size_t i = 0; i < o.nwords; i++) {
		st = class_grading_add(&g, o.words[i], &d);
		lab_print_diags("grade", &d);
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
	rc = write_outputs(&o, fmt, ids, &rep, &g, roster.count, nex, keep_files, rc);
	if (rc == CLI_OK)
		rc = input_problem ? CLI_USAGE : rep.all_right < roster.count ? CLI_WRONG : CLI_OK;
done:
	free(ids);
	free(ids_text);
	class_report_free(&rep);
	class_grading_free(&g);
	class_roster_free(&roster);
	free(ex);
	ex_set_free(&set);
	if (!cli_flush_stdout("grade"))
		return CLI_ENV;
	return rc;
}
