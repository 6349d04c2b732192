/* The frame of tests/test_exhaustive.c: all 2^32 fp32 patterns (or make
 * check's sample of them) in chunks of 2^20, shared by two threads; per format and path a row of checked and
 * mismatched counts; the first mismatches printed. */
#ifndef MIXPREC_TESTS_EXHAUSTIVE_RUN_H
#define MIXPREC_TESTS_EXHAUSTIVE_RUN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <mpfr.h>

#include "fmt/bulk.h"
#include "testutil.h"

#define NTHREADS 2
#define CHUNK_BITS 20
#define CHUNK ((size_t)1 << CHUNK_BITS)
#define NCHUNKS ((uint32_t)1 << (32 - CHUNK_BITS))
#define MAX_ROWS 64   /* test_exhaustive_ext: a row per format and path */
#define MAX_REPORT 10

static inline bool is_nan32(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

typedef struct {
	char label[64];
	int hexdigits;
	atomic_uint_fast64_t checked, bad;
} row;

extern row rows[MAX_ROWS];

typedef struct {
	float *in;
	uint32_t *expect;
	void *expect_n;        /* expect[] narrowed to the encoded element size */
	float *in_sparse;      /* reference: the fp8 subset of the chunk */
	void *out;
	mpfr_t m8;             /* bf16-avx512: precision-8 MPFR value */
	uint64_t local_checked[MAX_ROWS], local_bad[MAX_ROWS];
} worker;

typedef void (*chunk_fn)(worker *w, uint32_t base);

/* bf16-avx512: the threads set up MPFR for bf16 */
extern bool use_mpfr;

double now_s(void);
uint32_t load_elem(const void *p, size_t size, size_t i);
/* A row "FMT via PATH" (exits 99 past MAX_ROWS). */
int row_add(const char *fmtname, const char *pathname, int hexdigits);
void report(int rowi, uint32_t input, uint32_t expected, uint32_t got, const char *oracle);
/* RNE, no saturation. */
void check_all_paths(worker *w, fmt_id fmt, const int *rowof, size_t n, const char *oracle);
void check_all_paths_opts(worker *w, const fmt_bulk_opts *o, const int *rowof, size_t n, const char *oracle);
/* Runs fn over all chunks with NTHREADS threads; prints the rows; returns
 * the exit status (0 all agree, 1 a mismatch or an empty row, 99 setup). */
int run_all(chunk_fn fn, const char *title);
/* Whether chunk c is in make check's sample (run_all checks every chunk
 * only with MIXPREC_EXHAUSTIVE=full). */
bool exhaustive_chunk_sampled(uint32_t c);
/* in[i] = the pattern base + i. */
void fill_chunk(float *in, uint32_t base);
/* Rows for every available path of one format; rowof[p] = -1 where absent. */
void add_path_rows(const char *fmtname, int hexdigits, int *rowof);

#endif
