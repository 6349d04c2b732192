#include <math.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/intervals.h"
#include "util/csvout.h"
#include "util/numtext.h"

static void formats_help(void)
{
	printf("Usage: mixprec formats [--csv]\n"
	       "       mixprec formats --values FMT [--mode M [--saturate]] [--csv]\n"
	       "Prints the table of number formats: widths, bias, largest value, smallest\n"
	       "normal and subnormal values, machine epsilon (spacing at 1), decimal digits\n"
	       "(precision x log10 2) and whether the format has infinities. Below 8 bits:\n"
	       "fp6-e3m2, fp6-e2m3, fp4-e2m1 (OCP MX: no inf, no NaN, saturating); the FNUZ\n"
	       "fp8 formats (no -0, NaN 0x80); e8m0, the MX scale (unsigned powers of two,\n"
	       "no zero: its min_subnormal is empty). Then the two's complement integers\n"
	       "int8, int4, int2 (saturating; no exponent: min normal 1), ml_dtypes'\n"
	       "fp8-e3m4, fp8-e4m3-ieee (IEEE-like, with inf) and fp8-e4m3b11fnuz, and the\n"
	       "IEEE P3109 binary8 formats p3109-8p1..p3109-8p7 (signed extended: one NaN\n"
	       "0x80, no -0, inf 0x7f/0xff, bias 2^(7-P)) with the suffixes sf (signed\n"
	       "finite), ue and uf (unsigned extended and finite).\n\n"
	       "  --csv     CSV: name,bits,exponent_bits,fraction_bits,bias,max,min_normal,\n"
	       "            min_subnormal,epsilon,decimal_digits,has_inf (numbers read back\n"
	       "            exactly)\n"
	       "  --values FMT  every bit pattern of FMT (at most 16 bits): class, value as\n"
	       "            an exact decimal and a hex float\n"
	       "  --mode M  with --values: the reals that round to each value in mode M\n"
	       "            (%s),\n"
	       "            exact ends, each open ( ) or closed [ ], from the mode's\n"
	       "            definition (midpoints, ties, directions, round\n"
	       "            to odd); -0 lies just below 0, inf closes an end it rounds to;\n"
	       "            the reals that overflow go to inf, NaN or (saturating) max;\n"
	       "            sr, sr-equal: the support between the neighbours and the\n"
	       "            probability rule\n"
	       "  --saturate  with --mode: overflow and inf give +-max\n"
	       "  --values --csv: bits,class,value,value_hex, and with --mode\n"
	       "            interval,lo,lo_hex,lo_closed,hi,hi_hex,hi_closed,rule\n"
	       "  -h, --help  this text\n", fmt_mode_known());
}

/* "2^-126 = 1.18e-38"; "-" for NaN (e8m0 has no subnormals) */
static void pow2_text(char *buf, size_t n, double v)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "2^%d = %.3g", ilogb(v), v);
}

/* The specials column of the table. */
static const char *specials_text(const fmt_info *f)
{
	switch (f->specials) {
	case FMT_SPECIALS_IEEE: return "inf, NaN";
	case FMT_SPECIALS_FN:   return "no inf; NaN = S.1111.111";
	case FMT_SPECIALS_NONE: return "no inf, no NaN; saturates";
	case FMT_SPECIALS_FNUZ: return "no inf, no -0; NaN = 0x80";
	case FMT_SPECIALS_E8M0: return "unsigned, no zero; NaN = 0xff";
	case FMT_SPECIALS_INT:  return "integer; no inf, no NaN; saturates";
	case FMT_SPECIALS_P3109: return "no -0; NaN = 0x80, inf = 0x7f/0xff";
	case FMT_SPECIALS_P3109U: return "unsigned; inf = 0xfe, NaN = 0xff";
	case FMT_SPECIALS_P3109UF: return "unsigned, no inf; NaN = 0xff";
	}
	return "?";
}

int cmd_formats(int argc, char **argv)
{
	formats_opts o;
	char err[512];
	if (formats_opts_parse(argc, argv, &o, err, sizeof err) != MP_OK) {
		cli_error("formats", "%s", err);
		return CLI_USAGE;
	}
	if (o.help) {
		formats_help();
		return cli_flush_stdout("formats") ? CLI_OK : CLI_ENV;
	}
	if (o.values)
		return cmd_formats_values(&o);
	bool csv = o.csv;
	char a[64], b[64], d[64], e[64];
	if (csv) {
		csvw w;
		csvw_init(&w, stdout);
		csvw_header(&w, "name,bits,exponent_bits,fraction_bits,bias,max,min_normal,min_subnormal,"
		                "epsilon,decimal_digits,has_inf");
		for (int i = 0; i < FMT_COUNT; i++) {
			const fmt_info *f = fmt_get((fmt_id)i);
			csvw_field(&w, f->name);
			csvw_fieldf(&w, "%d", f->width);
			csvw_fieldf(&w, "%d", f->exp_bits);
			csvw_fieldf(&w, "%d", f->frac_bits);
			csvw_fieldf(&w, "%d", f->bias);
			csvw_field(&w, numtext_short(a, sizeof a, fmt_max(f)));
			csvw_field(&w, numtext_short(a, sizeof a, fmt_min_normal(f)));
			if (fmt_has_subnormals(f))
				csvw_field(&w, numtext_short(a, sizeof a, fmt_min_subnormal(f)));
			else
				csvw_field(&w, "");   /* e8m0: none */
			csvw_field(&w, numtext_short(a, sizeof a, fmt_epsilon(f)));
			csvw_fieldf(&w, "%.2f", fmt_decimal_digits(f));
			csvw_field(&w, fmt_has_inf(f) ? "yes" : "no");
			csvw_end_row(&w);
		}
	} else {
		int nw = 12;   /* the name column: as wide as the longest name */
		for (int i = 0; i < FMT_COUNT; i++)
			if ((int)strlen(fmt_get((fmt_id)i)->name) > nw)
				nw = (int)strlen(fmt_get((fmt_id)i)->name);
		printf("%-*s %4s %4s %5s %5s  %-11s %-20s %-20s %-7s %6s  %s\n", nw, "format", "bits", "exp",
		       "frac", "bias", "max", "min normal", "min subnormal", "epsilon", "digits", "inf/NaN");
		for (int i = 0; i < FMT_COUNT; i++) {
			const fmt_info *f = fmt_get((fmt_id)i);
			snprintf(a, sizeof a, "%.6g", fmt_max(f));
			pow2_text(b, sizeof b, fmt_min_normal(f));
			pow2_text(d, sizeof d, fmt_min_subnormal(f));
			snprintf(e, sizeof e, "2^%d", -f->frac_bits);
			printf("%-*s %4d %4d %5d %5d  %-11s %-20s %-20s %-7s %6.2f  %s\n", nw, f->name, f->width,
			       f->exp_bits, f->frac_bits, f->bias, a, b, d, e, fmt_decimal_digits(f), specials_text(f));
		}
		printf("\nvalue = (-1)^s x 2^(e - bias) x 1.f for normal numbers, "
		       "(-1)^s x 2^(1 - bias) x 0.f for subnormals;\n"
		       "e8m0 (the MX scale) is 2^(e - 127) for e = 0..254: no sign, no zero.\n");
	}
	return cli_flush_stdout("formats") ? CLI_OK : CLI_ENV;
}
