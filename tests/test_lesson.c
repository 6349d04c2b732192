/* Lessons: the Markdown document model on a sample written here, and the
 * real lessons' figures recomputed from the format table and the budget
 * model, so the text cannot drift from the engine. */
#include <ctype.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "budget/budget.h"
#include "fmt/decode.h"
#include "fmt/format.h"
#include "fmt/round.h"
#include "teach/lesson.h"
#include "testutil.h"

static const char sample[] =
	"# Title *one*\n"
	"\n"
	"Some **bold** and `code` text\n"
	"over two lines.\n"
	"\n"
	"1. first\n"
	"2. second\n"
	"   - nested\n"
	"\n"
	"```mixprec\n"
	"mixprec bits 600 --format bf16\n"
	"```\n"
	"\n"
	"| a | b |\n"
	"|---|---|\n"
	"| 1 | x y |\n"
	"\n"
	"---\n";

START_TEST(model_of_a_sample)
{
	lesson_doc d;
	ck_assert_int_eq(lesson_parse(&d, "s", sample, strlen(sample)), MP_OK);
	ck_assert_str_eq(d.title, "Title one");
	ck_assert_str_eq(d.name, "s");
	/* heading, paragraph, 2 items, nested item, code, 2 rows, rule */
	ck_assert_uint_eq(d.nblocks, 9);
	ck_assert(d.blocks[0].kind == LB_HEADING && d.blocks[0].level == 1);
	ck_assert(d.blocks[1].kind == LB_PARAGRAPH);
	ck_assert_str_eq(d.blocks[1].text, "Some bold and code text over two lines.");
	/* spans: "Some " plain, "bold" strong, " and " plain, "code" code, rest plain */
	ck_assert_uint_eq(d.blocks[1].nspans, 5);
	ck_assert(d.blocks[1].spans[1].style == LS_STRONG && !strcmp(d.blocks[1].spans[1].text, "bold"));
	ck_assert(d.blocks[1].spans[3].style == LS_CODE && !strcmp(d.blocks[1].spans[3].text, "code"));
	ck_assert(d.blocks[2].kind == LB_LIST_ITEM && d.blocks[2].number == 1 && d.blocks[2].level == 1);
	ck_assert_str_eq(d.blocks[2].text, "first");
	ck_assert(d.blocks[3].number == 2 && !strcmp(d.blocks[3].text, "second"));
	ck_assert(d.blocks[4].kind == LB_LIST_ITEM && d.blocks[4].level == 2 && d.blocks[4].number == 0);
	ck_assert(d.blocks[5].kind == LB_CODE && !strcmp(d.blocks[5].info, "mixprec"));
	ck_assert_str_eq(d.blocks[5].text, "mixprec bits 600 --format bf16\n");
	ck_assert(d.blocks[6].kind == LB_TABLE_ROW && d.blocks[6].header && d.blocks[6].ncells == 2);
	ck_assert(!d.blocks[7].header && !strcmp(d.blocks[7].cells[1], "x y"));
	ck_assert(d.blocks[8].kind == LB_RULE);

	/* plain text: the list numbered, the command with a prompt, the table aligned */
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	ck_assert(lesson_render_text(&d, 40, mem));
	fclose(mem);
	ck_assert_msg(strstr(buf, "Title one\n=========\n") != NULL, "%s", buf);
	ck_assert(strstr(buf, "1. first\n2. second\n  - nested\n") != NULL);
	ck_assert(strstr(buf, "    $ mixprec bits 600 --format bf16\n") != NULL);
	ck_assert(strstr(buf, "  a  b\n  -  ---\n  1  x y\n") != NULL);
	free(buf);
	lesson_free(&d);
}
END_TEST

