#include "teach/autograde.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "teach/classroom.h"
#include "util/file.h"
#include "util/strbuf.h"
#include "util/utf8.h"

#define META_MAX (16u << 20)   /* submission_metadata.json, previous results included */
#define SEED_MAX 128

char *ag_config_text(const char *seed, const char *const *ids, size_t nids, const char *roster)
{
	json_t *o = json_object(), *a = json_array();
	bool ok = o && a && !json_object_set_new(o, "course_seed", json_string(seed));
	for (size_t i = 0; ok && i < nids; i++)
		ok = !json_array_append_new(a, json_string(ids[i]));
	ok = ok && !json_object_set(o, "exercises", a);
	ok = ok && !json_object_set_new(o, "roster", roster ? json_string(roster) : json_null());
	char *text = ok ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(a);
	json_decref(o);
	return text;
}

void ag_config_free(ag_config *c)
{
	free(c->seed);
	for (size_t i = 0; i < c->nids; i++)
		free(c->ids[i]);
	free(c->roster);
	memset(c, 0, sizeof *c);
}

/* The roster's name inside the source folder: a plain file name. */
static bool plain_name(const char *s)
{
	return s[0] && s[0] != '.' && !strchr(s, '/');
}

mp_status ag_config_load(ag_config *c, const char *path, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	json_error_t je;
	json_t *o = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!o)
		return mp_fail(MP_EIO, err, errlen, "%s:%d: %s", path, je.line, je.text);
	json_t *seed = json_object_get(o, "course_seed"), *ids = json_object_get(o, "exercises"),
	       *roster = json_object_get(o, "roster");
	mp_status st = MP_OK;
	if (!json_is_string(seed) || json_string_length(seed) == 0 || json_string_length(seed) > SEED_MAX)
		st = mp_fail(MP_EINVAL, err, errlen, "%s: course_seed: expected a string of 1 to %d characters", path,
		             SEED_MAX);
	else if (!json_is_array(ids) || json_array_size(ids) == 0 || json_array_size(ids) > AG_MAX_EXERCISES)
		st = mp_fail(MP_EINVAL, err, errlen, "%s: exercises: expected an array of 1 to %d exercise ids", path,
		             AG_MAX_EXERCISES);
	else if (roster && !json_is_null(roster) && (!json_is_string(roster) || !plain_name(json_string_value(roster))))
		st = mp_fail(MP_EINVAL, err, errlen, "%s: roster: expected null or a file name in the same folder", path);
	else if (!(c->seed = strdup(json_string_value(seed))))
		st = MP_ENOMEM;
	for (size_t i = 0; st == MP_OK && i < json_array_size(ids); i++) {
		json_t *id = json_array_get(ids, i);
		if (!json_is_string(id))
			st = mp_fail(MP_EINVAL, err, errlen, "%s: exercises[%zu]: expected a string", path, i);
		else if (!(c->ids[c->nids++] = strdup(json_string_value(id))))
			st = MP_ENOMEM;
	}
	if (st == MP_OK && json_is_string(roster) && !(c->roster = strdup(json_string_value(roster))))
		st = MP_ENOMEM;
	json_decref(o);
	if (st != MP_OK)
		ag_config_free(c);
	return st == MP_ENOMEM ? mp_fail(MP_ENOMEM, err, errlen, "out of memory") : st;
}

/* ---- what a grading found wrong ---------------------------------------------------- */

/* The reasons a submission is not graded, one per line. */
typedef struct {
	strbuf text;
	size_t count;
} problems;

