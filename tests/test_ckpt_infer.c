/* A saved model at work (src/ckpt/infer.c): eval of the saved file equals
 * the trainer's own held-out evaluation of the same windows; eval's window
 * rule against per-window forward passes done here one window at a time;
 * sampling is deterministic per seed and greedy at temperature 0. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt/gpt2.h"
#include "ckpt/infer.h"
#include "train/train.h"
#include "testutil.h"

void openblas_set_num_threads(int num_threads);

static const gpt_config cfg_small = { .V = 128, .T = 16, .C = 32, .L = 1, .NH = 2 };

/* The training's evaluation (trainer_eval: cfg.eval_batches batches of B
 * held-out windows drawn by corpus_batch, through the policy's backend)
 * against eval's code on the saved file over those same windows. */
START_TEST(eval_matches_training)
{
	char err[512];
	corpus data;
	char corpus_path[4096];
	corpus_default_path(corpus_path, sizeof corpus_path);
	ck_assert_msg(corpus_load(&data, corpus_path, 16, err, sizeof err) == MP_OK, "%s", err);
	train_config cfg = train_config_default();
	cfg.model = cfg_small;
	cfg.B = 6;
	cfg.t = 12;   /* windows shorter than the context, as train --context allows */
	cfg.eval_batches = 3;
	cfg.eval_every = 0;
	cfg.lr = 3e-3;
	train_policy p;
	ck_assert(policy_from_name("fp32", &p) == MP_OK);
	trainer *t;
	ck_assert(trainer_create(&t, &cfg, &p, &data, NULL, 0) == MP_OK);
	train_stats s;
	for (int i = 0; i < 5; i++)
		ck_assert(trainer_step(t, &s) == MP_OK);
	double train_val = trainer_eval(t);

	char dir[] = "/tmp/test_ckpt_infer.XXXXXX", path[64];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/m.safetensors", dir);
	ckpt_info info = { .policy = "fp32", .step = 5, .seed = cfg.seed, .dtype = ST_F32 };
	ck_assert(ckpt_save(path, cfg.model, trainer_model(t)->params_memory, &info, err, sizeof err) == MP_OK);
	ckpt_model ck;
	ck_assert_msg(ckpt_open(&ck, path, err, sizeof err) == MP_OK, "%s", err);
	float *w = malloc(ck.num_params * sizeof *w);
	ck_assert(ckpt_weights(&ck, w) == MP_OK);
	gpt_model m;
	ck_assert(infer_init(&m, ck.config, w, INFER_BATCH, cfg.t) == MP_OK);

	size_t nwin = cfg.eval_batches * cfg.B, bt = cfg.B * cfg.t;
	int *in = malloc(nwin * cfg.t * sizeof *in), *tg = malloc(nwin * cfg.t * sizeof *tg);
	for (size_t b = 0; b < cfg.eval_batches; b++)
		corpus_batch(&data, true, cfg.seed, b, cfg.B, cfg.t, in + b * bt, tg + b * bt);
	double sum;
	ck_assert(infer_loss_sum(&m, in, tg, nwin, &sum) == MP_OK);
	double ours = sum / (double)(nwin * cfg.t);
	/* the same fp32 forward; only the order of the final sums differs */
	ck_assert_msg(fabs(ours - train_val) <= 2e-6 * fabs(train_val), "eval %.9f, training %.9f", ours, train_val);
	/* and it is a real comparison: the initial weights give another loss */
	gpt_model fresh;
	ck_assert(gpt_init(&fresh, cfg.model, 1, 1, cfg.seed) == MP_OK);
	gpt_model m0;
	ck_assert(infer_init(&m0, cfg.model, fresh.params_memory, INFER_BATCH, cfg.t) == MP_OK);
	ck_assert(infer_loss_sum(&m0, in, tg, nwin, &sum) == MP_OK);
	ck_assert(fabs(sum / (double)(nwin * cfg.t) - train_val) > 1e-3);

	gpt_free(&fresh);
	gpt_free(&m0);
	gpt_free(&m);
	free(in);
	free(tg);
	free(w);
	ckpt_close(&ck);
	unlink(path);
	rmdir(dir);
	trainer_free(t);
	corpus_free(&data);
}
END_TEST

