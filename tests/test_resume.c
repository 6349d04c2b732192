/* train --resume's internals: 2k steps in one trainer against k steps, the
 * run state exported, a fresh trainer, the state imported, k more steps.
 * The oracle is the uninterrupted run itself: every record (all the CSV
 * columns but ms), the final weights and the final state must be the same
 * bits. Then the layout of the exported tensors against model.h's storage
 * order, and the import's checks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/train.h"
#include "train/train_csv.h"
#include "train/train_state.h"
#include "testutil.h"

void openblas_set_num_threads(int num_threads);

static corpus data;

static void load_corpus(void)
{
	char err[512];
	char corpus_path[4096];
	corpus_default_path(corpus_path, sizeof corpus_path);
	ck_assert_msg(corpus_load(&data, corpus_path, 16, err, sizeof err) == MP_OK, "%s", err);
}

/* A shape that takes milliseconds a step: 2 layers, 32 channels,
 * an odd batch (halves of 3 and 2), evaluations every 2 steps so that
 * val_loss appears on both sides of the split. */
static train_config small_config(void)
{
	train_config cfg = train_config_default();
	cfg.model.L = 2;
	cfg.model.C = 32;
	cfg.model.NH = 2;
	cfg.model.T = 16;
	cfg.B = 5;
	cfg.t = 16;
	cfg.lr = 3e-3;
	cfg.eval_every = 2;
	cfg.eval_batches = 2;
	return cfg;
}

static train_policy policy_named(const char *name, const char *key, const char *value)
{
	train_policy p;
	ck_assert_msg(policy_from_name(name, &p) == MP_OK, "%s", name);
	char err[256];
	if (key)
		ck_assert_msg(policy_set(&p, key, value, err, sizeof err) == MP_OK, "%s", err);
	return p;
}

/* The CSV row of s without its ms column. */
static void csv_text(const char *policy, const train_stats *s, char *buf, size_t n)
{
	train_stats z = *s;
	z.ms = 0;
	FILE *fp = fmemopen(buf, n, "w");
	ck_assert(fp != NULL);
	csvw w;
	csvw_init(&w, fp);
	train_csv_row(&w, policy, &z);
	fclose(fp);
}

/* Two records equal in every bit but ms's (NaN val_loss included). */
static void assert_same_record(const char *what, const train_stats *a, const train_stats *b)
{
	const double x[] = { a->loss, a->val_loss, a->grad_norm, a->loss_scale, a->underflow_frac,
		             a->lost_update_frac, a->resid_lost_frac, a->overflow_frac };
	const double y[] = { b->loss, b->val_loss, b->grad_norm, b->loss_scale, b->underflow_frac,
		             b->lost_update_frac, b->resid_lost_frac, b->overflow_frac };
	ck_assert_msg(a->step == b->step && a->skipped == b->skipped && !memcmp(x, y, sizeof x),
	              "%s step %zu: loss %.17g / %.17g, grad_norm %.17g / %.17g, scale %g / %g, val %.17g / %.17g", what,
	              a->step, a->loss, b->loss, a->grad_norm, b->grad_norm, a->loss_scale, b->loss_scale, a->val_loss,
	              b->val_loss);
	char ra[512], rb[512];
	csv_text(what, a, ra, sizeof ra);
	csv_text(what, b, rb, sizeof rb);
	ck_assert_str_eq(ra, rb);
}

/* Every tensor and metadata pair of a in b, with the same bytes. */
static void assert_same_state(const char *what, const run_state *a, const run_state *b)
{
	ck_assert_uint_eq(a->n, b->n);
	ck_assert_uint_eq(a->nmeta, b->nmeta);
	for (size_t i = 0; i < a->n; i++) {
		const rs_tensor *x = &a->tensors[i], *y = run_state_find(b, x->name);
		ck_assert_msg(y != NULL, "%s: %s missing", what, x->name);
		ck_assert_msg(x->dtype == y->dtype && x->nbytes == y->nbytes && !memcmp(x->data, y->data, x->nbytes),
		              "%s: tensor %s differs", what, x->name);
	}
	for (size_t i = 0; i < a->nmeta; i++) {
		const char *v = run_state_meta(b, a->meta[i].key);
		ck_assert_msg(v && !strcmp(v, a->meta[i].value), "%s: metadata %s differs", what, a->meta[i].key);
	}
}

