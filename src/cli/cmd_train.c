#include <errno.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/meter.h"
#include "cli/train_ckpt.h"
#include "cli/train_noise.h"
#include "cli/train_opts.h"
#include "cli/train_resume.h"
#include "gpu/gpu.h"
#include "gpu/gpu_trainer.h"
#include "fmt/decode.h"
#include "train/nvfp4_probe.h"
#include "train/train.h"
#include "train/train_csv.h"
#include "util/csvout.h"
#include "util/rng.h"

void openblas_set_num_threads(int num_threads);

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* The policy parts with no option of their own (train/policy_parts.c). */
static void train_parts_help(void)
{
	printf("\nPolicy parts without an option (P+KEY=VALUE; CPU only: --device cuda refuses\n"
	       "them). Operands after microxcaling's mx_specs, whose names are in brackets:\n"
	       "  fwd=F | fwd=x:F/w:G   the forward GEMM Y = X W^T of every Linear (the blocks'\n"
	       "                     four and the tied head; attention's products stay in the\n"
	       "                     GEMM format): X [a_elem_format] and W [w_elem_format]\n"
	       "                     rounded to nearest even into F (one format: both),\n"
	       "                     unscaled, with the format's overflow rule, instead of the\n"
	       "                     GEMM format; outputs stay in the GEMM format. Not with\n"
	       "                     --fp8-scaling (its casts have their own formats)\n"
	       "  dgrad=F | dgrad=dy:F/w:G   the input gradient dX = dY W: dY\n"
	       "                     [a_elem_format_bp_os], W [w_elem_format_bp]\n"
	       "  wgrad=F | wgrad=x:F/dy:G   the weight gradient dW = dY^T X: X and dY\n"
	       "                     [both a_elem_format_bp_ex there]\n"
	       "                     ('/' joins two operands: ',' separates policies; a later\n"
	       "                     part changes only the operands it names)\n"
	       "  softmax=F, layernorm=F, gelu=F, elementwise=F (all three)   the outputs of\n"
	       "                     the attention softmax, every LayerNorm and GELU rounded to\n"
	       "                     F (rne) in the forward pass. The backward pass takes the\n"
	       "                     rounding as the identity: softmax's Jacobian from its\n"
	       "                     rounded output (saved, as att), LayerNorm's and GELU's\n"
	       "                     from their fp32 inputs\n"
	       "  flip=weights|activations|grads:P[:any|frac|exp]   CPFloat's soft errors:\n"
	       "                     each element of those GEMM operands (W of fwd and dgrad;\n"
	       "                     X of fwd and wgrad; dY of dgrad and wgrad), after its\n"
	       "                     rounding, gets one bit of its format's encoding flipped\n"
	       "                     with probability P (any bit, the fraction or the exponent\n"
	       "                     field), drawn per step, batch half, Linear and operand\n"
	       "                     from --seed; flip=none removes it. An exponent flip can\n"
	       "                     make a loss spike, or a NaN that stops the run (exit 2)\n");
}

/* What train --help says after the options: progress, failures, Ctrl-C. */
static void train_help_notes(void)
{
	printf("Progress goes to stderr: on a terminal one line rewritten each step, else a\n"
	       "line every --progress-every S seconds (default 5; 0: every step).\n"
	       "A loss that turns inf or NaN stops the run after that step, with exit status\n"
	       "2 naming the policy and the step; the CSV keeps every step up to it, the other\n"
	       "policies' rows of that step too. So do weights that are not finite at the end\n"
	       "of the run or at a save (nothing is saved). Gradients that overflow are not\n"
	       "an error: a loss scaler skips the step (the skipped column). Ctrl-C stops\n"
	       "after the current step and keeps what was written. With --device cuda,\n"
	       "MIXPREC_GPU_SYNC=1 checks every kernel launch (naming a kernel that faults)\n"
	       "and MIXPREC_GPU_PROFILE=1 prints each kernel's time in the last step.\n");
}

