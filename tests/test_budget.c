/* The memory budget against the lesson's figures, recomputed by hand here. */
#include <math.h>
#include <string.h>

#include "budget/budget.h"
#include "budget/tinygpt.h"
#include "train/data.h"
#include "train/policy.h"
#include "train/train.h"
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

	/* DeepSpeed ZeRO-2 without offload: 2P + int(18P/G); 4 GPUs, P = 1000:
	 * 2000 + 4500 = 6500; its default cpu offload: 2P = 2000 */
	c.convention = BUDGET_CONV_DEEPSPEED;
	c.params = 1000;
	c.gpus = 4;
	c.offload = BUDGET_OFFLOAD_NONE;
	r = compute(&c);
	ck_assert(r.zero_stage == 2 && r.has_ds && r.gpu_total_bytes == 6500);
	ck_assert(r.total_bytes_per_param == 20);   /* the unsharded rows: mixprec's count */
	c.offload = BUDGET_OFFLOAD_CPU;
	ck_assert(compute(&c).gpu_total_bytes == 2000);
	c.zero_stage = 1;   /* DeepSpeed has no ZeRO-1 estimator */
	ck_assert_int_eq(budget_compute(&r, &c), MP_EINVAL);
	c.zero_stage = 3;   /* no largest layer, no shape */
	ck_assert_int_eq(budget_compute(&r, &c), MP_EINVAL);
	c.largest_layer = 10;   /* cpu offload: only the gathered largest layer, 4 * 10 */
	ck_assert(compute(&c).gpu_total_bytes == 40);

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

/* DeepSpeed's estimators, by hand from its source: deepspeed/runtime/zero/
 * stage_1_and_2.py estimate_zero2_model_states_mem_needs as of commit
 * 022f223697296f182f1b677d83d41a4abb062b0b (after PR #5099, April 2024:
 * gpu 2P + int(18P/G) without offload, 2P with; cpu P*max(4G, 16)*1.5 with
 * offload, P*4*gpus_per_node*1.5 without), and stage3.py
 * estimate_zero3_model_states_mem_needs (commit 0003660dc804f11976ecbc725585d43774952fab:
 * gpu 4*LL [+ int(2P/G) optimizer offload only | + int(18P/G) no offload];
 * cpu P*18/nodes*1.5 | P*16/nodes*1.5 | LL*4*gpus_per_node*1.5 with zero_init).
 * Before PR #5099 ZeRO-2 was 4P + 16P/G (7e9 on 8 GPUs: 42 GB, the figure
 * older write-ups quote); the code follows DeepSpeed as it is now. */
