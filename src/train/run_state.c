#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/bulk.h"
#include "train/run_state.h"
#include "util/grow.h"

/* --- dtypes --- */

static const struct {
	const char *name;
	size_t size;
	fmt_id fmt;   /* the float format it encodes (F64, I64: unused) */
} dtypes[RS_DTYPE_COUNT] = {
	[RS_F32] = { .name = "F32", .size = 4, .fmt = FMT_FP32 },
	[RS_F16] = { .name = "F16", .size = 2, .fmt = FMT_FP16 },
	[RS_BF16] = { .name = "BF16", .size = 2, .fmt = FMT_BF16 },
	[RS_F64] = { .name = "F64", .size = 8, .fmt = FMT_FP32 },
	[RS_I64] = { .name = "I64", .size = 8, .fmt = FMT_FP32 },
};

const char *rs_dtype_name(rs_dtype d)
{
	return (size_t)d < RS_DTYPE_COUNT ? dtypes[d].name : NULL;
}

bool run_state_is_state_name(const char *name)
{
	return !strncmp(name, "optimizer.", 10) || !strncmp(name, "state.", 6);
}

size_t rs_dtype_size(rs_dtype d)
{
	return (size_t)d < RS_DTYPE_COUNT ? dtypes[d].size : 0;
}

rs_dtype rs_dtype_of_format(fmt_id f)
{
	switch (f) {
	case FMT_FP16: return RS_F16;
	case FMT_BF16: return RS_BF16;
	default: return RS_F32;
	}
}

static bool is_float_dtype(rs_dtype d)
{
	return (size_t)d < RS_DTYPE_COUNT && d != RS_F64 && d != RS_I64;
}

mp_status rs_encode_floats(rs_dtype d, void *dst, const float *src, size_t n)
{
	if (!is_float_dtype(d))
		return MP_EINVAL;
	if (d == RS_F32) {
		memcpy(dst, src, n * sizeof *src);
		return MP_OK;
	}
	/* the values are the format's already: RNE returns them unchanged */
	fmt_bulk_opts o = { .fmt = dtypes[d].fmt, .mode = FMT_RNE };
	return fmt_bulk_encode(FMT_SIMD_AUTO, &o, dst, src, n);
}

mp_status rs_decode_floats(rs_dtype d, float *dst, const void *src, size_t n)
{
	if (!is_float_dtype(d))
		return MP_EINVAL;
	if (d == RS_F32) {
		memcpy(dst, src, n * sizeof *dst);
		return MP_OK;
	}
	return fmt_bulk_decode(FMT_SIMD_AUTO, dtypes[d].fmt, dst, src, n);
}

/* --- the list --- */

void run_state_init(run_state *rs)
{
	*rs = (run_state){ 0 };
}

void run_state_free(run_state *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->n; i++)
		free(rs->tensors[i].data);
	for (size_t i = 0; i < rs->nmeta; i++) {
		free(rs->meta[i].key);
		free(rs->meta[i].value);
	}
	free(rs->tensors);
	free(rs->meta);
	run_state_init(rs);
}

size_t rs_tensor_count(const rs_tensor *t)
{
	size_t n = 1;
	for (size_t i = 0; i < t->ndim; i++)
		n *= t->shape[i];
	return n;
}

const rs_tensor *run_state_find(const run_state *rs, const char *name)
{
	for (size_t i = 0; i < rs->n; i++)
		if (!strcmp(rs->tensors[i].name, name))
			return &rs->tensors[i];
	return NULL;
}

mp_status run_state_add(run_state *rs, const char *name, rs_dtype dtype, size_t ndim, const size_t *shape,
                        const void *data)
{
	if (strlen(name) >= RS_NAME_MAX || !rs_dtype_size(dtype) || ndim > RS_MAX_DIM || run_state_find(rs, name))
		return MP_EINVAL;
	if (!grow_one(&rs->tensors, &rs->cap, rs->n, 64, sizeof *rs->tensors))
		return MP_ENOMEM;
	rs_tensor t = { .dtype = dtype, .ndim = ndim };
	strcpy(t.name, name);
	for (size_t i = 0; i < ndim; i++)
		t.shape[i] = shape[i];
	t.nbytes = rs_tensor_count(&t) * rs_dtype_size(dtype);
	t.data = calloc(t.nbytes ? t.nbytes : 1, 1);
	if (!t.data)
		return MP_ENOMEM;
	if (data)
		memcpy(t.data, data, t.nbytes);
	rs->tensors[rs->n++] = t;
	return MP_OK;
}

const char *run_state_meta(const run_state *rs, const char *key)
{
	for (size_t i = 0; i < rs->nmeta; i++)
		if (!strcmp(rs->meta[i].key, key))
			return rs->meta[i].value;
	return NULL;
}

mp_status run_state_set_meta(run_state *rs, const char *key, const char *value)
{
	char *v = strdup(value);
	if (!v)
		return MP_ENOMEM;
	for (size_t i = 0; i < rs->nmeta; i++)
		if (!strcmp(rs->meta[i].key, key)) {
			free(rs->meta[i].value);
			rs->meta[i].value = v;
			return MP_OK;
		}
	if (!grow_one(&rs->meta, &rs->metacap, rs->nmeta, 32, sizeof *rs->meta)) {
		free(v);
		return MP_ENOMEM;
	}
	char *k = strdup(key);
	if (!k) {
		free(v);
		return MP_ENOMEM;
	}
	rs->meta[rs->nmeta++] = (rs_meta){ .key = k, .value = v };
	return MP_OK;
}

/* --- the parameters under GPT-2's names --- */

size_t gpt_param_view_count(gpt_config c)
{
	return 2 + 12 * c.L + 2;
}

