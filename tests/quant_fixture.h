/* Shared by the quant/ tests: parse decimal texts, quantize them, check an
 * element or a block's scale. A test sets QF_SEED (the SR seed) before
 * including it; the default is 1. */
#ifndef MIXPREC_TESTS_QUANT_FIXTURE_H
#define MIXPREC_TESTS_QUANT_FIXTURE_H

#include <math.h>

#include "fmt/parse.h"
#include "quant/quant.h"
#include "testutil.h"

#ifndef QF_SEED
#define QF_SEED 1
#endif

#define MAXV 8192

static fmt_num xs[MAXV];
/* run's message after a failure */
static char qf_err[256];

/* Parses texts into xs and quantizes them; the status. */
static mp_status run(quant_id fmt, quant_rule rule, fmt_mode mode, size_t block, const char *const *texts, size_t n,
                     quant_result *r)
{
	for (size_t i = 0; i < n; i++) {
		fmt_num_init(&xs[i]);
		ck_assert_msg(fmt_parse_number(&xs[i], texts[i], NULL, 0) == MP_OK, "%s", texts[i]);
	}
	quant_opts o = { .fmt = fmt, .rule = rule, .mode = mode, .block = block, .seed = QF_SEED };
	mp_status st = quant_run(&o, xs, n, r, qf_err, sizeof qf_err);
	for (size_t i = 0; i < n; i++)
		fmt_num_clear(&xs[i]);
	return st;
}

static void expect_elem(const quant_result *r, size_t i, uint32_t bits, double value, unsigned flags)
{
	const quant_elem *e = &r->elems[i];
	ck_assert_msg(e->bits == bits, "element %zu: bits 0x%x, want 0x%x", i, e->bits, bits);
	ck_assert_msg(e->value == value && signbit(e->value) == signbit(value), "element %zu: value %a, want %a", i,
	              e->value, value);
	ck_assert_msg(e->flags == flags, "element %zu: flags %u, want %u", i, e->flags, flags);
}

static void expect_scale(const quant_result *r, size_t k, uint32_t bits, double scale)
{
	ck_assert_msg(r->blocks[k].scale_bits == bits, "block %zu: scale bits 0x%x, want 0x%x", k,
	              r->blocks[k].scale_bits, bits);
	ck_assert_msg(r->blocks[k].scale == scale, "block %zu: scale %a, want %a", k, r->blocks[k].scale, scale);
}

#endif
