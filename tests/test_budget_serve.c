/* Serving memory (budget/serve.c) against figures derived by hand here
 * from the models' configs, vLLM's source and a vLLM startup log, the
 * block counts with exact rationals (GMP). */
#include <gmp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "budget/budget.h"
#include "budget/budget_opts.h"
#include "budget/serve.h"
#include "testutil.h"

#define GIB 1073741824.0

static serve_config preset_cfg(const char *name, double context, double batch)
{
	serve_config c = serve_defaults();
	ck_assert_int_eq(serve_preset(name, &c.model), MP_OK);
	c.context = context;
	c.batch = batch;
	return c;
}

static serve_result compute(const serve_config *c)
{
	serve_result r;
	char err[512] = "";
	ck_assert_msg(serve_compute(&r, c, err, sizeof err) == MP_OK, "%s", err);
	return r;
}

/* MP_EINVAL from serve_compute with a message holding each of want[]. */
static void refused(const serve_config *c, const char *const *want)
{
	serve_result r;
	char err[512] = "";
	ck_assert_int_eq(serve_compute(&r, c, err, sizeof err), MP_EINVAL);
	for (; *want; want++)
		ck_assert_msg(strstr(err, *want), "'%s' lacks '%s'", err, *want);
}

START_TEST(presets_from_their_configs)
{
	/* Meta's config.json of Meta-Llama-3-8B: num_hidden_layers 32,
	 * hidden_size 4096, num_attention_heads 32, num_key_value_heads 8,
	 * intermediate_size 14336, vocab_size 128256, max_position_embeddings
	 * 8192; head size 4096 / 32 = 128 */
	serve_model m;
	ck_assert_int_eq(serve_preset("llama-3-8b", &m), MP_OK);
	ck_assert(m.layers == 32 && m.hidden == 4096 && m.heads == 32 && m.kv_heads == 8 && m.head_dim == 128);
	ck_assert(m.ffn == 14336 && m.mlp_mats == 3);
	double p;
	budget_shape s;
	ck_assert_int_eq(budget_preset("llama-3-8b", &p, &s), MP_OK);
	ck_assert(s.vocab == 128256 && s.seq == 8192);
	/* the count by hand: embedding and untied head 2 * 128256 * 4096 =
	 * 1050673152; per layer q, o 4096^2 each, k, v 4096 * 1024 each, three
	 * 4096 * 14336, two norms 4096: 218112000; final norm 4096 */
	ck_assert(p == 1050673152.0 + 32 * 218112000.0 + 4096);
	ck_assert(p == 8030261248.0);
	/* LLaMA 7B (Touvron et al. 2023, Table 2): 32 layers, 4096, 32 heads, no GQA */
	ck_assert_int_eq(serve_preset("llama-7b", &m), MP_OK);
	ck_assert(m.layers == 32 && m.heads == 32 && m.kv_heads == 32 && m.head_dim == 128 && m.ffn == 11008);
	/* GPT-3 175B (Brown et al. 2020, Table 2.1): 96 layers, d_model 12288,
	 * 96 heads of d_head 128, d_ff = 4 * d_model */
	ck_assert_int_eq(serve_preset("gpt3-175b", &m), MP_OK);
	ck_assert(m.layers == 96 && m.hidden == 12288 && m.heads == 96 && m.kv_heads == 96 && m.head_dim == 128);
	ck_assert(m.ffn == 4 * 12288 && m.mlp_mats == 2);
	ck_assert_int_eq(serve_preset("llama-9b", &m), MP_EINVAL);
}
END_TEST

START_TEST(kv_cache_per_token)
{
	/* Llama-3-8B, bf16: 2 (K and V) * 32 layers * 8 KV heads * 128 * 2
	 * bytes = 131072 = 128 KiB per token; 8192 tokens 2^30 = 1 GiB */
	serve_config c = preset_cfg("llama-3-8b", 8192, 1);
	serve_result r = compute(&c);
	ck_assert(r.kv_token_bytes == 2.0 * 32 * 8 * 128 * 2 && r.kv_token_bytes == 128 * 1024);
	ck_assert(r.kv_tokens == 8192 && r.kv_bytes == GIB);
	/* batch 4 x context 2048: the same tokens, the same bytes */
	c.context = 2048;
	c.batch = 4;
	ck_assert(compute(&c).kv_bytes == GIB);
	/* fp8 KV halves it */
	c.kv = SERVE_KV_FP8;
	ck_assert(compute(&c).kv_token_bytes == 64 * 1024);
	ck_assert(compute(&c).kv_bytes == GIB / 2);
	/* GQA against MHA: LLaMA 7B's 32 KV heads, 2 * 32 * 32 * 128 * 2 =
	 * 524288 = 512 KiB, four times Llama-3-8B's */
	c = preset_cfg("llama-7b", 2048, 1);
	ck_assert(compute(&c).kv_token_bytes == 512 * 1024);
	/* GPT-3: 2 * 96 * 96 * 128 * 2 = 4718592 = 4.5 MiB */
	c = preset_cfg("gpt3-175b", 2048, 1);
	ck_assert(compute(&c).kv_token_bytes == 4.5 * 1024 * 1024);
	/* an explicit KV head count of a custom model: 2 * 2 * 1 * 16 * 2 */
	c = serve_defaults();
	c.model = (serve_model){ .params = 1e6, .layers = 2, .hidden = 64, .heads = 4, .kv_heads = 1, .head_dim = 16 };
	c.context = 10;
	ck_assert(compute(&c).kv_token_bytes == 128);
}
END_TEST