START_TEST(wrapping)
{
	static const char text[] = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu\n";
	lesson_doc d;
	ck_assert_int_eq(lesson_parse(&d, NULL, text, strlen(text)), MP_OK);
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	lesson_render_text(&d, 40, mem);
	fclose(mem);
	/* every line fits 40 columns and no word is lost or split */
	ck_assert_str_eq(buf, "alpha beta gamma delta epsilon zeta eta\ntheta iota kappa lambda mu\n\n");
	free(buf);
	lesson_free(&d);
	/* a heading inside a list item (found by fuzz_lesson: the item was left
	 * without text); every block must have its text */
	static const char nested[] = "- # head\n  more\n- item\n\n> quote\n| a |\n|---|\n| 1 |\n";
	ck_assert_int_eq(lesson_parse(&d, "n", nested, strlen(nested)), MP_OK);
	for (size_t i = 0; i < d.nblocks; i++)
		ck_assert_msg(d.blocks[i].text != NULL, "block %zu has no text", i);
	mem = open_memstream(&buf, &len);
	ck_assert(lesson_render_text(&d, 40, mem));
	fclose(mem);
	free(buf);
	lesson_free(&d);
	/* hostile input: parsed or refused, never a crash; empty is an empty doc */
	ck_assert_int_eq(lesson_parse(&d, "e", "", 0), MP_OK);
	ck_assert_uint_eq(d.nblocks, 0);
	lesson_free(&d);
	char junk[512];
	for (size_t i = 0; i < sizeof junk; i++)
		junk[i] = "|#*`-_[]()<>!\n\t 1."[i * 7 % 18];
	if (lesson_parse(&d, "j", junk, sizeof junk) == MP_OK)
		lesson_free(&d);
}
END_TEST

/* Files too large or missing are refused with the path named (lessons are
 * capped at 4 MiB); one exactly at the cap loads. */
START_TEST(load_limits)
{
	char dir[] = "/tmp/mixprec-lesson-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char path[256], err[512];
	snprintf(path, sizeof path, "%s/big.md", dir);
	for (size_t size = (4u << 20) + 1; size >= (4u << 20); size--) {
		FILE *fp = fopen(path, "wb");
		ck_assert_ptr_nonnull(fp);
		for (size_t i = 0; i < size; i++)
			fputc(i % 80 == 79 ? '\n' : 'a', fp);
		fclose(fp);
		lesson_doc d;
		mp_status st = lesson_load(&d, path, err, sizeof err);
		if (size > (4u << 20)) {
			ck_assert_int_eq(st, MP_EINVAL);
			ck_assert_msg(strstr(err, "big.md") != NULL, "%s", err);
		} else {
			ck_assert_int_eq(st, MP_OK);
			ck_assert_str_eq(d.name, "big");
			lesson_free(&d);
		}
	}
	remove(path);
	rmdir(dir);
	lesson_doc d;
	ck_assert_int_eq(lesson_load(&d, "/nonexistent/x.md", err, sizeof err), MP_EIO);
	ck_assert(strstr(err, "/nonexistent/x.md") != NULL);
}
END_TEST

/* --- the real lessons --- */

static void load(lesson_doc *d, const char *name)
{
	char path[4096], err[4200];
	snprintf(path, sizeof path, "%s/lessons/%s.md", testutil_srcdir(), name);
	ck_assert_msg(lesson_load(d, path, err, sizeof err) == MP_OK, "%s", err);
}

/* The whole text of a lesson, blocks joined by newlines. */
static char *all_text(const lesson_doc *d)
{
	size_t n = 1;
	for (size_t i = 0; i < d->nblocks; i++)
		n += strlen(d->blocks[i].text) + 1;
	char *s = calloc(n, 1);
	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < d->nblocks; i++) {
		strcat(s, d->blocks[i].text);
		strcat(s, "\n");
	}
	return s;
}

/* "3.40e38" or "65504" against v to the three significant digits written. */
static bool same_3sig(const char *cell, double v)
{
	char *end;
	double x = strtod(cell, &end);
	if (end == cell)
		return false;
	char want[32], got[32];
	snprintf(want, sizeof want, "%.2e", v);
	snprintf(got, sizeof got, "%.2e", x);
	return !strcmp(want, got);
}

