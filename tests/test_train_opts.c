/* train/train_opts.c, the one parser of `mixprec train` and `mixprec
 * gradhist` that the CLI and the TUI's labs share: every train and gradhist
 * block of every lesson, split as lesson check and the lesson reader split
 * it, parses, and each option lands in its field as a plain reading of the
 * words says (strtod/strtoull, the oracle); the defaults and limits typed
 * here from the CLI's --help; the messages; a second parse in the same
 * process (the TUI parses many) unaffected by the first. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/numarg.h"
#include "teach/lesson.h"
#include "teach/lesson_check.h"
#include "train/train_opts.h"
#include "testutil.h"

/* Parses a space-separated command line (from the subcommand on). */
static mp_status parse_line(const char *line, train_opts *o, char *err, size_t n)
{
	char buf[1024], *argv[64], *save = NULL;
	int argc = 0;
	snprintf(buf, sizeof buf, "%s", line);
	for (char *t = strtok_r(buf, " ", &save); t && argc < 63; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	mp_status st = train_opts_parse(argc, argv, o, err, n);
	/* the strings point into buf: clear them for the callers */
	o->policies = o->data = o->csv = o->tensor_stats = o->save = o->init = o->resume = NULL;
	return st;
}

/* A whole number as written, or -1 when it is not plain digits. */
static long long plain_count(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	return *s >= '0' && *s <= '9' && !*end ? (long long)v : -1;
}

/* Checks each option of argv[1..] that a plain reading can value against
 * the field it sets; returns how many were checked. */
static int check_fields(const train_opts *o, char **argv, size_t argc, const char *where)
{
	static const struct {
		const char *opt;
		size_t off;
	} counts[] = {
		{ "--steps", offsetof(train_opts, steps) }, { "--batch", offsetof(train_opts, cfg.B) },
		{ "--context", offsetof(train_opts, cfg.t) }, { "--layers", offsetof(train_opts, cfg.model.L) },
		{ "--heads", offsetof(train_opts, cfg.model.NH) }, { "--channels", offsetof(train_opts, cfg.model.C) },
		{ "--eval-every", offsetof(train_opts, cfg.eval_every) },
		{ "--warmup", offsetof(train_opts, cfg.sched.warmup) },
	};
	static const struct {
		const char *opt;
		size_t off;
	} reals[] = {
		{ "--lr", offsetof(train_opts, cfg.lr) }, { "--lr-min", offsetof(train_opts, cfg.sched.lr_min) },
		{ "--beta1", offsetof(train_opts, cfg.beta1) }, { "--beta2", offsetof(train_opts, cfg.beta2) },
	};
	static const char *const changes[] = { "--gemm", "--residual", "--weights", "--grads", "--grad-accum",
		"--optim-state", "--reductions", "--accum-bits", "--promote-every", "--fp8-scaling", "--fp8-format",
		"--amax-history", "--amax-algo", "--fp8-margin", "--scale-pow2", "--scale-rule", "--bf16-last",
		"--bf16-from" };
	int checked = 0;
	size_t nchange = 0;
	for (size_t i = 1; i + 1 < argc; i++) {
		const char *a = argv[i], *v = argv[i + 1];
		for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
			if (!strcmp(a, counts[k].opt) && plain_count(v) >= 0) {
				size_t got = *(const size_t *)((const char *)o + counts[k].off);
				ck_assert_msg(got == (size_t)plain_count(v), "%s: %s %s read as %zu", where, a, v, got);
				checked++;
			}
		for (size_t k = 0; k < sizeof reals / sizeof reals[0]; k++)
			if (!strcmp(a, reals[k].opt)) {
				char *end;
				double want = strtod(v, &end);
				double got = *(const double *)((const char *)o + reals[k].off);
				if (*end)
					continue;
				ck_assert_msg(got == want, "%s: %s %s read as %.17g", where, a, v, got);
				checked++;
			}
		if (!strcmp(a, "--seed") && plain_count(v) >= 0) {
			ck_assert_msg(o->cfg.seed == (uint64_t)plain_count(v), "%s: --seed %s", where, v);
			checked++;
		}
		if (!strcmp(a, "--resid-offset")) {
			ck_assert_msg(o->cfg.resid_offset == (float)strtod(v, NULL), "%s: --resid-offset %s", where, v);
			checked++;
		}
		if (!strcmp(a, "--lr-schedule")) {
			ck_assert_msg(o->cfg.sched.kind == (strcmp(v, "cosine") ? LR_CONSTANT : LR_COSINE), "%s: %s", where, v);
			checked++;
		}
		for (size_t k = 0; k < sizeof changes / sizeof changes[0]; k++)
			if (!strcmp(a, changes[k])) {
				ck_assert_msg(nchange < o->nchanges && !strcmp(o->changes[nchange].key, a + 2) &&
				              !strcmp(o->changes[nchange].value, v), "%s: %s %s is change %zu", where, a, v,
				              nchange);
				nchange++;
				checked++;
			}
	}
	size_t offs = 0;
	for (size_t i = 1; i < argc; i++)
		offs += !strcmp(argv[i], "--no-rht") || !strcmp(argv[i], "--no-sr") || !strcmp(argv[i], "--no-2d") ||
		        !strcmp(argv[i], "--loss-scale");
	ck_assert_msg(o->nchanges == nchange + offs, "%s: %zu policy changes, %zu given", where, o->nchanges,
	              nchange + offs);
	ck_assert_msg(o->cfg.sched.total == o->steps, "%s: the schedule's length is --steps", where);
	return checked;
}

/* Every train and gradhist block of every lesson, split by
 * lesson_command_argv (lesson check's runner and the lesson reader that
 * opens the labs), parses with the one parser and resolves its policies;
 * each option reads as its words say. */
START_TEST(lesson_blocks)
{
	char dir[4096], err[1024];
	snprintf(dir, sizeof dir, "%s/lessons", testutil_srcdir());
	char **names;
	size_t nn;
	ck_assert_int_eq(lesson_list(dir, &names, &nn), MP_OK);
	int blocks = 0, checked = 0;
	bool saw_sched = false, saw_beta2 = false;
	for (size_t i = 0; i < nn; i++) {
		char path[8192];
		snprintf(path, sizeof path, "%s/%s.md", dir, names[i]);
		lesson_doc doc;
		ck_assert_int_eq(lesson_load(&doc, path, err, sizeof err), MP_OK);
		for (size_t b = 0; b < doc.nblocks; b++) {
			const lesson_block *bl = &doc.blocks[b];
			if (bl->kind != LB_CODE || !bl->info || strcmp(bl->info, "mixprec"))
				continue;
			char **argv;
			size_t argc;
			char line[2048];
			snprintf(line, sizeof line, "%.*s", (int)strcspn(bl->text, "\n"), bl->text);
			ck_assert_msg(lesson_command_argv(line, &argv, &argc, err, sizeof err) == MP_OK, "%s: %s", path, err);
			char where[8300];
			snprintf(where, sizeof where, "%s:%u", path, bl->line);
			bool train = !strcmp(argv[1], "train"), hist = !strcmp(argv[1], "gradhist");
			if (train || hist) {
				gradhist_opts g;
				train_opts t;
				mp_status st = train ? train_opts_parse((int)argc - 1, argv + 1, &t, err, sizeof err)
				                     : gradhist_opts_parse((int)argc - 1, argv + 1, &g, err, sizeof err);
				ck_assert_msg(st == MP_OK, "%s: %s", where, err);
				const train_opts *o = train ? &t : &g.run;
				checked += check_fields(o, argv + 1, argc - 1, where);
				train_policy pols[16];
				size_t np;
				/* --policy list: the CLI prints the presets, nothing to resolve */
				ck_assert_msg(!strcmp(o->policies, "list") || train_opts_resolve(o, o->policies, pols, train ? 16 : 1, &np, err, sizeof err) == MP_OK,
				              "%s: %s", where, err);
				saw_sched |= o->cfg.sched.kind == LR_COSINE && o->cfg.sched.warmup > 0;
				saw_beta2 |= strstr(line, "--beta2") != NULL;
				blocks++;
			}
			for (size_t k = 0; k < argc; k++)
				free(argv[k]);
			free(argv);
		}
		lesson_free(&doc);
		free(names[i]);
	}
	free(names);
	/* the lessons run train and gradhist often, with the options the old lab parser refused */
	ck_assert_int_ge(blocks, 10);
	ck_assert_int_ge(checked, 5 * blocks);
	ck_assert(saw_sched && saw_beta2);
}
END_TEST

/* The defaults of `mixprec train --help` and gradhist's. */
START_TEST(defaults)
{
	train_opts o;
	char err[512];
	char name[] = "train", *argv[] = { name, NULL };
	ck_assert_int_eq(train_opts_parse(1, argv, &o, err, sizeof err), MP_OK);
	ck_assert_str_eq(o.policies, "fp32");
	ck_assert_uint_eq(o.steps, 200);
	ck_assert_uint_eq(o.cfg.sched.total, 200);
	ck_assert(o.progress_every == 5);
	ck_assert_uint_eq(o.probe_draws, 64);
	ck_assert_ptr_null(o.data);
	ck_assert_ptr_null(o.csv);
	ck_assert(!o.help && o.nchanges == 0 && o.cfg.device == TRAIN_DEVICE_CPU);
	gradhist_opts g;
	char hname[] = "gradhist", *hv[] = { hname, NULL };
	ck_assert_int_eq(gradhist_opts_parse(1, hv, &g, err, sizeof err), MP_OK);
	ck_assert_uint_eq(g.run.steps, 20);
	ck_assert_uint_eq(g.run.cfg.eval_every, 0);
	ck_assert(g.scale == 1 && !g.csv && !g.activations);
}
END_TEST

/* What the TUI's lab used to refuse, and the model's limits (GPT_MAX_*). */
START_TEST(schedule_and_limits)
{
	train_opts o;
	char err[512];
	ck_assert_int_eq(parse_line("train --lr-schedule cosine --warmup 5 --beta2 0.99 --steps 10", &o, err,
	                            sizeof err), MP_OK);
	ck_assert_int_eq(o.cfg.sched.kind, LR_COSINE);
	ck_assert_uint_eq(o.cfg.sched.warmup, 5);
	ck_assert_uint_eq(o.cfg.sched.total, 10);
	ck_assert(o.cfg.beta2 == 0.99);
	ck_assert_int_eq(parse_line("train --layers 64 --heads 64 --channels 4096 --context 4096", &o, err, sizeof err),
	                 MP_OK);
	ck_assert_uint_eq(o.cfg.model.L, 64);
	ck_assert_uint_eq(o.cfg.model.T, 4096);
	ck_assert_uint_eq(o.cfg.t, 4096);
	ck_assert_int_eq(parse_line("train --layers 65", &o, err, sizeof err), MP_EINVAL);
	ck_assert_str_eq(err, "--layers: 65 is out of range (1..64)");
	ck_assert_int_eq(parse_line("train --context 4097", &o, err, sizeof err), MP_EINVAL);
	ck_assert_str_eq(err, "--context: 4097 is out of range (1..4096)");
	/* the number syntax: 2^3 is 8, 3*2^2 is 12 */
	ck_assert_int_eq(parse_line("train --layers 2^3 --steps 3*2^2", &o, err, sizeof err), MP_OK);
	ck_assert_uint_eq(o.cfg.model.L, 8);
	ck_assert_uint_eq(o.steps, 12);
	ck_assert_int_eq(parse_line("train --steps 1.5", &o, err, sizeof err), MP_EINVAL);
	ck_assert_str_eq(err, "--steps: 1.5 is not a whole number");
}
END_TEST

/* The messages the CLI prints after "mixprec train: ". */
START_TEST(messages)
{
	static const struct {
		const char *line, *msg;
	} cases[] = {
		{ "train --warmup 300", "--warmup: 300 updates is more than --steps 200" },
		{ "train --bogus", "unknown option '--bogus' (see 'mixprec train --help')" },
		{ "train --steps", "option '--steps' needs a value" },
		{ "train extra", "unexpected argument 'extra' (see 'mixprec train --help')" },
		{ "train -- --steps", "unexpected argument '--steps' (see 'mixprec train --help')" },
		{ "train --lr -1", "--lr: must be a positive number (got -1)" },
		{ "train --heads 3", "--heads: 3 does not divide --channels 128" },
		{ "train --lr-min 1e-5", "--lr-min: only a cosine schedule has a final lr (add --lr-schedule cosine)" },
		{ "train --device tpu", "--device: unknown device 'tpu' (known: cpu, cuda)" },
		{ "train --probe-draws 2", "--probe-draws: only with --probe nvfp4" },
		{ "train --beta2 1", "--beta2: 1 is not in [0, 1)" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		train_opts o;
		char err[512] = "";
		ck_assert_msg(parse_line(cases[i].line, &o, err, sizeof err) == MP_EINVAL, "%s", cases[i].line);
		ck_assert_msg(!strcmp(err, cases[i].msg), "%s: got '%s'", cases[i].line, err);
	}
	train_opts o;
	char err[512];
	ck_assert_int_eq(parse_line("train --steps 0 --help", &o, err, sizeof err), MP_EINVAL);
	ck_assert_int_eq(parse_line("train --help --steps 0", &o, err, sizeof err), MP_OK);
	ck_assert(o.help);
}
END_TEST

/* --loss-scale: static:S exact, dynamic:S the scaler's first S. */
START_TEST(loss_scale)
{
	train_opts o;
	char err[512];
	ck_assert_int_eq(parse_line("train --loss-scale static:2^10 --loss-scale dynamic:1/4", &o, err, sizeof err),
	                 MP_OK);
	ck_assert_uint_eq(o.nchanges, 2);
	ck_assert_str_eq(o.changes[0].key, "loss-scale");
	ck_assert_str_eq(o.changes[0].value, "static:1024");
	ck_assert_str_eq(o.changes[1].value, "dynamic");
	ck_assert(o.cfg.init_scale == 0.25);
}
END_TEST

/* The TUI parses one command after another: a parse that stopped inside a
 * cluster of short options (-hx) leaves nothing for the next. */
START_TEST(parse_again)
{
	train_opts a, b;
	char err[512];
	char h0[] = "train", h1[] = "-hx", *h[] = { h0, h1, NULL };
	ck_assert_int_eq(train_opts_parse(2, h, &a, err, sizeof err), MP_OK);
	ck_assert(a.help);
	ck_assert_int_eq(parse_line("train --steps 7 --no-rht", &a, err, sizeof err), MP_OK);
	ck_assert_int_eq(parse_line("train --steps 9", &b, err, sizeof err), MP_OK);
	ck_assert_int_eq(parse_line("train --steps 7 --no-rht", &b, err, sizeof err), MP_OK);
	ck_assert(!b.help);
	ck_assert_uint_eq(b.steps, 7);
	ck_assert_uint_eq(b.nchanges, 1);
	ck_assert_str_eq(b.changes[0].key, "rht");
	ck_assert_str_eq(b.changes[0].value, "off");
	ck_assert(memcmp(&a.cfg, &b.cfg, sizeof a.cfg) == 0);
}
END_TEST

/* The changes apply to every policy that has the part, in the TUI's start
 * as in the CLI: --no-rht is nvfp4's, fp32 skips it; a part no policy has
 * is an error naming the option. */
START_TEST(resolve)
{
	train_opts o;
	char err[512];
	train_policy p[4];
	size_t n;
	ck_assert_int_eq(parse_line("train --no-rht --gemm bf16", &o, err, sizeof err), MP_OK);
	ck_assert_int_eq(train_opts_resolve(&o, "fp32,nvfp4", p, 4, &n, err, sizeof err), MP_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(p[0].gemm_fmt, FMT_BF16);
	ck_assert_int_eq(train_opts_resolve(&o, "fp32", p, 4, &n, err, sizeof err), MP_EINVAL);
	ck_assert_msg(!strncmp(err, "--no-rht: ", 10), "got '%s'", err);
	ck_assert_int_eq(train_opts_resolve(&o, "fp32,fp32", p, 1, &n, err, sizeof err), MP_EINVAL);
	ck_assert_str_eq(err, "--policy: at most 1 policies");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("train_opts");
	TCase *tc = tcase_create("train_opts");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, lesson_blocks);
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, schedule_and_limits);
	tcase_add_test(tc, messages);
	tcase_add_test(tc, loss_scale);
	tcase_add_test(tc, parse_again);
	tcase_add_test(tc, resolve);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
