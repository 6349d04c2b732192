/* The frame of the exhaustive checks (see exhaustive_run.h). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "exhaustive_run.h"
#include "fmt/format.h"

/* --- small helpers --- */


double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint32_t load_elem(const void *p, size_t size, size_t i)
{
	if (size == 1)
		return ((const uint8_t *)p)[i];
	if (size == 2)
		return ((const uint16_t *)p)[i];
	return ((const uint32_t *)p)[i];
}

/* --- rows of results (one per format x path) and mismatch reports --- */


row rows[MAX_ROWS];
static int nrows;
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static int nreported;

int row_add(const char *fmtname, const char *pathname, int hexdigits)
{
	if (nrows >= MAX_ROWS) {
		fprintf(stderr, "internal: too many rows\n");
		exit(99);
	}
	row *r = &rows[nrows];
	snprintf(r->label, sizeof r->label, "%s via %s", fmtname, pathname);
	r->hexdigits = hexdigits;
	atomic_init(&r->checked, 0);
	atomic_init(&r->bad, 0);
	return nrows++;
}

void report(int rowi, uint32_t input, uint32_t expected, uint32_t got, const char *oracle)
{
	pthread_mutex_lock(&report_lock);
	if (nreported < MAX_REPORT) {
		int d = rows[rowi].hexdigits;
		printf("MISMATCH %s: input fp32 0x%08" PRIx32 " (%a): expected 0x%0*" PRIx32
		       " (%s), got 0x%0*" PRIx32 "\n",
		       rows[rowi].label, input, (double)u2f(input), d, expected, oracle, d, got);
		fflush(stdout);
	}
	nreported++;
	pthread_mutex_unlock(&report_lock);
}

/* --- the worker framework --- */



bool use_mpfr;   /* bf16-avx512: threads set up MPFR for bf16 */

static chunk_fn the_chunk_fn;
static atomic_uint next_chunk;

/* Narrows w->expect to the encoded element size (into w->expect_n) so that a
 * path's output can be compared with memcmp. */
static void narrow_expect(worker *w, size_t size, size_t n)
{
	if (size == 1) {
		uint8_t *d = w->expect_n;
		for (size_t i = 0; i < n; i++)
			d[i] = (uint8_t)w->expect[i];
	} else if (size == 2) {
		uint16_t *d = w->expect_n;
		for (size_t i = 0; i < n; i++)
			d[i] = (uint16_t)w->expect[i];
	} else {
		memcpy(w->expect_n, w->expect, n * 4);
	}
}

/* Which oracle gave the expected value for input u: NaNs are expected to
 * become the canonical NaN; in the bf16 test fp32 subnormals go to MPFR. */
static const char *oracle_of(uint32_t u, const char *oracle)
{
	uint32_t a = u & 0x7fffffffu;
	if (a > 0x7f800000u)
		return "canonical NaN";
	if (use_mpfr && a != 0 && a < 0x00800000u)
		return "MPFR";
	return oracle;
}

/* Compares out (encoded with elements of `size` bytes) against w->expect. */
static void compare(worker *w, int rowi, size_t size, size_t n, const char *oracle)
{
	uint64_t bad = 0;
	if (memcmp(w->out, w->expect_n, n * size) != 0) {
		for (size_t i = 0; i < n; i++) {
			uint32_t got = load_elem(w->out, size, i);
			if (got != w->expect[i]) {
				if (bad < 3)
					report(rowi, f2u(w->in[i]), w->expect[i], got, oracle_of(f2u(w->in[i]), oracle));
				bad++;
			}
		}
	}
	w->local_checked[rowi] += n;
	w->local_bad[rowi] += bad;
}

void check_all_paths(worker *w, fmt_id fmt, const int *rowof, size_t n, const char *oracle)
{
	fmt_bulk_opts o = { .fmt = fmt, .mode = FMT_RNE, .saturate = false, .seed = 0, .index0 = 0 };
	check_all_paths_opts(w, &o, rowof, n, oracle);
}

/* Encodes w->in[0..n) as o says on every available path and compares with
 * w->expect; path p uses row rowof[p] (-1: skipped). */
void check_all_paths_opts(worker *w, const fmt_bulk_opts *o, const int *rowof, size_t n, const char *oracle)
{
	fmt_id fmt = o->fmt;
	size_t size = fmt_bulk_elem_size(fmt);
	narrow_expect(w, size, n);
	for (int p = 0; p < FMT_SIMD_COUNT; p++) {
		if (rowof[p] < 0)
			continue;
		/* poison the first and last elements so that a skipped store shows */
		memset(w->out, 0xa5, size);
		memset((char *)w->out + (n - 1) * size, 0xa5, size);
		mp_status st = fmt_bulk_encode((fmt_simd)p, o, w->out, w->in, n);
		if (st != MP_OK) {
			pthread_mutex_lock(&report_lock);
			printf("fmt_bulk_encode(%s, %s) returned status %d\n", fmt_simd_name((fmt_simd)p),
			       fmt_get(fmt)->name, (int)st);
			pthread_mutex_unlock(&report_lock);
			w->local_bad[rowof[p]] += n;
			w->local_checked[rowof[p]] += n;
			continue;
		}
		compare(w, rowof[p], size, n, oracle);
	}
}

