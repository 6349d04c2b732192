/* The plot module's CSV reader (plot/csvplot.h): the axes, series and scales
 * it picks for each CSV that mixprec writes, named columns for any other,
 * its errors with file:line, and a large file streamed through a pipe. */
#include <stdio.h>
#include <string.h>

#include "plot/csvplot.h"
#include "plot/plot.h"
#include "plot_fixture.h"
#include "testutil.h"

static mp_status read_csv(csvplot *p, const char *text, const csvplot_options *o, char *err, size_t errlen)
{
	return csvplot_read_mem(p, text, strlen(text), "t.csv", o, err, errlen);
}

START_TEST(csv_drift_defaults)
{
	const char *text = "variant,step,mean,drift,retained,unchanged_frac\n"
			   "fp64,0,600,0,,0\n"
			   "fp64,10,605,5,1,0\n"
			   "bf16-rne,0,600,0,,0\n"
			   "bf16-rne,10,600,0,0,1\n"
			   "bf16-rne,20,604,4,0.4,0.9\n";
	csvplot p;
	char err[256];
	ck_assert_int_eq(read_csv(&p, text, NULL, err, sizeof err), MP_OK);
	ck_assert_int_eq(p.schema, CSVPLOT_DRIFT);
	ck_assert_int_eq(p.fig.kind, PLOT_XY);
	ck_assert_int_eq(p.rows, 5);
	ck_assert_uint_eq(p.fig.nseries, 2);
	ck_assert_str_eq(p.fig.series[0].name, "fp64");
	ck_assert_str_eq(p.fig.series[1].name, "bf16-rne");
	/* the empty retained cells at step 0 are no points */
	ck_assert_uint_eq(p.fig.series[0].n, 1);
	ck_assert(p.fig.series[0].x[0] == 10 && p.fig.series[0].y[0] == 1);
	ck_assert_uint_eq(p.fig.series[1].n, 2);
	ck_assert(p.fig.series[1].x[1] == 20 && p.fig.series[1].y[1] == 0.4);
	ck_assert_str_eq(p.fig.xlabel, "step");
	ck_assert_str_eq(p.fig.ylabel, "retained");
	ck_assert_str_eq(p.fig.title, "t.csv");
	ck_assert(!p.fig.logx && !p.fig.logy);
	csvplot_free(&p);

	/* options override: two y columns, no split, a title, log y */
	csvplot_options o = { .y = "mean,drift", .by = "", .title = "T", .logx = -1, .logy = 1 };
	ck_assert_int_eq(read_csv(&p, text, &o, err, sizeof err), MP_OK);
	ck_assert_uint_eq(p.fig.nseries, 2);
	ck_assert_str_eq(p.fig.series[0].name, "mean");
	ck_assert_str_eq(p.fig.series[1].name, "drift");
	ck_assert_uint_eq(p.fig.series[0].n, 5);
	ck_assert_str_eq(p.fig.title, "T");
	ck_assert(p.fig.logy);
	ck_assert_ptr_null(p.fig.ylabel);
	csvplot_free(&p);
}
END_TEST

