#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget/serve.h"
#include "cli/budget_serve.h"
#include "cli/cli.h"
#include "util/csvout.h"
#include "util/numtext.h"

void budget_serve_help(void)
{
	printf("\nServing (--serve): the memory of serving the model, as vLLM lays it out\n"
	       "Usage: mixprec budget --serve --preset M | --params N --layers L --channels H\n"
	       "                      --heads A [--kv-heads K] [--head-dim D] [--context S]\n"
	       "                      [--batch B] [--weights-dtype W] [--kv-dtype K]\n"
	       "                      [--gpu-mem SIZE [--gpu-util F] [--reserve SIZE]\n"
	       "                      [--block-size N]] [--csv]\n"
	       "  --serve           weights, KV cache and (with --gpu-mem) the batch x context\n"
	       "                    one GPU holds, instead of training's budget; --context is\n"
	       "                    the tokens of a sequence (default the preset's), --batch\n"
	       "                    the sequences (default 1)\n"
	       "  --weights-dtype W %s (default bf16): the\n"
	       "                    linear layers in W with their scales (fp8 one fp32 per\n"
	       "                    matrix; int4 GPTQ/AWQ groups of 128 with an fp16 scale and\n"
	       "                    a 4-bit zero; nvfp4 an e4m3 per 16 and an fp32 per matrix;\n"
	       "                    mxfp4 an e8m0 per 32), embeddings, head and norms 16-bit\n"
	       "  --kv-dtype K      %s (default bf16):\n"
	       "                    2 * layers * kv_heads * head_dim * bytes per token\n"
	       "  --kv-heads K      KV heads (grouped-query attention; default the preset's,\n"
	       "                    else --heads); must divide --heads\n"
	       "  --head-dim D      size of a head (default the preset's, else channels/heads)\n"
	       "  --gpu-mem SIZE    one GPU's memory: 80GB, 39.5GiB (units B, KB, MB, GB, TB,\n"
	       "                    KiB, MiB, GiB, TiB)\n"
	       "  --gpu-util F      vLLM's gpu_memory_utilization, in (0, 1] (default 0.9);\n"
	       "                    this and the next two need --gpu-mem\n"
	       "  --reserve SIZE    memory held for activations and non-torch allocations\n"
	       "                    (default 0): vLLM measures it with a profile run, a\n"
	       "                    forward pass over max_num_batched_tokens; its log's\n"
	       "                    activation peak plus non_torch_memory is the figure\n"
	       "  --block-size N    tokens per KV block (default 16, as vLLM's)\n"
	       "  --csv             CSV: item,bytes,gb,gib,count; memory rows (weights,\n"
	       "                    weight_scales, weights_total, kv_cache_per_token,\n"
	       "                    kv_cache, and with --gpu-mem gpu_memory, usable, reserve,\n"
	       "                    kv_budget, free) fill bytes, gb and gib; count rows\n"
	       "                    (kv_heads_per_gpu, tokens, and with --gpu-mem blocks,\n"
	       "                    max_tokens, max_batch, concurrency) fill count\n"
	       "A request that does not fit (the weights and reserve beyond the usable memory,\n"
	       "or batch x context beyond the KV blocks) prints its figures, then says by how\n"
	       "much on stderr and exits 2.\n",
	       serve_weights_known(), serve_kv_known());
}

/* One row of the serving figures: bytes (count < 0) or a count. */
typedef struct {
	const char *name;
	double bytes;
	double count;
	bool is_count;
} serve_row;

/* The rows in output order; returns how many. */
static size_t serve_rows(serve_row *rows, const serve_config *c, const serve_result *r)
{
	size_t k = 0;
#define MEM(n, v) rows[k++] = (serve_row){ .name = n, .bytes = (v) }
#define CNT(n, v) rows[k++] = (serve_row){ .name = n, .count = (v), .is_count = true }
	MEM("weights", r->weight_bytes);
	MEM("weight_scales", r->scale_bytes);
	MEM("weights_total", r->weights_total);
	MEM("kv_cache_per_token", r->kv_token_bytes);
	MEM("kv_cache", r->kv_bytes);
	if (r->has_gpu) {
		MEM("gpu_memory", c->gpu_mem);
		MEM("usable", r->usable);
		MEM("reserve", c->reserve);
		MEM("kv_budget", r->kv_budget);
		MEM("free", r->free_bytes);
	}
	CNT("kv_heads_per_gpu", r->kv_heads_gpu);
	CNT("tokens", r->kv_tokens);
	if (r->has_gpu) {
		CNT("blocks", r->blocks);
		CNT("max_tokens", r->max_tokens);
		CNT("max_batch", r->max_batch);
		CNT("concurrency", r->concurrency);
	}
#undef MEM
#undef CNT
	return k;
}