/* "2^-126 = 1.18e-38": the exponent exactly, the decimal to 3 digits. */
static bool same_pow2(const char *cell, double v)
{
	int k;
	char dec[64] = "";
	if (sscanf(cell, "2^%d = %63s", &k, dec) != 2)
		return false;
	return ldexp(1.0, k) == v && same_3sig(dec, v);
}

/* lesson_list: course order from ORDER (CRLF line, an unknown name, the
 * unlisted lessons after, by name), plain name order without it. */
static void write_text(const char *dir, const char *file, const char *text)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	FILE *fp = fopen(path, "wb");
	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	fclose(fp);
}

static void expect_list(const char *dir, const char *want)
{
	char **names, got[256] = "";
	size_t n;
	ck_assert_int_eq(lesson_list(dir, &names, &n), MP_OK);
	for (size_t i = 0; i < n; i++) {
		strcat(got, i ? " " : "");
		strcat(got, names[i]);
		free(names[i]);
	}
	free(names);
	ck_assert_str_eq(got, want);
}

START_TEST(list_in_course_order)
{
	char dir[] = "/tmp/mixprec-lesson-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	const char *files[] = { "b.md", "a.md", "d.md", "c.md", "README.md" };
	for (size_t i = 0; i < 5; i++)
		write_text(dir, files[i], "# T\n");
	expect_list(dir, "a b c d");
	write_text(dir, "ORDER", "c\nmissing\na\r\n");
	expect_list(dir, "c a b d");
	char path[256];
	for (size_t i = 0; i < 5; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof path, "%s/ORDER", dir);
	unlink(path);
	rmdir(dir);
}
END_TEST

START_TEST(format_table_matches_engine)
{
	lesson_doc d;
	load(&d, "mixed-precision");
	int table = -1;
	size_t rows = 0;
	for (size_t i = 0; i < d.nblocks; i++) {
		const lesson_block *b = &d.blocks[i];
		if (b->kind != LB_TABLE_ROW)
			continue;
		if (b->header) {
			table = b->ncells == 10 && !strcmp(b->cells[0], "format") ? b->table : -1;
			if (table >= 0) {
				static const char *const head[] = { "format", "bits", "exponent", "fraction", "bias", "max",
					"min normal", "min subnormal", "epsilon", "decimal digits" };
				for (size_t c = 0; c < 10; c++)
					ck_assert_str_eq(b->cells[c], head[c]);
			}
			continue;
		}
		if (b->table != table)
			continue;
		const fmt_info *f = fmt_find(b->cells[0]);
		ck_assert_msg(f != NULL, "unknown format '%s' in the table", b->cells[0]);
		ck_assert_int_eq(atoi(b->cells[1]), f->width);
		ck_assert_int_eq(atoi(b->cells[2]), f->exp_bits);
		ck_assert_int_eq(atoi(b->cells[3]), f->frac_bits);
		ck_assert_int_eq(atoi(b->cells[4]), f->bias);
		ck_assert_msg(same_3sig(b->cells[5], fmt_max(f)), "%s max '%s'", f->name, b->cells[5]);
		ck_assert_msg(same_pow2(b->cells[6], fmt_min_normal(f)), "%s min normal '%s'", f->name, b->cells[6]);
		ck_assert_msg(same_pow2(b->cells[7], fmt_min_subnormal(f)), "%s min subnormal '%s'", f->name,
		              b->cells[7]);
		int e;
		ck_assert(sscanf(b->cells[8], "2^%d", &e) == 1 && ldexp(1.0, e) == fmt_epsilon(f));
		char digits[16];
		snprintf(digits, sizeof digits, "%.2f", fmt_decimal_digits(f));
		ck_assert_msg(!strcmp(b->cells[9], digits), "%s digits '%s' vs %s", f->name, b->cells[9], digits);
		rows++;
	}
	ck_assert_msg(rows >= 3, "the format table has %zu rows", rows);
	lesson_free(&d);
}
END_TEST