static int64_t scalar_i64(const run_state *rs, const char *name)
{
	const rs_tensor *x = run_state_find(rs, name);
	ck_assert_msg(x && x->dtype == RS_I64 && x->ndim == 0, "%s", name);
	int64_t v;
	memcpy(&v, x->data, sizeof v);
	return v;
}

typedef struct {
	size_t skipped_first, skipped_second;   /* in steps [0, k) and [k, 2k) of the straight run */
	int64_t clean_at_k, updates_at_k;       /* the exported state after k steps */
	double scale_first, scale_last;
} resume_facts;

static trainer *make(const train_config *cfg, const train_policy *p)
{
	trainer *t;
	ck_assert_int_eq(trainer_create(&t, cfg, p, &data, NULL, 0), MP_OK);
	return t;
}

/* 2k steps straight against k, export, a fresh trainer, import, k more. */
static resume_facts check_resume(const train_config *cfg, const train_policy *p, size_t k)
{
	resume_facts f = { 0 };
	train_stats *straight = calloc(2 * k, sizeof *straight), s;
	trainer *a = make(cfg, p);
	for (size_t i = 0; i < 2 * k; i++) {
		ck_assert_int_eq(trainer_step(a, &straight[i]), MP_OK);
		(i < k ? &f.skipped_first : &f.skipped_second)[0] += straight[i].skipped;
	}
	f.scale_first = straight[0].loss_scale;
	f.scale_last = straight[2 * k - 1].loss_scale;

	trainer *b = make(cfg, p);
	for (size_t i = 0; i < k; i++) {
		ck_assert_int_eq(trainer_step(b, &s), MP_OK);
		assert_same_record(p->name, &straight[i], &s);
	}
	run_state rs;
	run_state_init(&rs);
	ck_assert_int_eq(trainer_state_export(b, &rs), MP_OK);
	trainer_free(b);
	f.clean_at_k = scalar_i64(&rs, "state.scaler.clean_steps");
	f.updates_at_k = scalar_i64(&rs, "optimizer.step");
	ck_assert_int_eq(scalar_i64(&rs, "state.step"), (int64_t)k);

	trainer *c = make(cfg, p);
	char err[512];
	ck_assert_msg(trainer_state_import(c, &rs, err, sizeof err) == MP_OK, "%s: %s", p->name, err);
	ck_assert_uint_eq(trainer_steps_done(c), k);
	run_state_free(&rs);
	for (size_t i = k; i < 2 * k; i++) {
		ck_assert_int_eq(trainer_step(c, &s), MP_OK);
		assert_same_record(p->name, &straight[i], &s);
	}
	ck_assert_int_eq(trainer_sync(a), MP_OK);
	ck_assert_int_eq(trainer_sync(c), MP_OK);
	const gpt_model *ma = trainer_model(a), *mc = trainer_model(c);
	ck_assert_msg(!memcmp(ma->params_memory, mc->params_memory, ma->num_params * sizeof(float)),
	              "%s: final weights differ", p->name);
	double va = trainer_v_ratio(a), vc = trainer_v_ratio(c);
	ck_assert_msg(!memcmp(&va, &vc, sizeof va), "%s: v_ratio %.17g / %.17g", p->name, va, vc);
	run_state ea, ec;
	run_state_init(&ea);
	run_state_init(&ec);
	ck_assert_int_eq(trainer_state_export(a, &ea), MP_OK);
	ck_assert_int_eq(trainer_state_export(c, &ec), MP_OK);
	assert_same_state(p->name, &ea, &ec);
	run_state_free(&ea);
	run_state_free(&ec);
	trainer_free(a);
	trainer_free(c);
	free(straight);
	return f;
}

/* --- every preset, and the options whose state is easy to lose --- */

START_TEST(every_preset)
{
	load_corpus();
	train_config cfg = small_config();
	for (size_t i = 0; i < policy_preset_count(); i++)
		check_resume(&cfg, policy_preset(i), 3);
	corpus_free(&data);
}
END_TEST

