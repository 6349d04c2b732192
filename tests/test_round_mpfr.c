/* fmt_round_num against an independent GNU MPFR oracle (tests/mpfr_oracle.h):
 * every format, every mode, random binary inputs, decimal strings next to
 * ties, hand-picked edges and the double-rounding trap. The rule and the
 * statistics of stochastic rounding: test_round_mpfr_sr.c. */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>
#include <mpfr.h>

#include "fmt/format.h"
#include "fmt/parse.h"
#include "fmt/round.h"
#include "mpfr_oracle.h"
#include "util/rng.h"
#include "util/status.h"
#include "testutil.h"

enum {
	RANDOM_INPUTS = 300000,    /* per format, shared by all six modes */
	SAT_EVERY = 5,             /* every 5th random input is also run saturated */
	N_THREADS = 2,
	MAX_EXAMPLES = 8,
};

static const uint64_t SR_SEED = 0x5eed0123456789abull;

static const char *const MODE_NAME[FMT_MODE_COUNT] = { "rne", "rna", "rtz", "up",  "down",
                                                        "sr",  "rto", "rnz", "sr-equal" };

/* --- input construction --- */

typedef struct {
	char text[1024];      /* what to print for a reproduction */
	fmt_num x;            /* what the engine gets */
	mpq_t q;              /* the signed exact value the oracle gets */
	mpz_t n, d;
	bool parse_bad;
} input;

static void input_init(input *in)
{
	fmt_num_init(&in->x);
	mpq_init(in->q);
	mpz_inits(in->n, in->d, NULL);
}

static void input_clear(input *in)
{
	fmt_num_clear(&in->x);
	mpq_clear(in->q);
	mpz_clears(in->n, in->d, NULL);
}

/* x = (-1)^neg * sig * 2^e2, given to the engine as an exact rational. */
static void input_binary(input *in, bool neg, uint64_t sig, long e2)
{
	mpz_set_ui(in->n, sig);
	mpq_set_z(in->q, in->n);
	if (e2 >= 0)
		mpq_mul_2exp(in->q, in->q, (mp_bitcnt_t)e2);
	else
		mpq_div_2exp(in->q, in->q, (mp_bitcnt_t)-e2);
	in->x.kind = NUM_FINITE;
	in->x.neg = neg;
	mpq_set(in->x.mag, in->q);
	if (neg)
		mpq_neg(in->q, in->q);
	in->parse_bad = false;
	snprintf(in->text, sizeof in->text, "%s0x%llxp%ld", neg ? "-" : "",
	         (unsigned long long)sig, e2);
}

static void input_special(input *in, num_kind kind, bool neg)
{
	in->x.kind = kind;
	in->x.neg = neg;
	mpq_set_ui(in->x.mag, 0, 1);
	mpq_set_ui(in->q, 0, 1);
	in->parse_bad = false;
	snprintf(in->text, sizeof in->text, "%s%s", neg ? "-" : "",
	         kind == NUM_NAN ? "nan" : kind == NUM_INF ? "inf" : "0");
}

/* x = (-1)^neg * n / 10^dexp, given to the engine as text through the parser;
 * the oracle's value is built from n and dexp directly. */
static void input_decimal(input *in, bool neg, unsigned dexp, bool exp_form)
{
	char *p = in->text;
	size_t room = sizeof in->text;
	if (neg) {
		*p++ = '-';
		room--;
	}
	size_t len = mpz_sizeinbase(in->n, 10);
	ck_assert_uint_lt(len + dexp + 8, room);
	char digits[sizeof in->text];
	mpz_get_str(digits, 10, in->n);
	len = strlen(digits);
	if (exp_form) {
		memcpy(p, digits, len);
		snprintf(p + len, 16, "e-%u", dexp);
	} else if (dexp == 0) {
		memcpy(p, digits, len + 1);
	} else if (len <= dexp) {
		*p++ = '0';
		*p++ = '.';
		for (size_t i = len; i < dexp; i++)
			*p++ = '0';
		memcpy(p, digits, len + 1);
	} else {
		memcpy(p, digits, len - dexp);
		p += len - dexp;
		*p++ = '.';
		memcpy(p, digits + len - dexp, dexp + 1);
	}
	/* the oracle's exact value */
	mpz_ui_pow_ui(in->d, 10, dexp);
	mpq_set_num(in->q, in->n);
	mpq_set_den(in->q, in->d);
	mpq_canonicalize(in->q);
	/* the engine's value, through the parser */
	char err[256];
	mp_status st = fmt_parse_number(&in->x, in->text, err, sizeof err);
	in->parse_bad = st != MP_OK || in->x.kind != NUM_FINITE || in->x.neg != neg ||
	                !mpq_equal(in->x.mag, in->q);
	if (neg)
		mpq_neg(in->q, in->q);
}

