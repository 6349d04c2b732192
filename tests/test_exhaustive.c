/* Exhaustive checks of the bulk fp32 -> format kernels over all 2^32 fp32 bit
 * patterns, against independent oracles:
 *
 *   fp16-f16c    fp16 RNE on every available path == the F16C instruction
 *                (VCVTPS2PH, round to nearest even); NaN inputs -> 0x7e00.
 *   bf16-avx512  bf16 RNE on every available path == the AVX-512 BF16
 *                instruction (VCVTNEPS2BF16) for non-NaN, non-subnormal inputs;
 *                fp32 subnormal inputs (which it flushes to zero) against MPFR
 *                (precision 8, bf16's exponent range, mpfr_subnormalize);
 *                NaN inputs -> 0x7fc0.
 *   reference    fp16, bf16, fp8-e4m3, fp8-e5m2 RNE on every available path
 *                (portable always) == a separately written binary64 reference:
 *                scale so that the last place is 1, nearbyint (ties to even),
 *                scale back, overflow above max, encode.
 *   sr-reference fp16 (all inputs), bf16, fp8-e4m3, fp8-e5m2 (the subset of
 *                the RNE check unless MIXPREC_EXHAUSTIVE_FP8_FULL=1) SR, the
 *                fp8 formats also saturating, on every available path == a binary64 reference
 *                of SR's definition: floor of the scaled value, up iff the
 *                element's 32 random bits are below frac * 2^32.
 *
 * Usage: test_exhaustive NAME. Exit 0 when everything agrees, 1 on any
 * mismatch (the first few are printed), 77 (skip) when the CPU lacks the
 * oracle instruction. Two threads share the 4096 chunks of 2^20 patterns. */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpfr.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif

#include "fmt/bulk.h"
#include "fmt/format.h"
#include "util/rng.h"
#include "exhaustive_run.h"
#include "exhaustive_ref.h"

/* --- fp16 against F16C --- */

static int fp16_rows[FMT_SIMD_COUNT];

#if HAVE_X86
__attribute__((target("avx2,f16c")))
static void f16c_expect(const float *in, uint32_t *expect, size_t n)
{
	uint16_t h[8];
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m128i r = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
		_mm_storeu_si128((__m128i *)(void *)h, r);
		for (int j = 0; j < 8; j++)
			expect[i + (size_t)j] = h[j];
	}
	for (; i < n; i++) {
		__m128i r = _mm_cvtps_ph(_mm_set_ss(in[i]), _MM_FROUND_TO_NEAREST_INT);
		expect[i] = (uint16_t)_mm_extract_epi16(r, 0);
	}
	for (i = 0; i < n; i++)
		if (is_nan32(f2u(in[i])))
			expect[i] = 0x7e00;
}

static void fp16_chunk(worker *w, uint32_t base)
{
	fill_chunk(w->in, base);
	f16c_expect(w->in, w->expect, CHUNK);
	check_all_paths(w, FMT_FP16, fp16_rows, CHUNK, "F16C vcvtps2ph");
}
#endif

#if HAVE_X86
#include <cpuid.h>

/* The oracle instructions' CPUID bits, read here rather than through
 * __builtin_cpu_supports (clang 14 knows neither "f16c" nor "avx512bf16") or
 * through the library under test. OS support of the vector state included. */
static bool cpu_has_oracle(const char *what)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)))
		return false;
	unsigned xlo, xhi;
	__asm__("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
	bool f16c = c & (1u << 29);
	unsigned b7 = 0, c7, d7, a71 = 0, b71, c71, d71;
	if (!__get_cpuid_count(7, 0, &a, &b7, &c7, &d7))
		return false;
	if (a >= 1)
		__get_cpuid_count(7, 1, &a71, &b71, &c71, &d71);
	bool avx2 = (xlo & 0x6) == 0x6 && (b7 & (1u << 5));
	bool avx512bf16 = (xlo & 0xe6) == 0xe6 && (b7 & (1u << 16)) && (a71 & (1u << 5));
	if (!strcmp(what, "f16c+avx2"))
		return f16c && avx2;
	if (!strcmp(what, "avx512bf16"))
		return avx512bf16;
	return avx2;
}
#endif