START_TEST(csv_other_schemas)
{
	csvplot p;
	char err[256];
	/* train: x step, y loss, by policy; val_loss empty off evaluation steps */
	const char *train = "step,policy,loss,val_loss,grad_norm,loss_scale,skipped,underflow_frac,"
			    "lost_update_frac,resid_lost_frac,ms\r\n"
			    "1,fp32,4.1,,1,1,0,0,0,0,3\r\n"
			    "1,bf16-mixed,4.2,,1,1,0,0,0,0,2\r\n"
			    "2,fp32,3.9,3.95,1,1,0,0,0,0,3\r\n";
	ck_assert_int_eq(read_csv(&p, train, NULL, err, sizeof err), MP_OK);
	ck_assert_int_eq(p.schema, CSVPLOT_TRAIN);
	ck_assert_uint_eq(p.fig.nseries, 2);
	ck_assert_uint_eq(p.fig.series[0].n, 2);
	ck_assert(p.fig.series[0].y[1] == 3.9);
	csvplot_free(&p);
	csvplot_options o = { .y = "val_loss", .logx = -1, .logy = -1 };
	ck_assert_int_eq(read_csv(&p, train, &o, err, sizeof err), MP_OK);
	ck_assert_uint_eq(p.fig.nseries, 1);   /* bf16-mixed never evaluated */
	ck_assert_uint_eq(p.fig.series[0].n, 1);
	ck_assert(p.fig.series[0].x[0] == 2 && p.fig.series[0].y[0] == 3.95);
	csvplot_free(&p);

	/* gradhist: columns, log y, one series per class */
	const char *grad = "log2_lo,log2_hi,count,share,fp16_at_scale\n"
			   "-30,-29,1,0.25,flushed\n-29,-28,1,0.25,flushed\n-20,-19,2,0.5,normal\n";
	ck_assert_int_eq(read_csv(&p, grad, NULL, err, sizeof err), MP_OK);
	ck_assert_int_eq(p.schema, CSVPLOT_GRADHIST);
	ck_assert(p.fig.logy && !p.fig.logx);
	ck_assert_uint_eq(p.fig.nseries, 2);
	ck_assert_int_eq(p.fig.series[1].draw, PLOT_DRAW_COLUMNS);
	ck_assert_str_eq(p.fig.series[1].name, "normal");
	csvplot_free(&p);

	/* budget: bars of bytes per component, the total row in the title */
	const char *budget = "component,bytes_per_param,bytes,gb,gib\n"
			     "master_weights,4,28000000000,28,26.08\n"
			     "optimizer_state,8,56000000000,56,52.15\n"
			     "total,12,84000000000,84,78.23\n";
	ck_assert_int_eq(read_csv(&p, budget, NULL, err, sizeof err), MP_OK);
	ck_assert_int_eq(p.fig.kind, PLOT_BARS);
	ck_assert_uint_eq(p.fig.ncategories, 2);
	ck_assert_str_eq(p.fig.categories[1], "optimizer_state");
	ck_assert_uint_eq(p.fig.nseries, 1);
	ck_assert_uint_eq(p.fig.series[0].n, 2);
	ck_assert(p.fig.series[0].y[1] == 56e9);
	ck_assert_str_eq(p.fig.title, "t.csv (total 8.4e10 bytes)");
	ck_assert_str_eq(p.fig.xlabel, "bytes");
	csvplot_free(&p);

	/* a text x column makes bars; quoted cells, a neutralised formula cell
	 * keeps its text; by splits into series, padded with NaN */
	const char *cat = "name,v,who\n\"x, y\",1,'-a\nz,2,b\n";
	o = (csvplot_options){ .y = "v", .by = "who", .logx = -1, .logy = -1 };
	ck_assert_int_eq(read_csv(&p, cat, &o, err, sizeof err), MP_OK);
	ck_assert_int_eq(p.fig.kind, PLOT_BARS);
	ck_assert_str_eq(p.fig.categories[0], "x, y");
	ck_assert_str_eq(p.fig.series[0].name, "-a");
	ck_assert_uint_eq(p.fig.series[0].n, 2);
	ck_assert(p.fig.series[0].y[0] == 1 && isnan(p.fig.series[0].y[1]));
	ck_assert(isnan(p.fig.series[1].y[0]) && p.fig.series[1].y[1] == 2);
	csvplot_free(&p);

	/* grade --misconceptions: a bar per misconception of students; x's rows
	 * in two fields add up, 2 + 3 = 5, and y keeps its 4 */
	const char *misc = "misconception,exercise,field,students,share\n"
	                   "x,7.4c,f1,2,0.2\ny,7.4c,f1,4,0.4\nx,7.4e,f2,3,0.3\n";
	ck_assert_int_eq(read_csv(&p, misc, NULL, err, sizeof err), MP_OK);
	ck_assert_int_eq(p.schema, CSVPLOT_MISCONCEPTIONS);
	ck_assert_int_eq(p.fig.kind, PLOT_BARS);
	ck_assert_uint_eq(p.fig.ncategories, 2);
	ck_assert_str_eq(p.fig.categories[0], "x");
	ck_assert_str_eq(p.fig.categories[1], "y");
	ck_assert_uint_eq(p.fig.nseries, 1);
	ck_assert(p.fig.series[0].y[0] == 5 && p.fig.series[0].y[1] == 4);
	csvplot_free(&p);

	/* sweep: log x */
	const char *sweep = "x0,variant,start,drift,retained,unchanged_frac\n1,fp32,1,5,1,0\n1000,fp32,1000,5,1,0\n";
	ck_assert_int_eq(read_csv(&p, sweep, NULL, err, sizeof err), MP_OK);
	ck_assert_int_eq(p.schema, CSVPLOT_SWEEP);
	ck_assert(p.fig.logx);
	csvplot_free(&p);
}
END_TEST

