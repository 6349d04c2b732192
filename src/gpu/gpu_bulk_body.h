/* The bulk rounding kernels' per-thread work (encode and quantize), in the
 * common subset of C11 and CUDA C++: gpu.cu runs each body as one CUDA
 * thread of a launch, with the format, the mode and the element size as
 * template constants; tests/test_gpu_bulk.c runs the same bodies for every
 * thread of a launch in a loop on the CPU and compares the bits with
 * fmt_bulk_*, so the launch arithmetic (chunks, vector groups, the leftover
 * elements, SR indices) is checked on machines without a GPU.
 *
 * A call is split into launches ("chunks") so that inside one:
 * - no SR index crosses a multiple of 2^32: the stream's key
 *   (rng_key_for, two 64-bit mixes) is computed once on the host and each
 *   element's bits cost one 32-bit hash of its 32-bit index;
 * - at most GPU_BULK_CHUNK_MAX elements, so every index in the kernel is
 *   32-bit.
 * A chunk's pointers start at `base`, the chunk's first element rounded down
 * to a multiple of GPU_BULK_VEC; each thread handles groups of GPU_BULK_VEC
 * elements (two 16-byte loads; one or two vector stores) that lie wholly in
 * the chunk, grid-stride, and the up to 2 (GPU_BULK_VEC - 1) elements at the
 * chunk's two ends one at a time. */
#ifndef MIXPREC_GPU_GPU_BULK_BODY_H
#define MIXPREC_GPU_GPU_BULK_BODY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fmt/bulk_impl.h"
#include "util/hd.h"
#include "util/rng.h"

enum { GPU_BULK_VEC = 8 };
#define GPU_BULK_CHUNK_MAX ((size_t)1 << 31)

typedef struct {
	size_t lo, hi;        /* the chunk: elements [lo, hi) of the caller's arrays */
	size_t base;          /* lo rounded down to a multiple of GPU_BULK_VEC */
	uint32_t first, end;  /* lo - base, hi - base: the launch's elements */
	uint32_t idx_base;    /* the low 32 bits of the SR index of element base (may wrap below first) */
	rng_key key;          /* the stream's key for every index of the chunk */
} gpu_bulk_chunk;

/* The chunk that starts at element lo of n (lo < n), SR indices from
 * index0 (as fmt_bulk_opts'). With sr = 0 only the size limit splits. */
static inline MP_HD gpu_bulk_chunk gpu_bulk_chunk_at(uint64_t seed, uint64_t index0, int sr, size_t lo, size_t n)
{
	gpu_bulk_chunk c;
	uint64_t i0 = index0 + lo;
	size_t len = n - lo < GPU_BULK_CHUNK_MAX ? n - lo : GPU_BULK_CHUNK_MAX;
	if (sr) {
		uint64_t room = ((uint64_t)1 << 32) - (uint64_t)(uint32_t)i0;   /* to the next multiple of 2^32 */
		if ((uint64_t)len > room)
			len = (size_t)room;
	}
	c.lo = lo;
	c.hi = lo + len;
	c.base = lo / GPU_BULK_VEC * GPU_BULK_VEC;
	c.first = (uint32_t)(lo - c.base);
	c.end = (uint32_t)(c.hi - c.base);
	c.idx_base = (uint32_t)(i0 - c.first);
	c.key = rng_key_for(seed, i0);
	return c;
}

/* The launch's vector groups: [g0, g1), each wholly inside [first, end). */
static inline MP_HD uint32_t gpu_bulk_g0(const gpu_bulk_chunk *c, int vec)
{
	return vec ? (c->first + GPU_BULK_VEC - 1) / GPU_BULK_VEC : 0;
}

static inline MP_HD uint32_t gpu_bulk_g1(const gpu_bulk_chunk *c, int vec)
{
	uint32_t g0 = gpu_bulk_g0(c, vec), g1 = vec ? c->end / GPU_BULK_VEC : 0;
	return g1 > g0 ? g1 : g0;
}

