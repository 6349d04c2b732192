#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/intervals.h"
#include "fmt/decode.h"
#include "fmt/interval.h"
#include "util/csvout.h"
#include "util/numtext.h"

/* The columns of one interval, after a value's own in both CSVs. */
#define PIECE_COLUMNS "interval,lo,lo_hex,lo_closed,hi,hi_hex,hi_closed,rule"

/* --- points and pieces as text --- */

/* The point as a binary64; false when it is not one exactly (every end of
 * a format of at most 16 bits is one: a midpoint needs one more bit). */
static bool point_double(const fmt_num *p, double *d)
{
	if (p->kind == NUM_INF) {
		*d = p->neg ? -INFINITY : INFINITY;
		return true;
	}
	*d = mpq_get_d(p->mag);
	mpq_t back;
	mpq_init(back);
	mpq_set_d(back, *d);
	bool exact = mpq_equal(back, p->mag) != 0;
	mpq_clear(back);
	if (p->neg)
		*d = -*d;
	return exact;
}

/* The point's exact decimal ("-0", "inf"), or in hex with hex; a point no
 * binary64 holds as the fraction n/d. */
static char *point_text(char *buf, size_t n, const fmt_num *p, bool hex)
{
	double d;
	if (!point_double(p, &d)) {
		char *q = mpq_get_str(NULL, 10, p->mag);
		snprintf(buf, n, "%s%s", p->neg ? "-" : "", q);
		free(q);
	} else if (isinf(d) || !hex) {
		numtext_exact(buf, n, d);
	} else {
		snprintf(buf, n, "%a", d);
	}
	return buf;
}

/* "[lo, hi)" in decimal or in hex. */
static char *piece_text(char *buf, size_t n, const fmt_piece *p, bool hex)
{
	char lo[1200], hi[1200];
	snprintf(buf, n, "%c%s, %s%c", p->lo_closed ? '[' : '(', point_text(lo, sizeof lo, &p->lo, hex),
	         point_text(hi, sizeof hi, &p->hi, hex), p->hi_closed ? ']' : ')');
	return buf;
}

/* How the probability of the piece's value goes: "1" in a deterministic
 * mode; else from lo to the centre and from it to hi. */
static char *rule_text(char *buf, size_t n, const fmt_interval *iv, const fmt_piece *p)
{
	if (!iv->stochastic) {
		snprintf(buf, n, "1");
		return buf;
	}
	char lo[1200], c[1200], hi[1200], far[1200], below[2600] = "", above[2600] = "";
	point_text(lo, sizeof lo, &p->lo, false);
	point_text(c, sizeof c, &p->centre, false);
	point_text(hi, sizeof hi, &p->hi, false);
	switch (p->below) {
	case FMT_SIDE_RAMP: snprintf(below, sizeof below, "rises from 0 at %s, ", lo); break;
	case FMT_SIDE_HALF: snprintf(below, sizeof below, "1/2 from %s, ", lo); break;
	case FMT_SIDE_ONE:  snprintf(below, sizeof below, "1 from %s, ", lo); break;
	case FMT_SIDE_NONE: break;
	}
	point_text(far, sizeof far, &p->above_far, false);
	switch (p->above) {
	case FMT_SIDE_RAMP:   /* the support stops 2^-32 of the gap short of the neighbour */
		snprintf(above, sizeof above, ", falls toward 0 at %s (0 past %s)", far, hi);
		break;
	case FMT_SIDE_HALF: snprintf(above, sizeof above, ", 1/2 up to %s", hi); break;
	case FMT_SIDE_ONE:  snprintf(above, sizeof above, ", 1 up to %s", hi); break;
	case FMT_SIDE_NONE: break;
	}
	if (p->below == FMT_SIDE_RAMP && p->lo_closed) {   /* a negative value: the short end is lo */
		point_text(far, sizeof far, &p->below_far, false);
		snprintf(below, sizeof below, "rises from 0 at %s (0 before %s), ", far, lo);
	}
	if (p->above == FMT_SIDE_RAMP && !p->hi_closed)
		snprintf(above, sizeof above, ", falls to 0 at %s", hi);
	if (p->past)   /* the value past the largest: what overflows there and beyond */
		snprintf(buf, n, "%s%s from %s up to %s", below, p->above == FMT_SIDE_ONE ? "1" : "1/2", c, hi);
	else
		snprintf(buf, n, "%s1 at %s%s", below, c, above);
	return buf;
}

/* The PIECE_COLUMNS cells of p; empty ones, the interval "none", for NULL. */
static void piece_cells(csvw *w, const fmt_interval *iv, const fmt_piece *p)
{
	char text[2600], a[1200];
	if (!p) {
		csvw_field(w, "none");
		for (int i = 0; i < 7; i++)
			csvw_field(w, "");
		return;
	}
	csvw_field(w, piece_text(text, sizeof text, p, false));
	csvw_field(w, point_text(a, sizeof a, &p->lo, false));
	csvw_field(w, point_text(a, sizeof a, &p->lo, true));
	csvw_field(w, p->lo_closed ? "yes" : "no");
	csvw_field(w, point_text(a, sizeof a, &p->hi, false));
	csvw_field(w, point_text(a, sizeof a, &p->hi, true));
	csvw_field(w, p->hi_closed ? "yes" : "no");
	csvw_field(w, rule_text(text, sizeof text, iv, p));
}

