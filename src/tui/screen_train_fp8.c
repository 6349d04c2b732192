/* The Training lab's fp8 view and loss panels (src/tui/screen_train_fp8.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/app.h"
#include "tui/plotview.h"
#include "tui/screen_train_fp8.h"

/* --- the copies --- */

void fp8v_clear(fp8v_policy *p)
{
	free(p->tensors);
	memset(p, 0, sizeof *p);
}

static const char *const role_names[FP8_ROLES] = {
	[FP8_WEIGHT] = "weight", [FP8_INPUT] = "input", [FP8_GRAD_OUTPUT] = "grad_output" };

/* The role a tensor's name ends in ("h.0.mlp.c_fc.input": FP8_INPUT); -1
 * for another ending. */
static int role_of(const char *name)
{
	const char *dot = strrchr(name, '.');
	const char *last = dot ? dot + 1 : name;
	for (int r = 0; r < FP8_ROLES; r++)
		if (!strcmp(last, role_names[r]))
			return r;
	return -1;
}

mp_status fp8v_capture(fp8v_policy *p, const fp8_state *st)
{
	if (!st) {
		p->scaled = false;
		p->steps++;
		return MP_OK;
	}
	/* the tensors cast: a block left in bf16 (--bf16-last) has none, and
	 * its Linears come last, after every covered one */
	size_t n = 0;
	while (n < fp8_state_count(st) && fp8_state_covers(st, n / (FP8_LINEARS * FP8_ROLES)))
		n++;
	if (n != p->ntensors) {
		fp8v_tensor *t = realloc(p->tensors, (n ? n : 1) * sizeof *t);
		if (!t)
			return MP_ENOMEM;
		p->tensors = t;
		p->ntensors = n;
	}
	double lmin = INFINITY, lmax = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		fp8_tensor_stat s = fp8_state_stat(st, i);
		fp8v_tensor *t = &p->tensors[i];
		snprintf(t->name, sizeof t->name, "%s", s.name ? s.name : "");
		t->role = role_of(t->name);
		t->amax = s.amax;
		t->scale = s.scale;
		t->overflow_frac = s.overflow_frac;
		t->underflow_frac = s.underflow_frac;
		double l = s.scale > 0 ? log2((double)s.scale) : NAN;
		if (isfinite(l)) {
			lmin = fmin(lmin, l);
			lmax = fmax(lmax, l);
		}
	}
	size_t k = p->steps % FP8V_HIST;
	p->scaled = true;
	p->overflow = p->hist_over[k] = fp8_state_overflow_frac(st);
	p->underflow = p->hist_under[k] = fp8_state_underflow_frac(st);
	p->hist_lmin[k] = isfinite(lmin) ? lmin : NAN;
	p->hist_lmax[k] = isfinite(lmax) ? lmax : NAN;
	p->steps++;
	return MP_OK;
}

mp_status fp8v_copy(fp8v_policy *dst, const fp8v_policy *src)
{
	fp8v_tensor *t = dst->tensors;
	size_t cap = dst->ntensors;
	if (src->ntensors != cap) {
		free(t);
		t = src->ntensors ? malloc(src->ntensors * sizeof *t) : NULL;
		if (src->ntensors && !t) {
			dst->tensors = NULL;
			fp8v_clear(dst);
			return MP_ENOMEM;
		}
	}
	*dst = *src;
	dst->tensors = t;
	if (src->ntensors)
		memcpy(t, src->tensors, src->ntensors * sizeof *t);
	return MP_OK;
}

/* --- the fp8 view --- */

/* LABEL_W: the label column with the blank that keeps its longest label
 * ("  max, last 64", 14) off the first cell */
enum { LABEL_W = 15, CELL_MIN = 14, SPARK_LEVELS = 8 };

/* The last n steps of ring (oldest first) as a sparkline into out (up to
 * out_n bytes): each value v at level ceil((v - lo) / (hi - lo) * 7) of 8,
 * lo being 0 (from_zero: shares) or the least of them, hi the greatest; all
 * equal: the lowest level; a value that is not finite: a blank. */