/* fp16-mixed from S = 2^24: the fp16 gradients overflow (x S above 65504)
 * until S has halved a few times, then with a growth interval of 3 the
 * scale doubles after 3 clean steps and the next overflow halves it again.
 * The split falls where the clean-step count is not 0, so a resume that
 * forgot it would double S at another step. */
START_TEST(dynamic_scale_with_skips)
{
	load_corpus();
	train_config cfg = small_config();
	cfg.init_scale = 16777216.0;
	cfg.scale_growth_interval = 3;
	train_policy p = policy_named("fp16-mixed", NULL, NULL);
	bool clean_mid_count = false;
	for (size_t k = 4; k <= 8 && !clean_mid_count; k++) {
		resume_facts f = check_resume(&cfg, &p, k);
		ck_assert_msg(f.skipped_first > 0, "no skipped step before the split (k %zu)", k);
		ck_assert(f.updates_at_k < (int64_t)k);
		clean_mid_count = f.clean_at_k > 0 && f.skipped_second + (f.scale_last != f.scale_first) > 0;
	}
	ck_assert_msg(clean_mid_count, "no split with a running clean-step count");
	corpus_free(&data);
}
END_TEST

/* A warmup of 2 updates then a cosine over the 8: the lr of update n
 * depends on optimizer.step, which the split lands in the middle of. */
START_TEST(warmup_cosine)
{
	load_corpus();
	train_config cfg = small_config();
	cfg.sched = (lr_schedule){ .kind = LR_COSINE, .warmup = 2, .lr_min = 1e-4, .total = 8 };
	check_resume(&cfg, policy_preset(0), 4);
	train_policy p = policy_named("bf16-mixed", NULL, NULL);
	check_resume(&cfg, &p, 1);
	corpus_free(&data);
}
END_TEST

/* Adam's moments in bf16 rounded stochastically (with the fp32 reference
 * of v), weights in fp16 with Kahan, fp16 weights with SR, fp8 moments,
 * and a run on one thread resumed: the same bits as on two. */
START_TEST(optim_state_sr_and_16bit_weights)
{
	load_corpus();
	train_config cfg = small_config();
	train_policy p = policy_named("bf16-mixed", "optim-state", "bf16:sr");
	check_resume(&cfg, &p, 3);
	p = policy_named("bf16-pure", "weights", "fp16:kahan");
	check_resume(&cfg, &p, 3);
	p = policy_named("bf16-pure", "weights", "fp16:sr");
	check_resume(&cfg, &p, 2);
	/* fp8 moments, which the state keeps as F32 (exactly: fp8 values are fp32's) */
	p = policy_named("fp8-mixed", "optim-state", "fp8-e5m2:sr");
	check_resume(&cfg, &p, 2);
	cfg.threads = 1;
	check_resume(&cfg, policy_preset(5), 3);
	corpus_free(&data);
}
END_TEST

/* --- the exported layout, from model.h's storage order --- */

static float elem_f32(const rs_tensor *x, size_t i)
{
	float v;
	if (x->dtype == RS_F32) {
		memcpy(&v, (const char *)x->data + 4 * i, 4);
		return v;
	}
	/* BF16: the top half of an fp32 pattern */
	ck_assert_int_eq(x->dtype, RS_BF16);
	uint16_t h;
	memcpy(&h, (const char *)x->data + 2 * i, 2);
	uint32_t u = (uint32_t)h << 16;
	memcpy(&v, &u, 4);
	return v;
}

