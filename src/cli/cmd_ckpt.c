/* mixprec eval and mixprec sample: a saved model's held-out loss and the
 * text it writes (ckpt/infer.h computes, this file parses and prints). */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/gpt2.h"
#include "ckpt/infer.h"
#include "cli/cli.h"
#include "train/data.h"
#include "train/run_state.h"
#include "util/file.h"

void openblas_set_num_threads(int num_threads);

/* Opens the checkpoint and makes a model of it for batches of B windows of
 * t tokens (0: its context). Returns CLI_OK or the exit status after
 * reporting. */
static int load_model(const char *cmd, const char *path, size_t B, gpt_model *m)
{
	char err[4200];
	ckpt_model ck;
	mp_status st = ckpt_open(&ck, path, err, sizeof err);
	if (st != MP_OK) {
		cli_error(cmd, "%s", st == MP_ENOMEM ? "out of memory" : err);
		return st == MP_EINVAL ? CLI_USAGE : CLI_ENV;
	}
	float *w = malloc(ck.num_params * sizeof *w);
	st = w ? ckpt_weights(&ck, w) : MP_ENOMEM;
	/* a weight that is inf or NaN gives no loss and no text worth printing */
	if (st == MP_OK)
		st = gpt_param_nonfinite_text(ck.config, w, err, sizeof err);
	if (st == MP_OK && err[0]) {
		cli_error(cmd, "%s: the weights are not finite: %s (a run that diverged saved them)", path, err);
		ckpt_close(&ck);
		free(w);
		return CLI_USAGE;
	}
	if (st == MP_OK)
		st = infer_init(m, ck.config, w, B, ck.config.T);
	ckpt_close(&ck);
	free(w);
	if (st != MP_OK) {
		cli_error(cmd, "%s: %s", path, st == MP_ENOMEM ? "out of memory" : "the model's shape cannot be run");
		return st == MP_ENOMEM ? CLI_ENV : CLI_USAGE;
	}
	openblas_set_num_threads(1);
	return CLI_OK;
}

/* --- eval --- */

static void eval_help(void)
{
	printf("Usage: mixprec eval FILE [--data TEXT] [--csv]\n"
	       "The mean cross-entropy, in nats per character, of a model saved by\n"
	       "'mixprec train --save FILE', computed in fp32.\n\n"
	       "  --data TEXT   the text to predict (a file; default: the bundled corpus's\n"
	       "                held-out tenth, its last n/10 bytes); bytes >= 128 read as '?'\n"
	       "  --csv         print tokens,loss instead of 'loss N'\n\n"
	       "The text is split into consecutive windows of the model's context T from\n"
	       "its start; each window predicts its next T characters; a last partial\n"
	       "window is dropped. A weight that is inf or NaN (named with its element), or\n"
	       "a loss that is not finite, exits 2 with nothing printed.\n");
}

/* The text to evaluate: TEXT whole, or the default corpus's last n/10
 * bytes; non-ASCII bytes become '?' as in training. */
static int load_text(const char *path, unsigned char **text, size_t *n)
{
	char err[4200];
	char *buf;
	size_t len;
	char corpus_path[4096];
	const char *p = path ? path : corpus_default_path(corpus_path, sizeof corpus_path);
	mp_status st = file_read_all(p, CORPUS_MAX_BYTES, &buf, &len, err, sizeof err);
	if (st != MP_OK) {
		char hint[8400];
		cli_error("eval", "--data: %s", err);
		if (st == MP_EIO && !path)
			cli_error("eval", "%s", file_data_hint(hint, sizeof hint, "MIXPREC_DATADIR", p));
		return st == MP_EINVAL ? CLI_USAGE : CLI_ENV;
	}
	size_t from = path ? 0 : len - len / 10;
	memmove(buf, buf + from, len - from);
	*n = len - from;
	*text = (unsigned char *)buf;
	for (size_t i = 0; i < *n; i++)
		if ((*text)[i] >= 128)
			(*text)[i] = '?';
	return CLI_OK;
}

