/* Exercise answers and teacher files: every accepted answer syntax, the
 * mistakes recognised and their tags across variants, and load errors named
 * with file:line while the rest of a file loads. Expected values are derived
 * by hand in the comments. */
#include <limits.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmt/decode.h"
#include "fmt/round.h"
#include "teach/exercise.h"
#include "teach/progress.h"
#include "ex_fixture.h"
#include "testutil.h"
#include "util/csvread.h"
#include "util/file.h"

static ex_verdict check(const ex_exercise *ex, const ex_solution *sol, const char *field, const char *answer,
                        char *fb, size_t n)
{
	int i = ex_field_index(ex, field);
	ck_assert(i >= 0);
	return ex_check(ex, sol, (size_t)i, answer, fb, n);
}

static void assert_verdict(const ex_exercise *ex, const ex_solution *sol, const char *field, const char *answer,
                           ex_verdict want, const char *feedback_has)
{
	char fb[1024];
	ex_verdict got = check(ex, sol, field, answer, fb, sizeof fb);
	ck_assert_msg(got == want, "%s %s=%s: verdict %d, want %d (%s)", ex->id, field, answer, got, want, fb);
	if (feedback_has)
		ck_assert_msg(strstr(fb, feedback_has), "%s %s=%s: feedback '%s' lacks '%s'", ex->id, field, answer, fb,
		              feedback_has);
}

/* bf16's next value up from w, from fp32 bits: w is a bf16 value, so its
 * fp32 pattern has 16 zero low bits; the next bf16 adds 1 << 16. */
static double bf16_gap(double w)
{
	float f = (float)w, n;
	uint32_t b;
	memcpy(&b, &f, 4);
	ck_assert_uint_eq(b & 0xffff, 0);
	b += 1u << 16;
	memcpy(&n, &b, 4);
	return (double)n - w;
}

/* ---- answers --------------------------------------------------------------------- */

/* One-word answers (yes/no, a format's name): case, punctuation and quotes
 * around the word, a reason after it, and what reads as two answers. */
START_TEST(answer_word_syntaxes)
{
	const ex_exercise *ex = get("7.4a");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);
	/* a one-word answer with its reason: the word counts, the reason is
	 * named as unchecked; without a separator it stays one (unknown) word */
	{
		char fb[1024];
		ex_verdict plain_yes = check(ex, &s, "fp16_flushes", "yes", fb, sizeof fb);
		ex_verdict plain_no = check(ex, &s, "fp16_flushes", "no", fb, sizeof fb);
		ck_assert(plain_yes != plain_no && plain_yes != EX_MALFORMED && plain_no != EX_MALFORMED);
		assert_verdict(ex, &s, "fp16_flushes", "Yes, it flushes to zero", plain_yes, "read as 'Yes'");
		assert_verdict(ex, &s, "fp16_flushes", "no - subnormals keep it", plain_no, "not checked");
		assert_verdict(ex, &s, "fp16_flushes", "no; too big to flush", plain_no, "read as 'no'");
		assert_verdict(ex, &s, "fp16_flushes", "no idea", EX_MALFORMED, "not one of");
		assert_verdict(ex, &s, "fp16_flushes", "maybe, not sure", EX_MALFORMED, "not one of");
		/* two answers, however the second is dressed */
		assert_verdict(ex, &s, "fp16_flushes", "no, yes", EX_MALFORMED, "two answers");
		assert_verdict(ex, &s, "fp16_flushes", "no, yes, it flushes", EX_MALFORMED, "two answers");
		assert_verdict(ex, &s, "fp16_flushes", "no; yes it does", EX_MALFORMED, "two answers");
		assert_verdict(ex, &s, "fp16_flushes", "no: yes: no", EX_MALFORMED, "two answers");
		char padded[400];
		snprintf(padded, sizeof padded, "no, yes%300s", "");
		assert_verdict(ex, &s, "fp16_flushes", padded, EX_MALFORMED, "two answers");
		/* a separator with nothing after it: no reason to mention */
		ck_assert(check(ex, &s, "fp16_flushes", "yes,", fb, sizeof fb) == plain_yes);
		ck_assert_msg(strstr(fb, "not checked") == NULL, "%s", fb);
		/* a long reason is fine */
		char longer[600];
		snprintf(longer, sizeof longer, "no: %0500d", 0);
		assert_verdict(ex, &s, "fp16_flushes", longer, plain_no, "not checked");
	}
	assert_verdict(ex, &s, "fp16_flushes", "Yes", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_flushes", "y", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_flushes", "maybe", EX_MALFORMED, NULL);
	/* what students type: sentence punctuation, quotes, other multiplication signs */
	assert_verdict(ex, &s, "fp16_flushes", "yes.", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_flushes", " YES! ", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_flushes", "\"yes\"", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_flushes", "'no'", EX_WRONG, NULL);
	assert_verdict(ex, &s, "fp16_flushes", "no, yes", EX_MALFORMED, NULL);
	{
		/* a cut of a long answer must not read as a word */
		char longans[200];
		snprintf(longans, sizeof longans, "yes%90sno", "");
		assert_verdict(ex, &s, "fp16_flushes", longans, EX_MALFORMED, "too long");
	}
	ex_solution_free(&s);

	ex = get("7.4d");
	solve_with(ex, NULL, NULL, &s);
	assert_verdict(ex, &s, "best", "FP32", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "best", "float32", EX_CORRECT, NULL);   /* an alias */
	assert_verdict(ex, &s, "worst", "bfloat16", EX_CORRECT, NULL);
	ex_solution_free(&s);
}
END_TEST

