/* The Training lab's fp8 view and its loss panels side by side
 * (screen_train.c draws the rest of the lab).
 *
 * Thread safety: the worker, between two steps of a trainer, copies what
 * the view needs from the trainer's fp8 scaling state into a copy of its
 * own (fp8v_capture), and once every policy has done the step publishes all
 * of them under the lab's lock (fp8v_copy); the UI thread copies those under
 * the same lock and draws only its own copy. Nothing here reads an
 * fp8_state outside fp8v_capture. */
#ifndef MIXPREC_TUI_SCREEN_TRAIN_FP8_H
#define MIXPREC_TUI_SCREEN_TRAIN_FP8_H

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

#include "plot/plot.h"
#include "train/fp8scale.h"
#include "util/status.h"

/* Steps of history kept for the sparklines; the most policies drawn. */
enum { FP8V_HIST = 64, FP8V_MAXPOL = 16 };

/* One quantized tensor after the policy's last step. */
typedef struct {
	char name[48];             /* "h.0.mlp.c_fc.input" */
	int role;                  /* fp8_role from the name's last part; -1 for another */
	float amax, scale;
	double overflow_frac, underflow_frac;
} fp8v_tensor;

/* One policy's fp8 scaling after its last step. */
typedef struct {
	bool scaled;               /* the policy scales tensors; nothing below is set otherwise */
	size_t steps;              /* steps recorded */
	size_t ntensors;
	fp8v_tensor *tensors;      /* (ntensors) */
	double overflow, underflow;   /* the last step's shares of every element cast */
	/* the last min(steps, FP8V_HIST) steps; step k (0-based) at [k % FP8V_HIST] */
	double hist_over[FP8V_HIST], hist_under[FP8V_HIST];
	double hist_lmin[FP8V_HIST], hist_lmax[FP8V_HIST];   /* min, max over the tensors of log2(scale) */
} fp8v_policy;

/* Frees p's tensors and leaves it empty (not scaled, no steps). */
void fp8v_clear(fp8v_policy *p);

/* Records one step of the trainer whose scaling state is st (NULL: a
 * policy without scaling; p stays not scaled). The worker's, with the lock
 * the UI copies under held. MP_ENOMEM (p unchanged) when the tensors' copy
 * cannot grow. */
mp_status fp8v_capture(fp8v_policy *p, const fp8_state *st);

/* dst = src, dst's tensors reallocated when the count differs; MP_ENOMEM
 * leaves dst cleared. */
mp_status fp8v_copy(fp8v_policy *dst, const fp8v_policy *src);

/* The fp8 view in rows x cols cells at (y, 0) of w: a column per policy
 * (names[i], p[i]) with the last step's overflow and underflow shares (as
 * train --csv prints them, %.6g) and sparklines of recent steps, the worst
 * tensor by overflow, and per role (weight, input, grad_output) the min,
 * median and max of log2(scale) over its tensors, and sparklines of the
 * greatest and least log2(scale). Policies that scale come first, the
 * others after them saying "no fp8 scaling"; columns that do not fit the
 * width are counted on the first row, rows that do not fit are left out
 * from the bottom. Sparklines: 8 levels, U+2581..U+2588 or "_.:-=+*#". */
void fp8v_draw(WINDOW *w, int y, int rows, int cols, const fp8v_policy *p, const char *const *names, size_t np);

/* One loss panel per series of base (base->series[i], titled names[i]) in
 * rows x cols cells at (y, 0) of w, side by side (one per 40 columns; more,
 * down to the plot's narrowest, when a second row of panels would not
 * fit), each keeping series i's colour and mark, all with base's x range
 * and one y range over every series, so that they compare. */
void train_panels_draw(WINDOW *w, int y, int rows, int cols, const plot_figure *base, const char *const *names,
                       plot_canvas *c);

#endif