static int test_fp16_f16c(void)
{
#if HAVE_X86
	if (!cpu_has_oracle("f16c+avx2")) {
		printf("SKIP: this CPU lacks F16C/AVX2, the oracle for fp16-f16c\n");
		return 77;
	}
	/* The oracle itself on values worked out by hand. */
	static const struct { uint32_t in; uint32_t out; } hand[] = {
		{ 0x3f800000u, 0x3c00 },  /* 1 */
		{ 0x3f801000u, 0x3c00 },  /* 1 + 2^-11: tie, to even */
		{ 0x3f803000u, 0x3c02 },  /* 1 + 3*2^-11: tie, to even (up) */
		{ 0x477ff000u, 0x7c00 },  /* 65520: tie between max and 2^16 -> inf */
		{ 0x477fefffu, 0x7bff },  /* just below: max */
		{ 0x33000000u, 0x0000 },  /* 2^-25: tie between 0 and 2^-24 -> 0 */
		{ 0x33000001u, 0x0001 },
		{ 0xb3c00000u, 0x8002 },  /* -1.5 * 2^-24: tie -> -2^-23 */
	};
	float x[8];
	uint32_t e[8];
	for (int i = 0; i < 8; i++)
		x[i] = u2f(hand[i].in);
	f16c_expect(x, e, 8);
	for (int i = 0; i < 8; i++)
		if (e[i] != hand[i].out) {
			printf("oracle self-check failed: F16C(0x%08" PRIx32 ") = 0x%04" PRIx32 ", expected 0x%04" PRIx32 "\n",
			       hand[i].in, e[i], hand[i].out);
			return 1;
		}
	add_path_rows("fp16", 4, fp16_rows);
	return run_all(fp16_chunk, "fp16 RNE, all 2^32 fp32 inputs, against F16C vcvtps2ph (NaN -> 0x7e00)");
#else
	printf("SKIP: not an x86 CPU: no F16C oracle\n");
	return 77;
#endif
}

/* --- bf16 against AVX-512 BF16 and MPFR --- */

static int bf16_rows[FMT_SIMD_COUNT];

/* fp32 subnormal (or any finite) x rounded to bf16 by MPFR: the thread's
 * exponent range is bf16's, so mpfr_set_flt rounds to 8 bits with underflow
 * handled and mpfr_subnormalize rounds again onto the subnormal grid (using
 * the ternary value, so no double rounding). */
static uint32_t mpfr_bf16(mpfr_t m8, float x)
{
	int t = mpfr_set_flt(m8, x, MPFR_RNDN);
	t = mpfr_subnormalize(m8, t, MPFR_RNDN);
	(void)t;
	uint32_t u = f2u(mpfr_get_flt(m8, MPFR_RNDN));
	if (u & 0xffffu) {
		fprintf(stderr, "internal: MPFR result 0x%08" PRIx32 " is not a bf16 value\n", u);
		exit(99);
	}
	return u >> 16;
}

#if HAVE_X86
__attribute__((target("avx512f,avx512bf16")))
static void bf16_hw_expect(const float *in, uint32_t *expect, size_t n)
{
	uint16_t h[16];
	for (size_t i = 0; i + 16 <= n; i += 16) {
		__m256bh r = _mm512_cvtneps_pbh(_mm512_loadu_ps(in + i));
		memcpy(h, &r, sizeof h);
		for (int j = 0; j < 16; j++)
			expect[i + (size_t)j] = h[j];
	}
}

static void bf16_chunk(worker *w, uint32_t base)
{
	fill_chunk(w->in, base);
	bf16_hw_expect(w->in, w->expect, CHUNK);
	/* a chunk (2^20 patterns) shares one exponent field: only chunks with
	 * exponent 0 (zeros, subnormals) or 0xff (inf, NaN) need fixing up */
	uint32_t e = (base >> 23) & 0xff;
	if (e == 0 || e == 0xff) {
		for (size_t i = 0; i < CHUNK; i++) {
			uint32_t a = (base + (uint32_t)i) & 0x7fffffffu;
			if (a > 0x7f800000u)
				w->expect[i] = 0x7fc0;
			else if (a != 0 && a < 0x00800000u)
				w->expect[i] = mpfr_bf16(w->m8, w->in[i]);
		}
	}
	check_all_paths(w, FMT_BF16, bf16_rows, CHUNK, "AVX-512 vcvtneps2bf16");
}
#endif