int cmd_eval(int argc, char **argv)
{
	static const struct option opts[] = { { "data", required_argument, NULL, 'd' },
		                              { "csv", no_argument, NULL, 'c' },
		                              { "help", no_argument, NULL, 'h' }, { 0 } };
	const char *file = NULL, *data = NULL;
	bool csv = false;
	cli_args args = { 0 };
	char *value;
	int c;
	while ((c = cli_getopt(&args, argc, argv, opts, &value)) != -1) {
		if (c == 'h') {
			eval_help();
			return cli_flush_stdout("eval") ? CLI_OK : CLI_ENV;
		} else if (c == 'd') {
			data = optarg;
		} else if (c == 'c') {
			csv = true;
		} else if (c == CLI_ARG_VALUE && !file) {
			file = value;
		} else if (c == CLI_ARG_VALUE) {
			cli_error("eval", "unexpected argument '%s' (one FILE; see 'mixprec eval --help')", value);
			return CLI_USAGE;
		} else {
			return cli_option_error("eval", c, argv, opts);
		}
	}
	if (!file) {
		cli_error("eval", "no FILE given (see 'mixprec eval --help')");
		return CLI_USAGE;
	}
	gpt_model m;
	int rc = load_model("eval", file, INFER_BATCH, &m);
	if (rc != CLI_OK)
		return rc;
	unsigned char *text = NULL;
	size_t n = 0, tokens;
	double loss;
	rc = load_text(data, &text, &n);
	for (size_t i = 0; rc == CLI_OK && i < n; i++)
		if (text[i] >= m.config.V) {
			cli_error("eval", "--data: byte %zu (0x%02x) is outside the model's vocabulary of %zu (bytes count "
			          "from 1, as in sample's --prompt)", i + 1, text[i], m.config.V);
			rc = CLI_USAGE;
		}
	if (rc == CLI_OK) {
		mp_status st = infer_eval_text(&m, text, n, &loss, &tokens);
		if (st == MP_EINVAL) {
			cli_error("eval", "--data: %zu characters, fewer than one window of the model's context %zu plus 1",
			          n, m.t);
			rc = CLI_USAGE;
		} else if (st != MP_OK) {
			cli_error("eval", "%s", mp_status_message(st));
			rc = CLI_ENV;
		} else if (!isfinite(loss)) {
			/* finite weights whose fp32 forward pass overflows */
			cli_error("eval", "%s: the loss is %s: the model's fp32 forward pass overflows on this text", file,
			          isnan(loss) ? "NaN" : "inf");
			rc = CLI_USAGE;
		}
	}
	if (rc == CLI_OK && csv)
		printf("tokens,loss\n%zu,%.6f\n", tokens, loss);
	else if (rc == CLI_OK)
		printf("loss %.6f\n", loss);
	free(text);
	gpt_free(&m);
	if (!cli_flush_stdout("eval"))
		return CLI_ENV;
	return rc;
}

/* --- sample --- */

static void sample_help(void)
{
	printf("Usage: mixprec sample FILE --prompt TEXT --tokens N [--temperature X]\n"
	       "                      [--top-k K] [--seed S]\n"
	       "Prints the prompt and N characters a model saved by 'mixprec train --save'\n"
	       "writes after it, the same for the same seed.\n\n"
	       "  --prompt TEXT      where the text starts (characters of the model's\n"
	       "                     vocabulary; only the last T, its context, are seen)\n"
	       "  --tokens N         characters to generate (1 to 1000000)\n"
	       "  --temperature X    the logits are divided by X before sampling (default 1;\n"
	       "                     0: always the most likely character)\n"
	       "  --top-k K          draw among the K most likely characters (default 0: all)\n"
	       "  --seed S           the random draws (default 1)\n\n"
	       "Generated control characters other than newline and tab print as '?'.\n");
}

typedef struct {
	const char *file, *prompt;
	infer_sample_opts o;
	bool have_tokens;
} sample_args;

