/* The memory budget of training: bytes per parameter for each class of tensor
 * (master weights, working weights, gradients, gradient accumulator,
 * optimiser state), activation memory of a GPT shape (Korthikanti et al.
 * 2022), and the per-GPU share under ZeRO stages 0-3 (Rajbhandari et al. 2019)
 * and under a Megatron-style parallel layout (budget/parallel.c).
 * Pure arithmetic on doubles: nothing is allocated, nothing printed. */
#ifndef MIXPREC_BUDGET_BUDGET_H
#define MIXPREC_BUDGET_BUDGET_H

#include <stdbool.h>
#include <stddef.h>

#include "budget/deepspeed.h"
#include "util/status.h"

typedef enum {
	BUDGET_RECIPE_FP32,               /* everything fp32 */
	BUDGET_RECIPE_FP16_MIXED,         /* fp32 master, fp16 copy and gradient, fp32 accumulator */
	BUDGET_RECIPE_BF16_MIXED,         /* the same with bf16: 4 + 2 + 2 + 4 + Adam 8 = 20 */
	BUDGET_RECIPE_BF16_MIXED_NOACCUM, /* bf16-mixed without the fp32 gradient accumulator: 16 */
	BUDGET_RECIPE_BF16_PURE,          /* weights, gradients and optimiser state all bf16 */
	BUDGET_RECIPE_FP8_MIXED,          /* fp32 master, fp8 weight copy, 16-bit gradient, fp32 accumulator */
	BUDGET_RECIPE_COUNT
} budget_recipe;

typedef enum {
	BUDGET_OPT_ADAM,          /* m and v: two states */
	BUDGET_OPT_ADAMW,         /* the same state as Adam */
	BUDGET_OPT_SGD,           /* no state */
	BUDGET_OPT_SGD_MOMENTUM,  /* one state */
	BUDGET_OPT_ADAM8BIT,      /* m and v in 8 bits (block scales ignored) */
	BUDGET_OPT_COUNT
} budget_optimizer;

typedef enum {
	BUDGET_RECOMPUTE_NONE,       /* every activation kept: s*b*h*(34 + 5*a*s/h) per layer */
	BUDGET_RECOMPUTE_SELECTIVE,  /* attention core recomputed: 34*s*b*h */
	BUDGET_RECOMPUTE_FULL,       /* only the layer input kept: 2*s*b*h */
	BUDGET_RECOMPUTE_COUNT
} budget_recompute;

typedef enum {
	BUDGET_CONV_MIXPREC,    /* every copy that is resident at once (the lesson's 20 bytes) */
	BUDGET_CONV_ELEUTHER,   /* Transformer Math 101: no fp32 gradient accumulator (16 bytes) */
	BUDGET_CONV_DEEPSPEED,  /* DeepSpeed's ZeRO-2/3 estimators (budget/deepspeed.h) */
	BUDGET_CONV_ACCELERATE, /* HF accelerate: the largest single stage, not the sum */
	BUDGET_CONV_COUNT
} budget_convention;

typedef enum {
	BUDGET_MASTER,       /* fp32 master weights (mixed recipes) */
	BUDGET_WEIGHTS,      /* the weights the GEMMs read */
	BUDGET_GRADS,        /* weight gradients as the backward pass writes them */
	BUDGET_GRAD_ACCUM,   /* fp32 gradient accumulator */
	BUDGET_OPTIMIZER,    /* optimiser state */
	BUDGET_ACTIVATIONS,  /* activations kept for the backward pass (one micro-batch) */
	BUDGET_COMPONENT_COUNT
} budget_component;

/* A GPT shape; layers == 0 means "no shape": no activation estimate. */
typedef struct {
	double layers;       /* L */
	double hidden;       /* h */
	double heads;        /* a */
	double seq;          /* s */
	double micro_batch;  /* b, per GPU */
	double vocab;        /* V; 0: unknown (only the largest layer needs it) */
} budget_shape;

