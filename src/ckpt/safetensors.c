#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/safetensors.h"
#include "util/file.h"

static const struct {
	const char *name;
	size_t size;
} dtypes[ST_DTYPE_COUNT] = {
	[ST_F32] = { .name = "F32", .size = 4 },  [ST_F16] = { .name = "F16", .size = 2 },
	[ST_BF16] = { .name = "BF16", .size = 2 }, [ST_F64] = { .name = "F64", .size = 8 },
	[ST_U8] = { .name = "U8", .size = 1 },    [ST_I32] = { .name = "I32", .size = 4 },
	[ST_I64] = { .name = "I64", .size = 8 },  [ST_U64] = { .name = "U64", .size = 8 },
};

const char *st_dtype_name(st_dtype d)
{
	return (unsigned)d < ST_DTYPE_COUNT ? dtypes[d].name : "?";
}

size_t st_dtype_size(st_dtype d)
{
	return (unsigned)d < ST_DTYPE_COUNT ? dtypes[d].size : 0;
}

bool st_dtype_from_name(const char *name, st_dtype *d)
{
	for (size_t i = 0; i < ST_DTYPE_COUNT; i++)
		if (!strcmp(name, dtypes[i].name)) {
			*d = (st_dtype)i;
			return true;
		}
	return false;
}

bool st_elements(const st_tensor *t, uint64_t *count)
{
	uint64_t c = 1;
	for (size_t i = 0; i < t->ndim; i++) {
		if (t->shape[i] != 0 && c > UINT64_MAX / t->shape[i])
			return false;
		c *= t->shape[i];
	}
	*count = c;
	return true;
}

/* Bytes of t's shape and dtype; false on overflow. */
static bool tensor_bytes(const st_tensor *t, uint64_t *bytes)
{
	uint64_t c;
	size_t es = st_dtype_size(t->dtype);
	if (es == 0 || !st_elements(t, &c) || c > UINT64_MAX / es)
		return false;
	*bytes = c * es;
	return true;
}

static void seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static bool host_little_endian(void)
{
	const uint16_t one = 1;
	unsigned char b;
	memcpy(&b, &one, 1);
	return b == 1;
}

/* --- writing --- */

/* The header object of the tensors and metadata; NULL with err set. */
static json_t *header_json(const st_tensor *t, size_t n, const st_meta *m, size_t nm, char *err, size_t errlen)
{
	json_t *root = json_object(), *meta = nm ? json_object() : NULL;
	if (!root || (nm && !meta))
		goto nomem;
	for (size_t i = 0; i < nm; i++)
		if (!m[i].key || !m[i].value || json_object_set_new(meta, m[i].key, json_string(m[i].value)) != 0) {
			seterr(err, errlen, "metadata %zu: not a valid UTF-8 key and value", i);
			goto fail;
		}
	if (meta && json_object_set_new(root, "__metadata__", meta) != 0)
		goto nomem;
	meta = NULL;
	uint64_t off = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t bytes;
		if (!t[i].name || !t[i].name[0] || !strcmp(t[i].name, "__metadata__") || json_object_get(root, t[i].name)) {
			seterr(err, errlen, "tensor %zu: empty, reserved or duplicate name '%s'", i, t[i].name ? t[i].name : "");
			goto fail;
		}
		if (t[i].ndim > ST_MAX_DIMS || !tensor_bytes(&t[i], &bytes) || bytes != t[i].nbytes ||
		    bytes > (uint64_t)INT64_MAX - off) {
			seterr(err, errlen, "tensor '%s': %zu bytes do not match its dtype and shape", t[i].name, t[i].nbytes);
			goto fail;
		}
		json_t *shape = json_array(), *e = json_object();
		json_t *offs = json_pack("[II]", (json_int_t)off, (json_int_t)(off + bytes));
		bool ok = shape && e && offs;
		for (size_t d = 0; ok && d < t[i].ndim; d++)
			ok = json_array_append_new(shape, json_integer((json_int_t)t[i].shape[d])) == 0;
		ok = ok && json_object_set_new(e, "dtype", json_string(st_dtype_name(t[i].dtype))) == 0;
		ok = ok && json_object_set_new(e, "shape", shape) == 0;
		shape = NULL;
		ok = ok && json_object_set_new(e, "data_offsets", offs) == 0;
		offs = NULL;
		ok = ok && json_object_set_new(root, t[i].name, e) == 0;
		if (!ok) {
			seterr(err, errlen, "tensor '%s': not a valid UTF-8 name, or out of memory", t[i].name);
			json_decref(shape);
			json_decref(offs);
			goto fail;
		}
		off += bytes;
	}
	return root;
