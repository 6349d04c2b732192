#include <math.h>
#include <stdio.h>
#include <string.h>
#include <gmp.h>

#include "budget/budget.h"
#include "budget/parallel.h"
#include "fmt/parse.h"
#include "fmt/round.h"

/* --- tables --- */

/* Bytes per parameter of each resident copy, and of one optimiser state element. */
typedef struct {
	const char *name;
	double master, weights, grads, accum;
	double state;        /* one fp32/bf16 optimiser state element */
	double activation;   /* bytes of one stored activation element */
} recipe_info;

static const recipe_info recipes[BUDGET_RECIPE_COUNT] = {
	[BUDGET_RECIPE_FP32] = { .name = "fp32", .master = 0, .weights = 4, .grads = 4, .accum = 0,
	                         .state = 4, .activation = 4 },
	[BUDGET_RECIPE_FP16_MIXED] = { .name = "fp16-mixed", .master = 4, .weights = 2, .grads = 2, .accum = 4,
	                               .state = 4, .activation = 2 },
	[BUDGET_RECIPE_BF16_MIXED] = { .name = "bf16-mixed", .master = 4, .weights = 2, .grads = 2, .accum = 4,
	                               .state = 4, .activation = 2 },
	[BUDGET_RECIPE_BF16_MIXED_NOACCUM] = { .name = "bf16-mixed-noaccum", .master = 4, .weights = 2, .grads = 2,
	                                       .accum = 0, .state = 4, .activation = 2 },
	[BUDGET_RECIPE_BF16_PURE] = { .name = "bf16-pure", .master = 0, .weights = 2, .grads = 2, .accum = 0,
	                              .state = 2, .activation = 2 },
	/* fp8 is a GEMM input format: the weight copy is e4m3, weight gradients
	 * leave the GEMM in 16 bits, and the activations kept for backward are
	 * counted as 16-bit, as in Korthikanti's figures */
	[BUDGET_RECIPE_FP8_MIXED] = { .name = "fp8-mixed", .master = 4, .weights = 1, .grads = 2, .accum = 4,
	                              .state = 4, .activation = 2 },
};

typedef struct {
	const char *name;
	double states;       /* state elements per parameter */
	double fixed_bytes;  /* bytes per state element regardless of the recipe (0: the recipe's) */
} optimizer_info;

static const optimizer_info optimizers[BUDGET_OPT_COUNT] = {
	[BUDGET_OPT_ADAM] = { .name = "adam", .states = 2, .fixed_bytes = 0 },
	[BUDGET_OPT_ADAMW] = { .name = "adamw", .states = 2, .fixed_bytes = 0 },
	[BUDGET_OPT_SGD] = { .name = "sgd", .states = 0, .fixed_bytes = 0 },
	[BUDGET_OPT_SGD_MOMENTUM] = { .name = "sgd-momentum", .states = 1, .fixed_bytes = 0 },
	[BUDGET_OPT_ADAM8BIT] = { .name = "adam8bit", .states = 2, .fixed_bytes = 1 },
};

static const char *const recompute_names[BUDGET_RECOMPUTE_COUNT] = {
	[BUDGET_RECOMPUTE_NONE] = "none",
	[BUDGET_RECOMPUTE_SELECTIVE] = "selective",
	[BUDGET_RECOMPUTE_FULL] = "full",
};

static const char *const convention_names[BUDGET_CONV_COUNT] = {
	[BUDGET_CONV_MIXPREC] = "mixprec",
	[BUDGET_CONV_ELEUTHER] = "eleuther",
	[BUDGET_CONV_DEEPSPEED] = "deepspeed",
	[BUDGET_CONV_ACCELERATE] = "accelerate",
};

