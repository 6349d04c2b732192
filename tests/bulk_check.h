/* Shared by the fmt/bulk tests (test_bulk.c: encode; test_bulk_quantize.c:
 * quantize, accumulate, decode): the input patterns, the scalar exact
 * path's expectation, element access, mismatch counting, and the paths a
 * run checks (every one the CPU has, or the one named on the command line
 * by tests/bulk-*.sh). */
#ifndef MIXPREC_TESTS_BULK_CHECK_H
#define MIXPREC_TESTS_BULK_CHECK_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fmt/bulk.h"
#include "testutil.h"
#include "fmt/format.h"

static const fmt_id all_fmts[] = { FMT_FP32, FMT_TF32, FMT_FP16, FMT_BF16, FMT_E4M3, FMT_E5M2 };
#define NFMTS ((int)(sizeof all_fmts / sizeof all_fmts[0]))

#define N_RANDOM_SR (1u << 18)
#define MAX_SHOWN 5

/* Call lengths around the vector widths, for the short-call tests; each
 * call is fenced by GUARD elements that must stay untouched. */
static const size_t tail_lengths[] = { 0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 47, 63, 64, 65, 100, 257 };
#define GUARD 20


/* xorshift64*, independent of the library's rng: a test seeds prng_state. */
extern uint64_t prng_state;
uint32_t prng(void);

/* Element i of an array of `size`-byte elements (1, 2 or 4), through
 * memcpy: the tail tests pass misaligned buffers. */
uint32_t load_elem(const void *p, size_t size, size_t i);
void store_elem(void *p, size_t size, size_t i, uint32_t v);

/* malloc that fails the test instead of returning NULL (n = 0 is fine). */
void *xmalloc(size_t n);

/* fp32 pattern of a decoded value, NaN -> the canonical 0x7fc00000. */
uint32_t decoded_bits(const fmt_info *f, uint32_t b);

/* --- the input patterns --- */

typedef struct {
	uint32_t *v;
	size_t n, cap;
} patterns;

/* n random patterns: half uniform bits, half with exponents near id's range
 * (and a quarter of those with the discarded bits forced to a tie). */
void pat_add_random(patterns *p, fmt_id id, size_t n);
/* The edge patterns of id (bulk_check.c) then nrandom random ones, from a
 * seed of id's own. */
patterns make_inputs(fmt_id id, size_t nrandom);
/* A copy of p's patterns as floats. */
float *as_floats(const patterns *p);

/* --- the scalar expectation and the comparison --- */

/* exp[i] = fmt_round_double((double)in[i]) with o's mode, saturation and,
 * for SR, rbits = rng_bits(seed, index0 + i). */
void scalar_expect(const fmt_bulk_opts *o, const float *in, uint32_t *exp, size_t n);
/* o and the path as text for messages, in buf. */
const char *opts_text(const fmt_bulk_opts *o, fmt_simd path, char *buf, size_t size);
/* Counts mismatches between exp[] and got (elements of `size` bytes),
 * printing the first few; in may be NULL (the index is shown instead). */
size_t count_bad(const char *what, const float *in, const uint32_t *exp, const void *got, size_t size, size_t n);

/* --- the paths a run checks --- */

/* Whether this run checks path p: the CPU has it and it is the one named
 * on the command line, if one was. */
bool path_tested(fmt_simd p);
/* main of a bulk test program: argv[1], when given, names the one path to
 * check (exit 99 if unknown, 77 when this CPU lacks it); then the suite. */
int bulk_check_main(const char *prog, int argc, char **argv, Suite *(*suite)(void));

#endif
