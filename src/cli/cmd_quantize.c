/* mixprec quantize: block-scaled quantization (quant/) of typed values. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/quantize_random.h"
#include "ckpt/ckpt_row.h"
#include "fmt/decode.h"
#include "fmt/parse.h"
#include "quant/quant.h"
#include "quant/quant_opts.h"
#include "util/csvout.h"
#include "util/grow.h"
#include "util/numtext.h"

static void quantize_help(void)
{
	char known[512];
	cli_wrap_list(known, sizeof known, quant_known_names(), 16, 78);
	printf("Usage: mixprec quantize [VALUE...] --to BLOCKFMT [--block N]\n"
	       "                        [--scale-rule R] [--mode M] [--seed N]\n"
	       "                        [--rht] [--csv]\n"
	       "       mixprec quantize --to BLOCKFMT --from-model FILE --tensor NAME [--row I]\n"
	       "                        [--block N] [--scale-rule R] [--mode M]\n"
	       "                        [--seed N] [--rht] [--csv]\n"
	       "       mixprec quantize --to BLOCKFMT[,BLOCKFMT...] --random N [--block N]\n"
	       "                        [--scale-rule R] [--dist gauss|uniform|laplace]\n"
	       "                        [--outliers K:V] [--outliers-in blocks|tensor]\n"
	       "                        [--rht | --compare-rht] [--mode M] [--draws R]\n"
	       "                        [--seed S]\n"
	       "Quantizes the VALUEs, or the lines of standard input when no VALUE is given,\n"
	       "in consecutive blocks (the last may be shorter) that share one scale, and\n"
	       "shows each block's scale and each element's bits, value and error, then the\n"
	       "shares saturated and flushed to zero and the relative error ||value - V|| /\n"
	       "||V|| (2-norms) of each block and of all the values.\n\n"
	       "  --to F        block format:\n%s"
	       "                mx*: e8m0 scale per 32 (mxint8: int8 elements standing for\n"
	       "                code x 2^-6, max 127/64, emax_elem 0, saturating at +-127);\n"
	       "                nvfp4: fp4-e2m1 elements, an fp8-e4m3 scale per 16 and an\n"
	       "                fp32 tensor scale\n"
	       "  --block N     elements per block, 1..%d (default 32 for MX, 16 for nvfp4)\n"
	       "  --scale-rule R  MX only, X = 2^k, L = floor(log2 amax):\n"
	       "                ocp or floor (default; OCP MX v1.0, torchao FLOOR): k = L -\n"
	       "                emax_elem; can saturate the largest element\n"
	       "                ceil (NVIDIA Transformer Engine): k = ceil(log2(amax /\n"
	       "                max_elem)); never saturates\n"
	       "                even (torchao EVEN): amax rounded to the element's fraction\n"
	       "                bits first: k = L - emax_elem, + 1 when amax >= (2 -\n"
	       "                2^-(mbits+1)) 2^L\n"
	       "                rceil (torchao RCEIL): k = ceil(log2 d), d = amax / max_elem\n"
	       "                rounded to fp32\n"
	       "                torchao-ceil (torchao CEIL): k = ceil(log2 amax) - emax_elem\n"
	       "                k is clamped to [-127, 127]; an all-zero block gets 2^-127\n"
	       "  --mode M      elements: rne (default), sr (stochastic), rto (round to\n"
	       "                odd), rnz (nearest, ties toward zero) or sr-equal (either\n"
	       "                neighbour with probability 1/2), as 'mixprec round' defines\n"
	       "                them; the scales are always chosen as the rule says\n"
	       "  --seed N      seed for sr and sr-equal (default 0); value number i (from\n"
	       "                0) uses the random bits of element i of the stream:\n"
	       "                reproducible\n"
	       "  --rht         rotate every 16 consecutive values by NVFP4's random\n"
	       "                Hadamard transform first (v S H16 / 4, exactly; signs 0xa53c,\n"
	       "                the trainer's; values past the last full 16 stay): the inputs\n"
	       "                shown are the rotated ones; H is orthogonal, so each block's\n"
	       "                relative error is that of the values rotated back\n"
	       "  --csv         CSV: index,block,input,tensor_scale,scale_bits,scale,bits,\n"
	       "                value,abs_error (value = element x scale x tensor_scale)\n"
	       "  --from-model FILE  the values are one row of a weight of a model saved by\n"
	       "                train --save (the Block explorer's model rows), in place of\n"
	       "                VALUEs: each the stored value exactly (F32, or BF16/F16\n"
	       "                widened), its input text the shortest that reads back as it\n"
	       "  --tensor NAME the weight, by its GPT-2 name: wte.weight (token embeddings),\n"
	       "                wpe.weight, h.N.attn.c_attn.weight, ..., ln_f.bias\n"
	       "  --row I       the row, from 0 (default 0): index I of the tensor's first\n"
	       "                dimension as stored, the others flattened (wte.weight row I:\n"
	       "                token I's embedding; a Conv1D weight [in, out] row I: input\n"
	       "                channel I's weights; a vector is one row)\n"
	       "  -h, --help    this text\n\n"
	       "nvfp4: s_t = fp32(amax / (448 x 6)) over all the values, s_b =\n"
	       "e4m3(block amax / (6 x s_t)), elements e2m1(V / (s_b x s_t)) saturating at 6;\n"
	       "every quotient is exact and rounded once (to nearest even); a block whose\n"
	       "s_b is 0 has elements 0. Elements are clipped at the format's max; one is\n"
	       "counted saturated when its nearest value lies past the max (beyond max plus\n"
	       "half the step there: e2m1 7, e4m3 464, e5m2 61440), as the training casts\n"
	       "count; zero keeps its sign (fp4 -0 is 0x8).\n\n"
	       "VALUE: the syntax of 'round' (0.1, -6.5e-5, 0x1.8p-3, 1/3, 2^-14, 3*2^-10),\n"
	       "quantized from its exact value. A bad VALUE or stdin line, and inf or nan\n"
	       "(no block-scaled format encodes them), is reported (line N: ...) and left\n"
	       "out; the others are quantized and the exit status is 2. Values keep their\n"
	       "input positions: index i is value (or line) i + 1 and its block is\n"
	       "i / block size, so a bad one leaves a gap (no row, not in amax or the\n"
	       "shares) and moves no other value to another block.\n\n",
	       known, QUANT_BLOCK_MAX);
	quantize_random_help();
}

#define QUANTIZE_LINE_MAX 8192

/* The values by input position, their texts and where they came from. A
 * bad one keeps its slot (bad[i]) with x[i] = +0, which changes neither a
 * block's amax, nor its shares, nor its error; it is left out of the output. */
