#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "budget/budget.h"
#include "cli/cli.h"
#include "util/csvout.h"
#include "util/numtext.h"

/* More GPUs than any cluster has: a typo, not a plan. */
#define BUDGET_GPUS_MAX (1 << 20)

static void budget_help(void)
{
	char recipes[512];
	cli_wrap_list(recipes, sizeof recipes, budget_recipe_known(), 20, 80);
	printf("Usage: mixprec budget --params N [--recipe R] [--optimizer O] [--convention C]\n"
	       "                      [--zero S --gpus G] [--preset M] [--layers L --channels H\n"
	       "                      --heads A --context S] [--batch B] [--recompute R]\n"
	       "                      [--vocab V] [--offload O --nodes N --largest-layer N]\n"
	       "                      [--csv]\n"
	       "Training memory per parameter and in total, per component (master weights,\n"
	       "working weights, gradients, fp32 gradient accumulator, optimiser state and,\n"
	       "with a model shape, activations), and each GPU's share under ZeRO.\n\n"
	       "  --params N        parameter count: 7e9, 6.7B, 124M, 175B, 2^30 (suffixes K, M,\n"
	       "                    B or G, T); overrides a preset's count\n"
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
	       "GB = 10^9 bytes, GiB = 2^30 bytes. bytes/param of activations (and of the total)\n"
	       "is bytes divided by the parameter count. Every number accepts the full number\n"
	       "syntax (2^10, 3*2^20, ...).\n",
	       budget_preset_known(), recipes, budget_optimizer_known(), budget_convention_known(),
	       budget_offload_known(), BUDGET_GPUS_MAX, budget_recompute_known());
}

/* --- parsing --- */