static void train_help(void)
{
	train_config d = train_config_default();
	printf("Usage: mixprec train [--policy P,...] [--steps N] [--csv FILE] [options]\n"
	       "Trains the tiny GPT (pre-LayerNorm, character level) on the CPU (or the GPU:\n"
	       "--device cuda) under one or more precision policies side by side, from the\n"
	       "same initial weights and on the same batches, and reports per step what\n"
	       "each policy loses.\n\n"
	       "  --policy P,...     presets (below; default fp32), or 'list': what each keeps\n"
	       "                     in which format; a preset may carry changes after a '+',\n"
	       "                     as names print them: nvfp4+rht=off+2d=off\n"
	       "  --steps N          optimisation steps (default 200)\n"
	       "  --csv FILE         per-step CSV (FILE may be -): step,policy,loss,val_loss,\n"
	       "                     grad_norm,loss_scale,skipped,underflow_frac,\n"
	       "                     lost_update_frac,resid_lost_frac,ms,overflow_frac,\n"
	       "                     grad_noise_ratio,wgrad_noise_ratio (overflow_frac: the\n"
	       "                     share of the fp8-scaled tensors' elements saturated or\n"
	       "                     NaN; grad_noise_ratio: ||G|| / ||Q(G) - G|| of the output\n"
	       "                     gradients cast; wgrad_noise_ratio: ||dW|| / ||dW_q - dW||\n"
	       "                     of the weight gradients, block recipes only; both with\n"
	       "                     --grad-noise only; all empty for other policies and\n"
	       "                     past --bf16-from)\n"
	       "  --grad-noise       measure each step's gradients over their quantization\n"
	       "                     noise (the two ratios above, and a table at the end;\n"
	       "                     below about sqrt(3) quantized training stops helping):\n"
	       "                     a copy per gradient cast and, in block recipes, one\n"
	       "                     more GEMM per cast Linear, so off by default\n"
	       "  --tensor-stats FILE   per step, policy and fp8-scaled tensor (FILE may be -):\n"
	       "                     step,policy,tensor,format,amax,scale,overflow_frac,\n"
	       "                     underflow_frac (tensors as h.2.mlp.c_fc.input)\n"
	       "  --probe nvfp4      at the end, a table per policy of what two NVFP4 parts\n"
	       "                     do to the run's own tensors, through the recipe's casts:\n"
	       "                     w_1d, w_2d: ||Q_fwd(W) - Q_bwd(W)|| / ||W|| over the cast\n"
	       "                     blocks' Linear weights, cut in 1x16 (forward) and 16x1\n"
	       "                     (backward) blocks, or in 16x16 blocks both times; w_err:\n"
	       "                     the 1x16 cast's error; on the last step's output gradients\n"
	       "                     g, sr_bias: ||mean of R SR casts - g|| / ||g||, rne_bias:\n"
	       "                     ||RNE cast - g|| / ||g||, sr_err: one SR cast's error,\n"
	       "                     sr_proj, rne_proj: <mean cast - g, g> / ||g||^2 (all in\n"
	       "                     %%). CPU only; not with --csv - or --tensor-stats -\n"
	       "  --probe-draws R    the SR casts of each gradient (1..%d, default 64)\n"
	       "  --data FILE        training text (default: the bundled corpus); the last tenth\n"
	       "                     is held out\n"
	       "  --lr X             AdamW learning rate (default %g; a schedule's peak)\n"
	       "  --lr-schedule constant|cosine   the lr of each update (default constant):\n"
	       "                     cosine decays from --lr to --lr-min along half a cosine,\n"
	       "                     reaching it at the last step, as pretraining runs do\n"
	       "  --warmup N         the first N updates ramp the lr up linearly: lr*n/N\n"
	       "                     (default 0; at most --steps)\n"
	       "  --lr-min X         cosine's final lr (default 0; at most --lr)\n"
	       "  --beta1 B, --beta2 B   Adam's moment decays (defaults %g, %g)\n"
	       "  --seed N           weights and batches (default %llu)\n"
	       "  --batch B, --context T, --layers L, --heads H, --channels C\n"
	       "                     shape (defaults %zu, %zu, %zu, %zu, %zu); budget's\n"
	       "                     names --micro-batch, --seq, --hidden are aliases\n"
	       "  --preset NAME      a named shape (below); --batch, --context, --layers,\n"
	       "                     --heads, --channels, --eval-every given too win\n"
	       "  --eval-every N     held-out loss every N steps (default %zu; 0 = never)\n"
	       "  --resid-offset V   add V to the residual stream after the embeddings (it\n"
	       "                     must fit in fp32 and in each policy's residual format)\n"
	       "  --resid-offset-channels K   only to the first K channels (an outlier channel;\n"
	       "                     K at most --channels)\n"
	       "  --threads N        1 or 2: the two halves of each batch one after the other\n"
	       "                     or in parallel (default 2; same results either way)\n"
	       "  --device cpu|cuda  where to train (default cpu). cuda: the whole batch in one\n"
	       "                     pass on the GPU, cuBLAS products on the tensor cores in the\n"
	       "                     policy's GEMM format; exits 3, naming why, without a GPU\n"
	       "%s%s"
	       "Change parts of every listed policy:\n"
	       "  --gemm F  --residual F[:rne|sr]  --weights fp32|F[:rne|sr|kahan]  --grads F\n"
	       "  --grad-accum F  --optim-state F[:rne|sr]\n"
	       "  --loss-scale none|dynamic[:S]|static:S   (dynamic:S starts at S)\n"
	       "                     (--optim-state bf16:sr rounds Adam's m and v with sr)\n"
	       "  --reductions fp32|low|F   softmax, LayerNorm and cross-entropy sums in fp32\n"
	       "                     (default) or, to show the pitfall, in F (low: the GEMM\n"
	       "                     format)\n"
	       "  --accum-bits N     the GEMM's partial sums keep N bits (2..24; 24: IEEE fp32),\n"
	       "                     truncated in blocks of 32 as Hopper's fp8 tensor cores do\n"
	       "                     (see mixprec accum); CPU only, a low-precision GEMM only,\n"
	       "                     and slow: a C loop per dot instead of BLAS\n"
	       "  --promote-every K  add the partial sum into fp32 every K products (0: never)\n"
	       "  --fp8-scaling none|delayed|current   the Linear layers' operands cast to fp8\n"
	       "                     with one fp32 scale per tensor (Transformer Engine's\n"
	       "                     DelayedScaling / Float8CurrentScaling; CPU only)\n"
	       "  --fp8-format hybrid|e4m3   E4M3 forward and E5M2 gradients, or E4M3 for all\n"
	       "  --amax-history H   delayed: amax over the last H steps (1..1024; presets 16)\n"
	       "  --amax-algo max|most_recent   delayed: the history's max or newest amax\n"
	       "  --fp8-margin M     delayed: scale = fp8_max / amax / 2^M (default 0)\n"
	       "  --fp8-scaling block|mx|nvfp4   scales per block instead (fp8-block, mxfp8,\n"
	       "                     nvfp4; the recipe's formats and parts come with it)\n"
	       "  --scale-pow2 on|off   fp8-block: scales rounded down to powers of two (on)\n"
	       "  --scale-rule R     mxfp8: the e8m0 scale's rule: ceil (TE, the default), ocp\n"
	       "                     (or floor), even, rceil, torchao-ceil (quantize --help);\n"
	       "                     its block: the policy part block=N (default 32), as in\n"
	       "                     mxfp8+block=16\n"
	       "  --no-rht, --no-sr, --no-2d   nvfp4 without the Hadamard transform on the\n"
	       "                     weight-gradient GEMM, SR gradients, 16x16 weight blocks\n"
	       "  --bf16-last N      the last N blocks' Linears left in the GEMM format (bf16\n"
	       "                     in the presets; nvfp4: 1)\n"
	       "  --bf16-from N      from step N on (steps N, N+1, ... and the evaluations\n"
	       "                     after N steps) no Linear is cast: the recipe becomes\n"
	       "                     bf16-mixed for the last steps (policy part bf16-from=N)\n\n",
	       NVFP4_PROBE_DRAWS_MAX, d.lr, d.beta1, d.beta2, (unsigned long long)d.seed, d.B, d.t, d.model.L, d.model.NH,
	       d.model.C, d.eval_every, train_ckpt_help, train_resume_help);
	train_help_notes();
	train_parts_help();
	printf("\nShapes (--preset NAME; tiny is the TUI labs' z):\n");
	for (size_t i = 0; i < TRAIN_SHAPE_COUNT; i++)
		printf("  %-18s%s\n", train_shape_get((train_shape_id)i)->name, train_shape_get((train_shape_id)i)->about);
	printf("\nPresets:\n");
	for (size_t i = 0; i < policy_preset_count(); i++)
		printf("  %-18s%s\n", policy_preset(i)->name, policy_preset_about(i));
}

