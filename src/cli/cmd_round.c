#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "fmt/decode.h"
#include "fmt/flip.h"
#include "fmt/parse.h"
#include "fmt/round_opts.h"
#include "gpu/gpu.h"
#include "util/csvout.h"
#include "util/numtext.h"
#include "util/rng.h"

static void round_help(void)
{
	printf("Usage: mixprec round [VALUE...] [--to F,...] [--mode M] [--seed N]\n"
	       "                     [--saturate] [--via F:M] [--flip-prob P [--flip-bits B]]\n"
	       "                     [--csv] [--device cpu|cuda]\n"
	       "Rounds each VALUE, or each line of standard input when no VALUE is given,\n"
	       "from its exact value into every format of --to, and shows the bits, the\n"
	       "value, and the absolute and relative error.\n\n"
	       "  --to F,...    formats (default fp32,fp16,bf16); known:\n");
	cli_print_formats(16);
	printf("                (aliases: float32/single, float16/half, bfloat16, e4m3,\n"
	       "                e5m2, fp4, e2m1, e3m2, e2m3, e4m3fnuz, ...)\n"
	       "  --mode M      rne (default; nearest, ties to even), rna (ties away), rtz,\n"
	       "                up, down, sr (stochastic: up with probability = the fraction\n"
	       "                of the gap), rto (round to odd: toward zero, then the last\n"
	       "                bit set when inexact; never inf from a finite value), rnz\n"
	       "                (nearest, ties toward zero), sr-equal (stochastic: either\n"
	       "                neighbour with probability 1/2; up iff the 32 random bits\n"
	       "                are below 2^31; past max: max or the overflow result)\n"
	       "  --seed N      seed for sr and sr-equal (default 0); value number i (from 0)\n"
	       "                uses the random bits of element i of the stream, so runs are\n"
	       "                reproducible\n"
	       "  --saturate    overflow and infinities give the largest finite value instead\n"
	       "                of inf (or, for fp8-e4m3, the FNUZ formats, e8m0 and P3109's\n"
	       "                finite formats, NaN); the integers and fp6/fp4 always saturate\n"
	       "  --via F:M     round each value first into format F by mode M (deterministic:\n"
	       "                not sr or sr-equal), then that into every --to format by --mode;\n"
	       "                errors against the exact value (--via fp32:rto --to bf16:\n"
	       "                round to odd prevents double rounding; --via fp32:rne shows it)\n"
	       "  --flip-prob P soft errors after rounding, as CPFloat's flip and p: each\n"
	       "                value, with probability P (0..1), gets exactly one bit of its\n"
	       "                encoding flipped, drawn uniformly from --flip-bits; bits, value\n"
	       "                and errors are then the flipped ones and the note names the bit.\n"
	       "                Value number i draws element i of --seed's flip stream (apart\n"
	       "                from sr's), the same decision in every format of --to\n"
	       "  --flip-bits B any (default: every bit of the format), frac (the stored\n"
	       "                fraction), exp (the exponent field) or a bit number N (0 = the\n"
	       "                least significant), which every --to format must have\n"
	       "  --csv         CSV: input,format,mode,bits,value,abs_error,rel_error (with\n"
	       "                --via also via,via_bits after input; with --flip-prob also\n"
	       "                rounded_bits and flipped_bit, empty if none)\n"
	       "  --device D    cpu (default) or cuda: the bits come from the GPU's bulk\n"
	       "                kernels (modes rne and sr; VALUEs must be fp32 values, as the\n"
	       "                kernels round fp32 arrays); the same bits as the CPU's\n"
	       "  -h, --help    this text\n\n"
	       "VALUE: decimal (0.1, -6.5e-5), inf, nan, hex float (0x1.99999ap-4), a/b,\n"
	       "2^k or m*2^k. Values are rounded from their exact value, never via binary64.\n"
	       "A bad VALUE or stdin line is reported (line N: ...); the others are still\n"
	       "rounded and the exit status is 2.\n\n"
	       "Formats below 8 bits (OCP MX): fp6-e3m2, fp6-e2m3 and fp4-e2m1 have no inf\n"
	       "and no NaN: beyond max, and for +-inf, they saturate to +-max in every mode;\n"
	       "nan has no encoding and is an error. fp8-e4m3fnuz and fp8-e5m2fnuz have no\n"
	       "-0 (-0 and negatives that round to zero give 0x00) and one NaN, 0x80, which\n"
	       "overflow gives unless --saturate. e8m0 (the MX scale) rounds to a power of\n"
	       "two in the mode (ties to the even pattern); values below 2^-127 give\n"
	       "2^-127 = 0x00, overflow gives NaN 0xff unless --saturate; 0, negative\n"
	       "values and -inf have no encoding and are an error.\n");
}

