/* progress.csv for the UI thread: a cache re-read only when the file
 * changes, and a recorder thread for the writes. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tui/app.h"
#include "tui/progcache.h"

#define QUEUE_LEN 64

typedef struct {
	char item[PROGRESS_ITEM_MAX];
	long attempt;
	bool solved;
	long hints;
} event;

static struct {
	/* the UI thread's side */
	progress prog;
	bool have;             /* prog holds a loaded file */
	bool stat_ok;          /* the identity below is of an existing file */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	long long checked;         /* when the identity was last looked at (clock_ms) */
	unsigned long seen_gen;    /* recorder generation the cache reflects */
	unsigned long loads;
	/* shared with the recorder, under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;         /* an event was queued, or one was written */
	event queue[QUEUE_LEN];
	size_t head, count;
	bool writing;              /* the recorder holds an event it is writing */
	bool running, stop;
	unsigned long gen;         /* events written so far */
	char error[512];
	bool has_error;
	pthread_t thread;
} pc = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void *recorder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pc.mu);
	for (;;) {
		while (!pc.count && !pc.stop)
			pthread_cond_wait(&pc.cv, &pc.mu);
		if (!pc.count)
			break;
		event ev = pc.queue[pc.head];
		pc.head = (pc.head + 1) % QUEUE_LEN;
		pc.count--;
		pc.writing = true;
		pthread_mutex_unlock(&pc.mu);
		char note[512];
		mp_status st = progress_record(ev.item, ev.attempt, ev.solved, ev.hints, note, sizeof note);
		pthread_mutex_lock(&pc.mu);
		pc.writing = false;
		pc.gen++;
		if (st != MP_OK) {
			snprintf(pc.error, sizeof pc.error, "%s", note);
			pc.has_error = true;
		}
		pthread_cond_broadcast(&pc.cv);
	}
	pthread_mutex_unlock(&pc.mu);
	return NULL;
}

/* With pc.mu held. The terminal's signals stay with the UI thread (a crash
 * in the recorder still reaches the handler that restores the terminal). */
static bool start_recorder(void)
{
	if (pc.running)
		return true;
	int r = tui_thread_start(&pc.thread, recorder, NULL);
	pc.running = r == 0;
	pc.stop = false;
	return pc.running;
}

void progcache_record(const char *item, long attempt, bool solved, long hints_seen)
{
	event ev = { .attempt = attempt, .solved = solved, .hints = hints_seen };
	snprintf(ev.item, sizeof ev.item, "%s", item);
	pthread_mutex_lock(&pc.mu);
	if (!start_recorder()) {
		/* no thread to be had: write it here rather than lose it */
		pthread_mutex_unlock(&pc.mu);
		char note[512];
		mp_status st = progress_record(ev.item, attempt, solved, hints_seen, note, sizeof note);
		pthread_mutex_lock(&pc.mu);
		pc.gen++;
		if (st != MP_OK) {
			snprintf(pc.error, sizeof pc.error, "%s", note);
			pc.has_error = true;
		}
		pthread_mutex_unlock(&pc.mu);
		return;
	}
	while (pc.count == QUEUE_LEN)
		pthread_cond_wait(&pc.cv, &pc.mu);
	pc.queue[(pc.head + pc.count) % QUEUE_LEN] = ev;
	pc.count++;
	pthread_cond_broadcast(&pc.cv);
	pthread_mutex_unlock(&pc.mu);
}

bool progcache_take_error(char *note, size_t notelen)
{
	pthread_mutex_lock(&pc.mu);
	bool had = pc.has_error;
	if (had) {
		snprintf(note, notelen, "%s", pc.error);
		pc.has_error = false;
	}
	pthread_mutex_unlock(&pc.mu);
	return had;
}

void progcache_flush(void)
{
	pthread_mutex_lock(&pc.mu);
	while (pc.count || pc.writing)
		pthread_cond_wait(&pc.cv, &pc.mu);
	pthread_mutex_unlock(&pc.mu);
}

static long long monotonic_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static long long (*clock_ms)(void) = monotonic_ms;

void progcache_set_clock(long long (*now_ms)(void))
{
	clock_ms = now_ms ? now_ms : monotonic_ms;
}

static void load(void)
{
	char note[512];
	if (pc.have)
		progress_free(&pc.prog);
	pc.have = progress_load(&pc.prog, note, sizeof note) == MP_OK;
	if (!pc.have)
		pc.prog = (progress){ 0 };
	pc.loads++;
}

const progress *progcache_get(void)
{
	pthread_mutex_lock(&pc.mu);
	unsigned long gen = pc.gen;
	pthread_mutex_unlock(&pc.mu);
	long long now = clock_ms();
	bool first = pc.loads == 0;
	bool recorded = gen != pc.seen_gen;
	if (!first && !recorded && now - pc.checked < PROGCACHE_CHECK_MS)
		return &pc.prog;
	pc.checked = now;
	pc.seen_gen = gen;
	/* the file's identity: a save renames a new file over the old one, so
	 * the inode changes even when size and mtime would not */
	char path[4096];
	struct stat sb;
	snprintf(path, sizeof path, "%s/progress.csv", progress_dir());
	bool exists = progress_dir()[0] && stat(path, &sb) == 0;
	bool changed = exists != pc.stat_ok ||
	               (exists && (sb.st_dev != pc.dev || sb.st_ino != pc.ino || sb.st_size != pc.size ||
	                           sb.st_mtim.tv_sec != pc.mtime.tv_sec || sb.st_mtim.tv_nsec != pc.mtime.tv_nsec));
	pc.stat_ok = exists;
	if (exists) {
		pc.dev = sb.st_dev;
		pc.ino = sb.st_ino;
		pc.size = sb.st_size;
		pc.mtime = sb.st_mtim;
	}
	if (first || recorded || changed)
		load();
	return &pc.prog;
}

void progcache_release(void)
{
	pthread_mutex_lock(&pc.mu);
	bool running = pc.running;
	pc.stop = true;
	pthread_cond_broadcast(&pc.cv);
	pthread_mutex_unlock(&pc.mu);
	if (running)
		pthread_join(pc.thread, NULL);   /* it writes what is queued first */
	pthread_mutex_lock(&pc.mu);
	pc.running = false;
	pc.stop = false;
	pthread_mutex_unlock(&pc.mu);
	if (pc.have)
		progress_free(&pc.prog);
	pc.prog = (progress){ 0 };
	pc.have = false;
	pc.stat_ok = false;
	pc.loads = 0;
	pc.seen_gen = pc.gen;
}

unsigned long progcache_loads(void)
{
	return pc.loads;
}
