#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "budget/budget.h"
#include "budget/budget_opts.h"
#include "cli/budget_serve.h"
#include "cli/cli.h"
#include "util/csvout.h"
#include "util/numtext.h"


static void budget_help(void)
{
	char recipes[512];
	cli_wrap_list(recipes, sizeof recipes, budget_recipe_known(), 20, 80);
	printf("Usage: mixprec budget --params N [--recipe R] [--optimizer O] [--convention C]\n"
	       "                      [--zero S --gpus G] [--preset M] [--layers L --channels H\n"
	       "                      --heads A --context S] [--batch B] [--recompute R]\n"
	       "                      [--vocab V] [--offload O --nodes N --largest-layer N]\n"
	       "                      [--tp T [--sp]] [--pp P [--vpp M]] [--cp C] [--dp D]\n"
	       "                      [--csv]\n"
	       "Training memory per parameter and in total, per component (master weights,\n"
	       "working weights, gradients, fp32 gradient accumulator, optimiser state and,\n"
	       "with a model shape, activations), and each GPU's share under ZeRO.\n\n"
	       "  --params N        parameter count: 7e9, 6.7B, 124M, 175B, 2^30 (suffixes K, M,\n"
	       "                    B or G, T), a whole number from 1 to 10^15 (as every\n"
	       "                    count of budget); overrides a preset's count\n"
	       "  --preset M        a named model: %s\n"
	       "                    (parameter count and shape, micro-batch 1)\n"
	       "  --recipe R        one of:\n%s"
	       "                    (default bf16-mixed: fp32 master 4 + bf16 copy 2 + bf16\n"
	       "                    gradient 2 + fp32 accumulator 4 + Adam 8 = 20 bytes per\n"
	       "                    parameter)\n"
	       "  --optimizer O     %s (default adam)\n"
	       "                    state per parameter: adam/adamw 2 elements (fp32: 8 bytes),\n"
	       "                    sgd none, sgd-momentum 1, adam8bit 2 bytes\n"
	       "  --convention C    %s (default mixprec)\n"
	       "                    how another tool would count: eleuther = Transformer Math\n"
	       "                    101 (no fp32 accumulator), deepspeed = DeepSpeed's own\n"
	       "                    estimate_zero2/3_model_states_mem_needs (--zero 2 or 3),\n"
	       "                    accelerate = the largest single stage instead of the sum\n"
	       "  --offload O       deepspeed only: %s (default cpu, as\n"
	       "                    DeepSpeed's cpu_offload=True; ZeRO-3 cpu = offload_param\n"
	       "                    and offload_optimizer, optimizer = offload_optimizer alone)\n"
	       "  --nodes N         deepspeed only: nodes the GPUs are spread over (default 1);\n"
	       "                    the CPU figure is per node\n"
	       "  --largest-layer N deepspeed ZeRO-3: parameters of the largest layer (default:\n"
	       "                    from the shape, max of V*h, s*h, 4h*h + 4h)\n"
	       "  --zero S          ZeRO stage 0-3: 1 shards the optimiser state (with the fp32\n"
	       "                    master), 2 also the gradients, 3 also the weights (default\n"
	       "                    0)\n"
	       "  --gpus G          data-parallel GPUs, 1 to %d (default 1); adds per-GPU\n"
	       "                    columns\n"
	       "  --layers L --channels H --heads A --context S\n"
	       "                    a GPT shape, for activation memory (Korthikanti et al. 2022:\n"
	       "                    s*b*h*(34 + 5*a*s/h) bytes per layer with 16-bit\n"
	       "                    activations); --hidden and --seq are aliases\n"
	       "  --vocab V         vocabulary size of the shape (presets have theirs)\n"
	       "  --batch B         sequences per GPU per step (default 1); alias\n"
	       "                    --micro-batch (train's names are the canonical ones)\n"
	       "  --recompute R     %s (default none): selective keeps\n"
	       "                    34*s*b*h per layer, full only the layer input 2*s*b*h\n"
	       "  --csv             CSV: component,bytes_per_param,bytes,gb,gib, a total row\n"
	       "                    last;\n"
	       "                    with --gpus or --zero the values are one GPU's share;\n"
	       "                    deepspeed: rows cpu (per node) and total (per GPU)\n"
	       "  -h, --help        this text\n\n"
	       "Parallel layout (Megatron-style; Korthikanti et al. 2022, arXiv:2205.05198v1):\n"
	       "  --tp T            tensor-parallel size: t divides the heads; weights,\n"
	       "                    gradients and optimiser state are split by t*p (each GPU\n"
	       "                    holds 1/(t*p) of the parameters; the embedding that the\n"
	       "                    first and last stages hold in addition is left out)\n"
	       "  --sp              sequence parallelism over the tensor group (needs --tp 2+):\n"
	       "                    activations per layer sbh/t*(34 + 5as/h) instead of\n"
	       "                    sbh*(10 + 24/t + 5as/(ht)); selective recompute 34sbh/t\n"
	       "                    instead of sbh*(10 + 24/t); full recompute keeps 2sbh\n"
	       "                    (Table 2)\n"
	       "  --pp P            pipeline stages (1F1B): p divides the layers; the first\n"
	       "                    stage keeps p micro-batches of L/p layers, L layers' worth\n"
	       "                    (section 4.2.3, assuming at least p micro-batches a step);\n"
	       "                    ZeRO 2 and 3 are refused, as DeepSpeed's pipeline engine\n"
	       "                    refuses them\n"
	       "  --vpp M           model chunks per stage (interleaved 1F1B, needs --pp 2+,\n"
	       "                    M divides L/p): activations times 1 + (p-1)/(p*M)\n"
	       "  --cp C            context-parallel size: c divides the sequence; every\n"
	       "                    activation is split by c (Megatron-Core's context-parallel\n"
	       "                    guide: \"CP times smaller\"); keeping the attention scores\n"
	       "                    of s/c queries against s keys is this program's inference\n"
	       "  --dp D            data-parallel size: ZeRO shards over d only\n"
	       "  --gpus G          with a layout, the world size t*p*c*d (as Megatron's);\n"
	       "                    without --dp, d = G/(t*p*c); with both, they must agree\n"
	       "                    (default: t*p*c*d, or t*p*c with d = 1)\n"
	       "With a layout every row is one GPU of the first pipeline stage; activations\n"
	       "add the paper's section 4.3 terms: the embedding's dropout mask sbhp/t and,\n"
	       "with p = 1, the final LayerNorm and output layer 4sbh/t and fp32 logits\n"
	       "4sbv/t (the logits need the vocabulary: presets, or --vocab). The CSV gains\n"
	       "the columns tp,sp,pp,vpp,cp,dp,gpus. Not on --convention deepspeed.\n\n"
	       "GB = 10^9 bytes, GiB = 2^30 bytes. bytes/param of activations (and of the total)\n"
	       "is bytes divided by the parameter count. Every number accepts the full number\n"
	       "syntax (2^10, 3*2^20, ...).\n",
	       budget_preset_known(), recipes, budget_optimizer_known(), budget_convention_known(),
	       budget_offload_known(), BUDGET_GPUS_MAX, budget_recompute_known());
	budget_serve_help();
}

