/* The shared option parsers of drift, budget, quantize, bits and round
 * (X_opts_parse, below cli/ and tui/, the one reading of a command line the
 * CLI's command and the TUI's lab share): every such block of every lesson,
 * split as lesson check and the lesson reader split it, parses, and each
 * option lands in its field as a plain reading of the words says
 * (strtod/strtoull, the oracle); the CLI's messages; a second parse in the
 * same process unaffected by the first. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "budget/budget_opts.h"
#include "drift/drift_opts.h"
#include "fmt/bits_opts.h"
#include "fmt/round_opts.h"
#include "quant/quant_opts.h"
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

/* Whether the word opt is in argv[1..] (a flag). */
static bool has_word(char **argv, size_t argc, const char *opt)
{
	for (size_t i = 1; i < argc; i++)
		if (!strcmp(argv[i], opt))
			return true;
	return false;
}

/* The VALUEs of argv[1..] as read by eye: every word that is not "--x",
 * nor the word after an option of valued[] (NULL-ended), in order. Checks
 * them against got[0..ngot). */
static void check_values(char **argv, size_t argc, const char *const *valued, char *const *got, size_t ngot,
                         const char *where)
{
	size_t n = 0;
	for (size_t i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--", 2)) {
			for (const char *const *v = valued; *v; v++)
				if (!strcmp(argv[i], *v))
					i++;   /* its value */
			continue;
		}
		ck_assert_msg(n < ngot && !strcmp(got[n], argv[i]), "%s: VALUE %zu is '%s'", where, n, argv[i]);
		n++;
	}
	ck_assert_msg(n == ngot, "%s: %zu VALUEs, read %zu", where, n, ngot);
}

/* A --to or --format list against the formats read: each name, in order,
 * is the name of the format read. */
static void check_list(const char *list, const fmt_id *ids, size_t n, const char *where)
{
	size_t k = 0;
	for (const char *p = list; *p; k++) {
		size_t len = strcspn(p, ",");
		ck_assert_msg(k < n && strlen(fmt_get(ids[k])->name) == len && !strncasecmp(fmt_get(ids[k])->name, p, len),
		              "%s: format %zu of '%s'", where, k, list);
		p += len + (p[len] == ',');
	}
	ck_assert_msg(k == n, "%s: '%s' has %zu formats, read %zu", where, list, k, n);
}

/* The --mode of argv against m (rne when not given). */
static void check_mode(char **argv, size_t argc, fmt_mode m, const char *where)
{
	const char *v = opt_value(argv, argc, "--mode");
	ck_assert_msg(!strcmp(fmt_mode_name(m), v ? v : "rne"), "%s: --mode", where);
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

/* A size as the lessons type it (80GB, 39.5GiB), read here with strtod. */
static double plain_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	return !strcmp(end, "GB") ? v * 1e9 : !strcmp(end, "GiB") ? v * 1073741824.0 : !*end ? v : NAN;
}