/* Numbers, bit patterns and sizes: powers, fractions, hex floats, the
 * digits a table shows, multiplication and minus signs, thousands
 * separators, binary and hex bits, percentages, units converted. */
START_TEST(answer_number_syntaxes)
{
	const ex_exercise *ex = get("7.4a");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);
	assert_verdict(ex, &s, "fp16_min_normal", "2^-14", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "6.104e-5", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "1/16384", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", " 0x1p-14 ", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "6.2e-5", EX_WRONG, NULL);
	/* the lesson's table gives three digits: 2^-14 = 6.10e-5, 2^-126 = 1.18e-38
	 * (1.1755e-38, 0.4% off); a truncated 1.17e-38 is as good; two digits are not */
	assert_verdict(ex, &s, "fp16_min_normal", "6.10e-5", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "bf16_min_normal", "1.18e-38", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp32_min_normal", "1.17e-38", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp32_min_normal", "1.2e-38", EX_WRONG, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "6e-5", EX_WRONG, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "six", EX_MALFORMED, NULL);
	/* G = 1e-8 itself is within 5e-3 of its bf16 value 172 x 2^-34 = 1.0012e-8 */
	assert_verdict(ex, &s, "bf16_stored", "1e-8", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "bf16_stored", "0", EX_WRONG, "kept");
	assert_verdict(ex, &s, "fp16_min_normal", "6.1 x 10^-5", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "6.1x10^-5", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "6.1\xC3\x97" "10^-5", EX_CORRECT, NULL);   /* U+00D7 */
	assert_verdict(ex, &s, "fp16_min_normal", "6.1 * 10^-5", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "2**-14", EX_CORRECT, NULL);   /* Python */
	assert_verdict(ex, &s, "fp16_min_normal", "2 ^ -14", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "2^(-14)", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "2^\xE2\x88\x92" "14", EX_CORRECT, NULL);   /* U+2212 minus */
	assert_verdict(ex, &s, "fp16_min_normal", "0.000061035", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "~6.1e-5", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "\xE2\x89\x88" " 6.1e-5", EX_CORRECT, NULL);   /* U+2248 */
	assert_verdict(ex, &s, "fp16_min_normal", "~~6.1e-5", EX_MALFORMED, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "0x1p-14", EX_CORRECT, NULL);   /* still a hex float */
	assert_verdict(ex, &s, "fp16_min_normal", "0x10^-14", EX_MALFORMED, NULL);
	assert_verdict(ex, &s, "fp16_min_normal", "6,1e-5", EX_MALFORMED, "decimal point");
	assert_verdict(ex, &s, "fp16_min_normal", "6.1e-5 GB", EX_MALFORMED, "plain number");
	ex_solution_free(&s);

	ex = get("7.4e");
	solve_with(ex, NULL, NULL, &s);
	assert_verdict(ex, &s, "steps", "65,536", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "steps", "2**16", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "steps", "65,53", EX_MALFORMED, "thousands");
	assert_verdict(ex, &s, "steps", "6,5536", EX_MALFORMED, "thousands");
	assert_verdict(ex, &s, "steps", "65,536,", EX_MALFORMED, NULL);
	ex_solution_free(&s);

	ex = get("7.4d");
	solve_with(ex, NULL, NULL, &s);
	assert_verdict(ex, &s, "bf16_bits", "0x3dcd", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "bf16_bits", "0X3DCD", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "bf16_bits", "0b0011110111001101", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "bf16_bits", "0011 1101 1100 1101", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "bf16_bits", "0 01111011 1001101", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "bf16_bits", "0x13dcd", EX_MALFORMED, NULL);
	assert_verdict(ex, &s, "bf16_bits", "0011 1101", EX_MALFORMED, NULL);
	assert_verdict(ex, &s, "bf16_bits", "0x3dcg", EX_MALFORMED, NULL);
	assert_verdict(ex, &s, "fp16_rel_error", "2.44e-4", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "fp16_rel_error", "0.0244%", EX_CORRECT, NULL);
	ex_solution_free(&s);

	ex = get("7.4c");
	solve_with(ex, NULL, NULL, &s);
	assert_verdict(ex, &s, "total_gb", "140", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "total_gb", "140 GB", EX_CORRECT, NULL);
	assert_verdict(ex, &s, "total_gb", "140GB", EX_CORRECT, NULL);
	/* 140e9 bytes = 130.385 GiB: correct when the unit says so */
	assert_verdict(ex, &s, "total_gb", "130.385 GiB", EX_CORRECT, "converted");
	assert_verdict(ex, &s, "bytes_per_param", "20 bytes", EX_CORRECT, NULL);
	/* 140e9 bytes, written in bytes: converted */
	assert_verdict(ex, &s, "total_gb", "1.4e11 bytes", EX_CORRECT, "converted");
	assert_verdict(ex, &s, "total_gb", "140,000,000,000 B", EX_CORRECT, "converted");
	assert_verdict(ex, &s, "total_gb", "1.4e11", EX_WRONG, NULL);
	ex_solution_free(&s);
}
END_TEST