/* A Megatron-style layout over t*p*c*d GPUs (Korthikanti et al. 2022,
 * arXiv:2205.05198v1; budget/parallel.c): tensor parallel t, sequence
 * parallel over the tensor group (sp), pipeline p with m model chunks per
 * stage (interleaved 1F1B when m > 1), context parallel c, data parallel d.
 * A field of 0 stands for 1. */
typedef struct {
	double tp, pp, vpp, cp, dp;
	bool sp;
	bool given;   /* a layout was asked for: one GPU's rows, the paper's embedding and output terms */
} budget_parallel;

typedef struct {
	double params;                  /* > 0 */
	budget_recipe recipe;
	budget_optimizer optimizer;
	budget_convention convention;
	int zero_stage;                 /* 0..3 */
	double gpus;                    /* >= 1, an integer */
	budget_shape shape;
	budget_recompute recompute;
	/* the deepspeed convention only */
	budget_offload offload;         /* default BUDGET_OFFLOAD_CPU, as DeepSpeed's */
	double nodes;                   /* >= 1, divides gpus (default 1) */
	double largest_layer;           /* ZeRO-3: parameters of the largest layer; 0: from the shape */
	budget_parallel par;            /* zeroed: one data-parallel axis of gpus GPUs */
} budget_config;

typedef struct {
	/* one replica, unsharded; bytes_per_param = bytes / params for every row */
	double bytes_per_param[BUDGET_COMPONENT_COUNT];
	double bytes[BUDGET_COMPONENT_COUNT];
	/* one GPU's share after ZeRO sharding (activations are never sharded) */
	double gpu_bytes[BUDGET_COMPONENT_COUNT];
	double total_bytes;
	double total_bytes_per_param;
	double gpu_total_bytes;
	double activation_layer_bytes;  /* one layer, one micro-batch */
	bool has_activations;
	int zero_stage;                 /* the stage used (deepspeed forces 2) */
	bool total_is_max;              /* accelerate: total = largest stage, not the sum */
	/* deepspeed: DeepSpeed's own figures; gpu_total_bytes = ds.gpu_bytes and
	 * gpu_bytes[] are not DeepSpeed's (it gives no breakdown): NAN */
	bool has_ds;
	budget_ds_config ds_cfg;
	budget_ds_result ds;
	/* a layout (cfg->par.given): gpu_bytes[BUDGET_ACTIVATIONS] is the first
	 * pipeline stage's, layers plus the embedding and output terms */
	bool has_layout;
	double dp;                      /* the data-parallel size ZeRO shards over */
	double layer_gpu_bytes;         /* one layer, one micro-batch, one GPU of the layout */
	double stage_layer_bytes;       /* the first stage's layers: L layer-micro-batches, times the interleave factor */
	double interleave;              /* 1 + (p - 1) / (p m) with m > 1 chunks, else 1 */
	double extra_bytes;             /* embedding dropout mask; with p = 1 also the final LayerNorm, output layer and logits */
} budget_result;

/* bf16-mixed, Adam, convention mixprec, ZeRO 0, one GPU, no shape, no recompute; params 0 (must be set). */
budget_config budget_defaults(void);

/* Fills *out for cfg. MP_EINVAL for params not positive and finite, an
 * out-of-range enum, a ZeRO stage outside 0..3, gpus not a positive integer,
 * a partial or non-integer shape, or deepspeed with a ZeRO stage other than
 * 0, 2 or 3 (0 means 2), nodes not dividing gpus, ZeRO-3 without a largest
 * layer (cfg->largest_layer, or a shape with a vocabulary), or a parallel
 * layout budget_parallel_check refuses. With a layout (cfg->par), gpu_bytes
 * are one GPU's of the first pipeline stage: model states split by t*p and
 * sharded by ZeRO over d, activations as budget/parallel.c counts them. */
mp_status budget_compute(budget_result *out, const budget_config *cfg);

/* Activation bytes of one transformer layer (Korthikanti et al. 2022) with
 * activations of elem_bytes (2: the paper's 16-bit figures; 4: fp32, where
 * the 1-byte dropout masks stay 1 byte). */
double budget_activation_layer_bytes(const budget_shape *s, budget_recompute rc, double elem_bytes);

