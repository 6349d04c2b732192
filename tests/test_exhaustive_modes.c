/* The bulk fp32 -> format kernels in the modes rto, rnz and sr-equal, on
 * every available path, over fp32 bit patterns (make check's sample of the
 * 2^32, or all of them with MIXPREC_EXHAUSTIVE=full), against the binary64
 * reference of tests/exhaustive_ref.h with each mode's rule written here
 * from its definition: y = |x| / (the format's last place at x) is exact in
 * binary64, fl = floor(y), and the magnitude is fl or fl + 1:
 *
 *   rto       fl + 1 iff y is not an integer and fl is even (truncate, then
 *             set the last bit when inexact); past max: +-max, as a finite
 *             value never rounds to inf under round to odd (CPFloat's
 *             CPFLOAT_RND_OD); inf stays inf.
 *   rnz       fl + 1 iff y - fl > 1/2 (nearest, ties toward zero); past
 *             max: inf, NaN for e4m3, +-max saturating.
 *   sr-equal  fl + 1 iff y is not an integer and the element's 32 random
 *             bits rng_bits(seed, index) are below 2^31; past max: the
 *             overflow result when the bits are below 2^31, +-max when not.
 *
 * fp16, bf16, fp8-e4m3, fp8-e5m2 (the fp8 formats also saturating). Within
 * each sampled chunk of 2^20 patterns the inputs are every 16th pattern
 * plus those within 2 of a multiple of half the format's last place in a
 * normal binade (its ties and their neighbours). Exit 0 when everything
 * agrees, 1 on a mismatch (the first few are printed). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/bulk.h"
#include "fmt/round.h"
#include "util/rng.h"
#include "exhaustive_run.h"
#include "exhaustive_ref.h"

static const uint64_t SEED = 0x5eed0dd;
static const fmt_mode MODES[] = { FMT_RTO, FMT_RNZ, FMT_SR_EQUAL };
#define NMODES ((int)(sizeof MODES / sizeof MODES[0]))

/* rows: [format][mode][saturate][path] */
static int mode_rows[4][NMODES][2][FMT_SIMD_COUNT];

static uint32_t ref_encode_mode(const reffmt *r, fmt_mode m, uint32_t u, uint32_t rbits, bool saturate)
{
	uint32_t sign = (u >> 31) ? r->sign : 0;
	uint32_t a = u & 0x7fffffffu;
	if (a > 0x7f800000u)
		return r->nan;
	uint32_t maxb = sign | ref_pack(r, r->max);
	uint32_t ovf = saturate ? maxb : sign | (r->has_inf ? r->inf : r->nan);
	if (a == 0x7f800000u)
		return ovf;
	uint32_t e32 = a >> 23;
	double y = (double)u2f(a) * r->scale[e32], fl = floor(y);
	bool inexact = y != fl, up;
	switch (m) {
	case FMT_RTO: up = inexact && fmod(fl, 2.0) == 0.0; break;
	case FMT_RNZ: up = y - fl > 0.5; break;
	default:      up = inexact && rbits < 0x80000000u; break;
	}
	double q = (fl + (up ? 1.0 : 0.0)) * r->unscale[e32];
	if (q > r->max)
		return m == FMT_RTO || (m == FMT_SR_EQUAL && rbits >= 0x80000000u) ? maxb : ovf;
	return sign | ref_pack(r, q);
}

/* Every 16th pattern of the chunk at base, and those whose low `drop` bits
 * (the bits a normal result discards) lie within 2 of 0, of half their
 * range or of all of it. */
static size_t fill_near_ties(float *in, uint32_t base, int drop)
{
	uint32_t *u = (uint32_t *)(void *)in;
	uint32_t full = 1u << drop, half = full >> 1;
	size_t n = 0;
	for (uint32_t i = 0; i < CHUNK; i++) {
		uint32_t lo = (base + i) & (full - 1u);
		if ((i & 15) == 0 || lo <= 2 || lo >= full - 2 || (lo >= half - 2 && lo <= half + 2))
			u[n++] = base + i;
	}
	return n;
}

