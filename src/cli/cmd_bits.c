#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/intervals.h"
#include "fmt/bits_opts.h"
#include "fmt/decode.h"
#include "fmt/parse.h"
#include "util/csvout.h"
#include "util/numtext.h"

static void bits_help(void)
{
	printf("Usage: mixprec bits VALUE... [--format F,...] [--mode M] [--csv]\n"
	       "       mixprec bits --raw PATTERN [--raw PATTERN...] --format F [--csv]\n"
	       "       mixprec bits --interval VALUE --format F [--mode M] [--saturate] [--csv]\n"
	       "Shows how a value is stored: sign, exponent and fraction fields, class,\n"
	       "decoded value, the spacing (ulp) there and the neighbouring values.\n\n"
	       "  --format F,...  formats (default: all); known:\n");
	cli_print_formats(18);
	printf("  --mode M        rounding of VALUE into the format (default rne; sr and\n"
	       "                  sr-equal with --interval only)\n"
	       "  --saturate      overflow and inf give +-max\n"
	       "  --interval VALUE  VALUE rounded into the one --format, and the exact\n"
	       "                  interval of reals that rounds to the result (ends open\n"
	       "                  or closed; see 'mixprec formats --help'); sr, sr-equal:\n"
	       "                  both neighbours, each with its exact probability and\n"
	       "                  support. CSV: input,format,mode,bits,class,value,\n"
	       "                  value_hex,probability,interval,lo,lo_hex,lo_closed,hi,\n"
	       "                  hi_hex,hi_closed,rule,holds_input\n"
	       "  --raw PATTERN   decode a bit pattern instead: hex (0x7c00), binary\n"
	       "                  (0b0111110000000000) or binary grouped with spaces\n"
	       "  --csv           CSV: input,format,bits,sign,exponent_field,\n"
	       "                  fraction_field,class,value,exponent,ulp,prev_bits,prev,\n"
	       "                  next_bits,next\n"
	       "  -h, --help      this text\n\n"
	       "fp6 and fp4 have no inf and no NaN; FNUZ formats no -0 (0x80 is NaN); e8m0\n"
	       "is unsigned, 2^(bits - 127), with no zero (0xff is NaN). A VALUE a format\n"
	       "cannot hold (nan in fp4, 0 or a negative in e8m0) is an error when --format\n"
	       "names that format, and left out of that format otherwise.\n");
}

/* Parses a bit pattern for f: 0x.., 0b.., or 0/1 digits with spaces. */
static bool parse_pattern(const fmt_info *f, const char *text, uint32_t *out, char *err, size_t errlen)
{
	const char *p = text;
	while (isspace((unsigned char)*p))
		p++;
	uint64_t v = 0;
	int nbits = 0, ndigits = 0;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		for (p += 2; *p; p++) {
			if (isspace((unsigned char)*p) || *p == '_')
				continue;
			int d = isdigit((unsigned char)*p) ? *p - '0'
			      : (tolower((unsigned char)*p) >= 'a' && tolower((unsigned char)*p) <= 'f')
			        ? tolower((unsigned char)*p) - 'a' + 10 : -1;
			if (d < 0) {
				snprintf(err, errlen, "'%s': '%c' is not a hex digit", text, *p);
				return false;
			}
			if (++ndigits > 8) {
				snprintf(err, errlen, "'%s': more hex digits than a %d-bit %s pattern has", text,
				         f->width, f->name);
				return false;
			}
			v = v << 4 | (uint64_t)d;
		}
	} else {
		if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B'))
			p += 2;
		for (; *p; p++) {
			if (isspace((unsigned char)*p) || *p == '_' || *p == '.')
				continue;
			if (*p != '0' && *p != '1') {
				snprintf(err, errlen, "'%s': '%c' is not a binary digit (hex patterns start with 0x)",
				         text, *p);
				return false;
			}
			if (++nbits > 32) {
				snprintf(err, errlen, "'%s': more than 32 binary digits", text);
				return false;
			}
			v = v << 1 | (uint64_t)(*p - '0');
		}
		ndigits = nbits;
	}
	if (ndigits == 0) {
		snprintf(err, errlen, "'%s': no digits in the bit pattern", text);
		return false;
	}
	if (v > fmt_all_mask(f)) {
		snprintf(err, errlen, "'%s' has more than %d bits, the width of %s", text, f->width, f->name);
		return false;
	}
	*out = (uint32_t)v;
	return true;
}

