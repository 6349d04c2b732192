#include <math.h>

#include "budget/tinygpt.h"

static int whole(double v)
{
	return isfinite(v) && v >= 1 && v == floor(v);
}

/* One half-batch of b sequences: bytes kept and scratch. */
static void half_bytes(const budget_tiny_gpt *g, double b, double *kept, double *scratch)
{
	double V = g->V, C = g->C, L = g->L, NH = g->NH, t = g->t;
	double wide = fmax(V, 4 * C);
	double tokens = b * t;
	double kept_tok = L * (18 * C + 4 + 2 * NH * t) + 4 * C + 2 * V + 3;
	double scratch_tok = 13 * C + V + wide;
	double once = 2 * t * t + wide * C + 5 * t * (C / NH) + t * t;
	*kept = 4 * tokens * kept_tok;
	*scratch = 4 * (tokens * scratch_tok + once);
}

mp_status budget_tiny_gpt_activations(budget_tiny_acts *out, const budget_tiny_gpt *g)
{
	if (!out || !g || !whole(g->V) || !whole(g->C) || !whole(g->L) || !whole(g->NH) || !whole(g->B) ||
	    !whole(g->t) || fmod(g->C, g->NH) != 0)
		return MP_EINVAL;
	double halves[2] = { floor((g->B + 1) / 2), floor(g->B / 2) };
	budget_tiny_acts r = { 0 };
	for (int h = 0; h < 2; h++) {
		if (halves[h] == 0)
			continue;
		double k, s;
		half_bytes(g, halves[h], &k, &s);
		r.kept += k;
		r.scratch += s;
	}
	r.total = r.kept + r.scratch;
	*out = r;
	return MP_OK;
}