static void expect_error(const char *text, const csvplot_options *o, const char *msg)
{
	csvplot p;
	char err[512];
	ck_assert_int_eq(read_csv(&p, text, o, err, sizeof err), MP_EINVAL);
	ck_assert_msg(!strcmp(err, msg), "got '%s', expected '%s'", err, msg);
	ck_assert_uint_eq(p.fig.nseries, 0);
}

START_TEST(csv_errors)
{
	csvplot_options y = { .y = "y", .logx = -1, .logy = -1 };
	expect_error("step,policy,loss\n1,a,0.5\n2,a,abc\n", NULL, "t.csv:3: column 'loss': 'abc' is not a number");
	expect_error("step,policy,loss\n1,a,0.5\nnope,a,1\n", NULL, "t.csv:3: column 'step': 'nope' is not a number");
	/* a record spanning lines: the next one is on line 4 */
	expect_error("x,y,note\n1,2,\"a\nb\"\n3,4,c,d\n", &y, "t.csv:4: 4 fields, the header has 3");
	expect_error("x,y\n1,2\n3\n", &y, "t.csv:3: 1 field, the header has 2");
	expect_error("x,y\n1,\"2\n", &y, "t.csv:2: malformed CSV (an unclosed quote at the end)");
	expect_error("x,y\n1,2\"x\"\n", &y, "t.csv:2: malformed CSV (a stray or unclosed quote)");
	expect_error("", NULL, "t.csv: empty file (no header line)");
	expect_error("x,y\n", &y, "t.csv: no values to plot in 0 data rows");
	expect_error("a,b\n1,2\n", NULL,
		     "t.csv: not a CSV that mixprec writes; name the columns to plot with --y "
		     "(and --x, default the first column): a, b");
	csvplot_options bad = { .y = "y,nope", .logx = -1, .logy = -1 };
	expect_error("x,y\n1,2\n", &bad, "--y: no column 'nope' in t.csv (columns: x, y)");
	csvplot_options badx = { .x = "q", .y = "y", .logx = -1, .logy = -1 };
	expect_error("x,y\n1,2\n", &badx, "--x: no column 'q' in t.csv (columns: x, y)");
	csvplot_options empty = { .y = "y,", .logx = -1, .logy = -1 };
	expect_error("x,y\n1,2\n", &empty, "--y: empty or overlong column name in 'y,'");
	/* an embedded NUL */
	csvplot p;
	char err[256];
	ck_assert_int_eq(csvplot_read_mem(&p, "x,y\n1,2\0\n", 9, "t.csv", &y, err, sizeof err), MP_EINVAL);
	ck_assert_str_eq(err, "t.csv:2: a NUL byte in a field");
}
END_TEST

START_TEST(csv_stream_large)
{
	/* 200,000 rows through a pipe in 64 KiB reads: every point kept, the
	 * error on the last line still names it */
	FILE *fp = tmpfile();
	ck_assert_ptr_nonnull(fp);
	fputs("step,policy,loss\n", fp);
	for (int i = 0; i < 200000; i++)
		fprintf(fp, "%d,%s,%g\n", i, i % 2 ? "b" : "a", 1.0 / (i + 1));
	fputs("200000,a,x\n", fp);
	rewind(fp);
	csvplot p;
	char err[256];
	ck_assert_int_eq(csvplot_read(&p, fp, "big.csv", NULL, err, sizeof err), MP_EINVAL);
	ck_assert_str_eq(err, "big.csv:200002: column 'loss': 'x' is not a number");
	fclose(fp);
	fp = tmpfile();
	fputs("step,policy,loss\n", fp);
	for (int i = 0; i < 200000; i++)
		fprintf(fp, "%d,%s,%g\n", i, i % 2 ? "b" : "a", 1.0 / (i + 1));
	rewind(fp);
	ck_assert_int_eq(csvplot_read(&p, fp, "big.csv", NULL, err, sizeof err), MP_OK);
	fclose(fp);
	ck_assert_uint_eq(p.rows, 200000);
	ck_assert_uint_eq(p.fig.series[0].n, 100000);
	ck_assert(p.fig.series[1].x[99999] == 199999);
	/* and it renders */
	ck_assert_int_eq(plot_render_text(&p.fig, 80, 24, true, &canvas), MP_OK);
	ck_assert_int_gt(lit_cells(), 10);
	csvplot_free(&p);
}
END_TEST

static Suite *plot_csv_suite(void)
{
	Suite *s = suite_create("plot_csv");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, csv_drift_defaults);
	tcase_add_test(tc, csv_other_schemas);
	tcase_add_test(tc, csv_errors);
	tcase_add_test(tc, csv_stream_large);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(plot_csv_suite());
}