/* The longest stdin line read (a number is at most FMT_PARSE_MAX_LEN). */
#define ROUND_LINE_MAX 8192
/* Values rounded together: with --device cuda one kernel launch per format
 * for the whole batch. Standard input is read a batch at a time, so memory
 * stays bounded on an endless stream; a terminal is answered line by line. */
#define ROUND_BATCH 4096
/* The bytes of standard input's lines a batch holds. */
#define ROUND_ARENA (64 * (ROUND_LINE_MAX + 2))

typedef struct {
	fmt_id fmts[FMT_COUNT * 4];
	size_t nfmts;
	fmt_round_ctl ctl;
	unsigned long long seed;
	bool csv;
	csvw w;
	size_t widths[7];
	bool cuda;
	bool flip;          /* --flip-prob: each row's bits flipped after rounding */
	flip_opts flip_opt;
	bool via;            /* --via: the first rounding's format and mode */
	fmt_id via_fmt;
	fmt_mode via_mode;
} round_job;

/* One value of a batch. err holds its report when it cannot be rounded at
 * all (a bad VALUE, a NUL byte, for cuda not an fp32 value). */
typedef struct {
	const char *text;
	char where[32];
	char err[320];
	bool parsed;   /* x holds a value to clear */
	fmt_num x;
	bool has_xv;   /* --via: xv holds x rounded into the via format (its bits via_bits) */
	fmt_num xv;
	uint32_t via_bits;
} round_item;

/* A batch of values; item k drives SR with element index0 + k of the stream. */
typedef struct {
	round_item items[ROUND_BATCH];
	char lines[ROUND_ARENA];   /* standard input's lines, one after the other */
	size_t used;               /* bytes of lines in use */
	size_t n;
	unsigned long long index0;
	/* --device cuda: the kernels' inputs, one launch's encoded elements, and
	 * format i's bits of item k at bits[i][k] */
	float in[ROUND_BATCH];
	unsigned char raw[ROUND_BATCH * 4];
	uint32_t bits[FMT_COUNT * 4][ROUND_BATCH];
} round_batch;

/* Every format's bits for the batch from the GPU: one launch per format
 * (items that cannot be rounded go in as 0 and are never printed). False
 * when the device failed (reported). */
static bool round_batch_gpu(const round_job *job, round_batch *b)
{
	for (size_t i = 0; i < job->nfmts; i++) {
		fmt_bulk_opts o = { .fmt = job->fmts[i], .mode = job->ctl.mode, .saturate = job->ctl.saturate,
		                    .seed = job->seed, .index0 = b->index0 };
		char err[512];
		if (gpu_round_host(&o, b->raw, b->in, b->n, err, sizeof err) != MP_OK) {
			cli_error("round", "--device cuda: %s", err);
			return false;
		}
		size_t w = fmt_bulk_elem_size(o.fmt);
		for (size_t k = 0; k < b->n; k++) {
			uint32_t bits = 0;   /* the element in its low bytes (little-endian, as the GPU) */
			memcpy(&bits, b->raw + k * w, w);
			b->bits[i][k] = bits;
		}
	}
	return true;
}

