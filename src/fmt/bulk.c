#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/bulk_impl.h"
#include "fmt/bulk_small.h"
#include "fmt/decode.h"

/* --- parameters and tables --- */

void bulk_params_init(bulk_params *p, const fmt_bulk_opts *o)
{
	const fmt_info *f = fmt_get(o->fmt);
	memset(p, 0, sizeof *p);
	p->fmt = o->fmt;
	p->frac_bits = f->frac_bits;
	p->shift = (uint32_t)(23 - f->frac_bits);
	p->e32_min = (uint32_t)(fmt_emin(f) + 127);
	p->rebias = (uint32_t)(127 - f->bias) << f->frac_bits;
	p->sub_base = (uint32_t)(fmt_emin(f) - f->frac_bits + 150);
	p->max_bits = fmt_max_bits(f);
	p->nan_bits = fmt_nan_bits(f);
	p->sign_shift = (uint32_t)(32 - f->width);
	p->sr = o->mode == FMT_SR;
	if (o->saturate) {
		p->ov_bits = fmt_max_bits(f);
		p->ov_signed = 1;
	} else if (fmt_has_inf(f)) {
		p->ov_bits = fmt_inf_bits(f);
		p->ov_signed = 1;
	} else {
		/* e4m3: -1000 and -inf give 0xff, the NaN with the sign (fmt/round.c) */
		p->ov_bits = fmt_nan_bits(f);
		p->ov_signed = 1;
	}
}

float bulk_e4m3_table[256];
float bulk_e5m2_table[256];

static void tables_fill(void)
{
	for (uint32_t b = 0; b < 256; b++) {
		double v4 = fmt_to_double(fmt_get(FMT_E4M3), b);
		double v5 = fmt_to_double(fmt_get(FMT_E5M2), b);
		bulk_e4m3_table[b] = isnan(v4) ? bulk_u2f(0x7fc00000u) : (float)v4;
		bulk_e5m2_table[b] = isnan(v5) ? bulk_u2f(0x7fc00000u) : (float)v5;
	}
}

void bulk_tables_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, tables_fill);
}

/* --- path selection --- */

#if defined(__x86_64__)
#include <cpuid.h>

/* Read from CPUID and XGETBV directly: compilers disagree on which feature
 * names __builtin_cpu_supports knows (clang 14 lacks avx512bf16/fp16). */
