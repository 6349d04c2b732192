/* The plot module's images (SVG and PNG through cairo), read back: size,
 * the drawn series in their colours and no others, errors naming the file;
 * without cairo, the refusal that says so. */
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

static Suite *plot_image_suite(void)
{
	Suite *s = suite_create("plot_image");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, svg_export);
	tcase_add_test(tc, png_export);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(plot_image_suite());
}