static void field_bits(char *buf, uint32_t v, int n)
{
	for (int i = n - 1; i >= 0; i--)
		*buf++ = (char)('0' + ((v >> i) & 1));
	*buf = '\0';
}

static void print_value(char *buf, size_t n, double v)
{
	char exact[1200];
	numtext_exact(exact, sizeof exact, v);
	if (numtext_sig_digits(exact) > 40)
		snprintf(buf, n, "%.17g (exactly %s)", v, exact);
	else
		snprintf(buf, n, "%s", exact);
}

/* The fields line of a floating-point pattern. */
static void show_fields(const fmt_info *f, const fmt_decoded *d, const char *sbits, const char *ebits,
                        const char *fbits)
{
	printf("  fields     %s%s%sexponent %s = %u", sbits[0] ? "sign " : "", sbits, sbits[0] ? " | " : "", ebits,
	       d->exp_field);
	if (d->cls == FMT_CLASS_NORMAL)
		printf(" (2^%d)", d->exponent);
	else if (d->cls == FMT_CLASS_ZERO || d->cls == FMT_CLASS_SUBNORMAL)
		printf(" (subnormal range, 2^%d)", fmt_emin(f));
	if (f->frac_bits)
		printf(" | fraction %s = %u", fbits, d->frac_field);
	putchar('\n');
}

static void show(const fmt_info *f, const char *input, uint32_t bits, const fmt_num *x, fmt_mode mode,
                 bool csv, csvw *w)
{
	fmt_decoded d;
	fmt_decode(f, bits, &d);
	uint32_t prev = 0, next = 0;
	bool has_prev = fmt_next_down(f, bits, &prev), has_next = fmt_next_up(f, bits, &next);
	char sbits[40], ebits[40], fbits[40], hex[16], phex[16] = "", nhex[16] = "";
	char val[2048], pv[1200] = "", nv[1200] = "", ulp[1200] = "";
	field_bits(sbits, d.neg, fmt_has_sign(f) ? 1 : 0);
	field_bits(ebits, d.exp_field, f->exp_bits);
	field_bits(fbits, d.frac_field, fmt_is_int(f) ? f->width - 1 : f->frac_bits);
	snprintf(hex, sizeof hex, "0x%0*x", fmt_hex_digits(f), bits);
	if (has_prev) {
		snprintf(phex, sizeof phex, "0x%0*x", fmt_hex_digits(f), prev);
		numtext_exact(pv, sizeof pv, fmt_to_double(f, prev));
	}
	if (has_next) {
		snprintf(nhex, sizeof nhex, "0x%0*x", fmt_hex_digits(f), next);
		numtext_exact(nv, sizeof nv, fmt_to_double(f, next));
	}
	if (!isnan(d.ulp))
		numtext_exact(ulp, sizeof ulp, d.ulp);

	if (csv) {
		char exact[1200];
		csvw_field(w, input);
		csvw_field(w, f->name);
		csvw_field(w, hex);
		csvw_field(w, sbits);
		csvw_field(w, ebits);
		csvw_field(w, fbits);
		csvw_field(w, fmt_class_name(d.cls));
		csvw_field(w, numtext_exact(exact, sizeof exact, d.value));
		if (d.cls == FMT_CLASS_NAN || d.cls == FMT_CLASS_INF)
			csvw_field(w, "");
		else
			csvw_fieldf(w, "%d", d.cls == FMT_CLASS_NORMAL ? d.exponent : fmt_emin(f));
		csvw_field(w, ulp);
		csvw_field(w, phex);
		csvw_field(w, pv);
		csvw_field(w, nhex);
		csvw_field(w, nv);
		csvw_end_row(w);
		return;
	}

	print_value(val, sizeof val, d.value);
	if (x) {
		double ae, re;
		fmt_error_of(x, d.value, &ae, &re);
		printf("%s as %s (%s)%s", input, f->name, fmt_mode_name(mode), ae == 0 ? ": exact\n" : "\n");
		if (ae != 0 && !isnan(ae))
			printf("  rounded    to %s (abs error %.3e, rel error %.3e)\n", val, ae, re);
	} else {
		printf("%s as %s\n", input, f->name);
	}
	/* e8m0 has neither a sign nor a fraction field, an integer no exponent field */
	printf("  bits       %s = %s%s%s%s%s\n", hex, sbits, sbits[0] ? " " : "", ebits, fbits[0] && ebits[0] ? " " : "", fbits);
	if (fmt_is_int(f)) {   /* two's complement: the sign bit weighs -2^(width-1) */
		printf("  fields     two's complement: sign %s (worth -%u) | low bits %s = %u\n", sbits,
		       fmt_sign_mask(f), fbits, d.frac_field);
	} else {
		show_fields(f, &d, sbits, ebits, fbits);
	}
	printf("  class      %s\n", fmt_class_name(d.cls));
	printf("  value      %s\n", val);
	if (d.cls != FMT_CLASS_NAN && d.cls != FMT_CLASS_INF) {
		char half[1200];
		numtext_exact(half, sizeof half, d.ulp / 2);
		printf("  spacing    %s (ulp: gap to the next larger magnitude; an added amount\n"
		       "             smaller than %s, half of it, is rounded away under rne)\n", ulp, half);
	}
	printf("  prev       %s%s%s%s\n", has_prev ? pv : "none", has_prev ? " (" : "", phex, has_prev ? ")" : "");
	printf("  next       %s%s%s%s\n", has_next ? nv : "none", has_next ? " (" : "", nhex, has_next ? ")" : "");
}