/* A decimal string at, or within about 1e-21 relative of, a midpoint between
 * two neighbours of the format. */
static void input_near_tie(input *in, const oracle *o, uint64_t *s)
{
	int fb = o->r->fb;
	long emax = (long)(o->r->has_inf ? (1 << (o->r->width - 1 - fb)) - 2
	                                 : (1 << (o->r->width - 1 - fb)) - 1) - o->r->bias;
	long e = sm_range(s, o->emin_f - 1, emax);   /* emin_f - 1: the subnormal grid */
	long q = (e < o->emin_f ? o->emin_f : e) - fb;   /* exponent of the ulp */
	uint64_t k = e < o->emin_f ? sm_next(s) % (1ull << fb)
	                           : (1ull << fb) + sm_next(s) % (1ull << fb);
	bool neg = sm_next(s) & 1;
	/* midpoint (2k+1) * 2^(q-1) = n / 10^dexp */
	unsigned dexp;
	mpz_set_ui(in->n, 2 * k + 1);
	if (q - 1 >= 0) {
		mpz_mul_2exp(in->n, in->n, (mp_bitcnt_t)(q - 1));
		dexp = 0;
	} else {
		dexp = (unsigned)(1 - q);
		mpz_ui_pow_ui(in->d, 5, dexp);
		mpz_mul(in->n, in->n, in->d);
	}
	int v = (int)(sm_next(s) % 3);   /* 0 exact tie, 1 just above, 2 just below */
	if (v != 0) {
		mpz_ui_pow_ui(in->d, 10, 21);
		mpz_mul(in->n, in->n, in->d);
		if (v == 1)
			mpz_add_ui(in->n, in->n, 1);
		else
			mpz_sub_ui(in->n, in->n, 1);
		dexp += 21;
	}
	input_decimal(in, neg, dexp, sm_next(s) & 1);
}

/* --- comparing one input in every mode --- */

typedef struct {
	long inputs, checks, mismatches, parse_errors;
	int n_examples;
	char examples[MAX_EXAMPLES][1400];
} tally;

static void note_mismatch(tally *t, const oracle *o, const input *in, fmt_mode m, bool sat,
                          uint32_t rbits, uint32_t want, uint32_t got)
{
	long *count = &t->mismatches;
	int *n = &t->n_examples;
	int max = MAX_EXAMPLES;
	char *ex = t->examples[*n];
	(*count)++;
	if (*n < max) {
		int hex = (o->r->width + 3) / 4;
		(*n)++;
		snprintf(ex, sizeof t->examples[0],
		         "%s %s%s x=%s rbits=0x%08x: expected 0x%0*x, got 0x%0*x",
		         fmt_get(o->id)->name, MODE_NAME[m], sat ? " saturate" : "", in->text,
		         (unsigned)rbits, hex, (unsigned)want, hex, (unsigned)got);
	}
}

