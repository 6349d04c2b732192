/* Figures in a lesson's prose: each must be bound to a claim's quote, a
 * cite, a plain line or an argument of one of the section's commands, and
 * a range must be claimed on both sides (lessons/README.md, "Every figure
 * is bound"). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "teach/lesson_check_int.h"
#include "util/grow.h"

/* --- the section's claims --- */

typedef struct {
	claim *c;
	size_t n, cap;
} claim_list;

static void claims_free(claim_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		claim_free(&l->c[i]);
	free(l->c);
}

/* Parses every well-formed line of the claims blocks of [first, last)
 * (malformed ones are reported where the blocks are checked). */
static mp_status claims_of_section(const lesson_doc *doc, size_t first, size_t last, claim_list *l)
{
	memset(l, 0, sizeof *l);
	for (size_t k = first; k < last; k++) {
		const lesson_block *b = &doc->blocks[k];
		if (!lesson_is_code(b, "claims"))
			continue;
		for (const char *p = b->text; *p;) {
			size_t len = strcspn(p, "\n");
			char *line = strndup(p, len), err[8];
			if (!line)
				return MP_ENOMEM;
			if (!grow_one(&l->c, &l->cap, l->n, 16, sizeof *l->c)) {
				free(line);
				return MP_ENOMEM;
			}
			const char *t = line + strspn(line, " \t");
			if (*t && *t != '#' && claim_parse(&l->c[l->n], t, err, sizeof err) == MP_OK)
				l->n++;
			free(line);
			p += len;
			if (*p)
				p++;
		}
	}
	return MP_OK;
}

/* Whether fig (n bytes) stands in s as a whole number: not part of a
 * longer one (16 is not in 160, 0.16 or 1,016). */
static bool has_number(const char *s, const char *fig, size_t n)
{
	for (const char *p = s; (p = strstr(p, fig)) != NULL; p++) {
		bool before = p > s && (isdigit((unsigned char)p[-1]) ||
		                        ((p[-1] == '.' || p[-1] == ',') && p - 1 > s && isdigit((unsigned char)p[-2])));
		bool after = isdigit((unsigned char)p[n]) ||
		             ((p[n] == '.' || p[n] == ',') && isdigit((unsigned char)p[n + 1]));
		if (!before && !after)
			return true;
	}
	return false;
}

/* Whether fig is an argument of one of the section's commands: an input
 * typed in the command is not a figure it produces (the prose's 10,000 is
 * the command's 10000, its 1e-4 the command's -1e-4). */
static bool command_argument(const lesson_doc *doc, size_t first, size_t last, const char *text, size_t len)
{
	char fig[64];
	size_t n = 0;
	for (size_t i = 0; i < len && n + 1 < sizeof fig; i++)
		if (text[i] != ',')
			fig[n++] = text[i];
	fig[n] = '\0';
	for (size_t k = first; k < last; k++) {
		const lesson_block *b = &doc->blocks[k];
		if (!lesson_is_code(b, "mixprec"))
			continue;
		for (const char *p = b->text; (p = strstr(p, fig)) != NULL; p++)
			if ((p == b->text || p[-1] == ' ' || p[-1] == '=' || p[-1] == ',' || p[-1] == '-') &&
			    (p[n] == '\0' || p[n] == ' ' || p[n] == '\n' || p[n] == ','))
				return true;
	}
	return false;
}

/* Whether claim c's quotes bind fig: a decimal or per cent figure stands
 * in a quote of a claim or cite; a whole number stands in a quote of any
 * line, plain lines included, as a whole number. */
static bool claim_binds(const claim *c, const char *fig, size_t n, bool integer)
{
	for (size_t q = 0; q < c->nquotes; q++)
		if (integer ? has_number(c->quotes[q], fig, n) : !c->plain && strstr(c->quotes[q], fig))
			return true;
	return false;
}

