/* quant/quant_body.h compiled for the AVX2 path (8 lanes) and the portable
 * path (4 lanes: SSE2 on x86-64, NEON on AArch64, plain code elsewhere),
 * and the table of every path's kernels (the AVX-512 ones are
 * quant/quant_avx512.c's). */
#include "quant/quant_impl.h"

#define VB_BODY "quant/quant_body.h"
#define VB_PORTABLE_NAME(x) qp_##x
#define VB_AVX2_NAME(x) q2_##x
#include "fmt/vec_paths.h"

static const quant_kernels kernels[FMT_SIMD_COUNT] = {
	[FMT_SIMD_PORTABLE] = { 4, qp_amax, qp_mx_rne, qp_mx_sr, qp_nv_rne16, qp_nv_sr16, qp_decode, qp_mx_rne_cols,
	                        qp_mx_rne_rows, qp_nv_rne_elems, qp_nv_rows },
#if defined(__x86_64__)
	[FMT_SIMD_AVX2] = { 8, q2_amax, q2_mx_rne, q2_mx_sr, q2_nv_rne16, q2_nv_sr16, q2_decode, q2_mx_rne_cols,
	                    q2_mx_rne_rows, q2_nv_rne_elems, q2_nv_rows },
	/* the decodes and the fused casts are AVX2's (an AVX-512 machine has it) */
	[FMT_SIMD_AVX512] = { 16, quant_amax_avx512, quant_mx_rne_avx512, quant_mx_sr_avx512, quant_nv_rne16_avx512,
	                      quant_nv_sr16_avx512, q2_decode, q2_mx_rne_cols, q2_mx_rne_rows, quant_nv_rne_avx512,
	                      q2_nv_rows },
#endif
};

const quant_kernels *quant_kernels_of(fmt_simd path)
{
	return path >= 0 && path < FMT_SIMD_COUNT && kernels[path].lanes ? &kernels[path] : &kernels[FMT_SIMD_PORTABLE];
}

size_t quant_bulk_decode(float *v, const uint8_t *elems, size_t n, size_t bs, const float *tab, size_t stride,
                         size_t nvals, const uint8_t *rows, const float *mul)
{
	return quant_kernels_of(fmt_simd_best())->decode(v, elems, n, bs, tab, stride, nvals, rows, mul, NULL);
}

size_t quant_bulk_decode_stats(float *v, const uint8_t *elems, size_t n, size_t bs, const float *tab,
                               size_t stride, size_t nvals, const uint8_t *rows, const float *mul,
                               quant_decode_stats *ds)
{
	return quant_kernels_of(fmt_simd_best())->decode(v, elems, n, bs, tab, stride, nvals, rows, mul, ds);
}
