/* The GPU's bulk rounding launches run on the CPU: src/gpu/gpu_bulk_body.h's
 * chunks and thread bodies, which gpu.cu launches one thread per (tid,
 * nthreads), called here for every thread of each chunk's launch in a loop
 * (last thread first, so nothing may depend on the order threads run in),
 * against the CPU's fmt_bulk_encode and fmt_bulk_quantize bit for bit.
 * The CPU kernels are the oracle (test_bulk, test_round_mpfr and
 * test_exhaustive check them against MPFR and hand-derived values); the
 * fp8-e4m3 overflow cases are also checked against hand-derived patterns.
 *
 * Cases: every format, RNE and SR, with and without saturation; SR across
 * the 2^32 index boundary (the stream's key changes between two chunks, the
 * second starting in the middle of a vector group); arrays off the 16-byte
 * alignment (every element then single); lengths below one vector group;
 * several grid sizes. The chunk arithmetic itself is checked for calls of
 * up to 2^34 elements, which no array here holds. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/bulk.h"
#include "gpu/gpu_bulk_body.h"
#include "testutil.h"
#include "util/rng.h"

static int aligned(const void *p, size_t a)
{
	return ((uintptr_t)p & (a - 1)) == 0;
}

static bulk_params params_for(const fmt_bulk_opts *o)
{
	bulk_params p;
	memset(&p, 0, sizeof p);
	if (o->fmt != FMT_FP32)
		bulk_params_init(&p, o);
	return p;
}

/* gpu.cu's gpu_bulk_encode: one launch of nthreads per chunk; fp32 ignores SR. */
static void emulate_encode(const fmt_bulk_opts *o, void *out, const float *in, size_t n, uint32_t nthreads)
{
	bulk_params p = params_for(o);
	size_t es = fmt_bulk_elem_size(o->fmt);
	int sr = o->fmt != FMT_FP32 && o->mode == FMT_SR;
	int vec = aligned(in, 16) && aligned(out, es == 1 ? 8 : 16);
	for (size_t lo = 0; lo < n;) {
		gpu_bulk_chunk c = gpu_bulk_chunk_at(o->seed, o->index0, sr, lo, n);
		for (uint32_t t = nthreads; t-- > 0;)
			gpu_bulk_encode_thread(t, nthreads, p, o->fmt, sr, o->saturate, es, &c, (char *)out + c.base * es,
			                       in + c.base, vec);
		lo = c.hi;
	}
}

static void emulate_quantize(const fmt_bulk_opts *o, float *x, size_t n, uint32_t nthreads)
{
	bulk_params p = params_for(o);
	int sr = o->fmt != FMT_FP32 && o->mode == FMT_SR;
	int vec = aligned(x, 16);
	for (size_t lo = 0; lo < n;) {
		gpu_bulk_chunk c = gpu_bulk_chunk_at(o->seed, o->index0, sr, lo, n);
		for (uint32_t t = nthreads; t-- > 0;)
			gpu_bulk_quantize_thread(t, nthreads, p, o->fmt, sr, o->saturate, &c, x + c.base, vec);
		lo = c.hi;
	}
}

/* Every pattern of the 8-bit formats and of fp16 as fp32 values with their
 * fp32 neighbours, specials, and random patterns: N_IN values. */
enum { N_IN = 300000 };

static float *inputs(void)
{
	float *v = malloc(N_IN * sizeof *v);
	ck_assert_ptr_nonnull(v);
	size_t k = 0;
	static const fmt_id narrow[] = { FMT_E4M3, FMT_E5M2, FMT_FP16 };
	for (size_t f = 0; f < 3; f++) {
		size_t es = fmt_bulk_elem_size(narrow[f]);
		uint32_t count = es == 1 ? 256 : 65536;
		for (uint32_t b = 0; b < count; b++) {
			float x;
			ck_assert_int_eq(fmt_bulk_decode(FMT_SIMD_PORTABLE, narrow[f], &x, &b, 1), MP_OK);   /* little-endian */
			uint32_t u;
			memcpy(&u, &x, 4);
			uint32_t nb[3] = { u, u + 1, u - 1 };
			for (int j = 0; j < 3; j++)
				memcpy(&v[k++], &nb[j], 4);
		}
	}
	static const uint32_t specials[] = { 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u, 0, 0x80000000u,
		                             0x447a0000u, 0xc47a0000u, 0x43e80001u, 0xc3e80001u, 0x477fe000u, 0xc77ff000u };
	for (size_t j = 0; j < sizeof specials / sizeof specials[0]; j++)
		memcpy(&v[k++], &specials[j], 4);
	for (size_t i = 0; k < N_IN; i++) {
		uint32_t r = rng_bits(77, i);
		memcpy(&v[k++], &r, 4);
	}
	return v;
}