static const char *const convention_notes[BUDGET_CONV_COUNT] = {
	[BUDGET_CONV_MIXPREC] =
		"mixprec counts every copy the recipe keeps resident at the optimiser step; for bf16-mixed "
		"with Adam: fp32 master 4, 16-bit working copy 2, 16-bit gradient 2, fp32 gradient "
		"accumulator 4 and Adam's m and v 8, 20 bytes per parameter.",
	[BUDGET_CONV_ELEUTHER] =
		"Transformer Math 101 (EleutherAI) counts no separate fp32 gradient accumulator, so mixed "
		"precision with Adam is 2 + 2 + 12 = 16 bytes per parameter, 4 fewer than mixprec's 20.",
	[BUDGET_CONV_DEEPSPEED] =
		"DeepSpeed's estimators (estimate_zero2/3_model_states_mem_needs) assume 16-bit weights with "
		"fp32 Adam whatever the recipe. ZeRO-2 without offload keeps the 16-bit weights (2 bytes) on "
		"every GPU and shards the other 18: 2P + 18P/G per GPU; with its default cpu offload 2P. "
		"ZeRO-3 without offload: 4 bytes per largest-layer parameter + 18P/G; with cpu offload only "
		"the largest layer. The CPU figure includes DeepSpeed's additional_buffer_factor 1.5. "
		"(Before DeepSpeed PR #5099, April 2024, ZeRO-2 without offload was 4P + 16P/G.)",
	[BUDGET_CONV_ACCELERATE] =
		"HF accelerate's estimate reports the largest single stage (weights, gradients or optimiser "
		"state) rather than their sum, so its figure (8 bytes for bf16-mixed + Adam) is a lower bound "
		"on what training holds at once.",
};

static const char *const component_names[BUDGET_COMPONENT_COUNT] = {
	[BUDGET_MASTER] = "master_weights",
	[BUDGET_WEIGHTS] = "weights",
	[BUDGET_GRADS] = "gradients",
	[BUDGET_GRAD_ACCUM] = "grad_accumulator",
	[BUDGET_OPTIMIZER] = "optimizer_state",
	[BUDGET_ACTIVATIONS] = "activations",
};

typedef struct {
	const char *name;
	double params;
	budget_shape shape;
} preset_info;

/* The named models: each name typed once, here (the table, the list of
 * known names and the TUI's Model field all come from this; serve.c adds
 * each one's KV heads, head size and FFN). llama-3-8b is Meta's
 * config.json for Meta-Llama-3-8B (32 layers, hidden 4096, 32 heads,
 * max_position_embeddings 8192, vocab 128256) with its exact count:
 * untied embedding and head 2 * 128256 * 4096, 32 layers of 218112000
 * (q, o 4096^2 each, k, v 4096 * 1024 each, three 4096 * 14336 MLP
 * matrices, two norms of 4096) and a final norm of 4096. */
#define BUDGET_PRESETS(X)                                    \
	X("gpt2-small", 124e6, 12, 768, 12, 1024, 50257)     \
	X("llama-7b", 6.7e9, 32, 4096, 32, 2048, 32000)      \
	X("gpt3-175b", 175e9, 96, 12288, 96, 2048, 50257)    \
	X("llama-3-8b", 8030261248, 32, 4096, 32, 8192, 128256)

#define PRESET_ROW(n, p, l, h, nh, s, v) \
	{ .name = n, .params = p,        \
	  .shape = { .layers = l, .hidden = h, .heads = nh, .seq = s, .micro_batch = 1, .vocab = v } },
#define PRESET_NAME(n, p, l, h, nh, s, v) ", " n

static const preset_info presets[] = { BUDGET_PRESETS(PRESET_ROW) };
static const char preset_names[] = BUDGET_PRESETS(PRESET_NAME);   /* ", a, b, c" */

/* --- names --- */

const char *budget_recipe_name(budget_recipe r)
{
	return (unsigned)r < BUDGET_RECIPE_COUNT ? recipes[r].name : "?";
}

const char *budget_optimizer_name(budget_optimizer o)
{
	return (unsigned)o < BUDGET_OPT_COUNT ? optimizers[o].name : "?";
}

const char *budget_recompute_name(budget_recompute r)
{
	return (unsigned)r < BUDGET_RECOMPUTE_COUNT ? recompute_names[r] : "?";
}

const char *budget_convention_name(budget_convention c)
{
	return (unsigned)c < BUDGET_CONV_COUNT ? convention_names[c] : "?";
}

const char *budget_component_name(budget_component c)
{
	return (unsigned)c < BUDGET_COMPONENT_COUNT ? component_names[c] : "?";
}

