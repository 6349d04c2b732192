/* The plot module's images (SVG and PNG through cairo), read back: size,
 * the drawn series in their colours and no others, errors naming the file;
 * a palette whose colours differ enough to tell 20 series apart, and the
 * fifteen training presets plotted together, each in its own colour in the
 * data and in the legend; without cairo, the refusal that says so. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "plot/plot.h"
#include "testutil.h"

#ifdef HAVE_CAIRO
#include <cairo.h>
#endif

static plot_figure image_figure(plot_series *s, double *x, double *y)
{
	for (int i = 0; i < 10; i++) {
		x[i] = i;
		y[i] = i + 1;
	}
	s[0] = (plot_series){ .name = "first <series>", .x = x, .y = y, .n = 10, .draw = PLOT_DRAW_COLUMNS };
	s[1] = (plot_series){ .name = "second", .x = x, .y = y, .n = 10, .draw = PLOT_DRAW_LINE };
	plot_figure f;
	plot_figure_init(&f);
	f.title = "A & B";
	f.xlabel = "step";
	f.ylabel = "loss";
	f.series = s;
	f.nseries = 1;
	return f;
}

/* cairo writes a colour as rgb(R%,G%,B%) with up to six decimals, trailing
 * zeros dropped: 0x1f -> 12.156863%, 0x20 -> 12.54902%, 0xff -> 100%. */
static void cairo_rgb_text(const uint8_t rgb[3], char *out, size_t n)
{
	size_t k = (size_t)snprintf(out, n, "rgb(");
	for (int i = 0; i < 3; i++) {
		char v[32];
		snprintf(v, sizeof v, "%.6f", rgb[i] * 100.0 / 255.0);
		size_t l = strlen(v);
		while (l && v[l - 1] == '0')
			v[--l] = '\0';
		if (l && v[l - 1] == '.')
			v[--l] = '\0';
		k += (size_t)snprintf(out + k, n - k, "%s%%%s", v, i < 2 ? "," : ")");
	}
}

START_TEST(svg_export)
{
	double x[10], y[10];
	plot_series s[3];
	plot_figure f = image_figure(s, x, y);
	f.nseries = 2;
	char path[] = "/tmp/mixprec-plot-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	char err[256];
	if (!plot_have_cairo()) {
		ck_assert_int_eq(plot_write_svg(&f, path, 640, 480, err, sizeof err), MP_EUNSUPPORTED);
		ck_assert(strstr(err, "built without cairo"));
		unlink(path);
		return;
	}
	ck_assert_int_eq(plot_write_svg(&f, path, 640, 480, err, sizeof err), MP_OK);
	FILE *fp = fopen(path, "r");
	ck_assert_ptr_nonnull(fp);
	char *buf = calloc(1, 1 << 20);
	size_t len = fread(buf, 1, (1 << 20) - 1, fp);
	fclose(fp);
	unlink(path);
	ck_assert_uint_gt(len, 100);
	ck_assert(!strncmp(buf, "<?xml", 5));
	ck_assert(strstr(buf, "width=\"640px\" height=\"480px\""));   /* pixels, as --width/--height say */
	ck_assert(strstr(buf, "<symbol"));   /* text is drawn (as glyphs) */
	/* both drawn series appear in their colours; a third, not drawn, does not */
	char want[64];
	for (size_t k = 0; k < 3; k++) {
		uint8_t rgb[3];
		plot_series_rgb(k, rgb);
		cairo_rgb_text(rgb, want, sizeof want);
		if (k < 2)
			ck_assert_msg(strstr(buf, want), "series %zu's colour %s is missing", k, want);
		else
			ck_assert_msg(!strstr(buf, want), "series %zu's colour %s drawn", k, want);
	}
	ck_assert(!strcmp(buf + len - 7, "</svg>\n"));
	free(buf);
	ck_assert_int_eq(plot_write_svg(&f, "/nonexistent-dir/x.svg", 640, 480, err, sizeof err), MP_EIO);
	ck_assert(!strncmp(err, "/nonexistent-dir/x.svg: ", 24));
	ck_assert_int_eq(plot_write_svg(&f, path, 50, 480, err, sizeof err), MP_EINVAL);
}
END_TEST

#ifdef HAVE_CAIRO
/* Pixels of exactly this colour in the image. */
static long count_rgb(cairo_surface_t *img, const uint8_t rgb[3])
{
	int w = cairo_image_surface_get_width(img), h = cairo_image_surface_get_height(img);
	int stride = cairo_image_surface_get_stride(img);
	const unsigned char *data = cairo_image_surface_get_data(img);
	uint32_t want = (uint32_t)rgb[0] << 16 | (uint32_t)rgb[1] << 8 | rgb[2];
	long n = 0;
	for (int r = 0; r < h; r++)
		for (int c = 0; c < w; c++) {
			uint32_t px;
			memcpy(&px, data + (size_t)r * (size_t)stride + (size_t)c * 4, 4);
			n += (px & 0xffffff) == want;
		}
	return n;
}
#endif

