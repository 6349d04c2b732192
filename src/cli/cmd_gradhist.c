/* mixprec gradhist: the magnitudes of a step's gradients (or activations)
 * against fp16's and bf16's limits. The histogram is train/hist.c's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/train_opts.h"
#include "train/hist.h"
#include "train/train.h"
#include "util/csvout.h"

void openblas_set_num_threads(int num_threads);

/* The activations of the model's last forward (matmul inputs and outputs,
 * the residual stream, logits) added to h; returns how many. */
static size_t add_activations(mag_hist *h, const gpt_model *m)
{
	size_t L = m->config.L, C = m->config.C, BT = m->B * m->t, V = m->config.V;
	const gpt_acts *a = &m->acts;
	const struct { const float *x; size_t n; } parts[] = {
		{ a->ln1, L * BT * C }, { a->qkv, L * BT * 3 * C }, { a->atty, L * BT * C },
		{ a->attproj, L * BT * C }, { a->residual2, L * BT * C }, { a->ln2, L * BT * C },
		{ a->fch, L * BT * 4 * C }, { a->fch_gelu, L * BT * 4 * C }, { a->fcproj, L * BT * C },
		{ a->residual3, L * BT * C }, { a->lnf, BT * C }, { a->logits, BT * V },
	};
	size_t n = 0;
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		mag_hist_add(h, parts[i].x, parts[i].n, 1.0);
		n += parts[i].n;
	}
	return n;
}

static void print_hist(const mag_hist *h, bool csv, const char *policy, size_t steps, size_t n, bool acts)
{
	size_t nz = h->nonzero;
	if (csv) {
		csvw w;
		csvw_init(&w, stdout);
		csvw_header(&w, "log2_lo,log2_hi,count,share,fp16_at_scale");
		for (int k = h->lo; k <= h->hi; k++) {
			size_t c = h->count[k - MAG_HIST_KMIN];
			csvw_fieldf(&w, "%d", k);
			csvw_fieldf(&w, "%d", k + 1);
			csvw_fieldf(&w, "%zu", c);
			csvw_fieldf(&w, "%.6g", nz ? (double)c / (double)nz : 0.0);
			csvw_field(&w, mag_region_name(mag_hist_region(h, k)));
			csvw_end_row(&w);
		}
		return;
	}
	if (acts)
		printf("gradhist: %s, activations of step %zu's forward pass, %zu values (%zu exactly zero)\n"
		       "marks: fp16 min subnormal 2^-24, min normal 2^-14, max 65504;\n"
		       "bf16 min subnormal 2^-133, min normal 2^-126\n\n",
		       policy, steps, n, h->zero);
	else
		printf("gradhist: %s, gradients of step %zu, %zu parameters (%zu exactly zero)\n"
		       "loss scale S = %g; marks: fp16 min subnormal 2^-24, min normal 2^-14, max 65504;\n"
		       "bf16 min subnormal 2^-133, min normal 2^-126 (all gradients here are far above them)\n\n",
		       policy, steps, n, h->zero, h->scale);
	size_t peak = 1;
	for (int k = h->lo; k <= h->hi; k++)
		peak = h->count[k - MAG_HIST_KMIN] > peak ? h->count[k - MAG_HIST_KMIN] : peak;
	static const char *const marks[] = {
		[MAG_FLUSHED] = "  <- flushed to 0 in fp16", [MAG_SUBNORMAL] = "  <- fp16 subnormal",
		[MAG_NORMAL] = "", [MAG_OVERFLOW] = "  <- fp16 overflow",
	};
	for (int k = h->lo; k <= h->hi; k++) {
		size_t c = h->count[k - MAG_HIST_KMIN];
		int bar = (int)(50.0 * (double)c / (double)peak + 0.5);
		printf("2^%-4d %9zu |%.*s%s\n", k, c, bar, "##################################################",
		       marks[mag_hist_region(h, k)]);
	}
	printf("\nat S = %g in fp16: %.2f%% flush to zero, %.2f%% are subnormal (fewer bits), "
	       "%.2f%% overflow\n", h->scale, nz ? 100.0 * (double)h->flushed / (double)nz : 0.0,
	       nz ? 100.0 * (double)h->subnormal / (double)nz : 0.0, nz ? 100.0 * (double)h->overflow / (double)nz : 0.0);
}