/* MIXPREC_EXHAUSTIVE=full: every chunk; else (make check) the sample. */
static bool sample_only;

bool exhaustive_chunk_sampled(uint32_t c)
{
	/* a chunk is a sign, an 8-bit exponent and the top 3 fraction bits */
	uint32_t e = (c >> 3) & 0xffu;
	return e <= 2 || e >= 252 || (e >= 100 && e <= 145) || c % 32 == 5;
}

static void *worker_main(void *arg)
{
	worker *w = arg;
	if (use_mpfr) {
		/* bf16's range in MPFR's convention (value = m * 2^e, 1/2 <= m < 1):
		 * min subnormal 2^-133 = 0.5 * 2^-132, max < 2^128. */
		mpfr_set_emin(-132);
		mpfr_set_emax(128);
		mpfr_init2(w->m8, 8);
	}
	for (;;) {
		uint32_t c = atomic_fetch_add(&next_chunk, 1);
		if (c >= NCHUNKS)
			break;
		if (sample_only && !exhaustive_chunk_sampled(c))
			continue;
		the_chunk_fn(w, c << CHUNK_BITS);
	}
	if (use_mpfr) {
		mpfr_clear(w->m8);
		mpfr_free_cache();
	}
	return NULL;
}

/* Runs fn over all chunks with NTHREADS threads; prints the rows; returns
 * the exit status. */
int run_all(chunk_fn fn, const char *title)
{
	the_chunk_fn = fn;
	atomic_init(&next_chunk, 0);
	const char *full = getenv("MIXPREC_EXHAUSTIVE");
	sample_only = !(full && !strcmp(full, "full"));
	worker ws[NTHREADS];
	pthread_t th[NTHREADS];
	double t0 = now_s();
	for (int t = 0; t < NTHREADS; t++) {
		memset(&ws[t], 0, sizeof ws[t]);
		ws[t].in = malloc(CHUNK * sizeof(float));
		ws[t].expect = malloc(CHUNK * sizeof(uint32_t));
		ws[t].out = malloc(CHUNK * sizeof(uint32_t));
		ws[t].expect_n = malloc(CHUNK * sizeof(uint32_t));
		ws[t].in_sparse = malloc(CHUNK * sizeof(float));
		if (!ws[t].in || !ws[t].expect || !ws[t].out || !ws[t].expect_n ) {
			fprintf(stderr, "out of memory\n");
			return 99;
		}
		if (pthread_create(&th[t], NULL, worker_main, &ws[t]) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			return 99;
		}
	}
	for (int t = 0; t < NTHREADS; t++) {
		pthread_join(th[t], NULL);
		for (int r = 0; r < nrows; r++) {
			atomic_fetch_add(&rows[r].checked, ws[t].local_checked[r]);
			atomic_fetch_add(&rows[r].bad, ws[t].local_bad[r]);
		}
		free(ws[t].in);
		free(ws[t].expect);
		free(ws[t].out);
		free(ws[t].expect_n);
		free(ws[t].in_sparse);
	}
	double dt = now_s() - t0;
	int status = 0;
	printf("%s (%d threads, %.1f s)\n", title, NTHREADS, dt);
	if (sample_only)
		printf("  sampled (make check): the inputs of every exponent at the formats' edges (fp32 exponent fields\n"
		       "  0-2, 100-145 and 252-255: every subnormal, tie, min-normal and overflow boundary of the formats\n"
		       "  checked) and every 32nd block of 2^20 inputs elsewhere; MIXPREC_EXHAUSTIVE=full (make\n"
		       "  check-exhaustive) checks all 2^32\n");
	for (int r = 0; r < nrows; r++) {
		uint64_t checked = atomic_load(&rows[r].checked), bad = atomic_load(&rows[r].bad);
		printf("  %-36s %11" PRIu64 " checked, %" PRIu64 " mismatches\n", rows[r].label, checked, bad);
		if (bad != 0 || checked == 0)
			status = 1;
	}
	printf("%s\n", status == 0 ? "PASS" : "FAIL");
	return status;
}

void fill_chunk(float *in, uint32_t base)
{
	uint32_t *u = (uint32_t *)(void *)in;
	for (size_t i = 0; i < CHUNK; i++)
		u[i] = base + (uint32_t)i;
}

/* Rows for every available path of one format; rowof[p] = -1 where absent. */
void add_path_rows(const char *fmtname, int hexdigits, int *rowof)
{
	for (int p = 0; p < FMT_SIMD_COUNT; p++)
		rowof[p] = fmt_simd_available((fmt_simd)p) ? row_add(fmtname, fmt_simd_name((fmt_simd)p), hexdigits)
		                                           : -1;
	for (int p = 0; p < FMT_SIMD_COUNT; p++)
		if (rowof[p] < 0)
			printf("note: path %s not available on this CPU: not checked\n", fmt_simd_name((fmt_simd)p));
}
