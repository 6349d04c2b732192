#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/cli.h"
#include "fmt/parse.h"
#include "fmt/round.h"
#include "config.h"

static const cli_command commands[] = {
	{ .name = "lesson",  .run = cmd_lesson,  .summary = "list the lessons, or print one as plain text" },
	{ .name = "formats", .run = cmd_formats, .summary = "the table of number formats" },
	{ .name = "bits",    .run = cmd_bits,    .summary = "bit layout, class, value, spacing and neighbours of values" },
	{ .name = "round",   .run = cmd_round,   .summary = "round values exactly into formats, in any rounding mode" },
	{ .name = "quantize", .run = cmd_quantize, .summary = "block-scaled quantization (MXFP8/6/4, NVFP4): scales and elements" },
	{ .name = "drift",   .run = cmd_drift,   .summary = "residual drift: small updates to a large value in fp32, bf16, fp16" },
	{ .name = "train",   .run = cmd_train,   .summary = "train the tiny GPT under precision policies side by side" },
	{ .name = "gradhist", .run = cmd_gradhist, .summary = "gradient magnitudes against fp16/bf16 limits at a loss scale" },
	{ .name = "exercise", .run = cmd_exercise, .summary = "list exercises, show a student's variant, hints, worked solutions" },
	{ .name = "check",   .run = cmd_check,   .summary = "check answers to an exercise and explain the wrong ones" },
	{ .name = "lab",     .run = cmd_lab,     .summary = "classroom lab: a sheet and answer template per student of a roster" },
	{ .name = "grade",   .run = cmd_grade,   .summary = "grade submissions of a classroom lab, with a class summary" },
	{ .name = "budget", .run = cmd_budget, .summary = "training memory per parameter, per component and per GPU" },
	{ .name = "plot",    .run = cmd_plot,    .summary = "plot a CSV mixprec wrote, in the terminal or as a PNG/SVG image" },
	{ .name = "bench",   .run = cmd_bench,   .summary = "throughput benchmarks, as ratios to a baseline of the same run" },
	{ .name = "tui",     .run = cmd_tui,     .summary = "the interactive workbench (what 'mixprec' alone starts)" },
};

void cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fprintf(stderr, "mixprec%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *fp)
{
	fprintf(fp,
	        "Usage: mixprec [COMMAND] [OPTIONS]\n"
	        "A workbench for learning mixed-precision training: number formats, exact\n"
	        "rounding, and the experiments behind the lessons.\n\n"
	        "Commands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(fp, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(fp,
	        "\n'mixprec COMMAND --help' describes a command; 'man mixprec' has the details.\n"
	        "Options:\n"
	        "  -h, --help     this text\n"
	        "  -V, --version  the version\n\n"
	        "Exit status: 0 success, 1 a checked answer is wrong, 2 bad usage or input,\n"
	        "3 environment failure (I/O error, unreadable file, missing device).\n");
}

int cli_main(int argc, char **argv)
{
	if (argc < 2) {
		/* no command: the interactive workbench (it refuses without a terminal) */
		char name[] = "tui";
		char *tui_argv[] = { name, NULL };
		return cmd_tui(1, tui_argv);
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		usage(stdout);
		return cli_flush_stdout(NULL) ? CLI_OK : CLI_ENV;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		printf("mixprec %s\n", PACKAGE_VERSION);
		return cli_flush_stdout(NULL) ? CLI_OK : CLI_ENV;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		if (strcmp(cmd, commands[i].name))
			continue;
		/* a NULL-terminated copy that getopt may permute freely */
		char **args = calloc((size_t)argc + 1, sizeof *args);
		if (!args) {
			cli_error(cmd, "out of memory");
			return CLI_ENV;
		}
		memcpy(args, argv + 1, (size_t)(argc - 1) * sizeof *args);
		int rc = commands[i].run(argc - 1, args);
		free(args);
		return rc;
	}
	cli_error(NULL, "unknown command '%s' (see 'mixprec --help')", cmd);
	return CLI_USAGE;
}

/* A negative number as typed on a command line: "-" followed by a digit, a
 * point, or inf/nan. */
static bool is_negative_number(const char *s)
{
	if (s[0] != '-' || !s[1])
		return false;
	if ((s[1] >= '0' && s[1] <= '9') || s[1] == '.')
		return true;
	return !strncasecmp(s + 1, "inf", 3) || !strncasecmp(s + 1, "nan", 3);
}

int cli_option_error(const char *cmd, int c, char **argv)
{
	if (c == ':')
		cli_error(cmd, "option '%s' needs a value", argv[optind - 1]);
	else
		cli_error(cmd, "unknown option '%s' (see 'mixprec %s --help')", argv[optind - 1], cmd);
	return CLI_USAGE;
}

int cli_getopt(cli_args *a, int argc, char **argv, const struct option *opts, char **value)
{
	if (!a->started) {
		optind = 1;
		opterr = 0;
		a->started = true;
		a->rest = false;
	}
	for (;;) {
		if (optind >= argc)
			return -1;
		char *arg = argv[optind];
		if (a->rest || is_negative_number(arg) || arg[0] != '-' || arg[1] == '\0') {
			*value = arg;
			optind++;
			return CLI_ARG_VALUE;
		}
		if (!strcmp(arg, "--")) {
			a->rest = true;
			optind++;
			continue;
		}
		/* '+': stop at the first non-option, so values keep their order */
		int c = getopt_long(argc, argv, "+:h", opts, NULL);
		if (c != -1)
			return c;
	}
}

void cli_print_formats(int indent)
{
	int col = 0;
	for (int i = 0; i < FMT_COUNT; i++) {
		const char *name = fmt_get((fmt_id)i)->name;
		int len = (int)strlen(name) + (i + 1 < FMT_COUNT ? 1 : 0);
		if (col > 0 && col + 1 + len > 79) {
			putchar('\n');
			col = 0;
		}
		col += col == 0 ? printf("%*s", indent, "") : printf(" ");
		col += printf("%s%s", name, i + 1 < FMT_COUNT ? "," : "");
	}
	putchar('\n');
}

bool cli_parse_formats(const char *cmd, const char *opt, const char *list, fmt_id *ids, size_t *count)
{
	const char *bad = NULL;
	mp_status st = fmt_parse_list(list, ids, FMT_COUNT * 4, count, &bad);
	if (st == MP_EFORMAT) {
		cli_error(cmd, "%s: unknown format '%s' (known: %s)", opt, bad, fmt_known_names());
		return false;
	}
	if (st != MP_OK) {
		cli_error(cmd, "%s: too many formats in '%s'", opt, list);
		return false;
	}
	return true;
}

bool cli_parse_mode(const char *cmd, const char *text, fmt_mode *mode)
{
	if (fmt_mode_parse(text, mode) != MP_OK) {
		cli_error(cmd, "--mode: unknown rounding mode '%s' (known: %s)", text, fmt_mode_known());
		return false;
	}
	return true;
}

/* The exact value of text in the full number syntax; reported when bad. */
static bool parse_exact(const char *cmd, const char *opt, const char *text, fmt_num *x)
{
	char err[300];
	if (fmt_parse_number(x, text, err, sizeof err) != MP_OK) {
		cli_error(cmd, "%s: %s", opt, err);
		return false;
	}
	if (x->kind == NUM_NAN) {
		cli_error(cmd, "%s: '%s' is not a number (nan)", opt, text);
		return false;
	}
	return true;
}

bool cli_parse_u64(const char *cmd, const char *opt, const char *text, unsigned long long *v)
{
	char *end;
	errno = 0;
	/* plain decimal digits first (no sign, no blanks: strtoull would accept
	 * them; base 10, so that 010 is ten, not octal eight; 0x.. goes below) */
	if (*text >= '0' && *text <= '9' && !(text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))) {
		*v = strtoull(text, &end, 10);
		if (!errno && !*end)
			return true;
	}
	fmt_num x;
	fmt_num_init(&x);
	bool ok = parse_exact(cmd, opt, text, &x);
	if (ok && (x.kind == NUM_INF || (x.neg && mpq_sgn(x.mag) != 0))) {
		cli_error(cmd, "%s: %s is out of range (0 to 2^64-1)", opt, text);
		ok = false;
	} else if (ok && mpz_cmp_ui(mpq_denref(x.mag), 1) != 0) {
		cli_error(cmd, "%s: %s is not a whole number", opt, text);
		ok = false;
	} else if (ok && mpz_sizeinbase(mpq_numref(x.mag), 2) > 64) {
		cli_error(cmd, "%s: %s is out of range (0 to 2^64-1)", opt, text);
		ok = false;
	} else if (ok) {
		unsigned long long r = 0;
		size_t n = 0;
		mpz_export(&r, &n, -1, sizeof r, 0, 0, mpq_numref(x.mag));
		*v = n ? r : 0;
	}
	fmt_num_clear(&x);
	return ok;
}