static void problem(problems *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void problem(problems *p, const char *fmt, ...)
{
	char msg[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (p->count < 20)
		strbuf_printf(&p->text, "- %s\n", msg);
	else if (p->count == 20)
		strbuf_printf(&p->text, "- (more problems not shown)\n");
	p->count++;
}

/* A JSON string of text, with every ill-formed UTF-8 sequence (a message
 * may quote a cell cut short) as '?': jansson takes valid UTF-8 only. */
static json_t *text_json(const char *text)
{
	size_t n = strlen(text);
	char *copy = malloc(n + 1);
	if (!copy)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		bool valid;
		size_t len = utf8_decode(text + i, n - i, &cp, &valid);
		if (valid && cp != 0) {
			memcpy(copy + k, text + i, len);
			k += len;
		} else {
			copy[k++] = '?';
		}
		i += len;
	}
	json_t *s = json_stringn(copy, k);
	free(copy);
	return s;
}

/* ---- the inputs ------------------------------------------------------------------ */

/* The student id from ROOT/submission_metadata.json: users[0].sid when
 * set, else users[0].email; checked by class_id_check. False (reported)
 * when there is none. */
static bool metadata_id(const char *root, char *id, size_t n, problems *p)
{
	char path[4400], err[4600];
	snprintf(path, sizeof path, "%s/submission_metadata.json", root);
	char *buf = NULL;
	size_t len = 0;
	if (file_read_all(path, META_MAX, &buf, &len, err, sizeof err) != MP_OK) {
		problem(p, "submission_metadata.json: missing or unreadable, so the grader cannot tell who submitted");
		return false;
	}
	json_error_t je;
	json_t *o = json_loadb(buf, len, 0, &je);
	free(buf);
	if (!o) {
		problem(p, "submission_metadata.json:%d: not JSON (%s)", je.line, je.text);
		return false;
	}
	json_t *users = json_object_get(o, "users");
	bool ok = false;
	if (!json_is_array(users) || json_array_size(users) == 0) {
		problem(p, "submission_metadata.json: no users[] to say who submitted");
	} else if (json_array_size(users) > 1) {
		problem(p, "a group submission (%zu users): every student's numbers are their own, so each submits alone",
		        json_array_size(users));
	} else {
		json_t *u = json_array_get(users, 0), *sid = json_object_get(u, "sid"), *email = json_object_get(u, "email");
		json_t *use = json_is_string(sid) && json_string_length(sid) ? sid : email;
		char why[300];
		if (!json_is_string(use) || json_string_length(use) == 0)
			problem(p, "submission_metadata.json: users[0] has neither a sid nor an email");
		else if (class_id_check(json_string_value(use), why, sizeof why) != MP_OK)
			problem(p, "submission_metadata.json: users[0].%s: %s", use == sid ? "sid" : "email", why);
		else
			ok = snprintf(id, n, "%s", json_string_value(use)) < (int)n;
	}
	json_decref(o);
	return ok;
}

/* Whether id is in the lab's roster (reported when not, or when the
 * roster cannot be read). */
static bool in_roster(const char *root, const char *roster_name, const char *id, problems *p)
{
	char path[4400];
	snprintf(path, sizeof path, "%s/source/%s", root, roster_name);
	class_roster r = { 0 };
	ex_diags d = { 0 };
	mp_status st = class_roster_load(&r, path, &d);
	bool found = st != MP_EIO && st != MP_ENOMEM && class_roster_find(&r, id) >= 0;
	if (st == MP_EIO || st == MP_ENOMEM)
		problem(p, "the autograder's roster cannot be read: tell your instructor");
	else if (!found)
		problem(p, "student id '%s' is not in the course's roster: tell your instructor", id);
	class_roster_free(&r);
	ex_diags_free(&d);
	return found;
}

static bool csv_name(const char *name)
{
	size_t n = strlen(name);
	return n > 4 && name[0] != '.' && !strcasecmp(name + n - 4, ".csv");
}

/* The one CSV file of ROOT/submission (path into buf); false (reported)
 * when there is none, or more than one. */
static bool find_csv(const char *root, char *buf, size_t n, problems *p)
{
	char dir[4400];
	snprintf(dir, sizeof dir, "%s/submission", root);
	DIR *d = opendir(dir);
	if (!d) {
		problem(p, "the submission folder cannot be read (%s)", strerror(errno));
		return false;
	}
	size_t found = 0;
	char first[256] = "";
	for (struct dirent *e; (e = readdir(d));) {
		char path[4700];
		struct stat sb;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (!csv_name(e->d_name) || lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
			continue;
		if (found++ == 0) {
			snprintf(first, sizeof first, "%s", e->d_name);
			snprintf(buf, n, "%s", path);
		} else {
			problem(p, "more than one CSV file in the submission ('%s' and '%s'): upload only your answers", first,
			        e->d_name);
		}
	}
	closedir(d);
	if (found == 0)
		problem(p, "no CSV file in the submission: upload your answers as one .csv file "
		           "(student_id,exercise,field,answer)");
	return found == 1;
}

/* Whether the file at path is UTF-8 text without NUL bytes (reported with
 * the line of the first bad byte when not). */
static bool utf8_file(const char *path, const char *shown, problems *p)
{
	char *buf = NULL, err[4600];
	size_t len = 0;
	mp_status st = file_read_all(path, CLASS_FILE_MAX, &buf, &len, err, sizeof err);
	if (st != MP_OK) {
		problem(p, "%s: %s", shown, st == MP_EINVAL ? "larger than the grader reads" : "cannot be read");
		return false;
	}
	long line = 1;
	bool ok = true;
	for (size_t i = 0; ok && i < len;) {
		uint32_t cp;
		size_t k = utf8_decode(buf + i, len - i, &cp, &ok);
		ok = ok && cp != 0;
		line += cp == '\n';
		i += k;
	}
	if (!ok)
		problem(p, "%s:%ld: not UTF-8 text: save the file as CSV in UTF-8", shown, line);
	free(buf);
	return ok;
}

/* ---- the result -------------------------------------------------------------------- */

static json_t *test_json(const char *name, double score, const char *output)
{
	json_t *t = json_object();
	if (!t || json_object_set_new(t, "name", text_json(name)) || json_object_set_new(t, "score", json_real(score)) ||
	    json_object_set_new(t, "max_score", json_real(1.0)) ||
	    json_object_set_new(t, "status", json_string(score > 0 ? "passed" : "failed")) ||
	    json_object_set_new(t, "output", text_json(output)) ||
	    json_object_set_new(t, "visibility", json_string("visible"))) {
		json_decref(t);
		return NULL;
	}
	return t;
}

static json_t *results_json(double score, const char *output, json_t *tests)
{
	json_t *r = json_object();
	if (!r || !tests || json_object_set_new(r, "score", json_real(score)) ||
	    json_object_set_new(r, "output", text_json(output)) ||
	    json_object_set_new(r, "visibility", json_string("visible")) ||
	    json_object_set_new(r, "stdout_visibility", json_string("hidden")) || json_object_set(r, "tests", tests)) {
		json_decref(r);
		r = NULL;
	}
	json_decref(tests);
	return r;
}

json_t *ag_results_broken(const char *why)
{
	char msg[1400];
	snprintf(msg, sizeof msg, "Not graded: the autograder cannot run (%s). Tell your instructor.", why);
	return results_json(0, msg, json_array());
}

/* Every test failed with score 0: the submission could not be graded. */
static json_t *ungraded(const ex_exercise *const *ex, size_t nex, const problems *p)
{
	json_t *tests = json_array();
	for (size_t e = 0; tests && e < nex; e++)
		for (size_t f = 0; f < ex[e]->nfields; f++) {
			char name[300];
			snprintf(name, sizeof name, "%s %s", ex[e]->id, ex[e]->fields[f].name);
			if (!ex[e]->fields[f].optional && json_array_append_new(tests, test_json(name, 0, "not graded: see the "
			                                                                      "message above"))) {
				json_decref(tests);
				return NULL;
			}
		}
	strbuf msg = { 0 };
	strbuf_printf(&msg, "Not graded (score 0): fix the problem%s below and submit again.\n%s",
	              p->count == 1 ? "" : "s", p->text.buf ? p->text.buf : "");
	json_t *r = msg.oom ? NULL : results_json(0, msg.buf, tests);
	if (msg.oom)
		json_decref(tests);
	free(msg.buf);
	return r;
}

/* The graded result: one test per field that counts, 1 point when right;
 * the wrong ones say what check says (the mistake, never the answer). */
static json_t *graded(const class_grading *g, const char *id)
{
	json_t *tests = json_array();
	size_t right = 0, total = 0;
	for (size_t e = 0; tests && e < g->nex; e++)
		for (size_t f = 0; f < g->ex[e]->nfields; f++) {
			if (!class_counts(g, 0, e, f))
				continue;
			size_t k = class_slot(g, 0, e, f);
			bool ok = g->verdict[k] == EX_CORRECT;
			char name[300];
			snprintf(name, sizeof name, "%s %s", g->ex[e]->id, g->ex[e]->fields[f].name);
			if (json_array_append_new(tests, test_json(name, ok, ok ? "right" : g->feedback[k]))) {
				json_decref(tests);
				return NULL;
			}
			right += ok;
			total++;
		}
	char msg[300];
	snprintf(msg, sizeof msg, "Graded as student %s: %zu of %zu answers right.", id, right, total);
	return results_json((double)right, msg, tests);
}

/* A class_grading message without the folder part of its path. */
static const char *shown_msg(const char *msg, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(msg, dir, n) && msg[n] == '/' ? msg + n + 1 : msg;
}

/* Reads and grades the CSV at path for student id; false (problems
 * reported) when it has a bad row. MP_ENOMEM in *st. */
static bool grade_csv(class_grading *g, const char *root, const char *path, problems *p, mp_status *st)
{
	char dir[4400], err[600];
	snprintf(dir, sizeof dir, "%s/submission", root);
	ex_diags d = { 0 };
	*st = class_grading_add(g, path, &d);
	for (size_t i = 0; i < d.count; i++)
		problem(p, "%s", shown_msg(d.msgs[i], dir));
	bool ok = d.count == 0 && *st == MP_OK;
	if (!ok && d.count == 0 && *st != MP_ENOMEM)
		problem(p, "%s: cannot be read as CSV", shown_msg(path, dir));
	ex_diags_free(&d);
	if (*st == MP_ENOMEM)
		return false;
	*st = MP_OK;
	if (!ok)
		return false;
	*st = class_grade(g, err, sizeof err);
	if (*st == MP_ENOMEM)
		return false;
	if (*st != MP_OK)
		problem(p, "%s: tell your instructor", err);
	ok = *st == MP_OK;
	*st = MP_OK;
	return ok;
}

mp_status ag_grade(const char *root, const ag_config *c, const ex_set *set, json_t **results)
{
	*results = NULL;
	const ex_exercise *ex[AG_MAX_EXERCISES];
	size_t nex = 0;
	problems p = { 0 };
	for (size_t i = 0; i < c->nids; i++) {
		const ex_exercise *x = ex_find(set, c->ids[i]);
		if (x)
			ex[nex++] = x;
		else
			problem(&p, "the lab's exercise %s is not installed: tell your instructor", c->ids[i]);
	}
	char no_name[1] = "";
	class_student stu = { .name = no_name };
	char path[4800];
	bool have_id = metadata_id(root, stu.id, sizeof stu.id, &p);
	if (have_id && c->roster)
		in_roster(root, c->roster, stu.id, &p);
	if (find_csv(root, path, sizeof path, &p))
		utf8_file(path, strrchr(path, '/') + 1, &p);
	mp_status st = MP_OK;
	class_roster one = { .students = &stu, .count = 1 };
	class_grading g = { 0 };
	if (p.count == 0) {
		st = class_grading_init(&g, ex, nex, &one, c->seed);
		if (st == MP_OK && grade_csv(&g, root, path, &p, &st))
			*results = graded(&g, stu.id);
		class_grading_free(&g);
	}
	if (st == MP_OK && !*results && !p.text.oom)
		*results = ungraded(ex, nex, &p);
	free(p.text.buf);
	return *results ? MP_OK : MP_ENOMEM;
}

mp_status ag_results_write(const char *root, json_t *results, char *err, size_t errlen)
{
	char dir[4400], path[4500];
	snprintf(dir, sizeof dir, "%s/results", root);
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return mp_fail(MP_EIO, err, errlen, "cannot create %s: %s", dir, strerror(errno));
	snprintf(path, sizeof path, "%s/results.json", dir);
	file_atomic a;
	mp_status st = file_atomic_open_flags(&a, path, FILE_IN_FOLDER, err, errlen);
	if (st != MP_OK)
		return st;
	if (json_dumpf(results, a.fp, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0 || fputc('\n', a.fp) == EOF) {
		file_atomic_abort(&a);
		return mp_fail(MP_EIO, err, errlen, "%s: write failed", path);
	}
	return file_atomic_commit(&a, err, errlen);
}
