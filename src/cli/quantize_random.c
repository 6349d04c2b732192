/* mixprec quantize --random: the options, then train/rht_probe's figures
 * as a table with a row per transform. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/quantize_random.h"
#include "train/rht_probe.h"

void quantize_random_help(void)
{
	printf("Generated tensor (no VALUE, no --csv):\n"
	       "  --random N    quantize N generated values (a multiple of every block size,\n"
	       "                at most 2^24) as one tensor with the bulk kernels, once per\n"
	       "                format of --to, which may be a list (mxfp8-e4m3,mxfp4,nvfp4:\n"
	       "                the same values for each), and print a table with a row per\n"
	       "                format (its first word the format, +rht for the rotated row):\n"
	       "                tensor_scale (nvfp4's s_t; - for MX), bits (per element: the\n"
	       "                element, its block's 8-bit scale shared by the block, and\n"
	       "                nvfp4's 32-bit tensor scale shared by N: mxfp8 8.25, mxfp4\n"
	       "                4.25, nvfp4 4.5 + 32/N), error ||Q(x) - x|| / ||x||, inliers\n"
	       "                and outliers (the same over the values that are not outliers,\n"
	       "                and over the outliers), flushed (nonzero cast to 0) and\n"
	       "                saturated (its nearest value past the element's max, as\n"
	       "                quantize counts it) shares. --block (one size for every\n"
	       "                format) and --scale-rule (the MX formats) apply as for VALUEs\n"
	       "  --rht         nvfp4 alone, blocks of 16: the values are rotated before the\n"
	       "                cast and Q rotated back before the errors are measured (H\n"
	       "                orthogonal: the errors equal those of the rotated values, the\n"
	       "                ones the GEMM multiplies; flushed and saturated count rotated\n"
	       "                values)\n"
	       "  --compare-rht  nvfp4 alone: two rows, nvfp4 and nvfp4+rht, on the same\n"
	       "                values and draws\n"
	       "  --dist D      gauss (default), uniform or laplace (heavier tails), each of\n"
	       "                mean 0 and standard deviation 1\n"
	       "  --outliers K:V  plant K outliers of value +V or -V (random signs), which\n"
	       "                replace the values at their places (default none)\n"
	       "  --outliers-in W  blocks (default): each outlier in its own block, K distinct\n"
	       "                blocks at random (blocks of the least common multiple of the\n"
	       "                formats' block sizes, so one outlier at most in any format's\n"
	       "                block), a random place in each; tensor: K distinct places\n"
	       "                anywhere (two may share a block)\n"
	       "  --draws R     with --mode sr or sr-equal: R draws (default 1); errors are\n"
	       "                then root mean squares over the draws, and sr_var (the mean\n"
	       "                over elements of each element's variance over the draws,\n"
	       "                1/(R-1), over ||x||^2 / N), sr_bias (||mean of the draws - x||\n"
	       "                / ||x||) and sr_noise (sqrt(sr_var / R): the bias sampling\n"
	       "                alone gives an unbiased SR) are shown\n"
	       "  --seed S      the values, the outliers and the draws (default 0); the same\n"
	       "                figures on every machine and SIMD path\n");
}

/* --outliers K:V into c: false (reported) when bad. */
static bool parse_outliers(const char *text, rht_probe_cfg *c)
{
	const char *colon = strchr(text, ':');
	if (!colon || colon == text || !colon[1]) {
		cli_error("quantize", "--outliers: '%s' is not K:V (a count and a value, as 8:30)", text);
		return false;
	}
	char k[64];
	size_t len = (size_t)(colon - text);
	if (len >= sizeof k) {
		cli_error("quantize", "--outliers: '%s': the count is too long", text);
		return false;
	}
	memcpy(k, text, len);
	k[len] = '\0';
	unsigned long long u;
	if (!cli_parse_u64("quantize", "--outliers (K)", k, &u))
		return false;
	c->outliers = u > PROBE_N_MAX ? PROBE_N_MAX + 1 : (size_t)u;
	return cli_parse_real("quantize", "--outliers (V)", colon + 1, 0, true, 3.4028234663852886e38,
	                      &c->outlier_value);
}