static void expect_same(const char *what, const fmt_bulk_opts *o, const void *got, const void *ref, size_t n,
                        size_t es)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t a = 0, b = 0;
		memcpy(&a, (const char *)got + i * es, es);
		memcpy(&b, (const char *)ref + i * es, es);
		if (a != b)   /* (a passing ck_assert costs a write in Check's fork mode) */
			ck_abort_msg("%s %s %s%s index0 %llu: element %zu: GPU body 0x%x, CPU 0x%x", what,
		              fmt_get(o->fmt)->name, o->mode == FMT_SR ? "sr" : "rne", o->saturate ? " saturate" : "",
		              (unsigned long long)o->index0, i, (unsigned)a, (unsigned)b);
	}
}

/* One call both ways: in + shift, n elements, encode then quantize. */
static void check_call(const float *in0, size_t shift, size_t n, const fmt_bulk_opts *o, uint32_t nthreads)
{
	size_t es = fmt_bulk_elem_size(o->fmt);
	/* the shifted arrays keep the shift of the input (as test_gpu's) */
	char *got = calloc(n + shift + 8, 4), *ref = calloc(n + shift + 8, 4);
	float *x = calloc(n + shift + 8, 4), *xr = calloc(n + shift + 8, 4);
	ck_assert(got && ref && x && xr);
	const float *in = in0 + shift;
	emulate_encode(o, got + shift * es, in, n, nthreads);
	ck_assert_int_eq(fmt_bulk_encode(FMT_SIMD_PORTABLE, o, ref + shift * es, in, n), MP_OK);
	expect_same("encode", o, got + shift * es, ref + shift * es, n, es);
	memcpy(x + shift, in, n * 4);
	memcpy(xr + shift, in, n * 4);
	emulate_quantize(o, x + shift, n, nthreads);
	ck_assert_int_eq(fmt_bulk_quantize(FMT_SIMD_PORTABLE, o, xr + shift, n), MP_OK);
	expect_same("quantize", o, x + shift, xr + shift, n, 4);
	free(got);
	free(ref);
	free(x);
	free(xr);
}

START_TEST(bits_match_cpu)
{
	float *in = inputs();
	/* the GPU layer refuses the formats below 8 bits (gpu.cu: fmt_is_kernel) */
	for (int f = 0; f < FMT_COUNT; f++)
		for (int m = 0; m < 2 && fmt_is_kernel((fmt_id)f); m++)
			for (int sat = 0; sat < 2; sat++) {
				fmt_bulk_opts o = { .fmt = (fmt_id)f, .mode = m ? FMT_SR : FMT_RNE, .saturate = sat,
					            .seed = 12345 };
				check_call(in, 0, N_IN - 8, &o, 3 * 256);
				o.index0 = ((uint64_t)1 << 32) - 100003;   /* the key changes at element 100003 */
				check_call(in, 0, 110001, &o, 1000);
				o.index0 = ((uint64_t)7 << 32) - 5;         /* ... at element 5, inside the first group */
				check_call(in, 0, 40, &o, 3);
				o.index0 = 5;
				check_call(in, 1, 20003, &o, 256);          /* unaligned: all single */
				check_call(in, 3, 1001, &o, 64);
				for (size_t n = 1; n <= 17; n++)            /* below and around one group */
					check_call(in, 0, n, &o, 2);
			}
	free(in);
}
END_TEST

/* fp8-e4m3 has no inf: a value past 464 (the midpoint above 448) or an
 * infinity becomes the NaN with the value's sign, 0x7f or 0xff; a NaN input
 * the positive NaN 0x7f; saturated, +-448 (0x7e, 0xfe). Hand-derived from
 * the format (S.1111.111 is the NaN; 448 is 1.75 * 2^8, S.1111.110). */
