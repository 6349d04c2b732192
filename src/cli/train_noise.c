#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/train_noise.h"

void noise_log_add(noise_log *l, size_t i, const train_stats *s)
{
	if (i >= NOISE_LOG_POLICIES || isnan(s->grad_noise_ratio) || l->nomem)
		return;
	if (l->n[i] == l->cap[i]) {
		size_t cap = l->cap[i] ? 2 * l->cap[i] : 256;
		double (*r)[2] = realloc(l->r[i], cap * sizeof *r);
		if (!r) {
			l->nomem = true;
			return;
		}
		l->r[i] = r;
		l->cap[i] = cap;
	}
	l->r[i][l->n[i]][0] = s->grad_noise_ratio;
	l->r[i][l->n[i]][1] = s->wgrad_noise_ratio;
	l->n[i]++;
}

bool noise_log_figures(const noise_log *l, size_t i, int k, noise_figures *out, size_t *steps)
{
	size_t n = i < NOISE_LOG_POLICIES ? l->n[i] : 0;
	*steps = n;
	if (n == 0 || isnan(l->r[i][0][k]))   /* a recipe measures a ratio on every step or none */
		return false;
	size_t tail = (n + 9) / 10;   /* the last tenth, rounded up */
	double sum = 0;
	*out = (noise_figures){ .first = l->r[i][0][k], .min = l->r[i][0][k] };
	for (size_t j = 0; j < n; j++) {
		double r = l->r[i][j][k];
		out->min = r < out->min ? r : out->min;
		out->below += r < sqrt(3.0);
		if (j >= n - tail)
			sum += r;
	}
	out->last = sum / (double)tail;
	return true;
}

/* v to 4 significant digits into buf (16 bytes), or "-" without it. */
static void figure(char *buf, bool have, double v)
{
	if (have)
		snprintf(buf, 16, "%.4g", v);
	else
		snprintf(buf, 16, "-");
}

void noise_log_print(const noise_log *l, const train_policy *pols, size_t np, int pw)
{
	bool any = false;
	for (size_t i = 0; i < np; i++)
		any |= pols[i].cast != CAST_SCALING_NONE;
	if (!any || l->nomem)
		return;
	/* the prose names no column as a blank-separated word, so that a lesson
	 * claim COLUMN[ROW] finds the header line (teach/claim_eval.c) */
	printf("\nGradients over their quantization noise (below about sqrt(3) = 1.73, quantized\n"
	       "training stops helping: arXiv:2505.19115). gnr: ||G|| / ||Q(G) - G|| of the\n"
	       "output gradients cast; wnr: ||dW|| / ||dW_q - dW|| of the weight gradients\n"
	       "(block recipes); _first: at the first step; _last: the mean over the last tenth\n"
	       "of the casting steps; _min: the smallest; below: how many had wnr < 1.73;\n"
	       "steps: how many cast\n");
	printf("%-*s %9s %8s %9s %8s %8s %5s %5s\n", pw, "policy", "gnr_first", "gnr_last", "wnr_first", "wnr_last",
	       "wnr_min", "below", "steps");
	for (size_t i = 0; i < np; i++) {
		if (pols[i].cast == CAST_SCALING_NONE)
			continue;
		noise_figures g, w;
		size_t steps;
		bool hg = noise_log_figures(l, i, 0, &g, &steps), hw = noise_log_figures(l, i, 1, &w, &steps);
		char c[5][16], below[16] = "-";
		figure(c[0], hg, g.first);
		figure(c[1], hg, g.last);
		figure(c[2], hw, w.first);
		figure(c[3], hw, w.last);
		figure(c[4], hw, w.min);
		if (hw)
			snprintf(below, sizeof below, "%zu", w.below);
		printf("%-*s %9s %8s %9s %8s %8s %5s %5zu\n", pw, pols[i].name, c[0], c[1], c[2], c[3], c[4], below, steps);
	}
}

void noise_log_free(noise_log *l)
{
	for (size_t i = 0; i < NOISE_LOG_POLICIES; i++)
		free(l->r[i]);
	*l = (noise_log){ .nomem = false };
}
