/* Activation memory under a Megatron-style layout, after Korthikanti et al.
 * 2022, "Reducing Activation Recomputation in Large Transformer Models",
 * arXiv:2205.05198v1: Table 2 (per layer), section 4.2.3 (pipeline), section
 * 4.3 (embedding and output layer). Context parallelism follows
 * Megatron-Core's context-parallel guide (docs/api-guide/context_parallel.md
 * of Megatron-LM, commit b6a88bd): "The activation memory footprint per GPU
 * is also CP times smaller", and the world size is TP x CP x PP x DP. */
#include <math.h>
#include <stdio.h>

#include "budget/budget.h"
#include "budget/parallel.h"
#include "util/status.h"

double budget_par_axis(double v)
{
	return v > 0 ? v : 1;
}

double budget_activation_layer_bytes_par(const budget_shape *s, budget_recompute rc, double elem_bytes,
                                         const budget_parallel *par)
{
	double t = budget_par_axis(par->tp), c = budget_par_axis(par->cp);
	if (t == 1 && c == 1)
		return budget_activation_layer_bytes(s, rc, elem_bytes);
	/* the paper's 34 sbh + 5 a s^2 b, split by what tensor parallelism divides:
	 * 10 sbh outside the tensor-parallel region (LayerNorm inputs 4, the two
	 * 1-byte dropout masks 2, the inputs of attention and MLP 4), 24 sbh inside
	 * it, and the attention core 5 a s^2 b (its 1-byte softmax dropout mask 1);
	 * sequence parallelism divides the 10 by t as well. Context parallelism
	 * gives each GPU s/c of the tokens; its queries meet all s keys, so the
	 * core is a (s/c) s b (an inference: Megatron's CP runs flash attention,
	 * which keeps no s x s scores at all). */
	double k = elem_bytes / 2;
	double sl = s->seq / c;
	double sbh = sl * s->micro_batch * s->hidden;
	double outside = sbh * (8 * k + 2), inside = sbh * 24 * k;
	double core = s->heads * sl * s->seq * s->micro_batch * (4 * k + 1);
	if (par->sp)
		outside /= t;
	switch (rc) {
	case BUDGET_RECOMPUTE_NONE: return outside + inside / t + core / t;
	case BUDGET_RECOMPUTE_SELECTIVE: return outside + inside / t;
	/* only the layer input, 2sbh: the paper keeps it whole on every tensor
	 * rank (its 2sbhL/t variant needs an extra all-gather it does not use) */
	case BUDGET_RECOMPUTE_FULL: return sbh * 2 * k;
	default: return NAN;
	}
}

void budget_layout_activations(budget_result *res, const budget_config *cfg, double elem_bytes)
{
	const budget_parallel *par = &cfg->par;
	const budget_shape *s = &cfg->shape;
	double t = budget_par_axis(par->tp), p = budget_par_axis(par->pp), m = budget_par_axis(par->vpp);
	double c = budget_par_axis(par->cp);
	double k = elem_bytes / 2;
	res->layer_gpu_bytes = budget_activation_layer_bytes_par(s, cfg->recompute, elem_bytes, par);
	/* 1F1B keeps p micro-batches in flight on the first stage, each through
	 * L/p layers: L layer-micro-batches whatever p (section 4.2.3, as long as
	 * a step has at least p micro-batches); m interleaved chunks multiply
	 * that by 1 + (p - 1)/(p m) */
	res->interleave = m > 1 ? 1 + (p - 1) / (p * m) : 1;
	res->stage_layer_bytes = s->layers * res->layer_gpu_bytes * res->interleave;
	/* section 4.3: the embedding's dropout mask sbhp/t (sequence parallel);
	 * with p = 1 the first stage is also the last: final LayerNorm input
	 * 2sbh/t, output projection input 2sbh/t, fp32 logits 4sbv/t. Without
	 * sequence parallelism the terms on sbh are whole on every tensor rank
	 * (an inference from Table 2's 10 sbh); the logits stay split by t
	 * (vocabulary-parallel cross entropy). The logits need the vocabulary:
	 * 0 without one. */
	double sl = s->seq / c;
	double sbh = sl * s->micro_batch * s->hidden;
	double rep = par->sp ? t : 1;
	double extra = sbh * p / rep;
	if (p == 1)
		extra += 2 * (2 * k * sbh) / rep + 4 * sl * s->micro_batch * s->vocab / t;
	res->extra_bytes = extra;
	res->gpu_bytes[BUDGET_ACTIVATIONS] = res->stage_layer_bytes + res->extra_bytes;
}

static bool whole(double v)
{
	return isfinite(v) && v >= 1 && v == floor(v);
}

static bool divides(double d, double n)
{
	return fmod(n, d) == 0;
}