/* Parses sample's arguments; -1 to go on, else the exit status. */
static int sample_parse(int argc, char **argv, sample_args *a)
{
	static const struct option opts[] = {
		{ "prompt", required_argument, NULL, 'p' }, { "tokens", required_argument, NULL, 'n' },
		{ "temperature", required_argument, NULL, 't' }, { "top-k", required_argument, NULL, 'k' },
		{ "seed", required_argument, NULL, 's' }, { "help", no_argument, NULL, 'h' }, { 0 }
	};
	cli_args args = { 0 };
	char *value;
	int c;
	unsigned long long v;
	while ((c = cli_getopt(&args, argc, argv, opts, &value)) != -1) {
		if (c == 'h') {
			sample_help();
			return cli_flush_stdout("sample") ? CLI_OK : CLI_ENV;
		} else if (c == 'p') {
			a->prompt = optarg;
		} else if (c == 'n') {
			if (!cli_parse_u64("sample", "--tokens", optarg, &v))
				return CLI_USAGE;
			if (v < 1 || v > 1000000) {
				cli_error("sample", "--tokens: must be 1 to 1000000 (got %s)", optarg);
				return CLI_USAGE;
			}
			a->o.tokens = (size_t)v;
			a->have_tokens = true;
		} else if (c == 't') {
			if (!cli_parse_real("sample", "--temperature", optarg, 0, false, 1e6, &a->o.temperature))
				return CLI_USAGE;
		} else if (c == 'k') {
			if (!cli_parse_u64("sample", "--top-k", optarg, &v))
				return CLI_USAGE;
			a->o.top_k = v > SIZE_MAX ? SIZE_MAX : (size_t)v;
		} else if (c == 's') {
			if (!cli_parse_u64("sample", "--seed", optarg, &v))
				return CLI_USAGE;
			a->o.seed = v;
		} else if (c == CLI_ARG_VALUE && !a->file) {
			a->file = value;
		} else if (c == CLI_ARG_VALUE) {
			cli_error("sample", "unexpected argument '%s' (one FILE; see 'mixprec sample --help')", value);
			return CLI_USAGE;
		} else {
			return cli_option_error("sample", c, argv, opts);
		}
	}
	const char *missing = !a->file ? "FILE" : !a->prompt ? "--prompt TEXT" : !a->have_tokens ? "--tokens N" : NULL;
	if (missing) {
		cli_error("sample", "%s is required (see 'mixprec sample --help')", missing);
		return CLI_USAGE;
	}
	if (!a->prompt[0]) {
		cli_error("sample", "--prompt: empty; give at least one character");
		return CLI_USAGE;
	}
	return -1;
}

int cmd_sample(int argc, char **argv)
{
	sample_args a = { .o = { .temperature = 1.0, .seed = 1 } };
	int rc = sample_parse(argc, argv, &a);
	if (rc >= 0)
		return rc;
	gpt_model m;
	rc = load_model("sample", a.file, 1, &m);
	if (rc != CLI_OK)
		return rc;
	size_t np = strlen(a.prompt);
	for (size_t i = 0; i < np; i++)
		if ((unsigned char)a.prompt[i] >= m.config.V) {
			cli_error("sample", "--prompt: byte %zu (0x%02x) is outside the model's vocabulary "
			          "(bytes below %zu: the ASCII it was trained on)", i + 1, (unsigned char)a.prompt[i],
			          m.config.V);
			gpt_free(&m);
			return CLI_USAGE;
		}
	int *prompt = malloc(np * sizeof *prompt), *out = malloc(a.o.tokens * sizeof *out);
	mp_status st = prompt && out ? MP_OK : MP_ENOMEM;
	for (size_t i = 0; st == MP_OK && i < np; i++)
		prompt[i] = (unsigned char)a.prompt[i];
	if (st == MP_OK)
		st = infer_sample(&m, prompt, np, &a.o, out);
	if (st == MP_OK) {
		fputs(a.prompt, stdout);
		for (size_t i = 0; i < a.o.tokens; i++) {
			int ch = out[i];
			putchar(ch == '\n' || ch == '\t' || (ch >= 32 && ch < 127) ? ch : '?');
		}
		putchar('\n');
	} else {
		cli_error("sample", "%s", mp_status_message(st));
		rc = CLI_ENV;
	}
	free(prompt);
	free(out);
	gpt_free(&m);
	if (!cli_flush_stdout("sample"))
		return CLI_ENV;
	return rc == -1 || rc == CLI_OK ? CLI_OK : rc;
}