/* The elements left to single steps: [first, g0 VEC) and [g1 VEC, end)
 * (all of them when not vec); k over their count, in order. */
static inline MP_HD uint32_t gpu_bulk_single_count(const gpu_bulk_chunk *c, int vec)
{
	uint32_t g0 = gpu_bulk_g0(c, vec), g1 = gpu_bulk_g1(c, vec);
	if (g1 == g0)
		return c->end - c->first;
	return (g0 * GPU_BULK_VEC - c->first) + (c->end - g1 * GPU_BULK_VEC);
}

static inline MP_HD uint32_t gpu_bulk_single_elem(const gpu_bulk_chunk *c, int vec, uint32_t k)
{
	uint32_t g0 = gpu_bulk_g0(c, vec), g1 = gpu_bulk_g1(c, vec);
	if (g1 == g0)
		return c->first + k;
	uint32_t head = g0 * GPU_BULK_VEC - c->first;
	return k < head ? c->first + k : g1 * GPU_BULK_VEC + (k - head);
}

/* Eight floats of group g (16-byte aligned when vec). */
static inline MP_HD void gpu_bulk_load8(const float *in, uint32_t g, float v[GPU_BULK_VEC])
{
#if defined(__CUDA_ARCH__)
	const float4 *p = reinterpret_cast<const float4 *>(in) + 2 * (size_t)g;
	float4 a = p[0], b = p[1];
	v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
#else
	memcpy(v, in + (size_t)g * GPU_BULK_VEC, GPU_BULK_VEC * sizeof(float));
#endif
}

static inline MP_HD void gpu_bulk_store8f(float *out, uint32_t g, const float v[GPU_BULK_VEC])
{
#if defined(__CUDA_ARCH__)
	float4 *p = reinterpret_cast<float4 *>(out) + 2 * (size_t)g;
	p[0] = make_float4(v[0], v[1], v[2], v[3]);
	p[1] = make_float4(v[4], v[5], v[6], v[7]);
#else
	memcpy(out + (size_t)g * GPU_BULK_VEC, v, GPU_BULK_VEC * sizeof(float));
#endif
}

/* Eight encoded elements of es bytes as little-endian words: 2 (es 1: one
 * 8-byte store), 4 (es 2: one 16-byte store) or 8 (es 4: two). */
static inline MP_HD void gpu_bulk_store8(void *out, size_t es, uint32_t g, const uint32_t e[GPU_BULK_VEC])
{
	uint32_t w[GPU_BULK_VEC];
	size_t nw = es * GPU_BULK_VEC / 4;
	for (size_t k = 0; k < nw; k++) {
		if (es == 1)
			w[k] = (e[4 * k] & 0xffu) | (e[4 * k + 1] & 0xffu) << 8 | (e[4 * k + 2] & 0xffu) << 16 |
			       e[4 * k + 3] << 24;
		else if (es == 2)
			w[k] = (e[2 * k] & 0xffffu) | e[2 * k + 1] << 16;
		else
			w[k] = e[k];
	}
#if defined(__CUDA_ARCH__)
	if (es == 1) {
		reinterpret_cast<uint2 *>(out)[g] = make_uint2(w[0], w[1]);
	} else if (es == 2) {
		reinterpret_cast<uint4 *>(out)[g] = make_uint4(w[0], w[1], w[2], w[3]);
	} else {
		uint4 *p = reinterpret_cast<uint4 *>(out) + 2 * (size_t)g;
		p[0] = make_uint4(w[0], w[1], w[2], w[3]);
		p[1] = make_uint4(w[4], w[5], w[6], w[7]);
	}
#else
	memcpy((char *)out + (size_t)g * GPU_BULK_VEC * es, w, nw * 4);
#endif
}

static inline MP_HD void gpu_bulk_store1(void *out, size_t es, uint32_t i, uint32_t v)
{
	if (es == 1)
		((uint8_t *)out)[i] = (uint8_t)v;
	else if (es == 2)
		((uint16_t *)out)[i] = (uint16_t)v;
	else
		((uint32_t *)out)[i] = v;
}

