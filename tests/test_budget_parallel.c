/* The parallel layout of the memory budget against Korthikanti et al. 2022,
 * "Reducing Activation Recomputation in Large Transformer Models",
 * arXiv:2205.05198v1: every expected value is worked out here by hand, in
 * exact rationals (GMP mpq), from the paper's formulas at its own models
 * (Table 3: 22B, 175B, 530B, 1T; s = 2048, v = 51200). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <gmp.h>

#include "budget/budget.h"
#include "budget/budget_opts.h"
#include "testutil.h"

/* Table 3: attention heads a, hidden h, layers L, tensor t, pipeline p,
 * micro-batch b; s = 2048 and v = 51200 for all four. */
typedef struct {
	const char *name;
	long a, h, L, t, p, b;
} paper_model;

static const paper_model models[] = {
	{ "22B", 64, 6144, 48, 8, 1, 4 },
	{ "175B", 96, 12288, 96, 8, 8, 1 },
	{ "530B", 128, 20480, 105, 8, 35, 1 },
	{ "1T", 160, 25600, 128, 8, 64, 1 },
};
enum { S = 2048, V = 51200 };

/* Table 2's rows. */
typedef enum { NO_PAR, TP, TP_SP, TP_SEL, TP_SP_SEL, FULL } table2_row;

/* Table 2, by hand: bytes per layer for model m (its t) in row r. */
static void table2(mpq_t out, const paper_model *m, table2_row r)
{
	mpq_t sbh, core, t;
	mpq_inits(sbh, core, t, NULL);
	mpq_set_si(sbh, S * m->b * m->h, 1);
	mpq_set_si(core, 5 * m->a * S, 1);          /* 5 a s^2 b = 5as/h * sbh */
	mpq_mul(core, core, sbh);
	mpq_set_si(t, m->h, 1);
	mpq_div(core, core, t);
	mpq_set_si(t, m->t, 1);
	mpq_t x;
	mpq_init(x);
	switch (r) {
	case NO_PAR:     /* sbh(34 + 5as/h) */
		mpq_set_si(out, 34, 1);
		mpq_mul(out, out, sbh);
		mpq_add(out, out, core);
		break;
	case TP:         /* sbh(10 + 24/t + 5as/(ht)) */
	case TP_SEL:     /* sbh(10 + 24/t) */
		mpq_set_si(out, 10, 1);
		mpq_mul(out, out, sbh);
		mpq_set_si(x, 24, 1);
		mpq_mul(x, x, sbh);
		if (r == TP)
			mpq_add(x, x, core);
		mpq_div(x, x, t);
		mpq_add(out, out, x);
		break;
	case TP_SP:      /* sbh/t (34 + 5as/h) */
	case TP_SP_SEL:  /* 34 sbh/t */
		mpq_set_si(out, 34, 1);
		mpq_mul(out, out, sbh);
		if (r == TP_SP)
			mpq_add(out, out, core);
		mpq_div(out, out, t);
		break;
	case FULL:       /* 2sbh */
		mpq_set_si(out, 2, 1);
		mpq_mul(out, out, sbh);
		break;
	}
	mpq_clears(sbh, core, t, x, NULL);
}

static void near_q(double got, const mpq_t want, const char *what)
{
	double w = mpq_get_d(want);
	ck_assert_msg(fabs(got - w) <= 1e-14 * fabs(w), "%s: got %.17g, by hand %.17g", what, got, w);
}

static budget_shape shape_of(const paper_model *m)
{
	return (budget_shape){ .layers = (double)m->L, .hidden = (double)m->h, .heads = (double)m->a, .seq = S,
		               .micro_batch = (double)m->b, .vocab = V };
}

START_TEST(table2_at_the_papers_models)
{
	for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
		const paper_model *m = &models[i];
		budget_shape sh = shape_of(m);
		const struct { table2_row row; budget_recompute rc; double t; bool sp; } cases[] = {
			{ NO_PAR, BUDGET_RECOMPUTE_NONE, 1, false },
			{ TP, BUDGET_RECOMPUTE_NONE, (double)m->t, false },
			{ TP_SP, BUDGET_RECOMPUTE_NONE, (double)m->t, true },
			{ TP_SEL, BUDGET_RECOMPUTE_SELECTIVE, (double)m->t, false },
			{ TP_SP_SEL, BUDGET_RECOMPUTE_SELECTIVE, (double)m->t, true },
			{ FULL, BUDGET_RECOMPUTE_FULL, (double)m->t, true },
			{ FULL, BUDGET_RECOMPUTE_FULL, (double)m->t, false },
		};
		for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
			budget_parallel par = { .tp = cases[k].t, .sp = cases[k].sp };
			mpq_t want;
			mpq_init(want);
			table2(want, m, cases[k].row);
			char what[64];
			snprintf(what, sizeof what, "%s, Table 2 row %d", m->name, (int)cases[k].row);
			/* 16-bit activations, as the paper counts them */
			near_q(budget_activation_layer_bytes_par(&sh, cases[k].rc, 2, &par), want, what);
			mpq_clear(want);
		}
	}
}
END_TEST