START_TEST(prose_figures_match_engine)
{
	lesson_doc d;
	load(&d, "mixed-precision");
	char *text = all_text(&d);
	budget_config cfg = budget_defaults();
	budget_result r;
	char want[64];
	/* 20 bytes per parameter; 7e9 and LLaMA-7B's 6.7e9 in GB */
	cfg.params = 7e9;
	ck_assert_int_eq(budget_compute(&r, &cfg), MP_OK);
	snprintf(want, sizeof want, "%.0f GB", r.total_bytes / 1e9);
	ck_assert_msg(strstr(text, want), "lesson lacks '%s'", want);
	snprintf(want, sizeof want, "%.0f bytes", r.total_bytes / cfg.params);
	ck_assert_msg(strstr(text, want), "lesson lacks '%s'", want);
	/* LLaMA-7B's exact count (its config: 32 layers of 4096, vocabulary
	 * 32000, MLP 11008): 6,738,415,616 parameters, 134.8 GB at 20 bytes */
	double llama = 32000.0 * 4096 * 2 + 32 * (4.0 * 4096 * 4096 + 3.0 * 4096 * 11008 + 2 * 4096) + 4096;
	ck_assert(llama == 6738415616.0);
	ck_assert_msg(strstr(text, "6,738,415,616"), "lesson lacks LLaMA-7B's parameter count");
	snprintf(want, sizeof want, "%.1f GB", llama * 20 / 1e9);
	ck_assert_msg(strstr(text, want), "lesson lacks '%s'", want);
	/* GPT-2 small in bf16 mixed precision: 124M x 20 bytes */
	snprintf(want, sizeof want, "%.2f GB", 124e6 * 20 / 1e9);
	ck_assert_msg(strstr(text, want), "lesson lacks '%s'", want);
	/* GPT-3's fp32 weights */
	snprintf(want, sizeof want, "%.0f GB", 175e9 * fmt_get(FMT_FP32)->width / 8 / 1e9);
	ck_assert_msg(strstr(text, want), "lesson lacks '%s'", want);
	/* fp16's largest value and smallest normal, as the text names them */
	ck_assert(strstr(text, "65504"));
	free(text);
	lesson_free(&d);

	/* the lesson on state across steps: sqrt(T) * 2^-8 = 1 at T = 2^16 */
	load(&d, "fp32-state");
	text = all_text(&d);
	ck_assert_msg(strstr(text, "65,536") || strstr(text, "65536"), "lesson lacks 65,536");
	free(text);
	lesson_free(&d);

	/* the drift lesson: the bf16 spacing at 600 and the update that vanishes */
	load(&d, "residual-drift");
	text = all_text(&d);
	const fmt_info *bf = fmt_get(FMT_BF16);
	fmt_round_ctl ctl = { .mode = FMT_RNE };
	fmt_decoded dec;
	fmt_decode(bf, fmt_round_double(bf, &ctl, 600.0, NULL), &dec);
	bool found = false;
	for (size_t i = 0; i < d.nblocks && !found; i++) {
		const char *t = d.blocks[i].text;
		char spacing[32], half[32];
		snprintf(spacing, sizeof spacing, "%g", dec.ulp);
		snprintf(half, sizeof half, "%g", dec.ulp / 2);
		found = strstr(t, "600") && strstr(t, "spacing") && strstr(t, spacing) && strstr(t, half);
	}
	ck_assert_msg(found, "no paragraph states the bf16 spacing %g at 600 and the %g that vanishes", dec.ulp,
	              dec.ulp / 2);
	free(text);
	lesson_free(&d);
}
END_TEST