START_TEST(gpt2_layout)
{
	load_corpus();
	train_config cfg = small_config();
	const char *names[] = { "fp32", "bf16-pure" };
	for (size_t n = 0; n < 2; n++) {
		train_policy p = policy_named(names[n], NULL, NULL);
		trainer *t = make(&cfg, &p);
		train_stats s;
		ck_assert_int_eq(trainer_step(t, &s), MP_OK);
		run_state rs;
		run_state_init(&rs);
		ck_assert_int_eq(trainer_state_export(t, &rs), MP_OK);
		const gpt_model *m = trainer_model(t);
		size_t C = cfg.model.C, V = cfg.model.V;
		rs_dtype wd = n ? RS_BF16 : RS_F32;
		/* wte (V,C) as stored */
		const rs_tensor *x = run_state_find(&rs, "wte.weight");
		ck_assert(x && x->dtype == wd && x->ndim == 2 && x->shape[0] == V && x->shape[1] == C);
		ck_assert(elem_f32(x, 7 * C + 5) == m->params.wte[7 * C + 5]);
		/* c_attn: ours (3C, C) out-major, Conv1D's (C, 3C) in-major */
		x = run_state_find(&rs, "h.1.attn.c_attn.weight");
		ck_assert(x && x->ndim == 2 && x->shape[0] == C && x->shape[1] == 3 * C);
		for (size_t i = 0; i < C; i += 7)
			for (size_t j = 0; j < 3 * C; j += 11)
				ck_assert(elem_f32(x, i * 3 * C + j) == m->params.qkvw[3 * C * C + j * C + i]);
		/* mlp.c_proj: ours (C, 4C), Conv1D's (4C, C) */
		x = run_state_find(&rs, "h.0.mlp.c_proj.weight");
		ck_assert(x && x->shape[0] == 4 * C && x->shape[1] == C);
		ck_assert(elem_f32(x, 100 * C + 3) == m->params.fcprojw[3 * 4 * C + 100]);
		x = run_state_find(&rs, "h.1.attn.c_attn.bias");
		ck_assert(x && x->ndim == 1 && x->shape[0] == 3 * C);
		ck_assert(elem_f32(x, 40) == m->params.qkvb[3 * C + 40]);
		/* Adam's moments in the same layout and the policy's format */
		x = run_state_find(&rs, "optimizer.m.h.1.mlp.c_fc.weight");
		ck_assert(x && x->dtype == wd && x->shape[0] == C && x->shape[1] == 4 * C);
		ck_assert((run_state_find(&rs, "optimizer.v_ref.ln_f.bias") != NULL) == (n == 1));
		ck_assert(run_state_find(&rs, "optimizer.kahan.ln_f.bias") == NULL);
		run_state_free(&rs);
		trainer_free(t);
	}
	corpus_free(&data);
}
END_TEST

/* --- the import's checks --- */

/* A copy of src without the tensor called drop (NULL: none). */
static void copy_state(run_state *dst, const run_state *src, const char *drop)
{
	run_state_init(dst);
	for (size_t i = 0; i < src->n; i++) {
		const rs_tensor *x = &src->tensors[i];
		if (!drop || strcmp(x->name, drop))
			ck_assert_int_eq(run_state_add(dst, x->name, x->dtype, x->ndim, x->shape, x->data), MP_OK);
	}
	for (size_t i = 0; i < src->nmeta; i++)
		ck_assert_int_eq(run_state_set_meta(dst, src->meta[i].key, src->meta[i].value), MP_OK);
}

/* Importing bad into a fresh trainer fails naming `want`, and leaves it fresh. */
static void assert_refused(const train_config *cfg, const train_policy *p, const run_state *bad, const char *want)
{
	trainer *t = make(cfg, p), *fresh = make(cfg, p);
	char err[512];
	ck_assert_int_eq(trainer_state_import(t, bad, err, sizeof err), MP_EINVAL);
	ck_assert_msg(strstr(err, want) != NULL, "'%s' does not name '%s'", err, want);
	ck_assert_uint_eq(trainer_steps_done(t), 0);
	const gpt_model *a = trainer_model(t), *b = trainer_model(fresh);
	ck_assert(!memcmp(a->params_memory, b->params_memory, a->num_params * sizeof(float)));
	trainer_free(t);
	trainer_free(fresh);
}

/* Delayed fp8 scaling keeps an amax history per tensor and the next
 * scale: a 2-step window (so the split falls after it has wrapped), the
 * most_recent algorithm, a margin; and current scaling, which keeps none.
 * A resume that lost the history would cast step k with scale 1 (the
 * initial one) and differ from the straight run. */