/* GPT-3 175B of Table 3 (t = 8, p = 8) as a budget config. */
static budget_config gpt3(budget_recompute rc)
{
	budget_config c = budget_defaults();
	c.params = 175e9;
	c.shape = shape_of(&models[1]);
	c.recompute = rc;
	c.par = (budget_parallel){ .tp = 8, .pp = 8, .sp = true, .given = true };
	c.gpus = 64;
	return c;
}

static budget_result compute(const budget_config *c)
{
	budget_result r;
	ck_assert_int_eq(budget_compute(&r, c), MP_OK);
	return r;
}

START_TEST(first_stage_and_interleave)
{
	/* section 4.2.3: the first stage keeps p micro-batches of L/p layers:
	 * sbhL/t (34 + 5as/h); at 175B sbh = 2048 * 12288 = 25165824, 5as/h =
	 * 5*96*2048/12288 = 80, so 25165824 * 96 / 8 * 114 = 34426847232 */
	budget_config c = gpt3(BUDGET_RECOMPUTE_NONE);
	budget_result r = compute(&c);
	ck_assert(r.has_layout && r.interleave == 1);
	ck_assert(r.stage_layer_bytes == 34426847232.0);
	/* section 4.3 with p = 8: only the embedding's dropout mask, sbhp/t =
	 * 25165824 * 8 / 8 */
	ck_assert(r.extra_bytes == 25165824.0);
	ck_assert(r.gpu_bytes[BUDGET_ACTIVATIONS] == 34426847232.0 + 25165824.0);
	/* interleaved with m = 2 chunks (12 layers a stage): times
	 * 1 + (p - 1)/(p m) = 1 + 7/16 = 23/16 */
	c.par.vpp = 2;
	r = compute(&c);
	ck_assert(r.interleave == 23.0 / 16);
	ck_assert(r.stage_layer_bytes == 34426847232.0 * 23 / 16);
	/* section 6: "three interleaving stages (m = 3) for the 175B and 530B
	 * models": 1 + 7/24 = 31/24; 34426847232 / 24 = 1434451968, * 31 =
	 * 43033559040 + 1434451968 =
	 * 44468011008 */
	c.par.vpp = 3;
	r = compute(&c);
	ck_assert(r.interleave == 31.0 / 24);
	/* 31/24 is no binary fraction: equal to the last bits */
	ck_assert_msg(fabs(r.stage_layer_bytes - 44468011008.0) <= 1e-15 * 44468011008.0, "%.17g", r.stage_layer_bytes);
	/* the 530B model, p = 35, m = 3 (105/35 = 3 layers a stage): 1 + 34/105 */
	budget_config d = c;
	d.shape = shape_of(&models[2]);
	d.par.pp = 35;
	d.par.vpp = 3;
	d.gpus = 280;
	d.params = 530e9;
	r = compute(&d);
	ck_assert(fabs(r.interleave - (1 + 34.0 / 105)) < 1e-15);
}
END_TEST

START_TEST(embedding_and_output_with_one_stage)
{
	/* the 22B model has p = 1: section 4.3 adds sbhp/t + 4sbh/t (1 + v/h):
	 * sbh = 2048*4*6144 = 50331648; sbh/8 = 6291456; (1 + 4 + 4*51200/6144)
	 * = 5 + 100/3 = 115/3, so 6291456 * 115/3 = 241172480 */
	budget_config c = budget_defaults();
	c.params = 22e9;
	c.shape = shape_of(&models[0]);
	c.par = (budget_parallel){ .tp = 8, .sp = true, .given = true };
	c.gpus = 8;
	budget_result r = compute(&c);
	ck_assert_msg(fabs(r.extra_bytes - 241172480.0) < 1e-6, "got %.17g", r.extra_bytes);
	/* against equation 5, (p/L + 4/L (1 + v/h)) / (34 + 5as/h) = (1/48 +
	 * 7/9) / (34 + 320/3) = (115/144) / (422/3) = 115/20256 = 0.57%; the
	 * paper says "less than 0.01%", which holds for 0.01 as a fraction */
	double share = r.extra_bytes / r.stage_layer_bytes;
	ck_assert_msg(fabs(share - 115.0 / 20256) < 1e-15, "share %.17g", share);
	ck_assert(share < 0.01);
}
END_TEST

