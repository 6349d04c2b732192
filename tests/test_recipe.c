/* train/recipe.c: each memory-budget recipe maps to the policy that keeps
 * its copies, checked against what budget/budget.h says each recipe keeps
 * (typed here), not against the map itself. */
#include <check.h>

#include "train/recipe.h"
#include "testutil.h"

START_TEST(each_recipe)
{
	train_policy p;
	/* everything fp32 */
	ck_assert_int_eq(policy_for_recipe(BUDGET_RECIPE_FP32, &p), MP_OK);
	ck_assert_str_eq(p.name, "fp32");
	ck_assert_int_eq(p.gemm_fmt, FMT_FP32);
	ck_assert_int_eq(p.grad_fmt, FMT_FP32);
	ck_assert_int_eq(p.optim_fmt, FMT_FP32);
	/* fp32 master, fp16 copy and gradient, fp32 accumulator, a loss scaler */
	ck_assert_int_eq(policy_for_recipe(BUDGET_RECIPE_FP16_MIXED, &p), MP_OK);
	ck_assert_str_eq(p.name, "fp16-mixed");
	ck_assert_int_eq(p.weight_fmt, FMT_FP32);
	ck_assert_int_eq(p.gemm_fmt, FMT_FP16);
	ck_assert_int_eq(p.grad_fmt, FMT_FP16);
	ck_assert_int_eq(p.grad_accum_fmt, FMT_FP32);
	ck_assert_int_ne(p.scaling, SCALER_NONE);
	/* the same in bf16, no loss scaling */
	ck_assert_int_eq(policy_for_recipe(BUDGET_RECIPE_BF16_MIXED, &p), MP_OK);
	ck_assert_str_eq(p.name, "bf16-mixed");
	ck_assert_int_eq(p.weight_fmt, FMT_FP32);
	ck_assert_int_eq(p.gemm_fmt, FMT_BF16);
	ck_assert_int_eq(p.grad_fmt, FMT_BF16);
	ck_assert_int_eq(p.grad_accum_fmt, FMT_FP32);
	ck_assert_int_eq(p.scaling, SCALER_NONE);
	/* weights and Adam's state in bf16, no fp32 master */
	ck_assert_int_eq(policy_for_recipe(BUDGET_RECIPE_BF16_PURE, &p), MP_OK);
	ck_assert_str_eq(p.name, "bf16-pure");
	ck_assert(!policy_master_fp32(&p));
	ck_assert_int_eq(p.weight_fmt, FMT_BF16);
	ck_assert_int_eq(p.optim_fmt, FMT_BF16);
	/* fp32 master, an fp8 (e4m3) weight copy in the products, fp32 accumulator */
	ck_assert_int_eq(policy_for_recipe(BUDGET_RECIPE_FP8_MIXED, &p), MP_OK);
	ck_assert_str_eq(p.name, "fp8-mixed");
	ck_assert_int_eq(p.weight_fmt, FMT_FP32);
	ck_assert_int_eq(p.gemm_fmt, FMT_E4M3);
	ck_assert_int_eq(p.grad_accum_fmt, FMT_FP32);
}
END_TEST

START_TEST(no_policy)
{
	train_policy p = { .name = "untouched" };
	/* every preset accumulates gradients in fp32 */
	ck_assert_int_eq(policy_for_recipe(BUDGET_RECIPE_BF16_MIXED_NOACCUM, &p), MP_EUNSUPPORTED);
	ck_assert_ptr_null(policy_name_for_recipe(BUDGET_RECIPE_BF16_MIXED_NOACCUM));
	ck_assert_int_eq(policy_for_recipe(BUDGET_RECIPE_COUNT, &p), MP_EINVAL);
	ck_assert_int_eq(policy_for_recipe((budget_recipe)-1, &p), MP_EINVAL);
	ck_assert_ptr_null(policy_name_for_recipe(BUDGET_RECIPE_COUNT));
	ck_assert_str_eq(p.name, "untouched");
	ck_assert_str_eq(policy_name_for_recipe(BUDGET_RECIPE_FP16_MIXED), "fp16-mixed");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("recipe");
	TCase *tc = tcase_create("recipe");
	tcase_add_test(tc, each_recipe);
	tcase_add_test(tc, no_policy);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