/* The sides of a range c bounds: 1 from below, 2 from above, 3 both (a
 * figure = B ± T, a cite, a plain line). */
static unsigned claim_sides(const claim *c)
{
	if (c->cite || c->op == CLAIM_EQ)
		return 3;
	bool below = c->op == CLAIM_GT || c->op == CLAIM_GE;
	if (!claim_expr_reads_output(c->lhs) && claim_expr_reads_output(c->rhs))
		below = !below;   /* 5 < x: x from below */
	return below ? 1 : 2;
}

/* --- the numbers of a text --- */

typedef enum { NUM_NAME, NUM_DECIMAL, NUM_INTEGER } num_kind;

typedef struct {
	const char *s, *e;   /* the number, with its % */
	num_kind kind;
	bool ref;            /* a section, table or figure number */
} num_tok;

/* The letters that end where the blanks before p of text t begin: the
 * word before p as [*s, *e), empty when no letter stands there. */
static void word_back(const char *t, const char *p, const char **s, const char **e)
{
	const char *end = p;
	while (end > t && end[-1] == ' ')
		end--;
	const char *start = end;
	while (start > t && isalpha((unsigned char)start[-1]))
		start--;
	*s = start;
	*e = end;
}

static bool word_before(const char *t, const char *p, const char *const *words)
{
	const char *s, *e;
	word_back(t, p, &s, &e);
	for (size_t i = 0; words[i]; i++)
		if ((size_t)(e - s) == strlen(words[i]) && !strncasecmp(s, words[i], (size_t)(e - s)))
			return true;
	return false;
}

/* Whether the whole number [p, e) of text t is a year next to a citation:
 * 1900-2100 after "al." or a month, or as (2017), (2017, ...), ", 2019)",
 * or after a capitalised name and before a comma (Kanwar 2019, "..."). */
static bool is_year(const char *t, const char *p, const char *e)
{
	static const char *const months[] = { "January", "February", "March", "April", "May", "June", "July",
		                              "August", "September", "October", "November", "December", NULL };
	static const char *const al[] = { "al", NULL };
	long y = strtol(p, NULL, 10);
	if (e - p != 4 || y < 1900 || y > 2100)
		return false;
	const char *b = p;
	while (b > t && (b[-1] == ' ' || b[-1] == ','))
		b--;
	if ((b > t && b[-1] == '.' && word_before(t, b - 1, al)) || word_before(t, p, months))
		return true;
	if (p > t && p[-1] == '(' && (*e == ')' || *e == ','))
		return true;
	if (p - t >= 2 && !strncmp(p - 2, ", ", 2) && *e == ')')
		return true;
	const char *s, *w;
	word_back(t, p, &s, &w);
	return w > s && w < p && isupper((unsigned char)*s) && (*e == ',' || *e == ')');
}

/* Scans the next number of text t at or after p; false at the end. A
 * number glued to a word or a reference (fp8, E4M3, GPT-2, k=32, β2,
 * arXiv:1710.03740, v1.0, 7.4a), a power of two's base or exponent (2^-9,
 * 2^(k+1)), a function's argument (log10(2)), a compound like 16-bit, a
 * year next to a citation and a section number (section 8, §9, sections 2
 * to 4) is a name; prev_ref says whether the number before was a section
 * number (so "sections 2 and 3" reads 3 as one too). */
