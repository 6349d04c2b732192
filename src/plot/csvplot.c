#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "plot/csvplot.h"
#include "util/grow.h"

enum { MAX_Y = 16, MAX_SERIES = 64 };

/* Input limits, checked while reading (README, "Input limits"): the whole
 * input, one field, one record (all its fields together). */
#define MAX_INPUT ((size_t)128 << 20)
#define MAX_FIELD ((size_t)64 << 10)
#define MAX_RECORD ((size_t)1 << 20)

/* --- the reader's state --- */

typedef struct {
	char *s;
	size_t len, cap;
} cellbuf;

typedef struct {
	csvplot *p;
	const csvplot_options *o;
	const char *name;
	char *err;
	size_t errlen;
	mp_status st;             /* first error; callbacks do nothing after one */
	unsigned long line;       /* the line being fed */
	unsigned long rec_line;   /* the line where the current record began */
	bool in_record;
	size_t fed;               /* bytes fed so far */
	size_t rec_bytes;         /* bytes in the current record's fields */
	/* the current record's cells */
	cellbuf *cells;
	size_t ncells, cap_cells;
	/* the header */
	char **header;
	size_t nheader;
	bool have_header, decided, bars;
	long xcol, bycol;         /* -1: none (x: the row index) */
	long ycols[MAX_Y];
	size_t ny;
	bool draw_columns;
	char *total;              /* budget: the total row's value */
} reader;

static void fail(reader *r, mp_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(reader *r, mp_status st, const char *fmt, ...)
{
	if (r->st != MP_OK)
		return;
	r->st = st;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err, r->errlen, fmt, ap);
	va_end(ap);
}

static char *dup_text(reader *r, const char *s)
{
	char *d = strdup(s);
	if (!d)
		fail(r, MP_ENOMEM, "%s: out of memory", r->name);
	return d;
}

/* A text cell as written by csvout: a leading apostrophe that neutralised a
 * formula-like cell is dropped again. */
static const char *cell_text(const char *s)
{
	if (s[0] == '\'' && s[1] && strchr("=+-@\t\r", s[1]))
		return s + 1;
	return s;
}

/* --- columns and schemas --- */

static long find_col(const reader *r, const char *name)
{
	for (size_t i = 0; i < r->nheader; i++)
		if (!strcmp(r->header[i], name))
			return (long)i;
	return -1;
}

static bool has_cols(const reader *r, const char *const *names)
{
	for (; *names; names++)
		if (find_col(r, *names) < 0)
			return false;
	return true;
}

static void column_list(const reader *r, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < r->nheader && n + 1 < len; i++) {
		int w = snprintf(buf + n, len - n, "%s%s", i ? ", " : "", r->header[i]);
		if (w < 0)
			break;
		n += (size_t)w;
	}
}

static long need_col(reader *r, const char *opt, const char *name)
{
	long c = find_col(r, name);
	if (c < 0) {
		char cols[512];
		column_list(r, cols, sizeof cols);
		fail(r, MP_EINVAL, "%s: no column '%s' in %s (columns: %s)", opt, name, r->name, cols);
	}
	return c;
}

static csvplot_schema recognise(const reader *r)
{
	static const char *const drift[] = { "variant", "step", "retained", NULL };
	static const char *const sweep[] = { "x0", "variant", "retained", NULL };
	static const char *const train[] = { "step", "policy", "loss", NULL };
	static const char *const grad[] = { "log2_lo", "log2_hi", "share", "fp16_at_scale", NULL };
	static const char *const budget[] = { "component", "bytes", NULL };
	static const char *const misc[] = { "misconception", "exercise", "field", "students", NULL };
	if (has_cols(r, misc))
		return CSVPLOT_MISCONCEPTIONS;
	if (has_cols(r, sweep))
		return CSVPLOT_SWEEP;
	if (has_cols(r, drift))
		return CSVPLOT_DRIFT;
	if (has_cols(r, train))
		return CSVPLOT_TRAIN;
	if (has_cols(r, grad))
		return CSVPLOT_GRADHIST;
	if (has_cols(r, budget))
		return CSVPLOT_BUDGET;
	return CSVPLOT_UNKNOWN;
}

