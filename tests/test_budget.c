/* The memory budget against the lesson's figures, recomputed by hand here. */
#include <math.h>

#include "budget/budget.h"
#include "testutil.h"

static budget_result compute(const budget_config *c)
{
	budget_result r;
	ck_assert_int_eq(budget_compute(&r, c), MP_OK);
	return r;
}

static budget_config with_params(double p)
{
	budget_config c = budget_defaults();
	c.params = p;
	return c;
}

START_TEST(bf16_mixed_adam_is_20_bytes)
{
	/* fp32 master 4 + bf16 copy 2 + bf16 gradient 2 + fp32 accumulator 4 + Adam m, v 4 + 4 */
	budget_result r = compute(&(budget_config){ .params = 1, .recipe = BUDGET_RECIPE_BF16_MIXED,
	                                            .optimizer = BUDGET_OPT_ADAM, .gpus = 1 });
	ck_assert(r.bytes_per_param[BUDGET_MASTER] == 4);
	ck_assert(r.bytes_per_param[BUDGET_WEIGHTS] == 2);
	ck_assert(r.bytes_per_param[BUDGET_GRADS] == 2);
	ck_assert(r.bytes_per_param[BUDGET_GRAD_ACCUM] == 4);
	ck_assert(r.bytes_per_param[BUDGET_OPTIMIZER] == 8);
	ck_assert(r.total_bytes_per_param == 4 + 2 + 2 + 4 + 8);
	ck_assert(!r.has_activations && r.bytes[BUDGET_ACTIVATIONS] == 0);
	/* fp16-mixed holds the same copies */
	budget_config c = with_params(1);
	c.recipe = BUDGET_RECIPE_FP16_MIXED;
	ck_assert(compute(&c).total_bytes_per_param == 20);
}
END_TEST

START_TEST(twenty_gb_per_billion)
{
	/* 7e9 * 20 = 140e9 bytes = 140 GB; LLaMA-7B 6.7e9 * 20 = 134e9 = 134 GB */
	budget_config c = with_params(7e9);
	budget_result r = compute(&c);
	ck_assert(r.total_bytes == 140e9);
	c.params = 6.7e9;
	r = compute(&c);
	ck_assert(r.total_bytes == 134e9);
	/* beyond one 80 GB GPU, also in GiB: 134e9 / 2^30 = 124.8 */
	ck_assert(r.total_bytes / 1073741824.0 > 80);
	double p;
	budget_shape s;
	ck_assert_int_eq(budget_preset("llama-7b", &p, &s), MP_OK);
	ck_assert(p == 6.7e9 && s.layers == 32 && s.hidden == 4096 && s.heads == 32 && s.seq == 2048);
}
END_TEST

START_TEST(fp32_weights)
{
	/* GPT-3: 175e9 fp32 weights * 4 bytes = 700 GB */
	budget_config c = with_params(175e9);
	c.recipe = BUDGET_RECIPE_FP32;
	budget_result r = compute(&c);
	ck_assert(r.bytes[BUDGET_WEIGHTS] == 700e9);
	ck_assert(r.bytes[BUDGET_MASTER] == 0 && r.bytes[BUDGET_GRAD_ACCUM] == 0);
	/* fp32 + Adam: 4 + 4 + 8 = 16 bytes */
	ck_assert(r.total_bytes_per_param == 16);

	/* GPT-2 small, 124M: 124e6 * 4 = 0.496 GB of weights and as much of
	 * gradients, 124e6 * 8 = 0.992 GB of Adam state: about 0.5, 0.5 and 1 GB */
	double p;
	budget_shape s;
	ck_assert_int_eq(budget_preset("gpt2-small", &p, &s), MP_OK);
	ck_assert(p == 124e6 && s.layers == 12 && s.hidden == 768 && s.heads == 12 && s.seq == 1024);
	c = with_params(p);
	c.recipe = BUDGET_RECIPE_FP32;
	r = compute(&c);
	ck_assert(r.bytes[BUDGET_WEIGHTS] == 496e6 && r.bytes[BUDGET_GRADS] == 496e6);
	ck_assert(r.bytes[BUDGET_OPTIMIZER] == 992e6);
	ck_assert(fabs(r.bytes[BUDGET_WEIGHTS] / 1e9 - 0.5) < 0.01);
	ck_assert(fabs(r.bytes[BUDGET_OPTIMIZER] / 1e9 - 1.0) < 0.01);

	ck_assert_int_eq(budget_preset("gpt3-175b", &p, &s), MP_OK);
	ck_assert(p == 175e9 && s.layers == 96 && s.hidden == 12288 && s.heads == 96 && s.seq == 2048);
}
END_TEST