START_TEST(five_times_less_with_sp_and_selective)
{
	/* The abstract: "our method reduces activation memory by 5x"; section
	 * 6.1: "combined provide a 5x reduction" against equation 2. At GPT-3's
	 * settings (a = 96, s = 2048, h = 12288, t = 8) tensor parallelism alone
	 * keeps sbh (10 + 24/8 + 80/8) = 23 sbh per layer, sequence parallelism
	 * with selective recomputation 34/8 sbh = 4.25 sbh: 23/4.25 = 92/17 =
	 * 5.41, the paper's "5x". */
	budget_config base = gpt3(BUDGET_RECOMPUTE_NONE), ours = gpt3(BUDGET_RECOMPUTE_SELECTIVE);
	base.par.sp = false;
	budget_result rb = compute(&base), ro = compute(&ours);
	double ratio = rb.layer_gpu_bytes / ro.layer_gpu_bytes;
	ck_assert_msg(fabs(ratio - 92.0 / 17) < 1e-14, "ratio %.17g", ratio);
	ck_assert(lround(ratio) == 5);
	/* section 6.1: combined they bring the memory "to under 20%" of
	 * equation 2, and full recomputation "is at 10% of the baseline":
	 * 4.25/23 = 18.5% and 2/23 = 8.7% here */
	ck_assert(ro.layer_gpu_bytes / rb.layer_gpu_bytes < 0.2);
	budget_config full = gpt3(BUDGET_RECOMPUTE_FULL);
	double fr = compute(&full).layer_gpu_bytes / rb.layer_gpu_bytes;
	ck_assert_msg(fabs(fr - 2.0 / 23) < 1e-15, "full %.17g", fr);
}
END_TEST

START_TEST(context_parallel_and_element_size)
{
	/* c = 2 of a toy shape L=2 h=8 a=2 s=4 b=1, no tp: every term on s/c = 2
	 * tokens, the scores of 2 queries against 4 keys: sbh = 2*1*8 = 16, 34*16
	 * = 544; a (s/c) s b * 5 = 2*2*4*5 = 80: 624 bytes a layer */
	budget_shape sh = { .layers = 2, .hidden = 8, .heads = 2, .seq = 4, .micro_batch = 1 };
	budget_parallel par = { .cp = 2 };
	ck_assert(budget_activation_layer_bytes_par(&sh, BUDGET_RECOMPUTE_NONE, 2, &par) == 624);
	/* fp32 activations (4 bytes; the masks stay 1 byte), t = 2, no sp, c = 1,
	 * sbh = 4*1*8 = 32: outside the tensor region 32*(4+4)*2 + 32*2 = 576,
	 * inside 32*24*2/2 = 768, the core a s^2 b (2*4 + 1) / t = 32*9/2 = 144:
	 * 1488 */
	par = (budget_parallel){ .tp = 2 };
	ck_assert(budget_activation_layer_bytes_par(&sh, BUDGET_RECOMPUTE_NONE, 4, &par) == 1488);
	/* no layout: the one-GPU formula, unchanged */
	par = (budget_parallel){ 0 };
	ck_assert(budget_activation_layer_bytes_par(&sh, BUDGET_RECOMPUTE_NONE, 2, &par) ==
	          budget_activation_layer_bytes(&sh, BUDGET_RECOMPUTE_NONE, 2));
}
END_TEST

START_TEST(states_split_by_tp_and_zero_over_dp)
{
	/* bf16-mixed with Adam, 20 bytes per parameter, P = 175e9, t = 8, p = 8,
	 * d = 4 (256 GPUs), ZeRO 1: t*p = 64 splits every copy, P/64 =
	 * 2734375000; ZeRO 1 divides master (4) and Adam (8) by d = 4 as well:
	 * weights 2*P/64 = 5468750000, gradients 5468750000, accumulator
	 * 10937500000, master 4*P/256 = 2734375000, Adam 8*P/256 = 5468750000 */
	budget_config c = budget_defaults();
	c.params = 175e9;
	c.zero_stage = 1;
	c.gpus = 256;
	c.par = (budget_parallel){ .tp = 8, .pp = 8, .given = true };
	budget_result r = compute(&c);
	ck_assert(r.dp == 4);
	ck_assert(r.gpu_bytes[BUDGET_WEIGHTS] == 5468750000.0);
	ck_assert(r.gpu_bytes[BUDGET_GRADS] == 5468750000.0);
	ck_assert(r.gpu_bytes[BUDGET_GRAD_ACCUM] == 10937500000.0);
	ck_assert(r.gpu_bytes[BUDGET_MASTER] == 2734375000.0);
	ck_assert(r.gpu_bytes[BUDGET_OPTIMIZER] == 5468750000.0);
	ck_assert(r.gpu_total_bytes == 30078125000.0);
	/* ZeRO 3 with t = 8 over d = 8 (64 GPUs, no pipeline): 20*P/64 = 54687500000 */
	c.zero_stage = 3;
	c.gpus = 64;
	c.par = (budget_parallel){ .tp = 8, .given = true };
	r = compute(&c);
	ck_assert(r.dp == 8 && r.gpu_total_bytes == 54687500000.0);
	/* ZeRO 3 on 64 plain data-parallel GPUs gives the same 20*P/64, the same
	 * figure by another route */
	budget_config z = budget_defaults();
	z.params = 175e9;
	z.zero_stage = 3;
	z.gpus = 64;
	ck_assert(compute(&z).gpu_total_bytes == 54687500000.0);
}
END_TEST