/* Chooses the columns once the header is known. */
static void take_header(reader *r)
{
	csvplot *p = r->p;
	const csvplot_options *o = r->o;
	p->schema = recognise(r);
	const char *dx = NULL, *dy = NULL, *dby = NULL;
	int dlogx = 0, dlogy = 0;
	switch (p->schema) {
	case CSVPLOT_DRIFT: dx = "step"; dy = "retained"; dby = "variant"; break;
	case CSVPLOT_SWEEP: dx = "x0"; dy = "retained"; dby = "variant"; dlogx = 1; break;
	case CSVPLOT_TRAIN: dx = "step"; dy = "loss"; dby = "policy"; break;
	case CSVPLOT_GRADHIST:
		dx = "log2_lo"; dy = "share"; dby = "fp16_at_scale"; dlogy = 1;
		r->draw_columns = true;
		break;
	case CSVPLOT_BUDGET: dx = "component"; dy = "bytes"; r->bars = true; break;
	case CSVPLOT_MISCONCEPTIONS: dx = "misconception"; dy = "students"; r->bars = true; break;
	case CSVPLOT_UNKNOWN: break;
	}
	const char *xname = o->x ? o->x : dx ? dx : r->header[0];
	const char *ylist = o->y ? o->y : dy;
	const char *byname = o->by ? o->by : dby;
	if (!ylist) {
		char cols[512];
		column_list(r, cols, sizeof cols);
		fail(r, MP_EINVAL, "%s: not a CSV that mixprec writes; name the columns to plot with --y "
		     "(and --x, default the first column): %s", r->name, cols);
		return;
	}
	r->xcol = need_col(r, "--x", xname);
	r->bycol = byname && *byname ? need_col(r, "--by", byname) : -1;
	/* --y: a comma-separated list */
	const char *s = ylist;
	r->ny = 0;
	for (;;) {
		const char *comma = strchr(s, ',');
		size_t n = comma ? (size_t)(comma - s) : strlen(s);
		char name[256];
		if (n == 0 || n >= sizeof name) {
			fail(r, MP_EINVAL, "--y: empty or overlong column name in '%s'", ylist);
			return;
		}
		if (r->ny == MAX_Y) {
			fail(r, MP_EINVAL, "--y: more than %d columns", MAX_Y);
			return;
		}
		memcpy(name, s, n);
		name[n] = '\0';
		r->ycols[r->ny++] = need_col(r, "--y", name);
		if (!comma)
			break;
		s = comma + 1;
	}
	if (r->st != MP_OK)
		return;
	p->fig.logx = o->logx >= 0 ? o->logx : dlogx;
	p->fig.logy = o->logy >= 0 ? o->logy : dlogy;
	if (!(p->title = dup_text(r, o->title ? o->title : r->name)))
		return;
	if (!(p->xlabel = dup_text(r, r->header[r->xcol])))
		return;
	if (r->ny == 1)
		p->ylabel = dup_text(r, r->header[r->ycols[0]]);
}

/* --- series --- */

