#include <math.h>
#include <string.h>

#include "train/schedule.h"

double lr_schedule_at(const lr_schedule *s, double lr, uint64_t n)
{
	if (s->warmup > 0 && n <= s->warmup)
		return lr * (double)n / (double)s->warmup;
	if (s->kind == LR_CONSTANT)
		return lr;
	/* progress through the decay, 0 right after the warmup, 1 at the last update */
	double span = s->total > s->warmup ? (double)(s->total - s->warmup) : 0.0;
	double p = span > 0 ? (double)(n - s->warmup) / span : 1.0;
	if (p > 1)
		p = 1;
	return s->lr_min + 0.5 * (lr - s->lr_min) * (1.0 + cos(M_PI * p));
}

mp_status lr_kind_parse(const char *name, lr_kind *k)
{
	if (!strcmp(name, "constant"))
		*k = LR_CONSTANT;
	else if (!strcmp(name, "cosine"))
		*k = LR_COSINE;
	else
		return MP_EINVAL;
	return MP_OK;
}

const char *lr_kind_name(lr_kind k)
{
	return k == LR_COSINE ? "cosine" : "constant";
}
