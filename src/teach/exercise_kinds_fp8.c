/* Exercise kinds about per-tensor fp8 scaling (lesson low-precision-training,
 * sections 1 and 2): the scale Transformer Engine's delayed recipe gives
 * the next step after an amax history (fp8.1), and the step at which a
 * spike saturates under delayed scaling, by how much, and for how long the
 * history keeps the scale low (fp8.2). Every answer comes from
 * train/amax_replay.h (and train/fp8scale.h's rules under it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teach/exercise.h"
#include "teach/exercise_solve.h"
#include "train/amax_replay.h"
#include "train/fp8scale.h"
#include "util/strbuf.h"

enum { HIST_VALUES_MAX = 16, SPIKE_STEPS_MAX = 4096 };

/* ---- shared helpers ---------------------------------------------------------- */

/* A whole-number parameter in lo..hi. */
static bool whole_param(solve_ctx *c, const char *name, double lo, double hi, size_t *out)
{
	double v;
	if (!exs_param_double(c, name, &v))
		return false;
	if (v != floor(v) || v < lo || v > hi)
		return exs_fail(c, "parameter %s must be a whole number, %g..%g", name, lo, hi);
	*out = (size_t)v;
	return true;
}

/* The margin M (a whole number of binades, 0 when absent). */
static bool margin_param(solve_ctx *c, int *margin)
{
	*margin = 0;
	if (!ex_variant_get(c->ex, c->v, "margin"))
		return true;
	double v;
	if (!exs_param_double(c, "margin", &v))
		return false;
	if (v != floor(v) || fabs(v) > FP8_MARGIN_MAX)
		return exs_fail(c, "parameter margin must be a whole number, -%d..%d", FP8_MARGIN_MAX, FP8_MARGIN_MAX);
	*margin = (int)v;
	return true;
}

/* The fp8 format (fp8-e4m3 when absent). */
static bool fp8_format_param(solve_ctx *c, fmt_id *fmt)
{
	const fmt_info *f = exs_param_format(c, "format", FMT_E4M3);
	if (!f)
		return false;
	if (f->id != FMT_E4M3 && f->id != FMT_E5M2)
		return exs_fail(c, "parameter format must be fp8-e4m3 or fp8-e5m2 (got %s)", f->name);
	*fmt = f->id;
	return true;
}

/* The comma-separated amax history ("0.5,2.5,1"), oldest first, as floats
 * (positive and finite). */
static bool history_param(solve_ctx *c, float *xs, size_t *n)
{
	const char *t = ex_variant_get(c->ex, c->v, "hist");
	*n = 0;
	if (!t)
		return exs_fail(c, "parameter hist is missing");
	char buf[EX_VALUE_MAX];
	snprintf(buf, sizeof buf, "%s", t);
	char *save = NULL;
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (*n == HIST_VALUES_MAX)
			return exs_fail(c, "parameter hist holds more than %d values", HIST_VALUES_MAX);
		char *end;
		double v = strtod(w, &end);
		if (*end || !(v > 0) || !isfinite((float)v))
			return exs_fail(c, "parameter hist, value %zu '%s' must be a positive number", *n + 1, w);
		xs[(*n)++] = (float)v;
	}
	if (*n == 0)
		return exs_fail(c, "parameter hist holds no value");
	return true;
}

static float fp8_max_of(fmt_id f)
{
	return amax_replay_fp8_max(f);
}

/* ---- kind: fp8-delayed-scale (fp8.1) ----------------------------------------- */

/* The delayed scale after hist[0..n) under algo, and the history's amax. */
static bool next_scale(solve_ctx *c, const float *hist, size_t n, const amax_replay_cfg *cfg, float *scale,
                       float *hamax)
{
	amax_replay_step steps[HIST_VALUES_MAX];
	if (amax_replay(steps, scale, hist, n, cfg) != MP_OK)
		return exs_fail(c, "cannot replay the history");
	float h[HIST_VALUES_MAX] = { 0 };
	size_t H = cfg->history < HIST_VALUES_MAX ? cfg->history : HIST_VALUES_MAX;
	for (size_t i = 0; i < n; i++)
		fp8_history_push(h, H, hist[i]);
	*hamax = fp8_history_amax(h, H, cfg->algo);
	return true;
}

