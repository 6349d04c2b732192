#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cli.h"
#include "plot/csvplot.h"
#include "plot/plot.h"

static void plot_help(void)
{
	printf("Usage: mixprec plot FILE.csv [--x COL] [--y COL,...] [--by COL] [--logx]\n"
	       "                   [--logy] [--linear] [--title T] [--width N --height N]\n"
	       "                   [--ascii] [--png FILE | --svg FILE]\n"
	       "Plots a CSV in the terminal (Unicode braille, or ASCII when the locale is\n"
	       "not UTF-8), or writes it as a PNG or SVG image. FILE may be - for standard\n"
	       "input. The CSVs mixprec writes are recognised by their header:\n"
	       "  drift --csv          x step, y retained, one series per variant\n"
	       "  drift --sweep --csv  x x0 (log), y retained, one series per variant\n"
	       "  train --csv          x step, y loss, one series per policy\n"
	       "  gradhist --csv       columns at log2_lo, height share (log), one colour per\n"
	       "                       fp16_at_scale class\n"
	       "  budget --csv         a bar per component of bytes; the total in the title\n"
	       "  grade --misconceptions  a bar per misconception of students, summed over\n"
	       "                       the fields where it was made\n"
	       "A column whose first value is not a number as --x makes a bar chart.\n\n"
	       "  --x COL         the x column (default: as above, else the first column)\n"
	       "  --y COL,...     the y columns (required for other CSVs)\n"
	       "  --by COL        one series per distinct value of COL (--by= for none)\n"
	       "  --logx, --logy  logarithmic axes (values <= 0 are left out)\n"
	       "  --linear        linear axes, even where the default is logarithmic\n"
	       "  --title T       the title (default: the file name)\n"
	       "  --width N --height N\n"
	       "                  the plot in characters (default: the terminal, or 80x24 when\n"
	       "                  standard output is not one; at least %dx%d), or with --png and\n"
	       "                  --svg in pixels (default 960x600)\n"
	       "  --ascii         ASCII characters even in a UTF-8 locale\n"
	       "  --png FILE      write a PNG image instead (needs a build with cairo)\n"
	       "  --svg FILE      write an SVG image instead (through cairo too)\n"
	       "  -h, --help      this text\n\n"
	       "Empty cells leave the point out (train's val_loss); any other cell that is not\n"
	       "a number is an error naming FILE:LINE. Colour only on a terminal, and never\n"
	       "when NO_COLOR is set.\n",
	       PLOT_MIN_COLS, PLOT_MIN_ROWS);
}

static bool parse_size(const char *opt, const char *text, int *v)
{
	unsigned long long n;
	if (!cli_parse_u64("plot", opt, text, &n))
		return false;
	if (n < 1 || n > 10000) {
		cli_error("plot", "%s: '%s' is outside 1..10000", opt, text);
		return false;
	}
	*v = (int)n;
	return true;
}

static bool locale_utf8(void)
{
	setlocale(LC_CTYPE, "");
	const char *cs = nl_langinfo(CODESET);
	return cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "utf8"));
}

/* What the command line asked for. */
typedef struct {
	csvplot_options o;
	const char *file, *png, *svg;
	int width, height;   /* 0: the default */
	bool ascii;
} plot_args;

/* Parses argv into *pa. Returns -1 to go on, else the exit code (help, or a usage error). */
static int plot_parse(int argc, char **argv, plot_args *pa)
{
	enum { O_X = 256, O_Y, O_BY, O_LOGX, O_LOGY, O_LINEAR, O_TITLE, O_WIDTH, O_HEIGHT, O_ASCII, O_PNG, O_SVG };
	static const struct option opts[] = {
		{ "x", required_argument, NULL, O_X },          { "y", required_argument, NULL, O_Y },
		{ "by", required_argument, NULL, O_BY },        { "logx", no_argument, NULL, O_LOGX },
		{ "logy", no_argument, NULL, O_LOGY },          { "linear", no_argument, NULL, O_LINEAR },
		{ "title", required_argument, NULL, O_TITLE },  { "width", required_argument, NULL, O_WIDTH },
		{ "height", required_argument, NULL, O_HEIGHT }, { "ascii", no_argument, NULL, O_ASCII },
		{ "png", required_argument, NULL, O_PNG },      { "svg", required_argument, NULL, O_SVG },
		{ "help", no_argument, NULL, 'h' },             { 0, 0, 0, 0 },
	};
	*pa = (plot_args){ .o = { .logx = -1, .logy = -1 } };
	csvplot_options *o = &pa->o;
	cli_args a = { 0 };
	char *val;
	int c;
	while ((c = cli_getopt(&a, argc, argv, opts, &val)) != -1) {
		switch (c) {
		case CLI_ARG_VALUE:
			if (pa->file) {
				cli_error("plot", "one CSV file at a time ('%s' and '%s')", pa->file, val);
				return CLI_USAGE;
			}
			pa->file = val;
			break;
		case O_X: o->x = optarg; break;
		case O_Y: o->y = optarg; break;
		case O_BY: o->by = optarg; break;
		case O_LOGX: o->logx = 1; break;
		case O_LOGY: o->logy = 1; break;
		case O_LINEAR: o->logx = o->logy = 0; break;
		case O_TITLE: o->title = optarg; break;
		case O_WIDTH:
			if (!parse_size("--width", optarg, &pa->width))
				return CLI_USAGE;
			break;
		case O_HEIGHT:
			if (!parse_size("--height", optarg, &pa->height))
				return CLI_USAGE;
			break;
		case O_ASCII: pa->ascii = true; break;
		case O_PNG: pa->png = optarg; break;
		case O_SVG: pa->svg = optarg; break;
		case 'h':
			plot_help();
			return cli_flush_stdout("plot") ? CLI_OK : CLI_ENV;
		case ':':
		default:
			return cli_option_error("plot", c, argv, opts);
		}
	}
	if (!pa->file) {
		cli_error("plot", "no CSV file given (see 'mixprec plot --help')");
		return CLI_USAGE;
	}
	if (pa->png && pa->svg) {
		cli_error("plot", "--png and --svg: one image at a time");
		return CLI_USAGE;
	}
	if (o->y && !*o->y) {
		cli_error("plot", "--y: no column named");
		return CLI_USAGE;
	}
	return -1;
}