/* One view: parameter tensor `tensor` of the flat buffer (gpt_param_sizes
 * order), layer l's slice of rows x cols. */
static gpt_param_view view_of(const size_t off[GPT_NUM_PARAM_TENSORS], int tensor, size_t l, size_t rows,
                              size_t cols, bool matrix, const char *name)
{
	gpt_param_view v = { .offset = off[tensor] + l * rows * cols, .rows = rows, .cols = cols,
		             .transposed = matrix && tensor >= 4, .ndim = matrix ? 2 : 1 };
	strcpy(v.name, name);
	if (!matrix)
		v.shape[0] = rows * cols;
	else if (v.transposed) {
		v.shape[0] = cols;
		v.shape[1] = rows;
	} else {
		v.shape[0] = rows;
		v.shape[1] = cols;
	}
	return v;
}

void gpt_param_views(gpt_config c, gpt_param_view *out)
{
	size_t sizes[GPT_NUM_PARAM_TENSORS], off[GPT_NUM_PARAM_TENSORS], at = 0, C = c.C;
	gpt_param_sizes(sizes, c);
	for (size_t i = 0; i < GPT_NUM_PARAM_TENSORS; i++) {
		off[i] = at;
		at += sizes[i];
	}
	/* per layer: tensor index, rows, cols, matrix, GPT-2's name (in its order) */
	static const struct {
		int tensor;
		size_t rmul, cmul;   /* rows = rmul C, cols = cmul C (cmul 0: 1) */
		bool matrix;
		const char *name;
	} layer[12] = {
		{ 2, 1, 0, false, "ln_1.weight" }, { 3, 1, 0, false, "ln_1.bias" },
		{ 4, 3, 1, true, "attn.c_attn.weight" }, { 5, 3, 0, false, "attn.c_attn.bias" },
		{ 6, 1, 1, true, "attn.c_proj.weight" }, { 7, 1, 0, false, "attn.c_proj.bias" },
		{ 8, 1, 0, false, "ln_2.weight" }, { 9, 1, 0, false, "ln_2.bias" },
		{ 10, 4, 1, true, "mlp.c_fc.weight" }, { 11, 4, 0, false, "mlp.c_fc.bias" },
		{ 12, 1, 4, true, "mlp.c_proj.weight" }, { 13, 1, 0, false, "mlp.c_proj.bias" },
	};
	size_t k = 0;
	out[k++] = view_of(off, 0, 0, c.V, C, true, "wte.weight");
	out[k++] = view_of(off, 1, 0, c.T, C, true, "wpe.weight");
	for (size_t l = 0; l < c.L; l++)
		for (size_t j = 0; j < 12; j++) {
			char name[48];
			snprintf(name, sizeof name, "h.%zu.%s", l, layer[j].name);
			size_t cols = layer[j].cmul ? layer[j].cmul * C : 1;
			out[k++] = view_of(off, layer[j].tensor, l, layer[j].rmul * C, cols, layer[j].matrix, name);
		}
	out[k++] = view_of(off, 14, 0, C, 1, false, "ln_f.weight");
	out[k++] = view_of(off, 15, 0, C, 1, false, "ln_f.bias");
}

void gpt_param_gather(const gpt_param_view *v, float *dst, const float *src)
{
	const float *s = src + v->offset;
	if (!v->transposed) {
		memcpy(dst, s, v->rows * v->cols * sizeof *dst);
		return;
	}
	for (size_t r = 0; r < v->rows; r++)
		for (size_t c = 0; c < v->cols; c++)
			dst[c * v->rows + r] = s[r * v->cols + c];
}

void gpt_param_scatter(const gpt_param_view *v, float *dst, const float *src)
{
	float *d = dst + v->offset;
	if (!v->transposed) {
		memcpy(d, src, v->rows * v->cols * sizeof *src);
		return;
	}
	for (size_t r = 0; r < v->rows; r++)
		for (size_t c = 0; c < v->cols; c++)
			d[r * v->cols + c] = src[c * v->rows + r];
}

mp_status gpt_param_first_nonfinite(gpt_config c, const float *params, bool *found, gpt_param_view *v,
                                    size_t *index, float *value)
{
	size_t nv = gpt_param_view_count(c);
	gpt_param_view *views = malloc(nv * sizeof *views);
	if (!views)
		return MP_ENOMEM;
	gpt_param_views(c, views);
	*found = false;
	for (size_t k = 0; k < nv && !*found; k++) {
		const float *s = params + views[k].offset;
		size_t R = views[k].rows, C = views[k].cols;
		for (size_t i = 0; i < R * C; i++) {
			/* element i of GPT-2's layout: storage i, or, transposed, storage (i % R, i / R) */
			float x = views[k].transposed ? s[(i % R) * C + i / R] : s[i];
			if (!isfinite(x)) {
				*found = true;
				*v = views[k];
				*index = i;
				*value = x;
				break;
			}
		}
	}
	free(views);
	return MP_OK;
}

mp_status gpt_param_nonfinite_text(gpt_config c, const float *params, char *buf, size_t n)
{
	bool found;
	gpt_param_view v;
	size_t i;
	float x;
	if (n)
		buf[0] = '\0';
	if (gpt_param_first_nonfinite(c, params, &found, &v, &i, &x) != MP_OK)
		return MP_ENOMEM;
	const char *what = isnan(x) ? "NaN" : x > 0 ? "inf" : "-inf";
	if (found && v.ndim == 2)
		snprintf(buf, n, "%s[%zu, %zu] is %s", v.name, i / v.shape[1], i % v.shape[1], what);
	else if (found)
		snprintf(buf, n, "%s[%zu] is %s", v.name, i, what);
	return MP_OK;
}