/* The note of a row of the table (flags from the rounding, v the result). */
static void round_note(char *note, size_t n, const fmt_info *f, const fmt_round_ctl *ctl, const fmt_num *x,
                       unsigned flags, double v)
{
	note[0] = '\0';
	/* fp6/fp4 and the integers always */
	bool saturating = ctl->saturate || f->specials == FMT_SPECIALS_NONE || fmt_is_int(f);
	if (!(flags & FMT_FLAG_INEXACT) && !isnan(v) && x->kind != NUM_INF)
		snprintf(note, n, "exact");
	if (saturating && !isinf(v) && !isnan(v) && (x->kind == NUM_INF || (flags & FMT_FLAG_OVERFLOW)))
		snprintf(note, n, fmt_is_int(f) ? "saturated (end of the range)" : "saturated (largest finite)");
	else if (flags & FMT_FLAG_OVERFLOW)
		snprintf(note, n, "overflow");
	else if ((flags & FMT_FLAG_UNDERFLOW) && f->specials == FMT_SPECIALS_E8M0)
		snprintf(note, n, "below 2^-127: clamped to it");
	else if (flags & FMT_FLAG_UNDERFLOW)
		snprintf(note, n, v == 0 ? "underflow to zero" : "subnormal (underflow)");
}

/* Prints the row of one format's bits for item k of the batch (format i of
 * the job). The CPU rounds exactly; under --device cuda the bits are the
 * GPU's, and the table's note needs the exact rounding's flags, which also
 * check the GPU's bits (the CSV has no note and rounds nothing here). False
 * when the value has no encoding in the format or the bits disagree
 * (reported; *env tells the second). */
/* The name column: 9 wide, or as wide as the job's longest format name. */
static int name_width(const round_job *job)
{
	int w = 9;
	for (size_t i = 0; i < job->nfmts; i++)
		if ((int)strlen(fmt_get(job->fmts[i])->name) > w)
			w = (int)strlen(fmt_get(job->fmts[i])->name);
	return w;
}

static bool round_row(round_job *job, const round_batch *b, size_t k, size_t i, bool *env)
{
	const round_item *it = &b->items[k];
	const fmt_info *f = fmt_get(job->fmts[i]);
	fmt_round_ctl ctl = job->ctl;
	ctl.rbits = rng_bits(job->seed, b->index0 + k);
	unsigned flags = 0;
	uint32_t bits = 0;
	const fmt_num *in = it->has_xv ? &it->xv : &it->x;
	if (!job->cuda || !job->csv)
		bits = fmt_round_num(f, &ctl, in, &flags);
	if (flags & FMT_FLAG_INVALID) {
		cli_error("round", "%s'%s' cannot be rounded to %s: %s %s", it->where, it->text, f->name, f->name,
		          fmt_invalid_reason(f, in->kind == NUM_NAN, in->kind == NUM_FINITE && mpq_sgn(in->mag) == 0,
		                             in->neg));
		return false;
	}
	if (job->cuda) {
		uint32_t g = b->bits[i][k];
		if (!job->csv && g != bits) {
			cli_error("round", "--device cuda: %s'%s' in %s: the GPU gave 0x%x, the exact rounding 0x%x",
			          it->where, it->text, f->name, g, bits);
			*env = true;
			return false;
		}
		bits = g;
	}
	uint32_t rounded = bits;
	int flipped = job->flip ? flip_pick(f, &job->flip_opt, b->index0 + k) : -1;
	if (flipped >= 0)
		bits ^= UINT32_C(1) << flipped;
	char value[1200], abs_s[64], rel_s[64], bits_s[32], rounded_s[32];
	double v = fmt_to_double(f, bits);
	snprintf(rounded_s, sizeof rounded_s, "0x%0*x", fmt_hex_digits(f), rounded);
	snprintf(bits_s, sizeof bits_s, "0x%0*x", fmt_hex_digits(f), bits);
	numtext_exact(value, sizeof value, v);
	fmt_error_text(&it->x, v, job->csv ? 10 : 4, abs_s, rel_s, sizeof abs_s);
	if (job->csv) {
		csvw_field(&job->w, it->text);
		if (job->via) {
			char vb[48];
			const fmt_info *vf = fmt_get(job->via_fmt);
			snprintf(vb, sizeof vb, "0x%0*x", fmt_hex_digits(vf), it->via_bits);
			csvw_field(&job->w, vf->name);
			csvw_field(&job->w, vb);
		}
		csvw_field(&job->w, f->name);
		csvw_field(&job->w, fmt_mode_name(ctl.mode));
		csvw_field(&job->w, bits_s);
		csvw_field(&job->w, value);
		csvw_field(&job->w, abs_s);
		csvw_field(&job->w, rel_s);
		if (job->flip) {
			char bit_s[16] = "";
			if (flipped >= 0)
				snprintf(bit_s, sizeof bit_s, "%d", flipped);
			csvw_field(&job->w, rounded_s);
			csvw_field(&job->w, bit_s);
		}
		csvw_end_row(&job->w);
		return true;
	}
	char note[96];
	if (flipped >= 0)
		snprintf(note, sizeof note, "bit %d flipped (rounded: %s)", flipped, rounded_s);
	else
		round_note(note, sizeof note, f, &ctl, &it->x, flags, v);
	/* long exact expansions are shown to 17 digits; --csv has them in full */
	if (numtext_sig_digits(value) > 40) {
		char s[64];
		snprintf(s, sizeof s, "%.17g", v);
		snprintf(value, sizeof value, "%s...", s);
	}
	printf("  %-*s %-12s %-32s abs %-10s rel %-10s %s\n", name_width(job), f->name, bits_s, value, abs_s, rel_s,
	       note);
	return true;
}