const char *budget_convention_note(budget_convention c)
{
	return (unsigned)c < BUDGET_CONV_COUNT ? convention_notes[c] : "";
}

size_t budget_explain(char *buf, size_t n, const budget_config *cfg, const budget_result *r)
{
	if (n == 0)
		return 0;
	buf[0] = '\0';
	if (cfg->convention != BUDGET_CONV_MIXPREC ||
	    (cfg->recipe == BUDGET_RECIPE_BF16_MIXED && cfg->optimizer == BUDGET_OPT_ADAM))
		return (size_t)snprintf(buf, n, "%s", budget_convention_note(cfg->convention));
	/* the convention's note counts bf16-mixed with Adam; any other pair its own sum */
	size_t used = (size_t)snprintf(buf, n, "mixprec counts every copy the recipe keeps resident at the optimiser "
	                               "step; for %s with %s:", budget_recipe_name(cfg->recipe),
	                               budget_optimizer_name(cfg->optimizer));
	double sum = 0;
	for (int c = 0; c < BUDGET_ACTIVATIONS && used < n; c++)
		if (r->bytes_per_param[c] > 0) {
			used += (size_t)snprintf(buf + used, n - used, "%s %s %.4g", sum > 0 ? " +" : "",
			                         budget_component_name((budget_component)c), r->bytes_per_param[c]);
			sum += r->bytes_per_param[c];
		}
	if (used < n)
		used += (size_t)snprintf(buf + used, n - used, " = %.4g bytes per parameter.", sum);
	return used;
}

mp_status budget_recipe_from_name(const char *name, budget_recipe *out)
{
	for (int i = 0; name && i < BUDGET_RECIPE_COUNT; i++)
		if (strcmp(name, recipes[i].name) == 0) {
			*out = (budget_recipe)i;
			return MP_OK;
		}
	return MP_EINVAL;
}

mp_status budget_optimizer_from_name(const char *name, budget_optimizer *out)
{
	for (int i = 0; name && i < BUDGET_OPT_COUNT; i++)
		if (strcmp(name, optimizers[i].name) == 0) {
			*out = (budget_optimizer)i;
			return MP_OK;
		}
	return MP_EINVAL;
}

mp_status budget_recompute_from_name(const char *name, budget_recompute *out)
{
	for (int i = 0; name && i < BUDGET_RECOMPUTE_COUNT; i++)
		if (strcmp(name, recompute_names[i]) == 0) {
			*out = (budget_recompute)i;
			return MP_OK;
		}
	return MP_EINVAL;
}

mp_status budget_convention_from_name(const char *name, budget_convention *out)
{
	for (int i = 0; name && i < BUDGET_CONV_COUNT; i++)
		if (strcmp(name, convention_names[i]) == 0) {
			*out = (budget_convention)i;
			return MP_OK;
		}
	return MP_EINVAL;
}

const char *budget_recipe_known(void)
{
	return "fp32, fp16-mixed, bf16-mixed, bf16-mixed-noaccum, bf16-pure, fp8-mixed";
}

const char *budget_optimizer_known(void)
{
	return "adam, adamw, sgd, sgd-momentum, adam8bit";
}

const char *budget_recompute_known(void)
{
	return "none, selective, full";
}

const char *budget_convention_known(void)
{
	return "mixprec, eleuther, deepspeed, accelerate";
}

const char *budget_preset_known(void)
{
	return preset_names + 2;
}

size_t budget_preset_count(void)
{
	return sizeof presets / sizeof presets[0];
}

const char *budget_preset_name(size_t i)
{
	return i < budget_preset_count() ? presets[i].name : NULL;
}

mp_status budget_parse_zero(const char *text, int *stage, char *err, size_t errlen)
{
	double d = 0;
	mp_status st = MP_OK;
	/* budget_parse_count rejects 0, which --zero needs */
	if (strcmp(text, "0") != 0)
		st = budget_parse_count(text, &d, err, errlen);
	if (st != MP_OK || d < 0 || d > 3) {
		snprintf(err, errlen, "--zero: '%s' is not a whole number in 0..3", text);
		return MP_EINVAL;
	}
	*stage = (int)d;
	return MP_OK;
}