START_TEST(deepspeed_estimators)
{
	budget_ds_config d = budget_ds_defaults();
	budget_ds_result r;
	ck_assert(d.offload == BUDGET_OFFLOAD_CPU && d.zero_init && d.additional_buffer_factor == 1.5);
	/* ZeRO-2, 7e9 on one node of 8 GPUs */
	d.total_params = 7e9;
	d.gpus_per_node = 8;
	d.offload = BUDGET_OFFLOAD_NONE;
	ck_assert_int_eq(budget_ds_estimate(&r, &d), MP_OK);
	ck_assert(r.gpu_bytes == 14e9 + 15.75e9);           /* 29.75 GB */
	ck_assert(r.cpu_bytes == 7e9 * 4 * 8 * 1.5);        /* 336 GB */
	d.offload = BUDGET_OFFLOAD_CPU;
	ck_assert_int_eq(budget_ds_estimate(&r, &d), MP_OK);
	ck_assert(r.gpu_bytes == 14e9 && r.cpu_bytes == 7e9 * 32 * 1.5);
	d.gpus_per_node = 2;                                 /* max(4*2, 16) = 16 */
	ck_assert_int_eq(budget_ds_estimate(&r, &d), MP_OK);
	ck_assert(r.cpu_bytes == 168e9);
	/* int() truncates: P = 1000 on 7 GPUs, 18000/7 = 2571.4 -> 2571 */
	d.total_params = 1000;
	d.gpus_per_node = 7;
	d.offload = BUDGET_OFFLOAD_NONE;
	ck_assert_int_eq(budget_ds_estimate(&r, &d), MP_OK);
	ck_assert(r.gpu_bytes == 2000 + 2571 && r.cpu_bytes == 1000 * 4 * 7 * 1.5);

	/* ZeRO-3, 7e9, largest layer 1e8, 2 nodes of 4 GPUs (8 in all, gpus_factor 0.5) */
	d = budget_ds_defaults();
	d.zero_stage = 3;
	d.total_params = 7e9;
	d.largest_layer_params = 1e8;
	d.nodes = 2;
	d.gpus_per_node = 4;
	ck_assert_int_eq(budget_ds_estimate(&r, &d), MP_OK);
	ck_assert(r.largest_layer_bytes == 4e8 && r.gpu_bytes == 4e8 && r.cpu_bytes == 94.5e9);
	d.offload = BUDGET_OFFLOAD_OPTIMIZER;
	ck_assert_int_eq(budget_ds_estimate(&r, &d), MP_OK);
	ck_assert(r.gpu_bytes == 4e8 + 1.75e9 && r.cpu_bytes == 84e9);
	d.offload = BUDGET_OFFLOAD_NONE;
	ck_assert_int_eq(budget_ds_estimate(&r, &d), MP_OK);
	ck_assert(r.gpu_bytes == 4e8 + 15.75e9 && r.cpu_bytes == 1e8 * 4 * 4 * 1.5);
	d.offload = BUDGET_OFFLOAD_CPU;
	d.zero_init = false;                                 /* max(4*4, 18*0.5) = 16 */
	ck_assert_int_eq(budget_ds_estimate(&r, &d), MP_OK);
	ck_assert(r.cpu_bytes == 7e9 * 16 * 1.5);
	d.largest_layer_params = 0;
	ck_assert_int_eq(budget_ds_estimate(&r, &d), MP_EINVAL);

	/* the largest layer from a shape: GPT-2 small's token embedding 50257 * 768 */
	double p;
	budget_shape sh;
	ck_assert_int_eq(budget_preset("gpt2-small", &p, &sh), MP_OK);
	ck_assert(budget_largest_layer_params(&sh) == 38597376);
	sh.vocab = 100;     /* then the MLP's first projection, 4*768*768 + 4*768 */
	ck_assert(budget_largest_layer_params(&sh) == 2362368);
	sh.vocab = 0;
	ck_assert(budget_largest_layer_params(&sh) == 0);
	/* through budget_compute: the preset's shape gives the largest layer */
	budget_config c = with_params(p);
	c.shape = sh;
	c.shape.vocab = 50257;
	c.convention = BUDGET_CONV_DEEPSPEED;
	c.zero_stage = 3;
	c.gpus = 8;
	budget_result br = compute(&c);
	ck_assert(br.gpu_total_bytes == 4.0 * 38597376);
	c.nodes = 3;        /* 3 nodes cannot share 8 GPUs */
	ck_assert_int_eq(budget_compute(&br, &c), MP_EINVAL);
}
END_TEST

/* The tiny GPT's activations: the formula of budget/tinygpt.h by hand for
 * mixprec train's default shape (V = C = t = 128, L = 4, NH = 4, B = 16 in
 * two halves of 8, 1024 tokens each):
 *   kept per token 4*(18*128 + 4 + 2*4*128) + 4*128 + 2*128 + 3 = 14099
 *   floats, x 4 bytes x 1024 tokens = 57749504 per half;
 *   scratch per token 13*128 + 128 + 512 = 2304 floats (2359296 a half),
 *   once 2*128^2 + 512*128 + 5*128*32 + 128^2 = 135168: 4 * 2494464 =
 *   9977856 per half;
 *   total 2 * (57749504 + 9977856) = 135454720 bytes, the 135.45 MB the lab
 *   shows for the trainer.
 * Then against the trainer's own allocation, which pads each of its 35
 * tensors per half to 64 bytes: within 2 * 35 * 60 bytes above. */
