/* Mutation of checked claims: a claim that holds whatever its measured
 * values read checks nothing. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "teach/claim.h"

enum { MAX_LEAVES = 32 };

/* Collects the distinct output-reading leaves of e into leaves[*n]. */
static void collect_leaves(const claim_expr *e, const claim_expr **leaves, size_t *n)
{
	if (!e)
		return;
	if (e->kind == CX_TABLE || e->kind == CX_TEXT) {
		for (size_t i = 0; i < *n; i++)
			if (claim_same_leaf(leaves[i], e))
				return;
		if (*n < MAX_LEAVES)
			leaves[(*n)++] = e;
		return;
	}
	collect_leaves(e->a, leaves, n);
	collect_leaves(e->b, leaves, n);
}

static void leaf_name(const claim_expr *e, char *buf, size_t size)
{
	if (e->kind == CX_TABLE)
		snprintf(buf, size, "%s[%s]", e->col, e->row);
	else
		snprintf(buf, size, "text(\"%.60s\")", e->tmpl);
}

/* 1: c holds with leaf reading x; 0: it fails; -1: no verdict (the
 * evaluation failed or gave no finite number). */
static int holds_with(const claim *c, const char *output, const claim_expr *leaf, double x)
{
	claim_verdict v;
	if (claim_check_with(c, output, leaf, x, &v) != MP_OK || !isfinite(v.measured))
		return -1;
	return v.ok ? 1 : 0;
}

/* The candidate distances from the measured value v0, ascending: 1, 2
 * and 5 times every power of ten from 1e-9 to 1e9, the same times |v0|
 * up to 500 |v0|, and |v0| and 2 |v0| (0 and -v0). Returns how many. */
static size_t candidate_steps(double v0, double *d, size_t cap)
{
	static const double mant[] = { 1, 2, 5 };
	size_t n = 0;
	for (int k = -9; k <= 9; k++)
		for (size_t m = 0; m < 3 && n < cap; m++)
			d[n++] = mant[m] * pow(10, k);
	for (int k = -9; v0 != 0 && k <= 2; k++)
		for (size_t m = 0; m < 3 && n < cap; m++)
			d[n++] = mant[m] * pow(10, k) * fabs(v0);
	if (v0 != 0 && n < cap)
		d[n++] = fabs(v0);   /* 0 and 2 v0 */
	if (v0 != 0 && n < cap)
		d[n++] = 2 * fabs(v0);   /* -v0 and 3 v0 */
	for (size_t i = 1; i < n; i++)   /* insertion sort: a few dozen steps */
		for (size_t j = i; j > 0 && d[j - 1] > d[j]; j--) {
			double t = d[j];
			d[j] = d[j - 1];
			d[j - 1] = t;
		}
	return n;
}

/* Whether some replacement of leaf (measured v0) fails c; *flip is then a
 * value just outside what c tolerates, found by bisection between v0 and
 * the nearest failing candidate. */
static bool leaf_flips(const claim *c, const char *output, const claim_expr *leaf, double v0, double *flip)
{
	double d[128];
	size_t n = candidate_steps(v0, d, sizeof d / sizeof d[0]);
	for (size_t i = 0; i < n; i++)
		for (int sign = 1; sign >= -1; sign -= 2) {
			double bad = v0 + sign * d[i];
			if (holds_with(c, output, leaf, bad) != 0)
				continue;
			double good = v0;
			for (int it = 0; it < 200; it++) {
				double mid = good + (bad - good) / 2;
				if (mid == good || mid == bad)
					break;
				int h = holds_with(c, output, leaf, mid);
				if (h < 0)
					break;
				if (h)
					good = mid;
				else
					bad = mid;
			}
			*flip = bad;
			return holds_with(c, output, leaf, bad) == 0;
		}
	return false;
}

mp_status claim_mutate(const claim *c, const char *output, claim_mutation *m)
{
	memset(m, 0, sizeof *m);
	if (c->cite)
		return MP_OK;
	const claim_expr *leaves[MAX_LEAVES];
	collect_leaves(c->lhs, leaves, &m->nleaves);
	collect_leaves(c->rhs, leaves, &m->nleaves);
	if (!m->nleaves)
		return MP_OK;
	claim_verdict v;
	if (claim_check_with(c, output, NULL, 0, &v) != MP_OK || !v.ok) {
		snprintf(m->detail, sizeof m->detail, "not mutated: %.200s", v.ok ? v.detail : "it does not hold as measured");
		return MP_EINVAL;
	}
	for (size_t i = 0; i < m->nleaves; i++) {
		double v0, flip;
		char err[200], name[80];
		if (claim_eval(leaves[i], output, &v0, err, sizeof err) != MP_OK) {
			snprintf(m->detail, sizeof m->detail, "not mutated: %s", err);
			return MP_EINVAL;
		}
		if (!leaf_flips(c, output, leaves[i], v0, &flip))
			continue;
		if (m->nflip++ == 0) {
			leaf_name(leaves[i], name, sizeof name);
			snprintf(m->detail, sizeof m->detail, "fails when %s reads %.9g instead of %.6g", name, flip, v0);
		}
	}
	m->vacuous = m->nflip == 0;
	if (m->vacuous)
		snprintf(m->detail, sizeof m->detail,
		         "holds whatever it reads: no replacement of its %zu measured value%s (1e-9 to 5e9 away, "
		         "either side) makes it fail",
		         m->nleaves, m->nleaves == 1 ? "" : "s");
	else if (m->nflip < m->nleaves) {
		size_t k = strlen(m->detail);
		snprintf(m->detail + k, sizeof m->detail - k, " (%zu of its %zu values can)", m->nflip, m->nleaves);
	}
	return MP_OK;
}