/* The value of a pattern in decimal and in hex ("nan" for NaN). */
static void value_texts(const fmt_decoded *d, char *dec, char *hex, size_t n)
{
	numtext_exact(dec, n, d->value);
	if (isnan(d->value) || isinf(d->value))
		snprintf(hex, n, "%s", dec);
	else
		snprintf(hex, n, "%a", d->value);
}

/* --- formats --values --- */

/* One pattern's rows: its value, then one row per piece of its interval
 * (one saying none when no real rounds to it) when the table has a mode. */
static void values_row(const formats_opts *o, csvw *w, uint32_t bits, fmt_interval *iv, int vw, int hw)
{
	const fmt_info *f = o->values;
	const fmt_round_ctl ctl = { .mode = o->mode, .saturate = o->saturate };
	fmt_decoded d;
	fmt_decode(f, bits, &d);
	char hexbits[16], dec[1200], hex[1200], text[2600], htext[2600], rule[2600];
	snprintf(hexbits, sizeof hexbits, "0x%0*x", fmt_hex_digits(f), bits);
	value_texts(&d, dec, hex, sizeof dec);
	if (o->have_mode)
		fmt_interval_of(iv, f, &ctl, bits);
	size_t rows = o->have_mode && iv->n > 1 ? iv->n : 1;
	for (size_t i = 0; i < rows; i++) {
		const fmt_piece *p = o->have_mode && iv->n ? &iv->piece[i] : NULL;
		if (o->csv) {
			csvw_field(w, hexbits);
			csvw_field(w, fmt_class_name(d.cls));
			csvw_field(w, dec);
			csvw_field(w, hex);
			if (o->have_mode)
				piece_cells(w, iv, p);
			csvw_end_row(w);
			continue;
		}
		printf("%-6s  %-9s  %-*s  %-*s", hexbits, fmt_class_name(d.cls), vw, dec, hw, hex);
		if (o->have_mode && p)
			printf("  %s  %s%s%s", piece_text(text, sizeof text, p, false), piece_text(htext, sizeof htext, p, true),
			       iv->stochastic ? "  " : "", iv->stochastic ? rule_text(rule, sizeof rule, iv, p) : "");
		else if (o->have_mode)
			printf("  none");
		putchar('\n');
	}
}

/* The widths of the value columns over every pattern of f. */
static void value_widths(const fmt_info *f, int *vw, int *hw)
{
	char dec[1200], hex[1200];
	*vw = (int)strlen("value");
	*hw = (int)strlen("hex");
	for (uint32_t b = 0; b <= fmt_all_mask(f); b++) {
		fmt_decoded d;
		fmt_decode(f, b, &d);
		value_texts(&d, dec, hex, sizeof dec);
		if ((int)strlen(dec) > *vw)
			*vw = (int)strlen(dec);
		if ((int)strlen(hex) > *hw)
			*hw = (int)strlen(hex);
	}
}

int cmd_formats_values(const formats_opts *o)
{
	const fmt_info *f = o->values;
	csvw w;
	int vw = 0, hw = 0;
	if (o->csv) {
		csvw_init(&w, stdout);
		csvw_header(&w, o->have_mode ? "bits,class,value,value_hex," PIECE_COLUMNS : "bits,class,value,value_hex");
	} else {
		value_widths(f, &vw, &hw);
		printf("%s: every value", f->name);
		if (o->have_mode)
			printf(", and the reals that round to it in %s%s", fmt_mode_name(o->mode),
			       o->saturate ? " with saturation" : "");
		printf("\n%-6s  %-9s  %-*s  %-*s%s\n", "bits", "class", vw, "value", hw, "hex",
		       !o->have_mode ? "" : fmt_mode_stochastic(o->mode) ? "  support  (hex)  probability"
		                                                         : "  interval  (hex)");
	}
	fmt_interval iv;
	fmt_interval_init(&iv);
	for (uint32_t b = 0; b <= fmt_all_mask(f); b++)
		values_row(o, &w, b, &iv, vw, hw);
	fmt_interval_clear(&iv);
	if (!o->csv && o->have_mode)
		printf("\n-0 is the typed -0 (0 is +0); inf the typed infinity. An interval holds every real that rounds\n"
		       "to the value%s.\n",
		       fmt_mode_stochastic(o->mode) ? " with a nonzero probability; SR's step away from zero has the\n"
		                                      "probability (gap fraction) rounded up to a multiple of 2^-32"
		                                    : "");
	return cli_flush_stdout("formats") ? CLI_OK : CLI_ENV;
}