START_TEST(tiny_gpt_activations)
{
	budget_tiny_acts a;
	budget_tiny_gpt g = { .V = 128, .C = 128, .L = 4, .NH = 4, .B = 16, .t = 128 };
	ck_assert_int_eq(budget_tiny_gpt_activations(&a, &g), MP_OK);
	ck_assert(a.kept == 2 * 57749504.0 && a.scratch == 2 * 9977856.0 && a.total == 135454720.0);
	g.NH = 3;
	ck_assert_int_eq(budget_tiny_gpt_activations(&a, &g), MP_EINVAL);

	/* the trainer: the default shape, and an odd batch (halves of 2 and 1) */
	static const char line[] = "the quick brown fox jumps over the lazy dog, again and again and again. ";
	static char text[64 * sizeof line];
	for (size_t i = 0; i + sizeof line - 1 < sizeof text; i += sizeof line - 1)
		memcpy(text + i, line, sizeof line - 1);
	train_config cfgs[2] = { train_config_default(), train_config_default() };
	cfgs[1].model.L = 2;
	cfgs[1].model.C = 32;
	cfgs[1].model.NH = 2;
	cfgs[1].B = 3;
	cfgs[1].t = 16;
	for (int k = 0; k < 2; k++) {
		const train_config *c = &cfgs[k];
		corpus data;
		char err[256];
		ck_assert_int_eq(corpus_from_text(&data, text, strlen(text), c->t, err, sizeof err), MP_OK);
		train_policy pol;
		ck_assert_int_eq(policy_from_name("bf16-mixed", &pol), MP_OK);
		trainer *t;
		ck_assert_int_eq(trainer_create(&t, c, &pol, &data, NULL, 0), MP_OK);
		double alloc = (double)trainer_memory(t).activations;
		trainer_free(t);
		corpus_free(&data);
		g = (budget_tiny_gpt){ .V = (double)c->model.V, .C = (double)c->model.C, .L = (double)c->model.L,
			               .NH = (double)c->model.NH, .B = (double)c->B, .t = (double)c->t };
		ck_assert_int_eq(budget_tiny_gpt_activations(&a, &g), MP_OK);
		ck_assert_msg(alloc >= a.total && alloc - a.total <= 2 * 35 * 60, "shape %d: trainer %.0f, formula %.0f",
		              k, alloc, a.total);
	}
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
	ck_assert_int_eq(budget_parse_count("7e9", &v, NULL, 0), MP_OK);
	ck_assert(v == 7e9);
	ck_assert_int_eq(budget_parse_count("6.7B", &v, NULL, 0), MP_OK);
	ck_assert(v == 6.7e9);
	ck_assert_int_eq(budget_parse_count("124M", &v, NULL, 0), MP_OK);
	ck_assert(v == 124e6);
	ck_assert_int_eq(budget_parse_count("175B", &v, NULL, 0), MP_OK);
	ck_assert(v == 175e9);
	ck_assert_int_eq(budget_parse_count("1.5T", &v, NULL, 0), MP_OK);
	ck_assert(v == 1.5e12);
	ck_assert_int_eq(budget_parse_count("2^30", &v, NULL, 0), MP_OK);
	ck_assert(v == 1073741824.0);
	ck_assert_int_eq(budget_parse_count("0x1Bp0", &v, NULL, 0), MP_OK);   /* hex, not billions */
	ck_assert(v == 27);
	char err[128];
	ck_assert_int_eq(budget_parse_count("abc", &v, err, sizeof err), MP_EPARSE);
	ck_assert(err[0] != '\0');
	ck_assert_int_eq(budget_parse_count("-5", &v, NULL, 0), MP_EINVAL);
	ck_assert_int_eq(budget_parse_count("0", &v, NULL, 0), MP_EINVAL);
	ck_assert_int_eq(budget_parse_count("inf", &v, NULL, 0), MP_EINVAL);
	ck_assert_int_eq(budget_parse_count("nan", &v, NULL, 0), MP_EINVAL);
	ck_assert_int_eq(budget_parse_count("1/3", &v, NULL, 0), MP_EINVAL);
	ck_assert_int_eq(budget_parse_count("1.5", &v, NULL, 0), MP_EINVAL);
	/* a count is whole after its suffix: 0.5 and 1.5k + 1/2 are not, 2.5k
	 * (2500) is; the range ends at 10^15 = 1000T exactly */
	ck_assert_int_eq(budget_parse_count("0.5", &v, err, sizeof err), MP_EINVAL);
	ck_assert(strstr(err, "whole") != NULL);
	ck_assert_int_eq(budget_parse_count("2.5k", &v, NULL, 0), MP_OK);
	ck_assert(v == 2500);
	ck_assert_int_eq(budget_parse_count("1000T", &v, NULL, 0), MP_OK);
	ck_assert(v == 1e15);
	ck_assert_int_eq(budget_parse_count("1000000000000001", &v, err, sizeof err), MP_EINVAL);
	ck_assert(strstr(err, "1 to 10^15") != NULL);
	ck_assert_int_eq(budget_parse_count("1e300", &v, NULL, 0), MP_EINVAL);
	/* a malformed count shows count syntax, not hex floats and fractions */
	ck_assert_int_eq(budget_parse_count("abc", &v, err, sizeof err), MP_EPARSE);
	ck_assert(strstr(err, "hex float") == NULL && strstr(err, "6.7B") != NULL);
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

/* The explanation under the table names the recipe and optimiser asked for
 * and sums that recipe's own copies, each figure derived here by hand from
 * the widths of what the recipe keeps (Adam: two states of the recipe's
 * state width; sgd-momentum one):
 *   fp32:               weights 4 + gradients 4 + Adam 2 x 4 = 16
 *   fp16-mixed:         master 4 + copy 2 + gradient 2 + accumulator 4 + 8 = 20
 *   bf16-mixed-noaccum: 4 + 2 + 2 + 8 = 16 (no accumulator term)
 *   bf16-pure:          weights 2 + gradients 2 + Adam 2 x 2 = 8 (no master)
 *   fp8-mixed:          4 + e4m3 copy 1 + 2 + 4 + 8 = 19
 *   bf16-mixed, sgd-momentum: 4 + 2 + 2 + 4 + one fp32 state 4 = 16
 * bf16-mixed with Adam is the convention's own note (20 bytes); another
 * convention gives its note whatever the recipe. */
static void explained(budget_recipe rc, budget_optimizer opt, const char *const *want, const char *const *absent)
{
	budget_config c = with_params(1e9);
	c.recipe = rc;
	c.optimizer = opt;
	budget_result r = compute(&c);
	char text[1024];
	size_t len = budget_explain(text, sizeof text, &c, &r);
	ck_assert_uint_eq(len, strlen(text));
	for (size_t i = 0; want[i]; i++)
		ck_assert_msg(strstr(text, want[i]), "%s: lacks '%s' in: %s", budget_recipe_name(rc), want[i], text);
	for (size_t i = 0; absent && absent[i]; i++)
		ck_assert_msg(!strstr(text, absent[i]), "%s: has '%s' in: %s", budget_recipe_name(rc), absent[i], text);
}

START_TEST(explanation_per_recipe)
{
	explained(BUDGET_RECIPE_FP32, BUDGET_OPT_ADAM,
	          (const char *const[]){ "for fp32 with adam:", "weights 4 + gradients 4 + optimizer_state 8",
	                                 "= 16 bytes per parameter", NULL },
	          (const char *const[]){ "master", "accumulator", "bf16", "20 bytes", NULL });
	explained(BUDGET_RECIPE_FP16_MIXED, BUDGET_OPT_ADAM,
	          (const char *const[]){ "for fp16-mixed with adam:", "master_weights 4 + weights 2 + gradients 2 + "
	                                 "grad_accumulator 4 + optimizer_state 8", "= 20 bytes per parameter", NULL },
	          (const char *const[]){ "bf16", NULL });
	explained(BUDGET_RECIPE_BF16_MIXED_NOACCUM, BUDGET_OPT_ADAM,
	          (const char *const[]){ "for bf16-mixed-noaccum with adam:", "master_weights 4 + weights 2 + "
	                                 "gradients 2 + optimizer_state 8", "= 16 bytes per parameter", NULL },
	          (const char *const[]){ "accumulator", "20 bytes", NULL });
	explained(BUDGET_RECIPE_BF16_PURE, BUDGET_OPT_ADAM,
	          (const char *const[]){ "for bf16-pure with adam:", "weights 2 + gradients 2 + optimizer_state 4",
	                                 "= 8 bytes per parameter", NULL },
	          (const char *const[]){ "master", "fp32", NULL });
	explained(BUDGET_RECIPE_FP8_MIXED, BUDGET_OPT_ADAM,
	          (const char *const[]){ "for fp8-mixed with adam:", "master_weights 4 + weights 1 + gradients 2 + "
	                                 "grad_accumulator 4 + optimizer_state 8", "= 19 bytes per parameter", NULL },
	          NULL);
	explained(BUDGET_RECIPE_BF16_MIXED, BUDGET_OPT_SGD_MOMENTUM,
	          (const char *const[]){ "for bf16-mixed with sgd-momentum:", "grad_accumulator 4 + optimizer_state 4",
	                                 "= 16 bytes per parameter", NULL },
	          NULL);
	explained(BUDGET_RECIPE_BF16_MIXED, BUDGET_OPT_ADAM,
	          (const char *const[]){ "for bf16-mixed with Adam", "20 bytes per parameter", NULL }, NULL);
	/* another convention: its note, the same for every recipe */
	budget_config c = with_params(1e9);
	c.convention = BUDGET_CONV_ELEUTHER;
	c.recipe = BUDGET_RECIPE_FP32;
	budget_result r = compute(&c);
	char text[1024];
	budget_explain(text, sizeof text, &c, &r);
	ck_assert_str_eq(text, budget_convention_note(BUDGET_CONV_ELEUTHER));
	/* a short buffer: cut, terminated, and the length the whole needs */
	c = with_params(1e9);
	c.recipe = BUDGET_RECIPE_FP32;
	r = compute(&c);
	char small[16];
	size_t need = budget_explain(small, sizeof small, &c, &r);
	ck_assert_uint_eq(strlen(small), sizeof small - 1);
	ck_assert_uint_gt(need, sizeof small);
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
	tcase_add_test(tc, deepspeed_estimators);
	tcase_add_test(tc, tiny_gpt_activations);
	tcase_add_test(tc, zero_stages);
	tcase_add_test(tc, activations_by_hand);
	tcase_add_test(tc, parse_counts);
	tcase_add_test(tc, bad_inputs);
	tcase_add_test(tc, explanation_per_recipe);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