static void check_all_modes(tally *t, oracle *o, const input *in, bool sat, uint32_t rbits)
{
	const fmt_info *f = fmt_get(o->id);
	for (int m = 0; m < FMT_MODE_COUNT; m++) {
		fmt_round_ctl ctl = { .mode = (fmt_mode)m, .saturate = sat, .rbits = rbits };
		uint32_t got = fmt_round_num(f, &ctl, &in->x, NULL);
		uint32_t want = oracle_expect(o, (fmt_mode)m, sat, rbits);
		t->checks++;
		if (got != want)
			note_mismatch(t, o, in, (fmt_mode)m, sat, rbits, want, got);
	}
}

/* SR bits: mostly the stream's own, sometimes right at the threshold. */
static uint32_t pick_rbits(const oracle *o, uint64_t *s, uint64_t index)
{
	uint64_t c = sm_next(s) % 8;
	if (o->exact || c >= 2)
		return rng_bits(SR_SEED, index);
	uint64_t r = c == 0 ? o->t - 1 : o->t;   /* the last up / the first down */
	return r > 0xffffffffull ? 0xffffffffu : (uint32_t)r;
}

/* --- test 1: random inputs --- */

typedef struct {
	fmt_id id;
	int thread;
	bool mpfr_tls;
	tally t;
} job;

static void *random_worker(void *arg)
{
	job *jb = arg;
	oracle o;
	oracle_init(&o, jb->id);
	input in;
	input_init(&in);
	int fb = o.r->fb;
	long emax = (long)(o.r->has_inf ? (1 << (o.r->width - 1 - fb)) - 2
	                                : (1 << (o.r->width - 1 - fb)) - 1) - o.r->bias;
	long e_lo = o.emin_f - fb - 4, e_hi = emax + 3;   /* unbiased exponents */
	int step = jb->mpfr_tls ? N_THREADS : 1;
	for (long i = jb->thread; i < RANDOM_INPUTS; i += step) {
		/* each input depends on (format, index) only */
		uint64_t s = rng_mix64(((uint64_t)jb->id << 48) ^ (uint64_t)i ^ 0xa5a5a5a5ull);
		uint64_t c = sm_next(&s) % 100;
		if (c < 10) {
			input_near_tie(&in, &o, &s);
		} else {
			bool neg = sm_next(&s) & 1;
			uint64_t sig = sm_next(&s) | (1ull << 63);
			long e;
			if (c < 30) {   /* next to the subnormal range or to overflow */
				e = (sm_next(&s) & 1) ? sm_range(&s, o.emin_f - fb - 2, o.emin_f + 1)
				                      : sm_range(&s, emax - 1, emax + 1);
			} else {
				e = sm_range(&s, e_lo, e_hi);
			}
			bool short_sig = c < 30 ? (sm_next(&s) & 1) != 0 : c < 60;
			if (short_sig) {
				/* few significant bits: exact values and exact ties */
				int k = (int)sm_range(&s, 1, o.p + 2);
				sig &= ~0ull << (64 - k);
			}
			input_binary(&in, neg, sig, e - 63);
		}
		jb->t.inputs++;
		if (in.parse_bad) {
			jb->t.parse_errors++;
			if (jb->t.n_examples < MAX_EXAMPLES)
				snprintf(jb->t.examples[jb->t.n_examples++], sizeof jb->t.examples[0],
				         "parse of \"%s\" is not its exact value", in.text);
			continue;
		}
		oracle_prepare(&o, in.x.kind, in.x.neg, in.q);
		uint32_t rbits = pick_rbits(&o, &s, (uint64_t)i);
		check_all_modes(&jb->t, &o, &in, false, rbits);
		if (i % SAT_EVERY == 0)
			check_all_modes(&jb->t, &o, &in, true, rbits);
	}
	input_clear(&in);
	oracle_clear(&o);
	mpfr_free_cache();
	return NULL;
}

static void report(const char *what, const tally *t)
{
	printf("# %s: %ld inputs, %ld checks, %ld mismatches, %ld parse errors\n", what,
	       t->inputs, t->checks, t->mismatches, t->parse_errors);
	for (int k = 0; k < t->n_examples; k++)
		printf("#   %s\n", t->examples[k]);
	fflush(stdout);
}

