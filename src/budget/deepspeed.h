/* DeepSpeed's own memory estimators for ZeRO-2 and ZeRO-3 model states,
 * reproduced operation for operation so that `budget --convention deepspeed`
 * prints the figures DeepSpeed prints:
 *   deepspeed/runtime/zero/stage_1_and_2.py estimate_zero2_model_states_mem_needs
 *   deepspeed/runtime/zero/stage3.py        estimate_zero3_model_states_mem_needs
 * (ZeRO-2 as changed by DeepSpeed PR #5099, April 2024: 2P + 18P/G without
 * offload; before it, 4P + 16P/G). Python's float arithmetic is binary64, so
 * the same operations in the same order give the same numbers; int() is trunc(). */
#ifndef MIXPREC_BUDGET_DEEPSPEED_H
#define MIXPREC_BUDGET_DEEPSPEED_H

#include <stdbool.h>

#include "util/status.h"

typedef enum {
	BUDGET_OFFLOAD_CPU,        /* DeepSpeed's default: optimizer (and, ZeRO-3, parameters) on the CPU */
	BUDGET_OFFLOAD_NONE,       /* everything on the GPUs */
	BUDGET_OFFLOAD_OPTIMIZER,  /* ZeRO-3: offload_optimizer=cpu, offload_param=none (ZeRO-2: as cpu) */
	BUDGET_OFFLOAD_COUNT
} budget_offload;

typedef struct {
	double total_params;          /* P > 0 */
	double largest_layer_params;  /* ZeRO-3 only: the largest module's own parameters */
	double gpus_per_node;         /* >= 1, whole */
	double nodes;                 /* >= 1, whole */
	int zero_stage;               /* 2 or 3 */
	budget_offload offload;
	bool zero_init;               /* ZeRO-3's zero_init (DeepSpeed's default: true) */
	double additional_buffer_factor;  /* DeepSpeed's default 1.5, on the CPU figure only */
} budget_ds_config;

typedef struct {
	double gpu_bytes;             /* per GPU */
	double cpu_bytes;             /* per node ("per CPU" in DeepSpeed's table) */
	double largest_layer_bytes;   /* ZeRO-3: 4 bytes per largest-layer parameter; 0 for ZeRO-2 */
} budget_ds_result;

/* DeepSpeed's defaults: one node of one GPU, cpu offload, zero_init, factor 1.5; params 0. */
budget_ds_config budget_ds_defaults(void);

/* Fills *out. MP_EINVAL for a stage other than 2 or 3, counts not positive and
 * whole, ZeRO-3 without a positive largest layer, or a factor not positive. */
mp_status budget_ds_estimate(budget_ds_result *out, const budget_ds_config *cfg);

/* DeepSpeed's option names for the table: "offload_optimizer=cpu", and for
 * ZeRO-3 "offload_param=cpu, offload_optimizer=cpu, zero_init=1". */
void budget_ds_options_text(char *buf, size_t n, const budget_ds_config *cfg);

const char *budget_offload_name(budget_offload o);
mp_status budget_offload_from_name(const char *name, budget_offload *out);
const char *budget_offload_known(void);

#endif