START_TEST(e4m3_overflow_hand_values)
{
	static const struct {
		uint32_t in;
		int sat, rne_only;   /* between 448 and 512 SR may round either way */
		uint8_t out;
	} cases[] = {
		{ 0x447a0000u, 0, 0, 0x7f }, { 0xc47a0000u, 0, 0, 0xff },   /* +-1000 */
		{ 0x7f800000u, 0, 0, 0x7f }, { 0xff800000u, 0, 0, 0xff },   /* +-inf */
		{ 0xc3e80001u, 0, 1, 0xff }, { 0xc3e80000u, 0, 1, 0xfe },   /* just past -464; -464 ties to -448 */
		{ 0x7fc00000u, 0, 0, 0x7f }, { 0xffc00000u, 0, 0, 0x7f },   /* NaNs */
		{ 0xc47a0000u, 1, 0, 0xfe }, { 0xff800000u, 1, 0, 0xfe }, { 0x7f800000u, 1, 0, 0x7e },
	};
	enum { NC = sizeof cases / sizeof cases[0] };
	float in[16];
	for (int m = 0; m < 2; m++)
		for (size_t i = 0; i < NC; i++) {
			if (m && cases[i].rne_only)
				continue;
			/* the value in every position of a vector group and in the singles after it */
			for (size_t j = 0; j < 16; j++)
				memcpy(&in[j], &cases[i].in, 4);
			fmt_bulk_opts o = { .fmt = FMT_E4M3, .mode = m ? FMT_SR : FMT_RNE, .saturate = cases[i].sat,
				            .seed = 3 };
			_Alignas(16) float a16[16];
			_Alignas(16) uint8_t out[16];
			memcpy(a16, in, sizeof a16);
			emulate_encode(&o, out, a16, 13, 5);
			for (size_t j = 0; j < 13; j++)
				ck_assert_msg(out[j] == cases[i].out, "e4m3 %s of 0x%08x%s: element %zu is 0x%02x, not 0x%02x",
				              m ? "sr" : "rne", (unsigned)cases[i].in, cases[i].sat ? " saturated" : "", j,
				              out[j], cases[i].out);
		}
}
END_TEST

/* The chunks of a call cover it in order, each within one 2^32 block of SR
 * indices and at most 2^31 elements, with base the first element rounded
 * down to a multiple of GPU_BULK_VEC. */
static size_t check_chunks(uint64_t index0, int sr, size_t n)
{
	size_t lo = 0, count = 0;
	while (lo < n) {
		gpu_bulk_chunk c = gpu_bulk_chunk_at(9, index0, sr, lo, n);
		ck_assert_uint_eq(c.lo, lo);
		ck_assert(c.hi > c.lo && c.hi <= n && c.hi - c.lo <= GPU_BULK_CHUNK_MAX);
		ck_assert_uint_eq(c.base % GPU_BULK_VEC, 0);
		ck_assert(c.base <= c.lo && c.lo - c.base < GPU_BULK_VEC);
		ck_assert_uint_eq(c.first, c.lo - c.base);
		ck_assert_uint_eq(c.end, c.hi - c.base);
		if (sr) {
			ck_assert_uint_eq((index0 + c.lo) >> 32, (index0 + c.hi - 1) >> 32);
			/* the first and last elements' bits from the chunk's key are rng_bits' */
			ck_assert_uint_eq(rng_bits_keyed(c.key, c.idx_base + c.first), rng_bits(9, index0 + c.lo));
			ck_assert_uint_eq(rng_bits_keyed(c.key, c.idx_base + c.end - 1), rng_bits(9, index0 + c.hi - 1));
		}
		lo = c.hi;
		count++;
	}
	return count;
}

START_TEST(chunks)
{
	ck_assert_uint_eq(check_chunks(0, 1, 1000), 1);
	ck_assert_uint_eq(check_chunks(((uint64_t)1 << 32) - 100003, 1, 200001), 2);
	ck_assert_uint_eq(check_chunks(((uint64_t)1 << 32) - 100003, 0, 200001), 1);
	ck_assert_uint_eq(check_chunks(0, 0, ((size_t)1 << 31) + 20), 2);
	/* 2^34 elements from index 5: four key changes, and each full 2^32 block
	 * in two by the 2^31 limit: 2 + 2 + 2 + 2 + 1 */
	ck_assert_uint_eq(check_chunks(5, 1, (size_t)1 << 34), 9);
	ck_assert_uint_eq(check_chunks(UINT64_MAX - 2, 1, 10), 2);   /* the index wraps past 2^64 as the CPU's */
}
END_TEST

int main(void)
{
	bulk_tables_init();
	Suite *s = suite_create("gpu_bulk");
	TCase *tc = tcase_create("bodies");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, chunks);
	tcase_add_test(tc, e4m3_overflow_hand_values);
	tcase_add_test(tc, bits_match_cpu);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