static void sparkline(char *out, size_t out_n, const double *ring, size_t steps, size_t n, bool from_zero)
{
	static const char *const utf8[SPARK_LEVELS] = { "\u2581", "\u2582", "\u2583", "\u2584",
		                                        "\u2585", "\u2586", "\u2587", "\u2588" };
	static const char ascii[SPARK_LEVELS + 1] = "_.:-=+*#";
	double lo = from_zero ? 0 : INFINITY, hi = from_zero ? 0 : -INFINITY;
	size_t first = steps - n;
	for (size_t s = first; s < steps; s++) {
		double v = ring[s % FP8V_HIST];
		if (isfinite(v)) {
			lo = fmin(lo, v);
			hi = fmax(hi, v);
		}
	}
	size_t used = 0;
	out[0] = '\0';
	for (size_t s = first; s < steps; s++) {
		double v = ring[s % FP8V_HIST];
		int level = hi > lo && isfinite(v) ? (int)ceil((v - lo) / (hi - lo) * (SPARK_LEVELS - 1)) : 0;
		level = level < 0 ? 0 : level >= SPARK_LEVELS ? SPARK_LEVELS - 1 : level;
		char one[2] = { ascii[level], '\0' };
		const char *g = !isfinite(v) ? " " : theme_utf8() ? utf8[level] : one;
		size_t len = strlen(g);
		if (used + len + 1 > out_n)
			break;
		memcpy(out + used, g, len + 1);
		used += len;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The min, median (the mean of the middle two for an even count) and max of
 * log2(scale) over p's tensors of role r; false when it has none. */
static bool role_summary(const fp8v_policy *p, int r, double out[3])
{
	double *v = malloc((p->ntensors ? p->ntensors : 1) * sizeof *v);
	size_t n = 0;
	for (size_t i = 0; v && i < p->ntensors; i++)
		if (p->tensors[i].role == r && p->tensors[i].scale > 0)
			v[n++] = log2((double)p->tensors[i].scale);
	if (n) {
		qsort(v, n, sizeof *v, cmp_double);
		out[0] = v[0];
		out[1] = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
		out[2] = v[n - 1];
	}
	free(v);
	return n > 0;
}

/* The tensor with the greatest overflow share (the first of equals); NULL
 * when none overflowed. */
static const fp8v_tensor *worst_tensor(const fp8v_policy *p)
{
	const fp8v_tensor *w = NULL;
	for (size_t i = 0; i < p->ntensors; i++)
		if (p->tensors[i].overflow_frac > 0 && (!w || p->tensors[i].overflow_frac > w->overflow_frac))
			w = &p->tensors[i];
	return w;
}

/* A tensor's name (ASCII) in width columns: whole, else with its role
 * shortened (".grad_output" as ".go", ".input" as ".in", ".weight" as
 * ".w"), else its end after an ellipsis (the layer goes first, the role
 * and the Linear stay). */
static void put_name(WINDOW *w, int y, int x, int width, const fp8v_tensor *t)
{
	static const char *const shorts[FP8_ROLES] = { [FP8_WEIGHT] = "w", [FP8_INPUT] = "in",
		                                       [FP8_GRAD_OUTPUT] = "go" };
	char buf[64];
	snprintf(buf, sizeof buf, "%s", t->name);
	if ((int)strlen(buf) > width && t->role >= 0) {
		char *dot = strrchr(buf, '.');
		snprintf(dot + 1, sizeof buf - (size_t)(dot + 1 - buf), "%s", shorts[t->role]);
	}
	int len = (int)strlen(buf);
	if (len <= width || width < 2) {
		tui_put(w, y, x, width, ROLE_NORMAL, buf);
		return;
	}
	int used = tui_put(w, y, x, 1, ROLE_DIM, theme_glyph(GLYPH_ELLIPSIS));
	tui_put(w, y, x + used, width - used, ROLE_NORMAL, buf + len - (width - used));
}

/* The view's rows, in the order drawn (those past the space are left out). */
enum {
	ROW_HEAD, ROW_OVER, ROW_OVER_SPARK, ROW_UNDER, ROW_UNDER_SPARK, ROW_WORST, ROW_WORST_NAME, ROW_SCALE_HEAD,
	ROW_WEIGHT, ROW_INPUT, ROW_GRAD, ROW_LMAX_SPARK, ROW_LMIN_SPARK, ROW_COUNT
};

/* One policy's cell of row r at (y, x), width cw (the last column a gap). */
static void draw_cell(WINDOW *w, int y, int x, int cw, int r, const fp8v_policy *p, size_t nspark)
{
	int width = cw - 1;
	if (!p->scaled || !p->steps) {
		if (r == ROW_OVER)
			tui_put(w, y, x, width, ROLE_DIM, p->steps ? "no fp8 scaling" : "-");
		return;
	}
	if (p->ntensors == 0) {   /* --bf16-last covers every block: nothing is cast */
		if (r == ROW_OVER)
			tui_put(w, y, x, width, ROLE_DIM, "all blocks in bf16");
		if (r == ROW_UNDER)
			tui_put(w, y, x, width, ROLE_DIM, "(bf16-last)");
		return;
	}
	size_t n = nspark < p->steps ? nspark : p->steps;
	char line[FP8V_HIST * 4 + 1];
	double v[3];
	const fp8v_tensor *worst = worst_tensor(p);
	switch (r) {
	case ROW_OVER: tui_putf(w, y, x, width, p->overflow > 0 ? ROLE_BAD : ROLE_NORMAL, "%.6g", p->overflow); break;
	case ROW_UNDER: tui_putf(w, y, x, width, ROLE_NORMAL, "%.6g", p->underflow); break;
	case ROW_OVER_SPARK:
	case ROW_UNDER_SPARK:
	case ROW_LMAX_SPARK:
	case ROW_LMIN_SPARK: {
		const double *ring = r == ROW_OVER_SPARK ? p->hist_over : r == ROW_UNDER_SPARK ? p->hist_under
		                     : r == ROW_LMAX_SPARK ? p->hist_lmax : p->hist_lmin;
		sparkline(line, sizeof line, ring, p->steps, n, r == ROW_OVER_SPARK || r == ROW_UNDER_SPARK);
		tui_put(w, y, x, width, r == ROW_OVER_SPARK && p->overflow > 0 ? ROLE_BAD : ROLE_NORMAL, line);
		break;
	}
	case ROW_WORST:
		if (worst)
			tui_putf(w, y, x, width, ROLE_BAD, "%.6g", worst->overflow_frac);
		else
			tui_put(w, y, x, width, ROLE_DIM, "none");
		break;
	case ROW_WORST_NAME:
		if (worst)
			put_name(w, y, x, width, worst);
		break;
	case ROW_WEIGHT:
	case ROW_INPUT:
	case ROW_GRAD:
		if (!role_summary(p, r == ROW_WEIGHT ? FP8_WEIGHT : r == ROW_INPUT ? FP8_INPUT : FP8_GRAD_OUTPUT, v)) {
			tui_put(w, y, x, width, ROLE_DIM, "-");
			break;
		}
		/* one decimal when it fits, whole binades when the cell is narrow */
		snprintf(line, sizeof line, "%.1f %.1f %.1f", v[0], v[1], v[2]);
		if (tui_width(line) > width)
			snprintf(line, sizeof line, "%.0f %.0f %.0f", v[0], v[1], v[2]);
		tui_put(w, y, x, width, ROLE_NORMAL, line);
		break;
	}
}

void fp8v_draw(WINDOW *w, int y, int rows, int cols, const fp8v_policy *p, const char *const *names, size_t np)
{
	/* the policies that scale first, when not all fit */
	size_t order[FP8V_MAXPOL], no = 0;
	np = np < FP8V_MAXPOL ? np : FP8V_MAXPOL;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < np; i++)
			if (p[i].scaled == !pass)
				order[no++] = i;
	int avail = cols - 1 - LABEL_W;
	size_t shown = np;
	if (shown && avail / (int)shown < CELL_MIN)
		shown = avail >= CELL_MIN ? (size_t)(avail / CELL_MIN) : 0;
	int cw = shown ? avail / (int)shown : 0;
	size_t nspark = cw > 1 ? (size_t)(cw - 1) : 0, most = 0;
	nspark = nspark < FP8V_HIST ? nspark : FP8V_HIST;
	for (size_t i = 0; i < np; i++)
		if (p[i].scaled && p[i].steps > most)
			most = p[i].steps;
	if (!most)
		rows = rows < ROW_OVER + 1 ? rows : ROW_OVER + 1;   /* nothing scales: no more to say */
	size_t n = most < nspark ? most : nspark;
	char head[32], last[32], lmax[32], lmin[32];
	if (shown < np)
		snprintf(head, sizeof head, "fp8: +%zu more", np - shown);
	else
		snprintf(head, sizeof head, "fp8 scaling");
	snprintf(last, sizeof last, "  last %zu", n);
	snprintf(lmax, sizeof lmax, "  max, last %zu", n);
	snprintf(lmin, sizeof lmin, "  min, last %zu", n);
	const char *labels[ROW_COUNT] = {
		[ROW_HEAD] = head, [ROW_OVER] = "overflow", [ROW_OVER_SPARK] = last,
		[ROW_UNDER] = "underflow", [ROW_UNDER_SPARK] = last, [ROW_WORST] = "worst tensor",
		[ROW_WORST_NAME] = "  its name", [ROW_SCALE_HEAD] = "log2(scale)", [ROW_WEIGHT] = "  weight",
		[ROW_INPUT] = "  input", [ROW_GRAD] = "  grad_output", [ROW_LMAX_SPARK] = lmax,
		[ROW_LMIN_SPARK] = lmin,
	};
	for (int r = 0; r < ROW_COUNT && r < rows; r++) {
		tui_put_fit(w, y + r, 1, LABEL_W - 1, r == ROW_HEAD || r == ROW_SCALE_HEAD ? ROLE_HEADING : ROLE_DIM,
		            labels[r]);
		for (size_t c = 0; c < shown; c++) {
			size_t i = order[c];
			int x = 1 + LABEL_W + (int)c * cw;
			if (r == ROW_HEAD)
				tui_put_fit(w, y, x, cw - 1, theme_series((int)i), names[i]);
			else if (r == ROW_SCALE_HEAD)
				tui_put(w, y + r, x, cw - 1, ROLE_DIM, p[i].scaled ? "min med max" : "");
			else
				draw_cell(w, y + r, x, cw, r, &p[i], nspark);
		}
	}
}

/* --- the loss panels --- */

void train_panels_draw(WINDOW *w, int y, int rows, int cols, const plot_figure *base, const char *const *names,
                       plot_canvas *c)
{
	size_t np = base->nseries;
	if (!np)
		return;
	int per_row = cols / 40 > 0 ? cols / 40 : 1;
	per_row = per_row > (int)np ? (int)np : per_row;
	int nrow = ((int)np + per_row - 1) / per_row;
	if (rows / nrow < PLOT_MIN_ROWS + 1) {
		/* narrower panels in one row rather than rows too low to plot */
		int most = cols / PLOT_MIN_COLS > 0 ? cols / PLOT_MIN_COLS : 1;
		per_row = most < (int)np ? most : (int)np;
		nrow = ((int)np + per_row - 1) / per_row;
	}
	if (rows / nrow < PLOT_MIN_ROWS) {
		/* the rows of panels that fit, and a line saying what is left out */
		nrow = (rows - 1) / PLOT_MIN_ROWS;
		if (nrow < 1) {
			tui_put(w, y, 0, cols, ROLE_DIM, "(enlarge the terminal to see the plots)");
			return;
		}
		rows -= 1;
	}
	int ph = rows / nrow, pw = cols / per_row;
	/* one y range over every series */
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < np; i++)
		for (size_t k = 0; k < base->series[i].n; k++)
			if (isfinite(base->series[i].y[k])) {
				lo = fmin(lo, base->series[i].y[k]);
				hi = fmax(hi, base->series[i].y[k]);
			}
	if (lo == hi) {
		double d = lo == 0 ? 1 : fabs(lo) * 0.1;
		lo -= d;
		hi += d;
	}
	plot_series *one = calloc(np, sizeof *one);
	if (!one) {
		tui_put(w, y, 0, cols, ROLE_BAD, "plot: out of memory");
		return;
	}
	size_t drawn = 0;
	for (int r = 0; r < nrow; r++)
		for (int k = 0; k < per_row && drawn < np; k++, drawn++) {
			/* only series i holds points: it keeps its colour and mark */
			for (size_t j = 0; j < np; j++)
				one[j] = (plot_series){ .x = base->series[j].x, .y = base->series[j].y,
				                        .draw = base->series[j].draw };
			one[drawn].n = base->series[drawn].n;
			plot_figure f = *base;
			f.series = one;
			f.title = names[drawn];
			f.xlabel = NULL;   /* the x axis is the step, as the lab's plot says */
			f.fix_y = isfinite(lo) && isfinite(hi);
			f.ymin = lo;
			f.ymax = hi;
			plotview_draw(w, y + r * ph, k * pw, ph, pw, &f, c);
		}
	free(one);
	if (drawn < np)
		tui_putf(w, y + rows, 0, cols, ROLE_DIM, "(%zu more panels: enlarge the terminal)", np - drawn);
}
