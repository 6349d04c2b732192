/* Status codes returned by library code; only main and the TUI turn them into exits.
 *
 * The one error convention: a function that can fail returns mp_status
 * (MP_OK on success) and, where a sentence helps the person who reads it,
 * takes the caller's buffer as its last two parameters, char *err, size_t
 * errlen, which it fills (NUL-terminated, cut to errlen) only when it fails;
 * err may be NULL when errlen is 0. Library code never prints, never exits,
 * never returns a pointer to a static or process-wide message and never
 * answers with a sentinel int: a function that returns text (a path, a
 * name) writes it into a buffer the caller passes and returns that buffer.
 * The fixed texts of the statuses are mp_status_message's. */
#ifndef MIXPREC_UTIL_STATUS_H
#define MIXPREC_UTIL_STATUS_H

#include <stddef.h>

#define MP_STATUS_LIST(X)                                      \
	X(MP_OK,          "ok")                                \
	X(MP_ENOMEM,      "out of memory")                     \
	X(MP_EPARSE,      "malformed number")                  \
	X(MP_EFORMAT,     "unknown format")                    \
	X(MP_EMODE,       "unknown rounding mode")             \
	X(MP_EUNSUPPORTED, "operation not supported")          \
	X(MP_EINVAL,      "invalid argument")                  \
	X(MP_EIO,         "input/output error")

typedef enum {
#define MP_STATUS_ENUM(id, msg) id,
	MP_STATUS_LIST(MP_STATUS_ENUM)
#undef MP_STATUS_ENUM
	MP_STATUS_COUNT
} mp_status;

/* Returns the fixed English message for a status (never NULL). */
const char *mp_status_message(mp_status st);

/* Writes the printf-style message into err (errlen bytes; nothing when
 * errlen is 0) and returns st: `return mp_fail(MP_EINVAL, err, errlen, ...)`. */
mp_status mp_fail(mp_status st, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