START_TEST(weights_per_format)
{
	/* Llama-3-8B's linear matrices per layer, by hand: q, o 4096 x 4096,
	 * k, v 4096 x 1024, gate, up, down 4096 x 14336: 218103808; times 32 =
	 * 6979321856. The other 8030261248 - 6979321856 = 1050939392
	 * (embeddings, head, norms) stay 2 bytes. */
	const double lin = 32 * (2 * 4096.0 * 4096 + 2 * 4096.0 * 1024 + 3 * 4096.0 * 14336);
	const double rest = 8030261248.0 - lin;
	ck_assert(lin == 6979321856.0 && rest == 1050939392.0);
	serve_config c = preset_cfg("llama-3-8b", 8192, 1);
	serve_result r = compute(&c);
	ck_assert(r.weights_total == 2 * 8030261248.0 && r.scale_bytes == 0);
	ck_assert(r.linear_params == lin && r.other_params == rest);
	/* fp8: 1 byte each, one fp32 scale for each of the 7 matrices of 32 layers */
	c.weights = SERVE_W_FP8;
	r = compute(&c);
	ck_assert(r.weight_bytes == lin + 2 * rest && r.scale_bytes == 32 * 7 * 4);
	/* int4 (GPTQ): groups of 128 inputs per output, 2.5 bytes each (fp16
	 * scale, 4-bit zero): per layer q 32 * 4096, k, v 32 * 1024, o 32 *
	 * 4096, gate, up 32 * 14336, down 112 * 4096 groups */
	c.weights = SERVE_W_INT4;
	r = compute(&c);
	double groups = 32 * 4096.0 + 2 * 32 * 1024.0 + 32 * 4096.0 + 2 * 32 * 14336.0 + 112 * 4096.0;
	ck_assert(groups == 1703936.0);
	ck_assert(r.weight_bytes == lin / 2 + 2 * rest && r.scale_bytes == 32 * groups * 2.5);
	ck_assert(r.bits_per_linear == 4 + 8 * 2.5 / 128);   /* 4.15625 */
	/* nvfp4: half a byte per element, an e4m3 byte per 16 and an fp32 per
	 * matrix: 6979321856 / 16 + 32 * 7 * 4 = 436208512 bytes of scales;
	 * in all 3489660928 + 2101878784 + 436208512 = 6027748224 */
	c.weights = SERVE_W_NVFP4;
	r = compute(&c);
	ck_assert(r.scale_bytes == 436208512.0 && r.weights_total == 6027748224.0);
	ck_assert(r.bits_per_linear == 4.5);
	/* mxfp4: an e8m0 byte per 32, no tensor scale: 4.25 bits */
	c.weights = SERVE_W_MXFP4;
	r = compute(&c);
	ck_assert(r.scale_bytes == lin / 32 && r.bits_per_linear == 4.25);
	/* a block that does not divide a row rounds up: 40 inputs in blocks of
	 * 16 is 3 blocks per output */
	c = serve_defaults();
	c.model = (serve_model){ .params = 1e6, .layers = 1, .hidden = 40, .heads = 2, .kv_heads = 2, .head_dim = 20,
		                 .ffn = 40, .mlp_mats = 2 };
	c.context = 1;
	c.weights = SERVE_W_NVFP4;
	/* q, k, v, o 40 x 40 and fc, proj 40 x 40: 6 matrices, 3 * 40 blocks and 4 bytes each */
	ck_assert(compute(&c).scale_bytes == 6 * (3 * 40 + 4));
}
END_TEST