static bool cpu_has(fmt_simd path)
{
	unsigned a, b, c, d;
	if (path == FMT_SIMD_PORTABLE)
		return true;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return false;
	bool osxsave = c & (1u << 27), f16c = c & (1u << 29), fma = c & (1u << 12);
	if (!osxsave)
		return false;
	unsigned xlo, xhi;
	__asm__("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
	bool os_avx = (xlo & 0x6) == 0x6, os_avx512 = (xlo & 0xe6) == 0xe6;
	unsigned b7, c7, d7, a71 = 0, b71, c71, d71;
	if (!__get_cpuid_count(7, 0, &a, &b7, &c7, &d7))
		return false;
	if (a >= 1)
		__get_cpuid_count(7, 1, &a71, &b71, &c71, &d71);
	bool avx2 = b7 & (1u << 5);
	bool avx512 = (b7 & (1u << 16)) && (b7 & (1u << 17)) && (b7 & (1u << 30)) && (b7 & (1u << 31));
	bool bf16 = a71 & (1u << 5);
	switch (path) {
	case FMT_SIMD_AVX2:   return os_avx && avx2 && f16c && fma;
	case FMT_SIMD_AVX512: return os_avx512 && avx512 && bf16 && avx2 && f16c;
	default:              return false;
	}
}
#else
static bool cpu_has(fmt_simd path)
{
	return path == FMT_SIMD_PORTABLE;
}
#endif

/* CPUID is asked once: in a virtual machine every CPUID traps to the
 * hypervisor (tens of microseconds), and resolve() runs on every bulk call. */
static bool has_path[FMT_SIMD_COUNT];
static fmt_simd best_path;

static void best_path_detect(void)
{
	for (int p = 0; p < FMT_SIMD_COUNT; p++)
		has_path[p] = cpu_has((fmt_simd)p);
	fmt_simd b = FMT_SIMD_PORTABLE;
	if (has_path[FMT_SIMD_AVX2])
		b = FMT_SIMD_AVX2;
	if (has_path[FMT_SIMD_AVX512])
		b = FMT_SIMD_AVX512;
	/* MIXPREC_SIMD caps the choice (to compare paths or work around a CPU) */
	const char *env = getenv("MIXPREC_SIMD");
	if (env && !strcmp(env, "portable"))
		b = FMT_SIMD_PORTABLE;
	else if (env && !strcmp(env, "avx2") && b > FMT_SIMD_AVX2)
		b = FMT_SIMD_AVX2;
	best_path = b;
}

static pthread_once_t detect_once = PTHREAD_ONCE_INIT;

fmt_simd fmt_simd_best(void)
{
	pthread_once(&detect_once, best_path_detect);
	return best_path;
}

bool fmt_simd_available(fmt_simd path)
{
	if (path < 0 || path >= FMT_SIMD_COUNT)
		return false;
	pthread_once(&detect_once, best_path_detect);
	return has_path[path];
}

const char *fmt_simd_name(fmt_simd path)
{
	switch (path) {
	case FMT_SIMD_AUTO:     return fmt_simd_name(fmt_simd_best());
	case FMT_SIMD_PORTABLE: return "portable";
	case FMT_SIMD_AVX2:     return "avx2-f16c";
	case FMT_SIMD_AVX512:   return "avx512-bf16";
	default:                return "?";
	}
}

size_t fmt_bulk_elem_size(fmt_id fmt)
{
	int w = fmt_get(fmt)->width;
	return w <= 8 ? 1 : w <= 16 ? 2 : 4;
}

/* --- dispatch --- */

static mp_status resolve(fmt_simd *path)
{
	if (*path == FMT_SIMD_AUTO)
		*path = fmt_simd_best();
	if (!fmt_simd_available(*path))
		return MP_EUNSUPPORTED;
	return MP_OK;
}

typedef enum { OP_ENCODE, OP_QUANTIZE, OP_ACCUMULATE } bulk_op;

/* run_rounding for the formats outside the SIMD kernels (fmt/bulk_small.c):
 * every path runs the portable loop there. */
static mp_status run_small(const fmt_bulk_opts *o, bulk_op op, void *out, float *x, const float *in, size_t n,
                           float *comp, size_t *unchanged)
{
	static const bulk_small_op ops[] = { [OP_ENCODE] = BULK_SMALL_ENCODE, [OP_QUANTIZE] = BULK_SMALL_QUANTIZE,
	                                     [OP_ACCUMULATE] = BULK_SMALL_ACCUMULATE };
	size_t done = 0;
	while (done < n) {
		uint64_t idx = o->index0 + done;   /* one key per 2^32 indices, as below */
		uint64_t room = ((idx | 0xffffffffull) - idx) + 1;
		size_t len = n - done < room ? n - done : (size_t)room;
		size_t same = bulk_small_run(o, ops[op], rng_key_for(o->seed, idx), (uint32_t)idx,
		                             out ? (char *)out + done : NULL, x ? x + done : NULL,
		                             in ? in + done : NULL, comp ? comp + done : NULL, len);
		if (unchanged)
			*unchanged += same;
		done += len;
	}
	return MP_OK;
}

static mp_status run_rounding(fmt_simd path, const fmt_bulk_opts *o, bulk_op op, void *out,
                              float *x, const float *in, size_t n, float *comp, size_t *unchanged)
{
	if (unchanged)
		*unchanged = 0;
	if (o->mode != FMT_RNE && o->mode != FMT_SR)
		return MP_EUNSUPPORTED;
	if ((unsigned)o->fmt >= FMT_COUNT)
		return MP_EFORMAT;
	mp_status st = resolve(&path);
	if (st != MP_OK)
		return st;
	if (!fmt_is_kernel(o->fmt))
		return run_small(o, op, out, x, in, n, comp, unchanged);
	bulk_tables_init();
	if (o->fmt == FMT_FP32 && op != OP_ACCUMULATE) {
		for (size_t i = 0; i < n; i++) {
			if (op == OP_ENCODE)
				bulk_store_elem(out, i, 4, bulk_fp32_one(in[i], o->saturate));
			else
				x[i] = bulk_u2f(bulk_fp32_one(x[i], o->saturate));
		}
		return MP_OK;
	}
	bulk_params p;
	bulk_params_init(&p, o);
	size_t size = fmt_bulk_elem_size(o->fmt);
	size_t done = 0;
	while (done < n) {
		/* split where the SR index crosses a multiple of 2^32: one key per block */
		uint64_t idx = o->index0 + done;
		uint64_t room = ((idx | 0xffffffffull) - idx) + 1;
		size_t len = n - done < room ? n - done : (size_t)room;
		rng_key k = rng_key_for(o->seed, idx);
		uint32_t lo = (uint32_t)idx;
		if (op == OP_ENCODE) {
			void *dst = (char *)out + done * size;
			const float *src = in + done;
			switch (path) {
			case FMT_SIMD_AVX512: bulk_avx512_encode(&p, k, lo, dst, src, len); break;
			case FMT_SIMD_AVX2:   bulk_avx2_encode(&p, k, lo, dst, src, len); break;
			default:              bulk_portable_encode(&p, k, lo, dst, src, len); break;
			}
		} else if (op == OP_QUANTIZE) {
			float *dst = x + done;
			switch (path) {
			case FMT_SIMD_AVX512: bulk_avx512_quantize(&p, k, lo, dst, len); break;
			case FMT_SIMD_AVX2:   bulk_avx2_quantize(&p, k, lo, dst, len); break;
			default:              bulk_portable_quantize(&p, k, lo, dst, len); break;
			}
		} else {
			float *dx = x + done, *dc = comp ? comp + done : NULL;
			const float *du = in + done;
			size_t same;
			switch (path) {
			case FMT_SIMD_AVX512: same = bulk_avx512_accumulate(&p, k, lo, dx, dc, du, len); break;
			case FMT_SIMD_AVX2:   same = bulk_avx2_accumulate(&p, k, lo, dx, dc, du, len); break;
			default:              same = bulk_portable_accumulate(&p, k, lo, dx, dc, du, len); break;
			}
			if (unchanged)
				*unchanged += same;
		}
		done += len;
	}
	return MP_OK;
}

mp_status fmt_bulk_encode(fmt_simd path, const fmt_bulk_opts *o, void *out, const float *in, size_t n)
{
	return run_rounding(path, o, OP_ENCODE, out, NULL, in, n, NULL, NULL);
}

mp_status fmt_bulk_quantize(fmt_simd path, const fmt_bulk_opts *o, float *x, size_t n)
{
	return run_rounding(path, o, OP_QUANTIZE, NULL, x, NULL, n, NULL, NULL);
}

mp_status fmt_bulk_accumulate(fmt_simd path, const fmt_bulk_opts *o, float *x, float *comp,
                              const float *u, size_t n, size_t *unchanged)
{
	return run_rounding(path, o, OP_ACCUMULATE, NULL, x, u, n, comp, unchanged);
}

mp_status fmt_bulk_decode(fmt_simd path, fmt_id fmt, float *out, const void *in, size_t n)
{
	if ((unsigned)fmt >= FMT_COUNT)
		return MP_EFORMAT;
	mp_status st = resolve(&path);
	if (st != MP_OK)
		return st;
	if (!fmt_is_kernel(fmt)) {
		bulk_small_decode(fmt, out, in, n);
		return MP_OK;
	}
	bulk_tables_init();
	switch (path) {
	case FMT_SIMD_AVX512: bulk_avx512_decode(fmt, out, in, n); break;
	case FMT_SIMD_AVX2:   bulk_avx2_decode(fmt, out, in, n); break;
	default:              bulk_portable_decode(fmt, out, in, n); break;
	}
	return MP_OK;
}
