#include "train/recipe.h"

static const char *const recipe_policy[BUDGET_RECIPE_COUNT] = {
	[BUDGET_RECIPE_FP32] = "fp32",
	[BUDGET_RECIPE_FP16_MIXED] = "fp16-mixed",
	[BUDGET_RECIPE_BF16_MIXED] = "bf16-mixed",
	[BUDGET_RECIPE_BF16_MIXED_NOACCUM] = NULL,   /* every preset accumulates gradients in fp32 */
	[BUDGET_RECIPE_BF16_PURE] = "bf16-pure",
	[BUDGET_RECIPE_FP8_MIXED] = "fp8-mixed",
};

const char *policy_name_for_recipe(budget_recipe r)
{
	return (int)r >= 0 && r < BUDGET_RECIPE_COUNT ? recipe_policy[r] : NULL;
}

mp_status policy_for_recipe(budget_recipe r, train_policy *out)
{
	if (!((int)r >= 0 && r < BUDGET_RECIPE_COUNT))
		return MP_EINVAL;
	if (!recipe_policy[r])
		return MP_EUNSUPPORTED;
	return policy_from_name(recipe_policy[r], out);
}
