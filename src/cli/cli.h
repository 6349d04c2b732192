/* The command-line front end: one function per subcommand, exit codes of the
 * CLI contract (doc/DESIGN.md). */
#ifndef MIXPREC_CLI_CLI_H
#define MIXPREC_CLI_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <getopt.h>

#include "fmt/format.h"
#include "fmt/round.h"
#include "teach/exercise.h"
#include "util/file.h"
#include "util/optwalk.h"

enum {
	CLI_OK = 0,      /* success */
	CLI_WRONG = 1,   /* a checked answer is wrong */
	CLI_USAGE = 2,   /* bad usage or bad input */
	CLI_ENV = 3,     /* environment failure: I/O, missing device */
};

typedef int (*cli_fn)(int argc, char **argv);

typedef struct {
	const char *name;
	cli_fn run;
	const char *summary;
} cli_command;

/* Runs mixprec with its full argv; returns the exit status. */
int cli_main(int argc, char **argv);

int cmd_lesson(int argc, char **argv);
int cmd_formats(int argc, char **argv);
int cmd_bits(int argc, char **argv);
int cmd_round(int argc, char **argv);
int cmd_quantize(int argc, char **argv);
int cmd_drift(int argc, char **argv);
int cmd_drift_ema(int argc, char **argv);   /* drift --ema */
int cmd_train(int argc, char **argv);
int cmd_eval(int argc, char **argv);     /* cmd_ckpt.c */
int cmd_sample(int argc, char **argv);
int cmd_gradhist(int argc, char **argv);
int cmd_accum(int argc, char **argv);
int cmd_amax(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_budget(int argc, char **argv);
int cmd_exercise(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_lab(int argc, char **argv);
/* lab autograder and lab autograde (cli/cmd_autograder.c); argv[0] is the action. */
int cmd_lab_autograder(int argc, char **argv);
int cmd_lab_autograde(int argc, char **argv);
int cmd_grade(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_tui(int argc, char **argv);

/* Loads the exercises of dir (NULL: ex_dir()); problems in the files are
 * warnings on stderr (unless quiet, when the set still loads). Returns
 * CLI_OK, or CLI_ENV when the folder cannot be read. */
int cli_load_exercises(const char *cmd, const char *dir, ex_set *set, bool quiet);

/* Checks a --course-seed value (1 to 128 characters) into *seed; reports
 * a bad one naming the option and returns false. lab new also checks its
 * characters: it prints the seed on the sheets. */
bool cli_parse_course_seed(const char *cmd, const char *text, const char **seed);
/* The characters lab new accepts in a seed (ASCII letters, digits and
 * ._@:+=,/-, not starting with '-'); where names the source. */
bool cli_course_seed_printable(const char *cmd, const char *where, const char *text);


/* "mixprec CMD: message" on stderr. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* In-order option parsing for commands that take values: getopt_long for
 * options, but positional arguments, negative numbers ("-0.5", "-inf") and
 * everything after "--" are returned in command-line order as CLI_ARG_VALUE
 * with *value set. Returns -1 at the end; '?' and ':' as getopt does. */
enum { CLI_ARG_VALUE = OPTWALK_VALUE };
typedef optwalk cli_args;
int cli_getopt(cli_args *a, int argc, char **argv, const struct option *opts, char **value);

/* Reports the option cli_getopt just rejected from the table opts (c ':'
 * for a missing value, anything else for an unknown option, with the
 * nearest option of opts as a suggestion) and returns CLI_USAGE. */
int cli_option_error(const char *cmd, int c, char **argv, const struct option *opts);

/* Prints every format's name, comma-separated, on lines of at most 79
 * columns, each indented by `indent` spaces (for --help texts). */
void cli_print_formats(int indent);
/* Parses --to/--format lists, naming the option in the error. */
bool cli_parse_formats(const char *cmd, const char *opt, const char *list, fmt_id *ids, size_t *count);
bool cli_parse_mode(const char *cmd, const char *text, fmt_mode *mode);
/* Numbers of options, in the full syntax of doc/DESIGN.md (0.1, -6.5e-5,
 * 0x1.8p-3, 1/3, 2^-14, 3*2^-10; inf and nan only where the range allows),
 * every one through these parsers. A bad one is reported naming the option
 * and the real problem (not a number, not a whole number, out of range) and
 * the result is false. cli_parse_u64 takes a whole number 0..2^64-1
 * (decimal, 0x hex, or any syntax whose value is whole: 2^20, 3*2^10). */
bool cli_parse_u64(const char *cmd, const char *opt, const char *text, unsigned long long *v);
/* A whole number in lo..hi, "opt: N is out of range (lo..hi)" outside. */
bool cli_parse_count(const char *cmd, const char *opt, const char *text, unsigned long long lo,
                     unsigned long long hi, unsigned long long *v);
/* A real number in lo..hi (inclusive; with lo_open, greater than lo), to
 * the nearest binary64. */
bool cli_parse_real(const char *cmd, const char *opt, const char *text, double lo, bool lo_open, double hi,
                    double *v);

/* Opens an output file option (opt names it in messages) for an atomic
 * write, "-" meaning stdout: *fp is where to write. False (reported) when it
 * cannot be opened. */
bool cli_out_open(const char *cmd, const char *opt, const char *path, file_atomic *a, FILE **fp);
/* Puts the file in place when ok (a full disk or any write error leaves
 * the earlier file intact, reported, false), else removes what was written.
 * Nothing for stdout. */
bool cli_out_close(const char *cmd, const char *opt, file_atomic *a, FILE *fp, bool ok);

/* One line of at most n - 2 bytes and its newline into buf (NUL-terminated,
 * *len bytes): 0, or 1 when the line is longer (the rest is left unread),
 * -1 at the end of the input. round and quantize read stdin with it. */
int cli_read_line(FILE *fp, char *buf, size_t n, size_t *len);

/* Flushes stdout; on a write error reports it and returns false. */
bool cli_flush_stdout(const char *cmd);

/* A ", "-separated list as lines of at most width columns, each indented by
 * indent spaces and ending in '\n' (for --help texts within 80 columns). */
void cli_wrap_list(char *buf, size_t n, const char *list, int indent, int width);

#endif