/* The GPU trainer's path (its code on the CPU: TRAIN_DEVICE_EMULATED),
 * where the weights live in the backend and only trainer_sync reads them
 * back: --init's weights go in, a saved file holds what the backend has. */
START_TEST(device_backend_init_and_save)
{
	char err[512];
	corpus data;
	char corpus_path[4096];
	corpus_default_path(corpus_path, sizeof corpus_path);
	ck_assert_msg(corpus_load(&data, corpus_path, 16, err, sizeof err) == MP_OK, "%s", err);
	train_config cfg = train_config_default();
	cfg.model = cfg_small;
	cfg.B = 4;
	cfg.t = 16;
	cfg.eval_every = 0;
	cfg.device = TRAIN_DEVICE_EMULATED;
	gpt_model src;
	ck_assert(gpt_init(&src, cfg.model, 1, 1, 99) == MP_OK);   /* not cfg.seed's weights */
	cfg.init_weights = src.params_memory;
	train_policy p;
	ck_assert(policy_from_name("fp32", &p) == MP_OK);
	trainer *t;
	ck_assert(trainer_create(&t, &cfg, &p, &data, NULL, 0) == MP_OK);
	ck_assert(trainer_sync(t) == MP_OK);
	ck_assert_mem_eq(trainer_model(t)->params_memory, src.params_memory, src.num_params * sizeof(float));
	train_stats s;
	for (int i = 0; i < 3; i++)
		ck_assert(trainer_step(t, &s) == MP_OK);
	ck_assert(trainer_sync(t) == MP_OK);
	const gpt_model *tm = trainer_model(t);
	ck_assert(memcmp(tm->params_memory, src.params_memory, src.num_params * sizeof(float)) != 0);
	char dir[] = "/tmp/test_ckpt_dev.XXXXXX", path[64];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/d.safetensors", dir);
	ckpt_info info = { .policy = "fp32", .step = 3, .dtype = ST_F32 };
	ck_assert(ckpt_save(path, cfg.model, tm->params_memory, &info, err, sizeof err) == MP_OK);
	ckpt_model ck;
	ck_assert_msg(ckpt_open(&ck, path, err, sizeof err) == MP_OK, "%s", err);
	float *w = malloc(ck.num_params * sizeof *w);
	ck_assert(ckpt_weights(&ck, w) == MP_OK);
	ck_assert_mem_eq(w, tm->params_memory, ck.num_params * sizeof *w);
	free(w);
	ckpt_close(&ck);
	unlink(path);
	rmdir(dir);
	gpt_free(&src);
	trainer_free(t);
	corpus_free(&data);
}
END_TEST

/* Random ASCII text from a seed. */
static void fill_text(unsigned char *text, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		text[i] = (unsigned char)(32 + (seed >> 16) % 95);
	}
}

/* Mean loss of window [start, start + T) predicting one further, through
 * a model of batch 1 (gpt_forward's own mean). */
static double window_loss(gpt_model *one, const unsigned char *text, size_t start)
{
	size_t T = one->t;
	int in[64], tg[64];
	for (size_t i = 0; i < T; i++) {
		in[i] = text[start + i];
		tg[i] = text[start + i + 1];
	}
	ck_assert(gpt_forward(one, NULL, in, tg) == MP_OK);
	return one->mean_loss;
}

START_TEST(eval_windows)
{
	gpt_model init, m, one;
	ck_assert(gpt_init(&init, cfg_small, 1, 1, 3) == MP_OK);
	ck_assert(infer_init(&m, cfg_small, init.params_memory, INFER_BATCH, cfg_small.T) == MP_OK);
	ck_assert(infer_init(&one, cfg_small, init.params_memory, 1, cfg_small.T) == MP_OK);
	size_t T = cfg_small.T;
	unsigned char text[16 * 11 + 4];
	fill_text(text, sizeof text, 9);
	double loss;
	size_t tokens;
	/* ten whole windows and a partial one (3 characters): the last is dropped;
	 * ten windows are a full batch of 8 and a partial batch of 2 */
	size_t n = 10 * T + 1 + 3;
	ck_assert(infer_eval_text(&m, text, n, &loss, &tokens) == MP_OK);
	ck_assert_uint_eq(tokens, 10 * T);
	double want = 0;
	for (size_t k = 0; k < 10; k++)
		want += window_loss(&one, text, k * T) / 10;
	ck_assert_msg(fabs(loss - want) <= 1e-6 * want, "eval %.9f, windows %.9f", loss, want);
	/* exactly T + 1 characters: one window; T: none */
	ck_assert(infer_eval_text(&m, text + 5, T + 1, &loss, &tokens) == MP_OK);
	ck_assert_uint_eq(tokens, T);
	ck_assert(fabs(loss - window_loss(&one, text + 5, 0)) <= 1e-6 * loss);
	ck_assert(infer_eval_text(&m, text, T, &loss, &tokens) == MP_EINVAL);
	gpt_free(&init);
	gpt_free(&m);
	gpt_free(&one);
}
END_TEST

