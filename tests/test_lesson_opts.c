/* The shared option parsers of drift, budget, quantize, bits and round
 * (X_opts_parse, below cli/ and tui/, the one reading of a command line the
 * CLI's command and the TUI's lab share): every such block of every lesson,
 * split as lesson check and the lesson reader split it, parses, and each
 * option lands in its field as a plain reading of the words says
 * (strtod/strtoull, the oracle); the CLI's messages; a second parse in the
 * same process unaffected by the first. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget/budget_opts.h"
#include "drift/drift_opts.h"
#include "teach/lesson.h"
#include "teach/lesson_check.h"
#include "testutil.h"

/* The value after option opt in argv[1..], or NULL. */
static const char *opt_value(char **argv, size_t argc, const char *opt)
{
	const char *v = NULL;
	for (size_t i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], opt))
			v = argv[i + 1];   /* the last one given wins, as getopt's reader does */
	return v;
}

/* A whole number as written, or -1 when it is not plain digits. */
static long long plain_count(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	return *s >= '0' && *s <= '9' && !*end ? (long long)v : -1;
}

/* strtod's reading of s; *ok false when s is not a plain decimal. */
static double plain_real(const char *s, bool *ok)
{
	char *end;
	double v = strtod(s, &end);
	*ok = *s && !*end;
	return v;
}

/* --- drift --- */

/* A drift block's options against drift_opts; how many were checked. */
static int check_drift(char **argv, size_t argc, const char *where)
{
	drift_opts o;
	char err[512];
	ck_assert_msg(drift_opts_parse((int)argc, argv, &o, err, sizeof err) == MP_OK, "%s: %s", where, err);
	if (o.ema)   /* the EMA simulation's options are cmd_drift_ema's */
		return 1;
	drift_params def = drift_defaults();
	int checked = 0;
	static const struct {
		const char *opt;
		size_t off;
	} reals[] = { { "--x0", offsetof(drift_params, x0) }, { "--mean", offsetof(drift_params, mean) },
		      { "--std", offsetof(drift_params, std) } };
	for (size_t k = 0; k < sizeof reals / sizeof reals[0]; k++) {
		const char *v = opt_value(argv, argc, reals[k].opt);
		bool ok;
		double want = v ? plain_real(v, &ok) : *(const double *)((const char *)&def + reals[k].off);
		double got = *(const double *)((const char *)&o.p + reals[k].off);
		ck_assert_msg(got == want, "%s: %s %s read as %.17g", where, reals[k].opt, v ? v : "(default)", got);
		checked += v != NULL;
	}
	static const struct {
		const char *opt;
		size_t off;
	} counts[] = { { "--steps", offsetof(drift_params, steps) }, { "--elements", offsetof(drift_params, elements) } };
	for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
		const char *v = opt_value(argv, argc, counts[k].opt);
		size_t want = v ? (size_t)plain_count(v) : *(const size_t *)((const char *)&def + counts[k].off);
		size_t got = *(const size_t *)((const char *)&o.p + counts[k].off);
		ck_assert_msg(got == want, "%s: %s read as %zu", where, counts[k].opt, got);
		checked += v != NULL;
	}
	const char *dist = opt_value(argv, argc, "--dist");
	ck_assert_msg(!strcmp(drift_dist_name(o.p.dist), dist ? dist : "normal"), "%s: --dist", where);
	checked += dist != NULL;
	const char *sweep = opt_value(argv, argc, "--sweep");
	if (sweep) {
		/* x0=V,V,...: each V by strtod, in order */
		const char *p = sweep + 3;
		size_t n = 0;
		for (char *end; *p; p = *end ? end + 1 : end, n++) {
			double want = strtod(p, &end);
			ck_assert_msg(n < o.nx && o.xs[n] == want, "%s: --sweep value %zu", where, n);
		}
		ck_assert_msg(o.nx == n, "%s: --sweep has %zu values, read %zu", where, n, o.nx);
		checked++;
	}
	ck_assert_msg(o.p.have_starts == (opt_value(argv, argc, "--x0") != NULL), "%s: --x0 sets the starts", where);
	return checked;
}

/* --- budget --- */

