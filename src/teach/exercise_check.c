/* Answers: reading a number, a bit pattern or a choice as a student types
 * it, and checking it against the solution with feedback on the mistake it
 * looks like. */
#include "teach/exercise.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/decode.h"
#include "fmt/parse.h"
#include "fmt/round.h"
#include "util/text.h"

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

/* A number answer: parsed with its unit (converted between B, GB and GiB),
 * compared within the field's tolerance, else matched to a mistake. */
static ex_verdict check_number(const ex_exercise *ex, const ex_solution *sol, size_t i, const char *answer, char *fb, size_t fblen,
                               const char **tag)
{
	const ex_field *f = &ex->fields[i];
	const ex_value *e = &sol->expect[i];
	char err[200];
	char tol[64];
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

/* A bit pattern: exact; else a mistake, or where the first difference is. */
static ex_verdict check_bits(const ex_exercise *ex, const ex_solution *sol, size_t i, const char *answer, char *fb, size_t fblen,
                               const char **tag)
{
	const ex_field *f = &ex->fields[i];
	const ex_value *e = &sol->expect[i];
	char err[200];
	(void)tag;
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
	snprintf(fb, fblen, "%s: wrong; %s differs (your pattern 0x%0*x decodes to %.9g).", f->name, where,
	         fmt_hex_digits(fi), (unsigned)b, fmt_to_double(fi, b));
	return EX_WRONG;
}

/* A choice word, possibly followed by a reason that is not checked. */
static ex_verdict check_choice(const ex_exercise *ex, const ex_solution *sol, size_t i, const char *answer, char *fb, size_t fblen,
                               const char **tag)
{
	const ex_field *f = &ex->fields[i];
	const ex_value *e = &sol->expect[i];
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

ex_verdict ex_check_tagged(const ex_exercise *ex, const ex_solution *sol, size_t i, const char *answer, char *fb,
                           size_t fblen, const char **tag)
{
	const char *unused;
	if (tag == NULL)
		tag = &unused;
	*tag = NULL;
	if (fblen)
		fb[0] = '\0';
	switch (ex->fields[i].type) {
	case EX_NUMBER:
		return check_number(ex, sol, i, answer, fb, fblen, tag);
	case EX_BITS:
		return check_bits(ex, sol, i, answer, fb, fblen, tag);
	case EX_CHOICE:
	default:
		return check_choice(ex, sol, i, answer, fb, fblen, tag);
	}
}

bool ex_solved(const ex_exercise *ex, const bool *answered, const bool *right)
{
	for (size_t i = 0; i < ex->nfields; i++)
		if ((!ex->fields[i].optional && !right[i]) || (answered[i] && !right[i]))
			return false;
	return true;
}