static void modes_chunk(worker *w, uint32_t base)
{
	for (int f = 0; f < NREFS; f++) {
		const reffmt *r = &refs[f];
		size_t n = fill_near_ties(w->in, base, 23 - r->frac_bits);
		const uint32_t *u = (const uint32_t *)(const void *)w->in;
		for (int m = 0; m < NMODES; m++)
			for (int sat = 0; sat < 2; sat++) {
				if (sat && r->frac_bits > 3)
					continue;
				fmt_bulk_opts o = { .fmt = r->id, .mode = MODES[m], .saturate = sat, .seed = SEED,
				                    .index0 = base };
				for (size_t i = 0; i < n; i++)
					w->expect[i] = ref_encode_mode(r, MODES[m], u[i], rng_bits(SEED, (uint64_t)base + i), sat);
				check_all_paths_opts(w, &o, mode_rows[f][m][sat], n, "binary64 reference of the mode");
			}
	}
}

/* The reference on values worked out by hand (fp16: max 65504 = 2047 * 32,
 * 65520 the midpoint to 65536; 1 + 2^-11 the midpoint of 1 and 1 + 2^-10;
 * e4m3: 448 = 0x7e = 14 * 32 is max, and even). */
static int self_check(void)
{
	static const struct { int f; fmt_mode m; uint32_t in, rbits, out; } hand[] = {
		{ 0, FMT_RTO, 0x3f801000u, 0, 0x3c01 },         /* 1 + 2^-11: 1 is even -> 1 + 2^-10 */
		{ 0, FMT_RTO, 0x3f803000u, 0, 0x3c01 },         /* 1 + 3 2^-11: truncates to the odd 1 + 2^-10 */
		{ 0, FMT_RTO, 0x477ff000u, 0, 0x7bff },         /* 65520: max is odd, stays */
		{ 0, FMT_RTO, 0x47800000u, 0, 0x7bff },         /* 65536: past max, never inf */
		{ 0, FMT_RTO, 0x33000000u, 0, 0x0001 },         /* 2^-25: half the min subnormal -> it */
		{ 0, FMT_RTO, 0x7f800000u, 0, 0x7c00 },         /* inf stays inf */
		{ 0, FMT_RNZ, 0x3f801000u, 0, 0x3c00 },         /* the tie goes toward zero */
		{ 0, FMT_RNZ, 0x3f801001u, 0, 0x3c01 },
		{ 0, FMT_RNZ, 0x477ff000u, 0, 0x7bff },         /* the tie max|65536 stays at max */
		{ 0, FMT_RNZ, 0x477ff001u, 0, 0x7c00 },
		{ 0, FMT_SR_EQUAL, 0x3f800001u, 0x7fffffffu, 0x3c01 },   /* 2^-23 above 1: up half the time */
		{ 0, FMT_SR_EQUAL, 0x3f800001u, 0x80000000u, 0x3c00 },
		{ 0, FMT_SR_EQUAL, 0x47800000u, 0x80000000u, 0x7bff },   /* past max: max or inf */
		{ 0, FMT_SR_EQUAL, 0x47800000u, 0x00000000u, 0x7c00 },
		{ 2, FMT_RTO, 0x43e40000u, 0, 0x7e },           /* 456 in e4m3: 448 even -> 480 -> max */
		{ 2, FMT_RNZ, 0x43e80000u, 0, 0x7e },           /* 464, the tie 448|480 -> 448 */
	};
	for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
		uint32_t got = ref_encode_mode(&refs[hand[i].f], hand[i].m, hand[i].in, hand[i].rbits, false);
		if (got != hand[i].out) {
			printf("reference self-check failed: %s %s(0x%08" PRIx32 ", bits 0x%08" PRIx32 ") = 0x%" PRIx32
			       ", expected 0x%" PRIx32 "\n", refs[hand[i].f].name, fmt_mode_name(hand[i].m), hand[i].in,
			       hand[i].rbits, got, hand[i].out);
			return 1;
		}
	}
	return 0;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int f = 0; f < NREFS; f++)
		ref_init(&refs[f]);
	if (self_check())
		return 1;
	for (int f = 0; f < NREFS; f++)
		for (int m = 0; m < NMODES; m++)
			for (int sat = 0; sat < 2; sat++) {
				if (sat && refs[f].frac_bits > 3)
					continue;
				char name[64];
				snprintf(name, sizeof name, "%s %s%s", refs[f].name, fmt_mode_name(MODES[m]),
				         sat ? " saturating" : "");
				add_path_rows(name, refs[f].frac_bits <= 3 ? 2 : 4, mode_rows[f][m][sat]);
			}
	return run_all(modes_chunk, "rto, rnz and sr-equal against the binary64 reference, every 16th input and "
	                            "those next to a tie");
}