START_TEST(fp8_scaling_state)
{
	load_corpus();
	train_config cfg = small_config();
	train_policy p = policy_named("fp8-delayed", "amax-history", "2");
	char err[256];
	ck_assert_int_eq(policy_set(&p, "fp8-margin", "1", err, sizeof err), MP_OK);
	check_resume(&cfg, &p, 4);
	p = policy_named("fp8-delayed", "amax-algo", "most_recent");
	check_resume(&cfg, &p, 3);
	p = policy_named("fp8-current", NULL, NULL);
	check_resume(&cfg, &p, 3);

	/* the state holds the tensors: (L*4*3, H) histories and scales, the
	 * scales no longer the initial 1 after a step; without them, refused */
	p = policy_named("fp8-delayed", "amax-history", "2");
	trainer *t = make(&cfg, &p);
	train_stats s;
	ck_assert_int_eq(trainer_step(t, &s), MP_OK);
	run_state rs, bad;
	run_state_init(&rs);
	ck_assert_int_eq(trainer_state_export(t, &rs), MP_OK);
	trainer_free(t);
	const rs_tensor *h = run_state_find(&rs, "state.fp8.amax_history");
	const rs_tensor *sc = run_state_find(&rs, "state.fp8.scale");
	ck_assert(h && h->ndim == 2 && h->shape[0] == cfg.model.L * 12 && h->shape[1] == 2);
	ck_assert(sc && sc->ndim == 1 && sc->shape[0] == cfg.model.L * 12);
	float s0;
	memcpy(&s0, sc->data, sizeof s0);
	ck_assert_msg(s0 != 1.0f, "scale of h.0.attn.c_attn.weight still 1 after a step");
	copy_state(&bad, &rs, "state.fp8.scale");
	assert_refused(&cfg, &p, &bad, "'state.fp8.scale' is missing");
	run_state_free(&bad);
	copy_state(&bad, &rs, "state.fp8.scale");
	float neg[24];
	for (size_t i = 0; i < 24; i++)
		neg[i] = -1.0f;
	ck_assert_int_eq(run_state_add(&bad, "state.fp8.scale", RS_F32, 1, (size_t[]){ 24 }, neg), MP_OK);
	assert_refused(&cfg, &p, &bad, "state.fp8.scale[0] is -1, not a positive scale");
	run_state_free(&bad);
	/* another window is another policy */
	train_policy q = policy_named("fp8-delayed", "amax-history", "3");
	assert_refused(&cfg, &q, &rs, "state.policy");
	/* nor is the current-scaling policy, which keeps no such tensors */
	q = policy_named("fp8-current", NULL, NULL);
	assert_refused(&cfg, &q, &rs, "state.policy");
	run_state_free(&rs);
	corpus_free(&data);
}
END_TEST