/* Reads pa->file (or standard input for "-") into *p. Returns CLI_OK or the exit code. */
static int plot_read(const plot_args *pa, csvplot *p)
{
	bool is_stdin = !strcmp(pa->file, "-");
	FILE *fp = is_stdin ? stdin : fopen(pa->file, "rb");
	if (!fp) {
		cli_error("plot", "%s: %s", pa->file, strerror(errno));
		return CLI_ENV;
	}
	char err[1024];
	mp_status st = csvplot_read(p, fp, is_stdin ? "<stdin>" : pa->file, &pa->o, err, sizeof err);
	if (!is_stdin)
		fclose(fp);
	if (st != MP_OK) {
		cli_error("plot", "%s", err);
		return st == MP_EINVAL ? CLI_USAGE : CLI_ENV;
	}
	return CLI_OK;
}

/* Writes the figure as a PNG or SVG image. */
static int plot_export(const plot_args *pa, const plot_figure *fig)
{
	const char *path = pa->png ? pa->png : pa->svg;
	int w = pa->width ? pa->width : 960, h = pa->height ? pa->height : 600;
	if (w < 100 || h < 100) {
		cli_error("plot", "--width/--height: an image needs at least 100x100 pixels");
		return CLI_USAGE;
	}
	char err[1024];
	mp_status st = pa->png ? plot_write_png(fig, path, w, h, err, sizeof err)
			       : plot_write_svg(fig, path, w, h, err, sizeof err);
	if (st != MP_OK) {
		cli_error("plot", "%s", err);
		return st == MP_EINVAL ? CLI_USAGE : CLI_ENV;
	}
	return CLI_OK;
}

/* Draws the figure on standard output in characters. */
static int plot_terminal(const plot_args *pa, plot_figure *fig)
{
	bool tty = isatty(STDOUT_FILENO);
	int cols = 80, rows = 24;
	struct winsize ws;
	if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 1) {
		cols = ws.ws_col;
		rows = ws.ws_row - 1;   /* the prompt keeps its line */
	}
	if (pa->width)
		cols = pa->width;
	if (pa->height)
		rows = pa->height;
	if (cols < PLOT_MIN_COLS || rows < PLOT_MIN_ROWS) {
		cli_error("plot", "a plot needs at least %dx%d characters, not %dx%d (--width, --height)", PLOT_MIN_COLS,
			  PLOT_MIN_ROWS, cols, rows);
		return CLI_USAGE;
	}
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
	bool color = tty && !(nc && *nc) && !(term && !strcmp(term, "dumb"));
	bool utf8 = !pa->ascii && locale_utf8();
	int rc = CLI_OK;
	plot_canvas cv;
	plot_canvas_init(&cv);
	fig->mono = !color;   /* no colour: marks and line-end labels tell the series apart */
	mp_status st = plot_render_text(fig, cols, rows, utf8, &cv);
	if (st == MP_EINVAL) {
		cli_error("plot", "%dx%d characters are too few for this plot (--width, --height)", cols, rows);
		rc = CLI_USAGE;
	} else if (st != MP_OK) {
		cli_error("plot", "%s", mp_status_message(st));
		rc = CLI_ENV;
	} else {
		plot_canvas_print(&cv, stdout, color);
		if (!cli_flush_stdout("plot"))
			rc = CLI_ENV;
	}
	plot_canvas_free(&cv);
	return rc;
}

int cmd_plot(int argc, char **argv)
{
	plot_args pa;
	int rc = plot_parse(argc, argv, &pa);
	if (rc >= 0)
		return rc;
	csvplot p;
	rc = plot_read(&pa, &p);
	if (rc != CLI_OK)
		return rc;
	rc = pa.png || pa.svg ? plot_export(&pa, &p.fig) : plot_terminal(&pa, &p.fig);
	csvplot_free(&p);
	return rc;
}
