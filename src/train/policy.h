/* Precision policies: which number format each part of training uses. A
 * policy is data; the trainer and the model read it, no code path is
 * specific to a preset. */
#ifndef MIXPREC_TRAIN_POLICY_H
#define MIXPREC_TRAIN_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "fmt/flip.h"
#include "fmt/format.h"
#include "fmt/round.h"
#include "quant/quant_rule.h"
#include "train/fp8scale_kind.h"
#include "train/scaler.h"
#include "util/status.h"

typedef enum {
	WUPD_RNE,     /* the updated weight is rounded to nearest */
	WUPD_SR,      /* ... stochastically */
	WUPD_KAHAN,   /* ... to nearest, with a compensation term in the same format */
} weight_update;

/* The operands of a Linear layer's three GEMMs, each with the name
 * microxcaling's mx_specs gives its format (mx/specs.py and mx/linear.py
 * of microsoft/microxcaling, read at commits 21221c0 and 2b7c540). */
typedef enum {
	GEMM_FWD_X,      /* Y = X W^T: the input X (a_elem_format) */
	GEMM_FWD_W,      /* ... the weight W (w_elem_format) */
	GEMM_DGRAD_DY,   /* dX = dY W: the output gradient dY (a_elem_format_bp_os) */
	GEMM_DGRAD_W,    /* ... the weight W (w_elem_format_bp) */
	GEMM_WGRAD_X,    /* dW = dY^T X: the input X (a_elem_format_bp_ex) */
	GEMM_WGRAD_DY,   /* ... the output gradient dY (a_elem_format_bp_ex as well) */
	GEMM_OPERANDS
} gemm_operand;

/* The tensors a policy's bit flips strike (flip=CLASS:P): the Linear
 * GEMMs' operands after rounding. */
typedef enum {
	POLICY_FLIP_NONE,
	POLICY_FLIP_WEIGHTS,       /* W of the forward and of dgrad */
	POLICY_FLIP_ACTIVATIONS,   /* X of the forward and of wgrad */
	POLICY_FLIP_GRADS,         /* dY of dgrad and of wgrad */
} policy_flip;

typedef struct {
	char name[256];
	/* every format: FMT_FP32 means that part is plain fp32 */
	fmt_id gemm_fmt;           /* matmul operands and outputs, fp32 accumulation */
	fmt_id reduce_fmt;         /* softmax, LayerNorm, cross-entropy sums (the pitfall) */
	fmt_id resid_fmt;          /* the residual stream as stored */
	fmt_mode resid_mode;       /* FMT_RNE or FMT_SR */
	fmt_id weight_fmt;         /* FMT_FP32: fp32 master weights; else weights live in weight_fmt only */
	weight_update wupdate;     /* how a low-precision weight takes its update */
	fmt_id grad_fmt;           /* gradients as the backward pass produces them */
	fmt_id grad_accum_fmt;     /* gradients as accumulated and handed to the optimiser */
	fmt_id optim_fmt;          /* Adam's m and v */
	fmt_mode optim_mode;       /* their rounding: FMT_RNE or FMT_SR */
	scaler_kind scaling;
	double static_scale;
	/* the GEMM's accumulator (train/accum.h), CPU only: 0 and 0 = fp32
	 * through BLAS; else accum_bits significant bits (0 = 24, IEEE fp32),
	 * promoted to fp32 every promote_every products (0 = never) */
	int accum_bits;
	size_t promote_every;
	/* the scaled casts of the Linear GEMMs' operands (train/fp8scale.h,
	 * train/blockcast.h), CPU only: CAST_SCALING_NONE, or the weight and input
	 * in cast_fwd and the output gradient in cast_bwd, with a scale per tensor
	 * or per block; everything else (attention, the tied head, GEMM outputs)
	 * then in gemm_fmt */
	cast_scaling cast;
	fmt_id cast_fwd, cast_bwd;
	size_t amax_history;       /* delayed: the window, 1..FP8_HISTORY_MAX */
	fp8_amax_algo amax_algo;
	int fp8_margin;            /* scale = fp8_max / amax / 2^margin */
	/* the block recipes (fp8 block, mx, nvfp4; train/blockcast.h) */
	bool scale_pow2;           /* block: scales rounded down to powers of two */
	quant_rule mx_rule;        /* mx: the e8m0 scale's rule (TE: ceil) */
	size_t mx_block;           /* mx: elements per e8m0 scale, 0: 32 (OCP's) */
	bool nvfp4_rht;            /* nvfp4: 16x16 random Hadamard transform on the wgrad GEMM's operands */
	bool nvfp4_sr;             /* nvfp4: output gradients rounded stochastically */
	bool nvfp4_2d;             /* nvfp4: 16x16 weight blocks (else 1x16, as the others) */
	size_t highp_last;         /* any scaling: the last N blocks' Linears left in gemm_fmt */
	bool bf16_switch;          /* any fp8 scaling: from step bf16_from on (its evaluations too), no */
	size_t bf16_from;          /* Linear is cast: the rest is the bf16-mixed recipe (bf16-from=N) */
	/* the parts of train/policy_parts.c, CPU only, none in a preset:
	 * operand k of every Linear's GEMMs (the four of each block and the
	 * tied head; attention's products stay in gemm_fmt) rounded to
	 * op_fmt[k] instead of gemm_fmt when bit k of op_set is set (fwd=,
	 * dgrad=, wgrad=; unscaled GEMMs only: no fp8-scaling) */
	unsigned op_set;
	fmt_id op_fmt[GEMM_OPERANDS];
	/* the outputs of the attention softmax, of every LayerNorm and of GELU
	 * rounded (RNE) to these in the forward pass (softmax=, layernorm=,
	 * gelu=, elementwise=); FMT_FP32: kept as computed */
	fmt_id softmax_fmt, layernorm_fmt, gelu_fmt;
	/* flip=CLASS:P[:any|frac|exp]: CPFloat's soft errors (fmt/flip.h) in
	 * the operands of class flip_class after their rounding */
	policy_flip flip_class;
	double flip_p;
	flip_where flip_bits;
} train_policy;