static int test_bf16_avx512(void)
{
#if HAVE_X86
	if (!cpu_has_oracle("avx512bf16")) {
		printf("SKIP: this CPU lacks AVX-512 BF16, the oracle for bf16-avx512\n");
		return 77;
	}
	/* Both oracles on values worked out by hand. */
	static const struct { uint32_t in; uint32_t out; } hand[] = {
		{ 0x3f808000u, 0x3f80 },  /* 1 + 2^-8: tie, to even */
		{ 0x3f818000u, 0x3f82 },  /* 1 + 3*2^-8: tie, up to even */
		{ 0x3f808001u, 0x3f81 },
		{ 0x7f7f8000u, 0x7f80 },  /* tie above max -> inf */
		{ 0x7f7f7fffu, 0x7f7f },
		{ 0x00800000u, 0x0080 },  /* min normal */
		{ 0x00008000u, 0x0000 },  /* 2^-134: tie between 0 and 2^-133 -> 0 (MPFR) */
		{ 0x00008001u, 0x0001 },
		{ 0x00018000u, 0x0002 },  /* 1.5 * 2^-133: tie -> 2^-132 */
		{ 0x80010000u, 0x8001 },  /* -2^-133 exact */
		{ 0x007f8000u, 0x0080 },  /* rounds up to the min normal */
		{ 0x00000001u, 0x0000 },
	};
	mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
	mpfr_set_emin(-132);
	mpfr_set_emax(128);
	mpfr_t m8;
	mpfr_init2(m8, 8);
	int bad = 0;
	float x[16] = { 0 };
	uint32_t e[16];
	for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++)
		x[i] = u2f(hand[i].in);
	bf16_hw_expect(x, e, 16);
	for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
		uint32_t a = hand[i].in & 0x7fffffffu;
		uint32_t got = a != 0 && a < 0x00800000u ? mpfr_bf16(m8, x[i]) : e[i];
		if (got != hand[i].out) {
			printf("oracle self-check failed: bf16(0x%08" PRIx32 ") = 0x%04" PRIx32 ", expected 0x%04" PRIx32 "\n",
			       hand[i].in, got, hand[i].out);
			bad = 1;
		}
	}
	mpfr_clear(m8);
	mpfr_set_emin(emin);
	mpfr_set_emax(emax);
	if (bad)
		return 1;
	add_path_rows("bf16", 4, bf16_rows);
	use_mpfr = true;
	return run_all(bf16_chunk, "bf16 RNE, all 2^32 fp32 inputs, against AVX-512 vcvtneps2bf16 "
	                           "(fp32 subnormals against MPFR, NaN -> 0x7fc0)");
#else
	printf("SKIP: not an x86 CPU: no AVX-512 BF16 oracle\n");
	return 77;
#endif
}

/* --- the binary64 reference --- */

static inline __attribute__((always_inline)) uint32_t ref_encode(const reffmt *r, uint32_t u)
{
	uint32_t sign = (u >> 31) ? r->sign : 0;
	uint32_t a = u & 0x7fffffffu;
	if (a > 0x7f800000u)
		return r->nan;
	if (a == 0x7f800000u)
		return sign | (r->has_inf ? r->inf : r->nan);
	double x = (double)u2f(a);
	uint32_t e32 = a >> 23;
	double y = nearbyint(x * r->scale[e32]) * r->unscale[e32];
	if (y > r->max)
		return sign | (r->has_inf ? r->inf : r->nan);
	return sign | ref_pack(r, y);
}

/* The same rule for n inputs that share one sign and one exponent field e32
 * below 0xff (every chunk of 2^20 patterns does): the scale is a constant
 * and the per-element work is branch-free, which the compiler can vectorise. */
#define REF_SAME_EXP_BODY                                                            \
	const uint32_t *u = (const uint32_t *)(const void *)in;                           \
	const double s = r->scale[e32], us = r->unscale[e32], sub = r->scale[0];          \
	const double minnorm = pow2(r->emin), max = r->max;                               \
	const uint32_t sign = neg ? r->sign : 0;                                          \
	const uint32_t ovf = sign | (r->has_inf ? r->inf : r->nan);                     \
	const uint64_t rebias = (uint64_t)(1023 - r->bias) << r->frac_bits;               \
	const int drop = 52 - r->frac_bits;                                               \
	for (size_t i = 0; i < n; i++) {                                                  \
		float xf;                                                                 \
		uint32_t a = u[i] & 0x7fffffffu;                                          \
		memcpy(&xf, &a, 4);                                                       \
		double y = nearbyint((double)xf * s) * us;                                \
		uint64_t db;                                                              \
		memcpy(&db, &y, 8);                                                       \
		uint32_t nb = (uint32_t)((db >> drop) - rebias);                          \
		uint32_t sb = (uint32_t)(int32_t)(y * sub);                               \
		uint32_t mag = y >= minnorm ? nb : sb;                                    \
		expect[i] = y > max ? ovf : (mag | sign);                                 \
	}

