/* Progress and the files under it: records survive corruption and kills,
 * the atomic writer keeps pipes and links intact, and the CSV reader reports
 * lines. */
#include <limits.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmt/decode.h"
#include "fmt/round.h"
#include "teach/exercise.h"
#include "teach/progress.h"
#include "testutil.h"
#include "util/csvread.h"
#include "util/file.h"

/* ---- progress ------------------------------------------------------------------------ */

static char statedir[64];

static void fresh_statedir(void)
{
	snprintf(statedir, sizeof statedir, "/tmp/mixprec-test-XXXXXX");
	ck_assert(mkdtemp(statedir));
	setenv("MIXPREC_STATEDIR", statedir, 1);
}

/* file_atomic replaces a regular file; it must not rename over a FIFO or a
 * device (root could replace /dev/null that way), and it replaces a link's
 * target, not the link. */
START_TEST(file_atomic_keeps_pipes_and_links)
{
	char dir[] = "/tmp/mixprec-atomic-XXXXXX";
	ck_assert(mkdtemp(dir));
	char fifo[128], real[128], link[128], err[512];
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);
	snprintf(real, sizeof real, "%s/real.csv", dir);
	snprintf(link, sizeof link, "%s/link.csv", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	int rfd = open(fifo, O_RDONLY | O_NONBLOCK);   /* a reader, so opening for writing does not block */
	ck_assert_int_ge(rfd, 0);
	file_atomic a;
	ck_assert_int_eq(file_atomic_open(&a, fifo, err, sizeof err), MP_OK);
	fputs("a,b\n", a.fp);
	ck_assert_msg(file_atomic_commit(&a, err, sizeof err) == MP_OK, "%s", err);
	struct stat st;
	ck_assert_int_eq(lstat(fifo, &st), 0);
	ck_assert_msg(S_ISFIFO(st.st_mode), "the FIFO was replaced");
	char got[16] = "";
	ck_assert_int_eq(read(rfd, got, sizeof got - 1), 4);
	ck_assert_str_eq(got, "a,b\n");
	close(rfd);

	FILE *fp = fopen(real, "w");
	ck_assert(fp);
	fputs("old\n", fp);
	fclose(fp);
	ck_assert_int_eq(symlink("real.csv", link), 0);
	ck_assert_int_eq(file_atomic_open(&a, link, err, sizeof err), MP_OK);
	fputs("new\n", a.fp);
	ck_assert_msg(file_atomic_commit(&a, err, sizeof err) == MP_OK, "%s", err);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert_msg(S_ISLNK(st.st_mode), "the link was replaced by a file");
	char *buf;
	size_t len;
	ck_assert_int_eq(file_read_all(real, 100, &buf, &len, err, sizeof err), MP_OK);
	ck_assert_str_eq(buf, "new\n");
	free(buf);

	/* a folder is refused up front, and nothing is left behind */
	ck_assert_int_eq(file_atomic_open(&a, dir, err, sizeof err), MP_EIO);
	ck_assert_msg(strstr(err, "directory"), "%s", err);
	unlink(link);
	unlink(real);
	unlink(fifo);
	ck_assert_int_eq(rmdir(dir), 0);   /* empty: no temporary file remains */
}
END_TEST

