/* `mixprec bench tui`: the time to the first frame and the latency of a key
 * while a training worker runs, both on a virtual screen. */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tui/app_impl.h"

double tui_bench_first_frame(int rows, int cols)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	setlocale(LC_CTYPE, "");
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	if (!out || !in) {
		if (out)
			fclose(out);
		if (in)
			fclose(in);
		return -1;
	}
	SCREEN *scr = newterm("xterm-256color", out, in);
	if (!scr) {
		fclose(out);
		fclose(in);
		return -1;
	}
	resize_term(rows, cols);
	theme_init();
	tui_app *app = calloc(1, sizeof *app);
	double ms = -1;
	if (app) {
		app->scripted = true;
		app_layout(app);
		if (tui_push_named(app, "home", 0, NULL) == MP_OK) {
			app_draw_frame(app);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			ms = 1e3 * (double)(t1.tv_sec - t0.tv_sec) + 1e-6 * (double)(t1.tv_nsec - t0.tv_nsec);
		}
		app_close_all(app);
		if (app->body)
			delwin(app->body);
		free(app);
	}
	endwin();
	delscreen(scr);
	fclose(out);
	fclose(in);
	return ms;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return 1e3 * (double)(t1.tv_sec - t0->tv_sec) + 1e-6 * (double)(t1.tv_nsec - t0->tv_nsec);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

bool tui_bench_key_latency(int rows, int cols, int nkeys, double *max_ms, double *median_ms)
{
	setlocale(LC_CTYPE, "");
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	SCREEN *scr = out && in ? newterm("xterm-256color", out, in) : NULL;
	tui_app *app = scr ? calloc(1, sizeof *app) : NULL;
	double *lat = nkeys > 0 ? calloc((size_t)nkeys, sizeof *lat) : NULL;
	bool ok = false;
	if (app && lat) {
		resize_term(rows, cols);
		theme_init();
		app->scripted = true;
		app_layout(app);
		char a0[] = "train", a1[] = "--policy", a2[] = "fp32,bf16-mixed", a3[] = "--steps", a4[] = "100000";
		char *args[] = { a0, a1, a2, a3, a4, NULL };
		if (tui_push_named(app, "home", 0, NULL) == MP_OK && tui_push_named(app, "train", 5, args) == MP_OK) {
			app_dispatch(app, 'z');   /* the default shape: steps of tens of milliseconds */
			app_dispatch(app, 's');
			struct timespec nap = { 0, 20 * 1000 * 1000 }, t0;
			for (int i = 0; i < 25; i++) {   /* let it reach the training loop */
				app_tick_all(app);
				app_draw_frame(app);
				nanosleep(&nap, NULL);
			}
			ok = app_any_busy(app);
			for (int i = 0; ok && i < nkeys; i++) {
				clock_gettime(CLOCK_MONOTONIC, &t0);
				app_dispatch(app, 'm');
				app_tick_all(app);
				app_draw_frame(app);
				lat[i] = ms_since(&t0);
				nanosleep(&nap, NULL);
			}
		}
		app_close_all(app);
		if (app->body)
			delwin(app->body);
	}
	if (ok) {
		qsort(lat, (size_t)nkeys, sizeof *lat, cmp_double);
		*max_ms = lat[nkeys - 1];
		*median_ms = lat[nkeys / 2];
	}
	free(lat);
	free(app);
	if (scr) {
		endwin();
		delscreen(scr);
	}
	if (out)
		fclose(out);
	if (in)
		fclose(in);
	return ok;
}