/* Activation bytes of one transformer layer on one GPU of the layout par
 * (Korthikanti et al. 2022, Table 2; budget/parallel.c): with t = c = 1 and
 * no sp, budget_activation_layer_bytes. */
double budget_activation_layer_bytes_par(const budget_shape *s, budget_recompute rc, double elem_bytes,
                                         const budget_parallel *par);

/* The layout's sizes, 0 read as 1: t, p, m, c. */
double budget_par_axis(double v);

/* Whether cfg's layout can be estimated: MP_EINVAL with the reason (naming
 * the options --tp, --sp, --pp, --vpp, --cp, --dp, --gpus, --zero) in err
 * (err may be NULL). Fills *dp with the data-parallel size. */
mp_status budget_parallel_check(const budget_config *cfg, double *dp, char *err, size_t errlen);

/* The parameter count of a GPT's largest single module, as DeepSpeed's
 * model_to_params counts it (each module's own parameters, not its
 * children's): the larger of the token embedding V*h, the position embedding
 * s*h and the MLP's first projection 4h*h + 4h (GPT-2's layer set). 0 when
 * the shape has no vocabulary. */
double budget_largest_layer_params(const budget_shape *s);

/* Names (as typed on the command line) and parsing; *_from_name returns MP_EINVAL for an unknown name. */
const char *budget_recipe_name(budget_recipe r);
const char *budget_optimizer_name(budget_optimizer o);
const char *budget_recompute_name(budget_recompute r);
const char *budget_convention_name(budget_convention c);
const char *budget_component_name(budget_component c);
mp_status budget_recipe_from_name(const char *name, budget_recipe *out);
mp_status budget_optimizer_from_name(const char *name, budget_optimizer *out);
mp_status budget_recompute_from_name(const char *name, budget_recompute *out);
mp_status budget_convention_from_name(const char *name, budget_convention *out);
/* "a, b, c": the known names, for error messages and help. */
const char *budget_recipe_known(void);
const char *budget_optimizer_known(void);
const char *budget_recompute_known(void);
const char *budget_convention_known(void);
const char *budget_preset_known(void);

/* One or two sentences on how a convention counts and why it differs from mixprec's. */
const char *budget_convention_note(budget_convention c);

/* The explanation under a budget, for the CLI's table and the Memory budget
 * lab alike: under the mixprec convention the bytes per parameter of each
 * resident copy of r (computed for cfg) and their sum, for cfg's recipe and
 * optimiser; under another convention its note. Writes at most n bytes
 * (NUL-terminated when n > 0); returns the length the whole text needs. */
size_t budget_explain(char *buf, size_t n, const budget_config *cfg, const budget_result *r);

/* A named model (gpt2-small, llama-7b, gpt3-175b, llama-3-8b): parameter count and shape
 * (micro-batch 1). MP_EINVAL for an unknown name. */
mp_status budget_preset(const char *name, double *params, budget_shape *shape);
/* The named models in table order: how many, and the name of the i-th
 * (NULL past the end). */
size_t budget_preset_count(void);
const char *budget_preset_name(size_t i);

/* --zero's value: a ZeRO stage 0..3 in the full number syntax; MP_EINVAL
 * with the message, naming the option, in err. */
mp_status budget_parse_zero(const char *text, int *stage, char *err, size_t errlen);

/* The largest count budget takes (parameters, layers, GPUs...): 10^15, above
 * any model trained and well inside the integers binary64 holds exactly. */
#define BUDGET_COUNT_MAX 1e15

/* Parses a count in the project's number syntax (fmt_parse_number) with an
 * optional SI suffix K, M, B or G, T (1e3, 1e6, 1e9, 1e12): "7e9", "6.7B",
 * "124M", "2^30". A count is a whole number from 1 to BUDGET_COUNT_MAX
 * after the suffix is applied (6.7B is 6700000000; 0.5 is no count).
 * MP_EPARSE for a malformed number, MP_EINVAL for one that is not a whole
 * number in that range; the message is in err. */
mp_status budget_parse_count(const char *text, double *out, char *err, size_t errlen);

#endif
