#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"

mp_status file_read_all(const char *path, size_t max, char **buf, size_t *len, char *err, size_t errlen)
{
	*buf = NULL;
	*len = 0;
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return MP_EIO;
	}
	size_t cap = 1 << 16, n = 0;
	char *b = NULL;
	mp_status st = MP_OK;
	for (;;) {
		char *bigger = realloc(b, cap + 1);
		if (!bigger) {
			st = MP_ENOMEM;
			snprintf(err, errlen, "%s: out of memory", path);
			break;
		}
		b = bigger;
		n += fread(b + n, 1, cap - n, fp);
		if (n < cap)
			break;   /* end of file or an error, told apart below */
		if (cap > max) {
			st = MP_EINVAL;
			break;
		}
		cap *= 2;
	}
	if (st == MP_OK && ferror(fp)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno ? errno : EIO));
		st = MP_EIO;
	}
	if (st == MP_OK && n > max)
		st = MP_EINVAL;
	if (st == MP_EINVAL)
		snprintf(err, errlen, "%s: larger than %zu bytes", path, max);
	fclose(fp);
	if (st != MP_OK) {
		free(b);
		return st;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return MP_OK;
}