nomem:
	seterr(err, errlen, "out of memory");
fail:
	json_decref(meta);
	json_decref(root);
	return NULL;
}

mp_status st_write(FILE *fp, const st_tensor *t, size_t n, const st_meta *m, size_t nm, char *err, size_t errlen)
{
	if (!host_little_endian()) {
		seterr(err, errlen, "safetensors are little-endian; this host is not");
		return MP_EUNSUPPORTED;
	}
	json_t *root = header_json(t, n, m, nm, err, errlen);
	if (!root)
		return MP_EINVAL;
	char *text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	if (!text) {
		seterr(err, errlen, "out of memory");
		return MP_ENOMEM;
	}
	size_t len = strlen(text), pad = (8 - (8 + len) % 8) % 8;
	unsigned char hl[8];
	for (int i = 0; i < 8; i++)
		hl[i] = (unsigned char)((uint64_t)(len + pad) >> (8 * i));
	bool ok = fwrite(hl, 1, 8, fp) == 8 && fwrite(text, 1, len, fp) == len;
	free(text);
	for (size_t i = 0; ok && i < pad; i++)
		ok = fputc(' ', fp) != EOF;
	for (size_t i = 0; ok && i < n; i++)
		ok = t[i].nbytes == 0 || fwrite(t[i].data, 1, t[i].nbytes, fp) == t[i].nbytes;
	if (!ok) {
		seterr(err, errlen, "write failed: %s", strerror(errno ? errno : EIO));
		return MP_EIO;
	}
	return MP_OK;
}

mp_status st_write_file(const char *path, const st_tensor *t, size_t n, const st_meta *m, size_t nm, char *err,
                        size_t errlen)
{
	file_atomic a;
	mp_status st = file_atomic_open(&a, path, err, errlen);
	if (st != MP_OK)
		return st;
	char why[512] = "";
	st = st_write(a.fp, t, n, m, nm, why, sizeof why);
	if (st != MP_OK) {
		file_atomic_abort(&a);
		seterr(err, errlen, "%s: %s", path, why);
		return st;
	}
	return file_atomic_commit(&a, err, errlen);
}

/* --- reading --- */

void st_free(st_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++)
		free((char *)f->tensors[i].name);
	for (size_t i = 0; i < f->nmeta; i++) {
		free((char *)f->meta[i].key);
		free((char *)f->meta[i].value);
	}
	free(f->tensors);
	free(f->by_name);
	free(f->meta);
	free(f->bytes);
	memset(f, 0, sizeof *f);
}

/* A whole number in [0, 2^63) from j; false otherwise. */
static bool json_u64(const json_t *j, uint64_t *v)
{
	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return false;
	*v = (uint64_t)json_integer_value(j);
	return true;
}

/* The metadata object: every value a string. */
static mp_status read_meta(st_file *f, json_t *meta, const char *name, char *err, size_t errlen)
{
	if (!json_is_object(meta)) {
		seterr(err, errlen, "%s: __metadata__ is not an object", name);
		return MP_EINVAL;
	}
	f->meta = calloc(json_object_size(meta) + 1, sizeof *f->meta);
	if (!f->meta)
		return MP_ENOMEM;
	const char *key;
	json_t *v;
	json_object_foreach(meta, key, v) {
		if (!json_is_string(v)) {
			seterr(err, errlen, "%s: __metadata__ value of '%s' is not a string", name, key);
			return MP_EINVAL;
		}
		char *k = strdup(key), *s = strdup(json_string_value(v));
		f->meta[f->nmeta++] = (st_meta){ .key = k, .value = s };
		if (!k || !s)
			return MP_ENOMEM;
	}
	return MP_OK;
}