START_TEST(sampling)
{
	gpt_model init, m, one;
	ck_assert(gpt_init(&init, cfg_small, 1, 1, 5) == MP_OK);
	/* sharper logits than the initialisation's, so greedy choices are clear */
	for (size_t i = 0; i < init.num_params; i++)
		init.params_memory[i] *= 20.0f;
	ck_assert(infer_init(&m, cfg_small, init.params_memory, 1, cfg_small.T) == MP_OK);
	ck_assert(infer_init(&one, cfg_small, init.params_memory, 1, cfg_small.T) == MP_OK);
	int prompt[3] = { 'T', 'h', 'e' }, a[40], b[40], c[40];
	infer_sample_opts o = { .tokens = 40, .temperature = 1.0, .seed = 11 };
	ck_assert(infer_sample(&m, prompt, 3, &o, a) == MP_OK);
	ck_assert(infer_sample(&m, prompt, 3, &o, b) == MP_OK);
	ck_assert_mem_eq(a, b, sizeof a);
	o.seed = 12;
	ck_assert(infer_sample(&m, prompt, 3, &o, c) == MP_OK);
	ck_assert(memcmp(a, c, sizeof a) != 0);
	for (size_t i = 0; i < 40; i++)
		ck_assert(a[i] >= 0 && a[i] < 128);

	/* temperature 0: the argmax of the last position's logits, found here */
	o.temperature = 0;
	ck_assert(infer_sample(&m, prompt, 3, &o, a) == MP_OK);
	int ctx[16] = { 'T', 'h', 'e' };
	size_t len = 3;
	for (size_t k = 0; k < 5; k++) {
		ck_assert(gpt_forward(&one, NULL, ctx, NULL) == MP_OK);
		const float *lg = one.acts.logits + (len - 1) * 128;
		int best = 0;
		for (int v = 1; v < 128; v++)
			best = lg[v] > lg[best] ? v : best;
		ck_assert_int_eq(a[k], best);
		ctx[len++] = best;
	}
	/* top-k 1 at any temperature is the same greedy choice */
	o.temperature = 2.0;
	o.top_k = 1;
	ck_assert(infer_sample(&m, prompt, 3, &o, b) == MP_OK);
	ck_assert_mem_eq(a, b, sizeof a);
	/* a prompt longer than the context: only its last T tokens count */
	int longp[40];
	for (int i = 0; i < 40; i++)
		longp[i] = 'a' + i % 26;
	o.temperature = 0;
	o.top_k = 0;
	o.tokens = 4;
	ck_assert(infer_sample(&m, longp, 40, &o, a) == MP_OK);
	ck_assert(infer_sample(&m, longp + 40 - 16, 16, &o, b) == MP_OK);
	ck_assert_mem_eq(a, b, 4 * sizeof *a);
	int bad[1] = { 200 };
	ck_assert(infer_sample(&m, bad, 1, &o, a) == MP_EINVAL);
	ck_assert(infer_sample(&m, prompt, 0, &o, a) == MP_EINVAL);
	gpt_free(&init);
	gpt_free(&m);
	gpt_free(&one);
}
END_TEST

int main(int argc, char **argv)
{
	(void)argc;
	testutil_fast_blas(argv);
	openblas_set_num_threads(1);
	Suite *s = suite_create("ckpt_infer");
	TCase *tc = tcase_create("infer");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, eval_matches_training);
	tcase_add_test(tc, device_backend_init_and_save);
	tcase_add_test(tc, eval_windows);
	tcase_add_test(tc, sampling);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
