#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/infer.h"
#include "util/rng.h"

mp_status infer_init(gpt_model *m, gpt_config c, const float *params, size_t B, size_t t)
{
	mp_status st = gpt_init(m, c, B, t, 0);
	if (st == MP_OK)
		memcpy(m->params_memory, params, m->num_params * sizeof(float));
	return st;
}

mp_status infer_loss_sum(gpt_model *m, const int *inputs, const int *targets, size_t nwin, double *sum)
{
	size_t B = m->B, t = m->t;
	int *in = malloc(B * t * sizeof *in), *tg = malloc(B * t * sizeof *tg);
	mp_status st = in && tg ? MP_OK : MP_ENOMEM;
	double total = 0;
	for (size_t w = 0; st == MP_OK && w < nwin; w += B) {
		size_t nb = nwin - w < B ? nwin - w : B;
		/* a last, partial batch repeats its first window; only real windows count */
		for (size_t b = 0; b < B; b++) {
			size_t src = w + (b < nb ? b : 0);
			memcpy(in + b * t, inputs + src * t, t * sizeof *in);
			memcpy(tg + b * t, targets + src * t, t * sizeof *tg);
		}
		st = gpt_forward(m, NULL, in, tg);
		for (size_t i = 0; st == MP_OK && i < nb * t; i++)
			total += m->acts.losses[i];
	}
	free(in);
	free(tg);
	*sum = total;
	return st;
}

mp_status infer_eval_text(gpt_model *m, const unsigned char *text, size_t n, double *loss, size_t *tokens)
{
	size_t t = m->t, nwin = n > t ? (n - 1) / t : 0;
	*loss = NAN;
	*tokens = 0;
	if (nwin == 0)
		return MP_EINVAL;
	size_t chunk = m->B * 64;   /* windows converted at a time */
	int *in = malloc(chunk * t * sizeof *in), *tg = malloc(chunk * t * sizeof *tg);
	mp_status st = in && tg ? MP_OK : MP_ENOMEM;
	double sum = 0;
	for (size_t w = 0; st == MP_OK && w < nwin; w += chunk) {
		size_t nc = nwin - w < chunk ? nwin - w : chunk;
		for (size_t k = 0; k < nc; k++)
			for (size_t i = 0; i < t; i++) {
				in[k * t + i] = text[(w + k) * t + i];
				tg[k * t + i] = text[(w + k) * t + i + 1];
			}
		double s;
		st = infer_loss_sum(m, in, tg, nc, &s);
		sum += s;
	}
	free(in);
	free(tg);
	if (st != MP_OK)
		return st;
	*tokens = nwin * t;
	*loss = sum / (double)*tokens;
	return MP_OK;
}

/* Index of the token drawn from logits (V) under the options, with u
 * uniform in [0, 1). */
static size_t draw(const float *logits, size_t V, const infer_sample_opts *o, double u, double *p)
{
	size_t best = 0;
	for (size_t v = 1; v < V; v++)
		if (logits[v] > logits[best])
			best = v;
	if (o->temperature <= 0)
		return best;
	/* the k-th largest logit: tokens below it are left out */
	double cut = -INFINITY;
	if (o->top_k > 0 && o->top_k < V) {
		for (size_t v = 0; v < V; v++)
			p[v] = logits[v];
		for (size_t k = 0; k < o->top_k; k++) {
			size_t mx = 0;
			for (size_t v = 1; v < V; v++)
				if (p[v] > p[mx])
					mx = v;
			cut = p[mx];
			p[mx] = -INFINITY;
		}
	}
	double z = 0;
	for (size_t v = 0; v < V; v++) {
		p[v] = logits[v] >= cut ? exp(((double)logits[v] - logits[best]) / o->temperature) : 0;
		z += p[v];
	}
	double acc = 0;
	for (size_t v = 0; v < V; v++) {
		acc += p[v] / z;
		if (u < acc && p[v] > 0)
			return v;
	}
	return best;   /* u within rounding of 1 */
}

mp_status infer_sample(gpt_model *m, const int *prompt, size_t np, const infer_sample_opts *o, int *out)
{
	size_t T = m->t, V = m->config.V, B = m->B;
	if (np == 0)
		return MP_EINVAL;
	for (size_t i = 0; i < np; i++)
		if (prompt[i] < 0 || (size_t)prompt[i] >= V)
			return MP_EINVAL;
	int *in = calloc(B * T, sizeof *in), *ctx = malloc((np + o->tokens) * sizeof *ctx);
	double *p = malloc(V * sizeof *p);
	mp_status st = in && ctx && p ? MP_OK : MP_ENOMEM;
	if (st == MP_OK)
		memcpy(ctx, prompt, np * sizeof *ctx);
	size_t len = np;
	for (size_t k = 0; st == MP_OK && k < o->tokens; k++) {
		size_t n = len < T ? len : T;
		memcpy(in, ctx + len - n, n * sizeof *in);
		for (size_t i = n; i < T; i++)
			in[i] = 0;   /* after the last real token: causal attention never sees it */
		st = gpt_forward(m, NULL, in, NULL);
		if (st != MP_OK)
			break;
		double u = (double)(rng_mix64(o->seed ^ rng_mix64(k)) >> 11) * 0x1p-53;
		ctx[len] = (int)draw(m->acts.logits + (n - 1) * V, V, o, u, p);
		out[k] = ctx[len++];
	}
	free(in);
	free(ctx);
	free(p);
	return st;
}
