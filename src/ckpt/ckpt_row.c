#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/ckpt_row.h"
#include "ckpt/gpt2.h"
#include "fmt/bulk.h"

/* The model's weight names with the layers folded: each block tensor once,
 * as h.N.NAME, then the range of N. */
static void weight_names(gpt_config c, char *buf, size_t n)
{
	size_t used = 0, count = ckpt_tensor_count(c.L), per_layer = (count - 4) / c.L;
	buf[0] = '\0';
	for (size_t k = 0; k < count && used < n; k++) {
		char name[64];
		ckpt_tensor_name(c, k, name, sizeof name);
		bool block = k >= 2 && k < count - 2;
		if (block && k >= 2 + per_layer)
			continue;   /* a later layer: the same names as layer 0 */
		const char *rest = block ? strchr(name + 2, '.') + 1 : name;
		int r = snprintf(buf + used, n - used, "%s%s%s", used ? ", " : "", block ? "h.N." : "", rest);
		used += r > 0 ? (size_t)r : 0;
	}
	if (used < n && c.L > 1)
		snprintf(buf + used, n - used, " (N = 0..%zu)", c.L - 1);
	else if (used < n)
		snprintf(buf + used, n - used, " (N = 0)");
}

/* Whether name is one of the GPT-2 weights of a model of shape c. */
static bool is_weight(gpt_config c, const char *name)
{
	for (size_t k = 0; k < ckpt_tensor_count(c.L); k++) {
		char w[64];
		if (!strcmp(ckpt_tensor_name(c, k, w, sizeof w), name))
			return true;
	}
	return false;
}

static void shape_text(const st_tensor *t, char *buf, size_t n)
{
	size_t used = (size_t)snprintf(buf, n, "[");
	for (size_t d = 0; d < t->ndim && used < n; d++)
		used += (size_t)snprintf(buf + used, n - used, "%s%llu", d ? ", " : "", (unsigned long long)t->shape[d]);
	if (used < n)
		snprintf(buf + used, n - used, "]");
}

/* Row `row` of t (checked) into r->values. */
static mp_status read_row(const st_tensor *t, uint64_t row, ckpt_row *r, char *err, size_t errlen)
{
	uint64_t nrows = t->ndim >= 2 ? t->shape[0] : 1, count;
	if (!st_elements(t, &count) || nrows == 0)
		return mp_fail(MP_EINVAL, err, errlen, "--tensor: %s %s has no rows", r->tensor, r->shape);
	if (row >= nrows) {
		if (nrows == 1)
			return mp_fail(MP_EINVAL, err, errlen, "--row: %llu is out of range: %s %s is a vector, one row (0)",
			               (unsigned long long)row, r->tensor, r->shape);
		return mp_fail(MP_EINVAL, err, errlen, "--row: %llu is out of range: %s %s has rows 0..%llu",
		               (unsigned long long)row, r->tensor, r->shape, (unsigned long long)(nrows - 1));
	}
	size_t len = (size_t)(count / nrows), esize = st_dtype_size(t->dtype);
	r->values = malloc((len ? len : 1) * sizeof *r->values);
	void *raw = malloc(len ? len * esize : 1);
	if (!r->values || !raw) {
		free(raw);
		ckpt_row_free(r);
		return mp_fail(MP_ENOMEM, err, errlen, "out of memory");
	}
	/* the file's data need not be aligned */
	memcpy(raw, (const unsigned char *)t->data + (size_t)row * len * esize, len * esize);
	if (t->dtype == ST_F32)
		memcpy(r->values, raw, len * sizeof *r->values);
	else   /* exact: every bf16 and fp16 value is an fp32 value */
		(void)fmt_bulk_decode(FMT_SIMD_AUTO, t->dtype == ST_BF16 ? FMT_BF16 : FMT_FP16, r->values, raw, len);
	free(raw);
	r->n = len;
	r->row = row;
	r->nrows = nrows;
	return MP_OK;
}

mp_status ckpt_row_load(const char *path, const char *tensor, uint64_t row, ckpt_row *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof *r);
	ckpt_model m;
	char why[512];
	mp_status st = ckpt_open(&m, path, why, sizeof why);
	if (st != MP_OK)
		return mp_fail(st, err, errlen, "--from-model: %s", why);
	const st_tensor *t = is_weight(m.config, tensor) ? st_find(&m.file, tensor) : NULL;
	if (!t) {
		char known[1024];
		weight_names(m.config, known, sizeof known);
		ckpt_close(&m);
		return mp_fail(MP_EINVAL, err, errlen, "--tensor: '%s' is not a weight of %s (known: %s)", tensor, path,
		               known);
	}
	snprintf(r->tensor, sizeof r->tensor, "%s", tensor);
	shape_text(t, r->shape, sizeof r->shape);
	snprintf(r->dtype, sizeof r->dtype, "%s", st_dtype_name(t->dtype));
	st = read_row(t, row, r, err, errlen);
	ckpt_close(&m);
	return st;
}

void ckpt_row_free(ckpt_row *r)
{
	free(r->values);
	r->values = NULL;
	r->n = 0;
}