/* --via: the item's exact value rounded into the via format (xv, every
 * format's value is exact in binary64); a value the format cannot hold
 * gets its report in err. */
static void round_item_via(const round_job *job, round_item *it)
{
	const fmt_info *vf = fmt_get(job->via_fmt);
	fmt_round_ctl ctl = { .mode = job->via_mode, .saturate = job->ctl.saturate };
	unsigned flags;
	it->via_bits = fmt_round_num(vf, &ctl, &it->x, &flags);
	if (flags & FMT_FLAG_INVALID) {
		char msg[sizeof it->err];   /* composed apart: err and where share the batch */
		snprintf(msg, sizeof msg, "%s'%s' cannot be rounded to %s (--via): %s %s", it->where, it->text, vf->name,
		         vf->name, fmt_invalid_reason(vf, it->x.kind == NUM_NAN,
		                                      it->x.kind == NUM_FINITE && mpq_sgn(it->x.mag) == 0, it->x.neg));
		memcpy(it->err, msg, sizeof msg);
		return;
	}
	double v = fmt_to_double(vf, it->via_bits);
	fmt_num_init(&it->xv);
	it->has_xv = true;
	it->xv.neg = signbit(v) != 0;
	it->xv.kind = isnan(v) ? NUM_NAN : isinf(v) ? NUM_INF : NUM_FINITE;
	if (it->xv.kind == NUM_FINITE)
		mpq_set_d(it->xv.mag, fabs(v));
}

/* Item k's text into its exact value, and for cuda into the kernels' fp32
 * input; a value that cannot be rounded gets its report in err. */
static void round_item_parse(const round_job *job, round_batch *b, size_t k)
{
	round_item *it = &b->items[k];
	char perr[256];
	b->in[k] = 0.0f;
	if (it->err[0])
		return;
	fmt_num_init(&it->x);
	it->parsed = true;
	char msg[sizeof it->err];   /* composed apart: err and where share the batch */
	if (fmt_parse_number(&it->x, it->text, perr, sizeof perr) != MP_OK) {
		snprintf(msg, sizeof msg, "%s%s", it->where, perr);
		memcpy(it->err, msg, sizeof msg);
		return;
	}
	if (job->via)
		round_item_via(job, it);
	if (!job->cuda)
		return;
	fmt_round_ctl exact = { .mode = FMT_RNE };
	unsigned flags;
	uint32_t b32 = fmt_round_num(fmt_get(FMT_FP32), &exact, &it->x, &flags);
	if (flags & (FMT_FLAG_INEXACT | FMT_FLAG_OVERFLOW)) {
		snprintf(msg, sizeof msg, "%s'%s' is not an fp32 value (--device cuda rounds fp32 arrays)", it->where,
		         it->text);
		memcpy(it->err, msg, sizeof msg);
	} else
		memcpy(&b->in[k], &b32, 4);
}

