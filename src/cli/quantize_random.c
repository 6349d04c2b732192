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
	printf("Generated tensor (nvfp4 only; no VALUE, no --csv):\n"
	       "  --random N    quantize N generated values (a multiple of 16, at most 2^24)\n"
	       "                as one tensor, by the trainer's NVFP4 rules, and print a table:\n"
	       "                error ||Q(x) - x|| / ||x||, inliers and outliers (the same over\n"
	       "                the values that are not outliers, and over the outliers),\n"
	       "                flushed (nonzero cast to 0) and saturated (clipped at 6 s_b s_t)\n"
	       "                shares; with --rht the values are rotated before the cast and\n"
	       "                Q rotated back before the errors are measured (H orthogonal:\n"
	       "                the errors equal those of the rotated values, the ones the\n"
	       "                GEMM multiplies; flushed and saturated count rotated values)\n"
	       "  --dist D      gauss (default), uniform or laplace (heavier tails), each of\n"
	       "                mean 0 and standard deviation 1\n"
	       "  --outliers K:V  plant K outliers of value +V or -V (random signs), which\n"
	       "                replace the values at their places (default none)\n"
	       "  --outliers-in W  blocks (default): each outlier in its own block, K distinct\n"
	       "                blocks of 16 at random, a random place in each; tensor: K\n"
	       "                distinct places anywhere (two may share a block)\n"
	       "  --compare-rht  two rows, plain and rht, on the same values and draws\n"
	       "  --draws R     with --mode sr: R draws (default 1); errors are then root mean\n"
	       "                squares over the draws, and sr_var (the mean over elements of\n"
	       "                each element's variance over the draws, 1/(R-1), over\n"
	       "                ||x||^2 / N), sr_bias (||mean of the draws - x|| / ||x||) and\n"
	       "                sr_noise (sqrt(sr_var / R): the bias sampling alone gives an\n"
	       "                unbiased SR) are shown\n"
	       "  --seed S      the values, the outliers and the draws (default 0); the same\n"
	       "                figures on every machine and SIMD path\n");
}

bool quantize_random_stray(const quantize_random_args *a)
{
	const char *name = a->dist ? "--dist" : a->outliers ? "--outliers" : a->outliers_in ? "--outliers-in"
	                   : a->draws ? "--draws" : a->compare ? "--compare-rht" : NULL;
	if (!name || a->random)
		return false;
	cli_error("quantize", "%s: only with --random N (a generated tensor)", name);
	return true;
}

/* --outliers K:V into c: false (reported) when bad. */
static bool parse_outliers(const char *text, probe_cfg *c)
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

/* Everything but --outliers into c: false (reported) when bad. */
static bool parse_cfg(const quantize_random_args *a, const quant_opts *o, bool csv, probe_cfg *c)
{
	if (a->value) {
		cli_error("quantize", "--random: takes no VALUE (got '%s')", a->value);
		return false;
	}
	if (o->fmt != QUANT_NVFP4) {
		cli_error("quantize", "--random: only with --to nvfp4 (got %s)", quant_get(o->fmt)->name);
		return false;
	}
	if (a->block && o->block != 16) {
		cli_error("quantize", "--block: --random casts nvfp4's blocks of 16 (got %s)", a->block);
		return false;
	}
	if (csv) {
		cli_error("quantize", "--csv: not with --random (it prints a table of figures)");
		return false;
	}
	unsigned long long u;
	if (!cli_parse_u64("quantize", "--random", a->random, &u))
		return false;
	if (u == 0 || u % 16 || u > PROBE_N_MAX) {
		cli_error("quantize", "--random: %s is not a multiple of 16 in 16..16777216 (nvfp4's blocks, the RHT's 16s)",
		          a->random);
		return false;
	}
	*c = (probe_cfg){ .n = (size_t)u, .dist = PROBE_DIST_GAUSS, .place = PROBE_PLACE_BLOCKS, .seed = o->seed,
		          .mode = o->mode, .draws = 1 };
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
	if (a->draws) {
		if (!cli_parse_u64("quantize", "--draws", a->draws, &u))
			return false;
		if (u < 1 || u > PROBE_DRAWS_MAX) {
			cli_error("quantize", "--draws: %s is out of range (1..%d)", a->draws, PROBE_DRAWS_MAX);
			return false;
		}
		if (u > 1 && c->mode != FMT_SR) {
			cli_error("quantize", "--draws: %s draws need --mode sr (rne gives the same every time)", a->draws);
			return false;
		}
		c->draws = (size_t)u;
	}
	return true;
}

