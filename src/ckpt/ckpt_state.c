#include <stdlib.h>
#include <string.h>

#include "ckpt/ckpt_state.h"

/* The dtypes both sides know, side by side. */
static const struct {
	rs_dtype rs;
	st_dtype st;
} dtypes[] = {
	{ RS_F32, ST_F32 }, { RS_F16, ST_F16 }, { RS_BF16, ST_BF16 }, { RS_F64, ST_F64 }, { RS_I64, ST_I64 },
};
enum { NDTYPES = sizeof dtypes / sizeof dtypes[0] };

mp_status ckpt_state_extras(const run_state *rs, st_tensor **x, size_t *n, st_meta **m, size_t *nm)
{
	*x = calloc(rs->n ? rs->n : 1, sizeof **x);
	*m = calloc(rs->nmeta ? rs->nmeta : 1, sizeof **m);
	*n = *nm = 0;
	if (!*x || !*m) {
		free(*x);
		free(*m);
		*x = NULL;
		*m = NULL;
		return MP_ENOMEM;
	}
	for (size_t i = 0; i < rs->n; i++) {
		const rs_tensor *t = &rs->tensors[i];
		if (!run_state_is_state_name(t->name))
			continue;
		st_tensor s = { .name = t->name, .ndim = t->ndim, .data = t->data, .nbytes = t->nbytes };
		for (size_t d = 0; d < NDTYPES; d++)
			if (dtypes[d].rs == t->dtype)
				s.dtype = dtypes[d].st;
		for (size_t k = 0; k < t->ndim; k++)
			s.shape[k] = t->shape[k];
		(*x)[(*n)++] = s;
	}
	for (size_t i = 0; i < rs->nmeta; i++)
		(*m)[(*nm)++] = (st_meta){ .key = rs->meta[i].key, .value = rs->meta[i].value };
	return MP_OK;
}

mp_status ckpt_state_read(const ckpt_model *m, run_state *rs)
{
	const st_file *f = &m->file;
	mp_status st = MP_OK;
	/* a run of the largest shape train accepts holds a few thousand tensors;
	 * more would only make the duplicate check in run_state_add quadratic */
	if (f->n > CKPT_STATE_MAX_TENSORS)
		return MP_EINVAL;
	for (size_t i = 0; i < f->n && st == MP_OK; i++) {
		const st_tensor *t = &f->tensors[i];
		if (t->ndim > RS_MAX_DIM || strlen(t->name) >= RS_NAME_MAX)
			continue;
		size_t d = 0;
		while (d < NDTYPES && dtypes[d].st != t->dtype)
			d++;
		if (d == NDTYPES)
			continue;
		size_t shape[RS_MAX_DIM];
		for (size_t k = 0; k < t->ndim; k++)
			shape[k] = (size_t)t->shape[k];
		/* the reader checked nbytes against dtype and shape */
		st = run_state_add(rs, t->name, dtypes[d].rs, t->ndim, shape, t->data);
	}
	for (size_t i = 0; i < f->nmeta && st == MP_OK; i++)
		st = run_state_set_meta(rs, f->meta[i].key, f->meta[i].value);
	return st;
}