/* The table's line of the first rounding (--via). */
static void round_via_line(const round_job *job, const round_item *it)
{
	const fmt_info *vf = fmt_get(job->via_fmt);
	char value[1200], bits_s[32];
	double v = fmt_to_double(vf, it->via_bits);
	snprintf(bits_s, sizeof bits_s, "0x%0*x", fmt_hex_digits(vf), it->via_bits);
	numtext_exact(value, sizeof value, v);
	if (numtext_sig_digits(value) > 40)
		snprintf(value, sizeof value, "%.17g...", v);
	printf("  via %-5s %-12s %-32s (%s), then into each format by %s\n", vf->name, bits_s, value,
	       fmt_mode_name(job->via_mode), fmt_mode_name(job->ctl.mode));
}

/* Rounds and prints the batch's values, in order, and empties the batch.
 * The exit status so far: CLI_OK, CLI_USAGE when some value could not be
 * rounded, CLI_ENV when the device failed (each reported). */
static int round_batch_run(round_job *job, round_batch *b)
{
	int rc = CLI_OK;
	for (size_t k = 0; k < b->n; k++)
		round_item_parse(job, b, k);
	bool env = job->cuda && !round_batch_gpu(job, b);
	for (size_t k = 0; k < b->n && !env; k++) {
		round_item *it = &b->items[k];
		if (it->err[0]) {
			cli_error("round", "%s", it->err);
			rc = CLI_USAGE;
			continue;
		}
		if (!job->csv)
			printf("%s\n", it->text);
		if (!job->csv && it->has_xv)
			round_via_line(job, it);
		for (size_t i = 0; i < job->nfmts && !env; i++)
			if (!round_row(job, b, k, i, &env))
				rc = CLI_USAGE;
	}
	for (size_t k = 0; k < b->n; k++) {
		if (b->items[k].parsed)
			fmt_num_clear(&b->items[k].x);
		if (b->items[k].has_xv)
			fmt_num_clear(&b->items[k].xv);
	}
	b->index0 += b->n;
	b->n = 0;
	b->used = 0;
	return env ? CLI_ENV : rc;
}

/* Adds a value to the batch (text must outlive the batch); err, when not
 * NULL, is its report instead. */
static void round_batch_add(round_batch *b, const char *text, const char *where, const char *err)
{
	round_item *it = &b->items[b->n++];
	*it = (round_item){ .text = text };
	snprintf(it->where, sizeof it->where, "%s", where);
	if (err)
		snprintf(it->err, sizeof it->err, "%s%s", where, err);
}

/* The command line into job and o (the VALUEs): the exit status, CLI_OK
 * when the command goes on or --help was printed (o->help); a failure is
 * reported. */
static int round_parse_opts(int argc, char **argv, round_job *job, round_opts *o)
{
	char err[512];
	mp_status st = round_opts_parse(argc, argv, o, err, sizeof err);
	if (st != MP_OK) {
		cli_error("round", "%s", err);
		return st == MP_ENOMEM ? CLI_ENV : CLI_USAGE;
	}
	if (o->help) {
		round_help();
		return cli_flush_stdout("round") ? CLI_OK : CLI_ENV;
	}
	memcpy(job->fmts, o->fmts, o->nfmts * sizeof o->fmts[0]);
	job->nfmts = o->nfmts;
	job->ctl = (fmt_round_ctl){ .mode = o->mode, .saturate = o->saturate };
	job->seed = o->seed;
	job->csv = o->csv;
	job->flip = o->flip;
	job->flip_opt = o->flip_opt;
	job->via = o->via;
	job->via_fmt = o->via_fmt;
	job->via_mode = o->via_mode;
	char why[384];
	if (o->cuda && gpu_ready(NULL, why, sizeof why) != MP_OK) {
		cli_error("round", "--device cuda: %s", why);
		return CLI_ENV;
	}
	job->cuda = o->cuda;
	return CLI_OK;
}