/* --- output --- */

/* "6.7 billion" style: the count in the largest SI unit that keeps it >= 1. */
static void count_text(char *buf, size_t n, double v)
{
	static const struct { double scale; const char *unit; } units[] = {
		{ 1e12, "T" }, { 1e9, "B" }, { 1e6, "M" }, { 1e3, "K" },
	};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (v >= units[i].scale) {
			snprintf(buf, n, "%.4g%s", v / units[i].scale, units[i].unit);
			return;
		}
	snprintf(buf, n, "%.4g", v);
}

/* A component row appears when the recipe has it; the optimiser row always (sgd: 0). */
static bool row_shown(const budget_result *r, int c)
{
	if (c == BUDGET_ACTIVATIONS)
		return r->has_activations;
	return c == BUDGET_OPTIMIZER || r->bytes_per_param[c] != 0;
}

/* A CSV row; with a layout (lay) its sizes t, sp, p, m, c, d and the GPUs
 * follow, the same on every row, so that the rows of several layouts can be
 * put in one table. */
static void csv_row(csvw *w, const char *name, double bytes, double params, const budget_config *lay)
{
	char buf[64];
	csvw_field(w, name);
	csvw_field(w, numtext_plain(buf, sizeof buf, bytes / params));
	csvw_field(w, numtext_bytes(buf, sizeof buf, bytes));
	csvw_field(w, numtext_plain(buf, sizeof buf, bytes / 1e9));
	csvw_field(w, numtext_plain(buf, sizeof buf, bytes / 1073741824.0));
	if (lay) {
		const budget_parallel *q = &lay->par;
		double d = lay->gpus / (budget_par_axis(q->tp) * budget_par_axis(q->pp) * budget_par_axis(q->cp));
		const double v[] = { budget_par_axis(q->tp), q->sp ? 1 : 0, budget_par_axis(q->pp), budget_par_axis(q->vpp),
			             budget_par_axis(q->cp), d, lay->gpus };
		for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
			snprintf(buf, sizeof buf, "%.0f", v[i]);
			csvw_field(w, buf);
		}
	}
	csvw_end_row(w);
}