static bool next_number(const char *t, const char *p, bool prev_ref, num_tok *n)
{
	static const char *const refs[] = { "section", "sections", "chapter", "chapters", "table", "tables", "figure",
		                            "figures", "appendix", "exercise", "exercises", NULL };
	static const char *const joins[] = { "and", "to", "or", NULL };
	while (*p && !isdigit((unsigned char)*p)) {
		if (p[0] == '^' && p[1] == '(') {   /* 2^(k+1), 2^(9 − 7): an exponent */
			int depth = 0;
			for (p++; *p; p++) {
				depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
				if (depth == 0) {
					p++;
					break;
				}
			}
			continue;
		}
		p++;
	}
	if (!*p)
		return false;
	n->s = p;
	n->ref = false;
	char c = p > t ? p[-1] : ' ';
	bool glued = p > t && (isalnum((unsigned char)c) || strchr(":/._,^", c) ||
	                       ((c == '-' || c == '=') && p - 1 > t && isalpha((unsigned char)p[-2])) ||
	                       ((c == '-' || c == '(') && p - 1 > t && p[-2] == '^') ||
	                       (c == '(' && p - 1 > t && isalnum((unsigned char)p[-2])) ||   /* log10(2) */
	                       ((unsigned char)c >= 0x80 && p - 1 > t && ((unsigned char)p[-2] == 0xce ||
	                                                                  (unsigned char)p[-2] == 0xcf)) ||   /* β2 */
	                       (p - t >= 4 && !strncmp(p - 4, "^\xe2\x88\x92", 4)));
	if (glued) {
		while (isalnum((unsigned char)p[1]) || p[1] == '.' || p[1] == ',')
			p++;
		n->e = p + 1;
		n->kind = NUM_NAME;
		return true;
	}
	const char *q = p;
	bool point = false;
	while (isdigit((unsigned char)*q) || ((*q == '.' || *q == ',') && isdigit((unsigned char)q[1]))) {
		point |= *q == '.';
		q++;
	}
	if ((*q == 'e' || *q == 'E') && (isdigit((unsigned char)q[1]) || (q[1] == '-' && isdigit((unsigned char)q[2])))) {
		q += 2;
		while (isdigit((unsigned char)*q))
			q++;
	}
	bool percent = *q == '%';
	q += percent;
	n->e = q;
	n->kind = point || percent ? NUM_DECIMAL : NUM_INTEGER;
	if (isalpha((unsigned char)*q))   /* 7.4a, 2x: a name */
		n->kind = NUM_NAME;
	if (n->kind != NUM_INTEGER)
		return true;
	const char *b = p;
	while (b > t && b[-1] == ' ')
		b--;
	bool section = word_before(t, p, refs) || (b - t >= 2 && !strncmp(b - 2, "\xc2\xa7", 2)) ||
	               (prev_ref && (word_before(t, p, joins) || (b > t && b[-1] == ',')));
	if (*q == '^' || (*q == '-' && isalpha((unsigned char)q[1])) || is_year(t, p, q) || section) {
		n->kind = NUM_NAME;
		n->ref = section;
	}
	return true;
}

/* --- binding --- */

/* Whether the text [pe, cs) between the figure starting at ps and the one
 * starting at cs (in text t) joins them into a range: " to ", an en dash
 * or a hyphen, or " and " after "between ". */
static bool range_join(const char *t, const char *pe, const char *cs, const char *ps)
{
	size_t n = (size_t)(cs - pe);
	if ((n == 4 && !strncmp(pe, " to ", 4)) || (n == 1 && *pe == '-') || (n == 3 && !strncmp(pe, "\xe2\x80\x93", 3)) ||
	    (n == 5 && !strncmp(pe, " \xe2\x80\x93 ", 5)))
		return true;
	return n == 5 && !strncmp(pe, " and ", 5) && ps - t >= 8 && !strncasecmp(ps - 8, "between ", 8);
}

typedef struct {
	const lesson_doc *doc;
	size_t first, last;
	const claim_list *claims;
	lesson_check_report *rep;
	unsigned line;
} bind_ctx;

/* Whether figure n is bound; *sides gets the sides the claims quoting it
 * bound (0: none quotes it, it is a command's argument). */