/* The worse of two exit statuses (CLI_ENV over CLI_USAGE over CLI_OK). */
static int round_worse(int a, int b)
{
	return a > b ? a : b;
}

/* Rounds the command line's VALUEs, a batch at a time; the exit status. */
static int round_values(round_job *job, round_batch *b, char **values, size_t nvalues)
{
	int rc = CLI_OK;
	for (size_t i = 0; i < nvalues && rc != CLI_ENV; i++) {
		char where[32];
		snprintf(where, sizeof where, "value %zu: ", i + 1);
		round_batch_add(b, values[i], where, NULL);
		if (b->n == ROUND_BATCH || i + 1 == nvalues)
			rc = round_worse(rc, round_batch_run(job, b));
	}
	return rc;
}

/* Rounds each line of standard input, a batch at a time (a line at a time
 * from a terminal); the exit status. */
static int round_stdin(round_job *job, round_batch *b)
{
	size_t len, batch = isatty(0) ? 1 : ROUND_BATCH;
	int got, rc = CLI_OK;
	unsigned long long lineno = 0;
	for (;;) {
		if (b->n == batch || sizeof b->lines - b->used < ROUND_LINE_MAX + 2) {
			rc = round_worse(rc, round_batch_run(job, b));
			if (rc == CLI_ENV)
				break;
		}
		char *line = b->lines + b->used;
		if ((got = cli_read_line(stdin, line, ROUND_LINE_MAX + 2, &len)) < 0)
			break;
		lineno++;
		char where[32];
		snprintf(where, sizeof where, "line %llu: ", lineno);
		if (got > 0) {
			/* memory stays bounded, and /dev/zero does not run forever */
			char err[128];
			snprintf(err, sizeof err, "longer than %d bytes (is standard input a list of values?); stopped reading",
			         ROUND_LINE_MAX);
			round_batch_add(b, "", where, err);
			break;
		}
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		b->used += len + 1;
		round_batch_add(b, line, where, strlen(line) != len ? "contains a NUL byte" : NULL);
	}
	if (rc != CLI_ENV)
		rc = round_worse(rc, round_batch_run(job, b));
	if (ferror(stdin)) {
		cli_error("round", "reading standard input: %s", strerror(errno));
		rc = CLI_ENV;
	}
	if (lineno == 0 && rc == CLI_OK && isatty(0)) {
		cli_error("round", "no values given (see 'mixprec round --help')");
		rc = CLI_USAGE;
	}
	return rc;
}

int cmd_round(int argc, char **argv)
{
	round_job job = { .ctl = { .mode = FMT_RNE } };
	round_batch *b = calloc(1, sizeof *b);
	round_opts o;
	if (!b) {
		cli_error("round", "out of memory");
		return CLI_ENV;
	}
	int rc = round_parse_opts(argc, argv, &job, &o);
	if (rc == CLI_OK && !o.help) {
		if (job.csv) {
			csvw_init(&job.w, stdout);
			char head[160];
			snprintf(head, sizeof head, "input,%sformat,mode,bits,value,abs_error,rel_error%s",
			         job.via ? "via,via_bits," : "", job.flip ? ",rounded_bits,flipped_bit" : "");
			csvw_header(&job.w, head);
		}
		rc = o.nvalues > 0 ? round_values(&job, b, o.values, o.nvalues) : round_stdin(&job, b);
		if (!cli_flush_stdout("round"))
			rc = CLI_ENV;
	}
	round_opts_free(&o);
	free(b);
	return rc;
}
