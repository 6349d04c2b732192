/* Status codes returned by library code; only main and the TUI turn them into exits. */
#ifndef MIXPREC_UTIL_STATUS_H
#define MIXPREC_UTIL_STATUS_H

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

#endif
