#include <math.h>
#include <stdio.h>
#include <string.h>
#include <gmp.h>

#include "budget/budget.h"
#include "budget/serve.h"
#include "fmt/parse.h"
#include "fmt/round.h"

/* --- formats --- */

/* How one quantized matrix is stored: element bits, a scale of scale_bytes
 * per block of `block` inputs and output (0: none), and tensor_bytes per
 * matrix. 16-bit formats quantize nothing: every parameter is 2 bytes. */
typedef struct {
	const char *name;
	double elem_bytes;
	double block;
	double block_bytes;
	double tensor_bytes;
	const char *note;
} weights_info;

static const weights_info weight_formats[SERVE_W_COUNT] = {
	[SERVE_W_BF16] = { .name = "bf16", .elem_bytes = 2, .note = "bf16: 2 bytes per parameter, no scales." },
	[SERVE_W_FP16] = { .name = "fp16", .elem_bytes = 2, .note = "fp16: 2 bytes per parameter, no scales." },
	/* vLLM's fp8 checkpoints (fp8.py): e4m3 weights, one fp32 weight_scale
	 * per logical matrix */
	[SERVE_W_FP8] = { .name = "fp8", .elem_bytes = 1, .tensor_bytes = 4,
	                  .note = "fp8: e4m3 linear weights (1 byte) with one fp32 scale per matrix; embeddings, head "
	                          "and norms stay 16-bit." },
	/* vLLM's GPTQ layout (gptq.py GPTQLinearMethod.create_weights, read in
	 * a 0.2-era copy): qweight int32 [in/8, out], scales fp16 [in/128, out],
	 * qzeros int32 [in/128, out/8]: per group of 128 inputs and one output,
	 * 64 bytes of codes, a 2-byte scale and half a byte of zero point
	 * (4.15625 bits). AWQ (awq.py AWQLinearMethod.create_weights, a
	 * 0.6-era copy) packs qweight along the outputs, int32 [in, out/8],
	 * with the same scales and qzeros: the same bytes. GPTQ's g_idx (int32
	 * per input row) is not counted. */
	[SERVE_W_INT4] = { .name = "int4", .elem_bytes = 0.5, .block = 128, .block_bytes = 2.5,
	                   .note = "int4: GPTQ/AWQ groups of 128 inputs, each with an fp16 scale and a 4-bit zero "
	                           "point (4.15625 bits); embeddings, head and norms stay 16-bit." },
	/* NVFP4: one e4m3 scale per 16 elements, one fp32 scale per tensor */
	[SERVE_W_NVFP4] = { .name = "nvfp4", .elem_bytes = 0.5, .block = 16, .block_bytes = 1, .tensor_bytes = 4,
	                    .note = "nvfp4: e2m1 codes, one e4m3 scale per 16 and one fp32 scale per matrix (4.5 "
	                            "bits); embeddings, head and norms stay 16-bit." },
	/* OCP MX v1.0: one e8m0 scale per 32 elements */
	[SERVE_W_MXFP4] = { .name = "mxfp4", .elem_bytes = 0.5, .block = 32, .block_bytes = 1,
	                    .note = "mxfp4: e2m1 codes, one e8m0 scale per 32 (OCP MX v1.0, 4.25 bits); embeddings, "
	                            "head and norms stay 16-bit." },
};

static const struct {
	const char *name;
	serve_kv kv;
} kv_names[] = {
	{ "bf16", SERVE_KV_BF16 }, { "fp16", SERVE_KV_FP16 }, { "fp8", SERVE_KV_FP8 },
	{ "fp8_e4m3", SERVE_KV_FP8 }, { "fp8_e5m2", SERVE_KV_FP8 },
};

const char *serve_weights_name(serve_weights w)
{
	return (unsigned)w < SERVE_W_COUNT ? weight_formats[w].name : "?";
}

const char *serve_weights_note(serve_weights w)
{
	return (unsigned)w < SERVE_W_COUNT ? weight_formats[w].note : "";
}

const char *serve_kv_name(serve_kv k)
{
	return k == SERVE_KV_BF16 ? "bf16" : k == SERVE_KV_FP16 ? "fp16" : k == SERVE_KV_FP8 ? "fp8" : "?";
}

double serve_kv_bytes(serve_kv k)
{
	return k == SERVE_KV_FP8 ? 1 : 2;
}

mp_status serve_weights_from_name(const char *name, serve_weights *out)
{
	for (int i = 0; name && i < SERVE_W_COUNT; i++)
		if (strcmp(name, weight_formats[i].name) == 0) {
			*out = (serve_weights)i;
			return MP_OK;
		}
	return MP_EINVAL;
}

