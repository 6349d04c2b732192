#include "train/blockorder.h"

#include <string.h>

#include "train/layers_simd.h"

/* Four lanes of floats at any alignment: a 4x4 tile moves as four loads,
 * eight shuffles and four stores. */
typedef float v4f __attribute__((vector_size(16), aligned(4)));

/* dst[j * dstride + i] = src[i * sstride + j] for i, j < 4. */
static inline __attribute__((always_inline)) void transpose4(const float *src, size_t sstride, float *dst,
                                                             size_t dstride)
{
	v4f a = *(const v4f *)src, b = *(const v4f *)(src + sstride);
	v4f c = *(const v4f *)(src + 2 * sstride), d = *(const v4f *)(src + 3 * sstride);
	v4f t0 = __builtin_shufflevector(a, b, 0, 4, 1, 5), t1 = __builtin_shufflevector(a, b, 2, 6, 3, 7);
	v4f t2 = __builtin_shufflevector(c, d, 0, 4, 1, 5), t3 = __builtin_shufflevector(c, d, 2, 6, 3, 7);
	*(v4f *)dst = __builtin_shufflevector(t0, t2, 0, 1, 4, 5);
	*(v4f *)(dst + dstride) = __builtin_shufflevector(t0, t2, 2, 3, 6, 7);
	*(v4f *)(dst + 2 * dstride) = __builtin_shufflevector(t1, t3, 0, 1, 4, 5);
	*(v4f *)(dst + 3 * dstride) = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
}

#if defined(__x86_64__)
/* Eight lanes: an 8x8 tile as eight loads, 24 shuffles (pairs of rows
 * interleaved, then pairs of pairs, then the 128-bit halves) and eight
 * stores; where AVX2 is enabled (the instance below). */
typedef float v8f __attribute__((vector_size(32), aligned(4)));

static inline __attribute__((always_inline)) void transpose8(const float *src, size_t sstride, float *dst,
                                                             size_t dstride)
{
	v8f r[8], t[8], u[8];   /* in registers: every loop unrolled */
	_Pragma("GCC unroll 8") for (int i = 0; i < 8; i++)
		r[i] = *(const v8f *)(src + (size_t)i * sstride);
	_Pragma("GCC unroll 4") for (int i = 0; i < 8; i += 2) {
		t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
		t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
	}
	/* u[0..3]: rows 0-3 of columns (0, 4), (1, 5), (2, 6), (3, 7); u[4..7] rows 4-7 */
	_Pragma("GCC unroll 2") for (int q = 0; q < 8; q += 4) {
		u[q] = __builtin_shufflevector(t[q], t[q + 2], 0, 1, 8, 9, 4, 5, 12, 13);
		u[q + 1] = __builtin_shufflevector(t[q], t[q + 2], 2, 3, 10, 11, 6, 7, 14, 15);
		u[q + 2] = __builtin_shufflevector(t[q + 1], t[q + 3], 0, 1, 8, 9, 4, 5, 12, 13);
		u[q + 3] = __builtin_shufflevector(t[q + 1], t[q + 3], 2, 3, 10, 11, 6, 7, 14, 15);
	}
	_Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
		*(v8f *)(dst + (size_t)j * dstride) = __builtin_shufflevector(u[j], u[j + 4], 0, 1, 2, 3, 8, 9, 10, 11);
		*(v8f *)(dst + (size_t)(j + 4) * dstride) =
			__builtin_shufflevector(u[j], u[j + 4], 4, 5, 6, 7, 12, 13, 14, 15);
	}
}
#endif

/* block_reorder_strip's body in T x T tiles (T 4 or 8) where they fit and
 * element by element at the edges; inlined into one instance per path. */
static inline __attribute__((always_inline)) void reorder_strip(const float *src, float *xs, size_t h, size_t cols,
                                                                size_t br, float *blk, bool back, size_t T)
{
	size_t hT = h / T * T, cT = cols / T * T;
	for (size_t c = 0; c < cT; c += T)
		for (size_t i = 0; i < hT; i += T) {
			const float *from = back ? blk + c * br + i : src + i * cols + c;
			float *to = back ? xs + i * cols + c : blk + c * br + i;
			size_t fs = back ? br : cols, ts = back ? cols : br;
#if defined(__x86_64__)
			if (T == 8) {
				transpose8(from, fs, to, ts);
				continue;
			}
#endif
			transpose4(from, fs, to, ts);
		}
	for (size_t c = 0; c < cols; c++) {
		float *d = blk + c * br;
		for (size_t i = c < cT ? hT : 0; i < h; i++) {
			if (back)
				xs[i * cols + c] = d[i];
			else
				d[i] = src[i * cols + c];
		}
		if (!back)
			for (size_t i = h; i < br; i++)
				d[i] = 0.0f;
	}
}

static void reorder_strip_portable(const float *src, float *xs, size_t h, size_t cols, size_t br, float *blk,
                                   bool back)
{
	reorder_strip(src, xs, h, cols, br, blk, back, 4);
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) static void reorder_strip_avx2(const float *src, float *xs, size_t h, size_t cols,
                                                              size_t br, float *blk, bool back)
{
	reorder_strip(src, xs, h, cols, br, blk, back, 8);
}
#endif

void block_reorder_strip(const float *src, float *xs, size_t h, size_t cols, size_t br, float *blk, bool back)
{
#if defined(__x86_64__)
	if (layers_path_best() != LAYERS_PORTABLE) {
		reorder_strip_avx2(src, xs, h, cols, br, blk, back);
		return;
	}
#endif
	reorder_strip_portable(src, xs, h, cols, br, blk, back);
}

/* One row of w <= bc floats of a block: 16 (the nvfp4 recipe's 16 x 16
 * weight blocks) as one fixed copy, others element by element (a short
 * row: no call). */
static inline void row_copy(float *dst, const float *src, size_t w, size_t bc)
{
	if (w == 16 && bc == 16) {
		memcpy(dst, src, 16 * sizeof *dst);
		return;
	}
	for (size_t j = 0; j < w; j++)
		dst[j] = src[j];
}

void block_reorder(const float *src, float *x, size_t rows, size_t cols, size_t br, size_t bc, float *buf, bool back)
{
	size_t nr = (rows + br - 1) / br, nc = (cols + bc - 1) / bc;
	if (bc == 1) {
		/* blocks down the columns: each strip of br rows transposed, so
		 * that the block side is written (or read) in order and the br
		 * rows' lines stay in the cache */
		for (size_t tr = 0; tr < nr; tr++) {
			size_t r0 = tr * br, h = rows - r0 < br ? rows - r0 : br;
			block_reorder_strip(src + r0 * cols, x + r0 * cols, h, cols, br, buf + tr * nc * br, back);
		}
		return;
	}
	for (size_t tr = 0; tr < nr; tr++)
		for (size_t tc = 0; tc < nc; tc++) {
			float *blk = buf + (tr * nc + tc) * br * bc;
			for (size_t i = 0; i < br; i++) {
				size_t r = tr * br + i, c0 = tc * bc;
				size_t w = r < rows ? (cols - c0 < bc ? cols - c0 : bc) : 0;
				float *b = blk + i * bc;
				if (back) {
					row_copy(x + r * cols + c0, b, w, bc);
				} else {
					row_copy(b, src + r * cols + c0, w, bc);
					for (size_t j = w; j < bc; j++)
						b[j] = 0.0f;
				}
			}
		}
}