/* One tensor entry e called key; its range [*begin, *end) in the data. */
static mp_status read_entry(st_tensor *t, const char *key, json_t *e, uint64_t data_len, uint64_t *begin,
                            uint64_t *end, const char *name, char *err, size_t errlen)
{
	json_t *dt = json_object_get(e, "dtype"), *shape = json_object_get(e, "shape");
	json_t *offs = json_object_get(e, "data_offsets");
	if (!json_is_object(e) || !json_is_string(dt) || !json_is_array(shape) || !json_is_array(offs) ||
	    json_array_size(offs) != 2) {
		seterr(err, errlen, "%s: tensor '%s': not an object with dtype, shape and data_offsets [begin, end]",
		       name, key);
		return MP_EINVAL;
	}
	if (!st_dtype_from_name(json_string_value(dt), &t->dtype)) {
		seterr(err, errlen, "%s: tensor '%s': unknown dtype '%s'", name, key, json_string_value(dt));
		return MP_EINVAL;
	}
	if (json_array_size(shape) > ST_MAX_DIMS) {
		seterr(err, errlen, "%s: tensor '%s': %zu dimensions (at most %d)", name, key, json_array_size(shape),
		       ST_MAX_DIMS);
		return MP_EINVAL;
	}
	t->ndim = json_array_size(shape);
	for (size_t d = 0; d < t->ndim; d++)
		if (!json_u64(json_array_get(shape, d), &t->shape[d])) {
			seterr(err, errlen, "%s: tensor '%s': shape[%zu] is not a whole number >= 0", name, key, d);
			return MP_EINVAL;
		}
	uint64_t bytes;
	if (!tensor_bytes(t, &bytes)) {
		seterr(err, errlen, "%s: tensor '%s': the shape's size overflows", name, key);
		return MP_EINVAL;
	}
	if (!json_u64(json_array_get(offs, 0), begin) || !json_u64(json_array_get(offs, 1), end) || *end < *begin) {
		seterr(err, errlen, "%s: tensor '%s': data_offsets are not two whole numbers begin <= end", name, key);
		return MP_EINVAL;
	}
	if (*end > data_len) {
		seterr(err, errlen, "%s: tensor '%s': data_offsets [%llu, %llu] out of range (the data has %llu bytes)",
		       name, key, (unsigned long long)*begin, (unsigned long long)*end, (unsigned long long)data_len);
		return MP_EINVAL;
	}
	if (*end - *begin != bytes) {
		seterr(err, errlen, "%s: tensor '%s': data_offsets span %llu bytes, its dtype and shape need %llu", name,
		       key, (unsigned long long)(*end - *begin), (unsigned long long)bytes);
		return MP_EINVAL;
	}
	t->nbytes = (size_t)bytes;
	return MP_OK;
}

typedef struct {
	uint64_t begin, end;
	size_t i;
} st_range;