START_TEST(recipes_and_optimizers)
{
	budget_config c = with_params(1);
	c.recipe = BUDGET_RECIPE_BF16_MIXED_NOACCUM;   /* 4 + 2 + 2 + 8 */
	ck_assert(compute(&c).total_bytes_per_param == 16);
	c.recipe = BUDGET_RECIPE_BF16_PURE;            /* 2 + 2 + bf16 m, v 2 + 2 */
	ck_assert(compute(&c).total_bytes_per_param == 8);
	c.recipe = BUDGET_RECIPE_FP8_MIXED;            /* 4 + 1 + 2 + 4 + 8 */
	ck_assert(compute(&c).total_bytes_per_param == 19);

	c.recipe = BUDGET_RECIPE_BF16_MIXED;
	c.optimizer = BUDGET_OPT_ADAMW;                /* same state as Adam */
	ck_assert(compute(&c).bytes_per_param[BUDGET_OPTIMIZER] == 8);
	c.optimizer = BUDGET_OPT_SGD;                  /* no state: 12 */
	ck_assert(compute(&c).bytes_per_param[BUDGET_OPTIMIZER] == 0);
	ck_assert(compute(&c).total_bytes_per_param == 12);
	c.optimizer = BUDGET_OPT_SGD_MOMENTUM;         /* one fp32 state */
	ck_assert(compute(&c).bytes_per_param[BUDGET_OPTIMIZER] == 4);
	c.optimizer = BUDGET_OPT_ADAM8BIT;             /* two 8-bit states */
	ck_assert(compute(&c).bytes_per_param[BUDGET_OPTIMIZER] == 2);
	c.recipe = BUDGET_RECIPE_BF16_PURE;            /* 8-bit stays 8-bit */
	ck_assert(compute(&c).bytes_per_param[BUDGET_OPTIMIZER] == 2);
	c.optimizer = BUDGET_OPT_SGD_MOMENTUM;         /* one bf16 state */
	ck_assert(compute(&c).bytes_per_param[BUDGET_OPTIMIZER] == 2);
}
END_TEST

START_TEST(conventions)
{
	budget_config c = with_params(7e9);
	/* Transformer Math 101: 2 + 2 + 12, no fp32 accumulator */
	c.convention = BUDGET_CONV_ELEUTHER;
	budget_result r = compute(&c);
	ck_assert(r.total_bytes_per_param == 16 && r.total_bytes == 112e9);
	ck_assert(r.bytes[BUDGET_GRAD_ACCUM] == 0);

	/* DeepSpeed ZeRO-2: 2 kept + 18 sharded; one GPU: 20; 4 GPUs: 2 + 18/4 = 6.5 */
	c.convention = BUDGET_CONV_DEEPSPEED;
	c.params = 1;
	r = compute(&c);
	ck_assert(r.zero_stage == 2 && r.total_bytes_per_param == 20 && r.gpu_total_bytes == 20);
	c.gpus = 4;
	ck_assert(compute(&c).gpu_total_bytes == 6.5);
	c.zero_stage = 3;
	ck_assert_int_eq(budget_compute(&r, &c), MP_EINVAL);

	/* accelerate: the largest stage: weights 4 + 2 = 6, gradients 2 + 4 = 6,
	 * Adam 8 -> 8 */
	c = with_params(1);
	c.convention = BUDGET_CONV_ACCELERATE;
	r = compute(&c);
	ck_assert(r.total_is_max && r.total_bytes_per_param == 8);

	for (int k = 0; k < BUDGET_CONV_COUNT; k++)
		ck_assert(budget_convention_note((budget_convention)k)[0] != '\0');
}
END_TEST