/* A mistake keeps its tag across variants: the message carries each
 * variant's numbers, the tag does not, so grading can count one mistake
 * over a class whose numbers all differ. */
START_TEST(mistake_tags_match_across_variants)
{
	const ex_exercise *ex = get("7.4e");
	int f = ex_field_index(ex, "spacing"), fs = ex_field_index(ex, "steps");
	ck_assert(f >= 0 && fs >= 0);
	const char *tags[2], *sqrt_tags[2];
	char msgs[2][512];
	const double ws[2] = { 11.3125, 71 };
	for (int k = 0; k < 2; k++) {
		ex_solution s;
		char w[32];
		snprintf(w, sizeof w, "%.10g", ws[k]);
		solve_with(ex, "w", w, &s);
		/* twice the gap, by hand: bf16_gap (the next bf16 pattern up) */
		char a[64];
		snprintf(a, sizeof a, "%.10g", 2 * bf16_gap(ws[k]));
		ck_assert_int_eq(ex_check_tagged(ex, &s, (size_t)f, a, msgs[k], sizeof msgs[k], &tags[k]), EX_WRONG);
		/* sqrt(T) 2^-8 = 1 is T = 2^16; 2^8 forgets the square root */
		char fb[512];
		ck_assert_int_eq(ex_check_tagged(ex, &s, (size_t)fs, "256", fb, sizeof fb, &sqrt_tags[k]), EX_WRONG);
		const char *none = "x";
		ck_assert_int_eq(ex_check_tagged(ex, &s, (size_t)fs, "65536", fb, sizeof fb, &none), EX_CORRECT);
		ck_assert(none == NULL);
		ck_assert_int_eq(ex_check_tagged(ex, &s, (size_t)fs, "12345", fb, sizeof fb, &none), EX_WRONG);
		ck_assert(none == NULL);   /* wrong, but no mistake recognised */
		ck_assert_int_eq(ex_check_tagged(ex, &s, (size_t)fs, "many", fb, sizeof fb, &none), EX_MALFORMED);
		ck_assert(none == NULL);
		ex_solution_free(&s);
	}
	ck_assert(tags[0] != NULL && tags[0] == tags[1]);
	ck_assert(sqrt_tags[0] != NULL && sqrt_tags[0] == sqrt_tags[1] && sqrt_tags[0] != tags[0]);
}
END_TEST