static void delayed_scale_mistakes(solve_ctx *c, const float *hist, size_t n, float fmax, float hamax,
                                   int margin, fmt_id fmt)
{
	float all = 0;
	for (size_t i = 0; i < n; i++)
		all = fmaxf(all, hist[i]);
	double m = ldexp(1.0, -margin);
	exs_mistake_num(c, "history_amax", all, "%s is the largest of every value listed; only the last H steps are in "
	                "the history, the older ones have dropped out.", exs_g(all));
	exs_mistake_num(c, "history_amax", hist[n - 1], "%s is the newest amax alone (most_recent); the max algorithm "
	                "takes the largest of the last H.", exs_g(hist[n - 1]));
	exs_mistake_num(c, "scale", fmax * m / all, "That scale comes from the largest of every value listed; the "
	                "history holds only the last H steps.");
	exs_mistake_num(c, "scale", fmax * m / hist[n - 1], "That is the most_recent scale; with max the history's "
	                "largest amax sets it.");
	if (margin)
		exs_mistake_num(c, "scale", fmax / hamax, "That leaves out the margin: divide by 2^%d as well.", margin);
	if (margin)
		exs_mistake_num(c, "scale", fmax / hamax * ldexp(1.0, margin), "The margin divides the scale by 2^margin "
		                "(it leaves headroom); that multiplies by it.");
	exs_mistake_num(c, "scale", hamax / (fmax * m), "That is amax / fp8_max, the inverse: the scale multiplies the "
	                "tensor so that its amax lands on fp8_max.");
	float other = fp8_max_of(fmt == FMT_E4M3 ? FMT_E5M2 : FMT_E4M3);
	exs_mistake_num(c, "scale", other * m / hamax, "That uses %s, the other fp8 format's largest value; this "
	                "tensor is cast to %s.", exs_g(other), fmt_get(fmt)->name);
	exs_mistake_num(c, "recent_scale", fmax * m / hamax, "That is the max algorithm's scale; most_recent uses only "
	                "the newest amax, %s.", exs_g(hist[n - 1]));
}

bool exs_solve_fp8_delayed_scale(solve_ctx *c)
{
	float hist[HIST_VALUES_MAX];
	size_t n, H;
	int margin;
	fmt_id fmt = FMT_E4M3;
	if (!history_param(c, hist, &n) || !whole_param(c, "H", 1, HIST_VALUES_MAX, &H) || !margin_param(c, &margin) ||
	    !fp8_format_param(c, &fmt))
		return false;
	amax_replay_cfg cfg = { .fmt = fmt, .history = H, .algo = AMAX_ALGO_MAX, .margin = margin };
	float scale, hamax, recent, recent_amax;
	if (!next_scale(c, hist, n, &cfg, &scale, &hamax))
		return false;
	cfg.algo = AMAX_ALGO_MOST_RECENT;
	if (!next_scale(c, hist, n, &cfg, &recent, &recent_amax))
		return false;
	float fmax = fp8_max_of(fmt);
	exs_set_num(c, "history_amax", hamax);
	exs_set_num(c, "scale", scale);
	exs_set_num(c, "recent_scale", recent);
	delayed_scale_mistakes(c, hist, n, fmax, hamax, margin, fmt);

	size_t first = n > H ? n - H : 0;
	strbuf_printf(&c->w, "The history holds the amax of the last H = %zu steps, the newest entering after its\n"
	              "step: ", H);
	for (size_t i = first; i < n; i++)
		strbuf_printf(&c->w, "%s%s", i > first ? ", " : "", exs_g(hist[i]));
	if (first)
		strbuf_printf(&c->w, " (the %zu older value%s dropped out)", first, first > 1 ? "s have" : " has");
	strbuf_printf(&c->w, ".\nmax takes the largest, amax = %s. The next step casts with\n"
	              "  scale = fp8_max / amax / 2^margin = %s / %s / 2^%d = %s\n"
	              "(%s's largest value is %s): that amax x scale lands on %s / 2^%d.\n"
	              "most_recent takes the newest amax, %s: scale = %s / %s / 2^%d = %s.\n"
	              "Check with: mixprec amax --amax %s --history %zu --margin %d --format %s\n"
	              "(the scale of the step after the last).\n",
	              exs_g(hamax), exs_g(fmax), exs_g(hamax), margin, exs_g(scale), fmt_get(fmt)->name, exs_g(fmax),
	              exs_g(fmax), margin, exs_g(recent_amax), exs_g(fmax), exs_g(recent_amax), margin, exs_g(recent),
	              ex_variant_get(c->ex, c->v, "hist"), H, margin, fmt == FMT_E4M3 ? "e4m3" : "e5m2");
	return true;
}