START_TEST(zero_stages)
{
	budget_config c = with_params(8e9);
	c.gpus = 8;
	budget_result r0 = compute(&c);
	/* stage 0: plain data parallelism, every GPU holds everything */
	ck_assert(r0.gpu_total_bytes == r0.total_bytes && r0.total_bytes == 160e9);

	/* ZeRO-3 on 8 GPUs: every component / 8 -> 20 GB each */
	c.zero_stage = 3;
	budget_result r = compute(&c);
	for (int k = 0; k < BUDGET_ACTIVATIONS; k++)
		ck_assert(r.gpu_bytes[k] == r.bytes[k] / 8);
	ck_assert(r.gpu_total_bytes == 20e9);

	/* ZeRO-1: only the optimiser state (with its fp32 master copy, as in the
	 * paper's K = 12) is sharded: 2 + 2 + 4 + (4 + 8)/8 = 9.5 bytes */
	c.zero_stage = 1;
	r = compute(&c);
	ck_assert(r.gpu_bytes[BUDGET_OPTIMIZER] == 64e9 / 8 && r.gpu_bytes[BUDGET_MASTER] == 32e9 / 8);
	ck_assert(r.gpu_bytes[BUDGET_WEIGHTS] == 16e9 && r.gpu_bytes[BUDGET_GRADS] == 16e9);
	ck_assert(r.gpu_bytes[BUDGET_GRAD_ACCUM] == 32e9);
	ck_assert(r.gpu_total_bytes == 9.5 * 8e9);

	/* ZeRO-2: gradients and accumulator too: 2 + (2 + 4 + 4 + 8)/8 = 4.25 */
	c.zero_stage = 2;
	ck_assert(compute(&c).gpu_total_bytes == 4.25 * 8e9);
}
END_TEST

START_TEST(activations_by_hand)
{
	/* s = 4, b = 3, h = 8, a = 2: s*b*h = 96, a*s^2*b = 96.
	 * none: 96 * (34 + 5*2*4/8) = 96 * 39 = 3744; selective 96 * 34 = 3264;
	 * full 2 * 96 = 192. fp32: the 1-byte masks (2 sbh + 1 as^2b) stay,
	 * the rest doubles: 96 * 66 + 96 * 9 = 7200. */
	budget_shape s = { .layers = 2, .hidden = 8, .heads = 2, .seq = 4, .micro_batch = 3 };
	ck_assert(budget_activation_layer_bytes(&s, BUDGET_RECOMPUTE_NONE, 2) == 3744);
	ck_assert(budget_activation_layer_bytes(&s, BUDGET_RECOMPUTE_SELECTIVE, 2) == 3264);
	ck_assert(budget_activation_layer_bytes(&s, BUDGET_RECOMPUTE_FULL, 2) == 192);
	ck_assert(budget_activation_layer_bytes(&s, BUDGET_RECOMPUTE_NONE, 4) == 7200);

	budget_config c = with_params(1000);
	c.shape = s;
	budget_result r = compute(&c);
	ck_assert(r.has_activations && r.activation_layer_bytes == 3744);
	ck_assert(r.bytes[BUDGET_ACTIVATIONS] == 2 * 3744);
	ck_assert(r.total_bytes == 20 * 1000 + 2 * 3744);
	/* not sharded by ZeRO */
	c.zero_stage = 3;
	c.gpus = 4;
	r = compute(&c);
	ck_assert(r.gpu_bytes[BUDGET_ACTIVATIONS] == 2 * 3744);
	ck_assert(r.gpu_total_bytes == 20 * 1000 / 4 + 2 * 3744);

	/* GPT-2 small: 1024 * 768 * (34 + 5 * 12 * 1024 / 768) = 786432 * 114 per layer */
	double p;
	ck_assert_int_eq(budget_preset("gpt2-small", &p, &s), MP_OK);
	ck_assert(budget_activation_layer_bytes(&s, BUDGET_RECOMPUTE_NONE, 2) == 786432.0 * 114);
}
END_TEST

START_TEST(parse_counts)
{
	double v;
	ck_assert_int_eq(budget_parse_count("7e9", false, &v, NULL, 0), MP_OK);
	ck_assert(v == 7e9);
	ck_assert_int_eq(budget_parse_count("6.7B", false, &v, NULL, 0), MP_OK);
	ck_assert(v == 6.7e9);
	ck_assert_int_eq(budget_parse_count("124M", false, &v, NULL, 0), MP_OK);
	ck_assert(v == 124e6);
	ck_assert_int_eq(budget_parse_count("175B", false, &v, NULL, 0), MP_OK);
	ck_assert(v == 175e9);
	ck_assert_int_eq(budget_parse_count("1.5T", false, &v, NULL, 0), MP_OK);
	ck_assert(v == 1.5e12);
	ck_assert_int_eq(budget_parse_count("2^30", true, &v, NULL, 0), MP_OK);
	ck_assert(v == 1073741824.0);
	ck_assert_int_eq(budget_parse_count("0x1Bp0", true, &v, NULL, 0), MP_OK);   /* hex, not billions */
	ck_assert(v == 27);
	char err[128];
	ck_assert_int_eq(budget_parse_count("abc", false, &v, err, sizeof err), MP_EPARSE);
	ck_assert(err[0] != '\0');
	ck_assert_int_eq(budget_parse_count("-5", false, &v, NULL, 0), MP_EINVAL);
	ck_assert_int_eq(budget_parse_count("0", false, &v, NULL, 0), MP_EINVAL);
	ck_assert_int_eq(budget_parse_count("inf", false, &v, NULL, 0), MP_EINVAL);
	ck_assert_int_eq(budget_parse_count("nan", false, &v, NULL, 0), MP_EINVAL);
	ck_assert_int_eq(budget_parse_count("1/3", true, &v, NULL, 0), MP_EINVAL);
	ck_assert_int_eq(budget_parse_count("1.5", true, &v, NULL, 0), MP_EINVAL);
}
END_TEST