static void gradhist_help(void)
{
	printf("Usage: mixprec gradhist [--steps N] [--scale S] [--of grads|activations]\n"
	       "                        [--policy P] [--csv] [train options]\n"
	       "Trains a few steps (default 20) and shows the magnitudes of the last step's\n"
	       "gradients as a histogram of powers of two, with fp16's and bf16's smallest\n"
	       "subnormal, smallest normal and largest values marked, and the share of\n"
	       "nonzero gradients that would underflow or overflow in fp16 after multiplying\n"
	       "the loss by S (default 1; try 1024 or 65536).\n\n"
	       "  --of activations  the last forward pass's activations instead (LayerNorm\n"
	       "           outputs, q/k/v, attention and MLP outputs, the residual stream,\n"
	       "           logits; of the first half-batch; CPU only; S is not applied)\n"
	       "  --csv    CSV: log2_lo,log2_hi,count,share,fp16_at_scale\n"
	       "  train options: see 'mixprec train --help' (--policy default fp32)\n");
}

int cmd_gradhist(int argc, char **argv)
{
	gradhist_opts go;
	char err[1024];
	if (gradhist_opts_parse(argc, argv, &go, err, sizeof err) != MP_OK) {
		cli_error("gradhist", "%s", err);
		return CLI_USAGE;
	}
	if (go.run.help) {
		gradhist_help();
		return cli_flush_stdout("gradhist") ? CLI_OK : CLI_ENV;
	}
	train_opts su = go.run;
	bool acts = go.activations, csv = go.csv;
	double scale = go.scale;
	int drc = train_opts_device_ready("gradhist", &su);
	if (drc != CLI_OK)
		return drc;
	train_policy pol[1];
	size_t np;
	if (!train_opts_shape_ok("gradhist", &su) || !train_opts_policies("gradhist", &su, pol, 1, &np))
		return CLI_USAGE;
	corpus data;
	int lrc = train_opts_load_data("gradhist", &su, &data);
	if (lrc != CLI_OK)
		return lrc;
	if (acts && su.cfg.device != TRAIN_DEVICE_CPU) {
		corpus_free(&data);
		cli_error("gradhist", "--of activations: only with --device cpu (the GPU trainer keeps its activations on the device)");
		return CLI_USAGE;
	}
	/* the trainer parallelises over batch halves; BLAS stays single-threaded */
	openblas_set_num_threads(1);
	trainer *tr;
	mp_status st = trainer_create(&tr, &su.cfg, &pol[0], &data, err, sizeof err);
	if (st != MP_OK) {
		corpus_free(&data);
		cli_error("gradhist", "cannot set up: %s", err);
		return CLI_ENV;
	}
	train_stats s;
	for (size_t i = 0; i < su.steps && st == MP_OK; i++)
		st = trainer_step(tr, &s);
	if (st != MP_OK) {
		corpus_free(&data);
		cli_error("gradhist", "training failed: %s", trainer_error(tr));
		trainer_free(tr);
		return CLI_ENV;
	}
	st = trainer_sync(tr);
	if (st != MP_OK) {
		corpus_free(&data);
		cli_error("gradhist", "--device cuda: cannot read the gradients back: %s", trainer_error(tr));
		trainer_free(tr);
		return CLI_ENV;
	}
	mag_hist h;
	size_t n = 0;
	if (acts) {
		mag_hist_init(&h, fmt_get(FMT_FP16), 1.0);
		n = add_activations(&h, trainer_model(tr));
	} else {
		mag_hist_init(&h, fmt_get(FMT_FP16), scale);
		const float *g = trainer_raw_grads(tr, &n);
		mag_hist_add(&h, g, n, s.loss_scale);   /* the raw gradients carry the policy's own scale */
	}
	print_hist(&h, csv, pol[0].name, su.steps, n, acts);
	trainer_free(tr);
	corpus_free(&data);
	return cli_flush_stdout("gradhist") ? CLI_OK : CLI_ENV;
}