typedef struct {
	fmt_num *x;
	char **text;
	char (*where)[32];
	bool *bad;
	size_t n, cap, nbad;
} value_list;

static void values_free(value_list *v)
{
	for (size_t i = 0; i < v->n; i++) {
		fmt_num_clear(&v->x[i]);
		free(v->text[i]);
	}
	free(v->x);
	free(v->text);
	free(v->where);
	free(v->bad);
}

/* Appends the slot of text (parsed into x when good, else +0): 0, or -1
 * when out of memory. */
static int values_push(value_list *v, const char *text, const char *where, bool bad, fmt_num *x)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 64;
		/* each array on its own: one that grew stays grown when another fails */
		bool nx = grow_to(&v->x, cap, sizeof *v->x);
		bool t = grow_to(&v->text, cap, sizeof *v->text);
		bool w = grow_to(&v->where, cap, sizeof *v->where);
		bool b = grow_to(&v->bad, cap, sizeof *v->bad);
		if (!nx || !t || !w || !b)
			return -1;
		v->cap = cap;
	}
	if (!(v->text[v->n] = strdup(text)))
		return -1;
	fmt_num_init(&v->x[v->n]);
	if (!bad) {
		mpq_swap(v->x[v->n].mag, x->mag);
		v->x[v->n].neg = x->neg;
		v->x[v->n].kind = x->kind;
	}
	snprintf(v->where[v->n], sizeof v->where[v->n], "%s", where);
	v->bad[v->n] = bad;
	v->nbad += bad;
	v->n++;
	return 0;
}

