/* The memory of serving a model: its weights in a serving format (16-bit,
 * fp8, int4 with group scales, NVFP4 and MXFP4 with block scales), the KV
 * cache of each token, and what one GPU's memory leaves for the KV cache
 * once vLLM's share of it (gpu_memory_utilization), the weights and a
 * reserve for activations are taken: tokens, sequences and vLLM's blocks.
 * Pure arithmetic on doubles: nothing is allocated, nothing printed. */
#ifndef MIXPREC_BUDGET_SERVE_H
#define MIXPREC_BUDGET_SERVE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/status.h"

typedef enum {
	SERVE_W_BF16,    /* every weight 2 bytes */
	SERVE_W_FP16,
	SERVE_W_FP8,     /* e4m3 linear weights, one fp32 scale per matrix */
	SERVE_W_INT4,    /* GPTQ/AWQ: groups of 128 inputs, fp16 scale + 4-bit zero */
	SERVE_W_NVFP4,   /* e2m1, one e4m3 scale per 16, one fp32 scale per matrix */
	SERVE_W_MXFP4,   /* e2m1, one e8m0 scale per 32 (OCP MX v1.0) */
	SERVE_W_COUNT
} serve_weights;

typedef enum {
	SERVE_KV_BF16,
	SERVE_KV_FP16,
	SERVE_KV_FP8,    /* vLLM's fp8, fp8_e4m3 and fp8_e5m2: 1 byte */
	SERVE_KV_COUNT
} serve_kv;

/* A decoder's shape as serving reads it. ffn == 0: the linear layers are
 * unknown and every parameter is counted in the weights' format. */
typedef struct {
	double params;      /* all parameters */
	double layers;      /* L */
	double hidden;      /* h */
	double heads;       /* query heads a */
	double kv_heads;    /* KV heads (GQA); = heads without GQA */
	double head_dim;    /* d; h / a unless the model says otherwise */
	double ffn;         /* the MLP's inner width; 0: unknown */
	double mlp_mats;    /* matrices of the MLP: 2 (GPT), 3 (SwiGLU) */
} serve_model;

typedef struct {
	serve_model model;
	serve_weights weights;
	serve_kv kv;
	double context;     /* tokens per sequence */
	double batch;       /* sequences */
	double tp;          /* tensor-parallel GPUs, 1 unless set */
	/* the fit: gpu_mem == 0 means no GPU given, nothing below is computed */
	double gpu_mem;     /* bytes of one GPU */
	double gpu_util;    /* vLLM's gpu_memory_utilization, (0, 1] */
	double reserve;     /* bytes held for activations and non-torch memory */
	double block_size;  /* tokens per KV block (vLLM: 16) */
} serve_config;

typedef struct {
	/* the weights on one GPU */
	double linear_params;    /* elements of the quantized matrices, whole model */
	double other_params;     /* the rest (embeddings, head, norms), kept 16-bit */
	double weight_bytes;     /* element bytes (codes and 16-bit rest), one GPU */
	double scale_bytes;      /* scales and zero points, one GPU */
	double weights_total;    /* weight_bytes + scale_bytes */
	double bits_per_linear;  /* bits per quantized element, scales included */
	/* the KV cache on one GPU */
	double kv_heads_gpu;     /* max(1, kv_heads / tp): vLLM replicates below one */
	double kv_token_bytes;   /* 2 * L * kv_heads_gpu * d * bytes */
	double kv_tokens;        /* batch * context */
	double kv_bytes;         /* kv_token_bytes * kv_tokens */
	/* the fit (has_gpu) */
	bool has_gpu;
	double usable;           /* gpu_mem * gpu_util */
	double kv_budget;        /* usable - weights_total - reserve */
	double block_bytes;      /* block_size * kv_token_bytes */
	double blocks;           /* floor(kv_budget / block_bytes), 0 when negative */
	double max_tokens;       /* blocks * block_size */
	double blocks_per_seq;   /* ceil(context / block_size) */
	double max_batch;        /* floor(blocks / blocks_per_seq) */
	double concurrency;      /* max_tokens / context, as vLLM logs it */
	double free_bytes;       /* kv_budget - the request's blocks * block_bytes */
	bool weights_fit;        /* kv_budget >= 0 */
	bool fits;               /* weights fit and batch * blocks_per_seq <= blocks */
} serve_result;

/* bf16 weights and KV cache, context 0 and batch 1, tp 1, no GPU,
 * utilisation 0.9 and block size 16 (vLLM's EngineArgs defaults); the
 * model is all zeros and must be filled. */
serve_config serve_defaults(void);

/* Fills *out. MP_EINVAL, with the reason in err, for a model without
 * parameters, layers, heads or head size, KV heads that do not divide the
 * query heads, a tensor-parallel size that does not divide the query heads
 * or neither divides nor is a multiple of the KV heads (vLLM refuses both),
 * a context or batch that is not a positive whole number, or a utilisation
 * outside (0, 1]. A request that does not fit is no error: fits is false and
 * serve_fit_message says by how much. */
mp_status serve_compute(serve_result *out, const serve_config *cfg, char *err, size_t errlen);

/* Why r does not fit (empty when it does): the shortfall in GiB and GB.
 * Writes at most n bytes; returns the length the whole text needs. */
size_t serve_fit_message(char *buf, size_t n, const serve_config *cfg, const serve_result *r);

/* The serving shape of a named model (budget_preset's names): KV heads,
 * head size, FFN width and MLP matrices; the other fields from the preset.
 * MP_EINVAL for an unknown name. */
mp_status serve_preset(const char *name, serve_model *out);

/* Names as typed (--weights-dtype, --kv-dtype); *_from_name gives MP_EINVAL
 * for an unknown name. */
const char *serve_weights_name(serve_weights w);
const char *serve_kv_name(serve_kv k);
mp_status serve_weights_from_name(const char *name, serve_weights *out);
mp_status serve_kv_from_name(const char *name, serve_kv *out);
const char *serve_weights_known(void);
const char *serve_kv_known(void);
/* One line on how a weights format is counted (its scales). */
const char *serve_weights_note(serve_weights w);
/* Bytes of one KV element. */
double serve_kv_bytes(serve_kv k);

/* A memory size: a number (the full number syntax) with a unit B, kB/KB,
 * MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024); no
 * unit is bytes. MP_EINVAL, with the message in err, for a malformed or
 * negative size or an unknown unit. */
mp_status serve_parse_bytes(const char *text, double *out, char *err, size_t errlen);

#endif