START_TEST(test_random)
{
	fmt_id id = (fmt_id)_i;
	const fmt_info *f = fmt_get(id);
	/* the table under test agrees with the oracle's */
	ck_assert_int_eq(f->width, REF[id].width);
	ck_assert_int_eq(f->frac_bits, REF[id].fb);
	ck_assert_int_eq(f->bias, REF[id].bias);
	ck_assert_int_eq(fmt_has_inf(f), REF[id].has_inf);

	bool tls = mpfr_buildopt_tls_p() != 0;
	int nthreads = tls ? N_THREADS : 1;
	static job jobs[N_THREADS];
	pthread_t th[N_THREADS];
	for (int k = 0; k < nthreads; k++) {
		memset(&jobs[k], 0, sizeof jobs[k]);
		jobs[k].id = id;
		jobs[k].thread = k;
		jobs[k].mpfr_tls = tls;
		ck_assert_int_eq(pthread_create(&th[k], NULL, random_worker, &jobs[k]), 0);
	}
	tally all;
	memset(&all, 0, sizeof all);
	for (int k = 0; k < nthreads; k++) {
		ck_assert_int_eq(pthread_join(th[k], NULL), 0);
		all.inputs += jobs[k].t.inputs;
		all.checks += jobs[k].t.checks;
		all.mismatches += jobs[k].t.mismatches;
		all.parse_errors += jobs[k].t.parse_errors;
		for (int e = 0; e < jobs[k].t.n_examples && all.n_examples < MAX_EXAMPLES; e++)
			memcpy(all.examples[all.n_examples++], jobs[k].t.examples[e], sizeof all.examples[0]);
	}
	char what[64];
	snprintf(what, sizeof what, "random %s", f->name);
	report(what, &all);
	ck_assert_int_eq(all.inputs, RANDOM_INPUTS);
	ck_assert_int_eq(all.parse_errors, 0);
	ck_assert_msg(all.mismatches == 0, "%s: %ld of %ld results differ from MPFR (first: %s)",
	              f->name, all.mismatches, all.checks, all.examples[0]);
}
END_TEST

/* --- test 1b: edges --- */

/* in = (-1)^neg * (a * 2^ea + b * 2^eb), exactly, with a text for reports */
static void input_sum(input *in, bool neg, long a, long ea, long b, long eb)
{
	mpq_t t;
	mpq_init(t);
	mpq_set_si(in->q, a, 1);
	if (ea >= 0)
		mpq_mul_2exp(in->q, in->q, (mp_bitcnt_t)ea);
	else
		mpq_div_2exp(in->q, in->q, (mp_bitcnt_t)-ea);
	mpq_set_si(t, b, 1);
	if (eb >= 0)
		mpq_mul_2exp(t, t, (mp_bitcnt_t)eb);
	else
		mpq_div_2exp(t, t, (mp_bitcnt_t)-eb);
	mpq_add(in->q, in->q, t);
	mpq_clear(t);
	ck_assert_int_ge(mpq_sgn(in->q), 0);
	in->x.kind = NUM_FINITE;
	in->x.neg = neg;
	mpq_set(in->x.mag, in->q);
	if (neg)
		mpq_neg(in->q, in->q);
	in->parse_bad = false;
	snprintf(in->text, sizeof in->text, "%s(%ld*2^%ld + %ld*2^%ld)", neg ? "-" : "", a, ea, b, eb);
}