START_TEST(tensor_parallel)
{
	/* vLLM (config.py get_num_kv_heads): max(1, kv_heads // tp) per GPU */
	serve_config c = preset_cfg("llama-3-8b", 8192, 1);
	c.tp = 2;
	serve_result r = compute(&c);
	ck_assert(r.kv_heads_gpu == 4 && r.kv_token_bytes == 65536);
	/* bf16 weights halve: the KV projections split as the others */
	ck_assert(r.weights_total == 8030261248.0);
	c.tp = 16;   /* 8 KV heads on 16 GPUs: one each, replicated */
	r = compute(&c);
	ck_assert(r.kv_heads_gpu == 1 && r.kv_token_bytes == 2 * 32 * 1 * 128 * 2);
	/* k and v whole (4096 x 128 each) on every GPU, the rest / 16 */
	double lin_split = 32 * (2 * 4096.0 * 4096 + 3 * 4096.0 * 14336) / 16, kv = 32 * 2 * 4096.0 * 128;
	ck_assert(r.weights_total == 2 * (lin_split + kv + 1050939392.0 / 16));
	c.tp = 3;
	refused(&c, (const char *const[]){ "--tp 3", "32 attention heads", NULL });
	/* 96 heads, 6 KV heads, 4 GPUs: 6 / 4 is no split and 4 / 6 no replica */
	c = preset_cfg("gpt3-175b", 2048, 1);
	c.model.kv_heads = 6;
	c.tp = 4;
	refused(&c, (const char *const[]){ "--tp 4", "6 KV heads", NULL });
}
END_TEST

START_TEST(vllm_log_of_a_llama3_8b_server)
{
	/* vLLM's startup log in vllm-project/vllm issue #12330 (a single A100
	 * 40GB, meta-llama/Meta-Llama-3-8B), the lines of worker.py's
	 * determine_num_available_blocks and the executor:
	 *   "the current vLLM instance can use total_gpu_memory (39.50GiB) x
	 *    gpu_memory_utilization (0.90) = 35.55GiB"
	 *   "model weights take 14.96GiB; non_torch_memory takes 0.10GiB;
	 *    PyTorch activation peak memory takes 9.37GiB; the rest of the
	 *    memory reserved for KV Cache is 11.12GiB."
	 *   "# GPU blocks: 5691, # CPU blocks: 2048"
	 *   "Maximum concurrency for 8192 tokens per request: 11.12x"
	 * A block is 16 tokens of 128 KiB: 2 MiB = 2^21 bytes. */
	serve_config c = preset_cfg("llama-3-8b", 8192, 1);
	c.gpu_mem = 39.5 * GIB;
	c.reserve = (9.37 + 0.10) * GIB;   /* activation peak and non-torch memory */
	serve_result r = compute(&c);
	ck_assert(r.block_bytes == 2097152);
	/* our weights, 16060522496 bytes = 14.9575 GiB, print as the log's 14.96 */
	ck_assert(fabs(r.weights_total / GIB - 14.96) < 0.005);
	/* the blocks exactly: (9/10 * 79/2 - 947/100) * 2^30 - 16060522496, over 2^21, floored */
	mpq_t kv, t;
	mpq_inits(kv, t, NULL);
	mpq_set_ui(kv, 9 * 79, 10 * 2);
	mpq_set_ui(t, 947, 100);
	mpq_sub(kv, kv, t);
	mpz_mul_2exp(mpq_numref(kv), mpq_numref(kv), 30);
	mpq_canonicalize(kv);
	mpq_set_ui(t, 16060522496ul, 1);
	mpq_sub(kv, kv, t);
	mpz_mul_2exp(mpq_denref(kv), mpq_denref(kv), 21);
	mpq_canonicalize(kv);
	mpz_t blocks;
	mpz_init(blocks);
	mpz_fdiv_q(blocks, mpq_numref(kv), mpq_denref(kv));
	ck_assert(r.blocks == mpz_get_d(blocks));
	ck_assert(r.blocks == 5694);
	/* against the log: each logged figure is rounded to 0.01 GiB and our
	 * weights are 0.002 GiB under vLLM's measured 14.9595, so the blocks
	 * may differ by (4 * 0.005 + 0.002) GiB / 2 MiB = 11.3 blocks */
	ck_assert(fabs(r.blocks - 5691) <= 11);
	/* the log's own figures agree with its block count: 5691 * 2 MiB =
	 * 11.1152 GiB prints as 11.12, and 5691 * 16 / 8192 = 11.115 as 11.12x */
	ck_assert(round(5691.0 * 2 / 1024 * 100) == 1112);
	c.reserve = 0;
	c.gpu_mem = (11.12 + 14.96 + 0.10 + 9.37) / 0.9 * GIB;
	r = compute(&c);
	ck_assert(r.concurrency == r.blocks * 16 / 8192.0);
	/* an 8192-token request fits once: 512 blocks */
	ck_assert(r.blocks_per_seq == 512 && r.max_batch == floor(r.blocks / 512) && r.fits);
	mpz_clear(blocks);
	mpq_clears(kv, t, NULL);
}
END_TEST

