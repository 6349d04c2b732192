/* The safetensors file format (Hugging Face): an 8-byte little-endian
 * header length N, N bytes of JSON (padded with spaces so that the data
 * starts 8-byte aligned) naming each tensor's dtype, shape and byte range
 * [begin, end) in the data that follows, plus an optional "__metadata__"
 * object of string values.
 *
 * The writer takes any list of tensors and metadata strings, so a trainer's
 * run state (optimiser moments, RNG positions, ...) travels in the same file
 * as the weights. The reader trusts nothing in the header: every length,
 * offset and shape is checked against the bytes actually read before it is
 * used, and nothing is allocated because the header claims a size. */
#ifndef MIXPREC_CKPT_SAFETENSORS_H
#define MIXPREC_CKPT_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/status.h"

/* The dtypes mixprec reads and writes (the format's own names: st_dtype_name). */
typedef enum {
	ST_F32,
	ST_F16,
	ST_BF16,
	ST_F64,
	ST_U8,
	ST_I32,
	ST_I64,
	ST_U64,
	ST_DTYPE_COUNT
} st_dtype;

#define ST_MAX_DIMS 8
/* The largest header accepted (the reference implementation's limit). */
#define ST_MAX_HEADER ((uint64_t)100 << 20)
/* The largest file read (it is read whole). */
#define ST_MAX_FILE ((size_t)1 << 31)

typedef struct {
	const char *name;        /* writer: borrowed; reader: owned by the st_file */
	st_dtype dtype;
	size_t ndim;             /* 0 (a scalar) to ST_MAX_DIMS */
	uint64_t shape[ST_MAX_DIMS];
	const void *data;        /* little-endian elements; reader: into the file's bytes */
	size_t nbytes;           /* element size times the product of shape */
} st_tensor;

typedef struct {
	const char *key, *value; /* writer: borrowed; reader: owned by the st_file */
} st_meta;

/* "F32", "F16", "BF16", ... ; st_dtype_from_name returns false for a name
 * not in the table. */
const char *st_dtype_name(st_dtype d);
size_t st_dtype_size(st_dtype d);
bool st_dtype_from_name(const char *name, st_dtype *d);

/* Element count of t's shape (1 for a scalar); false on overflow. */
bool st_elements(const st_tensor *t, uint64_t *count);

/* Writes n tensors (each data block nbytes long, checked against dtype and
 * shape) and nm metadata strings to fp, in the order given. MP_EINVAL with
 * the reason in err for a bad or duplicate name or a size that does not
 * match; MP_EIO when writing fails. */
mp_status st_write(FILE *fp, const st_tensor *t, size_t n, const st_meta *m, size_t nm, char *err,
                   size_t errlen);

/* The same into path, atomically (util/file.h: a temporary file renamed
 * over path; a full disk leaves the old file intact). err names path. */
mp_status st_write_file(const char *path, const st_tensor *t, size_t n, const st_meta *m, size_t nm,
                        char *err, size_t errlen);

/* A file as read: its bytes, the tensors in header order, the metadata. */
typedef struct {
	unsigned char *bytes;
	size_t len;
	st_tensor *tensors;
	size_t n;
	size_t *by_name;         /* indices into tensors, sorted by name (st_find) */
	st_meta *meta;
	size_t nmeta;
} st_file;

/* Parses len bytes (copied) of a safetensors file called name (for
 * messages). MP_EINVAL with "name: problem" in err for a malformed file:
 * shorter than 8 bytes, a header longer than the file or ST_MAX_HEADER,
 * not a JSON object, an entry that is not {dtype, shape, data_offsets}, an
 * unknown dtype, a shape whose size overflows, offsets that disagree with
 * the shape, fall outside the data, overlap, or leave a gap (the data must
 * be covered exactly, as the reference reader requires), a non-string
 * metadata value. MP_ENOMEM when out of memory. On error *f is empty. */
mp_status st_read_mem(st_file *f, const void *data, size_t len, const char *name, char *err, size_t errlen);
/* The same from a file (MP_EIO when it cannot be read). */
mp_status st_read_file(st_file *f, const char *path, char *err, size_t errlen);
void st_free(st_file *f);

/* The tensor called name, or NULL (a binary search: O(log n) comparisons). */
const st_tensor *st_find(const st_file *f, const char *name);
/* The metadata value of key, or NULL. */
const char *st_meta_get(const st_file *f, const char *key);

#endif