/* A budget block's options against budget_opts; how many were checked. */
static int check_budget(char **argv, size_t argc, const char *where)
{
	budget_opts o;
	char err[1024];
	ck_assert_msg(budget_opts_parse((int)argc, argv, &o, err, sizeof err) == MP_OK, "%s: %s", where, err);
	budget_config def = budget_defaults();
	int checked = 0;
	const char *v;
	bool ok;
	if ((v = opt_value(argv, argc, "--params"))) {
		ck_assert_msg(o.cfg.params == plain_real(v, &ok) && ok, "%s: --params %s", where, v);
		checked++;
	}
	if ((v = opt_value(argv, argc, "--preset"))) {
		/* a named model has a shape; its parameters unless --params says */
		ck_assert_msg(o.preset && !strcmp(o.preset, v) && o.cfg.shape.layers > 0, "%s: --preset %s", where, v);
		checked++;
	}
	if ((v = opt_value(argv, argc, "--gpus"))) {
		ck_assert_msg(o.cfg.gpus == plain_real(v, &ok) && ok && o.per_gpu, "%s: --gpus %s", where, v);
		checked++;
	}
	if ((v = opt_value(argv, argc, "--zero"))) {
		ck_assert_msg(o.cfg.zero_stage == atoi(v) && o.per_gpu, "%s: --zero %s", where, v);
		checked++;
	}
	v = opt_value(argv, argc, "--recipe");
	ck_assert_msg(v ? !strcmp(budget_recipe_name(o.cfg.recipe), v) : o.cfg.recipe == def.recipe, "%s: --recipe", where);
	checked += v != NULL;
	v = opt_value(argv, argc, "--convention");
	ck_assert_msg(v ? !strcmp(budget_convention_name(o.cfg.convention), v) : o.cfg.convention == def.convention,
	              "%s: --convention", where);
	checked += v != NULL;
	if ((v = opt_value(argv, argc, "--offload"))) {
		budget_offload want;
		ck_assert(budget_offload_from_name(v, &want) == MP_OK);
		ck_assert_msg(o.cfg.offload == want, "%s: --offload %s", where, v);
		checked++;
	}
	ck_assert_msg(!o.csv && !o.help, "%s: --csv, --help", where);
	return checked;
}

/* --- the lessons --- */

static const struct {
	const char *cmd;
	int (*check)(char **argv, size_t argc, const char *where);
} checkers[] = {
	{ "drift", check_drift },
	{ "budget", check_budget },
};

/* Every block of every lesson whose command has a checker: parses, and
 * reads as its words say. */
START_TEST(lesson_blocks)
{
	char dir[4096], err[1024];
	snprintf(dir, sizeof dir, "%s/lessons", testutil_srcdir());
	char **names;
	size_t nn;
	ck_assert_int_eq(lesson_list(dir, &names, &nn), MP_OK);
	int blocks[sizeof checkers / sizeof checkers[0]] = { 0 }, checked = 0;
	for (size_t i = 0; i < nn; i++) {
		char path[8192];
		snprintf(path, sizeof path, "%s/%s.md", dir, names[i]);
		lesson_doc doc;
		ck_assert_int_eq(lesson_load(&doc, path, err, sizeof err), MP_OK);
		for (size_t b = 0; b < doc.nblocks; b++) {
			const lesson_block *bl = &doc.blocks[b];
			if (bl->kind != LB_CODE || !bl->info || strcmp(bl->info, "mixprec"))
				continue;
			char **argv, line[2048], where[8300];
			size_t argc;
			snprintf(line, sizeof line, "%.*s", (int)strcspn(bl->text, "\n"), bl->text);
			ck_assert_msg(lesson_command_argv(line, &argv, &argc, err, sizeof err) == MP_OK, "%s: %s", path, err);
			snprintf(where, sizeof where, "%s:%u", path, bl->line);
			for (size_t k = 0; k < sizeof checkers / sizeof checkers[0]; k++)
				if (argc > 1 && !strcmp(argv[1], checkers[k].cmd)) {
					checked += checkers[k].check(argv + 1, argc - 1, where);
					blocks[k]++;
				}
			for (size_t k = 0; k < argc; k++)
				free(argv[k]);
			free(argv);
		}
		lesson_free(&doc);
		free(names[i]);
	}
	free(names);
	/* every command the lessons run has blocks; most options are checked */
	int total = 0;
	for (size_t k = 0; k < sizeof checkers / sizeof checkers[0]; k++) {
		ck_assert_msg(blocks[k] >= 3, "%s: %d blocks", checkers[k].cmd, blocks[k]);
		total += blocks[k];
	}
	ck_assert_int_ge(checked, total);
}
END_TEST

/* Parses a space-separated command line (from the subcommand on) with f. */
#define PARSE_LINE(f, line, o, err)                                                                \
	__extension__({                                                                            \
		char buf_[1024], *argv_[64], *save_ = NULL;                                        \
		int argc_ = 0;                                                                     \
		snprintf(buf_, sizeof buf_, "%s", line);                                           \
		for (char *t_ = strtok_r(buf_, " ", &save_); t_ && argc_ < 63; t_ = strtok_r(NULL, " ", &save_)) \
			argv_[argc_++] = t_;                                                       \
		argv_[argc_] = NULL;                                                               \
		f(argc_, argv_, o, err, sizeof err);                                               \
	})

