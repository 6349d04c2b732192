#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fmt/bulk_impl.h"
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
	p->zero_unsigned = !fmt_has_neg_zero(f) && fmt_has_sign(f);
	p->sr = o->mode == FMT_SR;
	p->mode = (int)o->mode;
	p->saturate = o->saturate;
	/* the kernel's overflow and NaN rules know neither e8m0, the integers nor
	 * P3109; its ties go to an even fraction, which a format without fraction
	 * bits (P3109's P = 1 in the FNUZ class) does not have */
	p->by_core = f->specials == FMT_SPECIALS_E8M0 || fmt_is_int(f) || fmt_is_p3109(f) || f->frac_bits == 0;
	p->ov_signed = 1;
	if (o->saturate || f->specials == FMT_SPECIALS_NONE || fmt_is_int(f)) {
		p->ov_bits = fmt_max_bits(f);   /* fp6/fp4 saturate in every mode */
	} else if (fmt_has_inf(f)) {
		p->ov_bits = fmt_inf_bits(f);
	} else {
		/* e4m3: -1000 and -inf give 0xff, the NaN with the sign (fmt/round.c);
		 * FNUZ: the one NaN, unsigned */
		p->ov_bits = fmt_nan_bits(f);
		p->ov_signed = f->specials != FMT_SPECIALS_FNUZ;
	}
}

float bulk_decode_table[FMT_COUNT][256];

