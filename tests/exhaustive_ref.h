/* The binary64 reference of tests/test_exhaustive.c and
 * tests/test_exhaustive_modes.c: the formats written here from their
 * definitions (not taken from the library), the per-exponent scales that
 * make a format's last place 1, and the packing of a value on the grid
 * into its bits. */
#ifndef MIXPREC_TESTS_EXHAUSTIVE_REF_H
#define MIXPREC_TESTS_EXHAUSTIVE_REF_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "exhaustive_run.h"
#include "fmt/format.h"

typedef struct {
	const char *name;
	fmt_id id;
	int frac_bits, emin, bias;
	double max;
	bool has_inf;
	uint32_t sign, inf, nan;           /* overflow without inf: sign | nan (e4m3: 0xff for -1000) */
	double scale[256], unscale[256];   /* per fp32 biased exponent: 2^-e and 2^e */
	int rowof[FMT_SIMD_COUNT];
} reffmt;

/* Written here from the formats' definitions, not taken from the library. */
static reffmt refs[] = {
	{ .name = "fp16", .id = FMT_FP16, .frac_bits = 10, .emin = -14, .bias = 15, .max = 65504.0,
	  .has_inf = true, .sign = 0x8000, .inf = 0x7c00, .nan = 0x7e00 },
	{ .name = "bf16", .id = FMT_BF16, .frac_bits = 7, .emin = -126, .bias = 127,
	  .max = 0x1.fep127, .has_inf = true, .sign = 0x8000, .inf = 0x7f80, .nan = 0x7fc0 },
	{ .name = "fp8-e4m3", .id = FMT_E4M3, .frac_bits = 3, .emin = -6, .bias = 7, .max = 448.0,
	  .has_inf = false, .sign = 0x80, .inf = 0x7f, .nan = 0x7f },
	{ .name = "fp8-e5m2", .id = FMT_E5M2, .frac_bits = 2, .emin = -14, .bias = 15, .max = 57344.0,
	  .has_inf = true, .sign = 0x80, .inf = 0x7c, .nan = 0x7e },
};
#define NREFS ((int)(sizeof refs / sizeof refs[0]))

/* 2^k as a binary64 built from its bits (normal range only). */
static double pow2(int k)
{
	uint64_t b = (uint64_t)(k + 1023) << 52;
	double d;
	memcpy(&d, &b, 8);
	return d;
}

static void ref_init(reffmt *r)
{
	for (int e32 = 0; e32 < 256; e32++) {
		/* floor(log2|x|) for a finite fp32 x with this exponent field; for
		 * fp32 subnormals it is below -126 <= emin of every format here */
		int fl = e32 == 0 ? -127 : e32 - 127;
		int e = (fl > r->emin ? fl : r->emin) - r->frac_bits;
		r->scale[e32] = pow2(-e);
		r->unscale[e32] = pow2(e);
	}
}

/* Encodes y (0 <= y <= max, on the format's grid). */
static inline __attribute__((always_inline)) uint32_t ref_pack(const reffmt *r, double y)
{
	uint64_t db;
	memcpy(&db, &y, 8);
	int e = (int)(db >> 52) - 1023;
	if (y == 0.0)
		return 0;
	if (e < r->emin)   /* subnormal: an integer number of min subnormals */
		return (uint32_t)(y * r->scale[0]);
	uint32_t frac = (uint32_t)(db >> (52 - r->frac_bits)) & ((1u << r->frac_bits) - 1u);
	return ((uint32_t)(e + r->bias) << r->frac_bits) | frac;
}

/* Every 16th pattern of the chunk at base plus every pattern whose low 16
 * bits are within 2 of 0, of 0x8000 or of 0x10000 (the rounding point of
 * bf16 and the fp8 formats lies 16 or more bits down, so these include
 * every pattern whose low 16 bits are a tie or next to one); returns the
 * count written to in. */
static inline size_t fill_sparse(float *in, uint32_t base)
{
	uint32_t *u = (uint32_t *)(void *)in;
	size_t n = 0;
	for (uint32_t i = 0; i < CHUNK; i++) {
		uint32_t lo = (base + i) & 0xffffu;
		if ((i & 15) == 0 || lo <= 2 || lo >= 0xfffe || (lo >= 0x7ffe && lo <= 0x8002))
			u[n++] = base + i;
	}
	return n;
}

#endif