/* Shows VALUE number i (from 0) in each format; false when it is bad or a
 * named format cannot hold it (reported). *first: nothing shown yet. */
static bool bits_value(const char *text, size_t i, const fmt_id *fmts, size_t nfmts, bool have_formats,
                       fmt_mode mode, bool saturate, bool csv, csvw *w, bool *first)
{
	char err[256];
	fmt_num x;
	fmt_num_init(&x);
	if (fmt_parse_number(&x, text, err, sizeof err) != MP_OK) {
		cli_error("bits", "value %zu: %s", i + 1, err);
		fmt_num_clear(&x);
		return false;
	}
	bool ok = true;
	for (size_t k = 0; k < nfmts; k++) {
		const fmt_info *f = fmt_get(fmts[k]);
		fmt_round_ctl ctl = { .mode = mode, .saturate = saturate };
		unsigned flags;
		uint32_t bits = fmt_round_num(f, &ctl, &x, &flags);
		if (flags & FMT_FLAG_INVALID) {
			/* asked for: an error; among all formats (no --format): left out */
			if (have_formats) {
				cli_error("bits", "value %zu: '%s' cannot be rounded to %s: %s %s", i + 1, text, f->name,
				          f->name,
				          fmt_invalid_reason(f, x.kind == NUM_NAN, x.kind == NUM_FINITE && mpq_sgn(x.mag) == 0,
				                             x.neg));
				ok = false;
			}
			continue;
		}
		if (!csv && !*first)
			putchar('\n');
		*first = false;
		show(f, text, bits, &x, mode, csv, w);
	}
	fmt_num_clear(&x);
	return ok;
}

int cmd_bits(int argc, char **argv)
{
	bits_opts o;
	char err[512];
	if (bits_opts_parse(argc, argv, &o, err, sizeof err) != MP_OK) {
		cli_error("bits", "%s", err);
		return CLI_USAGE;
	}
	if (o.help) {
		bits_help();
		return cli_flush_stdout("bits") ? CLI_OK : CLI_ENV;
	}
	if (o.interval)
		return cmd_bits_interval(&o);
	const fmt_id *fmts = o.fmts;
	bool csv = o.csv;
	csvw w;
	if (csv) {
		csvw_init(&w, stdout);
		csvw_header(&w, "input,format,bits,sign,exponent_field,fraction_field,class,value,exponent,"
		                "ulp,prev_bits,prev,next_bits,next");
	}
	int rc = CLI_OK;
	bool first = true;
	for (size_t i = 0; i < o.nraw; i++) {
		uint32_t bits;
		const fmt_info *f = fmt_get(fmts[0]);
		if (!parse_pattern(f, o.raws[i], &bits, err, sizeof err)) {
			cli_error("bits", "--raw: %s", err);
			rc = CLI_USAGE;
			continue;
		}
		if (!csv && !first)
			putchar('\n');
		first = false;
		show(f, o.raws[i], bits, NULL, o.mode, csv, &w);
	}
	for (size_t i = 0; i < o.nvalues; i++)
		if (!bits_value(o.values[i], i, fmts, o.nfmts, o.have_formats, o.mode, o.saturate, csv, &w,
		                &first))
			rc = CLI_USAGE;
	if (!cli_flush_stdout("bits"))
		return CLI_ENV;
	return rc;
}
