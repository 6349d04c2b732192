/* The block order (train/blockorder.h) against its definition, element by
 * element: every bit pattern (NaN payloads, -0) where it belongs, zeros in
 * the padding, nothing written outside. On shapes whose sides are and are
 * not multiples of the SIMD tiles (4, 8), on the path this CPU takes; the
 * suite runs it again on the portable one (tests/layers-portable.sh). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "train/blockorder.h"
#include "util/rng.h"

#define MARK 0x7fa00001u   /* a NaN payload no input holds */

static void fill(float *v, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t r = rng_bits(seed, i);
		v[i] = u2f(r == MARK ? r ^ 1 : r);   /* any pattern: NaNs, subnormals, -0 */
	}
}

START_TEST(strips)
{
	static const size_t hs[] = { 1, 3, 8, 13, 16, 32 }, colss[] = { 1, 5, 8, 9, 16, 24, 37 }, brs[] = { 16, 32 };
	for (size_t a = 0; a < sizeof brs / sizeof *brs; a++)
		for (size_t b = 0; b < sizeof hs / sizeof *hs; b++)
			for (size_t k = 0; k < sizeof colss / sizeof *colss; k++) {
				size_t br = brs[a], h = hs[b], cols = colss[k];
				if (h > br)
					continue;
				float *src = malloc(h * cols * 4), *blk = malloc(br * cols * 4), *xs = malloc(h * cols * 4);
				ck_assert(src && blk && xs);
				fill(src, h * cols, 100 + h * 50 + cols);
				for (size_t i = 0; i < br * cols; i++)
					blk[i] = u2f(MARK);
				block_reorder_strip(src, NULL, h, cols, br, blk, false);
				for (size_t c = 0; c < cols; c++)
					for (size_t i = 0; i < br; i++) {
						uint32_t got = f2u(blk[c * br + i]), want = i < h ? f2u(src[i * cols + c]) : 0;
						ck_assert_msg(got == want, "br %zu h %zu cols %zu: column %zu row %zu: %08x, want %08x",
						              br, h, cols, c, i, got, want);
					}
				for (size_t i = 0; i < h * cols; i++)
					xs[i] = u2f(MARK);
				block_reorder_strip(NULL, xs, h, cols, br, blk, true);
				ck_assert_msg(memcmp(xs, src, h * cols * 4) == 0, "br %zu h %zu cols %zu: back", br, h, cols);
				free(src);
				free(blk);
				free(xs);
			}
}
END_TEST

START_TEST(blocks)
{
	static const size_t shapes[][4] = { { 37, 40, 16, 16 }, { 32, 32, 16, 16 }, { 5, 9, 2, 4 }, { 33, 17, 16, 1 } };
	for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
		size_t rows = shapes[k][0], cols = shapes[k][1], br = shapes[k][2], bc = shapes[k][3];
		size_t nr = (rows + br - 1) / br, nc = (cols + bc - 1) / bc, nbuf = nr * nc * br * bc;
		float *src = malloc(rows * cols * 4), *buf = malloc(nbuf * 4), *x = malloc(rows * cols * 4);
		ck_assert(src && buf && x);
		fill(src, rows * cols, 7 + k);
		for (size_t i = 0; i < nbuf; i++)
			buf[i] = u2f(MARK);
		block_reorder(src, NULL, rows, cols, br, bc, buf, false);
		for (size_t tr = 0; tr < nr; tr++)
			for (size_t tc = 0; tc < nc; tc++)
				for (size_t i = 0; i < br; i++)
					for (size_t j = 0; j < bc; j++) {
						size_t r = tr * br + i, c = tc * bc + j;
						uint32_t got = f2u(buf[(tr * nc + tc) * br * bc + i * bc + j]);
						uint32_t want = r < rows && c < cols ? f2u(src[r * cols + c]) : 0;
						ck_assert_msg(got == want, "%zu x %zu by %zu x %zu: block (%zu, %zu) [%zu][%zu]: %08x, want %08x",
						              rows, cols, br, bc, tr, tc, i, j, got, want);
					}
		for (size_t i = 0; i < rows * cols; i++)
			x[i] = u2f(MARK);
		block_reorder(NULL, x, rows, cols, br, bc, buf, true);
		ck_assert_msg(memcmp(x, src, rows * cols * 4) == 0, "%zu x %zu by %zu x %zu: back", rows, cols, br, bc);
		free(src);
		free(buf);
		free(x);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("blockorder");
	TCase *tc = tcase_create("blockorder");
	tcase_add_test(tc, strips);
	tcase_add_test(tc, blocks);
	suite_add_tcase(s, tc);
	return testutil_run(s);
}
