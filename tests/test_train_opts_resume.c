/* train/train_opts_resume.c: a resume's options completed from a run
 * state's metadata, built here by hand with values typed in each test (the
 * oracle: each field must hold the typed value), and the given options
 * checked against it: one that agrees is accepted, one that contradicts is
 * an error naming the option and both values; a preset that contradicts
 * says --preset; a missing key names the option to give. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/run_state.h"
#include "train/train_opts.h"
#include "testutil.h"

/* The metadata of a saved run: 3 layers, 2 heads, 48 channels, windows of
 * 24 in 64 positions, batch 6, and the rest as typed. */
static const char *const saved[][2] = {
	{ "state.format", "mixprec run state 1" },
	{ "state.policy", "fp32" },
	{ "state.device", "cpu" },
	{ "state.config.n_layer", "3" },
	{ "state.config.n_head", "2" },
	{ "state.config.n_embd", "48" },
	{ "state.config.n_positions", "64" },
	{ "state.config.context", "24" },
	{ "state.config.batch", "6" },
	{ "state.config.eval_every", "7" },
	{ "state.config.seed", "99" },
	{ "state.config.lr", "0.0025000000000000001" },
	{ "state.config.lr_schedule", "constant" },
	{ "state.config.warmup", "2" },
	{ "state.config.lr_min", "0" },
	{ "state.config.lr_total", "-" },
	{ "state.config.beta1", "0.80000000000000004" },
	{ "state.config.beta2", "0.94999999999999996" },
	{ "state.config.resid_offset", "0.5" },
	{ "state.config.resid_offset_channels", "0" },
	{ "state.config.init_scale", "1024" },
	{ "state.run.policies", "fp32,bf16-mixed+gemm=fp16" },
	{ "state.run.data", "/texts/mine.txt" },
};
enum { NSAVED = sizeof saved / sizeof saved[0] };

/* The run state with saved's pairs, key skip left out and key over (when
 * not NULL) set to value. */
static void make_state(run_state *rs, const char *skip, const char *over, const char *value)
{
	run_state_init(rs);
	for (size_t i = 0; i < NSAVED; i++) {
		if (skip && !strcmp(saved[i][0], skip))
			continue;
		const char *v = over && !strcmp(saved[i][0], over) ? value : saved[i][1];
		ck_assert_int_eq(run_state_set_meta(rs, saved[i][0], v), MP_OK);
	}
}

/* Parses the command line (space-separated, from the subcommand on) and
 * resumes it from rs; the status, with the message in err and the note. */
