/* Reading whole files. */
#ifndef MIXPREC_UTIL_FILE_H
#define MIXPREC_UTIL_FILE_H

#include <stddef.h>

#include "util/status.h"

/* Reads the file at path into a malloc'd buffer (*buf, *len bytes, plus a
 * terminating NUL not counted in *len). MP_EIO when it cannot be opened or
 * read, MP_EINVAL when it is larger than max bytes, MP_ENOMEM; on error err
 * names the file and the reason and *buf is NULL. */
mp_status file_read_all(const char *path, size_t max, char **buf, size_t *len, char *err, size_t errlen);

#endif