START_TEST(mistakes_are_explained)
{
	const ex_exercise *ex = get("7.4a");
	ex_solution s;
	solve_with(ex, NULL, NULL, &s);
	/* min subnormal given for min normal */
	assert_verdict(ex, &s, "fp16_min_normal", "2^-24", EX_WRONG, "smallest subnormal");
	assert_verdict(ex, &s, "bf16_min_normal", "2^-14", EX_WRONG, "smallest normal of fp16");
	assert_verdict(ex, &s, "fp16_flushes", "no", EX_WRONG, "half the smallest");
	ex_solution_free(&s);

	ex = get("7.4c");
	solve_with(ex, NULL, NULL, &s);
	assert_verdict(ex, &s, "bytes_per_param", "16", EX_WRONG, "accumulator");
	assert_verdict(ex, &s, "total_gb", "112", EX_WRONG, "accumulator");
	/* 140e9 / 2^30 = 130.385: GiB given where GB is asked */
	assert_verdict(ex, &s, "total_gb", "130.4", EX_WRONG, "GiB");
	/* the reverse: 140 (the GB figure) where GiB is asked; 140e9 / 2^30 = 130.385 */
	assert_verdict(ex, &s, "total_gib", "140", EX_WRONG, "looks like GB");
	assert_verdict(ex, &s, "total_gib", "130.4", EX_CORRECT, NULL);
	ex_solution_free(&s);

	ex = get("7.4d");
	solve_with(ex, NULL, NULL, &s);
	/* truncating 0.1 to bf16 gives 0x3dcc: the other neighbour */
	assert_verdict(ex, &s, "bf16_bits", "0x3dcc", EX_WRONG, "other neighbour");
	assert_verdict(ex, &s, "fp16_bits", "0x2e67", EX_WRONG, "other neighbour");
	assert_verdict(ex, &s, "fp16_bits", "0x2a66", EX_WRONG, "exponent");
	assert_verdict(ex, &s, "bf16_rel_error", "9.765625e-5", EX_WRONG, "absolute error");
	ex_solution_free(&s);

	ex = get("7.4e");
	solve_with(ex, "w", "600", &s);
	assert_verdict(ex, &s, "steps", "256", EX_WRONG, "square");
	assert_verdict(ex, &s, "vanish_below", "4", EX_WRONG, "half");
	assert_verdict(ex, &s, "spacing", "4.6875", EX_WRONG, "epsilon");   /* 600 x 2^-7 */
	ex_solution_free(&s);

	ex = get("7.4b");
	solve_with(ex, NULL, NULL, &s);
	assert_verdict(ex, &s, "factor", "2^-16", EX_WRONG, "unscaling");
	ex_solution_free(&s);
}
END_TEST

/* ---- teacher files ------------------------------------------------------------------ */

static size_t load_text(const char *text, ex_set *set, ex_diags *d)
{
	memset(set, 0, sizeof *set);
	memset(d, 0, sizeof *d);
	ck_assert_int_eq(ex_load_text(set, "t.ex", text, strlen(text), d), MP_OK);
	return set->count;
}

static bool diag_has(const ex_diags *d, const char *s)
{
	for (size_t i = 0; i < d->count; i++)
		if (strstr(d->msgs[i], s))
			return true;
	return false;
}

