/* A learner's progress (exercises attempted and solved, hints used, lesson
 * sections read), kept in $XDG_STATE_HOME/mixprec/progress.csv and written
 * atomically: a temporary file in the same folder, flushed to disk, then
 * renamed over the old one, under a lock so two mixprec processes do not lose
 * each other's updates. A file that cannot be read as progress is renamed
 * aside (progress.csv.corrupt-N) and reported, never silently overwritten.
 * Temporary files a killed run left (progress.csv.tmp-XXXXXX) are removed by
 * the next save; a progress file that is not a regular file (a FIFO, a
 * device) is refused with MP_EIO, never waited on. */
#ifndef MIXPREC_TEACH_PROGRESS_H
#define MIXPREC_TEACH_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "util/status.h"

#define PROGRESS_ITEM_MAX 128

typedef struct {
	char item[PROGRESS_ITEM_MAX];   /* "exercise:7.4a", "lesson:mixed-precision#3" */
	long attempts;
	bool solved;
	long hints;
} progress_row;

typedef struct {
	progress_row *rows;
	size_t count;
} progress;

/* The folder: $XDG_STATE_HOME/mixprec, else ~/.local/state/mixprec
 * ($MIXPREC_STATEDIR overrides both). Empty when none can be found. */
const char *progress_dir(void);

/* Loads the progress file (an absent file is empty progress). When the file
 * is corrupt it is renamed aside, note says so and where it went, and the
 * progress starts empty (MP_OK). MP_EIO when the folder or file cannot be
 * read, with the reason in note. */
mp_status progress_load(progress *p, char *note, size_t notelen);
void progress_free(progress *p);

/* The row for item, or NULL. */
const progress_row *progress_get(const progress *p, const char *item);

/* Applies one event to item under the lock and saves: attempts += attempt,
 * solved |= solved, hints = max(hints, hints_seen). note as for
 * progress_load; MP_EIO (reason in note) when it cannot be written: nothing
 * is lost but this event. */
mp_status progress_record(const char *item, long attempt, bool solved, long hints_seen, char *note, size_t notelen);

#endif