/* The checks that need the shape. */
static mp_status shape_check(const budget_config *cfg, char *err, size_t errlen)
{
	const budget_parallel *q = &cfg->par;
	const budget_shape *s = &cfg->shape;
	double t = budget_par_axis(q->tp), p = budget_par_axis(q->pp), m = budget_par_axis(q->vpp);
	double c = budget_par_axis(q->cp);
	if (s->layers == 0) {
		if (m > 1)
			return mp_fail(MP_EINVAL, err, errlen, "--vpp %.0f needs a model shape: it only changes the activations "
			               "(--preset M, or --layers ... --context)", m);
		return MP_OK;
	}
	if (!divides(t, s->heads))
		return mp_fail(MP_EINVAL, err, errlen, "--tp %.0f does not divide the %.0f attention heads (--heads): each "
		               "tensor-parallel rank takes whole heads", t, s->heads);
	if (!divides(p, s->layers))
		return mp_fail(MP_EINVAL, err, errlen, "--pp %.0f does not divide the %.0f layers (--layers): each "
		               "pipeline stage holds L/p whole layers", p, s->layers);
	if (!divides(m, s->layers / p))
		return mp_fail(MP_EINVAL, err, errlen, "--vpp %.0f does not divide the %.0f layers of a pipeline stage "
		               "(L/p = %.0f/%.0f): each model chunk holds whole layers", m, s->layers / p, s->layers, p);
	if (!divides(c, s->seq))
		return mp_fail(MP_EINVAL, err, errlen, "--cp %.0f does not divide the sequence length %.0f (--context): "
		               "each context-parallel rank takes s/c whole tokens", c, s->seq);
	return MP_OK;
}

mp_status budget_parallel_check(const budget_config *cfg, double *dp, char *err, size_t errlen)
{
	const budget_parallel *q = &cfg->par;
	static const char *const names[] = { "--tp", "--pp", "--vpp", "--cp", "--dp" };
	const double axes[] = { q->tp, q->pp, q->vpp, q->cp, q->dp };
	for (int i = 0; i < 5; i++)
		if (axes[i] != 0 && !(whole(axes[i]) && axes[i] <= BUDGET_COUNT_MAX))
			return mp_fail(MP_EINVAL, err, errlen, "%s: %g is not a positive whole number", names[i], axes[i]);
	double t = budget_par_axis(q->tp), p = budget_par_axis(q->pp), c = budget_par_axis(q->cp);
	if (cfg->convention == BUDGET_CONV_DEEPSPEED)
		return mp_fail(MP_EINVAL, err, errlen, "--convention deepspeed: DeepSpeed's estimators count one "
		               "data-parallel axis; drop --tp, --sp, --pp, --vpp, --cp and --dp, or use another convention");
	if (q->sp && t < 2)
		return mp_fail(MP_EINVAL, err, errlen, "--sp: sequence parallelism splits the tensor-parallel group's "
		               "LayerNorm and dropout activations; it needs --tp 2 or more");
	if (q->vpp > 0 && p < 2)
		return mp_fail(MP_EINVAL, err, errlen, "--vpp %.0f: model chunks interleave pipeline stages; it needs "
		               "--pp 2 or more", q->vpp);
	/* DeepSpeed's PipelineEngine asserts zero stage < 2 ("ZeRO-2 and ZeRO-3 are
	 * incompatible with pipeline parallelism", deepspeed/runtime/pipe/engine.py
	 * of deepspeedai/DeepSpeed, commit 03f6f75) */
	if (p > 1 && cfg->zero_stage >= 2)
		return mp_fail(MP_EINVAL, err, errlen, "--zero %d with --pp %.0f: DeepSpeed's pipeline engine refuses "
		               "ZeRO-2 and ZeRO-3 with pipeline parallelism; use --zero 0 or 1", cfg->zero_stage, p);
	mp_status st = shape_check(cfg, err, errlen);
	if (st != MP_OK)
		return st;
	double model = t * p * c;
	double d = q->dp > 0 ? q->dp : cfg->gpus / model;
	if (q->dp > 0 && cfg->gpus != model * q->dp)
		return mp_fail(MP_EINVAL, err, errlen, "--gpus %.0f and --dp %.0f disagree: the GPUs are t*p*c*d = "
		               "%.0f*%.0f*%.0f*%.0f = %.0f", cfg->gpus, q->dp, t, p, c, q->dp, model * q->dp);
	if (!whole(d))
		return mp_fail(MP_EINVAL, err, errlen, "--gpus %.0f is not a multiple of t*p*c = %.0f*%.0f*%.0f = %.0f: "
		               "the data-parallel size d = G/(t*p*c) must be whole", cfg->gpus, t, p, c, model);
	if (dp)
		*dp = d;
	return MP_OK;
}