static void print_csv(const budget_config *cfg, const budget_result *r, bool per_gpu)
{
	csvw w;
	csvw_init(&w, stdout);
	const budget_config *lay = r->has_layout ? cfg : NULL;
	csvw_header(&w, lay ? "component,bytes_per_param,bytes,gb,gib,tp,sp,pp,vpp,cp,dp,gpus"
	                    : "component,bytes_per_param,bytes,gb,gib");
	if (r->has_ds) {
		csv_row(&w, "cpu", r->ds.cpu_bytes, cfg->params, NULL);
		csv_row(&w, "total", r->ds.gpu_bytes, cfg->params, NULL);
		return;
	}
	for (int c = 0; c < BUDGET_COMPONENT_COUNT; c++)
		if (row_shown(r, c))
			csv_row(&w, budget_component_name((budget_component)c), per_gpu ? r->gpu_bytes[c] : r->bytes[c],
			        cfg->params, lay);
	csv_row(&w, "total", per_gpu ? r->gpu_total_bytes : r->total_bytes, cfg->params, lay);
}

static void print_row(const char *name, double bpp, double bytes, bool per_gpu, double gpu_bytes)
{
	char b[64];
	printf("%-18s %11.4g %18s %12.3f %12.3f", name, bpp, numtext_bytes(b, sizeof b, bytes), bytes / 1e9,
	       bytes / 1073741824.0);
	if (per_gpu)
		printf(" %12.3f %12.3f", gpu_bytes / 1e9, gpu_bytes / 1073741824.0);
	printf("\n");
}

/* Prints text as lines of at most width columns, breaking at blanks. */
static void print_wrapped(const char *text, size_t width)
{
	while (*text) {
		size_t n = strlen(text);
		if (n > width) {
			n = width;
			while (n > 0 && text[n] != ' ')
				n--;
			if (n == 0)
				n = strcspn(text, " ");
		}
		printf("%.*s\n", (int)n, text);
		text += n;
		while (*text == ' ')
			text++;
	}
}

/* DeepSpeed's figures as its estimate_*_all_cold prints them, in bytes, GB and GiB. */
static void print_deepspeed(const budget_result *r)
{
	const budget_ds_config *d = &r->ds_cfg;
	char opts[128], b[64];
	budget_ds_options_text(opts, sizeof opts, d);
	printf("DeepSpeed estimate_zero%d_model_states_mem_needs: %.0f node%s, %.0f GPU%s per node,\n  %s\n",
	       d->zero_stage, d->nodes, d->nodes == 1 ? "" : "s", d->gpus_per_node, d->gpus_per_node == 1 ? "" : "s",
	       opts);
	if (d->zero_stage == 3)
		printf("largest layer: %.0f parameters, %.0f bytes gathered (4 per parameter)\n", d->largest_layer_params,
		       r->ds.largest_layer_bytes);
	printf("  per GPU %16s bytes %10.3f GB %10.3f GiB\n", numtext_bytes(b, sizeof b, r->ds.gpu_bytes),
	       r->ds.gpu_bytes / 1e9, r->ds.gpu_bytes / 1073741824.0);
	printf("  per CPU %16s bytes %10.3f GB %10.3f GiB (per node, additional_buffer_factor %.3g)\n",
	       numtext_bytes(b, sizeof b, r->ds.cpu_bytes), r->ds.cpu_bytes / 1e9, r->ds.cpu_bytes / 1073741824.0,
	       d->additional_buffer_factor);
}

/* The layout's line above the table. */
static void print_layout(const budget_config *cfg, const budget_result *r)
{
	const budget_parallel *q = &cfg->par;
	printf("layout: t=%.0f%s p=%.0f m=%.0f c=%.0f d=%.0f on %.0f GPU%s; ZeRO stage %d over d\n",
	       budget_par_axis(q->tp), q->sp ? " (sequence parallel)" : "", budget_par_axis(q->pp),
	       budget_par_axis(q->vpp), budget_par_axis(q->cp), r->dp, cfg->gpus, cfg->gpus == 1 ? "" : "s",
	       r->zero_stage);
	printf("the last two columns are one GPU's share (the first pipeline stage): 1/(t*p) of the model\n");
}