START_TEST(bad_inputs)
{
	budget_result r;
	budget_config c = with_params(0);
	ck_assert_int_eq(budget_compute(&r, &c), MP_EINVAL);
	c.params = -1;
	ck_assert_int_eq(budget_compute(&r, &c), MP_EINVAL);
	c.params = NAN;
	ck_assert_int_eq(budget_compute(&r, &c), MP_EINVAL);
	c.params = INFINITY;
	ck_assert_int_eq(budget_compute(&r, &c), MP_EINVAL);
	c = with_params(1);
	c.zero_stage = 4;
	ck_assert_int_eq(budget_compute(&r, &c), MP_EINVAL);
	c.zero_stage = -1;
	ck_assert_int_eq(budget_compute(&r, &c), MP_EINVAL);
	c = with_params(1);
	c.gpus = 0;
	ck_assert_int_eq(budget_compute(&r, &c), MP_EINVAL);
	c.gpus = 2.5;
	ck_assert_int_eq(budget_compute(&r, &c), MP_EINVAL);
	c = with_params(1);
	c.recipe = BUDGET_RECIPE_COUNT;
	ck_assert_int_eq(budget_compute(&r, &c), MP_EINVAL);
	c = with_params(1);
	c.optimizer = BUDGET_OPT_COUNT;
	ck_assert_int_eq(budget_compute(&r, &c), MP_EINVAL);
	c = with_params(1);
	c.shape = (budget_shape){ .layers = 2, .hidden = 8, .heads = 0, .seq = 4, .micro_batch = 1 };
	ck_assert_int_eq(budget_compute(&r, &c), MP_EINVAL);   /* partial shape */
	c.shape = (budget_shape){ .layers = 2, .hidden = 8, .heads = 2, .seq = 4, .micro_batch = 0 };
	ck_assert_int_eq(budget_compute(&r, &c), MP_EINVAL);
	ck_assert_int_eq(budget_compute(NULL, &c), MP_EINVAL);

	budget_recipe rc;
	budget_optimizer o;
	budget_recompute rm;
	budget_convention cv;
	double p;
	budget_shape s;
	ck_assert_int_eq(budget_recipe_from_name("bf61-mixed", &rc), MP_EINVAL);
	ck_assert_int_eq(budget_optimizer_from_name("lion", &o), MP_EINVAL);
	ck_assert_int_eq(budget_recompute_from_name("some", &rm), MP_EINVAL);
	ck_assert_int_eq(budget_convention_from_name("megatron", &cv), MP_EINVAL);
	ck_assert_int_eq(budget_preset("gpt5", &p, &s), MP_EINVAL);
	/* every name reads back */
	for (int k = 0; k < BUDGET_RECIPE_COUNT; k++) {
		ck_assert_int_eq(budget_recipe_from_name(budget_recipe_name((budget_recipe)k), &rc), MP_OK);
		ck_assert_int_eq(rc, k);
	}
	for (int k = 0; k < BUDGET_OPT_COUNT; k++) {
		ck_assert_int_eq(budget_optimizer_from_name(budget_optimizer_name((budget_optimizer)k), &o), MP_OK);
		ck_assert_int_eq(o, k);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("budget");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, bf16_mixed_adam_is_20_bytes);
	tcase_add_test(tc, twenty_gb_per_billion);
	tcase_add_test(tc, fp32_weights);
	tcase_add_test(tc, recipes_and_optimizers);
	tcase_add_test(tc, conventions);
	tcase_add_test(tc, zero_stages);
	tcase_add_test(tc, activations_by_hand);
	tcase_add_test(tc, parse_counts);
	tcase_add_test(tc, bad_inputs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