static void print_header(const probe_cfg *c)
{
	printf("nvfp4 on %zu generated values (%s, mean 0, standard deviation 1; seed %llu)", c->n,
	       c->dist == PROBE_DIST_GAUSS ? "gauss" : c->dist == PROBE_DIST_UNIFORM ? "uniform" : "laplace",
	       (unsigned long long)c->seed);
	if (c->outliers && c->place == PROBE_PLACE_BLOCKS)
		printf(", %zu outlier%s of +-%g in %zu of the %zu blocks (one each)", c->outliers,
		       c->outliers == 1 ? "" : "s", c->outlier_value, c->outliers, c->n / 16);
	else if (c->outliers)
		printf(", %zu outlier%s of +-%g anywhere", c->outliers, c->outliers == 1 ? "" : "s", c->outlier_value);
	printf("; elements %s", fmt_mode_name(c->mode));
	if (c->draws > 1)
		printf(", %zu draws", c->draws);
	printf("\nerrors ||Q(x) - x|| / ||x||, Q rotated back under the RHT (H is orthogonal: the same as\n"
	       "for the rotated values the GEMM multiplies)%s\n\n",
	       c->draws > 1 ? "; the root mean square over the draws" : "");
	printf("transform  tensor_scale  error     inliers   outliers  flushed   saturated%s\n",
	       c->draws > 1 ? "  sr_var    sr_bias   sr_noise" : "");
}

static void print_row(const char *name, const probe_arm *a, const probe_cfg *c)
{
	char out[32], f[32], s[32];
	if (c->outliers)
		snprintf(out, sizeof out, "%.4g", a->outlier_error);
	else
		snprintf(out, sizeof out, "-");
	snprintf(f, sizeof f, "%.3f%%", 100 * a->flushed);
	snprintf(s, sizeof s, "%.3f%%", 100 * a->saturated);
	printf("%-10s %-13.4g %-9.4g %-9.4g %-9s %-9s %-9s", name, (double)a->tensor_scale, a->error, a->inlier_error,
	       out, f, s);
	if (c->draws > 1)
		printf("  %-9.4g %-9.4g %.4g", a->sr_var, a->sr_bias, a->sr_noise);
	printf("\n");
}

int quantize_random(const quantize_random_args *a, const quant_opts *o, bool rht, bool csv)
{
	probe_cfg c;
	if (!parse_cfg(a, o, csv, &c) || (a->outliers && !parse_outliers(a->outliers, &c)))
		return CLI_USAGE;
	const char *why;
	if (probe_cfg_check(&c, &why) != MP_OK) {
		if (c.outliers > (c.place == PROBE_PLACE_BLOCKS ? c.n / 16 : c.n))
			cli_error("quantize", "--outliers: %s: more outliers than %s (%zu)", a->outliers,
			          c.place == PROBE_PLACE_BLOCKS ? "blocks (one each with --outliers-in blocks)" : "values",
			          c.place == PROBE_PLACE_BLOCKS ? c.n / 16 : c.n);
		else
			cli_error("quantize", "--random: %s", why);
		return CLI_USAGE;
	}
	float *x = malloc(c.n * sizeof *x);
	bool *is_out = malloc(c.n * sizeof *is_out);
	int rc = CLI_OK;
	probe_arm arms[2];
	bool want[2] = { a->compare || !rht, a->compare || rht };
	if (!x || !is_out || probe_values(x, is_out, &c) != MP_OK)
		rc = CLI_ENV;
	for (int k = 0; k < 2 && rc == CLI_OK; k++)
		if (want[k] && probe_run(&arms[k], x, is_out, &c,
		                         &(probe_cast){ .fmt = QUANT_NVFP4, .block = 16, .rht = k == 1 }) != MP_OK)
			rc = CLI_ENV;
	free(x);
	free(is_out);
	if (rc != CLI_OK) {
		cli_error("quantize", "--random: out of memory");
		return rc;
	}
	print_header(&c);
	for (int k = 0; k < 2; k++)
		if (want[k])
			print_row(k ? "rht" : "plain", &arms[k], &c);
	return cli_flush_stdout("quantize") ? CLI_OK : CLI_ENV;
}