/* A budget --serve block's serving options against o.serve_cfg; how many were checked. */
static int check_budget_serve(char **argv, size_t argc, const budget_opts *o, const char *where)
{
	const serve_config *c = &o->serve_cfg;
	serve_config def = serve_defaults();
	int checked = 1;
	const char *v;
	bool ok;
	ck_assert_msg(o->serve, "%s: --serve", where);
	v = opt_value(argv, argc, "--context");
	ck_assert_msg(c->context == (v ? plain_real(v, &ok) : o->cfg.shape.seq), "%s: --context", where);
	checked += v != NULL;
	v = opt_value(argv, argc, "--batch");
	ck_assert_msg(c->batch == (v ? plain_real(v, &ok) : 1), "%s: --batch", where);
	checked += v != NULL;
	v = opt_value(argv, argc, "--weights-dtype");
	ck_assert_msg(!strcmp(serve_weights_name(c->weights), v ? v : "bf16"), "%s: --weights-dtype", where);
	checked += v != NULL;
	v = opt_value(argv, argc, "--kv-dtype");
	ck_assert_msg(!strcmp(serve_kv_name(c->kv), v ? v : "bf16"), "%s: --kv-dtype", where);
	checked += v != NULL;
	v = opt_value(argv, argc, "--gpu-mem");
	ck_assert_msg(c->gpu_mem == (v ? plain_size(v) : 0), "%s: --gpu-mem", where);
	checked += v != NULL;
	v = opt_value(argv, argc, "--reserve");
	ck_assert_msg(c->reserve == (v ? plain_size(v) : def.reserve), "%s: --reserve", where);
	checked += v != NULL;
	ck_assert_msg(c->gpu_util == def.gpu_util && c->block_size == def.block_size && c->tp == 1, "%s: vLLM's defaults",
	              where);
	return checked;
}

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
	/* parallel layout */
	static const char *const axes[] = { "--tp", "--pp", "--vpp", "--cp", "--dp" };
	const double sizes[] = { o.cfg.par.tp, o.cfg.par.pp, o.cfg.par.vpp, o.cfg.par.cp, o.cfg.par.dp };
	for (size_t i = 0; i < sizeof axes / sizeof axes[0]; i++)
		if ((v = opt_value(argv, argc, axes[i]))) {
			ck_assert_msg(sizes[i] == plain_real(v, &ok) && ok && o.per_gpu, "%s: %s %s", where, axes[i], v);
			checked++;
		}
	ck_assert_msg(o.cfg.par.sp == has_word(argv, argc, "--sp"), "%s: --sp", where);
	if (has_word(argv, argc, "--serve"))
		checked += check_budget_serve(argv, argc, &o, where);
	else
		ck_assert_msg(!o.serve, "%s: no --serve", where);
	ck_assert_msg(o.csv == has_word(argv, argc, "--csv") && !o.help, "%s: --csv, --help", where);
	checked += o.csv;
	return checked;
}

/* --- quantize --- */

/* A quantize block's options against quantize_opts; how many were checked. */
static int check_quantize(char **argv, size_t argc, const char *where)
{
	quantize_opts o;
	char err[512];
	ck_assert_msg(quantize_opts_parse((int)argc, argv, &o, err, sizeof err) == MP_OK, "%s: %s", where, err);
	int checked = 0;
	const char *v;
	/* the --random options as typed, for quantize_random */
	static const struct {
		const char *opt;
		size_t off;
	} texts[] = { { "--random", offsetof(quantize_random_args, random) },
		      { "--dist", offsetof(quantize_random_args, dist) },
		      { "--outliers", offsetof(quantize_random_args, outliers) },
		      { "--outliers-in", offsetof(quantize_random_args, outliers_in) },
		      { "--draws", offsetof(quantize_random_args, draws) },
		      { "--to", offsetof(quantize_random_args, to) } };
	for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
		v = opt_value(argv, argc, texts[k].opt);
		const char *got = *(const char *const *)((const char *)&o.ra + texts[k].off);
		ck_assert_msg(v ? got && !strcmp(got, v) : !got, "%s: %s", where, texts[k].opt);
		checked += v != NULL;
	}
	v = opt_value(argv, argc, "--to");
	ck_assert_msg(v != NULL, "%s: every quantize block names its format", where);
	if (!o.ra.random)
		ck_assert_msg(!strcmp(quant_get(o.q.fmt)->name, v), "%s: --to %s read as %s", where, v,
		              quant_get(o.q.fmt)->name);
	v = opt_value(argv, argc, "--block");
	ck_assert_msg(o.q.block == (v ? (size_t)plain_count(v) : 0), "%s: --block", where);
	checked += v != NULL;
	v = opt_value(argv, argc, "--scale-rule");
	ck_assert_msg(!strcmp(quant_rule_name(o.q.rule), v ? v : "ocp"), "%s: --scale-rule", where);
	checked += v != NULL;
	v = opt_value(argv, argc, "--seed");
	ck_assert_msg(o.q.seed == (v ? (unsigned long long)plain_count(v) : 0), "%s: --seed", where);
	checked += v != NULL;
	check_mode(argv, argc, o.q.mode, where);
	ck_assert_msg(o.rht == has_word(argv, argc, "--rht") && o.ra.compare == has_word(argv, argc, "--compare-rht") &&
	              o.csv == has_word(argv, argc, "--csv") && !o.help, "%s: --rht, --compare-rht, --csv", where);
	static const char *const valued[] = { "--to", "--block", "--scale-rule", "--mode", "--seed", "--random",
		                              "--dist", "--outliers", "--outliers-in", "--draws", NULL };
	check_values(argv, argc, valued, o.values, o.nvalues, where);
	ck_assert_msg(o.ra.value == (o.nvalues ? o.values[0] : NULL), "%s: the first VALUE for --random", where);
	checked += o.nvalues > 0;
	quantize_opts_free(&o);
	return checked;
}