/* Files from outside: a long path in a message, a UTF-8 byte-order mark
 * (Windows editors write one) and CRLF line ends. */
START_TEST(load_long_names_bom_crlf)
{
	static const char good[] = "[ok]\ntitle: T\nkind: spacing\nparam x: 600\nprompt: Spacing at {x}?\n"
	                           "field spacing: number rel 1e-6 -- gap\n";
	char name[1200];
	memset(name, 'd', sizeof name - 1);
	memcpy(name + sizeof name - 6, "/x.ex", 6);
	char text[1024];
	snprintf(text, sizeof text, "%s[b]\nbogus line\n", good);
	ex_set set = { 0 };
	ex_diags d = { 0 };
	ck_assert_int_eq(ex_load_text(&set, name, text, strlen(text), &d), MP_OK);
	ck_assert_uint_eq(set.count, 1);
	ck_assert_uint_ge(d.count, 1);
	ck_assert_msg(strstr(d.msgs[0], "/x.ex:8: expected 'key: value'"), "%s", d.msgs[0]);
	ck_assert_uint_lt(strlen(d.msgs[0]), 500);
	ex_set_free(&set);
	ex_diags_free(&d);

	snprintf(text, sizeof text, "\xEF\xBB\xBF%s", good);
	ck_assert_uint_eq(load_text(text, &set, &d), 1);
	ck_assert_msg(d.count == 0, "BOM: %s", d.count ? d.msgs[0] : "");
	ex_set_free(&set);
	ex_diags_free(&d);

	static const char crlf[] = "\xEF\xBB\xBF# comment\r\n[ok]\r\ntitle: T\r\nkind: spacing\r\nparam x: 600\r\n"
	                           "prompt: Spacing at {x}?\r\n  more\r\nfield spacing: number rel 1e-6 -- gap\r\n";
	ck_assert_uint_eq(load_text(crlf, &set, &d), 1);
	ck_assert_msg(d.count == 0, "CRLF: %s", d.count ? d.msgs[0] : "");
	ck_assert(!strchr(set.items[0].prompt, '\r'));
	ex_set_free(&set);
	ex_diags_free(&d);
}
END_TEST

