/* From a memory-budget recipe (budget/budget.h) to the training policy of
 * the tiny trainer that keeps the same copies, so that the budget lab can set
 * the trainer up beside the formula. */
#ifndef MIXPREC_TRAIN_RECIPE_H
#define MIXPREC_TRAIN_RECIPE_H

#include "budget/budget.h"
#include "train/policy.h"
#include "util/status.h"

/* The name of the preset policy that keeps recipe r's copies; NULL when no
 * preset does (bf16 mixed without the fp32 gradient accumulator) or r is not
 * a recipe. */
const char *policy_name_for_recipe(budget_recipe r);

/* That preset into *out: MP_OK; MP_EUNSUPPORTED when no preset keeps r's
 * copies, MP_EINVAL when r is not a recipe (*out untouched either way). */
mp_status policy_for_recipe(budget_recipe r, train_policy *out);

#endif