static mp_status resume_line(const char *line, const run_state *rs, train_opts *o, char *err, size_t n, char *note)
{
	static char buf[1024];
	char *argv[64], *save = NULL;
	int argc = 0;
	snprintf(buf, sizeof buf, "%s", line);
	for (char *t = strtok_r(buf, " ", &save); t && argc < 63; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	ck_assert_int_eq(train_opts_parse(argc, argv, o, err, n), MP_OK);
	return train_opts_resume(o, rs, "x.safetensors", note, 512, err, n);
}

START_TEST(bare)
{
	run_state rs;
	make_state(&rs, NULL, NULL, NULL);
	train_opts *o = malloc(sizeof *o);
	char err[2048], note[512];
	mp_status st = resume_line("train --resume x.safetensors --steps 20", &rs, o, err, sizeof err, note);
	ck_assert_msg(st == MP_OK, "%s", err);
	ck_assert_uint_eq(o->cfg.model.L, 3);
	ck_assert_uint_eq(o->cfg.model.NH, 2);
	ck_assert_uint_eq(o->cfg.model.C, 48);
	ck_assert_uint_eq(o->cfg.model.T, 64);
	ck_assert_uint_eq(o->cfg.t, 24);
	ck_assert_uint_eq(o->cfg.B, 6);
	ck_assert_uint_eq(o->cfg.eval_every, 7);
	ck_assert_uint_eq(o->cfg.seed, 99);
	ck_assert(o->cfg.lr == 0.0025);
	ck_assert_int_eq(o->cfg.sched.kind, LR_CONSTANT);
	ck_assert_uint_eq(o->cfg.sched.warmup, 2);
	ck_assert_uint_eq(o->cfg.sched.total, 20);   /* a constant lr's run goes on to the new --steps */
	ck_assert(o->cfg.beta1 == 0.8 && o->cfg.beta2 == 0.95);
	ck_assert(o->cfg.resid_offset == 0.5f);
	ck_assert_int_eq(o->cfg.resid_offset_channels, 0);
	ck_assert(o->cfg.init_scale == 1024);
	ck_assert_int_eq(o->cfg.device, TRAIN_DEVICE_CPU);
	ck_assert_str_eq(o->policies, "fp32,bf16-mixed+gemm=fp16");
	ck_assert_uint_eq(o->nchanges, 0);
	ck_assert_str_eq(o->data, "/texts/mine.txt");
	ck_assert_uint_eq(o->steps, 20);
	ck_assert_str_eq(note, "");
	free(o);
	run_state_free(&rs);
}
END_TEST

/* err holds every one of the fragments. */
static void has_all(const char *err, const char *const *frag, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(strstr(err, frag[i]), "'%s' lacks '%s'", err, frag[i]);
}

START_TEST(agree_and_contradict)
{
	run_state rs;
	make_state(&rs, NULL, NULL, NULL);
	train_opts *o = malloc(sizeof *o);
	char err[2048], note[512];
	/* every value as saved, written as a person would */
	mp_status st = resume_line("train --resume x --steps 9 --layers 3 --heads 2 --channels 48 --batch 6 "
	                           "--seed 99 --lr 0.0025 --beta1 0.8 --warmup 2 --policy fp32,bf16-mixed+gemm=fp16 "
	                           "--data /texts/mine.txt",
	                           &rs, o, err, sizeof err, note);
	ck_assert_msg(st == MP_OK, "%s", err);
	static const struct {
		const char *line;
		const char *frag[3];
	} bad[] = {
		{ "--heads 4", { "--heads 4", "--heads 2", "x.safetensors" } },
		{ "--seed 7", { "--seed 7", "--seed 99" } },
		{ "--lr 0.01", { "--lr 0.01", "--lr 0.0025" } },
		{ "--lr-schedule cosine", { "--lr-schedule cosine", "--lr-schedule constant" } },
		{ "--context 64", { "--context 64", "--context 24" } },
		{ "--resid-offset-channels 2", { "--resid-offset-channels 2", "every channel" } },
		{ "--preset tiny", { "--preset tiny", "--layers 1", "--layers 3" } },
		{ "--policy fp32", { "--policy", "1 policy", "has 2 (fp32,bf16-mixed+gemm=fp16" } },
		{ "--policy fp32,bf16-mixed", { "policy bf16-mixed;", "has bf16-mixed+gemm=fp16" } },
		{ "--gemm bf16", { "fp32+gemm=bf16", "has fp32" } },
		{ "--data other.txt", { "--data other.txt", "trained on /texts/mine.txt" } },
		{ "--loss-scale dynamic:8", { "--loss-scale", "8", "1024" } },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char line[256];
		snprintf(line, sizeof line, "train --resume x --steps 9 %s", bad[i].line);
		st = resume_line(line, &rs, o, err, sizeof err, note);
		ck_assert_msg(st == MP_EINVAL, "%s: accepted", bad[i].line);
		size_t n = 0;
		while (n < 3 && bad[i].frag[n])
			n++;
		has_all(err, bad[i].frag, n);
	}
	free(o);
	run_state_free(&rs);
}
END_TEST

START_TEST(cosine_length)
{
	run_state rs;
	make_state(&rs, NULL, "state.config.lr_schedule", "cosine");
	run_state r2;
	make_state(&r2, "state.config.lr_total", "state.config.lr_schedule", "cosine");
	run_state_set_meta(&r2, "state.config.lr_total", "30");
	train_opts *o = malloc(sizeof *o);
	char err[2048], note[512];
	/* no --steps: the cosine's length */
	mp_status st = resume_line("train --resume x", &r2, o, err, sizeof err, note);
	ck_assert_msg(st == MP_OK, "%s", err);
	ck_assert_uint_eq(o->steps, 30);
	ck_assert_uint_eq(o->cfg.sched.total, 30);
	st = resume_line("train --resume x --steps 30", &r2, o, err, sizeof err, note);
	ck_assert_msg(st == MP_OK, "%s", err);
	st = resume_line("train --resume x --steps 31", &r2, o, err, sizeof err, note);
	ck_assert_int_eq(st, MP_EINVAL);
	const char *frag[] = { "--steps 31", "over --steps 30" };
	has_all(err, frag, 2);
	/* a cosine whose length is not a count */
	st = resume_line("train --resume x", &rs, o, err, sizeof err, note);
	ck_assert_int_eq(st, MP_EINVAL);
	ck_assert_msg(strstr(err, "state.config.lr_total '-'"), "%s", err);
	free(o);
	run_state_free(&rs);
	run_state_free(&r2);
}
END_TEST

START_TEST(missing_and_old)
{
	train_opts *o = malloc(sizeof *o);
	char err[2048], note[512];
	run_state rs;
	make_state(&rs, "state.config.seed", NULL, NULL);
	ck_assert_int_eq(resume_line("train --resume x", &rs, o, err, sizeof err, note), MP_EINVAL);
	ck_assert_msg(strstr(err, "does not record state.config.seed (give --seed"), "%s", err);
	run_state_free(&rs);
	make_state(&rs, "state.config.n_positions", NULL, NULL);
	ck_assert_int_eq(resume_line("train --resume x", &rs, o, err, sizeof err, note), MP_EINVAL);
	ck_assert_msg(strstr(err, "give --preset or --context"), "%s", err);
	run_state_free(&rs);
	/* a value out of the option's range is refused by the option's own check */
	make_state(&rs, NULL, "state.config.n_layer", "0");
	ck_assert_int_eq(resume_line("train --resume x", &rs, o, err, sizeof err, note), MP_EINVAL);
	ck_assert_msg(strstr(err, "state.config.n_layer '0' is not a value of --layers"), "%s", err);
	run_state_free(&rs);
	/* a file without the run's list or its text: its one policy, --data as given, a note */
	make_state(&rs, "state.run.policies", NULL, NULL);
	ck_assert_int_eq(resume_line("train --resume x", &rs, o, err, sizeof err, note), MP_OK);
	ck_assert_str_eq(o->policies, "fp32");
	ck_assert_ptr_null(o->data);
	ck_assert_msg(strstr(note, "does not record the text it trained on: --data as given"), "%s", note);
	free(o);
	run_state_free(&rs);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("train_opts_resume");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, bare);
	tcase_add_test(tc, agree_and_contradict);
	tcase_add_test(tc, cosine_length);
	tcase_add_test(tc, missing_and_old);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