/* budget_opts_parse of a command line: MP_EINVAL with err holding each of the texts. */
static void refused(const char *line, const char *text)
{
	char buf[512], *argv[32], err[1024] = "";
	snprintf(buf, sizeof buf, "budget %s", line);
	int argc = 0;
	for (char *tok = strtok(buf, " "); tok && argc < 31; tok = strtok(NULL, " "))
		argv[argc++] = tok;
	argv[argc] = NULL;
	budget_opts o;
	ck_assert_msg(budget_opts_parse(argc, argv, &o, err, sizeof err) == MP_EINVAL, "%s: accepted", line);
	ck_assert_msg(strstr(err, text) != NULL, "%s: '%s' lacks '%s'", line, err, text);
}

START_TEST(refusals)
{
	refused("--preset gpt3-175b --tp 7", "--tp 7 does not divide the 96 attention heads");
	refused("--preset gpt3-175b --pp 5", "--pp 5 does not divide the 96 layers");
	refused("--preset gpt3-175b --cp 3", "--cp 3 does not divide the sequence length 2048");
	refused("--preset gpt3-175b --vpp 2", "--vpp 2: model chunks interleave pipeline stages; it needs --pp 2");
	refused("--preset gpt3-175b --pp 8 --vpp 5", "--vpp 5 does not divide the 12 layers of a pipeline stage");
	refused("--preset gpt3-175b --sp", "--sp: sequence parallelism");
	refused("--preset gpt3-175b --tp 1 --sp", "it needs --tp 2 or more");
	refused("--preset gpt3-175b --pp 2 --zero 3", "--zero 3 with --pp 2: DeepSpeed's pipeline engine refuses");
	refused("--preset gpt3-175b --pp 2 --zero 2", "--zero 2 with --pp 2");
	refused("--preset gpt3-175b --tp 8 --gpus 12", "--gpus 12 is not a multiple of t*p*c = 8*1*1 = 8");
	refused("--preset gpt3-175b --tp 8 --dp 2 --gpus 8", "--gpus 8 and --dp 2 disagree");
	refused("--preset gpt3-175b --tp 0", "--tp: '0' is not a positive whole number");
	refused("--preset gpt3-175b --pp 2.5", "--pp: '2.5' is not a whole number");
	refused("--preset gpt3-175b --dp 0", "--dp: '0'");
	refused("--preset gpt3-175b --cp x", "--cp: 'x' is not a count");
	refused("--params 7e9 --tp 2 --convention deepspeed", "--convention deepspeed: DeepSpeed's estimators");
	refused("--params 7e9 --pp 2 --vpp 2", "--vpp 2 needs a model shape");
	refused("--params 7e9 --tp 2000000", "--tp: 2000000 is out of range");
	/* accepted: --dp alone sets the GPUs to t*p*c*d */
	char a0[] = "budget", a1[] = "--preset", a2[] = "gpt3-175b", a3[] = "--tp", a4[] = "8", a5[] = "--pp", a6[] = "8",
	     a7[] = "--dp", a8[] = "2";
	char *argv[] = { a0, a1, a2, a3, a4, a5, a6, a7, a8, NULL };
	budget_opts o;
	char err[256];
	ck_assert_int_eq(budget_opts_parse(9, argv, &o, err, sizeof err), MP_OK);
	ck_assert(o.cfg.gpus == 128 && o.per_gpu);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("budget_parallel");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, table2_at_the_papers_models);
	tcase_add_test(tc, first_stage_and_interleave);
	tcase_add_test(tc, embedding_and_output_with_one_stage);
	tcase_add_test(tc, five_times_less_with_sp_and_selective);
	tcase_add_test(tc, context_parallel_and_element_size);
	tcase_add_test(tc, states_split_by_tp_and_zero_over_dp);
	tcase_add_test(tc, refusals);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