START_TEST(what_does_not_fit)
{
	/* bf16 Llama-3-8B on 16 GB at 0.9: 14.4e9 usable, 16060522496 of
	 * weights: short by 1660522496 bytes = 1.55 GiB = 1.66 GB */
	serve_config c = preset_cfg("llama-3-8b", 8192, 1);
	c.gpu_mem = 16e9;
	serve_result r = compute(&c);
	ck_assert(!r.weights_fit && !r.fits && r.blocks == 0 && r.max_batch == 0);
	ck_assert(r.kv_budget == 14.4e9 - 16060522496.0);
	char msg[512];
	serve_fit_message(msg, sizeof msg, &c, &r);
	ck_assert_msg(strstr(msg, "by 1.55 GiB (1.66 GB)"), "%s", msg);
	/* 80 GB: 72e9 - 16060522496 = 55939477504 bytes, 26674 blocks of 2 MiB,
	 * 52 sequences of 8192 (512 blocks each); 64 need 32768 blocks:
	 * 32768 * 2^21 - 55939477504 = 12779995136 bytes = 11.90 GiB short */
	c.gpu_mem = 80e9;
	c.batch = 64;
	r = compute(&c);
	ck_assert(r.weights_fit && !r.fits && r.blocks == 26674 && r.max_batch == 52);
	serve_fit_message(msg, sizeof msg, &c, &r);
	ck_assert_msg(strstr(msg, "by 11.90 GiB (12.78 GB)"), "%s", msg);
	c.batch = 52;
	r = compute(&c);
	ck_assert(r.fits && r.free_bytes == 55939477504.0 - 52 * 512 * 2097152.0);
	serve_fit_message(msg, sizeof msg, &c, &r);
	ck_assert(msg[0] == '\0');
	/* a context that is no whole number of blocks takes one more: 8193 tokens, 513 */
	c.context = 8193;
	ck_assert(compute(&c).blocks_per_seq == 513);
}
END_TEST

START_TEST(refusals)
{
	serve_config c = preset_cfg("llama-3-8b", 8192, 1);
	c.model.kv_heads = 5;
	refused(&c, (const char *const[]){ "--kv-heads 5", "32 query heads", NULL });
	c = preset_cfg("llama-3-8b", 0, 1);
	refused(&c, (const char *const[]){ "--context", NULL });
	c = preset_cfg("llama-3-8b", 8192, 1);
	c.model.params = 1e9;   /* fewer than the linear layers hold */
	refused(&c, (const char *const[]){ "6979321856", NULL });
	serve_weights w;
	serve_kv k;
	ck_assert_int_eq(serve_weights_from_name("int3", &w), MP_EINVAL);
	ck_assert_int_eq(serve_kv_from_name("int8", &k), MP_EINVAL);
	ck_assert_int_eq(serve_kv_from_name("fp8_e5m2", &k), MP_OK);
	ck_assert(k == SERVE_KV_FP8 && serve_kv_bytes(k) == 1);
}
END_TEST

START_TEST(sizes)
{
	double v;
	char err[256];
	ck_assert_int_eq(serve_parse_bytes("80GB", &v, err, sizeof err), MP_OK);
	ck_assert(v == 80e9);
	ck_assert_int_eq(serve_parse_bytes("39.5GiB", &v, err, sizeof err), MP_OK);
	ck_assert(v == 79 * 536870912.0);
	ck_assert_int_eq(serve_parse_bytes("512MiB", &v, err, sizeof err), MP_OK);
	ck_assert(v == 536870912.0);
	ck_assert_int_eq(serve_parse_bytes("1.5TB", &v, err, sizeof err), MP_OK);
	ck_assert(v == 1.5e12);
	ck_assert_int_eq(serve_parse_bytes("2^30", &v, err, sizeof err), MP_OK);
	ck_assert(v == GIB);
	ck_assert_int_eq(serve_parse_bytes("0.1GB", &v, err, sizeof err), MP_OK);
	ck_assert(v == 1e8);
	const char *bad[] = { "80GX", "GB", "-1GB", "nanGB", "80 G B", "" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(serve_parse_bytes(bad[i], &v, err, sizeof err) == MP_EINVAL, "%s", bad[i]);
		ck_assert(strstr(err, "is not a size"));
	}
}
END_TEST

