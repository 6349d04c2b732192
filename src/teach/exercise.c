/* Exercises: where the files are, finding an exercise and a field, one
 * student's variant of the parameters, and the prompt with its values.
 * Loading is in exercise_load.c, answer checking in exercise_check.c, the
 * solvers in exercise_solve.c and exercise_kinds_*.c. */
#include "teach/exercise.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmt/decode.h"
#include "fmt/round.h"
#include "teach/exercise_solve.h"
#include "util/file.h"
#include "util/numtext.h"
#include "util/rng.h"

const char *ex_dir(void)
{
	static char path[4096];
	return file_data_path(path, sizeof path, "MIXPREC_EXERCISEDIR", NULL, "exercises", "exercises");
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

/* ---- variants -------------------------------------------------------------- */

static uint64_t fnv1a(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return (h ^ 0xff) * 0x100000001b3ull;   /* a separator no text contains */
}

/* x in [lo, hi] as a range parameter's value text: rounded to its digits
 * and its format. */
void exs_range_text(const ex_param *p, double x, char *out, size_t n)
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
	exs_range_text(p, x, out, n);
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

void ex_solution_free(ex_solution *sol)
{
	free(sol->worked);
	sol->worked = NULL;
}