START_TEST(import_refuses)
{
	load_corpus();
	train_config cfg = small_config();
	train_policy p = policy_named("bf16-pure-kahan", NULL, NULL);
	trainer *t = make(&cfg, &p);
	train_stats s;
	ck_assert_int_eq(trainer_step(t, &s), MP_OK);
	run_state rs, bad;
	run_state_init(&rs);
	ck_assert_int_eq(trainer_state_export(t, &rs), MP_OK);
	trainer_free(t);
	size_t C = cfg.model.C;

	/* another policy, seed, lr, shape */
	train_policy q = policy_named("bf16-pure", NULL, NULL);
	assert_refused(&cfg, &q, &rs, "state.policy");
	train_config c2 = cfg;
	c2.seed = 7;
	assert_refused(&c2, &p, &rs, "state.config.seed");
	c2 = cfg;
	c2.lr = 1e-3;
	assert_refused(&c2, &p, &rs, "state.config.lr");
	c2 = cfg;
	c2.model.L = 1;
	assert_refused(&c2, &p, &rs, "state.config.n_layer");

	/* each piece missing */
	const char *pieces[] = { "optimizer.v.h.0.mlp.c_fc.weight", "optimizer.kahan.wpe.weight", "h.1.ln_2.bias",
		                 "optimizer.step", "state.scaler.clean_steps", "state.rng.seed" };
	for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
		copy_state(&bad, &rs, pieces[i]);
		char want[128];
		snprintf(want, sizeof want, "'%s' is missing", pieces[i]);
		assert_refused(&cfg, &p, &bad, want);
		run_state_free(&bad);
	}
	/* a wrong dtype, a shape in our layout rather than GPT-2's, an unknown name */
	copy_state(&bad, &rs, "optimizer.m.ln_f.weight");
	ck_assert_int_eq(run_state_add(&bad, "optimizer.m.ln_f.weight", RS_F32, 1, (size_t[]){ C }, NULL), MP_OK);
	assert_refused(&cfg, &p, &bad, "'optimizer.m.ln_f.weight' is F32, expected BF16");
	run_state_free(&bad);
	copy_state(&bad, &rs, "h.0.attn.c_attn.weight");
	ck_assert_int_eq(run_state_add(&bad, "h.0.attn.c_attn.weight", RS_BF16, 2, (size_t[]){ 3 * C, C }, NULL), MP_OK);
	assert_refused(&cfg, &p, &bad, "has shape [96,32], expected [32,96]");
	run_state_free(&bad);
	copy_state(&bad, &rs, NULL);
	ck_assert_int_eq(run_state_add(&bad, "optimizer.momentum.wte.weight", RS_F32, 0, NULL, NULL), MP_OK);
	assert_refused(&cfg, &p, &bad, "unexpected tensor 'optimizer.momentum.wte.weight'");
	run_state_free(&bad);
	/* counters out of order, a scale that is not a positive number */
	copy_state(&bad, &rs, "optimizer.step");
	int64_t ahead = 5;
	ck_assert_int_eq(run_state_add(&bad, "optimizer.step", RS_I64, 0, NULL, &ahead), MP_OK);
	assert_refused(&cfg, &p, &bad, "optimizer.step 5 and state.step 1");
	run_state_free(&bad);
	copy_state(&bad, &rs, "state.scaler.scale");
	double zero = 0;
	ck_assert_int_eq(run_state_add(&bad, "state.scaler.scale", RS_F64, 0, NULL, &zero), MP_OK);
	assert_refused(&cfg, &p, &bad, "state.scaler.scale is 0");
	run_state_free(&bad);
	/* metadata of another version */
	copy_state(&bad, &rs, NULL);
	ck_assert_int_eq(run_state_set_meta(&bad, "state.format", "mixprec run state 0"), MP_OK);
	assert_refused(&cfg, &p, &bad, "state.format");
	run_state_free(&bad);

	/* a CPU run is not the GPU trainer's: it splits the batch, so the numbers differ */
	cfg.device = TRAIN_DEVICE_EMULATED;
	assert_refused(&cfg, &p, &rs, "state.device");
	run_state_free(&rs);
	corpus_free(&data);
}
END_TEST

/* The GPU trainer's code (run on the CPU), which keeps no fp32 reference
 * of v: the same check, a dynamic scaler with skips among them. */
START_TEST(gpu_code)
{
	load_corpus();
	train_config cfg = small_config();
	cfg.device = TRAIN_DEVICE_EMULATED;
	const char *names[] = { "fp32", "bf16-mixed", "bf16-pure-sr", "bf16-pure-kahan" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		train_policy p = policy_named(names[i], NULL, NULL);
		check_resume(&cfg, &p, 2);
	}
	cfg.init_scale = 16777216.0;
	cfg.scale_growth_interval = 3;
	train_policy p = policy_named("fp16-mixed", NULL, NULL);
	resume_facts f = check_resume(&cfg, &p, 5);
	ck_assert(f.skipped_first > 0);
	trainer *t = make(&cfg, &p);
	run_state rs;
	run_state_init(&rs);
	ck_assert_int_eq(trainer_state_export(t, &rs), MP_OK);
	ck_assert(run_state_find(&rs, "optimizer.m.wte.weight") && !run_state_find(&rs, "optimizer.v_ref.wte.weight"));
	run_state_free(&rs);
	trainer_free(t);
	corpus_free(&data);
}
END_TEST

static Suite *resume_suite(void)
{
	Suite *s = suite_create("resume");
	TCase *tc = tcase_create("resume");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, every_preset);
	tcase_add_test(tc, dynamic_scale_with_skips);
	tcase_add_test(tc, warmup_cosine);
	tcase_add_test(tc, optim_state_sr_and_16bit_weights);
	tcase_add_test(tc, gpt2_layout);
	tcase_add_test(tc, fp8_scaling_state);
	tcase_add_test(tc, import_refuses);
	tcase_add_test(tc, gpu_code);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	(void)argc;
	testutil_fast_blas(argv);
	openblas_set_num_threads(1);
	return testutil_run(resume_suite());
}