/* Every ```mixprec block holds commands of the real program. */
START_TEST(commands_exist)
{
	const char *bin = getenv("MIXPREC");
	ck_assert_msg(bin != NULL, "MIXPREC (the built program) is not set: run through make check");
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "'%s' --help", bin);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	char help[8192];
	size_t n = fread(help, 1, sizeof help - 1, p);
	help[n] = '\0';
	pclose(p);
	static const char *const lessons[] = { "mixed-precision", "fp32-state", "residual-drift", "low-precision",
	                                       "rounding-rules", "low-precision-training", "frontier" };
	size_t checked = 0;
	for (size_t l = 0; l < sizeof lessons / sizeof lessons[0]; l++) {
		lesson_doc d;
		load(&d, lessons[l]);
		for (size_t i = 0; i < d.nblocks; i++) {
			const lesson_block *b = &d.blocks[i];
			if (b->kind != LB_CODE || !b->info || strcmp(b->info, "mixprec"))
				continue;
			char sub[64];
			ck_assert_msg(sscanf(b->text, "mixprec %63s", sub) == 1, "%s: block '%s'", lessons[l], b->text);
			char needle[80];
			snprintf(needle, sizeof needle, "\n  %s ", sub);
			ck_assert_msg(strstr(help, needle), "%s: '%s' is not a mixprec command", lessons[l], sub);
			checked++;
		}
		lesson_free(&d);
	}
	ck_assert_msg(checked >= 6, "only %zu runnable commands in the lessons", checked);
}
END_TEST

/* --- the mechanisms the lessons teach, with oracles written here --- */

/* fp32 to bf16, round to nearest even, by bit manipulation (finite x). */
static float bf16_rne(float x)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	u += 0x7fffu + ((u >> 16) & 1u);
	u &= 0xffff0000u;
	memcpy(&x, &u, 4);
	return x;
}

/* Adam's v in bf16 with beta2 = 0.999 and g^2 = 1 stalls at 0.25: the
 * increment (1 - b)(1 - 0.25) = 0.00075 is below half the spacing 2^-10. */
START_TEST(adam_v_stalls_in_bf16)
{
	volatile float b = 0.999f, one = 1.0f;
	float c = one - b;   /* fl32(1 - b) */
	float v = 0.0f;
	int steps = 0;
	for (; steps < 100000; steps++) {
		float bv = b * v, cg = c * 1.0f;
		float next = bf16_rne(bv + cg);
		if (next == v)
			break;
		v = next;
	}
	ck_assert_msg(v == 0.25f, "v stalls at %.9g", v);
	/* within a few hundred steps, as the lesson says (1 - 0.999^n = 0.25 at n = 288) */
	ck_assert_msg(steps >= 100 && steps < 1000, "stalled after %d steps", steps);
	ck_assert(0.001 * 0.75 < ldexp(1.0, -10));
	/* the lesson's single step: 0.25075 rounds back to 0.25, 0.25098 would not */
	ck_assert(bf16_rne(0.25075f) == 0.25f && bf16_rne(0.2510f) != 0.25f);
	/* the library's bf16 agrees with this oracle on the stall value's neighbourhood */
	const fmt_info *bf = fmt_get(FMT_BF16);
	fmt_round_ctl ctl = { .mode = FMT_RNE };
	for (float x = 0.24f; x < 0.26f; x += 0.0001f) {
		fmt_decoded dec;
		fmt_decode(bf, fmt_round_double(bf, &ctl, x, NULL), &dec);
		ck_assert_msg(dec.value == bf16_rne(x), "%.9g", x);
	}
}
END_TEST

/* Stochastic rounding of 600.5 into bf16: 604 with probability 1/8, else
 * 600; the error has mean 0 and standard deviation 4 sqrt(7/64) = 1.3229. */