mp_status budget_preset(const char *name, double *params, budget_shape *shape)
{
	for (size_t i = 0; name && i < sizeof presets / sizeof presets[0]; i++)
		if (strcmp(name, presets[i].name) == 0) {
			*params = presets[i].params;
			*shape = presets[i].shape;
			return MP_OK;
		}
	return MP_EINVAL;
}

/* --- parsing --- */

mp_status budget_parse_count(const char *text, double *out, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (!text) {
		if (err)
			snprintf(err, errlen, "no number");
		return MP_EPARSE;
	}
	size_t n = strlen(text);
	while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t'))
		n--;
	int exp10 = 0;
	if (n > 1) {
		switch (text[n - 1]) {
		case 'k': case 'K': exp10 = 3; break;
		case 'M': exp10 = 6; break;
		case 'B': case 'G': exp10 = 9; break;
		case 'T': exp10 = 12; break;
		default: break;
		}
		/* a hex float may end in B: 0x1B is a number, not 1 billion */
		if (exp10 && (strstr(text, "0x") || strstr(text, "0X")))
			exp10 = 0;
	}
	if (n >= FMT_PARSE_MAX_LEN) {
		if (err)
			snprintf(err, errlen, "number too long");
		return MP_EPARSE;
	}
	char buf[FMT_PARSE_MAX_LEN];
	memcpy(buf, text, n);
	buf[exp10 ? n - 1 : n] = '\0';
	fmt_num x;
	fmt_num_init(&x);
	mp_status st = fmt_parse_number(&x, buf, NULL, 0);
	if (st != MP_OK && err)
		snprintf(err, errlen, "'%.64s%s' is not a count (expected a whole number such as 7000000000, 7e9, "
		         "6.7B, 124M or 2^30)", text, n > 64 ? "..." : "");
	if (st == MP_OK) {
		if (exp10) {
			mpz_t p;
			mpz_init(p);
			mpz_ui_pow_ui(p, 10, (unsigned long)exp10);
			mpz_mul(mpq_numref(x.mag), mpq_numref(x.mag), p);
			mpq_canonicalize(x.mag);
			mpz_clear(p);
		}
		double v = fmt_num_to_double(&x);
		if (x.kind != NUM_FINITE || x.neg || mpq_sgn(x.mag) == 0) {
			if (err)
				snprintf(err, errlen, "'%s' is not a positive whole number (1 to 10^15)", text);
			st = MP_EINVAL;
		} else if (mpz_cmp_ui(mpq_denref(x.mag), 1) != 0) {
			if (err)
				snprintf(err, errlen, "'%s' is not a whole number (a count from 1 to 10^15)", text);
			st = MP_EINVAL;
		} else if (!(v <= BUDGET_COUNT_MAX)) {
			if (err)
				snprintf(err, errlen, "'%s' is out of range (1 to 10^15)", text);
			st = MP_EINVAL;
		} else {
			*out = v;
		}
	}
	fmt_num_clear(&x);
	return st;
}

/* --- arithmetic --- */

double budget_activation_layer_bytes(const budget_shape *s, budget_recompute rc, double elem_bytes)
{
	/* Korthikanti et al. 2022, 16-bit activations: per layer s*b*h*34 + a*s^2*b*5 bytes.
	 * Of the 34, 2 are the two 1-byte dropout masks (attention output, MLP);
	 * of the 5, 1 is the attention dropout mask; the rest scales with the
	 * element size. */
	double k = elem_bytes / 2;
	double sbh = s->seq * s->micro_batch * s->hidden;
	double as2b = s->heads * s->seq * s->seq * s->micro_batch;
	switch (rc) {
	case BUDGET_RECOMPUTE_NONE: return sbh * (32 * k + 2) + as2b * (4 * k + 1);
	case BUDGET_RECOMPUTE_SELECTIVE: return sbh * (32 * k + 2);
	case BUDGET_RECOMPUTE_FULL: return sbh * 2 * k;
	default: return NAN;
	}
}