/* --- bits --interval --- */

/* One candidate result c of x, with its probability. */
static void interval_show(const bits_opts *o, const fmt_info *f, const fmt_num *x, uint32_t c, csvw *w)
{
	const fmt_round_ctl ctl = { .mode = o->mode, .saturate = o->saturate };
	fmt_interval iv;
	fmt_interval_init(&iv);
	fmt_interval_of(&iv, f, &ctl, c);
	mpq_t p;
	mpq_init(p);
	fmt_interval_probability(&iv, x, p);
	fmt_decoded d;
	fmt_decode(f, c, &d);
	char hexbits[16], dec[1200], hex[1200], prob[1200], text[2600];
	snprintf(hexbits, sizeof hexbits, "0x%0*x", fmt_hex_digits(f), c);
	value_texts(&d, dec, hex, sizeof dec);
	numtext_exact(prob, sizeof prob, mpq_get_d(p));   /* k / 2^32: exact */
	if (!w)   /* inf and NaN have no hex float apart from their name */
		printf("%s as %s (%s%s): %s = %s%s%s, probability %s\n", o->interval, f->name, fmt_mode_name(o->mode),
		       o->saturate ? ", saturating" : "", hexbits, dec, strcmp(dec, hex) ? " = " : "",
		       strcmp(dec, hex) ? hex : "", prob);
	for (size_t i = 0; i < iv.n; i++) {
		const fmt_piece *pc = &iv.piece[i];
		bool holds = fmt_piece_contains(pc, x);
		if (w) {
			csvw_field(w, o->interval);
			csvw_field(w, f->name);
			csvw_field(w, fmt_mode_name(o->mode));
			csvw_field(w, hexbits);
			csvw_field(w, fmt_class_name(d.cls));
			csvw_field(w, dec);
			csvw_field(w, hex);
			csvw_field(w, prob);
			piece_cells(w, &iv, pc);
			csvw_field(w, holds ? "yes" : "no");
			csvw_end_row(w);
			continue;
		}
		printf("  %-11s %s\n", iv.stochastic ? "support" : holds ? "interval" : "also",
		       piece_text(text, sizeof text, pc, false));
		printf("  %-11s %s\n", "hex", piece_text(text, sizeof text, pc, true));
		if (iv.stochastic)
			printf("  %-11s %s\n", "probability", rule_text(text, sizeof text, &iv, pc));
	}
	mpq_clear(p);
	fmt_interval_clear(&iv);
}

/* The distinct results x can round to: one, or SR's two neighbours (its
 * random bits 0 step away from zero when inexact, all ones stay). */
static size_t interval_results(const fmt_info *f, const bits_opts *o, const fmt_num *x, uint32_t *out,
                               unsigned *flags)
{
	fmt_round_ctl ctl = { .mode = o->mode, .saturate = o->saturate, .rbits = 0 };
	out[0] = fmt_round_num(f, &ctl, x, flags);
	if (!fmt_mode_stochastic(o->mode))
		return 1;
	ctl.rbits = UINT32_MAX;
	out[1] = fmt_round_num(f, &ctl, x, NULL);
	if (out[1] == out[0])
		return 1;
	uint32_t t = out[0];   /* toward zero first */
	out[0] = out[1];
	out[1] = t;
	return 2;
}

int cmd_bits_interval(const bits_opts *o)
{
	const fmt_info *f = fmt_get(o->fmts[0]);
	char err[256];
	fmt_num x;
	fmt_num_init(&x);
	int rc = CLI_USAGE;
	unsigned flags;
	uint32_t res[2];
	size_t nres;
	if (fmt_parse_number(&x, o->interval, err, sizeof err) != MP_OK) {
		cli_error("bits", "--interval: %s", err);
	} else if (x.kind == NUM_NAN) {
		cli_error("bits", "--interval: '%s' is a NaN, not a real: no interval of reals holds it", o->interval);
	} else if (nres = interval_results(f, o, &x, res, &flags), flags & FMT_FLAG_INVALID) {
		cli_error("bits", "--interval: '%s' cannot be rounded to %s: %s %s", o->interval, f->name, f->name,
		          fmt_invalid_reason(f, false, x.kind == NUM_FINITE && mpq_sgn(x.mag) == 0, x.neg));
	} else {
		csvw w;
		if (o->csv) {
			csvw_init(&w, stdout);
			csvw_header(&w, "input,format,mode,bits,class,value,value_hex,probability," PIECE_COLUMNS ",holds_input");
		}
		for (size_t i = 0; i < nres; i++) {
			if (i && !o->csv)
				putchar('\n');
			interval_show(o, f, &x, res[i], o->csv ? &w : NULL);
		}
		rc = cli_flush_stdout("bits") ? CLI_OK : CLI_ENV;
	}
	fmt_num_clear(&x);
	return rc;
}