START_TEST(progress_records_and_survives_corruption)
{
	fresh_statedir();
	char note[1024];
	ck_assert_int_eq(progress_record("exercise:7.4a", 1, false, 0, note, sizeof note), MP_OK);
	ck_assert_int_eq(progress_record("exercise:7.4a", 1, true, 0, note, sizeof note), MP_OK);
	ck_assert_int_eq(progress_record("exercise:7.4b", 0, false, 2, note, sizeof note), MP_OK);
	ck_assert_int_eq(progress_record("exercise:7.4b", 0, false, 1, note, sizeof note), MP_OK);
	progress p;
	ck_assert_int_eq(progress_load(&p, note, sizeof note), MP_OK);
	ck_assert_str_eq(note, "");
	const progress_row *r = progress_get(&p, "exercise:7.4a");
	ck_assert(r && r->attempts == 2 && r->solved && r->hints == 0);
	r = progress_get(&p, "exercise:7.4b");
	ck_assert(r && r->attempts == 0 && !r->solved && r->hints == 2);
	progress_free(&p);

	/* a count at the top of long's range saturates instead of overflowing */
	{
		char full[128];
		snprintf(full, sizeof full, "%s/progress.csv", statedir);
		FILE *big = fopen(full, "w");
		ck_assert(big);
		fprintf(big, "item,attempts,solved,hints_used\nexercise:7.4a,%ld,0,0\n", LONG_MAX);
		fclose(big);
		ck_assert_int_eq(progress_record("exercise:7.4a", 1, false, 0, note, sizeof note), MP_OK);
		ck_assert_int_eq(progress_load(&p, note, sizeof note), MP_OK);
		r = progress_get(&p, "exercise:7.4a");
		ck_assert(r && r->attempts == LONG_MAX);
		progress_free(&p);
	}

	/* corrupt it: it is moved aside, reported, and progress starts afresh */
	char path[128], aside[160];
	snprintf(path, sizeof path, "%s/progress.csv", statedir);
	FILE *fp = fopen(path, "w");
	ck_assert(fp);
	fputs("item,attempts,solved,hints_used\nexercise:7.4a,two,1,0\n", fp);
	fclose(fp);
	ck_assert_int_eq(progress_load(&p, note, sizeof note), MP_OK);
	ck_assert_uint_eq(p.count, 0);
	ck_assert_msg(strstr(note, "corrupt") && strstr(note, "line 2"), "note: %s", note);
	snprintf(aside, sizeof aside, "%s.corrupt-1", path);
	ck_assert_int_eq(access(aside, F_OK), 0);
	ck_assert_int_ne(access(path, F_OK), 0);
	progress_free(&p);
	/* recording again starts a new file; no temporary files remain */
	ck_assert_int_eq(progress_record("exercise:7.4c", 1, true, 0, note, sizeof note), MP_OK);
	ck_assert_int_eq(progress_load(&p, note, sizeof note), MP_OK);
	ck_assert_uint_eq(p.count, 1);
	progress_free(&p);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "test -z \"$(ls %s | grep tmp)\"", statedir);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "rm -rf %s", statedir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---- the CSV reader ---------------------------------------------------------------- */

typedef struct {
	long lines[8];
	char first[8][64];
	size_t counts[8];
	size_t n;
} rows_seen;

static int collect(void *ud, const csvr_row *row)
{
	rows_seen *r = ud;
	if (r->n < 8) {
		r->lines[r->n] = row->line;
		r->counts[r->n] = row->count;
		snprintf(r->first[r->n], sizeof r->first[0], "%s", row->count ? row->fields[0] : "");
		r->n++;
	}
	return 0;
}

START_TEST(csv_reader_lines_and_errors)
{
	rows_seen r = { 0 };
	char err[256];
	static const char text[] = "\xEF\xBB\xBFid,name\n1,\"two\nlines\"\n\n3,\"a \"\"q\"\"\"\n4,x";
	ck_assert_int_eq(csvr_parse(text, sizeof text - 1, collect, NULL, &r, err, sizeof err), MP_OK);
	ck_assert_uint_eq(r.n, 4);
	ck_assert_str_eq(r.first[0], "id");   /* the byte-order mark is gone */
	ck_assert_int_eq(r.lines[1], 2);
	ck_assert_int_eq(r.lines[2], 5);      /* after the two-line field and a blank line */
	ck_assert_int_eq(r.lines[3], 6);
	ck_assert_uint_eq(r.counts[3], 2);
	memset(&r, 0, sizeof r);
	static const char bad[] = "a,b\nc,d\"e\n";
	ck_assert_int_eq(csvr_parse(bad, sizeof bad - 1, collect, NULL, &r, err, sizeof err), MP_EPARSE);
	ck_assert_msg(strncmp(err, "line 2:", 7) == 0, "%s", err);
	memset(&r, 0, sizeof r);
	static const char open_quote[] = "a,b\nc,\"d\ne\n";
	ck_assert_int_eq(csvr_parse(open_quote, sizeof open_quote - 1, collect, NULL, &r, err, sizeof err), MP_EPARSE);
	ck_assert_msg(strstr(err, "line 2") && strstr(err, "unterminated"), "%s", err);
	static const char nul[] = "a,b\0c\n";
	ck_assert_int_eq(csvr_parse(nul, sizeof nul - 1, collect, NULL, &r, err, sizeof err), MP_EPARSE);
	ck_assert_msg(strstr(err, "NUL"), "%s", err);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("progress");
	TCase *tc = tcase_create("progress");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, progress_records_and_survives_corruption);
	tcase_add_test(tc, file_atomic_keeps_pipes_and_links);
	tcase_add_test(tc, csv_reader_lines_and_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(suite());
}