/* How one GPU's activations add up under the layout. */
static void print_layout_activations(const budget_config *cfg, const budget_result *r)
{
	printf("one GPU: %.0f bytes per layer and micro-batch; first stage %.0f layers x %.6g (interleave) = %.0f "
	       "bytes,\n  + embedding and output %.0f bytes = %.0f bytes\n",
	       r->layer_gpu_bytes, cfg->shape.layers, r->interleave, r->stage_layer_bytes, r->extra_bytes,
	       r->gpu_bytes[BUDGET_ACTIVATIONS]);
}

static void print_table(const budget_config *cfg, const budget_result *r, bool per_gpu, const char *preset)
{
	char pc[32];
	count_text(pc, sizeof pc, cfg->params);
	printf("budget: %s%s%s parameters (%.0f), recipe %s, optimizer %s, convention %s\n", preset ? preset : "",
	       preset ? ", " : "", pc, cfg->params, budget_recipe_name(cfg->recipe), budget_optimizer_name(cfg->optimizer),
	       budget_convention_name(cfg->convention));
	if (r->has_ds) {
		per_gpu = false;   /* DeepSpeed gives no per-component split */
		print_deepspeed(r);
	} else if (r->has_layout) {
		print_layout(cfg, r);
	} else if (per_gpu) {
		printf("ZeRO stage %d on %.0f GPU%s: the last two columns are one GPU's share\n", r->zero_stage,
		       cfg->gpus, cfg->gpus == 1 ? "" : "s");
	}
	const budget_shape *s = &cfg->shape;
	if (r->has_activations)
		printf("activations: L=%.0f h=%.0f a=%.0f s=%.0f b=%.0f, recompute %s: %.0f bytes per layer\n",
		       s->layers, s->hidden, s->heads, s->seq, s->micro_batch, budget_recompute_name(cfg->recompute),
		       r->activation_layer_bytes);
	if (r->has_layout && r->has_activations)
		print_layout_activations(cfg, r);
	printf("\n%-18s %11s %18s %12s %12s", "component", "bytes/param", "bytes", "GB", "GiB");
	if (per_gpu)
		printf(" %12s %12s", "GB/GPU", "GiB/GPU");
	printf("\n");
	for (int c = 0; c < BUDGET_COMPONENT_COUNT; c++)
		if (row_shown(r, c))
			print_row(budget_component_name((budget_component)c), r->bytes_per_param[c], r->bytes[c], per_gpu,
			          r->gpu_bytes[c]);
	print_row(r->total_is_max ? "total (max stage)" : "total", r->total_bytes_per_param, r->total_bytes, per_gpu,
	          r->gpu_total_bytes);
	if (r->has_ds)
		printf("(the rows: mixprec's count of one unsharded replica, for comparison)\n");
	if (r->has_activations) {
		double states = r->total_bytes - r->bytes[BUDGET_ACTIVATIONS];
		printf("without activations: %.4g bytes/param, %.3f GB", states / cfg->params, states / 1e9);
		if (per_gpu)
			printf(", %.3f GB per GPU", (r->gpu_total_bytes - r->gpu_bytes[BUDGET_ACTIVATIONS]) / 1e9);
		printf("\n");
	}
	printf("\nGB = 10^9 bytes, GiB = 2^30 bytes.\n");
	char note[1024];
	budget_explain(note, sizeof note, cfg, r);
	print_wrapped(note, 78);
}

/* --- the command --- */

int cmd_budget(int argc, char **argv)
{
	budget_opts o;
	char err[1024];
	if (budget_opts_parse(argc, argv, &o, err, sizeof err) != MP_OK) {
		cli_error("budget", "%s", err);
		return CLI_USAGE;
	}
	if (o.help) {
		budget_help();
		return cli_flush_stdout("budget") ? CLI_OK : CLI_ENV;
	}
	if (o.serve)
		return budget_serve_run(&o);
	budget_result r;
	mp_status st = budget_compute(&r, &o.cfg);
	if (st != MP_OK) {
		cli_error("budget", "%s", mp_status_message(st));
		return CLI_USAGE;
	}
	if (o.csv)
		print_csv(&o.cfg, &r, o.per_gpu);
	else
		print_table(&o.cfg, &r, o.per_gpu, o.preset);
	return cli_flush_stdout("budget") ? CLI_OK : CLI_ENV;
}
