/* Evaluating claims on captured command output (the parser is claim.c). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teach/claim.h"

/* --- reading numbers out of output --- */

/* A printed number: strtod's syntax and an optional trailing %. */
static bool cell_number(const char *s, size_t n, double *v)
{
	char buf[64];
	if (n == 0 || n >= sizeof buf)
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (buf[n - 1] == '%')
		buf[--n] = '\0';
	char *end;
	*v = strtod(buf, &end);
	return n > 0 && *end == '\0' && !isspace((unsigned char)buf[0]);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Whether line [ls, le) holds key as a whole word at some position; *at is
 * its column. Words are separated by blanks. */
static bool find_word(const char *ls, const char *le, const char *key, size_t *at)
{
	size_t n = strlen(key);
	for (const char *p = ls; p + n <= le; p++) {
		if (strncmp(p, key, n))
			continue;
		if ((p == ls || is_blank(p[-1])) && (p + n == le || is_blank(p[n]))) {
			*at = (size_t)(p - ls);
			return true;
		}
	}
	return false;
}

/* COLUMN[ROW]: the first line whose first word is ROW, below a line where
 * COLUMN stands as a word; the value is the word of the row that overlaps
 * the header's columns most (tables here are right- or left-aligned under
 * their headers). */
static bool table_cell(const char *out, const char *row, const char *col, const char **cs, size_t *cn,
                       char *err, size_t errlen)
{
	bool header = false, row_seen = false;
	size_t hs = 0, he = 0, rn = strlen(row);
	for (const char *ls = out; *ls;) {
		const char *le = strchr(ls, '\n');
		if (!le)
			le = ls + strlen(ls);
		const char *w = ls;
		while (w < le && is_blank(*w))
			w++;
		bool is_row = (size_t)(le - w) >= rn && !strncmp(w, row, rn) && (w + rn == le || is_blank(w[rn]));
		row_seen |= is_row;
		size_t at;
		if (is_row && header) {
			size_t best = 0;
			for (const char *p = w + rn; p < le;) {
				while (p < le && is_blank(*p))
					p++;
				const char *q = p;
				while (q < le && !is_blank(*q))
					q++;
				size_t s = (size_t)(p - ls), e = (size_t)(q - ls);
				size_t lo = s > hs ? s : hs, hi = e < he ? e : he;
				if (q > p && hi > lo && hi - lo > best) {
					best = hi - lo;
					*cs = p;
					*cn = (size_t)(q - p);
				}
				p = q;
			}
			if (best)
				return true;
			snprintf(err, errlen, "row '%s' has no value under column '%s'", row, col);
			return false;
		}
		if (find_word(ls, le, col, &at)) {
			header = true;
			hs = at;
			he = at + strlen(col);
		}
		ls = *le ? le + 1 : le;
	}
	if (!header)
		snprintf(err, errlen, "no column '%s' in the output", col);
	else
		snprintf(err, errlen, "no row '%s'%s in the output", row, row_seen ? " below column '" : "");
	if (header && row_seen) {
		size_t l = strlen(err);
		snprintf(err + l, errlen > l ? errlen - l : 0, "%s'", col);
	}
	return false;
}

/* Matches template t at s: blanks in t match one or more blanks or newlines,
 * {} a number, {*} any one field (a run, possibly empty, of characters other
 * than blanks and commas: a CSV cell skipped). Returns the number's text via
 * *ns, *nn. */
static bool match_at(const char *s, const char *t, const char **ns, size_t *nn)
{
	while (*t) {
		if (isspace((unsigned char)*t)) {
			if (!isspace((unsigned char)*s))
				return false;
			while (isspace((unsigned char)*t))
				t++;
			while (isspace((unsigned char)*s))
				s++;
			continue;
		}
		if (t[0] == '{' && t[1] == '*' && t[2] == '}') {
			while (*s && *s != ',' && !isspace((unsigned char)*s))
				s++;
			t += 3;
			continue;
		}
		if (t[0] == '{' && t[1] == '}') {
			char *end;
			(void)strtod(s, &end);
			if (end == s || isspace((unsigned char)*s))
				return false;
			*ns = s;
			*nn = (size_t)(end - s);
			s = end;
			t += 2;
			continue;
		}
		if (*s != *t)
			return false;
		s++;
		t++;
	}
	return true;
}

bool claim_same_leaf(const claim_expr *a, const claim_expr *b)
{
	if (!a || !b || a->kind != b->kind)
		return false;
	if (a->kind == CX_TABLE)
		return !strcmp(a->row, b->row) && !strcmp(a->col, b->col);
	return a->kind == CX_TEXT && !strcmp(a->tmpl, b->tmpl);
}

/* claim_eval, with every leaf that claim_same_leaf as over (NULL: none)
 * reading x. */
static mp_status eval_over(const claim_expr *e, const char *output, const claim_expr *over, double x, double *v,
                           char *err, size_t errlen)
{
	double a = 0, b = 0;
	mp_status st;
	if (over && claim_same_leaf(e, over)) {
		*v = x;
		return MP_OK;
	}
	switch (e->kind) {
	case CX_NUM:
		*v = e->num;
		return MP_OK;
	case CX_TABLE: {
		const char *cs;
		size_t cn;
		if (!table_cell(output, e->row, e->col, &cs, &cn, err, errlen))
			return MP_EINVAL;
		if (!cell_number(cs, cn, v)) {
			snprintf(err, errlen, "%s[%s] is '%.*s', not a number", e->col, e->row, (int)(cn > 40 ? 40 : cn), cs);
			return MP_EINVAL;
		}
		return MP_OK;
	}
	case CX_TEXT:
		for (const char *s = output; *s; s++) {
			const char *ns = NULL;
			size_t nn = 0;
			if (match_at(s, e->tmpl, &ns, &nn) && ns && cell_number(ns, nn, v))
				return MP_OK;
		}
		snprintf(err, errlen, "no text \"%s\" in the output", e->tmpl);
		return MP_EINVAL;
	default:
		break;
	}
	if ((st = eval_over(e->a, output, over, x, &a, err, errlen)) != MP_OK)
		return st;
	if (e->b && (st = eval_over(e->b, output, over, x, &b, err, errlen)) != MP_OK)
		return st;
	switch (e->kind) {
	case CX_ADD: *v = a + b; break;
	case CX_SUB: *v = a - b; break;
	case CX_MUL: *v = a * b; break;
	case CX_DIV:
		if (b == 0) {
			snprintf(err, errlen, "division by zero");
			return MP_EINVAL;
		}
		*v = a / b;
		break;
	case CX_POW: *v = pow(a, b); break;
	case CX_NEG: *v = -a; break;
	case CX_ABS: *v = fabs(a); break;
	case CX_LOG2:
	case CX_LN:
	case CX_SQRT:
		if (a < 0 || (a == 0 && e->kind != CX_SQRT)) {
			snprintf(err, errlen, "%s of %.6g", e->kind == CX_SQRT ? "sqrt" : "logarithm", a);
			return MP_EINVAL;
		}
		*v = e->kind == CX_LOG2 ? log2(a) : e->kind == CX_LN ? log(a) : sqrt(a);
		break;
	default: return MP_EINVAL;
	}
	return MP_OK;
}

mp_status claim_eval(const claim_expr *e, const char *output, double *v, char *err, size_t errlen)
{
	return eval_over(e, output, NULL, 0, v, err, errlen);
}

mp_status claim_eval_with(const claim_expr *e, const char *output, const claim_expr *leaf, double x, double *v,
                          char *err, size_t errlen)
{
	return eval_over(e, output, leaf, x, v, err, errlen);
}

/* --- verdicts --- */

static const char *op_text(claim_op op)
{
	switch (op) {
	case CLAIM_EQ: return "=";
	case CLAIM_LT: return "<";
	case CLAIM_GT: return ">";
	case CLAIM_LE: return "<=";
	case CLAIM_GE: return ">=";
	}
	return "?";
}

static mp_status check_figure(const claim *c, const char *out, const claim_expr *over, double x, claim_verdict *v)
{
	double l, r;
	char err[200];
	if (eval_over(c->lhs, out, over, x, &l, err, sizeof err) != MP_OK ||
	    eval_over(c->rhs, out, over, x, &r, err, sizeof err) != MP_OK) {
		snprintf(v->detail, sizeof v->detail, "%s", err);
		return MP_EINVAL;
	}
	double tol = c->tol_rel ? c->tol / 100 * fabs(r) : c->tol;
	v->measured = l;
	v->nseeds = 1;
	v->ok = fabs(l - r) <= tol;
	snprintf(v->detail, sizeof v->detail, "%.6g (claimed %.6g ± %.3g)", l, r, tol);
	return MP_OK;
}

/* claim_check with the override of eval_over. */
static mp_status check_over(const claim *c, const char *const *outputs, size_t n, const claim_expr *over, double x,
                            claim_verdict *v)
{
	memset(v, 0, sizeof *v);
	if (c->cite && !c->lhs) {
		v->ok = true;
		snprintf(v->detail, sizeof v->detail, "%s: %s", c->plain ? "plain" : "cited", c->source ? c->source : "");
		return MP_OK;
	}
	if (c->cite) {   /* its check: numbers only, so any output serves */
		static const char *const none[] = { "" };
		outputs = none;
		n = 1;
	}
	if (n == 0) {
		snprintf(v->detail, sizeof v->detail, "no output to check");
		return MP_EINVAL;
	}
	if (c->op == CLAIM_EQ)
		return check_figure(c, outputs[0], over, x, v);
	double r0 = 0, gmin = INFINITY, gmax = -INFINITY, worst = INFINITY;
	size_t worst_at = 0;
	for (size_t s = 0; s < n; s++) {
		double l, r;
		char err[200];
		if (eval_over(c->lhs, outputs[s], over, x, &l, err, sizeof err) != MP_OK ||
		    eval_over(c->rhs, outputs[s], over, x, &r, err, sizeof err) != MP_OK) {
			snprintf(v->detail, sizeof v->detail, "seed %zu: %s", s + 1, err);
			return MP_EINVAL;
		}
		if (s == 0) {
			v->measured = l;
			r0 = r;
		}
		double gap = c->op == CLAIM_GT || c->op == CLAIM_GE ? l - r : r - l;
		if (gap < worst) {
			worst = gap;
			worst_at = s;
		}
		gmin = fmin(gmin, gap);
		gmax = fmax(gmax, gap);
	}
	bool strict = c->op == CLAIM_GT || c->op == CLAIM_LT;
	v->worst = worst;
	v->worst_at = worst_at;
	v->nseeds = n;
	v->ok = strict ? worst > c->margin : worst >= c->margin;
	v->spread = gmax - gmin;
	int k;
	if (n == 1 && c->margin == 0)
		k = snprintf(v->detail, sizeof v->detail, "%.6g %s %.6g", v->measured, op_text(c->op), r0);
	else
		k = snprintf(v->detail, sizeof v->detail, "worst gap %.4g over %zu seed%s (seed %zu), margin %.4g", worst, n,
		             n == 1 ? "" : "s", worst_at + 1, c->margin);
	if (claim_is_comparison(c) && n >= 2) {
		if (k > 0 && (size_t)k < sizeof v->detail)
			snprintf(v->detail + k, sizeof v->detail - (size_t)k, ", seed spread %.4g%s", v->spread,
			         v->spread > c->margin ? " exceeds the margin" : "");
		if (v->spread > c->margin)
			v->ok = false;
	}
	return MP_OK;
}

mp_status claim_check(const claim *c, const char *const *outputs, size_t n, claim_verdict *v)
{
	return check_over(c, outputs, n, NULL, 0, v);
}

mp_status claim_check_with(const claim *c, const char *output, const claim_expr *leaf, double x, claim_verdict *v)
{
	return check_over(c, &output, 1, leaf, x, v);
}

/* --- numbers in prose --- */

bool claim_text_has_number(const char *text, double value, double tol)
{
	for (const char *p = text; *p; p++) {
		/* 2^-7: a power of two as the lessons write them */
		if (p[0] == '2' && p[1] == '^' && (p == text || !isalnum((unsigned char)p[-1]))) {
			char *end;
			long e = strtol(p + 2, &end, 10);
			if (end != p + 2 && labs(e) < 1100 && fabs(ldexp(1.0, (int)e) - value) <= tol)
				return true;
			p = end > p + 2 ? end - 1 : p + 1;
			continue;
		}
		if (!isdigit((unsigned char)*p) || (p > text && (isdigit((unsigned char)p[-1]) || p[-1] == '.' || p[-1] == ',')))
			continue;
		char buf[64];
		size_t k = 0;
		bool neg = (p > text && p[-1] == '-') ||
		           (p - text >= 3 && !strncmp(p - 3, "\xe2\x88\x92", 3));
		const char *q = p;
		while (k + 1 < sizeof buf && (isdigit((unsigned char)*q) || *q == '.' || (*q == ',' && isdigit((unsigned char)q[1])))) {
			if (*q == '.' && !isdigit((unsigned char)q[1]))
				break;
			if (*q != ',')
				buf[k++] = *q;
			q++;
		}
		if ((*q == 'e' || *q == 'E') && (isdigit((unsigned char)q[1]) || ((q[1] == '-' || q[1] == '+') && isdigit((unsigned char)q[2])))) {
			buf[k++] = *q++;
			if (*q == '-' || *q == '+')
				buf[k++] = *q++;
			while (k + 1 < sizeof buf && isdigit((unsigned char)*q))
				buf[k++] = *q++;
		}
		buf[k] = '\0';
		double x = strtod(buf, NULL);
		if (neg)
			x = -x;
		/* 3.2% states 3.2 or 0.032, whichever the claim measures */
		if (fabs(x - value) <= tol || (*q == '%' && fabs(x / 100 - value) <= tol))
			return true;
	}
	return false;
}
