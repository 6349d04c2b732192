/* Exercise files, variants, prompts and answer checking. The kinds (the
 * solvers) live in exercise_kinds.c. */
#include "teach/exercise.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmt/decode.h"
#include "fmt/parse.h"
#include "fmt/round.h"
#include "util/file.h"
#include "util/numtext.h"
#include "util/rng.h"
#include "util/text.h"

#define EX_FILE_MAX (1u << 20)
#define EX_LINE_MAX 4096
#define EX_SET_MAX 2000
#define EX_TEXT_MAX 16384   /* a prompt or hint, continuation lines included */

const char *ex_dir(void)
{
	static char path[4096];
	return file_data_path(path, sizeof path, "MIXPREC_EXERCISEDIR", NULL, "exercises", "exercises");
}

/* ---- diagnostics ---------------------------------------------------------- */

static mp_status diag(ex_diags *d, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static mp_status diag(ex_diags *d, const char *file, int line, const char *fmt, ...)
{
	char msg[800];
	/* a long path keeps its tail (the file name) and leaves room for the problem */
	size_t fl = strlen(file);
	const char *dots = fl > 300 ? "..." : "";
	if (fl > 300)
		file += fl - 297;
	int n = line > 0 ? snprintf(msg, sizeof msg, "%s%s:%d: ", dots, file, line)
	                 : snprintf(msg, sizeof msg, "%s%s: ", dots, file);
	if (n < 0 || (size_t)n >= sizeof msg)
		n = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
	va_end(ap);
	if (!d)
		return MP_OK;
	char **grown = realloc(d->msgs, (d->count + 1) * sizeof *grown);
	if (!grown)
		return MP_ENOMEM;
	d->msgs = grown;
	if (!(d->msgs[d->count] = strdup(msg)))
		return MP_ENOMEM;
	d->count++;
	return MP_OK;
}

void ex_diags_free(ex_diags *d)
{
	for (size_t i = 0; i < d->count; i++)
		free(d->msgs[i]);
	free(d->msgs);
	d->msgs = NULL;
	d->count = 0;
}

/* ---- the exercise record ---------------------------------------------------- */

static void exercise_free(ex_exercise *ex)
{
	free(ex->title);
	free(ex->prompt);
	free(ex->lesson);
	for (size_t i = 0; i < ex->nparams; i++)
		free(ex->params[i].values);
	for (size_t i = 0; i < ex->nfields; i++)
		free(ex->fields[i].label);
	for (size_t i = 0; i < ex->nhints; i++)
		free(ex->hints[i]);
	memset(ex, 0, sizeof *ex);
}

void ex_set_free(ex_set *set)
{
	for (size_t i = 0; i < set->count; i++)
		exercise_free(&set->items[i]);
	free(set->items);
	set->items = NULL;
	set->count = 0;
}

const ex_exercise *ex_find(const ex_set *set, const char *id)
{
	for (size_t i = 0; i < set->count; i++)
		if (strcmp(set->items[i].id, id) == 0)
			return &set->items[i];
	return NULL;
}

int ex_field_index(const ex_exercise *ex, const char *name)
{
	for (size_t i = 0; i < ex->nfields; i++)
		if (strcmp(ex->fields[i].name, name) == 0)
			return (int)i;
	return -1;
}

static const ex_param *param_find(const ex_exercise *ex, const char *name)
{
	for (size_t i = 0; i < ex->nparams; i++)
		if (strcmp(ex->params[i].name, name) == 0)
			return &ex->params[i];
	return NULL;
}

/* ---- small text helpers -------------------------------------------------- */

/* Names: letters, digits, '_', '.', '-'; starting with a letter or digit. */
static bool valid_name(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n == 0 || n >= max || !isalnum((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '.' && s[i] != '-')
			return false;
	return true;
}

/* Appends "\n" + more to *dst (or sets it), bounded by EX_TEXT_MAX. */
static int append_text(char **dst, const char *more)
{
	size_t old = *dst ? strlen(*dst) : 0;
	size_t add = strlen(more);
	if (old + add + 2 > EX_TEXT_MAX)
		return 1;
	char *p = realloc(*dst, old + add + 2);
	if (!p)
		return -1;
	if (old)
		p[old++] = '\n';
	memcpy(p + old, more, add + 1);
	*dst = p;
	return 0;
}

/* Splits s at blanks into at most max words (s is modified). */
static size_t split_words(char *s, char **words, size_t max)
{
	size_t n = 0;
	char *save = NULL;
	for (char *w = strtok_r(s, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (n == max)
			return max + 1;
		words[n++] = w;
	}
	return n;
}

static bool parse_double(const char *text, double *out)
{
	fmt_num x;
	fmt_num_init(&x);
	bool ok = fmt_parse_number(&x, text, NULL, 0) == MP_OK && x.kind == NUM_FINITE;
	if (ok)
		*out = fmt_num_to_double(&x);
	fmt_num_clear(&x);
	return ok;
}

/* ---- parsing one line of a definition ------------------------------------ */

typedef struct {
	const char *file;
	int line;
	ex_diags *diags;
	bool failed;     /* the current exercise has an error */
	mp_status st;    /* MP_ENOMEM once allocation failed */
} load_ctx;

static void bad(load_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void bad(load_ctx *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	c->failed = true;
	if (diag(c->diags, c->file, c->line, "%s", msg) != MP_OK)
		c->st = MP_ENOMEM;
}

/* "number [rel X | abs X | sig N | exact] [unit U]", "bits FORMAT",
 * "choice a|b|c". */
static void parse_field_spec(load_ctx *c, ex_field *f, char *spec)
{
	char *w[8];
	size_t n = split_words(spec, w, 8);
	if (n == 0 || n > 8) {
		bad(c, "field %s: expected a type (number, bits FORMAT, choice a|b)", f->name);
		return;
	}
	if (strcmp(w[0], "number") == 0) {
		f->type = EX_NUMBER;
		f->tol = EX_TOL_REL;
		f->tol_value = 1e-3;
		for (size_t i = 1; i < n; i++) {
			if (strcmp(w[i], "exact") == 0) {
				f->tol = EX_TOL_EXACT;
				continue;
			}
			if (i + 1 >= n) {
				bad(c, "field %s: '%s' needs a value", f->name, w[i]);
				return;
			}
			const char *key = w[i], *val = w[++i];
			if (strcmp(key, "unit") == 0) {
				if (strcmp(val, "GB") && strcmp(val, "GiB") && strcmp(val, "B")) {
					bad(c, "field %s: unknown unit '%s' (known: GB, GiB, B)", f->name, val);
					return;
				}
				snprintf(f->unit, sizeof f->unit, "%s", val);
				continue;
			}
			double v;
			if (!parse_double(val, &v) || !(v >= 0)) {
				bad(c, "field %s: %s needs a non-negative number, not '%s'", f->name, key, val);
				return;
			}
			if (strcmp(key, "rel") == 0) {
				f->tol = EX_TOL_REL;
			} else if (strcmp(key, "abs") == 0) {
				f->tol = EX_TOL_ABS;
			} else if (strcmp(key, "sig") == 0) {
				if (v < 1 || v > 17 || v != floor(v)) {
					bad(c, "field %s: sig needs a whole number of digits from 1 to 17, not '%s'", f->name, val);
					return;
				}
				f->tol = EX_TOL_SIG;
			} else {
				bad(c, "field %s: unknown number option '%s' (known: rel, abs, sig, exact, unit)", f->name, key);
				return;
			}
			f->tol_value = v;
		}
	} else if (strcmp(w[0], "bits") == 0) {
		f->type = EX_BITS;
		const fmt_info *fi = n == 2 ? fmt_find(w[1]) : NULL;
		char *end = NULL;
		long width = n == 2 && !fi ? strtol(w[1], &end, 10) : 0;
		if (!fi && end && *end == '\0' && width >= 1 && width <= 32) {
			f->format = FMT_FP32;   /* unused: a bare field */
			f->width = (int)width;
			return;
		}
		if (!fi) {
			bad(c, "field %s: bits needs one format (%s) or a bit count from 1 to 32", f->name, fmt_known_names());
			return;
		}
		f->format = fi->id;
	} else if (strcmp(w[0], "choice") == 0) {
		f->type = EX_CHOICE;
		if (n != 2) {
			bad(c, "field %s: choice needs its words joined by '|', like yes|no", f->name);
			return;
		}
		char *save = NULL;
		for (char *t = strtok_r(w[1], "|", &save); t; t = strtok_r(NULL, "|", &save)) {
			if (f->nchoices == EX_MAX_CHOICES || !valid_name(t, EX_NAME_MAX)) {
				bad(c, "field %s: at most %d choices, each a word of letters, digits, '-', '_' or '.'",
				    f->name, EX_MAX_CHOICES);
				return;
			}
			char *dst = f->choices[f->nchoices++];
			for (size_t k = 0; t[k]; k++)
				dst[k] = (char)tolower((unsigned char)t[k]);
		}
		if (f->nchoices < 2) {
			bad(c, "field %s: choice needs at least two words", f->name);
			return;
		}
	} else {
		bad(c, "field %s: unknown type '%s' (known: number, bits, choice)", f->name, w[0]);
	}
}

/* "list V1 V2 ..." or "range LO HI [log] [digits N] [round FORMAT]". */
static void parse_vary(load_ctx *c, ex_param *p, char *spec)
{
	char *w[65];
	size_t n = split_words(spec, w, 65);
	if (n > 64) {
		bad(c, "vary %s: at most 63 values", p->name);
		return;
	}
	if (n >= 2 && strcmp(w[0], "list") == 0) {
		p->vary = EX_VARY_LIST;
		p->values = calloc(n - 1, sizeof *p->values);
		if (!p->values) {
			c->st = MP_ENOMEM;
			return;
		}
		for (size_t i = 1; i < n; i++) {
			if (strlen(w[i]) >= EX_VALUE_MAX) {
				bad(c, "vary %s: value '%.20s...' is too long", p->name, w[i]);
				return;
			}
			strcpy(p->values[p->nvalues++], w[i]);
		}
		return;
	}
	if (n >= 3 && strcmp(w[0], "range") == 0) {
		p->vary = EX_VARY_RANGE;
		if (!parse_double(w[1], &p->lo) || !parse_double(w[2], &p->hi) || !(p->lo < p->hi)) {
			bad(c, "vary %s: range needs two finite numbers LO < HI", p->name);
			return;
		}
		for (size_t i = 3; i < n; i++) {
			if (strcmp(w[i], "log") == 0) {
				if (!(p->lo > 0)) {
					bad(c, "vary %s: a log range needs LO > 0", p->name);
					return;
				}
				p->log = true;
			} else if (strcmp(w[i], "digits") == 0 && i + 1 < n) {
				char *end;
				long d = strtol(w[++i], &end, 10);
				if (*end || d < 1 || d > 17) {
					bad(c, "vary %s: digits needs a whole number from 1 to 17", p->name);
					return;
				}
				p->digits = (int)d;
			} else if (strcmp(w[i], "round") == 0 && i + 1 < n) {
				const fmt_info *fi = fmt_find(w[++i]);
				if (!fi) {
					bad(c, "vary %s: round needs a format (%s)", p->name, fmt_known_names());
					return;
				}
				p->to_format = true;
				p->format = fi->id;
			} else {
				bad(c, "vary %s: unknown range option '%s' (known: log, digits N, round FORMAT)", p->name, w[i]);
				return;
			}
		}
		return;
	}
	bad(c, "vary %s: expected 'list V1 V2 ...' or 'range LO HI [log] [digits N] [round FORMAT]'", p->name);
}

/* Splits "NAME: rest" / "NAME = rest" into the name and the rest. */
static bool split_named(char *s, char **name, char **rest)
{
	char *sep = strpbrk(s, ":=");
	if (!sep)
		return false;
	*sep = '\0';
	*name = text_trim(s);
	*rest = text_trim(sep + 1);
	return true;
}

/* Whether every {NAME} in text names a parameter; reports the first that does not. */
static void check_placeholders(load_ctx *c, const ex_exercise *ex, const char *text, const char *what)
{
	for (const char *p = strchr(text, '{'); p; p = strchr(p + 1, '{')) {
		const char *q = strchr(p, '}');
		if (!q)
			return;
		char name[EX_NAME_MAX];
		size_t n = (size_t)(q - p - 1);
		if (n == 0 || n >= sizeof name)
			continue;
		memcpy(name, p + 1, n);
		name[n] = '\0';
		if (valid_name(name, sizeof name) && !param_find(ex, name))
			bad(c, "%s uses {%s}, which is not a parameter of %s", what, name, ex->id);
	}
}

static void range_text(const ex_param *p, double x, char *out, size_t n);

/* Checks a finished exercise; reports what is missing. */
static void validate(load_ctx *c, ex_exercise *ex)
{
	c->line = ex->line;
	if (!ex->title)
		bad(c, "exercise %s has no title", ex->id);
	if (!ex->kind)
		bad(c, "exercise %s has no kind", ex->id);
	if (!ex->prompt)
		bad(c, "exercise %s has no prompt", ex->id);
	if (ex->nfields == 0)
		bad(c, "exercise %s has no field to answer", ex->id);
	if (c->failed)
		return;
	/* every parameter the kind needs */
	char need[256];
	snprintf(need, sizeof need, "%s", ex->kind->params);
	char *save = NULL;
	for (char *w = strtok_r(need, " ", &save); w; w = strtok_r(NULL, " ", &save))
		if (!param_find(ex, w))
			bad(c, "exercise %s: kind %s needs a parameter '%s' (param %s: DEFAULT)", ex->id, ex->kind->name, w,
			    w);
	check_placeholders(c, ex, ex->prompt, "the prompt");
	for (size_t i = 0; i < ex->nhints; i++)
		check_placeholders(c, ex, ex->hints[i], "a hint");
	if (c->failed)
		return;
	/* the defaults must solve, so a typo shows at load time, not in class */
	ex_variant v;
	ex_variant_make(ex, NULL, NULL, &v);
	ex_solution sol;
	char err[256];
	mp_status st = ex_solve(ex, &v, &sol, err, sizeof err);
	if (st == MP_ENOMEM)
		c->st = st;
	else if (st != MP_OK)
		bad(c, "exercise %s: %s", ex->id, err);
	else
		ex_solution_free(&sol);
	/* and so must every listed value, and both ends of a range (a student
	 * can draw either; what fails there would otherwise fail in class) */
	for (size_t i = 0; i < ex->nparams && !c->failed; i++) {
		const ex_param *p = &ex->params[i];
		char ends[2][EX_VALUE_MAX];
		size_t nends = 0;
		if (p->vary == EX_VARY_RANGE) {
			range_text(p, p->lo, ends[0], sizeof ends[0]);
			range_text(p, p->hi, ends[1], sizeof ends[1]);
			nends = 2;
		}
		for (size_t k = 0; k < p->nvalues + nends && !c->failed; k++) {
			const char *value = k < p->nvalues ? p->values[k] : ends[k - p->nvalues];
			ex_variant_make(ex, NULL, NULL, &v);
			snprintf(v.values[i], sizeof v.values[i], "%s", value);
			st = ex_solve(ex, &v, &sol, err, sizeof err);
			if (st == MP_ENOMEM)
				c->st = st;
			else if (st != MP_OK)
				bad(c, "exercise %s: value %s of %s%s: %s", ex->id, value, p->name,
				    k < p->nvalues ? "" : " (an end of its range)", err);
			else
				ex_solution_free(&sol);
		}
	}
}

/* Whether the kind can check the field name: listed, or a listed pattern
 * "*_bits" whose prefix names a format. */
static bool kind_has_field(const ex_kind *k, const char *name)
{
	char list[512];
	snprintf(list, sizeof list, "%s", k->fields);
	char *save = NULL;
	for (char *w = strtok_r(list, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (strcmp(w, name) == 0)
			return true;
		if (w[0] == '*') {
			size_t nl = strlen(name), sl = strlen(w + 1);
			if (nl > sl && strcmp(name + nl - sl, w + 1) == 0) {
				char fmtname[EX_NAME_MAX];
				snprintf(fmtname, sizeof fmtname, "%.*s", (int)(nl - sl), name);
				if (fmt_find(fmtname))
					return true;
			}
		}
	}
	return false;
}

static void parse_key(load_ctx *c, ex_exercise *ex, char *key, char *val, char ***last_text)
{
	*last_text = NULL;
	if (strcmp(key, "title") == 0 || strcmp(key, "prompt") == 0 || strcmp(key, "lesson") == 0) {
		char **dst = key[0] == 't' ? &ex->title : key[0] == 'p' ? &ex->prompt : &ex->lesson;
		if (*dst) {
			bad(c, "%s given twice", key);
			return;
		}
		if (append_text(dst, val) < 0)
			c->st = MP_ENOMEM;
		if (key[0] == 'p')
			*last_text = dst;
		return;
	}
	if (strcmp(key, "kind") == 0) {
		ex->kind = ex_kind_find(val);
		if (!ex->kind) {
			char known[512] = "";
			for (size_t i = 0; ex_kind_at(i); i++)
				snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
				         ex_kind_at(i)->name);
			bad(c, "unknown kind '%s' (known: %s)", val, known);
		}
		return;
	}
	if (strcmp(key, "hint") == 0) {
		if (ex->nhints == EX_MAX_HINTS) {
			bad(c, "at most %d hints", EX_MAX_HINTS);
			return;
		}
		if (append_text(&ex->hints[ex->nhints], val) < 0)
			c->st = MP_ENOMEM;
		*last_text = &ex->hints[ex->nhints++];
		return;
	}
	bad(c, "unknown key '%s' (known: title, kind, lesson, prompt, hint, param, vary, field)", key);
}

static void parse_line(load_ctx *c, ex_exercise *ex, char *s, char ***last_text)
{
	/* "param NAME: DEFAULT", "vary NAME: ...", "field NAME: TYPE ... -- LABEL" */
	if (strncmp(s, "param ", 6) == 0 || strncmp(s, "vary ", 5) == 0 || strncmp(s, "field ", 6) == 0) {
		*last_text = NULL;
		char *sp = strchr(s, ' ');
		*sp = '\0';
		const char *what = s;
		char *name, *rest;
		if (!split_named(sp + 1, &name, &rest)) {
			bad(c, "%s: expected '%s NAME: ...'", what, what);
			return;
		}
		if (!valid_name(name, EX_NAME_MAX)) {
			bad(c, "%s: '%s' is not a valid name (letters, digits, '_', '-', '.'; at most %d)", what, name,
			    EX_NAME_MAX - 1);
			return;
		}
		if (what[0] == 'p') {
			if (param_find(ex, name)) {
				bad(c, "param %s given twice", name);
				return;
			}
			if (ex->nparams == EX_MAX_PARAMS) {
				bad(c, "at most %d parameters", EX_MAX_PARAMS);
				return;
			}
			if (!*rest || strlen(rest) >= EX_VALUE_MAX || strpbrk(rest, " \t")) {
				bad(c, "param %s: the default must be one word of at most %d characters", name,
				    EX_VALUE_MAX - 1);
				return;
			}
			ex_param *p = &ex->params[ex->nparams++];
			snprintf(p->name, sizeof p->name, "%s", name);
			snprintf(p->def, sizeof p->def, "%s", rest);
		} else if (what[0] == 'v') {
			ex_param *p = (ex_param *)param_find(ex, name);
			if (!p) {
				bad(c, "vary %s: declare it first with 'param %s: DEFAULT'", name, name);
				return;
			}
			if (p->vary != EX_VARY_NONE) {
				bad(c, "vary %s given twice", name);
				return;
			}
			parse_vary(c, p, rest);
		} else {
			if (ex_field_index(ex, name) >= 0) {
				bad(c, "field %s given twice", name);
				return;
			}
			if (ex->nfields == EX_MAX_FIELDS) {
				bad(c, "at most %d fields", EX_MAX_FIELDS);
				return;
			}
			if (!ex->kind) {
				bad(c, "field %s: give the kind before the fields", name);
				return;
			}
			if (!kind_has_field(ex->kind, name)) {
				bad(c, "field %s: kind %s cannot check it (it checks: %s)", name, ex->kind->name,
				    ex->kind->fields);
				return;
			}
			ex_field *f = &ex->fields[ex->nfields++];
			snprintf(f->name, sizeof f->name, "%s", name);
			char *label = strstr(rest, " -- ");
			if (label) {
				*label = '\0';
				if (!(f->label = strdup(text_trim(label + 4))))
					c->st = MP_ENOMEM;
			}
			parse_field_spec(c, f, rest);
		}
		return;
	}
	char *key, *val;
	if (!split_named(s, &key, &val) || !*key) {
		bad(c, "expected 'key: value' (or a continuation line starting with a blank)");
		*last_text = NULL;
		return;
	}
	parse_key(c, ex, key, val, last_text);
}

static mp_status finish(load_ctx *c, ex_set *set, ex_exercise *ex)
{
	if (!ex->id[0])
		return c->st;
	if (!c->failed)
		validate(c, ex);
	if (!c->failed && c->st == MP_OK) {
		if (ex_find(set, ex->id)) {
			c->line = ex->line;
			bad(c, "exercise %s is defined twice (first in %s:%d)", ex->id, ex_find(set, ex->id)->file,
			    ex_find(set, ex->id)->line);
		} else if (set->count >= EX_SET_MAX) {
			c->line = ex->line;
			bad(c, "more than %d exercises; the rest are ignored", EX_SET_MAX);
		} else {
			ex_exercise *grown = realloc(set->items, (set->count + 1) * sizeof *grown);
			if (!grown) {
				exercise_free(ex);
				return MP_ENOMEM;
			}
			set->items = grown;
			set->items[set->count++] = *ex;
			memset(ex, 0, sizeof *ex);
			return MP_OK;
		}
	}
	exercise_free(ex);
	return c->st;
}

mp_status ex_load_text(ex_set *set, const char *name, const char *text, size_t len, ex_diags *diags)
{
	load_ctx c = { .file = name, .diags = diags };
	ex_exercise ex;
	memset(&ex, 0, sizeof ex);
	char **last_text = NULL;
	char line[EX_LINE_MAX + 1];
	size_t pos = 0;
	int lineno = 0;
	if (len > EX_FILE_MAX)
		return diag(diags, name, 0, "larger than %u bytes; not loaded", EX_FILE_MAX);
	/* editors on Windows start UTF-8 files with a byte-order mark */
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		pos = 3;
	while (pos < len && c.st == MP_OK) {
		size_t start = pos;
		while (pos < len && text[pos] != '\n')
			pos++;
		size_t n = pos - start;
		if (pos < len)
			pos++;
		c.line = ++lineno;
		if (n > EX_LINE_MAX) {
			if (ex.id[0])
				bad(&c, "line longer than %d bytes", EX_LINE_MAX);
			else
				diag(diags, name, lineno, "line longer than %d bytes", EX_LINE_MAX);
			last_text = NULL;
			continue;
		}
		memcpy(line, text + start, n);
		line[n] = '\0';
		if (memchr(line, '\0', n)) {
			c.failed = ex.id[0] != '\0';
			if (diag(diags, name, lineno, "contains a NUL byte") != MP_OK)
				c.st = MP_ENOMEM;
			last_text = NULL;
			continue;
		}
		bool cont = line[0] == ' ' || line[0] == '\t';
		char *s = text_trim(line);
		if (!*s || s[0] == '#') {
			if (!cont)
				last_text = NULL;
			continue;
		}
		if (cont) {
			if (!last_text) {
				if (ex.id[0] && !c.failed)
					bad(&c, "continuation line (it starts with a blank) but no prompt or hint to continue");
				continue;
			}
			int r = append_text(last_text, strcmp(s, ".") == 0 ? "" : s);
			if (r < 0)
				c.st = MP_ENOMEM;
			else if (r > 0)
				bad(&c, "text longer than %d bytes", EX_TEXT_MAX);
			continue;
		}
		if (s[0] == '[') {
			mp_status st = finish(&c, set, &ex);
			if (st != MP_OK)
				return st;
			c.failed = false;
			c.line = lineno;
			last_text = NULL;
			char *close = strchr(s, ']');
			if (!close || close[1] != '\0') {
				diag(diags, name, lineno, "expected '[ID]' to start an exercise");
				/* skip the block: parse it into a record that is thrown away */
				snprintf(ex.id, sizeof ex.id, "?");
				ex.line = lineno;
				c.failed = true;
				continue;
			}
			*close = '\0';
			char *id = text_trim(s + 1);
			if (!valid_name(id, EX_NAME_MAX)) {
				bad(&c, "'%s' is not a valid exercise id (letters, digits, '.', '-', '_'; at most %d)", id,
				    EX_NAME_MAX - 1);
				snprintf(ex.id, sizeof ex.id, "?");
			} else {
				snprintf(ex.id, sizeof ex.id, "%s", id);
			}
			ex.line = lineno;
			snprintf(ex.file, sizeof ex.file, "%s", name);
			continue;
		}
		if (!ex.id[0]) {
			if (diag(diags, name, lineno, "expected '[ID]' before the first definition") != MP_OK)
				return MP_ENOMEM;
			continue;
		}
		if (c.failed)
			continue;   /* one error per exercise is enough */
		parse_line(&c, &ex, s, &last_text);
	}
	if (c.st != MP_OK) {
		exercise_free(&ex);
		return c.st;
	}
	return finish(&c, set, &ex);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

mp_status ex_load_dir(ex_set *set, const char *dir, ex_diags *diags)
{
	DIR *d = opendir(dir);
	if (!d) {
		int e = errno;
		if (diag(diags, dir, 0, "cannot read the exercise folder: %s", strerror(e)) != MP_OK)
			return MP_ENOMEM;
		return MP_EIO;
	}
	char **names = NULL;
	size_t count = 0;
	mp_status st = MP_OK;
	for (struct dirent *e; (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		if (n < 4 || strcmp(e->d_name + n - 3, ".ex") != 0 || e->d_name[0] == '.')
			continue;
		char **grown = realloc(names, (count + 1) * sizeof *grown);
		if (!grown || !(grown[count] = strdup(e->d_name))) {
			free(grown ? grown : names);
			names = NULL;
			count = 0;
			st = MP_ENOMEM;
			break;
		}
		names = grown;
		count++;
	}
	closedir(d);
	qsort(names, count, sizeof *names, cmp_str);
	for (size_t i = 0; i < count; i++) {
		char path[4096], err[512];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		char *buf;
		size_t len;
		if (st == MP_OK) {
			mp_status r = file_read_all(path, EX_FILE_MAX, &buf, &len, err, sizeof err);
			if (r == MP_ENOMEM)
				st = r;
			else if (r != MP_OK)
				st = diag(diags, path, 0, "%s", err);
			else {
				st = ex_load_text(set, path, buf, len, diags);
				free(buf);
			}
		}
		free(names[i]);
	}
	free(names);
	return st;
}

/* ---- variants -------------------------------------------------------------- */

static uint64_t fnv1a(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return (h ^ 0xff) * 0x100000001b3ull;   /* a separator no text contains */
}

/* x in [lo, hi] as a range parameter's value text: rounded to its digits
 * and its format. */
static void range_text(const ex_param *p, double x, char *out, size_t n)
{
	char buf[64];
	if (p->digits) {
		snprintf(buf, sizeof buf, "%.*e", p->digits - 1, x);
		x = strtod(buf, NULL);
	}
	if (p->to_format) {
		fmt_round_ctl ctl = { .mode = FMT_RNE };
		const fmt_info *f = fmt_get(p->format);
		x = fmt_to_double(f, fmt_round_double(f, &ctl, x, NULL));
		char exact[1200];
		numtext_exact(exact, sizeof exact, x);
		if (strlen(exact) < n) {
			snprintf(out, n, "%s", exact);
			return;
		}
	}
	if (p->digits)
		snprintf(out, n, "%.*g", p->digits, x);
	else
		numtext_short(out, n, x);
}

static void range_value(const ex_param *p, uint64_t h, char *out, size_t n)
{
	double u = (double)(h >> 11) * 0x1p-53;
	double x = p->log ? p->lo * exp(u * log(p->hi / p->lo)) : p->lo + u * (p->hi - p->lo);
	if (x < p->lo)
		x = p->lo;
	if (x > p->hi)
		x = p->hi;
	range_text(p, x, out, n);
}

const char *ex_course_seed(const char *seed)
{
	if (seed)
		return seed;
	const char *env = getenv("MIXPREC_COURSE_SEED");
	return env && *env ? env : "0";
}

void ex_variant_make(const ex_exercise *ex, const char *course_seed, const char *student, ex_variant *v)
{
	memset(v, 0, sizeof *v);
	v->count = ex->nparams;
	for (size_t i = 0; i < ex->nparams; i++) {
		const ex_param *p = &ex->params[i];
		if (!student || !*student || p->vary == EX_VARY_NONE) {
			snprintf(v->values[i], sizeof v->values[i], "%s", p->def);
			continue;
		}
		uint64_t h = 0xcbf29ce484222325ull;
		h = fnv1a(h, ex_course_seed(course_seed));
		h = fnv1a(h, student);
		h = fnv1a(h, ex->id);
		h = rng_mix64(fnv1a(h, p->name));
		if (p->vary == EX_VARY_LIST)
			snprintf(v->values[i], sizeof v->values[i], "%s", p->values[h % p->nvalues]);
		else
			range_value(p, h, v->values[i], sizeof v->values[i]);
	}
}

const char *ex_variant_get(const ex_exercise *ex, const ex_variant *v, const char *name)
{
	for (size_t i = 0; i < ex->nparams && i < v->count; i++)
		if (strcmp(ex->params[i].name, name) == 0)
			return v->values[i];
	return NULL;
}

char *ex_prompt(const ex_exercise *ex, const ex_variant *v)
{
	size_t cap = strlen(ex->prompt) + 1 + EX_MAX_PARAMS * EX_VALUE_MAX * 8, n = 0;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	for (const char *p = ex->prompt; *p;) {
		if (*p == '{') {
			const char *q = strchr(p, '}');
			if (q && (size_t)(q - p - 1) < EX_NAME_MAX) {
				char name[EX_NAME_MAX];
				memcpy(name, p + 1, (size_t)(q - p - 1));
				name[q - p - 1] = '\0';
				const char *val = ex_variant_get(ex, v, name);
				if (val) {
					size_t vl = strlen(val);
					if (n + vl + 1 >= cap) {
						char *g = realloc(out, cap = 2 * cap + vl);
						if (!g) {
							free(out);
							return NULL;
						}
						out = g;
					}
					memcpy(out + n, val, vl);
					n += vl;
					p = q + 1;
					continue;
				}
			}
		}
		if (n + 2 >= cap) {
			char *g = realloc(out, cap *= 2);
			if (!g) {
				free(out);
				return NULL;
			}
			out = g;
		}
		out[n++] = *p++;
	}
	out[n] = '\0';
	return out;
}

/* ---- answers ------------------------------------------------------------------ */

mp_status ex_parse_bits(const char *text, int width, uint32_t *out, char *err, size_t errlen)
{
	char digits[160];
	size_t nd = 0;
	while (*text == ' ' || *text == '\t')
		text++;
	int base = 2;
	if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
		base = 16;
		text += 2;
	} else if (text[0] == '0' && (text[1] == 'b' || text[1] == 'B')) {
		text += 2;
	}
	for (; *text; text++) {
		char ch = *text;
		if (ch == ' ' || ch == '_' || ch == '\t' || ch == '\'') {
			continue;
		}
		bool ok = base == 16 ? isxdigit((unsigned char)ch) : (ch == '0' || ch == '1');
		if (!ok) {
			snprintf(err, errlen,
			         base == 16 ? "'%c' is not a hex digit" : "'%c' is not a binary digit (write hex as 0x...)",
			         ch);
			return MP_EPARSE;
		}
		if (nd == sizeof digits - 1) {
			snprintf(err, errlen, "too many digits");
			return MP_EPARSE;
		}
		digits[nd++] = ch;
	}
	if (nd == 0) {
		snprintf(err, errlen, "no digits: write 0x3dcd, 0b0011110111001101 or 0011 1101 1100 1101");
		return MP_EPARSE;
	}
	uint64_t v = 0;
	int bits_per = base == 16 ? 4 : 1;
	size_t lead = 0;
	while (lead + 1 < nd && digits[lead] == '0')
		lead++;
	if ((nd - lead) * (size_t)bits_per > 40) {
		snprintf(err, errlen, "more than %d bits", width);
		return MP_EPARSE;
	}
	for (size_t i = lead; i < nd; i++) {
		int d = isdigit((unsigned char)digits[i]) ? digits[i] - '0' : tolower((unsigned char)digits[i]) - 'a' + 10;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if (width < 64 && (v >> width) != 0) {
		snprintf(err, errlen, "the value needs more than %d bits", width);
		return MP_EPARSE;
	}
	if (base == 2 && nd != (size_t)width && nd > 1) {
		snprintf(err, errlen, "%zu binary digits; a %d-bit pattern has %d (or write hex: 0x...)", nd, width,
		         width);
		return MP_EPARSE;
	}
	*out = (uint32_t)v;
	return MP_OK;
}

static const struct {
	const char *name;
	const char *unit;
} units[] = {
	{ "GB", "GB" }, { "gb", "GB" }, { "GiB", "GiB" }, { "gib", "GiB" }, { "B", "B" },
	{ "bytes", "B" }, { "byte", "B" }, { "%", "%" },
};

/* Bytes in one unit of an answer or a field ("B", "GB", "GiB"). */
static double unit_bytes(const char *unit)
{
	return !strcmp(unit, "GB") ? 1e9 : !strcmp(unit, "GiB") ? 1073741824.0 : 1;
}

/* Rewrites the ways students write a number into the syntax of
 * fmt_parse_number: blanks dropped ("6.1 * 10^-5"), "**" as "^" (Python),
 * "x" or U+00D7 between mantissa and "10^" as "*", U+2212 as '-',
 * "2^(-14)" as "2^-14", a leading '~' or U+2248 dropped, and commas grouping
 * thousands ("65,536") dropped.
 * False, with a message, for a comma that does not group thousands. */
static bool normalise_number(const char *in, char *out, size_t n, char *err, size_t errlen)
{
	size_t k = 0;
	/* "~6.1e-5", "\u2248 6.1e-5": an approximate answer is what the tolerance is for */
	if (in[0] == '~')
		in++;
	else if (!strncmp(in, "\xE2\x89\x88", 3))
		in += 3;
	const char *start = in;
	for (const char *p = in; *p && k + 1 < n;) {
		bool blank_x = (p[0] == ' ' || p[0] == '\t') && (p[1] == 'x' || p[1] == 'X') && (p[2] == ' ' || p[2] == '\t');
		/* "6.1x10^-5", but not the 0x of a hex float */
		bool tight_x = (p[0] == 'x' || p[0] == 'X') && p > start && isdigit((unsigned char)p[-1]) &&
		               strncmp(p + 1, "10^", 3) == 0 &&
		               !(p[-1] == '0' && (p - 1 == start || p[-2] == '-' || p[-2] == '+'));
		if (blank_x || tight_x) {
			out[k++] = '*';
			p += blank_x ? 3 : 1;
		} else if (!strncmp(p, "\xC3\x97", 2) || !strncmp(p, "\xC2\xB7", 2)) {   /* multiplication sign, middle dot */
			out[k++] = '*';
			p += 2;
		} else if (!strncmp(p, "\xE2\x88\x92", 3)) {   /* minus sign */
			out[k++] = '-';
			p += 3;
		} else if (p[0] == '*' && p[1] == '*') {
			out[k++] = '^';
			p += 2;
		} else if (*p == ' ' || *p == '\t') {
			p++;
		} else {
			out[k++] = *p++;
		}
	}
	out[k] = '\0';
	char *pow = strstr(out, "^(");
	if (pow && k && out[k - 1] == ')' && !strchr(pow + 2, '(') && strchr(pow, ')') == out + k - 1) {
		memmove(pow + 1, pow + 2, (size_t)(out + k - 1 - (pow + 2)));
		out[k - 2] = '\0';
	}
	char *comma = strchr(out, ',');
	if (!comma)
		return true;
	/* thousands: 1 to 3 digits, then groups of ",ddd", then no digit or comma */
	char *d = out + (out[0] == '-' || out[0] == '+');
	size_t lead = strspn(d, "0123456789");
	bool grouped = lead >= 1 && lead <= 3 && d[lead] == ',';
	char *q = d + lead;
	while (grouped && *q == ',') {
		grouped = strspn(q + 1, "0123456789") == 3;
		q += 4;
	}
	if (!grouped || strchr(q, ',')) {
		snprintf(err, errlen, "',' is not a decimal point: write 6.1e-5 (a comma may only group thousands, as in 65,536)");
		return false;
	}
	for (char *r = d, *w = d;; r++)
		if (*r != ',' && !(*w++ = *r))
			break;
	return true;
}

mp_status ex_parse_number(const char *text, double *out, char *unit, size_t unitlen, char *err, size_t errlen)
{
	char buf[256];
	if (strlen(text) >= sizeof buf) {
		snprintf(err, errlen, "too long");
		return MP_EPARSE;
	}
	snprintf(buf, sizeof buf, "%s", text);
	char *s = text_trim(buf);
	if (unitlen)
		unit[0] = '\0';
	size_t n = strlen(s);
	/* a trailing unit word, when the text before it is a number */
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		size_t ul = strlen(units[i].name);
		if (n > ul && strcmp(s + n - ul, units[i].name) == 0 &&
		    (isdigit((unsigned char)s[n - ul - 1]) || s[n - ul - 1] == ' ' || s[n - ul - 1] == '.')) {
			/* "1e5B" would be ambiguous with hex floats only after 0x; refuse those */
			if (strncmp(s, "0x", 2) == 0 && ul == 1)
				continue;
			s[n - ul] = '\0';
			s = text_trim(s);
			if (unitlen)
				snprintf(unit, unitlen, "%s", units[i].unit);
			break;
		}
	}
	char norm[256];
	if (!normalise_number(s, norm, sizeof norm, err, errlen))
		return MP_EPARSE;
	fmt_num x;
	fmt_num_init(&x);
	char perr[200];
	mp_status st = fmt_parse_number(&x, norm, perr, sizeof perr);
	if (st != MP_OK) {
		snprintf(err, errlen, "not a number: %s", perr);
		fmt_num_clear(&x);
		return MP_EPARSE;
	}
	double d = fmt_num_to_double(&x);
	fmt_num_clear(&x);
	if (unitlen && strcmp(unit, "%") == 0) {
		d /= 100;
		unit[0] = '\0';
	}
	*out = d;
	return MP_OK;
}

static bool number_matches(const ex_field *f, double a, double e)
{
	if (isnan(e))
		return isnan(a);
	if (isinf(e))
		return a == e;
	double slack = 1e-12 * fabs(e);
	switch (f->tol) {
	case EX_TOL_EXACT:
		return a == e;
	case EX_TOL_ABS:
		return fabs(a - e) <= f->tol_value + slack;
	case EX_TOL_SIG: {
		if (e == 0)
			return a == 0;
		double q = pow(10, floor(log10(fabs(e))) - f->tol_value + 1);
		return fabs(a - e) <= q / 2 + slack;
	}
	case EX_TOL_REL:
	default:
		if (e == 0)
			return a == 0;
		return fabs(a - e) <= f->tol_value * fabs(e) + slack;
	}
}

static const char *tol_text(const ex_field *f, char *buf, size_t n)
{
	switch (f->tol) {
	case EX_TOL_EXACT:
		snprintf(buf, n, "exactly");
		break;
	case EX_TOL_ABS:
		snprintf(buf, n, "within %g", f->tol_value);
		break;
	case EX_TOL_SIG:
		snprintf(buf, n, "to %g significant digits", f->tol_value);
		break;
	default:
		snprintf(buf, n, "within a relative %g", f->tol_value);
	}
	return buf;
}

/* Lower-cases and canonicalises a choice: yes/no synonyms, format aliases. */
static void canon_choice(const char *in, char *out, size_t n)
{
	char buf[EX_NAME_MAX * 2];
	snprintf(buf, sizeof buf, "%s", in);
	char *s = text_trim(buf);
	for (char *p = s; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	/* "yes.", "No!", "'fp32'": sentence punctuation and quotes are not part of the word */
	size_t len = strlen(s);
	while (len && strchr(".!,;", s[len - 1]))
		s[--len] = '\0';
	if (len >= 2 && strchr("\"'`", s[0]) && s[len - 1] == s[0]) {
		s[len - 1] = '\0';
		s = text_trim(s + 1);
	}
	static const char *yes[] = { "y", "true", "1", "yes" }, *no[] = { "n", "false", "0", "no" };
	const char *word = s;
	for (size_t i = 0; i < 4; i++) {
		if (strcmp(word, yes[i]) == 0)
			word = "yes";
		else if (strcmp(word, no[i]) == 0)
			word = "no";
	}
	const fmt_info *fi = fmt_find(word);
	snprintf(out, n, "%s", fi ? fi->name : word);
}

static bool choice_in(const char *expect, const char *c)
{
	/* expect may hold several accepted words joined by '|'; each is compared
	 * in its canonical form, as the answer is ("1" is "yes") */
	for (const char *p = expect; *p;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		char word[EX_NAME_MAX * 2], canon[EX_NAME_MAX * 2];
		snprintf(word, sizeof word, "%.*s", (int)len, p);
		canon_choice(word, canon, sizeof canon);
		if (strcmp(canon, c) == 0)
			return true;
		if (!bar)
			break;
		p = bar + 1;
	}
	return false;
}

/* The canonical form of a field's declared choice word (format names resolve). */
static void field_choice_canon(const char *w, char *out, size_t n)
{
	canon_choice(w, out, n);
}

static const ex_mistake *find_mistake(const ex_solution *sol, size_t i, const ex_field *f, double num, uint32_t bits,
                                      const char *choice)
{
	for (size_t k = 0; k < sol->nmistakes; k++) {
		const ex_mistake *m = &sol->mistakes[k];
		if (m->field != i)
			continue;
		if (f->type == EX_NUMBER && number_matches(f, num, m->value.number))
			return m;
		if (f->type == EX_BITS && bits == m->value.bits)
			return m;
		if (f->type == EX_CHOICE && choice_in(m->value.choice, choice))
			return m;
	}
	return NULL;
}

/* Length of s before its first separator of a reason: ',', ';', ':' or " - ". */
static size_t sep_span(const char *s)
{
	size_t cut = strcspn(s, ",;:");
	const char *dash = strstr(s, " - ");
	return dash && (size_t)(dash - s) < cut ? (size_t)(dash - s) : cut;
}

/* Whether canonical word c is one of field f's choices. */
static bool is_choice(const ex_field *f, const char *c)
{
	for (size_t k = 0; k < f->nchoices; k++) {
		char w[EX_NAME_MAX * 2];
		field_choice_canon(f->choices[k], w, sizeof w);
		if (strcmp(w, c) == 0)
			return true;
	}
	return false;
}

ex_verdict ex_check(const ex_exercise *ex, const ex_solution *sol, size_t i, const char *answer, char *fb,
                    size_t fblen)
{
	return ex_check_tagged(ex, sol, i, answer, fb, fblen, NULL);
}

ex_verdict ex_check_tagged(const ex_exercise *ex, const ex_solution *sol, size_t i, const char *answer, char *fb,
                           size_t fblen, const char **tag)
{
	const char *unused;
	if (tag == NULL)
		tag = &unused;
	*tag = NULL;
	const ex_field *f = &ex->fields[i];
	const ex_value *e = &sol->expect[i];
	char err[200], tol[64];
	if (fblen)
		fb[0] = '\0';
	switch (f->type) {
	case EX_NUMBER: {
		double a;
		char unit[8];
		if (ex_parse_number(answer, &a, unit, sizeof unit, err, sizeof err) != MP_OK) {
			snprintf(fb, fblen, "%s: %s", f->name, err);
			return EX_MALFORMED;
		}
		double conv = a;
		const char *note = "";
		if (unit[0] && !f->unit[0]) {
			snprintf(fb, fblen, "%s: this answer is a plain number, not in %s", f->name, unit);
			return EX_MALFORMED;
		}
		if (unit[0] && strcmp(unit, f->unit) != 0) {
			/* B, GB and GiB all count bytes: convert, and say so */
			conv = a * unit_bytes(unit) / unit_bytes(f->unit);
			note = " (converted: the question asks for ";
		}
		if (number_matches(f, conv, e->number)) {
			if (*note)
				snprintf(fb, fblen, "%s: correct%s%s; %s is %.6g %s)", f->name, note, f->unit, answer, conv,
				         f->unit);
			else
				snprintf(fb, fblen, "%s: correct", f->name);
			return EX_CORRECT;
		}
		const ex_mistake *m = find_mistake(sol, i, f, conv, 0, NULL);
		if (m) {
			snprintf(fb, fblen, "%s: wrong. %s", f->name, m->message);
			*tag = m->tag;
			return EX_WRONG;
		}
		/* mistakes every number field can show */
		if (f->unit[0] && strcmp(f->unit, "GB") == 0 && number_matches(f, conv * 1.073741824, e->number))
			snprintf(fb, fblen,
			         "%s: wrong. That looks like GiB (2^30 bytes); the question asks for GB (10^9 bytes).",
			         f->name), *tag = "GiB for GB";
		else if (f->unit[0] && strcmp(f->unit, "GiB") == 0 && number_matches(f, conv / 1.073741824, e->number))
			snprintf(fb, fblen,
			         "%s: wrong. That looks like GB (10^9 bytes); the question asks for GiB (2^30 bytes).",
			         f->name), *tag = "GB for GiB";
		else if (e->number != 0 && number_matches(f, -conv, e->number))
			snprintf(fb, fblen, "%s: wrong. Check the sign.", f->name), *tag = "sign";
		else if (e->number != 0 && (number_matches(f, conv / 2, e->number) || number_matches(f, conv * 2, e->number)))
			snprintf(fb, fblen, "%s: wrong, off by a factor of two.", f->name), *tag = "factor of two";
		else
			snprintf(fb, fblen, "%s: wrong (it must match %s).", f->name, tol_text(f, tol, sizeof tol));
		return EX_WRONG;
	}
	case EX_BITS: {
		uint32_t b;
		const fmt_info *fi = fmt_get(f->format);
		if (ex_parse_bits(answer, f->width ? f->width : fi->width, &b, err, sizeof err) != MP_OK) {
			snprintf(fb, fblen, "%s: %s", f->name, err);
			return EX_MALFORMED;
		}
		if (b == e->bits) {
			snprintf(fb, fblen, "%s: correct", f->name);
			return EX_CORRECT;
		}
		const ex_mistake *m = find_mistake(sol, i, f, 0, b, NULL);
		if (m) {
			snprintf(fb, fblen, "%s: wrong. %s", f->name, m->message);
			*tag = m->tag;
			return EX_WRONG;
		}
		uint32_t diff = b ^ e->bits;
		if (f->width) {
			int first = 0;
			for (int k = f->width - 1; k >= 0; k--)
				if (diff >> k & 1) {
					first = f->width - k;
					break;
				}
			snprintf(fb, fblen, "%s: wrong; bit %d (counting from the left) is the first that differs.", f->name,
			         first);
			return EX_WRONG;
		}
		const char *where = (diff & fmt_sign_mask(fi)) ? "the sign bit"
		                    : (diff >> fi->frac_bits) ? "the exponent field"
		                                              : "the fraction field";
		snprintf(fb, fblen, "%s: wrong; %s differs (%s is 0x%0*x, which is %.9g).", f->name, where, answer,
		         fmt_hex_digits(fi), (unsigned)b, fmt_to_double(fi, b));
		return EX_WRONG;
	}
	case EX_CHOICE:
	default: {
		char c[EX_NAME_MAX * 2];
		/* "yes, it flushes": a word and its reason after a comma, semicolon,
		 * colon or " - "; the word is the answer when it is one of the
		 * choices (the reason is not checked, and the feedback says so).
		 * A reason that starts with a choice word ("no, yes", "no; yes it
		 * does") gives two answers: unreadable. */
		char head[EX_NAME_MAX * 2];
		size_t cut = sep_span(answer);
		if (answer[cut] && cut < sizeof head) {
			snprintf(head, sizeof head, "%.*s", (int)cut, answer);
			canon_choice(head, c, sizeof c);
			if (is_choice(f, c)) {
				const char *tail = answer + cut + strspn(answer + cut, ",;: -\t");
				size_t w = strcspn(tail, " \t");
				w = w < sep_span(tail) ? w : sep_span(tail);
				char t[EX_NAME_MAX * 2];
				if (w > 0 && w < sizeof t) {
					snprintf(t, sizeof t, "%.*s", (int)w, tail);
					canon_choice(t, t, sizeof t);
					if (is_choice(f, t)) {
						snprintf(fb, fblen, "%s: this reads as two answers ('%s' and '%.*s'); give one",
						         f->name, text_trim(head), (int)w, tail);
						return EX_MALFORMED;
					}
				}
				ex_verdict v = ex_check_tagged(ex, sol, i, head, fb, fblen, tag);
				size_t used = strlen(fb);
				if (*tail && used + 1 < fblen)
					snprintf(fb + used, fblen - used, " (read as '%s'; the reason after it is not checked)",
					         text_trim(head));
				return v;
			}
		}
		if (strlen(answer) >= sizeof c) {
			/* canon_choice would cut it, and the cut could read as a valid word */
			snprintf(fb, fblen, "%s: too long for a one-word answer", f->name);
			return EX_MALFORMED;
		}
		canon_choice(answer, c, sizeof c);
		if (!is_choice(f, c)) {
			char list[EX_MAX_CHOICES * EX_NAME_MAX] = "";
			for (size_t k = 0; k < f->nchoices; k++)
				snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "", f->choices[k]);
			snprintf(fb, fblen, "%s: '%s' is not one of: %s", f->name, answer, list);
			return EX_MALFORMED;
		}
		if (choice_in(e->choice, c)) {
			snprintf(fb, fblen, "%s: correct", f->name);
			return EX_CORRECT;
		}
		const ex_mistake *m = find_mistake(sol, i, f, 0, 0, c);
		if (m)
			snprintf(fb, fblen, "%s: wrong. %s", f->name, m->message), *tag = m->tag;
		else
			snprintf(fb, fblen, "%s: wrong.", f->name);
		return EX_WRONG;
	}
	}
}

void ex_solution_free(ex_solution *sol)
{
	free(sol->worked);
	sol->worked = NULL;
}
