#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "fmt/decode.h"
#include "fmt/parse.h"
#include "gpu/gpu.h"
#include "util/csvout.h"
#include "util/numtext.h"
#include "util/rng.h"

static void round_help(void)
{
	printf("Usage: mixprec round [VALUE...] [--to F,...] [--mode M] [--seed N]\n"
	       "                     [--saturate] [--csv] [--device cpu|cuda]\n"
	       "Rounds each VALUE, or each line of standard input when no VALUE is given,\n"
	       "from its exact value into every format of --to, and shows the bits, the\n"
	       "value, and the absolute and relative error.\n\n"
	       "  --to F,...    formats (default fp32,fp16,bf16); known:\n");
	cli_print_formats(16);
	printf("                (aliases: float32/single, float16/half, bfloat16, e4m3,\n"
	       "                e5m2, fp4, e2m1, e3m2, e2m3, e4m3fnuz, ...)\n"
	       "  --mode M      rne (default; nearest, ties to even), rna (ties away), rtz,\n"
	       "                up, down, sr (stochastic: up with probability = the fraction\n"
	       "                of the gap)\n"
	       "  --seed N      seed for sr (default 0); value number i (from 0) uses the\n"
	       "                random bits of element i of the stream, so runs are reproducible\n"
	       "  --saturate    overflow and infinities give the largest finite value instead\n"
	       "                of inf (or, for fp8-e4m3, the FNUZ formats and e8m0, NaN)\n"
	       "  --csv         CSV: input,format,mode,bits,value,abs_error,rel_error\n"
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

typedef struct {
	fmt_id fmts[FMT_COUNT * 4];
	size_t nfmts;
	fmt_round_ctl ctl;
	unsigned long long seed;
	bool csv;
	csvw w;
	size_t widths[7];
	bool cuda;
} round_job;

/* The bits of x in f from the GPU kernel; x must be an fp32 value (checked
 * by the caller). */
static bool round_on_gpu(round_job *job, const fmt_info *f, const fmt_num *x, unsigned long long index,
                         uint32_t *bits)
{
	fmt_round_ctl exact = { .mode = FMT_RNE };
	uint32_t b32 = fmt_round_num(fmt_get(FMT_FP32), &exact, x, NULL);
	float v;
	memcpy(&v, &b32, 4);
	fmt_bulk_opts o = { .fmt = f->id, .mode = job->ctl.mode, .saturate = job->ctl.saturate, .seed = job->seed,
	                    .index0 = index };
	uint32_t out = 0;   /* the element in its low bytes (little-endian, as the GPU) */
	if (gpu_round_host(&o, &out, &v, 1) != MP_OK) {
		cli_error("round", "--device cuda: %s", gpu_last_error());
		return false;
	}
	*bits = out;
	return true;
}

/* The note of a row of the table (flags from the rounding, v the result). */
static void round_note(char *note, size_t n, const fmt_info *f, const fmt_round_ctl *ctl, const fmt_num *x,
                       unsigned flags, double v)
{
	note[0] = '\0';
	bool saturating = ctl->saturate || f->specials == FMT_SPECIALS_NONE;   /* fp6/fp4 always */
	if (!(flags & FMT_FLAG_INEXACT) && !isnan(v) && x->kind != NUM_INF)
		snprintf(note, n, "exact");
	if (saturating && !isinf(v) && !isnan(v) && (x->kind == NUM_INF || (flags & FMT_FLAG_OVERFLOW)))
		snprintf(note, n, "saturated (largest finite)");
	else if (flags & FMT_FLAG_OVERFLOW)
		snprintf(note, n, "overflow");
	else if ((flags & FMT_FLAG_UNDERFLOW) && f->specials == FMT_SPECIALS_E8M0)
		snprintf(note, n, "below 2^-127: clamped to it");
	else if (flags & FMT_FLAG_UNDERFLOW)
		snprintf(note, n, v == 0 ? "underflow to zero" : "subnormal (underflow)");
}

/* Rounds one typed value into every format and prints it; index drives SR.
 * 1 when done, 0 when the value has no encoding in some format (reported,
 * naming it; the other formats are still printed), -1 when the GPU failed
 * (reported). */
static int round_one(round_job *job, const char *text, const char *where, const fmt_num *x,
                     unsigned long long index)
{
	int rc = 1;
	char value[1200], abs_s[64], rel_s[64], bits_s[32];
	if (!job->csv)
		printf("%s\n", text);
	for (size_t i = 0; i < job->nfmts; i++) {
		const fmt_info *f = fmt_get(job->fmts[i]);
		fmt_round_ctl ctl = job->ctl;
		ctl.rbits = rng_bits(job->seed, index);
		unsigned flags;
		uint32_t bits = fmt_round_num(f, &ctl, x, &flags);
		if (flags & FMT_FLAG_INVALID) {
			cli_error("round", "%s'%s' cannot be rounded to %s: %s %s", where, text, f->name, f->name,
			          fmt_invalid_reason(f, x->kind == NUM_NAN, x->kind == NUM_FINITE && mpq_sgn(x->mag) == 0,
			                             x->neg));
			rc = 0;
			continue;
		}
		if (job->cuda && !round_on_gpu(job, f, x, index, &bits))
			return -1;
		double v = fmt_to_double(f, bits);
		snprintf(bits_s, sizeof bits_s, "0x%0*x", fmt_hex_digits(f), bits);
		numtext_exact(value, sizeof value, v);
		fmt_error_text(x, v, job->csv ? 10 : 4, abs_s, rel_s, sizeof abs_s);
		if (job->csv) {
			csvw_field(&job->w, text);
			csvw_field(&job->w, f->name);
			csvw_field(&job->w, fmt_mode_name(ctl.mode));
			csvw_field(&job->w, bits_s);
			csvw_field(&job->w, value);
			csvw_field(&job->w, abs_s);
			csvw_field(&job->w, rel_s);
			csvw_end_row(&job->w);
			continue;
		}
		char note[64];
		round_note(note, sizeof note, f, &ctl, x, flags, v);
		/* long exact expansions are shown to 17 digits; --csv has them in full */
		if (numtext_sig_digits(value) > 40) {
			char s[64];
			snprintf(s, sizeof s, "%.17g", v);
			snprintf(value, sizeof value, "%s...", s);
		}
		printf("  %-9s %-12s %-32s abs %-10s rel %-10s %s\n", f->name, bits_s, value, abs_s, rel_s, note);
	}
	return rc;
}

/* Parses and rounds one value; reports a bad one. Returns 1 when done, 0
 * when the value is bad, -1 when the GPU failed. */
static int round_text(round_job *job, const char *text, const char *where, unsigned long long index)
{
	fmt_num x;
	fmt_num_init(&x);
	char err[256];
	bool ok = fmt_parse_number(&x, text, err, sizeof err) == MP_OK;
	if (!ok) {
		cli_error("round", "%s%s", where, err);
	} else if (job->cuda) {
		fmt_round_ctl exact = { .mode = FMT_RNE };
		unsigned flags;
		fmt_round_num(fmt_get(FMT_FP32), &exact, &x, &flags);
		if (flags & (FMT_FLAG_INEXACT | FMT_FLAG_OVERFLOW)) {
			cli_error("round", "%s'%s' is not an fp32 value (--device cuda rounds fp32 arrays)", where, text);
			ok = false;
		}
	}
	int r = ok ? round_one(job, text, where, &x, index) : 0;
	fmt_num_clear(&x);
	return r;
}

/* round_parse_opts' result when the command should go on */
#define ROUND_PROCEED (-1)

/* --device D (with the mode already parsed) into job: ROUND_PROCEED, or the
 * exit status (reported). */
static int round_device(round_job *job, const char *device)
{
	if (strcmp(device, "cpu") && strcmp(device, "cuda")) {
		cli_error("round", "--device: unknown device '%s' (known: cpu, cuda)", device);
		return CLI_USAGE;
	}
	if (!strcmp(device, "cuda")) {
		const char *why;
		if (job->ctl.mode != FMT_RNE && job->ctl.mode != FMT_SR) {
			cli_error("round", "--device cuda: the GPU kernels round with rne or sr, not %s",
			          fmt_mode_name(job->ctl.mode));
			return CLI_USAGE;
		}
		for (size_t i = 0; i < job->nfmts; i++)
			if (!fmt_is_kernel(job->fmts[i])) {
				cli_error("round", "--device cuda: %s is not available on the GPU (%s are)",
				          fmt_get(job->fmts[i])->name, fmt_kernel_names());
				return CLI_USAGE;
			}
		if (!gpu_ready(&why, NULL)) {
			cli_error("round", "--device cuda: %s", why);
			return CLI_ENV;
		}
		job->cuda = true;
	}
	return ROUND_PROCEED;
}

/* The command line into job and values (the VALUEs, *nvalues of them):
 * ROUND_PROCEED, or the exit status (reported; CLI_OK after --help). */
static int round_parse_opts(int argc, char **argv, round_job *job, char **values, size_t *nvalues)
{
	static const struct option opts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "mode", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 's' },
		{ "saturate", no_argument, NULL, 'S' },
		{ "csv", no_argument, NULL, 'c' },
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *device = "cpu";
	const char *to = "fp32,fp16,bf16";
	cli_args args = { 0 };
	int c;
	char *value;
	while ((c = cli_getopt(&args, argc, argv, opts, &value)) != -1) {
		switch (c) {
		case CLI_ARG_VALUE: values[(*nvalues)++] = value; break;
		case 't': to = optarg; break;
		case 'm':
			if (!cli_parse_mode("round", optarg, &job->ctl.mode))
				return CLI_USAGE;
			break;
		case 's':
			if (!cli_parse_u64("round", "--seed", optarg, &job->seed))
				return CLI_USAGE;
			break;
		case 'S': job->ctl.saturate = true; break;
		case 'c': job->csv = true; break;
		case 'd': device = optarg; break;
		case 'h':
			round_help();
			return cli_flush_stdout("round") ? CLI_OK : CLI_ENV;
		case ':':
		default:
			return cli_option_error("round", c, argv);
		}
	}
	if (!cli_parse_formats("round", "--to", to, job->fmts, &job->nfmts))
		return CLI_USAGE;
	return round_device(job, device);
}

/* Rounds the command line's VALUEs; the exit status. */
static int round_values(round_job *job, char **values, size_t nvalues)
{
	int rc = CLI_OK;
	for (size_t i = 0; i < nvalues; i++) {
		char where[64];
		snprintf(where, sizeof where, "value %zu: ", i + 1);
		int r = round_text(job, values[i], where, i);
		if (r < 0)
			return CLI_ENV;
		if (r == 0)
			rc = CLI_USAGE;
	}
	return rc;
}

/* Rounds each line of standard input; the exit status. */
static int round_stdin(round_job *job)
{
	static char line[ROUND_LINE_MAX + 2];
	size_t len;
	int got, rc = CLI_OK;
	unsigned long long lineno = 0, index = 0;
	while ((got = cli_read_line(stdin, line, sizeof line, &len)) >= 0) {
		lineno++;
		char where[64];
		snprintf(where, sizeof where, "line %llu: ", lineno);
		if (got > 0) {
			/* memory stays bounded, and /dev/zero does not run forever */
			cli_error("round", "%slonger than %d bytes (is standard input a list of values?); stopped reading",
			          where, ROUND_LINE_MAX);
			rc = CLI_USAGE;
			break;
		}
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (strlen(line) != len) {
			cli_error("round", "%scontains a NUL byte", where);
			rc = CLI_USAGE;
			index++;
			continue;
		}
		int r = round_text(job, line, where, index++);
		if (r < 0) {
			rc = CLI_ENV;
			break;
		}
		if (r == 0 && rc == CLI_OK)
			rc = CLI_USAGE;
	}
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
	char **values = calloc((size_t)argc + 1, sizeof *values);
	size_t nvalues = 0;
	if (!values) {
		cli_error("round", "out of memory");
		return CLI_ENV;
	}
	int rc = round_parse_opts(argc, argv, &job, values, &nvalues);
	if (rc != ROUND_PROCEED) {
		free(values);
		return rc;
	}
	if (job.csv) {
		csvw_init(&job.w, stdout);
		csvw_header(&job.w, "input,format,mode,bits,value,abs_error,rel_error");
	}
	rc = nvalues > 0 ? round_values(&job, values, nvalues) : round_stdin(&job);
	free(values);
	if (!cli_flush_stdout("round"))
		return CLI_ENV;
	return rc;
}