static void ref_same_exp_plain(const reffmt *r, uint32_t e32, bool neg, const float *in,
                               uint32_t *expect, size_t n)
{
	REF_SAME_EXP_BODY
}

#if HAVE_X86
/* nearbyint becomes ROUNDSD/VROUNDPD (current mode = RNE); may vectorise. */
#if defined(__clang__)
__attribute__((target("avx2")))
#else
__attribute__((target("avx2"), optimize("tree-vectorize")))
#endif
static void ref_same_exp_avx2(const reffmt *r, uint32_t e32, bool neg, const float *in,
                              uint32_t *expect, size_t n)
{
	REF_SAME_EXP_BODY
}
#endif

static void (*ref_same_exp)(const reffmt *, uint32_t, bool, const float *, uint32_t *, size_t) =
	ref_same_exp_plain;

/* Expected encodings of n patterns taken from the chunk at base. */
static void ref_expect(const reffmt *r, uint32_t base, const float *in, uint32_t *expect, size_t n)
{
	uint32_t e32 = (base >> 23) & 0xff;
	if (e32 == 0xff) {
		const uint32_t *u = (const uint32_t *)(const void *)in;
		for (size_t i = 0; i < n; i++)
			expect[i] = ref_encode(r, u[i]);
	} else {
		ref_same_exp(r, e32, (base >> 31) != 0, in, expect, n);
	}
}

/* fp8 formats are checked on all 2^32 inputs unless ref_fp8_sparse: then on
 * every 16th pattern plus every pattern whose low 16 bits are within 2 of 0,
 * of 0x8000 or of 0x10000 (the fp8 rounding point lies 20 or more bits down,
 * so these include every pattern whose low 20 bits are a tie or next to one). */
static bool ref_fp8_sparse;

static void reference_chunk(worker *w, uint32_t base)
{
	float *full = w->in, *sparse = w->in_sparse;
	size_t nsparse = 0;
	fill_chunk(full, base);
	if (ref_fp8_sparse)
		nsparse = fill_sparse(sparse, base);
	for (int f = 0; f < NREFS; f++) {
		reffmt *r = &refs[f];
		size_t n = CHUNK;
		w->in = full;
		if (ref_fp8_sparse && r->frac_bits <= 3) {
			w->in = sparse;
			n = nsparse;
		}
		ref_expect(r, base, w->in, w->expect, n);
		check_all_paths(w, r->id, r->rowof, n, "binary64 reference");
	}
	w->in = full;
}