static void print_csv(const serve_row *rows, size_t n)
{
	csvw w;
	char b[64];
	csvw_init(&w, stdout);
	csvw_header(&w, "item,bytes,gb,gib,count");
	for (size_t i = 0; i < n; i++) {
		csvw_field(&w, rows[i].name);
		if (rows[i].is_count) {
			csvw_field(&w, "");
			csvw_field(&w, "");
			csvw_field(&w, "");
			csvw_field(&w, numtext_plain(b, sizeof b, rows[i].count));
		} else {
			csvw_field(&w, numtext_bytes(b, sizeof b, rows[i].bytes));
			csvw_field(&w, numtext_plain(b, sizeof b, rows[i].bytes / 1e9));
			csvw_field(&w, numtext_plain(b, sizeof b, rows[i].bytes / 1073741824.0));
			csvw_field(&w, "");
		}
		csvw_end_row(&w);
	}
}

/* Prints text as lines of at most 78 columns, broken at blanks. */
static void print_note(const char *text)
{
	while (*text) {
		size_t n = strlen(text);
		if (n > 78) {
			n = 78;
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

static void print_table(const budget_opts *o, const serve_row *rows, size_t n, const serve_result *r)
{
	const serve_config *c = &o->serve_cfg;
	const serve_model *m = &c->model;
	char b[64];
	printf("budget --serve: %s%s%.0f parameters, weights %s, KV cache %s, TP %.0f\n",
	       o->preset ? o->preset : "", o->preset ? ", " : "", m->params, serve_weights_name(c->weights),
	       serve_kv_name(c->kv), c->tp);
	printf("shape: L=%.0f h=%.0f heads=%.0f kv_heads=%.0f head_dim=%.0f", m->layers, m->hidden, m->heads,
	       m->kv_heads, m->head_dim);
	if (m->ffn > 0)
		printf(" ffn=%.0f (%.0f MLP matrices)\n", m->ffn, m->mlp_mats);
	else
		printf(" (no FFN width: every parameter counted in %s)\n", serve_weights_name(c->weights));
	printf("request: batch %.0f x context %.0f = %.0f tokens\n", c->batch, c->context, r->kv_tokens);
	if (r->has_gpu)
		printf("GPU: %s bytes x gpu_memory_utilization %.4g; KV blocks of %.0f tokens\n",
		       numtext_bytes(b, sizeof b, c->gpu_mem), c->gpu_util, c->block_size);
	printf("\n%-20s %18s %12s %12s\n", "item", "bytes", "GB", "GiB");
	for (size_t i = 0; i < n; i++)
		if (!rows[i].is_count)
			printf("%-20s %18s %12.3f %12.3f\n", rows[i].name, numtext_bytes(b, sizeof b, rows[i].bytes),
			       rows[i].bytes / 1e9, rows[i].bytes / 1073741824.0);
	printf("\n%-20s %18s\n", "item", "count");
	for (size_t i = 0; i < n; i++)
		if (rows[i].is_count)
			printf("%-20s %18s\n", rows[i].name, numtext_plain(b, sizeof b, rows[i].count));
	char note[512];
	printf("\n");
	print_note(serve_weights_note(c->weights));
	if (m->ffn > 0 && c->weights != SERVE_W_BF16 && c->weights != SERVE_W_FP16) {
		snprintf(note, sizeof note, "linear weights: %.0f parameters at %.6g bits; the other %.0f at 16 bits.",
		         r->linear_params, r->bits_per_linear, r->other_params);
		print_note(note);
	}
	if (r->has_gpu && c->reserve == 0)
		print_note("reserve 0: vLLM also holds its activation peak and non-torch memory, measured by a profile "
		           "run (--reserve).");
	printf("GB = 10^9 bytes, GiB = 2^30 bytes.\n");
}

int budget_serve_run(const budget_opts *o)
{
	serve_result r;
	char err[512];
	if (serve_compute(&r, &o->serve_cfg, err, sizeof err) != MP_OK) {
		cli_error("budget", "%s", err);
		return CLI_USAGE;
	}
	serve_row rows[24];
	size_t n = serve_rows(rows, &o->serve_cfg, &r);
	if (o->csv)
		print_csv(rows, n);
	else
		print_table(o, rows, n, &r);
	if (!cli_flush_stdout("budget"))
		return CLI_ENV;
	if (!r.fits) {
		serve_fit_message(err, sizeof err, &o->serve_cfg, &r);
		cli_error("budget", "%s", err);
		return CLI_USAGE;
	}
	return CLI_OK;
}
