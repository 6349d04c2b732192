/* The TUI's progress cache and recorder thread (src/tui/progcache.h): the
 * file is read once and then only when it changes (counted with
 * progcache_loads), events queued on the UI thread reach the file with
 * progress_record's rules (attempts add up, solved sticks, hints take the
 * maximum: worked out by hand below, read back with progress_load), a write
 * that fails is reported once, and release writes what is still queued. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "teach/progress.h"
#include "testutil.h"
#include "tui/progcache.h"

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/mixprec-progcache-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("MIXPREC_STATEDIR", dir, 1);
}

static void teardown(void)
{
	progcache_release();
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* The cache's clock, moved by hand: what it sees does not depend on how
 * fast this machine runs the test. */
static long long fake_now = 1000000;

static long long fake_clock(void)
{
	return fake_now;
}

START_TEST(reads_once_until_the_file_changes)
{
	progcache_set_clock(fake_clock);
	const progress *p = progcache_get();
	ck_assert_uint_eq(p->count, 0);
	ck_assert_uint_eq(progcache_loads(), 1);
	/* a TUI draws ~10 frames a second: none of them reads the file */
	for (int i = 0; i < 1000; i++)
		progcache_get();
	ck_assert_uint_eq(progcache_loads(), 1);
	/* another process saves: not seen before the next look at the file ... */
	char note[512];
	ck_assert_int_eq(progress_record("exercise:9.9z", 1, true, 3, note, sizeof note), MP_OK);
	p = progcache_get();
	ck_assert_ptr_null(progress_get(p, "exercise:9.9z"));
	ck_assert_uint_eq(progcache_loads(), 1);
	/* ... not even 1 ms before it is due ... */
	fake_now += PROGCACHE_CHECK_MS - 1;
	p = progcache_get();
	ck_assert_ptr_null(progress_get(p, "exercise:9.9z"));
	ck_assert_uint_eq(progcache_loads(), 1);
	/* ... which comes at PROGCACHE_CHECK_MS, and reads it once */
	fake_now += 1;
	p = progcache_get();
	const progress_row *r = progress_get(p, "exercise:9.9z");
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->attempts, 1);
	ck_assert(r->solved);
	ck_assert_int_eq(r->hints, 3);
	ck_assert_uint_eq(progcache_loads(), 2);
	/* a look at an unchanged file does not read it */
	fake_now += PROGCACHE_CHECK_MS;
	progcache_get();
	ck_assert_uint_eq(progcache_loads(), 2);
	progcache_set_clock(NULL);
}
END_TEST

START_TEST(recorded_events_reach_the_file_and_the_cache)
{
	progcache_set_clock(fake_clock);   /* no check falls due by itself */
	progcache_get();
	ck_assert_uint_eq(progcache_loads(), 1);
	progcache_record("exercise:1.1a", 1, false, 0);
	progcache_record("exercise:1.1a", 1, false, 2);
	progcache_record("exercise:1.1a", 1, true, 1);
	progcache_record("lesson:fp#2", 0, true, 0);
	progcache_flush();
	/* this process wrote: the next get re-reads at once, not after 0.5 s */
	const progress *p = progcache_get();
	ck_assert_uint_eq(progcache_loads(), 2);
	const progress_row *r = progress_get(p, "exercise:1.1a");
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->attempts, 3);   /* 1 + 1 + 1 */
	ck_assert(r->solved);               /* false, false, true */
	ck_assert_int_eq(r->hints, 2);      /* max(0, 2, 1) */
	r = progress_get(p, "lesson:fp#2");
	ck_assert_ptr_nonnull(r);
	ck_assert(r->solved);
	/* the same on disk, read independently of the cache */
	progress d;
	char note[512];
	ck_assert_int_eq(progress_load(&d, note, sizeof note), MP_OK);
	r = progress_get(&d, "exercise:1.1a");
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->attempts, 3);
	progress_free(&d);
	ck_assert(!progcache_take_error(note, sizeof note));
	progcache_set_clock(NULL);
}
END_TEST

START_TEST(release_writes_what_is_queued)
{
	for (int i = 0; i < 100; i++)   /* more than the queue holds: record waits */
		progcache_record("exercise:2.2b", 1, false, 0);
	progcache_release();
	progress d;
	char note[512];
	ck_assert_int_eq(progress_load(&d, note, sizeof note), MP_OK);
	const progress_row *r = progress_get(&d, "exercise:2.2b");
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->attempts, 100);
	ck_assert(!r->solved);
	progress_free(&d);
}
END_TEST

START_TEST(a_failed_write_is_reported_once)
{
	/* the state folder is a regular file: nothing can be written under it */
	char file[96];
	snprintf(file, sizeof file, "%s/not-a-dir", dir);
	FILE *fp = fopen(file, "w");
	ck_assert_ptr_nonnull(fp);
	fclose(fp);
	setenv("MIXPREC_STATEDIR", file, 1);
	progcache_record("exercise:3.3c", 1, true, 0);
	progcache_flush();
	char note[512] = "";
	ck_assert(progcache_take_error(note, sizeof note));
	ck_assert_uint_gt(strlen(note), 0);
	ck_assert(!progcache_take_error(note, sizeof note));
	ck_assert_uint_eq(progcache_get()->count, 0);
	setenv("MIXPREC_STATEDIR", dir, 1);
}
END_TEST

static Suite *progcache_suite(void)
{
	Suite *s = suite_create("progcache");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, reads_once_until_the_file_changes);
	tcase_add_test(tc, recorded_events_reach_the_file_and_the_cache);
	tcase_add_test(tc, release_writes_what_is_queued);
	tcase_add_test(tc, a_failed_write_is_reported_once);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(progcache_suite());
}