bool cli_parse_real(const char *cmd, const char *opt, const char *text, double lo, bool lo_open, double hi,
                    double *v)
{
	fmt_num x;
	fmt_num_init(&x);
	bool ok = parse_exact(cmd, opt, text, &x);
	if (ok) {
		*v = fmt_num_to_double(&x);
		if ((lo_open ? !(*v > lo) : !(*v >= lo)) || !(*v <= hi)) {
			char l[40], h[40];
			snprintf(l, sizeof l, "%g", lo);
			snprintf(h, sizeof h, "%g", hi);
			if (lo_open && !(*v > lo) && *v <= hi)
				cli_error(cmd, "%s: %s is out of range (it must be greater than %s)", opt, text, l);
			else
				cli_error(cmd, "%s: %s is out of range (%s%s to %s)", opt, text, lo_open ? "above " : "", l, h);
			ok = false;
		}
	}
	fmt_num_clear(&x);
	return ok;
}

bool cli_out_open(const char *cmd, const char *opt, const char *path, file_atomic *a, FILE **fp)
{
	char err[4400];
	memset(a, 0, sizeof *a);
	if (!strcmp(path, "-")) {
		*fp = stdout;
		return true;
	}
	if (file_atomic_open(a, path, err, sizeof err) != MP_OK) {
		cli_error(cmd, "%s: cannot write %s", opt, err);
		*fp = NULL;
		return false;
	}
	*fp = a->fp;
	return true;
}

bool cli_out_close(const char *cmd, const char *opt, file_atomic *a, FILE *fp, bool ok)
{
	char err[4400];
	if (!fp || fp == stdout)
		return true;
	if (!ok) {
		file_atomic_abort(a);
		return true;
	}
	if (file_atomic_commit(a, err, sizeof err) != MP_OK) {
		cli_error(cmd, "%s: writing %s", opt, err);
		return false;
	}
	return true;
}

/* A course seed that lab new writes on sheets, inside Markdown code spans
 * and into a shell command for the students to copy: ASCII letters, digits
 * and ._@:+=,/- only, not starting with '-', at most 128 characters. where
 * names the source in the message. */
bool cli_course_seed_printable(const char *cmd, const char *where, const char *text)
{
	size_t n = strlen(text);
	if (n == 0 || n > 128) {
		cli_error(cmd, "%s: give a seed of 1 to 128 characters", where);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)text[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (!alnum && (c == 0 || !strchr("._@:+=,/-", c))) {
			if (c > 0x20 && c < 0x7f)
				cli_error(cmd, "%s: '%c' is not allowed in a seed (letters, digits and ._@:+=,/- only)", where, c);
			else
				cli_error(cmd, "%s: byte 0x%02x is not allowed in a seed (letters, digits and ._@:+=,/- only)",
				          where, c);
			return false;
		}
	}
	if (text[0] == '-') {
		cli_error(cmd, "%s: a seed may not start with '-'", where);
		return false;
	}
	return true;
}

bool cli_flush_stdout(const char *cmd)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_error(cmd, "writing standard output: %s", strerror(errno ? errno : EIO));
		return false;
	}
	return true;
}

int cli_read_line(FILE *fp, char *buf, size_t n, size_t *len)
{
	size_t k = 0;
	int c = EOF;
	while (k + 1 < n && (c = getc(fp)) != EOF) {
		buf[k++] = (char)c;
		if (c == '\n')
			break;
	}
	buf[k] = '\0';
	*len = k;
	if (k == 0 && c == EOF)
		return -1;
	return k + 1 == n && buf[k - 1] != '\n' ? 1 : 0;
}

void cli_wrap_list(char *buf, size_t n, const char *list, int indent, int width)
{
	char words[1024], line[256] = "";
	snprintf(words, sizeof words, "%s", list);
	size_t used = 0;
	buf[0] = '\0';
	char *save = NULL;
	for (char *tok = strtok_r(words, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		/* the word, ", " before it and the comma after it must fit */
		if (line[0] && indent + strlen(line) + strlen(tok) + 3 > (size_t)width) {
			used += (size_t)snprintf(buf + used, used < n ? n - used : 0, "%*s%s,\n", indent, "", line);
			line[0] = '\0';
		}
		snprintf(line + strlen(line), sizeof line - strlen(line), "%s%s", line[0] ? ", " : "", tok);
		if (used >= n)
			return;
	}
	snprintf(buf + used, used < n ? n - used : 0, "%*s%s\n", indent, "", line);
}