START_TEST(load_errors_name_file_and_line)
{
	static const char good[] = "[ok]\ntitle: T\nkind: spacing\nparam x: 600\nprompt: Spacing at {x}?\n"
	                           "field spacing: number rel 1e-6 -- gap\n";
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "[a]\ntitle: T\nkind: nosuch\n", "t.ex:3: unknown kind 'nosuch'" },
		{ "[a]\nkind: spacing\nparam x: 1\nprompt: p\nfield spacing: number\n", "t.ex:1: exercise a has no title" },
		{ "[a]\ntitle: T\nkind: spacing\nparam x: 1\nprompt: p\nfield nope: number\n",
		  "t.ex:6: field nope: kind spacing cannot check it" },
		{ "[a]\ntitle: T\nkind: spacing\nprompt: p\nfield spacing: number\n", "needs a parameter 'x'" },
		{ "[a]\ntitle: T\nkind: spacing\nparam x: 1\nprompt: p {y}\nfield spacing: number\n", "{y}" },
		{ "[a]\ntitle: T\nkind: spacing\nparam x: 1\nprompt: p\nfield spacing: number rel banana\n",
		  "t.ex:6: field spacing: rel needs a non-negative number" },
		{ "[a]\ntitle: T\nkind: spacing\nvary x: list 1 2\n", "t.ex:4: vary x: declare it first" },
		{ "[a]\ntitle: T\nkind: spacing\nparam x: 0\nprompt: p\nfield spacing: number\n", "must not be 0" },
		{ "[a]\ntitle: T\nkind: spacing\nparam x: 1\nvary x: list 2 0\nprompt: p\nfield spacing: number\n",
		  "value 0 of x" },
		/* a range is checked at both ends: fp8-e4m3 stops at 448 */
		{ "[a]\ntitle: T\nkind: spacing\nparam x: 1\nparam format: fp8-e4m3\nvary x: range 1 1000\nprompt: p\n"
		  "field spacing: number\n",
		  "of x (an end of its range): parameter x is beyond fp8-e4m3's largest" },
		{ "[a b]\ntitle: T\n", "t.ex:1: 'a b' is not a valid exercise id" },
		{ "[a]\ntitle: T\ntitle: U\n", "t.ex:3: title given twice" },
		{ "[a]\ntitle: T\nkind: spacing\nparam x: 1\nprompt: p\nfield spacing: bits fp99\n",
		  "t.ex:6: field spacing: bits needs one format" },
		{ "[a]\ntitle: T\nkind: round-steps\nparam V: 0.1\nprompt: p\nfield fp16_fraction: bits 33\n",
		  "t.ex:6: field fp16_fraction: bits needs one format" },
		{ "[a]\ntitle: T\nkind: round-steps\nparam V: 0.1\nprompt: p\nfield fp16_fraction: bits 9\n",
		  "declare it as 'bits 10'" },
		{ "[a]\ntitle: T\nkind: round-steps\nparam V: 0.1\nprompt: p\nfield fp16_fraction: bits fp16\n",
		  "declare it as 'bits 10'" },
		{ "[a]\ntitle: T\nkind: round-steps\nparam V: 0.1\nprompt: p\nfield fp16_bits: bits 16\n",
		  "holds a format's bits" },
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		/* each broken exercise next to a good one: the good one still loads */
		char text[2048];
		snprintf(text, sizeof text, "%s%s", good, cases[k].text);
		ex_set set;
		ex_diags d;
		size_t n = load_text(text, &set, &d);
		ck_assert_msg(n == 1 && ex_find(&set, "ok"), "case %zu: %zu loaded", k, n);
		/* the good exercise takes 6 lines: shift the expected line number */
		char want[256];
		const char *colon = strncmp(cases[k].want, "t.ex:", 5) == 0 ? cases[k].want + 5 : NULL;
		if (colon)
			snprintf(want, sizeof want, "t.ex:%ld%s", strtol(colon, NULL, 10) + 6, strchr(colon, ':'));
		else
			snprintf(want, sizeof want, "%s", cases[k].want);
		ck_assert_msg(diag_has(&d, want), "case %zu: no diagnostic '%s' (got %s)", k, want,
		              d.count ? d.msgs[0] : "none");
		ex_set_free(&set);
		ex_diags_free(&d);
	}
	/* a duplicate id is reported at the second definition */
	char text[1024];
	snprintf(text, sizeof text, "%s%s", good, good);
	ex_set set;
	ex_diags d;
	ck_assert_uint_eq(load_text(text, &set, &d), 1);
	ck_assert(diag_has(&d, "t.ex:7: exercise ok is defined twice (first in t.ex:1)"));
	ex_set_free(&set);
	ex_diags_free(&d);
	/* text before the first exercise */
	ck_assert_uint_eq(load_text("title: T\n", &set, &d), 0);
	ck_assert(diag_has(&d, "t.ex:1: expected '[ID]' before the first definition"));
	ex_set_free(&set);
	ex_diags_free(&d);
	/* continuation lines and '.' for an empty line */
	ck_assert_uint_eq(load_text("[c]\ntitle: T\nkind: spacing\nparam x: 1\nprompt: one\n  two\n  .\n  three\n"
	                            "field spacing: number\n",
	                            &set, &d),
	                  1);
	ck_assert_str_eq(set.items[0].prompt, "one\ntwo\n\nthree");
	ex_set_free(&set);
	ex_diags_free(&d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("exercise_answers");
	TCase *tc = tcase_create("exercise_answers");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, load_shipped, free_shipped);
	tcase_add_test(tc, answer_word_syntaxes);
	tcase_add_test(tc, answer_number_syntaxes);
	tcase_add_test(tc, mistakes_are_explained);
	tcase_add_test(tc, mistake_tags_match_across_variants);
	tcase_add_test(tc, load_errors_name_file_and_line);
	tcase_add_test(tc, load_long_names_bom_crlf);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