/* The formats of --random: the list of --to, the block of each and the
 * rule, after checking them against each other. */
typedef struct {
	rht_probe_cast k[QUANT_COUNT];
	const char *name[QUANT_COUNT];
	size_t count;
	size_t unit;   /* the lcm of the blocks (and 16 under the RHT): N's multiple, the outliers' blocks */
	bool any_mx;
} random_formats;

static size_t gcd_of(size_t a, size_t b)
{
	while (b) {
		size_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* The comma-separated --to into f (blocks from o->block, rule from o->rule,
 * the RHT not yet set): false (reported) when a name is unknown, empty or
 * given twice. */
static bool parse_formats(const char *to, const quant_opts *o, random_formats *f)
{
	*f = (random_formats){ .unit = 1 };
	const char *p = to;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char name[32];
		const quant_info *q = NULL;
		if (len > 0 && len < sizeof name) {
			memcpy(name, p, len);
			name[len] = '\0';
			q = quant_find(name);
		}
		if (!q) {
			cli_error("quantize", "--to: unknown block format '%.*s' in '%s' (known: %s)", (int)len, p, to,
			          quant_known_names());
			return false;
		}
		for (size_t j = 0; j < f->count; j++)
			if (f->k[j].fmt == q->id) {
				cli_error("quantize", "--to: %s is listed twice in '%s'", q->name, to);
				return false;
			}
		if (f->count == QUANT_COUNT)
			return false;   /* unreachable: no format twice */
		size_t block = o->block ? o->block : (size_t)q->block;
		f->k[f->count] = (rht_probe_cast){ .fmt = q->id, .rule = q->nvfp4 ? QUANT_RULE_OCP : o->rule, .block = block };
		f->name[f->count++] = q->name;
		f->unit = f->unit / gcd_of(f->unit, block) * block;   /* at most QUANT_BLOCK_MAX: one --block for all */
		f->any_mx |= !q->nvfp4;
		if (!comma)
			return true;
		p = comma + 1;
	}
}

/* --rht, --compare-rht, --scale-rule and --block against the formats:
 * false (reported) when they do not fit. */
static bool check_formats(const quantize_random_args *a, random_formats *f, bool rht)
{
	const char *t = a->compare ? "--compare-rht" : "--rht";
	for (size_t j = 0; j < f->count && (rht || a->compare); j++) {
		if (!quant_get(f->k[j].fmt)->nvfp4) {
			cli_error("quantize", "%s: nvfp4 only (the trainer's RHT precedes NVFP4's cast; got %s)", t,
			          f->name[j]);
			return false;
		}
		if (f->k[j].block != 16) {
			cli_error("quantize", "--block: %s casts nvfp4's blocks of 16, one RHT group each (got %s)", t,
			          a->block);
			return false;
		}
	}
	if (a->rule && !f->any_mx) {
		cli_error("quantize", "--scale-rule: nvfp4 has one rule (its scales are rounded to nearest)");
		return false;
	}
	return true;
}

/* "mxfp4 32, nvfp4 16": the blocks, for messages. */
static void blocks_text(char *buf, size_t n, const random_formats *f)
{
	size_t at = 0;
	buf[0] = '\0';
	for (size_t j = 0; j < f->count && at < n; j++) {
		int w = snprintf(buf + at, n - at, "%s%s %zu", j ? ", " : "", f->name[j], f->k[j].block);
		at += w > 0 ? (size_t)w : 0;
	}
}

/* --random N into c->n: false (reported) unless a multiple of f->unit. */
static bool parse_n(const char *text, const random_formats *f, rht_probe_cfg *c)
{
	unsigned long long u;
	if (!cli_parse_u64("quantize", "--random", text, &u))
		return false;
	if (u == 0 || u % f->unit || u > PROBE_N_MAX) {
		char b[256];
		blocks_text(b, sizeof b, f);
		cli_error("quantize", "--random: %s is not a multiple of %zu in %zu..16777216 (the blocks: %s%s)", text,
		          f->unit, f->unit, b, f->k[0].rht ? "; the RHT's 16s" : "");
		return false;
	}
	c->n = (size_t)u;
	return true;
}

/* --dist, --outliers-in and --draws into c: false (reported) when bad. */
static bool parse_draws(const quantize_random_args *a, rht_probe_cfg *c)
{
	if (a->dist && !strcmp(a->dist, "uniform"))
		c->dist = PROBE_DIST_UNIFORM;
	else if (a->dist && !strcmp(a->dist, "laplace"))
		c->dist = PROBE_DIST_LAPLACE;
	else if (a->dist && strcmp(a->dist, "gauss")) {
		cli_error("quantize", "--dist: unknown distribution '%s' (known: gauss, uniform, laplace)", a->dist);
		return false;
	}
	if (a->outliers_in && !strcmp(a->outliers_in, "tensor"))
		c->place = PROBE_PLACE_TENSOR;
	else if (a->outliers_in && strcmp(a->outliers_in, "blocks")) {
		cli_error("quantize", "--outliers-in: unknown placement '%s' (known: blocks, tensor)", a->outliers_in);
		return false;
	}
	if (!a->draws)
		return true;
	unsigned long long u;
	if (!cli_parse_u64("quantize", "--draws", a->draws, &u))
		return false;
	if (u < 1 || u > PROBE_DRAWS_MAX) {
		cli_error("quantize", "--draws: %s is out of range (1..%d)", a->draws, PROBE_DRAWS_MAX);
		return false;
	}
	if (u > 1 && !quant_mode_draws(c->mode)) {
		cli_error("quantize", "--draws: %s draws need --mode sr or sr-equal (%s gives the same every time)",
		          a->draws, fmt_mode_name(c->mode));
		return false;
	}
	c->draws = (size_t)u;
	return true;
}

/* Everything but --outliers into c and f: false (reported) when bad. */
static bool parse_cfg(const quantize_random_args *a, const quant_opts *o, bool rht, bool csv, rht_probe_cfg *c,
                      random_formats *f)
{
	if (a->value) {
		cli_error("quantize", "--random: takes no VALUE (got '%s')", a->value);
		return false;
	}
	if (csv) {
		cli_error("quantize", "--csv: not with --random (it prints a table of figures)");
		return false;
	}
	if (!parse_formats(a->to, o, f) || !check_formats(a, f, rht))
		return false;
	for (size_t j = 0; j < f->count; j++)
		f->k[j].rht = rht && !a->compare;
	if (rht || a->compare)
		f->unit = f->unit / gcd_of(f->unit, 16) * 16;
	*c = (rht_probe_cfg){ .dist = PROBE_DIST_GAUSS, .unit = f->unit, .place = PROBE_PLACE_BLOCKS, .seed = o->seed,
		          .mode = o->mode, .draws = 1 };
	return parse_n(a->random, f, c) && parse_draws(a, c);
}

static void print_header(const rht_probe_cfg *c, const random_formats *f)
{
	for (size_t j = 0; j < f->count; j++)
		printf("%s%s", j ? ", " : "", f->name[j]);
	printf(" on %zu generated values (%s, mean 0, standard deviation 1; seed %llu)", c->n,
	       c->dist == PROBE_DIST_GAUSS ? "gauss" : c->dist == PROBE_DIST_UNIFORM ? "uniform" : "laplace",
	       (unsigned long long)c->seed);
	if (c->outliers && c->place == PROBE_PLACE_BLOCKS)
		printf(", %zu outlier%s of +-%g in %zu of the %zu blocks of %zu (one each)", c->outliers,
		       c->outliers == 1 ? "" : "s", c->outlier_value, c->outliers, c->n / c->unit, c->unit);
	else if (c->outliers)
		printf(", %zu outlier%s of +-%g anywhere", c->outliers, c->outliers == 1 ? "" : "s", c->outlier_value);
	printf("; elements %s", fmt_mode_name(c->mode));
	if (c->draws > 1)
		printf(", %zu draws", c->draws);
	char b[256];
	blocks_text(b, sizeof b, f);
	printf("\nblocks: %s", b);
	for (size_t j = 0; j < f->count; j++)
		if (!quant_get(f->k[j].fmt)->nvfp4) {   /* one rule for every MX format */
			printf("; MX scale rule %s", quant_rule_name(f->k[j].rule));
			break;
		}
	printf("\nbits: per element, the block scales and nvfp4's 32-bit tensor scale included;\n"
	       "errors ||Q(x) - x|| / ||x||, Q rotated back under the RHT (H is orthogonal: the same as\n"
	       "for the rotated values the GEMM multiplies)%s\n\n",
	       c->draws > 1 ? "; the root mean square over the draws" : "");
	printf("format     transform  tensor_scale  bits       error     inliers   outliers  flushed   saturated%s\n",
	       c->draws > 1 ? "  sr_var    sr_bias   sr_noise" : "");
}

/* A row: its first word the format, with +rht for the rotated arm (a
 * name of its own for the claims of a lesson). */
static void print_row(const rht_probe_cast *k, const rht_probe_arm *a, const rht_probe_cfg *c)
{
	const quant_info *q = quant_get(k->fmt);
	char name[40], ts[32], out[32], f[32], s[32];
	snprintf(name, sizeof name, "%s%s", q->name, k->rht ? "+rht" : "");
	if (q->nvfp4)
		snprintf(ts, sizeof ts, "%.4g", (double)a->tensor_scale);
	else
		snprintf(ts, sizeof ts, "-");   /* MX has no tensor scale */
	if (c->outliers)
		snprintf(out, sizeof out, "%.4g", a->outlier_error);
	else
		snprintf(out, sizeof out, "-");
	snprintf(f, sizeof f, "%.3f%%", 100 * a->flushed);
	snprintf(s, sizeof s, "%.3f%%", 100 * a->saturated);
	printf("%-10s %-10s %-13s %-10.8g %-9.4g %-9.4g %-9s %-9s %s", name, k->rht ? "rht" : "plain", ts, a->bits,
	       a->error, a->inlier_error, out, f, s);
	if (c->draws > 1)
		printf("%*s  %-9.4g %-9.4g %.4g", 9 - (int)strlen(s), "", a->sr_var, a->sr_bias, a->sr_noise);
	printf("\n");
}

int quantize_random(const quantize_random_args *a, const quant_opts *o, bool rht, bool csv)
{
	rht_probe_cfg c;
	random_formats f;
	if (!parse_cfg(a, o, rht, csv, &c, &f) || (a->outliers && !parse_outliers(a->outliers, &c)))
		return CLI_USAGE;
	char why[256];
	if (rht_probe_cfg_check(&c, why, sizeof why) != MP_OK) {
		size_t places = c.place == PROBE_PLACE_BLOCKS ? c.n / c.unit : c.n;
		if (c.outliers > places)
			cli_error("quantize", "--outliers: %s: more outliers than %s (%zu)", a->outliers,
			          c.place == PROBE_PLACE_BLOCKS ? "blocks (one each with --outliers-in blocks)" : "values",
			          places);
		else
			cli_error("quantize", "--random: %s", why);
		return CLI_USAGE;
	}
	float *x = malloc(c.n * sizeof *x);
	bool *is_out = malloc(c.n * sizeof *is_out);
	/* a row per format, or the plain and rht rows of nvfp4 under --compare-rht */
	size_t rows = a->compare ? 2 : f.count;
	rht_probe_arm arms[QUANT_COUNT + 1];
	rht_probe_cast k[QUANT_COUNT + 1];
	for (size_t r = 0; r < rows; r++) {
		k[r] = f.k[a->compare ? 0 : r];
		k[r].rht = a->compare ? r == 1 : k[r].rht;
	}
	int rc = CLI_OK;
	if (!x || !is_out || rht_probe_values(x, is_out, &c) != MP_OK)
		rc = CLI_ENV;
	for (size_t r = 0; r < rows && rc == CLI_OK; r++)
		if (rht_probe_run(&arms[r], x, is_out, &c, &k[r]) != MP_OK)
			rc = CLI_ENV;
	free(x);
	free(is_out);
	if (rc != CLI_OK) {
		cli_error("quantize", "--random: out of memory");
		return rc;
	}
	print_header(&c, &f);
	for (size_t r = 0; r < rows; r++)
		print_row(&k[r], &arms[r], &c);
	return cli_flush_stdout("quantize") ? CLI_OK : CLI_ENV;
}
