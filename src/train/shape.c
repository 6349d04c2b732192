#include <stdio.h>
#include <string.h>

#include "train/shape.h"

static const train_shape shapes[TRAIN_SHAPE_COUNT] = {
	[TRAIN_SHAPE_TINY] = { .name = "tiny", .about = "batch 4 x 32, 1 layer, 2 heads, 32 channels, --eval-every 0",
	                       .B = 4, .t = 32, .L = 1, .NH = 2, .C = 32, .eval_every = 0 },
};

const train_shape *train_shape_get(train_shape_id id)
{
	return &shapes[id];
}

mp_status train_shape_from_name(const char *name, const train_shape **out)
{
	for (size_t i = 0; i < TRAIN_SHAPE_COUNT; i++)
		if (!strcmp(shapes[i].name, name)) {
			*out = &shapes[i];
			return MP_OK;
		}
	return MP_EINVAL;
}

const char *train_shape_names(void)
{
	static char names[TRAIN_SHAPE_COUNT * 16];
	if (!names[0])
		for (size_t i = 0, n = 0; i < TRAIN_SHAPE_COUNT && n < sizeof names; i++)
			n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", shapes[i].name);
	return names;
}

void train_shape_apply(const train_shape *s, train_config *cfg, unsigned keep)
{
	if (!(keep & TRAIN_SHAPE_SET_B))
		cfg->B = s->B;
	if (!(keep & TRAIN_SHAPE_SET_T))
		cfg->t = s->t;
	if (!(keep & TRAIN_SHAPE_SET_L))
		cfg->model.L = s->L;
	if (!(keep & TRAIN_SHAPE_SET_NH))
		cfg->model.NH = s->NH;
	if (!(keep & TRAIN_SHAPE_SET_C))
		cfg->model.C = s->C;
	if (!(keep & TRAIN_SHAPE_SET_EVAL))
		cfg->eval_every = s->eval_every;
}