mp_status serve_kv_from_name(const char *name, serve_kv *out)
{
	for (size_t i = 0; name && i < sizeof kv_names / sizeof kv_names[0]; i++)
		if (strcmp(name, kv_names[i].name) == 0) {
			*out = kv_names[i].kv;
			return MP_OK;
		}
	return MP_EINVAL;
}

const char *serve_weights_known(void)
{
	return "bf16, fp16, fp8, int4, nvfp4, mxfp4";
}

const char *serve_kv_known(void)
{
	return "bf16, fp16, fp8 (= fp8_e4m3), fp8_e5m2";
}

/* --- presets --- */

/* The serving shape of each training preset (budget.c's table gives the
 * count, layers, width, heads and vocabulary):
 * - gpt2-small: GPT-2's config.json (n_inner unset: 4 * 768), c_fc and
 *   c_proj;
 * - llama-7b: LLaMA (Touvron et al. 2023, Table 2) with the Hugging Face
 *   config's intermediate_size 11008, no GQA, SwiGLU's three matrices;
 * - gpt3-175b: Brown et al. 2020, Table 2.1: d_head 128, d_ff = 4 * 12288;
 * - llama-3-8b: Meta's config.json for Meta-Llama-3-8B: 8 key_value heads,
 *   intermediate_size 14336. */
static const struct {
	const char *name;
	double kv_heads, head_dim, ffn, mlp_mats;
} serve_presets[] = {
	{ "gpt2-small", 12, 64, 3072, 2 },
	{ "llama-7b", 32, 128, 11008, 3 },
	{ "gpt3-175b", 96, 128, 49152, 2 },
	{ "llama-3-8b", 8, 128, 14336, 3 },
};

mp_status serve_preset(const char *name, serve_model *out)
{
	double params;
	budget_shape s;
	if (budget_preset(name, &params, &s) != MP_OK)
		return MP_EINVAL;
	for (size_t i = 0; i < sizeof serve_presets / sizeof serve_presets[0]; i++)
		if (strcmp(name, serve_presets[i].name) == 0) {
			*out = (serve_model){ .params = params, .layers = s.layers, .hidden = s.hidden, .heads = s.heads,
				              .kv_heads = serve_presets[i].kv_heads, .head_dim = serve_presets[i].head_dim,
				              .ffn = serve_presets[i].ffn, .mlp_mats = serve_presets[i].mlp_mats };
			return MP_OK;
		}
	return MP_EINVAL;
}

/* --- sizes --- */

mp_status serve_parse_bytes(const char *text, double *out, char *err, size_t errlen)
{
	static const struct { const char *unit; unsigned long base, power; } units[] = {
		{ "B", 1, 0 }, { "kB", 1000, 1 }, { "KB", 1000, 1 }, { "MB", 1000, 2 }, { "GB", 1000, 3 },
		{ "TB", 1000, 4 }, { "KiB", 1024, 1 }, { "MiB", 1024, 2 }, { "GiB", 1024, 3 }, { "TiB", 1024, 4 },
	};
	size_t n = strlen(text), u = n;
	while (u > 0 && ((text[u - 1] >= 'a' && text[u - 1] <= 'z') || (text[u - 1] >= 'A' && text[u - 1] <= 'Z')))
		u--;
	unsigned long base = 1, power = 0;
	if (u < n) {
		size_t i = 0, count = sizeof units / sizeof units[0];
		while (i < count && strcmp(text + u, units[i].unit) != 0)
			i++;
		if (i == count || u == 0)
			return mp_fail(MP_EINVAL, err, errlen, "'%s' is not a size (a number and a unit: 80GB, 39.5GiB, "
			               "512MiB; units B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)", text);
		base = units[i].base;
		power = units[i].power;
	}
	if (u >= FMT_PARSE_MAX_LEN)
		return mp_fail(MP_EINVAL, err, errlen, "size too long");
	char num[FMT_PARSE_MAX_LEN];
	memcpy(num, text, u);
	num[u] = '\0';
	fmt_num x;
	fmt_num_init(&x);
	mp_status st = fmt_parse_number(&x, num, NULL, 0);
	if (st == MP_OK && (x.kind != NUM_FINITE || (x.neg && mpq_sgn(x.mag) != 0)))
		st = MP_EINVAL;
	if (st == MP_OK) {
		mpz_t p;
		mpz_init(p);
		mpz_ui_pow_ui(p, base, power);
		mpz_mul(mpq_numref(x.mag), mpq_numref(x.mag), p);
		mpq_canonicalize(x.mag);
		mpz_clear(p);
		*out = fmt_num_to_double(&x);
	}
	fmt_num_clear(&x);
	if (st != MP_OK)
		return mp_fail(MP_EINVAL, err, errlen, "'%s' is not a size (a non-negative number and a unit: 80GB, "
		               "39.5GiB, 512MiB)", text);
	return MP_OK;
}