START_TEST(test_edges)
{
	fmt_id id = (fmt_id)_i;
	oracle o;
	oracle_init(&o, id);
	input in;
	input_init(&in);
	tally t;
	memset(&t, 0, sizeof t);
	int fb = o.r->fb;
	long emax = (long)mpfr_get_exp(o.maxv) - 1;
	long ems = o.emin_f - fb;        /* exponent of the min subnormal */
	long emx = emax - fb;            /* exponent of the ulp at max */
	long maxsig = (long)(o.r->has_inf ? (2l << fb) - 1 : (2l << fb) - 2);
	ck_assert_int_eq(mpfr_cmp_si_2exp(o.maxv, maxsig, emx), 0);
	/* a * 2^ea + b * 2^eb */
	const long E[][4] = {
		{ 0, 0, 0, 0 },                                /* zero */
		{ 1, ems, 0, 0 },                              /* min subnormal */
		{ 3, ems, 0, 0 },
		{ 1, ems - 1, 0, 0 },                          /* half of it: tie with 0 */
		{ 1, ems - 1, 1, ems - 80 },
		{ 1, ems - 1, -1, ems - 80 },
		{ 1, ems - 2, 0, 0 },
		{ 3, ems - 2, 0, 0 },
		{ 3, ems - 1, 0, 0 },                          /* tie between 1 and 2 units */
		{ 5, ems - 1, 0, 0 },                          /* tie between 2 and 3 units */
		{ 1, ems - 200, 0, 0 },
		{ 1, -1000, 0, 0 },
		{ 1, o.emin_f, 0, 0 },                         /* min normal */
		{ 1, o.emin_f, -1, ems },                      /* max subnormal */
		{ 1, o.emin_f, 1, ems },
		{ 1, o.emin_f, -1, ems - 1 },                  /* tie: max subnormal / min normal */
		{ 1, o.emin_f, -1, ems - 80 },
		{ 1, o.emin_f, 1, ems - 1 },
		{ 1, o.emin_f, 1, ems - 80 },
		{ 1, 0, 0, 0 },
		{ 1, 0, 1, -fb - 1 },                          /* 1 + half ulp */
		{ 1, 0, 3, -fb - 1 },
		{ 1, 0, 1, -fb - 80 },
		{ 1, -1, 1, -fb - 2 },                         /* 1/2 + half its ulp: tie */
		{ maxsig, emx, 0, 0 },                         /* max */
		{ maxsig, emx, -1, emx - 1 },                  /* tie below max */
		{ 2 * maxsig + 1, emx - 1, 0, 0 },             /* max + half ulp: overflow threshold */
		{ 2 * maxsig + 1, emx - 1, 1, emx - 70 },
		{ 2 * maxsig + 1, emx - 1, -1, emx - 70 },
		{ maxsig + 1, emx, 0, 0 },                     /* next grid point above max */
		{ maxsig + 1, emx, 1, emx - 70 },
		{ 1, emax + 1, 0, 0 },
		{ 1, emax + 2, 0, 0 },
		{ 1, 1000, 0, 0 },
	};
	uint64_t s = 42 + (uint64_t)id;
	for (size_t k = 0; k < sizeof E / sizeof E[0]; k++) {
		for (int neg = 0; neg < 2; neg++) {
			input_sum(&in, neg, E[k][0], E[k][1], E[k][2], E[k][3]);
			oracle_prepare(&o, in.x.kind, in.x.neg, in.q);
			uint32_t rb[6] = { 0, 1, 0x80000000u, 0xffffffffu,
			                   rng_bits(SR_SEED, k), 0 };
			int nrb = 5;
			if (!o.exact) {
				rb[5] = (uint32_t)(o.t - 1);
				rb[4] = o.t > 0xffffffffull ? 0xfffffffeu : (uint32_t)o.t;
				nrb = 6;
			}
			for (int sat = 0; sat < 2; sat++)
				for (int r = 0; r < nrb; r++)
					check_all_modes(&t, &o, &in, sat, rb[r]);
			t.inputs++;
		}
	}
	for (int kind = NUM_INF; kind <= NUM_NAN; kind++) {
		for (int neg = 0; neg < 2; neg++) {
			input_special(&in, (num_kind)kind, neg);
			oracle_prepare(&o, in.x.kind, in.x.neg, in.q);
			for (int sat = 0; sat < 2; sat++)
				check_all_modes(&t, &o, &in, sat, (uint32_t)sm_next(&s));
			t.inputs++;
		}
	}
	/* a few fixed expectations written by hand, as a check on the oracle */
	const fmt_info *f = fmt_get(id);
	fmt_round_ctl rne = { .mode = FMT_RNE }, rtz = { .mode = FMT_RTZ };
	fmt_round_ctl sat = { .mode = FMT_RNE, .saturate = true };
	uint32_t sign = 1u << (o.r->width - 1);
	input_special(&in, NUM_NAN, true);
	ck_assert_uint_eq(fmt_round_num(f, &rne, &in.x, NULL), o.r->nan_bits);
	input_special(&in, NUM_INF, true);
	/* -inf: -inf, or (e4m3) the NaN with the sign, 1 1111 111 */
	ck_assert_uint_eq(fmt_round_num(f, &rne, &in.x, NULL),
	                  sign | (o.r->has_inf ? o.r->inf_bits : o.r->nan_bits));
	ck_assert_uint_eq(fmt_round_num(f, &sat, &in.x, NULL), sign | o.r->max_bits);
	input_sum(&in, true, 0, 0, 0, 0);
	ck_assert_uint_eq(fmt_round_num(f, &rne, &in.x, NULL), sign);
	input_sum(&in, false, 1, ems - 1, 0, 0);
	ck_assert_uint_eq(fmt_round_num(f, &rne, &in.x, NULL), 0);
	input_sum(&in, false, 1, ems - 1, 1, ems - 80);
	ck_assert_uint_eq(fmt_round_num(f, &rne, &in.x, NULL), 1);
	input_sum(&in, false, 1, emax + 1, 0, 0);
	ck_assert_uint_eq(fmt_round_num(f, &rtz, &in.x, NULL), o.r->max_bits);
	ck_assert_uint_eq(fmt_round_num(f, &rne, &in.x, NULL), inf_or_nan(&o, false));

	char what[64];
	snprintf(what, sizeof what, "edges %s", f->name);
	report(what, &t);
	input_clear(&in);
	oracle_clear(&o);
	ck_assert_msg(t.mismatches == 0, "%s: %ld of %ld edge results differ from MPFR (first: %s)",
	              f->name, t.mismatches, t.checks, t.examples[0]);
}
END_TEST