static bool parse_count(const char *opt, const char *text, bool integer, double *v)
{
	char err[256];
	mp_status st = budget_parse_count(text, integer, v, err, sizeof err);
	if (st != MP_OK) {
		cli_error("budget", "%s: %s", opt, err[0] ? err : mp_status_message(st));
		return false;
	}
	return true;
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

/* The shortest text that reads back as exactly v, positional (700, not 7e+02)
 * for magnitudes a spreadsheet shows that way. */
static char *num_text(char *buf, size_t n, double v)
{
	numtext_short(buf, n, v);
	double a = fabs(v);
	if (strchr(buf, 'e') && a >= 1e-4 && a < 1e15) {
		for (int d = 0; d <= 20; d++) {
			snprintf(buf, n, "%.*f", d, v);
			if (strtod(buf, NULL) == v)
				break;
		}
	}
	return buf;
}

/* Bytes as an integer when they are one (exactly), else the shortest round-trip text. */
static char *bytes_text(char *buf, size_t n, double v)
{
	if (v == floor(v) && v < 9007199254740992.0)
		snprintf(buf, n, "%.0f", v);
	else
		num_text(buf, n, v);
	return buf;
}

/* A component row appears when the recipe has it; the optimiser row always (sgd: 0). */
static bool row_shown(const budget_result *r, int c)
{
	if (c == BUDGET_ACTIVATIONS)
		return r->has_activations;
	return c == BUDGET_OPTIMIZER || r->bytes_per_param[c] != 0;
}

static void csv_row(csvw *w, const char *name, double bytes, double params)
{
	char buf[64];
	csvw_field(w, name);
	csvw_field(w, num_text(buf, sizeof buf, bytes / params));
	csvw_field(w, bytes_text(buf, sizeof buf, bytes));
	csvw_field(w, num_text(buf, sizeof buf, bytes / 1e9));
	csvw_field(w, num_text(buf, sizeof buf, bytes / 1073741824.0));
	csvw_end_row(w);
}

static void print_csv(const budget_config *cfg, const budget_result *r, bool per_gpu)
{
	csvw w;
	csvw_init(&w, stdout);
	csvw_header(&w, "component,bytes_per_param,bytes,gb,gib");
	if (r->has_ds) {
		csv_row(&w, "cpu", r->ds.cpu_bytes, cfg->params);
		csv_row(&w, "total", r->ds.gpu_bytes, cfg->params);
		return;
	}
	for (int c = 0; c < BUDGET_COMPONENT_COUNT; c++)
		if (row_shown(r, c))
			csv_row(&w, budget_component_name((budget_component)c), per_gpu ? r->gpu_bytes[c] : r->bytes[c],
			        cfg->params);
	csv_row(&w, "total", per_gpu ? r->gpu_total_bytes : r->total_bytes, cfg->params);
}

static void print_row(const char *name, double bpp, double bytes, bool per_gpu, double gpu_bytes)
{
	char b[64];
	printf("%-18s %11.4g %18s %12.3f %12.3f", name, bpp, bytes_text(b, sizeof b, bytes), bytes / 1e9,
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
	printf("  per GPU %16s bytes %10.3f GB %10.3f GiB\n", bytes_text(b, sizeof b, r->ds.gpu_bytes),
	       r->ds.gpu_bytes / 1e9, r->ds.gpu_bytes / 1073741824.0);
	printf("  per CPU %16s bytes %10.3f GB %10.3f GiB (per node, additional_buffer_factor %.3g)\n",
	       bytes_text(b, sizeof b, r->ds.cpu_bytes), r->ds.cpu_bytes / 1e9, r->ds.cpu_bytes / 1073741824.0,
	       d->additional_buffer_factor);
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
	} else if (per_gpu) {
		printf("ZeRO stage %d on %.0f GPU%s: the last two columns are one GPU's share\n", r->zero_stage,
		       cfg->gpus, cfg->gpus == 1 ? "" : "s");
	}
	const budget_shape *s = &cfg->shape;
	if (r->has_activations)
		printf("activations: L=%.0f h=%.0f a=%.0f s=%.0f b=%.0f, recompute %s: %.0f bytes per layer\n",
		       s->layers, s->hidden, s->heads, s->seq, s->micro_batch, budget_recompute_name(cfg->recompute),
		       r->activation_layer_bytes);
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
	if (cfg->convention == BUDGET_CONV_MIXPREC && (strcmp(budget_recipe_name(cfg->recipe), "bf16-mixed") ||
	                                               strcmp(budget_optimizer_name(cfg->optimizer), "adam"))) {
		/* the note explains bf16-mixed with Adam: any other recipe gets its own count */
		char note[600];
		size_t n = (size_t)snprintf(note, sizeof note, "mixprec counts every copy the recipe keeps resident at the "
		                            "optimiser step; for %s with %s:", budget_recipe_name(cfg->recipe),
		                            budget_optimizer_name(cfg->optimizer));
		double sum = 0;
		for (int c = 0; c < BUDGET_ACTIVATIONS && n < sizeof note; c++)
			if (r->bytes_per_param[c] > 0) {
				n += (size_t)snprintf(note + n, sizeof note - n, "%s %s %.4g", sum > 0 ? " +" : "",
				                      budget_component_name((budget_component)c), r->bytes_per_param[c]);
				sum += r->bytes_per_param[c];
			}
		if (n < sizeof note)
			snprintf(note + n, sizeof note - n, " = %.4g bytes per parameter.", sum);
		print_wrapped(note, 78);
	} else {
		print_wrapped(budget_convention_note(cfg->convention), 78);
	}
}

/* A name looked up (st) for option opt: false after reporting an unknown one. */
static bool named(const char *opt, const char *what, mp_status st, const char *known)
{
	if (st != MP_OK)
		cli_error("budget", "%s: unknown %s '%s' (known: %s)", opt, what, optarg, known);
	return st == MP_OK;
}

/* Explicit shape options override the preset's; without a preset all four
 * are needed. False after reporting. */
static bool resolve_shape(budget_shape *shape, const budget_shape *given, bool have_mb, bool have_rc)
{
	if (given->layers) shape->layers = given->layers;
	if (given->hidden) shape->hidden = given->hidden;
	if (given->heads) shape->heads = given->heads;
	if (given->seq) shape->seq = given->seq;
	if (given->vocab) shape->vocab = given->vocab;
	shape->micro_batch = have_mb ? given->micro_batch : 1;
	bool any = shape->layers || shape->hidden || shape->heads || shape->seq;
	if (any && !(shape->layers && shape->hidden && shape->heads && shape->seq)) {
		cli_error("budget", "a model shape needs%s%s%s%s (or --preset M)", shape->layers ? "" : " --layers",
		          shape->hidden ? "" : " --channels", shape->heads ? "" : " --heads", shape->seq ? "" : " --context");
		return false;
	}
	if (!any && (have_mb || have_rc)) {
		cli_error("budget", "%s needs a model shape (--preset M, or --layers, --channels, --heads, --context)",
		          have_mb ? "--batch" : "--recompute");
		return false;
	}
	return true;
}

/* An option only the deepspeed convention reads: 1 taken, 0 not one of
 * them, -1 bad (reported); *name gets the option's name. */
static int ds_option(int c, const char *arg, budget_config *cfg, const char **name)
{
	switch (c) {
	case 'O':
		*name = "--offload";
		if (budget_offload_from_name(arg, &cfg->offload) != MP_OK) {
			cli_error("budget", "--offload: unknown setting '%s' (known: %s)", arg, budget_offload_known());
			return -1;
		}
		return 1;
	case 'N':
		*name = "--nodes";
		return parse_count(*name, arg, true, &cfg->nodes) ? 1 : -1;
	case 'Y':
		*name = "--largest-layer";
		return parse_count(*name, arg, true, &cfg->largest_layer) ? 1 : -1;
	default:
		return 0;
	}
}

/* The deepspeed convention's own checks, or an option only it reads given
 * to another; false after reporting. */
static bool deepspeed_ok(const budget_config *cfg, bool have_zero, const char *ds_only)
{
	if (cfg->convention != BUDGET_CONV_DEEPSPEED) {
		if (ds_only)
			cli_error("budget", "%s: only the deepspeed convention reads it (--convention deepspeed)", ds_only);
		return !ds_only;
	}
	if (have_zero && cfg->zero_stage != 2 && cfg->zero_stage != 3) {
		cli_error("budget", "--zero %d: DeepSpeed estimates ZeRO-2 and ZeRO-3 only (use --zero 2 or 3, or "
		          "another convention)", cfg->zero_stage);
		return false;
	}
	if (fmod(cfg->gpus, cfg->nodes) != 0) {
		cli_error("budget", "--nodes %.0f: does not divide --gpus %.0f", cfg->nodes, cfg->gpus);
		return false;
	}
	if (cfg->zero_stage == 3 && !(cfg->largest_layer > 0) && budget_largest_layer_params(&cfg->shape) == 0) {
		cli_error("budget", "--zero 3: DeepSpeed's ZeRO-3 estimate needs the largest layer's parameter "
		          "count: give --largest-layer N, or a shape with its vocabulary (--preset M, or "
		          "--layers ... --vocab V)");
		return false;
	}
	return true;
}

/* --- the command --- */

static const struct option opts[] = {
	{ "params", required_argument, NULL, 'p' },
	{ "preset", required_argument, NULL, 'P' },
	{ "recipe", required_argument, NULL, 'r' },
	{ "optimizer", required_argument, NULL, 'o' },
	{ "convention", required_argument, NULL, 'C' },
	{ "zero", required_argument, NULL, 'z' },
	{ "gpus", required_argument, NULL, 'g' },
	{ "layers", required_argument, NULL, 'L' },
	{ "channels", required_argument, NULL, 'H' },
	{ "hidden", required_argument, NULL, 'H' },   /* aliases: train's names are canonical */
	{ "heads", required_argument, NULL, 'A' },
	{ "context", required_argument, NULL, 'S' },
	{ "seq", required_argument, NULL, 'S' },
	{ "batch", required_argument, NULL, 'b' },
	{ "micro-batch", required_argument, NULL, 'b' },
	{ "recompute", required_argument, NULL, 'R' },
	{ "vocab", required_argument, NULL, 'V' },
	{ "offload", required_argument, NULL, 'O' },
	{ "nodes", required_argument, NULL, 'N' },
	{ "largest-layer", required_argument, NULL, 'Y' },
	{ "csv", no_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int cmd_budget(int argc, char **argv)
{
	budget_config cfg = budget_defaults();
	double params = 0;
	budget_shape shape = { 0 }, given = { 0 };   /* given: explicit shape options */
	const char *preset = NULL;
	bool csv = false, have_gpus = false, have_zero = false, have_mb = false, have_rc = false;
	const char *ds_only = NULL;   /* an option that only the deepspeed convention reads */
	cli_args args = { 0 };
	char *value;
	int c;
	while ((c = cli_getopt(&args, argc, argv, opts, &value)) != -1) {
		int ds = ds_option(c, optarg, &cfg, &ds_only);
		if (ds < 0)
			return CLI_USAGE;
		if (ds > 0)
			continue;
		switch (c) {
		case CLI_ARG_VALUE:
			cli_error("budget", "unexpected argument '%s' (see 'mixprec budget --help')", value);
			return CLI_USAGE;
		case 'p': if (!parse_count("--params", optarg, false, &params)) return CLI_USAGE; break;
		case 'P':
			if (budget_preset(optarg, &cfg.params, &shape) != MP_OK) {
				cli_error("budget", "--preset: unknown model '%s' (known: %s)", optarg, budget_preset_known());
				return CLI_USAGE;
			}
			preset = optarg;
			break;
		case 'r':
			if (!named("--recipe", "recipe", budget_recipe_from_name(optarg, &cfg.recipe), budget_recipe_known()))
				return CLI_USAGE;
			break;
		case 'o':
			if (!named("--optimizer", "optimizer", budget_optimizer_from_name(optarg, &cfg.optimizer),
			           budget_optimizer_known()))
				return CLI_USAGE;
			break;
		case 'C':
			if (!named("--convention", "convention", budget_convention_from_name(optarg, &cfg.convention),
			           budget_convention_known()))
				return CLI_USAGE;
			break;
		case 'R':
			if (!named("--recompute", "mode", budget_recompute_from_name(optarg, &cfg.recompute),
			           budget_recompute_known()))
				return CLI_USAGE;
			have_rc = true;
			break;
		case 'z': {
			char zerr[256];
			if (budget_parse_zero(optarg, &cfg.zero_stage, zerr, sizeof zerr) != MP_OK) {
				cli_error("budget", "%s", zerr);
				return CLI_USAGE;
			}
			have_zero = true;
			break;
		}
		case 'g':
			if (!parse_count("--gpus", optarg, true, &cfg.gpus))
				return CLI_USAGE;
			if (cfg.gpus > BUDGET_GPUS_MAX) {
				cli_error("budget", "--gpus: %s is out of range (1 to %d)", optarg, BUDGET_GPUS_MAX);
				return CLI_USAGE;
			}
			have_gpus = true;
			break;
		case 'L': if (!parse_count("--layers", optarg, true, &given.layers)) return CLI_USAGE; break;
		case 'H': if (!parse_count("--channels", optarg, true, &given.hidden)) return CLI_USAGE; break;
		case 'A': if (!parse_count("--heads", optarg, true, &given.heads)) return CLI_USAGE; break;
		case 'S': if (!parse_count("--context", optarg, true, &given.seq)) return CLI_USAGE; break;
		case 'b':
			if (!parse_count("--batch", optarg, true, &given.micro_batch))
				return CLI_USAGE;
			have_mb = true;
			break;
		case 'V': if (!parse_count("--vocab", optarg, true, &given.vocab)) return CLI_USAGE; break;
		case 'c': csv = true; break;
		case 'h': budget_help(); return cli_flush_stdout("budget") ? CLI_OK : CLI_ENV;
		case ':':
		default:
			return cli_option_error("budget", c, argv);
		}
	}
	if (params > 0)
		cfg.params = params;
	if (!(cfg.params > 0)) {
		cli_error("budget", "--params N is required (or --preset M; see 'mixprec budget --help')");
		return CLI_USAGE;
	}

	if (!resolve_shape(&shape, &given, have_mb, have_rc))
		return CLI_USAGE;
	cfg.shape = shape;
	if (!deepspeed_ok(&cfg, have_zero, ds_only))
		return CLI_USAGE;

	budget_result r;
	mp_status st = budget_compute(&r, &cfg);
	if (st != MP_OK) {
		cli_error("budget", "%s", mp_status_message(st));
		return CLI_USAGE;
	}
	bool per_gpu = have_gpus || have_zero || cfg.convention == BUDGET_CONV_DEEPSPEED;
	if (csv)
		print_csv(&cfg, &r, per_gpu);
	else
		print_table(&cfg, &r, per_gpu, preset);
	return cli_flush_stdout("budget") ? CLI_OK : CLI_ENV;
}