/* budget_opts_parse on a command line given as one string of words. */
static mp_status parse(const char *line, budget_opts *o, char *err, size_t n)
{
	static char buf[512];
	char *argv[40];
	int argc = 0;
	snprintf(buf, sizeof buf, "budget %s", line);
	for (char *t = strtok(buf, " "); t && argc < 39; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	return budget_opts_parse(argc, argv, o, err, n);
}

START_TEST(options)
{
	budget_opts o;
	char err[512];
	ck_assert_int_eq(parse("--serve --preset llama-3-8b --context 4096 --batch 2 --kv-dtype fp8 --weights-dtype "
	                       "nvfp4 --gpu-mem 80GB --gpu-util 0.95 --reserve 2GiB --block-size 32", &o, err,
	                       sizeof err), MP_OK);
	const serve_config *c = &o.serve_cfg;
	ck_assert(o.serve && c->model.kv_heads == 8 && c->model.ffn == 14336 && c->context == 4096 && c->batch == 2);
	ck_assert(c->kv == SERVE_KV_FP8 && c->weights == SERVE_W_NVFP4 && c->gpu_mem == 80e9 && c->gpu_util == 0.95);
	ck_assert(c->reserve == 2 * GIB && c->block_size == 32 && c->tp == 1);
	/* the preset's context by default; --kv-heads and --head-dim over it */
	ck_assert_int_eq(parse("--serve --preset llama-3-8b --kv-heads 4 --head-dim 64", &o, err, sizeof err), MP_OK);
	ck_assert(o.serve_cfg.context == 8192 && o.serve_cfg.batch == 1);
	ck_assert(o.serve_cfg.model.kv_heads == 4 && o.serve_cfg.model.head_dim == 64);
	/* a custom shape: KV heads = heads, head size = channels / heads, no FFN */
	ck_assert_int_eq(parse("--serve --params 1e9 --layers 4 --channels 512 --heads 8 --context 100", &o, err,
	                       sizeof err), MP_OK);
	ck_assert(o.serve_cfg.model.kv_heads == 8 && o.serve_cfg.model.head_dim == 64 && o.serve_cfg.model.ffn == 0);
	static const struct { const char *line, *want; } bad[] = {
		{ "--preset llama-3-8b --kv-heads 8", "--kv-heads: only budget --serve reads it" },
		{ "--preset llama-3-8b --gpu-mem 80GB", "--gpu-mem: only budget --serve" },
		{ "--serve --preset llama-3-8b --zero 3", "--zero: a training option" },
		{ "--serve --preset llama-3-8b --recipe fp32", "--recipe: a training option" },
		{ "--serve --preset llama-3-8b --weights-dtype int3", "--weights-dtype: unknown format 'int3'" },
		{ "--serve --preset llama-3-8b --kv-dtype int8", "--kv-dtype: unknown format 'int8'" },
		{ "--serve --preset llama-3-8b --gpu-mem 80GX", "--gpu-mem: '80GX' is not a size" },
		{ "--serve --preset llama-3-8b --gpu-mem 0GB", "--gpu-mem: '0GB' is no memory" },
		{ "--serve --preset llama-3-8b --gpu-mem 80GB --gpu-util 1.5", "--gpu-util: '1.5'" },
		{ "--serve --preset llama-3-8b --gpu-mem 80GB --gpu-util 0", "--gpu-util: '0'" },
		{ "--serve --preset llama-3-8b --gpu-mem 80GB --block-size 0", "--block-size" },
		{ "--serve --params 7e9", "--serve needs a model shape" },
		{ "--serve --preset llama-3-8b --reserve 1GB", "--reserve: needs --gpu-mem" },
		{ "--serve --preset llama-3-8b --gpu-util 0.8", "--gpu-util: needs --gpu-mem" },
		{ "--serve --params 1e9 --layers 4 --channels 500 --heads 8 --context 10", "give --head-dim" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		ck_assert_msg(parse(bad[i].line, &o, err, sizeof err) == MP_EINVAL, "%s", bad[i].line);
		ck_assert_msg(strstr(err, bad[i].want), "%s: '%s' lacks '%s'", bad[i].line, err, bad[i].want);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("budget_serve");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, presets_from_their_configs);
	tcase_add_test(tc, kv_cache_per_token);
	tcase_add_test(tc, weights_per_format);
	tcase_add_test(tc, tensor_parallel);
	tcase_add_test(tc, vllm_log_of_a_llama3_8b_server);
	tcase_add_test(tc, what_does_not_fit);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, sizes);
	tcase_add_test(tc, options);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