/* The series for (by value, y column j), created on first use. */
static long series_for(reader *r, const char *byval, size_t j)
{
	csvplot *p = r->p;
	char name[512];
	const char *yname = r->header[r->ycols[j]];
	if (byval && r->ny > 1)
		snprintf(name, sizeof name, "%s %s", byval, yname);
	else if (byval)
		snprintf(name, sizeof name, "%s", byval);
	else
		snprintf(name, sizeof name, "%s", r->ny > 1 ? yname : "");
	for (size_t k = p->nseries; k-- > 0;)
		if (!strcmp(p->names[k], name))
			return (long)k;
	if (p->nseries == MAX_SERIES) {
		fail(r, MP_EINVAL, "%s:%lu: more than %d series (--by '%s' has too many distinct values)", r->name,
		     r->rec_line, MAX_SERIES, r->bycol >= 0 ? r->header[r->bycol] : "");
		return -1;
	}
	if (p->nseries == p->cap_series) {
		size_t cap = p->cap_series ? p->cap_series * 2 : 8;
		/* each array on its own: one that grew stays grown when another fails */
		bool s = grow_to(&p->series, cap, sizeof *p->series);
		bool cp = grow_to(&p->cap_points, cap, sizeof *p->cap_points);
		bool xs = grow_to(&p->xs, cap, sizeof *p->xs);
		bool ys = grow_to(&p->ys, cap, sizeof *p->ys);
		bool nm = grow_to(&p->names, cap, sizeof *p->names);
		if (!s || !cp || !xs || !ys || !nm) {
			fail(r, MP_ENOMEM, "%s: out of memory", r->name);
			return -1;
		}
		p->cap_series = cap;
	}
	size_t k = p->nseries;
	p->names[k] = dup_text(r, name);
	if (!p->names[k])
		return -1;
	p->xs[k] = p->ys[k] = NULL;
	p->cap_points[k] = 0;
	p->series[k] = (plot_series){ .name = p->names[k], .n = 0,
				      .draw = r->draw_columns ? PLOT_DRAW_COLUMNS : PLOT_DRAW_LINE };
	p->nseries++;
	return (long)k;
}

static bool grow_points(reader *r, size_t k, size_t need)
{
	csvplot *p = r->p;
	if (need <= p->cap_points[k])
		return true;
	size_t cap = p->cap_points[k] ? p->cap_points[k] : 64;
	while (cap < need)
		cap *= 2;
	double *x = realloc(p->xs[k], cap * sizeof *x);
	if (x)
		p->xs[k] = x;
	double *y = realloc(p->ys[k], cap * sizeof *y);
	if (y)
		p->ys[k] = y;
	if (!x || !y) {
		fail(r, MP_ENOMEM, "%s: out of memory after %zu rows", r->name, p->rows);
		return false;
	}
	p->cap_points[k] = cap;
	return true;
}

/* The index of category text (bars), added on first use. */
static long category_for(reader *r, const char *text)
{
	csvplot *p = r->p;
	for (size_t i = p->ncat; i-- > 0;)
		if (!strcmp(p->categories[i], text))
			return (long)i;
	if (p->ncat == p->cap_cat) {
		size_t cap = p->cap_cat ? p->cap_cat * 2 : 16;
		char **c = realloc(p->categories, cap * sizeof *c);
		if (!c) {
			fail(r, MP_ENOMEM, "%s: out of memory", r->name);
			return -1;
		}
		p->categories = c;
		p->cap_cat = cap;
	}
	if (!(p->categories[p->ncat] = dup_text(r, text)))
		return -1;
	return (long)p->ncat++;
}

/* --- records --- */

/* Parses a numeric cell: true with *v set, or true with *v NaN for an empty
 * cell; false when it is not a number. */
static bool number(const char *s, double *v)
{
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s) {
		*v = NAN;
		return true;
	}
	char *end;
	errno = 0;
	*v = strtod(s, &end);
	while (*end == ' ' || *end == '\t')
		end++;
	return end != s && *end == '\0';
}