/* --- arithmetic --- */

serve_config serve_defaults(void)
{
	/* vLLM's EngineArgs (engine/arg_utils.py, read in a 0.6-era copy):
	 * block_size 16, gpu_memory_utilization 0.90, kv_cache_dtype auto (the
	 * model's) */
	return (serve_config){ .weights = SERVE_W_BF16, .kv = SERVE_KV_BF16, .context = 0, .batch = 1, .tp = 1,
		               .gpu_mem = 0, .gpu_util = 0.9, .reserve = 0, .block_size = 16 };
}

static bool whole(double v)
{
	return isfinite(v) && v >= 1 && v == floor(v);
}

/* Bytes of one (in x out) matrix in format f: codes, then scales into *scales. */
static double matrix_bytes(const weights_info *f, double in, double out, double *scales)
{
	double s = f->tensor_bytes;
	if (f->block > 0)
		s += ceil(in / f->block) * out * f->block_bytes;
	*scales += s;
	return in * out * f->elem_bytes;
}

/* The weights of one GPU into r: each linear matrix split as vLLM splits it
 * (column-parallel q, k, v, gate and up by their outputs, row-parallel o and
 * down by their inputs, k and v whole below one KV head per GPU), the rest
 * 16-bit and divided by tp. */
static void weights_of(serve_result *r, const serve_config *c)
{
	const serve_model *m = &c->model;
	const weights_info *f = &weight_formats[c->weights];
	double t = c->tp, h = m->hidden, qd = m->heads * m->head_dim, kvd = r->kv_heads_gpu * m->head_dim;
	if (m->ffn == 0) {
		/* every parameter in the format; blocks over the whole count */
		r->linear_params = m->params;
		r->other_params = 0;
		r->weight_bytes = m->params / t * f->elem_bytes;
		r->scale_bytes = f->block > 0 ? ceil(m->params / t / f->block) * f->block_bytes : 0;
	} else {
		double bytes = 0, scales = 0;
		bytes += matrix_bytes(f, h, qd / t, &scales);                  /* q */
		bytes += matrix_bytes(f, h, kvd, &scales);                     /* k */
		bytes += matrix_bytes(f, h, kvd, &scales);                     /* v */
		bytes += matrix_bytes(f, qd / t, h, &scales);                  /* o */
		for (double i = 0; i < m->mlp_mats - 1; i++)
			bytes += matrix_bytes(f, h, m->ffn / t, &scales);      /* gate, up / fc */
		bytes += matrix_bytes(f, m->ffn / t, h, &scales);              /* down / proj */
		r->linear_params = m->layers * (2 * h * qd + 2 * h * m->kv_heads * m->head_dim + m->mlp_mats * h * m->ffn);
		r->other_params = m->params - r->linear_params;
		r->weight_bytes = m->layers * bytes + r->other_params / t * 2;
		r->scale_bytes = m->layers * scales;
	}
	r->weights_total = r->weight_bytes + r->scale_bytes;
	r->bits_per_linear = 8 * (f->elem_bytes + (f->block > 0 ? f->block_bytes / f->block : 0));
}

/* The shape checks vLLM makes, and ours. */
static mp_status model_ok(const serve_config *c, char *err, size_t errlen)
{
	const serve_model *m = &c->model;
	if (!(isfinite(m->params) && m->params > 0) || !whole(m->layers) || !whole(m->heads) || !whole(m->kv_heads) ||
	    !whole(m->head_dim) || !whole(m->hidden))
		return mp_fail(MP_EINVAL, err, errlen, "serving needs a parameter count and a shape (layers, channels, "
		               "heads, KV heads, head size): --preset M, or --params with --layers --channels --heads");
	if (fmod(m->heads, m->kv_heads) != 0)
		return mp_fail(MP_EINVAL, err, errlen, "--kv-heads %.0f: does not divide the %.0f query heads (grouped-query "
		               "attention shares each KV head among heads/kv_heads query heads)", m->kv_heads, m->heads);
	if ((unsigned)c->weights >= SERVE_W_COUNT || (unsigned)c->kv >= SERVE_KV_COUNT)
		return mp_fail(MP_EINVAL, err, errlen, "unknown weights or KV cache format");
	if (!whole(c->tp) || fmod(m->heads, c->tp) != 0)
		return mp_fail(MP_EINVAL, err, errlen, "--tp %.0f: does not divide the %.0f attention heads (vLLM refuses "
		               "it)", c->tp, m->heads);
	if (fmod(m->kv_heads, c->tp) != 0 && fmod(c->tp, m->kv_heads) != 0)
		return mp_fail(MP_EINVAL, err, errlen, "--tp %.0f: neither divides nor is a multiple of the %.0f KV heads "
		               "(vLLM splits them or replicates them, nothing between)", c->tp, m->kv_heads);
	if (m->ffn > 0 && fmod(m->ffn, c->tp) != 0)
		return mp_fail(MP_EINVAL, err, errlen, "--tp %.0f: does not divide the FFN width %.0f", c->tp, m->ffn);
	if (!whole(c->context) || !whole(c->batch))
		return mp_fail(MP_EINVAL, err, errlen, "--context and --batch must be positive whole numbers");
	if (c->gpu_mem > 0 && (!(c->gpu_util > 0 && c->gpu_util <= 1) || !whole(c->block_size) ||
	                       !(c->reserve >= 0 && isfinite(c->reserve))))
		return mp_fail(MP_EINVAL, err, errlen, "--gpu-util must lie in (0, 1], --block-size be a whole number and "
		               "--reserve a size");
	return MP_OK;
}