budget_config budget_defaults(void)
{
	return (budget_config){
		.params = 0,
		.recipe = BUDGET_RECIPE_BF16_MIXED,
		.optimizer = BUDGET_OPT_ADAM,
		.convention = BUDGET_CONV_MIXPREC,
		.zero_stage = 0,
		.gpus = 1,
		.shape = { 0 },
		.recompute = BUDGET_RECOMPUTE_NONE,
		.offload = BUDGET_OFFLOAD_CPU,
		.nodes = 1,
		.largest_layer = 0,
	};
}

static bool whole_positive(double v)
{
	return isfinite(v) && v >= 1 && v == floor(v);
}

static bool shape_valid(const budget_shape *s)
{
	if (s->layers == 0 && s->hidden == 0 && s->heads == 0 && s->seq == 0)
		return true;   /* no shape; micro_batch alone is harmless */
	return whole_positive(s->layers) && whole_positive(s->hidden) && whole_positive(s->heads) &&
	       whole_positive(s->seq) && whole_positive(s->micro_batch) && (s->vocab == 0 || whole_positive(s->vocab));
}

double budget_largest_layer_params(const budget_shape *s)
{
	if (!(s->vocab > 0 && s->hidden > 0))
		return 0;
	double h = s->hidden;
	return fmax(fmax(s->vocab * h, s->seq * h), 4 * h * h + 4 * h);
}

static bool layout_asked(const budget_parallel *q)
{
	return q->given || q->sp || q->tp > 1 || q->pp > 1 || q->vpp > 1 || q->cp > 1 || q->dp > 0;
}

/* DeepSpeed's own estimate into res (the deepspeed convention). */
static mp_status deepspeed_estimate(budget_result *res, const budget_config *cfg)
{
	if (!whole_positive(cfg->nodes) || fmod(cfg->gpus, cfg->nodes) != 0)
		return MP_EINVAL;
	budget_ds_config d = budget_ds_defaults();
	d.total_params = cfg->params;
	d.nodes = cfg->nodes;
	d.gpus_per_node = cfg->gpus / cfg->nodes;
	d.zero_stage = cfg->zero_stage == 0 ? 2 : cfg->zero_stage;
	d.offload = cfg->offload;
	d.largest_layer_params = cfg->largest_layer > 0 ? cfg->largest_layer : budget_largest_layer_params(&cfg->shape);
	mp_status st = budget_ds_estimate(&res->ds, &d);
	if (st != MP_OK)
		return st;
	res->has_ds = true;
	res->ds_cfg = d;
	res->zero_stage = d.zero_stage;
	for (int c = 0; c < BUDGET_COMPONENT_COUNT; c++)
		res->gpu_bytes[c] = NAN;
	res->gpu_total_bytes = res->ds.gpu_bytes;
	return MP_OK;
}