/* Parses text and appends it; reports a bad or non-finite one, which keeps
 * its slot. 1 when good, 0 when bad, -1 when out of memory. */
static int values_add(value_list *v, const char *text, const char *where)
{
	fmt_num x;
	fmt_num_init(&x);
	char err[256];
	bool bad = true;
	if (fmt_parse_number(&x, text, err, sizeof err) != MP_OK)
		cli_error("quantize", "%s%s", where, err);
	else if (x.kind != NUM_FINITE)
		cli_error("quantize", "%s'%s': inf and nan have no encoding in a block-scaled format (left out)", where,
		          text);
	else
		bad = false;
	int r = values_push(v, text, where, bad, &x);
	fmt_num_clear(&x);
	return r < 0 ? -1 : !bad;
}

/* Bad slots among elements [begin, begin + count). */
static size_t bad_in(const value_list *v, size_t begin, size_t count)
{
	size_t n = 0;
	for (size_t i = begin; i < begin + count; i++)
		n += v->bad[i];
	return n;
}

/* The values of the command line or of stdin into v: CLI_OK, CLI_USAGE
 * when some were bad (reported), CLI_ENV on a read error or out of memory. */
static int values_read(value_list *v, char **args, size_t nargs)
{
	static char line[QUANTIZE_LINE_MAX + 2];
	int rc = CLI_OK;
	char where[32];
	for (size_t i = 0; i < nargs; i++) {
		snprintf(where, sizeof where, "value %zu: ", i + 1);
		int r = values_add(v, args[i], where);
		if (r < 0)
			return CLI_ENV;
		if (r == 0)
			rc = CLI_USAGE;
	}
	if (nargs > 0)
		return rc;
	size_t len;
	int got;
	unsigned long long lineno = 0;
	while ((got = cli_read_line(stdin, line, sizeof line, &len)) >= 0) {
		snprintf(where, sizeof where, "line %llu: ", ++lineno);
		if (got > 0) {
			cli_error("quantize", "%slonger than %d bytes (is standard input a list of values?); stopped reading",
			          where, QUANTIZE_LINE_MAX);
			return CLI_USAGE;
		}
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		int r;
		if (strlen(line) != len) {   /* a bad line: its slot stays */
			cli_error("quantize", "%scontains a NUL byte", where);
			r = values_push(v, line, where, true, NULL) < 0 ? -1 : 0;
		} else {
			r = values_add(v, line, where);
		}
		if (r < 0)
			return CLI_ENV;
		if (r == 0)
			rc = CLI_USAGE;
	}
	if (ferror(stdin)) {
		cli_error("quantize", "reading standard input: %s", strerror(errno));
		return CLI_ENV;
	}
	if (lineno == 0 && isatty(0)) {
		cli_error("quantize", "no values given (see 'mixprec quantize --help')");
		return CLI_USAGE;
	}
	return rc;
}

/* The shortest decimal that reads back as the fp32 value v (at most 9
 * digits): a model row's input column. */
static void fp32_text(char *buf, size_t n, float v)
{
	for (int digits = 1; digits <= 9; digits++) {
		snprintf(buf, n, "%.*g", digits, (double)v);
		if (strtof(buf, NULL) == v)
			return;
	}
}

/* --from-model: the row's values into v, each the stored fp32 value
 * exactly, its text the shortest that reads back as it; what the row is
 * into head, for the text output. A non-finite element is reported and
 * left out as a bad VALUE is. CLI_OK, CLI_USAGE or CLI_ENV, reported. */