/* One element: fp32 targets copy (bulk_fp32_one), the others round with
 * the chunk's SR bits for element i when sr. */
static inline MP_HD uint32_t gpu_bulk_encode_elem(const bulk_params *p, int fp32, int sr, int saturate,
                                                  const gpu_bulk_chunk *c, uint32_t i, float x)
{
	if (fp32)
		return bulk_fp32_one(x, saturate);
	return bulk_encode1(p, bulk_f2u(x), sr ? rng_bits_keyed(c->key, c->idx_base + i) : 0u);
}

/* Thread tid of nthreads: out and in start at the chunk's base; p->sr and
 * p->fmt must agree with sr and fmt, which a caller passes as constants. */
static inline MP_HD void gpu_bulk_encode_thread(uint32_t tid, uint32_t nthreads, bulk_params p, fmt_id fmt, int sr,
                                                int saturate, size_t es, const gpu_bulk_chunk *c, void *out,
                                                const float *in, int vec)
{
	int fp32 = fmt == FMT_FP32;
	p.fmt = fmt;
	p.sr = sr;
	uint32_t g1 = gpu_bulk_g1(c, vec);
	for (uint32_t g = gpu_bulk_g0(c, vec) + tid; g < g1; g += nthreads) {
		float v[GPU_BULK_VEC];
		uint32_t e[GPU_BULK_VEC];
		gpu_bulk_load8(in, g, v);
		for (uint32_t k = 0; k < GPU_BULK_VEC; k++)
			e[k] = gpu_bulk_encode_elem(&p, fp32, sr, saturate, c, g * GPU_BULK_VEC + k, v[k]);
		gpu_bulk_store8(out, es, g, e);
	}
	uint32_t ns = gpu_bulk_single_count(c, vec);
	for (uint32_t k = tid; k < ns; k += nthreads) {
		uint32_t i = gpu_bulk_single_elem(c, vec, k);
		gpu_bulk_store1(out, es, i, gpu_bulk_encode_elem(&p, fp32, sr, saturate, c, i, in[i]));
	}
}

static inline MP_HD float gpu_bulk_quantize_elem(const bulk_params *p, int fp32, int sr, int saturate,
                                                 const gpu_bulk_chunk *c, uint32_t i, float x)
{
	if (fp32)
		return bulk_u2f(bulk_fp32_one(x, saturate));
	return bulk_quantize1(p, x, sr ? rng_bits_keyed(c->key, c->idx_base + i) : 0u);
}

/* In place on x (starting at the chunk's base). */
static inline MP_HD void gpu_bulk_quantize_thread(uint32_t tid, uint32_t nthreads, bulk_params p, fmt_id fmt, int sr,
                                                  int saturate, const gpu_bulk_chunk *c, float *x, int vec)
{
	int fp32 = fmt == FMT_FP32;
	p.fmt = fmt;
	p.sr = sr;
	uint32_t g1 = gpu_bulk_g1(c, vec);
	for (uint32_t g = gpu_bulk_g0(c, vec) + tid; g < g1; g += nthreads) {
		float v[GPU_BULK_VEC];
		gpu_bulk_load8(x, g, v);
		for (uint32_t k = 0; k < GPU_BULK_VEC; k++)
			v[k] = gpu_bulk_quantize_elem(&p, fp32, sr, saturate, c, g * GPU_BULK_VEC + k, v[k]);
		gpu_bulk_store8f(x, g, v);
	}
	uint32_t ns = gpu_bulk_single_count(c, vec);
	for (uint32_t k = tid; k < ns; k += nthreads) {
		uint32_t i = gpu_bulk_single_elem(c, vec, k);
		x[i] = gpu_bulk_quantize_elem(&p, fp32, sr, saturate, c, i, x[i]);
	}
}

#endif
