#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teach/claim.h"

/* --- parsing: a small recursive-descent parser over one line --- */

typedef struct {
	const char *s, *p;
	char *err;
	size_t errlen;
	bool failed, oom;
} lexer;

static void fail(lexer *lx, const char *fmt, ...)
{
	if (lx->failed)
		return;
	lx->failed = true;
	int n = snprintf(lx->err, lx->errlen, "column %d: ", (int)(lx->p - lx->s) + 1);
	va_list ap;
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < lx->errlen)
		vsnprintf(lx->err + n, lx->errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

static void skip_ws(lexer *lx)
{
	while (*lx->p == ' ' || *lx->p == '\t')
		lx->p++;
}

/* Consumes word (followed by a non-identifier character) when it comes next. */
static bool accept_word(lexer *lx, const char *word)
{
	skip_ws(lx);
	size_t n = strlen(word);
	if (strncmp(lx->p, word, n) || isalnum((unsigned char)lx->p[n]) || lx->p[n] == '_')
		return false;
	lx->p += n;
	return true;
}

static bool accept(lexer *lx, const char *tok)
{
	skip_ws(lx);
	size_t n = strlen(tok);
	if (strncmp(lx->p, tok, n))
		return false;
	lx->p += n;
	return true;
}

static char *dup_n(lexer *lx, const char *s, size_t n)
{
	char *d = strndup(s, n);
	if (!d) {
		lx->oom = lx->failed = true;
	}
	return d;
}

/* A "..." string; \" and \\ escape. NULL (and an error) when none comes next. */
static char *string_lit(lexer *lx)
{
	skip_ws(lx);
	if (*lx->p != '"') {
		fail(lx, "expected a \"quoted\" text");
		return NULL;
	}
	const char *start = ++lx->p;
	size_t n = 0;
	for (const char *q = start; *q != '"'; q++, n++) {
		if (!*q) {
			fail(lx, "unterminated quote");
			return NULL;
		}
		if (*q == '\\' && q[1])
			q++;
	}
	char *d = malloc(n + 1);
	if (!d) {
		lx->oom = lx->failed = true;
		return NULL;
	}
	size_t k = 0;
	while (*lx->p != '"') {
		if (*lx->p == '\\' && lx->p[1])
			lx->p++;
		d[k++] = *lx->p++;
	}
	d[k] = '\0';
	lx->p++;
	return d;
}

static bool number_lit(lexer *lx, double *v)
{
	skip_ws(lx);
	const char *q = lx->p;
	if (!(isdigit((unsigned char)*q) || (*q == '.' && isdigit((unsigned char)q[1]))))
		return false;
	char *end;
	*v = strtod(q, &end);
	if (end == q || !isfinite(*v))
		return false;
	lx->p = end;
	return true;
}

static claim_expr *node(lexer *lx, claim_expr_kind kind, claim_expr *a, claim_expr *b)
{
	claim_expr *e = calloc(1, sizeof *e);
	if (!e) {
		lx->oom = lx->failed = true;
		return NULL;
	}
	e->kind = kind;
	e->a = a;
	e->b = b;
	return e;
}

static void expr_free(claim_expr *e)
{
	if (!e)
		return;
	expr_free(e->a);
	expr_free(e->b);
	free(e->row);
	free(e->col);
	free(e->tmpl);
	free(e);
}

/* The node KIND over A and B, which it takes: B missing (the parse under it
 * failed) or no memory for the node frees both and gives NULL. */
static claim_expr *join(lexer *lx, claim_expr_kind kind, claim_expr *a, claim_expr *b)
{
	claim_expr *n = b ? node(lx, kind, a, b) : NULL;
	if (!n) {
		expr_free(a);
		expr_free(b);
	}
	return n;
}

/* [ROW] after a column name: the row is the first word of a table line. */
static claim_expr *table_ref(lexer *lx, char *col)
{
	if (!col)
		return NULL;
	lx->p++; /* '[' */
	const char *start = lx->p;
	while (*lx->p && *lx->p != ']')
		lx->p++;
	if (*lx->p != ']' || lx->p == start) {
		free(col);
		fail(lx, "expected ROW] after '['");
		return NULL;
	}
	char *row = dup_n(lx, start, (size_t)(lx->p - start));
	lx->p++;
	claim_expr *e = row ? node(lx, CX_TABLE, NULL, NULL) : NULL;
	if (!e) {
		free(col);
		free(row);
		return NULL;
	}
	e->col = col;
	e->row = row;
	return e;
}

static claim_expr *expr(lexer *lx);
static claim_expr *factor(lexer *lx);

static claim_expr *primary(lexer *lx)
{
	skip_ws(lx);
	double v;
	if (accept(lx, "(")) {
		claim_expr *a = expr(lx);
		if (a && !accept(lx, ")")) {
			fail(lx, "expected ')'");
			expr_free(a);
			return NULL;
		}
		return a;
	}
	if (number_lit(lx, &v)) {
		claim_expr *e = node(lx, CX_NUM, NULL, NULL);
		if (e)
			e->num = v;
		return e;
	}
	if (*lx->p == '"') {
		char *col = string_lit(lx);
		if (col && *lx->p != '[') {
			free(col);
			fail(lx, "a quoted column name needs [ROW] right after it");
			return NULL;
		}
		return table_ref(lx, col);
	}
	const char *start = lx->p;
	while (isalnum((unsigned char)*lx->p) || *lx->p == '_')
		lx->p++;
	size_t n = (size_t)(lx->p - start);
	if (n == 0) {
		fail(lx, "expected a number, COLUMN[ROW], text(\"...{}...\"), abs(...) or '('");
		return NULL;
	}
	if (*lx->p == '[')
		return table_ref(lx, dup_n(lx, start, n));
	static const struct {
		const char *name;
		claim_expr_kind kind;
	} funcs[] = { { "abs", CX_ABS }, { "log2", CX_LOG2 }, { "ln", CX_LN }, { "sqrt", CX_SQRT } };
	int fn = -1;
	for (int i = 0; i < (int)(sizeof funcs / sizeof funcs[0]); i++)
		if (strlen(funcs[i].name) == n && !strncmp(start, funcs[i].name, n))
			fn = i;
	bool is_text = n == 4 && !strncmp(start, "text", 4);
	if ((!is_text && fn < 0) || !accept(lx, "(")) {
		lx->p = start;
		fail(lx, "expected COLUMN[ROW], text(\"...{}...\"), abs(...), log2(...), ln(...) or sqrt(...)");
		return NULL;
	}
	claim_expr *e = NULL;
	if (fn >= 0) {
		claim_expr *a = expr(lx);
		e = a ? node(lx, funcs[fn].kind, a, NULL) : NULL;
		if (!e)
			expr_free(a);
	} else {
		char *t = string_lit(lx);
		const char *hole = t ? strstr(t, "{}") : NULL;
		if (t && (!hole || strstr(hole + 2, "{}"))) {
			fail(lx, "text(...) needs exactly one {} where the number stands");
			free(t);
			return NULL;
		}
		e = t ? node(lx, CX_TEXT, NULL, NULL) : NULL;
		if (e)
			e->tmpl = t;
		else
			free(t);
	}
	if (e && !accept(lx, ")")) {
		fail(lx, "expected ')'");
		expr_free(e);
		return NULL;
	}
	return e;
}

/* A primary, a power of it (a ^ b, right to left, b itself a factor: 2^-16)
 * or a negated factor. */
static claim_expr *factor(lexer *lx)
{
	skip_ws(lx);
	if (accept(lx, "-")) {
		claim_expr *a = factor(lx);
		return a ? node(lx, CX_NEG, a, NULL) : NULL;
	}
	claim_expr *a = primary(lx);
	if (a && accept(lx, "^"))
		return join(lx, CX_POW, a, factor(lx));
	return a;
}

/* Whether operator a or b comes next (taking it), its kind (ka or kb) into k. */
static bool binary_op(lexer *lx, const char *a, claim_expr_kind ka, const char *b, claim_expr_kind kb,
                      claim_expr_kind *k)
{
	if (accept(lx, a))
		*k = ka;
	else if (accept(lx, b))
		*k = kb;
	else
		return false;
	return true;
}

static claim_expr *term(lexer *lx)
{
	claim_expr *a = factor(lx);
	claim_expr_kind k;
	while (a && binary_op(lx, "*", CX_MUL, "/", CX_DIV, &k))
		a = join(lx, k, a, factor(lx));
	return a;
}

/* Whether the tolerance "+-" comes next: it is not a sum. */
static bool at_tolerance(lexer *lx)
{
	skip_ws(lx);
	return !strncmp(lx->p, "+-", 2);
}

static claim_expr *expr(lexer *lx)
{
	claim_expr *a = term(lx);
	claim_expr_kind k;
	while (a && !at_tolerance(lx) && binary_op(lx, "+", CX_ADD, "-", CX_SUB, &k))
		a = join(lx, k, a, term(lx));
	return a;
}

static bool parse_op(lexer *lx, claim_op *op)
{
	if (accept(lx, "<="))
		*op = CLAIM_LE;
	else if (accept(lx, ">="))
		*op = CLAIM_GE;
	else if (accept(lx, "<"))
		*op = CLAIM_LT;
	else if (accept(lx, ">"))
		*op = CLAIM_GT;
	else if (accept(lx, "="))
		*op = CLAIM_EQ;
	else
		return false;
	return true;
}

static bool add_quote(lexer *lx, claim *c, char *q)
{
	char **p = realloc(c->quotes, (c->nquotes + 1) * sizeof *p);
	if (!p) {
		free(q);
		lx->oom = lx->failed = true;
		return false;
	}
	c->quotes = p;
	c->quotes[c->nquotes++] = q;
	return true;
}

/* A figure's tolerance ('± T', '± T%'), or an ordering's optional margin
 * ('by M'). */
static void parse_tolerance(lexer *lx, claim *c)
{
	if (c->op == CLAIM_EQ) {
		if (!accept(lx, "\xc2\xb1") && !accept(lx, "+-")) {
			fail(lx, "a figure (=) needs a tolerance: '± T' or '± T%%'");
			return;
		}
		if (!number_lit(lx, &c->tol)) {
			fail(lx, "expected the tolerance after '±'");
			return;
		}
		c->tol_rel = accept(lx, "%");
	} else if (accept_word(lx, "by") && !number_lit(lx, &c->margin)) {
		fail(lx, "expected the margin after 'by'");
	}
}

/* The tail of a claim: the tolerance or margin, then the quotes. */
static void parse_tail(lexer *lx, claim *c)
{
	parse_tolerance(lx, c);
	if (lx->failed)
		return;
	for (skip_ws(lx); *lx->p && !lx->failed; skip_ws(lx)) {
		if (*lx->p == '#')
			return;
		char *q = string_lit(lx);
		if (!q || !add_quote(lx, c, q))
			return;
		if (!*q) {
			fail(lx, "an empty quote backs nothing");
			return;
		}
	}
}

/* A cite's 'check LHS OP RHS [± T[%] | by M];': arithmetic on numbers that
 * must come out as the quoted figure says. */
static void parse_cite_check(lexer *lx, claim *c)
{
	c->lhs = expr(lx);
	if (c->lhs && !parse_op(lx, &c->op))
		fail(lx, "expected =, <, >, <= or >=");
	if (!lx->failed)
		c->rhs = expr(lx);
	if (lx->failed)
		return;
	if (claim_expr_reads_output(c->lhs) || claim_expr_reads_output(c->rhs)) {
		fail(lx, "a cite's check is arithmetic on numbers: it reads no command output");
		return;
	}
	parse_tolerance(lx, c);
	if (!lx->failed && !accept(lx, ";"))
		fail(lx, "expected ';' between a cite's check and its source");
}

mp_status claim_parse(claim *c, const char *line, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	if (errlen)
		err[0] = '\0';
	lexer lx = { .s = line, .p = line, .err = err, .errlen = errlen };
	if (accept_word(&lx, "plain")) {
		c->cite = c->plain = true;
		char *q = string_lit(&lx);
		if (q && add_quote(&lx, c, q)) {
			skip_ws(&lx);
			if (!claim_has_integer(q))
				fail(&lx, "a plain quote must hold the whole number it says is no measured figure");
			else if (!*lx.p || *lx.p == '#')
				fail(&lx, "plain \"...\" needs the reason its numbers are no measured figure after the quote");
			else
				c->source = dup_n(&lx, lx.p, strlen(lx.p));
		}
	} else if (accept_word(&lx, "cite")) {
		c->cite = true;
		char *q = string_lit(&lx);
		if (q && add_quote(&lx, c, q) && accept_word(&lx, "check"))
			parse_cite_check(&lx, c);
		if (!lx.failed) {
			skip_ws(&lx);
			if (!*lx.p)
				fail(&lx, "cite \"...\" needs the source it comes from after the quote");
			else
				c->source = dup_n(&lx, lx.p, strlen(lx.p));
		}
	} else {
		c->lhs = expr(&lx);
		if (c->lhs && !parse_op(&lx, &c->op))
			fail(&lx, "expected =, <, >, <= or >=");
		if (!lx.failed)
			c->rhs = expr(&lx);
		if (!lx.failed)
			parse_tail(&lx, c);
	}
	if (lx.failed) {
		mp_status st = lx.oom ? MP_ENOMEM : MP_EPARSE;
		claim_free(c);
		return st;
	}
	return MP_OK;
}

void claim_free(claim *c)
{
	expr_free(c->lhs);
	expr_free(c->rhs);
	for (size_t i = 0; i < c->nquotes; i++)
		free(c->quotes[i]);
	free(c->quotes);
	free(c->source);
	memset(c, 0, sizeof *c);
}

bool claim_has_integer(const char *s)
{
	for (const char *p = s; *p; p++)
		if (isdigit((unsigned char)*p) && (p == s || (!isdigit((unsigned char)p[-1]) && p[-1] != '.'))) {
			const char *q = p;
			while (isdigit((unsigned char)*q) || (*q == ',' && isdigit((unsigned char)q[1])))
				q++;
			if (!(*q == '.' && isdigit((unsigned char)q[1])))
				return true;
		}
	return false;
}

bool claim_expr_reads_output(const claim_expr *e)
{
	if (!e)
		return false;
	return e->kind == CX_TABLE || e->kind == CX_TEXT || claim_expr_reads_output(e->a) ||
	       claim_expr_reads_output(e->b);
}

bool claim_is_comparison(const claim *c)
{
	return !c->cite && c->op != CLAIM_EQ && claim_expr_reads_output(c->lhs) && claim_expr_reads_output(c->rhs);
}

bool claim_per_seed(const claim *c)
{
	return !c->cite && c->op != CLAIM_EQ;
}