/* MIXPREC_GPU_PROFILE=1 with --device cuda: each kernel's time in the last
 * step (every policy), largest first, on stderr. */
static void print_gpu_profile(void)
{
	gpu_profile_row rows[64];
	size_t n = gpu_profile_rows(rows, 64);
	if (n == 0)
		return;
	double total = 0;
	for (size_t i = 0; i < n; i++)
		total += rows[i].ms;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && rows[j].ms > rows[j - 1].ms; j--) {
			gpu_profile_row t = rows[j];
			rows[j] = rows[j - 1];
			rows[j - 1] = t;
		}
	fprintf(stderr, "GPU profile of the last step (CUDA events around each launch; MIXPREC_GPU_PROFILE):\n"
	                "%-28s %10s %9s %7s\n", "kernel", "ms", "launches", "share");
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%-28s %10.3f %9llu %6.1f%%\n", rows[i].name, rows[i].ms, rows[i].launches,
		        total > 0 ? 100.0 * rows[i].ms / total : 0.0);
	fprintf(stderr, "%-28s %10.3f\n", "total", total);
}

/* text from column indent, broken at spaces before column width. */
static void print_wrapped(const char *text, int indent, int width)
{
	int col = indent;
	printf("%*s", indent, "");
	while (*text) {
		size_t len = strcspn(text, " ");
		if (col > indent && col + 1 + (int)len > width) {
			printf("\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			putchar(' ');
			col++;
		}
		printf("%.*s", (int)len, text);
		col += (int)len;
		text += len;
		text += strspn(text, " ");
	}
	putchar('\n');
}

/* train --policy list: each preset, what it is and what it keeps in which
 * format (policy_describe). */
static int list_presets(void)
{
	for (size_t i = 0; i < policy_preset_count(); i++) {
		char parts[512];
		policy_describe(policy_preset(i), parts, sizeof parts);
		printf("%-17s %s\n", policy_preset(i)->name, policy_preset_about(i));
		print_wrapped(parts, 18, 80);
	}
	return cli_flush_stdout("train") ? CLI_OK : CLI_ENV;
}

static const char *status_text(mp_status st)
{
	return mp_status_message(st);
}

/* For policies with Adam's v in a narrow format: how far v as stored is
 * from the same EMA in fp32 (a v that stopped moving, see drift --ema). */
static void print_v_ratios(const train_policy *pols, size_t np, trainer *const *tr, int pw)
{
	bool any = false;
	for (size_t i = 0; i < np; i++)
		any |= pols[i].optim_fmt != FMT_FP32;
	if (!any)
		return;
	printf("\nAdam's v as stored over the same EMA kept in fp32 (mean over the parameters, last\n"
	       "update; 1: v is where it should be):\n");
	printf("%-*s %9s\n", pw, "policy", "v_ratio");
	for (size_t i = 0; i < np; i++) {
		if (pols[i].optim_fmt == FMT_FP32)
			continue;
		double r = trainer_v_ratio(tr[i]);
		char buf[32] = "-";   /* no update yet, or on the GPU */
		if (!isnan(r))
			snprintf(buf, sizeof buf, "%.4f", r);
		printf("%-*s %9s\n", pw, pols[i].name, buf);
	}
}

/* The table after a run: per policy the last loss, the last held-out loss,
 * time per step and the last statistics, then the memory of each. */
/* What a run adds up over its steps, per policy. */
typedef struct {
	double ms[16];
	size_t skipped[16];
	double over[16], under[16];   /* the fp8 / fp4 casts' overflow and underflow shares, summed */
	size_t cast_steps[16];        /* ... over this many steps (those before --bf16-from) */
	noise_log noise;              /* each step's gradient over its quantization noise */
} run_totals;

static void run_totals_add(run_totals *r, size_t i, const train_stats *s)
{
	r->ms[i] += s->ms;
	r->skipped[i] += s->skipped;
	if (!isnan(s->overflow_frac)) {   /* NaN: the step cast nothing */
		r->over[i] += s->overflow_frac;
		r->under[i] += s->cast_underflow_frac;
		r->cast_steps[i]++;
	}
	noise_log_add(&r->noise, i, s);
}

/* The casts' table, when a policy has fp8 scaling: the mean shares over
 * the run's steps that cast. */
static void print_casts(const train_policy *pols, size_t np, const run_totals *r, int pw)
{
	size_t scaled = 0;
	for (size_t i = 0; i < np; i++)
		scaled += pols[i].cast != CAST_SCALING_NONE;
	if (scaled == 0)
		return;
	printf("\nfp8 and fp4 casts of the Linear layers' operands (mean share of the elements cast,\n"
	       "over the steps): cast_over saturated or NaN, cast_under nonzero made 0\n");
	printf("%-*s %10s %10s\n", pw, "policy", "cast_over", "cast_under");
	for (size_t i = 0; i < np; i++) {
		if (pols[i].cast == CAST_SCALING_NONE)
			continue;
		double n = (double)r->cast_steps[i];
		if (n == 0)   /* bf16 from the first step on */
			printf("%-*s %10s %10s\n", pw, pols[i].name, "-", "-");
		else
			printf("%-*s %10.3g %10.3g\n", pw, pols[i].name, r->over[i] / n, r->under[i] / n);
	}
}

static void print_summary(const train_opts *su, const train_policy *pols, size_t np, trainer *const *tr,
                          const train_stats *last, const double *last_val, const run_totals *tot, size_t done)
{
	const double *ms = tot->ms;
	const size_t *skipped = tot->skipped;
	gpu_info gi = { .name = "" };
	if (su->cfg.device == TRAIN_DEVICE_CUDA)
		gpu_ready(&gi, NULL, 0);
	printf("train: %zu steps%s%s, batch %zu x %zu, %zu layers, %zu heads, %zu channels, %zu parameters\n\n",
	       done, gi.name[0] ? " on " : "", gi.name, su->cfg.B, su->cfg.t, su->cfg.model.L, su->cfg.model.NH,
	       su->cfg.model.C, trainer_model(tr[0])->num_params);
	/* the policy column as wide as its longest name ("+gemm=fp16" and the like make long ones) */
	int pw = 18;
	for (size_t i = 0; i < np; i++)
		pw = strlen(pols[i].name) > (size_t)pw ? (int)strlen(pols[i].name) : pw;
	printf("%-*s %9s %9s %9s %8s %9s %9s %9s\n", pw, "policy", "loss", "val_loss", "ms/step", "skipped",
	       "underflow", "lost_upd", "resid_lost");
	for (size_t i = 0; i < np; i++) {
		char val[32] = "-", loss[32];   /* val: no evaluation yet (see --eval-every) */
		if (!isnan(last_val[i]))
			snprintf(val, sizeof val, "%.4f", last_val[i]);
		/* a diverging loss in 4 significant digits, so the columns stay aligned */
		snprintf(loss, sizeof loss, fabs(last[i].loss) < 1e5 ? "%.4f" : "%.4g", (double)last[i].loss);
		printf("%-*s %9s %9s %9.1f %8zu %9.3g %9.3g %9.3g\n", pw, pols[i].name, loss, val,
		       ms[i] / (double)done, skipped[i], last[i].underflow_frac, last[i].lost_update_frac,
		       last[i].resid_lost_frac);
	}
	print_casts(pols, np, tot, pw);
	if (su->cfg.grad_noise)
		noise_log_print(&tot->noise, pols, np, pw);
	printf("\nmemory per policy (MB = 10^6 bytes; weights, gradients and Adam state at the width of\n"
	       "their formats; activations as allocated here):\n");
	printf("%-*s %8s %8s %8s %8s %8s %8s\n", pw, "policy", "master", "working", "grads", "accum", "adam", "acts");
	for (size_t i = 0; i < np; i++) {
		train_memory m = trainer_memory(tr[i]);
		printf("%-*s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f\n", pw, pols[i].name, m.master_weights / 1e6,
		       m.working_weights / 1e6, m.gradients / 1e6, m.grad_accum / 1e6, m.optim_state / 1e6,
		       m.activations / 1e6);
	}
	print_v_ratios(pols, np, tr, pw);
}

/* train --probe nvfp4's table: a row per policy (nvfp4_probe.h says what
 * each column measures), every ratio in per cent. CLI_ENV (reported) when
 * the probe runs out of memory. */
static int print_probe(const train_opts *su, const train_policy *pols, size_t np, trainer *const *tr, size_t draws)
{
	int pw = 18;
	for (size_t i = 0; i < np; i++)
		pw = strlen(pols[i].name) > (size_t)pw ? (int)strlen(pols[i].name) : pw;
	printf("\nnvfp4 parts, on the final weights and the last step's gradients (R = %zu SR draws),\n"
	       "in %% of ||W|| or ||g||: w_1d, w_2d ||Q_fwd(W) - Q_bwd(W)|| with 1D or 16x16 blocks,\n"
	       "w_err ||Q_fwd(W) - W|| (1D); sr_bias ||mean of the R SR casts - g||, rne_bias\n"
	       "||Q_rne(g) - g||, sr_err one SR cast's error; sr_proj, rne_proj\n"
	       "<mean Q(g) - g, g> / ||g||^2. linears: the Linear layers measured (the blocks cast)\n",
	       draws);
	printf("%-*s %7s %8s %8s %8s %8s %8s %8s %8s %8s\n", pw, "policy", "linears", "w_1d", "w_2d", "w_err",
	       "sr_bias", "rne_bias", "sr_err", "sr_proj", "rne_proj");
	/* the draws keyed from --seed, apart from every other stream it seeds */
	uint64_t seed = rng_mix64(su->cfg.seed ^ 0x70be5eedull);
	for (size_t i = 0; i < np; i++) {
		nvfp4_probe_result r;
		mp_status st = trainer_probe_nvfp4(tr[i], draws, seed, &r);
		if (st != MP_OK) {
			cli_error("train", "--probe nvfp4: policy %s: %s", pols[i].name, status_text(st));
			return CLI_ENV;
		}
		const double v[8] = { r.w_1d, r.w_2d, r.w_err, r.sr_bias, r.rne_bias, r.sr_err, r.sr_proj, r.rne_proj };
		printf("%-*s %7zu", pw, pols[i].name, r.weights);
		for (int k = 0; k < 8; k++) {
			char cell[32] = "-";   /* no Linear measured (every block left out) */
			if (r.weights > 0)
				snprintf(cell, sizeof cell, "%.3g%%", 100 * v[k]);
			printf(" %8s", cell);
		}
		putchar('\n');
	}
	return CLI_OK;
}

/* One progress line for step `done` of the run started at t0 at step
 * `first` (a resumed run's): rewritten in place on a terminal, a whole line
 * elsewhere. */
static void print_progress(const run_meter *pm, const train_opts *su, const train_policy *pol,
                           const train_stats *s, size_t done, size_t first, double t0)
{
	double el = meter_now() - t0, left = el / (double)(done - first) * (double)(su->steps - done);
	if (pm->tty)
		fprintf(stderr, "\rtrain: step %zu/%zu, loss %.4f (%s), %.0f s left   ", done, su->steps, s->loss,
		        pol->name, left);
	else
		fprintf(stderr, "train: step %zu/%zu, loss %.4f (%s), %.0f s elapsed, %.0f s left\n", done, su->steps,
		        s->loss, pol->name, el, left);
}

/* Parses train's arguments into *su and the checkpoint options; returns
 * -1 to go on, else the exit status (after --help, or for a bad option). */
static int train_parse(int argc, char **argv, train_opts *su, train_ckpt *ck, train_resume *rz)
{
	char err[1024];
	if (train_opts_parse(argc, argv, su, err, sizeof err) != MP_OK) {
		cli_error("train", "%s", err);
		return CLI_USAGE;
	}
	if (su->help) {
		train_help();
		return cli_flush_stdout("train") ? CLI_OK : CLI_ENV;
	}
	int rc = su->resume ? train_resume_options(su) : CLI_OK;
	if (rc != CLI_OK)
		return rc;
	rc = train_opts_device_ready("train", su);
	if (rc != CLI_OK)
		return rc;
	ck->save = su->save;
	ck->save_every = su->save_every;
	ck->init = su->init;
	rz->file = su->resume;
	rz->stop_at = su->stop_at;
	return train_opts_shape_ok("train", su) ? -1 : CLI_USAGE;
}

/* A trainer per policy, set to the saved run's state with --resume;
 * CLI_OK or the exit status after reporting (tr holds what was made). */
static int create_trainers(const train_opts *su, const train_policy *pols, size_t np, const corpus *data,
                           trainer **tr, train_resume *rz)
{
	for (size_t i = 0; i < np; i++) {
		char err[512];
		mp_status st = trainer_create(&tr[i], &su->cfg, &pols[i], data, err, sizeof err);
		if (st != MP_OK && su->cfg.device == TRAIN_DEVICE_CUDA && st != MP_EINVAL) {
			cli_error("train", "--device cuda: cannot set up policy %s: %s", pols[i].name, err);
			return CLI_ENV;
		} else if (st != MP_OK) {
			cli_error("train", "cannot set up policy %s: %s", pols[i].name, err);
			return st == MP_ENOMEM ? CLI_ENV : CLI_USAGE;
		}
	}
	return rz->file ? train_resume_apply(rz, tr, pols) : CLI_OK;
}

/* An output CSV: --csv or --tensor-stats. */
typedef struct {
	const char *opt, *path;   /* path NULL: not asked for */
	file_atomic out;
	FILE *fp;
	csvw w;
} csv_out;

/* Opens o (FILE, written to a temporary and renamed at the end, or - for
 * stdout) and writes its header; CLI_ENV when it cannot be opened. */
static int open_csv(csv_out *o, void (*header)(csvw *))
{
	if (!o->path)
		return CLI_OK;
	if (!cli_out_open("train", o->opt, o->path, &o->out, &o->fp))
		return CLI_ENV;
	csvw_init(&o->w, o->fp);
	header(&o->w);
	return CLI_OK;
}

/* Step s of policy p into the two CSVs that are open; CLI_ENV (reported)
 * when a write fails. */
static int write_step(csv_out *csv, csv_out *stats, const trainer *t, const train_policy *p, const train_stats *s)
{
	if (csv->fp)
		train_csv_row(&csv->w, p->name, s);
	if (stats->fp && policy_casts_at(p, s->step))   /* a step past --bf16-from cast nothing */
		tensor_stats_rows(&stats->w, s->step, p->name, trainer_fp8(t));
	csv_out *o[2] = { csv, stats };
	for (int i = 0; i < 2; i++)
		if (o[i]->fp && (fflush(o[i]->fp) != 0 || ferror(o[i]->fp))) {
			cli_error("train", "%s: writing '%s' failed: %s", o[i]->opt, o[i]->path, strerror(errno ? errno : EIO));
			return CLI_ENV;
		}
	return CLI_OK;
}

int cmd_train(int argc, char **argv)
{
	train_opts su;
	csv_out csv = { .opt = "--csv" }, stats = { .opt = "--tensor-stats" };
	train_ckpt ck = { 0 };
	train_resume rz = { 0 };
	int rc = train_parse(argc, argv, &su, &ck, &rz);
	if (rc >= 0)
		return rc;
	csv.path = su.csv;
	stats.path = su.tensor_stats;
	if (!strcmp(su.policies, "list"))
		return list_presets();
	train_policy pols[16];
	size_t np;
	if (!train_opts_policies("train", &su, pols, 16, &np))
		return CLI_USAGE;
	int lrc = train_ckpt_prepare(&ck, &su, pols, np);
	if (lrc == CLI_OK)
		lrc = train_resume_prepare(&rz, &su, &ck, pols, np);
	corpus data = { 0 };
	if (lrc == CLI_OK)
		lrc = train_opts_load_data("train", &su, &data);
	if (lrc != CLI_OK) {
		train_ckpt_free(&ck);
		train_resume_free(&rz);
		return lrc;
	}
	/* the trainer parallelises over batch halves; BLAS stays single-threaded */
	openblas_set_num_threads(1);

	trainer *tr[16] = { 0 };
	rc = create_trainers(&su, pols, np, &data, tr, &rz);
	if (rc == CLI_OK)
		rc = open_csv(&csv, train_csv_header);
	if (rc == CLI_OK)
		rc = open_csv(&stats, tensor_stats_header);
	struct sigaction sa = { .sa_handler = on_sigint }, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	run_meter pm;
	double t0 = meter_now();
	meter_init(&pm, isatty(STDERR_FILENO), su.progress_every, t0);
	train_stats last[16];
	double last_val[16];
	run_totals tot = { .ms = { 0 } };
	for (size_t i = 0; i < 16; i++)
		last_val[i] = NAN;
	size_t done = rz.start;   /* steps of the run so far, a saved run's too */
	for (size_t step = rz.start; rc == CLI_OK && step < rz.end && !interrupted; step++) {
		if (gpu_profile_enabled())
			gpu_profile_reset();   /* the profile printed at the end is the last step's */
		bool diverged = false;   /* a policy's loss turned inf or NaN: the others finish the step, then it stops */
		for (size_t i = 0; i < np && rc == CLI_OK; i++) {
			mp_status st = trainer_step(tr[i], &last[i]);
			if (st != MP_OK) {
				cli_error("train", "policy %s, step %zu: %s", pols[i].name, step, trainer_error(tr[i]));
				rc = CLI_ENV;
				break;
			}
			run_totals_add(&tot, i, &last[i]);
			if (!isnan(last[i].val_loss))
				last_val[i] = last[i].val_loss;
			if ((rc = write_step(&csv, &stats, tr[i], &pols[i], &last[i])) != CLI_OK)
				break;
			if (!isfinite(last[i].loss)) {
				cli_error("train", "policy %s, step %zu: the loss is %s; the run diverged and stops after this step "
				          "(a smaller --lr or --resid-offset may help)", pols[i].name, step,
				          isnan(last[i].loss) ? "NaN" : last[i].loss > 0 ? "inf" : "-inf");
				diverged = true;
			}
		}
		if (rc == CLI_OK && diverged)
			rc = CLI_USAGE;
		done = step + 1;
		if (rc == CLI_OK)
			rc = train_ckpt_step(&ck, &su, tr, pols, done, false);
		if (rc == CLI_OK && meter_due(&pm, meter_now()))
			print_progress(&pm, &su, &pols[0], &last[0], done, rz.start, t0);
	}
	if (pm.tty)
		fprintf(stderr, "\r%70s\r", "");
	sigaction(SIGINT, &old, NULL);
	if (interrupted)
		cli_error("train", "interrupted after %zu steps; the CSV has every finished step", done);
	/* the last update's weights, which no loss has seen yet */
	if (rc == CLI_OK && done > rz.start)
		rc = train_ckpt_check_weights(tr, pols, np, done);
	if (rc == CLI_OK)
		rc = train_ckpt_step(&ck, &su, tr, pols, done, true);
	if (rc == CLI_OK && done > rz.start && csv.fp != stdout && stats.fp != stdout) {
		print_summary(&su, pols, np, tr, last, last_val, &tot, done - rz.start);
		if (su.probe_nvfp4)
			rc = print_probe(&su, pols, np, tr, su.probe_draws);
	}
	if (done > 0 && su.cfg.device == TRAIN_DEVICE_CUDA)
		print_gpu_profile();
	/* a diverged run (CLI_USAGE) keeps its CSV up to the step that diverged */
	bool keep = rc == CLI_OK || rc == CLI_USAGE;
	noise_log_free(&tot.noise);
	if (!cli_out_close("train", "--csv", &csv.out, csv.fp, keep))
		rc = CLI_ENV;
	if (!cli_out_close("train", "--tensor-stats", &stats.out, stats.fp, keep))
		rc = CLI_ENV;
	for (size_t i = 0; i < np; i++)
		trainer_free(tr[i]);
	corpus_free(&data);
	train_ckpt_free(&ck);
	train_resume_free(&rz);
	if (!cli_flush_stdout("train"))
		return CLI_ENV;
	return rc == CLI_OK && interrupted ? 130 : rc;
}
