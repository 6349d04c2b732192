/* Figures from CSV files: the columns to plot are chosen by name, with
 * defaults recognised from the headers mixprec writes (drift, drift --sweep,
 * train, gradhist, budget, grade --misconceptions). Read with libcsv as a stream, so a file of any
 * size costs memory only for the plotted values. */
#ifndef MIXPREC_PLOT_CSVPLOT_H
#define MIXPREC_PLOT_CSVPLOT_H

#include <stdbool.h>
#include <stdio.h>

#include "plot/plot.h"

typedef struct {
	const char *x;       /* column name; NULL: the recognised default, else the first column */
	const char *y;       /* comma-separated column names; NULL: the recognised default */
	const char *by;      /* column whose values split the rows into series; NULL: the
	                        recognised default; "": no split */
	const char *title;   /* NULL: the file name */
	int logx, logy;      /* -1: the recognised default (gradhist: log y), 0 off, 1 on */
} csvplot_options;

/* Which CSV the header was recognised as. */
typedef enum {
	CSVPLOT_UNKNOWN = 0,
	CSVPLOT_DRIFT,       /* variant,step,mean,drift,retained,unchanged_frac */
	CSVPLOT_SWEEP,       /* x0,variant,start,drift,retained,unchanged_frac */
	CSVPLOT_TRAIN,       /* step,policy,loss,... */
	CSVPLOT_GRADHIST,    /* log2_lo,log2_hi,count,share,fp16_at_scale */
	CSVPLOT_BUDGET,      /* component,bytes_per_param,bytes,gb,gib */
	CSVPLOT_MISCONCEPTIONS, /* misconception,exercise,field,students,share */
} csvplot_schema;

typedef struct {
	plot_figure fig;     /* ready to render; points into this struct */
	csvplot_schema schema;
	size_t rows;         /* data records read */
	/* owned storage behind fig */
	plot_series *series;
	size_t nseries, cap_series;
	size_t *cap_points;  /* (nseries) */
	double **xs, **ys;   /* (nseries) */
	char **names;        /* (nseries) */
	char **categories;   /* (ncat) bars: x values in order of appearance */
	size_t ncat, cap_cat;
	char *title, *xlabel, *ylabel;
} csvplot;

/* Reads CSV text from fp (name is used in messages: "name:line: ...") into
 * p, choosing the columns by o (NULL: all defaults). A data record whose x
 * cell is not a number makes a bar chart (categories = the x values, the
 * last value of each category wins); so does a budget CSV, whose "total"
 * row is left out of the bars and named in the title, and a grade
 * --misconceptions CSV, whose rows of one misconception (in several fields)
 * add up to one bar.
 *
 * An empty cell in a plotted column leaves that point out (train CSVs have
 * val_loss only on evaluation steps); any other cell that is not a number
 * is an error naming file, line and column. Returns MP_EINVAL for bad
 * input or options (err: "name:line: ..." or "--y: no column 'x' (columns:
 * ...)"), MP_EIO for a read error, MP_ENOMEM. On error p is left empty. */
mp_status csvplot_read(csvplot *p, FILE *fp, const char *name, const csvplot_options *o, char *err, size_t errlen);

/* Releases what csvplot_read allocated (p may be zeroed or already freed). */
void csvplot_free(csvplot *p);

/* Parses a whole CSV held in memory (for tests and the fuzzer). */
mp_status csvplot_read_mem(csvplot *p, const char *data, size_t len, const char *name, const csvplot_options *o,
			   char *err, size_t errlen);

#endif
