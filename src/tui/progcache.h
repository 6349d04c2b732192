/* progress.csv for the UI thread: a cached copy that is re-read only when
 * the file changes, and a recorder thread that does the locked, fsynced
 * writes (teach/progress.h) so that checking an answer or scrolling a lesson
 * never waits for the disk. Process-wide, like the exercise store: one TUI
 * runs per process. It draws nothing, so a unit test can drive it. */
#ifndef MIXPREC_TUI_PROGCACHE_H
#define MIXPREC_TUI_PROGCACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "teach/progress.h"

/* How often the cache looks at the file's identity (stat: inode, size,
 * mtime) at most; it re-reads the file only when that changed, or when this
 * process recorded something since the last read. */
#define PROGCACHE_CHECK_MS 500

/* The learner's progress as last read; never NULL (empty when the file is
 * absent or unreadable). Valid until the next call or progcache_release(). */
const progress *progcache_get(void);

/* Queues one event for the recorder thread (started on first use); the
 * arguments are as for progress_record. Never touches the file itself. When
 * the queue is full (the disk is stalled) it waits for a free slot rather
 * than drop an answer. */
void progcache_record(const char *item, long attempt, bool solved, long hints_seen);

/* A write the recorder could not do since the last call: true and its reason
 * in note (once per failure). */
bool progcache_take_error(char *note, size_t notelen);

/* Waits until every queued event has been written (key scripts, exit). */
void progcache_flush(void);

/* Flushes, stops the recorder and frees the cache. */
void progcache_release(void);

/* For tests: the clock the cache reads (monotonic milliseconds); NULL
 * restores CLOCK_MONOTONIC. */
void progcache_set_clock(long long (*now_ms)(void));

/* For tests: how many times the file has been read so far. */
unsigned long progcache_loads(void);

#endif