static int range_cmp(const void *a, const void *b)
{
	const st_range *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* The ranges, sorted, must tile [0, data_len) exactly. */
static mp_status check_cover(const st_file *f, st_range *r, uint64_t data_len, const char *name, char *err,
                             size_t errlen)
{
	qsort(r, f->n, sizeof *r, range_cmp);
	uint64_t at = 0;
	for (size_t k = 0; k < f->n; k++) {
		if (r[k].begin < at) {
			seterr(err, errlen, "%s: tensor '%s': data_offsets overlap another tensor's", name,
			       f->tensors[r[k].i].name);
			return MP_EINVAL;
		}
		if (r[k].begin > at) {
			seterr(err, errlen, "%s: tensor '%s': a gap of %llu bytes before its data", name,
			       f->tensors[r[k].i].name, (unsigned long long)(r[k].begin - at));
			return MP_EINVAL;
		}
		at = r[k].end;
	}
	if (at != data_len) {
		seterr(err, errlen, "%s: %llu bytes after the last tensor's data", name, (unsigned long long)(data_len - at));
		return MP_EINVAL;
	}
	return MP_OK;
}

/* qsort cannot pass the file to its comparison: the tensors being sorted. */
static _Thread_local const st_tensor *sort_tensors;

static int name_cmp(const void *a, const void *b)
{
	return strcmp(sort_tensors[*(const size_t *)a].name, sort_tensors[*(const size_t *)b].name);
}

/* f->by_name: the tensors' indices in name order (names are unique: the
 * JSON reader refuses duplicate keys). */
static mp_status index_names(st_file *f)
{
	f->by_name = malloc((f->n + 1) * sizeof *f->by_name);
	if (!f->by_name)
		return MP_ENOMEM;
	for (size_t i = 0; i < f->n; i++)
		f->by_name[i] = i;
	sort_tensors = f->tensors;
	qsort(f->by_name, f->n, sizeof *f->by_name, name_cmp);
	sort_tensors = NULL;
	return MP_OK;
}

/* The header (already parsed into root) against the data of data_len bytes at data. */
static mp_status read_header(st_file *f, json_t *root, const unsigned char *data, uint64_t data_len,
                             const char *name, char *err, size_t errlen)
{
	size_t cap = json_object_size(root);
	f->tensors = calloc(cap + 1, sizeof *f->tensors);
	st_range *r = calloc(cap + 1, sizeof *r);
	mp_status st = f->tensors && r ? MP_OK : MP_ENOMEM;
	const char *key;
	json_t *e;
	json_object_foreach(root, key, e) {
		if (st != MP_OK)
			break;
		if (!strcmp(key, "__metadata__")) {
			st = read_meta(f, e, name, err, errlen);
			continue;
		}
		st_tensor *t = &f->tensors[f->n];
		uint64_t b, en;
		st = read_entry(t, key, e, data_len, &b, &en, name, err, errlen);
		if (st != MP_OK)
			break;
		t->name = strdup(key);
		if (!t->name) {
			st = MP_ENOMEM;
			break;
		}
		t->data = data + b;
		r[f->n] = (st_range){ .begin = b, .end = en, .i = f->n };
		f->n++;
	}
	if (st == MP_OK)
		st = check_cover(f, r, data_len, name, err, errlen);
	if (st == MP_OK)
		st = index_names(f);
	free(r);
	return st;
}

/* Parses the len bytes at buf, which *f takes over (freed on error too). */
static mp_status parse_owned(st_file *f, unsigned char *buf, size_t len, const char *name, char *err,
                             size_t errlen)
{
	memset(f, 0, sizeof *f);
	f->bytes = buf;
	f->len = len;
	if (len < 8) {
		seterr(err, errlen, "%s: truncated: %zu bytes, shorter than the 8-byte header length", name, len);
		st_free(f);
		return MP_EINVAL;
	}
	uint64_t hlen = 0;
	for (int i = 7; i >= 0; i--)
		hlen = hlen << 8 | buf[i];
	if (hlen > ST_MAX_HEADER)
		seterr(err, errlen, "%s: header length %llu is too large (at most %llu)", name, (unsigned long long)hlen,
		       (unsigned long long)ST_MAX_HEADER);
	else if (hlen > len - 8)
		seterr(err, errlen, "%s: truncated: the header claims %llu bytes, the file has %zu after the length",
		       name, (unsigned long long)hlen, len - 8);
	else if (hlen < 2 || buf[8] != '{')
		seterr(err, errlen, "%s: the header is not a JSON object (it must start with '{')", name);
	if (hlen > ST_MAX_HEADER || hlen > len - 8 || hlen < 2 || buf[8] != '{') {
		st_free(f);
		return MP_EINVAL;
	}
	json_error_t je;
	json_t *root = json_loadb((const char *)buf + 8, (size_t)hlen, JSON_REJECT_DUPLICATES, &je);
	if (!root || !json_is_object(root)) {
		seterr(err, errlen, "%s: the header is not a JSON object: %s (byte %d of the header)", name,
		       root ? "another JSON value" : je.text, root ? 0 : je.position);
		json_decref(root);
		st_free(f);
		return MP_EINVAL;
	}
	mp_status st = read_header(f, root, buf + 8 + hlen, len - 8 - hlen, name, err, errlen);
	json_decref(root);
	if (st == MP_ENOMEM)
		seterr(err, errlen, "%s: out of memory", name);
	if (st != MP_OK)
		st_free(f);
	return st;
}

mp_status st_read_mem(st_file *f, const void *data, size_t len, const char *name, char *err, size_t errlen)
{
	memset(f, 0, sizeof *f);
	if (err && errlen)
		err[0] = '\0';
	unsigned char *buf = malloc(len ? len : 1);
	if (!buf) {
		seterr(err, errlen, "%s: out of memory", name);
		return MP_ENOMEM;
	}
	if (len)
		memcpy(buf, data, len);
	return parse_owned(f, buf, len, name, err, errlen);
}

mp_status st_read_file(st_file *f, const char *path, char *err, size_t errlen)
{
	memset(f, 0, sizeof *f);
	char *buf;
	size_t len;
	mp_status st = file_read_all(path, ST_MAX_FILE, &buf, &len, err, errlen);
	if (st != MP_OK)
		return st;
	return parse_owned(f, (unsigned char *)buf, len, path, err, errlen);
}

const st_tensor *st_find(const st_file *f, const char *name)
{
	size_t lo = 0, hi = f->by_name ? f->n : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const st_tensor *t = &f->tensors[f->by_name[mid]];
		int c = strcmp(name, t->name);
		if (c == 0)
			return t;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

const char *st_meta_get(const st_file *f, const char *key)
{
	for (size_t i = 0; i < f->nmeta; i++)
		if (!strcmp(f->meta[i].key, key))
			return f->meta[i].value;
	return NULL;
}