static void data_record(reader *r)
{
	csvplot *p = r->p;
	const char *xtext = r->cells[r->xcol].s;
	double x;
	bool xnum = number(xtext, &x);
	if (!r->decided) {
		r->decided = true;
		if (!xnum && !r->bars)
			r->bars = true;   /* categorical x: a bar chart */
		p->fig.kind = r->bars ? PLOT_BARS : PLOT_XY;
	}
	if (!r->bars && !xnum) {
		fail(r, MP_EINVAL, "%s:%lu: column '%s': '%s' is not a number", r->name, r->rec_line,
		     r->header[r->xcol], xtext);
		return;
	}
	const char *byval = r->bycol >= 0 ? cell_text(r->cells[r->bycol].s) : NULL;
	long cat = -1;
	if (r->bars) {
		const char *ctext = cell_text(xtext);
		if (p->schema == CSVPLOT_BUDGET && !strcmp(ctext, "total")) {
			free(r->total);
			r->total = dup_text(r, r->cells[r->ycols[0]].s);
			return;
		}
		if ((cat = category_for(r, ctext)) < 0)
			return;
	}
	for (size_t j = 0; j < r->ny; j++) {
		const char *ytext = r->cells[r->ycols[j]].s;
		double y;
		if (!number(ytext, &y)) {
			fail(r, MP_EINVAL, "%s:%lu: column '%s': '%s' is not a number", r->name, r->rec_line,
			     r->header[r->ycols[j]], ytext);
			return;
		}
		if (isnan(y) && !*ytext)
			continue;   /* an empty cell: no point */
		long k = series_for(r, byval, j);
		if (k < 0)
			return;
		if (r->bars) {
			/* values by category, NaN where a category has none */
			if (!grow_points(r, (size_t)k, (size_t)cat + 1))
				return;
			for (size_t i = p->series[k].n; i < (size_t)cat; i++)
				p->ys[k][i] = NAN;
			if (p->schema == CSVPLOT_MISCONCEPTIONS && (size_t)cat < p->series[k].n && !isnan(p->ys[k][cat]))
				y += p->ys[k][cat];   /* one bar per misconception: its fields' students summed */
			p->ys[k][cat] = y;
			if ((size_t)cat + 1 > p->series[k].n)
				p->series[k].n = (size_t)cat + 1;
		} else {
			size_t n = p->series[k].n;
			if (!grow_points(r, (size_t)k, n + 1))
				return;
			p->xs[k][n] = x;
			p->ys[k][n] = y;
			p->series[k].n = n + 1;
		}
	}
}

static void on_field(void *data, size_t len, void *ctx)
{
	reader *r = ctx;
	if (r->st != MP_OK)
		return;
	if (!r->in_record) {
		r->in_record = true;
		r->rec_line = r->line;
		r->ncells = 0;
		r->rec_bytes = 0;
	}
	r->rec_bytes += len;
	if (r->rec_bytes > MAX_RECORD) {
		fail(r, MP_EINVAL, "%s:%lu: a record longer than %zu bytes", r->name, r->rec_line, MAX_RECORD);
		return;
	}
	if (r->ncells == r->cap_cells) {
		size_t cap = r->cap_cells ? r->cap_cells * 2 : 16;
		if (cap > 100000) {
			fail(r, MP_EINVAL, "%s:%lu: more than 100000 fields in a record", r->name, r->rec_line);
			return;
		}
		cellbuf *c = realloc(r->cells, cap * sizeof *c);
		if (!c) {
			fail(r, MP_ENOMEM, "%s: out of memory", r->name);
			return;
		}
		memset(c + r->cap_cells, 0, (cap - r->cap_cells) * sizeof *c);
		r->cells = c;
		r->cap_cells = cap;
	}
	cellbuf *b = &r->cells[r->ncells++];
	if (len + 1 > b->cap) {
		char *s = realloc(b->s, len + 1);
		if (!s) {
			fail(r, MP_ENOMEM, "%s: out of memory", r->name);
			return;
		}
		b->s = s;
		b->cap = len + 1;
	}
	if (len)
		memcpy(b->s, data, len);
	b->s[len] = '\0';
	b->len = len;
	if (memchr(b->s, '\0', len))
		fail(r, MP_EINVAL, "%s:%lu: a NUL byte in a field", r->name, r->rec_line);
}