/* The presets (policy.c's table): fp32, bf16-mixed, bf16-resid,
 * bf16-resid-sr, bf16-pure, bf16-pure-sr, bf16-pure-kahan, fp16-mixed,
 * fp16-noscale, fp8-mixed, fp8-delayed, fp8-current, fp8-block, mxfp8, nvfp4.
 * policy_preset and policy_preset_about return
 * NULL for i >= policy_preset_count(). */
size_t policy_preset_count(void);
const train_policy *policy_preset(size_t i);
/* What preset i is, in a line of at most 58 characters (for --help). */
const char *policy_preset_about(size_t i);
/* "fp32, bf16-mixed, ..." for messages, from the table. */
const char *policy_preset_names(void);

/* Copies the preset called name into *p; MP_EINVAL when unknown. */
mp_status policy_from_name(const char *name, train_policy *p);

/* A preset with changes, as policy names print them: "nvfp4+rht=off+2d=off"
 * (the preset, then policy_set's KEY=VALUE parts, each after a '+'). On
 * error MP_EINVAL, with what is wrong in err. */
mp_status policy_parse(const char *spec, train_policy *p, char *err, size_t errlen);

/* Changes one part of a policy, as the train command's options do:
 * gemm=F, reductions=fp32|low|F (low: the GEMM format), residual=F[:rne|sr], weights=fp32|F[:rne|sr|kahan], grads=F,
 * grad-accum=F, optim-state=F[:rne|sr], loss-scale=none|dynamic|static:S,
 * accum-bits=N (2..24), promote-every=K (0 = never),
 * fp8-scaling=none|delayed|current|block|mx|nvfp4 (the recipe's own formats
 * and parts with it), fp8-format=hybrid|e4m3, amax-history=H (1..1024),
 * amax-algo=max|most_recent, fp8-margin=M (-32..32), scale-pow2=on|off,
 * scale-rule=R (quant_rule_parse's names), block=N (mx: 1..QUANT_BLOCK_MAX), rht=on|off, sr=on|off, 2d=on|off, bf16-last=N
 * (0..GPT_MAX_LAYERS; checked against the model's layers when it is made),
 * bf16-from=N (0..POLICY_STEP_MAX: the steps numbered N and later).
 * The name gets "+key=value" appended. On error returns MP_EINVAL and writes
 * what is wrong into err. */
mp_status policy_set(train_policy *p, const char *key, const char *value, char *err, size_t errlen);

/* The largest step bf16-from names (train --steps' own limit). */
enum { POLICY_STEP_MAX = 100000000 };

/* A one-line description ("gemm bf16, residual fp32, weights fp32 master, ..."). */
void policy_describe(const train_policy *p, char *buf, size_t n);

/* Whether p keeps fp32 master weights (else the weights live in
 * weight_fmt only and take their updates there). */
static inline bool policy_master_fp32(const train_policy *p)
{
	return p->weight_fmt == FMT_FP32;
}

/* Whether p's GEMMs use the emulated accumulator (accum-bits or
 * promote-every set). */
static inline bool policy_accum_emulated(const train_policy *p)
{
	return p->accum_bits != 0 || p->promote_every != 0;
}

/* Whether p casts Linears to fp8 or fp4 at step `step` (the step's
 * passes, and an evaluation after `step` steps): it has fp8 scaling and
 * bf16-from has not switched it to bf16 yet. */
static inline bool policy_casts_at(const train_policy *p, size_t step)
{
	return p->cast != CAST_SCALING_NONE && !(p->bf16_switch && step >= p->bf16_from);
}

/* Whether p has a part of policy_parts.c (per-operand formats, rounded
 * softmax/LayerNorm/GELU outputs, bit flips). */
static inline bool policy_has_parts(const train_policy *p)
{
	return p->op_set != 0 || p->softmax_fmt != FMT_FP32 || p->layernorm_fmt != FMT_FP32 ||
	       p->gelu_fmt != FMT_FP32 || p->flip_class != POLICY_FLIP_NONE;
}

/* The format GEMM operand k of p's unscaled Linears is rounded to. */
static inline fmt_id policy_operand_fmt(const train_policy *p, gemm_operand k)
{
	return p->op_set & (1u << k) ? p->op_fmt[k] : p->gemm_fmt;
}

/* Whether only the CPU trainer runs p (an emulated accumulator, per-tensor
 * fp8 scaling, the parts of policy_parts.c): the GPU trainers refuse it. */
static inline bool policy_cpu_only(const train_policy *p)
{
	return policy_accum_emulated(p) || p->cast != CAST_SCALING_NONE || policy_has_parts(p);
}

/* Whether key is a part of policy_parts.c: fwd, dgrad, wgrad, softmax,
 * layernorm, gelu, elementwise, flip. */
bool policy_part_is(const char *key);

/* One of those parts into p, as policy_set takes it: MP_OK, MP_EINVAL (err
 * names the part and the bad value) or MP_EUNSUPPORTED (a part p's recipe
 * cannot take). The name is policy_set's to extend. */
mp_status policy_part_set(train_policy *p, const char *key, const char *value, char *err, size_t errlen);

/* ", fwd x:bf16 w:bf16, ..." for the parts p has, else "". */
void policy_parts_describe(const train_policy *p, char *buf, size_t n);

#endif