mp_status budget_compute(budget_result *out, const budget_config *cfg)
{
	if (!out || !cfg || !(isfinite(cfg->params) && cfg->params > 0) ||
	    (unsigned)cfg->recipe >= BUDGET_RECIPE_COUNT || (unsigned)cfg->optimizer >= BUDGET_OPT_COUNT ||
	    (unsigned)cfg->convention >= BUDGET_CONV_COUNT || (unsigned)cfg->recompute >= BUDGET_RECOMPUTE_COUNT ||
	    cfg->zero_stage < 0 || cfg->zero_stage > 3 || !whole_positive(cfg->gpus) || !shape_valid(&cfg->shape))
		return MP_EINVAL;
	if (cfg->convention == BUDGET_CONV_DEEPSPEED && cfg->zero_stage == 1)
		return MP_EINVAL;

	const recipe_info *r = &recipes[cfg->recipe];
	const optimizer_info *o = &optimizers[cfg->optimizer];
	budget_result res = { .zero_stage = cfg->zero_stage };
	double *bpp = res.bytes_per_param;
	bpp[BUDGET_MASTER] = r->master;
	bpp[BUDGET_WEIGHTS] = r->weights;
	bpp[BUDGET_GRADS] = r->grads;
	bpp[BUDGET_GRAD_ACCUM] = r->accum;
	bpp[BUDGET_OPTIMIZER] = o->states * (o->fixed_bytes ? o->fixed_bytes : r->state);
	switch (cfg->convention) {
	case BUDGET_CONV_ELEUTHER: bpp[BUDGET_GRAD_ACCUM] = 0; break;
	case BUDGET_CONV_ACCELERATE: res.total_is_max = true; break;
	default: break;
	}

	double p = cfg->params;
	for (int c = 0; c < BUDGET_ACTIVATIONS; c++)
		res.bytes[c] = bpp[c] * p;
	if (cfg->shape.layers > 0) {
		res.has_activations = true;
		res.activation_layer_bytes = budget_activation_layer_bytes(&cfg->shape, cfg->recompute, r->activation);
		res.bytes[BUDGET_ACTIVATIONS] = cfg->shape.layers * res.activation_layer_bytes;
		bpp[BUDGET_ACTIVATIONS] = res.bytes[BUDGET_ACTIVATIONS] / p;
	}

	/* ZeRO (Rajbhandari et al. 2019): stage 1 partitions the optimiser state,
	 * which in the paper's mixed-precision count (K = 12) includes the fp32
	 * master copy; stage 2 adds the gradients (and their fp32 accumulator),
	 * stage 3 the 16-bit parameters. Activations belong to each GPU's own
	 * micro-batch and are not partitioned. */
	double g = cfg->gpus;
	/* a layout: tensor and pipeline parallelism give each GPU 1/(t p) of the
	 * parameters (the embedding the first and last stages add is left out), and
	 * ZeRO shards over the data-parallel size d only */
	double model = 1;
	if (layout_asked(&cfg->par)) {
		if (budget_parallel_check(cfg, &g, NULL, 0) != MP_OK)
			return MP_EINVAL;
		res.has_layout = true;
		model = budget_par_axis(cfg->par.tp) * budget_par_axis(cfg->par.pp);
	}
	res.dp = g;
	int z = res.zero_stage;
	for (int c = 0; c < BUDGET_COMPONENT_COUNT; c++) {
		bool shard = ((c == BUDGET_MASTER || c == BUDGET_OPTIMIZER) && z >= 1) ||
		             ((c == BUDGET_GRADS || c == BUDGET_GRAD_ACCUM) && z >= 2) ||
		             (c == BUDGET_WEIGHTS && z >= 3);
		double x = res.bytes[c];
		if (model != 1 && c != BUDGET_ACTIVATIONS)
			x /= model;
		res.gpu_bytes[c] = shard ? x / g : x;
	}
	if (res.has_layout && res.has_activations)
		budget_layout_activations(&res, cfg, r->activation);

	if (res.total_is_max) {
		/* the stages accelerate compares: the model (every weight copy), the
		 * gradients (with their accumulator), the optimiser state */
		double a = res.bytes[BUDGET_MASTER] + res.bytes[BUDGET_WEIGHTS];
		double b = res.bytes[BUDGET_GRADS] + res.bytes[BUDGET_GRAD_ACCUM];
		double ga = res.gpu_bytes[BUDGET_MASTER] + res.gpu_bytes[BUDGET_WEIGHTS];
		double gb = res.gpu_bytes[BUDGET_GRADS] + res.gpu_bytes[BUDGET_GRAD_ACCUM];
		res.total_bytes = fmax(fmax(a, b), res.bytes[BUDGET_OPTIMIZER]) + res.bytes[BUDGET_ACTIVATIONS];
		res.gpu_total_bytes = fmax(fmax(ga, gb), res.gpu_bytes[BUDGET_OPTIMIZER]) +
		                      res.gpu_bytes[BUDGET_ACTIVATIONS];
	} else {
		for (int c = 0; c < BUDGET_COMPONENT_COUNT; c++) {
			res.total_bytes += res.bytes[c];
			res.gpu_total_bytes += res.gpu_bytes[c];
		}
	}
	res.total_bytes_per_param = res.total_bytes / p;
	if (cfg->convention == BUDGET_CONV_DEEPSPEED) {
		mp_status st = deepspeed_estimate(&res, cfg);
		if (st != MP_OK)
			return st;
	}
	*out = res;
	return MP_OK;
}