static int test_reference(void)
{
#if HAVE_X86
	if (cpu_has_oracle("avx2"))
		ref_same_exp = ref_same_exp_avx2;
#endif
	/* fp8 on all 2^32 inputs takes about four times as long: opt in */
	const char *full = getenv("MIXPREC_EXHAUSTIVE_FP8_FULL");
	ref_fp8_sparse = !(full && *full && strcmp(full, "0") != 0);
	/* The reference on values worked out by hand. */
	static const struct { int f; uint32_t in; uint32_t out; } hand[] = {
		{ 0, 0x3f801000u, 0x3c00 }, { 0, 0x477ff000u, 0x7c00 }, { 0, 0x33000000u, 0x0000 },
		{ 0, 0x33000001u, 0x0001 }, { 0, 0xb3c00000u, 0x8002 }, { 0, 0x387fe000u, 0x0400 },
		{ 1, 0x3f818000u, 0x3f82 }, { 1, 0x00008000u, 0x0000 }, { 1, 0x00018000u, 0x0002 },
		{ 1, 0x7f7f8000u, 0x7f80 },
		{ 2, 0x43e00000u, 0x7e },   /* 448 = max */
		{ 2, 0x43e80000u, 0x7e },   /* 464: tie between 448 and 480 -> 448 (even) */
		{ 2, 0x43e80001u, 0x7f },   /* above: rounds to 480, overflow -> NaN */
		{ 2, 0xc3e80001u, 0xff },   /* its negative: the NaN with the sign, 1 1111 111 */
		{ 2, 0xc47a0000u, 0xff },   /* -1000 -> 0xff */
		{ 2, 0x3b000000u, 0x01 },   /* 2^-9 = min subnormal */
		{ 2, 0x3a800000u, 0x00 },   /* 2^-10: tie between 0 and 2^-9 -> 0 */
		{ 2, 0x3b400000u, 0x02 },   /* 1.5 * 2^-9: tie -> 2^-8 */
		{ 2, 0xff800000u, 0xff },   /* -inf -> NaN with the sign (PyTorch, ml_dtypes, cuda_fp8.h) */
		{ 2, 0x7f800000u, 0x7f },   /* +inf -> 0x7f */
		{ 2, 0xffc00000u, 0x7f },   /* a NaN input -> the canonical NaN */
		{ 3, 0x47600000u, 0x7b },   /* 57344 = max */
		{ 3, 0x47700000u, 0x7c },   /* 61440: tie between max and 2^16 -> inf */
		{ 3, 0x37800000u, 0x01 },   /* 2^-16 = min subnormal */
		{ 3, 0x37000000u, 0x00 },   /* 2^-17: tie -> 0 */
		{ 3, 0xb7c00000u, 0x82 },   /* -1.5 * 2^-16: tie -> -2^-15 */
	};
	for (int f = 0; f < NREFS; f++)
		ref_init(&refs[f]);
	int bad = 0;
	for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
		float x = u2f(hand[i].in);
		uint32_t e, e2 = ref_encode(&refs[hand[i].f], hand[i].in);
		ref_expect(&refs[hand[i].f], hand[i].in, &x, &e, 1);
		if (e != e2) {
			printf("reference self-check failed: the two forms of the reference disagree on 0x%08" PRIx32 "\n",
			       hand[i].in);
			bad = 1;
		}
		uint32_t want = hand[i].out;
		if (e != want) {
			printf("reference self-check failed: %s(0x%08" PRIx32 ") = 0x%02" PRIx32 ", expected 0x%02" PRIx32 "\n",
			       refs[hand[i].f].name, hand[i].in, e, want);
			bad = 1;
		}
	}
	if (bad)
		return 1;
	for (int f = 0; f < NREFS; f++)
		add_path_rows(refs[f].name, refs[f].frac_bits <= 3 ? 2 : 4, refs[f].rowof);
	char title[256];
	snprintf(title, sizeof title,
	         "RNE against the binary64 reference: fp16 and bf16 on all 2^32 fp32 inputs, fp8 formats on %s",
	         ref_fp8_sparse ? "every 16th input plus those whose low 16 bits are within 2 of 0, 0x8000 or 0x10000 "
	         "(MIXPREC_EXHAUSTIVE_FP8_FULL=1: all)" : "all 2^32 inputs");
	return run_all(reference_chunk, title);
}

/* --- stochastic rounding against the binary64 reference --- */

/* SR of the fp32 pattern u with the random bits rbits, from the definition:
 * y = |x| / (the format's last place at x) is exact in binary64; the result
 * is floor(y) rounded up iff rbits < frac(y) 2^32, so up with probability
 * frac(y) over the 32-bit draws (doc/DESIGN.md's SR, drawn from the stream
 * rng_bits(seed, index)). Beyond max: inf, NaN or (saturate) +-max. */
static uint32_t ref_encode_sr(const reffmt *r, uint32_t u, uint32_t rbits, bool saturate)
{
	uint32_t sign = (u >> 31) ? r->sign : 0;
	uint32_t a = u & 0x7fffffffu;
	if (a > 0x7f800000u)
		return r->nan;
	uint32_t ovf = saturate ? (sign | ref_pack(r, r->max)) : sign | (r->has_inf ? r->inf : r->nan);
	if (a == 0x7f800000u)
		return ovf;
	uint32_t e32 = a >> 23;
	double y = (double)u2f(a) * r->scale[e32], fl = floor(y);
	double q = (fl + ((double)rbits < (y - fl) * 0x1p32 ? 1.0 : 0.0)) * r->unscale[e32];
	return q > r->max ? ovf : (sign | ref_pack(r, q));
}

enum { SR_SEED = 0x5eed };
static int sr_rows[NREFS][2][FMT_SIMD_COUNT];   /* [format][saturate][path] */