START_TEST(sr_error_of_600_5)
{
	double exact_sd = 4 * sqrt(7.0 / 64);
	ck_assert(fabs(exact_sd - 1.3229) < 1e-4);
	const fmt_info *bf = fmt_get(FMT_BF16);
	double sum = 0, sum2 = 0;
	size_t n = 200000, up = 0;
	uint64_t state = 0x9e3779b97f4a7c15u;
	for (size_t i = 0; i < n; i++) {
		state = state * 6364136223846793005u + 1442695040888963407u;
		fmt_round_ctl ctl = { .mode = FMT_SR, .rbits = (uint32_t)(state >> 32) };
		fmt_decoded dec;
		fmt_decode(bf, fmt_round_double(bf, &ctl, 600.5, NULL), &dec);
		ck_assert(dec.value == 600 || dec.value == 604);
		up += dec.value == 604;
		double e = dec.value - 600.5;
		sum += e;
		sum2 += e * e;
	}
	double mean = sum / (double)n, sd = sqrt(sum2 / (double)n - mean * mean);
	/* 5 standard errors: 4*sqrt(p(1-p)/n) for the share, sd/sqrt(n) for the mean */
	ck_assert_msg(fabs((double)up / (double)n - 0.125) < 5 * sqrt(0.125 * 0.875 / (double)n), "up %zu", up);
	ck_assert_msg(fabs(mean) < 5 * exact_sd / sqrt((double)n), "mean %g", mean);
	ck_assert_msg(fabs(sd - exact_sd) < 0.01, "sd %g", sd);
}
END_TEST

/* A lesson's control bytes never reach the terminal; block lines are the
 * file's. */
START_TEST(sanitised_and_located)
{
	static const char text[] = "# T\x1b[2J\n\nesc \x1b[31mred\x07 \xc2\x9b" "6n\n\n```mixprec\nmixprec bits 1\x1b]0;x\n```\n\n```claims\nx[y] = 1 +- 0\n```\n";
	lesson_doc d;
	ck_assert_int_eq(lesson_parse(&d, "s", text, strlen(text)), MP_OK);
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	ck_assert(lesson_render_text(&d, 80, mem));
	fclose(mem);
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)buf[i];
		ck_assert_msg(ch == '\n' || (ch >= 0x20 && ch != 0x7f), "byte 0x%02x at %zu", ch, i);
		ck_assert_msg(!(ch == 0xc2 && (unsigned char)buf[i + 1] >= 0x80 && (unsigned char)buf[i + 1] <= 0x9f), "C1 at %zu", i);
	}
	ck_assert_msg(strstr(buf, "esc ?[31mred? ?6n") != NULL, "%s", buf);
	/* claims blocks are for the checker, not the learner */
	ck_assert_msg(strstr(buf, "x[y]") == NULL, "%s", buf);
	free(buf);
	ck_assert(d.blocks[0].kind == LB_HEADING && d.blocks[0].line == 1);
	ck_assert(d.blocks[1].kind == LB_PARAGRAPH && d.blocks[1].line == 3);
	ck_assert(d.blocks[2].kind == LB_CODE && d.blocks[2].line == 6);
	ck_assert(d.blocks[3].kind == LB_CODE && d.blocks[3].line == 10 && !strcmp(d.blocks[3].info, "claims"));
	lesson_free(&d);
}
END_TEST

static Suite *lesson_suite(void)
{
	Suite *s = suite_create("lesson");
	TCase *tc = tcase_create("lesson");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, model_of_a_sample);
	tcase_add_test(tc, wrapping);
	tcase_add_test(tc, load_limits);
	tcase_add_test(tc, list_in_course_order);
	tcase_add_test(tc, format_table_matches_engine);
	tcase_add_test(tc, prose_figures_match_engine);
	tcase_add_test(tc, commands_exist);
	tcase_add_test(tc, adam_v_stalls_in_bf16);
	tcase_add_test(tc, sr_error_of_600_5);
	tcase_add_test(tc, sanitised_and_located);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(lesson_suite());
}