START_TEST(png_export)
{
	double x[10], y[10];
	plot_series s[2];
	plot_figure f = image_figure(s, x, y);
	char path[] = "/tmp/mixprec-plot-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	char err[256];
	mp_status st = plot_write_png(&f, path, 400, 300, err, sizeof err);
#ifdef HAVE_CAIRO
	ck_assert_msg(st == MP_OK, "%s", err);
	cairo_surface_t *img = cairo_image_surface_create_from_png(path);
	ck_assert_int_eq(cairo_surface_status(img), CAIRO_STATUS_SUCCESS);
	ck_assert_int_eq(cairo_image_surface_get_width(img), 400);
	ck_assert_int_eq(cairo_image_surface_get_height(img), 300);
	uint8_t c0[3], c1[3];
	plot_series_rgb(0, c0);
	plot_series_rgb(1, c1);
	ck_assert(c0[0] == 0x1f && c0[1] == 0x77 && c0[2] == 0xb4);
	/* the columns fill well over a thousand pixels in series 0's colour;
	 * series 1 is not drawn and its colour appears nowhere */
	ck_assert_int_gt(count_rgb(img, c0), 1000);
	ck_assert_int_eq(count_rgb(img, c1), 0);
	cairo_surface_destroy(img);
	/* with the second series its colour shows up */
	f.nseries = 2;
	ck_assert_int_eq(plot_write_png(&f, path, 400, 300, err, sizeof err), MP_OK);
	img = cairo_image_surface_create_from_png(path);
	ck_assert_int_gt(count_rgb(img, c1), 20);
	cairo_surface_destroy(img);
	ck_assert_int_eq(plot_write_png(&f, "/nonexistent-dir/x.png", 400, 300, err, sizeof err), MP_EIO);
	ck_assert(!strncmp(err, "/nonexistent-dir/x.png: ", 24));
#else
	ck_assert_int_eq(st, MP_EUNSUPPORTED);
	ck_assert(strstr(err, "built without cairo"));
#endif
	unlink(path);
}
END_TEST

/* --- telling many series apart --- */

/* CIE 1976 L*a*b* of an sRGB colour (D65 white), written from the
 * definitions: the sRGB transfer curve undone, the sRGB-to-XYZ matrix, then
 * the cube-root curve with its linear part below (6/29)^3. */