static void sr_chunk(worker *w, uint32_t base)
{
	float *full = w->in, *sparse = w->in_sparse;
	fill_chunk(full, base);
	size_t nsparse = ref_fp8_sparse ? fill_sparse(sparse, base) : 0;
	for (int f = 0; f < NREFS; f++) {
		const reffmt *r = &refs[f];
		bool fp8 = r->frac_bits <= 3, thin = ref_fp8_sparse && r->id != FMT_FP16;
		size_t n = thin ? nsparse : CHUNK;
		w->in = thin ? sparse : full;
		const uint32_t *u = (const uint32_t *)(const void *)w->in;
		for (int sat = 0; sat < 2; sat++) {
			if (sat && !fp8)
				continue;   /* saturating fp16 and bf16 take the kernels of the fp8 formats */
			fmt_bulk_opts o = { .fmt = r->id, .mode = FMT_SR, .saturate = sat, .seed = SR_SEED,
			                    .index0 = base };
			for (size_t i = 0; i < n; i++)
				w->expect[i] = ref_encode_sr(r, u[i], rng_bits(SR_SEED, (uint64_t)base + i), sat);
			check_all_paths_opts(w, &o, sr_rows[f][sat], n, "binary64 SR reference");
		}
	}
	w->in = full;
}

static int test_sr_reference(void)
{
	const char *full = getenv("MIXPREC_EXHAUSTIVE_FP8_FULL");
	ref_fp8_sparse = !(full && *full && strcmp(full, "0") != 0);
	/* The SR reference on values worked out by hand: 1 + 2^-12 in fp16 lies a
	 * quarter of the way from 1 to 1 + 2^-10, so it rounds up iff the bits
	 * are below 2^30; 2^-26 is a quarter of fp16's min subnormal 2^-24;
	 * 65520 is half-way from max (65504) to 65536, which overflows. */
	for (int f = 0; f < NREFS; f++)
		ref_init(&refs[f]);
	static const struct { uint32_t in, rbits, out; } hand[] = {
		{ 0x3f800800u, 0x3fffffffu, 0x3c01 }, { 0x3f800800u, 0x40000000u, 0x3c00 },
		{ 0x32800000u, 0x3fffffffu, 0x0001 }, { 0x32800000u, 0x40000000u, 0x0000 },
		{ 0xb2800000u, 0u, 0x8001 }, { 0x477ff000u, 0u, 0x7c00 }, { 0x477fe000u, 0xffffffffu, 0x7bff },
	};
	for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
		uint32_t got = ref_encode_sr(&refs[0], hand[i].in, hand[i].rbits, false);
		if (got != hand[i].out) {
			printf("SR reference self-check failed: fp16(0x%08" PRIx32 ", bits 0x%08" PRIx32 ") = 0x%04" PRIx32
			       ", expected 0x%04" PRIx32 "\n", hand[i].in, hand[i].rbits, got, hand[i].out);
			return 1;
		}
	}
	for (int f = 0; f < NREFS; f++) {
		char name[64];
		snprintf(name, sizeof name, "%s sr", refs[f].name);
		add_path_rows(name, refs[f].frac_bits <= 3 ? 2 : 4, sr_rows[f][0]);
		if (refs[f].frac_bits <= 3) {
			snprintf(name, sizeof name, "%s sr saturating", refs[f].name);
			add_path_rows(name, 2, sr_rows[f][1]);
		}
	}
	char title[256];
	snprintf(title, sizeof title,
	         "SR (seed %d) against the binary64 reference: fp16 on all 2^32 fp32 inputs, bf16 and fp8 on %s",
	         SR_SEED, ref_fp8_sparse ? "the subset of the RNE check (MIXPREC_EXHAUSTIVE_FP8_FULL=1: all)"
	                                 : "all 2^32 inputs");
	return run_all(sr_chunk, title);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 2) {
		fprintf(stderr, "usage: %s fp16-f16c|bf16-avx512|reference|sr-reference\n", argv[0]);
		return 2;
	}
	if (strcmp(argv[1], "fp16-f16c") == 0)
		return test_fp16_f16c();
	if (strcmp(argv[1], "bf16-avx512") == 0)
		return test_bf16_avx512();
	if (strcmp(argv[1], "reference") == 0)
		return test_reference();
	if (strcmp(argv[1], "sr-reference") == 0)
		return test_sr_reference();
	fprintf(stderr, "%s: unknown test '%s'\n", argv[0], argv[1]);
	return 2;
}