static void on_record(int term, void *ctx)
{
	(void)term;
	reader *r = ctx;
	if (r->st != MP_OK)
		return;
	if (!r->in_record)   /* libcsv reports a record without fields for "\n" after "\r" etc. */
		return;
	r->in_record = false;
	if (!r->have_header) {
		r->header = calloc(r->ncells, sizeof *r->header);
		if (!r->header) {
			fail(r, MP_ENOMEM, "%s: out of memory", r->name);
			return;
		}
		r->nheader = r->ncells;
		for (size_t i = 0; i < r->ncells; i++)
			if (!(r->header[i] = dup_text(r, cell_text(r->cells[i].s))))
				return;
		r->have_header = true;
		take_header(r);
		return;
	}
	if (r->ncells != r->nheader) {
		fail(r, MP_EINVAL, "%s:%lu: %zu field%s, the header has %zu", r->name, r->rec_line, r->ncells,
		     r->ncells == 1 ? "" : "s", r->nheader);
		return;
	}
	r->p->rows++;
	data_record(r);
}

/* --- feeding --- */

static void feed(reader *r, struct csv_parser *csv, const char *s, size_t len)
{
	if (r->st == MP_OK && len > MAX_INPUT - r->fed)
		fail(r, MP_EINVAL, "%s: more than %zu MiB of input", r->name, MAX_INPUT >> 20);
	const char *nul = r->st == MP_OK ? memchr(s, '\0', len) : NULL;
	if (nul) {
		unsigned long at = r->line;
		for (const char *q = s; q < nul; q++)
			at += *q == '\n';
		fail(r, MP_EINVAL, "%s:%lu: a NUL byte in a field", r->name, at);
	}
	r->fed += len;
	/* one line at a time, so each record knows the line it began on */
	while (len > 0 && r->st == MP_OK) {
		const char *nl = memchr(s, '\n', len < MAX_FIELD ? len : MAX_FIELD);
		size_t n = nl ? (size_t)(nl - s) + 1 : len < MAX_FIELD ? len : MAX_FIELD;
		if (csv_parse(csv, s, n, on_field, on_record, r) != n)
			fail(r, csv_error(csv) == CSV_ENOMEM ? MP_ENOMEM : MP_EINVAL, "%s:%lu: %s", r->name, r->line,
			     csv_error(csv) == CSV_EPARSE ? "malformed CSV (a stray or unclosed quote)"
							  : csv_strerror(csv_error(csv)));
		/* libcsv hands a field over only when it ends: the one it is
		 * buffering is checked here, after at most one read's worth */
		if (csv->entry_pos > MAX_FIELD)
			fail(r, MP_EINVAL, "%s:%lu: a field longer than %zu bytes", r->name, r->line, MAX_FIELD);
		if (nl)
			r->line++;
		s += n;
		len -= n;
	}
}

