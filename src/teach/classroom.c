#include "teach/classroom.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/csvread.h"
#include "util/text.h"

static mp_status diag(ex_diags *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static mp_status diag(ex_diags *d, const char *fmt, ...)
{
	char msg[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	char **g = realloc(d->msgs, (d->count + 1) * sizeof *g);
	if (!g)
		return MP_ENOMEM;
	d->msgs = g;
	if (!(d->msgs[d->count] = strdup(msg)))
		return MP_ENOMEM;
	d->count++;
	return MP_OK;
}

/* Keeps a cell short and on one line for a message. */
static const char *quote(const char *s, char *buf, size_t n)
{
	size_t k = 0;
	for (; *s && k + 4 < n; s++)
		buf[k++] = (unsigned char)*s < 0x20 ? '?' : *s;
	if (*s && n > 4)
		memcpy(buf + k, "...", 3), k += 3;
	buf[k] = '\0';
	return buf;
}

mp_status class_id_check(const char *id, char *err, size_t errlen)
{
	size_t n = strlen(id);
	/* '@' first: a spreadsheet reads it as a formula, so every CSV mixprec
	 * writes would show it with a neutralising apostrophe; '-' first reads
	 * as an option in the commands the sheets print */
	bool ok = n > 0 && n <= CLASS_ID_MAX && id[0] != '.' && id[0] != '-' && id[0] != '@';
	for (size_t i = 0; ok && i < n; i++)
		ok = (isalnum((unsigned char)id[i]) && (unsigned char)id[i] < 0x80) || strchr("._@-", id[i]);
	if (ok)
		return MP_OK;
	char q[80];
	return mp_fail(MP_EINVAL, err, errlen,
	               "student id '%s' is not usable (1 to %d letters, digits, '.', '_', '@', '-'; not starting with "
	               "'.', '-' or '@', which a spreadsheet reads as a formula)",
	               quote(id, q, sizeof q), CLASS_ID_MAX);
}

/* The column of a header called one of names (case-insensitive), or -1. */
static int column(const csvr_row *row, const char *const *names)
{
	for (size_t i = 0; i < row->count; i++)
		for (const char *const *n = names; *n; n++)
			if (strcasecmp(text_trim(row->fields[i]), *n) == 0)
				return (int)i;
	return -1;
}


/* ---- roster ------------------------------------------------------------------ */

typedef struct {
	class_roster *r;
	ex_diags *diags;
	const char *path;
	int col_id, col_name, col_extra[5];
	bool header;
	mp_status st;
} roster_state;

/* The optional identity fields of s, in the order of the roster's column names. */
static void student_extra(class_student *s, char **out[5])
{
	out[0] = &s->email;
	out[1] = &s->canvas_id;
	out[2] = &s->sis_user_id;
	out[3] = &s->sis_login_id;
	out[4] = &s->section;
}

static int roster_row(void *ud, const csvr_row *row)
{
	roster_state *rs = ud;
	if (!rs->header) {
		static const char *const id_names[] = { "student_id", "id", "student", NULL };
		static const char *const name_names[] = { "name", "student_name", NULL };
		/* in the order of student_extra(); Canvas's and Moodle's own
		 * spellings too, so that their exports read as they are */
		static const char *const extra_names[5][5] = {
			{ "email", "email address", "e-mail", NULL },
			{ "canvas_id", "canvas id", NULL },
			{ "sis_user_id", "sis user id", "sis_id", NULL },
			{ "sis_login_id", "sis login id", NULL },
			{ "section", NULL },
		};
		rs->header = true;
		rs->col_id = column(row, id_names);
		rs->col_name = column(row, name_names);
		for (int k = 0; k < 5; k++)
			rs->col_extra[k] = column(row, extra_names[k]);
		if (rs->col_id < 0) {
			rs->st = diag(rs->diags, "%s:%ld: the header has no student_id column", rs->path, row->line);
			if (rs->st == MP_OK)
				rs->st = MP_EIO;
			return 1;
		}
		return 0;
	}
	if ((size_t)rs->col_id >= row->count) {
		rs->st = diag(rs->diags, "%s:%ld: no student_id in this row", rs->path, row->line);
		return rs->st != MP_OK;
	}
	char *id = text_trim(row->fields[rs->col_id]);
	char why[300];
	if (class_id_check(id, why, sizeof why) != MP_OK) {
		rs->st = diag(rs->diags, "%s:%ld: %s; row skipped", rs->path, row->line, why);
		return rs->st != MP_OK;
	}
	int dup = class_roster_find(rs->r, id);
	if (dup >= 0) {
		rs->st = diag(rs->diags, "%s:%ld: student %s is listed twice (first on line %ld); row skipped", rs->path,
		              row->line, id, rs->r->students[dup].line);
		return rs->st != MP_OK;
	}
	class_student *g = realloc(rs->r->students, (rs->r->count + 1) * sizeof *g);
	if (!g) {
		rs->st = MP_ENOMEM;
		return 1;
	}
	rs->r->students = g;
	class_student *s = &g[rs->r->count];
	memset(s, 0, sizeof *s);
	snprintf(s->id, sizeof s->id, "%s", id);
	s->line = row->line;
	const char *name = rs->col_name >= 0 && (size_t)rs->col_name < row->count ? text_trim(row->fields[rs->col_name]) : "";
	if (!(s->name = strdup(name))) {
		rs->st = MP_ENOMEM;
		return 1;
	}
	/* it goes into sheets and the grades CSV: valid UTF-8, controls as blanks */
	text_sanitize(s->name);
	rs->r->count++;
	char **extra[5];
	student_extra(s, extra);
	for (int k = 0; k < 5; k++) {
		int c = rs->col_extra[k];
		if (!(*extra[k] = strdup(c >= 0 && (size_t)c < row->count ? text_trim(row->fields[c]) : ""))) {
			rs->st = MP_ENOMEM;
			return 1;
		}
		text_sanitize(*extra[k]);
	}
	return 0;
}

typedef struct {
	csvr_row_fn fn;
	void *ud;
	ex_diags *diags;
	const char *path;
	mp_status st;
} csv_ctx;

static int ctx_row(void *ud, const csvr_row *row)
{
	csv_ctx *c = ud;
	return c->fn(c->ud, row);
}

/* A malformed row: reported, skipped; the rest is still read. */
static int ctx_error(void *ud, long line, const char *why)
{
	csv_ctx *c = ud;
	c->st = diag(c->diags, "%s:%ld: %s; row skipped", c->path, line, why);
	return c->st != MP_OK;
}

static mp_status read_csv(const char *path, csvr_row_fn fn, void *ud, mp_status *inner, ex_diags *diags)
{
	char err[4400];
	csv_ctx c = { .fn = fn, .ud = ud, .diags = diags, .path = path };
	mp_status st = csvr_read_file(path, CLASS_FILE_MAX, ctx_row, ctx_error, &c, err, sizeof err);
	if (*inner != MP_OK)
		return *inner;
	if (st == MP_ENOMEM || c.st != MP_OK)
		return MP_ENOMEM;
	if (st == MP_EINVAL) {
		if (diag(diags, "%s: larger than %u MiB", path, CLASS_FILE_MAX >> 20) != MP_OK)
			return MP_ENOMEM;
		return MP_EIO;
	}
	if (st != MP_OK) {
		if (diag(diags, "%s", err) != MP_OK)
			return MP_ENOMEM;
		return st;
	}
	return MP_OK;
}

mp_status class_roster_load(class_roster *r, const char *path, ex_diags *diags)
{
	memset(r, 0, sizeof *r);
	roster_state rs = { .r = r, .diags = diags, .path = path };
	mp_status st = read_csv(path, roster_row, &rs, &rs.st, diags);
	if (st == MP_OK && !rs.header) {
		if (diag(diags, "%s: empty: expected a header with a student_id column", path) != MP_OK)
			return MP_ENOMEM;
		st = MP_EIO;
	}
	return st;
}

void class_roster_free(class_roster *r)
{
	for (size_t i = 0; i < r->count; i++) {
		free(r->students[i].name);
		char **extra[5];
		student_extra(&r->students[i], extra);
		for (int k = 0; k < 5; k++)
			free(*extra[k]);
	}
	free(r->students);
	memset(r, 0, sizeof *r);
}

int class_roster_find(const class_roster *r, const char *id)
{
	for (size_t i = 0; i < r->count; i++)
		if (strcmp(r->students[i].id, id) == 0)
			return (int)i;
	return -1;
}

/* ---- submissions ----------------------------------------------------------------- */

mp_status class_grading_init(class_grading *g, const ex_exercise *const *ex, size_t nex,
                             const class_roster *roster, const char *seed)
{
	memset(g, 0, sizeof *g);
	g->ex = ex;
	g->nex = nex;
	g->roster = roster;
	g->seed = seed;
	size_t n = (roster->count ? roster->count : 1) * (nex ? nex : 1) * EX_MAX_FIELDS;
	g->answer = calloc(n, sizeof *g->answer);
	g->where = calloc(n, sizeof *g->where);
	g->feedback = calloc(n, sizeof *g->feedback);
	g->verdict = calloc(n, sizeof *g->verdict);
	g->mistake = calloc(n, sizeof *g->mistake);
	if (!g->answer || !g->where || !g->feedback || !g->verdict || !g->mistake) {
		class_grading_free(g);
		return MP_ENOMEM;
	}
	return MP_OK;
}

void class_grading_free(class_grading *g)
{
	size_t n = g->roster ? (g->roster->count ? g->roster->count : 1) * (g->nex ? g->nex : 1) * EX_MAX_FIELDS : 0;
	for (size_t i = 0; i < n; i++) {
		if (g->answer)
			free(g->answer[i]);
		if (g->where)
			free(g->where[i]);
		if (g->feedback)
			free(g->feedback[i]);
	}
	free(g->answer);
	free(g->where);
	free(g->feedback);
	free(g->verdict);
	free(g->mistake);
	memset(g, 0, sizeof *g);
}

typedef struct {
	class_grading *g;
	ex_diags *diags;
	const char *path;
	int col[4];   /* student_id, exercise, field, answer */
	bool header;
	mp_status st;
} sub_state;

static int sub_row(void *ud, const csvr_row *row)
{
	sub_state *ss = ud;
	class_grading *g = ss->g;
	char q[80];
	if (!ss->header) {
		static const char *const names[4][3] = { { "student_id", "id", NULL },
			                                     { "exercise", "exercise_id", NULL },
			                                     { "field", NULL, NULL },
			                                     { "answer", NULL, NULL } };
		ss->header = true;
		for (int k = 0; k < 4; k++) {
			ss->col[k] = column(row, names[k]);
			if (ss->col[k] < 0) {
				ss->st = diag(ss->diags, "%s:%ld: the header needs the columns student_id, exercise, field, answer (%s is missing)",
				              ss->path, row->line, names[k][0]);
				if (ss->st == MP_OK)
					ss->st = MP_EIO;
				return 1;
			}
		}
		return 0;
	}
	const char *cell[4];
	for (int k = 0; k < 4; k++) {
		if ((size_t)ss->col[k] >= row->count) {
			ss->st = diag(ss->diags, "%s:%ld: %zu fields; expected at least %d; row skipped", ss->path, row->line,
			              row->count, ss->col[k] + 1);
			return ss->st != MP_OK;
		}
		cell[k] = text_trim(row->fields[ss->col[k]]);
	}
	if (!cell[3][0])
		return 0;   /* a field left blank in the template: no answer */
	char why[300];
	if (class_id_check(cell[0], why, sizeof why) != MP_OK) {
		ss->st = diag(ss->diags, "%s:%ld: %s; row skipped", ss->path, row->line, why);
		return ss->st != MP_OK;
	}
	int s = class_roster_find(g->roster, cell[0]);
	if (s < 0) {
		ss->st = diag(ss->diags, "%s:%ld: unknown student '%s' (not in the roster); row skipped", ss->path, row->line,
		              quote(cell[0], q, sizeof q));
		return ss->st != MP_OK;
	}
	size_t e = 0;
	while (e < g->nex && strcmp(g->ex[e]->id, cell[1]) != 0)
		e++;
	if (e == g->nex) {
		ss->st = diag(ss->diags, "%s:%ld: exercise '%s' is not graded in this lab; row skipped", ss->path, row->line,
		              quote(cell[1], q, sizeof q));
		return ss->st != MP_OK;
	}
	int f = ex_field_index(g->ex[e], cell[2]);
	if (f < 0) {
		ss->st = diag(ss->diags, "%s:%ld: exercise %s has no field '%s'; row skipped", ss->path, row->line,
		              g->ex[e]->id, quote(cell[2], q, sizeof q));
		return ss->st != MP_OK;
	}
	if (strlen(cell[3]) > 200) {
		ss->st = diag(ss->diags, "%s:%ld: answer longer than 200 characters; row skipped", ss->path, row->line);
		return ss->st != MP_OK;
	}
	size_t k = class_slot(g, (size_t)s, e, (size_t)f);
	char where[512];
	snprintf(where, sizeof where, "%s:%ld", ss->path, row->line);
	if (g->answer[k]) {
		ss->st = diag(ss->diags, "%s: %s %s %s answered again (first at %s); the later answer counts", where,
		              cell[0], g->ex[e]->id, cell[2], g->where[k]);
		if (ss->st != MP_OK)
			return 1;
		free(g->answer[k]);
		free(g->where[k]);
		g->where[k] = NULL;
	}
	g->answer[k] = strdup(cell[3]);
	g->where[k] = strdup(where);
	if (!g->answer[k] || !g->where[k]) {
		ss->st = MP_ENOMEM;
		return 1;
	}
	return 0;
}

mp_status class_grading_add(class_grading *g, const char *path, ex_diags *diags)
{
	sub_state ss = { .g = g, .diags = diags, .path = path };
	mp_status st = read_csv(path, sub_row, &ss, &ss.st, diags);
	if (st == MP_OK && !ss.header) {
		if (diag(diags, "%s: empty: expected a header student_id,exercise,field,answer", path) != MP_OK)
			return MP_ENOMEM;
		st = MP_EIO;
	}
	g->files++;
	return st;
}

mp_status class_grade(class_grading *g, char *err, size_t errlen)
{
	mp_status result = MP_OK;
	for (size_t s = 0; s < g->roster->count; s++) {
		for (size_t e = 0; e < g->nex; e++) {
			const ex_exercise *ex = g->ex[e];
			ex_variant v;
			ex_variant_make(ex, g->seed, g->roster->students[s].id, &v);
			ex_solution sol;
			char why[256];
			mp_status st = ex_solve(ex, &v, &sol, why, sizeof why);
			if (st == MP_ENOMEM)
				return st;
			if (st != MP_OK) {
				/* this student's variant does not solve: say so in every field, grade the rest */
				if (result == MP_OK)
					snprintf(err, errlen, "exercise %s for student %s: %s", ex->id, g->roster->students[s].id,
					         why);
				result = st;
				for (size_t f = 0; f < ex->nfields; f++) {
					size_t k = class_slot(g, s, e, f);
					char fb[400];
					snprintf(fb, sizeof fb, "%s: not graded: this student's variant cannot be solved (%s)",
					         ex->fields[f].name, why);
					free(g->feedback[k]);
					g->verdict[k] = EX_MALFORMED;
					g->mistake[k] = NULL;
					if (!(g->feedback[k] = strdup(fb)))
						return MP_ENOMEM;
				}
				continue;
			}
			for (size_t f = 0; f < ex->nfields; f++) {
				size_t k = class_slot(g, s, e, f);
				char fb[1024];
				free(g->feedback[k]);
				g->feedback[k] = NULL;
				g->mistake[k] = NULL;
				if (!g->answer[k]) {
					g->verdict[k] = EX_MALFORMED;
					snprintf(fb, sizeof fb, "%s: no answer", ex->fields[f].name);
				} else {
					g->verdict[k] = ex_check_tagged(ex, &sol, f, g->answer[k], fb, sizeof fb, &g->mistake[k]);
				}
				if (g->verdict[k] != EX_CORRECT && !(g->feedback[k] = strdup(fb))) {
					ex_solution_free(&sol);
					return MP_ENOMEM;
				}
			}
			ex_solution_free(&sol);
		}
	}
	return result;
}
