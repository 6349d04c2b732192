/* train/shape.c: the tiny shape's numbers (typed here, as the Training and
 * loss-scaling labs have trained it), lookup by name, and options given
 * explicitly kept by train_shape_apply. */
#include <check.h>

#include "train/shape.h"
#include "testutil.h"

START_TEST(tiny)
{
	const train_shape *s;
	ck_assert_int_eq(train_shape_from_name("tiny", &s), MP_OK);
	ck_assert_ptr_eq(s, train_shape_get(TRAIN_SHAPE_TINY));
	train_config c = train_config_default();
	size_t T = c.model.T, V = c.model.V;
	train_shape_apply(s, &c, 0);
	ck_assert_uint_eq(c.B, 4);
	ck_assert_uint_eq(c.t, 32);
	ck_assert_uint_eq(c.model.L, 1);
	ck_assert_uint_eq(c.model.NH, 2);
	ck_assert_uint_eq(c.model.C, 32);
	ck_assert_uint_eq(c.eval_every, 0);
	/* what a shape does not name stays */
	ck_assert_uint_eq(c.model.T, T);
	ck_assert_uint_eq(c.model.V, V);
	ck_assert_str_eq(train_shape_names(), "tiny");
}
END_TEST

START_TEST(keeps_explicit)
{
	train_config c = train_config_default();
	c.B = 7;
	c.model.C = 64;
	c.eval_every = 3;
	train_shape_apply(train_shape_get(TRAIN_SHAPE_TINY), &c,
	                  TRAIN_SHAPE_SET_B | TRAIN_SHAPE_SET_C | TRAIN_SHAPE_SET_EVAL);
	ck_assert_uint_eq(c.B, 7);
	ck_assert_uint_eq(c.model.C, 64);
	ck_assert_uint_eq(c.eval_every, 3);
	ck_assert_uint_eq(c.t, 32);
	ck_assert_uint_eq(c.model.L, 1);
	ck_assert_uint_eq(c.model.NH, 2);
}
END_TEST

START_TEST(unknown)
{
	const train_shape *s = NULL;
	ck_assert_int_eq(train_shape_from_name("huge", &s), MP_EINVAL);
	ck_assert_int_eq(train_shape_from_name("", &s), MP_EINVAL);
	ck_assert_ptr_null(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("shape");
	TCase *tc = tcase_create("shape");
	tcase_add_test(tc, tiny);
	tcase_add_test(tc, keeps_explicit);
	tcase_add_test(tc, unknown);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