/* --- bits and round --- */

/* A bits block's options against bits_opts; how many were checked. */
static int check_bits(char **argv, size_t argc, const char *where)
{
	bits_opts o;
	char err[512];
	ck_assert_msg(bits_opts_parse((int)argc, argv, &o, err, sizeof err) == MP_OK, "%s: %s", where, err);
	const char *v = opt_value(argv, argc, "--format");
	ck_assert_msg(o.have_formats == (v != NULL), "%s: --format given", where);
	if (v) {
		check_list(v, o.fmts, o.nfmts, where);
	} else {
		ck_assert_msg(o.nfmts == FMT_COUNT, "%s: every format without --format", where);
		for (size_t k = 0; k < o.nfmts; k++)
			ck_assert(o.fmts[k] == (fmt_id)k);
	}
	check_mode(argv, argc, o.mode, where);
	size_t nraw = 0;
	for (size_t i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--raw"))
			ck_assert_msg(nraw < o.nraw && !strcmp(o.raws[nraw++], argv[i + 1]), "%s: --raw", where);
	ck_assert_msg(nraw == o.nraw && o.csv == has_word(argv, argc, "--csv") && !o.help, "%s: --raw, --csv", where);
	static const char *const valued[] = { "--format", "--mode", "--raw", NULL };
	check_values(argv, argc, valued, (char *const *)o.values, o.nvalues, where);
	return (v != NULL) + (int)nraw + (o.nvalues > 0);
}

/* A round block's options against round_opts; how many were checked. */
static int check_round(char **argv, size_t argc, const char *where)
{
	round_opts o;
	char err[512];
	ck_assert_msg(round_opts_parse((int)argc, argv, &o, err, sizeof err) == MP_OK, "%s: %s", where, err);
	const char *to = opt_value(argv, argc, "--to"), *v;
	check_list(to ? to : "fp32,fp16,bf16", o.fmts, o.nfmts, where);
	check_mode(argv, argc, o.mode, where);
	v = opt_value(argv, argc, "--seed");
	ck_assert_msg(o.seed == (v ? (unsigned long long)plain_count(v) : 0), "%s: --seed", where);
	v = opt_value(argv, argc, "--device");
	ck_assert_msg(o.cuda == (v && !strcmp(v, "cuda")), "%s: --device", where);
	ck_assert_msg(o.saturate == has_word(argv, argc, "--saturate") && o.csv == has_word(argv, argc, "--csv") &&
	              !o.help, "%s: --saturate, --csv", where);
	v = opt_value(argv, argc, "--via");
	ck_assert_msg(o.via == (v != NULL), "%s: --via", where);
	if (v) {   /* F:M by eye: the format's name, then the mode's */
		const char *colon = strchr(v, ':');
		ck_assert_msg(colon && !strncmp(fmt_get(o.via_fmt)->name, v, (size_t)(colon - v)) &&
		              !strcmp(fmt_mode_name(o.via_mode), colon + 1), "%s: --via %s", where, v);
	}
	v = opt_value(argv, argc, "--flip-prob");
	ck_assert_msg(o.flip == (v != NULL) && (!v || o.flip_opt.p == strtod(v, NULL)), "%s: --flip-prob", where);
	v = opt_value(argv, argc, "--flip-bits");
	ck_assert_msg(!v || (o.flip_opt.where == FLIP_BIT && o.flip_opt.bit == atoi(v)) ||
	              (strspn(v, "0123456789") != strlen(v)), "%s: --flip-bits", where);
	static const char *const valued[] = { "--to", "--mode", "--seed", "--device", "--via", "--flip-prob",
	                                      "--flip-bits", NULL };
	check_values(argv, argc, valued, o.values, o.nvalues, where);
	int checked = (to != NULL) + (o.nvalues > 0) + (opt_value(argv, argc, "--mode") != NULL);
	round_opts_free(&o);
	return checked;
}

/* --- the lessons --- */

static const struct {
	const char *cmd;
	int (*check)(char **argv, size_t argc, const char *where);
} checkers[] = {
	{ "drift", check_drift },
	{ "budget", check_budget },
	{ "quantize", check_quantize },
	{ "bits", check_bits },
	{ "round", check_round },
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

/* Parses a space-separated command line (from the subcommand on) with f.
 * The words live in a static buffer of each use of the macro: parsed
 * options point into argv, so the words must outlive the expression. */
#define PARSE_LINE(f, line, o, err)                                                                \
	__extension__({                                                                            \
		static char buf_[1024], *argv_[64];                                                \
		char *save_ = NULL;                                                                \
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

/* The messages `mixprec quantize` prints after "mixprec quantize: "
 * (prefixes: the lists of known names are the format table's). */
START_TEST(quantize_messages)
{
	static const struct {
		const char *line, *msg;
	} cases[] = {
		{ "quantize 1", "--to: a block format is required (known: mxfp8-e4m3, " },
		{ "quantize 1 --to foo", "--to: unknown block format 'foo' (known: mxfp8-e4m3, " },
		{ "quantize 1 --to mxfp4,nvfp4", "--to: a list of formats ('mxfp4,nvfp4') only with --random N" },
		{ "quantize 1 --to mxfp4 --block 0", "--block: 0 is out of range (1..65536)" },
		{ "quantize 1 --to nvfp4 --scale-rule ceil", "--scale-rule: nvfp4 has one rule (its scales are rounded to nearest)" },
		{ "quantize 1 --to mxfp4 --scale-rule zz", "--scale-rule: unknown rule 'zz' (known: ocp (or floor), ceil, even, rceil, torchao-ceil)" },
		{ "quantize 1 --to mxfp4 --mode rtz", "--mode: elements round with rne, sr, rto, rnz or sr-equal, not rtz" },
		{ "quantize 1 --to mxfp4 --mode zz", "--mode: unknown rounding mode 'zz' (known: rne, rna, rtz, up, down, sr, rto, rnz, sr-equal)" },
		{ "quantize 1 --to mxfp4 --dist uniform", "--dist: only with --random N (a generated tensor)" },
		{ "quantize 1 --to mxfp4 --compare-rht", "--compare-rht: only with --random N (a generated tensor)" },
		{ "quantize --random 64", "--to: a block format is required (known: " },
		{ "quantize --to mxfp4 --bogus", "unknown option '--bogus' (see 'mixprec quantize --help')" },
		{ "quantize --to", "option '--to' needs a value" },
		{ "quantize --to mxfp4 --block 0 --help", "--block: 0 is out of range (1..65536)" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		quantize_opts o;
		char err[512] = "";
		ck_assert_msg(PARSE_LINE(quantize_opts_parse, cases[i].line, &o, err) == MP_EINVAL, "%s", cases[i].line);
		ck_assert_msg(!strncmp(err, cases[i].msg, strlen(cases[i].msg)), "%s: got '%s'", cases[i].line, err);
		quantize_opts_free(&o);
	}
	quantize_opts o;
	char err[512];
	/* values keep their order around the options (-0.5 is one); a list of
	 * formats and --random's options are quantize_random's to read */
	ck_assert_int_eq(PARSE_LINE(quantize_opts_parse, "quantize 3 --to nvfp4 -0.5 --block 2^3 1/3", &o, err), MP_OK);
	ck_assert(o.q.fmt == QUANT_NVFP4 && o.q.block == 8 && o.nvalues == 3 && !o.ra.random);
	ck_assert(!strcmp(o.values[0], "3") && !strcmp(o.values[1], "-0.5") && !strcmp(o.values[2], "1/3"));
	quantize_opts_free(&o);
	ck_assert_int_eq(PARSE_LINE(quantize_opts_parse, "quantize --to mxfp4,zz --random 64 --draws 3", &o, err), MP_OK);
	ck_assert(!strcmp(o.ra.to, "mxfp4,zz") && !strcmp(o.ra.random, "64") && !strcmp(o.ra.draws, "3"));
	quantize_opts_free(&o);
	ck_assert_int_eq(PARSE_LINE(quantize_opts_parse, "quantize --mode sr --seed 0x10 --help --bogus", &o, err), MP_OK);
	ck_assert(o.help && o.q.mode == FMT_SR && o.q.seed == 16);
	quantize_opts_free(&o);
}
END_TEST

/* The messages `mixprec bits` and `mixprec round` print after their
 * "mixprec CMD: ". */
START_TEST(bits_round_messages)
{
	static const struct {
		const char *line, *msg;
	} bits_cases[] = {
		{ "bits 1 --format zz", "--format: unknown format 'zz' (known: fp32, " },
		{ "bits 1 --mode sr", "--mode: sr is not offered here; use 'mixprec round --mode sr'" },
		{ "bits 1 --mode sr-equal", "--mode: sr-equal is not offered here; use 'mixprec round --mode sr-equal'" },
		{ "bits 1 --mode zz", "--mode: unknown rounding mode 'zz' (known: rne, rna, rtz, up, down, sr, rto, rnz, sr-equal)" },
		{ "bits --raw 0x3f80", "--raw needs exactly one --format (the pattern's width depends on it)" },
		{ "bits --raw 0x3f80 --format bf16,fp16", "--raw needs exactly one --format (the pattern's width depends on it)" },
		{ "bits --format bf16", "no value given (see 'mixprec bits --help')" },
		{ "bits 1 --bogus", "unknown option '--bogus' (see 'mixprec bits --help')" },
		{ "bits 1 --format", "option '--format' needs a value" },
	}, round_cases[] = {
		{ "round 1 --to zz", "--to: unknown format 'zz' (known: fp32, " },
		{ "round 1 --to fp16,,bf16", "--to: unknown format '' (known: fp32, " },
		{ "round 1 --mode zz", "--mode: unknown rounding mode 'zz' (known: rne, rna, rtz, up, down, sr, rto, rnz, sr-equal)" },
		{ "round 1 --seed 1.5", "--seed: 1.5 is not a whole number" },
		{ "round 1 --device tpu", "--device: unknown device 'tpu' (known: cpu, cuda)" },
		{ "round 1 --device cuda --mode rtz", "--device cuda: the GPU kernels round with rne or sr, not rtz" },
		{ "round 1 --device cuda --to fp6-e3m2", "--device cuda: fp6-e3m2 is not available on the GPU (fp32, " },
		{ "round 1 --bogus", "unknown option '--bogus' (see 'mixprec round --help')" },
		{ "round 1 --to", "option '--to' needs a value" },
	};
	char err[512];
	for (size_t i = 0; i < sizeof bits_cases / sizeof bits_cases[0]; i++) {
		bits_opts o;
		err[0] = '\0';
		ck_assert_msg(PARSE_LINE(bits_opts_parse, bits_cases[i].line, &o, err) == MP_EINVAL, "%s", bits_cases[i].line);
		ck_assert_msg(!strncmp(err, bits_cases[i].msg, strlen(bits_cases[i].msg)), "%s: got '%s'", bits_cases[i].line,
		              err);
	}
	for (size_t i = 0; i < sizeof round_cases / sizeof round_cases[0]; i++) {
		round_opts o;
		err[0] = '\0';
		ck_assert_msg(PARSE_LINE(round_opts_parse, round_cases[i].line, &o, err) == MP_EINVAL, "%s",
		              round_cases[i].line);
		ck_assert_msg(!strncmp(err, round_cases[i].msg, strlen(round_cases[i].msg)), "%s: got '%s'",
		              round_cases[i].line, err);
		round_opts_free(&o);
	}
	/* the GPU's own checks pass (whether one is there is the caller's);
	 * after "--" every word is a VALUE */
	round_opts r;
	ck_assert_int_eq(PARSE_LINE(round_opts_parse, "round 1 --device cuda --mode sr --seed 2^4 -- -2 --csv", &r, err), MP_OK);
	ck_assert(r.cuda && r.mode == FMT_SR && r.seed == 16 && !r.csv && r.nvalues == 3 && !strcmp(r.values[2], "--csv"));
	round_opts_free(&r);
	bits_opts b;
	ck_assert_int_eq(PARSE_LINE(bits_opts_parse, "bits --raw 0x3c00 --format fp16 --csv", &b, err), MP_OK);
	ck_assert(b.nraw == 1 && b.nfmts == 1 && b.fmts[0] == FMT_FP16 && b.csv && b.nvalues == 0);
	/* a parse that stopped inside "-hx" leaves nothing for the next */
	ck_assert_int_eq(PARSE_LINE(bits_opts_parse, "bits -hx", &b, err), MP_OK);
	ck_assert(b.help);
	ck_assert_int_eq(PARSE_LINE(bits_opts_parse, "bits 1", &b, err), MP_OK);
	ck_assert(!b.help && b.nvalues == 1 && b.nfmts == FMT_COUNT && !b.have_formats);
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
	tcase_add_test(tc, quantize_messages);
	tcase_add_test(tc, bits_round_messages);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
