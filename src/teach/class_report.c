/* The class report: the numbers behind mixprec grade's tables. */
#include "teach/class_report.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

static double ratio(size_t num, size_t den)
{
	return den ? (double)num / (double)den : 0.0;
}

/* ---- per student ------------------------------------------------------------ */

/* Student s on exercise e into row; false on ENOMEM. */
static bool sheet_row(class_sheet_row *row, const class_grading *g, size_t s, size_t e)
{
	strbuf fb = { 0 };
	row->correct = row->fields = 0;
	for (size_t f = 0; f < g->ex[e]->nfields; f++) {
		size_t k = class_slot(g, s, e, f);
		if (!class_counts(g, s, e, f))
			continue;
		row->fields++;
		if (g->verdict[k] == EX_CORRECT)
			row->correct++;
		else if (g->feedback[k])
			strbuf_printf(&fb, "%s%s", fb.len ? " | " : "", g->feedback[k]);
	}
	row->score = ratio(row->correct, row->fields);
	row->feedback = fb.oom ? NULL : fb.buf ? fb.buf : strdup("");
	if (fb.oom)
		free(fb.buf);
	return row->feedback != NULL;
}

/* ---- per field -------------------------------------------------------------- */

/* The most common wrong answer of field f of exercise e, as typed (trimmed);
 * the first student's when several are as common. */
static const char *most_common_wrong(const class_grading *g, size_t e, size_t f, size_t *count)
{
	const char *best = NULL;
	*count = 0;
	for (size_t s = 0; s < g->roster->count; s++) {
		size_t k = class_slot(g, s, e, f);
		if (g->verdict[k] == EX_CORRECT || !g->answer[k])
			continue;
		size_t n = 0;
		for (size_t t = 0; t < g->roster->count; t++) {
			size_t j = class_slot(g, t, e, f);
			n += g->verdict[j] != EX_CORRECT && g->answer[j] && strcmp(g->answer[j], g->answer[k]) == 0;
		}
		if (n > *count) {
			*count = n;
			best = g->answer[k];
		}
	}
	return best;
}

/* The mistake most students made in field f of exercise e (grouped by its
 * tag, the same for every variant); *example gets one such student's
 * feedback, which shows the mistake with that student's numbers. */
static const char *most_common_mistake(const class_grading *g, size_t e, size_t f, size_t *count,
                                       const char **example)
{
	const char *best = NULL;
	*count = 0;
	*example = NULL;
	for (size_t s = 0; s < g->roster->count; s++) {
		size_t k = class_slot(g, s, e, f);
		const char *tag = g->mistake[k];
		if (tag == NULL)
			continue;
		size_t n = 0;
		for (size_t t = 0; t < g->roster->count; t++)
			n += g->mistake[class_slot(g, t, e, f)] == tag;
		if (n > *count) {
			*count = n;
			best = tag;
			*example = g->feedback[k];
		}
	}
	return best;
}

static void field_row(class_field_row *row, const class_grading *g, size_t e, size_t f)
{
	memset(row, 0, sizeof *row);
	row->exercise = e;
	row->field = f;
	for (size_t s = 0; s < g->roster->count; s++) {
		bool counts = class_counts(g, s, e, f);
		row->students += counts;
		row->correct += counts && g->verdict[class_slot(g, s, e, f)] == EX_CORRECT;
	}
	row->rate = ratio(row->correct, row->students);
	row->wrong = most_common_wrong(g, e, f, &row->wrong_count);
	const char *example;
	row->mistake = most_common_mistake(g, e, f, &row->mistake_count, &example);
	if (row->mistake)
		row->mistake_example = example ? example : row->mistake;
}

/* The students who answered every field of exercise e that counts right. */
static size_t solved(const class_grading *g, size_t e)
{
	size_t n = 0;
	for (size_t s = 0; s < g->roster->count; s++) {
		bool all = true;
		for (size_t f = 0; f < g->ex[e]->nfields; f++)
			all = all && (!class_counts(g, s, e, f) || g->verdict[class_slot(g, s, e, f)] == EX_CORRECT);
		n += all;
	}
	return n;
}

/* ---- misconceptions --------------------------------------------------------- */