static bool bound(const bind_ctx *x, const num_tok *n, unsigned *sides)
{
	size_t len = (size_t)(n->e - n->s);
	char fig[64];
	snprintf(fig, sizeof fig, "%.*s", (int)(len < 63 ? len : 63), n->s);
	len = strlen(fig);
	bool hit = false;
	*sides = 0;
	for (size_t i = 0; i < x->claims->n; i++)
		if (claim_binds(&x->claims->c[i], fig, len, n->kind == NUM_INTEGER)) {
			hit = true;
			*sides |= claim_sides(&x->claims->c[i]);
		}
	return hit || command_argument(x->doc, x->first, x->last, fig, len);
}

/* The sides the claims bound the range [s, e) on: those of the claims
 * whose quotes hold the whole range when there are some, else ends (the
 * sides of the claims quoting either end). */
static unsigned range_sides(const bind_ctx *x, const char *s, const char *e, unsigned ends)
{
	char range[128];
	snprintf(range, sizeof range, "%.*s", (int)(e - s < 127 ? e - s : 127), s);
	unsigned sides = 0;
	for (size_t i = 0; i < x->claims->n; i++)
		for (size_t q = 0; q < x->claims->c[i].nquotes; q++)
			if (strstr(x->claims->c[i].quotes[q], range))
				sides |= claim_sides(&x->claims->c[i]);
	return sides ? sides : ends;
}

static bool report(const bind_ctx *x, lesson_check_kind kind, const char *s, const char *e, const char *fmt)
{
	char fig[64];
	snprintf(fig, sizeof fig, "%.*s", (int)(e - s < 63 ? e - s : 63), s);
	return lesson_check_add(x->rep, kind, x->line, false, fig, "%s", fmt) != NULL;
}

/* The figures of one prose text: every one bound, every range two-sided. */
static mp_status bind_text(const bind_ctx *x, const char *t)
{
	num_tok n, prev = { 0 };
	bool have_prev = false, prev_ref = false;
	unsigned prev_sides = 0;
	for (const char *p = t; next_number(t, p, prev_ref, &n); p = n.e) {
		prev_ref = n.ref;
		if (n.kind == NUM_NAME) {
			have_prev = false;
			continue;
		}
		unsigned sides;
		if (!bound(x, &n, &sides)) {
			if (!report(x, LC_UNBOUND, n.s, n.e,
			            n.kind == NUM_INTEGER
			            ? "a whole number in the prose that no claim quotes (bind it with a claim or 'cite', or "
			              "say why it is no measured figure with 'plain \"QUOTE\" REASON')"
			            : "a figure in the prose that no claim quotes (bind it with a claim, or 'cite' its source)"))
				return MP_ENOMEM;
			sides = 3;   /* reported once */
		} else if (have_prev && range_join(t, prev.e, n.s, prev.s) && (prev_sides | sides) &&
		           range_sides(x, prev.s, n.e, prev_sides | sides) != 3) {
			if (!report(x, LC_RANGE, prev.s, n.e,
			            "a range whose claims bound it on one side only (one-sided): claim both ends (X > LOW "
			            "and X < HIGH) or state a figure"))
				return MP_ENOMEM;
		}
		prev = n;
		prev_sides = sides;
		have_prev = true;
	}
	return MP_OK;
}

mp_status lesson_bind_section(const lesson_doc *doc, size_t first, size_t last, lesson_check_report *rep)
{
	claim_list claims;
	mp_status st = claims_of_section(doc, first, last, &claims);
	bind_ctx x = { .doc = doc, .first = first, .last = last, .claims = &claims, .rep = rep };
	for (size_t k = first; st == MP_OK && k < last; k++) {
		const lesson_block *b = &doc->blocks[k];
		if (b->kind != LB_PARAGRAPH && b->kind != LB_LIST_ITEM && b->kind != LB_QUOTE)
			continue;
		x.line = b->line;
		for (size_t s = 0; st == MP_OK && s < b->nspans; s++)
			if (!(b->spans[s].style & LS_CODE))
				st = bind_text(&x, b->spans[s].text);
	}
	claims_free(&claims);
	return st;
}
