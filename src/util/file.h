/* Reading whole files; writing files atomically. */
#ifndef MIXPREC_UTIL_FILE_H
#define MIXPREC_UTIL_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util/status.h"

/* Reads the file at path into a malloc'd buffer (*buf, *len bytes, plus a
 * terminating NUL not counted in *len). MP_EIO when it cannot be opened or
 * read, MP_EINVAL when it is larger than max bytes, MP_ENOMEM; on error err
 * names the file and the reason and *buf is NULL. */
mp_status file_read_all(const char *path, size_t max, char **buf, size_t *len, char *err, size_t errlen);

/* Where a packaged data file or folder is: $env (with env_rel appended when
 * not NULL) when that variable is set, else src_rel under $MIXPREC_SRCDIR
 * when that is set (a source tree: make check and ./run set it, so that an
 * uninstalled build never reads a stale install), else src_rel in the
 * source tree of the running program when it runs from its build folder
 * (file_data_tree), else installed under the package data folder. Writes
 * the path into buf and returns it. */
const char *file_data_path(char *buf, size_t n, const char *env, const char *env_rel, const char *installed,
                           const char *src_rel);

/* The source tree of the running program when it is not installed: the
 * folder of /proc/self/exe when that holds lessons/ORDER (built in the
 * source tree), or the source folder configure was run from when the
 * program is in the build folder configure made; NULL for an installed
 * program (or where /proc/self/exe does not exist). */
const char *file_data_tree(void);

/* For a message about data file or folder path that could not be read
 * (found through file_data_path with env): which places were tried and how
 * to fix it. Writes into buf and returns it. */
const char *file_data_hint(char *buf, size_t n, const char *env, const char *path);

/* Writing a file atomically: into a temporary file next to it
 * (PATH.tmp-XXXXXX), then flushed to disk and renamed over path, so a reader
 * (or a crash, a kill or a full disk) sees either the old file or the
 * complete new one. After a successful rename, temporary files of the same
 * path left behind by killed runs (that exact pattern, regular files of this
 * user) are removed. A symbolic link given as path is followed (its target
 * is replaced, the link stays); a device or a pipe (/dev/stdout, a FIFO) is
 * written directly, never renamed over, and a FIFO that no process reads is
 * refused instead of waited on. With FILE_IN_FOLDER (a file mixprec names
 * inside a folder it was given) a symbolic link, a pipe, a device or a
 * folder at path is refused: never written through, never replaced. */
typedef struct {
	FILE *fp;          /* write here between open and commit */
	char *path;
	char *tmp;         /* NULL when writing straight into a device or pipe */
} file_atomic;

enum { FILE_IN_FOLDER = 1 };

/* MP_EIO with "path: reason" in err when the temporary file cannot be created. */
mp_status file_atomic_open(file_atomic *a, const char *path, char *err, size_t errlen);
mp_status file_atomic_open_flags(file_atomic *a, const char *path, int flags, char *err, size_t errlen);
/* Checks, without writing anything, that file_atomic_open_flags would accept
 * path as a target (MP_EIO with "path: reason" in err otherwise), so that a
 * command writing many files can refuse before it writes the first. */
mp_status file_check_target(const char *path, int flags, char *err, size_t errlen);
/* Flushes, syncs and renames; on any failure removes the temporary file,
 * leaves path as it was and returns MP_EIO with the reason in err. */
mp_status file_atomic_commit(file_atomic *a, char *err, size_t errlen);
/* Gives up: removes the temporary file. */
void file_atomic_abort(file_atomic *a);

/* Whether a and b name the same existing file (device and inode, links
 * followed), so that an output is never one of the inputs. */
bool file_same(const char *a, const char *b);

#endif