static int by_count(const void *a, const void *b)
{
	const class_misconception_row *x = a, *y = b;
	if (x->students != y->students)
		return x->students > y->students ? -1 : 1;
	if (x->exercise != y->exercise)
		return x->exercise < y->exercise ? -1 : 1;
	if (x->field != y->field)
		return x->field < y->field ? -1 : 1;
	return strcmp(x->tag, y->tag);
}

/* Every tag of every field over the class, counted (grouped by the tag's
 * pointer, as most_common_mistake does); false on ENOMEM. */
static bool misconceptions(class_report *r, const class_grading *g)
{
	size_t ns = g->roster->count, cap = 0, n = 0;
	for (size_t e = 0; e < g->nex; e++)
		for (size_t f = 0; f < g->ex[e]->nfields; f++)
			for (size_t s = 0; s < ns; s++)
				cap += g->mistake[class_slot(g, s, e, f)] != NULL;
	class_misconception_row *m = calloc(cap ? cap : 1, sizeof *m);
	if (!m)
		return false;
	for (size_t e = 0; e < g->nex; e++)
		for (size_t f = 0; f < g->ex[e]->nfields; f++) {
			size_t start = n;
			for (size_t s = 0; s < ns; s++) {
				const char *tag = g->mistake[class_slot(g, s, e, f)];
				if (tag == NULL)
					continue;
				size_t j = start;
				while (j < n && m[j].tag != tag)
					j++;
				if (j == n)
					m[n++] = (class_misconception_row){ .tag = tag, .exercise = e, .field = f };
				m[j].students++;
			}
		}
	for (size_t j = 0; j < n; j++)
		m[j].share = ratio(m[j].students, ns);
	qsort(m, n, sizeof *m, by_count);
	r->misconceptions = m;
	r->nmisconceptions = n;
	return true;
}

/* ---- the report ------------------------------------------------------------- */

mp_status class_report_build(class_report *r, const class_grading *g)
{
	memset(r, 0, sizeof *r);
	size_t ns = g->roster->count, nex = g->nex, nf = 0;
	for (size_t e = 0; e < nex; e++)
		nf += g->ex[e]->nfields;
	r->nstudents = ns;
	r->nex = nex;
	r->sheet = calloc(ns * nex > 0 ? ns * nex : 1, sizeof *r->sheet);
	r->total = calloc(ns ? ns : 1, sizeof *r->total);
	r->exercise = calloc(nex ? nex : 1, sizeof *r->exercise);
	r->fields = calloc(nf ? nf : 1, sizeof *r->fields);
	if (!r->sheet || !r->total || !r->exercise || !r->fields)
		goto oom;
	for (size_t s = 0; s < ns; s++) {
		class_sheet_row *t = &r->total[s];
		for (size_t e = 0; e < nex; e++) {
			class_sheet_row *row = &r->sheet[s * nex + e];
			if (!sheet_row(row, g, s, e))
				goto oom;
			t->correct += row->correct;
			t->fields += row->fields;
		}
		t->score = ratio(t->correct, t->fields);
		if (!(t->feedback = strdup("")))
			goto oom;
		r->all_right += t->correct == t->fields;
	}
	for (size_t e = 0; e < nex; e++) {
		class_exercise_row *x = &r->exercise[e];
		x->students = ns;
		x->solved = solved(g, e);
		x->rate = ratio(x->solved, ns);
		x->first = r->nfields;
		x->count = g->ex[e]->nfields;
		for (size_t f = 0; f < x->count; f++)
			field_row(&r->fields[r->nfields++], g, e, f);
	}
	if (!misconceptions(r, g))
		goto oom;
	return MP_OK;
oom:
	class_report_free(r);
	return MP_ENOMEM;
}

void class_report_free(class_report *r)
{
	if (r->sheet)
		for (size_t i = 0; i < r->nstudents * r->nex; i++)
			free(r->sheet[i].feedback);
	if (r->total)
		for (size_t s = 0; s < r->nstudents; s++)
			free(r->total[s].feedback);
	free(r->sheet);
	free(r->total);
	free(r->exercise);
	free(r->fields);
	free(r->misconceptions);
	memset(r, 0, sizeof *r);
}
