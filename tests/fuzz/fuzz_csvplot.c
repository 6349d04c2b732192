/* libFuzzer harness for the CSV plot reader and the renderers: any bytes
 * must be read (or refused with a message) and the figure rendered as
 * braille and ASCII text and as SVG, without a crash or a leak. The first
 * byte chooses the options, so --x/--y/--by and log axes are fuzzed too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "plot/csvplot.h"
#include "plot/plot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t sel = data[0];
	csvplot_options o = { .logx = sel & 1 ? 1 : -1, .logy = sel & 2 ? 1 : -1 };
	if (sel & 4)
		o.y = "y,b";
	if (sel & 8)
		o.x = "x";
	if (sel & 16)
		o.by = sel & 32 ? "" : "b";
	csvplot p;
	char err[512];
	mp_status st = csvplot_read_mem(&p, (const char *)data + 1, size - 1, "fuzz", &o, err, sizeof err);
	if (st != MP_OK) {
		if (!err[0])
			abort();   /* a refusal must say why */
		return 0;
	}
	plot_canvas c;
	plot_canvas_init(&c);
	plot_render_text(&p.fig, 20 + size % 100, 6 + size % 40, true, &c);
	plot_render_text(&p.fig, 80, 24, false, &c);
	FILE *out = fopen("/dev/null", "w");
	if (out) {
		plot_canvas_print(&c, out, true);
		fclose(out);
	}
	plot_canvas_free(&c);
	if (sel & 64)
		plot_write_svg(&p.fig, "/dev/null", 300, 200, err, sizeof err);
	csvplot_free(&p);
	return 0;
}
