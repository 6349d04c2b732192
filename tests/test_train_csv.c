/* train/train_csv.c: rows of hand-filled statistics against the text typed
 * here, field by field as the train --csv contract (doc/mixprec.1) states it. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/train_csv.h"
#include "testutil.h"

/* What the writer wrote into a temporary file, NUL-terminated (static). */
static const char *written(FILE *fp)
{
	static char buf[1024];
	rewind(fp);
	size_t n = fread(buf, 1, sizeof buf - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

START_TEST(header)
{
	FILE *fp = tmpfile();
	ck_assert_ptr_nonnull(fp);
	csvw w;
	csvw_init(&w, fp);
	train_csv_header(&w);
	ck_assert_str_eq(written(fp), "step,policy,loss,val_loss,grad_norm,loss_scale,skipped,underflow_frac,"
	                              "lost_update_frac,resid_lost_frac,ms,overflow_frac,grad_noise_ratio,"
	                              "wgrad_noise_ratio\n");
}
END_TEST

START_TEST(rows)
{
	FILE *fp = tmpfile();
	ck_assert_ptr_nonnull(fp);
	csvw w;
	csvw_init(&w, fp);
	/* no evaluation (empty val_loss), a skipped step, a negative fraction
	 * (a number: no apostrophe), 6 significant digits, ms to 3 decimals */
	train_stats a = { .step = 7, .loss = 2.5, .val_loss = NAN, .grad_norm = 0.125, .loss_scale = 65536,
		          .skipped = true, .underflow_frac = 0.25, .lost_update_frac = 1e-7,
		          .resid_lost_frac = -9.96731e-10, .ms = 12.3456, .overflow_frac = NAN,
		          .grad_noise_ratio = NAN, .wgrad_noise_ratio = NAN };
	/* 1/3 to 6 decimals, 123456789 as 1.23457e+08, zeros; overflow_frac,
	 * grad_noise_ratio and wgrad_noise_ratio last, empty without fp8
	 * scaling (a), else 6 digits (b: sqrt(3) = 1.7320508..., 1/7 =
	 * 0.142857...); b's ratios infinite and NaN in c (an exact cast; a
	 * per-tensor recipe's weight gradients) */
	train_stats b = { .step = 8, .loss = 1.0 / 3.0, .val_loss = 1.75, .grad_norm = 123456789, .loss_scale = 1,
		          .overflow_frac = 1.0 / 3.0 * 1e-6, .grad_noise_ratio = sqrt(3.0),
		          .wgrad_noise_ratio = 1.0 / 7.0 };
	train_stats c = b;
	c.grad_noise_ratio = INFINITY;
	c.wgrad_noise_ratio = NAN;
	train_csv_row(&w, "fp16-mixed", &a);
	train_csv_row(&w, "fp32", &b);
	/* a name with a comma is quoted */
	train_csv_row(&w, "a,b", &b);
	train_csv_row(&w, "c", &c);
	ck_assert(csvw_ok(&w));
	ck_assert_str_eq(written(fp), "7,fp16-mixed,2.500000,,0.125,65536,1,0.25,1e-07,-9.96731e-10,12.346,,,\n"
	                              "8,fp32,0.333333,1.750000,1.23457e+08,1,0,0,0,0,0.000,3.33333e-07,1.73205,0.142857\n"
	                              "8,\"a,b\",0.333333,1.750000,1.23457e+08,1,0,0,0,0,0.000,3.33333e-07,1.73205,0.142857\n"
	                              "8,c,0.333333,1.750000,1.23457e+08,1,0,0,0,0,0.000,3.33333e-07,inf,\n");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("train_csv");
	TCase *tc = tcase_create("train_csv");
	tcase_add_test(tc, header);
	tcase_add_test(tc, rows);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