static double srgb_linear(uint8_t c)
{
	double v = c / 255.0;
	return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

static double lab_f(double t)
{
	const double d = 6.0 / 29.0;
	return t > d * d * d ? cbrt(t) : t / (3 * d * d) + 4.0 / 29.0;
}

static void srgb_to_lab(const uint8_t rgb[3], double lab[3])
{
	double r = srgb_linear(rgb[0]), g = srgb_linear(rgb[1]), b = srgb_linear(rgb[2]);
	double X = 0.4124 * r + 0.3576 * g + 0.1805 * b;
	double Y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
	double Z = 0.0193 * r + 0.1192 * g + 0.9505 * b;
	double fx = lab_f(X / 0.95047), fy = lab_f(Y), fz = lab_f(Z / 1.08883);
	lab[0] = 116 * fy - 16;
	lab[1] = 500 * (fx - fy);
	lab[2] = 200 * (fy - fz);
}

/* CIE76 colour difference: the distance in L*a*b*. */
static double delta_e(const uint8_t a[3], const uint8_t b[3])
{
	double la[3], lb[3];
	srgb_to_lab(a, la);
	srgb_to_lab(b, lb);
	return sqrt((la[0] - lb[0]) * (la[0] - lb[0]) + (la[1] - lb[1]) * (la[1] - lb[1]) +
	            (la[2] - lb[2]) * (la[2] - lb[2]));
}

/* Thresholds: a CIE76 difference of about 2.3 is just noticeable between
 * two large patches side by side; lines 2 pixels wide that cross and
 * interleave need far more, so about ten just-noticeable steps, 20, is the
 * least taken as "a different colour at a glance"; against the white
 * background 40, so that no line is pale (white to the mid grey #777777,
 * L* = 50, is 50). */
enum { MIN_APART = 20, MIN_FROM_WHITE = 40 };

START_TEST(palette_distinct)
{
	static const uint8_t white[3] = { 0xff, 0xff, 0xff };
	ck_assert_int_ge(PLOT_PALETTE, 15);   /* the fifteen presets, each its own colour */
	for (size_t i = 0; i < PLOT_PALETTE; i++) {
		uint8_t a[3];
		plot_series_rgb(i, a);
		ck_assert_msg(delta_e(a, white) >= MIN_FROM_WHITE, "colour %zu is %.1f from white", i, delta_e(a, white));
		ck_assert_int_eq(plot_series_pattern(i), 0);   /* the palette's first round: solid */
		for (size_t j = i + 1; j < PLOT_PALETTE; j++) {
			uint8_t b[3];
			plot_series_rgb(j, b);
			ck_assert_msg(delta_e(a, b) >= MIN_APART, "colours %zu and %zu are %.1f apart", i, j, delta_e(a, b));
		}
	}
	/* PLOT_PALETTE * PLOT_PATTERNS styles, pairwise different in colour or
	 * pattern; past them the styles repeat */
	size_t nstyles = (size_t)PLOT_PALETTE * PLOT_PATTERNS;
	ck_assert_uint_ge(nstyles, 60);
	for (size_t i = 0; i < nstyles; i++) {
		uint8_t a[3];
		plot_series_rgb(i, a);
		ck_assert_int_ge(plot_series_pattern(i), 0);
		ck_assert_int_lt(plot_series_pattern(i), PLOT_PATTERNS);
		for (size_t j = i + 1; j < nstyles; j++) {
			uint8_t b[3];
			plot_series_rgb(j, b);
			bool same = delta_e(a, b) < MIN_APART && plot_series_pattern(i) == plot_series_pattern(j);
			ck_assert_msg(!same, "series %zu and %zu look the same", i, j);
		}
	}
	uint8_t a[3], b[3];
	plot_series_rgb(nstyles, a);
	plot_series_rgb(0, b);
	ck_assert(!memcmp(a, b, 3) && plot_series_pattern(nstyles) == plot_series_pattern(0));
}
END_TEST

#ifdef HAVE_CAIRO
enum { NPRESET = 15, NSTEP = 100, IMG_W = 960, IMG_H = 600 };

/* The fifteen presets of `train --policy list` (train/policy.c), plotted
 * together as the README's runs plot them: loss curves that start at the
 * same height, fall together and cross, 0.02 apart plus a wobble of 0.05,
 * so that every curve is close to several others over the whole run. */
static const char *const preset_names[NPRESET] = {
	"fp32",         "bf16-mixed",   "bf16-resid",  "bf16-resid-sr", "bf16-pure",
	"bf16-pure-sr", "bf16-pure-kahan", "fp16-mixed", "fp16-noscale", "fp8-mixed",
	"fp8-delayed",  "fp8-current",  "fp8-block",   "mxfp8",         "nvfp4",
};

static plot_figure presets_figure(plot_series *s, double *x, double *y)
{
	for (int i = 0; i < NSTEP; i++)
		x[i] = i;
	for (int k = 0; k < NPRESET; k++) {
		double *yk = y + k * NSTEP;
		for (int i = 0; i < NSTEP; i++)
			yk[i] = 3 * exp(-i / 25.0) + 1.2 + 0.02 * (k + 1) + 0.05 * sin(i / 7.0 + (k + 1));
		s[k] = (plot_series){ .name = preset_names[k], .x = x, .y = yk, .n = NSTEP, .draw = PLOT_DRAW_LINE };
	}
	plot_figure f;
	plot_figure_init(&f);
	f.title = "run.csv";
	f.xlabel = "step";
	f.ylabel = "loss";
	f.series = s;
	f.nseries = NPRESET;
	return f;
}

static void pixel_at(cairo_surface_t *img, int col, int row, uint8_t rgb[3])
{
	const unsigned char *data = cairo_image_surface_get_data(img);
	uint32_t px;
	memcpy(&px, data + (size_t)row * (size_t)cairo_image_surface_get_stride(img) + (size_t)col * 4, 4);
	rgb[0] = (uint8_t)(px >> 16);
	rgb[1] = (uint8_t)(px >> 8);
	rgb[2] = (uint8_t)px;
}

/* Pixels of exactly rgb in the rows above row `below`. */
static long count_rgb_above(cairo_surface_t *img, const uint8_t rgb[3], int below)
{
	long n = 0;
	for (int r = 0; r < below; r++)
		for (int c = 0; c < cairo_image_surface_get_width(img); c++) {
			uint8_t px[3];
			pixel_at(img, c, r, px);
			n += !memcmp(px, rgb, 3);
		}
	return n;
}

/* Pixels of the box (x, y, w, h) darker than mid grey in every channel:
 * the name's glyphs, drawn in #202020 on white. */
static long dark_in(cairo_surface_t *img, double x, double y, double w, double h)
{
	long n = 0;
	for (int r = (int)floor(y); r < (int)ceil(y + h); r++)
		for (int c = (int)floor(x); c < (int)ceil(x + w); c++) {
			uint8_t px[3];
			pixel_at(img, c, r, px);
			n += px[0] < 0x80 && px[1] < 0x80 && px[2] < 0x80;
		}
	return n;
}

static bool boxes_overlap(double ax, double ay, double aw, double ah, double bx, double by, double bw, double bh)
{
	return ax < bx + bw && bx < ax + aw && ay < by + bh && by < ay + ah;
}
#endif

START_TEST(png_presets)
{
#ifdef HAVE_CAIRO
	double x[NSTEP], y[NPRESET * NSTEP];
	plot_series s[NPRESET];
	plot_figure f = presets_figure(s, x, y);
	char path[] = "/tmp/mixprec-plot-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	char err[256];
	ck_assert_msg(plot_write_png(&f, path, IMG_W, IMG_H, err, sizeof err) == MP_OK, "%s", err);
	cairo_surface_t *img = cairo_image_surface_create_from_png(path);
	unlink(path);
	ck_assert_int_eq(cairo_surface_status(img), CAIRO_STATUS_SUCCESS);
	cairo_surface_flush(img);

	plot_legend_entry e[NPRESET + 1];
	size_t n = 0;
	ck_assert_msg(plot_image_legend(&f, IMG_W, IMG_H, e, NPRESET + 1, &n, err, sizeof err) == MP_OK, "%s", err);
	ck_assert_uint_eq(n, NPRESET);
	double legend_top = IMG_H;
	for (size_t k = 0; k < n; k++)
		legend_top = fmin(legend_top, fmin(e[k].text_y, e[k].swatch_y - 2));
	/* the legend lies in the bottom third, under the plot */
	ck_assert_double_gt(legend_top, IMG_H * 2 / 3.0);
	for (size_t k = 0; k < n; k++) {
		uint8_t want[3], got[3];
		plot_series_rgb(k, want);
		ck_assert_uint_eq(e[k].series, k);
		/* the entry's swatch is its series' colour, and no other series has it */
		ck_assert(e[k].swatch_x >= 0 && e[k].swatch_x < IMG_W && e[k].swatch_y >= 0 && e[k].swatch_y < IMG_H);
		pixel_at(img, (int)e[k].swatch_x, (int)e[k].swatch_y, got);
		ck_assert_msg(!memcmp(got, want, 3), "%s's swatch is #%02x%02x%02x, not #%02x%02x%02x", preset_names[k], got[0],
		              got[1], got[2], want[0], want[1], want[2]);
		for (size_t j = 0; j < n; j++) {
			uint8_t other[3];
			plot_series_rgb(j, other);
			ck_assert_msg(j == k || delta_e(want, other) >= MIN_APART, "%s and %s share a colour",
			              preset_names[k], preset_names[j]);
		}
		/* the name: a box inside the image, as wide as the name's letters
		 * at least a third of the font size each, with glyphs drawn in it,
		 * and no other entry's name over it */
		ck_assert(e[k].text_x >= 0 && e[k].text_x + e[k].text_w <= IMG_W && e[k].text_y + e[k].text_h <= IMG_H);
		ck_assert_double_ge(e[k].text_w, strlen(preset_names[k]) * e[k].text_h / 3);
		ck_assert_int_gt(dark_in(img, e[k].text_x, e[k].text_y, e[k].text_w, e[k].text_h), 10);
		ck_assert(e[k].swatch_x < e[k].text_x);
		for (size_t j = 0; j < k; j++)
			ck_assert_msg(!boxes_overlap(e[k].text_x, e[k].text_y, e[k].text_w, e[k].text_h, e[j].text_x,
			                             e[j].text_y, e[j].text_w, e[j].text_h),
			              "the names of %s and %s overlap", preset_names[k], preset_names[j]);
		/* its line shows in the data, above the legend, however many
		 * later lines are drawn over it: the data area spans more than 850
		 * of the 960 columns, and a line at least 2 pixels wide covers at
		 * least one pixel whole in each column it crosses (a 1.8-pixel
		 * line can cover none: 0.9 in each of two rows); at least half of
		 * those columns must keep such a pixel */
		long shown = count_rgb_above(img, want, (int)legend_top);
		ck_assert_msg(shown >= 425, "%s's colour has %ld pixels in the plot", preset_names[k], shown);
	}
	cairo_surface_destroy(img);
#else
	plot_figure f;
	plot_figure_init(&f);
	plot_legend_entry e[1];
	size_t n = 1;
	char err[256];
	ck_assert_int_eq(plot_image_legend(&f, 960, 600, e, 1, &n, err, sizeof err), MP_EUNSUPPORTED);
	ck_assert_uint_eq(n, 0);
#endif
}
END_TEST

static Suite *plot_image_suite(void)
{
	Suite *s = suite_create("plot_image");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, svg_export);
	tcase_add_test(tc, png_export);
	tcase_add_test(tc, palette_distinct);
	tcase_add_test(tc, png_presets);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(plot_image_suite());
}