static void tables_fill(void)
{
	for (int id = 0; id < FMT_COUNT; id++) {
		const fmt_info *f = fmt_get((fmt_id)id);
		if (f->width > 8)
			continue;
		for (uint32_t b = 0; b < 256; b++) {
			double v = fmt_to_double(f, b);
			bulk_decode_table[id][b] = isnan(v) ? bulk_u2f(0x7fc00000u) : (float)v;
		}
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

bool fmt_bulk_mode_ok(fmt_mode m)
{
	return m == FMT_RNE || m == FMT_SR || m == FMT_RTO || m == FMT_RNZ || m == FMT_SR_EQUAL;
}

static mp_status resolve(fmt_simd *path)
{
	if (*path == FMT_SIMD_AUTO)
		*path = fmt_simd_best();
	if (!fmt_simd_available(*path))
		return MP_EUNSUPPORTED;
	return MP_OK;
}

typedef enum { OP_ENCODE, OP_QUANTIZE, OP_ACCUMULATE } bulk_op;

/* One fp32 pattern x into a format outside the SIMD kernels; r: SR bits.
 * e8m0 and the other formats without fraction bits, whose grid leaves no
 * fraction to carry into, the integers and P3109 (bulk_params_init's
 * by_core) go through the scalar core, the others through bulk_encode1. A NaN input
 * gives fp6/fp4's +0, as the scalar functions do (they also raise
 * FMT_FLAG_INVALID; the bulk calls have no per-element status). */
static inline uint32_t scalar_encode(const bulk_params *p, uint32_t x, uint32_t r)
{
	if (p->by_core) {
		fmt_round_ctl ctl = { .mode = (fmt_mode)p->mode, .saturate = p->saturate, .rbits = r };
		return fmt_round_double(fmt_get(p->fmt), &ctl, (double)bulk_u2f(x), NULL);
	}
	return bulk_encode1(p, x, r);
}

static inline float scalar_quantize(const bulk_params *p, float v, uint32_t r)
{
	return bulk_u2f(bulk_decode1(p->fmt, scalar_encode(p, bulk_f2u(v), r)));
}

/* The element-by-element loop of one block (SR indices lo.. under key k) for
 * the formats outside the SIMD kernels, on every path. Returns the number of
 * unchanged elements (accumulate), whose rule is fmt_bulk_accumulate's. */
static size_t scalar_run(const bulk_params *p, bulk_op op, rng_key k, uint32_t lo, void *out, float *x,
                         const float *in, float *comp, size_t n)
{
	bulk_params rne = *p;
	rne.sr = 0;
	rne.mode = FMT_RNE;
	size_t size = fmt_bulk_elem_size(p->fmt), unchanged = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t r = bulk_draws(p) ? rng_bits_keyed(k, lo + (uint32_t)i) : 0;
		if (op == OP_ENCODE) {
			bulk_store_elem(out, i, size, scalar_encode(p, bulk_f2u(in[i]), r));
		} else if (op == OP_QUANTIZE) {
			x[i] = scalar_quantize(p, x[i], r);
		} else {
			float old = x[i];
			if (comp) {
				float y = in[i] - comp[i];
				float t = scalar_quantize(p, old + y, r);
				comp[i] = scalar_quantize(&rne, (t - old) - y, 0);
				x[i] = t;
			} else {
				x[i] = scalar_quantize(p, old + in[i], r);
			}
			unchanged += x[i] == old;
		}
	}
	return unchanged;
}

/* One block on a SIMD (or the portable vector) path. */
static size_t path_run(fmt_simd path, const bulk_params *p, bulk_op op, rng_key k, uint32_t lo, void *out,
                       float *x, const float *in, float *comp, size_t n)
{
	if (op == OP_ENCODE) {
		switch (path) {
		case FMT_SIMD_AVX512: bulk_avx512_encode(p, k, lo, out, in, n); break;
		case FMT_SIMD_AVX2:   bulk_avx2_encode(p, k, lo, out, in, n); break;
		default:              bulk_portable_encode(p, k, lo, out, in, n); break;
		}
		return 0;
	}
	if (op == OP_QUANTIZE) {
		switch (path) {
		case FMT_SIMD_AVX512: bulk_avx512_quantize(p, k, lo, x, n); break;
		case FMT_SIMD_AVX2:   bulk_avx2_quantize(p, k, lo, x, n); break;
		default:              bulk_portable_quantize(p, k, lo, x, n); break;
		}
		return 0;
	}
	switch (path) {
	case FMT_SIMD_AVX512: return bulk_avx512_accumulate(p, k, lo, x, comp, in, n);
	case FMT_SIMD_AVX2:   return bulk_avx2_accumulate(p, k, lo, x, comp, in, n);
	default:              return bulk_portable_accumulate(p, k, lo, x, comp, in, n);
	}
}

static mp_status run_rounding(fmt_simd path, const fmt_bulk_opts *o, bulk_op op, void *out,
                              float *x, const float *in, size_t n, float *comp, size_t *unchanged)
{
	if (unchanged)
		*unchanged = 0;
	if (!fmt_bulk_mode_ok(o->mode))
		return MP_EUNSUPPORTED;
	if ((unsigned)o->fmt >= FMT_COUNT)
		return MP_EFORMAT;
	mp_status st = resolve(&path);
	if (st != MP_OK)
		return st;
	bulk_tables_init();
	bulk_params p;
	bulk_params_init(&p, o);
	bool scalar = !fmt_is_kernel(o->fmt);
	size_t size = fmt_bulk_elem_size(o->fmt);
	size_t done = 0;
	while (done < n) {
		/* split where the SR index crosses a multiple of 2^32: one key per block */
		uint64_t idx = o->index0 + done;
		uint64_t room = ((idx | 0xffffffffull) - idx) + 1;
		size_t len = n - done < room ? n - done : (size_t)room;
		rng_key k = rng_key_for(o->seed, idx);
		void *dst = out ? (char *)out + done * size : NULL;
		float *dx = x ? x + done : NULL, *dc = comp ? comp + done : NULL;
		const float *src = in ? in + done : NULL;
		size_t same = scalar ? scalar_run(&p, op, k, (uint32_t)idx, dst, dx, src, dc, len)
		                     : path_run(path, &p, op, k, (uint32_t)idx, dst, dx, src, dc, len);
		if (unchanged)
			*unchanged += same;
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
	bulk_tables_init();
	if (!fmt_is_kernel(fmt)) {   /* one byte per element, through its table */
		for (size_t i = 0; i < n; i++)
			out[i] = bulk_u2f(bulk_decode1(fmt, bulk_load_elem(in, i, 1)));
		return MP_OK;
	}
	switch (path) {
	case FMT_SIMD_AVX512: bulk_avx512_decode(fmt, out, in, n); break;
	case FMT_SIMD_AVX2:   bulk_avx2_decode(fmt, out, in, n); break;
	default:              bulk_portable_decode(fmt, out, in, n); break;
	}
	return MP_OK;
}