/* ---- kind: fp8-spike (fp8.2) ------------------------------------------------- */

/* What the replay of a steady amax with one spike shows. */
typedef struct {
	size_t overflow_step;     /* 1-based; 0: none */
	double overshoot;         /* amax x scale / fp8_max there */
	size_t reduced;           /* steps after the spike cast below the steady scale */
	size_t recovered;         /* the first step back at the steady scale */
	float steady, low;        /* the scales before the spike and right after */
	bool current_saturates;
} spike_result;

static bool spike_replay(solve_ctx *c, float a, float F, size_t s, size_t H, fmt_id fmt, spike_result *r)
{
	size_t n = s + H + 2;
	float *amax = malloc(n * sizeof *amax);
	amax_replay_step *st = malloc(n * sizeof *st);
	if (!amax || !st) {
		free(amax);
		free(st);
		return exs_fail(c, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		amax[i] = i + 1 == s ? a * F : a;
	amax_replay_cfg cfg = { .fmt = fmt, .history = H, .algo = AMAX_ALGO_MAX };
	bool ok = amax_replay(st, NULL, amax, n, &cfg) == MP_OK;
	float fmax = fp8_max_of(fmt);
	*r = (spike_result){ .steady = st[s - 1].delayed_scale, .low = st[s].delayed_scale };
	for (size_t i = 0; ok && i < n; i++) {
		if (st[i].delayed_saturates && !r->overflow_step) {
			r->overflow_step = i + 1;
			r->overshoot = st[i].delayed_peak / fmax;
		}
		if (i + 1 > s && !r->recovered) {
			if (st[i].delayed_scale < r->steady)
				r->reduced++;
			else
				r->recovered = i + 1;
		}
		r->current_saturates |= st[i].current_saturates;
	}
	free(amax);
	free(st);
	return ok || exs_fail(c, "cannot replay the steps");
}

static void spike_mistakes(solve_ctx *c, const spike_result *r, size_t s, size_t H, float F, float fmax)
{
	exs_mistake_num(c, "overflow_step", (double)s + 1, "The spike's own step already casts with the old scale "
	                "(set for an amax %s times smaller): delayed scaling learns of the spike only after it.",
	                exs_g(F));
	exs_mistake_num(c, "overflow_step", (double)s - 1, "Step %zu still has the steady amax; nothing exceeds "
	                "fp8_max before the spike.", s - 1);
	exs_mistake_num(c, "overshoot", r->overshoot * fmax, "That is amax x scale itself; the question asks for it "
	                "as a multiple of fp8_max (%s).", exs_g(fmax));
	exs_mistake_num(c, "overshoot", 1 / r->overshoot, "That is fp8_max / (amax x scale), the inverse ratio.");
	exs_mistake_num(c, "reduced_steps", (double)H - 1, "The spike's amax enters the history after step %zu and "
	                "stays for H = %zu pushes: steps %zu to %zu all cast with the low scale.", s, H, s + 1, s + H);
	exs_mistake_num(c, "reduced_steps", (double)H + 1, "Step %zu's push drops the spike from the history, so step "
	                "%zu is back at the steady scale: %zu steps, not %zu.", s + H, s + H + 1, H, H + 1);
	exs_mistake_num(c, "reduced_steps", 1, "One step is most_recent's answer; with max the spike stays in the "
	                "window for all H = %zu steps.", H);
	exs_mistake_num(c, "recovered_step", (double)s + H, "Step %zu still has the spike in its history (it entered "
	                "after step %zu and leaves after step %zu's push).", s + H, s, s + H);
	exs_mistake_choice(c, "why_current", "history", "A history only remembers earlier steps: however long, it "
	                   "cannot hold a spike before it happens. Current scaling keeps none.");
	exs_mistake_choice(c, "why_current", "margin", "A margin lowers every scale by 2^margin and absorbs only a "
	                   "spike up to that factor; current scaling needs none.");
	exs_mistake_choice(c, "why_current", "saturate", "Both casts clip what exceeds fp8_max; under current scaling "
	                   "there is nothing to clip, because the scale comes from the step's own amax.");
}

bool exs_solve_fp8_spike(solve_ctx *c)
{
	double a, F;
	size_t s, H;
	fmt_id fmt = FMT_E4M3;
	if (!exs_param_positive(c, "a", &a) || !exs_param_positive(c, "F", &F) ||
	    !whole_param(c, "s", 2, SPIKE_STEPS_MAX, &s) || !whole_param(c, "H", 1, FP8_HISTORY_MAX, &H) ||
	    !fp8_format_param(c, &fmt))
		return false;
	float fmax = fp8_max_of(fmt);
	if (!(a <= fmax) || !(F * a < 3e38))
		return exs_fail(c, "parameter a must be at most %s (the first step casts with scale 1), and a x F finite",
		                exs_g(fmax));
	spike_result r = { 0 };
	if (!spike_replay(c, (float)a, (float)F, s, H, fmt, &r))
		return false;
	if (r.overflow_step != s || r.current_saturates)
		return exs_fail(c, "the spike of F = %s at step %zu does not saturate under delayed scaling alone: "
		                "F must be well above 1", exs_g(F), s);
	exs_set_num(c, "overflow_step", (double)r.overflow_step);
	exs_set_num(c, "overshoot", r.overshoot);
	exs_set_num(c, "reduced_steps", (double)r.reduced);
	exs_set_num(c, "recovered_step", (double)r.recovered);
	exs_set_choice(c, "why_current", "own");
	spike_mistakes(c, &r, s, H, (float)F, fmax);

	/* three calls: exs_g's ring holds 16 texts */
	strbuf_printf(&c->w, "Step 1 casts with scale 1; from step 2 on the history holds a = %s, so the scale\n"
	              "is %s / %s = %s and a x scale lands on %s.\n",
	              exs_g(a), exs_g(fmax), exs_g(a), exs_g(r.steady), exs_g(fmax));
	strbuf_printf(&c->w, "Step %zu, the spike, still casts with %s (its amax enters the history only after the\n"
	              "cast): %s x %s = %s, %s times fp8_max. It saturates: clipped to %s.\n"
	              "After it the history's max is %s, so steps %zu to %zu cast with %s / %s = %s\n",
	              s, exs_g(r.steady), exs_g(a * F), exs_g(r.steady), exs_g(a * F * r.steady), exs_g(r.overshoot),
	              exs_g(fmax), exs_g(a * F), s + 1, s + r.reduced, exs_g(fmax), exs_g(a * F), exs_g(r.low));
	strbuf_printf(&c->w, "(%zu steps, H = %zu: the values use 1/%s of the range); step %zu's push drops the spike\n"
	              "and step %zu is back at %s.\n"
	              "Current scaling divides by the step's own amax: at the spike %s / %s = %s, and the\n"
	              "largest element lands on %s. It never saturates (answer: own).\n"
	              "Check with: mixprec amax --history %zu --amax ",
	              r.reduced, H, exs_g(F), s + H, r.recovered, exs_g(r.steady), exs_g(fmax), exs_g(a * F),
	              exs_g(fmax / (a * F)), exs_g(fmax), H);
	for (size_t i = 1; i <= r.recovered; i++)
		strbuf_printf(&c->w, "%s%s", i > 1 ? "," : "", exs_g(i == s ? a * F : a));
	strbuf_printf(&c->w, "\n");
	return true;
}