/* --- test 2: the double-rounding trap --- */

START_TEST(test_double_rounding)
{
	static const struct {
		const char *text;
		uint32_t bits;
	} cases[] = {
		{ "1.00390625000000000001", 0x3f81 },   /* just above the tie 1 + 2^-8 */
		{ "1.00390625", 0x3f80 },               /* the tie itself: to even */
		{ "-1.00390625000000000001", 0xbf81 },
		{ "1.00390624999999999999", 0x3f80 },
		{ "1.01171875", 0x3f82 },               /* 1 + 3*2^-8: tie, to even (up) */
	};
	const fmt_info *f = fmt_get(FMT_BF16);
	fmt_round_ctl ctl = { .mode = FMT_RNE };
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		fmt_num x;
		fmt_num_init(&x);
		char err[256];
		ck_assert_int_eq(fmt_parse_number(&x, cases[k].text, err, sizeof err), MP_OK);
		uint32_t got = fmt_round_num(f, &ctl, &x, NULL);
		ck_assert_msg(got == cases[k].bits, "bf16 rne \"%s\": expected 0x%04x, got 0x%04x",
		              cases[k].text, (unsigned)cases[k].bits, (unsigned)got);
		fmt_num_clear(&x);
	}
	/* the trap itself: via binary64 the first one would become 0x3f80 */
	ck_assert_uint_eq(fmt_round_double(f, &ctl, 1.00390625000000000001, NULL), 0x3f80);
}
END_TEST

static Suite *round_mpfr_suite(void)
{
	Suite *s = suite_create("round_mpfr");
	TCase *tc = tcase_create("random");
	tcase_set_timeout(tc, 900);
	tcase_add_loop_test(tc, test_random, 0, FMT_E5M2 + 1);   /* the rest: test_round_small */
	suite_add_tcase(s, tc);
	tc = tcase_create("edges");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_edges, 0, FMT_E5M2 + 1);
	tcase_add_test(tc, test_double_rounding);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return testutil_run(round_mpfr_suite());
}