static int values_from_model(value_list *v, const quantize_model_args *m, char *head, size_t headlen)
{
	ckpt_row row;
	char err[1536];
	mp_status st = ckpt_row_load(m->path, m->tensor, m->row, &row, err, sizeof err);
	if (st != MP_OK) {
		cli_error("quantize", "%s", err);
		return st == MP_EINVAL ? CLI_USAGE : CLI_ENV;
	}
	snprintf(head, headlen, "%s: %s %s %s, row %llu of %llu (%zu values)", m->path, row.tensor, row.dtype,
	         row.shape, (unsigned long long)row.row, (unsigned long long)row.nrows, row.n);
	int rc = CLI_OK;
	for (size_t i = 0; i < row.n && rc != CLI_ENV; i++) {
		char buf[32], where[32];
		fp32_text(buf, sizeof buf, row.values[i]);
		snprintf(where, sizeof where, "value %zu: ", i + 1);
		bool bad = !isfinite(row.values[i]);
		if (bad) {
			cli_error("quantize", "%s%s row %llu, element %zu is %s: no block-scaled format encodes it (left out)",
			          where, row.tensor, (unsigned long long)row.row, i, buf);
			rc = CLI_USAGE;
		}
		fmt_num x;
		fmt_num_init(&x);
		if (!bad)
			fmt_num_set_double(&x, (double)row.values[i]);
		if (values_push(v, buf, where, bad, &x) < 0)
			rc = CLI_ENV;
		fmt_num_clear(&x);
	}
	ckpt_row_free(&row);
	if (rc == CLI_ENV)
		cli_error("quantize", "out of memory");
	return rc;
}

/* --- output --- */

static void print_csv(const quant_result *r, const value_list *v)
{
	const quant_info *q = quant_get(r->opts.fmt);
	const fmt_info *f = fmt_get(q->elem);
	csvw w;
	csvw_init(&w, stdout);
	csvw_header(&w, "index,block,input,tensor_scale,scale_bits,scale,bits,value,abs_error");
	char ts[1200], sc[1200], val[1200], abs_s[64], rel_s[64];
	numtext_exact(ts, sizeof ts, r->tensor_scale);
	for (size_t k = 0; k < r->nblocks; k++) {
		const quant_block *b = &r->blocks[k];
		numtext_exact(sc, sizeof sc, b->scale);
		for (size_t i = b->begin; i < b->begin + b->count; i++) {
			if (v->bad[i])
				continue;
			const quant_elem *e = &r->elems[i];
			numtext_exact(val, sizeof val, e->value);
			fmt_error_text(&v->x[i], e->value, 10, abs_s, rel_s, sizeof abs_s);
			csvw_fieldf(&w, "%zu", i);
			csvw_fieldf(&w, "%zu", k);
			csvw_field(&w, v->text[i]);
			csvw_field(&w, ts);
			csvw_fieldf(&w, "0x%02x", b->scale_bits);
			csvw_field(&w, sc);
			csvw_fieldf(&w, "0x%0*x", fmt_hex_digits(f), e->bits);
			csvw_field(&w, val);
			csvw_field(&w, abs_s);
			csvw_end_row(&w);
		}
	}
}

/* A number for the text output: exact when short, else 17 digits. */
static const char *short_text(char *buf, size_t n, double v)
{
	numtext_exact(buf, n, v);
	if (numtext_sig_digits(buf) > 24)
		snprintf(buf, n, "%.17g", v);
	return buf;
}

/* The shortest decimal that reads back as v: the amax is an input, shown as
 * typed (0.05, not the binary64's 0.050000000000000003). */
