#include <math.h>
#include <stdio.h>
#include <string.h>

#include "budget/deepspeed.h"

static const char *const offload_names[BUDGET_OFFLOAD_COUNT] = {
	[BUDGET_OFFLOAD_CPU] = "cpu",
	[BUDGET_OFFLOAD_NONE] = "none",
	[BUDGET_OFFLOAD_OPTIMIZER] = "optimizer",
};

const char *budget_offload_name(budget_offload o)
{
	return (unsigned)o < BUDGET_OFFLOAD_COUNT ? offload_names[o] : "?";
}

mp_status budget_offload_from_name(const char *name, budget_offload *out)
{
	for (int i = 0; name && i < BUDGET_OFFLOAD_COUNT; i++)
		if (strcmp(name, offload_names[i]) == 0) {
			*out = (budget_offload)i;
			return MP_OK;
		}
	return MP_EINVAL;
}

const char *budget_offload_known(void)
{
	return "cpu, none, optimizer";
}

budget_ds_config budget_ds_defaults(void)
{
	return (budget_ds_config){
		.total_params = 0,
		.largest_layer_params = 0,
		.gpus_per_node = 1,
		.nodes = 1,
		.zero_stage = 2,
		.offload = BUDGET_OFFLOAD_CPU,
		.zero_init = true,
		.additional_buffer_factor = 1.5,
	};
}

static bool whole(double v)
{
	return isfinite(v) && v >= 1 && v == floor(v);
}

/* estimate_zero2_model_states_mem_needs (after PR #5099) */
static void zero2(budget_ds_result *r, const budget_ds_config *c)
{
	double p = c->total_params, total_gpus = c->nodes * c->gpus_per_node;
	double f = c->additional_buffer_factor;
	if (c->offload != BUDGET_OFFLOAD_NONE) {
		r->gpu_bytes = 2 * p;
		r->cpu_bytes = p * fmax(4 * total_gpus, 16) * f;
	} else {
		r->gpu_bytes = 2 * p + trunc(18 * p / total_gpus);
		r->cpu_bytes = p * 4 * c->gpus_per_node * f;
	}
}

/* estimate_zero3_model_states_mem_needs */
static void zero3(budget_ds_result *r, const budget_ds_config *c)
{
	double p = c->total_params, ll = c->largest_layer_params;
	double total_gpus = c->nodes * c->gpus_per_node, gpus_factor = 1 / c->nodes;
	double f = c->additional_buffer_factor, n = c->gpus_per_node;
	double llm = 4 * ll;
	r->largest_layer_bytes = llm;
	if (c->offload == BUDGET_OFFLOAD_CPU) {
		r->gpu_bytes = llm;
		r->cpu_bytes = c->zero_init ? p * 18 * gpus_factor * f : p * fmax(4 * n, 18 * gpus_factor) * f;
	} else if (c->offload == BUDGET_OFFLOAD_OPTIMIZER) {
		r->gpu_bytes = llm + trunc(2 * p / total_gpus);
		r->cpu_bytes = c->zero_init ? p * 16 * gpus_factor * f : p * fmax(4 * n, 16 * gpus_factor) * f;
	} else {
		r->gpu_bytes = llm + trunc(18 * p / total_gpus);
		r->cpu_bytes = c->zero_init ? ll * 4 * n * f : p * 4 * n * f;
	}
}

mp_status budget_ds_estimate(budget_ds_result *out, const budget_ds_config *cfg)
{
	if (!out || !cfg || !(isfinite(cfg->total_params) && cfg->total_params > 0) || !whole(cfg->gpus_per_node) ||
	    !whole(cfg->nodes) || (cfg->zero_stage != 2 && cfg->zero_stage != 3) ||
	    (unsigned)cfg->offload >= BUDGET_OFFLOAD_COUNT ||
	    !(isfinite(cfg->additional_buffer_factor) && cfg->additional_buffer_factor > 0))
		return MP_EINVAL;
	if (cfg->zero_stage == 3 && !(isfinite(cfg->largest_layer_params) && cfg->largest_layer_params > 0))
		return MP_EINVAL;
	budget_ds_result r = { 0 };
	if (cfg->zero_stage == 2)
		zero2(&r, cfg);
	else
		zero3(&r, cfg);
	/* DeepSpeed returns int(cpu_mem), int(gpu_mem) */
	r.cpu_bytes = trunc(r.cpu_bytes);
	r.gpu_bytes = trunc(r.gpu_bytes);
	*out = r;
	return MP_OK;
}

void budget_ds_options_text(char *buf, size_t n, const budget_ds_config *cfg)
{
	bool opt = cfg->offload != BUDGET_OFFLOAD_NONE;
	if (cfg->zero_stage == 2)
		snprintf(buf, n, "offload_optimizer=%s", opt ? "cpu" : "none");
	else
		snprintf(buf, n, "offload_param=%s, offload_optimizer=%s, zero_init=%d",
		         cfg->offload == BUDGET_OFFLOAD_CPU ? "cpu" : "none", opt ? "cpu" : "none",
		         cfg->zero_init ? 1 : 0);
}