/* What the GPU leaves for the KV cache, in vLLM's blocks, as vLLM's
 * worker.py determine_num_available_blocks computes it (0.6-era copy): a
 * profile run (a forward pass over max_num_batched_tokens dummy tokens)
 * measures the weights, the activation peak and the non-torch memory;
 * total_gpu_memory * gpu_memory_utilization less those is the KV cache;
 * a block is block_size tokens of every layer's K and V (cache_engine.py
 * get_cache_block_size). Here the weights are computed and the other two
 * are the reserve. */
static void fit_of(serve_result *r, const serve_config *c)
{
	r->has_gpu = true;
	r->usable = c->gpu_mem * c->gpu_util;
	r->kv_budget = r->usable - r->weights_total - c->reserve;
	r->block_bytes = c->block_size * r->kv_token_bytes;
	/* vLLM: num_gpu_blocks = int(available_kv_cache_memory // cache_block_size), at least 0 */
	r->blocks = r->kv_budget > 0 ? floor(r->kv_budget / r->block_bytes) : 0;
	r->max_tokens = r->blocks * c->block_size;
	r->blocks_per_seq = ceil(c->context / c->block_size);
	r->max_batch = floor(r->blocks / r->blocks_per_seq);
	r->concurrency = r->max_tokens / c->context;
	r->free_bytes = r->kv_budget - c->batch * r->blocks_per_seq * r->block_bytes;
	r->weights_fit = r->kv_budget >= 0;
	r->fits = r->weights_fit && c->batch * r->blocks_per_seq <= r->blocks;
}

mp_status serve_compute(serve_result *out, const serve_config *cfg, char *err, size_t errlen)
{
	if (model_ok(cfg, err, errlen) != MP_OK)
		return MP_EINVAL;
	const serve_model *m = &cfg->model;
	serve_result r = { .fits = true, .weights_fit = true };
	r.kv_heads_gpu = fmax(1, m->kv_heads / cfg->tp);
	weights_of(&r, cfg);
	if (r.other_params < 0)
		return mp_fail(MP_EINVAL, err, errlen, "the shape's linear layers hold %.0f parameters, more than --params "
		               "%.0f", r.linear_params, m->params);
	r.kv_token_bytes = 2 * m->layers * r.kv_heads_gpu * m->head_dim * serve_kv_bytes(cfg->kv);
	r.kv_tokens = cfg->batch * cfg->context;
	r.kv_bytes = r.kv_token_bytes * r.kv_tokens;
	if (cfg->gpu_mem > 0)
		fit_of(&r, cfg);
	*out = r;
	return MP_OK;
}

size_t serve_fit_message(char *buf, size_t n, const serve_config *cfg, const serve_result *r)
{
	const double gib = 1073741824.0;
	if (n > 0)
		buf[0] = '\0';
	if (!r->has_gpu || r->fits)
		return 0;
	if (!r->weights_fit) {
		double s = -r->kv_budget;
		return (size_t)snprintf(buf, n, "does not fit: the weights (%.2f GiB) and the reserve (%.2f GiB) exceed "
		                        "the %.2f GiB vLLM may use (%.2f GiB x %.2f) by %.2f GiB (%.2f GB)",
		                        r->weights_total / gib, cfg->reserve / gib, r->usable / gib, cfg->gpu_mem / gib,
		                        cfg->gpu_util, s / gib, s / 1e9);
	}
	double s = -r->free_bytes;
	return (size_t)snprintf(buf, n, "does not fit: batch %.0f x context %.0f needs %.0f blocks of %.0f tokens; "
	                        "%.0f fit (at most %.0f sequences of %.0f tokens): short by %.2f GiB (%.2f GB) of KV "
	                        "cache", cfg->batch, cfg->context, cfg->batch * r->blocks_per_seq, cfg->block_size,
	                        r->blocks, r->max_batch, cfg->context, s / gib, s / 1e9);
}