static const char *shortest_text(char *buf, size_t n, double v)
{
	for (int digits = 1; digits <= 17; digits++) {
		snprintf(buf, n, "%.*g", digits, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

static void print_shares(const char *lead, size_t nsat, size_t nflush, size_t n, double rel)
{
	printf("%ssaturated %zu of %zu (%.1f%%), flushed to zero %zu of %zu (%.1f%%), relative error %.4g\n", lead,
	       nsat, n, n ? 100.0 * (double)nsat / (double)n : 0.0, nflush, n,
	       n ? 100.0 * (double)nflush / (double)n : 0.0, rel);
}

static void print_block(const quant_result *r, const value_list *v, size_t k)
{
	const quant_info *q = quant_get(r->opts.fmt);
	const fmt_info *f = fmt_get(q->elem);
	const quant_block *b = &r->blocks[k];
	char a[1200], s[1200], p[1200], val[1200], abs_s[64], rel_s[64];
	size_t nbad = bad_in(v, b->begin, b->count);
	if (nbad == b->count) {
		printf("block %zu (elements %zu..%zu): no good value\n", k, b->begin, b->begin + b->count - 1);
		return;
	}
	/* amax from its exact value when binary64 cannot hold it (1e400, 1e-400) */
	double abs_amax, rel_amax;
	double signed_amax = fmt_num_to_double(&v->x[b->amax_at]) < 0 ? -b->amax : b->amax;
	fmt_error_of(&v->x[b->amax_at], signed_amax, &abs_amax, &rel_amax);
	if (rel_amax <= 0x1p-53)
		shortest_text(a, sizeof a, b->amax);
	else
		fmt_error_text(&v->x[b->amax_at], 0.0, 17, a, s, sizeof a);   /* |0 - amax| */
	printf("block %zu (elements %zu..%zu): amax %s\n", k, b->begin, b->begin + b->count - 1, a);
	if (q->nvfp4)
		printf("  scale s_b = %s (fp8-e4m3 0x%02x), s_b x s_t = %s%s\n", short_text(s, sizeof s, b->scale),
		       b->scale_bits, short_text(p, sizeof p, b->scale * r->tensor_scale),
		       b->scale == 0 ? ": every element is 0" : "");
	else
		printf("  scale X = 2^%d (e8m0 0x%02x)%s\n", b->scale_exp, b->scale_bits,
		       b->clamped ? ", exponent clamped to [-127, 127]" : "");
	for (size_t i = b->begin; i < b->begin + b->count; i++) {
		if (v->bad[i])
			continue;
		const quant_elem *e = &r->elems[i];
		fmt_error_text(&v->x[i], e->value, 4, abs_s, rel_s, sizeof abs_s);
		const char *note = (e->flags & QUANT_SATURATED) ? "saturated"
		                   : (e->flags & QUANT_FLUSHED)  ? "flushed to zero"
		                                                 : "";
		char bits_s[16];
		snprintf(bits_s, sizeof bits_s, "0x%0*x", fmt_hex_digits(f), e->bits);
		printf("  [%zu] %-16s %-5s %-24s abs %s%s%s\n", i, v->text[i], bits_s,
		       short_text(val, sizeof val, e->value), abs_s, *note ? "  " : "", note);
	}
	print_shares("  ", b->nsaturated, b->nflushed, b->count - nbad, b->rel_error);
}

static void print_text(const quant_result *r, const value_list *v)
{
	const quant_info *q = quant_get(r->opts.fmt);
	char t[1200];
	printf("%s (%s): %zu values in %zu block%s of %zu, elements %s", q->name, q->summary, r->n - v->nbad,
	       r->nblocks, r->nblocks == 1 ? "" : "s", r->opts.block, fmt_mode_name(r->opts.mode));
	if (v->nbad)
		printf(", %zu bad left out", v->nbad);
	if (!q->nvfp4)
		printf(", scale rule %s", quant_rule_name(r->opts.rule));
	printf("\n");
	if (q->nvfp4)
		printf("tensor scale s_t = fp32(amax / 2688) = %s (fp32 0x%08x)\n", short_text(t, sizeof t, r->tensor_scale),
		       r->tensor_scale_bits);
	for (size_t k = 0; k < r->nblocks; k++) {
		printf("\n");
		print_block(r, v, k);
	}
	printf("\n");
	print_shares("summary: ", r->nsaturated, r->nflushed, r->n - v->nbad, r->rel_error);
	printf("storage: %g bits per element (%d-bit elements, an 8-bit scale per %zu)%s\n",
	       quant_bits_per_elem(q, r->opts.block), fmt_get(q->elem)->width, r->opts.block,
	       q->nvfp4 ? ", and 32 bits of tensor scale per tensor" : "");
}

/* --- options --- */

/* --rht: the values rotated in 16s, their texts the rotated values (to
 * 17 digits; quantized exactly). CLI_USAGE (reported) for a bad value. */
static int rotate(value_list *v)
{
	if (v->nbad) {
		cli_error("quantize", "--rht: every value must be good (a bad one would be rotated as 0)");
		return CLI_USAGE;
	}
	if (quant_rht16(v->x, v->n, QUANT_RHT_SIGNS) != MP_OK) {
		cli_error("quantize", "--rht: inf or nan among the values");
		return CLI_USAGE;
	}
	for (size_t i = 0; i < v->n; i++) {
		char buf[40];
		snprintf(buf, sizeof buf, "%.17g", fmt_num_to_double(&v->x[i]));
		char *t = strdup(buf);
		if (!t)
			return CLI_ENV;
		free(v->text[i]);
		v->text[i] = t;
	}
	return CLI_OK;
}

int cmd_quantize(int argc, char **argv)
{
	quantize_opts qo;
	char err[512];
	mp_status st = quantize_opts_parse(argc, argv, &qo, err, sizeof err);
	int rc = CLI_OK;
	if (st != MP_OK) {
		cli_error("quantize", "%s", err);
		rc = st == MP_ENOMEM ? CLI_ENV : CLI_USAGE;
	} else if (qo.help) {
		quantize_help();
		rc = cli_flush_stdout("quantize") ? CLI_OK : CLI_ENV;
	} else if (qo.ra.random) {
		rc = quantize_random(&qo.ra, &qo.q, qo.rht, qo.csv);
	}
	if (st != MP_OK || qo.help || qo.ra.random) {
		quantize_opts_free(&qo);
		return rc;
	}
	quant_opts o = qo.q;
	bool csv = qo.csv, rht = qo.rht;
	value_list v = { 0 };
	char head[512] = "";
	if (qo.model.path)
		rc = values_from_model(&v, &qo.model, head, sizeof head);
	else
		rc = values_read(&v, qo.values, qo.nvalues);
	quantize_opts_free(&qo);
	if (rht && rc != CLI_ENV) {
		int rr = rotate(&v);
		if (rr != CLI_OK) {
			values_free(&v);
			return rr;
		}
	}
	quant_result r;
	st = rc == CLI_ENV ? MP_OK : quant_run(&o, v.x, v.n, &r, err, sizeof err);
	if (rc == CLI_ENV) {
		cli_error("quantize", "out of memory or unreadable input");
	} else if (st != MP_OK) {
		if (st == MP_EINVAL && v.n > 0 && r.bad < v.n)
			cli_error("quantize", "%s'%s': %s", v.where[r.bad], v.text[r.bad], err);
		else
			cli_error("quantize", "%s", err);
		rc = st == MP_ENOMEM ? CLI_ENV : CLI_USAGE;
	} else if (csv) {
		print_csv(&r, &v);
	} else if (v.n > v.nbad) {
		if (head[0])
			printf("%s\n", head);
		print_text(&r, &v);
	}
	if (rc != CLI_ENV)
		quant_result_free(&r);
	values_free(&v);
	if (!cli_flush_stdout("quantize"))
		return CLI_ENV;
	return rc;
}