/* The messages `mixprec drift` prints after "mixprec drift: ". */
START_TEST(drift_messages)
{
	static const struct {
		const char *line, *msg;
	} cases[] = {
		{ "drift --steps 0", "--steps: 0 is out of range (1..1099511627776)" },
		{ "drift --x0", "option '--x0' needs a value" },
		{ "drift --bogus", "unknown option '--bogus' (see 'mixprec drift --help')" },
		{ "drift x", "unexpected argument 'x' (see 'mixprec drift --help')" },
		{ "drift --sweep x0=", "--sweep: no values after x0=" },
		{ "drift --sweep x0=1,,2", "--sweep: an empty value in 'x0=1,,2'" },
		{ "drift --sweep 1,2", "--sweep: expected x0=V,V,... (got '1,2')" },
		{ "drift --std -1", "--std: must not be negative" },
		{ "drift --dist flat", "--dist: unknown distribution 'flat' (known: constant, uniform, normal)" },
		{ "drift --device tpu", "--device: unknown device 'tpu' (known: cpu, cuda)" },
		{ "drift --steps 1.5", "--steps: 1.5 is not a whole number" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		drift_opts o;
		char err[512] = "";
		ck_assert_msg(PARSE_LINE(drift_opts_parse, cases[i].line, &o, err) == MP_EINVAL, "%s", cases[i].line);
		ck_assert_msg(!strcmp(err, cases[i].msg), "%s: got '%s'", cases[i].line, err);
	}
	drift_opts o;
	char err[512];
	/* the number syntax: 2^10 is 1024, 3*2^-2 is 0.75; --ema is cmd_drift_ema's; --help stops */
	ck_assert_int_eq(PARSE_LINE(drift_opts_parse, "drift --steps 2^10 --mean 3*2^-2 --device cuda", &o, err), MP_OK);
	ck_assert_uint_eq(o.p.steps, 1024);
	ck_assert(o.p.mean == 0.75 && o.p.device == DRIFT_DEVICE_CUDA && !o.ema && !o.help);
	ck_assert_int_eq(PARSE_LINE(drift_opts_parse, "drift --bogus --ema", &o, err), MP_OK);
	ck_assert(o.ema);
	ck_assert_int_eq(PARSE_LINE(drift_opts_parse, "drift --help --steps 0", &o, err), MP_OK);
	ck_assert(o.help);
	/* a parse that stopped inside "-hx" leaves nothing for the next */
	ck_assert_int_eq(PARSE_LINE(drift_opts_parse, "drift -hx", &o, err), MP_OK);
	ck_assert_int_eq(PARSE_LINE(drift_opts_parse, "drift --steps 7", &o, err), MP_OK);
	ck_assert(!o.help && o.p.steps == 7);
}
END_TEST

/* The messages `mixprec budget` prints after "mixprec budget: ". */
START_TEST(budget_messages)
{
	static const struct {
		const char *line, *msg;
	} cases[] = {
		{ "budget", "--params N is required (or --preset M; see 'mixprec budget --help')" },
		{ "budget --params 7e9 --layers 2", "a model shape needs --channels --heads --context (or --preset M)" },
		{ "budget --params 7e9 --batch 2",
		  "--batch needs a model shape (--preset M, or --layers, --channels, --heads, --context)" },
		{ "budget --params 7e9 --offload cpu",
		  "--offload: only the deepspeed convention reads it (--convention deepspeed)" },
		{ "budget --params 7e9 --convention deepspeed --zero 1",
		  "--zero 1: DeepSpeed estimates ZeRO-2 and ZeRO-3 only (use --zero 2 or 3, or another convention)" },
		{ "budget --params 7e9 --convention deepspeed --gpus 6 --nodes 4", "--nodes 4: does not divide --gpus 6" },
		{ "budget --params 7e9 --gpus 2000000", "--gpus: 2000000 is out of range (1 to 1048576)" },
		{ "budget --preset gpt9", "--preset: unknown model 'gpt9' (known: " },
		{ "budget --recipe fp7", "--recipe: unknown recipe 'fp7' (known: " },
		{ "budget --params 7e9 extra", "unexpected argument 'extra' (see 'mixprec budget --help')" },
		{ "budget --bogus", "unknown option '--bogus' (see 'mixprec budget --help')" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		budget_opts o;
		char err[1024] = "";
		ck_assert_msg(PARSE_LINE(budget_opts_parse, cases[i].line, &o, err) == MP_EINVAL, "%s", cases[i].line);
		ck_assert_msg(!strncmp(err, cases[i].msg, strlen(cases[i].msg)), "%s: got '%s'", cases[i].line, err);
	}
	budget_opts o;
	char err[1024];
	/* the shape options override the preset's; --batch is the micro-batch */
	ck_assert_int_eq(PARSE_LINE(budget_opts_parse, "budget --preset gpt2-small --layers 3 --batch 2^2", &o, err), MP_OK);
	ck_assert(o.cfg.shape.layers == 3 && o.cfg.shape.micro_batch == 4 && !o.per_gpu);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lesson_opts");
	TCase *tc = tcase_create("lesson_opts");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, lesson_blocks);
	tcase_add_test(tc, drift_messages);
	tcase_add_test(tc, budget_messages);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