static void finish(reader *r, struct csv_parser *csv)
{
	csvplot *p = r->p;
	if (r->st == MP_OK && csv_fini(csv, on_field, on_record, r) != 0)
		fail(r, MP_EINVAL, "%s:%lu: malformed CSV (an unclosed quote at the end)", r->name, r->rec_line);
	if (r->st == MP_OK && !r->have_header)
		fail(r, MP_EINVAL, "%s: empty file (no header line)", r->name);
	if (r->st == MP_OK && p->nseries == 0)
		fail(r, MP_EINVAL, "%s: no values to plot in %lu data row%s", r->name, (unsigned long)p->rows,
		     p->rows == 1 ? "" : "s");
	if (r->st == MP_OK) {
		plot_figure *f = &p->fig;
		for (size_t k = 0; k < p->nseries; k++) {
			p->series[k].x = r->bars ? NULL : p->xs[k];
			p->series[k].y = p->ys[k];
			if (r->bars) {
				/* pad to every category */
				if (grow_points(r, k, p->ncat ? p->ncat : 1)) {
					for (size_t i = p->series[k].n; i < p->ncat; i++)
						p->ys[k][i] = NAN;
					p->series[k].n = p->ncat;
					p->series[k].y = p->ys[k];
				}
			}
		}
		f->series = p->series;
		f->nseries = p->nseries;
		f->categories = (const char *const *)p->categories;
		f->ncategories = p->ncat;
		f->xlabel = p->xlabel;
		f->ylabel = p->ylabel;
		if (r->bars) {
			/* the value axis is horizontal: it takes the y column's name */
			f->xlabel = p->ylabel;
			f->ylabel = NULL;
			f->logx = f->logy;
			f->logy = false;
		}
		if (r->total && p->title && !r->o->title) {
			double v;
			char num[32];
			if (!number(r->total, &v))
				v = NAN;
			plot_format_value(v, 4, num, sizeof num);
			size_t n = strlen(p->title) + strlen(num) + strlen(r->header[r->ycols[0]]) + 16;
			char *t = malloc(n);
			if (t) {
				snprintf(t, n, "%s (total %s %s)", p->title, num, r->header[r->ycols[0]]);
				free(p->title);
				p->title = t;
			}
		}
		f->title = p->title;
	}
	for (size_t i = 0; i < r->cap_cells; i++)
		free(r->cells[i].s);
	free(r->cells);
	for (size_t i = 0; i < r->nheader; i++)
		free(r->header[i]);
	free(r->header);
	free(r->total);
	if (r->st != MP_OK)
		csvplot_free(p);
}

/* A reader for p and its CSV parser; MP_ENOMEM when the parser gets no memory. */
static mp_status start(reader *r, struct csv_parser *csv, csvplot *p, const char *name, const csvplot_options *o,
                       char *err, size_t errlen)
{
	static const csvplot_options defaults = { .logx = -1, .logy = -1 };
	memset(p, 0, sizeof *p);
	plot_figure_init(&p->fig);
	*r = (reader){ .p = p, .o = o ? o : &defaults, .name = name, .err = err, .errlen = errlen, .line = 1,
		       .xcol = -1, .bycol = -1 };
	if (errlen)
		err[0] = '\0';
	if (csv_init(csv, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
		snprintf(err, errlen, "%s: out of memory", name);
		return MP_ENOMEM;
	}
	return MP_OK;
}

mp_status csvplot_read_mem(csvplot *p, const char *data, size_t len, const char *name, const csvplot_options *o,
			   char *err, size_t errlen)
{
	reader r;
	struct csv_parser csv;
	if (start(&r, &csv, p, name, o, err, errlen) != MP_OK)
		return MP_ENOMEM;
	feed(&r, &csv, data, len);
	finish(&r, &csv);
	csv_free(&csv);
	return r.st;
}

mp_status csvplot_read(csvplot *p, FILE *fp, const char *name, const csvplot_options *o, char *err, size_t errlen)
{
	reader r;
	struct csv_parser csv;
	if (start(&r, &csv, p, name, o, err, errlen) != MP_OK)
		return MP_ENOMEM;
	char buf[1 << 16];
	size_t n;
	while (r.st == MP_OK && (n = fread(buf, 1, sizeof buf, fp)) > 0)
		feed(&r, &csv, buf, n);
	if (r.st == MP_OK && ferror(fp))
		fail(&r, MP_EIO, "%s: %s", name, strerror(errno ? errno : EIO));
	finish(&r, &csv);
	csv_free(&csv);
	return r.st;
}

void csvplot_free(csvplot *p)
{
	for (size_t k = 0; k < p->nseries; k++) {
		free(p->xs[k]);
		free(p->ys[k]);
		free(p->names[k]);
	}
	free(p->series);
	free(p->cap_points);
	free(p->xs);
	free(p->ys);
	free(p->names);
	for (size_t i = 0; i < p->ncat; i++)
		free(p->categories[i]);
	free(p->categories);
	free(p->title);
	free(p->xlabel);
	free(p->ylabel);
	memset(p, 0, sizeof *p);
	plot_figure_init(&p->fig);
}
